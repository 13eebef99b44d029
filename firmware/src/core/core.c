/* SPDX-License-Identifier: MIT */
/* The core's binding to the HAL and the BAR. */
#include <string.h>

#include "core/core.h"

bool core_init(struct snic_core *c, const struct snic_nic_config *cfg,
	       const struct snic_hal *hal, void *bar)
{
	c->hal = hal;
	c->ops = hal->ops;
	c->hal_ctx = hal->ctx;
	c->cfg = *cfg;
	strncpy(c->name, cfg->name, sizeof(c->name) - 1);
	c->cfg.name = c->name;
	c->bar = bar;
	c->hdr = (struct snic_bar_hdr *)((uint8_t *)bar + SNIC_BAR_HDR_OFF);
	c->db = (struct snic_doorbells *)((uint8_t *)bar + SNIC_BAR_DB_OFF);
	return true;
}

void core_log(struct snic_core *c, int level, const char *msg)
{
	c->ops->log(c->hal_ctx, level, msg);
}

struct snic_ctx_slot *core_ctx_slot(struct snic_core *c, unsigned ctx)
{
	return (struct snic_ctx_slot *)(c->bar + SNIC_BAR_CTX_OFF +
					(size_t)ctx * SNIC_CTX_SLOT_SIZE);
}
