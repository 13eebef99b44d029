/* SPDX-License-Identifier: MIT */
/*
 * The machine's own limits for `make bench`.
 *
 * snic-membench: single-core memcpy bandwidth at the sizes the data path
 * copies (a 4 KiB frame, a 64 KiB message, a 1 MiB message).  A software
 * NIC copies every payload byte at least once on its way from one host
 * buffer to another, so these bound what the emulator can reach on this
 * machine.  Prints "memcpy SIZE GBPS" lines.
 *
 * snic-membench icrc: how fast this CPU runs the firmware's own passes
 * over a frame's payload (its code, linked from libsnicfw), for a WRITE
 * frame of 4096 payload bytes (the emu's MTU).  A RoCE NIC without an
 * ICRC engine folds every payload byte into a CRC-32 twice, once when it
 * sends (IBTA 9.8.1) and once when it receives, whatever else it saves:
 *   tx     headers, then the payload copied from host memory into the
 *          frame with its ICRC folded in the same pass (pkt_gather.c);
 *   check  a received frame's ICRC checked over the whole frame, then
 *          its payload copied into the MR: a FIRST or ONLY, whose RETH
 *          may not be used before the check (rx.c);
 *   fold   a MIDDLE or LAST placed with its ICRC checked in the copy
 *          (rc_write_only.h's resp_more).
 * Each from L1 (the same buffers again and again), the payload on a
 * 64-byte line in the frame as the firmware puts it (core_pkt_align):
 * the best case.
 * Prints "icrc KIND 4096 GBPS" (payload bytes); every frame's ICRC is
 * checked against an independent recomputation first (exit 1 if not).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snic/fw.h"
#include "wire/roce_wire.h"

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

/* ---- icrc ---------------------------------------------------------- */

#define FRAME_PAYLOAD 4096u

struct icrc_bench {
	struct roce_tmpl t;
	struct roce_hdrs only, mid;     /* a WRITE ONLY and a WRITE MIDDLE */
	uint8_t *src, *dst, *buf;       /* host buffer, MR, frame buffer   */
	uint32_t len_only, len_mid;     /* frame lengths                   */
};

static uint32_t icrc_stored(const uint8_t *frame, uint32_t len)
{
	const uint8_t *p = frame + len - ROCE_ICRC_LEN;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Where a frame of h's opcode starts in the buffer: its payload on a
 * 64-byte line, as the firmware places it (core_pkt_align). */
#define PAYLOAD_AT 128u
static uint8_t *frame_of(struct icrc_bench *b, const struct roce_hdrs *h)
{
	return b->buf + PAYLOAD_AT - roce_hdr_len(h->opcode);
}

/* The requester's frame: headers, their ICRC register, the payload
 * copied and folded, the ICRC stored (pkt_gather.c's build). */
static uint32_t pass_tx(struct icrc_bench *b, const struct roce_hdrs *h)
{
	uint8_t *f = frame_of(b, h);
	uint32_t hl = roce_hdr_len(h->opcode);
	uint32_t len = roce_build_tmpl_hdrs(f, &b->t, h, FRAME_PAYLOAD);
	uint32_t c = roce_icrc4_hdrs(f, hl);

	c = snic_dma_copy_crc(c, f + hl, b->src, FRAME_PAYLOAD);
	roce_icrc_put(f, len, ~c);
	return len;
}

/* The HAL's dma_write copies with the C library's memcpy (a length known
 * only at run time); called through a pointer so that the compiler does
 * not inline its own copy of 4096 bytes here instead. */
static void *(*volatile hal_copy)(void *, const void *, size_t) = memcpy;

/* The responder's FIRST/ONLY: the check over the frame, then the copy. */
static int pass_check(struct icrc_bench *b, uint32_t len)
{
	const uint8_t *f = frame_of(b, &b->only);

	if (roce_icrc(f, len - ROCE_ICRC_LEN) != icrc_stored(f, len))
		return -1;
	hal_copy(b->dst, f + roce_hdr_len(b->only.opcode), FRAME_PAYLOAD);
	return 0;
}

/* The responder's MIDDLE/LAST: placed and checked in one pass. */
static int pass_fold(struct icrc_bench *b, uint32_t len)
{
	const uint8_t *f = frame_of(b, &b->mid);
	uint32_t hl = roce_hdr_len(b->mid.opcode);
	uint32_t c = roce_icrc4_hdrs(f, hl);

	c = snic_dma_copy_crc_in(c, b->dst, f + hl, FRAME_PAYLOAD);
	return ~c == icrc_stored(f, len) ? 0 : -1;
}

static void icrc_setup(struct icrc_bench *b)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 2 };
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct roce_hdrs h;
	size_t cap = roce_frame_len(&(struct roce_hdrs){ .opcode = ROCE_RC_WRITE_ONLY },
				    FRAME_PAYLOAD);

	memset(&h, 0, sizeof(h));
	memcpy(h.dmac, dmac, 6);
	memcpy(h.smac, smac, 6);
	h.sip = 0x0a000001;
	h.dip = 0x0a000002;
	h.ttl = 64;
	h.sport = 49152;
	h.pkey = ROCE_DEFAULT_PKEY;
	h.dqpn = 0x12;
	h.psn = 0x100;
	roce_tmpl_make(&b->t, &h);
	b->t.valid = true;
	b->only = h;
	b->only.opcode = ROCE_RC_WRITE_ONLY;
	b->only.reth_va = 0x10000;
	b->only.reth_rkey = 0x1234;
	b->only.reth_len = FRAME_PAYLOAD;
	b->mid = h;
	b->mid.opcode = ROCE_RC_WRITE_MIDDLE;
	b->src = aligned_alloc(64, FRAME_PAYLOAD);
	b->dst = aligned_alloc(64, FRAME_PAYLOAD);
	b->buf = aligned_alloc(64, (PAYLOAD_AT + cap + 63) & ~(size_t)63);
	if (!b->src || !b->dst || !b->buf) {
		fprintf(stderr, "snic-membench: out of memory\n");
		exit(1);
	}
	for (uint32_t i = 0; i < FRAME_PAYLOAD; i++)
		b->src[i] = (uint8_t)(i * 7 + 3);
	b->len_only = pass_tx(b, &b->only);
}

