/* SPDX-License-Identifier: MIT */
/*
 * Unpredictable values for the CM: starting PSNs, transaction IDs and
 * the first ephemeral port tried.  From the kernel (getrandom) rather than
 * rand(): rand() unseeded gives every process the same PSN and TID (two
 * processes' connections then look alike on the wire), and calling it
 * would move the application's own rand() sequence.
 */
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cma.h"

/* Fallback when getrandom fails (seccomp, very old kernel): splitmix64
 * over the clock and pid, good enough to keep processes apart. */
static uint64_t fallback(void)
{
	static _Thread_local uint64_t s;
	struct timespec ts;
	uint64_t z;

	if (!s) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^
		    (uint64_t)getpid() << 16;
	}
	z = (s += 0x9e3779b97f4a7c15ull);
	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	return z ^ z >> 31;
}

uint64_t cma_rand64(void)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	return fallback();
}

/* A starting PSN: 24 bits, never 0 (IBTA 9.7.1 allows 0; rdma-core's
 * peers do not mind, but 0 is what an unset field looks like). */
uint32_t cma_rand_psn(void)
{
	uint32_t psn = (uint32_t)cma_rand64() & 0xffffff;

	return psn ? psn : 1;
}
