/* SPDX-License-Identifier: MIT */
/*
 * Test environments over fake_host.h for the transports beside RC: two
 * NICs in the simulation, each side with an open context, a PD, a CQ and
 * a registered buffer (no QPs: each test makes the ones it needs, of any
 * type); UD readiness and address vectors; shared receive queues; the
 * context's event queue.  Everything goes through the BAR mailbox and the
 * host-memory window, as the host driver does: no firmware internals.
 */
#ifndef SNIC_TESTS_FAKE_ENV_H
#define SNIC_TESTS_FAKE_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_host.h"

/* One side of the environment. */
struct fside {
	struct fdev *dev;
	struct fctx ctx;
	uint32_t pd;
	struct fcq cq;
	uint64_t buf;           /* pa == iova                                */
	uint32_t mr;            /* lkey == rkey, every access right          */
};

struct fenv {
	struct fsim *s;
	struct fside a, b;      /* a on s->a (snic0), b on s->b (snic1)      */
	uint64_t buf_len;
};

/* Heap-allocated; CUnit-asserts that every set-up command succeeded. */
struct fenv *fenv_new(uint32_t eth_mtu, uint64_t buf_len, uint32_t cqe_cnt);
/* Tear down; asserts no packet buffer leaked, was freed twice or
 * overflowed on either side. */
void fenv_free(struct fenv *e);

uint8_t *fside_ptr(struct fside *s, uint64_t off);
struct snic_wqe_sge fside_sge(struct fside *s, uint64_t off, uint32_t len);
uint64_t fside_counter(struct fside *s, const char *name);
/* A QP of `type` on the side's PD and CQ (send = recv), 64 WQEs each way,
 * 4 SGEs, 128 bytes inline; srqn != 0: its receives come from that SRQ. */
int fside_qp(struct fside *s, struct fqp *qp, uint32_t type, uint32_t srqn);

/* Deterministic test data. */
void fpattern(uint8_t *p, size_t n, uint32_t seed);

/* UD: RESET -> INIT (Q_Key) -> RTR -> RTS. */
int fqp_ud_ready(struct fqp *qp, uint32_t qkey, uint32_t sq_psn);
/* A raw packet QP: RESET -> INIT (port 1) -> RTR -> RTS. */
int fqp_raw_ready(struct fqp *qp);
/* A UD address vector for (ip, qpn, qkey): dgid ::ffff:ip. */
void fud_addr(struct snic_wqe_ud *ud, uint32_t ip, uint32_t qpn, uint32_t qkey);

/* Shared receive queue in host memory. */
struct fsrq {
	struct fctx *ctx;
	uint32_t srqn;
	uint64_t ring_pa, dbrec_pa;
	uint32_t cnt, stride_log, max_sge;
	uint32_t pi;
};
int fsrq_create(struct fsrq *q, struct fctx *c, uint32_t pdn, uint32_t cnt,
		uint32_t max_sge, uint32_t limit);
/* An XRC SRQ in domain xrcd whose RECVs complete on cq (no limit). */
int fsrq_create_xrc(struct fsrq *q, struct fctx *c, uint32_t pdn, uint32_t cnt,
		    uint32_t max_sge, uint32_t xrcd, uint32_t cqn);
/* Write the WQE, then publish the producer index (release). */
void fsrq_post(struct fsrq *q, uint64_t wr_id, const struct snic_wqe_sge *sge,
	       uint32_t num_sge);
/* MODIFY_SRQ with the given mask (SNIC_SRQ_LIMIT: arm at `limit`). */
int fsrq_modify(struct fsrq *q, uint32_t mask, uint32_t max_wr, uint32_t limit);
int fsrq_query(struct fsrq *q, struct snic_srq_attr *out);
int fsrq_destroy(struct fsrq *q);

/* The next event of the context's queue from *ci on: true and the entry
 * (consumed: eq_ci advances), false when none is waiting. */
bool fctx_event(struct fctx *c, uint32_t *ci, struct snic_eqe *out);

#endif
