/* SPDX-License-Identifier: MIT */
/* The fake host driver and the two-NIC simulation of fake_host.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"

/* ---------------------------------------------------------------------- */
/* Device.                                                                 */

void fdev_ipv6(uint32_t ipv4, uint8_t ip6[16])
{
	static const uint8_t pfx[4] = { 0xfd, 0x00, 0x5e, 0x1c };

	memset(ip6, 0, 16);
	memcpy(ip6, pfx, 4);
	for (int i = 0; i < 4; i++)
		ip6[12 + i] = (uint8_t)(ipv4 >> (24 - 8 * i));
}

void fdev_init(struct fdev *d, const char *name, const uint8_t mac[6],
	       uint32_t ipv4, uint32_t eth_mtu)
{
	memset(d, 0, sizeof(*d));
	fake_hal_init(&d->hal, FDEV_MEM_SIZE);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->ncores = fdev_cores();
	fake_hal_set_rx_queues(&d->hal, fake_hal_rx_queues ? fake_hal_rx_queues
							   : d->ncores);
	d->nic_mem = aligned_alloc(64, (snic_nic_size_cores(d->ncores) + 63) &
				   ~(size_t)63);
	d->bar = aligned_alloc(64, SNIC_BAR_SIZE);
	if (!d->nic_mem || !d->bar)
		abort();
	memset(d->nic_mem, 0, snic_nic_size_cores(d->ncores));
	memset(d->bar, 0, SNIC_BAR_SIZE);
	d->cfg.name = d->name;
	d->cfg.host_mem = "fake-host-mem";
	d->cfg.host_mem_size = FDEV_MEM_SIZE;
	memcpy(d->cfg.mac, mac, 6);
	d->cfg.ipv4 = ipv4;
	fdev_ipv6(ipv4, d->cfg.ipv6);
	d->cfg.eth_mtu = eth_mtu;
	d->cfg.node_guid = 0x0200000000000000ull | ipv4;
	d->cfg.cores_in_turn = 1;
	d->nic = snic_nic_init_cores(d->nic_mem, &d->cfg, &d->hal.hal, d->bar,
				     d->ncores);
	/* leave page 0 unused: pa 0 stays an obviously wrong address */
	d->bump = SNIC_PAGE_SIZE;
}

unsigned fdev_fini(struct fdev *d)
{
	unsigned leaked;

	if (d->nic)
		snic_nic_fini(d->nic);
	leaked = fake_hal_fini(&d->hal);
	free(d->nic_mem);
	free(d->bar);
	d->nic = NULL;
	return leaked;
}

uint64_t fdev_alloc(struct fdev *d, uint64_t size, uint64_t align)
{
	uint64_t pa;

	if (align < 64)
		align = 64;
	pa = (d->bump + align - 1) & ~(align - 1);
	if (pa + size > d->hal.mem_size)
		abort(); /* a test asked for too much: its own bug */
	d->bump = pa + size;
	return pa;
}

void *fdev_ptr(struct fdev *d, uint64_t pa)
{
	return d->hal.mem + pa;
}

struct snic_ctx_slot *fdev_slot(struct fdev *d, unsigned slot)
{
	return (struct snic_ctx_slot *)(d->bar + SNIC_BAR_CTX_OFF +
					(size_t)slot * SNIC_CTX_SLOT_SIZE);
}

uint64_t fdev_counter(struct fdev *d, const char *name)
{
	for (unsigned i = 0; i < snic_nic_counter_count(); i++)
		if (strcmp(snic_nic_counter_name(i), name) == 0)
			return snic_nic_counter(d->nic, i);
	fprintf(stderr, "fdev_counter: no counter %s\n", name);
	abort();
}

/* Firmware cores per fake NIC: $SNIC_UNIT_CORES (1..16), else 1.  The
 * cores are polled in turn, core 0 first (cfg.cores_in_turn). */
unsigned fdev_cores_force; /* a test's own count, over the environment */

unsigned fdev_cores(void)
{
	const char *e = getenv("SNIC_UNIT_CORES");

	if (fdev_cores_force)
		return fdev_cores_force;
	unsigned n = e ? (unsigned)atoi(e) : 1;

	return n >= 1 && n <= 16 ? n : 1;
}

