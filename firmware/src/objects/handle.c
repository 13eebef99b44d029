/* SPDX-License-Identifier: MIT */
/*
 * Handles of the fixed pools (PD, CQ, SRQ, QP): a slot index and the
 * slot's generation (objects.h, handle_make), checked on every lookup so
 * a stale handle of a freed and re-used slot finds nothing.  Each object
 * begins with struct snic_obj; `size` is the pool's element size.
 */
#include <string.h>

#include "objects/objects.h"

static struct snic_obj *slot(const void *pool, size_t size, uint32_t i)
{
	return (struct snic_obj *)((uintptr_t)pool + (size_t)i * size);
}

/* The live object of `handle`, owned by ctx; NULL otherwise.  *idx (when
 * not NULL) gets its slot. */
void *obj_lookup(void *pool, size_t size, uint32_t n, unsigned ctx,
		 uint32_t handle, uint32_t *idx)
{
	uint32_t i = handle_idx(handle);
	struct snic_obj *o;

	if (i >= n)
		return NULL;
	o = slot(pool, size, i);
	if (!o->in_use || o->ctx != ctx || handle_make(o->gen, i) != handle)
		return NULL;
	if (idx)
		*idx = i;
	return o;
}

/* The first free slot, or n when the pool is full. */
uint32_t obj_free_slot(const void *pool, size_t size, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && slot(pool, size, i)->in_use; i++)
		;
	return i;
}

/* Make the free object o (size bytes) a new one of ctx: zeroed, in use,
 * the next generation (so its handle differs from the last one). */
void obj_claim(void *o, size_t size, unsigned ctx)
{
	struct snic_obj *h = o;
	uint16_t gen = handle_next_gen(h->gen);

	memset(o, 0, size);
	h->in_use = true;
	h->ctx = (uint8_t)ctx;
	h->gen = gen;
}

uint32_t obj_handle(const struct snic_obj *o, uint32_t idx)
{
	return handle_make(o->gen, idx);
}

/* Destroy: NOENT for no object, BUSY while others use it (ibv_destroy_*,
 * ibv_dealloc_pd: EBUSY). */
int obj_release(struct snic_obj *o)
{
	if (!o)
		return SNIC_ST_NOENT;
	if (o->refs)
		return SNIC_ST_BUSY;
	o->in_use = false;
	return SNIC_ST_OK;
}
