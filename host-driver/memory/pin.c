/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: "pinning" application pages.
 *
 * The NIC reaches host memory only through the host-memory window file.
 * To register [addr, addr+len) the driver re-backs the application's pages
 * with window pages: it writes their current contents into freshly
 * allocated window pages (memcpy in the window's mapping, or vmsplice and
 * splice into the file) and maps the file at those offsets over
 * the same virtual addresses (mmap MAP_SHARED|MAP_FIXED).  The application
 * keeps its pointers; the NIC sees the same bytes.
 *
 * A per-process table of backed ranges ("chunks", each one contiguous
 * window extent) is reference counted by the registrations using it: two
 * MRs on one buffer, or one buffer registered on snic0 and snic1 (which
 * share host0.mem), reuse the backing; a buffer already backed by another
 * window file cannot be registered (EINVAL).  When the last reference goes
 * the range stays backed ("kept": the next registration of it costs no
 * copy) until it is evicted - before fork(), at ibv_close_device, when
 * the window runs short, when kept chunks pass half the window, or when
 * a registration finds that the application unmapped or replaced it
 * (small ones then in batches: chunk_stale).
 * Eviction copies the window's bytes into fresh private anonymous pages
 * which replace every mapping of the chunk's pages (mremap), wherever the
 * application moved them, and frees the window pages.
 *
 * Stack buffers: between the copy and the remap nothing may write the
 * pages being replaced, but the calling thread's own frames may live
 * there.  When the range overlaps the calling thread's stack, the copy and
 * the remap run in a signal handler on an alternate stack (sigaltstack),
 * during which the interrupted frames are frozen.
 *
 * SysV shared memory (shmat, also SHM_HUGETLB segments: UCX's memory
 * pools, perftest --use_hugepages): a range inside a segment re-backs the
 * whole segment (a huge-page mapping can only be replaced whole), and we
 * hold an attachment of our own so that a segment already marked
 * IPC_RMID survives.  When the last reference goes, the window's bytes are
 * copied into the segment through that attachment and the segment is
 * attached again over the range (SHM_REMAP): the application's shmdt()
 * then finds its segment where it left it.
 *
 * Address-space changes are made with raw system calls: communication
 * libraries (UCX) hook mmap/munmap/shmat to invalidate their registration
 * caches, and a re-back that keeps every byte in place must not look to
 * them like the application unmapping its buffer (a re-registration per
 * message would follow).
 *
 * Known hazards (as on real RDMA, see host-driver/README.md): other
 * threads writing the range during a re-back or an eviction lose their
 * writes; fork() shares registered pages with the child unless
 * ibv_fork_init / RDMAV_FORK_SAFE asked for MADV_DONTFORK; glibc may unmap
 * a registered range when it is freed; MADV_DONTNEED does not zero a kept
 * range.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "memory/memory.h"
#include "memory/vma_query.h"

struct hd_chunk {
	uintptr_t va;               /* page aligned                         */
	uint32_t npages;
	uint32_t first;             /* first window page                    */
	struct hd_hostmem *hm;
	unsigned refs;
	int shmid;                  /* SysV segment re-backed whole, or -1  */
	void *shm_hold;             /* our attachment: keeps it alive       */
	uint64_t *pfn;              /* page frames when backed (vma.c)      */
	int cached;                 /* no reference: kept after dereg       */
	uint64_t kept_at;           /* kept_clock when it was kept          */
	int restore_err;            /* stale: a mapping could not be given
				     * private memory (stale_reap)          */
	struct hd_chunk *next;      /* sorted by va                         */
};

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_chunk *chunk_list;
static uint64_t cached_pages;       /* in chunks no registration uses   */
static unsigned cached_chunks;
static uint64_t kept_clock;         /* orders kept chunks, oldest first  */
/* Stale kept chunks (chunk_stale): off chunk_list, window pages held. */
#define STALE_CHUNK_MAX 16u         /* pages: larger ones evicted at once */
#define STALE_MAX 64u
static struct hd_chunk *stale_list;
static unsigned stale_chunks;
/* The window extents of settled stale chunks, kept allocated for the next
 * small first registrations (stash_take). */
#define STASH_MAX STALE_MAX
struct stash_ext {
	struct hd_hostmem *hm;
	uint32_t first, npages;
};
static struct stash_ext stash[STASH_MAX];
static unsigned stash_n;
static pthread_once_t pin_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------ */
/* Raw address-space calls (see the header comment: not seen by hooks).
 * All are async-signal-safe: run_job calls them from a signal handler. */

static void *sys_mmap(void *va, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	long r = syscall(SYS_mmap, va, len, prot, flags, fd, off);

	return r == -1 ? MAP_FAILED : (void *)r;
}

static void *sys_mremap(void *old, size_t len, void *va)
{
	long r = syscall(SYS_mremap, old, len, len,
			 MREMAP_MAYMOVE | MREMAP_FIXED, va);

	return r == -1 ? MAP_FAILED : (void *)r;
}

static int sys_munmap(void *va, size_t len)
{
	return (int)syscall(SYS_munmap, va, len);
}

static void *sys_shmat(int id, const void *va, int flags)
{
	long r = syscall(SYS_shmat, id, va, flags);

	return r == -1 ? (void *)-1 : (void *)r;
}

static int sys_shmdt(const void *va)
{
	return (int)syscall(SYS_shmdt, va);
}

/* ------------------------------------------------------------------ */
/* Fork support.                                                        */

static _Atomic int fork_init_called;

int hd_fork_safe(void)
{
	if (atomic_load(&fork_init_called))
		return 1;
	return getenv("RDMAV_FORK_SAFE") || getenv("IBV_FORK_SAFE");
}

