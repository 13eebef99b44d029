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
 * mapping or descriptor: each hand-out is a new open file of the memfd,
 * and a slot or segment is handed out again only once the kernel has
 * reported that open file released (memfd_refs.c: inotify IN_CLOSE comes
 * when no descriptor, mapping or descriptor in flight refers to it any
 * more, whoever holds it; counted "held back").  An O_PATH descriptor
 * kept of it is no such reference: its holder's chmod and open (IN_ATTRIB,
 * IN_OPEN) end the context that holds the memfd then (end_breached) and
 * retire it.  A segment is zeroed (its
 * pages punched) when handed out and when its last context ends, so the
 * next process finds nothing of the last one's.
 *
 * Lifecycle: not dumpable from the first instruction (nobody may open our
 * memfds through /proc/<us>/fd nor read our memory); make the memfds,
 * write the launcher's configuration into the control page, fork: the
 * parent becomes QEMU (argv after "--", our memory backends in place of
 * @BAR@ and @SEGMENTS@, mapped as QEMU's own /proc/self/fd/N: its shim
 * asks for the memfds once it is not dumpable, qemu_asks, and takes them
 * on a socket pair of its own), the child is the agent: it waits for the firmware's
 * UP, listens, serves until SIGTERM (also when QEMU, its parent, ends).
 * The launcher reads the firmware's state from the --state file and asks
 * for a clean stop with SIGUSR1.  Once the firmware is down, mailbox
 * requests fail at once.
 */
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctx_broker.h"
#include "memfd_refs.h"
#include "platform.h"
#include "snic/hostif.h"

#define PROG "snic-qemu-agent"
#define MBOX_WAIT_MS 5000       /* a loaded TCG guest answers in ~1 ms   */
#define REST_LEN (QV_BAR_FILE_SIZE - SNIC_BAR_DM_OFF)

_Static_assert(SNIC_BAR_CTX_OFF % 4096 == 0 && SNIC_CTX_SLOT_SIZE % 4096 == 0 &&
	       SNIC_BAR_STATS_SIZE % 4096 == 0 && SNIC_BAR_DM_OFF % 4096 == 0,
	       "each memory backend is whole pages");
_Static_assert(SNIC_BAR_DM_OFF <= QV_CTL_OFF, "control page in the rest");

