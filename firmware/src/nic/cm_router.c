/* SPDX-License-Identifier: MIT */
/*
 * The CM router: the firmware's QP1 (GSI).  IBTA vol. 1 ch. 12 puts the
 * CM protocol in the CM agents at both ends; here the agent of each host
 * context is its rdma_cm library, and this file is the trusted part the
 * kernel's ib_cm plays on a real host:
 *
 *  - RX: a CM MAD is queued for the context that listens on the REQ's or
 *    SIDR_REQ's ServiceID, or that owns the communication ID the message
 *    names as its remote (our local) ID.  Nobody else sees it.
 *  - TX: a context sends only MADs that carry its own communication ID;
 *    the firmware adds every header (the context cannot forge QP1's).
 *  - What has no owner is answered here as the spec says: a REQ for an
 *    unknown ServiceID gets REJ "invalid ServiceID" (12.6.7, reason 8), a
 *    SIDR_REQ a SIDR_REP "ServiceID not supported" (12.11.2), a DREQ for
 *    an unknown connection a DREP (12.9.4), a REP for a dead context a REJ
 *    "stale connection" (reason 10).
 *  - A dying context's armed MADs (DREQ / REJ) go out for it.
 */
#include <string.h>

#include "nic/cm.h"
#include "wire/be.h"

#define CM_OFF(x) (SNIC_CM_HDR_LEN + (x))

