/* SPDX-License-Identifier: MIT */
/*
 * The objects layer: PD, MR + MTT + SGL walk, CQ, SRQ and QP, their fixed
 * pools, handles and lifecycles, the QP state table and flush, and the
 * work lists a QP is scheduled on.  struct snic_nic is the aggregate the
 * layers above (transport/, nic/) work on: the core, the neighbour table
 * and the pools.  A QP's transport state is data here (as a QP context is
 * on a NIC); the code that runs it lives in transport/.
 * Nothing here is visible to boards (they use snic/fw.h).
 */
#ifndef SNIC_OBJECTS_H
#define SNIC_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "wire/wire.h"
#include "objects/cm_tables.h" /* CM (issue 12) */

#define SNIC_QP_TX_BUDGET   16   /* frames per QP per turn (fairness)     */
#define SNIC_INFLIGHT       128  /* send WQEs in flight per QP            */
#define SNIC_ACKREQ_EVERY   16   /* AckReq at least every N packets       */
#define SNIC_FLUSH_BUDGET   256  /* flush CQEs per QP per poll pass    */
#define SNIC_READ_MAX_PSNS  (1u << 22) /* PSNs one READ may span        */
#define SNIC_PSN_WINDOW     8192 /* outstanding PSNs per QP (< 2^23, so
				  * 24-bit PSN distances stay unambiguous) */
#define SNIC_CWND_MIN       16   /* packets past the first unacknowledged
				  * one after a retransmission (pacing)   */
#define SNIC_RETAIN_BYTES   2048 /* per QP: SGEs, inline bytes and atomic
				  * operands of the messages in flight    */
#ifndef SNIC_QP_CONNS
#define SNIC_QP_CONNS       1024 /* connection sets (objects/qp_conn.c):
				  * QPs out of RESET at once, per NIC     */
#endif
/* ... of which one context may hold (the rest kept for the others, as
 * hostif.h's per-context quotas) */
