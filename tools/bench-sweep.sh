#!/usr/bin/env bash
# make bench, the sweep (called by tools/bench.sh; runs alone too): in one
# run, this machine's limits (single-core memcpy: tools/snic-membench; the
# DPDK ring pair's raw frame rate through the HAL: snic-portbench) and what
# goes through two emu NICs (one snic-emu, ring pair):
#   - Debian's unmodified perftest, ib_{write,read,send}_{bw,lat}, 8 B ..
#     1 MiB: message rate, bandwidth, typical latency, the RNR NAKs of the
#     bandwidth run (snicctl); and the 64-B WRITE rate again timed
#     (ib_write_bw -D), the median of 5 runs;
#   - registration: ibv_reg_mr + ibv_dereg_mr 4 KiB .. 256 MiB of a fresh
#     buffer (first; fresh: one never written) and again of the same
#     buffer (reg), a 4 KiB pair
#     with the NIC asleep (woken), and re-registration of a registered
#     range (snic-regbench);
#   - QP scaling: the 1-QP 64-B WRITE rate with no other QP and with IDLE
#     idle QPs created on each NIC, and 1,000 active QPs (4 and 16 WRITEs
#     per list) against one QP of the same set, the two runs alternating:
#     aggregate, slowest and fastest QP (snic-qpbench);
#   - 1 and 2 firmware cores per NIC: WRITE rates and bandwidth, the
#     1,000-QP ratio, a command's round trip (tools/bench-cores.sh).
# Each figure with its ratio to the limit it is bounded by.  Writes
# build/bench/bench.txt (the table) and PNG plots (gnuplot) there.
# Figures, not verdicts: fails only when a program fails.
#
# Each perftest figure is the median of SNIC_BENCH_REPEAT runs (default
# 3); the idle-QP runs take turns for SNIC_BENCH_QP_ROUNDS rounds (default
# 5); the 1,000-QP ratio alternates SNIC_BENCH_QP_TURNS times (default 20).
# Environment: SNIC_BENCH_SIZES (default "8 64 512 4096 65536 1048576"),
#              SNIC_BENCH_IDLE (idle QPs per NIC, default 10000: the NIC
#              holds SNIC_MAX_QP = 16,384 QPs, QPN 0/1 included, of which
#              1,024 out of RESET at once).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"

SIZES=${SNIC_BENCH_SIZES:-8 64 512 4096 65536 1048576}
REPEAT=${SNIC_BENCH_REPEAT:-3}
IDLE=${SNIC_BENCH_IDLE:-10000}
OUT=$SNIC_BUILD/bench
mkdir -p "$OUT"
TXT=$OUT/bench.txt
DAT=$OUT/data
rm -rf "$DAT" && mkdir -p "$DAT"
BIN=$SNIC_BUILD/bin


# ---------------------------------------------------------------- limits
declare -A MEMCPY ICRC
while read -r _ size gbps; do MEMCPY[$size]=$gbps; done < <("$BIN/snic-membench")
# the firmware's ICRC passes over a 4096-B frame (none where the CPU
# cannot fold: the floor below is left out then)
while read -r _ kind _ gbps; do ICRC[$kind]=$gbps; done < <("$BIN/snic-membench" icrc || true)
read -r _ _ _ PORT_MPPS _ < <("$BIN/snic-portbench" 64 1 | grep '^port ')
# memcpy rate for a message size: the measured size at or just above it.
memcpy_for() {
	local s
	for s in 4096 65536 1048576; do
		(( $1 <= s )) && { echo "${MEMCPY[$s]}"; return; }
	done
	echo "${MEMCPY[1048576]}"
}

# ---------------------------------------------------------------- perftest
snic_emu_start >/dev/null
port=$(snic_free_port 24515)

