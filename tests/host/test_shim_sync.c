// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of a job's pthread synchronization under release consistency
 * (userlib/preload/sdsm_shim_sync.c): mutexes, rwlocks, spin locks,
 * condvars, barriers, semaphores and pthread_once of objects in the job's
 * memory going to cluster locks and barriers.
 *
 * The unit is built in, so its pthread_* and sem_* are this program's and
 * bind every call (this file's too) in place of glibc's.  The job's memory
 * is a window of this program's memory; the cluster is played by a fake
 * of libsdsm's calls below (locks owned by threads, barriers counting
 * arrivals, a condition word), built on glibc's own objects outside the
 * window, which the unit hands back to glibc.  So what is tested is the
 * mapping of POSIX semantics onto the cluster's (ownership, recursion,
 * errors, timeouts, the serial thread, what goes to the cluster and what
 * stays glibc's); the cluster calls themselves are tested in the cluster
 * (shim suite, "release").
 *
 * Options: --count, --first N, --prefix STR, --no-plan.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../userlib/preload/sdsm_shim_sync.c"
#include "tap_args.h"

/* ---- the job and its memory ---- */

int sdsm_shim_role = 1;
struct shim_ctl *shim_job;
static char win[1 << 16] __attribute__((aligned(4096)));

bool shim_job_mem(const void *p)
{
	return (const char *)p >= win && (const char *)p < win + sizeof(win);
}

static char said[512];

void shim_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(said, sizeof(said), fmt, ap);
	va_end(ap);
}

const char *sdsm_last_error(void)
{
	return "fake";
}

/* ---- the fake cluster: glibc's objects, outside the window ---- */

#define FAKE_LOCKS	64

static pthread_mutex_t fm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fc = PTHREAD_COND_INITIALIZER;
static struct {
	uint64_t key;
	pthread_t owner;
	bool held;
} locks[FAKE_LOCKS];
static struct {
	uint64_t key;
	unsigned int arrived, gen;
} bars[8];
static unsigned long lock_calls, barrier_calls, word_waits, word_wakes;
static unsigned long handoffs;
static uint64_t last_nodemask;

static int fail_errno(int err)
{
	errno = err;
	return -1;
}

static int find_lock(uint64_t key)
{
	int i, free_i = -1;

	for (i = 0; i < FAKE_LOCKS; i++) {
		if (locks[i].held && locks[i].key == key)
			return i;
		if (!locks[i].held && free_i < 0)
			free_i = i;
	}
	return free_i;
}

