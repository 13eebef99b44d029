/* SPDX-License-Identifier: MIT */
/*
 * Completion queues: CQEs written by DMA into a host ring with an owner bit
 * (hostif.h), one at a time or as a run (the CQEs one ACK completes),
 * overrun detection against the host's consumer index, and completion
 * events for armed CQs, checked once per poll pass.
 */
#include <stddef.h>
#include <string.h>

#include "objects/objects.h"

_Static_assert(SNIC_MAX_CQ <= (1u << SNIC_HANDLE_IDX_BITS), "CQ handles"); /* obj_lookup bounds the index */

struct snic_cq *cq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t cqn,
			  uint32_t *idx)
{
	return OBJ_LOOKUP(nic->cqs, ctx, cqn, idx);
}

int cq_ring_args_ok(const struct snic_nic *nic, unsigned ctx, uint32_t cnt, uint64_t ring_pa,
		    uint64_t dbrec_pa)
{
	if (!is_pow2(cnt) || cnt > SNIC_MAX_CQE || (ring_pa & 63) || (dbrec_pa & 63))
		return SNIC_ST_INVAL;
	if (!core_ctx_range_ok(&nic->core, ctx, ring_pa, (uint64_t)cnt * 64) ||
	    !core_ctx_range_ok(&nic->core, ctx, dbrec_pa, sizeof(struct snic_cq_dbrec)))
		return SNIC_ST_FAULT;
	return SNIC_ST_OK;
}

int cq_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_cq *in, uint32_t *cqn)
{
	uint32_t i;
	int st = cq_ring_args_ok(nic, ctx, in->cqe_cnt, in->ring_pa, in->dbrec_pa);

	if (st)
		return st;
	i = OBJ_FREE_SLOT(nic->cqs);
	if (i == SNIC_MAX_CQ)
		return SNIC_ST_NOMEM;
	struct snic_cq *cq = &nic->cqs[i];

	obj_claim(cq, sizeof(*cq), ctx);
	cq->cnt = in->cqe_cnt;
	cq->ring_pa = in->ring_pa;
	cq->dbrec_pa = in->dbrec_pa;
	ring_prepare(nic, in->ring_pa, in->cqe_cnt, 6);
	*cqn = obj_handle(&cq->obj, i);
	return SNIC_ST_OK;
}

