/*
 * snic_verbs_ext - the rest of the verbs data path, values checked:
 * atomics (results, memory, concurrent FETCH_ADD from several QPs and the
 * host CPU summing exactly), immediates, inline data, 16-SGE scatter and
 * gather, zero-length messages, fences, unsignaled completions, solicited
 * events, memory windows (type 1 and 2B, invalidation), and the error
 * cases (unaligned atomic, atomic without REMOTE_ATOMIC, full queues,
 * limits exceeded).
 *
 *   snic_verbs_ext [--dev0 snic0] [--dev1 snic1] [--only LIST] [--list]
 *                  [--gid-index 0] [--timeout-ms 10000] [-v]
 *
 * LIST is comma-separated case names (see --list).  Only the standard
 * verbs API is used.  Every case prints "ok <name>" or "FAIL <name>:
 * <reason>"; the run ends with "ext: N passed, N failed".  Exit status: 0
 * all passed, 1 a case or the set-up failed, 2 bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "snic/hostif.h"

#include "vt_common.h"

enum {
	PORT = 1,
	BUF_LEN = 4 << 20,      /* per device, one MR over all of it        */
	NOATOM_OFF = 3 << 20,   /* second MR without REMOTE_ATOMIC from here */
};

#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct dev {
	struct vt_dev v;        /* name, context, attributes, port, GID, PD */
	uint8_t *buf;
	struct ibv_mr *mr;      /* all of buf, ACCESS_ALL                   */
	struct ibv_mr *mr_noatom; /* [NOATOM_OFF, BUF_LEN), no REMOTE_ATOMIC */
};

struct qp_cfg {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inl;
	int sig_all;
	bool channel;           /* recv CQ gets a completion channel        */
	int access;             /* QP access flags (0: ACCESS_ALL)          */
	enum ibv_qp_type type;  /* 0: RC                                    */
	struct ibv_srq *srq;
	int cqe;                /* entries of each CQ (0: 256)              */
};

static const struct qp_cfg CFG = { 64, 64, 4, 4, 0, 1, false, 0, 0, NULL, 0 };

static struct {
	struct vt v;            /* GID index, verbose, deadline, counts, reason */
	struct dev dev[2];
	uint32_t seq;
} T = { .v = { .keep_first = true, .timeout_ms = 10000 } };

#define fail(...) vt_fail(&T.v, __VA_ARGS__)
#define vlog(...) vt_log(&T.v, __VA_ARGS__)

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

#define CHECK(cond, ...) do { if (!(cond)) return fail(__VA_ARGS__); } while (0)

/* ------------------------------------------------------------------ */
/* Devices, QPs, connections.                                          */

static bool dev_open(struct dev *d, const char *name)
{
	if (!vt_dev_open(&T.v, &d->v, name))
		return false;
	d->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(d->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(d->buf, 0, BUF_LEN);
	d->mr = ibv_reg_mr(d->v.pd, d->buf, BUF_LEN, ACCESS_ALL);
	CHECK(d->mr, "ibv_reg_mr(%s): %s", name, strerror(errno));
	d->mr_noatom = ibv_reg_mr(d->v.pd, d->buf + NOATOM_OFF, BUF_LEN - NOATOM_OFF,
				  ACCESS_ALL & ~IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(d->mr_noatom, "ibv_reg_mr(%s, no atomic): %s", name, strerror(errno));
	return true;
}

static void dev_close(struct dev *d)
{
	if (d->mr_noatom)
		ibv_dereg_mr(d->mr_noatom);
	if (d->mr)
		ibv_dereg_mr(d->mr);
	if (d->buf && d->buf != MAP_FAILED)
		munmap(d->buf, BUF_LEN);
	vt_dev_close(&d->v);
}

static bool ep_create(struct vt_ep *e, struct dev *d, const struct qp_cfg *c)
{
	const struct vt_qp_cfg qc = {
		.type = c->type, .send_wr = c->send_wr, .recv_wr = c->recv_wr,
		.send_sge = c->send_sge, .recv_sge = c->recv_sge, .inl = c->inl,
		.cqe = c->cqe ? c->cqe : 256, .sig_all = c->sig_all, .channel = c->channel, .srq = c->srq,
	};

	return vt_ep_create(&T.v, e, d, &d->v, &qc, 0xfffff0u + T.seq++ * 0x3579u);
}

static bool ep_connect(struct vt_ep *e, const struct vt_ep *peer, int access)
{
	struct ibv_qp_attr a;
	int rc;

	rc = vt_qp_init(e->qp, access ? access : ACCESS_ALL);
	CHECK(!rc, "modify to INIT: %s", strerror(rc));
	vt_rtr_attr(&T.v, e, peer, IBV_MTU_1024, 1, &a);
	rc = ibv_modify_qp(e->qp, &a, VT_RTR_MASK);
	CHECK(!rc, "modify to RTR: %s", strerror(rc));
	rc = vt_qp_rts(e);
	CHECK(!rc, "modify to RTS: %s", strerror(rc));
	return true;
}

/* e[0] on dev0 (requester), e[1] on dev1 (responder). */
static bool pair_up(struct vt_ep e[2], const struct qp_cfg *c, int access1)
{
	if (!ep_create(&e[0], &T.dev[0], c) || !ep_create(&e[1], &T.dev[1], c))
		return false;
	return ep_connect(&e[0], &e[1], 0) && ep_connect(&e[1], &e[0], access1);
}

static void pair_down(struct vt_ep e[2])
{
	vt_ep_destroy(&e[0]);
	vt_ep_destroy(&e[1]);
}

/* ------------------------------------------------------------------ */
/* Posting and polling.                                                */

static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	uint64_t end = vt_now_ns() + (uint64_t)T.v.timeout_ms * 1000000u;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		CHECK(n >= 0, "ibv_poll_cq(%s) returned %d", what, n);
		if (n == 1)
			return true;
		CHECK(vt_now_ns() < end, "%s: no completion within %u ms", what, T.v.timeout_ms);
	}
}

static bool wc_ok(const struct ibv_wc *wc, enum ibv_wc_opcode op, const char *what)
{
	CHECK(wc->status == IBV_WC_SUCCESS, "%s: status %s (%d)", what,
	      ibv_wc_status_str(wc->status), wc->status);
	CHECK(wc->opcode == op, "%s: opcode %d, want %d", what, wc->opcode, op);
	return true;
}

/* The CQ stays empty for `ms` milliseconds. */
static bool no_cqe(struct ibv_cq *cq, unsigned ms, const char *what)
{
	uint64_t end = vt_now_ns() + (uint64_t)ms * 1000000u;
	struct ibv_wc wc;

	while (vt_now_ns() < end) {
		int n = ibv_poll_cq(cq, 1, &wc);

		CHECK(n == 0, "%s: unexpected completion (wr_id 0x%" PRIx64 " status %s)", what,
		      wc.wr_id, ibv_wc_status_str(wc.status));
	}
	return true;
}

static struct ibv_sge sge_of(struct dev *d, size_t off, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)(d->buf + off), len, d->mr->lkey };

	return s;
}

static bool post(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);

	CHECK(!rc, "ibv_post_send(%s): %s", what, strerror(rc));
	return true;
}

static bool post_recv(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = n }, *bad;
	int rc = ibv_post_recv(qp, &wr, &bad);

	CHECK(!rc, "ibv_post_recv: %s", strerror(rc));
	return true;
}

static bool atomic(struct vt_ep *e, enum ibv_wr_opcode op, size_t loc_off, uint64_t raddr,
		   uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint64_t id)
{
	struct ibv_sge s = sge_of(e->d, loc_off, 8);
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return post(e->qp, &wr, "atomic");
}

static uint64_t raddr_of(const struct vt_ep *e, size_t off)
{
	return (uintptr_t)(e->d->buf + off);
}

/* ------------------------------------------------------------------ */
/* Cases.                                                              */

static bool c_atomic(void)
{
	struct vt_ep e[2];
	struct ibv_wc wc;
	uint64_t *w = (uint64_t *)(void *)T.dev[1].buf;
	uint64_t *res = (uint64_t *)(void *)T.dev[0].buf;
	bool ok = false;

	if (!pair_up(e, &CFG, 0))
		goto out;
	*w = 100;
	res[0] = res[1] = res[2] = 0xdeadbeef;
	uint32_t rk = T.dev[1].mr->rkey;

	if (!atomic(&e[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 0, raddr_of(&e[1], 0), rk, 5, 0, 1) ||
	    !poll_one(e[0].scq, &wc, "fetch_add") || !wc_ok(&wc, IBV_WC_FETCH_ADD, "fetch_add"))
		goto out;
	if (wc.byte_len != 8 && wc.byte_len != 0) {
		fail("fetch_add: byte_len %u", wc.byte_len);
		goto out;
	}
	if (res[0] != 100 || *w != 105) {
		fail("fetch_add: returned %" PRIu64 " (want 100), memory %" PRIu64 " (want 105)",
		     res[0], *w);
		goto out;
	}
	if (!atomic(&e[0], IBV_WR_ATOMIC_CMP_AND_SWP, 8, raddr_of(&e[1], 0), rk, 105, 7, 2) ||
	    !poll_one(e[0].scq, &wc, "cmp_swap") || !wc_ok(&wc, IBV_WC_COMP_SWAP, "cmp_swap"))
		goto out;
	if (res[1] != 105 || *w != 7) {
		fail("cmp_swap (equal): returned %" PRIu64 " (want 105), memory %" PRIu64
		     " (want 7)", res[1], *w);
		goto out;
	}
	if (!atomic(&e[0], IBV_WR_ATOMIC_CMP_AND_SWP, 16, raddr_of(&e[1], 0), rk, 999, 1, 3) ||
	    !poll_one(e[0].scq, &wc, "cmp_swap") || !wc_ok(&wc, IBV_WC_COMP_SWAP, "cmp_swap"))
		goto out;
	if (res[2] != 7 || *w != 7) {
		fail("cmp_swap (different): returned %" PRIu64 " (want 7), memory %" PRIu64
		     " (want 7, unchanged)", res[2], *w);
		goto out;
	}
	/* 64-bit wrap and the full width */
	*w = UINT64_MAX - 1;
	if (!atomic(&e[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 24, raddr_of(&e[1], 0), rk, 3, 0, 4) ||
	    !poll_one(e[0].scq, &wc, "fetch_add wrap") || !wc_ok(&wc, IBV_WC_FETCH_ADD, "wrap"))
		goto out;
	if (res[3] != UINT64_MAX - 1 || *w != 1) {
		fail("fetch_add wrap: returned 0x%" PRIx64 ", memory %" PRIu64, res[3], *w);
		goto out;
	}
	ok = true;
out:
	pair_down(e);
	return ok;
}

enum { CONC_QPS = 4, CONC_OPS = 300, HOST_ADDS = 20000 };
#define HOST_ADD (1ull << 40)

static void *host_adder(void *arg)
{
	uint64_t *w = arg;

	for (int i = 0; i < HOST_ADDS; i++)
		__atomic_fetch_add(w, HOST_ADD, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Several QPs FETCH_ADD one word while the host CPU adds to it too: the
 * total is exact and every QP-side result is a distinct prior count. */
static bool c_atomic_concurrent(void)
{
	struct vt_ep e[CONC_QPS][2];
	uint64_t *w = (uint64_t *)(void *)(T.dev[1].buf + 4096);
	uint64_t *res = (uint64_t *)(void *)(T.dev[0].buf + 65536);
	unsigned posted[CONC_QPS] = { 0 }, done[CONC_QPS] = { 0 }, total = 0;
	pthread_t th;
	bool ok = false, th_started = false;
	uint8_t *seen = calloc(CONC_QPS * CONC_OPS, 1);

	memset(e, 0, sizeof e);
	*w = 0;
	for (int q = 0; q < CONC_QPS; q++)
		if (!pair_up(e[q], &CFG, 0))
			goto out;
	if (pthread_create(&th, NULL, host_adder, w) != 0) {
		fail("pthread_create");
		goto out;
	}
	th_started = true;
	uint64_t end = vt_now_ns() + (uint64_t)T.v.timeout_ms * 1000000u;

	while (total < CONC_QPS * CONC_OPS) {
		for (int q = 0; q < CONC_QPS; q++) {
			struct ibv_wc wc[16];
			int n;

			while (posted[q] < CONC_OPS && posted[q] - done[q] < 32) {
				unsigned i = q * CONC_OPS + posted[q];

				if (!atomic(&e[q][0], IBV_WR_ATOMIC_FETCH_AND_ADD, 65536 + 8 * i,
					    raddr_of(&e[q][1], 4096), T.dev[1].mr->rkey, 1, 0, i))
					goto out;
				posted[q]++;
			}
			n = ibv_poll_cq(e[q][0].scq, 16, wc);
			for (int k = 0; k < n; k++) {
				if (!wc_ok(&wc[k], IBV_WC_FETCH_ADD, "concurrent fetch_add"))
					goto out;
				done[q]++;
				total++;
			}
		}
		if (vt_now_ns() > end) {
			fail("only %u of %u FETCH_ADDs completed", total, CONC_QPS * CONC_OPS);
			goto out;
		}
	}
	pthread_join(th, NULL);
	th_started = false;
	if (*w != (uint64_t)HOST_ADDS * HOST_ADD + CONC_QPS * CONC_OPS) {
		fail("word is 0x%" PRIx64 ", want 0x%" PRIx64, *w,
		     (uint64_t)(HOST_ADDS * HOST_ADD + CONC_QPS * CONC_OPS));
		goto out;
	}
	for (unsigned i = 0; i < CONC_QPS * CONC_OPS; i++) {
		uint64_t v = res[i] & (HOST_ADD - 1);

		if (v >= CONC_QPS * CONC_OPS || seen[v]++) {
			fail("result %u: prior count %" PRIu64 " out of range or seen twice", i, v);
			goto out;
		}
	}
	vlog("%d QPs x %d FETCH_ADD + %d host adds: 0x%" PRIx64, CONC_QPS, CONC_OPS, HOST_ADDS, *w);
	ok = true;
out:
	if (th_started)
		pthread_join(th, NULL);
	for (int q = 0; q < CONC_QPS; q++)
		pair_down(e[q]);
	free(seen);
	return ok;
}

static bool c_imm(void)
{
	struct vt_ep e[2];
	struct ibv_wc wc;
	struct ibv_sge s, r;
	uint8_t *src = T.dev[0].buf, *dst = T.dev[1].buf;
	struct ibv_send_wr wr;
	bool ok = false;

	if (!pair_up(e, &CFG, 0))
		goto out;
	fill(src, 8192, 11);
	memset(dst, 0xee, 16384);
	/* SEND_WITH_IMM */
	r = sge_of(&T.dev[1], 0, 4096);
	s = sge_of(&T.dev[0], 0, 100);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.imm_data = htonl(0x12345678);
	wr.send_flags = IBV_SEND_SIGNALED;
	if (!post_recv(e[1].qp, 77, &r, 1) || !post(e[0].qp, &wr, "send_imm") ||
	    !poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "send_imm recv"))
		goto out;
	if (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htonl(0x12345678) ||
	    wc.byte_len != 100 || wc.wr_id != 77 || memcmp(dst, src, 100) != 0) {
		fail("send_imm: flags 0x%x imm 0x%x byte_len %u wr_id %" PRIu64 " data %s",
		     wc.wc_flags, ntohl(wc.imm_data), wc.byte_len, wc.wr_id,
		     memcmp(dst, src, 100) ? "differs" : "ok");
		goto out;
	}
	if (!poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "send_imm"))
		goto out;
	/* RDMA_WRITE_WITH_IMM, 3 packets: consumes a RECV, whose buffer
	 * stays untouched; the data lands at the remote address. */
	memset(dst, 0xee, 16384);
	r = sge_of(&T.dev[1], 0, 4096);
	s = sge_of(&T.dev[0], 0, 3000);
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0xcafe0001);
	wr.wr.rdma.remote_addr = raddr_of(&e[1], 8192);
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	if (!post_recv(e[1].qp, 78, &r, 1) || !post(e[0].qp, &wr, "write_imm") ||
	    !poll_one(e[1].rcq, &wc, "recv") ||
	    !wc_ok(&wc, IBV_WC_RECV_RDMA_WITH_IMM, "write_imm recv"))
		goto out;
	if (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htonl(0xcafe0001) ||
	    wc.wr_id != 78 || wc.byte_len != 3000) {
		fail("write_imm: flags 0x%x imm 0x%x byte_len %u wr_id %" PRIu64, wc.wc_flags,
		     ntohl(wc.imm_data), wc.byte_len, wc.wr_id);
		goto out;
	}
	for (int i = 0; i < 8192; i++)
		if (dst[i] != 0xee) {
			fail("write_imm wrote into the RECV buffer (byte %d)", i);
			goto out;
		}
	if (memcmp(dst + 8192, src, 3000) != 0 || dst[8192 + 3000] != 0xee) {
		fail("write_imm: remote data wrong");
		goto out;
	}
	if (!poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_RDMA_WRITE, "write_imm"))
		goto out;
	ok = true;
out:
	pair_down(e);
	return ok;
}

static bool c_inline(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_wc wc;
	uint8_t stackbuf[256], want[256];
	struct ibv_sge s[3], r;
	struct ibv_send_wr wr, *bad;
	uint8_t *dst = T.dev[1].buf;
	bool ok = false;

	c.inl = 256;
	if (!pair_up(e, &c, 0))
		goto out;
	if (e[0].cap.max_inline_data < 256) {
		fail("max_inline_data %u < 256", e[0].cap.max_inline_data);
		goto out;
	}
	fill(stackbuf, sizeof stackbuf, 5);
	memcpy(want, stackbuf, sizeof want);
	memset(dst, 0xee, 8192);
	/* inline SEND from unregistered stack memory, lkey ignored */
	s[0] = (struct ibv_sge){ (uintptr_t)stackbuf, 256, 0 };
	r = sge_of(&T.dev[1], 0, 4096);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	if (!post_recv(e[1].qp, 1, &r, 1) || !post(e[0].qp, &wr, "inline send"))
		goto out;
	memset(stackbuf, 0, sizeof stackbuf); /* the WR was copied at post time */
	if (!poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "inline recv"))
		goto out;
	if (wc.byte_len != 256 || memcmp(dst, want, 256) != 0) {
		fail("inline send: byte_len %u, data %s", wc.byte_len,
		     memcmp(dst, want, 256) ? "differs" : "ok");
		goto out;
	}
	if (!poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "inline send"))
		goto out;
	/* inline WRITE gathered from 3 pieces */
	fill(stackbuf, sizeof stackbuf, 6);
	s[0] = (struct ibv_sge){ (uintptr_t)stackbuf, 10, 0 };
	s[1] = (struct ibv_sge){ (uintptr_t)stackbuf + 100, 90, 0 };
	s[2] = (struct ibv_sge){ (uintptr_t)stackbuf + 200, 56, 0 };
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.num_sge = 3;
	wr.wr.rdma.remote_addr = raddr_of(&e[1], 4096);
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	if (!post(e[0].qp, &wr, "inline write") || !poll_one(e[0].scq, &wc, "write") ||
	    !wc_ok(&wc, IBV_WC_RDMA_WRITE, "inline write"))
		goto out;
	if (memcmp(dst + 4096, stackbuf, 10) || memcmp(dst + 4106, stackbuf + 100, 90) ||
	    memcmp(dst + 4196, stackbuf + 200, 56) || dst[4096 + 156] != 0xee) {
		fail("inline write: remote data wrong");
		goto out;
	}
	/* more than max_inline_data: EINVAL, nothing posted */
	uint8_t big[1024];

	s[0] = (struct ibv_sge){ (uintptr_t)big, e[0].cap.max_inline_data + 1, 0 };
	wr.num_sge = 1;
	bad = NULL;
	int rc = ibv_post_send(e[0].qp, &wr, &bad);

	if (rc != EINVAL || bad != &wr) {
		fail("inline of max_inline_data + 1 bytes: ibv_post_send returned %d (want EINVAL)",
		     rc);
		goto out;
	}
	ok = no_cqe(e[0].scq, 50, "after refused inline");
out:
	pair_down(e);
	return ok;
}

/* 16 SGEs: SEND gathered from 16 pieces into a RECV of 16 other pieces,
 * WRITE gathered from 16, READ scattered into 16. */
static bool c_sge16(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_wc wc;
	struct ibv_sge s[16], r[16];
	uint8_t *src = T.dev[0].buf, *dst = T.dev[1].buf;
	uint8_t *msg = malloc(65536);
	size_t total = 0, rt = 0;
	bool ok = false;

	c.send_sge = c.recv_sge = 16;
	if (!msg || !pair_up(e, &c, 0))
		goto out;
	if (e[0].cap.max_send_sge < 16 || e[1].cap.max_recv_sge < 16 ||
	    T.dev[0].v.attr.max_sge < 16) {
		fail("max_sge %d / cap send %u recv %u < 16", T.dev[0].v.attr.max_sge,
		     e[0].cap.max_send_sge, e[1].cap.max_recv_sge);
		goto out;
	}
	fill(src, 262144, 21);
	memset(dst, 0xee, 393216);
	for (int i = 0; i < 16; i++) {       /* send pieces: 1..~1700 bytes */
		uint32_t len = 1 + (uint32_t)(i * 97 + (i % 3) * 511);

		s[i] = sge_of(&T.dev[0], (size_t)i * 4096 + (size_t)i, len);
		memcpy(msg + total, src + (size_t)i * 4096 + i, len);
		total += len;
	}
	for (int i = 0; i < 16; i++) {       /* recv pieces: uneven, enough room */
		uint32_t len = i == 15 ? 16384 : (uint32_t)(3 + i * 61);

		r[i] = sge_of(&T.dev[1], 65536 + (size_t)i * 8192 + 7, len);
		rt += len;
	}
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = s;
	wr.num_sge = 16;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (!post_recv(e[1].qp, 5, r, 16) || !post(e[0].qp, &wr, "send 16 sge") ||
	    !poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "recv 16 sge") ||
	    !poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "send 16 sge"))
		goto out;
	size_t at = 0;

	for (int i = 0; i < 16 && at < total; i++) {
		size_t n = total - at < r[i].length ? total - at : r[i].length;

		if (memcmp((void *)(uintptr_t)r[i].addr, msg + at, n) != 0) {
			fail("send 16 sge: recv piece %d differs", i);
			goto out;
		}
		at += n;
	}
	/* WRITE gathered from the 16 send pieces */
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = raddr_of(&e[1], 300000);
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	if (!post(e[0].qp, &wr, "write 16 sge") || !poll_one(e[0].scq, &wc, "write") ||
	    !wc_ok(&wc, IBV_WC_RDMA_WRITE, "write 16 sge"))
		goto out;
	if (memcmp(dst + 300000, msg, total) != 0) {
		fail("write 16 sge: remote data differs");
		goto out;
	}
	/* READ scattered into 16 pieces of dev0 (max_sge_rd permitting) */
	int nrd = T.dev[0].v.attr.max_sge_rd < 16 ? T.dev[0].v.attr.max_sge_rd : 16;

	memset(src + 131072, 0xee, 131072);
	for (int i = 0; i < nrd; i++)
		r[i] = sge_of(&T.dev[0], 131072 + (size_t)i * 4096 + 3, s[i].length);
	wr.opcode = IBV_WR_RDMA_READ;
	wr.sg_list = r;
	wr.num_sge = nrd;
	if (!post(e[0].qp, &wr, "read 16 sge") || !poll_one(e[0].scq, &wc, "read") ||
	    !wc_ok(&wc, IBV_WC_RDMA_READ, "read 16 sge"))
		goto out;
	at = 0;
	for (int i = 0; i < nrd; i++) {
		if (memcmp((void *)(uintptr_t)r[i].addr, msg + at, r[i].length) != 0) {
			fail("read 16 sge: piece %d differs", i);
			goto out;
		}
		at += r[i].length;
	}
	vlog("16 SGEs: %zu bytes sent into %zu bytes of RECV; READ into %d SGEs", total, rt, nrd);
	ok = true;
out:
	pair_down(e);
	free(msg);
	return ok;
}

static bool c_zero_length(void)
{
	struct vt_ep e[2];
	struct ibv_wc wc;
	struct ibv_sge r = sge_of(&T.dev[1], 0, 64);
	struct ibv_send_wr wr;
	bool ok = false;

	if (!pair_up(e, &CFG, 0))
		goto out;
	memset(T.dev[1].buf, 0xee, 64);
	memset(&wr, 0, sizeof wr);
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr_of(&e[1], 0);
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	static const struct { enum ibv_wr_opcode op; enum ibv_wc_opcode sop, rop; bool recv; }
	ops[] = {
		{ IBV_WR_SEND, IBV_WC_SEND, IBV_WC_RECV, true },
		{ IBV_WR_SEND_WITH_IMM, IBV_WC_SEND, IBV_WC_RECV, true },
		{ IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0, false },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE, IBV_WC_RECV_RDMA_WITH_IMM, true },
		{ IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, 0, false },
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		wr.opcode = ops[i].op;
		wr.num_sge = 0;
		wr.imm_data = htonl(0x1000 + (uint32_t)i);
		if ((ops[i].recv && !post_recv(e[1].qp, i, &r, 1)) || !post(e[0].qp, &wr, "zero"))
			goto out;
		if (!poll_one(e[0].scq, &wc, "zero send") || !wc_ok(&wc, ops[i].sop, "zero send"))
			goto out;
		if (wc.byte_len != 0 && ops[i].op == IBV_WR_RDMA_READ) {
			fail("zero-length READ: byte_len %u", wc.byte_len);
			goto out;
		}
		if (ops[i].recv) {
			if (!poll_one(e[1].rcq, &wc, "zero recv") ||
			    !wc_ok(&wc, ops[i].rop, "zero recv"))
				goto out;
			if (wc.byte_len != 0) {
				fail("zero-length op %d: recv byte_len %u", ops[i].op, wc.byte_len);
				goto out;
			}
		}
	}
	for (int i = 0; i < 64; i++)
		if (T.dev[1].buf[i] != 0xee) {
			fail("a zero-length message wrote byte %d", i);
			goto out;
		}
	ok = true;
out:
	pair_down(e);
	return ok;
}

/* READ remote X into local L, then a fenced WRITE of L to remote Y: Y must
 * hold X's data (IBV_SEND_FENCE waits for the READ). */
