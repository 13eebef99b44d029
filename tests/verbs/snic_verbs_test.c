/*
 * snic_verbs_test - RC data path and error paths through the standard verbs
 * API, between two RDMA devices opened in one process.
 *
 *   snic_verbs_test [--dev0 snic0] [--dev1 snic1] [--only LIST] [--list]
 *                   [--gid-index 0] [--timeout-ms 10000] [-v]
 *
 * LIST is comma-separated from: write, read, send, errors (default: all).
 *
 * Only the standard verbs API is used, so the program is meant to pass on
 * any RoCE/IB device pair (two ports wired together, or one device twice).
 * See tests/verbs/README.md for the list of cases.
 *
 * Every case prints "ok <name>" or "FAIL <name>: <reason>" (and
 * "ok <name> # SKIP <reason>" when the devices cannot run it); the run
 * continues after a failure and ends with "verbs: N passed, N failed,
 * N skipped".  Exit status: 0 all passed, 1 a case or the set-up failed,
 * 2 bad usage.
 *
 * Memory checks work on whole buffers: every buffer an operation may touch
 * has a shadow copy holding what it must contain afterwards (the source
 * pattern where data must land, the poison everywhere else, including the
 * guard bytes around each target inside the same MR), and the buffer is
 * compared with its shadow byte for byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "vt_common.h"

enum {
	PORT = 1,
	PAGE = 4096,
	GUARD = 4096,		/* poisoned bytes kept around every target */
	MAX_SGE = 4,		/* SGEs per WR in the multi-SGE cases */
	RECV_SGE = 3,		/* SGEs per RECV in the multi-SGE SEND cases */
	SLACK = 13,		/* RECV capacity beyond the message (stays poisoned) */
	BATCH = 200,		/* messages posted at once, only the last signaled */
	SLOT = 128,		/* bytes per batch message slot */
	EDGE_MAP = 3 * PAGE,	/* edge buffers: MR over [EDGE_OFF, EDGE_OFF+EDGE_LEN) */
	EDGE_OFF = 100,
	EDGE_LEN = 8000,
	ERR_LEN = 64,		/* bytes moved by the error-case WQEs */
};
#define MIB ((size_t)1 << 20)
#define REGION_LEN (2 * MIB + 4 * (size_t)GUARD)
#define ACCESS_ALL \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* wr_ids used by the error cases */
#define ID_BAD   0xbad0bad0ULL
#define ID_GOOD  0x600d600dULL
#define ID_AFTER 0xaf7eaf7eULL

/* ------------------------------------------------------------------------ */
/* Test state                                                               */

/* A buffer, its shadow (what it must contain), and usually an MR over it. */
struct region {
	const char *name;
	uint8_t *buf;		/* mmap'd: whole pages, no heap neighbours */
	uint8_t *shadow;
	size_t len;
	struct ibv_mr *mr;	/* NULL, the whole buffer, or (edge) a part */
};

struct dev {
	struct vt_dev v;	/* name, context, attributes, port, GID, PD */
	struct region m[2];	/* two data MRs (multi-SGE lists use both) */
	struct region edge;	/* error cases: MRs over the middle of it */
};

struct test {
	struct vt v;		/* GID index, verbose, deadline, counts, reason */
	struct dev dev[2];
	int nsge_send;		/* SGEs per WR for the multi-SGE cases */
	int nsge_read;		/* RDMA READ is bounded by max_sge_rd */
	int nsge_recv;
	uint8_t *msg;		/* scratch: the expected message */
	uint32_t iter;
	uint32_t pair_seq;
};

/* e[0] on dev0 is the requester in every case, e[1] on dev1 the responder. */
struct pair {
	struct vt_ep e[2];
};

struct pair_cfg {
	enum ibv_mtu mtu;
	uint32_t send_wr, recv_wr;
	int cqe;
};

static const struct pair_cfg CFG_DATA = { IBV_MTU_1024, 256, 256, 1024 };
static const struct pair_cfg CFG_SMALL = { IBV_MTU_1024, 16, 16, 64 };

/* ------------------------------------------------------------------------ */
/* Reporting                                                                */

#define fail(t, ...) vt_fail(&(t)->v, __VA_ARGS__)
#define vlog(t, ...) vt_log(&(t)->v, __VA_ARGS__)

__attribute__((format(printf, 3, 4)))
static void report(struct test *t, bool ok, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	vt_report(&t->v, ok, name);
}

__attribute__((format(printf, 3, 4)))
static void report_skip(struct test *t, const char *reason, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	t->v.skipped++;
	printf("ok %s # SKIP %s\n", name, reason);
	fflush(stdout);
}

static const char *qp_state_str(int s)
{
	static const char *const n[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if (s >= 0 && s < (int)(sizeof n / sizeof n[0]) && n[s])
		return n[s];
	return "?";
}

static const char *wc_opcode_str(int op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

static const char *wr_opcode_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "send";
	case IBV_WR_RDMA_WRITE: return "write";
	case IBV_WR_RDMA_READ: return "read";
	default: return "?";
	}
}

static enum ibv_wc_opcode wc_opcode_for(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
	default: return IBV_WC_SEND;
	}
}

static unsigned mtu_bytes(enum ibv_mtu m)
{
	return 128u << m;
}

/* ------------------------------------------------------------------------ */
/* Time, polling                                                            */

static uint64_t deadline_ns(const struct test *t)
{
	return vt_now_ns() + (uint64_t)t->v.timeout_ms * 1000000u;
}

/*
 * Back-off for bounded polling loops: yield first, then short naps, so a
 * software NIC sharing the CPU is not starved.  Never used to wait for an
 * event by time alone: every caller re-checks its condition and deadline.
 */
static void backoff(unsigned *spins)
{
	if (++*spins < 200) {
		sched_yield();
	} else {
		struct timespec ts = { 0, 50 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* Collects exactly n completions from cq, or fails at the deadline. */
static bool poll_n(struct test *t, struct ibv_cq *cq, int n, struct ibv_wc *wc,
		   const char *what)
{
	uint64_t end = deadline_ns(t);
	unsigned spins = 0;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return fail(t, "ibv_poll_cq returned %d while waiting for %s", r, what);
		if (r > 0) {
			got += r;
			spins = 0;
			continue;
		}
		if (vt_now_ns() > end)
			return fail(t, "timeout: %u ms waiting for %s (%d of %d completion(s) arrived)",
				    t->v.timeout_ms, what, got, n);
		backoff(&spins);
	}
	return true;
}

/* Nothing (more) must be in cq. */
static bool cq_empty(struct test *t, struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int r = ibv_poll_cq(cq, 1, &wc);

	if (r < 0)
		return fail(t, "ibv_poll_cq(%s) returned %d", what, r);
	if (r > 0)
		return fail(t, "unexpected completion on %s: wr_id 0x%" PRIx64 " status %s opcode %s",
			    what, wc.wr_id, ibv_wc_status_str(wc.status), wc_opcode_str(wc.opcode));
	return true;
}

/*
 * Checks one work completion.  opcode is checked only for successful
 * completions and byte_len only when >= 0: for other statuses only wr_id,
 * status, qp_num and vendor_err are valid (ibv_poll_cq(3)).
 */
static bool check_wc(struct test *t, const struct ibv_wc *wc, const char *what,
		     enum ibv_wc_status status, int opcode, uint64_t wr_id,
		     uint32_t qp_num, long byte_len)
{
	if (wc->status != status)
		return fail(t, "%s: status %s (vendor_err 0x%x), expected %s", what,
			    ibv_wc_status_str(wc->status), wc->vendor_err,
			    ibv_wc_status_str(status));
	if (wc->wr_id != wr_id)
		return fail(t, "%s: wr_id 0x%" PRIx64 ", expected 0x%" PRIx64, what,
			    wc->wr_id, wr_id);
	if (wc->qp_num != qp_num)
		return fail(t, "%s: qp_num 0x%x, expected 0x%x", what, wc->qp_num, qp_num);
	if (status == IBV_WC_SUCCESS && opcode >= 0 && (int)wc->opcode != opcode)
		return fail(t, "%s: opcode %s (%d), expected %s", what,
			    wc_opcode_str(wc->opcode), wc->opcode, wc_opcode_str(opcode));
	if (status == IBV_WC_SUCCESS && byte_len >= 0 && wc->byte_len != (uint32_t)byte_len)
		return fail(t, "%s: byte_len %u, expected %ld", what, wc->byte_len, byte_len);
	return true;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	memset(&a, 0, sizeof a);
	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return (int)a.qp_state;
}

/* Queries the QP until it reports `want` (state changes may lag a CQE). */
static bool wait_qp_state(struct test *t, struct ibv_qp *qp, enum ibv_qp_state want,
			  const char *who)
{
	uint64_t end = deadline_ns(t);
	unsigned spins = 0;
	int s;

	for (;;) {
		s = qp_state(qp);
		if (s < 0)
			return fail(t, "ibv_query_qp(%s) failed: %s", who, strerror(errno));
		if (s == (int)want)
			return true;
		if (vt_now_ns() > end)
			return fail(t, "%s QP is in state %s, expected %s (waited %u ms)",
				    who, qp_state_str(s), qp_state_str(want), t->v.timeout_ms);
		backoff(&spins);
	}
}

/* ------------------------------------------------------------------------ */
/* Buffers: pattern, poison, shadow                                         */

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* A pattern that differs at every offset and for every seed. */
static void region_fill(struct region *r, uint32_t seed)
{
	for (size_t i = 0; i + 4 <= r->len; i += 4) {
		uint32_t w = mix32(seed + (uint32_t)(i >> 2) * 0x9e3779b9U);

		memcpy(r->buf + i, &w, 4);
	}
	memcpy(r->shadow, r->buf, r->len);
}

static bool region_check(struct test *t, const struct region *r)
{
	size_t first = SIZE_MAX, last = 0, n = 0;

	if (memcmp(r->buf, r->shadow, r->len) == 0)
		return true;
	for (size_t i = 0; i < r->len; i++) {
		if (r->buf[i] != r->shadow[i]) {
			if (first == SIZE_MAX)
				first = i;
			last = i;
			n++;
		}
	}
	return fail(t, "memory of %s: %zu byte(s) differ within [+%zu, +%zu] of %zu; "
		    "first at +%zu: got 0x%02x, want 0x%02x",
		    r->name, n, first, last, r->len, first, r->buf[first], r->shadow[first]);
}

static bool region_alloc(struct test *t, struct region *r, const char *name, size_t len)
{
	memset(r, 0, sizeof *r);
	r->name = name;
	r->len = len;
	r->buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->buf == MAP_FAILED) {
		r->buf = NULL;
		return fail(t, "mmap(%zu) for %s: %s", len, name, strerror(errno));
	}
	r->shadow = malloc(len);
	if (!r->shadow)
		return fail(t, "malloc(%zu) for %s", len, name);
	region_fill(r, 0);
	return true;
}

static void region_free(struct region *r)
{
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->buf)
		munmap(r->buf, r->len);
	free(r->shadow);
	memset(r, 0, sizeof *r);
}

