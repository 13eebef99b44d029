/* SPDX-License-Identifier: MIT */
/*
 * The port's own limit for `make bench`: frames per second through the
 * DPDK ring pair snic-emu uses by default, on one core, through the same
 * HAL calls the firmware makes (hal/dpdk: pkt_alloc, a frame written,
 * tx_burst on one port, rx_burst on the other, pkt_free), in bursts of
 * 32, with nothing else to do.  A firmware message costs at least one
 * such frame, so this bounds the message rate snic-emu can reach here.
 *
 *   snic-portbench [SIZE [SECONDS]]   prints "port ring SIZE MPPS GBPS"
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hal_dpdk.h"

#define BURST 32

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static struct snic_dpdk_nic a, b;
	uint16_t pa, pb, na, nb;
	unsigned size = argc > 1 ? (unsigned)atoi(argv[1]) : 64;
	double secs = argc > 2 ? atof(argv[2]) : 1.0, t0, t;
	uint64_t frames = 0;
	char prefix[64];

	if (size < 60 || size > SNIC_DPDK_FRAME_MAX) {
		fprintf(stderr, "snic-portbench: size 60..%u\n", SNIC_DPDK_FRAME_MAX);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "snic-portbench-%d", (int)getpid());
	if (snic_dpdk_eal_init(argv[0], SNIC_DPDK_EAL_NO_PCI, prefix, 0, NULL))
		return 1;
	snic_dpdk_nic_init(&a, snic_dpdk_pool_create("pb-a", SNIC_DPDK_POOL_MBUFS));
	snic_dpdk_nic_init(&b, snic_dpdk_pool_create("pb-b", SNIC_DPDK_POOL_MBUFS));
	if (!a.pool || !b.pool || snic_dpdk_ring_pair("pba", "pbb", &pa, &pb, 1, 1) ||
	    snic_dpdk_port_add(&a, pa, 4200, &na) ||
	    snic_dpdk_port_add(&b, pb, 4200, &nb))
		return 1;
	t0 = now_s();
	do {
		for (int k = 0; k < 256; k++) {
			struct snic_pkt *tx[BURST], *rx[BURST];
			uint16_t n = snic_dpdk_pkt_alloc(&a, tx, BURST), s, r;

			for (uint16_t i = 0; i < n; i++) {
				memset(tx[i]->data, 0x5a, 64);
				tx[i]->len = (uint16_t)size;
			}
			s = snic_dpdk_tx_burst(&a, na, tx, n);
			if (s < n)
				snic_dpdk_pkt_free(&a, tx + s, (uint16_t)(n - s));
			r = snic_dpdk_rx_burst(&b, nb, rx, BURST);
			frames += r;
			snic_dpdk_pkt_free(&b, rx, r);
		}
		t = now_s() - t0;
	} while (t < secs);
	printf("port ring %u %.2f %.2f\n", size, (double)frames / t / 1e6,
	       (double)frames * size / t / 1e9);
	snic_dpdk_nic_fini(&a);
	snic_dpdk_nic_fini(&b);
	snic_dpdk_eal_fini();
	return 0;
}
