#!/usr/bin/env bash
# Install what snic needs to build, test and demo on Debian 12 (bookworm).
# Idempotent and quick when everything is present: one dpkg-query, no apt.
# Only when packages are missing: apt-get update + a non-interactive install
# (as root, or through sudo).  Then it tries to reserve 2 MB hugepages for
# DPDK; snic-emu falls back to running without them, so that never fails.
#
# Environment: SNIC_SKIP_DEPS=1 skips everything (you manage the packages);
#              SNIC_HUGEPAGES=N pages to ask for (default 512; 0 = leave alone).
set -euo pipefail

PACKAGES=(
	# build
	build-essential pkg-config
	libdpdk-dev dpdk libnuma-dev libelf-dev libbsd-dev libfdt-dev libpcap-dev
	libcunit1-dev
	# verbs: headers for our programs, and Debian's unmodified programs
	libibverbs-dev ibverbs-utils librdmacm-dev rdmacm-utils perftest
	python3-pyverbs
	# communication engines run over snic (tests suite engines)
	ucx-utils openmpi-bin libopenmpi-dev mpich libmpich-dev
	# libfabric's verbs provider over snic (fi_info, fi_pingpong); ping
	# across the NICs' kernel interfaces
	libfabric-bin iputils-ping
	# wire oracles
	python3-scapy tshark
	# bare-metal aarch64 image (qemu-virt board); the aarch64 Linux build
	# runs under qemu-user (its arm64 sysroot: tools/arm64-sysroot.sh)
	gcc-aarch64-linux-gnu qemu-system-arm newlib-source device-tree-compiler
	qemu-user file
	# network namespaces for the tests (ip), ss; tc netem
	iproute2
	# make bench-instr (callgrind), make bench (plots)
	valgrind gnuplot-nox
	# the soft-RoCE peer VM of tests/interop (tools/build-rxe-vm.sh)
	qemu-system-x86 busybox-static cpio kmod xz-utils
	# (its bookworm-backports kernel: a zstd payload, the archive keyring
	# that signs backports)
	zstd debian-archive-keyring
	# make fuzz: libFuzzer + ASan/UBSan runtimes, llvm-cov for coverage
	clang-14 libclang-rt-14-dev llvm-14
)

say() { echo "setup-deps: $*"; }
die() { echo "setup-deps: error: $*" >&2; exit 1; }

if [[ ${SNIC_SKIP_DEPS:-} == 1 ]]; then
	say "SNIC_SKIP_DEPS=1: not checking packages or hugepages"
	exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	die "this needs Debian 12 (dpkg and apt); install by hand: ${PACKAGES[*]}"
fi

if [[ -r /etc/os-release ]]; then
	# shellcheck disable=SC1091
	os_id=$(. /etc/os-release && echo "${ID:-}:${VERSION_CODENAME:-}")
	[[ $os_id == debian:bookworm ]] ||
		say "warning: made for Debian 12 (bookworm), this is ${os_id}; trying anyway"
fi

# ---------------------------------------------------------------- packages
missing_pkgs() {
	local -A ok=()
	local status name p
	# "ii" = installed and configured; unknown packages print nothing.
	while read -r status name; do
		[[ $status == ii ]] && ok[$name]=1
	done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${PACKAGES[@]}" 2>/dev/null || true)
	for p in "${PACKAGES[@]}"; do
		[[ -n ${ok[$p]:-} ]] || echo "$p"
	done
}

mapfile -t missing < <(missing_pkgs)
if (( ${#missing[@]} == 0 )); then
	pkg_msg="all ${#PACKAGES[@]} packages present"
else
	SUDO=()
	if (( EUID != 0 )); then
		command -v sudo >/dev/null 2>&1 ||
			die "missing packages: ${missing[*]}; not root and no sudo: run as root:  apt-get install --no-install-recommends ${missing[*]}"
		SUDO=(sudo)
	fi
	say "installing ${#missing[@]} missing packages: ${missing[*]}"
	# tshark asks whether non-root users may capture; answer "no" up front.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		"${SUDO[@]}" debconf-set-selections
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o DPkg::Lock::Timeout=600 -qq update ||
		die "apt-get update failed"
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" ||
		die "apt-get install failed for: ${missing[*]}"
	mapfile -t still < <(missing_pkgs)
	(( ${#still[@]} == 0 )) || die "still missing after apt-get install: ${still[*]}"
	pkg_msg="installed ${missing[*]} (all ${#PACKAGES[@]} packages present now)"
fi

# ---------------------------------------------------------------- hugepages
want=${SNIC_HUGEPAGES:-512}
[[ $want =~ ^[0-9]+$ ]] || die "SNIC_HUGEPAGES must be a number"
hp=/proc/sys/vm/nr_hugepages
fallback="snic-emu will use its no-hugepage fallback"
if (( want == 0 )); then
	hp_msg="hugepages: left alone (SNIC_HUGEPAGES=0)"
elif [[ ! -r $hp ]]; then
	hp_msg="hugepages: not supported by this kernel; $fallback"
else
	cur=$(<"$hp")
	if (( cur >= want )); then
		hp_msg="hugepages: $cur x 2 MB reserved already"
	elif (( EUID != 0 )); then
		hp_msg="hugepages: $cur x 2 MB reserved and not root to reserve $want; $fallback"
	elif ! { echo "$want" >"$hp"; } 2>/dev/null; then
		hp_msg="hugepages: the kernel refused to reserve $want x 2 MB ($cur now); $fallback"
	else
		now=$(<"$hp")
		if (( now >= want )); then
			hp_msg="hugepages: reserved $now x 2 MB (was $cur)"
		elif (( now > 0 )); then
			hp_msg="hugepages: the kernel gave $now of $want x 2 MB (was $cur); snic-emu uses them or its no-hugepage fallback"
		else
			hp_msg="hugepages: the kernel gave none of $want x 2 MB; $fallback"
		fi
	fi
fi

say "$pkg_msg"
say "$hp_msg"
