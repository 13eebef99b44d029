/* SPDX-License-Identifier: MIT */
/*
 * The transport layer: the work a QP's queues and packets make.  Send
 * queue (WQE fetch, validation, gather), receive queue (RECV take from RQ
 * or SRQ), the RC requester / responder / completer, UC and UD, and the
 * requester timers.  Works on struct snic_nic (objects/objects.h).
 */
#ifndef SNIC_TRANSPORT_H
#define SNIC_TRANSPORT_H

#include <string.h>

#include "objects/objects.h"

/* ops.c: what each QP type does, chosen by the type fixed at creation */
struct snic_xport_ops {
	uint32_t wr_ops;        /* 1 << enum snic_wr_opcode it executes   */
	/* 1 << opcode whose WQE data starts at 48 in this type's slot:
	 * snic_wqe_data_off as a table, read with wr_ops (sq_read_wqe) */
	uint32_t short_ops;
	uint8_t bth_base;       /* BTH opcode prefix: RC 0x00, UC 0x20 ... */
	/* the requester's turn for the QP; true to stay scheduled */
	bool (*req)(struct snic_nic *nic, struct snic_qp *qp);
	/* a packet for the QP; true when it may owe an ACK */
	bool (*rx)(struct snic_nic *nic, struct snic_qp *qp,
		   const struct roce_hdrs *h);
};
extern const struct snic_xport_ops xport_tbl[SNIC_QPT_XRC_RECV + 1];

static inline const struct snic_xport_ops *xport_of(const struct snic_qp *qp)
{
	return &xport_tbl[qp->type];
}

static inline bool wr_is_rd_atomic(uint8_t op)
{
	return op == SNIC_WR_RDMA_READ || op == SNIC_WR_ATOMIC_CMP_AND_SWP ||
	       op == SNIC_WR_ATOMIC_FETCH_AND_ADD;
}

/* sq_local.c: BIND_MW and LOCAL_INV, executed on the NIC */
static inline bool sq_is_local(uint8_t opcode)
{
	return opcode == SNIC_WR_BIND_MW || opcode == SNIC_WR_LOCAL_INV;
}
uint8_t sq_local_exec(struct snic_nic *nic, struct snic_qp *qp);

/* sq.c: send-queue work for every QP type */
/* A QP whose WQEs all have their data at 64 (UD, raw packet): does the
 * SQ's slot hold a first SGE after the header (create_qp: a slot is at
 * least 64 bytes plus the SGEs or inline bytes)?  Then sq_read_wqe reads
 * it with the header.  RC, UC and XRC never do: their one-SGE messages
 * have it in the header's line (snic_wqe_data_off), and reading past the
 * line would take a second one from the host for nothing (issue 11). */
#define SQ_SGE0_LOG 7u /* the smallest slot with room for both: 128 bytes */
_Static_assert((1u << SQ_SGE0_LOG) >= sizeof(struct snic_send_wqe) +
					 sizeof(struct snic_wqe_sge) &&
	       (1u << (SQ_SGE0_LOG - 1)) < sizeof(struct snic_send_wqe) +
					   sizeof(struct snic_wqe_sge),
	       "SQ_SGE0_LOG: a WQE header and one SGE");
static inline bool sq_sge0_after_hdr(const struct snic_qp *qp)
{
	/* the log compared, not the slot's size: no shift (create_qp keeps
	 * sq_stride_log <= 12) */
	return !snic_wqe_qpt_short(qp->type) &&
	       qp->sq_stride_log >= SQ_SGE0_LOG;
}

/* Does cur->sge0 hold the first SGE of the WQE whose control part is c
 * (sq_read_wqe)? */
static inline bool sq_has_sge0(const struct snic_qp *qp,
			       const struct snic_wqe_ctrl *c)
{
	return snic_wqe_data_off(qp->type, c->opcode) == SNIC_WQE_DATA_SHORT ||
	       sq_sge0_after_hdr(qp);
}
uint8_t sq_read_wqe(struct snic_nic *nic, struct snic_qp *qp, uint32_t *need);
uint8_t sq_load(struct snic_nic *nic, struct snic_qp *qp, uint32_t access);
/* The BTH opcode of each work request per position of a packet in its
 * message, [WR opcode][first * 2 + last] (sq.c). */
extern const uint8_t sq_seg_op[32][4];

/* The BTH opcode of the next packet of the current message (inline: once
 * per packet). */
