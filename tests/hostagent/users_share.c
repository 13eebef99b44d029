/* SPDX-License-Identifier: MIT */
/*
 * snic_users_share (hal/posix/users.h) on a path: a symlink there is
 * refused, not followed (the socket paths it shares are in the run
 * directory, where a symlink would point the group at anything of ours),
 * and a real file ends with the group and the bits asked for.
 *
 *   users_share            (exit 0: all passed)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "users.h"
#include "../check.h"

static mode_t mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

int main(void)
{
	char dir[] = "/tmp/snic-ushare.XXXXXX", file[64], link[64];
	struct stat st;
	int fd, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(dir))
		return 2;
	snprintf(file, sizeof(file), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || fchmod(fd, 0600) != 0 || symlink(file, link) != 0)
		return 2;
	close(fd);

	rc = snic_users_share(SNIC_USERS_ALL, -1, link, 0600, 06);
	check(rc != 0, "a symlink at the path: refused");
	check(mode_of(file) == 0600, "its target's mode unchanged (0600)");

	rc = snic_users_share(SNIC_USERS_GROUP(getgid()), -1, file, 0600, 06);
	check(rc == 0 && stat(file, &st) == 0 && st.st_gid == getgid() &&
	      (st.st_mode & 07777) == 0660,
	      "a file shared with a group: 0660, that group's");

	unlink(link);
	unlink(file);
	rmdir(dir);
	printf("users_share: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
