/* SPDX-License-Identifier: MIT */
/*
 * Finding the BlueField's ConnectX function among the PCI devices Linux
 * lists (on the card's Arm cores: the embedded NIC's physical functions,
 * p0 and p1).  Only sysfs is read; DPDK's mlx5 driver probes the device
 * later, from the -a argument made in eal_args.c.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "bluefield.h"

#define MLX_VENDOR 0x15b3u

static const struct {
	unsigned device;
	const char *model;
} bf_ids[] = {
	{ 0xa2d6u, "BlueField-2" },   /* integrated ConnectX-6 Dx */
	{ 0xa2dcu, "BlueField-3" },   /* integrated ConnectX-7    */
};

static unsigned read_hex(const char *dir, const char *dev, const char *file)
{
	char path[512];
	unsigned v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, dev, file);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%x", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The model of PCI device `dev`, or NULL when it is no BlueField NIC. */
static const char *bf_model(const char *dir, const char *dev)
{
	unsigned id;

	if (read_hex(dir, dev, "vendor") != MLX_VENDOR)
		return NULL;
	id = read_hex(dir, dev, "device");
	for (size_t i = 0; i < sizeof(bf_ids) / sizeof(bf_ids[0]); i++)
		if (bf_ids[i].device == id)
			return bf_ids[i].model;
	return NULL;
}

int bf_card_find(const struct bf_config *c, char *pci, size_t pcilen,
		 const char **model, char *why, size_t whylen)
{
	char dir[256];
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", c->sysfs);
	dp = opendir(dir);
	if (dp != NULL) {
		/* readdir order is the kernel's: PCI address order. */
		while ((d = readdir(dp)) != NULL) {
			if (d->d_name[0] == '.' ||
			    (c->pci != NULL && strcmp(d->d_name, c->pci) != 0))
				continue;
			*model = bf_model(dir, d->d_name);
			if (*model != NULL) {
				snprintf(pci, pcilen, "%s", d->d_name);
				closedir(dp);
				return 0;
			}
		}
		closedir(dp);
	}
	if (c->pci != NULL)
		snprintf(why, whylen, "the card: %s is not a BlueField-2/3 "
			 "ConnectX function (want PCI 15b3:a2d6 or 15b3:a2dc "
			 "in %s)", c->pci, dir);
	else
		snprintf(why, whylen, "the card: no BlueField-2/3 ConnectX "
			 "function (PCI 15b3:a2d6 or 15b3:a2dc) in %s; run "
			 "snic-bluefield on the DPU's Arm cores", dir);
	return -1;
}