static inline uint8_t sq_opcode(const struct snic_qp *qp,
				const struct snic_req_cur *cur)
{
	uint32_t first = cur->sent == 0, last = cur->len - cur->sent <= qp->mtu;

	return xport_of(qp)->bth_base |
	       sq_seg_op[cur->hdr.ctrl.opcode & 31u][first * 2 + last];
}
void sq_complete(struct snic_nic *nic, struct snic_qp *qp, uint8_t status);

/* Copy the next n payload bytes of the current message to dst (inline
 * here: once per packet). */
static inline int sq_gather(struct snic_nic *nic, struct snic_req_cur *cur,
			    uint8_t *dst, uint32_t n)
{
	if (cur->hdr.ctrl.flags & SNIC_SEND_INLINE) {
		memcpy(dst, cur->inline_data + cur->sent, n);
		return 0;
	}
	return sgl_copy_out(nic, &cur->sgl, dst, n);
}
void sq_arp_retry(struct snic_nic *nic, struct snic_qp *qp,
		  const uint8_t ip[16]);
bool sq_unrel_packet(struct snic_nic *nic, struct snic_qp *qp,
		     struct roce_hdrs *h, uint32_t mtu);
bool sq_unrel_run(struct snic_nic *nic, struct snic_qp *qp, uint32_t lim,
		  bool (*send)(struct snic_nic *, struct snic_qp *));

/* sq_retain.c: what a message in flight needs to be sent again */
void retain_msg(struct snic_qp *qp, struct snic_inflight *f,
		const struct snic_req_cur *cur);
void retain_one_wrap(struct snic_qp *qp, struct snic_inflight *f,
		     const struct snic_req_cur *cur,
		     const struct snic_wqe_sge *sge, uint64_t epoch);
/* The in-flight record's fields from the WQE, its data from here on;
 * epoch: the MR epoch its SGEs were checked in (for sgl_reload, mr.c). */
static inline void retain_fields(const struct snic_qp *qp,
				 struct snic_inflight *f,
				 const struct snic_req_cur *cur, uint64_t epoch)
{
	const struct snic_send_wqe *w = &cur->hdr;

	f->data_at = qp->retain_tail; /* first: no byte store before it */
	f->raddr = w->raddr.remote_addr;
	f->rkey = w->raddr.rkey;
	f->imm = w->ctrl.imm_data;
	f->flags = w->ctrl.flags;
	f->sgl_epoch = epoch;
}

/* retain_msg for a message of one SGE, sge, checked in MR epoch `epoch`,
 * no inline data, no atomic operands (req_one, which has no gather list
 * for it): its fields and a 16-byte copy, in line where the ring does
 * not wrap there. */
static inline void retain_one_sge(struct snic_qp *qp, struct snic_inflight *f,
				  const struct snic_req_cur *cur,
				  const struct snic_wqe_sge *sge, uint64_t epoch)
{
	uint32_t tail = qp->retain_tail, at = tail % SNIC_RETAIN_BYTES;

	/* at past the last place a whole SGE fits (this way round: one
	 * compare, bench-instr) */
	if (at > SNIC_RETAIN_BYTES - sizeof(struct snic_wqe_sge)) {
		retain_one_wrap(qp, f, cur, sge, epoch);
		return;
	}
	retain_fields(qp, f, cur, epoch);
	f->nsge = 1;
	memcpy(qp->retain + at, sge, sizeof(struct snic_wqe_sge));
	qp->retain_tail = tail + (uint32_t)sizeof(struct snic_wqe_sge);
	f->data_len = sizeof(struct snic_wqe_sge);
}
uint32_t retain_sges(const struct snic_qp *qp, const struct snic_inflight *f,
		     struct snic_wqe_sge *sge);
void retain_load(struct snic_qp *qp, const struct snic_inflight *f,
		 uint32_t off);

/* hdr.c: common header filling for a QP's packets */
struct snic_dest {               /* where a packet goes                  */
	const uint8_t *dmac;
	uint32_t dip;
	const uint8_t *dip6;    /* IPv6 destination, NULL for IPv4      */
	uint32_t flow_label;    /* IPv6 only                            */
	uint32_t dqpn;
	uint8_t tos, hop_limit;
};

