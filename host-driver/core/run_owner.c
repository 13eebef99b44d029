/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: whose NICs we trust.  A NIC's BAR file and broker
 * socket are trusted because their run directory's owner made them; that
 * owner must be somebody we trust with our buffers: root, ourselves, or
 * the uid named by SNIC_NIC_OWNER (a uid or a user name).  Anybody else
 * may have made the run directory first (or SNIC_RUN_DIR points at
 * theirs) and run a NIC shared with everybody (snic-emu --users all): its
 * process would hold our memory.  A run directory others may write is
 * refused too (its files could be swapped).
 */
#include <errno.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

/* SNIC_NIC_OWNER as a uid: 0 and *uid set when named (a number or a user
 * name), -1 when unset or unknown (said on stderr). */
static int named_owner(uid_t *uid)
{
	const char *s = getenv("SNIC_NIC_OWNER");
	struct passwd pw, *res = NULL;
	char buf[1024], *end;
	unsigned long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*end && errno == 0 && v < (uid_t)-1) {
		*uid = (uid_t)v;
		return 0;
	}
	if (getpwnam_r(s, &pw, buf, sizeof(buf), &res) == 0 && res) {
		*uid = pw.pw_uid;
		return 0;
	}
	fprintf(stderr, "snic: SNIC_NIC_OWNER=%s: no such user\n", s);
	return -1;
}

static void refuse_once(const char *dir, const char *why, unsigned uid)
{
	static _Atomic int said;

	if (atomic_exchange(&said, 1))
		return;
	fprintf(stderr, "snic: refusing the NICs in %s: %s (uid %u); we "
		"trust root, ourselves (uid %u) and SNIC_NIC_OWNER=<uid|name> "
		"(boards/emu/README.md \"Sharing the NICs with other users\")"
		"\n", dir, why, uid, (unsigned)geteuid());
}

int hd_run_dir_trusted(struct stat *dst)
{
	const char *dir = hd_run_dir();
	uid_t named;

	if (stat(dir, dst) != 0)
		return -1;
	if (!S_ISDIR(dst->st_mode)) {
		refuse_once(dir, "not a directory", (unsigned)dst->st_uid);
	} else if (dst->st_mode & 022) {
		refuse_once(dir, "writable by group or others",
			    (unsigned)dst->st_uid);
	} else if (dst->st_uid == 0 || dst->st_uid == geteuid() ||
		   (named_owner(&named) == 0 && dst->st_uid == named)) {
		return 0;
	} else {
		refuse_once(dir, "owned by a user we do not trust",
			    (unsigned)dst->st_uid);
	}
	errno = EACCES;
	return -1;
}
