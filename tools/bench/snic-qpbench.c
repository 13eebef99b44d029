/* SPDX-License-Identifier: MIT */
/*
 * QP scaling for `make bench` (and its correctness case in `make test`):
 * one process opens snic0 and snic1 and connects RC QP pairs between them
 * in-process (no out-of-band exchange), then:
 *
 *   snic-qpbench rate IDLE SECS    the 64-B RDMA WRITE message rate of one
 *                                  QP (64 outstanding, one CQE per 16)
 *                                  while IDLE other QPs exist on each NIC
 *                                  (created, in RESET: idle QPs hold no
 *                                  connection set, firmware objects/qp_conn.c)
 *   snic-qpbench many N SECS [DEPTH]
 *                                  N pairs all writing 64-B messages
 *                                  (DEPTH outstanding per QP, posted as
 *                                  one list, one CQE per list; default 4,
 *                                  at most 16): aggregate rate, and the
 *                                  slowest and fastest QP's rate
 *                                  (fairness).  All QPs share one CQ, as
 *                                  an application with many QPs does; the
 *                                  rate run posts 16 per list, so DEPTH 16
 *                                  makes the doorbells and CQEs per
 *                                  message the same as there
 *   snic-qpbench ratio N SECS TURNS [DEPTH]
 *                                  the two runs above taking turns on one
 *                                  set of N pairs, TURNS times: QP 0
 *                                  alone as `rate` drives it, then all N
 *                                  as `many` does, SECS each; the ratio
 *                                  of each turn's pair of rates, and
 *                                  their median.  Load on a shared
 *                                  machine drifts over seconds; a ratio
 *                                  of two runs SECS apart (0.5) moves
 *                                  far less than one of two separate
 *                                  processes' runs
 *   snic-qpbench tight N SECS      N pairs as `many` drives them (4 per
 *                                  list, one CQE per list) on a CQ of N
 *                                  entries: never more than N CQEs are
 *                                  outstanding, so the CQ is often
 *                                  nearly full and the NIC reads the
 *                                  host's consumer index again and again
 *                                  (with several cores, the claims'
 *                                  slow path, firmware objects/cq.c
 *                                  cq_claim_ci); an error completion or
 *                                  a stall fails it (a CQ overrun puts
 *                                  every QP in error)
 *   snic-qpbench check N [IDLE]    N pairs, each WRITEs its own pattern
 *                                  into its own 4 KiB of the peer, 8
 *                                  messages per QP; every byte checked;
 *                                  IDLE more QPs created on each NIC
 *   snic-qpbench conns N           N QPs on snic0 taken out of RESET one
 *                                  by one until ibv_modify_qp fails: it
 *                                  must fail with ENOMEM (connection sets
 *                                  used up), then work again for that QP
 *                                  once another went back to RESET
 *
 * Prints one line, "rate IDLE MMSGS", "many N MMSGS MIN_KMSGS MAX_KMSGS",
 * "ratio N MEDIAN_PCT LO_PCT HI_PCT MMSGS_1 MMSGS_N MIN_KMSGS MAX_KMSGS"
 * (the rates: medians of the turns; MIN/MAX: the slowest and fastest
 * QP over all turns), "tight N ok MMSGS", "check N ok" or "conns LIMIT
 * ok"; exit status 1
 * on any failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define MSG      64
#define SLOT     4096   /* bytes of buffer per QP */
#define DEPTH_1  64     /* outstanding WRITEs, one QP */
#define DEPTH_N  4      /* outstanding WRITEs per QP, many */
#define SIG      16     /* one signalled WRITE per batch of this many (1 QP) */
#define WAIT_S   10.0   /* completions still missing after this: the NIC is
			 * gone (snic-emu died) or stuck; an error, not a hang */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

static struct side s0, s1;
static int cq0_entries; /* snic0's CQ size when not 0 (tight) */
static struct ibv_qp **qa, **qb;
static struct ibv_qp **idle; /* idle QPs: 2 i on snic0, 2 i + 1 on snic1 */
static unsigned nq;

