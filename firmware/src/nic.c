/* SPDX-License-Identifier: MIT */
/*
 * The NIC: initialisation, the run-to-completion poll pass, and the small
 * services every module uses (DMA with error counting, TX queue, buffer
 * cache, event queue, counters).
 *
 * One pass: read the clock once; doorbells and commands; one RX burst;
 * the requester and responder build new frames within a TX budget; CQ
 * events; flush the TX queue.  Each source has a budget, so none can
 * starve another (DESIGN.md "Firmware rules").
 */
#include <string.h>

#include "nic.h"

static const char *const counter_names[] = {
#define SNIC_CNT_NAME(n) #n,
	SNIC_COUNTERS(SNIC_CNT_NAME)
#undef SNIC_CNT_NAME
};

_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == SNIC_CNT_MAX,
	       "counter names");

unsigned snic_nic_counter_count(void)
{
	return SNIC_CNT_MAX;
}

const char *snic_nic_counter_name(unsigned i)
{
	return i < SNIC_CNT_MAX ? counter_names[i] : "";
}

uint64_t snic_nic_counter(const struct snic_nic *nic, unsigned i)
{
	return i < SNIC_CNT_MAX ? nic->cnt[i] : 0;
}

size_t snic_nic_size(void)
{
	return sizeof(struct snic_nic);
}

void nic_log(struct snic_nic *nic, int level, const char *msg)
{
	nic->ops->log(nic->hal_ctx, level, msg);
}

/* ---------------------------------------------------------------------- */
/* DMA.                                                                    */

int nic_dma_read(struct snic_nic *nic, uint64_t pa, void *dst, uint32_t len)
{
	if (nic->ops->dma_read(nic->hal_ctx, pa, dst, len)) {
		CNT_INC(nic, dma_errors);
		return -1;
	}
	return 0;
}

