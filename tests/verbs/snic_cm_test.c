/* SPDX-License-Identifier: MIT */
/*
 * snic_cm_test: the classic rdma_cm client/server, built against Debian's
 * librdmacm and libibverbs headers (nothing snic-specific), run against
 * build/lib with LD_LIBRARY_PATH.
 *
 *   server ADDR PORT [--hang]   accept one client; read its buffer's
 *                               address and rkey from a SEND, RDMA WRITE a
 *                               pattern into it, RDMA READ it back, verify
 *                               byte for byte, SEND "done", wait for the
 *                               client's disconnect.  --hang: stop after the
 *                               WRITE and wait to be killed.
 *   client ADDR PORT [--expect-death]
 *                               connect, SEND address+rkey, wait for
 *                               "done", verify the buffer byte for byte,
 *                               disconnect.  --expect-death: the server
 *                               dies mid-transfer; pass when an error event
 *                               (DISCONNECTED, or an error completion)
 *                               arrives within the time limit.
 *   last-server ADDR PORT       accept one client with LAST_SENDS receives
 *   last-client ADDR PORT       posted; the client SENDs that many messages,
 *                               waits for their (acknowledged) completions
 *                               and disconnects at once.  The server polls
 *                               its CQ only after DISCONNECTED: every
 *                               message's receive completion must be there,
 *                               in order (what ofi_rxm, which destroys the
 *                               QP when it reads the disconnect, relies on;
 *                               README "libfabric (verbs provider)").
 *   reject ADDR PORT            connect where nobody listens: REJECTED.
 *   abandon ADDR PORT           a listener destroyed with a connection
 *                               request it never read: the destroy returns
 *                               and the client is REJECTED.
 *   timeout ADDR PORT           connect to a listener that never answers
 *                               (the test stops it): UNREACHABLE after the
 *                               CM's retries, within 30 s.
 *   unreachable ADDR MS         rdma_resolve_addr: ADDR_ERROR within MS+1 s.
 *   errors ADDR                 invalid calls get rdma-core's errno.
 *   errors6 ADDR4 ADDR6         the same for IPv6 and AF_IB addresses (a
 *                               NIC's IPv4 and IPv6 address): the errnos
 *                               the kernel's rdma_cm gives on a RoCE host.
 *
 * Every wait has a deadline (--timeout-ms, 10 s).  Prints "ok ..." lines
 * and exits 0, or prints "FAIL: ..." and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#define BUF_SIZE (1u << 20)

static int timeout_ms = 10000;

struct msg {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	uint32_t seed;
	char text[12];
};

struct conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf, *back;
	struct ibv_mr *mr, *back_mr, *msg_mr;
	struct msg *msg;    /* [0] receive, [1] send */
};

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); exit(1); } while (0)

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sin_of(struct sockaddr_in *s, const char *ip, int port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &s->sin_addr) != 1)
		FAIL("bad address %s", ip);
}

/* The next CM event within the deadline (the channel fd is polled). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) != 1)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		FAIL("rdma_get_cm_event: %s", strerror(errno));
	return ev;
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch, timeout_ms);

	if (!ev)
		FAIL("no %s within %d ms", rdma_event_str(want), timeout_ms);
	if (ev->event != want)
		FAIL("got %s (status %d), want %s", rdma_event_str(ev->event),
		     ev->status, rdma_event_str(want));
	return ev;
}

static void pattern(uint8_t *b, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static void check_pattern(const uint8_t *b, uint32_t len, uint32_t seed, const char *who)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != (uint8_t)(seed * 31 + i * 7 + (i >> 8)))
			FAIL("%s: byte %u is 0x%02x, want 0x%02x", who, i, b[i],
			     (uint8_t)(seed * 31 + i * 7 + (i >> 8)));
}

/* Resources on the connected (or requesting) id: PD, one CQ, the QP. */
static void setup(struct conn *c, int remote_access)
{
	struct ibv_qp_init_attr qa = { 0 };
	int acc = IBV_ACCESS_LOCAL_WRITE |
		  (remote_access ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0);

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = c->pd ? ibv_create_cq(c->id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!c->cq)
		FAIL("pd/cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		FAIL("rdma_create_qp: %s", strerror(errno));
	c->buf = aligned_alloc(4096, BUF_SIZE);
	c->back = aligned_alloc(4096, BUF_SIZE);
	c->msg = aligned_alloc(4096, 4096);
	if (!c->buf || !c->back || !c->msg)
		FAIL("out of memory");
	memset(c->buf, 0, BUF_SIZE);
	memset(c->back, 0, BUF_SIZE);
	memset(c->msg, 0, 4096);
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF_SIZE, acc);
	c->back_mr = ibv_reg_mr(c->pd, c->back, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	c->msg_mr = ibv_reg_mr(c->pd, c->msg, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr || !c->back_mr || !c->msg_mr)
		FAIL("ibv_reg_mr: %s", strerror(errno));
}

static void post_recv(struct conn *c)
{
	struct ibv_sge s = { (uintptr_t)&c->msg[0], sizeof(struct msg), c->msg_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		FAIL("ibv_post_recv");
}

static void post(struct conn *c, enum ibv_wr_opcode op, void *local, uint32_t lkey,
		 uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)local, len, lkey };
	struct ibv_send_wr wr = { .wr_id = op, .sg_list = &s, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(c->id->qp, &wr, &bad))
		FAIL("ibv_post_send(%d)", op);
}

