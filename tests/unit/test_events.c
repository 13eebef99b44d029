/* SPDX-License-Identifier: MIT */
/* Unaffiliated async events: the port going down and up again reaches
 * every open context as IBV_EVENT_PORT_ERR / IBV_EVENT_PORT_ACTIVE. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };

/* The event types in context slot `slot`'s queue from index *ci on. */
static unsigned drain(struct fdev *d, unsigned slot, uint32_t *ci,
		      uint32_t *types, unsigned max)
{
	struct snic_ctx_slot *s = fdev_slot(d, slot);
	uint32_t pi = atomic_load(&s->eq_pi);
	unsigned n = 0;

	for (; *ci != pi && n < max; (*ci)++)
		if (s->eq[*ci % SNIC_EQ_SIZE].obj == 1)
			types[n++] = s->eq[*ci % SNIC_EQ_SIZE].type;
	atomic_store(&s->eq_ci, *ci);
	return n;
}

static void link_step(struct fdev *d)
{
	fake_hal_advance(&d->hal, 2 * SNIC_STATS_PERIOD_NS);
	fdev_poll(d, 4);
}

static void test_port_events(void)
{
	struct fdev *d = calloc(1, sizeof(*d));
	struct fctx c0, c1;
	uint32_t ci0 = 0, ci1 = 0, t[8];

	fdev_init(d, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c0, d, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c1, d, 3), SNIC_ST_OK);
	link_step(d);
	CU_ASSERT_EQUAL(drain(d, 0, &ci0, t, 8), 0); /* steady: no event */
	d->hal.link_is_up = 0;
	link_step(d);
	link_step(d);
	CU_ASSERT_EQUAL_FATAL(drain(d, 0, &ci0, t, 8), 1);
	CU_ASSERT_EQUAL(t[0], 10u); /* IBV_EVENT_PORT_ERR */
	d->hal.link_is_up = 1;
	link_step(d);
	CU_ASSERT_EQUAL_FATAL(drain(d, 0, &ci0, t, 8), 1);
	CU_ASSERT_EQUAL(t[0], 9u);  /* IBV_EVENT_PORT_ACTIVE */
	/* the other context saw both, in order */
	CU_ASSERT_EQUAL_FATAL(drain(d, 3, &ci1, t, 8), 2);
	CU_ASSERT_EQUAL(t[0], 10u);
	CU_ASSERT_EQUAL(t[1], 9u);
	CU_ASSERT_EQUAL(fdev_fini(d), 0);
	free(d);
}

/* A context slot reused by a new process: the event queue starts empty
 * for both sides, whatever consumer index the previous owner left (a
 * stale eq_ci made the firmware see a full queue and drop every event). */
static void test_slot_reuse_eq(void)
{
	struct fdev *d = calloc(1, sizeof(*d));
	struct snic_ctx_slot *s;
	struct fctx c;
	uint32_t ci = 0, t[8];

	fdev_init(d, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c, d, 2), SNIC_ST_OK);
	s = fdev_slot(d, 2);
	atomic_store(&s->eq_ci, 77); /* the previous owner's position */
	CU_ASSERT_EQUAL_FATAL(fctx_cmd(&c, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL,
				       0), SNIC_ST_OK);
	atomic_store(&s->state, SNIC_CTX_FREE); /* as the host driver does */
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c, d, 2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(atomic_load(&s->eq_ci), 0);
	link_step(d);
	d->hal.link_is_up = 0;
	link_step(d);
	link_step(d);
	CU_ASSERT_EQUAL_FATAL(drain(d, 2, &ci, t, 8), 1);
	CU_ASSERT_EQUAL(t[0], 10u); /* IBV_EVENT_PORT_ERR, not dropped */
	CU_ASSERT_EQUAL(fdev_counter(d, "eq_overruns"), 0);
	CU_ASSERT_EQUAL(fdev_fini(d), 0);
	free(d);
}

UNIT_SUITE(events, NULL, NULL,
	   UNIT_TEST(test_port_events),
	   UNIT_TEST(test_slot_reuse_eq));
