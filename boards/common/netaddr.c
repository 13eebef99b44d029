/* SPDX-License-Identifier: MIT */
/* Address parsing shared by the boards (netaddr.h). */
#include <stdio.h>
#include <string.h>

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

/* One group of 1-4 hex digits at *s; -1 if none. */
static int hex_group(const char **s)
{
	int v = 0, n = 0;

	for (; n < 4; n++, (*s)++) {
		char c = **s;
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			break;
		v = v * 16 + d;
	}
	return n ? v : -1;
}

/* Groups separated by ':' until the end or "::"; returns the count, -1
 * on bad syntax. */
static int ipv6_groups(const char **s, uint16_t g[8])
{
	int n = 0;

	while (**s && !((*s)[0] == ':' && (*s)[1] == ':')) {
		int v;

		if (n == 8 || (v = hex_group(s)) < 0)
			return -1;
		g[n++] = (uint16_t)v;
		if (**s == ':' && (*s)[1] != ':') {
			(*s)++;
			if (!**s)
				return -1; /* trailing ':' */
		} else if (**s && **s != ':') {
			return -1;
		}
	}
	return n;
}

int snic_parse_ipv6(const char *s, uint8_t ip[16])
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					   0xff, 0xff };
	uint16_t head[8], tail[8], w[8] = { 0 };
	int nh, nt = 0, zero = 1;

	nh = ipv6_groups(&s, head);
	if (nh < 0)
		return -1;
	if (*s) {                       /* "::" then more groups */
		s += 2;
		nt = ipv6_groups(&s, tail);
		if (nt < 0 || *s || nh + nt > 7)
			return -1;
	} else if (nh != 8) {
		return -1;
	}
	for (int i = 0; i < nh; i++)
		w[i] = head[i];
	for (int i = 0; i < nt; i++)
		w[8 - nt + i] = tail[i];
	for (int i = 0; i < 8; i++) {
		ip[2 * i] = (uint8_t)(w[i] >> 8);
		ip[2 * i + 1] = (uint8_t)w[i];
		zero &= (i < 7 ? w[i] == 0 : w[i] <= 1);
	}
	if (zero || ip[0] == 0xff || memcmp(ip, v4map, 12) == 0)
		return -1;
	return 0;
}

void snic_ipv6_default(uint32_t ipv4, uint8_t ip[16])
{
	memset(ip, 0, 16);
	ip[0] = 0xfd;
	ip[2] = 0x5e;
	ip[3] = 0x1c;
	ip[12] = (uint8_t)(ipv4 >> 24);
	ip[13] = (uint8_t)(ipv4 >> 16);
	ip[14] = (uint8_t)(ipv4 >> 8);
	ip[15] = (uint8_t)ipv4;
}
