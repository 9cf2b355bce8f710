// SPDX-License-Identifier: GPL-2.0
/*
 * The unmodified pthread program of shim_tests.sh: plain gcc -pthread, no
 * sdsm header.  shim_prog MODE [THREADS]:
 *   run   THREADS threads (default 3), each logs its node, adds to its slot
 *         of a global array and to a heap object, writes to a variable on
 *         main's stack, returns a value and a malloc'ed string; main joins
 *         them, checks pthread_self/pthread_equal and a detached thread,
 *         prints "cpus" (sysconf and get_nprocs) and "checksum N" (the
 *         same as a native run); main and each thread print whether
 *         their process runs without ASLR ("main aslr off", "thread I
 *         aslr off"; "on" when the personality lacks ADDR_NO_RANDOMIZE);
 *   exit  thread 0 (in a job: on the node after main's) calls exit(42)
 *         while main waits in pthread_join;
 *   segv  thread 0 writes through a NULL pointer;
 *   heapfull  thread 0 mallocs a block of 1536 MiB, writes its first and
 *         last bytes, reads them back and frees it ("heapbig ok", or
 *         "heapbig errno E"), then blocks of 128 MiB until one fails, frees
 *         them: "heapfull blocks N errno E";
 *   overflow  thread 0 recurses 384 levels of 16 KiB of locals each,
 *         6 MiB, within the 8 MiB of glibc's default stack ("deep
 *         returned N"), then 600 levels, 9.4 MiB, past its end (it dies of
 *         SIGSEGV in the guard below; else "overflow returned N");
 *   sleep main prints "sleeping" and sleeps 600 s (the test sends SIGINT).
 *   spawn fork(), system(), popen(), execl(), posix_spawn(), vfork(2) and
 *         clone(2) without CLONE_VM, each result printed ("fork -1 errno
 *         38"); a child exits at once;
 *   busy  3 threads (nodes 0, 1, 2) take turns on a mutex for ever; main
 *         prints "busy" once each has had a turn, then joins (the test
 *         kills a node).
 *   mapfile  main writes a file of 3 pages and 100 bytes in /tmp (each
 *         node's own), maps it MAP_PRIVATE read-only, MAP_PRIVATE
 *         read-write from its second page and MAP_SHARED read-only, and
 *         closes it; THREADS threads each sum the three mappings (and the
 *         zeroes past the end of the file), meet at a barrier, write a
 *         byte into the
 *         read-write one and print "thread I node N"; main prints the sums,
 *         what it sees of the threads' writes, whether the file is
 *         unchanged, and what a writable MAP_SHARED mapping of the file
 *         gives ("shared-write ok" or "shared-write errno E").
 *   threads  thread calls on threads of other nodes: a thread on node 1
 *         creates three (one lands on node 0) and joins them ("nested
 *         ..."); pthread_cancel of a thread in pthread_cond_wait (its
 *         cleanup handler runs) and of one in sleep ("cancel ...");
 *         pthread_kill with SIGUSR1, whose handler main installed
 *         ("kill ..."); pthread_tryjoin_np and pthread_timedjoin_np
 *         ("tryjoin ..."); pthread_kill(t, 0) before and after the join.
 *   race  THREADS rounds (default 3) on threads placed round-robin:
 *         one waits in pause() and is cancelled, one sleeps until its
 *         SIGUSR1 handler ran and then returns at once, so each
 *         exits while its node may still be signalling it; main joins
 *         each and prints "race N cancels C kills K" (C, K: as asked).
 *   churn THREADS threads one after the other (create, join), each names
 *         itself and reads the name back, finds its own stack with
 *         pthread_getattr_np(), reads its CPUs with pthread_getaffinity_np()
 *         and sets them again: "churn N named N stack N affinity N sum S",
 *         then "churn node K threads M" per node; then two threads (in a
 *         job of 3 nodes after 29 rounds: one on main's node, one on the
 *         next) named by main
 *         ("setname R1 R2", the calls' results), and a robust and a
 *         priority-inheritance mutex in .bss ("robust R pi R"); a
 *         thread (in that job: the third node's) signals main()'s pthread_t:
 *         "main-kill R from node K handled on node M self S" (S: 1 if
 *         the handler ran on the thread whose pthread_self() is main's).
 *   xfree  20 rounds: main (node 0) mallocs 4 blocks of 16 MiB and hands
 *         them to a thread on node 1, which frees them (and munmaps a
 *         64 KiB anonymous mapping main made); 1.25 GiB in all, more than
 *         a node's heap: "xfree ok" only if the blocks are given back.
 *   freestream N  main mallocs N blocks of 200 bytes; a thread on node 1
 *         frees them one by one, 1 ms apart, while main mallocs and frees
 *         blocks of 2000 bytes (past the per-thread cache: each looks at
 *         the list of blocks other nodes freed) until it is done:
 *         "freestream N freed on node K".
 *   bigstack  THREADS threads made with a 16 MiB stack
 *         (pthread_attr_setstacksize), each with 12 MiB of locals:
 *         "bigstack N sum S";
 *   hugestack  main makes a thread with a 16 GiB stack
 *         (pthread_attr_setstacksize: more than a node's heap, and than
 *         a guest's memory natively), then one with the default stack:
 *         "hugestack errno E then F" (pthread_create()'s errors);
 *   manythreads  main makes threads that wait for its word, up to 300 or
 *         until pthread_create() fails, then gives the word and joins
 *         them: "manythreads N errno E" (E: pthread_create()'s, or 0);
 *   keys  main makes a key with a destructor and a thread makes a second;
 *         THREADS threads set and read both: "keys seen N destroyed N
 *         bad 0" (every destructor ran before its thread was joined);
 *   fds   main opens a 10-byte file as descriptor 8 and a pipe, and
 *         THREADS threads use them (fds() below): "thread I node N pread
 *         R ... poll P select S fchdir F errno E";
 *   order  main prints a line into its (fully buffered) standard output,
 *         THREADS threads, one after the other, print a line each, the
 *         last also the start of one that main ends after joining it,
 *         then main prints a last line: "order header", "order thread
 *         0" ..., "order tail end", "order footer", as a native run;
 *   interrupt  main makes an empty pipe; thread 0 (on node 1) polls it
 *         for 20 s and main sends it SIGUSR1, whose handler does nothing
 *         (installed BSD's way: signal(), then siginterrupt(SIGUSR1, 1)
 *         to take SA_RESTART away);
 *         thread 1 (on node 2) reads it, with a clean-up handler that
 *         prints, and main cancels it: "interrupt poll -1 errno 4 early
 *         1" and "interrupt cancel joined 1 canceled 1 cleanup 1 early
 *         1" (early: within 10 s, not the poll's 20); then thread 0
 *         reads the pipe and main sends it SIGUSR1 again (the handler
 *         has no SA_RESTART): "interrupt read -1 errno 4 early 1"; then
 *         it reads again and main sends it SIGUSR2, whose handler
 *         siglongjmp()s out: "interrupt jump early 1";
 *   prockill  main blocks SIGUSR1 and SIGUSR2; thread 0 kill()s main's
 *         pid with SIGUSR1 and thread 1 its own getpid() with SIGUSR2, as
 *         lbzip2's threads tell main they are done, and main takes both:
 *         "prockill kill 0 0 got 10 12";
 *   calloc  main (node 0) callocs 2 MiB and a thread on node 1 checks it
 *         is zero and writes it; main checks the writes: "calloc ok
 *         writer node N" (the test counts node 0's write faults: calloc
 *         must not write fresh heap pages).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plain_node.h"

#define MAXT 16

struct arg {
	int idx;
	int *stack_slots;	/* on main's stack */
	long *heap_obj;		/* malloc'ed by main */
};

