#!/usr/bin/env bash
# Case "hostile/users": NICs shared with a group (snic-emu --users; README.md
# "Who may use the NICs").  snic-emu runs as root with --users GROUP, a
# group this case creates (removed at the end); the users are other uids:
#  - a second snic-emu without --users in that run dir is refused and the
#    directory keeps its mode and group;
#  - a member (uid USER_UID, GROUP its group) lists and opens the NICs
#    (ibv_devinfo), moves data across them (ibv_rc_pingpong, ibv_ud_pingpong)
#    and passes snic_verbs_test (every verb it uses, device memory too,
#    through a read-only BAR header);
#  - another member, the attacker (uid ATK_UID): the BAR file does not open
#    for writing (EACCES), the host memory and the admin socket do not open
#    at all, the BAR file's statistics area is all zeros after the traffic;
#    its processes get at most 32 contexts (2 x 16, then ENOSPC, on the
#    other NIC too) while the member still gets its 16; SNIC_NO_BROKER=1
#    is refused with a message, also to the NICs' own user (by the
#    firmware: that context would live in the file the members read);
#  - a uid outside the group sees no NIC ("no access to the NICs") and
#    cannot connect to the broker's socket (EACCES);
#  - snic-emu SIGKILLed while the attacker holds the locks a reader can
#    take on the BAR file (an exclusive flock, an OFD read lock):
#    the member's REG_MR pending on it fails within DEAD_MS and the NIC is
#    no longer listed (the liveness lock is a write lock, live_lock.h);
#  - --users all (started with umask 000): the same modes to everybody
#    (others' bits), the host memory and admin sockets still 0600, the
#    device view 0644/0755 and not the others' to write; a uid of no group
#    lists the NICs;
#  - an impostor (uid IMP_UID) runs snic-emu --users all in a run dir of
#    its own: the member pointed there (SNIC_RUN_DIR) sees no NIC and is
#    told why, and opens it only with SNIC_NIC_OWNER=IMP_UID.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/integration/hostile-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostile-lib.sh"

snic_private_netns "$0" "$@"
(( EUID == 0 )) || snic_fail "needs root (setpriv to other uids, a group)"
snic_need_cmd setpriv groupadd groupdel ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong stat
M=$SNIC_BUILD/tests/snic_member
snic_need_exec "$M" "$SNIC_BUILD/tests/snic_hostile" "$SNIC_BUILD/tests/snic_verbs_test"

USER_UID=65534 ATK_UID=64991 OUT_UID=64992 IMP_UID=64994   # 65534: nobody
users_group
GROUP=$USERS_GROUP GID=$USERS_GID
AS_USER=(setpriv --reuid="$USER_UID" --regid="$GID" --clear-groups --)
AS_ATK=(setpriv --reuid="$ATK_UID" --regid="$ATK_UID" --groups="$GID" --)
AS_OUT=(setpriv --reuid="$OUT_UID" --regid="$OUT_UID" --clear-groups --)
DEAD_MS=$(( 1500 * ${SNIC_TIMEOUT_SCALE:-1} ))

# a group that does not exist: refused before anything is made
rc=0
snic_run nogroup 20 env -u LD_LIBRARY_PATH "$SNIC_BUILD/bin/snic-emu" --users "$GROUP-none" \
	--run-dir "$SNIC_CASE_DIR/nogroup-run" || rc=$?
(( rc == 2 )) && grep -q "no such group" "$SNIC_CASE_DIR/nogroup.out" ||
	snic_fail "--users with an unknown group: status $rc, want 2 and 'no such group'"
[[ ! -e $SNIC_CASE_DIR/nogroup-run ]] || snic_fail "--users with an unknown group made the run dir"

snic_emu_start --users "$GROUP"
d=$SNIC_RUN_DIR
grep -q "^users: group $GROUP" "$SNIC_EMU_LOG" || snic_fail "snic-emu did not say who may use the NICs"

