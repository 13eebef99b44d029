/* SPDX-License-Identifier: MIT */
/* ARM PL011 UART: polled transmit (PrimeCell UART TRM, DDI 0183). */
#include "pl011.h"

#include "arch.h"

#define UARTDR   0x000u
#define UARTFR   0x018u
#define UARTIBRD 0x024u
#define UARTLCRH 0x02cu
#define UARTCR   0x030u
#define FR_TXFF  (1u << 5)     /* transmit FIFO full */
#define LCRH_FEN (1u << 4)
#define LCRH_WLEN8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE   (1u << 8)

static uintptr_t uart;

void pl011_init(uintptr_t base)
{
	uart = base;
	/* 8N1 with FIFOs, transmitter on.  The baud divisor does not matter
	 * to an emulated UART; a real one gets it from the board. */
	mmio_write32(uart + UARTCR, 0);
	mmio_write32(uart + UARTLCRH, LCRH_FEN | LCRH_WLEN8);
	mmio_write32(uart + UARTCR, CR_UARTEN | CR_TXE);
}

void pl011_putc(char c)
{
	if (uart == 0)
		return;
	while (mmio_read32(uart + UARTFR) & FR_TXFF)
		;
	mmio_write32(uart + UARTDR, (uint8_t)c);
}

void pl011_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			pl011_putc('\r');
		pl011_putc(s[i]);
	}
}

void pl011_puts(const char *s)
{
	while (*s) {
		if (*s == '\n')
			pl011_putc('\r');
		pl011_putc(*s++);
	}
}

void pl011_put_hex(uint64_t v)
{
	pl011_puts("0x");
	for (int sh = 60; sh >= 0; sh -= 4)
		pl011_putc("0123456789abcdef"[(v >> sh) & 0xf]);
}
