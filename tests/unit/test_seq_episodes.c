/* SPDX-License-Identifier: MIT */
/*
 * Sequence errors under reordering and duplication only (suite
 * "seq_episodes", issue 15): nothing is lost, so every go-back-N pass
 * beyond the first one per reordering is waste.  A link hook reorders or
 * duplicates chosen frames deterministically (a frame is held back, or
 * its copy delivered, after the link has carried `by` more frames, as
 * the interop suite's ifb duplicates and netem's delays do), so each run
 * sends the same number of frames.
 *
 * - reorder: one WRITE packet in every 100 arrives 3 frames late.  The
 *   responder NAKs the gap once (IBTA 9.7.5.2.2) and does not NAK again
 *   while the go-back pass it asked for is on its way (before: the late
 *   packet filled the gap, the next packet opened "another" one and was
 *   NAKed too, and the requester, already resending, went back again:
 *   20 NAKs and 20 go-backs for 10 late packets, now 10 and 10).  Frames
 *   sent: 1073 before, 1088 now - here the second NAK came back right
 *   behind the first and only moved the pass on past the late packet;
 *   the later it comes (rdma_rxe under TCG, netem's 2 ms), the more of
 *   the pass it repeats.
 * - duplicated NAK: one WRITE packet in every 200 is lost and every
 *   sequence NAK arrives twice, the copy 8 frames later.  The copy is
 *   the same NAK again and must not send the requester back a second
 *   time (before: it restarted the pass from the NAK's PSN: 10 go-backs
 *   and 1104 frames for 5 losses, now 5 and 1080).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake_host.h"
#include "transport/transport.h"
#include "unit.h"

#define EP_NMSG   16
#define EP_LEN    (64u << 10)           /* 64 packets at MTU 1024 */
#define EP_HELD   8
#define EP_FRAME  2048

struct ep_held {
	uint8_t data[EP_FRAME];
	uint16_t len;
	int to;
	unsigned left;          /* frames the link carries before this one */
};

struct ep_hook {
	struct fake_link *link;
	unsigned drop_nth;      /* A's request packets: every nth lost       */
	unsigned hold_nth;      /* A's request packets: every nth late ...   */
	unsigned hold_by;       /* ... by this many frames                   */
	unsigned nak_dup_by;    /* B's sequence NAKs: a copy this much later */
	unsigned reqs, dropped, held, naks_copied;
	struct ep_held q[EP_HELD];
};

static void ep_keep(struct ep_hook *k, const uint8_t *frame, uint16_t len,
		    int to, unsigned by)
{
	for (unsigned i = 0; i < EP_HELD; i++) {
		if (k->q[i].left)
			continue;
		CU_ASSERT_FATAL(len <= EP_FRAME);
		memcpy(k->q[i].data, frame, len);
		k->q[i].len = len;
		k->q[i].to = to;
		k->q[i].left = by;
		return;
	}
	CU_FAIL_FATAL("seq_episodes: hook queue full");
}

/* Frames whose time has come go ahead of the one being sent. */
static void ep_release(struct ep_hook *k)
{
	for (unsigned i = 0; i < EP_HELD; i++)
		if (k->q[i].left && --k->q[i].left == 0)
			CU_ASSERT_FATAL(fake_link_inject(k->link, k->q[i].to,
							 k->q[i].data,
							 k->q[i].len) == 0);
}

static enum fl_action ep_hook_fn(void *arg, int from, uint8_t *frame,
				 uint16_t *len)
{
	struct ep_hook *k = arg;
	struct roce_hdrs h;

	ep_release(k);
	if (roce_parse(frame, *len, &h) != ROCE_OK)
		return FL_PASS;
	if (from == 0 && (roce_opcodes[h.opcode].flags & ROCE_F_WRITE)) {
		k->reqs++;
		if (k->drop_nth && k->reqs % k->drop_nth == 0) {
			k->dropped++;
			return FL_DROP;
		}
		if (k->hold_nth && k->reqs % k->hold_nth == 0) {
			k->held++;
			ep_keep(k, frame, *len, 1, k->hold_by);
			return FL_DROP;
		}
	}
	if (from == 1 && k->nak_dup_by && h.opcode == ROCE_RC_ACK &&
	    h.aeth_syndrome == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR)) {
		k->naks_copied++;
		ep_keep(k, frame, *len, 0, k->nak_dup_by);
	}
	return FL_PASS;
}

struct ep_result {
	uint64_t frames, retransmits, naks_sent, naks_recv, timeouts, probes;
};

