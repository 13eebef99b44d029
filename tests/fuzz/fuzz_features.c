/* SPDX-License-Identifier: MIT */
/*
 * The fuzz world's rarer features (fuzz_env.h), set up on both sides
 * through commands and WQEs as the host driver does: XRC (a domain, an
 * XRC SRQ, an initiator connected to the other side's target), memory
 * windows (type 1 and 2B, bound on an MR with Bind access), a UD QP in
 * FZ_GROUP, a raw packet QP behind an IPv4 flow, CM open and listening
 * on FZ_SID, device memory with an MR.  Without them the targets cannot
 * reach those paths: a frame or WQE needs a live object to get past the
 * first lookup.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"

#define BIND_ACCESS (SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_WRITE | \
		     SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_ATOMIC | \
		     SNIC_ACCESS_MW_BIND)
#define MW_REMOTE   (SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_READ | \
		     SNIC_ACCESS_REMOTE_ATOMIC)

static void must(int st, const char *what)
{
	if (st != SNIC_ST_OK) {
		fprintf(stderr, "fuzz world: %s failed (%d)\n", what, st);
		abort();
	}
}

static uint32_t cmd_handle(struct fctx *c, uint16_t op, const void *in,
			   uint32_t len, const char *what)
{
	struct snic_cmd_handle out = { 0 };

	must(fctx_cmd(c, op, in, len, &out, sizeof(out)), what);
	return out.handle;
}

static void xrc(struct fside *s, struct fz_side *z)
{
	struct snic_cmd_open_xrcd x = { .dev = 7, .ino = 0, .flags = 0 };
	struct fqp_caps caps = {
		.sq_cnt = 64, .rq_cnt = 1, .max_send_sge = 4,
		.max_inline = 128, .qp_type = SNIC_QPT_XRC_SEND,
	};

	z->xrcd = cmd_handle(&s->ctx, SNIC_CMD_OPEN_XRCD, &x, sizeof(x), "XRCD");
	must(fsrq_create_xrc(&z->xsrq, &s->ctx, s->pd, 16, 2, z->xrcd,
			     s->cq.cqn), "XRC SRQ");
	must(fqp_create(&z->qp[FZ_XRC_INI], &s->ctx, s->pd, &s->cq, &s->cq,
			&caps), "XRC initiator");
	caps.qp_type = SNIC_QPT_XRC_RECV;
	caps.xrcd = z->xrcd;
	must(fqp_create(&z->qp[FZ_XRC_TGT], &s->ctx, s->pd, &s->cq, &s->cq,
			&caps), "XRC target");
}

/* Every IPv4 UDP frame to port 5000 goes to the raw QP. */
static void raw(struct fside *s, struct fz_side *z)
{
	struct snic_cmd_flow f;

	must(fside_qp(s, &z->qp[FZ_RAW], SNIC_QPT_RAW_PACKET, 0), "raw QP");
	must(fqp_raw_ready(&z->qp[FZ_RAW]), "raw QP RTS");
	memset(&f, 0, sizeof(f));
	f.qpn = z->qp[FZ_RAW].qpn;
	f.layers = SNIC_FLOW_L_ETH | SNIC_FLOW_L_IPV4 | SNIC_FLOW_L_UDP;
	f.val.ether_type = 0x0008;      /* 0x0800, network order */
	f.mask.ether_type = 0xffff;
	f.val.dport = 0x8813;           /* 5000 */
	f.mask.dport = 0xffff;
	z->flow = cmd_handle(&s->ctx, SNIC_CMD_FLOW_CREATE, &f, sizeof(f), "flow");
}

static void mcast(struct fside *s, struct fz_side *z)
{
	struct snic_cmd_mcast m = { 0 };

	must(fside_qp(s, &z->qp[FZ_UD_MC], SNIC_QPT_UD, 0), "UD MC QP");
	must(fqp_ud_ready(&z->qp[FZ_UD_MC], FZ_QKEY, 7), "UD MC RTS");
	m.qpn = z->qp[FZ_UD_MC].qpn;
	m.gid[10] = m.gid[11] = 0xff;
	m.gid[12] = FZ_GROUP >> 24;
	m.gid[13] = (FZ_GROUP >> 16) & 0xff;
	m.gid[14] = (FZ_GROUP >> 8) & 0xff;
	m.gid[15] = FZ_GROUP & 0xff;
	must(fctx_cmd(&s->ctx, SNIC_CMD_MCAST_ATTACH, &m, sizeof(m), NULL, 0),
	     "multicast attach");
}

