/* SPDX-License-Identifier: MIT */
/*
 * RC responder (IBTA 9.7.5.2, 9.7.4.1): PSN checks, opcode sequence and
 * length checks, RECV consumption for SENDs, rkey checks for WRITE, READ
 * and atomics (before any byte of host memory is touched), READ responses
 * segmented at the path MTU, and coalesced ACKs.  Access violations are
 * NAKed and move the QP to the error state with an affiliated event
 * (IBTA 9.9.3.1.2 / 11.6.3.1).
 */
#include <string.h>

#include "transport/transport.h"

#define ACK_CREDIT_NONE  0x1f /* no end-to-end credits advertised */

static uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

static uint32_t req_psns(const struct snic_qp *qp, const struct roce_hdrs *h);
static void send_aeth(struct snic_nic *nic, struct snic_qp *qp, uint8_t syn,
		      uint32_t psn)
{
	struct roce_hdrs h;
	struct snic_pkt *p;

	pkt_fill_hdrs(nic, qp, &h, ROCE_RC_ACK, psn);
	h.aeth_syndrome = syn;
	h.aeth_msn = qp->resp.msn & ROCE_PSN_MASK;
	p = pkt_build(nic, &h, NULL, 0);
	if (p)
		core_tx(&nic->core, p);
}

/* The coalesced ACK (psn = epsn - 1).  It waits while READ/atomic
 * responses are queued: responses leave in PSN order (9.7.5.1.2), and an
 * ACK covering a READ's PSNs before its data would tell the requester the
 * data was lost. */
void resp_flush_acks(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->resp.ack_pending || qp->resp.rd_npend)
		return;
	qp->resp.ack_pending = false;
	QCNT_INC(nic, qp, acks_sent);
	send_aeth(nic, qp, ROCE_AETH_ACK | ACK_CREDIT_NONE,
		  psn_add(qp->resp.epsn, ROCE_PSN_MASK)); /* epsn - 1 */
}

/* A fatal request error: NAK it, then the QP goes to the error state. */
static void nak_fatal(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
		      uint8_t code)
{
	enum snic_event_type ev = code == ROCE_NAK_REM_ACCESS
				  ? SNIC_EV_QP_ACCESS_ERR : SNIC_EV_QP_REQ_ERR;

	if (code == ROCE_NAK_REM_ACCESS)
		QCNT_INC(nic, qp, nak_access_sent);
	else if (code == ROCE_NAK_REM_OP_ERR)
		QCNT_INC(nic, qp, nak_rem_op_sent);
	else
		QCNT_INC(nic, qp, nak_inv_req_sent);
	resp_flush_acks(nic, qp);
	send_aeth(nic, qp, ROCE_AETH_NAK | code, psn);
	qp_to_error(nic, qp, ev);
}

static void rnr_nak(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	QCNT_INC(nic, qp, rnr_nak_sent);
	resp_flush_acks(nic, qp);
	send_aeth(nic, qp, ROCE_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f), psn);
}

/* ---------------------------------------------------------------------- */
/* Request handlers.  Return false when the packet was not consumed (the
 * PSN does not advance: RNR or an error that ended the QP).              */

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
		qp_recv_cqe(nic, qp, SNIC_WC_SUCCESS, SNIC_WC_RECV, h);
		qp->resp.msn++;
	}
	return RESP_ACKNOWLEDGE;
}

/* A WRITE's FIRST packet: R_Key and access before any byte. */
static bool write_start(struct snic_nic *nic, struct snic_qp *qp,
			const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;

	if (!rkey_ok(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
		     SNIC_ACCESS_REMOTE_WRITE))
		return false;
	r->in_write = true;
	r->wr_mr = h->reth_rkey;
	r->wr_va = h->reth_va;
	r->wr_left = r->wr_len = h->reth_len;
	return true;
}

