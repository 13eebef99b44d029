/* SPDX-License-Identifier: MIT */
/*
 * The core layer: what every poll pass and every upper layer uses, and
 * nothing that knows an RDMA object.  The HAL binding, the clock, DMA with
 * error counting, the TX queue, loopback and buffer cache, the event
 * queues to the host, counters and the generic timer wheel.  Everything
 * here takes a struct snic_core, which the NIC embeds (objects/objects.h).
 */
#ifndef SNIC_CORE_H
#define SNIC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/counters.h"
#include "core/timer_wheel.h"
#include "core/trace.h"
#include "core/xcore.h"
#include "snic/fw.h"
#include "snic/hal.h"
#include "snic/hostif.h"

#define SNIC_BURST          32   /* RX / TX burst (DPDK's usual)          */
#define SNIC_TXQ_SIZE       1024 /* frames waiting for the port           */
#define SNIC_LOOPQ_SIZE     1024 /* frames sent to ourselves (loopback)   */
#define SNIC_CTLQ_SIZE      64   /* control frames (ARP, ACK/NAK) waiting  */
#define SNIC_TX_BUDGET      128  /* new frames per poll pass              */
/* Frames taken from the port per pass, in bursts: as many as a peer like
 * us may send in one.  With one burst a pass against 128 frames sent, the
 * ring between two NICs filled whenever many QPs were sending (a QP sends
 * at most SNIC_QP_TX_BUDGET a turn): 1,000 QPs ran at ~48 % of the 1-QP
 * rate, ~60 % with this (snic-qpbench ratio, issue 11). */
#define SNIC_RX_BUDGET      SNIC_TX_BUDGET
#define SNIC_CMD_BUDGET     8    /* commands per poll pass                */
#define SNIC_CMD_RETRY_NS   10000 /* a waiting command is asked again     */
#define SNIC_HEARTBEAT_NS   (10u * 1000 * 1000)

struct snic_core {
	const struct snic_hal *hal;
	void *hal_ctx;
	const struct snic_hal_ops *ops;
	uint8_t *bar;
	struct snic_bar_hdr *hdr;
	struct snic_doorbells *db;
	struct snic_nic_config cfg;
	char name[16];
	uint8_t core_id;        /* this view's core (0: commands, the port)  */
	uint8_t loop_mac[6];    /* frames to it loop back on this core: our
				 * MAC with one core; none with several (the
				 * steering stage loops them, nic/steer.c)   */
	struct snic_xcore *xc;  /* the NIC's cores, NULL with one            */
	uint64_t now;           /* ns, read once per poll pass                */
	uint64_t next_heartbeat;
	uint32_t active_mtu;    /* bytes                                      */
	uint32_t active_mtu_enum;
	bool link_up;           /* port 0, refreshed with the statistics     */
	bool ctx_open[SNIC_MAX_CTX];
	uint32_t ctx_pid[SNIC_MAX_CTX]; /* given at CTX_OPEN (nic/guard.c)   */
	/* Page owner table (nic/grant.c), written by the board only: a
	 * granted context's DMA pages are [seg_first, seg_first + seg_npages)
	 * and nothing else; a context the host opened itself (seg_npages 0)
	 * gets the shared window [0, cfg.host_mem_size) only. */
	bool ctx_granted[SNIC_MAX_CTX];
	uint64_t own_pages;     /* granted slots: their doorbell pages and
				 * mailboxes looked at every pass, without
				 * the NIC page's hint (nic/doorbell.c)      */
	uint32_t seg_first[SNIC_MAX_CTX], seg_npages[SNIC_MAX_CTX];
	uint32_t eq_pi[SNIC_MAX_CTX]; /* our copy: the host may scribble     */
	/* free TX buffers taken from the HAL in bursts */
	struct snic_pkt *pkt_cache[SNIC_BURST];
	uint32_t npkt_cache;
	/* TX queue: frames built, not yet taken by the port */
	struct snic_pkt *txq[SNIC_TXQ_SIZE];
	uint32_t txq_head, txq_tail;
	/* control frames: handed to the port before any data frame */
	struct snic_pkt *ctlq[SNIC_CTLQ_SIZE];
	uint32_t ctlq_head, ctlq_tail;
	uint32_t tx_budget;     /* frames the transport may still build in
				 * this pass                                  */
	/* loopback: frames sent to our own MAC, drained by the RX path */
	struct snic_pkt *loopq[SNIC_LOOPQ_SIZE];
	uint32_t loopq_head, loopq_tail;

