/* SPDX-License-Identifier: MIT */
/*
 * cm_event_delay.so: LD_PRELOAD shim that sleeps SNIC_CM_EVENT_DELAY_MS
 * before every rdma_get_cm_event, standing in for the scheduler taking
 * the CPU from a thread between its last CQ poll and its next read of
 * the CM event channel.  netdev.sh fi_rdm_race uses it to reproduce
 * libfabric 1.17 ofi_rxm's teardown race (README, "libfabric (verbs
 * provider)") on demand.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

struct rdma_event_channel;
struct rdma_cm_event;

int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev)
{
	static int (*real)(struct rdma_event_channel *, struct rdma_cm_event **);
	const char *s = getenv("SNIC_CM_EVENT_DELAY_MS");
	long ms = s ? atol(s) : 0;

	if (!real)
		real = (int (*)(struct rdma_event_channel *, struct rdma_cm_event **))
			dlsym(RTLD_NEXT, "rdma_get_cm_event");
	if (ms > 0) {
		struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&t, NULL);
	}
	return real(ch, ev);
}
