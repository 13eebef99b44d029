/*
 * Hostile host processes against a victim on the same NIC (issue 10).
 * The victim's context comes from the emu's broker (its own BAR slot and
 * segment of host memory, hostif.h "Host isolation").  Attackers driving
 * the raw host interface: one maps the BAR file whole and rewrites every
 * context slot's state, owner pid and orphan flag, the BAR's fw_state,
 * and writes CTX_CLOSE / DESTROY_QP into every mailbox with its doorbell;
 * one gets its own context from the broker and registers, or points a
 * CQ or QP ring at, pages of every other segment and of the shared
 * window; one opens a context the old way (a slot of the BAR file, the
 * shared host-memory file) and does the same; another exhausts its quotas
 * of PDs, CQs and QPs; one rings the victim's QPs from the NIC's doorbell
 * page, from its own context's page and from the BAR file's copy of the
 * victim's (ignored, counted doorbells_foreign); one clears the NIC's
 * doorbell page (and fw_idle) again and again while the victim works; the
 * victim maps the BAR file's header page only; one reads the BAR file's
 * statistics area (empty: the QP table is the administrator's, through
 * the broker's admin socket); one opens contexts until refused (its
 * share, SNIC_BROKER_CTX_PER_PID, then ENOSPC) while the victim opens
 * another; one asks for every DM page (EACCES), reads and writes the BAR
 * file's DM area and keeps a freed DM page mapped while the victim takes
 * it; one truncates the BAR file and the shared host-memory file again
 * and again while the victim's WRITEs run (SIGBUS for whoever maps them,
 * without the guards).  After each, the victim's QPs are still RTS, an
 * RDMA WRITE between them lands byte for byte, its commands still work,
 * and the attacker got its error; the shared file's page allocator,
 * rewritten, crashes nobody.  What is not isolated yet is listed in
 * boards/emu/README.md.
 *
 * With SNIC_HOSTILE_BOARD=qemu (a QEMU NIC, whose host agent is the
 * broker, boards/qemu-virt/agent/): the same, but no context the old way
 * (the firmware reads no slot of the BAR file there: nobody could open
 * one), hence no allocator case either (its contexts are such); device
 * memory is refused to every context (EOPNOTSUPP: the agent maps no DM
 * page into processes), and a process that ended its context but keeps
 * its slot and segment (mapped; mapped and non-dumpable; their
 * descriptors in flight on a socket pair) sees neither handed to the next
 * process.
 *
 *   snic_hostile [--dev0 NAME] [-v]     (SNIC_RUN_DIR names the run dir)
 *   snic_hostile --stall-cmd NAME GO    opens NAME, says "open", waits for
 *                                       the file GO, then registers 8 MiB
 *                                       (commands through a stalled NIC:
 *                                       hostile.sh cmd-stall)
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snic/hostif.h"
#include "vt_common.h"

struct dev { int unused; };

static bool QEMU;       /* SNIC_HOSTILE_BOARD=qemu                      */

static struct vt V;
static struct vt_dev D;
static struct dev DD;
static struct vt_ep E[2];
static struct ibv_mr *MR;
static uint8_t *BUF;
enum { BUF_SIZE = 8192, HALF = 4096 };

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool victim_up(void)
{
	struct vt_qp_cfg c = { .type = IBV_QPT_RC, .send_wr = 8, .recv_wr = 8,
			       .send_sge = 1, .recv_sge = 1, .cqe = 16 };
	struct ibv_qp_attr a;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	BUF = aligned_alloc(4096, BUF_SIZE);
	if (!BUF || !(MR = ibv_reg_mr(D.pd, BUF, BUF_SIZE, acc)))
		return vt_fail(&V, "victim: reg_mr: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		if (!vt_ep_create(&V, &E[i], &DD, &D, &c, 100 + i) ||
		    vt_qp_init(E[i].qp, acc))
			return vt_fail(&V, "victim: QP %d: %s", i, V.why);
	for (int i = 0; i < 2; i++) {
		vt_rtr_attr(&V, &E[i], &E[1 - i], IBV_MTU_1024, 12, &a);
		if (ibv_modify_qp(E[i].qp, &a, VT_RTR_MASK))
			return vt_fail(&V, "victim: RTR");
	}
	for (int i = 0; i < 2; i++)
		if (vt_qp_rts(&E[i]))
			return vt_fail(&V, "victim: RTS");
	return true;
}

/* The victim still works: QPs in RTS, a WRITE lands, a command answers. */
static bool victim_ok(const char *after, unsigned round)
{
	struct ibv_sge sge = { (uintptr_t)BUF, HALF, MR->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	uint64_t end = vt_now_ns() + (uint64_t)V.timeout_ms * 1000000u;
	int n = 0;

	for (int i = 0; i < 2; i++)
		if (ibv_query_qp(E[i].qp, &qa, IBV_QP_STATE, &qi) ||
		    qa.qp_state != IBV_QPS_RTS)
			return vt_fail(&V, "after %s: victim QP %d not RTS", after, i);
	memset(BUF, (int)(0x40 + round), HALF);
	memset(BUF + HALF, 0, HALF);
	wr.wr.rdma.remote_addr = (uintptr_t)BUF + HALF;
	wr.wr.rdma.rkey = MR->rkey;
	if (ibv_post_send(E[0].qp, &wr, &bad))
		return vt_fail(&V, "after %s: victim post_send", after);
	while ((n = ibv_poll_cq(E[0].scq, 1, &wc)) == 0 && vt_now_ns() < end)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		return vt_fail(&V, "after %s: victim WRITE: %d completions, status %d",
			       after, n, n == 1 ? (int)wc.status : -1);
	if (memcmp(BUF, BUF + HALF, HALF))
		return vt_fail(&V, "after %s: victim WRITE data differ", after);
	if (!(pd = ibv_alloc_pd(D.ctx)))
		return vt_fail(&V, "after %s: victim alloc_pd: %s", after, strerror(errno));
	ibv_dealloc_pd(pd);
	return true;
}

/* Scribbles run in a child process: the attacker. */
enum scribble { SC_STATE_FREE, SC_OWNER_DEAD, SC_ORPHAN, SC_FW_DOWN, SC_MAILBOX,
		SC_HEADER, SC_COUNT };
static const char *const sc_name[] = {
	"slot state FREE", "owner pid of a dead process", "orphan flag", "fw_state DOWN",
	"commands in every mailbox", "the header's names and sizes",
};

static void ring_cmd(uint8_t *bar, unsigned slot)
{
	struct snic_doorbells *db = (void *)(bar + SNIC_BAR_DB_OFF);
	struct snic_bar_hdr *h = (void *)bar;

	atomic_fetch_or(&db->cmd_bits, 1ull << slot);
	atomic_fetch_or(&db->summary, SNIC_DB_SUMMARY_CMD);
	if (atomic_load(&h->fw_idle)) {
		atomic_fetch_add(&h->kick, 1);
		syscall(SYS_futex, &h->kick, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
}

/* A command written into every slot of the BAR file, for the victim's
 * QPs and context.  The victim's slot there is not the one the firmware
 * reads (its own memfd is): the attacker's commands are never answered. */
static void scribble_mailboxes(uint8_t *bar)
{
	uint32_t seq[SNIC_MAX_CTX];

	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (void *)(bar + SNIC_BAR_CTX_OFF +
						   i * SNIC_CTX_SLOT_SIZE);
		uint32_t op = i & 1 ? SNIC_CMD_CTX_CLOSE : SNIC_CMD_DESTROY_QP;

		s->cmd.opcode = (uint16_t)op;
		memcpy(s->cmd.in, &E[i & 2 ? 1 : 0].qp->qp_num, 4);
		seq[i] = atomic_load(&s->cmd_done) + 1;
		atomic_store(&s->cmd_seq, seq[i]);
		ring_cmd(bar, i);
	}
	sleep_ms(60);
	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (void *)(bar + SNIC_BAR_CTX_OFF +
						   i * SNIC_CTX_SLOT_SIZE);

		if (atomic_load(&s->state) != SNIC_CTX_FREE &&
		    atomic_load(&s->cmd_done) == seq[i])
			_exit(12); /* the firmware executed it */
	}
}

/* The BAR file, mapped whole as any process of the user can. */
static uint8_t *raw_bar(void)
{
	char path[512];
	const char *dir = getenv("SNIC_RUN_DIR");
	int fd, prot = PROT_READ | PROT_WRITE;
	void *bar;

	snprintf(path, sizeof path, "%s/%s.bar", dir && *dir ? dir : "/dev/shm/snic", D.name);
	fd = open(path, O_RDWR);
	if (fd < 0 && errno == EACCES) {        /* a member of a shared NIC's */
		fd = open(path, O_RDONLY);      /* group: its header to read  */
		prot = PROT_READ;
	}
	if (fd < 0)
		_exit(40);
	bar = mmap(NULL, SNIC_BAR_SIZE, prot, MAP_SHARED, fd, 0);
	close(fd);
	if (bar == MAP_FAILED)
		_exit(41);
	return bar;
}

static void attacker_scribble(enum scribble what)
{
	uint8_t *bar = raw_bar();

	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (void *)(bar + SNIC_BAR_CTX_OFF +
						   i * SNIC_CTX_SLOT_SIZE);

		if (atomic_load(&s->state) != SNIC_CTX_OPEN)
			continue;
		if (what == SC_STATE_FREE)
			atomic_store(&s->state, SNIC_CTX_FREE);
		else if (what == SC_OWNER_DEAD)
			atomic_store(&s->owner_pid, 0x3ffffffu); /* > pid_max */
		else if (what == SC_ORPHAN)
			atomic_store(&s->state, SNIC_CTX_ORPHAN);
	}
	if (what == SC_FW_DOWN)
		atomic_store(&((struct snic_bar_hdr *)bar)->fw_state, SNIC_FW_DOWN);
	if (what == SC_MAILBOX)
		scribble_mailboxes(bar);
	if (what == SC_HEADER) {        /* what device discovery reads */
		struct snic_bar_hdr *h = (void *)bar;

		strcpy(h->name, "evil0");
		strcpy(h->host_mem, "evil.mem");
		h->host_mem_size = 4096;
		h->max_ctx = 1;
	}
	_exit(0);
}