/* One pass of every core of the NIC. */
unsigned fdev_pass(struct fdev *d)
{
	unsigned work = 0, n = snic_nic_ncores(d->nic);

	for (unsigned k = 0; k < n; k++)
		work += snic_nic_poll(snic_nic_core(d->nic, k));
	return work;
}

unsigned fdev_poll(struct fdev *d, unsigned passes)
{
	unsigned work = 0;

	while (passes--)
		work += fdev_pass(d);
	return work;
}

/* ---------------------------------------------------------------------- */
/* Commands.                                                               */

static struct snic_doorbells *dbs(struct fdev *d)
{
	return (struct snic_doorbells *)(d->bar + SNIC_BAR_DB_OFF);
}

void fctx_cmd_post(struct fctx *c, uint16_t op, const void *in,
		   uint32_t inlen)
{
	struct snic_ctx_slot *s = fdev_slot(c->dev, c->slot);
	uint32_t n;

	memset(s->cmd.in, 0, sizeof(s->cmd.in));
	if (in)
		memcpy(s->cmd.in, in, inlen);
	s->cmd.opcode = op;
	s->cmd.status = FST_TIMEOUT;
	n = ++c->seq;
	if (n == atomic_load(&s->cmd_done))
		n = ++c->seq;
	atomic_store_explicit(&s->cmd_seq, n, memory_order_release);
	atomic_fetch_or(&dbs(c->dev)->cmd_bits, 1ull << c->slot);
	atomic_fetch_or(&dbs(c->dev)->summary, SNIC_DB_SUMMARY_CMD);
}

int fctx_cmd_status(struct fctx *c, void *out, uint32_t outlen)
{
	struct snic_ctx_slot *s = fdev_slot(c->dev, c->slot);

	if (atomic_load_explicit(&s->cmd_done, memory_order_acquire) != c->seq)
		return FST_TIMEOUT;
	if (out)
		memcpy(out, s->cmd.out, outlen);
	return (int)s->cmd.status;
}

int fctx_cmd(struct fctx *c, uint16_t op, const void *in, uint32_t inlen,
	     void *out, uint32_t outlen)
{
	fctx_cmd_post(c, op, in, inlen);
	for (unsigned i = 0; i < FDEV_CMD_POLLS; i++) {
		int st;

		fdev_pass(c->dev);
		st = fctx_cmd_status(c, out, outlen);
		if (st != FST_TIMEOUT)
			return st;
	}
	return FST_TIMEOUT;
}

int fctx_open(struct fctx *c, struct fdev *d, unsigned slot)
{
	struct snic_ctx_slot *s = fdev_slot(d, slot);
	struct snic_cmd_ctx_open o = { .pid = 4242 + slot };
	uint32_t expect = SNIC_CTX_FREE;

	memset(c, 0, sizeof(*c));
	c->dev = d;
	c->slot = slot;
	if (!atomic_compare_exchange_strong(&s->state, &expect, SNIC_CTX_CLAIMED))
		return SNIC_ST_BUSY;
	atomic_store(&s->owner_pid, o.pid);
	c->seq = atomic_load(&s->cmd_done);
	return fctx_cmd(c, SNIC_CMD_CTX_OPEN, &o, sizeof(o), NULL, 0);
}

int fctx_alloc_pd(struct fctx *c, uint32_t *pdn)
{
	struct snic_cmd_handle h = { 0 };
	int st = fctx_cmd(c, SNIC_CMD_ALLOC_PD, NULL, 0, &h, sizeof(h));

	*pdn = h.handle;
	return st;
}

int fctx_dealloc_pd(struct fctx *c, uint32_t pdn)
{
	struct snic_cmd_handle h = { .handle = pdn };

	return fctx_cmd(c, SNIC_CMD_DEALLOC_PD, &h, sizeof(h), NULL, 0);
}

int fctx_reg_mr_raw(struct fctx *c, const struct snic_cmd_reg_mr *in,
		    uint32_t *key)
{
	struct snic_cmd_handle h = { 0 };
	int st = fctx_cmd(c, SNIC_CMD_REG_MR, in, sizeof(*in), &h, sizeof(h));

	if (key)
		*key = h.handle;
	return st;
}

