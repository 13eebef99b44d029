/* SPDX-License-Identifier: MIT */
/*
 * The context broker (boards/common/host/ctx_broker.c) keys a process's
 * segment by pid and start time (peer_id.h), not by pid alone: a process
 * that passes its context socket on and ends must leave its segment to
 * nobody who later gets its pid.  Against a fake back end (memfds, a
 * firmware that grants everything) in a private run directory:
 *  - identities faked through cb_ops.identify: a second context of the
 *    same process (same pid and start time) shares its segment; a process
 *    with the same pid but another start time (the pid reused while the
 *    first one's socket lives on elsewhere) gets another segment, and the
 *    first one's is freed only when its last socket closes;
 *  - the kernel's word (peer_id_of): a connected child is its pid and
 *    /proc start time; a child that connects and ends before the broker
 *    accepts it is refused (ESRCH: nothing can be said about who it was);
 *  - cfg.users left unset shares nothing (its zero value; 0600 socket);
 *  - two NICs shared with users (cfg.users): a uid holds at most half of
 *    the segments and SNIC_BROKER_CTX_PER_UID contexts of both NICs
 *    together (then ENOSPC), and another uid still gets its own.
 *
 *   ctx_broker_id          (exit 0: all passed)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctx_broker.h"
#include "peer_id.h"
#include "../check.h"

#define SEG_LEN (1u << 20)
#define NSEG 4

static char run_dir[] = "/tmp/snic-cbid.XXXXXX";
static struct peer_id fake;             /* the next connection's identity */
static int use_fake;
static int seg_fd[NSEG], slot_fd[SNIC_MAX_CTX];
static unsigned seg_closed;

static int f_slot_open(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	return slot_fd[slot];
}

static void f_slot_close(void *be, unsigned nic, unsigned slot, int fd)
{
	(void)be;
	(void)nic;
	(void)slot;
	(void)fd;
}

static int f_seg_open(void *be, unsigned k)
{
	(void)be;
	return seg_fd[k];
}

static void f_seg_close(void *be, unsigned k, int fd)
{
	(void)be;
	(void)k;
	(void)fd;
	seg_closed++;
}

static int f_grant(void *be, unsigned nic, unsigned slot, uint32_t pid,
		   uint32_t first, uint32_t n)
{
	(void)be;
	(void)nic;
	(void)slot;
	(void)pid;
	(void)first;
	(void)n;
	return 0;
}

static void f_dead(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	(void)slot;
}

static int f_identify(void *be, int fd, struct peer_id *id)
{
	(void)be;
	if (!use_fake)
		return peer_id_of(fd, id);
	*id = fake;
	return 0;
}

static const struct cb_ops ops = {
	.slot_open = f_slot_open, .slot_close = f_slot_close,
	.seg_open = f_seg_open, .seg_close = f_seg_close,
	.grant = f_grant, .dead = f_dead, .identify = f_identify,
};

static const char *nic_name = "cbid";    /* the NIC connect_nic reaches */

static int connect_nic(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s.sock", run_dir,
		 nic_name);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("connect");
		exit(2);
	}
	return fd;
}

/* The broker's answer on fd (descriptors closed): 0 or -1. */
static int answer(int fd, struct snic_iso_ctx *m)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (recvmsg(fd, &msg, 0) != (ssize_t)sizeof(*m))
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
				close(((int *)(void *)CMSG_DATA(c))[i]);
	return 0;
}

