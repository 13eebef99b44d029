/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' world (fuzz_env.h).  Set-up failures abort: a target
 * that silently ran against a half-built NIC would prove nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fuzz_env.h"
#include "nic/top.h"

/* fake_env's set-up checks are CUnit assertions; outside a CUnit run a
 * failed one aborts (the targets do not link CUnit). */
CU_BOOL CU_assertImplementation(CU_BOOL value, unsigned int line,
				const char *cond, const char *file,
				const char *func, CU_BOOL fatal)
{
	(void)fatal;
	if (!value) {
		fprintf(stderr, "%s:%u: %s: check failed: %s\n", file, line,
			func, cond);
		abort();
	}
	return value;
}

#define QKEY FZ_QKEY

static void must(int st, const char *what)
{
	if (st != SNIC_ST_OK) {
		fprintf(stderr, "fuzz world: %s failed (%d)\n", what, st);
		abort();
	}
}

static void side_qps(struct fside *s, struct fz_side *z)
{
	must(fside_qp(s, &z->qp[FZ_RC], SNIC_QPT_RC, 0), "RC QP");
	must(fside_qp(s, &z->qp[FZ_UC], SNIC_QPT_UC, 0), "UC QP");
	must(fside_qp(s, &z->qp[FZ_UD], SNIC_QPT_UD, 0), "UD QP");
	must(fsrq_create(&z->srq, &s->ctx, s->pd, 64, 4, 0), "SRQ");
	must(fside_qp(s, &z->qp[FZ_SRQ_RC], SNIC_QPT_RC, z->srq.srqn), "SRQ QP");
	must(fqp_ud_ready(&z->qp[FZ_UD], QKEY, 1), "UD RTS");
}

/* Eight RECVs of 16 KiB, on a QP or an SRQ (then at most cnt / 2); the
 * multicast member's hold a GRH and 1 KiB (longer datagrams: too long). */
static void recvs(struct fside *s, struct fqp *q, struct fsrq *srq, int t)
{
	uint32_t len = t == FZ_UD_MC ? SNIC_GRH_LEN + 1024 : 0x4000;

	for (uint32_t i = 0; i < 8; i++) {
		struct snic_wqe_sge sge = fside_sge(s, 0x80000 + i * 0x4000, len);

		if (q)
			fqp_post_recv(q, i, &sge, 1);
		else if (i < srq->cnt / 2)
			fsrq_post(srq, i, &sge, 1);
	}
}

static void post_recvs(struct fside *s, struct fz_side *z)
{
	static const int t[] = { FZ_RC, FZ_UC, FZ_UD, FZ_RAW, FZ_UD_MC };

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		recvs(s, &z->qp[t[i]], NULL, t[i]);
	recvs(s, NULL, &z->srq, -1);
	recvs(s, NULL, &z->xsrq, -1);
}

/* The input's loss and duplication: retransmission, duplicate requests
 * (READ/atomic replay), out-of-order arrivals. */
static enum fl_action link_hook(void *arg, int from, uint8_t *frame,
				uint16_t *len)
{
	struct fz_world *w = arg;
	enum fl_action a = (w->loss & 1) ? FL_DROP :
			   (w->dup & 1) ? FL_DUP : FL_PASS;

	(void)from;
	(void)frame;
	(void)len;
	w->loss >>= 1;
	w->dup >>= 1;
	return a;
}

static struct fz_world *build(void)
{
	static unsigned built;
	struct fz_world *w = calloc(1, sizeof(*w));
	struct fconn conn;

	if (!w)
		abort();
	w->id = ++built;
	w->e = fenv_new(4200, FZ_BUF, 1024);
	fconn_default(&conn);
	side_qps(&w->e->a, &w->a);
	side_qps(&w->e->b, &w->b);
	for (int t = FZ_RC; t <= FZ_SRQ_RC; t++)
		if (t != FZ_UD)
			must(fqp_connect(&w->a.qp[t], &w->b.qp[t], &conn), "connect");
	fz_features(w);
	fake_link_set_hook(&w->e->s->link, link_hook, w);
	fsim_idle(w->e->s, 10);
	post_recvs(&w->e->a, &w->a);
	post_recvs(&w->e->b, &w->b);
	fz_traffic(w, 0);
	fsim_idle(w->e->s, 2);
	return w;
}

static bool qp_ok(struct fside *s, struct fqp *q)
{
	struct snic_qp *qp = qp_by_qpn(s->dev->nic, q->qpn);

	return qp && qp->state == SNIC_QPS_RTS;
}

/* Back to RESET, the host's ring indexes with it (a reset QP's rings are
 * empty, IBTA 10.3.1), then to RTS again on the same terms. */
static int qp_reset(struct fqp *q)
{
	struct snic_qp_attr a = { .qp_state = SNIC_QPS_RESET };
	struct snic_qp_dbrec *db = fdev_ptr(q->ctx->dev, q->dbrec_pa);
	int st = fqp_modify(q, SNIC_QP_STATE, &a);

	q->sq_pi = q->rq_pi = 0;
	atomic_store(&db->sq_pi, 0);
	atomic_store(&db->rq_pi, 0);
	return st;
}

static int pair_revive(struct fqp *x, struct fqp *y)
{
	struct fconn conn;
	int st = qp_reset(x);

	st = st ? st : qp_reset(y);
	fconn_default(&conn);
	return st ? st : fqp_connect(x, y, &conn);
}

