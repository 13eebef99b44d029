#!/usr/bin/env bash
# Build the soft-RoCE peer VM of the interop suite (tests/interop/) once per
# machine, into a cache outside the clone:
#   ${SNIC_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/snic}/rxe-vm-<recipe>/
#     vmlinux        Debian 12's kernel, uncompressed (PVH entry: under TCG
#                    it boots ~2x faster than the bzImage)
#     initrd.cpio.gz busybox-static, rdma_rxe and rdma_ucm (the kernel's
#                    rdma_cm) and the modules they need, Debian's
#                    ibverbs-utils, perftest, rdmacm-utils (rping, rdma_server,
#                    rdma_client, ucmatose), rdma and tc (iproute2) and librxe
#                    with their shared-library closure, and
#                    tests/interop/vm-init (the control loop), and
#                    /usr/lib/snic-peer-linger.so (tests/interop/peer-linger.c:
#                    a delayed ibv_destroy_qp, the lingering QP rxe lacks)
#     manifest.txt   package versions inside (for reports and the README)
# With --kernel backports (folder rxe-vm-bpo-<recipe>): the kernel and
# iproute2's `tc` and `rdma` come from Debian's bookworm-backports instead
# (6.12 and 6.15 today), whose netem takes a seed (TCA_NETEM_PRNG_SEED,
# `netem ... seed N`; the 6.1 kernel and tc have none): the interop
# suite's impaired links.  Backports is read through an apt state of its
# own in the cache (its own sources list, lists and archives, updated at
# each such build): the system's apt sources are left alone, and nothing
# from backports is installed.  The user space is bookworm's either way.
# Nothing is installed system-wide: the kernel package is fetched with
# `apt-get download` and only the files we need are extracted from it
# (installing it would run initramfs-tools for minutes).  The user-space
# programs are the host's Debian packages (tools/setup-deps.sh installs
# them), checked unmodified with `dpkg --verify` before they are copied.
# <recipe> is a hash of this script, vm-init, peer-linger.c and the kernel
# choice: an edit of either builds a
# new VM beside the old one (worktrees with different versions do not
# rebuild each other's); a finished build holds a stamp, so an interrupted
# one is redone; a lock serialises two builds started at once.  Prints the
# cache folder on stdout.
#
# Usage: tools/build-rxe-vm.sh [--kernel stable|backports] [--print-dir]
#   --kernel     stable (default): bookworm's linux-image-amd64 and the
#                host's iproute2; backports: bookworm-backports' kernel and
#                iproute2 (tc, rdma)
#   --print-dir  only print where the VM is (or would be); exit 1 if it is
#                not built (or out of date).
#   SNIC_DEBIAN_MIRROR  where backports is fetched from
#                (default http://deb.debian.org/debian)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
INIT=$ROOT/tests/interop/vm-init
LINGER=$ROOT/tests/interop/peer-linger.c
CACHE_ROOT=${SNIC_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/var/cache}/.cache}/snic}
export LC_ALL=C

say() { echo "build-rxe-vm: $*" >&2; }
die() { echo "build-rxe-vm: error: $*" >&2; exit 1; }

KERNEL=stable PRINT_DIR=
while (( $# > 0 )); do
	case $1 in
	--kernel) KERNEL=${2:-}; shift 2 || die "--kernel needs stable or backports" ;;
	--print-dir) PRINT_DIR=1; shift ;;
	*) die "unknown argument '$1' (usage: $0 [--kernel stable|backports] [--print-dir])" ;;
	esac
done
[[ $KERNEL == stable || $KERNEL == backports ]] || die "--kernel: stable or backports, not '$KERNEL'"

[[ -r $INIT && -r $LINGER ]] || die "$INIT or $LINGER is missing"
recipe=$({ cat "${BASH_SOURCE[0]}" "$INIT" "$LINGER"; echo "kernel=$KERNEL"; } | sha256sum | cut -c1-16)
DIR=$CACHE_ROOT/rxe-vm-$recipe
[[ $KERNEL == backports ]] && DIR=$CACHE_ROOT/rxe-vm-bpo-$recipe
STAMP=$DIR/.snic-built
built() { [[ -f $STAMP && $(cat "$STAMP") == "$recipe" ]]; }

