/* SPDX-License-Identifier: MIT */
/*
 * The NIC's liveness lock (issue 10): whoever serves a BAR file (snic-emu,
 * hal_posix.c; a QEMU NIC's launcher, tools/snic-qemu through
 * tools/snic-lock.c) holds an open-file-description write lock over the
 * whole file for its whole life, and the kernel drops it when the last
 * descriptor of that open file is gone (SIGKILL included).
 *
 * A write lock, not flock(): a process may flock a file it can only read,
 * so with the BAR group-readable (snic-emu --users) a member could hold a
 * dead NIC's flock and make it look alive.  F_WRLCK needs a descriptor
 * open for writing, and a member's read lock is not the answer we look
 * for: F_OFD_GETLK must report F_WRLCK.  Only system calls (fcntl): the
 * host driver's SIGBUS handler asks too (host-driver/core/sigbus.c).
 * Not taken on the host-memory file: the host driver's allocator locks
 * byte 0 of that one (host-driver/memory/hostmem.c), and fcntl locks of
 * one file all interact.
 */
#ifndef SNIC_LIVE_LOCK_H
#define SNIC_LIVE_LOCK_H

#include <fcntl.h>

/* Take the lock on fd (open for writing): 0, or -1 with errno (EAGAIN:
 * somebody holds a lock on the file). */
static inline int snic_live_lock(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 0 };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* Does a writer hold the lock on the file behind fd (any descriptor, read
 * only too; locks of fd's own open file are not seen)?  1 yes, 0 no (a
 * reader's lock, or none), -1 cannot tell (errno). */
static inline int snic_live_held(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 0 };

	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return -1;
	return fl.l_type == F_WRLCK;
}

#endif /* SNIC_LIVE_LOCK_H */
