/* SPDX-License-Identifier: MIT */
/*
 * Memory that one host process alone shares with the NIC (the emu's
 * broker, boards/emu/broker.c): a sealed memfd mapped into the NIC's view
 * at a fixed place, its descriptor handed to that process and nobody
 * else.  Used for a context's pages of host memory (a segment of the
 * window after the shared file) and for its BAR context slot (mapped over
 * the BAR file's slot in the NIC's view only).
 */
#ifndef SNIC_HAL_POSIX_SEGMENT_H
#define SNIC_HAL_POSIX_SEGMENT_H

#include <stdint.h>

#include "hal_posix.h"

/* Reserve `area` bytes of window after the shared file (zero pages, no
 * memory committed), for segments.  0 or -1. */
int snic_hostmem_add_area(struct snic_hostmem *hm, uint64_t area);

/* A sealed (no shrink, no grow) memfd of len bytes mapped over
 * [at, at + len) of the caller's address space.  Returns the fd, or -1. */
int snic_private_map(void *at, uint64_t len, const char *what);

/* Undo snic_private_map: fd closed; the range maps the BAR file again at
 * file_off (file_fd >= 0) or fresh zero pages (file_fd < 0). */
void snic_private_unmap(void *at, uint64_t len, int fd, int file_fd,
			uint64_t file_off);

#endif /* SNIC_HAL_POSIX_SEGMENT_H */
