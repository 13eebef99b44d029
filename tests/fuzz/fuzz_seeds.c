/* SPDX-License-Identifier: MIT */
/*
 * Writes the generated part of the seed corpus (tests/fuzz/corpus/<target>/
 * gen-*): small inputs in each target's format that reach what random
 * mutation finds slowly - one well-formed command of every kind naming
 * live objects (FZ_H/FZ_A markers, fuzz_env.h), WQEs of every opcode, and
 * frames of every transport to every QP, CM MADs to QP1, duplicates and
 * losses.  `tools/fuzz.sh seeds` builds and runs it; the inputs are kept
 * in the repository, so CI's short run starts from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_cmd_ops.h"
#include "fuzz_env.h"
#include "wire/roce_wire.h"

static const char *dir;
static uint8_t buf[8192];
static size_t len;

static void put(const void *p, size_t n)
{
	if (len + n > sizeof(buf))
		abort();
	memcpy(buf + len, p, n);
	len += n;
}

static void u8(uint8_t v) { put(&v, 1); }
static void u16(uint16_t v) { put(&v, 2); }  /* little endian, as fz_u16 */
static void u32(uint32_t v) { put(&v, 4); }
static void u64(uint64_t v) { put(&v, 8); }

static void save(const char *target, const char *name, unsigned n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/gen-%s-%u", dir, target, name, n);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	len = 0;
}

/* ---- fuzz_cmd: slot, op index, length, fix word, bytes, traffic ---- */

static uint8_t op_index(uint16_t op)
{
	for (unsigned i = 0; i < FZ_NOPS; i++)
		if (fz_cmd_ops[i] == op)
			return (uint8_t)i;
	abort();
}

static void cmd(uint8_t slot, uint16_t op, const void *in, uint16_t n,
		uint8_t traffic)
{
	u8(slot);
	u8(op_index(op));
	u16(n);
	u32(0);
	put(in, n);
	u8(traffic ? 1 : 0);
	if (traffic)
		u8(traffic);
}