static bool region_reg(struct test *t, struct region *r, struct ibv_pd *pd, int access)
{
	r->mr = ibv_reg_mr(pd, r->buf, r->len, access);
	if (!r->mr)
		return fail(t, "ibv_reg_mr(%s, %zu bytes): %s", r->name, r->len, strerror(errno));
	return true;
}

/* A piece of a region: one SGE, or one remote target. */
struct seg {
	struct region *r;
	size_t off;
	uint32_t len;
};

static uint64_t seg_addr(const struct seg *s)
{
	return (uint64_t)(uintptr_t)(s->r->buf + s->off);
}

/* Splits total into n uneven lengths, each >= 1 (needs total >= n). */
static void split_lengths(size_t total, int n, uint32_t *len)
{
	static const unsigned w[] = { 3, 1, 4, 2, 5, 1, 3, 2 };
	unsigned wsum = 0;
	size_t rest, given = 0;

	if (n == 1) {
		len[0] = (uint32_t)total;
		return;
	}
	for (int i = 0; i < n; i++)
		wsum += w[i % 8];
	rest = total - (size_t)n;
	for (int i = 0; i < n; i++) {
		len[i] = (uint32_t)(1 + rest * w[i % 8] / wsum);
		given += len[i];
	}
	len[n - 1] += (uint32_t)(total - given);
}

/*
 * Places n segments alternately in r0 and r1, at odd offsets with gaps of
 * poison between them (which must survive).
 */
static void place(struct seg *s, int n, struct region *r0, struct region *r1,
		  const uint32_t *len, size_t first_off)
{
	size_t cur[2] = { first_off, first_off + 5 };

	for (int i = 0; i < n; i++) {
		int k = i & 1;

		s[i].r = k ? r1 : r0;
		s[i].off = cur[k];
		s[i].len = len[i];
		cur[k] += len[i] + 64 + 13 * (size_t)i;
	}
}

static size_t gather(const struct seg *s, int n, uint8_t *msg)
{
	size_t at = 0;

	for (int i = 0; i < n; i++) {
		memcpy(msg + at, s[i].r->shadow + s[i].off, s[i].len);
		at += s[i].len;
	}
	return at;
}

/* Applies the expected transfer of `size` bytes to the shadows of s[]. */
static void scatter(const struct seg *s, int n, const uint8_t *msg, size_t size)
{
	size_t at = 0;

	for (int i = 0; i < n && at < size; i++) {
		size_t c = s[i].len < size - at ? s[i].len : size - at;

		memcpy(s[i].r->shadow + s[i].off, msg + at, c);
		at += c;
	}
}

static void segs_to_sges(const struct seg *s, int n, struct ibv_sge *sge)
{
	for (int i = 0; i < n; i++) {
		sge[i].addr = seg_addr(&s[i]);
		sge[i].length = s[i].len;
		sge[i].lkey = s[i].r->mr->lkey;
	}
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

static bool dev_open(struct test *t, struct dev *d, const char *name, const char *m0,
		     const char *m1)
{
	char gid[INET6_ADDRSTRLEN];

	if (!vt_dev_open(&t->v, &d->v, name))
		return false;
	if (!region_alloc(t, &d->m[0], m0, REGION_LEN) || !region_reg(t, &d->m[0], d->v.pd, ACCESS_ALL) ||
	    !region_alloc(t, &d->m[1], m1, REGION_LEN) || !region_reg(t, &d->m[1], d->v.pd, ACCESS_ALL))
		return false;

	inet_ntop(AF_INET6, d->v.gid.raw, gid, sizeof gid);
	vlog(t, "%s: fw %s, max_qp_wr %d, max_sge %d, max_sge_rd %d, max_cqe %d, "
	     "max_qp_rd_atom %d, max_qp_init_rd_atom %d; port %d: active_mtu %u, "
	     "link_layer %s, gid_tbl_len %d; gid[%d] %s",
	     name, d->v.attr.fw_ver, d->v.attr.max_qp_wr, d->v.attr.max_sge, d->v.attr.max_sge_rd,
	     d->v.attr.max_cqe, d->v.attr.max_qp_rd_atom, d->v.attr.max_qp_init_rd_atom, PORT,
	     mtu_bytes(d->v.port.active_mtu),
	     d->v.port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
	     d->v.port.gid_tbl_len, t->v.gid_index, gid);
	return true;
}

static void dev_close(struct dev *d)
{
	region_free(&d->edge);
	region_free(&d->m[0]);
	region_free(&d->m[1]);
	vt_dev_close(&d->v);
}

/* ------------------------------------------------------------------------ */
/* QPs: create, connect (RESET -> INIT -> RTR -> RTS), destroy              */

static bool ep_create(struct test *t, struct vt_ep *e, struct dev *d, const struct pair_cfg *c,
		      uint32_t psn)
{
	const struct vt_qp_cfg qc = {
		.type = IBV_QPT_RC, .send_wr = c->send_wr, .recv_wr = c->recv_wr,
		.send_sge = MAX_SGE, .recv_sge = MAX_SGE, .cqe = c->cqe,
	};

	return vt_ep_create(&t->v, e, d, &d->v, &qc, psn);
}

static void pair_destroy(struct pair *p)
{
	vt_ep_destroy(&p->e[0]);
	vt_ep_destroy(&p->e[1]);
}

/*
 * Creates and connects a QP pair.  The first PSNs vary per pair and start
 * close to the 24-bit wrap, so long messages cross it.
 */
static bool pair_create(struct test *t, struct pair *p, const struct pair_cfg *c)
{
	uint32_t seq = t->pair_seq++;
	struct ibv_qp_attr a;
	int rc;

	memset(p, 0, sizeof *p);
	if (!ep_create(t, &p->e[0], &t->dev[0], c, 0xffff00u + seq * 0x1111u) ||
	    !ep_create(t, &p->e[1], &t->dev[1], c, 0x000123u + seq * 0x10101u))
		goto err;
	for (int i = 0; i < 2; i++) {
		rc = vt_qp_init(p->e[i].qp, ACCESS_ALL);
		if (rc) {
			fail(t, "%s: modify QP RESET->INIT returned %d (%s)", p->e[i].d->v.name, rc,
			     strerror(rc));
			goto err;
		}
	}
	for (int i = 0; i < 2; i++) {
		vt_rtr_attr(&t->v, &p->e[i], &p->e[1 - i], c->mtu, 12, &a);
		rc = ibv_modify_qp(p->e[i].qp, &a, VT_RTR_MASK);
		if (rc) {
			fail(t, "%s: modify QP INIT->RTR (mtu %u) returned %d (%s)", p->e[i].d->v.name,
			     mtu_bytes(c->mtu), rc, strerror(rc));
			goto err;
		}
	}
	for (int i = 0; i < 2; i++) {
		rc = vt_qp_rts(&p->e[i]);
		if (rc) {
			fail(t, "%s: modify QP RTR->RTS returned %d (%s)", p->e[i].d->v.name, rc,
			     strerror(rc));
			goto err;
		}
	}
	vlog(t, "pair %u: %s qpn 0x%x psn 0x%06x (cap send_wr %u sge %u) <-> %s qpn 0x%x "
	     "psn 0x%06x (cap recv_wr %u sge %u), mtu %u", seq, p->e[0].d->v.name,
	     p->e[0].qp->qp_num, p->e[0].psn, p->e[0].cap.max_send_wr, p->e[0].cap.max_send_sge,
	     p->e[1].d->v.name, p->e[1].qp->qp_num, p->e[1].psn, p->e[1].cap.max_recv_wr,
	     p->e[1].cap.max_recv_sge, mtu_bytes(c->mtu));
	return true;
err:
	pair_destroy(p);
	return false;
}

/* ------------------------------------------------------------------------ */
/* Data cases                                                               */

static bool post_send_ok(struct test *t, struct ibv_qp *qp, struct ibv_send_wr *wr,
			 const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);

	if (rc)
		return fail(t, "ibv_post_send(%s) returned %d (%s)", what, rc, strerror(abs(rc)));
	return true;
}