# RNR NAKs the server's NIC has sent so far (snicctl asks the firmware:
# exact).  A SEND run whose server process loses its CPU runs its receive
# queue dry, and each RNR NAK holds the client for perftest's RNR timer
# (0.64 ms): on this shared machine a counted ib_send_bw came out at 3.0-3.3
# or at 0.75-1.16 M msg/s by that alone (README, session 24's make bench).
rnr_sent() { # (awk reads to the end: exiting at the match could stop
	     # snicctl with SIGPIPE, failing the pipeline and the script)
	"$BIN/snicctl" show -a snic1 2>/dev/null |
		awk '$1 == "rnr_nak_sent" && n++ == 0 { print $2 }'
}

# pt PROGRAM ARGS...: server on snic1, client on snic0; the client's first
# result row on stdout, and after it the RNR NAKs of the run.
pt() {
	local prog=$1 out=$SNIC_CASE_DIR/sweep-client.out spid rnr0 rnr1 rnr=-
	shift
	rnr0=$(rnr_sent)
	timeout -k 5 180 "$prog" -d snic1 -F -x 0 -p "$port" "$@" >/dev/null 2>&1 </dev/null &
	spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 180 "$prog" -d snic0 -F -x 0 -p "$port" "$@" 127.0.0.1 >"$out" 2>&1 </dev/null
	wait "$spid"
	rnr1=$(rnr_sent)
	# "-" when snicctl could not tell (before or after)
	[[ -n $rnr0 && -n $rnr1 ]] && rnr=$(( rnr1 - rnr0 ))
	awk -v rnr="$rnr" \
		'/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print $0, rnr; exit }' "$out"
}


# rep COL CMD...: CMD (which prints one row) REPEAT times, the median row.
rep() {
	local col=$1 i
	shift
	for (( i = 0; i < REPEAT; i++ )); do "$@"; done | snic_median_row "$col"
}

iters() { # SIZE KIND: a latency run 2000 round trips (200 at 1 MiB)
	if [[ $2 == lat ]]; then (( $1 >= 1048576 )) && echo 200 || echo 2000
	else snic_bw_iters "$1"; fi
}

for op in write read send; do
	: >"$DAT/$op.dat"
	for size in $SIZES; do
		bw=$(rep 5 pt "ib_${op}_bw" -s "$size" -n "$(iters "$size" bw)")
		lat=$(rep 5 pt "ib_${op}_lat" -s "$size" -n "$(iters "$size" lat)")
		# size MB/s(2^20) Mmsg/s typical_us RNR-NAKs(of the bw row)
		echo "$size $(awk '{ print $4, $5 }' <<<"$bw") $(awk '{ print $5 }' <<<"$lat") $(awk '{ print $NF }' <<<"$bw")" >>"$DAT/$op.dat"
	done
done

# The 64-B WRITE rate of issue 11's goal, timed rather than counted: a
# -n run of 200,000 messages lasts ~50 ms, so one scheduler slice given to
# another process moves it by tens of percent.  TIMED_RUNS runs of
# ib_write_bw -D TIMED_S: the median and the spread.
TIMED_RUNS=${SNIC_BENCH_TIMED_RUNS:-5} TIMED_S=${SNIC_BENCH_TIMED_S:-3}
for (( i = 0; i < TIMED_RUNS; i++ )); do
	pt ib_write_bw -s 64 -D "$TIMED_S" | awk '{ print $5 }'
done | sort -g >"$DAT/timed.raw"
TIMED=$(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }' "$DAT/timed.raw")

# ---------------------------------------------------------------- registration
"$BIN/snic-regbench" snic0 >"$DAT/reg.raw"
awk '$1 == "first" && $3 != "fail" { print $2, $3, $4 }' "$DAT/reg.raw" >"$DAT/first.dat"
awk '$1 == "reg" && $3 != "fail" { print $2, $3, $4 }' "$DAT/reg.raw" >"$DAT/reg.dat"
awk '$1 == "rereg" && $3 != "fail" { print $2, $3, $4 }' "$DAT/reg.raw" >"$DAT/rereg.dat"

