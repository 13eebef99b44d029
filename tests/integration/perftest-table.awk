# perftest's result table, as perftest.sh requires it: a header line starting
# with "#bytes", then a row that starts with the message size and holds only
# numbers.  One column may hold a non-number: the latency programs' t_stdev,
# which perftest prints as "-nan" (or "nan"/"inf") when one outlier under load
# overflows its variance sum; the figures that say something (min, typical,
# avg, percentiles, bandwidths) must still be numbers.
#   awk -f tests/integration/perftest-table.awk CLIENT_OUTPUT   (exit 0 = ok)
function is_num(s) { return s ~ /^[0-9]+(\.[0-9]+)?$/ }
function is_nan_inf(s) { return tolower(s) ~ /^[-+]?(nan|inf(inity)?)$/ }
/^[[:space:]]*#bytes/ {
	hdr = 1; stdev = 0
	for (i = 1; i <= NF; i++)
		if ($i ~ /^t_stdev/) stdev = i
	next
}
hdr && NF >= 2 && $1 ~ /^[0-9]+$/ {
	ok = 1
	for (i = 2; i <= NF; i++)
		if (!is_num($i) && !(i == stdev && is_nan_inf($i))) ok = 0
	if (ok) row = 1
}
END { exit !(hdr && row) }
