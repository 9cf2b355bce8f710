// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Job mode (sdsmctl -N) with release consistency (--consistency=release):
 * the program's pthread synchronization is the acquire and release of
 * its memory.  Documentation/preload.rst, "Release consistency".
 *
 * The job's heaps and globals are then release-consistent regions: a node
 * sees another node's writes only after an acquire that follows their
 * release, and atomics on that memory are atomic on one node only.  So
 * glibc's primitives, which keep their state in user memory with atomics,
 * cannot work across nodes there.  Every synchronization object of the
 * program in the job's memory instead goes to the cluster's:
 *
 *  - mutexes, rwlocks and spin locks are cluster locks (SDSM_IOC_LOCK)
 *    keyed by shim_key() of the object, held by the thread; a lock's
 *    release makes the holder's writes visible at their homes and its
 *    grant invalidates what the new holder's node has stale.  A recursive
 *    mutex counts its depth in the mutex; an rwlock is held exclusively
 *    (a reader may take it again: it counts like a recursive mutex);
 *  - condition variables wait on a sequence word of shim_job->conds[] (a
 *    hash of the condvar's address; the control region is sequential, so
 *    atomics work there) with libsdsm's sdsm_cond_*() on the mutex's
 *    lock; a signal wakes every waiter of the word, since two condvars
 *    may share one (spurious wake-ups are allowed);
 *  - barriers are cluster barriers (SDSM_IOC_BARRIER): the arrival is a
 *    release, the departure an acquire.  The serial thread is the one
 *    the module names (SDSM_BARRIER_OUT_SERIAL: the last arrival at the
 *    manager), and a barrier needs nothing else; with a module that does
 *    not, it takes a slot of shim_job->barriers[], and the serial thread
 *    is the one whose arrival counted last there (fetch-and-add before
 *    the arrival, so a generation's arrivals all count before the next
 *    one's; that moves the slots' page);
 *  - unnamed semaphores and pthread_once are a count and a flag in the
 *    object, under the object's cluster lock, with a condvar word to
 *    sleep on.
 *
 * Thread creation and join, and a block freed on another node than its
 * own, hand memory over through one lock of the job (shim_rc_handoff()).
 * Objects outside the job's memory (a library's own data) stay glibc's.
 * In a sequential job none of this runs but the barriers of a job on
 * several nodes (cluster_barrier()): glibc's primitives work on
 * sequentially consistent memory (sdsm_futex_trap.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sdsm_shim.h"

#define EXPORT		__attribute__((visibility("default")))
#define SLICE_MS	500	/* a wait re-checks cancellation this often */
#define ONCE_DONE	2

void shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is this process in a job of release consistency? */
static bool rc_job(void)
{
	return sdsm_shim_role && shim_job &&
	       shim_job->consistency == SDSM_CONSISTENCY_RELEASE;
}

/* Is @p an object of the program that the cluster synchronizes? */
static bool rc_object(const void *p)
{
	return rc_job() && shim_job_mem(p);
}

/*
 * The cluster lock or barrier id of the object at @p: its address, the
 * same on every node of the job, tagged with the job's key_tag so that two
 * jobs of one program do not share their locks.
 */
static uint64_t shim_key(const void *p)
{
	return (uint64_t)shim_job->key_tag << 48 |
	       ((uintptr_t)p & ((1ULL << 48) - 1));
}

static struct sdsm_cond *cond_word(const void *p)
{
	return &shim_job->conds[(shim_hash((uintptr_t)p) >> 32) % SHIM_CONDS];
}

/* The job's hand-off lock: its control region's key. */
void shim_rc_handoff(bool take)
{
	uint64_t key;

	if (!rc_job())
		return;
	key = shim_key((void *)SHIM_CTL_ADDR);
	if (take ? sdsm_lock(key) : sdsm_unlock(key))
		shim_say("hand-off lock: %s", sdsm_last_error());
}

void shim_rc_sync(void)
{
	shim_rc_handoff(true);
	shim_rc_handoff(false);
}

/*
 * Milliseconds from now to @abs on @clock, rounded up: 0 when it passed,
 * -EINVAL for a bad @abs.
 */
static int64_t ms_until(clockid_t clock, const struct timespec *abs)
{
	struct timespec now;
	int64_t ns;

	if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return -EINVAL;
	clock_gettime(clock, &now);
	ns = (abs->tv_sec - now.tv_sec) * 1000000000LL +
	     (abs->tv_nsec - now.tv_nsec);
	if (ns <= 0)
		return 0;
	return (ns + 999999) / 1000000;
}

/* -1 with errno @err, as the semaphore calls answer. */
static int fail_with(int err)
{
	errno = err;
	return -1;
}

/* ---- locks: mutexes, rwlocks, spin locks ---- */

/*
 * Take the lock of @key, waiting at most until @abs on @clock (NULL: for
 * ever; @try: not at all).  *@depth counts the holder's recursive takes
 * when @recursive; a thread that holds the lock already gets EDEADLK
 * (EBUSY with @try) otherwise.  0 or an errno.
 */
static int lock_take(const void *obj, uint32_t *depth, bool recursive,
		     bool try, clockid_t clock, const struct timespec *abs)
{
	uint64_t key = shim_key(obj);
	int64_t ms = 0;
	int ret;

	if (abs) {
		ms = ms_until(clock, abs);
		if (ms < 0)
			return EINVAL;
		try = !ms;
		if (ms > UINT_MAX)
			ms = 0;		/* beyond 49 days: for ever */
	}
	ret = try ? sdsm_trylock(key) : sdsm_lock_timeout(key, ms);
	if (!ret) {
		/* 0 already, but for a holder that died: no write otherwise. */
		if (*depth)
			*depth = 0;
		return 0;
	}
	ret = errno;
	if (ret == EDEADLK && recursive) {
		if (*depth == UINT32_MAX)
			return EAGAIN;
		++*depth;
		return 0;
	}
	if (try && (ret == EBUSY || ret == EDEADLK))
		return abs ? ETIMEDOUT : EBUSY;
	return ret;
}

/*
 * Give back one take: EPERM if this thread does not hold it.  A depth is
 * only the holder's to change: the module tells who holds the lock (a
 * TRY of its holder answers EDEADLK).
 */
static int lock_give(const void *obj, uint32_t *depth)
{
	uint64_t key = shim_key(obj);

	if (*depth) {
		if (!sdsm_trylock(key)) {
			sdsm_unlock(key);	/* it was free: not ours */
			return EPERM;
		}
		if (errno != EDEADLK)
			return EPERM;
		--*depth;
		return 0;
	}
	return sdsm_unlock(key) ? errno : 0;
}

/* A lock that is never taken twice by its holder (depth always 0). */
static int plain_take(const void *obj, bool try)
{
	uint32_t depth = 0;

	return lock_take(obj, &depth, false, try, 0, NULL);
}

static int plain_give(const void *obj)
{
	uint32_t depth = 0;

	return lock_give(obj, &depth);
}

static bool recursive(const pthread_mutex_t *m)
{
	return (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE;
}

/* The depth of a recursive mutex: its glibc count, never used here. */
static uint32_t *depth_of(pthread_mutex_t *m)
{
	return (uint32_t *)&m->__data.__count;
}

/*
 * resolve_NAME(): glibc's NAME, looked up once (threads that race store
 * the same pointer).
 */
#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	static ret (*resolve_##name(void))(__VA_ARGS__)			\
	{								\
		ret (*f)(__VA_ARGS__) = __atomic_load_n(&real_##name,	\
						__ATOMIC_RELAXED);	\
		if (!f) {						\
			f = dlsym(RTLD_NEXT, #name);			\
			__atomic_store_n(&real_##name, f,		\
					 __ATOMIC_RELAXED);		\
		}							\
		return f;						\
	}

REAL(int, pthread_mutex_lock, pthread_mutex_t *)
REAL(int, pthread_mutex_trylock, pthread_mutex_t *)
REAL(int, pthread_mutex_unlock, pthread_mutex_t *)
REAL(int, pthread_mutex_timedlock, pthread_mutex_t *, const struct timespec *)
REAL(int, pthread_mutex_clocklock, pthread_mutex_t *, clockid_t,
     const struct timespec *)

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (!rc_object(m))
		return resolve_pthread_mutex_lock()(m);
	return lock_take(m, depth_of(m), recursive(m), false, 0, NULL);
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (!rc_object(m))
		return resolve_pthread_mutex_trylock()(m);
	return lock_take(m, depth_of(m), recursive(m), true, 0, NULL);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
				   const struct timespec *abs)
{
	if (!rc_object(m))
		return resolve_pthread_mutex_clocklock()(m, clock, abs);
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return lock_take(m, depth_of(m), recursive(m), false, clock, abs);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m,
				   const struct timespec *abs)
{
	if (!rc_object(m))
		return resolve_pthread_mutex_timedlock()(m, abs);
	return lock_take(m, depth_of(m), recursive(m), false, CLOCK_REALTIME,
			 abs);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (!rc_object(m))
		return resolve_pthread_mutex_unlock()(m);
	return lock_give(m, depth_of(m));
}

/*
 * An rwlock is held exclusively; a reader that takes it again counts in
 * its first word (glibc's reader count, which is 0 in every initializer).
 */
static uint32_t *rw_depth(pthread_rwlock_t *rw)
{
	return (uint32_t *)rw;
}

REAL(int, pthread_rwlock_rdlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_tryrdlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_timedrdlock, pthread_rwlock_t *,
     const struct timespec *)
REAL(int, pthread_rwlock_clockrdlock, pthread_rwlock_t *, clockid_t,
     const struct timespec *)
REAL(int, pthread_rwlock_wrlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_trywrlock, pthread_rwlock_t *)
REAL(int, pthread_rwlock_timedwrlock, pthread_rwlock_t *,
     const struct timespec *)
REAL(int, pthread_rwlock_clockwrlock, pthread_rwlock_t *, clockid_t,
     const struct timespec *)
REAL(int, pthread_rwlock_unlock, pthread_rwlock_t *)

#define RWLOCK(name, reader, try, clock, abs, params, ...)		\
	EXPORT int name params						\
	{								\
		if (!rc_object(rw))					\
			return resolve_##name()(__VA_ARGS__);		\
		return lock_take(rw, rw_depth(rw), reader, try, clock, abs); \
	}

RWLOCK(pthread_rwlock_rdlock, true, false, 0, NULL,
       (pthread_rwlock_t *rw), rw)
RWLOCK(pthread_rwlock_tryrdlock, true, true, 0, NULL,
       (pthread_rwlock_t *rw), rw)
RWLOCK(pthread_rwlock_timedrdlock, true, false, CLOCK_REALTIME, abs,
       (pthread_rwlock_t *rw, const struct timespec *abs), rw, abs)
RWLOCK(pthread_rwlock_clockrdlock, true, false, clock, abs,
       (pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs),
       rw, clock, abs)
RWLOCK(pthread_rwlock_wrlock, false, false, 0, NULL,
       (pthread_rwlock_t *rw), rw)
RWLOCK(pthread_rwlock_trywrlock, false, true, 0, NULL,
       (pthread_rwlock_t *rw), rw)
RWLOCK(pthread_rwlock_timedwrlock, false, false, CLOCK_REALTIME, abs,
       (pthread_rwlock_t *rw, const struct timespec *abs), rw, abs)
RWLOCK(pthread_rwlock_clockwrlock, false, false, clock, abs,
       (pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs),
       rw, clock, abs)

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	if (!rc_object(rw))
		return resolve_pthread_rwlock_unlock()(rw);
	return lock_give(rw, rw_depth(rw));
}

REAL(int, pthread_spin_lock, pthread_spinlock_t *)
REAL(int, pthread_spin_trylock, pthread_spinlock_t *)
REAL(int, pthread_spin_unlock, pthread_spinlock_t *)

/*
 * A spin lock sleeps: nothing spins over the network.  pthread_spinlock_t
 * is volatile: the lock is only its address here.
 */
#define SPIN(s)		((const void *)(uintptr_t)(s))

EXPORT int pthread_spin_lock(pthread_spinlock_t *s)
{
	if (!rc_object(SPIN(s)))
		return resolve_pthread_spin_lock()(s);
	return plain_take(SPIN(s), false);
}

EXPORT int pthread_spin_trylock(pthread_spinlock_t *s)
{
	if (!rc_object(SPIN(s)))
		return resolve_pthread_spin_trylock()(s);
	return plain_take(SPIN(s), true);
}

EXPORT int pthread_spin_unlock(pthread_spinlock_t *s)
{
	if (!rc_object(SPIN(s)))
		return resolve_pthread_spin_unlock()(s);
	return plain_give(SPIN(s));
}

/* ---- condition variables ---- */

/*
 * The lock a condvar wait gives back and takes again: a cluster lock
 * (@obj, its recursion *@depth kept aside meanwhile), or a glibc mutex
 * outside job memory (@m).
 */
struct held {
	const void *obj;
	uint32_t *depth;
	uint32_t saved;
	pthread_mutex_t *m;
};

static int held_give(void *arg)
{
	struct held *h = arg;
	int err;

	if (h->m) {
		err = resolve_pthread_mutex_unlock()(h->m);
	} else {
		h->saved = *h->depth;
		if (h->saved)
			*h->depth = 0;
		err = lock_give(h->obj, h->depth);
		if (err && h->saved)
			*h->depth = h->saved;
	}
	return err ? fail_with(err) : 0;
}

static int held_take(void *arg)
{
	struct held *h = arg;
	int err;

	if (h->m) {
		err = resolve_pthread_mutex_lock()(h->m);
	} else {
		err = lock_take(h->obj, h->depth, false, false, 0, NULL);
		if (!err && h->saved)
			*h->depth = h->saved;
	}
	return err ? fail_with(err) : 0;
}

/*
 * Wait on @word with the lock @h held, until a wake-up, @abs on @clock
 * (NULL: none) or SLICE_MS, whichever is first; the lock is held again
 * on return.  0 (a wake-up, maybe spurious), ETIMEDOUT (@abs passed) or
 * an errno.
 */
static int word_wait(struct sdsm_cond *word, struct held *h, clockid_t clock,
		     const struct timespec *abs)
{
	int64_t ms = SLICE_MS;
	int err = 0;

	if (abs) {
		ms = ms_until(clock, abs);
		if (ms < 0)
			return EINVAL;
		if (!ms)
			return ETIMEDOUT;
		if (ms > SLICE_MS)
			ms = SLICE_MS;
	}
	if (sdsm_cond_wait_on(word, held_give, held_take, h, ms))
		err = errno;
	if (err == EPERM)
		return EPERM;	/* the caller did not hold the lock */
	if (err && err != ETIMEDOUT && err != EINTR)
		return err;
	if (abs && !ms_until(clock, abs))
		return ETIMEDOUT;
	return 0;
}

/*
 * A condvar in job memory with a mutex of the job, or of a library.  A
 * cancellation pending acts after the wait, the mutex held again, as in
 * glibc's pthread_cond_wait().
 */
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct timespec *abs)
{
	struct held h = { .obj = m, .depth = depth_of(m) };
	int err;

	if (!rc_object(m))
		h.m = m;
	err = word_wait(cond_word(c), &h, clock, abs);
	pthread_testcancel();
	return err;
}

