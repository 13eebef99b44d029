/* SPDX-License-Identifier: MIT */
/*
 * The CM router (nic/cm_router.c) across two simulated NICs: MADs reach
 * only the listener of their ServiceID or the owner of their
 * communication ID, a context cannot send for another's ID, the firmware
 * answers what has no owner (REJ for an unknown ServiceID, DREP for a
 * dead connection), and a dying context's armed DREQ goes out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "wire/be.h"
#include "unit.h"

#define SID_X 0x0000000001061d2full
#define SID_Y 0x0000000001061d30ull

/* A CM MAD: attribute, our ID, the peer's ID, ServiceID at `sid_off`. */
static void mad(struct snic_cm_mad *m, uint32_t ip, uint16_t attr, uint32_t local,
		uint32_t remote, uint64_t sid)
{
	uint8_t *c = m->mad + SNIC_CM_HDR_LEN;

	memset(m, 0, sizeof(*m));
	m->peer_ip = ip;
	m->mad[0] = 1;
	m->mad[1] = SNIC_MAD_CLASS_CM;
	m->mad[2] = 2;
	m->mad[3] = SNIC_MAD_METHOD_SEND;
	m->mad[16] = (uint8_t)(attr >> 8);
	m->mad[17] = (uint8_t)attr;
	be32_put(c, local);
	if (attr == SNIC_CM_ATTR_REQ) {
		be64_put(c + 8, sid);
	} else {
		be32_put(c + 4, remote);
	}
}

static uint32_t cm_open(struct fctx *c)
{
	struct snic_cm_open o;

	CU_ASSERT_EQUAL_FATAL(fctx_cmd(c, SNIC_CMD_CM_OPEN, NULL, 0, &o, sizeof(o)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(o.cid_mask, 0xfffffu);
	return o.cid_base;
}

static int cm_recv(struct fctx *c, struct snic_cm_mad *m)
{
	return fctx_cmd(c, SNIC_CMD_CM_RECV, NULL, 0, m, sizeof(*m));
}

static uint16_t attr_of(const struct snic_cm_mad *m)
{
	return (uint16_t)(m->mad[16] << 8 | m->mad[17]);
}

static void test_cm_routing(void)
{
	struct fsim *s = fsim_new(4200);
	struct fctx a, b1, b2;
	struct snic_cm_listen l = { .service_id = SID_X };
	struct snic_cm_resolve r = { .ip = FSIM_IP_B, .send_arp = 1 }, ro;
	struct snic_cm_mad m, got;
	uint32_t ba, bb1, bb2, w0;

	CU_ASSERT_EQUAL_FATAL(fctx_open(&a, &s->a, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&b1, &s->b, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&b2, &s->b, 1), SNIC_ST_OK);
	/* no CM command before CM_OPEN */
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_INVAL);
	ba = cm_open(&a);
	bb1 = cm_open(&b1);
	bb2 = cm_open(&b2);
	CU_ASSERT_NOT_EQUAL(bb1, bb2);
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_BUSY);
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_UNLISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_PERM);

	/* the peer's MAC by ARP */
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE, &r, sizeof(r), &ro, sizeof(ro)), SNIC_ST_NOENT);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE, &r, sizeof(r), &ro, sizeof(ro)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(ro.mac[5], 0x0b);

	/* REQ to the listener only */
	w0 = atomic_load(&fdev_slot(&s->b, 0)->cm_pi);
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_REQ, ba | 1, 0, SID_X);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_NOT_EQUAL(atomic_load(&fdev_slot(&s->b, 0)->cm_pi), w0);
	CU_ASSERT_EQUAL(cm_recv(&b2, &got), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&b1, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(got.peer_ip, FSIM_IP_A);
	CU_ASSERT_EQUAL(got.peer_qpn, 1);
	CU_ASSERT_EQUAL(memcmp(got.mad, m.mad, SNIC_CM_MAD_SIZE), 0);
	CU_ASSERT_EQUAL(cm_recv(&b1, &got), SNIC_ST_NOENT);

	/* nobody speaks for another context's ID */
	mad(&m, FSIM_IP_A, SNIC_CM_ATTR_REP, bb1 | 5, ba | 1, 0);
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_send_refused"), 1);
	/* the owner may; the REP reaches A, addressed by A's ID */
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(&got), SNIC_CM_ATTR_REP);

	/* a REQ for a ServiceID nobody listens on: REJ reason 8 from the NIC */
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_REQ, ba | 2, 0, SID_Y);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(&got), SNIC_CM_ATTR_REJ);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN + 4), ba | 2);
	CU_ASSERT_EQUAL(got.mad[SNIC_CM_HDR_LEN + 11], 8);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_fw_replies"), 1);

	/* B1 arms its DREQ and dies: A hears it */
	mad(&m, FSIM_IP_A, SNIC_CM_ATTR_DREQ, bb1 | 5, ba | 1, 0);
	m.cid = bb1 | 5;
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_ARM, &m, sizeof(m), NULL, 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_ARM, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(&got), SNIC_CM_ATTR_DREQ);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN), bb1 | 5);

	/* its DREP reaches nobody; a DREQ for the dead connection gets a DREP */
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_DREQ, ba | 1, bb1 | 5, 0);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(&got), SNIC_CM_ATTR_DREP);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN + 4), ba | 1);
	/* the dead listener's ServiceID is free again */
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_OK);

	/* not a CM MAD: refused */
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_REQ, ba | 3, 0, SID_X);
	m.mad[1] = 0x04; /* performance management */
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

UNIT_SUITE(cm, NULL, NULL,
	   UNIT_TEST(test_cm_routing));
