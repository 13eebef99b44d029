/* SPDX-License-Identifier: MIT */
/*
 * snicctl: inspect running snic NICs from outside their process, in the
 * spirit of `rdma statistic`, `ethtool -S` and `ibv_devinfo`.
 *
 *   snicctl [options] [list]              the NICs in the run directory
 *   snicctl [options] show [NIC...]       port and QP counters, QP states
 *   snicctl [options] qp NIC [QPN]        one NIC's QPs (or one QP)
 *   snicctl [options] reset NIC...        zero the counters
 *
 * Everything comes from the BAR files (<run dir>/<name>.bar): the header
 * and the statistics area the firmware publishes (hostif.h, struct
 * snic_stats).  Counter names come from the BAR too, so this tool has no
 * copy of the firmware's lists.  A NIC with a broker (snic-emu) keeps its
 * statistics out of the BAR file, where every verbs process could read
 * every QP's PSNs and peer: they come from <run dir>/<name>.admin.sock,
 * which gives them to the run directory's owner or root (hostif.h "Host
 * isolation").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "live_lock.h"
#include "snic/hostif.h"

#define RUN_DIR_DEFAULT "/dev/shm/snic"
#define MAX_NICS 64
#define SNAP_TRIES 10000
#define RESET_WAIT_MS 2000
#define PUB_WAIT_MS 2000

struct opts {
	const char *run_dir;
	bool json;
	bool all;               /* show zero counters too */
};

struct nic {
	char name[16];
	char path[512];
	uint8_t *bar;           /* mapped BAR, NULL when unusable */
	struct snic_bar_hdr hdr;
	bool alive;
	bool can_ask;           /* mapped writable: may request a publication */
	uint8_t *admin_stats;   /* the broker's statistics area, or NULL   */
	struct snic_stats *st;  /* consistent snapshot */
};

static struct opts o;

/* ---------------------------------------------------------------------- */
/* Reading BARs.                                                           */

/* Does a live server hold the BAR file (fd: our own open of it)?  It
 * keeps a write lock on it for its whole life (live_lock.h); the header's
 * fw_pid is any process's to write (host-driver/core/liveness.c). */
static bool served(int fd)
{
	/* held, or it cannot tell: fw_state decides */
	return snic_live_held(fd) != 0;
}

/* The statistics area from the NIC's broker: 0, or -1 after saying why
 * (no admin socket: the BAR file's area is the one, a NIC without a
 * broker). */
#define ADMIN_WAIT_S    60
#define ADMIN_WAIT_TEXT "60 s"

static int admin_stats_map(struct nic *n, bool writable)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = ADMIN_WAIT_S };
	struct snic_iso_ctx m;
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	size_t len = strlen(n->path);
	int fd, sfd = -1;
	void *p;

	if (len < 4 || len - 4 + sizeof(".admin.sock") > sizeof(a.sun_path))
		return 0;
	memcpy(a.sun_path, n->path, len - 4);
	memcpy(a.sun_path + len - 4, ".admin.sock", sizeof(".admin.sock"));
	if (access(a.sun_path, F_OK) != 0)
		return 0;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	/* bounded: a stalled or wedged emulator makes snicctl fail, not hang
	 * (EAGAIN after ADMIN_WAIT_S) */
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    recvmsg(fd, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(m)) {
		fprintf(stderr, "snicctl: %s: %s\n", a.sun_path,
			errno == EAGAIN ? "no answer within " ADMIN_WAIT_TEXT
			: strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&sfd, CMSG_DATA(c), sizeof(int));
	if (m.op != SNIC_ISO_ADMIN_STATS || sfd < 0 ||
	    m.seg_len < sizeof(struct snic_stats)) {
		fprintf(stderr, "snicctl: %s: statistics refused: %s\n",
			a.sun_path, m.op == SNIC_ISO_CTX_REFUSED ?
			strerror((int)m.status) : "bad answer");
		if (sfd >= 0)
			close(sfd);
		return -1;
	}
	p = mmap(NULL, sizeof(struct snic_stats),
		 PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, sfd, 0);
	close(sfd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "snicctl: %s: %s\n", a.sun_path, strerror(errno));
		return -1;
	}
	n->admin_stats = p;
	return 0;
}