static bool c_fence(void)
{
	struct vt_ep e[2];
	struct ibv_wc wc;
	const uint32_t len = 16384;
	bool ok = false;

	if (!pair_up(e, &CFG, 0))
		goto out;
	for (int it = 0; it < 20; it++) {
		uint8_t *x = T.dev[1].buf, *y = T.dev[1].buf + 65536, *l = T.dev[0].buf;
		struct ibv_sge ls = sge_of(&T.dev[0], 0, len), ls2 = ls;
		struct ibv_send_wr rd, wr;

		fill(x, len, 100 + it);
		fill(l, len, 200 + it);
		memset(y, 0, len);
		memset(&rd, 0, sizeof rd);
		memset(&wr, 0, sizeof wr);
		rd.opcode = IBV_WR_RDMA_READ;
		rd.sg_list = &ls;
		rd.num_sge = 1;
		rd.wr.rdma.remote_addr = raddr_of(&e[1], 0);
		rd.wr.rdma.rkey = T.dev[1].mr->rkey;
		rd.next = &wr;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.sg_list = &ls2;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = raddr_of(&e[1], 65536);
		wr.wr.rdma.rkey = T.dev[1].mr->rkey;
		/* CFG has sq_sig_all: both complete */
		if (!post(e[0].qp, &rd, "read+fenced write") ||
		    !poll_one(e[0].scq, &wc, "read") || !wc_ok(&wc, IBV_WC_RDMA_READ, "read") ||
		    !poll_one(e[0].scq, &wc, "write") || !wc_ok(&wc, IBV_WC_RDMA_WRITE, "write"))
			goto out;
		if (memcmp(y, x, len) != 0) {
			fail("iteration %d: the fenced WRITE did not carry the READ's data", it);
			goto out;
		}
	}
	ok = true;
out:
	pair_down(e);
	return ok;
}

/* sq_sig_all = 0: only signaled WRs complete, and the SQ slots of the
 * unsignaled ones are freed by the next signaled completion. */
static bool c_unsignaled(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_wc wc;
	struct ibv_sge s = sge_of(&T.dev[0], 0, 32);
	struct ibv_send_wr wr;
	bool ok = false;

	c.sig_all = 0;
	c.send_wr = 16;
	if (!pair_up(e, &c, 0))
		goto out;
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	for (unsigned round = 0; round < 20; round++) {
		for (unsigned i = 0; i < e[0].cap.max_send_wr; i++) {
			bool last = i == e[0].cap.max_send_wr - 1;

			wr.wr_id = round * 1000 + i;
			wr.send_flags = last ? IBV_SEND_SIGNALED : 0;
			wr.wr.rdma.remote_addr = raddr_of(&e[1], 64 * i);
			if (!post(e[0].qp, &wr, "unsignaled write"))
				goto out;
		}
		if (!poll_one(e[0].scq, &wc, "signaled write") ||
		    !wc_ok(&wc, IBV_WC_RDMA_WRITE, "signaled write"))
			goto out;
		if (wc.wr_id != round * 1000 + e[0].cap.max_send_wr - 1) {
			fail("round %u: completion for wr_id %" PRIu64 ", want only the signaled one",
			     round, wc.wr_id);
			goto out;
		}
	}
	ok = no_cqe(e[0].scq, 50, "unsignaled");
out:
	pair_down(e);
	return ok;
}

/* A CQ armed for solicited completions only: an unsolicited SEND raises no
 * event, a solicited one does. */
static bool c_solicited(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_wc wc;
	struct ibv_sge s = sge_of(&T.dev[0], 0, 16), r = sge_of(&T.dev[1], 0, 64);
	struct ibv_send_wr wr;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct pollfd pfd;
	bool ok = false;

	c.channel = true;
	if (!pair_up(e, &c, 0))
		goto out;
	pfd.fd = e[1].ch->fd;
	pfd.events = POLLIN;
	if (ibv_req_notify_cq(e[1].rcq, 1)) {
		fail("ibv_req_notify_cq(solicited_only)");
		goto out;
	}
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	if (!post_recv(e[1].qp, 1, &r, 1) || !post_recv(e[1].qp, 2, &r, 1) ||
	    !post(e[0].qp, &wr, "unsolicited send") || !poll_one(e[0].scq, &wc, "send") ||
	    !wc_ok(&wc, IBV_WC_SEND, "send"))
		goto out;
	if (poll(&pfd, 1, 300) != 0) {
		fail("an unsolicited completion raised an event on a solicited-only CQ");
		goto out;
	}
	wr.send_flags = IBV_SEND_SOLICITED;
	if (!post(e[0].qp, &wr, "solicited send"))
		goto out;
	if (poll(&pfd, 1, (int)T.v.timeout_ms) != 1) {
		fail("no event for the solicited completion");
		goto out;
	}
	if (ibv_get_cq_event(e[1].ch, &ev_cq, &ev_ctx) || ev_cq != e[1].rcq) {
		fail("ibv_get_cq_event");
		goto out;
	}
	ibv_ack_cq_events(ev_cq, 1);
	for (uint64_t id = 1; id <= 2; id++) {
		if (!poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "recv"))
			goto out;
		if (wc.wr_id != id) {
			fail("recv order: wr_id %" PRIu64 ", want %" PRIu64, wc.wr_id, id);
			goto out;
		}
	}
	ok = true;
out:
	pair_down(e);
	return ok;
}

/* The next async event of a context: `type` for QP `qp`. */
static bool async_event(struct ibv_context *ctx, enum ibv_event_type type, struct ibv_qp *qp,
			const char *what)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool ok;

	if (poll(&pfd, 1, (int)T.v.timeout_ms) != 1 || ibv_get_async_event(ctx, &ev))
		return fail("%s: no async event (want %s)", what, ibv_event_type_str(type));
	ok = ev.event_type == type && ev.element.qp == qp;
	if (!ok)
		fail("%s: async event %s (want %s for QP 0x%x)", what,
		     ibv_event_type_str(ev.event_type), ibv_event_type_str(type), qp->qp_num);
	ibv_ack_async_event(&ev);
	return ok;
}

/* A send CQ the application does not poll overruns: IBV_EVENT_CQ_ERR
 * for the CQ, then IBV_EVENT_QP_FATAL for the QP whose completion it
 * dropped, which ibv_query_qp then reports in IBV_QPS_ERR; the
 * completions before the overrun read back in order, once, successful,
 * and none after them (the flush has no CQ to go to). */
static bool cq_overrun_cases(struct vt_ep e[2])
{
	struct ibv_context *ctx = T.dev[0].v.ctx;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;
	uint32_t n = (uint32_t)e[0].scq->cqe + 8, got = 0;
	bool cq_ok;

	for (uint32_t i = 0; i < n; i++) {
		struct ibv_sge sg = sge_of(e[0].d, 0, 8);
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED };

		wr.wr.rdma.remote_addr = raddr_of(&e[1], 0);
		wr.wr.rdma.rkey = T.dev[1].mr->rkey;
		if (!post(e[0].qp, &wr, "cq overrun"))
			return false;
	}
	if (poll(&pfd, 1, (int)T.v.timeout_ms) != 1 || ibv_get_async_event(ctx, &ev))
		return fail("cq overrun: no async event (want CQ_ERR)");
	cq_ok = ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == e[0].scq;
	ibv_ack_async_event(&ev);
	CHECK(cq_ok, "cq overrun: first async event %s, want CQ_ERR for the send CQ",
	      ibv_event_type_str(ev.event_type));
	if (!async_event(ctx, IBV_EVENT_QP_FATAL, e[0].qp, "cq overrun"))
		return false;
	CHECK(ibv_query_qp(e[0].qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_ERR,
	      "cq overrun: QP state %d, want IBV_QPS_ERR", (int)a.qp_state);
	while (ibv_poll_cq(e[0].scq, 1, &wc) == 1) {
		CHECK(wc.wr_id == got && wc.status == IBV_WC_SUCCESS,
		      "cq overrun: completion %u: wr_id %" PRIu64 " status %s", got, wc.wr_id,
		      ibv_wc_status_str(wc.status));
		got++;
	}
	CHECK(got > (uint32_t)e[0].scq->cqe / 2 && got < n,
	      "cq overrun: %u completions read of %u posted (CQ of %d)", got, n, e[0].scq->cqe);
	return true;
}

static bool c_cq_overrun(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	bool ok;

	c.cqe = 16;
	memset(e, 0, sizeof e);
	ok = pair_up(e, &c, 0) && cq_overrun_cases(e);
	pair_down(e);
	return ok;
}

/* An atomic that fails on the responder: the requester's completion
 * carries `want`, its QP ends in the error state, and the responder's
 * context gets the affiliated event `ev` for its QP. */
static bool atomic_error(uint64_t raddr_off, uint32_t rkey, int qp_access,
			 enum ibv_wc_status want, enum ibv_event_type evt, const char *what)
{
	struct vt_ep e[2];
	struct ibv_wc wc;
	bool ok = false;

	if (!pair_up(e, &CFG, qp_access))
		goto out;
	*(uint64_t *)(void *)(T.dev[1].buf + (raddr_off & ~7ull)) = 42;
	if (!atomic(&e[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 0, raddr_of(&e[1], raddr_off), rkey, 1,
		    0, 9) || !poll_one(e[0].scq, &wc, what))
		goto out;
	if (wc.status != want) {
		fail("%s: status %s, want %s", what, ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(want));
		goto out;
	}
	if (*(uint64_t *)(void *)(T.dev[1].buf + (raddr_off & ~7ull)) != 42) {
		fail("%s: memory changed", what);
		goto out;
	}
	ok = async_event(T.dev[1].v.ctx, evt, e[1].qp, what);
out:
	pair_down(e);
	return ok;
}

static bool c_err_atomic_unaligned(void)
{
	return atomic_error(4100, T.dev[1].mr->rkey, 0, IBV_WC_REM_INV_REQ_ERR,
			    IBV_EVENT_QP_REQ_ERR, "FETCH_ADD to an address not 8-byte aligned");
}

static bool c_err_atomic_mr_access(void)
{
	return atomic_error(NOATOM_OFF + 64, T.dev[1].mr_noatom->rkey, 0,
			    IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR,
			    "FETCH_ADD into an MR without REMOTE_ATOMIC");
}

static bool c_err_atomic_qp_access(void)
{
	return atomic_error(64, T.dev[1].mr->rkey,
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			    IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR,
			    "FETCH_ADD to a QP without REMOTE_ATOMIC");
}

/* Posting to a full SQ or RQ: ENOMEM, *bad_wr at the first WR left out. */
static bool c_err_full_queue(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_sge s = sge_of(&T.dev[0], 0, 8);
	struct ibv_send_wr sw[40], *sbad = NULL;
	struct ibv_recv_wr rw[40], *rbad = NULL;
	bool ok = false;
	int rc;

	c.send_wr = 8;
	c.recv_wr = 8;
	if (!ep_create(&e[0], &T.dev[0], &c) || !ep_create(&e[1], &T.dev[1], &c) ||
	    !ep_connect(&e[0], &e[1], 0) || !ep_connect(&e[1], &e[0], 0))
		goto out;
	/* The peer has no RECVs: SENDs wait in RNR, the SQ stays full. */
	memset(sw, 0, sizeof sw);
	memset(rw, 0, sizeof rw);
	for (int i = 0; i < 40; i++) {
		sw[i].wr_id = (uint64_t)i;
		sw[i].opcode = IBV_WR_SEND;
		sw[i].sg_list = &s;
		sw[i].num_sge = 1;
		sw[i].next = i < 39 ? &sw[i + 1] : NULL;
		rw[i].wr_id = (uint64_t)i;
		rw[i].sg_list = &s;
		rw[i].num_sge = 1;
		rw[i].next = i < 39 ? &rw[i + 1] : NULL;
	}
	rc = ibv_post_send(e[0].qp, sw, &sbad);
	if (rc != ENOMEM || sbad != &sw[e[0].cap.max_send_wr]) {
		fail("SQ of %u: posting 40 returned %d, bad_wr at %td (want ENOMEM at %u)",
		     e[0].cap.max_send_wr, rc, sbad ? sbad - sw : -1, e[0].cap.max_send_wr);
		goto out;
	}
	rc = ibv_post_recv(e[0].qp, rw, &rbad);
	if (rc != ENOMEM || rbad != &rw[e[0].cap.max_recv_wr]) {
		fail("RQ of %u: posting 40 returned %d, bad_wr at %td (want ENOMEM at %u)",
		     e[0].cap.max_recv_wr, rc, rbad ? rbad - rw : -1, e[0].cap.max_recv_wr);
		goto out;
	}
	ok = true;
out:
	pair_down(e);
	return ok;
}

/* Create/modify/post beyond the device's and the QP's limits: EINVAL, as
 * rdma-core's providers answer. */
static bool c_err_limits(void)
{
	struct dev *d = &T.dev[0];
	struct ibv_cq *cq = ibv_create_cq(d->v.ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	bool ok = false;

	if (!cq)
		return fail("ibv_create_cq: %s", strerror(errno));
	static const char *const what[] = { "max_send_wr", "max_recv_wr", "max_send_sge",
					    "max_recv_sge", "max_inline_data" };
	for (int k = 0; k < 5; k++) {
		memset(&ia, 0, sizeof ia);
		ia.send_cq = ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		switch (k) {
		case 0: ia.cap.max_send_wr = (uint32_t)d->v.attr.max_qp_wr + 1; break;
		case 1: ia.cap.max_recv_wr = (uint32_t)d->v.attr.max_qp_wr + 1; break;
		case 2: ia.cap.max_send_sge = (uint32_t)d->v.attr.max_sge + 1; break;
		case 3: ia.cap.max_recv_sge = (uint32_t)d->v.attr.max_sge + 1; break;
		default: ia.cap.max_inline_data = 1u << 20; break;
		}
		errno = 0;
		qp = ibv_create_qp(d->v.pd, &ia);
		if (qp || errno != EINVAL) {
			fail("ibv_create_qp with %s beyond the device limit: %s (errno %d, want EINVAL)",
			     what[k], qp ? "created" : "refused", errno);
			if (qp)
				ibv_destroy_qp(qp);
			goto out;
		}
	}
	errno = 0;
	struct ibv_cq *big = ibv_create_cq(d->v.ctx, d->v.attr.max_cqe + 1, NULL, NULL, 0);

	if (big || errno != EINVAL) {
		fail("ibv_create_cq(max_cqe + 1): %s (errno %d, want EINVAL)",
		     big ? "created" : "refused", errno);
		if (big)
			ibv_destroy_cq(big);
		goto out;
	}
	/* a QP with small caps: WRs beyond them, modify beyond rd_atom limits */
	struct vt_ep e[2];
	struct qp_cfg c = CFG;

	c.send_sge = c.recv_sge = 2;
	memset(e, 0, sizeof e);
	if (!pair_up(e, &c, 0)) {
		pair_down(e);
		goto out;
	}
	struct ibv_sge sg[17];
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rw, *rbad;
	int rc;

	for (int i = 0; i < 17; i++)
		sg[i] = sge_of(d, (size_t)i * 8, 8);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = (int)e[0].cap.max_send_sge + 1;
	rc = ibv_post_send(e[0].qp, &wr, &bad);
	memset(&rw, 0, sizeof rw);
	rw.sg_list = sg;
	rw.num_sge = (int)e[0].cap.max_recv_sge + 1;
	int rc2 = ibv_post_recv(e[0].qp, &rw, &rbad);
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof a);
	a.max_rd_atomic = (uint8_t)(d->v.attr.max_qp_init_rd_atom + 1);
	int rc3 = ibv_modify_qp(e[0].qp, &a, IBV_QP_MAX_QP_RD_ATOMIC);

	pair_down(e);
	if (rc != EINVAL || rc2 != EINVAL || rc3 != EINVAL) {
		fail("beyond the QP's caps: post_send %d, post_recv %d, modify max_rd_atomic %d "
		     "(want EINVAL each)", rc, rc2, rc3);
		goto out;
	}
	ok = true;
out:
	ibv_destroy_cq(cq);
	return ok;
}

/* Issue 14 bug 2: every capability within the reported limits works for
 * every QP type, through ibv_create_qp and ibv_create_qp_ex alike, with
 * the comp_mask combinations rdma-core's tests use (CREATE_FLAGS with 0,
 * or IBV_QP_CREATE_BLOCK_SELF_MCAST_LB for UD; send ops; an SRQ); the
 * caps returned cover the request.  Beyond a limit: EINVAL. */
enum { CAPS_ROUNDS = 600 };

static uint32_t rnd(uint32_t *seed, uint32_t lo, uint32_t hi)
{
	*seed = *seed * 1103515245u + 12345u;
	return lo + (*seed >> 8) % (hi - lo + 1);
}

static bool caps_cover(const struct ibv_qp_cap *got, const struct ibv_qp_cap *want, bool srq)
{
	return got->max_send_wr >= want->max_send_wr &&
	       got->max_send_sge >= want->max_send_sge &&
	       got->max_inline_data >= want->max_inline_data &&
	       (srq || (got->max_recv_wr >= want->max_recv_wr &&
			got->max_recv_sge >= want->max_recv_sge));
}

static bool caps_one(struct ibv_cq *cq, struct ibv_srq *srq, uint32_t *seed, unsigned i)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct dev *d = &T.dev[0];
	struct ibv_qp_init_attr_ex x;
	struct ibv_qp_cap want;
	struct ibv_qp *qp;

	memset(&x, 0, sizeof x);
	x.qp_type = types[i % 3];
	x.send_cq = x.recv_cq = cq;
	x.sq_sig_all = (int)rnd(seed, 0, 1);
	x.cap.max_send_wr = rnd(seed, 1, (uint32_t)d->v.attr.max_qp_wr / 8);
	x.cap.max_recv_wr = rnd(seed, 1, (uint32_t)d->v.attr.max_qp_wr / 8);
	x.cap.max_send_sge = rnd(seed, 1, (uint32_t)d->v.attr.max_sge / 2);
	x.cap.max_recv_sge = rnd(seed, 1, (uint32_t)d->v.attr.max_sge / 2);
	x.cap.max_inline_data = rnd(seed, 0, 16);
	if (i % 5 == 4 && srq) {
		x.srq = srq;
		x.cap.max_recv_wr = x.cap.max_recv_sge = 0;
	}
	want = x.cap;
	x.pd = d->v.pd;
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	switch ((i / 3) % 4) {
	case 0:
		break;
	case 1:
		x.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		break;
	case 2:
		x.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		if (x.qp_type == IBV_QPT_UD)
			x.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
		break;
	default:
		x.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		x.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
		if (x.qp_type != IBV_QPT_UD)
			x.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE;
		break;
	}
	errno = 0;
	qp = ibv_create_qp_ex(d->v.ctx, &x);
	if (!qp)
		return fail("create_qp_ex #%u (type %d, mask 0x%x, flags 0x%x, wr %u/%u sge %u/%u "
			    "inline %u%s): %s", i, x.qp_type, x.comp_mask, x.create_flags,
			    want.max_send_wr, want.max_recv_wr, want.max_send_sge,
			    want.max_recv_sge, want.max_inline_data, x.srq ? ", srq" : "",
			    strerror(errno));
	bool covered = caps_cover(&x.cap, &want, x.srq != NULL);

	ibv_destroy_qp(qp);
	if (!covered)
		return fail("create_qp_ex #%u: caps %u/%u/%u/%u/%u below the request", i,
			    x.cap.max_send_wr, x.cap.max_recv_wr, x.cap.max_send_sge,
			    x.cap.max_recv_sge, x.cap.max_inline_data);
	return true;
}

static bool c_create_qp_caps(void)
{
	struct dev *d = &T.dev[0];
	struct ibv_cq *cq = ibv_create_cq(d->v.ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 4 } };
	struct ibv_srq *srq = NULL;
	struct ibv_qp_init_attr_ex x;
	struct ibv_qp *qp;
	uint32_t seed = 14;
	bool ok = false;

	if (!cq)
		return fail("ibv_create_cq: %s", strerror(errno));
	srq = ibv_create_srq(d->v.pd, &sa);
	if (!srq) {
		fail("ibv_create_srq: %s", strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < CAPS_ROUNDS; i++)
		if (!caps_one(cq, srq, &seed, i))
			goto out;
	/* beyond a limit through create_qp_ex (UD and UC): EINVAL */
	for (int k = 0; k < 4; k++) {
		memset(&x, 0, sizeof x);
		x.qp_type = k & 1 ? IBV_QPT_UC : IBV_QPT_UD;
		x.send_cq = x.recv_cq = cq;
		x.pd = d->v.pd;
		x.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
		x.cap.max_send_wr = x.cap.max_recv_wr = 4;
		x.cap.max_send_sge = x.cap.max_recv_sge = 1;
		if (k < 2)
			x.cap.max_send_wr = (uint32_t)d->v.attr.max_qp_wr + 1;
		else
			x.cap.max_recv_sge = (uint32_t)d->v.attr.max_sge + 1;
		errno = 0;
		qp = ibv_create_qp_ex(d->v.ctx, &x);
		if (qp || errno != EINVAL) {
			fail("create_qp_ex (type %d) beyond a limit: %s, errno %d (want EINVAL)",
			     x.qp_type, qp ? "created" : "refused", errno);
			if (qp)
				ibv_destroy_qp(qp);
			goto out;
		}
	}
	/* a creation flag the device does not do: EOPNOTSUPP, not created */
	memset(&x, 0, sizeof x);
	x.qp_type = IBV_QPT_UD;
	x.send_cq = x.recv_cq = cq;
	x.pd = d->v.pd;
	x.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	x.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	x.cap.max_send_wr = x.cap.max_recv_wr = x.cap.max_send_sge = x.cap.max_recv_sge = 1;
	errno = 0;
	qp = ibv_create_qp_ex(d->v.ctx, &x);
	if (qp || errno != EOPNOTSUPP) {
		fail("create_qp_ex with SCATTER_FCS: %s, errno %d (want EOPNOTSUPP)",
		     qp ? "created" : "refused", errno);
		if (qp)
			ibv_destroy_qp(qp);
		goto out;
	}
	ok = true;
out:
	if (srq)
		ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	return ok;
}

/* ------------------------------------------------------------------ */
/* ibv_rereg_mr and ibv_resize_cq.                                     */

enum { RR_LEN = 64 << 10 };

/* One RDMA WRITE or READ of `len` bytes between dev0's buf and
 * [raddr, +len) under rkey; its completion status. */
static bool rdma_op(struct vt_ep *e, enum ibv_wr_opcode op, size_t loc_off, uint64_t raddr,
		    uint32_t rkey, uint32_t len, enum ibv_wc_status *st)
{
	struct ibv_sge s = sge_of(e->d, loc_off, len);
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = 0x77;
	wr.opcode = op;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (!post(e->qp, &wr, "rdma") || !poll_one(e->scq, &wc, "rdma"))
		return false;
	*st = wc.status;
	return true;
}

static bool rdma_ok(struct vt_ep *e, enum ibv_wr_opcode op, size_t loc_off, uint64_t raddr,
		    uint32_t rkey, uint32_t len, const char *what)
{
	enum ibv_wc_status st;

	if (!rdma_op(e, op, loc_off, raddr, rkey, len, &st))
		return false;
	CHECK(st == IBV_WC_SUCCESS, "%s: status %s", what, ibv_wc_status_str(st));
	return true;
}

static bool rereg_refused(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			  size_t len, int access, int want_rc, int want_errno, const char *what)
{
	errno = 0;
	int rc = ibv_rereg_mr(mr, flags, pd, addr, len, access);

	CHECK(rc == want_rc && errno == want_errno, "rereg %s: %d errno %d, want %d errno %d",
	      what, rc, errno, want_rc, want_errno);
	return true;
}

/* The rereg checks on an MR of dev1 that dev0's QP reaches remotely: a new
 * translation (data lands in the new buffer, the old one untouched, the
 * old range refused), refused inputs leave it working, access reduced. */
static bool rereg_cases(struct vt_ep e[2], struct ibv_mr *mr, uint8_t *b1, uint8_t *b2)
{
	struct dev *d0 = &T.dev[0];
	uint32_t key = mr->rkey;
	enum ibv_wc_status st;

	fill(d0->buf, RR_LEN, 141);
	if (!rdma_ok(&e[0], IBV_WR_RDMA_WRITE, 0, (uintptr_t)b1, key, 4096, "write before rereg"))
		return false;
	CHECK(!memcmp(b1, d0->buf, 4096), "write before rereg: data differs");
	memset(b1, 0x5a, RR_LEN);
	memset(b2, 0xa5, RR_LEN);
	int rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2, RR_LEN / 2, 0);

	CHECK(rc == 0, "rereg translation: %d (%s)", rc, strerror(errno));
	CHECK(mr->addr == b2 && mr->length == RR_LEN / 2 && mr->rkey == key,
	      "after rereg: addr %p length %zu rkey 0x%x", mr->addr, mr->length, mr->rkey);
	if (!rdma_ok(&e[0], IBV_WR_RDMA_WRITE, 100, (uintptr_t)b2 + 8, key, 8192, "write after rereg"))
		return false;
	CHECK(!memcmp(b2 + 8, d0->buf + 100, 8192) && b2[0] == 0xa5 && b2[8200] == 0xa5,
	      "write after rereg: data in the new buffer differs");
	for (size_t i = 0; i < RR_LEN; i++)
		CHECK(b1[i] == 0x5a, "the old buffer changed at %zu after rereg", i);
	/* READ of the new buffer back */
	memset(d0->buf + RR_LEN, 0, 8192);
	if (!rdma_ok(&e[0], IBV_WR_RDMA_READ, RR_LEN, (uintptr_t)b2 + 8, key, 8192, "read"))
		return false;
	CHECK(!memcmp(d0->buf + RR_LEN, b2 + 8, 8192), "read after rereg: data differs");
	/* refused inputs, rdma-core's answers, and the MR unchanged */
	if (!rereg_refused(mr, 0x8, NULL, NULL, 0, 0, IBV_REREG_MR_ERR_INPUT, EINVAL,
			   "unknown flag") ||
	    !rereg_refused(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 4096, 0,
			   IBV_REREG_MR_ERR_INPUT, EINVAL, "translation to NULL") ||
	    !rereg_refused(mr, IBV_REREG_MR_CHANGE_PD, T.dev[1].v.pd, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE, IBV_REREG_MR_ERR_INPUT, EINVAL,
			   "access without CHANGE_ACCESS") ||
	    !rereg_refused(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE,
			   IBV_REREG_MR_ERR_CMD, EINVAL, "remote write without local write") ||
	    !rereg_refused(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0, IBV_REREG_MR_ERR_CMD,
			   EINVAL, "to a NULL PD"))
		return false;
	CHECK(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0) == 0, "rereg with no flag: not 0");
	if (!rdma_ok(&e[0], IBV_WR_RDMA_WRITE, 0, (uintptr_t)b2, key, 64, "write after refusals"))
		return false;
	/* read-only now: READ works, WRITE is a remote access error and the
	 * memory stays as it was */
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_READ);
	CHECK(rc == 0, "rereg access: %d (%s)", rc, strerror(errno));
	if (!rdma_ok(&e[0], IBV_WR_RDMA_READ, 0, (uintptr_t)b2 + 64, key, 64, "read, read-only MR"))
		return false;
	memcpy(b1, b2, RR_LEN / 2);
	if (!rdma_op(&e[0], IBV_WR_RDMA_WRITE, 4096, (uintptr_t)b2, key, 64, &st))
		return false;
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "write to a read-only MR: %s, want REM_ACCESS_ERR",
	      ibv_wc_status_str(st));
	CHECK(!memcmp(b1, b2, RR_LEN / 2), "write to a read-only MR changed memory");
	return true;
}

