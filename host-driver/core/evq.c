/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: event queues read through an eventfd, the mechanism
 * under both a completion channel (verbs/channel.c) and a context's async
 * events (event.c).
 *
 * The fd is an eventfd in semaphore mode: one count per queued event, so
 * the application can poll it, and a read blocks unless the application
 * made the fd non-blocking (then -1 with errno EAGAIN, as rdma-core).
 * Events removed before they were read (their object was destroyed) leave
 * their count behind; `skip` makes the next reads pass over those counts.
 * The owner's mutex guards the queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"

void hd_eventfd_signal(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void hd_evq_push(struct hd_evq *q, struct hd_evnode *n)
{
	n->next = NULL;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	q->len++;
}

struct hd_evnode *hd_evq_pop(struct hd_evq *q, pthread_mutex_t *lock)
{
	for (;;) {
		struct hd_evnode *n;
		uint64_t v;

		if (read(q->fd, &v, sizeof(v)) != sizeof(v))
			return NULL;
		pthread_mutex_lock(lock);
		if (q->skip) {
			/* this count was for an event of a destroyed object */
			q->skip--;
			pthread_mutex_unlock(lock);
			continue;
		}
		n = q->head;
		if (!n) {
			pthread_mutex_unlock(lock);
			continue;
		}
		q->head = n->next;
		if (!q->head)
			q->tail = NULL;
		q->len--;
		return n;
	}
}

void hd_evq_purge(struct hd_evq *q,
		  int (*match)(const struct hd_evnode *n, const void *arg),
		  const void *arg)
{
	struct hd_evnode **pp = &q->head, *n;

	q->tail = NULL;
	while ((n = *pp) != NULL) {
		if (match(n, arg)) {
			*pp = n->next;
			q->skip++;
			q->len--;
			free(n);
		} else {
			q->tail = n;
			pp = &n->next;
		}
	}
}

void hd_evq_drain(struct hd_evq *q)
{
	struct hd_evnode *n;

	while ((n = q->head) != NULL) {
		q->head = n->next;
		free(n);
	}
	q->tail = NULL;
	q->len = 0;
}
