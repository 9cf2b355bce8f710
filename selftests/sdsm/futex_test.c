// SPDX-License-Identifier: GPL-2.0
/*
 * futex_test - the distributed futex (SDSM_IOC_FUTEX).
 *
 * Without arguments (or with harness options) it runs the kselftests of
 * one node: bad input gets the errno uapi/linux/sdsm.h documents, EAGAIN,
 * relative and absolute timeouts, EINTR (and a restart with SA_RESTART),
 * wake 1 / wake all counts, bitsets, store + wake races.  Tests run twice: on a word whose page is homed here (the
 * manager is local) and on one homed at a peer (skipped on one node).
 * Words live in the default region from 44 MiB on (mem_tests.sh uses
 * 0-36 MiB, sync_tests.sh 40-41 MiB).  Every test SKIPs when the module is
 * not loaded or lacks the feature.
 *
 * With a command as first argument it is the helper of futex_tests.sh
 * (OFF is a byte offset in the default region, 4-byte aligned):
 *
 *   futex_test home OFF              print the home node of OFF's page
 *   futex_test pick HOME SLOT        print an offset whose page is homed
 *       at node HOME (SLOT picks one of several, 0..15)
 *   futex_test set OFF VAL           store VAL at OFF
 *   futex_test ring OFF IDX N TURNS TIMEOUT_MS
 *       member IDX of a ring of N processes passing a token through the
 *       u32 at OFF: IDX waits (bitset 1 << IDX) until value % N == IDX,
 *       then stores value + 1 and wakes member (IDX + 1) % N; TURNS times.
 *       Every wait has TIMEOUT_MS: a wait that times out while the value
 *       says it is IDX's turn was a lost wake-up; 3 timeouts in a row
 *       with the value unchanged mean the ring stalled (a member is
 *       gone): result=ETIMEDOUT.  Prints counts.
 *   futex_test wait OFF VAL TIMEOUT_MS  one WAIT (TIMEOUT_MS 0: none);
 *       prints "waiting pid=PID" first
 *   futex_test wake OFF N            one WAKE of N; prints woken=K
 *
 * Helpers print "result=0" or "result=ENAME" for the call that decides,
 * and exit 0 only on success.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdsm.h>

#include "kselftest_harness.h"

#define DEV "/dev/sdsm"
#define AREA_OFF (44ull << 20)		/* first byte the tests use */
#define AREA_PAGES 1024			/* 4 MiB */

static int dev_open(void)
{
	return open(DEV, O_RDWR | O_CLOEXEC);
}

static int get_info(int fd, struct sdsm_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, SDSM_IOC_GET_INFO, info) ? errno : 0;
}

/* One SDSM_IOC_FUTEX from @f (size filled in); 0 or errno. */
static int futex_ioctl(int fd, struct sdsm_futex *f)
{
	f->size = sizeof(*f);
	return ioctl(fd, SDSM_IOC_FUTEX, f) ? errno : 0;
}

/* SDSM_IOC_FUTEX with @arg as is; 0 or errno. */
static int raw_ioctl(int fd, void *arg)
{
	return ioctl(fd, SDSM_IOC_FUTEX, arg) ? errno : 0;
}

static int fwait(int fd, volatile __u32 *addr, __u32 val, long long timeout_ns,
		 __u32 bitset)
{
	struct sdsm_futex f = {
		.op = SDSM_FUTEX_WAIT,
		.val = val,
		.addr = (uintptr_t)addr,
		.bitset = bitset,
		.timeout_ns = timeout_ns,
	};

	return futex_ioctl(fd, &f);
}

