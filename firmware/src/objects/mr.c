/* SPDX-License-Identifier: MIT */
/*
 * Memory regions and the on-card translation table (MTT).
 *
 * An MR maps [iova, iova + length) onto host physical pages listed in the
 * MTT.  Every access, local (lkey in an SGE) or remote (rkey in a RETH or
 * AtomicETH), goes through mr_check(): the key's slot and generation, the
 * PD, the access rights and the bounds (IBTA 10.6.3, C10-43..C10-48).
 */
#include <string.h>

#include "objects/objects.h"

#define ACCESS_KNOWN (SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_WRITE |   \
		      SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_ATOMIC |  \
		      SNIC_ACCESS_MW_BIND)

/* splitmix64: spreads a seed over the slots' first generations. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Each slot's generation starts at a random value, so the key the slot
 * hands out next cannot be told from the slot number (issue 10 item 2). */
void mr_init(struct snic_nic *nic, uint64_t seed)
{
	nic->mtt_free_start[0] = 0;
	nic->mtt_free_len[0] = SNIC_MAX_MTT;
	nic->sh->mtt_free_n = 1;
	nic->sh->mr_epoch = SNIC_SGL_UNCHECKED + 1;
	for (uint32_t i = 0; i < SNIC_MAX_MR; i++)
		nic->mrs[i].key_gen = (uint32_t)mix64(seed + i);
	mr_slots_init(nic);
}

/* First fit over the sorted free-extent list. */
int mtt_alloc(struct snic_nic *nic, uint32_t n, uint32_t *first)
{
	for (uint32_t i = 0; i < nic->sh->mtt_free_n; i++) {
		if (nic->mtt_free_len[i] < n)
			continue;
		*first = nic->mtt_free_start[i];
		nic->mtt_free_start[i] += n;
		nic->mtt_free_len[i] -= n;
		if (nic->mtt_free_len[i] == 0) {
			nic->sh->mtt_free_n--;
			for (uint32_t j = i; j < nic->sh->mtt_free_n; j++) {
				nic->mtt_free_start[j] = nic->mtt_free_start[j + 1];
				nic->mtt_free_len[j] = nic->mtt_free_len[j + 1];
			}
		}
		return 0;
	}
	return -1;
}

/* Insert [first, first + n) back, merging with its neighbours.  The list
 * has at most SNIC_MAX_MR + 1 extents: one more than live MRs. */
void mtt_free(struct snic_nic *nic, uint32_t first, uint32_t n)
{
	uint32_t i = 0;

	if (n == 0)
		return;
	while (i < nic->sh->mtt_free_n && nic->mtt_free_start[i] < first)
		i++;
	bool merge_prev = i > 0 && nic->mtt_free_start[i - 1] +
				   nic->mtt_free_len[i - 1] == first;
	bool merge_next = i < nic->sh->mtt_free_n &&
			  first + n == nic->mtt_free_start[i];
	if (merge_prev && merge_next) {
		nic->mtt_free_len[i - 1] += n + nic->mtt_free_len[i];
		nic->sh->mtt_free_n--;
		for (uint32_t j = i; j < nic->sh->mtt_free_n; j++) {
			nic->mtt_free_start[j] = nic->mtt_free_start[j + 1];
			nic->mtt_free_len[j] = nic->mtt_free_len[j + 1];
		}
	} else if (merge_prev) {
		nic->mtt_free_len[i - 1] += n;
	} else if (merge_next) {
		nic->mtt_free_start[i] = first;
		nic->mtt_free_len[i] += n;
	} else {
		for (uint32_t j = nic->sh->mtt_free_n; j > i; j--) {
			nic->mtt_free_start[j] = nic->mtt_free_start[j - 1];
			nic->mtt_free_len[j] = nic->mtt_free_len[j - 1];
		}
		nic->mtt_free_start[i] = first;
		nic->mtt_free_len[i] = n;
		nic->sh->mtt_free_n++;
	}
}

int mr_reg_args_ok(const struct snic_nic *nic,
		    const struct snic_cmd_reg_mr *in)
{
	uint64_t off = in->iova & (SNIC_PAGE_SIZE - 1);
	uint64_t need = (off + in->length + SNIC_PAGE_SIZE - 1) >> SNIC_PAGE_SHIFT;

	if (in->access & ~ACCESS_KNOWN)
		return SNIC_ST_NOTSUP;
	/* Remote write or atomic access needs local write (IBTA C10-44). */
	if ((in->access & (SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_ATOMIC)) &&
	    !(in->access & SNIC_ACCESS_LOCAL_WRITE))
		return SNIC_ST_INVAL;
	if (in->length > core_window_size(&nic->core) || in->iova + in->length < in->iova)
		return SNIC_ST_INVAL;
	if (in->npages != need || in->npages > SNIC_MAX_MTT)
		return SNIC_ST_INVAL;
	return SNIC_ST_OK;
}

