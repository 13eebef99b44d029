/* SPDX-License-Identifier: MIT */
/*
 * Doorbells: the three-level bitmaps of hostif.h, read once per pass: the
 * pages and mailboxes of the contexts a board opened, the NIC page's own
 * (commands, and QPs of contexts no board opened) and each context page
 * it flags.  A doorbell belongs to the context whose page it
 * came in: a QP it does not own is ignored and counted (hostif.h
 * "Attribution").
 *
 * Several cores: core k >= 1 takes its own QPs' doorbells from every open
 * context's page (its group and summary words there, and its bits of the
 * QP words, which it shares with the other cores), with no hand-off from
 * core 0; core 0 takes only its bits from those words, and all of the
 * NIC page's, handing other cores' QPs over (xcore_doorbell).
 */
#include "nic/top.h"

_Static_assert(SNIC_DB_MAX_CORES == SNIC_MAX_CORES,
	       "a context page has group words for every core");

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

/* Flag QP index i again in the NIC page, for the next pass (hostif.h
 * "Doorbells": the host's own order of stores).  Only that page's bits
 * are handed to another core: a context page's are taken by their core. */
static void db_reflag(struct snic_nic *nic, uint32_t i)
{
	struct snic_doorbells *db = nic->core.db;

	snic_db_set(db->qp_bits, db->grp_bits, &db->summary, i);
}

/* Take this core's bits of QP word w of a page: all of them with one
 * core and in the NIC page; else those of its QPs, leaving the others'. */
static uint64_t qp_word_take(const struct snic_nic *nic,
			     _Atomic uint64_t *word, unsigned w, unsigned page)
{
	uint64_t mask;

	if (!nic->core.xc || page == DB_NIC_PAGE)
		return atomic_exchange_explicit(word, 0, memory_order_acquire);
	mask = nic->db_mask[w];
	return atomic_fetch_and_explicit(word, ~mask, memory_order_acquire) &
	       mask;
}

/* The QPs flagged in QP word w of a page. */
static unsigned qp_word_poll(struct snic_nic *nic, _Atomic uint64_t *word,
			     unsigned w, unsigned page)
{
	uint64_t bits = qp_word_take(nic, word, w, page);
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
		if (qp->core == nic->core.core_id)
			qp_doorbell(nic, qp);
		else if (nic->core.core_id || page != DB_NIC_PAGE)
			CNT_INC(&nic->core, doorbells_foreign); /* not its core's */
		else if (!xcore_doorbell(nic, qp)) /* to its core: ring full */
			db_reflag(nic, w * 64 + b);
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

/* ---------------------------------------------------------------------- */
/* Several cores.                                                          */

/* Core k's bits of each QP word: slot i runs on core i % n (qp_core.c). */
void doorbell_masks_init(struct snic_nic *view, unsigned k, unsigned n)
{
	for (unsigned w = 0; w < SNIC_DB_QP_WORDS; w++) {
		uint64_t m = 0;

		for (unsigned b = 0; b < 64; b++)
			if ((w * 64 + b) % n == k)
				m |= 1ull << b;
		view->db_mask[w] = m;
	}
}

/* Core 0, on the command path: context `slot` opens or ends.  An open one
 * learns how its QPs' doorbells spread over the cores (hostif.h), and the
 * other cores look at its page from their next pass. */
void doorbell_ctx_open(struct snic_nic *nic, unsigned slot, bool open)
{
	struct snic_xcore *xc = nic->core.xc;

	nic->core.ctx_open[slot] = open;
	if (open)
		atomic_store_explicit(&core_ctx_slot(&nic->core, slot)->db_cores,
				      xc ? xc->ncores : 1, memory_order_relaxed);
	if (!xc)
		return;
	if (open)
		atomic_fetch_or_explicit(&xc->db_ctx, 1ull << slot,
					 memory_order_release);
	else
		atomic_fetch_and_explicit(&xc->db_ctx, ~(1ull << slot),
					  memory_order_release);
}

static struct snic_db_core_words *core_words(const struct snic_core *c,
					     unsigned slot, unsigned k)
{
	return &ctx_page((struct snic_core *)c, slot)->core[k - 1];
}

/* Core k >= 1, each pass: its QPs' doorbells in every open context's
 * page.  One word per context when nothing is new. */
unsigned doorbell_poll_core(struct snic_nic *nic)
{
	struct snic_core *c = &nic->core;
	uint64_t bits = atomic_load_explicit(&c->xc->db_ctx,
					     memory_order_acquire);
	unsigned work = 0;

	while (bits) {
		unsigned s = (unsigned)__builtin_ctzll(bits);
		struct snic_db_core_words *h = core_words(c, s, c->core_id);

		bits &= bits - 1;
		if (!atomic_load_explicit(&h->summary, memory_order_relaxed))
			continue;
		work += groups_poll(nic, atomic_exchange_explicit(
			&h->summary, 0, memory_order_acquire),
			h->grp_bits, ctx_page(c, s)->qp_bits, s);
	}
	return work;
}

/* Any thread: doorbells wait for core k >= 1 (its board wakes it). */
bool doorbell_core_pending(const struct snic_nic *nic0, unsigned k)
{
	const struct snic_core *c = &nic0->core;
	uint64_t bits = atomic_load_explicit(&c->xc->db_ctx,
					     memory_order_acquire);

	while (bits) {
		unsigned s = (unsigned)__builtin_ctzll(bits);

		bits &= bits - 1;
		if (atomic_load_explicit(&core_words(c, s, k)->summary,
					 memory_order_relaxed))
			return true;
	}
	return false;
}
