/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the event thread of a context and asynchronous events.
 *
 * One event thread per context drains the slot's event queue: completion
 * events go to the CQ's completion channel (channel.c), the rest become
 * ibv_async_events on the context's async fd.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "verbs/verbs.h"

void hd_eventfd_signal(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void hd_wait_events_acked(pthread_mutex_t *m, pthread_cond_t *cv,
			    const uint32_t *completed, uint32_t got)
{
	pthread_mutex_lock(m);
	while (*completed != got)
		pthread_cond_wait(cv, m);
	pthread_mutex_unlock(m);
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

void *hd_event_thread(void *arg)
{
	struct hd_context *ctx = arg;
	struct snic_ctx_slot *slot = ctx->slot;
	uint32_t ci = atomic_load_explicit(&slot->eq_ci, memory_order_relaxed);

	while (!atomic_load_explicit(&ctx->stop, memory_order_acquire)) {
		uint32_t pi = atomic_load_explicit(&slot->eq_pi,
						   memory_order_acquire);

		if (pi == ci) {
			hd_futex_wait(&slot->eq_pi, pi, HD_POLL_TIMEOUT_NS);
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