int cq_destroy(struct snic_nic *nic, unsigned ctx, uint32_t cqn)
{
	struct snic_cq *cq = cq_lookup(nic, ctx, cqn, NULL);

	return obj_release(cq ? &cq->obj : NULL);
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

/* The CQE was dropped: the QP it names (every CQE names its QP; a run's
 * are all one QP's) lost a completion and goes to error (qp_cq_lost), on
 * the core that owns it: ours, or another's when core 0 wrote the CQE
 * (a command's flush).  Off the path of a CQE written, so nothing of it
 * costs a CQE that goes out.  The message to another core is not waited
 * for (core 0 never waits on a core that may be waiting on it): with its
 * ring full the QP learns at its next CQE. */
static void __attribute__((noinline, cold))
cq_dropped(struct snic_nic *nic, const struct snic_cqe *cqe)
{
	uint32_t i = handle_idx(cqe->qp_num);
	struct snic_qp *qp = i < SNIC_MAX_QP ? &nic->qps[i] : NULL;

	if (!qp || !qp->in_use || qp->qpn != cqe->qp_num)
		return;
	if (qp->core == nic->core.core_id) {
		qp_cq_lost(nic, qp);
	} else {
		struct snic_xc_msg m = { .type = SNIC_XC_CQ_LOST, .a = i,
					 .b = cqe->qp_num };

		core_xc_send(&nic->core, qp->core, &m);
	}
}

static void cq_overrun(struct snic_nic *nic, uint32_t cq_idx,
		       const struct snic_cqe *cqe, bool overrun);

/* The CQ cannot take CQEs any more (overrun, or its ring unwritable):
 * IBTA 11.4.2.1, an affiliated asynchronous error; the CQ stays unusable.
 * The CQE that found it so is dropped, after the CQ's event.  Core 0
 * fails the CQ (once); another core tells core 0 (cq_overrun). */
static void __attribute__((noinline, cold))
cq_fail(struct snic_nic *nic, struct snic_cq *cq, uint32_t cq_idx,
	const struct snic_cqe *cqe)
{
	if (nic->core.core_id) {
		cq_overrun(nic, cq_idx, cqe, false);
		return;
	}
	cq_set_failed(cq);
	core_event(&nic->core, cq->ctx, SNIC_EV_CQ_ERR,
		   obj_handle(&cq->obj, cq_idx));
	cq_dropped(nic, cqe);
}

/* CQEs were written into the CQ: its completion event is looked at once
 * at the end of core 0's pass (cq_flush_events).  Core k (`other`) keeps
 * a list of its own (cq->dirty is core 0's) and hands it to core 0 at the
 * end of its pass (cq_dirty_send). */
static inline void cq_mark_dirty(struct snic_nic *nic, struct snic_cq *cq,
				 uint32_t cq_idx, bool solicited, bool other)
{
	if (other) {
		uint64_t bit = 1ull << (cq_idx & 63);

		if (!(nic->cq_dirty_bits[cq_idx >> 6] & bit)) {
			nic->cq_dirty_bits[cq_idx >> 6] |= bit;
			nic->dirty_cqs[nic->ndirty++] = (uint16_t)cq_idx;
		}
		if (solicited)
			nic->cq_sol_bits[cq_idx >> 6] |= bit;
		return;
	}
	if (solicited)
		cq->sol_pending = true;
	if (!cq->dirty) {
		cq->dirty = true;
		nic->dirty_cqs[nic->ndirty++] = (uint16_t)cq_idx;
	}
}

/* Where the owner byte lies in a CQE (hostif.h): the body is what comes
 * before it, the padding after it is never read. */
#define CQE_OWNER_AT ((uint32_t)offsetof(struct snic_cqe, owner))
_Static_assert(SNIC_WC_SUCCESS == 0, "cq_write ORs statuses: 0 is all success");

/* CQEs [pos, pos + n) into the ring; the caller checked there is room:
 * one core writes at cq->pi, several cores each at the slots its claim
 * got (cq_claim), so a core writes its CQEs itself, and the host, which
 * takes them in ring order by their owner bytes, sees each as soon as
 * it is written.  The bodies go first and the first CQE's owner byte
 * last, after a release fence, so the host never sees a valid owner with
 * a stale body (it reads with acquire, in ring order: the later CQEs of
 * a run, whose owner bytes go with their bodies, only after it took the
 * first).  A single CQE's body is the bytes before its owner byte; a
 * run's first CQE goes out whole with the owner value its slot already
 * has (not valid in this lap).  A body that did not land is never
 * published (counted in dma_errors by core_dma_write).  Inlined: with n
 * = 1 (cq_post) the run's part folds away, with `several` (a constant at
 * every call) the other mode's. */
static inline __attribute__((always_inline))
void cq_write(struct snic_nic *nic, struct snic_cq *cq, uint32_t cq_idx,
	      struct snic_cqe *cqe, uint32_t n, bool solicited, uint32_t pos,
	      bool several)
{
	uint32_t at = pos & (cq->cnt - 1);
	uint8_t owner = (uint8_t)((pos & cq->cnt) == 0); /* cnt: 2^k */
	uint64_t pa = cq->ring_pa + (uint64_t)at * 64;
	/* CQEs before the ring's end (one always fits: at < cnt) */
	uint32_t k = n == 1 || cq->cnt - at >= n ? n : cq->cnt - at;
	uint8_t st = SNIC_WC_SUCCESS;   /* the later CQEs' statuses ORed */

	/* an error is an event for ibv_req_notify_cq(1) too: the later
	 * CQEs' statuses are looked at in the same pass as their owner
	 * bytes (one loop over the run), the first one's at the end */
	for (uint32_t i = 1; i < n; i++) {
		/* the slots past the ring's end are in the next lap (the run
		 * fits the ring: it crosses the end at most once) */
		cqe[i].owner = i < k ? owner : !owner;
		st |= cqe[i].status;
	}
	solicited |= st != SNIC_WC_SUCCESS;
	cqe[0].owner = n == 1 ? owner : !owner;
	if (core_dma_write(&nic->core, pa, cqe,
			   n == 1 ? CQE_OWNER_AT : k * 64u) ||
	    (k < n && core_dma_write(&nic->core, cq->ring_pa, cqe + k,
				     (n - k) * 64u))) {
		cq_fail(nic, cq, cq_idx, cqe);
		return;
	}
	cqe[0].owner = owner;
	atomic_thread_fence(memory_order_release);
	if (core_dma_write(&nic->core, pa + CQE_OWNER_AT, &cqe[0].owner, 1)) {
		cq_fail(nic, cq, cq_idx, cqe);
		return;
	}
	if (!several)
		cq->pi += n;
	cq_mark_dirty(nic, cq, cq_idx,
		      solicited || cqe[0].status != SNIC_WC_SUCCESS,
		      several && nic->core.core_id);
}

/*
 * Several cores (nic/xcore.c): each core writes its QPs' CQEs, so a slot
 * is claimed before it is written, and a core that completes a RECV
 * knows there is room before it acknowledges the message (do_send: a
 * CQE dropped later would be a success the requester saw for a
 * completion the host never gets).  `claimed` counts the slots given
 * out; each claim is made against the host's consumer index, read again
 * only when the one known says full, and the claim's old value is the
 * position of its slots.  A CAS, not an add: a claim that fails promises
 * nothing.  A core claims and writes in one pass, and commands run
 * between passes, so when a command looks at the CQ (cq_resize) every
 * claimed slot is written.
 */
/* The host's consumer index read again for a claim of n slots (the known
 * one said full): false when they do not fit.  *c is refreshed after the
 * read: the c the caller holds may be older than the host's index (other
 * cores claimed, wrote and the host took CQEs since it was loaded), and
 * that c against a newer index would look like a ring with more than its
 * size outstanding.  The acquire fence orders the claims the host's index
 * counts (each made before its CQE's release-fenced owner byte) before
 * the load of `claimed`, so a fresh c is never behind an honest index:
 * an index ahead of it (or behind it by more than the ring) is the
 * host's nonsense, full. */
static bool __attribute__((noinline, cold))
cq_claim_ci(struct snic_nic *nic, struct snic_cq *cq, uint32_t *c,
	    uint32_t n, uint32_t *ci)
{
	if (core_dma_read(&nic->core, cq->dbrec_pa, ci, sizeof(*ci)))
		return false;
	atomic_thread_fence(memory_order_acquire);
	*c = atomic_load_explicit(&cq->claimed, memory_order_relaxed);
	if (*c - *ci > cq->cnt)
		return false;
	atomic_store_explicit(&cq->claim_ci, *ci, memory_order_relaxed);
	return *c + n - *ci <= cq->cnt;
}

static inline bool cq_claim(struct snic_nic *nic, struct snic_cq *cq,
			    uint32_t n, uint32_t *pos)
{
	uint32_t c = atomic_load_explicit(&cq->claimed, memory_order_relaxed);
	uint32_t ci = atomic_load_explicit(&cq->claim_ci, memory_order_relaxed);

	do {
		/* (a cached index ahead of c wraps here: the slow path) */
		if (c + n - ci > cq->cnt && !cq_claim_ci(nic, cq, &c, n, &ci))
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
			&cq->claimed, &c, c + n, memory_order_relaxed,
			memory_order_relaxed));
	*pos = c;
	return true;
}

