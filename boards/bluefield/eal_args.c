/* SPDX-License-Identifier: MIT */
/*
 * The DPDK EAL arguments for the card: which Arm cores poll (-l), which
 * port the mlx5 driver opens (-a PCI address, with a representor when the
 * NIC serves a host function through the eswitch), and the hugepages
 * (EAL's default: the 2 MB or 512 MB pages the DPU's Linux reserved;
 * hal/dpdk adds its memory arguments).
 */
#include <stdio.h>
#include <unistd.h>

#include "bluefield.h"

/* Append one string to buf, return it (or NULL when buf is full). */
static char *put(char **pos, char *end, const char *fmt, const char *a,
		 const char *b)
{
	char *s = *pos;
	int n = snprintf(s, (size_t)(end - s), fmt, a, b);

	if (n < 0 || n >= end - s)
		return NULL;
	*pos = s + n + 1;
	return s;
}

int bf_eal_args(const struct bf_config *c, const char *prog, const char *pci,
		char **argv, char *buf, size_t buflen)
{
	char *pos = buf, *end = buf + buflen, cores[32];
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int argc = 0;

	/* Core 0 stays with Linux (OVS, the DOCA services, interrupts);
	 * the rest poll.  A 1-core system shares it. */
	if (c->cores != NULL)
		snprintf(cores, sizeof(cores), "%s", c->cores);
	else if (n > 1)
		snprintf(cores, sizeof(cores), "1-%ld", n - 1);
	else
		snprintf(cores, sizeof(cores), "0");
	argv[argc++] = put(&pos, end, "%s%s", prog, "");
	argv[argc++] = put(&pos, end, "-l%s%s", "", "");
	argv[argc++] = put(&pos, end, "%s%s", cores, "");
	argv[argc++] = put(&pos, end, "-a%s%s", "", "");
	if (c->representor != NULL)
		argv[argc++] = put(&pos, end, "%s,representor=%s", pci,
				   c->representor);
	else
		argv[argc++] = put(&pos, end, "%s%s", pci, "");
	argv[argc++] = put(&pos, end, "--file-prefix=snic-%s%s", c->name, "");
	for (int i = 0; i < argc; i++)
		if (argv[i] == NULL)
			return -1;
	return argc;
}
