# shellcheck shell=bash
# The checks after snic_hostile (tests/verbs/snic_hostile.c) that read the
# broker's and the firmware's own accounts, for an emu NIC (hostile.sh)
# and a QEMU NIC (qemu.sh hostile).  Source it after lib.sh.
#
#   hostile_checks BROKER_LOG COUNTERS_LOG
#     fails the case unless the firmware put fw_state back (bar_restored),
#     the broker put back >= 2 words of the BAR file's slot copies and
#     refused exactly one context over a process's share, and >= 8 foreign
#     doorbells were counted; HOSTILE_SUMMARY says what was found.
#   bg_start OUT READY CMD...
#     CMD in the background (output in OUT, pid in BG_PID, stopped by
#     lib.sh's clean-up if the case fails), returning once it printed a
#     line starting with READY.
#   users_group
#     a group for the NIC's users (snic-emu / snic-qemu --users), made
#     for the case and removed when it ends: USERS_GROUP, USERS_GID.

hostile_checks() { # BROKER_LOG COUNTERS_LOG
	local blog=$1 clog=$2 n b o f
	# fw_state is the firmware's to put back; the victim's slot words the
	# attacker reaches are the BAR file's copy, which the broker keeps
	n=$(awk '$1 == "bar_restored" { s += $2 } END { print s + 0 }' "$clog")
	(( n >= 1 )) || snic_fail "expected the firmware to restore fw_state, counters say $n"
	b=$(sed -n 's/.*broker: .* \([0-9]*\) words of file slot copies restored.*/\1/p' "$blog")
	(( ${b:-0} >= 2 )) || snic_fail "expected the broker to restore >= 2 words of the file's slot copies, it says '${b}'"
	# the slot attacker's context beyond its share
	o=$(sed -n 's/.*broker: .* (\([0-9]*\) over a process.s share).*/\1/p' "$blog")
	(( ${o:-0} == 1 )) || snic_fail "expected the broker to refuse 1 context over a process's share, it says '${o}'"
	f=$(awk '$1 == "doorbells_foreign" { s += $2 } END { print s + 0 }' "$clog")
	(( f >= 8 )) || snic_fail "expected >= 8 foreign doorbells counted, counters say $f"
	HOSTILE_SUMMARY="the firmware restored $n BAR words, the broker $b slot-copy words; $f foreign doorbells ignored, $o context over a share refused"
}

bg_start() { # OUT READY CMD...
	local out=$1 ready=$2 i
	shift 2
	"$@" >"$out" 2>&1 </dev/null &
	BG_PID=$!
	SNIC_BG_PIDS+=("$BG_PID")
	for (( i = 0; i < 300; i++ )); do
		grep -q "^$ready" "$out" && return 0
		kill -0 "$BG_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$out"
	snic_fail "$(basename "$out" .out): no '$ready' from $*"
}

users_group() {
	local prev
	USERS_GROUP=snicu$$
	groupadd -K GID_MIN=64900 -K GID_MAX=64989 "$USERS_GROUP" ||
		snic_fail "cannot create group $USERS_GROUP"
	USERS_GID=$(getent group "$USERS_GROUP" | cut -d: -f3)
	# before the clean-up already there, which gets the case's status
	eval "set -- $(trap -p EXIT)"
	prev=${3:-}
	# shellcheck disable=SC2064 # the group's name now
	# set +e: under errexit the failing status put back by (exit) would
	# end the trap there, before lib.sh's clean-up
	trap "users__rc=\$?; set +e; groupdel '$USERS_GROUP' 2>/dev/null; (exit \$users__rc); $prev" EXIT
}
