/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the command mailbox of a context slot, the futex
 * helpers and the doorbell kick.
 *
 * Commands go through the slot's mailbox one at a time, serialised by a
 * per-context mutex: fill the mailbox, store-release cmd_seq, set the
 * slot's cmd bit and the summary bit, kick, wait for cmd_done.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

/* How long a command may wait for its answer.  A fixed 5 s once expired
 * on a live NIC (a 38 MiB REG_MR at load ~20), so, as the broker client
 * does (broker.c), we wait while the NIC lives: up to CMD_WAIT_MAX_NS
 * while its server holds the BAR file's lock (liveness.c), or, where the
 * lock cannot tell, while its heartbeat moves at least every
 * CMD_STALL_NS; a dead NIC (lock free; or, not knowing, fw_state DOWN
 * with a still heartbeat) ends the wait at once (EIO).  Not fw_pid: any
 * process of the user may write it (a live pid there kept a dead NIC's
 * commands waiting 60 s, a dead one failed a live NIC's). */
#define CMD_WAIT_MAX_NS  (60ll * 1000 * 1000 * 1000)
#define CMD_STALL_NS     (5ll * 1000 * 1000 * 1000)
/* The wait for an answer: spin CMD_SPIN_NS (an awake NIC on another core
 * answers a command in 1-5 us), then sched_yield until CMD_YIELD_NS (a NIC
 * thread waiting for our core runs at once), then futex sleeps.  It spun
 * 4,000 pauses (~100 us) before: with the NIC's thread on the same core
 * every command cost those ~100 us of spinning, ~120 us in all. */
#define CMD_SPIN_NS      5000
#define CMD_YIELD_NS     50000
/* ... unless the NIC's thread waits for our CPU: then every microsecond
 * spun delays it.  Traced (clock_gettime at the host's post and answer
 * and at the firmware's cmd_one, perf sched; 4 KiB first reg+dereg pairs,
 * load 5-9): with the two on one CPU, 7-8 us from the kick to the
 * firmware's first look at a command, of a 10-13 us round trip; on two
 * CPUs 1.6-3 us in all.  So a wait whose answer was there right after a
 * sched_yield that ran another thread for a firmware pass's while (over
 * CMD_SWITCH_NS, under CMD_SWITCH_MAX_NS: longer is some other task's time
 * slice, which tells nothing) marks the context (cmd_fw_here) and the next
 * wait yields at once; an answer seen while spinning, or after yields that
 * came straight back, clears it.  Not the doorbell summary as the sign of
 * the firmware's pass: a broker's context (the usual case) rings no NIC
 * page. */
#define CMD_SWITCH_NS      2000
#define CMD_SWITCH_MAX_NS 30000

/* ------------------------------------------------------------------ */
/* Futex and kick.                                                      */

int hd_futex_wait(_Atomic uint32_t *addr, uint32_t val, long timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns > 0) {
		ts.tv_sec = timeout_ns / 1000000000l;
		ts.tv_nsec = timeout_ns % 1000000000l;
		tsp = &ts;
	}
	/* Not FUTEX_PRIVATE_FLAG: the word lives in a shared file mapping
	 * and the waker is another process. */
	return (int)syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, tsp,
			    NULL, 0);
}

void hd_futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* How long a read-only kick goes on waking (hd_kick): past the
 * firmware's 1 ms sleep bound (boards/emu/main.c SLEEP_NS), after which
 * it looks at the doorbells by itself; only a NIC that died asleep (its
 * fw_idle left set) while the liveness lock cannot tell makes a post wait
 * it out. */
#define KICK_RO_NS (1500ll * 1000)
/* A wake that reached nobody with fw_idle set: sched_yield this many
 * times (a firmware on another core between its last scan and its
 * FUTEX_WAIT gets there within microseconds), then sleep KICK_RO_NAP_NS
 * between wakes.  A firmware that sleeps where our wake cannot reach it
 * (snic-emu without futex_waitv waits on its first NIC's kick only, up to
 * 200 us) then costs a few wakes, not 200 us of a core. */
