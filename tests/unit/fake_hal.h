/* SPDX-License-Identifier: MIT */
/*
 * A fake HAL for unit tests: host memory is a calloc'd window with
 * bounds-checked DMA and atomics, time is a virtual clock the test
 * advances, ports are in-memory FIFOs joined back to back by a "link"
 * (with hooks to drop, corrupt, duplicate or inject frames), packet
 * buffers come from a fixed pool with leak and overflow accounting.
 * Everything is deterministic: no threads, no wall clock; the optional
 * receive faults (hal/fault) come from a seeded generator.
 */
#ifndef SNIC_TESTS_FAKE_HAL_H
#define SNIC_TESTS_FAKE_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fault.h"
#include "snic/hal.h"

#define FH_POOL_SIZE   1024     /* packet buffers per HAL              */
#define FH_BUF_CAP     4608     /* bytes per buffer (eth_mtu 4200 + L2) */
#define FH_GUARD       64       /* canary bytes after each buffer       */
#define FH_LOG_KEEP    64       /* log lines kept                       */
#define FH_LOG_LEN     160
#define FL_FIFO_SIZE   8192     /* frames per link direction            */
#define FH_PREP_KEEP   8        /* dma_prepare ranges kept              */
#define FH_MAX_TXQ     16       /* TX queues at most (SNIC_MAX_CORES)   */
#define FH_MAX_RXQ     16       /* RX queues at most                    */
#define FH_RXQ_SIZE    512      /* frames an RX queue holds             */

struct fake_link;

struct fake_hal {
	struct snic_hal hal;          /* hand &hal to snic_nic_init          */
	/* host memory */
	uint8_t *mem;
	uint64_t mem_size;
	uint64_t dma_reads, dma_writes, dma_faults, atomics;
	uint64_t crc_reads;           /* of dma_reads: with the ICRC folded  */
	uint64_t crc_writes;          /* of dma_writes: with the ICRC checked */
	/* reads inside [watch_lo, watch_hi) (0: none watched): how many,
	 * the bytes and the 64-byte lines they touched there, the highest
	 * offset from watch_lo read (end, exclusive) */
	uint64_t watch_lo, watch_hi;
	uint64_t watch_reads, watch_bytes, watch_lines, watch_end;
	/* clock: *clock, which is `own_clock` unless shared (sim) */
	uint64_t own_clock;
	uint64_t *clock;
	/* ports */
	struct fake_link *link;
	int side;                     /* 0 or 1 on the link                  */
	int link_is_up;
	uint64_t tx_frames, rx_frames, tx_dropped_nolink;
	/* TX queues offered to the firmware's cores (tx_queues op, from
	 * fake_hal_tx_queues at init) and the frames each queue took */
	uint16_t tx_queues;
	uint64_t tx_frames_q[FH_MAX_TXQ];
	uint64_t bad_txq;             /* tx_burst_queue on a queue not offered */
	/* RX queues (rx_queues op; 1: none, rx_burst takes frames straight
	 * off the link): frames taken off the link go to the queue
	 * snic_hal_rx_queue names, or all to rxq_force when >= 0 (a port
	 * that steers wrongly); a full queue drops (rxq_full) */
	uint16_t rx_queues;
	int rxq_force;
	struct {
		struct snic_pkt *p[FH_RXQ_SIZE];
		uint32_t head, tail;
	} rxq[FH_MAX_RXQ];
	uint64_t rx_frames_q[FH_MAX_RXQ];
	uint64_t rxq_full, bad_rxq;
	/* a slow receiver path: at most one frame taken off the link every
	 * rx_gap_ns (0: no limit); the rest waits in the link's FIFO, so a
	 * frame queued behind a backlog arrives late (a slow peer's queue) */
	uint64_t rx_gap_ns, rx_next_at;
	/* a receiver that is not always running (a guest under QEMU TCG):
	 * nothing is taken off the link during the last rx_pause_ns of
	 * every rx_period_ns (0: never paused) */
	uint64_t rx_period_ns, rx_pause_ns;
	/* packet pool */
	struct snic_pkt pkts[FH_POOL_SIZE];
	uint8_t *bufs;                /* FH_POOL_SIZE * (cap + guard)        */
	bool in_use[FH_POOL_SIZE];
	uint16_t free_stack[FH_POOL_SIZE];
	uint32_t nfree;
	uint64_t allocs, frees;
	uint64_t bad_frees;           /* double free or foreign pointer      */
	uint64_t overflows;           /* canary damaged                      */
	uint32_t alloc_limit;         /* refuse pkt_alloc past this many
				       * buffers out (0 = no limit)          */
	/* host wake-ups and console */
	uint64_t notifies;
	const void *last_notify;
	uint64_t log_count[4];
	char log[FH_LOG_KEEP][FH_LOG_LEN];
	uint32_t nlog;
	bool verbose;                 /* echo log lines to stderr            */
	/* receive faults (fake_hal_set_fault): loss, duplication, reordering
	 * by a delay in virtual time, bit corruption */
	bool fault_on;
	struct snic_fault fault;
	struct snic_fault_io fault_io;
	/* DMA faults on purpose: reads / writes touching [fail_lo, fail_hi)
	 * fail (fail_hi 0 = none), atomics fail while fail_atomics */
	uint64_t fail_rd_lo, fail_rd_hi, fail_wr_lo, fail_wr_hi;
	bool fail_atomics;
	/* sees every DMA write that lands, before it lands (NULL: none) */
	void (*wr_hook)(void *arg, uint64_t pa, const void *src, uint32_t len);
	void *wr_hook_arg;
	uint64_t acquire_loads;       /* dma_load_acquire32 calls            */
	/* dma_prefetch calls (read-ahead hints: nothing is copied), and a
	 * hook that sees each one (NULL: none) */
	uint64_t prefetches;
	void (*prefetch_hook)(void *arg, uint64_t pa, uint32_t len);
	void *prefetch_hook_arg;
	/* dma_prepare calls: how many, and the last FH_PREP_KEEP ranges
	 * (prep_pa/prep_len[(prepares - 1) % FH_PREP_KEEP] is the latest) */
	uint64_t prepares;
	uint64_t prep_pa[FH_PREP_KEEP], prep_len[FH_PREP_KEEP];
};

