/* SPDX-License-Identifier: MIT */
/*
 * Not implemented (host-driver/rdmacm/README.md): multicast (RoCE
 * multicast needs IGMP and a multicast-capable firmware path) and the
 * rsocket API.  Each fails with ENOSYS, as the API documents errors.
 */
#include <errno.h>
#include <sys/types.h>

#include "cma.h"

#define NOSYS(ret) do { errno = ENOSYS; return ret; } while (0)

CMA_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				   void *context)
{ (void)id; (void)addr; (void)context; NOSYS(-1); }
CMA_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *mc_join_attr,
				      void *context)
{ (void)id; (void)mc_join_attr; (void)context; NOSYS(-1); }
CMA_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{ (void)id; (void)addr; NOSYS(-1); }

/* rsocket (rsocket.h): declared here without the header's prototypes so
 * one macro covers them; the ABI is the symbol and -1/ENOSYS. */
#define RSTUB(name) CMA_EXPORT long name(void); CMA_EXPORT long name(void) { NOSYS(-1); }
RSTUB(rsocket) RSTUB(rbind) RSTUB(rlisten) RSTUB(raccept) RSTUB(rconnect)
RSTUB(rshutdown) RSTUB(rclose) RSTUB(rrecv) RSTUB(rrecvfrom) RSTUB(rrecvmsg)
RSTUB(rsend) RSTUB(rsendto) RSTUB(rsendmsg) RSTUB(rread) RSTUB(rreadv)
RSTUB(rwrite) RSTUB(rwritev) RSTUB(rpoll) RSTUB(rselect) RSTUB(rgetpeername)
RSTUB(rgetsockname) RSTUB(rsetsockopt) RSTUB(rgetsockopt) RSTUB(rfcntl)
RSTUB(riomap) RSTUB(riounmap) RSTUB(riowrite)
