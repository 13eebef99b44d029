/* SPDX-License-Identifier: MIT */
/*
 * The command channel: one mailbox per host context in the BAR
 * (hostif.h).  Inputs are copied out of the BAR before they are looked at
 * (the host may change them under us), every field is validated by the
 * object's module, and the status goes back with the output.
 */
#include <string.h>

#include "nic/top.h"
#include "nic/cm.h"

void ctx_destroy(struct snic_nic *nic, unsigned ctx)
{
	cm_ctx_gone(nic, ctx); /* its peers hear of it (nic/cm_router.c) */
	/* its own QPs, not a walk over all (objects/qp_slots.c) */
	for (uint32_t i = nic->sh->ctx_qp_head[ctx], next; i != QP_SLOT_NONE;
	     i = next) {
		next = nic->sh->qp_ctx_next[i];
		qp_destroy(nic, ctx, nic->qps[i].qpn);
	}
	for (uint32_t i = 0; i < SNIC_MAX_SRQ; i++)
		if (nic->srqs[i].in_use && nic->srqs[i].ctx == ctx)
			srq_destroy(nic, ctx, obj_handle(&nic->srqs[i].obj, i));
	for (uint32_t i = 0; i < SNIC_MAX_CQ; i++)
		if (nic->cqs[i].in_use && nic->cqs[i].ctx == ctx)
			nic->cqs[i].in_use = false;
	for (uint32_t i = 0; i < SNIC_MAX_MR && nic->sh->ctx_mrs[ctx]; i++) {
		struct snic_mr *mr = &nic->mrs[i];

		if (mr->in_use && mr->ctx == ctx && mr->mw_type)
			mw_free_now(nic, i); /* windows first: they hold MRs */
	}
	for (uint32_t i = 0; i < SNIC_MAX_MR && nic->sh->ctx_mrs[ctx]; i++) {
		struct snic_mr *mr = &nic->mrs[i];

		if (mr->in_use && mr->ctx == ctx)
			mr_dereg_now(nic, i);
	}
	for (uint32_t i = 0; i < SNIC_MAX_DM; i++)
		if (nic->dms[i].in_use && nic->dms[i].ctx == ctx)
			dm_free(nic, ctx, obj_handle(&nic->dms[i].obj, i));
	xrcd_ctx_gone(nic, ctx); /* after its XRC SRQs and QPs */
	for (uint32_t i = 0; i < SNIC_MAX_PD; i++)
		if (nic->pds[i].in_use && nic->pds[i].ctx == ctx)
			nic->pds[i].in_use = false;
	doorbell_ctx_open(nic, ctx, false);
	nic->core.ctx_pid[ctx] = 0;
	/* no pages at all until the board frees the slot (ctx_granted) */
	nic->core.seg_npages[ctx] = 0;
}

static void query_device(struct snic_nic *nic, struct snic_device_attr *d)
{
	memset(d, 0, sizeof(*d));
	d->node_guid = nic->core.cfg.node_guid;
	d->sys_image_guid = nic->core.cfg.node_guid;
	d->max_mr_size = nic->core.cfg.host_mem_size;
	d->page_size_cap = SNIC_PAGE_SIZE;
	d->vendor_id = SNIC_VENDOR_ID;
	d->vendor_part_id = SNIC_VENDOR_PART;
	d->hw_ver = 1;
	d->fw_ver_major = SNIC_FW_VER_MAJOR;
	d->fw_ver_minor = SNIC_FW_VER_MINOR;
	d->fw_ver_sub = SNIC_FW_VER_SUB;
	d->max_qp = SNIC_CTX_MAX_QP; /* the context's quota (objects/quota.c) */
	d->max_qp_wr = SNIC_MAX_QP_WR;
	/* IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B (objects/mw.c),
	 * IBV_DEVICE_XRC (transport/xrc.c) */
	d->device_cap_flags = (1u << 17) | (1u << 24) | SNIC_DEV_CAP_XRC;
	d->max_mw = SNIC_CTX_MAX_MR; /* windows and MRs share the MR slots */
	d->cap_ex_hi = (uint32_t)(SNIC_CAP_EX_ATOMIC_WRITE >> 32);
	d->max_dm_size = SNIC_DM_SIZE;
	d->max_mcast_grp = SNIC_MAX_MCAST_GRP;
	d->max_mcast_qp_attach = SNIC_MAX_MCAST_QP_ATTACH;
	d->max_total_mcast_qp_attach = SNIC_MAX_MCAST_GRP * SNIC_MAX_MCAST_QP_ATTACH;
	d->max_sge = SNIC_MAX_SGE;
	d->max_sge_rd = SNIC_MAX_SGE;
	d->max_cq = SNIC_CTX_MAX_CQ;
	d->max_cqe = SNIC_MAX_CQE - 1;
	d->max_mr = SNIC_CTX_MAX_MR;
	d->max_pd = SNIC_CTX_MAX_PD;
	d->max_qp_rd_atom = SNIC_MAX_RD_ATOM;
	d->max_qp_init_rd_atom = SNIC_MAX_RD_ATOM;
	/* responder resources exist for connected QPs only (qp_conn.c) */
	d->max_res_rd_atom = SNIC_MAX_RD_ATOM * SNIC_CTX_MAX_QP_CONN;
	d->atomic_cap = 1; /* IBV_ATOMIC_HCA */
	d->max_srq = SNIC_CTX_MAX_SRQ;
	d->max_srq_wr = SNIC_MAX_SRQ_WR;
	d->max_srq_sge = SNIC_MAX_SGE;
	d->max_ah = SNIC_MAX_AH;
	d->max_pkeys = 1;
	d->max_inline = SNIC_MAX_INLINE;
	d->phys_port_cnt = 1;
	d->max_msg_size = SNIC_MAX_MSG_SIZE;
}

