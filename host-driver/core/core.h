/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: private structures shared by the host-driver sources.
 * Nothing here is exported (the version script exports ibv_* only); every
 * non-static helper carries the hd_ prefix; snic_ names are hostif.h's.
 */
#ifndef HD_CORE_H
#define HD_CORE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include <snic/hostif.h>

#define hd_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define HD_DEFAULT_RUN_DIR "/dev/shm/snic"
/* poll_cq gives the core away after this many empty polls in a row */
#define HD_EMPTY_POLLS_YIELD 64

/* ------------------------------------------------------------------ */
/* Debug output (SNIC_DEBUG=1).                                         */

extern int hd_debug_level;
void hd_debug_init(void);
#define hd_dbg(...)                                                        \
	do {                                                                 \
		if (hd_debug_level)                                        \
			fprintf(stderr, "snic: " __VA_ARGS__);               \
	} while (0)

/* ------------------------------------------------------------------ */
/* Devices (snic_dev.c).                                                */

struct hd_device {
	struct ibv_device ibdev;
	char bar_path[512];
	uint64_t node_guid;         /* host order                           */
	int index;                  /* stable per process: uverbsN          */
	struct hd_device *next;
};

static inline struct hd_device *to_hd_dev(struct ibv_device *d)
{
	return hd_container_of(d, struct hd_device, ibdev);
}

const char *hd_run_dir(void);
/* Process `pid` still owns a context slot in a BAR that uses the host
 * memory file `host_mem` (the firmware has not cleaned up after it yet). */
int hd_fw_holds_pid(const char *host_mem, uint32_t pid);
int hd_pid_alive(uint32_t pid);
/* ibv_destroy_qp/srq: block until the application acked every async event
 * handed out for the object (*completed, under m, reaches got). */
void hd_wait_events_acked(pthread_mutex_t *m, pthread_cond_t *cv,
			    const uint32_t *completed, uint32_t got);

/* ------------------------------------------------------------------ */
/* Host memory window (hostmem.c).                                      */

struct hd_hostmem {
	char name[64];              /* file name in the run dir             */
	char path[512];
	dev_t st_dev;
	ino_t st_ino;
	int fd;
	uint8_t *base;
	uint64_t size;
	uint32_t npages;
	pthread_mutex_t lock;       /* in-process half of the allocator lock */
	struct hd_hostmem *next;
};

/* Map the host-memory file (once per process per file). */
struct hd_hostmem *hd_hostmem_get(const char *name, uint64_t size,
				      int *err);
/* Allocate npages contiguous window pages (zeroed when `zero`).
 * Returns 0 and the first page number, or an errno value. */
int hd_hm_alloc(struct hd_hostmem *hm, uint32_t npages, int zero,
		  uint32_t *first_page);
void hd_hm_free(struct hd_hostmem *hm, uint32_t first_page,
		  uint32_t npages);
/* Free the extents of dead processes (the firmware no longer uses). */
void hd_hm_reap(struct hd_hostmem *hm);

static inline void *hd_hm_ptr(struct hd_hostmem *hm, uint64_t pa)
{
	return hm->base + pa;
}

static inline uint64_t hd_page_pa(uint32_t page)
{
	return (uint64_t)page << SNIC_PAGE_SHIFT;
}

/* ------------------------------------------------------------------ */
/* Pinning: re-backing application pages with window pages (pin.c).     */

struct hd_chunk;

struct hd_pin {
	struct hd_hostmem *hm;
	uintptr_t start;            /* page aligned                         */
	uint32_t npages;
	uint32_t *pages;            /* window page of every page            */
	uint32_t nchunks;
	struct hd_chunk **chunks; /* one reference on each                */
};

int hd_pin(struct hd_hostmem *hm, void *addr, size_t len,
	     struct hd_pin **out);
void hd_unpin(struct hd_pin *pin);
int hd_fork_safe(void);

/* ------------------------------------------------------------------ */
/* Contexts (snic_ctx.c).                                               */

struct hd_qp;
struct hd_cq;

struct hd_async_node {
	struct ibv_async_event ev;
	struct hd_async_node *next;
};

struct hd_context {
	struct verbs_context vctx;  /* ibv_context is its last member       */
	struct hd_device *dev;
	int bar_fd;
	uint8_t *bar;
	struct snic_bar_hdr *hdr;
	struct snic_doorbells *db;
	struct snic_ctx_slot *slot;
	unsigned slot_idx;
	struct hd_hostmem *hm;

	pthread_mutex_t cmd_lock;
	uint32_t cmd_seq;
	_Atomic int dead;           /* firmware gone: commands fail with EIO */

	pthread_t evt_thread;
	int evt_started;
	_Atomic int stop;

	/* Objects: CQ list, QP table writers, async event queue. */
	pthread_mutex_t obj_lock;
	struct hd_cq *cq_list;
	struct hd_srq *srq_list;
	struct hd_qp *_Atomic qp_table[SNIC_MAX_QP];
	struct hd_async_node *aq_head, *aq_tail;
	unsigned aq_skip;           /* reads of async_fd owed to removed events */

	struct snic_device_attr dattr;
};

static inline struct hd_context *to_hd_ctx(struct ibv_context *c)
{
	return hd_container_of(c, struct hd_context, vctx.context);
}

/* Run one command.  hd_cmd_raw returns 0 with the firmware's status in
 * *status, or an errno value when the command did not complete (EIO:
 * firmware down; ETIMEDOUT: no answer).  hd_cmd maps the status to an
 * errno value (0 = OK). */
int hd_cmd_raw(struct hd_context *ctx, uint16_t op, const void *in,
		 size_t in_len, void *out, size_t out_len, uint32_t *status);
