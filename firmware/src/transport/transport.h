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

/* ops.c: what each QP type does, chosen by the type fixed at creation */
struct snic_xport_ops {
	uint32_t wr_ops;        /* 1 << enum snic_wr_opcode it executes   */
	uint8_t bth_base;       /* BTH opcode prefix: RC 0x00, UC 0x20 ... */
	/* the requester's turn for the QP; true to stay scheduled */
	bool (*req)(struct snic_nic *nic, struct snic_qp *qp);
	/* a packet for the QP; true when it may owe an ACK */
	bool (*rx)(struct snic_nic *nic, struct snic_qp *qp,
		   const struct roce_hdrs *h);
};
extern const struct snic_xport_ops xport_tbl[SNIC_QPT_UD + 1];

static inline const struct snic_xport_ops *xport_of(const struct snic_qp *qp)
{
	return &xport_tbl[qp->type];
}

static inline bool wr_is_rd_atomic(uint8_t op)
{
	return op == SNIC_WR_RDMA_READ || op == SNIC_WR_ATOMIC_CMP_AND_SWP ||
	       op == SNIC_WR_ATOMIC_FETCH_AND_ADD;
}

/* sq.c: send-queue work for every QP type */
uint8_t sq_read_wqe(struct snic_nic *nic, struct snic_qp *qp);
uint8_t sq_load(struct snic_nic *nic, struct snic_qp *qp, uint32_t access);
uint8_t sq_opcode(const struct snic_qp *qp, const struct snic_req_cur *cur);
void sq_fill_ext(const struct snic_req_cur *cur, struct roce_hdrs *h);
int sq_gather(struct snic_nic *nic, struct snic_req_cur *cur, uint8_t *dst,
	      uint32_t n);
void sq_complete(struct snic_nic *nic, struct snic_qp *qp, uint8_t status);
void sq_arp_retry(struct snic_nic *nic, struct snic_qp *qp, uint32_t ip);
bool sq_unrel_packet(struct snic_nic *nic, struct snic_qp *qp,
		     struct roce_hdrs *h, uint32_t mtu);
bool sq_unrel_run(struct snic_nic *nic, struct snic_qp *qp, uint32_t lim,
		  bool (*send)(struct snic_nic *, struct snic_qp *));

/* hdr.c: common header filling for a QP's packets */
struct snic_dest {               /* where a packet goes                  */
	const uint8_t *dmac;
	uint32_t dip;
	uint32_t dqpn;
	uint8_t tos, hop_limit;
};
void pkt_fill_hdrs_to(const struct snic_nic *nic, struct snic_qp *qp,
		      struct roce_hdrs *h, const struct snic_dest *d,
		      uint8_t opcode, uint32_t psn);
void pkt_fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
		   struct roce_hdrs *h, uint8_t opcode, uint32_t psn);
struct snic_pkt *pkt_build(struct snic_nic *nic, struct roce_hdrs *h,
			   const void *payload, uint32_t len);

/* recv.c: receive-side work for every QP type */
bool recv_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st);
bool recv_state_ok(struct snic_nic *nic, struct snic_qp *qp);
uint8_t recv_place(struct snic_nic *nic, struct snic_qp *qp,
		   const struct roce_hdrs *h);
bool rkey_ok(struct snic_nic *nic, const struct snic_qp *qp, uint32_t rkey,
	     uint64_t va, uint64_t len, uint32_t access);
bool resp_write_start(struct snic_nic *nic, struct snic_qp *qp,
		      const struct roce_hdrs *h);
bool resp_write_payload(struct snic_nic *nic, struct snic_qp *qp,
			const struct roce_hdrs *h);

/* rc_requester.c */
unsigned req_poll(struct snic_nic *nic);
bool rc_req_qp(struct snic_nic *nic, struct snic_qp *qp);
void req_rewind(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);

/* timers.c: transport and RNR timers on the core's wheel */
unsigned timer_poll(struct snic_nic *nic);
void timer_arm(struct snic_nic *nic, struct snic_qp *qp);
void timer_progress(struct snic_nic *nic, struct snic_qp *qp);
void timer_sent(struct snic_nic *nic, struct snic_qp *qp);

/* rc_responder.c */
const char *resp_state_name(unsigned s);
void resp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
unsigned resp_poll(struct snic_nic *nic);
void resp_flush_acks(struct snic_nic *nic, struct snic_qp *qp);
bool resp_linger_rx(struct snic_nic *nic, const struct roce_hdrs *h);

/* rc_completer.c */
const char *comp_state_name(unsigned s);
void comp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
void comp_timeout(struct snic_nic *nic, struct snic_qp *qp);

/* ud.c, uc.c: the unreliable services */
bool ud_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool ud_req_qp(struct snic_nic *nic, struct snic_qp *qp);
bool uc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool uc_req_qp(struct snic_nic *nic, struct snic_qp *qp);

#endif /* SNIC_TRANSPORT_H */