/* Where a connected QP's payload starts in its frames (IPv4 or IPv6). */
static inline uint32_t qp_hdr_len(const struct snic_qp *qp, uint8_t opcode)
{
	return roce_hdr_len(opcode) + (qp->ip6 ? ROCE_IPV6_EXTRA : 0u);
}
void pkt_fill_hdrs_to(const struct snic_nic *nic, struct snic_qp *qp,
		      struct roce_hdrs *h, const struct snic_dest *d,
		      uint8_t opcode, uint32_t psn);
void pkt_fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
		   struct roce_hdrs *h, uint8_t opcode, uint32_t psn);
struct snic_pkt *pkt_build(struct snic_nic *nic, struct roce_hdrs *h,
			   const void *payload, uint32_t len);
/* The BTH: every field roce_build writes from h but for the extension
 * headers, which the opcode's sender fills in (h is not cleared: 128
 * bytes of stores per frame, where these are a few).  Every frame of a QP
 * starts here: count it for the QP (the NIC counts frames when the port
 * takes them). */
static inline void pkt_bth_hdrs(struct snic_qp *qp, struct roce_hdrs *h,
				uint32_t dqpn, uint8_t opcode, uint32_t psn)
{
	qp->qcnt[SNIC_QCNT_tx_frames]++;
	h->se = h->mig = h->tver = 0;
	h->fecn = h->becn = h->ackreq = 0;
	h->ip6 = 0;
	/* an XRC target answers in the XRC class (Annex A14): its ACKs and
	 * READ/atomic responses are RC's, opcode | 0xa0 */
	h->opcode = qp->type == SNIC_QPT_XRC_RECV ? opcode | ROCE_XRC_BASE
						 : opcode;
	h->pkey = ROCE_DEFAULT_PKEY;
	h->dqpn = dqpn & ROCE_QPN_MASK;
	h->psn = psn & ROCE_PSN_MASK;
}

/* The fast way for a connected QP's frames: pkt_qp_hdrs fills h as
 * pkt_fill_hdrs does but for the addresses; pkt_build_qp builds the frame
 * (payload already at qp_hdr_len) with them from the QP's header template
 * (IPv4; over IPv6 it fills them in and calls roce_build). */
static inline void pkt_qp_hdrs(struct snic_qp *qp, struct roce_hdrs *h,
			       uint8_t opcode, uint32_t psn)
{
	pkt_bth_hdrs(qp, h, qp->attr.dest_qp_num, opcode, psn);
}
uint32_t pkt_build_qp(const struct snic_nic *nic, struct snic_qp *qp,
		      uint8_t *frame, struct roce_hdrs *h, uint32_t len);
void pkt_tmpl_refresh(const struct snic_nic *nic, struct snic_qp *qp);
/* A request frame of an IPv4 connected QP from r (roce_build_tmpl_req),
 * payload already at roce_hdr_len(r->opcode); counted as pkt_bth_hdrs
 * counts.  In line: once per request packet. */
static inline uint32_t pkt_build_qp_req(const struct snic_nic *nic,
					struct snic_qp *qp, uint8_t *frame,
					const struct roce_req *r, uint32_t len)
{
	qp->qcnt[SNIC_QCNT_tx_frames]++;
	if (__builtin_expect(!qp->tmpl.valid, 0))
		pkt_tmpl_refresh(nic, qp);
	return roce_build_tmpl_req(frame, &qp->tmpl, r, len);
}
/* Its headers alone (roce_build_tmpl_hdrs), IPv4; 0 over IPv6. */
uint32_t pkt_build_qp_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
			   uint8_t *frame, struct roce_hdrs *h, uint32_t len);
/* pkt_gather.c: a connected QP's frame with n (>= PKT_FOLD_MIN) payload
 * bytes read from the send queue's current message (cur) or from an MR
 * at va (a READ response), the ICRC folded into that copy where it can
 * be.  Returns the frame length, 0 when the payload could not be read. */
uint32_t pkt_fold_sq(struct snic_nic *nic, struct snic_qp *qp,
		     struct snic_req_cur *cur, uint8_t *frame,
		     struct roce_hdrs *h, uint32_t n);
uint32_t pkt_fold_mr(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_mr *mr, uint64_t va, uint8_t *frame,
		     struct roce_hdrs *h, uint32_t n);
/* Below this many payload bytes the fold does not pay: the headers' CRC
 * ends in a reduction of its own and the payload's tail in another,
 * where one run over a short frame needs neither, and the copy is a few
 * stores (bench-instr: +116 instructions on a 64-B WRITE). */