int hd_cmd(struct hd_context *ctx, uint16_t op, const void *in,
	     size_t in_len, void *out, size_t out_len);
int hd_status_errno(uint32_t status);
void hd_kick(struct hd_context *ctx);
/* errno value meaning "the firmware is gone": destroy verbs then succeed
 * after releasing host resources, as rdma-core does for a disassociated
 * device. */
static inline int hd_fw_gone(int err)
{
	return err == EIO || err == ETIMEDOUT;
}
void hd_eventfd_signal(int fd);
void hd_async_purge(struct hd_context *ctx, void *obj, int is_qp);

/* ------------------------------------------------------------------ */
/* CQs and completion channels (verbs_cq.c).                            */

struct hd_cq_event {
	struct hd_cq *cq;
	struct hd_cq_event *next;
};

struct hd_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct hd_cq_event *head, *tail;
	unsigned skip;              /* fd reads owed to purged events       */
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
	const struct snic_cqe *cur; /* extended polling: the CQE being read */
	struct hd_context *ctx;
	pthread_spinlock_t lock;
	uint32_t cqn;
	uint32_t cnt;               /* ring entries, power of two           */
	uint32_t log_cnt;
	uint32_t ci;                /* consumer index (under lock)          */
	uint32_t empty_polls;       /* consecutive empty polls (under lock) */
	struct snic_cqe *ring;
	struct snic_cq_dbrec *dbrec;
	uint32_t ext_page, ext_npages;
	uint32_t comp_events_got;   /* returned by ibv_get_cq_event (mutex) */
	uint32_t async_events_got;  /* returned by ibv_get_async_event      */
	struct hd_cq *next;       /* ctx->cq_list                         */
};

static inline struct hd_cq *to_hd_cq(struct ibv_cq *c)
{
	return hd_container_of(c, struct hd_cq, ibcq);
}

struct hd_cq *hd_find_cq(struct hd_context *ctx, uint32_t cqn);
void hd_cq_deliver_comp(struct hd_context *ctx, uint32_t cqn);
/* Remove the CQEs of `qpn` still in the ring (CQ lock held). */
void hd_cq_clean_locked(struct hd_cq *cq, uint32_t qpn);
int hd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
/* ibv_close_device: free the host memory of a CQ the application did not
 * destroy (the firmware destroyed it with the context). */
void hd_cq_free_leftover(struct hd_cq *cq);
int hd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *hd_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);

/* ------------------------------------------------------------------ */
/* QPs (verbs_qp.c).                                                    */

struct hd_qp {
	union {                     /* ibv_qp_ex starts with an ibv_qp      */
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqpx;
	};
	int ex;                     /* created with send ops (ibv_wr_*)      */
	uint32_t ex_pi;             /* wr_start..wr_complete: WQEs built     */
	uint8_t *ex_wqe;            /* the WQE being built, NULL: none       */
	int ex_err;
	struct hd_context *ctx;
	struct hd_cq *scq, *rcq;
	uint32_t ext_page, ext_npages;
	struct snic_qp_dbrec *dbrec;
	uint8_t *sq, *rq;
	uint32_t sq_cnt, sq_log_stride, rq_cnt, rq_log_stride;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	int sq_sig_all;
	pthread_spinlock_t sq_lock, rq_lock;
	uint32_t sq_pi, rq_pi;      /* under sq_lock / rq_lock              */
	_Atomic uint32_t sq_ci;     /* advanced by poll_cq                  */
	_Atomic uint32_t rq_ci;
	uint32_t async_events_got;
	struct hd_srq *srq;       /* receives come from it (NULL: own RQ) */
};

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
void hd_qp_free_leftover(struct hd_qp *qp);
int hd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int hd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
struct ibv_qp *hd_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);

/* ------------------------------------------------------------------ */
/* SRQs (verbs_srq.c) and address handles (verbs_ah.c).                */

struct hd_srq {
	struct ibv_srq ibsrq;
	struct hd_context *ctx;
	pthread_spinlock_t lock;
	uint32_t srqn;
	uint32_t cnt, log_stride, max_sge;
	uint32_t pi;                /* under lock                           */
	_Atomic uint32_t ci;        /* receive CQEs seen by poll_cq         */
	uint8_t *ring;
	struct snic_srq_dbrec *dbrec;
	uint32_t ext_page, ext_npages;
	uint32_t async_events_got;
	struct hd_srq *next;      /* ctx->srq_list                        */
};

static inline struct hd_srq *to_hd_srq(struct ibv_srq *s)
{
	return hd_container_of(s, struct hd_srq, ibsrq);
}

int hd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
/* obj_lock held. */
struct hd_srq *hd_find_srq(struct hd_context *ctx, uint32_t srqn);
void hd_srq_free_leftover(struct hd_srq *srq);

struct hd_ah {
	struct ibv_ah ibah;
	struct snic_wqe_ud av;      /* copied into each UD send WQE         */
};

static inline struct hd_ah *to_hd_ah(struct ibv_ah *a)
{
	return hd_container_of(a, struct hd_ah, ibah);
}

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

/* Futex on a shared (non-private) word; timeout in ns, 0 = none. */
int hd_futex_wait(_Atomic uint32_t *addr, uint32_t val, long timeout_ns);
void hd_futex_wake(_Atomic uint32_t *addr);

static inline void hd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* ------------------------------------------------------------------ */
/* Small helpers.                                                       */

static inline uint32_t hd_roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < (1u << 31))
		r <<= 1;
	return r;
}

static inline uint32_t hd_ilog2(uint32_t v)
{
	uint32_t l = 0;

	while ((1u << (l + 1)) <= v && l < 31)
		l++;
	return l;
}

#endif /* HD_CORE_H */