/* One completion within the deadline; 0 ok, -1 error completion (its
 * status in *st).  With ch set, a CM event ends the wait too (returns 1). */
static int wait_wc(struct conn *c, struct ibv_wc *wc, struct rdma_event_channel *ch)
{
	int64_t end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		int n = ibv_poll_cq(c->cq, 1, wc);

		if (n < 0)
			FAIL("ibv_poll_cq");
		if (n == 1)
			return wc->status == IBV_WC_SUCCESS ? 0 : -1;
		if (ch) {
			struct pollfd p = { .fd = ch->fd, .events = POLLIN };

			if (poll(&p, 1, 0) == 1)
				return 1;
		}
		usleep(100);
	}
	FAIL("no completion within %d ms", timeout_ms);
}

static void must_wc(struct conn *c, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;

	if (wait_wc(c, &wc, NULL) || wc.opcode != op)
		FAIL("%s: status %s opcode %d", what, ibv_wc_status_str(wc.status), wc.opcode);
}

static int run_server(const char *ip, int port, int hang)
{
	struct conn c = { 0 };
	struct rdma_cm_id *listen;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct sockaddr_in a;
	struct msg m;

	sin_of(&a, ip, port);
	c.ch = rdma_create_event_channel();
	if (!c.ch || rdma_create_id(c.ch, &listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen, (struct sockaddr *)&a) || rdma_listen(listen, 4))
		FAIL("listen on %s:%d: %s", ip, port, strerror(errno));
	printf("listening on %s:%d\n", ip, port);
	fflush(stdout);
	ev = next_event(c.ch, 60000);
	if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		FAIL("no CONNECT_REQUEST");
	c.id = ev->id;
	if (ev->param.conn.private_data_len < 5 ||
	    memcmp(ev->param.conn.private_data, "hello", 5))
		FAIL("CONNECT_REQUEST private data not \"hello\"");
	rdma_ack_cm_event(ev);
	setup(&c, 0);
	post_recv(&c);
	cp.private_data = "welcome";
	cp.private_data_len = 8;
	if (rdma_accept(c.id, &cp))
		FAIL("rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_ESTABLISHED));
	printf("ok server established\n");
	must_wc(&c, IBV_WC_RECV, "receive the client's buffer");
	m = c.msg[0];
	if (m.len == 0 || m.len > BUF_SIZE)
		FAIL("client buffer length %u", m.len);
	pattern(c.buf, m.len, m.seed);
	post(&c, IBV_WR_RDMA_WRITE, c.buf, c.mr->lkey, m.len, m.addr, m.rkey);
	must_wc(&c, IBV_WC_RDMA_WRITE, "RDMA WRITE");
	printf("ok server wrote %u bytes\n", m.len);
	fflush(stdout);
	if (hang)
		for (;;)
			pause();
	post(&c, IBV_WR_RDMA_READ, c.back, c.back_mr->lkey, m.len, m.addr, m.rkey);
	must_wc(&c, IBV_WC_RDMA_READ, "RDMA READ");
	check_pattern(c.back, m.len, m.seed, "server read-back");
	printf("ok server read back %u bytes, all equal\n", m.len);
	c.msg[1] = (struct msg){ .seed = m.seed, .len = m.len };
	memcpy(c.msg[1].text, "done", 5);
	post(&c, IBV_WR_SEND, &c.msg[1], c.msg_mr->lkey, sizeof(struct msg), 0, 0);
	must_wc(&c, IBV_WC_SEND, "SEND done");
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(c.id); /* already disconnected: nothing to send */
	printf("ok server disconnected\n");
	rdma_destroy_qp(c.id);
	rdma_destroy_id(c.id);
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(c.ch);
	return 0;
}

static void client_connect(struct conn *c, const char *ip, int port)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7,
				      .private_data = "hello", .private_data_len = 6 };
	struct rdma_cm_event *ev;
	struct sockaddr_in a;

	sin_of(&a, ip, port);
	c->ch = rdma_create_event_channel();
	if (!c->ch || rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP))
		FAIL("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&a, 2000))
		FAIL("rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(expect(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(c->id, 2000))
		FAIL("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(expect(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup(c, 1);
	post_recv(c);
	if (rdma_connect(c->id, &cp))
		FAIL("rdma_connect: %s", strerror(errno));
	ev = expect(c->ch, RDMA_CM_EVENT_ESTABLISHED);
	if (ev->param.conn.private_data_len < 8 ||
	    memcmp(ev->param.conn.private_data, "welcome", 8))
		FAIL("ESTABLISHED private data not \"welcome\"");
	rdma_ack_cm_event(ev);
	printf("ok client established (peer %s)\n",
	       inet_ntoa(((struct sockaddr_in *)rdma_get_peer_addr(c->id))->sin_addr));
}

static int run_client(const char *ip, int port, int expect_death)
{
	struct conn c = { 0 };
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	uint32_t seed = (uint32_t)getpid();
	int r;

	client_connect(&c, ip, port);
	c.msg[1] = (struct msg){ .addr = (uintptr_t)c.buf, .rkey = c.mr->rkey,
				 .len = BUF_SIZE, .seed = seed };
	post(&c, IBV_WR_SEND, &c.msg[1], c.msg_mr->lkey, sizeof(struct msg), 0, 0);
	must_wc(&c, IBV_WC_SEND, "SEND address and rkey");
	r = wait_wc(&c, &wc, expect_death ? c.ch : NULL);
	if (expect_death) {
		if (r == 0)
			FAIL("the server finished, it was to be killed");
		if (r == 1) {
			ev = next_event(c.ch, 0);
			if (!ev || ev->event != RDMA_CM_EVENT_DISCONNECTED)
				FAIL("unexpected CM event %s", ev ? rdma_event_str(ev->event) : "?");
			printf("ok client got %s after the server died\n", rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
		} else {
			printf("ok client got completion error %s after the server died\n",
			       ibv_wc_status_str(wc.status));
		}
		rdma_disconnect(c.id);
		rdma_destroy_qp(c.id);
		rdma_destroy_id(c.id);
		rdma_destroy_event_channel(c.ch);
		return 0;
	}
	if (r || wc.opcode != IBV_WC_RECV || memcmp(c.msg[0].text, "done", 5))
		FAIL("no \"done\" from the server (%s)", ibv_wc_status_str(wc.status));
	check_pattern(c.buf, BUF_SIZE, seed, "client buffer");
	printf("ok client buffer holds the server's %u bytes\n", BUF_SIZE);
	if (rdma_disconnect(c.id))
		FAIL("rdma_disconnect: %s", strerror(errno));
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_DISCONNECTED));
	printf("ok client disconnected\n");
	rdma_destroy_qp(c.id);
	rdma_destroy_id(c.id);
	rdma_destroy_event_channel(c.ch);
	return 0;
}

#define LAST_SENDS 4

static void post_recv_slot(struct conn *c, unsigned slot)
{
	struct ibv_sge s = { (uintptr_t)&c->msg[slot], sizeof(struct msg), c->msg_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &s, .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		FAIL("ibv_post_recv");
}

/* Receive LAST_SENDS messages into msg[2..], looked at only after the
 * client's disconnect has been read. */
static int run_last_server(const char *ip, int port)
{
	struct conn c = { 0 };
	struct rdma_cm_id *listen;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { .rnr_retry_count = 7, .private_data = "welcome",
				      .private_data_len = 8 };
	struct sockaddr_in a;
	struct ibv_wc wc;
	char want[12];

	sin_of(&a, ip, port);
	c.ch = rdma_create_event_channel();
	if (!c.ch || rdma_create_id(c.ch, &listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen, (struct sockaddr *)&a) || rdma_listen(listen, 4))
		FAIL("listen on %s:%d: %s", ip, port, strerror(errno));
	ev = next_event(c.ch, 60000);
	if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		FAIL("no CONNECT_REQUEST");
	c.id = ev->id;
	rdma_ack_cm_event(ev);
	setup(&c, 0);
	for (unsigned i = 0; i < LAST_SENDS; i++)
		post_recv_slot(&c, 2 + i);
	if (rdma_accept(c.id, &cp))
		FAIL("rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_ESTABLISHED));
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_DISCONNECTED));
	printf("ok server read DISCONNECTED before polling its CQ\n");
	for (unsigned i = 0; i < LAST_SENDS; i++) {
		int n = ibv_poll_cq(c.cq, 1, &wc);

		snprintf(want, sizeof(want), "last%u", i);
		if (n != 1)
			FAIL("after DISCONNECTED: receive %u of %u is not in the CQ (poll %d)",
			     i + 1, LAST_SENDS, n);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.wr_id != 2 + i || strcmp(c.msg[2 + i].text, want))
			FAIL("receive %u: status %s opcode %d wr_id %llu text \"%.11s\"", i,
			     ibv_wc_status_str(wc.status), wc.opcode,
			     (unsigned long long)wc.wr_id, c.msg[2 + i].text);
	}
	printf("ok server: all %u receive completions were in the CQ, in order\n",
	       LAST_SENDS);
	rdma_disconnect(c.id);
	rdma_destroy_qp(c.id);
	rdma_destroy_id(c.id);
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(c.ch);
	return 0;
}