int fctx_reg_mr_pages(struct fctx *c, uint32_t pdn, uint64_t iova,
		      uint64_t len, const uint32_t *pages, uint32_t npages,
		      uint32_t access, uint32_t *key)
{
	struct snic_cmd_reg_mr in = { 0 };

	in.pdn = pdn;
	in.access = access;
	in.iova = iova;
	in.length = len;
	in.npages = npages;
	in.pages_pa = fdev_alloc(c->dev, (uint64_t)npages * 4 + 4, 64);
	if (npages)
		memcpy(fdev_ptr(c->dev, in.pages_pa), pages, (size_t)npages * 4);
	return fctx_reg_mr_raw(c, &in, key);
}

int fctx_reg_mr(struct fctx *c, uint32_t pdn, uint64_t pa, uint64_t len,
		uint32_t access, uint32_t *key)
{
	uint64_t off = pa & (SNIC_PAGE_SIZE - 1);
	uint32_t npages = (uint32_t)((off + len + SNIC_PAGE_SIZE - 1) >>
				     SNIC_PAGE_SHIFT);
	uint32_t *pages = calloc(npages + 1, 4);
	int st;

	for (uint32_t i = 0; i < npages; i++)
		pages[i] = (uint32_t)((pa >> SNIC_PAGE_SHIFT) + i);
	st = fctx_reg_mr_pages(c, pdn, pa, len, pages, npages, access, key);
	free(pages);
	return st;
}

int fctx_dereg_mr(struct fctx *c, uint32_t key)
{
	struct snic_cmd_handle h = { .handle = key };

	return fctx_cmd(c, SNIC_CMD_DEREG_MR, &h, sizeof(h), NULL, 0);
}

/* ---------------------------------------------------------------------- */
/* CQ.                                                                     */

int fcq_create(struct fcq *cq, struct fctx *c, uint32_t cnt)
{
	struct snic_cmd_create_cq in = { 0 };
	struct snic_cmd_handle h = { 0 };
	int st;

	memset(cq, 0, sizeof(*cq));
	cq->ctx = c;
	cq->cnt = cnt;
	cq->ring_pa = fdev_alloc(c->dev, (uint64_t)cnt * 64, 64);
	cq->dbrec_pa = fdev_alloc(c->dev, 64, 64);
	in.ring_pa = cq->ring_pa;
	in.dbrec_pa = cq->dbrec_pa;
	in.cqe_cnt = cnt;
	st = fctx_cmd(c, SNIC_CMD_CREATE_CQ, &in, sizeof(in), &h, sizeof(h));
	cq->cqn = h.handle;
	return st;
}

int fcq_destroy(struct fcq *cq)
{
	struct snic_cmd_handle h = { .handle = cq->cqn };

	return fctx_cmd(cq->ctx, SNIC_CMD_DESTROY_CQ, &h, sizeof(h), NULL, 0);
}

int fcq_resize(struct fcq *cq, uint32_t cnt, uint32_t *moved)
{
	struct snic_cmd_resize_cq in = { .cqn = cq->cqn, .cqe_cnt = cnt };
	struct snic_cmd_handle h = { 0 };
	int st;

	in.ring_pa = fdev_alloc(cq->ctx->dev, (uint64_t)cnt * 64, 64);
	in.dbrec_pa = fdev_alloc(cq->ctx->dev, 64, 64);
	st = fctx_cmd(cq->ctx, SNIC_CMD_RESIZE_CQ, &in, sizeof(in), &h,
		      sizeof(h));
	if (st == SNIC_ST_OK) {
		cq->ring_pa = in.ring_pa;
		cq->dbrec_pa = in.dbrec_pa;
		cq->cnt = cnt;
		cq->ci = 0;
		*moved = h.handle;
	}
	return st;
}

int fcq_poll(struct fcq *cq, struct snic_cqe *out)
{
	struct fdev *d = cq->ctx->dev;
	struct snic_cqe *ring = fdev_ptr(d, cq->ring_pa);
	struct snic_cqe *e = &ring[cq->ci & (cq->cnt - 1)];
	struct snic_cq_dbrec *db = fdev_ptr(d, cq->dbrec_pa);
	uint8_t want = (uint8_t)(((cq->ci / cq->cnt) & 1) ^ 1);

	if ((e->owner & 1) != want)
		return 0;
	atomic_thread_fence(memory_order_acquire);
	*out = *e;
	cq->ci++;
	atomic_store_explicit(&db->ci, cq->ci, memory_order_release);
	return 1;
}

