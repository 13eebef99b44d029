/* SPDX-License-Identifier: MIT */
/* Memory regions: keys, PD, access, bounds, page lists, the MTT allocator. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };
#define ALL_ACCESS (SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_WRITE | \
		    SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_ATOMIC)

struct mr_env {
	struct fdev dev;
	struct fctx c;
	uint32_t pdn;
	uint32_t pd_idx;
};

/* mr_check lets the access through to key's own MR-table slot: not
 * merely to some MR (a check that another key's slot, or a window's, came
 * back would pass a NOT_NULL). */
#define CU_ASSERT_MR_IS(nic, key, ...)                                      \
	CU_ASSERT_PTR_EQUAL(mr_check(nic, key, __VA_ARGS__),                \
			    &(nic)->mrs[SNIC_KEY_IDX(key)])

static struct mr_env *env_new(void)
{
	struct mr_env *e = calloc(1, sizeof(*e));

	fdev_init(&e->dev, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->dev.nic);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&e->c, &e->dev, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c, &e->pdn), SNIC_ST_OK);
	e->pd_idx = e->pdn & (SNIC_MAX_PD - 1);
	return e;
}

static void env_free(struct mr_env *e)
{
	CU_ASSERT_EQUAL(fdev_fini(&e->dev), 0);
	CU_ASSERT_EQUAL(e->dev.hal.bad_frees, 0);
	free(e);
}

static void test_mr_key_stale_after_reuse(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 8192, 4096);
	uint32_t k1, k2;

	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 8192, ALL_ACCESS, &k1),
			SNIC_ST_OK);
	CU_ASSERT_MR_IS(nic, k1, e->pd_idx, 0, pa, 8192);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k1), SNIC_ST_OK);
	CU_ASSERT_PTR_NULL(mr_check(nic, k1, e->pd_idx, 0, pa, 1));
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 8192, ALL_ACCESS, &k2),
			SNIC_ST_OK);
	/* same slot, new generation */
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k1), SNIC_KEY_IDX(k2));
	CU_ASSERT_NOT_EQUAL(k1, k2);
	CU_ASSERT_PTR_NULL(mr_check(nic, k1, e->pd_idx, 0, pa, 1));
	CU_ASSERT_MR_IS(nic, k2, e->pd_idx, 0, pa, 1);
	/* the stale key cannot deregister the new MR */
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k1), SNIC_ST_NOENT);
	CU_ASSERT_MR_IS(nic, k2, e->pd_idx, 0, pa, 1);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k2), SNIC_ST_NOENT);
	/* garbage keys */
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, 0xffffffffu), SNIC_ST_NOENT);
	CU_ASSERT_PTR_NULL(mr_check(nic, 0xffffffffu, e->pd_idx, 0, pa, 1));
	env_free(e);
}

/* The generation must never be 0 (mr.c: "never key 0"), also after
 * it wraps: 300 registrations of the same slot. */
static void test_mr_key_generation_wrap(void)
{
	struct mr_env *e = env_new();
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	uint32_t prev = 0, key, zero_gen = 0, repeats = 0;

	for (int i = 0; i < 300; i++) {
		CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
						  SNIC_ACCESS_LOCAL_WRITE, &key),
				      SNIC_ST_OK);
		CU_ASSERT_EQUAL(SNIC_KEY_IDX(key), 0);
		if (SNIC_KEY_GEN(key) == 0)
			zero_gen++;
		if (key == prev)
			repeats++;
		prev = key;
		CU_ASSERT_EQUAL_FATAL(fctx_dereg_mr(&e->c, key), SNIC_ST_OK);
	}
	CU_ASSERT_EQUAL(zero_gen, 0);
	CU_ASSERT_EQUAL(repeats, 0);
	env_free(e);
}