static void deadline(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int sdsm_lock_timeout(uint64_t key, unsigned int ms)
{
	struct timespec ts;
	int i, err = 0;

	if (ms)
		deadline(&ts, ms);
	pthread_mutex_lock(&fm);
	lock_calls++;
	if (key == shim_key((void *)SHIM_CTL_ADDR))
		handoffs++;
	for (;;) {
		i = find_lock(key);
		if (i >= 0 && !locks[i].held)
			break;
		if (i >= 0 && pthread_equal(locks[i].owner, pthread_self())) {
			err = EDEADLK;
			break;
		}
		if (i < 0) {
			err = ENOSPC;
			break;
		}
		if (ms ? pthread_cond_timedwait(&fc, &fm, &ts) == ETIMEDOUT :
			 pthread_cond_wait(&fc, &fm) != 0) {
			err = ETIMEDOUT;
			break;
		}
	}
	if (!err) {
		locks[i].key = key;
		locks[i].owner = pthread_self();
		locks[i].held = true;
	}
	pthread_mutex_unlock(&fm);
	return err ? fail_errno(err) : 0;
}

int sdsm_lock(uint64_t key)
{
	return sdsm_lock_timeout(key, 0);
}

int sdsm_trylock(uint64_t key)
{
	int i, err = 0;

	pthread_mutex_lock(&fm);
	lock_calls++;
	i = find_lock(key);
	if (i < 0)
		err = ENOSPC;
	else if (locks[i].held)
		err = pthread_equal(locks[i].owner, pthread_self()) ?
		      EDEADLK : EBUSY;
	else
		locks[i] = (typeof(locks[0])){ key, pthread_self(), true };
	pthread_mutex_unlock(&fm);
	return err ? fail_errno(err) : 0;
}

int sdsm_unlock(uint64_t key)
{
	int i, err = 0;

	pthread_mutex_lock(&fm);
	lock_calls++;
	i = find_lock(key);
	if (i < 0 || !locks[i].held ||
	    !pthread_equal(locks[i].owner, pthread_self()))
		err = EPERM;
	else
		locks[i].held = false;
	pthread_cond_broadcast(&fc);
	pthread_mutex_unlock(&fm);
	return err ? fail_errno(err) : 0;
}

/* Does the fake module name the serial arrival (SDSM_BARRIER_OUT_SERIAL)? */
static bool fake_serial = true;

int sdsm_has_feature(uint64_t feature)
{
	return feature == SDSM_FEATURE_BARRIER_SERIAL ? fake_serial : 1;
}

int sdsm_barrier_out(uint64_t key, unsigned int count, uint64_t nodemask,
		     unsigned int timeout_ms, uint32_t *out_flags)
{
	unsigned int i, gen;

	(void)timeout_ms;
	*out_flags = 0;
	pthread_mutex_lock(&fm);
	barrier_calls++;
	last_nodemask = nodemask;
	for (i = 0; i < 8 && bars[i].key && bars[i].key != key; i++)
		;
	if (i == 8) {
		pthread_mutex_unlock(&fm);
		return fail_errno(ENOMEM);
	}
	bars[i].key = key;
	gen = bars[i].gen;
	if (++bars[i].arrived == count) {
		bars[i].arrived = 0;
		bars[i].gen++;
		if (fake_serial)
			*out_flags = SDSM_BARRIER_OUT_SERIAL;
		pthread_cond_broadcast(&fc);
	} else {
		while (bars[i].gen == gen)
			pthread_cond_wait(&fc, &fm);
	}
	pthread_mutex_unlock(&fm);
	return 0;
}

/* libsdsm's condvar protocol, on fc: the lock given back, a wait, taken. */
int sdsm_cond_wait_on(struct sdsm_cond *cond, int (*unlock)(void *),
		      int (*lock)(void *), void *arg, unsigned int timeout_ms)
{
	struct timespec ts;
	uint32_t seq;
	int err = 0;

	pthread_mutex_lock(&fm);
	word_waits++;
	seq = cond->seq;
	pthread_mutex_unlock(&fm);
	if (unlock(arg))
		return -1;
	deadline(&ts, timeout_ms);
	pthread_mutex_lock(&fm);
	while (cond->seq == seq && !err)
		err = timeout_ms ? pthread_cond_timedwait(&fc, &fm, &ts) :
				   pthread_cond_wait(&fc, &fm);
	pthread_mutex_unlock(&fm);
	if (lock(arg))
		return -1;
	return err ? fail_errno(err) : 0;
}

int sdsm_cond_broadcast(struct sdsm_cond *cond)
{
	pthread_mutex_lock(&fm);
	word_wakes++;
	cond->seq++;
	pthread_cond_broadcast(&fc);
	pthread_mutex_unlock(&fm);
	return 0;
}

/* ---- objects in the window ---- */

static struct objs {
	pthread_mutex_t m, rec, err, glibc_m_unused;
	pthread_cond_t c, c2;
	pthread_barrier_t b;
	pthread_rwlock_t rw;
	pthread_spinlock_t spin;
	sem_t sem;
	pthread_once_t once;
	long counter, items, serials[32];
	int once_runs;
} *o;

/* Outside the window: glibc's. */
static pthread_mutex_t outside = PTHREAD_MUTEX_INITIALIZER;

static char diag[256];

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			snprintf(diag, sizeof(diag), __VA_ARGS__);	\
			return 0;					\
		}							\
	} while (0)

