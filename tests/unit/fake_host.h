/* SPDX-License-Identifier: MIT */
/*
 * What the host driver does, done directly on the BAR and the host-memory
 * window of a fake HAL: contexts, commands through the mailbox, a bump
 * allocator in the window, PD / MR / CQ / QP objects, WQE posting and CQE
 * polling with the owner-bit rule.  Plus a two-NIC simulation joined by a
 * fake link, run by a bounded loop on a shared virtual clock.
 */
#ifndef SNIC_TESTS_FAKE_HOST_H
#define SNIC_TESTS_FAKE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "fake_hal.h"
#include "snic/fw.h"
#include "snic/hostif.h"

#define FDEV_MEM_SIZE   (64ull << 20)
#define FDEV_CMD_POLLS  16      /* the firmware answers within one poll */
#define FST_TIMEOUT     0xdead  /* fctx_cmd: no answer                  */

/* One NIC with its fake HAL, BAR and host memory. */
struct fdev {
	struct fake_hal hal;
	struct snic_nic *nic;
	void *nic_mem;
	uint8_t *bar;
	struct snic_nic_config cfg;
	char name[16];
	uint64_t bump;          /* next free byte of the window */
	unsigned ncores;        /* firmware cores (fdev_cores)  */
};

/* An opened device (host context slot). */
struct fctx {
	struct fdev *dev;
	unsigned slot;
	uint32_t seq;
};

struct fcq {
	struct fctx *ctx;
	uint32_t cqn;
	uint64_t ring_pa, dbrec_pa;
	uint32_t cnt;
	uint32_t ci;
};

struct fqp {
	struct fctx *ctx;
	uint32_t qpn;
	uint32_t pdn;
	struct fcq *scq, *rcq;
	uint64_t sq_pa, rq_pa, dbrec_pa;
	uint32_t sq_cnt, rq_cnt;
	uint32_t sq_stride_log, rq_stride_log;
	uint32_t sq_pi, rq_pi;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	uint32_t type;          /* enum snic_qp_type                        */
};

/* Device and context. */
/* A fake NIC's IPv6 address (GID 1): fd00:5e1c::<ipv4>, as snic-emu's. */
void fdev_ipv6(uint32_t ipv4, uint8_t ip6[16]);
void fdev_init(struct fdev *d, const char *name, const uint8_t mac[6],
	       uint32_t ipv4, uint32_t eth_mtu);
/* snic_nic_fini, then the fake HAL; returns leaked packet buffers. */
unsigned fdev_fini(struct fdev *d);
uint64_t fdev_alloc(struct fdev *d, uint64_t size, uint64_t align);
void *fdev_ptr(struct fdev *d, uint64_t pa);
struct snic_ctx_slot *fdev_slot(struct fdev *d, unsigned slot);
uint64_t fdev_counter(struct fdev *d, const char *name);
extern unsigned fdev_cores_force; /* 0: $SNIC_UNIT_CORES decides */
unsigned fdev_cores(void);
unsigned fdev_pass(struct fdev *d);
unsigned fdev_poll(struct fdev *d, unsigned passes);

/* Claim slot and CTX_OPEN; returns the status. */
int fctx_open(struct fctx *c, struct fdev *d, unsigned slot);
/* Issue one command and poll the NIC until it completes.  Returns the
 * status (FST_TIMEOUT when the firmware did not answer). */
int fctx_cmd(struct fctx *c, uint16_t op, const void *in, uint32_t inlen,
	     void *out, uint32_t outlen);
/* The two halves of fctx_cmd, for a command the firmware completes later
 * (DEREG_MR of an MR in use): post it; its status once answered (and
 * `out`), FST_TIMEOUT while not. */
void fctx_cmd_post(struct fctx *c, uint16_t op, const void *in,
		   uint32_t inlen);
int fctx_cmd_status(struct fctx *c, void *out, uint32_t outlen);

int fctx_alloc_pd(struct fctx *c, uint32_t *pdn);
int fctx_dealloc_pd(struct fctx *c, uint32_t pdn);
/* MR over [pa, pa + len) of the window at iova == pa. */
int fctx_reg_mr(struct fctx *c, uint32_t pdn, uint64_t pa, uint64_t len,
		uint32_t access, uint32_t *key);
/* MR at `iova` backed by the pages listed (page numbers). */
int fctx_reg_mr_pages(struct fctx *c, uint32_t pdn, uint64_t iova,
		      uint64_t len, const uint32_t *pages, uint32_t npages,
		      uint32_t access, uint32_t *key);
int fctx_reg_mr_raw(struct fctx *c, const struct snic_cmd_reg_mr *in,
		    uint32_t *key);
int fctx_dereg_mr(struct fctx *c, uint32_t key);

int fcq_create(struct fcq *cq, struct fctx *c, uint32_t cnt);
int fcq_destroy(struct fcq *cq);
/* RESIZE_CQ to a new ring of cnt entries; on success cq follows it (its
 * unpolled CQEs moved to its start, ci 0) and *moved says how many. */
int fcq_resize(struct fcq *cq, uint32_t cnt, uint32_t *moved);
/* Host-side poll: 1 and the CQE when one is ready, else 0. */
int fcq_poll(struct fcq *cq, struct snic_cqe *out);

