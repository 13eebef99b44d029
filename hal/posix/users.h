/* SPDX-License-Identifier: MIT */
/*
 * Who besides the NICs' own user may use them (snic-emu --users,
 * tools/snic-qemu --users; issue 10).  By default nobody: the run
 * directory is 0700 and every file in it 0600.  With a group, its members
 * may enter and list the run directory (0750), connect to the brokers'
 * sockets (0660) and read the BAR files (0640) and the sysfs-shaped view;
 * the host memory and the admin sockets stay 0600.  "all" gives the same
 * to every local user (o+ the same bits).  Members run as other uids than
 * the NICs' server, so the kernel keeps them out of everything they were
 * not handed (README.md "Who may use the NICs").
 */
#ifndef SNIC_USERS_H
#define SNIC_USERS_H

#include <sys/types.h>

/* Who, as a long whose zero value shares nothing (a config left unset
 * fails closed, never to gid 0, root's group): */
#define SNIC_USERS_NONE 0L      /* the NICs' user only (the default)       */
#define SNIC_USERS_ALL  (-1L)   /* every local user                        */
/* anything else: a group, SNIC_USERS_GROUP(gid) */
#define SNIC_USERS_GROUP(gid) ((long)(gid) + 1)
#define SNIC_USERS_GID(users) ((gid_t)((users) - 1))

/* "GROUP" (a name or a number) or "all" into *users: 0, or -1 said on
 * stderr with prog's name. */
int snic_users_parse(const char *prog, const char *s, long *users);

/* Share what fd (or, fd < 0, path: a symlink there is refused, not
 * followed) is with users: own mode `mode` (0700, 0600) plus `bits` (of
 * 07: r 4, w 2, x 1) for the group (and others with "all"); with a
 * group, the file's group becomes it (the owner's bits alone in between).
 * SNIC_USERS_NONE: mode alone.  0 or -1 with errno. */
int snic_users_share(long users, int fd, const char *path, mode_t mode,
		     mode_t bits);

/* A short text for messages: "group rdma (gid 107)", "all users". */
const char *snic_users_text(long users, char *buf, size_t len);

#endif /* SNIC_USERS_H */
