/* SPDX-License-Identifier: MIT */
/*
 * The idle handshake's window for a --users member (host-driver/core/
 * command.c hd_kick with a read-only BAR header): the member can only
 * FUTEX_WAKE the firmware's `kick` word, not change it.  Here a thread
 * plays the emu firmware's sleep (boards/emu/main.c run()): fw_idle = 1,
 * read kick, a last doorbell scan that finds nothing; then the member
 * rings, and the firmware lingers 200 us before its FUTEX_WAIT (as when
 * descheduled, or scanning other NICs) while the member kicks.  The firmware must
 * be woken by the member (FUTEX_WAIT returns 0), not sleep its timeout
 * out (ETIMEDOUT: the wake was lost, a 1 ms stall in snic-emu).  Then
 * what such a kick costs when its wake cannot land: a dead NIC that left
 * fw_idle set (its liveness lock free) costs no wait at all, and a
 * firmware asleep out of the wake's reach (snic-emu without futex_waitv
 * waits on its first NIC's kick only, 200 us) costs a few yields, not a
 * yield loop on a core.  Linked with the host driver's objects: the
 * hd_kick under test is the driver's, and so is its sched_yield this
 * file's (counted).
 *
 *   kick_window        (exit 0: all passed)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "live_lock.h"
#include "../check.h"

enum { ROUNDS = 40, LINGER_US = 200, SLEEP_MS = 50 };
/* A kick that returned sooner must have woken the sleeper (or seen
 * fw_idle clear, which here comes only after the sleep); later, it may
 * have hit the driver's 1.5 ms bound (KICK_RO_NS) while this thread was
 * descheduled on a loaded machine, and the sleeper may sleep on. */
#define KICK_SURE_NS 1400000ull

static uint64_t kick_ns[ROUNDS + 1]; /* how long each round's hd_kick took */

/* The host driver's sched_yield calls land here (its objects are linked
 * into this program): counted, then done. */
static _Atomic unsigned yields;

int sched_yield(void)
{
	atomic_fetch_add(&yields, 1);
	return (int)syscall(SYS_sched_yield);
}

static struct snic_bar_hdr hdr;
static _Atomic uint32_t doorbell, ring; /* ring: the round to ring in */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One firmware sleep: 1 if the member's kick woke it, 0 if it slept its
 * timeout out, -1 if the last scan saw the doorbell (no window hit). */
static int fw_sleep(uint32_t round)
{
	struct timespec to = { 0, SLEEP_MS * 1000000L };
	uint32_t expect;
	uint64_t t;
	long r;

	atomic_store(&hdr.fw_idle, 1);
	expect = atomic_load(&hdr.kick);
	if (atomic_load(&doorbell)) /* the last scan */
		return -1;
	atomic_store(&ring, round); /* the member rings now ... */
	while (!atomic_load(&doorbell))
		;
	/* ... and kicks while we linger */
	for (t = now_ns(); now_ns() - t < LINGER_US * 1000ull;)
		;
	r = syscall(SYS_futex, (uint32_t *)&hdr.kick, FUTEX_WAIT, expect,
		    &to, NULL, 0);
	if (r == 0 || errno == EAGAIN) /* woken, or kick moved */
		return 1;
	return errno == ETIMEDOUT ? 0 : -1;
}

static void *member(void *arg)
{
	struct hd_context *ctx = arg;

	for (uint32_t i = 1; i <= ROUNDS; i++) {
		while (atomic_load(&ring) != i)
			;
		uint64_t t0 = now_ns();

		atomic_store(&doorbell, 1); /* seq_cst, as the driver's */
		hd_kick(ctx);
		kick_ns[i] = now_ns() - t0;
	}
	return NULL;
}

/* The driver's yields before its naps (command.c KICK_RO_YIELDS). */
enum { MAX_YIELDS = 8, FAR_ROUNDS = 20, FAR_SLEEP_US = 200 };
static _Atomic uint32_t far_word, far_kicked;

/* A firmware asleep where the member's wake cannot reach it: fw_idle set,
 * FAR_SLEEP_US on another word, then its pass finds the doorbell. */
static void *far_firmware(void *arg)
{
	struct timespec to = { 0, FAR_SLEEP_US * 1000L };

	(void)arg;
	for (uint32_t i = 1; i <= FAR_ROUNDS; i++) {
		atomic_store(&hdr.fw_idle, 1);
		atomic_store(&ring, i);
		syscall(SYS_futex, (uint32_t *)&far_word, FUTEX_WAIT, 0, &to,
			NULL, 0);
		atomic_store(&hdr.fw_idle, 0);
		while (atomic_load(&far_kicked) != i)
			;
	}
	return NULL;
}

