/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the host-memory window and its page allocator.
 *
 * The window is a shared file in the run dir that stands for the host's
 * physical memory (pa = byte offset).  It is mapped once per process per
 * file, and shared by the contexts of every NIC naming that file.
 *
 * Page allocator: host-side only; its metadata lives in the first pages of
 * the file (pages the host never hands to the firmware):
 *   header | bitmap of 4 KiB pages | extent table {first, npages, pid}
 * Every allocation and free runs under flock(LOCK_EX) on the file, which
 * the kernel drops when a process dies, plus an in-process mutex (flock
 * does not exclude threads sharing one open file description).  Extents
 * whose owner died are freed when an allocation fails and at context open,
 * but only once no NIC's context slot still names that pid: until the
 * firmware has destroyed the dead process's objects it may still DMA into
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memory/memory.h"

#define HM_MAGIC   0x314d48434e49534eull /* "SNICHM1" */
#define HM_VERSION 1u

struct hm_meta {
	uint64_t magic;
	uint32_t version;
	uint32_t npages;        /* pages in the window                      */
	uint32_t meta_pages;    /* pages 0 .. meta_pages-1 hold the metadata */
	uint32_t max_ext;
	uint32_t bitmap_off;    /* bytes from the start of the file         */
	uint32_t ext_off;
	uint32_t hint;          /* next-fit search start                    */
	uint32_t used_ext;
	uint32_t rsvd[6];
};

struct hm_ext {
	uint32_t first;
	uint32_t npages;        /* 0: free entry                            */
	uint32_t pid;
	uint32_t rsvd;
};

static pthread_mutex_t hm_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_hostmem *hm_list;
static pthread_once_t hm_atfork_once = PTHREAD_ONCE_INIT;

/*
 * fork(): the child shares the parent's open file description of each
 * window file, and flock() does not exclude two holders of one open file
 * description.  Give the child its own (same file, same offsets, so the
 * mappings stay valid) and fresh mutexes (another thread may have held
 * one at the fork).
 */
static void hm_atfork_child(void)
{
	pthread_mutex_init(&hm_list_lock, NULL);
	for (struct hd_hostmem *h = hm_list; h; h = h->next) {
		int fd = open(h->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

		pthread_mutex_init(&h->lock, NULL);
		if (fd >= 0) {
			dup3(fd, h->fd, O_CLOEXEC);
			close(fd);
		}
	}
}

static void hm_atfork_register(void)
{
	pthread_atfork(NULL, NULL, hm_atfork_child);
}

static void meta_layout(uint32_t npages, uint32_t *max_ext,
			uint32_t *bitmap_off, uint32_t *ext_off,
			uint32_t *meta_pages)
{
	uint64_t bitmap_bytes = ((uint64_t)npages + 63) / 64 * 8;
	uint64_t ext = npages / 8;
	uint64_t total;

	if (ext < 1024)
		ext = 1024;
	if (ext > 65536)
		ext = 65536;
	*max_ext = (uint32_t)ext;
	*bitmap_off = 64;
	*ext_off = (uint32_t)(64 + bitmap_bytes);
	total = 64 + bitmap_bytes + ext * sizeof(struct hm_ext);
	*meta_pages = (uint32_t)((total + SNIC_PAGE_SIZE - 1) >> SNIC_PAGE_SHIFT);
}

/* The allocator's metadata: the first pages of its range. */
static inline uint8_t *hm_meta(struct hd_hostmem *hm)
{
	return hm->base + hd_page_pa(hm->lo_page);
}

static inline uint64_t *hm_bitmap(struct hd_hostmem *hm)
{
	return (uint64_t *)(void *)(hm_meta(hm) + hm->bitmap_off);
}

static inline struct hm_ext *hm_exts(struct hd_hostmem *hm)
{
	return (struct hm_ext *)(void *)(hm_meta(hm) + hm->ext_off);
}

static void bits_set(uint64_t *bm, uint32_t first, uint32_t n, int val)
{
	for (uint32_t i = first; i < first + n; i++) {
		if (val)
			bm[i / 64] |= 1ull << (i % 64);
		else
			bm[i / 64] &= ~(1ull << (i % 64));
	}
}

/* The allocator's file lock: an OFD byte-range lock on byte 0, released by
 * the kernel when the process dies.  Not flock(): the emulator holds an
 * flock on the file for as long as it serves it (its liveness mark), and
 * on Linux the two kinds of lock do not interact. */
static void file_lock(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0,
			    .l_len = 1 };

	while (fcntl(fd, F_OFD_SETLKW, &fl) != 0 && errno == EINTR)
		;
}