static const char *mode;

/*
 * spawn: what a call that makes a process (@pid, its result) did: a child
 * leaves at once (a vfork child too: it never returns from here), the
 * parent reaps it and prints "CALL 0 errno E", a refusal "CALL -1 errno E".
 */
static void spawned(const char *call, long pid)
{
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	printf("%s %ld errno %d\n", call, pid > 0 ? 0 : pid, errno);
}
static long slots[MAXT];		/* .bss */
static int data_base = 1000;		/* .data */
static pthread_t selfs[MAXT];
static volatile int detached_ran;

/* @depth more levels of 16 KiB of locals, each touched from its bottom. */
static __attribute__((noinline)) long recurse(int depth)
{
	volatile char frame[16384];
	size_t i;

	for (i = 0; i < sizeof(frame); i += 4096)
		frame[i] = (char)depth;
	if (depth > 0)
		return recurse(depth - 1) + frame[4096];
	return frame[0];
}

/*
 * One block of 1536 MiB, its ends written and read back, freed; then
 * blocks of 128 MiB until malloc() fails (at most 64), then freed.
 */
static void heap_full(void)
{
	size_t big = 1536UL << 20;
	volatile char *p = malloc(big);
	void *b[64];
	int n = 0, i, e = 0;

	if (p) {
		p[0] = 1;
		p[big - 1] = 2;
		printf("heapbig %s\n", p[0] == 1 && p[big - 1] == 2 ?
		       "ok" : "wrong");
		free((void *)p);
	} else {
		printf("heapbig errno %d\n", errno);
	}

	while (n < 64 && (b[n] = malloc(128UL << 20)))
		n++;
	if (n < 64)
		e = errno;
	for (i = 0; i < n; i++)
		free(b[i]);
	printf("heapfull blocks %d errno %d\n", n, e);
}

/* "off" when this process runs without ASLR (sdsmctl and sdsmd set it). */
static const char *aslr(void)
{
	return personality(0xffffffff) & ADDR_NO_RANDOMIZE ? "off" : "on";
}