static void in_ms(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ms * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

static void reset(void)
{
	memset(win, 0, sizeof(win));
	memset(locks, 0, sizeof(locks));
	memset(bars, 0, sizeof(bars));
	memset(shim_job, 0, sizeof(*shim_job));
	shim_job->consistency = SDSM_CONSISTENCY_RELEASE;
	shim_job->key_tag = 0x1234;
	shim_job->nodemask = 0x6;
	shim_job->launcher = 0;
	o = (struct objs *)win;
	lock_calls = barrier_calls = word_waits = word_wakes = handoffs = 0;
}

#define NT	4

static void *count_fn(void *p)
{
	int i;

	(void)p;
	for (i = 0; i < 2000; i++) {
		pthread_mutex_lock(&o->m);
		o->counter++;
		pthread_mutex_unlock(&o->m);
	}
	return NULL;
}

static int run_threads(void *(*fn)(void *))
{
	pthread_t t[NT];
	long i;

	for (i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)i))
			return 0;
	for (i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	return 1;
}

static int t_mutex(void)
{
	reset();
	pthread_mutex_init(&o->m, NULL);
	CHECK(run_threads(count_fn), "pthread_create");
	CHECK(o->counter == NT * 2000, "counter %ld", o->counter);
	CHECK(lock_calls == 2 * NT * 2000, "%lu cluster lock calls, want %d",
	      lock_calls, 2 * NT * 2000);
	CHECK(!pthread_mutex_lock(&o->m), "lock");
	CHECK(pthread_mutex_lock(&o->m) == EDEADLK,
	      "a normal mutex taken again: want EDEADLK, not a hang");
	CHECK(pthread_mutex_trylock(&o->m) == EBUSY, "trylock of own: EBUSY");
	CHECK(pthread_mutex_unlock(&o->m) == 0, "unlock");
	CHECK(pthread_mutex_unlock(&o->m) == EPERM, "unlock of a free mutex");
	return 1;
}

static void *try_fn(void *p)
{
	return (void *)(long)pthread_mutex_trylock(p);
}

static void *unlock_fn(void *p)
{
	return (void *)(long)pthread_mutex_unlock(p);
}

static int t_recursive_errorcheck(void)
{
	pthread_mutexattr_t a;
	pthread_t t;
	void *r;

	reset();
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&o->rec, &a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&o->err, &a);
	CHECK(!pthread_mutex_lock(&o->rec) && !pthread_mutex_lock(&o->rec) &&
	      !pthread_mutex_trylock(&o->rec), "recursive: 3 takes");
	pthread_create(&t, NULL, unlock_fn, &o->rec);
	pthread_join(t, &r);
	CHECK((long)r == EPERM, "another thread's unlock of a recursive mutex taken 3 times: %ld",
	      (long)r);
	CHECK(!pthread_mutex_unlock(&o->rec) && !pthread_mutex_unlock(&o->rec),
	      "recursive: 2 gives");
	pthread_create(&t, NULL, try_fn, &o->rec);
	pthread_join(t, &r);
	CHECK((long)r == EBUSY, "held once more: another thread's trylock %ld",
	      (long)r);

	CHECK(!pthread_mutex_unlock(&o->rec), "recursive: last give");
	CHECK(pthread_mutex_unlock(&o->rec) == EPERM, "recursive: one too many");
	pthread_create(&t, NULL, try_fn, &o->rec);
	pthread_join(t, &r);
	CHECK(!r, "free: another thread's trylock %ld", (long)r);
	CHECK(!pthread_mutex_lock(&o->err), "errorcheck: take");
	CHECK(pthread_mutex_lock(&o->err) == EDEADLK, "errorcheck: again");
	CHECK(pthread_mutex_trylock(&o->err) == EBUSY, "errorcheck: trylock");
	CHECK(!pthread_mutex_unlock(&o->err), "errorcheck: give");
	CHECK(pthread_mutex_unlock(&o->err) == EPERM, "errorcheck: unheld");
	return 1;
}

