/* SPDX-License-Identifier: MIT */
/*
 * Whether a NIC is alive is not for shared memory to say (issue 10,
 * host-driver/core/liveness.c): the two halves of hostile.sh fw-pid.
 *
 *   snic_liveness write NAME PID [--fake-alive | --fake-dead]
 *       the hostile process: maps NAME's BAR file and writes PID ("self":
 *       its own) into the header's fw_pid every 100 us until killed; with
 *       --fake-alive it also keeps fw_state UP and the heartbeat moving,
 *       all a dead NIC's header could say to look alive; with --fake-dead
 *       fw_state DOWN and the heartbeat held where it was, all a live
 *       NIC's could say to look dead.  Says "writing" once the first
 *       value is in.
 *   snic_liveness cmds NAME MS
 *       the victim: opens NAME and, for MS milliseconds, allocates a PD,
 *       registers 64 KiB, creates a CQ, queries the port and frees them
 *       again, round after round; exit 0 and "ok: N rounds" when every
 *       call succeeded, 1 naming the first that failed.
 *
 * (SNIC_RUN_DIR names the run dir, as for the host driver.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "snic/hostif.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

enum fake { FAKE_NONE, FAKE_ALIVE, FAKE_DEAD };

static int hostile_write(const char *name, const char *pid_arg, enum fake fake)
{
	const char *dir = getenv("SNIC_RUN_DIR");
	struct timespec gap = { 0, 100 * 1000 };
	struct snic_bar_hdr *h;
	uint32_t pid;
	char path[512];
	uint64_t hb;
	void *p;
	int fd;

	pid = strcmp(pid_arg, "self") == 0 ? (uint32_t)getpid()
					   : (uint32_t)strtoul(pid_arg, NULL, 0);
	snprintf(path, sizeof(path), "%s/%s.bar",
		 dir && *dir ? dir : "/dev/shm/snic", name);
	fd = open(path, O_RDWR);
	p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "write: cannot map %s: %s\n", path, strerror(errno));
		return 2;
	}
	h = (struct snic_bar_hdr *)((uint8_t *)p + SNIC_BAR_HDR_OFF);
	hb = atomic_load(&h->heartbeat);
	for (unsigned long n = 0;; n++) {
		atomic_store(&h->fw_pid, pid);
		if (fake == FAKE_ALIVE) {
			atomic_store(&h->fw_state, SNIC_FW_UP);
			atomic_fetch_add(&h->heartbeat, 1);
		} else if (fake == FAKE_DEAD) {
			atomic_store(&h->fw_state, SNIC_FW_DOWN);
			atomic_store(&h->heartbeat, hb);
		}
		if (n == 0) {
			printf("writing fw_pid=%u%s\n", pid,
			       fake == FAKE_ALIVE ? ", fw_state UP, heartbeat moving" :
			       fake == FAKE_DEAD ? ", fw_state DOWN, heartbeat held" : "");
			fflush(stdout);
		}
		nanosleep(&gap, NULL);
	}
}

/* One round of commands; the name of the call that failed, or NULL. */
static const char *one_round(struct ibv_context *c, void *buf, size_t len)
{
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	const char *bad = NULL;

	if (!(pd = ibv_alloc_pd(c)))
		return "ibv_alloc_pd";
	if (!(mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE)))
		bad = "ibv_reg_mr";
	else if (!(cq = ibv_create_cq(c, 16, NULL, NULL, 0)))
		bad = "ibv_create_cq";
	else {
		if (ibv_query_port(c, 1, &pa) != 0 ||
		    pa.state != IBV_PORT_ACTIVE)
			bad = "ibv_query_port";
		if (ibv_destroy_cq(cq) != 0 && !bad)
			bad = "ibv_destroy_cq";
	}
	if (mr && ibv_dereg_mr(mr) != 0 && !bad)
		bad = "ibv_dereg_mr";
	if (ibv_dealloc_pd(pd) != 0 && !bad)
		bad = "ibv_dealloc_pd";
	return bad;
}

static int victim_cmds(const char *name, unsigned ms)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	size_t len = 64u << 10;
	void *buf = aligned_alloc(4096, len);
	const char *bad = NULL;
	uint64_t end;
	unsigned rounds = 0;

	for (int i = 0; l && l[i] && !c; i++)
		if (strcmp(ibv_get_device_name(l[i]), name) == 0)
			c = ibv_open_device(l[i]);
	if (!c || !buf) {
		printf("cmds: cannot open %s: %s\n", name, strerror(errno));
		return 1;
	}
	memset(buf, 0x5a, len);
	end = now_ms() + ms;
	do {
		errno = 0;
		bad = one_round(c, buf, len);
		rounds += !bad;
	} while (!bad && now_ms() < end);
	if (bad) {
		printf("cmds: %s failed in round %u: %s\n", bad, rounds + 1,
		       strerror(errno));
		return 1;
	}
	printf("ok: %u rounds of commands on %s in %u ms\n", rounds, name, ms);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "write") == 0)
		return hostile_write(argv[2], argv[3], FAKE_NONE);
	if (argc == 5 && strcmp(argv[1], "write") == 0 &&
	    (strcmp(argv[4], "--fake-alive") == 0 ||
	     strcmp(argv[4], "--fake-dead") == 0))
		return hostile_write(argv[2], argv[3],
				     strcmp(argv[4], "--fake-alive") == 0 ?
				     FAKE_ALIVE : FAKE_DEAD);
	if (argc == 4 && strcmp(argv[1], "cmds") == 0)
		return victim_cmds(argv[2], (unsigned)strtoul(argv[3], NULL, 0));
	fprintf(stderr, "usage: snic_liveness write NAME PID|self [--fake-alive|--fake-dead]\n"
		"       snic_liveness cmds NAME MS\n");
	return 2;
}
