/* SPDX-License-Identifier: MIT */
/*
 * Polled virtio-net over virtio-mmio v2 (Virtio 1.1: 2.6 split virtqueues,
 * 4.2.2 MMIO registers, 4.2.3.1 driver initialisation, 5.1 network device).
 *
 * Queue 0 receives, queue 1 transmits.  Every RX descriptor is a single
 * device-writable buffer holding the 12-byte header and a whole frame; every
 * TX descriptor a single device-readable one.  RX descriptor i always serves
 * RX slot i; TX descriptors come from a free stack and return when the
 * device marks them used.
 *
 * Ordering with the device (another thread of the emulator, or a real
 * device): descriptors and ring entries are written before avail.idx is
 * published with release order; used.idx is read with acquire order before
 * the used entries it covers; a full barrier orders the avail.idx store
 * before the notify write and before reading used.flags.
 */
#include "virtio_net.h"

#include <string.h>

#include "arch.h"

#define VIRTIO_NET_F_STATUS  16u
#define VIRTIO_NET_S_LINK_UP 1u
#define VNET_CFG_STATUS      6u         /* config offset of the status word */
#define RXQ                  0u
#define TXQ                  1u

struct vnet_buf {
	struct snic_pkt pkt;
	uint8_t mem[VNET_BUF_SIZE] __attribute__((aligned(64)));
};

/* The header precedes the frame directly: mem[4..16) then mem[16..). */
static inline uint8_t *buf_hdr(struct vnet_buf *b)
{
	return b->mem + VNET_BUF_HEAD - VNET_HDR_LEN;
}

static inline struct vnet_buf *pkt_buf(struct snic_pkt *p)
{
	return p->priv;
}

size_t snic_vnet_pool_size(void)
{
	return (size_t)VNET_POOL_PKTS * sizeof(struct vnet_buf) +
	       (size_t)VNET_POOL_PKTS * sizeof(struct vnet_buf *);
}

/* ---------------------------------------------------------------------- */
/* Buffer pool.                                                            */

static struct vnet_buf *buf_get(struct snic_vnet *v)
{
	struct vnet_buf *b;

	if (v->nfree_bufs == 0)
		return NULL;
	b = v->free_bufs[--v->nfree_bufs];
	b->pkt.data = b->mem + VNET_BUF_HEAD;   /* the core may have moved */
	b->pkt.cap = VNET_FRAME_MAX;            /* them (hal.h)            */
	b->pkt.len = 0;
	b->pkt.port = 0;
	return b;
}

static void buf_put(struct snic_vnet *v, struct vnet_buf *b)
{
	if (v->nfree_bufs < VNET_POOL_PKTS)
		v->free_bufs[v->nfree_bufs++] = b;
}

/* ---------------------------------------------------------------------- */
/* Virtqueues.                                                             */

static void avail_push(struct vnet_queue *q, uint16_t desc)
{
	q->avail.ring[q->avail_idx % VNET_QSIZE] = desc;
	q->avail_idx++;
	q->pending_notify = 1;
}

/* Publish what avail_push queued and tell the device unless it said it
 * does not need to hear about it. */
static void avail_publish(struct snic_vnet *v, struct vnet_queue *q)
{
	if (!q->pending_notify)
		return;
	q->pending_notify = 0;
	__atomic_store_n(&q->avail.idx, q->avail_idx, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->used.flags, __ATOMIC_RELAXED) &
	    VIRTQ_USED_F_NO_NOTIFY)
		return;
	dsb_st();
	mmio_write32(v->base + VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
	v->st.notifies++;
}

static uint16_t used_ready(struct vnet_queue *q)
{
	uint16_t idx = __atomic_load_n(&q->used.idx, __ATOMIC_ACQUIRE);

	return (uint16_t)(idx - q->used_seen);
}

/* Take back the TX buffers the device is done with. */
static void tx_reclaim(struct snic_vnet *v)
{
	struct vnet_queue *q = &v->txq;
	uint16_t n = used_ready(q);

	while (n--) {
		uint32_t id = q->used.ring[q->used_seen % VNET_QSIZE].id;

		q->used_seen++;
		if (id >= VNET_QSIZE || q->buf[id] == NULL)
			continue;       /* a device bug; nothing to give back */
		buf_put(v, q->buf[id]);
		q->buf[id] = NULL;
		q->free_desc[q->nfree++] = (uint16_t)id;
	}
}

/* Give RX slot `slot` a buffer and make it available again. */
static int rx_post(struct snic_vnet *v, uint16_t slot, struct vnet_buf *b)
{
	struct vnet_queue *q = &v->rxq;

	if (b == NULL)
		b = buf_get(v);
	if (b == NULL) {
		v->rx_unposted[v->n_unposted++] = slot;
		v->st.rx_refill_short++;
		return -1;
	}
	q->buf[slot] = b;
	q->desc[slot].addr = (uint64_t)(uintptr_t)buf_hdr(b);
	q->desc[slot].len = VNET_HDR_LEN + VNET_FRAME_MAX;
	q->desc[slot].flags = VIRTQ_DESC_F_WRITE;
	q->desc[slot].next = 0;
	avail_push(q, slot);
	return 0;
}

