/* SPDX-License-Identifier: MIT */
/*
 * A QP's scheduling: its doorbell record, the work lists the requester
 * and responder take QPs from, its deadlines on the core's timer wheel,
 * and its destination MAC when a neighbour is learnt.
 */
#include <string.h>

#include "objects/objects.h"

/* Lists and wheel are the owner core's: a command on core 0 schedules
 * another core's QP while that core is parked, and pokes it (nic/xcore.c). */
void qp_req_schedule(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->on_req_list)
		return;
	nic = qp_view_poke(nic, qp);
	qp->on_req_list = true;
	nic->req_list[nic->req_tail++ % SNIC_MAX_QP] = (uint16_t)qp_idx(nic, qp);
}

void qp_resp_schedule(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->on_resp_list)
		return;
	nic = qp_view_poke(nic, qp);
	qp->on_resp_list = true;
	nic->resp_list[nic->resp_tail++ % SNIC_MAX_QP] = (uint16_t)qp_idx(nic, qp);
}

/* The producer indexes of the QP's doorbell record, read one at a time:
 * a doorbell does not say which ring the host posted to, and reading the
 * RQ's would bring the responder's line (resp.rq_ci) into every send
 * doorbell's turn (issue 11 part 6), so the RQ's is read where a RECV is
 * wanted and none is known (recv_take) and by a flush.  False when the
 * DMA failed (counted in dma_errors by core_dma_read).  acquire: the
 * WQEs up to each index are written before it (the host stores it with
 * release, hostif.h).  A producer index that runs more than a ring ahead
 * is a host bug: refused rather than read stale WQEs. */
static bool qp_read_sq_pi(struct snic_nic *nic, struct snic_qp *qp)
{
	uint32_t sq_pi;

	if (core_dma_load_acquire32(&nic->core, qp->dbrec_pa +
				    offsetof(struct snic_qp_dbrec, sq_pi), &sq_pi))
		return false;
	if (sq_pi - qp->sq_fetch <= qp->sq_cnt)
		qp->sq_pi = sq_pi;
	return true;
}

bool qp_read_rq_pi(struct snic_nic *nic, struct snic_qp *qp)
{
	uint32_t rq_pi;

	if (core_dma_load_acquire32(&nic->core, qp->dbrec_pa +
				    offsetof(struct snic_qp_dbrec, rq_pi), &rq_pi))
		return false;
	if (rq_pi - qp->resp.rq_ci <= qp->rq_cnt)
		qp->resp.rq_pi = rq_pi;
	return true;
}

bool qp_read_dbrec(struct snic_nic *nic, struct snic_qp *qp)
{
	return qp_read_sq_pi(nic, qp) && qp_read_rq_pi(nic, qp);
}

/* The host rang this QP: read its SQ's producer index once (a QP in
 * error reads both in qp_flush: WQEs posted in ERR flush, C10-39). */
void qp_doorbell(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->state == SNIC_QPS_ERR) {
		qp_flush(nic, qp);
		return;
	}
	if (!qp_read_sq_pi(nic, qp))
		return;
	if (qp->state == SNIC_QPS_RTS && qp->sq_fetch != qp->sq_pi)
		qp_req_schedule(nic, qp);
}

/* The QP goes away or back to RESET: off the wheel, deadlines forgotten. */
void qp_timer_stop(struct snic_nic *nic, struct snic_qp *qp)
{
	tw_cancel(&qp_view(nic, qp)->core.tw, qp_tw_id(nic, qp));
	qp->rto_at = 0;
	qp->wait_until = 0;
}

/* A neighbour was learnt: QPs that waited for its MAC may send.  Core 0
 * learns; another core's QP hears it through its ring (nic/xcore.c).  A
 * full ring drops the news; the QP's next ARP retry (sq_arp_retry) asks
 * core 0, which finds the neighbour known and tells its QPs again. */
void qp_neigh_update(struct snic_nic *nic, const uint8_t ip[16],
		     const uint8_t mac[6])
{
	for (uint32_t i = 0; i < SNIC_MAX_QP; i++) {
		struct snic_qp *qp = &nic->qps[i];

		/* nh: the path's next hop, IPv6 or mapped IPv4 */
		if (!qp->in_use || memcmp(qp->nh, ip, 16) != 0)
			continue;
		if (qp->core != nic->core.core_id) {
			struct snic_xc_msg m = { .type = SNIC_XC_NEIGH, .a = i };

			memcpy(m.u.mac, mac, 6);
			core_xc_send(&nic->core, qp->core, &m);
			continue;
		}
		qp_neigh_set(nic, qp, mac);
	}
}

void qp_neigh_set(struct snic_nic *nic, struct snic_qp *qp,
		  const uint8_t mac[6])
{
	if (qp->dmac_valid && memcmp(qp->dmac, mac, 6) == 0)
		return;
	memcpy(qp->dmac, mac, 6);
	qp->dmac_valid = true;
	qp_path_changed(qp);
	if (qp->state == SNIC_QPS_RTS)
		qp_req_schedule(nic, qp);
}
