#!/usr/bin/env bash
# Case "verbs/ext": build/tests/snic_verbs_ext on snic0 and snic1: atomics
# (also concurrent, from several QPs and the host CPU), immediates, inline,
# 16 SGEs, zero-length, fences, unsignaled completions, solicited events,
# loopback, UD (GRH contents, Q_Key mismatch), SRQ shared by three QPs (and
# its limit event), UC, and the error cases, values checked.
#   tests/integration/verbs-ext.sh [snic_verbs_ext options, e.g. --only imm]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin=$SNIC_BUILD/tests/snic_verbs_ext
snic_need_exec "$bin"
snic_emu_start
rc=0
snic_run verbs-ext 240 "$bin" --dev0 snic0 --dev1 snic1 "$@" || rc=$?
snic_emu_stop || exit 1
(( rc == 0 )) || snic_fail "snic_verbs_ext $* failed (status $rc)"
# The Q_Key mismatch of case "ud" is dropped and counted by the receiving NIC
# (its counters are printed when snic-emu stops).
if [[ $# -eq 0 ]]; then
	grep -Eq '^ *rx_drop_qkey +[1-9]' "$SNIC_EMU_LOG" ||
		snic_fail "no rx_drop_qkey counted by the NIC (see $SNIC_EMU_LOG)"
	snic_log "ok: the Q_Key mismatch was counted (rx_drop_qkey)"
fi
snic_log "snic_verbs_ext $*: passed"
