/* SPDX-License-Identifier: MIT */
/*
 * Firmware core internals: the NIC object, its fixed pools (PD, MR + MTT,
 * CQ, QP), counters, and the prototypes each module offers the others.
 * Nothing here is visible to boards (they use snic/fw.h).
 */
#ifndef SNIC_NIC_H
#define SNIC_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snic/fw.h"
#include "snic/hal.h"
#include "snic/hostif.h"
#include "roce_wire.h"

#define SNIC_BURST          32   /* RX / TX burst (DPDK's usual)          */
#define SNIC_TXQ_SIZE       1024 /* frames waiting for the port           */
#define SNIC_LOOPQ_SIZE     1024 /* frames sent to ourselves (loopback)   */
#define SNIC_TX_BUDGET      128  /* new frames per poll pass              */
#define SNIC_QP_TX_BUDGET   16   /* frames per QP per turn (fairness)     */
#define SNIC_CMD_BUDGET     8    /* commands per poll pass                */
#define SNIC_INFLIGHT       128  /* send WQEs in flight per QP            */
#define SNIC_ACKREQ_EVERY   16   /* AckReq at least every N packets       */
#define SNIC_READ_MAX_PSNS  (1u << 22) /* PSNs one READ may span        */
#define SNIC_PSN_WINDOW     8192 /* outstanding PSNs per QP (< 2^23, so
				  * 24-bit PSN distances stay unambiguous) */
#define SNIC_TW_SLOTS       256  /* timer wheel: slots ...                */
#define SNIC_TW_SHIFT       13   /* ... of 2^13 ns (8.2 us) each          */
#define SNIC_LINGER_NS      (1000ull * 1000 * 1000) /* a destroyed RC QP
				  * re-ACKs duplicates this long (rc_responder.c) */
#define SNIC_NEIGH_SIZE     64
#define SNIC_ARP_RETRY_NS   (100u * 1000 * 1000)
#define SNIC_HEARTBEAT_NS   (10u * 1000 * 1000)
#define SNIC_FW_VER_MAJOR   0
#define SNIC_FW_VER_MINOR   1
#define SNIC_FW_VER_SUB     0
#define SNIC_VENDOR_ID      0x1af4 /* placeholder: no PCI vendor of ours  */
#define SNIC_VENDOR_PART    0x5301 /* not an mlx5/EFA id: perftest takes
				    * the generic verbs paths              */

/* Counters: one enum and a matching name table (nic.c). */
#define SNIC_COUNTERS(X)                                                     \
	X(rx_frames) X(rx_bytes) X(tx_frames) X(tx_bytes)                    \
	X(rx_drop_not_roce) X(rx_drop_truncated) X(rx_drop_ip_hdr)           \
	X(rx_drop_udp_len) X(rx_drop_bad_opcode) X(rx_drop_bth)              \
	X(rx_drop_icrc) X(rx_drop_not_for_us) X(rx_drop_unknown_qpn)         \
	X(rx_drop_qp_state) X(rx_drop_opcode_seq) X(rx_drop_bad_length)      \
	X(rx_drop_bad_psn) X(rx_drop_unexpected) X(rx_drop_wrong_peer)      \
	X(rx_dup_requests) X(rx_arp)                                         \
	X(rx_drop_qkey) X(rx_drop_no_recv) X(loopback_frames)                \
	X(tx_drop_no_neigh)                                                  \
	X(nak_seq_sent) X(nak_inv_req_sent) X(nak_access_sent)               \
	X(nak_rem_op_sent) X(rnr_nak_sent)                                   \
	X(nak_seq_recv) X(nak_inv_req_recv) X(nak_access_recv)               \
	X(nak_rem_op_recv) X(rnr_nak_recv)                                   \
	X(acks_sent) X(acks_recv) X(retransmits)                             \
	X(tx_no_buffer) X(tx_queue_full)                                     \
	X(arp_requests_sent) X(arp_replies_sent) X(neigh_learned)            \
	X(wqe_errors) X(dma_errors) X(cq_overruns) X(eq_overruns)            \
	X(commands) X(command_errors) X(doorbells) X(doorbells_spurious)     \
	X(tx_drop_link_down) X(link_down_events)                             \
	X(qp_errors) X(send_wqes) X(recv_wqes) X(read_responses)             \
	X(atomics) X(ctx_reclaimed)                                          \
	X(timeouts) X(retry_exc_errors) X(read_reissues)                     \
	X(dup_reads_replayed) X(dup_atomics_replayed) X(dup_rd_unmatched)   \
	X(linger_acks)

