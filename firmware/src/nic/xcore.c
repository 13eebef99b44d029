/* SPDX-License-Identifier: MIT */
/*
 * The cores of a NIC (DESIGN.md "Many cores").  Each QP belongs to one
 * core (objects/qp_core.c) which alone runs its transport: its work lists,
 * timer wheel, TX queue and counters are that core's (struct snic_nic is
 * a core's view).  Core 0 holds everything that is not one QP's: the
 * command channel, doorbells, the port (nic/steer.c), CQs and event
 * queues, ARP/ND and the CM.  The data path crosses cores only through
 * single-producer/single-consumer rings (core/xcore.h): doorbells and
 * learnt MACs go from core 0 to the owner, events, the CQs the owner
 * wrote CQEs into (it writes them itself, objects/cq.c) and neighbour
 * resolutions from the owner to core 0.  No locks on the data path.
 *
 * The objects tables (QPs, MRs, PDs, CQs, SRQs...) are written by
 * commands on core 0 and read by every core.  Rather than forward each
 * command to the core owning its object, or keep every reader on an
 * epoch, commands run while the other cores are parked, i.e. between
 * passes (holding no half-done work): core k flags in_pass then looks at
 * park_gen, core 0 makes park_gen odd then waits for every in_pass to
 * clear (all seq_cst: of the two, one sees the other's store, so either
 * core k skips its pass while park_gen is odd or core 0 waits for its
 * pass to end).  An idle core, asleep between passes, costs core 0
 * nothing.  So a command never runs beside a data pass, whichever core's
 * objects it changes (a QP's modify, a CQ's destroy, an MR's
 * deregistration, a whole context's teardown) and its writes are visible
 * to every core's next pass.  The cost: one seq_cst store per pass on
 * cores k, and on the command path the end of the passes under way.  Frames and
 * messages still queued for an object a command destroyed are checked
 * again where they land (a QP slot keeps its core for its life: the
 * receive path finds no such QPN, the doorbell and neighbour handlers
 * below no QP of theirs).
 */
#include <string.h>

#include "nic/top.h"

#define XC_MSG_BUDGET 64 /* messages per ring per pass */

static void ring_wait(struct snic_xcore *xc, unsigned from, unsigned to);

/* Memory of a NIC of n cores: n views, the shared part, the rings to and
 * from core 0. */
static size_t view_size(void)
{
	return (sizeof(struct snic_nic) + 63) & ~(size_t)63;
}

static size_t shared_size(void)
{
	return (sizeof(struct snic_nic_shared) + 63) & ~(size_t)63;
}

static size_t ring_pair_size(void)
{
	return xc_ring_size(SNIC_XC_PKT_RING, sizeof(struct snic_pkt *)) +
	       xc_ring_size(SNIC_XC_MSG_RING, sizeof(struct snic_xc_msg));
}

size_t snic_nic_size_cores(unsigned ncores)
{
	if (ncores < 1 || ncores > SNIC_MAX_CORES)
		return 0;
	return ncores * view_size() + shared_size() +
	       2 * (ncores - 1) * ring_pair_size();
}

/* The views' pointers into the shared part, and the rings. */
struct snic_nic_shared *xcore_layout(void *mem, unsigned ncores)
{
	uint8_t *m = mem;
	struct snic_nic_shared *sh = (void *)(m + ncores * view_size());
	uint8_t *r = (uint8_t *)sh + shared_size();

	sh->xc.ncores = ncores;
	sh->xc.ring_wait = ring_wait;
	for (unsigned k = 0; k < ncores; k++) {
		struct snic_nic *v = (void *)(m + k * view_size());

		sh->xc.views[k] = v;
		v->sh = sh;
		v->neigh = &sh->neigh;
		v->pds = sh->pds;
		v->mrs = sh->mrs;
		v->cqs = sh->cqs;
		v->qps = sh->qps;
		v->srqs = sh->srqs;
		v->xrcds = sh->xrcds;
		v->conns = sh->conns;
		v->conn_free = sh->conn_free;
		v->mtt = sh->mtt;
		v->mtt_free_start = sh->mtt_free_start;
		v->mtt_free_len = sh->mtt_free_len;
		v->dms = sh->dms;
		v->mcast = sh->mcast;
		v->flows = sh->flows;
		v->cm = &sh->cm;
	}
	for (unsigned k = 1; k < ncores; k++) {
		unsigned dir[2][2] = { { 0, k }, { k, 0 } };

		for (unsigned d = 0; d < 2; d++) {
			unsigned f = dir[d][0], t = dir[d][1];

			sh->xc.pkt[f][t] = xc_ring_init(r, SNIC_XC_PKT_RING,
						       sizeof(struct snic_pkt *));
			r += xc_ring_size(SNIC_XC_PKT_RING, sizeof(struct snic_pkt *));
			sh->xc.msg[f][t] = xc_ring_init(r, SNIC_XC_MSG_RING,
						       sizeof(struct snic_xc_msg));
			r += xc_ring_size(SNIC_XC_MSG_RING, sizeof(struct snic_xc_msg));
		}
	}
	return sh;
}

