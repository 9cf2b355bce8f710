// SPDX-License-Identifier: GPL-2.0
/*
 * An unmodified pthread program of shim_tests.sh (plain gcc -pthread, no
 * sdsm header) that is free of data races: every access to data another
 * thread writes is ordered by a pthread call.  So it is correct under
 * release consistency (sdsmctl -N all --consistency=release), where those
 * calls are the only acquires and releases, and plain atomics synchronize
 * nothing across nodes.  shim_rc_prog [THREADS [ROUNDS]] (default 6, 20).
 *
 * Mutexes (normal, recursive, errorcheck; trylock, timedlock), a condvar
 * queue of malloc'ed items freed by other threads, barriers with a serial
 * thread and a stencil whose threads write interleaved words of the same
 * pages between them, rwlocks, a semaphore, pthread_once, spin locks, a
 * stack variable of main written by a thread, join return values.
 *
 * stdout holds only results, the same in a native run and a run spread
 * over nodes; stderr tells which node each thread ran on.  Exit status 1
 * if a result is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plain_node.h"

#define MAXT	32
#define CELLS	2048		/* 4 pages of ints, interleaved over threads */
#define STEPS	8

static int nt = 6, rounds = 20;

/* Failures, under fail_m. */
static pthread_mutex_t fail_m = PTHREAD_MUTEX_INITIALIZER;
static int bad;

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static long count;
static pthread_mutex_t recm = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static long rec_count;
static pthread_mutex_t errm;
static long err_count;

static struct {
	pthread_mutex_t m;
	pthread_cond_t nonempty, nonfull;
	long *buf[4];
	int head, tail, n;
	long sum, taken;
} q = {
	.m = PTHREAD_MUTEX_INITIALIZER,
	.nonempty = PTHREAD_COND_INITIALIZER,
	.nonfull = PTHREAD_COND_INITIALIZER,
};

static pthread_barrier_t bar;
static int serials[STEPS + 1];		/* under mx */
static int cells[2][CELLS];

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_a, rw_b, rw_bad;		/* rw_bad under mx */

static sem_t sem;
static int inside, most;		/* under mx */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs, once_value;
static long once_bad;			/* under mx */

static pthread_spinlock_t spin;
static long spin_count;

static void fail(const char *what)
{
	pthread_mutex_lock(&fail_m);
	printf("FAILED: %s\n", what);
	bad = 1;
	pthread_mutex_unlock(&fail_m);
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
	once_runs++;
	once_value = 4242;
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
		q.taken++;
		pthread_cond_broadcast(&q.nonfull);
		pthread_mutex_unlock(&q.m);
		free(item);
	}
}

/* One step of the stencil: thread @idx writes cells idx, idx + nt, ... */
static void stencil(int idx, int step)
{
	const int *from = cells[step & 1];
	int *to = cells[(step + 1) & 1], i;

	for (i = idx; i < CELLS; i += nt)
		to[i] = from[i] + (i ? from[i - 1] : 0) % 7 +
			(i + 1 < CELLS ? from[i + 1] : 0) % 5 + step;
}

static void *thread(void *p)
{
	int idx = (int)(long)p, i, r;

	fprintf(stderr, "thread %d on node %d\n", idx, node_id());
	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&mx);
		count++;
		pthread_mutex_unlock(&mx);
		pthread_mutex_lock(&recm);
		pthread_mutex_lock(&recm);
		rec_count++;
		pthread_mutex_unlock(&recm);
		pthread_mutex_unlock(&recm);
		if (pthread_mutex_lock(&errm)) {
			fail("errorcheck lock");
			continue;
		}
		err_count++;
		if (pthread_mutex_lock(&errm) != EDEADLK)
			fail("errorcheck relock is not EDEADLK");
		pthread_mutex_unlock(&errm);
	}
	pthread_barrier_wait(&bar);
	if (idx % 2 == 0 && idx + 1 < nt)
		produce(idx);
	else if (idx % 2 == 1)
		consume();
	/* Stencil steps between barriers: one serial thread each. */
	for (i = 0; i < STEPS; i++) {
		stencil(idx, i);
		r = pthread_barrier_wait(&bar);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
			pthread_mutex_lock(&mx);
			serials[i]++;
			pthread_mutex_unlock(&mx);
		} else if (r) {
			fail("pthread_barrier_wait");
		}
	}
	for (i = 0; i < rounds; i++) {
		if ((i + idx) % 3 == 0) {
			pthread_rwlock_wrlock(&rw);
			rw_a++;
			rw_b++;
			pthread_rwlock_unlock(&rw);
		} else {
			pthread_rwlock_rdlock(&rw);
			if (rw_a != rw_b) {
				pthread_mutex_lock(&mx);
				rw_bad++;
				pthread_mutex_unlock(&mx);
			}
			pthread_rwlock_unlock(&rw);
		}
	}
	for (i = 0; i < 3; i++) {
		sem_wait(&sem);
		pthread_mutex_lock(&mx);
		if (++inside > most)
			most = inside;
		pthread_mutex_unlock(&mx);
		usleep(2000);
		pthread_mutex_lock(&mx);
		inside--;
		pthread_mutex_unlock(&mx);
		sem_post(&sem);
	}
	pthread_once(&once, once_init);
	if (once_value != 4242) {
		pthread_mutex_lock(&mx);
		once_bad++;
		pthread_mutex_unlock(&mx);
	}
	for (i = 0; i < rounds; i++) {
		pthread_spin_lock(&spin);
		spin_count++;
		pthread_spin_unlock(&spin);
	}
	return (void *)(long)(idx + 100);
}

