#!/usr/bin/env bash
# make bench, where a 64-B ping-pong's time goes (README "Latency"): a
# firmware built with -DSNIC_TRACE records, with the HAL
# clock at the point itself (build/trace/), when each NIC saw a doorbell, handed a frame
# to the port, took a frame from the port and finished its work (data or
# CQE written).  Debian's ib_write_lat / ib_send_lat -s 64 run through it;
# the merged timeline of both NICs (one thread, one clock) is cut into the
# hops of one way of the ping-pong:
#   fw-tx    doorbell seen -> request frame handed to the port
#   port     handed to the port -> taken by the peer NIC (ring pair, and
#            the rest of the pass: both NICs share one loop)
#   fw-rx    taken -> data written to host memory (and the CQE for SEND)
#   host@X   data written by NIC X -> X's next doorbell seen: the program
#            on X notices, posts, rings, and the NIC loop notices the ring
# One way = fw-tx + port + fw-rx + the mean of the two hosts' turns.
# ACK frames are left out (their size differs).  Prints mean and median
# per hop, and the sum, next to perftest's own typical latency.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"

ITERS=${SNIC_BENCH_LAT_ITERS:-5000}
TB=$SNIC_BUILD/trace
OUT=$SNIC_BUILD/bench
mkdir -p "$OUT"
make -C "$SNIC_ROOT" -s BUILD="$TB" OPT="-O2 -DSNIC_TRACE" \
	"$TB/bin/snic-emu" "$TB/lib/libibverbs.so.1" >/dev/null
port=$(snic_free_port 25515)
CASE0=$SNIC_CASE_DIR

# one PROGRAM: trace one ping-pong run, print its hop table.
one() {
	# a folder per run: snic_emu_start waits for "ready" in the case
	# folder's snic-emu.log, which a previous run's log would satisfy
	local SNIC_CASE_DIR=$CASE0/$1
	local prog=$1 trace=$SNIC_CASE_DIR/trace-$1.txt out=$SNIC_CASE_DIR/lat-$1.out spid
	mkdir -p "$SNIC_CASE_DIR"
	SNIC_BUILD=$TB SNIC_TRACE_FILE=$trace snic_emu_start >/dev/null
	timeout -k 5 120 "$prog" -d snic1 -F -x 0 -p "$port" -s 64 -n "$ITERS" >/dev/null 2>&1 </dev/null &
	spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 120 "$prog" -d snic0 -F -x 0 -p "$port" -s 64 -n "$ITERS" 127.0.0.1 >"$out" 2>&1 </dev/null
	wait "$spid"
	snic_emu_stop >/dev/null
	local typ
	typ=$(awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print $5; exit }' "$out")
	# events "nic ns point arg"; points 0 doorbell, 1 tx, 2 rx, 3 rx done.
	# Out: "hop ns" samples.
	sort -k2,2n "$trace" | awk -v ack=62 '
	function add(h, v) { if (v >= 0) print h, v }
	{
		nic = $1; t = $2; p = $3; len = $4
		if (p == 0) { db[nic] = t
			if (done_t[nic] > 0) { add("host@snic" nic, t - done_t[nic]); done_t[nic] = 0 } }
		else if (len == ack) next     # ACKs: Eth+IPv4+UDP+BTH+AETH+ICRC
		else if (p == 1) {
			if (db[nic] > 0) { add("fw-tx", t - db[nic]); db[nic] = 0 }
			tx_t[nic] = t }
		else if (p == 2) {
			if (tx_t[1 - nic] > 0) { add("port", t - tx_t[1 - nic]); tx_t[1 - nic] = 0 }
			rx_t[nic] = t }
		else if (p == 3 && rx_t[nic] > 0) {
			add("fw-rx", t - rx_t[nic]); rx_t[nic] = 0; done_t[nic] = t }
	}' >"$SNIC_CASE_DIR/hops-$prog.txt"
	printf '%s -s 64: perftest typical %s us (one way)\n' "$prog" "$typ"
	printf '  %-10s %8s %10s %10s\n' hop samples 'mean us' 'median us'
	local h tm=0 tmed=0 row
	for h in fw-tx port fw-rx host@snic0 host@snic1; do
		row=$(awk -v h="$h" '$1 == h { print $2 }' "$SNIC_CASE_DIR/hops-$prog.txt" | sort -n |
			awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "%d %.2f %.2f", NR, s / NR / 1000, v[int((NR + 1) / 2)] / 1000; else print "0 0 0" }')
		read -r cnt mean med <<<"$row"
		printf '  %-10s %8s %10s %10s\n' "$h" "$cnt" "$mean" "$med"
		# one way = the NIC hops + the average of the two hosts' turns
		tm=$(awk -v a="$tm" -v b="$mean" -v h="$h" 'BEGIN { print a + (h ~ /^host/ ? b / 2 : b) }')
		tmed=$(awk -v a="$tmed" -v b="$med" -v h="$h" 'BEGIN { print a + (h ~ /^host/ ? b / 2 : b) }')
	done
	printf '  %-10s %8s %10.2f %10.2f\n' one-way '' "$tm" "$tmed"
}

# Not in a pipeline: a subshell would not run lib.sh's EXIT trap, which
# stops snic-emu when a step fails.
echo "latency hops (HAL-clock trace points, $TB, -n $ITERS; $(nproc) cores)" >"$OUT/latency.txt"
one ib_write_lat >>"$OUT/latency.txt"
one ib_send_lat >>"$OUT/latency.txt"
cat "$OUT/latency.txt"