static bool post_recv_ok(struct test *t, struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 const char *what)
{
	struct ibv_recv_wr *bad = NULL;
	int rc = ibv_post_recv(qp, wr, &bad);

	if (rc)
		return fail(t, "ibv_post_recv(%s) returned %d (%s)", what, rc, strerror(abs(rc)));
	return true;
}

static bool all_cqs_empty(struct test *t, struct pair *p)
{
	return cq_empty(t, p->e[0].scq, "requester send CQ") &&
	       cq_empty(t, p->e[0].rcq, "requester recv CQ") &&
	       cq_empty(t, p->e[1].scq, "responder send CQ") &&
	       cq_empty(t, p->e[1].rcq, "responder recv CQ");
}

static bool check_data_regions(struct test *t)
{
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++)
			if (!region_check(t, &t->dev[d].m[k]))
				return false;
	return true;
}

/*
 * One message of `size` bytes from dev0 to dev1 (WRITE, SEND) or from dev1
 * to dev0 (READ).  nl: SGEs on dev0's side, spread over two MRs; nr: SGEs
 * of the RECV (SEND only).  Source buffers hold a pattern that depends on
 * size and iteration, destination buffers a different poison.
 */
static bool run_xfer(struct test *t, struct pair *p, enum ibv_wr_opcode op, size_t size,
		     int nl, int nr)
{
	struct vt_ep *req = &p->e[0], *rsp = &p->e[1];
	struct dev *dl = req->d, *dr = rsp->d;
	uint32_t it = ++t->iter;
	uint32_t seed = mix32((uint32_t)size * 2654435761U ^ it * 40503U ^ (uint32_t)op);
	bool local_is_src = op != IBV_WR_RDMA_READ;
	struct seg ls[MAX_SGE], rs[MAX_SGE];
	struct ibv_sge lsge[MAX_SGE], rsge[MAX_SGE];
	uint32_t len[MAX_SGE];
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr;
	struct ibv_wc wc;
	uint64_t send_id = ((uint64_t)it << 8) | 0x51, recv_id = ((uint64_t)it << 8) | 0x52;
	char what[160];
	int nls, nrs;

	/* dev0 side: nl SGEs (a 0-byte message: one empty SGE, or none) */
	if (size == 0)
		nls = nl > 1 ? 0 : 1;
	else
		nls = size < (size_t)nl ? (int)size : nl;
	if (nls > 0) {
		split_lengths(size, nls, len);
		place(ls, nls, &dl->m[0], &dl->m[1], len, GUARD + 1);
	}
	/* dev1 side: one target for WRITE/READ, nr RECV SGEs for SEND */
	if (op == IBV_WR_SEND) {
		size_t cap = size + SLACK;

		nrs = cap < (size_t)nr ? (int)cap : nr;
		split_lengths(cap, nrs, len);
		place(rs, nrs, &dr->m[0], &dr->m[1], len, GUARD + 3);
	} else {
		nrs = 1;
		rs[0].r = &dr->m[0];
		rs[0].off = GUARD + 3;
		rs[0].len = (uint32_t)size;
	}

	/* contents now, expected contents in the shadows */
	for (int k = 0; k < 2; k++) {
		region_fill(&dl->m[k], local_is_src ? seed + (uint32_t)k : ~seed - (uint32_t)k);
		region_fill(&dr->m[k], local_is_src ? ~seed - (uint32_t)k : seed + (uint32_t)k);
	}
	if (local_is_src) {
		gather(ls, nls, t->msg);
		scatter(rs, nrs, t->msg, size);
	} else {
		gather(rs, 1, t->msg);
		scatter(ls, nls, t->msg, size);
	}

	segs_to_sges(ls, nls, lsge);
	if (op == IBV_WR_SEND) {
		segs_to_sges(rs, nrs, rsge);
		memset(&rwr, 0, sizeof rwr);
		rwr.wr_id = recv_id;
		rwr.sg_list = rsge;
		rwr.num_sge = nrs;
		if (!post_recv_ok(t, rsp->qp, &rwr, "RECV"))
			return false;
	}
	memset(&wr, 0, sizeof wr);
	wr.wr_id = send_id;
	wr.sg_list = nls ? lsge : NULL;
	wr.num_sge = nls;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = seg_addr(&rs[0]);
		wr.wr.rdma.rkey = dr->m[0].mr->rkey;
	}
	if (!post_send_ok(t, req->qp, &wr, wr_opcode_name(op)))
		return false;

	snprintf(what, sizeof what, "the %s completion of a %zu-byte %s (wr_id 0x%" PRIx64 ")",
		 dl->v.name, size, wr_opcode_name(op), send_id);
	if (!poll_n(t, req->scq, 1, &wc, what) ||
	    !check_wc(t, &wc, "requester completion", IBV_WC_SUCCESS, wc_opcode_for(op), send_id,
		      req->qp->qp_num, -1))
		return false;
	if (op == IBV_WR_SEND) {
		snprintf(what, sizeof what, "the %s RECV completion of a %zu-byte send (wr_id 0x%" PRIx64 ")",
			 dr->v.name, size, recv_id);
		if (!poll_n(t, rsp->rcq, 1, &wc, what) ||
		    !check_wc(t, &wc, "RECV completion", IBV_WC_SUCCESS, IBV_WC_RECV, recv_id,
			      rsp->qp->qp_num, (long)size))
			return false;
	}
	return all_cqs_empty(t, p) && check_data_regions(t);
}

/*
 * BATCH small messages posted with one ibv_post_send, only the last one
 * signaled.  SEND: BATCH RECVs posted at once; their completions must come
 * in posting order and carry the messages in order (sequence numbers).
 */
static bool run_batch(struct test *t, struct pair *p, enum ibv_wr_opcode op)
{
	struct vt_ep *req = &p->e[0], *rsp = &p->e[1];
	struct region *L = &req->d->m[0], *R = &rsp->d->m[0];
	uint32_t it = ++t->iter, seed = mix32(it * 0x2545f491U ^ (uint32_t)op);
	bool local_is_src = op != IBV_WR_RDMA_READ;
	static struct ibv_send_wr wr[BATCH];
	static struct ibv_recv_wr rwr[BATCH];
	static struct ibv_sge sge[BATCH], rsge[BATCH];
	static struct ibv_wc wc[BATCH];
	uint32_t size[BATCH];
	char what[160];

	if (req->cap.max_send_wr < BATCH || (op == IBV_WR_SEND && rsp->cap.max_recv_wr < BATCH))
		return fail(t, "QPs too small for a batch of %d (send_wr %u, recv_wr %u)", BATCH,
			    req->cap.max_send_wr, rsp->cap.max_recv_wr);

	region_fill(L, local_is_src ? seed : ~seed);
	region_fill(R, local_is_src ? ~seed : seed);
	region_fill(&req->d->m[1], seed ^ 0x1111);
	region_fill(&rsp->d->m[1], seed ^ 0x2222);

	for (uint32_t i = 0; i < BATCH; i++) {
		size_t loff = GUARD + (size_t)i * SLOT;
		size_t roff = GUARD + (size_t)i * SLOT + (op == IBV_WR_SEND ? 0 : 5);
		struct region *src = local_is_src ? L : R;
		size_t soff = local_is_src ? loff : roff;

		size[i] = 1 + (i * 37) % (SLOT - 16);
		/* the sequence number leads each message */
		for (uint32_t b = 0; b < 4 && b < size[i]; b++)
			src->buf[soff + b] = src->shadow[soff + b] = (uint8_t)(i >> (8 * b));
		if (local_is_src)
			memcpy(R->shadow + roff, L->shadow + loff, size[i]);
		else
			memcpy(L->shadow + loff, R->shadow + roff, size[i]);

		sge[i].addr = (uint64_t)(uintptr_t)(L->buf + loff);
		sge[i].length = size[i];
		sge[i].lkey = L->mr->lkey;
		memset(&wr[i], 0, sizeof wr[i]);
		wr[i].wr_id = ((uint64_t)it << 16) | i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = op;
		wr[i].send_flags = i == BATCH - 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].next = i == BATCH - 1 ? NULL : &wr[i + 1];
		if (op != IBV_WR_SEND) {
			wr[i].wr.rdma.remote_addr = (uint64_t)(uintptr_t)(R->buf + roff);
			wr[i].wr.rdma.rkey = R->mr->rkey;
		} else {
			rsge[i].addr = (uint64_t)(uintptr_t)(R->buf + roff);
			rsge[i].length = SLOT;
			rsge[i].lkey = R->mr->lkey;
			memset(&rwr[i], 0, sizeof rwr[i]);
			rwr[i].wr_id = ((uint64_t)it << 16) | 0x8000 | i;
			rwr[i].sg_list = &rsge[i];
			rwr[i].num_sge = 1;
			rwr[i].next = i == BATCH - 1 ? NULL : &rwr[i + 1];
		}
	}
	if (op == IBV_WR_SEND && !post_recv_ok(t, rsp->qp, &rwr[0], "batch of RECVs"))
		return false;
	if (!post_send_ok(t, req->qp, &wr[0], "batch"))
		return false;

	snprintf(what, sizeof what, "the one signaled completion of a batch of %d %ss", BATCH,
		 wr_opcode_name(op));
	if (!poll_n(t, req->scq, 1, wc, what) ||
	    !check_wc(t, wc, "batch completion", IBV_WC_SUCCESS, wc_opcode_for(op),
		      wr[BATCH - 1].wr_id, req->qp->qp_num, -1))
		return false;
	if (op == IBV_WR_SEND) {
		if (!poll_n(t, rsp->rcq, BATCH, wc, "the RECV completions of the batch"))
			return false;
		for (uint32_t i = 0; i < BATCH; i++) {
			char w[64];
			const uint8_t *slot = R->buf + GUARD + (size_t)i * SLOT;

			snprintf(w, sizeof w, "RECV completion #%u", i);
			if (!check_wc(t, &wc[i], w, IBV_WC_SUCCESS, IBV_WC_RECV, rwr[i].wr_id,
				      rsp->qp->qp_num, (long)size[i]))
				return false;
			if (size[i] >= 4) {
				uint32_t seq = (uint32_t)slot[0] | (uint32_t)slot[1] << 8 |
					       (uint32_t)slot[2] << 16 | (uint32_t)slot[3] << 24;

				if (seq != i)
					return fail(t, "RECV #%u holds message with sequence number %u "
						    "(out of order)", i, seq);
			}
		}
	}
	return all_cqs_empty(t, p) && check_data_regions(t);
}

