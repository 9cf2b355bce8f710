// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_mem_util - small actions on sdsm coherent memory for the cluster
 * tests (run_cluster_tests.sh drives several nodes with them).
 *
 *   sdsm_mem_util [-L] [-p PERM] [-m NODE] [-r NAME] CMD ARGS...
 *
 * -L locks the process's memory first (mlockall), so that reclaim in a
 * full memory cgroup cannot evict its text (a refault would then need a
 * charge of its own), and makes fill write one word of every 2 MiB of its
 * range first, so that the page tables its faults need exist before the
 * cgroup is full (the kernel charges a page table with the OOM killer
 * allowed; mem_cgroup_charge was OOM-killed so once).  -p PERM gives
 * create the permission bits PERM (octal; SDSM_REGION_F_MODE), -m NODE
 * the manager NODE (SDSM_REGION_F_MANAGER).  -r NAME works in the named
 * region (opened by name), else the default region.  Offsets are bytes
 * from the start of the region.  Exit status 0 on success, 1 on a failed
 * check, 2 on a usage or system error.
 *
 *   info                          node_id nr_nodes features (hex)
 *   create NAME LEN MODE [MASK [BLOCK|NODE]]  prints "ID OFFSET"
 *                                 MODE: interleave bind preferred first
 *   destroy NAME                  destroy by name
 *   access ID [destroy]           what this user may do with region ID, one
 *                                 line: "open=R ro=R rw=R mprotect=R
 *                                 setpol=R create=R destroy=R val=V", R: OK,
 *                                 an errno name or - (not tried); V: word 0
 *                                 read through the read-only mapping
 *   fill OFF LEN SEED             write pattern words
 *   check OFF LEN SEED [STEP]     verify them (every STEP-th page)
 *   check2 OFF1 OFF2 LEN SEED     verify both ranges, a page of each in
 *                                 turn (two sequential streams at once)
 *   zero OFF LEN                  verify every word is 0
 *   poke OFF VAL / peek OFF       one u64
 *   waitval OFF VAL MS            read until *OFF == VAL, at most MS ms
 *   mp_writer OFF ITER            message passing: data page OFF, flag page
 *                                 OFF+4096; data=i then flag=i
 *   mp_reader OFF ITER MS         check data >= flag while flag < ITER
 *   pingpong OFF ROLE ROUNDS MS   two nodes pass word 0 of page OFF back
 *                                 and forth: role 0 stores 2i+1 and waits
 *                                 for 2i+2, role 1 the other way round,
 *                                 spinning with sched_yield(); fails on a
 *                                 value out of turn or after MS ms
 *   falseshare OFF SLOT ITER      increment u64 slot SLOT of page OFF ITER
 *                                 times, each a read-modify-write
 *   scan_writer OFF PAGES R0 R1   round r = R0..R1 stores r in word 0 of
 *                                 pages PAGES-1 down to 0 of OFF
 *   scan_reader OFF PAGES ROUNDS MS  read word 0 of pages 0 up to PAGES-1,
 *                                 again and again until page 0 holds
 *                                 ROUNDS (at most MS ms): a scan must never
 *                                 see a page older than one before it
 *   home OFF...                   SDSM_IOC_QUERY_HOME, one line per OFF
 *   setpol OFF LEN MODE [MASK [BLOCK|NODE]]   SDSM_IOC_SET_POLICY
 *   fork_watch OFF OLD MS         fork; the child waits until *OFF != OLD
 *                                 and prints it; parent waits for the child
 *   expect_sigbus OFF MS          read OFF; succeed if SIGBUS arrives (prints
 *                                 the ms it took) within MS ms
 *   touch_loop OFF LEN MS         read and write every page until MS pass
 *   hammer OFF MS                 atomic increments of OFF for MS ms;
 *                                 prints how many
 *   hammer_sigbus OFF MS          atomic increments of OFF until SIGBUS, at
 *                                 most MS ms; prints how many and the ms
 *                                 from the last one done to the SIGBUS
 *   read_loop OFF MS              read OFF for MS ms; fails if it ever goes
 *                                 down; prints the reads
 *   wo_read OFF                   read OFF through a mapping mprotect()ed
 *                                 to PROT_WRITE alone; prints it and the
 *                                 page faults the read took, or fails if
 *                                 the read takes 10 s
 *   burst OFF PAGES SEED          PAGES threads (at most 256) each read
 *                                 page K of OFF at once and check its
 *                                 pattern of fill SEED: PAGES read faults
 *                                 in flight together
 *   window OFF LEN STEP...        map [OFF, OFF+LEN) alone, between two
 *                                 16-page guards of untouched anonymous
 *                                 memory; each STEP touches a page of it:
 *                                 K reads word 0 of page K, wK stores K
 *                                 there (no read first); then reads every
 *                                 page, guards first, and prints which
 *                                 read took no fault, i.e. had a PTE:
 *                                 "LOW WINDOW HIGH", a 1 or 0 per page
 *                                 (mincore and pagemap do not see the
 *                                 PTEs of a VM_PFNMAP mapping)
 *   lifecycle SEED BASE           mapping lifecycle in region -r NAME (9
 *                                 pages or more): partial munmap, destroy
 *                                 refused while any piece is mapped, mremap
 *                                 move and shrink (grow: EFAULT), 8 threads
 *                                 faulting page 8 (word 0 = BASE) at once,
 *                                 each adding 2000; leaves word 0 of page 5
 *                                 = SEED, written through the moved
 *                                 mapping; one line per step
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdsm.h>

