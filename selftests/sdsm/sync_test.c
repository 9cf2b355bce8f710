// SPDX-License-Identifier: GPL-2.0
/*
 * sync_test - cluster locks and barriers (SDSM_IOC_LOCK, SDSM_IOC_BARRIER).
 *
 * Without arguments (or with harness options) it runs the kselftests of
 * one node: bad input gets the errno uapi/linux/sdsm.h documents, EPERM,
 * EDEADLK, TRY/EBUSY, timeouts, signals, release on close, FIFO order, and
 * barriers of this node's processes (generations, a waiter that leaves
 * early).  Lock tests run twice: on a lock this node manages and on one a
 * peer manages (skipped on a one-node cluster).  Every test SKIPs when the
 * module is not loaded or lacks the feature.
 *
 * With a command as first argument it is the helper of sync_tests.sh:
 *
 *   sync_test manager lock|barrier ID [MASK]  print the manager node id
 *   sync_test lockloop ID ITERS COUNTER OWNER  ITERS critical sections:
 *       create OWNER with O_EXCL (fails if another holder is inside),
 *       add 1 to the decimal in COUNTER, remove OWNER; exit 3 on overlap
 *   sync_test memloop ID ITERS OFFSET          add 1 ITERS times to the
 *       u64 at OFFSET of the default region, under the lock
 *   sync_test memread OFFSET                   print that u64
 *   sync_test hold ID SEC                      hold the lock SEC seconds
 *       (less if SIGUSR1 comes), print "held pid=PID" once it is held,
 *       then RELEASE
 *   sync_test acquire ID TIMEOUT_MS            one ACQUIRE, then RELEASE;
 *       prints "waiting pid=PID" first
 *   sync_test barrier ID PHASES DIR TIMEOUT_MS PHASES barriers of every
 *       node; before each, create DIR/PHASE.NODE; after it, every node's
 *       file of that phase must exist, and the serial arrival creates
 *       DIR/serial.PHASE.NODE
 *   sync_test barrier1 ID TIMEOUT_MS           one barrier of every node
 *
 * Helpers print "result=0" or "result=ENAME" for the ioctl that decides,
 * and exit 0 only on success.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdsm.h>

#include "kselftest_harness.h"

#define DEV "/dev/sdsm"
#define STATS "/sys/kernel/sdsm/stats/"

/* ------------------------------------------------------------------ */
/* Helpers shared by the tests and the commands                        */

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

/* One SDSM_IOC_LOCK; 0 or errno. */
static int lock_op(int fd, __u32 op, __u64 id, __u32 timeout_ms)
{
	struct sdsm_lock l = {
		.size = sizeof(l),
		.op = op,
		.timeout_ms = timeout_ms,
		.lock_id = id,
	};

	return ioctl(fd, SDSM_IOC_LOCK, &l) ? errno : 0;
}

/* One SDSM_IOC_BARRIER; 0 or errno, its out_flags in *@out if @out. */
static int barrier_op_out(int fd, __u64 id, __u32 count, __u64 mask,
			  __u32 timeout_ms, __u32 *out)
{
	struct sdsm_barrier b = {
		.size = sizeof(b),
		.count = count,
		.timeout_ms = timeout_ms,
		.barrier_id = id,
		.nodemask = mask,
		.out_flags = ~0u,
	};
	int e = ioctl(fd, SDSM_IOC_BARRIER, &b) ? errno : 0;

	if (out)
		*out = b.out_flags;
	return e;
}

static int barrier_op(int fd, __u64 id, __u32 count, __u64 mask,
		      __u32 timeout_ms)
{
	return barrier_op_out(fd, id, count, mask, timeout_ms, NULL);
}

/* The kernel's hash_64(id, 32) (include/linux/hash.h, 64-bit). */
static __u32 khash(__u64 id)
{
	return (__u32)((id * 0x61C8864680B583EBull) >> 32);
}

static unsigned int lock_manager(__u64 id, unsigned int nr_nodes)
{
	return khash(id) % nr_nodes;
}

