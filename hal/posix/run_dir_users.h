/* SPDX-License-Identifier: MIT */
/*
 * Whether this server's --users agrees with the run directory's other
 * live servers (run_dir_users.c).
 */
#ifndef SNIC_RUN_DIR_USERS_H
#define SNIC_RUN_DIR_USERS_H

#include "users.h"

/* 0 when the directory (dfd, named path in messages) already has the
 * mode and group `users` gives it, or no live server uses it; -1 (errno
 * EBUSY, said on stderr) when another live server's users differ. */
int snic_run_dir_users_agree(int dfd, const char *path, long users);

#endif /* SNIC_RUN_DIR_USERS_H */
