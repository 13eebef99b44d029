/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: what backs a range of this process's address space,
 * asked of the kernel (/proc/self/pagemap, /proc/self/maps).  pin.c uses
 * it to find SysV and huge-page mappings before it re-backs a range, to
 * check that a range it backed and kept after deregistration is still
 * mapped to the window when it is registered again (the application may
 * have unmapped it and mapped other memory at the same address), and to
 * find every mapping of a backing before its window pages are freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "memory/memory.h"
#include "pagemap_scan.h"
#include "memory/vma_query.h"

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

/* pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT   (1ull << 63)
#define PM_FILE      (1ull << 61)   /* file page or shared anonymous     */
#define PM_PFN_MASK  ((1ull << 55) - 1)

/* The pagemap fd belongs to the process that opened it: reopened after
 * a fork (a child reading its parent's page tables would be wrong). */
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_self_fd pm_fd = { -1, 0 };

/* pm_lock held: the pagemap fd, -1 (errno set) if it cannot be opened. */
static int pagemap_fd(void)
{
	return hd_self_fd(&pm_fd, "/proc/self/pagemap");
}

/* The raw pagemap entries of the n pages from va.  0 or an errno. */
static int pagemap_entries(uintptr_t va, uint32_t n, uint64_t *pfn)
{
	size_t len = (size_t)n * sizeof(uint64_t), done = 0;
	off_t off = (off_t)(va >> SNIC_PAGE_SHIFT) * (off_t)sizeof(uint64_t);
	int err = 0, fd;

	pthread_mutex_lock(&pm_lock);
	fd = pagemap_fd();
	while (fd >= 0 && done < len) {
		ssize_t r = pread(fd, (uint8_t *)pfn + done, len - done,
				  off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? errno : EIO;
			break;
		}
		done += (size_t)r;
	}
	if (fd < 0)
		err = errno;
	pthread_mutex_unlock(&pm_lock);
	return err;
}

int hd_page_private(uintptr_t va)
{
	uint64_t e;

	return pagemap_entries(va, 1, &e) == 0 && (e & PM_PRESENT) &&
	       !(e & PM_FILE);
}

/* Every page of the range, asked in one PAGEMAP_SCAN (pagemap_scan.h):
 * 1 or 0, or -1 when the kernel cannot tell that way.  The scan skips
 * address ranges with no mapping at all instead of reporting them as
 * holes, so the range must lie inside one mapping: pin.c asks only about
 * the window's own. */
static int pages_mapped_scan(uintptr_t va, uint32_t n)
{
	struct page_region hole;
	uintptr_t next;
	int fd, k = -1;

	pthread_mutex_lock(&pm_lock);
	fd = pagemap_fd();
	if (fd >= 0)
		k = snic_pagemap_holes(fd, va, va + ((uintptr_t)n << SNIC_PAGE_SHIFT),
				       &hole, 1, &next);
	pthread_mutex_unlock(&pm_lock);
	return k < 0 ? -1 : k == 0;
}

int hd_data_runs(uintptr_t lo, uintptr_t hi, struct hd_run *out,
		 unsigned max, uintptr_t *next)
{
	struct page_region r[HD_RUNS_MAX];
	int fd, k = -1;

	if (max > HD_RUNS_MAX)
		max = HD_RUNS_MAX;
	pthread_mutex_lock(&pm_lock);
	fd = pagemap_fd();
	if (fd >= 0)
		k = snic_pagemap_data(fd, lo, hi, r, max, next);
	pthread_mutex_unlock(&pm_lock);
	for (int i = 0; i < k; i++) {
		out[i].lo = (uintptr_t)r[i].start;
		out[i].hi = (uintptr_t)r[i].end;
	}
	return k;
}

int hd_pages_mapped(uintptr_t va, uint32_t n)
{
	uint64_t e[16];
	int all = pages_mapped_scan(va, n);

	if (all >= 0)
		return all;
	if (n <= 16) { /* all of them, in one read */
		if (pagemap_entries(va, n, e) != 0)
			return 0;
		for (uint32_t i = 0; i < n; i++)
			if (!(e[i] & PM_PRESENT))
				return 0;
		return 1;
	}
	for (uint32_t k = 0; k < 16; k++) { /* 16 evenly spread */
		uint32_t i = (uint32_t)((uint64_t)(n - 1) * k / 15);

		if (pagemap_entries(va + ((uintptr_t)i << SNIC_PAGE_SHIFT), 1,
				    e) != 0 || !(e[0] & PM_PRESENT))
			return 0;
	}
	return 1;
}

