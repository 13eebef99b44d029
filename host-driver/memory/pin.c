/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: "pinning" application pages.
 *
 * The NIC reaches host memory only through the host-memory window file.
 * To register [addr, addr+len) the driver re-backs the application's pages
 * with window pages: it writes their current contents into freshly
 * allocated window pages (pwrite) and maps the file at those offsets over
 * the same virtual addresses (mmap MAP_SHARED|MAP_FIXED).  The application
 * keeps its pointers; the NIC sees the same bytes.
 *
 * A per-process table of backed ranges ("chunks", each one contiguous
 * window extent) is reference counted by the registrations using it: two
 * MRs on one buffer, or one buffer registered on snic0 and snic1 (which
 * share host0.mem), reuse the backing; a buffer already backed by another
 * window file cannot be registered (EINVAL).  When the last reference goes,
 * the contents are copied into fresh private anonymous pages which replace
 * the mapping (mremap), and the window pages are freed: the application
 * can keep using or free() the buffer.
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
 * Known hazards (as on real RDMA, see README.md): other threads writing the
 * range during the re-back lose their writes; fork() shares the backed
 * pages with the child unless ibv_fork_init / RDMAV_FORK_SAFE asked for
 * MADV_DONTFORK; glibc may unmap a registered range when it is freed.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memory/memory.h"

struct hd_chunk {
	uintptr_t va;               /* page aligned                         */
	uint32_t npages;
	uint32_t first;             /* first window page                    */
	struct hd_hostmem *hm;
	unsigned refs;
	int shmid;                  /* SysV segment re-backed whole, or -1  */
	void *shm_hold;             /* our attachment: keeps it alive       */
	struct hd_chunk *next;      /* sorted by va                         */
};

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_chunk *chunk_list;

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
	void *tmp;                  /* RESTORE: private anonymous pages;
				     * RESTORE_SHM: our segment attachment */
	int shmid;                  /* RESTORE_SHM                          */
	int dontfork;
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

static void run_job(struct remap_job *j)
{
	void *p;

	switch (j->op) {
	case JOB_BACK:
		j->err = window_io(j->fd, j->off, j->va, j->len, 1);
		if (j->err)
			return;
		p = sys_mmap(j->va, j->len, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED, j->fd, j->off);
		if (p == MAP_FAILED) {
			j->err = errno;
			return;
		}
		if (j->dontfork)
			madvise(j->va, j->len, MADV_DONTFORK);
		break;
	case JOB_RESTORE:
		/* The shared mapping and the file hold the same bytes. */
		j->err = window_io(j->fd, j->off, j->tmp, j->len, 0);
		if (j->err)
			return;
		if (sys_mremap(j->tmp, j->len, j->va) == MAP_FAILED) {
			j->err = errno;
			return;
		}
		break;
	case JOB_RESTORE_SHM:
		/* The window's bytes into the segment, then the segment back
		 * over the range where the application attached it. */
		j->err = window_io(j->fd, j->off, j->tmp, j->len, 0);
		if (j->err)
			return;
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

/* Does [lo, hi) overlap the calling thread's stack? */
static int overlaps_stack(uintptr_t lo, uintptr_t hi)
{
	volatile char probe = 0;
	uintptr_t sp = (uintptr_t)&probe;
	pthread_attr_t attr;
	int hit = 0;

	/* Frames live just below sp too (red zone, callees). */
	if (sp + 65536 > lo && sp < hi + 65536)
		hit = 1;
	if (!hit && pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *saddr;
		size_t ssize;

		if (pthread_attr_getstack(&attr, &saddr, &ssize) == 0) {
			uintptr_t s_lo = (uintptr_t)saddr;
			uintptr_t s_hi = s_lo + ssize;

			hit = lo < s_hi && s_lo < hi;
		}
		pthread_attr_destroy(&attr);
	}
	return hit;
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

/* Is p inside a SysV shared-memory attachment?  Then give the extent of
 * that attachment ([*lo, *hi), the whole segment as mapped) and its id.
 * From /proc/self/maps: "/SYSV<key>" mappings carry the shmid as inode. */
static int shm_extent(uintptr_t p, uintptr_t *lo, uintptr_t *hi, int *shmid)
{
	unsigned long start, end, off, inode;
	char line[512], path[256];
	uintptr_t base = 0, top = 0;
	long id = -1;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %lu %255s", &start, &end,
			   &off, &inode, path) < 4)
			continue;
		if (strncmp(path, "/SYSV", 5) != 0)
			continue;
		if (id >= 0) {
			/* The attachment may be split into several
			 * mappings (madvise, mprotect): follow it. */
			if ((long)inode == id && start == top &&
			    start - off == base) {
				top = end;
				continue;
			}
			break;
		}
		if (p >= start && p < end) {
			id = (long)inode;
			base = start - off;
			top = end;
		}
	}
	fclose(f);
	if (id < 0 || id > INT32_MAX)
		return 0;
	*lo = base;
	*hi = top;
	*shmid = (int)id;
	return 1;
}

