/* SPDX-License-Identifier: MIT */
/*
 * snic-emu: the sysfs-shaped view and /dev/infiniband nodes of its NICs
 * (see devview.h for what and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include "devview.h"

#define DEV_DIR   "/dev/infiniband"
#define MAX_NODES 8

static struct {
	char sys_root[PATH_MAX];        /* <run dir>/sys, "" = none made    */
	char nodes[MAX_NODES][PATH_MAX];
	unsigned nnodes;
	int made_dev_dir;
	char owner[PATH_MAX];           /* our DEV_DIR/.snic-<hash>, or ""   */
} view;

/* FNV-1a: a short, stable name part per run dir. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* snprintf for paths: -1 when it would not fit. */
static int pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* One directory of the view: made 0755 (whatever the umask), or one we
 * made before (a real directory of ours, not a symlink; its mode put
 * back: an emulator run with umask 000 left it writable by all).  Above
 * the view's root (the run dir and its parents) only made if missing. */
static int mkdir_one(const char *path, size_t path_len)
{
	size_t root_len = strlen(view.sys_root);
	struct stat st;

	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -1;
	if (!root_len || path_len < root_len ||
	    strncmp(path, view.sys_root, root_len) != 0)
		return 0;
	if (lstat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		errno = ENOTDIR;
		return -1;
	}
	return chmod(path, 0755);
}

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir_one(buf, (size_t)(p - buf)) != 0)
			return -1;
		*p = '/';
	}
	return mkdir_one(buf, len);
}

/* Write one file of the view: dir/name holding the formatted line, 0644
 * whatever the umask.  Written to a new file (O_EXCL, not following a
 * symlink) renamed over the old: whatever was there before (a file
 * others could write, a symlink) is replaced, never written through. */
static int put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	va_list ap;
	FILE *f;
	int fd, rc;

	if (pathf(path, sizeof(path), "%s/%s", dir, name))
		return -1;
	if (strchr(name, '/') != NULL) {
		char *slash;

		slash = strrchr(path, '/');
		*slash = '\0';
		if (mkdirs(path) != 0)
			return -1;
		*slash = '/';
	}
	if (pathf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()))
		return -1;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (f == NULL || fchmod(fd, 0644) != 0) {
		if (f)
			fclose(f);
		else
			close(fd);
		unlink(tmp);
		return -1;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	rc = fclose(f);
	if (rc == 0)
		rc = rename(tmp, path);
	if (rc != 0)
		unlink(tmp);
	return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* The view holds only files we wrote: remove it depth first. */
static void rm_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return;
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "snic-emu: could not remove %s: %s\n", path,
			strerror(errno));
}

/* A character major no driver on this machine registered, from the
 * ranges Linux reserves for local/experimental use (Documentation/
 * admin-guide/devices.txt: 60-63, 120-127).  0 when none is free. */
static unsigned free_major(void)
{
	static const unsigned cand[] = { 60, 61, 62, 63, 120, 121, 122, 123,
					 124, 125, 126, 127 };
	int used[256] = { 0 };
	char line[128];
	int in_char = 0;
	FILE *f = fopen("/proc/devices", "r");

	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			unsigned m;

			if (strncmp(line, "Character", 9) == 0)
				in_char = 1;
			else if (strncmp(line, "Block", 5) == 0)
				in_char = 0;
			else if (in_char && sscanf(line, "%u", &m) == 1 && m < 256)
				used[m] = 1;
		}
		fclose(f);
	}
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (!used[cand[i]])
			return cand[i];
	return 0;
}

/* A GID as sysfs prints it: eight 4-digit groups. */
static void gid_text(const uint8_t g[16], char *out, size_t len)
{
	size_t pos = 0;

	for (int i = 0; i < 16 && pos < len; i += 2)
		pos += (size_t)snprintf(out + pos, len - pos, "%s%02x%02x",
					i ? ":" : "", g[i], g[i + 1]);
}

static void ipv4_gid(uint32_t ip, uint8_t g[16])
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	for (int i = 0; i < 4; i++)
		g[12 + i] = (uint8_t)(ip >> (24 - 8 * i));
}

static void guid_text(uint64_t g, char *out, size_t len)
{
	snprintf(out, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
}

/* local_cpus as the kernel prints a cpumask: 32-bit hex words, commas. */
static void cpu_mask_text(char *out, size_t len)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	unsigned words, pos = 0;

	if (n < 1)
		n = 1;
	words = (unsigned)((n + 31) / 32);
	out[0] = '\0';
	for (unsigned w = words; w-- > 0 && pos + 10 < len;) {
		long lo = (long)w * 32, cnt = n - lo;
		uint32_t bits = cnt >= 32 ? 0xffffffffu :
			(uint32_t)((1ull << cnt) - 1);

		pos += (unsigned)snprintf(out + pos, len - pos, "%s%08" PRIx32,
					  w + 1 == words ? "" : ",", bits);
	}
}

