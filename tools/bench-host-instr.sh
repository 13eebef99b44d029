#!/usr/bin/env bash
# What an unmodified perftest client costs per message in our
# libibverbs.so.1 (issue 11: ib_write_bw -s 64 toward 4 M msg/s).
#
# One snic-emu (both NICs, native speed); the perftest server runs
# natively on snic1; the client on snic0 runs under
# valgrind --tool=callgrind.  From its profile we add up the inclusive
# instructions of every call the perftest binary makes into
# libibverbs.so.1 (ibv_post_send/ibv_poll_cq and the ibv_wr_* calls go
# through the context's and QP's function pointers: those calls, with
# whatever libc work they do inside, the locks and memcpy included), per
# function called.  Each case runs N and 2N iterations; the difference / N
# is one message's cost, set-up and teardown cancel.
#
# What is deterministic: each call's cost (a post of one WQE, an empty
# poll, a poll that takes k CQEs).  What is not: how many polls find the
# CQ empty (how fast the emulator answers decides it; perftest signals
# one WR in 100, so poll_cq's instr/call is nearly an empty poll's).  So
# the table gives, per function, instr/msg from the difference of the two
# runs (exact for one call per message: post_send, post_recv), and the 2N
# run's instr/call and calls/msg.
#
# Then the same side natively under strace -c -f at N and 2N: system
# calls per message (the data path makes none of its own; the event
# thread's liveness checks and a kick of a sleeping firmware are
# time-driven and show up as fractions).
#
#   tools/bench-host-instr.sh [CASE...]   CASE: PROGRAM:SIZE[:SIDE]
#   (default ib_write_bw:64 ib_send_bw:8 ib_send_bw:64 ib_send_bw:512
#   ib_send_bw:64:server); SIDE client (default) or server: which side
#   runs under valgrind (ib_send_bw's server posts the receives and polls
#   their CQEs).  SNIC_HOST_INSTR_N: N (default 10000).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"

