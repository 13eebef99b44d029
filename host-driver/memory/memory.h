/* SPDX-License-Identifier: MIT */
/*
 * snic host driver, memory: the host-memory window (hostmem.c), pinning of
 * application pages (pin.c) and the extents that hold the rings of CQs,
 * QPs and SRQs (extent.c).
 */
#ifndef HD_MEMORY_H
#define HD_MEMORY_H

#include "core/core.h"

/* ------------------------------------------------------------------ */
/* Host memory window (hostmem.c).                                      */

struct hd_hostmem {
	char name[64];              /* file name in the run dir             */
	char path[512];
	dev_t st_dev;
	ino_t st_ino;
	int fd;
	uint8_t *base;              /* pa 0 (a segment: reserved up to it)  */
	uint64_t size;
	/* the allocator's pages: [lo_page, lo_page + npages); lo_page 0 for
	 * the shared file, the segment's first page for a private segment
	 * (the broker's, hostif.h), whose fd offset 0 is pa lo_page << 12 */
	uint32_t lo_page;
	uint32_t npages;
	int segment;                /* a private segment (broker)           */
	unsigned users;             /* a segment's contexts (hd_hostmem_put) */
	/* the allocator's layout (hostmem.c), computed here and never read
	 * back from the file: any process can write the file's copy */
	uint32_t max_ext, bitmap_off, ext_off, meta_pages;
	pthread_mutex_t lock;       /* in-process half of the allocator lock */
	struct hd_hostmem *next;
};

/* Map the host-memory file (once per process per file). */
struct hd_hostmem *hd_hostmem_get(const char *name, uint64_t size,
				  int *err);
/* Map a private segment (a sealed memfd from the broker, pa seg_pa.., len
 * bytes); once per process per segment: fd is closed when already mapped. */
struct hd_hostmem *hd_hostmem_segment(int fd, uint64_t seg_pa, uint64_t len,
				      int *err);
/* A context of a segment is gone: the last one unmaps it, unless pinned
 * application pages are still backed by it.  Nothing for the file. */
void hd_hostmem_put(struct hd_hostmem *hm);
/* fd cannot shrink below len (sealed): mapping it cannot give SIGBUS. */
int hd_fd_sealed(int fd, uint64_t len);
/* Allocate npages contiguous window pages.  Returns 0 and the first
 * page number, or an errno value.  Flags: */
enum {
	HD_HM_ZERO = 1u << 0,       /* zeroed                               */
	/* first fit from the bottom: pages freed lately come back first,
	 * whose memory the file already has (no allocation and zeroing by
	 * the kernel when they are written: pin.c's copies) */
	HD_HM_LOW = 1u << 1,
};
int hd_hm_alloc(struct hd_hostmem *hm, uint32_t npages, unsigned flags,
		uint32_t *first_page);
void hd_hm_free(struct hd_hostmem *hm, uint32_t first_page,
		uint32_t npages);
/* n extents back under one hold of the allocator's lock per
 * HD_HM_FREE_MAX (its two system calls, not two each): pin.c's batches
 * of stale backings. */
#define HD_HM_FREE_MAX 64u
struct hd_hm_ext {
	uint32_t first, npages;
};
void hd_hm_free_n(struct hd_hostmem *hm, const struct hd_hm_ext *e,
		  unsigned n);
/* Free the extents of dead processes (the firmware no longer uses). */
void hd_hm_reap(struct hd_hostmem *hm);

static inline void *hd_hm_ptr(struct hd_hostmem *hm, uint64_t pa)
{
	return hm->base + pa;
}

static inline uint64_t hd_page_pa(uint32_t page)
{
	return (uint64_t)page << SNIC_PAGE_SHIFT;
}

/* Offset of window page `page` in hm's file descriptor. */
static inline uint64_t hd_hm_off(const struct hd_hostmem *hm, uint32_t page)
{
	return hd_page_pa(page - hm->lo_page);
}