/* Read the page list from host memory into the MTT and check that the
 * list and each page it names are memory ctx may use (nic/grant.c). */
int mr_load_pages(struct snic_nic *nic, unsigned ctx,
		  const struct snic_cmd_reg_mr *in, uint32_t first)
{
	if (in->npages && (!core_ctx_range_ok(&nic->core, ctx, in->pages_pa,
					      in->npages * 4ull) ||
			   core_dma_read(&nic->core, in->pages_pa, &nic->mtt[first],
					 in->npages * 4u)))
		return SNIC_ST_FAULT;
	for (uint32_t i = 0; i < in->npages; i++)
		if (!core_ctx_range_ok(&nic->core, ctx,
				       (uint64_t)nic->mtt[first + i] << SNIC_PAGE_SHIFT,
				       SNIC_PAGE_SIZE))
			return SNIC_ST_FAULT;
	mr_prepare_pages(nic, first, in->npages);
	return SNIC_ST_OK;
}

uint32_t mr_install(struct snic_nic *nic, unsigned ctx, uint32_t i,
		    uint32_t pd_idx, const struct snic_cmd_reg_mr *r,
		    uint32_t first)
{
	struct snic_mr *mr = &nic->mrs[i];

	/* the next generation: 2^20 registrations before a key repeats */
	mr->key_gen = SNIC_KEY_GEN(mr->key_gen + 1);
	if (mr->key_gen == 0)
		mr->key_gen = 1; /* never key 0 */
	mr->in_use = true;
	mr_slot_take(nic, i, ctx, r->npages);
	mr->dying = false;
	mr->ctx = (uint8_t)ctx;
	mr->pd = pd_idx;
	mr->access = r->access;
	mr->iova = r->iova;
	mr->length = r->length;
	mr->mtt = first;
	mr->npages = r->npages;
	mr->page_off = (uint32_t)(r->iova & (SNIC_PAGE_SIZE - 1));
	mr->mw_binds = 0;
	mr->mw_type = 0;
	mr->mw_bound = false;
	nic->pds[pd_idx].refs++;
	mr_changed(nic);
	return mr_key_make(i, mr->key_gen);
}

/* The context's MR of this key (also one being deregistered), or NULL. */
struct snic_mr *mr_of_key(struct snic_nic *nic, unsigned ctx, uint32_t key)
{
	struct snic_mr *mr = mr_slot(nic, key);

	if (!mr || !mr->in_use || mr->ctx != ctx || mr->key_gen != SNIC_KEY_GEN(key) ||
	    mr->mw_type)
		return NULL;
	return mr;
}

int mr_reg(struct snic_nic *nic, unsigned ctx,
	   const struct snic_cmd_reg_mr *in, uint32_t *key)
{
	uint32_t pd_idx, first = 0, i;
	int st;

	if (!pd_lookup(nic, ctx, in->pdn, &pd_idx))
		return SNIC_ST_NOENT;
	st = mr_reg_args_ok(nic, in);
	if (st)
		return st;
	i = mr_free_slot(nic);
	if (i == SNIC_MAX_MR)
		return SNIC_ST_NOMEM;
	if (in->npages && mtt_alloc(nic, in->npages, &first))
		return SNIC_ST_NOMEM;
	st = mr_load_pages(nic, ctx, in, first);
	if (st) {
		mtt_free(nic, first, in->npages);
		return st;
	}
	*key = mr_install(nic, ctx, i, pd_idx, in, first);
	return SNIC_ST_OK;
}

static bool sgl_uses(const struct snic_sgl *sgl, uint32_t idx)
{
	for (uint32_t k = 0; k < sgl->num && k < SNIC_MAX_SGE; k++)
		if (SNIC_KEY_IDX(sgl->sge[k].lkey) == idx)
			return true;
	return false;
}

/* Does a message in progress on qp hold SGEs of MR slot idx?  These are
 * the MR's references: the send in progress, the RECV a SEND is landing
 * in (or kept for the next UC message) and the READ whose responses
 * land. */
static bool qp_holds_mr(const struct snic_qp *qp, uint32_t idx)
{
	return (qp->cur.valid && sgl_uses(&qp->cur.sgl, idx)) ||
	       ((qp->resp.in_send || qp->uc_keep) &&
		sgl_uses(&qp->resp.rsgl, idx)) ||
	       (qp->rd_active && sgl_uses(&qp->rd_sgl, idx));
}

