// SPDX-License-Identifier: GPL-2.0
/*
 * The unmodified pthread program of shim_tests.sh: plain gcc -pthread, no
 * sdsm header.  shim_prog MODE [THREADS]:
 *   run   THREADS threads (default 3), each logs its node, adds to its slot
 *         of a global array and to a heap object, writes to a variable on
 *         main's stack, returns a value and a malloc'ed string; main joins
 *         them, checks pthread_self/pthread_equal and a detached thread,
 *         prints "cpus" (sysconf and get_nprocs) and "checksum N" (the
 *         same as a native run);
 *   exit  thread 1 calls exit(42) while main waits in pthread_join;
 *   segv  thread 1 writes through a NULL pointer;
 *   sleep main prints "sleeping" and sleeps 600 s (the test sends SIGINT).
 *   spawn fork(), system(), popen(), execl() and posix_spawn(), each result
 *         printed ("fork -1 errno 38"); a child exits at once;
 *   busy  3 threads (nodes 0, 1, 2) take turns on a mutex for ever; main
 *         prints "busy" once each has had a turn, then joins (the test
 *         kills a node).
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXT 16

struct arg {
	int idx;
	int *stack_slots;	/* on main's stack */
	long *heap_obj;		/* malloc'ed by main */
};

static const char *mode;
static long slots[MAXT];		/* .bss */
static int data_base = 1000;		/* .data */
static pthread_t selfs[MAXT];
static volatile int detached_ran;

static int node_id(void)
{
	FILE *f = fopen("/sys/kernel/sdsm/node_id", "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static void *worker(void *p)
{
	struct arg *a = p;
	volatile int *null = NULL;
	char *s;

	printf("thread %d on node %d\n", a->idx, node_id());
	fflush(stdout);
	selfs[a->idx] = pthread_self();
	if (a->idx == 1 && !strcmp(mode, "segv"))
		*null = 1;
	if (a->idx == 1 && !strcmp(mode, "exit"))
		exit(42);
	slots[a->idx] += data_base + a->idx;
	__atomic_add_fetch(a->heap_obj, a->idx + 1, __ATOMIC_SEQ_CST);
	a->stack_slots[a->idx] = a->idx * a->idx + 5;
	s = malloc(32);
	snprintf(s, 32, "t%d", a->idx);
	if (a->idx == 2)
		pthread_exit(s);
	return s;
}

static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static long busy_turns[MAXT];

static void *busy(void *p)
{
	long i = (long)p;

	for (;;) {
		pthread_mutex_lock(&busy_lock);
		busy_turns[i]++;
		usleep(2000);
		pthread_mutex_unlock(&busy_lock);
		usleep(1000);
	}
	return NULL;
}

static void *detached(void *p)
{
	(void)p;
	detached_ran = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	int stack_slots[MAXT], nt = argc > 2 ? atoi(argv[2]) : 3, i;
	struct arg args[MAXT];
	pthread_t tids[MAXT], d;
	long sum = 0, *heap_obj;
	char all[256] = "";
	void *ret;

	mode = argc > 1 ? argv[1] : "run";
	if (!strcmp(mode, "sleep")) {
		printf("sleeping\n");
		fflush(stdout);
		sleep(600);
		return 3;
	}
	if (!strcmp(mode, "spawn")) {
		extern char **environ;
		char *av[] = { "true", NULL };
		pid_t pid;
		FILE *f;
		int r;

		setvbuf(stdout, NULL, _IOLBF, 0);
		errno = 0;
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		printf("fork %d errno %d\n", pid > 0 ? 0 : pid, errno);
		errno = 0;
		r = system("true");
		printf("system %d errno %d\n", r, errno);
		errno = 0;
		f = popen("true", "r");
		printf("popen %s errno %d\n", f ? "ok" : "NULL", errno);
		if (f)
			pclose(f);
		r = posix_spawnp(&pid, "true", NULL, NULL, av, environ);
		if (!r)
			waitpid(pid, NULL, 0);
		printf("posix_spawnp %d\n", r);
		errno = 0;
		r = execl("/bin/true", "true", (char *)NULL);
		printf("execl %d errno %d\n", r, errno);
		return 0;
	}
	if (!strcmp(mode, "busy")) {
		for (i = 0; i < 3; i++)
			pthread_create(&tids[i], NULL, busy, (void *)(long)i);
		while (!busy_turns[0] || !busy_turns[1] || !busy_turns[2])
			usleep(10000);
		printf("busy\n");
		fflush(stdout);
		pthread_join(tids[0], NULL);
		return 3;
	}
	if (nt < 1 || nt > MAXT)
		return 2;
	heap_obj = malloc(sizeof(*heap_obj));
	*heap_obj = 0;
	for (i = 0; i < nt; i++) {
		stack_slots[i] = 0;
		args[i] = (struct arg){ i, stack_slots, heap_obj };
		if (pthread_create(&tids[i], NULL, worker, &args[i])) {
			printf("pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < nt; i++) {
		if (pthread_join(tids[i], &ret)) {
			printf("pthread_join failed\n");
			return 1;
		}
		if (!pthread_equal(tids[i], selfs[i]))
			printf("thread %d: pthread_self differs\n", i);
		strncat(all, ret, sizeof(all) - strlen(all) - 1);
		free(ret);
		sum += slots[i] * 7 + stack_slots[i];
	}
	sum = sum * 100 + *heap_obj;
	if (pthread_equal(tids[0], pthread_self()))
		printf("main: pthread_self equals thread 0\n");
	if (pthread_create(&d, NULL, detached, NULL) || pthread_detach(d))
		printf("detach failed\n");
	for (i = 0; i < 3000 && !detached_ran; i++)
		usleep(10000);
	printf("detached %s\n", detached_ran ? "ran" : "did not run");
	printf("cpus %ld %d\n", sysconf(_SC_NPROCESSORS_ONLN), get_nprocs());
	printf("returns %s\n", all);
	printf("checksum %ld\n", sum);
	free(heap_obj);
	return 0;
}
