/* The shared part of the verbs programs (vt_common.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vt_common.h"

bool vt_fail(struct vt *v, const char *fmt, ...)
{
	va_list ap;

	if (v->keep_first && v->why[0])
		return false;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof v->why, fmt, ap);
	va_end(ap);
	return false;
}

void vt_log(const struct vt *v, const char *fmt, ...)
{
	va_list ap;

	if (!v->verbose)
		return;
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
}

void vt_report(struct vt *v, bool ok, const char *name)
{
	if (ok) {
		v->passed++;
		printf("ok %s\n", name);
	} else {
		v->failed++;
		printf("FAIL %s: %s\n", name, v->why[0] ? v->why : "(no reason)");
	}
	v->why[0] = '\0';
	fflush(stdout);
}

uint64_t vt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */

/* A whole number in [0, max]; false (with a message) otherwise. */
static bool number(const char *prog, const char *arg, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 0);
	if (errno || *end || *out < 0 || *out > max) {
		fprintf(stderr, "%s: bad value '%s'\n", prog, arg);
		return false;
	}
	return true;
}

int vt_args(struct vt *v, int argc, char **argv, struct vt_args *a,
	    void (*usage)(FILE *f))
{
	static const struct option opts[] = {
		{ "dev0", required_argument, NULL, '0' },
		{ "dev1", required_argument, NULL, '1' },
		{ "only", required_argument, NULL, 'o' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "list", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	long n;
	int c;

	a->dev0 = "snic0";
	a->dev1 = "snic1";
	a->only = NULL;
	a->list = false;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case '0': a->dev0 = optarg; break;
		case '1': a->dev1 = optarg; break;
		case 'o': a->only = optarg; break;
		case 'g':
			if (!number(prog, optarg, 255, &n))
				return 2;
			v->gid_index = (int)n;
			break;
		case 't':
			if (!number(prog, optarg, 3600000, &n))
				return 2;
			v->timeout_ms = (unsigned)n;
			break;
		case 'l': a->list = true; break;
		case 'v': v->verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

static bool dev_find(struct vt *v, struct vt_dev *d, const char *name)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return vt_fail(v, "device %s not found: ibv_get_device_list failed: %s "
			       "(is snic-emu running and LD_LIBRARY_PATH=build/lib set?)", name,
			       strerror(errno));
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			d->ctx = ibv_open_device(list[i]);
			if (!d->ctx) {
				vt_fail(v, "ibv_open_device(%s): %s", name, strerror(errno));
				ibv_free_device_list(list);
				return false;
			}
			break;
		}
	}
	if (!d->ctx) {
		char have[512] = "";
		size_t at = 0;

		for (int i = 0; i < n && at < sizeof have - 1; i++)
			at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", i ? ", " : "",
					       ibv_get_device_name(list[i]));
		ibv_free_device_list(list);
		return vt_fail(v, "device %s not found (devices present: %s)", name,
			       n ? have : "none; is snic-emu running and LD_LIBRARY_PATH=build/lib set?");
	}
	ibv_free_device_list(list);
	return true;
}

bool vt_dev_open(struct vt *v, struct vt_dev *d, const char *name)
{
	d->name = name;
	if (!dev_find(v, d, name))
		return false;
	if (ibv_query_device(d->ctx, &d->attr))
		return vt_fail(v, "ibv_query_device(%s): %s", name, strerror(errno));
	if (ibv_query_port(d->ctx, VT_PORT, &d->port))
		return vt_fail(v, "ibv_query_port(%s, %d): %s", name, VT_PORT, strerror(errno));
	if (d->port.state != IBV_PORT_ACTIVE)
		return vt_fail(v, "%s port %d is not ACTIVE (state %d)", name, VT_PORT,
			       d->port.state);
	if (ibv_query_gid(d->ctx, VT_PORT, v->gid_index, &d->gid))
		return vt_fail(v, "ibv_query_gid(%s, port %d, index %d) failed", name, VT_PORT,
			       v->gid_index);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		return vt_fail(v, "ibv_alloc_pd(%s): %s", name, strerror(errno));
	return true;
}

