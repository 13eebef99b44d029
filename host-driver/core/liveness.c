/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: is the NIC behind a BAR file alive? (issue 10)
 *
 * Not from anything in the BAR: fw_pid, fw_state and the heartbeat are
 * words every process of the NIC's user may write.  A fw_pid naming a
 * live process (the writer's own, or 1) kept commands waiting 60 s on a
 * dead NIC, one naming a dead process made a live NIC's calls fail and
 * hid the device.  The kernel's word instead: the NIC's server holds an
 * exclusive flock on its BAR file for its whole life (snic-emu:
 * hal/posix/hal_posix.c create_locked; a QEMU NIC: tools/snic-qemu, whose
 * descriptor QEMU and the host agent inherit), and the kernel drops it
 * when the last holder is gone, SIGKILL included.
 *
 * We ask with a non-blocking shared flock on an open file description of
 * our own (never the server's): refused = somebody holds it exclusively =
 * alive; granted = nobody serves the file (dropped again at once).  A
 * writer to shared memory cannot change the answer.  Only system calls:
 * the SIGBUS handler (sigbus.c) asks too.
 */
#include <errno.h>
#include <sys/file.h>

#include "core/core.h"

int hd_owner_alive(int fd)
{
	int saved = errno, r;

	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		r = 0;
	} else {
		r = errno == EWOULDBLOCK ? 1 : -1;
	}
	errno = saved;
	return r;
}