int ibv_fork_init(void)
{
	atomic_store(&fork_init_called, 1);
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return hd_fork_safe() ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

/* ------------------------------------------------------------------ */
/* The re-back / restore steps.  run_job() only makes async-signal-safe
 * calls and writes nothing but the job between its two steps... and not
 * even that: the job may sit on the page being replaced, so it is written
 * only after the remap. */

enum { JOB_BACK, JOB_RESTORE, JOB_RESTORE_SHM };

struct remap_job {
	int op;
	uint8_t *va;
	size_t len;
	int fd;
	off_t off;
	uint8_t *win;               /* the window's bytes at off, mapped    */
	int plain;                  /* BACK: va..len readable, anonymous    */
	void *tmp;                  /* RESTORE: private anonymous pages;
				     * RESTORE_SHM: our segment attachment */
	int shmid;                  /* RESTORE_SHM                          */
	int dontfork;
	int no_splice;              /* BACK: pwrite, never splice (knob)    */
	int warm;                   /* BACK: window pages mapped here
				     * already (a stashed extent: stash)   */
	volatile int err;           /* written by the signal handler        */
	volatile int done;
};

/* Copy len bytes between the window at off and buf (pwrite when `out`,
 * else pread), as raw syscalls: the range may include bytes the
 * application never allocated, which a sanitizer's interceptor would
 * flag.  0 or an errno (EFAULT: part of the range is not mapped). */
static int window_io(int fd, off_t off, uint8_t *buf, size_t len, int out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = syscall(out ? SYS_pwrite64 : SYS_pread64, fd,
				    buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : (out ? EFAULT : EIO);
		done += (size_t)n;
	}
	return 0;
}

/* The pipe window_splice asks for (F_SETPIPE_SZ; the default 64 KiB
 * when refused: more system calls, same result). */
#define SPLICE_PIPE (1u << 20)

/* The pipe of window_splice, pin_lock held: made at the first splice
 * and kept (a pipe2, an F_SETPIPE_SZ and two closes per fill were 4 of
 * the ~18 system calls of a first 4 KiB registration, ~1.3 us of CPU
 * each here); empty between splices (a failed one closes it).  A child
 * of fork() shares it with its parent: it closes its copy and makes its
 * own (pin_atfork_child); the last eviction of hd_pin_flush closes it
 * (ibv_close_device).  fd[0] < 0: none. */
struct fill_pipe {
	int fd[2];
};
static struct fill_pipe splice_pipe = { { -1, -1 } };

static void fill_pipe_close(struct fill_pipe *fp)
{
	if (fp->fd[0] < 0)
		return;
	syscall(SYS_close, fp->fd[0]);
	syscall(SYS_close, fp->fd[1]);
	fp->fd[0] = fp->fd[1] = -1;
}

/* Is the environment's knob name "0"?  Read once, into *once (-1: not
 * yet). */
static int knob_zero(const char *name, int *once)
{
	if (*once < 0) {
		const char *e = getenv(name);

		*once = e && strcmp(e, "0") == 0;
	}
	return *once;
}

/* SNIC_REG_SPLICE=0: a first copy into window pages not mapped here
 * goes through pwrite, never vmsplice and splice (window_splice, below):
 * the fallback's own path, for tests (tests/hostdrv/window_fill.c). */
static int splice_off(void)
{
	static int off = -1;

	return knob_zero("SNIC_REG_SPLICE", &off);
}

/* What the fills did (hd_pin_fill_stats), pin_lock held. */
static struct hd_fill_stats fill_stats;

/* len bytes from buf into the window at off through a pipe: vmsplice
 * takes references to the pages behind buf (it walks the page tables; no
 * access through the mapping), splice copies them into the file's pages
 * through the kernel's own mapping of memory.  pwrite reads buf through
 * the application's mapping instead, and on a VM with shadow page tables
 * (this machine's) the first access to a page through a mapping costs
 * 10-40 us: a buffer the kernel has not read before took ~20 us a page
 * (16 MiB: 0.2 GB/s), this 3.6-5 us.  0 or an errno (the caller then
 * writes with pwrite: an unreadable range, no pipe; a pipe that failed
 * may hold bytes, so it goes).  Raw system calls, as window_io. */
static int window_splice(int fd, off_t off, const uint8_t *buf, size_t len)
{
	struct fill_pipe *fp = &splice_pipe;
	int err = 0;
	size_t done = 0;

	if (fp->fd[0] < 0) {
		if (syscall(SYS_pipe2, fp->fd, O_CLOEXEC) != 0) {
			fp->fd[0] = fp->fd[1] = -1;
			return errno;
		}
		syscall(SYS_fcntl, fp->fd[1], F_SETPIPE_SZ, SPLICE_PIPE);
		fill_stats.pipes++;
	}
	while (done < len && !err) {
		/* the pipe is empty here: vmsplice fills it and returns */
		struct iovec iov = {
			(void *)(uintptr_t)(buf + done),
			len - done < SPLICE_PIPE ? len - done : SPLICE_PIPE
		};
		ssize_t n = syscall(SYS_vmsplice, fp->fd[1], &iov, 1,
				    SPLICE_F_NONBLOCK);
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		for (left = (size_t)n; left && !err;) {
			loff_t o = off + (off_t)done;
			ssize_t w = syscall(SYS_splice, fp->fd[0], NULL, fd, &o,
					    left, 0);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				err = w < 0 ? errno : EIO;
			else {
				left -= (size_t)w;
				done += (size_t)w;
			}
		}
	}
	if (err)
		fill_pipe_close(fp);
	return err;
}

#if defined(__SANITIZE_ADDRESS__)
#define HD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HD_SANITIZED 1
#endif
#endif

/* len bytes of zeros into the window at off (pwritev of one zero page
 * again and again: no buffer to allocate). */
static int window_zero(int fd, off_t off, size_t len)
{
	static const uint8_t zero[SNIC_PAGE_SIZE];
	struct iovec iov[64];
	size_t done = 0;

	for (unsigned i = 0; i < 64; i++) {
		iov[i].iov_base = (void *)(uintptr_t)zero;
		iov[i].iov_len = sizeof(zero);
	}
	while (done < len) {
		size_t left = len - done;
		int cnt = left >= sizeof(iov) / sizeof(iov[0]) * sizeof(zero) ?
			  64 : (int)((left + sizeof(zero) - 1) / sizeof(zero));
		ssize_t n = syscall(SYS_pwritev, fd, iov, cnt,
				    off + (off_t)done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		done += (size_t)n;
	}
	return 0;
}

/* Bytes [pos, pos + len) of the job's range into the window: copied
 * (data) or zeros.  Where this process has the window pages mapped
 * already (window pages are reused, lowest first), a memcpy or memset in
 * the window's own mapping runs at memory speed, where pwrite, the
 * file's page-by-page write path, takes 3x the CPU time (16 MiB).  Where
 * it has not, the memcpy would fault at every page: vmsplice and splice
 * (window_splice), else pwrite.  From 2 MiB the copy and the zeros go
 * with streaming stores (stream_copy.c: the window lines are not read
 * first).  Under AddressSanitizer (the range may hold bytes the
 * application never allocated) no memcpy. */
static int fill_part(const struct remap_job *j, size_t pos, size_t len,
		     int data, int mapped)
{
	if (!data) {
		fill_stats.zeroed += len;
		if (mapped) {
			hd_stream_zero(j->win + pos, len);
			return 0;
		}
		return window_zero(j->fd, j->off + (off_t)pos, len);
	}
#ifndef HD_SANITIZED
	if (mapped) {
		fill_stats.copied += len;
		hd_stream_copy(j->win + pos, j->va + pos, len);
		return 0;
	}
#endif
	if (!j->no_splice &&
	    window_splice(j->fd, j->off + (off_t)pos, j->va + pos, len) == 0) {
		fill_stats.spliced += len;
		return 0;
	}
	fill_stats.written += len;
	return window_io(j->fd, j->off + (off_t)pos, j->va + pos, len, 1);
}

/* A plain range (one readable private anonymous mapping) by the runs of
 * pages that hold data (PAGEMAP_SCAN): only those are copied; the pages
 * never touched read as zeros, whose zeros are written into the window
 * instead (a fresh buffer: no read fault per page to map the zero page,
 * and no page of the application's to free at the remap).  -1 when the
 * kernel cannot tell (then all of it is copied), else 0 or an errno. */
static int fill_by_runs(const struct remap_job *j, int mapped)
{
	uintptr_t lo = (uintptr_t)j->va, hi = lo + j->len, at = lo, next;
	struct hd_run r[HD_RUNS_MAX];
	int n, err = 0;

	do {
		n = hd_data_runs(at, hi, r, HD_RUNS_MAX, &next);
		if (n < 0 || (n < HD_RUNS_MAX && next < hi))
			/* the kernel could not tell: copy the rest */
			return at == lo ? -1 :
			       fill_part(j, at - lo, hi - at, 1, mapped);
		for (int i = 0; i < n && !err; i++) {
			if (r[i].lo > at)
				err = fill_part(j, at - lo, r[i].lo - at,
						0, mapped);
			if (!err)
				err = fill_part(j, r[i].lo - lo,
						r[i].hi - r[i].lo, 1, mapped);
			at = r[i].hi;
		}
	} while (!err && n == HD_RUNS_MAX && at < hi);
	if (!err && at < hi)
		err = fill_part(j, at - lo, hi - at, 0, mapped);
	return err;
}

/* The application's range into the window (fill_part).  Where the window
 * pages are not mapped here, they are mapped after the copy for the next
 * time (MADV_POPULATE_READ on the window's mapping: a fault per 16
 * pages).  The source must not fault: the range lies in one readable
 * private anonymous mapping (back_extent: copied by runs), or the kernel
 * confirms that all of it is mapped and readable (MADV_POPULATE_READ,
 * Linux 5.14; it costs half the copy).  Otherwise (an unreadable range:
 * pwrite's EFAULT; an older kernel) splice or pwrite.  On a VM with
 * shadow page tables the mapping made here does not make the next memcpy
 * cheap: its first write to each page still costs a shadow fault (~7 us
 * a page measured, 16 MiB), once. */
static int window_fill(const struct remap_job *j)
{
	/* a stashed extent was filled or populated through the window's
	 * mapping at its last use: no PAGEMAP_SCAN (were a page unmapped
	 * since, by reclaim, the memcpy would fault it in: slower only) */
	int mapped = j->warm ? 1 :
		hd_pages_mapped((uintptr_t)j->win,
				(uint32_t)(j->len >> SNIC_PAGE_SHIFT));
	int err = j->plain ? fill_by_runs(j, mapped) : -1;

	if (err < 0)
		err = fill_part(j, 0, j->len, 1,
				mapped && (j->plain ||
					   syscall(SYS_madvise, j->va, j->len,
						   MADV_POPULATE_READ) == 0));
	fill_stats.fills++;
	if (!err && !mapped)
		syscall(SYS_madvise, j->win, j->len, MADV_POPULATE_READ);
	return err;
}

static void run_job(struct remap_job *j)
{
	void *p;

	switch (j->op) {
	case JOB_BACK:
		j->err = window_fill(j);
		if (j->err)
			return;
		/* populated: no first-touch faults, and the page frames
		 * are there for the check of a later re-registration */
		p = sys_mmap(j->va, j->len, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED | MAP_POPULATE, j->fd,
			     j->off);
		if (p == MAP_FAILED) {
			j->err = errno;
			return;
		}
		if (j->dontfork)
			madvise(j->va, j->len, MADV_DONTFORK);
		break;
	case JOB_RESTORE:
		/* The shared mapping and the file hold the same bytes; tmp is
		 * ours, mapped whole. */
		memcpy(j->tmp, j->win, j->len);
		if (sys_mremap(j->tmp, j->len, j->va) == MAP_FAILED) {
			j->err = errno;
			return;
		}
		break;
	case JOB_RESTORE_SHM:
		/* The window's bytes into the segment, then the segment back
		 * over the range where the application attached it. */
		memcpy(j->tmp, j->win, j->len);
		if (sys_shmat(j->shmid, j->va, SHM_REMAP) == (void *)-1) {
			j->err = errno;
			return;
		}
		break;
	}
	j->done = 1;
}

/* A real-time signal few programs use; the handler is installed only for
 * the duration of one job (under pin_lock) and ignores deliveries that
 * are not ours. */
#define HD_REMAP_SIG (SIGRTMAX - 2)

/* volatile: the compiler must not drop the stores around pthread_kill on
 * the grounds that nothing in this file reads them (the handler does). */
static __thread struct remap_job *volatile tl_job;

static void remap_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct remap_job *j = tl_job;

	(void)sig;
	(void)si;
	(void)uc;
	if (j && !j->done && !j->err)
		run_job(j);
	errno = saved;
}

static int run_on_altstack(struct remap_job *j)
{
	const size_t sz = 256 * 1024;
	struct sigaction sa, old_sa;
	stack_t ss, old_ss;
	sigset_t set, old_set;
	void *stk;

	stk = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stk == MAP_FAILED)
		return errno;
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = stk;
	ss.ss_size = sz;
	if (sigaltstack(&ss, &old_ss) != 0) {
		/* EPERM: already running on an alternate stack. */
		int err = errno;

		munmap(stk, sz);
		return err;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = remap_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	sigaction(HD_REMAP_SIG, &sa, &old_sa);

	tl_job = j;
	sigemptyset(&set);
	sigaddset(&set, HD_REMAP_SIG);
	pthread_sigmask(SIG_UNBLOCK, &set, &old_set);
	/* A signal sent to the calling thread and not blocked is delivered
	 * before pthread_kill returns. */
	atomic_signal_fence(memory_order_seq_cst);
	pthread_kill(pthread_self(), HD_REMAP_SIG);
	atomic_signal_fence(memory_order_seq_cst);
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	tl_job = NULL;

	sigaction(HD_REMAP_SIG, &old_sa, NULL);
	sigaltstack(&old_ss, NULL);
	munmap(stk, sz);
	if (!j->done && !j->err)
		j->err = EINTR;
	return 0;
}

/* The calling thread's stack, asked once per thread (for the main
 * thread glibc reads /proc/self/maps to answer). */
static __thread uintptr_t tl_stack_lo, tl_stack_hi;

static void thread_stack(void)
{
	pthread_attr_t attr;
	void *saddr;
	size_t ssize;

	if (tl_stack_hi || pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &saddr, &ssize) == 0) {
		tl_stack_lo = (uintptr_t)saddr;
		tl_stack_hi = tl_stack_lo + ssize;
	}
	pthread_attr_destroy(&attr);
}

