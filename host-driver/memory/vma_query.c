/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: one mapping of this process asked of the kernel with
 * the PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11) instead of
 * reading and parsing the whole text of /proc/self/maps.  The text costs
 * ~25 us even for a small process (the kernel formats every mapping, its
 * path included) and grows with the number of mappings; a query costs
 * ~1 us.  A first registration asked the text twice (what backs the
 * range; every mapping of a stale kept backing's window pages): ~75 of
 * its ~130 us on an idle machine.  vma.c falls back to the text when the
 * kernel answers ENOTTY (older than 6.11).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "memory/memory.h"
#include "memory/vma_query.h"

/* From <linux/fs.h> of Linux 6.11 (Debian 12's headers predate it). */
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};

#define HD_PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
enum {
	PQ_VMA_READABLE = 0x01,
	PQ_VMA_SHARED = 0x08,
	PQ_COVERING_OR_NEXT = 0x10,
	PQ_FILE_BACKED = 0x20,
};

int hd_self_fd(struct hd_self_fd *f, const char *path)
{
	pid_t self = hd_self_pid();

	if (f->fd < 0 || f->pid != self) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = open(path, O_RDONLY | O_CLOEXEC);
		f->pid = self;
	}
	return f->fd;
}

static pthread_mutex_t mq_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_self_fd mq_fd = { -1, 0 };
static _Atomic int mq_unsupported;

static int procmap_query_allowed(void)
{
	const char *e = getenv("SNIC_PROCMAP_QUERY");

	return !e || strcmp(e, "0") != 0;
}

int hd_vma_query(uintptr_t addr, unsigned flags, struct hd_vma_info *out)
{
	struct procmap_query q;
	int fd, r, err = 0;

	if (atomic_load_explicit(&mq_unsupported, memory_order_relaxed))
		return ENOTTY;
	/* SNIC_PROCMAP_QUERY=0: the text, as on a kernel without the ioctl
	 * (so that path can be tested here) */
	if (!procmap_query_allowed()) {
		atomic_store(&mq_unsupported, 1);
		return ENOTTY;
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_addr = addr;
	q.query_flags = ((flags & HD_VQ_NEXT) ? PQ_COVERING_OR_NEXT : 0) |
			((flags & HD_VQ_FILE) ? PQ_FILE_BACKED : 0);
	out->name[0] = '\0';
	if (flags & HD_VQ_NAME) {
		q.vma_name_addr = (uintptr_t)out->name;
		q.vma_name_size = sizeof(out->name);
	}
	pthread_mutex_lock(&mq_lock);
	fd = hd_self_fd(&mq_fd, "/proc/self/maps");
	if (fd < 0) {
		err = errno;
	} else {
		r = ioctl(fd, HD_PROCMAP_QUERY, &q);
		/* a name longer than the buffer: asked again without it
		 * (no name of ours is that long) */
		if (r < 0 && errno == ENAMETOOLONG) {
			q.vma_name_addr = 0;
			q.vma_name_size = 0;
			out->name[0] = '\0';
			r = ioctl(fd, HD_PROCMAP_QUERY, &q);
		}
		if (r < 0)
			err = errno;
	}
	pthread_mutex_unlock(&mq_lock);
	if (err == ENOTTY || err == EINVAL) {
		/* older kernel (or one that knows no field of ours): the
		 * text from now on */
		atomic_store(&mq_unsupported, 1);
		return ENOTTY;
	}
	if (err)
		return err;
	out->start = (uintptr_t)q.vma_start;
	out->end = (uintptr_t)q.vma_end;
	out->off = q.vma_offset;
	out->inode = q.inode;
	out->dev = makedev(q.dev_major, q.dev_minor);
	out->page_size = q.vma_page_size;
	out->readable = (q.vma_flags & PQ_VMA_READABLE) != 0;
	out->shared = (q.vma_flags & PQ_VMA_SHARED) != 0;
	return 0;
}

int hd_vma_query_works(void)
{
	return !atomic_load_explicit(&mq_unsupported, memory_order_relaxed);
}
