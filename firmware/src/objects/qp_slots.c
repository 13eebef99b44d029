/* SPDX-License-Identifier: MIT */
/*
 * QP-table slots: which are free, and each context's QPs (a list through
 * the slots, their number, and how many hold a connection set), kept up
 * to date as QPs are claimed and released, so no command walks all
 * SNIC_MAX_QP slots: CREATE_QP's free slot and quota, MODIFY_QP's quota of
 * connection sets (objects/quota.c) and a context's teardown (nic/cmd.c
 * ctx_destroy) cost the same next to 10,000 idle QPs as next to none
 * (issue 11, many QPs).
 *
 * The slot chosen is the one the walk over the table chose: the lowest
 * free slot on the wanted core that is not lingering after a destroy
 * (rc_ack.c re-ACKs a destroyed RC QP's duplicates until linger_until),
 * else the lowest lingering one.  The free bitmap's summary skips 64
 * taken slots per bit; lingering slots are few (the last ms's destroyed
 * connected QPs) and only they and other cores' slots are stepped over.
 */
#include <string.h>

#include "objects/objects.h"

#define WORDS (SNIC_MAX_QP / 64)
_Static_assert(SNIC_MAX_QP % 4096 == 0 && SNIC_MAX_QP < QP_SLOT_NONE,
	       "QP slot bitmap and links");

void qp_slots_init(struct snic_nic *nic)
{
	struct snic_nic_shared *sh = nic->sh;

	for (uint32_t w = 0; w < WORDS; w++)
		sh->qp_free_bits[w] = ~0ull;
	sh->qp_free_bits[0] &= ~3ull; /* QPN 0 and 1: IBTA 10.2.4 */
	for (uint32_t s = 0; s < WORDS / 64; s++)
		sh->qp_free_sum[s] = ~0ull;
	for (uint32_t c = 0; c < SNIC_MAX_CTX; c++)
		sh->ctx_qp_head[c] = QP_SLOT_NONE;
	memset(sh->ctx_qps, 0, sizeof(sh->ctx_qps));
	memset(sh->ctx_conns, 0, sizeof(sh->ctx_conns));
	sh->xrc_recv_qps = 0;
}

/* The lowest free slot >= from, or SNIC_MAX_QP. */
static uint32_t next_free(const struct snic_nic_shared *sh, uint32_t from)
{
	uint32_t w = from / 64;
	uint64_t bits;

	if (from >= SNIC_MAX_QP)
		return SNIC_MAX_QP;
	bits = sh->qp_free_bits[w] & (~0ull << (from % 64));
	while (!bits) {
		uint32_t s = ++w / 64;
		uint64_t sum;

		if (w >= WORDS)
			return SNIC_MAX_QP;
		sum = sh->qp_free_sum[s] & (~0ull << (w % 64));
		while (!sum) {
			if (++s >= WORDS / 64)
				return SNIC_MAX_QP;
			sum = sh->qp_free_sum[s];
		}
		w = s * 64 + (uint32_t)__builtin_ctzll(sum);
		bits = sh->qp_free_bits[w];
	}
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

uint32_t qp_free_slot(const struct snic_nic *nic, int want)
{
	uint32_t any = SNIC_MAX_QP;

	for (uint32_t i = next_free(nic->sh, 2); i < SNIC_MAX_QP;
	     i = next_free(nic->sh, i + 1)) {
		if (!qp_slot_fits(nic, i, want))
			continue;
		if (nic->core.now >= nic->qps[i].linger_until)
			return i;
		if (any == SNIC_MAX_QP)
			any = i;
	}
	return any;
}

void qp_slot_take(struct snic_nic *nic, uint32_t i, unsigned ctx)
{
	struct snic_nic_shared *sh = nic->sh;
	uint64_t *word = &sh->qp_free_bits[i / 64];
	uint16_t head = sh->ctx_qp_head[ctx];

	*word &= ~(1ull << (i % 64));
	if (!*word)
		sh->qp_free_sum[i / 4096] &= ~(1ull << (i / 64 % 64));
	sh->qp_ctx_prev[i] = QP_SLOT_NONE;
	sh->qp_ctx_next[i] = head;
	if (head != QP_SLOT_NONE)
		sh->qp_ctx_prev[head] = (uint16_t)i;
	sh->ctx_qp_head[ctx] = (uint16_t)i;
	sh->ctx_qps[ctx]++;
	sh->xrc_recv_qps += nic->qps[i].type == SNIC_QPT_XRC_RECV;
}

void qp_slot_put(struct snic_nic *nic, uint32_t i, unsigned ctx)
{
	struct snic_nic_shared *sh = nic->sh;
	uint16_t prev = sh->qp_ctx_prev[i], next = sh->qp_ctx_next[i];

	sh->qp_free_bits[i / 64] |= 1ull << (i % 64);
	sh->qp_free_sum[i / 4096] |= 1ull << (i / 64 % 64);
	if (prev != QP_SLOT_NONE)
		sh->qp_ctx_next[prev] = next;
	else
		sh->ctx_qp_head[ctx] = next;
	if (next != QP_SLOT_NONE)
		sh->qp_ctx_prev[next] = prev;
	sh->ctx_qps[ctx]--;
	sh->xrc_recv_qps -= nic->qps[i].type == SNIC_QPT_XRC_RECV;
}
