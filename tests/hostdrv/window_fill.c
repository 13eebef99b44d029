/* SPDX-License-Identifier: MIT */
/*
 * How a registration's first copy reaches the window (host-driver/memory/
 * pin.c window_fill), each way with its bytes checked: window pages this
 * process never mapped take vmsplice and splice through one pipe for all
 * the data runs of the range (a hole of pages never touched between
 * them: zeros) and for the fills after it (one pipe kept), or pwrite
 * with SNIC_REG_SPLICE=0; window pages mapped here already (the same
 * pages again, after an eviction) take a memcpy (streaming stores for
 * its 2.3 MiB run and 2.4 MiB hole, over stale bytes left in the freed
 * pages).  The driver's own
 * counters (hd_pin_fill_stats) say which way went, so a knob that
 * changed nothing, or a pipe per run or per fill, fails.  Each way: the
 * window file holds the application's bytes at the pages the pin names,
 * the application reads the same bytes afterwards, a write into the file
 * shows in the application's range (it is backed by it), and the range
 * keeps that write when it gets its own memory back (hd_pin_flush).
 * The window is a sealed memfd (a broker's private segment, as
 * hd_hostmem_segment takes it); each way runs in a child of its own (the
 * knob is read once per process).  Linked with the host driver's objects.
 *
 *   window_fill        (exit 0: all passed)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory/memory.h"
#include "../check.h"

enum {
	WIN_BYTES = 16u << 20,
	/* the registered buffer: on window pages mapped here, its hole and
	 * its last run are over HD_STREAM_MIN (streaming stores), its first
	 * run under it (memcpy) */
	PAGES = 1280,
	HOLE_LO = 100,          /* pages [HOLE_LO, HOLE_HI) never touched   */
	HOLE_HI = 700,
};
#define PG ((size_t)SNIC_PAGE_SIZE)
#define LEN ((size_t)PAGES * PG)
#define DATA_BYTES ((size_t)(PAGES - (HOLE_HI - HOLE_LO)) * PG)

static uint8_t pat(size_t page, size_t i, unsigned seed)
{
	return (uint8_t)(page * 31u + i * 7u + seed * 101u + 1u);
}

/* What page p of a buffer filled with seed holds (zeros in the hole). */
static uint8_t want(size_t p, size_t i, unsigned seed)
{
	return p >= HOLE_LO && p < HOLE_HI ? 0 : pat(p, i, seed);
}

static uint8_t *new_buffer(unsigned seed)
{
	uint8_t *b = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED)
		return NULL;
	for (size_t p = 0; p < PAGES; p++)
		for (size_t i = 0; p < HOLE_LO || p >= HOLE_HI ? i < PG : 0; i++)
			b[p * PG + i] = pat(p, i, seed);
	return b;
}

/* The first byte where b (seed's bytes) differs, or -1. */
static long buffer_diff(const uint8_t *b, unsigned seed)
{
	for (size_t p = 0; p < PAGES; p++)
		for (size_t i = 0; i < PG; i++)
			if (b[p * PG + i] != want(p, i, seed))
				return (long)(p * PG + i);
	return -1;
}

/* The window file's bytes at the pin's pages, read with pread (not
 * through any mapping): the first byte that differs, or -1. */
static long window_diff(const struct hd_hostmem *hm, const struct hd_pin *pin,
			unsigned seed)
{
	static uint8_t page[SNIC_PAGE_SIZE];

	for (size_t p = 0; p < PAGES; p++) {
		off_t off = (off_t)hd_hm_off(hm, pin->pages[p]);

		if (pread(hm->fd, page, PG, off) != (ssize_t)PG)
			return (long)(p * PG);
		for (size_t i = 0; i < PG; i++)
			if (page[i] != want(p, i, seed))
				return (long)(p * PG + i);
	}
	return -1;
}

/* A registered buffer (one_fill) until release_fill. */
struct fill {
	uint8_t *b;
	struct hd_pin *pin;
	unsigned seed;
	const char *way;
};

/* One registration of a fresh buffer: the way it went (stats deltas:
 * pipes_made pipes made), its bytes in the window and in the buffer, a
 * write through the file seen in the buffer.  0 when it registered. */
