// SPDX-License-Identifier: GPL-2.0
/*
 * rc_util - what rc tests (mem_tests.sh, "release consistency") run on the
 * nodes of a cluster: programs on a release-consistent region (created
 * with SDSM_REGION_F_RELEASE, or opened if another node did), with cluster
 * locks and barriers as the acquire and release points.
 *
 *   rc_util disjoint NAME PAGES NODE NNODES ROUNDS BARRIER
 *	every node writes its own words of the same pages (word i belongs to
 *	node i % NNODES) with round * 1000 + NODE, passes barrier BARRIER,
 *	checks every word of every node, passes it again; ROUNDS times.
 *	Prints "rounds R words W wrong N" and exits 0 if N is 0.
 *   rc_util write NAME PAGES LOCK VALUE
 *	under lock LOCK: every word but the first gets VALUE, then the
 *	first (the flag) does.
 *   rc_util write_first NAME PAGES LOCK VALUE
 *	the same, but only the words of the first page.
 *   rc_util read NAME PAGES LOCK VALUE SECONDS
 *	takes and gives back lock LOCK every 20 ms until the flag is VALUE
 *	(exit 2 after SECONDS), then checks every word under the lock:
 *	prints "wrong N" and exits 0 if N is 0.
 *   rc_util read_rest NAME PAGES LOCK VALUE SECONDS REST
 *	the same, but the words of the pages after the first must be REST
 *	(the first page was written again, alone, with VALUE).
 *   rc_util stale NAME PAGES LOCK VALUE GOFILE SECONDS
 *	reads the flag, waits for GOFILE to exist (another node wrote VALUE
 *	and released LOCK meanwhile), reads it again without any acquire,
 *	then under LOCK: prints "first X unsynchronized Y acquired Z".
 *   rc_util mixed NAME PAGES NODE NNODES BARRIER
 *	a release region NAME and a sequential region NAME-seq in one
 *	program: each node writes its words of both, passes the barrier,
 *	checks both: prints "wrong N" and exits 0 if N is 0.
 *   rc_util bar_write NAME PAGES BARRIER VALUE COUNT
 *	every word gets VALUE, then the node passes barrier BARRIER of
 *	every node, departing once COUNT nodes arrived (0: all).
 *   rc_util bar_read NAME PAGES BARRIER VALUE COUNT GOFILE
 *	reads every word (its copies), prints "ready", waits for GOFILE to
 *	exist unless it is "-", passes the barrier as bar_write does, then
 *	checks that every word is VALUE: prints "wrong N" and exits 0 if N
 *	is 0.
 *   rc_util post NAME PAGES VALUE
 *	without a lock: every word but the first gets VALUE, then the first
 *	(the futex word) does, then a futex wake of every waiter of the
 *	first word: prints "woke N".
 *   rc_util await NAME PAGES VALUE GOFILE SECONDS
 *	reads every word (its copies), prints "ready", waits for GOFILE to
 *	exist unless it is "-", then one futex wait on the first word for
 *	the value it read, for at most SECONDS, and then, with no other
 *	acquire, checks every word against VALUE: prints "wait R first F
 *	wrong N" (R: woken, EAGAIN or the error) and exits 0 if the wait
 *	was woken or EAGAIN and N is 0.
 *   rc_util counters NAME NODE NNODES THREADS ROUNDS LOCK BARRIER
 *	THREADS threads of this node: thread t adds 1 to counter t under
 *	lock LOCK + t, then works 0.2 ms before it releases the lock;
 *	ROUNDS times.  Thread t of every node shares counter and lock t,
 *	and all counters are in the region's one page: this node's
 *	threads release their locks, and acquire notices of that page,
 *	while the others' writes to it are open.  After barrier BARRIER
 *	(NNODES nodes done), each counter must be NNODES * ROUNDS under
 *	its lock: prints "counters T rounds R wrong N" and exits 0 if N is
 *	0.
 *
 * Every wait is bounded: a lock, barrier or futex ioctl by 60 s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdsm.h>

#define PAGE		4096UL
#define WAIT_MS		60000

static int fd;

static void die(const char *what)
{
	fprintf(stderr, "rc_util: %s: %s\n", what, strerror(errno));
	exit(3);
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end) {
		fprintf(stderr, "rc_util: bad number '%s'\n", s);
		exit(3);
	}
	return v;
}

static volatile uint32_t *region(const char *name, size_t pages,
				 uint32_t flags)
{
	struct sdsm_region_create c = { .size = sizeof(c) };
	void *p;

	if (strlen(name) >= sizeof(c.name)) {
		fprintf(stderr, "rc_util: name too long\n");
		exit(3);
	}
	strcpy(c.name, name);
	c.length = pages * PAGE;
	c.flags = flags;
	if (ioctl(fd, SDSM_IOC_REGION_CREATE, &c))
		die("REGION_CREATE");
	p = mmap(NULL, c.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 c.offset);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void lock_op(uint64_t id, uint32_t op)
{
	struct sdsm_lock l = {
		.size = sizeof(l),
		.op = op,
		.lock_id = id,
		.timeout_ms = op == SDSM_LOCK_ACQUIRE ? WAIT_MS : 0,
	};

	if (ioctl(fd, SDSM_IOC_LOCK, &l))
		die(op == SDSM_LOCK_ACQUIRE ? "lock" : "unlock");
}

static void barrier_count(uint64_t id, uint32_t count)
{
	struct sdsm_barrier b = {
		.size = sizeof(b),
		.barrier_id = id,
		.count = count,
		.timeout_ms = WAIT_MS,
	};

	if (ioctl(fd, SDSM_IOC_BARRIER, &b))
		die("barrier");
}

static void barrier(uint64_t id)
{
	barrier_count(id, 0);
}

/* Wait (bounded by @end) for file @path to exist, unless it is "-". */
static int wait_file(const char *path, time_t end)
{
	struct stat st;

	while (strcmp(path, "-") && stat(path, &st)) {
		if (time(NULL) > end) {
			printf("%s never appeared\n", path);
			return 2;
		}
		usleep(20000);
	}
	return 0;
}

