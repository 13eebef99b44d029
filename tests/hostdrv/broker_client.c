/* SPDX-License-Identifier: MIT */
/*
 * The host driver's broker client (host-driver/core/broker.c) against a
 * fake broker: the other end of a socketpair, whose answers to
 * SNIC_ISO_DM_MAP are queued before the question is asked.  Linked with
 * the host driver's objects, so it calls hd_broker_dm_map itself.
 *  - an answer to an earlier question (a late one, after a timeout) is
 *    passed over and its descriptors closed; the answer to this question,
 *    behind it, is the one mapped;
 *  - descriptors that come with a malformed answer (wrong size for its
 *    descriptors, a short message, a refusal) are closed (commit 76b432a);
 *  - every answer's question number is the question's.
 * Each case counts the process's open descriptors before and after.
 *
 *   hd-broker-client        (exit 0: all passed)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"
#include "live_lock.h"
#include "../check.h"

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1;   /* opendir's own */
}

/* A sealed one-page memfd whose first byte is `mark`. */
static int page_fd(uint8_t mark)
{
	int fd = memfd_create("fake-dm", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, SNIC_PAGE_SIZE) != 0 ||
	    pwrite(fd, &mark, 1, 0) != 1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
		perror("fake broker: memfd");
		exit(2);
	}
	return fd;
}

/* The fake broker's answer: msg (len bytes) and nfd fresh pages marked
 * mark..mark+nfd-1, which it closes on its side once sent. */
static void answer(int sock, const void *msg, size_t len, int nfd, uint8_t mark)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(16 * sizeof(int))];
	} u;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[16];

	for (int i = 0; i < nfd; i++)
		fds[i] = page_fd((uint8_t)(mark + i));
	if (nfd) {
		struct cmsghdr *c;

		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfd * sizeof(int));
	}
	if (sendmsg(sock, &m, 0) != (ssize_t)len) {
		perror("fake broker: sendmsg");
		exit(2);
	}
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
}

static struct snic_iso_ctx pages(uint32_t seq, uint64_t pa, uint64_t npages)
{
	return (struct snic_iso_ctx){ .op = SNIC_ISO_DM_PAGES, .rsvd = seq,
				      .seg_pa = pa,
				      .seg_len = npages * SNIC_PAGE_SIZE };
}

/* A live NIC's BAR file for the client's liveness check
 * (host-driver/core/liveness.c): a file its "server" (we) holds locked,
 * open again as the client's own descriptor. */
static int live_bar_fd(void)
{
	char path[64];
	int srv = memfd_create("fake-bar", MFD_CLOEXEC), fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", srv);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (srv < 0 || snic_live_lock(srv) != 0 || fd < 0) {
		perror("fake NIC: BAR lock");
		exit(2);
	}
	return fd;      /* srv stays open, and locked, until we exit */
}

/* The question the client sent: its number (0 when none was there). */
static uint32_t question(int sock)
{
	struct snic_iso_ctx q;

	if (recv(sock, &q, sizeof(q), MSG_DONTWAIT) != (ssize_t)sizeof(q) ||
	    q.op != SNIC_ISO_DM_MAP)
		return 0;
	return q.rsvd;
}

int main(void)
{
	static struct snic_bar_hdr hdr;
	struct hd_context *ctx = calloc(1, sizeof(*ctx));
	struct snic_iso_ctx m;
	int sv[2], fds0, err;
	uint8_t *at;
	size_t len;
	uint32_t q1, q;

	if (!ctx || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("set-up");
		return 2;
	}
	/* a live NIC for broker_wait: UP, its BAR file locked */
	hdr.fw_state = SNIC_FW_UP;
	hdr.fw_pid = (uint32_t)getpid();
	ctx->hdr = &hdr;
	ctx->bar_fd = live_bar_fd();
	ctx->broker_fd = sv[0];
	pthread_mutex_init(&ctx->cmd_lock, NULL);
	fds0 = open_fds();

	/* 1. a late answer (to a question before this one) queued first,
	 * with two pages marked 0x70.., then this question's: one page 0x41 */
	q1 = ctx->dm_seq + 1;
	m = pages(q1 - 1 + 100, 0, 2);
	answer(sv[1], &m, sizeof(m), 2, 0x70);
	m = pages(q1, 0, 1);
	answer(sv[1], &m, sizeof(m), 1, 0x41);
	err = hd_broker_dm_map(ctx, 64, 100, &at, &len);
	q = question(sv[1]);
	check(q == q1, "the question carries its number");
	check(err == 0 && len == SNIC_PAGE_SIZE && at[-64] == 0x41,
	      "a late answer is passed over: this question's page is mapped");
	if (err == 0)
		munmap(at - 64, len);
	check(open_fds() == fds0, "the late answer's two descriptors are closed");

	/* 2. a malformed answer: three pages announced, two descriptors */
	m = pages(q + 1, 0, 3);
	answer(sv[1], &m, sizeof(m), 2, 0x50);
	err = hd_broker_dm_map(ctx, 0, 3 * SNIC_PAGE_SIZE, &at, &len);
	q = question(sv[1]);
	check(err == EPROTO, "a size that does not match its descriptors: EPROTO");
	check(open_fds() == fds0, "...and its descriptors are closed");

	/* 3. a short message with a descriptor */
	m = pages(q + 1, 0, 1);
	answer(sv[1], &m, sizeof(m) - 8, 1, 0x51);
	err = hd_broker_dm_map(ctx, 0, 1, &at, &len);
	q = question(sv[1]);
	check(err == EPROTO, "a short answer: EPROTO");
	check(open_fds() == fds0, "...and its descriptor is closed");

	/* 4. a refusal that brings a descriptor anyway */
	m = (struct snic_iso_ctx){ .op = SNIC_ISO_CTX_REFUSED, .status = EACCES,
				   .rsvd = q + 1 };
	answer(sv[1], &m, sizeof(m), 1, 0x52);
	err = hd_broker_dm_map(ctx, 0, 1, &at, &len);
	q = question(sv[1]);
	check(err == EACCES, "a refusal: its status (EACCES)");
	check(open_fds() == fds0, "...and the descriptor with it is closed");

	/* 5. the answer for this question, at another offset than asked */
	m = pages(q + 1, SNIC_PAGE_SIZE, 1);
	answer(sv[1], &m, sizeof(m), 1, 0x53);
	err = hd_broker_dm_map(ctx, 0, 1, &at, &len);
	check(err == EPROTO && open_fds() == fds0,
	      "pages of another offset: EPROTO, descriptor closed");

	printf("%u passed, %u failed\n", passed, failed);
	close(sv[0]);
	close(sv[1]);
	pthread_mutex_destroy(&ctx->cmd_lock);
	free(ctx);
	return failed ? 1 : 0;
}