static void run_data_group(struct test *t, enum ibv_wr_opcode op)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, MIB };
	static const enum ibv_mtu mtus[] = { IBV_MTU_1024, IBV_MTU_4096 };
	const char *name = wr_opcode_name(op);
	int nmulti = op == IBV_WR_RDMA_READ ? t->nsge_read : t->nsge_send;
	int nrecv = op == IBV_WR_SEND ? t->nsge_recv : 1;

	for (size_t m = 0; m < sizeof mtus / sizeof mtus[0]; m++) {
		struct pair_cfg cfg = CFG_DATA;
		unsigned mb = mtu_bytes(mtus[m]);
		struct pair p;
		bool up;

		if (t->dev[0].v.port.active_mtu < mtus[m] || t->dev[1].v.port.active_mtu < mtus[m]) {
			char why[96];

			snprintf(why, sizeof why, "active_mtu is %u/%u",
				 mtu_bytes(t->dev[0].v.port.active_mtu),
				 mtu_bytes(t->dev[1].v.port.active_mtu));
			report_skip(t, why, "%s mtu%u", name, mb);
			continue;
		}
		cfg.mtu = mtus[m];
		up = pair_create(t, &p, &cfg);
		if (!up) {
			report(t, false, "%s mtu%u connect", name, mb);
			continue;
		}
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && up; s++) {
			for (int layout = 0; layout < 2 && up; layout++) {
				int nl = layout ? nmulti : 1, nr = layout ? nrecv : 1;
				bool ok;

				if (layout && nl == 1 && nr == 1)
					continue;	/* device allows a single SGE only */
				ok = run_xfer(t, &p, op, sizes[s], nl, nr);
				if (op == IBV_WR_SEND)
					report(t, ok, "%s mtu%u size%zu sge%d/%d", name, mb, sizes[s], nl, nr);
				else
					report(t, ok, "%s mtu%u size%zu sge%d", name, mb, sizes[s], nl);
				if (!ok) {
					/* contain the failure: continue on a fresh pair */
					pair_destroy(&p);
					up = pair_create(t, &p, &cfg);
					if (!up)
						report(t, false, "%s mtu%u reconnect", name, mb);
				}
			}
		}
		if (!up)
			continue;
		report(t, run_batch(t, &p, op), "%s mtu%u batch%d unsignaled", name, mb, BATCH);
		pair_destroy(&p);
	}
}

/* ------------------------------------------------------------------------ */
/* Error cases: local protection (the requester's own SGEs)                 */

enum lkey_fault { LK_BAD, LK_OTHER_PD, LK_BELOW, LK_BEYOND };

static bool key_in_use(const struct dev *d, uint32_t k)
{
	for (int i = 0; i < 2; i++)
		if (d->m[i].mr && (d->m[i].mr->lkey == k || d->m[i].mr->rkey == k))
			return true;
	return d->edge.mr && (d->edge.mr->lkey == k || d->edge.mr->rkey == k);
}

/* A key that none of our MRs on d carries. */
static uint32_t bogus_key(const struct dev *d, uint32_t near)
{
	uint32_t k = ~near;

	while (key_in_use(d, k) || k == near)
		k = mix32(k + 0x9e3779b9U);
	return k;
}

/* Flushed-WQE check shared by the local and remote cases. */
static bool post_after_error(struct test *t, struct vt_ep *req, struct vt_ep *rsp)
{
	struct region *L = &req->d->m[0], *R = &rsp->d->m[0];
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(L->buf + GUARD), ERR_LEN, L->mr->lkey };
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = ID_AFTER;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(R->buf + 3 * GUARD);
	wr.wr.rdma.rkey = R->mr->rkey;
	return post_send_ok(t, req->qp, &wr, "WRITE posted to a QP in ERR") &&
	       poll_n(t, req->scq, 1, &wc, "the flush completion of a WQE posted in ERR") &&
	       check_wc(t, &wc, "WQE posted after the error", IBV_WC_WR_FLUSH_ERR, -1, ID_AFTER,
			req->qp->qp_num, -1);
}

/*
 * A WQE whose local SGE is bad, chained with a good WQE behind it:
 * LOC_PROT_ERR, then WR_FLUSH_ERR for the good one (which must not run),
 * QP in ERR, a WQE posted afterwards flushes too, no memory changes.
 */
static bool ec_local(struct test *t, int op_, int fault_)
{
	enum ibv_wr_opcode op = (enum ibv_wr_opcode)op_;
	enum lkey_fault fault = (enum lkey_fault)fault_;
	struct dev *d0 = &t->dev[0], *d1 = &t->dev[1];
	struct region *L = &d0->m[0], *R = &d1->m[0];
	struct ibv_pd *pd2 = NULL;
	struct region other;
	struct ibv_mr *emr = NULL;
	struct ibv_sge bad, good, rsge[2];
	struct ibv_send_wr wr[2];
	struct ibv_recv_wr rwr[2];
	struct ibv_wc wc[2];
	struct pair p;
	bool ok = false;

	memset(&other, 0, sizeof other);
	if (!pair_create(t, &p, &CFG_SMALL))
		return false;
	region_fill(L, 0x10c41);
	region_fill(R, 0xbeef);
	region_fill(&d0->edge, 0xed6e);

	switch (fault) {
	case LK_BAD:
		bad.addr = (uint64_t)(uintptr_t)(L->buf + GUARD);
		bad.length = ERR_LEN;
		bad.lkey = bogus_key(d0, L->mr->lkey);
		break;
	case LK_OTHER_PD:
		pd2 = ibv_alloc_pd(d0->v.ctx);
		if (!pd2) {
			fail(t, "second ibv_alloc_pd(%s): %s", d0->v.name, strerror(errno));
			goto out;
		}
		if (!region_alloc(t, &other, "buffer registered in another PD", 2 * PAGE) ||
		    !region_reg(t, &other, pd2, ACCESS_ALL))
			goto out;
		bad.addr = (uint64_t)(uintptr_t)(other.buf + 64);
		bad.length = ERR_LEN;
		bad.lkey = other.mr->lkey;
		break;
	case LK_BELOW:
	case LK_BEYOND:
		emr = ibv_reg_mr(d0->v.pd, d0->edge.buf + EDGE_OFF, EDGE_LEN, ACCESS_ALL);
		if (!emr) {
			fail(t, "ibv_reg_mr(edge): %s", strerror(errno));
			goto out;
		}
		/* 16 bytes crossing the MR's first / last byte by one */
		bad.addr = (uint64_t)(uintptr_t)(d0->edge.buf + EDGE_OFF +
						 (fault == LK_BELOW ? -1 : EDGE_LEN - 15));
		bad.length = 16;
		bad.lkey = emr->lkey;
		break;
	}
	good.addr = (uint64_t)(uintptr_t)(L->buf + 2 * GUARD);
	good.length = ERR_LEN;
	good.lkey = L->mr->lkey;

	if (op == IBV_WR_SEND) {
		for (int i = 0; i < 2; i++) {
			rsge[i].addr = (uint64_t)(uintptr_t)(R->buf + GUARD + (size_t)i * PAGE);
			rsge[i].length = PAGE;
			rsge[i].lkey = R->mr->lkey;
			memset(&rwr[i], 0, sizeof rwr[i]);
			rwr[i].wr_id = 0x7ecf0 + (uint64_t)i;
			rwr[i].sg_list = &rsge[i];
			rwr[i].num_sge = 1;
			rwr[i].next = i ? NULL : &rwr[1];
		}
		if (!post_recv_ok(t, p.e[1].qp, rwr, "RECVs"))
			goto out;
	}
	memset(wr, 0, sizeof wr);
	for (int i = 0; i < 2; i++) {
		wr[i].wr_id = i ? ID_GOOD : ID_BAD;
		wr[i].sg_list = i ? &good : &bad;
		wr[i].num_sge = 1;
		wr[i].opcode = op;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uint64_t)(uintptr_t)(R->buf + (size_t)(i + 1) * GUARD);
		wr[i].wr.rdma.rkey = R->mr->rkey;
	}
	wr[0].next = &wr[1];
	if (!post_send_ok(t, p.e[0].qp, wr, "bad WQE + good WQE"))
		goto out;
	if (!poll_n(t, p.e[0].scq, 2, wc, "the completions of the bad WQE and the one behind it") ||
	    !check_wc(t, &wc[0], "bad WQE", IBV_WC_LOC_PROT_ERR, -1, ID_BAD, p.e[0].qp->qp_num, -1) ||
	    !check_wc(t, &wc[1], "WQE queued behind it", IBV_WC_WR_FLUSH_ERR, -1, ID_GOOD,
		      p.e[0].qp->qp_num, -1) ||
	    !wait_qp_state(t, p.e[0].qp, IBV_QPS_ERR, "requester") ||
	    !post_after_error(t, &p.e[0], &p.e[1]))
		goto out;
	/* nothing reached the responder: it is still RTS, no RECV consumed */
	if (!cq_empty(t, p.e[1].rcq, "responder recv CQ") ||
	    !wait_qp_state(t, p.e[1].qp, IBV_QPS_RTS, "responder"))
		goto out;
	ok = region_check(t, R) && region_check(t, L) && region_check(t, &d0->edge) &&
	     (!other.buf || region_check(t, &other));