enum snic_counter {
#define SNIC_CNT_ENUM(n) SNIC_CNT_##n,
	SNIC_COUNTERS(SNIC_CNT_ENUM)
#undef SNIC_CNT_ENUM
	SNIC_CNT_MAX
};

#define CNT_INC(nic, n)    ((nic)->cnt[SNIC_CNT_##n]++)
#define CNT_ADD(nic, n, v) ((nic)->cnt[SNIC_CNT_##n] += (v))

/* Per-QP counters (published per QP by stats.c).  Each name is also a NIC
 * counter: QCNT_INC counts the event on the NIC and on the QP at once. */
#define SNIC_QP_COUNTERS(X)                                                  \
	X(rx_frames) X(rx_bytes) X(tx_frames)                                \
	X(rx_drop_qp_state) X(rx_drop_opcode_seq) X(rx_drop_bad_length)      \
	X(rx_drop_bad_psn) X(rx_drop_unexpected) X(rx_dup_requests)          \
	X(nak_seq_sent) X(nak_inv_req_sent) X(nak_access_sent)               \
	X(nak_rem_op_sent) X(rnr_nak_sent)                                   \
	X(nak_seq_recv) X(nak_inv_req_recv) X(nak_access_recv)               \
	X(nak_rem_op_recv) X(rnr_nak_recv)                                   \
	X(acks_sent) X(acks_recv) X(retransmits) X(send_wqes) X(recv_wqes)

enum snic_qp_counter {
#define SNIC_QCNT_ENUM(n) SNIC_QCNT_##n,
	SNIC_QP_COUNTERS(SNIC_QCNT_ENUM)
#undef SNIC_QCNT_ENUM
	SNIC_QCNT_MAX
};

