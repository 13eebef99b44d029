/* SPDX-License-Identifier: MIT */
/* Asynchronous events to the host: one event queue per context slot. */
#include "core/core.h"

void core_event(struct snic_core *c, unsigned ctx, enum snic_event_type type,
		uint32_t obj)
{
	struct snic_ctx_slot *s;
	uint32_t pi, ci;

	if (c->core_id) { /* the event queues are core 0's (nic/xcore.c) */
		struct snic_xc_msg m = { .type = SNIC_XC_EVENT, .a = ctx,
					 .b = (uint32_t)type, .c = obj };

		core_xc_send_wait(c, 0, &m);
		return;
	}
	if (ctx >= SNIC_MAX_CTX || !c->ctx_open[ctx])
		return;
	s = core_ctx_slot(c, ctx);
	pi = c->eq_pi[ctx];
	ci = atomic_load_explicit(&s->eq_ci, memory_order_acquire);
	if (pi - ci >= SNIC_EQ_SIZE) {
		CNT_INC(c, eq_overruns);
		return;
	}
	s->eq[pi % SNIC_EQ_SIZE] = (struct snic_eqe){ .type = (uint32_t)type,
						       .obj = obj };
	c->eq_pi[ctx] = pi + 1;
	atomic_store_explicit(&s->eq_pi, pi + 1, memory_order_release);
	c->ops->notify_host(c->hal_ctx, &s->eq_pi);
}

/* The port went up or down: IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR
 * (obj = port 1) to every open context (IBTA 11.6.3.3, unaffiliated). */
void core_port_event(struct snic_core *c, bool up)
{
	for (unsigned i = 0; i < SNIC_MAX_CTX; i++)
		if (c->ctx_open[i])
			core_event(c, i, up ? SNIC_EV_PORT_ACTIVE : SNIC_EV_PORT_ERR, 1);
}
