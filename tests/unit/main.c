/* SPDX-License-Identifier: MIT */
/* Runs every self-registered CUnit suite, or those named as arguments. */
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "unit.h"

static struct unit_suite *suites;

void unit_register(struct unit_suite *s)
{
	s->next = suites;
	suites = s;
}

static int wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (struct unit_suite *s = suites; s; s = s->next) {
		if (!wanted(s->name, argc, argv))
			continue;
		CU_pSuite cs = CU_add_suite(s->name, s->init, s->clean);
		if (!cs)
			return 2;
		for (const struct unit_test *t = s->tests; t->name; t++)
			if (!CU_add_test(cs, t->name, t->fn))
				return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures() +
			  CU_get_number_of_tests_failed();
	unsigned run = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (run == 0) {
		fprintf(stderr, "no unit test ran\n");
		return 1;
	}
	return failed ? 1 : 0;
}