/* EP_NMSG signalled 64 KiB WRITEs A -> B through the hook; every one
 * completes in order and B's buffer is A's. */
static void ep_run(struct ep_hook *k, const char *name, struct ep_result *r)
{
	struct fsim *s = fsim_new(4200);
	struct fpair p;
	struct fconn conn;
	struct snic_cqe c;

	fconn_default(&conn);
	CU_ASSERT_EQUAL_FATAL(fpair_setup(&p, s, &conn,
					  (uint64_t)EP_NMSG * EP_LEN, 256),
			      SNIC_ST_OK);
	for (uint32_t i = 0; i < EP_NMSG * EP_LEN; i++)
		*(uint8_t *)fdev_ptr(&s->a, p.bufa + i) = (uint8_t)(i * 7 + (i >> 10));
	k->link = &s->link;
	fake_link_set_hook(&s->link, ep_hook_fn, k);
	for (uint32_t m = 0; m < EP_NMSG; m++) {
		struct snic_wqe_sge sg = { p.bufa + (uint64_t)m * EP_LEN, EP_LEN,
					   p.mra };
		struct fwr w = { .wr_id = m, .opcode = SNIC_WR_RDMA_WRITE,
				 .flags = SNIC_SEND_SIGNALED, .sge = &sg,
				 .num_sge = 1,
				 .remote_addr = p.bufb + (uint64_t)m * EP_LEN,
				 .rkey = p.mrb };

		fqp_post_send(&p.qa, &w);
	}
	for (uint32_t m = 0; m < EP_NMSG; m++) {
		CU_ASSERT_TRUE_FATAL(fsim_poll_cq(s, &p.cqa, &c, 200000));
		CU_ASSERT_EQUAL(c.wr_id, m);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(memcmp(fdev_ptr(&s->b, p.bufb), fdev_ptr(&s->a, p.bufa),
			       (size_t)EP_NMSG * EP_LEN), 0);
	r->frames = fdev_counter(&s->a, "tx_frames");
	r->retransmits = fdev_counter(&s->a, "retransmits");
	r->naks_sent = fdev_counter(&s->b, "nak_seq_sent");
	r->naks_recv = fdev_counter(&s->a, "nak_seq_recv");
	r->timeouts = fdev_counter(&s->a, "timeouts");
	r->probes = fdev_counter(&s->a, "tail_probes");
	printf("\n    %s: %u packets needed, %" PRIu64 " sent, %" PRIu64
	       " retransmissions, %" PRIu64 " seq NAKs sent (%" PRIu64
	       " received), %" PRIu64 " timeouts, %" PRIu64 " probes; hook: %u"
	       " late, %u lost, %u NAKs copied\n    ", name,
	       EP_NMSG * (EP_LEN / 1024), r->frames, r->retransmits,
	       r->naks_sent, r->naks_recv, r->timeouts, r->probes, k->held,
	       k->dropped, k->naks_copied);
	fake_link_set_hook(&s->link, NULL, NULL);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

static void test_seq_reorder_one_nak(void)
{
	struct ep_hook k = { .hold_nth = 100, .hold_by = 3 };
	struct ep_result r;

	ep_run(&k, "reorder 1/100 by 3 frames", &r);
	CU_ASSERT_TRUE(k.held > 0);
	/* one NAK per late packet, one go-back each, nothing else */
	CU_ASSERT_EQUAL(r.naks_sent, k.held);
	CU_ASSERT_EQUAL(r.retransmits, k.held);
	CU_ASSERT_EQUAL(r.timeouts, 0);
	CU_ASSERT_EQUAL(r.probes, 0);
}

static void test_seq_dup_nak_ignored(void)
{
	struct ep_hook k = { .drop_nth = 200, .nak_dup_by = 8 };
	struct ep_result r;

	ep_run(&k, "loss 1/200, every seq NAK twice", &r);
	CU_ASSERT_TRUE(k.dropped > 0);
	CU_ASSERT_TRUE(k.naks_copied > 0);
	/* the copies arrive (counted) but send nobody back */
	CU_ASSERT_EQUAL(r.naks_recv, 2 * r.naks_sent);
	CU_ASSERT_EQUAL(r.retransmits, r.naks_sent);
	CU_ASSERT_EQUAL(r.timeouts, 0);
}

UNIT_SUITE(seq_episodes, NULL, NULL,
	   UNIT_TEST(test_seq_reorder_one_nak),
	   UNIT_TEST(test_seq_dup_nak_ignored));
