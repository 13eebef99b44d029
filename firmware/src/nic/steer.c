/* SPDX-License-Identifier: MIT */
/*
 * Frames to the core that owns their QP, on a NIC with several cores.
 * Where the port steers by the BTH destination QPN (HAL ops rx_queues,
 * rx_burst_queue: a NIC's RSS or flow rules, the default pair's ring
 * ports), core k polls RX queue k itself and nothing crosses cores.
 * Where it cannot (a memif or af_packet port has one queue), this is the
 * steering stage in software: core 0 polls the port, reads each frame's
 * destination QPN and hands the frame to the core that owns that QP
 * through a single-producer/single-consumer ring.  Core 0 checks the
 * owner of what its queue brings in both cases, so a port that steers
 * only some frames loses none.  The other cores see a port of their own:
 * rx_burst pops what core 0 steered to them, then their own queue.
 * Their tx_burst goes straight to a TX queue of their own where the HAL
 * has one per core (tx_burst_queue: DPDK queue k, no hand-off), else it
 * pushes to core 0, which transmits.  Frames to our own MAC (two QPs of
 * this NIC) go to core 0 and are steered the same way instead of looping
 * on the core that built them.  Everything that is not RoCE to a QP of
 * another core (ARP, ND, CM on QP1, multicast, other traffic) stays on
 * core 0 (snic_hal_rx_queue's rule, hal.h).
 */
#include <string.h>

#include "nic/top.h"

/* The core that owns the frame's QP: the core of its QPN's slot
 * (qp_slot_core, whether or not a QP lives there: a stale QPN is that
 * core's to drop), core 0 for anything but RoCE to a QP >= 2. */
static unsigned frame_owner(struct snic_nic *nic, const struct snic_pkt *p)
{
	uint32_t dqpn = snic_hal_frame_dqpn(p->data, p->len);

	if (dqpn <= 1 || dqpn >= 0xffffff)
		return 0;
	return qp_slot_core(nic, handle_idx(dqpn));
}

/* Core 0: the frame to core `to` (0: core 0's own loop queue); dropped
 * and counted when that ring is full, as a NIC's full RX queue does. */
static void steer_to(struct snic_nic *nic0, struct snic_pkt *p, unsigned to)
{
	struct snic_xcore *xc = &nic0->sh->xc;
	struct snic_xc_port *pt = &xc->port[0];
	struct snic_core *c = &nic0->core;

	if (to == 0 && pt->loop_tail - pt->loop_head < SNIC_XC_PKT_RING) {
		pt->loop[pt->loop_tail++ % SNIC_XC_PKT_RING] = p;
		return;
	}
	if (to != 0 && xc_ring_push(xc->pkt[0][to], &p, 1)) {
		CNT_INC(c, xcore_rx_steered);
		return;
	}
	CNT_INC(c, xcore_rx_drop);
	pt->real->ops->pkt_free(pt->real->ctx, &p, 1);
}

/* ---------------------------------------------------------------------- */
/* Core 0's port.                                                          */

static uint16_t rx0(void *h, uint16_t port, struct snic_pkt **pkts, uint16_t n)
{
	struct snic_xc_port *pt = h;
	struct snic_nic *nic = pt->view;
	uint16_t k = 0, got, end;

	while (k < n && pt->loop_head != pt->loop_tail)
		pkts[k++] = pt->loop[pt->loop_head++ % SNIC_XC_PKT_RING];
	got = pt->real->ops->rx_burst(pt->real->ctx, port, pkts + k,
				      (uint16_t)(n - k));
	end = (uint16_t)(k + got);
	for (uint16_t i = k; i < end; i++) {
		unsigned to = frame_owner(nic, pkts[i]);

		if (to == 0)
			pkts[k++] = pkts[i];
		else
			steer_to(nic, pkts[i], to);
	}
	return k;
}

static inline bool to_self(const struct snic_nic *nic,
			   const struct snic_pkt *p)
{
	return memcmp(p->data, nic->core.cfg.mac, 6) == 0;
}