/* WAKE: returns woken (>= 0) or -errno. */
static int fwake(int fd, volatile __u32 *addr, __u32 n, __u32 bitset)
{
	struct sdsm_futex f = {
		.op = SDSM_FUTEX_WAKE,
		.val = n,
		.addr = (uintptr_t)addr,
		.bitset = bitset,
		.timeout_ns = -1,
	};
	int e = futex_ioctl(fd, &f);

	return e ? -e : (int)f.woken;
}

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EAGAIN: return "EAGAIN";
	case EFAULT: return "EFAULT";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINTR: return "EINTR";
	case EHOSTDOWN: return "EHOSTDOWN";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSPC: return "ENOSPC";
	case ENOTTY: return "ENOTTY";
	case ENOMEM: return "ENOMEM";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ms(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000000;
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void on_alarm(int sig)
{
}

/* SIGALRM in @ms, interrupting system calls (no SA_RESTART). */
static void alarm_ms(unsigned int ms)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* The home of the page at @off of the default region (mapped at @base). */
static int home_of(int fd, char *base, __u64 off)
{
	__u64 a = (uintptr_t)(base + off);
	__s32 h = -1;
	struct sdsm_query_home q = {
		.size = sizeof(q),
		.count = 1,
		.addrs = (uintptr_t)&a,
		.homes = (uintptr_t)&h,
	};

	if (ioctl(fd, SDSM_IOC_QUERY_HOME, &q))
		return -errno;
	return h;
}

/* The default region mapped whole (64 MiB at least), or NULL. */
static char *map_region(int fd)
{
	void *p = mmap(NULL, AREA_OFF + AREA_PAGES * 4096ull,
		       PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static sigjmp_buf bus_jmp;

static void on_bus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

/*
 * Can this node write the page at @p?  Not if its data was lost with a
 * node that died holding it (an earlier test killed one): every access
 * to such a page is SIGBUS, as Documentation/coherent-memory.rst says.
 */
static bool page_usable(volatile __u32 *p)
{
	struct sigaction sa = { .sa_handler = on_bus }, old;
	bool ok = false;

	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(bus_jmp, 1)) {
		*p = *p;
		ok = true;
	}
	sigaction(SIGBUS, &old, NULL);
	return ok;
}

/*
 * Offset of the @slot-th usable page of the area homed (@local) here or
 * not, or (@want >= 0) homed at node @want.
 */
static __u64 pick_off(int fd, char *base, unsigned int self, bool local,
		      unsigned int slot, int want)
{
	unsigned int i;

	for (i = 0; i < AREA_PAGES; i++) {
		__u64 off = AREA_OFF + i * 4096ull;
		int h = home_of(fd, base, off);

		if (h < 0)
			continue;
		if (want >= 0 ? h != want : ((unsigned int)h == self) != local)
			continue;
		if (page_usable((volatile __u32 *)(base + off)) && !slot--)
			return off;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* kselftests                                                          */

/*
 * @skip: why this test cannot run here, set by the setup.  kselftest's
 * harness (6.1) runs the body even when the setup called SKIP(), so the
 * setup only records the reason and each body starts with READY(), which
 * skips it (a body that ran on without the module failed, or dereferenced
 * a word that was never mapped).
 */
FIXTURE(futex) {
	int fd;
	char *base;
	volatile __u32 *w;
	struct sdsm_info info;
	const char *skip;
};

#define READY()							\
	do {								\
		if (self->skip)						\
			SKIP(return, "%s", self->skip);			\
	} while (0)

FIXTURE_VARIANT(futex) {
	bool local;
};

FIXTURE_VARIANT_ADD(futex, local_manager) {
	.local = true,
};

FIXTURE_VARIANT_ADD(futex, remote_manager) {
	.local = false,
};

FIXTURE_SETUP(futex)
{
	__u64 off;

	self->base = NULL;
	self->skip = NULL;
	self->fd = dev_open();
	if (self->fd < 0) {
		self->skip = errno == ENOENT ?
			DEV " absent: sdsm.ko not loaded" :
			"cannot open " DEV;
		return;
	}
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	if (!(self->info.features & SDSM_FEATURE_FUTEX)) {
		self->skip = "module lacks SDSM_FEATURE_FUTEX";
		return;
	}
	if (!variant->local && self->info.nr_nodes < 2) {
		self->skip = "a remote manager needs two nodes";
		return;
	}
	self->base = map_region(self->fd);
	ASSERT_NE(NULL, self->base);
	/*
	 * A page per test and process, and one no other node picks, so that
	 * runs (on several nodes at once too) do not collide: the local
	 * variant takes one of the first 8 pages homed here, the remote one
	 * one of the next 8 homed at the next node.
	 */
	if (variant->local)
		off = pick_off(self->fd, self->base, self->info.node_id, true,
			       getpid() % 8, -1);
	else
		off = pick_off(self->fd, self->base, self->info.node_id, false,
			       8 + getpid() % 8,
			       (self->info.node_id + 1) % self->info.nr_nodes);
	ASSERT_NE(0, off);
	self->w = (volatile __u32 *)(self->base + off + 4 * (getpid() % 64));
	*self->w = 7;
}

FIXTURE_TEARDOWN(futex)
{
	if (self->base)
		munmap(self->base, AREA_OFF + AREA_PAGES * 4096ull);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(futex, bad_input)
{
	struct sdsm_futex f = {
		.op = SDSM_FUTEX_WAIT,
		.val = 7,
		.addr = (uintptr_t)self->w,
		.bitset = SDSM_FUTEX_BITSET_ANY,
		.timeout_ns = 1000,
	};
	static __u32 not_sdsm = 7;
	struct { struct sdsm_futex f; __u64 more; } big;
	struct sdsm_futex g;

	READY();

	g = f;
	ASSERT_EQ(ETIMEDOUT, futex_ioctl(self->fd, &g));
	g = f;
	g.addr += 2;		/* unaligned */
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	g = f;
	g.addr = (uintptr_t)&not_sdsm;	/* valid memory, not /dev/sdsm */
	EXPECT_EQ(EFAULT, futex_ioctl(self->fd, &g));
	g = f;
	g.addr = 0;
	EXPECT_EQ(EFAULT, futex_ioctl(self->fd, &g));
	g = f;
	g.addr = ~3ull;
	EXPECT_EQ(EFAULT, futex_ioctl(self->fd, &g));
	g = f;
	g.op = 2;
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	g = f;
	g.flags = 1 << 5;
	EXPECT_EQ(EOPNOTSUPP, futex_ioctl(self->fd, &g));
	g = f;
	g.bitset = 0;
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	g = f;
	g.clockid = CLOCK_BOOTTIME;
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	g = f;
	g.__reserved = 1;
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	g = f;
	g.op = SDSM_FUTEX_WAKE;
	g.val = 0;
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	g = f;
	g.op = SDSM_FUTEX_WAKE;
	g.val = 1;
	g.flags = SDSM_FUTEX_F_ABSTIME;
	EXPECT_EQ(EINVAL, futex_ioctl(self->fd, &g));
	/* Too small a struct; a larger one with non-zero tail bytes. */
	g = f;
	g.size = 8;
	EXPECT_EQ(EINVAL, raw_ioctl(self->fd, &g));
	big.f = f;
	big.more = 1;
	big.f.size = sizeof(big);
	EXPECT_EQ(E2BIG, raw_ioctl(self->fd, &big));
	/* Nothing of the above changed the word or left a waiter. */
	EXPECT_EQ(7, *self->w);
	EXPECT_EQ(0, fwake(self->fd, self->w, INT_MAX, SDSM_FUTEX_BITSET_ANY));
}

TEST_F(futex, eagain_on_mismatch)
{
	READY();

	EXPECT_EQ(EAGAIN, fwait(self->fd, self->w, 8, -1,
				SDSM_FUTEX_BITSET_ANY));
	EXPECT_EQ(EAGAIN, fwait(self->fd, self->w, 0, 1000000,
				SDSM_FUTEX_BITSET_ANY));
}

TEST_F(futex, timeout_relative)
{
	long long t0 = now_ms(), dt;

	READY();

	EXPECT_EQ(ETIMEDOUT, fwait(self->fd, self->w, 7, 300 * 1000000LL,
				   SDSM_FUTEX_BITSET_ANY));
	dt = now_ms() - t0;
	EXPECT_GE(dt, 300);
	EXPECT_LT(dt, 20000);
	/* Zero: no wait at all, but the value is still checked first. */
	EXPECT_EQ(ETIMEDOUT, fwait(self->fd, self->w, 7, 0,
				   SDSM_FUTEX_BITSET_ANY));
	EXPECT_EQ(EAGAIN, fwait(self->fd, self->w, 6, 0,
				SDSM_FUTEX_BITSET_ANY));
}

TEST_F(futex, timeout_absolute)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	unsigned int i;

	READY();

	for (i = 0; i < 2; i++) {
		struct sdsm_futex f = {
			.flags = SDSM_FUTEX_F_ABSTIME,
			.op = SDSM_FUTEX_WAIT,
			.val = 7,
			.addr = (uintptr_t)self->w,
			.bitset = SDSM_FUTEX_BITSET_ANY,
			.clockid = clocks[i],
		};
		long long t0 = now_ms(), dt;

		f.timeout_ns = now_ns(clocks[i]) + 300 * 1000000LL;
		EXPECT_EQ(ETIMEDOUT, futex_ioctl(self->fd, &f));
		dt = now_ms() - t0;
		EXPECT_GE(dt, 290);
		EXPECT_LT(dt, 20000);
		/* A deadline in the past. */
		f.timeout_ns = now_ns(clocks[i]) - 1000000000LL;
		EXPECT_EQ(ETIMEDOUT, futex_ioctl(self->fd, &f));
	}
}

TEST_F(futex, signal_eintr)
{
	long long t0 = now_ms();

	READY();

	alarm_ms(300);
	EXPECT_EQ(EINTR, fwait(self->fd, self->w, 7, 30000 * 1000000LL,
			       SDSM_FUTEX_BITSET_ANY));
	EXPECT_LT(now_ms() - t0, 20000);
	/* No timeout: also EINTR for a handler without SA_RESTART. */
	alarm_ms(300);
	EXPECT_EQ(EINTR, fwait(self->fd, self->w, 7, -1,
			       SDSM_FUTEX_BITSET_ANY));
	signal(SIGALRM, SIG_DFL);
	/* The cancelled waits left nothing behind. */
	EXPECT_EQ(0, fwake(self->fd, self->w, INT_MAX, SDSM_FUTEX_BITSET_ANY));
}

static void on_usr1(int sig)
{
}

/*
 * With SA_RESTART, a WAIT without a timeout is restarted after the
 * handler (as futex(2) does), so the later WAKE still finds it: 0.
 */
TEST_F(futex, signal_restart)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	long long end;
	pid_t pid;
	int st, r = 0;

	READY();

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = dev_open();

		sigaction(SIGUSR1, &sa, NULL);
		_exit(fd < 0 ? 100 : fwait(fd, self->w, 7, -1,
					   SDSM_FUTEX_BITSET_ANY));
	}
	msleep(500);
	kill(pid, SIGUSR1);
	msleep(300);
	EXPECT_EQ(0, waitpid(pid, &st, WNOHANG));
	end = now_ms() + 20000;
	while (!r && now_ms() < end) {
		r = fwake(self->fd, self->w, 1, SDSM_FUTEX_BITSET_ANY);
		if (!r)
			msleep(100);
	}
	EXPECT_EQ(1, r);
	while (!waitpid(pid, &st, WNOHANG) && now_ms() < end)
		msleep(20);
	if (now_ms() >= end) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/* Fork @n waiters of @w with @bitset and no timeout; exit status = errno. */
static void spawn_waiters(volatile __u32 *w, __u32 val, __u32 bitset, int n,
			  pid_t *pids)
{
	int i;

	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			int fd = dev_open();

			if (fd < 0)
				_exit(100);
			_exit(fwait(fd, w, val, 60000 * 1000000LL, bitset));
		}
	}
}

/* Children of @pids that have exited (reaped; status must be 0). */
static int reaped(pid_t *pids, int n, int *bad)
{
	int i, st, done = 0;

	for (i = 0; i < n; i++) {
		if (!pids[i]) {
			done++;
			continue;
		}
		if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				(*bad)++;
			pids[i] = 0;
			done++;
		}
	}
	return done;
}