/* Does any message in progress hold MR slot idx?  An SGE names an MR of
 * its QP's PD (mr_check), so only the MR's context's QPs can: they are
 * on its list (qp_slots.c), and other contexts' idle QPs cost nothing.
 * An XRC target QP's receives come from an XRC SRQ that another context
 * may own (transport/xrc.c): while the NIC has one, every QP up to the
 * highest in use is looked at, as before. */
bool mr_in_use_by_msg(const struct snic_nic *nic, uint32_t idx)
{
	const struct snic_nic_shared *sh = nic->sh;

	if (sh->xrc_recv_qps) {
		for (uint32_t q = 0; q < sh->qp_hw; q++)
			if (nic->qps[q].in_use && qp_holds_mr(&nic->qps[q], idx))
				return true;
		return false;
	}
	for (uint32_t q = sh->ctx_qp_head[nic->mrs[idx].ctx]; q != QP_SLOT_NONE;
	     q = sh->qp_ctx_next[q])
		if (qp_holds_mr(&nic->qps[q], idx))
			return true;
	return false;
}

void mr_dereg_now(struct snic_nic *nic, uint32_t idx)
{
	struct snic_mr *mr = &nic->mrs[idx];

	dm_mr_gone(nic, mr);
	mtt_free(nic, mr->mtt, mr->npages);
	nic->pds[mr->pd].refs--;
	mr->in_use = false;
	mr_slot_put(nic, idx, mr->ctx, mr->npages);
	mr->dying = false;
	mr_changed(nic);
}

/* Deregistration waits for the messages using the MR, as on an RNIC
 * (its DMA must end before the pages go back): the MR takes no new user
 * at once (mr_check), the command completes when the last message using
 * it ends or is flushed, or after SNIC_MR_DEREG_WAIT_NS (a peer that
 * stops mid-message): an SGE then finds no MR (sgl_walk re-checks) and
 * its message fails. */
int mr_dereg(struct snic_nic *nic, unsigned ctx, uint32_t key)
{
	struct snic_mr *mr = mr_of_key(nic, ctx, key);

	if (!mr)
		return SNIC_ST_NOENT;
	/* windows bound on it keep it (IBTA 11.2.8.4; ibv_dereg_mr: EBUSY) */
	if (mr->mw_binds)
		return SNIC_ST_BUSY;
	if (!mr->dying) {
		mr->dying = true;
		mr->dereg_until = nic->core.now + SNIC_MR_DEREG_WAIT_NS;
		mr_changed(nic);
	}
	if (mr_in_use_by_msg(nic, SNIC_KEY_IDX(key)) &&
	    nic->core.now < mr->dereg_until) {
		CNT_INC(&nic->core, mr_dereg_waits);
		return SNIC_MR_PENDING;
	}
	mr_dereg_now(nic, SNIC_KEY_IDX(key));
	return SNIC_ST_OK;
}


int mr_va_to_pa(const struct snic_nic *nic, const struct snic_mr *mr,
		uint64_t va, uint64_t *pa)
{
	uint64_t off = va - mr->iova + mr->page_off;
	uint64_t page = off >> SNIC_PAGE_SHIFT;

	if (va < mr->iova || page >= mr->npages)
		return -1;
	*pa = ((uint64_t)nic->mtt[mr->mtt + page] << SNIC_PAGE_SHIFT) |
	      (off & (SNIC_PAGE_SIZE - 1));
	return 0;
}

/* Largest physically contiguous piece of [va, va + len): the DMA unit. */
static uint32_t mr_extent(const struct snic_nic *nic, const struct snic_mr *mr,
			  uint64_t va, uint32_t len, uint64_t *pa)
{
	uint64_t off = va - mr->iova + mr->page_off;
	uint32_t page = (uint32_t)(off >> SNIC_PAGE_SHIFT);
	uint32_t in = (uint32_t)(off & (SNIC_PAGE_SIZE - 1));
	uint32_t n = SNIC_PAGE_SIZE - in;
	const uint32_t *pg = &nic->mtt[mr->mtt];

	if (va < mr->iova || page >= mr->npages)
		return 0; /* outside the MR: never an MTT entry of another */
	*pa = ((uint64_t)pg[page] << SNIC_PAGE_SHIFT) | in;
	while (n < len && page + 1 < mr->npages && pg[page + 1] == pg[page] + 1) {
		page++;
		n += SNIC_PAGE_SIZE;
	}
	return n < len ? n : len;
}