static bool run_child(void (*fn)(int), int arg, int *status)
{
	pid_t p = fork();

	if (p < 0)
		return vt_fail(&V, "fork: %s", strerror(errno));
	if (p == 0)
		fn(arg);
	return waitpid(p, status, 0) == p;
}

/* The BAR file's header says what the NIC's configuration does again
 * (the firmware's guard, every heartbeat). */
static bool header_intact(void)
{
	char path[512];
	const char *dir = getenv("SNIC_RUN_DIR");
	struct snic_bar_hdr h;
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "%s/%s.bar", dir && *dir ? dir : "/dev/shm/snic",
		 D.name);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : pread(fd, &h, sizeof h, 0);
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof h)
		return vt_fail(&V, "cannot read %s", path);
	if (strncmp(h.name, D.name, sizeof h.name) || strcmp(h.host_mem, "evil.mem") == 0 ||
	    h.host_mem_size == 4096 || h.max_ctx != SNIC_MAX_CTX)
		return vt_fail(&V, "the header still says name '%.16s', host memory "
			       "'%.64s' (%llu bytes), max_ctx %u", h.name, h.host_mem,
			       (unsigned long long)h.host_mem_size, h.max_ctx);
	return true;
}

static void scribble_child(int what) { attacker_scribble((enum scribble)what); }

static bool c_scribbles(void)
{
	for (int w = 0; w < SC_COUNT; w++) {
		int st = 0;

		if (!run_child(scribble_child, w, &st) || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return vt_fail(&V, "attacker (%s) failed: status %d", sc_name[w], st);
		/* the firmware guard and the emu's housekeeping run every 10 ms */
		sleep_ms(60);
		if (!victim_ok(sc_name[w], (unsigned)w))
			return false;
		if (w == SC_HEADER && !header_intact())
			return false;
		vt_log(&V, "%s: victim unaffected", sc_name[w]);
	}
	return true;
}

/* The window's page allocator (host-driver/memory/hostmem.c) lives in the
 * shared file: the attacker rewrites its layout offsets and plants an
 * extent of a dead process far outside the window.  The victim's next
 * context open reaps dead extents: it must neither crash nor lose its own
 * pages. */
static void allocator_child(int unused)
{
	char path[512];
	const char *dir = getenv("SNIC_RUN_DIR");
	struct { uint64_t magic; uint32_t version, npages, meta_pages, max_ext,
		 bitmap_off, ext_off; } *m;
	uint32_t *ext;
	uint8_t *base;
	int fd;

	(void)unused;
	dir = dir && *dir ? dir : "/dev/shm/snic";
	snprintf(path, sizeof path, "%s/%s.bar", dir, D.name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		_exit(30);
	struct snic_bar_hdr *h = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	if (h == MAP_FAILED)
		_exit(31);
	snprintf(path, sizeof path, "%s/%s", dir, h->host_mem);
	fd = open(path, O_RDWR);
	if (fd < 0)
		_exit(32);
	base = mmap(NULL, 1u << 24, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		_exit(33);
	m = (void *)base;
	if (m->ext_off == 0 || m->max_ext == 0 ||
	    m->ext_off + (uint64_t)m->max_ext * 16 > (1u << 24))
		_exit(34);
	ext = (uint32_t *)(base + m->ext_off) + (m->max_ext - 1) * 4;
	ext[0] = 0xfffffff0u;     /* first page: far outside */
	ext[1] = 0x100000u;       /* npages */
	ext[2] = 0x3ffffffu;      /* a pid that cannot exist */
	m->bitmap_off = 0x7ffffff0u;
	m->ext_off = 0x7ffffff0u;
	_exit(0);
}

static struct ibv_context *open_named(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), D.name))
			c = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	return c;
}

/* The allocator is that of contexts opened without the broker (the
 * shared file); the victim's pages are in its own segment. */
static bool c_allocator(void)
{
	struct ibv_context *c1, *c2 = NULL;
	struct ibv_cq *cq;
	int st = 0;

	setenv("SNIC_NO_BROKER", "1", 1);
	c1 = open_named(); /* the allocator initialised */
	if (!c1 || !run_child(allocator_child, 0, &st) || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		if (c1)
			ibv_close_device(c1);
		unsetenv("SNIC_NO_BROKER");
		return vt_fail(&V, "allocator attacker failed: status %d", st);
	}
	c2 = open_named();
	ibv_close_device(c1);
	unsetenv("SNIC_NO_BROKER");
	if (!c2)
		return vt_fail(&V, "open after the allocator was rewritten: %s", strerror(errno));
	cq = ibv_create_cq(c2, 64, NULL, NULL, 0);
	if (!cq) {
		ibv_close_device(c2);
		return vt_fail(&V, "create_cq after the allocator was rewritten: %s",
			       strerror(errno));
	}
	ibv_destroy_cq(cq);
	ibv_close_device(c2);
	return victim_ok("the page allocator rewritten", 9);
}

/* Raw contexts, driven through their mailbox without the host driver. */
struct raw {
	uint8_t *bar;           /* the BAR file, mapped whole               */
	struct snic_ctx_slot *slot;
	unsigned idx;
	uint32_t seq;
	uint8_t *mem;           /* pa mem_pa.. of host memory, mem_len bytes */
	uint64_t mem_pa, mem_len;
	uint64_t shared_size;   /* the shared host-memory file's size       */
	uint64_t seg_stride;    /* the broker's segment size                */
	int sock;               /* the broker's socket (broker's contexts)  */
	int fds[2];             /* its slot's and segment's descriptors     */
};

static int raw_cmd(struct raw *r, uint16_t op, const void *in, size_t len,
		   void *out, size_t olen)
{
	memset(r->slot->cmd.in, 0, sizeof(r->slot->cmd.in));
	if (len)
		memcpy(r->slot->cmd.in, in, len);
	r->slot->cmd.opcode = op;
	atomic_store(&r->slot->cmd_seq, ++r->seq);
	ring_cmd(r->bar, r->idx);
	for (int i = 0; i < 5000; i++) {
		if (atomic_load(&r->slot->cmd_done) == r->seq) {
			if (out)
				memcpy(out, r->slot->cmd.out, olen);
			return (int)r->slot->cmd.status;
		}
		sleep_ms(1);
	}
	return -1;
}

/* A context from the broker, as its protocol says (hostif.h). */
static void raw_from_broker(struct raw *r)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *dir = getenv("SNIC_RUN_DIR");
	struct snic_iso_ctx m;
	union { struct cmsghdr h; char buf[CMSG_SPACE(2 * sizeof(int))]; } u;
	struct iovec iov = { &m, sizeof m };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), fds[2];
	uint8_t *at;

	snprintf(a.sun_path, sizeof a.sun_path, "%s/%s.sock",
		 dir && *dir ? dir : "/dev/shm/snic", D.name);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) ||
	    recvmsg(fd, &msg, 0) != (ssize_t)sizeof m || m.op != SNIC_ISO_CTX_GRANT ||
	    !CMSG_FIRSTHDR(&msg))
		_exit(42);
	memcpy(fds, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof fds);
	memcpy(r->fds, fds, sizeof fds);
	r->bar = raw_bar();
	r->idx = m.slot;
	at = r->bar + SNIC_BAR_CTX_OFF + (size_t)m.slot * SNIC_CTX_SLOT_SIZE;
	if (mmap(at, SNIC_CTX_SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fds[0], 0) == MAP_FAILED)
		_exit(43);
	r->slot = (void *)at;
	r->mem = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	if (r->mem == MAP_FAILED)
		_exit(44);
	r->mem_pa = m.seg_pa;
	r->mem_len = m.seg_len;
	r->seg_stride = m.seg_len;
	r->shared_size = ((struct snic_bar_hdr *)r->bar)->host_mem_size;
	r->seq = atomic_load(&r->slot->cmd_done);
	r->sock = fd;   /* stays open: the context lives until we exit */
}