static void cm(struct fside *s, struct fz_side *z)
{
	struct snic_cm_open o = { 0 };
	struct snic_cm_listen l = { .service_id = FZ_SID };

	must(fctx_cmd(&s->ctx, SNIC_CMD_CM_OPEN, NULL, 0, &o, sizeof(o)), "CM open");
	z->cid_base = o.cid_base;
	must(fctx_cmd(&s->ctx, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0),
	     "CM listen");
}

static void dm(struct fside *s, struct fz_side *z)
{
	struct snic_cmd_alloc_dm a = { .length = 8192, .log_align = 12 };
	struct snic_cmd_alloc_dm_out o = { 0 };
	struct snic_cmd_reg_dm_mr r = { .pdn = s->pd, .length = 8192,
					.access = BIND_ACCESS & ~SNIC_ACCESS_MW_BIND };

	must(fctx_cmd(&s->ctx, SNIC_CMD_ALLOC_DM, &a, sizeof(a), &o, sizeof(o)),
	     "DM");
	z->dm = o.handle;
	r.dm = o.handle;
	z->dm_mr = cmd_handle(&s->ctx, SNIC_CMD_REG_DM_MR, &r, sizeof(r), "DM MR");
}

/* A BIND_MW WQE on qp: window mw (key now `key`) over [off, off+len) of
 * the side's bind MR; the new key's tag is the old one + 1. */
static uint32_t bind(struct fside *s, struct fqp *qp, uint32_t mr, uint32_t key,
		     uint64_t off, uint64_t len, int type1)
{
	struct fwr wr = { .wr_id = 0xb1d, .opcode = SNIC_WR_BIND_MW,
			  .flags = SNIC_SEND_SIGNALED };
	struct snic_wqe_bind b = { .addr = s->buf + off, .length = len,
				   .mw_rkey = key,
				   .new_rkey = (key & ~0xffu) | ((key + 1) & 0xffu),
				   .mr_lkey = mr, .access = MW_REMOTE };
	uint64_t pa = qp->sq_pa + ((uint64_t)(qp->sq_pi & (qp->sq_cnt - 1))
				   << qp->sq_stride_log);
	uint8_t *p = fdev_ptr(qp->ctx->dev, pa);

	fqp_write_send(qp, &wr);
	memcpy(p + offsetof(struct snic_send_wqe, raddr), &b, sizeof(b));
	if (type1)
		((struct snic_send_wqe *)p)->ctrl.rsvd0 = SNIC_BIND_TYPE_1;
	fqp_ring(qp);
	return b.new_rkey;
}

static void windows(struct fside *s, struct fz_side *z)
{
	struct snic_cmd_alloc_mw m = { .pdn = s->pd, .type = 1 };

	must(fctx_reg_mr(&s->ctx, s->pd, s->buf, FZ_BUF, BIND_ACCESS,
			 &z->bind_mr), "bind MR");
	z->mw1 = cmd_handle(&s->ctx, SNIC_CMD_ALLOC_MW, &m, sizeof(m), "MW 1");
	m.type = 2;
	z->mw2 = cmd_handle(&s->ctx, SNIC_CMD_ALLOC_MW, &m, sizeof(m), "MW 2");
	/* type 2B on the RC QP its peer talks to; type 1 on the UD QP's PD */
	z->mw2 = bind(s, &z->qp[FZ_RC], z->bind_mr, z->mw2, 0x1000, 0x10000, 0);
	z->mw1 = bind(s, &z->qp[FZ_RC], z->bind_mr, z->mw1, 0x20000, 0x10000, 1);
}

static void side(struct fside *s, struct fz_side *z)
{
	xrc(s, z);
	raw(s, z);
	mcast(s, z);
	cm(s, z);
	dm(s, z);
}