/* One DMA of n bytes between buf and pa.  A read with crc and *crc (not
 * NULL) advances **crc over the bytes where the HAL can fold it into the
 * copy (core_dma_read_crc); *crc is set to NULL when it could not, so
 * the caller's later pieces are copied only.  n must be the last piece's
 * or a multiple of 4: the fold pads each piece to 4 bytes. */
static inline int mr_dma(struct snic_nic *nic, uint64_t pa, uint8_t *buf,
			 uint32_t n, bool to_host, uint32_t **crc)
{
	int rc;

	if (to_host)
		return core_dma_write(&nic->core, pa, buf, n);
	if (!crc || !*crc)
		return core_dma_read(&nic->core, pa, buf, n);
	rc = core_dma_read_crc(&nic->core, pa, buf, n, *crc);
	if (rc > 0)
		*crc = NULL;
	return rc < 0 ? -1 : 0;
}

/* Copy between a buffer and [va, va + len) of the MR, one DMA per
 * physically contiguous piece.  With crc, see mr_read_crc. */
static int __attribute__((noinline))
mr_copy_pieces(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	       uint8_t *buf, uint32_t len, bool to_host, uint32_t **crc)
{
	while (len) {
		uint64_t pa;
		uint32_t n = mr_extent(nic, mr, va, len, &pa);

		if (n == 0)
			return -1;
		if (crc && *crc && n < len && (n & 3u))
			*crc = NULL; /* a piece the fold's pad would break */
		if (mr_dma(nic, pa, buf, n, to_host, crc))
			return -1;
		buf += n;
		va += n;
		len -= n;
	}
	return 0;
}

/* The usual copy, a small piece inside one page of the MR, is one DMA
 * without the walk (the same bounds: va inside the MR, its page one of
 * the MR's); anything else goes piece by piece. */
static inline int mr_copy(struct snic_nic *nic, const struct snic_mr *mr,
			  uint64_t va, uint8_t *buf, uint32_t len, bool to_host,
			  uint32_t **crc)
{
	uint64_t pa;

	if (mr_page_pa(nic, mr, va, len, &pa))
		return mr_dma(nic, pa, buf, len, to_host, crc);
	return mr_copy_pieces(nic, mr, va, buf, len, to_host, crc);
}

int mr_read(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	    void *dst, uint32_t len)
{
	return mr_copy(nic, mr, va, dst, len, false, NULL);
}

int mr_read_crc(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
		void *dst, uint32_t len, uint32_t *crc)
{
	uint32_t *c = crc;

	if (mr_copy(nic, mr, va, dst, len, false, &c))
		return -1;
	return c ? 0 : 1;
}

int mr_write(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	     const void *src, uint32_t len)
{
	return mr_copy(nic, mr, va, (uint8_t *)(uintptr_t)src, len, true, NULL);
}

int mr_write_crc(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
		 const void *src, uint32_t len, uint32_t *crc)
{
	uint64_t pa = 0;

	if (len == 0 || mr_extent(nic, mr, va, len, &pa) != len)
		return 1;
	return core_dma_write_crc(&nic->core, pa, src, len, crc);
}

/* ---------------------------------------------------------------------- */
/* Scatter/gather lists.                                                   */

int sgl_load(struct snic_nic *nic, struct snic_sgl *sgl,
	     const struct snic_wqe_sge *sge, uint32_t num, uint32_t pd,
	     uint32_t access)
{
	sgl->num = 0;
	sgl->idx = 0;
	sgl->off = 0;
	sgl->total = 0;
	sgl->pd = pd;
	sgl->access = access;
	sgl->epoch = nic->sh->mr_epoch;
	for (uint32_t i = 0; i < num; i++) {
		if (sge[i].length == 0)
			continue; /* nothing to access, nothing to check */
		if (!mr_check(nic, sge[i].lkey, pd, access, sge[i].addr,
			      sge[i].length))
			return SNIC_WC_LOC_PROT_ERR;
		sgl->sge[sgl->num++] = sge[i];
		sgl->total += sge[i].length;
	}
	if (sgl->total > SNIC_MAX_MSG_SIZE)
		return SNIC_WC_LOC_LEN_ERR;
	return SNIC_WC_SUCCESS;
}

/*
 * SGEs that sgl_load checked for pd and access in `epoch` and that the NIC
 * kept since (a READ's or atomic's local buffers, sq_retain.c): while no
 * MR slot has changed (the same epoch) that check holds for them as it
 * did then, so they are taken as they are; after any change sgl_load
 * checks them again, whole.  The pieces are still checked at every use
 * (sgl_walk).
 */
