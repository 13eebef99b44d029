/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: contexts (ibv_open_device / ibv_close_device).
 *
 * A context claims a slot in the NIC's BAR (CAS FREE -> CLAIMED, owner pid)
 * and announces itself with CTX_OPEN (command.c), then starts its event
 * thread (event.c).  Closing hands everything the context still owns back
 * to the firmware with CTX_CLOSE and frees the host side.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs/verbs.h"

static void ctx_release_slot(struct hd_context *ctx)
{
	atomic_store_explicit(&ctx->slot->owner_pid, 0, memory_order_relaxed);
	atomic_store_explicit(&ctx->slot->state, SNIC_CTX_FREE,
			      memory_order_release);
}

/* Contexts whose owner died without closing: hand them to the firmware
 * for reclaim (hostif.h, SNIC_CTX_ORPHAN).  Only OPEN slots: a CLAIMED
 * slot may still carry the previous owner's pid for an instant. */
static void mark_orphans(struct hd_context *ctx)
{
	for (unsigned i = 0; i < SNIC_MAX_CTX; i++) {
		struct snic_ctx_slot *s = (struct snic_ctx_slot *)(
			ctx->bar + SNIC_BAR_CTX_OFF + i * SNIC_CTX_SLOT_SIZE);
		uint32_t open = SNIC_CTX_OPEN;
		uint32_t pid = atomic_load(&s->owner_pid);

		if (atomic_load(&s->state) == SNIC_CTX_OPEN && pid &&
		    !hd_pid_alive(pid))
			atomic_compare_exchange_strong(&s->state, &open,
						       SNIC_CTX_ORPHAN);
	}
}

static int claim_slot(struct hd_context *ctx)
{
	unsigned max = ctx->hdr->max_ctx;
	uint32_t pid = (uint32_t)getpid();

	if (max == 0 || max > SNIC_MAX_CTX)
		max = SNIC_MAX_CTX;
	for (unsigned i = 0; i < max; i++) {
		struct snic_ctx_slot *s = (struct snic_ctx_slot *)(
			ctx->bar + SNIC_BAR_CTX_OFF + i * SNIC_CTX_SLOT_SIZE);
		uint32_t expect = SNIC_CTX_FREE;

		if (atomic_compare_exchange_strong(&s->state, &expect,
						   SNIC_CTX_CLAIMED)) {
			atomic_store(&s->owner_pid, pid);
			ctx->slot = s;
			ctx->slot_idx = i;
			return 0;
		}
	}
	return EBUSY;
}

static void ctx_unmap(struct hd_context *ctx)
{
	if (ctx->bar)
		munmap(ctx->bar, SNIC_BAR_SIZE);
	if (ctx->bar_fd >= 0) {
		hd_sigbus_unwatch(ctx->bar_fd);
		close(ctx->bar_fd);
	}
	/* ranges kept backed after deregistration get their own memory
	 * back: the application's memory no longer depends on the device */
	if (ctx->hm)
		hd_pin_flush(ctx->hm);
	if (ctx->broker_fd >= 0) {
		close(ctx->broker_fd); /* the broker ends the context */
		hd_hostmem_put(ctx->hm);
	}
	if (ctx->vctx.context.async_fd >= 0)
		close(ctx->vctx.context.async_fd);
	pthread_mutex_destroy(&ctx->cmd_lock);
	pthread_mutex_destroy(&ctx->pl_lock);
	pthread_mutex_destroy(&ctx->obj_lock);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	free(ctx);
}

/* Without a broker: the shared host-memory file, a slot claimed in the
 * BAR, CTX_OPEN (SNIC_NO_BROKER=1; boards/emu/README.md says what it
 * does not isolate; a QEMU NIC reads no slot of the file). */