static enum resp_state do_write(struct snic_nic *nic, struct snic_qp *qp,
				const struct roce_hdrs *h, uint32_t fl)
{
	struct snic_resp *r = &qp->resp;
	enum resp_state next;

	if ((fl & ROCE_F_FIRST) && !write_start(nic, qp, h))
		return RESP_ERR_RKEY;
	if (h->payload_len > r->wr_left ||
	    ((fl & ROCE_F_LAST) && h->payload_len != r->wr_left))
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
	if (!resp_write_payload(nic, qp, h))
		return RESP_ERR_RKEY;
	if (fl & ROCE_F_LAST) {
		r->in_write = false;
		r->msn++;
		if (fl & ROCE_F_IMM) {
			r->recv_len = r->wr_len;
			qp_recv_cqe(nic, qp, SNIC_WC_SUCCESS,
				    SNIC_WC_RECV_RDMA_WITH_IMM, h);
		}
	}
	return RESP_ACKNOWLEDGE;
}

static uint32_t rd_slots(const struct snic_qp *qp)
{
	return qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
}

/* READs/atomics accepted and not yet answered once (duplicates being
 * answered again do not count against max_dest_rd_atomic). */
static uint32_t rd_first_pending(const struct snic_resp *r)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < SNIC_MAX_RD_ATOM; i++)
		n += r->rd[i].pending && !r->rd[i].replay;
	return n;
}

static void rd_unpend(struct snic_resp *r, struct snic_rd_res *rd)
{
	if (rd->pending) {
		rd->pending = false;
		r->rd_npend--;
	}
}

/* The next responder resource, for the request at h->psn owning npsn
 * PSNs.  It takes the place of the oldest one in the history; a replay
 * still pending there is dropped (its requester has long moved on). */
static struct snic_rd_res *rd_new(struct snic_resp *r,
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
	rd->psn = rd->first_psn = rd->start_psn = h->psn;
	rd->end_psn = psn_add(h->psn, npsn - 1);
	return rd;
}