#define PKT_FOLD_MIN 512u

/* A frame buffer p about to take hl header bytes and n payload bytes:
 * for a large payload (n >= PKT_FOLD_MIN, copied in with wide stores),
 * its start moved so that the payload begins on a cache line
 * (core_pkt_align), room left for the pad and the ICRC. */
static inline void pkt_align(struct snic_pkt *p, uint32_t hl, uint32_t n)
{
	if (n >= PKT_FOLD_MIN)
		core_pkt_align(p, hl, hl + ((n + 3u) & ~3u) + ROCE_ICRC_LEN);
}

/* A frame buffer for a connected QP's packet of opcode op with n payload
 * bytes (pkt_align).  NULL as core_pkt_alloc. */
static inline struct snic_pkt *pkt_alloc_qp(struct snic_nic *nic,
					    const struct snic_qp *qp,
					    uint8_t op, uint32_t n)
{
	struct snic_pkt *p = core_pkt_alloc(&nic->core);

	/* the test here too: the header length only where it is used (read
	 * before it, it cost a 64-B READ 8 instructions) */
	if (p && n >= PKT_FOLD_MIN)
		pkt_align(p, qp_hdr_len(qp, op), n);
	return p;
}

/* A connected QP's frame (h) with n payload bytes of the current message
 * (or of mr at va): the copy and then the ICRC over the frame, or for a
 * large payload both in one pass (pkt_fold_*).  0: the payload could not
 * be read. */
static inline uint32_t pkt_build_sq(struct snic_nic *nic, struct snic_qp *qp,
				    struct snic_req_cur *cur, uint8_t *frame,
				    struct roce_hdrs *h, uint32_t n)
{
	if (n >= PKT_FOLD_MIN)
		return pkt_fold_sq(nic, qp, cur, frame, h, n);
	if (n && sq_gather(nic, cur, frame + qp_hdr_len(qp, h->opcode), n))
		return 0;
	return pkt_build_qp(nic, qp, frame, h, n);
}

static inline uint32_t pkt_build_mr(struct snic_nic *nic, struct snic_qp *qp,
				    const struct snic_mr *mr, uint64_t va,
				    uint8_t *frame, struct roce_hdrs *h,
				    uint32_t n)
{
	if (n >= PKT_FOLD_MIN)
		return pkt_fold_mr(nic, qp, mr, va, frame, h, n);
	if (n && mr_read(nic, mr, va, frame + qp_hdr_len(qp, h->opcode), n))
		return 0;
	return pkt_build_qp(nic, qp, frame, h, n);
}
/* The same without payload (ACKs): a frame, or NULL when none is free. */
struct snic_pkt *pkt_build_qp_ctl(struct snic_nic *nic, struct snic_qp *qp,
				  struct roce_hdrs *h);

/* recv.c: receive-side work for every QP type */
bool recv_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st);
bool recv_state_ok(struct snic_nic *nic, struct snic_qp *qp);

/* rc_requester.c */
/* Whether the WQE read into qp->cur (its control part checked by
 * sq_read_wqe) may take the requester's one-pass path (req_one): an RC
 * SEND or WRITE, no inline data, one SGE read with the WQE, of 1 byte up
 * to one packet below PKT_FOLD_MIN, over IPv4. */
bool rc_req_one_ok(const struct snic_qp *qp);
unsigned req_poll(struct snic_nic *nic);
bool rc_req_qp(struct snic_nic *nic, struct snic_qp *qp);
void req_rewind(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);
void req_resend_lost(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);
bool req_pass_undo(struct snic_nic *nic, struct snic_qp *qp);

/* timers.c: transport and RNR timers on the core's wheel */
unsigned timer_poll(struct snic_nic *nic);
void timer_arm(struct snic_nic *nic, struct snic_qp *qp);
void timer_progress(struct snic_nic *nic, struct snic_qp *qp);
void timer_peer_busy(struct snic_nic *nic, struct snic_qp *qp);
bool timer_peer_backlog(struct snic_nic *nic, struct snic_qp *qp);
void timer_sent_arm(struct snic_nic *nic, struct snic_qp *qp);
/* A request packet left: the timer runs from the first one not yet
 * acknowledged (9.7.6.1.1); a running timer is left as it is.  The probe
 * runs from the last packet sent: noted here, the deadline moved on when
 * the wheel comes to it (tw_expire).  Inline: once per packet, and the
 * timers usually run already. */
