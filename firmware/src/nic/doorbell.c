/* SPDX-License-Identifier: MIT */
/*
 * Doorbells: the three-level bitmaps of hostif.h, read once per pass: the
 * pages and mailboxes of the contexts a board opened, the NIC page's own
 * (commands, and QPs of contexts no board opened) and each context page
 * it flags.  A doorbell belongs to the context whose page it
 * came in: a QP it does not own is ignored and counted (hostif.h
 * "Attribution").
 */
#include "nic/top.h"

/* Whose page a bitmap is: a context slot, or the NIC page. */
#define DB_NIC_PAGE SNIC_MAX_CTX

static struct snic_ctx_doorbells *ctx_page(struct snic_core *c, unsigned slot)
{
	return (struct snic_ctx_doorbells *)(void *)(
		(uint8_t *)core_ctx_slot(c, slot) + SNIC_CTX_DB_OFF);
}

/* May a doorbell in `page` start qp?  Its own context's page, or the NIC
 * page for a context that no board vouches for (which has no page of its
 * own nobody else can write). */
static bool db_attributed(const struct snic_core *c, const struct snic_qp *qp,
			  unsigned page)
{
	return page == DB_NIC_PAGE ? !c->ctx_granted[qp->ctx] : qp->ctx == page;
}

/* Flag QP bit (w, b) again in the page it came in, for the next pass
 * (hostif.h "Doorbells": the host's own order of stores). */
static void db_reflag(struct snic_nic *nic, unsigned page, unsigned w,
		      unsigned b)
{
	struct snic_doorbells *db = nic->core.db;
	_Atomic uint64_t *qpb = db->qp_bits, *grp = db->grp_bits;
	_Atomic uint64_t *sum = &db->summary;

	if (page != DB_NIC_PAGE) {
		struct snic_ctx_doorbells *p = ctx_page(&nic->core, page);

		qpb = p->qp_bits;
		grp = p->grp_bits;
		sum = &p->summary;
	}
	snic_db_set(qpb, grp, sum, w * 64 + b);
	if (page != DB_NIC_PAGE) {
		atomic_fetch_or_explicit(&db->ctx_bits, 1ull << page,
					 memory_order_relaxed);
		atomic_fetch_or_explicit(&db->summary, SNIC_DB_SUMMARY_CTX,
					 memory_order_release);
	}
}

/* The QPs flagged in QP word w of a page. */
static unsigned qp_word_poll(struct snic_nic *nic, _Atomic uint64_t *word,
			     unsigned w, unsigned page)
{
	uint64_t bits = atomic_exchange_explicit(word, 0, memory_order_acquire);
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
		if (!db_attributed(&nic->core, qp, page)) {
			CNT_INC(&nic->core, doorbells_foreign);
			continue;
		}
		if (!qp->core)
			qp_doorbell(nic, qp);
		else if (!xcore_doorbell(nic, qp)) /* to its core: ring full */
			db_reflag(nic, page, w, b);
	}
	return work;
}

/* The QP words flagged in group word g of a page. */
static unsigned grp_word_poll(struct snic_nic *nic, _Atomic uint64_t *grp,
			      _Atomic uint64_t *qp_bits, unsigned g,
			      unsigned page)
{
	uint64_t bits = atomic_exchange_explicit(&grp[g], 0,
						 memory_order_acquire);
	unsigned work = 0;

	while (bits) {
		unsigned w = g * 64 + (unsigned)__builtin_ctzll(bits);

		bits &= bits - 1;
		if (w < SNIC_DB_QP_WORDS)
			work += qp_word_poll(nic, &qp_bits[w], w, page);
	}
	return work;
}

/* The group words flagged in a summary word (its other bits: none here). */
static unsigned groups_poll(struct snic_nic *nic, uint64_t sum,
			    _Atomic uint64_t *grp, _Atomic uint64_t *qp_bits,
			    unsigned page)
{
	unsigned work = 0;

	sum &= (1ull << SNIC_DB_GRP_WORDS) - 1;
	while (sum) {
		unsigned g = (unsigned)__builtin_ctzll(sum);

		sum &= sum - 1;
		work += grp_word_poll(nic, grp, qp_bits, g, page);
	}
	return work;
}

