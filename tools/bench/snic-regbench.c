/* SPDX-License-Identifier: MIT */
/*
 * Registration speed for `make bench`, 4 KiB .. 256 MiB:
 *   first  ibv_reg_mr + ibv_dereg_mr of a fresh anonymous buffer, touched
 *          once before as an application's buffer would be (the host
 *          driver copies the buffer into window pages): the median of
 *          5 buffers (3 from 64 MiB, 1 at 256 MiB);
 *   fresh  the same on a buffer never touched (mapped, not written: a
 *          communication library's new pool; the driver copies only
 *          the pages that hold data and writes zeros for the others);
 *   reg    further pairs on the same buffer (the driver keeps the range
 *          backed after deregistration: what an application that
 *          registers the same buffer again and again pays);
 *   rereg  a second MR over a range that is registered (MPI/UCX
 *          registration caches), then its deregistration.
 *   woken  (4 KiB only) a reg+dereg pair on a registered-before buffer
 *          after 20 ms of quiet, the median of 15: the NIC's idle
 *          back-off has put it to sleep, the REG_MR command wakes it
 *          (the other kinds run back to back, the NIC awake).
 * reg and rereg are timed over enough rounds to last ~0.2 s (at least 3).
 * Set SNIC_REG_CACHE=0 to have the driver copy back at every
 * deregistration (then reg is what first is); SNIC_REGBENCH_CLOCK=cpu to
 * time with the process's CPU time instead of the wall clock;
 * SNIC_REGBENCH_MAX=BYTES to stop after that size (4096: the 4 KiB kinds
 * alone, woken included).
 *
 *   snic-regbench [DEVICE]   prints "KIND SIZE US_PER_PAIR GBPS" lines
 *                            ("KIND SIZE fail ERRNO" when a size cannot
 *                            register)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>

/* SNIC_REGBENCH_CLOCK=cpu: the process's CPU time (less sensitive to
 * other users' load than the wall clock; it leaves out time spent
 * waiting for the NIC asleep, counts the time spun waiting awake). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const int ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ;

/* Time reg+dereg pairs over buf (the caller may hold another MR over it:
 * re-registration).  Returns microseconds per pair, or -errno. */
static double pairs(struct ibv_pd *pd, void *buf, size_t size)
{
	double t0 = now_s(), t;
	unsigned rounds = 0;

	do {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, size, ACCESS);

		if (!mr)
			return -(double)(errno ? errno : ENOMEM);
		if (ibv_dereg_mr(mr))
			return -(double)EIO;
		rounds++;
		t = now_s() - t0;
	} while (t < 0.2 || rounds < 3);
	return t / rounds * 1e6;
}

/* One reg+dereg pair in microseconds, or -errno. */
static double one_pair(struct ibv_pd *pd, void *buf, size_t size)
{
	double t0 = now_s();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, size, ACCESS);

	if (!mr)
		return -(double)(errno ? errno : ENOMEM);
	if (ibv_dereg_mr(mr))
		return -(double)EIO;
	return (now_s() - t0) * 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (n <= 16), or the first failure. */
static double median(double *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] < 0)
			return v[i];
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

/* A new buffer, written all over unless `untouched`. */
static void *fresh(size_t size, int untouched)
{
	void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	if (!untouched)
		memset(buf, 0x5a, size);
	return buf;
}

/* One pair on each of n new buffers (never registered before): the
 * median.  Each is unmapped after, as an application frees a buffer. */
static double first(struct ibv_pd *pd, size_t size, unsigned n,
		    int untouched)
{
	double v[16];

	for (unsigned i = 0; i < n; i++) {
		void *buf = fresh(size, untouched);

		v[i] = one_pair(pd, buf, size);
		munmap(buf, size);
	}
	return median(v, n);
}

/* Pairs after 20 ms of quiet (the NIC asleep): the median of 15. */
static double woken(struct ibv_pd *pd, void *buf, size_t size)
{
	const struct timespec quiet = { 0, 20 * 1000 * 1000 };
	double v[15];

	for (unsigned i = 0; i < 15; i++) {
		nanosleep(&quiet, NULL);
		v[i] = one_pair(pd, buf, size);
	}
	return median(v, 15);
}

static void line(const char *what, size_t size, double us)
{
	if (us < 0)
		printf("%s %zu fail %d\n", what, size, (int)-us);
	else
		printf("%s %zu %.1f %.3f\n", what, size, us,
		       (double)size / (us * 1e-6) / 1e9);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : "snic0";
	const char *clk = getenv("SNIC_REGBENCH_CLOCK");
	const char *max_env = getenv("SNIC_REGBENCH_MAX");
	size_t max = 256u << 20;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;

	if (max_env)
		max = strtoull(max_env, NULL, 0);
	if (clk && strcmp(clk, "cpu") == 0)
		bench_clock = CLOCK_PROCESS_CPUTIME_ID;
	for (int i = 0; list && list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), want) == 0)
			ctx = ibv_open_device(list[i]);
	if (!ctx || !(pd = ibv_alloc_pd(ctx))) {
		fprintf(stderr, "snic-regbench: cannot open %s\n", want);
		return 1;
	}
	for (size_t size = 4096; size <= max; size *= 4) {
		void *buf;
		struct ibv_mr *keep;

		unsigned n = size < (64u << 20) ? 5 : size < (256u << 20) ? 3 : 1;

		line("first", size, first(pd, size, n, 0));
		line("fresh", size, first(pd, size, n, 1));
		buf = fresh(size, 0);
		line("reg", size, pairs(pd, buf, size));
		if (size == 4096)
			line("woken", size, woken(pd, buf, size));
		keep = ibv_reg_mr(pd, buf, size, ACCESS);
		if (keep) {
			line("rereg", size, pairs(pd, buf, size));
			ibv_dereg_mr(keep);
		} else {
			line("rereg", size, -(double)(errno ? errno : ENOMEM));
		}
		munmap(buf, size);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