static struct {
	const char *run_dir, *name, *bar_path, *layout;
	uint64_t seg_base, seg_len;
	unsigned nseg;
	long users;             /* --users: who may connect (users.h)      */
	int bar_fd;
	int slot_fd[SNIC_MAX_CTX];
	int stats_fd, rest_fd;
	int seg_fd[SNIC_MAX_CTX];
	uint8_t *rest;          /* DM area .. the control page               */
	unsigned long mbox_timeouts, segs_zeroed, held_back, breached;
	uint64_t undo;          /* grants the firmware may still carry out  */
	/* who still holds a slot's or segment's hand-out (memfd_refs.h) */
	struct mref slot_ref[SNIC_MAX_CTX], seg_ref[SNIC_MAX_CTX];
	const char *config, *state_file, *qemu_err, *shim;
	char **qemu_argv;
	char last_state[5];
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
/* The back end (ctx_broker.h).                                            */

/* While a request is unanswered or a grant not undone, the firmware may
 * hold a context in any slot with any segment: nothing is handed out. */
static int mbox_behind(void)
{
	return A.undo || !mbox_idle();
}

/* A hand-out somebody still holds (or may hold) is not made again. */
static int held(struct mref *r)
{
	if (!mref_busy(r))
		return 0;
	A.held_back++;
	return 1;
}

static int qa_slot_busy(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	return mbox_behind() || held(&A.slot_ref[slot]);
}

static int qa_seg_busy(void *be, unsigned k)
{
	(void)be;
	return mbox_behind() || held(&A.seg_ref[k]);
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

/* A new open file of the slot's memfd: its release is the kernel's word
 * that the process (and whoever it passed it to) holds it no more. */
static int qa_slot_open(void *be, unsigned nic, unsigned slot)
{
	(void)be;
	(void)nic;
	return mref_open(&A.slot_ref[slot]);
}

/* Our reference to the hand-out; the memfd stays QEMU's and ours. */
static void qa_slot_close(void *be, unsigned nic, unsigned slot, int fd)
{
	(void)be;
	(void)nic;
	(void)slot;
	close(fd);
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
	return seg_zero(k) == 0 ? mref_open(&A.seg_ref[k]) : -1;
}

static void qa_seg_close(void *be, unsigned k, int fd)
{
	(void)be;
	close(fd);
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

/* ---------------------------------------------------------------------- */
/* QEMU, started by us so that it inherits our memfds.                     */

/* "-object memory-backend-file,... -numa node,..." for one backend. */
static void node(char **v, unsigned *o, char kind, unsigned id, uint64_t size,
		 const char *path, int fd)
{
	char p[40], buf[600];

	if (!path) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		path = p;
	}
	snprintf(buf, sizeof(buf), "memory-backend-file,id=%c%u,size=%" PRIu64
		 ",mem-path=%s,share=on", kind, id, size, path);
	v[(*o)++] = "-object";
	v[(*o)++] = strdup(buf);
	snprintf(buf, sizeof(buf), "node,memdev=%c%u", kind, id);
	v[(*o)++] = "-numa";
	v[(*o)++] = strdup(buf);
}

/* argv with "@BAR@" and "@SEGMENTS@" replaced by our memory backends, one
 * NUMA node each in guest physical order (platform.h): the BAR file's
 * first pages, the slots, the statistics, the rest; the segments.  QEMU
 * opens each memfd as /proc/self/fd/N: its own descriptor, inherited from
 * us, so nobody needs to reach ours. */
static char **qemu_argv(void)
{
	unsigned n = 0, o = 0, b = 0;
	char **v;

	while (A.qemu_argv[n])
		n++;
	v = calloc(n + 4 * (SNIC_MAX_CTX + 3 + A.nseg) + 1, sizeof(*v));
	if (!v)
		die("calloc");
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(A.qemu_argv[i], "@BAR@")) {
			node(v, &o, 'b', b++, SNIC_BAR_CTX_OFF, A.bar_path, -1);
			for (unsigned s = 0; s < SNIC_MAX_CTX; s++)
				node(v, &o, 'b', b++, SNIC_CTX_SLOT_SIZE, NULL,
				     A.slot_fd[s]);
			node(v, &o, 'b', b++, SNIC_BAR_STATS_SIZE, NULL, A.stats_fd);
			node(v, &o, 'b', b++, REST_LEN, NULL, A.rest_fd);
		} else if (!strcmp(A.qemu_argv[i], "@SEGMENTS@")) {
			for (unsigned k = 0; k < A.nseg; k++)
				node(v, &o, 's', k, A.seg_len, NULL, A.seg_fd[k]);
		} else {
			v[o++] = A.qemu_argv[i];
		}
	}
	return v;
}

/* Every memfd QEMU maps (slots, statistics, rest, segments): n. */
static unsigned qemu_fds(int *fds)
{
	unsigned n = 0;

	for (unsigned s = 0; s < SNIC_MAX_CTX; s++)
		fds[n++] = A.slot_fd[s];
	fds[n++] = A.stats_fd;
	fds[n++] = A.rest_fd;
	for (unsigned k = 0; k < A.nseg; k++)
		fds[n++] = A.seg_fd[k];
	return n;
}

/* The pre-fork process becomes QEMU (the launcher's child, whose exit
 * status it waits for), with our shim preloaded: it makes QEMU
 * non-dumpable before QEMU holds any memfd of ours, then takes them from
 * sock (qemu_shim.c; our memfds are close-on-exec, not inherited). */