/* WAKE of @n until it wakes someone (the waiters need time to queue). */
static int wake_some(int fd, volatile __u32 *w, __u32 n, __u32 bitset)
{
	long long end = now_ms() + 20000;
	int r;

	do {
		r = fwake(fd, w, n, bitset);
		if (r)
			return r;
		msleep(100);
	} while (now_ms() < end);
	return 0;
}

TEST_F(futex, wake_one_then_all)
{
	pid_t pids[3];
	int bad = 0, total, r;
	long long end;

	READY();

	spawn_waiters(self->w, 7, SDSM_FUTEX_BITSET_ANY, 3, pids);
	msleep(500);
	/* One at a time: never more than asked for. */
	ASSERT_EQ(1, wake_some(self->fd, self->w, 1, SDSM_FUTEX_BITSET_ANY));
	end = now_ms() + 20000;
	while (reaped(pids, 3, &bad) < 1 && now_ms() < end)
		msleep(20);
	msleep(300);
	EXPECT_EQ(1, reaped(pids, 3, &bad));
	/* All: the two others, once both are queued. */
	total = 0;
	end = now_ms() + 20000;
	while (total < 2 && now_ms() < end) {
		r = fwake(self->fd, self->w, INT_MAX, SDSM_FUTEX_BITSET_ANY);
		ASSERT_GE(r, 0);
		total += r;
		if (total < 2)
			msleep(100);
	}
	EXPECT_EQ(2, total);
	while (reaped(pids, 3, &bad) < 3 && now_ms() < end)
		msleep(20);
	EXPECT_EQ(3, reaped(pids, 3, &bad));
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, fwake(self->fd, self->w, INT_MAX, SDSM_FUTEX_BITSET_ANY));
}