N=${SNIC_HOST_INSTR_N:-10000}
CASES=("$@")
(( ${#CASES[@]} )) || CASES=(ib_write_bw:64 ib_send_bw:8 ib_send_bw:64 ib_send_bw:512 ib_send_bw:64:server)
command -v valgrind >/dev/null || snic_fail "valgrind is not installed (tools/setup-deps.sh)"
OUT=$SNIC_BUILD/bench/host-instr
rm -rf "$OUT" && mkdir -p "$OUT"

snic_emu_start >/dev/null
port=$(snic_free_port 24715)

# run PROG SIZE ITERS SIDE WRAP...: one perftest pair, WRAP... in front of
# the side SIDE (client or server).
run() {
	local prog=$1 size=$2 iters=$3 side=$4 spid rc=0
	shift 4
	local s=() c=()
	[[ $side == server ]] && s=("$@") || c=("$@")
	timeout -k 5 600 "${s[@]}" "$prog" -d snic1 -F -x 0 -p "$port" -s "$size" -n "$iters" \
		>"$OUT/server.out" 2>&1 </dev/null &
	spid=$!
	snic_wait_listen "$port" 120 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 600 "${c[@]}" "$prog" -d snic0 -F -x 0 -p "$port" -s "$size" -n "$iters" 127.0.0.1 \
		>"$OUT/client.out" 2>&1 </dev/null || rc=$?
	wait "$spid" || rc=$?
	return "$rc"
}

# calls_into FILE PROGRAM: "function instr calls" per libibverbs function
# PROGRAM's own object called (inclusive cost of each call edge).
calls_into() {
	awk -v prog="/$2" '/^ob=/ { ob = substr($0, 4); next }
	     /^fn=/ { next }
	     /^cob=/ { cob = substr($0, 5); next }
	     /^cfn=/ { cfn = substr($0, 5); next }
	     /^calls=/ { split(substr($0, 7), a, " "); n = a[1]; take = 1; next }
	     take { take = 0
		    if (substr(ob, length(ob) - length(prog) + 1) == prog && cob ~ /libibverbs\.so/) {
			split($0, cst, " "); ir[cfn] += cst[2]; nc[cfn] += n }
		    cob = ob; next }
	     END { for (f in ir) print f, ir[f], nc[f] }' "$1"
}

# take_edges FILE: "instr calls" of poll_cq's calls of its take loop
# (cq_take_locked, called only when a CQE is there): poll_cq's own cost
# per call, apart from them, is an empty poll's, whatever the timing.
take_edges() {
	awk '/^fn=/ { fn = substr($0, 4); next }
	     /^cfn=/ { cfn = substr($0, 5); next }
	     /^calls=/ { split(substr($0, 7), a, " "); n = a[1]; take = 1; next }
	     take { take = 0
		    if (fn == "hd_poll_cq" && cfn == "cq_take_locked") {
			split($0, cst, " "); ir += cst[2]; nc += n } }
	     END { print ir + 0, nc + 0 }' "$1"
}

printf 'host driver instructions (callgrind; perftest %s; runs of N=%d and 2N messages)\n' \
	"$(dpkg-query -W -f '${Version}' perftest 2>/dev/null || echo '?')" "$N"
printf '  %-22s %-6s %-16s %9s %10s %10s\n' case side function instr/msg instr/call calls/msg
for c in "${CASES[@]}"; do
	IFS=: read -r prog size side <<<"$c"
	side=${side:-client}
	for n in "$N" $(( 2 * N )); do
		run "$prog" "$size" "$n" "$side" valgrind --tool=callgrind \
			--compress-strings=no --compress-pos=no \
			--callgrind-out-file="$OUT/$prog-$size-$side-$n.cg" ||
			snic_fail "$c at -n $n failed: $(tail -5 "$OUT/client.out" "$OUT/server.out")"
		calls_into "$OUT/$prog-$size-$side-$n.cg" "$prog" | sort >"$OUT/$prog-$size-$side-$n.fn"
	done
	# instr/msg: the difference of the two runs / N (exact for calls made
	# once per message; for poll_cq it also carries the difference in
	# empty polls, which timing decides); instr/call and calls/msg: the 2N
	# run's.
	join -a1 -a2 -e 0 -o 0,1.2,1.3,2.2,2.3 "$OUT/$prog-$size-$side-$N.fn" \
		"$OUT/$prog-$size-$side-$(( 2 * N )).fn" |
	awk -v n="$N" -v c="$prog -s $size" -v side="$side" '
		$5 / (2 * n) >= 0.001 {
		  printf "  %-22s %-6s %-16s %9.1f %10.1f %10.3f\n", c, side, $1,
			($4 - $2) / n, $4 / $5, $5 / (2 * n) }'
	f=$OUT/$prog-$size-$side-$(( 2 * N ))
	read -r tir tn < <(take_edges "$f.cg")
	awk -v tir="$tir" -v tn="$tn" -v c="$prog -s $size" -v side="$side" '
		$1 == "hd_poll_cq" && $3 > 0 {
		  printf "  %-22s %-6s poll_cq apart from its take loop: %.1f instr/call (%.1f %% of the calls found no CQE)\n",
			c, side, ($2 - tir) / $3, 100 * (1 - tn / $3) }' "$f.fn"
done

echo
echo "system calls per message (strace -c -f, native; N and 2N iterations)"
for c in "${CASES[@]}"; do
	IFS=: read -r prog size side <<<"$c"
	side=${side:-client}
	for n in "$N" $(( 2 * N )); do
		run "$prog" "$size" "$n" "$side" strace -f -c -o "$OUT/$prog-$size-$side-$n.strace" ||
			snic_fail "$c at -n $n under strace failed"
	done
	awk -v n="$N" -v c="$prog -s $size" -v side="$side" '
		FNR == 1 { f++ }
		$NF ~ /^[a-z_0-9]+$/ && $(NF-1) ~ /^[0-9]+$/ && $NF != "total" {
			calls = $4
			v[$NF, f] = calls; names[$NF] = 1 }
		END { s = ""
		      for (k in names) { d = (v[k, 2] - v[k, 1]) / n
			if (d > 0.0005) s = s sprintf(" %s %.3f", k, d) }
		      printf "  %-22s %-6s %s\n", c, side, s == "" ? " none" : s }' \
		"$OUT/$prog-$size-$side-$N.strace" "$OUT/$prog-$size-$side-$(( 2 * N )).strace"
done
snic_emu_stop >/dev/null