/* Does [lo, hi) overlap the calling thread's stack? */
static int overlaps_stack(uintptr_t lo, uintptr_t hi)
{
	volatile char probe = 0;
	uintptr_t sp = (uintptr_t)&probe;

	/* Frames live just below sp too (red zone, callees). */
	if (sp + 65536 > lo && sp < hi + 65536)
		return 1;
	thread_stack();
	return lo < tl_stack_hi && tl_stack_lo < hi;
}

static int do_job(struct remap_job *j)
{
	uintptr_t lo = (uintptr_t)j->va, hi = lo + j->len;
	/* our event and CM threads keep off the heap meanwhile */
	int guard = hd_reback_begin();

	if (overlaps_stack(lo, hi)) {
		int err = run_on_altstack(j);

		if (err) {
			hd_reback_end(guard);
			return err;
		}
		hd_dbg("%s %p+%zu on the alternate stack: %s\n",
		       j->op == JOB_BACK ? "backed" : "restored", (void *)j->va,
		       j->len, j->done ? "ok" : strerror(j->err));
	} else {
		run_job(j);
	}
	hd_reback_end(guard);
	return j->done ? 0 : (j->err ? j->err : EFAULT);
}

/* ------------------------------------------------------------------ */
/* Chunks.                                                              */

static struct hd_chunk *chunk_find(uintptr_t p, struct hd_chunk **next)
{
	struct hd_chunk *c;

