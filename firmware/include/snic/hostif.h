/* SPDX-License-Identifier: MIT */
/*
 * snic host interface: the one contract between the host driver and the
 * firmware.  Everything the two sides share is in this file: the BAR layout
 * (device header, doorbells, per-context command mailboxes and event queues),
 * the command formats, and the WQE / CQE / doorbell-record layouts that live
 * in host memory.
 *
 * Conventions
 *  - All multi-byte fields are little-endian (both x86-64 and aarch64 are);
 *    fields that carry wire values in network order say so (imm_data, gid).
 *  - A "pa" is a host physical address: a byte offset into the host-memory
 *    window.  The firmware reaches it only through the HAL's DMA calls and
 *    bounds-checks every access.
 *  - Rings are powers of two; indexes are free-running 32-bit counters and a
 *    slot is (index & (size - 1)).
 *  - The BAR is device memory: the host writes commands and doorbells there,
 *    the firmware reads it directly.  Words used by both sides concurrently
 *    are accessed with C11 atomics (acquire/release as noted per field).
 *  - Enumerations that mirror verbs (WR opcodes, WC status/opcodes, QP
 *    states, access flags, attr masks, MTUs, event types) use the same
 *    numeric values as rdma-core's <infiniband/verbs.h>, so the host driver
 *    passes them through; the firmware validates every one of them.
 */
#ifndef SNIC_HOSTIF_H
#define SNIC_HOSTIF_H

#include <stdint.h>
#include <stdatomic.h>

#define SNIC_HOSTIF_MAGIC   0x43494e53u /* "SNIC" */
#define SNIC_HOSTIF_VERSION 10u /* 2: statistics area; 3: CM (QP1) commands and
				* state; 4: device memory in the BAR, rereg/resize;
				* 5: memory windows, XRC, multicast, raw packet
				* QPs and flows, the broker, 16,384 QPs (three-level
				* doorbells, larger statistics area, 128 counters),
				* IPv6 GIDs; 6: next hops (modify-QP, CM MADs), a
				* doorbell page per context slot, statistics in the
				* broker's memfd with 16-byte peers, DM by page;
				* 7: a broker context's own doorbell page and
				* mailbox polled by the firmware (no shared page),
				* numbered DM answers, CM commands with 16-byte
				* addresses (CM over IPv6); 8: a NIC is alive
				* while its server holds an OFD write lock on the
				* BAR file (was a flock, which a reader could
				* take), BAR files readable by a --users group;
				* 9: a send WQE's data at offset 48 (in place of
				* the atomic operands) for the connected QPs'
				* work requests that have none, was 64
				* (snic_wqe_data_off); 10: per-core group and
				* summary words in a context's doorbell page,
				* the slot's db_cores */

#define SNIC_PAGE_SHIFT 12
#define SNIC_PAGE_SIZE  (1u << SNIC_PAGE_SHIFT)

/* ---------------------------------------------------------------------- */
/* Device limits (the firmware's fixed pools; reported by QUERY_DEVICE).   */

#define SNIC_MAX_CTX        64      /* host contexts (opened devices)     */
#define SNIC_QP_IDX_BITS    14
#define SNIC_MAX_QP         (1u << SNIC_QP_IDX_BITS)      /* incl. QPN 0/1 */
#define SNIC_MAX_CQ         1024
#define SNIC_MAX_PD         1024
#define SNIC_MAX_MR         4096
#define SNIC_MAX_QP_WR      16384
#define SNIC_MAX_CQE        (1u << 20)
#define SNIC_MAX_SGE        16
#define SNIC_MAX_INLINE     256
#define SNIC_MAX_RD_ATOM    128     /* max_qp_rd_atom / max_qp_init_rd_atom (as rxe):
				     * 7 KiB of responder resources per QP */
#define SNIC_MAX_MSG_SIZE   (1u << 31)
#define SNIC_MAX_MTT        (1u << 20) /* pages of registered memory (4 GiB) */
#define SNIC_EQ_SIZE        256

/* Per-context quotas: what one context (one ibv_open_device) may hold of
 * each pool, so it cannot starve the others; QUERY_DEVICE reports these as
 * the context's max_pd, max_mr, ...  Each pool keeps a reserve no single
 * context can take (QPs: enough for snic-qpbench's 10,000 idle QPs
 * and 1,000 connected ones in one context; connected QPs are bounded
 * per NIC by the firmware's connection sets, QUERY_DEVICE max_qp_conn).  Exceeding one: NOMEM, as a full pool. */
#define SNIC_CTX_MAX_PD     1000
#define SNIC_CTX_MAX_MR     4000
#define SNIC_CTX_MAX_MTT    (SNIC_MAX_MTT - SNIC_MAX_MTT / 16)
#define SNIC_CTX_MAX_CQ     1000
#define SNIC_CTX_MAX_QP     16000
#define SNIC_CTX_MAX_SRQ    1000

/* Object handles carry a generation so a stale handle is refused after its
 * slot is reused.  QPN (24 bits on the wire): index in the low bits. */
#define SNIC_QPN_IDX(qpn)   ((qpn) & (SNIC_MAX_QP - 1))
/* Memory keys: table index (12 bits, SNIC_MAX_MR) above a 20-bit
 * generation; rkey == lkey.  The generation starts at a random value per
 * slot and moves on at every registration, so a key seen once does not
 * tell which key the slot will carry next (objects/mr.c). */
#define SNIC_KEY_GEN_BITS   20
#define SNIC_KEY_IDX(key)   ((key) >> SNIC_KEY_GEN_BITS)
#define SNIC_KEY_GEN(key)   ((key) & ((1u << SNIC_KEY_GEN_BITS) - 1))

/* ---------------------------------------------------------------------- */
/* BAR layout (one file / region per NIC).                                */

#define SNIC_BAR_HDR_OFF   0x0000u
#define SNIC_BAR_DB_OFF    0x1000u
#define SNIC_BAR_CTX_OFF   0x2000u
/* A context slot: mailbox and event queue (struct snic_ctx_slot), then at
 * SNIC_CTX_DB_OFF the context's own doorbell page (struct
 * snic_ctx_doorbells).  One slot = one descriptor from the broker, so a
 * context maps its doorbells with its mailbox and nobody else's. */
#define SNIC_CTX_SLOT_SIZE 0x3000u
#define SNIC_CTX_DB_OFF    0x2000u
/* Statistics (read-only for hosts except reset_req), after the slots. */
#define SNIC_BAR_STATS_OFF (SNIC_BAR_CTX_OFF + SNIC_MAX_CTX * SNIC_CTX_SLOT_SIZE)
#define SNIC_BAR_STATS_SIZE 0x4b0000u
/* Device memory (ibv_alloc_dm): the card's own memory, exposed in the BAR
 * after the statistics as a real NIC exposes its on-chip memory. */
#define SNIC_BAR_DM_OFF    (SNIC_BAR_STATS_OFF + SNIC_BAR_STATS_SIZE)
#define SNIC_DM_SIZE       0x10000u
#define SNIC_MAX_DM        64
#define SNIC_BAR_SIZE      (SNIC_BAR_DM_OFF + SNIC_DM_SIZE)

enum snic_fw_state {
	SNIC_FW_DOWN = 0,
	SNIC_FW_UP = 1,
};

struct snic_bar_hdr {
	uint32_t magic;            /* SNIC_HOSTIF_MAGIC once initialised      */
	uint32_t version;          /* SNIC_HOSTIF_VERSION                     */
	char name[16];             /* "snic0"                                 */
	char host_mem[64];         /* host-memory file name, in the run dir   */
	uint64_t host_mem_size;    /* bytes of the host-memory window         */
	uint64_t node_guid;        /* host order                              */
	uint8_t mac[6];
	uint8_t rsvd0[2];
	uint32_t ipv4;             /* host order, e.g. 0xc6120001 198.18.0.1  */
	_Atomic uint32_t fw_state; /* enum snic_fw_state                      */
	_Atomic uint32_t fw_pid;   /* serving process (emu), 0 when unknown   */
	_Atomic uint64_t heartbeat;/* firmware bumps it about every 10 ms     */
	/* Idle back-off handshake (emu board): the firmware sets fw_idle
	 * before it sleeps on `kick`; a host that rang a doorbell and sees
	 * fw_idle != 0 increments kick and wakes it (futex on `kick`). */
	_Atomic uint32_t fw_idle;
	_Atomic uint32_t kick;
	uint32_t max_ctx;
	uint32_t rsvd1;
};