static unsigned int barrier_manager(__u64 id, __u64 mask)
{
	unsigned int k = khash(id) % __builtin_popcountll(mask), i;

	for (i = 0; i < 64; i++)
		if ((mask & (1ull << i)) && !k--)
			return i;
	return 0;
}

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINTR: return "EINTR";
	case EHOSTDOWN: return "EHOSTDOWN";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case E2BIG: return "E2BIG";
	case ENOTTY: return "ENOTTY";
	case ENOMEM: return "ENOMEM";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* This node's id, set by the fixtures. */
static unsigned int self_node;

/*
 * A lock/barrier id for this run, tagged with @n, that no other process
 * picks: the pid and the time, and in bits 56-59 (which neither reaches)
 * the node, so that nodes running these tests at once do not collide.
 */
static __u64 fresh_id(unsigned int n)
{
	static __u64 base;

	if (!base)
		base = ((__u64)getpid() << 32) ^ ((__u64)time(NULL) << 12) ^
		       0x5d5e000000000000ull ^ ((__u64)(self_node & 15) << 56);
	return base + n * 0x10001ull;
}

/* An id whose lock manager is (@local) or is not this node. */
static __u64 lock_id_for(const struct sdsm_info *info, bool local,
			 unsigned int n)
{
	__u64 id = fresh_id(n);

	while ((lock_manager(id, info->nr_nodes) == info->node_id) != local)
		id++;
	return id;
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

/* Fork a child that opens its own file and runs @fn; returns the pid. */
static pid_t spawn(int (*fn)(int fd, __u64 a, __u64 b), __u64 a, __u64 b)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	fd = dev_open();
	if (fd < 0)
		_exit(100);
	_exit(fn(fd, a, b));
}

/* Exit status of @pid (errno-like), or -1 if it does not end in @ms. */
static int reap(pid_t pid, unsigned int ms)
{
	long long end = now_ms() + ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		msleep(20);
	}
}

static unsigned long long read_stat(const char *name)
{
	char path[128], buf[32] = "";
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), STATS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		v = strtoull(buf, NULL, 10);
	fclose(f);
	return v;
}

/* Children bodies: return an errno-like status. */
static int child_acquire(int fd, __u64 id, __u64 timeout_ms)
{
	int e = lock_op(fd, SDSM_LOCK_ACQUIRE, id, timeout_ms);

	if (!e)
		e = lock_op(fd, SDSM_LOCK_RELEASE, id, 0);
	return e;
}

/* Barrier of this node only (mask = this node), count from @count_to. */
static int child_barrier(int fd, __u64 id, __u64 count_to)
{
	return barrier_op(fd, id, count_to >> 32, 1ull << self_node,
			  (__u32)count_to);
}

/* ------------------------------------------------------------------ */
/* kselftests                                                          */

#define REQUIRE(feature)						\
	do {								\
		if (self->fd < 0)					\
			SKIP(return, DEV " absent: sdsm.ko not loaded");\
		if (!(self->info.features & (feature)))			\
			SKIP(return, "feature not in GET_INFO");	\
		if (self->skip)						\
			SKIP(return, "%s", self->skip);			\
	} while (0)

FIXTURE(lock) {
	int fd, fd2;
	struct sdsm_info info;
	__u64 id;
	const char *skip;
};

FIXTURE_VARIANT(lock) {
	bool local;
};

FIXTURE_VARIANT_ADD(lock, local_manager) {
	.local = true,
};

FIXTURE_VARIANT_ADD(lock, remote_manager) {
	.local = false,
};

FIXTURE_SETUP(lock)
{
	self->fd2 = -1;
	self->skip = NULL;
	self->fd = dev_open();
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, DEV " absent: sdsm.ko not loaded");
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	self_node = self->info.node_id;
	if (!variant->local && self->info.nr_nodes < 2) {
		self->skip = "one node: no remote manager";
		return;
	}
	self->id = lock_id_for(&self->info, variant->local, 1);
	self->fd2 = dev_open();
	ASSERT_LE(0, self->fd2);
}