static void *worker(void *p)
{
	struct arg *a = p;
	volatile int *null = NULL;
	char *s;

	printf("thread %d on node %d\n", a->idx, node_id());
	if (!strcmp(mode, "run"))
		printf("thread %d aslr %s\n", a->idx, aslr());
	fflush(stdout);
	selfs[a->idx] = pthread_self();
	if (a->idx == 0 && !strcmp(mode, "segv"))
		*null = 1;
	if (a->idx == 0 && !strcmp(mode, "heapfull"))
		heap_full();
	if (a->idx == 0 && !strcmp(mode, "overflow")) {
		printf("deep returned %ld\n", recurse(383));
		fflush(stdout);
		printf("overflow returned %ld\n", recurse(599));
	}
	if (a->idx == 0 && !strcmp(mode, "exit"))
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

#define MAP_LEN		(3 * 4096 + 100)

struct map_arg {
	int idx;
	const unsigned char *priv, *shared;
	unsigned char *rw;		/* the file from offset 4096 */
	unsigned long sums[3];
	int node;
};

static pthread_barrier_t map_summed;

static unsigned char map_byte(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

static void *map_worker(void *p)
{
	struct map_arg *a = p;
	size_t i;

	for (i = 0; i < MAP_LEN; i++) {
		a->sums[0] += a->priv[i] * (i % 13 + 1);
		a->sums[1] += a->shared[i] * (i % 13 + 1);
	}
	for (i = 0; i < MAP_LEN - 4096; i++)
		a->sums[2] += a->rw[i] * (i % 13 + 1);
	/* The rest of the last page reads as zero. */
	for (i = MAP_LEN; i < 4 * 4096; i++)
		a->sums[0] += a->priv[i] ? 1000000 : 0;
	pthread_barrier_wait(&map_summed);
	a->rw[a->idx * 4096 + 10] = 'A' + a->idx;
	a->node = node_id();
	return NULL;
}

static int map_file(int nt)
{
	char path[64], buf[4096 * 4];
	struct map_arg args[MAXT];
	pthread_t tids[MAXT];
	unsigned char *priv, *rw, *shared, *w;
	int fd, i, same = 1;
	size_t k;

	if (nt < 1 || nt > 3)
		return 2;
	snprintf(path, sizeof(path), "/tmp/shim_prog_map.%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (k = 0; k < MAP_LEN; k++)
		buf[k] = map_byte(k);
	if (write(fd, buf, MAP_LEN) != MAP_LEN)
		return 1;
	priv = mmap(NULL, MAP_LEN, PROT_READ, MAP_PRIVATE, fd, 0);
	rw = mmap(NULL, MAP_LEN - 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		  fd, 4096);
	shared = mmap(NULL, MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
	if (priv == MAP_FAILED || rw == MAP_FAILED || shared == MAP_FAILED) {
		printf("mmap errno %d\n", errno);
		return 1;
	}
	w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED) {
		printf("shared-write errno %d\n", errno);
	} else {
		printf("shared-write ok\n");
		munmap(w, 4096);
	}
	close(fd);
	pthread_barrier_init(&map_summed, NULL, nt);
	for (i = 0; i < nt; i++) {
		args[i] = (struct map_arg){ .idx = i, .priv = priv,
					    .shared = shared, .rw = rw };
		if (pthread_create(&tids[i], NULL, map_worker, &args[i]))
			return 1;
	}
	for (i = 0; i < nt; i++)
		pthread_join(tids[i], NULL);
	for (i = 0; i < nt; i++) {
		printf("thread %d node %d\n", i, args[i].node);
		same &= !memcmp(args[i].sums, args[0].sums,
				sizeof(args[0].sums));
	}
	printf("sums %lu %lu %lu %s\n", args[0].sums[0], args[0].sums[1],
	       args[0].sums[2], same ? "same in every thread" : "DIFFER");
	for (i = 0; i < nt; i++)
		printf("rw[%d] %c\n", i * 4096 + 10, rw[i * 4096 + 10]);
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, buf, sizeof(buf), 0) != MAP_LEN)
		return 1;
	for (k = 0; k < MAP_LEN && (unsigned char)buf[k] == map_byte(k); k++)
		;
	printf("file %s\n", k == MAP_LEN ? "unchanged" : "CHANGED");
	close(fd);
	unlink(path);
	munmap(priv, MAP_LEN);
	munmap(rw, MAP_LEN - 4096);
	munmap(shared, MAP_LEN);
	return 0;
}

static void *th_node(void *unused)
{
	(void)unused;
	return (void *)(long)(node_id() + 100);
}

/* Creates three threads (the job puts them on the next nodes in turn). */
static void *th_nester(void *unused)
{
	pthread_t t[3];
	void *ret;
	long sum = 0;
	int i;

	(void)unused;
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, th_node, NULL))
			return (void *)-1L;
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], &ret);
		sum += (long)ret;
	}
	return (void *)sum;
}

static pthread_mutex_t th_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t th_cond = PTHREAD_COND_INITIALIZER;
static volatile int th_waiting, th_cleanup, th_sleeping, th_usr1, th_ready;

static void th_unlock(void *m)
{
	th_cleanup = 1;
	pthread_mutex_unlock(m);
}

static void *th_condwait(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&th_lock);
	pthread_cleanup_push(th_unlock, &th_lock);
	th_waiting = 1;
	for (;;)
		pthread_cond_wait(&th_cond, &th_lock);
	pthread_cleanup_pop(1);
	return NULL;
}

static void *th_sleep(void *unused)
{
	(void)unused;
	th_sleeping = 1;
	sleep(600);
	return NULL;
}

static void th_on_usr1(int sig)
{
	(void)sig;
	th_usr1++;
}

static void *th_wait_usr1(void *unused)
{
	int i;

	(void)unused;
	th_ready = 1;
	for (i = 0; i < 3000 && !th_usr1; i++)
		usleep(10000);
	return (void *)(long)th_usr1;
}

static void *th_slow(void *unused)
{
	(void)unused;
	sleep(2);
	return (void *)7L;
}

static void th_wait_for(volatile int *flag)
{
	int i;

	for (i = 0; i < 3000 && !*flag; i++)
		usleep(10000);
}

static int threads(void)
{
	struct sigaction sa;
	struct timespec ts;
	pthread_t t;
	void *ret;
	int r1, r2;

	/* Round-robin after main's node 0: nester 1, its threads 2, 0, 1. */
	if (pthread_create(&t, NULL, th_nester, NULL))
		return 1;
	pthread_join(t, &ret);
	printf("nested %ld\n", (long)ret);

	pthread_create(&t, NULL, th_condwait, NULL);
	th_wait_for(&th_waiting);
	pthread_mutex_lock(&th_lock);	/* it waits in pthread_cond_wait */
	pthread_mutex_unlock(&th_lock);
	r1 = pthread_cancel(t);
	r2 = pthread_join(t, &ret);
	printf("cancel condwait %d %d %s cleanup %d\n", r1, r2,
	       ret == PTHREAD_CANCELED ? "canceled" : "not canceled",
	       th_cleanup);

	pthread_create(&t, NULL, th_sleep, NULL);
	th_wait_for(&th_sleeping);
	r1 = pthread_cancel(t);
	r2 = pthread_join(t, &ret);
	printf("cancel sleep %d %d %s\n", r1, r2,
	       ret == PTHREAD_CANCELED ? "canceled" : "not canceled");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = th_on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, th_wait_usr1, NULL);
	th_wait_for(&th_ready);
	r1 = pthread_kill(t, 0);
	r2 = pthread_kill(t, SIGUSR1);
	pthread_join(t, &ret);
	printf("kill %d %d handled %ld\n", r1, r2, (long)ret);

	pthread_create(&t, NULL, th_slow, NULL);
	r1 = pthread_tryjoin_np(t, &ret);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 100000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	r2 = pthread_timedjoin_np(t, &ret, &ts);
	printf("tryjoin %s timedjoin %s", r1 == EBUSY ? "EBUSY" : "?",
	       r2 == ETIMEDOUT ? "ETIMEDOUT" : "?");
	ts.tv_sec += 60;
	r2 = pthread_timedjoin_np(t, &ret, &ts);
	printf(" then %d %ld\n", r2, (long)ret);
	return 0;
}

static volatile int race_started, race_usr1;

