/* SPDX-License-Identifier: MIT */
/*
 * The unreliable transports: UD (datagrams, IBTA 9.8.3 / 10.2.x) and UC
 * (unreliable connected, IBTA 9.8.2).  Neither has ACKs, retries or
 * responder resources: a send completes once its last packet is on the
 * wire, and the receiver drops what it cannot take (counted).
 *
 * UD: one packet per message (up to the port's MTU) with a DETH carrying
 * the Q_Key and the source QPN; the destination comes from each WQE (the
 * host's address handle), its MAC from the ARP cache.  A packet whose Q_Key
 * differs from the QP's is dropped and counted (C10-15).  The receive
 * buffer starts with the 40-byte GRH area: 20 zero bytes, then the IPv4
 * header of the packet (RoCE v2 over IPv4, as Linux rxe and mlx5 do).
 *
 * UC: SEND and RDMA WRITE (with immediate) segmented at the path MTU like
 * RC, PSNs checked; a gap drops the message in progress (9.8.2.2), an
 * R_Key violation drops the message silently (no NAKs in UC).
 */
#include <string.h>

#include "transport/transport.h"

/* ARP requests for a UD destination before its datagram is given up as
 * lost (one every SNIC_ARP_RETRY_NS: about a second). */
#define UD_ARP_TRIES 10

/* ---------------------------------------------------------------------- */
/* Requester.                                                              */

static uint64_t wqe_pa(const struct snic_qp *qp, uint32_t idx)
{
	return qp->sq_pa + ((uint64_t)(idx & (qp->sq_cnt - 1)) << qp->sq_stride_log);
}

static bool op_ok(const struct snic_qp *qp, uint8_t op)
{
	if (op == SNIC_WR_SEND || op == SNIC_WR_SEND_WITH_IMM)
		return true;
	return qp->type == SNIC_QPT_UC &&
	       (op == SNIC_WR_RDMA_WRITE || op == SNIC_WR_RDMA_WRITE_WITH_IMM);
}

static void send_done(struct snic_nic *nic, struct snic_qp *qp, uint8_t status)
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
		qp_to_error(nic, qp, UINT32_MAX);
	}
}

/* Fetch and validate the next WQE into qp->cur. */
static uint8_t fetch(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ctrl *c = &cur->hdr.ctrl;
	uint64_t pa = wqe_pa(qp, qp->sq_fetch);
	struct snic_wqe_sge sge[SNIC_MAX_SGE];
	uint32_t lim = qp->type == SNIC_QPT_UD ? nic->core.active_mtu : SNIC_MAX_MSG_SIZE;

	cur->valid = true;
	cur->wqe_idx = qp->sq_fetch;
	cur->len = 0;
	cur->sent = 0;
	if (core_dma_read(&nic->core, pa, &cur->hdr, sizeof(cur->hdr)))
		return SNIC_WC_LOC_QP_OP_ERR;
	CNT_INC(&nic->core, send_wqes);
	if (!op_ok(qp, c->opcode))
		return SNIC_WC_LOC_QP_OP_ERR;
	pa += sizeof(struct snic_send_wqe);
	if (c->flags & SNIC_SEND_INLINE) {
		if (c->inline_len > qp->max_inline ||
		    core_dma_read(&nic->core, pa, cur->inline_data, c->inline_len))
			return SNIC_WC_LOC_QP_OP_ERR;
		cur->len = c->inline_len;
	} else {
		uint8_t st;

		if (c->num_sge > qp->max_send_sge ||
		    (c->num_sge && core_dma_read(&nic->core, pa, sge, c->num_sge * 16u)))
			return SNIC_WC_LOC_QP_OP_ERR;
		st = (uint8_t)sgl_load(nic, &cur->sgl, sge, c->num_sge, qp->pd, 0);
		if (st)
			return st;
		if (cur->sgl.total > lim)
			return SNIC_WC_LOC_LEN_ERR; /* UD: one packet (C10-?) */
		cur->len = (uint32_t)cur->sgl.total;
	}
	if (cur->len > lim)
		return SNIC_WC_LOC_LEN_ERR;
	cur->first_psn = qp->npsn;
	cur->npkts = 0; /* UD: ARP requests sent for this datagram */
	return SNIC_WC_SUCCESS;
}

