/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: memory windows (ibv_alloc_mw, ibv_dealloc_mw,
 * ibv_bind_mw) and the BIND_MW WQE that ibv_post_send, ibv_wr_bind_mw and
 * ibv_bind_mw share.  The firmware keeps the windows (objects/mw.c); as
 * rdma-core's mlx5, ibv_bind_mw of a type 1 window posts a BIND_MW work
 * request on the QP and the window's rkey is the next one at once.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

#define HD_MW_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |  \
		      IBV_ACCESS_REMOTE_ATOMIC)

struct ibv_mw *hd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct snic_cmd_alloc_mw in = { .pdn = pd->handle, .type = type };
	struct snic_cmd_handle out;
	struct ibv_mw *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = hd_cmd_new(to_hd_ctx(pd->context), sizeof(*mw), SNIC_CMD_ALLOC_MW,
			&in, sizeof(in), &out, sizeof(out));
	if (!mw)
		return NULL;
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = out.handle;
	mw->handle = out.handle;
	mw->type = type;
	return mw;
}

/* A bound window is invalidated with it (ibv_dealloc_mw(3)). */
int hd_dealloc_mw(struct ibv_mw *mw)
{
	struct snic_cmd_handle in = { .handle = mw->rkey };
	int err = hd_cmd(to_hd_ctx(mw->context), SNIC_CMD_DEALLOC_MW, &in,
			 sizeof(in), NULL, 0);

	if (err && !hd_fw_gone(err))
		return err;
	free(mw);
	return 0;
}

int hd_wqe_bind(struct snic_send_wqe *w, const struct ibv_mw *mw,
		uint32_t rkey, const struct ibv_mw_bind_info *bi, int type1)
{
	struct snic_wqe_bind b;

	/* remote rights only; zero-based windows are not offered */
	if (!mw || (bi->mw_access_flags & ~(unsigned int)HD_MW_ACCESS) ||
	    (type1 != (mw->type == IBV_MW_TYPE_1)) ||
	    (!bi->mr && (bi->addr || bi->length)) ||
	    (bi->mr && bi->mr->pd != mw->pd))
		return EINVAL;
	memset(&b, 0, sizeof(b));
	b.addr = bi->addr;
	b.length = bi->length;
	b.mw_rkey = mw->rkey;
	b.new_rkey = rkey;
	b.mr_lkey = bi->mr ? bi->mr->lkey : 0;
	b.access = bi->mw_access_flags;
	/* in place of raddr and atomic (hostif.h) */
	memcpy((uint8_t *)w + offsetof(struct snic_send_wqe, raddr), &b,
	       sizeof(b));
	w->ctrl.rsvd0 = type1 ? SNIC_BIND_TYPE_1 : 0;
	w->ctrl.num_sge = 0;
	return 0;
}

/* ibv_bind_mw (the inline in verbs.h has checked the type and the PDs):
 * the bind goes on the QP's send queue, the window takes its next rkey. */
int hd_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mwb)
{
	struct ibv_send_wr wr, *bad;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int err;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mwb->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mwb->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = mwb->bind_info;
	err = hd_post_send_bind(qp, &wr, &bad);
	if (err)
		return err;
	mw->rkey = rkey;
	return 0;
}
