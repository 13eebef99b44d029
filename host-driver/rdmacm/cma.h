/* SPDX-License-Identifier: MIT */
/*
 * snic librdmacm: private structures.  The library is a CM agent per
 * process (IBTA vol. 1 ch. 12): it builds and parses CM MADs, runs the
 * connection state machines and their timers, and turns them into
 * rdma_cm events.  MADs go through the firmware's QP1 (the SNIC_CMD_CM_*
 * commands, hostif.h), which routes them and checks that a process only
 * speaks for its own connections.
 *
 * One lock (cma_lock) guards every id, listener, device and event queue:
 * CM traffic is slow-path, and one lock keeps the state machines simple.
 */
#ifndef SNIC_CMA_H
#define SNIC_CMA_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <snic/hostif.h>

#define CMA_MAX_DEV 16
#define CMA_EXPORT __attribute__((visibility("default")))

/* The rdma_cm service ID (IBTA Annex A11 / rdma-core cma.h). */
#define CMA_SID_BASE 0x0000000001000000ull
/* IBTA MAD fields we use */
#define CMA_RESP_TIMEOUT 18  /* 4.096 us * 2^18 = 1.07 s per MAD try  */
#define CMA_MAX_RETRIES  8   /* then UNREACHABLE / DISCONNECTED        */
#define CMA_MRA_TIMEOUT  24  /* 68 s: the application is deciding      */
#define CMA_QP_TIMEOUT   16  /* local ACK timeout: 268 ms              */
#define CMA_UDP_QKEY     0x01234567u /* RDMA_UDP_QKEY (rdma_cma.h)     */

/* private-data room (12.6; the REQ/SIDR_REQ's first 36 bytes are the
 * rdma_cm IP header, struct cma_ip_hdr) */
#define CMA_REQ_PD     92
#define CMA_REP_PD     196
#define CMA_REJ_PD     148
#define CMA_RTU_PD     224
#define CMA_DREQ_PD    220
#define CMA_DREP_PD    224
#define CMA_MRA_PD     222
#define CMA_SIDR_REQ_PD 216
#define CMA_SIDR_REP_PD 136
#define CMA_IP_HDR_LEN 36

/* An IP address as a RoCE v2 GID holds it (IBTA A17.4.5.1): IPv6, or
 * IPv4 mapped (::ffff:a.b.c.d); all zero = none / the wildcard. */
struct cma_ip {
	uint8_t b[16];
};

/* GID indexes of a snic port: the IPv4-mapped GID, the IPv6 one. */
#define CMA_GID_IPV4 0
#define CMA_GID_IPV6 1

struct cma_dev {
	struct ibv_context *verbs;
	uint32_t ip;                /* host order                         */
	union ibv_gid gid;          /* GID 0: ip, IPv4 mapped             */
	union ibv_gid gid6;         /* GID 1: the NIC's IPv6 address (all
				     * zero: none)                        */
	uint64_t guid;              /* network order                      */
	enum ibv_mtu mtu;
	uint8_t max_rd_atom;
	uint32_t cid_base, cid_mask, cid_next;
	_Atomic uint32_t *cm_word;
	uint32_t cm_seen;
	struct ibv_pd *pd;          /* default PD (rdma_create_qp(NULL pd)) */
	pthread_t thread;
};

enum cma_state {
	CMA_IDLE,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_RESOLVED,
	CMA_LISTEN,
	CMA_REQ_SENT,           /* active: REQ out, waiting for REP          */
	CMA_REP_RCVD,           /* active: REP in, no QP: waiting for establish */
	CMA_REQ_RCVD,           /* passive: CONNECT_REQUEST given to the user */
	CMA_REP_SENT,           /* passive: REP out, waiting for RTU         */
	CMA_ESTABLISHED,
	CMA_DREQ_SENT,
	CMA_DISCONNECTED,       /* DREQ/DREP done or REJ                     */
	CMA_SIDR_REQ_SENT,
	CMA_SIDR_REQ_RCVD,
};