/*
 * Doorbells: a three-level bitmap, so the firmware's cost per loop does not
 * grow with the number of idle QPs and a doorbell can never overflow.
 *
 * Each context rings its QPs in its own doorbell page, the last page of
 * its slot (struct snic_ctx_doorbells at SNIC_CTX_DB_OFF; for a broker's
 * context part of the slot's memfd, so no other process can write it).
 * Host, to ring QP index i of context slot c (after writing the WQEs and
 * the doorbell record with release order): snic_db_ring_ctx below, i.e.
 *     fetch_or(&cdb->qp_bits[i / 64], 1 << (i % 64), release);
 *     fetch_or(&cdb->grp_bits[i / 4096], 1 << (i / 64 % 64), release);
 *     fetch_or(&cdb->summary, 1 << (i / 4096), release);
 *     fetch_or(&db->ctx_bits, 1 << c, release);
 *     fetch_or(&db->summary, SNIC_DB_SUMMARY_CTX, seq_cst);
 * and a command for context slot c:
 *     fetch_or(&db->cmd_bits, 1 << c, release);
 *     fetch_or(&db->summary, SNIC_DB_SUMMARY_CMD, release);
 * where db is the NIC's doorbell page (SNIC_BAR_DB_OFF), shared by every
 * context: it only says where to look.  Firmware: exchange(summary, 0,
 * acquire), then each flagged command bit, context page (its summary,
 * group words, QP words) or group word.  A bit set after the firmware's
 * exchange is seen on its next pass.
 *
 * A context a board opened (the broker's) rings its page only
 * (snic_db_ring_own) and sets no cmd_bits: the firmware looks at each
 * such context's page summary and mailbox (cmd_seq != cmd_done) every
 * pass, so nothing another process writes into, or clears in, the NIC's
 * page delays it; the host driver does not map the NIC's page then.
 *
 * Several firmware cores (fw.h snic_nic_init_cores): QP index i runs on
 * core i % n, n = db_cores of the context's slot (the firmware writes it
 * before the context opens).  The QP bits stay where they are, but the
 * group and summary words are per core: core 0's are those above, core
 * c >= 1's are cdb->core[c - 1], which core c looks at in every open
 * context's page each pass and takes its own QPs' bits from the QP words
 * (the others' stay), so a doorbell reaches the QP's core with no
 * hand-off; snic_db_ring_own/_ctx take c (snic_db_core).  The NIC
 * page's bitmap stays core 0's, which hands other cores' QPs over.
 *
 * Attribution (nic/doorbell.c): a doorbell is the context's whose page it
 * came in.  A QP flagged in context c's page is served only if context c
 * owns it; one flagged in the NIC page's own QP bitmap (snic_db_ring_qp,
 * kept for hosts and tools that predate the context pages) only if its
 * context is not one a board opened (the broker's).  Others are ignored
 * and counted (doorbells_foreign): a process can neither ring another
 * context's QPs nor make the firmware look at them.  Setting another
 * context's ctx_bits or cmd_bits bit only makes the firmware look at
 * that context's own page or mailbox again.
 */
#define SNIC_DB_QP_WORDS    (SNIC_MAX_QP / 64)
#define SNIC_DB_GRP_WORDS   ((SNIC_DB_QP_WORDS + 63) / 64)
#define SNIC_DB_SUMMARY_CMD (1ull << 63)
#define SNIC_DB_SUMMARY_CTX (1ull << 62)

struct snic_doorbells {
	_Atomic uint64_t summary;
	_Atomic uint64_t cmd_bits;
	_Atomic uint64_t ctx_bits;      /* context pages with doorbells       */
	_Atomic uint64_t rsvd;
	_Atomic uint64_t grp_bits[SNIC_DB_GRP_WORDS];
	_Atomic uint64_t qp_bits[SNIC_DB_QP_WORDS];
};

/* Firmware cores a context's doorbells may be spread over. */
#define SNIC_DB_MAX_CORES   16

/* Core c >= 1's group and summary words in a context's page. */
struct snic_db_core_words {
	_Atomic uint64_t summary;
	_Atomic uint64_t grp_bits[SNIC_DB_GRP_WORDS];
	_Atomic uint64_t rsvd[3];
};

/* A context's own doorbell page: the same bitmap, for its QPs only. */
struct snic_ctx_doorbells {
	_Atomic uint64_t summary;       /* group words with bits (core 0's)   */
	_Atomic uint64_t rsvd[3];
	_Atomic uint64_t grp_bits[SNIC_DB_GRP_WORDS];   /* core 0's           */
	_Atomic uint64_t qp_bits[SNIC_DB_QP_WORDS];     /* every core's QPs   */
	struct snic_db_core_words core[SNIC_DB_MAX_CORES - 1];
};

_Static_assert(SNIC_DB_GRP_WORDS <= 62, "summary bits for the group words");
_Static_assert(SNIC_MAX_CTX <= 64, "one ctx_bits / cmd_bits bit per context");
_Static_assert(sizeof(struct snic_doorbells) <= 0x1000, "doorbell page");
_Static_assert(sizeof(struct snic_ctx_doorbells) <=
	       SNIC_CTX_SLOT_SIZE - SNIC_CTX_DB_OFF, "context doorbell page");

/* QP index i's bits in one page's bitmap (the NIC page's or a context's).
 * seq_cst on the summary: the idle handshake reads fw_idle after it
 * (command.c). */
static inline void snic_db_set(_Atomic uint64_t *qp_bits,
			       _Atomic uint64_t *grp_bits,
			       _Atomic uint64_t *summary, uint32_t i)
{
	atomic_fetch_or_explicit(&qp_bits[i / 64], 1ull << (i % 64),
				 memory_order_release);
	atomic_fetch_or_explicit(&grp_bits[i / 4096], 1ull << (i / 64 % 64),
				 memory_order_release);
	atomic_fetch_or_explicit(summary, 1ull << (i / 4096),
				 memory_order_seq_cst);
}

static inline void snic_db_ring_qp(struct snic_doorbells *db, uint32_t i)
{
	snic_db_set(db->qp_bits, db->grp_bits, &db->summary, i);
}

/* The core that runs QP index i of a context whose slot says db_cores
 * (1 when out of range: everything to core 0's words). */
static inline uint32_t snic_db_core(uint32_t i, uint32_t db_cores)
{
	return db_cores > 1 && db_cores <= SNIC_DB_MAX_CORES ? i % db_cores : 0;
}

/* A context a board opened (the broker's) rings its own page only: the
 * firmware looks at that page, and at its mailbox, every pass.  core:
 * snic_db_core(i, slot's db_cores). */
static inline void snic_db_ring_own(struct snic_ctx_doorbells *cdb,
				    uint32_t i, uint32_t core)
{
	if (core == 0 || core >= SNIC_DB_MAX_CORES)
		snic_db_set(cdb->qp_bits, cdb->grp_bits, &cdb->summary, i);
	else
		snic_db_set(cdb->qp_bits, cdb->core[core - 1].grp_bits,
			    &cdb->core[core - 1].summary, i);
}

/* Core c >= 1 looks at every open context's page by itself: the NIC
 * page's hint is core 0's. */
static inline void snic_db_ring_ctx(struct snic_doorbells *db,
				    struct snic_ctx_doorbells *cdb,
				    uint32_t slot, uint32_t i, uint32_t core)
{
	snic_db_ring_own(cdb, i, core);
	if (core != 0 && core < SNIC_DB_MAX_CORES)
		return;
	atomic_fetch_or_explicit(&db->ctx_bits, 1ull << slot,
				 memory_order_release);
	/* seq_cst: the idle handshake reads fw_idle after it (command.c) */
	atomic_fetch_or_explicit(&db->summary, SNIC_DB_SUMMARY_CTX,
				 memory_order_seq_cst);
}

/* ---------------------------------------------------------------------- */
/* Commands.                                                               */

enum snic_cmd_op {
	SNIC_CMD_NOP = 0,
	SNIC_CMD_CTX_OPEN,      /* in: ctx_open          out: -             */
	SNIC_CMD_CTX_CLOSE,     /* destroys everything the context owns      */
	SNIC_CMD_QUERY_DEVICE,  /* out: device_attr                          */
	SNIC_CMD_QUERY_PORT,    /* in: port              out: port_attr      */
	SNIC_CMD_QUERY_GID,     /* in: gid_query         out: gid_entry      */
	SNIC_CMD_ALLOC_PD,      /* out: handle                               */
	SNIC_CMD_DEALLOC_PD,    /* in: handle                                */
	SNIC_CMD_REG_MR,        /* in: reg_mr            out: handle (key)   */
	SNIC_CMD_DEREG_MR,      /* in: handle                                */
	SNIC_CMD_CREATE_CQ,     /* in: create_cq         out: handle (cqn)   */
	SNIC_CMD_DESTROY_CQ,    /* in: handle                                */
	SNIC_CMD_CREATE_QP,     /* in: create_qp         out: handle (qpn)   */
	SNIC_CMD_MODIFY_QP,     /* in: modify_qp                             */
	SNIC_CMD_QUERY_QP,      /* in: handle            out: qp_attr        */
	SNIC_CMD_DESTROY_QP,    /* in: handle                                */
	SNIC_CMD_CREATE_SRQ,    /* in: create_srq        out: handle (srqn)  */
	SNIC_CMD_MODIFY_SRQ,    /* in: modify_srq                            */
	SNIC_CMD_QUERY_SRQ,     /* in: handle            out: srq_attr       */
	SNIC_CMD_DESTROY_SRQ,   /* in: handle                                */
	SNIC_CMD_REREG_MR,      /* in: rereg_mr                              */
	SNIC_CMD_RESIZE_CQ,     /* in: resize_cq         out: handle (CQEs moved) */
	SNIC_CMD_ALLOC_DM,      /* in: alloc_dm          out: alloc_dm_out   */
	SNIC_CMD_FREE_DM,       /* in: handle                                */
	SNIC_CMD_REG_DM_MR,     /* in: reg_dm_mr         out: handle (key)   */
	SNIC_CMD_COUNT
};

