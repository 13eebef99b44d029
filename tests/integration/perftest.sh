#!/usr/bin/env bash
# Cases "perftest/*": Debian's unmodified perftest programs (ib_write_bw,
# ib_read_lat, ...) with the server on snic1 and the client on snic0, GID
# index 0 (RoCE v2).  perftest exchanges its QP data over TCP on 127.0.0.1,
# in a private network namespace when the machine allows it.  Both sides must
# exit 0 and the client must print its result table (the "#bytes" header and
# at least one row of numbers under it; perftest-table.awk).
#   tests/integration/perftest.sh PORT_BASE PROGRAM [perftest options...]
#   e.g. tests/integration/perftest.sh 19515 ib_send_bw -c UD -n 200
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 2 && $1 =~ ^[0-9]+$ ]] || snic_fail "usage: $0 PORT_BASE PROGRAM [options]"
snic_private_netns "$0" "$@"
base=$1 prog=$2
shift 2
snic_need_cmd "$prog"

snic_emu_start
port=$(snic_free_port "$base")
secs=$(snic_secs "${SNIC_PERFTEST_TIMEOUT:-60}")
sout=$SNIC_CASE_DIR/$prog-server.out cout=$SNIC_CASE_DIR/$prog-client.out
# -F: no warning about the CPU frequency governor (a VM has none).
# Server on snic1, client on snic0 (lib.sh).
snic_server_client "$prog" snic1 snic0 "$port" "$secs" "$sout" "$cout" \
	-F -x 0 -p "$port" "$@"
src=$SNIC_SERVER_RC crc=$SNIC_CLIENT_RC
snic_emu_stop || exit 1
(( src == 0 )) || snic_fail "$prog server: exit status $src"
(( crc == 0 )) || snic_fail "$prog client: exit status $crc"
# The result table (perftest-table.awk says what it must hold).
awk -f "$SNIC_ROOT/tests/integration/perftest-table.awk" "$cout" ||
	snic_fail "$prog client printed no result table"
snic_log "$prog $*: server and client exited 0, result table printed"
