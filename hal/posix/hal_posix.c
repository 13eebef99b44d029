/* SPDX-License-Identifier: MIT */
/*
 * POSIX HAL (Linux): host-memory window and BAR files in the run directory,
 * DMA as bounds-checked copies, atomics, clock, futex wake-ups, console.
 *
 * Liveness of runtime files: the owner holds a lock on each file it serves
 * for as long as it runs (the kernel drops it when the process dies, even
 * by SIGKILL): on a BAR file the write lock the host driver asks
 * (live_lock.h, host-driver/core/liveness.c), which a process that may
 * only read the file cannot take; on the host memory an exclusive flock
 * (the host driver's allocator takes fcntl locks on that file).  A file is
 * stale when nobody holds its lock (not from the BAR's fw_pid: any process
 * of the user may write it, and a recycled pid is somebody else's); stale
 * files are removed and created afresh (a new inode: host processes still
 * mapping the old one keep a dead BAR, not ours).
 *
 * Modes: the run directory 0700 and the files 0600, or shared with the
 * NICs' users (snic_posix_set_users, users.h): the directory 0750 and the
 * BAR files 0640 to their group; the host memory stays 0600.
 */
#include "hal_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "snic/hostif.h"
#include "live_lock.h"
#include "pagemap_scan.h"
#include "run_dir_users.h"
#include "users.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449     /* same number on x86-64 and aarch64 */
#endif

/* ---------------------------------------------------------------------- */
/* Set-up helpers.                                                         */

static long users = SNIC_USERS_NONE;    /* who besides us (users.h) */

void snic_posix_set_users(long u)
{
	users = u;
}

/* mode whatever the umask (snic-emu's is 077): a parent made for the run
 * directory is every user's to pass through */
static int mkdir_one(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == 0 && chmod(path, mode) == 0)
		return 0;
	if (errno == EEXIST)
		return 0;
	fprintf(stderr, "snic: cannot create run directory %s: %s\n", path,
		strerror(errno));
	return -1;
}

/* The run directory holds the BARs and the host memory: it is the NIC
 * owner's (0700, or 0750 to the NICs' users' group), and a directory
 * others can write to (where they could plant a BAR or a symlink) is
 * refused, not used. */
static int run_dir_private(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char who[96];

	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "snic: run directory %s is not a directory%s\n",
			path, errno == ELOOP || errno == ENOTDIR ?
			" (a symlink or a file: refused)" : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		fprintf(stderr, "snic: run directory %s belongs to uid %u, not "
			"to us (uid %u): refused\n", path, (unsigned)st.st_uid,
			(unsigned)geteuid());
		close(fd);
		return -1;
	}
	if (snic_run_dir_users_agree(fd, path, users) != 0) {
		close(fd);
		return -1;
	}
	if (snic_users_share(users, fd, NULL, 0700, 05) != 0) {
		fprintf(stderr, "snic: cannot give run directory %s its mode "
			"(%s): %s\n", path, snic_users_text(users, who,
							    sizeof(who)),
			strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int snic_posix_run_dir(const char *dir, char *out, size_t outlen)
{
	struct stat st;
	int n;

	if (dir == NULL || dir[0] == '\0')
		dir = getenv("SNIC_RUN_DIR");
	if (dir == NULL || dir[0] == '\0')
		dir = SNIC_RUN_DIR_DEFAULT;
	n = snprintf(out, outlen, "%s", dir);
	if (n <= 0 || (size_t)n >= outlen) {
		fprintf(stderr, "snic: run directory path too long: %s\n", dir);
		return -1;
	}
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	/* Create missing parents first, then the directory itself. */
	for (char *s = out + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = stat(out, &st) == 0 ? 0 : mkdir_one(out, 0755);
		*s = '/';
		if (r != 0)
			return -1;
	}
	if (mkdir_one(out, 0700) != 0)
		return -1;
	return run_dir_private(out);
}

static int join_path(char *out, size_t outlen, const char *dir,
		     const char *name, const char *suffix)
{
	int n = snprintf(out, outlen, "%s/%s%s", dir, name, suffix);

	if (n <= 0 || (size_t)n >= outlen) {
		fprintf(stderr, "snic: path too long: %s/%s%s\n", dir, name,
			suffix);
		return -1;
	}
	return 0;
}

/* Create path fresh (O_EXCL), lock it (a BAR: its liveness lock; else an
 * exclusive flock), size it. */
static int create_locked(const char *path, uint64_t size, const char *what,
			 int bar)
{
	/* O_EXCL never follows a symlink; 0600: the owner's alone */
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0600);

	if (fd < 0) {
		fprintf(stderr, "snic: cannot create %s %s: %s%s\n", what, path,
			strerror(errno),
			errno == EEXIST ? " (another process created it just now)"
					: "");
		return -1;
	}
	if ((bar ? snic_live_lock(fd) : flock(fd, LOCK_EX | LOCK_NB)) != 0) {
		fprintf(stderr, "snic: cannot lock %s %s: %s\n", what, path,
			strerror(errno));
		goto fail;
	}
	if (ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "snic: cannot size %s %s to %llu bytes: %s\n",
			what, path, (unsigned long long)size, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	unlink(path);
	return -1;
}

static void *map_shared(int fd, uint64_t size, const char *path,
			const char *what)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "snic: cannot map %s %s (%llu bytes): %s\n",
			what, path, (unsigned long long)size, strerror(errno));
		return NULL;
	}
	return p;
}