static enum resp_state do_read(struct snic_nic *nic, struct snic_qp *qp,
			       const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	struct snic_rd_res *rd;

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
	    !(mr = mr_check(nic, h->atomic_rkey, qp->pd, SNIC_ACCESS_REMOTE_ATOMIC,
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
/* Checks.                                                                 */

static enum resp_state check_qp_state(const struct snic_qp *qp)
{
	return qp->state < SNIC_QPS_RTR || qp->state == SNIC_QPS_ERR
	       ? RESP_ERR_QP_STATE : RESP_CHECK_PSN;
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

/* Opcode sequence (IBTA 9.7.5.2): inside a multi-packet SEND only SEND
 * MIDDLE/LAST may come, inside a WRITE only WRITE MIDDLE/LAST; outside
 * both, only FIRST or ONLY packets. */
static enum resp_state check_op_seq(const struct snic_resp *r, uint32_t fl)
{
	bool ok;

	if (r->in_send && !r->in_write)
		ok = (fl & ROCE_F_SEND) && !(fl & ROCE_F_FIRST);
	else if (r->in_write)
		ok = (fl & ROCE_F_WRITE) && !(fl & ROCE_F_FIRST);
	else
		ok = (fl & ROCE_F_FIRST) != 0;
	return ok ? RESP_CHECK_LENGTH : RESP_ERR_OP_SEQ;
}

/* Payload length per packet position (IBTA 9.7.5.2, as rxe's
 * check_length): FIRST and MIDDLE carry exactly one PMTU, LAST 1..PMTU,
 * ONLY 0..PMTU. */
static enum resp_state check_length(const struct snic_qp *qp,
				    const struct roce_hdrs *h, uint32_t fl)
{
	bool first = fl & ROCE_F_FIRST, last = fl & ROCE_F_LAST;
	bool ok;

	if (!(fl & ROCE_F_PAYLOAD))
		ok = h->payload_len == 0;
	else if (first && last)
		ok = h->payload_len <= qp->mtu;
	else if (!last)
		ok = h->payload_len == qp->mtu;
	else
		ok = h->payload_len >= 1 && h->payload_len <= qp->mtu;
	return ok ? RESP_EXECUTE : RESP_ERR_LENGTH;
}

static uint32_t req_psns(const struct snic_qp *qp, const struct roce_hdrs *h)
{
	if (h->opcode != ROCE_RC_READ_REQ || h->reth_len == 0)
		return 1;
	return (h->reth_len + qp->mtu - 1) / qp->mtu;
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

/* One NAK per sequence error (9.7.5.2.2): the requester goes back to ePSN. */
static enum resp_state err_psn_seq(struct snic_nic *nic, struct snic_qp *qp)
{
	QCNT_INC(nic, qp, rx_drop_bad_psn);
	if (!qp->resp.nak_sent) {
		qp->resp.nak_sent = true;
		QCNT_INC(nic, qp, nak_seq_sent);
		resp_flush_acks(nic, qp);
		send_aeth(nic, qp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR,
			  qp->resp.epsn);
	}
	return RESP_DONE;
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

	if (roce_psn_diff(rd->end_psn, h->psn) != (int32_t)npsn - 1)
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

static void on_duplicate(struct snic_nic *nic, struct snic_qp *qp,
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

/* A request packet for an RC QP: the state machine's transitions. */
void resp_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	uint32_t fl = roce_opcodes[h->opcode].flags;
	enum resp_state s = RESP_CHECK_QP_STATE;

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
		case RESP_ERR_PSN_SEQ: s = err_psn_seq(nic, qp); break;
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

/*
 * A QP destroyed a moment ago (SNIC_LINGER_NS) still answers duplicates of
 * requests it had accepted with an ACK, as TCP's TIME_WAIT answers a
 * repeated FIN: the ACK of the last message may have been lost, and its
 * requester would otherwise retry into silence and fail a message that
 * did arrive.  Only SEND/WRITE duplicates from the same peer, below the
 * PSN the QP expected; nothing is executed.  Returns true when the frame
 * was such a duplicate (answered).
 */
bool resp_linger_rx(struct snic_nic *nic, const struct roce_hdrs *h)
{
	struct snic_qp *qp = &nic->qps[SNIC_QPN_IDX(h->dqpn)];
	uint32_t fl = roce_opcodes[h->opcode].flags;

	if (qp->in_use || qp->qpn != h->dqpn || nic->core.now >= qp->linger_until ||
	    qp->type != SNIC_QPT_RC || h->sip != qp->dip ||
	    h->opcode >= ROCE_UC_BASE ||
	    !(fl & (ROCE_F_SEND | ROCE_F_WRITE)) ||
	    roce_psn_diff(h->psn, qp->resp.epsn) >= 0)
		return false;
	CNT_INC(&nic->core, linger_acks);
	send_aeth(nic, qp, ROCE_AETH_ACK | ACK_CREDIT_NONE,
		  psn_add(qp->resp.epsn, ROCE_PSN_MASK)); /* epsn - 1 */
	return true;
}

/* ---------------------------------------------------------------------- */
/* READ responses.                                                         */

static struct snic_rd_res *rd_at_head(struct snic_resp *r)
{
	return &r->rd[r->rd_head % SNIC_MAX_RD_ATOM];
}

/* Its last response is out: off the pending set, on to the next. */
static void rd_done(struct snic_resp *r, struct snic_rd_res *rd)
{
	rd_unpend(r, rd);
	rd->replay = false;
	r->rd_head++;
}

static uint8_t rd_opcode(const struct snic_qp *qp, const struct snic_rd_res *rd)
{
	return roce_seg_opcode(ROCE_RC_READ_RESP_FIRST, rd->sent == 0,
			       rd->len - rd->sent <= qp->mtu, false);
}

/* One response packet; false when out of buffers or the QP failed. */
static bool atomic_ack(struct snic_nic *nic, struct snic_qp *qp,
		       struct snic_rd_res *rd)
{
	struct snic_resp *r = &qp->resp;
	struct roce_hdrs h;
	struct snic_pkt *p;

	pkt_fill_hdrs(nic, qp, &h, ROCE_RC_ATOMIC_ACK, rd->psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ACK_CREDIT_NONE;
	h.aeth_msn = (r->msn + !rd->replay) & ROCE_PSN_MASK;
	h.atomic_orig = rd->orig;
	p = pkt_build(nic, &h, NULL, 0);
	if (!p)
		return false;
	core_tx(&nic->core, p);
	if (!rd->replay)
		r->msn++; /* counted once */
	rd_done(r, rd);
	return true;
}

static bool rd_packet(struct snic_nic *nic, struct snic_qp *qp,
		      struct snic_rd_res *rd)
{
	struct snic_resp *r = &qp->resp;
	uint8_t op = rd_opcode(qp, rd);
	uint32_t n = rd->len - rd->sent;
	const struct snic_mr *mr = NULL;
	struct roce_hdrs h;
	struct snic_pkt *p;

	if (n > qp->mtu)
		n = qp->mtu;
	if (n && !(mr = mr_check(nic, rd->rkey, qp->pd, SNIC_ACCESS_REMOTE_READ,
				 rd->va + rd->sent, n))) {
		/* deregistered while we answered: access error (9.7.5.2.3) */
		nak_fatal(nic, qp, rd->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	p = core_pkt_alloc(&nic->core);
	if (!p)
		return false;
	if (n && mr_read(nic, mr, rd->va + rd->sent, p->data + roce_hdr_len(op),
			 n)) {
		/* no response without its data: the memory could not be
		 * read, a responder-side error (9.9.3.1.3); counted in
		 * dma_errors by core_dma_read */
		core_pkt_unused(&nic->core, p);
		nak_fatal(nic, qp, rd->psn, ROCE_NAK_REM_OP_ERR);
		return false;
	}
	if ((roce_opcodes[op].flags & ROCE_F_LAST) && !rd->replay)
		r->msn++;
	pkt_fill_hdrs(nic, qp, &h, op, rd->psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ACK_CREDIT_NONE;
	h.aeth_msn = r->msn & ROCE_PSN_MASK;
	p->len = (uint16_t)roce_build(p->data, &h, n);
	core_tx(&nic->core, p);
	CNT_INC(&nic->core, read_responses);
	rd->sent += n;
	rd->psn = psn_add(rd->psn, 1);
	if (roce_opcodes[op].flags & ROCE_F_LAST) {
		rd_done(r, rd);
	}
	return true;
}

static bool resp_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;
	unsigned budget = SNIC_QP_TX_BUDGET;

	while (budget-- && nic->core.tx_budget) {
		struct snic_rd_res *rd;
		bool sent;

		if (qp->state == SNIC_QPS_ERR)
			return false;
		while (r->rd_head != r->rd_tail && !rd_at_head(r)->pending)
			r->rd_head++; /* answered already, or never replayed */
		rd = rd_at_head(r);
		if (r->rd_head == r->rd_tail) {
			resp_flush_acks(nic, qp); /* the ACK that waited */
			return false;
		}
		if (!qp->dmac_valid)
			return true;
		sent = rd->atomic ? atomic_ack(nic, qp, rd) : rd_packet(nic, qp, rd);
		if (!sent)
			return qp->state != SNIC_QPS_ERR;
	}
	return true;
}

unsigned resp_poll(struct snic_nic *nic)
{
	uint32_t n = nic->resp_tail - nic->resp_head;
	unsigned work = 0;

	while (n-- && nic->core.tx_budget) {
		struct snic_qp *qp =
			&nic->qps[nic->resp_list[nic->resp_head++ % SNIC_MAX_QP]];
		uint32_t before = nic->core.tx_budget;

		qp->on_resp_list = false;
		if (!qp->in_use)
			continue;
		if (resp_qp(nic, qp))
			qp_resp_schedule(nic, qp);
		work += before - nic->core.tx_budget;
	}
	return work;
}