if [[ -n $PRINT_DIR ]]; then
	echo "$DIR"
	built
	exit
fi
if built; then
	echo "$DIR"
	exit 0
fi

# What goes into the VM.
# rxe computes its ICRC with the "crc32" shash: a soft dependency that
# --show-depends does not list.
# The host kernel here has no netem: the lossy cases impair the link inside
# the VM (netem on ifb1 fed from eth0's egress for what rxe sends, on ifb0
# fed from eth0's ingress for what it receives), hence the qdiscs, u32,
# mirred and ifb; act_gact's deterministic mode (`random determ ACTION N`:
# every Nth frame) picks the frames to duplicate, the same ordinals in
# every run; netem's own draws are seeded on the backports kernel.
# (On 6.12 virtio_pci and virtio_console are built in: --show-depends
# names no file for them.)
# rdma_ucm is the kernel's rdma_cm for user space (/dev/infiniband/rdma_cm;
# it pulls in rdma_cm, ib_cm, iw_cm and configfs): rping against snic's
# own CM.
MODULES=(rdma_rxe rdma_ucm crc32_generic virtio_net virtio_pci virtio_console
	sch_netem sch_prio sch_ingress cls_u32 act_mirred act_gact ifb)
PROGRAMS=(
	/usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong
	/usr/bin/ibv_uc_pingpong /usr/bin/ibv_devinfo /usr/bin/ibv_devices
	/usr/bin/ib_write_bw /usr/bin/ib_read_bw /usr/bin/ib_send_bw /usr/bin/ib_atomic_bw
	/usr/bin/ib_write_lat /usr/bin/ib_read_lat /usr/bin/ib_send_lat /usr/bin/ib_atomic_lat
	/usr/bin/rping /usr/bin/rdma_server /usr/bin/rdma_client /usr/bin/ucmatose
	/usr/bin/rdma /usr/sbin/tc
)
# (tc and rdma: the host's, or with --kernel backports backports' ones:
# TC_SRC, RDMA_SRC below)
PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
USER_PKGS=(ibverbs-utils perftest ibverbs-providers libibverbs1 rdmacm-utils librdmacm1
	iproute2 busybox-static)

for c in apt-get apt-cache dpkg-deb depmod modprobe cpio xz zstd gzip busybox gcc; do
	command -v "$c" >/dev/null 2>&1 || die "'$c' not found: run tools/setup-deps.sh"
done
[[ $(uname -m) == x86_64 ]] || die "the VM is x86_64 (Debian amd64); this host is $(uname -m)"
for f in "${PROGRAMS[@]}" "$PROVIDER" /etc/libibverbs.d/rxe.driver /bin/busybox; do
	[[ -e $f ]] || die "$f is missing: run tools/setup-deps.sh"
done
# The VM must run Debian's programs, not a copy someone changed.
dpkg --verify "${USER_PKGS[@]}" >/dev/null 2>&1 ||
	die "dpkg --verify ${USER_PKGS[*]} reports modified files; reinstall them"

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.rxe-vm.lock"
flock 9
if built; then          # another build finished while we waited
	echo "$DIR"
	exit 0
fi

