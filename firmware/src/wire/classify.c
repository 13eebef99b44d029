/* SPDX-License-Identifier: MIT */
/*
 * A received frame the codec refused, counted by its reason (the
 * classification itself, wire_classify, is inline in wire.h: it runs for
 * every frame).
 */
#include "wire/wire.h"

void wire_count_drop(struct snic_core *c, enum roce_parse_result r)
{
	switch (r) {
	case ROCE_NOT_ROCE: CNT_INC(c, rx_drop_not_roce); break;
	case ROCE_ERR_TRUNCATED: CNT_INC(c, rx_drop_truncated); break;
	case ROCE_ERR_IP_HDR: CNT_INC(c, rx_drop_ip_hdr); break;
	case ROCE_ERR_UDP_LEN: CNT_INC(c, rx_drop_udp_len); break;
	case ROCE_ERR_BAD_OPCODE: CNT_INC(c, rx_drop_bad_opcode); break;
	case ROCE_ERR_BTH: CNT_INC(c, rx_drop_bth); break;
	case ROCE_ERR_ICRC: CNT_INC(c, rx_drop_icrc); break;
	case ROCE_OK: break;
	}
}
