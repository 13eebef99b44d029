/* SPDX-License-Identifier: MIT */
/*
 * RC completer (IBTA 9.7.5.1.5-9.7.5.1.7): matches ACKs, NAKs, READ
 * responses and atomic ACKs with the in-flight window, writes send CQEs in
 * SQ order, and turns NAKs into the verbs completion errors.  READ and
 * atomic responses are implicit ACKs of everything before them.
 */
#include <string.h>

#include "transport/transport.h"

/* RNR NAK timer field -> microseconds (IBTA 9.7.5.2.8, table 45). */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static struct snic_inflight *oldest(struct snic_qp *qp)
{
	return qp->infl_head == qp->infl_tail
	       ? NULL : &qp->infl[qp->infl_head % SNIC_INFLIGHT];
}

/* Whether an acknowledgement of everything up to psn (with upto_excl:
 * before it) completes f, the oldest message (NULL: none). */
static inline __attribute__((always_inline))
bool retirable(const struct snic_inflight *f, uint32_t psn, bool upto_excl)
{
	int32_t d;

	if (!f)
		return false;
	d = roce_psn_diff(f->last_psn, psn);
	if (d > 0 || (upto_excl && d == 0))
		return false;
	/* READ/atomic complete on their response, not on an ACK */
	return !wr_is_rd_atomic(f->opcode) || f->done;
}

/* The oldest message f leaves the window, its CQE into run when there
 * is one (retire_in flushes it); rd: it is a READ or atomic.  What
 * follows from the window's new head is the caller's (retired). */
static inline __attribute__((always_inline))
void retire_one(struct snic_nic *nic, struct snic_qp *qp,
		const struct snic_inflight *f, bool rd, uint8_t status,
		struct cq_run *run)
{
	if (run)
		qp_send_cqe_run(nic, qp, f, status, run);
	else
		qp_send_cqe(nic, qp, f, status);
	if (rd)
		qp->rd_out--;
	qp->infl_head++;
}

/* Messages up to f (the newest of them) retired: their retained data is
 * free (they retire in order), a go-back-N pass behind them moves on, and
 * the RNR retries start again.  After an ACK once for all it retired:
 * req_retired's conditions only turn true as the head moves on, so once
 * at the last head leaves what it left done after each. */
static inline __attribute__((always_inline))
void retired(struct snic_qp *qp, const struct snic_inflight *f)
{
	retain_release(qp, f);
	req_retired(qp);
	qp->rnr_left = qp->attr.rnr_retry;
}

static void retire_oldest(struct snic_nic *nic, struct snic_qp *qp,
			  uint8_t status)
{
	struct snic_inflight *f = oldest(qp);

	retire_one(nic, qp, f, wr_is_rd_atomic(f->opcode), status, NULL);
	retired(qp, f);
}

/* Complete every message whose last PSN is at or before `psn`.  With
 * `upto_excl` the message holding psn itself is left (READ responses and
 * NAKs acknowledge only what precedes them).  When one completed, the
 * progress is noted (timer_progress).  With `runs` (an ACK, which may
 * complete many messages) the CQEs go out in runs of up to SNIC_CQ_RUN,
 * the first one too (cq_run_flush writes a run of one as cq_post would;
 * on every core: each claims its run's slots and writes them itself,
 * objects/cq.c) and what follows from the window's new head is done once
 * (retired);
 * inlined twice, so the other callers (a READ response completes one)
 * carry none of it. */
static inline __attribute__((always_inline))
void retire_in(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
	       bool upto_excl, bool runs)
{
	struct snic_inflight *f, *last = NULL;
	struct cq_run run; /* not cleared: 520 bytes, each CQE is filled */
	struct cq_run *r = runs ? &run : NULL;

	run.cq_idx = qp->scq;
	run.n = 0;
	while (retirable(f = oldest(qp), psn, upto_excl)) {
		retire_one(nic, qp, f, wr_is_rd_atomic(f->opcode),
			   SNIC_WC_SUCCESS, r);
		if (!runs) /* one message, the usual case here: no more */
			retired(qp, f);
		last = f;
	}
	if (runs) {
		cq_run_flush(nic, &run);
		if (last)
			retired(qp, last);
	}
	if (last)
		timer_progress(nic, qp);
	if (qp->state == SNIC_QPS_RTS)
		qp_req_schedule(nic, qp); /* window space, fence, rd slots */
}

