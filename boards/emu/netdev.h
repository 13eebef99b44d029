/* SPDX-License-Identifier: MIT */
/*
 * The exception path of the emu board: a kernel network interface (a TAP)
 * per NIC, named after the NIC, with its MAC, MTU and IPv4 address (/24),
 * through which the kernel's ARP, ICMP, TCP and UDP other than RoCE go to
 * and from the NIC's port (the firmware's side: firmware/src/nic/netdev.c).
 * Made with /dev/net/tun directly (not DPDK's net_tap: that PMD is a port
 * of its own with its own queues and lcore, where this is a side channel
 * of a port the firmware already owns).  The interface exists while the
 * file descriptor is open: it goes when snic-emu stops, however it stops.
 */
#ifndef SNIC_EMU_NETDEV_H
#define SNIC_EMU_NETDEV_H

#include <stdint.h>

struct snic_nic;

struct emu_netdev {
	int fd;                 /* -1: no interface                         */
	char name[16];
	uint64_t write_errors;  /* frames the kernel did not take           */
};

/* Create the interface `name`.  0, or -1 when it cannot be made (said on
 * stderr: once per process for a cause every NIC shares, such as no
 * permission or no /dev/net/tun; per NIC when the name is taken). */
int emu_netdev_open(struct emu_netdev *nd, const char *name,
		    const uint8_t mac[6], uint32_t ipv4, uint32_t mtu);

/* A frame from the port for the kernel (the HAL's netdev_rx). */
void emu_netdev_write(struct emu_netdev *nd, const void *frame, uint32_t len);

/* Frames the kernel sent, up to a burst, handed to the firmware
 * (snic_nic_netdev_tx).  Returns how many. */
unsigned emu_netdev_poll(struct emu_netdev *nd, struct snic_nic *fw);

void emu_netdev_close(struct emu_netdev *nd);

#endif /* SNIC_EMU_NETDEV_H */
