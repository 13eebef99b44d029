/* SPDX-License-Identifier: MIT */
/*
 * The emulator's broker (broker.h): the back end of the shared context
 * broker (boards/common/host/ctx_broker.c, which keeps the connections,
 * slots and segments).  Runs in the emulator's loop (housekeeping, every
 * 10 ms): no thread, so it touches the firmware only between polls.
 *
 * A slot's descriptor is a sealed memfd mapped over that slot in our view
 * of the BAR (the firmware reads commands from it; only the process we
 * hand it to can write it); at the context's end our view maps the BAR
 * file's slot again, so the old descriptor reaches nothing of the next
 * owner's.  A segment is a memfd over its part of the segment area of the
 * window, replaced by fresh zero pages with its last context.  Grants and
 * deaths are calls into the firmware (snic_nic_ctx_grant/_dead).
 *
 * The slot's descriptor covers the context's doorbell page too (hostif.h
 * SNIC_CTX_DB_OFF): the firmware takes a QP's doorbell only from its own
 * context's page.
 *
 * Statistics: our view of the BAR's statistics area is a memfd too, so the
 * firmware publishes every QP's PSNs, state and peer address there and
 * the BAR file's area stays empty; <run dir>/<name>.admin.sock hands that
 * memfd to the run directory's owner or root (snicctl; hostif.h "Host
 * isolation").
 *
 * Device memory: a context asks on its socket for the pages of a DM it
 * holds (SNIC_ISO_DM_MAP); each page becomes a memfd in our view, handed
 * to it alone.  Pages it frees are cut (our view maps the file's page
 * again) before the firmware may hand them to anyone else.
 */
#include "broker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx_broker.h"
#include "segment.h"
#include "snic/fw.h"
#include "snic/hostif.h"

#define BROKER_DM_PAGES (SNIC_DM_SIZE / SNIC_PAGE_SIZE)

static struct {
	struct broker_nic nic[CB_MAX_NICS];
	unsigned nnics;
	int stats_fd[CB_MAX_NICS];      /* our view's statistics area       */
	/* DM pages handed to a context: our view's page is a memfd (-1: the
	 * BAR file's page) */
	int dm_fd[CB_MAX_NICS][BROKER_DM_PAGES];
	unsigned long dm_cut;
	struct snic_hostmem *hm;
	uint64_t seg_len;
	int up;
} E;

/* Our view of slot `slot`: what the firmware reads. */
static uint8_t *nic_slot(unsigned nic, unsigned slot)
{
	return E.nic[nic].bar + SNIC_BAR_CTX_OFF + (size_t)slot * SNIC_CTX_SLOT_SIZE;
}

/* Our view's DM page p (nic/grant.c: the firmware reads it there). */
static uint8_t *dm_page(unsigned nic, unsigned p)
{
	return E.nic[nic].bar + SNIC_BAR_DM_OFF + (size_t)p * SNIC_PAGE_SIZE;
}

static uint8_t *seg_at(unsigned k)
{
	return E.hm->base + E.hm->size + (uint64_t)k * E.seg_len;
}

static int emu_slot_open(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	return snic_private_map(nic_slot(nic, slot), SNIC_CTX_SLOT_SIZE,
				"snic-ctx-slot");
}

static void emu_slot_close(void *be, unsigned nic, unsigned slot, int fd)
{
	(void)be;
	snic_private_unmap(nic_slot(nic, slot), SNIC_CTX_SLOT_SIZE, fd,
			   E.nic[nic].bar_fd,
			   SNIC_BAR_CTX_OFF + (uint64_t)slot * SNIC_CTX_SLOT_SIZE);
}

static int emu_seg_open(void *be, unsigned k)
{
	(void)be;
	return snic_private_map(seg_at(k), E.seg_len, "snic-segment");
}

static void emu_seg_close(void *be, unsigned k, int fd)
{
	(void)be;
	/* fresh zero pages: the next owner sees nothing of this one's */
	snic_private_unmap(seg_at(k), E.seg_len, fd, -1, 0);
}

