/* SPDX-License-Identifier: MIT */
/*
 * The world the fuzz targets run in: the unit tests' two-NIC simulation
 * (tests/unit/fake_host, fake_env) with, on each side, a context, PD, CQ,
 * a 1 MiB buffer with an MR, RC, UC and UD QPs in RTS, an SRQ with an RC
 * QP on it, RECVs posted and messages in flight (SEND, WRITE, READ,
 * atomics).  A target feeds its input through it; the world is rebuilt
 * every FZ_REBUILD inputs so that state reached by one input rarely
 * outlives a few hundred.
 */
#ifndef SNIC_TESTS_FUZZ_ENV_H
#define SNIC_TESTS_FUZZ_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "fake_env.h"

#define FZ_REBUILD 256
#define FZ_BUF     (1u << 20)

enum { FZ_RC, FZ_UC, FZ_UD, FZ_SRQ_RC, FZ_NQP };

struct fz_side {
	struct fqp qp[FZ_NQP];
	struct fsrq srq;
};

struct fz_world {
	struct fenv *e;
	struct fz_side a, b;
	unsigned uses;
};

/* The world for the next input (built, or rebuilt when due). */
struct fz_world *fz_world(void);
/* Post some work on both sides: messages in flight. */
void fz_traffic(struct fz_world *w, uint8_t seed);

/* A cursor over the input. */
struct fz_in {
	const uint8_t *p;
	size_t n;
};
uint8_t fz_u8(struct fz_in *in);
uint16_t fz_u16(struct fz_in *in);
uint32_t fz_u32(struct fz_in *in);
uint64_t fz_u64(struct fz_in *in);

#endif
