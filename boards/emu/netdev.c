/* SPDX-License-Identifier: MIT */
/* The NICs' kernel network interfaces (netdev.h). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_tun.h>

#include "emu.h"
#include "netdev.h"
#include "snic/fw.h"

#define NETDEV_BURST   32u
#define NETDEV_FRAME   9216u    /* more than any MTU a port takes here */

static int said_unavailable;

static void say_unavailable(const char *what, int err)
{
	if (said_unavailable++)
		return;
	fprintf(stderr, "snic-emu: no kernel network interfaces for the NICs "
		"(%s: %s; they need root and /dev/net/tun); RDMA works "
		"without them, ping and getifaddrs do not see the NICs\n",
		what, strerror(err));
}

static int ifreq_ioctl(int sock, unsigned long req, struct ifreq *ifr,
		       const char *what)
{
	if (ioctl(sock, req, ifr) == 0)
		return 0;
	fprintf(stderr, "snic-emu: %s: %s: %s\n", ifr->ifr_name, what,
		strerror(errno));
	return -1;
}

static void set_in(struct sockaddr *sa, uint32_t host_order)
{
	struct sockaddr_in *in = (struct sockaddr_in *)(void *)sa;

	memset(in, 0, sizeof(*in));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(host_order);
}

/* No IPv6 on the interface: no router solicitations, MLD or DAD frames
 * on the NIC's port that nobody asked for. */
static void no_ipv6(const char *name)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 name);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fputs("1\n", f);
	fclose(f);
}

static int configure(const char *name, const uint8_t mac[6], uint32_t ipv4,
		     uint32_t mtu)
{
	struct ifreq ifr;
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (sock < 0) {
		fprintf(stderr, "snic-emu: %s: socket: %s\n", name,
			strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
	rc |= ifreq_ioctl(sock, SIOCSIFHWADDR, &ifr, "set MAC");
	ifr.ifr_mtu = (int)mtu;
	rc |= ifreq_ioctl(sock, SIOCSIFMTU, &ifr, "set MTU");
	no_ipv6(name);
	set_in(&ifr.ifr_addr, ipv4);
	rc |= ifreq_ioctl(sock, SIOCSIFADDR, &ifr, "set address");
	set_in(&ifr.ifr_netmask, ~0u << (32 - EMU_IPV4_PREFIX));
	rc |= ifreq_ioctl(sock, SIOCSIFNETMASK, &ifr, "set netmask");
	if (ifreq_ioctl(sock, SIOCGIFFLAGS, &ifr, "get flags") == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc |= ifreq_ioctl(sock, SIOCSIFFLAGS, &ifr, "bring up");
	} else {
		rc = -1;
	}
	close(sock);
	return rc;
}

int emu_netdev_open(struct emu_netdev *nd, const char *name,
		    const uint8_t mac[6], uint32_t ipv4, uint32_t mtu)
{
	struct ifreq ifr;

	memset(nd, 0, sizeof(*nd));
	nd->fd = -1;
	/* TUNSETIFF would attach to an existing (persistent) TAP of that
	 * name, and must never take over somebody else's interface. */
	if (if_nametoindex(name) != 0) {
		fprintf(stderr, "snic-emu: %s: a network interface named %s "
			"exists already; this NIC has none\n", name, name);
		return -1;
	}
	nd->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (nd->fd < 0) {
		say_unavailable("/dev/net/tun", errno);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(nd->fd, TUNSETIFF, &ifr) != 0) {
		int err = errno;

		emu_netdev_close(nd);
		if (err == EPERM || err == EACCES)
			say_unavailable("TUNSETIFF", err);
		else
			fprintf(stderr, "snic-emu: %s: cannot create network "
				"interface: %s\n", name, strerror(err));
		return -1;
	}
	snprintf(nd->name, sizeof(nd->name), "%s", ifr.ifr_name);
	if (configure(nd->name, mac, ipv4, mtu) != 0) {
		emu_netdev_close(nd);
		return -1;
	}
	return 0;
}

void emu_netdev_write(struct emu_netdev *nd, const void *frame, uint32_t len)
{
	/* non-blocking: a kernel that does not keep up loses frames, as a
	 * NIC's full RX ring would */
	if (nd->fd >= 0 && write(nd->fd, frame, len) != (ssize_t)len)
		nd->write_errors++;
}

unsigned emu_netdev_poll(struct emu_netdev *nd, struct snic_nic *fw)
{
	static uint8_t buf[NETDEV_FRAME];
	unsigned n = 0;

	if (nd->fd < 0)
		return 0;
	while (n < NETDEV_BURST) {
		ssize_t len = read(nd->fd, buf, sizeof(buf));

		if (len <= 0)
			break;  /* EAGAIN; EIO after the interface went away */
		snic_nic_netdev_tx(fw, buf, (uint32_t)len);
		n++;
	}
	return n;
}

void emu_netdev_close(struct emu_netdev *nd)
{
	if (nd->fd >= 0)
		close(nd->fd);
	nd->fd = -1;
}
