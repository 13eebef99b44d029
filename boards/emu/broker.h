/* SPDX-License-Identifier: MIT */
/*
 * The broker: the emulator's trusted half of host isolation (hostif.h
 * "Host isolation").  Verbs processes get their contexts from it over a
 * Unix socket per NIC; each gets its own BAR slot and its own segment of
 * host memory, and the socket's close is the context's death.
 */
#ifndef SNIC_EMU_BROKER_H
#define SNIC_EMU_BROKER_H

#include <stdint.h>

#include "hal_posix.h"

struct snic_nic;

struct broker_nic {
	const char *name;
	struct snic_nic *fw;
	uint8_t *bar;           /* the NIC's view of its BAR                 */
	int bar_fd;             /* the BAR file (to map a slot back)        */
};

/* Listen on <run_dir>/<name>.sock for each NIC; segments of seg_len
 * bytes come from hm's area (snic_hostmem_add_area).  0 or -1. */
int broker_init(const char *run_dir, const struct broker_nic *nics,
		unsigned n, struct snic_hostmem *hm, uint64_t seg_len);
/* Accept new contexts, end those whose socket closed (housekeeping). */
void broker_poll(void);
/* 1 when slot `slot` of NIC `nic` is the broker's (not to be reaped by
 * pid). */
int broker_owns(unsigned nic, unsigned slot);
/* End every context, remove the sockets. */
void broker_fini(void);

#endif /* SNIC_EMU_BROKER_H */