static int run_last_client(const char *ip, int port)
{
	struct conn c = { 0 };

	client_connect(&c, ip, port);
	for (unsigned i = 0; i < LAST_SENDS; i++) {
		snprintf(c.msg[2 + i].text, sizeof(c.msg[2 + i].text), "last%u", i);
		post(&c, IBV_WR_SEND, &c.msg[2 + i], c.msg_mr->lkey, sizeof(struct msg), 0, 0);
	}
	for (unsigned i = 0; i < LAST_SENDS; i++)
		must_wc(&c, IBV_WC_SEND, "SEND");
	if (rdma_disconnect(c.id))
		FAIL("rdma_disconnect: %s", strerror(errno));
	printf("ok client: %u SENDs acknowledged, disconnected at once\n", LAST_SENDS);
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(c.id);
	rdma_destroy_id(c.id);
	rdma_destroy_event_channel(c.ch);
	return 0;
}

/* Connect with a fresh id; the first event after rdma_connect within ms. */
static struct rdma_cm_event *connect_once(struct rdma_event_channel *ch,
					  struct rdma_cm_id **id, const char *ip,
					  int port, int ms)
{
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct sockaddr_in a;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { 4, 4, 1, 1, 0 } };

	sin_of(&a, ip, port);
	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(*id, NULL, (struct sockaddr *)&a, 2000))
		FAIL("resolve: %s", strerror(errno));
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(*id, 2000))
		FAIL("rdma_resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (rdma_create_qp(*id, NULL, &qa))
		FAIL("rdma_create_qp: %s", strerror(errno));
	if (rdma_connect(*id, &cp))
		FAIL("rdma_connect: %s", strerror(errno));
	return next_event(ch, ms);
}

