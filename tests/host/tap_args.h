/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options every host test program takes, for run.sh: --count (print
 * the number of tests and exit), --first N (the number of the first test),
 * --prefix STR (put before every test name), --no-plan (no "1..N" line).
 */
#ifndef SDSM_TAP_ARGS_H
#define SDSM_TAP_ARGS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tap_args {
	int first;
	const char *prefix;
	bool plan;
};

/* -1 to go on, else the status to exit with (--count, or a usage error). */
static inline int tap_parse_args(int argc, char **argv, int ntests,
				 struct tap_args *a)
{
	int i;

	a->first = 1;
	a->prefix = "";
	a->plan = true;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--count")) {
			printf("%d\n", ntests);
			return 0;
		} else if (!strcmp(argv[i], "--first") && i + 1 < argc) {
			a->first = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--prefix") && i + 1 < argc) {
			a->prefix = argv[++i];
		} else if (!strcmp(argv[i], "--no-plan")) {
			a->plan = false;
		} else {
			fprintf(stderr, "usage: %s [--count] [--first N] [--prefix STR] [--no-plan]\n",
				argv[0]);
			return 2;
		}
	}
	return -1;
}

/*
 * In a check that returns bool: unless @cond, print a TAP comment with the
 * function, the message and the failed condition's line, and return false.
 */
#define TAP_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("# %s: ", __func__);			\
			printf(__VA_ARGS__);				\
			printf(" (line %d: %s)\n", __LINE__, #cond);	\
			return false;					\
		}							\
	} while (0)

/*
 * An unsigned number from the environment run.sh sets (SDSM_SEED,
 * SDSM_SCHEDULES, ...), or @def when it is unset, empty or not a number.
 */
static inline unsigned long tap_env_ulong(const char *name, unsigned long def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return def;
	x = strtoul(v, &end, 0);
	if (*end) {
		fprintf(stderr, "bad %s=%s, using %lu\n", name, v, def);
		return def;
	}
	return x;
}

/*
 * tap_parse_args() for a randomized test: *@seed from SDSM_SEED (default:
 * the clock), *@schedules from SDSM_SCHEDULES (default: its value, at
 * least 1), each overridden by --seed S or --schedules N.
 */
static inline int tap_parse_seeded(int argc, char **argv, int ntests,
				   struct tap_args *a,
				   unsigned long long *seed,
				   unsigned long *schedules)
{
	char **rest = calloc(argc + 1, sizeof(*rest));
	int i, n = 0, ret;

	if (!rest)
		return 2;
	*seed = tap_env_ulong("SDSM_SEED", (unsigned long)time(NULL));
	*schedules = tap_env_ulong("SDSM_SCHEDULES", *schedules);
	for (i = 0; i < argc; i++) {
		if (i && i + 1 < argc && !strcmp(argv[i], "--schedules"))
			*schedules = strtoul(argv[++i], NULL, 0);
		else if (i && i + 1 < argc && !strcmp(argv[i], "--seed"))
			*seed = strtoull(argv[++i], NULL, 0);
		else
			rest[n++] = argv[i];
	}
	rest[n] = NULL;
	ret = tap_parse_args(n, rest, ntests, a);
	free(rest);
	if (!*schedules)
		*schedules = 1;
	return ret;
}

/*
 * The start of a randomized test program: tap_parse_seeded(), then the
 * plan (unless --no-plan) and a comment naming @what, the seed and how
 * many @units (schedules, connections) a test runs.  -1 to go on, else
 * the status to exit with.
 */
static inline int tap_begin_seeded(int argc, char **argv, int ntests,
				   struct tap_args *a,
				   unsigned long long *seed,
				   unsigned long *schedules,
				   const char *what, const char *units)
{
	int ret = tap_parse_seeded(argc, argv, ntests, a, seed, schedules);

	if (ret >= 0)
		return ret;
	if (a->plan)
		printf("TAP version 13\n1..%d\n", ntests);
	printf("# %s%s: seed %llu, %lu %s (SDSM_SEED, SDSM_SCHEDULES or --seed, --schedules)\n",
	       a->prefix, what, *seed, *schedules, units);
	return -1;
}

/* One result line, test @n (from 0) of the program; fflush()es. */
static inline void tap_result(const struct tap_args *a, int n, bool ok,
			      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline void tap_result(const struct tap_args *a, int n, bool ok,
			      const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - %s", ok ? "ok" : "not ok", a->first + n, a->prefix);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#endif /* SDSM_TAP_ARGS_H */
