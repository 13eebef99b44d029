/* SPDX-License-Identifier: MIT */
/*
 * A hashed timer wheel of generic entries (ids 1..SNIC_TW_IDS; 0 = none).
 *
 * An entry with a deadline sits in exactly one slot, filed under the tick
 * (2^SNIC_TW_SHIFT ns) after its deadline.  Each poll visits only the
 * slots whose tick passed since the last poll, so its cost depends on the
 * entries filed there, never on idle ones.  Deadlines that move later are
 * not re-filed by the owner: the entry is handed back when its slot comes
 * round and the owner files it again then ("lazy" restart).
 */
#ifndef SNIC_CORE_TIMER_WHEEL_H
#define SNIC_CORE_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#include "snic/hostif.h"

#define SNIC_TW_SLOTS 256  /* slots ...                                   */
#define SNIC_TW_SHIFT 13   /* ... of 2^13 ns (8.2 us) each                */
#define SNIC_TW_IDS   SNIC_MAX_QP /* entries (the transport files QPs)    */

struct snic_tw_ent {
	bool on;                /* filed in a slot                           */
	uint16_t next, prev;    /* ids, 0 = none                             */
	uint64_t tick;
};

struct snic_tw {
	uint16_t slot[SNIC_TW_SLOTS]; /* first id, 0 = empty                 */
	uint64_t done;          /* last tick processed                       */
	struct snic_tw_ent ent[SNIC_TW_IDS + 1];
};

/* Called for an entry whose tick came; it is off the wheel then. */
typedef void snic_tw_expire_fn(void *arg, uint16_t id);

/* File id under deadline `due` (ns); no-op when it is already filed at
 * or before it: that slot's visit hands it back. */
void tw_file(struct snic_tw *tw, uint16_t id, uint64_t due);
void tw_cancel(struct snic_tw *tw, uint16_t id);
unsigned tw_poll(struct snic_tw *tw, uint64_t now, snic_tw_expire_fn *expire,
		 void *arg);
/* The time (ns) from which tw_poll has an entry to hand back, UINT64_MAX
 * when none is filed: an idle core may sleep until then.  It walks every
 * slot and entry, so it is for a core about to sleep only. */
uint64_t tw_next(const struct snic_tw *tw);
/* False when no tick passed since the last tw_poll, which then would
 * visit nothing and change nothing (most polls: the caller skips it). */
static inline bool tw_due(const struct snic_tw *tw, uint64_t now)
{
	return now >> SNIC_TW_SHIFT != tw->done;
}

#endif /* SNIC_CORE_TIMER_WHEEL_H */