/* ---------------------------------------------------------------------- */
/* QP.                                                                     */

static uint32_t log2_ceil(uint32_t v)
{
	uint32_t l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

int fqp_create(struct fqp *qp, struct fctx *c, uint32_t pdn, struct fcq *scq,
	       struct fcq *rcq, const struct fqp_caps *caps)
{
	struct snic_cmd_create_qp in = { 0 };
	struct snic_cmd_handle h = { 0 };
	uint32_t sq_need, rq_need;
	int st;

	memset(qp, 0, sizeof(*qp));
	qp->ctx = c;
	qp->pdn = pdn;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->sq_cnt = caps->sq_cnt;
	qp->rq_cnt = caps->rq_cnt;
	qp->max_send_sge = caps->max_send_sge;
	qp->max_recv_sge = caps->max_recv_sge;
	qp->max_inline = caps->max_inline;
	sq_need = 64 + (caps->max_send_sge * 16 > caps->max_inline
			? caps->max_send_sge * 16 : caps->max_inline);
	rq_need = 16 + caps->max_recv_sge * 16;
	qp->sq_stride_log = log2_ceil(sq_need);
	if (qp->sq_stride_log < 6)
		qp->sq_stride_log = 6;
	qp->rq_stride_log = log2_ceil(rq_need);
	if (qp->rq_stride_log < 5)
		qp->rq_stride_log = 5;
	qp->sq_pa = fdev_alloc(c->dev, (uint64_t)qp->sq_cnt << qp->sq_stride_log,
			       caps->compact ? 64 : SNIC_PAGE_SIZE);
	qp->rq_pa = fdev_alloc(c->dev, (uint64_t)qp->rq_cnt << qp->rq_stride_log,
			       caps->compact ? 64 : SNIC_PAGE_SIZE);
	qp->dbrec_pa = fdev_alloc(c->dev, 64, 64);
	in.pdn = pdn;
	in.qp_type = 2;
	in.send_cqn = scq->cqn;
	in.recv_cqn = rcq->cqn;
	in.sq_wqe_cnt = qp->sq_cnt;
	in.sq_stride_log = qp->sq_stride_log;
	in.rq_wqe_cnt = qp->rq_cnt;
	in.rq_stride_log = qp->rq_stride_log;
	in.sq_pa = qp->sq_pa;
	in.rq_pa = qp->rq_pa;
	in.dbrec_pa = qp->dbrec_pa;
	in.max_send_sge = caps->max_send_sge;
	in.max_recv_sge = caps->max_recv_sge;
	in.max_inline = caps->max_inline;
	in.sq_sig_all = caps->sig_all;
	if (caps->qp_type)
		in.qp_type = qp->type = caps->qp_type;
	else
		qp->type = SNIC_QPT_RC;
	struct snic_cmd_create_qp_ext ext = {
		.qp = in, .flags = caps->srq ? SNIC_QP_F_SRQ : 0, .srqn = caps->srqn,
		.xrcd = caps->xrcd,
	};
	st = fctx_cmd(c, SNIC_CMD_CREATE_QP, &ext, sizeof(ext), &h, sizeof(h));
	qp->qpn = h.handle;
	return st;
}

int fqp_destroy(struct fqp *qp)
{
	struct snic_cmd_handle h = { .handle = qp->qpn };

	return fctx_cmd(qp->ctx, SNIC_CMD_DESTROY_QP, &h, sizeof(h), NULL, 0);
}

int fqp_modify(struct fqp *qp, uint32_t mask, const struct snic_qp_attr *a)
{
	struct snic_cmd_modify_qp in;
	int st;

	memset(&in, 0, sizeof(in));
	in.qpn = qp->qpn;
	in.attr_mask = mask;
	in.attr = *a;
	st = fctx_cmd(qp->ctx, SNIC_CMD_MODIFY_QP, &in, sizeof(in), NULL, 0);
	/* the host driver resets its ring indexes with the QP */
	if (st == SNIC_ST_OK && (mask & SNIC_QP_STATE) &&
	    a->qp_state == SNIC_QPS_RESET) {
		struct snic_qp_dbrec *db = fdev_ptr(qp->ctx->dev, qp->dbrec_pa);

		qp->sq_pi = qp->rq_pi = 0;
		atomic_store(&db->sq_pi, 0);
		atomic_store(&db->rq_pi, 0);
	}
	return st;
}

int fqp_query(struct fqp *qp, struct snic_qp_attr *out)
{
	struct snic_cmd_handle h = { .handle = qp->qpn };

	memset(out, 0, sizeof(*out));
	return fctx_cmd(qp->ctx, SNIC_CMD_QUERY_QP, &h, sizeof(h), out,
			sizeof(*out));
}

uint32_t fqp_state(struct fqp *qp)
{
	struct snic_qp_attr a;

	if (fqp_query(qp, &a) != SNIC_ST_OK)
		return 0xffffffffu;
	return a.qp_state;
}

void fconn_default(struct fconn *p)
{
	memset(p, 0, sizeof(*p));
	p->path_mtu = 3; /* 1024 */
	p->access = SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_WRITE |
		    SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_ATOMIC;
	p->min_rnr_timer = 1; /* 10 us */
	p->rnr_retry = 7;
	p->retry_cnt = 7;
	p->timeout = 14;
	p->max_rd_atomic = 16;
	p->sq_psn_a = 0x100;
	p->sq_psn_b = 0x200;
}

int fqp_to_rts(struct fqp *qp, uint32_t dip, uint32_t dqpn, uint32_t rq_psn,
	       uint32_t sq_psn, const struct fconn *p)
{
	uint8_t gid[16] = { 0 };

	gid[10] = gid[11] = 0xff;
	for (int i = 0; i < 4; i++)
		gid[12 + i] = (uint8_t)(dip >> (24 - 8 * i));
	return fqp_to_rts_gid(qp, gid, 0, dqpn, rq_psn, sq_psn, p);
}

int fqp_to_rts_gid(struct fqp *qp, const uint8_t dgid[16], uint8_t sgid_index,
		   uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn,
		   const struct fconn *p)
{
	struct snic_qp_attr a;
	int st;

	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = p->access;
	st = fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_PKEY_INDEX | SNIC_QP_PORT |
			SNIC_QP_ACCESS_FLAGS, &a);
	if (st)
		return st;
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_RTR;
	a.path_mtu = p->path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = p->max_rd_atomic;
	a.min_rnr_timer = p->min_rnr_timer;
	a.is_global = 1;
	a.hop_limit = 64;
	a.sgid_index = sgid_index;
	a.flow_label = p->flow_label;
	a.traffic_class = p->traffic_class;
	memcpy(a.dgid, dgid, 16);
	/* no RC-only attributes for UC; an XRC initiator has no responder
	 * attributes, an XRC target no requester ones (Annex A14) */
	bool uc = qp->type == SNIC_QPT_UC;
	bool no_resp = uc || qp->type == SNIC_QPT_XRC_SEND;
	bool no_req = uc || qp->type == SNIC_QPT_XRC_RECV;
	st = fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_AV | SNIC_QP_PATH_MTU |
			SNIC_QP_DEST_QPN | SNIC_QP_RQ_PSN | (no_resp ? 0 :
			SNIC_QP_MAX_DEST_RD_ATOMIC | SNIC_QP_MIN_RNR_TIMER), &a);
	if (st)
		return st;
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.max_rd_atomic = p->max_rd_atomic;
	return fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_SQ_PSN | (uc ? 0 :
			  SNIC_QP_TIMEOUT) | (no_req ? 0 : SNIC_QP_RETRY_CNT |
			  SNIC_QP_RNR_RETRY | SNIC_QP_MAX_QP_RD_ATOMIC), &a);
}

