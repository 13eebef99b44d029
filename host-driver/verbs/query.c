/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: device, port, GID and P_Key queries.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

/* The exported ibv_query_port is the old ABI: it writes only the fields
 * up to `flags` (48 bytes), because binaries built before port_cap_flags2
 * existed pass a smaller struct.  verbs.h only forward-declares it;
 * rdma-core defines it privately with this layout. */
struct _compat_ibv_port_attr {
	enum ibv_port_state state;
	enum ibv_mtu max_mtu;
	enum ibv_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
};

_Static_assert(sizeof(struct _compat_ibv_port_attr) ==
	       offsetof(struct ibv_port_attr, port_cap_flags2),
	       "compat port attr is the prefix of ibv_port_attr");

/* The verbs.h macros would rewrite our definitions. */
#undef ibv_query_port

/* ------------------------------------------------------------------ */
/* Device.                                                              */

static void fill_device_attr(struct hd_context *ctx,
			     struct ibv_device_attr *a)
{
	const struct snic_device_attr *d = &ctx->dattr;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%u.%u.%u", d->fw_ver_major,
		 d->fw_ver_minor, d->fw_ver_sub);
	a->node_guid = htobe64(d->node_guid);
	a->sys_image_guid = htobe64(d->sys_image_guid);
	a->max_mr_size = d->max_mr_size;
	a->page_size_cap = d->page_size_cap;
	a->vendor_id = d->vendor_id;
	a->vendor_part_id = d->vendor_part_id;
	a->hw_ver = d->hw_ver;
	a->max_qp = (int)d->max_qp;
	a->max_qp_wr = (int)d->max_qp_wr;
	a->device_cap_flags = d->device_cap_flags;
	a->max_sge = (int)d->max_sge;
	a->max_sge_rd = (int)d->max_sge_rd;
	a->max_cq = (int)d->max_cq;
	a->max_cqe = (int)d->max_cqe;
	a->max_mr = (int)d->max_mr;
	a->max_mw = (int)d->max_mw;
	a->max_pd = (int)d->max_pd;
	a->max_qp_rd_atom = (int)d->max_qp_rd_atom;
	a->max_res_rd_atom = (int)d->max_res_rd_atom;
	a->max_qp_init_rd_atom = (int)d->max_qp_init_rd_atom;
	a->atomic_cap = (enum ibv_atomic_cap)d->atomic_cap;
	a->max_ah = (int)d->max_ah;
	a->max_srq = (int)d->max_srq;
	a->max_srq_wr = (int)d->max_srq_wr;
	a->max_srq_sge = (int)d->max_srq_sge;
	a->max_pkeys = (uint16_t)d->max_pkeys;
	a->local_ca_ack_delay = 16;
	a->phys_port_cnt = (uint8_t)d->phys_port_cnt;
	a->max_mcast_grp = (int)d->max_mcast_grp;
	a->max_mcast_qp_attach = (int)d->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = (int)d->max_total_mcast_qp_attach;
}

int ibv_query_device(struct ibv_context *context,
		     struct ibv_device_attr *device_attr)
{
	fill_device_attr(to_hd_ctx(context), device_attr);
	return 0;
}

int hd_query_device_ex(struct ibv_context *context,
		       const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&ex, 0, sizeof(ex));
	fill_device_attr(to_hd_ctx(context), &ex.orig_attr);
	/* The port count, whatever its size (orig_attr's is 8 bits). */
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	/* What the firmware does beyond the 32-bit flags: RDMA Atomic Write */
	ex.max_dm_size = to_hd_ctx(context)->dattr.max_dm_size;
	ex.device_cap_flags_ex = (uint64_t)ex.orig_attr.device_cap_flags |
				 (uint64_t)to_hd_ctx(context)->dattr.cap_ex_hi << 32;
	/* Everything extended (ODP, TSO, RSS, timestamps, ...) is absent. */
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Port.                                                                */

static int query_port_full(struct ibv_context *context, uint8_t port_num,
			   struct ibv_port_attr *a)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_port in = { .port_num = port_num };
	struct snic_port_attr p;
	int err;

	if (port_num < 1 || port_num > ctx->dattr.phys_port_cnt)
		return EINVAL;
	err = hd_cmd(ctx, SNIC_CMD_QUERY_PORT, &in, sizeof(in), &p,
		     sizeof(p));
	if (err)
		return err;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)p.state;
	a->max_mtu = (enum ibv_mtu)p.max_mtu;
	a->active_mtu = (enum ibv_mtu)p.active_mtu;
	a->gid_tbl_len = (int)p.gid_tbl_len;
	a->port_cap_flags = p.port_cap_flags;
	a->max_msg_sz = p.max_msg_sz;
	a->pkey_tbl_len = (uint16_t)p.pkey_tbl_len;
	a->max_vl_num = 1;
	a->active_width = (uint8_t)p.active_width;
	a->active_speed = (uint8_t)p.active_speed;
	a->phys_state = (uint8_t)p.phys_state;
	a->link_layer = (uint8_t)p.link_layer;
	return 0;
}

