#!/usr/bin/env bash
# An arm64 (aarch64 Linux) sysroot for the cross build (`make ARCH=aarch64`),
# made once per machine into a cache outside the clone:
#   ${SNIC_ARM64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/snic}/arm64-sysroot-<key>
# It holds Debian's arm64 libdpdk-dev and the other -dev packages the build
# links against, with everything they depend on, unpacked with `dpkg -x`.
#
# Why not `dpkg --add-architecture arm64` and `apt-get install
# libdpdk-dev:arm64`?  Debian's dpdk and rdma-core packages are not
# co-installable across architectures: that would remove the native ones
# everyone else builds with.  So apt runs here with a private state: its own
# sources list (the machine's Debian sources, restricted to arm64), package
# lists, empty dpkg status and archive cache, all under the cache dir.  The
# machine's dpkg database, foreign architectures and apt lists are never
# touched (checked at the end).
#
# The directory name carries a hash of the package list; a finished sysroot
# holds a stamp file, so an interrupted one is redone, and a lock serialises
# two runs started at once.  Prints the sysroot path on stdout.
#
# Usage: tools/arm64-sysroot.sh [--print]
#   --print   only print where the sysroot is (or would be); exit 1 if it is
#             not there yet.
# Environment: SNIC_ARM64_CACHE  cache root.
set -euo pipefail

# What the aarch64 build links against (boards/emu, boards/bluefield, the
# host driver and our librdmacm, snicctl, our verbs and rdma_cm programs and
# the unit tests).
PACKAGES=(libdpdk-dev libnuma-dev libpcap-dev libbsd-dev libelf-dev libfdt-dev
	libibverbs-dev librdmacm-dev libcunit1-dev libc6-dev)
# HOME may be unset under some CI runners: fall back to a system cache.
CACHE_ROOT=${SNIC_ARM64_CACHE:-${XDG_CACHE_HOME:-${HOME:-/var/cache}/.cache}/snic}
KEY=$(printf '%s\n' "${PACKAGES[@]}" bookworm | sha256sum | cut -c1-10)
SYSROOT=$CACHE_ROOT/arm64-sysroot-$KEY
STAMP=$SYSROOT/.snic-built

say() { echo "arm64-sysroot: $*" >&2; }
die() { echo "arm64-sysroot: error: $*" >&2; exit 1; }

if [[ ${1:-} == --print ]]; then
	echo "$SYSROOT"
	[[ -f $STAMP ]]
	exit
fi
[[ -f $STAMP ]] && { echo "$SYSROOT"; exit 0; }

for t in apt-get dpkg-deb flock sha256sum; do
	command -v "$t" >/dev/null || die "'$t' not found: this needs Debian 12 (apt, dpkg)"
done

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.arm64-sysroot.lock"
flock 9
[[ -f $STAMP ]] && { echo "$SYSROOT"; exit 0; }   # made while we waited

foreign_before=$(dpkg --print-foreign-architectures | sort | tr '\n' ' ')
APT=$CACHE_ROOT/.arm64-apt
rm -rf "$APT" "$SYSROOT"
mkdir -p "$APT"/{lists/partial,archives/partial,cache,etc/sources.list.d,etc/preferences.d}
: >"$APT/status"

# The machine's apt sources, as they are (deb822 .sources and one-line
# .list files).  A source without arm64 indexes only earns a notice.
shopt -s nullglob
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[[ -s $f ]] && cp -- "$f" "$APT/etc/sources.list.d/$(basename "$f" | tr / _)"
done
shopt -u nullglob
[[ -n $(ls -A "$APT/etc/sources.list.d") ]] || die "no apt sources in /etc/apt"
[[ -f $APT/etc/sources.list.d/sources.list ]] &&
	mv "$APT/etc/sources.list.d/sources.list" "$APT/etc/sources.list.d/main.list"

apt_priv() {
	apt-get -q \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64 \
		-o Dir::State="$APT" -o Dir::State::Lists="$APT/lists" \
		-o Dir::State::status="$APT/status" \
		-o Dir::Cache="$APT/cache" -o Dir::Cache::archives="$APT/archives" \
		-o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$APT/etc/sources.list.d" \
		-o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts="$APT/etc/preferences.d" \
		-o Debug::NoLocking=1 "$@"
}

say "making the arm64 sysroot (once per machine, ~1-2 min) in $SYSROOT"
start=$(date +%s)
apt_priv update >"$APT/update.log" 2>&1 ||
	{ tail -n 20 "$APT/update.log" >&2; die "apt-get update (private, arm64) failed"; }
# The dependency closure of PACKAGES from nothing installed, downloaded
# only (the private status file is empty: nothing is installed anywhere).
apt_priv install --download-only -y --no-install-recommends "${PACKAGES[@]}" \
	>"$APT/download.log" 2>&1 ||
	{ tail -n 20 "$APT/download.log" >&2; die "apt-get download of the arm64 packages failed"; }
debs=("$APT"/archives/*.deb)
(( ${#debs[@]} > 10 )) || die "apt downloaded only ${#debs[@]} packages"
mkdir -p "$SYSROOT"
for d in "${debs[@]}"; do
	dpkg-deb -x "$d" "$SYSROOT" || die "cannot unpack $d"
done
# Absolute symlinks (libfoo.so -> /lib/aarch64-linux-gnu/libfoo.so.1)
# would point into this machine's root: make them relative to the sysroot.
while IFS= read -r -d '' l; do
	t=$(readlink "$l")
	ln -sfn -- "$(realpath -m --relative-to="$(dirname "$l")" "$SYSROOT$t")" "$l"
done < <(find "$SYSROOT" -type l -lname '/*' -print0)
[[ -f $SYSROOT/usr/lib/aarch64-linux-gnu/librte_eal.a ]] ||
	die "no librte_eal.a in the unpacked packages"
[[ -e $SYSROOT/lib/ld-linux-aarch64.so.1 ]] || die "no arm64 dynamic loader unpacked"
printf '%s\n' "${debs[@]##*/}" >"$SYSROOT/.snic-packages"
rm -rf "$APT/archives" "$APT/cache"

foreign_after=$(dpkg --print-foreign-architectures | sort | tr '\n' ' ')
[[ $foreign_after == "$foreign_before" ]] ||
	die "dpkg's foreign architectures changed ('$foreign_before' -> '$foreign_after')"
touch "$STAMP"
say "done: ${#debs[@]} packages in $(( $(date +%s) - start )) s"
echo "$SYSROOT"