static int query_port(struct snic_nic *nic, const struct snic_cmd_port *in,
		      struct snic_port_attr *p)
{
	if (in->port_num != 1)
		return SNIC_ST_INVAL;
	memset(p, 0, sizeof(*p));
	bool up = nic->core.ops->link_up(nic->core.hal_ctx, 0) != 0;

	p->state = up ? 4 /* IBV_PORT_ACTIVE */ : 1 /* IBV_PORT_DOWN */;
	p->phys_state = up ? 5 /* LinkUp */ : 3 /* Disabled */;
	p->max_mtu = nic->core.active_mtu_enum;
	p->active_mtu = nic->core.active_mtu_enum;
	p->gid_tbl_len = SNIC_GID_TBL_LEN;
	p->port_cap_flags = 1u << 26; /* IBV_PORT_IP_BASED_GIDS */
	p->max_msg_sz = SNIC_MAX_MSG_SIZE;
	p->pkey_tbl_len = 1;
	p->active_width = 1;  /* 1X */
	p->active_speed = 32; /* 25 Gb/s (EDR lane): nominal for software */
	p->link_layer = 2;    /* IBV_LINK_LAYER_ETHERNET */
	p->eth_mtu = nic->core.cfg.eth_mtu;
	return SNIC_ST_OK;
}

/* GID 0: RoCE v2, the port's IPv4 address mapped into IPv6 (A17.4.5);
 * GID 1: RoCE v2, the port's IPv6 address, empty (NOENT) without one. */
static int query_gid(struct snic_nic *nic, const struct snic_cmd_gid_query *in,
		     struct snic_gid_entry *g)
{
	if (in->port_num != 1 || in->index >= SNIC_GID_TBL_LEN)
		return SNIC_ST_INVAL;
	memset(g, 0, sizeof(*g));
	if (in->index == SNIC_GID_IPV6) {
		if (!wire_is_my_ip6(&nic->core, nic->core.cfg.ipv6))
			return SNIC_ST_NOENT;
		memcpy(g->gid, nic->core.cfg.ipv6, 16);
	} else {
		ipv4_to_gid(nic->core.cfg.ipv4, g->gid);
	}
	g->type = 1;
	return SNIC_ST_OK;
}