static inline void timer_sent(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->attr.timeout)
		return;
	qp->last_tx = nic->core.now;
	if ((!qp->tlp_at && qp->tlp_n < SNIC_TLP_MAX) || !qp->rto_at)
		timer_sent_arm(nic, qp);
}
void timer_rtt_start(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);
void timer_acked(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);
void timer_window_grow(struct snic_qp *qp, uint32_t n);
void timer_backoff(struct snic_qp *qp);

/* rc_responder.c */
const char *resp_state_name(unsigned s);
/* The responder's steps for any request; its callers offer the packet
 * to resp_write_only (rc_write_only.h) first (once: resp_rx does not ask
 * it again). */
void resp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
unsigned resp_poll(struct snic_nic *nic);
void resp_flush_acks(struct snic_nic *nic, struct snic_qp *qp);
bool resp_linger_rx(struct snic_nic *nic, const struct roce_hdrs *h);

/* rc_completer.c */
const char *comp_state_name(unsigned s);
/* What a one step that folds a received payload's ICRC check into its
 * copy did with a MIDDLE or LAST packet whose ICRC the parse left for
 * later (roce_wire.h: resp_more, comp_read_more). */
enum rx_fold {
	RX_FOLD_DECLINED,       /* nothing: the steps take it (ICRC first) */
	RX_FOLD_PLACED,         /* its payload placed, its PSN done        */
	RX_FOLD_BAD_ICRC,       /* to be dropped: nothing changed but the
				 * bytes at the cursor the resent packet
				 * writes again                          */
};
/* A one step's verdict on its folded copy: rc the copy's (nonzero: not
 * done, nothing written), *crc the register it left; read after the
 * copy (a pointer: the copy sets it). */
static inline enum rx_fold rx_fold_verdict(int rc, const struct roce_hdrs *h,
					   const uint32_t *crc)
{
	if (rc)
		return RX_FOLD_DECLINED;
	return roce_icrc_later_is(h, *crc) ? RX_FOLD_PLACED : RX_FOLD_BAD_ICRC;
}
/* A READ response MIDDLE or LAST for the READ in progress, placed at the
 * READ's gather cursor with its ICRC checked in the same pass
 * (rc_completer.c). */
enum rx_fold comp_read_more(struct snic_nic *nic, struct snic_qp *qp,
			    const struct roce_hdrs *h);
void comp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
void comp_timeout(struct snic_nic *nic, struct snic_qp *qp);
void comp_undo(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);
void comp_probe(struct snic_nic *nic, struct snic_qp *qp);

/* ud.c, uc.c: the unreliable services */
bool ud_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool ud_req_qp(struct snic_nic *nic, struct snic_qp *qp);
/* raw.c */
bool raw_req_qp(struct snic_nic *nic, struct snic_qp *qp);
bool raw_rx_steer(struct snic_nic *nic, const struct snic_pkt *p);
bool raw_rx_roce(struct snic_nic *nic, struct snic_qp *qp,
		 const struct roce_hdrs *h);
/* ud_mcast.c */
void ud_mcast_loop(struct snic_nic *nic, const struct snic_pkt *p, uint32_t dip);
void ud_mcast_rx(struct snic_nic *nic, const struct snic_pkt *p,
		 const struct roce_hdrs *h);
bool uc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
/* ops.c: RC's receive routine (nic/rx.c calls it directly) */
bool rc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool uc_req_qp(struct snic_nic *nic, struct snic_qp *qp);
/* xrc.c: XRC's packets onto the RC machinery */
bool xrc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool xrc_recv_req_qp(struct snic_nic *nic, struct snic_qp *qp);


/* ---------------------------------------------------------------------- */
/* Per-packet helpers shared by several transports, inline: they run for
 * every packet and would otherwise cost a call across files each time. */

/* The oldest PSN not yet acknowledged (the window's left edge): inside
 * the oldest message when an ACK covered part of it (9.7.5.1.1), the
 * next READ response expected when its responses are arriving. */