/* Command status; the host driver maps these to errno values. */
enum snic_status {
	SNIC_ST_OK = 0,
	SNIC_ST_INVAL,          /* EINVAL: a field is out of range            */
	SNIC_ST_NOMEM,          /* ENOMEM: a pool is exhausted                */
	SNIC_ST_BUSY,           /* EBUSY: object still referenced             */
	SNIC_ST_NOENT,          /* EINVAL from verbs: no such handle          */
	SNIC_ST_NOTSUP,         /* EOPNOTSUPP                                 */
	SNIC_ST_PERM,           /* EACCES: object belongs to another context  */
	SNIC_ST_FAULT,          /* EFAULT: address outside the host window    */
	SNIC_ST_BADOP,          /* ENOSYS: unknown command                    */
};

struct snic_cmd_handle {
	uint32_t handle;        /* pdn / key / cqn / qpn                      */
	uint32_t rsvd;
};

struct snic_cmd_ctx_open {
	uint32_t pid;
	uint32_t rsvd;
};

struct snic_cmd_port {
	uint32_t port_num;      /* 1                                          */
	uint32_t rsvd;
};

struct snic_cmd_gid_query {
	uint32_t port_num;
	uint32_t index;
};

/* The port's GID table: index 0 the IPv4 address (IPv4-mapped), index 1
 * the IPv6 address (empty when the NIC has none); both RoCE v2. */
#define SNIC_GID_IPV4 0u
#define SNIC_GID_IPV6 1u
#define SNIC_GID_TBL_LEN 2u

struct snic_gid_entry {
	uint8_t gid[16];        /* network order                              */
	uint32_t type;          /* 0 = IB/RoCE v1, 1 = RoCE v2 (IBV_GID_TYPE) */
	uint32_t rsvd;
};

struct snic_device_attr {
	uint64_t node_guid, sys_image_guid, max_mr_size, page_size_cap;
	uint32_t vendor_id, vendor_part_id, hw_ver, fw_ver_major, fw_ver_minor,
		fw_ver_sub;
	uint32_t max_qp, max_qp_wr, device_cap_flags, max_sge, max_sge_rd,
		max_cq, max_cqe, max_mr, max_pd, max_qp_rd_atom,
		max_qp_init_rd_atom, max_res_rd_atom, atomic_cap, max_srq,
		max_srq_wr, max_srq_sge, max_pkeys, max_ah, max_inline,
		phys_port_cnt, max_msg_size;
	uint32_t cap_ex_hi;     /* device_cap_flags_ex bits 32..63            */
	uint32_t max_dm_size;   /* bytes of device memory (SNIC_DM_SIZE)      */
	uint32_t max_mw;        /* memory windows (they share the MR slots)   */
	uint32_t max_mcast_grp; /* SNIC_MAX_MCAST_GRP                         */
	uint32_t max_mcast_qp_attach; /* SNIC_MAX_MCAST_QP_ATTACH (per group) */
	uint32_t max_total_mcast_qp_attach; /* groups x QPs per group         */
};

/* device_cap_flags_ex bits (the kernel's IB_UVERBS_DEVICE_*, Linux 6.2). */
#define SNIC_CAP_EX_ATOMIC_WRITE (1ull << 40)

struct snic_port_attr {
	uint32_t state;         /* ibv_port_state                             */
	uint32_t max_mtu, active_mtu; /* ibv_mtu                              */
	uint32_t gid_tbl_len, port_cap_flags, max_msg_sz;
	uint32_t pkey_tbl_len, active_width, active_speed, phys_state;
	uint32_t link_layer;    /* IBV_LINK_LAYER_ETHERNET = 2                */
	uint32_t eth_mtu;       /* bytes of IP payload the port carries       */
	uint32_t rsvd[4];
};

/* Memory registration.  The page list (npages 32-bit host page numbers,
 * pa = page << SNIC_PAGE_SHIFT) is in host memory at pages_pa.  The MR
 * covers [iova, iova + length); iova's offset within its page equals the
 * first byte's offset within pages[0]. */
struct snic_cmd_reg_mr {
	uint32_t pdn;
	uint32_t access;        /* ibv_access_flags                           */
	uint64_t iova;
	uint64_t length;
	uint64_t pages_pa;
	uint32_t npages;
	uint32_t rsvd;
};

/* Re-registration (ibv_rereg_mr): the MR `key` keeps its key; what
 * `flags` names changes (the values of IBV_REREG_MR_CHANGE_*): the
 * translation (reg.iova/length/pages_pa/npages, as REG_MR), the PD
 * (reg.pdn), the access (reg.access).  Nothing changes unless all of it
 * is valid. */
enum {
	SNIC_REREG_TRANSLATION = 1u << 0,
	SNIC_REREG_PD = 1u << 1,
	SNIC_REREG_ACCESS = 1u << 2,
};

struct snic_cmd_rereg_mr {
	uint32_t key;
	uint32_t flags;
	struct snic_cmd_reg_mr reg;
};

/* Resizing a CQ onto a new ring and doorbell record: the firmware moves
 * the CQEs the host has not polled (between the old record's ci and its
 * own pi) to entries 0.. of the new ring, starts the new record at ci 0
 * with the old arm state, and answers how many it moved.  The host holds
 * its CQ lock across the command.  EINVAL if they do not fit. */
struct snic_cmd_resize_cq {
	uint32_t cqn;
	uint32_t cqe_cnt;       /* power of two                               */
	uint64_t ring_pa;
	uint64_t dbrec_pa;
};

/* Device memory: ALLOC_DM takes whole 4 KiB pages of the DM area (zeroed)
 * aligned to 1 << log_align; its bytes are at BAR offset SNIC_BAR_DM_OFF
 * + offset.  REG_DM_MR registers [offset, offset + length) of a DM as a
 * zero-based MR (iova = that offset within the DM).  FREE_DM: EBUSY while
 * an MR uses it. */
struct snic_cmd_alloc_dm {
	uint64_t length;
	uint32_t log_align;
	uint32_t rsvd;
};

struct snic_cmd_alloc_dm_out {
	uint32_t handle;
	uint32_t offset;        /* in the DM area                             */
};

struct snic_cmd_reg_dm_mr {
	uint32_t dm;
	uint32_t pdn;
	uint32_t access;        /* ibv_access_flags                           */
	uint32_t rsvd;
	uint64_t offset;        /* within the DM                              */
	uint64_t length;
};

struct snic_cmd_create_cq {
	uint64_t ring_pa;       /* cqe_cnt * 64 bytes, contiguous             */
	uint64_t dbrec_pa;      /* struct snic_cq_dbrec                       */
	uint32_t cqe_cnt;       /* power of two                               */
	uint32_t rsvd;
};

struct snic_cmd_create_qp {
	uint32_t pdn;
	uint32_t qp_type;       /* IBV_QPT_RC = 2 (others: NOTSUP for now)    */
	uint32_t send_cqn, recv_cqn;
	uint32_t sq_wqe_cnt;    /* power of two                               */
	uint32_t sq_stride_log; /* log2 of the SQ WQE stride (>= 6)           */
	uint32_t rq_wqe_cnt;    /* power of two                               */
	uint32_t rq_stride_log; /* log2 of the RQ WQE stride (>= 5)           */
	uint64_t sq_pa, rq_pa;  /* contiguous rings                           */
	uint64_t dbrec_pa;      /* struct snic_qp_dbrec                       */
	uint32_t max_send_sge, max_recv_sge, max_inline;
	uint32_t sq_sig_all;
};

/* Attribute mask bits: values of enum ibv_qp_attr_mask. */
enum snic_qp_attr_mask {
	SNIC_QP_STATE = 1 << 0,
	SNIC_QP_CUR_STATE = 1 << 1,
	SNIC_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	SNIC_QP_ACCESS_FLAGS = 1 << 3,
	SNIC_QP_PKEY_INDEX = 1 << 4,
	SNIC_QP_PORT = 1 << 5,
	SNIC_QP_QKEY = 1 << 6,
	SNIC_QP_AV = 1 << 7,
	SNIC_QP_PATH_MTU = 1 << 8,
	SNIC_QP_TIMEOUT = 1 << 9,
	SNIC_QP_RETRY_CNT = 1 << 10,
	SNIC_QP_RNR_RETRY = 1 << 11,
	SNIC_QP_RQ_PSN = 1 << 12,
	SNIC_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	SNIC_QP_ALT_PATH = 1 << 14,
	SNIC_QP_MIN_RNR_TIMER = 1 << 15,
	SNIC_QP_SQ_PSN = 1 << 16,
	SNIC_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	SNIC_QP_PATH_MIG_STATE = 1 << 18,
	SNIC_QP_CAP = 1 << 19,
	SNIC_QP_DEST_QPN = 1 << 20,
	SNIC_QP_RATE_LIMIT = 1 << 25,
	/* not a verbs bit: snic_cmd_modify_qp.next_hop is given (with AV) */
	SNIC_QP_NEXT_HOP = 1 << 30,
};