static void race_on_usr1(int sig)
{
	(void)sig;
	race_usr1++;
}

static void *race_cancelled(void *unused)
{
	(void)unused;
	race_started = 1;
	for (;;)
		pause();
	return NULL;
}

static void *race_killed(void *unused)
{
	int before = race_usr1;

	(void)unused;
	race_started = 1;
	while (race_usr1 == before)
		usleep(1000);	/* cut short by the signal */
	return NULL;
}

/* Signal threads as they exit: their node never dies of it. */
static int race(int rounds)
{
	int i, cancels = 0, kills = 0;
	struct sigaction sa;
	pthread_t t;
	void *ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = race_on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < rounds; i++) {
		race_started = 0;
		if (pthread_create(&t, NULL, race_cancelled, NULL))
			return 1;
		th_wait_for(&race_started);
		if (!pthread_cancel(t) && !pthread_join(t, &ret) &&
		    ret == PTHREAD_CANCELED)
			cancels++;
		race_started = 0;
		if (pthread_create(&t, NULL, race_killed, NULL))
			return 1;
		th_wait_for(&race_started);
		if (!pthread_kill(t, SIGUSR1) && !pthread_join(t, NULL))
			kills++;
	}
	printf("race %d cancels %d kills %d\n", rounds, cancels, kills);
	return 0;
}

#define XF_ROUNDS	20
#define XF_BLOCKS	4
#define XF_SIZE		(16UL << 20)

static int churn_named, churn_stack, churn_affinity;
static long churn_nodes[64];
static pthread_barrier_t churn_met;
static pthread_mutex_t churn_robust, churn_pi;
static pthread_t churn_main;
static volatile int main_usr1_node = -1, main_usr1_self = -1;
static volatile int killer_node = -1;

/* Where the signal landed: the node, and whether on main()'s thread. */
static void churn_on_usr1(int sig)
{
	(void)sig;
	main_usr1_self = pthread_equal(pthread_self(), churn_main) != 0;
	main_usr1_node = node_id();
}

/* pthread_kill() of main()'s pthread_t, from wherever this runs. */
static void *main_killer(void *unused)
{
	(void)unused;
	killer_node = node_id();
	return (void *)(long)pthread_kill(churn_main, SIGUSR1);
}

static void *churner(void *p)
{
	long i = (long)p;
	char want[16], got[16] = "";
	pthread_attr_t a;
	cpu_set_t cpus;
	size_t len;
	void *addr;
	int here = node_id();

	snprintf(want, sizeof(want), "churn%ld", i % 1000);
	if (!pthread_setname_np(pthread_self(), want) &&
	    !pthread_getname_np(pthread_self(), got, sizeof(got)) &&
	    !strcmp(want, got))
		__atomic_add_fetch(&churn_named, 1, __ATOMIC_SEQ_CST);
	if (!pthread_getattr_np(pthread_self(), &a)) {
		if (!pthread_attr_getstack(&a, &addr, &len) &&
		    (char *)&here >= (char *)addr &&
		    (char *)&here < (char *)addr + len)
			__atomic_add_fetch(&churn_stack, 1, __ATOMIC_SEQ_CST);
		pthread_attr_destroy(&a);
	}
	if (!pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) &&
	    CPU_COUNT(&cpus) == sysconf(_SC_NPROCESSORS_ONLN) &&
	    !pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus))
		__atomic_add_fetch(&churn_affinity, 1, __ATOMIC_SEQ_CST);
	if (here >= 0 && here < 64)
		__atomic_add_fetch(&churn_nodes[here], 1, __ATOMIC_SEQ_CST);
	if (i < 0)
		pthread_barrier_wait(&churn_met);
	return (void *)(i * 3);
}

static int churn(int rounds)
{
	pthread_mutexattr_t ma;
	pthread_t t, two[2];
	long sum = 0;
	int i, r[2];
	void *ret;

	for (i = 0; i < rounds; i++) {
		if (pthread_create(&t, NULL, churner, (void *)(long)i) ||
		    pthread_join(t, &ret)) {
			printf("churn: thread %d failed\n", i);
			return 1;
		}
		sum += (long)ret;
	}
	printf("churn %d named %d stack %d affinity %d sum %ld\n", rounds,
	       churn_named, churn_stack, churn_affinity, sum);
	for (i = 0; i < 64; i++)
		if (churn_nodes[i])
			printf("churn node %d threads %ld\n", i, churn_nodes[i]);
	pthread_barrier_init(&churn_met, NULL, 3);
	for (i = 0; i < 2; i++)
		if (pthread_create(&two[i], NULL, churner, (void *)-1L))
			return 1;
	for (i = 0; i < 2; i++)
		r[i] = pthread_setname_np(two[i], "named");
	pthread_barrier_wait(&churn_met);
	for (i = 0; i < 2; i++)
		pthread_join(two[i], NULL);
	printf("setname %d %d\n", r[0], r[1]);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	r[0] = pthread_mutex_init(&churn_robust, &ma);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_STALLED);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	r[1] = pthread_mutex_init(&churn_pi, &ma);
	pthread_mutexattr_destroy(&ma);
	printf("robust %d pi %d\n", r[0], r[1]);
	/* A thread (in a job: on another node) signals main. */
	signal(SIGUSR1, churn_on_usr1);
	churn_main = pthread_self();
	if (pthread_create(&t, NULL, main_killer, NULL) ||
	    pthread_join(t, &ret))
		return 1;
	for (i = 0; i < 1000 && main_usr1_node < 0; i++)
		usleep(10000);
	printf("main-kill %ld from node %d handled on node %d self %d\n",
	       (long)ret, killer_node, main_usr1_node, main_usr1_self);
	return 0;
}

static pthread_mutex_t xf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t xf_cond = PTHREAD_COND_INITIALIZER;
static char *xf_blocks[XF_BLOCKS];
static void *xf_map;
static int xf_full, xf_end, xf_node;

