/* SPDX-License-Identifier: MIT */
/*
 * Requester timers: the transport (ACK) timer of IBTA 9.7.6.1 and the RNR
 * back-off of 9.7.5.2.8, a QP filed on the core's timer wheel
 * (core/timer_wheel.h) under its earliest deadline.  Deadlines that move
 * later (every ACK restarts the transport timer) are not re-filed: the QP
 * comes back when its slot comes round and is filed again then ("lazy"
 * restart, one list operation per timer period at most).
 */
#include "transport/transport.h"

/* Local ACK Timeout: 4.096 us * 2^timeout; 0 means the timer is off
 * (IBTA 11.2.4.2 / 9.7.6.1.3).  The attribute is the shortest wait; after
 * each expiry without progress the next wait doubles, up to 4x (a slow
 * responder, such as rxe in an emulated VM, answers a re-asked READ only
 * after what it already had queued: re-asking at the base rate piles up
 * requests it has not reached yet).  Progress resets it. */
static uint64_t rto_ns(const struct snic_qp *qp)
{
	return (4096ull << (qp->attr.timeout & 31)) << qp->rto_shift;
}

/* The transport timer expired without progress: the next wait is longer. */
void timer_backoff(struct snic_qp *qp)
{
	if (qp->rto_shift < SNIC_RTO_SHIFT_MAX)
		qp->rto_shift++;
}

/* PSNs acknowledged (or READ responses arrived in order) after a
 * retransmission: the window grows by as many (slow start: it doubles
 * each round trip until it is the full window again). */
void timer_window_grow(struct snic_qp *qp, uint32_t n)
{
	if (!qp->cwnd)
		return;
	qp->cwnd += n;
	if (qp->cwnd >= SNIC_PSN_WINDOW)
		qp->cwnd = 0; /* the full window again */
}

/* Tail-loss probe timeout: two smoothed round trips (a lost tail shows
 * as no ACK for that long), at least SNIC_TLP_MIN_NS, doubled for every
 * probe already sent without an answer, at most half the transport
 * timeout (rto, rto_ns's: its callers want it too); before an RTT is
 * known, a quarter of it. */
static uint64_t pto_ns(const struct snic_qp *qp, uint64_t rto)
{
	uint64_t p = qp->srtt_ns ? 2ull * qp->srtt_ns : rto / 4;

	if (p < SNIC_TLP_MIN_NS)
		p = SNIC_TLP_MIN_NS;
	p <<= qp->tlp_n < SNIC_TLP_MAX ? qp->tlp_n : SNIC_TLP_MAX;
	return p < rto / 2 ? p : rto / 2;
}

static uint64_t earlier(uint64_t a, uint64_t b)
{
	return b && (!a || b < a) ? b : a;
}

/* The earliest deadline the QP has, 0 when none. */
static uint64_t qp_due(const struct snic_qp *qp)
{
	return earlier(earlier(qp->rto_at, qp->wait_until), qp->tlp_at);
}

/* File the QP under its earliest deadline (no-op when it is already
 * filed at or before it: the slot's visit files it again). */
void timer_arm(struct snic_nic *nic, struct snic_qp *qp)
{
	uint64_t due = qp_due(qp);

	if (due) /* the owner's wheel (a command may arm another core's) */
		tw_file(&qp_view_poke(nic, qp)->core.tw, qp_tw_id(nic, qp), due);
}

/* timer_sent's arming part (transport.h): a probe or retransmission
 * deadline that is not running yet; the QP filed once, under the
 * earlier of its deadlines (a window's first packet sets both: one
 * filing a turn, not two, with a thousand QPs taking turns).  Out of
 * line: LTO inlined the smaller body into req_one, which then left
 * rc_req_qp (+43 instructions per 64-B WRITE, bench-instr). */
__attribute__((noinline))
void timer_sent_arm(struct snic_nic *nic, struct snic_qp *qp)
{
	uint64_t rto = rto_ns(qp);

	if (!qp->tlp_at && qp->tlp_n < SNIC_TLP_MAX)
		qp->tlp_at = nic->core.now + pto_ns(qp, rto);
	if (!qp->rto_at)
		qp->rto_at = nic->core.now + rto;
	timer_arm(nic, qp);
}

