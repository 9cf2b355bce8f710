// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_fuzz - a typed fuzzer of /dev/sdsm (issue 14): random sequences of
 * open, close, every ioctl of uapi/linux/sdsm.h, mmap, munmap, mremap,
 * madvise, mprotect, loads and stores to mapped pages and fork, from
 * several threads at once.
 *
 *   sdsm_fuzz [--seed N] [--calls N] [--seconds S] [--threads T] [--trace]
 *             [--ops NAME,NAME...] [--check-maps]
 *
 * "Typed": each thread keeps a table of its open files of /dev/sdsm and of
 * its mappings, and the process a table of the regions it created, opened
 * or learned of; a step picks an operation and builds valid arguments from
 * those tables, then, with some probability, one defect: a size field of
 * 0, too small, larger with a zero or a non-zero tail, a bad pointer (NULL,
 * unmapped, a kernel address, read-only, running into an unmapped page), a
 * reserved field or an unknown flag set, a bad name, length, policy, id,
 * address or timeout.  When one defect decides the answer, the errno must
 * be the one the ABI gives for it; otherwise it must be one that
 * uapi/linux/sdsm.h (and Documentation/coherent-memory.rst's errno table)
 * documents for that call, or one mmap(2), mremap(2), madvise(2) and
 * mprotect(2) document.  ENOMEM is accepted everywhere (and counted).
 *
 * It never blocks for long on purpose: every lock ACQUIRE, barrier and
 * futex WAIT has a timeout of at most 50 ms (a barrier without one only
 * with count 1 on this node alone).  A watchdog thread aborts the run with
 * exit status 3 when one call has been blocked for 30 s (a hang), and a
 * forked child that cannot be reaped within 30 s is a hang too.  Expected
 * SIGSEGV and SIGBUS on mapped pages are caught (sigsetjmp) and counted.
 *
 * Region names start with "fz.<node>.<seed>." (private to this run) or are
 * one of "fz.shared.0..3", which every node uses on purpose.  At the end
 * the mappings are unmapped, the files closed and every private region
 * (and each shared one that is no longer mapped anywhere) destroyed.
 *
 * Output: the seed first, then one line per violation (at most 50), then a
 * table of calls per operation and their results, then "calls=N ..." and
 * "result=PASS" or "result=FAIL".  Exit status: 0 pass, 1 an errno the ABI
 * does not document (or a fault where none may be, or a result that is
 * wrong), 2 usage or setup error, 3 a hang.  A run with --threads 1 and the
 * same --seed makes the same choices (the kernel's answers may differ);
 * --trace prints every call before it is made; --ops runs only the
 * operations named (as in the table: open,REGION_CREATE,mmap,...);
 * --check-maps checks the table of mappings against /proc/self/maps
 * after every call.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdsm.h>

#define PAGE		4096UL
#define MAX_THREADS	16
#define MAX_FDS		4
#define MAX_MAPS	8
#define MAX_REGIONS	48
#define NR_PRIVATE	12
#define NR_SHARED	4
#define SHARED_PAGES	16
/* Loads and stores stay in the first pages of a region: memory is bounded. */
#define TOUCH_PAGES	256
#define MAX_WAIT_MS	50
#define HANG_MS		30000
#define SLOW_MS		5000	/* a call this long gets a NOTE line */
#define MAX_REPORTS	50

#define ERR_SEGV	134	/* pseudo errnos of the tally: faults */
#define ERR_BUS		135
#define NR_ERR		136
#define ANY		(-1)	/* no single expected errno */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum op {
	OP_OPEN, OP_CLOSE, OP_GET_INFO, OP_CREATE, OP_REGION_OPEN, OP_INFO,
	OP_DESTROY, OP_SET_POLICY, OP_QUERY_HOME, OP_LOCK, OP_BARRIER,
	OP_FUTEX, OP_BAD_IOCTL, OP_MMAP, OP_MUNMAP, OP_MREMAP, OP_MADVISE,
	OP_MPROTECT, OP_TOUCH, OP_FORK, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"open", "close", "GET_INFO", "REGION_CREATE", "REGION_OPEN",
	"REGION_INFO", "REGION_DESTROY", "SET_POLICY", "QUERY_HOME", "LOCK",
	"BARRIER", "FUTEX", "bad_ioctl", "mmap", "munmap", "mremap",
	"madvise", "mprotect", "load/store", "fork",
};

/* Relative weights of the operations (--ops sets the others to 0). */
static unsigned int op_weight[NR_OPS] = {
	[OP_OPEN] = 2, [OP_CLOSE] = 2, [OP_GET_INFO] = 3, [OP_CREATE] = 6,
	[OP_REGION_OPEN] = 4, [OP_INFO] = 4, [OP_DESTROY] = 4,
	[OP_SET_POLICY] = 5, [OP_QUERY_HOME] = 6, [OP_LOCK] = 8,
	[OP_BARRIER] = 4, [OP_FUTEX] = 8, [OP_BAD_IOCTL] = 4, [OP_MMAP] = 10,
	[OP_MUNMAP] = 5, [OP_MREMAP] = 3, [OP_MADVISE] = 4, [OP_MPROTECT] = 4,
	[OP_TOUCH] = 20, [OP_FORK] = 1,
};

/* Errnos an ioctl of sdsm may give whatever the command (uapi header). */
static const int common_ioctl[] = { EFAULT, EINVAL, E2BIG, EOPNOTSUPP, 0 };

/* What each call documents besides the common ones (0-terminated). */
static const int *const allowed[NR_OPS] = {
	[OP_OPEN] = (const int[]){ EMFILE, ENFILE, 0 },
	[OP_CLOSE] = (const int[]){ 0 },
	[OP_GET_INFO] = (const int[]){ 0 },
	[OP_CREATE] = (const int[]){ EEXIST, ENOSPC, EHOSTDOWN, EFBIG,
				     ETIMEDOUT, EINTR, EACCES, ENOENT, 0 },
	[OP_REGION_OPEN] = (const int[]){ ENOENT, EACCES, 0 },
	[OP_INFO] = (const int[]){ ENOENT, 0 },
	[OP_DESTROY] = (const int[]){ ENOENT, EBUSY, EPERM, EHOSTDOWN,
				      ETIMEDOUT, EINTR, 0 },
	[OP_SET_POLICY] = (const int[]){ ENOSPC, EHOSTDOWN, ETIMEDOUT, EINTR,
					 EACCES, 0 },
	[OP_QUERY_HOME] = (const int[]){ EINTR, 0 },
	[OP_LOCK] = (const int[]){ EBUSY, EPERM, EDEADLK, ETIMEDOUT, EINTR,
				   EHOSTDOWN, 0 },
	[OP_BARRIER] = (const int[]){ ETIMEDOUT, EINTR, EHOSTDOWN, 0 },
	[OP_FUTEX] = (const int[]){ EAGAIN, ETIMEDOUT, EINTR, EHOSTDOWN,
				    ENOSPC, EIO, 0 },
	[OP_BAD_IOCTL] = (const int[]){ ENOTTY, 0 },
	[OP_MMAP] = (const int[]){ EINVAL, EPERM, ENXIO, EACCES, EEXIST,
				   EOVERFLOW, EAGAIN, 0 },
	[OP_MUNMAP] = (const int[]){ EINVAL, 0 },
	[OP_MREMAP] = (const int[]){ EINVAL, EFAULT, EAGAIN, 0 },
	/* MADV_REMOVE: fallocate(2) of a character device is ENODEV. */
	[OP_MADVISE] = (const int[]){ EINVAL, EACCES, EAGAIN, EBADF, EIO,
				      EPERM, EFAULT, EOPNOTSUPP, ENODEV, 0 },
	[OP_MPROTECT] = (const int[]){ EACCES, EINVAL, 0 },
	[OP_TOUCH] = (const int[]){ ERR_BUS, 0 },
	[OP_FORK] = (const int[]){ EAGAIN, 0 },
};

struct region {
	bool used;
	bool is_default;
	char name[SDSM_NAME_MAX];
	uint32_t id;
	uint64_t offset;
	uint64_t length;
};

struct map {
	char *addr;		/* NULL: free slot */
	size_t len;
	int prot;
	bool prot_known;	/* every page has @prot */
	bool no_fork;		/* MADV_DONTFORK may apply to a page */
	bool ro_file;		/* mapped from an O_RDONLY file */
	uint64_t rpage;		/* region page index of @addr */
	uint32_t rid;		/* region id */
};

struct thr {
	int idx;
	pthread_t tid;
	uint64_t rng;
	int fds[MAX_FDS];	/* -1: free; fd modes in fd_mode */
	int fd_mode[MAX_FDS];
	struct map maps[MAX_MAPS];
	char *scratch;		/* 2 pages read-write, then 1 PROT_NONE */
	char *ro;		/* 1 page, read-only but while filled */
	uint64_t unique;	/* for lock and barrier ids of its own */
	unsigned long call;
	_Atomic uint64_t busy_since;	/* ms, 0 when idle */
	char desc[256];
};

static struct {
	uint64_t seed;
	unsigned long max_calls;
	unsigned int seconds;
	unsigned int threads;
	bool trace;
	bool check_maps;
	int fd;			/* shared by every thread, open all along */
	uint32_t node_id;
	uint32_t nr_nodes;
	uint64_t features;
	uint64_t max_region;	/* bytes, max_region_mb of the module */
	uint64_t deadline_ms;
	pthread_mutex_t reg_lock;
	struct region regions[MAX_REGIONS];
	char priv_prefix[20];
	_Atomic unsigned long calls;
	_Atomic unsigned long tally[NR_OPS][NR_ERR];
	_Atomic uint64_t max_ms[NR_OPS];
	_Atomic unsigned long violations;
	_Atomic unsigned long hangs;
	_Atomic unsigned long forks_killed;
	_Atomic unsigned long notes;
	pthread_mutex_t out_lock;
} g = {
	.reg_lock = PTHREAD_MUTEX_INITIALIZER,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
};

static struct thr thrs[MAX_THREADS];

/*
 * A MAP_FIXED mmap or an MREMAP_FIXED move that fails may have unmapped
 * its target first; the range is then cleaned up.  These run alone, and
 * every mmap or mremap that lets the kernel pick an address waits for
 * them: the hole must not be handed to another thread before that.
 */
static pthread_rwlock_t layout;

static void layout_lock(bool fixed)
{
	if (fixed)
		pthread_rwlock_wrlock(&layout);
	else
		pthread_rwlock_rdlock(&layout);
}

static void layout_unlock(void)
{
	pthread_rwlock_unlock(&layout);
}
static __thread sigjmp_buf fault_jmp;
static __thread volatile sig_atomic_t fault_armed;
static __thread bool in_child;
static __thread bool child_bad;

/* ------------------------------------------------------------------ */
/* helpers                                                            */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* splitmix64: one state word per thread, seeded from --seed. */
static uint64_t rnd(struct thr *t)
{
	uint64_t z = (t->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct thr *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

/* True with probability 1/n. */
static bool one_in(struct thr *t, unsigned int n)
{
	return below(t, n) == 0;
}

static const char *err_name(int e)
{
	static char buf[NR_ERR][12];
	const char *s;

	if (e == 0)
		return "ok";
	if (e == ERR_SEGV)
		return "SIGSEGV";
	if (e == ERR_BUS)
		return "SIGBUS";
	s = strerrorname_np(e);
	if (s)
		return s;
	if (e > 0 && e < NR_ERR) {
		snprintf(buf[e], sizeof(buf[e]), "errno%d", e);
		return buf[e];
	}
	return "errno?";
}

static void describe(struct thr *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->desc, sizeof(t->desc), fmt, ap);
	va_end(ap);
	if (g.trace && !in_child) {
		pthread_mutex_lock(&g.out_lock);
		fprintf(stderr, "t%d #%lu %s\n", t->idx, t->call, t->desc);
		pthread_mutex_unlock(&g.out_lock);
	}
}

static bool in_list(const int *l, int e)
{
	for (; l && *l; l++)
		if (*l == e)
			return true;
	return false;
}

static void report(struct thr *t, const char *fmt, ...)
{
	unsigned long n = atomic_fetch_add(&g.violations, 1);
	char line[512];
	va_list ap;
	int len;

	len = snprintf(line, sizeof(line),
		       "VIOLATION seed=%" PRIu64 " thread=%d call=%lu%s: %s: ",
		       g.seed, t->idx, t->call, in_child ? " (child)" : "",
		       t->desc);
	va_start(ap, fmt);
	if (len > 0 && (size_t)len < sizeof(line))
		vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	va_end(ap);
	if (in_child) {
		child_bad = true;
		len = strnlen(line, sizeof(line) - 1);
		line[len] = '\n';
		if (write(2, line, len + 1) < 0)
			child_bad = true;
		return;
	}
	if (n >= MAX_REPORTS)
		return;
	pthread_mutex_lock(&g.out_lock);
	printf("%s\n", line);
	fflush(stdout);
	pthread_mutex_unlock(&g.out_lock);
}

/*
 * Count result @err (0 or an errno) of operation @op and judge it:
 * @expect is the one right answer, or ANY: then any answer documented.
 */
static void judge(struct thr *t, enum op op, int err, int expect)
{
	bool ok;

	if (err < 0 || err >= NR_ERR)
		err = NR_ERR - 1;
	atomic_fetch_add_explicit(&g.tally[op][err], 1, memory_order_relaxed);
	if (err == ENOMEM)
		ok = true;
	else if (expect != ANY)
		ok = err == expect;
	else
		ok = !err || in_list(allowed[op], err) ||
		     (op >= OP_GET_INFO && op <= OP_FUTEX &&
		      in_list(common_ioctl, err));
	if (!ok)
		report(t, "%s, want %s", err_name(err),
		       expect == ANY ? "a documented errno" :
		       err_name(expect));
}

/* A call starts and ends: for the watchdog and the latency maximum. */
static void busy(struct thr *t)
{
	atomic_store(&t->busy_since, now_ms());
}

/* A line about something odd that is no violation (at most 20). */
static void note(struct thr *t, const char *what)
{
	if (in_child || atomic_fetch_add(&g.notes, 1) >= 20)
		return;
	pthread_mutex_lock(&g.out_lock);
	printf("NOTE seed=%" PRIu64 " thread=%d call=%lu: %s: %s\n", g.seed,
	       t->idx, t->call, t->desc, what);
	pthread_mutex_unlock(&g.out_lock);
}

static void idle(struct thr *t, enum op op)
{
	uint64_t d = now_ms() - atomic_load(&t->busy_since);
	uint64_t m = atomic_load(&g.max_ms[op]);
	char buf[40];

	while (d > m && !atomic_compare_exchange_weak(&g.max_ms[op], &m, d))
		;
	atomic_store(&t->busy_since, 0);
	if (d >= SLOW_MS) {
		snprintf(buf, sizeof(buf), "took %llu ms",
			 (unsigned long long)d);
		note(t, buf);
	}
}

/* ------------------------------------------------------------------ */
/* tables                                                             */

static void shared_name(char *buf, unsigned int i)
{
	snprintf(buf, SDSM_NAME_MAX, "fz.shared.%u", i);
}

static void private_name(char *buf, unsigned int i)
{
	snprintf(buf, SDSM_NAME_MAX, "%s%u", g.priv_prefix, i);
}

/* Remember (or update) a region by id. */
static void region_learn(uint32_t id, const char *name, uint64_t offset,
			 uint64_t length)
{
	struct region *r, *free_slot = NULL;
	int i;

	pthread_mutex_lock(&g.reg_lock);
	for (i = 0; i < MAX_REGIONS; i++) {
		r = &g.regions[i];
		if (r->used && r->id == id)
			break;
		if (!r->used && !free_slot)
			free_slot = r;
	}
	r = i < MAX_REGIONS ? &g.regions[i] : free_slot;
	if (r) {
		r->used = true;
		r->is_default = id == SDSM_DEFAULT_REGION;
		r->id = id;
		memcpy(r->name, name, SDSM_NAME_MAX);
		r->name[SDSM_NAME_MAX - 1] = 0;
		r->offset = offset;
		r->length = length;
	}
	pthread_mutex_unlock(&g.reg_lock);
}

static void region_forget(uint32_t id)
{
	int i;

	pthread_mutex_lock(&g.reg_lock);
	for (i = 0; i < MAX_REGIONS; i++)
		if (g.regions[i].used && g.regions[i].id == id &&
		    id != SDSM_DEFAULT_REGION)
			g.regions[i].used = false;
	pthread_mutex_unlock(&g.reg_lock);
}

/* A copy of a random known region (the default one is always known). */
static struct region region_pick(struct thr *t)
{
	struct region r = { 0 };
	int i, n = 0, k;

	pthread_mutex_lock(&g.reg_lock);
	for (i = 0; i < MAX_REGIONS; i++)
		n += g.regions[i].used;
	k = below(t, n);
	for (i = 0; i < MAX_REGIONS; i++)
		if (g.regions[i].used && !k--) {
			r = g.regions[i];
			break;
		}
	pthread_mutex_unlock(&g.reg_lock);
	return r;
}

/* A region id that cannot exist: node 31 is never in a test cluster. */
static uint32_t absent_id(struct thr *t)
{
	return (31U << 16) | (uint32_t)(1 + below(t, 0xfffe));
}

static int map_pick(struct thr *t)
{
	int i, n = 0, k;

	for (i = 0; i < MAX_MAPS; i++)
		n += t->maps[i].addr != NULL;
	if (!n)
		return -1;
	k = below(t, n);
	for (i = 0; i < MAX_MAPS; i++)
		if (t->maps[i].addr && !k--)
			return i;
	return -1;
}

static struct map *map_free_slot(struct thr *t)
{
	int i;

	for (i = 0; i < MAX_MAPS; i++)
		if (!t->maps[i].addr)
			return &t->maps[i];
	return NULL;
}

/* A file to use: one of the thread's, or the process's shared one. */
static int fd_pick(struct thr *t, int *mode)
{
	int i = below(t, MAX_FDS + 1);

	if (i < MAX_FDS && t->fds[i] >= 0) {
		*mode = t->fd_mode[i];
		return t->fds[i];
	}
	*mode = O_RDWR;
	return g.fd;
}

/* An address of a page of @m that loads and stores may reach, or NULL. */
static char *map_page(struct thr *t, const struct map *m)
{
	size_t pages = m->len / PAGE, n;

	if (m->rpage >= TOUCH_PAGES)
		return NULL;
	n = pages < TOUCH_PAGES - m->rpage ? pages : TOUCH_PAGES - m->rpage;
	return m->addr + below(t, n) * PAGE;
}

/* ------------------------------------------------------------------ */
/* faults                                                             */

static void on_fault(int sig)
{
	if (!fault_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	fault_armed = 0;
	siglongjmp(fault_jmp, sig);
}

/* Load (@store false) or store a u32 at @p: 0, ERR_SEGV or ERR_BUS. */
static int access_word(uint32_t *p, bool store, uint32_t v, uint32_t *out)
{
	volatile uint32_t *w = p;
	int sig;

	sig = sigsetjmp(fault_jmp, 1);
	if (sig) {
		fault_armed = 0;
		return sig == SIGBUS ? ERR_BUS : ERR_SEGV;
	}
	fault_armed = 1;
	if (store)
		*w = v;
	else
		*out = *w;
	fault_armed = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the ioctl envelope: size, pointer, trailing bytes                  */

/*
 * Issue @cmd with the @ksize-byte struct @arg (its first version is
 * @min_size bytes).  With some probability one defect of the envelope
 * replaces @expect: a size below @min_size (EINVAL), a larger size with a
 * non-zero tail (E2BIG), a bad pointer (EFAULT).  Output members are copied
 * back into @arg on success.  Returns 0 or the errno.
 */
static int sdsm_ioctl(struct thr *t, int fd, unsigned long cmd, void *arg,
		      size_t ksize, size_t min_size, enum op op, int expect,
		      bool *enveloped)
{
	char *buf = t->scratch, *p = buf;
	uint32_t size = ksize;
	const char *what = "";
	int err, kind = below(t, 40);
	void *ptr;

	*enveloped = true;
	switch (kind) {
	case 0:
		size = 0;
		what = "size 0";
		expect = EINVAL;
		break;
	case 1:
		size = 1 + below(t, min_size - 1);
		what = "size too small";
		expect = EINVAL;
		break;
	case 2:
	case 3:
		size = ksize + 1 + below(t, 256);
		what = "larger, zero tail";
		break;
	case 4:
		size = ksize + 1 + below(t, 256);
		what = "larger, non-zero tail";
		expect = E2BIG;
		break;
	case 5:
		size = UINT32_MAX;
		what = "size 4G, tail zero up to an unmapped page";
		expect = EFAULT;
		break;
	case 6:
		what = "NULL";
		expect = EFAULT;
		break;
	case 7:
		what = "unmapped pointer";
		expect = EFAULT;
		break;
	case 8:
		what = "kernel pointer";
		expect = EFAULT;
		break;
	case 9:
		what = "struct runs into an unmapped page";
		expect = EFAULT;
		break;
	case 10:
		what = "read-only struct";
		/* Nothing written back: EFAULT unless the command failed. */
		if (expect == 0)
			expect = EFAULT;
		break;
	default:
		*enveloped = false;
		break;
	}
	memcpy(arg, &size, sizeof(size));
	ptr = buf;
	switch (kind) {
	case 2:
	case 3:
	case 4:
		memcpy(p, arg, ksize);
		memset(p + ksize, 0, size - ksize);
		if (kind == 4)
			p[ksize + below(t, size - ksize)] = 1 + below(t, 255);
		break;
	case 5:
		memcpy(p, arg, ksize);
		memset(p + ksize, 0, 2 * PAGE - ksize);
		break;
	case 6:
		ptr = NULL;
		break;
	case 7:
		ptr = buf + 2 * PAGE + below(t, PAGE);
		break;
	case 8:
		ptr = (void *)(one_in(t, 2) ? 0xffffffff81000000UL :
			       0xffff888000000000UL);
		break;
	case 9:
		/* Only 1 to min_size - 1 bytes are readable. */
		p = buf + 2 * PAGE - 1 - below(t, min_size - 1);
		memcpy(p, arg, buf + 2 * PAGE - p);
		ptr = p;
		break;
	case 10:
		if (mprotect(t->ro, PAGE, PROT_READ | PROT_WRITE))
			return errno;
		memcpy(t->ro, arg, ksize);
		if (mprotect(t->ro, PAGE, PROT_READ))
			return errno;
		ptr = t->ro;
		break;
	default:
		memcpy(p, arg, ksize);
		break;
	}
	if (*what) {
		size_t l = strlen(t->desc);

		snprintf(t->desc + l, sizeof(t->desc) - l, " [%s]", what);
	}
	if (g.trace && !in_child) {
		pthread_mutex_lock(&g.out_lock);
		fprintf(stderr, "t%d #%lu %s\n", t->idx, t->call, t->desc);
		pthread_mutex_unlock(&g.out_lock);
	}
	busy(t);
	err = ioctl(fd, cmd, ptr) ? errno : 0;
	idle(t, op);
	if (!err && (kind < 6 || kind > 10))
		memcpy(arg, p, ksize);
	judge(t, op, err, expect);
	return err;
}

#define offsetofend(T, m)	(offsetof(T, m) + sizeof(((T *)0)->m))

/* The first version of each struct (sizes below it are EINVAL). */
#define MIN_INFO	offsetofend(struct sdsm_info, features)
#define MIN_CREATE	offsetofend(struct sdsm_region_create, offset)
#define MIN_REGION	offsetofend(struct sdsm_region_info, policy)
#define MIN_DESTROY	offsetofend(struct sdsm_region_destroy, __reserved)
#define MIN_SET_POLICY	offsetofend(struct sdsm_set_policy, policy)
#define MIN_QUERY	offsetofend(struct sdsm_query_home, homes)
#define MIN_LOCK	offsetofend(struct sdsm_lock, lock_id)
#define MIN_BARRIER	offsetofend(struct sdsm_barrier, nodemask)
#define MIN_FUTEX	offsetofend(struct sdsm_futex, __reserved)

/* Issue @cmd with struct @s, first version @min, expecting @expect. */
#define IOC(t, fd, cmd, s, min, op, expect, env)			\
	sdsm_ioctl(t, fd, cmd, s, sizeof(*(s)), min, op, expect, env)

/* ------------------------------------------------------------------ */
/* argument generators                                                */

/* A policy: valid unless @bad; sets *@why for a bad one. */
static void gen_policy(struct thr *t, struct sdsm_policy *p, bool bad,
		       const char **why)
{
	uint64_t all = (1ULL << g.nr_nodes) - 1;

	memset(p, 0, sizeof(*p));
	p->mode = below(t, 4);
	switch (p->mode) {
	case SDSM_POLICY_INTERLEAVE:
		p->nodemask = one_in(t, 2) ? 0 : 1 + below(t, all);
		p->block_size = below(t, 4) * PAGE;
		break;
	case SDSM_POLICY_BIND:
		p->nodemask = one_in(t, 2) ? 0 : 1 + below(t, all);
		break;
	case SDSM_POLICY_PREFERRED:
		p->preferred_node = below(t, g.nr_nodes);
		break;
	}
	if (!bad)
		return;
	switch (below(t, 6)) {
	case 0:
		p->mode = 4 + below(t, 1000);
		*why = "unknown policy mode";
		break;
	case 1:
		p->mode = SDSM_POLICY_PREFERRED;
		p->preferred_node = g.nr_nodes + below(t, 100);
		*why = "preferred node out of range";
		break;
	case 2:
		p->mode = SDSM_POLICY_BIND;
		p->nodemask = 1ULL << (g.nr_nodes + below(t, 64 - g.nr_nodes));
		*why = "nodemask beyond the cluster";
		break;
	case 3:
		p->mode = SDSM_POLICY_INTERLEAVE;
		p->nodemask = 0;
		p->block_size = PAGE + 1 + below(t, PAGE - 1);
		*why = "block size not a multiple of 4096";
		break;
	case 4:
		p->mode = SDSM_POLICY_BIND;
		p->nodemask = 0;
		p->block_size = PAGE;
		*why = "block size for BIND";
		break;
	default:
		p->mode = SDSM_POLICY_FIRST_TOUCH;
		p->nodemask = 1;
		*why = "nodemask for FIRST_TOUCH";
		break;
	}
}

/*
 * A region name into @name (SDSM_NAME_MAX bytes): valid (private, shared,
 * or the longest one) unless it returns true, then *@why says what is
 * wrong with it.
 */
static bool gen_name(struct thr *t, char *name, const char **why,
		     bool *shared)
{
	memset(name, 0, SDSM_NAME_MAX);
	*shared = false;
	switch (below(t, 20)) {
	case 0:
		*why = "empty name";
		return true;
	case 1:
		memset(name, 'a' + below(t, 26), SDSM_NAME_MAX);
		*why = "unterminated name";
		return true;
	case 2:
		snprintf(name, SDSM_NAME_MAX, "fz/%u", (unsigned int)below(t, 9));
		*why = "bad character";
		return true;
	case 3:
		snprintf(name, SDSM_NAME_MAX, "fz %c\xff", 'a');
		*why = "bad characters";
		return true;
	case 4:
		/* The longest valid name: 31 characters and the NUL. */
		memset(name, 'z', SDSM_NAME_MAX - 1);
		memcpy(name, g.priv_prefix, strlen(g.priv_prefix));
		return false;
	case 5:
	case 6:
	case 7:
	case 8:
		shared_name(name, below(t, NR_SHARED));
		*shared = true;
		return false;
	default:
		private_name(name, below(t, NR_PRIVATE - 1));
		/* Garbage after the NUL does not count. */
		if (one_in(t, 4))
			name[SDSM_NAME_MAX - 1 - below(t, 4)] = '!';
		return false;
	}
}

/* ------------------------------------------------------------------ */
/* ioctls                                                             */

/* An unknown flag: bits 0-7 are left to flags the ABI may still add. */
static uint32_t unknown_flag(struct thr *t)
{
	return 1U << (8 + below(t, 24));
}

static void op_get_info(struct thr *t)
{
	struct sdsm_info info = { 0 };
	int expect = 0, fd, mode, err;
	const char *why = "valid";
	bool env;

	fd = fd_pick(t, &mode);
	if (one_in(t, 8)) {
		info.flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
	} else if (one_in(t, 8)) {
		info.__reserved = 1 + below(t, 0xffff);
		why = "reserved set";
		expect = EINVAL;
	}
	describe(t, "GET_INFO fd=%d %s", fd, why);
	err = IOC(t, fd, SDSM_IOC_GET_INFO, &info, MIN_INFO, OP_GET_INFO,
		  expect, &env);
	if (!err && (info.api_version != SDSM_API_VERSION ||
		     info.node_id != g.node_id ||
		     info.nr_nodes != g.nr_nodes ||
		     info.features != g.features))
		report(t, "GET_INFO says api %u node %u of %u features %#llx",
		       info.api_version, info.node_id,
		       info.nr_nodes,
		       (unsigned long long)info.features);
}

static void op_create(struct thr *t)
{
	struct sdsm_region_create cr = { 0 }, *c = &cr;
	const char *why = "valid";
	int expect = ANY, fd, mode, err;
	bool env, shared;

	fd = fd_pick(t, &mode);
	if (gen_name(t, c->name, &why, &shared))
		expect = EINVAL;
	c->flags = below(t, 16);	/* EXCL, OWNED, MODE, RELEASE */
	if (c->flags & SDSM_REGION_F_MODE)
		c->mode = below(t, 01000);
	if (shared) {
		c->length = SHARED_PAGES * PAGE;
		c->policy.mode = SDSM_POLICY_INTERLEAVE;
		c->flags &= ~SDSM_REGION_F_OWNED;
	} else {
		c->length = (1 + below(t, one_in(t, 8) ? 16384 : 64)) * PAGE;
		gen_policy(t, &c->policy, false, &why);
		/* A manager, where the policy leaves homes to one. */
		if (one_in(t, 4) &&
		    c->policy.mode != SDSM_POLICY_INTERLEAVE &&
		    (c->policy.mode != SDSM_POLICY_BIND ||
		     __builtin_popcountll(c->policy.nodemask ?:
					  (1ULL << g.nr_nodes) - 1) != 1)) {
			c->flags |= SDSM_REGION_F_MANAGER;
			c->manager = below(t, g.nr_nodes);
		}
	}
	if (expect == ANY) {
		switch (below(t, 16)) {
		case 0:
			c->length = 0;
			why = "length 0";
			expect = EINVAL;
			break;
		case 1:
			c->length = 1 + below(t, 64 * PAGE);
			if (c->length % PAGE == 0)
				c->length++;
			why = "length not a multiple of 4096";
			expect = EINVAL;
			break;
		case 2:
			c->length = g.max_region + PAGE *
				    (one_in(t, 2) ? 1 : below(t, 1ULL << 40));
			why = "longer than max_region_mb";
			expect = EINVAL;
			break;
		case 3:
			gen_policy(t, &c->policy, true, &why);
			expect = EINVAL;
			break;
		case 4:
			c->flags |= unknown_flag(t);
			why = "unknown flag";
			expect = EOPNOTSUPP;
			break;
		case 5:
			c->__reserved = 1 + below(t, 0xffff);
			why = "reserved set";
			expect = EINVAL;
			break;
		case 6:
			if (shared) {
				c->length = (1 + below(t, 64)) * PAGE;
				why = "shared name, other length";
			}
			break;
		case 7:
			/* The limit itself is fine (and costs no memory). */
			if (!shared) {
				c->length = g.max_region;
				why = "length max_region_mb";
			}
			break;
		case 8:
			c->flags |= SDSM_REGION_F_MODE;
			c->mode = 01000 + below(t, 0xffff);
			why = "mode above 0777";
			expect = EINVAL;
			break;
		case 9:
			c->flags &= ~SDSM_REGION_F_MODE;
			c->mode = 1 + below(t, 0777);
			why = "mode without SDSM_REGION_F_MODE";
			expect = EINVAL;
			break;
		case 10:
			c->flags &= ~SDSM_REGION_F_MANAGER;
			c->manager = 1 + below(t, 0xffff);
			why = "manager without SDSM_REGION_F_MANAGER";
			expect = EINVAL;
			break;
		case 11:
			c->flags |= SDSM_REGION_F_MANAGER;
			c->manager = g.nr_nodes + below(t, 0xffff);
			why = "manager not a node";
			expect = EINVAL;
			break;
		}
	}
	c->region_id = rnd(t);
	c->offset = rnd(t);
	describe(t, "REGION_CREATE fd=%d name='%.*s' len=%#llx flags=%#x mode=%#o manager=%u pol=%u/%u/%#llx/%#llx %s",
		 fd, SDSM_NAME_MAX, c->name, (unsigned long long)c->length,
		 c->flags, c->mode, c->manager, c->policy.mode,
		 c->policy.preferred_node,
		 (unsigned long long)c->policy.nodemask,
		 (unsigned long long)c->policy.block_size, why);
	err = IOC(t, fd, SDSM_IOC_REGION_CREATE, c, MIN_CREATE, OP_CREATE,
		  expect, &env);
	if (err)
		return;
	if (c->offset % PAGE || c->region_id == SDSM_DEFAULT_REGION)
		report(t, "created region %u at offset %#llx", c->region_id,
		       (unsigned long long)c->offset);
	region_learn(c->region_id, c->name, c->offset, c->length);
}

/* OPEN by name (@by_name) or INFO by id. */
static void op_region_query(struct thr *t, bool by_name)
{
	struct sdsm_region_info ri = { 0 }, *in = &ri;
	const char *why = "valid";
	int expect = ANY, fd, mode, err;
	struct region r;
	bool env, shared;

	fd = fd_pick(t, &mode);
	if (by_name) {
		r = region_pick(t);
		if (one_in(t, 2) && !r.is_default)
			memcpy(in->name, r.name, SDSM_NAME_MAX);
		else if (gen_name(t, in->name, &why, &shared))
			expect = EINVAL;
		in->region_id = rnd(t);
	} else {
		switch (below(t, 4)) {
		case 0:
			in->region_id = SDSM_DEFAULT_REGION;
			expect = 0;
			why = "default region";
			break;
		case 1:
			in->region_id = absent_id(t);
			expect = ENOENT;
			why = "no such region";
			break;
		case 2:
			/* Ids of any node's first regions. */
			in->region_id = (below(t, g.nr_nodes) << 16) |
					(1 + below(t, 32));
			break;
		default:
			in->region_id = region_pick(t).id;
			break;
		}
	}
	if (expect == ANY || expect == 0 || expect == ENOENT) {
		if (one_in(t, 10)) {
			in->flags = unknown_flag(t);
			why = "unknown flag";
			expect = EOPNOTSUPP;
		} else if (one_in(t, 10)) {
			in->__reserved = 1 + below(t, 0xffff);
			why = "reserved set";
			expect = EINVAL;
		}
	}
	describe(t, "%s fd=%d id=%#x name='%.*s' %s",
		 by_name ? "REGION_OPEN" : "REGION_INFO", fd, in->region_id,
		 SDSM_NAME_MAX, in->name, why);
	err = IOC(t, fd, by_name ? SDSM_IOC_REGION_OPEN : SDSM_IOC_REGION_INFO,
		  in, MIN_REGION, by_name ? OP_REGION_OPEN : OP_INFO, expect,
		  &env);
	if (err)
		return;
	if (!memchr(in->name, 0, SDSM_NAME_MAX) || in->length % PAGE ||
	    !in->length || in->offset % PAGE) {
		report(t, "region %u: name '%.*s' length %#llx offset %#llx",
		       in->region_id, SDSM_NAME_MAX, in->name,
		       (unsigned long long)in->length,
		       (unsigned long long)in->offset);
		return;
	}
	region_learn(in->region_id, in->name, in->offset, in->length);
}

static void op_destroy(struct thr *t)
{
	struct sdsm_region_destroy rd = { 0 }, *d = &rd;
	const char *why = "known region";
	int expect = ANY, fd, mode, err;
	bool env;

	fd = fd_pick(t, &mode);
	switch (below(t, 8)) {
	case 0:
		d->region_id = SDSM_DEFAULT_REGION;
		why = "default region";
		expect = EPERM;
		break;
	case 1:
		d->region_id = absent_id(t);
		why = "no such region";
		expect = ENOENT;
		break;
	default:
		d->region_id = region_pick(t).id;
		if (d->region_id == SDSM_DEFAULT_REGION)
			expect = EPERM;
		break;
	}
	if (one_in(t, 10)) {
		d->flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
	} else if (one_in(t, 10)) {
		d->__reserved = 1 + below(t, 0xffff);
		why = "reserved set";
		expect = EINVAL;
	}
	describe(t, "REGION_DESTROY fd=%d id=%#x %s", fd, d->region_id, why);
	err = IOC(t, fd, SDSM_IOC_REGION_DESTROY, d, MIN_DESTROY, OP_DESTROY,
		  expect, &env);
	if (!err || (err == ENOENT && !env))
		region_forget(d->region_id);
}

/*
 * An address for the address-taking ioctls: in one of the thread's
 * mappings (*@sdsm true), or one that is not mapped from /dev/sdsm.
 */
static uint64_t gen_addr(struct thr *t, bool *sdsm, int *mi)
{
	static const uint64_t bad[] = {
		0, 0x1000, 0x0000800000000000ULL, 0xffff888000000000ULL,
		0xffffffffff600000ULL, 0xfffffffffffff000ULL,
	};
	int i = map_pick(t);
	char *p;

	*mi = i;
	*sdsm = false;
	if (i >= 0 && !one_in(t, 6)) {
		p = map_page(t, &t->maps[i]);
		if (p) {
			*sdsm = true;
			return (uint64_t)(uintptr_t)p;
		}
	}
	switch (below(t, 3)) {
	case 0:
		return (uint64_t)(uintptr_t)t->scratch;	/* anonymous */
	case 1:
		return (uint64_t)(uintptr_t)(t->scratch + 2 * PAGE);
	default:
		return bad[below(t, ARRAY_SIZE(bad))];
	}
}

static void op_set_policy(struct thr *t)
{
	struct sdsm_set_policy sp = { 0 }, *s = &sp;
	const char *why = "valid";
	int expect = ANY, fd, mode, mi;
	bool env, in_sdsm;

	fd = fd_pick(t, &mode);
	s->addr = gen_addr(t, &in_sdsm, &mi);
	if (in_sdsm) {
		struct map *m = &t->maps[mi];
		uint64_t left = (uint64_t)(uintptr_t)(m->addr + m->len) -
				s->addr;

		s->length = (1 + below(t, left / PAGE)) * PAGE;
	} else {
		s->length = (1 + below(t, 4)) * PAGE;
		s->addr &= ~(PAGE - 1);
		expect = EFAULT;
		why = "not mapped from /dev/sdsm";
	}
	gen_policy(t, &s->policy, false, &why);
	switch (below(t, 12)) {
	case 0:
		s->addr += 1 + below(t, PAGE - 1);
		why = "unaligned address";
		expect = EINVAL;
		break;
	case 1:
		s->length = 0;
		why = "length 0";
		expect = EINVAL;
		break;
	case 2:
		s->length += 1 + below(t, PAGE - 1);
		why = "length not a multiple of 4096";
		expect = EINVAL;
		break;
	case 3:
		s->length = -PAGE;
		why = "length 2^64 - 4096";
		/* EINVAL if the range wraps, or runs past the mapping. */
		if (s->addr + s->length < s->addr || in_sdsm)
			expect = EINVAL;
		break;
	case 4:
		gen_policy(t, &s->policy, true, &why);
		expect = EINVAL;
		break;
	case 5:
		s->flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
		break;
	case 6:
		if (in_sdsm) {
			/* Past the end of the mapping (or into another). */
			s->length += (1 + below(t, 8)) * PAGE +
				     ((uint64_t)(uintptr_t)(t->maps[mi].addr +
							    t->maps[mi].len) -
				      s->addr - s->length);
			why = "past the mapping's end";
		}
		break;
	}
	/* A range that wraps is EINVAL before its address is looked up. */
	if (expect == EFAULT && s->addr + s->length < s->addr)
		expect = EINVAL;
	describe(t, "SET_POLICY fd=%d addr=%#llx len=%#llx pol=%u/%u/%#llx/%#llx %s",
		 fd, (unsigned long long)s->addr,
		 (unsigned long long)s->length, s->policy.mode,
		 s->policy.preferred_node,
		 (unsigned long long)s->policy.nodemask,
		 (unsigned long long)s->policy.block_size, why);
	IOC(t, fd, SDSM_IOC_SET_POLICY, s, MIN_SET_POLICY, OP_SET_POLICY,
	    expect, &env);
}

static void op_query_home(struct thr *t)
{
	static const int entry_err[] = { ENOENT, EFAULT, EHOSTDOWN, ETIMEDOUT,
					 0 };
	struct sdsm_query_home qh = { 0 }, *q = &qh;
	uint64_t addrs[64];
	int32_t homes[64];
	bool sdsm[64], env;
	const char *why = "valid";
	int expect = ANY, fd, mode, mi, err;
	uint32_t i, n = 1 + below(t, 64);

	fd = fd_pick(t, &mode);
	for (i = 0; i < n; i++) {
		addrs[i] = gen_addr(t, &sdsm[i], &mi);
		if (sdsm[i] && one_in(t, 4))
			addrs[i] += below(t, PAGE);
		homes[i] = INT32_MIN;
	}
	q->count = n;
	q->addrs = (uintptr_t)addrs;
	q->homes = (uintptr_t)homes;
	switch (below(t, 12)) {
	case 0:
		q->count = 0;
		why = "count 0";
		expect = EINVAL;
		break;
	case 1:
		q->count = 4097 + below(t, UINT32_MAX - 4097);
		why = "count above 4096";
		expect = EINVAL;
		break;
	case 2:
		q->addrs = gen_addr(t, &env, &mi);
		if (env) {
			q->addrs = 0;
		} else if (q->addrs == (uintptr_t)t->scratch) {
			/* Readable: zeroes, addresses not in a mapping. */
			q->addrs += PAGE;
			memset(t->scratch + PAGE, 0, PAGE);
			q->count = 1 + below(t, 64);
			break;
		}
		why = "bad addrs pointer";
		expect = EFAULT;
		break;
	case 3:
		q->homes = (uintptr_t)(t->scratch + 2 * PAGE);
		why = "unmapped homes pointer";
		expect = EFAULT;
		break;
	case 4:
		q->flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
		break;
	case 5:
		q->__reserved = 1 + below(t, 0xffff);
		why = "reserved set";
		expect = EINVAL;
		break;
	}
	describe(t, "QUERY_HOME fd=%d count=%u addrs=%#llx (%#llx...) homes=%#llx %s",
		 fd, q->count, (unsigned long long)q->addrs,
		 (unsigned long long)addrs[0], (unsigned long long)q->homes,
		 why);
	err = IOC(t, fd, SDSM_IOC_QUERY_HOME, q, MIN_QUERY, OP_QUERY_HOME,
		  expect, &env);
	if (err || env || q->addrs != (uintptr_t)addrs)
		return;
	for (i = 0; i < n; i++) {
		int h = homes[i];

		if (h >= 0 ? (uint32_t)h < g.nr_nodes && sdsm[i] :
		    sdsm[i] ? in_list(entry_err, -h) : h == -EFAULT)
			continue;
		report(t, "entry %u (addr %#llx%s): home %d", i,
		       (unsigned long long)addrs[i],
		       sdsm[i] ? "" : ", not sdsm", h);
		break;
	}
}

/* Lock ids: a few every thread and node uses, and edge values. */
static uint64_t gen_key(struct thr *t)
{
	switch (below(t, 8)) {
	case 0:
		return 0;
	case 1:
		return UINT64_MAX;
	case 2:
		return 1ULL << 63;
	case 3:
		return rnd(t);
	default:
		return 0xf0220000 + below(t, 8);
	}
}

static void op_lock(struct thr *t)
{
	struct sdsm_lock lk = { 0 }, *l = &lk;
	const char *why = "valid";
	int expect = ANY, fd, mode;
	bool env;

	fd = fd_pick(t, &mode);
	l->op = below(t, 3);
	l->lock_id = gen_key(t);
	if (l->op == SDSM_LOCK_ACQUIRE)
		l->timeout_ms = 1 + below(t, MAX_WAIT_MS);
	switch (below(t, 12)) {
	case 0:
		l->op = 3 + below(t, UINT32_MAX - 3);
		l->timeout_ms = below(t, MAX_WAIT_MS);
		why = "unknown op";
		expect = EINVAL;
		break;
	case 1:
		if (l->op != SDSM_LOCK_ACQUIRE) {
			l->timeout_ms = 1 + below(t, MAX_WAIT_MS);
			why = "timeout for TRY or RELEASE";
			expect = EINVAL;
		}
		break;
	case 2:
		l->flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
		break;
	case 3:
		/* A lock nobody ever takes. */
		l->op = SDSM_LOCK_RELEASE;
		l->timeout_ms = 0;
		l->lock_id = 0x5eed000000000000ULL | ++t->unique << 8 | t->idx;
		why = "release of a lock not held";
		expect = EPERM;
		break;
	}
	describe(t, "LOCK fd=%d op=%u id=%#llx timeout=%u %s", fd, l->op,
		 (unsigned long long)l->lock_id, l->timeout_ms, why);
	IOC(t, fd, SDSM_IOC_LOCK, l, MIN_LOCK, OP_LOCK, expect, &env);
}

static void op_barrier(struct thr *t)
{
	static const uint32_t counts[] = { 0, 1, 2, 3, 4, UINT32_MAX };
	struct sdsm_barrier br = { 0 }, *b = &br;
	uint64_t me = 1ULL << g.node_id, all = (1ULL << g.nr_nodes) - 1;
	const char *why = "valid";
	int expect = ANY, fd, mode;
	bool env;

	fd = fd_pick(t, &mode);
	b->count = counts[below(t, ARRAY_SIZE(counts))];
	b->barrier_id = gen_key(t);
	b->timeout_ms = 1 + below(t, MAX_WAIT_MS);
	switch (below(t, 4)) {
	case 0:
		b->nodemask = 0;
		break;
	case 1:
		b->nodemask = me;
		break;
	default:
		b->nodemask = (rnd(t) & all) | me;
		break;
	}
	switch (below(t, 10)) {
	case 0:
		if (all == me)
			break;
		b->nodemask = (rnd(t) & all) & ~me;
		if (!b->nodemask)
			b->nodemask = all & ~me;
		why = "this node not in the mask";
		expect = EINVAL;
		break;
	case 1:
		b->nodemask = me | 1ULL << (g.nr_nodes +
					    below(t, 64 - g.nr_nodes));
		why = "mask beyond the cluster";
		expect = EINVAL;
		break;
	case 2:
		b->flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
		break;
	case 3:
		/* Alone: the only barrier that may go without a timeout. */
		b->count = 1;
		b->nodemask = me;
		b->timeout_ms = 0;
		b->barrier_id = 0xba00000000000000ULL | ++t->unique << 8 |
				t->idx;
		why = "count 1 on this node alone";
		expect = 0;
		break;
	}
	describe(t, "BARRIER fd=%d id=%#llx count=%u mask=%#llx timeout=%u %s",
		 fd, (unsigned long long)b->barrier_id, b->count,
		 (unsigned long long)b->nodemask, b->timeout_ms, why);
	IOC(t, fd, SDSM_IOC_BARRIER, b, MIN_BARRIER, OP_BARRIER, expect, &env);
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void op_futex(struct thr *t)
{
	struct sdsm_futex fx = { 0 }, *f = &fx;
	const char *why = "valid";
	int expect = ANY, fd, mode, mi;
	uint32_t cur = 0;
	bool env, in_sdsm;

	fd = fd_pick(t, &mode);
	f->addr = gen_addr(t, &in_sdsm, &mi) + 4 * below(t, PAGE / 4);
	f->op = below(t, 2);
	f->bitset = one_in(t, 2) ? SDSM_FUTEX_BITSET_ANY : 1 + below(t, 0xff);
	f->clockid = below(t, 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	if (!in_sdsm) {
		expect = EFAULT;
		why = "not mapped from /dev/sdsm";
	}
	if (f->op == SDSM_FUTEX_WAIT) {
		int64_t ms = below(t, MAX_WAIT_MS + 1);

		/* The word's value, mostly, so that the WAIT waits. */
		if (in_sdsm && !one_in(t, 4) &&
		    access_word((uint32_t *)(uintptr_t)f->addr, false, 0,
				&cur) == 0)
			f->val = cur;
		else
			f->val = rnd(t);
		switch (below(t, 4)) {
		case 0:
			f->flags = SDSM_FUTEX_F_ABSTIME;
			f->timeout_ns = clock_ns(f->clockid) + ms * 1000000;
			break;
		case 1:
			f->flags = SDSM_FUTEX_F_ABSTIME;
			f->timeout_ns = one_in(t, 2) ? 0 :
					clock_ns(f->clockid) - ms * 1000000;
			break;
		default:
			f->timeout_ns = ms * 1000000;
			break;
		}
	} else {
		f->val = one_in(t, 4) ? INT32_MAX + below(t, 2) * 0x80000000U :
				1 + below(t, 4);
		f->timeout_ns = one_in(t, 2) ? -1 : (int64_t)rnd(t);
	}
	switch (below(t, 14)) {
	case 0:
		f->bitset = 0;
		why = "bitset 0";
		expect = EINVAL;
		break;
	case 1:
		f->clockid = one_in(t, 2) ? -1 : 2 + (int)below(t, 1000);
		why = "bad clockid";
		expect = EINVAL;
		break;
	case 2:
		f->addr |= 1 + below(t, 3);
		why = "unaligned address";
		expect = EINVAL;
		break;
	case 3:
		f->flags = unknown_flag(t);
		why = "unknown flag";
		expect = EOPNOTSUPP;
		break;
	case 4:
		f->__reserved = 1 + below(t, 0xffff);
		why = "reserved set";
		expect = EINVAL;
		break;
	case 5:
		f->op = 2 + below(t, 1000);
		f->flags = 0;
		why = "unknown op";
		expect = EINVAL;
		break;
	case 6:
		if (f->op == SDSM_FUTEX_WAKE) {
			f->val = 0;
			why = "WAKE of 0";
			expect = EINVAL;
		}
		break;
	case 7:
		if (f->op == SDSM_FUTEX_WAKE) {
			f->flags = SDSM_FUTEX_F_ABSTIME;
			why = "WAKE with ABSTIME";
			expect = EINVAL;
		}
		break;
	}
	describe(t, "FUTEX fd=%d op=%u addr=%#llx val=%u bitset=%#x clock=%d flags=%#x timeout=%lld %s",
		 fd, f->op, (unsigned long long)f->addr, f->val, f->bitset,
		 f->clockid, f->flags, (long long)f->timeout_ns, why);
	IOC(t, fd, SDSM_IOC_FUTEX, f, MIN_FUTEX, OP_FUTEX, expect, &env);
}

static void op_bad_ioctl(struct thr *t)
{
	/* Types no generic ioctl of the VFS uses. */
	static const unsigned int types[] = { 0x01, 0xd4, 0xd6, 0xab };
	unsigned long cmd;
	int fd, mode;
	char *buf = t->scratch;

	fd = fd_pick(t, &mode);
	switch (below(t, 5)) {
	case 0:
		cmd = _IO(SDSM_TYPE, below(t, SDSM_CMD_BASE));
		break;
	case 1:
		cmd = _IO(SDSM_TYPE, SDSM_CMD_FUTEX + 1 +
			  below(t, 0xff - SDSM_CMD_FUTEX));
		break;
	case 2:
		/* A known number with a direction and a size. */
		cmd = _IOC(1 + below(t, 3), SDSM_TYPE,
			   SDSM_CMD_BASE + below(t, 10), 1 + below(t, 255));
		break;
	case 3:
		cmd = _IO(types[below(t, 4)], SDSM_CMD_BASE + below(t, 10));
		break;
	default:
		cmd = (uint32_t)rnd(t) & ~(_IOC_TYPEMASK << _IOC_TYPESHIFT);
		cmd |= types[below(t, 4)] << _IOC_TYPESHIFT;
		break;
	}
	memset(buf, 0, 64);
	buf[0] = 64;
	describe(t, "ioctl fd=%d cmd=%#lx (unknown)", fd, cmd);
	busy(t);
	judge(t, OP_BAD_IOCTL, ioctl(fd, cmd, buf) ? errno : 0, ENOTTY);
	idle(t, OP_BAD_IOCTL);
}

/* ------------------------------------------------------------------ */
/* files and memory                                                   */

static void op_open(struct thr *t)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	int i = below(t, MAX_FDS), mode = modes[below(t, 4)], fd, flags;

	if (t->fds[i] >= 0)
		return;
	flags = mode | O_CLOEXEC | (one_in(t, 4) ? O_NONBLOCK : 0);
	describe(t, "open /dev/sdsm flags=%#x", flags);
	busy(t);
	fd = open("/dev/sdsm", flags);
	idle(t, OP_OPEN);
	judge(t, OP_OPEN, fd < 0 ? errno : 0, ANY);
	if (fd >= 0) {
		t->fds[i] = fd;
		t->fd_mode[i] = mode;
	}
}

static void op_close(struct thr *t)
{
	int i = below(t, MAX_FDS);

	if (t->fds[i] < 0)
		return;
	describe(t, "close fd=%d", t->fds[i]);
	busy(t);
	judge(t, OP_CLOSE, close(t->fds[i]) ? errno : 0, 0);
	idle(t, OP_CLOSE);
	t->fds[i] = -1;
}

static void op_mmap(struct thr *t)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_WRITE, PROT_NONE,
	};
	int mode, fd = fd_pick(t, &mode), expect = ANY, flags = MAP_SHARED;
	int prot = prots[below(t, 5)], err;
	struct region r = region_pick(t);
	uint64_t rpages = r.length / PAGE, start, off;
	size_t len;
	struct map *m = map_free_slot(t), *old = NULL;
	const char *why = "valid";
	void *want = NULL, *p;

	start = below(t, rpages < TOUCH_PAGES ? rpages : TOUCH_PAGES);
	len = (1 + below(t, rpages - start < 16 ? rpages - start : 16)) * PAGE;
	off = r.offset + start * PAGE;
	if (mode == O_WRONLY)
		expect = EACCES;
	else if (mode == O_RDONLY && (prot & PROT_WRITE))
		expect = EACCES;
	if (one_in(t, 6)) {
		flags = MAP_SHARED_VALIDATE;
	} else if (one_in(t, 6) && map_pick(t) >= 0) {
		/* Over one of ours: it goes, whatever the result. */
		old = &t->maps[map_pick(t)];
		want = old->addr;
		if (len > old->len)
			len = old->len;
		flags |= one_in(t, 3) ? MAP_FIXED_NOREPLACE : MAP_FIXED;
		if (flags & MAP_FIXED_NOREPLACE) {
			expect = EEXIST;
			why = "MAP_FIXED_NOREPLACE on a mapping";
		}
	}
	if (expect == ANY) {
		/*
		 * Over a mapping of ours, never longer than that mapping: a
		 * MAP_FIXED that fails has unmapped its range all the same.
		 */
		static const int fixed_ok[] = { 0, 1, 2, 3, 5, 6, 7, 8 };

		switch (old ? fixed_ok[below(t, 8)] : (int)below(t, 12)) {
		case 0:
			flags = (flags & ~MAP_SHARED) | MAP_PRIVATE;
			why = "MAP_PRIVATE";
			expect = EINVAL;
			break;
		case 1:
			if (mode == O_RDWR) {
				prot |= PROT_EXEC;
				why = "PROT_EXEC";
				expect = EPERM;
			}
			break;
		case 2:
			off = (uint64_t)absent_id(t) << 40;
			why = "no region at the offset";
			expect = ENXIO;
			break;
		case 3:
			off = r.offset + r.length;
			why = "offset at the region's end";
			/* ENXIO when the next slot holds no region */
			break;
		case 4:
			len = r.length - start * PAGE + PAGE *
			      (1 + below(t, 16));
			why = "past the region's end";
			/* Another region may be gone by now: ENXIO. */
			if (r.is_default)
				expect = EINVAL;
			break;
		case 5:
			len = 0;
			why = "length 0";
			expect = EINVAL;
			break;
		case 6:
			len = len - PAGE + 1 + below(t, PAGE - 1);
			why = "length not page aligned";
			break;
		case 7:
			off += 1 + below(t, PAGE - 1);
			why = "offset not page aligned";
			expect = EINVAL;
			break;
		case 8:
			off = -PAGE * (1 + below(t, 16));
			why = "offset near 2^64";
			break;
		case 9:
			len = 1ULL << (44 + below(t, 20));
			why = "huge length";
			break;
		}
	}
	describe(t, "mmap fd=%d (mode %d) at=%p len=%#zx prot=%#x flags=%#x off=%#llx (region %u) %s",
		 fd, mode, want, len, prot, flags, (unsigned long long)off,
		 r.id, why);
	layout_lock(flags & MAP_FIXED);
	busy(t);
	p = mmap(want, len, prot, flags, fd, off);
	err = p == MAP_FAILED ? errno : 0;
	idle(t, OP_MMAP);
	judge(t, OP_MMAP, err, expect);
	if (old && !(flags & MAP_FIXED_NOREPLACE)) {
		/* MAP_FIXED replaced [want, want + len) or left a hole. */
		size_t olen = old->len;

		if (err)
			munmap(old->addr, olen);
		else if (len < olen)
			munmap(old->addr + ((len + PAGE - 1) & ~(PAGE - 1)),
			       olen - ((len + PAGE - 1) & ~(PAGE - 1)));
		old->addr = NULL;
		m = old;
	}
	layout_unlock();
	if (err)
		return;
	if (p == want && (flags & MAP_FIXED_NOREPLACE)) {
		report(t, "MAP_FIXED_NOREPLACE replaced a mapping");
		return;
	}
	len = (len + PAGE - 1) & ~(PAGE - 1);
	if (!m) {
		munmap(p, len);
		return;
	}
	m->addr = p;
	m->len = len;
	m->prot = prot;
	m->prot_known = true;
	m->no_fork = false;
	m->ro_file = mode == O_RDONLY;
	m->rpage = (off - r.offset) / PAGE;
	m->rid = r.id;
	if (off < r.offset || off - r.offset >= r.length)
		m->rpage = TOUCH_PAGES;	/* another region: not touched */
}

static void op_munmap(struct thr *t)
{
	int i = map_pick(t), expect = 0, err;
	struct map *m, *n;
	size_t pages, k, j;
	char *addr;
	size_t len;
	const char *why;

	if (i < 0) {
		/* Bad arguments only. */
		switch (below(t, 3)) {
		case 0:
			addr = t->scratch + 1;
			len = PAGE;
			why = "unaligned";
			break;
		case 1:
			addr = t->scratch;
			len = 0;
			why = "length 0";
			break;
		default:
			addr = (char *)0xffff888000000000UL;
			len = PAGE;
			why = "kernel address";
			break;
		}
		describe(t, "munmap %p len=%#zx %s", addr, len, why);
		busy(t);
		judge(t, OP_MUNMAP, munmap(addr, len) ? errno : 0, EINVAL);
		idle(t, OP_MUNMAP);
		return;
	}
	m = &t->maps[i];
	pages = m->len / PAGE;
	k = 1 + below(t, pages);	/* pages to unmap */
	j = below(t, pages - k + 1);	/* from page j */
	addr = m->addr + j * PAGE;
	len = k * PAGE;
	why = k == pages ? "whole" : j == 0 ? "head" :
	      j + k == pages ? "tail" : "middle";
	if (one_in(t, 8)) {
		len -= PAGE - 1 - below(t, PAGE - 1);	/* rounded up */
		why = "length not page aligned";
	}
	describe(t, "munmap %p len=%#zx of [%p +%#zx) %s", addr, len, m->addr,
		 m->len, why);
	busy(t);
	err = munmap(addr, len) ? errno : 0;
	idle(t, OP_MUNMAP);
	judge(t, OP_MUNMAP, err, expect);
	if (err)
		return;
	if (j + k < pages) {
		n = j ? map_free_slot(t) : m;
		if (n && n != m) {
			*n = *m;
		} else if (!n) {
			munmap(m->addr + (j + k) * PAGE,
			       (pages - j - k) * PAGE);
		}
		if (n) {
			n->addr = m->addr + (j + k) * PAGE;
			n->len = (pages - j - k) * PAGE;
			n->rpage = m->rpage + j + k;
		}
		if (n == m)
			return;
	}
	if (j)
		m->len = j * PAGE;
	else if (j + k == pages)
		m->addr = NULL;
}

static void op_mremap(struct thr *t)
{
	int i = map_pick(t), err, expect = ANY;
	size_t pages, nlen;
	struct map *m;
	void *p, *dest = NULL;
	int flags = 0;
	const char *why;

	if (i < 0)
		return;
	m = &t->maps[i];
	pages = m->len / PAGE;
	switch (below(t, 5)) {
	case 0:
		if (pages < 2)
			return;
		nlen = (1 + below(t, pages - 1)) * PAGE;
		why = "shrink";
		expect = 0;
		break;
	case 1:
		nlen = m->len + (1 + below(t, 16)) * PAGE;
		flags = one_in(t, 2) ? MREMAP_MAYMOVE : 0;
		why = "grow";
		expect = EFAULT;	/* VM_DONTEXPAND */
		break;
	case 2:
		nlen = m->len;
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		why = "DONTUNMAP";
		expect = EINVAL;	/* only private anonymous memory */
		break;
	default:
		/* Move onto a placeholder of the same size. */
		nlen = m->len;
		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		why = "move";
		break;
	}
	layout_lock(flags & MREMAP_FIXED);
	if (flags & MREMAP_FIXED) {
		dest = mmap(NULL, nlen, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (dest == MAP_FAILED) {
			layout_unlock();
			return;
		}
	}
	describe(t, "mremap %p len=%#zx -> %#zx flags=%#x to=%p %s", m->addr,
		 m->len, nlen, flags, dest, why);
	busy(t);
	p = mremap(m->addr, m->len, nlen, flags, dest);
	err = p == MAP_FAILED ? errno : 0;
	idle(t, OP_MREMAP);
	judge(t, OP_MREMAP, err, expect);
	if (err && dest)
		munmap(dest, nlen);
	layout_unlock();
	if (err)
		return;
	m->addr = p;
	m->len = nlen;
}

static void op_madvise(struct thr *t)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTFORK,
		MADV_DOFORK, MADV_MERGEABLE, MADV_UNMERGEABLE, MADV_HUGEPAGE,
		MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK,
		MADV_KEEPONFORK, MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE, 999,
	};
	int i = map_pick(t), adv, err;
	size_t off, len;
	struct map *m;

	if (i < 0)
		return;
	m = &t->maps[i];
	adv = advice[below(t, ARRAY_SIZE(advice))];
	off = below(t, m->len / PAGE) * PAGE;
	len = (1 + below(t, (m->len - off) / PAGE)) * PAGE;
	describe(t, "madvise %p len=%#zx advice=%d", m->addr + off, len, adv);
	busy(t);
	err = madvise(m->addr + off, len, adv) ? errno : 0;
	idle(t, OP_MADVISE);
	judge(t, OP_MADVISE, err, adv == 999 ? EINVAL : ANY);
	if (adv == MADV_DONTFORK)
		m->no_fork = true;
}

static void op_mprotect(struct thr *t)
{
	static const int prots[] = {
		PROT_NONE, PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	int i = map_pick(t), prot = prots[below(t, 5)], expect = ANY, err;
	size_t off = 0, len;
	struct map *m;

	if (i < 0)
		return;
	m = &t->maps[i];
	len = m->len;
	if (one_in(t, 3)) {
		off = below(t, m->len / PAGE) * PAGE;
		len = (1 + below(t, (m->len - off) / PAGE)) * PAGE;
	}
	if (prot & PROT_EXEC)
		expect = EACCES;	/* never VM_MAYEXEC */
	else if (m->ro_file && (prot & PROT_WRITE))
		expect = EACCES;
	describe(t, "mprotect %p len=%#zx prot=%#x of [%p +%#zx)",
		 m->addr + off, len, prot, m->addr, m->len);
	busy(t);
	err = mprotect(m->addr + off, len, prot) ? errno : 0;
	idle(t, OP_MPROTECT);
	judge(t, OP_MPROTECT, err, expect);
	if (err)
		return;
	if (len == m->len) {
		m->prot = prot;
		m->prot_known = true;
	} else {
		m->prot_known = false;
	}
}

static void op_touch(struct thr *t)
{
	int i = map_pick(t), err, expect = ANY;
	uint32_t v = 0, *w;
	bool store = one_in(t, 2);
	struct map *m;
	char *p;

	if (i < 0)
		return;
	m = &t->maps[i];
	p = map_page(t, m);
	if (!p)
		return;
	w = (uint32_t *)(p + 4 * below(t, PAGE / 4));
	if (m->prot_known) {
		/* x86: PROT_WRITE pages are readable. */
		if (m->prot == PROT_NONE || (store && !(m->prot & PROT_WRITE)))
			expect = ERR_SEGV;
	}
	describe(t, "%s %p (region %u page %llu, prot %#x%s)",
		 store ? "store" : "load", (void *)w, m->rid,
		 (unsigned long long)(m->rpage + (p - m->addr) / PAGE),
		 m->prot, m->prot_known ? "" : " or other");
	busy(t);
	err = access_word(w, store, (uint32_t)rnd(t), &v);
	idle(t, OP_TOUCH);
	/* A SIGBUS (data lost, no memory) may come whatever was expected. */
	if (!m->prot_known && err == ERR_SEGV)
		expect = ERR_SEGV;
	if (err == ERR_BUS) {
		expect = ANY;
		note(t, "SIGBUS");
	}
	judge(t, OP_TOUCH, err, expect);
}

/* ------------------------------------------------------------------ */
/* fork                                                               */

static void child_main(struct thr *t)
{
	int n = below(t, 8), i;

	in_child = true;
	for (i = 0; i < MAX_MAPS; i++)
		if (t->maps[i].no_fork)
			t->maps[i].addr = NULL;
	if (one_in(t, 5)) {
		/* A WAIT the parent may kill. */
		op_futex(t);
		_exit(child_bad);
	}
	while (n--) {
		switch (below(t, 6)) {
		case 0:
			op_munmap(t);
			break;
		case 1:
			op_lock(t);
			break;
		case 2:
			op_get_info(t);
			break;
		case 3:
			op_mprotect(t);
			break;
		default:
			op_touch(t);
			break;
		}
	}
	_exit(child_bad);
}

static void op_fork(struct thr *t)
{
	uint64_t t0;
	int status, err;
	pid_t pid, w;
	bool killed = false;

	describe(t, "fork");
	busy(t);
	pid = fork();
	if (pid == 0)
		child_main(t);
	err = pid < 0 ? errno : 0;
	idle(t, OP_FORK);
	judge(t, OP_FORK, err, ANY);
	if (pid < 0)
		return;
	if (one_in(t, 3)) {
		usleep(below(t, 20000));
		kill(pid, SIGKILL);
		killed = true;
	}
	t0 = now_ms();
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (now_ms() - t0 > 20000 && !killed) {
			kill(pid, SIGKILL);
			killed = true;
			report(t, "child %d still running after 20 s", pid);
		}
		if (now_ms() - t0 > HANG_MS) {
			report(t, "HANG: child %d not reaped %d s after SIGKILL",
			       pid, HANG_MS / 1000 - 20);
			atomic_fetch_add(&g.hangs, 1);
			return;
		}
		usleep(1000);
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && killed)
		atomic_fetch_add(&g.forks_killed, 1);
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		report(t, "child %d: status %#x", pid, status);
}

/* ------------------------------------------------------------------ */
/* threads                                                            */

static void (*const op_fn[NR_OPS])(struct thr *t) = {
	[OP_OPEN] = op_open, [OP_CLOSE] = op_close,
	[OP_GET_INFO] = op_get_info, [OP_CREATE] = op_create,
	[OP_DESTROY] = op_destroy, [OP_SET_POLICY] = op_set_policy,
	[OP_QUERY_HOME] = op_query_home, [OP_LOCK] = op_lock,
	[OP_BARRIER] = op_barrier, [OP_FUTEX] = op_futex,
	[OP_BAD_IOCTL] = op_bad_ioctl, [OP_MMAP] = op_mmap,
	[OP_MUNMAP] = op_munmap, [OP_MREMAP] = op_mremap,
	[OP_MADVISE] = op_madvise, [OP_MPROTECT] = op_mprotect,
	[OP_TOUCH] = op_touch, [OP_FORK] = op_fork,
};

static unsigned int weight_total;

static enum op pick_op(struct thr *t)
{
	unsigned int r = below(t, weight_total), i;

	for (i = 0; i < NR_OPS; i++) {
		if (r < op_weight[i])
			return i;
		r -= op_weight[i];
	}
	return OP_TOUCH;
}

/*
 * --check-maps: every mapping in @t's table is still mapped from
 * /dev/sdsm (else the fuzzer lost track of one: a bug of its own, or a
 * mapping the kernel changed behind its back).  Slow: for hunting.
 */
static void check_maps(struct thr *t)
{
	static __thread unsigned long lo[4096], hi[4096];
	char line[512];
	int n = 0, i, j;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	while (n < 4096 && fgets(line, sizeof(line), f))
		if (strstr(line, " /dev/sdsm") &&
		    sscanf(line, "%lx-%lx", &lo[n], &hi[n]) == 2)
			n++;
	fclose(f);
	for (i = 0; i < MAX_MAPS; i++) {
		unsigned long a = (unsigned long)t->maps[i].addr;
		unsigned long end = a + t->maps[i].len;

		if (!a)
			continue;
		for (j = 0; j < n && a < end; j++)
			if (lo[j] <= a && a < hi[j]) {
				a = hi[j];
				j = -1;
			}
		if (a >= end)
			continue;
		report(t, "mapping [%p +%#zx) of the table: %#lx not mapped from /dev/sdsm",
		       t->maps[i].addr, t->maps[i].len, a);
		t->maps[i].addr = NULL;
	}
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	enum op op;
	int i;

	for (;;) {
		t->call = atomic_fetch_add(&g.calls, 1);
		if (t->call >= g.max_calls || now_ms() >= g.deadline_ms) {
			atomic_fetch_sub(&g.calls, 1);
			break;
		}
		op = pick_op(t);
		if (op == OP_REGION_OPEN)
			op_region_query(t, true);
		else if (op == OP_INFO)
			op_region_query(t, false);
		else
			op_fn[op](t);
		if (g.check_maps)
			check_maps(t);
	}
	for (i = 0; i < MAX_MAPS; i++)
		if (t->maps[i].addr)
			munmap(t->maps[i].addr, t->maps[i].len);
	for (i = 0; i < MAX_FDS; i++)
		if (t->fds[i] >= 0)
			close(t->fds[i]);
	return NULL;
}

/* Abort the run when one call has been blocked for HANG_MS. */
static void *watchdog_main(void *arg)
{
	unsigned int i;
	uint64_t s;

	(void)arg;
	for (;;) {
		sleep(1);
		for (i = 0; i < g.threads; i++) {
			s = atomic_load(&thrs[i].busy_since);
			if (!s || now_ms() - s < HANG_MS)
				continue;
			printf("HANG seed=%" PRIu64 " thread=%u call=%lu: %s: blocked for %llu s\nresult=FAIL\n",
			       g.seed, i, thrs[i].call, thrs[i].desc,
			       (unsigned long long)(now_ms() - s) / 1000);
			fflush(stdout);
			_exit(3);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* setup, cleanup, summary                                            */

static void die(const char *what)
{
	fprintf(stderr, "sdsm_fuzz: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t read_ulong(const char *path, uint64_t dflt)
{
	unsigned long long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return dflt;
	if (fscanf(f, "%llu", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/*
 * The id of region @name in /sys/kernel/sdsm/regions/, or 0: OPEN refuses
 * a region whose mode denies its own owner reading it (EACCES), sysfs and
 * DESTROY by id do not.
 */
static uint32_t sysfs_region_id(const char *name)
{
	char path[300], have[SDSM_NAME_MAX + 2];
	struct dirent *e;
	uint32_t id = 0;
	FILE *f;
	DIR *dir;

	dir = opendir("/sys/kernel/sdsm/regions");
	if (!dir)
		return 0;
	while (!id && (e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/sdsm/regions/%s/name",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(have, sizeof(have), f)) {
			have[strcspn(have, "\n")] = 0;
			if (!strcmp(have, name))
				id = strtoul(e->d_name, NULL, 10);
		}
		fclose(f);
	}
	closedir(dir);
	return id;
}

/*
 * Destroy region @name if it exists, retrying while busy: 0 or errno.  A
 * region this node still finds after DESTROY said ENOENT (the other nodes
 * do not know it) is reported: the nodes disagree.
 */
static int destroy_by_name(const char *name, unsigned int ms)
{
	struct sdsm_region_info in = { .size = sizeof(in) };
	struct sdsm_region_destroy d = { .size = sizeof(d) };
	uint64_t end = now_ms() + ms;
	uint32_t gone = 0;

	strncpy(in.name, name, SDSM_NAME_MAX - 1);
	for (;;) {
		if (ioctl(g.fd, SDSM_IOC_REGION_OPEN, &in)) {
			if (errno != EACCES)
				return errno == ENOENT ? 0 : errno;
			/* Created with a mode that denies us reading it. */
			in.region_id = sysfs_region_id(name);
			if (!in.region_id) {
				/*
				 * Destroyed since OPEN found it (by another
				 * node's cleanup): ask OPEN again.
				 */
				if (now_ms() >= end)
					return EACCES;
				usleep(100000);
				continue;
			}
		}
		if (gone && in.region_id == gone && now_ms() >= end) {
			printf("cleanup: region %u '%s' is here, but DESTROY says ENOENT: the nodes disagree\n",
			       gone, name);
			return ENOENT;
		}
		d.region_id = in.region_id;
		if (!ioctl(g.fd, SDSM_IOC_REGION_DESTROY, &d))
			return 0;
		if (errno == ENOENT)
			gone = in.region_id;
		else if (errno != EBUSY && errno != ETIMEDOUT &&
			 errno != EHOSTDOWN)
			return errno;
		if (now_ms() >= end && errno != ENOENT)
			return errno;
		usleep(100000);
	}
}

static int cleanup(void)
{
	char name[SDSM_NAME_MAX], longest[SDSM_NAME_MAX];
	unsigned int i, left = 0, busy_shared = 0;
	int err;

	memset(longest, 'z', SDSM_NAME_MAX - 1);
	memcpy(longest, g.priv_prefix, strlen(g.priv_prefix));
	longest[SDSM_NAME_MAX - 1] = 0;
	for (i = 0; i <= NR_PRIVATE; i++) {
		if (i < NR_PRIVATE)
			private_name(name, i);
		else
			memcpy(name, longest, SDSM_NAME_MAX);
		/* Another node may map it (by id) until its run ends. */
		err = destroy_by_name(name, 30000);
		if (err) {
			printf("cleanup: region %s not destroyed: %s\n", name,
			       err_name(err));
			left++;
		}
	}
	for (i = 0; i < NR_SHARED; i++) {
		shared_name(name, i);
		err = destroy_by_name(name, 5000);
		if (err == EBUSY) {
			busy_shared++;	/* mapped by another node's run */
		} else if (err) {
			printf("cleanup: shared region %s not destroyed: %s\n",
			       name, err_name(err));
			left++;
		}
	}
	printf("cleanup: %u regions left, %u shared ones still mapped elsewhere\n",
	       left, busy_shared);
	return left;
}

static int cmp_count(const void *a, const void *b)
{
	const unsigned long *x = a, *y = b;

	return x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0;
}

static void summary(double secs)
{
	unsigned long list[NR_ERR][2], n, ok;
	unsigned int o, e, k;

	printf("%-15s %9s %9s %7s  results\n", "operation", "calls", "ok",
	       "max ms");
	for (o = 0; o < NR_OPS; o++) {
		n = 0;
		for (e = k = 0; e < NR_ERR; e++) {
			unsigned long c = atomic_load(&g.tally[o][e]);

			n += c;
			if (e && c) {
				list[k][0] = e;
				list[k++][1] = c;
			}
		}
		ok = atomic_load(&g.tally[o][0]);
		qsort(list, k, sizeof(list[0]), cmp_count);
		printf("%-15s %9lu %9lu %7llu ", op_name[o], n, ok,
		       (unsigned long long)atomic_load(&g.max_ms[o]));
		for (e = 0; e < k; e++)
			printf(" %s=%lu", err_name(list[e][0]), list[e][1]);
		printf("\n");
	}
	printf("calls=%lu seconds=%.1f rate=%.0f/s threads=%u seed=%" PRIu64
	       " violations=%lu hangs=%lu children_killed=%lu notes=%lu\n",
	       atomic_load(&g.calls), secs, atomic_load(&g.calls) / secs,
	       g.threads, g.seed, atomic_load(&g.violations),
	       atomic_load(&g.hangs), atomic_load(&g.forks_killed),
	       atomic_load(&g.notes));
}

static void usage(void);

/* --ops NAME,...: only these operations. */
static void only_ops(const char *list)
{
	unsigned int keep[NR_OPS] = { 0 }, o;
	char *copy = strdup(list), *save = NULL, *name;

	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (o = 0; o < NR_OPS; o++)
			if (!strcmp(name, op_name[o]))
				break;
		if (o == NR_OPS) {
			fprintf(stderr, "sdsm_fuzz: no operation '%s'\n", name);
			usage();
		}
		keep[o] = 1;
	}
	free(copy);
	for (o = 0; o < NR_OPS; o++)
		if (!keep[o])
			op_weight[o] = 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sdsm_fuzz [--seed N] [--calls N] [--seconds S] [--threads T] [--trace] [--ops NAME,...]\n");
	exit(2);
}

/* The number @opt was given, whole and in range, else usage. */
static unsigned long long num_arg(const char *opt, const char *arg,
				  unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || *arg == '-' || v > max) {
		fprintf(stderr, "sdsm_fuzz: %s '%s': want a number up to %llu\n",
			opt, arg, max);
		usage();
	}
	return v;
}

static void thr_init(struct thr *t, int idx)
{
	int i;

	t->idx = idx;
	t->rng = g.seed ^ (0x5851f42d4c957f2dULL * (idx + 1));
	for (i = 0; i < MAX_FDS; i++)
		t->fds[i] = -1;
	t->scratch = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		     0);
	if (t->scratch == MAP_FAILED || t->ro == MAP_FAILED ||
	    mprotect(t->scratch + 2 * PAGE, PAGE, PROT_NONE))
		die("scratch pages");
}

int main(int argc, char **argv)
{
	struct sdsm_region_info in = { .size = sizeof(in) };
	struct sdsm_info info = { .size = sizeof(info) };
	struct sigaction sa = { .sa_handler = on_fault, .sa_flags = SA_NODEFER };
	pthread_rwlockattr_t rwa;
	pthread_t wd;
	char calls[24];
	struct timespec ts;
	uint64_t t0;
	unsigned int i;
	int failed;

	clock_gettime(CLOCK_REALTIME, &ts);
	g.seed = (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 20;
	g.seed %= 1000000000;
	g.max_calls = ULONG_MAX;
	g.seconds = 60;
	g.threads = 2;
	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--trace")) {
			g.trace = true;
			continue;
		}
		if (!strcmp(argv[i], "--check-maps")) {
			g.check_maps = true;
			continue;
		}
		if (i + 1 >= (unsigned int)argc)
			usage();
		if (!strcmp(argv[i], "--seed"))
			g.seed = num_arg(argv[i], argv[i + 1], UINT64_MAX);
		else if (!strcmp(argv[i], "--calls"))
			g.max_calls = num_arg(argv[i], argv[i + 1], ULONG_MAX);
		else if (!strcmp(argv[i], "--seconds"))
			g.seconds = num_arg(argv[i], argv[i + 1], UINT_MAX);
		else if (!strcmp(argv[i], "--threads"))
			g.threads = num_arg(argv[i], argv[i + 1], MAX_THREADS);
		else if (!strcmp(argv[i], "--ops"))
			only_ops(argv[i + 1]);
		else
			usage();
		i++;
	}
	if (!g.threads || g.threads > MAX_THREADS)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	g.fd = open("/dev/sdsm", O_RDWR | O_CLOEXEC);
	if (g.fd < 0)
		die("/dev/sdsm");
	if (ioctl(g.fd, SDSM_IOC_GET_INFO, &info))
		die("GET_INFO");
	g.node_id = info.node_id;
	g.nr_nodes = info.nr_nodes;
	g.features = info.features;
	if (!g.nr_nodes || g.nr_nodes > SDSM_MAX_NODES ||
	    g.node_id >= g.nr_nodes) {
		fprintf(stderr, "sdsm_fuzz: node %u of %u?\n", g.node_id,
			g.nr_nodes);
		return 2;
	}
	in.region_id = SDSM_DEFAULT_REGION;
	if (ioctl(g.fd, SDSM_IOC_REGION_INFO, &in))
		die("REGION_INFO of the default region");
	region_learn(SDSM_DEFAULT_REGION, in.name, in.offset, in.length);
	g.max_region = read_ulong("/sys/module/sdsm/parameters/max_region_mb",
				  4096) << 20;
	snprintf(g.priv_prefix, sizeof(g.priv_prefix), "fz.%u.%u.", g.node_id,
		 (unsigned int)(g.seed % 1000000));
	if (g.max_calls == ULONG_MAX)
		snprintf(calls, sizeof(calls), "unbounded");
	else
		snprintf(calls, sizeof(calls), "%lu", g.max_calls);
	printf("sdsm_fuzz: seed=%" PRIu64 " calls=%s seconds=%u threads=%u node=%u of %u prefix=%s uid=%u\n",
	       g.seed, calls, g.seconds, g.threads, g.node_id,
	       g.nr_nodes, g.priv_prefix, (unsigned int)geteuid());

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		die("sigaction");
	/* A child's exit must not interrupt a wait (EINTR) in the parent. */
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);

	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (pthread_rwlock_init(&layout, &rwa))
		die("pthread_rwlock_init");
	for (i = 0; i < NR_OPS; i++)
		weight_total += op_weight[i];
	if (!weight_total)
		usage();
	t0 = now_ms();
	g.deadline_ms = t0 + g.seconds * 1000ULL;
	for (i = 0; i < g.threads; i++)
		thr_init(&thrs[i], i);
	if (pthread_create(&wd, NULL, watchdog_main, NULL))
		die("pthread_create");
	for (i = 0; i < g.threads; i++)
		if (pthread_create(&thrs[i].tid, NULL, thread_main, &thrs[i]))
			die("pthread_create");
	for (i = 0; i < g.threads; i++)
		pthread_join(thrs[i].tid, NULL);
	summary((now_ms() - t0) / 1000.0);
	failed = cleanup();
	close(g.fd);
	if (atomic_load(&g.hangs)) {
		printf("result=FAIL (hang)\n");
		return 3;
	}
	if (failed || atomic_load(&g.violations)) {
		printf("result=FAIL\n");
		return 1;
	}
	printf("result=PASS\n");
	return 0;
}