/* Connect and require the event `want` within ms. */
static int run_refused(const char *ip, int port, enum rdma_cm_event_type want, int ms)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int64_t t0 = now_ms();

	if (!ch)
		FAIL("rdma_create_event_channel");
	ev = connect_once(ch, &id, ip, port, ms);
	if (!ev || ev->event != want)
		FAIL("want %s within %d ms, got %s", rdma_event_str(want), ms,
		     ev ? rdma_event_str(ev->event) : "nothing");
	printf("ok %s (status %d) after %lld ms\n", rdma_event_str(want), ev->status,
	       (long long)(now_ms() - t0));
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

static int run_abandon(const char *ip, int port)
{
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *listen, *id;
	struct rdma_cm_event *ev;
	struct sockaddr_in a;
	struct pollfd p;
	int64_t t0;

	sin_of(&a, ip, port);
	if (!lch || !ch || rdma_create_id(lch, &listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen, (struct sockaddr *)&a) || rdma_listen(listen, 4))
		FAIL("listen on %s:%d: %s", ip, port, strerror(errno));
	ev = connect_once(ch, &id, ip, port, 0);
	if (ev)
		FAIL("unexpected %s before the listener went", rdma_event_str(ev->event));
	p = (struct pollfd){ .fd = lch->fd, .events = POLLIN };
	if (poll(&p, 1, timeout_ms) != 1)
		FAIL("no connection request queued for the listener");
	t0 = now_ms();
	if (rdma_destroy_id(listen))
		FAIL("rdma_destroy_id(listener): %s", strerror(errno));
	printf("ok listener destroyed in %lld ms with an unread request\n",
	       (long long)(now_ms() - t0));
	ev = next_event(ch, 2000);
	if (!ev || ev->event != RDMA_CM_EVENT_REJECTED)
		FAIL("want REJECTED, got %s", ev ? rdma_event_str(ev->event) : "nothing");
	printf("ok client REJECTED (reason %d)\n", ev->status);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	rdma_destroy_event_channel(lch);
	return 0;
}

