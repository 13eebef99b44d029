/* SPDX-License-Identifier: MIT */
/*
 * ARM PL011 UART, polled transmit only (the console).  Generic: the board
 * passes the base address.
 */
#ifndef SNIC_PL011_H
#define SNIC_PL011_H

#include <stddef.h>
#include <stdint.h>

void pl011_init(uintptr_t base);
void pl011_putc(char c);
/* Writes n bytes, "\n" as "\r\n". */
void pl011_write(const char *s, size_t n);
void pl011_puts(const char *s);
/* "0x" and 16 hex digits, no allocation: usable from exception context. */
void pl011_put_hex(uint64_t v);

#endif /* SNIC_PL011_H */
