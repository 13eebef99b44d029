/* SPDX-License-Identifier: MIT */
/* Memory windows (objects/mw.c): the IBTA's bind rules, the R_Key check
 * through a window, invalidation, and the windows' hold on their MR.
 * Windows are made and freed by command, as the host driver does; the
 * binds and invalidations, which a QP's WQEs drive, are called on a QP
 * context of the PD (its ctx, pd and qpn are all they read). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };
#define RW (SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_READ)
#define ALL (SNIC_ACCESS_LOCAL_WRITE | RW | SNIC_ACCESS_REMOTE_ATOMIC)

struct mw_env {
	struct fdev dev;
	struct fctx c;
	uint32_t pdn, pdn2;
	struct snic_qp qp, qp_other, qp_pd2;
	uint64_t pa;            /* 64 KiB, the MR (MW_BIND) over it: mr */
	uint32_t mr;
};

static struct mw_env *env_new(void)
{
	struct mw_env *e = calloc(1, sizeof(*e));

	fdev_init(&e->dev, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->dev.nic);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&e->c, &e->dev, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c, &e->pdn), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c, &e->pdn2), SNIC_ST_OK);
	e->pa = fdev_alloc(&e->dev, 65536, 4096);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, e->pa, 65536,
					  ALL | SNIC_ACCESS_MW_BIND, &e->mr),
			      SNIC_ST_OK);
	e->qp.ctx = e->qp_other.ctx = e->qp_pd2.ctx = 0;
	e->qp.pd = e->qp_other.pd = e->pdn & (SNIC_MAX_PD - 1);
	e->qp_pd2.pd = e->pdn2 & (SNIC_MAX_PD - 1);
	e->qp.qpn = 0x1005;
	e->qp_other.qpn = 0x2006;
	e->qp_pd2.qpn = 0x3007;
	return e;
}

static void env_free(struct mw_env *e)
{
	CU_ASSERT_EQUAL(fdev_fini(&e->dev), 0);
	free(e);
}

static uint32_t mw_new(struct mw_env *e, uint32_t pdn, uint32_t type)
{
	struct snic_cmd_alloc_mw in = { .pdn = pdn, .type = type };
	struct snic_cmd_handle out = { 0 };

	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_ALLOC_MW, &in, sizeof(in), &out,
				 sizeof(out)), SNIC_ST_OK);
	return out.handle;
}

static int mw_free(struct mw_env *e, uint32_t rkey)
{
	struct snic_cmd_handle in = { .handle = rkey };

	return fctx_cmd(&e->c, SNIC_CMD_DEALLOC_MW, &in, sizeof(in), NULL, 0);
}

static uint8_t bind(struct mw_env *e, const struct snic_qp *qp, uint32_t mw,
		    uint32_t new_rkey, uint32_t mr, uint64_t off, uint64_t len,
		    uint32_t access, bool type1)
{
	struct snic_wqe_bind b = { .addr = e->pa + off, .length = len,
				   .mw_rkey = mw, .new_rkey = new_rkey,
				   .mr_lkey = mr, .access = access };

	return mw_bind(e->dev.nic, qp, &b, type1);
}

static uint32_t tag(uint32_t rkey, uint32_t t)
{
	return (rkey & ~0xffu) | (t & 0xffu);
}

/* Does rkey reach [off, off + len) of e's MR for access?  What comes back
 * when it does is that MR's own slot (every window here is bound to it):
 * any other slot fails, whether the caller expected a yes or a no. */
static bool reach(struct mw_env *e, const struct snic_qp *qp, uint32_t rkey,
		  uint32_t access, uint64_t off, uint64_t len)
{
	struct snic_nic *nic = e->dev.nic;
	const struct snic_mr *m = rkey_check(nic, qp, rkey, access, e->pa + off,
					     len);

	CU_ASSERT(m == NULL || m == &nic->mrs[SNIC_KEY_IDX(e->mr)]);
	return m != NULL;
}

