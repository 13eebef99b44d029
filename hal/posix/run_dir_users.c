/* SPDX-License-Identifier: MIT */
/*
 * One run directory, one answer to "who may use the NICs": the directory's
 * mode and group are what its servers' --users gives (users.h), and the
 * last server to start sets them.  So a server whose --users asks for
 * other modes than the directory has is refused while another live server
 * (a BAR file whose liveness write lock is held, live_lock.h) uses it:
 * it would cut that server's members off, or open a default server's
 * NICs to others.
 */
#include "run_dir_users.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live_lock.h"

/* Does the directory already have what users asks for? */
static int modes_agree(const struct stat *st, long users)
{
	mode_t m = st->st_mode & 07777;

	if (users == SNIC_USERS_NONE)
		return m == 0700;
	if (users == SNIC_USERS_ALL)
		return m == 0755;
	return m == 0750 && st->st_gid == SNIC_USERS_GID(users);
}

/* A live server's BAR file in the directory: its name in `bar`, 1; 0
 * none. */
static int live_bar(int dfd, char *bar, size_t len)
{
	int d2 = dup(dfd);
	DIR *dp = d2 >= 0 ? fdopendir(d2) : NULL;
	struct dirent *de;
	int found = 0;

	if (!dp) {
		if (d2 >= 0)
			close(d2);
		return 0;
	}
	rewinddir(dp);
	while (!found && (de = readdir(dp)) != NULL) {
		size_t n = strlen(de->d_name);
		int fd;

		if (n <= 4 || strcmp(de->d_name + n - 4, ".bar") != 0)
			continue;
		fd = openat(dfd, de->d_name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (snic_live_held(fd) == 1) {
			snprintf(bar, len, "%s", de->d_name);
			found = 1;
		}
		close(fd);
	}
	closedir(dp);
	return found;
}

int snic_run_dir_users_agree(int dfd, const char *path, long users)
{
	struct stat st;
	char bar[256], have[96], want[96];

	if (fstat(dfd, &st) != 0)
		return -1;
	if (modes_agree(&st, users) || !live_bar(dfd, bar, sizeof(bar)))
		return 0;
	if ((st.st_mode & 07777) == 0700)
		snprintf(have, sizeof(have), "its own user only");
	else if ((st.st_mode & 07777) == 0755)
		snprintf(have, sizeof(have), "all users");
	else
		snprintf(have, sizeof(have), "mode %04o, gid %u",
			 (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid);
	fprintf(stderr, "snic: run directory %s is shared with %s by the live "
		"server of %s; this one's --users (%s) would change that: "
		"start it with the same --users or in another --run-dir\n",
		path, have, bar, snic_users_text(users, want, sizeof(want)));
	errno = EBUSY;
	return -1;
}