TEST_F(futex, bitsets)
{
	pid_t pids[2];
	int bad = 0;
	long long end;

	READY();

	spawn_waiters(self->w, 7, 0x1, 1, &pids[0]);
	spawn_waiters(self->w, 7, 0x6, 1, &pids[1]);
	msleep(500);
	/* 0x8 matches neither; 0x4 only the second, 0x1 only the first. */
	EXPECT_EQ(0, fwake(self->fd, self->w, INT_MAX, 0x8));
	EXPECT_EQ(1, wake_some(self->fd, self->w, INT_MAX, 0x4));
	end = now_ms() + 20000;
	while (!reaped(pids, 2, &bad) && now_ms() < end)
		msleep(20);
	EXPECT_EQ(0, pids[1]);
	EXPECT_NE(0, pids[0]);
	EXPECT_EQ(1, wake_some(self->fd, self->w, INT_MAX, 0x1));
	while (reaped(pids, 2, &bad) < 2 && now_ms() < end)
		msleep(20);
	EXPECT_EQ(2, reaped(pids, 2, &bad));
	EXPECT_EQ(0, bad);
}

/*
 * A store then a WAKE racing with a WAIT for the old value: the waiter
 * either sees the new value (EAGAIN) or is woken (0); it never sleeps on.
 */
