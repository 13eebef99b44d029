/* SPDX-License-Identifier: MIT */
/*
 * Send-queue work shared by every QP type: reading a WQE and checking its
 * control part against what the QP's type executes, loading its data
 * (inline bytes or SGEs checked against their lkeys), the opcode and
 * extension headers of each packet, gathering payload into a frame, the
 * completion of the WQE in hand, and the wait for the destination's MAC.
 */
#include <stddef.h>
#include <string.h>

#include "transport/transport.h"

_Static_assert(offsetof(struct snic_req_cur, sge0) ==
	       offsetof(struct snic_req_cur, hdr) + sizeof(struct snic_send_wqe),
	       "sq_read_wqe reads hdr and sge0 in one DMA");

/* How far past the WQE being read the read-ahead goes (sq_read_ahead):
 * ~3 WQEs' work covers a line's trip from the host's core. */
#define SQ_READ_AHEAD 3u

/* 1 to SQ_READ_AHEAD WQEs posted after the one being read: a QP that
 * took its turn with a short list (1,000 QPs with 4 WRITEs per list),
 * whose nearer WQEs no read before asked for, or the end of a list: all
 * of them, in one call, up to the ring's end.  Out of line: the common
 * case's read stays small enough to be inlined where it is called. */
static void __attribute__((noinline))
sq_read_ahead_short(struct snic_nic *nic, const struct snic_qp *qp,
		    uint32_t past)
{
	uint32_t slot = (qp->sq_fetch + 1) & (qp->sq_cnt - 1);

	if (past > qp->sq_cnt - slot)
		past = qp->sq_cnt - slot;
	core_dma_prefetch(&nic->core, qp_sq_wqe_pa(qp, qp->sq_fetch + 1),
			  past << qp->sq_stride_log);
}

/* Ask the HAL to bring the WQE SQ_READ_AHEAD past sq_fetch when the host
 * has posted it: it has just written those lines, so they sit in its
 * core's cache (a card's: across PCIe), and reading each only when its
 * turn came was a fifth of the NIC thread's time on a 64-B ib_write_bw
 * (perf, issue 11); the reads before asked for the nearer ones, unless
 * only a few are posted (sq_read_ahead_short).  Never at or past sq_pi:
 * a slot the host may be writing now stays with it.  sq_pi is the
 * host's (bounded at the doorbell, qp_read_dbrec, but sq_fetch moves
 * back on a rewind): the compares keep a distance past the ring out; the
 * slot's address is the ring's whatever the index. */
static inline void sq_read_ahead(struct snic_nic *nic,
				 const struct snic_qp *qp, uint32_t len)
{
	uint32_t past = qp->sq_pi - qp->sq_fetch - 1; /* posted after it */

	if (past - 1 < SQ_READ_AHEAD)
		sq_read_ahead_short(nic, qp, past);
	else if (past - SQ_READ_AHEAD < qp->sq_cnt) /* fetch + 3 < sq_pi */
		core_dma_prefetch(&nic->core,
				  qp_sq_wqe_pa(qp, qp->sq_fetch + SQ_READ_AHEAD),
				  len);
}

/* Read the WQE at sq_fetch into qp->cur and check its control part; its
 * first SGE comes with it (one DMA, not two: issue 11): from the header's
 * own line where the data starts at 48 (snic_wqe_data_off), from after
 * the header on a QP whose data is always at 64 where the slot has room
 * (sq_sge0_after_hdr); sq_load takes it from there.  *need: the bytes
 * of data (inline bytes or SGEs) its control part says the slot holds,
 * as checked here (retain_room's, not worked out again). */