static uint16_t mad_attr(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

/* A CM MAD we accept from the wire or a host: base version 1, class CM
 * version 2, method Send (IBTA 13.4.3, 12.6.1). */
static bool mad_ok(const uint8_t *mad)
{
	uint16_t a = mad_attr(mad);

	return mad[0] == 1 && mad[1] == SNIC_MAD_CLASS_CM && mad[2] == 2 &&
	       mad[3] == SNIC_MAD_METHOD_SEND &&
	       a >= SNIC_CM_ATTR_REQ && a <= SNIC_CM_ATTR_APR;
}

/* ---------------------------------------------------------------------- */
/* Communication IDs and listeners.                                        */

static uint32_t cid_base(const struct snic_cm_tables *t, unsigned ctx)
{
	return (uint32_t)ctx << SNIC_CM_CID_CTX_SHIFT |
	       (uint32_t)t->gen[ctx] << SNIC_CM_CID_GEN_SHIFT;
}

/* The open context that owns communication ID cid, or -1. */
static int cid_owner(const struct snic_cm_tables *t, uint32_t cid)
{
	unsigned ctx = cid >> SNIC_CM_CID_CTX_SHIFT;

	if (ctx >= SNIC_MAX_CTX || !t->open[ctx])
		return -1;
	if ((cid & ~SNIC_CM_CID_HOST_MASK) != cid_base(t, ctx))
		return -1;
	return (int)ctx;
}

static struct snic_cm_listener *listener(struct snic_cm_tables *t, uint64_t sid)
{
	for (unsigned i = 0; i < SNIC_CM_MAX_LISTEN; i++)
		if (t->listen[i].in_use && t->listen[i].service_id == sid)
			return &t->listen[i];
	return NULL;
}

static int cm_listen(struct snic_cm_tables *t, unsigned ctx, uint64_t sid)
{
	struct snic_cm_listener *l = listener(t, sid);

	if (l)
		return l->ctx == ctx ? SNIC_ST_OK : SNIC_ST_BUSY;
	for (unsigned i = 0; i < SNIC_CM_MAX_LISTEN; i++) {
		if (!t->listen[i].in_use) {
			t->listen[i] = (struct snic_cm_listener){
				.service_id = sid, .ctx = (uint8_t)ctx, .in_use = true };
			return SNIC_ST_OK;
		}
	}
	return SNIC_ST_NOMEM;
}

static int cm_unlisten(struct snic_cm_tables *t, unsigned ctx, uint64_t sid)
{
	struct snic_cm_listener *l = listener(t, sid);

	if (!l)
		return SNIC_ST_NOENT;
	if (l->ctx != ctx)
		return SNIC_ST_PERM;
	l->in_use = false;
	return SNIC_ST_OK;
}

/* ---------------------------------------------------------------------- */
/* Sending on QP1.  Peers are 16-byte addresses as GIDs hold them: IPv6,
 * or IPv4 mapped; the family of the peer is the family of the frame
 * (RoCE v2, IBTA A17.4: IPv4 or IPv6 header, UDP 4791). */

/* The MAC a MAD to peer goes to: the neighbour the host named (nh, all
 * zero for none), else the NIC's route, else the peer itself; our own
 * address is the loopback (neigh_lookup_addr). */
static bool peer_mac(struct snic_nic *nic, const uint8_t peer[16],
		     const uint8_t nh[16], uint8_t hop[16], uint8_t mac[6])
{
	route_next_hop(&nic->core, peer, nh, hop);
	return neigh_lookup_addr(nic->neigh, hop, mac);
}

/* Can the NIC speak to peer: an IPv4 one always, an IPv6 one when the
 * NIC has an IPv6 address (its GID 1). */
static bool have_family(const struct snic_nic *nic, const uint8_t peer[16])
{
	static const uint8_t none[16];
	bool v4;

	gid_to_ipv4(peer, &v4);
	return v4 || memcmp(nic->core.cfg.ipv6, none, 16) != 0;
}

/* The IP layer of a MAD to peer; false when the NIC has no address of
 * that family. */
static bool gsi_addr(const struct snic_nic *nic, const uint8_t peer[16],
		     struct roce_hdrs *h)
{
	bool v4;
	uint32_t ip = gid_to_ipv4(peer, &v4);

	if (!have_family(nic, peer))
		return false;
	if (v4) {
		h->sip = nic->core.cfg.ipv4;
		h->dip = ip;
		return true;
	}
	h->ip6 = 1;
	memcpy(h->sip6, nic->core.cfg.ipv6, 16);
	memcpy(h->dip6, peer, 16);
	return true;
}

/* One UD SEND_ONLY from QP1 to QP1 of `peer`, to the MAC dmac, carrying
 * `mad`. */
static int gsi_xmit(struct snic_nic *nic, const uint8_t peer[16],
		    const uint8_t dmac[6], const uint8_t *mad)
{
	struct snic_cm_tables *t = nic->cm;
	struct roce_hdrs h;
	struct snic_pkt *p;

	memset(&h, 0, sizeof(h));
	if (!gsi_addr(nic, peer, &h))
		return SNIC_ST_NOTSUP;
	memcpy(h.dmac, dmac, 6);
	memcpy(h.smac, nic->core.cfg.mac, 6);
	h.ttl = 64;
	h.sport = 0xc000 | SNIC_GSI_QPN; /* A17.5.3: any source port */
	h.opcode = ROCE_UD_SEND_ONLY;
	h.pkey = ROCE_DEFAULT_PKEY;
	h.dqpn = SNIC_GSI_QPN;
	h.psn = t->psn++ & ROCE_PSN_MASK;
	h.deth_qkey = SNIC_GSI_QKEY;
	h.deth_sqpn = SNIC_GSI_QPN;
	p = pkt_build(nic, &h, mad, SNIC_CM_MAD_SIZE);
	if (!p) {
		CNT_INC(&nic->core, tx_no_buffer);
		return SNIC_ST_NOMEM;
	}
	core_tx(&nic->core, p);
	CNT_INC(&nic->core, cm_mads_sent);
	if (mad_attr(mad) == SNIC_CM_ATTR_REJ)
		CNT_INC(&nic->core, cm_rej_sent);
	return SNIC_ST_OK;
}

/* A MAD to `peer` through the neighbour nh (all zero: the NIC's routes). */
static int gsi_send(struct snic_nic *nic, const uint8_t peer[16],
		    const uint8_t nh[16], const uint8_t *mad)
{
	uint8_t dmac[6], hop[16];

	if (!have_family(nic, peer))
		return SNIC_ST_NOTSUP;
	if (!peer_mac(nic, peer, nh, hop, dmac)) {
		CNT_INC(&nic->core, tx_drop_no_neigh);
		neigh_resolve_addr(nic->neigh, hop);
		return SNIC_ST_NOENT;
	}
	return gsi_xmit(nic, peer, dmac, mad);
}

/* The source of a received frame as a 16-byte address. */
static void src_addr(const struct roce_hdrs *h, uint8_t a[16])
{
	if (h->ip6)
		memcpy(a, h->sip6, 16);
	else
		ipv4_to_gid(h->sip, a);
}

/* A reply of the firmware's own goes back the way the request came (to
 * its source MAC: the peer, or the router it came through; IPv4 or IPv6
 * as it came), as no host route is known for it. */
static void gsi_reply(struct snic_nic *nic, const struct roce_hdrs *in,
		      const uint8_t *mad)
{
	uint8_t peer[16];

	src_addr(in, peer);
	if (gsi_xmit(nic, peer, in->smac, mad) == SNIC_ST_OK)
		CNT_INC(&nic->core, cm_fw_replies);
}

/* A reply built by the firmware: the received MAD's header (TID echoed,
 * IBTA 13.4.6.3) with a new attribute and message. */
static void reply_hdr(uint8_t *out, const uint8_t *in, uint16_t attr)
{
	memset(out, 0, SNIC_CM_MAD_SIZE);
	memcpy(out, in, SNIC_CM_HDR_LEN);
	out[4] = out[5] = 0;        /* status */
	out[16] = (uint8_t)(attr >> 8);
	out[17] = (uint8_t)attr;
}

/* REJ for a message nobody here takes (12.6.7): our ID is `local` (0 if
 * none), the peer's `remote`; `msg` is what is rejected (0 REQ, 1 REP). */
static void reply_rej(struct snic_nic *nic, const struct roce_hdrs *h, const uint8_t *in,
		      uint32_t local, uint32_t remote, uint8_t msg, uint16_t reason)
{
	uint8_t m[SNIC_CM_MAD_SIZE];

	reply_hdr(m, in, SNIC_CM_ATTR_REJ);
	be32_put(m + CM_OFF(0), local);
	be32_put(m + CM_OFF(4), remote);
	m[CM_OFF(8)] = (uint8_t)(msg << 6);
	m[CM_OFF(10)] = (uint8_t)(reason >> 8);
	m[CM_OFF(11)] = (uint8_t)reason;
	gsi_reply(nic, h, m);
}

static void reply_drep(struct snic_nic *nic, const struct roce_hdrs *h,
		       const uint8_t *dreq)
{
	uint8_t m[SNIC_CM_MAD_SIZE];

	reply_hdr(m, dreq, SNIC_CM_ATTR_DREP);
	memcpy(m + CM_OFF(0), dreq + CM_OFF(4), 4);
	memcpy(m + CM_OFF(4), dreq + CM_OFF(0), 4);
	gsi_reply(nic, h, m);
}

/* SIDR_REP status 1: ServiceID not supported (12.11.2, table 121). */
static void reply_sidr_unsupported(struct snic_nic *nic, const struct roce_hdrs *h,
				   const uint8_t *req)
{
	uint8_t m[SNIC_CM_MAD_SIZE];

	reply_hdr(m, req, SNIC_CM_ATTR_SIDR_REP);
	memcpy(m + CM_OFF(0), req + CM_OFF(0), 4);   /* RequestID */
	m[CM_OFF(4)] = 1;
	memcpy(m + CM_OFF(12), req + CM_OFF(8), 8);  /* ServiceID */
	gsi_reply(nic, h, m);
}

/* ---------------------------------------------------------------------- */
/* Receiving on QP1.                                                       */

static void inbox_put(struct snic_nic *nic, unsigned ctx, const struct roce_hdrs *h)
{
	struct snic_cm_tables *t = nic->cm;
	struct snic_ctx_slot *s;

	if (t->queued[ctx] >= SNIC_CM_INBOX_PER_CTX)
		goto full;
	for (unsigned i = 0; i < SNIC_CM_INBOX; i++) {
		struct snic_cm_inbox_ent *e = &t->inbox[i];

		if (e->in_use)
			continue;
		e->in_use = true;
		e->ctx = (uint8_t)ctx;
		e->seq = t->seq++;
		src_addr(h, e->peer);
		e->peer_qpn = h->deth_sqpn;
		memcpy(e->mad, h->payload, SNIC_CM_MAD_SIZE);
		t->queued[ctx]++;
		s = core_ctx_slot(&nic->core, ctx);
		atomic_fetch_add_explicit(&s->cm_pi, 1, memory_order_release);
		nic->core.ops->notify_host(nic->core.hal_ctx, &s->cm_pi);
		return;
	}
full:
	/* the sender's CM retries (12.6.1): dropping is safe */
	CNT_INC(&nic->core, cm_drop_inbox_full);
}

/* Where a message that is not a request goes: the owner of the ID it
 * names as ours (12.6: the RemoteCommID; SIDR_REP: the RequestID). */
static uint32_t our_cid(const uint8_t *mad)
{
	if (mad_attr(mad) == SNIC_CM_ATTR_SIDR_REP)
		return be32_get(mad + CM_OFF(0));
	return be32_get(mad + CM_OFF(4));
}

static void rx_unowned(struct snic_nic *nic, const struct roce_hdrs *h)
{
	const uint8_t *mad = h->payload;

	switch (mad_attr(mad)) {
	case SNIC_CM_ATTR_REQ:
		reply_rej(nic, h, mad, 0, be32_get(mad + CM_OFF(0)), 0, 8);
		return;
	case SNIC_CM_ATTR_SIDR_REQ:
		reply_sidr_unsupported(nic, h, mad);
		return;
	case SNIC_CM_ATTR_DREQ:
		reply_drep(nic, h, mad);
		return;
	case SNIC_CM_ATTR_REP:
		reply_rej(nic, h, mad, be32_get(mad + CM_OFF(4)),
			  be32_get(mad + CM_OFF(0)), 1, 10);
		return;
	default:
		CNT_INC(&nic->core, cm_drop_no_owner);
	}
}

void cm_rx(struct snic_nic *nic, const struct roce_hdrs *h)
{
	struct snic_cm_tables *t = nic->cm;
	const uint8_t *mad = h->payload;
	const struct snic_cm_listener *l;
	uint16_t attr;
	int owner;

	/* GSI: UD SEND with the well-known Q_Key (IBTA 13.5.1), one MAD,
	 * over IPv4 or IPv6 (A17.4) */
	if (h->opcode != ROCE_UD_SEND_ONLY ||
	    h->deth_qkey != SNIC_GSI_QKEY ||
	    h->payload_len != SNIC_CM_MAD_SIZE || !mad_ok(mad)) {
		CNT_INC(&nic->core, cm_drop_bad_mad);
		return;
	}
	CNT_INC(&nic->core, cm_mads_recv);
	attr = mad_attr(mad);
	if (attr == SNIC_CM_ATTR_REJ)
		CNT_INC(&nic->core, cm_rej_recv);
	if (attr == SNIC_CM_ATTR_REQ || attr == SNIC_CM_ATTR_SIDR_REQ) {
		l = listener(t, be64_get(mad + CM_OFF(8)));
		owner = l && t->open[l->ctx] ? l->ctx : -1;
	} else {
		owner = cid_owner(t, our_cid(mad));
	}
	if (owner < 0)
		rx_unowned(nic, h);
	else
		inbox_put(nic, (unsigned)owner, h);
}

/* ---------------------------------------------------------------------- */
/* Commands.                                                               */

/* May context ctx send this MAD?  Its own ID in the message, or for a
 * SIDR_REP a ServiceID it listens on. */
static bool may_send(struct snic_cm_tables *t, unsigned ctx, const uint8_t *mad)
{
	const struct snic_cm_listener *l;

	if (!mad_ok(mad))
		return false;
	if (mad_attr(mad) == SNIC_CM_ATTR_SIDR_REP) {
		l = listener(t, be64_get(mad + CM_OFF(12)));
		return l && l->ctx == ctx;
	}
	return cid_owner(t, be32_get(mad + CM_OFF(0))) == (int)ctx;
}

static bool peer_addr_ok(const uint8_t a[16]);

static int cm_send6(struct snic_nic *nic, unsigned ctx, const struct snic_cm_mad6 *m)
{
	if (!may_send(nic->cm, ctx, m->mad)) {
		CNT_INC(&nic->core, cm_send_refused);
		return SNIC_ST_PERM;
	}
	if (!peer_addr_ok(m->peer) ||
	    !route_next_hop_ok(&nic->core, m->peer, m->next_hop))
		return SNIC_ST_INVAL;
	if (m->flags & SNIC_CM_F_RETRY)
		CNT_INC(&nic->core, cm_mads_retried);
	return gsi_send(nic, m->peer, m->next_hop, m->mad);
}

static int cm_recv6(struct snic_nic *nic, unsigned ctx, struct snic_cm_mad6 *m)
{
	struct snic_cm_tables *t = nic->cm;
	struct snic_cm_inbox_ent *best = NULL;

	for (unsigned i = 0; i < SNIC_CM_INBOX; i++) {
		struct snic_cm_inbox_ent *e = &t->inbox[i];

		if (e->in_use && e->ctx == ctx &&
		    (!best || (int32_t)(e->seq - best->seq) < 0))
			best = e;
	}
	if (!best)
		return SNIC_ST_NOENT;
	memset(m, 0, sizeof(*m));
	memcpy(m->peer, best->peer, 16);
	m->peer_qpn = best->peer_qpn;
	memcpy(m->mad, best->mad, SNIC_CM_MAD_SIZE);
	best->in_use = false;
	t->queued[ctx]--;
	return SNIC_ST_OK;
}

/* The IPv4 commands: their 32-bit addresses as mapped 16-byte ones (a
 * next hop of 0 stays "none", all zero). */
static void mad4_to_6(const struct snic_cm_mad *m, struct snic_cm_mad6 *m6)
{
	memset(m6, 0, sizeof(*m6));
	ipv4_to_gid(m->peer_ip, m6->peer);
	if (m->next_hop)
		ipv4_to_gid(m->next_hop, m6->next_hop);
	m6->flags = m->flags;
	m6->cid = m->cid;
	memcpy(m6->mad, m->mad, SNIC_CM_MAD_SIZE);
}

static int cm_send(struct snic_nic *nic, unsigned ctx, const struct snic_cm_mad *m)
{
	struct snic_cm_mad6 m6;

	mad4_to_6(m, &m6);
	return cm_send6(nic, ctx, &m6);
}

/* CM_RECV names an IPv4 peer: a MAD from an IPv6 one is dropped
 * (counted) on the way, for a context that never asks CM_RECV6. */
static int cm_recv(struct snic_nic *nic, unsigned ctx, struct snic_cm_mad *m)
{
	struct snic_cm_mad6 m6;
	uint32_t ip;
	bool v4;

	for (;;) {
		int st = cm_recv6(nic, ctx, &m6);

		if (st != SNIC_ST_OK)
			return st;
		ip = gid_to_ipv4(m6.peer, &v4);
		if (v4)
			break;
		CNT_INC(&nic->core, cm_drop_bad_mad);
	}
	memset(m, 0, sizeof(*m));
	m->peer_ip = ip;
	m->peer_qpn = m6.peer_qpn;
	memcpy(m->mad, m6.mad, SNIC_CM_MAD_SIZE);
	return SNIC_ST_OK;
}

static bool all_zero(const uint8_t *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static struct snic_cm_armed *armed_find(struct snic_cm_tables *t, unsigned ctx,
					uint32_t cid)
{
	for (unsigned i = 0; i < SNIC_CM_MAX_ARMED; i++)
		if (t->armed[i].in_use && t->armed[i].ctx == ctx &&
		    t->armed[i].cid == cid)
			return &t->armed[i];
	return NULL;
}

/* Arm (or, with an all-zero MAD, disarm) the MAD sent for connection
 * `cid` if the context dies.  The MAD must be one the context may send. */
static int cm_arm6(struct snic_nic *nic, unsigned ctx, const struct snic_cm_mad6 *m)
{
	struct snic_cm_tables *t = nic->cm;
	struct snic_cm_armed *a = armed_find(t, ctx, m->cid);

	if (cid_owner(t, m->cid) != (int)ctx)
		return SNIC_ST_PERM;
	if (all_zero(m->mad, SNIC_CM_MAD_SIZE)) {
		if (a)
			a->in_use = false;
		return SNIC_ST_OK;
	}
	if (!may_send(t, ctx, m->mad))
		return SNIC_ST_PERM;
	if (!peer_addr_ok(m->peer) ||
	    !route_next_hop_ok(&nic->core, m->peer, m->next_hop))
		return SNIC_ST_INVAL;
	for (unsigned i = 0; !a && i < SNIC_CM_MAX_ARMED; i++)
		if (!t->armed[i].in_use)
			a = &t->armed[i];
	if (!a)
		return SNIC_ST_NOMEM;
	*a = (struct snic_cm_armed){ .cid = m->cid, .ctx = (uint8_t)ctx,
				     .in_use = true };
	memcpy(a->peer, m->peer, 16);
	memcpy(a->next_hop, m->next_hop, 16);
	memcpy(a->mad, m->mad, SNIC_CM_MAD_SIZE);
	return SNIC_ST_OK;
}

static int cm_arm(struct snic_nic *nic, unsigned ctx, const struct snic_cm_mad *m)
{
	struct snic_cm_mad6 m6;

	mad4_to_6(m, &m6);
	return cm_arm6(nic, ctx, &m6);
}

/* An address a CM peer can have: unicast IPv6, or a mapped IPv4 address
 * that is not 0, broadcast or loopback. */
static bool peer_addr_ok(const uint8_t a[16])
{
	bool v4;
	uint32_t ip = gid_to_ipv4(a, &v4);

	if (!v4)
		return gid_is_ip6_unicast(a);
	return ip != 0 && ip != 0xffffffffu && (ip >> 24) != 127;
}

static int cm_resolve6(struct snic_nic *nic, const struct snic_cm_resolve6 *in,
		       struct snic_cm_resolve6 *out)
{
	static const uint8_t none[16];
	uint8_t addr[16], hop[16];
	bool ask = in->send_req != 0;

	memcpy(addr, in->addr, 16); /* in and out may be one buffer */
	memset(out, 0, sizeof(*out));
	memcpy(out->addr, addr, 16);
	if (!peer_addr_ok(addr))
		return SNIC_ST_INVAL;
	if (!have_family(nic, addr))
		return SNIC_ST_NOTSUP;
	if (peer_mac(nic, addr, none, hop, out->mac))
		return SNIC_ST_OK;
	if (ask)
		neigh_resolve_addr(nic->neigh, hop);
	return SNIC_ST_NOENT;
}

static int cm_resolve(struct snic_nic *nic, const struct snic_cm_resolve *in,
		      struct snic_cm_resolve *out)
{
	struct snic_cm_resolve6 r6 = { .send_req = in->send_arp };
	uint32_t ip = in->ip;
	int st;

	ipv4_to_gid(ip, r6.addr);
	st = cm_resolve6(nic, &r6, &r6);
	memset(out, 0, sizeof(*out));
	out->ip = ip;
	memcpy(out->mac, r6.mac, 6);
	return st;
}

static int cm_open(struct snic_cm_tables *t, unsigned ctx, struct snic_cm_open *o)
{
	t->gen[ctx] = (uint8_t)((t->gen[ctx] + 1) & SNIC_CM_CID_GEN_MASK);
	t->open[ctx] = true;
	o->cid_base = cid_base(t, ctx);
	o->cid_mask = SNIC_CM_CID_HOST_MASK;
	return SNIC_ST_OK;
}

int cm_cmd(struct snic_nic *nic, unsigned ctx, uint16_t op,
	   const uint8_t *in, uint8_t *out)
{
	struct snic_cm_tables *t = nic->cm;
	const struct snic_cm_listen *li = (const void *)in;

	if (op != SNIC_CMD_CM_OPEN && !t->open[ctx])
		return SNIC_ST_INVAL;
	switch (op) {
	case SNIC_CMD_CM_OPEN:
		return cm_open(t, ctx, (void *)out);
	case SNIC_CMD_CM_LISTEN:
		return cm_listen(t, ctx, li->service_id);
	case SNIC_CMD_CM_UNLISTEN:
		return cm_unlisten(t, ctx, li->service_id);
	case SNIC_CMD_CM_SEND:
		return cm_send(nic, ctx, (const void *)in);
	case SNIC_CMD_CM_RECV:
		return cm_recv(nic, ctx, (void *)out);
	case SNIC_CMD_CM_ARM:
		return cm_arm(nic, ctx, (const void *)in);
	case SNIC_CMD_CM_RESOLVE:
		return cm_resolve(nic, (const void *)in, (void *)out);
	case SNIC_CMD_CM_SEND6:
		return cm_send6(nic, ctx, (const void *)in);
	case SNIC_CMD_CM_RECV6:
		return cm_recv6(nic, ctx, (void *)out);
	case SNIC_CMD_CM_ARM6:
		return cm_arm6(nic, ctx, (const void *)in);
	case SNIC_CMD_CM_RESOLVE6:
		return cm_resolve6(nic, (const void *)in, (void *)out);
	case SNIC_CMD_CM_NOTE:
		CNT_ADD(&nic->core, cm_timeouts,
			((const struct snic_cm_note *)(const void *)in)->timeouts);
		return SNIC_ST_OK;
	default:
		return SNIC_ST_BADOP;
	}
}

void cm_ctx_gone(struct snic_nic *nic, unsigned ctx)
{
	struct snic_cm_tables *t = nic->cm;

	if (ctx >= SNIC_MAX_CTX || !t->open[ctx])
		return;
	for (unsigned i = 0; i < SNIC_CM_MAX_ARMED; i++) {
		struct snic_cm_armed *a = &t->armed[i];

		if (a->in_use && a->ctx == ctx) {
			gsi_send(nic, a->peer, a->next_hop, a->mad);
			a->in_use = false;
		}
	}
	for (unsigned i = 0; i < SNIC_CM_MAX_LISTEN; i++)
		if (t->listen[i].in_use && t->listen[i].ctx == ctx)
			t->listen[i].in_use = false;
	for (unsigned i = 0; i < SNIC_CM_INBOX; i++)
		if (t->inbox[i].in_use && t->inbox[i].ctx == ctx)
			t->inbox[i].in_use = false;
	t->queued[ctx] = 0;
	t->open[ctx] = false;
}

/* The statistics area names IPv4 peers (an IPv6 one shows as 0). */
static uint32_t peer_ipv4(const uint8_t a[16])
{
	bool v4;
	uint32_t ip = gid_to_ipv4(a, &v4);

	return v4 ? ip : 0;
}

void cm_stats(struct snic_nic *nic, struct snic_stats *st)
{
	struct snic_cm_tables *t = nic->cm;
	uint32_t nl = 0, nc = 0;

	for (unsigned i = 0; i < SNIC_CM_MAX_LISTEN && nl < SNIC_STATS_CM_LISTEN; i++) {
		const struct snic_cm_listener *l = &t->listen[i];

		if (!l->in_use)
			continue;
		st->cm_listen[nl++] = (struct snic_stats_cm_listen){
			.service_id = l->service_id, .ctx = l->ctx,
			.pid = atomic_load_explicit(&core_ctx_slot(&nic->core, l->ctx)->owner_pid,
						    memory_order_relaxed) };
	}
	for (unsigned i = 0; i < SNIC_CM_MAX_ARMED && nc < SNIC_STATS_CM_CONN; i++) {
		const struct snic_cm_armed *a = &t->armed[i];

		if (!a->in_use)
			continue;
		st->cm_conn[nc++] = (struct snic_stats_cm_conn){
			.cid = a->cid, .peer_ip = peer_ipv4(a->peer), .ctx = a->ctx,
			.pid = atomic_load_explicit(&core_ctx_slot(&nic->core, a->ctx)->owner_pid,
						    memory_order_relaxed) };
	}
	st->cm_nlisten = nl;
	st->cm_nconn = nc;
}
