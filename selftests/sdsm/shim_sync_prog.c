// SPDX-License-Identifier: GPL-2.0
/*
 * An unmodified pthread program of shim_tests.sh (plain gcc -pthread, no
 * sdsm header) that synchronizes its threads with glibc's primitives:
 * mutexes (normal, recursive, errorcheck; trylock, timedlock), a condvar
 * queue whose items are malloc'ed by producers and freed by consumers,
 * barriers, rwlocks, a semaphore, pthread_once, spin locks, C11 atomics and
 * __thread data.  shim_sync_prog [THREADS [ROUNDS]] (default 6, 50).
 *
 * stdout holds only results, the same in a native run and a run spread
 * over nodes; stderr tells which node each thread ran on.  Exit status 1
 * if a result is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plain_node.h"

#define MAXT 32

static int nt = 6, rounds = 50, bad;

static struct {
	pthread_mutex_t m;
	long count;
} mx;

static struct {
	pthread_mutex_t m;
	pthread_cond_t nonempty, nonfull;
	long *buf[4];
	int head, tail, n;
	long sum, freed;
} q;

/* Ownership by thread id: ids must differ across nodes. */
static pthread_mutex_t recm, errm;
static long rec_count, err_count, err_fail;

static pthread_barrier_t bar;
static int serials[64];
static pthread_rwlock_t rw;
static long rw_a, rw_b, rw_bad;
static sem_t sem;
static int inside, most;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static pthread_spinlock_t spin;
static long spin_count;
static atomic_long c11;
static __thread int mine;
static int tls_bad;

static void fail(const char *what)
{
	printf("FAILED: %s\n", what);
	__atomic_store_n(&bad, 1, __ATOMIC_SEQ_CST);
}

static void in_ms(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ms * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

static void once_init(void)
{
	usleep(20000);
	__atomic_add_fetch(&once_runs, 1, __ATOMIC_SEQ_CST);
}

static void produce(int idx)
{
	int i;

	for (i = 0; i < rounds; i++) {
		long *item = malloc(sizeof(*item));

		if (!item) {
			fail("malloc");
			return;
		}
		*item = (long)idx * 1000 + i + 1;
		pthread_mutex_lock(&q.m);
		while (q.n == 4)
			pthread_cond_wait(&q.nonfull, &q.m);
		q.buf[q.tail++ % 4] = item;
		q.n++;
		pthread_cond_signal(&q.nonempty);
		pthread_mutex_unlock(&q.m);
	}
}

static void consume(void)
{
	long *item;
	int i;

	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&q.m);
		while (!q.n)
			pthread_cond_wait(&q.nonempty, &q.m);
		item = q.buf[q.head++ % 4];
		q.n--;
		q.sum += *item;
		q.freed++;
		pthread_cond_broadcast(&q.nonfull);
		pthread_mutex_unlock(&q.m);
		free(item);
	}
}

