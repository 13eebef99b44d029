/* SPDX-License-Identifier: MIT */
/*
 * snic host driver, verbs: the objects an application creates (one file
 * per family: query, pd+mr, channel, cq, qp, qp_post, qp_wr, srq, ah) and
 * the WQE builders they share (wqe.c).
 */
#ifndef HD_VERBS_H
#define HD_VERBS_H

#include "memory/memory.h"

/* ------------------------------------------------------------------ */
/* What CQs, QPs and SRQs share (object.c): a firmware handle, rings in
 * the window, async events, and one lifecycle:
 *   create:  hd_obj_rings, then hd_obj_create (the CREATE command)
 *   destroy: hd_obj_destroy (DESTROY, forget, wait for acks, free)
 *   close:   hd_obj_free_list, hd_obj_free(o, 0) for the leftovers        */

enum hd_obj_kind { HD_OBJ_CQ, HD_OBJ_QP, HD_OBJ_SRQ };

struct hd_obj;

struct hd_obj_type {
	enum hd_obj_kind kind;
	uint16_t destroy_op;        /* SNIC_CMD_DESTROY_*                   */
	/* obj_lock held, the firmware has let go of it: forget it (lists,
	 * tables, queued events, CQEs). */
	void (*forget)(struct hd_obj *o);
	/* Free the host structure (its rings are released already). */
	void (*free)(struct hd_obj *o);
};

struct hd_obj {
	const struct hd_obj_type *type;
	struct hd_context *ctx;
	uint32_t handle;            /* the firmware's CQN, QPN or SRQN      */
	struct hd_rings rings;
	struct hd_obj *next;        /* ctx->cq_list / srq_list              */
	/* Events handed out and acknowledged (hd_obj_events): destroy waits
	 * until they match (ibv_get_cq_event(3), ibv_get_async_event(3)). */
	pthread_mutex_t *mutex;     /* the verbs object's mutex and cond    */
	pthread_cond_t *cond;
	uint32_t *async_acked;      /* its async events_completed           */
	uint32_t async_events_got;  /* handed out by ibv_get_async_event    */
	uint32_t *comp_acked;       /* CQ: comp_events_completed; else NULL */
	uint32_t comp_events_got;   /* handed out by ibv_get_cq_event       */
};

int hd_obj_rings(struct hd_obj *o, const struct hd_obj_type *type,
		 struct hd_context *ctx, const uint64_t *bytes, unsigned n);
/* The CREATE command `op` (its input names the rings).  On failure the
 * object is freed (hd_obj_free) and the errno value returned. */
int hd_obj_create(struct hd_obj *o, uint16_t op, const void *in,
		  size_t in_len);
/* 0, or the firmware's refusal (EBUSY while QPs use a CQ or SRQ) with
 * the object intact.  A firmware that is gone counts as destroyed. */
int hd_obj_destroy(struct hd_obj *o);
/* After create: the verbs object's mutex and cond (initialised here),
 * the counters its ack calls advance (comp_acked: NULL but for CQs). */
void hd_obj_events(struct hd_obj *o, pthread_mutex_t *mutex,
		   pthread_cond_t *cond, uint32_t *async_acked,
		   uint32_t *comp_acked);
/* Release the rings (see hd_extent_release) and free the object. */
void hd_obj_free(struct hd_obj *o, int cmd_err);
/* obj_lock held. */
void hd_obj_link(struct hd_obj **list, struct hd_obj *o);
void hd_obj_unlink(struct hd_obj **list, struct hd_obj *o);
struct hd_obj *hd_obj_find(struct hd_obj *list, uint32_t handle);
/* ibv_close_device: free every object of the list (hd_obj_free(o, 0)). */
void hd_obj_free_list(struct hd_obj **list);

/* ------------------------------------------------------------------ */
/* Completion channels (channel.c) and CQs (cq.c).                      */

struct hd_cq_event {
	struct hd_evnode node;
	struct hd_cq *cq;
};

struct hd_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct hd_evq q;            /* CQs with an event (fd: ch.fd)        */
};

static inline struct hd_channel *to_hd_chan(struct ibv_comp_channel *c)
{
	return hd_container_of(c, struct hd_channel, ch);
}