static int chunk_back(struct hd_hostmem *hm, uintptr_t lo, uintptr_t hi,
		      struct hd_chunk **out)
{
	uint32_t npages = (uint32_t)((hi - lo) >> SNIC_PAGE_SHIFT);
	uintptr_t slo, shi;
	struct hd_chunk *c;
	struct remap_job j;
	uint32_t first;
	int err, shmid;

	c = calloc(1, sizeof(*c));
	if (!c)
		return ENOMEM;
	c->shmid = -1;
	if (shm_extent(lo, &slo, &shi, &shmid)) {
		struct hd_chunk *nx;

		/* The whole segment, when no other chunk is in the way. */
		if (chunk_find(slo, &nx) == NULL &&
		    (nx == NULL || nx->va >= shi)) {
			c->shm_hold = sys_shmat(shmid, NULL, 0);
			if (c->shm_hold != (void *)-1) {
				c->shmid = shmid;
				lo = slo;
				hi = shi;
				npages = (uint32_t)((hi - lo) >> SNIC_PAGE_SHIFT);
			} else {
				hd_dbg("cannot hold SysV segment %d: %s\n",
				       shmid, strerror(errno));
			}
		}
	}
	err = hd_hm_alloc(hm, npages, 0, &first);
	if (err) {
		chunk_unhold(c);
		free(c);
		return err;
	}
	memset(&j, 0, sizeof(j));
	j.op = JOB_BACK;
	j.va = (uint8_t *)lo;
	j.len = hi - lo;
	j.fd = hm->fd;
	j.off = (off_t)hd_hm_off(hm, first);
	j.dontfork = hd_fork_safe();
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
	chunk_insert(c);
	*out = c;
	return 0;
}

/* The range's original memory back in place with the window's bytes:
 * private anonymous pages, or the SysV segment it was part of. */
static int chunk_restore(struct hd_chunk *c, size_t len)
{
	struct remap_job j;
	int err;

	memset(&j, 0, sizeof(j));
	j.va = (uint8_t *)c->va;
	j.len = len;
	j.fd = c->hm->fd;
	j.off = (off_t)hd_hm_off(c->hm, c->first);
	if (c->shmid >= 0) {
		j.op = JOB_RESTORE_SHM;
		j.tmp = c->shm_hold;
		j.shmid = c->shmid;
		return do_job(&j);
	}
	j.op = JOB_RESTORE;
	j.tmp = sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j.tmp == MAP_FAILED)
		return errno;
	err = do_job(&j);
	if (err)
		sys_munmap(j.tmp, len);
	return err;
}

/* Last reference gone: give the range its own memory again. */
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
			hd_dbg("cannot restore %p+%zu: %s\n", (void *)c->va,
			       len, strerror(err));
			free(c);
			return;
		}
	}
	chunk_unhold(c);
	hd_hm_free(c->hm, c->first, c->npages);
	free(c);
}

static void pin_drop_refs(struct hd_pin *pin)
{
	for (uint32_t i = 0; i < pin->nchunks; i++) {
		struct hd_chunk *c = pin->chunks[i];

		if (--c->refs == 0)
			chunk_release(c);
	}
	pin->nchunks = 0;
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

	pthread_mutex_lock(&pin_lock);
	for (p = start; p < end;) {
		struct hd_chunk *next, *c = chunk_find(p, &next);
		uintptr_t lim;

		if (c) {
			if (c->hm != hm) {
				hd_dbg("%p is backed by %s, not %s\n",
				       (void *)p, c->hm->name, hm->name);
				err = EINVAL;
				break;
			}
			lim = c->va + ((uintptr_t)c->npages << SNIC_PAGE_SHIFT);
			if (lim > end)
				lim = end;
		} else {
			lim = (next && next->va < end) ? next->va : end;
			err = chunk_back(hm, p, lim, &c);
			if (err)
				break;
			/* A SysV segment is backed whole: maybe beyond lim. */
			lim = c->va + ((uintptr_t)c->npages << SNIC_PAGE_SHIFT);
			if (lim > end)
				lim = end;
		}
		if (pin->nchunks == cap) {
			uint32_t ncap = cap ? cap * 2 : 4;
			struct hd_chunk **nc = realloc(
				pin->chunks, ncap * sizeof(*nc));

			if (!nc) {
				if (c->refs == 0)
					chunk_release(c);
				err = ENOMEM;
				break;
			}
			pin->chunks = nc;
			cap = ncap;
		}
		c->refs++;
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

int hd_pin_uses(const struct hd_hostmem *hm)
{
	int used = 0;

	pthread_mutex_lock(&pin_lock);
	for (struct hd_chunk *c = chunk_list; c && !used; c = c->next)
		used = c->hm == hm;
	pthread_mutex_unlock(&pin_lock);
	return used;
}
