#!/usr/bin/env bash
# Case "unit": the CUnit suites (build/tests/unit-tests), all or those named.
#   tests/integration/unit.sh [suite ...]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin=$SNIC_BUILD/tests/unit-tests
snic_need_exec "$bin"
rc=0
# ~90 s of CPU for all the suites (user + sys); 303-361 s of wall clock
# (SNIC_UNIT_CORES=2 the longer) at load 10-16 on the CI's 2 cores: the
# limit bounds a hang only
snic_run unit-tests 900 "$bin" "$@" || rc=$?
(( rc == 0 )) || snic_fail "unit-tests failed (status $rc)"
snic_log "unit-tests passed"