TEST_F(futex, store_then_wake_races)
{
	int i, st, woken = 0, eagain = 0;
	long long end;
	pid_t pid, r;

	READY();

	for (i = 0; i < 20; i++) {
		*self->w = 100 + i;
		spawn_waiters(self->w, 100 + i, SDSM_FUTEX_BITSET_ANY, 1, &pid);
		msleep(i % 4 * 10);
		*self->w = 1000 + i;
		ASSERT_LE(0, fwake(self->fd, self->w, 1,
				   SDSM_FUTEX_BITSET_ANY));
		end = now_ms() + 20000;
		while (!(r = waitpid(pid, &st, WNOHANG)) && now_ms() < end)
			msleep(5);
		if (!r) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		ASSERT_EQ(pid, r) TH_LOG("iteration %d: waiter never woken", i);
		ASSERT_TRUE(WIFEXITED(st));
		if (WEXITSTATUS(st) == EAGAIN)
			eagain++;
		else if (WEXITSTATUS(st) == 0)
			woken++;
		else
			ASSERT_EQ(0, WEXITSTATUS(st));
	}
	TH_LOG("%d woken, %d saw the store", woken, eagain);
}

/* ------------------------------------------------------------------ */
/* Commands of futex_tests.sh                                          */

static int cmd_fd(struct sdsm_info *info, char **base)
{
	int fd = dev_open();

	if (fd < 0) {
		perror(DEV);
		exit(2);
	}
	if (get_info(fd, info)) {
		perror("SDSM_IOC_GET_INFO");
		exit(2);
	}
	if (!(info->features & SDSM_FEATURE_FUTEX)) {
		printf("module lacks SDSM_FEATURE_FUTEX\n");
		exit(2);
	}
	*base = map_region(fd);
	if (!*base) {
		perror("mmap " DEV);
		exit(2);
	}
	return fd;
}

static int result(int e)
{
	printf("result=%s\n", ename(e));
	fflush(stdout);
	return e ? 1 : 0;
}

static volatile __u32 *word(char *base, __u64 off)
{
	if (off < AREA_OFF || off >= AREA_OFF + AREA_PAGES * 4096ull ||
	    off % 4) {
		fprintf(stderr, "offset %llu outside the test area\n",
			(unsigned long long)off);
		exit(2);
	}
	return (volatile __u32 *)(base + off);
}

/* A ring member gives up after this many timed-out waits without progress. */
#define RING_STALLS	3