int fqp_connect(struct fqp *a, struct fqp *b, const struct fconn *p)
{
	int st;

	if (p->ip6) {   /* GID 1 of each side: the IPv6 addresses */
		st = fqp_to_rts_gid(a, b->ctx->dev->cfg.ipv6, 1, b->qpn,
				    p->sq_psn_b, p->sq_psn_a, p);
		return st ? st : fqp_to_rts_gid(b, a->ctx->dev->cfg.ipv6, 1,
						a->qpn, p->sq_psn_a,
						p->sq_psn_b, p);
	}
	st = fqp_to_rts(a, b->ctx->dev->cfg.ipv4, b->qpn, p->sq_psn_b,
			p->sq_psn_a, p);
	if (st)
		return st;
	return fqp_to_rts(b, a->ctx->dev->cfg.ipv4, a->qpn, p->sq_psn_a,
			  p->sq_psn_b, p);
}

static struct snic_qp_dbrec *qp_dbrec(struct fqp *qp)
{
	return fdev_ptr(qp->ctx->dev, qp->dbrec_pa);
}

void fqp_ring(struct fqp *qp)
{
	struct fctx *c = qp->ctx;
	struct snic_ctx_doorbells *cdb = (struct snic_ctx_doorbells *)(void *)(
		(uint8_t *)fdev_slot(c->dev, c->slot) + SNIC_CTX_DB_OFF);

	uint32_t i = qp->qpn & (SNIC_MAX_QP - 1);

	/* as the host driver: the context's own doorbell page, the group
	 * words of the QP's core */
	snic_db_ring_ctx(dbs(c->dev), cdb, c->slot, i,
			 snic_db_core(i, atomic_load(&fdev_slot(c->dev,
							      c->slot)->db_cores)));
}