static void *xf_freer(void *unused)
{
	int i;

	(void)unused;
	xf_node = node_id();
	pthread_mutex_lock(&xf_lock);
	for (;;) {
		while (!xf_full && !xf_end)
			pthread_cond_wait(&xf_cond, &xf_lock);
		if (!xf_full)
			break;
		for (i = 0; i < XF_BLOCKS; i++)
			free(xf_blocks[i]);
		munmap(xf_map, 65536);
		xf_full = 0;
		pthread_cond_broadcast(&xf_cond);
	}
	pthread_mutex_unlock(&xf_lock);
	return NULL;
}

static char **fs_blocks;
static int fs_n, fs_node, fs_done;

static void *fs_freer(void *unused)
{
	int i;

	(void)unused;
	fs_node = node_id();
	for (i = 0; i < fs_n; i++) {
		free(fs_blocks[i]);
		usleep(1000);
	}
	__atomic_store_n(&fs_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int freestream(int n)
{
	pthread_t freer;
	int i;

	fs_n = n;
	fs_blocks = malloc((n + 1) * sizeof(*fs_blocks));
	if (!fs_blocks)
		return 1;
	for (i = 0; i < n; i++) {
		fs_blocks[i] = malloc(200);
		if (!fs_blocks[i])
			return 1;
		fs_blocks[i][0] = 1;
	}
	if (pthread_create(&freer, NULL, fs_freer, NULL))
		return 1;
	while (!__atomic_load_n(&fs_done, __ATOMIC_ACQUIRE)) {
		char *p = malloc(2000);

		if (!p)
			return 1;
		p[0] = 1;
		free(p);
		usleep(200);
	}
	pthread_join(freer, NULL);
	free(fs_blocks);
	printf("freestream %d freed on node %d\n", n, fs_node);
	return 0;
}

static int xfree(void)
{
	pthread_t freer;
	int r, i, rc = 0;

	/* Threads go round-robin after main's node 0: the freer on node 1. */
	if (pthread_create(&freer, NULL, xf_freer, NULL))
		return 1;
	for (r = 0; r < XF_ROUNDS && !rc; r++) {
		pthread_mutex_lock(&xf_lock);
		while (xf_full)
			pthread_cond_wait(&xf_cond, &xf_lock);
		for (i = 0; i < XF_BLOCKS; i++) {
			xf_blocks[i] = malloc(XF_SIZE);
			if (!xf_blocks[i]) {
				printf("xfree: malloc failed in round %d\n", r);
				rc = 1;
				break;
			}
			xf_blocks[i][r] = 1;
		}
		xf_map = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (xf_map == MAP_FAILED) {
			printf("xfree: mmap failed in round %d\n", r);
			rc = 1;
		}
		xf_full = !rc;
		pthread_cond_broadcast(&xf_cond);
		pthread_mutex_unlock(&xf_lock);
	}
	pthread_mutex_lock(&xf_lock);
	while (xf_full)
		pthread_cond_wait(&xf_cond, &xf_lock);
	xf_end = 1;
	pthread_cond_broadcast(&xf_cond);
	pthread_mutex_unlock(&xf_lock);
	pthread_join(freer, NULL);
	printf("freer node %d\n", xf_node);
	if (!rc)
		printf("xfree ok\n");
	return rc;
}

#define CA_SIZE		(2 << 20)

static int ca_node;

static void *ca_writer(void *p)
{
	long *a = p;
	size_t i;

	ca_node = node_id();
	for (i = 0; i < CA_SIZE / sizeof(*a); i++) {
		if (a[i])
			return (void *)1;
		a[i] = (long)i;
	}
	return NULL;
}

static int calloc_fresh(void)
{
	pthread_t writer;
	void *ret = (void *)1;
	long *a;
	size_t i;

	/* Threads go round-robin after main's node 0: the writer on node 1. */
	a = calloc(CA_SIZE / sizeof(*a), sizeof(*a));
	if (!a || pthread_create(&writer, NULL, ca_writer, a))
		return 1;
	pthread_join(writer, &ret);
	if (ret) {
		printf("calloc: not zero\n");
		return 1;
	}
	for (i = 0; i < CA_SIZE / sizeof(*a); i++)
		if (a[i] != (long)i) {
			printf("calloc: word %zu is %ld\n", i, a[i]);
			return 1;
		}
	printf("calloc ok writer node %d\n", ca_node);
	free(a);
	return 0;
}

/* 12 MiB of locals, each page written and read back: a checksum. */
static __attribute__((noinline)) long deep(long seed)
{
	volatile unsigned char buf[12 << 20];
	long sum = 0;
	size_t i;

	for (i = 0; i < sizeof(buf); i += 4096)
		buf[i] = (unsigned char)(seed + i / 4096);
	for (i = 0; i < sizeof(buf); i += 4096)
		sum += buf[i];
	return sum;
}

static void *bigstack_thread(void *p)
{
	long idx = (long)p;

	fprintf(stderr, "thread %ld on node %d\n", idx, node_id());
	return (void *)deep(idx);
}

/*
 * THREADS threads made with a 16 MiB stack (pthread_attr_setstacksize),
 * each using 12 MiB of it: "bigstack N sum S".
 */
static int bigstack(int nt)
{
	pthread_t t[MAXT];
	pthread_attr_t a;
	long sum = 0;
	void *r;
	int i;

	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, 16 << 20))
		return 1;
	for (i = 0; i < nt; i++)
		if (pthread_create(&t[i], &a, bigstack_thread, (void *)(long)i))
			return 1;
	for (i = 0; i < nt; i++) {
		if (pthread_join(t[i], &r))
			return 1;
		sum += (long)r;
	}
	pthread_attr_destroy(&a);
	printf("bigstack %d sum %ld\n", nt, sum);
	return 0;
}

static void *hugestack_thread(void *p)
{
	return p;
}

/* A thread with a 16 GiB stack, then one with the default. */
static int hugestack(void)
{
	pthread_attr_t a;
	pthread_t t;
	int e, f;

	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, (size_t)16 << 30))
		return 1;
	e = pthread_create(&t, &a, hugestack_thread, NULL);
	pthread_attr_destroy(&a);
	if (!e && pthread_join(t, NULL))
		return 1;
	f = pthread_create(&t, NULL, hugestack_thread, NULL);
	if (!f && pthread_join(t, NULL))
		return 1;
	printf("hugestack errno %d then %d\n", e, f);
	return 0;
}

