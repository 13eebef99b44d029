#!/usr/bin/env bash
# Part of make bench (tools/bench-sweep.sh puts its lines in
# build/bench/bench.txt), also runnable alone: two emu NICs with 1 and
# with 2 firmware cores per NIC (snic-emu --cores N):
#   - the 64-B, 4 KiB and 64 KiB RDMA WRITE rate, ib_write_bw -q 2 -D
#     CORES_S (default 2 s), the median of REPEAT runs (default 3), and
#     its bandwidth against single-core memcpy.  -q 2: its two QPs take
#     slots 2 and 3 on each NIC, i.e. core 0 and core 1 (QP slot i runs
#     on core i % N), so with 2 cores each NIC's cores share the work.
#     Timed, not counted: a counted 64 KiB run (perftest -n 8192) lasts
#     ~25 ms at 20 GB/s, mostly its start;
#   - 1,000 active QPs against 1 QP of the same set (snic-qpbench ratio
#     1000 0.5 QP_TURNS 4, default 10 turns): the aggregate, its ratio to
#     the 1-QP rate of the same configuration, and with 2 cores also to
#     the 1-QP rate with 1 core;
#   - a command's round trip (snic-cmdbench: alloc/dealloc PD, create/
#     destroy CQ): commands park the other cores.
# On a 2-core machine that also runs the perftest processes the cores
# compete with them: figures, not a verdict.
#
#   tools/bench-cores.sh [cmd]   cmd: the command round trip only
# Environment: SNIC_BENCH_MEMCPY ("SIZE GB/s SIZE GB/s ...", the sweep's
# own measurement; else snic-membench runs here), SNIC_BENCH_REPEAT,
# SNIC_BENCH_CORES_S, SNIC_BENCH_CORES_QP_TURNS.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"

port=$(snic_free_port 23815)
REPEAT=${SNIC_BENCH_REPEAT:-3}
SECS=${SNIC_BENCH_CORES_S:-2}
TURNS=${SNIC_BENCH_CORES_QP_TURNS:-10}
BIN=$SNIC_BUILD/bin

declare -A MEMCPY
if [[ ${1:-} != cmd ]]; then
	mem=${SNIC_BENCH_MEMCPY:-$("$BIN/snic-membench" | awk '{ printf "%s %s ", $2, $3 }')}
	read -r -a kv <<<"$mem"
	for (( i = 0; i + 1 < ${#kv[@]}; i += 2 )); do MEMCPY[${kv[i]}]=${kv[i + 1]}; done
fi

write_bw() { # SIZE -> "MB/s Mmsg/s" of the client's row
	local out=$SNIC_CASE_DIR/bench-cores.out
	timeout -k 5 120 ib_write_bw -d snic1 -F -x 0 -p "$port" -q 2 -s "$1" \
		-D "$SECS" >/dev/null 2>&1 </dev/null &
	local spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 120 ib_write_bw -d snic0 -F -x 0 -p "$port" -q 2 -s "$1" \
		-D "$SECS" 127.0.0.1 >"$out" 2>&1 </dev/null
	wait "$spid"
	awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print $4, $5; exit }' "$out"
}


cmd_rtt() { # CORES: one line of snic-cmdbench's figures
	local pd cq
	read -r _ pd _ < <("$BIN/snic-cmdbench" snic0 | grep '^pd ')
	read -r _ cq _ < <("$BIN/snic-cmdbench" snic0 | grep '^cq ')
	printf '  %d core%s  command round trip: PD %8s us  CQ %8s us\n' "$1" \
		"$([[ $1 == 1 ]] && echo " " || echo s)" "$pd" "$cq"
}


echo "firmware cores per NIC (snic-emu --cores N; ib_write_bw -q 2 -D $SECS, median of $REPEAT runs; $(nproc) CPUs shared with perftest: reported, not asserted; load $(cut -d' ' -f1-3 /proc/loadavg))"
declare -A rate qp1 qpn
for n in 1 2; do
	cores="$n core$([[ $n == 1 ]] && echo " " || echo s)"
	snic_emu_start --cores "$n" >/dev/null
	cmd_rtt "$n"
	[[ ${1:-} == cmd ]] && { snic_emu_stop >/dev/null; continue; }
	for s in 64 4096 65536; do
		read -r mbs mps < <(for (( i = 0; i < REPEAT; i++ )); do write_bw "$s"; done | snic_median_row 2)
		rate[$n,$s]=$mps
		gbs=$(awk -v m="$mbs" 'BEGIN { printf "%.2f", m * 1048576 / 1e9 }')
		printf '  %s  WRITE %6s B  %9s M msg/s  %7s GB/s  %8s of memcpy\n' "$cores" "$s" \
			"$mps" "$gbs" "$(snic_pct "$gbs" "${MEMCPY[$s]:-${MEMCPY[4096]:-}}")"
	done
	# "ratio N MEDIAN_PCT LO_PCT HI_PCT MMSGS_1 MMSGS_N MIN_K MAX_K"
	read -r _ _ r lo hi one many slow fast < <("$BIN/snic-qpbench" ratio 1000 0.5 "$TURNS" 4)
	qp1[$n]=$one qpn[$n]=$many
	printf '  %s  1000 QPs (4 WRITEs per list) %s M msg/s, 1 QP %s: %s %% of the 1-QP rate (%s .. %s over %s turns); per QP %s .. %s k msg/s\n' \
		"$cores" "$many" "$one" "$r" "$lo" "$hi" "$TURNS" "$slow" "$fast"
	snic_emu_stop >/dev/null
done
[[ ${1:-} == cmd ]] && exit 0
for s in 64 4096 65536; do
	awk -v a="${rate[1,$s]}" -v b="${rate[2,$s]}" -v s="$s" 'BEGIN {
		if (a > 0) printf "  WRITE %6s B: 2 cores / 1 core = %.2f\n", s, b / a }'
done
printf '  1000 QPs with 2 cores: %s of the 1-QP rate with 1 core\n' "$(snic_pct "${qpn[2]}" "${qp1[1]}")"