#define QCNT_INC(nic, qp, n) (CNT_INC(nic, n), (qp)->qcnt[SNIC_QCNT_##n]++)
#define QCNT_ADD(nic, qp, n, v) \
	(CNT_ADD(nic, n, v), (qp)->qcnt[SNIC_QCNT_##n] += (v))

/* ---------------------------------------------------------------------- */
/* Objects.  Every object records its owning context slot.                */

struct snic_pd {
	bool in_use;
	uint8_t ctx;
	uint16_t gen;
	uint32_t refs;          /* MRs and QPs using it                      */
};

struct snic_mr {
	bool in_use;
	uint8_t ctx;
	uint8_t gen;            /* key = idx << 8 | gen                      */
	uint32_t pd;            /* PD index                                  */
	uint32_t access;        /* enum snic_access                          */
	uint64_t iova, length;
	uint32_t mtt;           /* first MTT entry                           */
	uint32_t npages;
	uint32_t page_off;      /* iova's offset within its first page       */
};

struct snic_cq {
	bool in_use;
	bool dirty;             /* CQEs written this pass: check arming      */
	bool error;             /* overrun: CQ unusable                      */
	bool sol_pending;       /* solicited/error CQE since the last event  */
	uint8_t ctx;
	uint16_t gen;
	uint32_t cnt;           /* CQEs in the ring (power of two)           */
	uint32_t pi;            /* CQEs written                              */
	uint32_t ci_cache;      /* last consumer index read from the host    */
	uint32_t arm_seen;      /* arm_sn already answered with an event     */
	uint32_t refs;          /* QPs using it                              */
	uint64_t ring_pa, dbrec_pa;
};

/* A send WQE the requester has put on the wire and not yet completed. */
struct snic_inflight {
	uint64_t wr_id;
	uint32_t wqe_idx;
	uint32_t first_psn, last_psn;
	uint32_t len;
	uint8_t opcode;         /* enum snic_wr_opcode                       */
	uint8_t signaled;
	uint8_t done;           /* READ / atomic: response data arrived      */
	uint8_t rsvd;
};

/* Message cursor over a scatter/gather list (validated SGEs). */
struct snic_sgl {
	struct snic_wqe_sge sge[SNIC_MAX_SGE]; /* validated, zero-length dropped */
	uint32_t num;
	uint32_t idx;           /* current SGE                               */
	uint32_t off;           /* offset inside it                          */
	uint64_t total;
};

/* The requester's current WQE (being segmented onto the wire). */
struct snic_req_cur {
	bool valid;
	struct snic_send_wqe hdr;
	struct snic_sgl sgl;
	uint8_t inline_data[SNIC_MAX_INLINE];
	uint32_t wqe_idx;
	uint32_t len;           /* message length                            */
	uint32_t sent;          /* payload bytes already sent                */
	uint32_t first_psn;
	uint32_t npkts;         /* packets (PSNs) this message takes          */
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

struct snic_resp {
	uint32_t epsn;          /* expected PSN                              */
	uint32_t msn;           /* completed request messages                */
	uint32_t rq_ci;         /* next RQ WQE to consume                    */
	uint32_t rq_pi;         /* last producer index read from the host    */
	bool nak_sent;          /* one seq NAK per gap (IBTA 9.7.5.2.2)      */
	bool ack_pending;
	uint8_t last_op;        /* opcode of the previous request packet     */
	/* multi-packet SEND in progress */
	bool in_send;
	struct snic_sgl rsgl;
	uint64_t recv_wr_id;
	uint32_t recv_len;
	/* multi-packet WRITE in progress */
	bool in_write;
	uint32_t wr_mr;
	uint64_t wr_va;
	uint32_t wr_left, wr_len;
	/* READ responses */
	struct snic_rd_res rd[SNIC_MAX_RD_ATOM];
	uint32_t rd_head, rd_tail; /* rd_head: oldest that may be pending;
				    * [rd_tail - SNIC_MAX_RD_ATOM, rd_tail) is
				    * the history duplicates are matched in */
	uint32_t rd_npend;      /* resources with pending set                */
};

struct snic_qp {
	bool in_use;
	bool on_req_list;       /* in nic->req_list (has something to send)  */
	bool on_resp_list;      /* in nic->resp_list (READ responses due)    */
	bool dmac_valid;
	uint8_t ctx;
	uint8_t state;          /* enum snic_qp_state                        */
	uint16_t gen;
	uint32_t qpn;
	uint32_t pd, scq, rcq;  /* indexes                                   */
	/* rings in host memory */
	uint64_t sq_pa, rq_pa, dbrec_pa;
	uint32_t sq_cnt, rq_cnt;
	uint8_t sq_stride_log, rq_stride_log;
	bool sq_sig_all;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	/* attributes as last modified (source of QUERY_QP) */
	struct snic_qp_attr attr;
	uint32_t mtu;           /* path MTU in bytes                          */
	uint8_t dmac[6];
	uint32_t dip;
	uint16_t sport;
	uint64_t arp_next_ns;
	/* requester / completer */
	uint32_t sq_pi;         /* producer index last read from the host    */
	uint32_t sq_fetch;      /* next WQE to start                          */
	uint32_t npsn;          /* next PSN to send                           */
	uint32_t psn_hi;        /* PSN of the last packet sent                */
	uint32_t rd_out;        /* READ/atomic requests in flight             */
	struct snic_inflight infl[SNIC_INFLIGHT];
	uint32_t infl_head, infl_tail; /* head: oldest                       */
	struct snic_req_cur cur;
	/* completer */
	uint32_t acked_psn;     /* highest PSN a plain ACK covered            */
	bool acked_valid;
	bool rd_active;         /* the oldest READ's response is arriving    */
	struct snic_sgl rd_sgl;
	uint32_t rd_psn;        /* next READ response PSN expected           */
	uint64_t wait_until;    /* RNR back-off: requester idle until then   */
	uint8_t rnr_left;       /* RNR retries left (7 = infinite)           */
	uint8_t retry_left;     /* transport retries left (retry_cnt)        */
	bool rd_gap_valid;      /* a READ was re-issued from rd_gap_psn      */
	uint32_t rd_gap_psn;
	uint64_t rto_at;        /* transport timer deadline, 0 = stopped     */
	/* timer wheel (timer.c): one entry per QP, filed under tw_tick */
	bool on_wheel;
	uint16_t tw_next, tw_prev; /* QP index + 1, 0 = none                 */
	uint64_t tw_tick;
	uint64_t linger_until;  /* destroyed: duplicates re-ACKed until then */
	/* responder */
	struct snic_resp resp;
	/* counters, published by stats.c */
	uint64_t qcnt[SNIC_QCNT_MAX];
	/* transport type and shared receive queue (ud.c, srq.c) */
	uint8_t type;           /* enum snic_qp_type                          */
	bool has_srq;
	bool uc_keep;           /* UC: a taken RECV waits for the next message */
	uint16_t srq;           /* SRQ index                                  */
};

/* A shared receive queue (srq.c). */
struct snic_srq {
	bool in_use;
	uint8_t ctx;
	uint16_t gen;
	uint32_t pd;            /* index                                     */
	uint32_t cnt;           /* WQEs in the ring (power of two)           */
	uint8_t stride_log;
	uint32_t max_sge;
	uint32_t limit;         /* armed limit, 0 = not armed                */
	uint32_t ci;            /* next WQE to take                          */
	uint32_t pi;            /* producer index last read from the host    */
	uint32_t refs;          /* QPs using it                              */
	uint64_t ring_pa, dbrec_pa;
};

struct snic_neigh {
	uint32_t ip;
	uint8_t mac[6];
	bool valid;
};

struct snic_nic {
	const struct snic_hal *hal;
	void *hal_ctx;
	const struct snic_hal_ops *ops;
	uint8_t *bar;
	struct snic_bar_hdr *hdr;
	struct snic_doorbells *db;
	struct snic_nic_config cfg;
	char name[16];
	uint64_t now;           /* ns, read once per poll pass                */
	uint64_t next_heartbeat;
	uint32_t active_mtu;    /* bytes                                      */
	uint32_t active_mtu_enum;
	bool ctx_open[SNIC_MAX_CTX];
	uint32_t eq_pi[SNIC_MAX_CTX]; /* our copy: the host may scribble     */
	/* free TX buffers taken from the HAL in bursts */
	struct snic_pkt *pkt_cache[SNIC_BURST];
	uint32_t npkt_cache;

	struct snic_pd pds[SNIC_MAX_PD];
	struct snic_mr mrs[SNIC_MAX_MR];
	struct snic_cq cqs[SNIC_MAX_CQ];
	struct snic_qp qps[SNIC_MAX_QP];
	uint32_t mtt[SNIC_MAX_MTT];
	/* MTT allocator: free extents (start, len), sorted by start */
	uint32_t mtt_free_start[SNIC_MAX_MR + 1];
	uint32_t mtt_free_len[SNIC_MAX_MR + 1];
	uint32_t mtt_free_n;

	/* work lists: QP indexes, each QP at most once per list */
	uint16_t req_list[SNIC_MAX_QP];
	uint32_t req_head, req_tail;
	uint16_t resp_list[SNIC_MAX_QP];
	uint32_t resp_head, resp_tail;
	uint16_t dirty_cqs[SNIC_MAX_CQ];
	uint32_t ndirty;
	/* timer wheel of QPs with a deadline (timer.c) */
	uint16_t tw_slot[SNIC_TW_SLOTS]; /* first QP index + 1, 0 = empty    */
	uint64_t tw_done;       /* last tick processed                       */

	/* TX queue: frames built, not yet taken by the port */
	struct snic_pkt *txq[SNIC_TXQ_SIZE];
	uint32_t txq_head, txq_tail;
	uint32_t tx_budget;     /* frames the requester/responder may still
				 * build in this pass                         */

	struct snic_neigh neigh[SNIC_NEIGH_SIZE];
	uint32_t neigh_next;

	uint64_t cnt[SNIC_CNT_MAX];

	/* statistics area in the BAR (stats.c) */
	struct snic_stats *stats;
	uint64_t next_stats;
	uint32_t stats_qp_next; /* next QP entry to refresh                  */
	uint32_t reset_seen;    /* last reset_req honoured                   */
	bool link_up;           /* port 0, refreshed with the statistics     */

	struct snic_srq srqs[SNIC_MAX_SRQ];

	/* loopback: frames sent to our own MAC, drained by rx_poll (nic.c) */
	struct snic_pkt *loopq[SNIC_LOOPQ_SIZE];
	uint32_t loopq_head, loopq_tail;
};

/* ---------------------------------------------------------------------- */
/* nic.c */
void nic_log(struct snic_nic *nic, int level, const char *msg);
struct snic_pkt *nic_pkt_alloc(struct snic_nic *nic);
void nic_tx(struct snic_nic *nic, struct snic_pkt *pkt);
uint32_t nic_tx_room(const struct snic_nic *nic);
int nic_dma_read(struct snic_nic *nic, uint64_t pa, void *dst, uint32_t len);
int nic_dma_write(struct snic_nic *nic, uint64_t pa, const void *src,
		  uint32_t len);
void nic_event(struct snic_nic *nic, unsigned ctx, uint32_t type,
	       uint32_t obj);
void nic_port_event(struct snic_nic *nic, bool up);

/* cmd.c */
unsigned cmd_poll(struct snic_nic *nic, uint64_t bits);
void ctx_destroy(struct snic_nic *nic, unsigned ctx);

/* pd.c */
int pd_alloc(struct snic_nic *nic, unsigned ctx, uint32_t *pdn);
int pd_dealloc(struct snic_nic *nic, unsigned ctx, uint32_t pdn);
struct snic_pd *pd_lookup(struct snic_nic *nic, unsigned ctx, uint32_t pdn,
			  uint32_t *idx);

/* mr.c */
int mr_reg(struct snic_nic *nic, unsigned ctx,
	   const struct snic_cmd_reg_mr *in, uint32_t *key);
int mr_dereg(struct snic_nic *nic, unsigned ctx, uint32_t key);
void mr_init(struct snic_nic *nic);
/* Key checks: the MR for key, in PD pd, allowing `access` over
 * [va, va + len).  Returns the MR or NULL. */
struct snic_mr *mr_check(struct snic_nic *nic, uint32_t key, uint32_t pd,
			 uint32_t access, uint64_t va, uint64_t len);
int mr_read(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	    void *dst, uint32_t len);
int mr_write(struct snic_nic *nic, const struct snic_mr *mr, uint64_t va,
	     const void *src, uint32_t len);
int mr_va_to_pa(const struct snic_nic *nic, const struct snic_mr *mr,
		uint64_t va, uint64_t *pa);
/* Validate a list of SGEs against lkeys (PD, access, bounds). */
int sgl_load(struct snic_nic *nic, struct snic_sgl *sgl,
	     const struct snic_wqe_sge *sge, uint32_t num, uint32_t pd,
	     uint32_t access);
int sgl_copy_out(struct snic_nic *nic, struct snic_sgl *sgl, void *dst,
		 uint32_t len);
int sgl_copy_in(struct snic_nic *nic, struct snic_sgl *sgl, const void *src,
		uint32_t len);

/* cq.c */
int cq_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_cq *in, uint32_t *cqn);
int cq_destroy(struct snic_nic *nic, unsigned ctx, uint32_t cqn);
struct snic_cq *cq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t cqn,
			  uint32_t *idx);
void cq_post(struct snic_nic *nic, uint32_t cq_idx, struct snic_cqe *cqe,
	     bool solicited);
void cq_flush_events(struct snic_nic *nic);

/* qp.c */
int qp_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_qp *in, uint32_t *qpn);
int qp_destroy(struct snic_nic *nic, unsigned ctx, uint32_t qpn);
int qp_modify(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_modify_qp *in);
int qp_query(struct snic_nic *nic, unsigned ctx, uint32_t qpn,
	     struct snic_qp_attr *out);