# ---------------------------------------------------------------- QP scaling
# The idle-QP runs take turns, QP_ROUNDS rounds, a ratio taken within a
# round (the same minute's load on both sides of it) and the median of the
# rounds' ratios printed.  The 1,000-QP ratios come from snic-qpbench
# ratio: the 1-QP and the 1,000-QP runs alternating every QP_SLICE
# seconds in one process (QP_TURNS turns), where two separate 2-s runs
# a few seconds apart swung by tens of percent with the machine's load.
QP_ROUNDS=${SNIC_BENCH_QP_ROUNDS:-5} QP_TURNS=${SNIC_BENCH_QP_TURNS:-20}
QP_SLICE=0.5
for (( r = 0; r < QP_ROUNDS; r++ )); do
	read -r _ _ r0 < <("$BIN/snic-qpbench" rate 0 2)
	read -r _ _ ri < <("$BIN/snic-qpbench" rate "$IDLE" 2)
	echo "$r0 $ri $(awk -v a="$ri" -v z="$r0" 'BEGIN { printf "%.1f", 100 * a / z }')"
done >"$DAT/qp.raw"
col_median() { # COL: the median of column COL of qp.raw
	awk -v c="$1" '{ print $c }' "$DAT/qp.raw" | snic_median_row 1
}
RATE0=$(col_median 1) RATEI=$(col_median 2) R_IDLE=$(col_median 3)
# "ratio N MEDIAN_PCT LO_PCT HI_PCT MMSGS_1 MMSGS_N MIN_K MAX_K"
read -r _ _ R_MANY R_MANY_LO R_MANY_HI MANY_1 MANY MANY_LO MANY_HI < <(
	"$BIN/snic-qpbench" ratio 1000 "$QP_SLICE" "$QP_TURNS" 4)
read -r _ _ R_MANY16 R_MANY16_LO R_MANY16_HI MANY16_1 MANY16 MANY16_LO MANY16_HI < <(
	"$BIN/snic-qpbench" ratio 1000 "$QP_SLICE" "$QP_TURNS" 16)
snic_emu_stop >/dev/null

# ---------------------------------------------------------------- cores
# 1 and 2 firmware cores per NIC (tools/bench-cores.sh, its own snic-emus)
SNIC_IN_NETNS=1 SNIC_BENCH_REPEAT=$REPEAT \
	SNIC_BENCH_MEMCPY="$(for s in "${!MEMCPY[@]}"; do printf '%s %s ' "$s" "${MEMCPY[$s]}"; done)" \
	bash "$(dirname "${BASH_SOURCE[0]}")/bench-cores.sh" >"$DAT/cores.txt"

# ---------------------------------------------------------------- floor
# Issue 11's 4 KiB goal against what this CPU can do at all.  A 4096-B
# WRITE is one frame (the emu's MTU is 4096) and costs its one thread at
# least its payload's two passes: copied into the frame with its ICRC
# folded in (tx), and at the receiver the ICRC checked over the frame,
# then the payload copied into the MR (check: its RETH may not be trusted
# before the check), each at the speed snic-membench icrc measured from
# L1, as perftest's buffers are (the best case).  Besides its payload, a
# message costs what an 8-B WRITE costs (1 / its rate): the second bound
# adds that.  Prints "payload_ns alone_GB/s ceiling_GB/s message_ns".
floor_4k() {
	awk -v tx="${ICRC[tx]}" -v ck="${ICRC[check]}" \
		-v r8="$(awk '$1 == 8 { print $3 }' "$DAT/write.dat")" \
		'BEGIN {
			ns = 4096 / tx + 4096 / ck      # bytes / (GB/s) = ns
			fixed = r8 > 0 ? 1000 / r8 : 0
			printf "%.0f %.2f %.2f %.0f\n", ns, 4096 / ns, 4096 / (ns + fixed), fixed
		}'
}

