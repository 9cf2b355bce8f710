// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm cluster locks and barriers over SDSM_IOC_LOCK / SDSM_IOC_BARRIER,
 * and the distributed futex over SDSM_IOC_FUTEX.
 *
 * Locks are held by the thread that took them (through the library's file
 * of /dev/sdsm, which every thread of the process shares); they are all
 * released when the process exits.
 * sdsm_lock() and sdsm_lock_timeout() restart after a signal (with the time
 * left), as pthread_mutex_lock() never returns EINTR; a barrier arrival is
 * not restarted because it cannot be taken back.  sdsm_futex_wait() is
 * not restarted either: as with futex(2), the caller re-checks its
 * condition and calls again.
 *
 * Condition variables (struct sdsm_cond, in sdsm memory) are a sequence
 * word and a count of waiters on top of the lock and the futex.  A waiter
 * counts itself, reads the sequence, releases the lock and waits on the
 * futex for the sequence to move; a signal moves it and wakes only if
 * someone counted itself.  No wake-up is lost: with every access
 * sequentially consistent, a signal that moved the sequence after the
 * waiter read it also saw the waiter's count, and the futex wait of a
 * waiter whose value is already stale returns at once.  A signal may
 * wake a waiter that came after it (waiters are woken oldest first), and
 * a wait may return without a signal: callers re-check their predicate,
 * as with pthread_cond_wait().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "sdsm_internal.h"

static int sdsm_lock_op(uint64_t lock_id, unsigned int op,
			unsigned int timeout_ms)
{
	struct sdsm_lock l;

	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.op = op;
	l.timeout_ms = timeout_ms;
	l.lock_id = lock_id;
	return sdsm_dev_ioctl(SDSM_IOC_LOCK, &l, SDSM_FEATURE_LOCKS,
			      op == SDSM_LOCK_ACQUIRE ? "lock" :
			      op == SDSM_LOCK_TRY ? "trylock" : "unlock");
}

static uint64_t sdsm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sdsm_lock_timeout(uint64_t lock_id, unsigned int timeout_ms)
{
	uint64_t end = sdsm_now_ms() + timeout_ms;
	unsigned int left = timeout_ms;

	for (;;) {
		uint64_t now;

		if (sdsm_lock_op(lock_id, SDSM_LOCK_ACQUIRE, left) == 0)
			return 0;
		if (errno != EINTR)
			return -1;
		if (!timeout_ms)
			continue;
		now = sdsm_now_ms();
		if (now >= end)
			return sdsm_fail(ETIMEDOUT, "lock: timed out after %u ms",
					 timeout_ms);
		left = end - now;
	}
}

int sdsm_lock(uint64_t lock_id)
{
	return sdsm_lock_timeout(lock_id, 0);
}

int sdsm_trylock(uint64_t lock_id)
{
	return sdsm_lock_op(lock_id, SDSM_LOCK_TRY, 0);
}

int sdsm_unlock(uint64_t lock_id)
{
	return sdsm_lock_op(lock_id, SDSM_LOCK_RELEASE, 0);
}

int sdsm_barrier_out(uint64_t barrier_id, unsigned int count,
		     uint64_t nodemask, unsigned int timeout_ms,
		     uint32_t *out_flags)
{
	struct sdsm_barrier b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.count = count;
	b.timeout_ms = timeout_ms;
	b.barrier_id = barrier_id;
	b.nodemask = nodemask;
	ret = sdsm_dev_ioctl(SDSM_IOC_BARRIER, &b, SDSM_FEATURE_BARRIERS,
			     "barrier");
	if (out_flags)
		*out_flags = ret ? 0 : b.out_flags;
	return ret;
}

int sdsm_barrier(uint64_t barrier_id, unsigned int count, uint64_t nodemask,
		 unsigned int timeout_ms)
{
	return sdsm_barrier_out(barrier_id, count, nodemask, timeout_ms, NULL);
}

int sdsm_futex_wait(const uint32_t *addr, uint32_t val, int64_t timeout_ns)
{
	struct sdsm_futex f;

	sdsm_futex_req(&f, SDSM_FUTEX_WAIT, addr, val, timeout_ns);
	return sdsm_dev_ioctl(SDSM_IOC_FUTEX, &f, SDSM_FEATURE_FUTEX,
			      "futex wait");
}

int sdsm_futex_wake(const uint32_t *addr, unsigned int n)
{
	struct sdsm_futex f;

	sdsm_futex_req(&f, SDSM_FUTEX_WAKE, addr, n, -1);
	if (sdsm_dev_ioctl(SDSM_IOC_FUTEX, &f, SDSM_FEATURE_FUTEX,
			   "futex wake"))
		return -1;
	return f.woken > INT_MAX ? INT_MAX : (int)f.woken;
}

/*
 * Wait on @cond with a lock held that @unlock and @lock give back and
 * take again (each 0, or -1 with errno), at most @timeout_ms (0: no
 * limit).  The lock is held again on return, unless @unlock failed.
 */
int sdsm_cond_wait_on(struct sdsm_cond *cond, int (*unlock)(void *),
		      int (*lock)(void *), void *arg, unsigned int timeout_ms)
{
	int64_t ns = timeout_ms ? (int64_t)timeout_ms * 1000000 : -1;
	uint32_t seq;
	int err = 0;

	__atomic_add_fetch(&cond->waiters, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&cond->seq, __ATOMIC_SEQ_CST);
	if (unlock(arg)) {
		__atomic_sub_fetch(&cond->waiters, 1, __ATOMIC_SEQ_CST);
		return -1;
	}
	/* EAGAIN: signalled since; EINTR: a spurious wake-up, allowed. */
	if (sdsm_futex_wait(&cond->seq, seq, ns) && errno != EAGAIN &&
	    errno != EINTR)
		err = errno;
	__atomic_sub_fetch(&cond->waiters, 1, __ATOMIC_SEQ_CST);
	/* The lock is taken again in every case, as pthread_cond_wait(). */
	if (lock(arg))
		return -1;
	if (err == ETIMEDOUT)
		return sdsm_fail(ETIMEDOUT, "cond wait: timed out after %u ms",
				 timeout_ms);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static int sdsm_cond_unlock(void *lock_id)
{
	return sdsm_unlock(*(uint64_t *)lock_id);
}

static int sdsm_cond_lock(void *lock_id)
{
	return sdsm_lock(*(uint64_t *)lock_id);
}

int sdsm_cond_timedwait(struct sdsm_cond *cond, uint64_t lock_id,
			unsigned int timeout_ms)
{
	return sdsm_cond_wait_on(cond, sdsm_cond_unlock, sdsm_cond_lock,
				 &lock_id, timeout_ms);
}

int sdsm_cond_wait(struct sdsm_cond *cond, uint64_t lock_id)
{
	return sdsm_cond_timedwait(cond, lock_id, 0);
}

static int sdsm_cond_wake(struct sdsm_cond *cond, unsigned int n)
{
	__atomic_add_fetch(&cond->seq, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&cond->waiters, __ATOMIC_SEQ_CST))
		return 0;
	return sdsm_futex_wake(&cond->seq, n) < 0 ? -1 : 0;
}

int sdsm_cond_signal(struct sdsm_cond *cond)
{
	return sdsm_cond_wake(cond, 1);
}

int sdsm_cond_broadcast(struct sdsm_cond *cond)
{
	return sdsm_cond_wake(cond, INT_MAX);
}
