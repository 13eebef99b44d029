#!/usr/bin/env bash
# Part of make bench (tools/bench.sh), also runnable alone: the 64-B (and
# 4 KiB, 64 KiB) RDMA WRITE rate through two emu NICs with 1 and with 2
# firmware cores per NIC (snic-emu --cores N).  ib_write_bw -q 2: its two
# QPs take slots 2 and 3 on each NIC, i.e. core 0 and core 1 (QP slot i
# runs on core i % N).  On a 2-core machine that also runs both perftest
# processes the cores compete with them: figures, not a verdict.
# Also a command's round trip (snic-cmdbench: alloc/dealloc PD, create/
# destroy CQ) with 1 and 2 cores: commands park the other cores.
#
#   tools/bench-cores.sh [cmd]   cmd: the command round trip only
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"

port=$(snic_free_port 23815)

write_bw() { # SIZE -> "MB/s Mmsg/s" of the client's row
	local out=$SNIC_CASE_DIR/bench-cores.out
	timeout -k 5 120 ib_write_bw -d snic1 -F -x 0 -p "$port" -q 2 -s "$1" \
		-n "$(snic_bw_iters "$1")" >/dev/null 2>&1 </dev/null &
	local spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 120 ib_write_bw -d snic0 -F -x 0 -p "$port" -q 2 -s "$1" \
		-n "$(snic_bw_iters "$1")" 127.0.0.1 >"$out" 2>&1 </dev/null
	wait "$spid"
	awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print $4, $5; exit }' "$out"
}

cmd_rtt() { # CORES: one line of snic-cmdbench's figures
	local pd cq
	read -r _ pd _ < <("$SNIC_BUILD/bin/snic-cmdbench" snic0 | grep '^pd ')
	read -r _ cq _ < <("$SNIC_BUILD/bin/snic-cmdbench" snic0 | grep '^cq ')
	printf '  %d core%s  command round trip: PD %8s us  CQ %8s us\n' "$1" \
		"$([[ $1 == 1 ]] && echo " " || echo s)" "$pd" "$cq"
}

echo "== firmware cores per NIC (snic-emu --cores N, ib_write_bw -q 2 -n "512 MiB / size, at most 200,000"; $(nproc) CPUs shared with perftest: reported, not asserted; load $(cut -d' ' -f1-3 /proc/loadavg))"
declare -A rate
for n in 1 2; do
	snic_emu_start --cores "$n" >/dev/null
	cmd_rtt "$n"
	[[ ${1:-} == cmd ]] && { snic_emu_stop >/dev/null; continue; }
	for s in 64 4096 65536; do
		read -r mbs mps <<<"$(write_bw "$s")"
		rate[$n,$s]=$mps
		printf '  %d core%s  WRITE %6s B  %8s M msg/s  %9s MB/s\n' "$n" \
			"$([[ $n == 1 ]] && echo " " || echo s)" "$s" "$mps" "$mbs"
	done
	snic_emu_stop >/dev/null
done
[[ ${1:-} == cmd ]] && exit 0
for s in 64 4096 65536; do
	awk -v a="${rate[1,$s]}" -v b="${rate[2,$s]}" -v s="$s" 'BEGIN {
		if (a > 0) printf "  WRITE %6s B: 2 cores / 1 core = %.2f\n", s, b / a }'
done