/* A context the old way: a FREE slot of the BAR file, CTX_OPEN, the shared
 * host-memory file (its last MiB as our scratch pages). */
static void raw_shared(struct raw *r)
{
	char path[512];
	const char *dir = getenv("SNIC_RUN_DIR");
	struct snic_cmd_ctx_open o = { .pid = (uint32_t)getpid() };
	int fd, n;

	r->bar = raw_bar();
	r->shared_size = ((struct snic_bar_hdr *)r->bar)->host_mem_size;
	r->seg_stride = r->shared_size; /* the emu's: as large as the window */
	for (r->idx = 0; r->idx < SNIC_MAX_CTX; r->idx++) {
		uint32_t free_st = SNIC_CTX_FREE;

		r->slot = (void *)(r->bar + SNIC_BAR_CTX_OFF + r->idx * SNIC_CTX_SLOT_SIZE);
		if (atomic_compare_exchange_strong(&r->slot->state, &free_st,
						   SNIC_CTX_CLAIMED))
			break;
	}
	if (r->idx == SNIC_MAX_CTX)
		_exit(45);
	atomic_store(&r->slot->owner_pid, o.pid);
	r->seq = atomic_load(&r->slot->cmd_done);
	n = raw_cmd(r, SNIC_CMD_CTX_OPEN, &o, sizeof o, NULL, 0);
	if (n != SNIC_ST_OK) {
		fprintf(stderr, "shared-file context: CTX_OPEN on slot %u: "
			"status %d\n", r->idx, n);
		_exit(46);
	}
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/dev/shm/snic",
		 ((struct snic_bar_hdr *)r->bar)->host_mem);
	fd = open(path, O_RDWR);
	r->mem_len = 1u << 20;
	r->mem_pa = r->shared_size - r->mem_len;
	r->mem = fd < 0 ? MAP_FAILED : mmap(NULL, r->mem_len, PROT_READ | PROT_WRITE,
					    MAP_SHARED, fd, (off_t)r->mem_pa);
	if (r->mem == MAP_FAILED)
		_exit(47);
}

static int reg_page(struct raw *r, uint32_t pdn, uint64_t list_pa, uint64_t page_pa)
{
	struct snic_cmd_reg_mr in = { .pdn = pdn, .access = IBV_ACCESS_LOCAL_WRITE,
				      .length = 4096, .pages_pa = list_pa, .npages = 1 };
	struct snic_cmd_handle h;
	uint32_t page = (uint32_t)(page_pa >> 12);

	if (list_pa >= r->mem_pa && list_pa - r->mem_pa < r->mem_len)
		memcpy(r->mem + (list_pa - r->mem_pa), &page, 4);
	return raw_cmd(r, SNIC_CMD_REG_MR, &in, sizeof in, &h, sizeof h);
}

static int cq_at(struct raw *r, uint64_t ring_pa, uint64_t dbrec_pa, uint32_t *cqn)
{
	struct snic_cmd_create_cq in = { .ring_pa = ring_pa, .dbrec_pa = dbrec_pa,
					 .cqe_cnt = 64 };
	struct snic_cmd_handle h = { 0 };
	int st = raw_cmd(r, SNIC_CMD_CREATE_CQ, &in, sizeof in, &h, sizeof h);

	*cqn = h.handle;
	return st;
}

/* Every page that is not r's: the first page of every other segment a
 * broker can hand out (the victim's among them) and, for a broker's
 * context, a page of the shared window. */
static int foreign_pages(const struct raw *r, uint64_t *pa, int max)
{
	int n = 0;

	for (uint64_t k = 0; k < SNIC_MAX_CTX && n < max; k++) {
		uint64_t p = r->shared_size + k * r->seg_stride;

		if (p != r->mem_pa)
			pa[n++] = p;
	}
	if (r->mem_pa >= r->shared_size && n < max)
		pa[n++] = r->shared_size / 2;
	return n;
}

/* The attacker registers, and points a CQ and a QP's rings at, pages that
 * are not its own; each must be refused with FAULT while the same command
 * on its own pages succeeds.  Exit 0, or the step that went wrong. */
static void pages_attacker(int via_broker)
{
	struct raw r = { 0 };
	uint64_t own = 0, pa[SNIC_MAX_CTX + 1];
	struct snic_cmd_handle h = { 0 };
	uint32_t cqn;
	int n;

	if (via_broker)
		raw_from_broker(&r);
	else
		raw_shared(&r);
	own = r.mem_pa;
	n = foreign_pages(&r, pa, SNIC_MAX_CTX + 1);
	if (raw_cmd(&r, SNIC_CMD_ALLOC_PD, NULL, 0, &h, sizeof h) != SNIC_ST_OK)
		_exit(50);
	if (reg_page(&r, h.handle, own, own + 4096) != SNIC_ST_OK)
		_exit(51);      /* its own pages: fine */
	for (int i = 0; i < n; i++) {
		if (reg_page(&r, h.handle, own, pa[i]) != SNIC_ST_FAULT)
			_exit(52); /* another's page registered */
		if (reg_page(&r, h.handle, pa[i], own + 4096) != SNIC_ST_FAULT)
			_exit(53); /* a page list read from another's pages */
		if (cq_at(&r, pa[i], own + 8192, &cqn) != SNIC_ST_FAULT ||
		    cq_at(&r, own + 3 * 4096, pa[i], &cqn) != SNIC_ST_FAULT)
			_exit(54); /* a CQ ring or record in another's pages */
	}
	if (cq_at(&r, own + 3 * 4096, own + 8192, &cqn) != SNIC_ST_OK)
		_exit(55);
	for (int i = 0; i < n; i++) {
		struct snic_cmd_create_qp q = { .pdn = h.handle, .qp_type = IBV_QPT_RC,
			.send_cqn = cqn, .recv_cqn = cqn, .sq_wqe_cnt = 16,
			.sq_stride_log = 7, .rq_wqe_cnt = 16, .rq_stride_log = 6,
			.sq_pa = pa[i], .rq_pa = own + 5 * 4096, .dbrec_pa = own + 7 * 4096,
			.max_send_sge = 1, .max_recv_sge = 1 };
		struct snic_cmd_handle qh;

		if (raw_cmd(&r, SNIC_CMD_CREATE_QP, &q, sizeof q, &qh, sizeof qh) !=
		    SNIC_ST_FAULT)
			_exit(56); /* an SQ in another's pages */
		q.sq_pa = own + 9 * 4096;
		q.dbrec_pa = pa[i];
		if (raw_cmd(&r, SNIC_CMD_CREATE_QP, &q, sizeof q, &qh, sizeof qh) !=
		    SNIC_ST_FAULT)
			_exit(57); /* a doorbell record in another's pages */
	}
	if (!via_broker) {
		raw_cmd(&r, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0);
		atomic_store(&r.slot->owner_pid, 0);
		atomic_store(&r.slot->state, SNIC_CTX_FREE);
	}
	_exit(0);
}

