/* SPDX-License-Identifier: MIT */
/*
 * The NIC: initialisation, the run-to-completion poll pass, stop.  The
 * composition of the layers (README.md): it may use every one of them.
 *
 * One pass: read the clock once; doorbells and commands; one RX burst;
 * the requester and responder build new frames within a TX budget; CQ
 * events; flush the TX queue.  Each source has a budget, so none can
 * starve another (DESIGN.md "Firmware rules").
 */
#include <string.h>

#include "nic/top.h"

unsigned snic_nic_counter_count(void)
{
	return SNIC_CNT_MAX;
}

const char *snic_nic_counter_name(unsigned i)
{
	return core_counter_name(i);
}

uint64_t snic_nic_counter(const struct snic_nic *nic, unsigned i)
{
	return i < SNIC_CNT_MAX ? xcore_counter(nic, i) : 0;
}

size_t snic_nic_trace_read(const struct snic_nic *nic,
			   struct snic_trace_ev *out, size_t max)
{
#ifdef SNIC_TRACE
	const struct snic_trace *t = &nic->core.trace;
	uint64_t first = t->n > SNIC_TRACE_SIZE ? t->n - SNIC_TRACE_SIZE : 0;
	size_t k = 0;

	for (uint64_t i = first; i < t->n && k < max; i++)
		out[k++] = t->ev[i & (SNIC_TRACE_SIZE - 1)];
	return k;
#else
	(void)nic;
	(void)out;
	(void)max;
	return 0;
#endif
}

size_t snic_nic_size(void)
{
	return snic_nic_size_cores(1);
}

/* ---------------------------------------------------------------------- */
/* Init / poll / fini.                                                     */

/* The header's fixed words as our configuration makes them (magic,
 * version, names, sizes, addresses: everything before fw_state). */
static void header_fixed(const struct snic_nic *nic, struct snic_bar_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = SNIC_HOSTIF_MAGIC;
	h->version = SNIC_HOSTIF_VERSION;
	strncpy(h->name, nic->core.cfg.name, sizeof(h->name) - 1);
	if (nic->core.cfg.host_mem)
		strncpy(h->host_mem, nic->core.cfg.host_mem, sizeof(h->host_mem) - 1);
	h->host_mem_size = nic->core.cfg.host_mem_size;
	h->node_guid = nic->core.cfg.node_guid;
	memcpy(h->mac, nic->core.cfg.mac, 6);
	h->ipv4 = nic->core.cfg.ipv4;
}

/* The header's words from our configuration, magic last: at start and
 * again whenever a process changed them or they were lost (guard.c). */
void bar_header_write(struct snic_nic *nic)
{
	struct snic_bar_hdr *h = nic->core.hdr, want;

	header_fixed(nic, &want);
	h->magic = 0;
	atomic_thread_fence(memory_order_release);
	memcpy((uint8_t *)h + sizeof(h->magic), (uint8_t *)&want + sizeof(h->magic),
	       offsetof(struct snic_bar_hdr, fw_state) - sizeof(h->magic));
	h->max_ctx = SNIC_MAX_CTX;
	atomic_store(&h->fw_pid, nic->core.cfg.fw_pid);
	atomic_store(&h->fw_state, SNIC_FW_UP);
	/* magic last: a host that sees it sees everything above */
	atomic_thread_fence(memory_order_release);
	h->magic = SNIC_HOSTIF_MAGIC;
}

/* Does the header still say what bar_header_write wrote (fw_state and
 * fw_pid aside, which guard.c puts back on their own)? */
bool bar_header_ok(const struct snic_nic *nic)
{
	const struct snic_bar_hdr *h = nic->core.hdr;
	struct snic_bar_hdr want;

	header_fixed(nic, &want);
	return memcmp(h, &want, offsetof(struct snic_bar_hdr, fw_state)) == 0 &&
	       h->max_ctx == SNIC_MAX_CTX;
}

static void bar_init(struct snic_nic *nic)
{
	memset(nic->core.bar, 0, SNIC_BAR_SIZE);
	stats_init(nic);
	bar_header_write(nic);
}