/* IBTA 10.6.7.2.1: what a type 2B bind must satisfy, each refused alone. */
static void test_mw_bind_rules(void)
{
	struct mw_env *e = env_new();
	uint32_t w = mw_new(e, e->pdn, 2), nobind, noloc, other_pd, r;

	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, e->pa, 65536, ALL, &nobind),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, e->pa, 65536,
				    SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_MW_BIND,
				    &noloc), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn2, e->pa, 65536,
				    ALL | SNIC_ACCESS_MW_BIND, &other_pd), SNIC_ST_OK);
	r = tag(w, w + 1);
	/* the MR: Bind access, the window's PD, Local Write for remote write */
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, nobind, 0, 4096, RW, false), SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, other_pd, 0, 4096, RW, false), SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, noloc, 0, 4096, RW, false), SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, noloc, 0, 4096, SNIC_ACCESS_REMOTE_READ,
			     false), SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(mw_invalidate(e->dev.nic, &e->qp, r), true);
	r = tag(r, r + 1);
	/* bounds, rights, key, type, the QP's PD */
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 61440, 8192, RW, false), SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, (uint64_t)-4096, 8192, RW, false),
			SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 0, 4096, RW | (1u << 5), false),
			SNIC_WC_MW_BIND_ERR); /* zero-based: not offered */
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r ^ 0x100, e->mr, 0, 4096, RW, false),
			SNIC_WC_MW_BIND_ERR); /* not the window's key above the tag */
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 0, 4096, RW, true), SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp_pd2, w, r, e->mr, 0, 4096, RW, false),
			SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, e->mr, r, e->mr, 0, 4096, RW, false),
			SNIC_WC_MW_BIND_ERR); /* an MR key is no window */
	/* none of those bound it */
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_READ, 0, 1));
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 4096, 8192, RW, false), SNIC_WC_SUCCESS);
	/* bound: not again until invalidated */
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, tag(r, r + 1), e->mr, 0, 4096, RW, false),
			SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_TRUE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_WRITE, 4096, 8192));
	env_free(e);
}

/* The R_Key check through a bound 2B window: its bounds, its rights, its
 * QP, its current key; the MR key keeps its own rights meanwhile. */
static void test_mw_rkey_check(void)
{
	struct mw_env *e = env_new();
	uint32_t w = mw_new(e, e->pdn, 2), r = tag(w, w + 7);

	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 4096, 8192, SNIC_ACCESS_REMOTE_WRITE,
			     false), SNIC_WC_SUCCESS);
	CU_ASSERT_TRUE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_WRITE, 4096, 8192));
	CU_ASSERT_TRUE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_WRITE, 12287, 1));
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_WRITE, 4095, 2));
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_WRITE, 12287, 2));
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_WRITE, 0, 1));
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_READ, 4096, 8));
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_ATOMIC, 4096, 8));
	CU_ASSERT_FALSE(reach(e, &e->qp_other, r, SNIC_ACCESS_REMOTE_WRITE, 4096, 8));
	CU_ASSERT_FALSE(reach(e, &e->qp_pd2, r, SNIC_ACCESS_REMOTE_WRITE, 4096, 8));
	CU_ASSERT_FALSE(reach(e, &e->qp, w, SNIC_ACCESS_REMOTE_WRITE, 4096, 8));
	CU_ASSERT_FALSE(reach(e, &e->qp, r ^ 0x80, SNIC_ACCESS_REMOTE_WRITE, 4096, 8));
	/* the window's key is no lkey, and not an MR to deregister */
	CU_ASSERT_PTR_NULL(mr_check(e->dev.nic, r, e->qp.pd, 0, e->pa + 4096, 8));
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, r), SNIC_ST_NOENT);
	/* the MR's own key reaches all of it, atomics too */
	CU_ASSERT_TRUE(reach(e, &e->qp_other, e->mr, SNIC_ACCESS_REMOTE_ATOMIC, 0, 65536));
	env_free(e);
}

/* Invalidation (10.6.7.2.3): type 2B only, by its QP, its current key. */
static void test_mw_invalidate(void)
{
	struct mw_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint32_t w = mw_new(e, e->pdn, 2), w1 = mw_new(e, e->pdn, 1), r = tag(w, w + 1);

	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 0, 4096, RW, false), SNIC_WC_SUCCESS);
	CU_ASSERT_FALSE(mw_invalidate(nic, &e->qp_other, r));
	CU_ASSERT_FALSE(mw_invalidate(nic, &e->qp, tag(r, r + 1)));
	CU_ASSERT_FALSE(mw_invalidate(nic, &e->qp, e->mr));
	CU_ASSERT_TRUE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_READ, 0, 4096));
	CU_ASSERT_TRUE(mw_invalidate(nic, &e->qp, r));
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_READ, 0, 1));
	CU_ASSERT_FALSE(mw_invalidate(nic, &e->qp, r)); /* already free */
	/* a type 1 window is never invalidated */
	CU_ASSERT_EQUAL(bind(e, &e->qp, w1, tag(w1, w1 + 1), e->mr, 0, 4096, RW, true),
			SNIC_WC_SUCCESS);
	CU_ASSERT_FALSE(mw_invalidate(nic, &e->qp, tag(w1, w1 + 1)));
	CU_ASSERT_TRUE(reach(e, &e->qp, tag(w1, w1 + 1), SNIC_ACCESS_REMOTE_READ, 0, 8));
	env_free(e);
}