struct snic_qp *qp_by_qpn(struct snic_nic *nic, uint32_t qpn);
void qp_to_error(struct snic_nic *nic, struct snic_qp *qp, uint32_t event);
void qp_flush(struct snic_nic *nic, struct snic_qp *qp);
void qp_doorbell(struct snic_nic *nic, struct snic_qp *qp);
void qp_req_schedule(struct snic_nic *nic, struct snic_qp *qp);
void qp_resp_schedule(struct snic_nic *nic, struct snic_qp *qp);
void qp_send_cqe(struct snic_nic *nic, struct snic_qp *qp,
		 const struct snic_inflight *f, uint8_t status);
bool qp_valid_transition(uint8_t cur, uint8_t next, uint32_t mask);

/* neigh.c */
bool neigh_lookup(struct snic_nic *nic, uint32_t ip, uint8_t mac[6]);
void neigh_learn(struct snic_nic *nic, uint32_t ip, const uint8_t mac[6]);
void neigh_resolve(struct snic_nic *nic, uint32_t ip);
void neigh_rx_arp(struct snic_nic *nic, struct snic_pkt *pkt);
void neigh_announce(struct snic_nic *nic);

/* pkt.c: common header filling for a QP's packets */
void pkt_fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
		   struct roce_hdrs *h, uint8_t opcode, uint32_t psn);
