#!/usr/bin/env bash
# Case "unit/abi-doc": the host driver's ABI contract holds for the build.
#   tools/abi-check.sh     every symbol@version the installed Debian verbs
#                          programs and libraries import resolves, with the
#                          node chain of the real libibverbs
#   tools/gen-abi-md.sh    libibverbs.map, abi/stubs.def and the objects
#     --check              agree, and host-driver/ABI.md's table is what the
#                          build says (symbols, versions, defining files,
#                          stub answers, importers)
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

snic_need_cmd objdump nm readelf dpkg
lib=$SNIC_BUILD/lib/libibverbs.so.1
[[ -f $lib ]] || snic_fail "$lib is missing (was it built? run 'make')"
rc=0
# abi-check ~16 s of CPU, 60-98 s of wall clock at load 13-16 on 2 cores
# (it timed out at 60), gen-abi-md 172 s: the limits bound a hang only
snic_run abi-check 600 "$SNIC_ROOT/tools/abi-check.sh" "$lib" || rc=$?
(( rc == 0 )) || snic_fail "tools/abi-check.sh failed (status $rc)"
snic_run gen-abi-md 600 "$SNIC_ROOT/tools/gen-abi-md.sh" --check "$SNIC_BUILD" || rc=$?
(( rc == 0 )) || snic_fail "host-driver/ABI.md is out of date or the ABI sources disagree (status $rc): run tools/gen-abi-md.sh"
snic_log "ABI import set resolves and host-driver/ABI.md matches the build"