int snic_posix_pid_alive(uint32_t pid)
{
	if (pid == 0 || pid > (uint32_t)INT32_MAX)
		return 0;
	return !(kill((pid_t)pid, 0) == -1 && errno == ESRCH);
}

/* ---------------------------------------------------------------------- */
/* Host memory.                                                            */

int snic_hostmem_create(struct snic_hostmem *hm, const char *rundir,
			const char *name, uint64_t size)
{
	int fd;

	memset(hm, 0, sizeof(*hm));
	hm->fd = -1;
	if (size < SNIC_PAGE_SIZE || size % SNIC_PAGE_SIZE != 0 ||
	    size > (uint64_t)SIZE_MAX) {
		fprintf(stderr, "snic: host memory size %llu must be a non-zero "
			"multiple of %u bytes\n", (unsigned long long)size,
			SNIC_PAGE_SIZE);
		return -1;
	}
	if (join_path(hm->path, sizeof(hm->path), rundir, name, "") != 0)
		return -1;

	/* An existing file may be in use by a running emulator; otherwise
	 * its old contents must not leak into this run: remove it. */
	fd = open(hm->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			fprintf(stderr, "snic: host memory file %s is in use by "
				"another running emulator\n", hm->path);
			close(fd);
			return -1;
		}
		close(fd);
	}
	if (unlink(hm->path) != 0 && errno != ENOENT) {
		fprintf(stderr, "snic: cannot remove old host memory file %s: "
			"%s\n", hm->path, strerror(errno));
		return -1;
	}
	fd = create_locked(hm->path, size, "host memory file", 0);
	if (fd < 0)
		return -1;
	hm->base = map_shared(fd, size, hm->path, "host memory file");
	if (hm->base == NULL) {
		close(fd);
		unlink(hm->path);
		return -1;
	}
	hm->size = size;
	hm->fd = fd;
	snic_posix_file_guard(fd, size, hm->base, size);
	return 0;
}

void snic_hostmem_destroy(struct snic_hostmem *hm, int remove)
{
	if (hm->base != NULL)
		munmap(hm->base, (size_t)(hm->size + hm->area));
	if (remove && hm->fd >= 0)
		unlink(hm->path);
	if (hm->fd >= 0) {
		snic_posix_file_unguard(hm->fd);
		close(hm->fd);
	}
	hm->base = NULL;
	hm->fd = -1;
}

/* ---------------------------------------------------------------------- */
/* BAR files.                                                              */

