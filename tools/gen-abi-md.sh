#!/usr/bin/env bash
# tools/gen-abi-md.sh — write (or check) the generated half of
# host-driver/ABI.md: one row per symbol@version our libibverbs.so.1
# exports, with the file that defines it and, for the exports snic does not
# implement, what they answer.  Nothing in it is typed by hand:
#
#   symbol, version, kind   objdump -T of the built library
#   defined in              nm of the built objects (BUILD/obj/host-driver)
#   answer                  abi/stubs.def for the table-generated stubs;
#                           abi/unsupported.c for the hand-written ones
#   imported by             tools/abi-check.sh --list (the installed Debian
#                           programs and libraries)
#
# It also holds the sources together, and fails (exit 1) naming each
# mismatch: every stubs.def entry must be exported at the version the table
# says and defined in abi/stubs.c; every symbol of libibverbs.map must be
# exported at the version of its node; every export must come from a file.
#
# Usage:
#   tools/gen-abi-md.sh [BUILD]           rewrite ABI.md below its marker line
#   tools/gen-abi-md.sh --check [BUILD]   exit 1 (with a diff) if ABI.md is
#                                         not what it would write
# BUILD defaults to $SNIC_BUILD, else build.  Exit 2: usage, or nothing built.
set -euo pipefail
export LC_ALL=C

mode=write
case "${1:-}" in
  --check) mode=check; shift ;;
  -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
  -*) echo "gen-abi-md: unknown option $1" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
build=${1:-${SNIC_BUILD:-build}}
lib=$build/lib/libibverbs.so.1
objs=$build/obj/host-driver
doc=host-driver/ABI.md
map=host-driver/abi/libibverbs.map
def=host-driver/abi/stubs.def
marker='<!-- Generated below by tools/gen-abi-md.sh; do not edit by hand. -->'

[ -f "$lib" ] && [ -d "$objs" ] || {
  echo "gen-abi-md: $lib or $objs missing (build first)" >&2; exit 2; }
grep -qxF "$marker" "$doc" || {
  echo "gen-abi-md: $doc has no marker line: $marker" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "symbol version kind default|non-default" for every IBVERBS_* and
# SNIC_PRIVATE_* (our librdmacm's entry points) export.
objdump -T "$lib" | awk '
  /^[0-9a-f]+ / && !/\*UND\*/ {
    ver = $(NF-1); vis = (ver ~ /^\(/) ? "non-default" : "default"
    gsub(/[()]/, "", ver)
    if (ver !~ /^(IBVERBS|SNIC_PRIVATE)_/ || $NF ~ /^(IBVERBS|SNIC_PRIVATE)_/) next
    print $NF, ver, (($0 ~ / DO /) ? "object" : "function"), vis
  }' | sort -u > "$tmp/exports"

# "symbol source" from the objects (a .symver alias counts for its name).
find "$objs" -name '*.o' | sort | while read -r o; do
  src=${o#"$build"/obj/}
  nm -g --defined-only "$o" | awk -v f="${src%.o}.c" \
    'NF == 3 { s = $3; sub(/@.*/, "", s); print s, f }'
done | sort -u > "$tmp/where"

# "symbol version kind" from the stub table.
sed -n 's/^STUB(\([A-Za-z0-9_]*\), *\([A-Za-z0-9_.]*\), *\([A-Z]*\)).*/\1 \2 \3/p' \
  "$def" | sort > "$tmp/stubs"

# "symbol node" from the version map.
awk '/^[A-Z0-9_.]+ *\{/ { node = $1 }
     /^\t\t[A-Za-z0-9_]+;$/ { s = $1; sub(/;/, "", s); print s, node }' \
  "$map" | sort > "$tmp/map"

# --- consistency ---------------------------------------------------------
fail=0
while read -r s v k; do
  if ! awk -v s="$s" -v v="$v" '$1 == s && $2 == v { f = 1 } END { exit !f }' \
       "$tmp/exports"; then
    echo "stubs.def: $s@$v is not exported at that version"; fail=1
  fi
  f=$(awk -v s="$s" '$1 == s { print $2 }' "$tmp/where")
  if [ "$f" != host-driver/abi/stubs.c ]; then
    echo "stubs.def: $s is defined in ${f:-nothing}, not abi/stubs.c"; fail=1
  fi
done < "$tmp/stubs"
while read -r s v; do
  awk -v s="$s" -v v="$v" '$1 == s && $2 == v && $4 == "default" { f = 1 }
                           END { exit !f }' "$tmp/exports" ||
    { echo "libibverbs.map: $s@@$v is not exported"; fail=1; }
done < "$tmp/map"
while read -r s v k vis; do
  grep -q "^$s " "$tmp/where" ||
    { echo "export $s@$v: no object of $objs defines it"; fail=1; }
done < "$tmp/exports"
[ "$fail" -eq 0 ] || { echo "gen-abi-md: the ABI sources disagree (above)"; exit 1; }

# --- the generated text ----------------------------------------------------
tools/abi-check.sh --list > "$tmp/imports"

answer() { # symbol file -> what a not-supported export answers
  case "$2" in
    host-driver/abi/stubs.c)
      case "$(awk -v s="$1" '$1 == s { print $3 }' "$tmp/stubs")" in
        EOPNOTSUPP) echo "not supported: returns EOPNOTSUPP" ;;
        NULL) echo "not supported: NULL, errno EOPNOTSUPP" ;;
        ZERO) echo "not supported: returns 0" ;;
        VOID) echo "not supported: does nothing" ;;
      esac ;;
    host-driver/abi/unsupported.c) echo "not supported: see unsupported.c" ;;
    *) echo "implemented" ;;
  esac
}