/* Set up with a host-memory window of mem_size bytes.  Returns 0. */
int fake_hal_init(struct fake_hal *fh, uint64_t mem_size);
/* Whether fake_hal_init gives the HAL dma_read_crc and dma_write_crc
 * (default true); false: the core copies, then computes the ICRC over
 * the frame, and checks a received one before it copies (the bare-metal
 * boards' way). */
extern bool fake_hal_fold;
/* TX queues each port offers at init (1..FH_MAX_TXQ; default
 * FH_MAX_TXQ: every core its own; 1: the others' frames through core 0) */
extern unsigned fake_hal_tx_queues;
/* RX queues steered by the destination QPN (hal.h rx_queues), set by
 * fake_hal_set_rx_queues (fdev_init: fake_hal_rx_queues, else the NIC's
 * number of cores when a power of two; 1: every frame through rx_burst) */
extern unsigned fake_hal_rx_queues;
void fake_hal_set_rx_queues(struct fake_hal *fh, unsigned n);
/* Frees the window and buffers.  Returns the number of buffers that did
 * not come back (0 when none leaked). */
unsigned fake_hal_fini(struct fake_hal *fh);
/* Buffers currently owned by the core. */
unsigned fake_hal_outstanding(const struct fake_hal *fh);

static inline uint64_t fake_hal_now(const struct fake_hal *fh)
{
	return *fh->clock;
}

static inline void fake_hal_advance(struct fake_hal *fh, uint64_t ns)
{
	*fh->clock += ns;
}

static inline void *fake_hal_ptr(struct fake_hal *fh, uint64_t pa)
{
	return fh->mem + pa;
}

/* Faults on what this side receives (NULL: none).  Frames held back are
 * given back by fake_link_fini. */
void fake_hal_set_fault(struct fake_hal *fh, const struct snic_fault_cfg *cfg);

/* Does any captured log line contain `needle`? */
bool fake_hal_log_has(const struct fake_hal *fh, const char *needle);

/* ---------------------------------------------------------------------- */
/* Link: side 0 <-> side 1, one FIFO per direction.                        */

enum fl_action {
	FL_PASS = 0,
	FL_DROP,
	FL_DUP,      /* deliver twice */
};

/* Called for every frame a side transmits, before it is queued for the
 * other side.  The hook may rewrite the frame (up to FH_BUF_CAP bytes)
 * and its length.  `from` is the transmitting side. */
typedef enum fl_action (*fl_hook_fn)(void *arg, int from, uint8_t *frame,
				     uint16_t *len);

struct fl_frame {
	uint8_t *data;
	uint16_t len;
};

struct fake_link {
	struct fake_hal *side[2];
	struct fl_frame fifo[2][FL_FIFO_SIZE]; /* [to side]               */
	uint32_t head[2], tail[2];
	fl_hook_fn hook;
	void *hook_arg;
	uint64_t sent[2];             /* frames transmitted by side          */
	uint64_t dropped[2], duplicated[2], injected[2];
};

void fake_link_init(struct fake_link *l, struct fake_hal *a,
		    struct fake_hal *b);
/* Frees frames still queued. */
void fake_link_fini(struct fake_link *l);
void fake_link_set_hook(struct fake_link *l, fl_hook_fn fn, void *arg);
/* Queue a frame for delivery to side `to` (as if the other side sent
 * it, without the hook).  Returns 0, -1 when the FIFO is full. */
int fake_link_inject(struct fake_link *l, int to, const void *frame,
		     uint16_t len);
/* Frames waiting for side `to`. */
uint32_t fake_link_pending(const struct fake_link *l, int to);

#endif
