/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: completion channels.
 *
 * A channel is an eventfd in semaphore mode (one read per event, pollable,
 * EAGAIN when the application made it non-blocking) plus a queue of CQs
 * with a pending event.  The event thread (core/event.c) queues and
 * signals; ibv_get_cq_event reads one count and pops one CQ.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* Completion channels.                                                 */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct hd_channel *ch = calloc(1, sizeof(*ch));

	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ch.fd < 0) {
		int err = errno;

		free(ch);
		errno = err;
		return NULL;
	}
	ch->q.fd = ch->ch.fd;
	ch->ch.context = context;
	ch->ch.refcnt = 0;
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct hd_channel *ch = to_hd_chan(channel);

	pthread_mutex_lock(&ch->lock);
	if (channel->refcnt) {
		pthread_mutex_unlock(&ch->lock);
		return EBUSY;   /* CQs still use it (as rdma-core) */
	}
	hd_evq_drain(&ch->q);
	pthread_mutex_unlock(&ch->lock);
	close(channel->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

/* Event thread: an armed CQ got a completion. */
void hd_cq_deliver_comp(struct hd_context *ctx, uint32_t cqn)
{
	struct hd_cq_event *e = malloc(sizeof(*e));
	struct hd_channel *ch;
	struct hd_cq *cq;

	if (!e)
		return;
	/* obj_lock keeps the CQ alive (destroy_cq unlinks it under the
	 * lock before purging its queued events). */
	pthread_mutex_lock(&ctx->obj_lock);
	cq = hd_find_cq(ctx, cqn);
	if (!cq || !cq->ibcq.channel) {
		pthread_mutex_unlock(&ctx->obj_lock);
		free(e);
		return;
	}
	ch = to_hd_chan(cq->ibcq.channel);
	e->cq = cq;
	pthread_mutex_lock(&ch->lock);
	if (ch->q.len >= HD_EVQ_MAX) { /* bounded: core.h */
		pthread_mutex_unlock(&ch->lock);
		pthread_mutex_unlock(&ctx->obj_lock);
		free(e);
		return;
	}
	hd_evq_push(&ch->q, &e->node);
	pthread_mutex_unlock(&ch->lock);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_eventfd_signal(ch->ch.fd);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context)
{
	struct hd_channel *ch = to_hd_chan(channel);
	struct hd_evnode *n = hd_evq_pop(&ch->q, &ch->lock);
	struct hd_cq *scq;

	if (!n)
		return -1;
	scq = ((struct hd_cq_event *)(void *)n)->cq;
	/* Counted while the channel lock still keeps the CQ from being
	 * purged, so destroy_cq waits for this event's ack. */
	pthread_mutex_lock(&scq->ibcq.mutex);
	scq->obj.comp_events_got++;
	pthread_mutex_unlock(&scq->ibcq.mutex);
	pthread_mutex_unlock(&ch->lock);
	free(n);
	*cq = &scq->ibcq;
	*cq_context = scq->ibcq.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}


static int event_of_cq(const struct hd_evnode *n, const void *cq)
{
	return ((const struct hd_cq_event *)(const void *)n)->cq == cq;
}

void hd_channel_detach_cq(struct hd_channel *ch, struct hd_cq *cq)
{
	/* Events queued but not read yet disappear with the CQ (as the
	 * kernel drops them from the channel). */
	pthread_mutex_lock(&ch->lock);
	hd_evq_purge(&ch->q, event_of_cq, cq);
	ch->ch.refcnt--;
	pthread_mutex_unlock(&ch->lock);
}