static void retire_upto(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
			bool upto_excl)
{
	retire_in(nic, qp, psn, upto_excl, false);
}

static void retire_acked(struct snic_nic *nic, struct snic_qp *qp,
			 uint32_t psn)
{
	retire_in(nic, qp, psn, false, true);
}

static void fail_oldest(struct snic_nic *nic, struct snic_qp *qp, uint8_t status)
{
	if (oldest(qp))
		retire_oldest(nic, qp, status);
	qp_to_error(nic, qp, SNIC_EV_NONE);
}

static void on_rnr(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
		   uint8_t timer)
{
	QCNT_INC(nic, qp, rnr_nak_recv);
	retire_upto(nic, qp, psn, true);
	/* rnr_retry 7 means retry for ever (IBTA 9.7.5.2.8) */
	if (qp->attr.rnr_retry != 7) {
		if (qp->rnr_left == 0) {
			fail_oldest(nic, qp, SNIC_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->rnr_left--;
	}
	qp->wait_until = nic->core.now + (uint64_t)rnr_us[timer & 31] * 1000;
	if (qp->wait_until == 0)
		qp->wait_until = 1;
	/* the peer answered: no transport timeout while we wait; the timer
	 * starts again with the first packet sent after the wait */
	qp->rto_at = 0;
	timer_arm(nic, qp);
	qp->undo_valid = false; /* a loss reported: no undo */
	req_rewind(nic, qp, psn);
}

static void on_ack(struct snic_nic *nic, struct snic_qp *qp,
		   const struct roce_hdrs *h)
{
	QCNT_INC(nic, qp, acks_recv);
	if (!qp->acked_valid || roce_psn_diff(h->psn, qp->acked_psn) > 0) {
		timer_acked(nic, qp, h->psn);
		qp->acked_psn = h->psn;
		qp->acked_valid = true;
		/* progress (also inside a long message).  An ACK that
		 * completes a message has it noted by retire_acked, after
		 * the retirement, in the same pass: a note here as well only
		 * set deadlines that one sets again or clears (timer_idle).
		 * While an RNR back-off waits there is no timer_idle: the
		 * probe deadline set here stays, so it is noted here too. */
		if (qp->wait_until || !retirable(oldest(qp), h->psn, false))
			timer_progress(nic, qp);
	} else if (h->psn == qp->acked_psn) {
		timer_peer_busy(nic, qp);
	}
	retire_acked(nic, qp, h->psn);
}

/* A sequence NAK (9.7.5.1.5 / 9.7.5.2.2): go back N from its PSN.  The
 * responder NAKs once per sequence error and names the PSN it expects,
 * and names a PSN only once (a new error is further on), so the same PSN
 * again is a copy of the NAK already acted on (a link that duplicates or
 * delays: the interop suite's every-20th-frame duplication), and a PSN
 * that an ACK already covered is older still; sent back again, the
 * requester would restart the pass the first one started.  A timeout or
 * probe forgets it (the PSN space wraps; not on the ACK path, which
 * stays as it was). */
static void on_nak_seq(struct snic_nic *nic, struct snic_qp *qp,
		       const struct roce_hdrs *h)
{
	QCNT_INC(nic, qp, nak_seq_recv);
	if ((qp->nak_valid && h->psn == qp->nak_psn) ||
	    (qp->acked_valid && roce_psn_diff(h->psn, qp->acked_psn) <= 0)) {
		QCNT_INC(nic, qp, rx_drop_unexpected); /* as a ghost, 9.7.5.1.6 */
		return;
	}
	retire_upto(nic, qp, h->psn, true);
	qp->nak_valid = true;
	qp->nak_psn = h->psn;
	/* The echo of an RNR NAK (9.7.5.2.8): the responder, which could
	 * not take the packet at ePSN, found the ones behind it out of
	 * sequence and names the same PSN (rxe does so too).  The RNR wait
	 * sends it again from there anyway: nothing was lost, so the
	 * window stays as it is and the wait is not cut short. */
	if (qp->wait_until && h->psn == qp->npsn) {
		CNT_INC(&nic->core, nak_seq_rnr);
		return;
	}
	req_resend_lost(nic, qp, h->psn);
}

/* A NAK acknowledges what precedes its PSN (9.7.5.1.5); a fatal one then
 * completes the oldest WQE with the matching verbs status. */
static void on_fatal_nak(struct snic_nic *nic, struct snic_qp *qp,
			 const struct roce_hdrs *h, uint8_t status)
{
	retire_upto(nic, qp, h->psn, true);
	fail_oldest(nic, qp, status);
}

/* The oldest READ/atomic still waiting for its response. */
static struct snic_inflight *pending_rd(struct snic_qp *qp)
{
	for (uint32_t i = qp->infl_head; i != qp->infl_tail; i++) {
		struct snic_inflight *f = &qp->infl[i % SNIC_INFLIGHT];

		if (wr_is_rd_atomic(f->opcode) && !f->done)
			return f;
	}
	return NULL;
}

/* First response packet of a READ: its local SGEs, kept when the request
 * was sent (sq_retain.c; the host's WQE is not read again), checked again
 * if any MR has changed since (sgl_reload). */
static bool rd_start(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_inflight *f)
{
	struct snic_wqe_sge sge[SNIC_MAX_SGE];
	uint32_t n = retain_sges(qp, f, sge);

	if (sgl_reload(nic, &qp->rd_sgl, sge, n, qp->pd, SNIC_ACCESS_LOCAL_WRITE,
		       f->sgl_epoch))
		return false;
	qp->rd_active = true;
	qp->rd_psn = f->first_psn;
	return true;
}

/* True when a message completed (retire_upto noted the progress). */
static bool finish_rd(struct snic_nic *nic, struct snic_qp *qp,
		      struct snic_inflight *f)
{
	uint32_t head = qp->infl_head;

	f->done = 1;
	qp->rd_active = false;
	/* everything up to this response, then whatever a later ACK already
	 * covered (the ACK may overtake the responses, 9.7.5.1.7) */
	retire_upto(nic, qp, f->last_psn, false);
	if (qp->acked_valid)
		retire_upto(nic, qp, qp->acked_psn, false);
	return qp->infl_head != head;
}

/* A READ response beyond the one expected: the ones between were lost
 * (responses leave in PSN order, 9.7.5.1.2).  Ask again at once for the
 * rest, from the first missing PSN; once per gap, so the rest of the old
 * stream does not trigger a request each.  A response of a later READ
 * counts too (its PSN up to psn_hi): the responder has answered past the
 * pending READ, whose response was lost, or whose request was lost and
 * the later one is a duplicate it replays; either way only asking again
 * recovers it.  Left to the timer, a READ at 20 % loss needs its request
 * and its response through in the same round trip, so retry_cnt 7 ran
 * out (8 tries, ~0.4 each failing) on several seeds of the loss suite.
 * The same holds whichever kinds the two are: a READ response or atomic
 * ACK past a pending atomic or READ is the implied NAK of a lost response
 * (responses leave in PSN order, 9.7.5.1.2; the lost one is asked again,
 * 9.7.5.1.7, and a replayed atomic is answered from its saved result,
 * 9.7.5.2.2, so it is never executed twice). */
static void rd_gap(struct snic_nic *nic, struct snic_qp *qp,
		   const struct snic_inflight *f, uint32_t psn)
{
	uint32_t want = qp->rd_active ? qp->rd_psn : f->first_psn;

	if (roce_psn_diff(psn, want) <= 0 || roce_psn_diff(psn, qp->psn_hi) > 0)
		return; /* a stale duplicate, not a gap */
	if (qp->rd_gap_valid && qp->rd_gap_psn == want)
		return;
	qp->rd_gap_valid = true;
	qp->rd_gap_psn = want;
	req_resend_lost(nic, qp, want);
}

/* A timer (the transport timer or a probe) goes back N from the first
 * unacknowledged PSN, with nothing the peer reported lost: noted, so
 * that comp_undo can take the pass back.  The window to restore is the
 * one before the first such pass of a loss episode. */
static void resend_on_timer(struct snic_nic *nic, struct snic_qp *qp)
{
	uint32_t psn = req_unacked_psn(qp);
	uint32_t cwnd = qp->undo_valid ? qp->undo_cwnd : qp->cwnd;

	req_resend_lost(nic, qp, psn);
	qp->undo_cwnd = cwnd;
	qp->undo_valid = true;
	qp->undo_psn = qp->psn_hi;
	qp->rs_hi = (psn - 1) & ROCE_PSN_MASK;
}

/* Undo (as TCP's F-RTO, RFC 5682, and Eifel, RFC 3522): a timer went back
 * N while nothing was lost, the peer only far behind (rdma_rxe under QEMU
 * TCG, thousands of packets queued, answers seconds late).  An ACK of a
 * PSN the pass has not sent again answers a packet sent before the pass
 * (the responder takes PSNs in order, 9.7.5.1.1): the originals are
 * arriving, so the pass stops, sending goes on after the newest PSN and
 * the window is what it was.  Without it each expiry queued the window
 * again behind the peer's backlog; the peer, busy with duplicates,
 * acknowledged nothing new for longer than the retries lasted
 * (interop-lossy send-bw-duplicate: RETRY_EXC_ERR).  What past the ACK
 * is really lost is found as any loss is: a sequence NAK, a probe, the
 * timer.  Not with a READ or atomic in flight (the pass asks their
 * responses again); a pass a NAK started is never undone. */
void comp_undo(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	if (roce_psn_diff(psn, qp->rs_hi) > 0 &&
	    roce_psn_diff(psn, qp->undo_psn) <= 0 && !qp->rd_out &&
	    req_pass_undo(nic, qp)) {
		qp->cwnd = qp->undo_cwnd;
		qp->undo_valid = false;
		CNT_INC(&nic->core, retransmits_undone);
		return;
	}
	/* everything sent before the pass acknowledged: the episode is over */
	if (roce_psn_diff(psn, qp->undo_psn) >= 0)
		qp->undo_valid = false;
}

/* The transport timer expired with messages outstanding (IBTA 9.7.6.1.3):
 * go back to the oldest unacknowledged PSN, or, with the retries used up,
 * complete the oldest WQE with IBV_WC_RETRY_EXC_ERR and move the QP to the
 * error state (everything else flushes, C10-39).  retry_cnt is a plain
 * 3-bit count: 7 is 7 retries, 8 transmissions in all.  Only rnr_retry
 * has an "infinite" value (7, IBTA 9.7.5.2.8); ConnectX does the same
 * (Linux rxe retries for ever at 7, a deviation we do not copy). */
void comp_timeout(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_inflight *f = oldest(qp);

	if (!f || (qp->state != SNIC_QPS_RTS && qp->state != SNIC_QPS_SQD) ||
	    qp->wait_until || timer_peer_backlog(nic, qp))
		return;
	CNT_INC(&nic->core, timeouts);
	if (qp->retry_left == 0) {
		CNT_INC(&nic->core, retry_exc_errors);
		fail_oldest(nic, qp, SNIC_WC_RETRY_EXC_ERR);
		return;
	}
	qp->retry_left--;
	timer_backoff(qp);
	qp->rd_gap_valid = qp->nak_valid = false;
	resend_on_timer(nic, qp);
}

/* Tail-loss probe (timers.c): nothing was acknowledged for two round
 * trips after the last packet sent, so the tail (or its ACK) was probably
 * lost.  With no loss seen (the full window, cwnd 0) the probe sends only
 * the last packet of a SEND or WRITE again, with AckReq (TCP's tail-loss
 * probe, RFC 8985 7.3): the peer ACKs it if it has the rest, or NAKs the
 * first PSN it lacks (9.7.5.2.2); a peer that is merely slow (rdma_rxe
 * under QEMU TCG pauses for tens of ms with thousands of packets queued)
 * gets one packet more, not the whole window again, which it would
 * answer with an ACK per duplicate and no progress until the transport
 * timer fired.  After a loss (a NAK or a gap the peer may already have
 * NAKed, and NAKs once per gap), with a READ/atomic last, or with the
 * last packet already ACKed (what is missing is an older READ/atomic's
 * response: the peer would only ACK the probe again), the probe goes
 * back to the first unacknowledged PSN.  Unlike a timeout it uses
 * no retry: the transport timer keeps running, so a peer that is really
 * gone still ends in RETRY_EXC_ERR after (retry_cnt + 1) timeouts
 * (9.7.6.1.3), and a lost NAK is recovered by it. */
void comp_probe(struct snic_nic *nic, struct snic_qp *qp)
{
	const struct snic_inflight *last;

	if (!oldest(qp) || qp->state != SNIC_QPS_RTS || qp->wait_until)
		return;
	CNT_INC(&nic->core, tail_probes);
	qp->rd_gap_valid = qp->nak_valid = false;
	last = &qp->infl[(qp->infl_tail - 1) % SNIC_INFLIGHT];
	if (!qp->cwnd && !wr_is_rd_atomic(last->opcode) &&
	    !(qp->acked_valid && qp->acked_psn == qp->psn_hi))
		req_rewind(nic, qp, qp->psn_hi);
	else
		resend_on_timer(nic, qp);
}

/* A READ response's payload (IBTA 9.7.5.1.7 / C9-29): FIRST and MIDDLE
 * carry exactly the path MTU, LAST and ONLY exactly what remains of the
 * READ.  Anything else would complete a READ whose buffer was never
 * (fully) written. */
static bool rd_resp_len_ok(const struct snic_qp *qp,
			   const struct snic_inflight *f,
			   const struct roce_hdrs *h, uint32_t fl)
{
	uint64_t done = (uint64_t)((qp->rd_psn - f->first_psn) & ROCE_PSN_MASK) *
			qp->mtu;
	uint64_t left = f->len > done ? f->len - done : 0;

	if (fl & ROCE_F_LAST)
		return h->payload_len == left;
	return h->payload_len == qp->mtu && left > qp->mtu;
}

/* A READ response's payload is in: its PSN done, the READ finished at
 * its LAST. */
static inline __attribute__((always_inline))
void rd_resp_took(struct snic_nic *nic, struct snic_qp *qp,
		  struct snic_inflight *f, uint32_t fl)
{
	qp->rd_psn = (qp->rd_psn + 1) & ROCE_PSN_MASK;
	timer_window_grow(qp, 1); /* READs paced after a loss, as writes */
	/* a response is progress: the last one's retirement notes it (once
	 * per message, not twice), any other here */
	if (!(fl & ROCE_F_LAST) || !finish_rd(nic, qp, f))
		timer_progress(nic, qp);
}

static void on_read_resp(struct snic_nic *nic, struct snic_qp *qp,
			 const struct roce_hdrs *h)
{
	struct snic_inflight *f = pending_rd(qp);
	uint32_t fl = roce_opcodes[h->opcode].flags;

	if (!f || f->opcode != SNIC_WR_RDMA_READ) {
		QCNT_INC(nic, qp, rx_drop_unexpected);
		if (f) /* an atomic waits: its ACK was lost */
			rd_gap(nic, qp, f, h->psn);
		return;
	}
	if (!qp->rd_active) {
		if (!(fl & ROCE_F_FIRST) || h->psn != f->first_psn) {
			QCNT_INC(nic, qp, rx_drop_bad_psn);
			rd_gap(nic, qp, f, h->psn);
			return;
		}
		retire_upto(nic, qp, f->first_psn, true);
		if (!rd_start(nic, qp, f)) {
			fail_oldest(nic, qp, SNIC_WC_LOC_PROT_ERR);
			return;
		}
	}
	if (h->psn != qp->rd_psn) {
		QCNT_INC(nic, qp, rx_drop_bad_psn);
		rd_gap(nic, qp, f, h->psn);
		return;
	}
	if (!rd_resp_len_ok(qp, f, h, fl)) {
		CNT_INC(&nic->core, rx_drop_read_resp_len);
		return; /* not this response: the timer asks again */
	}
	/* the length fits (rd_resp_len_ok): a failed copy is the sink's
	 * memory, LOC_PROT_ERR as a SEND's placement and an atomic's */
	if (h->payload_len &&
	    sgl_copy_in(nic, &qp->rd_sgl, h->payload, h->payload_len)) {
		fail_oldest(nic, qp, SNIC_WC_LOC_PROT_ERR);
		return;
	}
	rd_resp_took(nic, qp, f, fl);
}

static void on_atomic_ack(struct snic_nic *nic, struct snic_qp *qp,
			  const struct roce_hdrs *h)
{
	struct snic_inflight *f = pending_rd(qp);

	if (!f || f->opcode == SNIC_WR_RDMA_READ || h->psn != f->first_psn) {
		QCNT_INC(nic, qp, rx_drop_unexpected);
		if (f) /* a later atomic's ACK: an earlier response was lost */
			rd_gap(nic, qp, f, h->psn);
		return;
	}
	retire_upto(nic, qp, f->first_psn, true);
	if (!rd_start(nic, qp, f) ||
	    sgl_copy_in(nic, &qp->rd_sgl, &h->atomic_orig, 8)) {
		fail_oldest(nic, qp, SNIC_WC_LOC_PROT_ERR);
		return;
	}
	finish_rd(nic, qp, f);
}

/* ---------------------------------------------------------------------- */
/* The response state machine (in the manner of Linux rxe's rxe_comp.c):
 * each step returns the next state, every transition is in comp_rx's
 * switch.  The ERR_ states are the NAKs of IBTA 9.7.5.2.1 table 44 that
 * end the QP, and the responses that match nothing.                      */

enum comp_state {
	COMP_CHECK_QP_STATE,    /* RTS, SQD and SQE take responses           */
	COMP_CHECK_PSN,         /* something outstanding, a PSN we sent      */
	COMP_CLASSIFY,          /* by opcode and AETH syndrome               */
	COMP_ACK,               /* retire what it covers (9.7.5.1.5)         */
	COMP_READ_RESP,         /* data in order (9.7.5.1.7)                 */
	COMP_ATOMIC_ACK,        /* the original value                        */
	COMP_RNR_NAK,           /* back off, then resend (9.7.5.2.8)         */
	COMP_NAK_SEQ,           /* go back N from the NAK's PSN (9.7.5.1)    */
	COMP_ERR_REM_ACCESS,    /* NAK remote access error                   */
	COMP_ERR_REM_OP,        /* NAK remote operational error              */
	COMP_ERR_REM_INV_REQ,   /* NAK invalid (RD) request, reserved codes  */
	COMP_ERR_QP_STATE,      /* dropped: not sending                      */
	COMP_ERR_UNEXPECTED,    /* a ghost or stray response (9.7.5.1.6)     */
	COMP_DONE,
};

static const char *const comp_state_names[] = {
	[COMP_CHECK_QP_STATE] = "CHECK_QP_STATE", [COMP_CHECK_PSN] = "CHECK_PSN",
	[COMP_CLASSIFY] = "CLASSIFY", [COMP_ACK] = "ACK",
	[COMP_READ_RESP] = "READ_RESP", [COMP_ATOMIC_ACK] = "ATOMIC_ACK",
	[COMP_RNR_NAK] = "RNR_NAK", [COMP_NAK_SEQ] = "NAK_SEQ",
	[COMP_ERR_REM_ACCESS] = "ERR_REM_ACCESS", [COMP_ERR_REM_OP] = "ERR_REM_OP",
	[COMP_ERR_REM_INV_REQ] = "ERR_REM_INV_REQ",
	[COMP_ERR_QP_STATE] = "ERR_QP_STATE",
	[COMP_ERR_UNEXPECTED] = "ERR_UNEXPECTED", [COMP_DONE] = "DONE",
};

_Static_assert(sizeof(comp_state_names) / sizeof(comp_state_names[0]) ==
	       COMP_DONE + 1, "completer state names");

const char *comp_state_name(unsigned s)
{
	return s <= COMP_DONE ? comp_state_names[s] : "?";
}

static enum comp_state check_qp_state(const struct snic_qp *qp)
{
	return qp->state == SNIC_QPS_RTS || qp->state == SNIC_QPS_SQD ||
	       qp->state == SNIC_QPS_SQE ? COMP_CHECK_PSN : COMP_ERR_QP_STATE;
}

/* Nothing outstanding, or a PSN we never sent: a duplicate or a stray
 * response (IBTA 9.7.5.1.6: ghost ACKs are ignored). */
static enum comp_state check_psn(struct snic_qp *qp, const struct roce_hdrs *h)
{
	if (!oldest(qp) || roce_psn_diff(h->psn, qp->psn_hi) > 0)
		return COMP_ERR_UNEXPECTED;
	return COMP_CLASSIFY;
}

static enum comp_state nak_state(uint8_t code)
{
	switch (code) {
	case ROCE_NAK_PSN_SEQ_ERR: return COMP_NAK_SEQ;
	case ROCE_NAK_REM_ACCESS: return COMP_ERR_REM_ACCESS;
	case ROCE_NAK_REM_OP_ERR: return COMP_ERR_REM_OP;
	default: return COMP_ERR_REM_INV_REQ;
	}
}

static enum comp_state classify(const struct roce_hdrs *h)
{
	if (h->opcode == ROCE_RC_ATOMIC_ACK)
		return COMP_ATOMIC_ACK;
	if (h->opcode != ROCE_RC_ACK)
		return COMP_READ_RESP;
	switch (h->aeth_syndrome & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK: return COMP_ACK;
	case ROCE_AETH_RNR_NAK: return COMP_RNR_NAK;
	case ROCE_AETH_NAK: return nak_state(h->aeth_syndrome & 0x1f);
	default: return COMP_ERR_UNEXPECTED;
	}
}

/*
 * The usual READ response MIDDLE or LAST (transport.h), whose ICRC the
 * parse left for later: the checks comp_rx's steps and on_read_resp make
 * for it (QP state, a PSN sent, the READ in progress, the next PSN, the
 * length), then its payload at the READ's gather cursor with the check
 * folded into the copy (sgl_copy_in_crc), in one piece of one SGE.  The
 * bytes go where the READ's own FIRST response (checked) started, at
 * the cursor only local state moves; a bad ICRC moves nothing else and
 * the response is asked for again (the READ's timer), writing the same
 * span.  DECLINED, nothing written, for anything else.
 */
enum rx_fold comp_read_more(struct snic_nic *nic, struct snic_qp *qp,
			    const struct roce_hdrs *h)
{
	uint32_t fl = roce_opcodes[h->opcode].flags, crc;
	struct snic_inflight *f;
	enum rx_fold v;

	if (check_qp_state(qp) != COMP_CHECK_PSN ||
	    check_psn(qp, h) != COMP_CLASSIFY || !(f = pending_rd(qp)) ||
	    f->opcode != SNIC_WR_RDMA_READ || !qp->rd_active ||
	    h->psn != qp->rd_psn || !rd_resp_len_ok(qp, f, h, fl))
		return RX_FOLD_DECLINED;
	crc = roce_icrc_later_hdrs(h);
	v = rx_fold_verdict(sgl_copy_in_crc(nic, &qp->rd_sgl, h->payload,
					    h->payload_len, &crc), h, &crc);
	if (v == RX_FOLD_PLACED) {
		sgl_skip(&qp->rd_sgl, h->payload_len);
		rd_resp_took(nic, qp, f, fl);
	}
	return v;
}

/* A response packet for an RC QP: the state machine's transitions. */
void comp_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	enum comp_state s = COMP_CHECK_QP_STATE;

	while (s != COMP_DONE) {
		switch (s) {
		case COMP_CHECK_QP_STATE: s = check_qp_state(qp); break;
		case COMP_CHECK_PSN: s = check_psn(qp, h); break;
		case COMP_CLASSIFY: s = classify(h); break;
		case COMP_ACK: on_ack(nic, qp, h); s = COMP_DONE; break;
		case COMP_READ_RESP: on_read_resp(nic, qp, h); s = COMP_DONE; break;
		case COMP_ATOMIC_ACK: on_atomic_ack(nic, qp, h); s = COMP_DONE; break;
		case COMP_RNR_NAK:
			on_rnr(nic, qp, h->psn, h->aeth_syndrome & 0x1f);
			s = COMP_DONE;
			break;
		case COMP_NAK_SEQ: on_nak_seq(nic, qp, h); s = COMP_DONE; break;
		case COMP_ERR_REM_ACCESS:
			QCNT_INC(nic, qp, nak_access_recv);
			on_fatal_nak(nic, qp, h, SNIC_WC_REM_ACCESS_ERR);
			s = COMP_DONE;
			break;
		case COMP_ERR_REM_OP:
			QCNT_INC(nic, qp, nak_rem_op_recv);
			on_fatal_nak(nic, qp, h, SNIC_WC_REM_OP_ERR);
			s = COMP_DONE;
			break;
		case COMP_ERR_REM_INV_REQ:
			QCNT_INC(nic, qp, nak_inv_req_recv);
			on_fatal_nak(nic, qp, h, SNIC_WC_REM_INV_REQ_ERR);
			s = COMP_DONE;
			break;
		case COMP_ERR_QP_STATE:
			QCNT_INC(nic, qp, rx_drop_qp_state);
			s = COMP_DONE;
			break;
		case COMP_ERR_UNEXPECTED:
			QCNT_INC(nic, qp, rx_drop_unexpected);
			s = COMP_DONE;
			break;
		case COMP_DONE: break;
		}
	}
}