/* QP states: values of enum ibv_qp_state. */
enum snic_qp_state {
	SNIC_QPS_RESET = 0,
	SNIC_QPS_INIT,
	SNIC_QPS_RTR,
	SNIC_QPS_RTS,
	SNIC_QPS_SQD,
	SNIC_QPS_SQE,
	SNIC_QPS_ERR,
	SNIC_QPS_UNKNOWN,
};

struct snic_qp_attr {
	uint32_t qp_state, cur_qp_state;
	uint32_t path_mtu;      /* ibv_mtu 1..5                               */
	uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
	uint32_t qp_access_flags;
	uint16_t pkey_index;
	uint8_t port_num, sq_draining;
	uint8_t max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, timeout;
	uint8_t retry_cnt, rnr_retry, en_sqd_async_notify, rsvd0;
	/* address vector */
	uint8_t dgid[16];       /* network order                              */
	uint32_t flow_label;
	uint8_t sgid_index, hop_limit, traffic_class, is_global;
	uint8_t sl, static_rate, src_path_bits, rsvd1;
	uint16_t dlid;
	uint16_t rsvd2;
	/* capabilities (query only) */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge,
		max_inline_data;
	uint32_t rsvd3[3];
};

struct snic_cmd_modify_qp {
	uint32_t qpn;
	uint32_t attr_mask;
	struct snic_qp_attr attr;
	/* With SNIC_QP_NEXT_HOP: the router (IPv4 mapped, or IPv6) whose MAC
	 * the path's frames carry, from the host's route to attr.dgid; the
	 * packets' destination stays attr.dgid.  Without: the NIC's own
	 * routes (snic_nic_config.routes), else the destination itself. */
	uint8_t next_hop[16];
};

#define SNIC_CMD_DATA_SIZE 960

struct snic_cmd {
	uint16_t opcode;        /* enum snic_cmd_op                           */
	uint16_t rsvd;
	uint32_t status;        /* enum snic_status, written by the firmware  */
	uint32_t rsvd1[2];
	uint8_t in[SNIC_CMD_DATA_SIZE];
	uint8_t out[SNIC_CMD_DATA_SIZE];
};

/* ---------------------------------------------------------------------- */
/* Event queue (per context, in the BAR).                                  */

#define SNIC_EVENT_COMP 0x100u  /* obj = cqn: an armed CQ got a completion */

/* Asynchronous event types: the values of enum ibv_event_type, so the host
 * passes them through unchanged (IBTA 11.6.3: affiliated and unaffiliated
 * asynchronous events).  obj = qpn / cqn / srqn / port. */
enum snic_event_type {
	SNIC_EV_CQ_ERR = 0,             /* obj = cqn (CQ overrun, 11.4.2.1) */
	SNIC_EV_QP_FATAL = 1,           /* obj = qpn                        */
	SNIC_EV_QP_REQ_ERR = 2,         /* obj = qpn: invalid request       */
	SNIC_EV_QP_ACCESS_ERR = 3,      /* obj = qpn: access violation      */
	SNIC_EV_PORT_ACTIVE = 9,        /* obj = port                       */
	SNIC_EV_PORT_ERR = 10,          /* obj = port                       */
	SNIC_EV_SRQ_LIMIT_REACHED = 15, /* obj = srqn                       */
	SNIC_EV_COMP = SNIC_EVENT_COMP, /* obj = cqn (not an ibv event)      */
	SNIC_EV_NONE = -1,              /* firmware-internal: no event      */
};

struct snic_eqe {
	uint32_t type;
	uint32_t obj;
	uint32_t data;
	uint32_t rsvd;
};

/*
 * Context slot.  Host: claim with CAS(state, FREE, CLAIMED) and store its
 * pid, then issue CTX_OPEN.  Command protocol: the host fills `cmd`, does
 * store-release cmd_seq = n, rings SNIC_DB_SUMMARY_CMD; the firmware copies
 * the input out of the BAR first (the host may be hostile), executes,
 * writes out/status and store-releases cmd_done = n, then wakes futex
 * waiters on cmd_done.  Events: the firmware writes eq[eq_pi & mask] then
 * store-releases eq_pi + 1 and wakes futex waiters on eq_pi; the host
 * store-releases eq_ci as it consumes.
 */
enum snic_ctx_state {
	SNIC_CTX_FREE = 0,
	SNIC_CTX_CLAIMED = 1,
	SNIC_CTX_OPEN = 2,
	/* The owner process died without closing (seen by a host-side
	 * watcher: CAS OPEN -> ORPHAN, never from another state).  The
	 * firmware destroys what the context owned and frees the slot: the
	 * way for boards that cannot see host processes and have no broker.
	 * Ignored on boards that reap themselves (snic_nic_config.board_reaps:
	 * emu, qemu-virt with its host agent), since any process can write it
	 * into any slot. */
	SNIC_CTX_ORPHAN = 3,
};

struct snic_ctx_slot {
	_Atomic uint32_t state;
	_Atomic uint32_t owner_pid;
	_Atomic uint32_t cmd_seq;
	_Atomic uint32_t cmd_done;
	_Atomic uint32_t eq_pi;
	_Atomic uint32_t eq_ci;
	/* CM: bumped (and futex-woken) when a MAD is queued for CM_RECV */
	_Atomic uint32_t cm_pi;
	/* firmware cores the context's QPs run on ("Doorbells"), written by
	 * the firmware before the context opens */
	_Atomic uint32_t db_cores;
	uint32_t rsvd[8];
	struct snic_cmd cmd;
	struct snic_eqe eq[SNIC_EQ_SIZE];
};

_Static_assert(sizeof(struct snic_ctx_slot) <= SNIC_CTX_DB_OFF,
	       "context slot too large");
_Static_assert(sizeof(struct snic_doorbells) <= SNIC_BAR_CTX_OFF - SNIC_BAR_DB_OFF,
	       "doorbell area too large");

/* ---------------------------------------------------------------------- */
/* Statistics area (SNIC_BAR_STATS_OFF), for inspection tools (snicctl).    */

/*
 * The firmware publishes its counters here when a reader asks and on its
 * own only every SNIC_STATS_PUBLISH_NS, so a reader outside the NIC
 * process never touches the firmware's own state and the data path does
 * not pay for copies nobody reads.  To read current values, a tool
 * increments pub_req (atomic) and waits until pub_done equals its value:
 * that publication holds every counter and the whole QP table as they
 * were when the firmware saw the request (it looks every
 * SNIC_STATS_PERIOD_NS).  Names are written once
 * at init (cnt_name[i] names cnt[i], qp_cnt_name[k] names qp[].cnt[k]), so
 * tools need no copy of the lists.
 *
 * Consistency: a seqlock.  The firmware makes seq odd, writes, makes it
 * even again (release).  A reader loads seq (acquire), copies, fences
 * (acquire), reloads seq and retries while it was odd or changed.
 *
 * QP table: entry i is QP index i (SNIC_QPN_IDX(qpn)); valid != 0 while the
 * QP exists.  A requested publication refreshes every entry; an unrequested
 * one a bounded number, so its cost does not depend on how many QPs
 * exist.
 *
 * Reset: a tool increments reset_req (atomic); the firmware zeroes every
 * counter (NIC and QPs) and then stores reset_done = reset_req.
 */
#define SNIC_STATS_MAX_CNT        128
#define SNIC_STATS_MAX_QP_CNT     32
#define SNIC_STATS_NAME_LEN       32
#define SNIC_STATS_PERIOD_NS      1000000ull  /* 1 ms: requests, link   */
#define SNIC_STATS_PUBLISH_NS     100000000ull /* 100 ms: unrequested    */
#define SNIC_STATS_QPS_PER_UPDATE 128

struct snic_stats_qp {
	uint32_t qpn;
	uint8_t valid;
	uint8_t state;             /* enum snic_qp_state                      */
	uint8_t ctx;               /* owning context slot                     */
	uint8_t rsvd0;
	uint32_t dest_qpn;
	uint32_t sq_psn;           /* next PSN the requester sends (npsn)     */
	uint32_t acked_psn;        /* highest PSN acknowledged                */
	uint32_t epsn;             /* responder: next PSN expected            */
	/* The peer's address as its RoCE v2 GID (network order): IPv4-mapped
	 * (::ffff:a.b.c.d) or IPv6; zero until the QP has an address vector. */
	uint8_t peer[16];
	uint64_t cnt[SNIC_STATS_MAX_QP_CNT];
};

/* CM state (nic/cm_router.c), refreshed with every update: who listens on
 * which ServiceID, and the connections whose death MAD is armed (the
 * established ones, hostif "Communication management"). */
#define SNIC_STATS_CM_LISTEN 256
#define SNIC_STATS_CM_CONN   512

struct snic_stats_cm_listen {
	uint64_t service_id;
	uint32_t ctx;
	uint32_t pid;              /* owner of the context slot               */
};

struct snic_stats_cm_conn {
	uint32_t cid;              /* local communication ID                  */
	uint32_t peer_ip;          /* host order                              */
	uint32_t ctx;
	uint32_t pid;
};