static int open_shared(struct hd_context *ctx, const char *name)
{
	char hm_name[sizeof(ctx->hdr->host_mem)];
	struct snic_cmd_ctx_open open_in;
	int err;

	memcpy(hm_name, ctx->hdr->host_mem, sizeof(hm_name));
	hm_name[sizeof(hm_name) - 1] = '\0';
	ctx->hm = hd_hostmem_get(hm_name, ctx->hdr->host_mem_size, &err);
	if (!ctx->hm)
		return err;

	mark_orphans(ctx);
	err = claim_slot(ctx);
	if (err) {
		hd_dbg("%s: no free context slot\n", name);
		return err;
	}
	ctx->cmd_seq = atomic_load(&ctx->slot->cmd_done);
	memset(&open_in, 0, sizeof(open_in));
	open_in.pid = (uint32_t)getpid();
	err = hd_cmd(ctx, SNIC_CMD_CTX_OPEN, &open_in, sizeof(open_in),
		     NULL, 0);
	if (err) {
		if (err == EACCES)
			fprintf(stderr, "snic: %s: SNIC_NO_BROKER=1 refused by "
				"the firmware: the NIC is shared with other "
				"users (--users), whose BAR file they read; "
				"its contexts come from its broker only\n",
				name);
		ctx_release_slot(ctx);
		return err;
	}
	atomic_store(&ctx->slot->state, SNIC_CTX_OPEN);
	hd_dbg("%s: context slot %u open (pid %u)\n", name, ctx->slot_idx,
	       open_in.pid);

	/* Extents of dead processes (whose contexts the firmware has
	 * destroyed) go back to the allocator. */
	hd_hm_reap(ctx->hm);
	return 0;
}

/* No broker, and the BAR file is read-only to us: a NIC shared with
 * other users is theirs through its broker only (the shared files are its
 * own user's).  EACCES, said on stderr. */
