/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the command mailbox.  The input is a sequence of commands
 * (context slot, opcode, the 960 input bytes) written into a context's
 * mailbox of NIC b of a live world (fuzz_env.h), with some 64-bit fields
 * pointed into the host-memory window so that page lists, rings and
 * doorbell records are sometimes plausible, and the FZ_H/FZ_A markers
 * (fuzz_env.h) replaced by live handles and addresses.  The opcode is
 * any of every command block (verbs, CM, windows, XRC, raw/multicast)
 * or none.  Slot 0 owns the world's objects; slots 3 and 4 are other
 * contexts (isolation checks).  Traffic runs between commands.
 */
#include <string.h>

#include "fuzz_env.h"
#include "nic/top.h"

static const uint16_t ops[] = {
	SNIC_CMD_NOP, SNIC_CMD_CTX_OPEN, SNIC_CMD_CTX_CLOSE,
	SNIC_CMD_QUERY_DEVICE, SNIC_CMD_QUERY_PORT, SNIC_CMD_QUERY_GID,
	SNIC_CMD_ALLOC_PD, SNIC_CMD_DEALLOC_PD, SNIC_CMD_REG_MR,
	SNIC_CMD_DEREG_MR, SNIC_CMD_CREATE_CQ, SNIC_CMD_DESTROY_CQ,
	SNIC_CMD_CREATE_QP, SNIC_CMD_MODIFY_QP, SNIC_CMD_QUERY_QP,
	SNIC_CMD_DESTROY_QP, SNIC_CMD_CREATE_SRQ, SNIC_CMD_MODIFY_SRQ,
	SNIC_CMD_QUERY_SRQ, SNIC_CMD_DESTROY_SRQ, SNIC_CMD_REREG_MR,
	SNIC_CMD_RESIZE_CQ, SNIC_CMD_ALLOC_DM, SNIC_CMD_FREE_DM,
	SNIC_CMD_REG_DM_MR, SNIC_CMD_COUNT,
	SNIC_CMD_CM_OPEN, SNIC_CMD_CM_LISTEN, SNIC_CMD_CM_UNLISTEN,
	SNIC_CMD_CM_SEND, SNIC_CMD_CM_RECV, SNIC_CMD_CM_ARM,
	SNIC_CMD_CM_RESOLVE, SNIC_CMD_CM_NOTE, SNIC_CMD_CM_END,
	SNIC_CMD_ALLOC_MW, SNIC_CMD_DEALLOC_MW, SNIC_CMD_MW_END,
	SNIC_CMD_OPEN_XRCD, SNIC_CMD_CLOSE_XRCD, SNIC_CMD_XRC_END,
	SNIC_CMD_MCAST_ATTACH, SNIC_CMD_MCAST_DETACH, SNIC_CMD_FLOW_CREATE,
	SNIC_CMD_FLOW_DESTROY, SNIC_CMD_RAW_END, 0xffff,
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

#define SLOTS 3
static const unsigned slot_no[SLOTS] = { 0, 3, 4 };

static struct fctx *ctx_for(struct fz_world *w, unsigned k)
{
	static struct fctx ctx[SLOTS];
	static struct fz_world *opened[SLOTS];

	if (k == 0)
		return &w->e->b.ctx;
	if (opened[k] != w || w->uses == 0) {
		fctx_open(&ctx[k], w->e->b.dev, slot_no[k]);
		opened[k] = w;
	}
	return &ctx[k];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_world *w = fz_world();
	struct fz_in in = { data, size };
	uint8_t cmd[SNIC_CMD_DATA_SIZE], out[SNIC_CMD_DATA_SIZE];

	for (unsigned k = 0; in.n && k < 16; k++) {
		struct fctx *c = ctx_for(w, fz_u8(&in) % SLOTS);
		uint16_t op = ops[fz_u8(&in) % NOPS];
		uint32_t n = fz_u16(&in) % sizeof(cmd), fix = fz_u32(&in);

		memset(cmd, 0, sizeof(cmd));
		if (n > in.n)
			n = (uint32_t)in.n;
		memcpy(cmd, in.p, n);
		in.p += n;
		in.n -= n;
		/* up to 32 of the first 8-byte fields into the window */
		for (unsigned f = 0; f < 32; f++)
			if (fix & (1u << f)) {
				uint64_t v = w->e->b.buf + ((uint64_t)cmd[f * 8] << 12);

				memcpy(cmd + f * 8, &v, 8);
			}
		fz_subst(w, 1, cmd, sizeof(cmd));
		fctx_cmd(c, op, cmd, sizeof(cmd), out, sizeof(out));
		if (fz_u8(&in) & 1)
			fz_traffic(w, fz_u8(&in));
		fsim_idle(w->e->s, 2);
		if (fix >> 31) /* timers: CM, retransmission, RNR */
			w->e->s->clock += 1000000ull << (fix & 31 & 15);
	}
	fsim_idle(w->e->s, 4);
	return 0;
}