#define MANY	300

static pthread_mutex_t many_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t many_go = PTHREAD_COND_INITIALIZER;
static int many_word;

static void *many_thread(void *p)
{
	pthread_mutex_lock(&many_lock);
	while (!many_word)
		pthread_cond_wait(&many_go, &many_lock);
	pthread_mutex_unlock(&many_lock);
	return p;
}

/* Threads until MANY or a failure, all waiting; then all joined. */
static int manythreads(void)
{
	static pthread_t t[MANY];
	int n, e = 0, i;

	for (n = 0; n < MANY; n++) {
		e = pthread_create(&t[n], NULL, many_thread, NULL);
		if (e)
			break;
	}
	pthread_mutex_lock(&many_lock);
	many_word = 1;
	pthread_cond_broadcast(&many_go);
	pthread_mutex_unlock(&many_lock);
	for (i = 0; i < n; i++)
		if (pthread_join(t[i], NULL))
			return 1;
	printf("manythreads %d errno %d\n", n, e);
	return 0;
}

static pthread_key_t key_main, key_late;
static int keys_destroyed, keys_seen;

static void key_destr(void *v)
{
	__atomic_add_fetch(&keys_destroyed, 1, __ATOMIC_SEQ_CST);
	free(v);
}

static void *key_user(void *p)
{
	long i = (long)p, *mine = malloc(sizeof(*mine));

	if (!mine)
		return (void *)1;
	*mine = i;
	if (pthread_setspecific(key_main, mine) ||
	    pthread_setspecific(key_late, (void *)(i + 1)))
		return (void *)1;
	sched_yield();
	if (pthread_getspecific(key_main) == mine &&
	    *(long *)pthread_getspecific(key_main) == i &&
	    pthread_getspecific(key_late) == (void *)(i + 1))
		__atomic_add_fetch(&keys_seen, 1, __ATOMIC_SEQ_CST);
	fprintf(stderr, "thread %ld on node %d\n", i, node_id());
	return NULL;
}

/* The second key, made by a thread (in a job: on the node after main's). */
static void *key_maker(void *unused)
{
	(void)unused;
	return (void *)(long)pthread_key_create(&key_late, NULL);
}

/*
 * Keys made by main and by a thread; THREADS threads set and read both
 * ("keys seen N destroyed N"), and main's own value stays its own.
 */
static int keys(int nt)
{
	pthread_t t[MAXT];
	void *ret = (void *)1;
	long i, here = -1;
	int bad = 0;

	if (pthread_key_create(&key_main, key_destr) ||
	    pthread_create(&t[0], NULL, key_maker, NULL) ||
	    pthread_join(t[0], &ret) || ret ||
	    pthread_setspecific(key_main, &here))
		return 1;
	for (i = 0; i < nt && i < MAXT; i++)
		if (pthread_create(&t[i], NULL, key_user, (void *)i))
			return 1;
	while (i--) {
		pthread_join(t[i], &ret);
		bad += ret != NULL;
	}
	if (pthread_getspecific(key_main) != &here ||
	    pthread_getspecific(key_late))
		bad++;
	printf("keys seen %d destroyed %d bad %d\n", keys_seen,
	       keys_destroyed, bad);
	return pthread_key_delete(key_main) || pthread_key_delete(key_late) ||
	       bad;
}

#define FD_AT	8	/* where fds puts its file */
/* Above the job's windows: memory a thread maps at an address of its own. */
#define FD_PRIVATE	0x600000000000UL
static char fds_path[64];	/* main's file; thread I makes fds_path.I */
static int fds_pipe[2];		/* main's pipe, a byte in it */
static int made_pipe[MAXT], made_event[MAXT];	/* thread I's, for main */

