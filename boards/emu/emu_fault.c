/* SPDX-License-Identifier: MIT */
/* snic-emu --fault: see emu_fault.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "emu_fault.h"
#include "fault.h"
#include "hal_dpdk.h"

#define EMU_FAULT_MAX 16        /* hooked ports, all NICs together */

struct emu_fault_port {
	struct snic_fault f;
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

static uint16_t fp_rx(void *arg, uint16_t port, struct snic_pkt **pkts,
		      uint16_t n, uint16_t cap)
{
	struct emu_fault_port *fp = arg;

	(void)port;
	return snic_fault_rx(&fp->f, pkts, n, cap, mono_ns(), &fp->io);
}

int emu_fault_enabled(void)
{
	return enabled;
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
		c.seed = cfg.seed + nports++;
		snic_fault_init(&fp->f, &c);
		fp->io.ctx = n;
		fp->io.free = fp_free;
		fp->io.clone = fp_clone;
		fp->nic = n;
		snprintf(fp->name, sizeof(fp->name), "%s port %u", nic_name, i);
		n->port[i].rx_hook_arg = fp;
		n->port[i].rx_hook = fp_rx;
		printf("snic-emu: %s: faults on receive: loss %u dup %u reorder "
		       "%u corrupt %u ppm, seed %llu\n", fp->name, c.loss, c.dup,
		       c.reorder, c.corrupt, (unsigned long long)c.seed);
	}
}

void emu_fault_fini(void)
{
	for (unsigned i = 0; i < nports; i++) {
		struct emu_fault_port *fp = &ports[i];
		char line[200];

		snic_fault_drain(&fp->f, &fp->io);
		snic_fault_format(&fp->f, line, sizeof(line));
		printf("snic-emu: %s: faults %s\n", fp->name, line);
	}
	nports = 0;
}
