/* SPDX-License-Identifier: MIT */
/*
 * Transmit: the HAL's buffers taken in bursts, the TX queue handed to the
 * port once per pass, and loopback for frames addressed to ourselves.
 * Control frames (ARP, ACK/NAK) have a queue of their own that the port
 * gets first: a burst of data can delay them by one port burst at most,
 * never starve them (a lost ARP reply fails the peer's neighbour entry,
 * a late ACK costs the peer a retransmission).
 */
#include <string.h>

#include "core/core.h"

/* core_pkt_alloc (core.h) found the cache empty: a burst from the HAL. */
struct snic_pkt *core_pkt_refill(struct snic_core *c)
{
	c->npkt_cache = c->ops->pkt_alloc(c->hal_ctx, c->pkt_cache, SNIC_BURST);
	if (c->npkt_cache == 0) {
		CNT_INC(c, tx_no_buffer);
		return NULL;
	}
	return c->pkt_cache[--c->npkt_cache];
}

/* A buffer taken with core_pkt_alloc that will not be sent after all
 * (its payload could not be read): back to the cache, nothing queued. */
void core_pkt_unused(struct snic_core *c, struct snic_pkt *pkt)
{
	if (c->npkt_cache < SNIC_BURST)
		c->pkt_cache[c->npkt_cache++] = pkt;
	else
		c->ops->pkt_free(c->hal_ctx, &pkt, 1);
}

uint32_t core_tx_room(const struct snic_core *c)
{
	return SNIC_TXQ_SIZE - (c->txq_tail - c->txq_head);
}

/* Loopback: a frame addressed to our own MAC (two QPs of this NIC
 * connected through its own GID) never reaches the port; it goes round to
 * our own receive path, which applies the same transport rules. */
static void loop_push(struct snic_core *c, struct snic_pkt *pkt)
{
	if (c->loopq_tail - c->loopq_head >= SNIC_LOOPQ_SIZE) {
		CNT_INC(c, tx_queue_full);
		c->ops->pkt_free(c->hal_ctx, &pkt, 1);
		return;
	}
	if (c->tx_budget)
		c->tx_budget--;
	CNT_INC(c, loopback_frames);
	c->loopq[c->loopq_tail++ % SNIC_LOOPQ_SIZE] = pkt;
}

static inline bool loop_to_self(struct snic_core *c, struct snic_pkt *pkt)
{
	if (pkt->len < 6 || memcmp(pkt->data, c->loop_mac, 6) != 0)
		return false;
	loop_push(c, pkt);
	return true;
}

/* A copy of a frame that also goes to the port (multicast: members on
 * this NIC hear it as a real NIC's loopback delivers it). */
void core_loop_copy(struct snic_core *c, const struct snic_pkt *pkt)
{
	struct snic_pkt *cp = core_pkt_alloc(c);

	if (!cp)
		return;
	if (pkt->len > cp->cap) {
		core_pkt_unused(c, cp);
		return;
	}
	memcpy(cp->data, pkt->data, pkt->len);
	cp->len = pkt->len;
	loop_push(c, cp);
}

/* Up to n looped-back frames, oldest first (the RX path takes them). */
uint16_t core_loop_take(struct snic_core *c, struct snic_pkt **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && c->loopq_head != c->loopq_tail)
		pkts[k++] = c->loopq[c->loopq_head++ % SNIC_LOOPQ_SIZE];
	return k;
}

/* core_tx's frame to our own MAC, or one for a full queue. */
void core_tx_rare(struct snic_core *c, struct snic_pkt *pkt)
{
	if (loop_to_self(c, pkt))
		return;
	if (core_tx_room(c) == 0) {
		CNT_INC(c, tx_queue_full);
		c->ops->pkt_free(c->hal_ctx, &pkt, 1);
		return;
	}
	if (c->tx_budget)
		c->tx_budget--;
	c->txq[c->txq_tail++ % SNIC_TXQ_SIZE] = pkt;
}

/* A control frame: ahead of every data frame; when its own queue is full
 * (a flood of them), it waits with the data.  core_tx_ctl's (core.h)
 * full queue or loopback; the whole decision, as before. */
