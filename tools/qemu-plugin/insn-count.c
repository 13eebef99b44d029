/* SPDX-License-Identifier: MIT */
/*
 * A QEMU TCG plugin (qemu-user -plugin) that counts executed guest
 * instructions: all of them, and those in the functions named in a file
 * (one name per line, e.g. the firmware's, from nm).  Debian's QEMU 7.2
 * runs plugins but ships neither plugins nor qemu-plugin.h, so the few
 * declarations of the plugin API (version 1, QEMU 7.2) are here.
 *
 *   qemu-aarch64 -plugin build/bin/qemu-insn-count.so,syms=FILE[,top=K] PROGRAM
 * prints at exit, on stderr:  insn-count: total N in-syms M
 * and, with top=K, the K listed symbols that ran the most instructions.
 *
 * A translation block is attributed by the symbol of its first
 * instruction: TBs end at branches and calls, so a block does not run
 * from one function into the next.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU plugin API, version 1 (include/qemu/qemu-plugin.h) ------- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
	enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t, void *), void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;
/* -------------------------------------------------------------------- */

static uint64_t total, in_syms;
static char **syms;
static uint64_t *per_sym;       /* instructions per listed symbol */
static size_t nsyms;
static unsigned top;            /* top=N: print the N busiest symbols */

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_syms(const char *path)
{
	char line[256];
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = 0;
		if (line[0] == 0)
			continue;
		if (nsyms == cap) {
			cap = cap ? cap * 2 : 256;
			syms = realloc(syms, cap * sizeof(*syms));
			if (syms == NULL)
				return -1;
		}
		syms[nsyms++] = strdup(line);
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), cmp);
	return 0;
}

/* The index of name in syms, or -1.  name is looked up without what
 * follows a "." (GCC's clones and LTO's renamed statics: foo.isra.0,
 * foo.lto_priv.0 are foo; instr-count.sh lists base names). */
static long listed(const char *name)
{
	char base[256];
	const char *key = base;
	char **hit;

	if (name == NULL || nsyms == 0)
		return -1;
	snprintf(base, sizeof(base), "%.*s", (int)strcspn(name, "."), name);
	hit = bsearch(&key, syms, nsyms, sizeof(*syms), cmp);
	return hit != NULL ? hit - syms : -1;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	long i;

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &total, n);
	if (n == 0)
		return;
	i = listed(qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0)));
	if (i < 0)
		return;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &in_syms, n);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &per_sym[i], n);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	(void)id, (void)p;
	/* stderr, not qemu_plugin_outs(): that one needs -d plugin. */
	fprintf(stderr, "insn-count: total %" PRIu64 " in-syms %" PRIu64 "\n",
		total, in_syms);
	for (unsigned k = 0; k < top; k++) {
		size_t best = 0;

		for (size_t i = 1; i < nsyms; i++)
			if (per_sym[i] > per_sym[best])
				best = i;
		if (nsyms == 0 || per_sym[best] == 0)
			break;
		fprintf(stderr, "insn-count: %s %" PRIu64 "\n", syms[best],
			per_sym[best]);
		per_sym[best] = 0;
	}
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "syms=", 5) == 0 && load_syms(argv[i] + 5)) {
			fprintf(stderr, "insn-count: cannot read %s\n", argv[i] + 5);
			return -1;
		}
		if (strncmp(argv[i], "top=", 4) == 0)
			top = (unsigned)atoi(argv[i] + 4);
	}
	per_sym = calloc(nsyms ? nsyms : 1, sizeof(*per_sym));
	if (per_sym == NULL)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
