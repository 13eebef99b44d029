#!/usr/bin/env bash
# Instructions per RDMA WRITE in the deterministic simulation (two NICs
# over tests/unit's fake HAL and host, no OS, no DPDK), counted by QEMU's
# TCG plugin interface under qemu-user (tools/qemu-plugin/insn-count.c), for the
# aarch64 Linux build and the x86-64 build alike.  A count that does not
# depend on the machine's noise.
#
#   tools/instr-count.sh [SIZE]      (default 64 bytes)
#
# Method: tests/sim/sim_write runs N WRITEs one at a time (post, carry
# through both NICs, poll the CQE); the count at N=3000 minus the count at
# N=1000, divided by 2000, is the cost of one WRITE without the set-up.
# "firmware" counts the translation blocks that start in a function of
# libsnicfw.a (requester, responder, completer, ICRC, and both NICs' poll
# passes while the WRITE is in flight); "program" adds the simulated host
# and the fake HAL (copies, the fake wire).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SIZE=${1:-64}
N1=1000 N2=3000
PLUGIN=build/bin/qemu-insn-count.so

die() { echo "instr-count: error: $*" >&2; exit 1; }
for q in qemu-aarch64 qemu-x86_64; do
	command -v "$q" >/dev/null || die "$q not found: qemu-user (tools/setup-deps.sh installs it)"
done

make -s -j2 build/tests/sim/sim_write >/dev/null
make -s -j2 ARCH=aarch64 build-aarch64/tests/sim/sim_write >/dev/null
SYSROOT=$(tools/arm64-sysroot.sh --print) || die "no arm64 sysroot"
mkdir -p "$(dirname "$PLUGIN")"
# The plugin runs inside the (x86-64) qemu binary: the native compiler.
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$PLUGIN" tools/qemu-plugin/insn-count.c

# count ARCH N: "total in-syms" of one run
count() {
	local arch=$1 n=$2 b=build qemu=(qemu-x86_64) objdump=objdump
	if [[ $arch == aarch64 ]]; then
		b=build-aarch64 qemu=(qemu-aarch64 -L "$SYSROOT") objdump=aarch64-linux-gnu-objdump
	fi
	# The archive's functions, static ones too, from the objects' ELF
	# symbol tables (nm would list only the LTO IR's global symbols), by
	# their names before any ".": the link-time optimiser's clones and
	# renamed statics (foo.isra.0, foo.lto_priv.0) count as foo (the
	# plugin looks them up the same way).
	"$objdump" -t "$b/lib/libsnicfw.a" | awk '$3 == "F" && $4 ~ /^\.text/ { sub(/\..*/, "", $NF); print $NF }' |
		sort -u >"$b/tests/sim/fw.syms"
	"${qemu[@]}" -plugin "$PLUGIN,syms=$b/tests/sim/fw.syms,top=${TOP:-0}" \
		"$b/tests/sim/sim_write" "$n" "$SIZE" 2>&1 >/dev/null |
		awk '/^insn-count: total/ { print $3, $5; next } /^insn-count:/ { print "#", $2, $3 }'
}
TOP=12

echo "instructions per ${SIZE}-B RDMA WRITE, simulation under qemu-user (TCG plugin), (N=$N2 - N=$N1) / $(( N2 - N1 ))"
printf '  %-8s %10s %10s\n' arch firmware program
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in aarch64 x86_64; do
	count "$arch" "$N1" >"$tmp/$arch.1"
	count "$arch" "$N2" >"$tmp/$arch.2"
	read -r t1 f1 < <(grep -v '^#' "$tmp/$arch.1")
	read -r t2 f2 < <(grep -v '^#' "$tmp/$arch.2")
	printf '  %-8s %10d %10d\n' "$arch" $(( (f2 - f1) / (N2 - N1) )) $(( (t2 - t1) / (N2 - N1) ))
done
for arch in aarch64 x86_64; do
	echo "$arch, firmware functions per WRITE (the busiest):"
	awk -v d=$(( N2 - N1 )) '$1 == "#" { if (FNR == NR) a[$2] = $3; else printf "    %-24s %6d\n", $2, ($3 - a[$2]) / d }' \
		"$tmp/$arch.1" "$tmp/$arch.2" | sort -k2,2nr | head -n 8
done
