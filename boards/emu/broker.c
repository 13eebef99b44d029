/* SPDX-License-Identifier: MIT */
/*
 * The broker (broker.h).  Runs in the emulator's loop (housekeeping, every
 * 10 ms): no thread, so it touches the firmware only between polls.
 *
 * A connection is a context: accept, SO_PEERCRED for the pid, a free slot
 * claimed in the BAR file (CAS FREE -> OPEN there, so processes that map
 * the file themselves skip it), a sealed memfd mapped over that slot in
 * our view of the BAR (the firmware reads commands from it; only the
 * process we hand it to can write it), the process's segment (one per
 * pid, shared by its contexts: one address space cannot be isolated from
 * itself, and an application buffer registered on two contexts is backed
 * once), then snic_nic_ctx_grant and the answer with both descriptors.
 * POLLHUP or EOF on the socket: snic_nic_ctx_dead, the slot and, with
 * its last context, the segment mapped back to what was there before.
 *
 * The slot's descriptor covers the context's doorbell page too (hostif.h
 * SNIC_CTX_DB_OFF): the firmware takes a QP's doorbell only from its own
 * context's page.  A process gets at most BROKER_CTX_PER_PID contexts per
 * NIC (then ENOSPC; EBUSY when every slot is taken).
 *
 * Statistics: our view of the BAR's statistics area is a memfd too, so the
 * firmware publishes every QP's PSNs, state and peer address there and
 * the BAR file's area stays empty; <run dir>/<name>.admin.sock hands that
 * memfd to the run directory's owner or root (snicctl; hostif.h "Host
 * isolation").
 *
 * Device memory: a context asks on its socket for the pages of a DM it
 * holds (SNIC_ISO_DM_MAP); each page becomes a memfd in our view, handed
 * to it alone.  Pages it frees are cut (our view maps the file's page
 * again) before the firmware may hand them to anyone else.
 */
#include "broker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "segment.h"
#include "snic/fw.h"
#include "snic/hostif.h"

#define BROKER_MAX_NICS 8
#define BROKER_MAX_CONN (BROKER_MAX_NICS * SNIC_MAX_CTX)
#define BROKER_MAX_SEG  SNIC_MAX_CTX
#define BROKER_DM_PAGES (SNIC_DM_SIZE / SNIC_PAGE_SIZE)
/* Contexts one process may hold on one NIC: the rest stay for others. */
#define BROKER_CTX_PER_PID SNIC_BROKER_CTX_PER_PID

struct seg {
	uint32_t pid;
	int fd;                 /* -1: free                                 */
	unsigned refs;
};

struct conn {
	int fd;                 /* -1: free                                 */
	unsigned nic, slot, seg;
	int slot_fd;
	uint32_t pid;
};

