/* SPDX-License-Identifier: MIT */
/*
 * RC responder (IBTA 9.7.5.2, 9.7.4.1), the request side: PSN checks,
 * opcode sequence and length checks, RECV consumption for SENDs, rkey
 * checks for WRITE, READ and atomics (before any byte of host memory is
 * touched).  Access violations are NAKed and move the QP to the error
 * state with an affiliated event (IBTA 9.9.3.1.2 / 11.6.3.1).  ACKs and
 * NAKs: rc_ack.c; responder resources: rc_rd_res.c; READ responses:
 * rc_read_resp.c.
 */
#include "transport/rc_resp.h"
#include "transport/rc_write_only.h"
#include "wire/be.h"

#define ACK_CREDIT_NONE  0x1f /* no end-to-end credits advertised */

/* ---------------------------------------------------------------------- */
/* The request state machine (in the manner of Linux rxe's rxe_resp.c).
 * Each step returns the next state; every transition is in resp_rx's
 * switch.  The ERR_ states name what the requester is told (IBTA 9.7.5.2:
 * the responder's checks, NAK codes in table 44 of 9.7.5.2.1). */

enum resp_state {
	RESP_CHECK_QP_STATE,    /* the QP takes requests: RTR, RTS, SQD, SQE */
	RESP_CHECK_PSN,         /* expected, duplicate or ahead (9.7.5.2.2)  */
	RESP_CHECK_OP_SEQ,      /* FIRST/MIDDLE/LAST order                   */
	RESP_CHECK_LENGTH,      /* payload per packet position               */
	RESP_EXECUTE,           /* SEND, WRITE, READ or atomic               */
	RESP_ACKNOWLEDGE,       /* ePSN moves on; an ACK may be owed         */
	RESP_DUPLICATE,         /* re-ACK or replay (9.7.5.2.2)              */
	RESP_ERR_QP_STATE,      /* dropped, nothing said                     */
	RESP_ERR_PSN_SEQ,       /* NAK PSN sequence error, once per gap      */
	RESP_ERR_OP_SEQ,        /* NAK invalid request                       */
	RESP_ERR_LENGTH,        /* NAK invalid request                       */
	RESP_ERR_INVALID,       /* NAK invalid request: bad WRITE length,
				 * misaligned atomic, too many READ/atomics */
	RESP_ERR_RNR,           /* RNR NAK: no RECV, nothing consumed
				 * (9.7.5.2.8)                               */
	RESP_ERR_RKEY,          /* NAK remote access error (9.7.5.2.3)       */
	RESP_ERR_REM_OP,        /* NAK remote operational error: a
				 * responder-side local error (9.9.3.1.3)    */
	RESP_DONE,
};

