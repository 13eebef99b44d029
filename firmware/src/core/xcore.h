/* SPDX-License-Identifier: MIT */
/*
 * Many cores (DESIGN.md "Many cores"): the single-producer/single-consumer
 * rings between a NIC's cores and the rendezvous that runs commands while
 * the other cores are parked.  Core layer: it moves frames and fixed-size
 * messages and knows no RDMA object; nic/xcore.c says what they mean.
 *
 * Memory ordering (C11 atomics, no locks): a producer writes the slot,
 * then stores its tail with release; the consumer loads the tail with
 * acquire before it reads the slot, and gives the slot back with a
 * release store of its head that the producer loads with acquire.  So
 * everything a core wrote before it pushed is visible to the core that
 * pops: the rings carry the ordering of the data path between cores.
 */
#ifndef SNIC_XCORE_H
#define SNIC_XCORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "snic/hal.h"
#include "snic/hostif.h"

#define SNIC_MAX_CORES     16
#define SNIC_XC_PKT_RING   1024 /* frames between two cores              */
#define SNIC_XC_MSG_RING   4096 /* messages between two cores            */

struct snic_xc_ring {
	_Alignas(64) _Atomic uint32_t head; /* consumer's                    */
	_Alignas(64) _Atomic uint32_t tail; /* producer's                    */
	_Alignas(64) uint32_t mask;         /* slots - 1 (a power of two)    */
	uint32_t esize;                     /* bytes per slot                */
	uint8_t slot[];
};

/* What crosses cores besides frames (nic/xcore.c handles them). */
enum snic_xc_type {
	SNIC_XC_DOORBELL = 1, /* core 0 -> owner: a = QP index             */
	SNIC_XC_CQ_DIRTY,     /* owner -> core 0: a = CQ index, flag =
			       * solicited: the owner wrote CQEs into it
			       * (at most once per CQ and pass), for its
			       * completion event                          */
	SNIC_XC_EVENT,        /* any -> core 0: a = ctx, b = type, c = obj  */
	SNIC_XC_NEIGH,        /* core 0 -> owner: a = QP index, u.mac       */
	SNIC_XC_RESOLVE,      /* owner -> core 0: u.ip, resolve it          */
	SNIC_XC_CQ_LOST,      /* core 0 -> owner: a = QP index, b = qpn:
			       * its CQE was dropped (qp_cq_lost)         */
	SNIC_XC_CQ_OVERRUN,   /* owner -> core 0: a = CQ index, whose ring
			       * had no room for the owner's CQE (flag 1)
			       * or could not be written (flag 0)          */
};

struct snic_xc_msg {
	uint8_t type;         /* enum snic_xc_type                          */
	uint8_t flag;
	uint16_t rsvd;
	uint32_t a, b, c;
	union {
		uint8_t mac[6];
		uint8_t ip[16];
	} u;
};

struct snic_nic;

/* The port a core's view sees when there are several (nic/steer.c): the
 * board's HAL behind a shim whose rx_burst/tx_burst steer.  loop: core 0's
 * frames to our own MAC for its own QPs. */
struct snic_xc_port {
	struct snic_hal hal;        /* what the view's core uses            */
	struct snic_hal_ops ops;    /* hal.ops                              */
	const struct snic_hal *real;/* the board's                          */
	struct snic_nic *view;
	uint16_t txq;               /* the port's TX queue of this core's own
				     * (tx_burst_queue), 0: through core 0 */
	uint16_t rxq;               /* the port's RX queue of this core's own
				     * (rx_burst_queue), 0: core 0 steers */
	struct snic_pkt *loop[SNIC_XC_PKT_RING];
	uint32_t loop_head, loop_tail;
};

/* A NIC's cores: views[k] is core k's (objects.h), pkt[f][t] and
 * msg[f][t] carry frames and messages from core f to core t. */
struct snic_xcore {
	uint32_t ncores;
	bool in_turn;          /* cfg.cores_in_turn: no parking needed      */
	struct snic_nic *views[SNIC_MAX_CORES];
	struct snic_xc_ring *pkt[SNIC_MAX_CORES][SNIC_MAX_CORES];
	struct snic_xc_ring *msg[SNIC_MAX_CORES][SNIC_MAX_CORES];
	struct snic_xc_port port[SNIC_MAX_CORES];
	/* open contexts, whose doorbell pages the other cores look at
	 * (nic/doorbell.c); core 0's to write */
	_Atomic uint64_t db_ctx;
	/* the other cores' counters at the last statistics reset */
	uint64_t cnt_base[SNIC_MAX_CORES][SNIC_CNT_MAX];
	/* A core waits for room in its full ring to core `to` (nic/xcore.c:
	 * cores polled in turn empty it themselves, else core 0 drains it) */
	void (*ring_wait)(struct snic_xcore *xc, unsigned from, unsigned to);
	/* park rendezvous (nic/xcore.c): odd = parking requested; in_pass:
	 * core k is inside a pass (one cache line each, its own to write) */
	_Alignas(64) _Atomic uint32_t park_gen;
	/* in_pass[k].poked: a command on core 0 gave core k work (a QP on
	 * its lists or wheel: qp_view_poke), so a board that lets core k
	 * sleep wakes it (snic_nic_core_input); cleared when core k asks
	 * whether it may sleep (snic_nic_core_sleep_until), not by every
	 * pass; in the line core 0 reads when it parks the cores anyway */
	struct {
		_Alignas(64) _Atomic uint32_t v;
		_Atomic uint32_t poked;
	} in_pass[SNIC_MAX_CORES];
};

/* xcore_ring.c */
uint64_t xc_ring_size(uint32_t slots, uint32_t esize);
struct snic_xc_ring *xc_ring_init(void *mem, uint32_t slots, uint32_t esize);
uint32_t xc_ring_push(struct snic_xc_ring *r, const void *elems, uint32_t n);
uint32_t xc_ring_pop(struct snic_xc_ring *r, void *elems, uint32_t n);
uint32_t xc_ring_count(const struct snic_xc_ring *r);

#endif /* SNIC_XCORE_H */
