/* SPDX-License-Identifier: MIT */
/* Host-memory window: bounds-checked copies and 64-bit atomics. */
#include "hostwin.h"

#include <string.h>

static inline int in_window(const struct snic_hostwin *w, uint64_t pa,
			    uint64_t len)
{
	return pa <= w->size && len <= w->size - pa;
}

int snic_hostwin_dma_read(void *hal, uint64_t pa, void *dst, uint32_t len)
{
	const struct snic_hostwin *w = hal;

	if (!in_window(w, pa, len))
		return -1;
	memcpy(dst, w->base + pa, len);
	return 0;
}

/* A producer index the host stored with release: LDAR pairs with it. */
int snic_hostwin_dma_load_acquire32(void *hal, uint64_t pa, uint32_t *val)
{
	const struct snic_hostwin *w = hal;

	if ((pa & 3u) || !in_window(w, pa, 4))
		return -1;
	*val = __atomic_load_n((const uint32_t *)(const void *)(w->base + pa),
			       __ATOMIC_ACQUIRE);
	return 0;
}

int snic_hostwin_dma_write(void *hal, uint64_t pa, const void *src,
			   uint32_t len)
{
	const struct snic_hostwin *w = hal;

	if (!in_window(w, pa, len))
		return -1;
	memcpy(w->base + pa, src, len);
	return 0;
}

/* The window is shared with host CPUs doing their own atomics on the same
 * words (the posix HAL uses the same builtins): sequentially consistent
 * read-modify-writes. */
int snic_hostwin_cmp_swap(void *hal, uint64_t pa, uint64_t cmp,
			  uint64_t swap, uint64_t *old)
{
	const struct snic_hostwin *w = hal;
	uint64_t *p;

	if ((pa & 7) || !in_window(w, pa, 8))
		return -1;
	p = (uint64_t *)(void *)(w->base + pa);
	__atomic_compare_exchange_n(p, &cmp, swap, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	*old = cmp;             /* the prior value, whether it matched or not */
	return 0;
}

int snic_hostwin_fetch_add(void *hal, uint64_t pa, uint64_t add,
			   uint64_t *old)
{
	const struct snic_hostwin *w = hal;
	uint64_t *p;

	if ((pa & 7) || !in_window(w, pa, 8))
		return -1;
	p = (uint64_t *)(void *)(w->base + pa);
	*old = __atomic_fetch_add(p, add, __ATOMIC_SEQ_CST);
	return 0;
}
