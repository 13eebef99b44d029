/* SPDX-License-Identifier: MIT */
/*
 * The view of snic's RDMA devices that programs outside our libibverbs
 * look for (UCX, Open MPI): a sysfs-shaped tree in the run directory and a
 * device node per NIC in /dev/infiniband.
 *
 *   <run dir>/sys/class/infiniband/<nic>/...        node_guid, fw_ver,
 *       ports/1/{state,link_layer,gids/0,gid_attrs/types/0,...},
 *       device/{numa_node,local_cpus}
 *   <run dir>/sys/class/infiniband_verbs/<dev>/ibdev  "<nic>" (rdma-core's
 *       way of pairing a verbs device node with its RDMA device)
 *   /dev/infiniband/<dev>                             character device
 *
 * <dev> is "uverbs-<nic>-<8 hex digits of a hash of the run dir>": it can
 * never collide with a kernel verbs node (uverbsN) nor with the same NIC
 * name of another emulator in another run dir.  No kernel driver answers
 * the node (its major is one Linux reserves for local/experimental use and
 * no driver on this machine registered): open() fails with ENXIO.  UCX only
 * checks that the node is a character device it may open for reading and
 * writing; our libibverbs never opens it.
 */
#ifndef SNIC_EMU_DEVVIEW_H
#define SNIC_EMU_DEVVIEW_H

#include <stdint.h>

struct devview_nic {
	const char *name;       /* "snic0"                                  */
	uint32_t ipv4;          /* host order                               */
	uint8_t ipv6[16];       /* network order, GID 1                     */
	uint64_t node_guid;
	uint32_t eth_mtu;
	const char *netdev;     /* the port's name, for gid_attrs/ndevs     */
};

/* Write the sysfs view of the NICs and create their device nodes.  Never
 * fails the emulator: what cannot be made is said once on stderr (with
 * the command that would make it) and skipped. */
void devview_create(const char *run_dir, const struct devview_nic *nics,
		    unsigned n);

/* Port state changed (ports/1/state and phys_state). */
void devview_link(const char *run_dir, const char *nic, int up);

/* Remove the sysfs view and the device nodes created by devview_create. */
void devview_remove(void);

#endif /* SNIC_EMU_DEVVIEW_H */