out:
	pair_destroy(&p);
	if (emr)
		ibv_dereg_mr(emr);
	region_free(&other);
	if (pd2)
		ibv_dealloc_pd(pd2);
	return ok;
}

/* ------------------------------------------------------------------------ */
/* Error cases: remote access (the responder's rkey checks)                 */

/*
 * One WRITE or READ of `len` bytes at raddr/rkey on dev1, which must end in
 * IBV_WC_REM_ACCESS_ERR with both QPs in ERR (the responder's error is of
 * IBA class C), a later WQE flushed, and no byte changed on either side:
 * dev1's edge buffer (the target of these cases), dev1's data MR, and the
 * local buffer (the source of a WRITE, the destination of a READ).
 */
static bool remote_fault(struct test *t, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
			 uint32_t len)
{
	struct dev *d0 = &t->dev[0], *d1 = &t->dev[1];
	struct region *L = &d0->m[0];
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(L->buf + GUARD), len, L->mr->lkey };
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	struct pair p;
	char what[160];
	bool ok = false;

	if (!pair_create(t, &p, &CFG_SMALL))
		return false;
	region_fill(L, 0x5eed);
	region_fill(&d1->m[0], 0xbeef);

	memset(&wr, 0, sizeof wr);
	wr.wr_id = ID_BAD;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	snprintf(what, sizeof what, "the completion of the refused %s (rkey 0x%x)",
		 wr_opcode_name(op), rkey);
	if (!post_send_ok(t, p.e[0].qp, &wr, wr_opcode_name(op)) ||
	    !poll_n(t, p.e[0].scq, 1, &wc, what) ||
	    !check_wc(t, &wc, "requester completion", IBV_WC_REM_ACCESS_ERR, -1, ID_BAD,
		      p.e[0].qp->qp_num, -1) ||
	    !wait_qp_state(t, p.e[0].qp, IBV_QPS_ERR, "requester") ||
	    !wait_qp_state(t, p.e[1].qp, IBV_QPS_ERR, "responder") ||
	    !post_after_error(t, &p.e[0], &p.e[1]))
		goto out;
	ok = region_check(t, &d1->edge) && region_check(t, &d1->m[0]) && region_check(t, L);
out:
	pair_destroy(&p);
	return ok;
}

static uint64_t edge_addr(const struct dev *d, long off)
{
	return (uint64_t)(uintptr_t)(d->edge.buf + EDGE_OFF) + (uint64_t)off;
}

static struct ibv_mr *edge_reg(struct test *t, struct dev *d, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(d->v.pd, d->edge.buf + EDGE_OFF, EDGE_LEN, access);

	if (!mr)
		fail(t, "ibv_reg_mr(%s edge, access 0x%x): %s", d->v.name, access, strerror(errno));
	return mr;
}

static bool ec_wrong_rkey(struct test *t, int op, int unused)
{
	struct dev *d1 = &t->dev[1];
	struct ibv_mr *mr;
	bool ok;

	(void)unused;
	region_fill(&d1->edge, 0xed6e1);
	mr = edge_reg(t, d1, ACCESS_ALL);
	if (!mr)
		return false;
	ok = remote_fault(t, (enum ibv_wr_opcode)op, edge_addr(d1, 16), bogus_key(d1, mr->rkey),
			  ERR_LEN);
	ibv_dereg_mr(mr);
	return ok;
}

/* Access flags missing on the target MR. */
static bool ec_access(struct test *t, int op, int access)
{
	struct dev *d1 = &t->dev[1];
	struct ibv_mr *mr;
	bool ok;

	region_fill(&d1->edge, 0xed6e2);
	mr = edge_reg(t, d1, access);
	if (!mr)
		return false;
	ok = remote_fault(t, (enum ibv_wr_opcode)op, edge_addr(d1, 16), mr->rkey, ERR_LEN);
	ibv_dereg_mr(mr);
	return ok;
}

/* The rkey of a deregistered MR; reuse: a new MR registered right after. */
static bool ec_dereg(struct test *t, int op, int reuse)
{
	struct dev *d1 = &t->dev[1];
	struct ibv_mr *old, *fresh = NULL;
	uint32_t stale;
	bool ok;
	int rc;

	region_fill(&d1->edge, 0xed6e3);
	old = edge_reg(t, d1, ACCESS_ALL);
	if (!old)
		return false;
	stale = old->rkey;
	rc = ibv_dereg_mr(old);
	if (rc)
		return fail(t, "ibv_dereg_mr returned %d (%s)", rc, strerror(rc));
	if (reuse) {
		/* same memory, same access: only the key can tell them apart */
		fresh = edge_reg(t, d1, ACCESS_ALL);
		if (!fresh)
			return false;
		if (fresh->rkey == stale) {
			ibv_dereg_mr(fresh);
			return fail(t, "the new MR got the deregistered MR's rkey 0x%x again: "
				    "a stale key cannot be told from the new one", stale);
		}
		vlog(t, "stale rkey 0x%x, new MR rkey 0x%x", stale, fresh->rkey);
	}
	ok = remote_fault(t, (enum ibv_wr_opcode)op, edge_addr(d1, 16), stale, ERR_LEN);
	if (fresh)
		ibv_dereg_mr(fresh);
	return ok;
}

/*
 * 16 bytes starting one byte before the MR, or ending one byte after it.
 * First, on the same MR, the exact first and last 16 bytes must work (so
 * the bounds are not off by one the other way).
 */