/* Type 1: any QP of its PD uses it; a bind replaces the binding and its
 * key; a zero-length bind unbinds. */
static void test_mw_type1(void)
{
	struct mw_env *e = env_new();
	uint32_t w = mw_new(e, e->pdn, 1), r1 = tag(w, w + 1), r2 = tag(w, w + 2);

	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r1, e->mr, 0, 4096, RW, false), SNIC_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r1, e->mr, 0, 4096, RW, true), SNIC_WC_SUCCESS);
	CU_ASSERT_TRUE(reach(e, &e->qp_other, r1, SNIC_ACCESS_REMOTE_READ, 0, 4096));
	CU_ASSERT_FALSE(reach(e, &e->qp_pd2, r1, SNIC_ACCESS_REMOTE_READ, 0, 8));
	CU_ASSERT_EQUAL(bind(e, &e->qp_other, r1, r2, e->mr, 8192, 4096, RW, true),
			SNIC_WC_SUCCESS);
	CU_ASSERT_FALSE(reach(e, &e->qp, r1, SNIC_ACCESS_REMOTE_READ, 8192, 8));
	CU_ASSERT_TRUE(reach(e, &e->qp, r2, SNIC_ACCESS_REMOTE_READ, 8192, 4096));
	CU_ASSERT_FALSE(reach(e, &e->qp, r2, SNIC_ACCESS_REMOTE_READ, 0, 8));
	CU_ASSERT_EQUAL(bind(e, &e->qp, r2, r1, 0, 0, 0, 0, true), SNIC_WC_SUCCESS);
	CU_ASSERT_FALSE(reach(e, &e->qp, r1, SNIC_ACCESS_REMOTE_READ, 8192, 0));
	CU_ASSERT_FALSE(reach(e, &e->qp, r2, SNIC_ACCESS_REMOTE_READ, 8192, 8));
	env_free(e);
}

/* A bound window holds its MR (EBUSY); dealloc of a bound window lets it
 * go; a freed window's key stays dead when the slot comes back. */
static void test_mw_mr_hold(void)
{
	struct mw_env *e = env_new();
	uint32_t w = mw_new(e, e->pdn, 2), r = tag(w, w + 1), w2;

	CU_ASSERT_EQUAL(bind(e, &e->qp, w, r, e->mr, 0, 4096, RW, false), SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, e->mr), SNIC_ST_BUSY);
	struct snic_cmd_rereg_mr rr = { .key = e->mr, .flags = SNIC_REREG_ACCESS };

	rr.reg.access = SNIC_ACCESS_LOCAL_WRITE;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_BUSY);
	CU_ASSERT_TRUE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_READ, 0, 8));
	CU_ASSERT_EQUAL(fctx_dealloc_pd(&e->c, e->pdn), SNIC_ST_BUSY);
	CU_ASSERT_EQUAL(mw_free(e, r), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mw_free(e, r), SNIC_ST_NOENT);
	CU_ASSERT_FALSE(reach(e, &e->qp, r, SNIC_ACCESS_REMOTE_READ, 0, 8));
	w2 = mw_new(e, e->pdn, 2);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(w2), SNIC_KEY_IDX(w));
	CU_ASSERT_NOT_EQUAL(w2 & ~0xffu, w & ~0xffu);
	CU_ASSERT_EQUAL(bind(e, &e->qp, w, tag(r, r + 1), e->mr, 0, 4096, RW, false),
			SNIC_WC_MW_BIND_ERR); /* the old window's key */
	CU_ASSERT_EQUAL(mw_free(e, w2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, e->mr), SNIC_ST_OK);
	/* bad arguments */
	struct snic_cmd_alloc_mw bad = { .pdn = e->pdn, .type = 3 };
	struct snic_cmd_handle out;

	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_ALLOC_MW, &bad, sizeof(bad), &out,
				 sizeof(out)), SNIC_ST_INVAL);
	bad.type = 2;
	bad.pdn = 0xfffff;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_ALLOC_MW, &bad, sizeof(bad), &out,
				 sizeof(out)), SNIC_ST_NOENT);
	env_free(e);
}

/* Windows on several cores (--cores > 1): a type 1 window is bound from
 * any QP of its PD, so from any core, while requests steered to another
 * core check it.  Two threads stand for two cores: each binds and unbinds
 * its own window on the same MR (the MR's count of windows must end at
 * 0), and one flips window 1 between two bindings with different keys,
 * on two MRs over the same bytes, while a third thread checks requests
 * with the first key: the check may refuse during a change but must never
 * hand out the second binding's MR. */
#define XC_RUN_NS 300000000L /* how long the three threads overlap */

