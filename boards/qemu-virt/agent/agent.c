/* SPDX-License-Identifier: MIT */
/*
 * snic-qemu-agent: the trusted host half of a QEMU NIC (tools/snic-qemu
 * starts one per NIC), what snic-emu's broker is for an emu NIC.  It owns
 * the memory the NIC's contexts use and hands each verbs process only its
 * own, over <run dir>/<name>.sock (the shared context broker,
 * boards/common/host/ctx_broker.c):
 *
 *  - every context slot of the BAR, the statistics area, the rest of the
 *    BAR (device memory and the control page with the mailbox) and every
 *    segment of host memory are memfds of ours; QEMU maps each as one
 *    memory backend (the layout file, --layout, lists them in guest
 *    physical order, platform.h), so what the firmware reads as slot s is
 *    the memfd we hand to slot s's process and to nobody else;
 *  - grants and deaths (socket closed) go to the firmware through the
 *    control page's mailbox (platform.h QV_CTL_MBOX_OFF);
 *  - the statistics memfd goes to the run directory's owner
 *    (<name>.admin.sock, snicctl).
 *
 * QEMU keeps its own mapping of every memfd for good, so a slot or segment
 * cannot be taken back from a process that closed its socket but kept its
 * mapping or descriptor: before handing out again a slot or segment that
 * was handed out before, the agent looks through /proc (every process's
 * descriptors and mappings it may read, QEMU's and its own aside) and
 * skips it while anybody else still holds it (counted as "held back").  A
 * segment is zeroed (its pages punched) when handed out and when its last
 * context ends, so the next process finds nothing of the last one's.
 *
 * Lifecycle: make the memfds, write the layout, wait for the firmware's UP
 * in the control page, stop being dumpable (QEMU has opened our memfds
 * through /proc by then; nobody else may), listen, serve until SIGTERM
 * (from the launcher, after the firmware's DOWN, or on the launcher's
 * death).  Once the firmware is down, mailbox requests fail at once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctx_broker.h"
#include "platform.h"
#include "snic/hostif.h"

#define PROG "snic-qemu-agent"
#define MBOX_WAIT_MS 5000       /* a loaded TCG guest answers in ~1 ms   */
#define SCAN_FRESH_MS 20        /* one /proc scan serves one grant        */
#define REST_LEN (QV_BAR_FILE_SIZE - SNIC_BAR_DM_OFF)

_Static_assert(SNIC_BAR_CTX_OFF % 4096 == 0 && SNIC_CTX_SLOT_SIZE % 4096 == 0 &&
	       SNIC_BAR_STATS_SIZE % 4096 == 0 && SNIC_BAR_DM_OFF % 4096 == 0,
	       "each memory backend is whole pages");
_Static_assert(SNIC_BAR_DM_OFF <= QV_CTL_OFF, "control page in the rest");

static struct {
	const char *run_dir, *name, *bar_path, *layout;
	uint64_t seg_base, seg_len;
	unsigned nseg;
	int bar_fd;
	int slot_fd[SNIC_MAX_CTX];
	int stats_fd, rest_fd;
	int seg_fd[SNIC_MAX_CTX];
	uint8_t *rest;          /* DM area .. the control page               */
	unsigned long mbox_timeouts, segs_zeroed, held_back, scans;
	uint64_t undo;          /* grants the firmware may still carry out  */
	/* reuse: handed out before / still held by another process (bit per
	 * slot or segment), the memfds' identities, the last scan's time */
	uint64_t slot_used, seg_used, slot_held, seg_held;
	struct stat st_slot[SNIC_MAX_CTX], st_seg[SNIC_MAX_CTX], st_rest;
	int64_t scan_ms;
} A;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, what, strerror(errno));
	exit(1);
}