static void *hold_fn(void *p)
{
	pthread_mutex_lock(&o->m);
	sem_post(p);
	usleep(400000);
	pthread_mutex_unlock(&o->m);
	return NULL;
}

static int t_timedlock(void)
{
	struct timespec ts;
	pthread_t t;
	sem_t *up = (sem_t *)(win + 8192);

	reset();
	sem_init(up, 0, 0);
	pthread_create(&t, NULL, hold_fn, up);
	sem_wait(up);
	in_ms(&ts, 100);
	CHECK(pthread_mutex_timedlock(&o->m, &ts) == ETIMEDOUT, "timedlock");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec--;
	CHECK(pthread_mutex_timedlock(&o->m, &ts) == ETIMEDOUT,
	      "a deadline passed");
	ts.tv_nsec = 1000000000L;
	CHECK(pthread_mutex_timedlock(&o->m, &ts) == EINVAL, "bad nsec");
	CHECK(pthread_mutex_clocklock(&o->m, 42, &ts) == EINVAL, "bad clock");
	in_ms(&ts, 5000);
	CHECK(!pthread_mutex_timedlock(&o->m, &ts), "timedlock after release");
	pthread_mutex_unlock(&o->m);
	pthread_join(t, NULL);
	return 1;
}

static void *consumer_fn(void *p)
{
	int i;

	(void)p;
	for (i = 0; i < 200; i++) {
		pthread_mutex_lock(&o->m);
		while (!o->items)
			pthread_cond_wait(&o->c, &o->m);
		o->items--;
		o->counter++;
		pthread_cond_signal(&o->c2);
		pthread_mutex_unlock(&o->m);
	}
	return NULL;
}

