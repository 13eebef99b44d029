/* SPDX-License-Identifier: MIT */
/*
 * snic host driver, core: devices (device.c), contexts (context.c), the
 * command mailbox and doorbell kick (command.c), the event thread and
 * asynchronous events (event.c).  Nothing here is exported (the version
 * script exports ibv_* only); every name the host driver defines is hd_*,
 * every snic_* name is hostif.h's (the firmware contract).
 */
#ifndef HD_CORE_H
#define HD_CORE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include <snic/hostif.h>

#define hd_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define HD_DEFAULT_RUN_DIR "/dev/shm/snic"
/* poll_cq gives the core away after this many empty polls in a row */
#define HD_EMPTY_POLLS_YIELD 64

/* ------------------------------------------------------------------ */
/* Debug output (SNIC_DEBUG=1).                                         */

extern int hd_debug_level;
void hd_debug_init(void);
#define hd_dbg(...)                                                   \
	do {                                                          \
		if (hd_debug_level)                                   \
			fprintf(stderr, "snic: " __VA_ARGS__);        \
	} while (0)

/* ------------------------------------------------------------------ */
/* Truncated shared files (sigbus.c): a SIGBUS in a mapping of a watched
 * file waits for the NIC's process to grow it back, else (may_zero: the
 * BAR) the page becomes a private zero one, or (host memory) the process
 * ends as without the guard.  owner_locks: the NIC's server holds a lock
 * on the file for its life (hd_owner_alive ends the wait when it is gone). */

void hd_sigbus_watch(int fd, int owner_locks, int may_zero);
void hd_sigbus_unwatch(int fd);
unsigned long hd_sigbus_recovered(unsigned long *pages_replaced);

/* ------------------------------------------------------------------ */
/* Devices (device.c).                                                  */

struct hd_device {
	struct ibv_device ibdev;
	char bar_path[512];
	uint64_t node_guid;         /* host order                           */
	int index;                  /* stable per process: uverbsN          */
	struct hd_device *next;
};

static inline struct hd_device *to_hd_dev(struct ibv_device *d)
{
	return hd_container_of(d, struct hd_device, ibdev);
}

const char *hd_run_dir(void);
/* abi/strings.c: exported sysfs helpers, also used inside the driver. */
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
/* Process `pid` still owns a context slot in a BAR that uses the host
 * memory file `host_mem` (the firmware has not cleaned up after it yet). */
int hd_fw_holds_pid(const char *host_mem, uint32_t pid);
int hd_pid_alive(uint32_t pid);
/* getpid() without a system call, right in children of fork() too
 * (self_pid.c). */
pid_t hd_self_pid(void);
/* Does a live server hold the runtime file open on fd (our own open of
 * it) locked (liveness.c)?  1 alive, 0 gone, -1 cannot tell.  Nothing in
 * shared memory changes the answer.  Async-signal-safe. */
int hd_owner_alive(int fd);

/* ------------------------------------------------------------------ */
/* Contexts (context.c), commands (command.c), events (event.c).      */

struct hd_qp;
struct hd_cq;
struct hd_srq;
struct hd_obj;
struct hd_hostmem;
struct hd_extent;

/* An event queue read through an eventfd (evq.c); the owner's mutex
 * guards it.  Nodes are malloc'ed, with struct hd_evnode first. */
struct hd_evnode {
	struct hd_evnode *next;
};

struct hd_evq {
	int fd;                     /* eventfd, EFD_SEMAPHORE               */
	struct hd_evnode *head, *tail;
	unsigned skip;              /* fd counts owed to purged events      */
	unsigned len;               /* events queued                        */
};
/* Events an async queue or a completion channel holds for the
 * application at most: beyond, an event is dropped (the firmware's EQ holds SNIC_EQ_SIZE; a process that
 * never reads its async fd, or a BAR scribbled by another process, must
 * not grow our memory without bound). */
#define HD_EVQ_MAX 4096

