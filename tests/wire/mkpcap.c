/* SPDX-License-Identifier: MIT */
/*
 * Writes a plausible RC conversation, framed by roce_build, to the pcap
 * named by argv[1], for the wire oracles (check_roce.py, check_tshark.sh):
 *
 *   A -> B  RDMA WRITE FIRST / MIDDLE / LAST       B -> A  ACK
 *   A -> B  RDMA READ request (3 PSNs)             B -> A  READ RESPONSE
 *                                                          FIRST/MIDDLE/LAST
 *   A -> B  SEND ONLY with immediate (odd length)  B -> A  ACK
 *   A -> B  FETCH_ADD                              B -> A  ATOMIC ACK
 *
 * The request PSNs start just below 2^24 so the sequence wraps.
 */
#include <stdio.h>
#include <string.h>

#include "pcap_file.h"
#include "wire/roce_wire.h"

#define PMTU      1024u
#define START_PSN 0xfffffeu

struct host {
	uint8_t mac[6];
	uint32_t ip, qpn;
};

static const struct host A = { { 2, 0, 0, 0, 0, 0xa }, 0x0a000001, 0x000011 };
static const struct host B = { { 2, 0, 0, 0, 0, 0xb }, 0x0a000002, 0x000022 };

static struct pcap_file *pf;
static uint64_t ts_ns = 1700000000ull * 1000000000ull;
static int failed;

/* Headers for a packet from s to d; the UDP source port is derived from
 * the source QPN in the 0xC000+ range (Annex A17 leaves it to the sender). */
static struct roce_hdrs hdrs(const struct host *s, const struct host *d,
			     uint8_t opcode, uint32_t psn)
{
	struct roce_hdrs h;

	memset(&h, 0, sizeof(h));
	memcpy(h.smac, s->mac, 6);
	memcpy(h.dmac, d->mac, 6);
	h.sip = s->ip;
	h.dip = d->ip;
	h.sport = (uint16_t)(0xc000u | (s->qpn & 0x3fffu));
	h.opcode = opcode;
	h.pkey = ROCE_DEFAULT_PKEY;
	h.dqpn = d->qpn;
	h.psn = psn & ROCE_PSN_MASK;
	return h;
}

/* Frame h with n bytes of patterned payload and append it to the pcap. */
static void emit(const struct roce_hdrs *h, uint32_t n, uint8_t seed)
{
	static uint8_t frame[2048];
	uint8_t *pay = frame + roce_hdr_len(h->opcode);
	uint32_t len;

	for (uint32_t i = 0; i < n; i++)
		pay[i] = (uint8_t)(seed + i);
	len = roce_build(frame, h, n);
	ts_ns += 1500;
	if (pcap_file_write(pf, frame, len, ts_ns) != 0)
		failed = 1;
}

static void ack(uint8_t opcode, uint32_t psn, uint32_t msn)
{
	struct roce_hdrs h = hdrs(&B, &A, opcode, psn);

	h.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
	h.aeth_msn = msn;
	h.atomic_orig = 41;             /* used by ATOMIC_ACK only */
	emit(&h, 0, 0);
}

/* WRITE of 2500 bytes: FIRST + MIDDLE (PMTU each) + LAST (452). */
static uint32_t rdma_write(uint32_t psn)
{
	struct roce_hdrs h = hdrs(&A, &B, ROCE_RC_WRITE_FIRST, psn);

	h.reth_va = 0x7f0000001000ull;
	h.reth_rkey = 0x1234;
	h.reth_len = 2 * PMTU + 452;
	emit(&h, PMTU, 0x10);
	h = hdrs(&A, &B, ROCE_RC_WRITE_MIDDLE, psn + 1);
	emit(&h, PMTU, 0x20);
	h = hdrs(&A, &B, ROCE_RC_WRITE_LAST, psn + 2);
	h.ackreq = 1;
	emit(&h, 452, 0x30);
	ack(ROCE_RC_ACK, psn + 2, 1);
	return psn + 3;
}

/* READ of 2100 bytes: one request covering 3 PSNs, 3 responses. */
static uint32_t rdma_read(uint32_t psn)
{
	struct roce_hdrs h = hdrs(&A, &B, ROCE_RC_READ_REQ, psn);

	h.reth_va = 0x7f0000002000ull;
	h.reth_rkey = 0x5678;
	h.reth_len = 2 * PMTU + 52;
	emit(&h, 0, 0);
	h = hdrs(&B, &A, ROCE_RC_READ_RESP_FIRST, psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
	h.aeth_msn = 2;
	emit(&h, PMTU, 0x40);
	h = hdrs(&B, &A, ROCE_RC_READ_RESP_MIDDLE, psn + 1);
	emit(&h, PMTU, 0x50);
	h = hdrs(&B, &A, ROCE_RC_READ_RESP_LAST, psn + 2);
	h.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
	h.aeth_msn = 2;
	emit(&h, 52, 0x60);
	return psn + 3;
}

/* SEND ONLY with immediate, 61 bytes so the pad count is 3. */
static uint32_t send_imm(uint32_t psn)
{
	struct roce_hdrs h = hdrs(&A, &B, ROCE_RC_SEND_ONLY_IMM, psn);
	const uint8_t imm[4] = { 0xde, 0xad, 0xbe, 0xef };

	memcpy(&h.imm, imm, sizeof(imm));
	h.se = 1;
	h.ackreq = 1;
	emit(&h, 61, 0x70);
	ack(ROCE_RC_ACK, psn, 3);
	return psn + 1;
}

static uint32_t fetch_add(uint32_t psn)
{
	struct roce_hdrs h = hdrs(&A, &B, ROCE_RC_FETCH_ADD, psn);

	h.atomic_va = 0x7f0000003000ull;
	h.atomic_rkey = 0x9abc;
	h.atomic_swap_add = 5;
	h.ackreq = 1;
	emit(&h, 0, 0);
	ack(ROCE_RC_ATOMIC_ACK, psn, 4);
	return psn + 1;
}

int main(int argc, char **argv)
{
	uint32_t psn = START_PSN;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.pcap\n", argv[0]);
		return 2;
	}
	pf = pcap_file_open(argv[1]);
	if (!pf) {
		perror(argv[1]);
		return 1;
	}
	psn = rdma_write(psn);
	psn = rdma_read(psn);
	psn = send_imm(psn);
	fetch_add(psn);
	if (pcap_file_close(pf) != 0 || failed) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
