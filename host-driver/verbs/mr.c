/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: protection domains and memory registration.
 *
 * ibv_reg_mr pins the range (memory/pin.c re-backs it with host-memory window
 * pages), writes the page list (32-bit window page numbers) into the
 * context's page-list buffer and hands its pa to the firmware in REG_MR.
 * The firmware copies the list into its translation table while executing
 * the command, so the buffer serves the next command (it grows to the
 * largest list and is freed with the context).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

/* The verbs.h macros would rewrite our definitions. */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ------------------------------------------------------------------ */
/* PD.                                                                  */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_handle out;
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	err = hd_cmd(ctx, SNIC_CMD_ALLOC_PD, NULL, 0, &out, sizeof(out));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->context = context;
	pd->handle = out.handle;
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct snic_cmd_handle in = { .handle = pd->handle };
	int err;

	err = hd_cmd(to_hd_ctx(pd->context), SNIC_CMD_DEALLOC_PD, &in,
		     sizeof(in), NULL, 0);
	if (err && !hd_fw_gone(err))
		return err;
	free(pd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* MR.                                                                  */

#define HD_MR_BASIC_ACCESS                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |               \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

int hd_mr_check_access(unsigned int *access)
{
	unsigned int a = *access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;

	/* As the kernel's ib_check_mr_access(): remote write or atomic
	 * access needs local write. */
	if ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(a & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (a & IBV_ACCESS_ON_DEMAND)
		return EOPNOTSUPP;      /* no on-demand paging */
	/* HUGETLB is a hint with nothing to do here; MW_BIND lets windows
	 * be bound on the MR (mw.c). */
	if (a & ~(unsigned int)(HD_MR_BASIC_ACCESS | IBV_ACCESS_MW_BIND |
				 IBV_ACCESS_HUGETLB))
		return EINVAL;
	*access = a & (HD_MR_BASIC_ACCESS | IBV_ACCESS_MW_BIND);
	return 0;
}

/* The context's page-list buffer, at least npages window pages: kept
 * from one command to the next (pl_lock held). */
static int pl_buf(struct hd_context *ctx, uint32_t npages)
{
	struct hd_extent *pl = ctx->pl;
	int err;

	if (pl && pl->npages >= npages)
		return 0;
	if (!pl) {
		pl = calloc(1, sizeof(*pl));
		if (!pl)
			return ENOMEM;
		ctx->pl = pl;
	}
	hd_extent_free(pl);
	err = hd_extent_alloc(pl, ctx->hm, npages, 0);
	return err;
}

void hd_mr_pl_free(struct hd_context *ctx, int cmd_err)
{
	if (!ctx->pl)
		return;
	hd_extent_release(ctx->pl, cmd_err);
	free(ctx->pl);
	ctx->pl = NULL;
}

/* A command that carries a pinned range's page list (REG_MR, REREG_MR):
 * the list goes into the context's page-list buffer whose pa and length
 * are set in *reg (inside `in`). */
static int page_list_cmd(struct hd_context *ctx, const struct hd_pin *pin,
			 uint16_t op, struct snic_cmd_reg_mr *reg,
			 const void *in, size_t in_len, void *out,
			 size_t out_len)
{
	size_t pl_bytes = (size_t)pin->npages * sizeof(uint32_t);
	int err;

	pthread_mutex_lock(&ctx->pl_lock);
	err = pl_buf(ctx, hd_pages_for(pl_bytes));
	if (err)
		goto out;
	memcpy(hd_extent_ptr(ctx->pl, 0), pin->pages, pl_bytes);
	reg->pages_pa = hd_extent_pa(ctx->pl, 0);
	reg->npages = pin->npages;
	err = hd_cmd(ctx, op, in, in_len, out, out_len);
	/* the firmware copied the list; if it is gone it may still read
	 * it: the buffer is not reused (its pages are left allocated) */
	if (hd_fw_gone(err)) {
		hd_extent_release(ctx->pl, err);
		free(ctx->pl);
		ctx->pl = NULL;
	}
out:
	pthread_mutex_unlock(&ctx->pl_lock);
	return err;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t iova, unsigned int access)
{
	struct hd_context *ctx = to_hd_ctx(pd->context);
	struct snic_cmd_reg_mr in;
	struct snic_cmd_handle out;
	struct hd_mr *mr;
	int err;

	err = hd_mr_check_access(&access);
	if (err)
		goto fail;
	/* A zero-length MR has no pages to map (mlx5 refuses it too). */
	if (length == 0) {
		err = EINVAL;
		goto fail;
	}
	if (!addr) {
		err = EFAULT;
		goto fail;
	}
	/* The MR maps iova to addr page by page: same offset in the page. */
	if (((uintptr_t)addr ^ iova) & (SNIC_PAGE_SIZE - 1)) {
		err = EINVAL;
		goto fail;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		err = ENOMEM;
		goto fail;
	}
	err = hd_pin(ctx->hm, addr, length, &mr->pin);
	if (err)
		goto fail_free;

	memset(&in, 0, sizeof(in));
	in.pdn = pd->handle;
	in.access = access;
	in.iova = iova;
	in.length = length;
	err = page_list_cmd(ctx, mr->pin, SNIC_CMD_REG_MR, &in, &in, sizeof(in),
			    &out, sizeof(out));
	if (err)
		goto fail_unpin;

	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = out.handle;
	/* rkey == lkey (meaningful remotely only with remote access). */
	mr->ibmr.lkey = out.handle;
	mr->ibmr.rkey = out.handle;
	hd_dbg("MR %p+%zu iova 0x%llx access 0x%x -> key 0x%x (%u pages)\n",
	       addr, length, (unsigned long long)iova, access, out.handle,
	       mr->pin->npages);
	return &mr->ibmr;

fail_unpin:
	hd_unpin(mr->pin);
fail_free:
	free(mr);
fail:
	hd_dbg("reg_mr %p+%zu failed: %s\n", addr, length, strerror(err));
	errno = err;
	return NULL;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t iova, int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct hd_mr *mr = hd_container_of(ibmr, struct hd_mr, ibmr);
	struct snic_cmd_handle in = { .handle = ibmr->handle };
	int err;

	err = hd_cmd(to_hd_ctx(ibmr->context), SNIC_CMD_DEREG_MR, &in,
		     sizeof(in), NULL, 0);
	if (err && !hd_fw_gone(err))
		return err;
	/* Only now may the pages go back to private memory: the firmware
	 * no longer translates through them. */
	hd_unpin(mr->pin);
	free(mr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Re-registration.                                                     */

/* rdma-core 44's checks (libibverbs/verbs.c), in its order. */
static int rereg_input_ok(int flags, void *addr, size_t length, int access)
{
	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED)
		return 0;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr))
		return 0;
	if (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))
		return 0;
	return 1;
}