	uint64_t cnt[SNIC_CNT_MAX];
	/* statistics area in the BAR (published by nic/stats.c) */
	struct snic_stats *stats;
	uint64_t next_stats;    /* next look at requests and the link        */
	uint64_t next_publish;  /* next unrequested publication              */
	uint32_t stats_qp_next; /* next QP entry to refresh                  */
	uint32_t reset_seen;    /* last reset_req honoured                   */
	uint32_t pub_seen;      /* last pub_req honoured                     */
	/* contexts whose command waits (mr_dereg), asked again at
	 * cmd_wait_at (nic/cmd.c) */
	uint64_t cmd_wait;
	uint64_t cmd_wait_at;

	struct snic_tw tw;      /* deadlines (transport/timers.c files QPs)  */
#ifdef SNIC_TRACE
	struct snic_trace trace;
#endif
};

/* A latency trace point (core/trace.h): the HAL clock now, not the pass's. */
static inline void core_trace(struct snic_core *c, unsigned point, uint32_t arg)
{
#ifdef SNIC_TRACE
	struct snic_trace_ev *e = &c->trace.ev[c->trace.n++ & (SNIC_TRACE_SIZE - 1)];

	e->ns = c->ops->now_ns(c->hal_ctx);
	e->point = point;
	e->arg = arg;
#else
	(void)c;
	(void)point;
	(void)arg;
#endif
}

/* core.c */
const char *core_hal_missing(const struct snic_hal_ops *ops);
bool core_init(struct snic_core *c, const struct snic_nic_config *cfg,
	       const struct snic_hal *hal, void *bar);
void core_log(struct snic_core *c, int level, const char *msg);
struct snic_ctx_slot *core_ctx_slot(struct snic_core *c, unsigned ctx);

/* dma.c */
/* DMA addresses with this bit are the card's own device memory (the DM
 * area of the BAR, objects/dm.c), not host memory: no host page number
 * reaches it (32-bit page numbers of a window below 2^43 bytes). */
#define SNIC_PA_DM (1ull << 43)

int core_dm_copy(struct snic_core *c, uint64_t pa, void *buf, uint32_t len,
		 bool to_dm);

/* A copy from / to host memory (or device memory); -1, counted, when the
 * HAL refuses it.  Inline: every WQE, payload and CQE goes through here,
 * and the call cost more than the test (bench-instr). */
