/* SPDX-License-Identifier: MIT */
/* Address parsing shared by the boards' configuration (emu options, the
 * qemu-virt launcher's control page). */
#ifndef SNIC_BOARD_NETADDR_H
#define SNIC_BOARD_NETADDR_H

#include <stdint.h>

/* "a.b.c.d" -> host-order IPv4; 0 or -1. */
int snic_parse_ipv4(const char *s, uint32_t *ip);
/* IPv6 text (RFC 4291 2.2 forms 1 and 2: hex groups, one "::"; no
 * dotted IPv4 tail) -> 16 bytes, network order; unicast only (no ::,
 * ::1, multicast or IPv4-mapped: those cannot be a NIC's RoCE GID);
 * 0 or -1. */
int snic_parse_ipv6(const char *s, uint8_t ip[16]);
/* The default IPv6 address of a NIC: the unique local prefix
 * fd00:5e1c::/96 (RFC 4193, never routed off the site) with the IPv4
 * address in the low 32 bits: 198.18.0.1 -> fd00:5e1c::c612:1. */
void snic_ipv6_default(uint32_t ipv4, uint8_t ip[16]);

/* "xx:xx:xx:xx:xx:xx" -> MAC, unicast only; 0 or -1. */
int snic_parse_mac(const char *s, uint8_t mac[6]);

#endif
