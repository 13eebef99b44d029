/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: a context from the NIC's broker (hostif.h "Host
 * isolation", boards/emu/broker.c).  Connecting asks for a context; the
 * answer carries the context's BAR slot and the process's segment of host
 * memory as descriptors, mapped here over the slot of our BAR view and
 * as the context's host memory.  Other contexts' slots and pages are
 * never mapped.  The socket stays open for the context's life: closing it
 * (or dying) ends the context, nobody else can.  The slot carries the
 * context's own doorbell page (hostif.h SNIC_CTX_DB_OFF).  Refusals:
 * EBUSY every slot taken, ENOSPC this process's share
 * (SNIC_BROKER_CTX_PER_PID) or, on a NIC shared with other users, its
 * uid's (SNIC_BROKER_CTX_PER_UID) taken; ibv_open_device fails with that
 * errno.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "memory/memory.h"

/* The broker answers within its 10 ms housekeeping, but a loaded machine
 * can stall the NIC's process for seconds: a fixed 10 s wait once gave up
 * while the broker was about to answer (it logged "answer lost: Broken
 * pipe").  So we wait while the NIC's process lives, checking every
 * BROKER_SLICE_MS, up to BROKER_WAIT_MAX_S; a dead NIC ends the wait at
 * once (ENODEV). */
#define BROKER_SLICE_MS   500
#define BROKER_WAIT_MAX_S 60
#define BROKER_CONNECT_S  10    /* connect() on a full backlog, send()   */

/* The socket, if it is a socket of the run directory's owner and that
 * owner is trusted (run_owner.c). */
static int broker_connect(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = BROKER_CONNECT_S };
	const char *no = getenv("SNIC_NO_BROKER");
	struct stat st, dst;
	struct ucred cred = { 0 };
	socklen_t clen = sizeof(cred);
	int fd;

	if (no && strcmp(no, "1") == 0) {
		/* a debugging mode, said loudly: what it does not isolate is
		 * in boards/emu/README.md "Security model (host side)" */
		static _Atomic int warned;

		if (!atomic_exchange(&warned, 1))
			fprintf(stderr, "snic: WARNING: SNIC_NO_BROKER=1: "
				"contexts from the shared BAR file and host "
				"memory, NOT isolated from each other (for "
				"debugging only)\n");
		return -ENOENT;
	}
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s.sock",
			     hd_run_dir(), name) >= sizeof(a.sun_path) ||
	    lstat(a.sun_path, &st) != 0)
		return -ENOENT;
	if (hd_run_dir_trusted(&dst) != 0)
		return -EACCES;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != dst.st_uid) {
		fprintf(stderr, "snic: refusing %s: not a socket of the run "
			"directory's owner\n", a.sun_path);
		return -EACCES;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int err = errno == ECONNREFUSED ? ENODEV : errno;

		hd_dbg("broker %s: %s\n", a.sun_path, strerror(errno));
		close(fd);
		return -err;
	}
	/* the process behind it, not only the file, is the trusted owner's */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
	    cred.uid != dst.st_uid) {
		fprintf(stderr, "snic: refusing %s: its server is uid %d, not "
			"the run directory's owner %u\n", a.sun_path,
			clen == sizeof(cred) ? (int)cred.uid : -1,
			(unsigned)dst.st_uid);
		close(fd);
		return -EACCES;
	}
	return fd;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Until the broker's answer (or its hang-up) is there to read: 0;
 * ENODEV as soon as the NIC's process is gone, ETIMEDOUT (said on
 * stderr) when it lives but has not answered in BROKER_WAIT_MAX_S. */
static int broker_wait(const struct hd_context *ctx, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t start = mono_ms();

	for (;;) {
		int n = poll(&p, 1, BROKER_SLICE_MS);

		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return errno;
		if (hd_fw_down(ctx, 1))
			return ENODEV;
		if (mono_ms() - start >= BROKER_WAIT_MAX_S * 1000ll)
			break;
	}
	fprintf(stderr, "snic: %.*s: the NIC's broker (pid %u) did not answer "
		"within %d s\n", (int)sizeof(ctx->hdr->name), ctx->hdr->name,
		(unsigned)atomic_load(&ctx->hdr->fw_pid), BROKER_WAIT_MAX_S);
	return ETIMEDOUT;
}