void fz_features(struct fz_world *w)
{
	struct fconn conn;

	side(&w->e->a, &w->a);
	side(&w->e->b, &w->b);
	fconn_default(&conn);
	must(fqp_connect(&w->a.qp[FZ_XRC_INI], &w->b.qp[FZ_XRC_TGT], &conn),
	     "XRC a->b");
	must(fqp_connect(&w->b.qp[FZ_XRC_INI], &w->a.qp[FZ_XRC_TGT], &conn),
	     "XRC b->a");
	windows(&w->e->a, &w->a);
	windows(&w->e->b, &w->b);
}

/* A UDP frame to port 5000 (the raw QPs' flow) from a's raw QP. */
static void raw_send(struct fz_world *w, uint8_t seed)
{
	struct fside *s = &w->e->a;
	uint8_t *f = fside_ptr(s, 0x70000);
	uint32_t plen = 16u + seed;
	struct snic_wqe_sge sge = fside_sge(s, 0x70000, 42 + plen);
	struct fwr wr = { .wr_id = seed, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1 };

	memset(f, 0, 42);
	memcpy(f, w->e->b.dev->cfg.mac, 6);
	memcpy(f + 6, s->dev->cfg.mac, 6);
	f[12] = 8;
	f[14] = 0x45;
	f[14 + 8] = 64;
	f[14 + 9] = 17;
	f[14 + 2] = (uint8_t)((28 + plen) >> 8);
	f[14 + 3] = (uint8_t)(28 + plen);
	memcpy(f + 26, "\xc6\x12\x00\x01\xc6\x12\x00\x02", 8);
	f[36] = 0x13;
	f[37] = 0x88;
	fqp_post_send(&w->a.qp[FZ_RAW], &wr);
}

/* A CM REQ from a's context to b's listener (or to nobody). */
static void cm_send(struct fz_world *w, uint8_t seed)
{
	struct snic_cm_mad m;
	uint8_t *c = m.mad + SNIC_CM_HDR_LEN;
	uint64_t sid = (seed & 1) ? FZ_SID : FZ_SID + 1;
	uint16_t attr = SNIC_CM_ATTR_REQ + (seed >> 1) % 11;

	memset(&m, 0, sizeof(m));
	m.peer_ip = FSIM_IP_B;
	m.mad[0] = 1;
	m.mad[1] = SNIC_MAD_CLASS_CM;
	m.mad[2] = 2;
	m.mad[3] = SNIC_MAD_METHOD_SEND;
	m.mad[17] = (uint8_t)attr;
	c[0] = (uint8_t)(w->a.cid_base >> 24);
	c[1] = (uint8_t)(w->a.cid_base >> 16);
	c[2] = (uint8_t)(w->a.cid_base >> 8);
	c[3] = seed;
	for (int i = 0; i < 8; i++)
		c[8 + i] = (uint8_t)(sid >> (56 - 8 * i));
	if (attr != SNIC_CM_ATTR_REQ && attr != SNIC_CM_ATTR_SIDR_REQ)
		memcpy(c + 4, c, 4); /* remote ID: some ID of b's, maybe */
	fctx_cmd(&w->e->a.ctx, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0);
	if (seed & 0x10)
		fctx_cmd(&w->e->a.ctx, SNIC_CMD_CM_ARM, &m, sizeof(m), NULL, 0);
}

