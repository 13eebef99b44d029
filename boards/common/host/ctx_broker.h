/* SPDX-License-Identifier: MIT */
/*
 * The context broker's bookkeeping, shared by the boards' trusted host
 * tools (snic-emu's broker, boards/emu/broker.c; the QEMU NIC's host
 * agent, boards/qemu-virt/agent/): the Unix sockets <name>.sock and
 * <name>.admin.sock, one connection per context, the BAR slots and the
 * per-process segments of host memory they hold, the limit per process.
 * Identity comes from the kernel (SO_PEERCRED) and a context's death is
 * its socket's close.  Protocol: hostif.h "Host isolation".
 *
 * What a board does differently is its back end (struct cb_ops): how a
 * slot's and a segment's descriptors are made and taken back, and how the
 * firmware hears of grants and deaths (emu: a call into the firmware in
 * its own process; qemu: the control page's mailbox).
 */
#ifndef SNIC_CTX_BROKER_H
#define SNIC_CTX_BROKER_H

#include "users.h"
#include <stdint.h>

#include "snic/hostif.h"

struct peer_id;

#define CB_MAX_NICS 8

struct cb_ops {
	/* The descriptor of NIC nic's slot `slot` for a new context (mapped
	 * by the process at offset 0, SNIC_CTX_SLOT_SIZE bytes), or -1. */
	int (*slot_open)(void *be, unsigned nic, unsigned slot);
	/* The context in that slot ended (after ctx_dead): its descriptor
	 * must reach nothing of the slot's next owner. */
	void (*slot_close)(void *be, unsigned nic, unsigned slot, int fd);
	/* Segment k's descriptor with fresh zero pages, or -1; its last
	 * context ended. */
	int (*seg_open)(void *be, unsigned k);
	void (*seg_close)(void *be, unsigned k, int fd);
	/* The firmware: slot opened for pid with pages [first, first + n) of
	 * the segment area (snic_nic_ctx_grant; 0 or -1), the context ended
	 * (snic_nic_ctx_dead). */
	int (*grant)(void *be, unsigned nic, unsigned slot, uint32_t pid,
		     uint32_t first_page, uint32_t npages);
	void (*dead)(void *be, unsigned nic, unsigned slot);
	/* SNIC_ISO_DM_MAP from the context in `slot` (q: its request):
	 * 0 with *n descriptors in fds (first page in *first), or an errno.
	 * NULL: refused with EOPNOTSUPP. */
	int (*dm_map)(void *be, unsigned nic, unsigned slot,
		      const struct snic_iso_ctx *q, int *fds, unsigned *n,
		      uint64_t *first);
	/* 1 when slot `slot` / segment k must not be handed out now (an
	 * old holder may still reach it); may be NULL (never). */
	int (*slot_busy)(void *be, unsigned nic, unsigned slot);
	int (*seg_busy)(void *be, unsigned k);
	/* Between polls (e.g. cutting freed DM pages); may be NULL. */
	void (*housekeep)(void *be, unsigned nic);
	/* The process behind a new connection, 0 or an errno; NULL: the
	 * kernel's word (peer_id_of).  A unit test fakes identities here. */
	int (*identify)(void *be, int fd, struct peer_id *id);
};

struct cb_nic {
	const char *name;
	int bar_fd;     /* the BAR file: its slot copies are claimed there */
	int stats_fd;   /* handed to administrators; -1: no admin socket */
	uint64_t stats_len;
};

struct cb_config {
	const char *prog;       /* for messages: "snic-emu"               */
	const char *run_dir;
	const struct cb_nic *nics;
	unsigned nnics;
	const struct cb_ops *ops;
	void *be;
	uint64_t seg_base;      /* pa of segment 0                         */
	uint64_t seg_len;
	unsigned nseg;          /* at most SNIC_MAX_CTX                    */
	long users;             /* who besides us may connect (users.h:
				 * SNIC_USERS_NONE = 0, the zero value, _ALL
				 * or _GROUP(gid)): then
				 * SNIC_BROKER_CTX_PER_UID contexts a uid */
};

/* Listen on <run_dir>/<name>.sock (and .admin.sock with a stats_fd) for
 * each NIC.  0 or -1 (said on stderr). */
int cb_init(const struct cb_config *cfg);
/* Ends first (POLLHUP/EOF: dead, then the slot and segment back), then
 * requests, new contexts, administrators; the file's slot copies kept
 * OPEN with their owners' pids.  Non-blocking. */
void cb_poll(void);
/* 1 when slot `slot` of NIC `nic` is held by a connection. */
int cb_owns(unsigned nic, unsigned slot);
/* End now every context that holds NIC nic's slot `slot` (slot >= 0) or
 * segment `seg` (seg >= 0), as if its socket had closed: the back end
 * found that memory reached by somebody else.  How many ended. */
unsigned cb_end_holders(unsigned nic, int slot, int seg);
/* The descriptors cb_poll waits on (listening and connected sockets), for
 * a board that sleeps in poll(): up to max, returns how many. */
unsigned cb_fds(int *fds, unsigned max);
/* End every context, remove the sockets, print the counters. */
void cb_fini(void);

/* Our mapping of NIC nic's BAR file (its first SNIC_BAR_STATS_OFF bytes,
 * the slot copies), NULL before cb_init: a board that guards the file
 * against truncation needs it. */
const void *cb_file_map(unsigned nic);

#endif /* SNIC_CTX_BROKER_H */
