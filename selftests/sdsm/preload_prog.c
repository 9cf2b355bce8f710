// SPDX-License-Identifier: GPL-2.0
/*
 * preload_prog - an ordinary pthread program, built with plain
 * `gcc -pthread` and no sdsm header, for selftests/sdsm/preload_tests.sh.
 * Run natively and under `sdsmctl --interleave=all --`, its output lines
 * that start with "result" must be the same.
 *
 *   preload_prog              threads malloc/realloc/free, a fork, prints
 *                             "result ..." lines
 *   preload_prog hold FILE    also prints "heap|bss|data|mmap ADDR PAGES"
 *                             of memory it filled with page-index words,
 *                             "ready", then waits (at most 120 s) until
 *                             FILE exists
 *   preload_prog bench N      N malloc/free pairs of mixed sizes per
 *                             thread; prints "bench ns_per_pair"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS	4
#define PAGES	12

static uint64_t table[PAGES * 512];		/* .bss */
static uint64_t weights[1024] = { 1, 2, 3 };	/* .data */

struct work {
	int id;
	unsigned long iters;
	uint64_t sum;
};

static void *worker(void *arg)
{
	struct work *w = arg;
	void *keep[64] = { 0 };
	unsigned long i;
	uint64_t sum = 0;

	for (i = 0; i < w->iters; i++) {
		size_t sz = 1 + (i * 7919 + w->id * 104729) % 3000;
		unsigned int slot = i % 64;
		unsigned char *p;

		if (i % 97 == 0)
			sz *= 40;
		free(keep[slot]);
		p = malloc(sz);
		if (!p) {
			perror("malloc");
			exit(2);
		}
		memset(p, (int)(i & 0xff), sz);
		if (i % 5 == 0) {
			p = realloc(p, sz * 2);
			if (!p)
				exit(2);
			memset(p + sz, 1, sz);
		}
		sum += p[sz - 1] + sz;
		keep[slot] = p;
	}
	for (i = 0; i < 64; i++)
		free(keep[i]);
	w->sum = sum;
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *bench(void *arg)
{
	struct work *w = arg;
	unsigned long i;
	void *p[16] = { 0 };

	for (i = 0; i < w->iters; i++) {
		unsigned int k = i % 16;

		free(p[k]);
		p[k] = malloc(16 + (i * 37) % 512);
		if (!p[k])
			exit(2);
		*(volatile char *)p[k] = 1;
	}
	for (i = 0; i < 16; i++)
		free(p[i]);
	return NULL;
}

static int run_threads(void *(*fn)(void *), unsigned long iters,
		       uint64_t *total)
{
	pthread_t t[THREADS];
	struct work w[THREADS];
	int i;

	*total = 0;
	for (i = 0; i < THREADS; i++) {
		w[i].id = i;
		w[i].iters = iters;
		w[i].sum = 0;
		if (pthread_create(&t[i], NULL, fn, &w[i]))
			return -1;
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		*total += w[i].sum;
	}
	return 0;
}

/* fork: the child's writes and allocations stay in the child. */
static int fork_check(void)
{
	char *s = malloc(64);
	int status;
	pid_t pid;

	strcpy(s, "parent");
	weights[5] = 55;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char *c = malloc(100);

		strcpy(s, "child");
		weights[5] = 66;
		free(c);
		free(s);
		_exit(strcmp(malloc(10) ? "x" : "", "x"));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	if (strcmp(s, "parent") || weights[5] != 55)
		return -1;
	free(s);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t total, *heap, *anon;
	unsigned long i;
	double t0;
	int k;

	if (argc == 3 && !strcmp(argv[1], "bench")) {
		unsigned long n = strtoul(argv[2], NULL, 0);

		t0 = now_ns();
		if (run_threads(bench, n, &total))
			return 2;
		printf("bench %.1f\n", (now_ns() - t0) / n);
		return 0;
	}
	if (run_threads(worker, 3000, &total))
		return 2;
	printf("result threads %llu\n", (unsigned long long)total);
	printf("result fork %s\n", fork_check() ? "broken" : "ok");
	for (i = 0; i < PAGES * 512; i++)
		table[i] = i / 512 + 1000;
	for (i = 3; i < 1024; i++)
		weights[i] = weights[i - 1] + weights[i - 3];
	printf("result globals %llu %llu\n", (unsigned long long)table[600],
	       (unsigned long long)weights[1023]);

	heap = aligned_alloc(4096, PAGES * 4096);
	anon = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!heap || anon == MAP_FAILED)
		return 2;
	for (i = 0; i < PAGES * 512; i++) {
		heap[i] = i / 512 + 2000;
		anon[i] = i / 512 + 3000;
	}
	printf("result heap %llu anon %llu\n",
	       (unsigned long long)heap[PAGES * 512 - 1],
	       (unsigned long long)anon[PAGES * 512 - 1]);
	if (argc == 3 && !strcmp(argv[1], "hold")) {
		printf("heap %p %d\n", (void *)heap, PAGES);
		printf("bss %p %d\n", (void *)table, PAGES);
		printf("mmap %p %d\n", (void *)anon, PAGES);
		printf("ready\n");
		fflush(stdout);
		for (k = 0; k < 1200 && access(argv[2], F_OK); k++)
			usleep(100000);
	}
	munmap(anon, PAGES * 4096);
	free(heap);
	return 0;
}
