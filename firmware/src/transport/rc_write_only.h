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

	if (h->opcode != ROCE_RC_WRITE_ONLY || !qp_takes_requests(qp) ||
	    h->psn != r->epsn || !op_seq_ok(r, fl) || !length_ok(qp, len, fl) ||
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
	r->epsn = psn_add(r->epsn, 1);          /* acknowledge's, one PSN */
	if (h->ackreq)
		r->ack_pending = true;
	return true;
}

/* What resp_write_more did with a WRITE MIDDLE or LAST. */
enum resp_more {
	RESP_MORE_DECLINED,     /* nothing: the steps take it (ICRC first) */
	RESP_MORE_PLACED,       /* its payload placed, its PSN done        */
	RESP_MORE_BAD_ICRC,     /* to be dropped: nothing changed but the
				 * bytes at the write cursor              */
};

/*
 * A WRITE's next packet, MIDDLE or LAST without immediate, whose ICRC
 * the parse left for later (h->icrc_later, roce_wire.h): its payload
 * placed at the write cursor with the ICRC checked in the same pass
 * (mr_write_crc), one pass over the payload where the usual way reads it
 * twice (the check, then the copy).  The checks are do_write's for such
 * a packet and its steps' before it, through the same predicates (as
 * resp_write_only's); the bytes go where that message's FIRST, whose
 * ICRC was good, said, and nowhere else.  When the ICRC turns out bad,
 * nothing else has moved: the packet is dropped as the parse would have
 * dropped it, the requester sends it again, and those bytes of the
 * message (which no one may rely on before the message is done) are
 * written over.
 * DECLINED, with nothing written, for anything else; the caller checks
 * the ICRC and hands the packet to the steps.
 */
static inline enum resp_more resp_write_more(struct snic_nic *nic,
					     struct snic_qp *qp,
					     const struct roce_hdrs *h)
{
	const uint32_t fl = roce_opcodes[h->opcode].flags;
	struct snic_resp *r = &qp->resp;
	const struct snic_mr *mr;
	uint32_t len = h->payload_len, crc;

	if (!qp_takes_requests(qp) || h->psn != r->epsn || !op_seq_ok(r, fl) ||
	    !length_ok(qp, len, fl) || !write_len_ok(len, r->wr_left, fl) ||
	    len == 0 ||
	    !(mr = rkey_check(nic, qp, r->wr_mr, SNIC_ACCESS_REMOTE_WRITE,
			      r->wr_va, len)))
		return RESP_MORE_DECLINED;
	crc = roce_icrc_later_hdrs(h);
	if (mr_write_crc(nic, mr, r->wr_va, h->payload, len, &crc))
		return RESP_MORE_DECLINED;      /* nothing written */
	if (!roce_icrc_later_is(h, crc))
		return RESP_MORE_BAD_ICRC;
	r->nak_sent = false;                    /* check_psn's */
	r->wr_va += len;                        /* resp_write_payload's */
	r->wr_left -= len;
	if (fl & ROCE_F_LAST) {                 /* do_write's */
		r->in_write = false;
		r->msn++;
	}
	r->epsn = psn_add(r->epsn, 1);          /* acknowledge's, one PSN */
	if (h->ackreq)
		r->ack_pending = true;
	return RESP_MORE_PLACED;
}

#endif /* SNIC_TRANSPORT_RC_WRITE_ONLY_H */