struct snic_stats {
	_Atomic uint32_t seq;      /* seqlock, odd while being written        */
	uint32_t ncnt;             /* NIC counters in use                     */
	uint32_t nqp_cnt;          /* per-QP counters in use                  */
	uint32_t max_qp;           /* entries in qp[]                         */
	uint64_t update_ns;        /* firmware clock at the last update       */
	uint64_t updates;          /* updates published                       */
	uint32_t link_up;          /* port 1 link state seen by the firmware  */
	uint32_t active_mtu;       /* path MTU in bytes                       */
	uint32_t eth_mtu;
	_Atomic uint32_t reset_req;/* tools increment it                      */
	_Atomic uint32_t reset_done;
	_Atomic uint32_t pub_req;  /* tools increment it: publish now         */
	_Atomic uint32_t pub_done; /* pub_req of the last publication         */
	uint32_t rsvd[3];
	char cnt_name[SNIC_STATS_MAX_CNT][SNIC_STATS_NAME_LEN];
	char qp_cnt_name[SNIC_STATS_MAX_QP_CNT][SNIC_STATS_NAME_LEN];
	uint64_t cnt[SNIC_STATS_MAX_CNT];
	struct snic_stats_qp qp[SNIC_MAX_QP];
	uint32_t cm_nlisten, cm_nconn;
	struct snic_stats_cm_listen cm_listen[SNIC_STATS_CM_LISTEN];
	struct snic_stats_cm_conn cm_conn[SNIC_STATS_CM_CONN];
};

_Static_assert(sizeof(struct snic_stats) <= SNIC_BAR_STATS_SIZE,
	       "statistics area too large");

/* ---------------------------------------------------------------------- */
/* Host-memory structures: doorbell records, WQEs, CQEs.                   */

/* Per-QP doorbell record, 64-byte aligned, written by the host. */
struct snic_qp_dbrec {
	_Atomic uint32_t sq_pi; /* WQEs posted to the SQ (free-running)       */
	_Atomic uint32_t rq_pi; /* WQEs posted to the RQ                      */
	uint32_t rsvd[14];
};

/* Per-CQ doorbell record, 64-byte aligned.  ci: CQEs consumed by the host
 * (the firmware reports a CQ overrun rather than overwrite).  arm_sn: the
 * host increments it to request one event for the next completion
 * (arm_solicited = 1 for solicited-only). */
struct snic_cq_dbrec {
	_Atomic uint32_t ci;
	_Atomic uint32_t arm_sn;
	_Atomic uint32_t arm_solicited;
	uint32_t rsvd[13];
};

/* Send WQE opcodes: values of enum ibv_wr_opcode. */
enum snic_wr_opcode {
	SNIC_WR_RDMA_WRITE = 0,
	SNIC_WR_RDMA_WRITE_WITH_IMM = 1,
	SNIC_WR_SEND = 2,
	SNIC_WR_SEND_WITH_IMM = 3,
	SNIC_WR_RDMA_READ = 4,
	SNIC_WR_ATOMIC_CMP_AND_SWP = 5,
	SNIC_WR_ATOMIC_FETCH_AND_ADD = 6,
	/* IBV_WR_ATOMIC_WRITE: the 8 bytes to write in atomic.swap (as the
	 * application's memory holds them), remote address and rkey in
	 * raddr, no SGE. */
	SNIC_WR_ATOMIC_WRITE = 15,
	/* Memory windows (objects/mw.c).  LOCAL_INV and SEND_WITH_INV: the
	 * R_Key to invalidate in imm_data, network order (as the IETH
	 * carries it).  BIND_MW: struct snic_wqe_bind in place of raddr and
	 * atomic, no SGE. */
	SNIC_WR_LOCAL_INV = 7,
	SNIC_WR_BIND_MW = 8,
	SNIC_WR_SEND_WITH_INV = 9,
};

/* Send flags: values of enum ibv_send_flags. */
enum snic_send_flags {
	SNIC_SEND_FENCE = 1 << 0,
	SNIC_SEND_SIGNALED = 1 << 1,
	SNIC_SEND_SOLICITED = 1 << 2,
	SNIC_SEND_INLINE = 1 << 3,
};

/* Send WQE: a 64-byte header block (ctrl, raddr, atomic), then num_sge
 * data segments (16 bytes each) or inline_len bytes of inline data from
 * snic_wqe_data_off(): offset 48, over the atomic operands, for the work
 * requests of RC, UC and XRC QPs that carry none, 64 for the rest (below
 * the QP types).  Stride 1 << sq_stride_log. */
struct snic_wqe_ctrl {
	uint64_t wr_id;
	uint8_t opcode;         /* enum snic_wr_opcode                        */
	uint8_t flags;          /* enum snic_send_flags                       */
	uint8_t num_sge;
	uint8_t rsvd0;
	uint32_t imm_data;      /* network order, as ibv_send_wr.imm_data     */
	uint32_t inline_len;
	uint32_t xrc_srqn;      /* XRC_SEND: the remote XRC SRQ (XRCETH)      */
	uint64_t rsvd2;
};

struct snic_wqe_raddr {
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t rsvd;
};

struct snic_wqe_atomic {
	uint64_t compare_add;
	uint64_t swap;
};

/* A BIND_MW WQE's operands (IBTA 10.6.7.2 Bind Memory Window), where
 * raddr and atomic are in other WQEs.  ctrl.rsvd0 is SNIC_BIND_TYPE_1
 * for ibv_bind_mw (a type 1 window), 0 for IBV_WR_BIND_MW (type 2B). */
struct snic_wqe_bind {
	uint64_t addr;          /* window start (an address of the MR)        */
	uint64_t length;        /* 0: unbind (type 1)                         */
	uint32_t mw_rkey;       /* the window's current R_Key                 */
	uint32_t new_rkey;      /* its R_Key once bound: same but the low
				 * 8 bits (the consumer's key, ibv_inc_rkey) */
	uint32_t mr_lkey;       /* the MR the window opens on                 */
	uint32_t access;        /* enum snic_access: remote rights            */
};
#define SNIC_BIND_TYPE_1    1u

struct snic_wqe_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct snic_send_wqe {
	struct snic_wqe_ctrl ctrl;       /* 32 */
	struct snic_wqe_raddr raddr;     /* 16 */
	struct snic_wqe_atomic atomic;   /* 16 */
	/* struct snic_wqe_sge sge[num_sge] or inline bytes at
	 * snic_wqe_data_off(): here, or in place of atomic */
};

/* Receive WQE: 16-byte header, then num_sge segments.  Stride
 * 1 << rq_stride_log. */
struct snic_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t rsvd;
	/* struct snic_wqe_sge sge[num_sge] follow */
};

/* CQE, 64 bytes; bit 0 of the byte `owner` (offset 60, the rest is
 * padding) is the owner bit: the firmware writes CQE number n with
 * owner = (n / cqe_cnt) & 1 ^ 1, the body before and the owner byte after
 * a release fence, so a zero-filled ring reads as empty on the first pass.
 * The host polls slot (ci & mask) and accepts it when
 * owner == ((ci / cqe_cnt) & 1) ^ 1, reading the rest after an acquire
 * fence. */
struct snic_cqe {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm_data;      /* network order                              */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wqe_idx;       /* SQ/RQ index of the WQE this completes;
				 * send: every earlier unsignaled WQE is done */
	uint32_t vendor_err;
	uint16_t wc_flags;      /* ibv_wc_flags                               */
	uint8_t status;         /* ibv_wc_status                              */
	uint8_t opcode;         /* ibv_wc_opcode                              */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl, dlid_path_bits;
	uint8_t is_send;        /* 1: from the SQ, 0: from the RQ             */
	uint8_t xrc;            /* 1: a RECV of the XRC SRQ xrc_srqn          */
	uint32_t xrc_srqn;
	uint8_t rsvd[12];
	uint8_t owner;
};
_Static_assert(sizeof(struct snic_cqe) == 64, "CQE size");


/* UD receive over RoCE v2: cqe.sl holds the network header type of the
 * received frame (IBTA Annex A17.4.5.1; values as mlx5's CQE): */
#define SNIC_CQE_SL_ROCE_IPV6 1u  /* mlx5 MLX5_CQE_ROCE_L3_HEADER_TYPE_IPV6 */
#define SNIC_CQE_SL_ROCE_IPV4 2u

_Static_assert(sizeof(struct snic_cqe) == 64, "CQE must be 64 bytes");
_Static_assert(sizeof(struct snic_send_wqe) == 64, "WQE header block");
_Static_assert(sizeof(struct snic_wqe_sge) == 16, "SGE must be 16 bytes");
_Static_assert(sizeof(struct snic_wqe_bind) == sizeof(struct snic_wqe_raddr) +
	       sizeof(struct snic_wqe_atomic), "bind operands: raddr + atomic");
_Static_assert(sizeof(struct snic_qp_dbrec) == 64, "dbrec 64 bytes");
_Static_assert(sizeof(struct snic_cq_dbrec) == 64, "dbrec 64 bytes");

/* WC status / opcode values used by the firmware (enum ibv_wc_status,
 * enum ibv_wc_opcode). */
