/* peer-linger.so: preloaded into the rxe VM's pingpong programs in the
 * impaired cases (tests/interop/interop.sh), it delays ibv_destroy_qp by
 * SNIC_PEER_LINGER_MS milliseconds.
 *
 * Why: ibv_rc_pingpong has no closing handshake.  The side that finishes
 * first destroys its QP while the other may still be waiting for the ACK
 * of its last SEND; if netem drops that ACK, the retransmission reaches a
 * QP that no longer exists.  snic keeps a destroyed RC QP answering
 * duplicates for a second (SNIC_LINGER_NS, rc_ack.c), rdma_rxe keeps
 * none, so a snic server behind an rxe client waits for an ACK nobody
 * will send (both treat retry_cnt 7 as "retry for ever", as pingpong
 * sets it).  The delay gives rxe's QP the lingering snic's has; the
 * program itself is Debian's, unmodified, and nothing else changes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

struct ibv_qp;

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*real)(struct ibv_qp *);
	const char *ms = getenv("SNIC_PEER_LINGER_MS");
	long n = ms ? strtol(ms, NULL, 10) : 0;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "ibv_destroy_qp");
	if (!real)
		return -1;
	if (n > 0 && n <= 60000) {
		struct timespec t = { n / 1000, (n % 1000) * 1000000L };

		while (nanosleep(&t, &t) != 0)
			;
	}
	return real(qp);
}
