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
 * (IBTA 11.2.4.2 / 9.7.6.1.3). */
static uint64_t rto_ns(const struct snic_qp *qp)
{
	return 4096ull << (qp->attr.timeout & 31);
}

/* The earliest deadline the QP has, 0 when none. */
static uint64_t qp_due(const struct snic_qp *qp)
{
	uint64_t d = qp->rto_at;

	if (qp->wait_until && (!d || qp->wait_until < d))
		d = qp->wait_until;
	return d;
}

/* File the QP under its earliest deadline (no-op when it is already
 * filed at or before it: the slot's visit files it again). */
void timer_arm(struct snic_nic *nic, struct snic_qp *qp)
{
	uint64_t due = qp_due(qp);

	if (due)
		tw_file(&nic->core.tw, qp_tw_id(nic, qp), due);
}

/* A request packet left: the timer runs from the first one not yet
 * acknowledged (9.7.6.1.1); a running timer is left as it is. */
void timer_sent(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->rto_at || !qp->attr.timeout)
		return;
	qp->rto_at = nic->core.now + rto_ns(qp);
	timer_arm(nic, qp);
}

/* An ACK or response moved the window: the retry count starts again and
 * the timer restarts, or stops when nothing is outstanding. */
void timer_progress(struct snic_nic *nic, struct snic_qp *qp)
{
	qp->retry_left = qp->attr.retry_cnt;
	if (qp->infl_head == qp->infl_tail || !qp->attr.timeout) {
		qp->rto_at = 0;
		return;
	}
	qp->rto_at = nic->core.now + rto_ns(qp);
	timer_arm(nic, qp);
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
