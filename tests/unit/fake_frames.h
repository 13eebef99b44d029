/* SPDX-License-Identifier: MIT */
/*
 * Raw frames for the unit tests: ARP packets (RFC 826) to inject into a
 * NIC's port, and a tap on the fake link that records what one side
 * transmits and may drop chosen RoCE frames of it.
 */
#ifndef SNIC_TESTS_FAKE_FRAMES_H
#define SNIC_TESTS_FAKE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_hal.h"

/* CRC-32 (the Ethernet/ICRC polynomial) bit at a time, straight from
 * the polynomial's definition: the reference the tables and the CPU's
 * folding are checked against. */
uint32_t fcrc32_bits(const uint8_t *p, size_t n);

#define FARP_REQUEST 1
#define FARP_REPLY   2
#define FARP_LEN     60 /* minimum Ethernet frame without FCS */

/* An ARP frame (Ethernet/IPv4) from MAC sha into f[FARP_LEN].  IPs are in
 * host order.  Returns the frame's length. */
uint16_t farp_build(uint8_t *f, uint16_t oper, const uint8_t dmac[6],
		    const uint8_t sha[6], uint32_t spa, const uint8_t tha[6],
		    uint32_t tpa);

/* A decoded ARP frame (false from farp_parse when it is none). */
struct farp {
	uint8_t dmac[6], smac[6];
	uint16_t oper;
	uint8_t sha[6], tha[6];
	uint32_t spa, tpa;
};
bool farp_parse(const uint8_t *f, uint16_t len, struct farp *out);

#define FTAP_KEEP  64   /* frames recorded (the latest ones)            */
#define FTAP_BYTES 128  /* bytes recorded of each                       */

/* Install with fake_link_set_hook(&sim->link, ftap_hook, &tap). */
struct ftap {
	int side;               /* the transmitting side it watches          */
	uint64_t drop_mask;     /* drop RoCE frame n (0-based) when bit n set */
	uint64_t roce;          /* RoCE (IPv4) frames seen from `side`       */
	uint64_t arp;           /* ARP frames seen from `side`               */
	uint64_t frames;        /* all frames recorded so far                */
	uint8_t data[FTAP_KEEP][FTAP_BYTES];
	uint16_t len[FTAP_KEEP];
};
void ftap_init(struct ftap *t, int side);
enum fl_action ftap_hook(void *arg, int from, uint8_t *frame, uint16_t *len);
/* Frame k (0-based, in transmit order) of those recorded; NULL when it
 * is no longer kept or not seen yet. */
const uint8_t *ftap_frame(const struct ftap *t, uint64_t k, uint16_t *len);

/* A tap on both sides counting the RoCE frames (IPv4 or IPv6) with at
 * least 512 payload bytes (those the sender copies in with the ICRC
 * folded), and of them the ones whose payload begins on a 64-byte line
 * (core_pkt_align).  Install with fake_link_set_hook(&sim->link,
 * falign_hook, &seen). */
struct falign {
	unsigned big, aligned;
};
enum fl_action falign_hook(void *arg, int from, uint8_t *frame, uint16_t *len);

#endif