struct xc_mw {
	struct mw_env *e;
	uint32_t w1, w2, mr2, k1, k2;
	pthread_barrier_t go;
	atomic_int stop;
	unsigned long torn, reads, seen;
};

static void *xc_binder(void *arg)
{
	struct xc_mw *x = arg;

	pthread_barrier_wait(&x->go);
	for (unsigned i = 0; !atomic_load_explicit(&x->stop,
						   memory_order_relaxed); i++) {
		bool odd = i & 1;

		/* key k1 on the MR, key k2 on mr2: same bytes, other MR */
		bind(x->e, &x->e->qp, x->w1, odd ? x->k2 : x->k1,
		     odd ? x->mr2 : x->e->mr, 0, 4096, RW, true);
		/* a moment bound, so that checks also get through (how many
		 * do is the scheduler's: printed, not asserted) */
		for (volatile int spin = 0; spin < 200; spin++)
			;
	}
	bind(x->e, &x->e->qp, x->w1, x->k1, x->e->mr, 0, 0, RW, true);
	return NULL;
}

static void *xc_other(void *arg)
{
	struct xc_mw *x = arg;
	uint32_t k = x->w2;

	pthread_barrier_wait(&x->go);
	for (unsigned i = 0; !atomic_load_explicit(&x->stop,
						   memory_order_relaxed); i++) {
		k = tag(k, k + 1);
		bind(x->e, &x->e->qp_other, x->w2, k, x->e->mr, 4096,
		     i & 1 ? 0 : 4096, RW, true);
	}
	bind(x->e, &x->e->qp_other, x->w2, tag(k, k + 1), x->e->mr, 0, 0, RW,
	     true);
	return NULL;
}

static void *xc_reader(void *arg)
{
	struct xc_mw *x = arg;
	struct snic_nic *nic = x->e->dev.nic;
	struct snic_mr *mr1 = &nic->mrs[SNIC_KEY_IDX(x->e->mr)];

	pthread_barrier_wait(&x->go);
	while (!atomic_load_explicit(&x->stop, memory_order_relaxed)) {
		struct snic_mr *m = rkey_check(nic, &x->e->qp, x->k1,
					       SNIC_ACCESS_REMOTE_READ,
					       x->e->pa, 64);

		x->reads++;
		if (m == mr1)
			x->seen++;
		else if (m)
			x->torn++;
	}
	return NULL;
}

static void test_mw_cross_core(void)
{
	struct mw_env *e = env_new();
	struct xc_mw x = { .e = e };
	pthread_t t[3];
	struct timespec run = { 0, XC_RUN_NS };

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, e->pa, 65536,
					  ALL | SNIC_ACCESS_MW_BIND, &x.mr2),
			      SNIC_ST_OK);
	x.w1 = mw_new(e, e->pdn, 1);
	x.w2 = mw_new(e, e->pdn, 1);
	x.k1 = tag(x.w1, 0x11);
	x.k2 = tag(x.w1, 0x22);
	pthread_barrier_init(&x.go, NULL, 4);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t[0], NULL, xc_binder, &x), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t[1], NULL, xc_other, &x), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t[2], NULL, xc_reader, &x), 0);
	pthread_barrier_wait(&x.go);
	nanosleep(&run, NULL);
	atomic_store(&x.stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&x.go);
	printf("\n    %lu checks: %lu through key 1's MR, %lu of key 2's; "
	       "MR windows at the end %u, %u\n    ", x.reads, x.seen, x.torn,
	       atomic_load(&e->dev.nic->mrs[SNIC_KEY_IDX(e->mr)].mw_binds),
	       atomic_load(&e->dev.nic->mrs[SNIC_KEY_IDX(x.mr2)].mw_binds));
	CU_ASSERT_EQUAL(x.torn, 0);
	CU_ASSERT_EQUAL(atomic_load(&e->dev.nic->mrs[SNIC_KEY_IDX(e->mr)].mw_binds), 0);
	CU_ASSERT_EQUAL(atomic_load(&e->dev.nic->mrs[SNIC_KEY_IDX(x.mr2)].mw_binds), 0);
	/* both windows unbound: the MRs deregister */
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, x.mr2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mw_free(e, x.w1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mw_free(e, x.w2), SNIC_ST_OK);
	env_free(e);
}

UNIT_SUITE(mw, NULL, NULL,
	   UNIT_TEST(test_mw_cross_core),
	   UNIT_TEST(test_mw_bind_rules),
	   UNIT_TEST(test_mw_rkey_check),
	   UNIT_TEST(test_mw_invalidate),
	   UNIT_TEST(test_mw_type1),
	   UNIT_TEST(test_mw_mr_hold));
