/* SPDX-License-Identifier: MIT */
/*
 * Which pages of a range are not mapped in this process's page tables,
 * asked with one PAGEMAP_SCAN ioctl on /proc/self/pagemap (Linux 6.7)
 * instead of reading 8 bytes of pagemap per page: 64 MiB take ~40 us
 * here where the pread of their 16,384 entries took 1-5 ms.  Shared by
 * the emu's HAL (dma_prepare) and the host driver (is the window mapped
 * where it copies).  Header-only: the two are built apart.
 */
#ifndef SNIC_PAGEMAP_SCAN_H
#define SNIC_PAGEMAP_SCAN_H

#include <stdint.h>
#include <sys/ioctl.h>

/* From <linux/fs.h> of Linux 6.7 (Debian 12's headers predate it). */
#ifndef PAGEMAP_SCAN
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask;
	uint64_t return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

/* Up to max runs of pages of [lo, hi) in the categories a names
 * (pm_scan_arg's masks), into out; *next is where the scan stopped (hi:
 * it covered the range; less: out was full, ask again from there).  The
 * number of runs, or -1 when the kernel cannot answer (older than 6.7:
 * ENOTTY; then read the pagemap). */
static inline int snic_pagemap_scan(int pagemap_fd, struct pm_scan_arg *a,
				    uintptr_t lo, uintptr_t hi,
				    struct page_region *out, unsigned max,
				    uintptr_t *next)
{
	int n;

	a->size = sizeof(*a);
	a->start = lo;
	a->end = hi;
	a->vec = (uintptr_t)out;
	a->vec_len = max;
	n = ioctl(pagemap_fd, PAGEMAP_SCAN, a);
	if (n < 0)
		return -1;
	*next = (uintptr_t)a->walk_end;
	return n;
}

/* The runs of pages of [lo, hi) that are not present. */
static inline int snic_pagemap_holes(int pagemap_fd, uintptr_t lo,
				     uintptr_t hi, struct page_region *out,
				     unsigned max, uintptr_t *next)
{
	struct pm_scan_arg a = {
		.category_inverted = PAGE_IS_PRESENT,
		.category_mask = PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_PRESENT,
	};

	return snic_pagemap_scan(pagemap_fd, &a, lo, hi, out, max, next);
}

/* The runs of pages that hold data of their own: present, or any other
 * non-empty page-table entry (swapped out, migrating: the kernel reports
 * all of them as PAGE_IS_SWAPPED).  In a private anonymous mapping the
 * pages between such runs were never touched and read as zeros. */
static inline int snic_pagemap_data(int pagemap_fd, uintptr_t lo,
				    uintptr_t hi, struct page_region *out,
				    unsigned max, uintptr_t *next)
{
	struct pm_scan_arg a = {
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
	};

	return snic_pagemap_scan(pagemap_fd, &a, lo, hi, out, max, next);
}

#endif