/* Time the round trip of the AckReq packet psn (one at a time). */
void timer_rtt_start(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	qp->rtt_psn = psn;
	qp->rtt_t0 = nic->core.now;
}

/* timer_acked's rare half: a pass a timer started may be taken back
 * (comp_undo), then the window grows by what was acknowledged. */
static void __attribute__((noinline))
acked_after_loss(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	if (qp->undo_valid)
		comp_undo(nic, qp, psn);
	timer_window_grow(qp, qp->acked_valid
			  ? (uint32_t)roce_psn_diff(psn, qp->acked_psn) : 1);
}

/* An ACK covered everything up to psn: the round trip of the packet
 * being timed (srtt = 7/8 srtt + 1/8 sample, as TCP's RFC 6298), and the
 * window after a retransmission grows by what was acknowledged (slow
 * start: doubles each round trip until it is the full window again). */
void timer_acked(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	if (qp->rtt_t0 && roce_psn_diff(psn, qp->rtt_psn) >= 0) {
		uint64_t rtt = nic->core.now - qp->rtt_t0;

		if (rtt > UINT32_MAX)
			rtt = UINT32_MAX;
		qp->srtt_ns = qp->srtt_ns
			      ? (uint32_t)((7ull * qp->srtt_ns + rtt) / 8)
			      : (uint32_t)rtt;
		qp->rtt_t0 = 0;
	}
	if (qp->cwnd) /* after a loss */
		acked_after_loss(nic, qp, psn);
}

/* The window is empty and no back-off waits: nothing is left for the
 * wheel to do, so the QP leaves it now, while its state is in the cache,
 * rather than be visited when the probe deadline comes (with a thousand
 * QPs draining their windows between batches, a cold visit per batch;
 * issue 11 part 6).  The next packet sent files it again. */
static void timer_idle(struct snic_nic *nic, struct snic_qp *qp)
{
	/* whether or not a probe deadline is set: the QP may be filed for
	 * a transport deadline (rto_at, cleared by the caller) */
	qp->tlp_at = 0;
	tw_cancel(&qp_view(nic, qp)->core.tw, qp_tw_id(nic, qp));
}

/* An ACK or response moved the window: the retry count starts again and
 * the timer restarts, or stops when nothing is outstanding. */
void timer_progress(struct snic_nic *nic, struct snic_qp *qp)
{
	qp->retry_left = qp->attr.retry_cnt;
	qp->tlp_n = 0;
	qp->busy_n = 0;
	qp->rto_shift = 0;
	if (qp->infl_head == qp->infl_tail || !qp->attr.timeout) {
		/* a probe deadline stays while messages are out: it finds
		 * nothing to probe, or the next message's packets move it on
		 * (no re-filing per message) */
		qp->rto_at = 0;
		if (qp->infl_head == qp->infl_tail && !qp->wait_until)
			timer_idle(nic, qp);
		return;
	}
	/* the peer is answering (READ responses too): the probe waits */
	uint64_t rto = rto_ns(qp);

	qp->tlp_at = nic->core.now + pto_ns(qp, rto);
	qp->rto_at = nic->core.now + rto;
	timer_arm(nic, qp);
}

/* An ACK that acknowledges nothing new: the peer answers a duplicate,
 * something we sent before (rdma_rxe ACKs each one, C9-105).  It is
 * alive and still working through what we queued to it, and what we
 * sent again is behind that: the transport timer waits from now (the
 * probe does not: a peer that tears its QP down right after its last
 * ACK - rxe keeps none lingering - must get the probe early), as
 * on progress, but the retries and the back-off stay (they reset only
 * on progress), so a peer stuck at one PSN still ends in RETRY_EXC_ERR.
 * Otherwise a peer slower than the timer (rxe under QEMU TCG, a backlog
 * of seconds) was sent the window again on every expiry, which only
 * deepened the backlog. */
