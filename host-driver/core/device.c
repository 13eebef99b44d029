/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the run directory, device discovery and the device
 * list.  A device is a file <rundir>/<name>.bar (SNIC_BAR_SIZE bytes) whose
 * header says the firmware behind it is up.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

int hd_debug_level;

__attribute__((constructor)) static void hd_ctor(void)
{
	hd_debug_init();
}

void hd_debug_init(void)
{
	const char *s = getenv("SNIC_DEBUG");
	int v;

	if (!s || !*s || strcmp(s, "0") == 0) {
		hd_debug_level = 0;
		return;
	}
	v = atoi(s);
	hd_debug_level = v > 0 ? v : 1;
}

const char *hd_run_dir(void)
{
	const char *s = getenv("SNIC_RUN_DIR");

	return (s && *s) ? s : HD_DEFAULT_RUN_DIR;
}

int hd_pid_alive(uint32_t pid)
{
	if (pid == 0)
		return 0;
	if (kill((pid_t)pid, 0) == 0)
		return 1;
	return errno != ESRCH; /* EPERM: alive, owned by another user */
}

/* Open a runtime file (BAR or host memory) we are about to trust: a
 * regular file of the run directory's owner that nobody else may write,
 * not a symlink (group- or world-readable is fine: a NIC shared with
 * other users, snic-emu --users).  Anything else was planted there (or
 * the run directory is not private, boards/emu/README.md): refused, -1
 * with errno EACCES and the reason on stderr. */
int hd_open_runtime(const char *path, int flags)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
	struct stat st, dst;
	const char *why = NULL;

	if (fd < 0) {
		if (errno != ELOOP)
			return -1;
		why = "a symlink";
	} else if (hd_run_dir_trusted(&dst) != 0) {
		why = "its run directory is not trusted";
	} else if (fstat(fd, &st) != 0) {
		why = "cannot stat it";
	} else if (!S_ISREG(st.st_mode)) {
		why = "not a regular file";
	} else if (st.st_uid != dst.st_uid) {
		why = "not owned by the run directory's owner";
	} else if (st.st_mode & 022) {
		why = "writable by group or others";
	}
	if (!why)
		return fd;
	fprintf(stderr, "snic: refusing %s: %s\n", path, why);
	if (fd >= 0)
		close(fd);
	errno = EACCES;
	return -1;
}

/* Read and check a BAR header.  Returns 0 when the file is a usable device
 * (firmware up, its server alive: the BAR file's lock, liveness.c). */
static int read_bar_hdr(const char *path, struct snic_bar_hdr *hdr)
{
	struct stat st;
	ssize_t n;
	int fd, owner;

	fd = hd_open_runtime(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 ||
	    (uint64_t)st.st_size < SNIC_BAR_SIZE) {
		close(fd);
		return -1;
	}
	n = pread(fd, hdr, sizeof(*hdr), SNIC_BAR_HDR_OFF);
	owner = hd_owner_alive(fd);
	close(fd);
	if (n != (ssize_t)sizeof(*hdr) || owner == 0)
		return -1;
	hdr->name[sizeof(hdr->name) - 1] = '\0';
	hdr->host_mem[sizeof(hdr->host_mem) - 1] = '\0';
	if (hdr->magic != SNIC_HOSTIF_MAGIC ||
	    hdr->version != SNIC_HOSTIF_VERSION)
		return -1;
	/* fw_state DOWN counts only where the lock cannot tell: any
	 * process may write it (the firmware puts it back, guard.c) */
	if (atomic_load(&hdr->fw_state) != SNIC_FW_UP && owner != 1)
		return -1;
	if (!hdr->name[0] || !hdr->host_mem[0] || strchr(hdr->host_mem, '/'))
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Device registry: devices live for the whole process (pyverbs frees the
 * list right after opening, and ibv_device pointers must stay valid). */

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_device *dev_registry;
static int dev_next_index;

struct found {
	char name[16];
	char path[512];
	uint64_t guid;
};

static int cmp_found(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->name,
		      ((const struct found *)b)->name);
}

/* The verbs device node name of NIC `name`, as the kernel's sysfs pairs
 * them: the entry of class/infiniband_verbs whose ibdev file names it
 * (snic-emu writes that view, devview.h).  0 when found. */
static int verbs_dev_name(const char *sysfs, const char *name, char *out,
			  size_t len)
{
	char dir[PATH_MAX], buf[64];
	struct dirent *de;
	int found = -1;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs", sysfs);
	dp = opendir(dir);
	if (!dp)
		return -1;
	while (found != 0 && (de = readdir(dp)) != NULL) {
		char sub[PATH_MAX];

		if (de->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >=
			    (int)sizeof(sub))
			continue;
		if (ibv_read_sysfs_file(sub, "ibdev", buf, sizeof(buf)) > 0 &&
		    strcmp(buf, name) == 0 &&
		    (size_t)snprintf(out, len, "%s", de->d_name) < len)
			found = 0;
	}
	closedir(dp);
	return found;
}

/* dev_name, dev_path and ibdev_path: from the sysfs view when snic-emu
 * wrote one, else numbered like the kernel's nodes. */