/* A sealed (no shrink, no grow: what the host driver checks) memfd. */
static int sealed_memfd(const char *what, uint64_t len)
{
	int fd = memfd_create(what, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		die("memfd");
	return fd;
}

static volatile uint8_t *ctl(void)
{
	return A.rest + (QV_CTL_OFF - SNIC_BAR_DM_OFF);
}

static volatile struct qv_mbox *mbox(void)
{
	return (volatile struct qv_mbox *)(void *)(ctl() + QV_CTL_MBOX_OFF);
}

static int fw_state_is(const char *s)
{
	return memcmp((const void *)(ctl() + QV_CTL_STATE_OFF), s, strlen(s)) == 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int mbox_idle(void)
{
	volatile struct qv_mbox *m = mbox();

	return __atomic_load_n(&m->done, __ATOMIC_ACQUIRE) == m->req;
}

/* One mailbox request; the firmware's result, or -1 when it does not
 * answer (stopped, or stalled for MBOX_WAIT_MS; a grant it may still
 * carry out is undone once it answers again, mbox_catch_up). */
static int mbox_call(uint32_t op, uint32_t slot, uint32_t pid,
		     uint32_t first, uint32_t npages)
{
	volatile struct qv_mbox *m = mbox();
	int64_t t0 = mono_ms();
	uint32_t req;

	if (stop || !fw_state_is("UP"))
		return -1;      /* stopping: the NIC is down or going */
	/* one request at a time: the last one may still be pending */
	while (!mbox_idle()) {
		if (mono_ms() - t0 > MBOX_WAIT_MS || stop || !fw_state_is("UP"))
			return -1;
		usleep(100);
	}
	req = m->done + 1;
	m->op = op;
	m->slot = slot;
	m->pid = pid;
	m->first_page = first;
	m->npages = npages;
	__atomic_store_n(&m->req, req, __ATOMIC_RELEASE);
	while (__atomic_load_n(&m->done, __ATOMIC_ACQUIRE) != req) {
		if (mono_ms() - t0 > MBOX_WAIT_MS || stop || !fw_state_is("UP")) {
			A.mbox_timeouts++;
			fprintf(stderr, "%s: %s: the firmware did not answer "
				"request %u (op %u slot %u)\n", PROG, A.name,
				req, op, slot);
			if (op == QV_MBOX_GRANT)
				A.undo |= 1ull << slot;
			return -1;
		}
		usleep(100);
	}
	return m->result;
}

/* ---------------------------------------------------------------------- */
/* Who else holds our memfds (/proc).                                      */

static int same(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

/* Our memfd st is: a slot (bit in *slots), a segment, or the rest (1). */
static int classify(const struct stat *st, uint64_t *slots, uint64_t *segs)
{
	if (same(st, &A.st_rest))
		return 1;
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++)
		if (same(st, &A.st_slot[s]))
			*slots |= 1ull << s;
	for (unsigned k = 0; k < A.nseg; k++)
		if (same(st, &A.st_seg[k]))
			*segs |= 1ull << k;
	return 0;
}

/* What process pid holds of ours: descriptors, then mappings (inode
 * numbers of our memfds, named "/memfd:snic-...").  1 when it holds the
 * rest of the BAR (QEMU, or the launcher writing the control page): it
 * reaches everything anyway. */
static int scan_pid(const char *pid, uint64_t *slots, uint64_t *segs)
{
	char path[64], line[512];
	struct dirent *e;
	struct stat st;
	DIR *d;
	FILE *f;
	int rest = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.' &&
			    fstatat(dirfd(d), e->d_name, &st, 0) == 0)
				rest |= classify(&st, slots, segs);
		closedir(d);
	}
	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	if ((f = fopen(path, "re")) != NULL) {
		while (fgets(line, sizeof(line), f)) {
			unsigned long long ino;

			if (!strstr(line, "/memfd:snic-") ||
			    sscanf(line, "%*s %*s %*s %*s %llu", &ino) != 1)
				continue;
			st = A.st_rest;
			st.st_ino = (ino_t)ino; /* memfds share one device */
			rest |= classify(&st, slots, segs);
		}
		fclose(f);
	}
	return rest;
}

/* Slots and segments another process (not us, not QEMU) holds now. */
static void scan(void)
{
	char self[16];
	struct dirent *e;
	DIR *d = opendir("/proc");

	A.slot_held = A.seg_held = 0;
	A.scan_ms = mono_ms();
	A.scans++;
	if (!d)
		return;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while ((e = readdir(d)) != NULL) {
		uint64_t slots = 0, segs = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
		    !strcmp(e->d_name, self))
			continue;
		if (!scan_pid(e->d_name, &slots, &segs)) {
			A.slot_held |= slots;
			A.seg_held |= segs;
		}
	}
	closedir(d);
}