/* Each pass once, checked: the frame's ICRC as roce_icrc computes it
 * over the whole frame, and the payload where it went. */
static void icrc_verify(struct icrc_bench *b)
{
	uint32_t len = pass_tx(b, &b->only);
	uint8_t *f = frame_of(b, &b->only);
	bool bad;

	if (roce_icrc(f, len - ROCE_ICRC_LEN) != icrc_stored(f, len) ||
	    memcmp(f + roce_hdr_len(b->only.opcode), b->src, FRAME_PAYLOAD) ||
	    pass_check(b, len) || memcmp(b->dst, b->src, FRAME_PAYLOAD)) {
		fprintf(stderr, "snic-membench: the ONLY frame's ICRC or copy is wrong\n");
		exit(1);
	}
	memset(b->dst, 0, FRAME_PAYLOAD);
	b->len_mid = pass_tx(b, &b->mid);
	if (pass_fold(b, b->len_mid) || memcmp(b->dst, b->src, FRAME_PAYLOAD)) {
		fprintf(stderr, "snic-membench: the MIDDLE frame's ICRC or copy is wrong\n");
		exit(1);
	}
	b->buf[PAYLOAD_AT + 100] ^= 1;                  /* a bad MIDDLE */
	bad = !pass_fold(b, b->len_mid);
	b->len_only = pass_tx(b, &b->only);
	b->buf[PAYLOAD_AT + 100] ^= 1;                  /* a bad ONLY   */
	if (bad || !pass_check(b, b->len_only)) {
		fprintf(stderr, "snic-membench: a corrupted frame passed\n");
		exit(1);
	}
}

/* One kind of pass for ~0.3 s: payload GB/s. */
static double icrc_gbps(struct icrc_bench *b, int kind)
{
	uint64_t n = 0;
	double t0 = now_s(), t;
	int bad = 0;

	if (kind != 0)  /* the frame the receive passes read */
		pass_tx(b, kind == 1 ? &b->only : &b->mid);
	do {
		for (int i = 0; i < 256; i++) {
			if (kind == 0)
				pass_tx(b, &b->only);
			else if (kind == 1)
				bad |= pass_check(b, b->len_only);
			else
				bad |= pass_fold(b, b->len_mid);
		}
		n += 256;
		t = now_s() - t0;
	} while (t < 0.3);
	if (bad) {
		fprintf(stderr, "snic-membench: a good frame failed its check\n");
		exit(1);
	}
	return (double)n * FRAME_PAYLOAD / t / 1e9;
}

static int icrc_main(void)
{
	static const char *const kind[] = { "tx", "check", "fold" };
	struct icrc_bench b;

	if (!snic_dma_crc_ok()) {
		/* the firmware then copies and folds in two passes with the
		 * table: not what these lines describe */
		fprintf(stderr, "snic-membench: this CPU has no CRC folding\n");
		return 2;
	}
	icrc_setup(&b);
	icrc_verify(&b);
	for (int k = 0; k < 3; k++)
		printf("icrc %s %u %.2f\n", kind[k], FRAME_PAYLOAD, icrc_gbps(&b, k));
	free(b.src);
	free(b.dst);
	free(b.buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 65536, 1u << 20 };

	if (argc > 1 && strcmp(argv[1], "icrc") == 0)
		return icrc_main();
	if (argc > 1) {
		fprintf(stderr, "usage: snic-membench [icrc]\n");
		return 2;
	}
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		printf("memcpy %zu %.2f\n", sizes[i], memcpy_gbps(sizes[i]));
	return 0;
}
