/* SPDX-License-Identifier: MIT */
/* The core's binding to the HAL and the BAR. */
#include <string.h>

#include "core/core.h"

/* The first mandatory HAL op that is missing (its name), or NULL when
 * all are there.  Checked once at init: the data path calls them
 * unchecked.  dma_load_acquire32, netdev_rx, dma_prepare, dma_read_crc
 * and dma_prefetch are optional. */
const char *core_hal_missing(const struct snic_hal_ops *ops)
{
	const struct {
		const char *name;
		bool there;
	} req[] = {
		{ "dma_read", ops->dma_read }, { "dma_write", ops->dma_write },
		{ "dma_cmp_swap", ops->dma_cmp_swap },
		{ "dma_fetch_add", ops->dma_fetch_add },
		{ "now_ns", ops->now_ns }, { "rx_burst", ops->rx_burst },
		{ "tx_burst", ops->tx_burst }, { "pkt_alloc", ops->pkt_alloc },
		{ "pkt_free", ops->pkt_free }, { "link_up", ops->link_up },
		{ "notify_host", ops->notify_host }, { "log", ops->log },
	};

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (!req[i].there)
			return req[i].name;
	return NULL;
}

bool core_init(struct snic_core *c, const struct snic_nic_config *cfg,
	       const struct snic_hal *hal, void *bar)
{
	c->hal = hal;
	c->ops = hal->ops;
	c->hal_ctx = hal->ctx;
	c->cfg = *cfg;
	strncpy(c->name, cfg->name, sizeof(c->name) - 1);
	c->cfg.name = c->name;
	memcpy(c->loop_mac, cfg->mac, 6);
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
