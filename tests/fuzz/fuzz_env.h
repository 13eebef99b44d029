/* SPDX-License-Identifier: MIT */
/*
 * The world the fuzz targets run in: the unit tests' two-NIC simulation
 * (tests/unit/fake_host, fake_env) with, on each side, a context, PD, CQ,
 * a 1 MiB buffer with an MR, RC, UC and UD QPs in RTS, an SRQ with an RC
 * QP on it, RECVs posted and messages in flight (SEND, WRITE, READ,
 * atomics); and the rarer features (fuzz_features.c): XRC initiator and
 * target with an XRC SRQ, memory windows of both types bound, a UD QP in
 * a multicast group, a raw packet QP behind a flow, CM listening on QP1,
 * device memory with an MR.  A target feeds its input through it; the
 * world is rebuilt every FZ_REBUILD inputs so that state reached by one
 * input rarely outlives a few hundred.
 *
 * Handles in an input: a 32-bit field FZ_H(k) stands for the k-th handle
 * of fz_handle (PD, MRs, QPNs, SRQs, windows, ...), a 64-bit field
 * FZ_A(off) for the side's buffer address + off, so that mutated commands
 * and WQEs name live objects (fz_subst).
 */
#ifndef SNIC_TESTS_FUZZ_ENV_H
#define SNIC_TESTS_FUZZ_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "fake_env.h"

#define FZ_REBUILD 256
#define FZ_BUF     (1u << 20)

enum { FZ_RC, FZ_UC, FZ_UD, FZ_SRQ_RC, FZ_XRC_INI, FZ_XRC_TGT, FZ_RAW,
       FZ_UD_MC, FZ_NQP };

#define FZ_QKEY    0x11111111u
#define FZ_GROUP   0xef010203u  /* 239.1.2.3: FZ_UD_MC's group */
#define FZ_SID     0x1061d2full /* the ServiceID CM listens on  */

struct fz_side {
	struct fqp qp[FZ_NQP];
	struct fsrq srq, xsrq;
	uint32_t xrcd, bind_mr, mw1, mw2, dm, dm_mr, flow, cid_base;
};

struct fz_world {
	struct fenv *e;
	struct fz_side a, b;
	unsigned uses;
	unsigned id;            /* which world this is (1, 2, ...)         */
	uint32_t loss;          /* link: next frames dropped (bit 0 first) */
	uint32_t dup;           /* link: next frames duplicated            */
};

/* The world for the next input (built, or rebuilt when due). */
struct fz_world *fz_world(void);
/* Post some work on both sides: messages in flight. */
void fz_traffic(struct fz_world *w, uint8_t seed);

/* fuzz_features.c: set up the rarer features on both sides (after the
 * base QPs are in RTS), and some traffic through them. */
void fz_features(struct fz_world *w);
void fz_traffic_more(struct fz_world *w, uint8_t seed);

/* Handle substitution (above): FZ_H(k) and FZ_A(off) markers. */
#define FZ_H(k)    (0xfade0000u | (uint32_t)(k))
#define FZ_A(off)  (0xfade000000000000ull | (uint64_t)(off))
enum { FZH_PD, FZH_MR, FZH_CQ, FZH_QP, /* FZ_NQP QPNs */
       FZH_SRQ = FZH_QP + FZ_NQP, FZH_XSRQ, FZH_XRCD, FZH_BIND_MR, FZH_MW1,
       FZH_MW2, FZH_DM, FZH_DM_MR, FZH_FLOW, FZH_CID, FZH_PEER_MR,
       FZH_PEER_XSRQ, FZH_PEER_MW2, FZH_PEER_QP, /* FZ_NQP QPNs of the other side */
       FZH_N = FZH_PEER_QP + FZ_NQP };
uint32_t fz_handle(struct fz_world *w, int b, unsigned k);
/* Replace the markers in buf (aligned words) by side b's (0: a) objects. */
void fz_subst(struct fz_world *w, int b, void *buf, size_t len);

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
