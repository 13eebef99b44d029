#!/usr/bin/env bash
# Case "verbs/qp-scale": the QP-scaling configuration of `make bench`
# (build/bin/snic-qpbench) checked for correctness: N RC QP pairs between
# snic0 and snic1 (default 1,000), each WRITEs its own pattern into its own
# 4 KiB of the peer in 8 messages, every byte compared.  Its speed is only
# measured by make bench.
#   tests/integration/qpscale.sh [N]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n=${1:-1000}
bin=$SNIC_BUILD/bin/snic-qpbench
snic_need_exec "$bin"
snic_emu_start
rc=0
snic_run qpbench-check 150 "$bin" check "$n" || rc=$?
snic_emu_stop || exit 1
(( rc == 0 )) || snic_fail "snic-qpbench check $n failed (status $rc)"
grep -qx "check $n ok" "$SNIC_CASE_DIR/qpbench-check.out" ||
	snic_fail "snic-qpbench check $n: no 'check $n ok' line"
snic_log "$n QPs each moved verified data"