static void cmd_seeds(void)
{
	static const uint16_t handle_ops[] = {
		SNIC_CMD_DEALLOC_PD, SNIC_CMD_DEREG_MR, SNIC_CMD_DESTROY_CQ,
		SNIC_CMD_QUERY_QP, SNIC_CMD_DESTROY_QP, SNIC_CMD_QUERY_SRQ,
		SNIC_CMD_DESTROY_SRQ, SNIC_CMD_FREE_DM, SNIC_CMD_DEALLOC_MW,
		SNIC_CMD_CLOSE_XRCD, SNIC_CMD_FLOW_DESTROY,
	};
	static const unsigned handles[] = {
		FZH_PD, FZH_MR, FZH_CQ, FZH_SRQ, FZH_XSRQ, FZH_XRCD, FZH_BIND_MR,
		FZH_MW1, FZH_MW2, FZH_DM, FZH_DM_MR, FZH_FLOW,
	};
	unsigned n = 0;

	/* every handle command on every handle (and every QP) */
	for (unsigned i = 0; i < sizeof(handle_ops) / 2; i++) {
		for (unsigned k = 0; k < sizeof(handles) / sizeof(handles[0]) + FZ_NQP; k++) {
			unsigned h = k < sizeof(handles) / sizeof(handles[0])
				? handles[k] : FZH_QP + k - sizeof(handles) / sizeof(handles[0]);
			struct snic_cmd_handle in = { .handle = FZ_H(h) };

			cmd(0, handle_ops[i], &in, sizeof(in), (uint8_t)(k * 8 + 4));
			/* and the world keeps running after it */
			cmd(0, SNIC_CMD_QUERY_DEVICE, NULL, 0, (uint8_t)(k * 8 + 1));
			save("fuzz_cmd", "handle", n++);
		}
	}
	/* QP state changes of every QP to every state, then traffic */
	for (unsigned q = 0; q < FZ_NQP; q++)
		for (uint32_t st = SNIC_QPS_RESET; st <= SNIC_QPS_ERR; st++) {
			struct snic_cmd_modify_qp m = { .qpn = FZ_H(FZH_QP + q),
							.attr_mask = SNIC_QP_STATE };

			m.attr.qp_state = st;
			m.attr.cur_qp_state = SNIC_QPS_RTS;
			cmd(0, SNIC_CMD_MODIFY_QP, &m, sizeof(m), (uint8_t)(q + st * 8));
			save("fuzz_cmd", "modify", n++);
		}
	{
		struct snic_cmd_reg_mr r = { .pdn = FZ_H(FZH_PD), .access = 0x1f,
					     .iova = 0x10000, .length = 0x3000,
					     .pages_pa = FZ_A(0x1000), .npages = 3 };
		struct snic_cmd_rereg_mr rr = { .key = FZ_H(FZH_MR), .flags = 7,
						.reg = r };
		struct snic_cmd_resize_cq rc = { .cqn = FZ_H(FZH_CQ), .cqe_cnt = 2048,
						 .ring_pa = FZ_A(0x80000),
						 .dbrec_pa = FZ_A(0x7f000) };
		struct snic_cmd_alloc_dm dm = { .length = 4096, .log_align = 12 };
		struct snic_cmd_reg_dm_mr dmr = { .dm = FZ_H(FZH_DM), .pdn = FZ_H(FZH_PD),
						  .access = 0xf, .length = 4096 };
		struct snic_cmd_alloc_mw mw = { .pdn = FZ_H(FZH_PD), .type = 2 };
		struct snic_cmd_open_xrcd x = { .dev = 3, .ino = 4, .flags = 1 };
		struct snic_cmd_create_srq srq = { .pdn = FZ_H(FZH_PD), .wqe_cnt = 16,
						   .stride_log = 6, .max_sge = 2,
						   .flags = SNIC_SRQ_F_XRC,
						   .ring_pa = FZ_A(0x90000),
						   .dbrec_pa = FZ_A(0x91000),
						   .xrcd = FZ_H(FZH_XRCD),
						   .cqn = FZ_H(FZH_CQ) };
		struct snic_cmd_modify_srq ms = { .srqn = FZ_H(FZH_SRQ),
						  .attr_mask = SNIC_SRQ_LIMIT,
						  .srq_limit = 7 };
		struct snic_cmd_create_qp qp = {
			.pdn = FZ_H(FZH_PD), .send_cqn = FZ_H(FZH_CQ),
			.recv_cqn = FZ_H(FZH_CQ), .sq_wqe_cnt = 16,
			.sq_stride_log = 8, .rq_wqe_cnt = 16, .rq_stride_log = 6,
			.sq_pa = FZ_A(0xa0000), .rq_pa = FZ_A(0xa1000),
			.dbrec_pa = FZ_A(0xa2000), .max_send_sge = 2,
			.max_recv_sge = 2, .max_inline = 64 };
		struct snic_cmd_mcast mc = { .qpn = FZ_H(FZH_QP + FZ_UD),
					     .gid = { [10] = 0xff, [11] = 0xff,
						      [12] = 239, [13] = 1,
						      [14] = 2, [15] = 3 } };
		struct snic_cmd_flow fl = { .qpn = FZ_H(FZH_QP + FZ_RAW), .priority = 1,
					    .layers = SNIC_FLOW_L_ETH | SNIC_FLOW_L_IPV4 |
						      SNIC_FLOW_L_TCP };
		struct snic_cm_listen l = { .service_id = 77 };
		struct snic_cm_resolve res = { .ip = FSIM_IP_A, .send_arp = 1 };
		struct snic_cm_note note = { .timeouts = 3 };
		struct snic_cm_mad mad = { .peer_ip = FSIM_IP_A, .cid = FZ_H(FZH_CID),
					   .mad = { 1, SNIC_MAD_CLASS_CM, 2,
						    SNIC_MAD_METHOD_SEND, [17] = 0x15 } };
		struct snic_cmd_gid_query g = { .port_num = 1, .index = 1 };
		struct snic_cmd_port port = { .port_num = 1 };
		static const uint32_t types[] = { SNIC_QPT_RC, SNIC_QPT_UC, SNIC_QPT_UD,
						  SNIC_QPT_RAW_PACKET, SNIC_QPT_XRC_SEND,
						  SNIC_QPT_XRC_RECV };

		cmd(0, SNIC_CMD_REG_MR, &r, sizeof(r), 0);
		save("fuzz_cmd", "reg", n++);
		for (uint32_t f = 1; f < 8; f++) {
			rr.flags = f;
			rr.key = FZ_H(f & 1 ? FZH_MR : FZH_BIND_MR);
			cmd(0, SNIC_CMD_REREG_MR, &rr, sizeof(rr), (uint8_t)f);
			save("fuzz_cmd", "rereg", n++);
		}
		cmd(0, SNIC_CMD_RESIZE_CQ, &rc, sizeof(rc), 9);
		rc.cqe_cnt = 16;
		cmd(0, SNIC_CMD_RESIZE_CQ, &rc, sizeof(rc), 12);
		save("fuzz_cmd", "resize", n++);
		cmd(0, SNIC_CMD_ALLOC_DM, &dm, sizeof(dm), 0);
		cmd(0, SNIC_CMD_REG_DM_MR, &dmr, sizeof(dmr), 5);
		save("fuzz_cmd", "dm", n++);
		cmd(0, SNIC_CMD_ALLOC_MW, &mw, sizeof(mw), 4);
		mw.type = 1;
		cmd(0, SNIC_CMD_ALLOC_MW, &mw, sizeof(mw), 4);
		save("fuzz_cmd", "mw", n++);
		cmd(0, SNIC_CMD_OPEN_XRCD, &x, sizeof(x), 0);
		cmd(0, SNIC_CMD_OPEN_XRCD, &x, sizeof(x), 0);
		cmd(0, SNIC_CMD_CREATE_SRQ, &srq, sizeof(srq), 0);
		save("fuzz_cmd", "xrc", n++);
		cmd(0, SNIC_CMD_MODIFY_SRQ, &ms, sizeof(ms), 1);
		save("fuzz_cmd", "srq", n++);
		for (unsigned t = 0; t < sizeof(types) / 4; t++) {
			qp.qp_type = types[t];
			cmd(0, SNIC_CMD_CREATE_QP, &qp, sizeof(qp), 0);
			save("fuzz_cmd", "qp", n++);
		}
		cmd(0, SNIC_CMD_MCAST_ATTACH, &mc, sizeof(mc), 1);
		cmd(0, SNIC_CMD_MCAST_DETACH, &mc, sizeof(mc), 1);
		save("fuzz_cmd", "mcast", n++);
		cmd(0, SNIC_CMD_FLOW_CREATE, &fl, sizeof(fl), 2);
		save("fuzz_cmd", "flow", n++);
		cmd(0, SNIC_CMD_CM_LISTEN, &l, sizeof(l), 3);
		cmd(0, SNIC_CMD_CM_UNLISTEN, &l, sizeof(l), 3);
		cmd(0, SNIC_CMD_CM_RESOLVE, &res, sizeof(res), 3);
		cmd(0, SNIC_CMD_CM_NOTE, &note, sizeof(note), 3);
		cmd(0, SNIC_CMD_CM_RECV, NULL, 0, 3);
		save("fuzz_cmd", "cm", n++);
		for (uint8_t a = SNIC_CM_ATTR_REQ; a <= SNIC_CM_ATTR_APR; a++) {
			mad.mad[17] = a;
			cmd(0, SNIC_CMD_CM_SEND, &mad, sizeof(mad), 0);
			cmd(0, SNIC_CMD_CM_ARM, &mad, sizeof(mad), 0);
			cmd(1, SNIC_CMD_CM_OPEN, NULL, 0, 0);
			cmd(1, SNIC_CMD_CTX_CLOSE, NULL, 0, 0);
			save("fuzz_cmd", "cm-send", n++);
		}
		cmd(0, SNIC_CMD_QUERY_GID, &g, sizeof(g), 0);
		cmd(0, SNIC_CMD_QUERY_PORT, &port, sizeof(port), 0);
		cmd(0, SNIC_CMD_CTX_CLOSE, NULL, 0, 0);
		cmd(0, SNIC_CMD_ALLOC_PD, NULL, 0, 0);
		save("fuzz_cmd", "ctx", n++);
	}
}

