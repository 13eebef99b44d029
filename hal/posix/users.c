/* SPDX-License-Identifier: MIT */
/*
 * The NICs' users (users.h): parsing --users and the modes it gives.
 */
#include "users.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int snic_users_parse(const char *prog, const char *s, long *users)
{
	struct group *g;
	char *end;
	unsigned long v;

	if (s == NULL || s[0] == '\0') {
		fprintf(stderr, "%s: --users needs a group (or \"all\")\n",
			prog);
		return -1;
	}
	if (strcmp(s, "all") == 0) {
		*users = SNIC_USERS_ALL;
		return 0;
	}
	g = getgrnam(s);
	if (g != NULL) {
		*users = SNIC_USERS_GROUP(g->gr_gid);
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (s[0] >= '0' && s[0] <= '9' && *end == '\0' && errno == 0 &&
	    v < (unsigned long)(gid_t)-1) {
		*users = SNIC_USERS_GROUP(v);
		return 0;
	}
	fprintf(stderr, "%s: --users %s: no such group (a group name or "
		"number, or \"all\")\n", prog, s);
	return -1;
}

/* fd's or path's mode; a symlink at path is refused (EOPNOTSUPP: glibc
 * changes no symlink's mode), not followed */
static int set_mode(int fd, const char *path, mode_t mode)
{
	return fd >= 0 ? fchmod(fd, mode)
		       : fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW);
}

int snic_users_share(long users, int fd, const char *path, mode_t mode,
		     mode_t bits)
{
	gid_t gid = (gid_t)-1;

	if (users > 0) {
		gid = SNIC_USERS_GID(users);
		mode |= bits << 3;
	} else if (users == SNIC_USERS_ALL) {
		mode |= bits << 3 | bits;
	}
	/* the owner's bits alone first (a directory of ours the old group
	 * could write stops being theirs), then the group, then its bits:
	 * no instant lets a group in with more than it is given */
	if (set_mode(fd, path, mode & 0700) != 0)
		return -1;
	if (gid != (gid_t)-1 &&
	    (fd >= 0 ? fchown(fd, (uid_t)-1, gid)
		     : lchown(path, (uid_t)-1, gid)) != 0)
		return -1;
	return set_mode(fd, path, mode);
}

const char *snic_users_text(long users, char *buf, size_t len)
{
	struct group *g;

	if (users == SNIC_USERS_NONE)
		snprintf(buf, len, "its own user only");
	else if (users == SNIC_USERS_ALL)
		snprintf(buf, len, "all users");
	else if ((g = getgrgid(SNIC_USERS_GID(users))) != NULL)
		snprintf(buf, len, "group %s (gid %u)", g->gr_name,
			 (unsigned)SNIC_USERS_GID(users));
	else
		snprintf(buf, len, "gid %u", (unsigned)SNIC_USERS_GID(users));
	return buf;
}