/* Lock the allocator (thread mutex, then the file lock) and make sure the
 * metadata is initialised. */
static struct hm_meta *hm_lock(struct hd_hostmem *hm)
{
	struct hm_meta *m = (struct hm_meta *)(void *)hm_meta(hm);
	uint32_t max_ext = hm->max_ext, bitmap_off = hm->bitmap_off,
		 ext_off = hm->ext_off, meta_pages = hm->meta_pages;

	pthread_mutex_lock(&hm->lock);
	file_lock(hm->fd, F_WRLCK);
	if (m->magic == HM_MAGIC && m->version == HM_VERSION &&
	    m->npages == hm->npages && m->max_ext == max_ext &&
	    m->meta_pages == meta_pages &&
	    (m->bitmap_off != bitmap_off || m->ext_off != ext_off)) {
		/* another process rewrote the layout: we never use the file's
		 * copy (hm_bitmap, hm_exts); put it back, keep the extents */
		hd_dbg("page allocator header of %s rewritten: repaired\n",
		       hm->path);
		m->bitmap_off = bitmap_off;
		m->ext_off = ext_off;
	}
	if (m->magic != HM_MAGIC || m->version != HM_VERSION ||
	    m->npages != hm->npages || m->max_ext != max_ext ||
	    m->meta_pages != meta_pages) {
		hd_dbg("initialising page allocator in %s (%u pages, %u "
			 "metadata pages)\n", hm->path, hm->npages, meta_pages);
		memset(hm_meta(hm), 0, (size_t)meta_pages << SNIC_PAGE_SHIFT);
		m->version = HM_VERSION;
		m->npages = hm->npages;
		m->meta_pages = meta_pages;
		m->max_ext = max_ext;
		m->bitmap_off = bitmap_off;
		m->ext_off = ext_off;
		m->hint = meta_pages;
		bits_set(hm_bitmap(hm), 0, meta_pages, 1);
		m->magic = HM_MAGIC;
	}
	return m;
}

static void hm_unlock(struct hd_hostmem *hm)
{
	file_lock(hm->fd, F_UNLCK);
	pthread_mutex_unlock(&hm->lock);
}

static int scan_run(const uint64_t *bm, uint32_t lo, uint32_t hi, uint32_t n,
		    uint32_t *first)
{
	uint32_t run = 0, run_start = lo, i = lo;

	while (i < hi) {
		uint64_t w = bm[i / 64];

		if (i % 64 == 0 && w == ~0ull) {
			run = 0;
			i += 64;
			continue;
		}
		if (i % 64 == 0 && w == 0) {
			uint32_t take = hi - i < 64 ? hi - i : 64;

			if (!run)
				run_start = i;
			run += take;
			i += take;
		} else if (w & (1ull << (i % 64))) {
			run = 0;
			i++;
			continue;
		} else {
			if (!run)
				run_start = i;
			run++;
			i++;
		}
		if (run >= n) {
			*first = run_start;
			return 0;
		}
	}
	return ENOMEM;
}

/* Next fit: from the hint to the end, then the whole window.  `low`:
 * first fit from the bottom, leaving the hint alone. */
static int find_run(struct hd_hostmem *hm, struct hm_meta *m, uint32_t n,
		    int low, uint32_t *first)
{
	const uint64_t *bm = hm_bitmap(hm);
	uint32_t start = low ? hm->meta_pages : m->hint;

	if (start < hm->meta_pages || start >= hm->npages)
		start = hm->meta_pages;
	if (scan_run(bm, start, hm->npages, n, first) == 0)
		return 0;
	if (start == hm->meta_pages)
		return ENOMEM;
	return scan_run(bm, hm->meta_pages, hm->npages, n, first);
}

