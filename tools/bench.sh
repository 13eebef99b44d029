#!/usr/bin/env bash
# make bench: figures, not verdicts.  Measures this machine's own limit
# (single-core memcpy bandwidth) and, in the same run, what Debian's
# unmodified perftest moves through two emu NICs (snic-emu, ring pair),
# then prints each figure with its ratio to that limit.  Nothing here
# passes or fails on time; the script fails only if a program fails.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
snic_private_netns "$0" "$@"
only=${1:-all}   # "engines": only the UCX and MPI part (README)
[[ $only == all || $only == engines ]] || { echo "usage: $0 [engines]" >&2; exit 2; }

ITERS=${SNIC_BENCH_ITERS:-}   # latency runs: 5000 unless set
echo "snic bench: $(nproc) cores, $(uname -m); perftest -n ${ITERS:-"512 MiB / size, at most 200,000 (bandwidth), 5000 (latency)"}; server snic1, client snic0"
if [[ $only == all ]]; then
	echo
	echo "== machine limits (one core)"
	mapfile -t mem < <("$SNIC_BUILD/bin/snic-membench")
	declare -A mc
	for l in "${mem[@]}"; do
		read -r _ size gbps <<<"$l"
		mc[$size]=$gbps
		printf '  memcpy %8s B    %8s GB/s\n' "$size" "$gbps"
	done
fi

snic_emu_start >/dev/null
port=$(snic_free_port 23515)

# run_pt PROGRAM ARGS...: print the client's result row.
run_pt() {
	local prog=$1 out=$SNIC_CASE_DIR/bench-client.out
	shift
	timeout -k 5 120 "$prog" -d snic1 -F -x 0 -p "$port" "$@" >/dev/null 2>&1 </dev/null &
	local spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	timeout -k 5 120 "$prog" -d snic0 -F -x 0 -p "$port" "$@" 127.0.0.1 >"$out" 2>&1 </dev/null
	wait "$spid"
	awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print; exit }' "$out"
}

if [[ $only == all ]]; then
	echo
	echo "== bandwidth (BW average; ratio = payload rate / single-core memcpy rate)"
	for t in "ib_write_bw -s 65536" "ib_read_bw -s 65536" "ib_send_bw -s 65536" "ib_write_bw -s 4096"; do
		read -r prog _ size <<<"$t"
		row=$(run_pt "$prog" -s "$size" -n "$(snic_bw_iters "$size")")
		mbs=$(awk '{ print $4 }' <<<"$row")        # MB/s (perftest: 2^20)
		gbs=$(awk -v m="$mbs" 'BEGIN { printf "%.2f", m * 1048576 / 1e9 }')
		lim=${mc[$size]:-${mc[65536]}}
		printf '  %-12s %7s B  %8s GB/s   %7s of memcpy at that size\n' \
			"$prog" "$size" "$gbs" "$(snic_pct "$gbs" "$lim")"
	done

	echo
	echo "== latency (typical, one way as perftest reports it)"
	for t in "ib_write_lat -s 64" "ib_send_lat -s 64" "ib_read_lat -s 64" "ib_atomic_lat"; do
		read -r prog _ size <<<"$t"
		if [[ -n ${size:-} ]]; then
			row=$(run_pt "$prog" -s "$size" -n "${ITERS:-5000}")
		else
			row=$(run_pt "$prog" -n "${ITERS:-5000}")
		fi
		printf '  %-12s %7s B  %8s us typical (min %s us)\n' "$prog" "${size:-8}" \
			"$(awk '{ print $5 }' <<<"$row")" "$(awk '{ print $3 }' <<<"$row")"
	done
fi

# ---------------------------------------------------------------- engines
# UCX and MPI over the verbs transports only, one NIC per side or rank,
# the engines and snic-emu in one CPU cgroup, as a batch system's job
# cgroup would hold them (lib.sh snic_cpu_group says why).
export UCX_TLS=rc_verbs,ud_verbs,self
# Where they run (README "Latency and bandwidth against ucx_perftest"):
# for latency, snic-emu's threads on the last CPU we may use and the
# engines on the others - Open MPI, which binds its ranks a core each
# whatever cpuset it starts in (rank 1 on snic-emu's core), told not to;
# for bandwidth, wherever the scheduler puts them (pinned, a loaded
# machine's other users shrink the job to one core's share).
# SNIC_BENCH_PIN=0: latency unpinned too.
cpus_all=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' /proc/self/status)
cpus=$(awk -v l="$cpus_all" 'BEGIN { n = split(l, r, ",")
	for (i = 1; i <= n; i++) { m = split(r[i], a, "-"); for (c = a[1]; c <= a[m]; c++) { printf "%s%d", s, c; s = "," } } }')