#define SNIC_CTX_MAX_QP_CONN (SNIC_QP_CONNS - SNIC_QP_CONNS / 64)
#define SNIC_TLP_MIN_NS     (100u * 1000) /* tail-loss probe: at least
				  * (a loaded host's scheduling jitter)     */
#define SNIC_TLP_MAX        4    /* probes between two ACKs (backing off) */
#define SNIC_BUSY_MAX       64   /* timer restarts by ACKs of nothing new
				  * between two that move the window */
#define SNIC_BACKLOG_MAX    16   /* transport timer expiries waited out
				  * while the peer works through a backlog,
				  * at one acknowledged PSN (timers.c)   */
#define SNIC_BACKLOG_MARGIN 8    /* ACKs more than 2x the frames sent
				  * that show a backlog (timers.c)        */
#define SNIC_RTO_SHIFT_MAX  2    /* transport timer: doubled per expiry
				  * without progress, at most 4x (timers.c) */
#define SNIC_LINGER_NS      (1000ull * 1000 * 1000) /* a destroyed RC QP
				  * re-ACKs duplicates this long (rc_responder.c) */
#define SNIC_ARP_RETRY_NS   (100u * 1000 * 1000)
#define SNIC_FW_VER_MAJOR   0
#define SNIC_FW_VER_MINOR   1
#define SNIC_FW_VER_SUB     0
#define SNIC_VENDOR_ID      0x1af4 /* placeholder: no PCI vendor of ours  */
#define SNIC_VENDOR_PART    0x5301 /* not an mlx5/EFA id: perftest takes
				    * the generic verbs paths              */

/* Count on the NIC and on the QP at once (core/counters.h). */
#define QCNT_INC(nic, qp, n) (CNT_INC(&(nic)->core, n), (qp)->qcnt[SNIC_QCNT_##n]++)
#define QCNT_ADD(nic, qp, n, v) \
	(CNT_ADD(&(nic)->core, n, v), (qp)->qcnt[SNIC_QCNT_##n] += (v))

/* ---------------------------------------------------------------------- */
/* Objects.  Every object starts with the same header (handle.c): in use,
 * its owning context slot, and the generation its handle carries.  The
 * union lets code name the fields directly (pd->in_use) and pass the
 * header to the handle functions (&pd->obj).                             */

struct snic_obj {
	bool in_use;
	uint8_t ctx;
	uint16_t gen;
	uint32_t refs;          /* objects using it: no destroy while > 0    */
};

#define SNIC_OBJ_HEADER                                                      \
	union {                                                              \
		struct snic_obj obj;                                         \
		struct {                                                     \
			bool in_use;                                         \
			uint8_t ctx;                                         \
			uint16_t gen;                                        \
			uint32_t refs;                                       \
		};                                                           \
	}

struct snic_pd {
	SNIC_OBJ_HEADER;        /* refs: MRs, SRQs and QPs using it           */
};

struct snic_mr {
	SNIC_OBJ_HEADER;        /* (header's gen unused: key_gen below)      */
	uint32_t key_gen;       /* key = idx << 20 | key_gen (hostif.h)      */
	bool dying;             /* deregistered, waiting for its users       */
	uint64_t dereg_until;   /* then freed whatever uses it (mr.c)        */
	uint32_t pd;            /* PD index                                  */
	uint32_t access;        /* enum snic_access                          */
	uint64_t iova, length;
	uint32_t mtt;           /* first MTT entry                           */
	uint32_t npages;
	uint32_t page_off;      /* iova's offset within its first page       */
	/* MR: windows bound on it (dereg: EBUSY); atomic: windows bound on
	 * different cores may open on one MR */
	_Atomic uint32_t mw_binds;
	/* A memory window in this slot (objects/mw.c): pd, access, iova and
	 * length are the window's as bound; the bytes are the MR's. */
	uint8_t mw_type;        /* 0: an MR; 1 or 2 (type 2B): a window      */
	bool mw_bound;
	uint32_t mw_mr;         /* bound: the MR slot it opens on            */
	uint32_t mw_qpn;        /* bound type 2B: the QP it belongs to (QPN,
				 * with its generation)                      */
	_Atomic uint32_t mw_seq; /* window: odd while a bind changes it (mw.c) */
};

struct snic_cq {
	SNIC_OBJ_HEADER;
	bool dirty;             /* CQEs written this pass: check arming      */
	/* overrun or ring unwritable: the CQ takes no more claims or CQEs;
	 * core 0's to set, the other cores read it (cq_failed) */
	_Atomic bool error;
	bool sol_pending;       /* solicited/error CQE since the last event  */
	uint32_t cnt;           /* CQEs in the ring (power of two)           */
	uint32_t pi;            /* CQEs written (one core; several: claimed) */
	uint32_t ci_cache;      /* last consumer index read from the host    */
	uint32_t arm_seen;      /* arm_sn already answered with an event     */
	uint64_t ring_pa, dbrec_pa;
	/* several cores (cq.c cq_claim): slots given out (the next CQE's
	 * position) and the consumer index they were given against; any
	 * core's to update */
	_Atomic uint32_t claimed;
	_Atomic uint32_t claim_ci;
};

/* Device memory: pages [first, first + npages) of the DM area.  An MR on
 * it has translation entries SNIC_MTT_DM | page (core/dma.c serves them). */
#define SNIC_MTT_DM ((uint32_t)(SNIC_PA_DM >> SNIC_PAGE_SHIFT))
struct snic_dm {
	SNIC_OBJ_HEADER;        /* refs: MRs on it                            */
	uint32_t first, npages;
};

/* A send WQE the requester has put on the wire and not yet completed:
 * everything a retransmission needs, so the host's WQE (which the host
 * may rewrite meanwhile) is never read again.  The validated SGEs, inline
 * bytes and atomic operands are in the QP's retain ring at data_at. */
struct snic_inflight {
	uint64_t wr_id;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;           /* as in the WQE (network order)             */
	uint32_t wqe_idx;
	uint32_t first_psn, last_psn;
	uint32_t len;
	uint32_t data_at;       /* position in qp->retain (free running)     */
	uint16_t data_len;      /* bytes there                               */
	uint8_t opcode;         /* enum snic_wr_opcode                       */
	uint8_t flags;          /* SNIC_SEND_*                               */
	uint8_t signaled;
	uint8_t done;           /* READ / atomic: response data arrived      */
	uint8_t nsge;           /* validated SGEs (0: inline or none)        */
	uint8_t rsvd;
	uint32_t xrc_srqn;      /* XRC_SEND: the remote XRC SRQ              */
	uint64_t sgl_epoch;     /* MR epoch its SGEs were checked in (mr.c)  */
};

/* Message cursor over a scatter/gather list (validated SGEs). */
struct snic_sgl {
	/* the cursor before the SGEs: a one-SGE message's cursor and SGE
	 * share a cache line (issue 11 part 6) */
	uint32_t pd, access;    /* re-checked with the bounds on every use   */
	uint64_t epoch;         /* MR epoch the SGEs were checked in (mr.c);
				 * SNIC_SGL_UNCHECKED: none                  */
	uint32_t num;
	uint32_t idx;           /* current SGE                               */
	uint32_t off;           /* offset inside it                          */
	uint64_t total;
	struct snic_wqe_sge sge[SNIC_MAX_SGE]; /* validated, zero-length dropped */
};

/* The requester's current WQE (being segmented onto the wire). */
/* An SGL's epoch that no MR epoch equals (they count up from 1). */
#define SNIC_SGL_UNCHECKED 0

struct snic_req_cur {
	/* the cursor first, the WQE, SGL and inline bytes after it */
	bool valid;
	uint8_t fail;           /* != 0: completes with this status once
				 * older messages have (rc_requester.c)      */
	bool resend;            /* taken again from the in-flight window    */
	uint32_t wqe_idx;
	uint32_t len;           /* message length                            */
	uint32_t sent;          /* payload bytes already sent                */
	uint32_t first_psn;
	uint32_t npkts;         /* packets (PSNs) this message takes          */
	struct snic_send_wqe hdr;
	/* the WQE's first SGE, read with hdr in one DMA where the SQ's
	 * slots have room for it (sq_read_wqe); checked by sgl_load */
	struct snic_wqe_sge sge0;
	struct snic_sgl sgl;
	uint8_t inline_data[SNIC_MAX_INLINE];
};

/* A READ being answered by the responder (responder resources). */
/* Responder resources (IBTA 9.7.4.1.3): READs being answered and atomics
 * whose ATOMIC ACK waits its turn; responses leave in PSN order. */
struct snic_rd_res {
	bool atomic;
	bool valid;             /* holds a request (history for duplicates) */
	bool pending;           /* responses (still) to send                 */
	bool replay;            /* pending because of a duplicate request    */
	uint64_t orig;          /* atomic: value before the operation        */
	uint32_t rkey;          /* re-checked for every response packet      */
	uint64_t va;
	uint32_t len, sent;
	uint32_t psn;           /* next response PSN                          */
	uint32_t first_psn;
	uint32_t end_psn;       /* last PSN the request owns                  */
	uint32_t start_psn;     /* where the current (re)play began           */
};

/* What a request packet and the ACK after it read comes first, in 22
 * bytes (struct snic_qp keeps them in one cache line: issue 11 part 6). */
struct snic_resp {
	uint32_t epsn;          /* expected PSN                              */
	uint32_t msn;           /* completed request messages                */
	uint32_t rd_npend;      /* READ resources (rd, below) with pending set */
	uint32_t rsp_txq_mark;  /* core txq_tail after our last response     */
	bool nak_sent;          /* one seq NAK per gap (IBTA 9.7.5.2.2)      */
	bool ack_pending;
	uint8_t last_op;        /* opcode of the previous request packet     */
	/* multi-packet SEND in progress */
	bool in_send;
	/* multi-packet WRITE in progress */
	bool in_write;
	bool nak_live;          /* that NAK's error may still be running ... */
	/* the RQ's (recv_take reads rq_pi when rq_ci reaches it) */
	uint32_t rq_ci;         /* next RQ WQE to consume                    */
	uint32_t rq_pi;         /* last producer index read from the host    */
	uint32_t nak_hi;        /* ... until ePSN passes the highest PSN
				 * dropped since (rc_responder.c)            */
	uint32_t nak_epsn;      /* ePSN the last seq NAK named               */
	uint32_t wr_mr;
	uint64_t wr_va;
	uint32_t wr_left, wr_len;
	/* READ responses: SNIC_MAX_RD_ATOM in the QP's connection set */
	struct snic_rd_res *rd;
	uint32_t rd_head, rd_tail; /* rd_head: oldest that may be pending;
				    * [rd_tail - SNIC_MAX_RD_ATOM, rd_tail) is
				    * the history duplicates are matched in */
	uint32_t rd_nfresh;     /* those of rd_npend not replays: the requests
				 * counted against max_dest_rd_atomic        */
	/* the RECV a multi-packet SEND fills (last: a WRITE does not touch it) */
	uint64_t recv_wr_id;
	uint32_t recv_len;
	struct snic_sgl rsgl;
};

/* Hot fields first: what a message touches on the requester, completer
 * and responder sits in the struct's first cache lines (the cursor, PSNs,
 * window, timers, the responder's state, the hot counters, the header
 * template), the rest after the 64-byte boundary `nh` starts at.  With a
 * thousand active QPs per NIC the QP state does not stay in the cache, so
 * every line a message touches is a miss (issue 11 part 6). */
struct snic_qp {
	SNIC_OBJ_HEADER;
	bool on_req_list;       /* in nic->req_list (has something to send)  */
	bool on_resp_list;      /* in nic->resp_list (READ responses due)    */
	bool dmac_valid;
	uint8_t state;          /* enum snic_qp_state                        */
	uint8_t core;           /* the core that runs it (objects/qp_core.c) */
	/* transport type and shared receive queue (ud.c, srq.c) */
	uint8_t type;           /* enum snic_qp_type                          */
	bool has_srq;
	bool ip6;               /* path over IPv6: the peer is attr.dgid     */
	uint32_t qpn;
	uint32_t pd, scq, rcq;  /* indexes                                   */
	/* what a received request checks besides the above (the peer, its
	 * length), in the first line with them */
	uint32_t mtu;           /* path MTU in bytes                          */
	uint32_t dip;           /* peer IPv4 (host order); 0 when ip6        */
	/* rings in host memory (the SQ's: the requester's, next line) */
	uint64_t rq_pa, dbrec_pa;
	uint32_t sq_cnt, rq_cnt;
	uint64_t sq_pa;
	uint8_t sq_stride_log, rq_stride_log;
	bool sq_sig_all;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	uint8_t dmac[6];
	uint16_t sport;
	uint16_t srq;           /* SRQ index (XRC_RECV: of the last request) */
	uint16_t conn;          /* connection set + 1, 0 = none (in RESET)    */
	/* requester / completer */
	uint32_t sq_pi;         /* producer index last read from the host    */
	uint32_t sq_fetch;      /* next WQE to start                          */
	uint32_t npsn;          /* next PSN to send                           */
	uint32_t psn_hi;        /* PSN of the last packet sent                */
	uint32_t rd_out;        /* READ/atomic requests in flight             */
	struct snic_inflight *infl; /* SNIC_INFLIGHT, in the connection set   */
	uint32_t infl_head, infl_tail; /* head: oldest                       */
	uint32_t resend;        /* go-back-N: next in-flight message to send
				 * again; == infl_tail when none             */
	uint32_t cwnd;          /* PSNs past the first unacknowledged one    */
	uint8_t *retain;        /* ring of SNIC_RETAIN_BYTES in the connection
				 * set: data of infl[] messages              */
	uint32_t retain_head, retain_tail;
	/* completer */
	uint32_t acked_psn;     /* highest PSN a plain ACK covered            */
	bool acked_valid;
	bool rd_active;         /* the oldest READ's response is arriving    */
	uint8_t rnr_left;       /* RNR retries left (7 = infinite)           */
	uint8_t retry_left;     /* transport retries left (retry_cnt)        */
	uint32_t rd_psn;        /* next READ response PSN expected           */
	uint32_t nak_psn;       /* the last sequence NAK acted on ...        */
	bool rd_gap_valid;      /* a READ was re-issued from rd_gap_psn      */
	bool nak_valid;         /* ... until a timeout or probe              */
	uint8_t tlp_n;          /* probes since the window last moved        */
	uint8_t busy_n;         /* timer restarts by stale ACKs since then   */
	uint32_t rd_gap_psn;
	uint64_t wait_until;    /* RNR back-off: requester idle until then   */
	uint64_t rto_at;        /* transport timer deadline, 0 = stopped     */
	uint64_t tlp_at;        /* tail-loss probe deadline, 0 = none        */
	uint64_t last_tx;       /* last request packet sent (the probe runs
				 * from it)                                  */
	uint8_t rto_shift;      /* expiries since then (back-off, <= MAX)    */
	bool flush_pending;     /* in error, flush CQEs still to write      */
	bool uc_keep;           /* UC: a taken RECV waits for the next message */
	uint32_t srtt_ns;       /* smoothed round-trip time, 0 = unknown     */
	uint32_t rtt_psn;       /* PSN being timed (AckReq packet) ...       */
	uint64_t rtt_t0;        /* ... sent then, 0 = none                   */
	/* attributes as last modified (source of QUERY_QP); the data path
	 * reads its first line (access flags, retry counts, timeout) */
	struct snic_qp_attr attr;
	uint64_t arp_next_ns;   /* rare: a path without a neighbour yet      */
	/* cold, in what is left of the attributes' last line: the peer's
	 * backlog (timers.c, timer_peer_backlog): the QP's acks_recv and
	 * tx_frames at the last transport timer expiry, and the expiries
	 * waited out at one acknowledged PSN */
	uint64_t exp_acks, exp_tx;
	uint32_t backlog_psn;
	uint8_t backlog_n;
	/* frame header template of the path (IPv4), made again after
	 * qp_path_changed (transport/hdr.c): a line of its own, which
	 * every request and ACK reads */
	_Alignas(64) struct roce_tmpl tmpl;
	/* counters, published by stats.c: the SNIC_QCNT_HOT that messages
	 * move share the next line */
	_Alignas(64) uint64_t qcnt[SNIC_QCNT_MAX];
	/* the requester's current WQE (its SGEs and inline bytes last) */
	struct snic_req_cur cur;
	/* responder (its SGL for a multi-packet SEND last) */
	struct snic_resp resp;
	/* cold, after the responder's multi-packet SEND SGL (the struct
	 * stays 32 lines: a shift, not a multiply, finds a QP by index):
	 * a go-back-N pass a timer started (rc_completer.c, comp_undo),
	 * undone when an ACK shows the packets sent before it arriving */
	bool undo_valid;
	uint32_t undo_psn;      /* psn_hi when the pass started              */
	uint32_t undo_cwnd;     /* the window before it (0: full)            */
	uint32_t rs_hi;         /* the last PSN the pass has sent again      */
	uint16_t xrcd;          /* XRC_RECV: its XRC domain's index          */
	/* cold: path set-up, teardown, READ responses arriving */
	_Alignas(64) uint8_t nh[16]; /* the neighbour dmac belongs to (route.c) */
	uint64_t linger_until;  /* destroyed: duplicates re-ACKed until then */
	struct snic_sgl rd_sgl;
};
/* 32 cache lines (see above); grow it by whole lines, or make room */
_Static_assert(sizeof(struct snic_qp) == 2048, "struct snic_qp: 2 KiB");
/* the counters a message moves, in qcnt's first (64-byte aligned) line */
_Static_assert(SNIC_QCNT_HOT * sizeof(uint64_t) <= 64 &&
	       SNIC_QCNT_retransmits == SNIC_QCNT_HOT - 1 &&
	       SNIC_QCNT_rx_frames == 0,
	       "SNIC_QP_COUNTERS: the hot counters first, in one line");

/* What a QP needs only while connected (out of RESET): the in-flight
 * window, the responder resources and the retained SGEs, 16 KiB that
 * idle QPs do not hold (objects/qp_conn.c). */
struct snic_qp_conn {
	struct snic_inflight infl[SNIC_INFLIGHT];
	struct snic_rd_res rd[SNIC_MAX_RD_ATOM];
	uint8_t retain[SNIC_RETAIN_BYTES];
};

/* A shared receive queue (srq.c). */
struct snic_srq {
	SNIC_OBJ_HEADER;
	uint32_t pd;            /* index                                     */
	uint32_t cnt;           /* WQEs in the ring (power of two)           */
	uint8_t stride_log;
	uint32_t max_sge;
	uint32_t limit;         /* armed limit, 0 = not armed                */
	uint32_t ci;            /* next WQE to take                          */
	uint32_t pi;            /* producer index last read from the host    */
	uint64_t ring_pa, dbrec_pa;
	/* XRC SRQ (xrcd.c): its domain and the CQ its RECVs complete on */
	bool xrc;
	uint16_t xrcd;
	uint32_t cq;
};

/* An XRC domain (xrcd.c).  refs: XRC SRQs and XRC_RECV QPs in it. */
struct snic_xrcd {
	SNIC_OBJ_HEADER;
	bool inode;             /* tied to the file (dev, ino)               */
	uint32_t opens;         /* OPEN_XRCD answered with it, not closed    */
	uint64_t dev, ino;
};

/* A multicast group (mcast.c): an IPv4 multicast address and the QPs of
 * this NIC attached to it, members[0 .. n). */
struct snic_mcast_grp {
	uint32_t ip;            /* host order; 0: a free slot                 */
	uint8_t n;
	uint8_t block_self;     /* bit i: qpn[i] blocks its own loopback      */
	uint32_t qpn[SNIC_MAX_MCAST_QP_ATTACH];
};

/* A flow steering rule (flow.c): frames matching it go to a raw QP. */
struct snic_flow {
	SNIC_OBJ_HEADER;
	uint32_t qpn;
	uint16_t priority;      /* lower first                                */
	uint16_t layers;        /* SNIC_FLOW_L_*                              */
	uint32_t seq;           /* creation order: the older first            */
	struct snic_flow_rule val, mask; /* val already masked               */
};

/* What every core of a NIC shares (DESIGN.md "Many cores"): the object
 * pools, allocators, the neighbour table and the CM's tables.  Written by
 * core 0 only (commands, ARP, CM), or by a QP's owner for its own QP;
 * the data path of another core reads it under the rules of
 * nic/xcore.c (commands run while the other cores are parked between
 * passes, everything else crosses cores through SPSC rings). */
struct snic_nic_shared {
	struct snic_neigh_tbl neigh; /* wire/neigh.c                         */

	struct snic_pd pds[SNIC_MAX_PD];
	struct snic_mr mrs[SNIC_MAX_MR];
	struct snic_cq cqs[SNIC_MAX_CQ];
	struct snic_qp qps[SNIC_MAX_QP];
	struct snic_srq srqs[SNIC_MAX_SRQ];
	struct snic_xrcd xrcds[SNIC_MAX_XRCD]; /* objects/xrcd.c           */
	/* connection sets (objects/qp_conn.c): [0, conn_hw) handed out once,
	 * the free ones of them on the conn_free stack */
	struct snic_qp_conn conns[SNIC_QP_CONNS];
	uint16_t conn_free[SNIC_QP_CONNS];
	uint32_t conn_nfree, conn_hw;
	uint32_t qp_hw;              /* qps[qp_hw..] are not in use (qp.c) */
	/* QP slots (objects/qp_slots.c): free ones as a two-level bitmap,
	 * each context's QPs as a list through the slots (QP_SLOT_NONE
	 * ends it), their number and how many hold a connection set */
	uint64_t qp_free_bits[SNIC_MAX_QP / 64];
	uint64_t qp_free_sum[SNIC_MAX_QP / 4096];
	uint16_t qp_ctx_next[SNIC_MAX_QP], qp_ctx_prev[SNIC_MAX_QP];
	uint16_t ctx_qp_head[SNIC_MAX_CTX];
	uint32_t ctx_qps[SNIC_MAX_CTX], ctx_conns[SNIC_MAX_CTX];
	uint32_t xrc_recv_qps;       /* XRC target QPs in use (mr.c)      */
	uint32_t mtt[SNIC_MAX_MTT];
	/* MTT allocator: free extents (start, len), sorted by start */
	uint32_t mtt_free_start[SNIC_MAX_MR + 1];
	uint32_t mtt_free_len[SNIC_MAX_MR + 1];
	uint32_t mtt_free_n;
	/* MR slots (objects/mr_slots.c): free ones as a two-level bitmap
	 * (bit i of word w: slot 64 w + i; summary bit w: word w has one),
	 * and each context's MRs and MTT entries (its quota) */
	uint64_t mr_free_bits[SNIC_MAX_MR / 64];
	uint64_t mr_free_sum;
	uint32_t ctx_mrs[SNIC_MAX_CTX];
	uint32_t ctx_mtt[SNIC_MAX_CTX];
	/* MR epoch (objects/mr.c mr_changed): moves on every change of an MR
	 * or window slot's key, state, PD, access or bounds, so an SGE
	 * checked under the same epoch still passes the same check */
	uint64_t mr_epoch;
	struct snic_dm dms[SNIC_MAX_DM];  /* objects/dm.c                    */
	uint32_t dm_used;       /* bitmap of the DM area's 4 KiB pages       */
	/* pages a board-opened context freed, still used until the board
	 * has cut its host's mapping (nic/grant.c snic_nic_dm_held) */
	uint32_t dm_held;
	struct snic_mcast_grp mcast[SNIC_MAX_MCAST_GRP]; /* objects/mcast.c  */
	struct snic_flow flows[SNIC_MAX_FLOWS]; /* objects/flow.c            */
	uint32_t flow_seq;
	uint32_t nflows;        /* rules in use: RX skips the table at 0     */

	struct snic_cm_tables cm; /* QP1 / CM routing: nic/cm_router.c */

	struct snic_xcore xc;   /* the cores and their rings: nic/xcore.c    */
};

/* One core's view of the NIC: its own core state (clock, TX queue,
 * counters, timer wheel) and work lists, and the shared pools through
 * pointers named as the arrays were (nic->qps[i] reads the same).  A
 * single-core NIC has one view; core k's is xc.views[k]. */
struct snic_nic {
	struct snic_core core;  /* core/core.h: this core's                  */
	struct snic_neigh_tbl *neigh;

	struct snic_pd *pds;
	struct snic_mr *mrs;
	struct snic_cq *cqs;
	struct snic_qp *qps;
	struct snic_srq *srqs;
	struct snic_xrcd *xrcds;
	struct snic_qp_conn *conns;
	uint16_t *conn_free;
	uint32_t *mtt;
	uint32_t *mtt_free_start, *mtt_free_len;
	struct snic_dm *dms;
	struct snic_mcast_grp *mcast;
	struct snic_flow *flows;
	struct snic_cm_tables *cm;
	struct snic_nic_shared *sh;

	/* work lists: QP indexes, each QP at most once per list; this
	 * core's QPs only */
	uint16_t req_list[SNIC_MAX_QP];
	uint32_t req_head, req_tail;
	uint16_t resp_list[SNIC_MAX_QP];
	uint32_t resp_head, resp_tail;
	uint16_t dirty_cqs[SNIC_MAX_CQ];
	uint32_t ndirty;
	/* cores k >= 1: the CQs in dirty_cqs and those of them owed a
	 * solicited event (cq.c: cq->dirty is core 0's) */
	uint64_t cq_dirty_bits[SNIC_MAX_CQ / 64];
	uint64_t cq_sol_bits[SNIC_MAX_CQ / 64];
	/* several cores: this core's QPs' bits in each QP word of a
	 * context's doorbell page (slot i is core i % ncores's) */
	uint64_t db_mask[SNIC_DB_QP_WORDS];
};

/* The view of the core that owns qp: its work lists and timer wheel
 * (commands on core 0 schedule another core's QP while it is parked). */
static inline struct snic_nic *qp_view(struct snic_nic *nic,
				       const struct snic_qp *qp)
{
	return qp->core == nic->core.core_id ? nic : nic->sh->xc.views[qp->core];
}

/* qp_view for giving the owner work (a list, a deadline): a command on
 * core 0 that schedules another core's QP also flags that core, whose
 * board may have let it sleep (nic/xcore.c). */
static inline struct snic_nic *qp_view_poke(struct snic_nic *nic,
					    const struct snic_qp *qp)
{
	if (qp->core == nic->core.core_id)
		return nic;
	atomic_store_explicit(&nic->sh->xc.in_pass[qp->core].poked, 1,
			      memory_order_relaxed);
	return nic->sh->xc.views[qp->core];
}

/* ---------------------------------------------------------------------- */
/* Handles of PD, CQ, SRQ and QP: generation (10 bits) above a 14-bit
 * index (SNIC_QP_IDX_BITS, the QP table), 24 bits
 * in all so a QPN fits the BTH's DestQP (IBTA 9.2).  A handle of a freed
 * and re-used slot differs from the old one by its generation.  (MR keys
 * follow hostif.h: index above a 20-bit generation, mr.c.) */
#define SNIC_HANDLE_IDX_BITS SNIC_QP_IDX_BITS
#define SNIC_HANDLE_GEN_MASK ((1u << (24 - SNIC_HANDLE_IDX_BITS)) - 1)

static inline uint32_t handle_make(uint16_t gen, uint32_t idx)
{
	return ((uint32_t)gen << SNIC_HANDLE_IDX_BITS) | idx;
}

static inline uint32_t handle_idx(uint32_t h)
{
	return h & ((1u << SNIC_HANDLE_IDX_BITS) - 1);
}

static inline uint16_t handle_next_gen(uint16_t gen)
{
	return (uint16_t)((gen + 1) & SNIC_HANDLE_GEN_MASK);
}

/* MR keys (hostif.h SNIC_KEY_IDX / SNIC_KEY_GEN): index above the
 * 20-bit generation. */
_Static_assert(SNIC_MAX_MR <= 1u << (32 - SNIC_KEY_GEN_BITS), "MR key index bits");
static inline uint32_t mr_key_make(uint32_t idx, uint32_t gen)
{
	return (idx << SNIC_KEY_GEN_BITS) | SNIC_KEY_GEN(gen);
}

/* The MR-table slot a key names (an MR or a window), or NULL. */
static inline struct snic_mr *mr_slot(struct snic_nic *nic, uint32_t key)
{
	uint32_t i = SNIC_KEY_IDX(key);

	return i < SNIC_MAX_MR ? &nic->mrs[i] : NULL;
}

/* handle.c: one pool's handles, for PD, CQ, SRQ and QP alike */
void *obj_lookup(void *pool, size_t size, uint32_t n, unsigned ctx,
		 uint32_t handle, uint32_t *idx);
uint32_t obj_free_slot(const void *pool, size_t size, uint32_t n);
void obj_claim(void *o, size_t size, unsigned ctx);
uint32_t obj_handle(const struct snic_obj *o, uint32_t idx);

/* quota.c: per-context quotas (hostif.h SNIC_CTX_MAX_*) */
int quota_qp_conn(const struct snic_nic *nic, unsigned ctx);
int quota_check(const struct snic_nic *nic, unsigned ctx, uint16_t op,
		const void *in);
int quota_mtt_resize(const struct snic_nic *nic, unsigned ctx,
		     uint32_t old_npages, uint32_t new_npages);
int quota_mr(const struct snic_nic *nic, unsigned ctx, uint32_t npages);
int obj_release(struct snic_obj *o);
/* The size of the pool a view's pointer (struct snic_nic) points to. */
#define OBJ_POOL_N(arr)                                                       \
	_Generic((arr), struct snic_pd *: SNIC_MAX_PD,                        \
		 struct snic_cq *: SNIC_MAX_CQ, struct snic_qp *: SNIC_MAX_QP, \
		 struct snic_srq *: SNIC_MAX_SRQ,                             \
		 struct snic_xrcd *: SNIC_MAX_XRCD,                           \
		 struct snic_dm *: SNIC_MAX_DM,                               \
		 struct snic_flow *: SNIC_MAX_FLOWS)
#define OBJ_LOOKUP(arr, ctx, h, idx) \
	obj_lookup((arr), sizeof((arr)[0]), OBJ_POOL_N(arr), (ctx), (h), (idx))
#define OBJ_FREE_SLOT(arr) \
	obj_free_slot((arr), sizeof((arr)[0]), OBJ_POOL_N(arr))

/* pd.c */
int pd_alloc(struct snic_nic *nic, unsigned ctx, uint32_t *pdn);
int pd_dealloc(struct snic_nic *nic, unsigned ctx, uint32_t pdn);
struct snic_pd *pd_lookup(struct snic_nic *nic, unsigned ctx, uint32_t pdn,
			  uint32_t *idx);

/* mr.c */
int mr_reg(struct snic_nic *nic, unsigned ctx,
	   const struct snic_cmd_reg_mr *in, uint32_t *key);
/* mr_dereg: SNIC_MR_PENDING while a message still uses the MR (the
 * command completes later, nic/cmd.c asks again); mr_dereg_now frees it
 * at once (the context is gone). */
#define SNIC_MR_PENDING (-1)
#define SNIC_MR_DEREG_WAIT_NS 100000000ull /* 100 ms at most */
int mr_dereg(struct snic_nic *nic, unsigned ctx, uint32_t key);
void mr_dereg_now(struct snic_nic *nic, uint32_t idx);
void mr_init(struct snic_nic *nic, uint64_t seed);
bool mr_in_use_by_msg(const struct snic_nic *nic, uint32_t idx);
/* What REG_MR and REREG_MR share: the translation table's extents, the
 * checks of a registration and the load of its page list. */
int mtt_alloc(struct snic_nic *nic, uint32_t n, uint32_t *first);
void mtt_free(struct snic_nic *nic, uint32_t first, uint32_t n);
int mr_reg_args_ok(const struct snic_nic *nic, const struct snic_cmd_reg_mr *in);
int mr_load_pages(struct snic_nic *nic, unsigned ctx,
		  const struct snic_cmd_reg_mr *in, uint32_t first);
/* dma_prepare.c: memory a command hands the NIC, announced to the HAL
 * (core_dma_prepare): an MR's MTT entries, a queue's ring. */
void mr_prepare_pages(struct snic_nic *nic, uint32_t first, uint32_t n);
void ring_prepare(struct snic_nic *nic, uint64_t pa, uint32_t cnt,
		  unsigned stride_log);
/* mr_slots.c: the lowest free MR slot (SNIC_MAX_MR: none); a slot taken
 * by ctx (an MR of npages MTT entries, or a window: 0) or given back; an
 * MR's MTT entries changed by re-registration. */
void mr_slots_init(struct snic_nic *nic);
uint32_t mr_free_slot(const struct snic_nic *nic);
void mr_slot_take(struct snic_nic *nic, uint32_t i, unsigned ctx,
		  uint32_t npages);
void mr_slot_put(struct snic_nic *nic, uint32_t i, unsigned ctx,
		 uint32_t npages);
void mr_slot_resize(struct snic_nic *nic, unsigned ctx, uint32_t old_npages,
		    uint32_t new_npages);
/* Slot i takes the registration r (translation at MTT `first`, PD pd_idx
 * referenced): its key. */
uint32_t mr_install(struct snic_nic *nic, unsigned ctx, uint32_t i,
		    uint32_t pd_idx, const struct snic_cmd_reg_mr *r,
		    uint32_t first);
/* The context's live MR of this key, or NULL. */
struct snic_mr *mr_of_key(struct snic_nic *nic, unsigned ctx, uint32_t key);
/* dm.c */
int dm_alloc(struct snic_nic *nic, unsigned ctx,
	     const struct snic_cmd_alloc_dm *in,
	     struct snic_cmd_alloc_dm_out *out);
int dm_free(struct snic_nic *nic, unsigned ctx, uint32_t handle);
int dm_reg_mr(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_reg_dm_mr *in, uint32_t *key);
void dm_mr_gone(struct snic_nic *nic, const struct snic_mr *mr);
/* mw.c: memory windows (IBTA 10.6.7): ALLOC_MW / DEALLOC_MW, the BIND_MW
 * and LOCAL_INV work requests (a send-completion status), remote
 * invalidation (SEND with IETH) and the R_Key check every remote access
 * makes, for an MR key and a window key alike. */
int mw_alloc(struct snic_nic *nic, unsigned ctx,
	     const struct snic_cmd_alloc_mw *in, uint32_t *rkey);
int mw_dealloc(struct snic_nic *nic, unsigned ctx, uint32_t rkey);
void mw_free_now(struct snic_nic *nic, uint32_t idx);
uint8_t mw_bind(struct snic_nic *nic, const struct snic_qp *qp,
		const struct snic_wqe_bind *b, bool type1);
/* LOCAL_INV and a received SEND with Invalidate: false when rkey is not
 * a bound type 2B window of qp. */
bool mw_invalidate(struct snic_nic *nic, const struct snic_qp *qp,
		   uint32_t rkey);
struct snic_mr *mw_rkey_check(struct snic_nic *nic, const struct snic_mr *w,
			      const struct snic_qp *qp, uint32_t rkey,
			      uint32_t access, uint64_t va, uint64_t len);
/* mcast.c: UD multicast groups (hostif.h MCAST_ATTACH / DETACH) */
int mcast_attach(struct snic_nic *nic, unsigned ctx,
		 const struct snic_cmd_mcast *in);
int mcast_detach(struct snic_nic *nic, unsigned ctx,
		 const struct snic_cmd_mcast *in);
/* A QP goes away: out of every group. */
void mcast_qp_gone(struct snic_nic *nic, uint32_t qpn);
/* The group of IPv4 address ip with at least one member, or NULL. */
const struct snic_mcast_grp *mcast_group(const struct snic_nic *nic,
					 uint32_t ip);
/* flow.c: flow steering to raw packet QPs (hostif.h FLOW_CREATE) */
int flow_create(struct snic_nic *nic, unsigned ctx,
		const struct snic_cmd_flow *in, uint32_t *handle);
int flow_destroy(struct snic_nic *nic, unsigned ctx, uint32_t handle);
void flow_qp_gone(struct snic_nic *nic, uint32_t qpn);
/* The raw QP the best rule matching this frame names, or NULL. */
struct snic_qp *flow_match(struct snic_nic *nic, const uint8_t *frame,
			   uint32_t len);
/* mr_rereg.c */
int mr_rereg(struct snic_nic *nic, unsigned ctx,
	     const struct snic_cmd_rereg_mr *in);
/* mr_check's access and bounds part, for an MR or a bound window (inline:
 * every SGE and rkey check runs it). */
static inline bool mr_span_ok(const struct snic_mr *mr, uint32_t access,
			      uint64_t va, uint64_t len)
{
	if ((mr->access & access) != access)
		return false;
	/* [va, va + len) inside [iova, iova + length), without overflow */
	return va >= mr->iova && len <= mr->length &&
	       va - mr->iova <= mr->length - len;
}

/* The MR of key if it allows [va, va + len) with access in pd; a dying
 * MR only to the messages that already hold it (sgl_walk). */
static inline struct snic_mr *mr_find(struct snic_nic *nic, uint32_t key,
				       uint32_t pd, uint32_t access,
				       uint64_t va, uint64_t len, bool dying_ok)
{
	struct snic_mr *mr;

	/* mr_slot's range check asked here, so that its slot is known not
	 * NULL (one test fewer per key check) */
	if (SNIC_KEY_IDX(key) >= SNIC_MAX_MR)
		return NULL;
	mr = mr_slot(nic, key);
	/* a window's key is an R_Key only: rkey_check (mw.c) opens it */
	if (!mr->in_use || mr->key_gen != SNIC_KEY_GEN(key) ||
	    mr->pd != pd || mr->mw_type || (mr->dying && !dying_ok))
		return NULL;
	return mr_span_ok(mr, access, va, len) ? mr : NULL;
}

/* Key checks: the MR for key, in PD pd, allowing `access` over
 * [va, va + len).  Returns the MR or NULL.  Inline: every lkey and rkey
 * check of the data path runs it. */
static inline struct snic_mr *mr_check(struct snic_nic *nic, uint32_t key,
				       uint32_t pd, uint32_t access,
				       uint64_t va, uint64_t len)
{
	return mr_find(nic, key, pd, access, va, len, false);
}

/* Every remote access (RETH, AtomicETH): an MR key as mr_check has it, or
 * a memory window (mw_rkey_check, objects/mw.c).  Inline: the MR case
 * costs one look at the slot on the data path. */
static inline struct snic_mr *rkey_check(struct snic_nic *nic,
					 const struct snic_qp *qp,
					 uint32_t rkey, uint32_t access,
					 uint64_t va, uint64_t len)
{
	const struct snic_mr *w = mr_slot(nic, rkey);

	if (w && w->in_use && w->mw_type)
		return mw_rkey_check(nic, w, qp, rkey, access, va, len);
	return mr_check(nic, rkey, qp->pd, access, va, len);
}
/* The usual piece of a copy, 1..SNIC_PAGE_SIZE bytes inside one page of
 * the MR (va inside the MR, its page one of the MR's): true with *pa
 * where it starts; false for anything else (mr.c copies that piece by
 * piece).  The caller has checked [va, va + len) against the MR's
 * bounds (mr_span_ok). */
static inline bool mr_page_pa(const struct snic_nic *nic,
			      const struct snic_mr *mr, uint64_t va,
			      uint32_t len, uint64_t *pa)
{
	uint64_t off = va - mr->iova + mr->page_off;
	uint32_t in = (uint32_t)(off & (SNIC_PAGE_SIZE - 1));

	if (va < mr->iova || (off >> SNIC_PAGE_SHIFT) >= mr->npages ||
	    len > SNIC_PAGE_SIZE - in || !len)
		return false;
	*pa = (uint64_t)nic->mtt[mr->mtt + (off >> SNIC_PAGE_SHIFT)]
		      << SNIC_PAGE_SHIFT | in;
	return true;
}
int mr_read(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	    void *dst, uint32_t len);
int mr_write(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	     const void *src, uint32_t len);
/* mr_read with the CRC register *crc advanced over the bytes and their
 * zero pad to a multiple of 4 (written after them) where the HAL folds
 * it into the copy: 0 copied and folded, 1 copied only (*crc then says
 * nothing), -1 not copied. */
int mr_read_crc(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
		void *dst, uint32_t len, uint32_t *crc);
/* mr_write of a received payload with the ICRC's register *crc advanced
 * over its bytes and the pad behind them at src (core_dma_write_crc):
 * 0 written and folded, -1 failed (nothing written), 1 not done (the
 * span is more than one physically contiguous piece, device memory, or
 * a HAL without the op: the caller checks the ICRC first and copies
 * with mr_write). */
int mr_write_crc(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
		 const void *src, uint32_t len, uint32_t *crc);
int mr_va_to_pa(const struct snic_nic *nic, const struct snic_mr *mr,
		uint64_t va, uint64_t *pa);
/* An MR or window slot changed (key, in_use, dying, PD, access, bounds,
 * kind): SGEs checked before are checked again at their next use
 * (sgl_walk).  Commands only, with every other core parked. */
static inline void mr_changed(struct snic_nic *nic)
{
	nic->sh->mr_epoch++;
}
/* Validate a list of SGEs against lkeys (PD, access, bounds). */
int sgl_load(struct snic_nic *nic, struct snic_sgl *sgl,
	     const struct snic_wqe_sge *sge, uint32_t num, uint32_t pd,
	     uint32_t access);
int sgl_reload(struct snic_nic *nic, struct snic_sgl *sgl,
	       const struct snic_wqe_sge *sge, uint32_t num, uint32_t pd,
	       uint32_t access, uint64_t epoch);
int sgl_copy_out(struct snic_nic *nic, struct snic_sgl *sgl, void *dst,
		 uint32_t len);
/* The same as mr_read_crc does for one MR. */
int sgl_copy_out_crc(struct snic_nic *nic, struct snic_sgl *sgl, void *dst,
		     uint32_t len, uint32_t *crc);
int sgl_copy_in(struct snic_nic *nic, struct snic_sgl *sgl, const void *src,
		uint32_t len);
/* sgl_copy_in of a received payload with the ICRC's register folded in
 * (mr_write_crc), where the len bytes lie in what is left of the
 * cursor's SGE and in one physically contiguous piece: 0 written and
 * folded, the cursor NOT moved (sgl_skip moves it once the ICRC is
 * known good); 1 nothing written (anything else: the caller checks the
 * ICRC and copies with sgl_copy_in, which also reports a failure). */
int sgl_copy_in_crc(struct snic_nic *nic, const struct snic_sgl *sgl,
		    const void *src, uint32_t len, uint32_t *crc);
void sgl_skip(struct snic_sgl *sgl, uint32_t len);

/* cq.c */
int cq_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_cq *in, uint32_t *cqn);
int cq_destroy(struct snic_nic *nic, unsigned ctx, uint32_t cqn);
/* The checks of a CQ ring and doorbell record (CREATE_CQ, RESIZE_CQ). */
int cq_ring_args_ok(const struct snic_nic *nic, unsigned ctx, uint32_t cnt,
		    uint64_t ring_pa, uint64_t dbrec_pa);
/* cq_resize.c */
int cq_resize(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_resize_cq *in, uint32_t *moved);
struct snic_cq *cq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t cqn,
			  uint32_t *idx);
void cq_post(struct snic_nic *nic, uint32_t cq_idx, struct snic_cqe *cqe,
	     bool solicited);
/* cq->error: relaxed, as a hint for the other cores (a CQE that claimed
 * its slot before the CQ failed is still written) */
static inline bool cq_failed(const struct snic_cq *cq)
{
	return atomic_load_explicit(&cq->error, memory_order_relaxed);
}

static inline void cq_set_failed(struct snic_cq *cq)
{
	atomic_store_explicit(&cq->error, true, memory_order_relaxed);
}

/* The position of the CQ's next CQE: written (one core) or claimed
 * (several, cq.c cq_claim; between passes every claim is written). */
static inline uint32_t cq_produced(const struct snic_nic *nic,
				   const struct snic_cq *cq)
{
	return nic->core.xc ? atomic_load_explicit(&cq->claimed,
						   memory_order_relaxed)
			    : cq->pi;
}
/* Several cores: core k's CQs it wrote CQEs into this pass, to core 0
 * (SNIC_XC_CQ_DIRTY, at the end of its pass); core 0: such a CQ
 * (cq_dirty_seen), and the CQ's overrun or failed write another core
 * found (SNIC_XC_CQ_OVERRUN) */
void cq_dirty_send(struct snic_nic *nic);
void cq_dirty_seen(struct snic_nic *nic, uint32_t cq_idx, bool solicited);
void cq_overrun_seen(struct snic_nic *nic, uint32_t cq_idx, bool overrun);
/* A run of CQEs for one CQ and one QP (cq.c drops a failed run's as
 * the first one's QP's), written together (cq_run_flush): one ring check
 * and two DMAs for the run instead of a call, a check and two DMAs per
 * CQE.  Its holder flushes it before anything else can post to that
 * CQ, so the CQEs keep their order. */
#define SNIC_CQ_RUN 8
struct cq_run {
	uint32_t cq_idx;
	uint32_t n;
	struct snic_cqe cqe[SNIC_CQ_RUN];
};
void cq_run_write(struct snic_nic *nic, struct cq_run *r);
/* Write what the run holds (a single CQE as cq_post does). */
static inline void cq_run_flush(struct snic_nic *nic, struct cq_run *r)
{
	if (r->n == 1) {
		r->n = 0;
		cq_post(nic, r->cq_idx, &r->cqe[0], false);
	} else if (r->n) {
		cq_run_write(nic, r);
	}
}
void cq_flush_events(struct snic_nic *nic);

/* srq.c: shared receive queues */
int srq_create(struct snic_nic *nic, unsigned ctx,
	       const struct snic_cmd_create_srq *in, uint32_t *srqn);
int srq_modify(struct snic_nic *nic, unsigned ctx,
	       const struct snic_cmd_modify_srq *in);
int srq_query(struct snic_nic *nic, unsigned ctx, uint32_t srqn,
	      struct snic_srq_attr *out);
int srq_destroy(struct snic_nic *nic, unsigned ctx, uint32_t srqn);
struct snic_srq *srq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t srqn,
			    uint32_t *idx);

