/* SPDX-License-Identifier: MIT */
/* The generic timer wheel (timer_wheel.h). */
#include "core/timer_wheel.h"

static void tw_unlink(struct snic_tw *tw, uint16_t id)
{
	struct snic_tw_ent *e = &tw->ent[id];
	uint16_t *prev_next = e->prev ? &tw->ent[e->prev].next
				      : &tw->slot[e->tick % SNIC_TW_SLOTS];

	*prev_next = e->next;
	if (e->next)
		tw->ent[e->next].prev = e->prev;
	e->on = false;
}

static void tw_link(struct snic_tw *tw, uint16_t id, uint64_t tick)
{
	struct snic_tw_ent *e = &tw->ent[id];
	uint16_t *head = &tw->slot[tick % SNIC_TW_SLOTS];

	e->tick = tick;
	e->prev = 0;
	e->next = *head;
	if (*head)
		tw->ent[*head].prev = id;
	*head = id;
	e->on = true;
}

void tw_file(struct snic_tw *tw, uint16_t id, uint64_t due)
{
	uint64_t tick = (due >> SNIC_TW_SHIFT) + 1;

	if (tick <= tw->done)
		tick = tw->done + 1;
	if (tw->ent[id].on) {
		if (tw->ent[id].tick <= tick)
			return;
		tw_unlink(tw, id);
	}
	tw_link(tw, id, tick);
}

void tw_cancel(struct snic_tw *tw, uint16_t id)
{
	if (tw->ent[id].on)
		tw_unlink(tw, id);
}

/* Visit the slots of the ticks that passed since the last poll. */
unsigned tw_poll(struct snic_tw *tw, uint64_t now, snic_tw_expire_fn *expire,
		 void *arg)
{
	uint64_t cur = now >> SNIC_TW_SHIFT;
	unsigned work = 0;

	if (tw->done == 0 || cur - tw->done > SNIC_TW_SLOTS)
		tw->done = cur > SNIC_TW_SLOTS ? cur - SNIC_TW_SLOTS : 0;
	while (tw->done < cur) {
		uint64_t t = ++tw->done;
		uint16_t id = tw->slot[t % SNIC_TW_SLOTS];

		tw->slot[t % SNIC_TW_SLOTS] = 0;
		while (id) {
			struct snic_tw_ent *e = &tw->ent[id];
			uint16_t cur_id = id;

			id = e->next;
			e->on = false;
			if (e->tick > t)
				tw_link(tw, cur_id, e->tick); /* a later round */
			else
				expire(arg, cur_id);
			work++;
		}
	}
	return work;
}

uint64_t tw_next(const struct snic_tw *tw)
{
	uint64_t first = UINT64_MAX;

	if (tw->done == 0) /* never polled: the first poll places `done` */
		return 0;
	/* the earliest filed tick, not the next slot with an entry: a slot
	 * also holds entries of later rounds, which tw_poll only files again
	 * (a core that sleeps through them loses nothing: see tw_poll) */
	for (unsigned i = 0; i < SNIC_TW_SLOTS; i++)
		for (uint16_t id = tw->slot[i]; id; id = tw->ent[id].next)
			if (tw->ent[id].tick < first)
				first = tw->ent[id].tick;
	return first == UINT64_MAX ? first : first << SNIC_TW_SHIFT;
}