static int emu_grant(void *be, unsigned nic, unsigned slot, uint32_t pid,
		     uint32_t first_page, uint32_t npages)
{
	(void)be;
	return snic_nic_ctx_grant(E.nic[nic].fw, slot, pid, first_page, npages);
}

static void emu_dead(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	snic_nic_ctx_dead(E.nic[nic].fw, slot);
}

/* SNIC_ISO_DM_MAP: the pages of [seg_pa, seg_pa + seg_len) of the DM
 * area, each its own memfd, if every one is the asking context's.  A
 * page's first hand-out makes it a fresh zero memfd (the DM was zeroed
 * when allocated, and nothing of the context's can be in it before it
 * maps it; what another process wrote into the file's page stays there). */
static int emu_dm_map(void *be, unsigned nic, unsigned slot,
		      const struct snic_iso_ctx *q, int *fds, unsigned *nfd,
		      uint64_t *firstp)
{
	uint64_t first = q->seg_pa / SNIC_PAGE_SIZE, n;

	(void)be;
	n = (q->seg_pa % SNIC_PAGE_SIZE + q->seg_len + SNIC_PAGE_SIZE - 1) /
	    SNIC_PAGE_SIZE;
	if (q->seg_len == 0 || q->seg_len > SNIC_DM_SIZE ||
	    first >= BROKER_DM_PAGES || n > BROKER_DM_PAGES - first)
		return EINVAL;
	for (uint64_t p = first; p < first + n; p++)
		if (snic_nic_dm_owner(E.nic[nic].fw, (unsigned)p) != (int)slot)
			return EACCES;
	for (uint64_t p = first; p < first + n; p++) {
		int *fd = &E.dm_fd[nic][p];

		if (*fd < 0)
			*fd = snic_private_map(dm_page(nic, (unsigned)p),
					       SNIC_PAGE_SIZE, "snic-dm");
		if (*fd < 0)
			return ENOMEM;
		fds[p - first] = *fd;
	}
	*nfd = (unsigned)n;
	*firstp = first;
	return 0;
}

/* DM pages a context of ours freed (or left behind): our view maps the
 * BAR file's page again, so whoever still maps the memfd reaches nothing
 * of the next owner's; then the firmware may hand them out. */
static void emu_dm_cut(void *be, unsigned nic)
{
	uint32_t held = snic_nic_dm_held(E.nic[nic].fw);

	(void)be;
	if (!held)
		return;
	for (unsigned p = 0; p < BROKER_DM_PAGES; p++)
		if ((held >> p) & 1 && E.dm_fd[nic][p] >= 0) {
			snic_private_unmap(dm_page(nic, p), SNIC_PAGE_SIZE,
					   E.dm_fd[nic][p], E.nic[nic].bar_fd,
					   SNIC_BAR_DM_OFF +
					   (uint64_t)p * SNIC_PAGE_SIZE);
			E.dm_fd[nic][p] = -1;
			E.dm_cut++;
		}
	snic_nic_dm_release(E.nic[nic].fw, held);
}

static const struct cb_ops emu_ops = {
	.slot_open = emu_slot_open,
	.slot_close = emu_slot_close,
	.seg_open = emu_seg_open,
	.seg_close = emu_seg_close,
	.grant = emu_grant,
	.dead = emu_dead,
	.dm_map = emu_dm_map,
	.housekeep = emu_dm_cut,
};

/* Our view's statistics area becomes a memfd holding what the firmware
 * wrote there so far (the names); the BAR file's area is cleared. */
