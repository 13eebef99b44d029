/* SPDX-License-Identifier: MIT */
/*
 * The firmware core's API for boards: create a NIC over a HAL and a BAR,
 * poll it from the board's run-to-completion loop, read its counters.
 */
#ifndef SNIC_FW_H
#define SNIC_FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snic/hal.h"

struct snic_nic;

#define SNIC_MAX_ROUTES 8

/* A static IPv4 route of the port: destinations in dst/plen are reached
 * through the router gw (host order; plen 0 = the default route). */
struct snic_ipv4_route {
	uint32_t dst;
	uint32_t gw;
	uint8_t plen;
};

struct snic_nic_config {
	const char *name;        /* "snic0"                                   */
	const char *host_mem;    /* host-memory file name published in BAR    */
	uint64_t host_mem_size;
	uint8_t mac[6];
	uint32_t ipv4;           /* host order                                */
	uint8_t ipv6[16];        /* network order; all zero = no IPv6 GID     */
	uint32_t eth_mtu;        /* IP MTU of the port, e.g. 4200 or 1500     */
	uint64_t node_guid;
	uint32_t fw_pid;         /* published for liveness checks; 0 = none   */
	uint64_t seed;           /* randomness for MR key generations; 0 = the
				  * clock at init                             */
	/* The board decides when a context is dead (snic_nic_ctx_dead) and
	 * the firmware ignores SNIC_CTX_ORPHAN written into the BAR, which
	 * any host process could write into any slot. */
	uint8_t board_reaps;
	/* The board maps device-memory pages into the processes of contexts
	 * it opened and cuts those mappings (snic_nic_dm_held/_release): DM
	 * pages such a context frees wait for it.  0: freed at once. */
	uint8_t board_maps_dm;
	/* Contexts come only from the board's broker (snic_nic_ctx_grant):
	 * CTX_OPEN through the BAR file is refused (SNIC_ST_PERM).  A board
	 * whose BAR file others may read (snic-emu --users) sets it: such a
	 * context's mailbox, event queue and doorbell page are in the file. */
	uint8_t broker_only;
	/* Bytes of DMA window after the shared window (host_mem_size) where
	 * the board places contexts' own segments (snic_nic_ctx_grant); 0 =
	 * none.  The HAL's DMA ops cover host_mem_size + seg_area_size. */
	uint64_t seg_area_size;
	/* The port's IPv4 subnet and static routes (wire/route.c), for paths
	 * whose host gives no next hop (an AH, a verbs program whose host
	 * knows no route): a destination outside ipv4/ipv4_plen takes the
	 * gateway of the longest matching route.  No route (nroutes 0, the
	 * default): every destination is on the link, ARP asks for it. */
	uint8_t ipv4_plen;
	uint8_t nroutes;
	struct snic_ipv4_route routes[SNIC_MAX_ROUTES];
	/* Several cores (snic_nic_init_cores) polled in turn from one thread
	 * (a simulation): a command then never runs beside another core's
	 * pass, so it needs no park handshake (nic/xcore.c). */
	uint8_t cores_in_turn;
};

/* Bytes the board must provide (zeroed, 64-byte aligned) for one NIC. */
size_t snic_nic_size(void);

/* Initialise the NIC in `mem` and the BAR (SNIC_BAR_SIZE bytes, shared with
 * the host).  Returns the NIC, or NULL on a bad argument or a HAL without
 * one of its mandatory ops (logged through the HAL when it can log). */
struct snic_nic *snic_nic_init(void *mem, const struct snic_nic_config *cfg,
			       const struct snic_hal *hal, void *bar);

/* Several cores (DESIGN.md "Many cores"): a NIC of ncores (1..16) cores
 * needs snic_nic_size_cores(ncores) bytes (zeroed, 64-byte aligned);
 * snic_nic_init_cores returns core 0's view.  The board then runs
 * snic_nic_poll(snic_nic_core(nic, k)) on core k, one loop per core, and
 * calls everything else (ctx_dead, ctx_grant, netdev_tx, counters, fini)
 * from core 0's loop only; fini after the other loops stopped.  Core 0
 * polls the port and steers frames to the others, or, where the HAL's
 * port steers (rx_queues, hal.h), core k polls queue k (0 for a bad
 * count). */
size_t snic_nic_size_cores(unsigned ncores);
struct snic_nic *snic_nic_init_cores(void *mem, const struct snic_nic_config *cfg,
				     const struct snic_hal *hal, void *bar,
				     unsigned ncores);
struct snic_nic *snic_nic_core(struct snic_nic *nic, unsigned k);
unsigned snic_nic_ncores(const struct snic_nic *nic);

/* Idle cores that sleep (a board whose cores are threads sharing CPUs).
 * snic_nic_core_sleep_until, on core k's own thread between its passes:
 * 0 when core k (k >= 1) has work without new input, else the HAL-clock
 * time of its next timer (UINT64_MAX: none), until which it may sleep
 * unless input arrives; always 0 for core 0.  snic_nic_core_input, from
 * any thread: frames or messages wait in the rings into core k or on
 * its RX queue (where the HAL says, rx_ready), or a command gave it work
 * since it last asked sleep_until (for k = 0: in the rings from the
 * others, on queue 0).  The handshake: core k stores "asleep", full
 * fence, asks core_input, sleeps if none; a thread after a pass that
 * may have given a core input (core 0 after each; any core whose frames
 * reach a port of these NICs): full fence, and wakes a core flagged
 * asleep that has input. */
