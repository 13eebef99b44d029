/* SPDX-License-Identifier: MIT */
/*
 * ibv_modify_qp: the transition checked against the state table
 * (qp_states.c), attribute values checked, then applied.
 */
#include <string.h>

#include "objects/objects.h"

#define M(x) SNIC_QP_##x

/* RoCE needs a GRH; the source GID decides the family (GID 0: IPv4,
 * GID 1: IPv6, when the port has an IPv6 address) and the destination
 * must be of the same family: an IPv4-mapped GID, or a unicast IPv6 one
 * (wire.h). */
static int av_ok(const struct snic_nic *nic, const struct snic_qp_attr *a)
{
	bool v4;

	if (!a->is_global || a->sgid_index > SNIC_GID_IPV6)
		return SNIC_ST_INVAL;
	gid_to_ipv4(a->dgid, &v4);
	if (a->sgid_index == SNIC_GID_IPV4)
		return v4 ? SNIC_ST_OK : SNIC_ST_INVAL;
	if (!wire_is_my_ip6(&nic->core, nic->core.cfg.ipv6) ||
	    !gid_is_ip6_unicast(a->dgid))
		return SNIC_ST_INVAL;
	return SNIC_ST_OK;
}

/* Attribute values (IBTA 11.2.4.2 ranges, our device limits). */
static int attr_values_ok(const struct snic_nic *nic, uint32_t mask,
			  const struct snic_qp_attr *a)
{
	if ((mask & M(PORT)) && a->port_num != 1)
		return SNIC_ST_INVAL;
	if ((mask & M(PKEY_INDEX)) && a->pkey_index != 0)
		return SNIC_ST_INVAL;
	if ((mask & M(PATH_MTU)) &&
	    (a->path_mtu < 1 || a->path_mtu > nic->core.active_mtu_enum))
		return SNIC_ST_INVAL;
	if ((mask & M(MAX_DEST_RD_ATOMIC)) && a->max_dest_rd_atomic > SNIC_MAX_RD_ATOM)
		return SNIC_ST_INVAL;
	if ((mask & M(MAX_QP_RD_ATOMIC)) && a->max_rd_atomic > SNIC_MAX_RD_ATOM)
		return SNIC_ST_INVAL;
	if ((mask & M(TIMEOUT)) && a->timeout > 31)
		return SNIC_ST_INVAL;
	if ((mask & M(RETRY_CNT)) && a->retry_cnt > 7)
		return SNIC_ST_INVAL;
	if ((mask & M(RNR_RETRY)) && a->rnr_retry > 7)
		return SNIC_ST_INVAL;
	if ((mask & M(MIN_RNR_TIMER)) && a->min_rnr_timer > 31)
		return SNIC_ST_INVAL;
	if ((mask & M(DEST_QPN)) && a->dest_qp_num > ROCE_QPN_MASK)
		return SNIC_ST_INVAL;
	if ((mask & M(ACCESS_FLAGS)) && (a->qp_access_flags & ~0xfu))
		return SNIC_ST_INVAL;
	if (mask & M(ALT_PATH))
		return SNIC_ST_NOTSUP; /* automatic path migration */
	if (mask & M(AV))
		return av_ok(nic, a);
	return SNIC_ST_OK;
}

/* The address vector: the peer's IPv4 or IPv6 address from its GID; the
 * MAC of its next hop (the host's, or the NIC's route: wire/route.c) from
 * the neighbour table (asked for when unknown). */
static void apply_av(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_qp_attr *a, const uint8_t *host_nh)
{
	struct snic_qp_attr *s = &qp->attr;
	bool v4;

	memcpy(s->dgid, a->dgid, 16);
	s->flow_label = a->flow_label;
	s->sgid_index = a->sgid_index;
	s->hop_limit = a->hop_limit;
	s->traffic_class = a->traffic_class;
	s->is_global = a->is_global;
	s->sl = a->sl;
	s->dlid = a->dlid;
	s->static_rate = a->static_rate;
	s->src_path_bits = a->src_path_bits;
	qp->dip = gid_to_ipv4(a->dgid, &v4); /* family checked by av_ok */
	qp->ip6 = !v4;
	if (qp->ip6)
		qp->dip = 0;
	route_next_hop(&nic->core, s->dgid, host_nh, qp->nh);
	qp->dmac_valid = neigh_lookup_addr(nic->neigh, qp->nh, qp->dmac);
	qp_path_changed(qp);
	if (!qp->dmac_valid)
		neigh_resolve_addr(nic->neigh, qp->nh);
}