/* The frames of pkts[0 .. n) up to the first one to our own MAC. */
static uint16_t run_to_port(const struct snic_nic *nic,
			    struct snic_pkt **pkts, uint16_t n)
{
	uint16_t run = 0;

	while (run < n && !to_self(nic, pkts[run]))
		run++;
	return run;
}

/* Frames to our own MAC: core 0 steers each to its QP's core; another
 * core hands them to core 0 (its ring, which may take fewer). */
static uint16_t tx_self(struct snic_xc_port *pt, struct snic_pkt **pkts,
			uint16_t n)
{
	struct snic_nic *nic = pt->view;

	if (nic->core.core_id)
		return (uint16_t)xc_ring_push(
			nic->sh->xc.pkt[nic->core.core_id][0], pkts, n);
	for (uint16_t i = 0; i < n; i++) {
		CNT_INC(&nic->core, loopback_frames);
		steer_to(nic, pkts[i], frame_owner(nic, pkts[i]));
	}
	return n;
}

/* The port: queue 0 (core 0), or the core's own (pt->txq). */
static uint16_t tx_port(struct snic_xc_port *pt, uint16_t port,
			struct snic_pkt **pkts, uint16_t n)
{
	const struct snic_hal *r = pt->real;

	return pt->txq ? r->ops->tx_burst_queue(r->ctx, port, pt->txq, pkts, n)
		       : r->ops->tx_burst(r->ctx, port, pkts, n);
}

/* Core 0, and another core with a TX queue of its own: runs of frames to
 * our own MAC (tx_self) and to the port (tx_port), in order.  Returns how
 * many of the first frames were taken. */
static uint16_t tx_split(void *h, uint16_t port, struct snic_pkt **pkts,
			 uint16_t n)
{
	struct snic_xc_port *pt = h;
	struct snic_nic *nic = pt->view;
	uint16_t i = 0;

	while (i < n) {
		uint16_t run = 0, sent;

		while (i + run < n && to_self(nic, pkts[i + run]))
			run++;
		sent = run ? tx_self(pt, pkts + i, run) : 0;
		i = (uint16_t)(i + sent);
		if (sent < run)
			break;
		run = run_to_port(nic, pkts + i, (uint16_t)(n - i));
		if (!run)
			continue;
		sent = tx_port(pt, port, pkts + i, run);
		i = (uint16_t)(i + sent);
		if (sent < run)
			break;
	}
	return i;
}

/* Core 0 transmits what the other cores built (called once per pass):
 * into its own TX queue while there is room, the rest waits. */
unsigned steer_tx_gather(struct snic_nic *nic0)
{
	struct snic_xcore *xc = &nic0->sh->xc;
	unsigned work = 0;

	for (unsigned k = 1; k < xc->ncores; k++) {
		struct snic_pkt *p[SNIC_BURST];
		uint32_t n, taken = 0;

		/* up to a pass's TX budget from each core, a burst at a time */
		do {
			uint32_t room = core_tx_room(&nic0->core);

			n = xc_ring_pop(xc->pkt[k][0], p,
					room < SNIC_BURST ? room : SNIC_BURST);
			for (uint32_t i = 0; i < n; i++)
				core_tx(&nic0->core, p[i]);
			taken += n;
		} while (n == SNIC_BURST && taken < SNIC_TX_BUDGET);
		work += taken;
	}
	CNT_ADD(&nic0->core, xcore_tx_relayed, work);
	return work;
}

/* ---------------------------------------------------------------------- */
/* The other cores' port.                                                  */

/* What core 0 steered here.  Not looked at again: a QP slot runs on the
 * same core for its whole life (objects/qp_core.c), so a frame whose QP
 * was destroyed while it waited - even if the slot was taken again - is
 * still this core's to drop, and the receive path does, as with one core
 * (no QP of that QPN: a lingering QP's ACK or rx_drop_unknown_qpn). */
