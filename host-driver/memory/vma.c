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
static int pm_fd = -1;
static pid_t pm_pid;

/* pm_lock held: the pagemap fd, -1 (errno set) if it cannot be opened. */
static int pagemap_fd(void)
{
	if (pm_fd < 0 || pm_pid != getpid()) {
		if (pm_fd >= 0)
			close(pm_fd);
		pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		pm_pid = getpid();
	}
	return pm_fd;
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

int hd_window_maps(const struct hd_hostmem *hm, uint64_t off, uint32_t n,
		   hd_map_fn fn, void *arg)
{
	uint64_t end = off + ((uint64_t)n << SNIC_PAGE_SHIFT);
	uintptr_t w_lo = (uintptr_t)hm->base, w_hi = w_lo + hm->size;
	struct maps_line m;
	char line[512];
	FILE *f;
	int err = 0;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return errno;
	while (!err && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;

		if (!maps_parse(line, &m) || m.maj != major(hm->st_dev) ||
		    m.min != minor(hm->st_dev) || m.inode != hm->st_ino)
			continue;
		/* the window's own mapping (hostmem.c) is not a user's */
		if (m.start >= w_lo && m.end <= w_hi)
			continue;
		lo = m.off > off ? m.off : off;
		hi = m.off + (m.end - m.start) < end ? m.off + (m.end - m.start) : end;
		if (lo < hi)
			err = fn(arg, m.start + (uintptr_t)(lo - m.off),
				 (uint32_t)((hi - lo) >> SNIC_PAGE_SHIFT),
				 (uint32_t)((lo - off) >> SNIC_PAGE_SHIFT));
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

int hd_vma_at(uintptr_t p, struct hd_vma *v)
{
	struct maps_line m;
	char line[512];
	long id = -1;
	FILE *f;

	memset(v, 0, sizeof(*v));
	v->shmid = -1;
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
		if (strncmp(m.path, "/SYSV", 5) == 0 && m.inode <= INT32_MAX) {
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
		v->plain = m.perms[0] == 'r' && m.perms[3] == 'p' && m.inode == 0 &&
			   (m.path[0] == '\0' || strcmp(m.path, "[heap]") == 0 ||
			    strcmp(m.path, "[stack]") == 0);
		break;
	}
	fclose(f);
	return v->hi != 0;
}