struct hd_cq {
	union {                     /* ibv_cq_ex starts with ibv_cq's fields */
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex;
	};
	struct hd_obj obj;          /* handle: CQN; rings: dbrec, CQEs      */
	const struct snic_cqe *cur; /* extended polling: the CQE being read */
	hd_spinlock_t lock;
	uint32_t cnt;               /* ring entries, power of two           */
	uint32_t log_cnt;
	uint32_t ci;                /* consumer index (under lock)          */
	uint32_t empty_polls;       /* consecutive empty polls (under lock) */
	struct snic_cqe *ring;
	struct snic_cq_dbrec *dbrec;
};

static inline struct hd_cq *to_hd_cq(struct ibv_cq *c)
{
	return hd_container_of(c, struct hd_cq, ibcq);
}

/* obj_lock held. */
struct hd_cq *hd_find_cq(struct hd_context *ctx, uint32_t cqn);
void hd_cq_deliver_comp(struct hd_context *ctx, uint32_t cqn);
/* destroy_cq (obj_lock held): drop the CQ's events not read yet and its
 * reference on the channel. */
void hd_channel_detach_cq(struct hd_channel *ch, struct hd_cq *cq);
/* Remove the CQEs of `qpn` still in the ring (CQ lock held). */
void hd_cq_clean_locked(struct hd_cq *cq, uint32_t qpn);
int hd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int hd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *hd_create_cq_ex(struct ibv_context *context,
				  struct ibv_cq_init_attr_ex *attr);

/* ------------------------------------------------------------------ */
/* Work queues (wqe.c) and QPs (qp.c: create/modify/query/destroy,
 * qp_post.c: post_send/post_recv, qp_wr.c: ibv_wr_*).                  */

/* A ring of WQEs in the window: a QP's SQ or RQ, an SRQ. */
struct hd_wq {
	uint8_t *buf;
	uint32_t cnt;               /* slots, power of two                  */
	uint32_t log_stride;
	uint32_t max_sge;
	hd_spinlock_t lock;
	uint32_t pi;                /* producer index (under lock)          */
	_Atomic uint32_t ci;        /* consumer index, advanced by poll_cq  */
};

static inline uint8_t *hd_wq_slot(const struct hd_wq *wq, uint32_t idx)
{
	return wq->buf + ((idx & (wq->cnt - 1)) << wq->log_stride);
}

/* May WQE number pi be written, with at most `cap` outstanding?  *ci is
 * the consumer index last read; it is read again when the ring looks
 * full. */
static inline int hd_wq_room(struct hd_wq *wq, uint32_t pi, uint32_t *ci,
			     uint32_t cap)
{
	if (pi - *ci < cap)
		return 1;
	*ci = atomic_load_explicit(&wq->ci, memory_order_acquire);
	return pi - *ci < cap;
}

/* Under wq->lock: write receive WQEs from wq->pi while at most `cap` are
 * outstanding; wq->pi is advanced past those written.  Returns 0, or
 * EINVAL / ENOMEM with *bad_wr the first WR not posted. */