static inline uint32_t req_unacked_psn(const struct snic_qp *qp)
{
	const struct snic_inflight *f = &qp->infl[qp->infl_head % SNIC_INFLIGHT];
	uint32_t psn = f->first_psn;

	if (qp->rd_active && f->opcode == SNIC_WR_RDMA_READ)
		return qp->rd_psn;
	if (qp->acked_valid && roce_psn_diff(qp->acked_psn, psn) >= 0 &&
	    roce_psn_diff(qp->acked_psn, f->last_psn) < 0)
		psn = (qp->acked_psn + 1) & ROCE_PSN_MASK;
	return psn;
}

/* Room for the data of the WQE whose control part is c: need bytes of
 * inline bytes or SGEs (sq_read_wqe's, checked there against max_inline
 * and max_send_sge), and an atomic's operands. */
static inline bool retain_room(const struct snic_qp *qp,
			       const struct snic_wqe_ctrl *c, uint32_t need)
{
	if (wr_is_rd_atomic(c->opcode))
		need += (uint32_t)sizeof(struct snic_wqe_atomic);
	return qp->retain_tail - qp->retain_head + need <= SNIC_RETAIN_BYTES;
}

/* f completed: its data is no longer needed (messages retire in order). */
static inline void retain_release(struct snic_qp *qp,
				  const struct snic_inflight *f)
{
	qp->retain_head = f->data_at + f->data_len;
}

/* A message enters an empty in-flight window: start it and the retain
 * ring at slot 0 again.  Indexes are only ever compared with each other,
 * so this changes nothing but where the records go: a QP that drains its
 * window between batches (one CQE per batch, the usual pattern) keeps
 * writing the same few cache lines of its connection set instead of
 * walking all 9 KiB of it, which with a thousand active QPs (9 MB) meant
 * a cache miss or two per message (issue 11 part 6). */
static inline void infl_rewind(struct snic_qp *qp)
{
	if (qp->infl_head == qp->infl_tail && qp->resend == qp->infl_tail &&
	    qp->retain_head == qp->retain_tail) {
		qp->infl_head = qp->infl_tail = qp->resend = 0;
		qp->retain_head = qp->retain_tail = 0;
	}
}

/* The oldest message completed.  A go-back-N pass that has not reached
 * it yet skips it (the peer had it after all); the message being sent
 * again is dropped when it was that one, and fresh PSNs continue after
 * the newest ever sent. */
static inline void req_retired(struct snic_qp *qp)
{
	/* the message being sent again is infl[resend - 1] */
	if (qp->cur.valid && qp->cur.resend &&
	    (int32_t)(qp->resend - 1 - qp->infl_head) < 0) {
		qp->cur.valid = false;
		qp->npsn = (qp->psn_hi + 1) & ROCE_PSN_MASK;
	}
	if ((int32_t)(qp->resend - qp->infl_head) < 0) {
		qp->resend = qp->infl_head;
		if (!qp->cur.valid) /* between two messages of the pass */
			qp->npsn = (qp->psn_hi + 1) & ROCE_PSN_MASK;
	}
}

/* RETH, immediate, AtomicETH and the solicited bit, as the opcode asks. */
static inline void sq_fill_ext(const struct snic_req_cur *cur,
			       struct roce_hdrs *h)
{
	const struct snic_send_wqe *w = &cur->hdr;
	uint32_t fl = roce_opcodes[h->opcode].flags;

	if (fl & ROCE_F_XRCETH)
		h->xrc_srqn = w->ctrl.xrc_srqn & ROCE_QPN_MASK;
	if (fl & ROCE_F_RETH) {
		h->reth_va = w->raddr.remote_addr;
		h->reth_rkey = w->raddr.rkey;
		h->reth_len = cur->len;
	}
	if (fl & (ROCE_F_IMM | ROCE_F_INV)) /* ImmDt, or the IETH's R_Key */
		h->imm = w->ctrl.imm_data;
	if (fl & ROCE_F_ATOMIC) {
		h->atomic_va = w->raddr.remote_addr;
		h->atomic_rkey = w->raddr.rkey;
		h->atomic_swap_add = w->ctrl.opcode == SNIC_WR_ATOMIC_CMP_AND_SWP
				     ? w->atomic.swap : w->atomic.compare_add;
		h->atomic_cmp = w->atomic.compare_add;
	}
	h->se = (fl & ROCE_F_LAST) && (w->ctrl.flags & SNIC_SEND_SOLICITED);
}

/* A SEND packet's payload into the RECV held: LOC_LEN_ERR when it does
 * not fit, LOC_PROT_ERR when its memory went away. */
