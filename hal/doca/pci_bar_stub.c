/* SPDX-License-Identifier: MIT */
/*
 * The BAR the host driver maps, on a BlueField, without DOCA: refuses.
 *
 * On the card, the host reaches the firmware's doorbells, command
 * mailboxes and event queues through a PCI function the card emulates
 * (DOCA Device Emulation, doca_devemu_pci, BlueField-3).  Debian does not
 * ship DOCA, so this build has no BAR to offer the host.
 */
#include <errno.h>
#include <stdio.h>

#include "doca.h"

int snic_doca_bar_open(struct snic_doca_bar *b, const char *pci,
		       char *why, size_t whylen)
{
	(void)pci;
	b->bar = NULL;
	b->impl = NULL;
	snprintf(why, whylen,
		 "host BAR: DOCA Device Emulation is missing (built without "
		 "NVIDIA DOCA's doca_devemu_pci), so the card cannot present "
		 "the snic PCI function the host driver maps");
	return -ENOSYS;
}

void snic_doca_bar_close(struct snic_doca_bar *b)
{
	b->bar = NULL;
	b->impl = NULL;
}