/* xrcd.c: XRC domains, XRC SRQs and XRC_RECV QPs (hostif.h "XRC") */
int xrcd_open(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_open_xrcd *in, uint32_t *xrcdn);
int xrcd_close(struct snic_nic *nic, unsigned ctx, uint32_t xrcdn);
void xrcd_ctx_gone(struct snic_nic *nic, unsigned ctx);
/* CREATE_SRQ with SNIC_SRQ_F_XRC: bind s to its domain and CQ. */
int xrc_srq_bind(struct snic_nic *nic, unsigned ctx, struct snic_srq *s,
		 const struct snic_cmd_create_srq *in);
void xrc_srq_release(struct snic_nic *nic, uint32_t srq_idx);
/* CREATE_QP of an XRC_RECV QP in the domain in->xrcd. */
int xrc_recv_qp_create(struct snic_nic *nic, unsigned ctx,
		       const struct snic_cmd_create_qp_ext *in, uint32_t *qpn);
void xrc_recv_qp_release(struct snic_nic *nic, struct snic_qp *qp);
/* The XRC SRQ an XRC_RECV QP's request names (XRCETH): SNIC_WC_SUCCESS
 * with the QP bound to it, else the NAK code to answer. */
int xrc_recv_bind(struct snic_nic *nic, struct snic_qp *qp, uint32_t srqn);