int hd_wq_post_recv(struct hd_wq *wq, uint32_t cap, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
/* Copy n scatter/gather entries into a WQE (in line: every post). */
static inline void hd_wqe_sges(struct snic_wqe_sge *dst,
			       const struct ibv_sge *sg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
}

/* IBV_SEND_* flags -> SNIC_SEND_* (sig_all: the QP signals every WQE). */
static inline uint8_t hd_wqe_send_flags(unsigned int send_flags, int sig_all)
{
	uint8_t flags = 0;

	if ((send_flags & IBV_SEND_SIGNALED) || sig_all)
		flags |= SNIC_SEND_SIGNALED;
	if (send_flags & IBV_SEND_FENCE)
		flags |= SNIC_SEND_FENCE;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= SNIC_SEND_SOLICITED;
	return flags;
}
/* The UD address vector of a send WQE (in place of raddr/atomic). */
void hd_wqe_set_ud(struct snic_send_wqe *w, struct ibv_ah *ah,
		   uint32_t remote_qpn, uint32_t remote_qkey);

struct hd_qp {
	union {                     /* ibv_qp_ex starts with an ibv_qp      */
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqpx;
	};
	int ex;                     /* created with send ops (ibv_wr_*)      */
	uint32_t ex_pi;             /* wr_start..wr_complete: WQEs built     */
	uint8_t *ex_wqe;            /* the WQE being built, NULL: none       */
	int ex_err;
	struct hd_obj obj;          /* handle: QPN; rings: dbrec, SQ, RQ    */
	uint32_t db_core;           /* the firmware core that runs it        */
	struct hd_cq *scq, *rcq;
	struct snic_qp_dbrec *dbrec;
	struct hd_wq sq, rq;
	uint32_t max_inline;
	int sq_sig_all;
	struct hd_srq *srq;         /* receives come from it (NULL: own RQ) */
	/* XRC (xrc.c): a target's domain; a handle from ibv_open_qp names
	 * the QP it opened, which counts its openers */
	struct ibv_xrcd *xrcd;
	struct hd_qp *opened_from;
	_Atomic int open_refs;
	int block_mcast_lb;         /* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB     */
};

/* The QP a handle stands for (itself, or the one ibv_open_qp opened). */
static inline struct hd_qp *hd_qp_real(struct hd_qp *qp)
{
	return qp->opened_from ? qp->opened_from : qp;
}

static inline struct hd_qp *to_hd_qp(struct ibv_qp *q)
{
	return hd_container_of(q, struct hd_qp, ibqp);
}

static inline struct hd_qp *hd_find_qp(struct hd_context *ctx,
				       uint32_t qpn)
{
	struct hd_qp *qp = atomic_load_explicit(
		&ctx->qp_table[SNIC_QPN_IDX(qpn)], memory_order_acquire);

	return (qp && qp->ibqp.qp_num == qpn) ? qp : NULL;
}

/* poll_cq: a send CQE completed SQ index wqe_idx (and all before it). */
void hd_qp_sq_complete(struct hd_qp *qp, uint32_t wqe_idx);
/* Is `op` a send opcode of this QP's type?  UC: SEND and WRITE (with
 * immediate); UD: SEND (with immediate); raw packet: SEND (the frame, as
 * it is); an XRC target sends nothing (Annex A14); RC and XRC initiators
 * every opcode below (memory windows: mw.c).  TSO, DRIVER1 ...: none.
 * One mask per type, in line: every post asks. */
#define HD_OP(op) (1u << (op))
#define HD_OPS_UD (HD_OP(IBV_WR_SEND) | HD_OP(IBV_WR_SEND_WITH_IMM))
#define HD_OPS_UC (HD_OPS_UD | HD_OP(IBV_WR_RDMA_WRITE) | \
		   HD_OP(IBV_WR_RDMA_WRITE_WITH_IMM))
#define HD_OPS_RC (HD_OPS_UC | HD_OP(IBV_WR_RDMA_READ) |                \
		   HD_OP(IBV_WR_ATOMIC_CMP_AND_SWP) |                      \
		   HD_OP(IBV_WR_ATOMIC_FETCH_AND_ADD) |                    \
		   HD_OP(IBV_WR_LOCAL_INV) | HD_OP(IBV_WR_BIND_MW) |       \
		   HD_OP(IBV_WR_SEND_WITH_INV))
static inline int hd_qp_opcode_ok(const struct hd_qp *qp,
				  enum ibv_wr_opcode op)
{
	uint32_t ops;

	switch (qp->ibqp.qp_type) {
	case IBV_QPT_RAW_PACKET:
		ops = HD_OP(IBV_WR_SEND);
		break;
	case IBV_QPT_UD:
		ops = HD_OPS_UD;
		break;
	case IBV_QPT_UC:
		ops = HD_OPS_UC;
		break;
	case IBV_QPT_XRC_RECV:
		ops = 0;
		break;
	default:
		ops = HD_OPS_RC;
		break;
	}
	return (unsigned int)op < 32 && ((ops >> op) & 1);
}
/* After publishing a producer index: the QP's doorbell bits and a kick. */
void hd_qp_ring_doorbell(struct hd_qp *qp);
int hd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad_wr);
int hd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad_wr);
/* Memory windows (mw.c).  ibv_bind_mw posts through hd_post_send_bind,
 * the only path that binds a type 1 window. */
int hd_post_send_bind(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
/* The BIND_MW operands of a send WQE: 0 or EINVAL. */
int hd_wqe_bind(struct snic_send_wqe *w, const struct ibv_mw *mw,
		uint32_t rkey, const struct ibv_mw_bind_info *bi, int type1);
struct ibv_mw *hd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int hd_dealloc_mw(struct ibv_mw *mw);
int hd_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mwb);
struct ibv_qp *hd_create_qp_ex(struct ibv_context *context,
			       struct ibv_qp_init_attr_ex *attr);
