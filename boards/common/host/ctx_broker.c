/* SPDX-License-Identifier: MIT */
/*
 * The context broker's bookkeeping (ctx_broker.h).  Runs in its board's
 * loop (no thread), so the back end touches the firmware only between its
 * polls.
 *
 * A connection is a context: accept, SO_PEERCRED for the pid, a free slot
 * claimed in the BAR file (CAS FREE -> OPEN there, so processes that map
 * the file themselves skip it), the slot's descriptor from the back end
 * (only the process we hand it to can write what the firmware reads as
 * that slot), the process's segment (one per process, shared by its
 * contexts: one address space cannot be isolated from itself, and an
 * application buffer registered on two contexts is backed once), then the
 * firmware's
 * grant and the answer with both descriptors.  A process is its pid and
 * its start time (peer_id.h): a process that passes its context socket
 * on and ends leaves its segment to nobody who later gets its pid.
 * POLLHUP or EOF on the
 * socket: the firmware's death, the slot and, with its last context, the
 * segment back to the back end.  A process gets at most
 * SNIC_BROKER_CTX_PER_PID contexts per NIC, and with the NICs shared with
 * other users (cfg.users) a uid at most SNIC_BROKER_CTX_PER_UID over all
 * the broker's NICs and half of its segments (then ENOSPC; EBUSY when
 * every slot is taken).  The sockets are the users'
 * to connect to (users.h); the admin sockets stay ours.
 *
 * <run dir>/<name>.admin.sock hands the NIC's statistics descriptor to
 * the run directory's owner or root (snicctl; hostif.h "Host isolation").
 */
#include "ctx_broker.h"
#include "peer_id.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CB_MAX_CONN (CB_MAX_NICS * SNIC_MAX_CTX)
#define CB_MAX_SEG  SNIC_MAX_CTX
#define CB_MAX_FDS  (SNIC_DM_SIZE / SNIC_PAGE_SIZE)

struct seg {
	struct peer_id id;      /* the process it belongs to                */
	int fd;                 /* -1: free                                 */
	unsigned refs;
};

struct conn {
	int fd;                 /* -1: free                                 */
	unsigned nic, slot, seg;
	int slot_fd;
	struct peer_id id;
};

static struct {
	struct cb_config cfg;
	struct cb_nic nic[CB_MAX_NICS];
	int lfd[CB_MAX_NICS];
	char path[CB_MAX_NICS][256];
	int admin_lfd[CB_MAX_NICS];
	char admin_path[CB_MAX_NICS][256];
	struct seg seg[CB_MAX_SEG];
	struct conn conn[CB_MAX_CONN];
	uint64_t owned[CB_MAX_NICS];    /* slots with a connection         */
	struct pollfd pfd[CB_MAX_CONN];
	uint8_t *file[CB_MAX_NICS];     /* the BAR file's slot area         */
	unsigned long granted, refused, restored; /* printed at the end */
	unsigned long over_share, admin_given, admin_refused;
	unsigned long dm_given, dm_refused;
	int up;
} B;

/* Slot `slot` as processes mapping the BAR file see it (for one of our
 * contexts: a copy the firmware never reads, kept OPEN with the owner's
 * pid so that they leave it alone). */
static struct snic_ctx_slot *file_slot(unsigned nic, unsigned slot)
{
	return (struct snic_ctx_slot *)(B.file[nic] + SNIC_BAR_CTX_OFF +
					(size_t)slot * SNIC_CTX_SLOT_SIZE);
}

/* Listen on <run_dir>/<nic name><suffix> (path kept in `path`), 0600 or
 * shared with the NICs' users (`users`, users.h: 0660 to their group). */