static void test_mr_pd_checks(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	uint32_t pd2, key, bad;
	struct fctx c2;
	uint32_t pd_other;

	CU_ASSERT_EQUAL(fctx_alloc_pd(&e->c, &pd2), SNIC_ST_OK);
	CU_ASSERT_NOT_EQUAL(pd2, e->pdn);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, ALL_ACCESS, &key),
			SNIC_ST_OK);
	/* the key works only in its own PD */
	CU_ASSERT_MR_IS(nic, key, e->pd_idx, 0, pa, 16);
	CU_ASSERT_PTR_NULL(mr_check(nic, key, pd2 & (SNIC_MAX_PD - 1), 0, pa, 16));
	/* a PD with an MR cannot go */
	CU_ASSERT_EQUAL(fctx_dealloc_pd(&e->c, e->pdn), SNIC_ST_BUSY);
	/* unknown PD, stale PD */
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, 0x3ff, pa, 4096, 0, &bad), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(fctx_dealloc_pd(&e->c, pd2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, pd2, pa, 4096, 0, &bad), SNIC_ST_NOENT);
	/* a PD of another context */
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c2, &e->dev, 1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_alloc_pd(&c2, &pd_other), SNIC_ST_OK);
	CU_ASSERT_NOT_EQUAL(fctx_reg_mr(&e->c, pd_other, pa, 4096, 0, &bad),
			    SNIC_ST_OK);
	CU_ASSERT_NOT_EQUAL(fctx_reg_mr(&c2, e->pdn, pa, 4096, 0, &bad),
			    SNIC_ST_OK);
	/* nor its MR */
	CU_ASSERT_NOT_EQUAL(fctx_dereg_mr(&c2, key), SNIC_ST_OK);
	CU_ASSERT_MR_IS(nic, key, e->pd_idx, 0, pa, 16);
	CU_ASSERT_NOT_EQUAL(fctx_dealloc_pd(&c2, e->pdn), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, key), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dealloc_pd(&e->c, e->pdn), SNIC_ST_OK);
	env_free(e);
}

static void test_mr_access_flags(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	uint32_t k;

	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_LOCAL_WRITE | SNIC_ACCESS_REMOTE_READ,
				    &k), SNIC_ST_OK);
	CU_ASSERT_MR_IS(nic, k, e->pd_idx, 0, pa, 8);
	CU_ASSERT_MR_IS(nic, k, e->pd_idx, SNIC_ACCESS_LOCAL_WRITE, pa, 8);
	CU_ASSERT_MR_IS(nic, k, e->pd_idx, SNIC_ACCESS_REMOTE_READ, pa, 8);
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, SNIC_ACCESS_REMOTE_WRITE, pa, 8));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, SNIC_ACCESS_REMOTE_ATOMIC, pa, 8));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx,
				    SNIC_ACCESS_REMOTE_READ | SNIC_ACCESS_REMOTE_WRITE,
				    pa, 8));
	/* read-only MR: no local write (RECV / READ target) */
	uint32_t ro;
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, 0, &ro), SNIC_ST_OK);
	CU_ASSERT_MR_IS(nic, ro, e->pd_idx, 0, pa, 8);
	CU_ASSERT_PTR_NULL(mr_check(nic, ro, e->pd_idx, SNIC_ACCESS_LOCAL_WRITE, pa, 8));
	/* unknown access bits (ZERO_BASED = 32, ...) are refused; MW_BIND
	 * (16) is known since memory windows (objects/mw.c) */
	uint32_t bad = 0x5a5a;
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, 1u << 5, &bad),
			SNIC_ST_NOTSUP);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, SNIC_ACCESS_MW_BIND, &bad),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, 1u << 31, &bad),
			SNIC_ST_NOTSUP);
	env_free(e);
}

static void test_mr_remote_write_needs_local_write(void)
{
	struct mr_env *e = env_new();
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	uint32_t k;
	unsigned in_use = 0;

	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_REMOTE_WRITE, &k), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_REMOTE_ATOMIC, &k), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_READ,
				    &k), SNIC_ST_INVAL);
	for (unsigned i = 0; i < SNIC_MAX_MR; i++)
		in_use += e->dev.nic->mrs[i].in_use;
	CU_ASSERT_EQUAL(in_use, 0);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_REMOTE_READ, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_LOCAL_WRITE,
				    &k), SNIC_ST_OK);
	env_free(e);
}

