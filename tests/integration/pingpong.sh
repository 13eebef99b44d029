#!/usr/bin/env bash
# Cases "pingpong/*": Debian's unmodified ibv_rc_pingpong between snic0
# (client) and snic1 (server), GID index 0 (RoCE v2 over IPv4; SNIC_PP_GID=1:
# the IPv6 GID, RoCE v2 over IPv6).  SNIC_PP_PROG runs
# ibv_ud_pingpong, ibv_uc_pingpong or ibv_srq_pingpong instead;
# SNIC_PP_SERVER_DEV / SNIC_PP_CLIENT_DEV pick other NICs (both snic0:
# loopback through the NIC's own GID).  The QP numbers are
# exchanged over TCP on 127.0.0.1, in a private network namespace when the
# machine allows it.
#   tests/integration/pingpong.sh PORT_BASE [ibv_rc_pingpong options...]
# PORT_BASE: first TCP port to try (the first free one from there is used).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || snic_fail "usage: $0 PORT_BASE [ibv_rc_pingpong options]"
snic_private_netns "$0" "$@"
base=$1
shift

snic_emu_start
snic_pingpong "$base" "$@" || snic_fail "${SNIC_PP_PROG:-ibv_rc_pingpong} $* failed"
snic_emu_stop || exit 1
snic_log "${SNIC_PP_PROG:-ibv_rc_pingpong} $*: server and client exited 0"
