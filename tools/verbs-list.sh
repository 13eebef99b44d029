#!/usr/bin/env bash
# tools/verbs-list.sh — every verb an application can call from
# <infiniband/verbs.h>: each ibv_* name written as a call or declared as a
# function, inline or function-like macro (comments stripped; struct, enum
# and union tags are not verbs), sorted, one per line.  The README's
# "Verbs support table" must have a row for each (tests/integration/
# verbs-table.sh checks it).
#   tools/verbs-list.sh [HEADER]     HEADER: /usr/include/infiniband/verbs.h
set -euo pipefail
export LC_ALL=C
hdr=${1:-/usr/include/infiniband/verbs.h}
[[ -r $hdr ]] || { echo "verbs-list: cannot read $hdr" >&2; exit 2; }
# comments go (a verb named in a comment is no declaration)
perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g' "$hdr" |
	grep -oP '(?<![\w.>])(?<!struct )(?<!enum )(?<!union )ibv_\w+(?=\s*\()' |
	sort -u