static void test_mr_bounds(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 3 * 4096, 4096);
	uint64_t iova = pa + 100, len = 8000;
	uint32_t k;

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, iova, len, ALL_ACCESS, &k),
			      SNIC_ST_OK);
	CU_ASSERT_MR_IS(nic, k, e->pd_idx, 0, iova, len);
	CU_ASSERT_MR_IS(nic, k, e->pd_idx, 0, iova + len - 1, 1);
	CU_ASSERT_MR_IS(nic, k, e->pd_idx, 0, iova + len, 0);
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova - 1, 1));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova - 1, 2));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova + len, 1));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova + 1, len));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova, len + 1));
	/* overflow and wrap of va + len */
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, UINT64_MAX - 10, 100));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova + 8, UINT64_MAX));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, iova + 8,
				    UINT64_MAX - iova - 4));
	CU_ASSERT_PTR_NULL(mr_check(nic, k, e->pd_idx, 0, 0, iova + 1));
	env_free(e);
}

static void test_mr_reg_args(void)
{
	struct mr_env *e = env_new();
	uint64_t pa = fdev_alloc(&e->dev, 8192, 4096);
	uint32_t pages[3] = { (uint32_t)(pa >> 12), (uint32_t)(pa >> 12) + 1, 0 };
	uint32_t k;

	/* iova + length wraps the 64-bit space */
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0xfffffffffffff000ull,
					  8192, pages, 2, 0, &k), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0xfffffffffffff000ull,
					  4096, pages, 1, 0, &k), SNIC_ST_INVAL);
	/* but ending right below 2^64 is fine */
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0xffffffffffffe000ull,
					  8191, pages, 2, 0, &k), SNIC_ST_OK);
	/* longer than the whole window */
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0, FDEV_MEM_SIZE + 4096,
					  pages, 2, 0, &k), SNIC_ST_INVAL);
	/* page count disagreeing with iova/length */
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x10000, 4096, pages, 2,
					  0, &k), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x10000, 4097, pages, 1,
					  0, &k), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x10800, 4096, pages, 1,
					  0, &k), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x10800, 4096, pages, 2,
					  0, &k), SNIC_ST_OK);
	env_free(e);
}

static void test_mr_zero_length(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint32_t page = 5, k0, k1;

	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x40000, 0, NULL, 0,
					  SNIC_ACCESS_LOCAL_WRITE, &k0), SNIC_ST_OK);
	CU_ASSERT_MR_IS(nic, k0, e->pd_idx, 0, 0x40000, 0);
	CU_ASSERT_PTR_NULL(mr_check(nic, k0, e->pd_idx, 0, 0x40000, 1));
	CU_ASSERT_PTR_NULL(mr_check(nic, k0, e->pd_idx, 0, 0x3ffff, 1));
	/* zero bytes in the middle of a page: the page list names it */
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x40010, 0, &page, 1,
					  0, &k1), SNIC_ST_OK);
	CU_ASSERT_PTR_NULL(mr_check(nic, k1, e->pd_idx, 0, 0x40010, 1));
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 1);
	CU_ASSERT_EQUAL(nic->mtt_free_len[0], SNIC_MAX_MTT);
	env_free(e);
}