# the modes: the group's to list, read and connect to; the rest ours
modes=$(stat -c '%a %G %n' "$d" "$d"/*.bar "$d"/*.sock "$d"/host0.mem)
snic_log "modes: $(tr '\n' ' ' <<<"$modes")"
want() { # MODE GROUP FILE
	[[ $(stat -c '%a %G' "$3") == "$1 $2" ]] || snic_fail "$3: $(stat -c '%a %G' "$3"), want $1 $2"
}
want 750 "$GROUP" "$d"
for n in snic0 snic1; do
	want 640 "$GROUP" "$d/$n.bar"
	want 660 "$GROUP" "$d/$n.sock"
	[[ $(stat -c %a "$d/$n.admin.sock") == 600 ]] || snic_fail "$n.admin.sock is not 0600"
done
[[ $(stat -c %a "$d/host0.mem") == 600 ]] || snic_fail "host0.mem is not 0600"

# a second server in the run dir, without --users: refused before it
# changes the directory's mode (that would cut the members off)
rc=0
snic_run second 30 env -u LD_LIBRARY_PATH "$SNIC_BUILD/bin/snic-emu" --run-dir "$d" --nic snic7,port=net_ring_x \
	--link-timeout 0 || rc=$?
(( rc == 1 )) && grep -q "is shared with .* by the live server of snic[01].bar" "$SNIC_CASE_DIR/second.out" ||
	snic_fail "a second server with other --users in a shared run dir: status $rc, not refused with a message"
want 750 "$GROUP" "$d"

# the member: devices, data across the two NICs
snic_run devinfo 30 "${AS_USER[@]}" ibv_devinfo -d snic0 ||
	snic_fail "the member cannot open snic0"
grep -q "PORT_ACTIVE" "$SNIC_CASE_DIR/devinfo.out" || snic_fail "the member's ibv_devinfo shows no active port"
wrap=$SNIC_CASE_DIR/as-user
for prog in ibv_rc_pingpong ibv_ud_pingpong; do
	printf '#!/bin/sh\nexec %s %s "$@"\n' "${AS_USER[*]}" "$prog" >"$wrap-$prog"
	chmod 755 "$wrap-$prog"
	SNIC_PP_PROG=$wrap-$prog snic_pingpong 22815 -n 500 ||
		snic_fail "$prog as uid $USER_UID failed"
done

snic_run verbs-test 120 "${AS_USER[@]}" "$SNIC_BUILD/tests/snic_verbs_test" ||
	snic_fail "snic_verbs_test as uid $USER_UID failed"

# the attacker, a member too
snic_run bar-write 20 "${AS_ATK[@]}" "$M" bar-write "$d/snic0.bar" ||
	snic_fail "the attacker opened the BAR file for writing"
snic_run closed 20 "${AS_ATK[@]}" "$M" closed "$d/host0.mem" "$d/snic0.admin.sock" ||
	snic_fail "the attacker reached the host memory or the admin socket"
snic_run stats 20 "${AS_ATK[@]}" "$M" stats-zero "$d/snic0.bar" ||
	snic_fail "the BAR file's statistics area is not empty"
rc=0
snic_run nobroker 30 env SNIC_NO_BROKER=1 "${AS_ATK[@]}" ibv_devinfo -d snic0 || rc=$?
(( rc != 0 )) && grep -q "SNIC_NO_BROKER=1 needs the NIC's own user" "$SNIC_CASE_DIR/nobroker.out" ||
	snic_fail "SNIC_NO_BROKER=1 with a read-only BAR: not refused with a message"
# the server's own user neither: such a context's mailbox, event queue and
# doorbell page would be in the file the members read (the firmware
# refuses CTX_OPEN, fw.h broker_only; the host driver could be anyone's)
rc=0
snic_run own-nobroker 30 env SNIC_NO_BROKER=1 ibv_devinfo -d snic0 || rc=$?
(( rc != 0 )) && grep -q "SNIC_NO_BROKER=1 refused by the firmware" "$SNIC_CASE_DIR/own-nobroker.out" ||
	snic_fail "SNIC_NO_BROKER=1 as the NICs' own user with --users: status $rc, not refused by the firmware with a message"

# per-uid share: the attacker's processes 16 + 16, a third none; the
# member still gets its 16
go=$SNIC_CASE_DIR/ctx-go
rm -f -- "$go"
for i in 1 2 3; do
	bg_start "$SNIC_CASE_DIR/atk-ctx$i.out" opened "${AS_ATK[@]}" "$M" ctxs snic0 20 "$go"
done
bg_start "$SNIC_CASE_DIR/user-ctx.out" opened "${AS_USER[@]}" "$M" ctxs snic0 20 "$go"
# the share is of the whole broker: none more on snic1 (its segments and
# slots' server is the same process)
bg_start "$SNIC_CASE_DIR/atk-ctx4.out" opened "${AS_ATK[@]}" "$M" ctxs snic1 20 "$go"
other=$(sed -n 's/^opened \([0-9]*\):.*/\1/p' "$SNIC_CASE_DIR/atk-ctx4.out")
got=$(cat "$SNIC_CASE_DIR"/atk-ctx[123].out | sed -n 's/^opened \([0-9]*\):.*/\1/p' | sort -n | tr '\n' ' ')
user=$(sed -n 's/^opened \([0-9]*\):.*/\1/p' "$SNIC_CASE_DIR/user-ctx.out")
touch "$go"
for p in "${SNIC_BG_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
SNIC_BG_PIDS=()
snic_log "contexts: the attacker's three processes $got, on snic1 $other; the member's $user"
[[ $got == "0 16 16 " ]] || snic_fail "the attacker's processes got $got contexts (want 0 16 16: a uid's share is 32)"
grep -q "No space left" "$SNIC_CASE_DIR"/atk-ctx[123].out || snic_fail "the attacker's refusal is not ENOSPC"
[[ $user == 16 ]] || snic_fail "the member got $user contexts next to the attacker (want 16)"
[[ $other == 0 ]] || snic_fail "the attacker's fourth process got $other contexts of snic1 (want 0: a uid's 32 are of both NICs)"

# a uid outside the group
rc=0
snic_run outsider 30 "${AS_OUT[@]}" ibv_devinfo || rc=$?
grep -q "no access to the NICs" "$SNIC_CASE_DIR/outsider.out" || snic_fail "no clear error for a non-member"
! grep -q "hca_id" "$SNIC_CASE_DIR/outsider.out" || snic_fail "a non-member sees a NIC"
snic_run outsider-sock 20 "${AS_OUT[@]}" "$M" closed "$d/snic0.sock" ||
	snic_fail "a non-member connected to the broker"

# liveness a reader cannot fake: the member's REG_MR waits (snic-emu
# stopped), the attacker holds every reader's lock once snic-emu is killed
rm -f -- "$go"
bg_start "$SNIC_CASE_DIR/victim.out" open "${AS_USER[@]}" "$SNIC_BUILD/tests/snic_hostile" --stall-cmd snic0 "$go"
victim=$BG_PID
"${AS_ATK[@]}" "$M" hold "$d/snic0.bar" >"$SNIC_CASE_DIR/hold.out" 2>&1 </dev/null &
holder=$!
SNIC_BG_PIDS+=("$holder")
kill -STOP "$SNIC_EMU_PID"
kill -KILL "$SNIC_EMU_PID"
wait "$SNIC_EMU_PID" 2>/dev/null || true
SNIC_EMU_PID=
for (( i = 0; i < 100; i++ )); do
	grep -q '^holding' "$SNIC_CASE_DIR/hold.out" && break
	sleep 0.1
done
cat "$SNIC_CASE_DIR/hold.out"
grep -q '^holding' "$SNIC_CASE_DIR/hold.out" || snic_fail "the attacker could not take the reader's locks on the dead NIC's BAR"
t0=${EPOCHREALTIME/[.,]/}
touch "$go"
rc=0
wait "$victim" || rc=$?
ms=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
sed 's/^/  victim| /' "$SNIC_CASE_DIR/victim.out"
(( rc == 1 )) && grep -q "reg_mr failed" "$SNIC_CASE_DIR/victim.out" ||
	snic_fail "REG_MR on a killed NIC whose BAR the attacker locks: status $rc (want a failure)"
(( ms <= DEAD_MS )) || snic_fail "REG_MR took $ms ms to fail on the killed NIC (limit $DEAD_MS)"
snic_run dead-list 30 "${AS_USER[@]}" ibv_devinfo -l || true
! grep -qw snic0 "$SNIC_CASE_DIR/dead-list.out" || snic_fail "the killed snic0 is still listed while the attacker locks its BAR"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
rm -rf -- "$SNIC_EMU_RUN_DIR"
SNIC_EMU_RUN_DIR=

# --users all: the same bits for everybody; a uid of no group lists both.
# Started with umask 000: the device view is still 0644/0755 (snic-emu
# sets its own umask), nobody else writes its files
old_umask=$(umask)
umask 000
snic_emu_start --users all
umask "$old_umask"
d=$SNIC_RUN_DIR
view=$(find "$d/sys" \( -type f -o -type d \) -printf '%m %u %p\n')
[[ -n $view ]] || snic_fail "--users all: no device view in $d/sys"
bad=$(awk '!(($1 == 644 || $1 == 755) && $2 == "root")' <<<"$view")
[[ -z $bad ]] || snic_fail "--users all under umask 000: device view entries not 0644/0755 root's: $bad"
ibdev=$(find "$d/sys/class/infiniband_verbs" -name ibdev | head -1)
rc=0
"${AS_OUT[@]}" sh -c 'echo snicx >"$1"' sh "$ibdev" 2>/dev/null || rc=$?
(( rc != 0 )) && grep -qx 'snic[01]' "$ibdev" || snic_fail "uid $OUT_UID overwrote $ibdev"
[[ -z $(find "$d" -maxdepth 1 -perm -o+w ! -type s) ]] || snic_fail "--users all under umask 000: a file of the run dir is writable by others"

want 755 root "$d"
want 644 root "$d/snic0.bar"
want 666 root "$d/snic0.sock"
[[ $(stat -c %a "$d/snic0.admin.sock") == 600 && $(stat -c %a "$d/host0.mem") == 600 ]] ||
	snic_fail "--users all: the admin socket or the host memory is not 0600"
snic_run all-list 30 "${AS_OUT[@]}" ibv_devinfo -l || snic_fail "--users all: ibv_devinfo -l as uid $OUT_UID failed"
grep -qw snic1 "$SNIC_CASE_DIR/all-list.out" || snic_fail "--users all: uid $OUT_UID does not see snic1"
snic_emu_stop || exit 1

# an impostor: another uid's snic-emu --users all in a run dir of its own
# (made before the real server's, or named by SNIC_RUN_DIR); a user does
# not trust it unless SNIC_NIC_OWNER names its uid
imp=$(mktemp -u "$(dirname "$d")/snic-imp.XXXXXX")
bg_start "$SNIC_CASE_DIR/impostor.out" ready: env -u LD_LIBRARY_PATH \
	setpriv --reuid="$IMP_UID" --regid="$IMP_UID" --clear-groups -- \
	"$SNIC_BUILD/bin/snic-emu" --run-dir "$imp" --users all
impostor=$BG_PID
# stopped and its run dir removed whatever the case's end
eval "set -- $(trap -p EXIT)"
# shellcheck disable=SC2064 # the pid and directory now
# (set +e: the status put back must not end the trap under errexit)
trap "imp__rc=\$?; set +e; kill -KILL $impostor 2>/dev/null; wait $impostor 2>/dev/null; rm -rf -- '$imp'; (exit \$imp__rc); ${3:-}" EXIT
snic_run imp-list 30 env SNIC_RUN_DIR="$imp" "${AS_USER[@]}" ibv_devinfo -l || true
! grep -qw snic0 "$SNIC_CASE_DIR/imp-list.out" || snic_fail "uid $USER_UID lists the NICs of uid $IMP_UID's impostor"
grep -q "owned by a user we do not trust (uid $IMP_UID).*SNIC_NIC_OWNER" "$SNIC_CASE_DIR/imp-list.out" ||
	snic_fail "no clear refusal of the impostor's run dir"
snic_run imp-named 30 env SNIC_RUN_DIR="$imp" SNIC_NIC_OWNER="$IMP_UID" "${AS_USER[@]}" ibv_devinfo -d snic0 ||
	snic_fail "SNIC_NIC_OWNER=$IMP_UID: the member cannot open that uid's snic0"
grep -q PORT_ACTIVE "$SNIC_CASE_DIR/imp-named.out" || snic_fail "SNIC_NIC_OWNER=$IMP_UID: no active port"
kill "$impostor" 2>/dev/null || true
wait "$impostor" 2>/dev/null || true
rm -rf -- "$imp"
snic_log "shared with group $GROUP: the member's devinfo, pingpongs and snic_verbs_test ran; the attacker refused the BAR for writing, host memory and admin socket, held to 32 contexts; a non-member saw nothing; a killed NIC under the attacker's locks failed a REG_MR in $ms ms"
