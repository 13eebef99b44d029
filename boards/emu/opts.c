/* SPDX-License-Identifier: MIT */
/*
 * snic-emu's command line: the board's options, one --nic per NIC, and the
 * DPDK EAL arguments after "--" (passed to EAL unchanged).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "netaddr.h"
#include "emu_fault.h"
#include "hal_posix.h"
#include "users.h"

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"usage: %s [options] [--nic SPEC]... [-- DPDK EAL arguments]\n"
"Serve emulated RDMA NICs until SIGINT or SIGTERM.\n"
"\n"
"Without --nic: two NICs, snic0 (198.18.0.1, fd00:5e1c::c612:1) and snic1\n"
"(198.18.0.2, fd00:5e1c::c612:2), wired back to back through an in-process ring pair, sharing host0.mem.\n"
"\n"
"With --nic: one NIC per --nic, each on the DPDK port named in its SPEC;\n"
"the process is one host, with its own host-memory file.\n"
"  --nic NAME,port=DEV[,ip=A.B.C.D][,ip6=X:X::X][,mac=XX:..][,mtu=N]\n"
"      [,pcap=FILE][,netdev=on|off][,gw=A.B.C.D][,route=A.B.C.D/N@GW]\n"
"      NAME   device name verbs programs open (letters, digits, _ or -,\n"
"             at most 15 characters, starting with a letter)\n"
"      port   DPDK port name: a --vdev name (net_memif0, net_af_packet0...)\n"
"             or a PCI address given with -a (0000:03:00.0)\n"
"      ip     IPv4 address, GID 0 (default for snicN: 198.18.0.N+1)\n"
"      ip6    IPv6 address, GID 1 (default: fd00:5e1c:: with the IPv4\n"
"             address in its last 32 bits, a unique local address)\n"
"      mac    default 02:00 followed by the four bytes of ip\n"
"      mtu    IP MTU of the port (default: 4200, or less if the driver\n"
"             allows less); RoCE path MTU is the largest that fits\n"
"      pcap   capture every frame the port sends and receives to FILE\n"
"      netdev on: a kernel network interface NAME with the NIC's MAC and\n"
"             address/24 carries what is not RoCE (root); default: on\n"
"             unless the port is a kernel interface (af_packet, tap, pcap)\n"
"      gw     default router: RoCE to a destination outside address/24\n"
"             goes to its MAC when the program's host names no route\n"
"      route  a static route (up to 8 with gw), e.g.\n"
"             route=198.18.2.0/24@198.18.1.254; the longest match wins\n"
"options:\n"
"  --host-mem NAME        host-memory file in the run dir (default: host0.mem\n"
"                         for the pair, else the first NIC's NAME.mem)\n"
"  --host-mem-size BYTES  host-memory window (default 1G; K/M/G suffixes,\n"
"                         multiple of 4096)\n"
"  --pcap FILE            default pair only: capture snic0's port to FILE\n"
"  --no-netdev            no kernel network interface for any NIC\n"
"  --cores N              firmware cores per NIC, one thread each (1..16;\n"
"                         default $SNIC_EMU_CORES, else 1): core 0 polls\n"
"                         the ports and steers by destination QPN\n"
"  --run-dir DIR          runtime files (default $SNIC_RUN_DIR or\n"
"                         " SNIC_RUN_DIR_DEFAULT ")\n"
"  --users GROUP          the NICs are also GROUP's members' (other uids:\n"
"                         run dir 0750, BARs 0640, broker sockets 0660 to\n"
"                         GROUP; host memory and admin sockets stay ours);\n"
"                         \"all\": every local user's; default: ours only\n"
"  --link-timeout SECS    fail unless every port's link is up within SECS\n"
"                         of start (default %u; 0 = do not wait)\n"
"  --fault SPEC           faults on every port's receive path, e.g.\n"
"                         loss=0.05,dup=0.01,reorder=0.01,corrupt=0.001,seed=N\n"
"                         (rates 0..1; delay_us=, delay_min_us=: hold time\n"
"                         of reordered frames)\n"
"  --help                 this text\n"
"\n"
"Common set-ups (each process needs its own CPU when busy; EAL's\n"
"--file-prefix defaults to snic-<first NIC name>):\n"
"  two NIC processes over memif (either may start first):\n"
"    %s --nic snic0,port=net_memif0,ip=198.18.0.1 -- \\\n"
"        --vdev=net_memif0,role=server,socket=/run/snic/memif.sock,socket-abstract=no\n"
"    %s --nic snic1,port=net_memif0,ip=198.18.0.2 -- \\\n"
"        --vdev=net_memif0,role=client,socket=/run/snic/memif.sock,socket-abstract=no\n"
"  a NIC on a kernel interface (e.g. a veth in a network namespace):\n"
"    %s --nic snic0,port=net_af_packet0,ip=198.18.0.1 -- \\\n"
"        --vdev=net_af_packet0,iface=veth0,framesz=8192,blocksz=8192\n"
"  a NIC on a PCI port DPDK drives:\n"
"    %s --nic snic0,port=0000:03:00.0,ip=10.0.0.1 -- -a 0000:03:00.0\n",
		prog, EMU_LINK_TIMEOUT, prog, prog, prog, prog);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end != '\0' || (shift != 0 && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
		*out > max) ? -1 : 0;
}

/* Device names end up in file names and in verbs' ibv_device.name. */
static int valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15 || !((s[0] >= 'a' && s[0] <= 'z') ||
				  (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* snicN -> 198.18.0.N+1 (the default pair's addresses). */
static int default_ip(const char *name, uint32_t *ip)
{
	unsigned long n;

	if (strncmp(name, "snic", 4) != 0 || parse_uint(name + 4, 253, &n))
		return -1;
	*ip = 0xc6120000u | (uint32_t)(n + 1);
	return 0;
}

/* NET/LEN@GW (route=) or GW (gw=, the default route). */
static int parse_route(struct emu_nic_spec *n, char *val, int dflt)
{
	struct snic_ipv4_route r = { 0 };
	char *at = strchr(val, '@'), *slash;
	unsigned long len = 0;

	if (n->nroutes >= SNIC_MAX_ROUTES)
		return -1;
	if (!dflt) {
		slash = strchr(val, '/');
		if (!at || !slash || slash > at)
			return -1;
		*slash = *at = '\0';
		if (snic_parse_ipv4(val, &r.dst) || parse_uint(slash + 1, 32, &len))
			return -1;
		val = at + 1;
	}
	if (snic_parse_ipv4(val, &r.gw) || r.gw == 0)
		return -1;
	r.plen = (uint8_t)len;
	n->routes[n->nroutes++] = r;
	return 0;
}

static int nic_key(struct emu_nic_spec *n, const char *key, char *val)
{
	unsigned long v;

	if (strcmp(key, "port") == 0) {
		if (val[0] == '\0' || strlen(val) >= sizeof(n->port))
			return -1;
		strcpy(n->port, val);
	} else if (strcmp(key, "ip") == 0) {
		return snic_parse_ipv4(val, &n->ipv4);
	} else if (strcmp(key, "ip6") == 0) {
		n->have_ip6 = 1;
		return snic_parse_ipv6(val, n->ipv6);
	} else if (strcmp(key, "mac") == 0) {
		return snic_parse_mac(val, n->mac);
	} else if (strcmp(key, "mtu") == 0) {
		if (parse_uint(val, 65535, &v) != 0 || v < 576)
			return -1;
		n->mtu = (uint32_t)v;
	} else if (strcmp(key, "netdev") == 0) {
		if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0)
			return -1;
		n->netdev = strcmp(val, "off") == 0 ? EMU_NETDEV_OFF
						     : EMU_NETDEV_ON;
	} else if (strcmp(key, "gw") == 0 || strcmp(key, "route") == 0) {
		return parse_route(n, val, key[0] == 'g');
	} else if (strcmp(key, "pcap") == 0) {
		if (val[0] == '\0')
			return -1;
		n->pcap = val;
	} else {
		return -2;
	}
	return 0;
}

/* NAME,key=value,...  (spec is modified in place and must outlive n). */
static int parse_nic(char *spec, struct emu_nic_spec *n)
{
	char *save = NULL, *tok = strtok_r(spec, ",", &save);
	int have_mac = 0;

	memset(n, 0, sizeof(*n));
	if (tok == NULL || strchr(tok, '=') != NULL || !valid_name(tok)) {
		fprintf(stderr, "snic-emu: --nic: invalid NIC name '%s' (1..15 "
			"letters, digits, '_' or '-', starting with a letter)\n",
			tok ? tok : "");
		return -1;
	}
	strcpy(n->name, tok);
	n->ipv4 = 0;
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		char *eq = strchr(tok, '=');
		int r;

		if (eq == NULL) {
			fprintf(stderr, "snic-emu: --nic %s: '%s' is not "
				"key=value\n", n->name, tok);
			return -1;
		}
		*eq = '\0';
		r = nic_key(n, tok, eq + 1);
		if (r == -2) {
			fprintf(stderr, "snic-emu: --nic %s: unknown key '%s' "
				"(port, ip, ip6, mac, mtu, pcap, netdev, gw, route)\n", n->name, tok);
			return -1;
		}
		if (r != 0) {
			fprintf(stderr, "snic-emu: --nic %s: bad %s '%s'\n",
				n->name, tok, eq + 1);
			return -1;
		}
		have_mac |= strcmp(tok, "mac") == 0;
	}
	if (n->port[0] == '\0') {
		fprintf(stderr, "snic-emu: --nic %s: port=DEV is required (a "
			"DPDK port name, e.g. net_memif0)\n", n->name);
		return -1;
	}
	if (n->ipv4 == 0 && default_ip(n->name, &n->ipv4) != 0) {
		fprintf(stderr, "snic-emu: --nic %s: ip=A.B.C.D is required "
			"(only snicN names have a default)\n", n->name);
		return -1;
	}
	for (unsigned i = 0; i < n->nroutes; i++)
		if ((n->routes[i].gw ^ n->ipv4) >> (32 - EMU_IPV4_PREFIX) ||
		    n->routes[i].gw == n->ipv4) {
			fprintf(stderr, "snic-emu: --nic %s: a gateway must be "
				"another address of the NIC's /%u\n", n->name,
				EMU_IPV4_PREFIX);
			return -1;
		}
	if (!n->have_ip6)
		snic_ipv6_default(n->ipv4, n->ipv6);
	if (!have_mac) {
		n->mac[0] = 0x02;       /* locally administered */
		n->mac[1] = 0x00;
		for (int i = 0; i < 4; i++)
			n->mac[2 + i] = (uint8_t)(n->ipv4 >> (24 - 8 * i));
	}
	return 0;
}

static int check_nics(const struct emu_opts *o)
{
	for (unsigned i = 0; i < o->nnics; i++) {
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(o->nic[i].name, o->nic[j].name) == 0 ||
			    strcmp(o->nic[i].port, o->nic[j].port) == 0 ||
			    o->nic[i].ipv4 == o->nic[j].ipv4 ||
			    memcmp(o->nic[i].ipv6, o->nic[j].ipv6, 16) == 0) {
				fprintf(stderr, "snic-emu: --nic %s and --nic %s "
					"share a name, port or address\n",
					o->nic[j].name, o->nic[i].name);
				return -1;
			}
		}
	}
	if (o->pcap != NULL && o->nnics != 0) {
		fprintf(stderr, "snic-emu: --pcap is for the default pair; with "
			"--nic, capture per NIC with pcap=FILE\n");
		return -1;
	}
	if (o->host_mem != NULL &&
	    (o->host_mem[0] == '\0' || strchr(o->host_mem, '/') != NULL ||
	     strlen(o->host_mem) >= 64)) {
		fprintf(stderr, "snic-emu: bad --host-mem '%s' (a file name in "
			"the run dir, no '/', under 64 characters)\n", o->host_mem);
		return -1;
	}
	return 0;
}

