/* SPDX-License-Identifier: MIT */
/*
 * The RC responder's own interface between its files: rc_responder.c
 * (the request state machine), rc_ack.c (ACKs and NAKs), rc_rd_res.c
 * (responder resources: READ/atomic history and duplicates) and
 * rc_read_resp.c (READ responses and atomic ACKs).
 */
#ifndef SNIC_TRANSPORT_RC_RESP_H
#define SNIC_TRANSPORT_RC_RESP_H

#include "transport/transport.h"

#define ACK_CREDIT_NONE  0x1f /* no end-to-end credits advertised */

static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* The PSNs a request owns: a READ one per response packet (9.7.4.1.4). */
static inline uint32_t req_psns(const struct snic_qp *qp, const struct roce_hdrs *h)
{
	if (h->opcode != ROCE_RC_READ_REQ || h->reth_len == 0)
		return 1;
	return qp_mtu_pkts(qp, h->reth_len);
}

/* A READ the responder may take: no longer than the largest message
 * (SNIC_MAX_MSG_SIZE, port attribute max_msg_sz) and no more response
 * PSNs than half the PSN space, the window inside which the requester
 * tells new from old (IBTA 9.7.1, 9.7.5.2.2).  Longer is an invalid
 * request (9.7.5.2.3, NAK). */
#define READ_MAX_PSNS (1u << 23)
static inline bool read_len_ok(const struct snic_qp *qp,
			       const struct roce_hdrs *h)
{
	return h->reth_len <= SNIC_MAX_MSG_SIZE &&
	       req_psns(qp, h) <= READ_MAX_PSNS;
}

/* rc_ack.c */
void send_aeth(struct snic_nic *nic, struct snic_qp *qp, uint8_t syn,
	       uint32_t psn);
void nak_fatal(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
	       uint8_t code);
void rnr_nak(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);

/* rc_atomic_write.c */
enum atw_result { ATW_OK, ATW_INVALID, ATW_RKEY, ATW_REM_OP };
enum atw_result atomic_write_exec(struct snic_nic *nic, struct snic_qp *qp,
				  const struct roce_hdrs *h);

/* rc_rd_res.c */
uint32_t rd_slots(const struct snic_qp *qp);
uint32_t rd_first_pending(const struct snic_resp *r);
void rd_unpend(struct snic_resp *r, struct snic_rd_res *rd);
struct snic_rd_res *rd_new(struct snic_resp *r, const struct roce_hdrs *h,
			   uint32_t npsn);
void on_duplicate(struct snic_nic *nic, struct snic_qp *qp,
		  const struct roce_hdrs *h);

#endif /* SNIC_TRANSPORT_RC_RESP_H */