/* ---------------------------------------------------------------------- */
/* Park: commands run while every other core waits between passes.        */

static unsigned drain_to0(struct snic_nic *nic0);

void xcore_park_all(struct snic_nic *nic0)
{
	struct snic_xcore *xc = nic0->core.xc;
	uint32_t gen;

	if (!xc)
		return;
	CNT_INC(&nic0->core, xcore_parks); /* in turn: parked by design */
	if (xc->in_turn)
		return;
	gen = atomic_load_explicit(&xc->park_gen, memory_order_relaxed) + 1;
	atomic_store_explicit(&xc->park_gen, gen, memory_order_seq_cst);
	for (unsigned k = 1; k < xc->ncores; k++)
		/* the core may wait for room in its ring to us: empty it */
		while (atomic_load_explicit(&xc->in_pass[k].v,
					    memory_order_seq_cst))
			drain_to0(nic0);
	/* Parked cores push nothing more: post what they sent before (CQEs
	 * name their CQ by slot), so no command (a context's death, a CQ
	 * created in a freed slot) runs between a message and its target. */
	while (drain_to0(nic0))
		;
}

void xcore_unpark_all(struct snic_nic *nic0)
{
	struct snic_xcore *xc = nic0->core.xc;

	if (!xc || xc->in_turn)
		return;
	/* seq_cst: a core that reads the old even value must have flagged
	 * its pass before we parked, so we waited for it */
	atomic_store_explicit(&xc->park_gen,
			      atomic_load_explicit(&xc->park_gen,
						   memory_order_relaxed) + 1,
			      memory_order_seq_cst);
}

/* Core k, entering its pass: flag it; false (no pass now) while core 0
 * runs commands (park_gen odd) - the board's idle back-off then waits,
 * rather than a spin that takes a CPU from core 0. */
static bool pass_enter(struct snic_nic *nic)
{
	struct snic_xcore *xc = nic->core.xc;
	_Atomic uint32_t *in = &xc->in_pass[nic->core.core_id].v;

	if (xc->in_turn)
		return true;
	atomic_store_explicit(in, 1, memory_order_seq_cst);
	if (!(atomic_load_explicit(&xc->park_gen, memory_order_seq_cst) & 1))
		return true;
	atomic_store_explicit(in, 0, memory_order_release);
	return false;
}

/* The pass is over: everything it wrote is core 0's to see (release). */
static void pass_leave(struct snic_nic *nic)
{
	struct snic_xcore *xc = nic->core.xc;

	if (!xc->in_turn)
		atomic_store_explicit(&xc->in_pass[nic->core.core_id].v, 0,
				      memory_order_release);
}

/* ---------------------------------------------------------------------- */
/* Messages.                                                               */

/* Core 0 found qp's doorbell bit: to its owner.  False when the ring is
 * full: the caller flags the bit again, in the page it came from, for
 * the next pass (nic/doorbell.c), so nothing is lost. */
bool xcore_doorbell(struct snic_nic *nic0, struct snic_qp *qp)
{
	struct snic_xc_msg m = { .type = SNIC_XC_DOORBELL,
				 .a = qp_idx(nic0, qp) };

	if (!core_xc_send(&nic0->core, qp->core, &m))
		return false;
	CNT_INC(&nic0->core, xcore_doorbells);
	return true;
}

/* A QP slot named in a message, when it is still this core's. */
static struct snic_qp *own_qp(struct snic_nic *nic, uint32_t idx)
{
	struct snic_qp *qp = idx < SNIC_MAX_QP ? &nic->qps[idx] : NULL;

	return qp && qp->in_use && qp->core == nic->core.core_id ? qp : NULL;
}