/* CHANGE_PD to a PD the QP does not use: access through it is refused. */
static bool rereg_pd_case(struct vt_ep e[2], struct ibv_mr *mr, uint8_t *b2)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(T.dev[1].v.ctx);
	enum ibv_wc_status st;
	bool ok = false;

	CHECK(pd2, "ibv_alloc_pd: %s", strerror(errno));
	if (!rdma_ok(&e[0], IBV_WR_RDMA_READ, 0, (uintptr_t)b2, mr->rkey, 64, "read before PD move"))
		goto out;
	int rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_WRITE);

	if (rc || mr->pd != pd2) {
		fail("rereg to another PD: %d (%s)", rc, strerror(errno));
		goto out;
	}
	memset(b2, 0x3c, 256);
	if (!rdma_op(&e[0], IBV_WR_RDMA_WRITE, 0, (uintptr_t)b2, mr->rkey, 64, &st))
		goto out;
	if (st != IBV_WC_REM_ACCESS_ERR || b2[0] != 0x3c || b2[63] != 0x3c) {
		fail("write through an MR of another PD: %s (want REM_ACCESS_ERR), memory %s",
		     ibv_wc_status_str(st), b2[0] != 0x3c ? "changed" : "untouched");
		goto out;
	}
	/* the PD is in use by the MR now */
	rc = ibv_dealloc_pd(pd2);
	if (rc != EBUSY) {
		fail("dealloc of the MR's new PD: %d, want EBUSY", rc);
		goto out;
	}
	ok = true;
out:
	if (mr->pd == pd2 &&
	    ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, T.dev[1].v.pd, NULL, 0, 0) && ok) {
		fail("rereg back to the first PD failed");
		ok = false;
	}
	ibv_dealloc_pd(pd2);
	return ok;
}

static bool c_rereg_mr(void)
{
	struct vt_ep e[2];
	uint8_t *b1 = mmap(NULL, RR_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b2 = mmap(NULL, RR_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr = NULL;
	bool ok = false;

	memset(e, 0, sizeof e);
	if (b1 == MAP_FAILED || b2 == MAP_FAILED) {
		fail("mmap");
		goto out;
	}
	mr = ibv_reg_mr(T.dev[1].v.pd, b1, RR_LEN, ACCESS_ALL);
	if (!mr) {
		fail("ibv_reg_mr: %s", strerror(errno));
		goto out;
	}
	if (!pair_up(e, &CFG, 0) || !rereg_cases(e, mr, b1, b2))
		goto out;
	/* the remote access error took that QP pair down: a fresh one */
	pair_down(e);
	memset(e, 0, sizeof e);
	if (!pair_up(e, &CFG, 0) || !rereg_pd_case(e, mr, b2))
		goto out;
	ok = true;
out:
	pair_down(e);
	if (mr && ibv_dereg_mr(mr) && ok)
		ok = fail("ibv_dereg_mr after rereg");
	if (b1 != MAP_FAILED)
		munmap(b1, RR_LEN);
	if (b2 != MAP_FAILED)
		munmap(b2, RR_LEN);
	return ok;
}

enum { RS_MSGS = 100 };

/* Posts n RECVs (wr_id first + i) on e[1] and n SENDs with immediate
 * first + i from e[0]; with `wait`, polls their send completions. */
static bool rs_burst(struct vt_ep e[2], uint32_t first, uint32_t n, bool wait)
{
	struct ibv_sge s = sge_of(&T.dev[0], 0, 8), r = sge_of(&T.dev[1], 0, 64);
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	for (uint32_t i = 0; i < n; i++)
		if (!post_recv(e[1].qp, first + i, &r, 1))
			return false;
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	for (uint32_t i = 0; i < n; i++) {
		wr.wr_id = first + i;
		wr.imm_data = htonl(first + i);
		if (!post(e[0].qp, &wr, "send"))
			return false;
	}
	for (uint32_t i = 0; wait && i < n; i++)
		if (!poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "send"))
			return false;
	return true;
}

/* The receive completions first .. last - 1, in order, each once. */
static bool rs_drain(struct ibv_cq *cq, uint32_t first, uint32_t last)
{
	struct ibv_wc wc;

	for (uint32_t id = first; id < last; id++) {
		if (!poll_one(cq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "recv"))
			return false;
		CHECK(wc.wr_id == id && ntohl(wc.imm_data) == id,
		      "recv after resize: wr_id %" PRIu64 " imm %u, want %u", wc.wr_id,
		      ntohl(wc.imm_data), id);
	}
	return true;
}

static bool resize_cases(struct vt_ep e[2])
{
	struct ibv_cq *cq = e[1].rcq;
	struct ibv_wc wc;
	int rc;

	/* 100 completions waiting, 10 polled: shrink to fit the 90 left */
	if (!rs_burst(e, 0, RS_MSGS, true) || !rs_drain(cq, 0, 10))
		return false;
	rc = ibv_resize_cq(cq, 20);
	CHECK(rc == EINVAL, "shrinking below the 90 completions waiting: %d, want EINVAL", rc);
	rc = ibv_resize_cq(cq, 95);
	CHECK(rc == 0 && cq->cqe >= 95, "resize to 95 with 90 waiting: %d (cqe %d)", rc, cq->cqe);
	CHECK(ibv_resize_cq(cq, 0) == EINVAL && ibv_resize_cq(cq, T.dev[1].v.attr.max_cqe + 1) ==
	      EINVAL, "resize to 0 or beyond max_cqe: not EINVAL");
	if (!rs_drain(cq, 10, RS_MSGS) || !no_cqe(cq, 20, "after the moved completions"))
		return false;
	/* grow while 100 more are in flight */
	if (!rs_burst(e, RS_MSGS, RS_MSGS, false))
		return false;
	rc = ibv_resize_cq(cq, 1000);
	CHECK(rc == 0 && cq->cqe >= 1000, "grow with completions in flight: %d", rc);
	if (!rs_drain(cq, RS_MSGS, 2 * RS_MSGS) || !no_cqe(cq, 20, "after the grow"))
		return false;
	for (uint32_t i = 0; i < RS_MSGS; i++)
		if (!poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "send"))
			return false;
	/* armed before a resize: the next completion still raises an event */
	struct pollfd pfd = { .fd = e[1].ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	CHECK(!ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq");
	rc = ibv_resize_cq(cq, 31);
	CHECK(rc == 0, "shrink to 31, CQ empty: %d", rc);
	CHECK(poll(&pfd, 1, 100) == 0, "an event without a completion after resize");
	if (!rs_burst(e, 2 * RS_MSGS, 20, false))
		return false;
	CHECK(poll(&pfd, 1, (int)T.v.timeout_ms) == 1, "no event after a resize of an armed CQ");
	CHECK(!ibv_get_cq_event(e[1].ch, &ev_cq, &ev_ctx) && ev_cq == cq, "ibv_get_cq_event");
	ibv_ack_cq_events(ev_cq, 1);
	if (!rs_drain(cq, 2 * RS_MSGS, 2 * RS_MSGS + 20) || !no_cqe(cq, 20, "after the shrink"))
		return false;
	for (uint32_t i = 0; i < 20; i++)
		if (!poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "send"))
			return false;
	return true;
}

static bool c_resize_cq(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	bool ok;

	c.send_wr = c.recv_wr = 256;
	c.channel = true;
	memset(e, 0, sizeof e);
	ok = pair_up(e, &c, 0) && resize_cases(e);
	pair_down(e);
	return ok;
}

/* ------------------------------------------------------------------ */
/* RDMA Atomic Write (ibv_wr_atomic_write).                            */

#define CAP_EX_ATOMIC_WRITE (1ull << 40) /* IB_UVERBS_DEVICE_ATOMIC_WRITE, Linux 6.2 */

/* An RC pair whose QPs have the ibv_wr_* interface with atomic write
 * (no inline data asked: the 8 bytes travel in the WQE). */
static bool atw_pair(struct vt_ep e[2])
{
	memset(e, 0, 2 * sizeof *e);
	for (int i = 0; i < 2; i++) {
		struct vt_ep *x = &e[i];

		x->d = &T.dev[i];
		x->vd = &T.dev[i].v;
		x->psn = 0x200 + (uint32_t)i;
		x->scq = ibv_create_cq(T.dev[i].v.ctx, 64, NULL, NULL, 0);
		x->rcq = ibv_create_cq(T.dev[i].v.ctx, 64, NULL, NULL, 0);
		CHECK(x->scq && x->rcq, "ibv_create_cq: %s", strerror(errno));
		struct ibv_qp_init_attr_ex qa = {
			.send_cq = x->scq, .recv_cq = x->rcq, .qp_type = IBV_QPT_RC,
			.cap = { 64, 16, 1, 1, 0 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = T.dev[i].v.pd,
			.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE,
		};
		x->qp = ibv_create_qp_ex(T.dev[i].v.ctx, &qa);
		CHECK(x->qp, "ibv_create_qp_ex(atomic write): %s", strerror(errno));
	}
	return ep_connect(&e[0], &e[1], 0) && ep_connect(&e[1], &e[0], 0);
}

/* Posts one atomic write of the 8 bytes v; returns wr_complete's result. */
static int atw_post(struct vt_ep *e, uint32_t rkey, uint64_t raddr, const uint8_t v[8],
		    uint64_t id, bool with_sge)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(e->qp);

	if (!qx)
		return -1;
	ibv_wr_start(qx);
	qx->wr_id = id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, rkey, raddr, v);
	if (with_sge)
		ibv_wr_set_sge(qx, e->d->mr->lkey, (uintptr_t)e->d->buf, 8);
	return ibv_wr_complete(qx);
}

static bool atw_status(struct vt_ep e[2], uint32_t rkey, uint64_t raddr,
		       enum ibv_wc_status want, const char *what)
{
	static const uint8_t v[8] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };
	struct ibv_wc wc;
	int rc = atw_post(&e[0], rkey, raddr, v, 0x99, false);

	CHECK(rc == 0, "%s: wr_complete %d", what, rc);
	if (!poll_one(e[0].scq, &wc, what))
		return false;
	CHECK(wc.status == want, "%s: status %s, want %s", what, ibv_wc_status_str(wc.status),
	      ibv_wc_status_str(want));
	return true;
}

static bool atw_data(struct vt_ep e[2], uint8_t *word)
{
	uint64_t raddr = (uintptr_t)word;
	uint32_t rkey = T.dev[1].mr->rkey;
	uint8_t v[8], last[8];
	struct ibv_wc wc;

	memset(word - 64, 0x6b, 136);
	for (int i = 0; i < 8; i++)
		v[i] = (uint8_t)(0x11 * (i + 1));
	CHECK(atw_post(&e[0], rkey, raddr, v, 1, false) == 0, "wr_complete");
	if (!poll_one(e[0].scq, &wc, "atomic write") || !wc_ok(&wc, IBV_WC_ATOMIC_WRITE,
								"atomic write"))
		return false;
	CHECK(wc.wr_id == 1, "atomic write: wr_id %" PRIu64, wc.wr_id);
	CHECK(!memcmp(word, v, 8), "atomic write: the word holds %02x%02x..%02x, want 1122..88",
	      word[0], word[1], word[7]);
	for (int i = -64; i < 72; i++)
		CHECK(i >= 0 && i < 8 ? true : word[i] == 0x6b, "atomic write touched byte %d", i);
	/* 40 in a row, in order: the last one stays */
	for (uint32_t n = 0; n < 40; n++) {
		for (int i = 0; i < 8; i++)
			last[i] = (uint8_t)(n * 13 + (uint32_t)i);
		CHECK(atw_post(&e[0], rkey, raddr, last, 100 + n, false) == 0, "wr_complete #%u", n);
	}
	for (uint32_t n = 0; n < 40; n++) {
		if (!poll_one(e[0].scq, &wc, "atomic write burst") ||
		    !wc_ok(&wc, IBV_WC_ATOMIC_WRITE, "atomic write burst"))
			return false;
		CHECK(wc.wr_id == 100 + n, "burst: wr_id %" PRIu64 ", want %u", wc.wr_id, 100 + n);
	}
	CHECK(!memcmp(word, last, 8), "after 40 atomic writes the word is not the last value");
	/* an SGE on an atomic write: refused by wr_complete, nothing posted */
	CHECK(atw_post(&e[0], rkey, raddr, v, 2, true) == EINVAL,
	      "atomic write with an SGE: not EINVAL");
	return no_cqe(e[0].scq, 20, "refused atomic write");
}

static bool c_atomic_write(void)
{
	struct ibv_device_attr_ex x;
	uint8_t *word = T.dev[1].buf + 2 * 65536;
	struct ibv_mr *ro = NULL;
	struct vt_ep e[2];
	bool ok = false;

	memset(&x, 0, sizeof x);
	CHECK(!ibv_query_device_ex(T.dev[0].v.ctx, NULL, &x) &&
	      (x.device_cap_flags_ex & CAP_EX_ATOMIC_WRITE),
	      "device_cap_flags_ex 0x%" PRIx64 " without ATOMIC_WRITE", x.device_cap_flags_ex);
	if (!atw_pair(e) || !atw_data(e, word))
		goto out;
	/* misaligned: invalid request, memory untouched */
	pair_down(e);
	memset(word, 0x6b, 16);
	if (!atw_pair(e) || !atw_status(e, T.dev[1].mr->rkey, (uintptr_t)word + 4,
					IBV_WC_REM_INV_REQ_ERR, "misaligned atomic write"))
		goto out;
	for (int i = 0; i < 16; i++)
		if (word[i] != 0x6b) {
			fail("misaligned atomic write changed byte %d", i);
			goto out;
		}
	/* an MR without remote write: remote access error, memory untouched */
	pair_down(e);
	ro = ibv_reg_mr(T.dev[1].v.pd, word - 4096 * 0, 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!ro) {
		fail("ibv_reg_mr(read only): %s", strerror(errno));
		goto out;
	}
	if (!atw_pair(e) || !atw_status(e, ro->rkey, (uintptr_t)word, IBV_WC_REM_ACCESS_ERR,
					"atomic write through a read-only MR"))
		goto out;
	for (int i = 0; i < 16; i++)
		if (word[i] != 0x6b) {
			fail("atomic write through a read-only MR changed byte %d", i);
			goto out;
		}
	ok = true;
out:
	pair_down(e);
	if (ro)
		ibv_dereg_mr(ro);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Device memory.                                                      */

enum { DM_LEN = 8192 };

#define DM_ACCESS (IBV_ACCESS_ZERO_BASED | ACCESS_ALL)

static bool dm_bytes(struct ibv_dm *dm, uint64_t off, const uint8_t *want, size_t n,
		     const char *what)
{
	uint8_t got[DM_LEN];

	CHECK(n <= sizeof got && ibv_memcpy_from_dm(got, dm, off, n) == 0,
	      "%s: ibv_memcpy_from_dm", what);
	CHECK(!memcmp(got, want, n), "%s: device memory differs", what);
	return true;
}

/* The refused calls: bounds, flags, sizes, a DM in use. */
static bool dm_errors(struct ibv_dm *dm, struct ibv_mr *mr)
{
	struct dev *d = &T.dev[1];
	struct ibv_alloc_dm_attr big = { .length = 1ull << 30 };
	uint8_t b[16] = { 0 };
	struct ibv_mr *m;

	CHECK(ibv_memcpy_to_dm(dm, DM_LEN - 8, b, 16) == EFAULT &&
	      ibv_memcpy_from_dm(b, dm, DM_LEN, 1) == EFAULT,
	      "memcpy beyond the DM: not EFAULT");
	errno = 0;
	m = ibv_reg_dm_mr(d->v.pd, dm, 0, 64, ACCESS_ALL);
	CHECK(!m && errno == EINVAL, "reg_dm_mr without ZERO_BASED: %s errno %d",
	      m ? "registered" : "refused", errno);
	errno = 0;
	m = ibv_reg_dm_mr(d->v.pd, dm, DM_LEN - 64, 128, DM_ACCESS);
	CHECK(!m && errno == EINVAL, "reg_dm_mr beyond the DM: %s errno %d",
	      m ? "registered" : "refused", errno);
	errno = 0;
	CHECK(!ibv_alloc_dm(d->v.ctx, &big) && errno == EINVAL,
	      "alloc_dm beyond max_dm_size: errno %d", errno);
	CHECK(ibv_free_dm(dm) == EBUSY, "free_dm with an MR on it: not EBUSY");
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "rereg of a DM MR: not ERR_INPUT/EINVAL");
	return true;
}

/* dev1's DM as a remote buffer (WRITE, READ, FETCH_ADD through its rkey),
 * dev0's DM as a local one (the source of a SEND, the target of a READ). */
static bool dm_traffic(struct vt_ep e[2], struct ibv_dm *dm[2], struct ibv_mr *mr[2])
{
	uint8_t pat[DM_LEN];
	struct ibv_sge s;
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	uint64_t v = 1000;

	fill(T.dev[0].buf, 4096, 77);
	if (!rdma_ok(&e[0], IBV_WR_RDMA_WRITE, 0, 100, mr[1]->rkey, 3000, "write to DM"))
		return false;
	memset(pat, 0, sizeof pat);
	memcpy(pat + 100, T.dev[0].buf, 3000);
	if (!dm_bytes(dm[1], 0, pat, DM_LEN, "after a WRITE to DM"))
		return false;
	memset(T.dev[0].buf + 8192, 0, 4096);
	if (!rdma_ok(&e[0], IBV_WR_RDMA_READ, 8192, 1000, mr[1]->rkey, 2000, "read from DM"))
		return false;
	CHECK(!memcmp(T.dev[0].buf + 8192, pat + 1000, 2000), "read from DM: data differs");
	CHECK(!ibv_memcpy_to_dm(dm[1], 4096, &v, 8), "memcpy_to_dm");
	if (!atomic(&e[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 16384, 4096, mr[1]->rkey, 5, 0, 7) ||
	    !poll_one(e[0].scq, &wc, "fetch_add on DM") ||
	    !wc_ok(&wc, IBV_WC_FETCH_ADD, "fetch_add on DM"))
		return false;
	uint64_t orig, now;

	memcpy(&orig, T.dev[0].buf + 16384, 8);
	CHECK(!ibv_memcpy_from_dm(&now, dm[1], 4096, 8) && orig == 1000 && now == 1005,
	      "fetch_add on DM: orig %" PRIu64 " now %" PRIu64, orig, now);
	/* dev0's DM: SEND source and READ target */
	fill(pat, DM_LEN, 78);
	CHECK(!ibv_memcpy_to_dm(dm[0], 0, pat, DM_LEN), "memcpy_to_dm(dev0)");
	struct ibv_sge r = sge_of(&T.dev[1], 32768, 4096);

	memset(T.dev[1].buf + 32768, 0xee, 4096);
	s.addr = 512;                   /* zero based: the DM offset */
	s.length = 1500;
	s.lkey = mr[0]->lkey;
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (!post_recv(e[1].qp, 3, &r, 1) || !post(e[0].qp, &wr, "send from DM") ||
	    !poll_one(e[0].scq, &wc, "send from DM") || !wc_ok(&wc, IBV_WC_SEND, "send") ||
	    !poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "recv"))
		return false;
	CHECK(wc.byte_len == 1500 && !memcmp(T.dev[1].buf + 32768, pat + 512, 1500) &&
	      T.dev[1].buf[32768 + 1500] == 0xee, "send from DM: data differs");
	fill(T.dev[1].buf + 40960, 700, 79);
	s.addr = 6000;
	s.length = 700;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)T.dev[1].buf + 40960;
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	if (!post(e[0].qp, &wr, "read into DM") || !poll_one(e[0].scq, &wc, "read into DM") ||
	    !wc_ok(&wc, IBV_WC_RDMA_READ, "read into DM"))
		return false;
	memcpy(pat + 6000, T.dev[1].buf + 40960, 700);
	return dm_bytes(dm[0], 0, pat, DM_LEN, "after a READ into DM");
}

static bool c_dm(void)
{
	struct ibv_alloc_dm_attr a = { .length = DM_LEN, .log_align_req = 12 };
	struct ibv_device_attr_ex x;
	struct ibv_dm *dm[2] = { NULL, NULL };
	struct ibv_mr *mr[2] = { NULL, NULL };
	struct vt_ep e[2];
	uint8_t zero[DM_LEN];
	enum ibv_wc_status st;
	bool ok = false;

	memset(e, 0, sizeof e);
	memset(&x, 0, sizeof x);
	CHECK(!ibv_query_device_ex(T.dev[1].v.ctx, NULL, &x) && x.max_dm_size >= DM_LEN,
	      "max_dm_size %" PRIu64, x.max_dm_size);
	memset(zero, 0, sizeof zero);
	for (int i = 0; i < 2; i++) {
		dm[i] = ibv_alloc_dm(T.dev[i].v.ctx, &a);
		if (!dm[i]) {
			fail("ibv_alloc_dm: %s", strerror(errno));
			goto out;
		}
		if (!dm_bytes(dm[i], 0, zero, DM_LEN, "a new DM"))
			goto out;
		mr[i] = ibv_reg_dm_mr(T.dev[i].v.pd, dm[i], 0, DM_LEN, DM_ACCESS);
		if (!mr[i]) {
			fail("ibv_reg_dm_mr: %s", strerror(errno));
			goto out;
		}
	}
	if (!dm_errors(dm[1], mr[1]) || !pair_up(e, &CFG, 0) || !dm_traffic(e, dm, mr))
		goto out;
	/* beyond the DM MR: remote access error, the DM untouched */
	uint8_t before[DM_LEN];

	CHECK(!ibv_memcpy_from_dm(before, dm[1], 0, DM_LEN), "memcpy_from_dm");
	if (!rdma_op(&e[0], IBV_WR_RDMA_WRITE, 0, DM_LEN - 16, mr[1]->rkey, 64, &st))
		goto out;
	if (st != IBV_WC_REM_ACCESS_ERR) {
		fail("write past the DM MR: %s, want REM_ACCESS_ERR", ibv_wc_status_str(st));
		goto out;
	}
	ok = dm_bytes(dm[1], 0, before, DM_LEN, "after a write past the DM MR");
out:
	pair_down(e);
	for (int i = 0; i < 2; i++) {
		if (mr[i] && ibv_dereg_mr(mr[i]) && ok)
			ok = fail("dereg of a DM MR");
		if (dm[i] && ibv_free_dm(dm[i]) && ok)
			ok = fail("ibv_free_dm after its MR is gone");
	}
	return ok;
}

/* RC loopback: both QPs on dev0, connected through its own GID. */
static bool c_loopback(void)
{
	struct vt_ep e[2];
	struct ibv_wc wc;
	uint8_t *b = T.dev[0].buf;
	struct ibv_sge s = sge_of(&T.dev[0], 0, 5000), r = sge_of(&T.dev[0], 65536, 8192);
	struct ibv_send_wr wr;
	bool ok = false;

	memset(e, 0, sizeof e);
	if (!ep_create(&e[0], &T.dev[0], &CFG) || !ep_create(&e[1], &T.dev[0], &CFG) ||
	    !ep_connect(&e[0], &e[1], 0) || !ep_connect(&e[1], &e[0], 0))
		goto out;
	fill(b, 5000, 77);
	memset(b + 65536, 0xee, 3 * 65536);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	if (!post_recv(e[1].qp, 1, &r, 1) || !post(e[0].qp, &wr, "loopback send") ||
	    !poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "loopback recv") ||
	    !poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "loopback send"))
		goto out;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(b + 131072);
	wr.wr.rdma.rkey = T.dev[0].mr->rkey;
	if (!post(e[0].qp, &wr, "loopback write") || !poll_one(e[0].scq, &wc, "write") ||
	    !wc_ok(&wc, IBV_WC_RDMA_WRITE, "loopback write"))
		goto out;
	s = sge_of(&T.dev[0], 196608, 5000);
	wr.opcode = IBV_WR_RDMA_READ;
	if (!post(e[0].qp, &wr, "loopback read") || !poll_one(e[0].scq, &wc, "read") ||
	    !wc_ok(&wc, IBV_WC_RDMA_READ, "loopback read"))
		goto out;
	if (memcmp(b + 65536, b, 5000) || memcmp(b + 131072, b, 5000) ||
	    memcmp(b + 196608, b, 5000)) {
		fail("loopback: SEND %s, WRITE %s, READ %s",
		     memcmp(b + 65536, b, 5000) ? "differs" : "ok",
		     memcmp(b + 131072, b, 5000) ? "differs" : "ok",
		     memcmp(b + 196608, b, 5000) ? "differs" : "ok");
		goto out;
	}
	ok = true;
out:
	pair_down(e);
	return ok;
}

/* UD QPs, RESET -> INIT (Q_Key) -> RTR -> RTS (SQ PSN). */
static bool ud_up(struct vt_ep *e, struct dev *d, uint32_t qkey)
{
	struct qp_cfg c = CFG;
	struct ibv_qp_attr a;
	int rc;

	c.type = IBV_QPT_UD;
	if (!ep_create(e, d, &c))
		return false;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = PORT;
	a.qkey = qkey;
	rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_QKEY);
	CHECK(!rc, "UD to INIT: %s", strerror(rc));
	a.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE);
	CHECK(!rc, "UD to RTR: %s", strerror(rc));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = e->psn;
	rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	CHECK(!rc, "UD to RTS: %s", strerror(rc));
	return true;
}