/* A futex wait or wake on @word; 0 or an errno. */
static int futex_op(volatile uint32_t *word, uint32_t op, uint32_t val,
		    int64_t timeout_ns, uint32_t *woken)
{
	struct sdsm_futex f = {
		.size = sizeof(f),
		.op = op,
		.val = val,
		.addr = (uintptr_t)word,
		.bitset = SDSM_FUTEX_BITSET_ANY,
		.clockid = CLOCK_MONOTONIC,
		.timeout_ns = timeout_ns,
	};

	if (ioctl(fd, SDSM_IOC_FUTEX, &f))
		return errno;
	if (woken)
		*woken = f.woken;
	return 0;
}

static int disjoint(char **av)
{
	size_t pages = num(av[1]), words = pages * PAGE / 4, i;
	unsigned long node = num(av[2]), nn = num(av[3]);
	unsigned long rounds = num(av[4]), r, wrong = 0;
	uint64_t bar = num(av[5]);
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);

	for (r = 1; r <= rounds; r++) {
		for (i = node; i < words; i += nn)
			p[i] = r * 1000 + node;
		barrier(bar);
		for (i = 0; i < words; i++)
			if (p[i] != r * 1000 + i % nn && wrong++ < 5)
				fprintf(stderr, "round %lu word %zu: %u\n", r,
					i, p[i]);
		barrier(bar);
	}
	printf("rounds %lu words %zu wrong %lu\n", rounds, words, wrong);
	return wrong != 0;
}

/* rc_util write or write_first: the words of the first @written pages. */
static int write_words(char **av, size_t written)
{
	size_t pages = num(av[1]), words = written * PAGE / 4, i;
	uint64_t lock = num(av[2]);
	uint32_t value = num(av[3]);
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);

	lock_op(lock, SDSM_LOCK_ACQUIRE);
	for (i = 1; i < words; i++)
		p[i] = value;
	p[0] = value;
	lock_op(lock, SDSM_LOCK_RELEASE);
	return 0;
}

static int writer(char **av)
{
	return write_words(av, num(av[1]));
}

static int write_first(char **av)
{
	return write_words(av, 1);
}

