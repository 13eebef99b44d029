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

/* ------------------------------------------------------------------ */
/* Async events.                                                        */

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

/* The object an async event is about (kind: enum hd_obj_kind), or -1
 * for port and device events. */
static int event_kind(uint32_t type)
{
	if (type == IBV_EVENT_CQ_ERR)
		return HD_OBJ_CQ;
	if (event_is_qp(type))
		return HD_OBJ_QP;
	if (is_srq_event(type))
		return HD_OBJ_SRQ;
	return -1;
}

/* The CQ, QP or SRQ an async event is about, or NULL. */
static struct hd_obj *event_obj(const struct ibv_async_event *ev)
{
	switch (event_kind(ev->event_type)) {
	case HD_OBJ_CQ:
		return &to_hd_cq(ev->element.cq)->obj;
	case HD_OBJ_QP:
		return &to_hd_qp(ev->element.qp)->obj;
	case HD_OBJ_SRQ:
		return &to_hd_srq(ev->element.srq)->obj;
	default:
		return NULL;
	}
}

/* Event thread: fill in the object (obj_lock held).  0: no such object
 * (destroyed meanwhile) or an event type without objects here. */
static int async_element(struct hd_context *ctx, const struct snic_eqe *e,
			 struct ibv_async_event *ev)
{
	switch (event_kind(e->type)) {
	case HD_OBJ_CQ: {
		struct hd_cq *cq = hd_find_cq(ctx, e->obj);

		ev->element.cq = cq ? &cq->ibcq : NULL;
		return cq != NULL;
	}
	case HD_OBJ_QP: {
		struct hd_qp *qp = hd_find_qp(ctx, e->obj);

		ev->element.qp = qp ? &qp->ibqp : NULL;
		return qp != NULL;
	}
	case HD_OBJ_SRQ: {
		struct hd_srq *s = hd_find_srq(ctx, e->obj);

		ev->element.srq = s ? &s->ibsrq : NULL;
		return s != NULL;
	}
	default:
		if (event_is_port(e->type))
			ev->element.port_num = (int)e->obj;
		else if (e->type == IBV_EVENT_DEVICE_FATAL)
			ev->element.port_num = 0;
		else
			return 0; /* WQ events: no such objects here */
		return 1;
	}
}

static void deliver_async(struct hd_context *ctx, const struct snic_eqe *e)
{
	struct hd_async_node *n;

	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->ev.event_type = (enum ibv_event_type)e->type;
	pthread_mutex_lock(&ctx->obj_lock);
	/* bounded (core.h HD_EVQ_MAX) */
	if (ctx->aq.len >= HD_EVQ_MAX || !async_element(ctx, e, &n->ev)) {
		pthread_mutex_unlock(&ctx->obj_lock);
		hd_dbg("async event %u for object 0x%x dropped (unknown object "
		       "or %u queued)\n", e->type, e->obj, ctx->aq.len);
		free(n);
		return;
	}
	hd_evq_push(&ctx->aq, &n->node);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("async event %u obj 0x%x\n", e->type, e->obj);
	hd_eventfd_signal(ctx->aq.fd);
}

void *hd_event_thread(void *arg)
{
	struct hd_context *ctx = arg;
	struct snic_ctx_slot *slot = ctx->slot;
	uint32_t ci = 0; /* CTX_OPEN started the queue empty */

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
		snic_heap_guard_enter(); /* memory/reback_guard.c */
		while (ci != pi) {
			struct snic_eqe e = slot->eq[ci & (SNIC_EQ_SIZE - 1)];

			ci++;
			if (e.type == SNIC_EVENT_COMP)
				hd_cq_deliver_comp(ctx, e.obj);
			else
				deliver_async(ctx, &e);
		}
		snic_heap_guard_leave();
		atomic_store_explicit(&slot->eq_ci, ci, memory_order_release);
	}
	return NULL;
}

int ibv_get_async_event(struct ibv_context *context,
			struct ibv_async_event *event)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct hd_evnode *n = hd_evq_pop(&ctx->aq, &ctx->obj_lock);
	struct hd_obj *o;

	if (!n)
		return -1;
	*event = ((struct hd_async_node *)(void *)n)->ev;
	/* Counted while obj_lock keeps the object from being destroyed, so
	 * its destroy waits for this event's ack. */
	o = event_obj(event);
	if (o) {
		pthread_mutex_lock(o->mutex);
		o->async_events_got++;
		pthread_mutex_unlock(o->mutex);
	}
	pthread_mutex_unlock(&ctx->obj_lock);
	free(n);
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct hd_obj *o = event_obj(event);

	if (!o)
		return;
	pthread_mutex_lock(o->mutex);
	(*o->async_acked)++;
	pthread_cond_broadcast(o->cond);
	pthread_mutex_unlock(o->mutex);
}

struct purge_arg {
	struct hd_obj *obj;
	int kind;
};

static int async_event_of(const struct hd_evnode *n, const void *arg)
{
	const struct ibv_async_event *ev =
		&((const struct hd_async_node *)(const void *)n)->ev;
	const struct purge_arg *p = arg;

	return event_kind(ev->event_type) == p->kind &&
	       event_obj(ev) == p->obj;
}

void hd_async_purge(struct hd_context *ctx, struct hd_obj *o)
{
	struct purge_arg p = { o, (int)o->type->kind };

	hd_evq_purge(&ctx->aq, async_event_of, &p);
}