/* The mode bits of NIC name's socket, or -1. */
static int stat_mode(const char *name)
{
	char path[sizeof(run_dir) + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s.sock", run_dir, name);
	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* A new context as process id of uid: its answer. */
static struct snic_iso_ctx open_uid(uint32_t uid, uint32_t pid,
				    uint64_t start, int *fd)
{
	struct snic_iso_ctx m = { 0 };

	use_fake = 1;
	fake = (struct peer_id){ .pid = pid, .uid = uid, .start = start };
	*fd = connect_nic();
	cb_poll();
	if (answer(*fd, &m) != 0)
		m.op = 0;
	return m;
}

static struct snic_iso_ctx open_as(uint32_t pid, uint64_t start, int *fd)
{
	return open_uid((uint32_t)getuid(), pid, start, fd);
}

static void faked(void)
{
	struct snic_iso_ctx a, b, c, d;
	int fa, fb, fc, fd;

	a = open_as(4242, 1000, &fa);
	b = open_as(4242, 1000, &fb);
	check(a.op == SNIC_ISO_CTX_GRANT && b.op == SNIC_ISO_CTX_GRANT &&
	      a.seg_pa == b.seg_pa && a.slot != b.slot,
	      "two contexts of one process (pid and start time): one segment");
	/* the first process passed its sockets on and ended; pid 4242 is
	 * now a newer process's */
	c = open_as(4242, 1007, &fc);
	check(c.op == SNIC_ISO_CTX_GRANT && c.seg_pa != a.seg_pa,
	      "the same pid with another start time: another segment");
	close(fa);
	close(fb);
	cb_poll();
	check(seg_closed == 1, "the first process's segment freed when its "
	      "last socket closed (not before, not with the newer one's)");
	d = open_as(4242, 1007, &fd);
	check(d.op == SNIC_ISO_CTX_GRANT && d.seg_pa == c.seg_pa,
	      "the newer process's second context shares its own segment");
	close(fc);
	close(fd);
	cb_poll();
	check(seg_closed == 2, "its segment freed with its last socket");
}

/* A child connects, passes its connected socket to us (SCM_RIGHTS over
 * pv; returned) and ends, or (*hold not NULL) waits until we close *hold. */
static int child_connects(pid_t *pp, int *hold)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char one = 1;
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *h;
	int pv[2], c = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pv) != 0)
		exit(2);
	*pp = fork();
	if (*pp == 0) {
		close(pv[0]);
		c = connect_nic();
		h = CMSG_FIRSTHDR(&msg);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &c, sizeof(int));
		if (sendmsg(pv[1], &msg, 0) != 1)
			_exit(1);
		if (hold)
			(void)read(pv[1], &one, 1);     /* until we close pv */
		_exit(0);
	}
	close(pv[1]);
	if (recvmsg(pv[0], &msg, 0) == 1 && (h = CMSG_FIRSTHDR(&msg)) &&
	    h->cmsg_type == SCM_RIGHTS)
		memcpy(&c, CMSG_DATA(h), sizeof(int));
	if (hold)
		*hold = pv[0];
	else
		close(pv[0]);
	return c;
}

static void kernel_word(void)
{
	struct peer_id me, got;
	struct snic_iso_ctx m = { 0 };
	int sv[2], st, c, hold;
	pid_t p;

	use_fake = 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		exit(2);
	check(peer_start_time((uint32_t)getpid(), &me.start) == 0 &&
	      peer_id_of(sv[0], &got) == 0 && got.pid == (uint32_t)getpid() &&
	      got.start == me.start && got.start != 0,
	      "peer_id_of: the peer's pid and /proc start time");
	close(sv[0]);
	close(sv[1]);

	/* a live child: granted as itself */
	c = child_connects(&p, &hold);
	cb_poll();
	check(c >= 0 && answer(c, &m) == 0 && m.op == SNIC_ISO_CTX_GRANT &&
	      peer_start_time((uint32_t)p, &me.start) == 0,
	      "a live process that connected is granted a context");
	close(c);
	close(hold);
	waitpid(p, &st, 0);
	cb_poll();

	/* connected, passed its socket on, ended before the broker looked */
	c = child_connects(&p, NULL);
	waitpid(p, &st, 0);
	cb_poll();
	m = (struct snic_iso_ctx){ 0 };
	check(c >= 0 && answer(c, &m) == 0 && m.op == SNIC_ISO_CTX_REFUSED &&
	      m.status == ESRCH,
	      "a process that connected and ended before it was accepted: "
	      "refused (ESRCH), its pid's next owner cannot inherit it");
	if (c >= 0)
		close(c);
}

/* n contexts of process pid of uid on NIC name: how many were granted
 * (their sockets kept in fds from *nfd on); *err the last refusal's. */
static unsigned open_n(const char *name, uint32_t uid, uint32_t pid,
		       unsigned n, int *fds, unsigned *nfd, uint32_t *err)
{
	unsigned got = 0;

	nic_name = name;
	*err = 0;
	for (unsigned i = 0; i < n; i++) {
		struct snic_iso_ctx m = open_uid(uid, pid, 1, &fds[*nfd]);

		if (m.op == SNIC_ISO_CTX_GRANT) {
			got++;
			(*nfd)++;
		} else {
			*err = m.status;
			close(fds[*nfd]);
		}
	}
	return got;
}

