/* SPDX-License-Identifier: MIT */
/*
 * Fault injection for a port's receive path: seeded, reproducible loss,
 * duplication, reordering (frames held back for a random delay) and bit
 * corruption.  A HAL calls snic_fault_rx on each received burst; the
 * module frees, clones and holds frames through the HAL's own buffer
 * functions, so it works for any kind of buffer (DPDK mbufs, the unit
 * tests' fake pool).
 *
 * Reproducible: the decisions depend only on the seed and the order of the
 * frames (and, for the release of held frames, on the clock the HAL
 * passes).  Print the seed so a failure can be replayed.
 */
#ifndef SNIC_HAL_FAULT_H
#define SNIC_HAL_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snic/hal.h"

#define SNIC_FAULT_PPM   1000000u  /* rates are in parts per million     */
#define SNIC_FAULT_QLEN  64u       /* frames held back at most            */
#define SNIC_FAULT_BURST 64u       /* frames per snic_fault_rx call       */

struct snic_fault_cfg {
	uint32_t loss, dup, reorder, corrupt;  /* ppm                        */
	uint64_t delay_min_ns, delay_max_ns;   /* hold time of a reordered
						* frame: uniform in [min, max] */
	uint64_t seed;
	/* A bounded queue in front of the link (a switch port or a tap's
	 * txqueuelen): queue_len frames at most, one leaves every drain_ns;
	 * a frame that finds it full is dropped (tail drop).  0: none. */
	uint32_t queue_len;
	uint64_t drain_ns;
};

/* What the HAL lends the module: free one buffer, copy one into a new
 * buffer (NULL when none is free). */
struct snic_fault_io {
	void *ctx;
	void (*free)(void *ctx, struct snic_pkt *p);
	struct snic_pkt *(*clone)(void *ctx, const struct snic_pkt *p);
};

struct snic_fault_held {
	struct snic_pkt *pkt;
	uint64_t due;
};

struct snic_fault {
	struct snic_fault_cfg cfg;
	uint64_t rng;
	struct snic_fault_held q[SNIC_FAULT_QLEN]; /* FIFO                   */
	uint32_t q_head, q_len;
	uint64_t seen, dropped, duplicated, delayed, corrupted, released;
	/* the bounded queue: frames in it (scaled by drain_ns: the time the
	 * queue needs to empty), as of bq_at */
	uint64_t bq_backlog_ns, bq_at;
	uint64_t overflowed;                   /* tail drops                 */
};

/* "loss=0.05,dup=0.01,reorder=0.01,corrupt=0.001,seed=N,delay_us=M,
 * delay_min_us=K,queue=N,drain_ns=T": rates are probabilities 0..1.  Unnamed fields keep the
 * defaults (0; delay 10-200 us; seed 1).  0, or -1 with the reason in err. */
int snic_fault_parse(struct snic_fault_cfg *cfg, const char *spec, char *err,
		     size_t errlen);
void snic_fault_init(struct snic_fault *f, const struct snic_fault_cfg *cfg);

/* The next pseudo-random number (xorshift64*). */
uint64_t snic_fault_rand(struct snic_fault *f);

/* Apply the faults to pkts[0..n) (n <= SNIC_FAULT_BURST) received at `now`
 * and add held frames whose time has come.  pkts has room for cap entries
 * (cap >= n).  Returns how many frames pkts now holds, never more than
 * cap (duplicates are made only where they fit). */
uint16_t snic_fault_rx(struct snic_fault *f, struct snic_pkt **pkts,
		       uint16_t n, uint16_t cap, uint64_t now,
		       const struct snic_fault_io *io);

/* When the oldest held frame is due (the clock snic_fault_rx is given);
 * UINT64_MAX when none is held.  A caller that polls only on work asks
 * it before sleeping, so that a held frame's delay stays the configured
 * one and not its sleep (held frames leave in FIFO order). */
uint64_t snic_fault_next_due(const struct snic_fault *f);

/* Give back every held frame (teardown).  Returns how many. */
unsigned snic_fault_drain(struct snic_fault *f, const struct snic_fault_io *io);

/* One line of what was done ("seen 100 dropped 5 ..."), for logs. */
int snic_fault_format(const struct snic_fault *f, char *buf, size_t len);

#endif /* SNIC_HAL_FAULT_H */
