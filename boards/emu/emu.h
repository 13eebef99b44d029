/* SPDX-License-Identifier: MIT */
/*
 * snic-emu internals shared by its files: the command line (opts.c) and the
 * checks made on DPDK device arguments before EAL sees them (vdev_check.c).
 */
#ifndef SNIC_EMU_H
#define SNIC_EMU_H

#include <stdint.h>
#include <stdio.h>

#include "snic/fw.h"

#define EMU_MAX_NICS     8
#define EMU_MAX_CORES    16     /* --cores: the firmware's most per NIC */
/* A NIC's IPv4 subnet: its interface's netmask (netdev.c), on-link for
 * the NIC's routes (gw=, route=) */
#define EMU_IPV4_PREFIX  24u
/* IP MTU of the ports: a path-MTU-4096 RoCEv2 packet carries 4096 bytes of
 * payload behind IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4
 * bytes (IPv6: 20 more), so 4200 leaves room; frames are up to 4214 bytes
 * and fit SNIC_DPDK_FRAME_MAX.  A port whose driver allows less gets its
 * driver's maximum unless mtu= says otherwise. */
#define EMU_ETH_MTU      4200u
#define EMU_LINK_TIMEOUT 30u    /* seconds a port may take to come up     */

/* A NIC's kernel network interface (netdev.c): by default, only when the
 * port is not itself an interface of this host's kernel (af_packet, tap,
 * pcap, af_xdp): there the kernel would also take the NIC's RoCE frames
 * for an address it now owns (ICMP port unreachable) and answer ARP for
 * it through that interface. */
enum emu_netdev_mode { EMU_NETDEV_AUTO = 0, EMU_NETDEV_ON, EMU_NETDEV_OFF };

/* One --nic NAME,port=DEV[,ip=A.B.C.D][,ip6=X:Y::Z][,mac=M][,mtu=N]
 * [,pcap=FILE][,netdev=on|off]. */
struct emu_nic_spec {
	char name[16];
	char port[64];          /* DPDK port name (vdev name, PCI address)  */
	uint32_t ipv4;          /* host order                               */
	uint8_t ipv6[16];       /* network order (GID 1)                    */
	int have_ip6;           /* ip6= given; else derived from the IPv4   */
	uint8_t mac[6];
	uint32_t mtu;           /* 0: the port's maximum, at most 4200      */
	const char *pcap;       /* capture file or NULL                     */
	int netdev;             /* enum emu_netdev_mode                     */
	unsigned nroutes;       /* route= and gw= (wire/route.c)            */
	struct snic_ipv4_route routes[SNIC_MAX_ROUTES];
};

struct emu_opts {
	const char *pcap;       /* default pair only                        */
	const char *run_dir;
	const char *host_mem;   /* host-memory file name in the run dir     */
	uint64_t host_mem_size;
	unsigned link_timeout_s;
	unsigned nnics;         /* 0: the default pair over a ring pair     */
	int no_netdev;          /* --no-netdev: no NIC gets an interface    */
	unsigned cores;         /* --cores: firmware loops (threads) per NIC */
	long users;             /* --users: who besides us (hal/posix/users.h) */
	struct emu_nic_spec nic[EMU_MAX_NICS];
	int eal_argc;
	char **eal_argv;
};

/* Parse the command line.  0, or the exit status (2 after a message). */
int emu_parse_opts(int argc, char **argv, struct emu_opts *o);

/* Before EAL: for every --vdev=net_memif...,socket=PATH with
 * socket-abstract=no, check that PATH's directory exists, and for a server
 * remove a stale socket file (one nobody listens on, left by a killed
 * process).  0, or -1 after a message. */
int emu_check_vdevs(int argc, char **argv);

/* 1 when DPDK port `port` is a memif client: the only kind that must be
 * stopped and started again to reconnect after its peer restarted (a
 * server keeps listening; restarting it would drop its listener). */
int emu_vdev_restartable(int argc, char **argv, const char *port);

#endif /* SNIC_EMU_H */
