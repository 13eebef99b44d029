/* SPDX-License-Identifier: MIT */
/*
 * sim_write: N RDMA WRITEs of SIZE bytes (default 64), one at a time,
 * between two NICs of the deterministic simulation (tests/unit's fake HAL
 * and fake host: no OS, no DPDK, virtual time).  Each WRITE is posted,
 * carried through requester, wire, responder, ACK and completer, and its
 * CQE polled; the data of the last one is checked.  It is the workload
 * for counting instructions per message (tools/instr-count.sh), so it
 * does nothing per message beyond what a host and two NICs must do.
 *
 * Usage: sim_write [N [SIZE]]    exit 0 when every WRITE completed OK.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"

#define MAX_STEPS 1000u         /* simulation steps a WRITE may take */

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	unsigned long size = argc > 2 ? strtoul(argv[2], NULL, 0) : 64;
	struct fsim *s = fsim_new(4200);
	struct fconn conn;
	struct fpair p;
	struct snic_cqe c;

	if (s == NULL || size == 0 || size > 4096) {
		fprintf(stderr, "usage: sim_write [N [SIZE <= 4096]]\n");
		return 2;
	}
	fconn_default(&conn);
	if (fpair_setup(&p, s, &conn, 1u << 20, 256) != SNIC_ST_OK) {
		fprintf(stderr, "sim_write: connection set-up failed\n");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		struct snic_wqe_sge sge = { .addr = p.bufa + (i & 63) * 64,
					    .length = (uint32_t)size,
					    .lkey = p.mra };
		struct fwr wr = { .wr_id = i, .opcode = SNIC_WR_RDMA_WRITE,
				  .flags = SNIC_SEND_SIGNALED, .sge = &sge,
				  .num_sge = 1, .remote_addr = p.bufb + 8192,
				  .rkey = p.mrb };

		memset(fdev_ptr(&s->a, sge.addr), (int)(i & 0xff), size);
		fqp_post_send(&p.qa, &wr);
		if (!fsim_poll_cq(s, &p.cqa, &c, MAX_STEPS) ||
		    c.status != SNIC_WC_SUCCESS || c.wr_id != i) {
			fprintf(stderr, "sim_write: WRITE %lu did not complete "
				"OK (status %u)\n", i, c.status);
			return 1;
		}
	}
	if (n > 0 && memcmp(fdev_ptr(&s->b, p.bufb + 8192),
			    fdev_ptr(&s->a, p.bufa + ((n - 1) & 63) * 64),
			    size) != 0) {
		fprintf(stderr, "sim_write: data of the last WRITE differs\n");
		return 1;
	}
	printf("sim_write: %lu WRITEs of %lu bytes completed, data checked\n",
	       n, size);
	return fsim_free(s) == 0 ? 0 : 1;
}
