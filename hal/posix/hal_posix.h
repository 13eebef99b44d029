/* SPDX-License-Identifier: MIT */
/*
 * POSIX HAL (Linux): the host-memory window, the BAR files, the clock, host
 * wake-ups and the console, for boards that run as a Linux process.
 *
 * Runtime files live in the run directory (env SNIC_RUN_DIR, default
 * /dev/shm/snic):
 *   <rundir>/<hostmem name>   host physical memory, one file shared by the
 *                             NICs of a process; a pa is an offset into it
 *   <rundir>/<nic>.bar        one NIC's BAR (SNIC_BAR_SIZE bytes)
 * Both are mapped MAP_SHARED, so host processes mapping the same files see
 * the same bytes.  Set-up functions print what failed (on which file, and
 * why) and return -1; the data-path functions never print.
 */
#ifndef SNIC_HAL_POSIX_H
#define SNIC_HAL_POSIX_H

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "snic/hal.h"

#define SNIC_RUN_DIR_DEFAULT  "/dev/shm/snic"
#define SNIC_HOSTMEM_DEFAULT  "host0.mem"
#define SNIC_HOSTMEM_SIZE_DEFAULT (1ull << 30)

/* The host-memory window (one per process, shared by its NICs). */
struct snic_hostmem {
	uint8_t *base;
	uint64_t size;          /* bytes of the shared file                  */
	uint64_t area;          /* bytes after it for private segments
				 * (segment.c); DMA covers size + area       */
	int fd;                 /* held open: its flock marks the file in use */
	char path[PATH_MAX];
};

/* One NIC's POSIX side: its BAR file and a view of the host memory. */
struct snic_posix_nic {
	char name[16];
	const struct snic_hostmem *hm;
	uint8_t *hm_base;       /* copies of hm->base / hm->size for the DMA  */
	uint64_t hm_size;       /* path: one load instead of two             */
	void *bar;              /* SNIC_BAR_SIZE bytes, MAP_SHARED            */
	int bar_fd;             /* held open: its write lock (live_lock.h)
				 * marks the NIC served                      */
	int log_level;          /* messages above it are dropped              */
	char bar_path[PATH_MAX];
};

/* Who besides our user may use the NICs (users.h; SNIC_USERS_NONE by
 * default): before snic_posix_run_dir and snic_posix_nic_open, which give
 * the run directory and the BAR files their modes. */
void snic_posix_set_users(long users);

/* Resolve the run directory (dir, else $SNIC_RUN_DIR, else the default)
 * into out, create it when missing and make it ours alone (0700) or
 * shared with the NICs' users (0750 to their group).  0 or -1. */
int snic_posix_run_dir(const char *dir, char *out, size_t outlen);

/* Create <rundir>/<name> fresh (old contents removed), size bytes, sparse,
 * and map it.  Refuses when another live process holds the file. */
int snic_hostmem_create(struct snic_hostmem *hm, const char *rundir,
			const char *name, uint64_t size);
/* Unmap and, when remove != 0, delete the file. */
void snic_hostmem_destroy(struct snic_hostmem *hm, int remove);

/* Claim <rundir>/<name>.bar: refuse ("snic0 is already served by pid N")
 * when a live process other than us serves it, else replace a stale file
 * with a fresh zeroed one and map it.  The firmware fills it in
 * snic_nic_init.  Log level from $SNIC_LOG_LEVEL (0..3, default 2).
 * Claim the BARs before creating the host memory: a second emulator is
 * then refused with the pid that serves the NIC. */
int snic_posix_nic_open(struct snic_posix_nic *p, const char *rundir,
			const char *name);
/* Give the NIC its view of the host memory (before any DMA op). */
void snic_posix_nic_set_hostmem(struct snic_posix_nic *p,
				const struct snic_hostmem *hm);
/* Unmap and, when remove != 0, delete the BAR file. */
void snic_posix_nic_close(struct snic_posix_nic *p, int remove);

