/* SPDX-License-Identifier: MIT */
/*
 * The RC responder's one step for the usual WRITE_ONLY, inline where
 * requests arrive (nic/rx.c, xrc.c), and the checks it shares with the
 * request state machine (rc_responder.c): the predicates are asked by
 * both, so that the one step cannot check less than, or otherwise than,
 * the steps it stands for.
 */
#ifndef SNIC_TRANSPORT_RC_WRITE_ONLY_H
#define SNIC_TRANSPORT_RC_WRITE_ONLY_H

#include "transport/rc_resp.h"

/* The QP takes requests: RTR, RTS, SQD, SQE (IBTA 10.3.1). */
static inline bool qp_takes_requests(const struct snic_qp *qp)
{
	return qp->state >= SNIC_QPS_RTR && qp->state != SNIC_QPS_ERR;
}

/* Opcode sequence (IBTA 9.7.5.2): inside a multi-packet SEND only SEND
 * MIDDLE/LAST may come, inside a WRITE only WRITE MIDDLE/LAST; outside
 * both, only FIRST or ONLY packets. */
static inline bool op_seq_ok(const struct snic_resp *r, uint32_t fl)
{
	if (r->in_send && !r->in_write)
		return (fl & ROCE_F_SEND) && !(fl & ROCE_F_FIRST);
	if (r->in_write)
		return (fl & ROCE_F_WRITE) && !(fl & ROCE_F_FIRST);
	return (fl & ROCE_F_FIRST) != 0;
}

/* Payload length per packet position (IBTA 9.7.5.2, as rxe's
 * check_length): FIRST and MIDDLE carry exactly one PMTU, LAST 1..PMTU,
 * ONLY 0..PMTU. */
static inline bool length_ok(const struct snic_qp *qp, uint32_t len,
			     uint32_t fl)
{
	bool first = fl & ROCE_F_FIRST, last = fl & ROCE_F_LAST;

	if (!(fl & ROCE_F_PAYLOAD))
		return len == 0;
	if (first && last)
		return len <= qp->mtu;
	if (!last)
		return len == qp->mtu;
	return len >= 1 && len <= qp->mtu;
}

/* A WRITE packet's payload against what is left of its message (the
 * RETH's length at the FIRST packet): no more, and the LAST packet all of
 * it (IBTA 9.7.5.2.3: an invalid request otherwise).  do_write and
 * resp_write_only ask it. */
static inline bool write_len_ok(uint32_t len, uint32_t left, uint32_t fl)
{
	return len <= left && (!(fl & ROCE_F_LAST) || len == left);
}

/* The state machine's checks up to its length step (check_qp_state ..
 * check_length) for a packet with the opcode flags fl, which every one
 * step makes first through the same predicates. */
static inline bool resp_in_order(const struct snic_qp *qp,
				 const struct roce_hdrs *h, uint32_t fl)
{
	return qp_takes_requests(qp) && h->psn == qp->resp.epsn &&
	       op_seq_ok(&qp->resp, fl) && length_ok(qp, h->payload_len, fl);
}

/* A one step's request packet is done (resp_write_only, resp_more): check_psn's and acknowledge's steps for its one PSN. */
static inline void resp_one_done(struct snic_resp *r, const struct roce_hdrs *h)
{
	r->nak_sent = false;                    /* check_psn's */
	r->epsn = psn_add(r->epsn, 1);          /* acknowledge's, one PSN */
	if (h->ackreq)
		r->ack_pending = true;
}

/* rc_responder.c: the one step's DMA failed; NAKed as do_write's. */
void resp_write_only_fail(struct snic_nic *nic, struct snic_qp *qp,
			  const struct roce_hdrs *h);

/*
 * The usual request, an RC WRITE_ONLY without immediate: the next PSN,
 * outside any multi-packet message, 1..PMTU bytes that are the whole
 * message, into one page of an MR (not a window) of the QP's PD that
 * allows the remote write over them, on a QP that allows remote writes.
 * The state machine's checks are asked through the same predicates its
 * steps use (check_qp_state .. check_length, do_write's length), for the
 * flags the opcode table gives WRITE_ONLY (ROCE_WRITE_ONLY_FLAGS, a
 * constant so that they fold); the key and the page are this path's
 * own, narrower than do_write's (no window, no zero length, one page).
 * Then the write, and do_write's and acknowledge's steps.  The write
 * cursor (wr_*) is left as it is: a WRITE_ONLY opens no message for it
 * to follow.  False, with nothing changed, for anything else: resp_rx's
 * steps then take the packet from the start and say what is wrong.
 * Of h it reads only what roce_parse_rx_first fills (nic/rx.c hands it
 * h so; resp_write_only_fail finishes it).
 * Inline (here, not in rc_responder.c): nic/rx.c runs it for every usual
 * WRITE, and a call with its prologue was ~20 instructions of a 64-B
 * WRITE's (issue 11).
 */
