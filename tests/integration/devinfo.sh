#!/usr/bin/env bash
# Cases "devinfo/*": Debian's unmodified ibv_devinfo against our
# libibverbs.so.1 while snic-emu runs.
#   tests/integration/devinfo.sh list
#       ibv_devinfo and ibv_devinfo -l list snic0 and snic1
#   tests/integration/devinfo.sh port DEV IPV4 [IPV6]
#       ibv_devinfo -v -d DEV: link_layer Ethernet, PORT_ACTIVE, and
#       GID[0] = ::ffff:IPV4 of type RoCE v2; with IPV6 also GID[1] = IPV6
#       of type RoCE v2, in ibv_devinfo and in the sysfs view
#   tests/integration/devinfo.sh restart
#       snic-emu started 5 times in one case folder: right after each
#       "ready" ibv_devices lists snic0 and snic1 (a wait that took the
#       previous start's "ready" went on before the BARs were made)
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

snic_need_cmd ibv_devinfo
mode=${1:-}
case $mode in
list) [[ $# -eq 1 ]] || snic_fail "usage: $0 list" ;;
port) [[ $# -eq 3 || $# -eq 4 ]] || snic_fail "usage: $0 port DEV IPV4 [IPV6]" ;;
restart) [[ $# -eq 1 ]] || snic_fail "usage: $0 restart" ;;
*) snic_fail "usage: $0 list | port DEV IPV4 [IPV6] | restart" ;;
esac

if [[ $mode == restart ]]; then
	snic_need_cmd ibv_devices
	for round in 1 2 3 4 5; do
		snic_emu_start >/dev/null
		SNIC_DEBUG=1 ibv_devices >"$SNIC_CASE_DIR/devices-$round.out" 2>&1 </dev/null || true
		for dev in snic0 snic1; do
			grep -qw "$dev" "$SNIC_CASE_DIR/devices-$round.out" || {
				cat "$SNIC_CASE_DIR/devices-$round.out"
				snic_fail "start $round: $dev not listed right after ready"
			}
		done
		snic_emu_stop || exit 1
	done
	snic_log "devinfo restart: both NICs listed right after each of 5 starts"
	exit 0
fi

snic_emu_start

errors=()
check() { # DESCRIPTION FILE ERE
	if grep -Eq -- "$3" "$2"; then
		snic_log "ok: $1"
	else
		snic_log "MISSING: $1 (no line matching /$3/ in $(basename "$2"))"
		errors+=("$1")
	fi
}

if [[ $mode == list ]]; then
	snic_run devinfo 20 ibv_devinfo || errors+=("ibv_devinfo exit status")
	out=$SNIC_CASE_DIR/devinfo.out
	check "hca_id snic0" "$out" $'^hca_id:\tsnic0$'
	check "hca_id snic1" "$out" $'^hca_id:\tsnic1$'
	snic_run devinfo-l 20 ibv_devinfo -l || errors+=("ibv_devinfo -l exit status")
	out=$SNIC_CASE_DIR/devinfo-l.out
	check "-l: at least 2 HCAs found" "$out" '^([2-9]|[1-9][0-9]+) HCAs found:$'
	check "-l: snic0" "$out" $'^\tsnic0$'
	check "-l: snic1" "$out" $'^\tsnic1$'
else
	dev=$2 ip=$3
	ip_re=${ip//./\\.}
	snic_run devinfo-v 20 ibv_devinfo -v -d "$dev" || errors+=("ibv_devinfo -v exit status")
	out=$SNIC_CASE_DIR/devinfo-v.out
	check "hca_id $dev" "$out" "^hca_id:[[:space:]]+$dev\$"
	check "transport InfiniBand (RoCE reports IB transport)" "$out" '^[[:space:]]+transport:[[:space:]]+InfiniBand \(0\)$'
	check "state PORT_ACTIVE" "$out" '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$'
	check "link_layer Ethernet" "$out" '^[[:space:]]+link_layer:[[:space:]]+Ethernet$'
	check "active_mtu present" "$out" '^[[:space:]]+active_mtu:[[:space:]]+(256|512|1024|2048|4096) \([1-5]\)$'
	# rdma-core 44 prints a RoCE v2 GID with inet_ntop and its type:
	#   "\t\t\tGID[  0]:\t\t::ffff:198.18.0.1, RoCE v2"
	check "GID[0] ::ffff:$ip, RoCE v2" "$out" "^[[:space:]]+GID\\[ +0\\]:[[:space:]]+::ffff:$ip_re, RoCE v2\$"
	if [[ $# -eq 4 ]]; then
		ip6=$4
		check "GID[1] $ip6, RoCE v2" "$out" "^[[:space:]]+GID\\[ +1\\]:[[:space:]]+$ip6, RoCE v2\$"
		# the sysfs view (UCX, MPI read it): GID 1 expanded, RoCE v2
		view=$SNIC_RUN_DIR/sys/class/infiniband/$dev/ports/1
		printf '%s\n' "$(cat "$view/gids/1")" "$(cat "$view/gid_attrs/types/1")" \
			>"$SNIC_CASE_DIR/sysfs-gid1.out"
		full=$(/usr/bin/python3 -c 'import ipaddress,sys; print(ipaddress.ip_address(sys.argv[1]).exploded)' "$ip6")
		check "sysfs gids/1 $full" "$SNIC_CASE_DIR/sysfs-gid1.out" "^$full\$"
		check "sysfs gid_attrs/types/1 RoCE v2" "$SNIC_CASE_DIR/sysfs-gid1.out" '^RoCE v2$'
	fi
	# The short form must work too.
	snic_run devinfo 20 ibv_devinfo -d "$dev" || errors+=("ibv_devinfo -d exit status")
	check "short form: PORT_ACTIVE" "$SNIC_CASE_DIR/devinfo.out" '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$'
fi

snic_emu_stop || exit 1
(( ${#errors[@]} == 0 )) || snic_fail "$(IFS=';'; echo "${errors[*]}")"
snic_log "devinfo $mode: all checks passed"