static int one_fill(struct hd_hostmem *hm, struct fill *f, int expect_mapped,
		    int no_splice, uint64_t pipes_made)
{
	struct hd_fill_stats s0, s1;
	uint8_t mark = 0x5a;
	uint64_t data, spliced, written, copied;
	const char *way = f->way;
	char what[300];
	int err;

	f->pin = NULL;
	f->b = new_buffer(f->seed);
	if (!f->b) {
		check(0, "mmap of the buffer");
		return -1;
	}
	hd_pin_fill_stats(&s0);
	err = hd_pin(hm, f->b, LEN, &f->pin);
	hd_pin_fill_stats(&s1);
	snprintf(what, sizeof(what), "%s: hd_pin of %zu KiB: %s", way,
		 LEN >> 10, strerror(err));
	check(err == 0, what);
	if (err)
		return -1;
	spliced = s1.spliced - s0.spliced;
	written = s1.written - s0.written;
	copied = s1.copied - s0.copied;
	data = spliced + written + copied;
	/* without PAGEMAP_SCAN (Linux < 6.7) the hole is copied as data */
	snprintf(what, sizeof(what),
		 "%s: one fill, every byte once (%llu data + %llu zeros = %zu; "
		 "%zu at least data)", way, (unsigned long long)data,
		 (unsigned long long)(s1.zeroed - s0.zeroed), LEN, DATA_BYTES);
	check(s1.fills - s0.fills == 1 && data + (s1.zeroed - s0.zeroed) == LEN &&
	      data >= DATA_BYTES, what);
	snprintf(what, sizeof(what),
		 "%s: the way taken: %llu copied, %llu spliced, %llu written, "
		 "%llu pipes made (%llu wanted)", way, (unsigned long long)copied,
		 (unsigned long long)spliced, (unsigned long long)written,
		 (unsigned long long)(s1.pipes - s0.pipes),
		 (unsigned long long)pipes_made);
	check(s1.pipes - s0.pipes == pipes_made &&
	      (expect_mapped ? copied : no_splice ? written : spliced) == data,
	      what);
	snprintf(what, sizeof(what), "%s: the window holds the buffer's bytes "
		 "(first difference at %ld)", way,
		 window_diff(hm, f->pin, f->seed));
	check(window_diff(hm, f->pin, f->seed) < 0, what);
	snprintf(what, sizeof(what), "%s: the buffer's bytes after the "
		 "registration (first difference at %ld)", way,
		 buffer_diff(f->b, f->seed));
	check(buffer_diff(f->b, f->seed) < 0, what);
	/* a write to the window (the NIC's) shows in the backed range */
	snprintf(what, sizeof(what), "%s: a write into the window shows in the "
		 "buffer", way);
	check(pwrite(hm->fd, &mark, 1,
		     (off_t)hd_hm_off(hm, f->pin->pages[PAGES - 1]) + 5) == 1 &&
	      f->b[LEN - PG + 5] == mark, what);
	return 0;
}

/* Deregistered; after the eviction (hd_pin_flush) the buffer has its
 * bytes and the window's write, in memory of its own. */
static void release_fill(struct hd_hostmem *hm, struct fill *f)
{
	char what[200];

	if (!f->pin)
		return;
	hd_unpin(f->pin);
	hd_pin_flush(hm);
	snprintf(what, sizeof(what), "%s: after the eviction the buffer has "
		 "its bytes and the window's write", f->way);
	f->b[LEN - PG + 5] ^= 0x5a ^ want(PAGES - 1, 5, f->seed);
	check(buffer_diff(f->b, f->seed) < 0, what);
	munmap(f->b, LEN);
}

/* Under AddressSanitizer pin.c takes no memcpy (the range may hold bytes
 * the application never allocated): the third fill goes the cold way,
 * through a pipe made anew (the evictions before it closed the kept one). */
#if defined(__SANITIZE_ADDRESS__)
#define WF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WF_SANITIZED 1
#endif
#endif
#ifdef WF_SANITIZED
#define MAPPED_WAY "no memcpy under ASan (window pages mapped)"
#define MAPPED_EXPECT 0
#else
#define MAPPED_WAY "memcpy (window pages mapped)"
#define MAPPED_EXPECT 1
#endif

