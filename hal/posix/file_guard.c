/* SPDX-License-Identifier: MIT */
/*
 * The runtime files we own, kept whole (issue 10).
 *
 * The BAR files and the shared host-memory file are regular files of the
 * run directory (host processes find and map them by name), so any
 * process of our user can ftruncate them, and a regular file cannot be
 * sealed.  Pages of a mapping past the new end give SIGBUS to whoever
 * touches them: without this, the firmware's next look at its doorbell
 * page would end the emulator.  So:
 *
 *  - SIGBUS at an address inside one of our mappings of a guarded file
 *    grows every short guarded file back to its size (ftruncate is
 *    async-signal-safe) and returns: the access is made again and finds a
 *    page (of zeros; the firmware puts its header back, guard.c);
 *  - housekeeping (snic_posix_files_restore, every ~10 ms) does the same
 *    for files nobody here touched, so host processes waiting in their own
 *    SIGBUS handler (host-driver/core/sigbus.c) get their pages back.
 *
 * Any other SIGBUS is not ours: the default action, as without us.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal_posix.h"

#define GUARD_FILES  16
#define GUARD_RANGES 32

static struct {
	int fd;
	uint64_t size;
} files[GUARD_FILES];
static struct {
	uintptr_t lo, hi;
	int fd;
} ranges[GUARD_RANGES];
static _Atomic unsigned nfiles, nranges;
static _Atomic unsigned long regrown;

/* Grow every short guarded file back: how many were short. */
static unsigned regrow(void)
{
	unsigned n = atomic_load(&nfiles), grown = 0;

	for (unsigned i = 0; i < n; i++) {
		struct stat st;

		if (fstat(files[i].fd, &st) == 0 &&
		    (uint64_t)st.st_size < files[i].size &&
		    ftruncate(files[i].fd, (off_t)files[i].size) == 0)
			grown++;
	}
	if (grown)
		atomic_fetch_add(&regrown, grown);
	return grown;
}

static int in_ranges(uintptr_t a)
{
	unsigned n = atomic_load(&nranges);

	for (unsigned i = 0; i < n; i++)
		if (a >= ranges[i].lo && a < ranges[i].hi)
			return 1;
	return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	/* ours if the address is in our mappings (the file may already
	 * have been grown back by another thread), or a file was short */
	if ((regrow() || in_ranges((uintptr_t)si->si_addr)) &&
	    si->si_code == BUS_ADRERR) {
		errno = saved;
		return;
	}
	signal(sig, SIG_DFL);   /* the access faults again: as without us */
	errno = saved;
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int snic_posix_file_guard(int fd, uint64_t size, const void *map,
			  uint64_t map_len)
{
	unsigned f = atomic_load(&nfiles), r = atomic_load(&nranges);
	int known = 0;

	if (r >= GUARD_RANGES)
		return -1;
	for (unsigned i = 0; i < f; i++)
		if (files[i].fd == fd) {
			known = 1;
			files[i].size = size;   /* guarded again after _unguard */
		}
	if (!known) {
		if (f >= GUARD_FILES)
			return -1;
		files[f].fd = fd;
		files[f].size = size;
		atomic_store(&nfiles, f + 1);
	}
	ranges[r].lo = (uintptr_t)map;
	ranges[r].hi = (uintptr_t)map + map_len;
	ranges[r].fd = fd;
	atomic_store(&nranges, r + 1);
	if (f == 0 && r == 0)
		install();
	return 0;
}

void snic_posix_file_unguard(int fd)
{
	unsigned n = atomic_load(&nfiles), r = atomic_load(&nranges);

	for (unsigned i = 0; i < n; i++)
		if (files[i].fd == fd)
			files[i].size = 0;      /* never grown again */
	for (unsigned i = 0; i < r; i++)
		if (ranges[i].fd == fd)
			ranges[i].lo = ranges[i].hi = 0;
}

unsigned long snic_posix_files_restore(void)
{
	regrow();
	return atomic_load(&regrown);
}
