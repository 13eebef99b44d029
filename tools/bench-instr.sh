#!/usr/bin/env bash
# make bench-instr: firmware instructions per message, counted by callgrind
# on the deterministic two-NIC simulation (build/tests/bench-instr, see
# tests/bench/instr.c).  Only what runs inside snic_nic_poll() and outside
# the fake HAL (fh_*) is counted: requester + responder + completer of
# both NICs, ICRC included; and the payload's copy with its ICRC folded
# in (snic_dma_copy_crc, which the fake HAL's dma_read_crc calls, as the
# emu's does: its CRC is the firmware's work, so it counts, and with it
# the copy's stores that a plain dma_read does uncounted).  Each case runs N and 2N messages; the
# difference divided by N is the steady-state cost of one message, free of
# set-up, ramp-up and drain.  The same build gives the same numbers.
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
	--toggle-collect=snic_dma_copy_crc \
	--compress-strings=no --compress-pos=no \
	--callgrind-out-file="$OUT/cg.out" "$BIN" $ONLY >"$OUT/run.log" 2>&1 ||
	{ cat "$OUT/run.log" >&2; exit 1; }

# self_costs FILE: "function self-Ir" per line (a cost line right after a
# calls= line is the callee's inclusive cost and is not the caller's own).
self_costs() {
	awk '/^fn=/ { fn = substr($0, 4); next }
	     /^calls=/ { skip = 1; next }
	     /^[0-9+-]/ { if (skip) { skip = 0; next } self[fn] += $2 }
	     END { for (f in self) print f, self[f] }' "$1"
}
total() { awk '/^summary:/ { print $2 }' "$1"; }
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
	printf '  %-16s %6s  %10s\n' opcode bytes instr/msg
	for c in $cases; do
		read -r f1 f2 n < <(files "$c")
		printf '  %-16s %6s  %10s\n' "${c%-*}" "${c##*-}" \
			$(( ($(total "$f2") - $(total "$f1")) / n ))
	done
	for c in $cases; do
		read -r f1 f2 n < <(files "$c")
		echo
		echo "top $TOP functions, $c (self instructions per message)"
		join -a 2 -e 0 -o 0,1.2,2.2 <(self_costs "$f1" | sort) <(self_costs "$f2" | sort) |
			awk -v n="$n" '{ printf "  %8.1f  %s\n", ($3 - $2) / n, $1 }' |
			sort -rn | head -n "$TOP"
	done
} | tee "$OUT/instr.txt"
