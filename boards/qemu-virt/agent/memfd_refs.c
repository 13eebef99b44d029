/* SPDX-License-Identifier: MIT */
/*
 * Who still holds a handed-out memfd, by inotify (memfd_refs.h).
 *
 * inotify merges an event into the unread one before it when both are
 * the same: one hand-out per memfd is OUT at a time (a slot has one
 * context, a segment one process), so at most one IN_CLOSE is awaited per
 * memfd, and the queue is read just before each reopen of ours, so that
 * our own IN_OPEN is not merged into a stranger's (or the reverse) except
 * by an open in the few instructions between the two.
 */
#include "memfd_refs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_WD 512

static struct {
	int ifd;                /* -1: none (every memfd retired once used) */
	int started;
	int lost;               /* events lost: every used memfd retired   */
	struct mref *by_wd[MAX_WD];
	unsigned long retired;
} M = { .ifd = -1 };

int mrefs_fd(void)
{
	return M.ifd;
}

int mrefs_lost(void)
{
	return M.lost;
}

unsigned long mrefs_retired(void)
{
	return M.retired;
}

int mref_watch(struct mref *r, int fd)
{
	char path[40];

	r->fd = fd;
	r->wd = -1;
	r->own_opens = 0;
	r->own_attribs = 0;
	r->breached = 0;
	r->state = MREF_FRESH;
	if (M.ifd < 0 && !M.lost)
		M.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (M.ifd >= 0)
		r->wd = inotify_add_watch(M.ifd, path, IN_OPEN | IN_CLOSE | IN_ATTRIB);
	if (r->wd < 0 || r->wd >= MAX_WD) {
		fprintf(stderr, "snic-qemu-agent: cannot watch memfd %d (%s): "
			"a slot or segment is not handed out twice\n", fd,
			strerror(errno));
		M.lost = 1;
		return -1;
	}
	M.by_wd[r->wd] = r;
	return 0;
}

static void retire(struct mref *r)
{
	if (r->state != MREF_RETIRED)
		M.retired++;
	r->state = MREF_RETIRED;
}

static void on_event(const struct inotify_event *e)
{
	struct mref *r = e->wd >= 0 && e->wd < MAX_WD ? M.by_wd[e->wd] : NULL;
	int stranger = 0;

	if (e->mask & IN_Q_OVERFLOW) {
		/* who opened and released what is unknown now */
		M.lost = 1;
		for (unsigned w = 0; w < MAX_WD; w++)
			if (M.by_wd[w] && M.by_wd[w]->state != MREF_FRESH)
				retire(M.by_wd[w]);
		return;
	}
	if (!r)
		return;
	if (e->mask & IN_OPEN && !(r->own_opens && r->own_opens--))
		stranger = 1;
	if (e->mask & IN_ATTRIB && !(r->own_attribs && r->own_attribs--))
		stranger = 1;
	/* QEMU's opens are before the start */
	if (stranger && M.started) {
		if (r->state == MREF_OUT)
			r->breached = 1;
		retire(r);
	}
	if (e->mask & IN_CLOSE && r->state == MREF_OUT && !r->own_opens)
		r->state = MREF_CLEAN;
}

void mrefs_drain(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (M.ifd < 0)
		return;
	while ((n = read(M.ifd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;

			on_event(e);
			p += sizeof(*e) + e->len;
		}
}

void mrefs_start(void)
{
	mrefs_drain();          /* QEMU's opens at its start */
	for (unsigned w = 0; w < MAX_WD; w++)
		if (M.by_wd[w])
			fchmod(M.by_wd[w]->fd, 0);
	mrefs_drain();          /* and the IN_ATTRIB of our chmods */
	M.started = 1;
}

int mref_open(struct mref *r)
{
	struct stat st;
	char path[40];
	int fd;

	if (mref_busy(r))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	/* our IN_ATTRIB and IN_OPEN follow at once: nothing unread before
	 * them; a mode not ours is somebody's chmod (its event may be lost) */
	mrefs_drain();
	if (fstat(r->fd, &st) != 0 || (st.st_mode & 07777) != 0) {
		retire(r);
		return -1;
	}
	if (fchmod(r->fd, 0600) != 0)
		return -1;
	r->own_attribs++;
	r->own_opens++;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fchmod(r->fd, 0) == 0)
		r->own_attribs++;
	if (fd < 0)
		r->own_opens--;
	mrefs_drain();
	if (fd < 0)
		return -1;
	if (r->state == MREF_RETIRED || r->own_opens || r->own_attribs) {
		/* a stranger's open came with ours, or ours is not seen */
		retire(r);
		close(fd);
		return -1;
	}
	r->state = MREF_OUT;
	return fd;
}

int mref_breached(struct mref *r)
{
	int b = r->breached;

	r->breached = 0;
	return b;
}

int mref_busy(struct mref *r)
{
	mrefs_drain();
	if (M.lost && r->state != MREF_FRESH)
		return 1;
	return r->state == MREF_OUT || r->state == MREF_RETIRED;
}
