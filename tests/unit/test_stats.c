/* SPDX-License-Identifier: MIT */
/* The statistics area (hostif.h, nic/stats.c): published lazily, exact on
 * a reader's request, unrequested only at a low fixed rate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static struct snic_stats *stats(struct fdev *d)
{
	return (struct snic_stats *)(d->bar + SNIC_BAR_STATS_OFF);
}

static void writes(struct fpair *p, unsigned n)
{
	struct snic_wqe_sge s = { p->bufa, 64, p->mra };
	struct snic_cqe c;

	for (unsigned i = 0; i < n; i++) {
		struct fwr wr = { .wr_id = i, .opcode = SNIC_WR_RDMA_WRITE,
				  .flags = SNIC_SEND_SIGNALED, .sge = &s,
				  .num_sge = 1, .remote_addr = p->bufb,
				  .rkey = p->mrb };

		fqp_post_send(&p->qa, &wr);
		CU_ASSERT_TRUE_FATAL(fsim_poll_cq(p->sim, &p->cqa, &c, 4000));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
}

/* A reader's request: bump pub_req, step until pub_done answers. */
static bool request(struct fsim *s, struct fdev *d)
{
	struct snic_stats *st = stats(d);
	uint32_t req = atomic_fetch_add(&st->pub_req, 1) + 1;

	for (unsigned i = 0; i < 4000; i++) {
		if (atomic_load(&st->pub_done) == req)
			return true;
		fsim_step(s);
	}
	return false;
}

static void test_stats_lazy_exact(void)
{
	struct fsim *s = fsim_new(4200);
	struct fpair p;
	struct fconn conn;
	struct snic_stats *st = stats(&s->a);
	const struct snic_qp *qp;
	uint64_t updates;

	fconn_default(&conn);
	CU_ASSERT_EQUAL_FATAL(fpair_setup(&p, s, &conn, 1u << 16, 64), SNIC_ST_OK);
	qp = &s->a.nic->qps[SNIC_QPN_IDX(p.qa.qpn)];
	writes(&p, 10);
	fsim_idle(s, 3000);             /* 3 ms: several looks, no publication */
	updates = st->updates;
	writes(&p, 5);
	fsim_idle(s, 3000);
	CU_ASSERT_EQUAL(st->updates, updates);
	CU_ASSERT_NOT_EQUAL(st->cnt[SNIC_CNT_tx_frames],
			    snic_nic_counter(s->a.nic, SNIC_CNT_tx_frames));

	/* On request: every counter and the QP's entry, exact. */
	CU_ASSERT_TRUE_FATAL(request(s, &s->a));
	CU_ASSERT_EQUAL(st->updates, updates + 1);
	for (unsigned i = 0; i < snic_nic_counter_count(); i++)
		CU_ASSERT_EQUAL(st->cnt[i], snic_nic_counter(s->a.nic, i));
	CU_ASSERT_EQUAL(st->qp[SNIC_QPN_IDX(p.qa.qpn)].valid, 1);
	CU_ASSERT_EQUAL(st->qp[SNIC_QPN_IDX(p.qa.qpn)].qpn, p.qa.qpn);
	CU_ASSERT_EQUAL(memcmp(st->qp[SNIC_QPN_IDX(p.qa.qpn)].cnt, qp->qcnt,
			       sizeof(qp->qcnt)), 0);
	CU_ASSERT_EQUAL(st->qp[SNIC_QPN_IDX(p.qa.qpn)].sq_psn,
			qp->npsn & ROCE_PSN_MASK);

	/* Unrequested: once per SNIC_STATS_PUBLISH_NS, not more. */
	updates = st->updates;
	s->step_ns = SNIC_STATS_PERIOD_NS;
	fsim_idle(s, (unsigned)(SNIC_STATS_PUBLISH_NS / SNIC_STATS_PERIOD_NS) + 2);
	CU_ASSERT_EQUAL(st->updates, updates + 1);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

UNIT_SUITE(stats, NULL, NULL,
	   UNIT_TEST(test_stats_lazy_exact));
