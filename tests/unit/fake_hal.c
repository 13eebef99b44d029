/* SPDX-License-Identifier: MIT */
/* The fake HAL of fake_hal.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hal.h"
#include "snic/fw.h"

#define FH_SLOT (FH_BUF_CAP + FH_GUARD)
#define FH_CANARY 0xa5

static struct fake_hal *FH(void *p)
{
	return p;
}

static bool range_ok(const struct fake_hal *fh, uint64_t pa, uint64_t len)
{
	return pa + len >= pa && pa + len <= fh->mem_size;
}

/* [pa, pa + len) touches the failing window [lo, hi). */
static bool hits(uint64_t pa, uint64_t len, uint64_t lo, uint64_t hi)
{
	return hi && pa < hi && pa + len > lo;
}

/* A read of [pa, pa + len): its part in the watched window, counted. */
static void watch(struct fake_hal *fh, uint64_t pa, uint64_t len)
{
	uint64_t lo, hi;

	if (!len || !hits(pa, len, fh->watch_lo, fh->watch_hi))
		return;
	lo = pa > fh->watch_lo ? pa : fh->watch_lo;
	hi = pa + len < fh->watch_hi ? pa + len : fh->watch_hi;
	fh->watch_reads++;
	fh->watch_bytes += hi - lo;
	fh->watch_lines += ((hi - 1) >> 6) - (lo >> 6) + 1;
	if (hi - fh->watch_lo > fh->watch_end)
		fh->watch_end = hi - fh->watch_lo;
}

static int fh_dma_read(void *hal, uint64_t pa, void *dst, uint32_t len)
{
	struct fake_hal *fh = FH(hal);

	if (!range_ok(fh, pa, len) ||
	    hits(pa, len, fh->fail_rd_lo, fh->fail_rd_hi)) {
		fh->dma_faults++;
		return -1;
	}
	memcpy(dst, fh->mem + pa, len);
	fh->dma_reads++;
	watch(fh, pa, len);
	return 0;
}

/* The copy with the payload's ICRC folded in, as the emu board's. */
static int fh_dma_read_crc(void *hal, uint64_t pa, void *dst, uint32_t len,
			   uint32_t *crc)
{
	struct fake_hal *fh = FH(hal);

	if (!range_ok(fh, pa, len) ||
	    hits(pa, len, fh->fail_rd_lo, fh->fail_rd_hi)) {
		fh->dma_faults++;
		return -1;
	}
	*crc = snic_dma_copy_crc(*crc, dst, fh->mem + pa, len);
	fh->dma_reads++;
	fh->crc_reads++;
	watch(fh, pa, len);
	return 0;
}

/* A DMA write's checks, its fault and its hook; false: it fails. */
static bool wr_ok(struct fake_hal *fh, uint64_t pa, const void *src,
		  uint32_t len)
{
	if (!range_ok(fh, pa, len) ||
	    hits(pa, len, fh->fail_wr_lo, fh->fail_wr_hi)) {
		fh->dma_faults++;
		return false;
	}
	if (fh->wr_hook)
		fh->wr_hook(fh->wr_hook_arg, pa, src, len);
	fh->dma_writes++;
	return true;
}

static int fh_dma_write(void *hal, uint64_t pa, const void *src, uint32_t len)
{
	struct fake_hal *fh = FH(hal);

	if (!wr_ok(fh, pa, src, len))
		return -1;
	memcpy(fh->mem + pa, src, len);
	return 0;
}

/* The placement with the ICRC checked in the same pass, as the emu
 * board's: fh_dma_write's checks, hook and count. */
static int fh_dma_write_crc(void *hal, uint64_t pa, const void *src,
			    uint32_t len, uint32_t *crc)
{
	struct fake_hal *fh = FH(hal);

	if (!wr_ok(fh, pa, src, len))
		return -1;
	*crc = snic_dma_copy_crc_in(*crc, fh->mem + pa, src, len);
	fh->crc_writes++;
	return 0;
}

static int fh_load_acquire32(void *hal, uint64_t pa, uint32_t *val)
{
	struct fake_hal *fh = FH(hal);

	if ((pa & 3) || !range_ok(fh, pa, 4) ||
	    hits(pa, 4, fh->fail_rd_lo, fh->fail_rd_hi)) {
		fh->dma_faults++;
		return -1;
	}
	*val = __atomic_load_n((const uint32_t *)(const void *)(fh->mem + pa),
			       __ATOMIC_ACQUIRE);
	fh->acquire_loads++;
	return 0;
}

