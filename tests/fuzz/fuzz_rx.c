/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the RX path.  The input is a sequence of frames injected
 * into either NIC's port of a live world (fuzz_env.h: MRs, RC/UC/UD/SRQ
 * QPs in RTS, messages in flight).  Most frames are built from fields the
 * input picks (opcode, QP, PSN near the expected one, P_Key, source,
 * RETH/AETH/DETH/AtomicETH, payload, IPv4 or IPv6) with a valid ICRC, so
 * they reach the transport; some are raw bytes, for the codec.  Between frames the
 * simulation steps, so timers, ACKs and retransmissions run too.
 */
#include <string.h>

#include "fuzz_env.h"
#include "nic/top.h"

static uint8_t frame[8192];

static uint32_t pick_qpn(struct fz_side *z, struct fz_in *in)
{
	uint8_t k = fz_u8(in);

	if (k < 4 * FZ_NQP)
		return z->qp[k % FZ_NQP].qpn;
	if (k < 4 * FZ_NQP + 16)
		return SNIC_GSI_QPN;
	if (k < 4 * FZ_NQP + 24)
		return SNIC_MCAST_QPN;
	return fz_u32(in) & ROCE_QPN_MASK;
}

/* A CM MAD's header and IDs at the payload's start, for QP1: attribute
 * and IDs near what the receiving side's CM knows (fuzz_env.h FZ_SID). */