/*
 * Hand-overs without a lock: a block another thread allocated (homed on
 * its node), which main reads, then that thread changes before it ends:
 * main sees the change after pthread_join.  Main changes it again before
 * it starts each of two threads, one after the other (one at least on
 * another node than main's in a spread run): they see main's change.
 */
static pthread_mutex_t hm = PTHREAD_MUTEX_INITIALIZER;
static long *handed;
static sem_t ready, go2;
static int handover_bad;		/* under hm */

static void *handover_maker(void *p)
{
	long *b = malloc(64 * sizeof(long));

	(void)p;
	if (!b)
		return NULL;
	b[0] = 1;
	pthread_mutex_lock(&hm);
	handed = b;
	pthread_mutex_unlock(&hm);
	sem_post(&ready);
	sem_wait(&go2);
	b[0] = 2;
	return NULL;
}

static void *handover_reader(void *p)
{
	if (handed[0] != 3 + (long)p) {
		pthread_mutex_lock(&hm);
		handover_bad++;
		pthread_mutex_unlock(&hm);
	}
	return NULL;
}

static void handover(void)
{
	pthread_t a, b[2];
	long *p;
	int i;

	sem_init(&ready, 0, 0);
	sem_init(&go2, 0, 0);
	pthread_create(&a, NULL, handover_maker, NULL);
	sem_wait(&ready);
	pthread_mutex_lock(&hm);
	p = handed;
	pthread_mutex_unlock(&hm);
	if (!p || p[0] != 1) {
		fail("handover: the block through a mutex");
		return;
	}
	sem_post(&go2);
	pthread_join(a, NULL);
	printf("a thread's last writes seen after pthread_join: %s\n",
	       p[0] == 2 ? "yes" : "no");
	if (p[0] != 2)
		fail("handover: pthread_join");
	/*
	 * One at a time: a thread that starts on main's node releases
	 * main's writes itself, and must not do it for the other.
	 */
	for (i = 0; i < 2; i++) {
		p[0] = 3 + i;
		pthread_create(&b[i], NULL, handover_reader, (void *)(long)i);
		pthread_join(b[i], NULL);
	}
	printf("the creator's writes seen by new threads: %s\n",
	       handover_bad ? "no" : "yes");
	if (handover_bad)
		fail("handover: pthread_create");
	free(p);
}

/* Mutex kinds on one thread; timeouts against a holder on another. */
static pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tc = PTHREAD_COND_INITIALIZER;
static sem_t held, go;

static void *holder(void *p)
{
	int *mains = p;

	pthread_mutex_lock(&tm);
	*mains = 1234;		/* main reads it after the join */
	sem_post(&held);
	sem_wait(&go);
	pthread_mutex_unlock(&tm);
	return NULL;
}