enum snic_wc_status {
	SNIC_WC_SUCCESS = 0,
	SNIC_WC_LOC_LEN_ERR = 1,
	SNIC_WC_LOC_QP_OP_ERR = 2,
	SNIC_WC_LOC_EEC_OP_ERR = 3,
	SNIC_WC_LOC_PROT_ERR = 4,
	SNIC_WC_WR_FLUSH_ERR = 5,
	SNIC_WC_MW_BIND_ERR = 6,
	SNIC_WC_BAD_RESP_ERR = 7,
	SNIC_WC_LOC_ACCESS_ERR = 8,
	SNIC_WC_REM_INV_REQ_ERR = 9,
	SNIC_WC_REM_ACCESS_ERR = 10,
	SNIC_WC_REM_OP_ERR = 11,
	SNIC_WC_RETRY_EXC_ERR = 12,
	SNIC_WC_RNR_RETRY_EXC_ERR = 13,
	SNIC_WC_FATAL_ERR = 19,
	SNIC_WC_GENERAL_ERR = 21,
};

enum snic_wc_opcode {
	SNIC_WC_SEND = 0,
	SNIC_WC_RDMA_WRITE = 1,
	SNIC_WC_RDMA_READ = 2,
	SNIC_WC_COMP_SWAP = 3,
	SNIC_WC_FETCH_ADD = 4,
	SNIC_WC_BIND_MW = 5,
	SNIC_WC_LOCAL_INV = 6,
	SNIC_WC_ATOMIC_WRITE = 9,
	SNIC_WC_RECV = 128,
	SNIC_WC_RECV_RDMA_WITH_IMM = 129,
};

enum snic_wc_flags {
	SNIC_WC_WITH_IMM = 1 << 1,
	SNIC_WC_WITH_INV = 1 << 3,      /* imm_data: the invalidated R_Key    */
};

/* Access flags: values of enum ibv_access_flags. */
enum snic_access {
	SNIC_ACCESS_LOCAL_WRITE = 1 << 0,
	SNIC_ACCESS_REMOTE_WRITE = 1 << 1,
	SNIC_ACCESS_REMOTE_READ = 1 << 2,
	SNIC_ACCESS_REMOTE_ATOMIC = 1 << 3,
	SNIC_ACCESS_MW_BIND = 1 << 4,   /* windows may be bound on the MR   */
};

/* ---------------------------------------------------------------------- */
/* Shared receive queues, UD and UC QPs.                                   */

#define SNIC_MAX_SRQ        1024
#define SNIC_MAX_SRQ_WR     16384
#define SNIC_MAX_AH         (1u << 20) /* host-side objects: not a pool    */

/* QP types: values of enum ibv_qp_type. */
enum snic_qp_type {
	SNIC_QPT_RC = 2,
	SNIC_QPT_UC = 3,
	SNIC_QPT_UD = 4,
	SNIC_QPT_RAW_PACKET = 8, /* whole Ethernet frames (raw.c)             */
	SNIC_QPT_XRC_SEND = 9,  /* XRC initiator (hostif "XRC" below)          */
	SNIC_QPT_XRC_RECV = 10, /* XRC target                                  */
};

/*
 * Where a send WQE's data (SGEs or inline bytes) starts: at 48, in place
 * of the atomic operands, for the work requests that have no atomic, bind
 * or UD operands on a QP type whose address is not in the header (RC, UC,
 * XRC: WRITE, WRITE_WITH_IMM, SEND, SEND_WITH_IMM, SEND_WITH_INV, READ),
 * so that a one-SGE message is one 64-byte line for the NIC to read and
 * for the host core to hand over (issue 11); at 64 for everything else
 * (atomics and ATOMIC_WRITE, BIND_MW, LOCAL_INV; UD, whose address fills
 * raddr + atomic; raw packet).  Host and firmware both use this function;
 * any value is safe (unknown types and opcodes: 64).  A slot's capacity
 * (max_send_sge, max_inline) is counted from 64 as before: data at 48
 * ends 16 bytes before the slot does.
 */
#define SNIC_WQE_DATA_SHORT 48u
#define SNIC_WQE_DATA_LONG  64u
#define SNIC_WQE_SHORT_QPTS (1u << SNIC_QPT_RC | 1u << SNIC_QPT_UC |        \
			     1u << SNIC_QPT_XRC_SEND)
#define SNIC_WQE_SHORT_OPS (1u << SNIC_WR_RDMA_WRITE |                     \
			    1u << SNIC_WR_RDMA_WRITE_WITH_IMM |            \
			    1u << SNIC_WR_SEND | 1u << SNIC_WR_SEND_WITH_IMM | \
			    1u << SNIC_WR_SEND_WITH_INV |                  \
			    1u << SNIC_WR_RDMA_READ)

/* Does the QP type put some work requests' data at 48? */
static inline int snic_wqe_qpt_short(uint32_t qp_type)
{
	return qp_type < 32 && (SNIC_WQE_SHORT_QPTS >> qp_type & 1u);
}

static inline uint32_t snic_wqe_data_off(uint32_t qp_type, uint32_t opcode)
{
	return snic_wqe_qpt_short(qp_type) && opcode < 32 &&
	       (SNIC_WQE_SHORT_OPS >> opcode & 1u) ? SNIC_WQE_DATA_SHORT
						   : SNIC_WQE_DATA_LONG;
}
_Static_assert(sizeof(struct snic_wqe_ctrl) + sizeof(struct snic_wqe_raddr) ==
	       SNIC_WQE_DATA_SHORT &&
	       sizeof(struct snic_wqe_atomic) == sizeof(struct snic_wqe_sge),
	       "a short WQE's first SGE is where the atomic operands are");

/* CREATE_QP input: the command's `in` area holds a snic_cmd_create_qp
 * followed by these fields (zero from hosts that do not know them). */
struct snic_cmd_create_qp_ext {
	struct snic_cmd_create_qp qp;
	uint32_t flags;         /* SNIC_QP_F_*                                */
	uint32_t srqn;          /* with SNIC_QP_F_SRQ: receives come from it  */
	uint32_t xrcd;          /* XRC_RECV: its XRC domain                   */
	uint32_t rsvd;
};
#define SNIC_QP_F_SRQ 1u

/* SRQ: a ring of receive WQEs (struct snic_recv_wqe layout) and a
 * doorbell record whose producer index the host advances; the firmware
 * consumes in order and reads the record when it runs out. */
struct snic_srq_dbrec {
	_Atomic uint32_t pi;    /* WQEs posted (free-running)                 */
	uint32_t rsvd[15];
};

struct snic_cmd_create_srq {
	uint32_t pdn;
	uint32_t wqe_cnt;       /* power of two                               */
	uint32_t stride_log;    /* log2 of the WQE stride (>= 5)              */
	uint32_t max_sge;
	uint32_t srq_limit;     /* 0: not armed                               */
	uint32_t flags;         /* SNIC_SRQ_F_*                               */
	uint64_t ring_pa;
	uint64_t dbrec_pa;      /* struct snic_srq_dbrec                      */
	uint32_t xrcd;          /* SNIC_SRQ_F_XRC: its XRC domain ...         */
	uint32_t cqn;           /* ... and the CQ its RECVs complete on       */
};
#define SNIC_SRQ_F_XRC 1u

/* attr_mask: values of enum ibv_srq_attr_mask. */
#define SNIC_SRQ_MAX_WR 1u
#define SNIC_SRQ_LIMIT  2u

struct snic_cmd_modify_srq {
	uint32_t srqn;
	uint32_t attr_mask;
	uint32_t max_wr;        /* resizing is not supported (NOTSUP)         */
	uint32_t srq_limit;     /* arms the limit event (IBTA 10.2.9.6)      */
};

struct snic_srq_attr {
	uint32_t max_wr, max_sge, srq_limit, rsvd;
};

/* IBV_EVENT_SRQ_LIMIT_REACHED: obj = srqn; fires once per arming. */
#define SNIC_EVENT_SRQ_LIMIT ((uint32_t)SNIC_EV_SRQ_LIMIT_REACHED)

/* UD send WQE: the remote-address and atomic segments of the header block
 * carry the destination instead (from the host's address handle). */
struct snic_wqe_ud {
	uint32_t remote_qpn;
	uint32_t remote_qkey;   /* MSB set: use the QP's own Q_Key (C10-15)   */
	uint8_t dgid[16];       /* network order; IPv4-mapped or IPv6         */
	uint8_t hop_limit, traffic_class;
	uint16_t rsvd;
	uint32_t flow_label;
};

_Static_assert(sizeof(struct snic_wqe_ud) ==
	       sizeof(struct snic_wqe_raddr) + sizeof(struct snic_wqe_atomic),
	       "UD address fits the raddr + atomic segments");

/* UD receives: the first 40 bytes of the buffer hold the GRH; for RoCE v2
 * over IPv4 its last 20 bytes are the packet's IPv4 header (as Linux rxe
 * and mlx5 do), over IPv6 it is the packet's IPv6 header; wc_flags has
 * SNIC_WC_GRH. */
#define SNIC_GRH_LEN 40u
#define SNIC_WC_GRH  (1u << 0)

/* ---------------------------------------------------------------------- */
/* Communication management (IBTA vol. 1 ch. 12).                          */