static int listen_on(unsigned i, const char *suffix, char path[256], int *lfd,
		     long users)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if ((size_t)snprintf(path, 256, "%s/%s%s", B.cfg.run_dir,
			     B.nic[i].name, suffix) >= sizeof(a.sun_path)) {
		fprintf(stderr, "%s: socket path too long: %s/%s%s\n",
			B.cfg.prog, B.cfg.run_dir, B.nic[i].name, suffix);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	/* the BAR's lock says no live broker serves this NIC: any socket
	 * left here is a dead one's */
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    snic_users_share(users, -1, path, 0600, 06) != 0 ||
	    listen(fd, SNIC_MAX_CTX) != 0) {
		fprintf(stderr, "%s: cannot listen on %s: %s\n", B.cfg.prog,
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*lfd = fd;
	return 0;
}

const void *cb_file_map(unsigned nic)
{
	return nic < CB_MAX_NICS ? B.file[nic] : NULL;
}

int cb_init(const struct cb_config *cfg)
{
	memset(&B, 0, sizeof(B));
	for (unsigned i = 0; i < CB_MAX_NICS; i++)
		B.lfd[i] = B.admin_lfd[i] = -1;
	for (unsigned i = 0; i < CB_MAX_CONN; i++)
		B.conn[i].fd = -1;
	for (unsigned i = 0; i < CB_MAX_SEG; i++)
		B.seg[i].fd = -1;
	if (cfg->nnics > CB_MAX_NICS || cfg->seg_len == 0 || cfg->nseg == 0 ||
	    cfg->nseg > CB_MAX_SEG || cfg->seg_len % SNIC_PAGE_SIZE ||
	    cfg->seg_base % SNIC_PAGE_SIZE)
		return -1;
	B.cfg = *cfg;
	memcpy(B.nic, cfg->nics, cfg->nnics * sizeof(*cfg->nics));
	B.cfg.nics = B.nic;
	B.up = 1;
	for (unsigned i = 0; i < cfg->nnics; i++) {
		B.file[i] = mmap(NULL, SNIC_BAR_STATS_OFF, PROT_READ | PROT_WRITE,
				 MAP_SHARED, B.nic[i].bar_fd, 0);
		if (B.file[i] == MAP_FAILED) {
			B.file[i] = NULL;
			cb_fini();
			return -1;
		}
	}
	for (unsigned i = 0; i < cfg->nnics; i++)
		if (listen_on(i, ".sock", B.path[i], &B.lfd[i],
			      cfg->users) != 0 ||
		    (B.nic[i].stats_fd >= 0 &&
		     listen_on(i, ".admin.sock", B.admin_path[i],
			       &B.admin_lfd[i], SNIC_USERS_NONE) != 0)) {
			cb_fini();
			return -1;
		}
	return 0;
}

static uint64_t seg_pa(unsigned k)
{
	return B.cfg.seg_base + (uint64_t)k * B.cfg.seg_len;
}

/* The segment of process id (a new one when it has none), or -1. */
static int seg_get(const struct peer_id *id)
{
	int free_k = -1;

	for (unsigned k = 0; k < B.cfg.nseg; k++) {
		if (B.seg[k].fd >= 0 && peer_id_same(&B.seg[k].id, id)) {
			B.seg[k].refs++;
			return (int)k;
		}
		if (B.seg[k].fd < 0 && free_k < 0 &&
		    !(B.cfg.ops->seg_busy && B.cfg.ops->seg_busy(B.cfg.be, k)))
			free_k = (int)k;
	}
	if (free_k < 0)
		return -1;
	B.seg[free_k].fd = B.cfg.ops->seg_open(B.cfg.be, (unsigned)free_k);
	if (B.seg[free_k].fd < 0)
		return -1;
	B.seg[free_k].id = *id;
	B.seg[free_k].refs = 1;
	return free_k;
}

static void seg_put(unsigned k)
{
	if (--B.seg[k].refs)
		return;
	B.cfg.ops->seg_close(B.cfg.be, k, B.seg[k].fd);
	B.seg[k].fd = -1;
	B.seg[k].id = (struct peer_id){ 0 };
}

/* A slot FREE in the BAR file (the CAS there is what processes claiming
 * slots themselves do too).  A slot we hold is skipped whatever its owner
 * wrote into the file's copy. */
static int slot_claim(unsigned nic, uint32_t pid)
{
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++) {
		struct snic_ctx_slot *v = file_slot(nic, s);
		uint32_t expect = SNIC_CTX_FREE;

		if ((B.owned[nic] >> s) & 1 ||
		    (B.cfg.ops->slot_busy && B.cfg.ops->slot_busy(B.cfg.be, nic, s)))
			continue;
		if (atomic_compare_exchange_strong(&v->state, &expect,
						   SNIC_CTX_OPEN)) {
			atomic_store(&v->owner_pid, pid);
			return (int)s;
		}
	}
	return -1;
}

