#!/usr/bin/env bash
# tools/abi-check.sh — check that our libibverbs.so.1 is an ABI drop-in for
# the Debian programs and libraries that link against rdma-core's libibverbs.
#
# The import set is re-derived every time from the installed Debian binaries:
# every ELF file shipped by the packages below is read with `objdump -T`, and
# each undefined dynamic symbol versioned against an IBVERBS_* node is an
# import that our library must define, with the same version name and the
# same kind (function or data object).
#
# Usage:
#   tools/abi-check.sh [LIB]        check LIB (default build/lib/libibverbs.so.1)
#   tools/abi-check.sh --rdmacm [LIB]  the same for our librdmacm.so.1 (default
#                                   build/lib/librdmacm.so.1): RDMACM_* imports
#                                   of rdmacm-utils, perftest, libfabric1 and
#                                   UCX, against Debian's librdmacm.so.1
#   tools/abi-check.sh --list       print the import table (symbol, version,
#                                   importers), one symbol@version per line
#                                   (tools/gen-abi-md.sh puts it in ABI.md)
#
# Checks, each failure listed, exit status 1 if any failed:
#   1. every imported symbol@version is defined in LIB (hidden or default
#      version both satisfy a versioned reference), as a function if imported
#      as a function and as a data object if imported as one;
#   2. LIB defines the same IBVERBS version nodes, with the same parents, as
#      the installed rdma-core libibverbs.so.1 (REAL_LIB);
#   3. LIB exports nothing outside those version nodes (the map's `local: *`),
#      except snic's own SNIC_PRIVATE_* node (libibverbs -> librdmacm calls).
# Exit status 2: usage error or missing tools/packages.
set -euo pipefail
export LC_ALL=C

PKGS=(ibverbs-utils perftest rdmacm-utils librdmacm1 ibverbs-providers python3-pyverbs)
REAL_LIB=${REAL_LIB:-/usr/lib/x86_64-linux-gnu/libibverbs.so.1}
NODE=IBVERBS
DEFAULT_LIB=build/lib/libibverbs.so.1
if [ "${1:-}" = --rdmacm ]; then
  shift
  PKGS=(rdmacm-utils perftest libfabric1 libucx0 ucx-utils)
  REAL_LIB=/usr/lib/x86_64-linux-gnu/librdmacm.so.1
  NODE=RDMACM
  DEFAULT_LIB=build/lib/librdmacm.so.1
fi

mode=check
lib=
case "${1:-}" in
  --list) mode=list ;;
  -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
  -*) echo "abi-check: unknown option $1" >&2; exit 2 ;;
  "") ;;
  *) lib=$(realpath -m -- "$1") ;;
esac
cd "$(dirname "$0")/.."
lib=${lib:-$DEFAULT_LIB}