static int t_cond(void)
{
	struct timespec ts;
	pthread_t t[2];
	int i;

	reset();
	pthread_create(&t[0], NULL, consumer_fn, NULL);
	pthread_create(&t[1], NULL, consumer_fn, NULL);
	for (i = 0; i < 400; i++) {
		pthread_mutex_lock(&o->m);
		while (o->items >= 3)
			pthread_cond_wait(&o->c2, &o->m);
		o->items++;
		pthread_cond_signal(&o->c);
		pthread_mutex_unlock(&o->m);
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK(o->counter == 400 && !o->items, "consumed %ld, left %ld",
	      o->counter, o->items);
	CHECK(word_wakes >= 400, "%lu wakes", word_wakes);
	pthread_mutex_lock(&o->m);
	in_ms(&ts, 100);
	CHECK(pthread_cond_timedwait(&o->c, &o->m, &ts) == ETIMEDOUT,
	      "timedwait");
	CHECK(pthread_mutex_trylock(&o->m) == EBUSY, "held again after it");
	pthread_mutex_unlock(&o->m);
	CHECK(pthread_cond_wait(&o->c, &o->m) == EPERM,
	      "a wait without the mutex: EPERM");
	/* A condvar of the job with a library's mutex: glibc's mutex. */
	pthread_mutex_lock(&outside);
	in_ms(&ts, 50);
	CHECK(pthread_cond_timedwait(&o->c, &outside, &ts) == ETIMEDOUT,
	      "with a glibc mutex");
	CHECK(pthread_mutex_trylock(&outside) == EBUSY,
	      "the glibc mutex is held again");
	pthread_mutex_unlock(&outside);
	return 1;
}

static void *bar_fn(void *p)
{
	int i, r;

	(void)p;
	for (i = 0; i < 32; i++) {
		r = pthread_barrier_wait(&o->b);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_add_fetch(&o->serials[i], 1, __ATOMIC_SEQ_CST);
		else if (r)
			__atomic_add_fetch(&o->serials[i], 100,
					   __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/*
 * NT threads cross 32 phases of o->b: one serial thread each, all cluster.
 * The module names it, and the barrier takes no slot of shim_job; or
 * (fake_serial off: an older module) the count in the barrier's slot
 * does, shared memory that every arrival writes.
 */
static int barrier_phases(void)
{
	struct shim_barrier_slot *slot = NULL;
	int i;

	CHECK(!pthread_barrier_init(&o->b, NULL, NT), "init");
	CHECK(run_threads(bar_fn), "pthread_create");
	for (i = 0; i < 32; i++)
		CHECK(o->serials[i] == 1, "phase %d: %ld serial", i,
		      o->serials[i]);
	CHECK(barrier_calls == NT * 32, "%lu cluster barriers", barrier_calls);
	for (i = 0; i < SHIM_BARRIERS; i++)
		if (shim_job->barriers[i].key == shim_key(&o->b))
			slot = &shim_job->barriers[i];
	if (fake_serial)
		CHECK(!slot, "a slot with %llu arrivals counted",
		      (unsigned long long)slot->arrivals);
	else
		CHECK(slot && slot->arrivals == NT * 32,
		      "%llu arrivals counted in the slot, not %d",
		      slot ? (unsigned long long)slot->arrivals : 0ULL,
		      NT * 32);
	return 1;
}

/* The fake module names the serial arrival (@named) or not. */
static void module_names_serial(bool named)
{
	fake_serial = named;
}

static int t_barrier(void)
{
	pthread_barrier_t *many = (pthread_barrier_t *)(win + 16384);
	int i, ok;

	reset();
	CHECK(pthread_barrier_init(&o->b, NULL, 0) == EINVAL, "count 0");
	if (!barrier_phases())
		return 0;
	CHECK(last_nodemask == 0x7, "nodemask %#llx: the job's and the launcher's",
	      (unsigned long long)last_nodemask);
	CHECK(!pthread_barrier_destroy(&o->b), "destroy");
	/* Named by the module: no slot, so no limit. */
	for (i = 0; i <= SHIM_BARRIERS; i++)
		CHECK(!pthread_barrier_init(&many[i], NULL, 2), "barrier %d", i);
	for (i = 0; i < SHIM_BARRIERS; i++)
		CHECK(!shim_job->barriers[i].key, "slot %d taken", i);
	for (i = 0; i <= SHIM_BARRIERS; i++)
		CHECK(!pthread_barrier_destroy(&many[i]), "destroy %d", i);
	/* An older module: the slot counts the arrivals; 256 at most. */
	reset();
	module_names_serial(false);
	ok = barrier_phases();
	for (i = 0; ok && i < SHIM_BARRIERS - 1; i++)
		ok = !pthread_barrier_init(&many[i], NULL, 2);
	ok = ok && pthread_barrier_init(&many[i], NULL, 2) == EAGAIN &&
	     strstr(said, "barriers at once");
	ok = ok && !pthread_barrier_destroy(&many[0]) &&
	     !pthread_barrier_init(&many[i], NULL, 2);
	module_names_serial(true);
	CHECK(ok, "an older module: the slots, their limit: '%.200s'", said);
	return 1;
}

/*
 * A sequential job on several nodes: barriers are the cluster's too (one
 * round trip each, not glibc's atomics moving the page); with an older
 * module and every slot taken glibc's barrier serves, which works on
 * sequential memory; a job on one node keeps glibc's.
 */
static int t_barrier_sequential(void)
{
	pthread_barrier_t *many = (pthread_barrier_t *)(win + 16384);
	unsigned long calls;
	int i, ok;

	reset();
	shim_job->consistency = SDSM_CONSISTENCY_SEQUENTIAL;
	if (!barrier_phases())
		return 0;
	CHECK(!pthread_barrier_destroy(&o->b), "destroy");
	module_names_serial(false);
	for (i = 0, ok = 1; ok && i < SHIM_BARRIERS; i++)
		ok = !pthread_barrier_init(&many[i], NULL, 2);
	said[0] = 0;
	calls = barrier_calls;
	ok = ok && !pthread_barrier_init(&many[i], NULL, 1) &&
	     pthread_barrier_wait(&many[i]) == PTHREAD_BARRIER_SERIAL_THREAD &&
	     !pthread_barrier_destroy(&many[i]) && barrier_calls == calls &&
	     !said[0];
	/* A slot given back serves the next init again. */
	ok = ok && !pthread_barrier_destroy(&many[0]) &&
	     !pthread_barrier_init(&many[i], NULL, 1) &&
	     pthread_barrier_wait(&many[i]) == PTHREAD_BARRIER_SERIAL_THREAD &&
	     barrier_calls == calls + 1;
	module_names_serial(true);
	CHECK(ok, "an older module, past %d barriers: glibc's (%lu cluster barriers, message '%.120s')",
	      SHIM_BARRIERS, barrier_calls - calls, said);
	reset();
	shim_job->consistency = SDSM_CONSISTENCY_SEQUENTIAL;
	shim_job->nodemask = 0x1;
	CHECK(!pthread_barrier_init(&o->b, NULL, 1) &&
	      pthread_barrier_wait(&o->b) == PTHREAD_BARRIER_SERIAL_THREAD &&
	      !barrier_calls, "a job on one node: glibc's barrier");
	return 1;
}

static void *rw_fn(void *p)
{
	int i;

	for (i = 0; i < 500; i++) {
		if ((i + (long)p) % 3) {
			pthread_rwlock_rdlock(&o->rw);
			if (o->counter != o->items)
				__atomic_add_fetch(&o->serials[0], 1,
						   __ATOMIC_SEQ_CST);
			pthread_rwlock_unlock(&o->rw);
		} else {
			pthread_rwlock_wrlock(&o->rw);
			o->counter++;
			o->items++;
			pthread_rwlock_unlock(&o->rw);
		}
	}
	return NULL;
}

static int t_rwlock_spin(void)
{
	int i;

	reset();
	CHECK(run_threads(rw_fn), "pthread_create");
	CHECK(!o->serials[0], "%ld torn reads", o->serials[0]);
	CHECK(!pthread_rwlock_rdlock(&o->rw) && !pthread_rwlock_rdlock(&o->rw),
	      "a reader takes it again");
	CHECK(pthread_rwlock_wrlock(&o->rw) == EDEADLK, "wrlock of own");
	CHECK(!pthread_rwlock_unlock(&o->rw) && !pthread_rwlock_unlock(&o->rw),
	      "two gives");
	CHECK(pthread_rwlock_unlock(&o->rw) == EPERM, "one too many");
	pthread_spin_init(&o->spin, 0);
	for (i = 0; i < 100; i++) {
		CHECK(!pthread_spin_lock(&o->spin), "spin lock");
		CHECK(pthread_spin_trylock(&o->spin) == EBUSY, "spin trylock");
		CHECK(!pthread_spin_unlock(&o->spin), "spin unlock");
	}
	return 1;
}

static void *sem_fn(void *p)
{
	int i, n;

	(void)p;
	for (i = 0; i < 50; i++) {
		sem_wait(&o->sem);
		n = __atomic_add_fetch(&o->counter, 1, __ATOMIC_SEQ_CST);
		if (n > 2)
			__atomic_add_fetch(&o->items, 1, __ATOMIC_SEQ_CST);
		usleep(100);
		__atomic_sub_fetch(&o->counter, 1, __ATOMIC_SEQ_CST);
		sem_post(&o->sem);
	}
	return NULL;
}

static int t_sem(void)
{
	struct timespec ts;
	int v = -1;

	reset();
	CHECK(sem_init(&o->sem, 0, (unsigned int)SEM_VALUE_MAX + 1) == -1 &&
	      errno == EINVAL, "a value too large");
	CHECK(!sem_init(&o->sem, 0, 2), "init");
	CHECK(run_threads(sem_fn), "pthread_create");
	CHECK(!o->items, "%ld times more than 2 inside", o->items);
	CHECK(!sem_getvalue(&o->sem, &v) && v == 2, "value %d", v);
	CHECK(!sem_trywait(&o->sem) && !sem_trywait(&o->sem), "two trywaits");
	CHECK(sem_trywait(&o->sem) == -1 && errno == EAGAIN, "empty: EAGAIN");
	in_ms(&ts, 100);
	CHECK(sem_timedwait(&o->sem, &ts) == -1 && errno == ETIMEDOUT,
	      "timedwait");
	CHECK(!sem_post(&o->sem) && !sem_wait(&o->sem), "post, wait");
	return 1;
}

static void once_init(void)
{
	usleep(20000);
	o->once_runs++;
}

static void *once_fn(void *p)
{
	(void)p;
	pthread_once(&o->once, once_init);
	if (o->once_runs != 1)
		__atomic_add_fetch(&o->items, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int t_once(void)
{
	reset();
	CHECK(run_threads(once_fn), "pthread_create");
	CHECK(o->once_runs == 1 && !o->items, "ran %d times, %ld early",
	      o->once_runs, o->items);
	return 1;
}

/* What is not the job's, and a sequential job, stay glibc's. */
static int t_glibc(void)
{
	static pthread_barrier_t b;
	static sem_t s;

	reset();
	pthread_mutex_lock(&outside);
	pthread_mutex_unlock(&outside);
	CHECK(!pthread_barrier_init(&b, NULL, 1) &&
	      pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD,
	      "glibc barrier");
	CHECK(!sem_init(&s, 0, 1) && !sem_wait(&s), "glibc semaphore");
	CHECK(!lock_calls && !barrier_calls, "outside the window: %lu lock and %lu barrier calls",
	      lock_calls, barrier_calls);
	shim_job->consistency = SDSM_CONSISTENCY_SEQUENTIAL;
	CHECK(!pthread_mutex_lock(&o->m) && !pthread_mutex_unlock(&o->m),
	      "sequential job: glibc mutex");
	CHECK(!lock_calls, "a sequential job called the cluster lock");
	shim_job->consistency = SDSM_CONSISTENCY_RELEASE;
	shim_rc_sync();
	CHECK(handoffs == 1 && lock_calls == 2, "hand-off: %lu takes, %lu calls",
	      handoffs, lock_calls);
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	{ "mutex: a cluster lock per mutex, owned by the thread", t_mutex },
	{ "recursive and errorcheck mutexes", t_recursive_errorcheck },
	{ "timedlock and clocklock", t_timedlock },
	{ "condvars: a queue, timedwait, EPERM, a library's mutex", t_cond },
	{ "barriers: one serial thread each phase, the slot limit", t_barrier },
	{ "barriers of a sequential job on several nodes", t_barrier_sequential },
	{ "rwlocks held alone, spin locks", t_rwlock_spin },
	{ "unnamed semaphores", t_sem },
	{ "pthread_once", t_once },
	{ "outside the job, or a sequential job: glibc", t_glibc },
};

#define NTESTS	((int)(sizeof(tests) / sizeof(tests[0])))

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "Bail out! a test hung\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(int argc, char **argv)
{
	struct tap_args ta;
	int ret, i, failed = 0;

	ret = tap_parse_args(argc, argv, NTESTS, &ta);
	if (ret >= 0)
		return ret;
	if (ta.plan)
		printf("TAP version 13\n1..%d\n", NTESTS);
	shim_job = aligned_alloc(4096, (sizeof(*shim_job) + 4095) & ~4095UL);
	if (!shim_job) {
		printf("Bail out! no memory\n");
		return 1;
	}
	signal(SIGALRM, on_alarm);
	for (i = 0; i < NTESTS; i++) {
		int ok;

		diag[0] = 0;
		alarm(60);
		ok = tests[i].fn();
		alarm(0);
		printf("%sok %d %s%s\n", ok ? "" : "not ", ta.first + i,
		       ta.prefix, tests[i].name);
		if (!ok) {
			printf("# %s\n", diag);
			failed++;
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