static struct ibv_ah *ah_to(struct dev *from, struct dev *to)
{
	struct ibv_ah_attr aa;

	memset(&aa, 0, sizeof aa);
	aa.is_global = 1;
	aa.grh.dgid = to->v.gid;
	aa.grh.sgid_index = (uint8_t)T.v.gid_index;
	aa.grh.hop_limit = 64;
	aa.port_num = PORT;
	return ibv_create_ah(from->v.pd, &aa);
}

/* --gid-index 1: the GIDs in use are IPv6 addresses, not IPv4-mapped. */
static bool gids_ip6(void)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(T.dev[0].v.gid.raw, v4map, 12) != 0;
}

/* The GRH area of a datagram from dev 0 to dev 1 over IPv6: the packet's
 * IPv6 header (version 6, next header UDP, hop limit 64, payload length,
 * the two GIDs as source and destination). */
static bool grh6_ok(const uint8_t *g, unsigned plen)
{
	CHECK((g[0] >> 4) == 6 && g[6] == 17 && g[7] == 64 &&
	      (unsigned)(g[4] << 8 | g[5]) == plen &&
	      !memcmp(g + 8, T.dev[0].v.gid.raw, 16) &&
	      !memcmp(g + 24, T.dev[1].v.gid.raw, 16),
	      "IPv6 GRH: version %u next %u hops %u plen %u (want %u), addresses %s",
	      g[0] >> 4, g[6], g[7], g[4] << 8 | g[5], plen,
	      memcmp(g + 8, T.dev[0].v.gid.raw, 16) ? "differ" : "ok");
	return true;
}

static uint16_t ip_csum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* UD: GRH area (IPv4 header in its last 20 bytes), payload, source QPN,
 * immediate; a message with another Q_Key is dropped; the path MTU bounds
 * a message. */
static bool c_ud(void)
{
	struct vt_ep e[2];
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	uint8_t *rb = T.dev[1].buf;
	struct ibv_sge s = sge_of(&T.dev[0], 0, 1000), r = sge_of(&T.dev[1], 0, 4096 + 40);
	struct ibv_send_wr wr, *bad;
	bool ok = false;

	memset(e, 0, sizeof e);
	if (!ud_up(&e[0], &T.dev[0], 0x11111111) || !ud_up(&e[1], &T.dev[1], 0x22222222))
		goto out;
	ah = ah_to(&T.dev[0], &T.dev[1]);
	if (!ah) {
		fail("ibv_create_ah: %s", strerror(errno));
		goto out;
	}
	fill(T.dev[0].buf, 8192, 99);
	memset(rb, 0xee, 16384);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0xabcd0001);
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = e[1].qp->qp_num;
	wr.wr.ud.remote_qkey = 0x22222222;
	if (!post_recv(e[1].qp, 1, &r, 1) || !post(e[0].qp, &wr, "ud send") ||
	    !poll_one(e[0].scq, &wc, "ud send") || !wc_ok(&wc, IBV_WC_SEND, "ud send") ||
	    !poll_one(e[1].rcq, &wc, "ud recv") || !wc_ok(&wc, IBV_WC_RECV, "ud recv"))
		goto out;
	/* sl: the network header type of the datagram, 2 = IPv4, 1 = IPv6
	 * (Annex A17.4.5.1; mlx5's convention, which UCX relies on) */
	if (wc.byte_len != 1040 || !(wc.wc_flags & IBV_WC_GRH) ||
	    wc.sl != (gids_ip6() ? 1 : 2) ||
	    !(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htonl(0xabcd0001) ||
	    wc.src_qp != e[0].qp->qp_num || wc.wr_id != 1) {
		fail("ud recv: byte_len %u flags 0x%x imm 0x%x src_qp 0x%x (want 0x%x)",
		     wc.byte_len, wc.wc_flags, ntohl(wc.imm_data), wc.src_qp, e[0].qp->qp_num);
		goto out;
	}
	/* GRH area: 20 zero bytes, then the IPv4 header: version 4, IHL 5,
	 * UDP, source and destination = the two GIDs' IPv4 addresses, a valid
	 * checksum, total length 20 + 8 + 12 + 8 + 4 + 1000 + 4; over IPv6
	 * the whole IPv6 header */
	const uint8_t *ip = rb + 20;
	static const uint8_t zero[20];

	if (gids_ip6() && !grh6_ok(rb, 8 + 12 + 8 + 4 + 1000 + 4))
		goto out;
	if (!gids_ip6() && (memcmp(rb, zero, 20) || ip[0] != 0x45 || ip[9] != 17 ||
	    memcmp(ip + 12, T.dev[0].v.gid.raw + 12, 4) || memcmp(ip + 16, T.dev[1].v.gid.raw + 12, 4) ||
	    ip_csum(ip) != 0 || (ip[2] << 8 | ip[3]) != 20 + 8 + 12 + 8 + 4 + 1000 + 4)) {
		fail("GRH area: %02x %02x .. proto %u len %u csum %s", ip[0], ip[1], ip[9],
		     ip[2] << 8 | ip[3], ip_csum(ip) ? "bad" : "ok");
		goto out;
	}
	if (memcmp(rb + 40, T.dev[0].buf, 1000) || rb[1040] != 0xee) {
		fail("ud payload differs");
		goto out;
	}
	/* Q_Key mismatch: dropped (counted by the NIC), no completion; the
	 * next datagram with the right Q_Key takes the RECV */
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.remote_qkey = 0x33333333;
	wr.wr_id = 2;
	if (!post_recv(e[1].qp, 2, &r, 1) || !post(e[0].qp, &wr, "bad qkey") ||
	    !poll_one(e[0].scq, &wc, "bad qkey send") || !wc_ok(&wc, IBV_WC_SEND, "bad qkey") ||
	    !no_cqe(e[1].rcq, 100, "datagram with another Q_Key"))
		goto out;
	wr.wr.ud.remote_qkey = 0x22222222;
	s.length = 1;
	if (!post(e[0].qp, &wr, "good qkey") || !poll_one(e[0].scq, &wc, "send") ||
	    !poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "recv"))
		goto out;
	if (wc.byte_len != 41 || wc.wr_id != 2) {
		fail("after the Q_Key drop: byte_len %u wr_id %" PRIu64, wc.byte_len, wc.wr_id);
		goto out;
	}
	/* a destination nobody answers ARP for: the datagram is lost (the
	 * send completes after the NIC gave up, about a second), and the
	 * next one to a live peer goes through */
	struct ibv_ah_attr da;
	struct ibv_ah *dead;

	memset(&da, 0, sizeof da);
	da.is_global = 1;
	da.grh.dgid = T.dev[1].v.gid;
	da.grh.dgid.raw[15] ^= 0x40; /* 198.18.0.x + 64: nobody */
	da.grh.sgid_index = (uint8_t)T.v.gid_index;
	da.grh.hop_limit = 64;
	da.port_num = PORT;
	dead = ibv_create_ah(T.dev[0].v.pd, &da);
	if (!dead) {
		fail("ibv_create_ah: %s", strerror(errno));
		goto out;
	}
	wr.wr.ud.ah = dead;
	wr.wr_id = 6;
	bool lost_ok = post(e[0].qp, &wr, "to nobody") && poll_one(e[0].scq, &wc, "to nobody") &&
		       wc_ok(&wc, IBV_WC_SEND, "datagram to nobody") &&
		       no_cqe(e[1].rcq, 50, "datagram to nobody");

	ibv_destroy_ah(dead);
	wr.wr.ud.ah = ah;
	if (!lost_ok)
		goto out;
	/* a RECV too small for GRH + payload: LOC_LEN_ERR, and the QP lives
	 * on (a sender must not be able to end a UD QP): the next datagram
	 * that fits arrives */
	struct ibv_sge small = sge_of(&T.dev[1], 0, 50);

	s.length = 100;
	wr.wr_id = 4;
	if (!post_recv(e[1].qp, 5, &small, 1) || !post(e[0].qp, &wr, "to a small RECV") ||
	    !poll_one(e[0].scq, &wc, "send") || !poll_one(e[1].rcq, &wc, "small recv"))
		goto out;
	if (wc.status != IBV_WC_LOC_LEN_ERR || wc.wr_id != 5) {
		fail("datagram larger than the RECV: status %s wr_id %" PRIu64,
		     ibv_wc_status_str(wc.status), wc.wr_id);
		goto out;
	}
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;

	if (ibv_query_qp(e[1].qp, &qattr, IBV_QP_STATE, &qinit) ||
	    qattr.qp_state != IBV_QPS_RTS) {
		fail("UD QP after a datagram too long for its RECV: state %d, want RTS",
		     (int)qattr.qp_state);
		goto out;
	}
	struct ibv_sge fits = sge_of(&T.dev[1], 0, 200);

	wr.wr_id = 7;
	if (!post_recv(e[1].qp, 8, &fits, 1) || !post(e[0].qp, &wr, "after the small RECV") ||
	    !poll_one(e[0].scq, &wc, "send") || !poll_one(e[1].rcq, &wc, "recv after") ||
	    !wc_ok(&wc, IBV_WC_RECV, "recv after the small RECV"))
		goto out;
	if (wc.byte_len != 40 + 100 || wc.wr_id != 8) {
		fail("after the small RECV: byte_len %u wr_id %" PRIu64, wc.byte_len, wc.wr_id);
		goto out;
	}
	/* more than the MTU: a local length error */
	unsigned mtu = 128u << T.dev[0].v.port.active_mtu;

	s.length = mtu + 1;
	wr.wr_id = 3;
	bad = NULL;
	if (ibv_post_send(e[0].qp, &wr, &bad) == 0) {
		if (!poll_one(e[0].scq, &wc, "oversized") || wc.status != IBV_WC_LOC_LEN_ERR) {
			fail("UD send of MTU + 1 bytes: status %s, want LOC_LEN_ERR",
			     ibv_wc_status_str(wc.status));
			goto out;
		}
	}
	ok = true;
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(e);
	return ok;
}

/* Issue 14 bug 3: UD datagrams between snic0 and snic1 waited for with
 * completion events, as a ping-pong program does: each side in its own
 * thread, with a fresh context, channel, CQ (send and receive) and QP per
 * round, arms its CQ, sleeps in poll() on the channel, takes the event,
 * acks it, re-arms, then drains the CQ.  A lost wake-up (an arm racing the
 * CQE) or a lost datagram shows as a side with nothing to wait for: the
 * failure says which (no event but completions in the CQ = lost event). */
enum { UDE_ROUNDS = 36, UDE_ITERS = 200, UDE_LEN = 256, UDE_QKEY = 0x1400e };

struct ude_side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t buf[2 * (UDE_LEN + 40)];        /* RECV (GRH + payload), SEND */
	union ibv_gid gid, peer_gid;
	uint32_t peer_qpn;
	bool starts;                            /* sends first */
	unsigned events;
	char err[256];
};

static struct ibv_context *ude_open(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			c = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	return c;
}

static void ude_down(struct ude_side *u)
{
	if (u->ah)
		ibv_destroy_ah(u->ah);
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	if (u->ch)
		ibv_destroy_comp_channel(u->ch);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	if (u->ctx)
		ibv_close_device(u->ctx);
	u->ah = NULL, u->qp = NULL, u->cq = NULL, u->ch = NULL, u->mr = NULL;
	u->pd = NULL, u->ctx = NULL;
}

static bool ude_up(struct ude_side *u)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = PORT,
				 .qkey = UDE_QKEY };

	u->ctx = ude_open(u->name);
	if (!u->ctx || (u->pd = ibv_alloc_pd(u->ctx)) == NULL ||
	    (u->mr = ibv_reg_mr(u->pd, u->buf, sizeof u->buf, IBV_ACCESS_LOCAL_WRITE)) == NULL ||
	    (u->ch = ibv_create_comp_channel(u->ctx)) == NULL ||
	    (u->cq = ibv_create_cq(u->ctx, 8, u, u->ch, 0)) == NULL)
		return fail("%s: open/PD/MR/channel/CQ: %s", u->name, strerror(errno));
	ia.send_cq = ia.recv_cq = u->cq;
	u->qp = ibv_create_qp(u->pd, &ia);
	if (!u->qp || ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY))
		return fail("%s: UD QP to INIT: %s", u->name, strerror(errno));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
		return fail("%s: UD QP to RTR", u->name);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return fail("%s: UD QP to RTS", u->name);
	if (ibv_query_gid(u->ctx, PORT, T.v.gid_index, &u->gid))
		return fail("%s: ibv_query_gid", u->name);
	return true;
}

static bool ude_ah(struct ude_side *u)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = PORT };

	aa.grh.dgid = u->peer_gid;
	aa.grh.sgid_index = (uint8_t)T.v.gid_index;
	aa.grh.hop_limit = 64;
	u->ah = ibv_create_ah(u->pd, &aa);
	return u->ah ? true : fail("%s: ibv_create_ah: %s", u->name, strerror(errno));
}

static int ude_post_recv(struct ude_side *u)
{
	struct ibv_sge s = { (uintptr_t)u->buf, UDE_LEN + 40, u->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1 }, *bad;

	return ibv_post_recv(u->qp, &w, &bad);
}

static int ude_send(struct ude_side *u, uint32_t it)
{
	uint8_t *p = u->buf + UDE_LEN + 40;
	struct ibv_sge s = { (uintptr_t)p, UDE_LEN, u->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 2, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	for (unsigned i = 0; i < UDE_LEN; i++)
		p[i] = (uint8_t)(it * 7 + i + u->starts);
	w.wr.ud.ah = u->ah;
	w.wr.ud.remote_qpn = u->peer_qpn;
	w.wr.ud.remote_qkey = UDE_QKEY;
	return ibv_post_send(u->qp, &w, &bad);
}

/* Waits for an event, takes and acks it, re-arms, drains the CQ into
 * *sent / *got.  The arm after the ack and the poll after the arm are
 * the order every verbs text prescribes: no completion can be missed. */
static bool ude_wait(struct ude_side *u, unsigned *sent, unsigned *got, uint32_t it)
{
	struct pollfd pfd = { .fd = u->ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc[4];
	int n, rc = poll(&pfd, 1, (int)T.v.timeout_ms);

	if (rc != 1) {
		n = ibv_poll_cq(u->cq, 4, wc);
		snprintf(u->err, sizeof u->err, "%s iteration %u: no CQ event within %u ms "
			 "(%d completion(s) waiting in the CQ: %s)", u->name, it, T.v.timeout_ms,
			 n, n > 0 ? "a lost event" : "nothing arrived");
		return false;
	}
	if (ibv_get_cq_event(u->ch, &ev_cq, &ev_ctx) || ev_cq != u->cq || ev_ctx != u) {
		snprintf(u->err, sizeof u->err, "%s: ibv_get_cq_event", u->name);
		return false;
	}
	u->events++;
	ibv_ack_cq_events(ev_cq, 1);
	if (ibv_req_notify_cq(u->cq, 0)) {
		snprintf(u->err, sizeof u->err, "%s: ibv_req_notify_cq", u->name);
		return false;
	}
	while ((n = ibv_poll_cq(u->cq, 4, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    (wc[i].wr_id == 1 && wc[i].byte_len != UDE_LEN + 40)) {
				snprintf(u->err, sizeof u->err, "%s iteration %u: wr_id %" PRIu64
					 " status %s byte_len %u", u->name, it, wc[i].wr_id,
					 ibv_wc_status_str(wc[i].status), wc[i].byte_len);
				return false;
			}
			if (wc[i].wr_id == 1)
				++*got;
			else
				++*sent;
		}
	}
	if (n < 0) {
		snprintf(u->err, sizeof u->err, "%s: ibv_poll_cq %d", u->name, n);
		return false;
	}
	return true;
}

static void *ude_run(void *arg)
{
	struct ude_side *u = arg;
	unsigned sent = 0, got = 0;

	for (uint32_t it = 0; it < UDE_ITERS; it++) {
		/* the starter sends, then waits for the answer; the other side
		 * waits, then answers; each RECV is posted before the datagram
		 * it takes can leave the peer */
		if (u->starts && ude_send(u, it)) {
			snprintf(u->err, sizeof u->err, "%s: post_send", u->name);
			return NULL;
		}
		while (got <= it || (u->starts && sent <= it))
			if (!ude_wait(u, &sent, &got, it))
				return NULL;
		/* payload of the peer's datagram */
		for (unsigned i = 0; i < UDE_LEN; i++)
			if (u->buf[40 + i] != (uint8_t)(it * 7 + i + !u->starts)) {
				snprintf(u->err, sizeof u->err, "%s iteration %u: payload byte %u",
					 u->name, it, i);
				return NULL;
			}
		if (ude_post_recv(u)) {
			snprintf(u->err, sizeof u->err, "%s: post_recv", u->name);
			return NULL;
		}
		if (!u->starts) {
			if (ude_send(u, it)) {
				snprintf(u->err, sizeof u->err, "%s: post_send", u->name);
				return NULL;
			}
			while (sent <= it)
				if (!ude_wait(u, &sent, &got, it))
					return NULL;
		}
	}
	return NULL;
}

static bool ude_round(struct ude_side u[2], unsigned round)
{
	pthread_t th[2];

	for (int i = 0; i < 2; i++) {
		memset(u[i].err, 0, sizeof u[i].err);
		u[i].events = 0;
		if (!ude_up(&u[i]))
			return false;
	}
	for (int i = 0; i < 2; i++) {
		u[i].peer_gid = u[!i].gid;
		u[i].peer_qpn = u[!i].qp->qp_num;
		if (!ude_ah(&u[i]))
			return false;
		/* first RECV and first arm before either side can send */
		if (ude_post_recv(&u[i]) || ibv_req_notify_cq(u[i].cq, 0))
			return fail("%s: first post_recv / arm", u[i].name);
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, ude_run, &u[i]))
			return fail("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++)
		if (u[i].err[0])
			return fail("round %u: %s", round, u[i].err);
	vlog("round %u: %u + %u events", round, u[0].events, u[1].events);
	return true;
}

static bool c_ud_events(void)
{
	struct ude_side *u = calloc(2, sizeof *u);
	bool ok = true;

	if (!u)
		return fail("calloc");
	u[0].name = T.dev[0].v.name;
	u[1].name = T.dev[1].v.name;
	u[0].starts = true;
	for (unsigned r = 0; ok && r < UDE_ROUNDS; r++) {
		ok = ude_round(u, r);
		ude_down(&u[0]);
		ude_down(&u[1]);
	}
	free(u);
	return ok;
}

/* AH from a completion: snic1 answers a UD datagram from snic0 with an AH
 * made from the receive completion and its GRH area (IPv4 header in the
 * last 20 bytes); the answer arrives with its payload.  The attributes
 * are checked, and a GRH area that is not a header is refused. */
static bool ahwc_attr_ok(const struct ibv_ah_attr *a, const struct ibv_wc *wc)
{
	CHECK(a->is_global == 1 && a->port_num == PORT && a->sl == wc->sl &&
	      !memcmp(a->grh.dgid.raw, T.dev[0].v.gid.raw, 16) &&
	      a->grh.sgid_index == (uint8_t)T.v.gid_index && a->grh.hop_limit == 64,
	      "ibv_init_ah_from_wc: global %u port %u sgid_index %u hop_limit %u, dgid %s",
	      a->is_global, a->port_num, a->grh.sgid_index, a->grh.hop_limit,
	      memcmp(a->grh.dgid.raw, T.dev[0].v.gid.raw, 16) ? "not the sender's" : "ok");
	return true;
}

static bool ahwc_errors(struct ibv_wc *wc, const uint8_t *grh_area)
{
	struct ibv_context *ctx = T.dev[1].v.ctx;
	struct ibv_ah_attr a;
	uint8_t g[40];
	int rc;

	/* neither an IPv6 nor an IPv4 header: EPROTONOSUPPORT */
	memset(g, 0, sizeof g);
	errno = 0;
	rc = ibv_init_ah_from_wc(ctx, PORT, wc, (struct ibv_grh *)g, &a);
	CHECK(rc != 0 && errno == EPROTONOSUPPORT, "zero GRH area: %d errno %d", rc, errno);
	/* a multicast destination: EINVAL */
	memcpy(g, grh_area, 40);
	g[gids_ip6() ? 24 : 20 + 16] = gids_ip6() ? 0xff : 224;
	errno = 0;
	rc = ibv_init_ah_from_wc(ctx, PORT, wc, (struct ibv_grh *)g, &a);
	/* IPv6: no GID of ours is a multicast address (ENOENT, as for any
	 * address not in the table) */
	CHECK(rc != 0 && errno == (gids_ip6() ? ENOENT : EINVAL),
	      "multicast destination: %d errno %d", rc, errno);
	/* sent to an address that is none of ours: no GID to answer from */
	memcpy(g, grh_area, 40);
	g[gids_ip6() ? 8 + 16 + 15 : 20 + 19] ^= 0x40;
	errno = 0;
	CHECK(!ibv_create_ah_from_wc(T.dev[1].v.pd, wc, (struct ibv_grh *)g, PORT),
	      "AH from a datagram to someone else's address: created");
	/* without IBV_WC_GRH: a local AH (no GRH), which RoCE cannot use */
	struct ibv_wc w = *wc;

	w.wc_flags &= ~(unsigned)IBV_WC_GRH;
	rc = ibv_init_ah_from_wc(ctx, PORT, &w, (struct ibv_grh *)g, &a);
	CHECK(rc == 0 && a.is_global == 0 && a.dlid == w.slid, "no GRH: %d global %u", rc,
	      a.is_global);
	return true;
}

static bool c_ah_from_wc(void)
{
	struct vt_ep e[2];
	struct ibv_ah *ah = NULL, *back = NULL;
	struct ibv_wc wc;
	struct ibv_ah_attr aa;
	uint8_t *rb = T.dev[1].buf, *rb0 = T.dev[0].buf + (1 << 20);
	struct ibv_sge s = sge_of(&T.dev[0], 0, 512), r = sge_of(&T.dev[1], 0, 512 + 40);
	struct ibv_sge s1 = sge_of(&T.dev[1], 8192, 300);
	struct ibv_sge r0 = { (uintptr_t)rb0, 300 + 40, T.dev[0].mr->lkey };
	struct ibv_send_wr wr;
	bool ok = false;

	memset(e, 0, sizeof e);
	if (!ud_up(&e[0], &T.dev[0], 0x14141414) || !ud_up(&e[1], &T.dev[1], 0x14141414))
		goto out;
	ah = ah_to(&T.dev[0], &T.dev[1]);
	if (!ah) {
		fail("ibv_create_ah: %s", strerror(errno));
		goto out;
	}
	fill(T.dev[0].buf, 512, 1414);
	fill(T.dev[1].buf + 8192, 300, 4141);
	memset(rb, 0xee, 1024);
	memset(rb0, 0xee, 1024);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = e[1].qp->qp_num;
	wr.wr.ud.remote_qkey = 0x14141414;
	if (!post_recv(e[1].qp, 1, &r, 1) || !post_recv(e[0].qp, 2, &r0, 1) ||
	    !post(e[0].qp, &wr, "ud send") || !poll_one(e[0].scq, &wc, "ud send") ||
	    !wc_ok(&wc, IBV_WC_SEND, "ud send") || !poll_one(e[1].rcq, &wc, "ud recv") ||
	    !wc_ok(&wc, IBV_WC_RECV, "ud recv"))
		goto out;
	if (ibv_init_ah_from_wc(T.dev[1].v.ctx, PORT, &wc, (struct ibv_grh *)rb, &aa)) {
		fail("ibv_init_ah_from_wc: %s", strerror(errno));
		goto out;
	}
	if (!ahwc_attr_ok(&aa, &wc))
		goto out;
	back = ibv_create_ah_from_wc(T.dev[1].v.pd, &wc, (struct ibv_grh *)rb, PORT);
	if (!back) {
		fail("ibv_create_ah_from_wc: %s", strerror(errno));
		goto out;
	}
	/* the answer, to the sender's QPN from the completion */
	wr.sg_list = &s1;
	wr.wr.ud.ah = back;
	wr.wr.ud.remote_qpn = wc.src_qp;
	if (!post(e[1].qp, &wr, "answer") || !poll_one(e[1].scq, &wc, "answer") ||
	    !wc_ok(&wc, IBV_WC_SEND, "answer") || !poll_one(e[0].rcq, &wc, "answer recv") ||
	    !wc_ok(&wc, IBV_WC_RECV, "answer recv"))
		goto out;
	if (wc.byte_len != 340 || wc.src_qp != e[1].qp->qp_num ||
	    memcmp(rb0 + 40, T.dev[1].buf + 8192, 300) || rb0[340] != 0xee) {
		fail("answer: byte_len %u src_qp 0x%x, payload %s", wc.byte_len, wc.src_qp,
		     memcmp(rb0 + 40, T.dev[1].buf + 8192, 300) ? "differs" : "ok");
		goto out;
	}
	/* the answer's own GRH area names snic1 as the source */
	if (gids_ip6() ? memcmp(rb0 + 8, T.dev[1].v.gid.raw, 16)
		       : memcmp(rb0 + 20 + 12, T.dev[1].v.gid.raw + 12, 4)) {
		fail("answer's IPv4 source is not snic1");
		goto out;
	}
	struct ibv_wc w1 = { .wc_flags = IBV_WC_GRH, .sl = 2 };

	ok = ahwc_errors(&w1, rb);
out:
	if (back)
		ibv_destroy_ah(back);
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(e);
	return ok;
}

enum { SRQ_QPS = 3, SRQ_MSGS = 10 };

/* One SRQ shared by three QPs of dev1: every message lands in a RECV of
 * the SRQ, whichever QP it came in on; the limit event fires once armed. */
static bool c_srq(void)
{
	struct vt_ep e[SRQ_QPS][2];
	struct ibv_srq_init_attr si;
	struct ibv_srq *srq;
	struct ibv_srq_attr sa;
	struct qp_cfg c = CFG;
	struct ibv_async_event ev;
	unsigned got[SRQ_QPS] = { 0 };
	bool ok = false;

	memset(e, 0, sizeof e);
	memset(&si, 0, sizeof si);
	si.attr.max_wr = 64;
	si.attr.max_sge = 2;
	srq = ibv_create_srq(T.dev[1].v.pd, &si);
	if (!srq)
		return fail("ibv_create_srq: %s", strerror(errno));
	for (int q = 0; q < SRQ_QPS; q++) {
		c.srq = NULL;
		if (!ep_create(&e[q][0], &T.dev[0], &c))
			goto out;
		c.srq = srq;
		if (!ep_create(&e[q][1], &T.dev[1], &c) || !ep_connect(&e[q][0], &e[q][1], 0) ||
		    !ep_connect(&e[q][1], &e[q][0], 0))
			goto out;
	}
	/* a QP with an SRQ has no RQ of its own */
	struct ibv_sge r = sge_of(&T.dev[1], 0, 64);
	struct ibv_recv_wr rw = { .sg_list = &r, .num_sge = 1 }, *rbad;

	if (ibv_post_recv(e[0][1].qp, &rw, &rbad) != EINVAL) {
		fail("ibv_post_recv on a QP with an SRQ: not EINVAL");
		goto out;
	}
	for (unsigned i = 0; i < SRQ_QPS * SRQ_MSGS + 2; i++) {
		r = sge_of(&T.dev[1], (size_t)i * 128, 128);
		rw.wr_id = 1000 + i;
		if (ibv_post_srq_recv(srq, &rw, &rbad)) {
			fail("ibv_post_srq_recv %u", i);
			goto out;
		}
	}
	memset(&sa, 0, sizeof sa);
	sa.srq_limit = 4;
	if (ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) || ibv_query_srq(srq, &sa) ||
	    sa.srq_limit != 4 || sa.max_wr < 64) {
		fail("modify/query SRQ: limit %u max_wr %u", sa.srq_limit, sa.max_wr);
		goto out;
	}
	for (int q = 0; q < SRQ_QPS; q++)
		for (int m = 0; m < SRQ_MSGS; m++) {
			uint8_t *p = T.dev[0].buf + 8192 + (size_t)(q * SRQ_MSGS + m) * 64;
			struct ibv_sge s = sge_of(&T.dev[0], (size_t)(p - T.dev[0].buf), 64);
			struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &s,
						  .num_sge = 1 };

			fill(p, 64, (uint32_t)(q * 100 + m));
			p[0] = (uint8_t)q;
			p[1] = (uint8_t)m;
			if (!post(e[q][0].qp, &wr, "send to SRQ"))
				goto out;
		}
	for (int n = 0; n < SRQ_QPS * SRQ_MSGS; n++) {
		struct ibv_wc wc;
		int q = -1;

		/* each dev1 QP has its own recv CQ: poll them in turn */
		for (uint64_t end = vt_now_ns() + (uint64_t)T.v.timeout_ms * 1000000u; q < 0;) {
			for (int k = 0; k < SRQ_QPS && q < 0; k++)
				if (ibv_poll_cq(e[k][1].rcq, 1, &wc) == 1)
					q = k;
			if (q < 0 && vt_now_ns() > end) {
				fail("only %d of %d messages received", n, SRQ_QPS * SRQ_MSGS);
				goto out;
			}
		}
		if (!wc_ok(&wc, IBV_WC_RECV, "srq recv"))
			goto out;
		uint8_t *buf = T.dev[1].buf + (wc.wr_id - 1000) * 128;
		uint8_t *src = T.dev[0].buf + 8192 + (size_t)(buf[0] * SRQ_MSGS + buf[1]) * 64;

		if (wc.wr_id < 1000 || wc.byte_len != 64 || buf[0] != q ||
		    wc.qp_num != e[q][1].qp->qp_num || memcmp(buf, src, 64)) {
			fail("srq recv: wr_id %" PRIu64 " qp 0x%x byte_len %u sender %u data %s",
			     wc.wr_id, wc.qp_num, wc.byte_len, buf[0],
			     memcmp(buf, src, 64) ? "differs" : "ok");
			goto out;
		}
		got[q]++;
	}
	for (int q = 0; q < SRQ_QPS; q++)
		if (got[q] != SRQ_MSGS) {
			fail("QP %d received %u messages, want %d", q, got[q], SRQ_MSGS);
			goto out;
		}
	/* 2 WQEs left < limit 4: IBV_EVENT_SRQ_LIMIT_REACHED, once */
	struct pollfd pfd = { .fd = T.dev[1].v.ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, (int)T.v.timeout_ms) != 1 || ibv_get_async_event(T.dev[1].v.ctx, &ev)) {
		fail("no async event for the SRQ limit");
		goto out;
	}
	if (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED || ev.element.srq != srq) {
		fail("async event %s, want SRQ_LIMIT_REACHED for our SRQ",
		     ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		goto out;
	}
	ibv_ack_async_event(&ev);
	if (ibv_query_srq(srq, &sa) || sa.srq_limit != 0) {
		fail("the limit is not disarmed after its event (%u)", sa.srq_limit);
		goto out;
	}
	if (ibv_destroy_srq(srq) != EBUSY) {
		fail("ibv_destroy_srq while QPs use it: not EBUSY");
		goto out;
	}
	ok = true;
out:
	for (int q = 0; q < SRQ_QPS; q++)
		pair_down(e[q]);
	if (ibv_destroy_srq(srq))
		ok = ok ? fail("ibv_destroy_srq") : false;
	return ok;
}