static int fh_cmp_swap(void *hal, uint64_t pa, uint64_t cmp, uint64_t swap,
		       uint64_t *old)
{
	struct fake_hal *fh = FH(hal);
	uint64_t v;

	if ((pa & 7) || !range_ok(fh, pa, 8) || fh->fail_atomics) {
		fh->dma_faults++;
		return -1;
	}
	memcpy(&v, fh->mem + pa, 8);
	*old = v;
	if (v == cmp)
		memcpy(fh->mem + pa, &swap, 8);
	fh->atomics++;
	return 0;
}

static int fh_fetch_add(void *hal, uint64_t pa, uint64_t add, uint64_t *old)
{
	struct fake_hal *fh = FH(hal);
	uint64_t v;

	if ((pa & 7) || !range_ok(fh, pa, 8) || fh->fail_atomics) {
		fh->dma_faults++;
		return -1;
	}
	memcpy(&v, fh->mem + pa, 8);
	*old = v;
	v += add;
	memcpy(fh->mem + pa, &v, 8);
	fh->atomics++;
	return 0;
}

static uint64_t fh_now(void *hal)
{
	return *FH(hal)->clock;
}

/* ---------------------------------------------------------------------- */
/* Pool.                                                                   */

/* Buffer i's own start (a frame's data may begin up to 63 bytes in). */
static uint8_t *fh_buf(struct fake_hal *fh, size_t i)
{
	return fh->bufs + i * FH_SLOT;
}

static struct snic_pkt *pool_get(struct fake_hal *fh)
{
	uint32_t out = FH_POOL_SIZE - fh->nfree;

	if (fh->nfree == 0 || (fh->alloc_limit && out >= fh->alloc_limit))
		return NULL;
	uint16_t i = fh->free_stack[--fh->nfree];
	struct snic_pkt *p = &fh->pkts[i];

	fh->in_use[i] = true;
	p->data = fh_buf(fh, i);        /* the core may have moved them */
	p->cap = FH_BUF_CAP;            /* (hal.h)                      */
	p->len = 0;
	p->port = 0;
	fh->allocs++;
	return p;
}

static void pool_put(struct fake_hal *fh, struct snic_pkt *p)
{
	ptrdiff_t i = p - fh->pkts;

	if (i < 0 || i >= FH_POOL_SIZE || &fh->pkts[i] != p || !fh->in_use[i]) {
		fh->bad_frees++;
		return;
	}
	for (unsigned g = 0; g < FH_GUARD; g++)
		if (fh_buf(fh, (size_t)i)[FH_BUF_CAP + g] != FH_CANARY) {
			fh->overflows++;
			memset(fh_buf(fh, (size_t)i) + FH_BUF_CAP, FH_CANARY,
			       FH_GUARD);
			break;
		}
	fh->in_use[i] = false;
	fh->free_stack[fh->nfree++] = (uint16_t)i;
	fh->frees++;
}

static uint16_t fh_pkt_alloc(void *hal, struct snic_pkt **pkts, uint16_t n)
{
	struct fake_hal *fh = FH(hal);
	uint16_t k;

	for (k = 0; k < n; k++) {
		pkts[k] = pool_get(fh);
		if (!pkts[k])
			break;
	}
	return k;
}

