/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: is the NIC behind a BAR file alive? (issue 10)
 *
 * Not from anything in the BAR: fw_pid, fw_state and the heartbeat are
 * words every process of the NIC's user may write.  A fw_pid naming a
 * live process (the writer's own, or 1) kept commands waiting 60 s on a
 * dead NIC, one naming a dead process made a live NIC's calls fail and
 * hid the device.  The kernel's word instead: the NIC's server holds a
 * write lock on its BAR file for its whole life (hal/posix/live_lock.h;
 * snic-emu: hal/posix/hal_posix.c create_locked; a QEMU NIC:
 * tools/snic-qemu through tools/snic-lock.c, whose descriptor QEMU and
 * the host agent inherit), and the kernel drops it when the last holder
 * is gone, SIGKILL included.
 *
 * We ask with F_OFD_GETLK on a descriptor of our own (never the
 * server's): a writer's lock = alive; none, or only a reader's = nobody
 * serves the file.  Not flock(): with the BAR file readable by other
 * users (snic-emu --users) any of them could hold a dead NIC's flock and
 * make it look alive; a write lock needs the file open for writing.  A
 * writer to shared memory cannot change the answer.  Only system calls:
 * the SIGBUS handler (sigbus.c) asks too.
 */
#include <errno.h>

#include "core/core.h"
#include "live_lock.h"

int hd_owner_alive(int fd)
{
	int saved = errno, r;

	if (fd < 0)
		return -1;
	r = snic_live_held(fd);
	errno = saved;
	return r;
}