	*next = NULL;
	for (c = chunk_list; c; c = c->next) {
		uintptr_t end = c->va + ((uintptr_t)c->npages << SNIC_PAGE_SHIFT);

		if (p < c->va) {
			*next = c;
			return NULL;
		}
		if (p < end)
			return c;
	}
	return NULL;
}

static void chunk_insert(struct hd_chunk *c)
{
	struct hd_chunk **pp = &chunk_list;

	while (*pp && (*pp)->va < c->va)
		pp = &(*pp)->next;
	c->next = *pp;
	*pp = c;
}

static void chunk_remove(struct hd_chunk *c)
{
	struct hd_chunk **pp = &chunk_list;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
}

static void chunk_unhold(struct hd_chunk *c)
{
	if (c->shmid >= 0)
		sys_shmdt(c->shm_hold);
	c->shmid = -1;
}

/* Is [lo, hi) free of chunks? */
static int no_chunk_in(uintptr_t lo, uintptr_t hi)
{
	struct hd_chunk *nx;

	return chunk_find(lo, &nx) == NULL && (nx == NULL || nx->va >= hi);
}

/* The range to back for [lo, hi): a SysV segment whole (held by an
 * attachment of ours), a hugetlb mapping in whole huge pages (it can be
 * split only there), else [lo, hi) itself.  Returns 1 when the range
 * lies in one readable private anonymous mapping (a copy of it cannot
 * fault). */
static int back_extent(struct hd_chunk *c, uintptr_t *lo, uintptr_t *hi)
{
	struct hd_vma v;

	if (!hd_vma_at(*lo, &v))
		return 0;
	if (v.plain)
		return *hi <= v.hi;
	if (v.shmid >= 0 && no_chunk_in(v.lo, v.hi)) {
		c->shm_hold = sys_shmat(v.shmid, NULL, 0);
		if (c->shm_hold == (void *)-1) {
			hd_dbg("cannot hold SysV segment %d: %s\n", v.shmid,
			       strerror(errno));
			return 0;
		}
		c->shmid = v.shmid;
		*lo = v.lo;
		*hi = v.hi;
	} else if (v.shmid < 0 && v.huge) {
		uintptr_t h_lo = *lo & ~(uintptr_t)(v.huge - 1);
		uintptr_t h_hi = (*hi + v.huge - 1) & ~(uintptr_t)(v.huge - 1);

		if (h_lo >= v.lo && h_hi <= v.hi && no_chunk_in(h_lo, h_hi)) {
			*lo = h_lo;
			*hi = h_hi;
		}
	}
	return 0;
}

/* Up to this many pages a kept backing is checked through its page
 * frames (pagemap: ~10 ns a page), above it through /proc/self/maps,
 * whose cost depends on the number of mappings, not on the range. */
#define PFN_CHECK_MAX 4096u

/* Remember the page frames the range is backed by now: a later
 * registration of it, after its deregistration, compares them. */