/* qp.c: the QP table, create / destroy / query */
/* A fresh QP of ctx with the rings of in (checked), no PD or CQ yet;
 * NULL when the table is full. */
struct snic_qp *qp_claim(struct snic_nic *nic, unsigned ctx,
			 const struct snic_cmd_create_qp *in, int srq);
int qp_create_args_ok(const struct snic_nic *nic, unsigned ctx,
		      const struct snic_cmd_create_qp *in);
int qp_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_qp *in, int srq, uint32_t *qpn);
/* CREATE_QP with the extension fields (SRQ binding). */
int qp_create_ext(struct snic_nic *nic, unsigned ctx,
		  const struct snic_cmd_create_qp_ext *in, uint32_t *qpn);
int qp_destroy(struct snic_nic *nic, unsigned ctx, uint32_t qpn);
int qp_query(struct snic_nic *nic, unsigned ctx, uint32_t qpn,
	     struct snic_qp_attr *out);
/* The QP a packet's destination QPN names, NULL when none (a stale QPN
 * of a reused slot does not match).  Inline: one per received frame. */
static inline struct snic_qp *qp_by_qpn(struct snic_nic *nic, uint32_t qpn)
{
	struct snic_qp *qp = &nic->qps[handle_idx(qpn)];

	return qp->in_use && qp->qpn == qpn ? qp : NULL;
}
struct snic_qp *qp_lookup(struct snic_nic *nic, unsigned ctx, uint32_t qpn);