/* The kicks of a member whose wakes land nowhere: the NIC dead (lock
 * free), then alive but asleep out of reach. */
static void kick_unheard(struct hd_context *ctx, int holder)
{
	char what[200];
	pthread_t th;
	unsigned y;

	atomic_store(&hdr.fw_idle, 1);
	atomic_store(&yields, 0);
	for (unsigned i = 0; i < FAR_ROUNDS; i++)
		hd_kick(ctx);
	y = atomic_load(&yields);
	snprintf(what, sizeof(what),
		 "a dead NIC asleep (fw_idle set, liveness lock free): %d "
		 "kicks return without waiting (%u yields)", FAR_ROUNDS, y);
	check(y == 0, what);

	if (holder < 0 || snic_live_lock(holder) != 0) {
		check(0, "the liveness lock of the fake BAR");
		return;
	}
	atomic_store(&ring, 0);
	atomic_store(&yields, 0);
	pthread_create(&th, NULL, far_firmware, NULL);
	for (uint32_t i = 1; i <= FAR_ROUNDS; i++) {
		while (atomic_load(&ring) != i)
			;
		hd_kick(ctx);
		atomic_store(&far_kicked, i);
	}
	pthread_join(th, NULL);
	y = atomic_load(&yields);
	snprintf(what, sizeof(what),
		 "a live firmware asleep out of the wake's reach for %d us: %d "
		 "kicks yield %u times (at most %d each; then they nap)",
		 FAR_SLEEP_US, FAR_ROUNDS, y, MAX_YIELDS);
	check(y <= (unsigned)MAX_YIELDS * FAR_ROUNDS, what);
}

int main(void)
{
	struct hd_context ctx;
	pthread_t th;
	int res[ROUNDS + 1], woken = 0, early_lost = 0, bar, holder = -1;
	char what[240], path[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.hdr = &hdr;
	ctx.bar_ro = 1; /* a --users member: kick is not ours to write */
	/* the fake BAR file, its liveness lock held by the "firmware"
	 * through a descriptor of its own (liveness.c) */
	bar = memfd_create("kick-window-bar", MFD_CLOEXEC);
	if (bar >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", bar);
		holder = open(path, O_RDWR | O_CLOEXEC);
	}
	ctx.bar_fd = bar;
	if (holder < 0 || snic_live_lock(holder) != 0) {
		check(0, "the liveness lock of the fake BAR (memfd)");
		return 1;
	}
	pthread_create(&th, NULL, member, &ctx);
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		int r = fw_sleep(i);

		res[i] = r;
		atomic_store(&hdr.fw_idle, 0); /* awake: the doorbell is seen */
		while (!atomic_load(&doorbell)) /* the member rang */
			;
		atomic_store(&doorbell, 0);
	}
	pthread_join(th, NULL);
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		woken += res[i] == 1;
		/* a kick that gave up early while the firmware slept on */
		early_lost += res[i] != 1 && kick_ns[i] < KICK_SURE_NS;
	}
	/* What the test means, counted on the firmware's side whatever the
	 * kicks took: the member's kicks inside the window wake it.  Before
	 * the fix every wake was lost (0 woken); on a loaded machine a kick
	 * may run into the driver's bound while descheduled and lose its
	 * round, so not all rounds are asked for. */
	snprintf(what, sizeof(what),
		 "a read-only member's kick inside the firmware's last %d us "
		 "before its sleep wakes it: %d of %d rounds woken (>= 3 "
		 "wanted)", LINGER_US, woken, ROUNDS);
	check(woken >= 3, what);
	/* And hd_kick's contract: it returns before its bound only once the
	 * firmware is awake.  Before the fix every kick returned at once
	 * and left the firmware asleep (40 such rounds). */
	snprintf(what, sizeof(what),
		 "no kick returns within %.1f ms while the firmware sleeps on: "
		 "%d did", KICK_SURE_NS / 1e6, early_lost);
	check(early_lost == 0, what);
	/* the NIC dies asleep: its lock goes with its descriptor */
	close(holder);
	holder = open(path, O_RDWR | O_CLOEXEC);
	kick_unheard(&ctx, holder);
	printf("%u passed, %u failed\n", passed, failed);
	return failed != 0;
}
