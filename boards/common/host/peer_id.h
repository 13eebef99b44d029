/* SPDX-License-Identifier: MIT */
/*
 * Who is at the other end of a connected Unix socket, in a form pid reuse
 * cannot fake: the pid (SO_PEERCRED) and that process's start time
 * (/proc/<pid>/stat field 22, clock ticks since boot).  Two processes that
 * had the same pid one after the other differ in their start time (a pid
 * is not reused within one clock tick).
 */
#ifndef SNIC_PEER_ID_H
#define SNIC_PEER_ID_H

#include <stdint.h>

struct peer_id {
	uint32_t pid;
	uint32_t uid;
	uint64_t start;         /* /proc/<pid>/stat starttime              */
};

/* The peer of connected socket fd: 0, or an errno (ESRCH: the peer has
 * already ended, so nothing can be said about who it was).  With
 * SO_PEERPIDFD (Linux 6.5) the process is pinned from connect() on, so
 * the start time read is the connecting process's own; without it, the
 * process living under that pid when we read. */
int peer_id_of(int fd, struct peer_id *id);

/* Start time of process pid, 0 or an errno (tests; peer_id_of). */
int peer_start_time(uint32_t pid, uint64_t *start);

static inline int peer_id_same(const struct peer_id *a, const struct peer_id *b)
{
	return a->pid == b->pid && a->start == b->start;
}

#endif /* SNIC_PEER_ID_H */