static uint32_t v4mapped_ip(const uint8_t *g, bool *ok)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	*ok = memcmp(g, pfx, 12) == 0;
	return (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 |
	       (uint32_t)g[14] << 8 | g[15];
}

/* UD headers from the WQE's address: 1 ready, 0 while its MAC is being
 * resolved, -1 not routable, -2 no answer to ARP (the datagram is lost). */
static int ud_hdrs(struct snic_nic *nic, struct snic_qp *qp, struct roce_hdrs *h)
{
	const struct snic_wqe_ud *a =
		(const struct snic_wqe_ud *)(const void *)&qp->cur.hdr.raddr;
	const struct snic_wqe_ctrl *c = &qp->cur.hdr.ctrl;
	bool ok;
	uint32_t dip = v4mapped_ip(a->dgid, &ok);

	if (!ok)
		return -1;
	memset(h, 0, sizeof(*h));
	if (!neigh_lookup(&nic->neigh, dip, h->dmac)) {
		if (nic->core.now >= qp->arp_next_ns) {
			if (qp->cur.npkts++ >= UD_ARP_TRIES)
				return -2;
			qp->arp_next_ns = nic->core.now + SNIC_ARP_RETRY_NS;
			neigh_resolve(&nic->neigh, dip);
		}
		return 0;
	}
	memcpy(h->smac, nic->core.cfg.mac, 6);
	h->sip = nic->core.cfg.ipv4;
	h->dip = dip;
	h->tos = a->traffic_class;
	h->ttl = a->hop_limit ? a->hop_limit : 64;
	h->sport = qp->sport;
	h->opcode = c->opcode == SNIC_WR_SEND ? ROCE_UD_SEND_ONLY : ROCE_UD_SEND_ONLY_IMM;
	h->pkey = ROCE_DEFAULT_PKEY;
	h->dqpn = a->remote_qpn & ROCE_QPN_MASK;
	h->psn = qp->npsn & ROCE_PSN_MASK;
	h->deth_qkey = (a->remote_qkey & 0x80000000u) ? qp->attr.qkey : a->remote_qkey;
	h->deth_sqpn = qp->qpn;
	h->imm = c->imm_data;
	h->se = (c->flags & SNIC_SEND_SOLICITED) != 0;
	return 1;
}

/* UC: the BTH opcode of the next packet (RC opcodes | 0x20). */
static uint8_t uc_opcode(const struct snic_qp *qp, const struct snic_req_cur *cur)
{
	uint8_t op = cur->hdr.ctrl.opcode;
	bool first = cur->sent == 0, last = cur->len - cur->sent <= qp->mtu;
	bool imm = op == SNIC_WR_SEND_WITH_IMM || op == SNIC_WR_RDMA_WRITE_WITH_IMM;
	uint8_t base = (op == SNIC_WR_SEND || op == SNIC_WR_SEND_WITH_IMM)
		       ? ROCE_RC_SEND_FIRST : ROCE_RC_WRITE_FIRST;
	uint8_t o;

	if (first && last)
		o = (uint8_t)(base + (imm ? 5 : 4));
	else if (first)
		o = base;
	else if (!last)
		o = (uint8_t)(base + 1);
	else
		o = (uint8_t)(base + (imm ? 3 : 2));
	return (uint8_t)(ROCE_UC_BASE | o);
}

