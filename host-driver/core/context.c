/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: contexts (ibv_open_device / ibv_close_device), the
 * command mailbox, the event thread and asynchronous events.
 *
 * A context claims a slot in the NIC's BAR (CAS FREE -> CLAIMED, owner pid)
 * and announces itself with CTX_OPEN.  Commands go through the slot's
 * mailbox, serialised by a per-context mutex.  One event thread per context
 * drains the slot's event queue: completion events go to the CQ's
 * completion channel, the rest to the context's async fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

#define CMD_TIMEOUT_NS   (5ll * 1000 * 1000 * 1000)
#define CMD_SPIN         4000
#define POLL_TIMEOUT_NS  (1000 * 1000)   /* 1 ms futex timeouts */

/* ------------------------------------------------------------------ */
/* Futex and kick.                                                      */

int hd_futex_wait(_Atomic uint32_t *addr, uint32_t val, long timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns > 0) {
		ts.tv_sec = timeout_ns / 1000000000l;
		ts.tv_nsec = timeout_ns % 1000000000l;
		tsp = &ts;
	}
	/* Not FUTEX_PRIVATE_FLAG: the word lives in a shared file mapping
	 * and the waker is another process. */
	return (int)syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, tsp,
			    NULL, 0);
}

void hd_futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * After ringing a doorbell: wake the firmware if it sleeps.  The firmware
 * sets fw_idle, then re-reads the doorbell summary, then sleeps on `kick`;
 * the host sets the summary bit (seq_cst RMW), then reads fw_idle (seq_cst).
 * One of the two sees the other's store, so a doorbell is never missed.
 */
static void kick_hdr(struct snic_bar_hdr *hdr)
{
	if (atomic_load_explicit(&hdr->fw_idle, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&hdr->kick, 1, memory_order_seq_cst);
		hd_futex_wake(&hdr->kick);
	}
}

void hd_kick(struct hd_context *ctx)
{
	kick_hdr(ctx->hdr);
}