static void handle(struct snic_nic *nic, struct snic_xc_msg *m)
{
	struct snic_qp *qp;

	switch (m->type) {
	case SNIC_XC_DOORBELL:
		if ((qp = own_qp(nic, m->a)) != NULL)
			qp_doorbell(nic, qp);
		break;
	case SNIC_XC_NEIGH:
		if ((qp = own_qp(nic, m->a)) != NULL)
			qp_neigh_set(nic, qp, m->u.mac);
		break;
	case SNIC_XC_CQ_DIRTY:
		cq_dirty_seen(nic, m->a, m->flag);
		break;
	case SNIC_XC_CQ_OVERRUN:
		cq_overrun_seen(nic, m->a, m->flag);
		break;
	case SNIC_XC_CQ_LOST:
		if ((qp = own_qp(nic, m->a)) != NULL && qp->qpn == m->b)
			qp_cq_lost(nic, qp);
		break;
	case SNIC_XC_EVENT:
		core_event(&nic->core, m->a, (enum snic_event_type)m->b, m->c);
		break;
	case SNIC_XC_RESOLVE: {
		uint8_t mac[6];

		/* known already: the asker missed its NEIGH (a full ring) and
		 * a new reply would teach nothing new - tell its QPs again */
		if (neigh_lookup_addr(nic->neigh, m->u.ip, mac))
			qp_neigh_update(nic, m->u.ip, mac);
		else
			neigh_resolve_addr(nic->neigh, m->u.ip);
		break;
	}
	default:
		break;
	}
}

static unsigned drain(struct snic_nic *nic, struct snic_xc_ring *r)
{
	struct snic_xc_msg m[8];
	unsigned n, total = 0;

	while (total < XC_MSG_BUDGET && (n = xc_ring_pop(r, m, 8)) != 0) {
		for (unsigned i = 0; i < n; i++)
			handle(nic, &m[i]);
		total += n;
	}
	return total;
}

/* A core found its ring to core `to` (always 0: only CQEs and events
 * wait) full.  Threads: core 0 drains it every pass and while parking, so
 * waiting is enough.  Cores polled in turn (one thread): core 0 is between
 * passes, so its messages are handled here, as its next pass would. */
static void ring_wait(struct snic_xcore *xc, unsigned from, unsigned to)
{
	if (xc->in_turn)
		drain(xc->views[to], xc->msg[from][to]);
}

static unsigned drain_to0(struct snic_nic *nic0)
{
	struct snic_xcore *xc = nic0->core.xc;
	unsigned work = 0;

	for (unsigned k = 1; k < xc->ncores; k++)
		work += drain(nic0, xc->msg[k][0]);
	return work;
}

/* Core 0: what the other cores sent (CQs written, events, resolutions)
 * and the frames they built; before the pass's CQ events and TX flush. */
unsigned xcore_poll(struct snic_nic *nic0)
{
	return drain_to0(nic0) + steer_tx_gather(nic0);
}

/* ---------------------------------------------------------------------- */
/* The pass of a core other than 0: no commands, statistics or port of its
 * own (steer.c gives it core 0's frames); its QPs' doorbells it takes
 * from the context pages itself (doorbell.c). */
unsigned xcore_pass(struct snic_nic *nic)
{
	struct snic_core *c = &nic->core;
	unsigned work = 0;

	if (!pass_enter(nic))
		return 0;
	c->now = c->ops->now_ns(c->hal_ctx);
	c->link_up = c->xc->views[0]->core.link_up;
	work += timer_poll(nic);
	work += drain(nic, c->xc->msg[0][c->core_id]);
	work += doorbell_poll_core(nic);
	work += rx_poll(nic);
	c->tx_budget = SNIC_TX_BUDGET;
	if (c->tx_budget > core_tx_room(c))
		c->tx_budget = core_tx_room(c);
	work += resp_poll(nic);
	work += req_poll(nic);
	cq_dirty_send(nic);
	work += core_tx_flush(c);
	pass_leave(nic);
	return work;
}

/* ---------------------------------------------------------------------- */
/* Sleep and wake-up of the other cores (fw.h).  A board whose core k is a
 * thread that may share a CPU lets it sleep when idle: core k flags that
 * it sleeps, then looks at its input (snic_nic_core_input) once more;
 * core 0, after a pass that may have handed it work, looks at the flag
 * (both with a full fence in between: one sees the other) and wakes it. */