uint8_t sq_read_wqe(struct snic_nic *nic, struct snic_qp *qp, uint32_t *need)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ctrl *c = &cur->hdr.ctrl;
	const struct snic_xport_ops *xp = xport_of(qp);
	uint32_t n = sizeof(cur->hdr), off;

	if (sq_sge0_after_hdr(qp))
		n += sizeof(cur->sge0);
	cur->wqe_idx = qp->sq_fetch;
	cur->len = 0;
	cur->sent = 0;
	cur->fail = SNIC_WC_SUCCESS;
	if (core_dma_read(&nic->core, qp_sq_wqe_pa(qp, qp->sq_fetch),
			  (uint8_t *)cur + offsetof(struct snic_req_cur, hdr), n))
		return SNIC_WC_LOC_QP_OP_ERR;
	sq_read_ahead(nic, qp, n);
	/* an operation the service does not have (IBTA 9.2 table 37) */
	if (c->opcode >= 32 || !(xp->wr_ops >> c->opcode & 1u))
		return SNIC_WC_LOC_QP_OP_ERR;
	if (c->flags & SNIC_SEND_INLINE) {
		if (c->inline_len > qp->max_inline || wr_is_rd_atomic(c->opcode))
			return SNIC_WC_LOC_QP_OP_ERR;
		*need = c->inline_len;
	} else {
		if (c->num_sge > qp->max_send_sge)
			return SNIC_WC_LOC_QP_OP_ERR;
		*need = c->num_sge * 16u;
	}
	/* the data inside the slot from where it starts (create_qp's slot
	 * size makes both limits above fit from 64 already) */
	off = xp->short_ops >> c->opcode & 1u ? SNIC_WQE_DATA_SHORT
					      : SNIC_WQE_DATA_LONG;
	if (*need > (1u << qp->sq_stride_log) - off)
		return SNIC_WC_LOC_QP_OP_ERR;
	if (off == SNIC_WQE_DATA_SHORT) /* the first SGE, if any */
		memcpy(&cur->sge0, &cur->hdr.atomic, sizeof(cur->sge0));
	return SNIC_WC_SUCCESS;
}

/* Load the WQE's data: inline bytes, or SGEs validated against their
 * lkeys for `access` (local write for READ/atomic results); sets len. */
uint8_t sq_load(struct snic_nic *nic, struct snic_qp *qp, uint32_t access)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ctrl *c = &cur->hdr.ctrl;
	uint64_t pa;
	struct snic_wqe_sge sge[SNIC_MAX_SGE];
	uint8_t st;
	bool one;

	if (c->opcode == SNIC_WR_ATOMIC_WRITE) {
		/* the 8 bytes came with the WQE: sent as inline data */
		memcpy(cur->inline_data, &cur->hdr.atomic.swap, 8);
		cur->hdr.ctrl.flags |= SNIC_SEND_INLINE;
		cur->len = 8;
		return SNIC_WC_SUCCESS;
	}
	one = !(c->flags & SNIC_SEND_INLINE) && c->num_sge == 1;
	if (!one || !sq_has_sge0(qp, c)) {
		/* not the usual one SGE read with the WQE: from the slot */
		pa = qp_sq_wqe_pa(qp, cur->wqe_idx) +
		     snic_wqe_data_off(qp->type, c->opcode);
		if (c->flags & SNIC_SEND_INLINE) {
			if (core_dma_read(&nic->core, pa, cur->inline_data,
					  c->inline_len))
				return SNIC_WC_LOC_QP_OP_ERR;
			cur->len = c->inline_len;
			return SNIC_WC_SUCCESS;
		}
		/* one SGE (an atomic's at 64 on a QP with short WQEs, past
		 * the header's line): into sge0, as if read with the WQE */
		if (c->num_sge &&
		    core_dma_read(&nic->core, pa, one ? &cur->sge0 : sge,
				  c->num_sge * 16u))
			return SNIC_WC_LOC_QP_OP_ERR;
	}
	if (one)
		st = (uint8_t)sgl_load(nic, &cur->sgl, &cur->sge0, 1, qp->pd,
				       access);
	else
		st = (uint8_t)sgl_load(nic, &cur->sgl, sge, c->num_sge, qp->pd,
				       access);
	if (st)
		return st;
	cur->len = (uint32_t)cur->sgl.total;
	return SNIC_WC_SUCCESS;
}