static int stats_private(unsigned i, int bar_fd)
{
	uint8_t *at = E.nic[i].bar + SNIC_BAR_STATS_OFF;
	uint8_t *copy = malloc(SNIC_BAR_STATS_SIZE);
	static const uint8_t zero[4096];

	if (!copy)
		return -1;
	memcpy(copy, at, SNIC_BAR_STATS_SIZE);
	E.stats_fd[i] = snic_private_map(at, SNIC_BAR_STATS_SIZE, "snic-stats");
	if (E.stats_fd[i] >= 0)
		memcpy(at, copy, SNIC_BAR_STATS_SIZE);
	free(copy);
	if (E.stats_fd[i] < 0)
		return -1;
	for (uint64_t o = 0; o < SNIC_BAR_STATS_SIZE; o += sizeof(zero))
		if (pwrite(bar_fd, zero, sizeof(zero), SNIC_BAR_STATS_OFF + o) !=
		    (ssize_t)sizeof(zero))
			return -1;
	return 0;
}

int broker_init(const char *run_dir, const struct broker_nic *nics,
		unsigned n, struct snic_hostmem *hm, uint64_t seg_len,
		long users)
{
	struct cb_nic cn[CB_MAX_NICS];
	struct cb_config cfg = {
		.prog = "snic-emu", .run_dir = run_dir, .nics = cn,
		.nnics = n, .ops = &emu_ops, .be = NULL,
		.seg_base = hm->size, .seg_len = seg_len, .users = users,
	};

	memset(&E, 0, sizeof(E));
	for (unsigned i = 0; i < CB_MAX_NICS; i++) {
		E.stats_fd[i] = -1;
		for (unsigned p = 0; p < BROKER_DM_PAGES; p++)
			E.dm_fd[i][p] = -1;
	}
	if (n > CB_MAX_NICS || seg_len == 0 || hm->area < seg_len)
		return -1;
	E.nnics = n;
	E.hm = hm;
	E.seg_len = seg_len;
	cfg.nseg = (unsigned)(hm->area / seg_len);
	if (cfg.nseg > SNIC_MAX_CTX)
		cfg.nseg = SNIC_MAX_CTX;
	memcpy(E.nic, nics, n * sizeof(*nics));
	E.up = 1;
	for (unsigned i = 0; i < n; i++) {
		if (stats_private(i, nics[i].bar_fd) != 0) {
			broker_fini();
			return -1;
		}
		cn[i] = (struct cb_nic){ .name = nics[i].name,
					 .bar_fd = nics[i].bar_fd,
					 .stats_fd = E.stats_fd[i],
					 .stats_len = SNIC_BAR_STATS_SIZE };
	}
	if (cb_init(&cfg) != 0) {
		broker_fini();
		return -1;
	}
	/* another process's ftruncate of the BAR file must not SIGBUS us
	 * in the slot copies (hal/posix/file_guard.c) */
	for (unsigned i = 0; i < n; i++)
		snic_posix_file_guard(nics[i].bar_fd, SNIC_BAR_SIZE,
				      cb_file_map(i), SNIC_BAR_STATS_OFF);
	return 0;
}

void broker_poll(void)
{
	cb_poll();
}

int broker_owns(unsigned nic, unsigned slot)
{
	return cb_owns(nic, slot);
}

void broker_fini(void)
{
	if (!E.up)
		return;
	cb_fini();
	for (unsigned i = 0; i < E.nnics; i++) {
		if (E.stats_fd[i] >= 0)
			snic_private_unmap(E.nic[i].bar + SNIC_BAR_STATS_OFF,
					   SNIC_BAR_STATS_SIZE, E.stats_fd[i],
					   E.nic[i].bar_fd, SNIC_BAR_STATS_OFF);
		E.stats_fd[i] = -1;
		for (unsigned p = 0; p < BROKER_DM_PAGES; p++)
			if (E.dm_fd[i][p] >= 0)
				snic_private_unmap(dm_page(i, p), SNIC_PAGE_SIZE,
						   E.dm_fd[i][p], E.nic[i].bar_fd,
						   SNIC_BAR_DM_OFF +
						   (uint64_t)p * SNIC_PAGE_SIZE);
	}
	E.up = 0;
	printf("snic-emu: broker: %lu device memory pages cut\n", E.dm_cut);
}