#define KICK_RO_YIELDS 8
#define KICK_RO_NAP_NS (50l * 1000)

/* FUTEX_WAKE until it wakes a sleeper or fw_idle is clear.  A sleeper
 * woken looks at the doorbells; fw_idle clear means the firmware is
 * awake, and it scans once more after setting fw_idle before it sleeps
 * again, after our doorbell (seq_cst: doorbell, then our fw_idle load).
 * Woken nobody with fw_idle set: the firmware is between that last scan
 * (which may have missed our doorbell) and its sleep, in a pass between
 * two sleeps, asleep out of our reach, or dead.  Dead (its liveness lock
 * free, liveness.c): nothing to wake, return.  Else yield, then nap, and
 * wake again. */
static void kick_ro(const struct hd_context *ctx)
{
	struct snic_bar_hdr *hdr = ctx->hdr;
	const struct timespec nap = { 0, KICK_RO_NAP_NS };
	int64_t t, end = 0;

	for (unsigned i = 0;; i++) {
		if (syscall(SYS_futex, (uint32_t *)&hdr->kick, FUTEX_WAKE,
			    INT_MAX, NULL, NULL, 0) != 0 ||
		    !atomic_load_explicit(&hdr->fw_idle, memory_order_seq_cst))
			return;
		t = now_ns();
		if (!end) {
			if (hd_owner_alive(ctx->bar_fd) == 0)
				return;
			end = t + KICK_RO_NS;
		} else if (t >= end) {
			return;
		}
		if (i < KICK_RO_YIELDS)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
}

/*
 * After ringing a doorbell: wake the firmware if it sleeps.  The firmware
 * sets fw_idle, reads `kick`, re-reads the doorbell summary, then sleeps
 * while `kick` holds what it read; the host sets the summary bit (seq_cst
 * RMW), then reads fw_idle (seq_cst).  One of the two sees the other's
 * store, so a doorbell is never missed: the host bumps `kick` and wakes.
 * With the BAR file read-only to us (a --users member) we cannot bump
 * `kick`, only wake its sleepers (FUTEX_WAKE needs no write access), and
 * a wake that came between the firmware's last scan and its sleep was
 * lost: the firmware slept its 1 ms out.  So a member wakes until the
 * wake lands (kick_ro; tests/hostdrv/kick_window.c).
 */
void hd_kick_idle(struct hd_context *ctx)
{
	struct snic_bar_hdr *hdr = ctx->hdr;

	if (ctx->bar_ro) {
		kick_ro(ctx);
		return;
	}
	atomic_fetch_add_explicit(&hdr->kick, 1, memory_order_seq_cst);
	hd_futex_wake(&hdr->kick);
}

/* ------------------------------------------------------------------ */
/* Commands.                                                            */

static const char *const op_names[SNIC_CMD_COUNT] = {
	[SNIC_CMD_NOP] = "NOP",
	[SNIC_CMD_CTX_OPEN] = "CTX_OPEN",
	[SNIC_CMD_CTX_CLOSE] = "CTX_CLOSE",
	[SNIC_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
	[SNIC_CMD_QUERY_PORT] = "QUERY_PORT",
	[SNIC_CMD_QUERY_GID] = "QUERY_GID",
	[SNIC_CMD_ALLOC_PD] = "ALLOC_PD",
	[SNIC_CMD_DEALLOC_PD] = "DEALLOC_PD",
	[SNIC_CMD_REG_MR] = "REG_MR",
	[SNIC_CMD_DEREG_MR] = "DEREG_MR",
	[SNIC_CMD_CREATE_CQ] = "CREATE_CQ",
	[SNIC_CMD_DESTROY_CQ] = "DESTROY_CQ",
	[SNIC_CMD_CREATE_QP] = "CREATE_QP",
	[SNIC_CMD_MODIFY_QP] = "MODIFY_QP",
	[SNIC_CMD_QUERY_QP] = "QUERY_QP",
	[SNIC_CMD_DESTROY_QP] = "DESTROY_QP",
	[SNIC_CMD_CREATE_SRQ] = "CREATE_SRQ",
	[SNIC_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
	[SNIC_CMD_QUERY_SRQ] = "QUERY_SRQ",
	[SNIC_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
};

static const char *op_name(uint16_t op)
{
	return (op < SNIC_CMD_COUNT && op_names[op]) ? op_names[op] : "?";
}

int hd_status_errno(uint32_t status)
{
	switch (status) {
	case SNIC_ST_OK: return 0;
	case SNIC_ST_INVAL: return EINVAL;
	case SNIC_ST_NOMEM: return ENOMEM;
	case SNIC_ST_BUSY: return EBUSY;
	case SNIC_ST_NOENT: return EINVAL;
	case SNIC_ST_NOTSUP: return EOPNOTSUPP;
	case SNIC_ST_PERM: return EACCES;
	case SNIC_ST_FAULT: return EFAULT;
	case SNIC_ST_BADOP: return ENOSYS;
	default: return EIO;
	}
}

/* fw_state reads DOWN and the lock cannot tell: believe it only if the
 * heartbeat stopped too.  Any process mapping the BAR can write fw_state,
 * and a live firmware puts it back at its next heartbeat
 * (firmware/src/nic/guard.c, every 10 ms). */
static int fw_state_down(struct snic_bar_hdr *hdr)
{
	uint64_t hb = atomic_load_explicit(&hdr->heartbeat, memory_order_relaxed);
	struct timespec ms = { 0, 1000 * 1000 };

	for (int i = 0; i < 30; i++) {
		if (atomic_load_explicit(&hdr->fw_state, memory_order_relaxed) ==
		    SNIC_FW_UP ||
		    atomic_load_explicit(&hdr->heartbeat, memory_order_relaxed) != hb)
			return 0;
		nanosleep(&ms, NULL);
	}
	return 1;
}

/* Is the firmware behind this BAR gone?  fw_state DOWN is what the
 * firmware writes as it stops (snic_nic_fini), but any process may write
 * it too: the lock decides whenever it can tell. */
int hd_fw_down(const struct hd_context *ctx, int check_owner)
{
	struct snic_bar_hdr *hdr = ctx->hdr;
	int up = atomic_load_explicit(&hdr->fw_state, memory_order_relaxed) ==
		 SNIC_FW_UP;
	int owner;

	if (up && !check_owner)
		return 0;
	owner = hd_owner_alive(ctx->bar_fd);
	if (owner >= 0)
		return !owner;
	return !up && fw_state_down(hdr);
}

/* Still worth waiting for after `waited` ns, the heartbeat last moved at
 * *hb_at (updated here)?  See CMD_WAIT_MAX_NS. */
static int nic_worth_waiting(struct hd_context *ctx, int64_t now,
			     int64_t waited, uint64_t *hb, int64_t *hb_at)
{
	uint64_t h = atomic_load_explicit(&ctx->hdr->heartbeat,
					  memory_order_relaxed);

	if (h != *hb) {
		*hb = h;
		*hb_at = now;
	}
	if (waited > CMD_WAIT_MAX_NS)
		return 0;
	return hd_owner_alive(ctx->bar_fd) == 1 || now - *hb_at <= CMD_STALL_NS;
}

static int wait_cmd_done(struct hd_context *ctx, uint32_t n)
{
	_Atomic uint32_t *done = &ctx->slot->cmd_done;
	int64_t start, hb_at;
	uint64_t hb;
	unsigned iter = 0;
	int64_t spin = ctx->cmd_fw_here ? 0 : CMD_SPIN_NS;
	int switched = 0;

	start = now_ns();
	for (unsigned i = 0;; i++) {
		int64_t spent;

		if (atomic_load_explicit(done, memory_order_acquire) == n) {
			ctx->cmd_fw_here = switched;
			return 0;
		}
		if (i & 31) {
			hd_cpu_relax();
			continue;
		}
		spent = now_ns() - start;
		if (spent >= CMD_YIELD_NS)
			break;
		if (spent >= spin) {
			int64_t t = now_ns();

			sched_yield();
			t = now_ns() - t;
			switched = t > CMD_SWITCH_NS && t < CMD_SWITCH_MAX_NS;
		}
	}
	start = hb_at = now_ns();
	hb = atomic_load_explicit(&ctx->hdr->heartbeat, memory_order_relaxed);
	for (;;) {
		uint32_t d = atomic_load_explicit(done, memory_order_acquire);
		int64_t now;

		if (d == n)
			return 0;
		if (hd_fw_down(ctx, (iter & 15) == 0))
			return EIO;
		now = now_ns();
		if (!nic_worth_waiting(ctx, now, now - start, &hb, &hb_at))
			return ETIMEDOUT;
		/* Cheap insurance against a lost wake-up. */
		if ((iter & 7) == 7)
			hd_kick(ctx);
		hd_futex_wait(done, d, HD_POLL_TIMEOUT_NS);
		iter++;
	}
}

int hd_cmd_raw(struct hd_context *ctx, uint16_t op, const void *in,
	       size_t in_len, void *out, size_t out_len, uint32_t *status)
{
	struct snic_ctx_slot *slot = ctx->slot;
	struct snic_cmd *c = &slot->cmd;
	uint32_t n;
	int err;

	if (in_len > SNIC_CMD_DATA_SIZE || out_len > SNIC_CMD_DATA_SIZE)
		return EINVAL;
	pthread_mutex_lock(&ctx->cmd_lock);
	if (atomic_load(&ctx->dead) || hd_fw_down(ctx, 0)) {
		err = EIO;
		goto out;
	}
	memset(c->in, 0, sizeof(c->in));
	if (in_len)
		memcpy(c->in, in, in_len);
	c->opcode = op;
	c->status = SNIC_ST_BADOP;
	n = ++ctx->cmd_seq;
	if (n == atomic_load_explicit(&slot->cmd_done, memory_order_relaxed))
		n = ++ctx->cmd_seq;
	if (ctx->broker_fd >= 0) {
		/* the firmware looks at our mailbox every pass; seq_cst:
		 * the idle handshake reads fw_idle after it */
		atomic_store_explicit(&slot->cmd_seq, n, memory_order_seq_cst);
	} else {
		atomic_store_explicit(&slot->cmd_seq, n, memory_order_release);
		atomic_fetch_or_explicit(&ctx->db->cmd_bits,
					 1ull << ctx->slot_idx,
					 memory_order_release);
		atomic_fetch_or_explicit(&ctx->db->summary, SNIC_DB_SUMMARY_CMD,
					 memory_order_seq_cst);
	}
	hd_kick(ctx);

	err = wait_cmd_done(ctx, n);
	if (err) {
		/* The mailbox is in an unknown state now: the firmware may
		 * still answer this command later.  Give up on the context. */
		atomic_store(&ctx->dead, 1);
		hd_dbg("%s: %s (slot %u seq %u)\n", op_name(op),
		       err == EIO ? "firmware down" : "no answer",
		       ctx->slot_idx, n);
		goto out;
	}
	*status = c->status;
	if (out_len)
		memcpy(out, c->out, out_len);
	hd_dbg("%s -> status %u\n", op_name(op), *status);
out:
	pthread_mutex_unlock(&ctx->cmd_lock);
	return err;
}

int hd_cmd(struct hd_context *ctx, uint16_t op, const void *in,
	   size_t in_len, void *out, size_t out_len)
{
	uint32_t status;
	int err = hd_cmd_raw(ctx, op, in, in_len, out, out_len, &status);

	return err ? err : hd_status_errno(status);
}

void *hd_cmd_new(struct hd_context *ctx, size_t size, uint16_t op,
		 const void *in, size_t in_len, void *out, size_t out_len)
{
	void *obj = calloc(1, size);
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = hd_cmd(ctx, op, in, in_len, out, out_len);
	if (err) {
		free(obj);
		errno = err;
		return NULL;
	}
	return obj;
}