/* What the id's timer does when it fires. */
enum cma_timer {
	CMA_T_NONE,
	CMA_T_ADDR,             /* poll the NICs' neighbour tables           */
	CMA_T_MAD,              /* resend last_mad or give up                */
};

struct cma_chan {
	struct rdma_event_channel ch;
	int wfd;                    /* = ch.fd: an eventfd, one count per event */
	struct cma_event *head, *tail;
};

struct cma_event {
	struct rdma_cm_event ev;
	uint8_t pdata[256];
	struct cma_event *next;
};

struct cma_id {
	struct rdma_cm_id id;
	struct cma_dev *dev;
	enum cma_state state;
	int sync;                   /* private channel: calls wait for events */
	int events_out;             /* handed out, not acked yet            */
	pthread_cond_t cv;          /* events_out reached 0                 */
	int destroying;
	struct cma_id *next;        /* cma_ids                              */

	/* addresses (ports in host order) */
	struct cma_ip src_ip, dst_ip;
	uint16_t src_port, dst_port;
	int bound, reuseaddr, afonly;
	int bound6;                 /* bound with an AF_INET6 sockaddr       */
	uint8_t tos;
	uint8_t ack_timeout;

	/* listener */
	int backlog, pending;
	struct cma_id *parent;      /* the listener of a passive id           */
	struct ibv_qp_init_attr *ep_qp_attr; /* rdma_create_ep on a listener */

	/* connection */
	uint32_t local_cid, remote_cid;
	uint32_t remote_qpn, remote_qkey;
	uint32_t my_psn, peer_psn;        /* Starting PSNs announced: each
					   * side's receive PSN (cma_qp.c)  */
	uint8_t resp_res, init_depth;     /* ours, as the QP uses them      */
	uint8_t retry_cnt, rnr_retry, srq, flow_control;
	uint8_t peer_rnr_retry;
	enum ibv_mtu mtu;
	uint64_t tid;
	uint8_t ece_dummy;

	/* timer and the MAD it resends */
	enum cma_timer timer;
	int64_t deadline_ns, addr_end_ns, addr_next_arp_ns, addr_owner_ns;
	struct cma_dev *route_dev;  /* the kernel's route leaves by it    */
	uint32_t route_gw;          /* ... through this router (0: on link) */
	int tries;
	uint8_t last_mad[SNIC_CM_MAD_SIZE];
	struct ibv_sa_path_rec path;
};

static inline struct cma_id *to_cid(struct rdma_cm_id *id)
{
	return (struct cma_id *)(void *)id;
}

/* Fail with errno = err, as every rdma_* call reports errors. */
static inline int cma_fail(int err)
{
	errno = err;
	return -1;
}

extern pthread_mutex_t cma_lock;
extern struct cma_id *cma_ids;
extern struct cma_dev cma_devs[CMA_MAX_DEV];
extern int cma_ndev;

/* SNIC_CM_DEBUG=1: every MAD and event on stderr */
extern int cma_debug;
#define cma_dbg(...) do { if (cma_debug) fprintf(stderr, "snic-cm: " __VA_ARGS__); } while (0)

/* cma_dev.c */
int cma_init(void);                     /* open every snic device once  */
int64_t cma_now_ns(void);
struct cma_dev *cma_dev_by_addr(const struct cma_ip *a);
/* The device's GID (and its index) for addresses of a's family. */
const union ibv_gid *cma_dev_gid(const struct cma_dev *d, const struct cma_ip *a,
				 uint8_t *index);
struct cma_dev *cma_dev_by_verbs(struct ibv_context *v);
uint32_t cma_alloc_cid(struct cma_dev *d);
/* One CM command; returns 0 or an errno value. */
int cma_cmd(struct cma_dev *d, uint16_t op, const void *in, size_t in_len,
	    void *out, size_t out_len);
int cma_send_mad(struct cma_dev *d, const struct cma_ip *ip, const uint8_t *mad,
		 int retry);
