/* SPDX-License-Identifier: MIT */
/*
 * Latency trace points (README "Latency"): where a message's time goes,
 * read with the HAL clock at the point itself, not per pass.  Built only
 * with -DSNIC_TRACE (tools/bench-latency.sh makes such a build); without
 * it core_trace() is empty and struct snic_core has no ring.
 */
#ifndef SNIC_CORE_TRACE_H
#define SNIC_CORE_TRACE_H

#include <stdint.h>

#include "snic/fw.h"

#define SNIC_TRACE_SIZE 65536u  /* events kept per NIC (a power of two) */

struct snic_trace {
	uint64_t n;             /* events recorded; the last SIZE are kept */
	struct snic_trace_ev ev[SNIC_TRACE_SIZE];
};

#endif