static bool ec_bounds(struct test *t, int op_, int beyond)
{
	enum ibv_wr_opcode op = (enum ibv_wr_opcode)op_;
	struct dev *d0 = &t->dev[0], *d1 = &t->dev[1];
	struct region *L = &d0->m[0];
	struct ibv_mr *mr;
	struct pair p;
	bool ok = false;

	region_fill(&d1->edge, 0xed6e4);
	mr = edge_reg(t, d1, ACCESS_ALL);
	if (!mr)
		return false;
	if (!pair_create(t, &p, &CFG_SMALL))
		goto out_mr;
	region_fill(L, 0xf00d);
	region_fill(&d1->m[0], 0xbeef);
	for (int i = 0; i < 2; i++) {
		long roff = i ? EDGE_LEN - 16 : 0;
		size_t loff = GUARD + (size_t)i * 64;
		struct ibv_sge sge = { (uint64_t)(uintptr_t)(L->buf + loff), 16, L->mr->lkey };
		struct ibv_send_wr wr;
		struct ibv_wc wc;

		memset(&wr, 0, sizeof wr);
		wr.wr_id = 0xb0de0 + (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = edge_addr(d1, roff);
		wr.wr.rdma.rkey = mr->rkey;
		if (op == IBV_WR_RDMA_WRITE)
			memcpy(d1->edge.shadow + EDGE_OFF + roff, L->shadow + loff, 16);
		else
			memcpy(L->shadow + loff, d1->edge.shadow + EDGE_OFF + roff, 16);
		if (!post_send_ok(t, p.e[0].qp, &wr, "in-bounds control") ||
		    !poll_n(t, p.e[0].scq, 1, &wc, "an in-bounds control at the MR's edge") ||
		    !check_wc(t, &wc, i ? "in-bounds control (last 16 bytes)" :
			      "in-bounds control (first 16 bytes)", IBV_WC_SUCCESS,
			      wc_opcode_for(op), wr.wr_id, p.e[0].qp->qp_num, -1))
			goto out;
	}
	if (!region_check(t, &d1->edge) || !region_check(t, L))
		goto out;
	pair_destroy(&p);
	ok = remote_fault(t, op, edge_addr(d1, beyond ? EDGE_LEN - 15 : -1), mr->rkey, 16);
	ibv_dereg_mr(mr);
	return ok;
out:
	pair_destroy(&p);
out_mr:
	ibv_dereg_mr(mr);
	return ok;
}

/* ------------------------------------------------------------------------ */
/* Error cases: verbs calls with invalid arguments                          */

/*
 * Expected return values, from rdma-core (libibverbs/verbs.c passes the
 * provider's value through unchanged) and the kernel's uverbs/ib_core:
 *
 *  ibv_modify_qp, illegal transition or missing required attributes:
 *    EINVAL (ib_modify_qp_is_ok() fails; mlx5_ib and rxe both return
 *    -EINVAL, rdma-core hands back the positive errno); qp->state unchanged.
 *  ibv_create_qp, cap above the device limit: NULL, errno EINVAL
 *    (mlx5: "if (attr->cap.max_send_sge > ctx->max_sge) errno = EINVAL";
 *    rxe: rxe_qp_chk_cap() -> -EINVAL).
 *  ibv_post_send, num_sge > max_send_sge: *bad_wr = wr and an error.  The
 *    providers disagree: mlx5 returns ENOMEM (same code as SQ overflow), rxe
 *    -EINVAL (negative), hns/bnxt EINVAL; the core library has no check
 *    (ibv_post_send is an inline call of the provider).  We expect EINVAL,
 *    the value the verbs spec's "invalid argument" maps to, and accept the
 *    mlx5 and rxe values (noted with -v).
 *  ibv_post_send beyond the SQ depth: ENOMEM (mlx5_wq_overflow; rxe
 *    returns -ENOMEM, accepted), *bad_wr = the first WR not posted.
 *  ibv_dealloc_pd of a PD in use: EBUSY (uverbs_free_pd checks usecnt).
 *  ibv_destroy_cq of a CQ used by a QP: EBUSY (ib_destroy_cq_user checks
 *    usecnt).
 *  ibv_reg_mr with REMOTE_WRITE but not LOCAL_WRITE: NULL, errno EINVAL
 *    (ib_check_mr_access).
 *  ibv_query_gid, index or port out of range: non-zero (-1).
 */

static bool expect_rc(struct test *t, const char *call, int rc, int want, int alt1, int alt2)
{
	if (rc == want)
		return true;
	if (rc != 0 && (rc == alt1 || rc == alt2)) {
		vlog(t, "note: %s returned %d (%s); accepted (another rdma-core provider's value), "
		     "%d (%s) expected", call, rc, strerror(abs(rc)), want, strerror(want));
		return true;
	}
	return fail(t, "%s returned %d (%s), expected %d (%s)", call, rc,
		    rc ? strerror(abs(rc)) : "success", want, strerror(want));
}

static bool expect_state(struct test *t, struct ibv_qp *qp, enum ibv_qp_state want)
{
	int s = qp_state(qp);

	if (s != (int)want)
		return fail(t, "QP state is %s after the refused call, expected %s",
			    s < 0 ? "(query failed)" : qp_state_str(s), qp_state_str(want));
	return true;
}

static struct ibv_qp *bare_qp(struct test *t, struct dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof ia);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(d->v.pd, &ia);
	if (!qp)
		fail(t, "ibv_create_qp(%s): %s", d->v.name, strerror(errno));
	return qp;
}

static bool ev_modify(struct test *t, int which, int unused)
{
	struct dev *d = &t->dev[0];
	struct ibv_cq *cq;
	struct ibv_qp *qp = NULL;
	struct ibv_qp_attr a;
	bool ok = false;
	int rc;

	(void)unused;
	cq = ibv_create_cq(d->v.ctx, 16, NULL, NULL, 0);
	if (!cq)
		return fail(t, "ibv_create_cq: %s", strerror(errno));
	qp = bare_qp(t, d, cq);
	if (!qp)
		goto out;
	memset(&a, 0, sizeof a);
	if (which == 0) {
		/* RESET -> RTS, with every attribute RTR->RTS needs */
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = 0;
		a.max_rd_atomic = 1;
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
		ok = expect_rc(t, "ibv_modify_qp(RESET->RTS)", rc, EINVAL, 0, 0) &&
		     expect_state(t, qp, IBV_QPS_RESET);
		goto out;
	}
	rc = vt_qp_init(qp, ACCESS_ALL);
	if (rc) {
		fail(t, "modify QP RESET->INIT returned %d (%s)", rc, strerror(rc));
		goto out;
	}
	if (which == 1) {
		/* INIT -> RTR with IBV_QP_STATE alone */
		a.qp_state = IBV_QPS_RTR;
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		ok = expect_rc(t, "ibv_modify_qp(INIT->RTR, mask STATE only)", rc, EINVAL, 0, 0) &&
		     expect_state(t, qp, IBV_QPS_INIT);
	} else {
		/* INIT -> RTR with everything but the address vector */
		struct vt_ep self = { .d = d, .vd = &d->v, .qp = qp, .psn = 0x42 };

		vt_rtr_attr(&t->v, &self, &self, IBV_MTU_1024, 12, &a);
		rc = ibv_modify_qp(qp, &a, VT_RTR_MASK & ~IBV_QP_AV);
		ok = expect_rc(t, "ibv_modify_qp(INIT->RTR without IBV_QP_AV)", rc, EINVAL, 0, 0) &&
		     expect_state(t, qp, IBV_QPS_INIT);
	}
out:
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	return ok;
}

static bool ev_create_qp_caps(struct test *t, int which, int unused)
{
	struct dev *d = &t->dev[0];
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool ok;

	(void)unused;
	if (which == 1 && (d->v.attr.max_qp_wr <= 0 || d->v.attr.max_qp_wr == INT_MAX))
		return true;
	cq = ibv_create_cq(d->v.ctx, 16, NULL, NULL, 0);
	if (!cq)
		return fail(t, "ibv_create_cq: %s", strerror(errno));
	memset(&ia, 0, sizeof ia);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	if (which == 0)
		ia.cap.max_send_sge = (uint32_t)d->v.attr.max_sge + 1;
	else
		ia.cap.max_send_wr = (uint32_t)d->v.attr.max_qp_wr + 1;
	errno = 0;
	qp = ibv_create_qp(d->v.pd, &ia);
	if (qp) {
		ibv_destroy_qp(qp);
		ok = fail(t, "ibv_create_qp with %s above the device's %d succeeded",
			  which ? "max_send_wr" : "max_send_sge",
			  which ? d->v.attr.max_qp_wr : d->v.attr.max_sge);
	} else if (errno != EINVAL) {
		ok = fail(t, "ibv_create_qp failed with errno %d (%s), expected EINVAL", errno,
			  strerror(errno));
	} else {
		ok = true;
	}
	ibv_destroy_cq(cq);
	return ok;
}

static bool ev_too_many_sge(struct test *t, int unused1, int unused2)
{
	struct region *L = &t->dev[0].m[0], *R = &t->dev[1].m[0];
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge *sge;
	struct ibv_wc wc;
	struct pair p;
	bool ok = false;
	uint32_t n;
	int rc;

	(void)unused1;
	(void)unused2;
	if (!pair_create(t, &p, &CFG_SMALL))
		return false;
	region_fill(L, 0x5e6e);
	region_fill(R, 0xbeef);
	n = p.e[0].cap.max_send_sge + 1;
	sge = calloc(n, sizeof *sge);
	if (!sge) {
		fail(t, "calloc");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		sge[i].addr = (uint64_t)(uintptr_t)(L->buf + GUARD + 2 * (size_t)i);
		sge[i].length = 1;
		sge[i].lkey = L->mr->lkey;
	}
	memset(&wr, 0, sizeof wr);
	wr.wr_id = ID_BAD;
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(R->buf + GUARD);
	wr.wr.rdma.rkey = R->mr->rkey;
	rc = ibv_post_send(p.e[0].qp, &wr, &bad);
	if (!expect_rc(t, "ibv_post_send(num_sge = max_send_sge + 1)", rc, EINVAL, ENOMEM, -EINVAL))
		goto out;
	if (bad != &wr) {
		fail(t, "*bad_wr is %p, expected the refused WR %p", (void *)bad, (void *)&wr);
		goto out;
	}
	/* the refused WR must not run: the next completion is a later WR's */
	memset(&wr, 0, sizeof wr);
	wr.wr_id = ID_GOOD;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(R->buf + GUARD);
	wr.wr.rdma.rkey = R->mr->rkey;
	ok = post_send_ok(t, p.e[0].qp, &wr, "0-byte WRITE after the refused one") &&
	     poll_n(t, p.e[0].scq, 1, &wc, "a 0-byte WRITE posted after the refused WR") &&
	     check_wc(t, &wc, "completion after the refused WR", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		      ID_GOOD, p.e[0].qp->qp_num, -1) &&
	     region_check(t, R);
out:
	free(sge);
	pair_destroy(&p);
	return ok;
}

