/* SPDX-License-Identifier: MIT */
/*
 * Resizing a completion queue (ibv_resize_cq; IBTA 11.2.7.3, "Resize
 * Completion Queue": completions already in the CQ are kept).
 *
 * The host gives a new ring and doorbell record and holds its CQ lock, so
 * its consumer index stands still.  Commands run between poll passes, so
 * no CQE is being written either (with several cores every claimed slot
 * is written, cq.c): the CQEs not yet polled, [ci, pi or claimed), are
 * moved to entries 0.. of the new ring with the owner bit of the first
 * lap, the new record starts at ci 0 with the old arm state, and the CQ
 * continues at pi = the number moved.
 */
#include "objects/objects.h"

/* CQE number `from` of the old ring to entry `to` of the new one. */
static int move_cqe(struct snic_nic *nic, const struct snic_cq *cq,
		    const struct snic_cmd_resize_cq *in, uint32_t from, uint32_t to)
{
	struct snic_cqe cqe;

	if (core_dma_read(&nic->core, cq->ring_pa + (uint64_t)(from & (cq->cnt - 1)) * 64,
			  &cqe, sizeof(cqe)))
		return SNIC_ST_FAULT;
	cqe.owner = 1; /* first lap of the new ring: entry n has owner 1 */
	if (core_dma_write(&nic->core, in->ring_pa + (uint64_t)to * 64, &cqe, sizeof(cqe)))
		return SNIC_ST_FAULT;
	return SNIC_ST_OK;
}

int cq_resize(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_resize_cq *in, uint32_t *moved)
{
	struct snic_cq *cq = cq_lookup(nic, ctx, in->cqn, NULL);
	struct snic_cq_dbrec db;
	uint32_t ci, n;
	int st;

	if (!cq)
		return SNIC_ST_NOENT;
	st = cq_ring_args_ok(nic, ctx, in->cqe_cnt, in->ring_pa, in->dbrec_pa);
	if (st)
		return st;
	if (cq_failed(cq))
		return SNIC_ST_INVAL; /* overrun: the CQ stays unusable */
	if (core_dma_read(&nic->core, cq->dbrec_pa, &db, sizeof(db)))
		return SNIC_ST_FAULT;
	ci = atomic_load_explicit(&db.ci, memory_order_relaxed);
	n = cq_produced(nic, cq) - ci;
	/* one entry stays free, as at creation (cqe + 1 rounded up) */
	if (n > cq->cnt || n >= in->cqe_cnt)
		return SNIC_ST_INVAL;
	for (uint32_t i = 0; i < n; i++) {
		st = move_cqe(nic, cq, in, ci + i, i);
		if (st)
			return st;
	}
	ring_prepare(nic, in->ring_pa, in->cqe_cnt, 6);
	atomic_store_explicit(&db.ci, 0, memory_order_relaxed);
	if (core_dma_write(&nic->core, in->dbrec_pa, &db, sizeof(db)))
		return SNIC_ST_FAULT;
	cq->ring_pa = in->ring_pa;
	cq->dbrec_pa = in->dbrec_pa;
	cq->cnt = in->cqe_cnt;
	cq->pi = n;
	cq->ci_cache = 0;
	/* the other cores are parked and their CQEs written (commands run
	 * so, nic/xcore.c): every claim is a CQE moved, the next goes to n */
	atomic_store_explicit(&cq->claimed, n, memory_order_relaxed);
	atomic_store_explicit(&cq->claim_ci, 0, memory_order_relaxed);
	*moved = n;
	return SNIC_ST_OK;
}