void vt_dev_close(struct vt_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	memset(d, 0, sizeof *d);
}

/* ------------------------------------------------------------------------ */
/* Endpoints                                                                */

static uint32_t clamp_u32(uint32_t v, int max)
{
	return (max > 0 && v > (uint32_t)max) ? (uint32_t)max : v;
}

static const char *qp_type_str(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

bool vt_ep_create(struct vt *v, struct vt_ep *e, struct dev *d,
		  const struct vt_dev *vd, const struct vt_qp_cfg *c, uint32_t psn)
{
	struct ibv_qp_init_attr ia;
	int cqe = c->cqe;

	memset(e, 0, sizeof *e);
	e->d = d;
	e->vd = vd;
	e->psn = psn & 0xffffff;
	if (c->channel) {
		e->ch = ibv_create_comp_channel(vd->ctx);
		if (!e->ch)
			return vt_fail(v, "ibv_create_comp_channel(%s): %s", vd->name,
				       strerror(errno));
	}
	if (vd->attr.max_cqe > 0 && cqe > vd->attr.max_cqe)
		cqe = vd->attr.max_cqe;
	e->scq = ibv_create_cq(vd->ctx, cqe, NULL, NULL, 0);
	e->rcq = ibv_create_cq(vd->ctx, cqe, NULL, e->ch, 0);
	if (!e->scq || !e->rcq)
		return vt_fail(v, "ibv_create_cq(%s, %d): %s", vd->name, cqe, strerror(errno));

	memset(&ia, 0, sizeof ia);
	ia.send_cq = e->scq;
	ia.recv_cq = e->rcq;
	ia.qp_type = c->type ? c->type : IBV_QPT_RC;
	ia.srq = c->srq;
	ia.sq_sig_all = c->sig_all;
	ia.cap.max_send_wr = clamp_u32(c->send_wr, vd->attr.max_qp_wr);
	ia.cap.max_recv_wr = clamp_u32(c->recv_wr, vd->attr.max_qp_wr);
	ia.cap.max_send_sge = clamp_u32(c->send_sge, vd->attr.max_sge);
	ia.cap.max_recv_sge = clamp_u32(c->recv_sge, vd->attr.max_sge);
	ia.cap.max_inline_data = c->inl;
	e->qp = ibv_create_qp(vd->pd, &ia);
	if (!e->qp)
		return vt_fail(v, "ibv_create_qp(%s, %s, send_wr %u, recv_wr %u, sge %u): %s",
			       vd->name, qp_type_str(ia.qp_type), ia.cap.max_send_wr,
			       ia.cap.max_recv_wr, ia.cap.max_send_sge, strerror(errno));
	e->cap = ia.cap;
	return true;
}

void vt_ep_destroy(struct vt_ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	memset(e, 0, sizeof *e);
}

static uint8_t rd_atomic(int dev_max)
{
	/* 16 as asked, clamped to what the device allows, at least 1 */
	if (dev_max < 1)
		return 1;
	return (uint8_t)(dev_max < 16 ? dev_max : 16);
}

int vt_qp_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = VT_PORT;
	a.qp_access_flags = access;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

void vt_rtr_attr(const struct vt *v, const struct vt_ep *e, const struct vt_ep *peer,
		 enum ibv_mtu mtu, uint8_t min_rnr_timer, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof *a);
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = mtu;
	a->dest_qp_num = peer->qp->qp_num;
	a->rq_psn = peer->psn;
	a->max_dest_rd_atomic = rd_atomic(e->vd->attr.max_qp_rd_atom);
	a->min_rnr_timer = min_rnr_timer;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = peer->vd->gid;
	a->ah_attr.grh.sgid_index = (uint8_t)v->gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.dlid = 0;
	a->ah_attr.sl = 0;
	a->ah_attr.port_num = VT_PORT;
}

int vt_qp_rts(const struct vt_ep *e)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = e->psn;
	a.max_rd_atomic = rd_atomic(e->vd->attr.max_qp_init_rd_atom);
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}