static void exec_qemu(int sock, pid_t agent)
{
	char **v = qemu_argv(), num[16], apid[16], *pre;
	const char *old = getenv("LD_PRELOAD");
	int fd;

	snprintf(num, sizeof(num), "%d", sock);
	snprintf(apid, sizeof(apid), "%d", (int)agent);
	if (fcntl(sock, F_SETFD, 0) != 0 ||
	    asprintf(&pre, "%s%s%s", A.shim, old ? ":" : "", old ? old : "") < 0 ||
	    setenv("LD_PRELOAD", pre, 1) || setenv("SNIC_QEMU_FD_SOCK", num, 1) ||
	    setenv("SNIC_QEMU_AGENT_PID", apid, 1))
		die("QEMU's environment");
	fd = open(A.qemu_err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		dup2(fd, 2);
	execvp(v[0], v);
	fprintf(stderr, "%s: cannot run %s: %s\n", PROG, v[0], strerror(errno));
	_exit(127);
}

/* A field ("PPid:", "TracerPid:") of /proc/<pid>/status, or -1. */
static long status_field(pid_t pid, const char *key)
{
	char path[40], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* QEMU's shim asks for the memfds (qemu_shim.c): one byte with a fresh
 * socket's end, sent by QEMU's child (its pid from the kernel,
 * SCM_CREDENTIALS: the stand-in's child, not traced).  Nothing is queued
 * on sock before, so whoever copied sock out of QEMU while it was still
 * dumpable (pidfd_getfd before the shim's prctl) finds no memfds there;
 * an asker that is not QEMU's child is ignored.  The fresh socket's end,
 * or -1 (QEMU ended or did not ask within a minute). */
static int qemu_asks(int sock, pid_t qemu)
{
	int64_t t0 = mono_ms();

	while (mono_ms() - t0 < 60000) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct ucred)) +
				 CMSG_SPACE(sizeof(int))];
		} u;
		char one;
		struct iovec iov = { .iov_base = &one, .iov_len = 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = u.buf,
				      .msg_controllen = sizeof(u.buf) };
		struct pollfd p = { .fd = sock, .events = POLLIN };
		struct ucred cr = { .pid = 0 };
		int fd = -1;
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0)
			continue;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
		     c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len == CMSG_LEN(sizeof(cr)))
				memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			if (c->cmsg_type == SCM_RIGHTS) {
				int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

				for (int i = 0; i < k; i++) {
					int g;

					memcpy(&g, CMSG_DATA(c) + i * sizeof(int), sizeof(g));
					if (fd < 0 && k == 1)
						fd = g;
					else
						close(g);
				}
			}
		}
		if (fd >= 0 && !(msg.msg_flags & MSG_CTRUNC) && cr.pid > 0 &&
		    cr.pid != qemu && status_field(cr.pid, "PPid:") == qemu &&
		    status_field(cr.pid, "TracerPid:") == 0)
			return fd;
		fprintf(stderr, "%s: a request for QEMU's memfds not from QEMU "
			"(pid %d): ignored\n", PROG, (int)cr.pid);
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* Our memfds to QEMU's shim, each with the number QEMU's command line
 * gives it (ours). */
static void send_qemu_fds(int sock)
{
	int fds[SNIC_MAX_CTX * 2 + 2];
	unsigned n = qemu_fds(fds);
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(fds))];
	} u;
	struct iovec iov = { .iov_base = fds, .iov_len = n * sizeof(int) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(n * sizeof(int)) };

	memset(&u, 0, sizeof(u));
	u.h.cmsg_level = SOL_SOCKET;
	u.h.cmsg_type = SCM_RIGHTS;
	u.h.cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(&u.h), fds, n * sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != (ssize_t)(n * sizeof(int)))
		die("memfds to QEMU");
}

/* The launcher's configuration lines, then fw_pid (QEMU's pid, that of
 * its stand-in, which lives as long as QEMU: the host driver knows the
 * NIC is gone when it is), at the control page's start, where the
 * firmware reads them. */
static void write_config(pid_t qemu)
{
	char *at = (char *)ctl();
	FILE *f = fopen(A.config, "re");
	size_t n = 0;
	int c;

	if (!f)
		die(A.config);
	while ((c = fgetc(f)) != EOF && n + 32 < QV_CTL_STOP_OFF)
		at[n++] = (char)c;
	fclose(f);
	snprintf(at + n, 32, "fw_pid=%d\n", (int)qemu);
}

/* "<our pid> <the firmware's state word>" for the launcher, which may
 * not read our memory (we are not dumpable): when the word changes. */