static void test_mr_pages_outside_window(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint32_t last = (uint32_t)(FDEV_MEM_SIZE >> 12) - 1;
	uint32_t pages[2] = { last, last + 1 };
	struct snic_cmd_reg_mr in = { 0 };
	uint32_t k;

	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0, 8192, pages, 2, 0,
					  &k), SNIC_ST_FAULT);
	pages[1] = 0xffffffffu;
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0, 8192, pages, 2, 0,
					  &k), SNIC_ST_FAULT);
	/* the page list itself outside the window, or straddling its end */
	in.pdn = e->pdn;
	in.iova = 0;
	in.length = 8192;
	in.npages = 2;
	in.pages_pa = FDEV_MEM_SIZE;
	CU_ASSERT_EQUAL(fctx_reg_mr_raw(&e->c, &in, &k), SNIC_ST_FAULT);
	in.pages_pa = FDEV_MEM_SIZE - 4;
	CU_ASSERT_EQUAL(fctx_reg_mr_raw(&e->c, &in, &k), SNIC_ST_FAULT);
	in.pages_pa = UINT64_MAX - 3;
	CU_ASSERT_EQUAL(fctx_reg_mr_raw(&e->c, &in, &k), SNIC_ST_FAULT);
	/* nothing was kept: no MR, MTT entirely free */
	for (unsigned i = 0; i < SNIC_MAX_MR; i++)
		CU_ASSERT_FALSE(nic->mrs[i].in_use);
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 1);
	CU_ASSERT_EQUAL(nic->mtt_free_start[0], 0);
	CU_ASSERT_EQUAL(nic->mtt_free_len[0], SNIC_MAX_MTT);
	/* the last page of the window is fine */
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0, 4096, pages, 1, 0,
					  &k), SNIC_ST_OK);
	env_free(e);
}

/* The k-th latest dma_prepare range (0: the last) is [pa, pa + len). */
static bool prepared(const struct fake_hal *fh, unsigned k, uint64_t pa,
		     uint64_t len)
{
	unsigned i = (unsigned)((fh->prepares - 1 - k) % FH_PREP_KEEP);

	return fh->prepares > k && fh->prep_pa[i] == pa && fh->prep_len[i] == len;
}

/* A registration announces exactly its pages to the HAL (dma_prepare: the
 * emu fills its page tables there, not on the data path), one range per
 * run of consecutive pages; a refused one announces nothing; a CQ its
 * ring. */
static void test_mr_dma_prepare(void)
{
	struct mr_env *e = env_new();
	struct fake_hal *fh = &e->dev.hal;
	uint64_t pa = fdev_alloc(&e->dev, 5 * 4096, 4096);
	uint32_t p = (uint32_t)(pa >> 12);
	uint32_t pages[5] = { p, p + 1, p + 2, p + 4, p + 3 };
	uint32_t bad[2] = { p, (uint32_t)(FDEV_MEM_SIZE >> 12) };
	uint64_t n0 = fh->prepares;
	struct fcq cq;
	uint32_t k;

	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x10064, 5 * 4096 - 100,
					  pages, 5, ALL_ACCESS, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fh->prepares, n0 + 3);
	CU_ASSERT_TRUE(prepared(fh, 2, pa, 3 * 4096));
	CU_ASSERT_TRUE(prepared(fh, 1, pa + 4 * 4096, 4096));
	CU_ASSERT_TRUE(prepared(fh, 0, pa + 3 * 4096, 4096));
	CU_ASSERT_EQUAL(fctx_reg_mr_pages(&e->c, e->pdn, 0, 8192, bad, 2, 0,
					  &k), SNIC_ST_FAULT);
	CU_ASSERT_EQUAL(fh->prepares, n0 + 3);
	CU_ASSERT_EQUAL(fcq_create(&cq, &e->c, 256), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fh->prepares, n0 + 4);
	CU_ASSERT_TRUE(prepared(fh, 0, cq.ring_pa, 256 * 64));
	env_free(e);
}

/* Scattered pages: reads and writes through the MR land in the right
 * physical pages, byte for byte. */
