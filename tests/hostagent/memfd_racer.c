/* SPDX-License-Identifier: MIT */
/*
 * Races a QEMU NIC's start-up as another process of the same user would
 * (run it without capabilities: setpriv --bounding-set=-all ...): looks
 * for snic-qemu-agent and QEMU processes whose command line holds MATCH
 * (the test's run directory, so that other NICs on the machine are left
 * alone) and, as fast as it can, tries to open what they hold: each
 * descriptor of /proc/<pid>/fd that is one of the agent's memfds
 * (/memfd:snic-*), and /proc/<pid>/mem; and each socket it holds is
 * copied out (pidfd_getfd, which the kernel allows while the process is
 * dumpable) and kept, and every scan peeks (MSG_PEEK) what is queued on
 * the copies: memfds of ours among the descriptors in flight count as
 * opened, sockets among them are kept and peeked in turn.  Until the
 * file STOP exists or SECONDS pass; then one line:
 *   racer: A agents seen, Q QEMUs seen, S scans, O opened, D denied, I idle,
 *   T sockets taken
 * O: memfds, or memory of a process that holds them, opened: reached by
 * a process that was never given them (the test wants 0, with A, Q and
 * D >= 1).  I: memory opened of the process the launcher started, in
 * the instants after its exec before it made itself non-dumpable, which
 * holds nothing of ours and never will (the agent and QEMU run in its
 * children, in address spaces of their own): counted apart.
 *
 *   memfd_racer SECONDS STOP MATCH
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned long scans, opened, denied, idle;
static long mem_pid[4096];              /* pids whose memory we opened   */
static unsigned n_mem;
static unsigned seen[4194304 / 32 + 1];  /* pids counted (bits)      */
static unsigned long agents, qemus;
static int taken[256];                   /* sockets copied out or peeked */
static unsigned n_taken;

/* /proc/<pid>/<what> into buf (NUL-terminated): its length, or -1. */
static ssize_t read_proc(const char *pid, const char *what, char *buf,
			 size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* 1: an agent, 2: a QEMU, of our NIC; 0: neither. */
static int kind_of(const char *pid, const char *match)
{
	char buf[4096];
	ssize_t n = read_proc(pid, "comm", buf, sizeof(buf));
	int kind;

	if (n < 0)
		return 0;
	kind = !strncmp(buf, "snic-qemu-agent", 15) ? 1 :
	       !strncmp(buf, "qemu-system-", 12) ? 2 : 0;
	if (!kind || (n = read_proc(pid, "cmdline", buf, sizeof(buf))) < 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	return strstr(buf, match) ? kind : 0;
}

/* 1 when we could open path (said on stdout). */
static int try_open(const char *path, const char *what)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		denied++;
		return 0;
	}
	printf("racer: opened %s (%s)\n", path, what);
	close(fd);
	return 1;
}

static void keep_socket(int fd)
{
	if (n_taken < sizeof(taken) / sizeof(taken[0]))
		taken[n_taken++] = fd;
	else
		close(fd);
}

/* Socket fdnum of pid copied out (pidfd_getfd) and kept. */
static void take_socket(long pid, long fdnum)
{
	int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0), fd;

	if (pfd < 0)
		return;
	fd = (int)syscall(SYS_pidfd_getfd, pfd, (int)fdnum, 0);
	close(pfd);
	if (fd < 0) {
		denied++;
		return;
	}
	keep_socket(fd);
}

/* What is queued on the sockets we hold, without taking it: memfds of
 * ours count as opened; sockets are kept (and peeked next time). */
static void peek_taken(void)
{
	for (unsigned i = 0; i < n_taken; i++) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(253 * sizeof(int))];
		} u;
		char data[4096], path[64], link[256];
		struct iovec iov = { data, sizeof(data) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *c;

		if (recvmsg(taken[i], &m, MSG_PEEK | MSG_DONTWAIT |
			    MSG_CMSG_CLOEXEC) < 0)
			continue;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t j = 0; j < k; j++) {
				int fd;
				ssize_t n;

				memcpy(&fd, CMSG_DATA(c) + j * sizeof(int), sizeof(fd));
				snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
				n = readlink(path, link, sizeof(link) - 1);
				link[n > 0 ? n : 0] = '\0';
				if (!strncmp(link, "/memfd:snic-", 12)) {
					printf("racer: peeked %s on a socket taken "
					       "from a process of ours\n", link);
					opened++;
					close(fd);
				} else if (!strncmp(link, "socket:", 7)) {
					keep_socket(fd);
				} else {
					close(fd);
				}
			}
		}
	}
}

/* The parent's pid of pid (/proc/<pid>/stat field 4), or -1. */
static long parent_of(long pid)
{
	char p[32], buf[1024], *q;

	snprintf(p, sizeof(p), "%ld", pid);
	if (read_proc(p, "stat", buf, sizeof(buf)) < 0 ||
	    !(q = strrchr(buf, ')')))
		return -1;
	return strtol(q + 3, NULL, 10);  /* ") S ppid" */
}

/* Memory opened: of the launcher's own child (the one that execs the
 * agent, then QEMU's stand-in: its parent is none of ours), or of one
 * that holds our memory (its parent is one of ours: the agent and QEMU
 * proper are the stand-in's children). */
static void classify_mem(const char *match)
{
	for (unsigned i = 0; i < n_mem; i++) {
		char p[32];
		long pp = parent_of(mem_pid[i]);

		snprintf(p, sizeof(p), "%ld", pp);
		if (pp > 0 && !kind_of(p, match))
			idle++;
		else
			opened++;
	}
}

static void attack(const char *pid, int kind)
{
	char path[300], link[256];
	struct dirent *e;
	DIR *d;
	long p = atol(pid);

	if (p > 0 && p < 4194304 && !(seen[p / 32] >> (p % 32) & 1u)) {
		seen[p / 32] |= 1u << (p % 32);
		if (kind == 1)
			agents++;
		else
			qemus++;
	}
	snprintf(path, sizeof(path), "/proc/%s/mem", pid);
	if (try_open(path, "its memory") && n_mem < 4096)
		mem_pid[n_mem++] = p;
	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d) {
		denied++;
		return;
	}
	while ((e = readdir(d)) != NULL) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strncmp(link, "/memfd:snic-", 12))
			opened += (unsigned long)try_open(path, link);
		else if (!strncmp(link, "socket:", 7))
			take_socket(p, atol(e->d_name));
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	struct timespec t0, t;

	if (argc != 4) {
		fprintf(stderr, "usage: memfd_racer SECONDS STOP MATCH\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && (e = readdir(d)) != NULL) {
			int kind;

			if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
			    (kind = kind_of(e->d_name, argv[3])) != 0)
				attack(e->d_name, kind);
		}
		if (d)
			closedir(d);
		peek_taken();
		scans++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (access(argv[2], F_OK) == 0 || t.tv_sec - t0.tv_sec >= atol(argv[1]))
			break;
	}
	classify_mem(argv[3]);
	peek_taken();
	printf("racer: %lu agents seen, %lu QEMUs seen, %lu scans, %lu opened, "
	       "%lu denied, %lu idle, %u sockets taken\n", agents, qemus, scans,
	       opened, denied, idle, n_taken);
	return 0;
}