{
  sed -n "1,/^$(printf '%s' "$marker" | sed 's/[][\.*^$/]/\\&/g')\$/p" "$doc"
  nexp=$(wc -l < "$tmp/exports")
  nimp=$(wc -l < "$tmp/imports")
  nstub=$(wc -l < "$tmp/stubs")
  in_file() { # how many exports a file (an awk regex) defines
    awk -v re="$1" 'NR == FNR { w[$1] = $2; next } w[$1] ~ re' \
      "$tmp/where" "$tmp/exports" | wc -l; }
  nuns=$(in_file '^host-driver/abi/unsupported[.]c$')
  nimpl=$(in_file '^host-driver/(core|memory|verbs)/|^host-driver/abi/strings[.]c$')
  echo
  echo "## Exports"
  echo
  echo "$nexp symbol@version exported: $nimpl implemented; not supported: $nstub"
  echo "from the table \`abi/stubs.def\` and $nuns in \`abi/unsupported.c\`."
  echo "$nimp of them are imported by the installed Debian packages"
  echo "(\`tools/abi-check.sh --list\`); \"-\" = imported by none, exported for"
  echo "fidelity.  \`@\` marks a non-default version."
  echo
  echo "| symbol | version | kind | defined in | answer | imported by |"
  echo "|---|---|---|---|---|---|"
  sort -k2,2V -k1,1 "$tmp/exports" | while read -r s v k vis; do
    f=$(awk -v s="$s" '$1 == s { print $2; exit }' "$tmp/where")
    imp=$(awk -v s="$s" -v v="$v" '$1 == s && $2 == v {
            $1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit }' "$tmp/imports")
    [ "$vis" = default ] && ver=$v || ver="@$v"
    printf '| `%s` | %s | %s | `%s` | %s | %s |\n' "$s" "$ver" "$k" \
      "${f#host-driver/}" "$(answer "$s" "$f")" "${imp:--}"
  done
} > "$tmp/ABI.md"

if [ "$mode" = check ]; then
  if ! diff -u "$doc" "$tmp/ABI.md" > "$tmp/diff"; then
    cat "$tmp/diff"
    echo "gen-abi-md: $doc is out of date: run tools/gen-abi-md.sh"
    exit 1
  fi
  echo "gen-abi-md: $doc is up to date ($(wc -l < "$tmp/exports") exports)"
else
  cp "$tmp/ABI.md" "$doc"
  echo "gen-abi-md: wrote $doc"
fi
