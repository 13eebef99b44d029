/* SPDX-License-Identifier: MIT */
/*
 * Memory windows (IBTA 10.6.7; issue 14).  A window lives in a slot of
 * the MR table, so its R_Key is an index and a generation like an MR key
 * and a freed window's key dies with the slot's generation.  Once bound
 * it carries its own PD, access rights and bounds in the slot's MR fields
 * and lends the bytes of the MR it opens on (mw_mr): rkey_check checks a
 * window exactly as mr_check checks an MR, then hands out that MR.
 *
 *   type 1  bound by ibv_bind_mw (a BIND_MW WQE marked SNIC_BIND_TYPE_1),
 *           any QP of its PD may use it, unbound by a zero-length bind,
 *           never invalidated (10.6.7.2.3 invalidates type 2 only)
 *   type 2B bound by an IBV_WR_BIND_MW WQE to the QP that posted it
 *           (10.6.7.2.1: QP-associated), only when not bound; invalidated
 *           by LOCAL_INV on that QP or by a SEND with Invalidate received
 *           on it (9.4.1.x IETH, 10.6.7.2.3)
 *
 * The low 8 bits of a window's key are the consumer's (ibv_inc_rkey): a
 * bind names the new key, whose upper bits must be the window's own, so
 * the key of the previous binding no longer matches.
 *
 * Several cores (DESIGN.md "Many cores"): a bind or invalidation runs on
 * the core of the QP that posted it (type 1: any QP of the PD, so any
 * core) while requests steered to other cores check the window.  So a
 * window is a seqlock: a writer makes mw_seq odd (a compare-and-swap from
 * even, so two cores binding one window take turns), changes the fields
 * and makes it even again (release); mw_rkey_check reads between two
 * looks at mw_seq and trusts what it read only when both are the same
 * even value.  A window being changed allows nothing: its old binding is
 * going and its new one is not complete (a bind's key is valid once the
 * bind completes, 10.6.7.2.1).  The MR's count of windows is atomic.
 * Allocation and deallocation are commands: no pass runs beside them.
 */
#include "objects/objects.h"

#define MW_TYPE_1   1u
#define MW_TYPE_2B  2u
#define MW_KEY_TAG  0xffu       /* the consumer's part of an R_Key */
#define MW_REMOTE   (SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_READ | \
		     SNIC_ACCESS_REMOTE_ATOMIC)

/* The context's window of this key (any consumer tag), or NULL. */
static struct snic_mr *mw_of_key(struct snic_nic *nic, unsigned ctx,
				 uint32_t rkey)
{
	struct snic_mr *w = mr_slot(nic, rkey);

	if (!w || !w->in_use || !w->mw_type || w->ctx != ctx ||
	    (w->key_gen & ~MW_KEY_TAG) != (SNIC_KEY_GEN(rkey) & ~MW_KEY_TAG))
		return NULL;
	return w;
}

int mw_alloc(struct snic_nic *nic, unsigned ctx,
	     const struct snic_cmd_alloc_mw *in, uint32_t *rkey)
{
	uint32_t pd_idx, i;
	struct snic_mr *w;

	if (in->type != MW_TYPE_1 && in->type != MW_TYPE_2B)
		return SNIC_ST_INVAL;
	if (!pd_lookup(nic, ctx, in->pdn, &pd_idx))
		return SNIC_ST_NOENT;
	i = mr_free_slot(nic);
	if (i == SNIC_MAX_MR)
		return SNIC_ST_NOMEM;
	w = &nic->mrs[i];
	/* a new generation above the consumer's 8 bits: never key 0, and
	 * an old binding's key cannot match whatever tag it had */
	w->key_gen = SNIC_KEY_GEN((w->key_gen | MW_KEY_TAG) + 1);
	if ((w->key_gen & ~MW_KEY_TAG) == 0)
		w->key_gen = MW_KEY_TAG + 1;
	w->in_use = true;
	mr_slot_take(nic, i, ctx, 0);
	w->dying = false;
	w->ctx = (uint8_t)ctx;
	w->pd = pd_idx;
	w->access = 0;
	w->iova = w->length = 0;
	w->mtt = w->npages = w->page_off = 0;
	w->mw_binds = 0;
	atomic_store_explicit(&w->mw_seq, 0, memory_order_relaxed);
	w->mw_type = (uint8_t)in->type;
	w->mw_bound = false;
	nic->pds[pd_idx].refs++;
	mr_changed(nic);
	*rkey = mr_key_make(i, w->key_gen);
	return SNIC_ST_OK;
}

