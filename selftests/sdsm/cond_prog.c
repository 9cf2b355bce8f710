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
 *   cond_prog show OFF LOCK
 *	prints "taken N sum S waits W", read under LOCK
 *   cond_prog destroy
 *	destroys the region named by COND_DATA (below)
 *
 * With COND_DATA=NAME in the environment, the queue's data (everything
 * but the two condition variables) is in a release-consistent region of
 * that name, one page, created by the first program that needs it: the
 * cluster lock orders it (Documentation/protocol.rst, "Release
 * consistency"), while the condition variables, atomics and a futex,
 * stay in the sequential default region.
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

struct queue_data {
	uint32_t put, taken;		/* items in, items out */
	uint64_t slot[QLEN];
	uint64_t sum;			/* of the items taken */
	uint32_t waits;			/* waits that slept (any side) */
};

struct queue {
	struct sdsm_cond nonempty, nonfull;
	struct queue_data data;		/* unless COND_DATA names a region */
};

static struct queue *q;
static struct queue_data *d;
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
	/* Under the lock: an increment release memory orders too. */
	d->waits++;
	if (sdsm_cond_timedwait(c, lock_id, WAIT_MS))
		die("sdsm_cond_timedwait");
}

static void *producer(void *arg)
{
	long t = (long)arg, i;

	for (i = 1; i <= items; i++) {
		if (sdsm_lock(lock_id))
			die("sdsm_lock");
		while (d->put - d->taken == QLEN)
			wait_on(&q->nonfull);
		d->slot[d->put % QLEN] = node * 1000000L + t * 10000 + i;
		d->put++;
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
		while (d->put == d->taken && d->taken < total)
			wait_on(&q->nonempty);
		if (d->taken == total) {
			/* The last item is gone: wake every other consumer. */
			if (sdsm_cond_broadcast(&q->nonempty))
				die("sdsm_cond_broadcast");
			if (sdsm_unlock(lock_id))
				die("sdsm_unlock");
			return (void *)mine;
		}
		d->sum += d->slot[d->taken % QLEN];
		d->taken++;
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

	const char *data_name = getenv("COND_DATA");

	if (argc == 2 && !strcmp(argv[1], "destroy") && data_name) {
		if (sdsm_region_destroy(data_name))
			die("sdsm_region_destroy");
		return 0;
	}
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
	d = &q->data;
	if (data_name && data_name[0]) {
		/* A new region starts zeroed: init has nothing to clear. */
		d = sdsm_region_create(data_name, 4096, NULL,
				       SDSM_REGION_F_RELEASE);
		if (!d)
			die("sdsm_region_create");
	}
	if (!strcmp(argv[1], "init") && argc == 3) {
		memset(q, 0, sizeof(*q));
		return 0;
	}
	if (!strcmp(argv[1], "show") && argc == 4) {
		lock_id = strtoull(argv[3], NULL, 0);
		if (sdsm_lock(lock_id))
			die("sdsm_lock");
		printf("taken %u sum %llu waits %u\n", d->taken,
		       (unsigned long long)d->sum, d->waits);
		if (sdsm_unlock(lock_id))
			die("sdsm_unlock");
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
	fprintf(stderr, "usage: cond_prog init OFF | show OFF LOCK | produce OFF LOCK THREADS ITEMS | consume OFF LOCK THREADS TOTAL | destroy (COND_DATA=NAME: the data in a release region)\n");
	return 2;
}
