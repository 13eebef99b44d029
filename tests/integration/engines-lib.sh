# shellcheck shell=bash
# Shared by tests/integration/engines.sh and multi.sh (case mpi-memif):
# UCX restricted to the verbs transports, one NIC per rank, Open MPI runs
# of tests/mpi/mpi_check, and the counter check that the payload crossed
# the NICs.  Source it after lib.sh.

export UCX_TLS=rc_verbs,ud_verbs,self
MPI_DIR=$SNIC_BUILD/tests/mpi
SNICCTL=$SNIC_BUILD/bin/snicctl

# A counter of one NIC (snicctl reads the BAR's statistics area).
nic_counter() { # NIC NAME
	"$SNICCTL" show -a "$1" | awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}

# The NICs must have carried at least BYTES of payload each way.
check_crossed() { # BYTES NIC...
	local want=$1 nic tx rx
	shift
	for nic in "$@"; do
		tx=$(nic_counter "$nic" tx_bytes)
		rx=$(nic_counter "$nic" rx_bytes)
		snic_log "$nic: tx_bytes $tx rx_bytes $rx (payload each way >= $want)"
		(( tx >= want && rx >= want )) ||
			snic_fail "$nic moved tx $tx / rx $rx bytes, less than the $want bytes of payload: the data did not cross the NICs"
	done
}

# Per-rank NIC: rank r uses snic<r>.
rank_wrapper() {
	local w=$SNIC_CASE_DIR/rank-nic.sh
	cat >"$w" <<'EOF'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
export UCX_NET_DEVICES=snic$r:1
exec "$@"
EOF
	chmod +x "$w"
	echo "$w"
}

MPI_ARGS=(-i 3)

# mpi_check's own count of the bytes it checked (both ways): half went
# each way through each NIC.
mpi_payload_each_way() { # OUTPUT_FILE
	awk '/^mpi_check: .* bytes checked, allreduce ok/ { print int($4 / 2); f = 1 }
	     END { exit !f }' "$1" || snic_fail "mpi_check did not report success"
}

run_ompi() { # NIC...
	local w
	w=$(rank_wrapper)
	snic_need_cmd mpirun.openmpi
	snic_need_exec "$MPI_DIR/mpi_check_ompi"
	snic_run ompi 120 mpirun.openmpi --allow-run-as-root --oversubscribe \
		-np 2 --mca pml ucx --mca btl self --mca osc ucx \
		-x LD_LIBRARY_PATH -x SNIC_RUN_DIR -x UCX_TLS \
		"$w" "$MPI_DIR/mpi_check_ompi" "${MPI_ARGS[@]}" ||
		snic_fail "Open MPI job failed"
}

