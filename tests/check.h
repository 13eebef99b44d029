/* SPDX-License-Identifier: MIT */
/*
 * PASS/FAIL lines and their counts, for the small test programs that are
 * neither CUnit suites nor verbs tests (tests/hostdrv, tests/hostagent).
 */
#ifndef SNIC_TESTS_CHECK_H
#define SNIC_TESTS_CHECK_H

#include <stdio.h>

static unsigned passed, failed;

static void check(int ok, const char *what)
{
	printf("%s  %s\n", ok ? "PASS" : "FAIL", what);
	if (ok)
		passed++;
	else
		failed++;
}

#endif /* SNIC_TESTS_CHECK_H */