static inline int core_dma_read(struct snic_core *c, uint64_t pa, void *dst,
				uint32_t len)
{
	if ((pa & SNIC_PA_DM) ? core_dm_copy(c, pa, dst, len, false)
			      : c->ops->dma_read(c->hal_ctx, pa, dst, len)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}

/* Always in line: GCC left it out of line (13 instructions and a call
 * of every 64-B WRITE's, resp_write_only's); the test and the HAL's call
 * are all it is. */
static inline __attribute__((always_inline))
int core_dma_write(struct snic_core *c, uint64_t pa, const void *src,
		   uint32_t len)
{
	if ((pa & SNIC_PA_DM)
		    ? core_dm_copy(c, pa, (void *)(uintptr_t)src, len, true)
		    : c->ops->dma_write(c->hal_ctx, pa, src, len)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}
/* core_dma_read with the CRC register *crc advanced over the bytes and
 * their zero pad to a multiple of 4 (hal.h's dma_read_crc) where the HAL
 * folds it into the copy: 0 copied and folded, 1 copied only (*crc as
 * it was), -1 refused (counted). */
static inline int core_dma_read_crc(struct snic_core *c, uint64_t pa,
				    void *dst, uint32_t len, uint32_t *crc)
{
	if ((pa & SNIC_PA_DM) || !c->ops->dma_read_crc)
		return core_dma_read(c, pa, dst, len) ? -1 : 1;
	if (c->ops->dma_read_crc(c->hal_ctx, pa, dst, len, crc)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}
/* dma_write with the ICRC's register advanced over the payload and its
 * pad (hal.h's dma_write_crc): 0 written and folded, -1 failed (nothing
 * written), 1 not done (device memory, or a HAL without the op: the
 * caller checks the ICRC and copies the usual way).  A failure is not
 * counted here: every caller declines it (rx_fold_verdict) and the usual
 * path's write fails again and counts it, once. */
static inline int core_dma_write_crc(struct snic_core *c, uint64_t pa,
				     const void *src, uint32_t len,
				     uint32_t *crc)
{
	if ((pa & SNIC_PA_DM) || !c->ops->dma_write_crc)
		return 1;
	return c->ops->dma_write_crc(c->hal_ctx, pa, src, len, crc) ? -1 : 0;
}
/* Read-ahead of host memory the core will read soon (hal.h's
 * dma_prefetch); nothing where the HAL has none.  Device memory's
 * addresses (SNIC_PA_DM) lie outside every window: the HAL ignores them. */
static inline void core_dma_prefetch(struct snic_core *c, uint64_t pa,
				     uint32_t len)
{
	if (c->ops->dma_prefetch)
		c->ops->dma_prefetch(c->hal_ctx, pa, len);
}
int core_dma_load_acquire32(struct snic_core *c, uint64_t pa, uint32_t *val);
void core_dma_prepare(struct snic_core *c, uint64_t pa, uint64_t len);
int core_dma_cmp_swap(struct snic_core *c, uint64_t pa, uint64_t cmp,
		      uint64_t swap, uint64_t *old);
int core_dma_fetch_add(struct snic_core *c, uint64_t pa, uint64_t add,
		       uint64_t *old);

/* tx.c */
struct snic_pkt *core_pkt_refill(struct snic_core *c);

/* A frame buffer from the pass's cache, refilled from the HAL a burst at
 * a time; NULL (counted) when the port has none.  Inline: one per frame. */
static inline struct snic_pkt *core_pkt_alloc(struct snic_core *c)
{
	if (c->npkt_cache == 0)
		return core_pkt_refill(c);
	return c->pkt_cache[--c->npkt_cache];
}
/* A frame whose payload will follow hl header bytes and be copied in
 * with wide stores (and read back the same way by the ICRC check that
 * receives it): its start moved forward so that the payload begins on a
 * 64-byte line, as hal.h lets the core do.  A 64-byte store across two
 * lines costs two: snic-membench icrc on this machine's CPU, the TX pass
 * (copy + fold) of a 4 KiB WRITE frame 49 -> 70 GB/s, the receiver's
 * check 48 -> 65.  Left where it is when the buffer has no room for
 * need more bytes after the move. */
static inline void core_pkt_align(struct snic_pkt *p, uint32_t hl,
				  uint32_t need)
{
	uint32_t off = (uint32_t)(-(uintptr_t)(p->data + hl)) & 63u;

	if ((uint32_t)p->cap >= need + off) {
		p->data += off;
		p->cap = (uint16_t)(p->cap - off);
	}
}
void core_loop_copy(struct snic_core *c, const struct snic_pkt *pkt);
void core_pkt_unused(struct snic_core *c, struct snic_pkt *pkt);
void core_tx_rare(struct snic_core *c, struct snic_pkt *pkt);
void core_tx_ctl_rare(struct snic_core *c, struct snic_pkt *pkt);
/* A frame to our own MAC: it loops back on this core (tx.c). */
static inline bool core_tx_is_loop(const struct snic_core *c,
				   const struct snic_pkt *pkt)
{
	return pkt->len >= 6 && !memcmp(pkt->data, c->loop_mac, 6);
}
/* Queue a frame for the port, loop: it goes to our own MAC.  In line:
 * once per data frame, and its usual way is three stores; a frame to our
 * own MAC (loopback) or a full queue takes core_tx_rare, which decides
 * as before (loopback first).  A QP's template knows loop once per path
 * (hdr.c): its frames skip core_tx's compare of the MAC. */
static inline void core_tx_to(struct snic_core *c, struct snic_pkt *pkt,
			      bool loop)
{
	if (__builtin_expect(c->txq_tail - c->txq_head >= SNIC_TXQ_SIZE ||
			     loop, 0)) {
		core_tx_rare(c, pkt);
		return;
	}
	if (c->tx_budget)
		c->tx_budget--;
	c->txq[c->txq_tail++ % SNIC_TXQ_SIZE] = pkt;
}
static inline void core_tx(struct snic_core *c, struct snic_pkt *pkt)
{
	core_tx_to(c, pkt, core_tx_is_loop(c, pkt));
}
/* A control frame (ARP, ACK/NAK), ahead of every data frame.  In line
 * as core_tx: once per ACK; its full queue or loopback takes
 * core_tx_ctl_rare (tx.c). */
static inline void core_tx_ctl(struct snic_core *c, struct snic_pkt *pkt)
{
	if (__builtin_expect(c->ctlq_tail - c->ctlq_head >= SNIC_CTLQ_SIZE ||
			     core_tx_is_loop(c, pkt), 0)) {
		core_tx_ctl_rare(c, pkt);
		return;
	}
	CNT_INC(c, tx_ctl_frames);
	c->ctlq[c->ctlq_tail++ % SNIC_CTLQ_SIZE] = pkt;
}
uint32_t core_tx_room(const struct snic_core *c);
unsigned core_tx_flush(struct snic_core *c);
uint16_t core_loop_take(struct snic_core *c, struct snic_pkt **pkts,
			uint16_t n);
void core_tx_drop_all(struct snic_core *c);

/* xcore.c: a message to core `to`; false when its ring is full */
bool core_xc_send(struct snic_core *c, unsigned to,
		  const struct snic_xc_msg *m);
/* the same, waiting for room when the ring is full (counted once) */
void core_xc_send_wait(struct snic_core *c, unsigned to,
		       const struct snic_xc_msg *m);

/* event.c */
void core_event(struct snic_core *c, unsigned ctx, enum snic_event_type type,
		uint32_t obj);
void core_port_event(struct snic_core *c, bool up);

/* Bytes of the DMA window: the shared window, then the board's segments. */
static inline uint64_t core_window_size(const struct snic_core *c)
{
	return c->cfg.host_mem_size + c->cfg.seg_area_size;
}

/* [pa, pa + len) lies in host memory context ctx may use (nic/grant.c):
 * its own segment, or the shared window for a context without one. */
static inline bool core_ctx_range_ok(const struct snic_core *c, unsigned ctx,
				     uint64_t pa, uint64_t len)
{
	uint64_t lo = 0, hi = c->cfg.host_mem_size;

	if (c->seg_npages[ctx]) {
		lo = (uint64_t)c->seg_first[ctx] << SNIC_PAGE_SHIFT;
		hi = lo + ((uint64_t)c->seg_npages[ctx] << SNIC_PAGE_SHIFT);
	}
	return pa + len >= pa && pa >= lo && pa + len <= hi;
}

static inline uint32_t mtu_enum_to_bytes(uint32_t e)
{
	return (e >= 1 && e <= 5) ? (128u << e) : 0;
}

#endif /* SNIC_CORE_H */