int sgl_reload(struct snic_nic *nic, struct snic_sgl *sgl,
	       const struct snic_wqe_sge *sge, uint32_t num, uint32_t pd,
	       uint32_t access, uint64_t epoch)
{
	if (epoch == SNIC_SGL_UNCHECKED || epoch != nic->sh->mr_epoch ||
	    num > SNIC_MAX_SGE)
		return sgl_load(nic, sgl, sge, num, pd, access);
	sgl->num = num;
	sgl->idx = 0;
	sgl->off = 0;
	sgl->total = 0;
	sgl->pd = pd;
	sgl->access = access;
	sgl->epoch = epoch;
	for (uint32_t i = 0; i < num; i++) {
		sgl->sge[i] = sge[i];
		sgl->total += sge[i].length;
	}
	return SNIC_WC_SUCCESS;
}

/* The MR of n bytes at the cursor of SGE s: if no MR slot has changed
 * since sgl_load checked the whole SGE (same epoch), that check (key,
 * PD, access, bounds) holds for the piece as it did then.  Otherwise the
 * whole check again: the MR may have been deregistered (and its slot
 * reused) since; only its users reach a dying one.  NULL: refused. */
static inline const struct snic_mr *sgl_piece_mr(struct snic_nic *nic,
						 const struct snic_sgl *sgl,
						 const struct snic_wqe_sge *s,
						 uint32_t n)
{
	if (sgl->epoch == nic->sh->mr_epoch)
		return &nic->mrs[SNIC_KEY_IDX(s->lkey)];
	return mr_find(nic, s->lkey, sgl->pd, sgl->access, s->addr + sgl->off,
		       n, true);
}

/* The cursor n bytes on (n no more than what is left of its SGE). */
static inline void sgl_step(struct snic_sgl *sgl, const struct snic_wqe_sge *s,
			    uint32_t n)
{
	sgl->off += n;
	if (sgl->off == s->length) {
		sgl->idx++;
		sgl->off = 0;
	}
}

/* With crc (a read only), **crc is advanced over the bytes copied while
 * the fold can go on (see mr_read_crc) and *crc set to NULL where it
 * stops.  Inline: each of its three users its own copy, the crc tests
 * folded away in the two without. */
static inline __attribute__((always_inline))
int sgl_walk(struct snic_nic *nic, struct snic_sgl *sgl, uint8_t *buf,
	     uint32_t len, bool to_host, uint32_t **crc)
{
	while (len) {
		if (sgl->idx >= sgl->num)
			return -1;
		const struct snic_wqe_sge *s = &sgl->sge[sgl->idx];
		uint32_t n = s->length - sgl->off;
		const struct snic_mr *mr;
		int rc;

		if (n > len)
			n = len;
		/* the piece about to move lies inside the SGE */
		mr = sgl_piece_mr(nic, sgl, s, n);
		if (!mr)
			return -1;
		if (crc && *crc && n < len && (n & 3u))
			*crc = NULL; /* a piece the fold's pad would break */
		rc = to_host ? mr_write(nic, mr, s->addr + sgl->off, buf, n)
			     : mr_copy(nic, mr, s->addr + sgl->off, buf, n,
				       false, crc);
		if (rc)
			return -1;
		buf += n;
		len -= n;
		sgl_step(sgl, s, n);
	}
	return 0;
}

int sgl_copy_out(struct snic_nic *nic, struct snic_sgl *sgl, void *dst,
		 uint32_t len)
{
	return sgl_walk(nic, sgl, dst, len, false, NULL);
}

int sgl_copy_out_crc(struct snic_nic *nic, struct snic_sgl *sgl, void *dst,
		     uint32_t len, uint32_t *crc)
{
	uint32_t *c = crc;

	if (sgl_walk(nic, sgl, dst, len, false, &c))
		return -1;
	return c ? 0 : 1;
}

int sgl_copy_in(struct snic_nic *nic, struct snic_sgl *sgl, const void *src,
		uint32_t len)
{
	return sgl_walk(nic, sgl, (uint8_t *)(uintptr_t)src, len, true, NULL);
}

int sgl_copy_in_crc(struct snic_nic *nic, const struct snic_sgl *sgl,
		    const void *src, uint32_t len, uint32_t *crc)
{
	const struct snic_wqe_sge *s;
	const struct snic_mr *mr;

	if (len == 0 || sgl->idx >= sgl->num)
		return 1;
	s = &sgl->sge[sgl->idx];
	if (s->length - sgl->off < len || !(mr = sgl_piece_mr(nic, sgl, s, len)))
		return 1;
	return mr_write_crc(nic, mr, s->addr + sgl->off, src, len, crc) ? 1 : 0;
}

void sgl_skip(struct snic_sgl *sgl, uint32_t len)
{
	sgl_step(sgl, &sgl->sge[sgl->idx], len);
}