/* rc_util read or read_rest: the words of the first page VALUE, then REST. */
static int read_words(char **av, uint32_t rest)
{
	size_t pages = num(av[1]), words = pages * PAGE / 4, i;
	uint64_t lock = num(av[2]);
	uint32_t value = num(av[3]);
	time_t end = time(NULL) + num(av[4]);
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);
	unsigned long wrong = 0;

	for (;;) {
		lock_op(lock, SDSM_LOCK_ACQUIRE);
		if (p[0] == value)
			break;
		lock_op(lock, SDSM_LOCK_RELEASE);
		if (time(NULL) > end) {
			printf("flag never seen: %u\n", p[0]);
			return 2;
		}
		usleep(20000);
	}
	for (i = 1; i < words; i++)
		if (p[i] != (i < PAGE / 4 ? value : rest) && wrong++ < 5)
			fprintf(stderr, "word %zu: %u\n", i, p[i]);
	lock_op(lock, SDSM_LOCK_RELEASE);
	printf("wrong %lu\n", wrong);
	return wrong != 0;
}

static int reader(char **av)
{
	return read_words(av, num(av[3]));
}

static int read_rest(char **av)
{
	return read_words(av, num(av[5]));
}

static int stale(char **av)
{
	size_t pages = num(av[1]);
	uint64_t lock = num(av[2]);
	time_t end = time(NULL) + num(av[5]);
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);
	uint32_t first, unsync, acquired;

	(void)num(av[3]);
	first = p[0];
	printf("ready\n");
	fflush(stdout);
	if (wait_file(av[4], end))
		return 2;
	unsync = p[0];
	lock_op(lock, SDSM_LOCK_ACQUIRE);
	acquired = p[0];
	lock_op(lock, SDSM_LOCK_RELEASE);
	printf("first %u unsynchronized %u acquired %u\n", first, unsync,
	       acquired);
	return 0;
}

static int mixed(char **av)
{
	size_t pages = num(av[1]), words = pages * PAGE / 4, i;
	unsigned long node = num(av[2]), nn = num(av[3]), wrong = 0;
	uint64_t bar = num(av[4]);
	volatile uint32_t *rel, *seq;
	char name[64];

	rel = region(av[0], pages, SDSM_REGION_F_RELEASE);
	snprintf(name, sizeof(name), "%s-seq", av[0]);
	seq = region(name, pages, 0);
	for (i = node; i < words; i += nn) {
		rel[i] = 1000 + node;
		seq[i] = 2000 + node;
	}
	barrier(bar);
	for (i = 0; i < words; i++) {
		if (rel[i] != 1000 + i % nn && wrong++ < 5)
			fprintf(stderr, "release word %zu: %u\n", i, rel[i]);
		if (seq[i] != 2000 + i % nn && wrong++ < 5)
			fprintf(stderr, "sequential word %zu: %u\n", i,
				seq[i]);
	}
	barrier(bar);
	printf("wrong %lu\n", wrong);
	return wrong != 0;
}

/* rc_util bar_write (@write) or bar_read. */
static int bar_words(char **av, int write)
{
	size_t pages = num(av[1]), words = pages * PAGE / 4, i;
	uint64_t bar = num(av[2]);
	uint32_t value = num(av[3]), count = num(av[4]), sum = 0;
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);
	unsigned long wrong = 0;

	for (i = 0; i < words; i++) {
		if (write)
			p[i] = value;
		else
			sum += p[i];
	}
	if (!write) {
		printf("ready %u\n", sum);
		fflush(stdout);
		if (wait_file(av[5], time(NULL) + WAIT_MS / 1000))
			return 2;
	}
	barrier_count(bar, count);
	if (write)
		return 0;
	for (i = 0; i < words; i++)
		if (p[i] != value && wrong++ < 5)
			fprintf(stderr, "word %zu: %u\n", i, p[i]);
	printf("wrong %lu\n", wrong);
	return wrong != 0;
}

static int bar_write(char **av)
{
	return bar_words(av, 1);
}

static int bar_read(char **av)
{
	return bar_words(av, 0);
}

/* A futex wake is a release (Documentation/protocol.rst). */
static int post(char **av)
{
	size_t pages = num(av[1]), words = pages * PAGE / 4, i;
	uint32_t value = num(av[2]), woken = 0;
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);
	int err;

	for (i = 1; i < words; i++)
		p[i] = value;
	p[0] = value;
	err = futex_op(p, SDSM_FUTEX_WAKE, INT32_MAX, -1, &woken);
	if (err) {
		errno = err;
		die("futex wake");
	}
	printf("woke %u\n", woken);
	return 0;
}

