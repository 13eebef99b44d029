/* SPDX-License-Identifier: MIT */
/*
 * Command round trip for `make bench` (tools/bench-cores.sh): what one
 * command through the NIC's mailbox costs the host, timed over
 * ibv_alloc_pd + ibv_dealloc_pd and ibv_create_cq + ibv_destroy_cq pairs
 * (each a command the firmware answers without touching the data path).
 * Each kind runs for ~0.3 s (at least 100 pairs).
 *
 *   snic-cmdbench [DEVICE]   prints "KIND US_PER_COMMAND COMMANDS" lines
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int pd_pair(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	return pd && ibv_dealloc_pd(pd) == 0 ? 0 : -1;
}

static int cq_pair(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);

	return cq && ibv_destroy_cq(cq) == 0 ? 0 : -1;
}

static int timed(const char *kind, struct ibv_context *ctx,
		 int (*pair)(struct ibv_context *))
{
	double t0 = now_s(), t;
	unsigned n = 0;

	do {
		if (pair(ctx)) {
			fprintf(stderr, "snic-cmdbench: %s failed\n", kind);
			return -1;
		}
		n++;
		t = now_s() - t0;
	} while (t < 0.3 || n < 100);
	printf("%s %.2f %u\n", kind, t * 1e6 / (2.0 * n), 2 * n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : "snic0";
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int rc;

	for (int i = 0; list && list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), want) == 0)
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "snic-cmdbench: cannot open %s\n", want);
		return 1;
	}
	rc = timed("pd", ctx, pd_pair) || timed("cq", ctx, cq_pair);
	ibv_close_device(ctx);
	return rc ? 1 : 0;
}
