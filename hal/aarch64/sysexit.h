/* SPDX-License-Identifier: MIT */
/*
 * Leaving a bare-metal image on an emulator or a board with PSCI:
 * Arm semihosting SYS_EXIT (an exit status the emulator passes on; QEMU
 * needs -semihosting-config enable=on), then PSCI SYSTEM_OFF (status 0 on
 * QEMU), then a WFI loop.
 */
#ifndef SNIC_SYSEXIT_H
#define SNIC_SYSEXIT_H

_Noreturn void aarch64_exit(int status);

#endif /* SNIC_SYSEXIT_H */