static void apply_attrs(struct snic_nic *nic, struct snic_qp *qp,
			uint32_t mask, const struct snic_qp_attr *a,
			const uint8_t *host_nh)
{
	struct snic_qp_attr *s = &qp->attr;

	if (mask & M(ACCESS_FLAGS))
		s->qp_access_flags = a->qp_access_flags;
	if (mask & M(PKEY_INDEX))
		s->pkey_index = a->pkey_index;
	if (mask & M(PORT))
		s->port_num = a->port_num;
	if (mask & M(PATH_MTU)) {
		s->path_mtu = a->path_mtu;
		qp->mtu = mtu_enum_to_bytes(a->path_mtu);
	}
	if (mask & M(DEST_QPN))
		s->dest_qp_num = a->dest_qp_num;
	if (mask & M(RQ_PSN)) {
		s->rq_psn = a->rq_psn & ROCE_PSN_MASK;
		qp->resp.epsn = s->rq_psn;
	}
	if (mask & M(SQ_PSN)) {
		s->sq_psn = a->sq_psn & ROCE_PSN_MASK;
		qp->npsn = s->sq_psn;
	}
	if (mask & M(MAX_DEST_RD_ATOMIC))
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & M(MAX_QP_RD_ATOMIC))
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & M(MIN_RNR_TIMER))
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & M(TIMEOUT))
		s->timeout = a->timeout;
	if (mask & M(RETRY_CNT)) {
		s->retry_cnt = a->retry_cnt;
		qp->retry_left = a->retry_cnt;
	}
	if (mask & M(RNR_RETRY)) {
		s->rnr_retry = a->rnr_retry;
		qp->rnr_left = a->rnr_retry;
	}
	if (mask & M(QKEY))
		s->qkey = a->qkey;
	if (mask & M(EN_SQD_ASYNC_NOTIFY))
		s->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & M(AV))
		apply_av(nic, qp, a, host_nh);
}

/* Back to RESET: forget every index and in-flight message (IBTA
 * 10.3.1.1); the host resets its rings likewise. */
static void qp_reset(struct snic_qp *qp)
{
	qp->sq_pi = qp->sq_fetch = 0;
	qp->infl_head = qp->infl_tail = qp->resend = 0;
	qp->retain_head = qp->retain_tail = 0;
	qp->cwnd = 0;
	qp->undo_valid = false;
	qp->tlp_at = qp->rtt_t0 = 0;
	qp->tlp_n = qp->rto_shift = 0;
	qp->rd_out = 0;
	qp->cur.valid = false;
	qp->rd_active = false;
	qp->acked_valid = false; /* else a stale ACK PSN retires new WQEs */
	qp->acked_psn = 0;
	qp->wait_until = 0;
	qp->rd_gap_valid = false;
	qp->nak_valid = false;
	qp->flush_pending = false;
	memset(&qp->resp, 0, sizeof(qp->resp));
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp_path_changed(qp);
	qp->npsn = 0;
}

int qp_modify(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_modify_qp *in)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, in->qpn);
	/* the next hop is no verbs attribute: out of the transition check */
	uint32_t mask = in->attr_mask & ~(uint32_t)M(NEXT_HOP);
	const uint8_t *host_nh = (in->attr_mask & M(NEXT_HOP)) ? in->next_hop : NULL;
	uint8_t cur, next;
	int st;

	if (!qp)
		return SNIC_ST_NOENT;
	cur = qp->state;
	if ((mask & M(CUR_STATE)) && in->attr.cur_qp_state != cur)
		return SNIC_ST_INVAL;
	if ((mask & M(STATE)) && in->attr.qp_state > SNIC_QPS_ERR)
		return SNIC_ST_INVAL; /* before the narrowing below */
	next = (mask & M(STATE)) ? (uint8_t)in->attr.qp_state : cur;
	if (!qp_valid_transition_type(qp->type, cur, next, mask))
		return SNIC_ST_INVAL;
	st = attr_values_ok(nic, mask, &in->attr);
	if (st)
		return st;
	/* a host's next hop is a neighbour like a destination is a peer:
	 * never us, loopback, multicast or broadcast (wire/route.c) */
	if (host_nh && (mask & M(AV)) &&
	    !route_next_hop_ok(&nic->core, in->attr.dgid, host_nh))
		return SNIC_ST_INVAL;
	if (next == SNIC_QPS_RESET) {
		qp_timer_stop(nic, qp);
		qp_reset(qp);
		qp_conn_give(nic, qp);
		qp->state = next;
		return SNIC_ST_OK;
	}
	if (cur == SNIC_QPS_RESET && (quota_qp_conn(nic, ctx) != SNIC_ST_OK ||
				      !qp_conn_take(nic, qp)))
		return SNIC_ST_NOMEM; /* no connection set: stays in RESET */
	apply_attrs(nic, qp, mask, &in->attr, host_nh);
	qp->state = next;
	if (next == SNIC_QPS_ERR && cur != SNIC_QPS_ERR)
		qp_flush(nic, qp);
	else if (next == SNIC_QPS_RTS)
		qp_doorbell(nic, qp); /* WQEs posted before RTS may wait */
	return SNIC_ST_OK;
}

