/*
 * host-driver/abi/stubs.c — the exports snic does not implement whose
 * answer is a constant, expanded from the table in stubs.def.
 *
 * They exist because every Debian verbs binary is linked BIND_NOW: each
 * symbol@version it imports must resolve at load time even when it is
 * never called (host-driver/ABI.md has the import table).  The version
 * node of each comes from libibverbs.map; stubs.def repeats it so that
 * the table documents itself and the abi-doc test can hold the two
 * together.
 *
 * A stub is defined without parameters and ignores its arguments: on the
 * C calling conventions of x86-64 and AArch64 the caller owns the
 * argument registers and stack, so a call with the verb's real argument
 * list (including the variadic __verbs_log) is sound.  This file
 * therefore includes no verbs header whose prototypes would differ.
 */
#include <errno.h>
#include <stddef.h>

#define STUB_EOPNOTSUPP(sym)                                                 \
	int sym(void);                                                       \
	int sym(void) { return EOPNOTSUPP; }
#define STUB_NULL(sym)                                                       \
	void *sym(void);                                                     \
	void *sym(void) { errno = EOPNOTSUPP; return NULL; }
#define STUB_ZERO(sym)                                                       \
	int sym(void);                                                       \
	int sym(void) { return 0; }
#define STUB_VOID(sym)                                                       \
	void sym(void);                                                      \
	void sym(void) { }

#define STUB(sym, version, kind) STUB_##kind(sym)
#include "abi/stubs.def"
#undef STUB
