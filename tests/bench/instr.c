/* SPDX-License-Identifier: MIT */
/*
 * bench-instr: the firmware alone, two NICs in the deterministic
 * simulation of the unit tests (fake HAL, fake host, no OS), driven at a
 * steady message rate.  Run under callgrind by tools/bench-instr.sh, which
 * counts only what runs inside snic_nic_poll() and not inside the fake HAL
 * (--toggle-collect), so a count is the firmware's own work: requester,
 * responder and completer, ICRC included, both NICs.
 *
 * For each opcode and size the program runs N messages and 2N messages,
 * each phase between CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT, so
 * the script can subtract ramp-up and drain: (I(2N) - I(N)) / N is the
 * steady-state cost of one message.  Data and completions are checked, so
 * a count is never the cost of something that did not happen.
 *
 * Without valgrind the client requests are no-ops: the program still runs
 * and checks the data (a cheap smoke test).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/callgrind.h>

#include "fake_host.h"

#define DEPTH    32     /* messages outstanding (SQ holds 64)      */
#define N_MSG    256    /* the short phase; the long one is 2 N    */
#define WARM     64
#define MAX_STEP 200000
#define IDLE_MAX 10000  /* idle QPs per NIC in the last case ...      */
#define IDLE_CONN 1000  /* ... of which connected pairs (the rest stay
			 * in RESET, holding no connection set)     */
#ifndef MANY_QP          /* -DMANY_QP=N: another number of pairs     */
#define MANY_QP  1000   /* active pairs of the "write+1000active" case */
#endif
#define MANY_DEP 4      /* ... WRITEs outstanding per QP, one signalled
			 * (as snic-qpbench many)                   */
#define MANY_MSG (4 * MANY_QP * MANY_DEP) /* its short phase          */

enum bop { B_WRITE, B_READ, B_SEND, B_ATOMIC };

static const char *const op_name[] = { "write", "read", "send", "atomic" };

struct bench {
	struct fsim *s;
	struct fpair p;
	struct fqp *qa, *qb;    /* the QPs that carry the messages        */
	struct fqp qa1, qb1;    /* with 2 cores: a pair on core 1         */
};

/* This thread's CPU time: run natively (not under valgrind), the long
 * phase's ns per message is printed too, the simulation's real cost on
 * this CPU (caches, prefetches) with the fake host and HAL included, and
 * without the other processes' time a wall clock would count. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-instr: %s\n", what);
	exit(1);
}

static uint8_t *A(struct bench *b, uint64_t off)
{
	return fdev_ptr(&b->s->a, b->p.bufa + off);
}

static uint8_t *B(struct bench *b, uint64_t off)
{
	return fdev_ptr(&b->s->b, b->p.bufb + off);
}

/* Message i uses its own slot of each buffer, so data can be checked. */
static uint64_t slot_off(uint32_t len, unsigned i)
{
	uint64_t stride = len < 64 ? 64 : len;

	return (uint64_t)(i % DEPTH) * stride;
}

static void post_one(struct bench *b, enum bop op, uint32_t len, unsigned i)
{
	uint64_t off = slot_off(len, i);
	struct snic_wqe_sge sa = { b->p.bufa + off, len, b->p.mra };
	struct fwr wr = { .wr_id = i, .flags = SNIC_SEND_SIGNALED,
			  .sge = &sa, .num_sge = 1,
			  .remote_addr = b->p.bufb + off, .rkey = b->p.mrb };

	switch (op) {
	case B_WRITE:
		wr.opcode = SNIC_WR_RDMA_WRITE;
		break;
	case B_READ:
		wr.opcode = SNIC_WR_RDMA_READ;
		break;
	case B_SEND: {
		struct snic_wqe_sge sb = { b->p.bufb + off, len, b->p.mrb };

		fqp_post_recv(b->qb, i, &sb, 1);
		wr.opcode = SNIC_WR_SEND;
		break;
	}
	case B_ATOMIC:
		sa.length = 8;
		wr.opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD;
		wr.compare_add = 1;
		wr.remote_addr = b->p.bufb + (uint64_t)(i % DEPTH) * 64;
		break;
	}
	fqp_post_send(b->qa, &wr);
}