/* What the provider part does: the new state in one REREG_MR command,
 * the key unchanged.  Returns 0 or an errno value. */
static int rereg_cmd(struct hd_mr *mr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, unsigned int access,
		     struct hd_pin **new_pin)
{
	struct hd_context *ctx = to_hd_ctx(mr->ibmr.context);
	struct snic_cmd_rereg_mr in;
	int err;

	memset(&in, 0, sizeof(in));
	in.key = mr->ibmr.handle;
	in.flags = (uint32_t)flags;
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!pd || pd->context != mr->ibmr.context)
			return EINVAL;
		in.reg.pdn = pd->handle;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		err = hd_mr_check_access(&access);
		if (err)
			return err;
		in.reg.access = access;
	}
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION))
		return hd_cmd(ctx, SNIC_CMD_REREG_MR, &in, sizeof(in), NULL, 0);
	in.reg.iova = (uintptr_t)addr; /* as the kernel: hca_va = addr */
	in.reg.length = length;
	err = hd_pin(ctx->hm, addr, length, new_pin);
	if (err)
		return err;
	err = page_list_cmd(ctx, *new_pin, SNIC_CMD_REREG_MR, &in.reg, &in,
			    sizeof(in), NULL, 0);
	if (err) {
		hd_unpin(*new_pin);
		*new_pin = NULL;
	}
	return err;
}

int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd,
		 void *addr, size_t length, int access)
{
	struct hd_mr *mr = hd_container_of(ibmr, struct hd_mr, ibmr);
	struct hd_pin *new_pin = NULL;
	int err;

	/* rdma-core: only ordinary MRs (not device-memory ones) */
	if (mr->dm || !rereg_input_ok(flags, addr, length, access)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	/* no flag: nothing to change (the kernel answers 0 too) */
	if (!flags)
		return 0;
	err = rereg_cmd(mr, flags, pd, addr, length, (unsigned int)access,
			&new_pin);
	if (err) {
		hd_dbg("rereg_mr 0x%x flags 0x%x failed: %s\n", ibmr->handle,
		       flags, strerror(err));
		errno = err;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		ibmr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		/* the firmware translates through the new pages only now */
		hd_unpin(mr->pin);
		mr->pin = new_pin;
		ibmr->addr = addr;
		ibmr->length = length;
	}
	return 0;
}
