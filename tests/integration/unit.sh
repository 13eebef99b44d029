#!/usr/bin/env bash
# Case "unit": the CUnit suites (build/tests/unit-tests), all or those named.
#   tests/integration/unit.sh [suite ...]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin=$SNIC_BUILD/tests/unit-tests
snic_need_exec "$bin"
rc=0
snic_run unit-tests 150 "$bin" "$@" || rc=$?
(( rc == 0 )) || snic_fail "unit-tests failed (status $rc)"
snic_log "unit-tests passed"