static int log_level_from_env(void)
{
	const char *s = getenv("SNIC_LOG_LEVEL");

	if (s != NULL && s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
		return s[0] - '0';
	return SNIC_LOG_INFO;
}

static uint32_t bar_file_pid(int fd)
{
	uint32_t pid = 0;

	if (pread(fd, &pid, sizeof(pid), offsetof(struct snic_bar_hdr, fw_pid))
	    != (ssize_t)sizeof(pid))
		return 0;
	return pid;
}

/* 0: no live owner (stale file removed or none), -1: refused. */
static int bar_remove_stale(const char *name, const char *path)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	uint32_t pid;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "snic: cannot open existing BAR file %s: %s\n",
			path, strerror(errno));
		return -1;
	}
	pid = bar_file_pid(fd);
	/* served while a writer holds its lock; a reader's lock (anybody
	 * the file is shared with may take one) is no server */
	if (snic_live_held(fd) != 0) {
		/* the header's pid is only what it says, for the message */
		if (pid != 0)
			fprintf(stderr, "snic: %s is already served by pid %u "
				"(%s is locked)\n", name, pid, path);
		else
			fprintf(stderr, "snic: %s is already served by another "
				"process starting up (%s is locked)\n", name,
				path);
		close(fd);
		return -1;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		fprintf(stderr, "snic: cannot remove stale BAR file %s: %s\n",
			path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (pid != 0)
		fprintf(stderr, "snic: %s: removed stale %s (pid %u is gone)\n",
			name, path, pid);
	else
		fprintf(stderr, "snic: %s: removed stale %s (its server is "
			"gone)\n", name, path);
	return 0;
}

int snic_posix_nic_open(struct snic_posix_nic *p, const char *rundir,
			const char *name)
{
	int fd;

	memset(p, 0, sizeof(*p));
	p->bar_fd = -1;
	if (strlen(name) >= sizeof(p->name) || name[0] == '\0' ||
	    strchr(name, '/') != NULL) {
		fprintf(stderr, "snic: bad NIC name '%s' (1..%zu characters, "
			"no '/')\n", name, sizeof(p->name) - 1);
		return -1;
	}
	memcpy(p->name, name, strlen(name) + 1);
	p->log_level = log_level_from_env();
	if (join_path(p->bar_path, sizeof(p->bar_path), rundir, name,
		      ".bar") != 0)
		return -1;
	if (bar_remove_stale(name, p->bar_path) != 0)
		return -1;
	fd = create_locked(p->bar_path, SNIC_BAR_SIZE, "BAR file", 1);
	if (fd < 0)
		return -1;
	/* readable by the NICs' users once locked and whole: they map its
	 * header (host-driver/core/context.c), nobody but us writes it */
	if (snic_users_share(users, fd, NULL, 0600, 04) != 0) {
		char who[96];

		fprintf(stderr, "snic: cannot share BAR file %s with %s: %s\n",
			p->bar_path, snic_users_text(users, who, sizeof(who)),
			strerror(errno));
		close(fd);
		unlink(p->bar_path);
		return -1;
	}
	p->bar = map_shared(fd, SNIC_BAR_SIZE, p->bar_path, "BAR file");
	if (p->bar == NULL) {
		close(fd);
		unlink(p->bar_path);
		return -1;
	}
	p->bar_fd = fd;
	snic_posix_file_guard(fd, SNIC_BAR_SIZE, p->bar, SNIC_BAR_SIZE);
	return 0;
}

void snic_posix_nic_set_hostmem(struct snic_posix_nic *p,
				const struct snic_hostmem *hm)
{
	p->hm = hm;
	p->hm_base = hm->base;
	p->hm_size = hm->size + hm->area;
}

void snic_posix_nic_close(struct snic_posix_nic *p, int remove)
{
	if (p->bar != NULL)
		munmap(p->bar, SNIC_BAR_SIZE);
	if (remove && p->bar_fd >= 0)
		unlink(p->bar_path);
	if (p->bar_fd >= 0) {
		snic_posix_file_unguard(p->bar_fd);
		close(p->bar_fd);
	}
	p->bar = NULL;
	p->bar_fd = -1;
}

/* ---------------------------------------------------------------------- */
/* Futexes.  The words live in MAP_SHARED file mappings seen by other
 * processes: never FUTEX_PRIVATE_FLAG.                                    */

void snic_futex_wake(const void *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* -1: not yet known.  Atomic: every core thread sleeps through here. */
static _Atomic int futex_waitv_missing = -1;

static int futex_wait_one(void *word, uint32_t expected, uint64_t ns)
{
	struct timespec rel = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};

	if (syscall(SYS_futex, word, FUTEX_WAIT, expected, &rel, NULL, 0) == 0)
		return 1;
	return errno == EAGAIN;
}

int snic_futex_waitv(void *const *words, const uint32_t *expected,
		     unsigned n, uint64_t timeout_ns, uint64_t fallback_ns)
{
	struct futex_waitv w[SNIC_FUTEX_WAITV_MAX];
	struct timespec ts;
	uint64_t abs_ns;

	if (n == 0)
		return 0;
	if (atomic_load_explicit(&futex_waitv_missing, memory_order_relaxed) < 0) {
		const char *s = getenv("SNIC_NO_FUTEX_WAITV");

		atomic_store_explicit(&futex_waitv_missing, s != NULL && s[0] == '1',
				      memory_order_relaxed);
	}
	if (atomic_load_explicit(&futex_waitv_missing, memory_order_relaxed) ||
	    n > SNIC_FUTEX_WAITV_MAX)
		goto fallback;
	for (unsigned i = 0; i < n; i++) {
		w[i].val = expected[i];
		w[i].uaddr = (uint64_t)(uintptr_t)words[i];
		w[i].flags = FUTEX_32;
		w[i].__reserved = 0;
	}
	/* futex_waitv takes an absolute timeout on the given clock. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	abs_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
		 timeout_ns;
	ts.tv_sec = (time_t)(abs_ns / 1000000000u);
	ts.tv_nsec = (long)(abs_ns % 1000000000u);
	if (syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC) >= 0)
		return 1;
	if (errno == EAGAIN)
		return 1;
	if (errno != ENOSYS)
		return 0;               /* ETIMEDOUT, EINTR */
	atomic_store_explicit(&futex_waitv_missing, 1, memory_order_relaxed);
fallback:
	return futex_wait_one(words[0], expected[0],
			      timeout_ns < fallback_ns ? timeout_ns : fallback_ns);
}

/* ---------------------------------------------------------------------- */
/* HAL ops.                                                                */

/* The host stores its producer indexes with release (C11, same process
 * or another one mapping the same file): an acquire load pairs with it. */
int snic_posix_dma_load_acquire32(void *hal, uint64_t pa, uint32_t *val)
{
	const uint8_t *w = snic_posix_hm(hal, pa, 4);

	if ((pa & 3u) || w == NULL)
		return -1;
	*val = __atomic_load_n((const uint32_t *)(const void *)w,
			       __ATOMIC_ACQUIRE);
	return 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14, the same on every arch */
#endif

/* At most this much of one range is filled per call: a command that
 * hands over more (a 256 MiB registration) would hold the NIC's loop for
 * its whole length (~1.5 us per page) for pages the NIC may never touch;
 * the rest fills on demand as before.  64 MiB: UCX's largest registration
 * of a tag_lat job fits (16 MiB left half its receive buffers to fault);
 * -DSNIC_POSIX_PREPARE_MAX=BYTES to try another. */
#ifndef SNIC_POSIX_PREPARE_MAX
#define SNIC_POSIX_PREPARE_MAX (64ull << 20)
#endif
#define PAGEMAP_PRESENT (1ull << 63)

/* /proc/self/pagemap, opened once (-1: unavailable): which of our pages
 * are mapped already, so a range registered again costs one read of it
 * instead of a walk that takes every page (PFNs need CAP_SYS_ADMIN, the
 * present bit does not). */
static int pagemap_fd(void)
{
	static _Atomic int fd = -2;
	int f = atomic_load(&fd), mine, want = -2;

	if (f != -2)
		return f;
	mine = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (!atomic_compare_exchange_strong(&fd, &want, mine)) {
		if (mine >= 0)
			close(mine);
		return want;
	}
	return mine;
}

/* Fill the pages of [va, va + n pages) that are not mapped yet (one read
 * of the page map: 0.15 ms for 4,096 pages here, where MADV_POPULATE_READ
 * over pages already mapped takes 0.85 ms): for kernels without
 * PAGEMAP_SCAN. */
#define PAGEMAP_BATCH 4096
static void populate_missing_read(int fd, uint8_t *va, uint64_t n,
				  uint64_t pg)
{
	uint64_t e[PAGEMAP_BATCH];
	uint64_t i = 0, run = 0;

	if (fd < 0 || pread(fd, e, (size_t)n * 8, (off_t)((uintptr_t)va / pg * 8))
		      != (ssize_t)(n * 8)) {
		(void)madvise(va, (size_t)(n * pg), MADV_POPULATE_READ);
		return;
	}
	for (i = 0; i <= n; i++) {
		if (i < n && !(e[i] & PAGEMAP_PRESENT))
			continue;
		if (i > run)
			(void)madvise(va + run * pg, (size_t)((i - run) * pg),
				      MADV_POPULATE_READ);
		run = i + 1;
	}
}

/* The same over [lo, hi), the runs that are not mapped found by
 * PAGEMAP_SCAN (pagemap_scan.h): a range registered again, mapped
 * whole, costs one ioctl (64 MiB: ~40 us, where the page map's 16,384
 * entries took 1-2 ms).  0, or -1 when the kernel has no PAGEMAP_SCAN. */
static int populate_missing(int fd, uintptr_t lo, uintptr_t hi)
{
	struct page_region r[32];
	int n;

	while (fd >= 0 && lo < hi) {
		n = snic_pagemap_holes(fd, lo, hi, r, 32, &lo);
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++)
			(void)madvise((void *)(uintptr_t)r[i].start,
				      (size_t)(r[i].end - r[i].start),
				      MADV_POPULATE_READ);
		if (n < 32)
			break;
	}
	return fd >= 0 ? 0 : -1;
}

/* The window is a shared mapping that fills on demand: without this, the
 * NIC's first access to each page of a fresh registration is a page fault
 * on the data path (the receive hop of a UCX ping-pong: 1.58 us median
 * instead of 0.41).  MADV_POPULATE_READ maps the pages contents
 * untouched, and writable: a shared tmpfs mapping needs no write
 * notification, so its read faults map the page writable (0 write faults
 * after it for 4,096 pages, holes included, here) at half the time of
 * MADV_POPULATE_WRITE, which takes a write fault per page (the read
 * faults map 16 pages each: fault-around); only the range the host
 * handed over is committed, and the host driver has populated its own
 * side of it anyway.  (An arm64 CPU without hardware dirty bits still
 * takes a fault at the first write.)  Before Linux 5.14 (EINVAL) or on
 * any error: nothing, the faults come back. */
void snic_posix_dma_prepare(void *hal, uint64_t pa, uint64_t len)
{
	const struct snic_posix_nic *p = hal;
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = pa & ~(pg - 1), hi, n;

	if (pa > p->hm_size || len > p->hm_size - pa)
		return;
	hi = (pa + len + pg - 1) & ~(pg - 1);
	if (hi > p->hm_size)
		hi = p->hm_size;
	if (hi - lo > SNIC_POSIX_PREPARE_MAX)
		hi = lo + SNIC_POSIX_PREPARE_MAX;
	if (populate_missing(pagemap_fd(), (uintptr_t)(p->hm_base + lo),
			     (uintptr_t)(p->hm_base + hi)) == 0)
		return;
	for (; lo < hi; lo += n * pg) {
		n = (hi - lo) / pg < PAGEMAP_BATCH ? (hi - lo) / pg : PAGEMAP_BATCH;
		populate_missing_read(pagemap_fd(), p->hm_base + lo, n, pg);
	}
}

static uint64_t *atomic_word(const struct snic_posix_nic *p, uint64_t pa)
{
	uint8_t *w = snic_posix_hm(p, pa, 8);

	if ((pa & 7u) != 0 || w == NULL)
		return NULL;
	return (uint64_t *)(void *)w;
}

int snic_posix_dma_cmp_swap(void *hal, uint64_t pa, uint64_t cmp,
			    uint64_t swap, uint64_t *old)
{
	uint64_t *w = atomic_word(hal, pa);

	if (w == NULL)
		return -1;
	/* On failure cmp receives the current value; on success it already
	 * equals the prior value. */
	__atomic_compare_exchange_n(w, &cmp, swap, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	*old = cmp;
	return 0;
}

int snic_posix_dma_fetch_add(void *hal, uint64_t pa, uint64_t add,
			     uint64_t *old)
{
	uint64_t *w = atomic_word(hal, pa);

	if (w == NULL)
		return -1;
	*old = __atomic_fetch_add(w, add, __ATOMIC_SEQ_CST);
	return 0;
}

uint64_t snic_posix_now_ns(void *hal)
{
	struct timespec ts;

	(void)hal;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void snic_posix_notify_host(void *hal, const void *word)
{
	const struct snic_posix_nic *p = hal;
	uintptr_t w = (uintptr_t)word, bar = (uintptr_t)p->bar;

	/* Only aligned words inside this NIC's BAR: a futex wake elsewhere
	 * could disturb unrelated waiters. */
	if (w < bar || w - bar > SNIC_BAR_SIZE - sizeof(uint32_t) || (w & 3u))
		return;
	snic_futex_wake(word);
}

void snic_posix_log(void *hal, int level, const char *msg)
{
	const struct snic_posix_nic *p = hal;
	static const char *const prefix[] = {
		[SNIC_LOG_ERR] = "error: ",
		[SNIC_LOG_WARN] = "warning: ",
		[SNIC_LOG_INFO] = "",
		[SNIC_LOG_DEBUG] = "debug: ",
	};

	if (level > p->log_level)
		return;
	if (level < SNIC_LOG_ERR)
		level = SNIC_LOG_ERR;
	fprintf(stderr, "%s: %s%s\n", p->name, prefix[level], msg);
}