static void chunk_note_frames(struct hd_chunk *c)
{
	/* PROCMAP_QUERY answers exactly, whatever the size (chunk_valid) */
	if (c->npages > PFN_CHECK_MAX || hd_vma_query_works())
		return;
	if (!c->pfn)
		c->pfn = malloc((size_t)c->npages * sizeof(uint64_t));
	if (c->pfn && hd_page_frames(c->va, c->npages, c->pfn) != 0) {
		free(c->pfn);
		c->pfn = NULL;
	}
	/* Without CAP_SYS_ADMIN the kernel shows every frame as 0: equal
	 * frames would then prove nothing (another shared mapping at the same
	 * address looks the same), so such a chunk takes the exact check. */
	for (uint32_t i = 0; c->pfn && i < c->npages; i++)
		if (c->pfn[i] != 0 && c->pfn[i] != HD_PFN_NONE)
			return;
	free(c->pfn);
	c->pfn = NULL;
}

static uint64_t evict_cached(struct hd_hostmem *hm);
static uint64_t stale_reap(struct hd_hostmem *hm, int keep);
static uint64_t stash_release(struct hd_hostmem *hm);
static int stash_take(struct hd_hostmem *hm, uint32_t npages,
		      uint32_t *first);

static int chunk_back(struct hd_hostmem *hm, uintptr_t lo, uintptr_t hi,
		      struct hd_chunk **out)
{
	struct hd_chunk *c;
	struct remap_job j = { 0 };
	uint32_t first, npages;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return ENOMEM;
	c->shmid = -1;
	j.plain = back_extent(c, &lo, &hi);
	npages = (uint32_t)((hi - lo) >> SNIC_PAGE_SHIFT);
	/* a larger backing gets the lowest free pages, mapped here and in
	 * the NIC's process already when used before: not above the small
	 * stale chunks' pages (a 16 MiB first copy and remap onto window
	 * pages never used cost ~20 % more) */
	if (npages > STALE_CHUNK_MAX && (stale_chunks || stash_n)) {
		stale_reap(hm, 0);
		stash_release(hm);
	}
	if (npages <= STALE_CHUNK_MAX && stash_take(hm, npages, &first)) {
		err = 0;
		j.warm = 1;
		fill_stats.stashed++;
	} else {
		err = hd_hm_alloc(hm, npages, HD_HM_LOW, &first);
		/* the window full of kept backings: give them back, then
		 * retry */
		if (err == ENOMEM && evict_cached(hm))
			err = hd_hm_alloc(hm, npages, HD_HM_LOW, &first);
	}
	if (err) {
		chunk_unhold(c);
		free(c);
		return err;
	}
	j.op = JOB_BACK;
	j.va = (uint8_t *)lo;
	j.len = hi - lo;
	j.fd = hm->fd;
	j.off = (off_t)hd_hm_off(hm, first);
	j.win = hd_hm_ptr(hm, hd_page_pa(first));
	j.dontfork = hd_fork_safe();
	j.no_splice = splice_off();
	err = do_job(&j);
	if (err) {
		hd_dbg("cannot back %p+%zu: %s\n", (void *)lo, hi - lo,
		       strerror(err));
		hd_hm_free(hm, first, npages);
		chunk_unhold(c);
		free(c);
		return err;
	}
	c->va = lo;
	c->npages = npages;
	c->first = first;
	c->hm = hm;
	c->refs = 0;
	if (c->shmid < 0)
		chunk_note_frames(c);
	chunk_insert(c);
	*out = c;
	return 0;
}

/* [va, va+len) gets private anonymous pages holding the window's bytes
 * at file offset off. */
static int restore_private(struct hd_hostmem *hm, uintptr_t va, size_t len,
			   off_t off)
{
	struct remap_job j;
	int err;

	memset(&j, 0, sizeof(j));
	j.op = JOB_RESTORE;
	j.va = (uint8_t *)va;
	j.len = len;
	j.fd = hm->fd;
	j.off = off;
	j.win = hd_hm_ptr(hm, hd_page_pa(hm->lo_page) + (uint64_t)off);
	j.tmp = sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j.tmp == MAP_FAILED)
		return errno;
	err = do_job(&j);
	if (err)
		sys_munmap(j.tmp, len);
	return err;
}

/* The range's original memory back in place with the window's bytes:
 * private anonymous pages, or the SysV segment it was part of. */
static int chunk_restore(struct hd_chunk *c, size_t len)
{
	struct remap_job j;

	if (c->shmid < 0)
		return restore_private(c->hm, c->va, len,
				       (off_t)hd_hm_off(c->hm, c->first));
	memset(&j, 0, sizeof(j));
	j.op = JOB_RESTORE_SHM;
	j.va = (uint8_t *)c->va;
	j.len = len;
	j.fd = c->hm->fd;
	j.off = (off_t)hd_hm_off(c->hm, c->first);
	j.win = hd_hm_ptr(c->hm, hd_page_pa(c->first));
	j.tmp = c->shm_hold;
	j.shmid = c->shmid;
	return do_job(&j);
}

static void chunk_free(struct hd_chunk *c)
{
	chunk_unhold(c);
	hd_hm_free(c->hm, c->first, c->npages);
	free(c->pfn);
	free(c);
}

/* The window pages stay allocated (nobody else gets them) but the chunk
 * is forgotten: when the range could not be given its own memory. */
static void chunk_leak(struct hd_chunk *c, int err)
{
	hd_dbg("cannot restore %p+%u pages: %s (window pages kept)\n",
	       (void *)c->va, c->npages, strerror(err));
	free(c->pfn);
	free(c);
}

/* Last reference gone (a SysV segment): give the range its own memory
 * again. */
static void chunk_release(struct hd_chunk *c)
{
	size_t len = (size_t)c->npages << SNIC_PAGE_SHIFT;
	int err;

	chunk_remove(c);
	/* The application may already have unmapped the range (free() of a
	 * large block): then there is nothing to restore. */
	if (msync((void *)c->va, len, MS_ASYNC) != 0 && errno == ENOMEM) {
		hd_dbg("range %p+%zu already unmapped\n", (void *)c->va, len);
	} else {
		err = chunk_restore(c, len);
		if (err) {
			/* Leave the range backed and leak the window pages
			 * rather than hand pages the application still maps
			 * to others. */
			chunk_leak(c, err);
			return;
		}
	}
	chunk_free(c);
}