static unsigned drain(struct fcq *cq, unsigned *next_id, bool ids)
{
	struct snic_cqe c;
	unsigned n = 0;

	while (fcq_poll(cq, &c)) {
		if (c.status != SNIC_WC_SUCCESS)
			die("a completion with an error status");
		if (ids && c.wr_id != *next_id)
			die("completions out of order");
		(*next_id)++;
		n++;
	}
	return n;
}

/* Run n messages with DEPTH outstanding; every one signalled. */
static void run(struct bench *b, enum bop op, uint32_t len, unsigned n,
		unsigned first)
{
	unsigned posted = 0, done = 0, rdone = 0, steps = 0;
	unsigned id = first, rid = first;

	while (done < n || (op == B_SEND && rdone < n)) {
		while (posted < n && posted - done < DEPTH)
			post_one(b, op, len, first + posted++);
		fsim_step(b->s);
		done += drain(&b->p.cqa, &id, true);
		if (op == B_SEND)
			rdone += drain(&b->p.cqb, &rid, true);
		if (++steps > MAX_STEP)
			die("no progress");
	}
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 17 + (i >> 8));
}

/* The data of the last DEPTH messages arrived where it should. */
static void check(struct bench *b, enum bop op, uint32_t len)
{
	uint64_t span = (uint64_t)DEPTH * (len < 64 ? 64 : len);

	if (op == B_ATOMIC) {
		uint64_t sum = 0, v;

		for (unsigned i = 0; i < DEPTH; i++) {
			memcpy(&v, B(b, (uint64_t)i * 64), 8);
			sum += v;
		}
		if (sum != (uint64_t)(WARM + 3 * N_MSG))
			die("atomic sum wrong");
		return;
	}
	if (memcmp(A(b, 0), B(b, 0), span) != 0)
		die("data differs");
}

/* `idle` more QPs on each NIC that never move data, the first IDLE_CONN
 * of them connected pairs: the cost of a message must not grow with them
 * (issue 11 part 6). */
static void add_idle(struct bench *b, const struct fconn *conn, unsigned idle)
{
	static struct fqp qa[IDLE_MAX], qb[IDLE_MAX];
	struct fqp_caps caps = { .sq_cnt = 4, .rq_cnt = 4, .max_send_sge = 1,
				 .max_recv_sge = 1, .compact = true };

	for (unsigned i = 0; i < idle; i++)
		if (fqp_create(&qa[i], &b->p.ca, b->p.pda, &b->p.cqa, &b->p.cqa, &caps) ||
		    fqp_create(&qb[i], &b->p.cb, b->p.pdb, &b->p.cqb, &b->p.cqb, &caps) ||
		    (i < IDLE_CONN && fqp_connect(&qa[i], &qb[i], conn)))
			die("idle QP set-up");
}

/* Two firmware cores per NIC (nic/xcore.c): the messages go on a second
 * QP pair, whose slots (QPN & 0x3fff odd) run on core 1 of each NIC, so
 * every frame crosses the steering stage and every CQE a ring. */
static void on_core1(struct bench *b, const struct fconn *conn)
{
	struct fqp_caps caps = { .sq_cnt = 64, .rq_cnt = 64, .max_send_sge = 1,
				 .max_recv_sge = 1 };

	if (fqp_create(&b->qa1, &b->p.ca, b->p.pda, &b->p.cqa, &b->p.cqa, &caps) ||
	    fqp_create(&b->qb1, &b->p.cb, b->p.pdb, &b->p.cqb, &b->p.cqb, &caps) ||
	    fqp_connect(&b->qa1, &b->qb1, conn))
		die("core 1 QP set-up");
	if (!(b->qa1.qpn & 1) || !(b->qb1.qpn & 1))
		die("the second pair is not on core 1");
	b->qa = &b->qa1;
	b->qb = &b->qb1;
}

