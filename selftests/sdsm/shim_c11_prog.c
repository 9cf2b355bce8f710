// SPDX-License-Identifier: GPL-2.0
/*
 * An unmodified C11 threads program of shim_tests.sh (plain gcc, no sdsm
 * header): glibc implements <threads.h> with its pthread functions inside
 * libc.  shim_c11_prog [THREADS [ROUNDS]] (default 6, 40): THREADS threads
 * (thrd_create) add to a counter under a plain mtx_t and a recursive one
 * taken twice, pass ROUNDS items each through a queue of one slot
 * (mtx_t, two cnd_t; half the threads produce, half consume), run a
 * call_once, keep a block in a tss_t whose destructor frees it at the
 * thread's end, and return an int that main collects with thrd_join.
 *
 * stdout holds only results, the same in a native run and in a job;
 * stderr tells which node each thread ran on.  Exit status 1 if a result
 * is wrong.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

#include "plain_node.h"

#define MAXT 32

static int nt = 6, rounds = 40;
static mtx_t plain, rec, qm;
static cnd_t nonempty, nonfull;
static long count, rec_count, slot, full, consumed_sum;
static once_flag once = ONCE_FLAG_INIT;
static int once_runs;
static tss_t tss;
static int tss_seen, tss_destroyed;

/* Counted under a mutex: under release consistency atomics are no sync. */
static void tss_destr(void *v)
{
	mtx_lock(&plain);
	tss_destroyed++;
	mtx_unlock(&plain);
	free(v);
}

static void once_fn(void)
{
	once_runs++;
}

static int worker(void *p)
{
	int idx = (int)(long)p, r;

	fprintf(stderr, "thread %d on node %d tid %ld\n", idx, node_id(),
		(long)syscall(SYS_gettid));
	call_once(&once, once_fn);
	{
		int *mine = malloc(sizeof(*mine));

		if (!mine || tss_set(tss, mine) != thrd_success)
			return -1;
		*mine = idx;
		mtx_lock(&plain);
		tss_seen += tss_get(tss) == mine && *mine == idx;
		mtx_unlock(&plain);
	}
	for (r = 0; r < rounds; r++) {
		if (mtx_lock(&plain) != thrd_success)
			return -1;
		count++;
		mtx_unlock(&plain);
		mtx_lock(&rec);
		mtx_lock(&rec);
		rec_count++;
		mtx_unlock(&rec);
		mtx_unlock(&rec);
	}
	/* Even threads produce ROUNDS items, odd ones consume as many. */
	for (r = 0; r < rounds; r++) {
		mtx_lock(&qm);
		if (idx % 2 == 0) {
			while (full)
				cnd_wait(&nonfull, &qm);
			slot = idx * 1000 + r;
			full = 1;
			cnd_broadcast(&nonempty);
		} else {
			while (!full)
				cnd_wait(&nonempty, &qm);
			consumed_sum += slot;
			full = 0;
			cnd_broadcast(&nonfull);
		}
		mtx_unlock(&qm);
	}
	return 100 + idx;
}

int main(int argc, char **argv)
{
	thrd_t t[MAXT];
	long want_sum = 0, ret_sum = 0;
	int i, res, bad = 0;

	if (argc > 1)
		nt = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (nt < 2 || nt > MAXT || nt % 2 || rounds < 1)
		return 2;
	if (mtx_init(&plain, mtx_plain) != thrd_success ||
	    mtx_init(&rec, mtx_plain | mtx_recursive) != thrd_success ||
	    mtx_init(&qm, mtx_plain) != thrd_success ||
	    cnd_init(&nonempty) != thrd_success ||
	    cnd_init(&nonfull) != thrd_success ||
	    tss_create(&tss, tss_destr) != thrd_success)
		return 1;
	for (i = 0; i < nt; i++)
		if (thrd_create(&t[i], worker, (void *)(long)i) != thrd_success)
			return 1;
	for (i = 0; i < nt; i++) {
		if (thrd_join(t[i], &res) != thrd_success)
			return 1;
		ret_sum += res;
		if (i % 2 == 0)
			want_sum += (long)rounds * i * 1000 +
				    (long)rounds * (rounds - 1) / 2;
	}
	printf("count %ld recursive %ld once %d returns %ld consumed %ld\n",
	       count, rec_count, once_runs, ret_sum, consumed_sum);
	printf("tss seen %d destroyed %d\n", tss_seen, tss_destroyed);
	bad = count != (long)nt * rounds || rec_count != count ||
	      tss_seen != nt || tss_destroyed != nt ||
	      once_runs != 1 || consumed_sum != want_sum ||
	      ret_sum != 100L * nt + (long)nt * (nt - 1) / 2;
	printf("%s\n", bad ? "wrong" : "right");
	mtx_destroy(&plain);
	mtx_destroy(&rec);
	mtx_destroy(&qm);
	cnd_destroy(&nonempty);
	cnd_destroy(&nonfull);
	tss_delete(tss);
	return bad;
}