static void publish_state(void)
{
	char st[5] = { 0 }, tmp[512];
	FILE *f;

	memcpy(st, (const void *)(ctl() + QV_CTL_STATE_OFF), 4);
	for (int i = 0; i < 4; i++)
		if (st[i] < 'A' || st[i] > 'Z')
			st[i] = '\0';
	if (!strcmp(st, A.last_state) && A.last_state[0])
		return;
	memcpy(A.last_state, st, sizeof(st));
	snprintf(tmp, sizeof(tmp), "%s.tmp", A.state_file);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%d %s\n", (int)getpid(), st[0] ? st : "-");
	if (fclose(f) == 0)
		rename(tmp, A.state_file);
}

static volatile sig_atomic_t stop_fw;

/* SIGUSR1 from the launcher: ask the firmware to stop (it closes every
 * context and marks the BAR down), as the launcher once did itself. */
static void on_usr1(int sig)
{
	(void)sig;
	stop_fw = 1;
}

static void stop_firmware(void)
{
	if (!stop_fw)
		return;
	memcpy((void *)(ctl() + QV_CTL_STOP_OFF), "STOP", 4);
	stop_fw = 0;
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
		mref_watch(&A.slot_ref[s], A.slot_fd[s]);
	}
	A.stats_fd = sealed_memfd("snic-stats", SNIC_BAR_STATS_SIZE);
	A.rest_fd = sealed_memfd("snic-bar-rest", REST_LEN);
	for (unsigned k = 0; k < A.nseg; k++) {
		snprintf(what, sizeof(what), "snic-segment-%u", k);
		A.seg_fd[k] = sealed_memfd(what, A.seg_len);
		mref_watch(&A.seg_ref[k], A.seg_fd[k]);
	}
}

/* Our view of the control page: only in the agent's own address space
 * (made by fork after we were non-dumpable), never in the one a
 * /proc/<pid>/mem opened before our prctl would reach. */
static void map_rest(void)
{
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
	int i;

	A.users = SNIC_USERS_NONE;
	for (i = 1; i + 1 < argc && strcmp(argv[i], "--"); i += 2) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!strcmp(o, "--run-dir"))
			A.run_dir = v;
		else if (!strcmp(o, "--name"))
			A.name = v;
		else if (!strcmp(o, "--bar"))
			A.bar_path = v;
		else if (!strcmp(o, "--config"))
			A.config = v;
		else if (!strcmp(o, "--state"))
			A.state_file = v;
		else if (!strcmp(o, "--qemu-stderr"))
			A.qemu_err = v;
		else if (!strcmp(o, "--shim"))
			A.shim = v;
		else if (!strcmp(o, "--seg-base"))
			A.seg_base = num(o, v);
		else if (!strcmp(o, "--seg-len"))
			A.seg_len = num(o, v);
		else if (!strcmp(o, "--segments"))
			A.nseg = (unsigned)num(o, v);
		else if (!strcmp(o, "--users")) {
			if (snic_users_parse(PROG, v, &A.users) != 0)
				exit(2);
		}
		else {
			fprintf(stderr, "%s: unknown option %s\n", PROG, o);
			exit(2);
		}
	}
	if (i < argc && !strcmp(argv[i], "--"))
		A.qemu_argv = argv + i + 1;
	if (!A.run_dir || !A.name || !A.bar_path || !A.config ||
	    !A.state_file || !A.qemu_err || !A.shim || !A.seg_len || A.seg_len % 4096 ||
	    !A.nseg || A.nseg > SNIC_MAX_CTX || A.seg_base % 4096 ||
	    !A.qemu_argv || !A.qemu_argv[0]) {
		fprintf(stderr, "usage: %s --run-dir DIR --name NIC --bar FILE "
			"--config FILE --state FILE --qemu-stderr FILE --shim SO "
			"--seg-base PA --seg-len BYTES --segments N [--users "
			"GROUP|all] -- QEMU "
			"ARGS... (@BAR@, @SEGMENTS@: our memory; started by "
			"tools/snic-qemu)\n", PROG);
		exit(2);
	}
}

/* Until the firmware is up (1) or QEMU ends or we are told to stop (0). */
static int wait_up(void)
{
	while (!stop && !fw_state_is("UP")) {
		stop_firmware();
		publish_state();
		usleep(5000);
	}
	publish_state();
	return !stop;
}

/* A slot or segment handed out that another process opened or chmodded
 * (an O_PATH descriptor kept from an earlier hand-out makes no event
 * until then): whoever holds it now loses it at once (the firmware's
 * mailbox death, its socket closed); the memfd is retired, so what it
 * holds is never handed on.  This contains, it does not prevent. */
