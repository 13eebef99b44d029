/* SPDX-License-Identifier: MIT */
/*
 * Races a QEMU NIC's start-up as another process of the same user would
 * (run it without capabilities: setpriv --bounding-set=-all ...): looks
 * for snic-qemu-agent processes whose command line holds MATCH (the test's
 * run directory, so that other NICs on the machine are left alone) and,
 * as fast as it can, tries to open what they hold: each descriptor of
 * /proc/<agent>/fd that is one of its memfds (/memfd:snic-*), and
 * /proc/<agent>/mem.  Until the file STOP exists or SECONDS pass; then
 * one line:
 *   racer: A agents seen, S scans, O opened, D denied
 * (O: memfds or memory opened: the agent's memory reached by a process
 * that was never given it; the test wants 0 with A >= 1 and D >= 1).
 *
 *   memfd_racer SECONDS STOP MATCH
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long scans, opened, denied;
static unsigned seen[4194304 / 32 + 1];  /* pids counted as agents (bits) */
static unsigned long agents;

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

static int is_agent(const char *pid, const char *match)
{
	char buf[4096];
	ssize_t n = read_proc(pid, "comm", buf, sizeof(buf));

	if (n < 0 || strncmp(buf, "snic-qemu-agent", 15))
		return 0;
	n = read_proc(pid, "cmdline", buf, sizeof(buf));
	if (n < 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	return strstr(buf, match) != NULL;
}

static void try_open(const char *path, const char *what)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		opened++;
		printf("racer: opened %s (%s)\n", path, what);
		close(fd);
	} else {
		denied++;
	}
}

static void attack(const char *pid)
{
	char path[300], link[256];
	struct dirent *e;
	DIR *d;
	long p = atol(pid);

	if (p > 0 && p < 4194304 && !(seen[p / 32] >> (p % 32) & 1u)) {
		seen[p / 32] |= 1u << (p % 32);
		agents++;
	}
	snprintf(path, sizeof(path), "/proc/%s/mem", pid);
	try_open(path, "its memory");
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
			try_open(path, link);
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

		while (d && (e = readdir(d)) != NULL)
			if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
			    is_agent(e->d_name, argv[3]))
				attack(e->d_name);
		if (d)
			closedir(d);
		scans++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (access(argv[2], F_OK) == 0 || t.tv_sec - t0.tv_sec >= atol(argv[1]))
			break;
	}
	printf("racer: %lu agents seen, %lu scans, %lu opened, %lu denied\n",
	       agents, scans, opened, denied);
	return 0;
}
