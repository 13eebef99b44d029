/* SPDX-License-Identifier: MIT */
/*
 * Requester timers: the transport (ACK) timer of IBTA 9.7.6.1 and the RNR
 * back-off of 9.7.5.2.8, kept on one hashed timer wheel per NIC.
 *
 * A QP with a deadline sits in exactly one slot of the wheel, filed under
 * the tick (2^SNIC_TW_SHIFT ns) after its deadline.  Each poll pass visits
 * only the slots whose tick has passed since the last pass, so its cost
 * depends on the QPs that have a deadline there, never on idle QPs.
 * Deadlines that move later (every ACK restarts the transport timer) are
 * not re-filed: the entry is checked when its slot comes round and filed
 * again then ("lazy" restart, one list operation per timer period at most).
 */
#include "nic.h"

static uint16_t tw_id(const struct snic_nic *nic, const struct snic_qp *qp)
{
	return (uint16_t)(qp_idx(nic, qp) + 1);
}

static struct snic_qp *tw_qp(struct snic_nic *nic, uint16_t id)
{
	return &nic->qps[id - 1];
}

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

static void tw_unlink(struct snic_nic *nic, struct snic_qp *qp)
{
	uint16_t *prev_next = qp->tw_prev
		? &tw_qp(nic, qp->tw_prev)->tw_next
		: &nic->tw_slot[qp->tw_tick % SNIC_TW_SLOTS];

	*prev_next = qp->tw_next;
	if (qp->tw_next)
		tw_qp(nic, qp->tw_next)->tw_prev = qp->tw_prev;
	qp->on_wheel = false;
}

static void tw_link(struct snic_nic *nic, struct snic_qp *qp, uint64_t tick)
{
	uint16_t *head = &nic->tw_slot[tick % SNIC_TW_SLOTS];

	qp->tw_tick = tick;
	qp->tw_prev = 0;
	qp->tw_next = *head;
	if (*head)
		tw_qp(nic, *head)->tw_prev = tw_id(nic, qp);
	*head = tw_id(nic, qp);
	qp->on_wheel = true;
}

/* File the QP under its earliest deadline (no-op when it is already
 * filed at or before it: the slot's visit files it again). */
void timer_arm(struct snic_nic *nic, struct snic_qp *qp)
{
	uint64_t due = qp_due(qp), tick;

	if (!due)
		return;
	tick = (due >> SNIC_TW_SHIFT) + 1;
	if (tick <= nic->tw_done)
		tick = nic->tw_done + 1;
	if (qp->on_wheel) {
		if (qp->tw_tick <= tick)
			return;
		tw_unlink(nic, qp);
	}
	tw_link(nic, qp, tick);
}

/* The QP goes away (destroy): off the wheel, deadlines forgotten. */
void timer_cancel(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->on_wheel)
		tw_unlink(nic, qp);
	qp->rto_at = 0;
	qp->wait_until = 0;
}

/* A request packet left: the timer runs from the first one not yet
 * acknowledged (9.7.6.1.1); a running timer is left as it is. */
void timer_sent(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->rto_at || !qp->attr.timeout)
		return;
	qp->rto_at = nic->now + rto_ns(qp);
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
	qp->rto_at = nic->now + rto_ns(qp);
	timer_arm(nic, qp);
}

static void tw_expire(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->in_use)
		return;
	if (qp->wait_until && nic->now >= qp->wait_until) {
		qp->wait_until = 0; /* RNR back-off over: send again */
		if (qp->state == SNIC_QPS_RTS || qp->state == SNIC_QPS_SQD)
			qp_req_schedule(nic, qp);
	}
	if (qp->rto_at && nic->now >= qp->rto_at) {
		qp->rto_at = 0;
		comp_timeout(nic, qp);
	}
	timer_arm(nic, qp);
}

/* Visit the slots of the ticks that passed since the last pass. */
unsigned timer_poll(struct snic_nic *nic)
{
	uint64_t cur = nic->now >> SNIC_TW_SHIFT;
	unsigned work = 0;

	if (nic->tw_done == 0 || cur - nic->tw_done > SNIC_TW_SLOTS)
		nic->tw_done = cur > SNIC_TW_SLOTS ? cur - SNIC_TW_SLOTS : 0;
	while (nic->tw_done < cur) {
		uint64_t t = ++nic->tw_done;
		uint16_t id = nic->tw_slot[t % SNIC_TW_SLOTS];

		nic->tw_slot[t % SNIC_TW_SLOTS] = 0;
		while (id) {
			struct snic_qp *qp = tw_qp(nic, id);

			id = qp->tw_next;
			qp->on_wheel = false;
			if (qp->tw_tick > t)
				tw_link(nic, qp, qp->tw_tick); /* a later round */
			else
				tw_expire(nic, qp);
			work++;
		}
	}
	return work;
}