/* The context pages flagged in ctx_bits.  A bit for a slot that is not
 * open (anyone may set it) looks at nothing. */
static unsigned ctx_pages_poll(struct snic_nic *nic)
{
	uint64_t bits = atomic_exchange_explicit(&nic->core.db->ctx_bits, 0,
						 memory_order_acquire);
	unsigned work = 0;

	while (bits) {
		unsigned s = (unsigned)__builtin_ctzll(bits);
		struct snic_ctx_doorbells *p;
		uint64_t sum;

		bits &= bits - 1;
		if (!nic->core.ctx_open[s])
			continue;
		p = ctx_page(&nic->core, s);
		sum = atomic_exchange_explicit(&p->summary, 0,
					       memory_order_acquire);
		work += groups_poll(nic, sum, p->grp_bits, p->qp_bits, s);
	}
	return work;
}

/* Commands of the contexts in bits and of those whose retry is due
 * (cmd_due): only a command not yet answered parks the other cores. */
static unsigned commands_poll(struct snic_nic *nic, uint64_t bits)
{
	unsigned work;

	bits = cmd_due(nic, bits);
	if (!bits)
		return 0;
	xcore_park_all(nic); /* commands run alone (nic/xcore.c) */
	work = cmd_poll(nic, bits);
	xcore_unpark_all(nic);
	return work;
}

/* The contexts a board opened (the broker's) are looked at every pass,
 * their doorbell page's summary and their mailbox, without a hint in the
 * NIC page: that page is every process's to write (and to clear), so a
 * process could otherwise hide another's doorbells and commands.  Their
 * pages are theirs alone (hostif.h "Doorbells"); one word each per pass
 * when nothing is new. */
static unsigned own_pages_poll(struct snic_nic *nic)
{
	uint64_t bits = nic->core.own_pages, cmds = 0;
	unsigned work = 0;

	while (bits) {
		unsigned s = (unsigned)__builtin_ctzll(bits);
		struct snic_ctx_slot *slot = core_ctx_slot(&nic->core, s);
		struct snic_ctx_doorbells *p = ctx_page(&nic->core, s);

		bits &= bits - 1;
		if (!nic->core.ctx_open[s])
			continue;
		/* seq_cst loads: the idle handshake (the board's seq_cst
		 * store of fw_idle, then these; the host's seq_cst stores,
		 * then its load of fw_idle: hostif.h "Doorbells") */
		if (atomic_load_explicit(&slot->cmd_seq, memory_order_seq_cst) !=
		    atomic_load_explicit(&slot->cmd_done, memory_order_relaxed))
			cmds |= 1ull << s;
		if (atomic_load_explicit(&p->summary, memory_order_seq_cst))
			work += groups_poll(nic, atomic_exchange_explicit(
				&p->summary, 0, memory_order_acquire),
				p->grp_bits, p->qp_bits, s);
	}
	/* a command waiting for its retry (cmd_wait) is asked again when
	 * cmd_due says so, not every pass */
	cmds &= ~nic->core.cmd_wait;
	return cmds ? work + commands_poll(nic, cmds) : work;
}

unsigned doorbell_poll(struct snic_nic *nic)
{
	struct snic_doorbells *db = nic->core.db;
	uint64_t sum = atomic_exchange_explicit(&db->summary, 0,
						memory_order_acquire);
	unsigned work = nic->core.own_pages ? own_pages_poll(nic) : 0;
	uint64_t cmds = 0;

	if (!sum && !nic->core.cmd_wait)
		return work;
	if (sum & SNIC_DB_SUMMARY_CMD)
		cmds = atomic_exchange_explicit(&db->cmd_bits, 0,
						memory_order_acquire);
	work += commands_poll(nic, cmds);
	if (sum & SNIC_DB_SUMMARY_CTX)
		work += ctx_pages_poll(nic);
	return work + groups_poll(nic, sum, db->grp_bits, db->qp_bits,
				  DB_NIC_PAGE);
}