/* Frames wait on core k's RX queue of the port, as far as the HAL can
 * tell (rx_ready; queue 0 is core 0's, and core k >= 1 has one only
 * where the port steers). */
static bool port_rx_ready(const struct snic_xcore *xc, unsigned k)
{
	const struct snic_hal *r = xc->port[k].real;

	if (k != 0 && !xc->port[k].rxq)
		return false;
	return r->ops->rx_ready && r->ops->rx_ready(r->ctx, 0, (uint16_t)k);
}

bool snic_nic_core_input(const struct snic_nic *nic, unsigned k)
{
	const struct snic_xcore *xc = nic->core.xc;

	if (!xc || k >= xc->ncores)
		return false;
	if (k != 0)
		return xc_ring_count(xc->pkt[0][k]) ||
		       xc_ring_count(xc->msg[0][k]) ||
		       atomic_load_explicit(&xc->in_pass[k].poked,
					    memory_order_relaxed) ||
		       doorbell_core_pending(xc->views[0], k) ||
		       port_rx_ready(xc, k);
	for (unsigned j = 1; j < xc->ncores; j++)
		if (xc_ring_count(xc->pkt[j][0]) || xc_ring_count(xc->msg[j][0]))
			return true;
	return port_rx_ready(xc, 0);
}

/* Core k between passes, asked by its board before it sleeps: 0 when
 * frames wait for the port (its ring to core 0 was full), QPs on its work
 * lists (a TX budget ran out) or core 0 runs a command (which may change
 * them: asked inside the park protocol, as a pass), else the time its
 * timer wheel next has a deadline.  It takes back the poke of a command
 * that gave the core work (qp_view_poke): the lists say so now; a later
 * command pokes again, which snic_nic_core_input reports. */
uint64_t snic_nic_core_sleep_until(struct snic_nic *nic)
{
	const struct snic_core *c = &nic->core;
	uint64_t until = 0;

	if (!c->xc || c->core_id == 0 || !pass_enter(nic))
		return 0;
	/* what a command scheduled here is seen below (parked before) */
	atomic_store_explicit(&c->xc->in_pass[c->core_id].poked, 0,
			      memory_order_relaxed);
	if (c->txq_tail == c->txq_head && c->ctlq_tail == c->ctlq_head &&
	    c->loopq_tail == c->loopq_head && nic->req_tail == nic->req_head &&
	    nic->resp_tail == nic->resp_head)
		until = tw_next(&c->tw);
	pass_leave(nic);
	return until;
}

/* The NIC's counter i: every core's, less what a reset took away. */
uint64_t xcore_counter(const struct snic_nic *nic, unsigned i)
{
	const struct snic_xcore *xc = nic->core.xc;
	uint64_t v = nic->core.cnt[i];

	if (!xc)
		return v;
	for (unsigned k = 1; k < xc->ncores; k++)
		v += xc->views[k]->core.cnt[i] - xc->cnt_base[k][i];
	return v;
}

/* A reset of the statistics: the other cores' counters are theirs to
 * write, so their values now become the base. */
void xcore_counters_reset(struct snic_nic *nic0)
{
	struct snic_xcore *xc = nic0->core.xc;

	memset(nic0->core.cnt, 0, sizeof(nic0->core.cnt));
	if (!xc)
		return;
	for (unsigned k = 1; k < xc->ncores; k++)
		memcpy(xc->cnt_base[k], xc->views[k]->core.cnt,
		       sizeof(xc->cnt_base[k]));
}

/* Stop (the other loops have ended): every frame the other cores and the
 * rings hold goes back to the HAL. */
void xcore_fini(struct snic_nic *nic0)
{
	struct snic_xcore *xc = nic0->core.xc;
	struct snic_xc_port *pt;
	struct snic_pkt *p;

	if (!xc)
		return;
	pt = &xc->port[0];
	for (unsigned k = 1; k < xc->ncores; k++) {
		core_tx_drop_all(&xc->views[k]->core);
		while (xc_ring_pop(xc->pkt[0][k], &p, 1) ||
		       xc_ring_pop(xc->pkt[k][0], &p, 1))
			pt->real->ops->pkt_free(pt->real->ctx, &p, 1);
	}
	while (pt->loop_head != pt->loop_tail) {
		p = pt->loop[pt->loop_head++ % SNIC_XC_PKT_RING];
		pt->real->ops->pkt_free(pt->real->ctx, &p, 1);
	}
}