/* A CQ with no room for a CQE (overrun) or whose ring could not be
 * written: failed (cq_fail) on core 0, and once; another core tells core
 * 0, then drops the CQE itself (its QP is that core's, cq_dropped) - in
 * that order in its ring to core 0, so CQ_ERR precedes the QP's QP_FATAL
 * as on one core. */
static void cq_overrun(struct snic_nic *nic, uint32_t cq_idx,
		       const struct snic_cqe *cqe, bool overrun)
{
	if (!nic->core.core_id) {
		struct snic_cq *cq = &nic->cqs[cq_idx];

		if (overrun)
			CNT_INC(&nic->core, cq_overruns);
		cq_fail(nic, cq, cq_idx, cqe);
	} else {
		struct snic_xc_msg m = { .type = SNIC_XC_CQ_OVERRUN,
					 .flag = overrun, .a = cq_idx };

		core_xc_send_wait(&nic->core, 0, &m);
		cq_dropped(nic, cqe);
	}
}

void cq_overrun_seen(struct snic_nic *nic, uint32_t cq_idx, bool overrun)
{
	struct snic_cq *cq = cq_idx < SNIC_MAX_CQ ? &nic->cqs[cq_idx] : NULL;

	if (!cq || !cq->in_use || cq_failed(cq))
		return; /* failed already: counted once, as on one core */
	if (overrun)
		CNT_INC(&nic->core, cq_overruns);
	cq_set_failed(cq);
	core_event(&nic->core, cq->ctx, SNIC_EV_CQ_ERR,
		   obj_handle(&cq->obj, cq_idx));
}