static void slot_unclaim(unsigned nic, unsigned s)
{
	struct snic_ctx_slot *v = file_slot(nic, s);

	atomic_store(&v->owner_pid, 0);
	atomic_store(&v->state, SNIC_CTX_FREE);
}

static void send_fds(int fd, const struct snic_iso_ctx *m, const int *fds,
		     size_t nfd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(CB_MAX_FDS * sizeof(int))];
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfd) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		u.h.cmsg_level = SOL_SOCKET;
		u.h.cmsg_type = SCM_RIGHTS;
		u.h.cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(&u.h), fds, nfd * sizeof(int));
	}
	/* one small message per request: the socket's buffer never fills */
	if (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fprintf(stderr, "%s: broker: answer lost: %s\n", B.cfg.prog,
			strerror(errno));
}

static void send_answer(int fd, const struct snic_iso_ctx *m, int slot_fd,
			int seg_fd)
{
	int fds[2] = { slot_fd, seg_fd };

	send_fds(fd, m, fds, slot_fd < 0 ? 0 : seg_fd < 0 ? 1 : 2);
}

static void refuse(int fd, int err)
{
	struct snic_iso_ctx m = { .op = SNIC_ISO_CTX_REFUSED,
				  .status = (uint32_t)err };

	send_answer(fd, &m, -1, -1);
	close(fd);
	B.refused++;
}

/* Contexts process id holds on NIC nic. */
static unsigned pid_contexts(unsigned nic, const struct peer_id *id)
{
	unsigned n = 0;

	for (unsigned i = 0; i < CB_MAX_CONN; i++)
		n += B.conn[i].fd >= 0 && B.conn[i].nic == nic &&
		     peer_id_same(&B.conn[i].id, id);
	return n;
}

/* Contexts the processes of uid hold on all NICs of this broker (its
 * segments are shared by them all, so is the share). */
static unsigned uid_contexts(uint32_t uid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < CB_MAX_CONN; i++)
		n += B.conn[i].fd >= 0 && B.conn[i].id.uid == uid;
	return n;
}

/* Would process id take a segment beyond its uid's half of the pool?
 * (a process with a segment already takes none) */
static int uid_segs_full(const struct peer_id *id)
{
	unsigned n = 0, cap = B.cfg.nseg / 2 ? B.cfg.nseg / 2 : 1;

	for (unsigned k = 0; k < B.cfg.nseg; k++) {
		if (B.seg[k].fd < 0)
			continue;
		if (peer_id_same(&B.seg[k].id, id))
			return 0;
		n += B.seg[k].id.uid == id->uid;
	}
	return n >= cap;
}

/* Over its share: a process's, or with the NICs shared, its uid's
 * (contexts over all NICs, half of the segments). */
static int over_share(unsigned nic, const struct peer_id *id)
{
	if (pid_contexts(nic, id) >= SNIC_BROKER_CTX_PER_PID)
		return 1;
	return B.cfg.users != SNIC_USERS_NONE &&
	       (uid_contexts(id->uid) >= SNIC_BROKER_CTX_PER_UID ||
		uid_segs_full(id));
}

/* The process behind fd (the back end's, in a test), 0 or an errno. */
static int identify(int fd, struct peer_id *id)
{
	if (B.cfg.ops->identify)
		return B.cfg.ops->identify(B.cfg.be, fd, id);
	return peer_id_of(fd, id);
}