/* Execute one command for an open context; in/out are our own copies. */
static int cmd_exec(struct snic_nic *nic, unsigned ctx, uint16_t op,
		    const uint8_t *in, uint8_t *out)
{
	struct snic_cmd_handle *ho = (struct snic_cmd_handle *)out;
	const struct snic_cmd_handle *hi = (const struct snic_cmd_handle *)in;
	int st = quota_check(nic, ctx, op, in);

	if (st)
		return st;
	switch (op) {
	case SNIC_CMD_NOP:
		return SNIC_ST_OK;
	case SNIC_CMD_QUERY_DEVICE:
		query_device(nic, (struct snic_device_attr *)out);
		return SNIC_ST_OK;
	case SNIC_CMD_QUERY_PORT:
		return query_port(nic, (const void *)in, (void *)out);
	case SNIC_CMD_QUERY_GID:
		return query_gid(nic, (const void *)in, (void *)out);
	case SNIC_CMD_ALLOC_PD:
		return pd_alloc(nic, ctx, &ho->handle);
	case SNIC_CMD_DEALLOC_PD:
		return pd_dealloc(nic, ctx, hi->handle);
	case SNIC_CMD_REG_MR:
		return mr_reg(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_DEREG_MR:
		return mr_dereg(nic, ctx, hi->handle);
	case SNIC_CMD_CREATE_CQ:
		return cq_create(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_DESTROY_CQ:
		return cq_destroy(nic, ctx, hi->handle);
	case SNIC_CMD_CREATE_QP:
		return qp_create_ext(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_MODIFY_QP:
		return qp_modify(nic, ctx, (const void *)in);
	case SNIC_CMD_QUERY_QP:
		return qp_query(nic, ctx, hi->handle, (void *)out);
	case SNIC_CMD_DESTROY_QP:
		return qp_destroy(nic, ctx, hi->handle);
	case SNIC_CMD_CREATE_SRQ:
		return srq_create(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_MODIFY_SRQ:
		return srq_modify(nic, ctx, (const void *)in);
	case SNIC_CMD_QUERY_SRQ:
		return srq_query(nic, ctx, hi->handle, (void *)out);
	case SNIC_CMD_DESTROY_SRQ:
		return srq_destroy(nic, ctx, hi->handle);
	case SNIC_CMD_REREG_MR:
		return mr_rereg(nic, ctx, (const void *)in);
	case SNIC_CMD_RESIZE_CQ:
		return cq_resize(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_ALLOC_DM:
		return dm_alloc(nic, ctx, (const void *)in, (void *)out);
	case SNIC_CMD_FREE_DM:
		return dm_free(nic, ctx, hi->handle);
	case SNIC_CMD_REG_DM_MR:
		return dm_reg_mr(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_OPEN_XRCD:
		return xrcd_open(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_CLOSE_XRCD:
		return xrcd_close(nic, ctx, hi->handle);
	case SNIC_CMD_MCAST_ATTACH:
		return mcast_attach(nic, ctx, (const void *)in);
	case SNIC_CMD_MCAST_DETACH:
		return mcast_detach(nic, ctx, (const void *)in);
	case SNIC_CMD_FLOW_CREATE:
		return flow_create(nic, ctx, (const void *)in, &ho->handle);
	case SNIC_CMD_FLOW_DESTROY:
		return flow_destroy(nic, ctx, hi->handle);
	default:
		if (op == SNIC_CMD_ALLOC_MW)
			return mw_alloc(nic, ctx, (const void *)in, &ho->handle);
		if (op == SNIC_CMD_DEALLOC_MW)
			return mw_dealloc(nic, ctx, hi->handle);
		if ((op >= SNIC_CMD_CM_OPEN && op < SNIC_CMD_CM_END) ||
		    (op >= SNIC_CMD_CM_SEND6 && op < SNIC_CMD_CM6_END))
			return cm_cmd(nic, ctx, op, in, out);
		return SNIC_ST_BADOP;
	}
}

static int ctx_cmd(struct snic_nic *nic, unsigned ctx, uint16_t op,
		   const uint8_t *in, uint8_t *out)
{
	struct snic_ctx_slot *s = core_ctx_slot(&nic->core, ctx);

	if (op == SNIC_CMD_CTX_OPEN) {
		/* a slot the board opened (nic/grant.c) is not the host's to
		 * reopen, with or without the segment; a board whose BAR file
		 * others read opens every context itself (fw.h broker_only) */
		if (nic->core.ctx_granted[ctx] || nic->core.cfg.broker_only)
			return SNIC_ST_PERM;
		if (nic->core.ctx_open[ctx])
			return SNIC_ST_BUSY;
		doorbell_ctx_open(nic, ctx, true);
		/* our copy of the owner: the BAR's may be rewritten by anyone
		 * (nic/guard.c puts it back) */
		nic->core.ctx_pid[ctx] = ((const struct snic_cmd_ctx_open *)in)->pid;
		/* The event queue starts empty for both sides: the consumer
		 * index too, or a previous owner's value makes the queue look
		 * full and every event of the new owner is dropped. */
		nic->core.eq_pi[ctx] = 0;
		atomic_store_explicit(&s->eq_ci, 0, memory_order_relaxed);
		atomic_store_explicit(&s->eq_pi, 0, memory_order_release);
		atomic_store_explicit(&s->state, SNIC_CTX_OPEN, memory_order_release);
		return SNIC_ST_OK;
	}
	if (!nic->core.ctx_open[ctx])
		return SNIC_ST_INVAL;
	if (op == SNIC_CMD_CTX_CLOSE) {
		ctx_destroy(nic, ctx);
		return SNIC_ST_OK;
	}
	return cmd_exec(nic, ctx, op, in, out);
}

/* Ring the command doorbell for ourselves: the bits' commands are looked
 * at again next pass (over budget). */
static void cmd_ring_self(struct snic_nic *nic, uint64_t bits)
{
	atomic_fetch_or_explicit(&nic->core.db->cmd_bits, bits, memory_order_relaxed);
	atomic_fetch_or_explicit(&nic->core.db->summary, SNIC_DB_SUMMARY_CMD,
				 memory_order_release);
}

static unsigned cmd_one(struct snic_nic *nic, unsigned ctx)
{
	struct snic_ctx_slot *s = core_ctx_slot(&nic->core, ctx);
	/* aligned to 8: command structs hold 64-bit fields */
	uint64_t in[SNIC_CMD_DATA_SIZE / 8], out[SNIC_CMD_DATA_SIZE / 8];
	uint32_t seq = atomic_load_explicit(&s->cmd_seq, memory_order_acquire);
	uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
	uint16_t op;
	int st;

	if (seq == atomic_load_explicit(&s->cmd_done, memory_order_relaxed))
		return 0;
	op = s->cmd.opcode;
	memcpy(in, s->cmd.in, sizeof(in));
	memset(out, 0, sizeof(out));
	/* An open context is the firmware's to know, whatever another
	 * process wrote into its slot's state (nic/guard.c). */
	if (state == SNIC_CTX_FREE && !nic->core.ctx_open[ctx])
		st = SNIC_ST_INVAL;
	else
		st = ctx_cmd(nic, ctx, op, (const uint8_t *)in, (uint8_t *)out);
	if (st == SNIC_MR_PENDING) {
		/* not done yet: the host keeps waiting, we ask again in
		 * SNIC_CMD_RETRY_NS, not every pass (each asking parks the
		 * other cores and walks every QP) */
		if (!nic->core.cmd_wait)
			nic->core.cmd_wait_at = nic->core.now + SNIC_CMD_RETRY_NS;
		nic->core.cmd_wait |= 1ull << ctx;
		return 1;
	}
	CNT_INC(&nic->core, commands);
	if (st)
		CNT_INC(&nic->core, command_errors);
	memcpy(s->cmd.out, out, sizeof(out));
	s->cmd.status = (uint32_t)st;
	atomic_store_explicit(&s->cmd_done, seq, memory_order_release);
	nic->core.ops->notify_host(nic->core.hal_ctx, &s->cmd_done);
	return 1;
}

/* Of the contexts in bits (the command doorbell: anyone can ring it) and
 * those waiting whose time has come, the ones with a command not yet
 * answered: only these are worth parking the other cores for. */
uint64_t cmd_due(struct snic_nic *nic, uint64_t bits)
{
	uint64_t due = 0;

	if (nic->core.cmd_wait && nic->core.now >= nic->core.cmd_wait_at) {
		bits |= nic->core.cmd_wait;
		nic->core.cmd_wait = 0;
	}
	while (bits) {
		unsigned ctx = (unsigned)__builtin_ctzll(bits);
		struct snic_ctx_slot *s = core_ctx_slot(&nic->core, ctx);

		bits &= bits - 1;
		if (atomic_load_explicit(&s->cmd_seq, memory_order_acquire) !=
		    atomic_load_explicit(&s->cmd_done, memory_order_relaxed))
			due |= 1ull << ctx;
	}
	return due;
}

unsigned cmd_poll(struct snic_nic *nic, uint64_t bits)
{
	unsigned work = 0;

	while (bits && work < SNIC_CMD_BUDGET) {
		unsigned ctx = (unsigned)__builtin_ctzll(bits);

		bits &= bits - 1;
		work += cmd_one(nic, ctx);
	}
	/* over budget: ring again for ourselves so nothing is lost */
	if (bits)
		cmd_ring_self(nic, bits);
	return work;
}