static void *thread(void *p)
{
	int idx = (int)(long)p, i, n, m;

	mine = idx + 1;
	fprintf(stderr, "thread %d on node %d tid %d\n", idx, node_id(),
		gettid());
	/* Mutex: a counter. */
	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&mx.m);
		mx.count++;
		pthread_mutex_unlock(&mx.m);
	}
	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&recm);
		pthread_mutex_lock(&recm);
		rec_count++;
		pthread_mutex_unlock(&recm);
		pthread_mutex_unlock(&recm);
		if (pthread_mutex_lock(&errm)) {
			__atomic_add_fetch(&err_fail, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		err_count++;
		if (pthread_mutex_unlock(&errm))
			__atomic_add_fetch(&err_fail, 1, __ATOMIC_SEQ_CST);
	}
	pthread_barrier_wait(&bar);
	/* Producers and consumers, on different nodes in a spread run. */
	if (idx % 2 == 0 && idx + 1 < nt)
		produce(idx);
	else if (idx % 2 == 1)
		consume();
	/* Barrier phases: one serial thread each. */
	for (i = 0; i < 10; i++)
		if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_add_fetch(&serials[i], 1, __ATOMIC_SEQ_CST);
	/* rwlock: a reader never sees a writer half way. */
	for (i = 0; i < rounds / 2; i++) {
		if ((i + idx) % 3 == 0) {
			pthread_rwlock_wrlock(&rw);
			rw_a++;
			rw_b++;
			pthread_rwlock_unlock(&rw);
		} else {
			pthread_rwlock_rdlock(&rw);
			if (rw_a != rw_b)
				__atomic_add_fetch(&rw_bad, 1, __ATOMIC_SEQ_CST);
			pthread_rwlock_unlock(&rw);
		}
	}
	/* A semaphore of 2. */
	for (i = 0; i < 5; i++) {
		sem_wait(&sem);
		n = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		m = __atomic_load_n(&most, __ATOMIC_SEQ_CST);
		while (n > m && !__atomic_compare_exchange_n(&most, &m, n, 0,
				__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
		usleep(1000);
		__atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		sem_post(&sem);
	}
	pthread_once(&once, once_init);
	if (__atomic_load_n(&once_runs, __ATOMIC_SEQ_CST) != 1)
		fail("pthread_once returned before its init ran");
	for (i = 0; i < rounds; i++) {
		pthread_spin_lock(&spin);
		spin_count++;
		pthread_spin_unlock(&spin);
		atomic_fetch_add(&c11, 2);
	}
	pthread_barrier_wait(&bar);
	if (mine != idx + 1)
		__atomic_add_fetch(&tls_bad, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void mutex_kinds(void)
{
	static pthread_mutex_t rec, err, held;
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&err, &a);
	pthread_mutex_init(&held, NULL);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&recm, &a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&errm, &a);
	pthread_mutex_lock(&rec);
	if (pthread_mutex_lock(&rec))
		fail("recursive relock");
	pthread_mutex_unlock(&rec);
	pthread_mutex_unlock(&rec);
	pthread_mutex_lock(&err);
	if (pthread_mutex_lock(&err) != EDEADLK)
		fail("errorcheck relock is not EDEADLK");
	pthread_mutex_unlock(&err);
	pthread_mutex_lock(&held);
	if (pthread_mutex_trylock(&held) != EBUSY)
		fail("trylock of a held mutex is not EBUSY");
	pthread_mutex_unlock(&held);
	printf("mutex kinds ok\n");
}

/* Timeouts against a holder on another thread (another node). */
static pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tc = PTHREAD_COND_INITIALIZER;
static int tm_held;

static void *holder(void *p)
{
	(void)p;
	pthread_mutex_lock(&tm);
	__atomic_store_n(&tm_held, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&tm_held, __ATOMIC_SEQ_CST) == 1)
		usleep(10000);
	pthread_mutex_unlock(&tm);
	return NULL;
}

static void timeouts(void)
{
	struct timespec ts;
	pthread_t h;
	int r;

	pthread_create(&h, NULL, holder, NULL);
	while (!__atomic_load_n(&tm_held, __ATOMIC_SEQ_CST))
		usleep(10000);
	in_ms(&ts, 200);
	r = pthread_mutex_timedlock(&tm, &ts);
	printf("timedlock %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
	__atomic_store_n(&tm_held, 2, __ATOMIC_SEQ_CST);
	pthread_join(h, NULL);
	pthread_mutex_lock(&tm);
	in_ms(&ts, 200);
	r = pthread_cond_timedwait(&tc, &tm, &ts);
	printf("timedwait %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
	pthread_mutex_unlock(&tm);
}

int main(int argc, char **argv)
{
	pthread_t t[MAXT];
	long i, want;
	int serial_bad = 0;

	if (argc > 1)
		nt = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (nt < 2 || nt > MAXT || rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: %s [THREADS 2..%d [ROUNDS]]\n", argv[0],
			MAXT);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_mutex_init(&mx.m, NULL);
	pthread_mutex_init(&q.m, NULL);
	pthread_cond_init(&q.nonempty, NULL);
	pthread_cond_init(&q.nonfull, NULL);
	pthread_barrier_init(&bar, NULL, nt);
	pthread_rwlock_init(&rw, NULL);
	sem_init(&sem, 0, 2);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	mutex_kinds();
	timeouts();
	for (i = 0; i < nt; i++)
		if (pthread_create(&t[i], NULL, thread, (void *)i)) {
			fail("pthread_create");
			return 1;
		}
	for (i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	printf("mutex counter %ld\n", mx.count);
	if (mx.count != (long)nt * rounds)
		fail("mutex counter");
	printf("recursive counter %ld, errorcheck counter %ld, errors %ld\n",
	       rec_count, err_count, err_fail);
	if (rec_count != (long)nt * rounds || err_count != (long)nt * rounds ||
	    err_fail)
		fail("recursive or errorcheck mutex");
	want = 0;
	for (i = 0; i + 1 < nt; i += 2)
		want += i * 1000L * rounds + (long)rounds * (rounds + 1) / 2;
	printf("prodcons items %ld sum %ld\n", q.freed, q.sum);
	if (q.freed != (long)(nt / 2) * rounds || q.sum != want)
		fail("producer/consumer");
	for (i = 0; i < 10; i++)
		serial_bad += serials[i] != 1;
	printf("barrier phases 10, serial once each: %s\n",
	       serial_bad ? "no" : "yes");
	if (serial_bad)
		fail("barrier");
	printf("rwlock writes %ld, torn reads %ld\n", rw_a, rw_bad);
	if (rw_bad || rw_a != rw_b)
		fail("rwlock");
	printf("semaphore of 2: at most 2 inside: %s\n",
	       most >= 1 && most <= 2 ? "yes" : "no");
	if (most < 1 || most > 2)
		fail("semaphore");
	printf("once runs %d\n", once_runs);
	printf("spin %ld c11 %ld\n", spin_count, atomic_load(&c11));
	if (spin_count != (long)nt * rounds || atomic_load(&c11) != 2L * nt * rounds)
		fail("spin lock or C11 atomics");
	printf("tls kept: %s\n", tls_bad ? "no" : "yes");
	if (tls_bad)
		fail("__thread data");
	return bad;
}