int nic_dma_write(struct snic_nic *nic, uint64_t pa, const void *src,
		  uint32_t len)
{
	if (nic->ops->dma_write(nic->hal_ctx, pa, src, len)) {
		CNT_INC(nic, dma_errors);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* TX.                                                                     */

struct snic_pkt *nic_pkt_alloc(struct snic_nic *nic)
{
	if (nic->npkt_cache == 0) {
		nic->npkt_cache = nic->ops->pkt_alloc(nic->hal_ctx, nic->pkt_cache,
						      SNIC_BURST);
		if (nic->npkt_cache == 0) {
			CNT_INC(nic, tx_no_buffer);
			return NULL;
		}
	}
	return nic->pkt_cache[--nic->npkt_cache];
}

uint32_t nic_tx_room(const struct snic_nic *nic)
{
	return SNIC_TXQ_SIZE - (nic->txq_tail - nic->txq_head);
}

/* Loopback: a frame addressed to our own MAC (two QPs of this NIC
 * connected through its own GID) never reaches the port; it goes round to
 * our own receive path, which applies the same transport rules. */
static bool loop_to_self(struct snic_nic *nic, struct snic_pkt *pkt)
{
	if (pkt->len < 6 || memcmp(pkt->data, nic->cfg.mac, 6) != 0)
		return false;
	if (nic->loopq_tail - nic->loopq_head >= SNIC_LOOPQ_SIZE) {
		CNT_INC(nic, tx_queue_full);
		nic->ops->pkt_free(nic->hal_ctx, &pkt, 1);
		return true;
	}
	if (nic->tx_budget)
		nic->tx_budget--;
	CNT_INC(nic, loopback_frames);
	nic->loopq[nic->loopq_tail++ % SNIC_LOOPQ_SIZE] = pkt;
	return true;
}

/* rx.c: up to n looped-back frames, oldest first. */
uint16_t nic_loop_take(struct snic_nic *nic, struct snic_pkt **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && nic->loopq_head != nic->loopq_tail)
		pkts[k++] = nic->loopq[nic->loopq_head++ % SNIC_LOOPQ_SIZE];
	return k;
}

void nic_tx(struct snic_nic *nic, struct snic_pkt *pkt)
{
	if (loop_to_self(nic, pkt))
		return;
	if (nic_tx_room(nic) == 0) {
		CNT_INC(nic, tx_queue_full);
		nic->ops->pkt_free(nic->hal_ctx, &pkt, 1);
		return;
	}
	if (nic->tx_budget)
		nic->tx_budget--;
	nic->txq[nic->txq_tail++ % SNIC_TXQ_SIZE] = pkt;
}

/* The link is down: drop what is queued, as a real port does (frames held
 * until a peer comes back would reach its new QPs with stale PSNs). */
static unsigned tx_drop_link_down(struct snic_nic *nic)
{
	while (nic->txq_head != nic->txq_tail) {
		struct snic_pkt *p = nic->txq[nic->txq_head++ % SNIC_TXQ_SIZE];

		nic->ops->pkt_free(nic->hal_ctx, &p, 1);
		CNT_INC(nic, tx_drop_link_down);
	}
	return 0;
}

/* Hand queued frames to the port in bursts; what it does not take stays
 * queued for the next pass. */
static unsigned tx_flush(struct snic_nic *nic)
{
	unsigned sent_total = 0;

	if (!nic->link_up)
		return tx_drop_link_down(nic);
	while (nic->txq_head != nic->txq_tail) {
		struct snic_pkt *burst[SNIC_BURST];
		uint32_t n = nic->txq_tail - nic->txq_head, i;
		uint16_t sent;

		if (n > SNIC_BURST)
			n = SNIC_BURST;
		for (i = 0; i < n; i++)
			burst[i] = nic->txq[(nic->txq_head + i) % SNIC_TXQ_SIZE];
		sent = nic->ops->tx_burst(nic->hal_ctx, 0, burst, (uint16_t)n);
		for (i = 0; i < sent; i++)
			CNT_ADD(nic, tx_bytes, burst[i]->len);
		CNT_ADD(nic, tx_frames, sent);
		nic->txq_head += sent;
		sent_total += sent;
		if (sent < n)
			break;
	}
	return sent_total;
}

/* ---------------------------------------------------------------------- */
/* Events to the host.                                                     */

static struct snic_ctx_slot *ctx_slot(struct snic_nic *nic, unsigned ctx)
{
	return (struct snic_ctx_slot *)(nic->bar + SNIC_BAR_CTX_OFF +
					(size_t)ctx * SNIC_CTX_SLOT_SIZE);
}

void nic_event(struct snic_nic *nic, unsigned ctx, uint32_t type, uint32_t obj)
{
	struct snic_ctx_slot *s;
	uint32_t pi, ci;

	if (ctx >= SNIC_MAX_CTX || !nic->ctx_open[ctx])
		return;
	s = ctx_slot(nic, ctx);
	pi = nic->eq_pi[ctx];
	ci = atomic_load_explicit(&s->eq_ci, memory_order_acquire);
	if (pi - ci >= SNIC_EQ_SIZE) {
		CNT_INC(nic, eq_overruns);
		return;
	}
	s->eq[pi % SNIC_EQ_SIZE] = (struct snic_eqe){ .type = type, .obj = obj };
	nic->eq_pi[ctx] = pi + 1;
	atomic_store_explicit(&s->eq_pi, pi + 1, memory_order_release);
	nic->ops->notify_host(nic->hal_ctx, &s->eq_pi);
}

/* The port went up or down: IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR
 * (obj = port 1) to every open context (IBTA 11.6.3.3, unaffiliated). */
void nic_port_event(struct snic_nic *nic, bool up)
{
	for (unsigned c = 0; c < SNIC_MAX_CTX; c++)
		if (nic->ctx_open[c])
			nic_event(nic, c, up ? 9u : 10u, 1);
}

/* ---------------------------------------------------------------------- */
/* Doorbells: the two-level bitmap of hostif.h.                            */

static unsigned doorbell_poll(struct snic_nic *nic)
{
	uint64_t sum = atomic_exchange_explicit(&nic->db->summary, 0,
						memory_order_acquire);
	unsigned work = 0;

	if (!sum)
		return 0;
	if (sum & SNIC_DB_SUMMARY_CMD) {
		uint64_t bits = atomic_exchange_explicit(&nic->db->cmd_bits, 0,
							 memory_order_acquire);
		work += cmd_poll(nic, bits);
	}
	sum &= ~SNIC_DB_SUMMARY_CMD;
	while (sum) {
		unsigned w = (unsigned)__builtin_ctzll(sum);
		uint64_t bits;

		sum &= sum - 1;
		if (w >= SNIC_DB_QP_WORDS)
			continue;
		bits = atomic_exchange_explicit(&nic->db->qp_bits[w], 0,
						memory_order_acquire);
		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			struct snic_qp *qp = &nic->qps[w * 64 + b];

			bits &= bits - 1;
			CNT_INC(nic, doorbells);
			work++;
			if (!qp->in_use) {
				CNT_INC(nic, doorbells_spurious);
				continue;
			}
			qp_doorbell(nic, qp);
		}
	}
	return work;
}