/* UC: SEND, WRITE and WRITE_WITH_IMM across several packets. */
static bool c_uc(void)
{
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_wc wc;
	uint8_t *src = T.dev[0].buf, *dst = T.dev[1].buf;
	struct ibv_sge s = sge_of(&T.dev[0], 0, 5000), r = sge_of(&T.dev[1], 0, 8192);
	struct ibv_send_wr wr;
	bool ok = false;

	c.type = IBV_QPT_UC;
	memset(e, 0, sizeof e);
	if (!ep_create(&e[0], &T.dev[0], &c) || !ep_create(&e[1], &T.dev[1], &c))
		goto out;
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr a;
		struct vt_ep *x = &e[i], *peer = &e[1 - i];
		int rc;

		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_INIT;
		a.port_num = PORT;
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		rc = ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS);
		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = peer->qp->qp_num;
		a.rq_psn = peer->psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer->d->v.gid;
		a.ah_attr.grh.sgid_index = (uint8_t)T.v.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = PORT;
		if (!rc)
			rc = ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = x->psn;
		if (!rc)
			rc = ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		if (rc) {
			fail("UC connect: %s", strerror(rc));
			goto out;
		}
	}
	fill(src, 5000, 3);
	memset(dst, 0xee, 32768);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (!post_recv(e[1].qp, 1, &r, 1) || !post(e[0].qp, &wr, "uc send") ||
	    !poll_one(e[0].scq, &wc, "send") || !wc_ok(&wc, IBV_WC_SEND, "uc send") ||
	    !poll_one(e[1].rcq, &wc, "recv") || !wc_ok(&wc, IBV_WC_RECV, "uc recv"))
		goto out;
	if (wc.byte_len != 5000 || memcmp(dst, src, 5000)) {
		fail("uc send: byte_len %u, data %s", wc.byte_len,
		     memcmp(dst, src, 5000) ? "differs" : "ok");
		goto out;
	}
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(7);
	wr.wr.rdma.remote_addr = (uintptr_t)(dst + 16384);
	wr.wr.rdma.rkey = T.dev[1].mr->rkey;
	if (!post_recv(e[1].qp, 2, &r, 1) || !post(e[0].qp, &wr, "uc write_imm") ||
	    !poll_one(e[0].scq, &wc, "write") || !wc_ok(&wc, IBV_WC_RDMA_WRITE, "uc write") ||
	    !poll_one(e[1].rcq, &wc, "recv") ||
	    !wc_ok(&wc, IBV_WC_RECV_RDMA_WITH_IMM, "uc write_imm recv"))
		goto out;
	if (wc.imm_data != htonl(7) || wc.byte_len != 5000 || memcmp(dst + 16384, src, 5000)) {
		fail("uc write_imm: imm %u byte_len %u data %s", ntohl(wc.imm_data), wc.byte_len,
		     memcmp(dst + 16384, src, 5000) ? "differs" : "ok");
		goto out;
	}
	/* READ is not a UC operation: refused at post time */
	struct ibv_send_wr *bad;

	wr.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(e[0].qp, &wr, &bad) != EINVAL) {
		fail("RDMA READ on a UC QP was not refused with EINVAL");
		goto out;
	}
	ok = true;
out:
	pair_down(e);
	return ok;
}

/* Memory of a SysV segment (UCX's memory pools, perftest --use_hugepages):
 * registered, written by the peer's RDMA WRITE, deregistered; its contents
 * stay and shmdt() succeeds afterwards.  `huge`: SHM_HUGETLB, when the
 * machine has huge pages to give (else said and passed over). */
static bool sysv_one(struct vt_ep e[2], bool huge)
{
	const size_t seg = 4u << 20, off = 2u << 20, len = 100000;
	uint8_t *src = T.dev[0].buf, *p;
	struct ibv_sge s = sge_of(&T.dev[0], 0, (uint32_t)len);
	struct ibv_send_wr wr;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	bool ok = false;
	int id;

	id = shmget(IPC_PRIVATE, seg, IPC_CREAT | 0600 | (huge ? SHM_HUGETLB : 0));
	if (id < 0 && huge && (errno == ENOMEM || errno == EPERM)) {
		vt_log(&T.v, "no huge pages for SHM_HUGETLB (%s): that part not run",
		       strerror(errno));
		return true;
	}
	if (id < 0)
		return fail("shmget%s: %s", huge ? " SHM_HUGETLB" : "", strerror(errno));
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL); /* freed at the last detach, as UCX does */
	if (p == (void *)-1)
		return fail("shmat: %s", strerror(errno));
	memset(p, 0x5a, seg);
	mr = ibv_reg_mr(T.dev[1].v.pd, p + off, len, ACCESS_ALL);
	if (!mr) {
		fail("ibv_reg_mr on a SysV segment%s: %s", huge ? " (huge)" : "",
		     strerror(errno));
		goto out;
	}
	fill(src, len, 31);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)(p + off);
	wr.wr.rdma.rkey = mr->rkey;
	if (!post(e[0].qp, &wr, "write to SysV") || !poll_one(e[0].scq, &wc, "write") ||
	    !wc_ok(&wc, IBV_WC_RDMA_WRITE, "write to SysV"))
		goto out;
	p[0] = 1; /* the application's own writes, outside the MR */
	p[seg - 1] = 2;
	if (ibv_dereg_mr(mr)) {
		fail("ibv_dereg_mr: %s", strerror(errno));
		goto out;
	}
	mr = NULL;
	if (memcmp(p + off, src, len) || p[0] != 1 || p[seg - 1] != 2 || p[off - 1] != 0x5a) {
		fail("SysV segment after dereg: data %s, edges %u %u %u",
		     memcmp(p + off, src, len) ? "differs" : "ok", p[0], p[seg - 1], p[off - 1]);
		goto out;
	}
	ok = true;
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (shmdt(p) != 0 && ok)
		ok = fail("shmdt after dereg%s: %s", huge ? " (huge)" : "", strerror(errno));
	return ok;
}

static bool c_sysv(void)
{
	struct vt_ep e[2];
	bool ok;

	memset(e, 0, sizeof e);
	ok = pair_up(e, &CFG, 0) && sysv_one(e, false) && sysv_one(e, true);
	pair_down(e);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Registration semantics (host-driver/memory/pin.c): a range stays
 * backed by window pages after its deregistration and is checked when
 * registered again.  dev1 holds the application's buffer, dev0's QP
 * reads and writes it. */

/* RDMA READ (peer reads) or WRITE (peer writes) of len bytes between
 * dev0's buf at offset 0 and remote address ra of rkey. */
static bool rdma(struct vt_ep e[2], enum ibv_wr_opcode op, uint64_t ra,
		 uint32_t rkey, uint32_t len, const char *what)
{
	struct ibv_sge s = sge_of(&T.dev[0], 0, len);
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof wr);
	wr.opcode = op;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = ra;
	wr.wr.rdma.rkey = rkey;
	return post(e[0].qp, &wr, what) && poll_one(e[0].scq, &wc, what) &&
	       wc_ok(&wc, op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE,
		     what);
}

/* The peer reads [p, p+len) through mr and finds seed's pattern. */
static bool peer_sees(struct vt_ep e[2], struct ibv_mr *mr, const uint8_t *p,
		      uint32_t len, uint32_t seed, const char *what)
{
	uint8_t *want = malloc(len);
	bool ok;

	CHECK(want, "malloc");
	fill(want, len, seed);
	memset(T.dev[0].buf, 0, len);
	ok = rdma(e, IBV_WR_RDMA_READ, (uintptr_t)p, mr->rkey, len, what);
	if (ok && memcmp(T.dev[0].buf, want, len) != 0)
		ok = fail("%s: the peer read other bytes than the application wrote", what);
	free(want);
	return ok;
}

/* The peer writes seed's pattern to [p, p+len) through mr. */
static bool peer_writes(struct vt_ep e[2], struct ibv_mr *mr, uint8_t *p,
			uint32_t len, uint32_t seed, const char *what)
{
	fill(T.dev[0].buf, len, seed);
	return rdma(e, IBV_WR_RDMA_WRITE, (uintptr_t)p, mr->rkey, len, what);
}

static bool has_pattern(const uint8_t *p, size_t len, uint32_t seed)
{
	uint8_t *want = malloc(len);
	bool same;

	if (!want)
		return false;
	fill(want, len, seed);
	same = memcmp(p, want, len) == 0;
	free(want);
	return same;
}

static struct ibv_mr *reg1(void *p, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(T.dev[1].v.pd, p, len, ACCESS_ALL);

	if (!mr)
		fail("ibv_reg_mr %p+%zu: %s", p, len, strerror(errno));
	return mr;
}

static bool dereg1(struct ibv_mr *mr)
{
	CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr: %s", strerror(errno));
	return true;
}

/* Written before reg: seen by the peer; written by the peer: seen after
 * dereg; written after dereg: seen at the next registration (of the
 * range kept backed) and by the application; overlapping MRs. */
static bool regc_basic(struct vt_ep e[2], uint8_t *b, uint32_t len)
{
	struct ibv_mr *mr, *m2;

	fill(b, len, 101);
	if (!(mr = reg1(b, len)) || !peer_sees(e, mr, b, len, 101, "read after reg") ||
	    !peer_writes(e, mr, b, len, 102, "write") || !dereg1(mr))
		return false;
	CHECK(has_pattern(b, len, 102), "the peer's WRITE not seen after dereg");
	fill(b, len, 103); /* after dereg, before the next reg */
	if (!(mr = reg1(b, len)) || !peer_sees(e, mr, b, len, 103, "read after re-reg"))
		return false;
	/* a second, overlapping MR over the second half and beyond the first */
	if (!(m2 = reg1(b + len / 2, len / 2)))
		return false;
	if (!peer_writes(e, m2, b + len / 2, len / 4, 104, "write via the overlapping MR") ||
	    !dereg1(mr))
		return false;
	CHECK(has_pattern(b + len / 2, len / 4, 104), "write through MR 2 not seen");
	if (!peer_writes(e, m2, b + len / 2, len / 2, 105, "write after MR 1 went") || !dereg1(m2))
		return false;
	CHECK(has_pattern(b, len / 2, 103) && has_pattern(b + len / 2, len / 2, 105),
	      "contents after both MRs went");
	/* a range overlapping a kept one and beyond it: the kept part
	 * re-used, the rest backed */
	fill(b, 2 * len, 106);
	if (!(mr = reg1(b + len / 4, len)))
		return false;
	memset(T.dev[0].buf, 0, len);
	if (!rdma(e, IBV_WR_RDMA_READ, (uintptr_t)(b + len / 4), mr->rkey, len, "read across"))
		return false;
	CHECK(memcmp(T.dev[0].buf, b + len / 4, len) == 0, "read across the kept range's end");
	if (!peer_writes(e, mr, b + len / 4, len, 107, "write across") || !dereg1(mr))
		return false;
	CHECK(has_pattern(b + len / 4, len, 107), "write across the kept range's end");
	/* deregistered on one device, registered on the other (the two
	 * NICs of one snic-emu share this process's host memory: the kept
	 * backing is reused) */
	fill(b, len, 108);
	if (!(mr = reg1(b, len)) || !dereg1(mr))
		return false;
	mr = ibv_reg_mr(T.dev[0].v.pd, b, len, ACCESS_ALL);
	CHECK(mr, "ibv_reg_mr on the other device after dereg: %s", strerror(errno));
	if (!dereg1(mr))
		return false;
	CHECK(has_pattern(b, len, 108), "bytes after a registration on the other device");
	return true;
}

/* The application unmaps a deregistered range and maps fresh memory at
 * the same address (free() of a large block, then malloc()): the next
 * registration must give the peer the new memory, not the old backing. */