/* Read-only commands still map writable when they may, to ask for a
 * publication (pub_req); without write access they show the last one. */
static int nic_map(struct nic *n, bool writable)
{
	int fd = open(n->path, O_RDWR | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && !writable)
		fd = open(n->path, O_RDONLY | O_CLOEXEC);
	else
		writable = fd >= 0;
	n->can_ask = writable;

	if (fd < 0) {
		fprintf(stderr, "snicctl: cannot open %s: %s\n", n->path,
			strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < SNIC_BAR_SIZE) {
		fprintf(stderr, "snicctl: %s: not a snic BAR of this version "
			"(%lld bytes, want %u)\n", n->path,
			(long long)st.st_size, SNIC_BAR_SIZE);
		close(fd);
		return -1;
	}
	n->bar = mmap(NULL, SNIC_BAR_SIZE, PROT_READ | (writable ? PROT_WRITE : 0),
		      MAP_SHARED, fd, 0);
	n->alive = served(fd);
	close(fd);
	if (n->bar == MAP_FAILED) {
		n->bar = NULL;
		fprintf(stderr, "snicctl: cannot map %s: %s\n", n->path,
			strerror(errno));
		return -1;
	}
	memcpy(&n->hdr, n->bar + SNIC_BAR_HDR_OFF, sizeof(n->hdr));
	n->hdr.name[sizeof(n->hdr.name) - 1] = '\0';
	n->hdr.host_mem[sizeof(n->hdr.host_mem) - 1] = '\0';
	if (n->hdr.magic != SNIC_HOSTIF_MAGIC ||
	    n->hdr.version != SNIC_HOSTIF_VERSION) {
		fprintf(stderr, "snicctl: %s: bad magic or host interface "
			"version %u (want %u)\n", n->path, n->hdr.version,
			SNIC_HOSTIF_VERSION);
		munmap(n->bar, SNIC_BAR_SIZE);
		n->bar = NULL;
		return -1;
	}
	n->alive = n->alive && atomic_load(&n->hdr.fw_state) == SNIC_FW_UP;
	if (n->alive && admin_stats_map(n, writable) != 0) {
		munmap(n->bar, SNIC_BAR_SIZE);
		n->bar = NULL;
		return -1;
	}
	return 0;
}

static struct snic_stats *stats_of(const struct nic *n)
{
	if (n->admin_stats)
		return (struct snic_stats *)(void *)n->admin_stats;
	return (struct snic_stats *)(n->bar + SNIC_BAR_STATS_OFF);
}

/* Ask a live firmware for a publication of every counter and QP entry
 * (hostif.h: it publishes lazily) and wait for it; a NIC that does not
 * answer is shown as last published, with a note. */
static void request_publication(struct nic *n)
{
	struct snic_stats *st = stats_of(n);
	uint32_t req;

	if (!n->alive || !n->can_ask)
		return;
	req = atomic_fetch_add(&st->pub_req, 1) + 1;
	for (int ms = 0; ms < PUB_WAIT_MS; ms++) {
		if (atomic_load_explicit(&st->pub_done, memory_order_acquire) == req)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	fprintf(stderr, "snicctl: %s: the firmware did not publish on request "
		"within %d ms; showing its last publication\n", n->name,
		PUB_WAIT_MS);
}

/* Copy the statistics area under its seqlock. */
static int nic_snapshot(struct nic *n)
{
	struct snic_stats *src = stats_of(n);

	n->st = malloc(sizeof(*n->st));
	if (n->st == NULL)
		return -1;
	request_publication(n);
	for (int i = 0; i < SNAP_TRIES; i++) {
		uint32_t s1 = atomic_load_explicit(&src->seq,
						   memory_order_acquire);

		if (s1 & 1u) {
			sched_yield();
			continue;
		}
		memcpy(n->st, src, sizeof(*n->st));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&src->seq, memory_order_relaxed) == s1)
			goto ok;
	}
	fprintf(stderr, "snicctl: %s: no consistent snapshot (firmware "
		"stuck mid-update?)\n", n->name);
	return -1;
ok:
	if (n->st->ncnt > SNIC_STATS_MAX_CNT)
		n->st->ncnt = SNIC_STATS_MAX_CNT;
	if (n->st->nqp_cnt > SNIC_STATS_MAX_QP_CNT)
		n->st->nqp_cnt = SNIC_STATS_MAX_QP_CNT;
	if (n->st->max_qp > SNIC_MAX_QP)
		n->st->max_qp = SNIC_MAX_QP;
	for (unsigned i = 0; i < SNIC_STATS_MAX_CNT; i++)
		n->st->cnt_name[i][SNIC_STATS_NAME_LEN - 1] = '\0';
	for (unsigned i = 0; i < SNIC_STATS_MAX_QP_CNT; i++)
		n->st->qp_cnt_name[i][SNIC_STATS_NAME_LEN - 1] = '\0';
	return 0;
}

