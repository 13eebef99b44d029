/* SPDX-License-Identifier: MIT */
/*
 * Event channels: a queue of events and a counting eventfd as the
 * channel's fd (EFD_SEMAPHORE: one count per event), so the fd polls
 * readable while an event waits, blocks when the channel is blocking and
 * says EAGAIN when the application made it O_NONBLOCK.  Closing it does
 * not wake a thread blocked in rdma_get_cm_event (as with the kernel's
 * rdma_cm file): programs that destroy the channel under their event
 * thread and then exit rely on that.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cma.h"

static struct cma_chan *to_chan(struct rdma_event_channel *ch)
{
	return (struct cma_chan *)(void *)ch;
}

CMA_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_chan *c;
	int fd;
	int err = cma_init();

	if (err) {
		errno = err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (fd < 0) {
		free(c);
		return NULL;
	}
	c->ch.fd = fd;
	c->wfd = fd;
	return &c->ch;
}

CMA_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct cma_chan *c = to_chan(ch);

	if (!ch)
		return;
	pthread_mutex_lock(&cma_lock);
	while (c->head) {
		struct cma_event *e = c->head;

		c->head = e->next;
		free(e);
	}
	pthread_mutex_unlock(&cma_lock);
	close(c->ch.fd);
	free(c);
}

/* cma_lock held. */
int cma_post(struct cma_id *id, enum rdma_cm_event_type type, int status,
	     const void *pdata, unsigned pdata_len, struct cma_id *listen)
{
	struct cma_chan *c = to_chan(id->id.channel);
	struct cma_event *e;
	uint64_t one = 1;

	if (!c)
		return ENODEV;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ENOMEM;
	cma_dbg("event %s status %d id %p state %d\n", rdma_event_str(type), status,
		(void *)id, id->state);
	e->ev.id = &id->id;
	e->ev.listen_id = listen ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (pdata_len > sizeof(e->pdata))
		pdata_len = sizeof(e->pdata);
	if (pdata && pdata_len) {
		memcpy(e->pdata, pdata, pdata_len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = (uint8_t)pdata_len;
	}
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	id->events_out++;
	if (listen)
		listen->events_out++;
	if (write(c->wfd, &one, sizeof(one)) != sizeof(one))
		return EIO;
	return 0;
}

/* The event cma_post just queued (to fill its param). */
struct cma_event *cma_last_posted(struct cma_id *id)
{
	return to_chan(id->id.channel)->tail;
}

CMA_EXPORT int rdma_get_cm_event(struct rdma_event_channel *ch,
				 struct rdma_cm_event **event)
{
	struct cma_chan *c = to_chan(ch);
	struct cma_event *e;
	uint64_t b;
	ssize_t n;

	if (!ch || !event) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		n = read(c->ch.fd, &b, sizeof(b));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(b)) {
			if (n == 0)
				errno = ENODATA;
			return -1;
		}
		pthread_mutex_lock(&cma_lock);
		e = c->head;
		if (e) {
			c->head = e->next;
			if (!c->head)
				c->tail = NULL;
		}
		pthread_mutex_unlock(&cma_lock);
		if (e)
			break;
		/* that event was withdrawn (its id was destroyed) */
		if (fcntl(c->ch.fd, F_GETFL) & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
	}
	*event = &e->ev;
	return 0;
}

CMA_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)(void *)event;
	struct cma_id *id, *l;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cma_lock);
	id = to_cid(event->id);
	if (--id->events_out == 0)
		pthread_cond_broadcast(&id->cv);
	if (event->listen_id) {
		l = to_cid(event->listen_id);
		if (--l->events_out == 0)
			pthread_cond_broadcast(&l->cv);
	}
	pthread_mutex_unlock(&cma_lock);
	free(e);
	return 0;
}

/* A synchronous id (no channel given): wait for the event of the call
 * just made, as rdma-core's ucma_complete does; the event stays in
 * id->event until the next call. */
int cma_sync_wait(struct cma_id *id, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &ev))
		return -1;
	id->id.event = ev;
	if (ev->event == want && ev->status == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		errno = ECONNREFUSED;
	else if (ev->status < 0)
		errno = -ev->status;
	else
		errno = ev->status ? ev->status : EINVAL;
	return -1;
}

/* Events of a destroyed id still queued: withdraw them (cma_lock held).
 * A destroyed listener's connection requests the application never read
 * are refused, and their ids go with them (as the kernel's rdma_cm does
 * with ids it never reported). */
void cma_chan_free_events_of(struct cma_chan *c, struct cma_id *id)
{
	struct cma_event **pp = &c->head, *prev = NULL;

	while (*pp) {
		struct cma_event *e = *pp;
		struct cma_id *child = to_cid(e->ev.id);

		if (e->ev.id == &id->id || e->ev.listen_id == &id->id) {
			*pp = e->next;
			if (c->tail == e)
				c->tail = prev;
			child->events_out--;
			if (e->ev.listen_id)
				to_cid(e->ev.listen_id)->events_out--;
			free(e);
			if (child != id)
				cma_conn_abandon(child);
			continue;
		}
		prev = e;
		pp = &e->next;
	}
}

static const char *const ev_names[] = {
	[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
	[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
	[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
	[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
	[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
	[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
	[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
	[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
	[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
	[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
	[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
	[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
	[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
	[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
	[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

CMA_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned)event < sizeof(ev_names) / sizeof(ev_names[0]) &&
	    ev_names[event])
		return ev_names[event];
	return "UNKNOWN EVENT";
}
