/* SPDX-License-Identifier: MIT */
/*
 * UD multicast groups (ibv_attach_mcast / ibv_detach_mcast): a bounded
 * table of IPv4 multicast addresses, each with the QPs of this NIC that
 * joined it.  The RX path (transport/ud_mcast.c) hands a datagram for a
 * group to each member; a frame for a group nobody here joined is
 * dropped and counted there.  Groups are the NIC's, members are QPs: a
 * context attaches and detaches only its own QPs, and a destroyed QP
 * leaves every group (qp_destroy).
 */
#include <string.h>

#include "objects/objects.h"

_Static_assert(SNIC_MAX_MCAST_QP_ATTACH <= 8, "block_self is an 8-bit map");

static struct snic_mcast_grp *grp_find(struct snic_nic *nic, uint32_t ip)
{
	for (uint32_t i = 0; i < SNIC_MAX_MCAST_GRP; i++)
		if (nic->mcast[i].ip == ip)
			return &nic->mcast[i];
	return NULL;
}

static int member_idx(const struct snic_mcast_grp *g, uint32_t qpn)
{
	for (int i = 0; i < g->n; i++)
		if (g->qpn[i] == qpn)
			return i;
	return -1;
}

/* The command's QP (the context's, UD) and group address; INVAL for a
 * GID that is not IPv4 multicast (IPv6 multicast GIDs included: the
 * port has no IPv6 address), as the kernel's ib_attach_mcast answers
 * for a non-multicast GID or a non-UD QP. */
static int mcast_args(struct snic_nic *nic, unsigned ctx,
		      const struct snic_cmd_mcast *in, uint32_t *ip)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, in->qpn);
	bool v4;

	if (!qp)
		return SNIC_ST_NOENT;
	*ip = gid_to_ipv4(in->gid, &v4);
	if (qp->type != SNIC_QPT_UD || !v4 || !ipv4_is_mcast(*ip) ||
	    (in->flags & ~SNIC_MCAST_F_BLOCK_SELF))
		return SNIC_ST_INVAL;
	return SNIC_ST_OK;
}

static void member_set_block(struct snic_mcast_grp *g, int i, bool block)
{
	g->block_self = (uint8_t)(block ? g->block_self | (1u << i)
				  : g->block_self & ~(1u << i));
}

int mcast_attach(struct snic_nic *nic, unsigned ctx,
		 const struct snic_cmd_mcast *in)
{
	struct snic_mcast_grp *g;
	uint32_t ip;
	int st = mcast_args(nic, ctx, in, &ip);

	if (st)
		return st;
	g = grp_find(nic, ip);
	if (g && member_idx(g, in->qpn) >= 0)
		return SNIC_ST_OK; /* attaching twice is attaching once */
	if (!g) {
		g = grp_find(nic, 0);
		if (!g)
			return SNIC_ST_NOMEM;
		memset(g, 0, sizeof(*g));
		g->ip = ip;
	}
	if (g->n == SNIC_MAX_MCAST_QP_ATTACH)
		return SNIC_ST_NOMEM;
	member_set_block(g, g->n, in->flags & SNIC_MCAST_F_BLOCK_SELF);
	g->qpn[g->n++] = in->qpn;
	return SNIC_ST_OK;
}

/* Member i leaves g (the last member takes its place); an empty group
 * frees its slot. */
static void member_remove(struct snic_mcast_grp *g, int i)
{
	int last = g->n - 1;

	g->qpn[i] = g->qpn[last];
	member_set_block(g, i, (g->block_self >> last) & 1u);
	member_set_block(g, last, false);
	g->n--;
	if (g->n == 0)
		g->ip = 0;
}

int mcast_detach(struct snic_nic *nic, unsigned ctx,
		 const struct snic_cmd_mcast *in)
{
	struct snic_mcast_grp *g;
	uint32_t ip;
	int i, st = mcast_args(nic, ctx, in, &ip);

	if (st)
		return st;
	g = grp_find(nic, ip);
	i = g ? member_idx(g, in->qpn) : -1;
	if (i < 0)
		return SNIC_ST_NOENT;
	member_remove(g, i);
	return SNIC_ST_OK;
}

void mcast_qp_gone(struct snic_nic *nic, uint32_t qpn)
{
	for (uint32_t k = 0; k < SNIC_MAX_MCAST_GRP; k++) {
		struct snic_mcast_grp *g = &nic->mcast[k];
		int i = g->ip ? member_idx(g, qpn) : -1;

		if (i >= 0)
			member_remove(g, i);
	}
}

const struct snic_mcast_grp *mcast_group(const struct snic_nic *nic,
					 uint32_t ip)
{
	for (uint32_t i = 0; i < SNIC_MAX_MCAST_GRP; i++)
		if (nic->mcast[i].ip == ip && nic->mcast[i].n)
			return &nic->mcast[i];
	return NULL;
}