/* Where a thousand QPs take turns their state is out of the cache: the
 * requester's list asks for the next QP's hot lines (struct snic_qp: hot
 * fields first) while it works on this one (issue 11 part 6).  A hint:
 * never faults, nothing without the compiler's builtin; always inlined,
 * since a function whose only effect is a prefetch counts as having none
 * and GCC drops the calls it did not inline. */
#if defined(__GNUC__)
#define snic_prefetch(p) __builtin_prefetch((p), 1, 3)
#define SNIC_PREFETCH_FN static inline __attribute__((always_inline))
#else
#define snic_prefetch(p) ((void)(p))
#define SNIC_PREFETCH_FN static inline
#endif

/* What sending touches: the first 256 bytes (header, rings, requester,
 * completer, timers), the header template and the cursor. */
SNIC_PREFETCH_FN void qp_prefetch_req(const struct snic_qp *qp)
{
	for (unsigned off = 0; off < 256; off += 64)
		snic_prefetch((const uint8_t *)qp + off);
	snic_prefetch(&qp->tmpl);
	snic_prefetch(&qp->cur);
	snic_prefetch((const uint8_t *)&qp->cur + 64);
	snic_prefetch(&qp->cur.sgl.sge[0]);
}

/* qp_core.c: which core runs a QP */
int qp_want_core(const struct snic_nic *nic, uint32_t qp_type, int srq);
bool qp_slot_fits(const struct snic_nic *nic, uint32_t idx, int want);