static void rx_refill(struct snic_vnet *v)
{
	while (v->n_unposted) {
		struct vnet_buf *b = buf_get(v);

		if (b == NULL)
			return;
		rx_post(v, v->rx_unposted[--v->n_unposted], b);
	}
}

/* ---------------------------------------------------------------------- */
/* Set-up.                                                                 */

static int queue_setup(struct snic_vnet *v, struct vnet_queue *q,
		       uint16_t index, void (*err)(const char *))
{
	uintptr_t b = v->base;
	uint32_t max;

	memset(q, 0, sizeof(*q));
	q->index = index;
	mmio_write32(b + VIRTIO_MMIO_QUEUE_SEL, index);
	if (mmio_read32(b + VIRTIO_MMIO_QUEUE_READY) != 0) {
		err("virtio-net: queue already in use after reset");
		return -1;
	}
	max = mmio_read32(b + VIRTIO_MMIO_QUEUE_NUM_MAX);
	if (max < VNET_QSIZE) {
		err("virtio-net: device queues are smaller than 256 entries");
		return -1;
	}
	/* No interrupts: this driver polls. */
	q->avail.flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
	mmio_write32(b + VIRTIO_MMIO_QUEUE_NUM, VNET_QSIZE);
#define ADDR_PAIR(lo, ptr) do { \
		uint64_t a_ = (uint64_t)(uintptr_t)(ptr); \
		mmio_write32(b + (lo), (uint32_t)a_); \
		mmio_write32(b + (lo) + 4, (uint32_t)(a_ >> 32)); \
	} while (0)
	ADDR_PAIR(VIRTIO_MMIO_QUEUE_DESC_LOW, q->desc);
	ADDR_PAIR(VIRTIO_MMIO_QUEUE_DRIVER_LOW, &q->avail);
	ADDR_PAIR(VIRTIO_MMIO_QUEUE_DEVICE_LOW, &q->used);
#undef ADDR_PAIR
	dsb_st();
	mmio_write32(b + VIRTIO_MMIO_QUEUE_READY, 1);
	return 0;
}