FIXTURE_TEARDOWN(lock)
{
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(lock, bad_input)
{
	struct {
		struct sdsm_lock l;
		__u64 extra;
	} big = {};
	struct sdsm_lock l = {};

	REQUIRE(SDSM_FEATURE_LOCKS);

	l.size = 4;
	l.lock_id = self->id;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.size = sizeof(l) - 1;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);

	big.l.size = sizeof(big);
	big.l.op = SDSM_LOCK_TRY;
	big.l.lock_id = self->id;
	big.extra = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_LOCK, &big));
	EXPECT_EQ(E2BIG, errno);
	/* A bigger struct with a zero tail is fine. */
	big.extra = 0;
	EXPECT_EQ(0, ioctl(self->fd, SDSM_IOC_LOCK, &big));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));

	l.size = sizeof(l);
	l.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_LOCK, &l));
	EXPECT_EQ(EOPNOTSUPP, errno);
	l.flags = 0;
	l.op = 3;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.op = 0xffffffff;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);

	/* timeout_ms is for ACQUIRE only. */
	EXPECT_EQ(EINVAL, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 10));
	EXPECT_EQ(EINVAL, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 10));
	EXPECT_EQ(EFAULT, ioctl(self->fd, SDSM_IOC_LOCK, NULL) ? errno : 0);
}

TEST_F(lock, release_not_held)
{
	REQUIRE(SDSM_FEATURE_LOCKS);

	EXPECT_EQ(EPERM, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	/* Held through another file is not held through this one. */
	ASSERT_EQ(0, lock_op(self->fd2, SDSM_LOCK_ACQUIRE, self->id, 0));
	EXPECT_EQ(EPERM, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd2, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(EPERM, lock_op(self->fd2, SDSM_LOCK_RELEASE, self->id, 0));
}

TEST_F(lock, acquire_twice_deadlk)
{
	unsigned long long acq = read_stat("lock_acquires");

	REQUIRE(SDSM_FEATURE_LOCKS);

	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	EXPECT_EQ(EDEADLK, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	EXPECT_EQ(EDEADLK, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id,
				   100));
	EXPECT_EQ(EDEADLK, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(EPERM, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	/* Free again: TRY takes it. */
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	if (access(STATS "lock_acquires", R_OK) == 0)
		EXPECT_LE(acq + 2, read_stat("lock_acquires"));
}

/* A second thread of the lock holder's process, through the same file. */
struct sibling {
	int fd;
	__u64 id;
	int try, release_held, acquire, release_own;
	volatile int done;
};

static void *sibling_thread(void *p)
{
	struct sibling *s = p;

	s->try = lock_op(s->fd, SDSM_LOCK_TRY, s->id, 0);
	s->release_held = lock_op(s->fd, SDSM_LOCK_RELEASE, s->id, 0);
	s->acquire = lock_op(s->fd, SDSM_LOCK_ACQUIRE, s->id, 60000);
	__atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
	s->release_own = lock_op(s->fd, SDSM_LOCK_RELEASE, s->id, 0);
	return NULL;
}

/*
 * The owner is the thread: another thread of the same process (the same
 * file) finds the lock busy, cannot release it, and waits for it like a
 * thread of another node.  Before, it got EDEADLK and could release it.
 */
TEST_F(lock, threads_of_one_file_queue)
{
	struct sibling s = { .fd = self->fd, .id = self->id };
	pthread_t t;

	REQUIRE(SDSM_FEATURE_LOCKS);
	EXPECT_TRUE(self->info.features & SDSM_FEATURE_LOCK_THREADS);

	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	ASSERT_EQ(0, pthread_create(&t, NULL, sibling_thread, &s));
	msleep(500);
	/* Still waiting while this thread holds it. */
	EXPECT_EQ(0, __atomic_load_n(&s.done, __ATOMIC_SEQ_CST));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_STREQ("EBUSY", ename(s.try));
	EXPECT_STREQ("EPERM", ename(s.release_held));
	EXPECT_STREQ("0", ename(s.acquire));
	EXPECT_STREQ("0", ename(s.release_own));
	/* It released it: free again. */
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
}

TEST_F(lock, try_busy_and_timeout)
{
	long long t0;

	REQUIRE(SDSM_FEATURE_LOCKS);

	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	EXPECT_EQ(EBUSY, lock_op(self->fd2, SDSM_LOCK_TRY, self->id, 0));
	t0 = now_ms();
	EXPECT_EQ(ETIMEDOUT, lock_op(self->fd2, SDSM_LOCK_ACQUIRE, self->id,
				     300));
	/* Not before the timeout (no upper bound: guests are slow). */
	EXPECT_LE(290, now_ms() - t0);
	/* The timed-out waiter was withdrawn: a release frees the lock. */
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd2, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd2, SDSM_LOCK_RELEASE, self->id, 0));
}

TEST_F(lock, signal_eintr)
{
	REQUIRE(SDSM_FEATURE_LOCKS);

	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	alarm_ms(300);
	EXPECT_EQ(EINTR, lock_op(self->fd2, SDSM_LOCK_ACQUIRE, self->id, 0));
	EXPECT_EQ(EPERM, lock_op(self->fd2, SDSM_LOCK_RELEASE, self->id, 0));
	/* The interrupted waiter was withdrawn, not granted later. */
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
}

TEST_F(lock, close_releases)
{
	REQUIRE(SDSM_FEATURE_LOCKS);

	ASSERT_EQ(0, lock_op(self->fd2, SDSM_LOCK_ACQUIRE, self->id, 0));
	ASSERT_EQ(0, lock_op(self->fd2, SDSM_LOCK_ACQUIRE, self->id + 1, 0));
	EXPECT_EQ(EBUSY, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	close(self->fd2);
	self->fd2 = -1;
	/* The release is ordered before our request to the same manager. */
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_TRY, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id + 1,
			     10000));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id + 1, 0));
}