static struct {
	struct broker_nic nic[BROKER_MAX_NICS];
	unsigned nnics;
	int lfd[BROKER_MAX_NICS];
	char path[BROKER_MAX_NICS][256];
	int admin_lfd[BROKER_MAX_NICS];
	char admin_path[BROKER_MAX_NICS][256];
	int stats_fd[BROKER_MAX_NICS];  /* our view's statistics area       */
	/* DM pages handed to a context: our view's page is a memfd (-1: the
	 * BAR file's page) */
	int dm_fd[BROKER_MAX_NICS][BROKER_DM_PAGES];
	unsigned long dm_given, dm_refused, dm_cut;
	struct snic_hostmem *hm;
	uint64_t seg_len;
	unsigned nseg;
	struct seg seg[BROKER_MAX_SEG];
	struct conn conn[BROKER_MAX_CONN];
	uint64_t owned[BROKER_MAX_NICS];        /* slots with a connection */
	struct pollfd pfd[BROKER_MAX_CONN];
	uint8_t *file[BROKER_MAX_NICS]; /* the BAR file itself, not our view */
	unsigned long granted, refused, restored; /* printed at the end */
	unsigned long over_share, admin_given, admin_refused;
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

/* Our view of it: what the firmware reads. */
static uint8_t *nic_slot(unsigned nic, unsigned slot)
{
	return B.nic[nic].bar + SNIC_BAR_CTX_OFF + (size_t)slot * SNIC_CTX_SLOT_SIZE;
}

/* Listen on <run_dir>/<nic name><suffix> (path kept in `path`). */
static int listen_on(unsigned i, const char *run_dir, const char *suffix,
		     char path[256], int *lfd)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if ((size_t)snprintf(path, 256, "%s/%s%s", run_dir, B.nic[i].name,
			     suffix) >= sizeof(a.sun_path)) {
		fprintf(stderr, "snic-emu: socket path too long: %s/%s%s\n",
			run_dir, B.nic[i].name, suffix);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	/* the BAR's lock says no live emulator serves this NIC: any socket
	 * left here is a dead one's */
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    chmod(path, 0600) != 0 || listen(fd, SNIC_MAX_CTX) != 0) {
		fprintf(stderr, "snic-emu: cannot listen on %s: %s\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*lfd = fd;
	return 0;
}

/* Our view's statistics area becomes a memfd holding what the firmware
 * wrote there so far (the names); the BAR file's area is cleared. */
static int stats_private(unsigned i)
{
	uint8_t *at = B.nic[i].bar + SNIC_BAR_STATS_OFF;
	uint8_t *copy = malloc(SNIC_BAR_STATS_SIZE);

	if (!copy)
		return -1;
	memcpy(copy, at, SNIC_BAR_STATS_SIZE);
	B.stats_fd[i] = snic_private_map(at, SNIC_BAR_STATS_SIZE, "snic-stats");
	if (B.stats_fd[i] >= 0)
		memcpy(at, copy, SNIC_BAR_STATS_SIZE);
	free(copy);
	if (B.stats_fd[i] < 0)
		return -1;
	memset(B.file[i] + SNIC_BAR_STATS_OFF, 0, SNIC_BAR_STATS_SIZE);
	return 0;
}

int broker_init(const char *run_dir, const struct broker_nic *nics,
		unsigned n, struct snic_hostmem *hm, uint64_t seg_len)
{
	memset(&B, 0, sizeof(B));
	for (unsigned i = 0; i < BROKER_MAX_NICS; i++) {
		B.lfd[i] = B.admin_lfd[i] = B.stats_fd[i] = -1;
		for (unsigned p = 0; p < BROKER_DM_PAGES; p++)
			B.dm_fd[i][p] = -1;
	}
	for (unsigned i = 0; i < BROKER_MAX_CONN; i++)
		B.conn[i].fd = -1;
	for (unsigned i = 0; i < BROKER_MAX_SEG; i++)
		B.seg[i].fd = -1;
	if (n > BROKER_MAX_NICS || seg_len == 0 || hm->area < seg_len)
		return -1;
	B.nnics = n;
	B.hm = hm;
	B.seg_len = seg_len;
	B.nseg = (unsigned)(hm->area / seg_len);
	if (B.nseg > BROKER_MAX_SEG)
		B.nseg = BROKER_MAX_SEG;
	memcpy(B.nic, nics, n * sizeof(*nics));
	B.up = 1;
	for (unsigned i = 0; i < n; i++) {
		B.file[i] = mmap(NULL, SNIC_BAR_SIZE, PROT_READ | PROT_WRITE,
				 MAP_SHARED, nics[i].bar_fd, 0);
		if (B.file[i] == MAP_FAILED) {
			B.file[i] = NULL;
			broker_fini();
			return -1;
		}
		snic_posix_file_guard(nics[i].bar_fd, SNIC_BAR_SIZE, B.file[i],
				      SNIC_BAR_SIZE);
	}
	for (unsigned i = 0; i < n; i++)
		if (stats_private(i) != 0 ||
		    listen_on(i, run_dir, ".sock", B.path[i], &B.lfd[i]) != 0 ||
		    listen_on(i, run_dir, ".admin.sock", B.admin_path[i],
			      &B.admin_lfd[i]) != 0) {
			broker_fini();
			return -1;
		}
	return 0;
}

static uint64_t seg_pa(unsigned k)
{
	return B.hm->size + (uint64_t)k * B.seg_len;
}

/* The segment of pid (a new one when it has none), or -1. */
static int seg_get(uint32_t pid)
{
	int free_k = -1;

	for (unsigned k = 0; k < B.nseg; k++) {
		if (B.seg[k].fd >= 0 && B.seg[k].pid == pid) {
			B.seg[k].refs++;
			return (int)k;
		}
		if (B.seg[k].fd < 0 && free_k < 0)
			free_k = (int)k;
	}
	if (free_k < 0)
		return -1;
	B.seg[free_k].fd = snic_private_map(B.hm->base + seg_pa((unsigned)free_k),
					    B.seg_len, "snic-segment");
	if (B.seg[free_k].fd < 0)
		return -1;
	B.seg[free_k].pid = pid;
	B.seg[free_k].refs = 1;
	return free_k;
}

static void seg_put(unsigned k)
{
	if (--B.seg[k].refs)
		return;
	/* fresh zero pages: the next owner sees nothing of this one's */
	snic_private_unmap(B.hm->base + seg_pa(k), B.seg_len, B.seg[k].fd, -1, 0);
	B.seg[k].fd = -1;
	B.seg[k].pid = 0;
}

/* A slot FREE in the BAR file (the CAS there is what processes claiming
 * slots themselves do too).  Our view of a slot we hold is its memfd,
 * whatever its owner wrote there: skipped. */
static int slot_claim(unsigned nic, uint32_t pid)
{
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++) {
		struct snic_ctx_slot *v = file_slot(nic, s);
		uint32_t expect = SNIC_CTX_FREE;

		if ((B.owned[nic] >> s) & 1)
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
		char buf[CMSG_SPACE(BROKER_DM_PAGES * sizeof(int))];
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
		fprintf(stderr, "snic-emu: broker: answer lost: %s\n",
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

/* Contexts pid holds on NIC nic. */
static unsigned pid_contexts(unsigned nic, uint32_t pid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < BROKER_MAX_CONN; i++)
		n += B.conn[i].fd >= 0 && B.conn[i].nic == nic &&
		     B.conn[i].pid == pid;
	return n;
}

/* A new context on NIC nic for the process behind fd. */
static void grant(unsigned nic, int fd)
{
	struct snic_iso_ctx m = { .op = SNIC_ISO_CTX_GRANT };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	unsigned ci;
	int s, k, slot_fd;
	uint8_t *slot_at;

	for (ci = 0; ci < BROKER_MAX_CONN && B.conn[ci].fd >= 0; ci++)
		;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    cr.pid <= 0) {
		refuse(fd, EPERM);
		return;
	}
	if (pid_contexts(nic, (uint32_t)cr.pid) >= BROKER_CTX_PER_PID) {
		B.over_share++;
		refuse(fd, ENOSPC);
		return;
	}
	if (ci == BROKER_MAX_CONN || (s = slot_claim(nic, (uint32_t)cr.pid)) < 0) {
		refuse(fd, EBUSY);
		return;
	}
	k = seg_get((uint32_t)cr.pid);
	if (k < 0) {
		slot_unclaim(nic, (unsigned)s);
		refuse(fd, ENOMEM);
		return;
	}
	slot_at = nic_slot(nic, (unsigned)s);
	slot_fd = snic_private_map(slot_at, SNIC_CTX_SLOT_SIZE, "snic-ctx-slot");
	if (slot_fd < 0 ||
	    snic_nic_ctx_grant(B.nic[nic].fw, (unsigned)s, (uint32_t)cr.pid,
			       (uint32_t)(seg_pa((unsigned)k) >> SNIC_PAGE_SHIFT),
			       (uint32_t)(B.seg_len >> SNIC_PAGE_SHIFT)) != 0) {
		if (slot_fd >= 0)
			snic_private_unmap(slot_at, SNIC_CTX_SLOT_SIZE, slot_fd,
					   B.nic[nic].bar_fd,
					   SNIC_BAR_CTX_OFF +
					   (uint64_t)s * SNIC_CTX_SLOT_SIZE);
		seg_put((unsigned)k);
		slot_unclaim(nic, (unsigned)s);
		refuse(fd, EIO);
		return;
	}
	B.owned[nic] |= 1ull << s;
	B.conn[ci] = (struct conn){ .fd = fd, .nic = nic, .slot = (unsigned)s,
				    .seg = (unsigned)k, .slot_fd = slot_fd,
				    .pid = (uint32_t)cr.pid };
	B.granted++;
	m.slot = (uint32_t)s;
	m.seg_pa = seg_pa((unsigned)k);
	m.seg_len = B.seg_len;
	send_answer(fd, &m, slot_fd, B.seg[k].fd);
}

static void conn_end(struct conn *c)
{
	uint64_t off = SNIC_BAR_CTX_OFF + (uint64_t)c->slot * SNIC_CTX_SLOT_SIZE;

	/* nothing of it is left in the firmware before its pages go */
	snic_nic_ctx_dead(B.nic[c->nic].fw, c->slot);
	snic_private_unmap(nic_slot(c->nic, c->slot), SNIC_CTX_SLOT_SIZE,
			   c->slot_fd, B.nic[c->nic].bar_fd, off);
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

/* The statistics memfd for the run directory's owner or root, then the
 * connection's end (nothing lives with it). */
static void admin_accept_all(unsigned nic)
{
	struct snic_iso_ctx m = { .op = SNIC_ISO_ADMIN_STATS,
				  .seg_len = SNIC_BAR_STATS_SIZE };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd;

	while ((fd = accept4(B.admin_lfd[nic], NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			B.admin_refused++;
			refuse(fd, EACCES);
			continue;
		}
		send_answer(fd, &m, B.stats_fd[nic], -1);
		close(fd);
		B.admin_given++;
	}
}

/* Our view's DM page p (nic/grant.c: the firmware reads it there). */
static uint8_t *dm_page(unsigned nic, unsigned p)
{
	return B.nic[nic].bar + SNIC_BAR_DM_OFF + (size_t)p * SNIC_PAGE_SIZE;
}

static void dm_refuse(const struct conn *c, const struct snic_iso_ctx *q,
		      int err)
{
	struct snic_iso_ctx m = { .op = SNIC_ISO_CTX_REFUSED,
				  .status = (uint32_t)err,
				  .rsvd = q->rsvd /* the question's number */ };

	send_fds(c->fd, &m, NULL, 0);
	B.dm_refused++;
}

/* SNIC_ISO_DM_MAP: the pages of [seg_pa, seg_pa + seg_len) of the DM
 * area, each its own memfd, if every one is the asking context's.  A
 * page's first hand-out makes it a fresh zero memfd (the DM was zeroed
 * when allocated, and nothing of the context's can be in it before it
 * maps it; what another process wrote into the file's page stays there). */
static void dm_map(const struct conn *c, const struct snic_iso_ctx *q)
{
	struct snic_iso_ctx m = { .op = SNIC_ISO_DM_PAGES, .rsvd = q->rsvd };
	int fds[BROKER_DM_PAGES];
	uint64_t first = q->seg_pa / SNIC_PAGE_SIZE, n;

	n = (q->seg_pa % SNIC_PAGE_SIZE + q->seg_len + SNIC_PAGE_SIZE - 1) /
	    SNIC_PAGE_SIZE;
	if (q->seg_len == 0 || q->seg_len > SNIC_DM_SIZE ||
	    first >= BROKER_DM_PAGES || n > BROKER_DM_PAGES - first) {
		dm_refuse(c, q, EINVAL);
		return;
	}
	for (uint64_t p = first; p < first + n; p++)
		if (snic_nic_dm_owner(B.nic[c->nic].fw, (unsigned)p) !=
		    (int)c->slot) {
			dm_refuse(c, q, EACCES);
			return;
		}
	for (uint64_t p = first; p < first + n; p++) {
		int *fd = &B.dm_fd[c->nic][p];

		if (*fd < 0)
			*fd = snic_private_map(dm_page(c->nic, (unsigned)p),
					       SNIC_PAGE_SIZE, "snic-dm");
		if (*fd < 0) {
			dm_refuse(c, q, ENOMEM);
			return;
		}
		fds[p - first] = *fd;
	}
	m.slot = c->slot;
	m.seg_pa = first * SNIC_PAGE_SIZE;
	m.seg_len = n * SNIC_PAGE_SIZE;
	send_fds(c->fd, &m, fds, (size_t)n);
	B.dm_given++;
}

/* DM pages a context of ours freed (or left behind): our view maps the
 * BAR file's page again, so whoever still maps the memfd reaches nothing
 * of the next owner's; then the firmware may hand them out. */
static void dm_cut(unsigned nic)
{
	uint32_t held = snic_nic_dm_held(B.nic[nic].fw);

	if (!held)
		return;
	for (unsigned p = 0; p < BROKER_DM_PAGES; p++)
		if ((held >> p) & 1 && B.dm_fd[nic][p] >= 0) {
			snic_private_unmap(dm_page(nic, p), SNIC_PAGE_SIZE,
					   B.dm_fd[nic][p], B.nic[nic].bar_fd,
					   SNIC_BAR_DM_OFF +
					   (uint64_t)p * SNIC_PAGE_SIZE);
			B.dm_fd[nic][p] = -1;
			B.dm_cut++;
		}
	snic_nic_dm_release(B.nic[nic].fw, held);
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
	for (unsigned i = 0; i < BROKER_MAX_CONN; i++) {
		const struct conn *c = &B.conn[i];
		struct snic_ctx_slot *v;

		if (c->fd < 0)
			continue;
		v = file_slot(c->nic, c->slot);
		if (atomic_load(&v->state) != SNIC_CTX_OPEN) {
			atomic_store(&v->state, SNIC_CTX_OPEN);
			B.restored++;
		}
		if (atomic_load(&v->owner_pid) != B.seg[c->seg].pid) {
			atomic_store(&v->owner_pid, B.seg[c->seg].pid);
			B.restored++;
		}
	}
}

/* One poll() for every connection (a few syscalls per 10 ms, none on the
 * data path). */
void broker_poll(void)
{
	unsigned n = 0;

	if (!B.up)
		return;
	/* ends first: their slots and segments serve the new ones; DM
	 * pages freed are cut before any request is answered */
	for (unsigned i = 0; i < BROKER_MAX_CONN; i++)
		if (B.conn[i].fd >= 0)
			B.pfd[n++] = (struct pollfd){ .fd = B.conn[i].fd,
						      .events = POLLIN };
	if (n != 0 && poll(B.pfd, n, 0) > 0) {
		n = 0;
		for (unsigned i = 0; i < BROKER_MAX_CONN; i++) {
			if (B.conn[i].fd < 0)
				continue;
			if (B.pfd[n].revents &&
			    conn_input(&B.conn[i], B.pfd[n].revents))
				conn_end(&B.conn[i]);
			n++;
		}
	}
	for (unsigned i = 0; i < B.nnics; i++) {
		dm_cut(i);
		accept_all(i);
		admin_accept_all(i);
	}
	shadows_restore();
}

int broker_owns(unsigned nic, unsigned slot)
{
	return nic < BROKER_MAX_NICS && slot < SNIC_MAX_CTX &&
	       (B.owned[nic] >> slot) & 1;
}

void broker_fini(void)
{
	if (!B.up)
		return;
	for (unsigned i = 0; i < BROKER_MAX_CONN; i++)
		if (B.conn[i].fd >= 0)
			conn_end(&B.conn[i]);
	for (unsigned i = 0; i < B.nnics; i++) {
		if (B.stats_fd[i] >= 0)
			snic_private_unmap(B.nic[i].bar + SNIC_BAR_STATS_OFF,
					   SNIC_BAR_STATS_SIZE, B.stats_fd[i],
					   B.nic[i].bar_fd, SNIC_BAR_STATS_OFF);
		B.stats_fd[i] = -1;
		for (unsigned p = 0; p < BROKER_DM_PAGES; p++)
			if (B.dm_fd[i][p] >= 0)
				snic_private_unmap(dm_page(i, p), SNIC_PAGE_SIZE,
						   B.dm_fd[i][p], B.nic[i].bar_fd,
						   SNIC_BAR_DM_OFF +
						   (uint64_t)p * SNIC_PAGE_SIZE);
		if (B.file[i])
			munmap(B.file[i], SNIC_BAR_SIZE);
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
	printf("snic-emu: broker: %lu contexts granted, %lu refused (%lu over a "
	       "process's share), %lu words of file slot copies restored; "
	       "statistics to %lu administrators, %lu refused; device memory "
	       "mapped %lu times, %lu refused, %lu pages cut\n", B.granted,
	       B.refused, B.over_share, B.restored, B.admin_given,
	       B.admin_refused, B.dm_given, B.dm_refused, B.dm_cut);
}