/* ------------------------------------------------------------------ */
/* Pinning: re-backing application pages with window pages (pin.c).     */

struct hd_chunk;

struct hd_pin {
	struct hd_hostmem *hm;
	uintptr_t start;            /* page aligned                         */
	uint32_t npages;
	uint32_t *pages;            /* window page of every page            */
	uint32_t nchunks;
	struct hd_chunk **chunks;   /* one reference on each                */
};

int hd_pin(struct hd_hostmem *hm, void *addr, size_t len,
	   struct hd_pin **out);
/* 1 while application pages are backed by hm's pages. */
int hd_pin_uses(const struct hd_hostmem *hm);
/* The last registration of a range gone, its backing stays (pin.c): the
 * next registration of it costs no copy.  hd_pin_flush gives every such
 * range of hm (NULL: of any window) its own memory back; returns how
 * many window pages it freed. */
void hd_unpin(struct hd_pin *pin);

/* reback_guard.c: our own threads' heap writes vs. a re-back.  The event
 * and CM threads bracket their work with enter/leave (exported to our
 * librdmacm, SNIC_PRIVATE_1); pin.c brackets each copy-and-remap with
 * begin/end (begin's result goes to end). */
void snic_heap_guard_enter(void);
void snic_heap_guard_leave(void);
int hd_reback_begin(void);
void hd_reback_end(int taken);
uint64_t hd_pin_flush(struct hd_hostmem *hm);
int hd_fork_safe(void);
/* How the re-backs of this process filled their window pages so far
 * (pin.c window_fill), bytes each way: for tests. */
struct hd_fill_stats {
	uint64_t copied;            /* memcpy in the window's mapping       */
	uint64_t spliced;           /* vmsplice + splice into the file      */
	uint64_t written;           /* pwrite (SNIC_REG_SPLICE=0, EFAULT)   */
	uint64_t zeroed;            /* pages never touched: zeros           */
	uint64_t pipes;             /* pipes made for splicing              */
	uint64_t fills;             /* ranges filled                        */
	uint64_t stashed;           /* of them on a stashed window extent   */
};
void hd_pin_fill_stats(struct hd_fill_stats *out);
/* The window extents of hm in this process's stash (pin.c), up to max of
 * them into out: how many there are.  For tests. */
unsigned hd_pin_stashed(const struct hd_hostmem *hm, struct hd_hm_ext *out,
			unsigned max);

/* ------------------------------------------------------------------ */
/* The first copy into window pages (stream_copy.c).                    */

/* From this many bytes up, streaming (non-temporal) stores: the window
 * line is not read first, nor kept in the cache.  Ordered before return
 * (a fence).  Smaller, or dst not 16-byte aligned, or len not a multiple
 * of 64: memcpy / memset (stream_copy.c says why 2 MiB). */
#define HD_STREAM_MIN (2u << 20)
void hd_stream_copy(void *dst, const void *src, size_t len);
void hd_stream_zero(void *dst, size_t len);

/* ------------------------------------------------------------------ */
/* What backs this process's address space (vma.c).                     */

#define HD_PFN_NONE UINT64_MAX

/* pfn[i] for the n pages from va: the page frame of a present file or
 * shared page (0 when the kernel hides frame numbers: unprivileged), or
 * HD_PFN_NONE (not present, or private anonymous).  0 or an errno. */
int hd_page_frames(uintptr_t va, uint32_t n, uint64_t *pfn);
/* 1 when the page at va is present and private anonymous memory: no
 * window page is mapped there. */
int hd_page_private(uintptr_t va);
/* 1 when the n pages from va are present in this process's page tables
 * (every one with PAGEMAP_SCAN; on older kernels 16 of them evenly spread
 * when more: a guess, for speed only). */
int hd_pages_mapped(uintptr_t va, uint32_t n);
/* Up to max (<= HD_RUNS_MAX) runs of [lo, hi) inside one mapping whose
 * pages hold data of their own (present, swapped out); in private
 * anonymous memory the pages between them were never touched (zeros).
 * *next: where the scan stopped (hi: all of it).  The number of runs, or
 * -1 when the kernel cannot tell (older than 6.7). */