static int find_device(struct snic_vnet *v, uintptr_t base, unsigned n,
		       uintptr_t stride, void (*err)(const char *))
{
	for (unsigned i = n; i-- > 0;) {
		uintptr_t b = base + i * stride;

		if (mmio_read32(b + VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC ||
		    mmio_read32(b + VIRTIO_MMIO_DEVICE_ID) != VIRTIO_ID_NET)
			continue;
		if (mmio_read32(b + VIRTIO_MMIO_VERSION) != 2) {
			err("virtio-net: legacy (version 1) virtio-mmio transport; "
			    "start QEMU with -global virtio-mmio.force-legacy=false");
			return -1;
		}
		v->base = b;
		return 0;
	}
	err("virtio-net: no virtio-net device on the virtio-mmio transports");
	return -1;
}

static int negotiate(struct snic_vnet *v, void (*err)(const char *))
{
	uintptr_t b = v->base;
	uint32_t lo, hi, want_lo = 0;

	mmio_write32(b + VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	lo = mmio_read32(b + VIRTIO_MMIO_DEVICE_FEATURES);
	mmio_write32(b + VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	hi = mmio_read32(b + VIRTIO_MMIO_DEVICE_FEATURES);
	if (!(hi & (1u << (VIRTIO_F_VERSION_1 - 32)))) {
		err("virtio-net: device does not offer VIRTIO_F_VERSION_1");
		return -1;
	}
	if (lo & (1u << VIRTIO_NET_F_STATUS))
		want_lo |= 1u << VIRTIO_NET_F_STATUS;
	v->has_status = (want_lo & (1u << VIRTIO_NET_F_STATUS)) != 0;
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES, want_lo);
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES,
		     1u << (VIRTIO_F_VERSION_1 - 32));
	mmio_write32(b + VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE |
		     VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	if (!(mmio_read32(b + VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK)) {
		err("virtio-net: device refused our feature set");
		return -1;
	}
	return 0;
}

int snic_vnet_init(struct snic_vnet *v, uintptr_t base, unsigned n,
		   uintptr_t stride, const uint8_t mac[6], void *pool,
		   void (*err)(const char *msg))
{
	struct vnet_buf *bufs = pool;

	memset(v, 0, sizeof(*v));
	memcpy(v->mac, mac, 6);
	if (find_device(v, base, n, stride, err) != 0)
		return -1;
	mmio_write32(v->base + VIRTIO_MMIO_STATUS, 0);          /* reset */
	mmio_write32(v->base + VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	mmio_write32(v->base + VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE |
		     VIRTIO_STATUS_DRIVER);
	if (negotiate(v, err) != 0)
		goto failed;

	v->pool = bufs;
	v->free_bufs = (struct vnet_buf **)(void *)(bufs + VNET_POOL_PKTS);
	for (uint32_t i = 0; i < VNET_POOL_PKTS; i++) {
		struct vnet_buf *b = &bufs[i];

		b->pkt.data = b->mem + VNET_BUF_HEAD;
		b->pkt.cap = VNET_FRAME_MAX;
		b->pkt.priv = b;
		v->free_bufs[i] = &bufs[VNET_POOL_PKTS - 1 - i];
	}
	v->nfree_bufs = VNET_POOL_PKTS;

	if (queue_setup(v, &v->rxq, RXQ, err) != 0 ||
	    queue_setup(v, &v->txq, TXQ, err) != 0)
		goto failed;
	for (uint16_t i = 0; i < VNET_QSIZE; i++)
		v->txq.free_desc[v->txq.nfree++] = (uint16_t)(VNET_QSIZE - 1 - i);
	for (uint16_t i = 0; i < VNET_QSIZE; i++)
		rx_post(v, i, NULL);
	mmio_write32(v->base + VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE |
		     VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
		     VIRTIO_STATUS_DRIVER_OK);
	avail_publish(v, &v->rxq);
	return 0;
failed:
	mmio_write32(v->base + VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
	return -1;
}

/* ---------------------------------------------------------------------- */
/* Data path.                                                              */

uint16_t snic_vnet_rx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	struct snic_vnet *v = hal;
	struct vnet_queue *q = &v->rxq;
	uint16_t ready, got = 0;

	(void)port;
	if (v->n_unposted)
		rx_refill(v);
	ready = used_ready(q);
	while (ready-- && got < n) {
		struct virtq_used_elem e = q->used.ring[q->used_seen % VNET_QSIZE];
		struct vnet_buf *b;

		q->used_seen++;
		if (e.id >= VNET_QSIZE || (b = q->buf[e.id]) == NULL)
			continue;
		q->buf[e.id] = NULL;
		if (e.len < VNET_HDR_LEN + 14 ||
		    e.len > VNET_HDR_LEN + VNET_FRAME_MAX) {
			v->st.rx_bad_len++;
			rx_post(v, (uint16_t)e.id, b);     /* same buffer back */
			continue;
		}
		b->pkt.len = (uint16_t)(e.len - VNET_HDR_LEN);
		b->pkt.port = 0;
		pkts[got++] = &b->pkt;
		rx_post(v, (uint16_t)e.id, NULL);
	}
	v->st.rx_frames += got;
	avail_publish(v, q);
	return got;
}

uint16_t snic_vnet_tx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	struct snic_vnet *v = hal;
	struct vnet_queue *q = &v->txq;
	uint16_t sent = 0;

	(void)port;
	tx_reclaim(v);
	for (; sent < n && q->nfree; sent++) {
		struct vnet_buf *b = pkt_buf(pkts[sent]);
		uint16_t d = q->free_desc[--q->nfree];
		uint16_t len = pkts[sent]->len;

		if (len > VNET_FRAME_MAX)
			len = VNET_FRAME_MAX;   /* the core never does this */
		/* the header right before the frame, wherever the core put
		 * the frame's start (hal.h) */
		uint8_t *hdr = pkts[sent]->data - VNET_HDR_LEN;

		memset(hdr, 0, VNET_HDR_LEN);
		q->buf[d] = b;
		q->desc[d].addr = (uint64_t)(uintptr_t)hdr;
		q->desc[d].len = VNET_HDR_LEN + len;
		q->desc[d].flags = 0;
		q->desc[d].next = 0;
		avail_push(q, d);
	}
	if (sent < n)
		v->st.tx_ring_full += (uint64_t)(n - sent);
	v->st.tx_frames += sent;
	avail_publish(v, q);
	return sent;
}

uint16_t snic_vnet_pkt_alloc(void *hal, struct snic_pkt **pkts, uint16_t n)
{
	struct snic_vnet *v = hal;
	uint16_t i;

	if (v->nfree_bufs < n)
		tx_reclaim(v);
	for (i = 0; i < n; i++) {
		struct vnet_buf *b = buf_get(v);

		if (b == NULL)
			break;
		pkts[i] = &b->pkt;
	}
	return i;
}

void snic_vnet_pkt_free(void *hal, struct snic_pkt **pkts, uint16_t n)
{
	struct snic_vnet *v = hal;

	for (uint16_t i = 0; i < n; i++)
		if (pkts[i] != NULL)
			buf_put(v, pkt_buf(pkts[i]));
}

int snic_vnet_link_up(void *hal, uint16_t port)
{
	struct snic_vnet *v = hal;

	(void)port;
	if (!v->has_status)
		return 1;
	return (mmio_read16(v->base + VIRTIO_MMIO_CONFIG + VNET_CFG_STATUS) &
		VIRTIO_NET_S_LINK_UP) != 0;
}