static bool regc_reuse(struct vt_ep e[2], uint32_t len)
{
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
	struct ibv_mr *mr;

	CHECK(b != MAP_FAILED, "mmap: %s", strerror(errno));
	fill(b, len, 201);
	if (!(mr = reg1(b, len)) || !dereg1(mr))
		return false;
	munmap(b, len);
	q = mmap(b, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	CHECK(q == b, "mmap at the same address: %s", strerror(errno));
	fill(b, len, 202);
	if (!(mr = reg1(b, len)) || !peer_sees(e, mr, b, len, 202, "read of the re-mapped range") ||
	    !peer_writes(e, mr, b, len, 203, "write to the re-mapped range") || !dereg1(mr))
		return false;
	CHECK(has_pattern(b, len, 203), "the peer's WRITE to the re-mapped range not seen");
	/* half of it replaced */
	q = mmap(b + len / 2, len / 2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(q == b + len / 2, "mmap over half: %s", strerror(errno));
	fill(b + len / 2, len / 2, 204);
	if (!(mr = reg1(b, len)) || !peer_sees(e, mr, b + len / 2, len / 2, 204, "read of the new half"))
		return false;
	CHECK(has_pattern(b, len / 2, 203), "the kept half changed");
	if (!dereg1(mr))
		return false;
	munmap(b, len);
	/* malloc/free/malloc of a block */
	b = malloc(len);
	CHECK(b, "malloc");
	fill(b, len, 205);
	if (!(mr = reg1(b, len)) || !peer_sees(e, mr, b, len, 205, "read of a malloc block") || !dereg1(mr))
		return false;
	free(b);
	q = malloc(len);
	CHECK(q, "malloc");
	fill(q, len, 206);
	if (!(mr = reg1(q, len)) || !peer_sees(e, mr, q, len, 206, "read of the next malloc block") ||
	    !dereg1(mr))
		return false;
	free(q);
	return true;
}

/* A deregistered range the application moves (mremap, as realloc() of a
 * large block does): once the driver lets its backing go (here: fresh
 * memory registered at the old address), the moved range must keep its
 * bytes and must not share pages with later registrations. */
static bool regc_moved(struct vt_ep e[2], uint32_t len)
{
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *moved, *q, *other;
	struct ibv_mr *mr;
	bool ok = false;

	CHECK(b != MAP_FAILED && dst != MAP_FAILED, "mmap: %s", strerror(errno));
	fill(b, len, 501);
	if (!(mr = reg1(b, len)) || !dereg1(mr))
		return false;
	moved = mremap(b, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	CHECK(moved == dst, "mremap: %s", strerror(errno));
	q = mmap(b, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	CHECK(q == b, "mmap at the old address: %s", strerror(errno));
	fill(b, len, 502);
	other = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(other != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(other, 0, len);
	if (!(mr = reg1(b, len)) || !peer_sees(e, mr, b, len, 502, "read at the old address") ||
	    !dereg1(mr))
		goto out;
	/* window pages freed now may back the next registration: the
	 * peer's writes there must not show in the moved range */
	if (!(mr = reg1(other, len)) || !peer_writes(e, mr, other, len, 503, "write elsewhere") ||
	    !dereg1(mr))
		goto out;
	if (!has_pattern(moved, len, 501)) {
		fail("the moved range lost its bytes or shares pages with another registration");
		goto out;
	}
	ok = has_pattern(other, len, 503) || fail("write elsewhere not seen");
out:
	munmap(b, len);
	munmap(moved, len);
	munmap(other, len);
	return ok;
}

/* More ranges registered once than the driver keeps backed (1,024):
 * the oldest go back to private memory with their bytes, and register
 * again. */
static bool regc_many(struct vt_ep e[2])
{
	const unsigned n = 1100;
	const size_t len = (size_t)n * 4096;
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	bool ok = false;

	CHECK(b != MAP_FAILED, "mmap: %s", strerror(errno));
	for (unsigned i = 0; i < n; i++) {
		fill(b + (size_t)i * 4096, 4096, 600 + i);
		if (!(mr = reg1(b + (size_t)i * 4096, 4096)) || !dereg1(mr))
			goto out;
	}
	for (unsigned i = 0; i < n; i++)
		if (!has_pattern(b + (size_t)i * 4096, 4096, 600 + i)) {
			fail("page %u of %u lost its bytes", i, n);
			goto out;
		}
	if (!(mr = reg1(b, 4096)) || !peer_sees(e, mr, b, 4096, 600, "read of an evicted range") ||
	    !dereg1(mr))
		goto out;
	ok = true;
out:
	munmap(b, len);
	return ok;
}

/* fork() after a deregistration: the child gets a private copy (its
 * writes stay its own) with the parent's bytes, as of plain memory. */
static bool regc_fork(uint8_t *b, uint32_t len)
{
	struct ibv_mr *mr;
	int fd[2], st;
	char ok = 0;
	pid_t pid;

	fill(b, len, 301);
	if (!(mr = reg1(b, len)) || !dereg1(mr))
		return false;
	CHECK(pipe(fd) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char r = has_pattern(b, len, 301) ? 1 : 0;

		memset(b, 0xee, len); /* must not reach the parent */
		if (write(fd[1], &r, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &ok, 1) != 1)
		ok = 0;
	close(fd[0]);
	waitpid(pid, &st, 0);
	CHECK(ok == 1, "the child did not see the parent's bytes");
	CHECK(has_pattern(b, len, 301), "the child's writes reached the parent after fork");
	return true;
}

/* A buffer in MAP_HUGETLB memory registers (in its middle), takes the
 * peer's WRITE, deregisters, and unmaps. */
static bool regc_huge(struct vt_ep e[2])
{
	const size_t seg = 4u << 20, off = (2u << 20) - 8192;
	const uint32_t len = 100000;
	uint8_t *h = mmap(NULL, seg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	struct ibv_mr *mr;

	if (h == MAP_FAILED) {
		vlog("no huge pages for MAP_HUGETLB (%s): that part not run", strerror(errno));
		return true;
	}
	memset(h, 0x5a, seg);
	fill(h + off, len, 401);
	if (!(mr = reg1(h + off, len)) || !peer_sees(e, mr, h + off, len, 401, "read of huge pages") ||
	    !peer_writes(e, mr, h + off, len, 402, "write to huge pages") || !dereg1(mr))
		return false;
	CHECK(has_pattern(h + off, len, 402) && h[0] == 0x5a && h[seg - 1] == 0x5a &&
	      h[off - 1] == 0x5a, "huge-page buffer after dereg");
	if (!(mr = reg1(h + off, len)) || !peer_sees(e, mr, h + off, len, 402, "re-reg of huge pages") ||
	    !dereg1(mr))
		return false;
	CHECK(munmap(h, seg) == 0, "munmap of the huge-page buffer: %s", strerror(errno));
	return true;
}

/* The first copy reads the range (pin.c window_fill): a range that is
 * not all readable is refused with EFAULT, whichever way the copy goes
 * (the window warm from the cases before: its pages are mapped here),
 * and nothing is lost; a shared file mapping's bytes reach the peer. */
static bool regc_unreadable(struct vt_ep e[2], uint32_t len)
{
	uint8_t *n = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = memfd_create("snic-regc", 0);
	uint8_t *f = MAP_FAILED;
	struct ibv_mr *mr;

	CHECK(n != MAP_FAILED && h != MAP_FAILED && fd >= 0, "mmap/memfd: %s", strerror(errno));
	if (ftruncate(fd, len) == 0)
		f = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED, "memfd mapping: %s", strerror(errno));
	errno = 0;
	mr = ibv_reg_mr(T.dev[1].v.pd, n, len, IBV_ACCESS_REMOTE_READ);
	CHECK(!mr && errno == EFAULT, "PROT_NONE range: %s (want EFAULT)",
	      mr ? "registered" : strerror(errno));
	fill(h, len, 501);
	CHECK(munmap(h + len / 2, 4096) == 0, "munmap: %s", strerror(errno));
	errno = 0;
	mr = ibv_reg_mr(T.dev[1].v.pd, h, len, IBV_ACCESS_REMOTE_READ);
	CHECK(!mr && errno == EFAULT, "range with a hole: %s (want EFAULT)",
	      mr ? "registered" : strerror(errno));
	CHECK(has_pattern(h, len / 2, 501), "bytes before the hole after the refusal");
	fill(f, len, 502);
	if (!(mr = reg1(f, len)) || !peer_sees(e, mr, f, len, 502, "read of a memfd mapping") ||
	    !peer_writes(e, mr, f, len, 503, "write to a memfd mapping") || !dereg1(mr))
		return false;
	CHECK(has_pattern(f, len, 503), "the peer's WRITE into the memfd mapping");
	munmap(n, len);
	munmap(h, len / 2);
	munmap(h + len / 2 + 4096, len / 2 - 4096);
	munmap(f, len);
	close(fd);
	return true;
}

/* Small kept ranges found replaced are settled in batches (pin.c
 * chunk_stale): a 4 KiB range moved with mremap after its deregistration,
 * a fresh buffer registered at its old address, then more than 64 small
 * buffers freed and allocated again at one address.  The moved range
 * keeps its bytes through the batch, and once its window page is free
 * again the peer's writes to later registrations do not show in it. */
static bool regc_stale(struct vt_ep e[2])
{
	const size_t pg = 4096;
	uint8_t *a = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *dst = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *moved, *q, *p[16];
	struct ibv_mr *mr;
	unsigned i;

	CHECK(a != MAP_FAILED && dst != MAP_FAILED, "mmap: %s", strerror(errno));
	fill(a, pg, 801);
	if (!(mr = reg1(a, pg)) || !dereg1(mr))
		return false;
	moved = mremap(a, pg, pg, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	CHECK(moved == dst, "mremap: %s", strerror(errno));
	q = mmap(a, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	CHECK(q == a, "mmap at the old address: %s", strerror(errno));
	fill(a, pg, 802);
	if (!(mr = reg1(a, pg)) || !peer_sees(e, mr, a, pg, 802, "read at the old address") ||
	    !dereg1(mr))
		return false;
	CHECK(munmap(a, pg) == 0, "munmap: %s", strerror(errno));
	for (i = 0; i < 70; i++) {
		uint8_t *b = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);

		CHECK(b != MAP_FAILED, "mmap: %s", strerror(errno));
		fill(b, pg, 810 + i);
		if (!(mr = reg1(b, pg)) || !peer_sees(e, mr, b, pg, 810 + i, "read of a fresh buffer") ||
		    !dereg1(mr))
			return false;
		CHECK(munmap(b, pg) == 0, "munmap: %s", strerror(errno));
		CHECK(has_pattern(moved, pg, 801), "the moved range lost its bytes (buffer %u)", i);
	}
	for (i = 0; i < 16; i++) {
		p[i] = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(p[i] != MAP_FAILED, "mmap: %s", strerror(errno));
		memset(p[i], 0, pg);
		if (!(mr = reg1(p[i], pg)) || !peer_writes(e, mr, p[i], pg, 900 + i, "write") ||
		    !dereg1(mr))
			return false;
	}
	CHECK(has_pattern(moved, pg, 801),
	      "the moved range lost its bytes or shares its page with a later registration");
	for (i = 0; i < 16; i++) {
		CHECK(has_pattern(p[i], pg, 900 + i), "write %u not seen", i);
		munmap(p[i], pg);
	}
	munmap(moved, pg);
	/* three kept pages replaced by one buffer over all of them (pin.c
	 * chunk_for: one backing for the whole range) */
	q = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED, "mmap: %s", strerror(errno));
	for (i = 0; i < 3; i++) {
		fill(q + i * pg, pg, 940 + i);
		if (!(mr = reg1(q + i * pg, pg)) || !dereg1(mr))
			return false;
	}
	CHECK(munmap(q, 3 * pg) == 0, "munmap: %s", strerror(errno));
	CHECK(mmap(q, 3 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == q,
	      "mmap at the old address: %s", strerror(errno));
	fill(q, 3 * pg, 950);
	if (!(mr = reg1(q, 3 * pg)) ||
	    !peer_sees(e, mr, q, 3 * pg, 950, "read over three replaced pages") ||
	    !peer_writes(e, mr, q, 3 * pg, 951, "write over three replaced pages") ||
	    !dereg1(mr))
		return false;
	CHECK(has_pattern(q, 3 * pg, 951), "write over three replaced pages not seen");
	munmap(q, 3 * pg);
	return true;
}

/* The end of a case on one buffer: its MR (if still registered), the
 * expected bytes and the buffer go. */
static bool regc_end(struct ibv_mr *mr, void *want, uint8_t *b, size_t len, bool ok)
{
	if (mr)
		dereg1(mr);
	free(want);
	munmap(b, len);
	return ok;
}

/* A buffer partly never touched (pin.c fill_by_runs copies only the
 * pages that hold data and writes zeros into the window under the
 * others, over the stale bytes the cases before left there): the peer
 * reads the written pages' bytes and zeros elsewhere (a page only read,
 * the kernel's zero page, among them), then writes all of it, which the
 * application sees after deregistration. */
static bool regc_sparse(struct vt_ep e[2], uint32_t len)
{
	static const uint32_t written[] = { 0, 5, 6, 7, 30, 63 };
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *want = calloc(1, len);
	struct ibv_mr *mr = NULL;
	volatile uint8_t sink;
	bool ok = false;

	CHECK(b != MAP_FAILED && want && len >= 64 * 4096, "mmap/calloc: %s", strerror(errno));
	for (unsigned i = 0; i < sizeof(written) / sizeof(written[0]); i++) {
		fill(b + (size_t)written[i] * 4096, 4096, 700 + written[i]);
		fill(want + (size_t)written[i] * 4096, 4096, 700 + written[i]);
	}
	sink = b[40 * 4096];
	(void)sink;
	if (!(mr = reg1(b, len)))
		goto out;
	memset(T.dev[0].buf, 0xa5, len);
	if (!rdma(e, IBV_WR_RDMA_READ, (uintptr_t)b, mr->rkey, len, "read of a sparse buffer"))
		goto out;
	if (memcmp(T.dev[0].buf, want, len) != 0) {
		fail("sparse buffer: the peer read other bytes than the application's (zeros "
		     "where it never wrote)");
		goto out;
	}
	if (memcmp(b, want, len) != 0) {
		fail("sparse buffer: the application's bytes changed at registration");
		goto out;
	}
	if (!peer_writes(e, mr, b, len, 710, "write to a sparse buffer"))
		goto out;
	ok = dereg1(mr);
	mr = NULL;
	if (ok && !has_pattern(b, len, 710))
		ok = fail("sparse buffer: the peer's WRITE not seen after dereg");
out:
	return regc_end(mr, want, b, len, ok);
}

/* A first registration larger than the window pages this process has
 * mapped so far (pin.c window_fill: the copy goes through vmsplice and
 * splice into the file, not a memcpy in the window's mapping), with a
 * hole of pages never touched in its middle (zeros written there, data
 * spliced on both sides at their offsets): the peer reads the
 * application's bytes at the start, over the hole and at the end (4 MiB
 * each, its buffer's size); the application's bytes are the same after
 * registration and, with the peer's WRITE at the end, after
 * deregistration. */
static bool regc_cold(struct vt_ep e[2])
{
	const size_t len = 40u << 20, hole = 20u << 20, hole_len = 3u << 20;
	const uint32_t part = BUF_LEN;
	const size_t at[] = { 0, hole - part / 2, len - part };
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *want = malloc(len);
	struct ibv_mr *mr = NULL;
	bool ok = false;

	CHECK(b != MAP_FAILED && want, "mmap/malloc: %s", strerror(errno));
	fill(want, len, 601);
	memset(want + hole, 0, hole_len);
	memcpy(b, want, hole);
	memcpy(b + hole + hole_len, want + hole + hole_len, len - hole - hole_len);
	if (!(mr = reg1(b, len)))
		goto out;
	for (unsigned i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		memset(T.dev[0].buf, 0xa5, part);
		if (!rdma(e, IBV_WR_RDMA_READ, (uintptr_t)b + at[i], mr->rkey, part,
			  "read of a cold registration"))
			goto out;
		if (memcmp(T.dev[0].buf, want + at[i], part) != 0) {
			fail("cold registration: the peer read other bytes than the application's "
			     "at offset %zu", at[i]);
			goto out;
		}
	}
	if (memcmp(b, want, len) != 0) {
		fail("cold registration: the application's bytes changed at registration");
		goto out;
	}
	if (!peer_writes(e, mr, b + len - part, part, 602, "write to a cold registration"))
		goto out;
	ok = dereg1(mr);
	mr = NULL;
	fill(want + len - part, part, 602);
	if (ok && memcmp(b, want, len) != 0)
		ok = fail("cold registration: the application's bytes or the peer's WRITE not "
			  "there after dereg");
out:
	return regc_end(mr, want, b, len, ok);
}

/* Minor page faults so far of the process serving dev (its BAR's fw_pid),
 * -1 when unknown. */
static long nic_minor_faults(const struct dev *d)
{
	const char *dir = getenv("SNIC_RUN_DIR");
	char path[512], stat[1024], *p;
	uint32_t pid = 0;
	long flt = -1;
	FILE *f;
	int fd;

	snprintf(path, sizeof path, "%s/%s.bar", dir && *dir ? dir : "/dev/shm/snic",
		 ibv_get_device_name(d->v.ctx->device));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &pid, sizeof pid, offsetof(struct snic_bar_hdr, fw_pid)) != sizeof pid)
		pid = 0;
	close(fd);
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if (!pid || !(f = fopen(path, "r")))
		return -1;
	/* field 10 (minflt), counted after the ")" that ends field 2 */
	if (fgets(stat, sizeof stat, f) && (p = strrchr(stat, ')')) &&
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %ld", &flt) != 1)
		flt = -1;
	fclose(f);
	return flt;
}

/* The NIC writes a buffer registered just before without a page fault in
 * its own process: the board fills its page tables when the registration
 * arrives (HAL dma_prepare), not at the first packet that lands on each
 * page (issue 11: ~1.2 us per page on the receive hop).  A 2 MiB WRITE is
 * 512 pages: without the fill, about one fault each. */
/* Under ASan (the CI's sanitizer build: snic-emu built alike) the NIC's
 * writes also touch their shadow, one page per 8 written, faulted on
 * first use: that many more are allowed (main without the fill: 548). */
#if defined(__SANITIZE_ADDRESS__)
#define PREFAULT_SHADOW(pages) ((pages) / 8 + 8)
#else
#define PREFAULT_SHADOW(pages) 0
#endif

static bool c_prefault(void)
{
	const uint32_t len = 2u << 20, pages = len / 4096;
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr = NULL;
	struct vt_ep e[2];
	long f0, f1 = -1;
	bool ok;

	CHECK(b != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(b, 0x11, len); /* an application's buffer, touched before */
	memset(e, 0, sizeof e);
	ok = pair_up(e, &CFG, 0) && (mr = reg1(b, len)) != NULL;
	f0 = nic_minor_faults(&T.dev[1]);
	ok = ok && peer_writes(e, mr, b, len, 501, "WRITE into a fresh MR");
	if (ok)
		f1 = nic_minor_faults(&T.dev[1]);
	if (ok && !has_pattern(b, len, 501))
		ok = fail("the fresh MR does not hold the WRITE's bytes");
	if (ok && (f0 < 0 || f1 < 0))
		ok = fail("cannot read the NIC process's fault count (/proc/<fw_pid>/stat)");
	vlog("prefault: the NIC process took %ld minor faults writing %u fresh pages",
	     f1 - f0, pages);
	if (ok && f1 - f0 >= pages / 8 + PREFAULT_SHADOW(pages))
		ok = fail("the NIC process took %ld minor faults writing %u freshly registered "
			  "pages (its page tables were not filled at registration)", f1 - f0, pages);
	if (mr && !dereg1(mr))
		ok = false;
	pair_down(e);
	munmap(b, len);
	return ok;
}

static bool c_regcache(void)
{
	const uint32_t len = 256 * 1024;
	uint8_t *b = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct vt_ep e[2];
	bool ok;

	CHECK(b != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(e, 0, sizeof e);
	ok = pair_up(e, &CFG, 0) && regc_basic(e, b, len) && regc_reuse(e, len) &&
	     regc_moved(e, len) && regc_many(e) && regc_fork(b, len) && regc_huge(e) &&
	     regc_unreadable(e, len) && regc_sparse(e, len) && regc_stale(e) &&
	     regc_cold(e);
	pair_down(e);
	munmap(b, 2 * len);
	return ok;
}

/* ibv_query_device_ex agrees with ibv_query_device (phys_port_cnt_ex is
 * the port count for devices of fewer than 256 ports). */
static bool c_query_ex(void)
{
	struct ibv_device_attr_ex x;
	struct dev *d = &T.dev[0];
	int rc;

	memset(&x, 0, sizeof x);
	rc = ibv_query_device_ex(d->v.ctx, NULL, &x);
	if (rc)
		return fail("ibv_query_device_ex: %s", strerror(rc));
	if (x.phys_port_cnt_ex != d->v.attr.phys_port_cnt ||
	    x.orig_attr.phys_port_cnt != d->v.attr.phys_port_cnt ||
	    x.orig_attr.max_qp != d->v.attr.max_qp)
		return fail("query_device_ex: phys_port_cnt_ex %u, phys_port_cnt %u/%u",
			    x.phys_port_cnt_ex, x.orig_attr.phys_port_cnt,
			    d->v.attr.phys_port_cnt);
	return true;
}

/* Pools: create objects until the device refuses; it must refuse with
 * ENOMEM exactly at the limit ibv_query_device reports (counting what
 * this context already holds). */
enum { POOL_PD, POOL_MR, POOL_CQ, POOL_QP, POOL_SRQ, NPOOLS };

static bool pool_fill(int kind, int max, int have)
{
	static const char *const name[] = { "PD", "MR", "CQ", "QP", "SRQ" };
	struct dev *d = &T.dev[0];
	void **obj = calloc((size_t)max + 16, sizeof(void *));
	struct ibv_cq *cq = NULL;
	int n = 0, err = 0;
	bool ok = false;

	if (!obj)
		return fail("calloc");
	if (kind == POOL_QP && !(cq = ibv_create_cq(d->v.ctx, 4, NULL, NULL, 0))) {
		free(obj);
		return fail("ibv_create_cq: %s", strerror(errno));
	}
	for (; n < max + 16; n++) {
		errno = 0;
		switch (kind) {
		case POOL_PD:
			obj[n] = ibv_alloc_pd(d->v.ctx);
			break;
		case POOL_MR:
			obj[n] = ibv_reg_mr(d->v.pd, d->buf + 8192, 64, IBV_ACCESS_LOCAL_WRITE);
			break;
		case POOL_CQ:
			obj[n] = ibv_create_cq(d->v.ctx, 1, NULL, NULL, 0);
			break;
		case POOL_QP: {
			struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
						       .qp_type = IBV_QPT_RC,
						       .cap = { 1, 1, 1, 1, 0 } };

			obj[n] = ibv_create_qp(d->v.pd, &ia);
			break;
		}
		default: {
			struct ibv_srq_init_attr si = { .attr = { 1, 1, 0 } };

			obj[n] = ibv_create_srq(d->v.pd, &si);
			break;
		}
		}
		if (!obj[n]) {
			err = errno;
			break;
		}
	}
	if (n + have != max || err != ENOMEM)
		fail("%s pool: %d created (+%d held) before errno %d (%s); max %d, want ENOMEM",
		     name[kind], n, have, err, strerror(err), max);
	else
		ok = true;
	vlog("%s pool: %d + %d = max %d, then %s", name[kind], n, have, max, strerror(err));
	while (n-- > 0) {
		switch (kind) {
		case POOL_PD: ibv_dealloc_pd(obj[n]); break;
		case POOL_MR: ibv_dereg_mr(obj[n]); break;
		case POOL_CQ: ibv_destroy_cq(obj[n]); break;
		case POOL_QP: ibv_destroy_qp(obj[n]); break;
		default: ibv_destroy_srq(obj[n]); break;
		}
	}
	if (cq)
		ibv_destroy_cq(cq);
	free(obj);
	return ok;
}

static bool c_limits(void)
{
	struct ibv_device_attr *a = &T.dev[0].v.attr;
	struct qp_cfg c = CFG;
	struct vt_ep e[2];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	bool ok = false;

	if (a->max_sge < 16 || a->max_qp_wr < 1024 || a->max_qp_rd_atom < 1 ||
	    a->atomic_cap != IBV_ATOMIC_HCA || a->max_srq < 1 || a->max_srq_wr < 1 ||
	    a->max_ah < 1 || a->max_cqe < 1024)
		return fail("device attributes: max_sge %d max_qp_wr %d rd_atom %d atomic_cap %d "
			    "max_srq %d/%d/%d max_ah %d max_cqe %d", a->max_sge, a->max_qp_wr,
			    a->max_qp_rd_atom, a->atomic_cap, a->max_srq, a->max_srq_wr,
			    a->max_srq_sge, a->max_ah, a->max_cqe);
	/* ibv_query_qp reports the capacities create returned */
	c.send_wr = 100;
	c.recv_wr = 50;
	c.send_sge = 3;
	c.recv_sge = 5;
	c.inl = 100;
	memset(e, 0, sizeof e);
	if (!pair_up(e, &c, 0))
		goto out;
	if (ibv_query_qp(e[0].qp, &qa, IBV_QP_CAP | IBV_QP_STATE, &qi)) {
		fail("ibv_query_qp");
		goto out;
	}
	if (memcmp(&qa.cap, &e[0].cap, sizeof qa.cap) || memcmp(&qi.cap, &e[0].cap, sizeof qi.cap) ||
	    e[0].cap.max_send_wr < 100 || e[0].cap.max_recv_wr < 50 ||
	    e[0].cap.max_send_sge < 3 || e[0].cap.max_recv_sge < 5 ||
	    e[0].cap.max_inline_data < 100 || qa.qp_state != IBV_QPS_RTS ||
	    qa.max_rd_atomic != 16 || qa.max_dest_rd_atomic != 16) {
		fail("ibv_query_qp: cap %u/%u/%u/%u/%u (created %u/%u/%u/%u/%u), state %d, rd_atomic "
		     "%u/%u", qa.cap.max_send_wr, qa.cap.max_recv_wr, qa.cap.max_send_sge,
		     qa.cap.max_recv_sge, qa.cap.max_inline_data, e[0].cap.max_send_wr,
		     e[0].cap.max_recv_wr, e[0].cap.max_send_sge, e[0].cap.max_recv_sge,
		     e[0].cap.max_inline_data, qa.qp_state, qa.max_rd_atomic,
		     qa.max_dest_rd_atomic);
		goto out;
	}
	pair_down(e);
	ok = pool_fill(POOL_PD, a->max_pd, 1) && pool_fill(POOL_MR, a->max_mr, 2) &&
	     pool_fill(POOL_CQ, a->max_cq, 0) && pool_fill(POOL_QP, a->max_qp, 0) &&
	     pool_fill(POOL_SRQ, a->max_srq, 0);
out:
	pair_down(e);
	return ok;
}

/* The extended API: CQs from ibv_create_cq_ex read with start/next/
 * end_poll, a QP from ibv_create_qp_ex posting through ibv_wr_*. */
static bool cqx_poll(struct ibv_cq_ex *cq, enum ibv_wc_opcode op, uint32_t len,
		     uint32_t qpn, const char *what)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint64_t end = vt_now_ns() + (uint64_t)T.v.timeout_ms * 1000000u;
	int rc;

	while ((rc = ibv_start_poll(cq, &pa)) == ENOENT)
		CHECK(vt_now_ns() < end, "%s: no completion", what);
	CHECK(rc == 0, "%s: ibv_start_poll returned %d", what, rc);
	bool ok = cq->status == IBV_WC_SUCCESS && ibv_wc_read_opcode(cq) == op &&
		  ibv_wc_read_byte_len(cq) == len && ibv_wc_read_qp_num(cq) == qpn;

	if (!ok)
		fail("%s: status %s opcode %d byte_len %u qp 0x%x", what,
		     ibv_wc_status_str(cq->status), ibv_wc_read_opcode(cq),
		     ibv_wc_read_byte_len(cq), ibv_wc_read_qp_num(cq));
	ibv_end_poll(cq);
	return ok;
}

static bool c_ext_api(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cq[2] = { NULL, NULL };
	struct vt_ep e[2];
	struct ibv_qp_ex *qx;
	uint64_t *word = (uint64_t *)(void *)(T.dev[1].buf + 65536);
	uint8_t *src = T.dev[0].buf, *dst = T.dev[1].buf;
	char msg[] = "inline through ibv_wr_set_inline_data";
	bool ok = false;

	memset(e, 0, sizeof e);
	for (int i = 0; i < 2; i++) {
		cq[i] = ibv_create_cq_ex(T.dev[i].v.ctx, &ca);
		if (!cq[i]) {
			fail("ibv_create_cq_ex: %s", strerror(errno));
			goto out;
		}
		struct ibv_qp_init_attr_ex qa = {
			.send_cq = ibv_cq_ex_to_cq(cq[i]), .recv_cq = ibv_cq_ex_to_cq(cq[i]),
			.qp_type = IBV_QPT_RC, .sq_sig_all = 0,
			.cap = { 16, 16, 2, 2, 64 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = T.dev[i].v.pd,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM |
					  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
					  IBV_QP_EX_WITH_RDMA_READ,
		};
		e[i].d = &T.dev[i];
		e[i].vd = &T.dev[i].v;
		e[i].psn = 0x100 + (uint32_t)i;
		e[i].qp = ibv_create_qp_ex(T.dev[i].v.ctx, &qa);
		if (!e[i].qp) {
			fail("ibv_create_qp_ex: %s", strerror(errno));
			goto out;
		}
	}
	if (!ep_connect(&e[0], &e[1], 0) || !ep_connect(&e[1], &e[0], 0))
		goto out;
	qx = ibv_qp_to_qp_ex(e[0].qp);
	if (!qx) {
		fail("ibv_qp_to_qp_ex returned NULL");
		goto out;
	}
	fill(src, 4096, 5);
	memset(dst, 0xee, 8192);
	*word = 1000;
	struct ibv_sge r = sge_of(&T.dev[1], 4096, 256);

	if (!post_recv(e[1].qp, 9, &r, 1))
		goto out;
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, T.dev[1].mr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(qx, T.dev[0].mr->lkey, (uintptr_t)src, 3000);
	qx->wr_id = 2;
	ibv_wr_send_imm(qx, htonl(0x5150));
	ibv_wr_set_inline_data(qx, msg, sizeof msg);
	qx->wr_id = 3;
	ibv_wr_atomic_fetch_add(qx, T.dev[1].mr->rkey, (uintptr_t)word, 5);
	ibv_wr_set_sge(qx, T.dev[0].mr->lkey, (uintptr_t)(src + 8192), 8);
	int rc = ibv_wr_complete(qx);

	if (rc) {
		fail("ibv_wr_complete returned %d", rc);
		goto out;
	}
	if (!cqx_poll(cq[0], IBV_WC_RDMA_WRITE, 3000, e[0].qp->qp_num, "wr write") ||
	    !cqx_poll(cq[0], IBV_WC_SEND, sizeof msg, e[0].qp->qp_num, "wr send") ||
	    !cqx_poll(cq[0], IBV_WC_FETCH_ADD, 8, e[0].qp->qp_num, "wr fetch_add") ||
	    !cqx_poll(cq[1], IBV_WC_RECV, sizeof msg, e[1].qp->qp_num, "recv"))
		goto out;
	if (memcmp(dst, src, 3000) || memcmp(dst + 4096, msg, sizeof msg) || *word != 1005 ||
	    *(uint64_t *)(void *)(src + 8192) != 1000) {
		fail("ibv_wr_*: write %s, send %s, fetch_add word %" PRIu64, memcmp(dst, src, 3000)
		     ? "differs" : "ok", memcmp(dst + 4096, msg, sizeof msg) ? "differs" : "ok", *word);
		goto out;
	}
	/* an error inside the batch posts nothing: too many SGEs */
	struct ibv_sge many[17];

	for (int i = 0; i < 17; i++)
		many[i] = sge_of(&T.dev[0], (size_t)i * 8, 8);
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, T.dev[1].mr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge_list(qx, 17, many);
	rc = ibv_wr_complete(qx);
	if (rc != EINVAL) {
		fail("ibv_wr_set_sge_list beyond max_send_sge: ibv_wr_complete returned %d", rc);
		goto out;
	}
	ok = true;
out:
	for (int i = 0; i < 2; i++) {
		if (e[i].qp)
			ibv_destroy_qp(e[i].qp);
		if (cq[i])
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq[i]));
	}
	return ok;
}

/* ------------------------------------------------------------------ */
/* Memory windows (IBTA 10.6.7): type 1 bound by ibv_bind_mw, type 2B by
 * IBV_WR_BIND_MW (and ibv_wr_bind_mw), invalidated by LOCAL_INV and by a
 * SEND with Invalidate.  The windows open on an MR of dev1 (with
 * MW_BIND); dev1's QP binds them, dev0's QP reaches them.  A refused
 * access completes with REM_ACCESS_ERR and leaves the memory as it was;
 * the QPs are then in error and the case takes a new pair.              */

enum {
	MW_OFF = 2 << 20,               /* the MR on dev1: [MW_OFF, +MW_MR_LEN) */
	MW_MR_LEN = 64 << 10,
	MW_WIN = MW_OFF + 4096,         /* the window: [MW_WIN, +MW_WIN_LEN)    */
	MW_WIN_LEN = 8192,
	MW_RW = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	MW_SEND = 3000,                 /* SEND with Invalidate: 3 packets      */
};

static struct ibv_mr *mw_mr(int access)
{
	struct ibv_mr *mr = ibv_reg_mr(T.dev[1].v.pd, T.dev[1].buf + MW_OFF, MW_MR_LEN, access);

	if (!mr)
		fail("ibv_reg_mr(MW_BIND): %s", strerror(errno));
	return mr;
}

static bool mw_repair(struct vt_ep e[2])
{
	pair_down(e);
	return pair_up(e, &CFG, 0);
}

/* Bind mw on e's QP over [off, +len) of dev1's buf: by ibv_bind_mw (type
 * 1, *rkey becomes the window's) or an IBV_WR_BIND_MW WR (type 2B, *rkey:
 * in the key it has, out the next one).  *st: the bind's completion. */
static bool mw_bind(struct vt_ep *e, struct ibv_mw *mw, struct ibv_mr *mr, size_t off,
		    uint64_t len, int access, uint32_t *rkey, enum ibv_wc_status *st)
{
	struct ibv_mw_bind_info bi = { mr, mr ? (uintptr_t)(T.dev[1].buf + off) : 0, len,
				       (unsigned int)access };
	struct ibv_wc wc;
	int rc;

	if (mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = bi };

		rc = ibv_bind_mw(e->qp, mw, &b);
		CHECK(!rc, "ibv_bind_mw: %s", strerror(rc));
		*rkey = mw->rkey;
	} else {
		struct ibv_send_wr wr;

		memset(&wr, 0, sizeof wr);
		wr.wr_id = 0xb2;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = *rkey = ibv_inc_rkey(*rkey);
		wr.bind_mw.bind_info = bi;
		if (!post(e->qp, &wr, "bind_mw"))
			return false;
	}
	if (!poll_one(e->scq, &wc, "bind"))
		return false;
	CHECK(wc.status != IBV_WC_SUCCESS || wc.opcode == IBV_WC_BIND_MW,
	      "bind: opcode %d, want IBV_WC_BIND_MW", wc.opcode);
	*st = wc.status;
	return true;
}

static bool mw_bind_ok(struct vt_ep *e, struct ibv_mw *mw, struct ibv_mr *mr, uint32_t *rkey)
{
	enum ibv_wc_status st;

	if (!mw_bind(e, mw, mr, MW_WIN, MW_WIN_LEN, MW_RW, rkey, &st))
		return false;
	CHECK(st == IBV_WC_SUCCESS, "bind: status %s", ibv_wc_status_str(st));
	return true;
}

/* dev0 WRITEs len bytes at dev1's buf + off through rkey and expects
 * `want`: on success the bytes arrived (and READ back through the same
 * rkey returns them), otherwise dev1's memory is untouched. */
static bool mw_write(struct vt_ep e[2], uint32_t rkey, size_t off, uint32_t len,
		     enum ibv_wc_status want, const char *what)
{
	static uint8_t before[MW_MR_LEN];
	uint8_t *dst = T.dev[1].buf + MW_OFF, *src = T.dev[0].buf;
	enum ibv_wc_status st;

	fill(src, len, T.seq++);
	fill(dst, MW_MR_LEN, T.seq++);
	memcpy(before, dst, MW_MR_LEN);
	if (!rdma_op(&e[0], IBV_WR_RDMA_WRITE, 0, raddr_of(&e[1], off), rkey, len, &st))
		return false;
	CHECK(st == want, "%s: WRITE status %s, want %s", what, ibv_wc_status_str(st),
	      ibv_wc_status_str(want));
	if (want != IBV_WC_SUCCESS) {
		CHECK(!memcmp(before, dst, MW_MR_LEN), "%s: refused WRITE changed memory", what);
		return true;
	}
	memcpy(before + (off - MW_OFF), src, len);
	CHECK(!memcmp(before, dst, MW_MR_LEN), "%s: WRITE data differs", what);
	memset(src + 65536, 0, len);
	if (!rdma_op(&e[0], IBV_WR_RDMA_READ, 65536, raddr_of(&e[1], off), rkey, len, &st))
		return false;
	CHECK(st == IBV_WC_SUCCESS && !memcmp(src + 65536, src, len),
	      "%s: READ through the window: %s", what, ibv_wc_status_str(st));
	return true;
}

static bool mw_type1_steps(struct vt_ep e[2], struct ibv_mw *mw, struct ibv_mr *mr)
{
	uint32_t rk0 = mw->rkey, rk1, rk2;
	enum ibv_wc_status st;

	if (!mw_bind_ok(&e[1], mw, mr, &rk1))
		return false;
	CHECK(rk1 != rk0, "ibv_bind_mw left the rkey 0x%x", rk0);
	if (!mw_write(e, rk1, MW_WIN, MW_WIN_LEN, IBV_WC_SUCCESS, "type 1 window"))
		return false;
	errno = 0;
	CHECK(ibv_dereg_mr(mr) == EBUSY, "dereg of an MR with a bound window: not EBUSY");
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, ACCESS_ALL) ==
	      IBV_REREG_MR_ERR_CMD && errno == EBUSY,
	      "rereg of an MR with a bound window: not ERR_CMD/EBUSY (errno %d)", errno);
	/* a new binding: the old rkey is dead */
	if (!mw_bind_ok(&e[1], mw, mr, &rk2) ||
	    !mw_write(e, rk2, MW_WIN + 100, 1000, IBV_WC_SUCCESS, "rebound") ||
	    !mw_write(e, rk1, MW_WIN, 64, IBV_WC_REM_ACCESS_ERR, "old rkey") ||
	    !mw_repair(e))
		return false;
	/* inside the MR, past the window's end */
	if (!mw_write(e, rk2, MW_WIN + MW_WIN_LEN - 16, 32, IBV_WC_REM_ACCESS_ERR,
		      "past the window") || !mw_repair(e))
		return false;
	/* before the window: the MR's first bytes */
	if (!mw_write(e, rk2, MW_OFF, 16, IBV_WC_REM_ACCESS_ERR, "before the window") ||
	    !mw_repair(e))
		return false;
	/* zero-length bind: unbound (any QP of the PD binds a type 1) */
	if (!mw_bind(&e[1], mw, NULL, 0, 0, 0, &rk1, &st))
		return false;
	CHECK(st == IBV_WC_SUCCESS, "unbind: %s", ibv_wc_status_str(st));
	return mw_write(e, rk1, MW_WIN, 64, IBV_WC_REM_ACCESS_ERR, "unbound window") &&
	       mw_repair(e);
}

/* Binds the IBTA refuses: MW_BIND_ERR, the QP in error after each. */
static bool mw_bind_refused(struct vt_ep e[2], struct ibv_mw *mw, struct ibv_mr *mr,
			    size_t off, uint64_t len, int access, const char *what)
{
	uint32_t rk = mw->rkey;
	enum ibv_wc_status st;

	if (!mw_bind(&e[1], mw, mr, off, len, access, &rk, &st))
		return false;
	CHECK(st == IBV_WC_MW_BIND_ERR, "bind %s: status %s, want MW_BIND_ERR", what,
	      ibv_wc_status_str(st));
	return mw_repair(e);
}

static bool c_mw_type1(void)
{
	const struct ibv_device_attr *a = &T.dev[1].v.attr;
	struct ibv_mr *mr = NULL, *plain = NULL;
	struct ibv_mw *mw = NULL;
	struct vt_ep e[2];
	bool ok = false;

	memset(e, 0, sizeof e);
	CHECK((a->device_cap_flags & IBV_DEVICE_MEM_WINDOW) && a->max_mw > 0,
	      "device caps: MEM_WINDOW not reported (max_mw %d)", a->max_mw);
	if (!(mr = mw_mr(ACCESS_ALL | IBV_ACCESS_MW_BIND)) || !pair_up(e, &CFG, 0))
		goto out;
	plain = ibv_reg_mr(T.dev[1].v.pd, T.dev[1].buf + MW_OFF, MW_MR_LEN, ACCESS_ALL);
	mw = ibv_alloc_mw(T.dev[1].v.pd, IBV_MW_TYPE_1);
	if (!plain || !mw) {
		fail("ibv_reg_mr / ibv_alloc_mw(type 1): %s", strerror(errno));
		goto out;
	}
	if (!mw_type1_steps(e, mw, mr) ||
	    !mw_bind_refused(e, mw, plain, MW_WIN, MW_WIN_LEN, MW_RW, "MR without MW_BIND") ||
	    !mw_bind_refused(e, mw, mr, MW_OFF + MW_MR_LEN - 4096, 8192, MW_RW, "past the MR"))
		goto out;
	/* the MR goes once no window is bound on it */
	if (ibv_dealloc_mw(mw)) {
		fail("ibv_dealloc_mw failed");
		goto out;
	}
	mw = NULL;
	if (ibv_dereg_mr(mr)) {
		fail("ibv_dereg_mr after the window went: failed");
		goto out;
	}
	mr = NULL;
	ok = true;
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
	if (plain)
		ibv_dereg_mr(plain);
	pair_down(e);
	return ok;
}

/* e[0] SENDs with Invalidate of rkey to e[1], 3000 bytes (FIRST, MIDDLE,
 * LAST with IETH at path MTU 1024): both complete, e[1]'s RECV with
 * IBV_WC_WITH_INV and the rkey. */
/* A RECV of len bytes on e[1], then e[0]'s SEND with Invalidate of rkey
 * from the start of dev0's buf; *wc: the send completion. */
static bool mw_send_inv_post(struct vt_ep e[2], uint32_t rkey, uint32_t len,
			     struct ibv_wc *wc)
{
	struct ibv_sge s = sge_of(&T.dev[0], 0, len), r = sge_of(&T.dev[1], 128 << 10, len);
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = 0x51;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	return post_recv(e[1].qp, 0x52, &r, 1) && post(e[0].qp, &wr, "send_inv") &&
	       poll_one(e[0].scq, wc, "send_inv");
}

static bool mw_send_inv(struct vt_ep e[2], uint32_t rkey)
{
	struct ibv_wc wc;

	fill(T.dev[0].buf, MW_SEND, T.seq++);
	if (!mw_send_inv_post(e, rkey, MW_SEND, &wc) || !wc_ok(&wc, IBV_WC_SEND, "send_inv") ||
	    !poll_one(e[1].rcq, &wc, "recv inv") || !wc_ok(&wc, IBV_WC_RECV, "recv inv"))
		return false;
	CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey &&
	      !(wc.wc_flags & IBV_WC_WITH_IMM),
	      "recv: wc_flags 0x%x invalidated_rkey 0x%x, want WITH_INV 0x%x", wc.wc_flags,
	      wc.invalidated_rkey, rkey);
	CHECK(wc.byte_len == MW_SEND &&
	      !memcmp(T.dev[1].buf + (128 << 10), T.dev[0].buf, MW_SEND),
	      "send with invalidate: data differs");
	return true;
}

/* A SEND with Invalidate of a key that is no bound 2B window of the
 * responder's QP (here: an MR's): NAKed invalid request (as rxe), the RECV
 * completes in error, the MR keeps working for a new pair. */
static bool mw_send_inv_refused(struct vt_ep e[2], uint32_t rkey)
{
	struct ibv_wc wc;

	if (!mw_send_inv_post(e, rkey, 64, &wc))
		return false;
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR, "SEND with Invalidate of an MR key: %s",
	      ibv_wc_status_str(wc.status));
	if (!poll_one(e[1].rcq, &wc, "recv of a bad invalidate"))
		return false;
	CHECK(wc.status != IBV_WC_SUCCESS && !(wc.wc_flags & IBV_WC_WITH_INV),
	      "RECV of a refused invalidation: %s flags 0x%x", ibv_wc_status_str(wc.status),
	      wc.wc_flags);
	return mw_repair(e) &&
	       mw_write(e, T.dev[1].mr->rkey, MW_WIN, 64, IBV_WC_SUCCESS, "MR after a refused invalidation");
}

