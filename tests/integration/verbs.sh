#!/usr/bin/env bash
# Case "verbs": our verbs test program (build/tests/snic_verbs_test) on snic0
# and snic1: WRITE, READ, SEND/RECV with data checked byte for byte, and the
# error cases.
#   tests/integration/verbs.sh [snic_verbs_test options, e.g. --only write]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin=$SNIC_BUILD/tests/snic_verbs_test
snic_need_exec "$bin"
snic_emu_start
rc=0
snic_run verbs-test 240 "$bin" --dev0 snic0 --dev1 snic1 "$@" || rc=$?
snic_emu_stop || exit 1
(( rc == 0 )) || snic_fail "snic_verbs_test $* failed (status $rc)"
snic_log "snic_verbs_test $*: passed"
