/* SPDX-License-Identifier: MIT */
/*
 * Completion queues: CQEs written by DMA into a host ring with an owner bit
 * (hostif.h), overrun detection against the host's consumer index, and
 * completion events for armed CQs, checked once per poll pass.
 */
#include <string.h>

#include "objects/objects.h"

_Static_assert((1u << SNIC_HANDLE_IDX_BITS) == SNIC_MAX_CQ, "CQ handles");

static uint32_t cqn_of(const struct snic_cq *cq, uint32_t idx)
{
	return handle_make(cq->gen, idx);
}

struct snic_cq *cq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t cqn,
			  uint32_t *idx)
{
	uint32_t i = handle_idx(cqn);
	struct snic_cq *cq = &nic->cqs[i];

	if (!cq->in_use || cq->ctx != ctx || cqn_of(cq, i) != cqn)
		return NULL;
	if (idx)
		*idx = i;
	return cq;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static bool window_ok(const struct snic_nic *nic, uint64_t pa, uint64_t len)
{
	return pa + len >= pa && pa + len <= nic->core.cfg.host_mem_size;
}

int cq_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_cq *in, uint32_t *cqn)
{
	uint32_t i;

	if (!pow2(in->cqe_cnt) || in->cqe_cnt > SNIC_MAX_CQE ||
	    (in->ring_pa & 63) || (in->dbrec_pa & 63))
		return SNIC_ST_INVAL;
	if (!window_ok(nic, in->ring_pa, (uint64_t)in->cqe_cnt * 64) ||
	    !window_ok(nic, in->dbrec_pa, sizeof(struct snic_cq_dbrec)))
		return SNIC_ST_FAULT;
	for (i = 0; i < SNIC_MAX_CQ && nic->cqs[i].in_use; i++)
		;
	if (i == SNIC_MAX_CQ)
		return SNIC_ST_NOMEM;
	struct snic_cq *cq = &nic->cqs[i];
	uint16_t gen = handle_next_gen(cq->gen);

	memset(cq, 0, sizeof(*cq));
	cq->in_use = true;
	cq->ctx = (uint8_t)ctx;
	cq->gen = gen;
	cq->cnt = in->cqe_cnt;
	cq->ring_pa = in->ring_pa;
	cq->dbrec_pa = in->dbrec_pa;
	*cqn = cqn_of(cq, i);
	return SNIC_ST_OK;
}

int cq_destroy(struct snic_nic *nic, unsigned ctx, uint32_t cqn)
{
	struct snic_cq *cq = cq_lookup(nic, ctx, cqn, NULL);

	if (!cq)
		return SNIC_ST_NOENT;
	if (cq->refs)
		return SNIC_ST_BUSY; /* ibv_destroy_cq: EBUSY while QPs use it */
	cq->in_use = false;
	return SNIC_ST_OK;
}

/* The host's consumer index, re-read only when the cached one says the
 * ring is full (one DMA per wrap instead of one per CQE). */
static bool cq_full(struct snic_nic *nic, struct snic_cq *cq)
{
	uint32_t ci;

	if (cq->pi - cq->ci_cache < cq->cnt)
		return false;
	if (core_dma_read(&nic->core, cq->dbrec_pa, &ci, sizeof(ci)))
		return true;
	if (cq->pi - ci > cq->cnt) /* nonsense from the host: treat as full */
		return true;
	cq->ci_cache = ci;
	return cq->pi - ci >= cq->cnt;
}

void cq_post(struct snic_nic *nic, uint32_t cq_idx, struct snic_cqe *cqe,
	     bool solicited)
{
	struct snic_cq *cq = &nic->cqs[cq_idx];
	uint64_t pa;

	if (!cq->in_use || cq->error)
		return;
	if (cq_full(nic, cq)) {
		/* IBTA 11.4.2.1: CQ overrun is an affiliated async error */
		CNT_INC(&nic->core, cq_overruns);
		cq->error = true;
		core_event(&nic->core, cq->ctx, 0 /* IBV_EVENT_CQ_ERR */, cqn_of(cq, cq_idx));
		return;
	}
	pa = cq->ring_pa + (uint64_t)(cq->pi & (cq->cnt - 1)) * 64;
	cqe->owner = (uint8_t)((cq->pi & cq->cnt) == 0); /* cnt: a power of 2 */
	/* Write the body first and the owner byte last, so the host never
	 * sees a valid owner with a stale body (the host reads with acquire). */
	core_dma_write(&nic->core, pa, cqe, 63);
	atomic_thread_fence(memory_order_release);
	core_dma_write(&nic->core, pa + 63, &cqe->owner, 1);
	cq->pi++;
	if (solicited || cqe->status != SNIC_WC_SUCCESS)
		cq->sol_pending = true;
	if (!cq->dirty) {
		cq->dirty = true;
		nic->dirty_cqs[nic->ndirty++] = (uint16_t)cq_idx;
	}
}

/* Completion events: once per pass for each CQ that got CQEs.  The fence
 * pairs with the host's arm (store arm_sn, fence, poll): either the host
 * sees our CQE or we see its arm (hostif.h). */
static void cq_check_arm(struct snic_nic *nic, uint32_t idx)
{
	struct snic_cq *cq = &nic->cqs[idx];
	struct snic_cq_dbrec db;

	cq->dirty = false;
	if (!cq->in_use)
		return;
	atomic_thread_fence(memory_order_seq_cst);
	if (core_dma_read(&nic->core, cq->dbrec_pa, &db, 16))
		return;
	uint32_t arm = atomic_load_explicit(&db.arm_sn, memory_order_relaxed);
	uint32_t sol = atomic_load_explicit(&db.arm_solicited, memory_order_relaxed);

	if (arm == cq->arm_seen)
		return;
	if (sol && !cq->sol_pending)
		return;
	cq->arm_seen = arm;
	cq->sol_pending = false;
	core_event(&nic->core, cq->ctx, SNIC_EVENT_COMP, cqn_of(cq, idx));
}

void cq_flush_events(struct snic_nic *nic)
{
	for (uint32_t i = 0; i < nic->ndirty; i++)
		cq_check_arm(nic, nic->dirty_cqs[i]);
	nic->ndirty = 0;
}
