/* SPDX-License-Identifier: MIT */
/*
 * The QP state machine of ibv_modify_qp: for each QP type, which
 * [current][next] transitions exist and which attributes each requires
 * and allows (IBTA 10.3.1 and 11.2.4.2).
 */
#include <string.h>

#include "objects/objects.h"

static const char *const state_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

const char *qp_state_name(uint8_t state)
{
	return state <= SNIC_QPS_ERR ? state_names[state] : "?";
}

#define M(x) SNIC_QP_##x

struct qp_trans {
	uint32_t req, opt;
	bool valid;
};

/* RC column of IBTA 11.2.4.2 (the same table the kernel's
 * ib_modify_qp_is_ok encodes). */
static const struct qp_trans qp_trans_tbl[7][7] = {
	[SNIC_QPS_RESET] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_INIT] = { M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
				    0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
	[SNIC_QPS_INIT] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_INIT] = { 0, M(PKEY_INDEX) | M(PORT) |
				       M(ACCESS_FLAGS), true },
		[SNIC_QPS_RTR] = { M(AV) | M(PATH_MTU) | M(DEST_QPN) |
				   M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
				   M(MIN_RNR_TIMER),
				   M(ALT_PATH) | M(ACCESS_FLAGS) |
				   M(PKEY_INDEX), true },
	},
	[SNIC_QPS_RTR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) |
				   M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC),
				   M(CUR_STATE) | M(ALT_PATH) |
				   M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) |
				   M(PATH_MIG_STATE), true },
	},
	[SNIC_QPS_RTS] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS) |
				      M(ALT_PATH) | M(PATH_MIG_STATE) |
				      M(MIN_RNR_TIMER), true },
		[SNIC_QPS_SQD] = { 0, M(EN_SQD_ASYNC_NOTIFY), true },
	},
	[SNIC_QPS_SQD] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS) |
				      M(ALT_PATH) | M(MIN_RNR_TIMER) |
				      M(PATH_MIG_STATE), true },
		[SNIC_QPS_SQD] = { 0, M(AV) | M(TIMEOUT) | M(RETRY_CNT) |
				      M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) |
				      M(MAX_DEST_RD_ATOMIC) | M(CUR_STATE) |
				      M(ALT_PATH) | M(ACCESS_FLAGS) |
				      M(PKEY_INDEX) | M(MIN_RNR_TIMER) |
				      M(PATH_MIG_STATE), true },
	},
	[SNIC_QPS_SQE] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS), true },
	},
	[SNIC_QPS_ERR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
};

/* ---------------------------------------------------------------------- */
/* State machine: UD and UC columns of IBTA 11.2.4.2.                      */

static const struct qp_trans ud_tbl[7][7] = {
	[SNIC_QPS_RESET] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_INIT] = { M(PKEY_INDEX) | M(PORT) | M(QKEY), 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
	[SNIC_QPS_INIT] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_INIT] = { 0, M(PKEY_INDEX) | M(PORT) | M(QKEY), true },
		[SNIC_QPS_RTR] = { 0, M(PKEY_INDEX) | M(QKEY), true },
	},
	[SNIC_QPS_RTR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { M(SQ_PSN), M(CUR_STATE) | M(QKEY), true },
	},
	[SNIC_QPS_RTS] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(QKEY), true },
		[SNIC_QPS_SQD] = { 0, M(EN_SQD_ASYNC_NOTIFY), true },
	},
	[SNIC_QPS_SQD] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(QKEY), true },
		[SNIC_QPS_SQD] = { 0, M(PKEY_INDEX) | M(QKEY), true },
	},
	[SNIC_QPS_SQE] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(QKEY), true },
	},
	[SNIC_QPS_ERR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
};

