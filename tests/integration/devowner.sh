#!/usr/bin/env bash
# Case "multi/dev-owner": the owner files of /dev/infiniband nodes
# (boards/emu/devview.c).  Each snic-emu leaves /dev/infiniband/.snic-<hash>
# holding its pid next to its uverbs-*-<hash> nodes and, at start, removes
# the nodes of owners that are provably gone.  Starting snic-emu among
# planted owners: a dead pid's nodes and owner file go; a live pid's, an
# empty file's (another emulator caught mid-write) and a garbled file's
# stay.  The emulator's own owner file holds exactly its pid, renamed into
# place (no temporary left).  Runs in a private mount namespace with its
# own /dev/infiniband, so other emulators on the machine neither see the
# planted files nor race with this case.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

D=/dev/infiniband
if [[ ${SNIC_IN_MNTNS:-} != 1 ]]; then
	snic_need_cmd unshare mount
	(( EUID == 0 )) || snic_fail "needs root (a private /dev/infiniband)"
	trap - EXIT INT TERM
	exec env SNIC_IN_MNTNS=1 SNIC_CASE_DIR="$SNIC_CASE_DIR" \
		unshare --mount --propagation private -- bash -c \
		'mkdir -p /dev/infiniband && mount -t tmpfs snic-devowner /dev/infiniband && exec bash "$@"' \
		snic-mntns "$0" "$@"
fi

# plant HASH CONTENT: an owner file and one node of a made-up emulator.
plant() {
	printf '%s' "$2" > "$D/.snic-$1"
	mknod -m 666 "$D/uverbs-snicx-$1" c 1 3 # /dev/null's numbers: inert
}
( exit 0 ) & dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && snic_fail "pid $dead should be gone"
plant 00000d0d "$dead"$'\n'
plant 000011fe "$$"$'\n'
plant 000e0e0e ''
plant 00ba0ba0 $'12ab\xff\n'
snic_emu_start
for h in 000011fe 000e0e0e 00ba0ba0; do
	[[ -e $D/.snic-$h && -e $D/uverbs-snicx-$h ]] ||
		snic_fail "the nodes of owner .snic-$h (live, empty or garbled) were removed: $(ls -A $D)"
done
[[ ! -e $D/.snic-00000d0d && ! -e $D/uverbs-snicx-00000d0d ]] ||
	snic_fail "the nodes of dead owner $dead were kept: $(ls -A $D)"
own=() tmp=()
for f in "$D"/.snic-*; do
	case ${f##*/.snic-} in
	00000d0d | 000011fe | 000e0e0e | 00ba0ba0) ;;
	????????) own+=("$f") ;;
	*) tmp+=("$f") ;;
	esac
done
(( ${#own[@]} == 1 )) || snic_fail "want one owner file of snic-emu, have: ${own[*]:-none}"
(( ${#tmp[@]} == 0 )) || snic_fail "temporary owner files left: ${tmp[*]}"
epid=$SNIC_EMU_PID
[[ $(<"${own[0]}") == "$epid" ]] ||
	snic_fail "${own[0]} holds '$(<"${own[0]}")', not snic-emu's pid $epid"
h=${own[0]##*/.snic-}
ls "$D"/uverbs-snic0-"$h" "$D"/uverbs-snic1-"$h" >/dev/null ||
	snic_fail "snic-emu made no nodes for its owner file ${own[0]}: $(ls -A $D)"
snic_emu_stop || exit 1
[[ ! -e ${own[0]} ]] || snic_fail "snic-emu left its owner file ${own[0]}"
snic_log "dead owner's nodes removed; live, empty and garbled owners' kept; own owner file holds pid $epid"
