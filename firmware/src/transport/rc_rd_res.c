/* SPDX-License-Identifier: MIT */
/*
 * Responder resources (IBTA 9.7.4.1.3): the READs and atomics a QP has
 * accepted, kept as history so a duplicate request (9.7.5.2.2) is
 * answered again from it: a READ from memory, an atomic with its saved
 * result, never executed twice.
 */
#include <string.h>

#include "transport/rc_resp.h"

uint32_t rd_slots(const struct snic_qp *qp)
{
	return qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
}

/* READs/atomics accepted and not yet answered once (duplicates being
 * answered again do not count against max_dest_rd_atomic): kept as a
 * count where a resource turns pending (rd_new, not a replay) or stops
 * (rd_unpend), not counted over [rd_head, rd_tail) per request. */
uint32_t rd_first_pending(const struct snic_resp *r)
{
	return r->rd_nfresh;
}

void rd_unpend(struct snic_resp *r, struct snic_rd_res *rd)
{
	if (rd->pending) {
		rd->pending = false;
		r->rd_npend--;
		if (!rd->replay)
			r->rd_nfresh--;
	}
}

/* The next responder resource, for the request at h->psn owning npsn
 * PSNs.  It takes the place of the oldest one in the history; a replay
 * still pending there is dropped (its requester has long moved on). */
struct snic_rd_res *rd_new(struct snic_resp *r,
				  const struct roce_hdrs *h, uint32_t npsn)
{
	struct snic_rd_res *rd = &r->rd[r->rd_tail % SNIC_MAX_RD_ATOM];

	rd_unpend(r, rd);
	r->rd_tail++;
	if (r->rd_tail - r->rd_head > SNIC_MAX_RD_ATOM)
		r->rd_head = r->rd_tail - SNIC_MAX_RD_ATOM;
	memset(rd, 0, sizeof(*rd));
	rd->valid = true;
	rd->pending = true;
	r->rd_npend++;
	r->rd_nfresh++;
	rd->psn = rd->first_psn = rd->start_psn = h->psn;
	rd->end_psn = psn_add(h->psn, npsn - 1);
	return rd;
}

/* The resource of the request owning `psn`, newest first, within the
 * history; its ring index in *idx. */
static struct snic_rd_res *rd_find(struct snic_resp *r, uint32_t psn,
				   uint32_t *idx)
{
	for (uint32_t k = 1; k <= SNIC_MAX_RD_ATOM; k++) {
		uint32_t i = r->rd_tail - k;
		struct snic_rd_res *rd = &r->rd[i % SNIC_MAX_RD_ATOM];

		if (!rd->valid)
			break;
		if (roce_psn_diff(psn, rd->first_psn) >= 0 &&
		    roce_psn_diff(psn, rd->end_psn) <= 0) {
			*idx = i;
			return rd;
		}
	}
	return NULL;
}

/* Point a READ resource at the duplicate's RETH: the requester asks from
 * h->psn on, for the rest of the original (it may have had the start).
 * The rkey is checked again, as for a new request. */
static bool rd_rearm_read(struct snic_nic *nic, struct snic_qp *qp,
			  struct snic_rd_res *rd, const struct roce_hdrs *h)
{
	uint32_t npsn = req_psns(qp, h);

	if (!read_len_ok(qp, h) ||
	    roce_psn_diff(rd->end_psn, h->psn) != (int32_t)npsn - 1)
		return false; /* not the rest of that READ */
	if (!rkey_ok(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
		     SNIC_ACCESS_REMOTE_READ)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	rd->rkey = h->reth_rkey;
	rd->va = h->reth_va;
	rd->len = h->reth_len;
	rd->sent = 0;
	return true;
}

/* A duplicate READ or atomic (IBTA 9.7.5.2.2): answered again from the
 * responder resources, in PSN order with the other responses.  A READ is
 * executed again from memory from the duplicate's PSN; an atomic is never
 * executed twice: its saved result is sent again. */
static void dup_rd(struct snic_nic *nic, struct snic_qp *qp,
		   const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	bool atomic = roce_opcodes[h->opcode].flags & ROCE_F_ATOMIC_OP;
	struct snic_rd_res *rd;
	uint32_t i;

	rd = rd_find(r, h->psn, &i);
	if (!rd || rd->atomic != atomic ||
	    (atomic && h->psn != rd->first_psn)) {
		CNT_INC(&nic->core, dup_rd_unmatched);
		return;
	}
	if (rd->pending && rd->start_psn == h->psn)
		return; /* already answering exactly this */
	if (!atomic && !rd_rearm_read(nic, qp, rd, h)) {
		if (qp->state != SNIC_QPS_ERR)
			CNT_INC(&nic->core, dup_rd_unmatched);
		return;
	}
	rd->psn = rd->start_psn = h->psn;
	if (!rd->pending) {
		rd->pending = true;
		rd->replay = true;
		r->rd_npend++;
	}
	if ((int32_t)(i - r->rd_head) < 0)
		r->rd_head = i;
	if (atomic)
		CNT_INC(&nic->core, dup_atomics_replayed);
	else
		CNT_INC(&nic->core, dup_reads_replayed);
	qp_resp_schedule(nic, qp);
}

void on_duplicate(struct snic_nic *nic, struct snic_qp *qp,
			 const struct roce_hdrs *h)
{
	QCNT_INC(nic, qp, rx_dup_requests);
	/* re-ACK so a requester that lost our ACK moves on (9.7.5.2.2) */
	if (h->opcode != ROCE_RC_READ_REQ && !(roce_opcodes[h->opcode].flags &
					       ROCE_F_ATOMIC_OP))
		qp->resp.ack_pending = true;
	else
		dup_rd(nic, qp, h);
}

