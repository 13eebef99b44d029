/*
 * What the verbs programs (snic_verbs_test, snic_verbs_ext) share: the
 * failure reason and the verbose log of the case running, the clock,
 * opening a device (attributes, port, GID, PD), an endpoint (CQs and a QP,
 * capacities clamped to the device's limits), and the ok/FAIL lines.
 * Standard verbs API only, like the programs themselves.
 */
#ifndef SNIC_VT_COMMON_H
#define SNIC_VT_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

enum { VT_PORT = 1 };

/* State every case of a program shares. */
struct vt {
	int gid_index;
	bool verbose;
	bool keep_first;        /* vt_fail keeps the first reason (else the last) */
	unsigned timeout_ms;    /* deadline of every wait */
	unsigned passed, failed, skipped;
	char why[1024];         /* why the case running failed */
};

/* Records the reason; returns false, so `return vt_fail(...)` fails a case. */
__attribute__((format(printf, 2, 3)))
bool vt_fail(struct vt *v, const char *fmt, ...);
/* "# ..." on stdout with -v. */
__attribute__((format(printf, 2, 3)))
void vt_log(const struct vt *v, const char *fmt, ...);
/* "ok NAME" or "FAIL NAME: reason", counted; the reason is cleared. */
void vt_report(struct vt *v, bool ok, const char *name);
uint64_t vt_now_ns(void);

/* The options both programs take. */
struct vt_args {
	const char *dev0, *dev1;        /* default snic0, snic1 */
	const char *only;               /* NULL: every case */
	bool list;                      /* --list: print the case names */
};
/* --dev0 NAME, --dev1 NAME, --only LIST, --gid-index N, --timeout-ms MS,
 * --list, -v/--verbose, -h/--help into v and a.  Returns -1 to go on, else
 * the exit status: 0 after --help (usage on stdout), 2 for bad usage. */
int vt_args(struct vt *v, int argc, char **argv, struct vt_args *a,
	    void (*usage)(FILE *f));

/* An opened device. */
struct vt_dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;      /* of VT_PORT, which must be ACTIVE */
	union ibv_gid gid;              /* index v->gid_index */
	struct ibv_pd *pd;
};
bool vt_dev_open(struct vt *v, struct vt_dev *d, const char *name);
void vt_dev_close(struct vt_dev *d);

/* Each program's device: a vt_dev and the buffers it tests with. */
struct dev;

/* One end of a connection: CQs (the receive CQ with a completion channel
 * on request) and a QP. */
struct vt_ep {
	struct dev *d;
	const struct vt_dev *vd;        /* d's vt_dev */
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;          /* as returned by ibv_create_qp */
	uint32_t psn;                   /* our SQ's first PSN */
};

struct vt_qp_cfg {
	enum ibv_qp_type type;          /* 0: RC */
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inl;
	int cqe;                        /* entries of each CQ */
	int sig_all;
	bool channel;                   /* the receive CQ gets a channel */
	struct ibv_srq *srq;
};
/* e->d = d, e->vd = vd (d's vt_dev): the objects are made on vd. */
bool vt_ep_create(struct vt *v, struct vt_ep *e, struct dev *d,
		  const struct vt_dev *vd, const struct vt_qp_cfg *c, uint32_t psn);
void vt_ep_destroy(struct vt_ep *e);

/* Connecting an RC/UC QP, RESET -> INIT -> RTR -> RTS: responder and
 * requester resources as many as asked (16) and the device allows, path
 * through the peer's GID (is_global, hop limit 64), timeout 14, retry_cnt
 * and rnr_retry 7.  Each returns ibv_modify_qp's result. */
int vt_qp_init(struct ibv_qp *qp, int access);
#define VT_RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
		     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
void vt_rtr_attr(const struct vt *v, const struct vt_ep *e, const struct vt_ep *peer,
		 enum ibv_mtu mtu, uint8_t min_rnr_timer, struct ibv_qp_attr *a);
int vt_qp_rts(const struct vt_ep *e);

#endif
