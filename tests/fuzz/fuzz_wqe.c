/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: WQEs and doorbells.  The input writes raw WQEs (send,
 * receive, SRQ) into the rings of NIC a's QPs of a live world
 * (fuzz_env.h), sets the doorbell records to values of its choosing
 * (the next index, or anything) and rings; the simulation then runs, so
 * the WQEs are fetched, checked, executed or completed in error.  FZ_H/FZ_A
 * markers in a WQE (fuzz_env.h) become live keys and addresses; the
 * virtual clock may jump (timers, retransmission).  A doorbell may also
 * be raw bits ORed into any word of the context's doorbell page (the
 * summary, group and QP words, and each core's group and summary words:
 * hostif.h "Doorbells"), as a hostile host may write them.  fuzz_cores
 * runs the same inputs with two firmware cores per NIC.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"
#include "nic/top.h"

static void write_ring(struct fz_world *w, struct fdev *d, uint64_t ring,
		       uint32_t cnt, uint32_t stride_log, uint32_t idx, struct fz_in *in)
{
	uint32_t len = 1u << stride_log;
	uint8_t *p = fdev_ptr(d, ring + ((uint64_t)(idx & (cnt - 1)) << stride_log));
	uint32_t n = len < in->n ? len : (uint32_t)in->n;

	memset(p, 0, len);
	memcpy(p, in->p, n);
	fz_subst(w, 0, p, len);
	in->p += n;
	in->n -= n;
}

/* Bits of the input's choosing ORed into one word of the QP's context's
 * doorbell page: any word the host may write there. */
static void raw_doorbell(struct fqp *qp, struct fz_in *in)
{
	struct snic_ctx_doorbells *cdb = (struct snic_ctx_doorbells *)(void *)(
		(uint8_t *)fdev_slot(qp->ctx->dev, qp->ctx->slot) +
		SNIC_CTX_DB_OFF);
	size_t nwords = sizeof(*cdb) / sizeof(uint64_t);
	uint32_t at = fz_u32(in) % (uint32_t)nwords;
	uint64_t bits = (uint64_t)fz_u32(in) << 32;

	bits |= fz_u32(in);

	atomic_fetch_or((_Atomic uint64_t *)(void *)cdb + at, bits);
}

static void one(struct fz_world *w, struct fz_in *in)
{
	uint8_t c = fz_u8(in);
	struct fqp *qp = &w->a.qp[c % FZ_NQP];
	struct fdev *d = w->e->a.dev;
	struct snic_qp_dbrec *db = fdev_ptr(d, qp->dbrec_pa);

	switch ((c >> 3) & 3) {
	case 0: /* send WQE */
		write_ring(w, d, qp->sq_pa, qp->sq_cnt, qp->sq_stride_log, qp->sq_pi, in);
		qp->sq_pi = (c & 0x80) ? fz_u32(in) : qp->sq_pi + 1;
		atomic_store(&db->sq_pi, qp->sq_pi);
		break;
	case 1: /* receive WQE */
		write_ring(w, d, qp->rq_pa, qp->rq_cnt, qp->rq_stride_log, qp->rq_pi, in);
		qp->rq_pi = (c & 0x80) ? fz_u32(in) : qp->rq_pi + 1;
		atomic_store(&db->rq_pi, qp->rq_pi);
		break;
	case 2: { /* SRQ WQE */
		struct fsrq *q = (c & 0x20) ? &w->a.xsrq : &w->a.srq;
		struct snic_srq_dbrec *sdb = fdev_ptr(d, q->dbrec_pa);

		write_ring(w, d, q->ring_pa, q->cnt, q->stride_log, q->pi, in);
		q->pi = (c & 0x80) ? fz_u32(in) : q->pi + 1;
		atomic_store(&sdb->pi, q->pi);
		break;
	}
	default: /* a doorbell alone, the record left as it is */
		if (c & 0x40) {
			raw_doorbell(qp, in);
			return;
		}
		break;
	}
	fqp_ring(qp);
}

#ifdef FZ_WQE_CORES
/* fuzz_cores.c: every fake NIC of the world with this many cores. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fdev_cores_force = FZ_WQE_CORES;
	return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_world *w = fz_world();
	struct fz_in in = { data, size };

#ifdef FZ_WQE_CORES
	if (snic_nic_ncores(w->e->a.dev->nic) != FZ_WQE_CORES)
		abort(); /* not the world this target is for */
#endif

	for (unsigned k = 0; in.n && k < 32; k++) {
		one(w, &in);
		uint8_t t = fz_u8(&in);

		fsim_idle(w->e->s, 1 + (t & 7));
		if (t & 0x80)
			w->e->s->clock += 1000000ull << ((t >> 3) & 15);
	}
	fsim_idle(w->e->s, 8);
	return 0;
}