/* UC: like RC without the retry, RNR and RDMA-read/atomic attributes. */
static const struct qp_trans uc_tbl[7][7] = {
	[SNIC_QPS_RESET] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_INIT] = { M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
	[SNIC_QPS_INIT] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_INIT] = { 0, M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), true },
		[SNIC_QPS_RTR] = { M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN),
				   M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX), true },
	},
	[SNIC_QPS_RTR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { M(SQ_PSN), M(CUR_STATE) | M(ALT_PATH) |
				   M(ACCESS_FLAGS) | M(PATH_MIG_STATE), true },
	},
	[SNIC_QPS_RTS] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
				      M(PATH_MIG_STATE), true },
		[SNIC_QPS_SQD] = { 0, M(EN_SQD_ASYNC_NOTIFY), true },
	},
	[SNIC_QPS_SQD] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
				      M(PATH_MIG_STATE), true },
		[SNIC_QPS_SQD] = { 0, M(AV) | M(CUR_STATE) | M(ALT_PATH) |
				      M(ACCESS_FLAGS) | M(PKEY_INDEX) |
				      M(PATH_MIG_STATE), true },
	},
	[SNIC_QPS_SQE] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS), true },
	},
	[SNIC_QPS_ERR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
};

/* Raw packet: a port and nothing else (the kernel's ib_modify_qp_is_ok,
 * IB_QPT_RAW_PACKET). */
static const struct qp_trans raw_tbl[7][7] = {
	[SNIC_QPS_RESET] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_INIT] = { M(PORT), 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
	[SNIC_QPS_INIT] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_INIT] = { 0, M(PORT), true },
		[SNIC_QPS_RTR] = { 0, 0, true },
	},
	[SNIC_QPS_RTR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE), true },
	},
	[SNIC_QPS_RTS] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE), true },
	},
	[SNIC_QPS_ERR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
};

static const struct qp_trans (*const type_tbl[])[7] = {
	[SNIC_QPT_RC] = qp_trans_tbl,
	[SNIC_QPT_UC] = uc_tbl,
	[SNIC_QPT_UD] = ud_tbl,
	[SNIC_QPT_RAW_PACKET] = raw_tbl,
};

/* XRC (Annex A14; the XRC_INI and XRC_TGT columns of the kernel's
 * ib_modify_qp_is_ok): RC's table, but an initiator has no responder
 * (no RNR timer or responder resources to give at RTR) and a target no
 * requester (no retry counts or initiator depth at RTS). */
static struct qp_trans xrc_trans(uint8_t type, uint8_t cur, uint8_t next)
{
	struct qp_trans t = qp_trans_tbl[cur][next];
	const uint32_t resp = M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER);
	const uint32_t req = M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC);

	if (type == SNIC_QPT_XRC_SEND) {
		t.req &= ~resp;
		t.opt &= ~resp;
	} else if (cur == SNIC_QPS_RTR && next == SNIC_QPS_RTS) {
		t.req &= ~req;
	}
	return t;
}

bool qp_valid_transition_type(uint8_t type, uint8_t cur, uint8_t next,
			      uint32_t mask)
{
	const struct qp_trans *t;
	struct qp_trans x;

	if (cur > SNIC_QPS_ERR || next > SNIC_QPS_ERR)
		return false;
	if (type == SNIC_QPT_XRC_SEND || type == SNIC_QPT_XRC_RECV) {
		x = xrc_trans(type, cur, next);
		t = &x;
	} else if (type >= sizeof(type_tbl) / sizeof(type_tbl[0]) ||
		   !type_tbl[type]) {
		return false;
	} else {
		t = &type_tbl[type][cur][next];
	}
	if (!t->valid || (mask & t->req) != t->req)
		return false;
	/* STATE itself is always allowed; anything else must be listed */
	return (mask & ~(t->req | t->opt | M(STATE))) == 0;
}

/* The RC column (the table the kernel's ib_modify_qp_is_ok encodes). */
bool qp_valid_transition(uint8_t cur, uint8_t next, uint32_t mask)
{
	return qp_valid_transition_type(SNIC_QPT_RC, cur, next, mask);
}