/* The core of QP slot idx: fixed for the slot's life, so a destroyed
 * QP's stale work-list and wheel entries stay on the core that will run
 * the slot's next QP (qp_claim keeps its list flags). */
static inline unsigned qp_slot_core(const struct snic_nic *nic, uint32_t idx)
{
	return nic->sh->xc.ncores > 1 ? idx % nic->sh->xc.ncores : 0;
}

/* qp_slots.c: the slot CREATE_QP takes (lowest free on core `want`,
 * -1: any; not lingering when one is; SNIC_MAX_QP: none); a slot taken
 * by ctx or given back (on ctx's list of QPs, sh->ctx_qp_head). */
#define QP_SLOT_NONE 0xffffu
void qp_slots_init(struct snic_nic *nic);
uint32_t qp_free_slot(const struct snic_nic *nic, int want);
void qp_slot_take(struct snic_nic *nic, uint32_t i, unsigned ctx);
void qp_slot_put(struct snic_nic *nic, uint32_t i, unsigned ctx);

/* qp_modify.c: ibv_modify_qp */
bool qp_conn_take(struct snic_nic *nic, struct snic_qp *qp);
void qp_conn_give(struct snic_nic *nic, struct snic_qp *qp);
int qp_modify(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_modify_qp *in);

/* qp_states.c: the state table [type][current][next] */
bool qp_valid_transition(uint8_t cur, uint8_t next, uint32_t mask);
bool qp_valid_transition_type(uint8_t type, uint8_t cur, uint8_t next,
			      uint32_t mask);