/* The largest IB MTU whose RoCEv2 frame fits the port's IP MTU
 * (IP + UDP + BTH + RETH + ICRC around the payload, IBTA A17.4), over
 * IPv6 as well: the larger IPv6 header counts. */
static void mtu_init(struct snic_nic *nic)
{
	uint32_t over = ROCE_IPV6_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN +
			ROCE_RETH_LEN + ROCE_ICRC_LEN;

	nic->core.active_mtu_enum = 0;
	for (uint32_t e = 5; e >= 1; e--) {
		if (mtu_enum_to_bytes(e) + over <= nic->core.cfg.eth_mtu) {
			nic->core.active_mtu_enum = e;
			break;
		}
	}
	nic->core.active_mtu = mtu_enum_to_bytes(nic->core.active_mtu_enum);
}

/* The HAL's buffers must hold the largest frame the port MTU allows:
 * checked once here, so the data path never has to (loud set-up). */
static bool pkt_room_ok(struct snic_nic *nic)
{
	struct snic_pkt *p = core_pkt_alloc(&nic->core);
	bool ok = p && p->cap >= nic->core.cfg.eth_mtu + ROCE_ETH_HLEN;

	if (p)
		nic->core.pkt_cache[nic->core.npkt_cache++] = p;
	if (!ok)
		core_log(&nic->core, SNIC_LOG_ERR, "packet buffers smaller than the port MTU");
	return ok;
}

/* A HAL without a mandatory op: say which (once, at set-up), refuse. */
static bool hal_complete(const struct snic_hal *hal)
{
	const char *missing = core_hal_missing(hal->ops);
	char msg[64] = "HAL op missing: ";
	size_t n = strlen(msg);

	if (!missing)
		return true;
	while (*missing && n < sizeof(msg) - 1)
		msg[n++] = *missing++;
	msg[n] = 0;
	if (hal->ops->log)
		hal->ops->log(hal->ctx, SNIC_LOG_ERR, msg);
	return false;
}

/* Core k's view (k >= 1): its own core state in front of its port
 * (nic/steer.c), the NIC's configuration as core 0 found it. */
static void view_init(struct snic_nic *v, const struct snic_nic *nic0,
		      const struct snic_nic_config *cfg, const struct snic_hal *hal,
		      void *bar, unsigned k)
{
	core_init(&v->core, cfg, hal, bar);
	v->core.core_id = (uint8_t)k;
	v->core.xc = &v->sh->xc;
	memset(v->core.loop_mac, 0, 6); /* steer.c loops our own frames */
	v->core.active_mtu = nic0->core.active_mtu;
	v->core.active_mtu_enum = nic0->core.active_mtu_enum;
}

struct snic_nic *snic_nic_init_cores(void *mem, const struct snic_nic_config *cfg,
				     const struct snic_hal *hal, void *bar,
				     unsigned ncores)
{
	const struct snic_hal *real = hal;
	struct snic_nic_shared *sh;
	struct snic_nic *nic = mem;

	if (!mem || !cfg || !hal || !hal->ops || !bar || !cfg->name ||
	    !snic_nic_size_cores(ncores) || !hal_complete(hal))
		return NULL;
	memset(mem, 0, snic_nic_size_cores(ncores));
	sh = xcore_layout(mem, ncores);
	sh->xc.in_turn = cfg->cores_in_turn != 0;
	if (ncores > 1)
		hal = steer_port_init(&sh->xc.port[0], hal, nic, 0);
	core_init(&nic->core, cfg, hal, bar);
	if (ncores > 1) {
		nic->core.xc = &sh->xc;
		memset(nic->core.loop_mac, 0, 6);
	}
	neigh_init(nic->neigh, &nic->core);
	mtu_init(nic);
	if (nic->core.active_mtu_enum == 0 || !pkt_room_ok(nic))
		return NULL;
	for (unsigned k = 1; k < ncores; k++)
		view_init(sh->xc.views[k], nic, cfg,
			  steer_port_init(&sh->xc.port[k], real, sh->xc.views[k], k),
			  bar, k);
	for (unsigned k = 0; ncores > 1 && k < ncores; k++)
		doorbell_masks_init(sh->xc.views[k], k, ncores);
	qp_slots_init(nic);
	mr_init(nic, cfg->seed ? cfg->seed
			       : hal->ops->now_ns(hal->ctx) ^ cfg->node_guid);
	bar_init(nic);
	/* the ICRC's CPU probe sets a global the first time it is asked
	 * (arch/crc32_hw.h): asked here, before the board starts any other
	 * core, so the cores' data paths only read it */
	(void)snic_dma_crc_ok();
	return nic;
}

