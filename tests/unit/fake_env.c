/* SPDX-License-Identifier: MIT */
/* The test environments, UD helpers, SRQs and events of fake_env.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fake_env.h"

#define ALL_ACCESS (SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_WRITE | \
		    SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_ATOMIC)

static void side_init(struct fside *s, struct fdev *d, uint64_t buf_len,
		      uint32_t cqe_cnt)
{
	s->dev = d;
	CU_ASSERT_EQUAL_FATAL(fctx_open(&s->ctx, d, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&s->ctx, &s->pd), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&s->cq, &s->ctx, cqe_cnt), SNIC_ST_OK);
	s->buf = fdev_alloc(d, buf_len, SNIC_PAGE_SIZE);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&s->ctx, s->pd, s->buf, buf_len,
					  ALL_ACCESS, &s->mr), SNIC_ST_OK);
}

struct fenv *fenv_new(uint32_t eth_mtu, uint64_t buf_len, uint32_t cqe_cnt)
{
	struct fenv *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->s = fsim_new(eth_mtu);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s->a.nic);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s->b.nic);
	e->buf_len = buf_len;
	side_init(&e->a, &e->s->a, buf_len, cqe_cnt);
	side_init(&e->b, &e->s->b, buf_len, cqe_cnt);
	return e;
}

void fenv_free(struct fenv *e)
{
	const struct fake_hal *ha = &e->s->a.hal, *hb = &e->s->b.hal;

	CU_ASSERT_EQUAL(ha->bad_frees + hb->bad_frees, 0);
	CU_ASSERT_EQUAL(ha->overflows + hb->overflows, 0);
	CU_ASSERT_EQUAL(ha->bad_txq + hb->bad_txq, 0);
	CU_ASSERT_EQUAL(fsim_free(e->s), 0); /* every buffer came back */
	free(e);
}

uint8_t *fside_ptr(struct fside *s, uint64_t off)
{
	return fdev_ptr(s->dev, s->buf + off);
}

struct snic_wqe_sge fside_sge(struct fside *s, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge g = { .addr = s->buf + off, .length = len,
				  .lkey = s->mr };

	return g;
}

uint64_t fside_counter(struct fside *s, const char *name)
{
	return fdev_counter(s->dev, name);
}

int fside_qp(struct fside *s, struct fqp *qp, uint32_t type, uint32_t srqn)
{
	struct fqp_caps caps = {
		.sq_cnt = 64, .rq_cnt = 64, .max_send_sge = 4,
		.max_recv_sge = 4, .max_inline = 128, .qp_type = type,
		.srq = srqn != 0, .srqn = srqn,
	};

	return fqp_create(qp, &s->ctx, s->pd, &s->cq, &s->cq, &caps);
}

void fpattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* ---------------------------------------------------------------------- */
/* UD.                                                                     */

int fqp_ud_ready(struct fqp *qp, uint32_t qkey, uint32_t sq_psn)
{
	struct snic_qp_attr a;
	int st;

	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	st = fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_PKEY_INDEX | SNIC_QP_PORT |
			SNIC_QP_QKEY, &a);
	if (st)
		return st;
	a.qp_state = SNIC_QPS_RTR;
	st = fqp_modify(qp, SNIC_QP_STATE, &a);
	if (st)
		return st;
	a.qp_state = SNIC_QPS_RTS;
	a.sq_psn = sq_psn;
	return fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_SQ_PSN, &a);
}

int fqp_raw_ready(struct fqp *qp)
{
	struct snic_qp_attr a;
	int st;

	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_INIT;
	a.port_num = 1;
	st = fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_PORT, &a);
	a.qp_state = SNIC_QPS_RTR;
	st = st ? st : fqp_modify(qp, SNIC_QP_STATE, &a);
	a.qp_state = SNIC_QPS_RTS;
	return st ? st : fqp_modify(qp, SNIC_QP_STATE, &a);
}

void fud_addr(struct snic_wqe_ud *ud, uint32_t ip, uint32_t qpn, uint32_t qkey)
{
	memset(ud, 0, sizeof(*ud));
	ud->remote_qpn = qpn;
	ud->remote_qkey = qkey;
	ud->dgid[10] = 0xff;
	ud->dgid[11] = 0xff;
	for (int i = 0; i < 4; i++)
		ud->dgid[12 + i] = (uint8_t)(ip >> (24 - 8 * i));
	ud->hop_limit = 64;
}

/* ---------------------------------------------------------------------- */
/* SRQ.                                                                    */

static int srq_create(struct fsrq *q, struct fctx *c,
		      struct snic_cmd_create_srq *in_x, uint32_t cnt,
		      uint32_t max_sge, uint32_t limit);

