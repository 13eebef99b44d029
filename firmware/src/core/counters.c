/* SPDX-License-Identifier: MIT */
/* Counter names, in the order of enum snic_counter (counters.h). */
#include "core/counters.h"

static const char *const counter_names[] = {
#define SNIC_CNT_NAME(n) #n,
	SNIC_COUNTERS(SNIC_CNT_NAME)
#undef SNIC_CNT_NAME
};

_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == SNIC_CNT_MAX,
	       "counter names");

const char *core_counter_name(unsigned i)
{
	return i < SNIC_CNT_MAX ? counter_names[i] : "";
}