/* ---- fuzz_wqe: c (QP, kind, pi), WQE bytes (stride), idle byte ---- */

static void wqe_send(unsigned q, struct snic_send_wqe *h, const void *tail,
		     size_t tail_len, uint8_t idle)
{
	/* fuzz_env.c's QP of each FZ_* index, for where the data goes */
	static const uint8_t type[FZ_NQP] = {
		[FZ_RC] = SNIC_QPT_RC, [FZ_UC] = SNIC_QPT_UC,
		[FZ_UD] = SNIC_QPT_UD, [FZ_SRQ_RC] = SNIC_QPT_RC,
		[FZ_XRC_INI] = SNIC_QPT_XRC_SEND, [FZ_XRC_TGT] = SNIC_QPT_XRC_RECV,
		[FZ_RAW] = SNIC_QPT_RAW_PACKET, [FZ_UD_MC] = SNIC_QPT_UD,
	};
	uint8_t w[256] = { 0 };

	memcpy(w, h, sizeof(*h));
	memcpy(w + snic_wqe_data_off(type[q], h->ctrl.opcode), tail, tail_len);
	u8((uint8_t)q);         /* kind 0: send WQE, next index */
	put(w, 256);            /* the SQ stride (4 SGEs, 128 inline) */
	u8(idle);
}

