/* SPDX-License-Identifier: MIT */
/*
 * Addresses: the library keeps every IP address as a RoCE v2 GID holds
 * it (IPv6, or IPv4 mapped ::ffff:a.b.c.d, RFC 4291 2.5.5.2), so that
 * one code path serves AF_INET and AF_INET6 ids; sockaddrs are made at
 * the edges, in the family the application used.
 */
#include <arpa/inet.h>
#include <string.h>

#include "cma.h"

struct cma_ip cma_ip_v4(uint32_t ip)
{
	struct cma_ip a = { .b = { [10] = 0xff, [11] = 0xff } };

	a.b[12] = (uint8_t)(ip >> 24);
	a.b[13] = (uint8_t)(ip >> 16);
	a.b[14] = (uint8_t)(ip >> 8);
	a.b[15] = (uint8_t)ip;
	return a;
}

bool cma_ip_is_v4(const struct cma_ip *a, uint32_t *ip4)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(a->b, prefix, 12) != 0)
		return false;
	if (ip4)
		*ip4 = (uint32_t)a->b[12] << 24 | (uint32_t)a->b[13] << 16 |
		       (uint32_t)a->b[14] << 8 | a->b[15];
	return true;
}

bool cma_ip_is_any(const struct cma_ip *a)
{
	static const struct cma_ip none;
	uint32_t ip4;

	return memcmp(a, &none, sizeof(none)) == 0 ||
	       (cma_ip_is_v4(a, &ip4) && ip4 == 0);
}

bool cma_ip_eq(const struct cma_ip *a, const struct cma_ip *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

bool cma_ip_is_loopback(const struct cma_ip *a)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	uint32_t ip4;

	if (cma_ip_is_v4(a, &ip4))
		return (ip4 >> 24) == 127;
	return memcmp(a->b, lo6, 16) == 0;
}

bool cma_ip_bad_dst(const struct cma_ip *a)
{
	uint32_t ip4;

	if (cma_ip_is_any(a))
		return true;
	if (cma_ip_is_v4(a, &ip4))
		return ip4 == 0xffffffffu || (ip4 >> 28) == 0xe;
	return a->b[0] == 0xff; /* IPv6 multicast, ff00::/8 */
}

int cma_sockaddr_ip(const struct sockaddr *sa, struct cma_ip *ip, uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		*ip = cma_ip_v4(ntohl(s->sin_addr.s_addr));
		*port = ntohs(s->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		memcpy(ip->b, s->sin6_addr.s6_addr, 16);
		if (IN6_IS_ADDR_UNSPECIFIED(&s->sin6_addr))
			*ip = cma_ip_v4(0);
		*port = ntohs(s->sin6_port);
		return 0;
	}
	/* AF_IB needs a port with IB addressing: a RoCE host has none (the
	 * kernel's cma_validate_port / cma_resolve_ib_dev: ENODEV); another
	 * family has no sockaddr length (rdma-core's ucma_addrlen: EINVAL) */
	return sa->sa_family == AF_IB ? ENODEV : EINVAL;
}

void cma_ip_sockaddr(struct sockaddr_storage *ss, const struct cma_ip *a,
		     uint16_t port, int v6)
{
	uint32_t ip4;

	memset(ss, 0, sizeof(*ss));
	if (!v6 && cma_ip_is_v4(a, &ip4)) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = htonl(ip4);
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		if (!cma_ip_is_any(a))
			memcpy(s->sin6_addr.s6_addr, a->b, 16);
		s->sin6_port = htons(port);
	}
}

const char *cma_ip_str(const struct cma_ip *a, char *buf, size_t len)
{
	uint32_t ip4;

	if (cma_ip_is_v4(a, &ip4)) {
		struct in_addr in = { .s_addr = htonl(ip4) };

		return inet_ntop(AF_INET, &in, buf, (socklen_t)len);
	}
	return inet_ntop(AF_INET6, a->b, buf, (socklen_t)len);
}
