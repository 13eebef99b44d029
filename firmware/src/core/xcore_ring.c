/* SPDX-License-Identifier: MIT */
/*
 * A single-producer/single-consumer ring of fixed-size slots between two
 * cores (core/xcore.h says the ordering).  Bursts: one acquire and one
 * release per call, not per element.
 */
#include <string.h>

#include "core/xcore.h"

uint64_t xc_ring_size(uint32_t slots, uint32_t esize)
{
	return (sizeof(struct snic_xc_ring) + (uint64_t)slots * esize + 63) &
	       ~(uint64_t)63;
}

/* slots: a power of two.  mem: xc_ring_size bytes, 64-byte aligned. */
struct snic_xc_ring *xc_ring_init(void *mem, uint32_t slots, uint32_t esize)
{
	struct snic_xc_ring *r = mem;

	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->mask = slots - 1;
	r->esize = esize;
	return r;
}

/* Up to n elements in; returns how many fitted (the producer's side). */
uint32_t xc_ring_push(struct snic_xc_ring *r, const void *elems, uint32_t n)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t room = r->mask + 1 - (t - h);
	const uint8_t *src = elems;

	if (n > room)
		n = room;
	for (uint32_t i = 0; i < n; i++)
		memcpy(&r->slot[(size_t)((t + i) & r->mask) * r->esize],
		       src + (size_t)i * r->esize, r->esize);
	if (n)
		atomic_store_explicit(&r->tail, t + n, memory_order_release);
	return n;
}

/* Up to n elements out, oldest first (the consumer's side). */
uint32_t xc_ring_pop(struct snic_xc_ring *r, void *elems, uint32_t n)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint8_t *dst = elems;

	if (n > t - h)
		n = t - h;
	for (uint32_t i = 0; i < n; i++)
		memcpy(dst + (size_t)i * r->esize,
		       &r->slot[(size_t)((h + i) & r->mask) * r->esize],
		       r->esize);
	if (n)
		atomic_store_explicit(&r->head, h + n, memory_order_release);
	return n;
}

/* Elements waiting (either side; a snapshot). */
uint32_t xc_ring_count(const struct snic_xc_ring *r)
{
	return atomic_load_explicit(&((struct snic_xc_ring *)r)->tail,
				    memory_order_acquire) -
	       atomic_load_explicit(&((struct snic_xc_ring *)r)->head,
				    memory_order_acquire);
}