/* The answer and its two descriptors (slot, segment).  0 or an errno. */
static int broker_answer(const struct hd_context *ctx, int fd,
			 struct snic_iso_ctx *m, int fds[2])
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;

	fds[0] = fds[1] = -1;
	n = broker_wait(ctx, fd);
	if (n != 0)
		return (int)n;
	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
		memcpy(fds, CMSG_DATA(c), 2 * sizeof(int));
	if (n != (ssize_t)sizeof(*m) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return EPROTO;
	if (m->op == SNIC_ISO_CTX_REFUSED)
		return m->status ? (int)m->status : EPROTO;
	if (m->op != SNIC_ISO_CTX_GRANT || fds[0] < 0 || fds[1] < 0)
		return EPROTO;
	return 0;
}

/* [from, to) of our BAR mapping: no longer the file's, nothing at all. */
static void unmap_file(uint8_t *from, uint8_t *to)
{
	if (to > from)
		mmap(from, (size_t)(to - from), PROT_NONE, MAP_PRIVATE |
		     MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

/* The slot over our BAR view's slot `slot`. */
static int map_slot(struct hd_context *ctx, int fd, uint32_t slot)
{
	uint8_t *at;

	if (slot >= SNIC_MAX_CTX || !hd_fd_sealed(fd, SNIC_CTX_SLOT_SIZE))
		return EPROTO;
	at = ctx->bar + SNIC_BAR_CTX_OFF + (size_t)slot * SNIC_CTX_SLOT_SIZE;
	if (mmap(at, SNIC_CTX_SLOT_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		return errno;
	/* a forked child gets none of the context (as with the kernel's
	 * uverbs mappings) */
	madvise(at, SNIC_CTX_SLOT_SIZE, MADV_DONTFORK);
	ctx->slot = (struct snic_ctx_slot *)(void *)at;
	ctx->slot_idx = slot;
	/* of the BAR file we keep the header only: the NIC's doorbell
	 * page (the firmware looks at our own page and mailbox), other
	 * slots, statistics and device memory are not ours (the addresses
	 * stay reserved for ctx_unmap's one munmap) */
	unmap_file(ctx->bar + SNIC_BAR_DB_OFF, at);
	unmap_file(at + SNIC_CTX_SLOT_SIZE, ctx->bar + SNIC_BAR_SIZE);
	return 0;
}

int hd_broker_open(struct hd_context *ctx, const char *name)
{
	struct snic_iso_ctx m;
	int fd = broker_connect(name), fds[2], err;

	if (fd < 0)
		return -fd;
	err = broker_answer(ctx, fd, &m, fds);
	if (!err)
		err = map_slot(ctx, fds[0], m.slot);
	if (fds[0] >= 0)
		close(fds[0]);  /* mapped, or not wanted */
	if (!err) {
		ctx->hm = hd_hostmem_segment(fds[1], m.seg_pa, m.seg_len, &err);
		fds[1] = -1;    /* hd_hostmem_segment keeps or closes it */
	}
	if (fds[1] >= 0)
		close(fds[1]);
	if (err == ENOSPC)
		fprintf(stderr, "snic: %s: this process already holds %u "
			"contexts, or its user %u of all the server's NICs or "
			"half of its segments (on NICs shared with other "
			"users), its share of the NIC's %u (the broker's "
			"limits)\n", name, SNIC_BROKER_CTX_PER_PID,
			SNIC_BROKER_CTX_PER_UID, SNIC_MAX_CTX);
	if (err) {
		hd_dbg("%s: broker: %s\n", name, strerror(err));
		close(fd);
		return err == ENOENT ? EPROTO : err;
	}
	ctx->broker_fd = fd;
	hd_dbg("%s: context slot %u from the broker, segment pa %#llx+%llu "
	       "MiB\n", name, m.slot, (unsigned long long)m.seg_pa,
	       (unsigned long long)(m.seg_len >> 20));
	return 0;
}

/* One answer to DM_MAP number `seq` and the descriptors that came with
 * it (*nfd of them, also with a bad answer: the caller closes them).  An
 * answer to an earlier question we gave up on (a timeout) comes first:
 * its descriptors are closed and it is passed over, so it is never taken
 * for this one's.  0 or an errno. */
static int dm_answer(const struct hd_context *ctx, uint32_t seq,
		     struct snic_iso_ctx *m, int *fds, int *nfd)
{
	enum { MAXP = SNIC_DM_SIZE / SNIC_PAGE_SIZE };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(MAXP * sizeof(int))];
	} u;

	for (;;) {
		struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = u.buf,
				      .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *c;
		int err = broker_wait(ctx, ctx->broker_fd);
		ssize_t n;

		*nfd = 0;
		if (err)
			return err;
		do
			n = recvmsg(ctx->broker_fd, &msg,
				    MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return errno;
		c = CMSG_FIRSTHDR(&msg);
		if (c && c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_RIGHTS) {
			*nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (*nfd > MAXP)
				*nfd = MAXP;
			memcpy(fds, CMSG_DATA(c), (size_t)*nfd * sizeof(int));
		}
		if (n != (ssize_t)sizeof(*m))
			return EPROTO;
		if (m->rsvd == seq)
			return 0;
		hd_dbg("DM: a late answer (to question %u) passed over\n",
		       m->rsvd);
		for (int i = 0; i < *nfd; i++)
			close(fds[i]);
	}
}

/* The pages of a DM we hold (hostif.h SNIC_ISO_DM_MAP): each a descriptor,
 * mapped side by side at *at (*len bytes, MADV_DONTFORK).  0 or an errno
 * (EACCES: the broker says they are not ours). */
int hd_broker_dm_map(struct hd_context *ctx, uint64_t offset, uint64_t length,
		     uint8_t **at, size_t *len)
{
	enum { MAXP = SNIC_DM_SIZE / SNIC_PAGE_SIZE };
	struct snic_iso_ctx q = { .op = SNIC_ISO_DM_MAP, .seg_pa = offset,
				  .seg_len = length }, m;
	int fds[MAXP], nfd = 0, err = 0;
	uint8_t *map = MAP_FAILED;

	/* one question, one answer: threads of the context take turns */
	pthread_mutex_lock(&ctx->cmd_lock);
	q.rsvd = ++ctx->dm_seq;
	if (send(ctx->broker_fd, &q, sizeof(q), MSG_NOSIGNAL) != sizeof(q))
		err = errno;
	else
		err = dm_answer(ctx, q.rsvd, &m, fds, &nfd);
	pthread_mutex_unlock(&ctx->cmd_lock);
	/* descriptors that came, even with a bad answer: closed below */
	if (!err && m.op == SNIC_ISO_CTX_REFUSED)
		err = m.status ? (int)m.status : EPROTO;
	else if (!err && (m.op != SNIC_ISO_DM_PAGES || nfd < 1 ||
			  m.seg_len != (uint64_t)nfd * SNIC_PAGE_SIZE ||
			  m.seg_pa != offset - offset % SNIC_PAGE_SIZE))
		err = EPROTO;
	if (!err) {
		map = mmap(NULL, m.seg_len, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			err = errno;
	}
	for (int i = 0; !err && i < nfd; i++)
		if (!hd_fd_sealed(fds[i], SNIC_PAGE_SIZE))
			err = EPROTO;
		else if (mmap(map + (size_t)i * SNIC_PAGE_SIZE, SNIC_PAGE_SIZE,
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			      fds[i], 0) == MAP_FAILED)
			err = errno;
	for (int i = 0; i < nfd; i++)
		close(fds[i]);  /* mapped, or not wanted */
	if (err) {
		if (map != MAP_FAILED)
			munmap(map, m.seg_len);
		hd_dbg("DM at 0x%llx: broker: %s\n",
		       (unsigned long long)offset, strerror(err));
		return err;
	}
	madvise(map, m.seg_len, MADV_DONTFORK);
	*at = map + offset % SNIC_PAGE_SIZE;
	*len = m.seg_len;
	return 0;
}