/* A new context on NIC nic for the process behind fd. */
static void grant(unsigned nic, int fd)
{
	const struct cb_ops *ops = B.cfg.ops;
	struct snic_iso_ctx m = { .op = SNIC_ISO_CTX_GRANT };
	struct peer_id id;
	unsigned ci;
	int s, k, slot_fd, err;

	for (ci = 0; ci < CB_MAX_CONN && B.conn[ci].fd >= 0; ci++)
		;
	if ((err = identify(fd, &id)) != 0) {
		refuse(fd, err == ESRCH ? ESRCH : EPERM);
		return;
	}
	if (over_share(nic, &id)) {
		B.over_share++;
		refuse(fd, ENOSPC);
		return;
	}
	if (ci == CB_MAX_CONN || (s = slot_claim(nic, id.pid)) < 0) {
		refuse(fd, EBUSY);
		return;
	}
	k = seg_get(&id);
	if (k < 0) {
		slot_unclaim(nic, (unsigned)s);
		refuse(fd, ENOMEM);
		return;
	}
	slot_fd = ops->slot_open(B.cfg.be, nic, (unsigned)s);
	if (slot_fd < 0 ||
	    ops->grant(B.cfg.be, nic, (unsigned)s, id.pid,
		       (uint32_t)(seg_pa((unsigned)k) >> SNIC_PAGE_SHIFT),
		       (uint32_t)(B.cfg.seg_len >> SNIC_PAGE_SHIFT)) != 0) {
		if (slot_fd >= 0)
			ops->slot_close(B.cfg.be, nic, (unsigned)s, slot_fd);
		seg_put((unsigned)k);
		slot_unclaim(nic, (unsigned)s);
		refuse(fd, EIO);
		return;
	}
	B.owned[nic] |= 1ull << s;
	B.conn[ci] = (struct conn){ .fd = fd, .nic = nic, .slot = (unsigned)s,
				    .seg = (unsigned)k, .slot_fd = slot_fd,
				    .id = id };
	B.granted++;
	m.slot = (uint32_t)s;
	m.seg_pa = seg_pa((unsigned)k);
	m.seg_len = B.cfg.seg_len;
	send_answer(fd, &m, slot_fd, B.seg[k].fd);
}

static void conn_end(struct conn *c)
{
	/* nothing of it is left in the firmware before its pages go */
	B.cfg.ops->dead(B.cfg.be, c->nic, c->slot);
	B.cfg.ops->slot_close(B.cfg.be, c->nic, c->slot, c->slot_fd);
	slot_unclaim(c->nic, c->slot);
	seg_put(c->seg);
	B.owned[c->nic] &= ~(1ull << c->slot);
	close(c->fd);
	c->fd = -1;
}

