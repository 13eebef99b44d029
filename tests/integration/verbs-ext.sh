#!/usr/bin/env bash
# Case "verbs/ext": build/tests/snic_verbs_ext on snic0 and snic1: atomics
# (also concurrent, from several QPs and the host CPU), immediates, inline,
# 16 SGEs, zero-length, fences, unsignaled completions, solicited events,
# loopback, UD (GRH contents, Q_Key mismatch), UD multicast, raw packet QPs
# with flow steering, memory windows (type 1, 2B, invalidation), SRQ shared
# by three QPs (and its limit event), UC, XRC (three XRC SRQs; an SRQ of
# another domain refused), and the error cases, values checked.
#   tests/integration/verbs-ext.sh [snic_verbs_ext options, e.g. --only imm]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

snic_verbs_case verbs-ext snic_verbs_ext "$@"
# The Q_Key mismatch of case "ud" is dropped and counted by the receiving NIC
# (its counters are printed when snic-emu stops).
if [[ $# -eq 0 ]]; then
	grep -Eq '^ *rx_drop_qkey +[1-9]' "$SNIC_EMU_LOG" ||
		snic_fail "no rx_drop_qkey counted by the NIC (see $SNIC_EMU_LOG)"
	snic_log "ok: the Q_Key mismatch was counted (rx_drop_qkey)"
fi
snic_log "snic_verbs_ext $*: passed"