TEST_F(lock, process_exit_releases)
{
	pid_t pid;

	REQUIRE(SDSM_FEATURE_LOCKS);

	/* A child takes the lock and dies holding it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = dev_open();

		_exit(fd < 0 ? 100 : lock_op(fd, SDSM_LOCK_ACQUIRE, self->id,
					     0));
	}
	ASSERT_EQ(0, reap(pid, 60000));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 30000));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
}

/*
 * The waiter is queued at the manager while the lock is held; where that
 * is this node, its manager_lock_queued says so (waited for, at most 30 s;
 * a module without the counter: 500 ms, as before it).
 */
TEST_F(lock, waiter_granted_on_release)
{
	unsigned long long waits = read_stat("lock_waits");
	unsigned long long queued = read_stat("manager_lock_queued");
	bool counted = access(STATS "manager_lock_queued", R_OK) == 0;
	int i;
	pid_t pid;

	REQUIRE(SDSM_FEATURE_LOCKS);

	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	pid = spawn(child_acquire, self->id, 0);
	ASSERT_LE(0, pid);
	if (variant->local && counted) {
		for (i = 0; i < 1500; i++) {
			if (read_stat("manager_lock_queued") > queued)
				break;
			msleep(20);
		}
		EXPECT_EQ(queued + 1, read_stat("manager_lock_queued"));
	} else {
		msleep(500);
	}
	/* Still waiting while we hold it. */
	EXPECT_EQ(0, waitpid(pid, NULL, WNOHANG));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	EXPECT_EQ(0, reap(pid, 60000));
	if (access(STATS "lock_waits", R_OK) == 0)
		EXPECT_LE(waits + 1, read_stat("lock_waits"));
}

/* Waiters are granted in arrival order. */
TEST_F(lock, fifo)
{
	char path[] = "/tmp/sync_test_fifo.XXXXXX";
	pid_t pid[3];
	int i, fd, n;
	char buf[8] = "";

	REQUIRE(SDSM_FEATURE_LOCKS);

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			int cfd = dev_open();
			char c = '0' + i;

			if (cfd < 0 || lock_op(cfd, SDSM_LOCK_ACQUIRE,
					       self->id, 0))
				_exit(1);
			if (write(fd, &c, 1) != 1)
				_exit(2);
			msleep(50);
			_exit(lock_op(cfd, SDSM_LOCK_RELEASE, self->id, 0));
		}
		/* Generous: the request must reach the manager first. */
		msleep(1000);
	}
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, reap(pid[i], 60000));
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	EXPECT_EQ(3, n);
	EXPECT_STREQ("012", buf);
	close(fd);
	unlink(path);
}

