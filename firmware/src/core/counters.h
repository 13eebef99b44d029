/* SPDX-License-Identifier: MIT */
/*
 * Counters: one enum and a matching name table (counters.c).  The NIC
 * counts in struct snic_core; per-QP counters live in each QP (objects/)
 * and are published per QP by nic/stats.c.
 */
#ifndef SNIC_CORE_COUNTERS_H
#define SNIC_CORE_COUNTERS_H

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
	X(nak_rem_op_recv) X(rnr_nak_recv) X(nak_seq_rnr)                    \
	X(acks_sent) X(acks_recv) X(retransmits)                             \
	X(tx_no_buffer) X(tx_queue_full)                                     \
	X(arp_requests_sent) X(arp_replies_sent) X(neigh_learned)            \
	X(wqe_errors) X(dma_errors) X(cq_overruns) X(eq_overruns)            \
	X(commands) X(command_errors) X(doorbells) X(doorbells_spurious)     \
	X(doorbells_foreign)                                                 \
	X(tx_drop_link_down) X(link_down_events)                             \
	X(qp_errors) X(send_wqes) X(req_one_sent) X(recv_wqes)               \
	X(read_responses)                                                    \
	X(atomics) X(ctx_reclaimed) X(bar_restored)                        \
	X(timeouts) X(timeouts_backlog) X(retry_exc_errors) X(read_reissues) \
	X(dup_reads_replayed) X(dup_atomics_replayed) X(dup_rd_unmatched)   \
	X(linger_acks)                                                       \
	X(cm_mads_recv) X(cm_mads_sent) X(cm_mads_retried) X(cm_timeouts)    \
	X(cm_rej_sent) X(cm_rej_recv) X(cm_fw_replies) X(cm_drop_bad_mad)    \
	X(cm_drop_no_owner) X(cm_drop_inbox_full) X(cm_send_refused)         \
	X(mr_dereg_waits) X(rx_drop_pkey)                                    \
	X(rx_drop_read_resp_len) X(rx_ud_too_long) X(nak_read_too_long)      \
	X(rx_drop_arp_unsolicited) X(rx_drop_arp_rate)  \
	X(tail_probes) X(retransmits_undone) X(tx_ctl_frames)                \
	X(xrc_bad_srq)                                                        \
	X(rx_mcast_frames) X(rx_drop_mcast_not_joined) X(rx_flow_steered)   \
	X(rx_nd) X(nd_solicits_sent) X(nd_adverts_sent) X(rx_drop_nd)   \
	X(netdev_rx_frames) X(netdev_tx_frames) X(netdev_tx_drop_arp_reply)  \
	X(netdev_tx_drop_bad_frame)                                          \
	X(xcore_ring_full) X(xcore_rx_steered) X(xcore_rx_drop)              \
	X(xcore_parks) X(xcore_tx_relayed) X(xcore_doorbells)                \
	X(xcore_rx_misrouted)

enum snic_counter {
#define SNIC_CNT_ENUM(n) SNIC_CNT_##n,
	SNIC_COUNTERS(SNIC_CNT_ENUM)
#undef SNIC_CNT_ENUM
	SNIC_CNT_MAX
};

/* c: a struct snic_core * */
#define CNT_INC(c, n)    ((c)->cnt[SNIC_CNT_##n]++)
#define CNT_ADD(c, n, v) ((c)->cnt[SNIC_CNT_##n] += (v))

/* Per-QP counters.  Each name is also a NIC counter: QCNT_INC
 * (objects/objects.h) counts the event on the NIC and on the QP at once.
 * The eight that messages move come first: one cache line of the QP
 * (struct snic_qp, issue 11 part 6); the names are published with the
 * values (nic/stats.c), so the order is not an ABI. */
#define SNIC_QP_COUNTERS(X)                                                  \
	X(rx_frames) X(rx_bytes) X(tx_frames)                                \
	X(acks_sent) X(acks_recv) X(send_wqes) X(recv_wqes) X(retransmits)  \
	X(rx_drop_qp_state) X(rx_drop_opcode_seq) X(rx_drop_bad_length)      \
	X(rx_drop_bad_psn) X(rx_drop_unexpected) X(rx_dup_requests)          \
	X(nak_seq_sent) X(nak_inv_req_sent) X(nak_access_sent)               \
	X(nak_rem_op_sent) X(rnr_nak_sent)                                   \
	X(nak_seq_recv) X(nak_inv_req_recv) X(nak_access_recv)               \
	X(nak_rem_op_recv) X(rnr_nak_recv)
/* the hot ones: SNIC_QCNT_rx_frames .. SNIC_QCNT_retransmits */
#define SNIC_QCNT_HOT 8

enum snic_qp_counter {
#define SNIC_QCNT_ENUM(n) SNIC_QCNT_##n,
	SNIC_QP_COUNTERS(SNIC_QCNT_ENUM)
#undef SNIC_QCNT_ENUM
	SNIC_QCNT_MAX
};

const char *core_counter_name(unsigned i);

#endif /* SNIC_CORE_COUNTERS_H */