static int parse_cores(const char *arg, struct emu_opts *o)
{
	unsigned long v;

	if (parse_uint(arg, EMU_MAX_CORES, &v) != 0 || v == 0) {
		fprintf(stderr, "snic-emu: bad core count '%s' (1..%d)\n", arg,
			EMU_MAX_CORES);
		return -1;
	}
	o->cores = (unsigned)v;
	return 0;
}

static int parse_one(int c, struct emu_opts *o)
{
	unsigned long v;

	switch (c) {
	case 'n':
		if (o->nnics == EMU_MAX_NICS) {
			fprintf(stderr, "snic-emu: at most %d --nic\n",
				EMU_MAX_NICS);
			return -1;
		}
		return parse_nic(optarg, &o->nic[o->nnics++]);
	case 'm':
		o->host_mem = optarg;
		return 0;
	case 'p':
		o->pcap = optarg;
		return 0;
	case 'r':
		o->run_dir = optarg;
		return 0;
	case 'N':
		o->no_netdev = 1;
		return 0;
	case 'f':
		return emu_fault_parse(optarg);
	case 't':
		if (parse_uint(optarg, 3600, &v) != 0) {
			fprintf(stderr, "snic-emu: bad --link-timeout '%s' "
				"(seconds, 0..3600)\n", optarg);
			return -1;
		}
		o->link_timeout_s = (unsigned)v;
		return 0;
	case 'c':
		return parse_cores(optarg, o);
	case 'u':
		return snic_users_parse("snic-emu", optarg, &o->users);
	case 's':
		if (parse_size(optarg, &o->host_mem_size) != 0) {
			fprintf(stderr, "snic-emu: bad --host-mem-size '%s'\n",
				optarg);
			return -1;
		}
		return 0;
	default:
		return -1;
	}
}

