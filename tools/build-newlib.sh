#!/usr/bin/env bash
# Build newlib for bare-metal aarch64 (the qemu-virt board's C library) from
# Debian's newlib-source, once per machine, into a cache outside the clone:
#   ${SNIC_NEWLIB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/snic}/newlib-<ver>-aarch64
# The directory name carries the version; a finished build holds a stamp
# file, so an interrupted build is redone, and a lock serialises two builds
# started at once.  Prints the install prefix (include/ and lib/) on stdout.
#
# Usage: tools/build-newlib.sh [--print-prefix]
#   --print-prefix   only print where the build is (or would be); exit 1 if
#                    it is not there yet.
# Environment: SNIC_NEWLIB_CACHE  cache root; JOBS  make -j (default nproc).
set -euo pipefail

VERSION=3.3.0
TARBALL=/usr/src/newlib/newlib-${VERSION}.tar.xz
CROSS=aarch64-linux-gnu-
TARGET=aarch64-none-elf
# HOME may be unset under some CI runners: fall back to a system cache.
CACHE_ROOT=${SNIC_NEWLIB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/var/cache}/.cache}/snic}
PREFIX=$CACHE_ROOT/newlib-${VERSION}-aarch64
STAMP=$PREFIX/.snic-built

say() { echo "build-newlib: $*" >&2; }
die() { echo "build-newlib: error: $*" >&2; exit 1; }

if [[ ${1:-} == --print-prefix ]]; then
	echo "$PREFIX"
	[[ -f $STAMP ]]
	exit
fi

if [[ -f $STAMP ]]; then
	echo "$PREFIX"
	exit 0
fi

[[ -r $TARBALL ]] ||
	die "$TARBALL not found: install Debian's newlib-source (tools/setup-deps.sh)"
command -v ${CROSS}gcc >/dev/null ||
	die "${CROSS}gcc not found: install gcc-aarch64-linux-gnu (tools/setup-deps.sh)"

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.newlib-${VERSION}.lock"
flock 9
if [[ -f $STAMP ]]; then        # another build finished while we waited
	echo "$PREFIX"
	exit 0
fi

WORK=$(mktemp -d "$CACHE_ROOT/.newlib-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
rm -rf "$PREFIX"
say "building newlib ${VERSION} for ${TARGET} (once per machine, ~4 min) in $WORK"
start=$(date +%s)
tar -C "$WORK" -xJf "$TARBALL"
src=$(find "$WORK" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[[ -x $src/configure ]] || die "unexpected tarball layout in $TARBALL"
mkdir -p "$WORK/obj"
tools=()
for t in CC:gcc AR:ar AS:as LD:ld NM:nm RANLIB:ranlib OBJCOPY:objcopy \
	 OBJDUMP:objdump READELF:readelf STRIP:strip; do
	tools+=("${t%%:*}_FOR_TARGET=${CROSS}${t#*:}")
done
(
	cd "$WORK/obj"
	env "${tools[@]}" \
		CFLAGS_FOR_TARGET="-O2 -g -fno-pie -ffunction-sections -fdata-sections" \
		"$src/configure" --target=$TARGET --prefix="$PREFIX" \
		--disable-newlib-supplied-syscalls --disable-multilib --disable-nls \
		>"$WORK/configure.log" 2>&1 ||
		{ tail -n 30 "$WORK/configure.log" >&2; die "configure failed"; }
	make -j"${JOBS:-$(nproc)}" >"$WORK/make.log" 2>&1 ||
		{ tail -n 40 "$WORK/make.log" >&2; die "make failed"; }
	make install >"$WORK/install.log" 2>&1 ||
		{ tail -n 30 "$WORK/install.log" >&2; die "make install failed"; }
)
# The install puts everything under $PREFIX/$TARGET/{include,lib}.
[[ -f $PREFIX/$TARGET/lib/libc.a && -d $PREFIX/$TARGET/include ]] ||
	die "install did not produce $PREFIX/$TARGET/lib/libc.a"
touch "$STAMP"
say "done in $(( $(date +%s) - start )) s: $PREFIX"
echo "$PREFIX"