int fsrq_create(struct fsrq *q, struct fctx *c, uint32_t pdn, uint32_t cnt,
		uint32_t max_sge, uint32_t limit)
{
	struct snic_cmd_create_srq in = { .pdn = pdn };

	return srq_create(q, c, &in, cnt, max_sge, limit);
}

int fsrq_create_xrc(struct fsrq *q, struct fctx *c, uint32_t pdn, uint32_t cnt,
		    uint32_t max_sge, uint32_t xrcd, uint32_t cqn)
{
	struct snic_cmd_create_srq in = { .pdn = pdn, .flags = SNIC_SRQ_F_XRC,
					  .xrcd = xrcd, .cqn = cqn };

	return srq_create(q, c, &in, cnt, max_sge, 0);
}

/* CREATE_SRQ with *in_x's PD and XRC fields, a ring of cnt WQEs. */
static int srq_create(struct fsrq *q, struct fctx *c,
		      struct snic_cmd_create_srq *in_x, uint32_t cnt,
		      uint32_t max_sge, uint32_t limit)
{
	struct snic_cmd_create_srq in = *in_x;
	struct snic_cmd_handle h = { 0 };
	int st;

	memset(q, 0, sizeof(*q));
	q->ctx = c;
	q->cnt = cnt;
	q->max_sge = max_sge;
	q->stride_log = 5;
	while ((1u << q->stride_log) < 16 + 16 * max_sge)
		q->stride_log++;
	q->ring_pa = fdev_alloc(c->dev, (uint64_t)cnt << q->stride_log,
				SNIC_PAGE_SIZE);
	q->dbrec_pa = fdev_alloc(c->dev, 64, 64);
	in.wqe_cnt = cnt;
	in.stride_log = q->stride_log;
	in.max_sge = max_sge;
	in.srq_limit = limit;
	in.ring_pa = q->ring_pa;
	in.dbrec_pa = q->dbrec_pa;
	st = fctx_cmd(c, SNIC_CMD_CREATE_SRQ, &in, sizeof(in), &h, sizeof(h));
	q->srqn = h.handle;
	return st;
}

void fsrq_post(struct fsrq *q, uint64_t wr_id, const struct snic_wqe_sge *sge,
	       uint32_t num_sge)
{
	uint64_t pa = q->ring_pa + ((uint64_t)(q->pi & (q->cnt - 1))
				    << q->stride_log);
	uint8_t *w = fdev_ptr(q->ctx->dev, pa);
	struct snic_recv_wqe hdr = { .wr_id = wr_id, .num_sge = num_sge };
	struct snic_srq_dbrec *db = fdev_ptr(q->ctx->dev, q->dbrec_pa);

	memcpy(w + sizeof(hdr), sge, (size_t)num_sge * sizeof(*sge));
	memcpy(w, &hdr, sizeof(hdr));
	q->pi++;
	atomic_store_explicit(&db->pi, q->pi, memory_order_release);
}

int fsrq_modify(struct fsrq *q, uint32_t mask, uint32_t max_wr, uint32_t limit)
{
	struct snic_cmd_modify_srq in = {
		.srqn = q->srqn, .attr_mask = mask, .max_wr = max_wr,
		.srq_limit = limit,
	};

	return fctx_cmd(q->ctx, SNIC_CMD_MODIFY_SRQ, &in, sizeof(in), NULL, 0);
}

int fsrq_query(struct fsrq *q, struct snic_srq_attr *out)
{
	struct snic_cmd_handle h = { .handle = q->srqn };

	memset(out, 0, sizeof(*out));
	return fctx_cmd(q->ctx, SNIC_CMD_QUERY_SRQ, &h, sizeof(h), out,
			sizeof(*out));
}

int fsrq_destroy(struct fsrq *q)
{
	struct snic_cmd_handle h = { .handle = q->srqn };

	return fctx_cmd(q->ctx, SNIC_CMD_DESTROY_SRQ, &h, sizeof(h), NULL, 0);
}

/* ---------------------------------------------------------------------- */
/* Events.                                                                 */

bool fctx_event(struct fctx *c, uint32_t *ci, struct snic_eqe *out)
{
	struct snic_ctx_slot *s = fdev_slot(c->dev, c->slot);

	if (*ci == atomic_load_explicit(&s->eq_pi, memory_order_acquire))
		return false;
	*out = s->eq[*ci % SNIC_EQ_SIZE];
	(*ci)++;
	atomic_store_explicit(&s->eq_ci, *ci, memory_order_release);
	return true;
}
