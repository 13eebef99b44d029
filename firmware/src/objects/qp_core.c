/* SPDX-License-Identifier: MIT */
/*
 * Which core runs a QP (DESIGN.md "Many cores", nic/xcore.c): the QPN
 * says, QP slot idx belonging to core idx % ncores, so the steering stage
 * needs nothing but the destination QPN (as a port's RSS would hash it).
 * The QP's slot is chosen so that:
 *  - a QP on an SRQ runs on the SRQ's core, (srq index + 1) % ncores:
 *    its receives take the SRQ's WQEs, which only one core may do.  The
 *    first SRQ goes to core 1, not core 0: core 0 already polls the
 *    ports, steers every frame, runs the commands and writes every
 *    core's CQEs, and an application with one SRQ (UCX's rc_verbs has one
 *    per worker, so Open MPI and MPICH over it) puts all its RC QPs
 *    there: on core 0 they would leave the other cores idle;
 *  - UD, raw packet and XRC target QPs run on core 0, with the port: their
 *    receives fan out (multicast groups, flow rules, the XRC SRQ a packet
 *    names), which is core 0's work;
 *  - the other RC, UC and XRC initiator QPs take the lowest free slot,
 *    which spreads QPs created one after another over the cores.
 */
#include "objects/objects.h"

/* The core a new QP must run on, or -1 for any. */
int qp_want_core(const struct snic_nic *nic, uint32_t qp_type, int srq)
{
	uint32_t n = nic->sh->xc.ncores;

	if (n <= 1)
		return -1;
	switch (qp_type) {
	case SNIC_QPT_RC:
	case SNIC_QPT_UC:
	case SNIC_QPT_XRC_SEND:
		return srq >= 0 ? (int)(((uint32_t)srq + 1) % n) : -1;
	default:
		return 0;
	}
}

bool qp_slot_fits(const struct snic_nic *nic, uint32_t idx, int want)
{
	return want < 0 || qp_slot_core(nic, idx) == (unsigned)want;
}
