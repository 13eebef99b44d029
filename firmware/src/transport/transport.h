/* SPDX-License-Identifier: MIT */
/*
 * The transport layer: the work a QP's queues and packets make.  Send
 * queue (WQE fetch, validation, gather), receive queue (RECV take from RQ
 * or SRQ), the RC requester / responder / completer, UC and UD, and the
 * requester timers.  Works on struct snic_nic (objects/objects.h).
 */
#ifndef SNIC_TRANSPORT_H
#define SNIC_TRANSPORT_H

#include "objects/objects.h"

/* hdr.c: common header filling for a QP's packets */
void pkt_fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
		   struct roce_hdrs *h, uint8_t opcode, uint32_t psn);
struct snic_pkt *pkt_build(struct snic_nic *nic, struct roce_hdrs *h,
			   const void *payload, uint32_t len);

/* recv.c: the RECV for a QP, from its SRQ or its RQ.  Fills qp->resp
 * (recv_wr_id, rsgl, in_send); false when none is posted. */
bool recv_take_any(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st);
bool srq_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st);

/* rc_requester.c */
unsigned req_poll(struct snic_nic *nic);
void req_rewind(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);

/* timers.c: transport and RNR timers on the core's wheel */
unsigned timer_poll(struct snic_nic *nic);
void timer_arm(struct snic_nic *nic, struct snic_qp *qp);
void timer_progress(struct snic_nic *nic, struct snic_qp *qp);
void timer_sent(struct snic_nic *nic, struct snic_qp *qp);

/* rc_responder.c */
void resp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
unsigned resp_poll(struct snic_nic *nic);
void resp_flush_acks(struct snic_nic *nic, struct snic_qp *qp);
bool resp_linger_rx(struct snic_nic *nic, const struct roce_hdrs *h);

/* rc_completer.c */
void comp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
void comp_timeout(struct snic_nic *nic, struct snic_qp *qp);

/* ud.c: the unreliable transports, UD and UC */
void ud_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool ud_req_qp(struct snic_nic *nic, struct snic_qp *qp);

#endif /* SNIC_TRANSPORT_H */