static void test_mr_translation(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t base = fdev_alloc(&e->dev, 32 * 4096, 4096);
	uint32_t pg0 = (uint32_t)(base >> 12);
	uint32_t pages[4] = { pg0 + 10, pg0 + 5, pg0 + 6, pg0 + 20 };
	uint64_t iova = 0x7f0000001f00ull; /* offset 0xf00 in page 0 */
	uint64_t len = 3 * 4096;
	uint8_t src[3 * 4096], dst[3 * 4096];
	uint32_t k;
	const struct snic_mr *mr;
	uint64_t pa;

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr_pages(&e->c, e->pdn, iova, len, pages,
						4, SNIC_ACCESS_LOCAL_WRITE, &k),
			      SNIC_ST_OK);
	mr = mr_check(nic, k, e->pd_idx, SNIC_ACCESS_LOCAL_WRITE, iova, len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
	CU_ASSERT_EQUAL(mr_va_to_pa(nic, mr, iova, &pa), 0);
	CU_ASSERT_EQUAL(pa, ((uint64_t)(pg0 + 10) << 12) + 0xf00);
	CU_ASSERT_EQUAL(mr_va_to_pa(nic, mr, iova + 0x100, &pa), 0);
	CU_ASSERT_EQUAL(pa, (uint64_t)(pg0 + 5) << 12);
	CU_ASSERT_EQUAL(mr_va_to_pa(nic, mr, iova + len - 1, &pa), 0);
	CU_ASSERT_EQUAL(pa, ((uint64_t)(pg0 + 20) << 12) + 0xeff);
	CU_ASSERT_NOT_EQUAL(mr_va_to_pa(nic, mr, iova - 1, &pa), 0);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
	CU_ASSERT_EQUAL(mr_write(nic, mr, iova, src, (uint32_t)len), 0);
	const uint8_t *m = e->dev.hal.mem;
	CU_ASSERT_EQUAL(memcmp(m + ((uint64_t)(pg0 + 10) << 12) + 0xf00, src, 0x100), 0);
	CU_ASSERT_EQUAL(memcmp(m + ((uint64_t)(pg0 + 5) << 12), src + 0x100, 8192), 0);
	CU_ASSERT_EQUAL(memcmp(m + ((uint64_t)(pg0 + 20) << 12), src + 0x2100,
			       len - 0x2100), 0);
	/* untouched neighbours */
	CU_ASSERT_EQUAL(m[((uint64_t)(pg0 + 10) << 12) + 0xeff], 0);
	CU_ASSERT_EQUAL(m[((uint64_t)(pg0 + 20) << 12) + 0xf00], 0);
	memset(dst, 0, sizeof(dst));
	CU_ASSERT_EQUAL(mr_read(nic, mr, iova, dst, (uint32_t)len), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, len), 0);
	env_free(e);
}

static uint32_t mtt_of(struct snic_nic *nic, uint32_t key)
{
	return nic->mrs[SNIC_KEY_IDX(key)].mtt;
}

static uint32_t reg_n(struct mr_env *e, uint64_t pa, uint32_t npages)
{
	uint32_t k = 0;

	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, (uint64_t)npages * 4096,
				    0, &k), SNIC_ST_OK);
	return k;
}

static void test_mtt_reuse(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 64 * 4096, 4096);
	uint32_t a = reg_n(e, pa, 10), b = reg_n(e, pa, 20), c = reg_n(e, pa, 5);
	uint32_t d, f, g;

	CU_ASSERT_EQUAL(mtt_of(nic, a), 0);
	CU_ASSERT_EQUAL(mtt_of(nic, b), 10);
	CU_ASSERT_EQUAL(mtt_of(nic, c), 30);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, b), SNIC_ST_OK);
	d = reg_n(e, pa, 15); /* first fit: the hole b left */
	CU_ASSERT_EQUAL(mtt_of(nic, d), 10);
	f = reg_n(e, pa, 6);  /* 5 left in the hole: does not fit */
	CU_ASSERT_EQUAL(mtt_of(nic, f), 35);
	g = reg_n(e, pa, 5);  /* exactly fills the hole */
	CU_ASSERT_EQUAL(mtt_of(nic, g), 25);
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 1);
	/* free in an order that exercises every merge case */
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, d), SNIC_ST_OK);  /* alone */
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, c), SNIC_ST_OK);  /* alone */
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 3);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, g), SNIC_ST_OK);  /* prev+next */
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 2);
	CU_ASSERT_EQUAL(nic->mtt_free_start[0], 10);
	CU_ASSERT_EQUAL(nic->mtt_free_len[0], 25);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, f), SNIC_ST_OK);  /* prev+next */
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 1);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, a), SNIC_ST_OK);  /* next */
	CU_ASSERT_EQUAL(nic->sh->mtt_free_n, 1);
	CU_ASSERT_EQUAL(nic->mtt_free_start[0], 0);
	CU_ASSERT_EQUAL(nic->mtt_free_len[0], SNIC_MAX_MTT);
	/* after all that, a fresh MR starts at 0 again */
	a = reg_n(e, pa, 64);
	CU_ASSERT_EQUAL(mtt_of(nic, a), 0);
	env_free(e);
}