/* Many waiters that give up at random moments leave no stale holder. */
TEST_F(lock, giving_up_waiters_leave_nothing)
{
	pid_t pid[6];
	int i;

	REQUIRE(SDSM_FEATURE_LOCKS);

	ASSERT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 0));
	for (i = 0; i < 6; i++) {
		pid[i] = spawn(child_acquire, self->id, 100 + 150 * i);
		ASSERT_LE(0, pid[i]);
	}
	msleep(500);
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
	for (i = 0; i < 6; i++) {
		int st = reap(pid[i], 60000);

		EXPECT_TRUE(st == 0 || st == ETIMEDOUT);
	}
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_ACQUIRE, self->id, 30000));
	EXPECT_EQ(0, lock_op(self->fd, SDSM_LOCK_RELEASE, self->id, 0));
}

/* Mutual exclusion among processes of this node: a shared counter. */
TEST_F(lock, exclusion_local_processes)
{
	volatile unsigned long *ctr;
	pid_t pid[4];
	int i;

	REQUIRE(SDSM_FEATURE_LOCKS);

	ctr = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctr);
	ctr[0] = 0;
	ctr[1] = 0;
	for (i = 0; i < 4; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			int fd = dev_open(), j;

			for (j = 0; j < 25; j++) {
				unsigned long v;

				if (lock_op(fd, SDSM_LOCK_ACQUIRE, self->id, 0))
					_exit(1);
				if (__atomic_add_fetch(&ctr[1], 1,
						       __ATOMIC_SEQ_CST) != 1)
					_exit(3);	/* two inside */
				v = ctr[0];
				sched_yield();
				ctr[0] = v + 1;
				__atomic_sub_fetch(&ctr[1], 1,
						   __ATOMIC_SEQ_CST);
				if (lock_op(fd, SDSM_LOCK_RELEASE, self->id, 0))
					_exit(2);
			}
			_exit(0);
		}
	}
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, reap(pid[i], 120000));
	EXPECT_EQ(100, ctr[0]);
	munmap((void *)ctr, 4096);
}

/* ---- barriers of this node's processes ---- */

FIXTURE(barrier) {
	int fd;
	struct sdsm_info info;
	__u64 id;
	const char *skip;
};

FIXTURE_SETUP(barrier)
{
	self->skip = NULL;
	self->fd = dev_open();
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, DEV " absent: sdsm.ko not loaded");
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	self_node = self->info.node_id;
	self->id = fresh_id(7);
}

FIXTURE_TEARDOWN(barrier)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(barrier, bad_input)
{
	struct sdsm_barrier b = {};
	__u64 me = 1ull << self->info.node_id;
	__u64 all = self->info.nr_nodes == 64 ? ~0ull :
		    (1ull << self->info.nr_nodes) - 1;

	REQUIRE(SDSM_FEATURE_BARRIERS);

	b.size = 8;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_BARRIER, &b));
	EXPECT_EQ(EINVAL, errno);
	b.size = sizeof(b);
	b.flags = 2;
	b.nodemask = me;
	b.count = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_BARRIER, &b));
	EXPECT_EQ(EOPNOTSUPP, errno);
	b.flags = 0;
	b.__reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SDSM_IOC_BARRIER, &b));
	EXPECT_EQ(EINVAL, errno);
	/* A node beyond the cluster. */
	EXPECT_EQ(EINVAL, barrier_op(self->fd, self->id, 1, me | (all + 1),
				     1000));
	EXPECT_EQ(EINVAL, barrier_op(self->fd, self->id, 0, 1ull << 63, 1000));
	/* This node not in the mask. */
	if (self->info.nr_nodes > 1)
		EXPECT_EQ(EINVAL, barrier_op(self->fd, self->id, 1, all & ~me,
					     1000));
	EXPECT_EQ(EFAULT, ioctl(self->fd, SDSM_IOC_BARRIER, NULL) ? errno : 0);
}