# ---------------------------------------------------------------- table
{
	echo "snic make bench: $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1 /proc/loadavg); two NICs in one snic-emu (ring pair); median of $REPEAT runs"
	echo
	echo "machine limits (one core, this run)"
	for s in 4096 65536 1048576; do printf '  memcpy %8s B        %8s GB/s\n' "$s" "${MEMCPY[$s]}"; done
	printf '  DPDK ring pair, 64-B frames through the HAL   %s M frames/s\n' "$PORT_MPPS"
	if [[ -n ${ICRC[tx]:-} ]]; then # snic-membench icrc: the firmware's code, from L1
		printf '  ICRC passes over a 4096-B WRITE frame: TX copy+fold %s GB/s, RX check then copy %s, RX place+check %s\n' \
			"${ICRC[tx]}" "${ICRC[check]}" "${ICRC[fold]}"
	fi
	echo
	echo "perftest (client snic0, server snic1; GB/s = 10^9 B/s of payload)"
	printf '  %-6s %8s  %9s %8s  %9s %8s  %9s %5s\n' op bytes 'Mmsg/s' '/port' 'GB/s' '/memcpy' 'lat us' 'RNR'
	for op in write read send; do
		while read -r size mbs mpps lat rnr; do
			gbs=$(awk -v m="$mbs" 'BEGIN { printf "%.3f", m * 1048576 / 1e9 }')
			printf '  %-6s %8s  %9s %8s  %9s %8s  %9s %5s\n' "$op" "$size" "$mpps" \
				"$(snic_pct "$mpps" "$PORT_MPPS")" "$gbs" \
				"$(snic_pct "$gbs" "$(memcpy_for "$size")")" "$lat" "$rnr"
		done <"$DAT/$op.dat"
	done
	echo "  RNR: RNR NAKs snic1 sent during the bandwidth run shown (each holds the client for perftest's RNR timer, 0.64 ms)"
	read -r t_med t_lo t_hi <<<"$TIMED"
	printf '  write 64 B timed (ib_write_bw -D %s, %s runs): %s M msg/s median (%s .. %s), %s of the port\n' \
		"$TIMED_S" "$TIMED_RUNS" "$t_med" "$t_lo" "$t_hi" "$(snic_pct "$t_med" "$PORT_MPPS")"
	if [[ -n ${ICRC[tx]:-} ]] && grep -q '^4096 ' "$DAT/write.dat" &&
	   grep -q '^8 ' "$DAT/write.dat"; then
		read -r fns alone ceil fixed < <(floor_4k)
		gbs=$(awk '$1 == 4096 { printf "%.3f", $2 * 1048576 / 1e9 }' "$DAT/write.dat")
		echo
		echo "payload floor of a 4096-B WRITE, one thread (its two passes at the ICRC speeds above; a message besides its"
		printf '  payload costs 1 / the 8-B WRITE rate, %s ns)\n' "$fixed"
		printf '  payload alone %s ns: %s GB/s, %s of memcpy; with the message: %s GB/s, %s of memcpy; measured %s GB/s, %s of that\n' \
			"$fns" "$alone" "$(snic_pct "$alone" "${MEMCPY[4096]}")" "$ceil" \
			"$(snic_pct "$ceil" "${MEMCPY[4096]}")" "$gbs" "$(snic_pct "$gbs" "$ceil")"
	fi
	echo
	echo "registration (snic0; us per ibv_reg_mr + ibv_dereg_mr pair)"
	printf '  %-6s %10s  %10s %8s %8s\n' kind bytes 'us/pair' 'GB/s' '/memcpy'
	while read -r kind size us gbs; do
		if [[ $us == fail ]]; then printf '  %-6s %10s  failed (errno %s)\n' "$kind" "$size" "$gbs"; continue; fi
		printf '  %-6s %10s  %10s %8s %8s\n' "$kind" "$size" "$us" "$gbs" "$(snic_pct "$gbs" "${MEMCPY[1048576]}")"
	done <"$DAT/reg.raw"
	echo
	echo "QP scaling (64-B RDMA WRITE, snic-qpbench; idle: $QP_ROUNDS rounds, the runs taking turns: medians, ratios within a round)"
	printf '  1 QP, no other QP            %8s M msg/s\n' "$RATE0"
	printf '  1 QP, %5s idle QPs         %8s M msg/s   %s %% of the rate without\n' "$IDLE" "$RATEI" "$R_IDLE"
	echo "  1000 active QPs against 1 QP of the same set, alternating every $QP_SLICE s ($QP_TURNS turns; medians, ratio's range)"
	printf '  4 per list:  1 QP %s, 1000 QPs %s M msg/s   %s %% of the 1-QP rate (%s .. %s)\n' \
		"$MANY_1" "$MANY" "$R_MANY" "$R_MANY_LO" "$R_MANY_HI"
	printf '  per QP: slowest %s, fastest %s k msg/s\n' "$MANY_LO" "$MANY_HI"
	printf '  16 per list: 1 QP %s, 1000 QPs %s M msg/s   %s %% of the 1-QP rate (%s .. %s; posted as the 1-QP run posts)\n' \
		"$MANY16_1" "$MANY16" "$R_MANY16" "$R_MANY16_LO" "$R_MANY16_HI"
	printf '  per QP: slowest %s, fastest %s k msg/s\n' "$MANY16_LO" "$MANY16_HI"
	echo
	cat "$DAT/cores.txt"
	echo
	echo "(a shared 2-core machine: noisy; compare ratios, not absolutes)"
} | tee "$TXT"

