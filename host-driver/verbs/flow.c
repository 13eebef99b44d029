/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: raw packet QPs' privilege check and flow steering
 * (ibv_create_flow / ibv_destroy_flow).  A flow's specs (ETH, IPV4,
 * UDP/TCP; values and masks in network order, as on the wire) become one
 * masked rule for the firmware (hostif.h FLOW_CREATE, objects/flow.c).
 * Other spec types, flow types other than NORMAL, flags and comp_mask:
 * EOPNOTSUPP, as a provider that lacks them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "verbs/verbs.h"

/* Raw packet QPs need CAP_NET_RAW in the caller's effective set, as the
 * kernel's mlx5 (and every RDMA driver through ib_uverbs) asks. */
int hd_raw_qp_allowed(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return 0;
	return (d[CAP_NET_RAW / 32].effective >> (CAP_NET_RAW % 32)) & 1u;
}

static void spec_eth(struct snic_cmd_flow *in, const struct ibv_flow_spec_eth *s)
{
	in->layers |= SNIC_FLOW_L_ETH;
	memcpy(in->val.dmac, s->val.dst_mac, 6);
	memcpy(in->mask.dmac, s->mask.dst_mac, 6);
	memcpy(in->val.smac, s->val.src_mac, 6);
	memcpy(in->mask.smac, s->mask.src_mac, 6);
	in->val.ether_type = s->val.ether_type;
	in->mask.ether_type = s->mask.ether_type;
}

static void spec_ipv4(struct snic_cmd_flow *in, const struct ibv_flow_spec_ipv4 *s)
{
	in->layers |= SNIC_FLOW_L_IPV4;
	in->val.sip = s->val.src_ip;
	in->mask.sip = s->mask.src_ip;
	in->val.dip = s->val.dst_ip;
	in->mask.dip = s->mask.dst_ip;
}

static void spec_l4(struct snic_cmd_flow *in, const struct ibv_flow_spec_tcp_udp *s)
{
	/* a port implies IPv4 (the only L3 we steer) */
	in->layers |= SNIC_FLOW_L_IPV4 |
		      (s->type == IBV_FLOW_SPEC_UDP ? SNIC_FLOW_L_UDP : SNIC_FLOW_L_TCP);
	in->val.dport = s->val.dst_port;
	in->mask.dport = s->mask.dst_port;
	in->val.sport = s->val.src_port;
	in->mask.sport = s->mask.src_port;
}

/* The specs after the attribute into in; 0 or an errno value.  Each is
 * copied out first: applications pack them (rdma-core's examples use
 * packed structs), so one may sit at any 4-byte boundary. */
static int flow_specs(const struct ibv_flow_attr *attr, struct snic_cmd_flow *in)
{
	const uint8_t *p = (const uint8_t *)(attr + 1);
	const uint8_t *end = (const uint8_t *)attr + attr->size;

	if (attr->size < sizeof(*attr))
		return EINVAL;
	for (unsigned i = 0; i < attr->num_of_specs; i++) {
		struct ibv_flow_spec u;
		const struct ibv_flow_spec *s = &u;
		uint16_t size;

		/* every spec inside the attribute's size (ib_uverbs' check) */
		if ((size_t)(end - p) < offsetof(struct ibv_flow_spec, hdr.size) + sizeof(size))
			return EINVAL;
		memcpy(&size, p + offsetof(struct ibv_flow_spec, hdr.size), sizeof(size));
		if (size == 0 || size > (size_t)(end - p))
			return EINVAL;
		memset(&u, 0, sizeof(u));
		memcpy(&u, p, size < sizeof(u) ? size : sizeof(u));
		switch (s->hdr.type) {
		case IBV_FLOW_SPEC_ETH:
			if (s->hdr.size < sizeof(s->eth))
				return EINVAL;
			spec_eth(in, &s->eth);
			break;
		case IBV_FLOW_SPEC_IPV4:
			if (s->hdr.size < sizeof(s->ipv4))
				return EINVAL;
			spec_ipv4(in, &s->ipv4);
			break;
		case IBV_FLOW_SPEC_UDP:
		case IBV_FLOW_SPEC_TCP:
			if (s->hdr.size < sizeof(s->tcp_udp))
				return EINVAL;
			spec_l4(in, &s->tcp_udp);
			break;
		default:
			return EOPNOTSUPP; /* IPv6, tunnels, actions ... */
		}
		p += size;
	}
	return 0;
}

struct ibv_flow *hd_create_flow(struct ibv_qp *ibqp, struct ibv_flow_attr *attr)
{
	struct snic_cmd_flow in;
	struct snic_cmd_handle out;
	struct ibv_flow *f;
	int err;

	if (!attr || attr->comp_mask || attr->flags || attr->type != IBV_FLOW_ATTR_NORMAL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->port != 1 || attr->num_of_specs == 0 ||
	    ibqp->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EINVAL;
		return NULL;
	}
	memset(&in, 0, sizeof(in));
	in.qpn = ibqp->qp_num;
	in.priority = attr->priority;
	err = flow_specs(attr, &in);
	if (err) {
		errno = err;
		return NULL;
	}
	f = hd_cmd_new(to_hd_ctx(ibqp->context), sizeof(*f), SNIC_CMD_FLOW_CREATE,
		       &in, sizeof(in), &out, sizeof(out));
	if (!f)
		return NULL;
	f->context = ibqp->context;
	f->handle = out.handle;
	return f;
}

int hd_destroy_flow(struct ibv_flow *f)
{
	struct snic_cmd_handle in = { .handle = f->handle };
	int err = hd_cmd(to_hd_ctx(f->context), SNIC_CMD_FLOW_DESTROY, &in,
			 sizeof(in), NULL, 0);

	/* gone with its QP, or the firmware is gone: the host side goes too */
	if (err && err != EINVAL && !hd_fw_gone(err))
		return err;
	free(f);
	return 0;
}