static void accept_all(unsigned nic)
{
	int fd;

	while ((fd = accept4(B.lfd[nic], NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		grant(nic, fd);
}

/* The statistics descriptor for the run directory's owner or root, then
 * the connection's end (nothing lives with it). */
static void admin_accept_all(unsigned nic)
{
	struct snic_iso_ctx m = { .op = SNIC_ISO_ADMIN_STATS,
				  .seg_len = B.nic[nic].stats_len };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd;

	if (B.admin_lfd[nic] < 0)
		return;
	while ((fd = accept4(B.admin_lfd[nic], NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			B.admin_refused++;
			refuse(fd, EACCES);
			continue;
		}
		send_answer(fd, &m, B.nic[nic].stats_fd, -1);
		close(fd);
		B.admin_given++;
	}
}

/* SNIC_ISO_DM_MAP: the back end's pages, or its refusal. */
static void dm_map(const struct conn *c, const struct snic_iso_ctx *q)
{
	/* rsvd: the question's number, repeated so that a late answer is
	 * not taken for the next question's (host-driver/core/broker.c) */
	struct snic_iso_ctx m = { .op = SNIC_ISO_DM_PAGES, .rsvd = q->rsvd };
	int fds[CB_MAX_FDS];
	unsigned n = 0;
	uint64_t first = 0;
	int err = EOPNOTSUPP;

	if (B.cfg.ops->dm_map)
		err = B.cfg.ops->dm_map(B.cfg.be, c->nic, c->slot, q, fds, &n,
					&first);
	if (!err && (n == 0 || n > CB_MAX_FDS))
		err = EIO;
	if (err) {
		m = (struct snic_iso_ctx){ .op = SNIC_ISO_CTX_REFUSED,
					   .status = (uint32_t)err,
					   .rsvd = q->rsvd };
		send_fds(c->fd, &m, NULL, 0);
		B.dm_refused++;
		return;
	}
	m.slot = c->slot;
	m.seg_pa = first * SNIC_PAGE_SIZE;
	m.seg_len = (uint64_t)n * SNIC_PAGE_SIZE;
	send_fds(c->fd, &m, fds, n);
	B.dm_given++;
}

/* Requests (SNIC_ISO_DM_MAP; anything else is dropped), then 1 on EOF,
 * an error or a hang-up: the context's end. */
static int conn_input(const struct conn *c, short revents)
{
	struct snic_iso_ctx q;
	ssize_t n;

	while ((n = recv(c->fd, &q, sizeof(q), MSG_DONTWAIT)) > 0)
		if (n == (ssize_t)sizeof(q) && q.op == SNIC_ISO_DM_MAP)
			dm_map(c, &q);
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
		return 1;
	return (revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* The file's copies of our slots OPEN with their owners' pids, whatever
 * another process wrote there (a FREE copy would be claimed by a process
 * opening a context through the file, whose commands nobody reads). */
static void shadows_restore(void)
{
	for (unsigned i = 0; i < CB_MAX_CONN; i++) {
		const struct conn *c = &B.conn[i];
		struct snic_ctx_slot *v;

		if (c->fd < 0)
			continue;
		v = file_slot(c->nic, c->slot);
		if (atomic_load(&v->state) != SNIC_CTX_OPEN) {
			atomic_store(&v->state, SNIC_CTX_OPEN);
			B.restored++;
		}
		if (atomic_load(&v->owner_pid) != c->id.pid) {
			atomic_store(&v->owner_pid, c->id.pid);
			B.restored++;
		}
	}
}

/* One poll() for every connection (a few syscalls per housekeeping pass,
 * none on the data path). */
void cb_poll(void)
{
	unsigned n = 0;

	if (!B.up)
		return;
	/* ends first: their slots and segments serve the new ones; the
	 * back end's housekeeping (DM pages cut) before any request */
	for (unsigned i = 0; i < CB_MAX_CONN; i++)
		if (B.conn[i].fd >= 0)
			B.pfd[n++] = (struct pollfd){ .fd = B.conn[i].fd,
						      .events = POLLIN };
	if (n != 0 && poll(B.pfd, n, 0) > 0) {
		n = 0;
		for (unsigned i = 0; i < CB_MAX_CONN; i++) {
			if (B.conn[i].fd < 0)
				continue;
			if (B.pfd[n].revents &&
			    conn_input(&B.conn[i], B.pfd[n].revents))
				conn_end(&B.conn[i]);
			n++;
		}
	}
	for (unsigned i = 0; i < B.cfg.nnics; i++) {
		if (B.cfg.ops->housekeep)
			B.cfg.ops->housekeep(B.cfg.be, i);
		accept_all(i);
		admin_accept_all(i);
	}
	shadows_restore();
}

int cb_owns(unsigned nic, unsigned slot)
{
	return nic < CB_MAX_NICS && slot < SNIC_MAX_CTX &&
	       (B.owned[nic] >> slot) & 1;
}

unsigned cb_end_holders(unsigned nic, int slot, int seg)
{
	unsigned n = 0;

	for (unsigned i = 0; B.up && i < CB_MAX_CONN; i++) {
		struct conn *c = &B.conn[i];

		if (c->fd >= 0 && ((c->nic == nic && (int)c->slot == slot) ||
				   (int)c->seg == seg)) {
			conn_end(c);
			n++;
		}
	}
	return n;
}

unsigned cb_fds(int *fds, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < B.cfg.nnics; i++) {
		if (n < max && B.lfd[i] >= 0)
			fds[n++] = B.lfd[i];
		if (n < max && B.admin_lfd[i] >= 0)
			fds[n++] = B.admin_lfd[i];
	}
	for (unsigned i = 0; i < CB_MAX_CONN && n < max; i++)
		if (B.conn[i].fd >= 0)
			fds[n++] = B.conn[i].fd;
	return n;
}

void cb_fini(void)
{
	if (!B.up)
		return;
	for (unsigned i = 0; i < CB_MAX_CONN; i++)
		if (B.conn[i].fd >= 0)
			conn_end(&B.conn[i]);
	for (unsigned i = 0; i < B.cfg.nnics; i++) {
		if (B.file[i])
			munmap(B.file[i], SNIC_BAR_STATS_OFF);
		B.file[i] = NULL;
		if (B.lfd[i] >= 0) {
			close(B.lfd[i]);
			unlink(B.path[i]);
		}
		B.lfd[i] = -1;
		if (B.admin_lfd[i] >= 0) {
			close(B.admin_lfd[i]);
			unlink(B.admin_path[i]);
		}
		B.admin_lfd[i] = -1;
	}
	B.up = 0;
	printf("%s: broker: %lu contexts granted, %lu refused (%lu over a "
	       "process's share), %lu words of file slot copies restored; "
	       "statistics to %lu administrators, %lu refused; device memory "
	       "mapped %lu times, %lu refused\n", B.cfg.prog, B.granted,
	       B.refused, B.over_share, B.restored, B.admin_given,
	       B.admin_refused, B.dm_given, B.dm_refused);
}
