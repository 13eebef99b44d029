/* SPDX-License-Identifier: MIT */
/*
 * CUnit suites register themselves: each tests/unit/test_*.c ends with
 *
 *     UNIT_SUITE(wire, NULL, NULL,
 *                UNIT_TEST(test_parse_send_only),
 *                UNIT_TEST(test_icrc_known_vector));
 *
 * and main.c runs every registered suite (or those named on the command
 * line).  No central list to edit when a file is added.
 */
#ifndef SNIC_TESTS_UNIT_H
#define SNIC_TESTS_UNIT_H

#include <CUnit/CUnit.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

struct unit_suite {
	const char *name;
	int (*init)(void);
	int (*clean)(void);
	const struct unit_test *tests;
	struct unit_suite *next;
};

void unit_register(struct unit_suite *s);

#define UNIT_TEST(fn) { #fn, fn }
#define UNIT_SUITE(sname, init_fn, clean_fn, ...)                          \
	static const struct unit_test sname##_tests_[] = { __VA_ARGS__,    \
							   { 0, 0 } };     \
	static struct unit_suite sname##_suite_ = { #sname, init_fn,       \
						    clean_fn,              \
						    sname##_tests_, 0 };   \
	__attribute__((constructor)) static void sname##_register_(void)   \
	{                                                                  \
		unit_register(&sname##_suite_);                            \
	}

#endif
