/* SPDX-License-Identifier: MIT */
/*
 * mpi_bench: two-rank MPI latency (half round trip of a blocking
 * ping-pong) and bandwidth (a window of non-blocking sends, one ack) from
 * 8 B to 4 MiB, in the way the OSU micro-benchmarks measure them.  For
 * `make bench`: it prints figures, it asserts nothing.
 *
 *   mpi_bench [-m MAX_BYTES] [-w WINDOW]
 *
 * Output, one line per size on rank 0:
 *   mpi_bench SIZE LAT_US BW_MBPS MEDIAN_US
 * LAT_US is the mean (as OSU reports it), MEDIAN_US the median of the
 * iterations' half round trips (as ucx_perftest's "typical" latency).
 *
 * Before the first size, WARMUP 8-byte round trips (default 10,000, as
 * ucx_perftest's -w, which `make bench` compares with): the first pass
 * through UCX's receive queue (rc_verbs: 4095 buffers of 8 KiB) is
 * slower than the ones after it, each buffer's page touched for the
 * first time by the NIC (README "Latency and bandwidth against
 * ucx_perftest"); ucx_perftest's warm-up pays that pass, so must ours.
 *
 *   mpi_bench [-m MAX_BYTES] [-w WINDOW] [-W WARMUP] [-L | -B]
 *
 * -L measures only latency, -B only bandwidth (the other figure printed
 * as 0): `make bench` runs them with the ranks placed differently.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_WINDOW = 64, MAX_ITERS = 10000 };

static int rank;
static double rtt[MAX_ITERS];   /* rank 0: each iteration's round trip, s */

static unsigned iters_for(size_t size)
{
	return size <= 8192 ? MAX_ITERS : size <= (256u << 10) ? 100 : 20;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Half the median round trip of the last latency_us() call, in us. */
static double median_us(unsigned n)
{
	qsort(rtt, n, sizeof(rtt[0]), cmp_double);
	return (n % 2 ? rtt[n / 2] : (rtt[n / 2 - 1] + rtt[n / 2]) / 2) * 1e6 / 2;
}

static double latency_us(char *buf, size_t size)
{
	unsigned n = iters_for(size), warm = n / 10 + 1;
	int peer = 1 - rank;
	double t0 = 0, ti = 0;

	for (unsigned i = 0; i < n + warm; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (i >= warm) {
			double now = MPI_Wtime();

			if (i > warm)
				rtt[i - warm - 1] = now - ti;
			ti = now;
		}
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
	}
	double end = MPI_Wtime();

	rtt[n - 1] = end - ti;
	return (end - t0) * 1e6 / (2.0 * n);
}

/* Round trips not measured: the warm-up before the first size. */
static void warm_up(char *buf, unsigned n)
{
	int peer = 1 - rank;

	for (unsigned i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
		}
	}
}

static double bandwidth_mbps(char *buf, size_t size, int window)
{
	unsigned n = iters_for(size) / 4 + 2, warm = 2;
	MPI_Request req[MAX_WINDOW];
	MPI_Status st[MAX_WINDOW];
	int peer = 1 - rank;
	char ack = 0;
	double t0 = 0;

	for (unsigned i = 0; i < n + warm; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		for (int w = 0; w < window; w++) {
			if (rank == 0)
				MPI_Isend(buf, (int)size, MPI_BYTE, peer, 2,
					  MPI_COMM_WORLD, &req[w]);
			else
				MPI_Irecv(buf, (int)size, MPI_BYTE, peer, 2,
					  MPI_COMM_WORLD, &req[w]);
		}
		MPI_Waitall(window, req, st);
		if (rank == 0)
			MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
	}
	return (double)size * window * n / (MPI_Wtime() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	size_t max = 4u << 20;
	int window = 16, nranks, opt;
	unsigned warmup = 10000;
	int do_lat = 1, do_bw = 1;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "m:w:W:LB")) != -1) {
		if (opt == 'm')
			max = strtoul(optarg, NULL, 0);
		else if (opt == 'w')
			window = atoi(optarg);
		else if (opt == 'W')
			warmup = (unsigned)strtoul(optarg, NULL, 0);
		else if (opt == 'L')
			do_bw = 0;
		else if (opt == 'B')
			do_lat = 0;
	}
	if (window < 1 || window > MAX_WINDOW)
		window = 16;
	if (nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_bench: needs exactly 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	buf = malloc(max < 8 ? 8 : max);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 1, max < 8 ? 8 : max);
	if (do_lat)
		warm_up(buf, warmup);
	static const size_t sizes[] = { 8, 64, 512, 4096, 32768, 262144,
					1u << 20, 4u << 20 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k];

		if (size > max)
			break;
		double lat = do_lat ? latency_us(buf, size) : 0;
		double med = do_lat ? median_us(iters_for(size)) : 0;
		double bw = do_bw ? bandwidth_mbps(buf, size, window) : 0;

		if (rank == 0)
			printf("mpi_bench %zu %.2f %.1f %.2f\n", size, lat, bw, med);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
