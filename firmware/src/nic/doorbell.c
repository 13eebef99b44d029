/* SPDX-License-Identifier: MIT */
/* Doorbells: the two-level bitmap of hostif.h, read once per pass. */
#include "nic/top.h"

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
		work += cmd_poll(nic, bits);
	}
	sum &= ~SNIC_DB_SUMMARY_CMD;
	while (sum) {
		unsigned w = (unsigned)__builtin_ctzll(sum);
		uint64_t bits;

		sum &= sum - 1;
		if (w >= SNIC_DB_QP_WORDS)
			continue;
		bits = atomic_exchange_explicit(&nic->core.db->qp_bits[w], 0,
						memory_order_acquire);
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
			qp_doorbell(nic, qp);
		}
	}
	return work;
}