static int run_unreachable(const char *ip, int ms)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in a;
	int64_t t0 = now_ms(), dt;

	sin_of(&a, ip, 7000);
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, ms))
		FAIL("rdma_resolve_addr: %s", strerror(errno));
	ev = next_event(ch, ms + 1000);
	dt = now_ms() - t0;
	if (!ev || ev->event != RDMA_CM_EVENT_ADDR_ERROR)
		FAIL("want ADDR_ERROR within %d ms, got %s", ms + 1000,
		     ev ? rdma_event_str(ev->event) : "nothing");
	if (dt < ms / 2)
		FAIL("ADDR_ERROR after %lld ms: sooner than the %d ms asked", (long long)dt, ms);
	printf("ok ADDR_ERROR (status %d) after %lld ms (timeout %d ms)\n", ev->status,
	       (long long)dt, ms);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

#define ERRNO_IS(call, want) do {                                             \
	errno = 0;                                                          \
	if ((call) == 0 || errno != (want))                                 \
		FAIL("%s: errno %d (%s), want %s", #call, errno,            \
		     strerror(errno), #want);                               \
	printf("ok %s -> %s\n", #call, #want);                              \
} while (0)

static int run_errors(const char *ip)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id, *id2;
	struct rdma_cm_event *ev;
	struct sockaddr_in a, far, mine;
	struct rdma_conn_param cp = { 0 };

	if (!ch)
		FAIL("rdma_create_event_channel");
	sin_of(&far, "203.0.113.7", 7001);  /* TEST-NET-3: no NIC has it */
	sin_of(&mine, ip, 7002);
	ERRNO_IS(rdma_create_id(ch, &id, NULL, (enum rdma_port_space)0x7777), EINVAL);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_create_id(ch, &id2, NULL, RDMA_PS_TCP))
		FAIL("rdma_create_id");
	ERRNO_IS(rdma_resolve_route(id, 1000), EINVAL);
	ERRNO_IS(rdma_connect(id, &cp), EINVAL);
	ERRNO_IS(rdma_accept(id, &cp), EINVAL);
	ERRNO_IS(rdma_bind_addr(id, (struct sockaddr *)&far), EADDRNOTAVAIL);
	if (rdma_bind_addr(id, (struct sockaddr *)&mine) || rdma_listen(id, 1))
		FAIL("bind/listen %s:7002: %s", ip, strerror(errno));
	ERRNO_IS(rdma_bind_addr(id2, (struct sockaddr *)&mine), EADDRINUSE);
	sin_of(&a, ip, 7003);
	ERRNO_IS(rdma_join_multicast(id2, (struct sockaddr *)&a, NULL), ENOSYS);
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
		FAIL("fcntl");
	ERRNO_IS(rdma_get_cm_event(ch, &ev), EAGAIN);
	rdma_destroy_id(id2);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

static void sin6_of(struct sockaddr_in6 *s, const char *ip, int port)
{
	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons((uint16_t)port);
	if (inet_pton(AF_INET6, ip, &s->sin6_addr) != 1)
		FAIL("bad address %s", ip);
}