/* One packet of the current message; false when out of buffers. */
static bool send_one(struct snic_nic *nic, struct snic_qp *qp, int *wait)
{
	struct snic_req_cur *cur = &qp->cur;
	struct roce_hdrs h;
	struct snic_pkt *p;
	uint32_t n = cur->len - cur->sent, fl;
	uint32_t mtu = qp->type == SNIC_QPT_UD ? nic->core.active_mtu : qp->mtu;

	*wait = 0;
	if (qp->type == SNIC_QPT_UD) {
		int r = ud_hdrs(nic, qp, &h);

		if (r == -2) {
			/* unreliable datagram: lost on the way, not an error of
			 * the QP (which may talk to many other peers) */
			CNT_INC(&nic->core, tx_drop_no_neigh);
			send_done(nic, qp, SNIC_WC_SUCCESS);
			return true;
		}
		if (r < 0) {
			send_done(nic, qp, SNIC_WC_LOC_QP_OP_ERR); /* unroutable */
			return true;
		}
		if (r == 0) {
			*wait = 1;
			return false;
		}
	} else {
		uint8_t op = uc_opcode(qp, cur);

		pkt_fill_hdrs(nic, qp, &h, op,
			      cur->first_psn + qp_mtu_div(qp, cur->sent));
		fl = roce_opcodes[op].flags;
		if (fl & ROCE_F_RETH) {
			h.reth_va = cur->hdr.raddr.remote_addr;
			h.reth_rkey = cur->hdr.raddr.rkey;
			h.reth_len = cur->len;
		}
		if (fl & ROCE_F_IMM)
			h.imm = cur->hdr.ctrl.imm_data;
		h.se = (fl & ROCE_F_LAST) && (cur->hdr.ctrl.flags & SNIC_SEND_SOLICITED);
	}
	if (n > mtu)
		n = mtu;
	p = core_pkt_alloc(&nic->core);
	if (!p)
		return false;
	if (n) {
		uint8_t *dst = p->data + roce_hdr_len(h.opcode);

		if (cur->hdr.ctrl.flags & SNIC_SEND_INLINE)
			memcpy(dst, cur->inline_data + cur->sent, n);
		else if (sgl_copy_out(nic, &cur->sgl, dst, n))
			CNT_INC(&nic->core, dma_errors);
	}
	p->len = (uint16_t)roce_build(p->data, &h, n);
	core_tx(&nic->core, p);
	cur->sent += n;
	qp->npsn = (qp->npsn + 1) & ROCE_PSN_MASK;
	if (cur->sent >= cur->len)
		send_done(nic, qp, SNIC_WC_SUCCESS);
	return true;
}