int cma_arm(struct cma_dev *d, uint32_t cid, const struct cma_ip *ip,
	    const uint8_t *mad);
void cma_note_timeout(struct cma_dev *d);

/* cma_route.c: the kernel's routes */
/* The router through which d reaches dst (0 = on link or unknown). */
uint32_t cma_next_hop(struct cma_dev *d, uint32_t dst);
/* The device whose interface the kernel's route to dst leaves by (only
 * `bound` when not NULL), with the route's router in *gw; NULL when no
 * route goes through a snic device's interface. */
struct cma_dev *cma_route_dev(uint32_t dst, uint32_t src, struct cma_dev *bound,
			      uint32_t *gw);

/* cma_event.c */
int cma_post(struct cma_id *id, enum rdma_cm_event_type type, int status,
	     const void *pdata, unsigned pdata_len, struct cma_id *listen);
struct cma_event *cma_last_posted(struct cma_id *id);
int cma_sync_wait(struct cma_id *id, enum rdma_cm_event_type want);
void cma_chan_free_events_of(struct cma_chan *c, struct cma_id *id);

/* cma_id.c */
void cma_id_fill_route(struct cma_id *id);
void cma_id_unlink(struct cma_id *id);
struct cma_id *cma_id_new(struct rdma_event_channel *ch, void *ctx,
			  enum rdma_port_space ps, enum ibv_qp_type qpt);
void cma_addr_timer(struct cma_id *id, int64_t now);

/* cma_addr.c: addresses */
struct cma_ip cma_ip_v4(uint32_t ip);
/* true for an IPv4-mapped address (*ip4 = it, host order) */
bool cma_ip_is_v4(const struct cma_ip *a, uint32_t *ip4);
bool cma_ip_is_any(const struct cma_ip *a);
bool cma_ip_eq(const struct cma_ip *a, const struct cma_ip *b);
bool cma_ip_is_loopback(const struct cma_ip *a);
/* a destination nobody can connect to: any, broadcast, multicast */
bool cma_ip_bad_dst(const struct cma_ip *a);
/* sockaddr_in / sockaddr_in6 (IPv4 mapped or unspecified = IPv4 / any)
 * -> address and port; AF_IB: ENODEV (no IB port), others: EINVAL. */
int cma_sockaddr_ip(const struct sockaddr *sa, struct cma_ip *ip, uint16_t *port);
/* The sockaddr an address is reported in: sockaddr_in for IPv4 unless
 * v6 (the caller's family was AF_INET6), sockaddr_in6 for IPv6. */
void cma_ip_sockaddr(struct sockaddr_storage *ss, const struct cma_ip *a,
		     uint16_t port, int v6);
const char *cma_ip_str(const struct cma_ip *a, char *buf, size_t len);

/* cma_conn.c: MAD in, state machines, timers */
void cma_mad_in(struct cma_dev *d, const struct cma_ip *peer, const uint8_t *mad);
void cma_mad_timer(struct cma_id *id, int64_t now);
void cma_conn_abort(struct cma_id *id);  /* rdma_destroy_id of a live id */
/* A passive id the application never saw: refuse its request, free it. */
void cma_conn_abandon(struct cma_id *id);
void cma_mad_hdr(uint8_t *mad, uint16_t attr, uint64_t tid);
void cma_put32(uint8_t *p, uint32_t v);
uint32_t cma_get32(const uint8_t *p);

/* cma_qp.c */
int cma_qp_to(struct cma_id *id, enum ibv_qp_state st);
/* The address vector to the id's peer (RoCE v2: GRH to its GID). */
void cma_peer_ah(const struct cma_id *id, struct ibv_ah_attr *ah);
int cma_qp_attr(struct cma_id *id, struct ibv_qp_attr *a, int *mask);

/* cma_rand.c: from getrandom, not rand() (the application's) */
uint64_t cma_rand64(void);
uint32_t cma_rand_psn(void);

#endif /* SNIC_CMA_H */