static void single(void)
{
	pthread_mutexattr_t a;
	struct timespec ts;
	pthread_t h;
	int stackvar = 0, r;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&errm, &a);
	pthread_mutex_lock(&recm);
	if (pthread_mutex_lock(&recm) || pthread_mutex_trylock(&recm))
		fail("recursive relock");
	pthread_mutex_unlock(&recm);
	pthread_mutex_unlock(&recm);
	pthread_mutex_unlock(&recm);
	if (pthread_mutex_unlock(&errm) != EPERM)
		fail("errorcheck unlock of a free mutex is not EPERM");
	pthread_mutex_lock(&mx);
	if (pthread_mutex_trylock(&mx) != EBUSY)
		fail("trylock of a held mutex is not EBUSY");
	pthread_mutex_unlock(&mx);
	printf("mutex kinds ok\n");

	sem_init(&held, 0, 0);
	sem_init(&go, 0, 0);
	pthread_create(&h, NULL, holder, &stackvar);
	sem_wait(&held);
	in_ms(&ts, 300);
	r = pthread_mutex_timedlock(&tm, &ts);
	printf("timedlock %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
	if (sem_trywait(&go) != -1 || errno != EAGAIN)
		fail("sem_trywait of an empty semaphore");
	sem_post(&go);
	pthread_join(h, NULL);
	printf("stack variable written by a thread: %s\n",
	       stackvar == 1234 ? "yes" : "no");
	if (stackvar != 1234)
		fail("stack variable");
	pthread_mutex_lock(&tm);
	in_ms(&ts, 300);
	r = pthread_cond_timedwait(&tc, &tm, &ts);
	printf("timedwait %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
	pthread_mutex_unlock(&tm);
}

int main(int argc, char **argv)
{
	int ref[2][CELLS], i, s, serial_bad = 0;
	pthread_t t[MAXT];
	long want, rets = 0;
	unsigned long sum;
	void *ret;

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
	pthread_barrier_init(&bar, NULL, nt);
	sem_init(&sem, 0, 2);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (i = 0; i < CELLS; i++)
		cells[0][i] = ref[0][i] = i % 13;
	single();
	handover();
	for (i = 0; i < nt; i++)
		if (pthread_create(&t[i], NULL, thread, (void *)(long)i)) {
			fail("pthread_create");
			return 1;
		}
	for (i = 0; i < nt; i++) {
		pthread_join(t[i], &ret);
		rets += (long)ret;
	}
	printf("return values %ld\n", rets);
	if (rets != (long)nt * 100 + (long)nt * (nt - 1) / 2)
		fail("join return values");
	printf("mutex %ld recursive %ld errorcheck %ld\n", count, rec_count,
	       err_count);
	if (count != (long)nt * rounds || rec_count != count ||
	    err_count != count)
		fail("mutex counters");
	want = 0;
	for (i = 0; i + 1 < nt; i += 2)
		want += i * 1000L * rounds + (long)rounds * (rounds + 1) / 2;
	printf("prodcons items %ld sum %ld\n", q.taken, q.sum);
	if (q.taken != (long)(nt / 2) * rounds || q.sum != want)
		fail("producer/consumer");
	for (i = 0; i < STEPS; i++)
		serial_bad += serials[i] != 1;
	printf("barrier steps %d, serial once each: %s\n", STEPS,
	       serial_bad ? "no" : "yes");
	if (serial_bad)
		fail("barrier serial thread");
	/* The stencil, serially: every thread's words merged. */
	for (s = 0; s < STEPS; s++)
		for (i = 0; i < CELLS; i++)
			ref[(s + 1) & 1][i] = ref[s & 1][i] +
				(i ? ref[s & 1][i - 1] : 0) % 7 +
				(i + 1 < CELLS ? ref[s & 1][i + 1] : 0) % 5 + s;
	sum = 0;
	for (i = 0; i < CELLS; i++) {
		sum = sum * 31 + (unsigned int)cells[STEPS & 1][i];
		if (cells[STEPS & 1][i] != ref[STEPS & 1][i])
			serial_bad++;
	}
	printf("stencil checksum %lu, cells unlike a serial run %d\n", sum,
	       serial_bad);
	if (serial_bad)
		fail("stencil");
	printf("rwlock writes %ld, torn reads %ld\n", rw_a, rw_bad);
	if (rw_bad || rw_a != rw_b)
		fail("rwlock");
	printf("semaphore of 2: at most 2 inside: %s\n",
	       most >= 1 && most <= 2 ? "yes" : "no");
	if (most < 1 || most > 2)
		fail("semaphore");
	printf("once runs %d, seen by all: %s\n", once_runs,
	       once_bad ? "no" : "yes");
	if (once_runs != 1 || once_bad)
		fail("pthread_once");
	printf("spin %ld\n", spin_count);
	if (spin_count != (long)nt * rounds)
		fail("spin lock");
	return bad;
}