static inline uint8_t recv_place(struct snic_nic *nic, struct snic_qp *qp,
				 const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;

	if (r->recv_len + h->payload_len > r->rsgl.total)
		return SNIC_WC_LOC_LEN_ERR;
	if (h->payload_len &&
	    sgl_copy_in(nic, &r->rsgl, h->payload, h->payload_len))
		return SNIC_WC_LOC_PROT_ERR;
	r->recv_len += h->payload_len;
	return SNIC_WC_SUCCESS;
}

/* Is h from the peer of qp's path (same family, same address)? */
static inline bool qp_peer_is(const struct snic_qp *qp,
			      const struct roce_hdrs *h)
{
	if (h->ip6 != qp->ip6)
		return false;
	return h->ip6 ? memcmp(h->sip6, qp->attr.dgid, 16) == 0
		      : h->sip == qp->dip;
}

/* A connected QP takes packets only from its peer (IBTA 9.6.1.5: the
 * source must match the path); before any PSN or state is looked at, so
 * a spoofed frame cannot resynchronise a UC QP or answer for the peer. */
static inline bool rx_peer_ok(struct snic_nic *nic, const struct snic_qp *qp,
			      const struct roce_hdrs *h)
{
	if (qp_peer_is(qp, h))
		return true;
	CNT_INC(&nic->core, rx_drop_wrong_peer);
	return false;
}

/* The rkey check of a RETH or AtomicETH: the MR or memory window
 * (objects/mw.c), the PD of this QP, its and the QP's access rights, the
 * bounds (IBTA 9.7.5.2.3, C9-88:
 * a zero-length RDMA needs no valid rkey).  UC checks the same. */
static inline bool rkey_ok_mr(struct snic_nic *nic, const struct snic_qp *qp,
			      uint32_t rkey, uint64_t va, uint64_t len,
			      uint32_t access, const struct snic_mr **mr)
{
	*mr = NULL;     /* a zero-length request has none */
	if (len == 0)
		return true;
	if (!(qp->attr.qp_access_flags & access))
		return false;
	*mr = rkey_check(nic, qp, rkey, access, va, len);
	return *mr != NULL;
}

static inline bool rkey_ok(struct snic_nic *nic, const struct snic_qp *qp,
			   uint32_t rkey, uint64_t va, uint64_t len,
			   uint32_t access)
{
	const struct snic_mr *mr;

	return rkey_ok_mr(nic, qp, rkey, va, len, access, &mr);
}

/* A WRITE's FIRST packet: R_Key and access checked before any byte,
 * then the write cursor (wr_mr, wr_va, wr_left) is set.  *mr: the MR
 * that allows the whole message (NULL for a zero-length one), for this
 * packet's resp_write_payload. */
static inline bool resp_write_start(struct snic_nic *nic, struct snic_qp *qp,
				    const struct roce_hdrs *h,
				    const struct snic_mr **mr)
{
	struct snic_resp *r = &qp->resp;

	if (!rkey_ok_mr(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
			SNIC_ACCESS_REMOTE_WRITE, mr))
		return false;
	r->in_write = true;
	r->wr_mr = h->reth_rkey;
	r->wr_va = h->reth_va;
	r->wr_left = r->wr_len = h->reth_len;
	return true;
}

/* A WRITE packet's payload at the write cursor (wr_mr, wr_va), which moves
 * on; false when the MR no longer allows it.  first_mr: what this same
 * packet's resp_write_start returned, or NULL.  The caller has checked
 * payload_len <= wr_left, so the payload lies inside the span that check
 * allowed and it need not run again; later packets check their own
 * span (the MR may have gone in between). */
static inline bool resp_write_payload(struct snic_nic *nic,
				      struct snic_qp *qp,
				      const struct roce_hdrs *h,
				      const struct snic_mr *first_mr)
{
	struct snic_resp *r = &qp->resp;

	if (h->payload_len) {
		const struct snic_mr *mr =
			first_mr ? first_mr
				 : rkey_check(nic, qp, r->wr_mr,
					      SNIC_ACCESS_REMOTE_WRITE,
					      r->wr_va, h->payload_len);

		if (!mr || mr_write(nic, mr, r->wr_va, h->payload, h->payload_len))
			return false;
	}
	r->wr_va += h->payload_len;
	r->wr_left -= h->payload_len;
	return true;
}

#endif /* SNIC_TRANSPORT_H */