WORK=$(mktemp -d "$CACHE_ROOT/.rxe-vm-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)

# ---------------------------------------------------------------- kernel
# APT: how apt-get/apt-cache reach the kernel's suite.  stable: the
# system's sources.  backports: a private apt state in the cache (one
# sources line, its own lists and archives), so the machine's apt
# configuration is not touched and nothing from backports can be
# installed by accident; the system keyring checks its signature.
APT=()
if [[ $KERNEL == backports ]]; then
	BPO=$CACHE_ROOT/apt-bookworm-backports
	mkdir -p "$BPO/lists/partial" "$BPO/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${SNIC_DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm-backports main" \
		>"$BPO/sources.list"
	APT=(-o "Dir::Etc::SourceList=$BPO/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$BPO/lists" -o "Dir::Cache=$BPO/cache" -o APT::Sandbox::User=root)
	[[ -r /usr/share/keyrings/debian-archive-keyring.gpg ]] ||
		die "no /usr/share/keyrings/debian-archive-keyring.gpg (package debian-archive-keyring)"
	say "bookworm-backports: apt-get update (private state in $BPO)"
	apt-get "${APT[@]}" -qq update || die "apt-get update of bookworm-backports failed"
fi
kernel_pkg() {
	apt-cache "${APT[@]}" depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
kpkg=$(kernel_pkg)
if [[ -z $kpkg && $KERNEL == stable ]] && (( EUID == 0 )); then
	say "apt knows no linux-image-amd64: apt-get update"
	apt-get -o DPkg::Lock::Timeout=600 -qq update || die "apt-get update failed"
	kpkg=$(kernel_pkg)
fi
[[ -n $kpkg ]] || die "apt-cache knows no linux-image-amd64 dependency (run apt-get update as root)"
kver=${kpkg#linux-image-}
pkgs=("$kpkg")
[[ $KERNEL == backports ]] && pkgs+=(iproute2)
say "${pkgs[*]} ($KERNEL): apt-get download"
mkdir -p "$WORK/deb" "$WORK/k" "$WORK/ip"
# (as root into a folder user _apt may not reach: no sandbox user)
(cd "$WORK/deb" && apt-get "${APT[@]}" -qq -o APT::Sandbox::User=root download "${pkgs[@]}") ||
	die "apt-get download ${pkgs[*]} failed"
deb=$(ls "$WORK"/deb/linux-image-*.deb)
kdebver=$(dpkg-deb -f "$deb" Version)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK/k" --wildcards \
	"./boot/vmlinuz-$kver" "./lib/modules/$kver/modules.*" \
	"./lib/modules/$kver/kernel/drivers/infiniband/*" "./lib/modules/$kver/kernel/net/*" \
	"./lib/modules/$kver/kernel/drivers/net/*" "./lib/modules/$kver/kernel/drivers/virtio/*" \
	"./lib/modules/$kver/kernel/drivers/char/*" "./lib/modules/$kver/kernel/crypto/*" \
	"./lib/modules/$kver/kernel/fs/configfs/*" "./lib/modules/$kver/kernel/lib/*" ||
	die "extracting the kernel and modules from $deb failed"
# 6.12's modules are xz-compressed; busybox's insmod loads plain ones.
find "$WORK/k/lib/modules" -name '*.ko.xz' -exec xz -d {} +

# TC_SRC/RDMA_SRC: the iproute2 programs the VM gets.  The backports
# ones speak the backports kernel's netlink (netem's seed); their
# libraries are bookworm's (the package depends on nothing newer).
TC_SRC=/usr/sbin/tc RDMA_SRC=/usr/bin/rdma ipdesc="iproute2 $(dpkg-query -W -f='${Version}' iproute2) (bookworm)"
if [[ $KERNEL == backports ]]; then
	ipdeb=$(ls "$WORK"/deb/iproute2_*.deb)
	dpkg-deb --fsys-tarfile "$ipdeb" | tar -x -C "$WORK/ip" ./sbin/tc ./usr/bin/rdma ||
		die "extracting tc and rdma from $ipdeb failed"
	TC_SRC=$WORK/ip/sbin/tc RDMA_SRC=$WORK/ip/usr/bin/rdma
	ipdesc="iproute2 $(dpkg-deb -f "$ipdeb" Version) (bookworm-backports: tc, rdma)"
fi

# vmlinuz is a bzImage whose payload is one xz (bookworm's 6.1) or zstd
# (backports' 6.12) stream: unpacked, the ELF kernel boots through its
# PVH note.
vmlinuz=$WORK/k/boot/vmlinuz-$kver
off=$(grep -abo $'\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1 || true)
unpack=(xz -dcq)
if [[ -z $off ]]; then
	off=$(grep -abo $'\x28\xb5\x2f\xfd' "$vmlinuz" | head -n 1 | cut -d: -f1)
	unpack=(zstd -dcq)
fi
[[ -n $off ]] || die "no xz or zstd stream in $vmlinuz"
# The decompressor stops at the stream's end and complains about the
# bytes after it.
tail -c +$(( off + 1 )) "$vmlinuz" | "${unpack[@]}" >"$WORK/vmlinux" 2>/dev/null || true
[[ $(head -c 4 "$WORK/vmlinux") == $'\x7fELF' ]] || die "unpacked kernel is not an ELF image"

depmod -b "$WORK/k" "$kver" || die "depmod failed"
mapfile -t kos < <(modprobe -d "$WORK/k" -S "$kver" -a --show-depends "${MODULES[@]}" |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
(( ${#kos[@]} >= ${#MODULES[@]} )) || die "modprobe --show-depends found too few modules: ${kos[*]}"

# ---------------------------------------------------------------- initramfs
R=$WORK/root
mkdir -p "$R"/{bin,dev,proc,sys,tmp,etc/libibverbs.d,modules,usr/bin,usr/lib/x86_64-linux-gnu/libibverbs,usr/lib64}
ln -s usr/lib "$R/lib"
ln -s usr/lib64 "$R/lib64"
cp /bin/busybox "$R/bin/busybox"
ln -s busybox "$R/bin/sh"
: >"$R/modules/order"
for ko in "${kos[@]}"; do
	cp "$ko" "$R/modules/"
	echo "${ko##*/}" >>"$R/modules/order"
done
cp "$INIT" "$R/init"
chmod 0755 "$R/init"
cp /etc/libibverbs.d/rxe.driver "$R/etc/libibverbs.d/"
cp "$PROVIDER" "$R/usr/lib/x86_64-linux-gnu/libibverbs/"
# Shared-library closure, as Debian's loader resolves it (not through a
# LD_LIBRARY_PATH that may point at our own libibverbs).
libs=()
for f in "${PROGRAMS[@]}" "$PROVIDER"; do
	case $f in
	/usr/sbin/tc) f=$TC_SRC ;;
	/usr/bin/rdma) f=$RDMA_SRC ;;
	esac
	[[ $f == */usr/*bin/* || $f == */sbin/tc ]] && cp "$f" "$R/usr/bin/"
	while read -r lib; do
		libs+=("$lib")
	done < <(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
done
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
	dest=${lib#/usr}
	dest=$R/usr$dest
	mkdir -p "$(dirname "$dest")"
	cp -L "$lib" "$dest"
done
# glibc dlopens libgcc_s for pthread_cancel/pthread_exit (rping's threads);
# ldd does not list it.
# (awk reads to the end: an early exit gets ldconfig a SIGPIPE, which
# pipefail turns into a failed build, now and then)
gcc_s=$(env -u LD_LIBRARY_PATH ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ && !f { print $NF; f = 1 }')
[[ -n $gcc_s ]] || die "libgcc_s.so.1 not found (ldconfig -p)"
mkdir -p "$R/usr/lib/x86_64-linux-gnu"
cp -L "$gcc_s" "$R/usr/lib/x86_64-linux-gnu/libgcc_s.so.1"
[[ -e $R/usr/lib64/ld-linux-x86-64.so.2 ]] || die "the dynamic loader was not copied"
# Built with the host's gcc against the host's glibc: the one copied above.
gcc -Wall -Wextra -Werror -O2 -shared -fPIC -o "$R/usr/lib/snic-peer-linger.so" "$LINGER" ||
	die "building $LINGER failed"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.cpio.gz"

{
	if [[ $KERNEL == backports ]]; then ksuite="Debian 12 bookworm-backports"; else ksuite="Debian 12"; fi
	echo "kernel: $kpkg $kdebver ($ksuite)"
	echo "tc, rdma: $ipdesc"
	echo "modules: ${kos[*]##*/}"
	# (with --kernel backports, iproute2's programs are the line above)
	dpkg-query -W -f='${Package} ${Version}\n' "${USER_PKGS[@]}" |
		awk -v k="$KERNEL" '!(k == "backports" && $1 == "iproute2") { print "user space: " $0 }'
	echo "built: $(date -u '+%F %T') UTC"
} >"$WORK/manifest.txt"

rm -rf "$DIR"
mkdir -p "$DIR"
mv "$WORK/vmlinux" "$WORK/initrd.cpio.gz" "$WORK/manifest.txt" "$DIR/"
echo "$recipe" >"$STAMP"
say "VM ready in $DIR after $(( $(date +%s) - start ))s: $(tr '\n' ';' <"$DIR/manifest.txt")"
echo "$DIR"