void core_tx_ctl_rare(struct snic_core *c, struct snic_pkt *pkt)
{
	if (c->ctlq_tail - c->ctlq_head >= SNIC_CTLQ_SIZE) {
		core_tx_rare(c, pkt);
		return;
	}
	if (loop_to_self(c, pkt))
		return;
	CNT_INC(c, tx_ctl_frames);
	c->ctlq[c->ctlq_tail++ % SNIC_CTLQ_SIZE] = pkt;
}

/* The link is down: drop what is queued, as a real port does (frames held
 * until a peer comes back would reach its new QPs with stale PSNs). */
static unsigned tx_drop_link_down(struct snic_core *c)
{
	while (c->ctlq_head != c->ctlq_tail) {
		struct snic_pkt *p = c->ctlq[c->ctlq_head++ % SNIC_CTLQ_SIZE];

		c->ops->pkt_free(c->hal_ctx, &p, 1);
		CNT_INC(c, tx_drop_link_down);
	}
	while (c->txq_head != c->txq_tail) {
		struct snic_pkt *p = c->txq[c->txq_head++ % SNIC_TXQ_SIZE];

		c->ops->pkt_free(c->hal_ctx, &p, 1);
		CNT_INC(c, tx_drop_link_down);
	}
	return 0;
}

/* Hand the frames of ring q (size qsize, indexes *head .. tail) to the
 * port in bursts; false when the port took less than offered.  A burst
 * is a run of the ring itself, up to its end (the next one starts at
 * its beginning), not a copy of it: every HAL's tx_burst (DPDK, virtio,
 * the tests' fake) only reads the array, taking its first frames. */
static bool tx_ring_flush(struct snic_core *c, struct snic_pkt **q,
			  uint32_t qsize, uint32_t *head, uint32_t tail,
			  unsigned *sent_total)
{
	while (*head != tail) {
		uint32_t at = *head % qsize, n = tail - *head, i;
		struct snic_pkt **burst = q + at;
		uint32_t bytes = 0;     /* <= SNIC_BURST frames */
		uint16_t sent;

		if (n > SNIC_BURST)
			n = SNIC_BURST;
		if (n > qsize - at)
			n = qsize - at;
		/* the bytes are summed before the port takes the frames: a
		 * frame it took is no longer ours to read (another thread may
		 * already have received, freed and reused it); the ones it
		 * left are, and come off the sum */
		for (i = 0; i < n; i++) {
			core_trace(c, SNIC_TR_TX, burst[i]->len);
			bytes += burst[i]->len;
		}
		sent = c->ops->tx_burst(c->hal_ctx, 0, burst, (uint16_t)n);
		for (i = sent; i < n; i++)
			bytes -= burst[i]->len;
		CNT_ADD(c, tx_bytes, bytes);
		CNT_ADD(c, tx_frames, sent);
		*head += sent;
		*sent_total += sent;
		if (sent < n)
			return false;
	}
	return true;
}

/* Hand queued frames to the port in bursts, control frames first; what
 * it does not take stays queued for the next pass. */
unsigned core_tx_flush(struct snic_core *c)
{
	unsigned sent_total = 0;

	if (!c->link_up)
		return tx_drop_link_down(c);
	if (tx_ring_flush(c, c->ctlq, SNIC_CTLQ_SIZE, &c->ctlq_head,
			  c->ctlq_tail, &sent_total))
		tx_ring_flush(c, c->txq, SNIC_TXQ_SIZE, &c->txq_head,
			      c->txq_tail, &sent_total);
	return sent_total;
}

/* Stop: every buffer we hold goes back to the HAL. */
void core_tx_drop_all(struct snic_core *c)
{
	while (c->ctlq_head != c->ctlq_tail) {
		struct snic_pkt *p = c->ctlq[c->ctlq_head++ % SNIC_CTLQ_SIZE];

		c->ops->pkt_free(c->hal_ctx, &p, 1);
	}
	while (c->txq_head != c->txq_tail) {
		struct snic_pkt *p = c->txq[c->txq_head++ % SNIC_TXQ_SIZE];

		c->ops->pkt_free(c->hal_ctx, &p, 1);
	}
	while (c->loopq_head != c->loopq_tail) {
		struct snic_pkt *p = c->loopq[c->loopq_head++ % SNIC_LOOPQ_SIZE];

		c->ops->pkt_free(c->hal_ctx, &p, 1);
	}
	if (c->npkt_cache)
		c->ops->pkt_free(c->hal_ctx, c->pkt_cache, (uint16_t)c->npkt_cache);
	c->npkt_cache = 0;
}