int emu_parse_opts(int argc, char **argv, struct emu_opts *o)
{
	static const struct option longopts[] = {
		{ "nic", required_argument, NULL, 'n' },
		{ "host-mem", required_argument, NULL, 'm' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "host-mem-size", required_argument, NULL, 's' },
		{ "link-timeout", required_argument, NULL, 't' },
		{ "fault", required_argument, NULL, 'f' },
		{ "no-netdev", no_argument, NULL, 'N' },
		{ "cores", required_argument, NULL, 'c' },
		{ "users", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->host_mem_size = SNIC_HOSTMEM_SIZE_DEFAULT;
	o->link_timeout_s = EMU_LINK_TIMEOUT;
	o->cores = 1;
	o->users = SNIC_USERS_NONE;
	if (getenv("SNIC_EMU_CORES") && *getenv("SNIC_EMU_CORES") &&
	    parse_cores(getenv("SNIC_EMU_CORES"), o) != 0)
		return 2;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout, argv[0]);
			exit(0);
		}
		if (c == '?') {
			usage(stderr, argv[0]);
			return 2;
		}
		if (parse_one(c, o) != 0)
			return 2;
	}
	/* getopt stops after "--" (optind past it) or at a non-option. */
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		fprintf(stderr, "snic-emu: unexpected argument '%s' (DPDK EAL "
			"arguments go after '--')\n", argv[optind]);
		return 2;
	}
	if (check_nics(o) != 0)
		return 2;
	for (unsigned i = 0; i < o->nnics; i++)
		if (o->no_netdev)
			o->nic[i].netdev = EMU_NETDEV_OFF;
	o->eal_argc = argc - optind;
	o->eal_argv = argv + optind;
	return 0;
}
