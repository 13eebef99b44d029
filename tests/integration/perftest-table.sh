#!/usr/bin/env bash
# Case "perftest/table": perftest-table.awk, the check of perftest's result
# table, accepts what perftest really prints (a "-nan"/"inf" t_stdev after a
# latency outlier) and still rejects a table whose real figures are not
# numbers, or no table.  The rows are perftest 4.5's own format.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

awkf=$SNIC_ROOT/tests/integration/perftest-table.awk
LAT=' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] '
BW=' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
SEP='---------------------------------------------------------------------------------------'
n=0
# expect ok|bad NAME HEADER ROW
expect() {
	local want=$1 name=$2 f=$SNIC_CASE_DIR/table-$2.out got=ok
	printf '%s\n%s\n%s\n' "$3" "$4" "$SEP" > "$f"
	awk -f "$awkf" "$f" || got=bad
	[[ $got == "$want" ]] || snic_fail "table '$name': checker said $got, expected $want ($f)"
	n=$((n + 1))
}
expect ok  lat      "$LAT" $' 64      200          0.60           3.03         1.08     \t       0.98        \t0.19   \t\t2.45    \t\t3.03   '
expect ok  lat-nan  "$LAT" $' 64      200          2.62           9123.59      2.80     \t       48.26       \t-nan   \t\t32.07   \t\t9123.59'
expect ok  lat-nan2 "$LAT" ' 64      200          2.62           9123.59      2.80            48.26        nan    32.07    9123.59'
expect ok  lat-inf  "$LAT" ' 64      200          2.62           9123.59      2.80            48.26        inf    32.07    9123.59'
expect bad avg-nan  "$LAT" ' 64      200          2.62           9123.59      2.80            -nan         1.20   32.07    9123.59'
expect bad typ-nan  "$LAT" ' 64      200          2.62           9123.59      nan             48.26        1.20   32.07    9123.59'
expect bad garbage  "$LAT" ' 64      200          2.62           9123.59      2.80            48.26        abc    32.07    9123.59'
expect ok  bw       "$BW"  $' 4096       200              5735.92            5510.63\t\t   1.410721'
expect bad bw-nan   "$BW"  ' 4096       200              5735.92            -nan     1.410721'
expect bad no-row   "$LAT" ''
expect bad no-hdr   ''     ' 64      200          0.60           3.03         1.08            0.98         0.19   2.45     3.03'
snic_log "perftest-table.awk: $n tables judged as expected"