static int alloc_locked(struct hd_hostmem *hm, struct hm_meta *m,
			uint32_t n, int low, uint32_t *first)
{
	struct hm_ext *ext = hm_exts(hm);
	uint32_t slot;

	for (slot = 0; slot < hm->max_ext; slot++)
		if (ext[slot].npages == 0)
			break;
	if (slot == hm->max_ext)
		return ENOMEM;
	if (find_run(hm, m, n, low, first))
		return ENOMEM;
	bits_set(hm_bitmap(hm), *first, n, 1);
	ext[slot].first = *first;
	ext[slot].npages = n;
	ext[slot].pid = (uint32_t)hd_self_pid();
	ext[slot].rsvd = 0;
	if (!low)
		m->hint = *first + n;
	m->used_ext++;
	return 0;
}

static void reap_locked(struct hd_hostmem *hm, struct hm_meta *m)
{
	struct hm_ext *ext = hm_exts(hm);
	uint32_t self = (uint32_t)hd_self_pid();
	uint32_t dead[16], alive[16];
	unsigned ndead = 0, nalive = 0;
	unsigned long freed = 0;

	for (uint32_t i = 0; i < hm->max_ext; i++) {
		uint32_t pid = ext[i].pid, first = ext[i].first, n = ext[i].npages;
		int is_dead = -1;

		if (!n || pid == self)
			continue;
		for (unsigned k = 0; k < ndead && is_dead < 0; k++)
			if (dead[k] == pid)
				is_dead = 1;
		for (unsigned k = 0; k < nalive && is_dead < 0; k++)
			if (alive[k] == pid)
				is_dead = 0;
		if (is_dead < 0) {
			is_dead = !hd_pid_alive(pid) &&
				  !hd_fw_holds_pid(hm->name, pid);
			if (is_dead && ndead < 16)
				dead[ndead++] = pid;
			else if (!is_dead && nalive < 16)
				alive[nalive++] = pid;
		}
		if (!is_dead)
			continue;
		/* the entry is shared memory: free only pages of the window */
		if (first >= hm->meta_pages && first < hm->npages &&
		    n <= hm->npages - first) {
			bits_set(hm_bitmap(hm), first, n, 0);
			freed += n;
		}
		memset(&ext[i], 0, sizeof(ext[i]));
		m->used_ext--;
	}
	if (freed)
		hd_dbg("reaped %lu pages of dead processes in %s\n", freed,
		       hm->name);
}

int hd_hm_alloc(struct hd_hostmem *hm, uint32_t npages, unsigned flags,
		uint32_t *first_page)
{
	int low = !!(flags & HD_HM_LOW);
	struct hm_meta *m;
	int err;

	if (npages == 0 || npages >= hm->npages)
		return ENOMEM;
	m = hm_lock(hm);
	err = alloc_locked(hm, m, npages, low, first_page);
	if (err) {
		reap_locked(hm, m);
		err = alloc_locked(hm, m, npages, low, first_page);
	}
	hm_unlock(hm);
	if (err) {
		hd_dbg("host memory %s: no room for %u pages\n", hm->name,
		       npages);
		return err;
	}
	*first_page += hm->lo_page; /* the allocator counts from its range */
	if (flags & HD_HM_ZERO)
		memset(hm->base + hd_page_pa(*first_page), 0,
		       (size_t)npages << SNIC_PAGE_SHIFT);
	return 0;
}

/* Allocator locked: extent [first_page, +npages) of ours goes back (a
 * page of the allocator's range, from 0).  0 when it was not ours. */
static int free_locked(struct hd_hostmem *hm, struct hm_meta *m,
		       uint32_t first_page, uint32_t npages)
{
	uint32_t self = (uint32_t)hd_self_pid();
	struct hm_ext *ext = hm_exts(hm);

	for (uint32_t i = 0; i < hm->max_ext; i++) {
		if (ext[i].npages == npages && ext[i].first == first_page &&
		    ext[i].pid == self) {
			bits_set(hm_bitmap(hm), first_page, npages, 0);
			memset(&ext[i], 0, sizeof(ext[i]));
			m->used_ext--;
			return 1;
		}
	}
	return 0;
}

