/* SPDX-License-Identifier: MIT */
/*
 * A member of the NICs' users' group, as another uid than the NICs'
 * server (snic-emu --users; tests/integration/users.sh runs it with
 * setpriv): what it may and may not do with the run directory's files.
 *
 *   snic_member bar-write BAR     opening the BAR file for writing is
 *                                 refused (EACCES): exit 0; opened: 1
 *   snic_member closed FILE...    every FILE (host memory, admin socket,
 *                                 a NIC's socket for a non-member) is
 *                                 refused: open for reading, or connect
 *                                 for a socket, fails with EACCES: exit 0
 *   snic_member stats-zero BAR    the BAR file's statistics area holds
 *                                 zeros only (the broker's contexts'
 *                                 statistics are not published there)
 *   snic_member hold BAR          the attacker on a dead NIC: an
 *                                 exclusive flock (the old liveness
 *                                 mark) and a read lock on the read-only
 *                                 BAR file, held until
 *                                 killed ("holding" once all are in; a
 *                                 write lock must be refused, EBADF)
 *   snic_member ctxs NAME N GO    opens up to N contexts on NAME, says
 *                                 "opened K: <errno name of the refusal>"
 *                                 and keeps them until file GO exists
 *   snic_member wake NAME N MAX_US
 *                                 N times: let the NIC fall asleep (2-4 ms
 *                                 idle), post one 8-byte WRITE on a QP
 *                                 looped to itself and time it to its
 *                                 CQE; prints the spread and how many
 *                                 took over 0.7 ms (a kick lost while the
 *                                 NIC went to sleep waits out its 1 ms
 *                                 sleep); exit 1 when the median is over
 *                                 MAX_US (kicks not landing: ~500 us)
 *
 * (SNIC_RUN_DIR names the run dir, as for the host driver.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "snic/hostif.h"
#include "vt_common.h"

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int bar_write(const char *bar)
{
	int fd = open(bar, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		printf("opened %s for writing\n", bar);
		return 1;
	}
	printf("refused: open(%s, O_RDWR): %s\n", bar, strerror(errno));
	return errno == EACCES ? 0 : 1;
}

/* -1 when it opened or connected, else the errno */
static int try_file(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	int fd;

	if (n >= 5 && strcmp(path + n - 5, ".sock") == 0 &&
	    n < sizeof(a.sun_path)) {
		memcpy(a.sun_path, path, n + 1);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(fd);
			return -1;
		}
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return -1;
		}
	}
	n = (size_t)errno;
	if (fd >= 0)
		close(fd);
	return (int)n;
}

static int closed(int n, char **paths)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int e = try_file(paths[i]);

		if (e < 0)
			printf("REACHED %s\n", paths[i]);
		else
			printf("refused: %s: %s\n", paths[i], strerror(e));
		bad |= e != EACCES;
	}
	return bad;
}

static int stats_zero(const char *bar)
{
	static uint8_t buf[SNIC_BAR_STATS_SIZE];
	int fd = open(bar, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0) {
		printf("cannot read %s: %s\n", bar, strerror(errno));
		return 1;
	}
	got = pread(fd, buf, sizeof(buf), SNIC_BAR_STATS_OFF);
	close(fd);
	if (got != (ssize_t)sizeof(buf)) {
		printf("short read of the statistics area: %zd\n", got);
		return 1;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i]) {
			printf("statistics area byte %zu is 0x%02x\n", i, buf[i]);
			return 1;
		}
	printf("statistics area: %zu bytes, all zero\n", sizeof(buf));
	return 0;
}