/*
 * The RC BTH opcode of each work request for each position of a packet in
 * its message, [WR opcode][first * 2 + last]: MIDDLE, LAST, FIRST, ONLY
 * (IBTA 9.2 table 38).  One load per packet instead of a search; the
 * service's prefix is ORed in (UC 0x20, XRC 0xa0: the same layout, IBTA
 * 9.2.1, Annex A14).  SEND_WITH_INV's IETH rides on the last packet and
 * ATOMIC_WRITE exists for RC only (ops.c); work requests that send no
 * packets (local ones) never get here (sq_read_wqe refuses what the
 * service lacks, sq_is_local runs the rest).  Unit test
 * rc/test_sq_opcode_table checks it against the opcode table.
 */
#define SEG4(first, middle, last, only) { middle, last, first, only }
#define SEG1(op) SEG4(op, op, op, op)
const uint8_t sq_seg_op[32][4] = {
	[SNIC_WR_SEND] = SEG4(ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
			      ROCE_RC_SEND_LAST, ROCE_RC_SEND_ONLY),
	[SNIC_WR_SEND_WITH_IMM] = SEG4(ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
				       ROCE_RC_SEND_LAST_IMM,
				       ROCE_RC_SEND_ONLY_IMM),
	[SNIC_WR_SEND_WITH_INV] = SEG4(ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
				       ROCE_RC_SEND_LAST_INV,
				       ROCE_RC_SEND_ONLY_INV),
	[SNIC_WR_RDMA_WRITE] = SEG4(ROCE_RC_WRITE_FIRST, ROCE_RC_WRITE_MIDDLE,
				    ROCE_RC_WRITE_LAST, ROCE_RC_WRITE_ONLY),
	[SNIC_WR_RDMA_WRITE_WITH_IMM] = SEG4(ROCE_RC_WRITE_FIRST,
					     ROCE_RC_WRITE_MIDDLE,
					     ROCE_RC_WRITE_LAST_IMM,
					     ROCE_RC_WRITE_ONLY_IMM),
	[SNIC_WR_RDMA_READ] = SEG1(ROCE_RC_READ_REQ),
	[SNIC_WR_ATOMIC_CMP_AND_SWP] = SEG1(ROCE_RC_CMP_SWAP),
	[SNIC_WR_ATOMIC_FETCH_AND_ADD] = SEG1(ROCE_RC_FETCH_ADD),
	[SNIC_WR_ATOMIC_WRITE] = SEG1(ROCE_RC_ATOMIC_WRITE),
};

/* The WQE in hand completes now with `status`; an error ends the QP
 * (IBTA 10.8.3.1: the failed WQE, then C10-39 flushes the rest). */
void sq_complete(struct snic_nic *nic, struct snic_qp *qp, uint8_t status)
{
	struct snic_req_cur *cur = &qp->cur;
	struct snic_inflight f;

	memset(&f, 0, sizeof(f));
	f.wr_id = cur->hdr.ctrl.wr_id;
	f.opcode = cur->hdr.ctrl.opcode;
	f.wqe_idx = cur->wqe_idx;
	f.len = cur->len;
	f.signaled = (cur->hdr.ctrl.flags & SNIC_SEND_SIGNALED) || qp->sq_sig_all;
	qp_send_cqe(nic, qp, &f, status);
	qp->sq_fetch = cur->wqe_idx + 1;
	cur->valid = false;
	if (status != SNIC_WC_SUCCESS) {
		CNT_INC(&nic->core, wqe_errors);
		qp_to_error(nic, qp, SNIC_EV_NONE);
	}
}