void fqp_write_send(struct fqp *qp, const struct fwr *wr)
{
	uint64_t pa = qp->sq_pa + ((uint64_t)(qp->sq_pi & (qp->sq_cnt - 1))
				   << qp->sq_stride_log);
	uint8_t *w = fdev_ptr(qp->ctx->dev, pa);
	/* where the host driver puts the data (hostif.h) */
	uint8_t *data = w + snic_wqe_data_off(qp->type, wr->opcode);
	struct snic_send_wqe hdr;

	memset(w, 0, 1u << qp->sq_stride_log);
	memset(&hdr, 0, sizeof(hdr));
	hdr.ctrl.wr_id = wr->wr_id;
	hdr.ctrl.opcode = wr->opcode;
	hdr.ctrl.flags = wr->flags;
	hdr.ctrl.imm_data = wr->imm;
	hdr.ctrl.xrc_srqn = wr->xrc_srqn;
	hdr.raddr.remote_addr = wr->remote_addr;
	hdr.raddr.rkey = wr->rkey;
	hdr.atomic.compare_add = wr->compare_add;
	hdr.atomic.swap = wr->swap;
	if (wr->ud)
		memcpy(&hdr.raddr, wr->ud, sizeof(*wr->ud));
	hdr.ctrl.inline_len = (wr->flags & SNIC_SEND_INLINE) ? wr->inline_len : 0;
	hdr.ctrl.num_sge = (wr->flags & SNIC_SEND_INLINE) ? 0
							 : (uint8_t)wr->num_sge;
	/* the header first: at 48 the data takes the atomic operands' place */
	memcpy(w, &hdr, sizeof(hdr));
	if (wr->flags & SNIC_SEND_INLINE)
		memcpy(data, wr->inline_data, wr->inline_len);
	else if (wr->num_sge) /* sge may be NULL then (UBSan: memcpy) */
		memcpy(data, wr->sge, (size_t)wr->num_sge * 16);
	qp->sq_pi++;
	atomic_store_explicit(&qp_dbrec(qp)->sq_pi, qp->sq_pi,
			      memory_order_release);
}

void fqp_post_send(struct fqp *qp, const struct fwr *wr)
{
	fqp_write_send(qp, wr);
	fqp_ring(qp);
}

void fqp_post_recv(struct fqp *qp, uint64_t wr_id,
		   const struct snic_wqe_sge *sge, uint32_t num_sge)
{
	uint64_t pa = qp->rq_pa + ((uint64_t)(qp->rq_pi & (qp->rq_cnt - 1))
				   << qp->rq_stride_log);
	uint8_t *w = fdev_ptr(qp->ctx->dev, pa);
	struct snic_recv_wqe hdr = { .wr_id = wr_id, .num_sge = num_sge };

	if (num_sge)
		memcpy(w + sizeof(hdr), sge, (size_t)num_sge * 16);
	memcpy(w, &hdr, sizeof(hdr));
	qp->rq_pi++;
	atomic_store_explicit(&qp_dbrec(qp)->rq_pi, qp->rq_pi,
			      memory_order_release);
	fqp_ring(qp);
}

/* ---------------------------------------------------------------------- */
/* Simulation.                                                             */