/* Lock held.  The caller signals q->fd after unlocking. */
void hd_evq_push(struct hd_evq *q, struct hd_evnode *n);
/* Read one count from q->fd, then pop the next event: returned with *lock
 * held (the caller unlocks and frees it); NULL with errno when the read
 * fails (EAGAIN on a non-blocking fd). */
struct hd_evnode *hd_evq_pop(struct hd_evq *q, pthread_mutex_t *lock);
/* Lock held: free the events match() accepts; their counts are skipped. */
void hd_evq_purge(struct hd_evq *q,
		  int (*match)(const struct hd_evnode *n, const void *arg),
		  const void *arg);
/* Free every event (the queue's owner goes away). */
void hd_evq_drain(struct hd_evq *q);

struct hd_async_node {
	struct hd_evnode node;
	struct ibv_async_event ev;
};

struct hd_context;
/* A context from the NIC's broker (hostif.h "Host isolation"): slot,
 * segment and socket set in ctx.  ENOENT: the NIC has no broker (or
 * SNIC_NO_BROKER=1): use the shared files; another errno: refused. */
int hd_broker_open(struct hd_context *ctx, const char *name);
/* A DM's pages from the broker (a context of it only): mapped at *at,
 * *len bytes to munmap from the page start.  0 or an errno. */
int hd_broker_dm_map(struct hd_context *ctx, uint64_t offset, uint64_t length,
		     uint8_t **at, size_t *len);

struct hd_context {
	struct verbs_context vctx;  /* ibv_context is its last member       */
	struct hd_device *dev;
	int bar_fd;
	int bar_ro;             /* the BAR file is only readable to us (a NIC
				 * shared with other users): header mapped
				 * read-only, a broker's context only      */
	uint8_t *bar;
	struct snic_bar_hdr *hdr;
	struct snic_doorbells *db;
	struct snic_ctx_slot *slot;
	struct snic_ctx_doorbells *cdb; /* the slot's doorbell page: our QPs'  */
	uint32_t db_cores;          /* firmware cores (the slot's db_cores) */
	unsigned slot_idx;
	struct hd_hostmem *hm;
	/* the broker's socket (broker.c): open for the context's life, its
	 * close is the context's end; -1 without a broker */
	int broker_fd;
	uint32_t dm_seq;        /* the last SNIC_ISO_DM_MAP's, under cmd_lock */

	pthread_mutex_t cmd_lock;
	uint32_t cmd_seq;
	/* the last answer came right after a sched_yield that let another
	 * thread run: the NIC's thread shares our CPU (command.c), under
	 * cmd_lock */
	int cmd_fw_here;
	/* REG_MR/REREG_MR page lists (verbs/mr.c): a window buffer kept
	 * for the context's life (allocating one per command cost two
	 * allocator locks), used under pl_lock */
	pthread_mutex_t pl_lock;
	struct hd_extent *pl;
	_Atomic int dead;           /* firmware gone: commands fail with EIO */

	pthread_t evt_thread;
	int evt_started;
	_Atomic int stop;

	/* Objects: CQ list, QP table writers, async event queue. */
	pthread_mutex_t obj_lock;
	struct hd_obj *cq_list;     /* struct hd_cq                         */
	struct hd_obj *srq_list;    /* struct hd_srq                        */
	struct hd_qp *_Atomic qp_table[SNIC_MAX_QP];
	/* XRC SRQs by handle index: poll_cq frees their slots (verbs/xrc.c) */
	struct hd_srq *_Atomic xsrq_table[SNIC_MAX_SRQ];
	struct hd_evq aq;           /* async events (fd: context's async_fd) */

	struct snic_device_attr dattr;
};

static inline struct hd_context *to_hd_ctx(struct ibv_context *c)
{
	return hd_container_of(c, struct hd_context, vctx.context);
}

/* Run one command.  hd_cmd_raw returns 0 with the firmware's status in
 * *status, or an errno value when the command did not complete (EIO:
 * firmware down; ETIMEDOUT: no answer).  hd_cmd maps the status to an
 * errno value (0 = OK). */
int hd_cmd_raw(struct hd_context *ctx, uint16_t op, const void *in,
	       size_t in_len, void *out, size_t out_len, uint32_t *status);
