/* SPDX-License-Identifier: MIT */
/*
 * Re-backing (pin.c) against the driver's own threads.  Between copying a
 * page into the window and mapping the window over it, a write to that
 * page from another thread is lost.  The application's threads are its
 * own affair (README, a hazard as on real RDMA), but ours are not: the
 * context's event thread and librdmacm's CM thread write into heap
 * objects (ids, QPs, CQs, event lists) that share pages with the buffers
 * the application registers, at any time: ucmatose's client registers
 * malloc(100) buffers on the page of the previous connection's QP while
 * the CM thread moves that QP to RTS on its REP.  With the copy-to-remap
 * window widened to 20 ms, 2 of 5 ucmatose -c 10 runs hung without this
 * lock, 10 of 10 passed with it (the cm/ucmatose hang seen once in CI
 * under load).  So our
 * threads hold this lock for reading while they work, and a re-back takes
 * it for writing.  A thread that holds it for reading and re-backs
 * (none does today) does not wait for itself.
 */
#include <pthread.h>

#include "memory/memory.h"

static pthread_rwlock_t guard = PTHREAD_RWLOCK_INITIALIZER;
static __thread unsigned held;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A child of fork has one thread: nobody holds the lock there. */
static void child_reinit(void)
{
	pthread_rwlock_init(&guard, NULL);
	held = 0;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, child_reinit);
}

void snic_heap_guard_enter(void)
{
	pthread_once(&atfork_once, register_atfork);
	pthread_rwlock_rdlock(&guard);
	held++;
}

void snic_heap_guard_leave(void)
{
	held--;
	pthread_rwlock_unlock(&guard);
}

int hd_reback_begin(void)
{
	pthread_once(&atfork_once, register_atfork);
	if (held)
		return 0;
	pthread_rwlock_wrlock(&guard);
	return 1;
}

void hd_reback_end(int taken)
{
	if (taken)
		pthread_rwlock_unlock(&guard);
}