static void wqe_seeds(void)
{
	static const uint8_t ops[] = {
		SNIC_WR_RDMA_WRITE, SNIC_WR_RDMA_WRITE_WITH_IMM, SNIC_WR_SEND,
		SNIC_WR_SEND_WITH_IMM, SNIC_WR_RDMA_READ, SNIC_WR_ATOMIC_CMP_AND_SWP,
		SNIC_WR_ATOMIC_FETCH_AND_ADD, SNIC_WR_ATOMIC_WRITE,
		SNIC_WR_LOCAL_INV, SNIC_WR_BIND_MW, SNIC_WR_SEND_WITH_INV,
	};
	unsigned n = 0;

	for (unsigned q = 0; q < FZ_NQP; q++)
		for (unsigned i = 0; i < sizeof(ops); i++) {
			struct snic_send_wqe h = { 0 };
			struct snic_wqe_sge sge = { .addr = FZ_A(0x5000), .length = 3000,
						    .lkey = FZ_H(FZH_MR) };
			struct snic_wqe_ud *ud = (struct snic_wqe_ud *)&h.raddr;
			struct snic_wqe_bind *b = (struct snic_wqe_bind *)&h.raddr;

			h.ctrl.opcode = ops[i];
			h.ctrl.flags = SNIC_SEND_SIGNALED;
			h.ctrl.num_sge = 1;
			h.ctrl.wr_id = i;
			h.ctrl.imm_data = FZ_H(FZH_MW2);
			h.ctrl.xrc_srqn = FZ_H(FZH_PEER_XSRQ);
			h.raddr.remote_addr = FZ_A(0x1000);
			h.raddr.rkey = FZ_H(i & 1 ? FZH_PEER_MW2 : FZH_PEER_MR);
			if (ops[i] >= SNIC_WR_ATOMIC_CMP_AND_SWP &&
			    ops[i] <= SNIC_WR_ATOMIC_FETCH_AND_ADD)
				sge.length = 8;
			if (ops[i] == SNIC_WR_ATOMIC_WRITE)
				sge.length = 8;
			if (ops[i] == SNIC_WR_BIND_MW) {
				h.ctrl.num_sge = 0;
				b->addr = FZ_A(0x2000);
				b->length = 0x1000;
				b->mw_rkey = FZ_H(i & 1 ? FZH_MW1 : FZH_MW2);
				b->new_rkey = FZ_H(FZH_MW2);
				b->mr_lkey = FZ_H(FZH_BIND_MR);
				b->access = SNIC_ACCESS_REMOTE_READ;
			}
			if (q == FZ_UD || q == FZ_UD_MC) {
				/* the peer over IPv4, over IPv6, an address
				 * nobody answers, a multicast IPv6 one */
				static const char *const dgid[] = {
					"\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x02",
					"\xfd\x00\x5e\x1c\0\0\0\0\0\0\0\0\xc6\x12\x00\x02",
					"\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x63",
					"\xff\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\x01",
				};

				memset(&h.raddr, 0, 32);
				ud->remote_qpn = FZ_H(FZH_PEER_QP + q);
				ud->remote_qkey = (i & 4) ? 0x80000000u : FZ_QKEY;
				memcpy(ud->dgid, dgid[i % 4], 16);
				ud->hop_limit = 64;
			}
			wqe_send(q, &h, &sge, sizeof(sge), 0x83);
			/* then the same with inline data, and a fence */
			h.ctrl.flags |= SNIC_SEND_INLINE | SNIC_SEND_FENCE;
			h.ctrl.inline_len = 100;
			wqe_send(q, &h, "0123456789abcdef0123456789abcdef", 32, 0x07);
			save("fuzz_wqe", "send", n++);
		}
	/* receives and SRQ entries with SGEs of every key */
	for (unsigned q = 0; q < FZ_NQP; q++) {
		struct snic_recv_wqe r = { .wr_id = q, .num_sge = 2 };
		struct snic_wqe_sge sge[2] = {
			{ .addr = FZ_A(0x9000), .length = 100, .lkey = FZ_H(FZH_MR) },
			{ .addr = FZ_A(0xa000), .length = 5000, .lkey = FZ_H(FZH_DM_MR) },
		};
		uint8_t w[256] = { 0 };

		memcpy(w, &r, sizeof(r));
		memcpy(w + sizeof(r), sge, sizeof(sge));
		u8((uint8_t)(q | 1u << 3));
		put(w, 128);
		u8(2);
		u8((uint8_t)(q | 2u << 3 | (q & 1) << 5));
		put(w, 64);
		u8(2);
		save("fuzz_wqe", "recv", n++);
	}
}