/* ------------------------------------------------------------------ */
/* Backings kept after deregistration ("cached" chunks: no reference).
 * The application may meanwhile have unmapped the range, or part of it,
 * and mapped other memory there; only what still maps the window is
 * ours. */

static void cache_add(struct hd_chunk *c)
{
	c->cached = 1;
	c->kept_at = ++kept_clock;
	cached_chunks++;
	cached_pages += c->npages;
}

static void cache_del(struct hd_chunk *c)
{
	if (c->cached) {
		cached_pages -= c->npages;
		cached_chunks--;
	}
	c->cached = 0;
}

/* A mapping of a chunk's window pages gets private memory with their
 * bytes (where the application's range is now: it may have moved it). */
static int restore_map(void *arg, uintptr_t va, uint32_t pages,
		       uint32_t index)
{
	struct hd_chunk *c = arg;

	return restore_private(c->hm, va, (size_t)pages << SNIC_PAGE_SHIFT,
			       (off_t)hd_hm_off(c->hm, c->first + index));
}

/* A cached chunk goes: every mapping of its window pages left in this
 * process gets private memory with their bytes, then the window pages
 * are freed (nothing maps them any more). */
static void chunk_evict(struct hd_chunk *c)
{
	int err;

	cache_del(c);
	chunk_remove(c);
	err = hd_window_maps(c->hm, hd_hm_off(c->hm, c->first), c->npages,
			     restore_map, c);
	if (err)
		chunk_leak(c, err);
	else
		chunk_free(c);
}

/*
 * A small kept chunk found replaced (the application freed the buffer and
 * has other memory at that address now) need not be evicted at once: its
 * window pages cannot go back to the allocator before every mapping of
 * them left in this process has private memory (the application may have
 * moved the range: mremap, realloc), which takes a walk over the
 * process's file mappings (~15 us here, more in a process with many
 * libraries) - the larger part of a first 4 KiB registration.  It is put
 * aside instead, its window pages held (nothing else gets them), and one
 * walk settles all the chunks put aside: when there are STALE_MAX of
 * them (at most 1,024 window pages), before fork(), at ibv_close_device
 * and when the window runs short (evict_cached), and before a larger
 * backing is allocated (chunk_back).  Larger chunks are evicted at once:
 * the walk is small next to their copy, and their window pages are
 * reused at once, mapped here and in the NIC's process already (a 1 MiB
 * first registration on window pages used before takes ~30 us less of
 * the copy and ~50 us less of the remap, measured here).
 */

/* A mapping of hm's file (fd page index from 0): where it holds pages of
 * a stale chunk, private memory with their bytes instead. */
static int restore_stale(void *arg, uintptr_t va, uint32_t pages,
			 uint32_t index)
{
	struct hd_hostmem *hm = arg;

	for (struct hd_chunk *c = stale_list; c; c = c->next) {
		uint32_t c_lo, lo, hi;
		int err;

		if (c->hm != hm)
			continue;
		c_lo = (uint32_t)(hd_hm_off(hm, c->first) >> SNIC_PAGE_SHIFT);
		lo = index > c_lo ? index : c_lo;
		hi = index + pages < c_lo + c->npages ? index + pages :
			c_lo + c->npages;
		if (lo >= hi)
			continue;
		err = restore_private(hm,
				      va + ((uintptr_t)(lo - index) << SNIC_PAGE_SHIFT),
				      (size_t)(hi - lo) << SNIC_PAGE_SHIFT,
				      (off_t)lo << SNIC_PAGE_SHIFT);
		if (err && !c->restore_err)
			c->restore_err = err;
	}
	return 0;
}

/*
 * The stash: the window extent of a small stale chunk, once settled (its
 * pages mapped nowhere but in the window's own mapping), need not go back
 * to the allocator: it stays this process's there and serves the next
 * small first registration of its size.  A program that registers fresh
 * small buffers (allocate, register, deregister, free, again) then holds
 * the allocator's lock (two fcntl system calls, ~1.3 us each here) only
 * once per STASH_MAX registrations, not at each, and its extent's pages
 * are known mapped here already (filled or populated through the
 * window's mapping at their last use): no PAGEMAP_SCAN asks.  At most
 * STASH_MAX extents of up to STALE_CHUNK_MAX pages; they go back to the
 * allocator wherever kept chunks are evicted (before fork(), at
 * ibv_close_device, when the window runs short) and before a larger
 * backing is allocated (which gets the lowest free pages, as before).
 */

/* pin_lock held: the stashed extents of hm (NULL: all) go back to the
 * allocator; returns their pages. */
static uint64_t stash_release(struct hd_hostmem *hm)
{
	struct hd_hm_ext ext[STASH_MAX];
	uint64_t freed = 0;

	while (stash_n) {
		struct hd_hostmem *w = hm ? hm : stash[0].hm;
		unsigned n = 0, k = 0;

		for (unsigned i = 0; i < stash_n; i++) {
			if (stash[i].hm != w) {
				stash[k++] = stash[i];
				continue;
			}
			ext[n++] = (struct hd_hm_ext){ stash[i].first,
						       stash[i].npages };
			freed += stash[i].npages;
		}
		stash_n = k;
		hd_hm_free_n(w, ext, n);
		if (hm)
			break;
	}
	return freed;
}

/* pin_lock held: a stashed extent of hm of npages pages, taken (the one
 * stashed last: its pages were used last).  1 and *first, or 0. */
static int stash_take(struct hd_hostmem *hm, uint32_t npages,
		      uint32_t *first)
{
	for (unsigned i = stash_n; i-- > 0;) {
		if (stash[i].hm != hm || stash[i].npages != npages)
			continue;
		*first = stash[i].first;
		stash[i] = stash[--stash_n];
		return 1;
	}
	return 0;
}

/* pin_lock held: settle the stale chunks of hm (NULL: all), one walk per
 * window; returns the window pages freed.  keep: their extents go to the
 * stash while it has room (none counted as freed). */