/* Small buffers registered once each at one address, then freed (pin.c's
 * stale chunks, settled STALE_MAX at a time, their window extents kept
 * for the next small registrations: the stash).  A page registered once
 * and moved away (mremap) keeps its bytes whatever the later
 * registrations write into the window; each registration's window page
 * holds its buffer's bytes and the window's writes show in the buffer;
 * the stash served some of them (its counter) and gives everything back
 * at hd_pin_flush. */
/* After fork() (the parent): a fresh page at a registers, not on a
 * stashed extent, with its bytes in the window. */
static int stash_after_fork(struct hd_hostmem *hm, uint8_t *a)
{
	struct hd_fill_stats f0, f1;
	uint8_t *b = mmap(a, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			  MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	uint8_t page[SNIC_PAGE_SIZE];
	struct hd_pin *pin;
	int ok, err;

	if (b != a) {
		printf("  after fork (pid %d): mmap at %p: %p\n", (int)getpid(),
		       (void *)a, (void *)b);
		return 0;
	}
	memset(b, 0x3c, PG);
	hd_pin_fill_stats(&f0);
	err = hd_pin(hm, b, PG, &pin);
	if (err) {
		printf("  after fork (pid %d): hd_pin: %s\n", (int)getpid(),
		       strerror(err));
		return 0;
	}
	hd_pin_fill_stats(&f1);
	ok = f1.stashed == f0.stashed && f1.fills == f0.fills + 1 &&
	     pread(hm->fd, page, PG, (off_t)hd_hm_off(hm, pin->pages[0])) ==
	     (ssize_t)PG && page[0] == 0x3c && page[PG - 1] == 0x3c;
	if (!ok)
		printf("  after fork (pid %d): stashed %llu -> %llu, fills %llu "
		       "-> %llu, window byte %#x\n", (int)getpid(),
		       (unsigned long long)f0.stashed,
		       (unsigned long long)f1.stashed,
		       (unsigned long long)f0.fills,
		       (unsigned long long)f1.fills, page[0]);
	hd_unpin(pin);
	munmap(b, PG);
	return ok;
}

/* Round i of a fresh page at a filled with seed's bytes: registered, its
 * bytes in the window (pread of the file, not through a mapping), the
 * window's write seen in it, deregistered and unmapped; the moved page
 * keeps its bytes.  Wrong bytes (and failed steps) into *bad, the window
 * page taken into *took; 1 when the round could not go on. */
static int stash_round(struct hd_hostmem *hm, uint8_t *a, const uint8_t *moved,
		       unsigned i, unsigned seed, uint32_t *took, unsigned *bad)
{
	uint8_t *b = mmap(a, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			  MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	uint8_t mark = (uint8_t)(i ^ 0xa5), page[SNIC_PAGE_SIZE];
	struct hd_pin *pin;

	if (b != a) {
		++*bad;
		return 1;
	}
	for (size_t k = 0; k < PG; k++)
		b[k] = pat(i, k, seed);
	if (hd_pin(hm, b, PG, &pin) != 0) {
		++*bad;
		return 1;
	}
	if (took)
		*took = pin->pages[0];
	if (pread(hm->fd, page, PG,
		  (off_t)hd_hm_off(hm, pin->pages[0])) != (ssize_t)PG)
		++*bad;
	for (size_t k = 0; k < PG; k++)
		*bad += page[k] != pat(i, k, seed) || b[k] != pat(i, k, seed);
	if (pwrite(hm->fd, &mark, 1,
		   (off_t)hd_hm_off(hm, pin->pages[0]) + 17) != 1 ||
	    b[17] != mark)
		++*bad;
	hd_unpin(pin);
	munmap(b, PG);
	for (size_t k = 0; k < PG; k++)
		*bad += moved[k] != 0x77;
	return 0;
}

/* The stash's extents are taken without asking whether their pages are
 * still mapped here (pin.c window_fill: `warm`, the memcpy faults a page
 * in).  Each stashed page is taken from under the stash: the even ones
 * dropped from this process's page tables (MADV_DONTNEED on the window's
 * mapping: the file keeps the page, as after reclaim), the odd ones
 * punched out of the file (FALLOC_FL_PUNCH_HOLE: the page freed, zeros
 * after).  Then fresh pages register on them, each with its own bytes in
 * the window and in the buffer. */
static void stash_unmapped(struct hd_hostmem *hm, uint8_t *a,
			   const uint8_t *moved, const char *way)
{
	struct hd_hm_ext ext[64];
	struct hd_fill_stats s0, s1;
	unsigned n = hd_pin_stashed(hm, ext, 64), bad = 0, used = 0, i;
	uint32_t took[64 + 8];
	char what[300];

	snprintf(what, sizeof(what), "%s, stash: %u extents stashed after the "
		 "rounds (wanted some, of one page each)", way, n);
	check(n > 0 && n <= 64, what);
	if (n == 0 || n > 64)
		return;
	for (i = 0; i < n; i++) {
		bad += ext[i].npages != 1;
		if (i & 1)
			bad += fallocate(hm->fd, FALLOC_FL_PUNCH_HOLE |
					 FALLOC_FL_KEEP_SIZE,
					 (off_t)hd_hm_off(hm, ext[i].first),
					 (off_t)PG) != 0;
		else
			bad += madvise(hm->base + hd_page_pa(ext[i].first), PG,
				       MADV_DONTNEED) != 0;
	}
	check(bad == 0, "stash: MADV_DONTNEED and hole punch of the stashed "
	      "pages");
	hd_pin_fill_stats(&s0);
	for (i = 0; i < n + 8; i++)
		if (stash_round(hm, a, moved, i, 13, &took[i], &bad))
			break;
	hd_pin_fill_stats(&s1);
	snprintf(what, sizeof(what), "%s, stash: %u rounds on unmapped "
		 "stashed pages, %u wrong bytes", way, i, bad);
	check(i == n + 8 && bad == 0, what);
	for (unsigned e = 0; e < n; e++) {
		int hit = 0;

		for (unsigned r = 0; r < i && !hit; r++)
			hit = took[r] == ext[e].first;
		used += hit;
	}
	snprintf(what, sizeof(what), "%s, stash: %u of the %u unmapped "
		 "stashed pages registered again (%llu fills on a stashed "
		 "extent)", way, used, n,
		 (unsigned long long)(s1.stashed - s0.stashed));
	check(used == n && s1.stashed - s0.stashed >= n, what);
}

static void stash_way(struct hd_hostmem *hm, const char *way)
{
	enum { ROUNDS = 150 };
	struct hd_fill_stats s0, s1;
	uint8_t *a, *dst, *moved;
	struct hd_pin *pin;
	unsigned bad = 0, i;
	char what[200];

	a = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	dst = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || dst == MAP_FAILED) {
		check(0, "stash: mmap");
		return;
	}
	memset(a, 0x77, PG);
	if (hd_pin(hm, a, PG, &pin) != 0) {
		check(0, "stash: hd_pin of the page to move");
		return;
	}
	hd_unpin(pin);
	moved = mremap(a, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	check(moved == dst, "stash: mremap of a kept page");
	hd_pin_fill_stats(&s0);
	for (i = 0; i < ROUNDS && moved == dst; i++)
		if (stash_round(hm, a, moved, i, 9, NULL, &bad))
			break;
	hd_pin_fill_stats(&s1);
	snprintf(what, sizeof(what), "%s, stash: %u rounds of a fresh page at "
		 "one address, %u wrong bytes (its own in the window, the "
		 "window's write in it, the moved page's)", way, i, bad);
	check(i == ROUNDS && bad == 0, what);
	snprintf(what, sizeof(what), "%s, stash: %llu of %llu fills on a "
		 "stashed extent (wanted some)", way,
		 (unsigned long long)(s1.stashed - s0.stashed),
		 (unsigned long long)(s1.fills - s0.fills));
	check(s1.stashed - s0.stashed > 0 && s1.fills - s0.fills == ROUNDS,
	      what);
	if (moved == dst)
		stash_unmapped(hm, a, moved, way);
	/* fork() gives the stash back first (pin.c's prepare handler),
	 * with the kept and stale chunks: the child holds nothing of the
	 * window (it cannot use it: the window is not inherited, but the
	 * stash is plain memory it would inherit), nor does the parent, whose
	 * next registration takes no stashed extent */
	{
		pid_t pid = fork();
		int st = 0;
		pid_t w;

		if (pid == 0)
			_exit(hd_pin_uses(hm) ? 1 : 0);
		w = pid > 0 ? waitpid(pid, &st, 0) : -1;
		snprintf(what, sizeof(what), "stash: the child of fork() holds "
			 "nothing of the window (wait status %#x)",
			 (unsigned)st);
		check(w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, what);
		check(!hd_pin_uses(hm), "stash: the parent holds nothing of "
		      "the window after fork()");
		check(stash_after_fork(hm, a), "stash: the parent's first "
		      "registration after fork() takes no stashed extent");
	}
	hd_pin_flush(hm);
	check(!hd_pin_uses(hm), "stash: nothing of the window held after "
	      "hd_pin_flush");
	for (size_t k = 0; k < PG; k++)
		bad += moved[k] != 0x77;
	check(bad == 0, "stash: the moved page's bytes after hd_pin_flush");
	munmap(moved, PG);
}

/* 0xee over the window file's first len bytes (freed pages: what an
 * earlier user left there), through the file, not a mapping. */
static int stale_window(const struct hd_hostmem *hm, size_t len)
{
	static uint8_t junk[SNIC_PAGE_SIZE];

	memset(junk, 0xee, sizeof(junk));
	for (size_t off = 0; off < len; off += PG)
		if (pwrite(hm->fd, junk, PG, (off_t)off) != (ssize_t)PG)
			return 0;
	return 1;
}

/* A window of its own (a sealed memfd, pa 0): two registrations on cold
 * window pages (the second while the first holds its pages: the kept
 * pipe serves it), then one on the first's pages, mapped here by then. */
static int run_way(int no_splice)
{
	struct fill a = { NULL, NULL, 1, NULL }, b = { NULL, NULL, 2, NULL },
		    c = { NULL, NULL, 3, MAPPED_WAY };
	struct hd_hostmem *hm;
	unsigned failed_before = failed; /* the parent's, copied at fork */
	int fd, err = 0;

	a.way = no_splice ? "pwrite (SNIC_REG_SPLICE=0)" : "vmsplice+splice";
	b.way = no_splice ? "pwrite again" : "vmsplice+splice again";
	if (no_splice)
		setenv("SNIC_REG_SPLICE", "0", 1);
	fd = memfd_create("window-fill", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, WIN_BYTES) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
		check(0, "the window memfd");
		return 1;
	}
	hm = hd_hostmem_segment(fd, 0, WIN_BYTES, &err);
	if (!hm) {
		check(0, "hd_hostmem_segment");
		return 1;
	}
	/* one pipe for the process (both data runs of a, and b), none
	 * for pwrite */
	if (one_fill(hm, &a, 0, no_splice, !no_splice) == 0 &&
	    one_fill(hm, &b, 0, no_splice, 0) == 0) {
		release_fill(hm, &b);
		release_fill(hm, &a);
		/* stale bytes, not zeros, on the pages c takes (a's, lowest
		 * first): its hole must be written, not left as it was */
		check(stale_window(hm, 2 * LEN), "stale bytes over the freed pages");
		one_fill(hm, &c, MAPPED_EXPECT, no_splice,
			 MAPPED_EXPECT ? 0 : !no_splice);
		release_fill(hm, &c);
		check(!hd_pin_uses(hm), "nothing backed by the window at the end");
		stash_way(hm, a.way);
	}
	return failed != failed_before;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int no_splice = 0; no_splice <= 1; no_splice++) {
		pid_t pid = fork();
		int st = 0;

		if (pid == 0)
			_exit(run_way(no_splice));
		check(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0,
		      no_splice ? "SNIC_REG_SPLICE=0: every check passed" :
				  "splice: every check passed");
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed != 0;
}
