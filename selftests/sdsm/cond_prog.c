// SPDX-License-Identifier: GPL-2.0
/*
 * cond_prog - a bounded queue shared by nodes, on libsdsm's cluster locks
 * and condition variables (sync_tests.sh condvar_queue; linked with
 * libsdsm).  The queue is one page of the default region (mmap offset 0
 * of /dev/sdsm) at page-aligned offset OFF.
 *
 *   cond_prog init OFF
 *   cond_prog produce OFF LOCK THREADS ITEMS
 *	THREADS threads each put ITEMS items (values node * 10^6 +
 *	thread * 10^4 + i, i from 1), waiting while the queue is full
 *   cond_prog consume OFF LOCK THREADS TOTAL
 *	THREADS threads take items, waiting while it is empty, until TOTAL
 *	items were taken by all consumers of every node
 *   cond_prog show OFF
 *	prints "taken N sum S"
 *
 * The threads of one process share its lock ids: a lock is owned by the
 * thread that took it.  Every wait is bounded (60 s): a lost wake-up
 * fails the program (exit 1) instead of hanging it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sdsm.h>

#define QLEN		4
#define WAIT_MS		60000

struct queue {
	struct sdsm_cond nonempty, nonfull;
	uint32_t put, taken;		/* items in, items out */
	uint64_t slot[QLEN];
	uint64_t sum;			/* of the items taken */
	uint32_t waits;			/* waits that slept (any side) */
};

static struct queue *q;
static uint64_t lock_id;
static long items, total;
static int node;

static void die(const char *what)
{
	fprintf(stderr, "cond_prog: %s: %s (%s)\n", what, strerror(errno),
		sdsm_last_error());
	exit(1);
}

static void wait_on(struct sdsm_cond *c)
{
	__atomic_add_fetch(&q->waits, 1, __ATOMIC_RELAXED);
	if (sdsm_cond_timedwait(c, lock_id, WAIT_MS))
		die("sdsm_cond_timedwait");
}

static void *producer(void *arg)
{
	long t = (long)arg, i;

	for (i = 1; i <= items; i++) {
		if (sdsm_lock(lock_id))
			die("sdsm_lock");
		while (q->put - q->taken == QLEN)
			wait_on(&q->nonfull);
		q->slot[q->put % QLEN] = node * 1000000L + t * 10000 + i;
		q->put++;
		if (sdsm_cond_signal(&q->nonempty))
			die("sdsm_cond_signal");
		if (sdsm_unlock(lock_id))
			die("sdsm_unlock");
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long mine = 0;

	(void)arg;
	for (;;) {
		if (sdsm_lock(lock_id))
			die("sdsm_lock");
		while (q->put == q->taken && q->taken < total)
			wait_on(&q->nonempty);
		if (q->taken == total) {
			/* The last item is gone: wake every other consumer. */
			if (sdsm_cond_broadcast(&q->nonempty))
				die("sdsm_cond_broadcast");
			if (sdsm_unlock(lock_id))
				die("sdsm_unlock");
			return (void *)mine;
		}
		q->sum += q->slot[q->taken % QLEN];
		q->taken++;
		mine++;
		if (sdsm_cond_signal(&q->nonfull))
			die("sdsm_cond_signal");
		if (sdsm_unlock(lock_id))
			die("sdsm_unlock");
	}
}

int main(int argc, char **argv)
{
	void *(*fn)(void *) = NULL;
	pthread_t tids[16];
	long nt = 0, i, n = 0;
	unsigned long long off;
	void *ret;

	if (argc < 3)
		goto usage;
	off = strtoull(argv[2], NULL, 0);
	if (off & 4095)
		goto usage;
	node = sdsm_node_id();
	if (node < 0)
		die("sdsm_node_id");
	q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sdsm_fd(),
		 off);
	if (q == MAP_FAILED)
		die("mmap /dev/sdsm");
	if (!strcmp(argv[1], "init") && argc == 3) {
		memset(q, 0, sizeof(*q));
		return 0;
	}
	if (!strcmp(argv[1], "show") && argc == 3) {
		printf("taken %u sum %llu waits %u\n", q->taken,
		       (unsigned long long)q->sum, q->waits);
		return 0;
	}
	if (argc != 6)
		goto usage;
	lock_id = strtoull(argv[3], NULL, 0);
	nt = atol(argv[4]);
	if (nt < 1 || nt > 16)
		goto usage;
	if (!strcmp(argv[1], "produce")) {
		fn = producer;
		items = atol(argv[5]);
	} else if (!strcmp(argv[1], "consume")) {
		fn = consumer;
		total = atol(argv[5]);
	} else {
		goto usage;
	}
	for (i = 0; i < nt; i++)
		if (pthread_create(&tids[i], NULL, fn, (void *)i))
			die("pthread_create");
	for (i = 0; i < nt; i++) {
		pthread_join(tids[i], &ret);
		n += (long)ret;
	}
	if (fn == consumer)
		printf("node %d took %ld\n", node, n);
	return 0;
usage:
	fprintf(stderr, "usage: cond_prog init|show OFF | produce OFF LOCK THREADS ITEMS | consume OFF LOCK THREADS TOTAL\n");
	return 2;
}