static bool c_pages(void)
{
	static const char *const how[] = { "a shared-file context", "a broker's context" };

	for (int b = QEMU ? 1 : 0; b < 2; b++) {
		int st = 0;

		if (!run_child(pages_attacker, b, &st) || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return vt_fail(&V, "%s naming others' pages: status %d (exit %d)",
				       how[b], st, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		sleep_ms(30);
		if (!victim_ok(how[b], 10 + (unsigned)b))
			return false;
		vt_log(&V, "%s registering / pointing rings at others' pages: FAULT, "
		       "victim unaffected", how[b]);
	}
	return true;
}

/* The pool attacker: its own context, every quota exhausted, ENOMEM at the
 * limit its ibv_query_device reported; then it waits while the victim
 * works.  Exit status 0 when each pool refused with ENOMEM at its max. */
static int PIPE_GO[2], PIPE_DONE[2];

/* Fork the attacker fn; true once it says go (its pid in *p), false with
 * the test failed when it ended first. */
static bool attacker_go(void (*fn)(int), pid_t *p, const char *who)
{
	char c = 0;
	int st = 0;

	if (pipe(PIPE_GO) || pipe(PIPE_DONE))
		return vt_fail(&V, "pipe");
	*p = fork();
	if (*p == 0)
		fn(0);
	if (*p < 0)
		return vt_fail(&V, "fork");
	if (read(PIPE_GO[0], &c, 1) != 1) {
		waitpid(*p, &st, 0);
		return vt_fail(&V, "%s ended early, status %d", who, st);
	}
	return true;
}

/* Let the attacker go on and wait for its end: its wait status, or -1
 * with the test failed. */
static int attacker_done(pid_t p)
{
	char c = 0;
	int st = 0, ok = write(PIPE_DONE[1], &c, 1) == 1;

	waitpid(p, &st, 0);
	for (int i = 0; i < 2; i++) {
		close(PIPE_GO[i]);
		close(PIPE_DONE[i]);
	}
	return ok ? st : (vt_fail(&V, "pipe write"), -1);
}

/* Objects of kind (PD, CQ, QP) until refused: how many, or -1 when the
 * refusal was not ENOMEM; said on stderr unless it came after `want`. */
static int fill(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
		int kind, int max, int want)
{
	int n = 0;

	for (; n <= max + 4; n++) {
		void *o;

		if (kind == 0) {
			o = ibv_alloc_pd(ctx);
		} else if (kind == 1) {
			o = ibv_create_cq(ctx, 1, NULL, NULL, 0);
		} else {
			struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
						       .qp_type = IBV_QPT_RC,
						       .cap = { 1, 1, 1, 1, 0 } };

			o = ibv_create_qp(pd, &ia);
		}
		if (!o) {
			if (errno != ENOMEM || n != want)
				fprintf(stderr, "pool attacker: %s %d of %d, then %s\n",
					kind == 0 ? "PD" : kind == 1 ? "CQ" : "QP",
					n, max, strerror(errno));
			return errno == ENOMEM ? n : -1;
		}
	}
	return -2;
}

static void pool_child(int unused)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr a;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char c = 0;
	int rc = 0;

	(void)unused;
	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), D.name))
			ctx = ibv_open_device(l[i]);
	if (!ctx || ibv_query_device(ctx, &a) || !(pd = ibv_alloc_pd(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 1, NULL, NULL, 0)))
		_exit(20);
	/* held: one PD and one CQ already */
	if (fill(ctx, pd, cq, 0, a.max_pd, a.max_pd - 1) != a.max_pd - 1)
		rc = 21;
	else if (fill(ctx, pd, cq, 1, a.max_cq, a.max_cq - 1) != a.max_cq - 1)
		rc = 22;
	else if (fill(ctx, pd, cq, 2, a.max_qp, a.max_qp) != a.max_qp)
		rc = 23;
	if (write(PIPE_GO[1], &c, 1) != 1 || read(PIPE_DONE[0], &c, 1) != 1)
		rc = 24;
	_exit(rc); /* the process dies holding everything: the board reclaims */
}

