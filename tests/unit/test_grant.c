/* SPDX-License-Identifier: MIT */
/* Contexts the board opens with their own pages (nic/grant.c): the page
 * owner table confines every page list, ring and CQ a command names; a
 * doorbell counts only from its QP's own context's page; freed DM pages
 * wait for the board. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };
#define HALF      (FDEV_MEM_SIZE / 2)
#define SEG_PAGES 256u
#define SEG1      ((uint32_t)(HALF >> SNIC_PAGE_SHIFT))
#define SEG2      (SEG1 + SEG_PAGES)
#define PA(page)  ((uint64_t)(page) << SNIC_PAGE_SHIFT)

struct grant_env {
	struct fdev dev;
	struct fctx shared, a, b;       /* slot 0 (host-opened), 1, 2     */
	uint32_t pd_a, pd_b, pd_shared;
};

static void ctx_granted(struct fctx *c, struct fdev *d, unsigned slot,
			uint32_t first)
{
	memset(c, 0, sizeof(*c));
	c->dev = d;
	c->slot = slot;
	c->seq = atomic_load(&fdev_slot(d, slot)->cmd_done);
	CU_ASSERT_EQUAL_FATAL(snic_nic_ctx_grant(d->nic, slot, 5000 + slot,
						 first, SEG_PAGES), 0);
}

/* The window's first half is shared, the second the segment area. */
static struct grant_env *env_new(void)
{
	struct grant_env *e = calloc(1, sizeof(*e));

	fdev_init(&e->dev, "snic0", MAC0, 0xc6120001u, 4200);
	snic_nic_fini(e->dev.nic);
	memset(e->dev.nic_mem, 0, snic_nic_size());
	memset(e->dev.bar, 0, SNIC_BAR_SIZE);
	e->dev.cfg.host_mem_size = HALF;
	e->dev.cfg.seg_area_size = HALF;
	e->dev.cfg.board_maps_dm = 1;
	e->dev.nic = snic_nic_init(e->dev.nic_mem, &e->dev.cfg, &e->dev.hal.hal,
				   e->dev.bar);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->dev.nic);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&e->shared, &e->dev, 0), SNIC_ST_OK);
	ctx_granted(&e->a, &e->dev, 1, SEG1);
	ctx_granted(&e->b, &e->dev, 2, SEG2);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->a, &e->pd_a), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->b, &e->pd_b), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->shared, &e->pd_shared),
			      SNIC_ST_OK);
	return e;
}

static void env_free(struct grant_env *e)
{
	CU_ASSERT_EQUAL(fdev_fini(&e->dev), 0);
	free(e);
}

/* REG_MR with the page list at list_page naming `page`. */
static int reg_at(struct fctx *c, uint32_t pdn, uint32_t list_page,
		  uint32_t page, uint32_t *key)
{
	struct snic_cmd_reg_mr in = { .pdn = pdn, .length = 4096, .npages = 1,
				      .access = SNIC_ACCESS_LOCAL_WRITE };

	struct snic_cmd_handle h = { 0 };
	int st;

	in.pages_pa = PA(list_page);
	memcpy(fdev_ptr(c->dev, in.pages_pa), &page, 4);
	st = fctx_cmd(c, SNIC_CMD_REG_MR, &in, sizeof(in), &h, sizeof(h));
	*key = h.handle;
	return st;
}