static void fh_pkt_free(void *hal, struct snic_pkt **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		pool_put(FH(hal), pkts[i]);
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

static int fifo_push(struct fake_link *l, int to, const uint8_t *data,
		     uint16_t len)
{
	struct fl_frame *f;

	if (l->tail[to] - l->head[to] >= FL_FIFO_SIZE)
		return -1;
	f = &l->fifo[to][l->tail[to] % FL_FIFO_SIZE];
	f->data = malloc(len ? len : 1);
	if (!f->data)
		abort();
	memcpy(f->data, data, len);
	f->len = len;
	l->tail[to]++;
	return 0;
}

/* tx_burst on queue q: not named fh_* (tools/bench-instr.sh stops
 * counting in every fh_* function it enters, and starts again in a
 * nested one) */
static uint16_t link_tx(void *hal, uint16_t port, uint16_t q,
			struct snic_pkt **pkts, uint16_t n)
{
	struct fake_hal *fh = FH(hal);
	struct fake_link *l = fh->link;
	int to = !fh->side;
	uint16_t k;

	if (port != 0)
		return 0;
	if (q >= fh->tx_queues) {
		fh->bad_txq++;
		return 0;
	}
	for (k = 0; k < n; k++) {
		struct snic_pkt *p = pkts[k];
		enum fl_action a = FL_PASS;

		if (!l) {
			fh->tx_dropped_nolink++;
			pool_put(fh, p);
			continue;
		}
		/* need room for a duplicate too */
		if (l->tail[to] - l->head[to] + 2 > FL_FIFO_SIZE)
			break;
		if (p->len > p->cap)    /* its data may begin inside it */
			fh->overflows++;
		if (l->hook)
			a = l->hook(l->hook_arg, fh->side, p->data, &p->len);
		l->sent[fh->side]++;
		fh->tx_frames++;
		fh->tx_frames_q[q]++;
		if (a == FL_DROP) {
			l->dropped[fh->side]++;
		} else {
			fifo_push(l, to, p->data, p->len);
			if (a == FL_DUP) {
				l->duplicated[fh->side]++;
				fifo_push(l, to, p->data, p->len);
			}
		}
		pool_put(fh, p);
	}
	return k;
}

static void fh_fault_free(void *ctx, struct snic_pkt *p)
{
	pool_put(FH(ctx), p);
}

static struct snic_pkt *fh_fault_clone(void *ctx, const struct snic_pkt *p)
{
	struct snic_pkt *c = pool_get(FH(ctx));

	if (c) {
		memcpy(c->data, p->data, p->len);
		c->len = p->len;
	}
	return c;
}

void fake_hal_set_fault(struct fake_hal *fh, const struct snic_fault_cfg *cfg)
{
	fh->fault_io.ctx = fh;
	fh->fault_io.free = fh_fault_free;
	fh->fault_io.clone = fh_fault_clone;
	if (fh->fault_on)
		snic_fault_drain(&fh->fault, &fh->fault_io);
	fh->fault_on = cfg != NULL;
	if (cfg)
		snic_fault_init(&fh->fault, cfg);
}

static uint16_t fh_tx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	return link_tx(hal, port, 0, pkts, n);
}

static uint16_t fh_tx_burst_queue(void *hal, uint16_t port, uint16_t q,
				  struct snic_pkt **pkts, uint16_t n)
{
	return link_tx(hal, port, q, pkts, n);
}

static uint16_t fh_tx_queues(void *hal)
{
	return FH(hal)->tx_queues;
}

/* Frames off the link, as the wire and the receive faults let them.
 * This and the queue helpers below are not named fh_* (link_tx says
 * why): called from an fh_* op, they stay uncounted. */
static uint16_t link_take(struct fake_hal *fh, struct snic_pkt **pkts,
			  uint16_t n)
{
	struct fake_link *l = fh->link;
	int me = fh->side;
	uint16_t k = 0;

	if (!l)
		return 0;
	if (fh->fault_on && n > SNIC_FAULT_BURST)
		n = SNIC_FAULT_BURST;
	while (k < n && l->head[me] != l->tail[me]) {
		struct fl_frame *f = &l->fifo[me][l->head[me] % FL_FIFO_SIZE];
		struct snic_pkt *p;

		if (fh->rx_gap_ns && *fh->clock < fh->rx_next_at)
			break;
		if (fh->rx_period_ns && *fh->clock % fh->rx_period_ns >=
		    fh->rx_period_ns - fh->rx_pause_ns)
			break;
		p = pool_get(fh);
		if (!p)
			break;
		if (fh->rx_gap_ns)
			fh->rx_next_at = (fh->rx_next_at > *fh->clock
					  ? fh->rx_next_at : *fh->clock) + fh->rx_gap_ns;
		memcpy(p->data, f->data, f->len);
		p->len = f->len;
		p->port = 0;
		free(f->data);
		f->data = NULL;
		l->head[me]++;
		fh->rx_frames++;
		pkts[k++] = p;
	}
	if (fh->fault_on)
		k = snic_fault_rx(&fh->fault, pkts, k, n, *fh->clock, &fh->fault_io);
	return k;
}

/* The port's steering: what the link brings, onto the queues. */
static void rxq_fill(struct fake_hal *fh)
{
	struct snic_pkt *p[32];
	uint16_t n = link_take(fh, p, 32);

	for (uint16_t i = 0; i < n; i++) {
		unsigned q = fh->rxq_force >= 0
			? (unsigned)fh->rxq_force
			: snic_hal_rx_queue(p[i]->data, p[i]->len, fh->rx_queues);

		if (q >= fh->rx_queues ||
		    fh->rxq[q].tail - fh->rxq[q].head >= FH_RXQ_SIZE) {
			fh->rxq_full++;
			pool_put(fh, p[i]);
			continue;
		}
		fh->rxq[q].p[fh->rxq[q].tail++ % FH_RXQ_SIZE] = p[i];
		fh->rx_frames_q[q]++;
	}
}

