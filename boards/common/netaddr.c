/* SPDX-License-Identifier: MIT */
/* Address parsing shared by the boards (netaddr.h). */
#include <stdio.h>

#include "netaddr.h"

int snic_parse_ipv4(const char *s, uint32_t *ip)
{
	unsigned a, b, c, d;
	char tail;

	if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 ||
	    a > 255 || b > 255 || c > 255 || d > 255)
		return -1;
	*ip = a << 24 | b << 16 | c << 8 | d;
	return 0;
}

int snic_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned m[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (m[i] > 255)
			return -1;
		mac[i] = (uint8_t)m[i];
	}
	return (mac[0] & 1) ? -1 : 0; /* a NIC's own address is unicast */
}