int hd_cmd(struct hd_context *ctx, uint16_t op, const void *in,
	   size_t in_len, void *out, size_t out_len);
int hd_status_errno(uint32_t status);
/* A zeroed host-side object of size bytes for a command that creates the
 * firmware's one: NULL with errno set when either fails (nothing left). */
void *hd_cmd_new(struct hd_context *ctx, size_t size, uint16_t op,
		 const void *in, size_t in_len, void *out, size_t out_len);
/* After a doorbell or a command: wake the firmware if it sleeps.  The
 * look at fw_idle (seq_cst, the idle handshake of command.c) is in line:
 * every post makes it, and the firmware mostly is awake. */
void hd_kick_idle(struct hd_context *ctx);
static inline void hd_kick(struct hd_context *ctx)
{
	if (atomic_load_explicit(&ctx->hdr->fw_idle, memory_order_seq_cst))
		hd_kick_idle(ctx);
}
/* errno value meaning "the firmware is gone": destroy verbs then succeed
 * after releasing host resources, as rdma-core does for a disassociated
 * device. */
static inline int hd_fw_gone(int err)
{
	return err == EIO || err == ETIMEDOUT;
}
/* Is the firmware behind the context's BAR gone?  Its server's lock on
 * the BAR file decides (asked always with check_owner, else only when
 * fw_state reads DOWN); fw_state and a stopped heartbeat only where the
 * lock cannot tell. */
int hd_fw_down(const struct hd_context *ctx, int check_owner);
/* Open a BAR or host-memory file fit to trust (device.c); -1 with errno
 * EACCES for a planted one. */
int hd_open_runtime(const char *path, int flags);
/* 0 and the run directory's stat when we trust its owner (root, our uid,
 * SNIC_NIC_OWNER) and nobody else may write it; else -1 (errno EACCES,
 * said once on stderr), run_owner.c. */
struct stat;
int hd_run_dir_trusted(struct stat *dst);
/* The context's event thread (started by ibv_open_device). */
void *hd_event_thread(void *arg);
void hd_eventfd_signal(int fd);
/* Remove the queued (not yet read) async events of a CQ, QP or SRQ
 * being destroyed.  obj_lock held. */
void hd_async_purge(struct hd_context *ctx, struct hd_obj *o);

/* ------------------------------------------------------------------ */
/* Futex waits (the command wait, the event thread) time out after 1 ms. */
#define HD_POLL_TIMEOUT_NS (1000 * 1000)

/* Futex on a shared (non-private) word; timeout in ns, 0 = none. */
int hd_futex_wait(_Atomic uint32_t *addr, uint32_t val, long timeout_ns);
void hd_futex_wake(_Atomic uint32_t *addr);

static inline void hd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* ------------------------------------------------------------------ */
/* The spin locks of a CQ and of a work queue.  In line rather than
 * glibc's pthread_spin_lock behind the PLT: every post and every poll
 * takes one (tools/bench-host-instr.sh).  Test and test-and-set: a
 * waiter spins on a plain load, so the holder's line is not taken from
 * it by each try.  Acquire on taking, release on giving back. */

typedef struct {
	atomic_int held;
} hd_spinlock_t;

static inline void hd_spin_init(hd_spinlock_t *l)
{
	atomic_init(&l->held, 0);
}

static inline void hd_spin_lock(hd_spinlock_t *l)
{
	while (atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
		while (atomic_load_explicit(&l->held, memory_order_relaxed))
			hd_cpu_relax();
}

static inline void hd_spin_unlock(hd_spinlock_t *l)
{
	atomic_store_explicit(&l->held, 0, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* Small helpers.                                                       */

static inline uint32_t hd_roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < (1u << 31))
		r <<= 1;
	return r;
}

static inline uint32_t hd_ilog2(uint32_t v)
{
	uint32_t l = 0;

	while ((1u << (l + 1)) <= v && l < 31)
		l++;
	return l;
}

#endif /* HD_CORE_H */
