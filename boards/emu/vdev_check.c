/* SPDX-License-Identifier: MIT */
/*
 * Checks on DPDK device arguments before EAL sees them, for failures DPDK
 * reports poorly or not at all:
 *  - a memif socket in a directory that does not exist (DPDK's message
 *    names neither the directory nor the cure);
 *  - a stale memif server socket file left by a killed process: the new
 *    server's bind() would fail with EADDRINUSE.  A socket file nobody
 *    listens on is removed; one a live server listens on is refused with
 *    a clear message.
 * Abstract sockets (memif's default) need neither: the kernel owns them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"

struct memif_args {
	char name[64];
	char socket[108];       /* sun_path size */
	int server;
	int abstract;
};

/* "net_memif0,role=server,socket=/x" -> fields; 0 if not a memif vdev. */
static int memif_parse(const char *dev, struct memif_args *m)
{
	char buf[512], *save = NULL, *tok;

	if (strncmp(dev, "net_memif", 9) != 0 || strlen(dev) >= sizeof(buf))
		return 0;
	memset(m, 0, sizeof(*m));
	m->abstract = 1;        /* DPDK 22.11's defaults: abstract, server */
	m->server = 1;
	snprintf(m->socket, sizeof(m->socket), "/run/memif.sock");
	strcpy(buf, dev);
	tok = strtok_r(buf, ",", &save);
	snprintf(m->name, sizeof(m->name), "%s", tok);
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		if (strncmp(tok, "role=", 5) == 0)
			m->server = strcmp(tok + 5, "server") == 0;
		else if (strncmp(tok, "socket=", 7) == 0)
			snprintf(m->socket, sizeof(m->socket), "%s", tok + 7);
		else if (strncmp(tok, "socket-abstract=", 16) == 0)
			m->abstract = strcmp(tok + 16, "no") != 0;
	}
	return 1;
}

static int socket_dir_exists(const struct memif_args *m)
{
	char dir[sizeof(m->socket)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", m->socket);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return 1;               /* relative to the working directory */
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	fprintf(stderr, "snic-emu: %s: the directory of memif socket %s does "
		"not exist (create it, e.g. mkdir -p %s)\n", m->name, m->socket,
		dir);
	return 0;
}

/* /proc/net/unix in as few reads as possible (NULL on failure): it is
 * generated as it is read, and sockets other processes open or close
 * between two reads can shift an entry out of view. */
static char *read_proc_unix(void)
{
	size_t cap = 1u << 20, len = 0;
	char *buf = malloc(cap + 1);
	int fd = open("/proc/net/unix", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (buf == NULL || fd < 0)
		goto fail;
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			char *b = realloc(buf, 2 * cap + 1);

			if (b == NULL)
				goto fail;
			buf = b;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int listed_listening(const char *path)
{
	char *buf = read_proc_unix(), *save = NULL, *line;
	char sock_path[256];
	unsigned flags;
	int found = 0;

	if (buf == NULL)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %x %*s %*s %*s %255s", &flags,
			   sock_path) == 2)
			found = (flags & 0x10000u) != 0 && /* __SO_ACCEPTCON */
				strcmp(sock_path, path) == 0;
	}
	free(buf);
	return found;
}

/* 1: a socket listens on path; 0: nobody does.  Read from /proc/net/unix
 * rather than by connecting: a memif server that sees a connection close
 * mid-handshake can abort (DPDK 22.11).  Looked up twice before a file is
 * called stale.  /proc/net/unix lists the sockets of our network namespace
 * only; a server in another namespace is not seen. */
static int socket_listening(const char *path)
{
	return listed_listening(path) || listed_listening(path);
}

static int server_socket_clean(const struct memif_args *m)
{
	struct stat st;

	if (lstat(m->socket, &st) != 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "snic-emu: %s: %s exists and is not a socket\n",
			m->name, m->socket);
		return -1;
	}
	if (socket_listening(m->socket)) {
		fprintf(stderr, "snic-emu: %s: memif socket %s is in use by "
			"another running server\n", m->name, m->socket);
		return -1;
	}
	if (unlink(m->socket) != 0) {
		fprintf(stderr, "snic-emu: %s: cannot remove stale memif socket "
			"%s: %s\n", m->name, m->socket, strerror(errno));
		return -1;
	}
	printf("snic-emu: %s: removed stale memif socket %s (its server is "
	       "gone)\n", m->name, m->socket);
	return 0;
}

/* The value of --vdev at argv[i] ("--vdev=X" or "--vdev X"), or NULL. */
static const char *vdev_arg(int argc, char **argv, int i)
{
	if (strncmp(argv[i], "--vdev=", 7) == 0)
		return argv[i] + 7;
	if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
		return argv[i + 1];
	return NULL;
}

int emu_check_vdevs(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *dev = vdev_arg(argc, argv, i);
		struct memif_args m;

		if (dev == NULL || !memif_parse(dev, &m) || m.abstract)
			continue;
		if (!socket_dir_exists(&m))
			return -1;
		if (m.server && server_socket_clean(&m) != 0)
			return -1;
	}
	return 0;
}

int emu_vdev_restartable(int argc, char **argv, const char *port)
{
	for (int i = 0; i < argc; i++) {
		const char *dev = vdev_arg(argc, argv, i);
		struct memif_args m;

		if (dev != NULL && memif_parse(dev, &m) &&
		    strcmp(m.name, port) == 0)
			return !m.server;
	}
	return 0;
}