static void dev_paths(struct hd_device *d, const char *name)
{
	const char *sysfs = ibv_get_sysfs_path();
	struct ibv_device *ib = &d->ibdev;

	if (verbs_dev_name(sysfs, name, ib->dev_name, sizeof(ib->dev_name)))
		snprintf(ib->dev_name, sizeof(ib->dev_name), "uverbs%d",
			 d->index);
	snprintf(ib->dev_path, sizeof(ib->dev_path),
		 "%s/class/infiniband_verbs/%s", sysfs, ib->dev_name);
	snprintf(ib->ibdev_path, sizeof(ib->ibdev_path),
		 "%s/class/infiniband/%s", sysfs, name);
}

static struct hd_device *dev_get(const struct found *f)
{
	struct hd_device *d;

	for (d = dev_registry; d; d = d->next)
		if (strcmp(d->ibdev.name, f->name) == 0)
			break;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return NULL;
		d->index = dev_next_index++;
		d->ibdev.node_type = IBV_NODE_CA;
		d->ibdev.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->ibdev.name, sizeof(d->ibdev.name), "%s", f->name);
		dev_paths(d, f->name);
		d->next = dev_registry;
		dev_registry = d;
	}
	snprintf(d->bar_path, sizeof(d->bar_path), "%s", f->path);
	d->node_guid = f->guid;
	return d;
}

/* The run directory is not ours to read: its NICs are their server's
 * user's, or also a group's that we are not in (snic-emu --users).  Said
 * once: no devices then. */
static void run_dir_refused(const char *dir)
{
	static _Atomic int said;
	struct stat st;

	if (atomic_exchange(&said, 1))
		return;
	if (stat(dir, &st) == 0)
		fprintf(stderr, "snic: no access to the NICs in %s (uid %u, "
			"group %u; we are uid %u): their server shares them "
			"with a group (snic-emu --users GROUP) or with nobody\n",
			dir, (unsigned)st.st_uid, (unsigned)st.st_gid,
			(unsigned)geteuid());
	else
		fprintf(stderr, "snic: no access to the NICs in %s: %s\n",
			dir, strerror(errno));
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	const char *dir = hd_run_dir();
	struct found *found = NULL;
	struct ibv_device **list;
	size_t nfound = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	DIR *dp;
	int n = 0;

	dp = hd_run_dir_trusted(&st) == 0 ? opendir(dir) : NULL;
	if (!dp && errno == EACCES && hd_run_dir_trusted(&st) == 0)
		run_dir_refused(dir);
	while (dp && (de = readdir(dp)) != NULL) {
		size_t len = strlen(de->d_name);
		struct snic_bar_hdr hdr;
		struct found f;

		if (len <= 4 || strcmp(de->d_name + len - 4, ".bar") != 0)
			continue;
		if ((size_t)snprintf(f.path, sizeof(f.path), "%s/%s", dir,
				     de->d_name) >= sizeof(f.path))
			continue;
		if (read_bar_hdr(f.path, &hdr) != 0) {
			hd_dbg("skipping %s (not a live snic BAR)\n", f.path);
			continue;
		}
		memcpy(f.name, hdr.name, sizeof(f.name));
		f.guid = hdr.node_guid;
		if (nfound == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct found *nf = realloc(found, ncap * sizeof(*nf));

			if (!nf)
				break;
			found = nf;
			cap = ncap;
		}
		found[nfound++] = f;
	}
	if (dp)
		closedir(dp);
	if (nfound)
		qsort(found, nfound, sizeof(*found), cmp_found);

	list = calloc(nfound + 1, sizeof(*list));
	if (!list) {
		free(found);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dev_lock);
	for (size_t i = 0; i < nfound; i++) {
		struct hd_device *d;

		/* Two BAR files claiming the same name: keep the first. */
		if (i && strcmp(found[i].name, found[i - 1].name) == 0)
			continue;
		d = dev_get(&found[i]);
		if (d)
			list[n++] = &d->ibdev;
	}
	pthread_mutex_unlock(&dev_lock);
	free(found);
	if (num_devices)
		*num_devices = n;
	hd_dbg("%d device(s) in %s\n", n, dir);
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(to_hd_dev(device)->node_guid);
}

int ibv_get_device_index(struct ibv_device *device)
{
	return to_hd_dev(device)->index;
}

/* ------------------------------------------------------------------ */

int hd_fw_holds_pid(const char *host_mem, uint32_t pid)
{
	const char *dir = hd_run_dir();
	struct dirent *de;
	int held = 0;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return 0;
	while (!held && (de = readdir(dp)) != NULL) {
		size_t len = strlen(de->d_name);
		struct snic_bar_hdr hdr;
		char path[512];
		int fd;

		if (len <= 4 || strcmp(de->d_name + len - 4, ".bar") != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) >= sizeof(path))
			continue;
		if (read_bar_hdr(path, &hdr) != 0 ||
		    strcmp(hdr.host_mem, host_mem) != 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* read, not mapped: a file truncated meanwhile is short,
		 * not a SIGBUS */
		for (unsigned i = 0; i < SNIC_MAX_CTX && !held; i++) {
			uint32_t w[2]; /* state, owner_pid */

			if (pread(fd, w, sizeof(w), SNIC_BAR_CTX_OFF +
				  (off_t)i * SNIC_CTX_SLOT_SIZE) != sizeof(w))
				break;
			held = w[0] != SNIC_CTX_FREE && w[1] == pid;
		}
		close(fd);
	}
	closedir(dp);
	return held;
}