static void end_breached(void)
{
	for (unsigned s = 0; s < SNIC_MAX_CTX; s++)
		if (mref_breached(&A.slot_ref[s]))
			A.breached += cb_end_holders(0, (int)s, -1);
	for (unsigned k = 0; k < A.nseg; k++)
		if (mref_breached(&A.seg_ref[k]))
			A.breached += cb_end_holders(0, -1, (int)k);
}

static void serve(void)
{
	int fds[CB_MAX_NICS * (SNIC_MAX_CTX + 2) + 1];
	struct pollfd pfd[CB_MAX_NICS * (SNIC_MAX_CTX + 2) + 1];

	while (!stop) {
		unsigned n = cb_fds(fds, sizeof(fds) / sizeof(fds[0]) - 1);

		if (mrefs_fd() >= 0)
			fds[n++] = mrefs_fd();
		for (unsigned i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		/* a death is seen at once; the file's slot copies are put
		 * back within 10 ms, as the emu's broker does */
		poll(pfd, n, 10);
		mrefs_drain();
		end_breached();
		stop_firmware();
		cb_poll();
		publish_state();
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction su = { .sa_handler = on_usr1 };
	struct cb_nic nic;
	struct cb_config cfg;
	pid_t qemu, agent;
	int sp[2], fsock, one = 1;

	/* before any memfd exists: no other process of the user may open
	 * our descriptors through /proc/<us>/fd nor read our memory */
	if (prctl(PR_SET_DUMPABLE, 0) != 0)
		die("PR_SET_DUMPABLE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	make_memory();
	qemu = getpid();
	/* we become QEMU; our child carries on as the agent, and ends with
	 * QEMU (our sockets are removed) */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0 ||
	    setsockopt(sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
		die("socketpair");
	switch ((agent = fork())) {
	case -1:
		die("fork");
	case 0:
		break;
	default:
		close(sp[0]);
		exec_qemu(sp[1], agent);
	}
	close(sp[1]);
	/* the configuration before QEMU can run: it waits for the memfds */
	map_rest();
	write_config(qemu);
	if ((fsock = qemu_asks(sp[0], qemu)) < 0) {
		fprintf(stderr, "%s: QEMU did not ask for its memfds\n", PROG);
		return 1;
	}
	close(sp[0]);
	send_qemu_fds(fsock);
	close(fsock);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != qemu)
		return 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &su, NULL);
	signal(SIGPIPE, SIG_IGN);
	publish_state();
	if (!wait_up())
		return 0;
	/* QEMU has opened every memfd by now: from here on an open that is
	 * not ours retires the memfd (memfd_refs.h) */
	mrefs_start();
	nic = (struct cb_nic){ .name = A.name, .bar_fd = A.bar_fd,
			       .stats_fd = A.stats_fd,
			       .stats_len = SNIC_BAR_STATS_SIZE };
	cfg = (struct cb_config){ .prog = PROG, .run_dir = A.run_dir,
				  .nics = &nic, .nnics = 1, .ops = &qa_ops,
				  .seg_base = A.seg_base, .seg_len = A.seg_len,
				  .nseg = A.nseg, .users = A.users };
	if (cb_init(&cfg) != 0)
		return 1;
	printf("%s: %s: serving %s/%s.sock (%u segments of %" PRIu64 " MiB)\n",
	       PROG, A.name, A.run_dir, A.name, A.nseg, A.seg_len >> 20);
	serve();
	cb_fini();
	A.last_state[0] = '\0';
	publish_state();
	printf("%s: %s: %lu segments zeroed, %lu slots or segments held back "
	       "(a process still held them), %lu retired until QEMU restarts "
	       "(opened by another process%s), %lu contexts ended (their "
	       "slot or segment opened or chmodded by another process), "
	       "%lu mailbox requests unanswered\n", PROG, A.name,
	       A.segs_zeroed, A.held_back, mrefs_retired(), mrefs_lost() ?
	       "; inotify events were lost: every slot or segment used once "
	       "is retired" : "", A.breached, A.mbox_timeouts);
	return 0;
}
