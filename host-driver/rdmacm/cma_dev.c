/* SPDX-License-Identifier: MIT */
/*
 * Devices: every snic device is opened once per process, given its range
 * of communication IDs by the firmware (CM_OPEN), and served by a thread
 * that takes the MADs the firmware queues for this process (CM_RECV),
 * hands them to the state machines (cma_conn.c) and runs the ids' timers.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cma.h"

/* host-driver/cm_export.c, version node SNIC_PRIVATE_1 */
int snic_cm_cmd(struct ibv_context *c, uint16_t op, const void *in,
		size_t in_len, void *out, size_t out_len, uint32_t *status);
_Atomic uint32_t *snic_cm_word(struct ibv_context *c);
/* host-driver/memory/reback_guard.c: this thread's heap writes must not
 * meet a re-back of the same pages by ibv_reg_mr in another thread */
void snic_heap_guard_enter(void);
void snic_heap_guard_leave(void);

pthread_mutex_t cma_lock = PTHREAD_MUTEX_INITIALIZER;
struct cma_dev cma_devs[CMA_MAX_DEV];
int cma_ndev;
int cma_debug;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;

#define CMA_TICK_NS (10 * 1000 * 1000) /* timer granularity */

int64_t cma_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int status_errno(uint32_t st)
{
	switch (st) {
	case SNIC_ST_OK: return 0;
	case SNIC_ST_NOMEM: return ENOMEM;
	case SNIC_ST_BUSY: return EADDRINUSE;
	case SNIC_ST_NOENT: return ENOENT;
	case SNIC_ST_NOTSUP: return EOPNOTSUPP;
	case SNIC_ST_PERM: return EPERM;
	case SNIC_ST_BADOP: return ENOSYS;
	default: return EINVAL;
	}
}

int cma_cmd(struct cma_dev *d, uint16_t op, const void *in, size_t in_len,
	    void *out, size_t out_len)
{
	uint32_t st = 0;
	int err = snic_cm_cmd(d->verbs, op, in, in_len, out, out_len, &st);

	return err ? err : status_errno(st);
}

/* The router the host names for a MAD to ip: the kernel's IPv4 route
 * (cma_route.c); none for IPv6 (the NICs' interfaces carry no IPv6: the
 * NIC's neighbour discovery finds the peer on the link). */
static void mad_next_hop(struct cma_dev *d, const struct cma_ip *ip, uint8_t nh[16])
{
	uint32_t ip4, gw;

	memset(nh, 0, 16);
	if (cma_ip_is_v4(ip, &ip4) && (gw = cma_next_hop(d, ip4)) != 0) {
		struct cma_ip g = cma_ip_v4(gw);

		memcpy(nh, g.b, 16);
	}
}

int cma_send_mad(struct cma_dev *d, const struct cma_ip *ip, const uint8_t *mad,
		 int retry)
{
	struct snic_cm_mad6 m = { .flags = retry ? SNIC_CM_F_RETRY : 0 };
	char a[INET6_ADDRSTRLEN];

	memcpy(m.peer, ip->b, 16);
	mad_next_hop(d, ip, m.next_hop);
	memcpy(m.mad, mad, SNIC_CM_MAD_SIZE);
	cma_dbg("send attr 0x%02x to %s cid %02x%02x%02x%02x/%02x%02x%02x%02x%s\n", mad[17],
		cma_ip_str(ip, a, sizeof(a)),
		mad[24], mad[25], mad[26], mad[27], mad[28], mad[29], mad[30], mad[31],
		retry ? " (retry)" : "");
	return cma_cmd(d, SNIC_CMD_CM_SEND6, &m, sizeof(m), NULL, 0);
}

/* The MAD the firmware sends for connection cid if this process dies
 * (NULL: nothing). */
int cma_arm(struct cma_dev *d, uint32_t cid, const struct cma_ip *ip,
	    const uint8_t *mad)
{
	struct snic_cm_mad6 m = { .cid = cid };

	memcpy(m.peer, ip->b, 16);
	if (mad) {
		mad_next_hop(d, ip, m.next_hop);
		memcpy(m.mad, mad, SNIC_CM_MAD_SIZE);
	}
	return cma_cmd(d, SNIC_CMD_CM_ARM6, &m, sizeof(m), NULL, 0);
}

void cma_note_timeout(struct cma_dev *d)
{
	struct snic_cm_note n = { .timeouts = 1 };

	cma_cmd(d, SNIC_CMD_CM_NOTE, &n, sizeof(n), NULL, 0);
}

uint32_t cma_alloc_cid(struct cma_dev *d)
{
	uint32_t n = ++d->cid_next & d->cid_mask;

	if (n == 0)
		n = ++d->cid_next & d->cid_mask;
	return d->cid_base | n;
}

/* The device whose address (IPv4, or its IPv6 GID) a is. */
struct cma_dev *cma_dev_by_addr(const struct cma_ip *a)
{
	uint32_t ip4;
	bool v4 = cma_ip_is_v4(a, &ip4);

	if (cma_ip_is_any(a))
		return NULL;
	for (int i = 0; i < cma_ndev; i++)
		if (v4 ? cma_devs[i].ip == ip4
		       : memcmp(cma_devs[i].gid6.raw, a->b, 16) == 0)
			return &cma_devs[i];
	return NULL;
}

