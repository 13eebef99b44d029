/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the lifecycle CQs, QPs and SRQs share.
 *
 * Each is a firmware object (a handle) with rings in the window (one
 * extent, memory/extent.c) and async events.  Creating one: its rings,
 * then the CREATE command, which names them; a failed command frees the
 * host side.  Destroying one: the DESTROY command (the firmware may refuse
 * it: EBUSY while QPs use a CQ or SRQ), then, under obj_lock, forgetting
 * it (lists, tables, queued events), then waiting for the acknowledgement
 * of every event handed out, then freeing it.  A firmware that is gone
 * counts as having destroyed it (as rdma-core treats a disassociated
 * device); its rings then stay allocated until the process is reaped.
 */
#include <stdlib.h>

#include "verbs/verbs.h"

int hd_obj_rings(struct hd_obj *o, const struct hd_obj_type *type,
		 struct hd_context *ctx, const uint64_t *bytes, unsigned n)
{
	o->type = type;
	o->ctx = ctx;
	return hd_rings_alloc(&o->rings, ctx->hm, bytes, n);
}

int hd_obj_create(struct hd_obj *o, uint16_t op, const void *in,
		  size_t in_len)
{
	struct snic_cmd_handle out;
	int err = hd_cmd(o->ctx, op, in, in_len, &out, sizeof(out));

	if (err) {
		hd_obj_free(o, err);
		return err;
	}
	o->handle = out.handle;
	return 0;
}

void hd_obj_events(struct hd_obj *o, pthread_mutex_t *mutex,
		   pthread_cond_t *cond, uint32_t *async_acked,
		   uint32_t *comp_acked)
{
	pthread_mutex_init(mutex, NULL);
	pthread_cond_init(cond, NULL);
	o->mutex = mutex;
	o->cond = cond;
	o->async_acked = async_acked;
	o->comp_acked = comp_acked;
}

/* Destroy waits until every event handed out has been acknowledged
 * (ibv_get_cq_event(3), ibv_get_async_event(3)). */
static void wait_events_acked(struct hd_obj *o)
{
	pthread_mutex_lock(o->mutex);
	while (*o->async_acked != o->async_events_got ||
	       (o->comp_acked && *o->comp_acked != o->comp_events_got))
		pthread_cond_wait(o->cond, o->mutex);
	pthread_mutex_unlock(o->mutex);
	pthread_mutex_destroy(o->mutex);
	pthread_cond_destroy(o->cond);
}

void hd_obj_free(struct hd_obj *o, int cmd_err)
{
	hd_extent_release(&o->rings.ext, cmd_err);
	o->type->free(o);
}

int hd_obj_destroy(struct hd_obj *o)
{
	struct snic_cmd_handle in = { .handle = o->handle };
	struct hd_context *ctx = o->ctx;
	int err;

	err = hd_cmd(ctx, o->type->destroy_op, &in, sizeof(in), NULL, 0);
	if (err && !hd_fw_gone(err))
		return err;
	pthread_mutex_lock(&ctx->obj_lock);
	o->type->forget(o);
	pthread_mutex_unlock(&ctx->obj_lock);
	wait_events_acked(o);
	hd_obj_free(o, err);
	return 0;
}

void hd_obj_link(struct hd_obj **list, struct hd_obj *o)
{
	o->next = *list;
	*list = o;
}

void hd_obj_unlink(struct hd_obj **list, struct hd_obj *o)
{
	struct hd_obj **pp = list;

	while (*pp && *pp != o)
		pp = &(*pp)->next;
	if (*pp)
		*pp = o->next;
}

struct hd_obj *hd_obj_find(struct hd_obj *list, uint32_t handle)
{
	for (struct hd_obj *o = list; o; o = o->next)
		if (o->handle == handle)
			return o;
	return NULL;
}

void hd_obj_free_list(struct hd_obj **list)
{
	while (*list) {
		struct hd_obj *o = *list;

		*list = o->next;
		hd_obj_free(o, 0);
	}
}