struct snic_nic *snic_nic_init(void *mem, const struct snic_nic_config *cfg,
			       const struct snic_hal *hal, void *bar)
{
	return snic_nic_init_cores(mem, cfg, hal, bar, 1);
}

struct snic_nic *snic_nic_core(struct snic_nic *nic, unsigned k)
{
	return k < nic->sh->xc.ncores ? nic->sh->xc.views[k] : NULL;
}

unsigned snic_nic_ncores(const struct snic_nic *nic)
{
	return nic->sh->xc.ncores;
}

static void heartbeat(struct snic_nic *nic)
{
	if (nic->core.now < nic->core.next_heartbeat)
		return;
	nic->core.next_heartbeat = nic->core.now + SNIC_HEARTBEAT_NS;
	atomic_fetch_add_explicit(&nic->core.hdr->heartbeat, 1, memory_order_relaxed);
	bar_guard(nic);
}

unsigned snic_nic_poll(struct snic_nic *nic)
{
	unsigned work = 0;

	if (nic->core.core_id)
		return xcore_pass(nic);
	nic->core.now = nic->core.ops->now_ns(nic->core.hal_ctx);
	heartbeat(nic);
	if (tw_due(&nic->core.tw, nic->core.now))
		work += timer_poll(nic);
	stats_poll(nic);
	work += doorbell_poll(nic);
	work += rx_poll(nic);
	nic->core.tx_budget = SNIC_TX_BUDGET;
	if (nic->core.tx_budget > core_tx_room(&nic->core))
		nic->core.tx_budget = core_tx_room(&nic->core);
	work += resp_poll(nic);
	work += req_poll(nic);
	if (nic->core.xc) /* the other cores' CQs, events and frames */
		work += xcore_poll(nic);
	cq_flush_events(nic);
	work += core_tx_flush(&nic->core);
	return work;
}

void snic_nic_ctx_dead(struct snic_nic *nic, unsigned slot)
{
	if (slot >= SNIC_MAX_CTX)
		return;
	/* counted when there was something to reclaim: a broker ends a
	 * context that closed itself too */
	if (nic->core.ctx_open[slot])
		CNT_INC(&nic->core, ctx_reclaimed);
	xcore_park_all(nic); /* a command's like (nic/xcore.c) */
	ctx_destroy(nic, slot);
	xcore_unpark_all(nic);
	nic->core.ctx_granted[slot] = false;
	nic->core.own_pages &= ~(1ull << slot);
	atomic_store_explicit(&core_ctx_slot(&nic->core, slot)->state, SNIC_CTX_FREE,
			      memory_order_release);
}

uint32_t snic_nic_ctx_pid(const struct snic_nic *nic, unsigned slot)
{
	return slot < SNIC_MAX_CTX && nic->core.ctx_open[slot] ?
		nic->core.ctx_pid[slot] : 0;
}

void snic_nic_fini(struct snic_nic *nic)
{
	atomic_store(&nic->core.hdr->fw_state, SNIC_FW_DOWN);
	for (unsigned c = 0; c < SNIC_MAX_CTX; c++)
		if (nic->core.ctx_open[c])
			ctx_destroy(nic, c);
	xcore_fini(nic); /* the other cores' buffers and the rings' frames */
	core_tx_drop_all(&nic->core);
}