int hd_page_frames(uintptr_t va, uint32_t n, uint64_t *pfn)
{
	int err = pagemap_entries(va, n, pfn);

	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t e = pfn[i];

		if (!(e & PM_PRESENT) || !(e & PM_FILE))
			pfn[i] = HD_PFN_NONE;
		else
			pfn[i] = e & PM_PFN_MASK; /* 0 unless privileged */
	}
	return 0;
}

/* One line of /proc/self/maps. */
struct maps_line {
	uintptr_t start, end;
	uint64_t off;
	unsigned maj, min;
	unsigned long inode;
	char perms[8];
	char path[256];
};

static int maps_parse(const char *line, struct maps_line *m)
{
	unsigned long start, end;
	unsigned long long off;

	m->path[0] = '\0';
	if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu %255s", &start, &end,
		   m->perms, &off, &m->maj, &m->min, &m->inode, m->path) < 7)
		return 0;
	m->start = start;
	m->end = end;
	m->off = off;
	return 1;
}

/* The part of a mapping of hm's file (file offset m_off at m_start, up
 * to m_end) that holds offsets [off, end): fn for it.  0 or fn's value. */
static int window_part(const struct hd_hostmem *hm, uintptr_t m_start,
		       uintptr_t m_end, uint64_t m_off, uint64_t off,
		       uint64_t end, hd_map_fn fn, void *arg)
{
	uintptr_t w_lo = (uintptr_t)hm->base, w_hi = w_lo + hm->size;
	uint64_t lo, hi;

	/* the window's own mapping (hostmem.c) is not a user's */
	if (m_start >= w_lo && m_end <= w_hi)
		return 0;
	lo = m_off > off ? m_off : off;
	hi = m_off + (m_end - m_start) < end ? m_off + (m_end - m_start) : end;
	if (lo >= hi)
		return 0;
	return fn(arg, m_start + (uintptr_t)(lo - m_off),
		  (uint32_t)((hi - lo) >> SNIC_PAGE_SHIFT),
		  (uint32_t)((lo - off) >> SNIC_PAGE_SHIFT));
}

/* The same walk through the file-backed mappings only, one PROCMAP_QUERY
 * each (vma_query.c); ENOTTY when the kernel cannot. */
static int window_maps_query(const struct hd_hostmem *hm, uint64_t off,
			     uint64_t end, hd_map_fn fn, void *arg)
{
	struct hd_vma_info q;
	uintptr_t a = 0;
	int err;

	while ((err = hd_vma_query(a, HD_VQ_NEXT | HD_VQ_FILE, &q)) == 0) {
		/* fn may replace [start, end) (restore_map): go on above */
		a = q.end;
		if (q.dev != hm->st_dev || q.inode != hm->st_ino)
			continue;
		err = window_part(hm, q.start, q.end, q.off, off, end, fn,
				  arg);
		if (err)
			return err;
	}
	return err == ENOENT ? 0 : err;
}

int hd_window_maps(const struct hd_hostmem *hm, uint64_t off, uint32_t n,
		   hd_map_fn fn, void *arg)
{
	uint64_t end = off + ((uint64_t)n << SNIC_PAGE_SHIFT);
	struct maps_line m;
	char line[512];
	FILE *f;
	int err = window_maps_query(hm, off, end, fn, arg);

	if (err != ENOTTY)
		return err;
	err = 0;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (!maps_parse(line, &m) || m.maj != major(hm->st_dev) ||
		    m.min != minor(hm->st_dev) || m.inode != hm->st_ino)
			continue;
		err = window_part(hm, m.start, m.end, m.off, off, end, fn, arg);
	}
	fclose(f);
	return err;
}

/* The default huge page size (/proc/meminfo), 2 MiB when unknown. */
static uint64_t huge_default(void)
{
	unsigned long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb ? (uint64_t)kb << 10 : 2u << 20;
}

