/* SPDX-License-Identifier: MIT */
/*
 * The broker: the emulator's trusted half of host isolation (hostif.h
 * "Host isolation").  Verbs processes get their contexts from it over a
 * Unix socket per NIC; each gets its own BAR slot (mailbox, event queue,
 * doorbell page) and its own segment of host memory, then its device
 * memory's pages on request, and the socket's close is the context's
 * death.  A process gets at most SNIC_BROKER_CTX_PER_PID contexts per
 * NIC.  The NIC's statistics live in a memfd handed only to the
 * administrator (<name>.admin.sock).  Protocol: hostif.h "Host
 * isolation".
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

/* Listen on <run_dir>/<name>.sock and <name>.admin.sock for each NIC
 * (after snic_nic_init: the statistics area moves into a memfd with what
 * the firmware wrote there); segments of seg_len bytes come from hm's
 * area (snic_hostmem_add_area); the sockets shared with users (users.h,
 * the admin sockets never).  0 or -1. */
int broker_init(const char *run_dir, const struct broker_nic *nics,
		unsigned n, struct snic_hostmem *hm, uint64_t seg_len,
		long users);
/* Accept new contexts, answer DM requests, end those whose socket closed,
 * cut DM pages freed (housekeeping, between firmware polls). */
void broker_poll(void);
/* 1 when slot `slot` of NIC `nic` is the broker's (not to be reaped by
 * pid). */
int broker_owns(unsigned nic, unsigned slot);
/* End every context, remove the sockets. */
void broker_fini(void);

#endif /* SNIC_EMU_BROKER_H */
