/* SPDX-License-Identifier: MIT */
/*
 * The first registration's streaming copy and fill (host-driver/memory/
 * stream_copy.c), byte for byte against memcpy/memset: at and around
 * HD_STREAM_MIN (2 MiB, the streamed loop), above it (+ 64 KiB), below
 * it, with the destination off its
 * 16-byte alignment and a length not a multiple of 64 (the plain
 * fallbacks), a source at any byte offset (unaligned loads).  The bytes
 * just outside each destination must stay as they were (no store past
 * len, none before dst).  tests/hostdrv/window_fill checks the same
 * copies inside a registration (its mapped way: a 400 KiB run copied
 * plainly, a 2.3 MiB run streamed, a 2.4 MiB hole of zeros streamed).
 *
 *   stream_copy        (exit 0: all passed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "../check.h"

#define GUARD 64
#define MAXLEN (HD_STREAM_MIN + 65536u)

static uint8_t *src, *dst, *ref;

/* One copy (or fill, zero != 0) of len bytes to dst + doff from src +
 * soff, against the same by memcpy/memset on ref. */
static int one(size_t len, size_t doff, size_t soff, int zero)
{
	for (size_t i = 0; i < MAXLEN + 2 * GUARD + 64; i++) {
		dst[i] = (uint8_t)(i * 13u + 7u);
		ref[i] = dst[i];
	}
	if (zero) {
		hd_stream_zero(dst + GUARD + doff, len);
		memset(ref + GUARD + doff, 0, len);
	} else {
		hd_stream_copy(dst + GUARD + doff, src + soff, len);
		memcpy(ref + GUARD + doff, src + soff, len);
	}
	return memcmp(dst, ref, MAXLEN + 2 * GUARD + 64) == 0;
}

int main(void)
{
	static const struct {
		size_t len, doff, soff;
		const char *what;
	} cases[] = {
		{ HD_STREAM_MIN, 0, 0, "2 MiB, aligned (streamed)" },
		{ HD_STREAM_MIN + 64, 0, 3, "2 MiB + 64, source at +3 (streamed)" },
		{ MAXLEN, 0, 0, "2 MiB + 64 KiB (streamed)" },
		{ MAXLEN, 0, 17, "2 MiB + 64 KiB, source at +17 (streamed)" },
		{ HD_STREAM_MIN - 64, 0, 0, "2 MiB - 64 (plain)" },
		{ 4096, 0, 0, "one page (plain)" },
		{ HD_STREAM_MIN, 8, 0, "2 MiB, destination at +8 (plain)" },
		{ HD_STREAM_MIN + 32, 0, 0, "2 MiB + 32 (plain)" },
		{ HD_STREAM_MIN + 1, 0, 1, "2 MiB + 1, source at +1 (plain)" },
	};
	char what[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* 64-byte aligned, so GUARD + doff sets dst's alignment */
	if (posix_memalign((void **)&src, 64, MAXLEN + 64) ||
	    posix_memalign((void **)&dst, 64, MAXLEN + 2 * GUARD + 64) ||
	    posix_memalign((void **)&ref, 64, MAXLEN + 2 * GUARD + 64)) {
		check(0, "buffers");
		return 1;
	}
	for (size_t i = 0; i < MAXLEN + 64; i++)
		src[i] = (uint8_t)(i * 31u + (i >> 12) + 1u);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		snprintf(what, sizeof(what), "copy %s", cases[k].what);
		check(one(cases[k].len, cases[k].doff, cases[k].soff, 0), what);
		snprintf(what, sizeof(what), "zero %s", cases[k].what);
		check(one(cases[k].len, cases[k].doff, 0, 1), what);
	}
	free(src);
	free(dst);
	free(ref);
	printf("%u passed, %u failed\n", passed, failed);
	return failed != 0;
}