static bool mw_local_inv(struct vt_ep *e, uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = 0x1a;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	if (!post(e->qp, &wr, "local_inv") || !poll_one(e->scq, &wc, "local_inv"))
		return false;
	CHECK(wc.status == want && (want != IBV_WC_SUCCESS || wc.opcode == IBV_WC_LOCAL_INV),
	      "LOCAL_INV: status %s opcode %d", ibv_wc_status_str(wc.status), wc.opcode);
	return true;
}

static bool mw_type2b_steps(struct vt_ep e[2], struct ibv_mw *mw, struct ibv_mr *mr)
{
	uint32_t rk = mw->rkey;

	if (!mw_bind_ok(&e[1], mw, mr, &rk) ||
	    !mw_write(e, rk, MW_WIN, MW_WIN_LEN, IBV_WC_SUCCESS, "type 2B window") ||
	    !mw_write(e, rk ^ 0x5a, MW_WIN, 64, IBV_WC_REM_ACCESS_ERR, "wrong key tag"))
		return false;
	/* a new pair: the window belongs to the old responder QP */
	if (!mw_repair(e) ||
	    !mw_write(e, rk, MW_WIN, 64, IBV_WC_REM_ACCESS_ERR, "another QP") || !mw_repair(e))
		return false;
	return true;
}

static bool mw_type2b_inv(struct vt_ep e[2], struct ibv_mw *mw, struct ibv_mr *mr)
{
	uint32_t rk = mw->rkey;
	enum ibv_wc_status st;

	/* remote invalidation, then the window is refused */
	if (!mw_bind_ok(&e[1], mw, mr, &rk) ||
	    !mw_write(e, rk, MW_WIN + 8, 512, IBV_WC_SUCCESS, "before invalidation") ||
	    !mw_send_inv(e, rk) ||
	    !mw_write(e, rk, MW_WIN + 8, 512, IBV_WC_REM_ACCESS_ERR, "remotely invalidated") ||
	    !mw_repair(e))
		return false;
	/* bound again (a new key tag), invalidated locally */
	if (!mw_bind_ok(&e[1], mw, mr, &rk) ||
	    !mw_write(e, rk, MW_WIN, 256, IBV_WC_SUCCESS, "bound again") ||
	    !mw_local_inv(&e[1], rk, IBV_WC_SUCCESS) ||
	    !mw_write(e, rk, MW_WIN, 256, IBV_WC_REM_ACCESS_ERR, "locally invalidated") ||
	    !mw_repair(e))
		return false;
	/* an MR key is not invalidated by a SEND with Invalidate */
	if (!mw_send_inv_refused(e, T.dev[1].mr->rkey))
		return false;
	/* a bound type 2B window cannot be bound again (invalidate first) */
	if (!mw_bind_ok(&e[1], mw, mr, &rk) ||
	    !mw_bind(&e[1], mw, mr, MW_WIN, 64, MW_RW, &rk, &st))
		return false;
	CHECK(st == IBV_WC_MW_BIND_ERR, "bind of a bound 2B window: %s", ibv_wc_status_str(st));
	return mw_repair(e);
}

static bool c_mw_type2b(void)
{
	const struct ibv_device_attr *a = &T.dev[1].v.attr;
	struct ibv_mw *mw[2] = { NULL, NULL };
	struct ibv_mr *mr = NULL;
	struct vt_ep e[2];
	bool ok = false;

	memset(e, 0, sizeof e);
	CHECK(a->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	      "device caps: MEM_WINDOW_TYPE_2B not reported");
	if (!(mr = mw_mr(ACCESS_ALL | IBV_ACCESS_MW_BIND)) || !pair_up(e, &CFG, 0))
		goto out;
	mw[0] = ibv_alloc_mw(T.dev[1].v.pd, IBV_MW_TYPE_2);
	mw[1] = ibv_alloc_mw(T.dev[1].v.pd, IBV_MW_TYPE_2);
	if (!mw[0] || !mw[1]) {
		fail("ibv_alloc_mw(type 2): %s", strerror(errno));
		goto out;
	}
	if (!mw_type2b_steps(e, mw[0], mr) || !mw_type2b_inv(e, mw[1], mr))
		goto out;
	/* windows still bound (to QPs gone): dealloc frees them, then the MR */
	if (ibv_dealloc_mw(mw[0]) || ibv_dealloc_mw(mw[1])) {
		fail("ibv_dealloc_mw of a bound window failed");
		goto out;
	}
	mw[0] = mw[1] = NULL;
	if (ibv_dereg_mr(mr)) {
		fail("ibv_dereg_mr after its windows went: failed");
		goto out;
	}
	mr = NULL;
	ok = true;
out:
	for (int i = 0; i < 2; i++)
		if (mw[i])
			ibv_dealloc_mw(mw[i]);
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(e);
	return ok;
}

/* The extended API: ibv_wr_bind_mw, ibv_wr_send_inv, ibv_wr_local_inv. */
static bool mw_ex_ep(struct vt_ep *e, struct dev *d, uint32_t psn)
{
	struct ibv_qp_init_attr_ex qa;

	memset(e, 0, sizeof *e);
	e->d = d;
	e->vd = &d->v;
	e->psn = psn;
	e->scq = ibv_create_cq(d->v.ctx, 64, NULL, NULL, 0);
	e->rcq = ibv_create_cq(d->v.ctx, 64, NULL, NULL, 0);
	memset(&qa, 0, sizeof qa);
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap = (struct ibv_qp_cap){ 16, 16, 2, 2, 0 };
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.pd = d->v.pd;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW |
			    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV |
			    IBV_QP_EX_WITH_SEND;
	if (e->scq && e->rcq)
		e->qp = ibv_create_qp_ex(d->v.ctx, &qa);
	CHECK(e->qp, "ibv_create_qp_ex(MW send ops): %s", strerror(errno));
	return true;
}

static bool mw_wr_one(struct ibv_qp_ex *qx, struct ibv_cq *cq, enum ibv_wc_opcode op,
		      const char *what)
{
	struct ibv_wc wc;
	int rc = ibv_wr_complete(qx);

	CHECK(!rc, "%s: ibv_wr_complete: %s", what, strerror(rc));
	return poll_one(cq, &wc, what) && wc_ok(&wc, op, what);
}

static bool mw_ex_steps(struct vt_ep e[2], struct ibv_mw *mw, struct ibv_mr *mr)
{
	struct ibv_qp_ex *q0 = ibv_qp_to_qp_ex(e[0].qp), *q1 = ibv_qp_to_qp_ex(e[1].qp);
	struct ibv_mw_bind_info bi = { mr, (uintptr_t)(T.dev[1].buf + MW_WIN), MW_WIN_LEN, MW_RW };
	struct ibv_sge r = sge_of(&T.dev[1], 128 << 10, 64);
	uint32_t rk = ibv_inc_rkey(mw->rkey);
	struct ibv_wc wc;

	CHECK(q0 && q1, "ibv_qp_to_qp_ex returned NULL");
	ibv_wr_start(q1);
	q1->wr_id = 1;
	q1->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(q1, mw, rk, &bi);
	if (!mw_wr_one(q1, e[1].scq, IBV_WC_BIND_MW, "ibv_wr_bind_mw") ||
	    !mw_write(e, rk, MW_WIN, 4096, IBV_WC_SUCCESS, "ibv_wr_bind_mw window") ||
	    !post_recv(e[1].qp, 2, &r, 1))
		return false;
	ibv_wr_start(q0);
	q0->wr_id = 3;
	q0->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(q0, rk);
	ibv_wr_set_sge(q0, T.dev[0].mr->lkey, (uintptr_t)T.dev[0].buf, 32);
	if (!mw_wr_one(q0, e[0].scq, IBV_WC_SEND, "ibv_wr_send_inv") ||
	    !poll_one(e[1].rcq, &wc, "recv inv") || !wc_ok(&wc, IBV_WC_RECV, "recv inv"))
		return false;
	CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rk,
	      "ibv_wr_send_inv: recv flags 0x%x rkey 0x%x, want 0x%x", wc.wc_flags,
	      wc.invalidated_rkey, rk);
	/* bound again, then ibv_wr_local_inv */
	rk = ibv_inc_rkey(rk);
	ibv_wr_start(q1);
	q1->wr_id = 4;
	q1->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(q1, mw, rk, &bi);
	q1->wr_id = 5;
	ibv_wr_local_inv(q1, rk);
	if (!mw_wr_one(q1, e[1].scq, IBV_WC_BIND_MW, "bind again") ||
	    !poll_one(e[1].scq, &wc, "ibv_wr_local_inv") ||
	    !wc_ok(&wc, IBV_WC_LOCAL_INV, "ibv_wr_local_inv"))
		return false;
	return mw_write(e, rk, MW_WIN, 64, IBV_WC_REM_ACCESS_ERR, "after ibv_wr_local_inv");
}

static bool c_mw_ext_api(void)
{
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw = NULL;
	struct vt_ep e[2];
	bool ok = false;

	memset(e, 0, sizeof e);
	if (!mw_ex_ep(&e[0], &T.dev[0], 0x200) || !mw_ex_ep(&e[1], &T.dev[1], 0x201) ||
	    !ep_connect(&e[0], &e[1], 0) || !ep_connect(&e[1], &e[0], 0) ||
	    !(mr = mw_mr(ACCESS_ALL | IBV_ACCESS_MW_BIND)))
		goto out;
	mw = ibv_alloc_mw(T.dev[1].v.pd, IBV_MW_TYPE_2);
	if (!mw) {
		fail("ibv_alloc_mw: %s", strerror(errno));
		goto out;
	}
	ok = mw_ex_steps(e, mw, mr);
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(e);
	return ok;
}

/* ------------------------------------------------------------------ */
/* XRC (IBTA Annex A14): an initiator on dev0, a target and its domain's
 * XRC SRQs on dev1.                                                    */

enum { XRC_SRQS = 3, XRC_MSGS = 9, XRC_RBUF = 1 << 20, XRC_SLOT = 8192 };

struct xrc_tgt {
	int fd;                 /* the file the domain is tied to           */
	char path[64];
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq[XRC_SRQS];
	struct ibv_srq *srq[XRC_SRQS];
	uint32_t srqn[XRC_SRQS];
	struct ibv_qp *qp;      /* XRC_RECV                                 */
	struct ibv_cq *icq;     /* dev0: the initiator's send CQ            */
	struct ibv_qp *ini;     /* dev0: XRC_SEND                           */
};

static void xrc_av(struct ibv_qp_attr *a, const struct dev *peer)
{
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = peer->v.gid;
	a->ah_attr.grh.sgid_index = (uint8_t)T.v.gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = PORT;
}

/* RESET -> RTS for both ends, with the attributes each kind takes (an
 * initiator no responder ones, a target no requester ones). */