TEST_F(barrier, single_arrival)
{
	unsigned long long waits = read_stat("barrier_waits");
	__u64 me = 1ull << self->info.node_id;
	struct sdsm_barrier old = {
		.size = offsetof(struct sdsm_barrier, out_flags),
		.count = 1,
		.barrier_id = self->id,
		.nodemask = me,
		.out_flags = 0xdead,
	};
	__u32 out = 0;

	REQUIRE(SDSM_FEATURE_BARRIERS);

	/* count 0 = one per node of the mask = 1: returns at once. */
	EXPECT_EQ(0, barrier_op(self->fd, self->id, 0, me, 30000));
	EXPECT_EQ(0, barrier_op(self->fd, self->id, 1, me, 30000));
	EXPECT_EQ(0, barrier_op_out(self->fd, self->id, 0, me, 0, &out));
	/* The only arrival is the last: serial, where the module says. */
	if (self->info.features & SDSM_FEATURE_BARRIER_SERIAL)
		EXPECT_EQ(SDSM_BARRIER_OUT_SERIAL, out);
	/* A caller built before out_flags: nothing written past its size. */
	EXPECT_EQ(0, ioctl(self->fd, SDSM_IOC_BARRIER, &old));
	EXPECT_EQ(0xdead, old.out_flags);
	if (access(STATS "barrier_waits", R_OK) == 0)
		EXPECT_LE(waits + 4, read_stat("barrier_waits"));
}

TEST_F(barrier, timeout_then_reuse)
{
	__u64 me = 1ull << self->info.node_id;
	long long t0 = now_ms();
	pid_t pid;

	REQUIRE(SDSM_FEATURE_BARRIERS);

	EXPECT_EQ(ETIMEDOUT, barrier_op(self->fd, self->id, 2, me, 300));
	EXPECT_LE(290, now_ms() - t0);
	/*
	 * The timed-out arrival was withdrawn: the next generation needs
	 * two new arrivals, so one alone times out again ...
	 */
	EXPECT_EQ(ETIMEDOUT, barrier_op(self->fd, self->id, 2, me, 300));
	/* ... and two complete it. */
	pid = spawn(child_barrier, self->id, (2ull << 32) | 60000);
	ASSERT_LE(0, pid);
	EXPECT_EQ(0, barrier_op(self->fd, self->id, 2, me, 60000));
	EXPECT_EQ(0, reap(pid, 60000));
}

TEST_F(barrier, signal_eintr)
{
	__u64 me = 1ull << self->info.node_id;
	pid_t pid;

	REQUIRE(SDSM_FEATURE_BARRIERS);

	alarm_ms(300);
	EXPECT_EQ(EINTR, barrier_op(self->fd, self->id, 2, me, 0));
	pid = spawn(child_barrier, self->id, (2ull << 32) | 60000);
	ASSERT_LE(0, pid);
	EXPECT_EQ(0, barrier_op(self->fd, self->id, 2, me, 60000));
	EXPECT_EQ(0, reap(pid, 60000));
}

TEST_F(barrier, mismatched_count)
{
	__u64 me = 1ull << self->info.node_id;
	pid_t pid;

	REQUIRE(SDSM_FEATURE_BARRIERS);

	pid = spawn(child_barrier, self->id, (2ull << 32) | 60000);
	ASSERT_LE(0, pid);
	msleep(500);
	/* The generation waits for 2; an arrival asking for 3 is refused. */
	EXPECT_EQ(EINVAL, barrier_op(self->fd, self->id, 3, me, 30000));
	EXPECT_EQ(0, barrier_op(self->fd, self->id, 2, me, 60000));
	EXPECT_EQ(0, reap(pid, 60000));
}

/* Generations: 4 processes, count 4, 5 rounds back to back. */
/* One arrival; count it in @serials[@r] if serial.  0 or errno. */
static int arrive_counted(int fd, __u64 id, __u64 mask, int *serials, int r)
{
	__u32 out;
	int e = barrier_op_out(fd, id, 4, mask, 60000, &out);

	if (!e && (out & SDSM_BARRIER_OUT_SERIAL))
		__atomic_add_fetch(&serials[r], 1, __ATOMIC_SEQ_CST);
	return e;
}

