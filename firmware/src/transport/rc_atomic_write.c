/* SPDX-License-Identifier: MIT */
/*
 * The responder's RDMA Atomic Write (IBTA 1.5; rxe's atomic_write_reply):
 * a RETH for exactly 8 bytes at an 8-byte aligned address of an MR that
 * allows remote write, and those 8 bytes, stored as one indivisible
 * 64-bit write after everything the QP executed before it (the responder
 * executes in order).  Answered like an RDMA WRITE (a coalesced ACK); a
 * duplicate is re-ACKed, not executed again.
 */
#include <string.h>

#include "transport/rc_resp.h"

enum { ATW_CAS_TRIES = 64 };

/* One 64-bit store through the HAL's atomics: compare-and-swap from the
 * value read until no other writer came in between.  The host CPU or
 * another QP changing the word meanwhile makes the swap fail and retry;
 * a word changing more than ATW_CAS_TRIES times in a row is an
 * operational error, not a torn write. */
static int store64(struct snic_nic *nic, uint64_t pa, uint64_t val)
{
	uint64_t cur, old;

	if (core_dma_read(&nic->core, pa, &cur, sizeof(cur)))
		return -1;
	for (unsigned i = 0; i < ATW_CAS_TRIES; i++) {
		if (core_dma_cmp_swap(&nic->core, pa, cur, val, &old))
			return -1;
		if (old == cur)
			return 0;
		cur = old;
	}
	return -1;
}

enum atw_result atomic_write_exec(struct snic_nic *nic, struct snic_qp *qp,
				  const struct roce_hdrs *h)
{
	const struct snic_mr *mr;
	uint64_t pa, val;

	if (h->reth_len != 8 || h->payload_len != 8 || (h->reth_va & 7))
		return ATW_INVALID;
	if (!(qp->attr.qp_access_flags & SNIC_ACCESS_REMOTE_WRITE) ||
	    !(mr = rkey_check(nic, qp, h->reth_rkey, SNIC_ACCESS_REMOTE_WRITE,
			    h->reth_va, 8)) ||
	    mr_va_to_pa(nic, mr, h->reth_va, &pa))
		return ATW_RKEY;
	/* the bytes as they came: memory gets them in this order */
	memcpy(&val, h->payload, sizeof(val));
	if (store64(nic, pa, val))
		return ATW_REM_OP;
	CNT_INC(&nic->core, atomics);
	qp->resp.msn++;
	return ATW_OK;
}