for t in objdump readelf dpkg; do
  command -v "$t" >/dev/null || { echo "abi-check: $t not found" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 1. the import set: "symbol version kind package file" ------------------
: > "$tmp/imports"
for pkg in "${PKGS[@]}"; do
  if ! dpkg -L "$pkg" > "$tmp/files" 2>/dev/null; then
    echo "abi-check: package $pkg is not installed" >&2; exit 2
  fi
  while IFS= read -r f; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    [ "$(head -c4 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || continue
    # objdump -T: ADDR FLAGS... KIND SECTION SIZE [(]VERSION[)] NAME
    objdump -T "$f" 2>/dev/null | awk -v pkg="$pkg" -v f="$f" -v node="$NODE" '
      /\*UND\*/ && $0 ~ (" \\(?" node "_") {
        ver = $(NF-1); gsub(/[()]/, "", ver)
        kind = ($0 ~ / DO /) ? "object" : "function"
        print $NF, ver, kind, pkg, f
      }' >> "$tmp/imports"
  done < "$tmp/files"
done
if [ ! -s "$tmp/imports" ]; then
  echo "abi-check: found no $NODE imports at all (objdump broken?)" >&2; exit 2
fi
sort -u -o "$tmp/imports" "$tmp/imports"

# One line per symbol@version: "symbol version kind importers", where the
# importers are grouped by package (file names listed when there are few).
summarize() {
  awk '
    { key = $1 " " $2; kind[key] = $3
      base = $5; sub(/.*\//, "", base)
      n[key, $4]++
      if (n[key, $4] == 1) { files[key, $4] = base; pk[key] = pk[key] " " $4 }
      else files[key, $4] = files[key, $4] "," base
      keys[key] = 1 }
    END {
      for (key in keys) {
        m = split(substr(pk[key], 2), p, " "); out = ""
        for (i = 1; i <= m; i++) {
          c = n[key, p[i]]
          s = (c > 4) ? p[i] "(" c " files)" : p[i] "(" files[key, p[i]] ")"
          out = out (i > 1 ? " " : "") s
        }
        print key, kind[key], out
      }
    }' "$tmp/imports" | sort -k2,2V -k1,1
}

if [ "$mode" = list ]; then
  summarize
  exit 0
fi
# --- 2. what LIB exports ------------------------------------------------------
[ -f "$lib" ] || { echo "abi-check: $lib does not exist (build it first)" >&2; exit 2; }
# "symbol version kind hidden?" for every defined dynamic symbol.
objdump -T "$lib" | awk '
  /^[0-9a-f]+ / && !/\*UND\*/ {
    ver = $(NF-1); hidden = (ver ~ /^\(/) ? "hidden" : "default"
    gsub(/[()]/, "", ver)
    kind = ($0 ~ / DO /) ? "object" : ($0 ~ / DF /) ? "function" : "other"
    print $NF, ver, kind, hidden
  }' | sort -u > "$tmp/exports"

fail=0
missing=0
while read -r sym ver kind rest; do
  got=$(awk -v s="$sym" -v v="$ver" '$1 == s && $2 == v { print $3; exit }' "$tmp/exports")
  if [ -z "$got" ]; then
    echo "MISSING: $sym@$ver ($kind) imported by $rest"
    missing=$((missing + 1))
  elif [ "$got" != "$kind" ]; then
    echo "WRONG KIND: $sym@$ver exported as $got, imported as $kind by $rest"
    missing=$((missing + 1))
  fi
done < <(summarize)
[ "$missing" -eq 0 ] || fail=1

# --- 3. the version-node chain, compared with the real library ---------------
vernodes() {
  readelf -V "$1" | awk '
    /^Version definition section/ { on = 1; next }
    /^Version (needs|symbols) section/ { on = 0 }
    on && /Flags: BASE/ { next }
    on && /Name: / { sub(/.*Name: /, ""); name = $0; print name " <- (none)"; next }
    on && /Parent 1: / { sub(/.*Parent 1: /, ""); print name " <- " $0 }' |
  awk '{ last[$1] = $0 } END { for (k in last) print last[k] }' | sort -V
}
if [ -f "$REAL_LIB" ]; then
  vernodes "$REAL_LIB" > "$tmp/nodes.real"
  vernodes "$lib" | grep -v '^SNIC_PRIVATE_' > "$tmp/nodes.ours"
  if ! diff -u "$tmp/nodes.real" "$tmp/nodes.ours" > "$tmp/nodes.diff"; then
    echo "VERSION NODES differ from $REAL_LIB (- real, + ours):"
    sed -n '3,$p' "$tmp/nodes.diff" | grep '^[-+]' | sed 's/^/  /'
    fail=1
  fi
else
  echo "abi-check: note: $REAL_LIB not found, version-node chain not compared"
fi

# --- 4. nothing exported outside the IBVERBS nodes ---------------------------
extra=$(awk -v node="$NODE" '$2 !~ ("^" node "_") && $2 !~ /^SNIC_PRIVATE_/ && $1 != $2 {
  print "  " $1 " (" $2 ")" }' "$tmp/exports")
if [ -n "$extra" ]; then
  echo "EXPORTED OUTSIDE ${NODE}_* (the version script should make these local):"
  echo "$extra"
  fail=1
fi

nimp=$(summarize | wc -l)
nexp=$(awk -v node="$NODE" '$2 ~ ("^" node "_") && $1 !~ ("^" node "_")' "$tmp/exports" | wc -l)
if [ "$fail" -ne 0 ]; then
  echo "abi-check: FAIL: $lib ($missing of $nimp imported symbol@version missing or wrong; see above)"
  exit 1
fi
echo "abi-check: OK: $lib exports all $nimp symbol@version imported by ${PKGS[*]} ($nexp $NODE symbols exported)"