/*
 * The firmware owns QP1 (the GSI QP) of its port.  CM MADs (class 0x07)
 * arriving there are routed to the context that listens on the REQ's or
 * SIDR_REQ's ServiceID, or that owns the communication ID the message is
 * addressed to, and queued for it: the firmware bumps the slot's cm_pi
 * and wakes futex waiters on it; the host takes them with CM_RECV.  A
 * context sends a MAD with CM_SEND; the firmware checks that the MAD's
 * own communication ID is the context's (or, for SIDR_REP, that the
 * context listens on its ServiceID) and adds every header below the MAD
 * (IP/UDP/BTH/DETH with Q_Key 0x80010000, P_Key 0xffff, source QP 1).
 *
 * Communication IDs: CM_OPEN gives a context the range cid_base |
 * (n & cid_mask); the range carries the slot and a generation, so a
 * message for a connection of a dead context reaches nobody.  A context
 * may arm, per connection, the MAD the firmware sends for it when the
 * context dies (a DREQ when connected, a REJ while connecting): its peer
 * hears of the death at once instead of timing out.
 *
 * Command numbers start at 0x40, apart from the verbs commands.
 */
#define SNIC_GSI_QPN        1u
#define SNIC_GSI_QKEY       0x80010000u
#define SNIC_CM_MAD_SIZE    256u

enum snic_cm_cmd_op {
	SNIC_CMD_CM_OPEN = 0x40, /* out: cm_open                               */
	SNIC_CMD_CM_LISTEN,     /* in: cm_listen   BUSY: another context has it */
	SNIC_CMD_CM_UNLISTEN,   /* in: cm_listen                              */
	SNIC_CMD_CM_SEND,       /* in: cm_mad      PERM: not this context's ID */
	SNIC_CMD_CM_RECV,       /* out: cm_mad     NOENT: nothing queued       */
	SNIC_CMD_CM_ARM,        /* in: cm_mad (cid; mad all zero = disarm)    */
	SNIC_CMD_CM_RESOLVE,    /* in/out: cm_resolve  NOENT: MAC not known yet */
	SNIC_CMD_CM_NOTE,       /* in: cm_note: host-side CM events to count  */
	SNIC_CMD_CM_END
};

struct snic_cm_open {
	uint32_t cid_base;
	uint32_t cid_mask;
};

struct snic_cm_listen {
	uint64_t service_id;    /* host order                                 */
};

/* A MAD with its peer: destination for CM_SEND / CM_ARM, source for
 * CM_RECV.  mad[] is in network order, exactly as on the wire. */
struct snic_cm_mad {
	uint32_t peer_ip;       /* IPv4, host order                           */
	uint32_t flags;         /* SNIC_CM_F_*                                */
	uint32_t cid;           /* CM_ARM: the local communication ID         */
	uint32_t peer_qpn;      /* CM_RECV: source QP (1 for a CM agent)      */
	uint8_t mad[SNIC_CM_MAD_SIZE];
	/* CM_SEND / CM_ARM: the router whose MAC the frame carries (IPv4,
	 * host order; the host's route to peer_ip); 0 = the NIC's own routes,
	 * else peer_ip itself (wire/route.c) */
	uint32_t next_hop;
	uint32_t rsvd;
};
#define SNIC_CM_F_RETRY     1u  /* CM_SEND: a retransmission (counted)    */

struct snic_cm_resolve {
	uint32_t ip;            /* in: IPv4, host order                       */
	uint32_t send_arp;      /* in: ask by ARP when not known              */
	uint8_t mac[6];         /* out                                        */
	uint8_t rsvd[2];
};

struct snic_cm_note {
	uint32_t timeouts;      /* MADs whose retries ran out                 */
	uint32_t rsvd;
};

/* CM over IPv6 (0xA0 block): the CM commands with 16-byte addresses, as
 * a RoCE v2 GID holds them (IPv6, or IPv4 mapped ::ffff:a.b.c.d), so that
 * MADs go to and come from IPv6 peers (RoCE v2 over IPv6, IBTA A17.4).
 * The firmware keeps one queue: CM_RECV6 hands out MADs from IPv4 and
 * IPv6 peers alike; the IPv4 CM_RECV drops (and counts in
 * cm_drop_bad_mad) a MAD from an IPv6 peer that it meets, as it cannot
 * name its peer. */
enum snic_cm6_cmd_op {
	SNIC_CMD_CM_SEND6 = 0xA0, /* in: cm_mad6  PERM: not this context's ID;
				   * NOTSUP: an IPv6 peer, the NIC has no IPv6 */
	SNIC_CMD_CM_RECV6,      /* out: cm_mad6    NOENT: nothing queued       */
	SNIC_CMD_CM_ARM6,       /* in: cm_mad6 (cid; mad all zero = disarm)   */
	SNIC_CMD_CM_RESOLVE6,   /* in/out: cm_resolve6  NOENT: MAC not known yet */
	SNIC_CMD_CM6_END
};

/* snic_cm_mad with 16-byte addresses (network order). */
struct snic_cm_mad6 {
	uint8_t peer[16];       /* destination (SEND6/ARM6) or source (RECV6) */
	/* SEND6 / ARM6: the router whose MAC the frame carries (the host's
	 * route); all zero = the NIC's own routes, else peer itself */
	uint8_t next_hop[16];
	uint32_t flags;         /* SNIC_CM_F_*                                */
	uint32_t cid;           /* ARM6: the local communication ID           */
	uint32_t peer_qpn;      /* RECV6: source QP (1 for a CM agent)        */
	uint32_t rsvd;
	uint8_t mad[SNIC_CM_MAD_SIZE];
};

/* snic_cm_resolve with a 16-byte address: ARP for a mapped IPv4 address,
 * neighbour discovery (RFC 4861) for an IPv6 one. */
struct snic_cm_resolve6 {
	uint8_t addr[16];       /* in                                         */
	uint32_t send_req;      /* in: ask (ARP / neighbour solicitation)     */
	uint8_t mac[6];         /* out                                        */
	uint8_t rsvd[2];
};

/* CM MAD layout (IBTA 13.4.3 base header; 12.6 message contents). */
#define SNIC_MAD_CLASS_CM   0x07u
#define SNIC_MAD_METHOD_SEND 0x03u
#define SNIC_CM_HDR_LEN     24u  /* the CM message starts here            */
enum snic_cm_attr {
	SNIC_CM_ATTR_REQ = 0x0010,
	SNIC_CM_ATTR_MRA = 0x0011,
	SNIC_CM_ATTR_REJ = 0x0012,
	SNIC_CM_ATTR_REP = 0x0013,
	SNIC_CM_ATTR_RTU = 0x0014,
	SNIC_CM_ATTR_DREQ = 0x0015,
	SNIC_CM_ATTR_DREP = 0x0016,
	SNIC_CM_ATTR_SIDR_REQ = 0x0017,
	SNIC_CM_ATTR_SIDR_REP = 0x0018,
	SNIC_CM_ATTR_LAP = 0x0019,
	SNIC_CM_ATTR_APR = 0x001a,
};

/* ---------------------------------------------------------------------- */
/* Memory windows (issue 14; objects/mw.c).  A window takes a slot of the
 * MR table: its R_Key is index and generation like an MR key.  Binding
 * and invalidation are work requests (snic_wqe_bind, SNIC_WR_LOCAL_INV,
 * SNIC_WR_SEND_WITH_INV); the commands only create and destroy. */
enum snic_mw_cmd_op {
	SNIC_CMD_ALLOC_MW = 0x50, /* in: alloc_mw    out: handle (R_Key)      */
	SNIC_CMD_DEALLOC_MW,    /* in: handle (the window's R_Key)            */
	SNIC_CMD_MW_END
};

struct snic_cmd_alloc_mw {
	uint32_t pdn;
	uint32_t type;          /* enum ibv_mw_type: 1 or 2 (type 2B)         */
};

/* XRC: extended reliable connected transport (IBTA vol. 1 Annex A14).     */

/*
 * An XRC domain (ibv_open_xrcd) groups XRC SRQs and XRC_RECV (target)
 * QPs.  An XRC_SEND (initiator) QP is an RC requester without a receive
 * queue: each send WQE names the remote XRC SRQ (snic_wqe_ctrl.xrc_srqn),
 * which travels in the XRCETH after the BTH of every request (BTH opcodes
 * 0xA0.., the RC ones in the XRC class).  The target QP takes the RECV
 * from that SRQ, which must be in the target's domain; the completion
 * goes to the SRQ's CQ with cqe.xrc set.
 *
 * OPEN_XRCD with SNIC_XRCD_F_INODE names the file (dev, ino) the domain
 * is tied to (ibv_open_xrcd's fd): opening it again from the same context
 * returns the same domain (its open count grows, CLOSE_XRCD drops it);
 * without SNIC_XRCD_F_CREATE an unknown file is NOENT, with
 * SNIC_XRCD_F_EXCL a known one is INVAL (both EINVAL, as the kernel); a
 * file another context holds is NOTSUP (sharing a domain between
 * processes is not implemented).
 * CLOSE_XRCD of the last opening: BUSY while SRQs or QPs use it.
 */
