/* SPDX-License-Identifier: MIT */
/* snic-emu --fault: see emu_fault.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "emu_fault.h"
#include "fault.h"
#include "hal_dpdk.h"

#define EMU_FAULT_MAX 16        /* hooked ports, all NICs together */

/* A hooked port: a fault state per RX queue, each its polling thread's
 * (hal_dpdk.h snic_dpdk_rx_hook). */
struct emu_fault_port {
	struct snic_fault f[SNIC_DPDK_MAX_RXQ];
	uint16_t nq;
	struct snic_fault_io io;
	struct snic_dpdk_nic *nic;
	char name[24];
};

static struct snic_fault_cfg cfg;
static int enabled;
static struct emu_fault_port ports[EMU_FAULT_MAX];
static unsigned nports;

int emu_fault_parse(const char *spec)
{
	char err[160];

	if (snic_fault_parse(&cfg, spec, err, sizeof(err)) != 0) {
		fprintf(stderr, "snic-emu: --fault: %s\n", err);
		return -1;
	}
	enabled = 1;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fp_free(void *ctx, struct snic_pkt *p)
{
	snic_dpdk_pkt_free(ctx, &p, 1);
}

static struct snic_pkt *fp_clone(void *ctx, const struct snic_pkt *p)
{
	struct snic_pkt *c;

	if (snic_dpdk_pkt_alloc(ctx, &c, 1) != 1)
		return NULL;
	if (p->len > c->cap) {
		snic_dpdk_pkt_free(ctx, &c, 1);
		return NULL;
	}
	memcpy(c->data, p->data, p->len);
	c->len = p->len;
	c->port = p->port;
	return c;
}

static uint16_t fp_rx(void *arg, uint16_t port, uint16_t q,
		      struct snic_pkt **pkts, uint16_t n, uint16_t cap)
{
	struct emu_fault_port *fp = arg;

	(void)port;
	if (q >= fp->nq) /* not a queue the port has: nothing to do */
		return n;
	return snic_fault_rx(&fp->f[q], pkts, n, cap, mono_ns(), &fp->io);
}

void emu_fault_attach(struct snic_dpdk_nic *n, const char *nic_name)
{
	for (uint16_t i = 0; enabled && i < n->nb_ports; i++) {
		struct snic_fault_cfg c = cfg;
		struct emu_fault_port *fp;

		if (nports == EMU_FAULT_MAX) {
			fprintf(stderr, "snic-emu: --fault: more than %u ports, "
				"%s port %u runs without faults\n",
				EMU_FAULT_MAX, nic_name, i);
			return;
		}
		fp = &ports[nports];
		fp->nq = n->port[i].nb_rxq;
		if (fp->nq > SNIC_DPDK_MAX_RXQ)
			fp->nq = SNIC_DPDK_MAX_RXQ;
		/* queue 0 with the seed one queue had; the others their own */
		for (uint16_t q = 0; q < fp->nq; q++) {
			c.seed = cfg.seed + nports + 1000u * q;
			snic_fault_init(&fp->f[q], &c);
		}
		nports++;
		fp->io.ctx = n;
		fp->io.free = fp_free;
		fp->io.clone = fp_clone;
		fp->nic = n;
		snprintf(fp->name, sizeof(fp->name), "%s port %u", nic_name, i);
		n->port[i].rx_hook_arg = fp;
		n->port[i].rx_hook = fp_rx;
		printf("snic-emu: %s: faults on receive: loss %u dup %u reorder "
		       "%u corrupt %u ppm, seed %llu%s\n", fp->name, c.loss,
		       c.dup, c.reorder, c.corrupt,
		       (unsigned long long)fp->f[0].cfg.seed,
		       fp->nq > 1 ? " (queue q: + 1000 q)" : "");
	}
}

uint64_t emu_fault_next_due(const struct snic_dpdk_nic *n, uint16_t q)
{
	uint64_t due = UINT64_MAX;

	for (uint16_t i = 0; enabled && i < n->nb_ports; i++) {
		const struct emu_fault_port *fp = n->port[i].rx_hook_arg;

		/* a stopped port's receive hook is not called (its held
		 * frames wait for the start): its due times would only keep
		 * core 0 from sleeping */
		if (n->port[i].rx_hook != fp_rx || !n->port[i].started)
			continue;
		for (uint16_t r = 0; r < fp->nq; r++) {
			uint64_t d;

			if (snic_dpdk_rx_poller(n, r) != q)
				continue; /* another thread's queue */
			d = snic_fault_next_due(&fp->f[r]);
			if (d < due)
				due = d;
		}
	}
	return due;
}

void emu_fault_fini(void)
{
	for (unsigned i = 0; i < nports; i++) {
		struct emu_fault_port *fp = &ports[i];

		for (uint16_t q = 0; q < fp->nq; q++) {
			char line[200];

			snic_fault_drain(&fp->f[q], &fp->io);
			snic_fault_format(&fp->f[q], line, sizeof(line));
			if (fp->nq > 1)
				printf("snic-emu: %s queue %u: faults %s\n",
				       fp->name, q, line);
			else
				printf("snic-emu: %s: faults %s\n", fp->name,
				       line);
		}
	}
	nports = 0;
}
