/* SPDX-License-Identifier: MIT */
/*
 * The machine's own limits for `make bench`: single-core memcpy bandwidth
 * at the sizes the data path copies (a 4 KiB frame, a 64 KiB message, a
 * 1 MiB message).  A software NIC copies every payload byte at least
 * twice (host memory -> frame -> host memory), so these bound what the
 * emulator can reach on this machine.  Prints "memcpy SIZE GBPS" lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Copy `size` bytes between two buffers for ~0.3 s, return GB/s. */
static double memcpy_gbps(size_t size)
{
	uint8_t *a = malloc(size), *b = malloc(size);
	double t0, t;
	uint64_t bytes = 0;
	volatile uint8_t sink;

	if (!a || !b) {
		fprintf(stderr, "snic-membench: out of memory\n");
		exit(1);
	}
	memset(a, 1, size);
	memset(b, 2, size);
	t0 = now_s();
	do {
		for (int i = 0; i < 64; i++) {
			memcpy(i & 1 ? a : b, i & 1 ? b : a, size);
			bytes += size;
		}
		t = now_s() - t0;
	} while (t < 0.3);
	sink = a[size / 2];
	(void)sink;
	free(a);
	free(b);
	return (double)bytes / t / 1e9;
}

int main(void)
{
	static const size_t sizes[] = { 4096, 65536, 1u << 20 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		printf("memcpy %zu %.2f\n", sizes[i], memcpy_gbps(sizes[i]));
	return 0;
}