# ---------------------------------------------------------------- plots
if command -v gnuplot >/dev/null; then
	gnuplot <<EOF
set terminal pngcairo size 900,560 noenhanced
set logscale x 2
set format x "%.0b%BB"
set grid
set key top left
set xlabel "message size (bytes)"
set output "$OUT/rate.png"
set title "message rate (perftest, 1 QP); DPDK ring pair limit $PORT_MPPS M frames/s"
set ylabel "M messages/s"
plot "$DAT/write.dat" u 1:3 w lp t "WRITE", "$DAT/read.dat" u 1:3 w lp t "READ", "$DAT/send.dat" u 1:3 w lp t "SEND"
set output "$OUT/bandwidth.png"
set title "bandwidth (perftest, 1 QP); single-core memcpy 64 KiB ${MEMCPY[65536]} GB/s"
set ylabel "GB/s"
plot "$DAT/write.dat" u 1:(\$2*1048576/1e9) w lp t "WRITE", "$DAT/read.dat" u 1:(\$2*1048576/1e9) w lp t "READ", "$DAT/send.dat" u 1:(\$2*1048576/1e9) w lp t "SEND", ${MEMCPY[65536]} w l dt 2 t "memcpy 64 KiB"
set output "$OUT/latency.png"
set title "typical latency (perftest *_lat)"
set ylabel "us"
plot "$DAT/write.dat" u 1:4 w lp t "WRITE", "$DAT/read.dat" u 1:4 w lp t "READ", "$DAT/send.dat" u 1:4 w lp t "SEND"
set output "$OUT/registration.png"
set title "ibv_reg_mr + ibv_dereg_mr"
set xlabel "region size (bytes)"
set ylabel "us per pair"
set logscale y 10
plot "$DAT/first.dat" u 1:2 w lp t "fresh range", "$DAT/reg.dat" u 1:2 w lp t "same range again", "$DAT/rereg.dat" u 1:2 w lp t "range already registered"
EOF
	echo "plots: $OUT/{rate,bandwidth,latency,registration}.png"
else
	echo "(gnuplot not installed: no plots; tools/setup-deps.sh installs gnuplot-nox)"
fi