void hd_hm_free_n(struct hd_hostmem *hm, const struct hd_hm_ext *e,
		  unsigned n)
{
	int ok[HD_HM_FREE_MAX];

	for (unsigned at = 0; at < n; at += HD_HM_FREE_MAX) {
		unsigned k = n - at < HD_HM_FREE_MAX ? n - at : HD_HM_FREE_MAX;
		struct hm_meta *m = hm_lock(hm);

		for (unsigned i = 0; i < k; i++) {
			const struct hd_hm_ext *x = &e[at + i];

			ok[i] = x->npages && x->first >= hm->lo_page &&
				free_locked(hm, m, x->first - hm->lo_page,
					    x->npages);
		}
		hm_unlock(hm);
		for (unsigned i = 0; i < k; i++)
			if (!ok[i] && e[at + i].npages)
				hd_dbg("free of unknown extent %u+%u in %s "
				       "ignored\n", e[at + i].first,
				       e[at + i].npages, hm->name);
	}
}

void hd_hm_free(struct hd_hostmem *hm, uint32_t first_page,
		uint32_t npages)
{
	struct hd_hm_ext e = { first_page, npages };

	if (npages && first_page >= hm->lo_page)
		hd_hm_free_n(hm, &e, 1);
}

void hd_hm_reap(struct hd_hostmem *hm)
{
	struct hm_meta *m = hm_lock(hm);

	reap_locked(hm, m);
	hm_unlock(hm);
}

/* hm_list_lock held (dropped here): hm mapped at base, its allocator's
 * npages pages from lo_page, joins the list. */
static void hm_install(struct hd_hostmem *hm, int fd, uint8_t *base,
		       uint64_t size, uint32_t npages, const struct stat *st)
{
	hm->fd = fd;
	hm->base = base;
	hm->size = size;
	hm->npages = npages;
	meta_layout(hm->npages, &hm->max_ext, &hm->bitmap_off, &hm->ext_off,
		    &hm->meta_pages);
	hm->st_dev = st->st_dev;
	hm->st_ino = st->st_ino;
	pthread_mutex_init(&hm->lock, NULL);
	hm->next = hm_list;
	hm_list = hm;
	pthread_mutex_unlock(&hm_list_lock);
}

struct hd_hostmem *hd_hostmem_get(const char *name, uint64_t size,
				  int *err)
{
	struct hd_hostmem *hm;
	struct stat st;
	void *base;
	int fd;

	*err = 0;
	pthread_once(&hm_atfork_once, hm_atfork_register);
	if (!name[0] || strchr(name, '/') || strlen(name) >= sizeof(hm->name) ||
	    size < 2 * (uint64_t)SNIC_PAGE_SIZE ||
	    (size >> SNIC_PAGE_SHIFT) > UINT32_MAX) {
		*err = EINVAL;
		return NULL;
	}
	hm = calloc(1, sizeof(*hm));
	if (!hm) {
		*err = ENOMEM;
		return NULL;
	}
	snprintf(hm->name, sizeof(hm->name), "%s", name);
	if ((size_t)snprintf(hm->path, sizeof(hm->path), "%s/%s",
			     hd_run_dir(), name) >= sizeof(hm->path)) {
		free(hm);
		*err = ENAMETOOLONG;
		return NULL;
	}
	fd = hd_open_runtime(hm->path, O_RDWR);
	if (fd < 0 || fstat(fd, &st) != 0) {
		*err = errno;
		if (fd >= 0)
			close(fd);
		free(hm);
		return NULL;
	}

	pthread_mutex_lock(&hm_list_lock);
	for (struct hd_hostmem *h = hm_list; h; h = h->next) {
		if (h->st_dev == st.st_dev && h->st_ino == st.st_ino &&
		    h->size == (size & ~(uint64_t)(SNIC_PAGE_SIZE - 1))) {
			pthread_mutex_unlock(&hm_list_lock);
			close(fd);
			free(hm);
			return h;
		}
	}
	size &= ~(uint64_t)(SNIC_PAGE_SIZE - 1);
	if ((uint64_t)st.st_size < size) {
		pthread_mutex_unlock(&hm_list_lock);
		hd_dbg("%s is %lld bytes, BAR says %llu\n", hm->path,
		       (long long)st.st_size, (unsigned long long)size);
		close(fd);
		free(hm);
		*err = EINVAL;
		return NULL;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		*err = errno;
		pthread_mutex_unlock(&hm_list_lock);
		close(fd);
		free(hm);
		return NULL;
	}
	hd_sigbus_watch(fd, 0, 0); /* a truncation must not end us (sigbus.c) */
	hm_install(hm, fd, base, size, (uint32_t)(size >> SNIC_PAGE_SHIFT), &st);
	hd_dbg("mapped host memory %s (%llu MiB)\n", hm->path,
	       (unsigned long long)(size >> 20));
	return hm;
}

