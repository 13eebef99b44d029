/* SPDX-License-Identifier: MIT */
/*
 * The transport of each QP type: the work requests it executes, its BTH
 * opcode prefix, its requester turn and its receive routine.  The table is
 * indexed by the type fixed at QP creation (objects/qp.c accepts RC, UC,
 * UD, raw packet and the two XRC types only), so no packet path asks "which type is this?".
 */
#include "transport/transport.h"

#define WR(op) (1u << SNIC_WR_##op)
/* the host's WQE layout rule (hostif.h, snic_wqe_data_off) per type */
#define SHORT_OPS(t) \
	((SNIC_WQE_SHORT_QPTS >> SNIC_QPT_##t & 1u) ? SNIC_WQE_SHORT_OPS : 0u)

/* RC: requests to the responder, responses to the completer, both only
 * from the QP's peer (IBTA 9.6.1.5: the source must match the path). */
bool rc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	if (h->opcode >= ROCE_UC_BASE) {
		CNT_INC(&nic->core, rx_drop_unknown_qpn); /* no such QP of that type */
		return false;
	}
	if (!rx_peer_ok(nic, qp, h))
		return false;
	if (roce_opcodes[h->opcode].flags & ROCE_F_REQ) {
		/* a WRITE_ONLY from the peer was offered to resp_write_only
		 * by nic/rx.c already; declined, it takes the steps (which
		 * check everything it does: nothing depends on the offer) */
		resp_rx(nic, qp, h);
		return qp->resp.ack_pending;
	}
	comp_rx(nic, qp, h);
	return false;
}

/* IBTA 9.2 table 37 (operations per service) and 9.2.1 (opcode prefixes). */
const struct snic_xport_ops xport_tbl[SNIC_QPT_XRC_RECV + 1] = {
	[SNIC_QPT_RC] = {
		.short_ops = SHORT_OPS(RC),
		.wr_ops = WR(RDMA_WRITE) | WR(RDMA_WRITE_WITH_IMM) | WR(SEND) |
			  WR(SEND_WITH_IMM) | WR(RDMA_READ) |
			  WR(ATOMIC_CMP_AND_SWP) | WR(ATOMIC_FETCH_AND_ADD) |
			  WR(ATOMIC_WRITE) | WR(SEND_WITH_INV) | WR(LOCAL_INV) |
			  WR(BIND_MW),
		.bth_base = 0x00,
		.req = rc_req_qp,
		.rx = rc_rx,
	},
	[SNIC_QPT_UC] = {
		.short_ops = SHORT_OPS(UC),
		.wr_ops = WR(RDMA_WRITE) | WR(RDMA_WRITE_WITH_IMM) | WR(SEND) |
			  WR(SEND_WITH_IMM),
		.bth_base = ROCE_UC_BASE,
		.req = uc_req_qp,
		.rx = uc_rx,
	},
	[SNIC_QPT_UD] = {
		.short_ops = SHORT_OPS(UD),
		.wr_ops = WR(SEND) | WR(SEND_WITH_IMM),
		.bth_base = 0x60,
		.req = ud_req_qp,
		.rx = ud_rx,
	},
	/* XRC (Annex A14): an initiator is an RC requester whose requests
	 * carry the XRCETH; a target an RC responder without a send queue
	 * (transport/xrc.c).  No atomic write over XRC. */
	[SNIC_QPT_XRC_SEND] = {
		.short_ops = SHORT_OPS(XRC_SEND),
		.wr_ops = WR(RDMA_WRITE) | WR(RDMA_WRITE_WITH_IMM) | WR(SEND) |
			  WR(SEND_WITH_IMM) | WR(RDMA_READ) |
			  WR(ATOMIC_CMP_AND_SWP) | WR(ATOMIC_FETCH_AND_ADD),
		.bth_base = ROCE_XRC_BASE,
		.req = rc_req_qp,
		.rx = xrc_rx,
	},
	[SNIC_QPT_XRC_RECV] = {
		.short_ops = SHORT_OPS(XRC_RECV),
		.wr_ops = 0,
		.bth_base = ROCE_XRC_BASE,
		.req = xrc_recv_req_qp,
		.rx = xrc_rx,
	},
	/* whole Ethernet frames: a SEND is the frame (raw.c) */
	[SNIC_QPT_RAW_PACKET] = {
		.short_ops = SHORT_OPS(RAW_PACKET),
		.wr_ops = WR(SEND),
		.bth_base = 0,
		.req = raw_req_qp,
		.rx = raw_rx_roce,
	},
};
