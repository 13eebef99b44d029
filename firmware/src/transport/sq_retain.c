/* SPDX-License-Identifier: MIT */
/*
 * What a message in flight needs to be sent again, kept on the NIC: the
 * in-flight record (opcode, flags, remote address, rkey, immediate,
 * length) and, in the QP's retain ring, its validated SGEs or inline bytes
 * and an atomic's operands.  A retransmission rebuilds the requester's
 * cursor from them and never reads the host's WQE again: the host may have
 * rewritten it since it was posted (a READ rewritten as SEND|INLINE must
 * not put NIC memory on the wire).  The ring frees in order as messages
 * complete; a message whose data does not fit waits for completions.
 */
#include <string.h>

#include "transport/transport.h"

#define ATOMIC_OPS_LEN ((uint32_t)sizeof(struct snic_wqe_atomic))

static void ring_put(struct snic_qp *qp, const void *src, uint32_t n)
{
	uint32_t at = qp->retain_tail % SNIC_RETAIN_BYTES;
	uint32_t k = SNIC_RETAIN_BYTES - at;

	qp->retain_tail += n;
	if (n <= k) { /* the usual case: no wrap */
		memcpy(qp->retain + at, src, n);
		return;
	}
	memcpy(qp->retain + at, src, k);
	memcpy(qp->retain, (const uint8_t *)src + k, n - k);
}

static void ring_get(const struct snic_qp *qp, uint32_t pos, void *dst,
		     uint32_t n)
{
	uint32_t at = pos % SNIC_RETAIN_BYTES;
	uint32_t k = SNIC_RETAIN_BYTES - at < n ? SNIC_RETAIN_BYTES - at : n;

	memcpy(dst, qp->retain + at, k);
	memcpy((uint8_t *)dst + k, qp->retain, n - k);
}

/* Keep the current message's data with its in-flight record f. */
void retain_msg(struct snic_qp *qp, struct snic_inflight *f,
		const struct snic_req_cur *cur)
{
	const struct snic_send_wqe *w = &cur->hdr;

	retain_fields(qp, f, cur, cur->sgl.epoch);
	f->nsge = 0;
	if (f->opcode == SNIC_WR_ATOMIC_CMP_AND_SWP ||
	    f->opcode == SNIC_WR_ATOMIC_FETCH_AND_ADD)
		ring_put(qp, &w->atomic, ATOMIC_OPS_LEN);
	if (w->ctrl.flags & SNIC_SEND_INLINE) {
		ring_put(qp, cur->inline_data, cur->len);
	} else if (cur->sgl.num == 1 && /* (one compare: retain_one_sge) */
		   qp->retain_tail % SNIC_RETAIN_BYTES <= SNIC_RETAIN_BYTES - 16) {
		/* one SGE, the usual case: a 16-byte copy, no call */
		memcpy(qp->retain + qp->retain_tail % SNIC_RETAIN_BYTES,
		       cur->sgl.sge, 16);
		qp->retain_tail += 16;
		f->nsge = 1;
	} else {
		ring_put(qp, cur->sgl.sge, cur->sgl.num * 16u);
		f->nsge = (uint8_t)cur->sgl.num;
	}
	f->data_len = (uint16_t)(qp->retain_tail - f->data_at);
}

/* retain_one_sge where the ring wraps inside the SGE's 16 bytes. */
void retain_one_wrap(struct snic_qp *qp, struct snic_inflight *f,
		     const struct snic_req_cur *cur,
		     const struct snic_wqe_sge *sge, uint64_t epoch)
{
	retain_fields(qp, f, cur, epoch);
	f->nsge = 1;
	ring_put(qp, sge, sizeof(*sge));
	f->data_len = sizeof(*sge);
}

/* The validated SGEs kept for f (a READ's or atomic's local buffers). */
uint32_t retain_sges(const struct snic_qp *qp, const struct snic_inflight *f,
		     struct snic_wqe_sge *sge)
{
	uint32_t at = f->data_at;

	if (f->opcode == SNIC_WR_ATOMIC_CMP_AND_SWP ||
	    f->opcode == SNIC_WR_ATOMIC_FETCH_AND_ADD)
		at += ATOMIC_OPS_LEN;
	ring_get(qp, at, sge, f->nsge * 16u);
	return f->nsge;
}

/* Move the gather cursor `off` bytes into the message. */
static void sgl_seek(struct snic_sgl *sgl, uint32_t off)
{
	sgl->idx = 0;
	sgl->off = 0;
	while (sgl->idx < sgl->num && off >= sgl->sge[sgl->idx].length)
		off -= sgl->sge[sgl->idx++].length;
	sgl->off = off;
}

/* Rebuild the requester's cursor from f, positioned at payload byte off
 * (a multiple of the path MTU: the packet go-back-N resumes at). */
void retain_load(struct snic_qp *qp, const struct snic_inflight *f,
		 uint32_t off)
{
	struct snic_req_cur *cur = &qp->cur;
	struct snic_send_wqe *w = &cur->hdr;
	uint32_t at = f->data_at;

	memset(w, 0, sizeof(*w));
	w->ctrl.wr_id = f->wr_id;
	w->ctrl.opcode = f->opcode;
	w->ctrl.flags = f->flags;
	w->ctrl.imm_data = f->imm;
	w->ctrl.xrc_srqn = f->xrc_srqn;
	w->raddr.remote_addr = f->raddr;
	w->raddr.rkey = f->rkey;
	if (f->opcode == SNIC_WR_ATOMIC_CMP_AND_SWP ||
	    f->opcode == SNIC_WR_ATOMIC_FETCH_AND_ADD) {
		ring_get(qp, at, &w->atomic, ATOMIC_OPS_LEN);
		at += ATOMIC_OPS_LEN;
	}
	cur->len = f->len;
	cur->sgl.num = 0;
	cur->sgl.total = 0;
	if (f->flags & SNIC_SEND_INLINE) {
		w->ctrl.inline_len = f->len;
		ring_get(qp, at, cur->inline_data, f->len);
	} else {
		w->ctrl.num_sge = f->nsge;
		ring_get(qp, at, cur->sgl.sge, f->nsge * 16u);
		cur->sgl.num = f->nsge;
		cur->sgl.total = f->len;
		/* checked again at use: the MRs may have changed since; for
		 * this message's access (sgl_load's), not for that of the
		 * last message loaded (a READ's local write) */
		cur->sgl.epoch = SNIC_SGL_UNCHECKED;
		cur->sgl.pd = qp->pd;
		cur->sgl.access = wr_is_rd_atomic(f->opcode)
				  ? SNIC_ACCESS_LOCAL_WRITE : 0;
		sgl_seek(&cur->sgl, off);
	}
	cur->wqe_idx = f->wqe_idx;
	cur->sent = off;
	cur->first_psn = f->first_psn;
	cur->npkts = (uint32_t)roce_psn_diff(f->last_psn, f->first_psn) + 1;
	cur->fail = SNIC_WC_SUCCESS;
	cur->resend = true;
	cur->valid = true;
}