const union ibv_gid *cma_dev_gid(const struct cma_dev *d, const struct cma_ip *a,
				 uint8_t *index)
{
	bool v4 = cma_ip_is_v4(a, NULL);

	if (index)
		*index = v4 ? CMA_GID_IPV4 : CMA_GID_IPV6;
	return v4 ? &d->gid : &d->gid6;
}

struct cma_dev *cma_dev_by_verbs(struct ibv_context *v)
{
	for (int i = 0; i < cma_ndev; i++)
		if (cma_devs[i].verbs == v)
			return &cma_devs[i];
	return NULL;
}

/* ---------------------------------------------------------------------- */

static void run_timers(int64_t now)
{
	for (struct cma_id *id = cma_ids; id; id = id->next) {
		if (id->timer == CMA_T_NONE || now < id->deadline_ns)
			continue;
		if (id->timer == CMA_T_ADDR)
			cma_addr_timer(id, now);
		else
			cma_mad_timer(id, now);
	}
}

/* Take up to a batch of queued MADs; true when the batch was full (more
 * may wait: take them before sleeping). */
static bool drain(struct cma_dev *d)
{
	struct snic_cm_mad6 m;
	struct cma_ip peer;
	char a[INET6_ADDRSTRLEN];

	for (int i = 0; i < 64; i++) {
		if (cma_cmd(d, SNIC_CMD_CM_RECV6, NULL, 0, &m, sizeof(m)))
			return false;
		memcpy(peer.b, m.peer, 16);
		cma_dbg("recv attr 0x%02x from %s cid %02x%02x%02x%02x/%02x%02x%02x%02x\n",
			m.mad[17], cma_ip_str(&peer, a, sizeof(a)), m.mad[24], m.mad[25],
			m.mad[26], m.mad[27], m.mad[28], m.mad[29], m.mad[30], m.mad[31]);
		cma_mad_in(d, &peer, m.mad);
	}
	return true;
}

/* Sleep on the word the firmware bumps for each queued MAD (at most a
 * timer tick), take what came, run the timers.  CM_RECV is only asked
 * when the word moved, so an idle process costs the firmware nothing. */
static void *dev_thread(void *arg)
{
	struct cma_dev *d = arg;
	struct timespec ts = { 0, CMA_TICK_NS };
	bool more = false;

	for (;;) {
		uint32_t w = atomic_load_explicit(d->cm_word, memory_order_acquire);

		if (w == d->cm_seen && !more)
			syscall(SYS_futex, (uint32_t *)d->cm_word, FUTEX_WAIT, w,
				&ts, NULL, 0);
		w = atomic_load_explicit(d->cm_word, memory_order_acquire);
		pthread_mutex_lock(&cma_lock);
		/* after cma_lock: an application thread may re-back pages
		 * (ibv_reg_mr) while it holds cma_lock */
		snic_heap_guard_enter();
		if (w != d->cm_seen || more) {
			d->cm_seen = w;
			more = drain(d);
		}
		if (d == &cma_devs[0])
			run_timers(cma_now_ns());
		snic_heap_guard_leave();
		pthread_mutex_unlock(&cma_lock);
	}
	return NULL;
}

static int dev_open(struct ibv_device *dev, struct cma_dev *d)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct snic_cm_open o;
	sigset_t all, old;
	int err;

	d->verbs = ibv_open_device(dev);
	if (!d->verbs)
		return errno ? errno : ENODEV;
	if (ibv_query_gid(d->verbs, 1, 0, &d->gid) || ibv_query_port(d->verbs, 1, &pa) ||
	    ibv_query_device(d->verbs, &da))
		goto fail;
	d->ip = (uint32_t)d->gid.raw[12] << 24 | (uint32_t)d->gid.raw[13] << 16 |
		(uint32_t)d->gid.raw[14] << 8 | d->gid.raw[15];
	/* GID 1 is the NIC's IPv6 address; a NIC without one has none */
	if (ibv_query_gid(d->verbs, 1, CMA_GID_IPV6, &d->gid6))
		memset(&d->gid6, 0, sizeof(d->gid6));
	d->guid = ibv_get_device_guid(dev);
	d->mtu = pa.active_mtu;
	d->max_rd_atom = (uint8_t)(da.max_qp_rd_atom > 255 ? 255 : da.max_qp_rd_atom);
	if (cma_cmd(d, SNIC_CMD_CM_OPEN, NULL, 0, &o, sizeof(o)))
		goto fail;
	d->cid_base = o.cid_base;
	d->cid_mask = o.cid_mask;
	d->cid_next = (uint32_t)getpid() * 7919u;
	d->cm_word = snic_cm_word(d->verbs);
	d->cm_seen = atomic_load(d->cm_word);
	/* the thread takes no signals: they belong to the application */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&d->thread, NULL, dev_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	pthread_detach(d->thread);
	return 0;
fail:
	ibv_close_device(d->verbs);
	d->verbs = NULL;
	return ENODEV;
}

static void do_init(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	const char *dbg = getenv("SNIC_CM_DEBUG");

	cma_debug = dbg && *dbg && *dbg != '0';

	if (!list) {
		init_err = errno ? errno : ENODEV;
		return;
	}
	for (int i = 0; i < n && cma_ndev < CMA_MAX_DEV; i++)
		if (dev_open(list[i], &cma_devs[cma_ndev]) == 0)
			cma_ndev++;
	ibv_free_device_list(list);
	if (cma_ndev == 0)
		init_err = ENODEV;
}

int cma_init(void)
{
	pthread_once(&init_once, do_init);
	return init_err;
}
