/* SPDX-License-Identifier: MIT */
/*
 * Flow steering (ibv_create_flow): a bounded table of rules, each a
 * masked match over a received frame's Ethernet, IPv4 and UDP/TCP
 * headers that names a raw packet QP.  The RX path asks flow_match first
 * for every frame (nic/rx.c); what no rule takes goes on to the RoCE and
 * ARP classification unchanged.  The NIC's own traffic is protected
 * (hostif.h): ARP is never taken, a RoCE v2 frame only by a rule that
 * names UDP destination port 4791 exactly.
 */
#include <string.h>

#include "objects/objects.h"

#define ETH_HLEN        14u
#define ETHERTYPE_IPV4  0x0800u
#define ETHERTYPE_ARP   0x0806u
#define IPPROTO_TCP_    6u
#define IPPROTO_UDP_    17u
#define ROCE_V2_PORT    4791u

/* What a frame offers to match: its fields in network order, and which
 * layers it has. */
struct flow_key {
	struct snic_flow_rule f;
	uint16_t layers;
};

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* IPv4 and its UDP/TCP ports (first fragments only: later ones carry
 * no L4 header). */
static void key_l3(struct flow_key *k, const uint8_t *ip, uint32_t len)
{
	uint32_t ihl;

	if (len < 20 || (ip[0] >> 4) != 4 || (ihl = (ip[0] & 0xfu) * 4u) < 20 ||
	    ihl > len)
		return;
	k->layers |= SNIC_FLOW_L_IPV4;
	memcpy(&k->f.sip, ip + 12, 4);
	memcpy(&k->f.dip, ip + 16, 4);
	if ((be16_at(ip + 6) & 0x1fffu) != 0 || len - ihl < 4)
		return;
	if (ip[9] == IPPROTO_UDP_)
		k->layers |= SNIC_FLOW_L_UDP;
	else if (ip[9] == IPPROTO_TCP_)
		k->layers |= SNIC_FLOW_L_TCP;
	else
		return;
	memcpy(&k->f.sport, ip + ihl, 2);
	memcpy(&k->f.dport, ip + ihl + 2, 2);
}

/* False for a frame no rule may see (too short, ARP). */
static bool key_of(struct flow_key *k, const uint8_t *f, uint32_t len)
{
	memset(k, 0, sizeof(*k));
	if (len < ETH_HLEN || be16_at(f + 12) == ETHERTYPE_ARP)
		return false;
	k->layers = SNIC_FLOW_L_ETH;
	memcpy(k->f.dmac, f, 6);
	memcpy(k->f.smac, f + 6, 6);
	memcpy(&k->f.ether_type, f + 12, 2);
	if (be16_at(f + 12) == ETHERTYPE_IPV4)
		key_l3(k, f + ETH_HLEN, len - ETH_HLEN);
	return true;
}

static bool rule_names_roce(const struct snic_flow *r)
{
	return (r->layers & SNIC_FLOW_L_UDP) && r->mask.dport == 0xffffu &&
	       be16_at((const uint8_t *)&r->val.dport) == ROCE_V2_PORT;
}

static bool rule_matches(const struct snic_flow *r, const struct flow_key *k,
			 bool roce)
{
	const uint8_t *kb = (const uint8_t *)&k->f;
	const uint8_t *mb = (const uint8_t *)&r->mask;
	const uint8_t *vb = (const uint8_t *)&r->val;

	if ((r->layers & k->layers) != r->layers || (roce && !rule_names_roce(r)))
		return false;
	for (size_t i = 0; i < sizeof(k->f); i++)
		if ((kb[i] & mb[i]) != vb[i])
			return false;
	return true;
}

struct snic_qp *flow_match(struct snic_nic *nic, const uint8_t *frame,
			   uint32_t len)
{
	const struct snic_flow *best = NULL;
	struct flow_key k;
	bool roce;

	if (!key_of(&k, frame, len))
		return NULL;
	roce = (k.layers & SNIC_FLOW_L_UDP) &&
	       be16_at((const uint8_t *)&k.f.dport) == ROCE_V2_PORT;
	for (uint32_t i = 0; i < SNIC_MAX_FLOWS; i++) {
		const struct snic_flow *r = &nic->flows[i];

		if (!r->in_use || !rule_matches(r, &k, roce))
			continue;
		if (!best || r->priority < best->priority ||
		    (r->priority == best->priority && r->seq < best->seq))
			best = r;
	}
	return best ? qp_by_qpn(nic, best->qpn) : NULL;
}

static bool flow_args_ok(const struct snic_cmd_flow *in)
{
	const uint16_t l4 = SNIC_FLOW_L_UDP | SNIC_FLOW_L_TCP;

	if (in->layers == 0 || (in->layers & ~(SNIC_FLOW_L_ETH | SNIC_FLOW_L_IPV4 | l4)) ||
	    (in->layers & l4) == l4)
		return false;
	/* a port needs its IPv4 header (the host adds the layer) */
	return !(in->layers & l4) || (in->layers & SNIC_FLOW_L_IPV4);
}

int flow_create(struct snic_nic *nic, unsigned ctx,
		const struct snic_cmd_flow *in, uint32_t *handle)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, in->qpn);
	const uint8_t *mb = (const uint8_t *)&in->mask;
	uint8_t *vb;
	struct snic_flow *r;
	uint32_t i;

	if (!qp)
		return SNIC_ST_NOENT;
	if (qp->type != SNIC_QPT_RAW_PACKET || !flow_args_ok(in))
		return SNIC_ST_INVAL;
	i = OBJ_FREE_SLOT(nic->flows);
	if (i == SNIC_MAX_FLOWS)
		return SNIC_ST_NOMEM;
	r = &nic->flows[i];
	obj_claim(r, sizeof(*r), ctx);
	r->qpn = in->qpn;
	r->priority = in->priority;
	r->layers = in->layers;
	r->seq = nic->sh->flow_seq++;
	r->mask = in->mask;
	r->val = in->val;
	vb = (uint8_t *)&r->val;
	for (size_t b = 0; b < sizeof(r->val); b++)
		vb[b] &= mb[b]; /* bits outside the mask never decide */
	nic->sh->nflows++;
	*handle = obj_handle(&r->obj, i);
	return SNIC_ST_OK;
}

int flow_destroy(struct snic_nic *nic, unsigned ctx, uint32_t handle)
{
	struct snic_flow *r = OBJ_LOOKUP(nic->flows, ctx, handle, NULL);
	int st = obj_release(r ? &r->obj : NULL);

	if (st == SNIC_ST_OK)
		nic->sh->nflows--;
	return st;
}

void flow_qp_gone(struct snic_nic *nic, uint32_t qpn)
{
	for (uint32_t i = 0; i < SNIC_MAX_FLOWS; i++)
		if (nic->flows[i].in_use && nic->flows[i].qpn == qpn) {
			nic->flows[i].in_use = false;
			nic->sh->nflows--;
		}
}
