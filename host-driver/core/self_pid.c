/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: this process's pid without a system call.
 *
 * glibc no longer caches getpid(), and on this machine (a VM whose guest
 * kernel entries trap to the hypervisor) a system call costs ~1.3 us of
 * CPU: a first 4 KiB registration asked five times (the fork checks of
 * the /proc/self descriptors, vma_query.c and vma.c, and the window
 * allocator's extent owner, hostmem.c), ~6 us of a ~27 us pair.  The pid
 * is read once and again in every child of fork() (pthread_atfork; a
 * child made without the handlers, vfork or _Fork, may only exec or
 * exit, as elsewhere in the driver: pin.c's eviction before fork).
 */
#include <pthread.h>
#include <unistd.h>

#include "core/core.h"

static _Atomic pid_t self_pid;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_child(void)
{
	atomic_store_explicit(&self_pid, getpid(), memory_order_relaxed);
}

static void self_init(void)
{
	pthread_atfork(NULL, NULL, self_child);
	atomic_store_explicit(&self_pid, getpid(), memory_order_relaxed);
}

pid_t hd_self_pid(void)
{
	pid_t p = atomic_load_explicit(&self_pid, memory_order_relaxed);

	if (p)
		return p;
	pthread_once(&self_once, self_init);
	return atomic_load_explicit(&self_pid, memory_order_relaxed);
}
