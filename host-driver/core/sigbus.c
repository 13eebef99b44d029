/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: a truncated shared file ends no process (issue 10).
 *
 * The BAR file and the shared host-memory file are regular files of the
 * run directory: any process of the NIC's user may ftruncate them, and a
 * mapping's pages past the new end then give SIGBUS to every process
 * that touches them (the broker's memfds are sealed against that, so they
 * need nothing: broker.c, hostmem.c hd_fd_sealed).  A guard region around
 * each access would cost the data path (doorbells are plain stores), so
 * the guard is here instead, for every access at once:
 *
 *  - the files we map are watched (hd_sigbus_watch: device, inode, our
 *    descriptor, whether the NIC's server holds a lock on it);
 *  - on SIGBUS (BUS_ADRERR) the handler finds the faulting address's
 *    mapping in /proc/self/maps; if it is a watched file, it waits while
 *    the NIC lives (its server's lock, liveness.c: not the BAR's fw_pid,
 *    which any process of the user may write), up to SIGBUS_WAIT_MS, for
 *    the file to reach that page again (snic-emu grows its files back at
 *    once: its own SIGBUS handler and its housekeeping,
 *    boards/emu/file_guard.c) and returns, so the access is made again
 *    and succeeds; the page holds
 *    zeros (what the firmware puts back: the header, its heartbeat);
 *  - if the BAR file does not come back (the NIC's server is gone, or
 *    too slow), the page is replaced by a private zero page: the process
 *    goes on, and sees a NIC that is down (magic 0, no heartbeat, no
 *    lock), so its calls fail with EIO instead of the process dying; a
 *    page of the host-memory file is never replaced (the application's
 *    data would go where the NIC does not look): the default action ends
 *    the process.
 *
 * Any other SIGBUS goes to the handler that was there before us (or the
 * default action, as without us).  Only async-signal-safe calls
 * (open/read/fstat/nanosleep/fcntl/mmap: system calls) in the handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

#define WATCH_MAX      64
#define SIGBUS_WAIT_MS 2000

struct watch {
	_Atomic int fd;         /* -1: free slot                              */
	dev_t dev;
	ino_t ino;
	int owner_locks;        /* the NIC's server locks it (liveness.c)     */
	int may_zero;           /* a lost page may become a private zero one  */
};

static struct watch watches[WATCH_MAX];
static struct sigaction old_bus;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static _Atomic unsigned long recovered, replaced;

/* ------------------------------------------------------------------ */
/* The handler.                                                          */

/* One /proc/self/maps line: its range, file offset, device and inode.
 * Read by hand here: memory/vma.c's reader uses stdio (fopen, sscanf),
 * which a signal handler must not. */
struct map_line {
	uintptr_t start, end;
	uint64_t off;
	unsigned maj, min;
	uint64_t ino;
};

static const char *hexnum(const char *p, uint64_t *v)
{
	*v = 0;
	for (;; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			return p;
		*v = *v << 4 | d;
	}
}

static int parse_line(const char *p, struct map_line *l)
{
	uint64_t v;

	p = hexnum(p, &v);
	l->start = (uintptr_t)v;
	if (*p++ != '-')
		return -1;
	p = hexnum(p, &v);
	l->end = (uintptr_t)v;
	while (*p == ' ')
		p++;
	while (*p && *p != ' ')         /* permissions */
		p++;
	while (*p == ' ')
		p++;
	p = hexnum(p, &l->off);
	while (*p == ' ')
		p++;
	p = hexnum(p, &v);
	l->maj = (unsigned)v;
	if (*p++ != ':')
		return -1;
	p = hexnum(p, &v);
	l->min = (unsigned)v;
	while (*p == ' ')
		p++;
	for (l->ino = 0; *p >= '0' && *p <= '9'; p++)
		l->ino = l->ino * 10 + (uint64_t)(*p - '0');
	return 0;
}

/* The mapping that holds addr, from /proc/self/maps.  0 when found. */
static int find_mapping(uintptr_t addr, struct map_line *out)
{
	char buf[4096 + 256];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int found = -1;

	if (fd < 0)
		return -1;
	while (found) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while (found && (nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			if (parse_line(line, out) == 0 && addr >= out->start &&
			    addr < out->end)
				found = 0;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)    /* a line longer than buf */
			have = 0;
	}
	close(fd);
	return found;
}

static struct watch *watched(const struct map_line *l)
{
	for (unsigned i = 0; i < WATCH_MAX; i++) {
		struct watch *w = &watches[i];

		if (atomic_load(&w->fd) >= 0 && w->ino == (ino_t)l->ino &&
		    w->dev == makedev(l->maj, l->min))
			return w;
	}
	return NULL;
}

/* Wait for the file to hold byte `off` again: 1 when it does. */
static int file_back(const struct watch *w, uint64_t off)
{
	struct timespec ms = { 0, 1000 * 1000 };

	for (int i = 0; i < SIGBUS_WAIT_MS; i++) {
		struct stat st;

		if (fstat(atomic_load(&w->fd), &st) == 0 &&
		    (uint64_t)st.st_size > off)
			return 1;
		if (w->owner_locks &&
		    hd_owner_alive(atomic_load(&w->fd)) == 0)
			return 0;
		nanosleep(&ms, NULL);
	}
	return 0;
}

/* 1: the fault at addr is dealt with (make the access again). */
static int recover(void *addr)
{
	uintptr_t page = (uintptr_t)addr & ~(uintptr_t)(SNIC_PAGE_SIZE - 1);
	struct map_line l;
	struct watch *w;
	int saved = errno;

	if (find_mapping((uintptr_t)addr, &l) != 0 || !(w = watched(&l))) {
		errno = saved;
		return 0;
	}
	if (file_back(w, l.off + (page - l.start))) {
		atomic_fetch_add(&recovered, 1);
	} else if (!w->may_zero) {
		/* host memory: a private page would take the application's
		 * writes where the NIC never sees them (RDMA completing with
		 * wrong data); ending the process loses less */
		errno = saved;
		return 0;
	} else {
		/* a private zero page: the NIC looks down from here on */
		if (mmap((void *)page, SNIC_PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED) {
			errno = saved;
			return 0;
		}
		atomic_fetch_add(&replaced, 1);
	}
	errno = saved;
	return 1;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (si->si_code == BUS_ADRERR && recover(si->si_addr))
		return;
	/* not ours: whoever was there before, else the default action
	 * (the access faults again and ends the process, as without us) */
	if (old_bus.sa_flags & SA_SIGINFO) {
		old_bus.sa_sigaction(sig, si, uc);
	} else if (old_bus.sa_handler != SIG_DFL &&
		   old_bus.sa_handler != SIG_IGN) {
		old_bus.sa_handler(sig);
	} else {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGBUS, &dfl, NULL);
	}
}

/* ------------------------------------------------------------------ */
/* Watching files.                                                       */

static void install(void)
{
	struct sigaction sa;

	for (unsigned i = 0; i < WATCH_MAX; i++)
		atomic_store(&watches[i].fd, -1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
}

void hd_sigbus_watch(int fd, int owner_locks, int may_zero)
{
	struct stat st;

	pthread_once(&install_once, install);
	if (fd < 0 || fstat(fd, &st) != 0)
		return;
	for (unsigned i = 0; i < WATCH_MAX; i++) {
		struct watch *w = &watches[i];
		int free_fd = -1;

		if (atomic_load(&w->fd) != -1)
			continue;
		/* fields first, then the descriptor that makes it live; a
		 * slot is claimed with a placeholder so no two take it */
		if (!atomic_compare_exchange_strong(&w->fd, &free_fd, -2))
			continue;
		w->dev = st.st_dev;
		w->ino = st.st_ino;
		w->owner_locks = owner_locks;
		w->may_zero = may_zero;
		atomic_store(&w->fd, fd);
		return;
	}
	hd_dbg("more than %d watched files: a truncation of this one ends "
	       "the process\n", WATCH_MAX);
}

void hd_sigbus_unwatch(int fd)
{
	for (unsigned i = 0; i < WATCH_MAX; i++) {
		int cur = fd;

		if (fd >= 0 &&
		    atomic_compare_exchange_strong(&watches[i].fd, &cur, -1))
			return;
	}
}

unsigned long hd_sigbus_recovered(unsigned long *pages_replaced)
{
	if (pages_replaced)
		*pages_replaced = atomic_load(&replaced);
	return atomic_load(&recovered);
}