static uint16_t rxq_pop(struct fake_hal *fh, uint16_t q,
			   struct snic_pkt **pkts, uint16_t n)
{
	uint16_t k = 0;

	if (fh->rxq[q].head == fh->rxq[q].tail)
		rxq_fill(fh);
	while (k < n && fh->rxq[q].head != fh->rxq[q].tail)
		pkts[k++] = fh->rxq[q].p[fh->rxq[q].head++ % FH_RXQ_SIZE];
	return k;
}

static uint16_t fh_rx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	struct fake_hal *fh = FH(hal);

	if (port != 0)
		return 0;
	if (fh->rx_queues > 1)
		return rxq_pop(fh, 0, pkts, n);
	return link_take(fh, pkts, n);
}

static uint16_t fh_rx_burst_queue(void *hal, uint16_t port, uint16_t q,
				  struct snic_pkt **pkts, uint16_t n)
{
	struct fake_hal *fh = FH(hal);

	if (port != 0 || q == 0 || q >= fh->rx_queues) {
		fh->bad_rxq++;
		return 0;
	}
	return rxq_pop(fh, q, pkts, n);
}

static uint16_t fh_rx_queues(void *hal)
{
	return FH(hal)->rx_queues;
}

/* Frames wait for queue q: on it, or on the link bound for it. */
static int fh_rx_ready(void *hal, uint16_t port, uint16_t q)
{
	struct fake_hal *fh = FH(hal);
	const struct fake_link *l = fh->link;

	if (port != 0 || q >= fh->rx_queues)
		return 0;
	if (fh->rx_queues > 1 && fh->rxq[q].head != fh->rxq[q].tail)
		return 1;
	for (uint32_t i = l ? l->head[fh->side] : 0;
	     l && i != l->tail[fh->side]; i++) {
		const struct fl_frame *f = &l->fifo[fh->side][i % FL_FIFO_SIZE];
		unsigned want = fh->rxq_force >= 0
			? (unsigned)fh->rxq_force
			: snic_hal_rx_queue(f->data, f->len, fh->rx_queues);

		if (want == q)
			return 1;
	}
	return 0;
}

void fake_hal_set_rx_queues(struct fake_hal *fh, unsigned n)
{
	fh->rx_queues = (uint16_t)(n >= 1 && n <= FH_MAX_RXQ &&
				   (n & (n - 1)) == 0 ? n : 1);
}

static int fh_link_up(void *hal, uint16_t port)
{
	return port == 0 && FH(hal)->link_is_up;
}

static void fh_notify(void *hal, const void *word)
{
	FH(hal)->notifies++;
	FH(hal)->last_notify = word;
}

static void fh_log(void *hal, int level, const char *msg)
{
	struct fake_hal *fh = FH(hal);

	if (level >= 0 && level < 4)
		fh->log_count[level]++;
	snprintf(fh->log[fh->nlog++ % FH_LOG_KEEP], FH_LOG_LEN, "%s", msg);
	if (fh->verbose)
		fprintf(stderr, "[fw %d] %s\n", level, msg);
}

static void fh_dma_prepare(void *hal, uint64_t pa, uint64_t len)
{
	struct fake_hal *fh = FH(hal);
	unsigned k = (unsigned)(fh->prepares++ % FH_PREP_KEEP);

	fh->prep_pa[k] = pa;
	fh->prep_len[k] = len;
}

/* A hint only: counted and shown to the hook, nothing copied (the emu
 * board's is a CPU prefetch). */
static void fh_dma_prefetch(void *hal, uint64_t pa, uint32_t len)
{
	struct fake_hal *fh = FH(hal);

	fh->prefetches++;
	if (fh->prefetch_hook)
		fh->prefetch_hook(fh->prefetch_hook_arg, pa, len);
}

#define FAKE_OPS							\
	.dma_read = fh_dma_read,					\
	.dma_write = fh_dma_write,					\
	.dma_cmp_swap = fh_cmp_swap,					\
	.dma_fetch_add = fh_fetch_add,					\
	.dma_load_acquire32 = fh_load_acquire32,			\
	.now_ns = fh_now,						\
	.rx_burst = fh_rx_burst,					\
	.tx_burst = fh_tx_burst,					\
	.tx_queues = fh_tx_queues,					\
	.rx_queues = fh_rx_queues,					\
	.rx_burst_queue = fh_rx_burst_queue,				\
	.rx_ready = fh_rx_ready,					\
	.tx_burst_queue = fh_tx_burst_queue,				\
	.pkt_alloc = fh_pkt_alloc,					\
	.pkt_free = fh_pkt_free,					\
	.link_up = fh_link_up,						\
	.notify_host = fh_notify,					\
	.log = fh_log,							\
	.dma_prepare = fh_dma_prepare,					\
	.dma_prefetch = fh_dma_prefetch

