# shellcheck shell=bash
# NICs as separate snic-emu processes, for the cases that run several
# (multi.sh, arm.sh).  Source it after lib.sh and snic_private_netns; do not
# run it.
#   nic_spawn TAG [WRAPPER...] -- ARGS   start one snic-emu process
#   nic_wait_ready SECS TAG...           until each printed "ready"
#   nic_stop TAG NAME                    SIGTERM, exit 0, files removed
#   memif_nic TAG NAME ROLE, veth_setup, afpacket_nics   port set-ups
#   pingpong BASE [options], verbs NAME [options], long_pingpong PORT [GID],
#   ctl_json FILE
# NIC_EXEC[TAG] replaces the snic-emu binary of one NIC with another
# command (words split at spaces), e.g. an aarch64 build under qemu-user.
# Every process, namespace and file made here is removed on exit.
EMU=$SNIC_BUILD/bin/snic-emu
CTL=$SNIC_BUILD/bin/snicctl
VT=$SNIC_BUILD/tests/snic_verbs_test
# shellcheck disable=SC2034 # used by the scripts that source this one
PY=/usr/bin/python3
snic_need_exec "$EMU" "$CTL" "$VT"

declare -A NIC_PID=() NIC_LOG=() NIC_CMD=() NIC_EXEC=()
NETNS=()
RUN_DIR=$(mktemp -d /dev/shm/snic-test.XXXXXX)
SOCK_DIR=$SNIC_CASE_DIR/sock
mkdir -p "$SOCK_DIR"
export SNIC_RUN_DIR=$RUN_DIR
export LD_LIBRARY_PATH=$SNIC_BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

multi_cleanup() {
	local rc=$? tag ns
	for tag in "${!NIC_PID[@]}"; do
		[[ -n ${NIC_PID[$tag]} ]] || continue
		echo "cleanup: NIC process $tag (pid ${NIC_PID[$tag]}) still running" >&2
		snic__kill_wait "${NIC_PID[$tag]}" 10
	done
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf -- "$RUN_DIR"
	(exit "$rc")
	snic__cleanup
}
trap multi_cleanup EXIT

# ------------------------------------------------------------- NIC processes

# nic_spawn TAG [ip netns exec NS] -- snic-emu arguments: start in the
# background, output in $SNIC_CASE_DIR/emu-TAG.log (the log of an earlier
# run of TAG is kept as emu-TAG.N.log).
nic_spawn() { # TAG [WRAPPER...] -- ARGS...
	local tag=$1 wrap=() n=1
	shift
	while [[ $1 != -- ]]; do wrap+=("$1"); shift; done
	shift
	local log=$SNIC_CASE_DIR/emu-$tag.log
	while [[ -e $SNIC_CASE_DIR/emu-$tag.$n.log ]]; do n=$(( n + 1 )); done
	[[ -e $log ]] && mv -- "$log" "$SNIC_CASE_DIR/emu-$tag.$n.log"
	local exe
	read -ra exe <<<"${NIC_EXEC[$tag]:-$EMU}"
	NIC_CMD[$tag]="${wrap[*]} ${exe[*]} --run-dir $RUN_DIR $*"
	snic_log "start $tag: ${NIC_CMD[$tag]}"
	: >"$log" # before the fork: a restart's wait must not see the last "ready"
	"${wrap[@]}" env -u LD_LIBRARY_PATH "${exe[@]}" --run-dir "$RUN_DIR" "$@" \
		>"$log" 2>&1 </dev/null &
	NIC_PID[$tag]=$!
	NIC_LOG[$tag]=$log
}

# Wait until every TAG printed "ready"; fail if one exits first.
nic_wait_ready() { # SECS TAG...
	local secs tag i rc
	secs=$(snic_secs "$1")
	shift
	for (( i = 0; i < secs * 10; i++ )); do
		local all=1
		for tag in "$@"; do
			grep -q '^ready' "${NIC_LOG[$tag]}" && continue
			all=0
			if ! kill -0 "${NIC_PID[$tag]}" 2>/dev/null; then
				rc=0
				wait "${NIC_PID[$tag]}" || rc=$?
				NIC_PID[$tag]=
				snic_tail "${NIC_LOG[$tag]}" 30
				snic_fail "NIC process $tag exited (status $rc) before 'ready'"
			fi
		done
		if (( all )); then
			snic_log "ready: $* after ~$(( i / 10 )).$(( i % 10 ))s"
			return 0
		fi
		sleep 0.1
	done
	for tag in "$@"; do snic_tail "${NIC_LOG[$tag]}" 20; done
	snic_fail "NIC processes $* not ready within ${secs}s"
}