static bool c_pools(void)
{
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	pid_t p;
	int st;
	bool ok;

	if (!attacker_go(pool_child, &p, "pool attacker"))
		return false;
	ok = victim_ok("pools exhausted by another context", 7);
	cq = ok ? ibv_create_cq(D.ctx, 4, NULL, NULL, 0) : NULL;
	pd = cq ? ibv_alloc_pd(D.ctx) : NULL;
	if (ok && (!cq || !pd))
		ok = vt_fail(&V, "victim create_cq/alloc_pd with pools exhausted: %s",
			     strerror(errno));
	if (pd)
		ibv_dealloc_pd(pd);
	if (cq)
		ibv_destroy_cq(cq);
	st = attacker_done(p);
	if (ok && st >= 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		ok = vt_fail(&V, "pool attacker: status %d (21 PD, 22 CQ, 23 QP: not "
			     "ENOMEM at the quota it was told)", st);
	sleep_ms(60);
	return ok && victim_ok("the pool attacker died", 8);
}

/* ---------------------------------------------------------------------- */
/* Isolation part 2: doorbells, statistics, slots (hostif.h "Doorbells",
 * "Host isolation"). */

/* The broker's statistics (the admin socket; this test runs as the run
 * directory's owner), a fresh publication; NULL on failure. */
static struct snic_stats *admin_stats(void)
{
	static struct snic_stats *st;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *dir = getenv("SNIC_RUN_DIR");
	struct snic_iso_ctx m;
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { &m, sizeof m };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	int fd, sfd;
	uint32_t want;

	if (!st) {
		snprintf(a.sun_path, sizeof a.sun_path, "%s/%s.admin.sock",
			 dir && *dir ? dir : "/dev/shm/snic", D.name);
		fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) ||
		    recvmsg(fd, &msg, 0) != (ssize_t)sizeof m ||
		    m.op != SNIC_ISO_ADMIN_STATS || !CMSG_FIRSTHDR(&msg)) {
			vt_fail(&V, "admin socket %s: %s", a.sun_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		close(fd);
		memcpy(&sfd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof sfd);
		st = mmap(NULL, sizeof *st, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
		close(sfd);
		if (st == MAP_FAILED) {
			st = NULL;
			vt_fail(&V, "admin statistics: mmap: %s", strerror(errno));
			return NULL;
		}
	}
	want = atomic_fetch_add(&st->pub_req, 1) + 1;
	for (int i = 0; i < 5000 && atomic_load(&st->pub_done) != want; i++)
		sleep_ms(1);
	if (atomic_load(&st->pub_done) != want) {
		vt_fail(&V, "admin statistics: no publication");
		return NULL;
	}
	return st;
}

static uint64_t counter(const struct snic_stats *st, const char *name)
{
	for (uint32_t i = 0; i < st->ncnt && i < SNIC_STATS_MAX_CNT; i++)
		if (!strncmp(st->cnt_name[i], name, SNIC_STATS_NAME_LEN))
			return st->cnt[i];
	return UINT64_MAX;
}

/* The victim's context slot: an OPEN slot of the BAR file's copy owned by
 * the parent (the broker keeps the copy's owner pid). */
static int victim_slot(uint8_t *bar)
{
	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (void *)(bar + SNIC_BAR_CTX_OFF +
						   i * SNIC_CTX_SLOT_SIZE);

		if (atomic_load(&s->state) == SNIC_CTX_OPEN &&
		    atomic_load(&s->owner_pid) == (uint32_t)getppid())
			return (int)i;
	}
	return -1;
}

/* The doorbell attacker: with its own broker's context, it rings the
 * victim's QPs through the NIC page's QP bitmap, through its own context
 * page, and through the BAR file's copy of the victim's page (with the
 * victim's ctx_bits bit). */
#define DB_ROUNDS 4
/* Until the firmware took QP i's bit (its pass consumed the ring), at
 * most 2 s: each ring then counts in a pass of its own, however slowly
 * the NIC polls (QEMU under load merged rings 3 ms apart, 6 of 8). */
static void wait_taken(_Atomic uint64_t *qp_bits, uint32_t i)
{
	for (int t = 0; t < 2000 &&
	     (atomic_load(&qp_bits[i / 64]) & (1ull << (i % 64))); t++)
		sleep_ms(1);
}

static void doorbell_attacker(int unused)
{
	struct raw r = { 0 };
	struct snic_doorbells *db;
	struct snic_ctx_doorbells *own, *theirs;
	int vs;

	(void)unused;
	raw_from_broker(&r);
	db = (void *)(r.bar + SNIC_BAR_DB_OFF);
	own = (void *)((uint8_t *)r.slot + SNIC_CTX_DB_OFF);
	if ((vs = victim_slot(r.bar)) < 0)
		_exit(60);
	theirs = (void *)(r.bar + SNIC_BAR_CTX_OFF + (size_t)vs * SNIC_CTX_SLOT_SIZE +
			  SNIC_CTX_DB_OFF);
	for (int k = 0; k < DB_ROUNDS; k++)
		for (int q = 0; q < 2; q++) {
			uint32_t i = SNIC_QPN_IDX(E[q].qp->qp_num);
			/* the core the firmware takes QP i's bit on */
			uint32_t c = snic_db_core(i, atomic_load(&r.slot->db_cores));

			snic_db_ring_qp(db, i);
			wait_taken(db->qp_bits, i);
			snic_db_ring_ctx(db, own, r.idx, i, c);
			wait_taken(own->qp_bits, i);
			snic_db_ring_ctx(db, theirs, (uint32_t)vs, i, c);
			sleep_ms(3);
		}
	_exit(0);
}

static bool c_doorbells(void)
{
	struct snic_stats *st = admin_stats();
	uint64_t before, after;
	int status = 0;

	if (!st)
		return false;
	before = counter(st, "doorbells_foreign");
	if (before == UINT64_MAX)
		return vt_fail(&V, "no counter doorbells_foreign");
	if (!run_child(doorbell_attacker, 0, &status) || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return vt_fail(&V, "doorbell attacker: status %d", status);
	if (!(st = admin_stats()))
		return false;
	after = counter(st, "doorbells_foreign");
	/* NIC page and own page: each ring ignored and counted (each waited
	 * for until taken; >= one per round and page leaves room for a ring
	 * the firmware took in a pass with the previous one); the file's copy of the victim's page is
	 * nobody's: not even looked at */
	if (after - before < 2 * DB_ROUNDS)
		return vt_fail(&V, "doorbells_foreign went %llu -> %llu, want >= +%d",
			       (unsigned long long)before,
			       (unsigned long long)after, 2 * DB_ROUNDS);
	vt_log(&V, "victim's QPs rung from the NIC page, the attacker's page and "
	       "the file's copy of the victim's: %llu foreign doorbells ignored",
	       (unsigned long long)(after - before));
	return victim_ok("another context's QPs rung", 12);
}

/* The victim's WRITEs (each to complete in time), and every cmd_every-th
 * time a command, for as long as the attacker child(400) runs.  false
 * (said why) on a failure. */
static bool writes_during(void (*child)(int), const char *what,
			  unsigned cmd_every, unsigned *writes, unsigned *cmds)
{
	struct ibv_sge sge = { (uintptr_t)BUF, HALF, MR->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int st = 0, n;
	pid_t p = fork();

	*writes = *cmds = 0;
	if (p < 0)
		return vt_fail(&V, "fork: %s", strerror(errno));
	if (p == 0)
		child(400);
	wr.wr.rdma.remote_addr = (uintptr_t)BUF + HALF;
	wr.wr.rdma.rkey = MR->rkey;
	while (waitpid(p, &st, WNOHANG) == 0) {
		struct ibv_wc wc;
		struct ibv_pd *pd;
		uint64_t end = vt_now_ns() + (uint64_t)V.timeout_ms * 1000000u;

		if (ibv_post_send(E[0].qp, &wr, &bad))
			return vt_fail(&V, "%s: victim post_send failed", what);
		while ((n = ibv_poll_cq(E[0].scq, 1, &wc)) == 0 && vt_now_ns() < end)
			;
		if (n != 1 || wc.status != IBV_WC_SUCCESS)
			return vt_fail(&V, "%s: victim WRITE %u: %d completions, "
				       "status %d", what, *writes, n,
				       n == 1 ? (int)wc.status : -1);
		if (++*writes % cmd_every)
			continue;
		if (!(pd = ibv_alloc_pd(D.ctx)))
			return vt_fail(&V, "%s: victim alloc_pd: %s", what,
				       strerror(errno));
		ibv_dealloc_pd(pd);
		++*cmds;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return vt_fail(&V, "%s: the attacker failed: status %d", what, st);
	return true;
}

/* The NIC's doorbell page is every process's to write: the attacker
 * clears its summary, command and context-page bits (and fw_idle, so
 * nobody kicks) as fast as it can for 400 ms while the victim posts
 * WRITEs and issues commands.  The firmware looks at a broker's context's
 * own page and mailbox every pass, so nothing is lost or held up. */
static void db_clear_child(int ms)
{
	uint8_t *bar = raw_bar();
	struct snic_doorbells *db = (void *)(bar + SNIC_BAR_DB_OFF);
	struct snic_bar_hdr *h = (void *)bar;
	uint64_t end = vt_now_ns() + (uint64_t)ms * 1000000u;

	while (vt_now_ns() < end) {
		atomic_store(&db->summary, 0);
		atomic_store(&db->cmd_bits, 0);
		atomic_store(&db->ctx_bits, 0);
		atomic_store(&h->fw_idle, 0);
	}
	_exit(0);
}

static bool c_db_clear(void)
{
	unsigned writes, cmds;

	if (!writes_during(db_clear_child, "doorbells cleared", 8, &writes, &cmds))
		return false;
	vt_log(&V, "NIC doorbell page cleared for 400 ms: %u victim WRITEs and %u "
	       "commands went through", writes, cmds);
	return victim_ok("the NIC's doorbell page cleared", 17);
}

/* What the victim maps of the BAR file: its header page only (its slot
 * and doorbell page are the broker's memfd; the NIC's doorbell page, other
 * slots, statistics and DM are not mapped). */
static bool c_maps(void)
{
	char path[512], line[1024];
	const char *dir = getenv("SNIC_RUN_DIR");
	unsigned long lo, hi, off, ino, bytes = 0;
	struct stat sb;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s.bar", dir && *dir ? dir : "/dev/shm/snic",
		 D.name);
	if (stat(path, &sb) != 0 || !(f = fopen("/proc/self/maps", "r")))
		return vt_fail(&V, "maps: %s", strerror(errno));
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx %*s %lx %*s %lu", &lo, &hi, &off, &ino) == 4 &&
		    ino == (unsigned long)sb.st_ino)
			bytes += hi - lo;
	fclose(f);
	if (bytes != SNIC_PAGE_SIZE)
		return vt_fail(&V, "the victim maps %lu bytes of the BAR file, want "
			       "its header page (%u) only", bytes, SNIC_PAGE_SIZE);
	return true;
}

/* The statistics attacker: the BAR file's statistics area must hold
 * nothing (no QP, no counter, no publication) while the victim's QPs are
 * connected; its own broker context's slot holds no statistics either. */
static void stats_attacker(int unused)
{
	uint8_t *bar = raw_bar();
	const struct snic_stats *st = (const void *)(bar + SNIC_BAR_STATS_OFF);

	(void)unused;
	static const uint8_t zero[16];

	for (uint32_t i = 0; i < SNIC_MAX_QP; i++)
		if (st->qp[i].valid || st->qp[i].qpn || st->qp[i].sq_psn ||
		    memcmp(st->qp[i].peer, zero, sizeof(zero)) != 0)
			_exit(70);
	if (st->updates || st->ncnt || st->cm_nconn || st->cm_nlisten)
		_exit(71);
	_exit(0);
}

static bool c_stats(void)
{
	struct snic_stats *st = admin_stats();
	uint32_t i = SNIC_QPN_IDX(E[0].qp->qp_num);
	int status = 0;

	if (!st)
		return false;
	/* the administrator's view has the victim's QP ... */
	if (!st->qp[i].valid || st->qp[i].qpn != E[0].qp->qp_num ||
	    st->qp[i].state != IBV_QPS_RTS)
		return vt_fail(&V, "admin statistics lack the victim's QP %u",
			       E[0].qp->qp_num);
	/* ... another process mapping the BAR file sees none of it */
	if (!run_child(stats_attacker, 0, &status) || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return vt_fail(&V, "statistics attacker: status %d (70: a QP entry, "
			       "71: counters in the BAR file)", status);
	vt_log(&V, "the BAR file's statistics area is empty; the admin socket "
	       "shows QP %u RTS", E[0].qp->qp_num);
	return victim_ok("the statistics area read", 13);
}

/* The slot attacker: contexts until refused; exactly its share, then
 * ENOSPC; holds them until the victim has opened one of its own. */
static void share_child(int unused)
{
	struct ibv_context *c[SNIC_MAX_CTX];
	int n = 0, err = 0;
	char b = 0;

	(void)unused;
	while (n < SNIC_MAX_CTX && (c[n] = open_named()) != NULL)
		n++;
	err = errno;
	if (write(PIPE_GO[1], &b, 1) != 1 || read(PIPE_DONE[0], &b, 1) != 1)
		_exit(80);
	for (int i = 0; i < n; i++)
		ibv_close_device(c[i]);
	if (n != SNIC_BROKER_CTX_PER_PID)
		_exit(81);
	_exit(err == ENOSPC ? 0 : 82);
}

static bool c_share(void)
{
	struct ibv_context *mine;
	struct ibv_pd *pd = NULL;
	pid_t p;
	int st;
	bool ok = true;

	if (!attacker_go(share_child, &p, "slot attacker"))
		return false;
	mine = open_named();
	if (!mine || !(pd = ibv_alloc_pd(mine)))
		ok = vt_fail(&V, "victim's new context while another process holds "
			     "its share: %s", strerror(errno));
	if (pd)
		ibv_dealloc_pd(pd);
	if (mine)
		ibv_close_device(mine);
	st = attacker_done(p);
	if (ok && st >= 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		ok = vt_fail(&V, "slot attacker: status %d (81: not exactly %u "
			     "contexts, 82: not ENOSPC)", st, SNIC_BROKER_CTX_PER_PID);
	vt_log(&V, "a process got %u contexts, then ENOSPC; the victim opened one",
	       SNIC_BROKER_CTX_PER_PID);
	return ok && victim_ok("another process took its share of slots", 14);
}

/* Device memory (hostif.h SNIC_ISO_DM_MAP): a raw request for the DM
 * pages at [off, off + len); the status (0: granted, first page's
 * descriptor in *fd) or the refusal's errno. */
static int raw_dm_map(struct raw *r, uint64_t off, uint64_t len, int *fd)
{
	struct snic_iso_ctx q = { .op = SNIC_ISO_DM_MAP, .seg_pa = off,
				  .seg_len = len }, m;
	union { struct cmsghdr h; char buf[CMSG_SPACE(16 * sizeof(int))]; } u;
	struct iovec iov = { &m, sizeof m };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof u.buf };

	*fd = -1;
	if (send(r->sock, &q, sizeof q, 0) != sizeof q ||
	    recvmsg(r->sock, &msg, 0) != (ssize_t)sizeof m)
		return -1;
	if (m.op == SNIC_ISO_CTX_REFUSED)
		return (int)m.status;
	if (m.op != SNIC_ISO_DM_PAGES || !CMSG_FIRSTHDR(&msg))
		return -1;
	memcpy(fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof *fd);
	return 0;
}

static void dm_pattern(uint8_t *b, unsigned seed)
{
	for (unsigned i = 0; i < 4096; i++)
		b[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* The DM attacker: asks the broker for every DM page (none is its own:
 * EACCES), reads and overwrites the BAR file's DM area, then keeps a
 * mapping of a DM page it frees and looks there after the victim has
 * taken that page (the broker cut it first: nothing of the victim's). */
static void dm_attacker(int unused)
{
	struct raw r = { 0 };
	struct snic_cmd_alloc_dm a = { .length = 4096 };
	struct snic_cmd_alloc_dm_out out;
	struct snic_cmd_handle h;
	uint8_t want[4096], *file_dm, *stale;
	char b = 0;
	int fd;

	(void)unused;
	raw_from_broker(&r);
	for (unsigned p = 0; p < SNIC_DM_SIZE / 4096; p++)
		if (raw_dm_map(&r, p * 4096ull, 4096, &fd) != EACCES)
			_exit(90);
	file_dm = r.bar + SNIC_BAR_DM_OFF;
	dm_pattern(want, 1);
	for (unsigned p = 0; p < SNIC_DM_SIZE / 4096; p++)
		if (!memcmp(file_dm + p * 4096, want, sizeof want))
			_exit(91);
	memset(file_dm, 0xee, SNIC_DM_SIZE);
	if (raw_cmd(&r, SNIC_CMD_ALLOC_DM, &a, sizeof a, &out, sizeof out) != SNIC_ST_OK ||
	    raw_dm_map(&r, out.offset, 4096, &fd) != 0)
		_exit(92);
	stale = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	h.handle = out.handle;
	if (stale == MAP_FAILED ||
	    raw_cmd(&r, SNIC_CMD_FREE_DM, &h, sizeof h, NULL, 0) != SNIC_ST_OK)
		_exit(93);
	if (write(PIPE_GO[1], &b, 1) != 1 || read(PIPE_DONE[0], &b, 1) != 1)
		_exit(94);
	dm_pattern(want, 2);
	if (!memcmp(stale, want, sizeof want))
		_exit(95);      /* the victim's new DM seen through a stale mapping */
	memset(stale, 0xdd, 4096);
	_exit(0);
}

static bool c_dm(void)
{
	uint8_t want[4096], got[4096];
	struct ibv_alloc_dm_attr da = { .length = 4096 };
	struct ibv_dm *dm, *dm2 = NULL;
	pid_t p;
	int st;
	bool ok = true;

	if (!(dm = ibv_alloc_dm(D.ctx, &da)))
		return vt_fail(&V, "victim alloc_dm: %s", strerror(errno));
	dm_pattern(want, 1);
	if (ibv_memcpy_to_dm(dm, 0, want, sizeof want))
		return vt_fail(&V, "victim memcpy_to_dm");
	if (!attacker_go(dm_attacker, &p, "DM attacker (exit 90: a DM page not "
			 "its own not refused, 91: the victim's DM in the BAR "
			 "file, 92/93: its own DM)"))
		return false;
	sleep_ms(60);   /* the broker cuts the freed page (10 ms housekeeping) */
	if (!(dm2 = ibv_alloc_dm(D.ctx, &da)))
		ok = vt_fail(&V, "victim second alloc_dm: %s", strerror(errno));
	dm_pattern(got, 2);
	if (ok && ibv_memcpy_to_dm(dm2, 0, got, sizeof got))
		ok = vt_fail(&V, "victim memcpy_to_dm (2)");
	st = attacker_done(p);
	if (ok && st >= 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		ok = vt_fail(&V, "DM attacker: status %d (95: the victim's new DM "
			     "seen through a freed page's mapping)", st);
	if (ok && (ibv_memcpy_from_dm(got, dm, 0, sizeof got) ||
		   memcmp(got, want, sizeof want)))
		ok = vt_fail(&V, "the victim's DM changed");
	dm_pattern(want, 2);
	if (ok && (ibv_memcpy_from_dm(got, dm2, 0, sizeof got) ||
		   memcmp(got, want, sizeof want)))
		ok = vt_fail(&V, "the victim's second DM changed");
	if (dm2)
		ibv_free_dm(dm2);
	ibv_free_dm(dm);
	if (ok)
		vt_log(&V, "others' DM pages refused (EACCES); the BAR file's DM area "
		       "holds nothing of the victim's and writing it changes nothing; "
		       "a freed page's old mapping never sees its next owner's data");
	return ok && victim_ok("device memory attacked", 15);
}

/* Commands issued while the NIC's process is stopped (as a loaded machine
 * stalls it) must wait for it, past the old fixed 5 s, and fail soon when
 * it dies: the script stops or kills snic-emu between "open" and GO. */
static int stall_cmd(const char *name, const char *go)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	size_t len = 8u << 20;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr = NULL;
	void *buf = malloc(len);
	struct timespec t0, t1;

	for (int i = 0; l && l[i] && !c; i++)
		if (strcmp(ibv_get_device_name(l[i]), name) == 0)
			c = ibv_open_device(l[i]);
	if (!c || !buf || !(pd = ibv_alloc_pd(c))) {
		fprintf(stderr, "stall-cmd: cannot open %s: %s\n", name,
			strerror(errno));
		return 2;
	}
	memset(buf, 0x5a, len);
	printf("open\n");
	fflush(stdout);
	while (access(go, F_OK) != 0)
		sleep_ms(10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("reg_mr %s after %.1f s%s%s\n", mr ? "succeeded" : "failed",
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       mr ? "" : ": ", mr ? "" : strerror(errno));
	return mr ? 0 : 1;     /* the process's end frees the rest */
}

/* The BAR file and the shared host-memory file are regular files of the
 * run directory: any process of the user may ftruncate them.  The
 * attacker truncates both (to 0, to one page, and back to the full size
 * itself, so the emulator never sees them short) every millisecond for
 * 400 ms while the victim keeps WRITEs going; a mapping's pages past the
 * end give SIGBUS to whoever touches them.  The victim (whose doorbells
 * and kicks go through the file's header and doorbell page) and the NIC
 * must live through it, every WRITE complete, and work after. */
static void truncate_child(int ms)
{
	char bar[512], mem[600];
	const char *dir = getenv("SNIC_RUN_DIR");
	struct snic_bar_hdr h;
	uint64_t end = vt_now_ns() + (uint64_t)ms * 1000000u;
	int fd, mfd, n = 0;

	dir = dir && *dir ? dir : "/dev/shm/snic";
	snprintf(bar, sizeof bar, "%s/%s.bar", dir, D.name);
	fd = open(bar, O_RDWR);
	if (fd < 0 || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		_exit(40);
	h.host_mem[sizeof(h.host_mem) - 1] = '\0';
	snprintf(mem, sizeof mem, "%s/%s", dir, h.host_mem);
	mfd = open(mem, O_RDWR);
	if (mfd < 0)
		_exit(41);
	while (vt_now_ns() < end) {
		if (ftruncate(fd, n % 3 == 1 ? SNIC_PAGE_SIZE : 0) ||
		    ftruncate(mfd, 0))
			_exit(42);
		if (n % 3 == 2 && ftruncate(fd, SNIC_BAR_SIZE))
			_exit(43);
		n++;
		sleep_ms(1);
	}
	_exit(n >= 10 ? 0 : 44);
}

static bool c_truncate(void)
{
	unsigned writes, cmds;

	/* commands rarely: one in the instant the header is zero reads a
	 * NIC that is down (EIO), which is an allowed outcome, not the one
	 * this checks */
	if (!writes_during(truncate_child, "files truncated", UINT_MAX, &writes,
			   &cmds))
		return false;
	vt_log(&V, "files truncated for 400 ms: %u victim WRITEs completed meanwhile",
	       writes);
	sleep_ms(100);  /* the emulator's housekeeping: header, doorbells */
	return victim_ok("BAR and host-memory files truncated", 16);
}

/* A QEMU NIC's agent maps no DM page into a process: any request is
 * refused (EOPNOTSUPP), the BAR file's DM area is not the NIC's. */
static void dm_refused_child(int unused)
{
	struct raw r = { 0 };
	int fd;

	(void)unused;
	raw_from_broker(&r);
	_exit(raw_dm_map(&r, 0, 4096, &fd) == EOPNOTSUPP && fd < 0 ? 0 : 90);
}

static bool c_dm_refused(void)
{
	int st = 0;

	if (!run_child(dm_refused_child, 0, &st) || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return vt_fail(&V, "a DM page asked of the QEMU NIC's agent: "
			       "status %d (90: not refused EOPNOTSUPP)", st);
	vt_log(&V, "device memory refused (EOPNOTSUPP)");
	return victim_ok("device memory asked for", 15);
}

/* QEMU: a process ends its context (closes its socket) but keeps its slot
 * and segment; the agent must hand neither to the next process while it
 * holds them (QEMU maps both for good: nothing else stops the old holder
 * from reaching the newcomer's mailbox and pages).  Three ways to keep
 * them, one holder at a time (each ends before the next: three segments):
 *   mapped     its descriptors and mappings kept;
 *   hidden     the same, after making itself non-dumpable (no other
 *              process but root may look at its descriptors or maps);
 *   in flight  both descriptors sent on a socket pair it keeps and never
 *              received (SCM_RIGHTS), then closed and unmapped: it shows
 *              nothing of them anywhere in /proc. */
enum { HOLD_MAPPED, HOLD_HIDDEN, HOLD_IN_FLIGHT, HOLD_WAYS };
static const char *const HOLD_NAME[HOLD_WAYS] = {
	"keeps them mapped", "keeps them mapped, non-dumpable",
	"parks their descriptors in flight on a socket pair"
};
static uint64_t STALE_SLOT, STALE_PA;
static int STALE_PIPE[2], STALE_HOW;

/* Both descriptors onto sp[0], for sp[1], which nobody reads. */
static bool park_in_flight(const int fds[2], int sp[2])
{
	union { struct cmsghdr h; char buf[CMSG_SPACE(2 * sizeof(int))]; } u;
	char one = 1;
	struct iovec iov = { &one, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof u.buf };

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return false;
	memset(&u, 0, sizeof u);
	u.h.cmsg_level = SOL_SOCKET;
	u.h.cmsg_type = SCM_RIGHTS;
	u.h.cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(&u.h), fds, 2 * sizeof(int));
	return sendmsg(sp[0], &msg, 0) == 1;
}

static void stale_holder(int unused)
{
	struct raw r = { 0 };
	uint64_t info[2];
	int sp[2];
	char c = 0;

	(void)unused;
	raw_from_broker(&r);
	info[0] = r.idx;
	info[1] = r.mem_pa;
	if (STALE_HOW == HOLD_HIDDEN && prctl(PR_SET_DUMPABLE, 0))
		_exit(95);
	if (STALE_HOW == HOLD_IN_FLIGHT) {
		if (!park_in_flight(r.fds, sp))
			_exit(96);
		close(r.fds[0]);
		close(r.fds[1]);
		/* the slot's page back to the BAR file's, the segment gone */
		if (mmap(r.slot, SNIC_CTX_SLOT_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED ||
		    munmap(r.mem, 1u << 20))
			_exit(97);
	}
	close(r.sock);          /* the context ends; the memory stays ours */
	if (write(STALE_PIPE[1], info, sizeof info) != (ssize_t)sizeof info ||
	    write(PIPE_GO[1], &c, 1) != 1 || read(PIPE_DONE[0], &c, 1) != 1)
		_exit(92);
	_exit(0);
}

static void newcomer(int unused)
{
	struct raw r = { 0 };

	(void)unused;
	raw_from_broker(&r);
	_exit(r.idx == STALE_SLOT ? 93 : r.mem_pa == STALE_PA ? 94 : 0);
}

/* A holder (fn) started: it has its context, ended it and told its slot
 * and segment (STALE_SLOT, STALE_PA); 1, 0 (it told nothing: the test
 * failed, end it) or -1 (not started). */
static int holder_up(void (*fn)(int), pid_t *p, const char *who)
{
	uint64_t info[2] = { ~0ull, ~0ull };
	int up = 1;

	if (pipe(STALE_PIPE))
		return vt_fail(&V, "pipe"), -1;
	if (!attacker_go(fn, p, who))
		return -1;
	if (read(STALE_PIPE[0], info, sizeof info) != (ssize_t)sizeof info)
		up = vt_fail(&V, "%s: no slot", who);
	STALE_SLOT = info[0];
	STALE_PA = info[1];
	sleep_ms(200);          /* the agent has seen the socket close */
	return up;
}

static bool stale_one(int how)
{
	pid_t p;
	int st = 0, hs, up;
	bool ok;

	STALE_HOW = how;
	if ((up = holder_up(stale_holder, &p, "stale holder")) < 0)
		return false;
	ok = up > 0;
	if (ok && (!run_child(newcomer, 0, &st) || !WIFEXITED(st) ||
		   WEXITSTATUS(st) != 0))
		ok = vt_fail(&V, "a holder that %s: the next process got its %s "
			     "(status %d)", HOLD_NAME[how],
			     WIFEXITED(st) && WEXITSTATUS(st) == 93 ? "slot" :
			     WIFEXITED(st) && WEXITSTATUS(st) == 94 ? "segment" :
			     "nothing", st);
	hs = attacker_done(p);
	close(STALE_PIPE[0]);
	close(STALE_PIPE[1]);
	if (ok && hs >= 0 && (!WIFEXITED(hs) || WEXITSTATUS(hs) != 0))
		ok = vt_fail(&V, "stale holder (%s): status %d", HOLD_NAME[how], hs);
	if (ok)
		vt_log(&V, "slot %u and segment at 0x%llx kept by a process whose "
		       "context ended (it %s): the next process got others",
		       (unsigned)STALE_SLOT, (unsigned long long)STALE_PA,
		       HOLD_NAME[how]);
	return ok;
}

static bool c_stale(void)
{
	bool ok = true;

	for (int how = 0; how < HOLD_WAYS && ok; how++)
		ok = stale_one(how) && victim_ok(HOLD_NAME[how], 16);
	return ok;
}

/* QEMU: a process keeps O_PATH descriptors of its slot and segment (no
 * IN_OPEN, no reference the agent sees), ends its context and lets them
 * go; the next process gets them and writes into its segment; the old
 * holder then chmods them through its O_PATH descriptors (same uid) and
 * opens them anew.  The agent cannot stop that, but sees it (IN_ATTRIB,
 * IN_OPEN): the newcomer's context must end at once, and that slot and
 * segment never be handed out again. */
static const char OPATH_MARK[8] = "NEWCOMER";
static int OPATH_PIPE[2];

/* --opath-uids HOLDER NEWCOMER GID: the two as other uids than the
 * agent's, members of GID (a NIC shared with them, snic-qemu --users) */
static bool OPATH_UIDS;
static uid_t OPATH_UID[2];
static gid_t OPATH_GID;

static void opath_become(int who)
{
	uid_t u = OPATH_UID[who];

	if (OPATH_UIDS && (setgroups(1, &OPATH_GID) ||
			   setresgid(OPATH_GID, OPATH_GID, OPATH_GID) ||
			   setresuid(u, u, u)))
		_exit(91);
}

static void opath_holder(int unused)
{
	struct raw r = { 0 };
	uint64_t info[2];
	char path[64], c = 0, got[8];
	int op[2], fd[2] = { -1, -1 }, how = 0, eperm = 0;
	uint8_t *m;

	(void)unused;
	opath_become(0);
	raw_from_broker(&r);
	info[0] = r.idx;
	info[1] = r.mem_pa;
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", r.fds[i]);
		if ((op[i] = open(path, O_PATH | O_CLOEXEC)) < 0)
			_exit(95);
		close(r.fds[i]);
	}
	if (mmap(r.slot, SNIC_CTX_SLOT_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED ||
	    munmap(r.mem, 1u << 20))
		_exit(97);
	close(r.sock);          /* released: the agent may hand them out */
	if (write(STALE_PIPE[1], info, sizeof info) != (ssize_t)sizeof info ||
	    write(PIPE_GO[1], &c, 1) != 1 || read(PIPE_DONE[0], &c, 1) != 1)
		_exit(92);
	/* the newcomer holds them now; not our files (another uid): the
	 * chmod must fail, EPERM (0x20 when it did for both), and the
	 * open is tried all the same */
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", op[i]);
		if (chmod(path, 0600) == 0)
			fd[i] = open(path, O_RDWR | O_CLOEXEC);
		else if (errno == EPERM && ++eperm && OPATH_UIDS)
			fd[i] = open(path, O_RDWR | O_CLOEXEC);
	}
	how |= eperm == 2 ? 0x20 : 0;
	how |= fd[0] >= 0 ? 1 : 0;
	if (fd[1] >= 0) {
		how |= 2;
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd[1], 0);
		if (m != MAP_FAILED) {
			memcpy(got, m, sizeof got);
			if (!memcmp(got, OPATH_MARK, sizeof got))
				how |= 4;       /* the newcomer's data read */
		}
	}
	_exit(0x10 | how);
}

/* Holds its context (writes OPATH_MARK into its segment) until its socket
 * closes: 0 when the agent ended it within 5 s, 98 when not. */
static void opath_newcomer(int unused)
{
	struct raw r = { 0 };
	uint64_t info[2];
	struct pollfd p;
	char c;

	(void)unused;
	opath_become(1);
	raw_from_broker(&r);
	memcpy(r.mem, OPATH_MARK, sizeof OPATH_MARK);
	info[0] = r.idx;
	info[1] = r.mem_pa;
	if (write(OPATH_PIPE[1], info, sizeof info) != (ssize_t)sizeof info)
		_exit(92);
	p = (struct pollfd){ .fd = r.sock, .events = POLLIN };
	if (poll(&p, 1, 5000) == 1 && recv(r.sock, &c, 1, MSG_DONTWAIT) <= 0)
		_exit(0);
	_exit(98);
}

static bool c_opath(void)
{
	uint64_t nc[2] = { ~0ull, ~0ull };
	pid_t p, n;
	int st = 0, hs, ns = 0, up;
	bool ok, shared;

	if (pipe(OPATH_PIPE))
		return vt_fail(&V, "pipe");
	if ((up = holder_up(opath_holder, &p, "O_PATH holder")) < 0)
		return false;
	ok = up > 0;
	n = fork();
	if (n == 0)
		opath_newcomer(0);
	if (n < 0 || read(OPATH_PIPE[0], nc, sizeof nc) != (ssize_t)sizeof nc)
		ok = vt_fail(&V, "newcomer: no context");
	hs = attacker_done(p);
	if (n > 0)
		waitpid(n, &ns, 0);
	shared = nc[0] == STALE_SLOT || nc[1] == STALE_PA;
	vt_log(&V, "O_PATH holder (slot %u, segment 0x%llx): %s; newcomer slot "
	       "%u segment 0x%llx, status %d; holder status 0x%x",
	       (unsigned)STALE_SLOT, (unsigned long long)STALE_PA,
	       hs >= 0 && WIFEXITED(hs) && WEXITSTATUS(hs) & 4 ?
	       "read the newcomer's segment" : "did not read the newcomer's data",
	       (unsigned)nc[0], (unsigned long long)nc[1], ns,
	       hs >= 0 && WIFEXITED(hs) ? WEXITSTATUS(hs) : hs);
	if (ok && (hs < 0 || !WIFEXITED(hs) || !(WEXITSTATUS(hs) & 0x10)))
		ok = vt_fail(&V, "O_PATH holder: status %d", hs);
	if (OPATH_UIDS) {       /* the kernel's no: EPERM, nothing opened */
		if (ok && WEXITSTATUS(hs) != 0x30)
			ok = vt_fail(&V, "O_PATH holder of another uid: status "
				     "0x%x (want 0x30: chmod EPERM for both, "
				     "nothing opened or read)", WEXITSTATUS(hs));
		if (ok && !shared)
			ok = vt_fail(&V, "the newcomer did not get the holder's "
				     "slot or segment: nothing was tried");
		for (int i = 0; i < 2; i++) {
			close(STALE_PIPE[i]);
			close(OPATH_PIPE[i]);
		}
		return ok;
	}
	if (ok && shared && (!WIFEXITED(ns) || WEXITSTATUS(ns) != 0))
		ok = vt_fail(&V, "a process that kept O_PATH descriptors reopened "
			     "the next holder's slot or segment%s and that "
			     "context lives on (status %d)",
			     WEXITSTATUS(hs) & 4 ? ", read its data," : "", ns);
	if (ok && (!run_child(newcomer, 0, &st) || !WIFEXITED(st) ||
		   WEXITSTATUS(st) != 0))
		ok = vt_fail(&V, "after an O_PATH reopen the next process got "
			     "that %s (status %d)",
			     WIFEXITED(st) && WEXITSTATUS(st) == 93 ? "slot" :
			     WIFEXITED(st) && WEXITSTATUS(st) == 94 ? "segment" :
			     "nothing", st);
	for (int i = 0; i < 2; i++) {
		close(STALE_PIPE[i]);
		close(OPATH_PIPE[i]);
	}
	return ok;
}

/* snic_hostile --opath-uids NIC HOLDER NEWCOMER GID: c_opath alone, the
 * holder and the newcomer as uids HOLDER and NEWCOMER of group GID (we
 * run as root; the NIC shared with GID, snic-qemu --users). */
static int opath_uids(char **a)
{
	V.timeout_ms = 10000;
	D.name = a[0];
	OPATH_UID[0] = (uid_t)atoi(a[1]);
	OPATH_UID[1] = (uid_t)atoi(a[2]);
	OPATH_GID = (gid_t)atoi(a[3]);
	OPATH_UIDS = true;
	QEMU = true;
	V.verbose = true;
	vt_report(&V, c_opath(), "an O_PATH holder of another uid cannot chmod "
		  "or open the next holder's slot and segment");
	printf("%u passed, %u failed\n", V.passed, V.failed);
	return V.failed ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snic_hostile [--dev0 NAME] [-v]\n");
}

int main(int argc, char **argv)
{
	struct vt_args a = { 0 };
	int r;

	if (argc == 4 && strcmp(argv[1], "--stall-cmd") == 0)
		return stall_cmd(argv[2], argv[3]);
	if (argc == 6 && strcmp(argv[1], "--opath-uids") == 0)
		return opath_uids(argv + 2);
	V.timeout_ms = 10000;
	QEMU = getenv("SNIC_HOSTILE_BOARD") &&
	       !strcmp(getenv("SNIC_HOSTILE_BOARD"), "qemu");
	r = vt_args(&V, argc, argv, &a, usage);

	if (r >= 0)
		return r;
	if (!vt_dev_open(&V, &D, a.dev0)) {
		fprintf(stderr, "snic_hostile: %s\n", V.why);
		return 1;
	}
	if (!victim_up()) {
		fprintf(stderr, "snic_hostile: %s\n", V.why);
		return 1;
	}
	vt_report(&V, victim_ok("set-up", 0), "victim works");
	vt_report(&V, c_maps(), "the victim maps the BAR file's header page only");
	vt_report(&V, c_scribbles(), "slot state, owner pid, orphan flag, fw_state rewritten");
	vt_report(&V, c_pools(), "pools exhausted by another context");
	vt_report(&V, c_pages(), "others' pages registered, CQ/QP rings pointed at them");
	if (!QEMU) /* its contexts are the old way's */
		vt_report(&V, c_allocator(), "window page allocator rewritten");
	vt_report(&V, c_doorbells(), "another context's QPs rung");
	vt_report(&V, c_db_clear(), "the NIC's doorbell page cleared: nothing lost");
	vt_report(&V, c_stats(), "statistics: none in the BAR file, all for the admin");
	vt_report(&V, c_share(), "one process takes its share of slots, no more");
	if (!QEMU) /* QEMU's files are the agent's sealed memfds */
		vt_report(&V, c_truncate(), "BAR and host-memory files truncated: nobody dies");
	if (QEMU) {
		vt_report(&V, c_dm_refused(), "device memory refused");
		vt_report(&V, c_stale(), "a slot and segment still held (mapped, by a "
			  "non-dumpable process, in flight) are not reused");
		vt_report(&V, c_opath() && victim_ok("O_PATH reopen", 16),
			  "an O_PATH holder's reopen ends the newcomer's context, "
			  "that slot and segment never handed out again");
	}
	else
		vt_report(&V, c_dm(), "device memory: others' pages, the file's, a freed page");
	printf("%u passed, %u failed\n", V.passed, V.failed);
	return V.failed ? 1 : 0;
}