static const struct snic_hal_ops fake_ops = {
	FAKE_OPS,
	.dma_read_crc = fh_dma_read_crc,
	.dma_write_crc = fh_dma_write_crc,
};
/* A HAL that copies only (the bare-metal boards): the core computes the
 * ICRC over the frame after the copy. */
static const struct snic_hal_ops fake_ops_nofold = { FAKE_OPS };

bool fake_hal_fold = true;
unsigned fake_hal_tx_queues = FH_MAX_TXQ;
unsigned fake_hal_rx_queues;

int fake_hal_init(struct fake_hal *fh, uint64_t mem_size)
{
	memset(fh, 0, sizeof(*fh));
	fh->hal.ops = fake_hal_fold ? &fake_ops : &fake_ops_nofold;
	fh->hal.ctx = fh;
	fh->tx_queues = (uint16_t)(fake_hal_tx_queues >= 1 &&
				   fake_hal_tx_queues <= FH_MAX_TXQ
				   ? fake_hal_tx_queues : 1);
	fh->mem = calloc(1, mem_size);
	fh->bufs = malloc((size_t)FH_POOL_SIZE * FH_SLOT);
	if (!fh->mem || !fh->bufs)
		abort();
	fh->mem_size = mem_size;
	fh->clock = &fh->own_clock;
	fh->own_clock = 1000000; /* not 0: "0 = unset" bugs show up */
	fh->link_is_up = 1;
	fh->rx_queues = 1;
	fh->rxq_force = -1;
	for (uint32_t i = 0; i < FH_POOL_SIZE; i++) {
		struct snic_pkt *p = &fh->pkts[i];

		p->data = fh_buf(fh, i);
		p->cap = FH_BUF_CAP;
		p->priv = fh;
		memset(p->data + FH_BUF_CAP, FH_CANARY, FH_GUARD);
		fh->free_stack[i] = (uint16_t)(FH_POOL_SIZE - 1 - i);
	}
	fh->nfree = FH_POOL_SIZE;
	fh->verbose = getenv("FAKE_HAL_VERBOSE") != NULL;
	return 0;
}

/* Frames on the port's RX queues: the HAL's, not yet the core's. */
static unsigned rxq_held(const struct fake_hal *fh)
{
	unsigned n = 0;

	for (unsigned q = 0; q < FH_MAX_RXQ; q++)
		n += fh->rxq[q].tail - fh->rxq[q].head;
	return n;
}

unsigned fake_hal_outstanding(const struct fake_hal *fh)
{
	return FH_POOL_SIZE - fh->nfree - rxq_held(fh);
}

unsigned fake_hal_fini(struct fake_hal *fh)
{
	unsigned leaked = fake_hal_outstanding(fh);

	free(fh->mem);
	free(fh->bufs);
	fh->mem = NULL;
	fh->bufs = NULL;
	return leaked;
}

bool fake_hal_log_has(const struct fake_hal *fh, const char *needle)
{
	uint32_t n = fh->nlog < FH_LOG_KEEP ? fh->nlog : FH_LOG_KEEP;

	for (uint32_t i = 0; i < n; i++)
		if (strstr(fh->log[i], needle))
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */
/* Link.                                                                   */

void fake_link_init(struct fake_link *l, struct fake_hal *a, struct fake_hal *b)
{
	memset(l, 0, sizeof(*l));
	l->side[0] = a;
	l->side[1] = b;
	a->link = l;
	a->side = 0;
	b->link = l;
	b->side = 1;
}

void fake_link_fini(struct fake_link *l)
{
	for (int d = 0; d < 2; d++) {
		while (l->head[d] != l->tail[d]) {
			free(l->fifo[d][l->head[d] % FL_FIFO_SIZE].data);
			l->head[d]++;
		}
		if (l->side[d]) {
			fake_hal_set_fault(l->side[d], NULL);
			l->side[d]->link = NULL;
		}
	}
}

void fake_link_set_hook(struct fake_link *l, fl_hook_fn fn, void *arg)
{
	l->hook = fn;
	l->hook_arg = arg;
}

int fake_link_inject(struct fake_link *l, int to, const void *frame,
		     uint16_t len)
{
	if (fifo_push(l, to, frame, len))
		return -1;
	l->injected[to]++;
	return 0;
}

uint32_t fake_link_pending(const struct fake_link *l, int to)
{
	return l->tail[to] - l->head[to];
}