/* ---------------------------------------------------------------------- */
/* Init / poll / fini.                                                     */

static void bar_init(struct snic_nic *nic)
{
	struct snic_bar_hdr *h = nic->hdr;

	memset(nic->bar, 0, SNIC_BAR_SIZE);
	h->version = SNIC_HOSTIF_VERSION;
	strncpy(h->name, nic->cfg.name, sizeof(h->name) - 1);
	if (nic->cfg.host_mem)
		strncpy(h->host_mem, nic->cfg.host_mem, sizeof(h->host_mem) - 1);
	h->host_mem_size = nic->cfg.host_mem_size;
	h->node_guid = nic->cfg.node_guid;
	memcpy(h->mac, nic->cfg.mac, 6);
	h->ipv4 = nic->cfg.ipv4;
	h->max_ctx = SNIC_MAX_CTX;
	stats_init(nic);
	atomic_store(&h->fw_pid, nic->cfg.fw_pid);
	atomic_store(&h->fw_state, SNIC_FW_UP);
	/* magic last: a host that sees it sees everything above */
	atomic_thread_fence(memory_order_release);
	h->magic = SNIC_HOSTIF_MAGIC;
}

/* The largest IB MTU whose RoCEv2 frame fits the port's IP MTU
 * (IP + UDP + BTH + RETH + ICRC around the payload, IBTA A17.4). */
static void mtu_init(struct snic_nic *nic)
{
	uint32_t over = ROCE_IPV4_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN +
			ROCE_RETH_LEN + ROCE_ICRC_LEN;

	nic->active_mtu_enum = 0;
	for (uint32_t e = 5; e >= 1; e--) {
		if (mtu_enum_to_bytes(e) + over <= nic->cfg.eth_mtu) {
			nic->active_mtu_enum = e;
			break;
		}
	}
	nic->active_mtu = mtu_enum_to_bytes(nic->active_mtu_enum);
}

/* The HAL's buffers must hold the largest frame the port MTU allows:
 * checked once here, so the data path never has to (loud set-up). */
static bool pkt_room_ok(struct snic_nic *nic)
{
	struct snic_pkt *p = nic_pkt_alloc(nic);
	bool ok = p && p->cap >= nic->cfg.eth_mtu + ROCE_ETH_HLEN;

	if (p)
		nic->pkt_cache[nic->npkt_cache++] = p;
	if (!ok)
		nic_log(nic, SNIC_LOG_ERR, "packet buffers smaller than the port MTU");
	return ok;
}