/* 4 processes, 5 generations: each one serial arrival, where named. */
TEST_F(barrier, generations)
{
	__u64 me = 1ull << self->info.node_id;
	int *serials;
	pid_t pid[3];
	int i, r;

	REQUIRE(SDSM_FEATURE_BARRIERS);

	serials = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, serials);
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			int fd = dev_open();

			for (r = 0; r < 5; r++)
				if (arrive_counted(fd, self->id, me, serials,
						   r))
					_exit(1);
			_exit(0);
		}
	}
	for (r = 0; r < 5; r++)
		EXPECT_EQ(0, arrive_counted(self->fd, self->id, me, serials,
					    r));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, reap(pid[i], 60000));
	if (self->info.features & SDSM_FEATURE_BARRIER_SERIAL)
		for (r = 0; r < 5; r++)
			EXPECT_EQ(1, serials[r]) TH_LOG("generation %d", r);
	munmap(serials, 4096);
}

/* ------------------------------------------------------------------ */
/* Commands for sync_tests.sh                                          */

static int cmd_fd(struct sdsm_info *info)
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
	return fd;
}

static int result(int e)
{
	printf("result=%s\n", ename(e));
	fflush(stdout);
	return e ? 1 : 0;
}

static long long read_counter(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoll(buf) : 0;
}

static int write_counter(const char *path, long long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int n = snprintf(buf, sizeof(buf), "%lld\n", v), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, n) == n;
	return close(fd) || !ok ? -1 : 0;
}

static int cmd_lockloop(__u64 id, int iters, const char *counter,
			const char *owner)
{
	struct sdsm_info info;
	int fd = cmd_fd(&info), i, e, ofd;

	for (i = 0; i < iters; i++) {
		e = lock_op(fd, SDSM_LOCK_ACQUIRE, id, 120000);
		if (e)
			return result(e);
		ofd = open(owner, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (ofd < 0) {
			printf("overlap: %s exists in node %u's critical section (%s)\n",
			       owner, info.node_id, strerror(errno));
			return 3;
		}
		dprintf(ofd, "%u %d\n", info.node_id, getpid());
		close(ofd);
		if (write_counter(counter, read_counter(counter) + 1)) {
			perror(counter);
			return 4;
		}
		if (unlink(owner)) {
			perror(owner);
			return 4;
		}
		e = lock_op(fd, SDSM_LOCK_RELEASE, id, 0);
		if (e)
			return result(e);
	}
	return result(0);
}

static volatile __u64 *map_default(int fd, __u64 offset)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       offset & ~4095ull);

	if (p == MAP_FAILED) {
		perror("mmap " DEV);
		exit(2);
	}
	return (volatile __u64 *)((char *)p + (offset & 4095));
}

static int cmd_memloop(__u64 id, int iters, __u64 offset)
{
	struct sdsm_info info;
	int fd = cmd_fd(&info), i, e;
	volatile __u64 *v;

	if (!(info.features & SDSM_FEATURE_COHERENT_MEMORY)) {
		printf("no coherent memory\n");
		return 2;
	}
	v = map_default(fd, offset);
	for (i = 0; i < iters; i++) {
		e = lock_op(fd, SDSM_LOCK_ACQUIRE, id, 120000);
		if (e)
			return result(e);
		*v = *v + 1;
		e = lock_op(fd, SDSM_LOCK_RELEASE, id, 0);
		if (e)
			return result(e);
	}
	return result(0);
}

static int cmd_memread(__u64 offset)
{
	struct sdsm_info info;
	int fd = cmd_fd(&info);

	if (!(info.features & SDSM_FEATURE_COHERENT_MEMORY)) {
		printf("no coherent memory\n");
		return 2;
	}
	printf("%llu\n", (unsigned long long)*map_default(fd, offset));
	return 0;
}

static int cmd_hold(__u64 id, unsigned int sec)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct sdsm_info info;
	int fd = cmd_fd(&info), e;

	/* SIGUSR1 ends the sleep (no SA_RESTART), not the process. */
	sigaction(SIGUSR1, &sa, NULL);
	e = lock_op(fd, SDSM_LOCK_ACQUIRE, id, 60000);
	if (e)
		return result(e);
	printf("held pid=%d\n", getpid());
	fflush(stdout);
	sleep(sec);
	return result(lock_op(fd, SDSM_LOCK_RELEASE, id, 0));
}

