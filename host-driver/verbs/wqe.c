/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: what every way of posting work shares: receive WQEs
 * (ibv_post_recv, ibv_post_srq_recv), scatter/gather lists, send flags
 * and the UD address vector (ibv_post_send, ibv_wr_*).  WQE layouts are
 * hostif.h's.
 */
#include <errno.h>

#include "verbs/verbs.h"

void hd_wqe_set_ud(struct snic_send_wqe *w, struct ibv_ah *ah,
		   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct snic_wqe_ud *ud = (struct snic_wqe_ud *)(void *)&w->raddr;

	*ud = to_hd_ah(ah)->av;
	ud->remote_qpn = remote_qpn;
	ud->remote_qkey = remote_qkey;
}

int hd_wq_post_recv(struct hd_wq *wq, uint32_t cap, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	uint32_t pi = wq->pi;
	uint32_t ci = atomic_load_explicit(&wq->ci, memory_order_acquire);
	int err = 0;

	for (; wr; wr = wr->next) {
		struct snic_recv_wqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			err = EINVAL;
			break;
		}
		if (!hd_wq_room(wq, pi, &ci, cap)) {
			err = ENOMEM;
			break;
		}
		w = (struct snic_recv_wqe *)(void *)hd_wq_slot(wq, pi);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->rsvd = 0;
		hd_wqe_sges((struct snic_wqe_sge *)(void *)(w + 1), wr->sg_list,
			    (size_t)wr->num_sge);
		pi++;
	}
	if (err)
		*bad_wr = wr;
	wq->pi = pi;
	return err;
}
