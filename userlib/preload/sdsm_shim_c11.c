// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C11 threads (<threads.h>) in a job (sdsmctl -N).  glibc implements
 * thrd_*, mtx_*, cnd_*, tss_* and call_once with its pthread functions,
 * called inside libc where no interposer sees them: a thrd_create() would
 * start its thread on this node only, under release consistency an
 * mtx_lock() would be no acquire, and a tss_create() would make a key of
 * this process only.  So they are interposed too, as the same pthread
 * calls the program would have made, which the job's own interposers
 * (sdsm_shim.c, sdsm_shim_sync.c) then place and synchronize.  Outside a
 * job the thread calls are glibc's own; the others are glibc's either way
 * once they reach the pthread calls.  Documentation/preload.rst,
 * "Threads".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

#include "sdsm_shim.h"

#define EXPORT		__attribute__((visibility("default")))

/* glibc's mapping of a pthread result to a C11 one (thrd_err_map()). */
static int c11_result(int err)
{
	switch (err) {
	case 0:
		return thrd_success;
	case ENOMEM:
		return thrd_nomem;
	case ETIMEDOUT:
		return thrd_timedout;
	case EBUSY:
		return thrd_busy;
	default:
		return thrd_error;
	}
}

/* glibc's own @name, for a call outside a job. */
static void *c11_real(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn)
		abort();	/* a libc without C11 threads loaded us */
	return fn;
}

struct c11_start {
	thrd_start_t fn;
	void *arg;
};

/* A C11 thread's function returns an int: its pthread returns it so. */
static void *c11_trampoline(void *p)
{
	struct c11_start s = *(struct c11_start *)p;

	free(p);
	return (void *)(intptr_t)s.fn(s.arg);
}

EXPORT int thrd_create(thrd_t *thr, thrd_start_t fn, void *arg)
{
	static int (*real)(thrd_t *, thrd_start_t, void *);
	struct c11_start *s;
	int ret;

	if (!sdsm_shim_role) {
		if (!real)
			real = c11_real("thrd_create");
		return real(thr, fn, arg);
	}
	/* Job heap: the thread may start on another node and free it. */
	s = malloc(sizeof(*s));
	if (!s)
		return thrd_nomem;
	s->fn = fn;
	s->arg = arg;
	ret = pthread_create(thr, NULL, c11_trampoline, s);
	if (ret)
		free(s);
	return c11_result(ret);
}

EXPORT int thrd_join(thrd_t thr, int *res)
{
	static int (*real)(thrd_t, int *);
	void *v;
	int ret;

	if (!sdsm_shim_role) {
		if (!real)
			real = c11_real("thrd_join");
		return real(thr, res);
	}
	ret = pthread_join(thr, &v);
	if (!ret && res)
		*res = (int)(intptr_t)v;
	return ret ? thrd_error : thrd_success;
}

EXPORT int thrd_detach(thrd_t thr)
{
	return pthread_detach(thr) ? thrd_error : thrd_success;
}

EXPORT thrd_t thrd_current(void)
{
	return pthread_self();
}

EXPORT int thrd_equal(thrd_t a, thrd_t b)
{
	return pthread_equal(a, b);
}

EXPORT void thrd_exit(int res)
{
	pthread_exit((void *)(intptr_t)res);
}

EXPORT int mtx_init(mtx_t *m, int type)
{
	pthread_mutexattr_t attr;
	int ret;

	pthread_mutexattr_init(&attr);
	switch (type) {
	case mtx_plain | mtx_recursive:
	case mtx_timed | mtx_recursive:
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
		break;
	case mtx_plain:
	case mtx_timed:
		break;
	default:
		return thrd_error;
	}
	ret = pthread_mutex_init((pthread_mutex_t *)m, &attr);
	pthread_mutexattr_destroy(&attr);
	return c11_result(ret);
}

EXPORT int mtx_lock(mtx_t *m)
{
	return c11_result(pthread_mutex_lock((pthread_mutex_t *)m));
}

EXPORT int mtx_trylock(mtx_t *m)
{
	return c11_result(pthread_mutex_trylock((pthread_mutex_t *)m));
}

EXPORT int mtx_timedlock(mtx_t *restrict m,
			 const struct timespec *restrict abs)
{
	return c11_result(pthread_mutex_timedlock((pthread_mutex_t *)m, abs));
}

EXPORT int mtx_unlock(mtx_t *m)
{
	return c11_result(pthread_mutex_unlock((pthread_mutex_t *)m));
}

EXPORT void mtx_destroy(mtx_t *m)
{
	pthread_mutex_destroy((pthread_mutex_t *)m);
}

EXPORT int cnd_init(cnd_t *c)
{
	return c11_result(pthread_cond_init((pthread_cond_t *)c, NULL));
}

EXPORT int cnd_signal(cnd_t *c)
{
	return c11_result(pthread_cond_signal((pthread_cond_t *)c));
}

EXPORT int cnd_broadcast(cnd_t *c)
{
	return c11_result(pthread_cond_broadcast((pthread_cond_t *)c));
}

EXPORT int cnd_wait(cnd_t *c, mtx_t *m)
{
	return c11_result(pthread_cond_wait((pthread_cond_t *)c,
					    (pthread_mutex_t *)m));
}

EXPORT int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m,
			 const struct timespec *restrict abs)
{
	return c11_result(pthread_cond_timedwait((pthread_cond_t *)c,
						 (pthread_mutex_t *)m, abs));
}

EXPORT void cnd_destroy(cnd_t *c)
{
	pthread_cond_destroy((pthread_cond_t *)c);
}

EXPORT void call_once(once_flag *flag, void (*fn)(void))
{
	_Static_assert(sizeof(once_flag) == sizeof(pthread_once_t),
		       "once_flag is glibc's pthread_once_t");
	pthread_once((pthread_once_t *)flag, fn);
}

/* Thread-specific storage: the job's keys when made in a job. */
EXPORT int tss_create(tss_t *key, tss_dtor_t destr)
{
	_Static_assert(sizeof(tss_t) == sizeof(pthread_key_t),
		       "tss_t is glibc's pthread_key_t");
	return c11_result(pthread_key_create((pthread_key_t *)key, destr));
}

EXPORT void *tss_get(tss_t key)
{
	return pthread_getspecific(key);
}

EXPORT int tss_set(tss_t key, void *val)
{
	return c11_result(pthread_setspecific(key, val));
}

EXPORT void tss_delete(tss_t key)
{
	pthread_key_delete(key);
}