static void die(const char *what)
{
	fprintf(stderr, "snic-qpbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void side_open(struct side *s, struct ibv_device **list,
		      const char *name, unsigned nqp, unsigned depth,
		      unsigned nidle_qp)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			s->ctx = ibv_open_device(list[i]);
	if (!s->ctx)
		die(name);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, s == &s0 && cq0_entries ? cq0_entries :
			      (int)(nqp * depth + nidle_qp + 16), NULL, NULL, 0);
	s->buf = calloc(nqp ? nqp : 1, SLOT);
	if (!s->pd || !s->cq || !s->buf)
		die("pd/cq/buffer");
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)(nqp ? nqp : 1) * SLOT,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die("ibv_reg_mr");
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid))
		die("ibv_query_gid");
}

static struct ibv_qp *qp_new(struct side *s, unsigned depth)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &a);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static void qp_rts(struct ibv_qp *qp, const struct side *peer, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/* n connected pairs, QP i of snic0 writing into slot i of snic1, and
 * n_idle QPs created (left in RESET) on each NIC; QP 0 of snic0 holds
 * depth0 WQEs, the others depth. */
static void setup2(unsigned n, unsigned depth0, unsigned depth,
		   unsigned n_idle)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (!list)
		die("ibv_get_device_list");
	/* (side_open's last argument adds to the CQ's size: room for QP
	 * 0's deeper queue too) */
	side_open(&s0, list, "snic0", n, depth, n_idle + depth0);
	side_open(&s1, list, "snic1", n, 1, n_idle);
	ibv_free_device_list(list);
	nq = n;
	qa = calloc(n, sizeof(*qa));
	qb = calloc(n, sizeof(*qb));
	idle = calloc(2 * (size_t)n_idle + 1, sizeof(*idle));
	if (!qa || !qb || !idle)
		die("calloc");
	for (unsigned i = 0; i < n_idle; i++) {
		idle[2 * i] = qp_new(&s0, 1);
		idle[2 * i + 1] = qp_new(&s1, 1);
	}
	for (unsigned i = 0; i < n; i++) {
		qa[i] = qp_new(&s0, i ? depth : depth0);
		qb[i] = qp_new(&s1, 1);
	}
	for (unsigned i = 0; i < n; i++) {
		qp_rts(qa[i], &s1, qb[i]->qp_num);
		qp_rts(qb[i], &s0, qa[i]->qp_num);
	}
}

static void setup(unsigned n, unsigned depth, unsigned n_idle)
{
	setup2(n, depth, depth, n_idle);
}

static int qp_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* The connection-set limit: QPs leave RESET until one cannot (ENOMEM,
 * nothing else); that QP is still in RESET and gets a set once another
 * QP gave its set back (RESET). */
static int conns(unsigned n)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	unsigned ok = 0;
	int rc = 0;

	setup(0, 1, n);
	while (ok < n && (rc = qp_to_init(idle[2 * ok])) == 0)
		ok++;
	if (ok == n || rc != ENOMEM) {
		fprintf(stderr, "snic-qpbench: %u of %u QPs left RESET, then %s\n",
			ok, n, ok == n ? "no failure" : strerror(rc));
		return 1;
	}
	if (ibv_query_qp(idle[2 * ok], &a, IBV_QP_STATE, &ia) ||
	    a.qp_state != IBV_QPS_RESET) {
		fprintf(stderr, "snic-qpbench: refused QP not in RESET\n");
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(idle[0], &a, IBV_QP_STATE))
		die("back to RESET");
	if (qp_to_init(idle[2 * ok]))
		die("INIT after a set was given back");
	printf("conns %u ok\n", ok);
	return 0;
}

/* No completion since `since` for WAIT_S while `want - got` are missing:
 * say so and fail (polling an empty CQ would spin forever). */
static void wait_check(double since, uint64_t got, uint64_t want,
		       const char *what)
{
	if (now_s() - since < WAIT_S)
		return;
	fprintf(stderr, "snic-qpbench: %s: no completion for %.0f s, %llu of "
		"%llu missing (is snic-emu still running?)\n", what, WAIT_S,
		(unsigned long long)(want - got), (unsigned long long)want);
	exit(1);
}

/* Post `count` WRITEs of len bytes on QP i as one list, the last one
 * signalled (one CQE per batch, as perftest's CQ moderation). */
static void post(unsigned i, uint32_t len, uint64_t off, unsigned count)
{
	struct ibv_sge sge = { (uintptr_t)s0.buf + (uint64_t)i * SLOT + off,
			       len, s0.mr->lkey };
	struct ibv_send_wr wr[SIG], *bad;

	for (unsigned k = 0; k < count; k++)
		wr[k] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = k == count - 1 ? IBV_SEND_SIGNALED : 0,
			.next = k == count - 1 ? NULL : &wr[k + 1],
			.wr.rdma = { (uintptr_t)s1.buf + (uint64_t)i * SLOT + off,
				     s1.mr->rkey },
		};
	if (ibv_post_send(qa[i], wr, &bad))
		die("ibv_post_send");
}