/* The window's writer, alone (see the top). */
static void mw_write_begin(struct snic_mr *w)
{
	uint32_t s = atomic_load_explicit(&w->mw_seq, memory_order_relaxed);

	while ((s & 1) ||
	       !atomic_compare_exchange_weak_explicit(&w->mw_seq, &s, s + 1,
						      memory_order_acquire,
						      memory_order_relaxed))
		s = atomic_load_explicit(&w->mw_seq, memory_order_relaxed);
	/* the odd value is seen before any field changes */
	atomic_thread_fence(memory_order_release);
}

static void mw_write_end(struct snic_mr *w)
{
	atomic_fetch_add_explicit(&w->mw_seq, 1, memory_order_release);
}

static void mw_unbind(struct snic_nic *nic, struct snic_mr *w)
{
	if (w->mw_bound)
		nic->mrs[w->mw_mr].mw_binds--;
	w->mw_bound = false;
	w->access = 0;
	w->iova = w->length = 0;
}

void mw_free_now(struct snic_nic *nic, uint32_t idx)
{
	struct snic_mr *w = &nic->mrs[idx];

	mw_write_begin(w);
	mw_unbind(nic, w);
	mw_write_end(w);
	nic->pds[w->pd].refs--;
	w->mw_type = 0;
	w->in_use = false;
	mr_slot_put(nic, idx, w->ctx, 0);
	mr_changed(nic);
}

/* Deallocating a bound window invalidates it (ibv_dealloc_mw(3)). */
int mw_dealloc(struct snic_nic *nic, unsigned ctx, uint32_t rkey)
{
	struct snic_mr *w = mw_of_key(nic, ctx, rkey);

	if (!w)
		return SNIC_ST_NOENT;
	mw_free_now(nic, SNIC_KEY_IDX(rkey));
	return SNIC_ST_OK;
}

/* The MR a bind may open the window on (10.6.7.2.1, in order):
 * the QP's context and the window's PD, Bind access, a range of it, and
 * Local Write behind remote write or atomic rights. */