static int cmd_acquire(__u64 id, unsigned int timeout_ms)
{
	struct sdsm_info info;
	int fd = cmd_fd(&info), e;
	long long t0 = now_ms();

	printf("waiting pid=%d\n", getpid());
	fflush(stdout);
	e = lock_op(fd, SDSM_LOCK_ACQUIRE, id, timeout_ms);
	printf("after %lld ms\n", now_ms() - t0);
	if (!e)
		lock_op(fd, SDSM_LOCK_RELEASE, id, 0);
	return result(e);
}

static int cmd_barrier(__u64 id, int phases, const char *dir,
		       unsigned int timeout_ms)
{
	struct sdsm_info info;
	int fd = cmd_fd(&info), p, k, e;
	char path[4096];
	__u32 out;

	for (p = 0; p < phases; p++) {
		snprintf(path, sizeof(path), "%s/%d.%u", dir, p, info.node_id);
		if (close(open(path, O_CREAT | O_WRONLY, 0644))) {
			perror(path);
			return 4;
		}
		e = barrier_op_out(fd, id, 0, 0, timeout_ms, &out);
		if (e) {
			printf("phase %d: ", p);
			return result(e);
		}
		/* The serial arrival of the phase leaves DIR/serial.PHASE.NODE. */
		snprintf(path, sizeof(path), "%s/serial.%d.%u", dir, p,
			 info.node_id);
		if ((out & SDSM_BARRIER_OUT_SERIAL) &&
		    close(open(path, O_CREAT | O_WRONLY, 0644))) {
			perror(path);
			return 4;
		}
		for (k = 0; k < (int)info.nr_nodes; k++) {
			snprintf(path, sizeof(path), "%s/%d.%d", dir, p, k);
			if (access(path, F_OK)) {
				printf("phase %d: node %u passed the barrier before node %d arrived\n",
				       p, info.node_id, k);
				return 3;
			}
		}
	}
	return result(0);
}

static int cmd_barrier1(__u64 id, unsigned int timeout_ms)
{
	struct sdsm_info info;
	int fd = cmd_fd(&info), e;
	long long t0 = now_ms();

	e = barrier_op(fd, id, 0, 0, timeout_ms);
	printf("after %lld ms\n", now_ms() - t0);
	return result(e);
}

static int cmd_manager(const char *what, __u64 id, __u64 mask)
{
	struct sdsm_info info;

	close(cmd_fd(&info));
	if (!mask)
		mask = (1ull << info.nr_nodes) - 1;
	printf("%u\n", strcmp(what, "lock") ? barrier_manager(id, mask) :
		       lock_manager(id, info.nr_nodes));
	return 0;
}

static __u64 u64arg(const char *s)
{
	return strtoull(s, NULL, 0);
}

static int usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of sync_test.c\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	if (argc < 2 || argv[1][0] == '-')
		return test_harness_run(argc, argv);
	if (!strcmp(c, "manager") && argc >= 4)
		return cmd_manager(argv[2], u64arg(argv[3]),
				   argc > 4 ? u64arg(argv[4]) : 0);
	if (!strcmp(c, "lockloop") && argc == 6)
		return cmd_lockloop(u64arg(argv[2]), atoi(argv[3]), argv[4],
				    argv[5]);
	if (!strcmp(c, "memloop") && argc == 5)
		return cmd_memloop(u64arg(argv[2]), atoi(argv[3]),
				   u64arg(argv[4]));
	if (!strcmp(c, "memread") && argc == 3)
		return cmd_memread(u64arg(argv[2]));
	if (!strcmp(c, "hold") && argc == 4)
		return cmd_hold(u64arg(argv[2]), atoi(argv[3]));
	if (!strcmp(c, "acquire") && argc == 4)
		return cmd_acquire(u64arg(argv[2]), atoi(argv[3]));
	if (!strcmp(c, "barrier") && argc == 6)
		return cmd_barrier(u64arg(argv[2]), atoi(argv[3]), argv[4],
				   atoi(argv[5]));
	if (!strcmp(c, "barrier1") && argc == 4)
		return cmd_barrier1(u64arg(argv[2]), atoi(argv[3]));
	return usage();
}