static bool xrc_connect(struct xrc_tgt *x, uint32_t psn)
{
	struct ibv_qp_attr a;

	CHECK(!vt_qp_init(x->ini, 0) &&
	      !vt_qp_init(x->qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
	      "XRC QPs to INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = x->qp->qp_num;
	a.rq_psn = psn;
	xrc_av(&a, &T.dev[1]);
	CHECK(!ibv_modify_qp(x->ini, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), "XRC_SEND to RTR");
	a.dest_qp_num = x->ini->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	xrc_av(&a, &T.dev[0]);
	CHECK(!ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER), "XRC_RECV to RTR");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.sq_psn = psn;
	CHECK(!ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN),
	      "XRC_RECV to RTS");
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK(!ibv_modify_qp(x->ini, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
	      "XRC_SEND to RTS");
	return true;
}

/* The domain (tied to a fresh file), nsrq XRC SRQs each with its own CQ,
 * the target QP, and the initiator (extended, with send ops). */
static bool xrc_setup(struct xrc_tgt *x, int nsrq)
{
	struct ibv_context *c1 = T.dev[1].v.ctx, *c0 = T.dev[0].v.ctx;
	struct ibv_xrcd_init_attr xa = { 0 };
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex qa;

	memset(x, 0, sizeof *x);
	snprintf(x->path, sizeof x->path, "/tmp/snic-xrc-%d-XXXXXX", (int)getpid());
	x->fd = mkstemp(x->path);
	CHECK(x->fd >= 0, "mkstemp: %s", strerror(errno));
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = x->fd;
	xa.oflags = O_CREAT;
	x->xrcd = ibv_open_xrcd(c1, &xa);
	CHECK(x->xrcd, "ibv_open_xrcd: %s", strerror(errno));
	for (int i = 0; i < nsrq; i++) {
		x->cq[i] = ibv_create_cq(c1, 64, NULL, NULL, 0);
		CHECK(x->cq[i], "ibv_create_cq: %s", strerror(errno));
		memset(&sa, 0, sizeof sa);
		sa.attr.max_wr = 32;
		sa.attr.max_sge = 1;
		sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
		sa.srq_type = IBV_SRQT_XRC;
		sa.xrcd = x->xrcd;
		sa.cq = x->cq[i];
		sa.pd = T.dev[1].v.pd;
		x->srq[i] = ibv_create_srq_ex(c1, &sa);
		CHECK(x->srq[i], "ibv_create_srq_ex(XRC): %s", strerror(errno));
		CHECK(!ibv_get_srq_num(x->srq[i], &x->srqn[i]), "ibv_get_srq_num");
	}
	memset(&qa, 0, sizeof qa);
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x->xrcd;
	x->qp = ibv_create_qp_ex(c1, &qa);
	CHECK(x->qp, "ibv_create_qp_ex(XRC_RECV): %s", strerror(errno));
	x->icq = ibv_create_cq(c0, 64, NULL, NULL, 0);
	CHECK(x->icq, "ibv_create_cq: %s", strerror(errno));
	memset(&qa, 0, sizeof qa);
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.send_cq = x->icq;
	qa.cap.max_send_wr = 32;
	qa.cap.max_send_sge = 1;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qa.pd = T.dev[0].v.pd;
	x->ini = ibv_create_qp_ex(c0, &qa);
	CHECK(x->ini, "ibv_create_qp_ex(XRC_SEND): %s", strerror(errno));
	return xrc_connect(x, 0x4000 + T.seq++);
}

static void xrc_teardown(struct xrc_tgt *x)
{
	if (x->ini)
		ibv_destroy_qp(x->ini);
	if (x->icq)
		ibv_destroy_cq(x->icq);
	if (x->qp)
		ibv_destroy_qp(x->qp);
	for (int i = 0; i < XRC_SRQS; i++) {
		if (x->srq[i])
			ibv_destroy_srq(x->srq[i]);
		if (x->cq[i])
			ibv_destroy_cq(x->cq[i]);
	}
	if (x->xrcd)
		ibv_close_xrcd(x->xrcd);
	if (x->fd >= 0) {
		close(x->fd);
		unlink(x->path);
	}
}

/* One SEND of len bytes from dev0's buf at off to remote SRQ srqn. */
static bool xrc_send(struct xrc_tgt *x, uint64_t id, uint32_t srqn, size_t off,
		     uint32_t len)
{
	struct ibv_sge s = sge_of(&T.dev[0], off, len);
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.qp_type.xrc.remote_srqn = srqn;
	return post(x->ini, &wr, "XRC send");
}

static bool xrc_srq_post(struct ibv_srq *srq, uint64_t id, size_t off)
{
	struct ibv_sge r = sge_of(&T.dev[1], off, XRC_SLOT);
	struct ibv_recv_wr rw = { .wr_id = id, .sg_list = &r, .num_sge = 1 }, *bad;

	CHECK(!ibv_post_srq_recv(srq, &rw, &bad), "ibv_post_srq_recv");
	return true;
}

/* Messages of 1 to 6 packets round robin into three XRC SRQs (one by
 * ibv_wr_set_xrc_srqn): each completes on its SRQ's CQ with the data
 * byte for byte; the verbs around it (device cap, a second opening of
 * the domain's file, ibv_open_qp, EBUSY while in use). */
static bool c_xrc(void)
{
	struct ibv_xrcd_init_attr xa = { 0 };
	struct ibv_qp_open_attr oa = { 0 };
	struct ibv_xrcd *again = NULL;
	struct ibv_qp *opened = NULL;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct xrc_tgt x;
	struct ibv_wc wc;
	bool ok = false;

	if (!(T.dev[1].v.attr.device_cap_flags & IBV_DEVICE_XRC))
		return fail("IBV_DEVICE_XRC not reported");
	if (!xrc_setup(&x, XRC_SRQS))
		goto out;
	for (int m = 0; m < XRC_MSGS; m++)
		if (!xrc_srq_post(x.srq[m % XRC_SRQS], 5000 + m,
				  XRC_RBUF + (size_t)m * XRC_SLOT))
			goto out;
	for (int m = 0; m < XRC_MSGS; m++) {
		uint32_t len = 700 + 600 * (uint32_t)m; /* up to 5500: 6 packets */
		size_t off = (size_t)m * XRC_SLOT;
		int s = m % XRC_SRQS;

		fill(T.dev[0].buf + off, len, 77 + (uint32_t)m);
		if (m == 4) { /* the extended API's way to name the SRQ */
			struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(x.ini);

			ibv_wr_start(qx);
			qx->wr_id = 40 + (uint64_t)m;
			qx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send(qx);
			ibv_wr_set_xrc_srqn(qx, x.srqn[s]);
			ibv_wr_set_sge(qx, T.dev[0].mr->lkey,
				       (uintptr_t)(T.dev[0].buf + off), len);
			if (ibv_wr_complete(qx)) {
				fail("ibv_wr_complete (XRC)");
				goto out;
			}
		} else if (!xrc_send(&x, 40 + (uint64_t)m, x.srqn[s], off, len)) {
			goto out;
		}
		if (!poll_one(x.icq, &wc, "XRC send") || !wc_ok(&wc, IBV_WC_SEND, "XRC send"))
			goto out;
		if (!poll_one(x.cq[s], &wc, "XRC SRQ recv") ||
		    !wc_ok(&wc, IBV_WC_RECV, "XRC SRQ recv"))
			goto out;
		if (wc.wr_id != 5000 + (uint64_t)m || wc.byte_len != len ||
		    wc.qp_num != x.qp->qp_num ||
		    memcmp(T.dev[1].buf + XRC_RBUF + (size_t)m * XRC_SLOT,
			   T.dev[0].buf + off, len)) {
			fail("XRC recv %d: wr_id %" PRIu64 " byte_len %u qp 0x%x (target 0x%x), data %s",
			     m, wc.wr_id, wc.byte_len, wc.qp_num, x.qp->qp_num,
			     memcmp(T.dev[1].buf + XRC_RBUF + (size_t)m * XRC_SLOT,
				    T.dev[0].buf + off, len) ? "differs" : "ok");
			goto out;
		}
	}
	if (!no_cqe(x.cq[0], 50, "XRC SRQ 0 after the last message"))
		goto out;
	/* a target QP has no RQ of its own */
	struct ibv_sge r = sge_of(&T.dev[1], 0, 64);
	struct ibv_recv_wr rw = { .sg_list = &r, .num_sge = 1 }, *rbad;

	if (ibv_post_recv(x.qp, &rw, &rbad) != EINVAL) {
		fail("ibv_post_recv on an XRC_RECV QP: not EINVAL");
		goto out;
	}
	/* the same file again: the same domain (closing one keeps it) */
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = x.fd;
	xa.oflags = 0;
	again = ibv_open_xrcd(T.dev[1].v.ctx, &xa);
	if (!again) {
		fail("ibv_open_xrcd of the same file: %s", strerror(errno));
		goto out;
	}
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = x.qp->qp_num;
	oa.xrcd = again;
	oa.qp_type = IBV_QPT_XRC_RECV;
	opened = ibv_open_qp(T.dev[1].v.ctx, &oa);
	if (!opened) {
		fail("ibv_open_qp: %s", strerror(errno));
		goto out;
	}
	if (ibv_query_qp(opened, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_RTS ||
	    qi.qp_type != IBV_QPT_XRC_RECV) {
		fail("ibv_query_qp through the opened handle: state %d", qa.qp_state);
		goto out;
	}
	if (ibv_destroy_qp(x.qp) != EBUSY || ibv_close_xrcd(again) ||
	    ibv_close_xrcd(x.xrcd) != EBUSY) {
		fail("destroy/close while in use: want EBUSY (QP opened, SRQs in the domain)");
		again = NULL;
		goto out;
	}
	again = NULL;
	if (ibv_destroy_qp(opened)) {
		fail("ibv_destroy_qp of the opened handle");
		goto out;
	}
	opened = NULL;
	ok = true;
out:
	if (opened)
		ibv_destroy_qp(opened);
	if (again)
		ibv_close_xrcd(again);
	xrc_teardown(&x);
	return ok;
}

/* A SEND naming an XRC SRQ of another domain (anonymous, fd -1) on the
 * target's NIC: refused with a remote access NAK, the initiator's WQE
 * completes with IBV_WC_REM_ACCESS_ERR, the RECV posted there stays
 * untouched and nothing completes on that SRQ's CQ. */
static bool c_xrc_wrong_srq(void)
{
	struct ibv_xrcd_init_attr xa = { 0 };
	struct ibv_srq_init_attr_ex sa;
	struct ibv_xrcd *other = NULL;
	struct ibv_srq *osrq = NULL;
	struct ibv_cq *ocq = NULL;
	uint8_t *dst = T.dev[1].buf + XRC_RBUF;
	struct xrc_tgt x;
	struct ibv_wc wc;
	uint32_t osrqn;
	bool ok = false;

	if (!xrc_setup(&x, 1))
		goto out;
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	other = ibv_open_xrcd(T.dev[1].v.ctx, &xa);
	ocq = ibv_create_cq(T.dev[1].v.ctx, 16, NULL, NULL, 0);
	if (!other || !ocq) {
		fail("second domain / CQ: %s", strerror(errno));
		goto out;
	}
	memset(&sa, 0, sizeof sa);
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = other;
	sa.cq = ocq;
	sa.pd = T.dev[1].v.pd;
	osrq = ibv_create_srq_ex(T.dev[1].v.ctx, &sa);
	if (!osrq || ibv_get_srq_num(osrq, &osrqn)) {
		fail("XRC SRQ in the second domain: %s", strerror(errno));
		goto out;
	}
	memset(dst, 0x5c, 256);
	fill(T.dev[0].buf, 256, 3);
	if (!xrc_srq_post(osrq, 6000, XRC_RBUF) || !xrc_send(&x, 61, osrqn, 0, 256) ||
	    !poll_one(x.icq, &wc, "XRC send to another domain's SRQ"))
		goto out;
	if (wc.wr_id != 61 || wc.status != IBV_WC_REM_ACCESS_ERR) {
		fail("XRC send to another domain's SRQ: status %s, want REM_ACCESS_ERR",
		     ibv_wc_status_str(wc.status));
		goto out;
	}
	for (int i = 0; i < 256; i++)
		if (dst[i] != 0x5c) {
			fail("the other domain's RECV buffer was written (byte %d)", i);
			goto out;
		}
	if (!no_cqe(ocq, 100, "the other domain's SRQ CQ") ||
	    !no_cqe(x.cq[0], 10, "the target domain's SRQ CQ"))
		goto out;
	ok = true;
out:
	if (osrq)
		ibv_destroy_srq(osrq);
	if (ocq)
		ibv_destroy_cq(ocq);
	if (other)
		ibv_close_xrcd(other);
	xrc_teardown(&x);
	return ok;
}

/* ------------------------------------------------------------------ */
/* UD multicast.                                                        */

#define MC_QKEY 0x4d430001u

static union ibv_gid mc_gid(uint32_t ip)
{
	union ibv_gid g;

	memset(&g, 0, sizeof g);
	g.raw[10] = g.raw[11] = 0xff;
	ip = htonl(ip);
	memcpy(g.raw + 12, &ip, 4);
	return g;
}

/* Attach errors as rdma-core over the kernel gives them: EINVAL for a
 * QP that is not UD and for a GID that is not (IPv4) multicast. */
static bool mc_errors(struct vt_ep *ud)
{
	struct vt_ep rc;
	union ibv_gid g = mc_gid(0xef010203u), uni = mc_gid(0xc0a80001u), v6;
	int r1, r2, r3, r4;

	memset(&rc, 0, sizeof rc);
	if (!ep_create(&rc, &T.dev[0], &CFG))
		return false;
	memset(&v6, 0, sizeof v6);
	v6.raw[0] = 0xff;
	v6.raw[1] = 0x0e;
	v6.raw[15] = 1;
	r1 = ibv_attach_mcast(rc.qp, &g, 0);
	r2 = ibv_attach_mcast(ud->qp, &uni, 0);
	r3 = ibv_attach_mcast(ud->qp, &v6, 0);
	r4 = ibv_detach_mcast(ud->qp, &g, 0); /* not attached */
	vt_ep_destroy(&rc);
	CHECK(r1 == EINVAL, "attach of an RC QP: %s, want EINVAL", strerror(r1));
	CHECK(r2 == EINVAL, "attach to a unicast GID: %s, want EINVAL", strerror(r2));
	CHECK(r3 == EINVAL, "attach to an IPv6 GID: %s, want EINVAL", strerror(r3));
	CHECK(r4 == EINVAL, "detach of a QP not attached: %s, want EINVAL", strerror(r4));
	return true;
}

/* One datagram from e[0] to the group; each of the n members m[i]
 * (buffer offset off[i] of its device) receives it, data checked. */
static bool mc_round(struct vt_ep *snd, struct ibv_ah *ah, struct vt_ep **m,
		     const size_t *off, int n, uint32_t seed)
{
	struct ibv_sge s = sge_of(&T.dev[0], 0, 777);
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	fill(T.dev[0].buf, 777, seed);
	for (int i = 0; i < n; i++) {
		struct ibv_sge r = sge_of(m[i]->d, off[i], 40 + 1024);

		memset(m[i]->d->buf + off[i], 0xee, 40 + 1024);
		if (!post_recv(m[i]->qp, seed, &r, 1))
			return false;
	}
	memset(&wr, 0, sizeof wr);
	wr.wr_id = seed;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff; /* multicast (IBTA 9.6.1.4.1) */
	wr.wr.ud.remote_qkey = MC_QKEY;
	if (!post(snd->qp, &wr, "mcast send") || !poll_one(snd->scq, &wc, "mcast send") ||
	    !wc_ok(&wc, IBV_WC_SEND, "mcast send"))
		return false;
	for (int i = 0; i < n; i++) {
		const uint8_t *rb = m[i]->d->buf + off[i];

		if (!poll_one(m[i]->rcq, &wc, "mcast recv") || !wc_ok(&wc, IBV_WC_RECV, "mcast recv"))
			return false;
		CHECK(wc.byte_len == 40 + 777 && wc.src_qp == snd->qp->qp_num && wc.wr_id == seed,
		      "member %d: byte_len %u src_qp 0x%x wr_id %" PRIu64, i, wc.byte_len,
		      wc.src_qp, wc.wr_id);
		CHECK(memcmp(rb + 36, "\xef\x01\x02\x03", 4) == 0, "member %d: IPv4 dst not the group", i);
		CHECK(memcmp(rb + 40, T.dev[0].buf, 777) == 0 && rb[40 + 777] == 0xee,
		      "member %d: payload differs", i);
	}
	return true;
}

/* A datagram to 239.1.2.3 reaches the member on snic0 (loopback) and the
 * two on snic1; after a detach, that QP hears nothing more. */
static bool c_mcast(void)
{
	struct vt_ep e[4];
	struct vt_ep *m[3] = { &e[1], &e[2], &e[3] };
	static const size_t off[3] = { 8192, 8192, 16384 };
	union ibv_gid g = mc_gid(0xef010203u);
	struct ibv_ah_attr aa;
	struct ibv_ah *ah = NULL;
	bool ok = false;
	int rc = 0;

	memset(e, 0, sizeof e);
	CHECK(T.dev[0].v.attr.max_mcast_grp > 0 && T.dev[0].v.attr.max_mcast_qp_attach >= 3 &&
	      T.dev[0].v.attr.max_total_mcast_qp_attach >= T.dev[0].v.attr.max_mcast_qp_attach,
	      "multicast limits %d/%d/%d", T.dev[0].v.attr.max_mcast_grp,
	      T.dev[0].v.attr.max_mcast_qp_attach, T.dev[0].v.attr.max_total_mcast_qp_attach);
	if (!ud_up(&e[0], &T.dev[0], MC_QKEY) || !ud_up(&e[1], &T.dev[0], MC_QKEY) ||
	    !ud_up(&e[2], &T.dev[1], MC_QKEY) || !ud_up(&e[3], &T.dev[1], MC_QKEY) ||
	    !mc_errors(&e[1]))
		goto out;
	for (int i = 1; i < 4 && !rc; i++)
		rc = ibv_attach_mcast(e[i].qp, &g, 0);
	if (rc) {
		fail("ibv_attach_mcast: %s", strerror(rc));
		goto out;
	}
	memset(&aa, 0, sizeof aa);
	aa.is_global = 1;
	aa.grh.dgid = g;
	aa.grh.sgid_index = 0;  /* IPv4 groups only: the IPv4 GID, whatever --gid-index */
	aa.grh.hop_limit = 1;
	aa.port_num = PORT;
	ah = ibv_create_ah(T.dev[0].v.pd, &aa);
	if (!ah) {
		fail("ibv_create_ah(group): %s", strerror(errno));
		goto out;
	}
	if (!mc_round(&e[0], ah, m, off, 3, 41) || !no_cqe(e[0].rcq, 50, "the sender"))
		goto out;
	rc = ibv_detach_mcast(e[3].qp, &g, 0);
	if (rc) {
		fail("ibv_detach_mcast: %s", strerror(rc));
		goto out;
	}
	{
		struct ibv_sge r = sge_of(&T.dev[1], 65536, 1024);

		if (!post_recv(e[3].qp, 99, &r, 1) || !mc_round(&e[0], ah, m, off, 2, 42) ||
		    !no_cqe(e[3].rcq, 200, "a detached QP"))
			goto out;
	}
	ok = true;
out:
	if (ah)
		ibv_destroy_ah(ah);
	for (int i = 0; i < 4; i++)
		vt_ep_destroy(&e[i]);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Raw packet QPs and flow steering.                                    */

static const uint8_t RAW_DMAC[6] = { 0x02, 0x5a, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t RAW_SMAC[6] = { 0x02, 0x5a, 0x00, 0x00, 0x00, 0x01 };
#define RAW_SIP 0x0a630001u     /* 10.99.0.1 */
#define RAW_DIP 0x0a630002u     /* 10.99.0.2 */
#define RAW_PORT 5555

/* An Ethernet/IPv4/UDP frame to RAW_DMAC, RAW_DIP:dport with `plen`
 * bytes of payload (seed); its length. */
static uint32_t raw_frame(uint8_t *f, uint16_t dport, uint32_t plen, uint32_t seed)
{
	uint32_t sip = htonl(RAW_SIP), dip = htonl(RAW_DIP);
	uint16_t v;
	uint8_t *ip = f + 14, *udp = ip + 20;

	memcpy(f, RAW_DMAC, 6);
	memcpy(f + 6, RAW_SMAC, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	v = htons((uint16_t)(20 + 8 + plen));
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &sip, 4);
	memcpy(ip + 16, &dip, 4);
	v = htons(ip_csum(ip));
	memcpy(ip + 10, &v, 2);
	v = htons(4321);
	memcpy(udp, &v, 2);
	v = htons(dport);
	memcpy(udp + 2, &v, 2);
	v = htons((uint16_t)(8 + plen));
	memcpy(udp + 4, &v, 2);
	udp[6] = udp[7] = 0; /* no UDP checksum (IPv4 allows it) */
	fill(udp + 8, plen, seed);
	return 14 + 20 + 8 + plen;
}

static int raw_up(struct vt_ep *e, struct dev *d)
{
	struct qp_cfg c = CFG;
	struct ibv_qp_attr a;
	int rc;

	c.type = IBV_QPT_RAW_PACKET;
	if (!ep_create(e, d, &c))
		return -1;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = PORT;
	rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PORT);
	a.qp_state = IBV_QPS_RTR;
	rc = rc ? rc : ibv_modify_qp(e->qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	rc = rc ? rc : ibv_modify_qp(e->qp, &a, IBV_QP_STATE);
	if (rc)
		fail("raw QP to RTS: %s", strerror(rc));
	return rc;
}

/* A flow on e: ETH (dst MAC, EtherType IPv4), IPV4 (dst), UDP (dst
 * port); all_ipv4: ETH with EtherType IPv4 alone, every IPv4 frame. */
static struct ibv_flow *raw_flow(struct vt_ep *e, uint16_t dport, bool all_ipv4)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4 ip;
		struct ibv_flow_spec_tcp_udp udp;
	} fa;

	memset(&fa, 0, sizeof fa);
	fa.attr.type = IBV_FLOW_ATTR_NORMAL;
	fa.attr.size = sizeof fa;
	fa.attr.num_of_specs = 3;
	fa.attr.port = PORT;
	fa.eth.type = IBV_FLOW_SPEC_ETH;
	fa.eth.size = sizeof fa.eth;
	memcpy(fa.eth.val.dst_mac, RAW_DMAC, 6);
	memset(fa.eth.mask.dst_mac, 0xff, 6);
	fa.eth.val.ether_type = htons(0x0800);
	fa.eth.mask.ether_type = 0xffff;
	fa.ip.type = IBV_FLOW_SPEC_IPV4;
	fa.ip.size = sizeof fa.ip;
	fa.ip.val.dst_ip = htonl(RAW_DIP);
	fa.ip.mask.dst_ip = 0xffffffffu;
	fa.udp.type = IBV_FLOW_SPEC_UDP;
	fa.udp.size = sizeof fa.udp;
	fa.udp.val.dst_port = htons(dport);
	fa.udp.mask.dst_port = 0xffff;
	if (all_ipv4) {
		fa.attr.size = sizeof fa.attr + sizeof fa.eth;
		fa.attr.num_of_specs = 1;
		memset(&fa.eth.val.dst_mac, 0, 6);
		memset(&fa.eth.mask.dst_mac, 0, 6);
	}
	return ibv_create_flow(e->qp, &fa.attr);
}

/* Raw QPs need CAP_NET_RAW in the effective set: without it EPERM. */
static bool raw_eperm(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3], saved[_LINUX_CAPABILITY_U32S_3];
	struct vt_ep e;
	int err;

	CHECK(syscall(SYS_capget, &h, d) == 0, "capget: %s", strerror(errno));
	memcpy(saved, d, sizeof d);
	d[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
	CHECK(syscall(SYS_capset, &h, d) == 0, "capset: %s", strerror(errno));
	memset(&e, 0, sizeof e);
	e.d = &T.dev[0];
	e.scq = ibv_create_cq(T.dev[0].v.ctx, 16, NULL, NULL, 0);
	CHECK(e.scq, "ibv_create_cq: %s", strerror(errno));
	{
		struct ibv_qp_init_attr ia = { .send_cq = e.scq, .recv_cq = e.scq,
					       .cap = { 4, 4, 1, 1, 0 },
					       .qp_type = IBV_QPT_RAW_PACKET };

		errno = 0;
		e.qp = ibv_create_qp(T.dev[0].v.pd, &ia);
		err = errno;
	}
	h.version = _LINUX_CAPABILITY_VERSION_3;
	syscall(SYS_capset, &h, saved);
	vt_ep_destroy(&e);
	CHECK(err == EPERM, "raw QP without CAP_NET_RAW: %s, want EPERM",
	      err ? strerror(err) : "created");
	return true;
}

/* Post one frame from s; true when it completed successfully. */
static bool raw_send(struct vt_ep *s, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = sge_of(s->d, 0, len);
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	return post(s->qp, &wr, "raw send") && poll_one(s->scq, &wc, "raw send") &&
	       wc_ok(&wc, IBV_WC_SEND, "raw send");
}

/* RC traffic between snic0 and snic1 while flows are installed: a SEND
 * arrives whole (RoCE v2 frames are not steered to raw QPs). */
static bool raw_roce_ok(void)
{
	struct vt_ep e[2];
	struct ibv_sge s = sge_of(&T.dev[0], 1 << 20, 3000), r = sge_of(&T.dev[1], 1 << 20, 4096);
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	bool ok;

	memset(e, 0, sizeof e);
	fill(T.dev[0].buf + (1 << 20), 3000, 55);
	ok = pair_up(e, &CFG, 0) && post_recv(e[1].qp, 8, &r, 1) && post(e[0].qp, &wr, "rc send") &&
	     poll_one(e[0].scq, &wc, "rc send") && wc_ok(&wc, IBV_WC_SEND, "rc send") &&
	     poll_one(e[1].rcq, &wc, "rc recv") && wc_ok(&wc, IBV_WC_RECV, "rc recv");
	if (ok && (wc.byte_len != 3000 ||
		   memcmp(T.dev[1].buf + (1 << 20), T.dev[0].buf + (1 << 20), 3000)))
		ok = fail("rc send with flows installed: byte_len %u or data differs", wc.byte_len);
	pair_down(e);
	return ok;
}

/* A raw QP on snic0 sends an Ethernet/IPv4/UDP frame; the raw QP on
 * snic1 with a flow on that port receives it byte for byte; a frame to
 * another port is not delivered to it; RC still works; EPERM without
 * CAP_NET_RAW. */
static bool c_raw(void)
{
	struct vt_ep e[2];
	struct ibv_flow *fl = NULL, *fl2 = NULL;
	struct ibv_sge r = sge_of(&T.dev[1], 0, 2048);
	struct ibv_wc wc;
	uint32_t len;
	bool ok = false;

	memset(e, 0, sizeof e);
	if (!raw_eperm() || raw_up(&e[0], &T.dev[0]) || raw_up(&e[1], &T.dev[1]))
		goto out;
	fl = raw_flow(&e[1], RAW_PORT, false);
	/* every IPv4 frame (same priority, younger: fl wins its frames):
	 * RoCE v2 frames (UDP 4791, not named by it) still go to RoCE */
	fl2 = raw_flow(&e[1], 0, true);
	if (!fl || !fl2) {
		fail("ibv_create_flow: %s", strerror(errno));
		goto out;
	}
	memset(T.dev[1].buf, 0xee, 4096);
	len = raw_frame(T.dev[0].buf, RAW_PORT, 333, 17);
	if (!post_recv(e[1].qp, 1, &r, 1) || !raw_send(&e[0], len, 1) ||
	    !poll_one(e[1].rcq, &wc, "raw recv") || !wc_ok(&wc, IBV_WC_RECV, "raw recv"))
		goto out;
	if (wc.byte_len != len || memcmp(T.dev[1].buf, T.dev[0].buf, len) ||
	    T.dev[1].buf[len] != 0xee) {
		fail("raw recv: byte_len %u (want %u) or the frame differs", wc.byte_len, len);
		goto out;
	}
	/* RoCE with an all-IPv4 flow installed */
	if (!raw_roce_ok())
		goto out;
	if (ibv_destroy_flow(fl2)) {
		fail("ibv_destroy_flow: %s", strerror(errno));
		goto out;
	}
	fl2 = NULL;
	/* another UDP port: no flow, not delivered */
	len = raw_frame(T.dev[0].buf, RAW_PORT + 1, 100, 18);
	if (!post_recv(e[1].qp, 2, &r, 1) || !raw_send(&e[0], len, 2) ||
	    !no_cqe(e[1].rcq, 200, "a frame no flow matches"))
		goto out;
	/* after ibv_destroy_flow the port is no longer steered */
	if (ibv_destroy_flow(fl)) {
		fail("ibv_destroy_flow: %s", strerror(errno));
		goto out;
	}
	fl = NULL;
	len = raw_frame(T.dev[0].buf, RAW_PORT, 100, 19);
	if (!raw_send(&e[0], len, 3) || !no_cqe(e[1].rcq, 200, "a frame after its flow went"))
		goto out;
	ok = true;
out:
	if (fl)
		ibv_destroy_flow(fl);
	if (fl2)
		ibv_destroy_flow(fl2);
	vt_ep_destroy(&e[0]);
	vt_ep_destroy(&e[1]);
	return ok;
}

/* ------------------------------------------------------------------ */

struct tcase {
	const char *name;
	bool (*fn)(void);
};

static const struct tcase cases[] = {
	{ "atomic", c_atomic },
	{ "atomic_concurrent", c_atomic_concurrent },
	{ "atomic_write", c_atomic_write },
	{ "imm", c_imm },
	{ "inline", c_inline },
	{ "sge16", c_sge16 },
	{ "zero_length", c_zero_length },
	{ "fence", c_fence },
	{ "unsignaled", c_unsignaled },
	{ "solicited", c_solicited },
	{ "err_atomic_unaligned", c_err_atomic_unaligned },
	{ "err_atomic_mr_access", c_err_atomic_mr_access },
	{ "err_atomic_qp_access", c_err_atomic_qp_access },
	{ "err_full_queue", c_err_full_queue },
	{ "err_limits", c_err_limits },
	{ "create_qp_caps", c_create_qp_caps },
	{ "loopback", c_loopback },
	{ "ud", c_ud },
	{ "ud_events", c_ud_events },
	{ "ah_from_wc", c_ah_from_wc },
	{ "srq", c_srq },
	{ "uc", c_uc },
	{ "limits", c_limits },
	{ "ext_api", c_ext_api },
	{ "sysv", c_sysv },
	{ "regcache", c_regcache },
	{ "prefault", c_prefault },
	{ "query_ex", c_query_ex },
	{ "rereg_mr", c_rereg_mr },
	{ "resize_cq", c_resize_cq },
	{ "cq_overrun", c_cq_overrun },
	{ "dm", c_dm },
	{ "mcast", c_mcast },
	{ "raw", c_raw },
	{ "mw_type1", c_mw_type1 },
	{ "mw_type2b", c_mw_type2b },
	{ "mw_ext_api", c_mw_ext_api },
	{ "xrc", c_xrc },
	{ "xrc_wrong_srq", c_xrc_wrong_srq },
};
#define NCASES (sizeof cases / sizeof cases[0])

static bool selected(const char *only, const char *name)
{
	size_t n = strlen(name);

	if (!only)
		return true;
	for (const char *p = only; *p;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);

		if (l == n && strncmp(p, name, n) == 0)
			return true;
		p += l + (c ? 1 : 0);
	}
	return false;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snic_verbs_ext [--dev0 D] [--dev1 D] [--only LIST] [--list] "
		"[--gid-index N] [--timeout-ms MS] [-v]\n");
}

int main(int argc, char **argv)
{
	struct vt_args args;
	const char *only;
	int rc = vt_args(&T.v, argc, argv, &args, usage);

	if (rc >= 0)
		return rc;
	if (args.list) {
		for (size_t i = 0; i < NCASES; i++)
			puts(cases[i].name);
		return 0;
	}
	only = args.only;
	if (!dev_open(&T.dev[0], args.dev0) || !dev_open(&T.dev[1], args.dev1)) {
		printf("FAIL setup: %s\n", T.v.why);
		dev_close(&T.dev[0]);
		dev_close(&T.dev[1]);
		return 1;
	}
	for (size_t i = 0; i < NCASES; i++) {
		bool ok;

		if (!selected(only, cases[i].name))
			continue;
		T.v.why[0] = '\0';
		ok = cases[i].fn();
		vt_report(&T.v, ok, cases[i].name);
	}
	dev_close(&T.dev[0]);
	dev_close(&T.dev[1]);
	printf("ext: %u passed, %u failed\n", T.v.passed, T.v.failed);
	if (T.v.passed + T.v.failed == 0) {
		fprintf(stderr, "no case matched --only %s\n", only ? only : "");
		return 2;
	}
	return T.v.failed ? 1 : 0;
}
