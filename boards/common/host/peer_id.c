/* SPDX-License-Identifier: MIT */
/*
 * A connected Unix socket's peer process, pid and start time (peer_id.h).
 */
#include "peer_id.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77         /* Linux 6.5, asm-generic/socket.h */
#endif

int peer_start_time(uint32_t pid, uint64_t *start)
{
	char path[32], buf[1024], *p, *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", (unsigned)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? ESRCH : errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return ESRCH;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and ')', so
	 * count fields from the last ')'; field 3 (state) follows it */
	p = strrchr(buf, ')');
	if (!p)
		return EIO;
	p++;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (field == 22)
			break;
		p = strchr(p, ' ');
		if (!p)
			return EIO;
	}
	errno = 0;
	*start = strtoull(p, &end, 10);
	return errno || end == p ? EIO : 0;
}

/* 1 when the process behind pidfd has ended (the pidfd is readable). */
static int pidfd_ended(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

int peer_id_of(int fd, struct peer_id *id)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int pidfd = -1, err;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return errno;
	if (cr.pid <= 0)
		return EPERM;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) {
		if (errno != ENOPROTOOPT && errno != EINVAL)
			return errno == ESRCH ? ESRCH : errno;
		pidfd = -1;     /* an older kernel: no pinning */
	}
	id->pid = (uint32_t)cr.pid;
	id->uid = (uint32_t)cr.uid;
	err = peer_start_time(id->pid, &id->start);
	/* read while the pinned process still lived: its own start time,
	 * not that of a process that got its pid since */
	if (!err && pidfd >= 0 && pidfd_ended(pidfd))
		err = ESRCH;
	if (pidfd >= 0)
		close(pidfd);
	return err;
}
