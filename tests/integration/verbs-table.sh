#!/usr/bin/env bash
# Case "unit/verbs-table": the README's "Verbs support table" has exactly one
# row for every verb of <infiniband/verbs.h> (tools/verbs-list.sh), no row for
# a name the header does not have, and an answer in each row.
#   tests/integration/verbs-table.sh [README]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

snic_need_cmd perl
readme=${1:-$SNIC_ROOT/README.md}
verbs=$("$SNIC_ROOT/tools/verbs-list.sh")
(( $(wc -l <<<"$verbs") > 100 )) || snic_fail "tools/verbs-list.sh found too few verbs"
# rows of the section: | `ibv_x` | answer | why |
rows=$(awk '/^## Verbs support table/ { on = 1; next } /^## / { on = 0 }
	    on && /^\| `ibv_/' "$readme")
[[ -n $rows ]] || snic_fail "no \"## Verbs support table\" rows in $readme"
named=$(sed -E 's/^\| `([a-z0-9_]+)`.*/\1/' <<<"$rows" | LC_ALL=C sort)
dups=$(uniq -d <<<"$named")
[[ -z $dups ]] || snic_fail "verbs with more than one row: $(tr '\n' ' ' <<<"$dups")"
missing=$(LC_ALL=C comm -23 <(echo "$verbs") <(echo "$named"))
[[ -z $missing ]] || snic_fail "verbs of verbs.h without a row: $(tr '\n' ' ' <<<"$missing")"
extra=$(LC_ALL=C comm -13 <(echo "$verbs") <(echo "$named"))
[[ -z $extra ]] || snic_fail "rows for names verbs.h does not have: $(tr '\n' ' ' <<<"$extra")"
empty=$(awk -F'|' '{ a = $3; gsub(/ /, "", a); if (a == "") print $2 }' <<<"$rows")
[[ -z $empty ]] || snic_fail "rows without an answer: $empty"
snic_log "all $(wc -l <<<"$verbs") verbs of verbs.h have a row in the README's support table"