static void *fd_reader(void *p)
{
	long k = (long)p;
	char buf[16], line[17], *priv;
	ssize_t n, np = -1;
	struct stat st;
	int fl, fst, d, dup_ok = 0, map_ok = 0, fopen_ok = 0, chd, n2;
	struct pollfd pf[2] = { { fds_pipe[0], POLLIN, 0 },
				{ fds_pipe[1], POLLOUT, 0 } };
	struct pollfd pri = { fds_pipe[0], POLLPRI, 0 };
	struct timeval tv = { 5, 0 };
	int pl, poll_ok, select_ok, pp[2];
	char own[80];
	fd_set rs;
	void *m;
	FILE *f;

	errno = 0;
	n = pread(FD_AT, buf, 10, 0);
	if (n == 10 && memcmp(buf, "0123456789", 10))
		n = -2;
	/* Not the job's memory: the read goes through the shim's own page. */
	priv = mmap((void *)(FD_PRIVATE + (k << 21)), 4096,
		    PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (priv != MAP_FAILED) {
		np = pread(FD_AT, priv, 10, 0);
		if (np == 10 && memcmp(priv, "0123456789", 10))
			np = -2;
		munmap(priv, 4096);
	}
	fl = fcntl(FD_AT, F_GETFL);
	fst = !fstat(FD_AT, &st) && st.st_size >= 10;
	d = dup(FD_AT);
	if (d >= 0) {
		dup_ok = pread(d, buf, 3, 7) == 3 && !memcmp(buf, "789", 3);
		dup_ok &= !close(d);
	}
	memset(line, ' ', sizeof(line));
	n2 = snprintf(line, sizeof(line), "node %d thr %ld", node_id(), k);
	if (n2 > 0 && n2 < 15)
		line[n2] = ' ';
	line[15] = '\n';
	if (pwrite(FD_AT, line, 16, 16 + 16 * k) != 16)
		printf("thread %ld: pwrite: %s\n", k, strerror(errno));
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, FD_AT, 0);
	if (m != MAP_FAILED) {
		map_ok = !memcmp(m, "0123456789", 10);
		munmap(m, 4096);
	}
	/* A file of its own, by its path: the launcher's node's too. */
	snprintf(own, sizeof(own), "%s.%ld", fds_path, k);
	f = fopen(own, "w");
	if (f) {
		fopen_ok = fprintf(f, "from node %d\n", node_id()) > 0;
		fopen_ok &= !fclose(f);
	}
	snprintf(own, sizeof(own), "%s.s", fds_path);
	st.st_size = -1;
	stat(own, &st);
	/* Waits on main's pipe: readable, writable, no urgent data. */
	pl = poll(pf, 2, 5000);
	poll_ok = pl == 2 && pf[0].revents == POLLIN &&
		  pf[1].revents == POLLOUT && poll(&pri, 1, 100) == 0;
	if (!poll_ok)
		printf("thread %ld: poll %d revents %#x %#x\n", k, pl,
		       pf[0].revents, pf[1].revents);
	FD_ZERO(&rs);
	FD_SET(fds_pipe[0], &rs);
	select_ok = select(fds_pipe[0] + 1, &rs, NULL, NULL, &tv) == 1 &&
		    FD_ISSET(fds_pipe[0], &rs);
	/* A pipe's write end is never readable: a timeout. */
	FD_ZERO(&rs);
	FD_SET(fds_pipe[1], &rs);
	tv.tv_sec = 0;
	tv.tv_usec = 100000;
	select_ok &= select(fds_pipe[1] + 1, &rs, NULL, NULL, &tv) == 0;
	/* A pipe and an event counter of its own, for main to read. */
	made_pipe[k] = made_event[k] = -1;
	if (!pipe(pp)) {
		made_pipe[k] = pp[0];
		if (write(pp[1], "a", 1) != 1 || close(pp[1]))
			made_pipe[k] = -1;
	}
	made_event[k] = eventfd(k + 1, 0);
	errno = 0;
	chd = fchdir(FD_AT);
	printf("thread %ld node %d pread %zd private %zd fstat %d fl %d dup %d mmap %d fopen %d stat %ld poll %d select %d fchdir %d errno %d\n",
	       k, node_id(), n, np, fst, fl < 0 ? -1 : fl & O_ACCMODE, dup_ok,
	       map_ok, fopen_ok, (long)st.st_size, poll_ok, select_ok, chd,
	       chd < 0 ? errno : 0);
	return NULL;
}

/*
 * main opens a 10-byte file of its node's /tmp as descriptor 8 and
 * unlinks it, and makes a 5-byte file fds_path.s; THREADS threads read,
 * stat, dup, map and write the first (a line each at 16 + 16 * thread),
 * write a file fds_path.I of their own with fopen() and stat() the second,
 * poll() and select() a pipe main made, and make a pipe with a byte in it
 * and an event counter of I + 1 for main: "thread I node N pread 10
 * private 10 fstat 1 fl 2 dup 1 mmap 1 fopen 1 stat 5 poll 1 select 1
 * fchdir -1 errno 9".  Then main prints the lines, "line I: node N
 * thr I", what it reads from the thread's pipe and counter, "made I:
 * pipe a eventfd I+1", and the files it finds: "file I: from node N".
 */
static int fds(int nt)
{
	char path[80], lines[16 * MAXT + 1], got[64];
	pthread_t t[MAXT];
	long i;
	int fd;
	FILE *f;

	snprintf(fds_path, sizeof(fds_path), "/tmp/shim_fds.%d", (int)getpid());
	snprintf(path, sizeof(path), "%s.s", fds_path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "12345", 5) != 5 || close(fd))
		return 1;
	fd = open(fds_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "0123456789", 10) != 10 ||
	    dup2(fd, FD_AT) != FD_AT)
		return 1;
	close(fd);
	unlink(fds_path);
	if (pipe(fds_pipe) || write(fds_pipe[1], "x", 1) != 1)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nt && i < MAXT; i++)
		if (pthread_create(&t[i], NULL, fd_reader, (void *)i))
			return 1;
	while (i--)
		pthread_join(t[i], NULL);
	memset(lines, 0, sizeof(lines));
	if (pread(FD_AT, lines, 16 * nt, 16) != 16 * nt)
		return 1;
	for (i = 0; i < nt; i++) {
		lines[16 * i + 15] = 0;
		printf("line %ld: %s\n", i, lines + 16 * i);
	}
	for (i = 0; i < nt; i++) {
		uint64_t ev = 0;
		char c = 0;

		if (read(made_pipe[i], &c, 1) != 1 || close(made_pipe[i]))
			c = '?';
		if (read(made_event[i], &ev, 8) != 8 || close(made_event[i]))
			ev = 0;
		printf("made %ld: pipe %c eventfd %llu\n", i, c,
		       (unsigned long long)ev);
		snprintf(path, sizeof(path), "%s.%ld", fds_path, i);
		f = fopen(path, "r");
		if (!f || !fgets(got, sizeof(got), f))
			snprintf(got, sizeof(got), "missing\n");
		if (f)
			fclose(f);
		unlink(path);
		printf("file %ld: %s", i, got);
	}
	snprintf(path, sizeof(path), "%s.s", fds_path);
	unlink(path);
	close(FD_AT);
	close(fds_pipe[0]);
	close(fds_pipe[1]);
	return 0;
}

static int order_nt;

static void *orderer(void *p)
{
	long k = (long)p;

	printf("order thread %ld\n", k);
	if (k == order_nt - 1)
		printf("order tail");
	return NULL;
}

static int order(int nt)
{
	pthread_t t;
	long i;

	order_nt = nt;
	printf("order header\n");
	for (i = 0; i < nt; i++) {
		if (pthread_create(&t, NULL, orderer, (void *)i))
			return 1;
		pthread_join(t, NULL);
	}
	printf(" end\norder footer\n");
	return 0;
}

static pid_t main_pid;
static int kill_ret[2];

static void *killer(void *p)
{
	long k = (long)p;

	kill_ret[k] = kill(k ? getpid() : main_pid, k ? SIGUSR2 : SIGUSR1);
	return NULL;
}