static uint64_t stale_reap(struct hd_hostmem *hm, int keep)
{
	uint64_t freed = 0;

	while (stale_list) {
		struct hd_hostmem *w = hm;
		struct hd_chunk **pp = &stale_list, *c;
		struct hd_hm_ext ext[HD_HM_FREE_MAX];
		unsigned n = 0;
		int err;

		if (!w)
			w = stale_list->hm;
		err = hd_window_maps(w, 0, w->npages, restore_stale, w);
		while ((c = *pp) != NULL) {
			if (c->hm != w) {
				pp = &c->next;
				continue;
			}
			*pp = c->next;
			stale_chunks--;
			if (err || c->restore_err) {
				chunk_leak(c, err ? err : c->restore_err);
				continue;
			}
			if (keep && stash_n < STASH_MAX) {
				stash[stash_n++] = (struct stash_ext){
					w, c->first, c->npages };
			} else {
				freed += c->npages;
				/* the window pages go back together, under
				 * one hold of the allocator's lock */
				if (n == HD_HM_FREE_MAX) {
					hd_hm_free_n(w, ext, n);
					n = 0;
				}
				ext[n++] = (struct hd_hm_ext){ c->first,
							       c->npages };
			}
			chunk_unhold(c);
			free(c->pfn);
			free(c);
		}
		hd_hm_free_n(w, ext, n);
		if (hm)
			break;
	}
	return freed;
}

/* pin_lock held: a cached chunk found replaced goes (see above). */
static void chunk_stale(struct hd_chunk *c)
{
	if (c->npages > STALE_CHUNK_MAX) {
		chunk_evict(c);
		return;
	}
	cache_del(c);
	chunk_remove(c);
	c->restore_err = 0;
	c->next = stale_list;
	stale_list = c;
	stale_chunks++;
	if (stale_chunks >= STALE_MAX)
		stale_reap(NULL, 1);
}

/* Counts the pages of a chunk mapped where it was backed. */
struct in_place {
	struct hd_chunk *c;
	uint32_t pages;
};

static int count_in_place(void *arg, uintptr_t va, uint32_t pages,
			  uint32_t index)
{
	struct in_place *ip = arg;

	if (va == ip->c->va + ((uintptr_t)index << SNIC_PAGE_SHIFT))
		ip->pages += pages;
	return 0;
}

/* Is the cached chunk's whole range still backed by its window pages?
 * Exact and cheap with PROCMAP_QUERY (Linux 6.11): each mapping over the
 * range names the window file at the chunk's offsets.  Before that:
 * surely not when its first page is private memory now (the application
 * unmapped it and mapped fresh memory there: a buffer freed and
 * allocated again); fast, for small chunks: the page frames are those
 * seen when it was backed (pagemap); else, exact: /proc/self/maps names
 * the window file at the offsets. */
static int chunk_valid(struct hd_chunk *c)
{
	uint64_t *now;
	struct in_place ip = { c, 0 };
	int ok = hd_window_in_place(c->hm, c->va, hd_hm_off(c->hm, c->first),
				    c->npages);

	if (ok >= 0)
		return ok;
	ok = 0;
	if (hd_page_private(c->va))
		return 0;
	now = c->pfn ? malloc((size_t)c->npages * sizeof(uint64_t)) : NULL;
	if (now && hd_page_frames(c->va, c->npages, now) == 0) {
		ok = 1;
		for (uint32_t i = 0; i < c->npages && ok; i++)
			ok = now[i] != HD_PFN_NONE && now[i] == c->pfn[i];
	}
	free(now);
	if (ok)
		return 1;
	ok = hd_window_maps(c->hm, hd_hm_off(c->hm, c->first), c->npages,
			    count_in_place, &ip) == 0 &&
	     ip.pages == c->npages;
	if (ok)
		chunk_note_frames(c); /* moved (reclaim, migration): renew */
	return ok;
}

/* pin_lock held: evict hm's cached chunks (NULL: all); window pages
 * freed. */
static uint64_t evict_cached(struct hd_hostmem *hm)
{
	struct hd_chunk *c = chunk_list, *nx;
	uint64_t freed = stale_reap(hm, 0) + stash_release(hm);

	for (; c; c = nx) {
		nx = c->next;
		if (c->cached && (!hm || c->hm == hm)) {
			freed += c->npages;
			chunk_evict(c);
		}
	}
	return freed;
}

void hd_pin_fill_stats(struct hd_fill_stats *out)
{
	pthread_mutex_lock(&pin_lock);
	*out = fill_stats;
	pthread_mutex_unlock(&pin_lock);
}

/* Kept backings hold at most half of a window and are at most
 * KEPT_MAX chunks (the chunk list is searched at every registration);
 * SNIC_REG_CACHE=0 keeps none (every deregistration copies back, as
 * before). */
#define KEPT_MAX 1024u

static int cache_off(void)
{
	static int off = -1;

	return knob_zero("SNIC_REG_CACHE", &off);
}

/* The oldest kept chunks go until the limits hold. */
static void cache_trim(struct hd_hostmem *hm)
{
	uint64_t limit = cache_off() ? 0 : hm->npages / 2;

	while (cached_chunks && (cached_pages > limit ||
				 cached_chunks > KEPT_MAX || cache_off())) {
		struct hd_chunk *old = NULL;

		for (struct hd_chunk *c = chunk_list; c; c = c->next)
			if (c->cached && (!old || c->kept_at < old->kept_at))
				old = c;
		if (!old)
			break;
		chunk_evict(old);
	}
}

static void pin_drop_refs(struct hd_pin *pin)
{
	for (uint32_t i = 0; i < pin->nchunks; i++) {
		struct hd_chunk *c = pin->chunks[i];

		if (--c->refs)
			continue;
		/* a SysV segment must be back where the application
		 * attached it (its shmdt); anything else stays backed */
		if (c->shmid >= 0)
			chunk_release(c);
		else
			cache_add(c);
	}
	pin->nchunks = 0;
	cache_trim(pin->hm);
}

/* fork(): the child would share kept backings with the parent (a shared
 * mapping) where it expects copy-on-write private memory: they go first.
 * Registered ranges keep the rules of README.md (ibv_fork_init). */
static void pin_atfork_prepare(void)
{
	pthread_mutex_lock(&pin_lock);
	evict_cached(NULL);
}

static void pin_atfork_done(void)
{
	pthread_mutex_unlock(&pin_lock);
}

/* The child's splice pipe is its parent's too: the child makes its own. */
static void pin_atfork_child(void)
{
	fill_pipe_close(&splice_pipe);
	pthread_mutex_unlock(&pin_lock);
}

