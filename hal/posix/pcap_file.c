/* SPDX-License-Identifier: MIT */
/*
 * Classic pcap (the libpcap 2.4 file format): a 24-byte global header, then
 * per frame a 16-byte record header (seconds, microseconds, captured
 * length, original length) and the frame bytes, all in host byte order
 * (readers detect it from the magic number).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pcap_file.h"

#define PCAP_MAGIC_US     0xa1b2c3d4u
#define PCAP_VERSION_MAJ  2
#define PCAP_VERSION_MIN  4
#define LINKTYPE_ETHERNET 1u
#define PCAP_REC_HLEN     16u
/* Room for several maximum-size records, so whole records always fit. */
#define PCAP_BUF_SIZE     (1u << 20)

struct pcap_file {
	pthread_mutex_t lock;
	int fd;
	uint32_t used;                  /* bytes in buf: whole records only */
	uint64_t last_out_ms;           /* CLOCK_MONOTONIC of the last write */
	uint8_t buf[PCAP_BUF_SIZE];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Host order throughout: readers tell it from the magic number. */
static void put_u16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* write(2) all of buf, retrying short writes and EINTR. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Caller holds the lock. */
static int flush_locked(struct pcap_file *pf)
{
	int rc = write_all(pf->fd, pf->buf, pf->used);

	pf->used = 0;                   /* on error the records are lost */
	pf->last_out_ms = now_ms();
	return rc;
}

static int write_global_header(struct pcap_file *pf)
{
	uint8_t *h = pf->buf;

	put_u32(h, PCAP_MAGIC_US);
	put_u16(h + 4, PCAP_VERSION_MAJ);
	put_u16(h + 6, PCAP_VERSION_MIN);
	put_u32(h + 8, 0);              /* thiszone: UTC */
	put_u32(h + 12, 0);             /* sigfigs */
	put_u32(h + 16, PCAP_FILE_SNAPLEN);
	put_u32(h + 20, LINKTYPE_ETHERNET);
	pf->used = 24;
	return flush_locked(pf);
}

struct pcap_file *pcap_file_open(const char *path)
{
	struct pcap_file *pf = malloc(sizeof(*pf));
	int err;

	if (!pf)
		return NULL;
	/* every user's traffic (snic-emu --users): ours alone, and never
	 * written through a symlink someone left there */
	pf->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		      O_CLOEXEC, 0600);
	if (pf->fd < 0 || fchmod(pf->fd, 0600) != 0)
		goto fail;
	err = pthread_mutex_init(&pf->lock, NULL);
	if (err) {
		errno = err;
		goto fail;
	}
	if (write_global_header(pf) == 0)
		return pf;
	pthread_mutex_destroy(&pf->lock);
fail:
	err = errno;
	if (pf->fd >= 0)
		close(pf->fd);
	free(pf);
	errno = err;
	return NULL;
}

int pcap_file_write(struct pcap_file *pf, const uint8_t *frame,
		    uint32_t len, uint64_t ts_ns)
{
	uint32_t cap = len < PCAP_FILE_SNAPLEN ? len : PCAP_FILE_SNAPLEN;
	uint32_t need = PCAP_REC_HLEN + cap;
	int rc = 0;
	uint8_t *r;

	pthread_mutex_lock(&pf->lock);
	if (pf->used + need > PCAP_BUF_SIZE)
		rc = flush_locked(pf);
	r = pf->buf + pf->used;
	put_u32(r, (uint32_t)(ts_ns / 1000000000u));
	put_u32(r + 4, (uint32_t)(ts_ns % 1000000000u / 1000u));
	put_u32(r + 8, cap);
	put_u32(r + 12, len);
	memcpy(r + PCAP_REC_HLEN, frame, cap);
	pf->used += need;
	if (now_ms() - pf->last_out_ms >= PCAP_FILE_FLUSH_MS)
		rc |= flush_locked(pf);
	pthread_mutex_unlock(&pf->lock);
	return rc;
}

int pcap_file_flush(struct pcap_file *pf)
{
	int rc;

	pthread_mutex_lock(&pf->lock);
	rc = flush_locked(pf);
	pthread_mutex_unlock(&pf->lock);
	return rc;
}

int pcap_file_close(struct pcap_file *pf)
{
	int rc;

	if (!pf)
		return 0;
	rc = pcap_file_flush(pf);
	if (close(pf->fd) != 0)
		rc = -1;
	pthread_mutex_destroy(&pf->lock);
	free(pf);
	return rc;
}
