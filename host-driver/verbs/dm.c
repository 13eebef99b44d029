/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: device memory (ibv_alloc_dm, ibv_memcpy_to_dm /
 * ibv_memcpy_from_dm, ibv_reg_dm_mr, ibv_free_dm).  A DM is a piece of the
 * NIC's own memory, the DM area of the BAR (hostif.h): ALLOC_DM hands out
 * zeroed pages of it, the driver copies to and from it through its BAR
 * mapping (a context from the broker: through the pages the broker hands
 * it, SNIC_ISO_DM_MAP; the BAR file's are not the NIC's), and REG_DM_MR
 * makes a zero-based MR over it that local SGEs and remote keys reach
 * like any other MR.
 */
#include <sys/mman.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

struct hd_dm {
	struct ibv_dm ibdm;
	uint8_t *base;              /* in the BAR mapping or in map         */
	uint64_t length;            /* as allocated (the bounds checked)     */
	uint8_t *map;               /* the broker's pages, or NULL          */
	size_t map_len;
};

static struct hd_dm *to_hd_dm(struct ibv_dm *d)
{
	return hd_container_of(d, struct hd_dm, ibdm);
}

/* rdma-core's providers (mlx5): EFAULT for a range outside the DM. */
static int dm_range_ok(const struct hd_dm *dm, uint64_t off, size_t len)
{
	return off <= dm->length && len <= dm->length - off;
}

static int dm_to(struct ibv_dm *ibdm, uint64_t dm_offset, const void *host,
		 size_t length)
{
	struct hd_dm *dm = to_hd_dm(ibdm);

	if (!dm_range_ok(dm, dm_offset, length))
		return EFAULT;
	memcpy(dm->base + dm_offset, host, length);
	/* the copy is in device memory before a later doorbell */
	atomic_thread_fence(memory_order_release);
	return 0;
}

static int dm_from(void *host, struct ibv_dm *ibdm, uint64_t dm_offset,
		   size_t length)
{
	struct hd_dm *dm = to_hd_dm(ibdm);

	if (!dm_range_ok(dm, dm_offset, length))
		return EFAULT;
	atomic_thread_fence(memory_order_acquire);
	memcpy(host, dm->base + dm_offset, length);
	return 0;
}

struct ibv_dm *hd_alloc_dm(struct ibv_context *context,
			   struct ibv_alloc_dm_attr *attr)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_alloc_dm in = { .length = attr->length,
					.log_align = attr->log_align_req };
	struct snic_cmd_alloc_dm_out out;
	struct hd_dm *dm;

	if (attr->comp_mask || attr->length == 0 ||
	    attr->length > ctx->dattr.max_dm_size) {
		errno = EINVAL;
		return NULL;
	}
	dm = hd_cmd_new(ctx, sizeof(*dm), SNIC_CMD_ALLOC_DM, &in, sizeof(in),
			&out, sizeof(out));
	if (!dm)
		return NULL;
	dm->base = ctx->bar + SNIC_BAR_DM_OFF + out.offset;
	if (ctx->broker_fd >= 0) {
		struct snic_cmd_handle h = { .handle = out.handle };
		int err = hd_broker_dm_map(ctx, out.offset, attr->length,
					   &dm->base, &dm->map_len);

		if (err) {
			hd_cmd(ctx, SNIC_CMD_FREE_DM, &h, sizeof(h), NULL, 0);
			free(dm);
			errno = err;
			return NULL;
		}
		dm->map = dm->base - out.offset % SNIC_PAGE_SIZE;
	}
	dm->length = attr->length;
	dm->ibdm.context = context;
	dm->ibdm.memcpy_to_dm = dm_to;
	dm->ibdm.memcpy_from_dm = dm_from;
	dm->ibdm.handle = out.handle;
	hd_dbg("DM 0x%x: %llu bytes at DM offset 0x%x\n", out.handle,
	       (unsigned long long)attr->length, out.offset);
	return &dm->ibdm;
}

int hd_free_dm(struct ibv_dm *ibdm)
{
	struct snic_cmd_handle in = { .handle = ibdm->handle };
	int err = hd_cmd(to_hd_ctx(ibdm->context), SNIC_CMD_FREE_DM, &in,
			 sizeof(in), NULL, 0);

	if (err && !hd_fw_gone(err))
		return err; /* EBUSY while an MR uses it */
	if (to_hd_dm(ibdm)->map)
		munmap(to_hd_dm(ibdm)->map, to_hd_dm(ibdm)->map_len);
	free(to_hd_dm(ibdm));
	return 0;
}

struct ibv_mr *hd_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			    uint64_t dm_offset, size_t length,
			    unsigned int access)
{
	struct hd_dm *dm = to_hd_dm(ibdm);
	struct snic_cmd_reg_dm_mr in;
	struct snic_cmd_handle out;
	struct hd_mr *mr;
	int err;

	/* rdma-core (ibv_cmd_reg_dm_mr): DM MRs are always zero based */
	if (!(access & IBV_ACCESS_ZERO_BASED) || ibdm->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	access &= ~(unsigned int)IBV_ACCESS_ZERO_BASED;
	err = hd_mr_check_access(&access);
	if (!err && (length == 0 || !dm_range_ok(dm, dm_offset, length)))
		err = EINVAL;
	if (err) {
		errno = err;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&in, 0, sizeof(in));
	in.dm = ibdm->handle;
	in.pdn = pd->handle;
	in.access = access;
	in.offset = dm_offset;
	in.length = length;
	err = hd_cmd(to_hd_ctx(pd->context), SNIC_CMD_REG_DM_MR, &in, sizeof(in),
		     &out, sizeof(out));
	if (err) {
		free(mr);
		errno = err;
		return NULL;
	}
	mr->dm = 1;
	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = (void *)(uintptr_t)dm_offset; /* zero based: the iova */
	mr->ibmr.length = length;
	mr->ibmr.handle = out.handle;
	mr->ibmr.lkey = out.handle;
	mr->ibmr.rkey = out.handle;
	return &mr->ibmr;
}