static bool ev_sq_overflow(struct test *t, int unused1, int unused2)
{
	struct pair_cfg cfg = CFG_SMALL;
	struct region *L = &t->dev[0].m[0], *R = &t->dev[1].m[0];
	struct ibv_send_wr *wr = NULL, *bad = NULL;
	struct ibv_sge *sge = NULL;
	struct ibv_wc *wc = NULL;
	struct pair p;
	uint32_t cap, n, k;
	bool ok = false;
	int rc;

	(void)unused1;
	(void)unused2;
	cfg.send_wr = 8;
	cfg.cqe = 1024;
	if (!pair_create(t, &p, &cfg))
		return false;
	cap = p.e[0].cap.max_send_wr;
	if (cap + 16 > 1000) {
		fail(t, "asked for an SQ of 8, the device made it %u: too deep to test here", cap);
		goto out;
	}
	n = cap + 16;
	wr = calloc(n, sizeof *wr);
	sge = calloc(n, sizeof *sge);
	wc = calloc(n, sizeof *wc);
	if (!wr || !sge || !wc) {
		fail(t, "calloc");
		goto out;
	}
	region_fill(L, 0x0f10);
	region_fill(R, 0xbeef);
	for (uint32_t i = 0; i < n; i++) {
		sge[i].addr = (uint64_t)(uintptr_t)(L->buf + GUARD + i);
		sge[i].length = 1;
		sge[i].lkey = L->mr->lkey;
		wr[i].wr_id = 0x50000 + (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uint64_t)(uintptr_t)(R->buf + GUARD + i);
		wr[i].wr.rdma.rkey = R->mr->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	rc = ibv_post_send(p.e[0].qp, wr, &bad);
	if (rc == 0) {
		fail(t, "%u WRs posted at once on an SQ of %u: all accepted", n, cap);
		/* they were all posted: collect them before tearing down */
		poll_n(t, p.e[0].scq, (int)n, wc, "the over-posted WRs");
		goto out;
	}
	if (!expect_rc(t, "ibv_post_send beyond the SQ depth", rc, ENOMEM, -ENOMEM, 0))
		goto out;
	if (bad < wr || bad >= wr + n) {
		fail(t, "*bad_wr %p does not point into the posted list", (void *)bad);
		goto out;
	}
	k = (uint32_t)(bad - wr);
	if (k < 8 || k > cap) {
		fail(t, "%u WRs accepted before ENOMEM, expected between 8 (asked) and %u "
		     "(max_send_wr returned by ibv_create_qp)", k, cap);
		if (k)
			poll_n(t, p.e[0].scq, (int)k, wc, "the accepted WRs");
		goto out;
	}
	vlog(t, "SQ depth: asked 8, cap %u, accepted %u of %u", cap, k, n);
	for (uint32_t i = 0; i < k; i++)
		R->shadow[GUARD + i] = L->shadow[GUARD + i];
	if (!poll_n(t, p.e[0].scq, (int)k, wc, "the completions of the accepted WRs"))
		goto out;
	for (uint32_t i = 0; i < k; i++)
		if (!check_wc(t, &wc[i], "accepted WR", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			      wr[i].wr_id, p.e[0].qp->qp_num, -1))
			goto out;
	/* the SQ has room again once its completions are polled */
	wr[k].next = NULL;
	R->shadow[GUARD + k] = L->shadow[GUARD + k];
	ok = post_send_ok(t, p.e[0].qp, &wr[k], "one more WR after draining") &&
	     poll_n(t, p.e[0].scq, 1, wc, "the WR posted after draining the SQ") &&
	     check_wc(t, wc, "WR posted after draining", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		      wr[k].wr_id, p.e[0].qp->qp_num, -1) &&
	     region_check(t, R);
out:
	free(wr);
	free(sge);
	free(wc);
	pair_destroy(&p);
	return ok;
}

static bool ev_dealloc_pd_busy(struct test *t, int unused1, int unused2)
{
	struct dev *d = &t->dev[0];
	struct ibv_pd *pd;
	struct region r;
	bool ok;
	int rc;

	(void)unused1;
	(void)unused2;
	pd = ibv_alloc_pd(d->v.ctx);
	if (!pd)
		return fail(t, "ibv_alloc_pd: %s", strerror(errno));
	if (!region_alloc(t, &r, "MR of the busy PD", PAGE) || !region_reg(t, &r, pd, ACCESS_ALL)) {
		region_free(&r);
		ibv_dealloc_pd(pd);
		return false;
	}
	rc = ibv_dealloc_pd(pd);
	ok = expect_rc(t, "ibv_dealloc_pd of a PD with an MR", rc, EBUSY, 0, 0);
	region_free(&r);	/* deregisters the MR */
	if (rc == EBUSY) {
		rc = ibv_dealloc_pd(pd);
		if (rc && ok)
			ok = fail(t, "ibv_dealloc_pd after ibv_dereg_mr returned %d (%s)", rc,
				  strerror(rc));
	}
	return ok;
}

static bool ev_destroy_cq_busy(struct test *t, int unused1, int unused2)
{
	struct dev *d = &t->dev[0];
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool ok;
	int rc;

	(void)unused1;
	(void)unused2;
	cq = ibv_create_cq(d->v.ctx, 16, NULL, NULL, 0);
	if (!cq)
		return fail(t, "ibv_create_cq: %s", strerror(errno));
	qp = bare_qp(t, d, cq);
	if (!qp) {
		ibv_destroy_cq(cq);
		return false;
	}
	rc = ibv_destroy_cq(cq);
	ok = expect_rc(t, "ibv_destroy_cq of a CQ used by a QP", rc, EBUSY, 0, 0) &&
	     expect_state(t, qp, IBV_QPS_RESET);
	ibv_destroy_qp(qp);
	if (rc == EBUSY) {
		rc = ibv_destroy_cq(cq);
		if (rc && ok)
			ok = fail(t, "ibv_destroy_cq after ibv_destroy_qp returned %d (%s)", rc,
				  strerror(rc));
	}
	return ok;
}

static bool ev_reg_mr_access(struct test *t, int unused1, int unused2)
{
	struct dev *d = &t->dev[0];
	struct ibv_mr *mr;

	(void)unused1;
	(void)unused2;
	errno = 0;
	mr = ibv_reg_mr(d->v.pd, d->edge.buf, PAGE, IBV_ACCESS_REMOTE_WRITE);
	if (mr) {
		ibv_dereg_mr(mr);
		return fail(t, "ibv_reg_mr(REMOTE_WRITE without LOCAL_WRITE) succeeded");
	}
	if (errno != EINVAL)
		return fail(t, "ibv_reg_mr(REMOTE_WRITE without LOCAL_WRITE) failed with errno %d "
			    "(%s), expected EINVAL", errno, strerror(errno));
	return true;
}

static bool ev_query_gid(struct test *t, int unused1, int unused2)
{
	struct dev *d = &t->dev[0];
	union ibv_gid g;
	int rc;

	(void)unused1;
	(void)unused2;
	rc = ibv_query_gid(d->v.ctx, PORT, t->v.gid_index, &g);
	if (rc || memcmp(&g, &d->v.gid, sizeof g))
		return fail(t, "control: ibv_query_gid(index %d) returned %d or another GID",
			    t->v.gid_index, rc);
	if (ibv_query_gid(d->v.ctx, PORT, d->v.port.gid_tbl_len, &g) == 0)
		return fail(t, "ibv_query_gid(index gid_tbl_len = %d) succeeded",
			    d->v.port.gid_tbl_len);
	if (ibv_query_gid(d->v.ctx, PORT, -1, &g) == 0)
		return fail(t, "ibv_query_gid(index -1) succeeded");
	if (ibv_query_gid(d->v.ctx, (uint8_t)(d->v.attr.phys_port_cnt + 1), 0, &g) == 0)
		return fail(t, "ibv_query_gid(port %d, beyond phys_port_cnt) succeeded",
			    d->v.attr.phys_port_cnt + 1);
	return true;
}

/* ibv_open_device(NULL): NULL with errno EINVAL, not a crash (the library
 * cannot tell a device from nothing; we chose the cheap guard). */
static bool ev_open_null(struct test *t, int unused1, int unused2)
{
	struct ibv_context *c;

	(void)unused1;
	(void)unused2;
	errno = 0;
	c = ibv_open_device(NULL);
	if (c) {
		ibv_close_device(c);
		return fail(t, "ibv_open_device(NULL) returned a context");
	}
	if (errno != EINVAL)
		return fail(t, "ibv_open_device(NULL) failed with errno %d (%s), "
			    "expected EINVAL", errno, strerror(errno));
	return true;
}

/* ------------------------------------------------------------------------ */
/* The error group                                                          */

struct err_case {
	const char *name;
	bool (*fn)(struct test *, int, int);
	int a, b;
};

static const struct err_case error_cases[] = {
	{ "bad lkey in SEND sge -> LOC_PROT_ERR, flush",
	  ec_local, IBV_WR_SEND, LK_BAD },
	{ "bad lkey in WRITE sge -> LOC_PROT_ERR, flush",
	  ec_local, IBV_WR_RDMA_WRITE, LK_BAD },
	{ "lkey of another PD's MR in SEND sge -> LOC_PROT_ERR",
	  ec_local, IBV_WR_SEND, LK_OTHER_PD },
	{ "lkey of another PD's MR in WRITE sge -> LOC_PROT_ERR",
	  ec_local, IBV_WR_RDMA_WRITE, LK_OTHER_PD },
	{ "SEND sge starting 1 byte below its MR -> LOC_PROT_ERR",
	  ec_local, IBV_WR_SEND, LK_BELOW },
	{ "WRITE sge starting 1 byte below its MR -> LOC_PROT_ERR",
	  ec_local, IBV_WR_RDMA_WRITE, LK_BELOW },
	{ "SEND sge ending 1 byte beyond its MR -> LOC_PROT_ERR",
	  ec_local, IBV_WR_SEND, LK_BEYOND },
	{ "WRITE sge ending 1 byte beyond its MR -> LOC_PROT_ERR",
	  ec_local, IBV_WR_RDMA_WRITE, LK_BEYOND },
	{ "WRITE with a wrong rkey -> REM_ACCESS_ERR",
	  ec_wrong_rkey, IBV_WR_RDMA_WRITE, 0 },
	{ "READ with a wrong rkey -> REM_ACCESS_ERR",
	  ec_wrong_rkey, IBV_WR_RDMA_READ, 0 },
	{ "WRITE to a deregistered MR's rkey -> REM_ACCESS_ERR",
	  ec_dereg, IBV_WR_RDMA_WRITE, 0 },
	{ "READ from a deregistered MR's rkey -> REM_ACCESS_ERR",
	  ec_dereg, IBV_WR_RDMA_READ, 0 },
	{ "WRITE with a stale rkey after its slot was reused -> REM_ACCESS_ERR",
	  ec_dereg, IBV_WR_RDMA_WRITE, 1 },
	{ "READ with a stale rkey after its slot was reused -> REM_ACCESS_ERR",
	  ec_dereg, IBV_WR_RDMA_READ, 1 },
	{ "WRITE to an MR without REMOTE_WRITE -> REM_ACCESS_ERR",
	  ec_access, IBV_WR_RDMA_WRITE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ },
	{ "READ from an MR without REMOTE_READ -> REM_ACCESS_ERR",
	  ec_access, IBV_WR_RDMA_READ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
	{ "WRITE starting 1 byte below the remote MR -> REM_ACCESS_ERR",
	  ec_bounds, IBV_WR_RDMA_WRITE, 0 },
	{ "WRITE ending 1 byte beyond the remote MR -> REM_ACCESS_ERR",
	  ec_bounds, IBV_WR_RDMA_WRITE, 1 },
	{ "READ starting 1 byte below the remote MR -> REM_ACCESS_ERR",
	  ec_bounds, IBV_WR_RDMA_READ, 0 },
	{ "READ ending 1 byte beyond the remote MR -> REM_ACCESS_ERR",
	  ec_bounds, IBV_WR_RDMA_READ, 1 },
	{ "ibv_modify_qp RESET->RTS -> EINVAL, state unchanged",
	  ev_modify, 0, 0 },
	{ "ibv_modify_qp INIT->RTR with only IBV_QP_STATE -> EINVAL, state unchanged",
	  ev_modify, 1, 0 },
	{ "ibv_modify_qp INIT->RTR without IBV_QP_AV -> EINVAL, state unchanged",
	  ev_modify, 2, 0 },
	{ "ibv_create_qp max_send_sge > device max_sge -> NULL, EINVAL",
	  ev_create_qp_caps, 0, 0 },
	{ "ibv_create_qp max_send_wr > device max_qp_wr -> NULL, EINVAL",
	  ev_create_qp_caps, 1, 0 },
	{ "ibv_post_send num_sge > max_send_sge -> EINVAL, *bad_wr",
	  ev_too_many_sge, 0, 0 },
	{ "ibv_post_send beyond the SQ depth -> ENOMEM, *bad_wr",
	  ev_sq_overflow, 0, 0 },
	{ "ibv_dealloc_pd of a PD with an MR -> EBUSY",
	  ev_dealloc_pd_busy, 0, 0 },
	{ "ibv_destroy_cq of a CQ used by a QP -> EBUSY",
	  ev_destroy_cq_busy, 0, 0 },
	{ "ibv_reg_mr REMOTE_WRITE without LOCAL_WRITE -> NULL, EINVAL",
	  ev_reg_mr_access, 0, 0 },
	{ "ibv_query_gid out of range -> error",
	  ev_query_gid, 0, 0 },
	{ "ibv_open_device(NULL) -> NULL, EINVAL",
	  ev_open_null, 0, 0 },
};

static void run_error_group(struct test *t)
{
	struct pair p;
	bool ok;

	if (!region_alloc(t, &t->dev[0].edge, "dev0 edge buffer", EDGE_MAP) ||
	    !region_alloc(t, &t->dev[1].edge, "dev1 edge buffer", EDGE_MAP)) {
		report(t, false, "errors setup");
		return;
	}
	t->dev[0].edge.name = "requester's edge buffer";
	t->dev[1].edge.name = "responder's edge buffer (target)";

	for (size_t i = 0; i < sizeof error_cases / sizeof error_cases[0]; i++) {
		const struct err_case *c = &error_cases[i];

		report(t, c->fn(t, c->a, c->b), "errors: %s", c->name);
	}

	/* errors are contained: a fresh pair moves data correctly */
	ok = pair_create(t, &p, &CFG_DATA);
	if (ok) {
		ok = run_xfer(t, &p, IBV_WR_RDMA_WRITE, 4097, t->nsge_send, 1) &&
		     run_xfer(t, &p, IBV_WR_RDMA_READ, 4097, t->nsge_read, 1) &&
		     run_xfer(t, &p, IBV_WR_SEND, 4097, t->nsge_send, t->nsge_recv);
		pair_destroy(&p);
	}
	report(t, ok, "errors: a fresh QP pair works after the error cases");

	region_free(&t->dev[0].edge);
	region_free(&t->dev[1].edge);
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

enum { G_WRITE = 1, G_READ = 2, G_SEND = 4, G_ERRORS = 8, G_ALL = 15 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: snic_verbs_test [--dev0 NAME] [--dev1 NAME] [--only LIST] [--list]\n"
		"                       [--gid-index N] [--timeout-ms MS] [-v]\n"
		"  --dev0 NAME      requester device (default snic0)\n"
		"  --dev1 NAME      responder device (default snic1)\n"
		"  --only LIST      comma-separated: write,read,send,errors (default: all)\n"
		"  --list           print the case groups\n"
		"  --gid-index N    GID index on both devices (default 0)\n"
		"  --timeout-ms MS  deadline of every wait for a completion (default 10000)\n"
		"  -v               verbose\n");
}

static int parse_only(const char *arg)
{
	static const struct { const char *name; int bit; } g[] = {
		{ "write", G_WRITE }, { "read", G_READ }, { "send", G_SEND },
		{ "errors", G_ERRORS }, { "all", G_ALL },
	};
	char *copy = strdup(arg), *save = NULL;
	int mask = 0;

	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof g / sizeof g[0]; i++)
			if (strcmp(tok, g[i].name) == 0)
				break;
		if (i == sizeof g / sizeof g[0]) {
			fprintf(stderr, "snic_verbs_test: unknown case group '%s'\n", tok);
			free(copy);
			return -1;
		}
		mask |= g[i].bit;
	}
	free(copy);
	return mask ? mask : -1;
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	static struct test t;
	struct vt_args args;
	int groups = G_ALL, rc;
	bool setup_ok;

	t.v.timeout_ms = 10000;
	rc = vt_args(&t.v, argc, argv, &args, usage);
	if (rc >= 0)
		return rc;
	if (args.list) {
		puts("write\nread\nsend\nerrors");
		return 0;
	}
	if (args.only) {
		groups = parse_only(args.only);
		if (groups < 0) {
			usage(stderr);
			return 2;
		}
	}
	const char *name0 = args.dev0, *name1 = args.dev1;

	t.msg = malloc(MIB + 64);
	setup_ok = t.msg && dev_open(&t, &t.dev[0], name0, "requester MR 0", "requester MR 1") &&
		   dev_open(&t, &t.dev[1], name1, "responder MR 0", "responder MR 1");
	if (!setup_ok) {
		fprintf(stderr, "snic_verbs_test: %s\n", t.v.why[0] ? t.v.why : "out of memory");
		report(&t, false, "setup");
	} else {
		struct dev *a = &t.dev[0], *b = &t.dev[1];
		int rd0 = a->v.attr.max_sge_rd > 0 ? a->v.attr.max_sge_rd : a->v.attr.max_sge;

		t.nsge_send = min_int(MAX_SGE, min_int(a->v.attr.max_sge, b->v.attr.max_sge));
		t.nsge_read = min_int(t.nsge_send, rd0);
		t.nsge_recv = min_int(RECV_SGE, t.nsge_send);
		if (t.nsge_send < 1 || t.nsge_read < 1)
			t.nsge_send = t.nsge_read = t.nsge_recv = 1;
		vlog(&t, "SGEs per WR in multi-SGE cases: send %d, read %d, recv %d",
		     t.nsge_send, t.nsge_read, t.nsge_recv);

		if (groups & G_WRITE)
			run_data_group(&t, IBV_WR_RDMA_WRITE);
		if (groups & G_READ)
			run_data_group(&t, IBV_WR_RDMA_READ);
		if (groups & G_SEND)
			run_data_group(&t, IBV_WR_SEND);
		if (groups & G_ERRORS)
			run_error_group(&t);
	}

	dev_close(&t.dev[1]);
	dev_close(&t.dev[0]);
	free(t.msg);
	printf("verbs: %u passed, %u failed, %u skipped\n", t.v.passed, t.v.failed, t.v.skipped);
	return t.v.failed ? 1 : 0;
}