/* NICs shared with users: a uid's share is of the whole broker (both
 * NICs' contexts, half of the segments they all draw from). */
static void shared(void)
{
	int fds[2 * SNIC_MAX_CTX];
	unsigned nfd = 0, got;
	uint32_t err;

	got = open_n("cbid", 5001, 100, 1, fds, &nfd, &err) +
	      open_n("cbie", 5001, 101, 1, fds, &nfd, &err);
	check(got == 2, "uid A: two processes, one context each on either "
	      "NIC (two of four segments)");
	got = open_n("cbid", 5001, 102, 1, fds, &nfd, &err);
	check(got == 0 && err == ENOSPC, "uid A's third process: ENOSPC "
	      "(half of the segments is a uid's share)");
	got = open_n("cbie", 5002, 200, 1, fds, &nfd, &err) +
	      open_n("cbie", 5002, 201, 1, fds, &nfd, &err);
	check(got == 2, "uid B still finds its two segments");
	got = open_n("cbid", 5001, 100, SNIC_BROKER_CTX_PER_PID - 1, fds,
		     &nfd, &err) +
	      open_n("cbie", 5001, 101, SNIC_BROKER_CTX_PER_PID - 1, fds,
		     &nfd, &err);
	check(got == 2 * (SNIC_BROKER_CTX_PER_PID - 1),
	      "uid A: a process's share on each NIC (32 in all)");
	got = open_n("cbid", 5001, 101, 1, fds, &nfd, &err);
	check(got == 0 && err == ENOSPC, "uid A's 33rd context, on the NIC "
	      "where it holds 16: ENOSPC (the uid's share is the broker's)");
	got = open_n("cbid", 5002, 200, 1, fds, &nfd, &err);
	check(got == 1, "uid B still gets a context");
	while (nfd)
		close(fds[--nfd]);
	cb_poll();
}

int main(void)
{
	struct cb_nic nic = { .name = "cbid", .stats_fd = -1 };
	/* .users left out: the zero value shares nothing (not gid 0) */
	struct cb_config cfg = { .prog = "ctx_broker_id", .nics = &nic,
				 .nnics = 1, .ops = &ops, .seg_base = 1u << 30,
				 .seg_len = SEG_LEN, .nseg = NSEG };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(run_dir)) {
		perror("mkdtemp");
		return 2;
	}
	cfg.run_dir = run_dir;
	nic.bar_fd = memfd_create("cbid-bar", MFD_CLOEXEC);
	if (nic.bar_fd < 0 || ftruncate(nic.bar_fd, SNIC_BAR_STATS_OFF) != 0)
		return 2;
	for (unsigned k = 0; k < NSEG; k++)
		seg_fd[k] = memfd_create("cbid-seg", MFD_CLOEXEC);
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++)
		slot_fd[s] = memfd_create("cbid-slot", MFD_CLOEXEC);
	if (cb_init(&cfg) != 0) {
		fprintf(stderr, "cb_init failed\n");
		return 2;
	}
	check(stat_mode("cbid") == 0600, "users unset in cb_config: the "
	      "socket is 0600 (the zero value shares with nobody)");
	faked();
	kernel_word();
	cb_fini();

	/* two NICs shared with all users */
	struct cb_nic two[2] = { { .name = "cbid", .stats_fd = -1 },
				 { .name = "cbie", .stats_fd = -1 } };

	cfg.nics = two;
	cfg.nnics = 2;
	cfg.users = SNIC_USERS_ALL;
	for (unsigned i = 0; i < 2; i++) {
		two[i].bar_fd = memfd_create("cbid-bar", MFD_CLOEXEC);
		if (two[i].bar_fd < 0 ||
		    ftruncate(two[i].bar_fd, SNIC_BAR_STATS_OFF) != 0)
			return 2;
	}
	if (cb_init(&cfg) != 0) {
		fprintf(stderr, "cb_init (shared) failed\n");
		return 2;
	}
	check(stat_mode("cbie") == 0666, "users all: the socket is 0666");
	shared();
	cb_fini();
	rmdir(run_dir);
	printf("ctx_broker_id: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
