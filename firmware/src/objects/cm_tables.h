/* SPDX-License-Identifier: MIT */
/*
 * The connection manager's tables (nic/cm_router.c runs them): who
 * listens on which ServiceID, the MADs queued for each context, the MADs
 * armed to be sent when a context dies, and each context's range of
 * communication IDs.  Fixed pools, sized here.
 */
#ifndef SNIC_OBJECTS_CM_TABLES_H
#define SNIC_OBJECTS_CM_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include <snic/hostif.h>

#define SNIC_CM_MAX_LISTEN   256
#define SNIC_CM_INBOX        256  /* MADs waiting for CM_RECV, all contexts */
#define SNIC_CM_INBOX_PER_CTX 128
#define SNIC_CM_MAX_ARMED    512

/* Communication ID: slot (6 bits) | generation (6 bits) | host's 20 bits. */
#define SNIC_CM_CID_CTX_SHIFT 26
#define SNIC_CM_CID_GEN_SHIFT 20
#define SNIC_CM_CID_GEN_MASK  0x3fu
#define SNIC_CM_CID_HOST_MASK 0xfffffu

struct snic_cm_listener {
	uint64_t service_id;
	uint8_t ctx;
	bool in_use;
};

struct snic_cm_inbox_ent {
	uint32_t seq;            /* arrival order                          */
	uint8_t peer[16];        /* IPv6, or IPv4 mapped (as in GIDs)      */
	uint32_t peer_qpn;
	uint8_t ctx;
	bool in_use;
	uint8_t mad[SNIC_CM_MAD_SIZE];
};

struct snic_cm_armed {
	uint32_t cid;
	uint8_t peer[16];        /* IPv6, or IPv4 mapped (as in GIDs)      */
	uint8_t next_hop[16];    /* the host's, all zero = the NIC's routes */
	uint8_t ctx;
	bool in_use;
	uint8_t mad[SNIC_CM_MAD_SIZE];
};

struct snic_cm_tables {
	struct snic_cm_listener listen[SNIC_CM_MAX_LISTEN];
	struct snic_cm_inbox_ent inbox[SNIC_CM_INBOX];
	struct snic_cm_armed armed[SNIC_CM_MAX_ARMED];
	uint16_t queued[SNIC_MAX_CTX];   /* inbox entries per context      */
	uint8_t gen[SNIC_MAX_CTX];       /* bumped by every CM_OPEN        */
	bool open[SNIC_MAX_CTX];         /* CM_OPEN done, context alive    */
	uint32_t seq;
	uint32_t psn;                    /* QP1's send PSN                 */
};

#endif /* SNIC_OBJECTS_CM_TABLES_H */