/* Work for one UD/UC QP (req_poll's turn); true to stay scheduled. */
bool ud_req_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	unsigned budget = SNIC_QP_TX_BUDGET;

	if (qp->state != SNIC_QPS_RTS)
		return false;
	if (qp->type == SNIC_QPT_UC && !qp->dmac_valid) {
		if (nic->core.now >= qp->arp_next_ns) {
			qp->arp_next_ns = nic->core.now + SNIC_ARP_RETRY_NS;
			neigh_resolve(&nic->neigh, qp->dip);
		}
		return true;
	}
	while (budget-- && nic->core.tx_budget) {
		int wait;

		if (!qp->cur.valid) {
			uint8_t st;

			if (qp->sq_fetch == qp->sq_pi)
				return false;
			st = fetch(nic, qp);
			if (st) {
				send_done(nic, qp, st);
				return false;
			}
		}
		if (!send_one(nic, qp, &wait))
			return true; /* no buffer, or waiting for ARP */
		if (qp->state != SNIC_QPS_RTS)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* Responder.                                                              */

static void recv_done(struct snic_nic *nic, struct snic_qp *qp, uint8_t status,
		      uint8_t opcode, const struct roce_hdrs *h, uint32_t src_qp,
		      uint16_t flags)
{
	struct snic_resp *r = &qp->resp;
	struct snic_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = r->recv_wr_id;
	cqe.status = status;
	cqe.opcode = opcode;
	cqe.byte_len = r->recv_len;
	cqe.qp_num = qp->qpn;
	cqe.src_qp = src_qp;
	cqe.wqe_idx = r->rq_ci;
	cqe.wc_flags = flags;
	cqe.pkey_index = 0;
	if (h && (roce_opcodes[h->opcode].flags & ROCE_F_IMM)) {
		cqe.imm_data = h->imm;
		cqe.wc_flags |= SNIC_WC_WITH_IMM;
	}
	r->rq_ci++;
	r->in_send = false;
	qp->uc_keep = false;
	cq_post(nic, qp->rcq, &cqe, h && h->se);
}

static void ud_recv(struct snic_nic *nic, struct snic_qp *qp,
		    const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	uint8_t grh[SNIC_GRH_LEN], st;
	const uint8_t *frame = h->payload - roce_hdr_len(h->opcode);

	if (h->deth_qkey != qp->attr.qkey) {
		CNT_INC(&nic->core, rx_drop_qkey); /* C10-15: silently dropped */
		return;
	}
	if (!recv_take_any(nic, qp, &st)) {
		CNT_INC(&nic->core, rx_drop_no_recv); /* UD: no RNR, the packet is lost */
		return;
	}
	if (st == SNIC_WC_SUCCESS && r->rsgl.total < SNIC_GRH_LEN + h->payload_len)
		st = SNIC_WC_LOC_LEN_ERR;
	if (st == SNIC_WC_SUCCESS) {
		memset(grh, 0, 20);
		memcpy(grh + 20, frame + ROCE_ETH_HLEN, ROCE_IPV4_HLEN);
		if (sgl_copy_in(nic, &r->rsgl, grh, SNIC_GRH_LEN) ||
		    (h->payload_len && sgl_copy_in(nic, &r->rsgl, h->payload,
						  h->payload_len)))
			st = SNIC_WC_LOC_PROT_ERR;
	}
	r->recv_len = SNIC_GRH_LEN + h->payload_len;
	recv_done(nic, qp, st, SNIC_WC_RECV, h, h->deth_sqpn,
		  st == SNIC_WC_SUCCESS ? SNIC_WC_GRH : 0);
	if (st != SNIC_WC_SUCCESS)
		qp_to_error(nic, qp, 1 /* IBV_EVENT_QP_FATAL */);
}

/* UC: abandon the message in progress (lost packet, bad R_Key).  A RECV it
 * had taken is kept for the next message (9.8.2.2). */
static void uc_drop_msg(struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;

	if (r->in_send) {
		qp->uc_keep = true;
		r->in_send = false;
	}
	r->in_write = false;
}

static bool uc_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_resp *r = &qp->resp;

	*st = SNIC_WC_SUCCESS;
	if (qp->uc_keep) {
		/* rewind the kept RECV's cursor */
		r->rsgl.idx = 0;
		r->rsgl.off = 0;
		r->recv_len = 0;
		r->in_send = true;
		qp->uc_keep = false;
		return true;
	}
	return recv_take_any(nic, qp, st);
}

