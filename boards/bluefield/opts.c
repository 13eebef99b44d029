/* SPDX-License-Identifier: MIT */
/* snic-bluefield's command line. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bluefield.h"
#include "netaddr.h"

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"usage: %s [options]\n"
"The snic firmware on a BlueField-2/3 DPU's Arm cores: one RDMA NIC on the\n"
"card's port, host memory and the host's BAR through NVIDIA DOCA.\n"
"\n"
"  --name NAME          NIC name (default snic0)\n"
"  --pci BDF            the ConnectX function (default: the first\n"
"                       BlueField-2/3 one, i.e. p0)\n"
"  --representor SPEC   mlx5 representor devarg, e.g. pf0vf0\n"
"  --cores LIST         EAL -l core list (default 1..n-1: core 0 stays\n"
"                       with Linux)\n"
"  --ip A.B.C.D         the NIC's IPv4 address (default 198.18.0.1)\n"
"  --sysfs DIR          where to look for PCI devices (default /sys)\n"
"  --print-eal          print the DPDK EAL arguments for the card and exit\n"
"  -h, --help           this text\n"
"\n"
"This build has no DOCA (Debian does not ship it): started anywhere, it\n"
"names what is missing and exits 1.  See boards/bluefield/README.md.\n",
		prog);
}

int bf_parse_opts(int argc, char **argv, struct bf_config *c)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "pci", required_argument, NULL, 'p' },
		{ "representor", required_argument, NULL, 'r' },
		{ "cores", required_argument, NULL, 'l' },
		{ "ip", required_argument, NULL, 'i' },
		{ "sysfs", required_argument, NULL, 's' },
		{ "print-eal", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	memset(c, 0, sizeof(*c));
	c->name = "snic0";
	c->sysfs = "/sys";
	c->ipv4 = 0xc6120001u;          /* 198.18.0.1 */
	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'n': c->name = optarg; break;
		case 'p': c->pci = optarg; break;
		case 'r': c->representor = optarg; break;
		case 'l': c->cores = optarg; break;
		case 's': c->sysfs = optarg; break;
		case 'e': c->print_eal = 1; break;
		case 'i':
			if (snic_parse_ipv4(optarg, &c->ipv4) != 0) {
				fprintf(stderr, "%s: bad --ip '%s'\n", argv[0], optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout, argv[0]); return -1;
		default: usage(stderr, argv[0]); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return 2;
	}
	if (strlen(c->name) == 0 || strlen(c->name) > 15) {
		fprintf(stderr, "%s: --name must be 1-15 characters\n", argv[0]);
		return 2;
	}
	return 0;
}