/* 1 if process pid exists (kill(pid, 0) does not fail with ESRCH). */
int snic_posix_pid_alive(uint32_t pid);

/* file_guard.c: keep a file we own (fd, size bytes) whole against another
 * process's ftruncate: a SIGBUS in our mapping map..+map_len of it grows
 * it back and the access is made again.  Each mapping is given once (a
 * file may have several); -1 when the tables are full.  _unguard before
 * closing fd.  _restore (housekeeping) grows back any short guarded file
 * and returns how many times one was found short, in all. */
int snic_posix_file_guard(int fd, uint64_t size, const void *map,
			  uint64_t map_len);
void snic_posix_file_unguard(int fd);
unsigned long snic_posix_files_restore(void);

/* Wake every waiter on a 32-bit word of a shared mapping (non-private
 * futex). */
void snic_futex_wake(const void *word);

/* Sleep until one of the n words (32-bit, shared mappings) no longer holds
 * its expected value, a wake-up arrives, a signal, or timeout_ns passes.
 * Uses futex_waitv (Linux 5.16+); where the kernel lacks it, FUTEX_WAIT on
 * the first word with timeout min(timeout_ns, fallback_ns).
 * Returns 1 when woken or a value differed, 0 on timeout or signal. */
#define SNIC_FUTEX_WAITV_MAX 128
int snic_futex_waitv(void *const *words, const uint32_t *expected,
		     unsigned n, uint64_t timeout_ns, uint64_t fallback_ns);

/* [pa, pa + len) of the host-memory window, or NULL when it is not all
 * inside it: every DMA op's one check. */
static inline uint8_t *snic_posix_hm(const struct snic_posix_nic *p,
				     uint64_t pa, uint64_t len)
{
	if (pa > p->hm_size || len > p->hm_size - pa)
		return NULL;
	return p->hm_base + pa;
}

/* HAL ops; the void *hal argument is a struct snic_posix_nic *.  The
 * copies and the read-ahead are in line: a board's op is then one
 * function, not a call of another per WQE, payload and CQE. */
static inline int snic_posix_dma_read(void *hal, uint64_t pa, void *dst,
				      uint32_t len)
{
	const uint8_t *src = snic_posix_hm(hal, pa, len);

	if (src == NULL)
		return -1;
	memcpy(dst, src, len);
	return 0;
}

static inline int snic_posix_dma_write(void *hal, uint64_t pa,
				       const void *src, uint32_t len)
{
	uint8_t *dst = snic_posix_hm(hal, pa, len);

	if (dst == NULL)
		return -1;
	memcpy(dst, src, len);
	return 0;
}

/* Each 64-byte line of [pa, pa + len) toward this core's cache, for
 * reading (a WQE the host's core has just written); what lies outside the
 * window is left alone. */
static inline void snic_posix_dma_prefetch(void *hal, uint64_t pa,
					   uint32_t len)
{
	const uint8_t *at = snic_posix_hm(hal, pa, len);

	for (uint32_t off = 0; at != NULL && off < len; off += 64)
		__builtin_prefetch(at + off, 0, 3);
}

int snic_posix_dma_load_acquire32(void *hal, uint64_t pa, uint32_t *val);
int snic_posix_dma_cmp_swap(void *hal, uint64_t pa, uint64_t cmp,
			    uint64_t swap, uint64_t *old);
int snic_posix_dma_fetch_add(void *hal, uint64_t pa, uint64_t add,
			     uint64_t *old);
/* The window's page tables filled for [pa, pa + len) (hal.h dma_prepare). */
void snic_posix_dma_prepare(void *hal, uint64_t pa, uint64_t len);
uint64_t snic_posix_now_ns(void *hal);
void snic_posix_notify_host(void *hal, const void *word);
void snic_posix_log(void *hal, int level, const char *msg);

#endif /* SNIC_HAL_POSIX_H */
