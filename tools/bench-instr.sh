#!/usr/bin/env bash
# make bench-instr: firmware instructions per message, counted by callgrind
# on the deterministic two-NIC simulation (build/tests/bench-instr, see
# tests/bench/instr.c).  Only what runs inside snic_nic_poll() and outside
# the fake HAL (fh_*) is counted: requester + responder + completer of
# both NICs, ICRC included; and the payload's copy with its ICRC folded
# in (snic_dma_copy_crc, which the fake HAL's dma_read_crc calls, as the
# emu's does: its CRC is the firmware's work, so it counts, and with it
# the copy's stores that a plain dma_read does uncounted; so does
# snic_dma_copy_crc_in, the receiving side's, under dma_write_crc).  Each case runs N and 2N messages; the
# difference divided by N is the steady-state cost of one message, free of
# set-up, ramp-up and drain.  The same build gives the same numbers.
# Data-cache misses per message come from callgrind's cache simulation
# with a fixed geometry, not this machine's: L1D 32 KiB 8-way and, as
# the last level, 1 MiB 16-way, 64-B lines (an Arm A72 SmartNIC core's
# L1D and its share of L2), so a layout change is judged the same
# everywhere; "L1D" counts D1mr + D1mw, "L2" DLmr + DLmw.
#
#   tools/bench-instr.sh [TOP [CASE]]   TOP: functions listed per case
#   (default 12); CASE: only the cases whose "op-bytes" starts with it
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${SNIC_BUILD:-build}
TOP=${1:-12}
ONLY=${2:-}
BIN=$BUILD/tests/bench-instr
OUT=$BUILD/bench/instr
command -v valgrind >/dev/null || { echo "bench-instr: valgrind is not installed (tools/setup-deps.sh)" >&2; exit 1; }
[[ -x $BIN ]] || { echo "bench-instr: $BIN missing (make all)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"

valgrind --tool=callgrind --collect-atstart=no \
	--toggle-collect=snic_nic_poll '--toggle-collect=fh_*' \
	--toggle-collect=snic_dma_copy_crc --toggle-collect=snic_dma_copy_crc_in \
	--compress-strings=no --compress-pos=no \
	--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
	--callgrind-out-file="$OUT/cg.out" "$BIN" $ONLY >"$OUT/run.log" 2>&1 ||
	{ cat "$OUT/run.log" >&2; exit 1; }

# self_costs FILE: "function self-Ir" per line (a cost line right after a
# calls= line is the callee's inclusive cost and is not the caller's own).
# self_costs FILE [EVENTS]: the same for the sum of the named events.
self_costs() {
	awk -v want="${2:-Ir}" '
	     /^events:/ { n = split(want, w, ",")
		for (i = 2; i <= NF; i++) for (k = 1; k <= n; k++)
			if ($i == w[k]) col[i] = 1; next }
	     /^fn=/ { fn = substr($0, 4); next }
	     /^calls=/ { skip = 1; next }
	     /^[0-9+-]/ { if (skip) { skip = 0; next }
		for (i in col) self[fn] += $i }
	     END { for (f in self) print f, self[f] }' "$1"
}
# total FILE [EVENTS]: the summary's sum of the named events (default Ir)
total() {
	awk -v want="${2:-Ir}" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
		/^summary:/ { n = split(want, w, ","); s = 0
			for (i = 1; i <= n; i++) s += $(col[w[i]]); print s }' "$1"
}
# per_msg F1 F2 N EVENTS: the events per message, one decimal
per_msg() {
	awk -v a="$(total "$1" "$4")" -v b="$(total "$2" "$4")" -v n="$3" \
		'BEGIN { printf "%.1f", (b - a) / n }'
}
# The dumps in the order they were taken: "file tag" per line.
dumps=$(for f in "$OUT"/cg.out.*; do
	echo "${f##*.} $f $(sed -n 's/^desc: Trigger: Client Request: //p' "$f")"
done | sort -n | cut -d' ' -f2-)
cases=$(awk '{ sub(/-[0-9]+$/, "", $2); if (!seen[$2]++) print $2 }' <<<"$dumps")
# files CASE: the N dump and the 2N dump of a case, then N.
files() {
	awk -v c="$1" '{ t = $2; n = t; sub(/-[0-9]+$/, "", t); sub(/.*-/, "", n)
		if (t == c) { f[++k] = $1; m[k] = n } }
		END { print f[1], f[2], m[1] }' <<<"$dumps"
}
{
	echo "firmware instructions per message (callgrind, both NICs, steady state)"
	printf '  %-16s %6s  %10s %10s %10s\n' opcode bytes instr/msg \
		L1D-miss L2-miss
	for c in $cases; do
		read -r f1 f2 n < <(files "$c")
		printf '  %-16s %6s  %10s %10s %10s\n' "${c%-*}" "${c##*-}" \
			$(( ($(total "$f2") - $(total "$f1")) / n )) \
			"$(per_msg "$f1" "$f2" "$n" D1mr,D1mw)" \
			"$(per_msg "$f1" "$f2" "$n" DLmr,DLmw)"
	done
	for c in $cases; do
		read -r f1 f2 n < <(files "$c")
		echo
		echo "top $TOP functions, $c (self instructions per message)"
		join -a 2 -e 0 -o 0,1.2,2.2 <(self_costs "$f1" | sort) <(self_costs "$f2" | sort) |
			awk -v n="$n" '{ printf "  %8.1f  %s\n", ($3 - $2) / n, $1 }' |
			sort -rn | head -n "$TOP"
		[[ $c == *active* ]] || continue
		echo
		echo "top $TOP functions, $c (L1D misses per message)"
		join -a 2 -e 0 -o 0,1.2,2.2 <(self_costs "$f1" D1mr,D1mw | sort) \
			<(self_costs "$f2" D1mr,D1mw | sort) |
			awk -v n="$n" '{ printf "  %8.2f  %s\n", ($3 - $2) / n, $1 }' |
			sort -rn | head -n "$TOP"
	done
} | tee "$OUT/instr.txt"