static void port_state(const char *port_dir, int up)
{
	put(port_dir, "state", up ? "4: ACTIVE" : "1: DOWN");
	put(port_dir, "phys_state", up ? "5: LinkUp" : "3: Disabled");
}

static int write_ibdev(const char *root, const struct devview_nic *n)
{
	char dir[PATH_MAX], port[PATH_MAX + 16], txt[64];
	uint8_t gid[16];
	int rc = 0;

	if (pathf(dir, sizeof(dir), "%s/class/infiniband/%s", root, n->name))
		return -1;
	rm_tree(dir); /* a stale view of a killed emulator */
	if (mkdirs(dir) != 0)
		return -1;
	guid_text(n->node_guid, txt, sizeof(txt));
	rc |= put(dir, "node_type", "1: CA");
	rc |= put(dir, "node_guid", "%s", txt);
	rc |= put(dir, "sys_image_guid", "%s", txt);
	rc |= put(dir, "node_desc", "snic-emu %s", n->name);
	rc |= put(dir, "fw_ver", "0.1.0");
	rc |= put(dir, "hca_type", "snic");
	rc |= put(dir, "hw_rev", "0");
	rc |= put(dir, "board_id", "SNIC_EMU");
	/* No NUMA placement to report: -1, as the kernel says for a device
	 * without one. */
	rc |= put(dir, "device/numa_node", "-1");
	cpu_mask_text(txt, sizeof(txt));
	rc |= put(dir, "device/local_cpus", "%s", txt);
	if (pathf(port, sizeof(port), "%s/ports/1", dir) || mkdirs(port) != 0)
		return -1;
	port_state(port, 1);
	rc |= put(port, "link_layer", "Ethernet");
	rc |= put(port, "lid", "0x0");
	rc |= put(port, "sm_lid", "0x0");
	rc |= put(port, "lid_mask_count", "0");
	ipv4_gid(n->ipv4, gid);
	gid_text(gid, txt, sizeof(txt));
	rc |= put(port, "gids/0", "%s", txt);
	rc |= put(port, "gid_attrs/types/0", "RoCE v2");
	gid_text(n->ipv6, txt, sizeof(txt));
	rc |= put(port, "gids/1", "%s", txt);
	rc |= put(port, "gid_attrs/types/1", "RoCE v2");
	rc |= put(port, "pkeys/0", "0xffff");
	/* gid_attrs/ndevs/0 names the kernel interface carrying the GID's
	 * address; a NIC without one (no TAP interface) has none to name. */
	if (n->netdev != NULL)
		rc |= put(port, "gid_attrs/ndevs/0", "%s", n->netdev);
	if (n->netdev != NULL)
		rc |= put(port, "gid_attrs/ndevs/1", "%s", n->netdev);
	return rc ? -1 : 0;
}

static void make_node(const char *verbs_dir, const char *dev,
		      unsigned major, unsigned minor)
{
	static int told;
	char path[PATH_MAX];

	if (pathf(path, sizeof(path), DEV_DIR "/%s", dev))
		return;
	put(verbs_dir, "dev", "%u:%u", major, minor);
	if (major == 0) {
		if (!told++)
			fprintf(stderr, "snic-emu: no free character major for "
				"%s; UCX will not list snic devices\n", path);
		return;
	}
	unlink(path); /* a stale node of a killed emulator */
	/* 0666: the node grants nothing (no driver answers it); it is what
	 * UCX checks before it uses an RDMA device. */
	if (mknod(path, S_IFCHR | 0666, makedev(major, minor)) != 0 ||
	    chmod(path, 0666) != 0) {
		if (!told++)
			fprintf(stderr, "snic-emu: cannot create %s (%s); UCX "
				"lists only devices with a node there. As root:"
				" mkdir -p " DEV_DIR " && mknod -m 666 %s c %u "
				"%u\n", path, strerror(errno), path, major,
				minor);
		return;
	}
	if (view.nnodes < MAX_NODES)
		snprintf(view.nodes[view.nnodes++], PATH_MAX, "%s", path);
}

