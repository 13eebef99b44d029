/* SPDX-License-Identifier: MIT */
/*
 * Statistics: the NIC's counters and a per-QP table published into the
 * BAR's statistics area (hostif.h, struct snic_stats) for tools such as
 * snicctl, which read them from outside the NIC process.
 *
 * Cost: lazily.  Every SNIC_STATS_PERIOD_NS the poll pass looks at the
 * request words; a reader's request (pub_req) gets a full publication at
 * once: the NIC counters and every QP entry, so what the reader sees is
 * exact.  Unrequested, a publication runs only every SNIC_STATS_PUBLISH_NS
 * and copies the NIC counters plus SNIC_STATS_QPS_PER_UPDATE QP entries
 * (a cursor walks the table round-robin), a fixed cost whatever the
 * number of QPs.  The counters themselves are plain increments in the
 * data path; only this copy is published, under a seqlock.  With several
 * cores a QP's counters are its owner's to write: the copy (and a reset)
 * runs while the other cores are parked (nic/xcore.c), so an entry is one
 * moment's and a reset loses no increment, at no cost to the data path
 * (a handshake at most every SNIC_STATS_PUBLISH_NS, or on request).
 *
 * The same tick refreshes the cached link state (tx_flush drops frames
 * while the link is down, as a real port does) and honours reset requests.
 */
#include <string.h>

#include "nic/top.h"
#include "nic/cm.h"

static const char *const qp_counter_names[] = {
#define SNIC_QCNT_NAME(n) #n,
	SNIC_QP_COUNTERS(SNIC_QCNT_NAME)
#undef SNIC_QCNT_NAME
};

_Static_assert(SNIC_CNT_MAX <= SNIC_STATS_MAX_CNT, "raise SNIC_STATS_MAX_CNT");
_Static_assert((SNIC_MAX_QP & (SNIC_MAX_QP - 1)) == 0, "QP cursor wraps by mask");
_Static_assert(SNIC_QCNT_MAX <= SNIC_STATS_MAX_QP_CNT,
	       "raise SNIC_STATS_MAX_QP_CNT");

static void name_copy(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n >= SNIC_STATS_NAME_LEN)
		n = SNIC_STATS_NAME_LEN - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Called from bar_init, after the BAR was zeroed and before magic is set. */
void stats_init(struct snic_nic *nic)
{
	struct snic_stats *st = (struct snic_stats *)(nic->core.bar +
						      SNIC_BAR_STATS_OFF);

	nic->core.stats = st;
	st->ncnt = SNIC_CNT_MAX;
	st->nqp_cnt = SNIC_QCNT_MAX;
	st->max_qp = SNIC_MAX_QP;
	st->eth_mtu = nic->core.cfg.eth_mtu;
	st->active_mtu = nic->core.active_mtu;
	for (unsigned i = 0; i < SNIC_CNT_MAX; i++)
		name_copy(st->cnt_name[i], snic_nic_counter_name(i));
	for (unsigned i = 0; i < SNIC_QCNT_MAX; i++)
		name_copy(st->qp_cnt_name[i], qp_counter_names[i]);
	nic->core.reset_seen = 0;
	nic->core.link_up = nic->core.ops->link_up(nic->core.hal_ctx, 0) != 0;
}

static void qp_entry(struct snic_nic *nic, uint32_t i)
{
	const struct snic_qp *qp = &nic->qps[i];
	struct snic_stats_qp *e = &nic->core.stats->qp[i];

	if (!qp->in_use) {
		if (e->valid)
			memset(e, 0, sizeof(*e));
		return;
	}
	e->qpn = qp->qpn;
	e->valid = 1;
	e->state = qp->state;
	e->ctx = qp->ctx;
	e->dest_qpn = qp->attr.dest_qp_num;
	e->sq_psn = qp->npsn & ROCE_PSN_MASK;
	e->acked_psn = qp->acked_psn & ROCE_PSN_MASK;
	e->epsn = qp->resp.epsn & ROCE_PSN_MASK;
	memcpy(e->peer, qp->attr.dgid, sizeof(e->peer));
	memcpy(e->cnt, qp->qcnt, sizeof(qp->qcnt));
}