static void uc_recv(struct snic_nic *nic, struct snic_qp *qp,
		    const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	uint32_t fl = roce_opcodes[h->opcode].flags;
	bool send = fl & ROCE_F_SEND;
	uint8_t st;

	if (h->psn != r->epsn) {
		CNT_INC(&nic->core, rx_drop_bad_psn);
		uc_drop_msg(qp); /* 9.8.2.2: resynchronise on this packet */
	}
	r->epsn = (h->psn + 1) & ROCE_PSN_MASK;
	/* in a message only its MIDDLE/LAST; outside, only FIRST/ONLY */
	if ((r->in_send || r->in_write)
	    ? ((fl & ROCE_F_FIRST) || (send ? !r->in_send : !r->in_write))
	    : !(fl & ROCE_F_FIRST)) {
		CNT_INC(&nic->core, rx_drop_opcode_seq);
		uc_drop_msg(qp);
		if (!(fl & ROCE_F_FIRST))
			return;
	}
	if (h->payload_len > qp->mtu ||
	    (!(fl & ROCE_F_LAST) && h->payload_len != qp->mtu)) {
		CNT_INC(&nic->core, rx_drop_bad_length);
		uc_drop_msg(qp);
		return;
	}
	if (send) {
		if ((fl & ROCE_F_FIRST) && !uc_take(nic, qp, &st)) {
			CNT_INC(&nic->core, rx_drop_no_recv);
			return;
		}
		if ((fl & ROCE_F_FIRST) && st != SNIC_WC_SUCCESS) {
			recv_done(nic, qp, st, SNIC_WC_RECV, NULL, 0, 0);
			qp_to_error(nic, qp, 1);
			return;
		}
		if (r->recv_len + h->payload_len > r->rsgl.total) {
			recv_done(nic, qp, SNIC_WC_LOC_LEN_ERR, SNIC_WC_RECV, NULL, 0, 0);
			qp_to_error(nic, qp, 1);
			return;
		}
		if (h->payload_len && sgl_copy_in(nic, &r->rsgl, h->payload, h->payload_len)) {
			recv_done(nic, qp, SNIC_WC_LOC_PROT_ERR, SNIC_WC_RECV, NULL, 0, 0);
			qp_to_error(nic, qp, 1);
			return;
		}
		r->recv_len += h->payload_len;
		if (fl & ROCE_F_LAST)
			recv_done(nic, qp, SNIC_WC_SUCCESS, SNIC_WC_RECV, h,
				  qp->attr.dest_qp_num, 0);
		return;
	}
	/* RDMA WRITE */
	if (fl & ROCE_F_FIRST) {
		if (h->reth_len && (!(qp->attr.qp_access_flags & SNIC_ACCESS_REMOTE_WRITE) ||
				    !mr_check(nic, h->reth_rkey, qp->pd,
					      SNIC_ACCESS_REMOTE_WRITE, h->reth_va,
					      h->reth_len))) {
			CNT_INC(&nic->core, nak_access_sent); /* counted; UC sends no NAK */
			return;
		}
		r->in_write = true;
		r->wr_mr = h->reth_rkey;
		r->wr_va = h->reth_va;
		r->wr_left = r->wr_len = h->reth_len;
	}
	if (h->payload_len > r->wr_left ||
	    ((fl & ROCE_F_LAST) && h->payload_len != r->wr_left)) {
		CNT_INC(&nic->core, rx_drop_bad_length);
		uc_drop_msg(qp);
		return;
	}
	if (h->payload_len) {
		const struct snic_mr *mr = mr_check(nic, r->wr_mr, qp->pd,
						    SNIC_ACCESS_REMOTE_WRITE,
						    r->wr_va, h->payload_len);

		if (!mr || mr_write(nic, mr, r->wr_va, h->payload, h->payload_len)) {
			uc_drop_msg(qp);
			return;
		}
	}
	r->wr_va += h->payload_len;
	r->wr_left -= h->payload_len;
	if (!(fl & ROCE_F_LAST))
		return;
	r->in_write = false;
	if (fl & ROCE_F_IMM) {
		if (!uc_take(nic, qp, &st)) {
			CNT_INC(&nic->core, rx_drop_no_recv);
			return;
		}
		r->recv_len = r->wr_len;
		recv_done(nic, qp, st, SNIC_WC_RECV_RDMA_WITH_IMM, h,
			  qp->attr.dest_qp_num, 0);
	}
}

/* rx.c: a request for a UD or UC QP (or a UD/UC opcode for any QP). */
void ud_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	bool ud_op = h->opcode == ROCE_UD_SEND_ONLY || h->opcode == ROCE_UD_SEND_ONLY_IMM;
	bool uc_op = h->opcode >= ROCE_UC_BASE && h->opcode < ROCE_UC_BASE + 0x0c;

	if ((qp->type == SNIC_QPT_UD && !ud_op) || (qp->type == SNIC_QPT_UC && !uc_op) ||
	    qp->type == SNIC_QPT_RC) {
		CNT_INC(&nic->core, rx_drop_unknown_qpn); /* no such QP of that type */
		return;
	}
	if (qp->state < SNIC_QPS_RTR || qp->state == SNIC_QPS_ERR) {
		CNT_INC(&nic->core, rx_drop_qp_state);
		return;
	}
	if (qp->type == SNIC_QPT_UD)
		ud_recv(nic, qp, h);
	else
		uc_recv(nic, qp, h);
}