static int hold(const char *bar)
{
	struct flock rd = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	struct flock wr = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(bar, O_RDONLY | O_CLOEXEC);
	int got_ex = 0, got_rd = 0;

	if (fd < 0) {
		printf("cannot open %s: %s\n", bar, strerror(errno));
		return 1;
	}
	if (fcntl(fd, F_OFD_SETLK, &wr) == 0 || errno != EBADF) {
		printf("a write lock through a read-only descriptor: %s\n",
			strerror(errno));
		return 1;
	}
	/* as soon as the kernel lets us (a live server's write lock
	 * keeps the read lock out) */
	for (int i = 0; i < 60000 && !(got_ex && got_rd); i++) {
		got_ex = got_ex || flock(fd, LOCK_EX | LOCK_NB) == 0;
		got_rd = got_rd || fcntl(fd, F_OFD_SETLK, &rd) == 0;
		if (!(got_ex && got_rd))
			nap_ms(1);
	}
	printf("%s: exclusive flock %d, read lock %d\n", bar, got_ex, got_rd);
	if (got_ex && got_rd)
		printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int ctxs(const char *name, int want, const char *go)
{
	struct ibv_context **c = calloc((size_t)want, sizeof(*c));
	struct ibv_device **list = ibv_get_device_list(NULL), *dev = NULL;
	struct stat st;
	int k = 0, err = 0;

	for (int i = 0; list && list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			dev = list[i];
	if (!dev || !c) {
		printf("no device %s\n", name);
		return 1;
	}
	while (k < want && (c[k] = ibv_open_device(dev)) != NULL)
		k++;
	if (k < want)
		err = errno;
	printf("opened %d: %s\n", k, err ? strerror(err) : "all");
	fflush(stdout);
	while (stat(go, &st) != 0)
		nap_ms(20);
	while (k > 0)
		ibv_close_device(c[--k]);
	ibv_free_device_list(list);
	free(c);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int wake(const char *name, int n, int max_us)
{
	struct vt v = { .timeout_ms = 5000 };
	struct vt_qp_cfg cfg = { .send_wr = 4, .recv_wr = 1, .send_sge = 1,
				 .recv_sge = 1, .cqe = 8 };
	static char buf[4096];
	struct vt_dev d;
	struct vt_ep e;
	struct ibv_qp_attr a;
	struct ibv_mr *mr;
	uint64_t *dt = calloc((size_t)n, sizeof(*dt));
	int slow = 0;

	if (!dt || !vt_dev_open(&v, &d, name) ||
	    !vt_ep_create(&v, &e, NULL, &d, &cfg, 0x1234)) {
		printf("setup: %s\n", v.why);
		return 2;
	}
	mr = ibv_reg_mr(d.pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	vt_rtr_attr(&v, &e, &e, IBV_MTU_1024, 12, &a);
	if (!mr || vt_qp_init(e.qp, IBV_ACCESS_REMOTE_WRITE) ||
	    ibv_modify_qp(e.qp, &a, VT_RTR_MASK) || vt_qp_rts(&e)) {
		printf("setup: MR or QP: %s\n", strerror(errno));
		return 2;
	}
	srand(42);
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 8, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;
		uint64_t t0, deadline;
		int got = 0;

		wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
		wr.wr.rdma.rkey = mr->rkey;
		/* idle long enough for the NIC to sleep, at a random point
		 * of its 1 ms sleeps */
		struct timespec ts = { 0, 2000000 + rand() % 2000000 };

		nanosleep(&ts, NULL);
		t0 = vt_now_ns();
		deadline = t0 + 5000000000ull;
		if (ibv_post_send(e.qp, &wr, &bad)) {
			printf("post: %s\n", strerror(errno));
			return 2;
		}
		while ((got = ibv_poll_cq(e.scq, 1, &wc)) == 0 &&
		       vt_now_ns() < deadline)
			;
		if (got != 1 || wc.status != IBV_WC_SUCCESS) {
			printf("WRITE %d: no successful completion\n", i);
			return 2;
		}
		dt[i] = vt_now_ns() - t0;
		slow += dt[i] > 700000;
	}
	qsort(dt, (size_t)n, sizeof(*dt), cmp_u64);
	printf("wake %s: %d WRITEs after 2-4 ms idle: median %.1f us, "
	       "p90 %.1f us, p99 %.1f us, max %.1f us; %d over 0.7 ms "
	       "(median allowed %d us)\n", name, n, dt[n / 2] / 1e3,
	       dt[n * 9 / 10] / 1e3, dt[n * 99 / 100] / 1e3,
	       dt[n - 1] / 1e3, slow, max_us);
	vt_ep_destroy(&e);
	ibv_dereg_mr(mr);
	vt_dev_close(&d);
	slow = dt[n / 2] > (uint64_t)max_us * 1000;
	free(dt);
	return slow;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "bar-write") == 0)
		return bar_write(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "closed") == 0)
		return closed(argc - 2, argv + 2);
	if (argc == 3 && strcmp(argv[1], "stats-zero") == 0)
		return stats_zero(argv[2]);
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	if (argc == 5 && strcmp(argv[1], "ctxs") == 0)
		return ctxs(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 5 && strcmp(argv[1], "wake") == 0 && atoi(argv[3]) > 0)
		return wake(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: snic_member bar-write BAR | closed FILE... | "
		"stats-zero BAR | hold BAR | ctxs NAME N GO | "
		"wake NAME N MAX_US\n");
	return 2;
}