static struct snic_mr *bind_target(struct snic_nic *nic, unsigned ctx,
				   const struct snic_mr *w,
				   const struct snic_wqe_bind *b)
{
	struct snic_mr *mr = mr_of_key(nic, ctx, b->mr_lkey);

	if (!mr || mr->dying || mr->pd != w->pd)
		return NULL;
	if (!(mr->access & SNIC_ACCESS_MW_BIND))
		return NULL;
	if (!mr_span_ok(mr, 0, b->addr, b->length))
		return NULL;
	if ((b->access & (SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & SNIC_ACCESS_LOCAL_WRITE))
		return NULL;
	return mr;
}

/* mw_bind's checks and change, the window's writer. */
static uint8_t bind_locked(struct snic_nic *nic, const struct snic_qp *qp,
			   struct snic_mr *w, const struct snic_wqe_bind *b,
			   bool type1)
{
	struct snic_mr *mr = NULL;

	if (w->mw_type != (type1 ? MW_TYPE_1 : MW_TYPE_2B) ||
	    w->pd != qp->pd || (b->access & ~MW_REMOTE) ||
	    SNIC_KEY_IDX(b->new_rkey) != SNIC_KEY_IDX(b->mw_rkey) ||
	    (SNIC_KEY_GEN(b->new_rkey) & ~MW_KEY_TAG) != (w->key_gen & ~MW_KEY_TAG))
		return SNIC_WC_MW_BIND_ERR;
	/* type 2B: bound only from the free state (invalidate first) */
	if (!type1 && w->mw_bound)
		return SNIC_WC_MW_BIND_ERR;
	if (!(type1 && b->length == 0) && !(mr = bind_target(nic, qp->ctx, w, b)))
		return SNIC_WC_MW_BIND_ERR;
	mw_unbind(nic, w);
	w->key_gen = SNIC_KEY_GEN(b->new_rkey);
	if (!mr)
		return SNIC_WC_SUCCESS; /* type 1, zero length: unbound */
	w->mw_bound = true;
	w->mw_mr = (uint32_t)(mr - nic->mrs);
	w->mw_qpn = qp->qpn;
	w->access = b->access;
	w->iova = b->addr;
	w->length = b->length;
	mr->mw_binds++;
	return SNIC_WC_SUCCESS;
}

/* A BIND_MW WQE of qp: SUCCESS or MW_BIND_ERR (11.6.2), window untouched
 * on error. */
uint8_t mw_bind(struct snic_nic *nic, const struct snic_qp *qp,
		const struct snic_wqe_bind *b, bool type1)
{
	struct snic_mr *w = mw_of_key(nic, qp->ctx, b->mw_rkey);
	uint8_t st;

	if (!w)
		return SNIC_WC_MW_BIND_ERR;
	mw_write_begin(w);
	st = bind_locked(nic, qp, w, b, type1);
	mw_write_end(w);
	return st;
}

/* Invalidation (10.6.7.2.3): a bound type 2B window of qp, this very key. */
static struct snic_mr *inv_target(struct snic_nic *nic,
				  const struct snic_qp *qp, uint32_t rkey)
{
	struct snic_mr *w = mw_of_key(nic, qp->ctx, rkey);

	if (!w || w->mw_type != MW_TYPE_2B || !w->mw_bound ||
	    w->key_gen != SNIC_KEY_GEN(rkey) || w->pd != qp->pd ||
	    w->mw_qpn != qp->qpn)
		return NULL;
	return w;
}

bool mw_invalidate(struct snic_nic *nic, const struct snic_qp *qp,
		   uint32_t rkey)
{
	struct snic_mr *w = mw_of_key(nic, qp->ctx, rkey);
	bool ok;

	if (!w)
		return false;
	mw_write_begin(w);
	ok = inv_target(nic, qp, rkey) != NULL;
	if (ok)
		mw_unbind(nic, w);
	mw_write_end(w);
	return ok;
}

/* rkey_check's window case (objects.h): a bound window of the QP's PD
 * (type 2B: of this QP) with this very key, whose own rights and bounds
 * allow the access, checked as mr_check checks an MR; then the MR under
 * it, whose bytes the access reaches. */
static struct snic_mr *rkey_read(struct snic_nic *nic, const struct snic_mr *w,
				 const struct snic_qp *qp, uint32_t rkey,
				 uint32_t access, uint64_t va, uint64_t len)
{
	if (!w->mw_bound || w->key_gen != SNIC_KEY_GEN(rkey) ||
	    w->pd != qp->pd || (w->mw_type == MW_TYPE_2B && w->mw_qpn != qp->qpn) ||
	    !mr_span_ok(w, access, va, len))
		return NULL;
	return &nic->mrs[w->mw_mr];
}

/* A window changed while we read is read again (a few times: then the
 * request is refused, as during the change). */
struct snic_mr *mw_rkey_check(struct snic_nic *nic, const struct snic_mr *w,
			      const struct snic_qp *qp, uint32_t rkey,
			      uint32_t access, uint64_t va, uint64_t len)
{
	_Atomic uint32_t *seq = &((struct snic_mr *)w)->mw_seq;

	for (int tries = 0; tries < 4; tries++) {
		uint32_t s = atomic_load_explicit(seq, memory_order_acquire);
		struct snic_mr *mr;

		if (s & 1)
			return NULL;
		mr = rkey_read(nic, w, qp, rkey, access, va, len);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(seq, memory_order_relaxed) == s)
			return mr;
	}
	return NULL;
}
