/* SPDX-License-Identifier: MIT */
/*
 * The two entry points our librdmacm.so.1 needs from an opened snic
 * device (version node SNIC_PRIVATE_1, nothing else uses them): the
 * command channel for the SNIC_CMD_CM_* commands, and the word the
 * firmware bumps when a CM MAD is queued for the context (hostif.h,
 * "Communication management").  The firmware checks every CM command
 * against the context that issues it, as it does for the verbs commands.
 */
#include "core.h"

int snic_cm_cmd(struct ibv_context *c, uint16_t op, const void *in,
		size_t in_len, void *out, size_t out_len, uint32_t *status);
_Atomic uint32_t *snic_cm_word(struct ibv_context *c);

int snic_cm_cmd(struct ibv_context *c, uint16_t op, const void *in,
		size_t in_len, void *out, size_t out_len, uint32_t *status)
{
	if ((op < SNIC_CMD_CM_OPEN || op >= SNIC_CMD_CM_END) &&
	    (op < SNIC_CMD_CM_SEND6 || op >= SNIC_CMD_CM6_END))
		return EINVAL;
	return hd_cmd_raw(to_hd_ctx(c), op, in, in_len, out, out_len, status);
}

_Atomic uint32_t *snic_cm_word(struct ibv_context *c)
{
	return &to_hd_ctx(c)->slot->cm_pi;
}
