/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: UD multicast (ibv_attach_mcast / ibv_detach_mcast).
 * The firmware keeps the groups (objects/mcast.c); a group is an IPv4
 * multicast address in an IPv4-mapped GID (::ffff:224.0.0.0/4).  The LID
 * means nothing on RoCE and is ignored, as the kernel's ib_attach_mcast
 * ignores it on an Ethernet port.  A QP created with
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB does not hear its own datagrams.
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

static int mcast_cmd(struct ibv_qp *ibqp, const union ibv_gid *gid,
		     uint16_t op)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	struct snic_cmd_mcast in;

	/* rdma-core over the kernel: EINVAL for a QP that is not UD */
	if (!gid || ibqp->qp_type != IBV_QPT_UD)
		return EINVAL;
	memset(&in, 0, sizeof(in));
	in.qpn = ibqp->qp_num;
	in.flags = qp->block_mcast_lb ? SNIC_MCAST_F_BLOCK_SELF : 0;
	memcpy(in.gid, gid->raw, sizeof(in.gid));
	return hd_cmd(to_hd_ctx(ibqp->context), op, &in, sizeof(in), NULL, 0);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		     uint16_t lid)
{
	(void)lid;
	return mcast_cmd(qp, gid, SNIC_CMD_MCAST_ATTACH);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		     uint16_t lid)
{
	(void)lid;
	return mcast_cmd(qp, gid, SNIC_CMD_MCAST_DETACH);
}