void hd_eventfd_signal(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Commands.                                                            */

static const char *const op_names[SNIC_CMD_COUNT] = {
	[SNIC_CMD_NOP] = "NOP",
	[SNIC_CMD_CTX_OPEN] = "CTX_OPEN",
	[SNIC_CMD_CTX_CLOSE] = "CTX_CLOSE",
	[SNIC_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
	[SNIC_CMD_QUERY_PORT] = "QUERY_PORT",
	[SNIC_CMD_QUERY_GID] = "QUERY_GID",
	[SNIC_CMD_ALLOC_PD] = "ALLOC_PD",
	[SNIC_CMD_DEALLOC_PD] = "DEALLOC_PD",
	[SNIC_CMD_REG_MR] = "REG_MR",
	[SNIC_CMD_DEREG_MR] = "DEREG_MR",
	[SNIC_CMD_CREATE_CQ] = "CREATE_CQ",
	[SNIC_CMD_DESTROY_CQ] = "DESTROY_CQ",
	[SNIC_CMD_CREATE_QP] = "CREATE_QP",
	[SNIC_CMD_MODIFY_QP] = "MODIFY_QP",
	[SNIC_CMD_QUERY_QP] = "QUERY_QP",
	[SNIC_CMD_DESTROY_QP] = "DESTROY_QP",
	[SNIC_CMD_CREATE_SRQ] = "CREATE_SRQ",
	[SNIC_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
	[SNIC_CMD_QUERY_SRQ] = "QUERY_SRQ",
	[SNIC_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
};

static const char *op_name(uint16_t op)
{
	return (op < SNIC_CMD_COUNT && op_names[op]) ? op_names[op] : "?";
}

int hd_status_errno(uint32_t status)
{
	switch (status) {
	case SNIC_ST_OK: return 0;
	case SNIC_ST_INVAL: return EINVAL;
	case SNIC_ST_NOMEM: return ENOMEM;
	case SNIC_ST_BUSY: return EBUSY;
	case SNIC_ST_NOENT: return EINVAL;
	case SNIC_ST_NOTSUP: return EOPNOTSUPP;
	case SNIC_ST_PERM: return EACCES;
	case SNIC_ST_FAULT: return EFAULT;
	case SNIC_ST_BADOP: return ENOSYS;
	default: return EIO;
	}
}

/* Is the firmware behind this BAR gone? */
static int fw_down(struct snic_bar_hdr *hdr, int check_pid)
{
	uint32_t pid;

	if (atomic_load_explicit(&hdr->fw_state, memory_order_relaxed) !=
	    SNIC_FW_UP)
		return 1;
	pid = atomic_load_explicit(&hdr->fw_pid, memory_order_relaxed);
	return check_pid && pid && !hd_pid_alive(pid);
}

static int wait_cmd_done(struct hd_context *ctx, uint32_t n)
{
	_Atomic uint32_t *done = &ctx->slot->cmd_done;
	int64_t start;
	unsigned iter = 0;

	for (int i = 0; i < CMD_SPIN; i++) {
		if (atomic_load_explicit(done, memory_order_acquire) == n)
			return 0;
		hd_cpu_relax();
	}
	start = now_ns();
	for (;;) {
		uint32_t d = atomic_load_explicit(done, memory_order_acquire);

		if (d == n)
			return 0;
		if (fw_down(ctx->hdr, (iter & 15) == 0))
			return EIO;
		if (now_ns() - start > CMD_TIMEOUT_NS)
			return ETIMEDOUT;
		/* Cheap insurance against a lost wake-up. */
		if ((iter & 7) == 7)
			hd_kick(ctx);
		hd_futex_wait(done, d, POLL_TIMEOUT_NS);
		iter++;
	}
}

int hd_cmd_raw(struct hd_context *ctx, uint16_t op, const void *in,
		 size_t in_len, void *out, size_t out_len, uint32_t *status)
{
	struct snic_ctx_slot *slot = ctx->slot;
	struct snic_cmd *c = &slot->cmd;
	uint32_t n;
	int err;

	if (in_len > SNIC_CMD_DATA_SIZE || out_len > SNIC_CMD_DATA_SIZE)
		return EINVAL;
	pthread_mutex_lock(&ctx->cmd_lock);
	if (atomic_load(&ctx->dead) || fw_down(ctx->hdr, 0)) {
		err = EIO;
		goto out;
	}
	memset(c->in, 0, sizeof(c->in));
	if (in_len)
		memcpy(c->in, in, in_len);
	c->opcode = op;
	c->status = SNIC_ST_BADOP;
	n = ++ctx->cmd_seq;
	if (n == atomic_load_explicit(&slot->cmd_done, memory_order_relaxed))
		n = ++ctx->cmd_seq;
	atomic_store_explicit(&slot->cmd_seq, n, memory_order_release);
	atomic_fetch_or_explicit(&ctx->db->cmd_bits, 1ull << ctx->slot_idx,
				 memory_order_release);
	atomic_fetch_or_explicit(&ctx->db->summary, SNIC_DB_SUMMARY_CMD,
				 memory_order_seq_cst);
	hd_kick(ctx);

	err = wait_cmd_done(ctx, n);
	if (err) {
		/* The mailbox is in an unknown state now: the firmware may
		 * still answer this command later.  Give up on the context. */
		atomic_store(&ctx->dead, 1);
		hd_dbg("%s: %s (slot %u seq %u)\n", op_name(op),
			 err == EIO ? "firmware down" : "no answer",
			 ctx->slot_idx, n);
		goto out;
	}
	*status = c->status;
	if (out_len)
		memcpy(out, c->out, out_len);
	hd_dbg("%s -> status %u\n", op_name(op), *status);
out:
	pthread_mutex_unlock(&ctx->cmd_lock);
	return err;
}

int hd_cmd(struct hd_context *ctx, uint16_t op, const void *in,
	     size_t in_len, void *out, size_t out_len)
{
	uint32_t status;
	int err = hd_cmd_raw(ctx, op, in, in_len, out, out_len, &status);

	return err ? err : hd_status_errno(status);
}

/* ------------------------------------------------------------------ */
/* Events.                                                              */

static int event_is_qp(uint32_t type)
{
	switch (type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return 1;
	default:
		return 0;
	}
}

static int event_is_port(uint32_t type)
{
	switch (type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return 1;
	default:
		return 0;
	}
}

static int is_srq_event(uint32_t type)
{
	return type == IBV_EVENT_SRQ_LIMIT_REACHED || type == IBV_EVENT_SRQ_ERR;
}

static void deliver_async(struct hd_context *ctx, const struct snic_eqe *e)
{
	struct hd_async_node *n;

	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->ev.event_type = (enum ibv_event_type)e->type;
	pthread_mutex_lock(&ctx->obj_lock);
	if (e->type == IBV_EVENT_CQ_ERR) {
		struct hd_cq *cq = hd_find_cq(ctx, e->obj);

		if (!cq)
			goto drop;
		n->ev.element.cq = &cq->ibcq;
	} else if (event_is_qp(e->type)) {
		struct hd_qp *qp = hd_find_qp(ctx, e->obj);

		if (!qp)
			goto drop;
		n->ev.element.qp = &qp->ibqp;
	} else if (e->type == IBV_EVENT_SRQ_LIMIT_REACHED ||
		   e->type == IBV_EVENT_SRQ_ERR) {
		struct hd_srq *s = hd_find_srq(ctx, e->obj);

		if (!s)
			goto drop;
		n->ev.element.srq = &s->ibsrq;
	} else if (event_is_port(e->type)) {
		n->ev.element.port_num = (int)e->obj;
	} else if (e->type == IBV_EVENT_DEVICE_FATAL) {
		n->ev.element.port_num = 0;
	} else {
		goto drop; /* SRQ / WQ events: no such objects here */
	}
	if (ctx->aq_tail)
		ctx->aq_tail->next = n;
	else
		ctx->aq_head = n;
	ctx->aq_tail = n;
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("async event %u obj 0x%x\n", e->type, e->obj);
	hd_eventfd_signal(ctx->vctx.context.async_fd);
	return;
drop:
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("async event %u for unknown object 0x%x dropped\n", e->type,
		 e->obj);
	free(n);
}

static void *event_thread(void *arg)
{
	struct hd_context *ctx = arg;
	struct snic_ctx_slot *slot = ctx->slot;
	uint32_t ci = atomic_load_explicit(&slot->eq_ci, memory_order_relaxed);

	while (!atomic_load_explicit(&ctx->stop, memory_order_acquire)) {
		uint32_t pi = atomic_load_explicit(&slot->eq_pi,
						   memory_order_acquire);

		if (pi == ci) {
			hd_futex_wait(&slot->eq_pi, pi, POLL_TIMEOUT_NS);
			continue;
		}
		if (pi - ci > SNIC_EQ_SIZE) {
			hd_dbg("event queue overrun (%u lost)\n",
				 pi - ci - SNIC_EQ_SIZE);
			ci = pi - SNIC_EQ_SIZE;
		}
		while (ci != pi) {
			struct snic_eqe e = slot->eq[ci & (SNIC_EQ_SIZE - 1)];

			ci++;
			if (e.type == SNIC_EVENT_COMP)
				hd_cq_deliver_comp(ctx, e.obj);
			else
				deliver_async(ctx, &e);
		}
		atomic_store_explicit(&slot->eq_ci, ci, memory_order_release);
	}
	return NULL;
}

int ibv_get_async_event(struct ibv_context *context,
			struct ibv_async_event *event)
{
	struct hd_context *ctx = to_hd_ctx(context);

	for (;;) {
		struct hd_async_node *n;
		uint64_t v;

		if (read(context->async_fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_mutex_lock(&ctx->obj_lock);
		if (ctx->aq_skip) {
			/* this count belonged to an event removed when its
			 * object was destroyed */
			ctx->aq_skip--;
			pthread_mutex_unlock(&ctx->obj_lock);
			continue;
		}
		n = ctx->aq_head;
		if (!n) {
			pthread_mutex_unlock(&ctx->obj_lock);
			continue;
		}
		ctx->aq_head = n->next;
		if (!ctx->aq_head)
			ctx->aq_tail = NULL;
		*event = n->ev;
		if (event_is_qp(event->event_type)) {
			struct hd_qp *qp = to_hd_qp(event->element.qp);

			pthread_mutex_lock(&qp->ibqp.mutex);
			qp->async_events_got++;
			pthread_mutex_unlock(&qp->ibqp.mutex);
		} else if (event->event_type == IBV_EVENT_CQ_ERR) {
			struct hd_cq *cq = to_hd_cq(event->element.cq);

			pthread_mutex_lock(&cq->ibcq.mutex);
			cq->async_events_got++;
			pthread_mutex_unlock(&cq->ibcq.mutex);
		} else if (is_srq_event(event->event_type)) {
			struct hd_srq *s = to_hd_srq(event->element.srq);

			pthread_mutex_lock(&s->ibsrq.mutex);
			s->async_events_got++;
			pthread_mutex_unlock(&s->ibsrq.mutex);
		}
		pthread_mutex_unlock(&ctx->obj_lock);
		free(n);
		return 0;
	}
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (event_is_qp(event->event_type)) {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_broadcast(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
	} else if (event->event_type == IBV_EVENT_CQ_ERR) {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_broadcast(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
	} else if (is_srq_event(event->event_type)) {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_broadcast(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
	}
}

/* Remove the queued (not yet read) async events of a QP (is_qp 1), CQ
 * (0) or SRQ (2) being destroyed; their async_fd counts are skipped by the
 * next reads.  Called with obj_lock held. */
void hd_async_purge(struct hd_context *ctx, void *obj, int is_qp)
{
	struct hd_async_node **pp = &ctx->aq_head, *n;

	ctx->aq_tail = NULL;
	while ((n = *pp) != NULL) {
		int match = is_qp == 2 ? (is_srq_event(n->ev.event_type) &&
					  (void *)n->ev.element.srq == obj)
			  : is_qp ? (event_is_qp(n->ev.event_type) &&
				     n->ev.element.qp == obj)
				  : (n->ev.event_type == IBV_EVENT_CQ_ERR &&
				     n->ev.element.cq == obj);

		if (match) {
			*pp = n->next;
			ctx->aq_skip++;
			free(n);
		} else {
			ctx->aq_tail = n;
			pp = &n->next;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Open / close.                                                        */

static void ctx_release_slot(struct hd_context *ctx)
{
	atomic_store_explicit(&ctx->slot->owner_pid, 0, memory_order_relaxed);
	atomic_store_explicit(&ctx->slot->state, SNIC_CTX_FREE,
			      memory_order_release);
}

void hd_wait_events_acked(pthread_mutex_t *m, pthread_cond_t *cv,
			    const uint32_t *completed, uint32_t got)
{
	pthread_mutex_lock(m);
	while (*completed != got)
		pthread_cond_wait(cv, m);
	pthread_mutex_unlock(m);
}

/* Contexts whose owner died without closing: hand them to the firmware
 * for reclaim (hostif.h, SNIC_CTX_ORPHAN).  Only OPEN slots: a CLAIMED
 * slot may still carry the previous owner's pid for an instant. */
static void mark_orphans(struct hd_context *ctx)
{
	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (struct snic_ctx_slot *)(
			ctx->bar + SNIC_BAR_CTX_OFF + i * SNIC_CTX_SLOT_SIZE);
		uint32_t open = SNIC_CTX_OPEN;
		uint32_t pid = atomic_load(&s->owner_pid);

		if (atomic_load(&s->state) == SNIC_CTX_OPEN && pid &&
		    !hd_pid_alive(pid))
			atomic_compare_exchange_strong(&s->state, &open,
						       SNIC_CTX_ORPHAN);
	}
}

static int claim_slot(struct hd_context *ctx)
{
	unsigned max = ctx->hdr->max_ctx;
	uint32_t pid = (uint32_t)getpid();

	if (max == 0 || max > SNIC_MAX_CTX)
		max = SNIC_MAX_CTX;
	for (unsigned i = 0; i < max; i++) {
		struct snic_ctx_slot *s = (struct snic_ctx_slot *)(
			ctx->bar + SNIC_BAR_CTX_OFF + i * SNIC_CTX_SLOT_SIZE);
		uint32_t expect = SNIC_CTX_FREE;

		if (atomic_compare_exchange_strong(&s->state, &expect,
						   SNIC_CTX_CLAIMED)) {
			atomic_store(&s->owner_pid, pid);
			ctx->slot = s;
			ctx->slot_idx = i;
			return 0;
		}
	}
	return EBUSY;
}

static void ctx_unmap(struct hd_context *ctx)
{
	if (ctx->bar)
		munmap(ctx->bar, SNIC_BAR_SIZE);
	if (ctx->bar_fd >= 0)
		close(ctx->bar_fd);
	if (ctx->vctx.context.async_fd >= 0)
		close(ctx->vctx.context.async_fd);
	pthread_mutex_destroy(&ctx->cmd_lock);
	pthread_mutex_destroy(&ctx->obj_lock);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	free(ctx);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct hd_device *sdev = to_hd_dev(device);
	struct snic_cmd_ctx_open open_in;
	struct hd_context *ctx;
	struct ibv_context *ic;
	char hm_name[sizeof(ctx->hdr->host_mem)];
	sigset_t all, old;
	void *bar;
	int err;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ic = &ctx->vctx.context;
	ctx->dev = sdev;
	ctx->bar_fd = -1;
	ic->async_fd = -1;
	pthread_mutex_init(&ctx->cmd_lock, NULL);
	pthread_mutex_init(&ctx->obj_lock, NULL);
	pthread_mutex_init(&ic->mutex, NULL);

	ctx->bar_fd = open(sdev->bar_path, O_RDWR | O_CLOEXEC);
	if (ctx->bar_fd < 0) {
		err = errno == ENOENT ? ENODEV : errno;
		goto fail;
	}
	bar = mmap(NULL, SNIC_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ctx->bar_fd, 0);
	if (bar == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	ctx->bar = bar;
	ctx->hdr = (struct snic_bar_hdr *)(void *)(ctx->bar + SNIC_BAR_HDR_OFF);
	ctx->db = (struct snic_doorbells *)(void *)(ctx->bar + SNIC_BAR_DB_OFF);
	if (ctx->hdr->magic != SNIC_HOSTIF_MAGIC ||
	    ctx->hdr->version != SNIC_HOSTIF_VERSION ||
	    strncmp(ctx->hdr->name, device->name, sizeof(ctx->hdr->name)) ||
	    fw_down(ctx->hdr, 1)) {
		err = ENODEV;
		goto fail;
	}
	memcpy(hm_name, ctx->hdr->host_mem, sizeof(hm_name));
	hm_name[sizeof(hm_name) - 1] = '\0';
	ctx->hm = hd_hostmem_get(hm_name, ctx->hdr->host_mem_size, &err);
	if (!ctx->hm)
		goto fail;

	mark_orphans(ctx);
	err = claim_slot(ctx);
	if (err) {
		hd_dbg("%s: no free context slot\n", device->name);
		goto fail;
	}
	ctx->cmd_seq = atomic_load(&ctx->slot->cmd_done);
	memset(&open_in, 0, sizeof(open_in));
	open_in.pid = (uint32_t)getpid();
	err = hd_cmd(ctx, SNIC_CMD_CTX_OPEN, &open_in, sizeof(open_in),
		       NULL, 0);
	if (err) {
		ctx_release_slot(ctx);
		goto fail;
	}
	atomic_store(&ctx->slot->state, SNIC_CTX_OPEN);
	hd_dbg("%s: context slot %u open (pid %u)\n", device->name,
		 ctx->slot_idx, open_in.pid);

	/* Extents of dead processes (whose contexts the firmware has
	 * destroyed) go back to the allocator. */
	hd_hm_reap(ctx->hm);

	err = hd_cmd(ctx, SNIC_CMD_QUERY_DEVICE, NULL, 0, &ctx->dattr,
		       sizeof(ctx->dattr));
	if (err)
		goto fail_close;
	if (ctx->dattr.phys_port_cnt == 0)
		ctx->dattr.phys_port_cnt = 1;

	ic->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ic->async_fd < 0) {
		err = errno;
		goto fail_close;
	}
	ic->device = device;
	ic->cmd_fd = ctx->bar_fd;
	ic->num_comp_vectors = 1;
	ic->abi_compat = (void *)UINTPTR_MAX; /* __VERBS_ABI_IS_EXTENDED */
	ic->ops.post_send = hd_post_send;
	ic->ops.post_recv = hd_post_recv;
	ic->ops.poll_cq = hd_poll_cq;
	ic->ops.req_notify_cq = hd_req_notify_cq;
	ic->ops.post_srq_recv = hd_post_srq_recv;
	ctx->vctx.sz = sizeof(struct verbs_context);
	ctx->vctx.query_port = hd_query_port;
	ctx->vctx.query_device_ex = hd_query_device_ex;
	ctx->vctx.create_cq_ex = hd_create_cq_ex;
	ctx->vctx.create_qp_ex = hd_create_qp_ex;

	/* The event thread takes no application signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&ctx->evt_thread, NULL, event_thread, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail_close;
	ctx->evt_started = 1;
	return ic;

fail_close:
	hd_cmd(ctx, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0);
	ctx_release_slot(ctx);
fail:
	hd_dbg("open %s failed: %s\n", device->name, strerror(err));
	ctx_unmap(ctx);
	errno = err;
	return NULL;
}

int ibv_close_device(struct ibv_context *context)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct hd_async_node *n;
	int err;

	if (ctx->evt_started) {
		atomic_store_explicit(&ctx->stop, 1, memory_order_release);
		hd_futex_wake(&ctx->slot->eq_pi);
		pthread_join(ctx->evt_thread, NULL);
	}
	/* The firmware destroys everything the context still owns. */
	err = hd_cmd(ctx, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0);
	if (err)
		hd_dbg("CTX_CLOSE: %s\n", strerror(err));
	ctx_release_slot(ctx);

	/* Host memory of objects the application did not destroy. */
	for (unsigned i = 0; i < SNIC_MAX_QP; i++) {
		struct hd_qp *qp = atomic_load(&ctx->qp_table[i]);

		if (qp)
			hd_qp_free_leftover(qp);
	}
	while (ctx->srq_list) {
		struct hd_srq *s = ctx->srq_list;

		ctx->srq_list = s->next;
		hd_srq_free_leftover(s);
	}
	while (ctx->cq_list) {
		struct hd_cq *cq = ctx->cq_list;

		ctx->cq_list = cq->next;
		hd_cq_free_leftover(cq);
	}
	while ((n = ctx->aq_head) != NULL) {
		ctx->aq_head = n->next;
		free(n);
	}
	ctx_unmap(ctx);
	return 0;
}