struct fqp_caps {
	uint32_t sq_cnt, rq_cnt, max_send_sge, max_recv_sge, max_inline;
	bool sig_all;
	uint32_t qp_type;       /* enum snic_qp_type; 0 = RC                 */
	bool srq;               /* receives come from SRQ srqn               */
	uint32_t srqn;
	uint32_t xrcd;          /* XRC_RECV: its XRC domain                  */
	bool compact;           /* rings 64-byte aligned, not page aligned
				 * (thousands of QPs in the 64 MiB window)   */
};
int fqp_create(struct fqp *qp, struct fctx *c, uint32_t pdn, struct fcq *scq,
	       struct fcq *rcq, const struct fqp_caps *caps);
int fqp_destroy(struct fqp *qp);
int fqp_modify(struct fqp *qp, uint32_t mask, const struct snic_qp_attr *a);
int fqp_query(struct fqp *qp, struct snic_qp_attr *out);
uint32_t fqp_state(struct fqp *qp);

/* Connection parameters for fqp_connect. */
struct fconn {
	uint32_t path_mtu;      /* ibv_mtu enum                          */
	uint32_t access;        /* qp_access_flags of both QPs           */
	uint8_t min_rnr_timer;  /* of the responder side (both QPs)      */
	uint8_t rnr_retry, retry_cnt, timeout;
	uint8_t max_rd_atomic;
	uint32_t sq_psn_a, sq_psn_b;
	bool ip6;               /* connect over IPv6 (GID 1 of each side) */
	uint32_t flow_label;    /* the path's GRH fields                  */
	uint8_t traffic_class;
};
void fconn_default(struct fconn *p);
/* RESET -> INIT -> RTR -> RTS for both QPs, each pointing at the other
 * (dgid ::ffff:peer-ip).  Returns the first non-OK status. */
int fqp_connect(struct fqp *a, struct fqp *b, const struct fconn *p);
/* One QP through the three transitions towards a remote (ip, qpn); for a
 * UC QP without the RC-only attributes. */
int fqp_to_rts(struct fqp *qp, uint32_t dip, uint32_t dqpn, uint32_t rq_psn,
	       uint32_t sq_psn, const struct fconn *p);
/* The same towards any destination GID, from GID sgid_index. */
int fqp_to_rts_gid(struct fqp *qp, const uint8_t dgid[16], uint8_t sgid_index,
		   uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn,
		   const struct fconn *p);

/* Posting.  Writes the WQE, bumps the dbrec, rings the doorbell. */
struct fwr {
	uint64_t wr_id;
	uint8_t opcode;         /* enum snic_wr_opcode */
	uint8_t flags;          /* enum snic_send_flags */
	uint32_t imm;           /* network order */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	const struct snic_wqe_sge *sge;
	uint32_t num_sge;
	const void *inline_data;
	uint32_t inline_len;
	uint32_t xrc_srqn;      /* XRC_SEND: the remote XRC SRQ             */
	const struct snic_wqe_ud *ud; /* UD: the address (in place of the
				       * raddr and atomic segments)      */
};
void fqp_post_send(struct fqp *qp, const struct fwr *wr);
/* Write the WQE and the dbrec without ringing. */
void fqp_write_send(struct fqp *qp, const struct fwr *wr);
void fqp_post_recv(struct fqp *qp, uint64_t wr_id,
		   const struct snic_wqe_sge *sge, uint32_t num_sge);
void fqp_ring(struct fqp *qp);

/* ---------------------------------------------------------------------- */
/* Simulation: two NICs back to back.                                     */

#define FSIM_IP_A 0xc6120001u /* 198.18.0.1 */
#define FSIM_IP_B 0xc6120002u /* 198.18.0.2 */
#define FSIM_STEP_NS 1000     /* virtual time per step */

struct fsim {
	struct fdev a, b;
	struct fake_link link;
	uint64_t clock;
	uint64_t step_ns;
	uint64_t steps;
};

/* Heap-allocated (large).  Both HALs share the sim's clock. */
struct fsim *fsim_new(uint32_t eth_mtu);
/* Tear down; returns leaked buffers (both sides). */
unsigned fsim_free(struct fsim *s);
/* One step: advance the clock, poll A, poll B. */
void fsim_step(struct fsim *s);
/* Step until cond(arg) is true or max_steps pass.  Returns true when the
 * condition was met. */
bool fsim_run(struct fsim *s, bool (*cond)(void *arg), void *arg,
	      unsigned max_steps);
/* Step until the CQ yields a CQE (true) or max_steps pass. */
bool fsim_poll_cq(struct fsim *s, struct fcq *cq, struct snic_cqe *out,
		  unsigned max_steps);
/* Run max_steps steps (no condition). */
void fsim_idle(struct fsim *s, unsigned steps);

/* A connected RC pair across the sim: one context, PD, CQ (send = recv)
 * per side, and a buffer region of `buf_len` bytes registered with all
 * access rights. */
struct fpair {
	struct fsim *sim;
	struct fctx ca, cb;
	uint32_t pda, pdb;
	struct fcq cqa, cqb;
	struct fqp qa, qb;
	uint64_t bufa, bufb;    /* pa == iova */
	uint64_t buf_len;
	uint32_t mra, mrb;      /* lkey == rkey */
};

int fpair_setup(struct fpair *p, struct fsim *s, const struct fconn *conn,
		uint64_t buf_len, uint32_t cqe_cnt);
/* A new sim (Ethernet MTU 4200; `cores` firmware cores per NIC, 0:
 * $SNIC_UNIT_CORES decides) with fpair_setup's pair in it; NULL (and
 * nothing left) when either fails. */
struct fsim *fsim_pair_new(struct fpair *p, unsigned cores,
			   const struct fconn *conn, uint64_t buf_len,
			   uint32_t cqe_cnt);

#endif