static void bench_case(enum bop op, uint32_t len, unsigned idle, unsigned cores)
{
	struct bench b;
	struct fconn conn;
	uint64_t span = (uint64_t)DEPTH * (len < 64 ? 64 : len);
	char tag[64], name[32];
	uint64_t t0;

	fdev_cores_force = cores;
	b.s = fsim_new(4200);
	fdev_cores_force = 0;
	if (!b.s->a.nic || !b.s->b.nic)
		die("NIC init");
	fconn_default(&conn);
	if (fpair_setup(&b.p, b.s, &conn, 1u << 20, 256) != SNIC_ST_OK)
		die("pair setup");
	b.qa = &b.p.qa;
	b.qb = &b.p.qb;
	if (cores > 1)
		on_core1(&b, &conn);
	add_idle(&b, &conn, idle);
	if (cores > 1)
		snprintf(name, sizeof(name), "%s/%ucores", op_name[op], cores);
	else
		snprintf(name, sizeof(name), idle ? "%s+%uidle" : "%s",
			 op_name[op], idle);
	if (op == B_READ)
		pattern(B(&b, 0), span, len);
	else
		pattern(A(&b, 0), span, len);
	if (op == B_ATOMIC)
		memset(B(&b, 0), 0, span);
	run(&b, op, len, WARM, 0);
	CALLGRIND_ZERO_STATS;
	run(&b, op, len, N_MSG, WARM);
	snprintf(tag, sizeof(tag), "%s-%u-%u", name, len, N_MSG);
	CALLGRIND_DUMP_STATS_AT(tag);
	t0 = cpu_ns();
	run(&b, op, len, 2 * N_MSG, WARM + N_MSG);
	t0 = cpu_ns() - t0;
	snprintf(tag, sizeof(tag), "%s-%u-%u", name, len, 2 * N_MSG);
	CALLGRIND_DUMP_STATS_AT(tag);
	check(&b, op, len);
	if (fsim_free(b.s) != 0)
		die("packet buffers leaked");
	printf("%s %u ok (%.0f ns/msg cpu)\n", name, len,
	       (double)t0 / (2 * N_MSG));
}

/* MANY_QP pairs, each keeping MANY_DEP 64-B WRITEs outstanding, posted
 * as one list with one doorbell and the last signalled (snic-qpbench
 * many): the cost of a message when a thousand QPs take turns, so each
 * WRITE finds its QP's state cold (issue 11 part 6).  QP i writes its own
 * 64-byte slot of the peer.  Counted per message (n, 2 n messages). */
struct many {
	struct fsim *s;
	struct fpair p;
	struct fqp *qa, *qb;
	uint32_t *per_qp;       /* completed per QP (fairness)            */
};

static void many_post(struct many *m, unsigned i)
{
	struct snic_wqe_sge sa = { m->p.bufa + (uint64_t)i * 64, 64, m->p.mra };
	struct fwr wr = { .wr_id = i, .opcode = SNIC_WR_RDMA_WRITE, .sge = &sa,
			  .num_sge = 1, .remote_addr = m->p.bufb + (uint64_t)i * 64,
			  .rkey = m->p.mrb };

	for (unsigned k = 0; k < MANY_DEP; k++) {
		wr.flags = k == MANY_DEP - 1 ? SNIC_SEND_SIGNALED : 0;
		fqp_write_send(&m->qa[i], &wr);
	}
	fqp_ring(&m->qa[i]);
}

/* From drained, every QP starts MANY_DEP WRITEs and reposts on its CQE
 * until n messages were posted; returns drained again. */
static void many_run(struct many *m, uint64_t n)
{
	uint64_t posted = 0, inflight = 0;
	unsigned steps = 0;
	struct snic_cqe c;

	for (unsigned i = 0; i < MANY_QP && posted < n; i++) {
		many_post(m, i);
		posted += MANY_DEP;
		inflight += MANY_DEP;
	}
	while (inflight) {
		fsim_step(m->s);
		while (fcq_poll(&m->p.cqa, &c)) {
			if (c.status != SNIC_WC_SUCCESS || c.wr_id >= MANY_QP)
				die("many: a bad completion");
			m->per_qp[c.wr_id] += MANY_DEP;
			inflight -= MANY_DEP;
			if (posted < n) {
				many_post(m, (unsigned)c.wr_id);
				posted += MANY_DEP;
				inflight += MANY_DEP;
			}
		}
		if (++steps > MAX_STEP)
			die("many: no progress");
	}
}