struct snic_pkt *pkt_build(struct snic_nic *nic, struct roce_hdrs *h,
			   const void *payload, uint32_t len);

/* rc_requester.c */
unsigned req_poll(struct snic_nic *nic);
void req_rewind(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn);

/* timer.c: transport and RNR timers on a per-NIC wheel */
unsigned timer_poll(struct snic_nic *nic);
void timer_arm(struct snic_nic *nic, struct snic_qp *qp);
void timer_cancel(struct snic_nic *nic, struct snic_qp *qp);
void timer_progress(struct snic_nic *nic, struct snic_qp *qp);
void timer_sent(struct snic_nic *nic, struct snic_qp *qp);

/* rc_responder.c */
void resp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
unsigned resp_poll(struct snic_nic *nic);
void resp_flush_acks(struct snic_nic *nic, struct snic_qp *qp);
bool resp_linger_rx(struct snic_nic *nic, const struct roce_hdrs *h);

/* rc_completer.c */
void comp_rx(struct snic_nic *nic, struct snic_qp *qp,
	     const struct roce_hdrs *h);
void comp_timeout(struct snic_nic *nic, struct snic_qp *qp);

/* rx.c */
unsigned rx_poll(struct snic_nic *nic);
uint16_t nic_loop_take(struct snic_nic *nic, struct snic_pkt **pkts, uint16_t n);

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
/* CREATE_QP with the extension fields (SRQ binding). */
int qp_create_ext(struct snic_nic *nic, unsigned ctx,
		  const struct snic_cmd_create_qp_ext *in, uint32_t *qpn);
void qp_release_srq(struct snic_nic *nic, struct snic_qp *qp);
/* The responder's RECV for a QP: from its SRQ or its RQ.  Fills
 * qp->resp (recv_wr_id, rsgl, in_send); false when none is posted. */
bool recv_take_any(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st);
bool srq_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st);
/* A QP with an SRQ goes to error: only the RECV it holds is flushed. */
void srq_flush_qp(struct snic_nic *nic, struct snic_qp *qp);

/* ud.c: the unreliable transports, UD and UC */
void ud_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h);
bool ud_req_qp(struct snic_nic *nic, struct snic_qp *qp);
bool qp_valid_transition_type(uint8_t type, uint8_t cur, uint8_t next,
			      uint32_t mask);

/* stats.c */
void stats_init(struct snic_nic *nic);
void stats_poll(struct snic_nic *nic);

static inline uint32_t qp_idx(const struct snic_nic *nic,
			      const struct snic_qp *qp)
{
	return (uint32_t)(qp - nic->qps);
}

static inline uint32_t mtu_enum_to_bytes(uint32_t e)
{
	return (e >= 1 && e <= 5) ? (128u << e) : 0;
}

#endif /* SNIC_NIC_H */
