#!/usr/bin/env bash
# Part of make bench (tools/bench.sh), also runnable alone: the 64-B (and
# 4 KiB, 64 KiB) RDMA WRITE rate through two emu NICs with 1 and with 2
# firmware cores per NIC (snic-emu --cores N).  ib_write_bw -q 2: its two
# QPs take slots 2 and 3 on each NIC, i.e. core 0 and core 1 (QP slot i
# runs on core i % N).  On a 2-core machine that also runs both perftest
# processes the cores compete with them: figures, not a verdict.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"

ITERS=${SNIC_BENCH_ITERS:-5000}
port=$(snic_free_port 23815)

write_bw() { # SIZE -> "MB/s Mmsg/s" of the client's row
	local out=$SNIC_CASE_DIR/bench-cores.out
	timeout -k 5 120 ib_write_bw -d snic1 -F -x 0 -p "$port" -q 2 -s "$1" \
		-n "$ITERS" >/dev/null 2>&1 </dev/null &
	local spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 120 ib_write_bw -d snic0 -F -x 0 -p "$port" -q 2 -s "$1" \
		-n "$ITERS" 127.0.0.1 >"$out" 2>&1 </dev/null
	wait "$spid"
	awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print $4, $5; exit }' "$out"
}

echo "== firmware cores per NIC (snic-emu --cores N, ib_write_bw -q 2 -n $ITERS; $(nproc) CPUs shared with perftest: reported, not asserted)"
declare -A rate
for n in 1 2; do
	snic_emu_start --cores "$n" >/dev/null
	for s in 64 4096 65536; do
		read -r mbs mps <<<"$(write_bw "$s")"
		rate[$n,$s]=$mps
		printf '  %d core%s  WRITE %6s B  %8s M msg/s  %9s MB/s\n' "$n" \
			"$([[ $n == 1 ]] && echo " " || echo s)" "$s" "$mps" "$mbs"
	done
	snic_emu_stop >/dev/null
done
for s in 64 4096 65536; do
	awk -v a="${rate[1,$s]}" -v b="${rate[2,$s]}" -v s="$s" 'BEGIN {
		if (a > 0) printf "  WRITE %6s B: 2 cores / 1 core = %.2f\n", s, b / a }'
done