/* ---- fuzz_rx: frames with the fields structured() reads ---- */

struct rxf {
	uint8_t c;              /* bit 0 to b, 2 traffic, 0x60 loss word */
	uint8_t sel;
	uint8_t opcode;
	uint8_t qp;             /* pick_qpn's byte */
	int16_t dpsn;
	uint32_t rkey, reth_len, imm;
	uint64_t va;
	uint8_t syndrome;
	uint16_t plen;
	uint8_t traffic, loss, dup;
	uint8_t cm_attr;        /* QP1 frames: cm_mad's byte */
};

static void rx_frame(const struct rxf *f)
{
	u8(f->c);
	u8(f->sel);
	/* sel & 3 == 0: the peer's IPv4; no dip, no P_Key, qkey default */
	u16(4791);              /* sport */
	u8(f->opcode);
	u8(f->qp);
	u16((uint16_t)f->dpsn);
	if (f->sel & 0x80) {
		u32((uint32_t)f->va);
	} else {
		u64(f->va);
		u32(f->rkey);
	}
	u32(f->reth_len);
	u8(f->syndrome);
	u32(0);                 /* msn */
	u32(f->imm);
	if (f->sel & 0x80)
		u16(0x40);
	else {          /* the atomic's target: the RETH's */
		u64(f->va);
		u32(f->rkey);
	}
	u64(1);
	u64(0);
	u64(0);
	u32(0x12);              /* source QP */
	u8(0);                  /* the XRC SRQ of the world */
	u16(f->plen);
	if (f->qp == 4 * FZ_NQP) {
		u8(f->cm_attr);
		if (f->cm_attr & 0x80)
			u8(0);
		else
			u32(0x12345678);
	}
	if (f->c & 4)
		u8(f->traffic);
	if ((f->c & 0x60) == 0x60) {
		u8(f->loss);
		u8(f->dup);
	}
}