/* Any QP type; pd NULL and xrcd set for an XRC target. */
struct ibv_qp *hd_qp_create(struct ibv_context *context, struct ibv_pd *pd,
			    struct ibv_qp_init_attr *attr,
			    struct ibv_xrcd *xrcd);

/* ------------------------------------------------------------------ */
/* SRQs (srq.c) and address handles (ah.c).                            */

struct hd_srq {
	struct ibv_srq ibsrq;
	struct hd_obj obj;          /* handle: SRQN; rings: dbrec, WQEs     */
	struct hd_wq wq;            /* ci: receive CQEs seen by poll_cq     */
	struct snic_srq_dbrec *dbrec;
	struct hd_cq *xrc_cq;       /* XRC SRQ: the CQ of its RECVs; else NULL */
};

static inline struct hd_srq *to_hd_srq(struct ibv_srq *s)
{
	return hd_container_of(s, struct hd_srq, ibsrq);
}

int hd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);
/* obj_lock held. */
struct hd_srq *hd_find_srq(struct hd_context *ctx, uint32_t srqn);
/* An SRQ of pd; with an XRC domain (xrcd != NULL) an XRC SRQ whose
 * RECVs complete on cq.  attr gets the actual capacities. */
struct ibv_srq *hd_srq_create(struct ibv_pd *pd, struct ibv_srq_attr *attr,
			      void *srq_context, struct ibv_xrcd *xrcd,
			      struct ibv_cq *cq);

/* ------------------------------------------------------------------ */
/* XRC (xrc.c): domains, XRC SRQs, target QPs, ibv_open_qp.             */

struct ibv_xrcd *hd_open_xrcd(struct ibv_context *context,
			      struct ibv_xrcd_init_attr *attr);
int hd_close_xrcd(struct ibv_xrcd *xrcd);
uint32_t hd_xrcd_handle(struct ibv_xrcd *xrcd);
struct ibv_srq *hd_create_srq_ex(struct ibv_context *context,
				 struct ibv_srq_init_attr_ex *attr);
int hd_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_qp *hd_open_qp(struct ibv_context *context,
			  struct ibv_qp_open_attr *attr);
int hd_xrc_qp_close(struct hd_qp *opened);
/* poll_cq (the CQ's lock held): a RECV of XRC SRQ srqn completed. */
void hd_xrc_srq_consumed(struct hd_context *ctx, uint32_t srqn);

struct hd_ah {
	struct ibv_ah ibah;
	struct snic_wqe_ud av;      /* copied into each UD send WQE         */
};

static inline struct hd_ah *to_hd_ah(struct ibv_ah *a)
{
	return hd_container_of(a, struct hd_ah, ibah);
}

/* An MR (mr.c): pinned host pages, or (dm set) a device-memory MR. */
struct hd_mr {
	struct ibv_mr ibmr;
	struct hd_pin *pin;         /* NULL for a DM MR                     */
	int dm;
};

/* ibv_reg_mr's access checks; the flags the firmware knows remain. */
int hd_mr_check_access(unsigned int *access);
/* The context's page-list buffer goes (ibv_close_device; cmd_err: its
 * CTX_CLOSE's, see hd_extent_release). */
void hd_mr_pl_free(struct hd_context *ctx, int cmd_err);

/* Device memory (dm.c): the card's memory, reached through the BAR. */
/* flow.c: raw packet QPs (CAP_NET_RAW) and flow steering */
int hd_raw_qp_allowed(void);
struct ibv_flow *hd_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int hd_destroy_flow(struct ibv_flow *flow);
struct ibv_dm *hd_alloc_dm(struct ibv_context *context,
			   struct ibv_alloc_dm_attr *attr);
int hd_free_dm(struct ibv_dm *dm);
struct ibv_mr *hd_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm,
			    uint64_t dm_offset, size_t length,
			    unsigned int access);

/* ------------------------------------------------------------------ */
/* rdma-core's private <infiniband/driver.h> (not installed): the type of
 * ibv_query_gid_type@IBVERBS_PRIVATE_34, which ibv_devinfo calls. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);

int hd_query_port(struct ibv_context *context, uint8_t port_num,
		  struct ibv_port_attr *attr, size_t attr_len);
int hd_query_device_ex(struct ibv_context *context,
		       const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size);

#endif /* HD_VERBS_H */