#define HD_RUNS_MAX 32
struct hd_run {
	uintptr_t lo, hi;
};
int hd_data_runs(uintptr_t lo, uintptr_t hi, struct hd_run *out,
		 unsigned max, uintptr_t *next);
/* Every mapping in this process of hm's file at offsets [off, off + n
 * pages), the window's own mapping left out (/proc/self/maps): fn(arg,
 * va, pages, index of its first page from off) for each, in address
 * order, until fn returns nonzero.  0, fn's value or an errno.  A range
 * the application moved (mremap, realloc) is found where it went. */
typedef int (*hd_map_fn)(void *arg, uintptr_t va, uint32_t pages,
			 uint32_t index);
int hd_window_maps(const struct hd_hostmem *hm, uint64_t off, uint32_t n,
		   hd_map_fn fn, void *arg);

/* 1 when every page of [va, va + n pages) maps hm's file at offset off
 * + its distance from va (a kept backing still in place), 0 when not, -1
 * when the kernel cannot tell that way (older than 6.11). */
int hd_window_in_place(const struct hd_hostmem *hm, uintptr_t va,
		       uint64_t off, uint32_t n);

struct hd_vma {
	uintptr_t lo, hi;           /* a SysV segment: the whole attachment */
	int shmid;                  /* SysV segment, or -1                  */
	uint64_t huge;              /* hugetlb page size, or 0              */
	int plain;                  /* readable private anonymous memory    */
};

/* The mapping p is in; 0 when none (or maps unreadable). */
int hd_vma_at(uintptr_t p, struct hd_vma *v);

/* ------------------------------------------------------------------ */
/* Extents and ring sets (extent.c): the one lifecycle of the window
 * memory an object shares with the firmware.                           */

static inline uint32_t hd_pages_for(uint64_t bytes)
{
	return (uint32_t)((bytes + SNIC_PAGE_SIZE - 1) >> SNIC_PAGE_SHIFT);
}

/* Contiguous window pages owned by one object. */
struct hd_extent {
	struct hd_hostmem *hm;
	uint32_t page;              /* first page                           */
	uint32_t npages;            /* 0: nothing allocated                 */
};

int hd_extent_alloc(struct hd_extent *e, struct hd_hostmem *hm,
		    uint32_t npages, int zero);
/* After the command that created (failed) or destroyed the object the
 * extent served: free it, unless the command failed because the firmware
 * is gone (hd_fw_gone), which may still DMA into it; the pages then stay
 * with this process and are reaped once it and its contexts are gone. */
void hd_extent_release(struct hd_extent *e, int cmd_err);
/* The firmware no longer knows the object (ibv_close_device). */
void hd_extent_free(struct hd_extent *e);

static inline uint64_t hd_extent_pa(const struct hd_extent *e, uint32_t page)
{
	return hd_page_pa(e->page + page);
}

static inline void *hd_extent_ptr(const struct hd_extent *e, uint32_t page)
{
	return hd_hm_ptr(e->hm, hd_extent_pa(e, page));
}

/*
 * The rings of a CQ, QP or SRQ: one zeroed extent, the first page the
 * doorbell record, then each ring from a page boundary (a CQ: the CQE
 * ring; a QP: SQ then RQ; an SRQ: the WQE ring).
 */
#define HD_RINGS_MAX 2

struct hd_rings {
	struct hd_extent ext;
	void *dbrec;
	uint64_t dbrec_pa;
	uint8_t *ring[HD_RINGS_MAX];
	uint64_t ring_pa[HD_RINGS_MAX];
};

/* bytes[i] for i < n (n <= HD_RINGS_MAX): the size of ring i. */
int hd_rings_alloc(struct hd_rings *r, struct hd_hostmem *hm,
		   const uint64_t *bytes, unsigned n);

#endif /* HD_MEMORY_H */
