/* SPDX-License-Identifier: MIT */
/* snic host driver: one mapping of this process (vma_query.c). */
#ifndef HD_VMA_QUERY_H
#define HD_VMA_QUERY_H

#include <stdint.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

struct hd_vma_info {
	uintptr_t start, end;
	uint64_t off;               /* file offset of start                 */
	uint64_t inode;             /* 0: anonymous                         */
	dev_t dev;
	uint64_t page_size;         /* a hugetlb mapping's page size        */
	int readable, shared;
	char name[64];              /* with HD_VQ_NAME: path, [heap], ...   */
};

enum {
	HD_VQ_NEXT = 1u << 0,       /* the mapping at addr or the next one  */
	HD_VQ_FILE = 1u << 1,       /* file-backed mappings only            */
	HD_VQ_NAME = 1u << 2,       /* fill name                            */
};

/* A /proc/self file opened once per process: reopened after a fork (a
 * child reading its parent's page tables or mappings would be wrong).
 * The caller serialises; the fd, or -1 (errno set). */
struct hd_self_fd {
	int fd;                     /* -1 at first                          */
	pid_t pid;
};
int hd_self_fd(struct hd_self_fd *f, const char *path);

/* The mapping holding addr (HD_VQ_NEXT: or the first one above it).
 * 0; ENOENT when there is none; ENOTTY when the kernel cannot answer
 * this way (older than 6.11: read /proc/self/maps instead). */
int hd_vma_query(uintptr_t addr, unsigned flags, struct hd_vma_info *out);

/* 0 once a query found the kernel unable to answer (ENOTTY), else 1. */
int hd_vma_query_works(void);

#endif /* HD_VMA_QUERY_H */