/* Keep `depth` WRITEs outstanding on QPs [0, active) for secs seconds, in
 * batches of `batch` (depth a multiple of it); per-QP messages in done[]. */
static double run(unsigned active, unsigned depth, unsigned batch, double secs,
		  uint64_t *done)
{
	struct ibv_wc wc[64];
	double t0 = now_s(), t;

	for (unsigned i = 0; i < active; i++)
		for (unsigned k = 0; k < depth; k += batch)
			post(i, MSG, 0, batch);
	do {
		int n = ibv_poll_cq(s0.cq, 64, wc);

		if (n < 0)
			die("ibv_poll_cq");
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "snic-qpbench: QP %u: %s\n",
					(unsigned)wc[k].wr_id,
					ibv_wc_status_str(wc[k].status));
				exit(1);
			}
			done[wc[k].wr_id] += batch;
			post((unsigned)wc[k].wr_id, MSG, 0, batch);
		}
		t = now_s() - t0;
	} while (t < secs);
	/* drain what is still in flight (not counted) */
	t0 = now_s();
	for (uint64_t got = 0, want = (uint64_t)active * depth / batch; got < want;) {
		int n = ibv_poll_cq(s0.cq, 64, wc);

		if (n < 0)
			die("ibv_poll_cq");
		got += (uint64_t)n;
		if (n)
			t0 = now_s();
		else
			wait_check(t0, got, want, "drain");
	}
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The sum of v[0 .. n), its smallest and its largest: the aggregate and
 * the slowest and fastest QP. */
static uint64_t sum_lo_hi(const uint64_t *v, unsigned n, uint64_t *lo,
			  uint64_t *hi)
{
	uint64_t sum = 0;

	*lo = UINT64_MAX;
	*hi = 0;
	for (unsigned i = 0; i < n; i++) {
		sum += v[i];
		*lo = v[i] < *lo ? v[i] : *lo;
		*hi = v[i] > *hi ? v[i] : *hi;
	}
	return sum;
}

/* `rate`'s run on QP 0 and `many`'s on all n, taking turns (see the top
 * of the file). */
static int ratio(unsigned n, double secs, unsigned turns, unsigned depth)
{
	double *r1 = calloc(turns, sizeof(*r1)), *rn = calloc(turns, sizeof(*rn));
	double *q = calloc(turns, sizeof(*q)), tsum = 0;
	uint64_t *done = calloc(n, sizeof(*done)), *sum = calloc(n, sizeof(*sum));
	uint64_t lo, hi;

	if (!r1 || !rn || !q || !done || !sum)
		die("calloc");
	setup2(n, DEPTH_1, depth, 0);
	for (unsigned r = 0; r < turns; r++) {
		uint64_t all = 0;
		double t;

		done[0] = 0;
		t = run(1, DEPTH_1, SIG, secs, done);
		r1[r] = (double)done[0] / t / 1e6;
		memset(done, 0, n * sizeof(*done));
		t = run(n, depth, depth, secs, done);
		tsum += t;
		for (unsigned i = 0; i < n; i++) {
			all += done[i];
			sum[i] += done[i];
		}
		rn[r] = (double)all / t / 1e6;
		q[r] = 100 * rn[r] / r1[r];
	}
	sum_lo_hi(sum, n, &lo, &hi);
	{
		double m = median(q, turns); /* sorts q: q[0] lowest */

		printf("ratio %u %.1f %.1f %.1f %.3f %.3f %.2f %.2f\n", n, m,
		       q[0], q[turns - 1], median(r1, turns),
		       median(rn, turns), (double)lo / tsum / 1e3,
		       (double)hi / tsum / 1e3);
	}
	return 0;
}

