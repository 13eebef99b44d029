/* SPDX-License-Identifier: MIT */
/*
 * snic-lock: the NIC's liveness lock (hal/posix/live_lock.h) for shell
 * scripts: util-linux's flock(1) takes flock(2) locks only (its --fcntl
 * came in 2.40; Debian 12 has 2.38).
 *
 *   snic-lock hold FD     take the write lock on inherited descriptor FD
 *                         (open for writing) and exit: the lock belongs to
 *                         the open file, so it stays held by the caller's
 *                         descriptor (and every copy: QEMU, the agent)
 *                         until the last one is closed.  Exit 0, or 1 when
 *                         somebody holds a lock on the file
 *   snic-lock served FILE exit 0 when a writer holds the lock (the NIC is
 *                         served), 1 when nobody does (a reader's lock is
 *                         no server), 2 on an error
 *
 * tools/snic-qemu holds its BAR file's lock this way; the tests use both.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_lock.h"

static int usage(void)
{
	fprintf(stderr, "usage: snic-lock hold FD | snic-lock served FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	char *end;
	long fd;
	int r;

	if (argc != 3)
		return usage();
	if (strcmp(argv[1], "hold") == 0) {
		fd = strtol(argv[2], &end, 10);
		if (*end != '\0' || end == argv[2] || fd < 0 || fd > 1 << 20)
			return usage();
		if (snic_live_lock((int)fd) != 0) {
			fprintf(stderr, "snic-lock: cannot lock descriptor "
				"%ld: %s\n", fd, strerror(errno));
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[1], "served") == 0) {
		int f = open(argv[2], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

		if (f < 0) {
			fprintf(stderr, "snic-lock: %s: %s\n", argv[2],
				strerror(errno));
			return 2;
		}
		r = snic_live_held(f);
		close(f);
		if (r < 0) {
			fprintf(stderr, "snic-lock: %s: %s\n", argv[2],
				strerror(errno));
			return 2;
		}
		return r ? 0 : 1;
	}
	return usage();
}
