/*
 * host-driver/abi/strings.c — the purely computational part of the libibverbs
 * ABI: enum-to-string helpers, link-rate conversions, the kernel-uAPI
 * marshalling helpers librdmacm uses, and the two sysfs path/file helpers.
 *
 * The strings are the exact ones rdma-core 44 returns (ibv_devinfo, the
 * ibv_*_pingpong programs, perftest and rping print them), including
 * "unknown" for out-of-range values.  Verified against Debian's real
 * libibverbs.so.1 for every enum value in a wide range around the defined
 * ones (see host-driver/ABI.md, "Verification").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "core/core.h"

/* Prototypes for exported functions that no installed header declares
 * (rdma-core keeps them in infiniband/marshall.h and driver.h). */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

/* ---- enum -> string -------------------------------------------------- */

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:		return "success";
	case IBV_WC_LOC_LEN_ERR:	return "local length error";
	case IBV_WC_LOC_QP_OP_ERR:	return "local QP operation error";
	case IBV_WC_LOC_EEC_OP_ERR:	return "local EE context operation error";
	case IBV_WC_LOC_PROT_ERR:	return "local protection error";
	case IBV_WC_WR_FLUSH_ERR:	return "Work Request Flushed Error";
	case IBV_WC_MW_BIND_ERR:	return "memory management operation error";
	case IBV_WC_BAD_RESP_ERR:	return "bad response error";
	case IBV_WC_LOC_ACCESS_ERR:	return "local access error";
	case IBV_WC_REM_INV_REQ_ERR:	return "remote invalid request error";
	case IBV_WC_REM_ACCESS_ERR:	return "remote access error";
	case IBV_WC_REM_OP_ERR:		return "remote operation error";
	case IBV_WC_RETRY_EXC_ERR:	return "transport retry counter exceeded";
	case IBV_WC_RNR_RETRY_EXC_ERR:	return "RNR retry counter exceeded";
	case IBV_WC_LOC_RDD_VIOL_ERR:	return "local RDD violation error";
	case IBV_WC_REM_INV_RD_REQ_ERR:	return "remote invalid RD request";
	case IBV_WC_REM_ABORT_ERR:	return "aborted error";
	case IBV_WC_INV_EECN_ERR:	return "invalid EE context number";
	case IBV_WC_INV_EEC_STATE_ERR:	return "invalid EE context state";
	case IBV_WC_FATAL_ERR:		return "fatal error";
	case IBV_WC_RESP_TIMEOUT_ERR:	return "response timeout error";
	case IBV_WC_GENERAL_ERR:	return "general error";
	case IBV_WC_TM_ERR:		return "TM error";
	case IBV_WC_TM_RNDV_INCOMPLETE:	return "TM software rendezvous";
	}
	return "unknown";
}

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA:		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:		return "InfiniBand switch";
	case IBV_NODE_ROUTER:		return "InfiniBand router";
	case IBV_NODE_RNIC:		return "iWARP NIC";
	case IBV_NODE_USNIC:		return "usNIC";
	case IBV_NODE_USNIC_UDP:	return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED:	return "unspecified";
	case IBV_NODE_UNKNOWN:		break;
	}
	return "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	switch (port_state) {
	case IBV_PORT_NOP:		return "no state change (NOP)";
	case IBV_PORT_DOWN:		return "down";
	case IBV_PORT_INIT:		return "init";
	case IBV_PORT_ARMED:		return "armed";
	case IBV_PORT_ACTIVE:		return "active";
	case IBV_PORT_ACTIVE_DEFER:	return "active defer";
	}
	return "unknown";
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	switch (event) {
	case IBV_EVENT_CQ_ERR:		return "CQ error";
	case IBV_EVENT_QP_FATAL:	return "local work queue catastrophic error";
	case IBV_EVENT_QP_REQ_ERR:	return "invalid request local work queue error";
	case IBV_EVENT_QP_ACCESS_ERR:	return "local access violation work queue error";
	case IBV_EVENT_COMM_EST:	return "communication established";
	case IBV_EVENT_SQ_DRAINED:	return "send queue drained";
	case IBV_EVENT_PATH_MIG:	return "path migrated";
	case IBV_EVENT_PATH_MIG_ERR:	return "path migration request error";
	case IBV_EVENT_DEVICE_FATAL:	return "local catastrophic error";
	case IBV_EVENT_PORT_ACTIVE:	return "port active";
	case IBV_EVENT_PORT_ERR:	return "port error";
	case IBV_EVENT_LID_CHANGE:	return "LID change";
	case IBV_EVENT_PKEY_CHANGE:	return "P_Key change";
	case IBV_EVENT_SM_CHANGE:	return "SM change";
	case IBV_EVENT_SRQ_ERR:		return "SRQ catastrophic error";
	case IBV_EVENT_SRQ_LIMIT_REACHED: return "SRQ limit reached";
	case IBV_EVENT_QP_LAST_WQE_REACHED: return "last WQE reached";
	case IBV_EVENT_CLIENT_REREGISTER: return "client reregistration";
	case IBV_EVENT_GID_CHANGE:	return "GID table change";
	case IBV_EVENT_WQ_FATAL:	return "WQ fatal";
	}
	return "unknown";
}

/* ---- link rates --------------------------------------------------------
 * One table drives all four conversions: the enum value, the rate as a
 * multiple of the 2.5 Gb/s SDR 1x lane, and the effective rate in Mb/s.
 * As in rdma-core 44, the FDR/EDR-era encodings (14, 56, 112, 168, 25, 100,
 * 200, 300 Gb/s) have no "multiple" (mult 0 here: ibv_rate_to_mult() gives
 * -1 and mult_to_ibv_rate() never returns them), while the later 28, 50,
 * 400, 600, 800, 1200 Gb/s ones do.  Checked value by value against
 * Debian's libibverbs.so.1.
 */