static int prockill(void)
{
	struct timespec ten = { 10, 0 };
	int got[2] = { -1, -1 }, i;
	pthread_t t[2];
	sigset_t set;

	main_pid = getpid();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, killer, (void *)(long)i))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 2; i++)
		got[i] = sigtimedwait(&set, NULL, &ten);
	if (got[0] > got[1]) {
		i = got[0];
		got[0] = got[1];
		got[1] = i;
	}
	printf("prockill kill %d %d got %d %d\n", kill_ret[0], kill_ret[1],
	       got[0], got[1]);
	return 0;
}

static int intr_pipe[2];
static volatile int intr_cleaned;
static int intr_reading;
static sigjmp_buf intr_env;

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void intr_handler(int sig)
{
	(void)sig;
}

/* Only into the sigsetjmp() of the second read (the first may not end). */
static void intr_jump(int sig)
{
	(void)sig;
	if (__atomic_load_n(&intr_reading, __ATOMIC_ACQUIRE) == 2)
		siglongjmp(intr_env, 1);
}

/*
 * A poll() that a handler interrupts, a read() that a handler without
 * SA_RESTART interrupts, then a read() that a handler leaves by
 * siglongjmp(), as an alarm() timeout does: the printf() after it is a
 * call of the thread's own, not one nested in the read.
 */
static void *intr_poller(void *p)
{
	struct pollfd pf = { intr_pipe[0], POLLIN, 0 };
	volatile double t0 = mono();
	char c;
	int r, e;

	(void)p;
	r = poll(&pf, 1, 20000);
	e = errno;
	printf("interrupt poll %d errno %d early %d\n", r, r < 0 ? e : 0,
	       mono() - t0 < 10);
	__atomic_store_n(&intr_reading, 1, __ATOMIC_RELEASE);
	t0 = mono();
	r = read(intr_pipe[0], &c, 1);
	e = errno;
	printf("interrupt read %d errno %d early %d\n", r, r < 0 ? e : 0,
	       mono() - t0 < 10);
	if (!sigsetjmp(intr_env, 1)) {
		__atomic_store_n(&intr_reading, 2, __ATOMIC_RELEASE);
		t0 = mono();
		if (read(intr_pipe[0], &c, 1) >= 0)
			printf("interrupt read returned\n");
	}
	printf("interrupt jump early %d\n", mono() - t0 < 10);
	return NULL;
}

static void intr_cleanup(void *p)
{
	(void)p;
	/* A passed-on write() of the slot whose read the cancel left. */
	printf("interrupt cleanup on node %d\n", node_id());
	intr_cleaned = 1;
}

static void *intr_reader(void *p)
{
	char c;

	(void)p;
	pthread_cleanup_push(intr_cleanup, NULL);
	if (read(intr_pipe[0], &c, 1) >= 0)
		printf("interrupt read returned\n");
	pthread_cleanup_pop(0);
	return NULL;
}

/* Until thread 0 is on its way into read() number @n (bounded: 30 s). */
static void intr_wait_reading(int n)
{
	int i;

	for (i = 0; i < 300 && __atomic_load_n(&intr_reading,
					       __ATOMIC_ACQUIRE) < n; i++)
		usleep(100000);
	usleep(1000000);
}

/*
 * Passed-on calls that signal handlers interrupt, and a passed-on read()
 * whose thread is cancelled (interrupt in the list above).
 */
static int interrupt(void)
{
	struct sigaction sa;
	pthread_t t[2];
	void *ret = NULL;
	double t0;
	int j;

	/* The old way on purpose: glibc sets it past sigaction(). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	if (signal(SIGUSR1, intr_handler) == SIG_ERR ||
	    siginterrupt(SIGUSR1, 1))
		return 1;
#pragma GCC diagnostic pop
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = intr_jump;
	if (sigaction(SIGUSR2, &sa, NULL) || pipe(intr_pipe) ||
	    pthread_create(&t[0], NULL, intr_poller, NULL) ||
	    pthread_create(&t[1], NULL, intr_reader, NULL))
		return 1;
	usleep(1000000);
	t0 = mono();
	pthread_kill(t[0], SIGUSR1);
	intr_wait_reading(1);
	pthread_kill(t[0], SIGUSR1);
	intr_wait_reading(2);
	pthread_kill(t[0], SIGUSR2);
	pthread_join(t[0], NULL);
	t0 = mono();
	pthread_cancel(t[1]);
	j = !pthread_join(t[1], &ret);
	printf("interrupt cancel joined %d canceled %d cleanup %d early %d\n",
	       j, ret == PTHREAD_CANCELED, intr_cleaned, mono() - t0 < 10);
	return 0;
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
		spawned("fork", fork());
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
		errno = 0;
		spawned("vfork", syscall(SYS_vfork));
		errno = 0;
		spawned("clone", syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
		return 0;
	}
	if (!strcmp(mode, "mapfile"))
		return map_file(nt);
	if (!strcmp(mode, "xfree"))
		return xfree();
	if (!strcmp(mode, "freestream"))
		return freestream(argc > 2 ? atoi(argv[2]) : 0);
	if (!strcmp(mode, "calloc"))
		return calloc_fresh();
	if (!strcmp(mode, "threads"))
		return threads();
	if (!strcmp(mode, "race"))
		return race(nt);
	if (!strcmp(mode, "churn"))
		return churn(nt);
	if (!strcmp(mode, "bigstack"))
		return bigstack(nt);
	if (!strcmp(mode, "order"))
		return order(nt);
	if (!strcmp(mode, "prockill"))
		return prockill();
	if (!strcmp(mode, "interrupt"))
		return interrupt();
	if (!strcmp(mode, "fds"))
		return fds(nt);
	if (!strcmp(mode, "keys"))
		return keys(nt);
	if (!strcmp(mode, "hugestack"))
		return hugestack();
	if (!strcmp(mode, "manythreads"))
		return manythreads();
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
	printf("main aslr %s\n", aslr());
	printf("returns %s\n", all);
	printf("checksum %ld\n", sum);
	free(heap_obj);
	return 0;
}