void fz_traffic_more(struct fz_world *w, uint8_t seed)
{
	struct fside *s = &w->e->a;
	struct snic_wqe_sge sge = fside_sge(s, 0x40000 + (seed & 3) * 0x1000,
					    64u + seed * 24u);
	struct fwr wr = { .wr_id = seed, .flags = SNIC_SEND_SIGNALED,
			  .sge = &sge, .num_sge = 1, .opcode = SNIC_WR_SEND,
			  .xrc_srqn = w->b.xsrq.srqn };
	struct snic_wqe_ud ud;

	switch (seed & 7) {
	case 0: /* XRC: SEND, WRITE, READ into b's XRC SRQ */
		fqp_post_send(&w->a.qp[FZ_XRC_INI], &wr);
		wr.opcode = (seed & 8) ? SNIC_WR_RDMA_READ : SNIC_WR_RDMA_WRITE;
		wr.remote_addr = w->e->b.buf + 0x3000;
		wr.rkey = w->e->b.mr;
		fqp_post_send(&w->a.qp[FZ_XRC_INI], &wr);
		break;
	case 1: /* a datagram to the group: b's member, a's by loopback */
		wr.ud = &ud;
		fud_addr(&ud, FZ_GROUP, SNIC_MCAST_QPN, FZ_QKEY);
		fqp_post_send(&w->a.qp[FZ_UD], &wr);
		break;
	case 2:
		raw_send(w, seed);
		break;
	case 3:
		cm_send(w, seed);
		break;
	case 4: /* through b's windows: the 2B one is bound to b's RC QP */
		wr.opcode = (seed & 8) ? SNIC_WR_RDMA_READ : SNIC_WR_RDMA_WRITE;
		wr.remote_addr = w->e->b.buf + 0x1000 + (seed & 0xf0);
		wr.rkey = (seed & 16) ? w->b.mw1 : w->b.mw2;
		if (seed & 16)
			wr.remote_addr += 0x1f000;
		fqp_post_send(&w->a.qp[FZ_RC], &wr);
		break;
	case 5: /* atomics, ATOMIC_WRITE, WRITE with immediate, into DM too */
		wr.opcode = (seed & 8) ? SNIC_WR_ATOMIC_WRITE :
			    (seed & 16) ? SNIC_WR_ATOMIC_CMP_AND_SWP :
			    SNIC_WR_RDMA_WRITE_WITH_IMM;
		sge.length = 8;
		wr.remote_addr = (seed & 32) ? 0 : w->e->b.buf + 0x800;
		wr.rkey = (seed & 32) ? w->b.dm_mr : w->e->b.mr;
		fqp_post_send(&w->a.qp[FZ_RC], &wr);
		break;
	case 6: /* SEND with Invalidate of b's 2B window (then bind again) */
		wr.opcode = SNIC_WR_SEND_WITH_INV;
		wr.imm = __builtin_bswap32(w->b.mw2);
		fqp_post_send(&w->a.qp[FZ_RC], &wr);
		break;
	default: /* inline SEND on UC, and a LOCAL_INV of a's own window */
		wr.opcode = SNIC_WR_LOCAL_INV;
		wr.imm = __builtin_bswap32(w->a.mw2);
		fqp_post_send(&w->a.qp[FZ_SRQ_RC], &wr);
		break;
	}
}

uint32_t fz_handle(struct fz_world *w, int b, unsigned k)
{
	struct fside *s = b ? &w->e->b : &w->e->a, *o = b ? &w->e->a : &w->e->b;
	struct fz_side *z = b ? &w->b : &w->a, *oz = b ? &w->a : &w->b;
	const uint32_t h[] = {
		[FZH_PD] = s->pd, [FZH_MR] = s->mr, [FZH_CQ] = s->cq.cqn,
		[FZH_SRQ] = z->srq.srqn, [FZH_XSRQ] = z->xsrq.srqn,
		[FZH_XRCD] = z->xrcd, [FZH_BIND_MR] = z->bind_mr,
		[FZH_MW1] = z->mw1, [FZH_MW2] = z->mw2, [FZH_DM] = z->dm,
		[FZH_DM_MR] = z->dm_mr, [FZH_FLOW] = z->flow,
		[FZH_CID] = z->cid_base, [FZH_PEER_MR] = o->mr,
		[FZH_PEER_XSRQ] = oz->xsrq.srqn, [FZH_PEER_MW2] = oz->mw2,
	};

	k %= FZH_N;
	if (k >= FZH_QP && k < FZH_QP + FZ_NQP)
		return z->qp[k - FZH_QP].qpn;
	if (k >= FZH_PEER_QP)
		return oz->qp[k - FZH_PEER_QP].qpn;
	return h[k];
}

void fz_subst(struct fz_world *w, int b, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t base = b ? w->e->b.buf : w->e->a.buf;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (v >> 48 == 0xfade) {
			v = base + (v & 0xffffffffu) % FZ_BUF;
			memcpy(p + i, &v, 8);
		}
	}
	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint32_t v;

		memcpy(&v, p + i, 4);
		if (v >> 16 == 0xfade) {
			v = fz_handle(w, b, v & 0xffffu);
			memcpy(p + i, &v, 4);
		}
	}
}