/* A context's share of the MR table is finite (SNIC_CTX_MAX_MR, the
 * quota objects/quota.c keeps); the error is NOMEM and a freed slot is
 * reused. */
static void test_mr_table_full(void)
{
	struct mr_env *e = env_new();
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	uint32_t k, first = 0, extra;
	unsigned ok = 0;

	for (unsigned i = 0; i < SNIC_CTX_MAX_MR; i++) {
		if (fctx_reg_mr(&e->c, e->pdn, pa, 4096, 0, &k) == SNIC_ST_OK)
			ok++;
		if (i == 100)
			first = k;
	}
	CU_ASSERT_EQUAL(ok, SNIC_CTX_MAX_MR);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, 0, &extra),
			SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, first), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096, 0, &extra), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(extra), 100);
	CU_ASSERT_NOT_EQUAL(extra, first);
	env_free(e);
}

/* A re-registration with a new translation is held to the context's MTT
 * share (SNIC_CTX_MAX_MTT) as a registration is: the MR's own pages count
 * as given back, so the same size passes and one page more than the share
 * left is NOMEM, the MR unchanged.  (The rest of the share is taken by
 * setting the context's count, as if other MRs held it.) */
static void test_mr_rereg_mtt_quota(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 3 * 4096, 4096);
	struct snic_cmd_rereg_mr rr = { .flags = SNIC_REREG_TRANSLATION };
	uint32_t pages[3], k, used;

	for (unsigned p = 0; p < 3; p++)
		pages[p] = (uint32_t)(pa >> SNIC_PAGE_SHIFT) + p;
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
					  SNIC_ACCESS_LOCAL_WRITE, &k), SNIC_ST_OK);
	used = nic->sh->ctx_mtt[e->c.slot];
	CU_ASSERT_EQUAL(used, 1);
	nic->sh->ctx_mtt[e->c.slot] = SNIC_CTX_MAX_MTT - 1; /* 1 page left */
	rr.key = k;
	rr.reg.access = SNIC_ACCESS_LOCAL_WRITE;
	rr.reg.iova = pa;
	rr.reg.pages_pa = fdev_alloc(&e->dev, sizeof(pages), 64);
	memcpy(fdev_ptr(&e->dev, rr.reg.pages_pa), pages, sizeof(pages));
	/* 1 -> 3 pages: 2 more than the share's 1 left */
	rr.reg.length = 3 * 4096;
	rr.reg.npages = 3;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(nic->mrs[SNIC_KEY_IDX(k)].npages, 1);
	CU_ASSERT_EQUAL(nic->sh->ctx_mtt[e->c.slot], SNIC_CTX_MAX_MTT - 1);
	/* 1 -> 2 pages: exactly the share */
	rr.reg.length = 2 * 4096;
	rr.reg.npages = 2;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(nic->mrs[SNIC_KEY_IDX(k)].npages, 2);
	CU_ASSERT_EQUAL(nic->sh->ctx_mtt[e->c.slot], SNIC_CTX_MAX_MTT);
	nic->sh->ctx_mtt[e->c.slot] = 2; /* the borrowed share back */
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(nic->sh->ctx_mtt[e->c.slot], 0);
	env_free(e);
}