static int shared_refused(const char *name)
{
	const char *no = getenv("SNIC_NO_BROKER");

	if (no && strcmp(no, "1") == 0)
		fprintf(stderr, "snic: %s: SNIC_NO_BROKER=1 needs the NIC's own "
			"user: its BAR file is read-only to us (the NIC is "
			"shared with other users through its broker, snic-emu "
			"--users); unset SNIC_NO_BROKER\n", name);
	else
		fprintf(stderr, "snic: %s: no broker to connect to and the BAR "
			"file is read-only to us: the NIC's server is not "
			"serving other users\n", name);
	return EACCES;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct hd_device *sdev;
	struct hd_context *ctx;
	struct ibv_context *ic;
	sigset_t all, old;
	void *bar;
	int err;

	if (!device) {          /* rdma-core would crash; an error is cheap */
		errno = EINVAL;
		return NULL;
	}
	sdev = to_hd_dev(device);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ic = &ctx->vctx.context;
	ctx->dev = sdev;
	ctx->bar_fd = -1;
	ctx->broker_fd = -1;
	ic->async_fd = -1;
	pthread_mutex_init(&ctx->cmd_lock, NULL);
	pthread_mutex_init(&ctx->pl_lock, NULL);
	pthread_mutex_init(&ctx->obj_lock, NULL);
	pthread_mutex_init(&ic->mutex, NULL);

	/* a NIC shared with other users (snic-emu --users) gives them its
	 * BAR file to read: its header; the rest comes from the broker */
	ctx->bar_ro = faccessat(AT_FDCWD, sdev->bar_path, W_OK,
				AT_EACCESS) != 0 && errno == EACCES;
	ctx->bar_fd = hd_open_runtime(sdev->bar_path,
				      ctx->bar_ro ? O_RDONLY : O_RDWR);
	if (ctx->bar_fd < 0) {
		err = errno == ENOENT ? ENODEV : errno;
		goto fail;
	}
	/* before the first access: a truncated BAR file must not end us;
	 * its server's lock tells the guard whether it is still there */
	hd_sigbus_watch(ctx->bar_fd, 1, 1);
	bar = mmap(NULL, SNIC_BAR_SIZE, ctx->bar_ro ? PROT_READ :
		   PROT_READ | PROT_WRITE, MAP_SHARED, ctx->bar_fd, 0);
	if (bar == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	ctx->bar = bar;
	ctx->hdr = (struct snic_bar_hdr *)(void *)(ctx->bar + SNIC_BAR_HDR_OFF);
	ctx->db = (struct snic_doorbells *)(void *)(ctx->bar + SNIC_BAR_DB_OFF);
	if (ctx->hdr->magic != SNIC_HOSTIF_MAGIC ||
	    ctx->hdr->version != SNIC_HOSTIF_VERSION ||
	    strncmp(ctx->hdr->name, device->name, sizeof(ctx->hdr->name)) ||
	    hd_fw_down(ctx, 1)) {
		err = ENODEV;
		goto fail;
	}
	/* A NIC with a broker gives us our own slot and pages, open. */
	err = hd_broker_open(ctx, device->name);
	if (err == 0)
		ctx->cmd_seq = atomic_load(&ctx->slot->cmd_done);
	else if (err != ENOENT)
		goto fail;
	else if (ctx->bar_ro)
		err = shared_refused(device->name);
	else
		err = open_shared(ctx, device->name);
	if (err)
		goto fail;
	/* our QPs' doorbells: the slot's own page (hostif.h "Doorbells") */
	ctx->cdb = (struct snic_ctx_doorbells *)(void *)(
		(uint8_t *)ctx->slot + SNIC_CTX_DB_OFF);
	/* and over which cores they spread (written before the slot opened;
	 * snic_db_core takes an out-of-range value as one core) */
	ctx->db_cores = atomic_load_explicit(&ctx->slot->db_cores,
					     memory_order_acquire);

	err = hd_cmd(ctx, SNIC_CMD_QUERY_DEVICE, NULL, 0, &ctx->dattr,
		     sizeof(ctx->dattr));
	if (err)
		goto fail_close;
	if (ctx->dattr.phys_port_cnt == 0)
		ctx->dattr.phys_port_cnt = 1;

	ic->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ic->async_fd < 0) {
		err = errno;
		goto fail_close;
	}
	ctx->aq.fd = ic->async_fd;
	ic->device = device;
	ic->cmd_fd = ctx->bar_fd;
	ic->num_comp_vectors = 1;
	ic->abi_compat = (void *)UINTPTR_MAX; /* __VERBS_ABI_IS_EXTENDED */
	ic->ops.post_send = hd_post_send;
	ic->ops.post_recv = hd_post_recv;
	ic->ops.poll_cq = hd_poll_cq;
	ic->ops.req_notify_cq = hd_req_notify_cq;
	ic->ops.post_srq_recv = hd_post_srq_recv;
	ic->ops.alloc_mw = hd_alloc_mw;
	ic->ops.dealloc_mw = hd_dealloc_mw;
	ic->ops.bind_mw = hd_bind_mw;
	ctx->vctx.sz = sizeof(struct verbs_context);
	ctx->vctx.query_port = hd_query_port;
	ctx->vctx.query_device_ex = hd_query_device_ex;
	ctx->vctx.create_cq_ex = hd_create_cq_ex;
	ctx->vctx.create_qp_ex = hd_create_qp_ex;
	ctx->vctx.alloc_dm = hd_alloc_dm;
	ctx->vctx.free_dm = hd_free_dm;
	ctx->vctx.reg_dm_mr = hd_reg_dm_mr;
	ctx->vctx.open_xrcd = hd_open_xrcd;
	ctx->vctx.close_xrcd = hd_close_xrcd;
	ctx->vctx.create_srq_ex = hd_create_srq_ex;
	ctx->vctx.get_srq_num = hd_get_srq_num;
	ctx->vctx.open_qp = hd_open_qp;
	ctx->vctx.ibv_create_flow = hd_create_flow;
	ctx->vctx.ibv_destroy_flow = hd_destroy_flow;

	/* The event thread takes no application signals. */
	sigfillset(&all);
	sigdelset(&all, SIGBUS); /* blocked, a fault would end the process */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&ctx->evt_thread, NULL, hd_event_thread, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail_close;
	ctx->evt_started = 1;
	return ic;

fail_close:
	hd_cmd(ctx, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0);
	ctx_release_slot(ctx);
fail:
	hd_dbg("open %s failed: %s\n", device->name, strerror(err));
	ctx_unmap(ctx);
	errno = err;
	return NULL;
}

int ibv_close_device(struct ibv_context *context)
{
	struct hd_context *ctx = to_hd_ctx(context);
	int err;

	if (ctx->evt_started) {
		atomic_store_explicit(&ctx->stop, 1, memory_order_release);
		hd_futex_wake(&ctx->slot->eq_pi);
		pthread_join(ctx->evt_thread, NULL);
	}
	/* The firmware destroys everything the context still owns. */
	err = hd_cmd(ctx, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0);
	if (err)
		hd_dbg("CTX_CLOSE: %s\n", strerror(err));
	ctx_release_slot(ctx);

	/* Host memory of objects the application did not destroy. */
	for (unsigned i = 0; i < SNIC_MAX_QP; i++) {
		struct hd_qp *qp = atomic_load(&ctx->qp_table[i]);

		if (qp)
			hd_obj_free(&qp->obj, 0);
	}
	hd_obj_free_list(&ctx->srq_list);
	hd_obj_free_list(&ctx->cq_list);
	hd_mr_pl_free(ctx, err);
	hd_evq_drain(&ctx->aq);
	ctx_unmap(ctx);
	return 0;
}