static int held(uint64_t used, uint64_t bit_no, const uint64_t *held_bits)
{
	if (!((used >> bit_no) & 1))
		return 0;       /* never handed out: nobody has it */
	if (mono_ms() - A.scan_ms > SCAN_FRESH_MS)
		scan();
	if ((*held_bits >> bit_no) & 1) {
		A.held_back++;
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The back end (ctx_broker.h).                                            */

/* While a request is unanswered or a grant not undone, the firmware may
 * hold a context in any slot with any segment: nothing is handed out. */
static int mbox_behind(void)
{
	return A.undo || !mbox_idle();
}

static int qa_slot_busy(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	return mbox_behind() || held(A.slot_used, slot, &A.slot_held);
}

static int qa_seg_busy(void *be, unsigned k)
{
	(void)be;
	return mbox_behind() || held(A.seg_used, k, &A.seg_held);
}

/* Grants that timed out: ended once the firmware answers again. */
static void mbox_catch_up(void *be, unsigned nic)
{
	(void)be;
	(void)nic;
	for (unsigned s = 0; A.undo && s < SNIC_MAX_CTX; s++)
		if ((A.undo >> s) & 1 && mbox_idle() &&
		    mbox_call(QV_MBOX_DEAD, s, 0, 0, 0) == 0)
			A.undo &= ~(1ull << s);
}

static int qa_slot_open(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	A.slot_used |= 1ull << slot;
	return A.slot_fd[slot];
}

/* The memfd stays QEMU's and ours (the guest maps it for good). */
static void qa_slot_close(void *be, unsigned nic, unsigned slot, int fd)
{
	(void)be;
	(void)nic;
	(void)slot;
	(void)fd;
}

/* Zero pages: nothing of the last owner's reaches the next. */
static int seg_zero(unsigned k)
{
	if (fallocate(A.seg_fd[k], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      0, (off_t)A.seg_len) != 0) {
		fprintf(stderr, "%s: segment %u not zeroed: %s\n", PROG, k,
			strerror(errno));
		return -1;
	}
	A.segs_zeroed++;
	return 0;
}

static int qa_seg_open(void *be, unsigned k)
{
	(void)be;
	A.seg_used |= 1ull << k;
	return seg_zero(k) == 0 ? A.seg_fd[k] : -1;
}

static void qa_seg_close(void *be, unsigned k, int fd)
{
	(void)be;
	(void)fd;
	seg_zero(k);
}

static int qa_grant(void *be, unsigned nic, unsigned slot, uint32_t pid,
		    uint32_t first_page, uint32_t npages)
{
	(void)be;
	(void)nic;
	return mbox_call(QV_MBOX_GRANT, slot, pid, first_page, npages);
}

static void qa_dead(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	mbox_call(QV_MBOX_DEAD, slot, 0, 0, 0);
}

/* Device memory is not mapped into processes here (one backend per DM
 * page is left to do): dm_map NULL, SNIC_ISO_DM_MAP refused EOPNOTSUPP. */
static const struct cb_ops qa_ops = {
	.slot_open = qa_slot_open,
	.slot_close = qa_slot_close,
	.seg_open = qa_seg_open,
	.seg_close = qa_seg_close,
	.grant = qa_grant,
	.dead = qa_dead,
	.slot_busy = qa_slot_busy,
	.seg_busy = qa_seg_busy,
	.housekeep = mbox_catch_up,
};

/* ---------------------------------------------------------------------- */

/* "SIZE PATH" lines, guest physical order: the BAR's pieces, then the
 * segments; then "ctl PATH OFFSET", where the launcher writes the
 * configuration and reads the firmware's state. */
static void write_layout(void)
{
	char tmp[512];
	pid_t me = getpid();
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", A.layout) >= sizeof(tmp))
		die("layout path too long");
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	fprintf(f, "bar %u %s\n", SNIC_BAR_CTX_OFF, A.bar_path);
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++)
		fprintf(f, "bar %u /proc/%d/fd/%d\n", SNIC_CTX_SLOT_SIZE,
			(int)me, A.slot_fd[s]);
	fprintf(f, "bar %u /proc/%d/fd/%d\n", SNIC_BAR_STATS_SIZE, (int)me,
		A.stats_fd);
	fprintf(f, "bar %llu /proc/%d/fd/%d\n", (unsigned long long)REST_LEN,
		(int)me, A.rest_fd);
	for (unsigned k = 0; k < A.nseg; k++)
		fprintf(f, "seg %" PRIu64 " /proc/%d/fd/%d\n", A.seg_len,
			(int)me, A.seg_fd[k]);
	fprintf(f, "ctl /proc/%d/fd/%d %llu\n", (int)me, A.rest_fd,
		(unsigned long long)(QV_CTL_OFF - SNIC_BAR_DM_OFF));
	if (fclose(f) != 0 || rename(tmp, A.layout) != 0)
		die(A.layout);
}

static void make_memory(void)
{
	char what[32];

	A.bar_fd = open(A.bar_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (A.bar_fd < 0)
		die(A.bar_path);
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++) {
		snprintf(what, sizeof(what), "snic-ctx-slot-%u", s);
		A.slot_fd[s] = sealed_memfd(what, SNIC_CTX_SLOT_SIZE);
		if (fstat(A.slot_fd[s], &A.st_slot[s]) != 0)
			die("fstat");
	}
	A.stats_fd = sealed_memfd("snic-stats", SNIC_BAR_STATS_SIZE);
	A.rest_fd = sealed_memfd("snic-bar-rest", REST_LEN);
	for (unsigned k = 0; k < A.nseg; k++) {
		snprintf(what, sizeof(what), "snic-segment-%u", k);
		A.seg_fd[k] = sealed_memfd(what, A.seg_len);
		if (fstat(A.seg_fd[k], &A.st_seg[k]) != 0)
			die("fstat");
	}
	if (fstat(A.rest_fd, &A.st_rest) != 0)
		die("fstat");
	A.rest = mmap(NULL, REST_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      A.rest_fd, 0);
	if (A.rest == MAP_FAILED)
		die("mmap");
}

static uint64_t num(const char *opt, const char *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || *end || *v == '-' || *v == '\0') {
		fprintf(stderr, "%s: bad %s '%s'\n", PROG, opt, v);
		exit(2);
	}
	return n;
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!strcmp(o, "--run-dir"))
			A.run_dir = v;
		else if (!strcmp(o, "--name"))
			A.name = v;
		else if (!strcmp(o, "--bar"))
			A.bar_path = v;
		else if (!strcmp(o, "--layout"))
			A.layout = v;
		else if (!strcmp(o, "--seg-base"))
			A.seg_base = num(o, v);
		else if (!strcmp(o, "--seg-len"))
			A.seg_len = num(o, v);
		else if (!strcmp(o, "--segments"))
			A.nseg = (unsigned)num(o, v);
		else {
			fprintf(stderr, "%s: unknown option %s\n", PROG, o);
			exit(2);
		}
	}
	if (!A.run_dir || !A.name || !A.bar_path || !A.layout || !A.seg_len ||
	    A.seg_len % 4096 || !A.nseg || A.nseg > SNIC_MAX_CTX ||
	    A.seg_base % 4096 || argc % 2 == 0) {
		fprintf(stderr, "usage: %s --run-dir DIR --name NIC --bar FILE "
			"--layout FILE --seg-base PA --seg-len BYTES --segments "
			"N (started by tools/snic-qemu)\n", PROG);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int fds[CB_MAX_NICS * (SNIC_MAX_CTX + 2)];
	struct pollfd pfd[CB_MAX_NICS * (SNIC_MAX_CTX + 2)];
	struct cb_nic nic;
	struct cb_config cfg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the launcher's death ends us too (our sockets are removed) */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		return 1;
	make_memory();
	write_layout();
	while (!stop && !fw_state_is("UP"))
		usleep(5000);
	if (stop)
		return 0;
	/* QEMU has opened every memfd through /proc/<us>/fd by now: from here
	 * on no other process of the user may (nor read our memory) */
	prctl(PR_SET_DUMPABLE, 0);
	nic = (struct cb_nic){ .name = A.name, .bar_fd = A.bar_fd,
			       .stats_fd = A.stats_fd,
			       .stats_len = SNIC_BAR_STATS_SIZE };
	cfg = (struct cb_config){ .prog = PROG, .run_dir = A.run_dir,
				  .nics = &nic, .nnics = 1, .ops = &qa_ops,
				  .seg_base = A.seg_base, .seg_len = A.seg_len,
				  .nseg = A.nseg };
	if (cb_init(&cfg) != 0)
		return 1;
	printf("%s: %s: serving %s/%s.sock (%u segments of %" PRIu64 " MiB)\n",
	       PROG, A.name, A.run_dir, A.name, A.nseg, A.seg_len >> 20);
	while (!stop) {
		unsigned n = cb_fds(fds, sizeof(fds) / sizeof(fds[0]));

		for (unsigned i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		/* a death is seen at once; the file's slot copies are put
		 * back within 10 ms, as the emu's broker does */
		poll(pfd, n, 10);
		cb_poll();
	}
	cb_fini();
	printf("%s: %s: %lu segments zeroed, %lu slots or segments held back "
	       "(another process still held them; %lu scans), %lu mailbox "
	       "requests unanswered\n", PROG, A.name, A.segs_zeroed,
	       A.held_back, A.scans, A.mbox_timeouts);
	return 0;
}