static uint16_t rxk(void *h, uint16_t port, struct snic_pkt **pkts, uint16_t n)
{
	struct snic_xc_port *pt = h;
	struct snic_nic *nic = pt->view;

	(void)port;
	return (uint16_t)xc_ring_pop(nic->sh->xc.pkt[0][nic->core.core_id],
				     pkts, n);
}

/* A core with an RX queue of its own: what core 0 steered here (frames
 * to our own MAC), then the port's queue.  A frame the port put on the
 * wrong queue is not this core's to touch (another core runs its QP, or
 * it is core 0's kind): dropped and counted, as a port's error. */
static uint16_t rxk_own(void *h, uint16_t port, struct snic_pkt **pkts,
			uint16_t n)
{
	struct snic_xc_port *pt = h;
	struct snic_nic *nic = pt->view;
	const struct snic_hal *r = pt->real;
	uint16_t k = rxk(h, port, pkts, n), got, end;

	if (k == n)
		return k;
	got = r->ops->rx_burst_queue(r->ctx, port, pt->rxq, pkts + k,
				     (uint16_t)(n - k));
	end = (uint16_t)(k + got);
	for (uint16_t i = k; i < end; i++) {
		if (frame_owner(nic, pkts[i]) == pt->rxq) {
			pkts[k++] = pkts[i];
			continue;
		}
		CNT_INC(&nic->core, xcore_rx_misrouted);
		r->ops->pkt_free(r->ctx, &pkts[i], 1);
	}
	return k;
}

/* Everything through core 0, which transmits (steer_tx_gather,
 * tx_split): a core without a TX queue of its own. */
static uint16_t txk(void *h, uint16_t port, struct snic_pkt **pkts, uint16_t n)
{
	(void)port;
	return tx_self(h, pkts, n);
}

/* ---------------------------------------------------------------------- */
/* The rest of the HAL, passed through.                                    */

#define REAL(h) (((struct snic_xc_port *)(h))->real)

static int s_dma_read(void *h, uint64_t pa, void *dst, uint32_t len)
{
	return REAL(h)->ops->dma_read(REAL(h)->ctx, pa, dst, len);
}

static int s_dma_write(void *h, uint64_t pa, const void *src, uint32_t len)
{
	return REAL(h)->ops->dma_write(REAL(h)->ctx, pa, src, len);
}

static int s_cmp_swap(void *h, uint64_t pa, uint64_t cmp, uint64_t swap,
		      uint64_t *old)
{
	return REAL(h)->ops->dma_cmp_swap(REAL(h)->ctx, pa, cmp, swap, old);
}

static int s_fetch_add(void *h, uint64_t pa, uint64_t add, uint64_t *old)
{
	return REAL(h)->ops->dma_fetch_add(REAL(h)->ctx, pa, add, old);
}

static uint64_t s_now(void *h)
{
	return REAL(h)->ops->now_ns(REAL(h)->ctx);
}

static uint16_t s_alloc(void *h, struct snic_pkt **pkts, uint16_t n)
{
	return REAL(h)->ops->pkt_alloc(REAL(h)->ctx, pkts, n);
}

static void s_free(void *h, struct snic_pkt **pkts, uint16_t n)
{
	REAL(h)->ops->pkt_free(REAL(h)->ctx, pkts, n);
}

static int s_link_up(void *h, uint16_t port)
{
	return REAL(h)->ops->link_up(REAL(h)->ctx, port);
}

static void s_notify(void *h, const void *word)
{
	REAL(h)->ops->notify_host(REAL(h)->ctx, word);
}

static void s_log(void *h, int level, const char *msg)
{
	REAL(h)->ops->log(REAL(h)->ctx, level, msg);
}

static int s_load_acq(void *h, uint64_t pa, uint32_t *val)
{
	return REAL(h)->ops->dma_load_acquire32(REAL(h)->ctx, pa, val);
}

static void s_netdev_rx(void *h, uint16_t port, const struct snic_pkt *p)
{
	REAL(h)->ops->netdev_rx(REAL(h)->ctx, port, p);
}