static void cm_mad(uint8_t *p, uint32_t plen, struct fz_side *z, struct fz_in *in)
{
	uint8_t a = fz_u8(in);
	uint32_t cid = (a & 0x80) ? z->cid_base | (fz_u8(in) & 7) : fz_u32(in);
	uint64_t sid = (a & 0x40) ? FZ_SID : fz_u64(in);

	if (plen < SNIC_CM_HDR_LEN + 16)
		return;
	p[0] = 1;
	p[1] = SNIC_MAD_CLASS_CM;
	p[2] = 2;
	p[3] = SNIC_MAD_METHOD_SEND;
	p[16] = 0;
	p[17] = (uint8_t)(SNIC_CM_ATTR_REQ + (a & 0x3f) % 11);
	for (int i = 0; i < 4; i++)
		p[SNIC_CM_HDR_LEN + 4 + i] = (uint8_t)(cid >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		p[SNIC_CM_HDR_LEN + 8 + i] = (uint8_t)(sid >> (56 - 8 * i));
}

static uint32_t key(struct fz_world *w, int to_b, uint32_t v)
{
	return (v >> 16 == 0xfade) ? fz_handle(w, to_b, v) : v;
}

static void structured(struct fz_world *w, struct fz_in *in, int to_b)
{
	struct fside *to = to_b ? &w->e->b : &w->e->a;
	struct fside *from = to_b ? &w->e->a : &w->e->b;
	struct fz_side *z = to_b ? &w->b : &w->a;
	struct snic_nic *nic = to->dev->nic;
	struct roce_hdrs h;
	uint8_t sel = fz_u8(in);
	uint32_t plen, hl;
	struct snic_qp *qp;

	memset(&h, 0, sizeof(h));
	memcpy(h.dmac, to->dev->cfg.mac, 6);
	memcpy(h.smac, from->dev->cfg.mac, 6);
	h.sip = (sel & 3) == 0 ? from->dev->cfg.ipv4 :
		(sel & 3) == 1 ? fz_u32(in) : from->dev->cfg.ipv4;
	h.dip = (sel & 4) ? fz_u32(in) : to->dev->cfg.ipv4;
	if ((sel & 3) == 3) {   /* over IPv6: the peer's GID 1 to ours */
		h.ip6 = 1;
		h.sip = h.dip = 0;
		memcpy(h.sip6, from->dev->cfg.ipv6, 16);
		memcpy(h.dip6, to->dev->cfg.ipv6, 16);
		if (sel & 4)
			h.dip6[15] ^= fz_u8(in);
		h.flow_label = fz_u32(in);
	}
	h.ttl = 64;
	h.sport = fz_u16(in);
	h.opcode = fz_u8(in);
	h.pkey = (sel & 8) ? fz_u16(in) : ROCE_DEFAULT_PKEY;
	h.se = (sel >> 4) & 1;
	h.ackreq = (sel >> 5) & 1;
	h.dqpn = pick_qpn(z, in);
	qp = qp_by_qpn(nic, h.dqpn);
	/* near what the QP expects: as a request, or as a response */
	if (qp && !(sel & 0x40))
		h.psn = (roce_opcodes[h.opcode].flags & ROCE_F_REQ)
			? qp->resp.epsn : qp->acked_psn + 1;
	h.psn = (h.psn + (int16_t)fz_u16(in)) & ROCE_PSN_MASK;
	if (sel & 0x80) {
		h.reth_va = to->buf + fz_u32(in);
		h.reth_rkey = to->mr;
	} else {
		h.reth_va = fz_u64(in);
		h.reth_rkey = key(w, to_b, fz_u32(in));
		if (h.reth_va >> 48 == 0xfade)
			fz_subst(w, to_b, &h.reth_va, 8);
	}
	h.reth_len = fz_u32(in);
	h.aeth_syndrome = fz_u8(in);
	h.aeth_msn = fz_u32(in) & 0xffffff;
	h.imm = key(w, to_b, fz_u32(in));
	h.atomic_va = (sel & 0x80) ? to->buf + (fz_u16(in) & ~7u) : fz_u64(in);
	h.atomic_rkey = (sel & 0x80) ? to->mr : key(w, to_b, fz_u32(in));
	if (h.atomic_va >> 48 == 0xfade)
		fz_subst(w, to_b, &h.atomic_va, 8);
	h.atomic_swap_add = fz_u64(in);
	h.atomic_cmp = fz_u64(in);
	h.atomic_orig = fz_u64(in);
	h.deth_qkey = (sel & 0x10) ? fz_u32(in) : 0x11111111u;
	h.deth_sqpn = fz_u32(in) & ROCE_QPN_MASK;
	h.xrc_srqn = fz_u8(in) < 0xc0 ? z->xsrq.srqn : fz_u32(in) & ROCE_QPN_MASK;
	if (h.dqpn == SNIC_GSI_QPN)
		h.deth_qkey = SNIC_GSI_QKEY;
	if (h.dqpn == SNIC_MCAST_QPN) {
		static const uint8_t mc[6] = { 1, 0, 0x5e, 1, 2, 3 };

		memcpy(h.dmac, mc, 6);
		h.dip = FZ_GROUP;
	}
	if (!roce_opcodes[h.opcode].flags)
		h.opcode = ROCE_RC_SEND_ONLY; /* the codec refuses it anyway */
	plen = fz_u16(in) % 4200u;
	hl = roce_hdrs_len(&h);
	if (hl + plen + 8 > sizeof(frame))
		plen = 0;
	for (uint32_t i = 0; i < plen; i++)
		frame[hl + i] = in->n ? in->p[i % in->n] : (uint8_t)i;
	if (h.dqpn == SNIC_GSI_QPN)
		cm_mad(frame + hl, plen, z, in);
	uint32_t n = roce_build(frame, &h, plen);
	fake_link_inject(&w->e->s->link, to_b, frame, (uint16_t)n);
}

static void raw(struct fz_world *w, struct fz_in *in, int to_b)
{
	uint16_t n = fz_u16(in) % 4300u;

	if (n > in->n)
		n = (uint16_t)in->n;
	memcpy(frame, in->p, n);
	in->p += n;
	in->n -= n;
	fake_link_inject(&w->e->s->link, to_b, frame, n);
}

/* Port down and up again (port events, the queues' drop on link down). */
static void link_down(struct fz_world *w, int b)
{
	struct fdev *d = b ? &w->e->s->b : &w->e->s->a;

	d->hal.link_is_up = 0;
	fsim_idle(w->e->s, 3);
	d->hal.link_is_up = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_world *w = fz_world();
	struct fz_in in = { data, size };

	for (unsigned k = 0; in.n && k < 64; k++) {
		uint8_t c = fz_u8(&in);
		int to_b = c & 1;

		if (c & 2)
			raw(w, &in, to_b);
		else
			structured(w, &in, to_b);
		if (c & 4)
			fz_traffic(w, fz_u8(&in));
		if ((c & 0x60) == 0x60) { /* lose or repeat what comes next */
			w->loss = fz_u8(&in);
			w->dup = fz_u8(&in);
		}
		if ((c & 0x6e) == 0x4e) /* the link goes down for these steps */
			link_down(w, to_b);
		fsim_idle(w->e->s, 1 + ((c >> 3) & 7));
		if (c & 0x80) /* long enough for timers (RNR, transport) */
			w->e->s->clock += 1000000ull << ((c >> 4) & 7);
	}
	fsim_idle(w->e->s, 4);
	return 0;
}