/* A tool asked for zeroed counters: rare, so a walk of every QP is fine. */
static void stats_reset(struct snic_nic *nic, uint32_t req)
{
	xcore_counters_reset(nic);
	for (uint32_t i = 0; i < SNIC_MAX_QP; i++)
		memset(nic->qps[i].qcnt, 0, sizeof(nic->qps[i].qcnt));
	for (uint32_t i = 0; i < SNIC_MAX_QP; i++)
		if (nic->core.stats->qp[i].valid)
			memset(nic->core.stats->qp[i].cnt, 0,
			       sizeof(nic->core.stats->qp[i].cnt));
	nic->core.reset_seen = req;
	core_log(&nic->core, SNIC_LOG_INFO, "counters reset on request");
}

static void link_refresh(struct snic_nic *nic)
{
	bool up = nic->core.ops->link_up(nic->core.hal_ctx, 0) != 0;

	if (up == nic->core.link_up)
		return;
	nic->core.link_up = up;
	core_port_event(&nic->core, up); /* PORT_ACTIVE / PORT_ERR to the hosts */
	if (!up) {
		CNT_INC(&nic->core, link_down_events);
		return;
	}
	/* Back up (a peer may have restarted): tell the segment our MAC. */
	neigh_announce(nic->neigh);
}

/* Copy the counters and nqp QP entries out under the seqlock; honour a
 * reset request first, so the copy shows the zeroes. */
static void publish(struct snic_nic *nic, uint32_t reset_req, uint32_t pub_req,
		    uint32_t nqp)
{
	struct snic_stats *st = nic->core.stats;
	uint32_t seq = atomic_load_explicit(&st->seq, memory_order_relaxed);

	xcore_park_all(nic);
	/* odd: readers retry until the copy below is complete */
	atomic_store_explicit(&st->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	if (reset_req != nic->core.reset_seen)
		stats_reset(nic, reset_req);
	if (nic->core.xc)
		for (unsigned i = 0; i < SNIC_CNT_MAX; i++)
			st->cnt[i] = xcore_counter(nic, i);
	else
		memcpy(st->cnt, nic->core.cnt, sizeof(nic->core.cnt));
	for (uint32_t k = 0; k < nqp; k++) {
		qp_entry(nic, nic->core.stats_qp_next);
		nic->core.stats_qp_next = (nic->core.stats_qp_next + 1) &
					  (SNIC_MAX_QP - 1);
	}
	cm_stats(nic, st); /* CM listeners and connections (cm_router.c) */
	st->link_up = nic->core.link_up;
	st->update_ns = nic->core.now;
	st->updates++;
	nic->core.pub_seen = pub_req;
	nic->core.next_publish = nic->core.now + SNIC_STATS_PUBLISH_NS;
	atomic_store_explicit(&st->seq, seq + 2, memory_order_release);
	xcore_unpark_all(nic);
	atomic_store_explicit(&st->reset_done, reset_req, memory_order_release);
	atomic_store_explicit(&st->pub_done, pub_req, memory_order_release);
}

void stats_poll(struct snic_nic *nic)
{
	struct snic_stats *st = nic->core.stats;
	uint32_t reset_req, pub_req;

	if (nic->core.now < nic->core.next_stats)
		return;
	nic->core.next_stats = nic->core.now + SNIC_STATS_PERIOD_NS;
	link_refresh(nic);
	reset_req = atomic_load_explicit(&st->reset_req, memory_order_acquire);
	pub_req = atomic_load_explicit(&st->pub_req, memory_order_acquire);
	if (reset_req != nic->core.reset_seen || pub_req != nic->core.pub_seen)
		publish(nic, reset_req, pub_req, SNIC_MAX_QP);
	else if (nic->core.now >= nic->core.next_publish)
		publish(nic, reset_req, pub_req, SNIC_STATS_QPS_PER_UPDATE);
}
