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
#include "fuzz_cmd_ops.h"
#include "nic/top.h"


#define SLOTS 3
static const unsigned slot_no[SLOTS] = { 0, 3, 4 };

static struct fctx *ctx_for(struct fz_world *w, unsigned k)
{
	static struct fctx ctx[SLOTS];
	static unsigned opened[SLOTS];   /* in world (id) */

	if (k == 0)
		return &w->e->b.ctx;
	/* by id: a new world may sit where the old one was freed */
	if (opened[k] != w->id) {
		fctx_open(&ctx[k], w->e->b.dev, slot_no[k]);
		opened[k] = w->id;
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
		uint16_t op = fz_cmd_ops[fz_u8(&in) % FZ_NOPS];
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