static int fd = -1;
static uint32_t region_id;	/* the region open_region() found */
static uint64_t region_off;	/* mmap offset of the region */
static uint64_t region_len;

static void die(const char *what)
{
	fprintf(stderr, "sdsm_mem_util: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	else if (*end)
		fprintf(stderr, "sdsm_mem_util: bad number '%s'\n", s), exit(2);
	return v;
}

static volatile uint64_t *map(uint64_t off, uint64_t len)
{
	uint64_t a = off & ~4095ULL, l = (off - a + len + 4095) & ~4095ULL;
	char *p;

	p = mmap(NULL, l, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 region_off + a);
	if (p == MAP_FAILED)
		die("mmap");
	return (volatile uint64_t *)(p + (off - a));
}

static uint64_t pattern(uint64_t seed, uint64_t off)
{
	return (seed * 0x9e3779b97f4a7c15ULL) ^ (off * 0xff51afd7ed558ccdULL) ^
	       off;
}

static int parse_policy(int argc, char **argv, struct sdsm_policy *p)
{
	memset(p, 0, sizeof(*p));
	if (argc < 1)
		return -1;
	if (!strcmp(argv[0], "interleave"))
		p->mode = SDSM_POLICY_INTERLEAVE;
	else if (!strcmp(argv[0], "bind"))
		p->mode = SDSM_POLICY_BIND;
	else if (!strcmp(argv[0], "preferred"))
		p->mode = SDSM_POLICY_PREFERRED;
	else if (!strcmp(argv[0], "first"))
		p->mode = SDSM_POLICY_FIRST_TOUCH;
	else
		return -1;
	if (p->mode == SDSM_POLICY_PREFERRED) {
		if (argc > 1)
			p->preferred_node = num(argv[1]);
		return 0;
	}
	if (argc > 1 && p->mode != SDSM_POLICY_FIRST_TOUCH)
		p->nodemask = num(argv[1]);
	if (argc > 2 && p->mode == SDSM_POLICY_INTERLEAVE)
		p->block_size = num(argv[2]);
	return 0;
}

static int open_region(const char *name)
{
	struct sdsm_region_info info = { .size = sizeof(info) };

	strncpy(info.name, name, sizeof(info.name) - 1);
	if (ioctl(fd, SDSM_IOC_REGION_OPEN, &info))
		return -1;
	region_id = info.region_id;
	region_off = info.offset;
	region_len = info.length;
	return info.region_id;
}

/* "OK" for 0, else the name of errno. */
static const char *res(int ret)
{
	return ret ? strerrorname_np(errno) : "OK";
}

/*
 * access ID: try, as this user, what the permissions of region ID govern.
 * INFO (not checked, like sysfs) gives the name and the offset.
 */
static int region_access(uint32_t id, int destroy)
{
	struct sdsm_region_info info = { .size = sizeof(info) };
	struct sdsm_region_create c = { .size = sizeof(c) };
	struct sdsm_region_destroy d = { .size = sizeof(d) };
	struct sdsm_set_policy s = { .size = sizeof(s) };
	const char *open_r, *ro_r, *rw_r, *create_r, *destroy_r = "-";
	const char *mprot_r = "-", *setpol_r = "-";
	char val[32] = "-";
	void *ro, *rw;

	info.region_id = id;
	if (ioctl(fd, SDSM_IOC_REGION_INFO, &info))
		die("SDSM_IOC_REGION_INFO");
	open_r = res(open_region(info.name) < 0);
	ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, info.offset);
	ro_r = res(ro == MAP_FAILED);
	rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  info.offset);
	rw_r = res(rw == MAP_FAILED);
	if (rw != MAP_FAILED)
		munmap(rw, 4096);
	if (ro != MAP_FAILED) {
		snprintf(val, sizeof(val), "%" PRIu64,
			 *(volatile uint64_t *)ro);
		s.addr = (uintptr_t)ro;
		s.length = 4096;
		s.policy.mode = SDSM_POLICY_FIRST_TOUCH;
		setpol_r = res(ioctl(fd, SDSM_IOC_SET_POLICY, &s));
		mprot_r = res(mprotect(ro, 4096, PROT_READ | PROT_WRITE));
		munmap(ro, 4096);
	}
	/* CREATE of the same name, size and policy opens it. */
	memcpy(c.name, info.name, sizeof(c.name));
	c.length = info.length;
	c.policy = info.policy;
	create_r = res(ioctl(fd, SDSM_IOC_REGION_CREATE, &c));
	d.region_id = id;
	if (destroy)
		destroy_r = res(ioctl(fd, SDSM_IOC_REGION_DESTROY, &d));
	printf("open=%s ro=%s rw=%s mprotect=%s setpol=%s create=%s destroy=%s val=%s\n",
	       open_r, ro_r, rw_r, mprot_r, setpol_r, create_r, destroy_r, val);
	return 0;
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, 1);
}