/* IPv6 and AF_IB: an IPv6 address no NIC has (EADDRNOTAVAIL), AF_IB
 * addresses (no IB port on a RoCE host: ENODEV, the kernel's
 * cma_validate_port / cma_resolve_ib_dev), and an id's family other than
 * its destination's (EINVAL, the kernel's resolve_prepare_src). */
static int run_errors6(const char *ip4, const char *ip6)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct sockaddr_in6 nobody, mine6;
	struct sockaddr_in mine4;
	struct sockaddr_ib ib;

	if (!ch)
		FAIL("rdma_create_event_channel");
	sin6_of(&nobody, "2001:db8::7", 7001);  /* documentation: no NIC has it */
	sin6_of(&mine6, ip6, 7004);
	sin_of(&mine4, ip4, 7005);
	memset(&ib, 0, sizeof(ib));
	ib.sib_family = AF_IB;
	ib.sib_addr.sib_raw[15] = 1;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		FAIL("rdma_create_id");
	ERRNO_IS(rdma_bind_addr(id, (struct sockaddr *)&nobody), EADDRNOTAVAIL);
	ERRNO_IS(rdma_bind_addr(id, (struct sockaddr *)&ib), ENODEV);
	ERRNO_IS(rdma_resolve_addr(id, NULL, (struct sockaddr *)&ib, 1000), ENODEV);
	/* an IPv4 source for an IPv6 destination, and the other way */
	ERRNO_IS(rdma_resolve_addr(id, (struct sockaddr *)&mine4,
				   (struct sockaddr *)&mine6, 1000), EINVAL);
	ERRNO_IS(rdma_resolve_addr(id, (struct sockaddr *)&mine6,
				   (struct sockaddr *)&mine4, 1000), EINVAL);
	/* bound to the NIC's IPv6 address: an IPv4 or AF_IB destination */
	if (rdma_bind_addr(id, (struct sockaddr *)&mine6))
		FAIL("bind %s: %s", ip6, strerror(errno));
	printf("ok rdma_bind_addr(%s)\n", ip6);
	ERRNO_IS(rdma_resolve_addr(id, NULL, (struct sockaddr *)&mine4, 1000), EINVAL);
	ERRNO_IS(rdma_resolve_addr(id, NULL, (struct sockaddr *)&ib, 1000), EINVAL);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "--timeout-ms")) {
		timeout_ms = atoi(argv[2]);
		i = 3;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc - i >= 3 && !strcmp(argv[i], "server"))
		return run_server(argv[i + 1], atoi(argv[i + 2]),
				  argc - i > 3 && !strcmp(argv[i + 3], "--hang"));
	if (argc - i >= 3 && !strcmp(argv[i], "client"))
		return run_client(argv[i + 1], atoi(argv[i + 2]),
				  argc - i > 3 && !strcmp(argv[i + 3], "--expect-death"));
	if (argc - i >= 3 && !strcmp(argv[i], "last-server"))
		return run_last_server(argv[i + 1], atoi(argv[i + 2]));
	if (argc - i >= 3 && !strcmp(argv[i], "last-client"))
		return run_last_client(argv[i + 1], atoi(argv[i + 2]));
	if (argc - i >= 3 && !strcmp(argv[i], "reject"))
		return run_refused(argv[i + 1], atoi(argv[i + 2]), RDMA_CM_EVENT_REJECTED, 2000);
	if (argc - i >= 3 && !strcmp(argv[i], "abandon"))
		return run_abandon(argv[i + 1], atoi(argv[i + 2]));
	if (argc - i >= 3 && !strcmp(argv[i], "timeout"))
		return run_refused(argv[i + 1], atoi(argv[i + 2]), RDMA_CM_EVENT_UNREACHABLE, 30000);
	if (argc - i >= 3 && !strcmp(argv[i], "unreachable"))
		return run_unreachable(argv[i + 1], atoi(argv[i + 2]));
	if (argc - i >= 2 && !strcmp(argv[i], "errors"))
		return run_errors(argv[i + 1]);
	if (argc - i >= 3 && !strcmp(argv[i], "errors6"))
		return run_errors6(argv[i + 1], argv[i + 2]);
	fprintf(stderr, "usage: snic_cm_test [--timeout-ms MS] server|client|reject|abandon|timeout|unreachable|errors|errors6 ...\n");
	return 2;
}