static void pin_atfork_register(void)
{
	pthread_atfork(pin_atfork_prepare, pin_atfork_done, pin_atfork_child);
}

/* pin_lock held: a kept chunk that cannot serve a registration on hm
 * goes: the application replaced its range (chunk_stale), or it is
 * another window's.  1 when it went. */
static int kept_gone(struct hd_hostmem *hm, struct hd_chunk *c)
{
	if (!c || !c->cached || (c->hm == hm && chunk_valid(c)))
		return 0;
	hd_dbg("kept backing %p+%u pages %s\n", (void *)c->va, c->npages,
	       c->hm == hm ? "replaced" : "evicted (another window)");
	if (c->hm == hm)
		chunk_stale(c);
	else
		chunk_evict(c);
	return 1;
}

/* pin_lock held: the chunk holding p, or a new one backing [p, lim) up
 * to the next chunk; a kept backing goes when the application replaced
 * it or when it is another window's (a range deregistered on a NIC with
 * its own segment, now registered on another). */
static int chunk_for(struct hd_hostmem *hm, uintptr_t p, uintptr_t end,
		     struct hd_chunk **out)
{
	struct hd_chunk *next, *c = chunk_find(p, &next);

	if (kept_gone(hm, c))
		c = chunk_find(p, &next);
	if (c && c->hm != hm) {
		hd_dbg("%p is backed by %s, not %s\n", (void *)p, c->hm->name,
		       hm->name);
		return EINVAL;
	}
	if (c) {
		*out = c;
		return 0;
	}
	/* Kept chunks further in the range that go too (a buffer freed and
	 * allocated again over several earlier ones) go first: one backing,
	 * one copy and one remap for the whole range, not one per piece. */
	while (next && next->va < end && kept_gone(hm, next))
		chunk_find(p, &next);
	return chunk_back(hm, p, (next && next->va < end) ? next->va : end,
			  out);
}

int hd_pin(struct hd_hostmem *hm, void *addr, size_t len,
	   struct hd_pin **out)
{
	uintptr_t a = (uintptr_t)addr, start, end, p;
	uint32_t cap = 0, idx = 0;
	struct hd_pin *pin;
	uint64_t npages;
	int err = 0;

	if (len == 0 || a + len < a)
		return EINVAL;
	start = a & ~(uintptr_t)(SNIC_PAGE_SIZE - 1);
	end = (a + len + SNIC_PAGE_SIZE - 1) & ~(uintptr_t)(SNIC_PAGE_SIZE - 1);
	if (end < a + len)
		return EINVAL;
	npages = (end - start) >> SNIC_PAGE_SHIFT;
	if (npages > SNIC_MAX_MTT)
		return ENOMEM;
	if (start == 0)
		return EFAULT;

	pin = calloc(1, sizeof(*pin));
	if (!pin)
		return ENOMEM;
	pin->hm = hm;
	pin->start = start;
	pin->npages = (uint32_t)npages;
	pin->pages = malloc(npages * sizeof(uint32_t));
	if (!pin->pages) {
		free(pin);
		return ENOMEM;
	}

	pthread_once(&pin_once, pin_atfork_register);
	pthread_mutex_lock(&pin_lock);
	for (p = start; p < end;) {
		struct hd_chunk *c;
		uintptr_t lim;

		err = chunk_for(hm, p, end, &c);
		if (err)
			break;
		/* A SysV segment or huge pages: backed beyond [p, end). */
		lim = c->va + ((uintptr_t)c->npages << SNIC_PAGE_SHIFT);
		if (lim > end)
			lim = end;
		if (pin->nchunks == cap) {
			uint32_t ncap = cap ? cap * 2 : 4;
			struct hd_chunk **nc = realloc(
				pin->chunks, ncap * sizeof(*nc));

			if (!nc) {
				if (c->refs == 0 && !c->cached)
					cache_add(c);
				err = ENOMEM;
				break;
			}
			pin->chunks = nc;
			cap = ncap;
		}
		if (c->refs++ == 0)
			cache_del(c);
		pin->chunks[pin->nchunks++] = c;
		for (; p < lim; p += SNIC_PAGE_SIZE)
			pin->pages[idx++] = c->first + (uint32_t)(
				(p - c->va) >> SNIC_PAGE_SHIFT);
	}
	if (err)
		pin_drop_refs(pin);
	pthread_mutex_unlock(&pin_lock);

	if (err) {
		free(pin->chunks);
		free(pin->pages);
		free(pin);
		return err;
	}
	*out = pin;
	return 0;
}

void hd_unpin(struct hd_pin *pin)
{
	if (!pin)
		return;
	pthread_mutex_lock(&pin_lock);
	pin_drop_refs(pin);
	pthread_mutex_unlock(&pin_lock);
	free(pin->chunks);
	free(pin->pages);
	free(pin);
}

uint64_t hd_pin_flush(struct hd_hostmem *hm)
{
	uint64_t freed;

	pthread_mutex_lock(&pin_lock);
	freed = evict_cached(hm);
	if (!chunk_list && !stale_list)
		fill_pipe_close(&splice_pipe); /* nothing backed: teardown */
	pthread_mutex_unlock(&pin_lock);
	return freed;
}

unsigned hd_pin_stashed(const struct hd_hostmem *hm, struct hd_hm_ext *out,
			unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&pin_lock);
	for (unsigned i = 0; i < stash_n; i++) {
		if (stash[i].hm != hm)
			continue;
		if (n < max)
			out[n] = (struct hd_hm_ext){ stash[i].first,
						     stash[i].npages };
		n++;
	}
	pthread_mutex_unlock(&pin_lock);
	return n;
}

int hd_pin_uses(const struct hd_hostmem *hm)
{
	int used = 0;

	pthread_mutex_lock(&pin_lock);
	for (struct hd_chunk *c = chunk_list; c && !used; c = c->next)
		used = c->hm == hm;
	for (struct hd_chunk *c = stale_list; c && !used; c = c->next)
		used = c->hm == hm;
	for (unsigned i = 0; i < stash_n && !used; i++)
		used = stash[i].hm == hm;
	pthread_mutex_unlock(&pin_lock);
	return used;
}
