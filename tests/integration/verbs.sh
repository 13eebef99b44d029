#!/usr/bin/env bash
# Case "verbs": our verbs test program (build/tests/snic_verbs_test) on snic0
# and snic1: WRITE, READ, SEND/RECV with data checked byte for byte, and the
# error cases.
#   tests/integration/verbs.sh [snic_verbs_test options, e.g. --only write]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

snic_verbs_case verbs-test snic_verbs_test "$@"
snic_log "snic_verbs_test $*: passed"