struct rate_row {
	enum ibv_rate rate;
	int mult;
	int mbps;
};

static const struct rate_row rate_table[] = {
	{ IBV_RATE_2_5_GBPS,	  1,	   2500 },
	{ IBV_RATE_5_GBPS,	  2,	   5000 },
	{ IBV_RATE_10_GBPS,	  4,	  10000 },
	{ IBV_RATE_20_GBPS,	  8,	  20000 },
	{ IBV_RATE_30_GBPS,	 12,	  30000 },
	{ IBV_RATE_40_GBPS,	 16,	  40000 },
	{ IBV_RATE_60_GBPS,	 24,	  60000 },
	{ IBV_RATE_80_GBPS,	 32,	  80000 },
	{ IBV_RATE_120_GBPS,	 48,	 120000 },
	{ IBV_RATE_14_GBPS,	  0,	  14062 },
	{ IBV_RATE_56_GBPS,	  0,	  56250 },
	{ IBV_RATE_112_GBPS,	  0,	 112500 },
	{ IBV_RATE_168_GBPS,	  0,	 168750 },
	{ IBV_RATE_25_GBPS,	  0,	  25781 },
	{ IBV_RATE_100_GBPS,	  0,	 103125 },
	{ IBV_RATE_200_GBPS,	  0,	 206250 },
	{ IBV_RATE_300_GBPS,	  0,	 309375 },
	{ IBV_RATE_28_GBPS,	 11,	  28125 },
	{ IBV_RATE_50_GBPS,	 20,	  53125 },
	{ IBV_RATE_400_GBPS,	160,	 425000 },
	{ IBV_RATE_600_GBPS,	240,	 637500 },
	{ IBV_RATE_800_GBPS,	320,	 850000 },
	{ IBV_RATE_1200_GBPS,	480,	1275000 },
};

#define RATE_ROWS (sizeof(rate_table) / sizeof(rate_table[0]))

int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (rate_table[i].rate == rate && rate_table[i].mult)
			return rate_table[i].mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (rate_table[i].mult && rate_table[i].mult == mult)
			return rate_table[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (rate_table[i].rate == rate)
			return rate_table[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (rate_table[i].mbps == mbps)
			return rate_table[i].rate;
	return IBV_RATE_MAX;
}

/* ---- kernel uAPI <-> verbs structures (used by librdmacm) -------------- */

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid.raw));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

/* Copies every attribute the kernel reports; dst->qp_state is left alone
 * (the kernel structure's qp_state is the requested state of a modify, not
 * a query result), exactly as rdma-core does. */
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = (enum ibv_qp_state)src->cur_qp_state;
	dst->path_mtu = (enum ibv_mtu)src->path_mtu;
	dst->path_mig_state = (enum ibv_mig_state)src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = (unsigned int)src->qp_access_flags;

	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;

	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);

	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/* The SA path record: the same fields in both layouts, different widths
 * (the kernel uses __u32 for raw_traffic/reversible/mtu). */
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid.raw));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid.raw));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (int)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = (int)src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = (uint8_t)src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (__u32)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = (__u32)src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

/* ---- sysfs helpers ------------------------------------------------------ */

/* rdma-core's IBV_SYSFS_PATH_MAX. */
#define SYSFS_PATH_MAX 256

static char sysfs_path_buf[SYSFS_PATH_MAX];
static pthread_once_t sysfs_path_once = PTHREAD_ONCE_INIT;

static void sysfs_path_init(void)
{
	const char *env = NULL;

	/* Honour $SYSFS_PATH only when not running set-uid. */
	if (getuid() == geteuid())
		env = getenv("SYSFS_PATH");
	if (!env) {
		/* snic-emu writes its devices' sysfs view (class/infiniband,
		 * class/infiniband_verbs) into the run dir: programs that ask
		 * libibverbs where sysfs is (Open MPI) find our devices. */
		struct stat st;

		if (snprintf(sysfs_path_buf, sizeof(sysfs_path_buf), "%s/sys",
			     hd_run_dir()) < (int)sizeof(sysfs_path_buf) &&
		    stat(sysfs_path_buf, &st) == 0 && S_ISDIR(st.st_mode))
			return;
		strcpy(sysfs_path_buf, "/sys");
		return;
	}
	size_t len = strnlen(env, SYSFS_PATH_MAX - 1);
	memcpy(sysfs_path_buf, env, len);
	while (len > 0 && sysfs_path_buf[len - 1] == '/')
		len--;
	sysfs_path_buf[len] = '\0';
}

/* The sysfs root: $SYSFS_PATH without trailing slashes, else the run dir's
 * sysfs view of the snic devices when there is one, else "/sys". */
const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_path_once, sysfs_path_init);
	return sysfs_path_buf;
}

/*
 * Read "<dir>/<file>" into buf (at most size bytes).  A trailing newline is
 * replaced by the terminating NUL.  Returns the length of the string read,
 * or -1 (errno set) if the file cannot be read or its contents would not
 * fit in buf with a terminator.
 */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size)
{
	char *path;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;

	ssize_t len = read(fd, buf, size);
	int saved = errno;
	close(fd);
	errno = saved;
	if (len < 0)
		return -1;
	if (len > 0) {
		if (buf[len - 1] == '\n') {
			buf[--len] = '\0';
		} else if ((size_t)len < size) {
			buf[len] = '\0';
		} else {
			/* No room for the terminator: refuse rather than
			 * hand back an unterminated string. */
			errno = EOVERFLOW;
			return -1;
		}
	}
	return len > INT_MAX ? INT_MAX : (int)len;
}