static void test_grant_mr_pages_own_only(void)
{
	struct grant_env *e = env_new();
	uint32_t k = 0;

	/* own list, own page */
	CU_ASSERT_EQUAL(reg_at(&e->a, e->pd_a, SEG1, SEG1 + 1, &k), SNIC_ST_OK);
	/* another context's page, through an own list or the other's list */
	CU_ASSERT_EQUAL(reg_at(&e->a, e->pd_a, SEG1, SEG2 + 1, &k),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(reg_at(&e->a, e->pd_a, SEG2, SEG1 + 1, &k),
			SNIC_ST_FAULT);
	/* a page of the shared window: not a granted context's */
	CU_ASSERT_EQUAL(reg_at(&e->a, e->pd_a, SEG1, 1, &k), SNIC_ST_FAULT);
	/* a host-opened context cannot name a granted context's pages */
	CU_ASSERT_EQUAL(reg_at(&e->shared, e->pd_shared, 1, SEG1 + 1, &k),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(reg_at(&e->shared, e->pd_shared, SEG1, 2, &k),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(reg_at(&e->shared, e->pd_shared, 1, 2, &k), SNIC_ST_OK);
	/* past the end of its segment */
	CU_ASSERT_EQUAL(reg_at(&e->b, e->pd_b, SEG2, SEG2 + SEG_PAGES, &k),
			SNIC_ST_FAULT);
	env_free(e);
}

static int create_cq_at(struct fctx *c, uint64_t ring, uint64_t dbrec)
{
	struct snic_cmd_create_cq in = { .ring_pa = ring, .dbrec_pa = dbrec,
					 .cqe_cnt = 64 };
	struct snic_cmd_handle h = { 0 };

	return fctx_cmd(c, SNIC_CMD_CREATE_CQ, &in, sizeof(in), &h, sizeof(h));
}

static void test_grant_cq_ring_own_only(void)
{
	struct grant_env *e = env_new();

	CU_ASSERT_EQUAL(create_cq_at(&e->a, PA(SEG2 + 4), PA(SEG1 + 3)),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(create_cq_at(&e->a, PA(SEG1 + 4), PA(SEG2 + 3)),
			SNIC_ST_FAULT);
	/* straddling the end of its segment into the next one */
	CU_ASSERT_EQUAL(create_cq_at(&e->a, PA(SEG2) - 64, PA(SEG1 + 3)),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(create_cq_at(&e->a, PA(4), PA(SEG1 + 3)),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(create_cq_at(&e->shared, PA(SEG1 + 4), PA(5)),
			SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(create_cq_at(&e->a, PA(SEG1 + 4), PA(SEG1 + 3)),
			SNIC_ST_OK);
	env_free(e);
}

/* CREATE_QP input for context a: a CQ of its own, rings in its segment. */
static struct snic_cmd_create_qp qp_in_a(struct grant_env *e)
{
	struct snic_cmd_create_qp in = { .pdn = e->pd_a, .qp_type = SNIC_QPT_RC,
		.sq_wqe_cnt = 16, .sq_stride_log = 7, .rq_wqe_cnt = 16,
		.rq_stride_log = 6, .max_send_sge = 1, .max_recv_sge = 1,
		.sq_pa = PA(SEG1 + 8), .rq_pa = PA(SEG1 + 10),
		.dbrec_pa = PA(SEG1 + 12) };
	struct snic_cmd_handle h = { 0 };
	struct snic_cmd_create_cq cq = { .ring_pa = PA(SEG1 + 4),
					 .dbrec_pa = PA(SEG1 + 3), .cqe_cnt = 64 };

	CU_ASSERT_EQUAL_FATAL(fctx_cmd(&e->a, SNIC_CMD_CREATE_CQ, &cq,
				       sizeof(cq), &h, sizeof(h)), SNIC_ST_OK);
	in.send_cqn = in.recv_cqn = h.handle;
	return in;
}

static void test_grant_qp_rings_own_only(void)
{
	struct grant_env *e = env_new();
	struct snic_cmd_create_qp in = qp_in_a(e);
	struct snic_cmd_handle h = { 0 };

	in.sq_pa = PA(SEG2 + 8);        /* the other context's */
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_CREATE_QP, &in, sizeof(in),
				 &h, sizeof(h)), SNIC_ST_FAULT);
	in.sq_pa = PA(SEG1 + 8);
	in.dbrec_pa = PA(SEG2 + 12);
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_CREATE_QP, &in, sizeof(in),
				 &h, sizeof(h)), SNIC_ST_FAULT);
	in.dbrec_pa = PA(SEG1 + 12);
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_CREATE_QP, &in, sizeof(in),
				 &h, sizeof(h)), SNIC_ST_OK);
	env_free(e);
}

static void test_grant_slot_rules(void)
{
	struct grant_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	struct snic_cmd_ctx_open o = { .pid = 1 };

	/* the host cannot reopen a granted slot, even after closing it */
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_CTX_OPEN, &o, sizeof(o), NULL,
				 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_CTX_OPEN, &o, sizeof(o), NULL,
				 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(snic_nic_ctx_pid(nic, 2), 5002);
	/* a slot in use, pages outside the segment area: refused */
	CU_ASSERT_EQUAL(snic_nic_ctx_grant(nic, 0, 1, SEG2 + 512, 4), -1);
	CU_ASSERT_EQUAL(snic_nic_ctx_grant(nic, 1, 1, SEG2 + 512, 4), -1);
	CU_ASSERT_EQUAL(snic_nic_ctx_grant(nic, 3, 1, 10, 4), -1);
	CU_ASSERT_EQUAL(snic_nic_ctx_grant(nic, 3, 1, SEG1,
					   (uint32_t)(HALF >> 12) + 1), -1);
	CU_ASSERT_EQUAL(snic_nic_ctx_grant(nic, SNIC_MAX_CTX, 1, SEG1, 4), -1);
	/* the board frees it: granted again */
	snic_nic_ctx_dead(nic, 1);
	CU_ASSERT_EQUAL(atomic_load(&fdev_slot(&e->dev, 1)->state),
			SNIC_CTX_FREE);
	CU_ASSERT_EQUAL(snic_nic_ctx_grant(nic, 1, 7, SEG1, SEG_PAGES), 0);
	CU_ASSERT_EQUAL(snic_nic_ctx_pid(nic, 1), 7);
	env_free(e);
}

/* A QP of context a (rings in its segment); its index. */
static uint32_t qp_of_a(struct grant_env *e)
{
	struct snic_cmd_create_qp in = qp_in_a(e);
	struct snic_cmd_handle h = { 0 };

	CU_ASSERT_EQUAL_FATAL(fctx_cmd(&e->a, SNIC_CMD_CREATE_QP, &in, sizeof(in),
				       &h, sizeof(h)), SNIC_ST_OK);
	return SNIC_QPN_IDX(h.handle);
}

static struct snic_ctx_doorbells *page_of(struct grant_env *e, unsigned slot)
{
	return (struct snic_ctx_doorbells *)(void *)(
		(uint8_t *)fdev_slot(&e->dev, slot) + SNIC_CTX_DB_OFF);
}

/* A doorbell is the context's whose page it came in (hostif.h
 * "Attribution"): a's QP rung from b's page or from the NIC page is
 * ignored and counted; from a's own page it is served. */
static void test_grant_doorbell_attribution(void)
{
	struct grant_env *e = env_new();
	struct snic_doorbells *db = (struct snic_doorbells *)(void *)(
		e->dev.bar + SNIC_BAR_DB_OFF);
	uint32_t i = qp_of_a(e);
	uint64_t f0 = fdev_counter(&e->dev, "doorbells_foreign");
	uint64_t d0 = fdev_counter(&e->dev, "doorbells");
	uint32_t c = snic_db_core(i, atomic_load(&fdev_slot(&e->dev, 1)->db_cores));

	snic_db_ring_ctx(db, page_of(e, 2), 2, i, c);   /* b's page */
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL(fdev_counter(&e->dev, "doorbells_foreign"), f0 + 1);
	snic_db_ring_qp(db, i);                         /* the NIC page */
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL(fdev_counter(&e->dev, "doorbells_foreign"), f0 + 2);
	snic_db_ring_ctx(db, page_of(e, 1), 1, i, c);   /* a's own */
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL(fdev_counter(&e->dev, "doorbells_foreign"), f0 + 2);
	CU_ASSERT_EQUAL(fdev_counter(&e->dev, "doorbells"), d0 + 3);
	/* a context bit for a slot nobody opened looks at nothing */
	atomic_fetch_or(&db->ctx_bits, 1ull << 9);
	atomic_fetch_or(&db->summary, SNIC_DB_SUMMARY_CTX);
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL(fdev_counter(&e->dev, "doorbells"), d0 + 3);
	env_free(e);
}

/* DM pages a granted context frees stay taken until the board releases
 * them; a host-opened context's go back at once. */
static void test_grant_dm_held(void)
{
	struct grant_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	struct snic_cmd_alloc_dm a = { .length = 4096 };
	struct snic_cmd_alloc_dm_out out, out2;
	struct snic_cmd_handle h;

	CU_ASSERT_EQUAL_FATAL(fctx_cmd(&e->a, SNIC_CMD_ALLOC_DM, &a, sizeof(a),
				       &out, sizeof(out)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(snic_nic_dm_owner(nic, out.offset / 4096), 1);
	CU_ASSERT_EQUAL(snic_nic_dm_owner(nic, out.offset / 4096 + 1), -1);
	h.handle = out.handle;
	CU_ASSERT_EQUAL(fctx_cmd(&e->a, SNIC_CMD_FREE_DM, &h, sizeof(h), NULL,
				 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(snic_nic_dm_owner(nic, out.offset / 4096), -1);
	CU_ASSERT_EQUAL(snic_nic_dm_held(nic), 1u << (out.offset / 4096));
	/* held: b gets another page */
	CU_ASSERT_EQUAL_FATAL(fctx_cmd(&e->b, SNIC_CMD_ALLOC_DM, &a, sizeof(a),
				       &out2, sizeof(out2)), SNIC_ST_OK);
	CU_ASSERT_NOT_EQUAL(out2.offset, out.offset);
	snic_nic_dm_release(nic, snic_nic_dm_held(nic));
	CU_ASSERT_EQUAL(snic_nic_dm_held(nic), 0);
	/* released: the page is handed out again (to the shared context,
	 * whose free is immediate) */
	CU_ASSERT_EQUAL_FATAL(fctx_cmd(&e->shared, SNIC_CMD_ALLOC_DM, &a,
				       sizeof(a), &out2, sizeof(out2)),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL(out2.offset, out.offset);
	h.handle = out2.handle;
	CU_ASSERT_EQUAL(fctx_cmd(&e->shared, SNIC_CMD_FREE_DM, &h, sizeof(h),
				 NULL, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(snic_nic_dm_held(nic), 0);
	env_free(e);
}

UNIT_SUITE(grant, NULL, NULL,
	   UNIT_TEST(test_grant_mr_pages_own_only),
	   UNIT_TEST(test_grant_cq_ring_own_only),
	   UNIT_TEST(test_grant_qp_rings_own_only),
	   UNIT_TEST(test_grant_slot_rules),
	   UNIT_TEST(test_grant_doorbell_attribution),
	   UNIT_TEST(test_grant_dm_held));
