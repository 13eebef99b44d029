#!/usr/bin/env bash
# Instructions per command next to many objects (issue 11, many QPs):
# the unit suite "many" (tests/unit/test_many.c: 3,000 MRs of one
# context, 2,000 idle QPs of another, a context's death, 1,008 connection
# sets) under callgrind; for each function below, its inclusive
# instructions divided by its calls.  fctx_* / fqp_* are a whole command
# round trip in the simulation (the fake host writes the mailbox, the
# firmware polls and runs it, the host reads the answer); snic_nic_ctx_dead
# is a context's teardown (two: one holding ~3,000 MRs, one holding three
# QPs and an MR next to the 2,000 idle QPs).  Deterministic: the same
# build gives the same numbers.
#
#   tools/bench-cmd-instr.sh [UNIT_TESTS_BINARY]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${1:-${SNIC_BUILD:-build}/tests/unit-tests}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" "$BIN" many \
	>"$OUT/run.log" 2>&1 || { cat "$OUT/run.log" >&2; exit 1; }
callgrind_annotate --threshold=100 --inclusive=yes --tree=caller "$OUT/cg.out" 2>/dev/null |
	awk -v want="fctx_reg_mr fctx_dereg_mr fqp_create fqp_modify fqp_destroy snic_nic_ctx_dead" '
	BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) keep[w[i]] = i }
	function name(l) { sub(/.*[<*]  */, "", l); sub(/ .*/, "", l); sub(/.*:/, "", l); return l }
	/^ *[0-9,]+ .* < / { c = $0; sub(/.*\(/, "", c); sub(/x\).*/, "", c); gsub(/,/, "", c)
			    ir = $1; gsub(/,/, "", ir)
			    k++; cc[k] = c; ci[k] = ir; cn[k] = name($0); next }
	/^ *[0-9,]+ .* \*  / { f = name($0)
			      for (j = 1; f in keep && j <= k; j++)
				      row[keep[f]] = row[keep[f]] sprintf("  %-18s %-20s %6d calls %10.0f instructions each\n",
					      f, "(" cn[j] ")", cc[j], ci[j] / cc[j])
			      k = 0; next }
	/^$/ { k = 0 }
	END { print "instructions per call, unit suite many (callgrind; by caller)"
	      for (i = 1; i <= n; i++) if (i in row) printf "%s", row[i] }'
