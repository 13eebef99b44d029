/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the lifecycle of window memory an object shares with
 * the firmware.  CQs, QPs and SRQs each keep their rings in one extent
 * (hd_rings); MR page lists use a bare extent for the time of REG_MR.
 *
 *   create:  hd_rings_alloc / hd_extent_alloc, then the CREATE command;
 *            on failure hd_extent_release(ext, err)
 *   destroy: the DESTROY command, then hd_extent_release(ext, err)
 *   close:   hd_extent_free (the firmware destroyed the object with the
 *            context)
 *
 * A command that fails because the firmware is gone (EIO, ETIMEDOUT) may
 * leave the firmware using the pages, so they are not reused by this
 * process; hostmem.c reaps them once no context of the owner is left.
 */
#include <errno.h>
#include <string.h>

#include "memory/memory.h"

int hd_extent_alloc(struct hd_extent *e, struct hd_hostmem *hm,
		    uint32_t npages, int zero)
{
	int err = hd_hm_alloc(hm, npages, zero ? HD_HM_ZERO : 0,
			      &e->page);

	/* the window full of backings kept after deregistration (pin.c) */
	if (err == ENOMEM && hd_pin_flush(hm))
		err = hd_hm_alloc(hm, npages, zero ? HD_HM_ZERO : 0,
			      &e->page);
	e->hm = hm;
	e->npages = err ? 0 : npages;
	return err;
}

void hd_extent_free(struct hd_extent *e)
{
	if (e->npages)
		hd_hm_free(e->hm, e->page, e->npages);
	e->npages = 0;
}

void hd_extent_release(struct hd_extent *e, int cmd_err)
{
	if (hd_fw_gone(cmd_err)) {
		hd_dbg("window pages %u+%u left allocated (firmware gone)\n",
		       e->page, e->npages);
		e->npages = 0;
		return;
	}
	hd_extent_free(e);
}

int hd_rings_alloc(struct hd_rings *r, struct hd_hostmem *hm,
		   const uint64_t *bytes, unsigned n)
{
	uint32_t first[HD_RINGS_MAX], npages = 1; /* the doorbell record */
	int err;

	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < n && i < HD_RINGS_MAX; i++) {
		first[i] = npages;
		npages += hd_pages_for(bytes[i]);
	}
	err = hd_extent_alloc(&r->ext, hm, npages, 1);
	if (err)
		return err;
	r->dbrec = hd_extent_ptr(&r->ext, 0);
	r->dbrec_pa = hd_extent_pa(&r->ext, 0);
	for (unsigned i = 0; i < n && i < HD_RINGS_MAX; i++) {
		r->ring[i] = hd_extent_ptr(&r->ext, first[i]);
		r->ring_pa[i] = hd_extent_pa(&r->ext, first[i]);
	}
	return 0;
}