static int check(unsigned n)
{
	struct ibv_wc wc[64];
	uint64_t got = 0;
	double t0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned b = 0; b < SLOT; b++)
			s0.buf[(size_t)i * SLOT + b] =
				(uint8_t)(i * 7 + b * 13 + (b >> 8));
	for (unsigned m = 0; m < 8; m++)
		for (unsigned i = 0; i < n; i++)
			post(i, SLOT / 8, (uint64_t)m * (SLOT / 8), 1);
	t0 = now_s();
	while (got < (uint64_t)n * 8) {
		int k = ibv_poll_cq(s0.cq, 64, wc);

		if (k < 0)
			die("ibv_poll_cq");
		for (int j = 0; j < k; j++)
			if (wc[j].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "snic-qpbench: QP %u: %s\n",
					(unsigned)wc[j].wr_id,
					ibv_wc_status_str(wc[j].status));
				return 1;
			}
		got += (uint64_t)k;
		if (k)
			t0 = now_s();
		else
			wait_check(t0, got, (uint64_t)n * 8, "check");
	}
	for (unsigned i = 0; i < n; i++)
		if (memcmp(s0.buf + (size_t)i * SLOT, s1.buf + (size_t)i * SLOT,
			   SLOT) != 0) {
			fprintf(stderr, "snic-qpbench: QP %u: data differs\n", i);
			return 1;
		}
	printf("check %u ok\n", n);
	return 0;
}

/* `many`'s run (and `tight`'s): n pairs, depth WRITEs per QP posted as
 * one list, for secs; the aggregate messages and the slowest and fastest
 * QP's.  Returns the seconds it ran. */
static double many_run(unsigned n, unsigned depth, double secs,
		       uint64_t *sum, uint64_t *lo, uint64_t *hi)
{
	uint64_t *done;
	double t;

	setup(n, depth, 0);
	done = calloc(nq, sizeof(*done));
	if (!done)
		die("calloc");
	t = run(n, depth, depth, secs, done);
	*sum = sum_lo_hi(done, n, lo, hi);
	free(done);
	return t;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	double secs = argc > 3 ? atof(argv[3]) : 2.0;
	uint64_t *done;

	if (strcmp(mode, "rate") == 0) {
		double t;

		setup(1, DEPTH_1, n);
		done = calloc(nq, sizeof(*done));
		if (!done)
			die("calloc");
		t = run(1, DEPTH_1, SIG, secs, done);
		printf("rate %u %.3f\n", n, (double)done[0] / t / 1e6);
		free(done);
		return 0;
	}
	if (strcmp(mode, "many") == 0 && n > 0) {
		uint64_t sum, lo, hi;
		unsigned depth = argc > 4 ? (unsigned)atoi(argv[4]) : DEPTH_N;
		double t;

		if (depth < 1 || depth > SIG) {
			fprintf(stderr, "snic-qpbench: DEPTH 1..%u\n", SIG);
			return 2;
		}
		t = many_run(n, depth, secs, &sum, &lo, &hi);
		printf("many %u %.3f %.2f %.2f\n", n, (double)sum / t / 1e6,
		       (double)lo / t / 1e3, (double)hi / t / 1e3);
		return 0;
	}
	if (strcmp(mode, "tight") == 0 && n > 0) {
		uint64_t sum, lo, hi;
		double t;

		/* one list of DEPTH_N per QP in flight, one CQE each: n */
		cq0_entries = (int)n;
		t = many_run(n, DEPTH_N, secs, &sum, &lo, &hi);
		if (lo == 0) {
			fprintf(stderr, "snic-qpbench: a QP completed nothing\n");
			return 1;
		}
		printf("tight %u ok %.3f\n", n, (double)sum / t / 1e6);
		return 0;
	}
	if (strcmp(mode, "ratio") == 0 && n > 0 && argc > 4) {
		unsigned turns = (unsigned)atoi(argv[4]);
		unsigned depth = argc > 5 ? (unsigned)atoi(argv[5]) : DEPTH_N;

		if (depth < 1 || depth > SIG || turns < 1 || secs <= 0) {
			fprintf(stderr, "snic-qpbench: TURNS >= 1, SECS > 0, "
				"DEPTH 1..%u\n", SIG);
			return 2;
		}
		return ratio(n, secs, turns, depth);
	}
	if (strcmp(mode, "check") == 0 && n > 0) {
		setup(n, 8, argc > 3 ? (unsigned)atoi(argv[3]) : 0);
		return check(n);
	}
	if (strcmp(mode, "conns") == 0 && n > 0)
		return conns(n);
	fprintf(stderr, "usage: snic-qpbench rate IDLE [SECS] | many N [SECS [DEPTH]] | "
		"ratio N SECS TURNS [DEPTH] | tight N SECS | check N [IDLE] | "
		"conns N\n");
	return 2;
}