static void rx_seeds(void)
{
	static const uint8_t req[] = {
		ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE, ROCE_RC_SEND_LAST,
		ROCE_RC_SEND_LAST_IMM, ROCE_RC_SEND_ONLY, ROCE_RC_SEND_ONLY_IMM,
		ROCE_RC_WRITE_FIRST, ROCE_RC_WRITE_MIDDLE, ROCE_RC_WRITE_LAST,
		ROCE_RC_WRITE_LAST_IMM, ROCE_RC_WRITE_ONLY, ROCE_RC_WRITE_ONLY_IMM,
		ROCE_RC_READ_REQ, ROCE_RC_CMP_SWAP, ROCE_RC_FETCH_ADD,
		ROCE_RC_SEND_LAST_INV, ROCE_RC_SEND_ONLY_INV, ROCE_RC_ATOMIC_WRITE,
	};
	static const uint8_t resp[] = {
		ROCE_RC_READ_RESP_FIRST, ROCE_RC_READ_RESP_MIDDLE,
		ROCE_RC_READ_RESP_LAST, ROCE_RC_READ_RESP_ONLY, ROCE_RC_ACK,
		ROCE_RC_ATOMIC_ACK,
	};
	static const uint8_t syn[] = { 0x00, 0x1f, 0x20, 0x60, 0x61, 0x62, 0x63, 0x64 };
	static const uint8_t cls[] = { 0, ROCE_UC_BASE, ROCE_XRC_BASE };
	static const unsigned cls_qp[] = { FZ_RC, FZ_UC, FZ_XRC_TGT };
	unsigned n = 0;

	/* requests of each class, to its QP (and the SRQ's), a keyed and a
	 * window-keyed form; then the same again one PSN back: a duplicate */
	for (unsigned k = 0; k < 3; k++)
		for (unsigned i = 0; i < sizeof(req); i++) {
			struct rxf f = { .c = 1, .sel = 0x80, .opcode = cls[k] | req[i],
					 .qp = (uint8_t)cls_qp[k], .va = 0x2000,
					 .reth_len = 3000, .plen = 1024,
					 .imm = FZ_H(FZH_MW2) };

			if (k == 1 && (req[i] >= ROCE_RC_READ_REQ ||
				       req[i] == ROCE_RC_SEND_LAST_INV))
				continue; /* no such UC operation */
			if (req[i] >= ROCE_RC_CMP_SWAP && req[i] != ROCE_RC_SEND_LAST_INV &&
			    req[i] != ROCE_RC_SEND_ONLY_INV)
				f.plen = req[i] == ROCE_RC_ATOMIC_WRITE ? 8 : 0;
			if (req[i] == ROCE_RC_READ_REQ)
				f.plen = 0;
			rx_frame(&f);
			f.dpsn = -1;
			f.c = 0x80 | 0x01; /* and after a long pause */
			rx_frame(&f);
			f.sel = 0;
			f.dpsn = 0;
			f.va = FZ_A(0x1100);
			f.rkey = FZ_H(FZH_MW2);
			f.c = 1;
			rx_frame(&f);
			f.qp = FZ_SRQ_RC;
			rx_frame(&f);
			save("fuzz_rx", "req", n++);
		}
	/* into device memory (its MR is zero-based) and through the type 1
	 * window */
	for (unsigned i = 0; i < sizeof(req); i++) {
		struct rxf f = { .c = 1, .opcode = req[i], .qp = FZ_RC,
				 .rkey = FZ_H(FZH_DM_MR), .va = 0x100,
				 .reth_len = 64, .plen = 64 };

		if (req[i] >= ROCE_RC_CMP_SWAP || req[i] == ROCE_RC_READ_REQ)
			f.plen = req[i] == ROCE_RC_ATOMIC_WRITE ? 8 : 0;
		rx_frame(&f);
		f.rkey = FZ_H(FZH_MW1);
		f.va = FZ_A(0x20100);
		rx_frame(&f);
		save("fuzz_rx", "dm", n++);
	}
	/* responses to a's requests in flight, each AETH syndrome */
	for (unsigned i = 0; i < sizeof(resp); i++)
		for (unsigned s = 0; s < sizeof(syn); s++) {
			struct rxf f = { .c = 0x04, .sel = 0x80, .opcode = resp[i],
					 .qp = FZ_RC, .syndrome = syn[s],
					 .plen = resp[i] <= ROCE_RC_READ_RESP_ONLY ? 1024 : 0,
					 .traffic = (uint8_t)(s * 16 + 2) };

			rx_frame(&f);
			f.c = 0x80;
			f.qp = (s & 1) ? FZ_XRC_INI : FZ_SRQ_RC;
			rx_frame(&f);
			save("fuzz_rx", "resp", n++);
		}
	/* datagrams: UD, the multicast group, QP1's CM MADs */
	for (unsigned a = 0; a < 11; a++) {
		struct rxf f = { .c = 1, .sel = 0x80, .opcode = ROCE_UD_SEND_ONLY,
				 .qp = 4 * FZ_NQP, .plen = 256,
				 .cm_attr = (uint8_t)(a | (a & 1 ? 0x80 : 0x40)) };

		rx_frame(&f);
		f.cm_attr ^= 0xc0;
		rx_frame(&f);
		f.qp = FZ_UD;
		f.opcode = ROCE_UD_SEND_ONLY_IMM;
		rx_frame(&f);
		f.qp = 4 * FZ_NQP + 16;
		f.plen = (uint16_t)(a * 400);
		rx_frame(&f);
		save("fuzz_rx", "ud", n++);
	}
	/* traffic under loss and duplication, with pauses for the timers */
	for (unsigned t = 0; t < 16; t++) {
		struct rxf f = { .c = 0x64, .sel = 0x80, .opcode = ROCE_RC_ACK,
				 .qp = FZ_RC, .dpsn = 100, .traffic = (uint8_t)(t * 17),
				 .loss = (uint8_t)(0x55 << (t & 1)),
				 .dup = (uint8_t)(t * 37) };

		rx_frame(&f);
		for (unsigned k = 0; k < 6; k++) {
			f.c = (uint8_t)(0x80 | (k << 4) | 0x38);
			f.dpsn = 5000; /* far: ignored, just the steps */
			rx_frame(&f);
		}
		save("fuzz_rx", "loss", n++);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	cmd_seeds();
	wqe_seeds();
	rx_seeds();
	return 0;
}