uint64_t snic_nic_core_sleep_until(struct snic_nic *nic);
bool snic_nic_core_input(const struct snic_nic *nic, unsigned k);

/* One pass of the run-to-completion loop: commands, doorbells, RX burst,
 * timers, TX flush, each with a budget.  Returns the units of work done
 * (0 = idle), so the board can back off. */
unsigned snic_nic_poll(struct snic_nic *nic);

/* The board found that the process owning context slot `slot` is gone:
 * destroy everything it owned and free the slot. */
void snic_nic_ctx_dead(struct snic_nic *nic, unsigned slot);

/* The board found pages of the BAR lost (its file truncated by another
 * process and grown back with zeros): the firmware writes its header
 * again and looks at every open context's mailbox and doorbell page, for
 * the bits the NIC's doorbell page lost.  Core 0's thread. */
void snic_nic_bar_lost(struct snic_nic *nic);

/* The pid context slot `slot` gave when it opened (the firmware's copy,
 * not the BAR's); 0 when the slot is not open. */
uint32_t snic_nic_ctx_pid(const struct snic_nic *nic, unsigned slot);

/* The board (a trusted broker: boards/common/host/ctx_broker.c) opens
 * context slot `slot` for process `pid`: pages [first_page, first_page +
 * npages) of the segment area are the context's alone and the only ones
 * its page lists, rings and CQs may name; CTX_OPEN from the host on that
 * slot is refused.
 * The slot's state is OPEN on return.  Returns 0, or -1 when the slot is
 * in use or the pages are not inside the segment area. */
int snic_nic_ctx_grant(struct snic_nic *nic, unsigned slot, uint32_t pid,
		       uint32_t first_page, uint32_t npages);

/* Device memory for boards that map DM pages into one process each
 * (nic/grant.c): the context slot holding DM page `page` (SNIC_BAR_DM_OFF
 * + page * 4 KiB), or -1; the pages a board-opened context freed (bit per
 * page), which stay taken until snic_nic_dm_release gives them back once
 * the board has cut every host mapping of them. */
int snic_nic_dm_owner(const struct snic_nic *nic, unsigned page);
uint32_t snic_nic_dm_held(const struct snic_nic *nic);
void snic_nic_dm_release(struct snic_nic *nic, uint32_t pages);

/* Mark the BAR down and drop every context (clean stop). */
void snic_nic_fini(struct snic_nic *nic);

/* Counters: names and values (the board prints them; snicctl reads). */
unsigned snic_nic_counter_count(void);
const char *snic_nic_counter_name(unsigned i);
uint64_t snic_nic_counter(const struct snic_nic *nic, unsigned i);

/* The exception path, host to port: a frame the host's network interface
 * sends (the board read it from its TAP) goes out the port, after the
 * firmware's checks (nic/netdev.c): 0, or -1 when it was dropped (counted:
 * netdev_tx_drop_*).  Called from the thread that calls snic_nic_poll; the
 * frame leaves with that loop's next pass. */
int snic_nic_netdev_tx(struct snic_nic *nic, const void *frame, uint32_t len);

/* For a board's dma_read_crc (hal.h): copy len bytes from host memory
 * at src to dst, then zeros up to a multiple of 4, and return *crc's
 * register advanced over them, with the CPU's CRC folding: in one pass
 * on x86-64 (each byte read once); on aarch64 a copy, then the CRC over
 * the copy.  Only where snic_dma_crc_ok() says the CPU folds. */
uint32_t snic_dma_copy_crc(uint32_t crc, void *dst, const void *src,
			   uint32_t len);
/* For a board's dma_write_crc (hal.h): copy len bytes of a received frame
 * at src to host memory at dst and return crc's register advanced over
 * them and the -len & 3 bytes behind them at src (the pad: folded, not
 * copied).  Only where snic_dma_crc_ok() says the CPU folds. */
uint32_t snic_dma_copy_crc_in(uint32_t crc, void *dst, const void *src,
			      uint32_t len);
int snic_dma_crc_ok(void);

/* Latency trace (firmware built with -DSNIC_TRACE, core/trace.h): what
 * happened when, by the HAL clock.  Copies up to max events, oldest
 * first, and returns how many (always 0 in a build without tracing). */
enum snic_trace_point {
	SNIC_TR_DOORBELL = 0,   /* a QP doorbell seen (arg: QPN)           */
	SNIC_TR_TX = 1,         /* a frame handed to the port (arg: bytes) */
	SNIC_TR_RX = 2,         /* a frame taken from the port (arg: bytes) */
	SNIC_TR_RX_DONE = 3,    /* that frame's work done: data, CQE
				 * written (arg: bytes)                    */
};

struct snic_trace_ev {
	uint64_t ns;
	uint32_t point;         /* enum snic_trace_point */
	uint32_t arg;
};

size_t snic_nic_trace_read(const struct snic_nic *nic,
			   struct snic_trace_ev *out, size_t max);

#endif /* SNIC_FW_H */