/* A hugetlb mapping's page size, or 0 for anything else. */
static uint64_t huge_size(const struct maps_line *m)
{
	struct statfs sf;

	if (strncmp(m->path, "/anon_hugepage", 14) == 0)
		return huge_default();
	if (m->path[0] == '/' && statfs(m->path, &sf) == 0 &&
	    (unsigned long)sf.f_type == HUGETLBFS_MAGIC)
		return (uint64_t)sf.f_bsize;
	return 0;
}

/* A "/SYSV<key>" mapping (the shmid as its inode), or -1. */
static long sysv_id(const char *path, uint64_t inode)
{
	return strncmp(path, "/SYSV", 5) == 0 && inode <= INT32_MAX ?
	       (long)inode : -1;
}

static int plain_anon(int readable, int shared, uint64_t inode,
		      const char *path)
{
	return readable && !shared && inode == 0 &&
	       (path[0] == '\0' || strcmp(path, "[heap]") == 0 ||
		strcmp(path, "[stack]") == 0);
}

/* hd_vma_at by PROCMAP_QUERY: 0 or an errno (ENOTTY: ask the text). */
static int vma_at_query(uintptr_t p, struct hd_vma *v)
{
	struct hd_vma_info q;
	long id;
	int err = hd_vma_query(p, HD_VQ_NAME, &q);

	if (err)
		return err;
	id = sysv_id(q.name, q.inode);
	if (id < 0) {
		v->lo = q.start;
		v->hi = q.end;
		/* the kernel's page size of the mapping: a hugetlb one's */
		v->huge = q.page_size > SNIC_PAGE_SIZE ? q.page_size : 0;
		v->plain = plain_anon(q.readable, q.shared, q.inode, q.name);
		return 0;
	}
	v->shmid = (int)id;
	v->lo = q.start - (uintptr_t)q.off;
	v->hi = q.end;
	/* A SysV attachment may be split into several mappings (madvise,
	 * mprotect): follow it. */
	while (hd_vma_query(v->hi, HD_VQ_NAME, &q) == 0 &&
	       sysv_id(q.name, q.inode) == id && q.start == v->hi &&
	       q.start - q.off == v->lo)
		v->hi = q.end;
	return 0;
}

int hd_vma_at(uintptr_t p, struct hd_vma *v)
{
	struct maps_line m;
	char line[512];
	long id = -1;
	FILE *f;
	int err;

	memset(v, 0, sizeof(*v));
	v->shmid = -1;
	err = vma_at_query(p, v);
	if (err != ENOTTY)
		return err == 0;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!maps_parse(line, &m))
			continue;
		if (id >= 0) {
			/* A SysV attachment may be split into several
			 * mappings (madvise, mprotect): follow it. */
			if ((long)m.inode == id && m.start == v->hi &&
			    strncmp(m.path, "/SYSV", 5) == 0 &&
			    m.start - m.off == v->lo) {
				v->hi = m.end;
				continue;
			}
			break;
		}
		if (p < m.start || p >= m.end)
			continue;
		if (sysv_id(m.path, m.inode) >= 0) {
			/* "/SYSV<key>" mappings carry the shmid as inode */
			id = (long)m.inode;
			v->shmid = (int)id;
			v->lo = m.start - m.off;
			v->hi = m.end;
			continue;
		}
		v->lo = m.start;
		v->hi = m.end;
		v->huge = huge_size(&m);
		v->plain = plain_anon(m.perms[0] == 'r', m.perms[3] != 'p',
				      m.inode, m.path);
		break;
	}
	fclose(f);
	return v->hi != 0;
}

/* One PROCMAP_QUERY per mapping over the range (usually one): 1 when
 * every page of [va, va + n pages) maps hm's file at offset off + its
 * distance from va, 0 when one does not, -1 when the kernel cannot tell
 * this way. */
int hd_window_in_place(const struct hd_hostmem *hm, uintptr_t va,
		       uint64_t off, uint32_t n)
{
	uintptr_t p = va, end = va + ((uintptr_t)n << SNIC_PAGE_SHIFT);
	struct hd_vma_info q;

	while (p < end) {
		int err = hd_vma_query(p, 0, &q);

		if (err == ENOTTY)
			return -1;
		if (err || q.dev != hm->st_dev || q.inode != hm->st_ino ||
		    !q.shared || q.off + (p - q.start) != off + (p - va))
			return 0;
		p = q.end;
	}
	return 1;
}
