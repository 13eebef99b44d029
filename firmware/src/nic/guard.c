/* SPDX-License-Identifier: MIT */
/*
 * The BAR words every host process can write (the BAR file is every
 * process's of the user to open, hostif.h) but only the firmware may
 * decide: the header (fw_state; names, sizes and addresses others read),
 * and, for each open context, its slot's state and owner pid.  Once per
 * heartbeat they are put back from the firmware's own copies, so a process
 * that writes SNIC_FW_DOWN, FREE or another pid there cannot make other
 * processes' commands fail or get their contexts reclaimed; SNIC_CTX_ORPHAN
 * is honoured only on boards that cannot see host processes themselves
 * (cfg.board_reaps == 0: no broker).  64 slots every 10 ms, whatever the
 * load.
 */
#include "nic/top.h"

static void guard_slot(struct snic_nic *nic, unsigned c)
{
	struct snic_ctx_slot *s = core_ctx_slot(&nic->core, c);
	uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);

	if (st == SNIC_CTX_ORPHAN && !nic->core.cfg.board_reaps) {
		snic_nic_ctx_dead(nic, c);
		return;
	}
	if (!nic->core.ctx_open[c])
		return;
	if (st != SNIC_CTX_OPEN) {
		CNT_INC(&nic->core, bar_restored);
		atomic_store_explicit(&s->state, SNIC_CTX_OPEN, memory_order_release);
	}
	if (atomic_load_explicit(&s->db_cores, memory_order_relaxed) !=
	    snic_nic_ncores(nic)) {
		CNT_INC(&nic->core, bar_restored);
		atomic_store_explicit(&s->db_cores, snic_nic_ncores(nic),
				      memory_order_relaxed);
	}
	if (atomic_load_explicit(&s->owner_pid, memory_order_relaxed) !=
	    nic->core.ctx_pid[c]) {
		CNT_INC(&nic->core, bar_restored);
		atomic_store_explicit(&s->owner_pid, nic->core.ctx_pid[c],
				      memory_order_relaxed);
	}
}

/* The BAR file lost pages (a process truncated it and its owner grew it
 * back with zeros: hal/posix/file_guard.c tells the board, which calls
 * this; or the header's magic is gone, seen below): the header's words
 * from our configuration again, and every open context's mailbox and
 * doorbell page looked at once, for the command and doorbell bits the
 * NIC page lost with it. */
void snic_nic_bar_lost(struct snic_nic *nic)
{
	struct snic_doorbells *db = nic->core.db;
	uint64_t open = 0;

	CNT_INC(&nic->core, bar_restored);
	bar_header_write(nic);
	for (unsigned c = 0; c < SNIC_MAX_CTX; c++)
		if (nic->core.ctx_open[c])
			open |= 1ull << c;
	atomic_fetch_or_explicit(&db->cmd_bits, open, memory_order_relaxed);
	atomic_fetch_or_explicit(&db->ctx_bits, open, memory_order_relaxed);
	atomic_fetch_or_explicit(&db->summary, SNIC_DB_SUMMARY_CMD |
				 SNIC_DB_SUMMARY_CTX, memory_order_release);
}

void bar_guard(struct snic_nic *nic)
{
	if (nic->core.hdr->magic != SNIC_HOSTIF_MAGIC)
		snic_nic_bar_lost(nic);
	else if (!bar_header_ok(nic)) {
		/* a process rewrote a name, size or address others read */
		CNT_INC(&nic->core, bar_restored);
		bar_header_write(nic);
	}
	if (atomic_load_explicit(&nic->core.hdr->fw_state, memory_order_relaxed) !=
	    SNIC_FW_UP) {
		CNT_INC(&nic->core, bar_restored);
		atomic_store_explicit(&nic->core.hdr->fw_state, SNIC_FW_UP,
				      memory_order_release);
	}
	/* one word, put back alone: a whole header rewrite clears magic for
	 * an instant, and a process rewriting fw_pid again and again would
	 * make other processes' opens see no NIC then */
	if (atomic_load_explicit(&nic->core.hdr->fw_pid, memory_order_relaxed) !=
	    nic->core.cfg.fw_pid) {
		CNT_INC(&nic->core, bar_restored);
		atomic_store_explicit(&nic->core.hdr->fw_pid, nic->core.cfg.fw_pid,
				      memory_order_relaxed);
	}
	for (unsigned c = 0; c < SNIC_MAX_CTX; c++)
		guard_slot(nic, c);
}