struct snic_nic *snic_nic_init(void *mem, const struct snic_nic_config *cfg,
			       const struct snic_hal *hal, void *bar)
{
	struct snic_nic *nic = mem;

	if (!mem || !cfg || !hal || !hal->ops || !bar || !cfg->name)
		return NULL;
	memset(nic, 0, sizeof(*nic));
	nic->hal = hal;
	nic->ops = hal->ops;
	nic->hal_ctx = hal->ctx;
	nic->cfg = *cfg;
	strncpy(nic->name, cfg->name, sizeof(nic->name) - 1);
	nic->cfg.name = nic->name;
	nic->bar = bar;
	nic->hdr = (struct snic_bar_hdr *)((uint8_t *)bar + SNIC_BAR_HDR_OFF);
	nic->db = (struct snic_doorbells *)((uint8_t *)bar + SNIC_BAR_DB_OFF);
	mtu_init(nic);
	if (nic->active_mtu_enum == 0 || !pkt_room_ok(nic))
		return NULL;
	mr_init(nic);
	bar_init(nic);
	return nic;
}

/* Contexts a host-side watcher marked orphaned (hostif.h): their owner
 * died, reclaim them.  64 loads every 10 ms, whatever the load. */
static void reap_orphans(struct snic_nic *nic)
{
	for (unsigned c = 0; c < SNIC_MAX_CTX; c++)
		if (atomic_load_explicit(&ctx_slot(nic, c)->state,
					 memory_order_acquire) == SNIC_CTX_ORPHAN)
			snic_nic_ctx_dead(nic, c);
}

static void heartbeat(struct snic_nic *nic)
{
	if (nic->now < nic->next_heartbeat)
		return;
	nic->next_heartbeat = nic->now + SNIC_HEARTBEAT_NS;
	atomic_fetch_add_explicit(&nic->hdr->heartbeat, 1, memory_order_relaxed);
	reap_orphans(nic);
}

unsigned snic_nic_poll(struct snic_nic *nic)
{
	unsigned work = 0;

	nic->now = nic->ops->now_ns(nic->hal_ctx);
	heartbeat(nic);
	work += timer_poll(nic);
	stats_poll(nic);
	work += doorbell_poll(nic);
	work += rx_poll(nic);
	nic->tx_budget = SNIC_TX_BUDGET;
	if (nic->tx_budget > nic_tx_room(nic))
		nic->tx_budget = nic_tx_room(nic);
	work += resp_poll(nic);
	work += req_poll(nic);
	cq_flush_events(nic);
	work += tx_flush(nic);
	return work;
}

void snic_nic_ctx_dead(struct snic_nic *nic, unsigned slot)
{
	if (slot >= SNIC_MAX_CTX)
		return;
	CNT_INC(nic, ctx_reclaimed);
	ctx_destroy(nic, slot);
	atomic_store_explicit(&ctx_slot(nic, slot)->state, SNIC_CTX_FREE,
			      memory_order_release);
}

void snic_nic_fini(struct snic_nic *nic)
{
	atomic_store(&nic->hdr->fw_state, SNIC_FW_DOWN);
	for (unsigned c = 0; c < SNIC_MAX_CTX; c++)
		if (nic->ctx_open[c])
			ctx_destroy(nic, c);
	while (nic->txq_head != nic->txq_tail) {
		struct snic_pkt *p = nic->txq[nic->txq_head++ % SNIC_TXQ_SIZE];

		nic->ops->pkt_free(nic->hal_ctx, &p, 1);
	}
	while (nic->loopq_head != nic->loopq_tail) {
		struct snic_pkt *p = nic->loopq[nic->loopq_head++ % SNIC_LOOPQ_SIZE];

		nic->ops->pkt_free(nic->hal_ctx, &p, 1);
	}
	if (nic->npkt_cache)
		nic->ops->pkt_free(nic->hal_ctx, nic->pkt_cache,
				   (uint16_t)nic->npkt_cache);
	nic->npkt_cache = 0;
}