/* Keys carry a 20-bit generation that does not start at 1 (a fresh slot's
 * first key cannot be told in advance) and skips 0 when it wraps. */
static void test_mr_key_generation_20bit(void)
{
	struct mr_env *e = env_new();
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	uint32_t key;

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
					  SNIC_ACCESS_LOCAL_WRITE, &key), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(key), 0);
	CU_ASSERT_NOT_EQUAL(SNIC_KEY_GEN(key), 1);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, key), SNIC_ST_OK);
	e->dev.nic->mrs[0].key_gen = SNIC_KEY_GEN(~0u) - 1;
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_LOCAL_WRITE, &key), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_GEN(key), SNIC_KEY_GEN(~0u));
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, key), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
				    SNIC_ACCESS_LOCAL_WRITE, &key), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_GEN(key), 1);
	env_free(e);
}

/* An SGE saved in a message cursor whose MR was deregistered and whose
 * slot came back (generation forced equal, as after 2^20 registrations)
 * at a distant iova: the cursor's next use re-checks the bounds and fails;
 * it never indexes the MTT outside the new MR (issue 10 item 2). */
static void test_mr_saved_sge_distant_reuse(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 8192, 4096);
	struct snic_wqe_sge sge;
	struct snic_sgl sgl;
	uint8_t buf[256] = { 0 };
	uint32_t k1, k2, pg = (uint32_t)(pa >> SNIC_PAGE_SHIFT);

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa, 8192,
					  SNIC_ACCESS_LOCAL_WRITE, &k1), SNIC_ST_OK);
	sge = (struct snic_wqe_sge){ .addr = pa + 4096, .length = 4096, .lkey = k1 };
	CU_ASSERT_EQUAL_FATAL(sgl_load(nic, &sgl, &sge, 1, e->pd_idx,
				       SNIC_ACCESS_LOCAL_WRITE), SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), 0);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c, k1), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr_pages(&e->c, e->pdn, 0x7000000000ull,
						4096, &pg, 1,
						SNIC_ACCESS_LOCAL_WRITE, &k2),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(SNIC_KEY_IDX(k2), SNIC_KEY_IDX(k1));
	nic->mrs[SNIC_KEY_IDX(k1)].key_gen = SNIC_KEY_GEN(k1);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), -1);
	CU_ASSERT_EQUAL(sgl_copy_out(nic, &sgl, buf, 16), -1);
	env_free(e);
}

/* A saved SGE is used without a second lookup only while no MR changed
 * since it was checked (the MR epoch): a re-registration that takes the
 * MR's local write access away, or moves it to another PD, makes the
 * cursor's next use fail; a change to another MR only costs a new
 * check, which passes (issue 10 item 2, issue 11). */
static void test_mr_saved_sge_rereg(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 8192, 4096);
	struct snic_cmd_rereg_mr rr = { .flags = SNIC_REREG_ACCESS };
	struct snic_wqe_sge sge;
	struct snic_sgl sgl;
	uint8_t buf[64] = { 0 };
	uint32_t k1, k2, pdn2;

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
					  SNIC_ACCESS_LOCAL_WRITE, &k1), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa + 4096, 4096,
					  SNIC_ACCESS_LOCAL_WRITE, &k2), SNIC_ST_OK);
	sge = (struct snic_wqe_sge){ .addr = pa, .length = 4096, .lkey = k1 };
	CU_ASSERT_EQUAL_FATAL(sgl_load(nic, &sgl, &sge, 1, e->pd_idx,
				       SNIC_ACCESS_LOCAL_WRITE), SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), 0);
	/* another MR changes: checked again, still allowed */
	rr.key = k2;
	rr.reg.access = 0;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), 0);
	/* this MR loses local write: the next piece is refused */
	rr.key = k1;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), -1);
	/* write back, then the MR goes to another PD: refused again */
	rr.reg.access = SNIC_ACCESS_LOCAL_WRITE;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), 0);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c, &pdn2), SNIC_ST_OK);
	rr.flags = SNIC_REREG_PD;
	rr.reg.pdn = pdn2;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &sgl, buf, 16), -1);
	CU_ASSERT_EQUAL(sgl_copy_out(nic, &sgl, buf, 16), -1);
	env_free(e);
}