static void s_dma_prepare(void *h, uint64_t pa, uint64_t len)
{
	REAL(h)->ops->dma_prepare(REAL(h)->ctx, pa, len);
}

static int s_dma_read_crc(void *h, uint64_t pa, void *dst, uint32_t len,
			  uint32_t *crc)
{
	return REAL(h)->ops->dma_read_crc(REAL(h)->ctx, pa, dst, len, crc);
}

static int s_dma_write_crc(void *h, uint64_t pa, const void *src,
			   uint32_t len, uint32_t *crc)
{
	return REAL(h)->ops->dma_write_crc(REAL(h)->ctx, pa, src, len, crc);
}

static void s_dma_prefetch(void *h, uint64_t pa, uint32_t len)
{
	REAL(h)->ops->dma_prefetch(REAL(h)->ctx, pa, len);
}

#define SHIM_OPS(rx, tx)                                                      \
	{ .dma_read = s_dma_read, .dma_write = s_dma_write,                 \
	  .dma_cmp_swap = s_cmp_swap, .dma_fetch_add = s_fetch_add,         \
	  .now_ns = s_now, .rx_burst = rx, .tx_burst = tx,                  \
	  .pkt_alloc = s_alloc, .pkt_free = s_free, .link_up = s_link_up,   \
	  .notify_host = s_notify, .log = s_log }

static const struct snic_hal_ops ops0 = SHIM_OPS(rx0, tx_split);
static const struct snic_hal_ops opsk = SHIM_OPS(rxk, txk);
static const struct snic_hal_ops opsk_own = SHIM_OPS(rxk, tx_split);
static const struct snic_hal_ops opsk_rxq = SHIM_OPS(rxk_own, txk);
static const struct snic_hal_ops opsk_own_rxq = SHIM_OPS(rxk_own, tx_split);

/* The optional ops, only where the board has them (NULL keeps meaning
 * "absent", core.h). */
static const struct snic_hal_ops *shim_ops(const struct snic_hal_ops *real,
					   const struct snic_hal_ops *base,
					   struct snic_hal_ops *own)
{
	*own = *base;
	own->dma_load_acquire32 = real->dma_load_acquire32 ? s_load_acq : NULL;
	own->netdev_rx = real->netdev_rx ? s_netdev_rx : NULL;
	own->dma_prepare = real->dma_prepare ? s_dma_prepare : NULL;
	own->dma_read_crc = real->dma_read_crc ? s_dma_read_crc : NULL;
	own->dma_write_crc = real->dma_write_crc ? s_dma_write_crc : NULL;
	own->dma_prefetch = real->dma_prefetch ? s_dma_prefetch : NULL;
	return own;
}

/* The port steers to our cores (hal.h rx_queues): one queue per core. */
static bool port_steers(const struct snic_hal *real, unsigned ncores)
{
	const struct snic_hal_ops *o = real->ops;

	return o->rx_queues && o->rx_burst_queue && ncores > 1 &&
	       (ncores & (ncores - 1)) == 0 &&
	       o->rx_queues(real->ctx) == ncores;
}

/* Core k's port in front of the board's HAL. */
const struct snic_hal *steer_port_init(struct snic_xc_port *pt,
				       const struct snic_hal *real,
				       struct snic_nic *view, unsigned k)
{
	const struct snic_hal_ops *base = &ops0;

	pt->real = real;
	pt->view = view;
	pt->loop_head = pt->loop_tail = 0;
	pt->txq = 0;
	pt->rxq = 0;
	if (k && real->ops->tx_queues && real->ops->tx_burst_queue &&
	    k < real->ops->tx_queues(real->ctx))
		pt->txq = (uint16_t)k;
	if (k && port_steers(real, view->sh->xc.ncores))
		pt->rxq = (uint16_t)k;
	if (k)
		base = pt->rxq ? (pt->txq ? &opsk_own_rxq : &opsk_rxq)
			       : (pt->txq ? &opsk_own : &opsk);
	pt->hal.ops = shim_ops(real->ops, base, &pt->ops);
	pt->hal.ctx = pt;
	return &pt->hal;
}