/* A descriptor is trusted only when nobody can shrink it under us (a
 * mapping past the end gives SIGBUS): the broker seals what it hands out
 * (hal/posix/segment.c); anything else is refused before it is mapped. */
int hd_fd_sealed(int fd, uint64_t len)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_SHRINK) && fstat(fd, &st) == 0 &&
	       (uint64_t)st.st_size >= len;
}

struct hd_hostmem *hd_hostmem_segment(int fd, uint64_t seg_pa, uint64_t len,
				      int *err)
{
	uint64_t end = seg_pa + len;
	struct hd_hostmem *hm = NULL;
	uint8_t *base = MAP_FAILED;
	struct stat st;

	*err = EINVAL;
	pthread_once(&hm_atfork_once, hm_atfork_register);
	if (((seg_pa | len) & (SNIC_PAGE_SIZE - 1)) || len < 2 * SNIC_PAGE_SIZE ||
	    end < seg_pa || (end >> SNIC_PAGE_SHIFT) > UINT32_MAX ||
	    end > (uint64_t)SIZE_MAX || !hd_fd_sealed(fd, len) ||
	    fstat(fd, &st) != 0)
		goto fail;
	pthread_mutex_lock(&hm_list_lock);
	for (struct hd_hostmem *h = hm_list; h; h = h->next) {
		if (h->st_dev == st.st_dev && h->st_ino == st.st_ino &&
		    h->lo_page == (uint32_t)(seg_pa >> SNIC_PAGE_SHIFT)) {
			h->users++;
			pthread_mutex_unlock(&hm_list_lock);
			close(fd);
			*err = 0;
			return h;
		}
	}
	hm = calloc(1, sizeof(*hm));
	/* pa stays an offset from base: the window below the segment is
	 * address space only, nothing of it mapped */
	if (hm)
		base = mmap(NULL, (size_t)end, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED ||
	    mmap(base + seg_pa, (size_t)len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		*err = hm ? errno : ENOMEM;
		pthread_mutex_unlock(&hm_list_lock);
		if (base != MAP_FAILED)
			munmap(base, (size_t)end);
		free(hm);
		goto fail;
	}
	madvise(base + seg_pa, (size_t)len, MADV_DONTFORK); /* rings: ours */
	snprintf(hm->name, sizeof(hm->name), "segment@%#llx",
		 (unsigned long long)seg_pa);
	hm->lo_page = (uint32_t)(seg_pa >> SNIC_PAGE_SHIFT);
	hm->segment = 1;
	hm->users = 1;
	hm_install(hm, fd, base, end, (uint32_t)(len >> SNIC_PAGE_SHIFT), &st);
	hd_dbg("mapped private segment at pa %#llx (%llu MiB)\n",
	       (unsigned long long)seg_pa, (unsigned long long)(len >> 20));
	*err = 0;
	return hm;
fail:
	close(fd);
	return NULL;
}

void hd_hostmem_put(struct hd_hostmem *hm)
{
	struct hd_hostmem **pp;

	if (!hm || !hm->segment)
		return;
	pthread_mutex_lock(&hm_list_lock);
	if (--hm->users || hd_pin_uses(hm)) {
		pthread_mutex_unlock(&hm_list_lock);
		return;
	}
	for (pp = &hm_list; *pp && *pp != hm; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = hm->next;
	pthread_mutex_unlock(&hm_list_lock);
	hd_dbg("unmapped private segment %s\n", hm->name);
	munmap(hm->base, (size_t)hm->size);
	close(hm->fd);
	pthread_mutex_destroy(&hm->lock);
	free(hm);
}