/* Whether reading @p faults (SIGSEGV or SIGBUS): an address not mapped. */
static int faults(volatile uint64_t *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, osegv, obus;
	volatile int hit = 0;

	sigaction(SIGSEGV, &sa, &osegv);
	sigaction(SIGBUS, &sa, &obus);
	if (sigsetjmp(sigbus_jmp, 1))
		hit = 1;
	else
		(void)*p;
	sigaction(SIGSEGV, &osegv, NULL);
	sigaction(SIGBUS, &obus, NULL);
	return hit;
}

#define LC_PAGE		4096
#define LC_THREADS	8
#define LC_ADDS		2000

struct lc_herd {
	volatile uint64_t *word;
	pthread_barrier_t start;
};

/* One of the threads that fault one page at once, then add to it. */
static void *lc_thread(void *arg)
{
	struct lc_herd *h = arg;
	int i;

	pthread_barrier_wait(&h->start);
	for (i = 0; i < LC_ADDS; i++)
		__atomic_add_fetch(h->word, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

#define BURST_MAX	256

struct burst_thread {
	pthread_t tid;
	pthread_barrier_t *start;
	volatile uint64_t *page;
	uint64_t off, seed, bad;
};

static void *burst_thread(void *arg)
{
	struct burst_thread *t = arg;
	unsigned int i;

	pthread_barrier_wait(t->start);
	for (i = 0; i < LC_PAGE / 8; i++)
		if (t->page[i] != pattern(t->seed, t->off + i * 8))
			t->bad++;
	return NULL;
}

/* burst OFF PAGES SEED (see the head of the file). */
static int burst(uint64_t off, uint64_t pages, uint64_t seed)
{
	static struct burst_thread t[BURST_MAX];
	pthread_barrier_t start;
	volatile uint64_t *p;
	uint64_t k, bad = 0;

	if (!pages || pages > BURST_MAX) {
		fprintf(stderr, "sdsm_mem_util: burst takes 1..%d pages\n",
			BURST_MAX);
		return 2;
	}
	p = map(off, pages * LC_PAGE);
	pthread_barrier_init(&start, NULL, pages);
	for (k = 0; k < pages; k++) {
		t[k].start = &start;
		t[k].page = p + k * (LC_PAGE / 8);
		t[k].off = off + k * LC_PAGE;
		t[k].seed = seed;
		if (pthread_create(&t[k].tid, NULL, burst_thread, &t[k]))
			die("pthread_create");
	}
	for (k = 0; k < pages; k++) {
		pthread_join(t[k].tid, NULL);
		if (t[k].bad)
			fprintf(stderr, "page %" PRIu64 ": %" PRIu64 " words wrong\n",
				k, t[k].bad);
		bad += t[k].bad;
	}
	return bad ? 1 : 0;
}

#define WINDOW_GUARD	16	/* pages each side */

/* This thread's page faults so far. */
static long thread_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage");
	return ru.ru_minflt + ru.ru_majflt;
}

/* Read @addr: '1' if that took no fault (a PTE was there), else '0'. */
static char window_probe(const char *addr)
{
	long before = thread_faults();

	(void)*(volatile const char *)addr;
	return thread_faults() == before ? '1' : '0';
}

/* window OFF LEN STEP... (see the head of the file). */
static int window(uint64_t off, uint64_t len, int nsteps, char **steps)
{
	size_t g = WINDOW_GUARD * LC_PAGE, l = (len + LC_PAGE - 1) & ~(LC_PAGE - 1);
	char lo[WINDOW_GUARD + 1] = "", hi[WINDOW_GUARD + 1] = "", *win;
	char *res, *p, *end;
	uint64_t pg;
	size_t k;
	int i;

	if ((off & (LC_PAGE - 1)) || !l) {
		fprintf(stderr, "sdsm_mem_util: window wants a page-aligned OFF and a LEN\n");
		return 2;
	}
	win = calloc(l / LC_PAGE + 1, 1);
	if (!win)
		die("calloc");
	res = mmap(NULL, 2 * g + l, PROT_READ,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		die("mmap guards");
	p = mmap(res + g, l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, region_off + off);
	if (p == MAP_FAILED)
		die("mmap window");
	for (i = 0; i < nsteps; i++) {
		int w = steps[i][0] == 'w';

		pg = strtoull(steps[i] + w, &end, 0);
		if (*end || pg >= l / LC_PAGE) {
			fprintf(stderr, "sdsm_mem_util: bad window step '%s'\n",
				steps[i]);
			return 2;
		}
		if (w)
			*(volatile uint64_t *)(p + pg * LC_PAGE) = pg;
		else
			(void)*(volatile uint64_t *)(p + pg * LC_PAGE);
	}
	/*
	 * Guards first: each of their pages faults once (the zero page)
	 * unless something put a PTE there.  Then the window: a page faults
	 * if it had no PTE, and may then map the ones after it, so the first
	 * missing page shows.
	 */
	for (k = 0; k < WINDOW_GUARD; k++) {
		lo[k] = window_probe(res + k * LC_PAGE);
		hi[k] = window_probe(p + l + k * LC_PAGE);
	}
	for (k = 0; k < l / LC_PAGE; k++)
		win[k] = window_probe(p + k * LC_PAGE);
	printf("%s %s %s\n", lo, win, hi);
	free(win);
	return 0;
}

/*
 * lifecycle SEED BASE in the region of -r (see the head of the file).
 * Every step prints "STEP ok" or "STEP FAILED: why"; the exit status is 1
 * if any failed.
 */
static int lifecycle(uint64_t seed, uint64_t base)
{
	struct sdsm_region_destroy d = {
		.size = sizeof(d),
		.region_id = region_id,
	};
	pthread_t tids[LC_THREADS];
	struct lc_herd herd;
	volatile uint64_t *w;
	char *p, *q, *r;
	int bad = 0, busy, k;

#define LC_CHECK(step, cond, ...) do {					\
		if (cond) {						\
			printf("%s ok\n", step);			\
		} else {						\
			printf("%s FAILED: ", step);			\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			bad = 1;					\
		}							\
	} while (0)

	if (region_len < 9 * LC_PAGE) {
		fprintf(stderr, "lifecycle: needs -r NAME, a region of 9 pages or more\n");
		return 2;
	}
	p = mmap(NULL, 8 * LC_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 region_off);
	if (p == MAP_FAILED)
		die("mmap");
	for (k = 0; k < 8; k++)
		*(volatile uint64_t *)(p + k * LC_PAGE) = pattern(seed, k);

	/* Head, middle and tail pages unmapped: the rest keeps its data. */
	if (munmap(p, LC_PAGE) || munmap(p + 3 * LC_PAGE, LC_PAGE) ||
	    munmap(p + 7 * LC_PAGE, LC_PAGE))
		die("munmap");
	busy = 0;
	for (k = 0; k < 8; k++) {
		volatile uint64_t *v = (volatile uint64_t *)(p + k * LC_PAGE);
		int gone = k == 0 || k == 3 || k == 7;

		if (gone ? !faults(v) : faults(v) || *v != pattern(seed, k))
			busy |= 1 << k;
	}
	LC_CHECK("partial_munmap", !busy,
		 "pages wrong (bit k: page k; 0x89 should fault): %#x", busy);

	/* Two pieces are mapped (pages 1-2 and 4-6): destroy is refused. */
	busy = ioctl(fd, SDSM_IOC_REGION_DESTROY, &d) ? errno : 0;
	LC_CHECK("destroy_split_mapped", busy == EBUSY, "destroy: %s",
		 busy ? strerrorname_np(busy) : "done");

	/* Pages 4-6 moved elsewhere; the old place faults. */
	r = mmap(NULL, 3 * LC_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (r == MAP_FAILED)
		die("mmap");
	q = mremap(p + 4 * LC_PAGE, 3 * LC_PAGE, 3 * LC_PAGE,
		   MREMAP_MAYMOVE | MREMAP_FIXED, r);
	LC_CHECK("mremap_move", q == r && !faults((uint64_t *)(q)) &&
		 *(volatile uint64_t *)q == pattern(seed, 4) &&
		 *(volatile uint64_t *)(q + 2 * LC_PAGE) == pattern(seed, 6) &&
		 faults((uint64_t *)(p + 5 * LC_PAGE)),
		 "mremap %p -> %p: %s", p + 4 * LC_PAGE, q,
		 q == MAP_FAILED ? strerror(errno) : "data or old place wrong");
	if (q == MAP_FAILED)
		return 1;
	/* Written through the moved mapping: the test reads it elsewhere. */
	*(volatile uint64_t *)(q + LC_PAGE) = seed;

	/* A mapping cannot grow (VM_DONTEXPAND), in place or moved. */
	r = mremap(p + LC_PAGE, 2 * LC_PAGE, 4 * LC_PAGE, 0);
	busy = r == MAP_FAILED ? errno : 0;
	r = mremap(p + LC_PAGE, 2 * LC_PAGE, 4 * LC_PAGE, MREMAP_MAYMOVE);
	LC_CHECK("mremap_grow", busy == EFAULT && r == MAP_FAILED &&
		 errno == EFAULT && *(volatile uint64_t *)(p + LC_PAGE) ==
		 pattern(seed, 1), "grow: %s, grow moving: %s",
		 busy ? strerrorname_np(busy) : "done",
		 r == MAP_FAILED ? strerrorname_np(errno) : "done");

	/* Shrinking gives back the tail. */
	r = mremap(q, 3 * LC_PAGE, LC_PAGE, 0);
	LC_CHECK("mremap_shrink", r == q && faults((uint64_t *)(q + LC_PAGE)) &&
		 *(volatile uint64_t *)q == pattern(seed, 4),
		 "shrink: %s", r == MAP_FAILED ? strerror(errno) : "wrong");

	/*
	 * Page 8, which this process never touched (the test leaves it
	 * modified on another node): 8 threads fault it at once, then add.
	 */
	w = mmap(NULL, LC_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 region_off + 8 * LC_PAGE);
	if (w == MAP_FAILED)
		die("mmap");
	herd.word = w;
	pthread_barrier_init(&herd.start, NULL, LC_THREADS);
	for (k = 0; k < LC_THREADS; k++)
		if (pthread_create(&tids[k], NULL, lc_thread, &herd))
			die("pthread_create");
	for (k = 0; k < LC_THREADS; k++)
		pthread_join(tids[k], NULL);
	LC_CHECK("threads_one_page", *w == base + LC_THREADS * LC_ADDS,
		 "value %" PRIu64 ", want %" PRIu64, *w,
		 base + LC_THREADS * LC_ADDS);
	munmap((void *)w, LC_PAGE);

	/* Every piece unmapped: destroy is no longer refused for us. */
	munmap(p + LC_PAGE, 2 * LC_PAGE);
	munmap(q, LC_PAGE);
	return bad;
#undef LC_CHECK
}

int main(int argc, char **argv)
{
	const char *region = NULL, *perm = NULL, *manager = NULL;
	const char *cmd;
	bool locked = false;
	uint64_t i;

	if (argc > 1 && !strcmp(argv[1], "-L")) {
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			die("mlockall");
		locked = true;
		argv++;
		argc--;
	}
	if (argc > 2 && !strcmp(argv[1], "-p")) {
		perm = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 && !strcmp(argv[1], "-m")) {
		manager = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 && !strcmp(argv[1], "-r")) {
		region = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: sdsm_mem_util [-r NAME] CMD ARGS... (see the source)\n");
		return 2;
	}
	cmd = argv[1];
	argv += 2;
	argc -= 2;
	fd = open("/dev/sdsm", O_RDWR);
	if (fd < 0)
		die("open /dev/sdsm");
	if (region && open_region(region) < 0)
		die("SDSM_IOC_REGION_OPEN");

	if (!strcmp(cmd, "info")) {
		struct sdsm_info info = { .size = sizeof(info) };

		if (ioctl(fd, SDSM_IOC_GET_INFO, &info))
			die("SDSM_IOC_GET_INFO");
		printf("%u %u %llx\n", info.node_id, info.nr_nodes,
		       (unsigned long long)info.features);
		return 0;
	}
	if (!strcmp(cmd, "create") && argc >= 3) {
		struct sdsm_region_create c = { .size = sizeof(c) };

		strncpy(c.name, argv[0], sizeof(c.name) - 1);
		c.length = num(argv[1]);
		if (parse_policy(argc - 2, argv + 2, &c.policy))
			return 2;
		if (perm) {
			c.flags |= SDSM_REGION_F_MODE;
			c.mode = strtoul(perm, NULL, 8);
		}
		if (manager) {
			c.flags |= SDSM_REGION_F_MANAGER;
			c.manager = num(manager);
		}
		if (ioctl(fd, SDSM_IOC_REGION_CREATE, &c))
			die("SDSM_IOC_REGION_CREATE");
		printf("%u %llu\n", c.region_id, (unsigned long long)c.offset);
		return 0;
	}
	if (!strcmp(cmd, "access") && argc >= 1)
		return region_access(num(argv[0]),
				     argc > 1 && !strcmp(argv[1], "destroy"));
	if (!strcmp(cmd, "destroy") && argc >= 1) {
		struct sdsm_region_destroy d = { .size = sizeof(d) };
		int id = open_region(argv[0]);

		if (id < 0)
			die("SDSM_IOC_REGION_OPEN");
		d.region_id = id;
		if (ioctl(fd, SDSM_IOC_REGION_DESTROY, &d))
			die("SDSM_IOC_REGION_DESTROY");
		return 0;
	}
	if ((!strcmp(cmd, "fill") || !strcmp(cmd, "check")) && argc >= 3) {
		uint64_t off = num(argv[0]), len = num(argv[1]);
		uint64_t seed = num(argv[2]), step = 1, bad = 0;
		volatile uint64_t *p = map(off, len);

		if (argc > 3)
			step = num(argv[3]) ? num(argv[3]) : 1;
		/* A word in each page table's span first, see -L. */
		for (i = 0; locked && cmd[0] == 'f' && i < len / 8;
		     i += (2 << 20) / 8)
			p[i] = pattern(seed, off + i * 8);
		for (i = 0; i < len / 8; i++) {
			uint64_t want = pattern(seed, off + i * 8);

			if (cmd[0] == 'f') {
				p[i] = want;
				continue;
			}
			if ((i * 8 / 4096) % step) {
				i += 4096 / 8 - 1;
				continue;
			}
			if (p[i] != want && !bad++)
				fprintf(stderr, "mismatch at offset %" PRIu64 ": %" PRIx64 " != %" PRIx64 "\n",
					off + i * 8, p[i], want);
		}
		if (bad) {
			fprintf(stderr, "%" PRIu64 " words wrong\n", bad);
			return 1;
		}
		return 0;
	}
	if (!strcmp(cmd, "check2") && argc >= 4) {
		uint64_t off[2] = { num(argv[0]), num(argv[1]) };
		uint64_t len = num(argv[2]), seed = num(argv[3]), bad = 0, w;
		volatile uint64_t *p[2] = { map(off[0], len), map(off[1], len) };
		unsigned int k;

		for (i = 0; i < len / 8; i += 4096 / 8)
			for (k = 0; k < 2; k++)
				for (w = i; w < i + 4096 / 8 && w < len / 8; w++)
					bad += p[k][w] != pattern(seed, off[k] + w * 8);
		if (bad) {
			fprintf(stderr, "%" PRIu64 " words wrong\n", bad);
			return 1;
		}
		return 0;
	}
	if (!strcmp(cmd, "zero") && argc >= 2) {
		uint64_t off = num(argv[0]), len = num(argv[1]), bad = 0;
		volatile uint64_t *p = map(off, len);

		for (i = 0; i < len / 8; i++)
			if (p[i] && !bad++)
				fprintf(stderr, "offset %" PRIu64 " holds %" PRIx64 ", not 0\n",
					off + i * 8, p[i]);
		if (bad) {
			fprintf(stderr, "%" PRIu64 " words not zero\n", bad);
			return 1;
		}
		return 0;
	}
	if (!strcmp(cmd, "poke") && argc >= 2) {
		*map(num(argv[0]), 8) = num(argv[1]);
		return 0;
	}
	if (!strcmp(cmd, "peek") && argc >= 1) {
		printf("%" PRIu64 "\n", *map(num(argv[0]), 8));
		return 0;
	}
	if (!strcmp(cmd, "waitval") && argc >= 3) {
		volatile uint64_t *p = map(num(argv[0]), 8);
		uint64_t want = num(argv[1]), end = now_ms() + num(argv[2]);

		while (*p != want) {
			if (now_ms() > end) {
				fprintf(stderr, "value %" PRIu64 ", not %" PRIu64 "\n",
					*p, want);
				return 1;
			}
			usleep(1000);
		}
		return 0;
	}
	if (!strcmp(cmd, "mp_writer") && argc >= 2) {
		uint64_t off = num(argv[0]), n = num(argv[1]);
		volatile uint64_t *data = map(off, 8);
		volatile uint64_t *flag = map(off + 4096, 8);

		for (i = 1; i <= n; i++) {
			*data = i;
			__sync_synchronize();
			*flag = i;
			__sync_synchronize();
		}
		return 0;
	}
	if (!strcmp(cmd, "mp_reader") && argc >= 3) {
		uint64_t off = num(argv[0]), n = num(argv[1]);
		uint64_t end = now_ms() + num(argv[2]), reads = 0;
		volatile uint64_t *data = map(off, 8);
		volatile uint64_t *flag = map(off + 4096, 8);
		uint64_t f = 0, d;

		while (f < n) {
			f = *flag;
			__sync_synchronize();
			d = *data;
			reads++;
			if (d < f) {
				fprintf(stderr, "flag %" PRIu64 " seen before data (data %" PRIu64 ")\n",
					f, d);
				return 1;
			}
			if (now_ms() > end) {
				fprintf(stderr, "flag only reached %" PRIu64 " of %" PRIu64 "\n",
					f, n);
				return 1;
			}
		}
		printf("%" PRIu64 " reads\n", reads);
		return 0;
	}
	if (!strcmp(cmd, "pingpong") && argc >= 4) {
		uint64_t role = num(argv[1]), n = num(argv[2]);
		uint64_t end = now_ms() + num(argv[3]), want, v;
		volatile uint64_t *p;

		if (role > 1) {
			fprintf(stderr, "pingpong: ROLE is 0 or 1, not %" PRIu64 "\n",
				role);
			return 2;
		}
		p = map(num(argv[0]), 4096);
		for (i = 0; i < n; i++) {
			/* Role 0 stores 2i+1, role 1 waits for it. */
			want = 2 * i + 1;
			if (role == 0)
				p[0] = want++;
			while ((v = p[0]) != want) {
				if (v > want || now_ms() > end) {
					fprintf(stderr, "pingpong: round %" PRIu64 ": %" PRIu64 " while waiting for %" PRIu64 "\n",
						i, v, want);
					return 1;
				}
				sched_yield();
			}
			if (role == 1)
				p[0] = want + 1;
		}
		return 0;
	}
	if (!strcmp(cmd, "falseshare") && argc >= 3) {
		volatile uint64_t *p = map(num(argv[0]), 4096);
		uint64_t slot = num(argv[1]), n = num(argv[2]);

		for (i = 0; i < n; i++)
			p[slot] = p[slot] + 1;
		return 0;
	}
	if (!strcmp(cmd, "scan_writer") && argc >= 4) {
		uint64_t off = num(argv[0]), n = num(argv[1]), r;
		volatile uint64_t *p = map(off, n * 4096);

		for (r = num(argv[2]); r <= num(argv[3]); r++)
			for (i = n; i-- > 0;) {
				p[i * 512] = r;
				__sync_synchronize();
			}
		return 0;
	}
	if (!strcmp(cmd, "scan_reader") && argc >= 4) {
		uint64_t off = num(argv[0]), n = num(argv[1]);
		uint64_t rounds = num(argv[2]), end = now_ms() + num(argv[3]);
		volatile uint64_t *p = map(off, n * 4096);
		uint64_t scans = 0, first = 0, v, prev;

		/* Written in descending order: ascending reads never drop. */
		while (first < rounds) {
			first = prev = p[0];
			for (i = 1; i < n; i++) {
				__sync_synchronize();
				v = p[i * 512];
				if (v < prev) {
					fprintf(stderr, "scan %" PRIu64 ": page %" PRIu64 " holds %" PRIu64 " after page %" PRIu64 " held %" PRIu64 "\n",
						scans, i, v, i - 1, prev);
					return 1;
				}
				prev = v;
			}
			scans++;
			if (now_ms() > end) {
				fprintf(stderr, "page 0 only reached %" PRIu64 " of %" PRIu64 "\n",
					first, rounds);
				return 1;
			}
		}
		printf("%" PRIu64 " scans\n", scans);
		return 0;
	}
	if (!strcmp(cmd, "hammer") && argc >= 2) {
		/* Atomic increments of one word for MS ms; prints how many. */
		volatile uint64_t *p = map(num(argv[0]), 4096);
		uint64_t end = now_ms() + num(argv[1]), n = 0;

		while (now_ms() < end) {
			__atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
			n++;
		}
		printf("%" PRIu64 "\n", n);
		return 0;
	}
	if (!strcmp(cmd, "hammer_sigbus") && argc >= 2) {
		volatile uint64_t *p = map(num(argv[0]), 4096);
		uint64_t ms = num(argv[1]), end = now_ms() + ms;
		volatile uint64_t n = 0, last = now_ms();

		signal(SIGBUS, on_sigbus);
		if (sigsetjmp(sigbus_jmp, 1)) {
			printf("%" PRIu64 " %" PRIu64 "\n", (uint64_t)n,
			       now_ms() - last);
			return 0;
		}
		while (now_ms() < end) {
			__atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
			n++;
			last = now_ms();
		}
		fprintf(stderr, "%" PRIu64 " increments and no SIGBUS in %" PRIu64 " ms\n",
			(uint64_t)n, ms);
		return 1;
	}
	if (!strcmp(cmd, "wo_read") && argc >= 1) {
		volatile uint64_t *p = map(num(argv[0]), 8);
		uintptr_t a = (uintptr_t)p & ~4095UL;
		struct rusage r0, r1;
		uint64_t v;

		if (mprotect((void *)a, 4096, PROT_WRITE))
			die("mprotect");
		alarm(10);	/* SIGALRM ends a read that faults for ever */
		getrusage(RUSAGE_SELF, &r0);
		v = *p;
		getrusage(RUSAGE_SELF, &r1);
		printf("%" PRIu64 " %ld\n", v, r1.ru_minflt - r0.ru_minflt);
		return 0;
	}
	if (!strcmp(cmd, "read_loop") && argc >= 2) {
		volatile uint64_t *p = map(num(argv[0]), 4096);
		uint64_t end = now_ms() + num(argv[1]), n = 0, prev = 0, v;

		while (now_ms() < end) {
			v = *p;
			if (v < prev) {
				fprintf(stderr, "read %" PRIu64 " after %" PRIu64 "\n",
					v, prev);
				return 1;
			}
			prev = v;
			n++;
		}
		printf("%" PRIu64 "\n", n);
		return 0;
	}
	if (!strcmp(cmd, "home") && argc >= 1) {
		struct sdsm_query_home q = { .size = sizeof(q) };
		uint64_t *addrs = calloc(argc, sizeof(*addrs));
		int32_t *homes = calloc(argc, sizeof(*homes));
		int k;

		for (k = 0; k < argc; k++)
			addrs[k] = (uintptr_t)map(num(argv[k]), 8);
		q.count = argc;
		q.addrs = (uintptr_t)addrs;
		q.homes = (uintptr_t)homes;
		if (ioctl(fd, SDSM_IOC_QUERY_HOME, &q))
			die("SDSM_IOC_QUERY_HOME");
		for (k = 0; k < argc; k++)
			printf("%d\n", homes[k]);
		return 0;
	}
	if (!strcmp(cmd, "setpol") && argc >= 3) {
		struct sdsm_set_policy s = { .size = sizeof(s) };
		uint64_t len = num(argv[1]);

		s.addr = (uintptr_t)map(num(argv[0]), len);
		s.length = len;
		if (parse_policy(argc - 2, argv + 2, &s.policy))
			return 2;
		if (ioctl(fd, SDSM_IOC_SET_POLICY, &s))
			die("SDSM_IOC_SET_POLICY");
		return 0;
	}
	if (!strcmp(cmd, "fork_watch") && argc >= 3) {
		volatile uint64_t *p = map(num(argv[0]), 8);
		uint64_t old = num(argv[1]), ms = num(argv[2]);
		int status;
		pid_t pid;

		if (*p != old) {
			fprintf(stderr, "parent sees %" PRIu64 " before fork\n", *p);
			return 1;
		}
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			uint64_t end = now_ms() + ms;

			printf("child-ready\n");
			fflush(stdout);
			while (*p == old) {
				if (now_ms() > end) {
					fprintf(stderr, "child never saw a change\n");
					_exit(1);
				}
				usleep(1000);
			}
			printf("%" PRIu64 "\n", *p);
			fflush(stdout);	/* _exit() does not flush stdio */
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0)
			die("waitpid");
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (!strcmp(cmd, "expect_sigbus") && argc >= 2) {
		volatile uint64_t *p = map(num(argv[0]), 8);
		uint64_t t0 = now_ms(), ms = num(argv[1]);
		volatile uint64_t v;

		signal(SIGBUS, on_sigbus);
		alarm((ms + 999) / 1000 + 1);
		if (sigsetjmp(sigbus_jmp, 1)) {
			printf("%" PRIu64 "\n", now_ms() - t0);
			return now_ms() - t0 <= ms ? 0 : 1;
		}
		v = *p;
		fprintf(stderr, "read %" PRIu64 " without SIGBUS\n", (uint64_t)v);
		return 1;
	}
	if (!strcmp(cmd, "lifecycle") && argc >= 2)
		return lifecycle(num(argv[0]), num(argv[1]));
	if (!strcmp(cmd, "window") && argc >= 2)
		return window(num(argv[0]), num(argv[1]), argc - 2, argv + 2);
	if (!strcmp(cmd, "burst") && argc >= 3)
		return burst(num(argv[0]), num(argv[1]), num(argv[2]));
	if (!strcmp(cmd, "touch_loop") && argc >= 3) {
		uint64_t off = num(argv[0]), len = num(argv[1]);
		uint64_t end = now_ms() + num(argv[2]);
		volatile uint64_t *p = map(off, len);

		while (now_ms() < end)
			for (i = 0; i < len / 8; i += 512)
				p[i] = p[i] + 1;
		return 0;
	}
	fprintf(stderr, "sdsm_mem_util: unknown command or missing arguments: %s\n",
		cmd);
	return 2;
}
