/* SPDX-License-Identifier: MIT */
/*
 * snic-bluefield internals shared by its files: the board configuration,
 * finding the card, and the DPDK EAL arguments that select its port.
 */
#ifndef SNIC_BLUEFIELD_H
#define SNIC_BLUEFIELD_H

#include <stddef.h>
#include <stdint.h>

#define BF_MAX_EAL_ARGS 16

struct bf_config {
	const char *name;        /* NIC name, "snic0"                        */
	const char *pci;         /* ConnectX function, NULL: the first found */
	const char *representor; /* mlx5 representor devarg, e.g. "pf0vf0"   */
	const char *cores;       /* EAL -l list, NULL: 1..n-1 (core 0 = OS)  */
	const char *sysfs;       /* where PCI devices are listed ("/sys")    */
	uint32_t ipv4;           /* host order                               */
	int print_eal;           /* print the EAL arguments and exit         */
};

/* Parse the command line.  0, or the exit status (2 after a message,
 * -1 after --help). */
int bf_parse_opts(int argc, char **argv, struct bf_config *c);

/* The BlueField's integrated ConnectX functions: PCI vendor 0x15b3,
 * device 0xa2d6 (BlueField-2, ConnectX-6 Dx) or 0xa2dc (BlueField-3,
 * ConnectX-7).  Fills pci with the first one (or checks c->pci is one)
 * and model with "BlueField-2"/"BlueField-3".  0, or -1 with a sentence
 * in why. */
int bf_card_find(const struct bf_config *c, char *pci, size_t pcilen,
		 const char **model, char *why, size_t whylen);

/* The EAL arguments for the card's port: -l CORES, -a PCI[,representor=..]
 * and a file prefix.  Returns argc (argv[0] is prog); strings live in buf. */
int bf_eal_args(const struct bf_config *c, const char *prog, const char *pci,
		char **argv, char *buf, size_t buflen);

#endif /* SNIC_BLUEFIELD_H */
