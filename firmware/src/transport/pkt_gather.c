/* SPDX-License-Identifier: MIT */
/*
 * A connected QP's frame with payload from host memory, the payload's
 * ICRC folded into the copy that brings it into the frame.
 *
 * The ICRC (IBTA vol. 1 Annex A17.3.3) covers the masked headers, then
 * the payload and its pad.  Built the usual way, the payload is copied
 * into the frame and then read again for the ICRC: two passes over every
 * byte sent.  Here the headers are written first and their CRC register
 * taken (roce_icrc4_hdrs); the copy (the HAL's dma_read_crc, crc32_hw_copy
 * for inline data) advances it over the payload and pad as it moves them,
 * so each byte is read once.  A CRC register goes on from any point of
 * the input, so nothing else changes: the frame is the same to the bit.
 *
 * Where the fold is not there — IPv6 (its masked head is built aside,
 * wire/icrc.c), a CPU without CRC folding, a HAL without dma_read_crc,
 * a gather list whose pieces are not multiples of 4 bytes (the fold pads
 * each piece) — the payload is copied and the ICRC computed over the
 * frame afterwards, as before.
 */
#include <string.h>

#include "arch/crc32_hw.h"
#include "transport/transport.h"

/* Where the payload comes from: the current message's gather list (or its
 * inline data), or one MR at va. */
struct pkt_src {
	struct snic_req_cur *cur;
	const struct snic_mr *mr;
	uint64_t va;
};

/* Copy n payload bytes to dst; with crc, fold them (and their pad) into
 * *crc where it can: -1 failed, 0 copied and folded, 1 copied only. */
static inline __attribute__((always_inline))
int src_copy(struct snic_nic *nic, const struct pkt_src *s, uint8_t *dst,
	     uint32_t n, uint32_t *crc)
{
	if (!crc)
		return s->mr ? mr_read(nic, s->mr, s->va, dst, n)
			     : sq_gather(nic, s->cur, dst, n);
	if (s->mr)
		return mr_read_crc(nic, s->mr, s->va, dst, n, crc);
	if (s->cur->hdr.ctrl.flags & SNIC_SEND_INLINE) {
		*crc = crc32_hw_copy(*crc, dst,
				     s->cur->inline_data + s->cur->sent, n);
		return 0;
	}
	return sgl_copy_out_crc(nic, &s->cur->sgl, dst, n, crc);
}

/* Whether the copy from s can fold: the CPU's folding, and for host
 * memory the HAL's dma_read_crc (without it the copy would be a plain one
 * and the headers' CRC taken before it thrown away: qemu-virt). */
static inline __attribute__((always_inline))
bool can_fold(const struct snic_nic *nic, const struct pkt_src *s)
{
	if (!crc32_hw_ok())
		return false;
	return nic->core.ops->dma_read_crc ||
	       (!s->mr && (s->cur->hdr.ctrl.flags & SNIC_SEND_INLINE));
}

/* The frame h with n payload bytes from s: the fold where it can be had,
 * else the copy and then the ICRC (see the top of the file). */
static inline __attribute__((always_inline))
uint32_t build(struct snic_nic *nic, struct snic_qp *qp,
	       const struct pkt_src *s, uint8_t *frame, struct roce_hdrs *h,
	       uint32_t n)
{
	uint32_t hl = roce_hdr_len(h->opcode), len = 0, c;
	int rc;

	if (can_fold(nic, s))
		len = pkt_build_qp_hdrs(nic, qp, frame, h, n);
	if (!len) {     /* no fold: copy, then the ICRC over the frame */
		if (src_copy(nic, s, frame + qp_hdr_len(qp, h->opcode), n,
			     NULL))
			return 0;
		return pkt_build_qp(nic, qp, frame, h, n);
	}
	c = roce_icrc4_hdrs(frame, hl);
	rc = src_copy(nic, s, frame + hl, n, &c);
	if (rc < 0)
		return 0;
	if (rc > 0) {   /* copied without the fold: pad, then the ICRC */
		memset(frame + hl + n, 0, -n & 3u);
		c = ~roce_icrc_ip(frame, len - ROCE_ICRC_LEN, false);
	}
	roce_icrc_put(frame, len, ~c);
	return len;
}

uint32_t pkt_fold_sq(struct snic_nic *nic, struct snic_qp *qp,
		     struct snic_req_cur *cur, uint8_t *frame,
		     struct roce_hdrs *h, uint32_t n)
{
	const struct pkt_src s = { .cur = cur };

	return build(nic, qp, &s, frame, h, n);
}

uint32_t pkt_fold_mr(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_mr *mr, uint64_t va, uint8_t *frame,
		     struct roce_hdrs *h, uint32_t n)
{
	const struct pkt_src s = { .mr = mr, .va = va };

	return build(nic, qp, &s, frame, h, n);
}
