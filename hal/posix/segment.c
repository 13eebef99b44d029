/* SPDX-License-Identifier: MIT */
/*
 * Private segments for the emu's broker (segment.h).  The memfds are
 * sealed against shrinking and growing before any process sees them, so
 * neither the NIC nor a host driver mapping one can be hit by SIGBUS
 * through a truncation; they have no name in any directory, so another
 * process cannot open them (the emu makes itself non-dumpable, closing
 * /proc/<pid>/fd too).
 */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ZERO_FLAGS (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

int snic_hostmem_add_area(struct snic_hostmem *hm, uint64_t area)
{
	uint64_t total = hm->size + area;
	uint8_t *p;

	if (area == 0 || total < hm->size || total > (uint64_t)SIZE_MAX)
		return -1;
	p = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, ZERO_FLAGS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "snic: cannot reserve %llu bytes of window for "
			"private segments: %s\n", (unsigned long long)area,
			strerror(errno));
		return -1;
	}
	if (mmap(p, (size_t)hm->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, hm->fd, 0) == MAP_FAILED) {
		fprintf(stderr, "snic: cannot map host memory %s: %s\n",
			hm->path, strerror(errno));
		munmap(p, (size_t)total);
		return -1;
	}
	/* the truncation guard follows the mapping: the old range may be
	 * reused by any mapping after the munmap (a SIGBUS there is not
	 * ours), the new one is the file's */
	snic_posix_file_unguard(hm->fd);
	snic_posix_file_guard(hm->fd, hm->size, p, hm->size);
	munmap(hm->base, (size_t)hm->size);
	hm->base = p;
	hm->area = area;
	return 0;
}

int snic_private_map(void *at, uint64_t len, const char *what)
{
	int fd = memfd_create(what, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0) {
		fprintf(stderr, "snic: memfd_create(%s): %s\n", what,
			strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
	    != 0 ||
	    mmap(at, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0) == MAP_FAILED) {
		fprintf(stderr, "snic: cannot set up %s (%llu bytes): %s\n",
			what, (unsigned long long)len, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void snic_private_unmap(void *at, uint64_t len, int fd, int file_fd,
			uint64_t file_off)
{
	void *p;

	if (file_fd >= 0)
		p = mmap(at, (size_t)len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, file_fd, (off_t)file_off);
	else
		p = mmap(at, (size_t)len, PROT_READ | PROT_WRITE,
			 ZERO_FLAGS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		fprintf(stderr, "snic: cannot put back %p+%llu: %s\n", at,
			(unsigned long long)len, strerror(errno));
	close(fd);
}