static inline bool resp_write_only(struct snic_nic *nic, struct snic_qp *qp,
				   const struct roce_hdrs *h)
{
	const uint32_t fl = ROCE_WRITE_ONLY_FLAGS;
	struct snic_resp *r = &qp->resp;
	const struct snic_mr *mr;
	uint32_t len = h->payload_len;
	uint64_t pa;

	if (h->opcode != ROCE_RC_WRITE_ONLY || !resp_in_order(qp, h, fl) ||
	    !write_len_ok(len, h->reth_len, fl) || len == 0 ||
	    !(qp->attr.qp_access_flags & SNIC_ACCESS_REMOTE_WRITE) ||
	    !(mr = mr_check(nic, h->reth_rkey, qp->pd, SNIC_ACCESS_REMOTE_WRITE,
			    h->reth_va, len)) ||
	    !mr_page_pa(nic, mr, h->reth_va, len, &pa))
		return false;
	r->nak_sent = false;                    /* check_psn's */
	if (core_dma_write(&nic->core, pa, h->payload, len)) {
		resp_write_only_fail(nic, qp, h);
		return true;
	}
	r->msn++;                               /* do_write's LAST */
	resp_one_done(r, h);
	return true;
}

/*
 * A WRITE's next packet (MIDDLE or LAST without immediate) or a SEND's
 * MIDDLE, whose ICRC the parse left for later (h->icrc_later,
 * roce_wire.h): its payload placed at the write cursor (mr_write_crc) or
 * the RECV's gather cursor (sgl_copy_in_crc, one piece of one SGE) with
 * the ICRC checked in the same pass, one pass over the payload where the
 * usual way reads it twice (the check, then the copy).  The checks are
 * do_write's or do_send's for such a packet and its steps' before it,
 * through the same predicates (as resp_write_only's); the bytes go where
 * that message's FIRST, whose ICRC was good, said, and nowhere else.
 * When the ICRC turns out bad, nothing else has moved: the packet is
 * dropped as the parse would have dropped it, the requester sends it
 * again, and those bytes of the message (which no one may rely on before
 * the message is done) are written over.  A SEND's LAST, which completes
 * the RECV, goes through the steps.  DECLINED, with nothing written, for
 * anything else; the caller checks the ICRC and hands the packet to the
 * steps.  (The completer's twin for READ responses: comp_read_more.)
 */
static inline enum rx_fold resp_more(struct snic_nic *nic, struct snic_qp *qp,
				     const struct roce_hdrs *h)
{
	const uint32_t fl = roce_opcodes[h->opcode].flags;
	const bool send = fl & ROCE_F_SEND;
	struct snic_resp *r = &qp->resp;
	const struct snic_mr *mr = NULL;
	uint32_t len = h->payload_len, crc;
	enum rx_fold v;

	if (!resp_in_order(qp, h, fl) || len == 0)
		return RX_FOLD_DECLINED;
	if (send ? (fl & ROCE_F_LAST) || r->recv_len + len > r->rsgl.total
		 : !write_len_ok(len, r->wr_left, fl) ||
		   !(mr = rkey_check(nic, qp, r->wr_mr,
				     SNIC_ACCESS_REMOTE_WRITE, r->wr_va, len)))
		return RX_FOLD_DECLINED;
	crc = roce_icrc_later_hdrs(h);
	v = rx_fold_verdict(send ? sgl_copy_in_crc(nic, &r->rsgl, h->payload,
						   len, &crc)
				 : mr_write_crc(nic, mr, r->wr_va, h->payload,
						len, &crc), h, &crc);
	if (v != RX_FOLD_PLACED)
		return v;
	if (send) {                             /* recv_place's */
		sgl_skip(&r->rsgl, len);
		r->recv_len += len;
	} else {                                /* resp_write_payload's */
		r->wr_va += len;
		r->wr_left -= len;
		if (fl & ROCE_F_LAST) {         /* do_write's */
			r->in_write = false;
			r->msn++;
		}
	}
	resp_one_done(r, h);
	return RX_FOLD_PLACED;
}

#endif /* SNIC_TRANSPORT_RC_WRITE_ONLY_H */