static const char *const resp_state_names[] = {
	[RESP_CHECK_QP_STATE] = "CHECK_QP_STATE", [RESP_CHECK_PSN] = "CHECK_PSN",
	[RESP_CHECK_OP_SEQ] = "CHECK_OP_SEQ", [RESP_CHECK_LENGTH] = "CHECK_LENGTH",
	[RESP_EXECUTE] = "EXECUTE", [RESP_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[RESP_DUPLICATE] = "DUPLICATE", [RESP_ERR_QP_STATE] = "ERR_QP_STATE",
	[RESP_ERR_PSN_SEQ] = "ERR_PSN_SEQ", [RESP_ERR_OP_SEQ] = "ERR_OP_SEQ",
	[RESP_ERR_LENGTH] = "ERR_LENGTH", [RESP_ERR_INVALID] = "ERR_INVALID",
	[RESP_ERR_RNR] = "ERR_RNR", [RESP_ERR_RKEY] = "ERR_RKEY",
	[RESP_ERR_REM_OP] = "ERR_REM_OP", [RESP_DONE] = "DONE",
};

_Static_assert(sizeof(resp_state_names) / sizeof(resp_state_names[0]) ==
	       RESP_DONE + 1, "responder state names");

const char *resp_state_name(unsigned s)
{
	return s <= RESP_DONE ? resp_state_names[s] : "?";
}

/* The RECV a request consumes: none posted is RNR; an unusable one
 * completes in error at once. */
static enum resp_state resp_take(struct snic_nic *nic, struct snic_qp *qp,
				 uint8_t wc_opcode)
{
	uint8_t st;

	if (!recv_take(nic, qp, &st))
		return RESP_ERR_RNR;
	if (st != SNIC_WC_SUCCESS) {
		qp_recv_cqe(nic, qp, st, wc_opcode, NULL);
		return RESP_ERR_REM_OP;
	}
	return RESP_ACKNOWLEDGE;
}

static enum resp_state do_send(struct snic_nic *nic, struct snic_qp *qp,
			       const struct roce_hdrs *h, uint32_t fl)
{
	enum resp_state next;
	uint8_t st;

	if ((fl & ROCE_F_FIRST) &&
	    (next = resp_take(nic, qp, SNIC_WC_RECV)) != RESP_ACKNOWLEDGE)
		return next;
	st = recv_place(nic, qp, h);
	if (st != SNIC_WC_SUCCESS) {
		/* too long: an invalid request; memory gone: a
		 * responder-side local error */
		qp_recv_cqe(nic, qp, st, SNIC_WC_RECV, NULL);
		return st == SNIC_WC_LOC_LEN_ERR ? RESP_ERR_INVALID : RESP_ERR_REM_OP;
	}
	if (fl & ROCE_F_LAST) {
		/* SEND with Invalidate (9.4.1.x, 10.6.7.2.3): the IETH's
		 * window goes before the RECV completes; one that is not a
		 * bound type 2B window of this QP is an invalid request (as
		 * rxe: the RECV completes with REM_INV_REQ_ERR) */
		if ((fl & ROCE_F_INV) &&
		    !mw_invalidate(nic, qp, be32_get((const uint8_t *)&h->imm))) {
			qp_recv_cqe(nic, qp, SNIC_WC_REM_INV_REQ_ERR, SNIC_WC_RECV,
				    NULL);
			return RESP_ERR_INVALID;
		}
		qp_recv_cqe(nic, qp, SNIC_WC_SUCCESS, SNIC_WC_RECV, h);
		/* its completion dropped (CQ overrun, qp_cq_lost put the QP
		 * in error): a responder-side error, never an ACK */
		if (qp->state == SNIC_QPS_ERR)
			return RESP_ERR_REM_OP;
		qp->resp.msn++;
	}
	return RESP_ACKNOWLEDGE;
}

static enum resp_state do_write(struct snic_nic *nic, struct snic_qp *qp,
				const struct roce_hdrs *h, uint32_t fl)
{
	struct snic_resp *r = &qp->resp;
	const struct snic_mr *mr = NULL;
	enum resp_state next;

	if ((fl & ROCE_F_FIRST) && !resp_write_start(nic, qp, h, &mr))
		return RESP_ERR_RKEY;
	if (!write_len_ok(h->payload_len, r->wr_left, fl))
		return RESP_ERR_INVALID;
	/* the immediate needs a RECV: without one, RNR before any write */
	if ((fl & ROCE_F_IMM) && !r->in_send &&
	    (next = resp_take(nic, qp, SNIC_WC_RECV_RDMA_WITH_IMM)) !=
	    RESP_ACKNOWLEDGE) {
		/* not consumed: the retry starts the message again */
		if (fl & ROCE_F_FIRST)
			r->in_write = false;
		return next;
	}
	if (!resp_write_payload(nic, qp, h, mr))
		return RESP_ERR_RKEY;
	if (fl & ROCE_F_LAST) {
		r->in_write = false;
		if (fl & ROCE_F_IMM) {
			r->recv_len = r->wr_len;
			qp_recv_cqe(nic, qp, SNIC_WC_SUCCESS,
				    SNIC_WC_RECV_RDMA_WITH_IMM, h);
			if (qp->state == SNIC_QPS_ERR) /* as do_send's */
				return RESP_ERR_REM_OP;
		}
		r->msn++;
	}
	return RESP_ACKNOWLEDGE;
}

static enum resp_state do_read(struct snic_nic *nic, struct snic_qp *qp,
			       const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	struct snic_rd_res *rd;

	if (!read_len_ok(qp, h)) {
		CNT_INC(&nic->core, nak_read_too_long);
		return RESP_ERR_INVALID;
	}
	if (!rkey_ok(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
		     SNIC_ACCESS_REMOTE_READ))
		return RESP_ERR_RKEY;
	/* more outstanding READs than max_dest_rd_atomic (9.7.4.1.3) */
	if (rd_first_pending(r) >= rd_slots(qp))
		return RESP_ERR_INVALID;
	/* ACKs for earlier requests go out before the READ's responses */
	resp_flush_acks(nic, qp);
	rd = rd_new(r, h, req_psns(qp, h));
	rd->rkey = h->reth_rkey;
	rd->va = h->reth_va;
	rd->len = h->reth_len;
	qp_resp_schedule(nic, qp);
	return RESP_ACKNOWLEDGE;
}

/* The host-memory word an atomic works on: aligned (IBTA 9.4.5), inside
 * an MR that allows remote atomics. */
static enum resp_state atomic_target(struct snic_nic *nic, struct snic_qp *qp,
				     const struct roce_hdrs *h, uint64_t *pa)
{
	const struct snic_mr *mr;

	if (h->atomic_va & 7)
		return RESP_ERR_INVALID;
	if (!(qp->attr.qp_access_flags & SNIC_ACCESS_REMOTE_ATOMIC) ||
	    !(mr = rkey_check(nic, qp, h->atomic_rkey, SNIC_ACCESS_REMOTE_ATOMIC,
			    h->atomic_va, 8)) ||
	    mr_va_to_pa(nic, mr, h->atomic_va, pa))
		return RESP_ERR_RKEY;
	if (rd_first_pending(&qp->resp) >= rd_slots(qp))
		return RESP_ERR_INVALID;
	return RESP_ACKNOWLEDGE;
}

static enum resp_state do_atomic(struct snic_nic *nic, struct snic_qp *qp,
				 const struct roce_hdrs *h)
{
	struct snic_rd_res *rd;
	uint64_t pa, orig = 0;
	enum resp_state next = atomic_target(nic, qp, h, &pa);
	int rc;

	if (next != RESP_ACKNOWLEDGE)
		return next;
	if (h->opcode == ROCE_RC_CMP_SWAP)
		rc = core_dma_cmp_swap(&nic->core, pa, h->atomic_cmp,
				       h->atomic_swap_add, &orig);
	else
		rc = core_dma_fetch_add(&nic->core, pa, h->atomic_swap_add, &orig);
	if (rc)
		return RESP_ERR_REM_OP;
	CNT_INC(&nic->core, atomics);
	resp_flush_acks(nic, qp);
	rd = rd_new(&qp->resp, h, 1);
	rd->atomic = true;
	rd->orig = orig; /* kept: a duplicate gets this again (9.7.5.2.2) */
	qp_resp_schedule(nic, qp);
	return RESP_ACKNOWLEDGE;
}

/* ---------------------------------------------------------------------- */
/* Checks.  Each asks a predicate of rc_write_only.h that
 * resp_write_only asks too, so that the one-step path cannot check less
 * than, or otherwise than, the steps it stands for.                      */

static enum resp_state check_qp_state(const struct snic_qp *qp)
{
	return qp_takes_requests(qp) ? RESP_CHECK_PSN : RESP_ERR_QP_STATE;
}

static enum resp_state check_psn(struct snic_qp *qp, const struct roce_hdrs *h)
{
	int32_t d = roce_psn_diff(h->psn, qp->resp.epsn);

	if (d < 0)
		return RESP_DUPLICATE;
	if (d > 0)
		return RESP_ERR_PSN_SEQ;
	qp->resp.nak_sent = false;
	return RESP_CHECK_OP_SEQ;
}

static enum resp_state check_op_seq(const struct snic_resp *r, uint32_t fl)
{
	return op_seq_ok(r, fl) ? RESP_CHECK_LENGTH : RESP_ERR_OP_SEQ;
}

static enum resp_state check_length(const struct snic_qp *qp,
				    const struct roce_hdrs *h, uint32_t fl)
{
	return length_ok(qp, h->payload_len, fl) ? RESP_EXECUTE : RESP_ERR_LENGTH;
}

static enum resp_state execute(struct snic_nic *nic, struct snic_qp *qp,
			       const struct roce_hdrs *h, uint32_t fl)
{
	if (fl & ROCE_F_SEND)
		return do_send(nic, qp, h, fl);
	if (fl & ROCE_F_WRITE)
		return do_write(nic, qp, h, fl);
	if (fl & ROCE_F_READ)
		return do_read(nic, qp, h);
	if (fl & ROCE_F_ATOMIC_WRITE) {
		static const enum resp_state next[] = {
			[ATW_OK] = RESP_ACKNOWLEDGE, [ATW_INVALID] = RESP_ERR_INVALID,
			[ATW_RKEY] = RESP_ERR_RKEY, [ATW_REM_OP] = RESP_ERR_REM_OP,
		};

		return next[atomic_write_exec(nic, qp, h)];
	}
	return do_atomic(nic, qp, h);
}

/* The request is consumed: its PSNs are done; SEND and WRITE are ACKed
 * when asked (coalesced, resp_flush_acks), READ and atomics answer with
 * their responses. */
static enum resp_state acknowledge(struct snic_qp *qp, const struct roce_hdrs *h,
				   uint32_t fl)
{
	qp->resp.epsn = psn_add(qp->resp.epsn, req_psns(qp, h));
	if (h->ackreq && !(fl & (ROCE_F_READ | ROCE_F_ATOMIC_OP)))
		qp->resp.ack_pending = true;
	return RESP_DONE;
}

/* One NAK per sequence error (9.7.5.2.2): the requester goes back to ePSN
 * and sends everything from there again, so the out-of-sequence packets
 * after it are dropped silently until those dropped have come again
 * (ePSN past nak_hi).  A late packet that fills the gap meanwhile (a
 * reordering) ends nothing: the packets behind it are on their way in
 * the go-back pass, and NAKing them as a new gap sent the requester back
 * a second time.  Only a packet dropped before that comes out of sequence
 * again after ePSN moved is a new error (the pass lost one).  Decided
 * here, on the error path only: an in-sequence packet just clears
 * nak_sent, as before. */
static bool nak_running(const struct snic_resp *r)
{
	return r->nak_sent ||
	       (r->nak_live && roce_psn_diff(r->epsn, r->nak_hi) <= 0);
}

static enum resp_state err_psn_seq(struct snic_nic *nic, struct snic_qp *qp,
				   uint32_t psn)
{
	struct snic_resp *r = &qp->resp;
	bool running = nak_running(r);

	QCNT_INC(nic, qp, rx_drop_bad_psn);
	if (!running)
		r->nak_hi = psn;
	if (!running ||
	    (r->epsn != r->nak_epsn && roce_psn_diff(psn, r->nak_hi) <= 0)) {
		r->nak_sent = r->nak_live = true;
		r->nak_epsn = r->epsn;
		QCNT_INC(nic, qp, nak_seq_sent);
		resp_flush_acks(nic, qp);
		send_aeth(nic, qp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR, r->epsn);
	}
	if (roce_psn_diff(psn, r->nak_hi) > 0)
		r->nak_hi = psn;
	return RESP_DONE;
}

/* The state machine's transitions from state s until it is done. */
static void resp_run(struct snic_nic *nic, struct snic_qp *qp,
		     const struct roce_hdrs *h, uint32_t fl, enum resp_state s)
{
	while (s != RESP_DONE) {
		switch (s) {
		case RESP_CHECK_QP_STATE: s = check_qp_state(qp); break;
		case RESP_CHECK_PSN: s = check_psn(qp, h); break;
		case RESP_CHECK_OP_SEQ: s = check_op_seq(&qp->resp, fl); break;
		case RESP_CHECK_LENGTH: s = check_length(qp, h, fl); break;
		case RESP_EXECUTE: s = execute(nic, qp, h, fl); break;
		case RESP_ACKNOWLEDGE: s = acknowledge(qp, h, fl); break;
		case RESP_DUPLICATE: on_duplicate(nic, qp, h); s = RESP_DONE; break;
		case RESP_ERR_QP_STATE:
			QCNT_INC(nic, qp, rx_drop_qp_state);
			s = RESP_DONE;
			break;
		case RESP_ERR_PSN_SEQ: s = err_psn_seq(nic, qp, h->psn); break;
		case RESP_ERR_OP_SEQ:
			QCNT_INC(nic, qp, rx_drop_opcode_seq);
			s = RESP_ERR_INVALID;
			break;
		case RESP_ERR_LENGTH:
			QCNT_INC(nic, qp, rx_drop_bad_length);
			s = RESP_ERR_INVALID;
			break;
		case RESP_ERR_INVALID:
			nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
			s = RESP_DONE;
			break;
		case RESP_ERR_RNR: rnr_nak(nic, qp, h->psn); s = RESP_DONE; break;
		case RESP_ERR_RKEY:
			nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
			s = RESP_DONE;
			break;
		case RESP_ERR_REM_OP:
			nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_OP_ERR);
			s = RESP_DONE;
			break;
		case RESP_DONE: break;
		}
	}
}