/* The clock of pthread_condattr_setclock(): bit 1 of glibc's __wrefs. */
static clockid_t cond_clock(const pthread_cond_t *c)
{
	return c->__data.__wrefs & 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* glibc's condvars of 2.3.2, not the old ones dlsym() may find. */
#define REAL_COND(ret, name, ...)					\
	static ret (*real_##name)(__VA_ARGS__);				\
	static ret (*resolve_##name(void))(__VA_ARGS__)			\
	{								\
		ret (*f)(__VA_ARGS__) = __atomic_load_n(&real_##name,	\
						__ATOMIC_RELAXED);	\
		if (!f) {						\
			f = dlvsym(RTLD_NEXT, #name, "GLIBC_2.3.2");	\
			if (!f)						\
				f = dlsym(RTLD_NEXT, #name);		\
			__atomic_store_n(&real_##name, f,		\
					 __ATOMIC_RELAXED);		\
		}							\
		return f;						\
	}

REAL_COND(int, pthread_cond_wait, pthread_cond_t *, pthread_mutex_t *)
REAL_COND(int, pthread_cond_timedwait, pthread_cond_t *, pthread_mutex_t *,
	  const struct timespec *)
REAL_COND(int, pthread_cond_signal, pthread_cond_t *)
REAL_COND(int, pthread_cond_broadcast, pthread_cond_t *)
REAL(int, pthread_cond_clockwait, pthread_cond_t *, pthread_mutex_t *,
     clockid_t, const struct timespec *)

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (!rc_object(c))
		return resolve_pthread_cond_wait()(c, m);
	return cond_wait(c, m, 0, NULL);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abs)
{
	if (!rc_object(c))
		return resolve_pthread_cond_timedwait()(c, m, abs);
	return cond_wait(c, m, cond_clock(c), abs);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clock, const struct timespec *abs)
{
	if (!rc_object(c))
		return resolve_pthread_cond_clockwait()(c, m, clock, abs);
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return cond_wait(c, m, clock, abs);
}

static int word_wake(const void *obj)
{
	return sdsm_cond_broadcast(cond_word(obj)) ? errno : 0;
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	if (!rc_object(c))
		return resolve_pthread_cond_signal()(c);
	return word_wake(c);
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	if (!rc_object(c))
		return resolve_pthread_cond_broadcast()(c);
	return word_wake(c);
}

/* ---- barriers ---- */

/* The nodes of the job: its threads' and main()'s (the launcher's). */
static uint64_t job_nodes(void)
{
	return shim_job->nodemask | 1ULL << shim_job->launcher;
}

/*
 * Is @b a barrier the cluster's barrier serves?  In a job of release
 * consistency every barrier in the job's memory (the arrival must be a
 * release); in a sequential job that spans several nodes too: one round
 * trip to the barrier's manager per thread, where glibc's barrier moves
 * its page from node to node with each atomic and sleeps and wakes
 * through the distributed futex.  Documentation/preload.rst,
 * "Synchronization: glibc's own, over the distributed futex".
 */
static bool cluster_barrier(const void *b)
{
	uint64_t nodes;

	if (!sdsm_shim_role || !shim_job || !shim_job_mem(b))
		return false;
	nodes = job_nodes();
	return rc_job() || (nodes & (nodes - 1));
}

/*
 * What pthread_barrier_init() keeps in a barrier the cluster serves: its
 * slot of shim_job->barriers[], or BARRIER_NO_SLOT where the module names
 * the serial arrival (then nothing limits the number of barriers).  The
 * magic lies past glibc's own fields (20 bytes), which its
 * pthread_barrier_init() writes and nothing past them, so a sequential
 * job's barrier that glibc serves (no slot was free) keeps a magic of 0.
 */
struct rc_barrier {
	uint32_t count;
	uint32_t slot;
	uint32_t unused[4];
	uint32_t magic;
};

#define RC_BARRIER_MAGIC	0x5d5b4172u
#define BARRIER_NO_SLOT		UINT32_MAX

_Static_assert(sizeof(struct rc_barrier) <= sizeof(pthread_barrier_t),
	       "rc_barrier size");
_Static_assert(offsetof(struct rc_barrier, magic) >= 5 * sizeof(uint32_t),
	       "rc_barrier magic inside glibc's fields");

/*
 * Does the cluster serve the barrier @b that pthread_barrier_init() made?
 * In a sequential job glibc does when init found no slot free.
 */
static bool cluster_barrier_inited(const void *b)
{
	return cluster_barrier(b) &&
	       (rc_job() ||
		((const struct rc_barrier *)b)->magic == RC_BARRIER_MAGIC);
}

REAL(int, pthread_barrier_init, pthread_barrier_t *,
     const pthread_barrierattr_t *, unsigned int)
REAL(int, pthread_barrier_destroy, pthread_barrier_t *)
REAL(int, pthread_barrier_wait, pthread_barrier_t *)

/* Claim a slot of shim_job->barriers[] for @key (again, if it has one). */
static int barrier_slot(uint64_t key)
{
	unsigned int i, k = shim_hash(key) >> 32;
	struct shim_barrier_slot *s;
	uint64_t old;

	for (i = 0; i < SHIM_BARRIERS; i++) {
		s = &shim_job->barriers[(k + i) % SHIM_BARRIERS];
		old = 0;
		if (__atomic_load_n(&s->key, __ATOMIC_SEQ_CST) == key ||
		    __atomic_compare_exchange_n(&s->key, &old, key, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			__atomic_store_n(&s->arrivals, 0, __ATOMIC_SEQ_CST);
			return s - shim_job->barriers;
		}
	}
	return -1;
}

EXPORT int pthread_barrier_init(pthread_barrier_t *b,
				const pthread_barrierattr_t *attr,
				unsigned int count)
{
	struct rc_barrier *rb = (struct rc_barrier *)b;
	int slot, ret;

	if (!cluster_barrier(b))
		return resolve_pthread_barrier_init()(b, attr, count);
	if (!count)
		return EINVAL;
	/* The module names the serial arrival: no slot to count in. */
	if (sdsm_has_feature(SDSM_FEATURE_BARRIER_SERIAL) == 1) {
		rb->count = count;
		rb->slot = BARRIER_NO_SLOT;
		rb->magic = RC_BARRIER_MAGIC;
		return 0;
	}
	slot = barrier_slot(shim_key(b));
	if (slot < 0 && !rc_job()) {
		/* Sequential memory: glibc's barrier works, only slower. */
		ret = resolve_pthread_barrier_init()(b, attr, count);
		rb->magic = 0;
		return ret;
	}
	if (slot < 0) {
		shim_say("pthread_barrier_init(): more than %d barriers at once in a job of release consistency",
			 SHIM_BARRIERS);
		return EAGAIN;
	}
	rb->count = count;
	rb->slot = slot;
	rb->magic = RC_BARRIER_MAGIC;
	return 0;
}

EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	struct rc_barrier *rb = (struct rc_barrier *)b;
	uint64_t key;

	if (!cluster_barrier_inited(b))
		return resolve_pthread_barrier_destroy()(b);
	if (rb->slot != BARRIER_NO_SLOT) {
		if (rb->slot >= SHIM_BARRIERS)
			return EINVAL;
		key = shim_key(b);
		__atomic_compare_exchange_n(&shim_job->barriers[rb->slot].key,
					    &key, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	}
	rb->magic = 0;
	return 0;
}

EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	struct rc_barrier *rb = (struct rc_barrier *)b;
	uint64_t mask, n = 0;
	uint32_t out = 0;
	bool named;
	int ret;

	if (!cluster_barrier_inited(b))
		return resolve_pthread_barrier_wait()(b);
	named = rb->slot == BARRIER_NO_SLOT;
	if (!rb->count || (rb->slot >= SHIM_BARRIERS && !named))
		return EINVAL;
	mask = job_nodes();
	if (!named)
		n = __atomic_fetch_add(&shim_job->barriers[rb->slot].arrivals,
				       1, __ATOMIC_SEQ_CST);
	/* A signal withdraws the arrival (the module says): arrive again. */
	do {
		ret = sdsm_barrier_out(shim_key(b), rb->count, mask, 0, &out);
	} while (ret && errno == EINTR);
	if (ret)
		return errno;
	if (named)
		return out & SDSM_BARRIER_OUT_SERIAL ?
		       PTHREAD_BARRIER_SERIAL_THREAD : 0;
	return n % rb->count == rb->count - 1 ? PTHREAD_BARRIER_SERIAL_THREAD :
						 0;
}

/* ---- unnamed semaphores and pthread_once ---- */

struct rc_sem {
	uint32_t value;
};

_Static_assert(sizeof(struct rc_sem) <= sizeof(sem_t), "rc_sem size");

REAL(int, sem_init, sem_t *, int, unsigned int)
REAL(int, sem_destroy, sem_t *)
REAL(int, sem_post, sem_t *)
REAL(int, sem_wait, sem_t *)
REAL(int, sem_trywait, sem_t *)
REAL(int, sem_timedwait, sem_t *, const struct timespec *)
REAL(int, sem_clockwait, sem_t *, clockid_t, const struct timespec *)
REAL(int, sem_getvalue, sem_t *, int *)

EXPORT int sem_init(sem_t *s, int pshared, unsigned int value)
{
	struct rc_sem *rs = (struct rc_sem *)s;

	if (!rc_object(s))
		return resolve_sem_init()(s, pshared, value);
	if (value > SEM_VALUE_MAX)
		return fail_with(EINVAL);
	rs->value = value;
	return 0;
}

EXPORT int sem_destroy(sem_t *s)
{
	if (!rc_object(s))
		return resolve_sem_destroy()(s);
	return 0;
}

EXPORT int sem_post(sem_t *s)
{
	struct rc_sem *rs = (struct rc_sem *)s;
	int err;

	if (!rc_object(s))
		return resolve_sem_post()(s);
	err = plain_take(s, false);
	if (err)
		return fail_with(err);
	if (rs->value == SEM_VALUE_MAX) {
		plain_give(s);
		return fail_with(EOVERFLOW);
	}
	rs->value++;
	err = plain_give(s);
	if (!err)
		err = word_wake(s);
	return err ? fail_with(err) : 0;
}

/*
 * Take one from @s, waiting (unless @try) until @abs on @clock (NULL: for
 * ever).  A cancellation point, where the semaphore's lock is not held.
 */
static int sem_take(sem_t *s, bool try, clockid_t clock,
		    const struct timespec *abs)
{
	struct rc_sem *rs = (struct rc_sem *)s;
	uint32_t depth = 0;
	struct held h = { .obj = s, .depth = &depth };
	int err;

	pthread_testcancel();
	err = plain_take(s, false);
	if (err)
		return fail_with(err);
	while (!rs->value && !err) {
		if (try) {
			err = EAGAIN;
			break;
		}
		err = word_wait(cond_word(s), &h, clock, abs);
		if (err == EPERM)
			return fail_with(err);	/* the lock is not held */
		if (!err && !rs->value) {
			plain_give(s);
			pthread_testcancel();
			err = plain_take(s, false);
			if (err)
				return fail_with(err);
		}
	}
	if (!err)
		rs->value--;
	plain_give(s);
	return err ? fail_with(err) : 0;
}

EXPORT int sem_wait(sem_t *s)
{
	if (!rc_object(s))
		return resolve_sem_wait()(s);
	return sem_take(s, false, 0, NULL);
}

EXPORT int sem_trywait(sem_t *s)
{
	if (!rc_object(s))
		return resolve_sem_trywait()(s);
	return sem_take(s, true, 0, NULL);
}

EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs)
{
	if (!rc_object(s))
		return resolve_sem_timedwait()(s, abs);
	return sem_take(s, false, CLOCK_REALTIME, abs);
}

EXPORT int sem_clockwait(sem_t *s, clockid_t clock,
			 const struct timespec *abs)
{
	if (!rc_object(s))
		return resolve_sem_clockwait()(s, clock, abs);
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return fail_with(EINVAL);
	return sem_take(s, false, clock, abs);
}

EXPORT int sem_getvalue(sem_t *s, int *value)
{
	struct rc_sem *rs = (struct rc_sem *)s;
	int err;

	if (!rc_object(s))
		return resolve_sem_getvalue()(s, value);
	err = plain_take(s, false);
	if (err)
		return fail_with(err);
	*value = rs->value;
	plain_give(s);
	return 0;
}

REAL(int, pthread_once, pthread_once_t *, void (*)(void))

/* Gives the once's lock back when its routine is cancelled. */
static void once_cancelled(void *once)
{
	plain_give(once);
}

EXPORT int pthread_once(pthread_once_t *once, void (*fn)(void))
{
	int err;

	if (!rc_object(once))
		return resolve_pthread_once()(once, fn);
	/* Always the lock: its grant is what makes fn()'s writes visible. */
	err = plain_take(once, false);
	if (err)
		return err;
	if (*once != ONCE_DONE) {
		pthread_cleanup_push(once_cancelled, once);
		fn();
		pthread_cleanup_pop(0);
		*once = ONCE_DONE;
	}
	return plain_give(once);
}