struct fsim *fsim_new(uint32_t eth_mtu)
{
	static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
	static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
	struct fsim *s = calloc(1, sizeof(*s));

	if (!s)
		abort();
	fdev_init(&s->a, "snic0", mac_a, FSIM_IP_A, eth_mtu);
	fdev_init(&s->b, "snic1", mac_b, FSIM_IP_B, eth_mtu);
	s->clock = 1000000;
	s->a.hal.clock = &s->clock;
	s->b.hal.clock = &s->clock;
	s->step_ns = FSIM_STEP_NS;
	fake_link_init(&s->link, &s->a.hal, &s->b.hal);
	return s;
}

unsigned fsim_free(struct fsim *s)
{
	unsigned leaked;

	fake_link_fini(&s->link);
	leaked = fdev_fini(&s->a) + fdev_fini(&s->b);
	free(s);
	return leaked;
}

void fsim_step(struct fsim *s)
{
	s->clock += s->step_ns;
	s->steps++;
	fdev_pass(&s->a);
	fdev_pass(&s->b);
}

bool fsim_run(struct fsim *s, bool (*cond)(void *arg), void *arg,
	      unsigned max_steps)
{
	for (unsigned i = 0; i < max_steps; i++) {
		if (cond && cond(arg))
			return true;
		fsim_step(s);
	}
	return cond ? cond(arg) : true;
}

bool fsim_poll_cq(struct fsim *s, struct fcq *cq, struct snic_cqe *out,
		  unsigned max_steps)
{
	for (unsigned i = 0; i <= max_steps; i++) {
		if (fcq_poll(cq, out))
			return true;
		fsim_step(s);
	}
	return false;
}

void fsim_idle(struct fsim *s, unsigned steps)
{
	while (steps--)
		fsim_step(s);
}

int fpair_setup(struct fpair *p, struct fsim *s, const struct fconn *conn,
		uint64_t buf_len, uint32_t cqe_cnt)
{
	const uint32_t all = SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_WRITE |
			     SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_ATOMIC;
	struct fqp_caps caps = { .sq_cnt = 64, .rq_cnt = 64, .max_send_sge = 4,
				 .max_recv_sge = 4, .max_inline = 128 };
	int st;

	memset(p, 0, sizeof(*p));
	p->sim = s;
	p->buf_len = buf_len;
#define TRY(x) do { st = (x); if (st) return st; } while (0)
	TRY(fctx_open(&p->ca, &s->a, 0));
	TRY(fctx_open(&p->cb, &s->b, 0));
	TRY(fctx_alloc_pd(&p->ca, &p->pda));
	TRY(fctx_alloc_pd(&p->cb, &p->pdb));
	TRY(fcq_create(&p->cqa, &p->ca, cqe_cnt));
	TRY(fcq_create(&p->cqb, &p->cb, cqe_cnt));
	p->bufa = fdev_alloc(&s->a, buf_len, SNIC_PAGE_SIZE);
	p->bufb = fdev_alloc(&s->b, buf_len, SNIC_PAGE_SIZE);
	TRY(fctx_reg_mr(&p->ca, p->pda, p->bufa, buf_len, all, &p->mra));
	TRY(fctx_reg_mr(&p->cb, p->pdb, p->bufb, buf_len, all, &p->mrb));
	TRY(fqp_create(&p->qa, &p->ca, p->pda, &p->cqa, &p->cqa, &caps));
	TRY(fqp_create(&p->qb, &p->cb, p->pdb, &p->cqb, &p->cqb, &caps));
	TRY(fqp_connect(&p->qa, &p->qb, conn));
#undef TRY
	/* let the ARP exchange settle */
	fsim_idle(s, 4);
	return SNIC_ST_OK;
}

struct fsim *fsim_pair_new(struct fpair *p, unsigned cores,
			   const struct fconn *conn, uint64_t buf_len,
			   uint32_t cqe_cnt)
{
	struct fsim *s;

	fdev_cores_force = cores;
	s = fsim_new(4200);
	fdev_cores_force = 0;
	if (s && (!s->a.nic || !s->b.nic ||
		  fpair_setup(p, s, conn, buf_len, cqe_cnt) != SNIC_ST_OK)) {
		fsim_free(s);
		s = NULL;
	}
	return s;
}