/* No MAC for ip yet: ask ARP again at most once per SNIC_ARP_RETRY_NS. */
void sq_arp_retry(struct snic_nic *nic, struct snic_qp *qp,
		  const uint8_t ip[16])
{
	if (nic->core.now < qp->arp_next_ns)
		return;
	qp->arp_next_ns = nic->core.now + SNIC_ARP_RETRY_NS;
	if (nic->core.core_id) { /* the neighbour table is core 0's */
		struct snic_xc_msg m = { .type = SNIC_XC_RESOLVE };

		memcpy(m.u.ip, ip, 16);
		core_xc_send(&nic->core, 0, &m);
		return;
	}
	neigh_resolve_addr(nic->neigh, ip);
}

/* UD and UC: one packet of the current message with the headers in h;
 * the WQE completes when its last packet is queued (no ACKs).  False
 * when no buffer was free (try again next pass). */
bool sq_unrel_packet(struct snic_nic *nic, struct snic_qp *qp,
		     struct roce_hdrs *h, uint32_t mtu)
{
	struct snic_req_cur *cur = &qp->cur;
	uint32_t n = cur->len - cur->sent;
	struct snic_pkt *p;

	if (n > mtu)
		n = mtu;
	p = core_pkt_alloc(&nic->core);
	if (!p)
		return false;
	pkt_align(p, roce_hdrs_len(h), n); /* the copy's stores, the ICRC's loads */
	if (n && sq_gather(nic, cur, p->data + roce_hdrs_len(h), n)) {
		/* no frame without its data: the WQE fails (its MR went
		 * away, or the DMA failed) */
		core_pkt_unused(&nic->core, p);
		sq_complete(nic, qp, SNIC_WC_LOC_PROT_ERR);
		return true;
	}
	p->len = (uint16_t)roce_build(p->data, h, n);
	if (ipv4_is_mcast(h->dip))
		ud_mcast_loop(nic, p, h->dip);
	core_tx(&nic->core, p);
	cur->sent += n;
	qp->npsn = (qp->npsn + 1) & ROCE_PSN_MASK;
	if (cur->sent >= cur->len)
		sq_complete(nic, qp, SNIC_WC_SUCCESS);
	return true;
}

/* UD and UC: fetch and load the next WQE; a message longer than lim
 * (UD: one packet of the port's MTU) is a local length error. */
static uint8_t unrel_fetch(struct snic_nic *nic, struct snic_qp *qp,
			   uint32_t lim)
{
	struct snic_req_cur *cur = &qp->cur;
	uint32_t need;
	uint8_t st = sq_read_wqe(nic, qp, &need);

	cur->valid = true; /* sq_complete() completes it, whatever st */
	if (st == SNIC_WC_SUCCESS)
		st = sq_load(nic, qp, 0);
	if (st == SNIC_WC_SUCCESS && cur->len > lim)
		st = SNIC_WC_LOC_LEN_ERR;
	if (st)
		return st;
	cur->first_psn = qp->npsn;
	cur->npkts = 0; /* UD: ARP requests sent for this datagram */
	QCNT_INC(nic, qp, send_wqes);
	return SNIC_WC_SUCCESS;
}

/* UD and UC: the requester's turn for one QP; `send` queues the next
 * packet of the current message (false: try again later).  True to stay
 * scheduled. */
bool sq_unrel_run(struct snic_nic *nic, struct snic_qp *qp, uint32_t lim,
		  bool (*send)(struct snic_nic *, struct snic_qp *))
{
	unsigned budget = SNIC_QP_TX_BUDGET;

	while (budget-- && nic->core.tx_budget) {
		if (!qp->cur.valid) {
			uint8_t st;

			if (qp->sq_fetch == qp->sq_pi)
				return false;
			st = unrel_fetch(nic, qp, lim);
			if (st) {
				sq_complete(nic, qp, st);
				return false;
			}
		}
		if (!send(nic, qp))
			return true; /* no buffer, or waiting for ARP */
		if (qp->state != SNIC_QPS_RTS)
			return false;
	}
	return true;
}