/* struct verbs_context.query_port: what the ibv_query_port() inline of
 * current verbs.h calls. */
int hd_query_port(struct ibv_context *context, uint8_t port_num,
		  struct ibv_port_attr *attr, size_t attr_len)
{
	struct ibv_port_attr a;
	int err = query_port_full(context, port_num, &a);

	if (err)
		return err;
	memcpy(attr, &a, attr_len < sizeof(a) ? attr_len : sizeof(a));
	return 0;
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return hd_query_port(context, port_num,
			     (struct ibv_port_attr *)(void *)port_attr,
			     sizeof(*port_attr));
}

/* ------------------------------------------------------------------ */
/* GIDs.                                                                */

/* 0: valid entry; ENODATA: empty entry; EINVAL: no such port/index. */
static int query_gid_entry(struct ibv_context *context, uint32_t port_num,
			   uint32_t index, struct snic_gid_entry *e)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_gid_query in = { .port_num = port_num,
					 .index = index };
	static const uint8_t zero[16];
	uint32_t status;
	int err;

	if (port_num < 1 || port_num > ctx->dattr.phys_port_cnt)
		return EINVAL;
	err = hd_cmd_raw(ctx, SNIC_CMD_QUERY_GID, &in, sizeof(in), e,
			 sizeof(*e), &status);
	if (err)
		return err;
	if (status == SNIC_ST_NOENT)
		return ENODATA;
	if (status != SNIC_ST_OK)
		return hd_status_errno(status);
	if (memcmp(e->gid, zero, sizeof(zero)) == 0)
		return ENODATA;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
		  union ibv_gid *gid)
{
	struct snic_gid_entry e;
	int err;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	err = query_gid_entry(context, port_num, (uint32_t)index, &e);
	if (err == ENODATA) {
		/* rdma-core: an empty entry reads as the zero GID */
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (err) {
		errno = err;
		return -1;
	}
	memcpy(gid->raw, e.gid, sizeof(gid->raw));
	return 0;
}

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type)
{
	struct snic_gid_entry e;
	int err = query_gid_entry(context, port_num, index, &e);

	if (err == ENODATA) {
		/* rdma-core reads the sysfs type file, which the kernel
		 * refuses (EINVAL) for an empty entry, and answers
		 * "IB/RoCE v1" for it. */
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (err) {
		errno = err;
		return -1;
	}
	*type = e.type == 1 ? IBV_GID_TYPE_SYSFS_ROCE_V2
			    : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

static void fill_gid_entry(struct ibv_gid_entry *out,
			   const struct snic_gid_entry *e, uint32_t port_num,
			   uint32_t index)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->gid.raw, e->gid, sizeof(out->gid.raw));
	out->gid_index = index;
	out->port_num = port_num;
	/* The port is Ethernet: type 0 is RoCE v1, 1 is RoCE v2. */
	out->gid_type = e->type == 1 ? IBV_GID_TYPE_ROCE_V2
				     : IBV_GID_TYPE_ROCE_V1;
	out->ndev_ifindex = 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		      uint32_t gid_index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct snic_gid_entry e;
	int err;

	if (flags || entry_size < sizeof(*entry))
		return EINVAL;
	err = query_gid_entry(context, port_num, gid_index, &e);
	if (err)
		return err;
	fill_gid_entry(entry, &e, port_num, gid_index);
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context,
			     struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	struct hd_context *ctx = to_hd_ctx(context);
	size_t n = 0;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	for (uint32_t port = 1; port <= ctx->dattr.phys_port_cnt; port++) {
		struct ibv_port_attr pa;
		int err = query_port_full(context, (uint8_t)port, &pa);

		if (err)
			return -err;
		for (uint32_t i = 0; i < (uint32_t)pa.gid_tbl_len; i++) {
			struct snic_gid_entry e;

			err = query_gid_entry(context, port, i, &e);
			if (err == ENODATA)
				continue;
			if (err)
				return -err;
			if (n == max_entries)
				return -EINVAL;
			fill_gid_entry((struct ibv_gid_entry *)(void *)(
					       (char *)entries + n * entry_size),
				       &e, port, i);
			n++;
		}
	}
	return (ssize_t)n;
}

/* ------------------------------------------------------------------ */
/* P_Keys: RoCE has the one default P_Key.                              */

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
		   __be16 *pkey)
{
	struct hd_context *ctx = to_hd_ctx(context);

	if (port_num < 1 || port_num > ctx->dattr.phys_port_cnt ||
	    index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
		       __be16 pkey)
{
	__be16 p;

	for (int i = 0;; i++) {
		if (ibv_query_pkey(context, port_num, i, &p) != 0)
			return -1;
		if (p == pkey)
			return i;
	}
}