/* ...and its wait an acquire: QUEUED and WOKEN bring the notices. */
static int await(char **av)
{
	size_t pages = num(av[1]), words = pages * PAGE / 4, i;
	uint32_t value = num(av[2]), first, sum = 0;
	int64_t ns = (int64_t)num(av[4]) * 1000000000;
	time_t end = time(NULL) + num(av[4]);
	volatile uint32_t *p = region(av[0], pages, SDSM_REGION_F_RELEASE);
	unsigned long wrong = 0;
	int err;

	for (i = 0; i < words; i++)
		sum += p[i];
	first = p[0];
	printf("ready %u\n", sum);
	fflush(stdout);
	if (wait_file(av[3], end))
		return 2;
	err = futex_op(p, SDSM_FUTEX_WAIT, first, ns, NULL);
	for (i = 1; i < words; i++)
		if (p[i] != value && wrong++ < 5)
			fprintf(stderr, "word %zu: %u\n", i, p[i]);
	printf("wait %s first %u wrong %lu\n",
	       !err ? "woken" : err == EAGAIN ? "EAGAIN" : strerror(err),
	       p[0], wrong);
	return (err && err != EAGAIN) || p[0] != value || wrong;
}

struct counter_arg {
	volatile uint32_t *word;
	uint64_t lock;
	unsigned long rounds;
};

static void *counter_thread(void *v)
{
	struct counter_arg *a = v;
	struct timespec t0, t1;
	unsigned long r;

	for (r = 0; r < a->rounds; r++) {
		lock_op(a->lock, SDSM_LOCK_ACQUIRE);
		++*a->word;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t1);
		while ((t1.tv_sec - t0.tv_sec) * 1000000000L +
		       t1.tv_nsec - t0.tv_nsec < 200000);
		lock_op(a->lock, SDSM_LOCK_RELEASE);
	}
	return NULL;
}

/* Counters 64 bytes apart in one page. */
#define COUNTERS	(PAGE / 64)

static int counters(char **av)
{
	unsigned long node = num(av[1]), nn = num(av[2]), nt = num(av[3]);
	unsigned long rounds = num(av[4]), t, wrong = 0;
	uint64_t lock = num(av[5]), bar = num(av[6]);
	struct counter_arg arg[COUNTERS];
	pthread_t th[COUNTERS];
	volatile uint32_t *p;

	if (!nt || nt > COUNTERS || node >= nn) {
		fprintf(stderr, "rc_util: 1 to %lu threads, NODE below NNODES\n",
			COUNTERS);
		return 3;
	}
	p = region(av[0], 1, SDSM_REGION_F_RELEASE);
	for (t = 0; t < nt; t++)
		arg[t] = (struct counter_arg){ p + t * 16, lock + t, rounds };
	barrier_count(bar, nn);
	for (t = 0; t < nt; t++) {
		errno = pthread_create(&th[t], NULL, counter_thread, &arg[t]);
		if (errno)
			die("pthread_create");
	}
	for (t = 0; t < nt; t++)
		pthread_join(th[t], NULL);
	barrier_count(bar, nn);
	for (t = 0; t < nt; t++) {
		uint32_t v, want = nn * rounds;

		lock_op(arg[t].lock, SDSM_LOCK_ACQUIRE);
		v = *arg[t].word;
		lock_op(arg[t].lock, SDSM_LOCK_RELEASE);
		if (v != want && wrong++ < 5)
			fprintf(stderr, "counter %lu: %u, want %u\n", t, v,
				want);
	}
	printf("counters %lu rounds %lu wrong %lu\n", nt, rounds, wrong);
	return !!wrong;
}

static const struct {
	const char *name;
	int args;
	int (*fn)(char **av);
} cmds[] = {
	{ "disjoint", 6, disjoint },
	{ "write", 4, writer },
	{ "write_first", 4, write_first },
	{ "read", 5, reader },
	{ "read_rest", 6, read_rest },
	{ "stale", 6, stale },
	{ "mixed", 5, mixed },
	{ "bar_write", 5, bar_write },
	{ "bar_read", 6, bar_read },
	{ "post", 3, post },
	{ "await", 5, await },
	{ "counters", 7, counters },
};

int main(int argc, char **argv)
{
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		if (argc - 2 != cmds[i].args)
			break;
		fd = open("/dev/sdsm", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			die("/dev/sdsm");
		return cmds[i].fn(argv + 2);
	}
	fprintf(stderr, "usage: rc_util disjoint|write|write_first|read|read_rest|stale|mixed|bar_write|bar_read|post|await|counters ARGS (see the source)\n");
	return 3;
}