void timer_peer_busy(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->infl_head == qp->infl_tail || !qp->attr.timeout || !qp->rto_at)
		return;
	/* bounded: a peer that only ever answers with stale ACKs must not
	 * hold the timer off for ever (IBTA 9.7.6.1.3: retry_cnt still
	 * ends it), nor buy probes past SNIC_TLP_MAX */
	if (qp->busy_n >= SNIC_BUSY_MAX)
		return;
	qp->busy_n++;
	qp->rto_at = nic->core.now + rto_ns(qp);
	timer_arm(nic, qp);
}

/* The transport timer expired: was the peer answering meanwhile, more
 * than twice what this QP sent since the last expiry (a margin for a link
 * that duplicates ACKs)?  Then the ACKs answer packets from before: a
 * peer far behind works through a backlog (rdma_rxe under QEMU TCG: the
 * duplicates that earlier expiries queued, each ACKed again, C9-105,
 * for seconds).  That is no lost response (the retries of IBTA 9.7.6.1.3
 * count the peer's silence): the timer starts again, with no retry used
 * and no go-back, which would only queue more behind the backlog.  At
 * most SNIC_BACKLOG_MAX times at one acknowledged PSN, so a peer that
 * only ever sends ACKs of nothing new still ends in RETRY_EXC_ERR; a
 * silent one is timed out as before.  True when the timer was restarted. */
bool timer_peer_backlog(struct snic_nic *nic, struct snic_qp *qp)
{
	uint64_t a = qp->qcnt[SNIC_QCNT_acks_recv];
	uint64_t t = qp->qcnt[SNIC_QCNT_tx_frames];
	/* counters a tool zeroed since (stats.c) tell nothing */
	bool backlog = a >= qp->exp_acks && t >= qp->exp_tx &&
		       a - qp->exp_acks >
		       2 * (t - qp->exp_tx) + SNIC_BACKLOG_MARGIN;

	qp->exp_acks = a;
	qp->exp_tx = t;
	if (!backlog)
		return false;
	if (qp->acked_psn != qp->backlog_psn) {
		qp->backlog_psn = qp->acked_psn;
		qp->backlog_n = 0;
	}
	if (qp->backlog_n >= SNIC_BACKLOG_MAX)
		return false;
	qp->backlog_n++;
	CNT_INC(&nic->core, timeouts_backlog);
	qp->rto_at = nic->core.now + rto_ns(qp);
	return true;
}

static void tw_expire(void *arg, uint16_t id)
{
	struct snic_nic *nic = arg;
	struct snic_qp *qp = &nic->qps[id - 1];

	if (!qp->in_use)
		return;
	if (qp->wait_until && nic->core.now >= qp->wait_until) {
		qp->wait_until = 0; /* RNR back-off over: send again */
		if (qp->state == SNIC_QPS_RTS || qp->state == SNIC_QPS_SQD)
			qp_req_schedule(nic, qp);
		/* and the transport timer runs again, even if the window
		 * lets nothing out yet (an older READ's responses may be
		 * what is missing) */
		if (!qp->rto_at && qp->attr.timeout &&
		    qp->infl_head != qp->infl_tail)
			qp->rto_at = nic->core.now + rto_ns(qp);
	}
	if (qp->tlp_at && nic->core.now >= qp->tlp_at) {
		uint64_t due = qp->last_tx + pto_ns(qp, rto_ns(qp));

		if (qp->infl_head == qp->infl_tail) {
			qp->tlp_at = 0; /* nothing outstanding */
		} else if (nic->core.now < due) { /* sent since: not yet */
			qp->tlp_at = due;
		} else {
			qp->tlp_at = 0;
			qp->tlp_n++;
			comp_probe(nic, qp);
		}
	}
	if (qp->rto_at && nic->core.now >= qp->rto_at) {
		qp->rto_at = 0;
		comp_timeout(nic, qp);
	}
	timer_arm(nic, qp);
}

unsigned timer_poll(struct snic_nic *nic)
{
	return tw_poll(&nic->core.tw, nic->core.now, tw_expire, nic);
}
