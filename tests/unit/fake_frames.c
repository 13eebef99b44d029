/* SPDX-License-Identifier: MIT */
/* ARP frames and the link tap of fake_frames.h. */
#include <string.h>

#include "fake_frames.h"
#include "wire/roce_wire.h"

#define ETH_HLEN 14

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

uint16_t farp_build(uint8_t *f, uint16_t oper, const uint8_t dmac[6],
		    const uint8_t sha[6], uint32_t spa, const uint8_t tha[6],
		    uint32_t tpa)
{
	uint8_t *a = f + ETH_HLEN;

	memset(f, 0, FARP_LEN);
	memcpy(f, dmac, 6);
	memcpy(f + 6, sha, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	a[1] = 1;               /* htype: Ethernet */
	a[2] = 0x08;            /* ptype: IPv4 */
	a[4] = 6;
	a[5] = 4;
	a[6] = (uint8_t)(oper >> 8);
	a[7] = (uint8_t)oper;
	memcpy(a + 8, sha, 6);
	put32(a + 14, spa);
	memcpy(a + 18, tha, 6);
	put32(a + 24, tpa);
	return FARP_LEN;
}

bool farp_parse(const uint8_t *f, uint16_t len, struct farp *out)
{
	const uint8_t *a = f + ETH_HLEN;

	if (len < ETH_HLEN + 28 || f[12] != 0x08 || f[13] != 0x06)
		return false;
	memcpy(out->dmac, f, 6);
	memcpy(out->smac, f + 6, 6);
	out->oper = (uint16_t)(a[6] << 8 | a[7]);
	memcpy(out->sha, a + 8, 6);
	out->spa = get32(a + 14);
	memcpy(out->tha, a + 18, 6);
	out->tpa = get32(a + 24);
	return true;
}

void ftap_init(struct ftap *t, int side)
{
	memset(t, 0, sizeof(*t));
	t->side = side;
}

enum fl_action ftap_hook(void *arg, int from, uint8_t *frame, uint16_t *len)
{
	struct ftap *t = arg;
	uint64_t k;
	uint16_t n;

	if (from != t->side)
		return FL_PASS;
	k = t->frames++ % FTAP_KEEP;
	n = *len < FTAP_BYTES ? *len : FTAP_BYTES;
	memcpy(t->data[k], frame, n);
	t->len[k] = *len;
	if (*len >= ETH_HLEN && frame[12] == 0x08 && frame[13] == 0x06) {
		t->arp++;
		return FL_PASS;
	}
	if (*len >= ETH_HLEN && frame[12] == 0x08 && frame[13] == 0x00) {
		uint64_t r = t->roce++;

		if (r < 64 && (t->drop_mask >> r) & 1)
			return FL_DROP;
	}
	return FL_PASS;
}

const uint8_t *ftap_frame(const struct ftap *t, uint64_t k, uint16_t *len)
{
	if (k >= t->frames || t->frames - k > FTAP_KEEP)
		return NULL;
	*len = t->len[k % FTAP_KEEP];
	return t->data[k % FTAP_KEEP];
}

uint32_t fcrc32_bits(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

enum fl_action falign_hook(void *arg, int from, uint8_t *frame, uint16_t *len)
{
	struct falign *a = arg;
	struct roce_hdrs r;

	(void)from;
	if (roce_parse(frame, *len, &r) == ROCE_OK && r.payload_len >= 512) {
		a->big++;
		a->aligned += ((uintptr_t)r.payload & 63u) == 0;
	}
	return FL_PASS;
}