# SIGTERM; must exit 0 within 20 s having removed its BAR and host memory.
nic_stop() { # TAG NAME
	local tag=$1 name=$2 pid=${NIC_PID[$1]} rc
	if ! snic_term_wait "$pid" "$(snic_secs 20)"; then
		NIC_PID[$tag]=
		snic_tail "${NIC_LOG[$tag]}" 20
		snic_fail "NIC process $tag ignored SIGTERM for 20 s (killed)"
	fi
	rc=$SNIC_EXIT_RC
	NIC_PID[$tag]=
	if (( rc != 0 )); then
		snic_tail "${NIC_LOG[$tag]}" 30
		snic_fail "NIC process $tag exited with status $rc after SIGTERM (want 0)"
	fi
	[[ ! -e $RUN_DIR/$name.bar && ! -e $RUN_DIR/$name.mem ]] ||
		snic_fail "NIC process $tag left $name.bar or $name.mem in $RUN_DIR: $(snic__ls "$RUN_DIR")"
	snic_log "$tag stopped: exit 0, runtime files removed"
}

nic_alive() { # TAG
	[[ -n ${NIC_PID[$1]} ]] && kill -0 "${NIC_PID[$1]}" 2>/dev/null
}

# ------------------------------------------------------------- port set-ups

MEMIF_SOCK=$SOCK_DIR/memif.sock
memif_nic() { # TAG NAME ROLE
	nic_spawn "$1" -- --nic "$2,port=net_memif0" -- \
		"--vdev=net_memif0,role=$3,socket=$MEMIF_SOCK,socket-abstract=no"
}

# Two namespaces and a veth pair between them; names unique to this run.
NS_A=snic-a-$$ NS_B=snic-b-$$ VETH_A=sva$$ VETH_B=svb$$
veth_setup() {
	command -v ip >/dev/null || snic_fail "'ip' not found (iproute2)"
	ip netns add "$NS_A" || snic_fail "cannot create network namespace $NS_A"
	NETNS+=("$NS_A")
	ip netns add "$NS_B" || snic_fail "cannot create network namespace $NS_B"
	NETNS+=("$NS_B")
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" ||
		snic_fail "cannot create veth pair $VETH_A/$VETH_B"
	local ns v
	for ns in "$NS_A:$VETH_A" "$NS_B:$VETH_B"; do
		v=${ns#*:} ns=${ns%%:*}
		# Only our NICs' frames on the wire: no IPv6 autoconfiguration.
		ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$v.disable_ipv6=1" || true
		# af_packet carries an IP MTU of 1500: RoCE path MTU 1024.
		ip -n "$ns" link set "$v" mtu 1500 up
	done
	snic_log "veth $VETH_A ($NS_A) <-> $VETH_B ($NS_B), MTU 1500"
}

afpacket_nics() { # [snic1 extra --nic keys, e.g. ,pcap=FILE]
	veth_setup
	nic_spawn nic0 ip netns exec "$NS_A" -- --nic snic0,port=net_af_packet0 -- \
		"--vdev=net_af_packet0,iface=$VETH_A,framecnt=4096"
	nic_spawn nic1 ip netns exec "$NS_B" -- --nic "snic1,port=net_af_packet0${1:-}" -- \
		"--vdev=net_af_packet0,iface=$VETH_B,framecnt=4096"
	nic_wait_ready 40 nic0 nic1
}

# ------------------------------------------------------------- traffic

pingpong() { # BASE [options]
	snic_pingpong "$@" || snic_fail "ibv_rc_pingpong $* failed"
}

verbs() { # NAME [snic_verbs_test options]
	local name=$1
	shift
	snic_run "$name" 300 "$VT" --dev0 snic0 --dev1 snic1 "$@" ||
		snic_fail "snic_verbs_test $* failed"
}

# A long ibv_rc_pingpong in the background (server on snic1, client on
# snic0; GID index 0 = IPv4, 1 = IPv6), a second into its traffic when this
# returns; its pids in the caller's pps (server) and ppc (client).
long_pingpong() { # PORT [GID_INDEX]
	local port=$1 gid=${2:-0}
	timeout 60 ibv_rc_pingpong -d snic1 -g "$gid" -p "$port" -n 1000000 \
		>"$SNIC_CASE_DIR/long-server.out" 2>&1 </dev/null &
	pps=$!
	SNIC_BG_PIDS+=("$pps")
	snic_wait_listen "$port" 30 "$pps" || snic_fail "long pingpong server did not listen"
	timeout 60 ibv_rc_pingpong -d snic0 -g "$gid" -p "$port" -n 1000000 127.0.0.1 \
		>"$SNIC_CASE_DIR/long-client.out" 2>&1 </dev/null &
	ppc=$!
	SNIC_BG_PIDS+=("$ppc")
	sleep 1
}

# snicctl --json show, to a file.
ctl_json() { # FILE
	"$CTL" --json show >"$1" || snic_fail "snicctl --json show failed"
}
