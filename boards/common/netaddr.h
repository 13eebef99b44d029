/* SPDX-License-Identifier: MIT */
/* Address parsing shared by the boards' configuration (emu options, the
 * qemu-virt launcher's control page). */
#ifndef SNIC_BOARD_NETADDR_H
#define SNIC_BOARD_NETADDR_H

#include <stdint.h>

/* "a.b.c.d" -> host-order IPv4; 0 or -1. */
int snic_parse_ipv4(const char *s, uint32_t *ip);
/* "xx:xx:xx:xx:xx:xx" -> MAC, unicast only; 0 or -1. */
int snic_parse_mac(const char *s, uint8_t mac[6]);

#endif
