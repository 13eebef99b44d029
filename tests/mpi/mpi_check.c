/* SPDX-License-Identifier: MIT */
/*
 * mpi_check: two ranks exchange point-to-point messages of 1 B to 4 MiB
 * (powers of two and their odd neighbours) and check every byte, then run
 * MPI_Allreduce on integer and double vectors and check the sums.  Built
 * with Open MPI's and MPICH's compiler wrappers; runs over UCX on snic.
 *
 *   mpi_check [-i ITERS] [-m MAX_BYTES]
 *
 * Prints "mpi_check: N messages, B bytes checked, allreduce ok" on rank 0
 * and exits 0, or names the first wrong byte and exits 1 (MPI_Abort).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nranks;

static void die(const char *what, size_t size, size_t at, unsigned got,
		unsigned want)
{
	fprintf(stderr, "mpi_check: rank %d: %s: size %zu byte %zu is 0x%02x,"
		" want 0x%02x\n", rank, what, size, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Byte i of a message of `size` bytes in round `round` from rank `from`:
 * differs between sizes, rounds, directions and positions. */
static uint8_t pat(size_t i, size_t size, unsigned round, int from)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)size * 40503u ^
		     round * 97u ^ (uint32_t)from * 0x5bd1e995u;

	return (uint8_t)(x ^ x >> 13 ^ x >> 24);
}

static void fill(uint8_t *b, size_t size, unsigned round, int from)
{
	for (size_t i = 0; i < size; i++)
		b[i] = pat(i, size, round, from);
}

static void check(const uint8_t *b, size_t size, unsigned round, int from,
		  const char *what)
{
	for (size_t i = 0; i < size; i++)
		if (b[i] != pat(i, size, round, from))
			die(what, size, i, b[i], pat(i, size, round, from));
}

/* One size: rank 0 sends, rank 1 checks and answers with its own pattern,
 * rank 0 checks.  Guard bytes past the message must stay untouched. */
static void pingpong(uint8_t *sb, uint8_t *rb, size_t size, unsigned round)
{
	int peer = 1 - rank;
	const uint8_t guard = 0xa5;

	memset(rb, guard, size + 64);
	if (rank == 0) {
		fill(sb, size, round, 0);
		MPI_Send(sb, (int)size, MPI_BYTE, peer, (int)round, MPI_COMM_WORLD);
		MPI_Recv(rb, (int)size, MPI_BYTE, peer, (int)round, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		check(rb, size, round, 1, "reply");
	} else {
		MPI_Recv(rb, (int)size, MPI_BYTE, peer, (int)round, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		check(rb, size, round, 0, "request");
		fill(sb, size, round, 1);
		MPI_Send(sb, (int)size, MPI_BYTE, peer, (int)round, MPI_COMM_WORLD);
	}
	for (size_t i = size; i < size + 64; i++)
		if (rb[i] != guard)
			die("guard", size, i, rb[i], guard);
}

static void allreduce(void)
{
	enum { N = 100000 };
	int64_t *iv = malloc(N * sizeof(*iv)), *io = malloc(N * sizeof(*io));
	double *dv = malloc(N * sizeof(*dv)), *dout = malloc(N * sizeof(*dout));

	if (!iv || !io || !dv || !dout)
		die("malloc", 0, 0, 0, 0);
	for (int i = 0; i < N; i++) {
		iv[i] = (int64_t)i * (rank + 1) - 7 * rank;
		dv[i] = 0.5 * i + rank;
	}
	MPI_Allreduce(iv, io, N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(dv, dout, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++) {
		int64_t want = 0;
		double dwant = 0;

		for (int r = 0; r < nranks; r++) {
			want += (int64_t)i * (r + 1) - 7 * r;
			dwant += 0.5 * i + r;
		}
		if (io[i] != want || dout[i] != dwant) {
			fprintf(stderr, "mpi_check: rank %d: allreduce element "
				"%d is %lld/%g, want %lld/%g\n", rank, i,
				(long long)io[i], dout[i], (long long)want,
				dwant);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	free(iv);
	free(io);
	free(dv);
	free(dout);
}

int main(int argc, char **argv)
{
	size_t max = 4u << 20, bytes = 0;
	unsigned iters = 3, msgs = 0;
	uint8_t *sb, *rb;
	int opt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "i:m:")) != -1) {
		if (opt == 'i')
			iters = (unsigned)strtoul(optarg, NULL, 0);
		else if (opt == 'm')
			max = strtoul(optarg, NULL, 0);
	}
	if (nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs exactly 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	sb = malloc(max + 64);
	rb = malloc(max + 64);
	if (!sb || !rb)
		die("malloc", max, 0, 0, 0);
	for (unsigned round = 0; round < iters; round++) {
		for (size_t size = 1; size <= max; size *= 2) {
			size_t odd[3] = { size - 1, size, size + 1 };

			for (int k = 0; k < 3; k++) {
				if (odd[k] == 0 || odd[k] > max)
					continue;
				pingpong(sb, rb, odd[k], round * 3 + (unsigned)k);
				msgs += 2;
				bytes += 2 * odd[k];
			}
		}
	}
	allreduce();
	if (rank == 0)
		printf("mpi_check: %u messages, %zu bytes checked, allreduce ok\n",
		       msgs, bytes);
	free(sb);
	free(rb);
	MPI_Finalize();
	return 0;
}