const char *qp_state_name(uint8_t state);

/* cqe.c: the send and the receive CQE builders */
void qp_send_cqe(struct snic_nic *nic, struct snic_qp *qp,
		 const struct snic_inflight *f, uint8_t status);
/* The same CQE into run (r->cq_idx is the QP's send CQ), flushed when
 * full. */
void qp_send_cqe_run(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_inflight *f, uint8_t status,
		     struct cq_run *r);
void qp_recv_cqe(struct snic_nic *nic, struct snic_qp *qp, uint8_t status,
		 uint8_t opcode, const struct roce_hdrs *h);
/* One of qp's CQEs was dropped (its CQ in error): the QP to error. */
void qp_cq_lost(struct snic_nic *nic, struct snic_qp *qp);

/* qp_flush.c: errors and flushing */
void qp_to_error(struct snic_nic *nic, struct snic_qp *qp,
		 enum snic_event_type ev);
void qp_to_error_later(struct snic_nic *nic, struct snic_qp *qp,
		       enum snic_event_type ev);
void qp_flush(struct snic_nic *nic, struct snic_qp *qp);

/* qp_sched.c: doorbells, work lists, deadlines, neighbours */
bool qp_read_dbrec(struct snic_nic *nic, struct snic_qp *qp);
bool qp_read_rq_pi(struct snic_nic *nic, struct snic_qp *qp);
void qp_doorbell(struct snic_nic *nic, struct snic_qp *qp);
void qp_req_schedule(struct snic_nic *nic, struct snic_qp *qp);
void qp_resp_schedule(struct snic_nic *nic, struct snic_qp *qp);
void qp_timer_stop(struct snic_nic *nic, struct snic_qp *qp);
void qp_neigh_update(struct snic_nic *nic, const uint8_t ip[16],
		     const uint8_t mac[6]);