enum snic_xrc_cmd_op {
	SNIC_CMD_OPEN_XRCD = 0x58, /* in: open_xrcd     out: handle (xrcd)   */
	SNIC_CMD_CLOSE_XRCD,    /* in: handle                                */
	SNIC_CMD_XRC_END
};

#define SNIC_XRCD_F_INODE  1u
#define SNIC_XRCD_F_CREATE 2u
#define SNIC_XRCD_F_EXCL   4u

struct snic_cmd_open_xrcd {
	uint64_t dev, ino;      /* with SNIC_XRCD_F_INODE                     */
	uint32_t flags;         /* SNIC_XRCD_F_*                              */
	uint32_t rsvd;
};

#define SNIC_MAX_XRCD      256
#define SNIC_CTX_MAX_XRCD  240     /* per-context quota                  */
/* device_cap_flags: IBV_DEVICE_XRC */
#define SNIC_DEV_CAP_XRC   (1u << 20)

/* Multicast, raw packet QPs and flow steering (commands from 0x68).       */

/* UD multicast (IBTA 10.5, RoCE v2 A17.4.5): a group is an IPv4
 * multicast address (its GID ::ffff:224.0.0.0/4); a datagram to it goes
 * once to the port (Ethernet 01:00:5e + the address's low 23 bits, RFC
 * 1112 6.4) and to every QP attached to it on every NIC of the link,
 * this one included (loopback), DestQP 0xFFFFFF (IBTA 9.6.1.4.1).  A
 * NIC holds SNIC_MAX_MCAST_GRP groups of SNIC_MAX_MCAST_QP_ATTACH QPs.
 * MCAST_ATTACH: INVAL for a QP that is not UD or a GID that is not an
 * IPv4 multicast one, NOMEM when the table or the group is full, OK for
 * a QP already attached.  MCAST_DETACH: NOENT when it is not attached. */
#define SNIC_MAX_MCAST_GRP       16
#define SNIC_MAX_MCAST_QP_ATTACH 8
#define SNIC_MCAST_QPN           0xffffffu

enum snic_raw_cmd_op {
	SNIC_CMD_MCAST_ATTACH = 0x68, /* in: mcast                           */
	SNIC_CMD_MCAST_DETACH,  /* in: mcast                                  */
	SNIC_CMD_FLOW_CREATE,   /* in: flow          out: handle              */
	SNIC_CMD_FLOW_DESTROY,  /* in: handle                                 */
	SNIC_CMD_RAW_END
};

struct snic_cmd_mcast {
	uint32_t qpn;
	uint32_t flags;         /* SNIC_MCAST_F_*                             */
	uint8_t gid[16];        /* network order                              */
};
/* The QP does not receive the datagrams it sends itself to the group
 * (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB); other QPs of this NIC do. */
#define SNIC_MCAST_F_BLOCK_SELF 1u

/* Raw packet QPs (IBV_QPT_RAW_PACKET): a send WQE's SGEs or inline bytes
 * are one whole Ethernet frame (14 .. eth_mtu + 14 bytes), sent as it is;
 * a RECV takes one whole received frame (byte_len = its length).  Frames
 * reach a raw QP only through flows (ibv_create_flow): FLOW_CREATE steers
 * received frames that match every layer named in `layers` (value under
 * mask, all in network order as in the frame) to the QP, the rule of
 * lowest `priority` first, then the oldest.  An IPV4 layer implies
 * EtherType 0x0800, a UDP/TCP layer IPv4 with that protocol.  Frames no
 * flow matches go on as before (RoCE, ARP); a RoCE v2 frame (UDP
 * destination port 4791) is taken only by a flow that names UDP
 * destination port 4791 with a full mask, and ARP frames are never taken
 * (the NIC's own neighbour table needs them).  INVAL: unknown layer bits,
 * a QP that is not a raw packet QP; NOMEM: table full (SNIC_MAX_FLOWS).
 * A destroyed QP's flows go with it. */
#define SNIC_MAX_FLOWS          64

enum {
	SNIC_FLOW_L_ETH = 1u << 0,
	SNIC_FLOW_L_IPV4 = 1u << 1,
	SNIC_FLOW_L_UDP = 1u << 2,
	SNIC_FLOW_L_TCP = 1u << 3,
};

struct snic_flow_rule {
	uint8_t dmac[6], smac[6];
	uint16_t ether_type;    /* network order                              */
	uint16_t rsvd;
	uint32_t sip, dip;      /* network order                              */
	uint16_t dport, sport;  /* network order                              */
};

struct snic_cmd_flow {
	uint32_t qpn;
	uint16_t priority;
	uint16_t layers;        /* SNIC_FLOW_L_*                              */
	struct snic_flow_rule val, mask;
};

/* ---------------------------------------------------------------------- */
/* Host isolation: the broker (boards/common/host/ctx_broker.c: snic-emu's,
 * the QEMU NIC's host agent).                                               */

/*
 * A board with a broker listens on the Unix socket <rundir>/<name>.sock.
 * Connecting is the request for a context: the broker takes the caller's
 * pid from the kernel (SO_PEERCRED), opens a context slot for it (the
 * firmware's snic_nic_ctx_grant) and answers one snic_iso_ctx message
 * carrying two descriptors (SCM_RIGHTS): the slot (SNIC_CTX_SLOT_SIZE
 * bytes, to map over the BAR's slot `slot`) and the process's segment of
 * host memory (seg_len bytes, pa seg_pa..), the only pages its commands
 * may name.  No CTX_OPEN: the slot is OPEN.  The context lives as long as
 * the socket: its close (also by the process's death) is the context's
 * end.  Opcodes from 0x70, apart from the other command blocks.
 *
 * Isolation part 2 (messages from 0x98, enum snic_iso2_op):
 *  - the slot descriptor is SNIC_CTX_SLOT_SIZE bytes and covers the
 *    context's own doorbell page (SNIC_CTX_DB_OFF, "Doorbells" above);
 *  - device memory: after ALLOC_DM the host sends, on its context's
 *    socket, SNIC_ISO_DM_MAP with seg_pa/seg_len = the DM's offset and
 *    length in the DM area; the broker answers SNIC_ISO_DM_PAGES with one
 *    descriptor per 4 KiB page (page seg_pa / 4096 first, seg_len bytes),
 *    each a sealed memfd the NIC's view maps in place of the BAR file's
 *    page, or REFUSED: EACCES when a page is not this context's DM,
 *    EINVAL outside the area.  Pages the context frees (or leaves at its
 *    end) stay taken in the firmware until the broker has put the file's
 *    page back in the NIC's view (snic_nic_dm_held/_release, fw.h; a
 *    board asks for that with snic_nic_config.board_maps_dm), so a
 *    stale mapping never reaches the next owner's data.  The BAR file's
 *    DM area is then nobody's for a broker's contexts;
 *  - a process holds at most SNIC_BROKER_CTX_PER_PID contexts per NIC,
 *    and with the NICs shared with other users the processes of a uid
 *    at most SNIC_BROKER_CTX_PER_UID over all the broker's NICs and half
 *    of its segments (a process's one segment serves all its contexts):
 *    beyond, REFUSED with ENOSPC (EBUSY: every slot taken);
 *  - the statistics area is the broker's memfd in the NIC's view: the
 *    BAR file's area stays zero, so no context reads another's QP table
 *    (PSNs, peer addresses) or CM state from it.  <rundir>/<name>.admin.sock
 *    answers a peer whose uid is root's or the broker's own with one
 *    SNIC_ISO_ADMIN_STATS message carrying that memfd (seg_len bytes,
 *    struct snic_stats, read-write for pub_req/reset_req) and closes; any
 *    other peer gets REFUSED, EACCES.  A board without a broker keeps
 *    publishing into the BAR file.
 */
#define SNIC_BROKER_CTX_PER_PID (SNIC_MAX_CTX / 4)
/* With the NICs shared with other users (snic-emu --users): the processes
 * of one uid hold at most this many contexts of all a broker's NICs
 * together, and half of its segments, so one user cannot take every slot
 * or segment from the others (then REFUSED, ENOSPC). */
#define SNIC_BROKER_CTX_PER_UID (SNIC_MAX_CTX / 2)

enum snic_iso_op {
	SNIC_ISO_CTX_GRANT = 0x70,  /* broker -> host: snic_iso_ctx + 2 fds */
	SNIC_ISO_CTX_REFUSED,       /* broker -> host: status says why       */
	SNIC_ISO_END
};

enum snic_iso2_op {
	SNIC_ISO_ADMIN_STATS = 0x98, /* broker -> admin: snic_iso_ctx + 1 fd */
	SNIC_ISO_DM_MAP,            /* host -> broker: snic_iso_ctx          */
	SNIC_ISO_DM_PAGES,          /* broker -> host: snic_iso_ctx + 1 fd a page */
	SNIC_ISO2_END
};

struct snic_iso_ctx {
	uint32_t op;            /* enum snic_iso_op                           */
	uint32_t status;        /* errno value when refused                   */
	uint32_t slot;
	uint32_t rsvd;          /* DM_MAP: the host's question number, which
				 * its answer (DM_PAGES, REFUSED) repeats     */
	uint64_t seg_pa;        /* first byte of the segment                  */
	uint64_t seg_len;
};

#endif /* SNIC_HOSTIF_H */
