/* SPDX-License-Identifier: MIT */
/*
 * newlib's system calls for a single-threaded bare-metal image: the console
 * is the PL011, the heap grows from the end of .bss to below the stacks
 * (linker/qemu-virt.ld), exit leaves QEMU with the status.  There are no
 * files and no processes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "pl011.h"
#include "sysexit.h"

#undef errno
extern int errno;

extern char __heap_start[], __heap_end[];

/* Prototypes: newlib declares none of these for the program side. */
int _write(int fd, const void *buf, size_t n);
int _read(int fd, void *buf, size_t n);
int _close(int fd);
int _lseek(int fd, int off, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void *_sbrk(ptrdiff_t incr);
_Noreturn void _exit(int status);
int _kill(int pid, int sig);
int _getpid(void);
void _init(void);
void _fini(void);

int _write(int fd, const void *buf, size_t n)
{
	if (fd != 1 && fd != 2) {
		errno = EBADF;
		return -1;
	}
	pl011_write(buf, n);
	return (int)n;
}

int _read(int fd, void *buf, size_t n)
{
	(void)fd;
	(void)buf;
	(void)n;
	return 0;               /* no input: end of file */
}

int _close(int fd)
{
	(void)fd;
	errno = EBADF;
	return -1;
}

int _lseek(int fd, int off, int whence)
{
	(void)fd;
	(void)off;
	(void)whence;
	errno = ESPIPE;
	return -1;
}

int _fstat(int fd, struct stat *st)
{
	(void)fd;
	st->st_mode = S_IFCHR;  /* a terminal: stdout is line buffered */
	return 0;
}

int _isatty(int fd)
{
	return fd >= 0 && fd <= 2;
}

void *_sbrk(ptrdiff_t incr)
{
	static char *brk = __heap_start;
	char *old = brk;

	if (incr > __heap_end - brk || incr < __heap_start - brk) {
		errno = ENOMEM;
		return (void *)-1;
	}
	brk += incr;
	return old;
}

_Noreturn void _exit(int status)
{
	aarch64_exit(status);
}

int _kill(int pid, int sig)
{
	(void)pid;
	(void)sig;
	errno = EINVAL;
	return -1;
}

int _getpid(void)
{
	return 1;
}

void _init(void)
{
}

void _fini(void)
{
}