emu_cpu=${cpus##*,} job_cpus=${cpus%,*}
job=() ompi_bind=()
if [[ ${SNIC_BENCH_PIN:-1} != 0 && $cpus == *,* ]]; then
	job=(taskset -c "$job_cpus") ompi_bind=(--bind-to none)
fi
at=() bind=()
place() { # lat|bw: place snic-emu and the next runs
	(( ${#job[@]} )) || return 0
	if [[ $1 == lat ]]; then
		taskset -a -p -c "$emu_cpu" "$SNIC_EMU_PID" >/dev/null
		at=("${job[@]}") bind=("${ompi_bind[@]}")
	else
		taskset -a -p -c "$cpus_all" "$SNIC_EMU_PID" >/dev/null
		at=() bind=()
	fi
}
ucx_pt() { # TEST SIZE ITERS -> the Final line's fields
	local out=$SNIC_CASE_DIR/bench-ucx.out
	UCX_NET_DEVICES=snic1:1 "${at[@]}" timeout -k 5 120 ucx_perftest -p "$port" \
		>/dev/null 2>&1 </dev/null &
	local spid=$!
	snic_wait_listen "$port" 30 "$spid" >/dev/null || { kill "$spid" 2>/dev/null; return 1; }
	UCX_NET_DEVICES=snic0:1 "${at[@]}" timeout -k 5 120 ucx_perftest 127.0.0.1 -p "$port" \
		-t "$1" -s "$2" -n "$3" >"$out" 2>&1 </dev/null
	wait "$spid"
	awk '/^Final:/ { print; exit }' "$out"
}
rank_nic=$SNIC_CASE_DIR/rank-nic.sh
printf '#!/bin/sh\nr=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\nexport UCX_NET_DEVICES=snic$r:1\nexec "$@"\n' >"$rank_nic"
chmod +x "$rank_nic"
mpi_run() { # ompi|mpich -L|-B -> mpi_bench lines (latency or bandwidth)
	if [[ $1 == ompi ]]; then
		"${at[@]}" timeout -k 5 300 mpirun.openmpi --allow-run-as-root -np 2 --mca pml ucx \
			--mca btl self "${bind[@]}" -x LD_LIBRARY_PATH -x SNIC_RUN_DIR -x UCX_TLS \
			"$rank_nic" "$SNIC_BUILD/tests/mpi/mpi_bench_ompi" "$2" 2>/dev/null
	else
		"${at[@]}" timeout -k 5 300 mpiexec.hydra -n 2 -genv UCX_TLS "$UCX_TLS" \
			"$rank_nic" "$SNIC_BUILD/tests/mpi/mpi_bench_mpich" "$2" 2>/dev/null
	fi | awk '$1 == "mpi_bench"'
}
# median_by COL...: lines keyed by their first field; for each key, in
# order of first appearance, the key and the median of each COL.
median_by() {
	awk -v cols="$*" '
		BEGIN { nc = split(cols, c, " ") }
		!($1 in n) { key[++nk] = $1 }
		{ i = ++n[$1]; for (j = 1; j <= nc; j++) v[$1, j, i] = $(c[j]) + 0 }
		END {
			for (k = 1; k <= nk; k++) {
				K = key[k]; line = K; m = n[K]
				for (j = 1; j <= nc; j++) {
					for (i = 1; i <= m; i++) a[i] = v[K, j, i]
					for (i = 2; i <= m; i++)   # insertion sort
						for (x = i; x > 1 && a[x - 1] > a[x]; x--) {
							t = a[x]; a[x] = a[x - 1]; a[x - 1] = t
						}
					line = line " " (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2)
				}
				print line
			}
		}'
}
if command -v ucx_perftest >/dev/null && [[ -x $SNIC_BUILD/tests/mpi/mpi_bench_ompi ]]; then
	echo
	echo "== UCX (ucx_perftest) and MPI (tests/mpi/mpi_bench, OSU-style) over snic"
	if [[ ${SNIC_BENCH_CPU_GROUP:-1} == 0 ]]; then
		echo "   (SNIC_BENCH_CPU_GROUP=0: snic-emu and MPICH's ranks in separate scheduling groups)"
	elif snic_cpu_group $$ "$SNIC_EMU_PID"; then
		echo "   (snic-emu and the engines in one CPU cgroup: $SNIC_CPU_GROUP)"
	else
		echo "   (no writable cpu cgroup: snic-emu and MPICH's ranks in separate scheduling groups)"
	fi
	if (( ${#job[@]} )); then
		echo "   (latency: snic-emu on CPU $emu_cpu, the engines on CPU $job_cpus, Open MPI --bind-to none; bandwidth: not pinned)"
	else
		echo "   (not pinned: snic-emu and the engines wherever the scheduler puts them)"
	fi
	# tag_lat: typical (50th percentile) and average; mpi_bench: mean
	# (as OSU) and median, each compared with its like.  Every figure is
	# the median of RUNS rounds, the rounds interleaved so that a burst
	# of other users' load falls on all of them alike.
	runs=${SNIC_BENCH_ENGINE_RUNS:-3}
	rm -f "$SNIC_CASE_DIR"/bench-{ucx-rounds,ompi,mpich}.out "$SNIC_CASE_DIR"/bench-{ompi,mpich}-{lat,bw}.out
	for (( r = 0; r < runs; r++ )); do
		# a round that fails only lacks its line (its log: bench-ucx-*.out)
		place lat
		{ ucx_pt tag_lat 8 20000 || cp "$SNIC_CASE_DIR/bench-ucx.out" "$SNIC_CASE_DIR/bench-ucx-failed-$r.out"; } |
			awk '{ print "tag_lat", $3, $4 }' >>"$SNIC_CASE_DIR/bench-ucx-rounds.out"
		for mpi in ompi mpich; do
			mpi_run "$mpi" -L >>"$SNIC_CASE_DIR/bench-$mpi-lat.out" || true
		done
		place bw
		{ ucx_pt ucp_put_bw 1048576 2000 || cp "$SNIC_CASE_DIR/bench-ucx.out" "$SNIC_CASE_DIR/bench-ucx-failed-$r.out"; } |
			awk '{ print "put_bw", $6 }' >>"$SNIC_CASE_DIR/bench-ucx-rounds.out"
		for mpi in ompi mpich; do
			mpi_run "$mpi" -B >>"$SNIC_CASE_DIR/bench-$mpi-bw.out" || true
		done
	done
	read -r tag_lat tag_avg < <(median_by 2 3 <"$SNIC_CASE_DIR/bench-ucx-rounds.out" | awk '$1 == "tag_lat" { print $2, $3 }')  || true
	put_bw=$(median_by 2 <"$SNIC_CASE_DIR/bench-ucx-rounds.out" | awk '$1 == "put_bw" { print $2 }')
	echo "  (medians of $runs rounds)"
	printf '  ucx_perftest tag_lat        8 B  %8s us (50th percentile), %s us average\n' "$tag_lat" "$tag_avg"
	printf '  ucx_perftest ucp_put_bw  1 MiB  %8s MB/s\n' "$put_bw"
	for mpi in ompi mpich; do
		echo "  $mpi: size, latency us (mean, median), bandwidth MB/s"
		# medians per size: latency (mean, median) and bandwidth, joined
		# into "mpi_bench SIZE LAT_US BW_MBPS MEDIAN_US" lines
		touch "$SNIC_CASE_DIR/bench-$mpi-lat.out" "$SNIC_CASE_DIR/bench-$mpi-bw.out"
		awk '{ $1 = $1 "-" $2; print }' "$SNIC_CASE_DIR/bench-$mpi-bw.out" | median_by 4 >"$SNIC_CASE_DIR/bench-$mpi-bw.median"
		awk '{ $1 = $1 "-" $2; print }' "$SNIC_CASE_DIR/bench-$mpi-lat.out" | median_by 3 5 |
			awk 'NR == FNR { bw[$1] = $2; next } { print $1, $2, ($1 in bw ? bw[$1] : 0), $3 }' \
				"$SNIC_CASE_DIR/bench-$mpi-bw.median" - |
			awk '{ sub(/^mpi_bench-/, "mpi_bench "); print }' | sort -k2,2n >"$SNIC_CASE_DIR/bench-$mpi.out"
		awk '{ printf "    %9d B  %9s us %9s us  %9s MB/s\n", $2, $3, $5, $4 }' "$SNIC_CASE_DIR/bench-$mpi.out"
		awk -v t="$tag_lat" -v ta="$tag_avg" -v b="$put_bw" -v m="$mpi" '
			$2 == 8 { lat = $3; med = $5 } $2 == 1048576 { bw = $4 }
			END { if (t > 0 && ta > 0 && b > 0)
				printf "    %s: 8 B latency median %.2fx tag_lat typical, mean %.2fx its average; 1 MiB bandwidth %.0f %% of ucp_put_bw\n",
				       m, med / t, lat / ta, 100 * bw / b }' "$SNIC_CASE_DIR/bench-$mpi.out"
	done
	snic_cpu_group_leave $$ "$SNIC_EMU_PID"
fi
if [[ $only == engines ]]; then
	snic_emu_stop >/dev/null
	exit 0
fi

echo
echo "== connection setup (rdma_cm over the firmware's QP1: Debian's cmtime, 100 connections)"
out=$SNIC_CASE_DIR/bench-cmtime.out
timeout -k 5 120 cmtime -p "$port" >/dev/null 2>&1 </dev/null &
cpid=$!
for (( i = 0; i < 300; i++ )); do # the listener, as snicctl shows it
	"$SNIC_BUILD/bin/snicctl" show snic1 | grep -q "listen sid .* port $port " && break
	sleep 0.1
done
timeout -k 5 120 cmtime -s 198.18.0.2 -p "$port" -c 100 >"$out" 2>&1 </dev/null
kill "$cpid" 2>/dev/null || true   # rdma-core 44's cmtime server never exits
wait "$cpid" 2>/dev/null || true
for step in "resolve addr" connect disconnect; do
	awk -v s="$step" -F'[:]' '$1 ~ "^" s " *$" { split($2, f, " ");
		printf "  %-13s %8.1f us/conn   %7.0f /s\n", s, f[4], (f[4] > 0 ? 1e6 / f[4] : 0) }' "$out"
done
snic_emu_stop >/dev/null


# snic against Linux's soft-RoCE (tests/interop/): the software RoCE a
# user of this machine would otherwise run, beside the snic<->snic figures
# above, and rxe<->rxe between two VMs (BENCH_RXE_N iterations: two TCG
# guests on this machine's cores are slow).
if bash "$SNIC_ROOT/tools/build-rxe-vm.sh" --print-dir >/dev/null 2>&1 &&
	command -v qemu-system-x86_64 >/dev/null; then
	echo
	echo "== snic <-> Linux rxe in a VM (perftest -n 1000), and rxe <-> rxe between two"
	echo "   VMs (-n 200); the VMs run under QEMU TCG here, no KVM: rxe's side is many"
	echo "   times slower than on real hardware, so these figures measure the VM-bound"
	echo "   peer, not snic; rxe-rxe is what two such software-RoCE hosts reach here)"
	SNIC_CASE_DIR=$SNIC_CASE_DIR/interop bash "$SNIC_ROOT/tests/interop/interop.sh" run bench \
		>"$SNIC_CASE_DIR/bench-interop.out" 2>&1 || echo "  (some runs failed: $SNIC_CASE_DIR/bench-interop.out)"
	awk '$1 == "BENCH" && $2 ~ /_bw$/ { printf "  %-12s %-11s %7s B  %9.2f MB/s\n", $2, $3, $4, $7 * 1.048576 }
	     $1 == "BENCH" && $2 ~ /_lat$/ { printf "  %-12s %-11s %7s B  %8s us typical (min %s us)\n", $2, $3, $4, $8, $6 }' \
		"$SNIC_CASE_DIR/bench-interop.out"
else
	echo
	echo "== snic <-> Linux rxe: skipped (no VM: tests/interop/interop.sh prepare)"
fi
echo
echo "(figures from a shared 2-core VM are noisy; compare ratios, not absolutes)"

# The full sweep (8 B .. 1 MiB, registration, QP scaling, the port's raw
# rate, plots under build/bench/) and where a ping-pong's time goes.
echo
"$SNIC_ROOT/tools/bench-sweep.sh"
echo
"$SNIC_ROOT/tools/bench-latency.sh"
