/* SPDX-License-Identifier: MIT */
/* Doorbells: the three-level bitmap of hostif.h, read once per pass. */
#include "nic/top.h"

/* The QPs flagged in QP word w. */
static unsigned qp_word_poll(struct snic_nic *nic, unsigned w)
{
	uint64_t bits = atomic_exchange_explicit(&nic->core.db->qp_bits[w], 0,
						 memory_order_acquire);
	unsigned work = 0;

	while (bits) {
		unsigned b = (unsigned)__builtin_ctzll(bits);
		struct snic_qp *qp = &nic->qps[w * 64 + b];

		bits &= bits - 1;
		core_trace(&nic->core, SNIC_TR_DOORBELL, w * 64 + b);
		CNT_INC(&nic->core, doorbells);
		work++;
		if (!qp->in_use) {
			CNT_INC(&nic->core, doorbells_spurious);
			continue;
		}
		if (qp->core) /* another core's QP: to it (nic/xcore.c) */
			xcore_doorbell(nic, qp, w, b);
		else
			qp_doorbell(nic, qp);
	}
	return work;
}

/* The QP words flagged in group word g. */
static unsigned grp_word_poll(struct snic_nic *nic, unsigned g)
{
	uint64_t bits = atomic_exchange_explicit(&nic->core.db->grp_bits[g], 0,
						 memory_order_acquire);
	unsigned work = 0;

	while (bits) {
		unsigned w = g * 64 + (unsigned)__builtin_ctzll(bits);

		bits &= bits - 1;
		if (w < SNIC_DB_QP_WORDS)
			work += qp_word_poll(nic, w);
	}
	return work;
}

unsigned doorbell_poll(struct snic_nic *nic)
{
	uint64_t sum = atomic_exchange_explicit(&nic->core.db->summary, 0,
						memory_order_acquire);
	unsigned work = 0;

	if (!sum)
		return 0;
	if (sum & SNIC_DB_SUMMARY_CMD) {
		uint64_t bits = atomic_exchange_explicit(&nic->core.db->cmd_bits, 0,
							 memory_order_acquire);
		xcore_park_all(nic); /* commands run alone (nic/xcore.c) */
		work += cmd_poll(nic, bits);
		xcore_unpark_all(nic);
	}
	sum &= ~SNIC_DB_SUMMARY_CMD;
	while (sum) {
		unsigned g = (unsigned)__builtin_ctzll(sum);

		sum &= sum - 1;
		if (g < SNIC_DB_GRP_WORDS)
			work += grp_word_poll(nic, g);
	}
	return work;
}