/* resp_write_only's DMA failed (rc_write_only.h): as do_write's failed
 * payload, the message was started; the state machine NAKs it. */
void resp_write_only_fail(struct snic_nic *nic, struct snic_qp *qp,
			  const struct roce_hdrs *h)
{
	/* h may be as roce_parse_rx_first left it (nic/rx.c): the NAK's
	 * steps get it whole */
	struct roce_hdrs whole = *h;

	roce_parse_rx_finish(&whole);
	qp->resp.in_write = true;
	resp_run(nic, qp, &whole, ROCE_WRITE_ONLY_FLAGS, RESP_ERR_RKEY);
}

/* A request packet for an RC QP, after its callers (nic/rx.c for RC,
 * xrc.c) offered it to resp_write_only: asked once, a declined WRITE_ONLY
 * is not checked a second time here.  The usual one passes every check in
 * turn: those steps run in the switch's order straight from one to the
 * next (no dispatch per state), and resp_run's switch takes over at the
 * first step that leads anywhere else. */
void resp_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	uint32_t fl = roce_opcodes[h->opcode].flags;
	enum resp_state s = check_qp_state(qp);

	if (s == RESP_CHECK_PSN)
		s = check_psn(qp, h);
	if (s == RESP_CHECK_OP_SEQ)
		s = check_op_seq(&qp->resp, fl);
	if (s == RESP_CHECK_LENGTH)
		s = check_length(qp, h, fl);
	if (s == RESP_EXECUTE)
		s = execute(nic, qp, h, fl);
	if (s == RESP_ACKNOWLEDGE)
		s = acknowledge(qp, h, fl);
	if (s != RESP_DONE)
		resp_run(nic, qp, h, fl, s);
}