void qp_neigh_set(struct snic_nic *nic, struct snic_qp *qp,
		  const uint8_t mac[6]);

/* Something the QP's frame header template was made from changed (the
 * destination MAC, IP, traffic class or hop limit; the source port and
 * the NIC's addresses never do): the next frame makes it again.  Every
 * writer of those fields calls it, so the data path checks one flag. */
static inline void qp_path_changed(struct snic_qp *qp)
{
	qp->tmpl.valid = false;
}

static inline uint32_t qp_idx(const struct snic_nic *nic,
			      const struct snic_qp *qp)
{
	return (uint32_t)(qp - nic->qps);
}

static inline bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Slot idx of a ring of cnt (a power of two) entries of 2^stride_log. */
static inline uint64_t ring_slot_pa(uint64_t base, uint32_t idx, uint32_t cnt,
				    uint8_t stride_log)
{
	return base + ((uint64_t)(idx & (cnt - 1)) << stride_log);
}

static inline uint64_t qp_sq_wqe_pa(const struct snic_qp *qp, uint32_t idx)
{
	return ring_slot_pa(qp->sq_pa, idx, qp->sq_cnt, qp->sq_stride_log);
}

static inline uint64_t qp_rq_wqe_pa(const struct snic_qp *qp, uint32_t idx)
{
	return ring_slot_pa(qp->rq_pa, idx, qp->rq_cnt, qp->rq_stride_log);
}

/* bytes / the QP's path MTU, without a division on the data path: the
 * MTU is a power of two (256..4096, mtu_enum_to_bytes). */
static inline uint32_t qp_mtu_div(const struct snic_qp *qp, uint32_t bytes)
{
	return bytes >> __builtin_ctz(qp->mtu);
}

/* Packets of `bytes` at the path MTU, rounded up; 64-bit so that a length
 * from the wire near 2^32 cannot wrap to a small count. */
static inline uint32_t qp_mtu_pkts(const struct snic_qp *qp, uint32_t bytes)
{
	return (uint32_t)(((uint64_t)bytes + qp->mtu - 1) >>
			  __builtin_ctz(qp->mtu));
}

/* The QP's id on the core's timer wheel (0 means none there). */
static inline uint16_t qp_tw_id(const struct snic_nic *nic,
				const struct snic_qp *qp)
{
	return (uint16_t)(qp_idx(nic, qp) + 1);
}

#endif /* SNIC_OBJECTS_H */