/* Is pid a live process?  A zombie (killed, not yet reaped) is not. */
static int pid_alive(unsigned long pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	if (pid <= 1 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
		return 0;
	snprintf(path, sizeof(path), "/proc/%lu/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1; /* no /proc: trust kill() */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* "pid (comm) S ..." */
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* The pid an owner file holds: 0 when it holds none (empty or garbled). */
static unsigned long owner_pid(const char *path)
{
	unsigned long pid = 0;
	char tail;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu%c", &pid, &tail) != 2 || tail != '\n')
		pid = 0;
	fclose(f);
	return pid;
}

/* Remove DEV_DIR/uverbs-*-<hash> (suffix "-<hash>"). */
static void remove_nodes_of(DIR *d, const char *suffix)
{
	struct dirent *e;

	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		char node[PATH_MAX];

		if (strncmp(e->d_name, "uverbs-", 7) == 0 && l > 9 &&
		    strcmp(e->d_name + l - 9, suffix) == 0 &&
		    !pathf(node, sizeof(node), DEV_DIR "/%s", e->d_name))
			unlink(node);
	}
}

/* Nodes outlive an emulator that was killed (SIGKILL), and every run dir
 * names its own.  Each emulator that makes nodes leaves DEV_DIR/.snic-<hash>
 * holding its pid; at start, the nodes of owners that are gone are
 * removed with their owner file.  An owner file without a pid (empty or
 * garbled: an emulator built before claim_nodes renamed it into place,
 * caught between its fopen and fclose) proves nothing about its owner, so
 * its nodes stay; the next emulator of that run dir replaces both. */
static void reap_stale_nodes(void)
{
	DIR *d = opendir(DEV_DIR);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX], suffix[16];
		unsigned long pid;

		if (strncmp(e->d_name, ".snic-", 6) != 0 ||
		    strlen(e->d_name + 6) != 8 ||
		    pathf(path, sizeof(path), DEV_DIR "/%s", e->d_name))
			continue;
		pid = owner_pid(path);
		if (pid == 0 || pid_alive(pid))
			continue; /* its emulator runs, or may */
		snprintf(suffix, sizeof(suffix), "-%s", e->d_name + 6);
		remove_nodes_of(d, suffix);
		unlink(path);
		rewinddir(d);
	}
	closedir(d);
}

/* Our owner file (see reap_stale_nodes), written whole under a temporary
 * name (".snic-<hash>.<pid>", which the reaper does not read) and renamed
 * into place: rename(2) is atomic, so a reaper never sees it empty. */
static void claim_nodes(uint32_t h)
{
	char tmp[PATH_MAX];
	FILE *f;
	int bad;

	if (pathf(view.owner, sizeof(view.owner), DEV_DIR "/.snic-%08" PRIx32, h) ||
	    pathf(tmp, sizeof(tmp), "%s.%ld", view.owner, (long)getpid())) {
		view.owner[0] = '\0';
		return;
	}
	f = fopen(tmp, "w");
	if (!f) {
		view.owner[0] = '\0';
		return;
	}
	bad = fprintf(f, "%ld\n", (long)getpid()) < 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, view.owner) != 0) {
		fprintf(stderr, "snic-emu: cannot write %s (%s); a stale "
			"emulator's cleanup will not know these nodes\n",
			view.owner, strerror(errno));
		unlink(tmp);
		view.owner[0] = '\0';
	}
}

void devview_create(const char *run_dir, const struct devview_nic *nics,
		    unsigned n)
{
	char root[PATH_MAX], dir[PATH_MAX + 64], dev[64];
	uint32_t h = fnv1a(run_dir);
	unsigned major = free_major();
	struct stat st;

	if (pathf(root, sizeof(root), "%s/sys", run_dir))
		return;
	snprintf(view.sys_root, sizeof(view.sys_root), "%s", root);
	if (stat(DEV_DIR, &st) != 0 && mkdir(DEV_DIR, 0755) == 0) {
		view.made_dev_dir = 1;
		chmod(DEV_DIR, 0755); /* every user's, whatever our umask */
	}
	reap_stale_nodes();
	if (pathf(dir, sizeof(dir), "%s/class/infiniband_verbs", root) ||
	    mkdirs(dir) != 0 || put(dir, "abi_version", "6") != 0) {
		fprintf(stderr, "snic-emu: cannot write the device view in %s:"
			" %s\n", root, strerror(errno));
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		if (write_ibdev(root, &nics[i]) != 0)
			fprintf(stderr, "snic-emu: incomplete device view of "
				"%s in %s\n", nics[i].name, root);
		snprintf(dev, sizeof(dev), "uverbs-%s-%08" PRIx32,
			 nics[i].name, h);
		if (pathf(dir, sizeof(dir), "%s/class/infiniband_verbs/%s",
			  root, dev))
			continue;
		rm_tree(dir); /* a stale view of a killed emulator */
		if (mkdirs(dir) != 0 || put(dir, "ibdev", "%s",
					    nics[i].name) != 0 ||
		    put(dir, "abi_version", "1") != 0)
			continue;
		make_node(dir, dev, major, i);
	}
	if (view.nnodes)
		claim_nodes(h);
}

void devview_link(const char *run_dir, const char *nic, int up)
{
	char port[PATH_MAX];
	struct stat st;

	if (pathf(port, sizeof(port), "%s/sys/class/infiniband/%s/ports/1",
		  run_dir, nic) == 0 && stat(port, &st) == 0)
		port_state(port, up);
}

void devview_remove(void)
{
	for (unsigned i = 0; i < view.nnodes; i++)
		unlink(view.nodes[i]);
	view.nnodes = 0;
	if (view.owner[0] != '\0')
		unlink(view.owner);
	view.owner[0] = '\0';
	if (view.made_dev_dir)
		rmdir(DEV_DIR); /* fails, harmlessly, when others use it */
	view.made_dev_dir = 0;
	if (view.sys_root[0] != '\0')
		rm_tree(view.sys_root);
	view.sys_root[0] = '\0';
}