/* Core k, at the end of its pass: the CQs it wrote CQEs into, for their
 * completion events (core 0 reads the arm state; a message per CQ and
 * pass, however many CQEs).  The host may see a CQE before core 0 hears
 * of it: the event follows, as the arm handshake wants (an arm after the
 * CQE is answered when core 0 looks, cq_check_arm). */
void cq_dirty_send(struct snic_nic *nic)
{
	for (uint32_t i = 0; i < nic->ndirty; i++) {
		uint32_t idx = nic->dirty_cqs[i];
		uint64_t bit = 1ull << (idx & 63);
		struct snic_xc_msg m = {
			.type = SNIC_XC_CQ_DIRTY, .a = idx,
			.flag = (nic->cq_sol_bits[idx >> 6] & bit) != 0 };

		nic->cq_dirty_bits[idx >> 6] &= ~bit;
		nic->cq_sol_bits[idx >> 6] &= ~bit;
		core_xc_send_wait(&nic->core, 0, &m);
	}
	nic->ndirty = 0;
}

/* Core 0: another core wrote CQEs into the CQ. */
void cq_dirty_seen(struct snic_nic *nic, uint32_t cq_idx, bool solicited)
{
	struct snic_cq *cq = cq_idx < SNIC_MAX_CQ ? &nic->cqs[cq_idx] : NULL;

	if (cq && cq->in_use)
		cq_mark_dirty(nic, cq, cq_idx, solicited, false);
}

/* cq_post with several cores: claim, then write.  cq->in_use changes
 * only while the other cores are parked; a CQ failed already (cq_failed,
 * a hint) takes no more claims. */
static void
cq_post_cores(struct snic_nic *nic, uint32_t cq_idx, struct snic_cqe *cqe,
	      bool solicited)
{
	struct snic_cq *cq = &nic->cqs[cq_idx];
	uint32_t pos;

	if (!cq->in_use || cq_failed(cq)) {
		cq_dropped(nic, cqe);
		return;
	}
	if (!cq_claim(nic, cq, 1, &pos)) {
		cq_overrun(nic, cq_idx, cqe, true);
		return;
	}
	cq_write(nic, cq, cq_idx, cqe, 1, solicited, pos, true);
}

void cq_post(struct snic_nic *nic, uint32_t cq_idx, struct snic_cqe *cqe,
	     bool solicited)
{
	struct snic_cq *cq = &nic->cqs[cq_idx];

	if (nic->core.xc) { /* several cores: claim first */
		cq_post_cores(nic, cq_idx, cqe, solicited);
		return;
	}
	if (!cq->in_use || cq_failed(cq)) {
		cq_dropped(nic, cqe);
		return;
	}
	if (cq_full(nic, cq)) {
		CNT_INC(&nic->core, cq_overruns);
		cq_fail(nic, cq, cq_idx, cqe);
		return;
	}
	cq_write(nic, cq, cq_idx, cqe, 1, solicited, cq->pi, false);
}

/* A run of two or more CQEs, in order, as cq_post would write them one
 * by one: in one go when the ring has room for all (one core: by the
 * consumer index already known; several: claimed at once); else (or a
 * CQ that cannot take CQEs) one by one through cq_post, which asks the
 * host and fails the CQ as usual. */
void cq_run_write(struct snic_nic *nic, struct cq_run *r)
{
	struct snic_cq *cq = &nic->cqs[r->cq_idx];
	uint32_t n = r->n, pos;

	r->n = 0;
	if (cq->in_use && !cq_failed(cq)) {
		if (!nic->core.xc) {
			if (cq->pi - cq->ci_cache + n <= cq->cnt) {
				cq_write(nic, cq, r->cq_idx, r->cqe, n, false,
					 cq->pi, false);
				return;
			}
		} else if (cq_claim(nic, cq, n, &pos)) {
			cq_write(nic, cq, r->cq_idx, r->cqe, n, false, pos,
				 true);
			return;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		cq_post(nic, r->cq_idx, &r->cqe[i], false);
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
	core_event(&nic->core, cq->ctx, SNIC_EV_COMP, obj_handle(&cq->obj, idx));
}

void cq_flush_events(struct snic_nic *nic)
{
	for (uint32_t i = 0; i < nic->ndirty; i++)
		cq_check_arm(nic, nic->dirty_cqs[i]);
	nic->ndirty = 0;
}