/* sgl_reload (a READ's kept SGEs at its first response): taken as they
 * are while no MR slot has changed since sgl_load checked them; after a
 * change, checked again whole: refused once the MR lost local write. */
static void test_mr_sgl_reload(void)
{
	struct mr_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	uint64_t pa = fdev_alloc(&e->dev, 4096, 4096);
	struct snic_cmd_rereg_mr rr = { .flags = SNIC_REREG_ACCESS };
	struct snic_wqe_sge sge;
	struct snic_sgl sgl, again;
	uint8_t buf[64] = { 0 };
	uint32_t k1;

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, pa, 4096,
					  SNIC_ACCESS_LOCAL_WRITE, &k1), SNIC_ST_OK);
	sge = (struct snic_wqe_sge){ .addr = pa, .length = 4096, .lkey = k1 };
	CU_ASSERT_EQUAL_FATAL(sgl_load(nic, &sgl, &sge, 1, e->pd_idx,
				       SNIC_ACCESS_LOCAL_WRITE), SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(sgl_reload(nic, &again, sgl.sge, sgl.num, e->pd_idx,
				   SNIC_ACCESS_LOCAL_WRITE, sgl.epoch),
			SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(again.total, 4096);
	CU_ASSERT_EQUAL(again.epoch, sgl.epoch);
	CU_ASSERT_EQUAL(sgl_copy_in(nic, &again, buf, 16), 0);
	/* never checked: checked now */
	CU_ASSERT_EQUAL(sgl_reload(nic, &again, sgl.sge, sgl.num, e->pd_idx,
				   SNIC_ACCESS_LOCAL_WRITE, SNIC_SGL_UNCHECKED),
			SNIC_WC_SUCCESS);
	/* the MR loses local write: the kept SGE is refused */
	rr.key = k1;
	rr.reg.access = 0;
	CU_ASSERT_EQUAL(fctx_cmd(&e->c, SNIC_CMD_REREG_MR, &rr, sizeof(rr), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(sgl_reload(nic, &again, sgl.sge, sgl.num, e->pd_idx,
				   SNIC_ACCESS_LOCAL_WRITE, sgl.epoch),
			SNIC_WC_LOC_PROT_ERR);
	env_free(e);
}

UNIT_SUITE(mr, NULL, NULL,
	   UNIT_TEST(test_mr_sgl_reload),
	   UNIT_TEST(test_mr_key_generation_20bit),
	   UNIT_TEST(test_mr_rereg_mtt_quota),
	   UNIT_TEST(test_mr_saved_sge_rereg),
	   UNIT_TEST(test_mr_saved_sge_distant_reuse),
	   UNIT_TEST(test_mr_key_stale_after_reuse),
	   UNIT_TEST(test_mr_key_generation_wrap),
	   UNIT_TEST(test_mr_pd_checks),
	   UNIT_TEST(test_mr_access_flags),
	   UNIT_TEST(test_mr_remote_write_needs_local_write),
	   UNIT_TEST(test_mr_bounds),
	   UNIT_TEST(test_mr_reg_args),
	   UNIT_TEST(test_mr_zero_length),
	   UNIT_TEST(test_mr_pages_outside_window),
	   UNIT_TEST(test_mr_translation),
	   UNIT_TEST(test_mr_dma_prepare),
	   UNIT_TEST(test_mtt_reuse),
	   UNIT_TEST(test_mr_table_full));
