/* SPDX-License-Identifier: MIT */
/*
 * snic-qemu-shim.so: preloaded into QEMU by the host agent (LD_PRELOAD),
 * it runs before QEMU's main and
 *  - makes QEMU non-dumpable: no other process of the user may open its
 *    descriptors through /proc/<qemu>/fd/N (the agent's memfds among
 *    them: every context's slot and segment) nor read its memory through
 *    /proc/<qemu>/mem;
 *  - forks: QEMU runs on in the child, whose address space is a new one.
 *    From its exec to our prctl QEMU was dumpable, and a /proc/<pid>/mem
 *    opened then keeps reaching that address space (the kernel checks
 *    only at open); the parent, whose that is, maps nothing of ours and
 *    only waits for the child (its exit status is the parent's, signals
 *    to the parent are passed on; the child dies with the parent);
 *  - only then asks the agent for its memfds: on the socket named by
 *    SNIC_QEMU_FD_SOCK (inherited, so it may have been copied out of QEMU
 *    while QEMU was dumpable: nothing is queued on it) it sends one end
 *    of a socket pair made here, where nobody can reach; the agent
 *    checks the asker is QEMU's child (its kernel-given pid) and sends
 *    the memfds on that pair (SCM_RIGHTS, with the descriptor number
 *    each must have: the ones QEMU's -object ...,mem-path=/proc/self/fd/N
 *    name); we take them only from the agent's pid
 *    (SNIC_QEMU_AGENT_PID; SCM_CREDENTIALS: the request's end, in
 *    flight on the inherited socket, may have been peeked).
 * Inherited instead, the memfds would be in QEMU from its exec on, while
 * it is still dumpable and their mode lets QEMU (so anybody of the user)
 * open them.  Any failure ends QEMU (status 2) with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHIM_MAX_FDS 253        /* SCM_MAX_FD */

static void fail(const char *what)
{
	fprintf(stderr, "snic-qemu-shim: %s: %s\n", what, strerror(errno));
	_exit(2);
}

/* Each got[i] onto number want[i]: those were the agent's, closed by our
 * exec, so the kernel may have given their numbers to what we received;
 * everything received moves above them first. */
static void place(int *got, const int *want, size_t k)
{
	int hi = 0;

	for (size_t i = 0; i < k; i++)
		if (want[i] >= hi)
			hi = want[i] + 1;
	for (size_t i = 0; i < k; i++) {
		int nf = fcntl(got[i], F_DUPFD_CLOEXEC, hi);

		if (nf < 0)
			fail("F_DUPFD");
		close(got[i]);
		got[i] = nf;
	}
	for (size_t i = 0; i < k; i++) {
		if (dup3(got[i], want[i], O_CLOEXEC) < 0)
			fail("dup3");
		close(got[i]);
	}
}

static volatile pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* The parent waits for QEMU (the child) and ends as it ended; the child
 * returns, to run QEMU in an address space nobody opened. */
static void stand_in(int sock)
{
	struct sigaction sa = { .sa_handler = pass_on };
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT,
				    SIGUSR1, SIGUSR2 };
	pid_t parent = getpid(), p;
	int st;

	/* blocked across fork, so that none is lost before the handlers */
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	p = fork();
	if (p < 0)
		fail("fork");
	if (p == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(2);
		return;
	}
	child = p;
	close(sock);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			fail("waitpid");
	if (WIFEXITED(st))
		_exit(WEXITSTATUS(st));
	signal(WTERMSIG(st), SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	raise(WTERMSIG(st));
	_exit(128 + WTERMSIG(st));
}

/* One end of a fresh socket pair to the agent on sock (it may have been
 * copied out of QEMU before our prctl; the pair was not): the other end,
 * on which only the agent's message is taken. */
static int ask_agent(int sock)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char one = 1;
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	int np[2], on = 1;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, np) != 0 ||
	    setsockopt(np[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0)
		fail("socketpair");
	memset(&u, 0, sizeof(u));
	u.h.cmsg_level = SOL_SOCKET;
	u.h.cmsg_type = SCM_RIGHTS;
	u.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&u.h), &np[1], sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != 1)
		fail("asking the agent");
	close(np[1]);
	close(sock);
	return np[0];
}

__attribute__((constructor)) static void snic_qemu_shim(void)
{
	int want[SHIM_MAX_FDS], got[SHIM_MAX_FDS];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(SHIM_MAX_FDS * sizeof(int)) +
			 CMSG_SPACE(sizeof(struct ucred))];
	} u;
	struct iovec iov = { .iov_base = want, .iov_len = sizeof(want) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	const char *s = getenv("SNIC_QEMU_FD_SOCK");
	const char *a = getenv("SNIC_QEMU_AGENT_PID");
	struct cmsghdr *c, *fdc = NULL;
	struct ucred cr = { .pid = 0 };
	ssize_t n;
	size_t k;
	int sock;

	if (prctl(PR_SET_DUMPABLE, 0) != 0)
		fail("PR_SET_DUMPABLE");
	if (!s)
		return;
	sock = atoi(s);
	stand_in(sock);
	sock = ask_agent(sock);
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	for (c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_type == SCM_RIGHTS)
			fdc = c;
		if (c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(cr)))
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
	}
	c = fdc;
	if (n <= 0 || n % (ssize_t)sizeof(int) || !c ||
	    (msg.msg_flags & MSG_CTRUNC))
		fail("the agent's memfds");
	if (!a || cr.pid != (pid_t)atoi(a)) {
		errno = EPERM;
		fail("memfds not from the agent");
	}
	k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	if (k != (size_t)n / sizeof(int)) {
		errno = EPROTO;
		fail("the agent's memfds");
	}
	memcpy(got, CMSG_DATA(c), k * sizeof(int));
	place(got, want, k);
	close(sock);
	unsetenv("SNIC_QEMU_FD_SOCK");
	unsetenv("SNIC_QEMU_AGENT_PID");
	unsetenv("LD_PRELOAD");
}