static void many_case(void)
{
	static struct fqp qa[MANY_QP], qb[MANY_QP];
	static uint32_t per_qp[MANY_QP];
	struct fqp_caps caps = { .sq_cnt = 2 * MANY_DEP, .rq_cnt = 1,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .compact = true };
	struct many m = { .qa = qa, .qb = qb, .per_qp = per_qp };
	struct fconn conn;
	uint32_t lo = UINT32_MAX, hi = 0;
	char tag[64];
	uint64_t t0;

	m.s = fsim_new(4200);
	if (!m.s->a.nic || !m.s->b.nic)
		die("NIC init");
	fconn_default(&conn);
	if (fpair_setup(&m.p, m.s, &conn, 1u << 20, 1024) != SNIC_ST_OK)
		die("pair setup");
	for (unsigned i = 0; i < MANY_QP; i++)
		if (fqp_create(&qa[i], &m.p.ca, m.p.pda, &m.p.cqa, &m.p.cqa, &caps) ||
		    fqp_create(&qb[i], &m.p.cb, m.p.pdb, &m.p.cqb, &m.p.cqb, &caps) ||
		    fqp_connect(&qa[i], &qb[i], &conn))
			die("many QP set-up");
	pattern(fdev_ptr(&m.s->a, m.p.bufa), 64 * MANY_QP, 64);
	many_run(&m, MANY_MSG / 4);     /* warm: every QP once */
	memset(per_qp, 0, sizeof(per_qp));
	CALLGRIND_ZERO_STATS;
	many_run(&m, MANY_MSG);
	snprintf(tag, sizeof(tag), "write+%uactive-64-%u", MANY_QP, MANY_MSG);
	CALLGRIND_DUMP_STATS_AT(tag);
	t0 = cpu_ns();
	many_run(&m, 2 * MANY_MSG);
	t0 = cpu_ns() - t0;
	snprintf(tag, sizeof(tag), "write+%uactive-64-%u", MANY_QP, 2 * MANY_MSG);
	CALLGRIND_DUMP_STATS_AT(tag);
	for (unsigned i = 0; i < MANY_QP; i++) {
		lo = per_qp[i] < lo ? per_qp[i] : lo;
		hi = per_qp[i] > hi ? per_qp[i] : hi;
	}
	if (memcmp(fdev_ptr(&m.s->a, m.p.bufa), fdev_ptr(&m.s->b, m.p.bufb),
		   64 * MANY_QP) != 0)
		die("many: data differs");
	if (fsim_free(m.s) != 0)
		die("packet buffers leaked");
	printf("write+%uactive 64 ok (%.0f ns/msg cpu; messages per QP: %u .. %u)\n",
	       MANY_QP, (double)t0 / (2 * MANY_MSG), lo, hi);
}

/* argv[1], when given, runs only the cases whose name-size starts with
 * it ("write-64"): a quicker loop while working on one path. */
static bool wanted(const char *only, enum bop op, uint32_t len, unsigned idle,
		   unsigned cores)
{
	char name[48];

	if (!only)
		return true;
	if (cores > 1)
		snprintf(name, sizeof(name), "%s/%ucores-%u", op_name[op], cores,
			 len);
	else if (idle)
		snprintf(name, sizeof(name), "%s+%uidle-%u", op_name[op], idle, len);
	else
		snprintf(name, sizeof(name), "%s-%u", op_name[op], len);
	return strncmp(name, only, strlen(only)) == 0;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 64, 4096 };
	const char *only = argc > 1 ? argv[1] : NULL;
	char many[32];

	for (enum bop op = B_WRITE; op <= B_SEND; op++)
		for (unsigned i = 0; i < 2; i++)
			if (wanted(only, op, sizes[i], 0, 1))
				bench_case(op, sizes[i], 0, 1);
	if (wanted(only, B_ATOMIC, 8, 0, 1))
		bench_case(B_ATOMIC, 8, 0, 1);
	if (wanted(only, B_WRITE, 64, IDLE_MAX, 1))
		bench_case(B_WRITE, 64, IDLE_MAX, 1);
	snprintf(many, sizeof(many), "write+%uactive-64", MANY_QP);
	if (!only || strncmp(many, only, strlen(only)) == 0)
		many_case();
	/* two cores per NIC, the messages' QPs on core 1 */
	for (unsigned i = 0; i < 2; i++)
		if (wanted(only, B_WRITE, sizes[i], 0, 2))
			bench_case(B_WRITE, sizes[i], 0, 2);
	if (wanted(only, B_SEND, 64, 0, 2))
		bench_case(B_SEND, 64, 0, 2);
	return 0;
}