static int cmp_nic(const void *a, const void *b)
{
	return strcmp(((const struct nic *)a)->name,
		      ((const struct nic *)b)->name);
}

/* Every *.bar in the run directory, sorted by name. */
static int scan(struct nic *nics, bool writable)
{
	DIR *d = opendir(o.run_dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL) {
		fprintf(stderr, "snicctl: cannot open run directory %s: %s\n",
			o.run_dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL && n < MAX_NICS) {
		size_t len = strlen(de->d_name);
		struct nic *x = &nics[n];

		if (len <= 4 || len - 4 >= sizeof(x->name) ||
		    strcmp(de->d_name + len - 4, ".bar") != 0)
			continue;
		memset(x, 0, sizeof(*x));
		memcpy(x->name, de->d_name, len - 4);
		snprintf(x->path, sizeof(x->path), "%s/%s", o.run_dir,
			 de->d_name);
		if (nic_map(x, writable) == 0)
			n++;
	}
	closedir(d);
	qsort(nics, (size_t)n, sizeof(*nics), cmp_nic);
	return n;
}

static struct nic *find(struct nic *nics, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(nics[i].name, name) == 0)
			return &nics[i];
	fprintf(stderr, "snicctl: no NIC named %s in %s\n", name, o.run_dir);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Output.                                                                 */

static const char *qp_state_name(unsigned s)
{
	static const char *const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static void fmt_ip(char *buf, size_t len, uint32_t ip)
{
	snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff,
		 (ip >> 8) & 0xff, ip & 0xff);
}

/* A QP's peer (snic_stats_qp.peer): dotted IPv4 for an IPv4-mapped GID,
 * IPv6 text otherwise, "-" before the QP has an address vector. */
static void fmt_peer(char *buf, size_t len, const uint8_t g[16])
{
	static const uint8_t zero[16], v4_prefix[12] = {
		[10] = 0xff, [11] = 0xff,
	};

	if (memcmp(g, zero, 16) == 0)
		snprintf(buf, len, "-");
	else if (memcmp(g, v4_prefix, 12) == 0)
		fmt_ip(buf, len, (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 |
			   (uint32_t)g[14] << 8 | g[15]);
	else if (!inet_ntop(AF_INET6, g, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static void fmt_mac(char *buf, size_t len, const uint8_t *m)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

static void print_list_text(const struct nic *n)
{
	char ip[16], mac[18];

	fmt_ip(ip, sizeof(ip), n->hdr.ipv4);
	fmt_mac(mac, sizeof(mac), n->hdr.mac);
	printf("%-8s %-5s pid %-7u link %-4s IPv4 %-15s MAC %s MTU %u/%u "
	       "host-mem %s\n", n->name, n->alive ? "up" : "stale",
	       atomic_load(&n->hdr.fw_pid),
	       n->st->link_up ? "up" : "down", ip, mac, n->st->eth_mtu,
	       n->st->active_mtu, n->hdr.host_mem);
}

static void print_counters_text(const char *indent, const char (*names)[SNIC_STATS_NAME_LEN],
				const uint64_t *v, unsigned count)
{
	unsigned shown = 0;

	for (unsigned i = 0; i < count; i++) {
		if (v[i] == 0 && !o.all)
			continue;
		printf("%s%-28s %" PRIu64 "\n", indent, names[i], v[i]);
		shown++;
	}
	if (shown == 0)
		printf("%s(all zero)\n", indent);
}

static void print_qp_text(const struct snic_stats *st,
			  const struct snic_stats_qp *q)
{
	char ip[INET6_ADDRSTRLEN];

	fmt_peer(ip, sizeof(ip), q->peer);
	printf("  qp 0x%06x  state %-5s ctx %-2u dest 0x%06x peer %-15s "
	       "sq_psn 0x%06x acked_psn 0x%06x epsn 0x%06x\n", q->qpn,
	       qp_state_name(q->state), q->ctx, q->dest_qpn, ip, q->sq_psn,
	       q->acked_psn, q->epsn);
	print_counters_text("    ", st->qp_cnt_name, q->cnt, st->nqp_cnt);
}

/* CM: listeners (port space and port from the rdma_cm ServiceID) and
 * the connections the firmware would close for a dying process. */
static void print_cm_text(const struct snic_stats *st)
{
	char ip[16];

	printf("  cm: %u listener(s), %u connection(s)\n", st->cm_nlisten, st->cm_nconn);
	for (unsigned i = 0; i < st->cm_nlisten && i < SNIC_STATS_CM_LISTEN; i++) {
		const struct snic_stats_cm_listen *l = &st->cm_listen[i];

		printf("    listen sid 0x%016" PRIx64 " ps 0x%04x port %-5u ctx %-2u pid %u\n",
		       l->service_id, (unsigned)(l->service_id >> 16) & 0xffff,
		       (unsigned)l->service_id & 0xffff, l->ctx, l->pid);
	}
	for (unsigned i = 0; i < st->cm_nconn && i < SNIC_STATS_CM_CONN; i++) {
		const struct snic_stats_cm_conn *c = &st->cm_conn[i];

		fmt_ip(ip, sizeof(ip), c->peer_ip);
		printf("    conn cid 0x%08x peer %-15s state established ctx %-2u pid %u\n",
		       c->cid, ip, c->ctx, c->pid);
	}
}

static void json_cm(const struct snic_stats *st)
{
	char ip[16];

	printf(", \"cm\": {\"listeners\": [");
	for (unsigned i = 0; i < st->cm_nlisten && i < SNIC_STATS_CM_LISTEN; i++)
		printf("%s{\"service_id\": %" PRIu64 ", \"port\": %u, \"ctx\": %u, \"pid\": %u}",
		       i ? ", " : "", st->cm_listen[i].service_id,
		       (unsigned)st->cm_listen[i].service_id & 0xffff,
		       st->cm_listen[i].ctx, st->cm_listen[i].pid);
	printf("], \"connections\": [");
	for (unsigned i = 0; i < st->cm_nconn && i < SNIC_STATS_CM_CONN; i++) {
		fmt_ip(ip, sizeof(ip), st->cm_conn[i].peer_ip);
		printf("%s{\"cid\": %u, \"peer\": \"%s\", \"ctx\": %u, \"pid\": %u}",
		       i ? ", " : "", st->cm_conn[i].cid, ip, st->cm_conn[i].ctx,
		       st->cm_conn[i].pid);
	}
	printf("]}");
}

static void print_nic_text(const struct nic *n, int qpn)
{
	const struct snic_stats *st = n->st;
	unsigned nqp = 0;

	print_list_text(n);
	if (qpn < 0) {
		printf("  port 1 counters%s:\n", o.all ? "" : " (non-zero)");
		print_counters_text("    ", st->cnt_name, st->cnt, st->ncnt);
		print_cm_text(st);
	}
	for (unsigned i = 0; i < st->max_qp; i++) {
		const struct snic_stats_qp *q = &st->qp[i];

		if (!q->valid || (qpn >= 0 && q->qpn != (uint32_t)qpn))
			continue;
		print_qp_text(st, q);
		nqp++;
	}
	if (nqp == 0)
		printf("  %s\n", qpn >= 0 ? "no such QP" : "no QPs");
}

static void json_counters(const char (*names)[SNIC_STATS_NAME_LEN],
			  const uint64_t *v, unsigned count)
{
	printf("{");
	for (unsigned i = 0; i < count; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "", names[i], v[i]);
	printf("}");
}

static void json_nic(const struct nic *n, bool with_stats, int qpn)
{
	const struct snic_stats *st = n->st;
	char ip[16], mac[18];
	bool first = true;

	fmt_ip(ip, sizeof(ip), n->hdr.ipv4);
	fmt_mac(mac, sizeof(mac), n->hdr.mac);
	printf("{\"name\": \"%s\", \"state\": \"%s\", \"pid\": %u, "
	       "\"link\": \"%s\", \"ipv4\": \"%s\", \"mac\": \"%s\", "
	       "\"eth_mtu\": %u, \"active_mtu\": %u, \"host_mem\": \"%s\", "
	       "\"updates\": %" PRIu64, n->name, n->alive ? "up" : "stale",
	       atomic_load(&n->hdr.fw_pid), st->link_up ? "up" : "down", ip,
	       mac, st->eth_mtu, st->active_mtu, n->hdr.host_mem, st->updates);
	if (with_stats) {
		printf(", \"port\": {\"port\": 1, \"counters\": ");
		json_counters(st->cnt_name, st->cnt, st->ncnt);
		printf("}");
		json_cm(st);
		printf(", \"qps\": [");
		for (unsigned i = 0; i < st->max_qp; i++) {
			const struct snic_stats_qp *q = &st->qp[i];

			if (!q->valid || (qpn >= 0 && q->qpn != (uint32_t)qpn))
				continue;
			char peer[INET6_ADDRSTRLEN];

			fmt_peer(peer, sizeof(peer), q->peer);
			printf("%s{\"qpn\": %u, \"state\": \"%s\", \"ctx\": %u, "
			       "\"dest_qpn\": %u, \"peer\": \"%s\", "
			       "\"sq_psn\": %u, \"acked_psn\": %u, \"epsn\": %u, "
			       "\"counters\": ", first ? "" : ", ", q->qpn,
			       qp_state_name(q->state), q->ctx, q->dest_qpn, peer,
			       q->sq_psn, q->acked_psn, q->epsn);
			json_counters(st->qp_cnt_name, q->cnt, st->nqp_cnt);
			printf("}");
			first = false;
		}
		printf("]");
	}
	printf("}");
}

/* ---------------------------------------------------------------------- */
/* Commands.                                                               */

static int output(struct nic **sel, int nsel, bool with_stats, int qpn)
{
	for (int i = 0; i < nsel; i++)
		if (nic_snapshot(sel[i]) != 0)
			return 1;
	if (o.json) {
		printf("{\"run_dir\": \"%s\", \"nics\": [", o.run_dir);
		for (int i = 0; i < nsel; i++) {
			printf("%s", i ? ", " : "");
			json_nic(sel[i], with_stats, qpn);
		}
		printf("]}\n");
		return 0;
	}
	if (nsel == 0)
		printf("no NICs in %s\n", o.run_dir);
	for (int i = 0; i < nsel; i++) {
		if (with_stats)
			print_nic_text(sel[i], qpn);
		else
			print_list_text(sel[i]);
	}
	return 0;
}

static int select_nics(struct nic *nics, int n, char **names, int nnames,
		       struct nic **sel)
{
	if (nnames == 0) {
		for (int i = 0; i < n; i++)
			sel[i] = &nics[i];
		return n;
	}
	for (int i = 0; i < nnames; i++) {
		sel[i] = find(nics, n, names[i]);
		if (sel[i] == NULL)
			return -1;
	}
	return nnames;
}

static int reset_one(struct nic *n)
{
	struct snic_stats *st = stats_of(n);
	uint32_t req = atomic_fetch_add(&st->reset_req, 1) + 1;

	for (int ms = 0; ms < RESET_WAIT_MS; ms++) {
		if (atomic_load_explicit(&st->reset_done,
					 memory_order_acquire) == req) {
			if (!o.json)
				printf("%s: counters reset\n", n->name);
			return 0;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	fprintf(stderr, "snicctl: %s: the firmware did not confirm the reset "
		"within %d ms (is it running?)\n", n->name, RESET_WAIT_MS);
	return 1;
}

/* Hand contexts whose owner process died to the firmware (hostif.h,
 * SNIC_CTX_ORPHAN): what the emu board does by itself, for boards that
 * cannot see host processes and have no broker. */
static int reap_one(struct nic *n)
{
	unsigned reaped = 0;

	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (struct snic_ctx_slot *)(
			n->bar + SNIC_BAR_CTX_OFF + (size_t)i * SNIC_CTX_SLOT_SIZE);
		uint32_t open = SNIC_CTX_OPEN;
		uint32_t pid = atomic_load(&s->owner_pid);

		if (atomic_load(&s->state) != SNIC_CTX_OPEN || pid == 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (atomic_compare_exchange_strong(&s->state, &open,
						   SNIC_CTX_ORPHAN))
			reaped++;
	}
	if (reaped && !o.json)
		printf("%s: %u context(s) of dead processes handed back\n",
		       n->name, reaped);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: snicctl [options] [list]\n"
		"       snicctl [options] show [NIC...]\n"
		"       snicctl [options] qp NIC [QPN]\n"
		"       snicctl [options] reset NIC...\n"
		"       snicctl [options] reap NIC...\n"
		"Inspect the snic NICs served in the run directory.\n"
		"  list     each NIC: state, serving pid, link, addresses, MTU\n"
		"  show     port counters (frames, bytes, drops by reason, NAKs,\n"
		"           retransmissions, RNR) and every QP: state, PSNs,\n"
		"           per-QP counters\n"
		"  qp       one NIC's QPs, or the QP numbered QPN\n"
		"  reset    zero every counter of the NICs (waits for the firmware)\n"
		"  reap     hand the contexts of dead processes back to the NICs\n"
		"options:\n"
		"  -d, --run-dir DIR  run directory (default $SNIC_RUN_DIR or "
		RUN_DIR_DEFAULT ")\n"
		"  -j, --json         machine-readable output (all counters)\n"
		"  -a, --all          show zero counters too\n"
		"  -h, --help         this text\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run-dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct nic nics[MAX_NICS];
	struct nic *sel[MAX_NICS];
	const char *cmd = "list";
	int c, n, nsel, qpn = -1, rc = 0;

	o.run_dir = getenv("SNIC_RUN_DIR");
	if (o.run_dir == NULL || o.run_dir[0] == '\0')
		o.run_dir = RUN_DIR_DEFAULT;
	while ((c = getopt_long(argc, argv, "d:jah", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o.run_dir = optarg; break;
		case 'j': o.json = true; break;
		case 'a': o.all = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		cmd = argv[optind++];
	if (strcmp(cmd, "list") != 0 && strcmp(cmd, "show") != 0 &&
	    strcmp(cmd, "qp") != 0 && strcmp(cmd, "reset") != 0 &&
	    strcmp(cmd, "reap") != 0) {
		fprintf(stderr, "snicctl: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	bool writes = strcmp(cmd, "reset") == 0 || strcmp(cmd, "reap") == 0;

	if ((writes && optind >= argc) ||
	    (strcmp(cmd, "qp") == 0 && (optind >= argc || argc - optind > 2)) ||
	    (strcmp(cmd, "list") == 0 && optind < argc)) {
		usage(stderr);
		return 2;
	}
	if (strcmp(cmd, "qp") == 0 && argc - optind == 2) {
		char *end;

		qpn = (int)strtol(argv[optind + 1], &end, 0);
		if (*end != '\0' || qpn < 0) {
			fprintf(stderr, "snicctl: bad QPN '%s'\n",
				argv[optind + 1]);
			return 2;
		}
		argc--;
	}
	n = scan(nics, writes);
	if (n < 0)
		return 1;
	nsel = select_nics(nics, n, argv + optind, argc - optind, sel);
	if (nsel < 0)
		return 1;
	if (writes) {
		for (int i = 0; i < nsel; i++)
			rc |= strcmp(cmd, "reset") == 0 ? reset_one(sel[i])
							 : reap_one(sel[i]);
		return rc;
	}
	return output(sel, nsel, strcmp(cmd, "list") != 0, qpn);
}