static int cmd_ring(__u64 off, unsigned int idx, unsigned int n, int turns,
		    unsigned int timeout_ms)
{
	struct sdsm_info info;
	char *base;
	int fd = cmd_fd(&info, &base), t, e, r;
	volatile __u32 *w = word(base, off);
	long waits = 0, eagain = 0, woke = 0, lost = 0;
	long long t0 = now_ms();
	unsigned int stalled = 0;
	__u32 v, last = 0;

	for (t = 0; t < turns; t++) {
		for (;;) {
			v = *w;
			if (v % n == idx)
				break;
			if (v != last) {
				last = v;
				stalled = 0;
			}
			e = fwait(fd, w, v, timeout_ms * 1000000LL, 1u << idx);
			waits++;
			if (e == EAGAIN) {
				eagain++;
			} else if (e == ETIMEDOUT) {
				if (*w % n == idx) {
					/* Our turn came and nobody woke us. */
					lost++;
					printf("lost wake-up at value %u\n",
					       *w);
				} else if (*w == v && ++stalled >= RING_STALLS) {
					/* Nobody moved the token: a member is gone. */
					printf("turn %d: ring stalled at value %u for %u timeouts\n",
					       t, v, stalled);
					return result(ETIMEDOUT);
				}
			} else if (e) {
				printf("turn %d: wait: %s\n", t, ename(e));
				return result(e);
			}
		}
		*w = v + 1;
		r = fwake(fd, w, 1, 1u << ((idx + 1) % n));
		if (r < 0) {
			printf("turn %d: wake: %s\n", t, ename(-r));
			return result(-r);
		}
		woke += r;
	}
	printf("node %u member %u: %d turns, %ld waits (%ld EAGAIN), %ld woken by me, %ld lost, %lld ms\n",
	       info.node_id, idx, turns, waits, eagain, woke, lost,
	       now_ms() - t0);
	return result(lost ? ETIMEDOUT : 0);
}

static int cmd_wait(__u64 off, __u32 val, unsigned int timeout_ms)
{
	struct sdsm_info info;
	char *base;
	int fd = cmd_fd(&info, &base);
	volatile __u32 *w = word(base, off);
	long long t0;
	int e;

	printf("waiting pid=%d\n", getpid());
	fflush(stdout);
	t0 = now_ms();
	e = fwait(fd, w, val, timeout_ms ? timeout_ms * 1000000LL : -1,
		  SDSM_FUTEX_BITSET_ANY);
	printf("after %lld ms\n", now_ms() - t0);
	return result(e);
}

static int cmd_wake(__u64 off, __u32 n)
{
	struct sdsm_info info;
	char *base;
	int fd = cmd_fd(&info, &base);
	int r = fwake(fd, word(base, off), n, SDSM_FUTEX_BITSET_ANY);

	if (r >= 0)
		printf("woken=%d\n", r);
	return result(r < 0 ? -r : 0);
}

static __u64 u64arg(const char *s)
{
	return strtoull(s, NULL, 0);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	struct sdsm_info info;
	char *base;
	int fd;

	if (argc < 2 || argv[1][0] == '-')
		return test_harness_run(argc, argv);
	if (!strcmp(c, "home") && argc == 3) {
		fd = cmd_fd(&info, &base);
		printf("%d\n", home_of(fd, base, u64arg(argv[2])));
		return 0;
	}
	if (!strcmp(c, "pick") && argc == 4) {
		__u64 off;

		fd = cmd_fd(&info, &base);
		off = pick_off(fd, base, info.node_id, true, atoi(argv[3]),
			       atoi(argv[2]));
		if (!off)
			return 1;
		printf("%llu\n", (unsigned long long)off);
		return 0;
	}
	if (!strcmp(c, "set") && argc == 4) {
		fd = cmd_fd(&info, &base);
		*word(base, u64arg(argv[2])) = u64arg(argv[3]);
		return 0;
	}
	if (!strcmp(c, "ring") && argc == 7)
		return cmd_ring(u64arg(argv[2]), atoi(argv[3]), atoi(argv[4]),
				atoi(argv[5]), atoi(argv[6]));
	if (!strcmp(c, "wait") && argc == 5)
		return cmd_wait(u64arg(argv[2]), u64arg(argv[3]),
				atoi(argv[4]));
	if (!strcmp(c, "wake") && argc == 4)
		return cmd_wake(u64arg(argv[2]), u64arg(argv[3]));
	fprintf(stderr, "usage: see the comment at the top of %s.c\n",
		argv[0]);
	return 2;
}