static int one_revive(struct fside *s, struct fqp *q, int t)
{
	int st = qp_reset(q);

	if (!st)
		st = t == FZ_RAW ? fqp_raw_ready(q) : fqp_ud_ready(q, QKEY, 1);
	if (!st)
		recvs(s, q, NULL, t);
	return st;
}

/* An input that broke a QP (an error completion, a command) would leave
 * a world whose paths the next inputs cannot reach; rebuilding it costs
 * two NICs' tables, so the broken QPs are brought back instead.  False:
 * not possible (a QP gone), rebuild. */
static bool revive(struct fz_world *w)
{
	struct fside *sa = &w->e->a, *sb = &w->e->b;
	int st = 0;

	for (int t = 0; t < FZ_NQP && !st; t++) {
		struct fqp *qa = &w->a.qp[t], *qb = &w->b.qp[t];
		bool oka = qp_ok(sa, qa), okb = qp_ok(sb, qb);

		if (!qp_by_qpn(sa->dev->nic, qa->qpn) || !qp_by_qpn(sb->dev->nic, qb->qpn))
			return false;
		if (t == FZ_UD || t == FZ_UD_MC || t == FZ_RAW) {
			if (!oka)
				st = one_revive(sa, qa, t);
			if (!okb && !st)
				st = one_revive(sb, qb, t);
			continue;
		}
		if (t == FZ_XRC_TGT)
			continue; /* with its initiator */
		if (t == FZ_XRC_INI) {
			struct fqp *ta = &w->a.qp[FZ_XRC_TGT], *tb = &w->b.qp[FZ_XRC_TGT];

			if (!oka || !qp_ok(sb, tb))
				st = pair_revive(qa, tb);
			if (!st && (!okb || !qp_ok(sa, ta)))
				st = pair_revive(qb, ta);
			continue;
		}
		if (oka && okb)
			continue;
		st = pair_revive(qa, qb);
		if (!st && t != FZ_SRQ_RC) {
			recvs(sa, qa, NULL, t);
			recvs(sb, qb, NULL, t);
		}
	}
	return st == 0;
}

static bool alive(struct fz_world *w)
{
	for (int t = 0; t < FZ_NQP; t++)
		if (!qp_ok(&w->e->a, &w->a.qp[t]) || !qp_ok(&w->e->b, &w->b.qp[t]))
			return false;
	return true;
}

struct fz_world *fz_world(void)
{
	static struct fz_world *w;

	if (w && ++w->uses < FZ_REBUILD && !alive(w) && !revive(w))
		w->uses = FZ_REBUILD;
	if (w && w->uses >= FZ_REBUILD) {
		const struct fake_hal *ha = &w->e->s->a.hal, *hb = &w->e->s->b.hal;

		/* packet buffers: none freed twice, overrun or lost */
		if (ha->bad_frees + hb->bad_frees || ha->overflows + hb->overflows ||
		    fsim_free(w->e->s)) {
			fprintf(stderr, "fuzz world: packet buffers misused\n");
			abort();
		}
		free(w->e);
		free(w);
		w = NULL;
	}
	if (!w)
		w = build();
	return w;
}

void fz_traffic(struct fz_world *w, uint8_t seed)
{
	static const uint8_t ops[] = { SNIC_WR_SEND, SNIC_WR_RDMA_WRITE,
				       SNIC_WR_RDMA_READ, SNIC_WR_ATOMIC_FETCH_AND_ADD,
				       SNIC_WR_SEND_WITH_IMM };
	struct fside *s = &w->e->a;
	struct snic_wqe_sge sge = fside_sge(s, (seed & 7) * 0x2000, 0x2000 + seed * 16u);
	struct fwr wr = { .wr_id = seed, .flags = SNIC_SEND_SIGNALED,
			  .sge = &sge, .num_sge = 1,
			  .remote_addr = w->e->b.buf + 0x1000, .rkey = w->e->b.mr };
	struct snic_wqe_ud ud;

	for (unsigned i = 0; i < sizeof(ops); i++) {
		wr.opcode = ops[(i + seed) % sizeof(ops)];
		if (wr.opcode == SNIC_WR_ATOMIC_FETCH_AND_ADD)
			sge.length = 8;
		fqp_post_send(&w->a.qp[FZ_RC], &wr);
		if (wr.opcode == SNIC_WR_SEND || wr.opcode == SNIC_WR_RDMA_WRITE)
			fqp_post_send(&w->a.qp[FZ_UC], &wr);
		sge.length = 0x2000 + seed * 16u;
	}
	sge.length = 1000;
	wr.opcode = SNIC_WR_SEND;
	wr.ud = &ud;
	fud_addr(&ud, FSIM_IP_B, w->b.qp[FZ_UD].qpn, QKEY);
	fqp_post_send(&w->a.qp[FZ_UD], &wr);
	fz_traffic_more(w, seed);
}

uint8_t fz_u8(struct fz_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

uint16_t fz_u16(struct fz_in *in)
{
	return (uint16_t)(fz_u8(in) | fz_u8(in) << 8);
}

uint32_t fz_u32(struct fz_in *in)
{
	return fz_u16(in) | (uint32_t)fz_u16(in) << 16;
}

uint64_t fz_u64(struct fz_in *in)
{
	return fz_u32(in) | (uint64_t)fz_u32(in) << 32;
}
