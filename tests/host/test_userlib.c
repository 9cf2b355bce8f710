// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of libsdsm (userlib/) and of sdsmctl's join-config parser.
 *
 * No kernel module is needed: the library's device is a regular file named
 * by SDSM_DEVICE, and this program defines ioctl(), which the dynamic
 * linker binds libsdsm's calls to (an executable's symbols come first), to
 * play the module: GET_INFO with chosen features, regions at offsets of
 * the file (so mmap() works), QUERY_HOME answering a function of the
 * address.  Every other descriptor goes to the real ioctl.  sysfs comes
 * from fixture trees under SDSM_SYSFS_ROOT.  Tests that open the device run
 * in a child process, because libsdsm keeps its device open per process.
 *
 * TAP 13; options --count, --first N, --prefix STR, --no-plan as
 * test_proto (tests/host/run.sh joins the streams).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>
#include <sys/mman.h>

#include "sdsm.h"
#include "sdsm_heap.h"
#include "sdsmctl.h"
#include "tap_args.h"

/* ---- assertions ---- */

static int check_failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: check failed: %s: ", __FILE__,	\
		       __LINE__, #cond);				\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		check_failed = 1;					\
	}								\
} while (0)

#define CHECK_ERR(ret, want_ret, want_errno) do {			\
	long _r = (ret);						\
	int _e = errno;							\
	CHECK(_r == (want_ret) && _e == (want_errno),			\
	      "got %ld errno %s, want %ld errno %s (%s)", _r,		\
	      strerrorname_np(_e) ? strerrorname_np(_e) : "?",		\
	      (long)(want_ret), strerrorname_np(want_errno),		\
	      sdsm_last_error());					\
} while (0)

/* ---- sdsmctl stubs for sdsmctl_join.c ---- */

const char *sdsmctl_prog = "sdsmctl";

void sdsmctl_err(const char *fmt, ...)
{
	(void)fmt;
}

int sdsmctl_usage_err(const char *fmt, ...)
{
	(void)fmt;
	return 2;
}

/* ---- the fake module ---- */

#define FAKE_SIZE	(1ULL << 30)	/* sparse: room for heap chunks */
#define FAKE_REGIONS	16

struct fake_region {
	bool used;
	char name[SDSM_NAME_MAX];
	uint64_t length, offset;
	struct sdsm_policy policy;
	uint32_t flags;
	uint32_t manager;
};

static struct {
	dev_t dev;
	ino_t ino;
	bool active;
	uint64_t features;
	uint32_t api_version;
	uint64_t next_offset;
	struct fake_region regions[FAKE_REGIONS];
	int destroyed_id;
	unsigned int query_calls, lock_calls, lock_eintr;
	int lock_errno;
	struct sdsm_barrier last_barrier;
	struct sdsm_set_policy last_set_policy;
	struct sdsm_futex last_futex;
	int futex_errno;
	uint32_t futex_woken;
	unsigned int futex_calls;
	char lock_trace[16];		/* A(cquire), T(ry), R(elease) */
	bool no_release;		/* a module without SDSM_REGION_F_RELEASE */
	bool no_manager;		/* a module without SDSM_REGION_F_MANAGER */
	unsigned int creates;		/* REGION_CREATE calls */
	uint32_t *bump_on_release;	/* a signal racing a cond wait */
} fake;

static char fake_path[64];
static char sysfs_dir[64];

static int fake_home(uint64_t addr)
{
	if ((addr >> 12) % 7 == 6)
		return -ENOENT;
	return (addr >> 12) % 3;
}

static bool fake_fd(int fd)
{
	struct stat st;

	return fake.active && fstat(fd, &st) == 0 && st.st_dev == fake.dev &&
	       st.st_ino == fake.ino;
}

static int fake_ioctl(unsigned long req, void *arg)
{
	unsigned int i;

	switch (req) {
	case SDSM_IOC_GET_INFO: {
		struct sdsm_info *info = arg;

		info->api_version = fake.api_version;
		info->node_id = 0;
		info->nr_nodes = 3;
		info->features = fake.features;
		return 0;
	}
	case SDSM_IOC_REGION_CREATE: {
		struct sdsm_region_create *c = arg;

		if (!(fake.features & SDSM_FEATURE_REGIONS))
			return -ENOTTY;
		fake.creates++;
		if ((fake.no_release && (c->flags & SDSM_REGION_F_RELEASE)) ||
		    (fake.no_manager && (c->flags & SDSM_REGION_F_MANAGER)))
			return -EOPNOTSUPP;
		for (i = 0; i < FAKE_REGIONS; i++)
			if (fake.regions[i].used &&
			    !strcmp(fake.regions[i].name, c->name))
				return -EEXIST;
		if (fake.next_offset + c->length > FAKE_SIZE)
			return -ENOSPC;
		for (i = 1; i < FAKE_REGIONS && fake.regions[i].used; i++)
			;
		if (i == FAKE_REGIONS)
			return -ENOSPC;
		fake.regions[i].used = true;
		strcpy(fake.regions[i].name, c->name);
		fake.regions[i].length = c->length;
		fake.regions[i].offset = fake.next_offset;
		fake.regions[i].policy = c->policy;
		fake.regions[i].flags = c->flags;
		fake.regions[i].manager = c->manager;
		fake.next_offset += c->length;
		c->region_id = i;
		c->offset = fake.regions[i].offset;
		return 0;
	}
	case SDSM_IOC_REGION_OPEN: {
		struct sdsm_region_info *ri = arg;

		for (i = 0; i < FAKE_REGIONS; i++)
			if (fake.regions[i].used &&
			    !strcmp(fake.regions[i].name, ri->name))
				break;
		if (i == FAKE_REGIONS)
			return -ENOENT;
		ri->region_id = i;
		ri->length = fake.regions[i].length;
		ri->offset = fake.regions[i].offset;
		ri->policy = fake.regions[i].policy;
		ri->consistency = fake.regions[i].flags & SDSM_REGION_F_RELEASE ?
				  SDSM_CONSISTENCY_RELEASE :
				  SDSM_CONSISTENCY_SEQUENTIAL;
		ri->manager = fake.regions[i].flags & SDSM_REGION_F_MANAGER ?
			      fake.regions[i].manager :
			      SDSM_MANAGER_INTERLEAVE;
		return 0;
	}
	case SDSM_IOC_REGION_DESTROY: {
		struct sdsm_region_destroy *d = arg;

		if (d->region_id >= FAKE_REGIONS || !fake.regions[d->region_id].used)
			return -ENOENT;
		fake.regions[d->region_id].used = false;
		fake.destroyed_id = d->region_id;
		return 0;
	}
	case SDSM_IOC_SET_POLICY:
		fake.last_set_policy = *(struct sdsm_set_policy *)arg;
		return 0;
	case SDSM_IOC_QUERY_HOME: {
		struct sdsm_query_home *q = arg;
		uint64_t *addrs = (uint64_t *)(uintptr_t)q->addrs;
		int32_t *homes = (int32_t *)(uintptr_t)q->homes;

		if (!q->count || q->count > 4096)
			return -EINVAL;
		fake.query_calls++;
		for (i = 0; i < q->count; i++)
			homes[i] = fake_home(addrs[i]);
		return 0;
	}
	case SDSM_IOC_LOCK: {
		struct sdsm_lock *l = arg;
		size_t n = strlen(fake.lock_trace);

		fake.lock_calls++;
		if (n < sizeof(fake.lock_trace) - 1)
			fake.lock_trace[n] = "ATR"[l->op % 3];
		if (l->op == SDSM_LOCK_RELEASE && fake.bump_on_release)
			__atomic_add_fetch(fake.bump_on_release, 1,
					   __ATOMIC_SEQ_CST);
		if (!(fake.features & SDSM_FEATURE_LOCKS) ||
		    fake.lock_errno == ENOTTY)
			return -ENOTTY;
		if (fake.lock_eintr) {
			fake.lock_eintr--;
			return -EINTR;
		}
		return fake.lock_errno ? -fake.lock_errno : 0;
	}
	case SDSM_IOC_BARRIER:
		fake.last_barrier = *(struct sdsm_barrier *)arg;
		return 0;
	case SDSM_IOC_FUTEX: {
		struct sdsm_futex *f = arg;

		if (!(fake.features & SDSM_FEATURE_FUTEX))
			return -ENOTTY;
		fake.last_futex = *f;
		fake.futex_calls++;
		if (fake.futex_errno)
			return -fake.futex_errno;
		if (f->op == SDSM_FUTEX_WAIT &&
		    *(uint32_t *)(uintptr_t)f->addr != f->val)
			return -EAGAIN;
		f->woken = f->op == SDSM_FUTEX_WAKE ? fake.futex_woken : 0;
		return 0;
	}
	}
	return -ENOTTY;
}

/* Bound by the dynamic linker in place of libc's for libsdsm too. */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!fake_fd(fd))
		return syscall(SYS_ioctl, fd, req, arg);
	ret = fake_ioctl(req, arg);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

static void fake_start(uint64_t features)
{
	struct stat st;
	int fd;

	fd = open(fake_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, FAKE_SIZE) < 0 || fstat(fd, &st) < 0) {
		printf("# cannot create %s: %s\n", fake_path, strerror(errno));
		exit(1);
	}
	close(fd);
	memset(&fake, 0, sizeof(fake));
	fake.dev = st.st_dev;
	fake.ino = st.st_ino;
	fake.features = features;
	fake.api_version = SDSM_API_VERSION;
	fake.next_offset = 1 << 20;
	fake.destroyed_id = -1;
	fake.active = true;
	setenv("SDSM_DEVICE", fake_path, 1);
	setenv("SDSM_SYSFS_ROOT", sysfs_dir, 1);
}

#define ALL_FEATURES	(SDSM_FEATURE_PAGE_TRANSPORT | SDSM_FEATURE_REGIONS | \
			 SDSM_FEATURE_PLACEMENT | SDSM_FEATURE_LOCKS | \
			 SDSM_FEATURE_BARRIERS | SDSM_FEATURE_FUTEX)

/* ---- fixtures ---- */

static void put(const char *rel, const char *val)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysfs_dir, rel);
	for (char *p = path + strlen(sysfs_dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		printf("# cannot write %s\n", path);
		exit(1);
	}
	fputs(val, f);
	fclose(f);
}

static void unput(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", sysfs_dir, rel);
	unlink(path);
}

/* A 3-node cluster seen from node 1; node 2 down, some files missing. */
static void make_fixture(void)
{
	put("node_id", "1\n");
	put("nr_nodes", "3\n");
	put("nodes/2/addr", "198.18.0.3\n");
	put("nodes/2/state", "down\n");
	put("nodes/2/rtt_us", "0\n");
	put("nodes/0/addr", "198.18.0.1\n");
	put("nodes/0/state", "up\n");
	put("nodes/0/rtt_us", "95\n");
	put("nodes/0/tx_msgs", "10\n");
	put("nodes/0/rx_msgs", "11\n");
	put("nodes/0/tx_bytes", "1000\n");
	put("nodes/0/rx_bytes", "1100\n");
	put("nodes/0/homed_pages", "42\n");
	put("nodes/0/free_kb", "1024\n");
	put("nodes/1/addr", "198.18.0.2\n");
	put("nodes/1/state", "self\n");
	put("nodes/1/rtt_us", "0\n");
	put("stats/read_faults_remote", "7\n");
	put("stats/bytes_sent", "18446744073709551615\n");
	put("stats/fault_latency_hist", "0-1 5\n1-2 7\n2-4 0\n4- 3\n");
	put("regions/1/name", "shared.a\n");
	put("regions/1/size", "65536\n");
}

/* ---- tests: node lists and policies (no device) ---- */

static bool test_nodemask_good(void)
{
	static const struct {
		const char *s;
		unsigned int nr;
		uint64_t mask;
	} cases[] = {
		{ "all", 3, 0x7 }, { "0,2", 3, 0x5 }, { "1-3", 4, 0xe },
		{ "!0", 3, 0x6 }, { "0-1,3", 4, 0xb }, { "2", 3, 0x4 },
		{ "!1-2", 3, 0x1 }, { "0,0,1", 3, 0x3 }, { "31", 0, 1u << 31 },
		{ "all", 0, 0xffffffffULL }, { "0-2,1", 3, 0x7 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t m = 0;
		int ret = sdsm_parse_nodemask(cases[i].s, cases[i].nr, &m);

		CHECK(ret == 0 && m == cases[i].mask,
		      "'%s' nr %u: ret %d mask %#llx (%s)", cases[i].s,
		      cases[i].nr, ret, (unsigned long long)m,
		      sdsm_last_error());
	}
	return true;
}

static bool test_nodemask_bad(void)
{
	static const struct {
		const char *s;
		unsigned int nr;
		int err;
	} cases[] = {
		{ "5-2", 8, EINVAL }, { "0,,1", 3, EINVAL }, { "x", 3, EINVAL },
		{ "!", 3, EINVAL }, { "", 3, EINVAL }, { "1,", 3, EINVAL },
		{ ",1", 3, EINVAL }, { "-1", 3, EINVAL }, { "1-", 3, EINVAL },
		{ "0x1", 3, EINVAL }, { " 1", 3, EINVAL }, { "1 ", 3, EINVAL },
		{ "!0-2", 3, EINVAL }, { "!!0", 3, EINVAL }, { "ALL", 3, EINVAL },
		{ "99999999999999999999", 3, ERANGE }, { "3", 3, ERANGE },
		{ "0-3", 3, ERANGE }, { "32", 0, ERANGE }, { "64", 64, ERANGE },
		{ "1+", 3, EINVAL },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t m = 0x55;
		int ret;

		errno = 0;
		ret = sdsm_parse_nodemask(cases[i].s, cases[i].nr, &m);
		CHECK_ERR(ret, -1, cases[i].err);
		CHECK(m == 0x55, "'%s' changed the mask", cases[i].s);
		CHECK(strstr(sdsm_last_error(), "node list"),
		      "'%s': message '%s'", cases[i].s, sdsm_last_error());
	}
	return true;
}

static bool test_nodemask_format(void)
{
	char buf[64], small[4];

	CHECK(sdsm_format_nodemask(0x2f, buf, sizeof(buf)) == 5 &&
	      !strcmp(buf, "0-3,5"), "got '%s'", buf);
	CHECK(sdsm_format_nodemask(0, buf, sizeof(buf)) == 0 && !buf[0],
	      "got '%s'", buf);
	CHECK(sdsm_format_nodemask(1ULL << 63 | 1, buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "0,63"), "got '%s'", buf);
	CHECK(sdsm_format_nodemask(~0ULL, buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "0-63"), "got '%s'", buf);
	errno = 0;
	CHECK_ERR(sdsm_format_nodemask(0x15, small, sizeof(small)), -1, ENOSPC);
	return true;
}

static bool test_policy_strings(void)
{
	static const struct {
		const char *in, *out;
		uint32_t mode;
		uint64_t mask, block;
		uint32_t pref;
	} good[] = {
		{ "interleave:all", "interleave:all", SDSM_POLICY_INTERLEAVE, 0, 0, 0 },
		{ "interleave:0-2/64k", "interleave:0-2/65536",
		  SDSM_POLICY_INTERLEAVE, 7, 65536, 0 },
		{ "interleave:1/4096", "interleave:1", SDSM_POLICY_INTERLEAVE, 2, 4096, 0 },
		{ "interleave:all/1m", "interleave:all/1048576",
		  SDSM_POLICY_INTERLEAVE, 0, 1 << 20, 0 },
		{ "bind:1", "bind:1", SDSM_POLICY_BIND, 2, 0, 0 },
		{ "membind:!0", "bind:1-2", SDSM_POLICY_BIND, 6, 0, 0 },
		{ "preferred:2", "preferred:2", SDSM_POLICY_PREFERRED, 0, 0, 2 },
		{ "local", "local", SDSM_POLICY_FIRST_TOUCH, 0, 0, 0 },
		{ "first-touch", "local", SDSM_POLICY_FIRST_TOUCH, 0, 0, 0 },
	};
	static const struct {
		const char *in;
		int err;
	} bad[] = {
		{ "interleave", EINVAL }, { "interleave:", EINVAL },
		{ "bind:0/4096", EINVAL }, { "interleave:0/5000", EINVAL },
		{ "interleave:0/0", EINVAL }, { "interleave:0/", EINVAL },
		{ "interleave:0/4q", EINVAL }, { "preferred:1,2", EINVAL },
		{ "preferred:", EINVAL }, { "preferred:all", EINVAL },
		{ "foo:1", EINVAL }, { "preferred:7", ERANGE },
		{ "bind:2-1", EINVAL }, { "local:1", EINVAL }, { "", EINVAL },
	};
	struct sdsm_policy p;
	char buf[64];
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		memset(&p, 0xff, sizeof(p));
		CHECK(sdsm_parse_policy(good[i].in, 3, &p) == 0,
		      "'%s': %s", good[i].in, sdsm_last_error());
		CHECK(p.mode == good[i].mode && p.nodemask == good[i].mask &&
		      p.block_size == good[i].block &&
		      p.preferred_node == good[i].pref,
		      "'%s': mode %u mask %#llx block %llu pref %u", good[i].in,
		      p.mode, (unsigned long long)p.nodemask,
		      (unsigned long long)p.block_size, p.preferred_node);
		CHECK(sdsm_format_policy(&p, buf, sizeof(buf)) > 0 &&
		      !strcmp(buf, good[i].out), "'%s' formats as '%s'",
		      good[i].in, buf);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK_ERR(sdsm_parse_policy(bad[i].in, 3, &p), -1, bad[i].err);
	}
	memset(&p, 0, sizeof(p));
	p.mode = 9;
	errno = 0;
	CHECK_ERR(sdsm_format_policy(&p, buf, sizeof(buf)), -1, EINVAL);
	return true;
}

static bool test_policy_env(void)
{
	struct sdsm_policy p;

	setenv("SDSM_SYSFS_ROOT", sysfs_dir, 1);
	unsetenv("SDSM_POLICY");
	CHECK(sdsm_get_policy(&p) == 0 && p.mode == SDSM_POLICY_FIRST_TOUCH,
	      "unset: mode %u", p.mode);
	setenv("SDSM_POLICY", "interleave:0,2", 1);
	CHECK(sdsm_get_policy(&p) == 0 && p.mode == SDSM_POLICY_INTERLEAVE &&
	      p.nodemask == 5, "interleave:0,2: %s", sdsm_last_error());
	/* The fixture cluster has 3 nodes. */
	setenv("SDSM_POLICY", "bind:3", 1);
	errno = 0;
	CHECK_ERR(sdsm_get_policy(&p), -1, ERANGE);
	CHECK(strstr(sdsm_last_error(), "SDSM_POLICY"), "message '%s'",
	      sdsm_last_error());
	setenv("SDSM_POLICY", "nonsense", 1);
	errno = 0;
	CHECK_ERR(sdsm_get_policy(&p), -1, EINVAL);
	unsetenv("SDSM_POLICY");
	return true;
}

/* ---- tests: no device ---- */

static bool test_no_module(void)
{
	setenv("SDSM_DEVICE", "/nonexistent/sdsm", 1);
	setenv("SDSM_SYSFS_ROOT", "/nonexistent/sysfs", 1);
	errno = 0;
	CHECK_ERR(sdsm_available(), -1, ENODEV);
	CHECK(strstr(sdsm_last_error(), "not loaded"), "'%s'", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_num_nodes(), -1, ENODEV);
	errno = 0;
	CHECK_ERR(sdsm_node_id(), -1, ENODEV);
	errno = 0;
	CHECK_ERR(sdsm_alloc_interleaved(4096) == NULL ? -1 : 0, -1, ENODEV);
	errno = 0;
	CHECK_ERR(sdsm_lock(1), -1, ENODEV);
	errno = 0;
	CHECK_ERR(sdsm_home_node(&errno), -1, ENODEV);
	CHECK(strstr(sdsm_strerror(ENODEV), "not loaded"), "%s",
	      sdsm_strerror(ENODEV));
	CHECK(strstr(sdsm_strerror(ENOSYS), "lacks"), "%s",
	      sdsm_strerror(ENOSYS));
	CHECK(!strcmp(sdsm_strerror(EACCES), strerror(EACCES)), "EACCES");
	return true;
}

static bool test_no_device_node(void)
{
	setenv("SDSM_DEVICE", "/nonexistent/sdsm", 1);
	setenv("SDSM_SYSFS_ROOT", sysfs_dir, 1);
	errno = 0;
	CHECK_ERR(sdsm_available(), -1, ENOENT);
	CHECK(strstr(sdsm_last_error(), "missing"), "'%s'", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_region_open("x", NULL) == NULL ? -1 : 0, -1, ENOENT);
	return true;
}

static bool test_not_sdsm_device(void)
{
	setenv("SDSM_DEVICE", "/dev/null", 1);
	errno = 0;
	CHECK_ERR(sdsm_available(), -1, ENODEV);
	CHECK(strstr(sdsm_last_error(), "not an sdsm device"), "'%s'",
	      sdsm_last_error());
	return true;
}

/* ---- tests: fake module (each in a child) ---- */

static bool test_info(void)
{
	uint64_t f = 0;

	fake_start(SDSM_FEATURE_PAGE_TRANSPORT | SDSM_FEATURE_LOCKS);
	CHECK(sdsm_available() == 0, "%s", sdsm_last_error());
	CHECK(sdsm_num_nodes() == 3, "nr %d", sdsm_num_nodes());
	CHECK(sdsm_node_id() == 0, "id %d", sdsm_node_id());
	CHECK(sdsm_features(&f) == 0 &&
	      f == (SDSM_FEATURE_PAGE_TRANSPORT | SDSM_FEATURE_LOCKS),
	      "features %#llx", (unsigned long long)f);
	CHECK(sdsm_has_feature(SDSM_FEATURE_LOCKS) == 1, "locks");
	CHECK(sdsm_has_feature(SDSM_FEATURE_PLACEMENT) == 0, "placement");
	CHECK(sdsm_fd() >= 0, "fd");
	CHECK(!strcmp(sdsm_feature_name(SDSM_FEATURE_PLACEMENT), "placement"),
	      "name");
	return true;
}

static bool test_api_version(void)
{
	fake_start(ALL_FEATURES);
	fake.api_version = SDSM_API_VERSION + 1;
	errno = 0;
	CHECK_ERR(sdsm_available(), -1, EPROTO);
	return true;
}

static bool test_missing_features(void)
{
	fake_start(SDSM_FEATURE_PAGE_TRANSPORT);
	errno = 0;
	CHECK_ERR(sdsm_alloc_interleaved(4096) == NULL ? -1 : 0, -1, ENOSYS);
	CHECK(strstr(sdsm_last_error(), "lacks feature regions"), "'%s'",
	      sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_home_node(&errno), -1, ENOSYS);
	CHECK(strstr(sdsm_last_error(), "placement"), "'%s'", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_lock(7), -1, ENOSYS);
	CHECK(strstr(sdsm_last_error(), "locks"), "'%s'", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_barrier(1, 0, 0, 1000), -1, ENOSYS);
	CHECK(fake.lock_calls == 0, "an ioctl was made: %u", fake.lock_calls);
	return true;
}

static bool test_enotty_is_enosys(void)
{
	/* The feature bit is set but the module answers ENOTTY anyway. */
	fake_start(ALL_FEATURES);
	fake.lock_errno = ENOTTY;
	errno = 0;
	CHECK_ERR(sdsm_trylock(7), -1, ENOSYS);
	CHECK(fake.lock_calls == 1, "calls %u", fake.lock_calls);
	return true;
}

static bool test_alloc_free(void)
{
	struct fake_region *r;
	char buf[8], prefix[32];
	char *p, *q;
	int fd, id;

	fake_start(ALL_FEATURES);
	p = sdsm_alloc_interleaved(10000);
	CHECK(p, "%s", sdsm_last_error());
	if (!p)
		return true;
	/* The allocation is carved from a heap chunk: an owned region. */
	r = &fake.regions[1];
	snprintf(prefix, sizeof(prefix), "a.0.%d.", (int)getpid());
	CHECK(r->used && r->length >= SDSM_HEAP_SLOT_SIZE, "length %llu",
	      (unsigned long long)r->length);
	CHECK(!strncmp(r->name, prefix, strlen(prefix)), "name '%s'", r->name);
	CHECK(r->flags == (SDSM_REGION_F_EXCL | SDSM_REGION_F_OWNED),
	      "flags %#x", r->flags);
	CHECK(r->policy.mode == SDSM_POLICY_INTERLEAVE && !r->policy.nodemask,
	      "policy %u %#llx", r->policy.mode,
	      (unsigned long long)r->policy.nodemask);
	CHECK(!((uintptr_t)p % 4096), "not page aligned: %p", (void *)p);
	/* The chunk is mapped at the offset the module returned. */
	memcpy(p + 8192, "sdsm!", 6);
	fd = open(fake_path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, buf, 6, r->offset +
			       (p - (char *)((uintptr_t)p &
					     ~(SDSM_HEAP_SLOT_SIZE - 1))) +
			       8192) == 6 &&
	      !strcmp(buf, "sdsm!"), "mapped at the wrong offset");
	close(fd);
	errno = 0;
	CHECK_ERR(sdsm_free(p, 50000), -1, EINVAL);
	CHECK_ERR(sdsm_free(p + 4096, 0), -1, EINVAL);
	CHECK(sdsm_free(p, 10000) == 0, "%s", sdsm_last_error());
	CHECK(fake.destroyed_id == -1, "chunk destroyed: %d", fake.destroyed_id);
	errno = 0;
	CHECK_ERR(sdsm_free(p, 10000), -1, EINVAL);	/* a double free */
	CHECK(sdsm_free(NULL, 0) == 0, "free(NULL)");
	/* Reused, and zero-filled again. */
	q = sdsm_alloc_interleaved(10000);
	CHECK(q == p && !memcmp(q + 8192, "\0\0\0\0\0", 6),
	      "not reused or not zeroed: %p %p", (void *)p, (void *)q);
	CHECK(!fake.regions[2].used, "a second region for one policy");
	/* Each interleaved allocation of a rotation or more starts it on
	 * the first node; a one-page one fills a gap. */
	CHECK(sdsm_alloc_interleaved(1), "one page");
	for (id = 0; id < 4; id++) {
		uintptr_t a = (uintptr_t)sdsm_alloc_interleaved(3 * 4096 + 1);
		int nr = sdsm_num_nodes();

		CHECK(a && nr > 1 && ((a & (SDSM_HEAP_SLOT_SIZE - 1)) / 4096) %
				       nr == 0,
		      "allocation %d at page %lu of its region (%d nodes)", id,
		      (unsigned long)((a & (SDSM_HEAP_SLOT_SIZE - 1)) / 4096), nr);
	}

	/* Policies of the other allocators: one chunk each. */
	setenv("SDSM_POLICY", "bind:1", 1);
	p = sdsm_alloc(4096);
	id = p ? 2 : -1;
	CHECK(p && fake.regions[id].policy.mode == SDSM_POLICY_BIND &&
	      fake.regions[id].policy.nodemask == 2, "SDSM_POLICY=bind:1: %s",
	      sdsm_last_error());
	setenv("SDSM_POLICY", "bogus", 1);
	errno = 0;
	CHECK_ERR(sdsm_alloc(4096) == NULL ? -1 : 0, -1, EINVAL);
	unsetenv("SDSM_POLICY");
	p = sdsm_alloc_onnode(4096, 2);
	CHECK(p && fake.regions[3].policy.mode == SDSM_POLICY_BIND &&
	      fake.regions[3].policy.nodemask == 4, "onnode 2: %s",
	      sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_alloc_onnode(4096, 3) == NULL ? -1 : 0, -1, EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_alloc_onnode(4096, -1) == NULL ? -1 : 0, -1, EINVAL);
	p = sdsm_alloc_local(1);
	CHECK(p && fake.regions[4].policy.mode == SDSM_POLICY_FIRST_TOUCH,
	      "local: %s", sdsm_last_error());
	p = sdsm_alloc_interleaved_subset(4096, 6);
	CHECK(p && fake.regions[5].policy.nodemask == 6, "subset: %s",
	      sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_alloc_interleaved(0) == NULL ? -1 : 0, -1, EINVAL);
	return true;
}

/* More allocations than there are region ids: few regions. */
static bool test_alloc_many(void)
{
	enum { N = 70000 };
	static char *ptr[N];
	unsigned int i, nreg = 0;
	bool ok = true;

	fake_start(ALL_FEATURES);
	for (i = 0; i < N && ok; i++) {
		ptr[i] = sdsm_alloc_interleaved(1 + i % 3000);
		ok = ptr[i] != NULL;
		if (ok)
			ptr[i][0] = (char)i;
	}
	CHECK(ok, "allocation %u: %s", i, sdsm_last_error());
	for (i = 0; i < N && ptr[i]; i++)
		ok &= ptr[i][0] == (char)i && !sdsm_free(ptr[i], 0);
	CHECK(ok, "contents or free: %s", sdsm_last_error());
	/* And again, from the freed pages. */
	for (i = 0; i < N && ok; i++) {
		ptr[i] = sdsm_alloc_interleaved(4096);
		ok = ptr[i] && !sdsm_free(ptr[i], 4096);
	}
	CHECK(ok, "second round %u: %s", i, sdsm_last_error());
	for (i = 0; i < FAKE_REGIONS; i++)
		nreg += fake.regions[i].used;
	CHECK(nreg >= 1 && nreg <= 6, "%u regions for %u allocations", nreg,
	      2 * N);
	return true;
}

/* ---- the allocator core on anonymous memory ---- */

static int anon_map(void *ctx, void *addr, size_t len,
		    const struct sdsm_policy *policy, uint32_t *id)
{
	void *p;

	(void)policy;
	p = mmap(addr, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	*id = ++*(uint32_t *)ctx;
	return 0;
}

static void anon_unmap(void *ctx, void *addr, size_t len, uint32_t id)
{
	(void)ctx;
	(void)id;
	munmap(addr, len);
}

static const struct sdsm_heap_ops anon_ops = {
	.map = anon_map,
	.unmap = anon_unmap,
};

#define TEST_HEAP_BASE	0x120000000000UL

static struct sdsm_heap_space test_space;
static uint32_t test_maps;

static struct sdsm_heap *test_heap(void)
{
	struct sdsm_policy pol = { .mode = SDSM_POLICY_INTERLEAVE };

	test_maps = 0;
	sdsm_heap_space_init(&test_space, TEST_HEAP_BASE, &anon_ops,
			     &test_maps);
	return sdsm_heap_get(&test_space, &pol);
}

static bool test_heap_sizes(void)
{
	static const size_t aligns[] = { 0, 16, 32, 64, 256, 4096, 65536 };
	struct sdsm_heap *h = test_heap();
	struct sdsm_heap_block b;
	unsigned char *p[600];
	size_t sz, al;
	unsigned int i, j;
	bool ok = true;
	int cls;

	for (i = 0; i < 600; i++) {
		sz = i < 300 ? i * 7 + 1 : (i - 299) * 1021;
		al = aligns[i % 7];
		p[i] = sdsm_heap_alloc(h, sz, al);
		if (!p[i] || (al && (uintptr_t)p[i] % al) ||
		    (uintptr_t)p[i] % 16 ||
		    sdsm_heap_usable(&test_space, p[i]) < sz) {
			CHECK(0, "alloc %zu align %zu: %p usable %zu", sz, al,
			      (void *)p[i], p[i] ? sdsm_heap_usable(&test_space, p[i]) : 0);
			return true;
		}
		memset(p[i], i & 0xff, sz);
	}
	for (i = 0; i < 600; i++) {
		sz = i < 300 ? i * 7 + 1 : (i - 299) * 1021;
		for (j = 0; j < sz; j++)
			ok &= p[i][j] == (i & 0xff);
		ok &= !sdsm_heap_find(&test_space, p[i], &b);
	}
	CHECK(ok, "an allocation was overwritten");
	/* What the preload's per-thread cache asks, without the lock. */
	cls = sdsm_heap_block_class(&test_space, h, p[7]);	/* 50 bytes */
	CHECK(cls >= 0 && cls == sdsm_heap_size_class(50) &&
	      sdsm_heap_class_size(cls) >= 50, "class of a 50-byte block: %d",
	      cls);
	CHECK(sdsm_heap_block_class(&test_space, h, p[7] + 16) == -1,
	      "inside a block");
	CHECK(sdsm_heap_block_class(&test_space, h, p[599]) == -1, "page span");
	CHECK(sdsm_heap_block_class(&test_space, NULL, p[7]) == -1,
	      "another heap");
	CHECK(sdsm_heap_size_class(SDSM_HEAP_SMALL_MAX + 1) == -1, "large class");
	for (i = 0; i < 600; i += 2)
		CHECK(!sdsm_heap_free(&test_space, p[i]), "free %u", i);
	for (i = 1; i < 600; i += 2)
		CHECK(!sdsm_heap_free(&test_space, p[i]), "free %u", i);
	/* Double frees and foreign pointers are refused, not corrupting. */
	CHECK(sdsm_heap_free(&test_space, p[3]) == -EINVAL, "double free (small)");
	CHECK(sdsm_heap_free(&test_space, p[599]) == -EINVAL, "double free (large)");
	CHECK(sdsm_heap_free(&test_space, &ok) == -EINVAL, "foreign pointer");
	CHECK(sdsm_heap_alloc(h, 10, 48) == NULL && errno == EINVAL,
	      "alignment 48 accepted");
	CHECK(test_maps == 1, "%u chunks mapped", test_maps);
	return true;
}

/*
 * Large blocks made one after the other (a program's matrices) do not lie
 * a power of two apart: the same element of each would fall in the same
 * set of the TLB and the caches.  Two MiB and a page, as with glibc.
 */
static bool test_heap_stride(void)
{
	struct sdsm_heap *h = test_heap();
	size_t len = 2UL << 20;
	uintptr_t d;
	char *p[3];
	int i;

	for (i = 0; i < 3; i++) {
		p[i] = sdsm_heap_alloc(h, len, 16);
		CHECK(p[i], "block %d: %s", i, strerror(errno));
		if (!p[i])
			return true;
		CHECK(sdsm_heap_usable(&test_space, p[i]) >= len,
		      "block %d usable %zu", i,
		      sdsm_heap_usable(&test_space, p[i]));
	}
	for (i = 1; i < 3; i++) {
		d = p[i] > p[i - 1] ? (uintptr_t)(p[i] - p[i - 1]) :
				      (uintptr_t)(p[i - 1] - p[i]);
		CHECK(d >= len && (d & (d - 1)),
		      "blocks %d and %d lie %#lx apart", i - 1, i,
		      (unsigned long)d);
	}
	for (i = 0; i < 3; i++)
		CHECK(!sdsm_heap_free(&test_space, p[i]), "free %d", i);
	return true;
}

static bool test_heap_many(void)
{
	enum { N = 100000 };
	struct sdsm_heap *h = test_heap();
	static void *p[N];
	unsigned int i;
	bool ok = true;

	for (i = 0; i < N && ok; i++) {
		p[i] = sdsm_heap_alloc(h, 8 + i % 200, 0);
		ok = p[i] != NULL;
		if (ok)
			*(unsigned int *)p[i] = i;
	}
	CHECK(ok, "allocation %u failed", i);
	for (i = 0; i < N && ok; i++)
		ok = *(unsigned int *)p[i] == i &&
		     !sdsm_heap_free(&test_space, p[i]);
	CHECK(ok, "block %u", i);
	CHECK(test_maps == 1, "%u chunks for %u allocations", test_maps, N);
	return true;
}

static pthread_barrier_t heap_barrier;

static void *heap_thread(void *arg)
{
	struct sdsm_heap *h = arg;
	unsigned long *keep[32] = { 0 }, seed = (uintptr_t)&seed;
	unsigned int i, k;
	size_t n;

	pthread_barrier_wait(&heap_barrier);
	for (i = 0; i < 100000; i++) {
		k = i % 32;
		if (keep[k]) {
			if (keep[k][1] != (uintptr_t)keep[k])
				return (void *)1;
			if (sdsm_heap_free(&test_space, keep[k]))
				return (void *)1;
		}
		seed = seed * 6364136223846793005UL + 1;
		n = 16 + (seed >> 33) % (i % 50 ? 600 : 70000);
		keep[k] = sdsm_heap_alloc(h, n, 0);
		if (!keep[k])
			return (void *)1;
		keep[k][1] = (uintptr_t)keep[k];
	}
	for (k = 0; k < 32; k++)
		if (sdsm_heap_free(&test_space, keep[k]))
			return (void *)1;
	return NULL;
}

static bool test_heap_threads(void)
{
	struct sdsm_heap *h = test_heap();
	pthread_t t[4];
	void *ret;
	int i, bad = 0;

	pthread_barrier_init(&heap_barrier, NULL, 4);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, heap_thread, h);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		bad += ret != NULL;
	}
	CHECK(!bad, "%d threads saw corruption", bad);
	return true;
}

/* Pages of [p, p + len) resident in the test heap's shared memory. */
static unsigned int resident_pages(const void *p, size_t len)
{
	unsigned char vec[64];
	unsigned int i, n = 0;

	if (len > sizeof(vec) * 4096 || mincore((void *)p, len, vec))
		return UINT_MAX;
	for (i = 0; i < len / 4096; i++)
		n += vec[i] & 1;
	return n;
}

static bool all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * calloc() of the preload: zero-filled, and a span of pages never handed
 * out is not written (on sdsm, writing makes the allocating node the
 * owner of every page of a shared array), while one that was is cleared.
 */
static bool test_heap_zeroed(void)
{
	struct sdsm_heap *h = test_heap();
	size_t len = 48 * 4096;
	unsigned char *p, *q, *s;

	p = sdsm_heap_alloc_zeroed(h, len, 16);
	CHECK(p, "zeroed span: %s", strerror(errno));
	if (!p)
		return true;
	CHECK(resident_pages(p, len) == 0, "a fresh span was written: %u pages",
	      resident_pages(p, len));
	CHECK(all_zero(p, len), "fresh span not zero");
	memset(p, 0xab, len);
	CHECK(!sdsm_heap_free(&test_space, p), "free span");
	q = sdsm_heap_alloc_zeroed(h, len - 100, 64);
	CHECK(q == p, "span not reused: %p %p", (void *)q, (void *)p);
	CHECK(q && all_zero(q, len - 100), "a reused span not cleared");
	/* The span's page past the block (sdsm_heap_alloc()) stays untouched. */
	CHECK(resident_pages(p + len, 4096) == 0,
	      "the page past a reused span was written");
	/* Small blocks come from runs whose blocks are reused at once. */
	s = sdsm_heap_alloc(h, 200, 0);
	CHECK(s, "small");
	if (!s)
		return true;
	memset(s, 0xcd, 200);
	CHECK(!sdsm_heap_free(&test_space, s), "free small");
	q = sdsm_heap_alloc_zeroed(h, 200, 0);
	CHECK(q == s, "block not reused: %p %p", (void *)q, (void *)s);
	CHECK(q && all_zero(q, 200), "a reused block not cleared");
	CHECK(sdsm_heap_alloc_zeroed(h, 10, 48) == NULL && errno == EINVAL,
	      "alignment 48 accepted");
	return true;
}

static bool test_heap_trim_huge(void)
{
	struct sdsm_heap *h = test_heap();
	struct sdsm_heap_block b;
	char *p, *q;

	/* munmap of part of a span keeps the rest allocated. */
	p = sdsm_heap_alloc_pages(h, 10 * 4096, true, 1);
	CHECK(p && !sdsm_heap_trim(&test_space, p + 4096, 4096), "trim middle");
	CHECK(!sdsm_heap_find(&test_space, p, &b) && b.usable == 4096,
	      "head %zu", b.usable);
	CHECK(!sdsm_heap_find(&test_space, p + 2 * 4096, &b) &&
	      b.start == p + 2 * 4096 && b.usable == 8 * 4096, "tail");
	CHECK(sdsm_heap_find(&test_space, p + 4096, &b) == -EINVAL, "hole");
	CHECK(!sdsm_heap_trim(&test_space, p, 10 * 4096), "trim all");
	CHECK(sdsm_heap_find(&test_space, p + 5 * 4096, &b) == -EINVAL, "gone");
	/* Larger than a chunk: a chunk of its own, released by free. */
	q = sdsm_heap_alloc(h, 3 * SDSM_HEAP_SLOT_SIZE, 0);
	CHECK(q && test_maps == 2, "huge: %p, %u maps", (void *)q, test_maps);
	if (q) {
		q[3 * SDSM_HEAP_SLOT_SIZE - 1] = 1;
		CHECK(!sdsm_heap_free(&test_space, q), "free huge");
		CHECK(sdsm_heap_nr_chunks(&test_space) == 1, "huge chunk kept");
	}
	return true;
}

/*
 * A space over a reservation, as the preload's job heaps are
 * (ops->keeps_data): chunks are parts of it, and a released chunk keeps
 * its bytes.
 */
#define RESV_BASE	0x128000000000UL
#define RESV_LEN	(4 * SDSM_HEAP_SLOT_SIZE)

static int resv_map(void *ctx, void *addr, size_t len,
		    const struct sdsm_policy *policy, uint32_t *id)
{
	(void)ctx;
	(void)policy;
	if ((uintptr_t)addr < RESV_BASE ||
	    (uintptr_t)addr + len > RESV_BASE + RESV_LEN)
		return -ENOMEM;
	*id = 0;
	return 0;
}

static void resv_unmap(void *ctx, void *addr, size_t len, uint32_t id)
{
	(void)ctx;
	(void)addr;
	(void)len;
	(void)id;
}

static const struct sdsm_heap_ops resv_ops = {
	.map = resv_map,
	.unmap = resv_unmap,
	.keeps_data = true,
};

/*
 * Freeing a block of a chunk of its own in a reservation writes nothing
 * of it (the preload zeroed the whole chunk: every page of a freed large
 * block written, on sdsm a fault each); a chunk made again there clears
 * its metadata and takes its pages as handed out before, so a zero-filled
 * allocation over the old bytes (here the old chunk's 0xab and its
 * metadata) reads zero and the heap works on.
 */
static bool test_heap_reserved_reuse(void)
{
	static struct sdsm_heap_space sp;
	struct sdsm_policy pol = { .mode = SDSM_POLICY_INTERLEAVE };
	size_t big = SDSM_HEAP_SLOT_SIZE + 4096, mid = big / 2 & ~4095UL;
	struct sdsm_heap *h;
	unsigned char *q, *z, *b[64];
	int i;

	q = mmap((void *)RESV_BASE, RESV_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		 MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(q == (void *)RESV_BASE, "no reservation at %#lx", RESV_BASE);
	if (q != (void *)RESV_BASE)
		return true;
	sdsm_heap_space_init(&sp, RESV_BASE, &resv_ops, NULL);
	h = sdsm_heap_get(&sp, &pol);
	q = sdsm_heap_alloc(h, big, 0);
	CHECK(q && sdsm_heap_nr_chunks(&sp) == 1, "huge: %p", (void *)q);
	if (!q)
		goto out;
	memset(q, 0xab, 8 * 4096);
	q[big - 1] = 0x5a;
	CHECK(!sdsm_heap_free(&sp, q) && !sdsm_heap_nr_chunks(&sp),
	      "the huge chunk was not released");
	CHECK(resident_pages(q + mid, 64 * 4096) == 0,
	      "free wrote the block: %u of 64 pages",
	      resident_pages(q + mid, 64 * 4096));
	z = sdsm_heap_alloc_zeroed(h, 16 * 4096, 16);
	CHECK(z && (uintptr_t)z < (uintptr_t)q + 8 * 4096 &&
	      all_zero(z, 16 * 4096),
	      "a zero-filled allocation over the old bytes: %p", (void *)z);
	for (i = 0; i < 64; i++) {
		b[i] = sdsm_heap_alloc(h, 16 + 100 * i, 0);
		CHECK(b[i], "block %d: %s", i, strerror(errno));
		if (b[i])
			memset(b[i], i, 16 + 100 * i);
	}
	for (i = 0; i < 64; i++)
		CHECK(!b[i] || !sdsm_heap_free(&sp, b[i]), "free block %d", i);
	CHECK(!sdsm_heap_free(&sp, z), "free the zero-filled block");
out:
	munmap((void *)RESV_BASE, RESV_LEN);
	return true;
}

static bool test_regions(void)
{
	struct sdsm_policy pol = { .mode = SDSM_POLICY_PREFERRED,
				   .preferred_node = 2 };
	struct sdsm_region_info ri;
	size_t len = 0;
	char *a, *b;

	fake_start(ALL_FEATURES);
	a = sdsm_region_create("shared.x", 5000, &pol, SDSM_REGION_F_EXCL);
	CHECK(a, "%s", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_region_create("shared.x", 5000, &pol, 0) == NULL ? -1 : 0,
		  -1, EEXIST);
	errno = 0;
	CHECK_ERR(sdsm_region_create("bad/name", 4096, &pol, 0) == NULL ? -1 : 0,
		  -1, EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_region_create("0123456789012345678901234567890123",
				     4096, &pol, 0) == NULL ? -1 : 0, -1, EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_region_create("", 4096, &pol, 0) == NULL ? -1 : 0, -1,
		  EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_region_create("ok", 4096, &pol, 0x80) == NULL ? -1 : 0,
		  -1, EINVAL);
	CHECK(sdsm_region_info("shared.x", &ri) == 0 && ri.length == 8192 &&
	      ri.policy.mode == SDSM_POLICY_PREFERRED, "info: %s",
	      sdsm_last_error());
	b = sdsm_region_open("shared.x", &len);
	CHECK(b && len == 8192, "open: %s", sdsm_last_error());
	if (a && b) {
		strcpy(a, "hello");
		CHECK(!strcmp(b, "hello"), "two mappings differ");
	}
	errno = 0;
	CHECK_ERR(sdsm_region_open("nope", &len) == NULL ? -1 : 0, -1, ENOENT);
	CHECK(sdsm_region_unmap(b, len) == 0, "unmap");
	errno = 0;
	CHECK_ERR(sdsm_region_unmap((char *)a + 1, 4096), -1, EINVAL);
	CHECK(sdsm_region_destroy("shared.x") == 0, "%s", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_region_destroy("shared.x"), -1, ENOENT);
	return true;
}

/* SDSM_REGION_F_RELEASE reaches the module; info tells the consistency. */
static bool test_region_consistency(void)
{
	struct sdsm_policy pol = { .mode = SDSM_POLICY_FIRST_TOUCH };
	struct sdsm_region_info ri;
	char *a;

	fake_start(ALL_FEATURES);
	a = sdsm_region_create("rc.a", 4096, &pol,
			       SDSM_REGION_F_EXCL | SDSM_REGION_F_RELEASE);
	CHECK(a && fake.regions[1].flags ==
		   (SDSM_REGION_F_EXCL | SDSM_REGION_F_RELEASE),
	      "create: flags %#x: %s", fake.regions[1].flags, sdsm_last_error());
	CHECK(sdsm_region_info("rc.a", &ri) == 0 &&
	      ri.consistency == SDSM_CONSISTENCY_RELEASE, "info: %u: %s",
	      ri.consistency, sdsm_last_error());
	a = sdsm_region_create_mode("rc.b", 4096, &pol, SDSM_REGION_F_RELEASE,
				    0640);
	CHECK(a && fake.regions[2].flags ==
		   (SDSM_REGION_F_MODE | SDSM_REGION_F_RELEASE),
	      "create_mode: flags %#x: %s", fake.regions[2].flags,
	      sdsm_last_error());
	a = sdsm_region_create("rc.c", 4096, &pol, 0);
	CHECK(a && !(fake.regions[3].flags & SDSM_REGION_F_RELEASE) &&
	      sdsm_region_info("rc.c", &ri) == 0 &&
	      ri.consistency == SDSM_CONSISTENCY_SEQUENTIAL, "sequential: %s",
	      sdsm_last_error());
	/* The name exists (here: as sequential): the message says why. */
	errno = 0;
	CHECK_ERR(sdsm_region_create("rc.c", 4096, &pol,
				     SDSM_REGION_F_RELEASE) == NULL ? -1 : 0,
		  -1, EEXIST);
	CHECK(strstr(sdsm_last_error(), "another size, policy, manager or consistency"),
	      "EEXIST message: %s", sdsm_last_error());
	/* A module without release consistency: EOPNOTSUPP, named. */
	fake.no_release = true;
	errno = 0;
	CHECK_ERR(sdsm_region_create("rc.d", 4096, &pol,
				     SDSM_REGION_F_RELEASE) == NULL ? -1 : 0,
		  -1, EOPNOTSUPP);
	CHECK(strstr(sdsm_last_error(), "lacks release consistency"),
	      "EOPNOTSUPP message: %s", sdsm_last_error());
	return true;
}

/*
 * sdsm_region_create_managed() of region "m.d" under @p with @manager
 * fails with @err, and sdsm_last_error() holds @msg.
 */
static bool managed_fails(const struct sdsm_policy *p, int manager, int err,
			  const char *msg)
{
	errno = 0;
	CHECK_ERR(sdsm_region_create_managed("m.d", 4096, p, 0, 0600,
					     manager) ? 0 : -1, -1, err);
	CHECK(strstr(sdsm_last_error(), msg), "manager %d: %s", manager,
	      sdsm_last_error());
	return true;
}

/*
 * sdsm_region_create_managed(): a node >= 0 reaches the module as
 * SDSM_REGION_F_MANAGER and comes back in the info; -1 is none; a node
 * past the cluster, below -1, or for a policy that fixes every home is
 * EINVAL before the module is asked; a module without managers is
 * EOPNOTSUPP, named, with no silent retry.
 */
static bool test_region_managed(void)
{
	struct sdsm_policy ft = { .mode = SDSM_POLICY_FIRST_TOUCH };
	struct sdsm_policy il = { .mode = SDSM_POLICY_INTERLEAVE };
	struct sdsm_policy b1 = { .mode = SDSM_POLICY_BIND, .nodemask = 0x2 };
	struct sdsm_policy b2 = { .mode = SDSM_POLICY_BIND, .nodemask = 0x6 };
	struct sdsm_region_info ri;
	unsigned int n;

	fake_start(ALL_FEATURES);
	CHECK(sdsm_region_create_managed("m.a", 4096, &ft, SDSM_REGION_F_EXCL,
					 0640, 2) &&
	      fake.regions[1].flags == (SDSM_REGION_F_EXCL | SDSM_REGION_F_MODE |
					SDSM_REGION_F_MANAGER) &&
	      fake.regions[1].manager == 2,
	      "manager 2: flags %#x manager %u: %s", fake.regions[1].flags,
	      fake.regions[1].manager, sdsm_last_error());
	CHECK(sdsm_region_info("m.a", &ri) == 0 && ri.manager == 2,
	      "info: manager %u: %s", ri.manager, sdsm_last_error());
	CHECK(sdsm_region_create_managed("m.b", 4096, &b2, 0, 0600, 1) &&
	      (fake.regions[2].flags & SDSM_REGION_F_MANAGER) &&
	      fake.regions[2].manager == 1,
	      "bind to two nodes: flags %#x: %s", fake.regions[2].flags,
	      sdsm_last_error());
	CHECK(sdsm_region_create_managed("m.c", 4096, &ft, 0, 0600, -1) &&
	      !(fake.regions[3].flags & SDSM_REGION_F_MANAGER) &&
	      sdsm_region_info("m.c", &ri) == 0 &&
	      ri.manager == SDSM_MANAGER_INTERLEAVE,
	      "no manager: flags %#x, info %u: %s", fake.regions[3].flags,
	      ri.manager, sdsm_last_error());
	n = fake.creates;
	managed_fails(&ft, 3, EINVAL, "manager 3: the cluster has nodes 0-2");
	managed_fails(&ft, -2, EINVAL, "bad manager -2");
	managed_fails(&il, 0, EINVAL, "no manager to name");
	managed_fails(&b1, 1, EINVAL, "no manager to name");
	CHECK(fake.creates == n, "%u creates for refused managers",
	      fake.creates - n);
	fake.no_manager = true;
	managed_fails(&ft, 0, EOPNOTSUPP, "lacks region managers");
	CHECK(fake.creates == n + 1, "older module: %u creates",
	      fake.creates - n);
	return true;
}

/* SDSM_CONSISTENCY=release: the heap's chunks are release regions. */
static bool test_heap_consistency(void)
{
	char *p, *q;

	fake_start(ALL_FEATURES);
	setenv("SDSM_CONSISTENCY", "release", 1);
	p = sdsm_alloc(4096);
	CHECK(p && fake.regions[1].used && !strncmp(fake.regions[1].name, "a.", 2) &&
	      (fake.regions[1].flags & SDSM_REGION_F_RELEASE) &&
	      (fake.regions[1].flags & SDSM_REGION_F_OWNED),
	      "chunk flags %#x: %s", fake.regions[1].flags, sdsm_last_error());
	/* Read once: a later change does not split the heap. */
	setenv("SDSM_CONSISTENCY", "sequential", 1);
	q = sdsm_alloc_interleaved(4096);
	CHECK(q && (fake.regions[2].flags & SDSM_REGION_F_RELEASE),
	      "second chunk flags %#x: %s", fake.regions[2].flags,
	      sdsm_last_error());
	return true;
}

static bool test_heap_consistency_bad(void)
{
	unsigned int n;

	fake_start(ALL_FEATURES);
	setenv("SDSM_CONSISTENCY", "relaxed", 1);
	errno = 0;
	CHECK_ERR(sdsm_alloc(4096) == NULL ? -1 : 0, -1, EINVAL);
	CHECK(strstr(sdsm_last_error(), "SDSM_CONSISTENCY: 'relaxed'"),
	      "message: %s", sdsm_last_error());
	CHECK(!fake.creates, "%u regions created", fake.creates);
	/* A module without release consistency (nor managers): no
	 * sequential chunk. */
	setenv("SDSM_CONSISTENCY", "release", 1);
	fake.no_release = true;
	fake.no_manager = true;
	errno = 0;
	CHECK_ERR(sdsm_alloc_local(4096) == NULL ? -1 : 0, -1, EOPNOTSUPP);
	CHECK(strstr(sdsm_last_error(), "lacks release consistency"),
	      "message: %s", sdsm_last_error());
	/* A retry without SDSM_REGION_F_MANAGER only: none without
	 * SDSM_REGION_F_OWNED, none sequential. */
	n = fake.creates;
	CHECK(n == 2 && !fake.regions[1].used, "%u creates", n);
	/* Sequential named regions are still made. */
	CHECK(sdsm_region_create("rc.s", 4096, NULL, 0) &&
	      !(fake.regions[1].flags & SDSM_REGION_F_RELEASE),
	      "sequential region: %s", sdsm_last_error());
	return true;
}

/*
 * A chunk under a policy that leaves homes to the first touch names this
 * node its manager (SDSM_REGION_F_MANAGER); an interleaved one does not;
 * a module without managers gets one retry without, once per process.
 */
static bool test_heap_manager(void)
{
	unsigned int n;

	fake_start(ALL_FEATURES);
	CHECK(sdsm_alloc_local(4096) &&
	      (fake.regions[1].flags & SDSM_REGION_F_MANAGER) &&
	      fake.regions[1].manager == 0 &&
	      fake.regions[1].policy.mode == SDSM_POLICY_FIRST_TOUCH,
	      "local chunk: flags %#x manager %u: %s", fake.regions[1].flags,
	      fake.regions[1].manager, sdsm_last_error());
	CHECK(sdsm_alloc_interleaved(4096) &&
	      !(fake.regions[2].flags & SDSM_REGION_F_MANAGER) &&
	      fake.regions[2].manager == 0,
	      "interleaved chunk: flags %#x manager %u: %s",
	      fake.regions[2].flags, fake.regions[2].manager,
	      sdsm_last_error());
	fake.no_manager = true;
	n = fake.creates;
	CHECK(sdsm_alloc_local(64 << 20) &&
	      !(fake.regions[3].flags & SDSM_REGION_F_MANAGER) &&
	      (fake.regions[3].flags & SDSM_REGION_F_OWNED) &&
	      fake.creates == n + 2,
	      "older module: flags %#x, %u creates: %s", fake.regions[3].flags,
	      fake.creates - n, sdsm_last_error());
	n = fake.creates;
	CHECK(sdsm_alloc_local(64 << 20) && fake.creates == n + 1,
	      "older module again: %u creates: %s", fake.creates - n,
	      sdsm_last_error());
	return true;
}

static bool test_placement(void)
{
	enum { N = 5000 };
	static void *addrs[N];
	static int homes[N];
	struct sdsm_policy pol = { .mode = SDSM_POLICY_BIND, .nodemask = 2 };
	char *base = (char *)0x40000000;
	int i, bad = 0;

	fake_start(ALL_FEATURES);
	for (i = 0; i < N; i++)
		addrs[i] = base + (size_t)i * 4096;
	CHECK(sdsm_query_homes(N, addrs, homes) == 0, "%s", sdsm_last_error());
	CHECK(fake.query_calls == 2, "%u ioctls for %d addresses",
	      fake.query_calls, N);
	for (i = 0; i < N; i++)
		bad += homes[i] != fake_home((uintptr_t)addrs[i]);
	CHECK(!bad, "%d homes wrong", bad);
	CHECK(sdsm_query_homes(0, NULL, NULL) == 0, "count 0");
	CHECK(sdsm_home_node(base + 4096) ==
	      fake_home((uintptr_t)base + 4096), "home of page 1: %s",
	      sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_home_node(base + 5 * 4096), -1, ENOENT);
	CHECK(strstr(sdsm_last_error(), "not touched"), "'%s'",
	      sdsm_last_error());
	CHECK(sdsm_set_policy(base, 8192, &pol) == 0 &&
	      fake.last_set_policy.addr == (uintptr_t)base &&
	      fake.last_set_policy.length == 8192 &&
	      fake.last_set_policy.policy.nodemask == 2 &&
	      fake.last_set_policy.size == sizeof(struct sdsm_set_policy),
	      "set_policy: %s", sdsm_last_error());
	errno = 0;
	CHECK_ERR(sdsm_set_policy(base, 8192, NULL), -1, EINVAL);
	return true;
}

static bool test_locks(void)
{
	fake_start(ALL_FEATURES);
	fake.lock_eintr = 2;
	CHECK(sdsm_lock(5) == 0 && fake.lock_calls == 3,
	      "lock restarts after EINTR: calls %u", fake.lock_calls);
	fake.lock_errno = EBUSY;
	errno = 0;
	CHECK_ERR(sdsm_trylock(5), -1, EBUSY);
	fake.lock_errno = EPERM;
	errno = 0;
	CHECK_ERR(sdsm_unlock(5), -1, EPERM);
	fake.lock_errno = ETIMEDOUT;
	errno = 0;
	CHECK_ERR(sdsm_lock_timeout(5, 10), -1, ETIMEDOUT);
	CHECK(sdsm_barrier(9, 3, 0x7, 500) == 0 &&
	      fake.last_barrier.barrier_id == 9 &&
	      fake.last_barrier.count == 3 &&
	      fake.last_barrier.nodemask == 7 &&
	      fake.last_barrier.timeout_ms == 500, "barrier arguments");
	return true;
}

static bool test_futex(void)
{
	static uint32_t word = 3;	/* the fake compares, as futex(2) */
	struct sdsm_futex *f = &fake.last_futex;

	fake_start(ALL_FEATURES);
	CHECK(sdsm_futex_wait(&word, 3, 5000) == 0 && f->size == sizeof(*f) &&
	      f->op == SDSM_FUTEX_WAIT && f->val == 3 &&
	      f->addr == (uintptr_t)&word && f->flags == 0 &&
	      f->bitset == SDSM_FUTEX_BITSET_ANY && f->timeout_ns == 5000 &&
	      f->__reserved == 0, "wait arguments");
	CHECK(sdsm_futex_wait(&word, 3, -7) == 0 && f->timeout_ns == -1,
	      "no timeout: %lld", (long long)f->timeout_ns);
	fake.futex_woken = 4;
	CHECK(sdsm_futex_wake(&word, 9) == 4 && f->op == SDSM_FUTEX_WAKE &&
	      f->val == 9 && f->bitset == SDSM_FUTEX_BITSET_ANY,
	      "wake arguments and count");
	fake.futex_errno = EAGAIN;
	errno = 0;
	CHECK_ERR(sdsm_futex_wait(&word, 4, -1), -1, EAGAIN);
	fake.futex_errno = EHOSTDOWN;
	errno = 0;
	CHECK_ERR(sdsm_futex_wake(&word, 1), -1, EHOSTDOWN);
	fake.futex_errno = 0;
	fake.features &= ~SDSM_FEATURE_FUTEX;
	errno = 0;
	CHECK_ERR(sdsm_futex_wake(&word, 1), -1, ENOSYS);
	CHECK(strstr(sdsm_last_error(), "futex"), "'%s'", sdsm_last_error());
	return true;
}

/* Condition variables: which lock and futex calls, with what. */
static bool test_cond(void)
{
	static struct sdsm_cond c = SDSM_COND_INIT;
	struct sdsm_futex *f = &fake.last_futex;

	fake_start(ALL_FEATURES);
	/* No waiter: a signal moves the sequence and sends nothing. */
	CHECK(sdsm_cond_signal(&c) == 0 && c.seq == 1 && !fake.futex_calls,
	      "signal without waiters: seq %u, futex calls %u", c.seq,
	      fake.futex_calls);
	CHECK(sdsm_cond_wait(&c, 7) == 0 && !strcmp(fake.lock_trace, "RA") &&
	      fake.futex_calls == 1 && f->op == SDSM_FUTEX_WAIT &&
	      f->val == 1 && f->addr == (uintptr_t)&c.seq &&
	      f->timeout_ns == -1 && c.waiters == 0,
	      "wait: locks '%s', futex op %u val %u", fake.lock_trace, f->op,
	      f->val);
	c.waiters = 2;
	CHECK(sdsm_cond_signal(&c) == 0 && c.seq == 2 &&
	      f->op == SDSM_FUTEX_WAKE && f->val == 1 &&
	      sdsm_cond_broadcast(&c) == 0 && c.seq == 3 &&
	      f->op == SDSM_FUTEX_WAKE && f->val == INT_MAX,
	      "signal and broadcast with waiters");
	c.waiters = 0;
	/* A signal between the release and the futex wait is not lost. */
	memset(fake.lock_trace, 0, sizeof(fake.lock_trace));
	fake.bump_on_release = &c.seq;
	CHECK(sdsm_cond_timedwait(&c, 7, 60000) == 0 && c.seq == 4 &&
	      f->val == 3 && f->timeout_ns == 60000000000LL &&
	      !strcmp(fake.lock_trace, "RA"), "racing signal: seq %u",
	      c.seq);
	fake.bump_on_release = NULL;
	fake.futex_errno = ETIMEDOUT;
	memset(fake.lock_trace, 0, sizeof(fake.lock_trace));
	errno = 0;
	CHECK_ERR(sdsm_cond_timedwait(&c, 7, 250), -1, ETIMEDOUT);
	CHECK(!strcmp(fake.lock_trace, "RA") && c.waiters == 0 &&
	      strstr(sdsm_last_error(), "timed out after 250 ms"),
	      "timeout: locks '%s', '%s'", fake.lock_trace,
	      sdsm_last_error());
	fake.futex_errno = EINTR;
	CHECK(sdsm_cond_wait(&c, 7) == 0, "EINTR is a spurious wake-up");
	fake.futex_errno = 0;
	/* Waiting without holding the lock: EPERM, no futex call. */
	fake.lock_errno = EPERM;
	fake.futex_calls = 0;
	errno = 0;
	CHECK_ERR(sdsm_cond_wait(&c, 7), -1, EPERM);
	CHECK(!fake.futex_calls && c.waiters == 0, "EPERM: futex calls %u",
	      fake.futex_calls);
	return true;
}

/* ---- tests: sysfs ---- */

static bool test_sysfs_nodes(void)
{
	struct sdsm_node_info n[SDSM_MAX_NODES];
	int cnt;

	setenv("SDSM_SYSFS_ROOT", sysfs_dir, 1);
	CHECK(sdsm_sysfs_node_id() == 1, "node_id");
	CHECK(sdsm_sysfs_nr_nodes() == 3, "nr_nodes");
	cnt = sdsm_node_table(n, SDSM_MAX_NODES);
	CHECK(cnt == 3, "count %d: %s", cnt, sdsm_last_error());
	if (cnt != 3)
		return true;
	CHECK(n[0].id == 0 && n[1].id == 1 && n[2].id == 2, "not sorted");
	CHECK(!strcmp(n[0].addr, "198.18.0.1") && !strcmp(n[0].state, "up") &&
	      n[0].rtt_us == 95 && n[0].tx_msgs == 10 && n[0].rx_bytes == 1100 &&
	      n[0].homed_pages == 42 && n[0].free_kb == 1024, "node 0 fields");
	CHECK(!strcmp(n[2].state, "down") && n[2].tx_msgs == SDSM_STAT_UNKNOWN &&
	      n[2].homed_pages == SDSM_STAT_UNKNOWN, "node 2 unknowns");
	CHECK(sdsm_node_table(n, 1) == 3 && n[0].id == 0, "truncated table");
	put("nodes/1/rtt_us", "12abc\n");
	errno = 0;
	CHECK_ERR(sdsm_node_table(n, SDSM_MAX_NODES), -1, EINVAL);
	CHECK(strstr(sdsm_last_error(), "nodes/1/rtt_us"), "'%s'",
	      sdsm_last_error());
	put("nodes/1/rtt_us", "0\n");
	put("nodes/junk/addr", "x\n");
	errno = 0;
	CHECK_ERR(sdsm_node_table(n, SDSM_MAX_NODES), -1, EINVAL);
	unput("nodes/junk/addr");
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/nodes/junk", sysfs_dir);
		rmdir(path);
	}
	put("nr_nodes", "0\n");
	errno = 0;
	CHECK_ERR(sdsm_sysfs_nr_nodes(), -1, ERANGE);
	put("nr_nodes", "3\n");
	setenv("SDSM_SYSFS_ROOT", "/nonexistent/sysfs", 1);
	errno = 0;
	CHECK_ERR(sdsm_node_table(n, SDSM_MAX_NODES), -1, ENODEV);
	errno = 0;
	CHECK_ERR(sdsm_sysfs_node_id(), -1, ENODEV);
	return true;
}

static bool test_sysfs_stats(void)
{
	static const char *const bad_hist[] = {
		"0-1 5\n1- 3\n2-4 0\n",	/* open bucket not last */
		"0-1 5\n1-1 3\n",		/* empty bucket */
		"0-1 5\nbogus\n",
		"3-1 5\n",			/* hi < lo */
	};
	struct sdsm_hist_bucket h[4];
	struct sdsm_stats s;
	uint64_t v;
	char buf[16];
	int i, n;

	setenv("SDSM_SYSFS_ROOT", sysfs_dir, 1);
	n = sdsm_stats_read(&s);
	CHECK(n == 2, "found %d: %s", n, sdsm_last_error());
	CHECK(s.value[SDSM_STAT_READ_FAULTS_REMOTE] == 7, "read_faults_remote");
	CHECK(s.value[SDSM_STAT_BYTES_SENT] == INT64_MAX, "saturated");
	CHECK(s.value[SDSM_STAT_UPGRADES] == SDSM_STAT_UNKNOWN, "upgrades");
	for (i = 0; i < SDSM_STAT_NR; i++)
		CHECK(sdsm_stat_name(i) && *sdsm_stat_name(i), "name %d", i);
	CHECK(!strcmp(sdsm_stat_name(SDSM_STAT_LOCK_WAITS), "lock_waits"),
	      "lock_waits");
	CHECK(sdsm_stat_name(SDSM_STAT_NR) == NULL, "past the end");
	n = sdsm_latency_hist(h, 2);
	CHECK(n == 4 && h[0].lo_us == 0 && h[0].hi_us == 1 && h[0].count == 5 &&
	      h[1].lo_us == 1 && h[1].hi_us == 2 && h[1].count == 7,
	      "hist %d", n);
	n = sdsm_latency_hist(h, 4);
	CHECK(n == 4 && h[3].lo_us == 4 && h[3].hi_us == UINT64_MAX &&
	      h[3].count == 3, "open last bucket %d", n);
	for (i = 0; i < (int)(sizeof(bad_hist) / sizeof(bad_hist[0])); i++) {
		put("stats/fault_latency_hist", bad_hist[i]);
		errno = 0;
		n = sdsm_latency_hist(h, 2);
		CHECK(n == -1 && errno == EINVAL, "bad histogram %d: got %d (%s)",
		      i, n, sdsm_last_error());
	}
	put("stats/fault_latency_hist", "0-1 5\n1-2 7\n2-4 0\n4- 3\n");
	put("stats/upgrades", "-1\n");
	errno = 0;
	CHECK_ERR(sdsm_stats_read(&s), -1, EINVAL);
	put("stats/upgrades", "99999999999999999999\n");
	errno = 0;
	CHECK_ERR(sdsm_stats_read(&s), -1, EINVAL);
	unput("stats/upgrades");
	errno = 0;
	CHECK_ERR(sdsm_sysfs_read("../etc/passwd", buf, sizeof(buf)), -1, EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_sysfs_read("/etc/passwd", buf, sizeof(buf)), -1, EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_sysfs_read_u64("nodes/0/addr", &v), -1, EINVAL);
	errno = 0;
	CHECK_ERR(sdsm_sysfs_read_u64("no_such_file", &v), -1, ENOENT);
	CHECK(sdsm_sysfs_read("nodes/0/state", buf, 3) == 2 &&
	      !strcmp(buf, "up"), "'%s'", buf);
	setenv("SDSM_SYSFS_ROOT", "/nonexistent/sysfs", 1);
	errno = 0;
	CHECK_ERR(sdsm_stats_read(&s), -1, ENODEV);
	return true;
}

/* ---- tests: join config ---- */

static int parse_cfg(const char *text, struct sdsmctl_config *cfg, char *err,
		     size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -2;
	ret = sdsmctl_parse_config(f, "test.conf", cfg, err, len);
	fclose(f);
	return ret;
}

static bool test_join_config(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "node 0 198.18.0.1\nnode 0 198.18.0.2\n", "test.conf:2: node 0 listed twice" },
		{ "node 0 198.18.0.1\nnode 2 198.18.0.3\n", "node 1 missing" },
		{ "node 0 198.18.0.256\n", "test.conf:1: '198.18.0.256' is not an IPv4" },
		{ "node 0 host.example\n", "not an IPv4" },
		{ "node x 198.18.0.1\n", "node id 'x'" },
		{ "node 32 198.18.0.1\n", "node id '32'" },
		{ "node 0\n", "expected 'node ID ADDRESS'" },
		{ "node 0 198.18.0.1 extra\n", "expected 'node ID ADDRESS'" },
		{ "node 0 198.18.0.1\nport 0\n", "test.conf:2: expected 'port N'" },
		{ "node 0 198.18.0.1\nport 65536\n", "port N" },
		{ "node 0 198.18.0.1\nport 1\nport 2\n", "port given twice" },
		{ "nodes 0 198.18.0.1\n", "unknown statement 'nodes'" },
		{ "", "no node lines" },
		{ "# only a comment\n\n", "no node lines" },
		{ "node 0 198.18.0.1\nnode 1 198.18.0.1\n", "same address" },
		{ "node 0 198.18.0.1\nsecret\n", "test.conf:2: expected 'secret PATH'" },
		{ "node 0 198.18.0.1\nsecret a b\n", "expected 'secret PATH'" },
		{ "secret /k\nnode 0 198.18.0.1\nsecret /k\n",
		  "test.conf:3: secret given twice (first on line 1)" },
	};
	struct sdsmctl_config cfg;
	char err[256];
	unsigned int i;
	int ret;

	ret = parse_cfg("# cluster\nport 18611\nnode 1 198.18.0.2 # two\n"
			"\n  node\t0   198.18.0.1\nnode 2 198.18.0.3\n", &cfg,
			err, sizeof(err));
	CHECK(ret == 0, "good config: %s", err);
	CHECK(cfg.nr_nodes == 3 && cfg.port == 18611 &&
	      !strcmp(cfg.addr[0], "198.18.0.1") &&
	      !strcmp(cfg.addr[2], "198.18.0.3") && !cfg.secret[0],
	      "good config fields");
	ret = parse_cfg("node 0 198.18.0.1\nsecret /etc/sdsm/cluster.key\n",
			&cfg, err, sizeof(err));
	CHECK(ret == 0 && !strcmp(cfg.secret, "/etc/sdsm/cluster.key"),
	      "config with a secret: %d %s", ret, err);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ret = parse_cfg(bad[i].text, &cfg, err, sizeof(err));
		CHECK(ret == -1 && strstr(err, bad[i].msg),
		      "config %u: ret %d, message '%s', want '%s'", i, ret, err,
		      bad[i].msg);
	}
	return true;
}

/* ---- runner ---- */

struct test {
	const char *name;
	bool (*fn)(void);
	bool fork;
};

static const struct test tests[] = {
	{ "libsdsm: node lists, good forms", test_nodemask_good, false },
	{ "libsdsm: node lists, bad forms rejected", test_nodemask_bad, false },
	{ "libsdsm: node lists formatted as ranges", test_nodemask_format, false },
	{ "libsdsm: policy strings parse and format", test_policy_strings, false },
	{ "libsdsm: SDSM_POLICY read and checked", test_policy_env, true },
	{ "libsdsm: module not loaded is ENODEV", test_no_module, true },
	{ "libsdsm: /dev/sdsm missing is ENOENT", test_no_device_node, true },
	{ "libsdsm: not an sdsm device is ENODEV", test_not_sdsm_device, true },
	{ "libsdsm: GET_INFO gives nodes and features", test_info, true },
	{ "libsdsm: other API version is EPROTO", test_api_version, true },
	{ "libsdsm: missing features are ENOSYS", test_missing_features, true },
	{ "libsdsm: ENOTTY from the module is ENOSYS", test_enotty_is_enosys, true },
	{ "libsdsm: allocation carves owned heap chunks", test_alloc_free, true },
	{ "libsdsm: 140000 allocations, few regions", test_alloc_many, true },
	{ "heap: sizes, alignments, double free", test_heap_sizes, true },
	{ "heap: large blocks in a row not a power of two apart",
	  test_heap_stride, true },
	{ "heap: 100000 live blocks in one chunk", test_heap_many, true },
	{ "heap: four threads", test_heap_threads, true },
	{ "heap: zero-filled allocations write only reused memory",
	  test_heap_zeroed, true },
	{ "heap: partial munmap, huge chunks", test_heap_trim_huge, true },
	{ "heap: a chunk released in a reservation is not written, then reused",
	  test_heap_reserved_reuse, true },
	{ "libsdsm: named regions", test_regions, true },
	{ "libsdsm: release-consistent regions", test_region_consistency, true },
	{ "libsdsm: SDSM_CONSISTENCY=release heap chunks", test_heap_consistency, true },
	{ "libsdsm: bad SDSM_CONSISTENCY, module without release",
	  test_heap_consistency_bad, true },
	{ "libsdsm: heap chunks name their manager", test_heap_manager, true },
	{ "libsdsm: sdsm_region_create_managed names a region's manager",
	  test_region_managed, true },
	{ "libsdsm: home queries and set_policy", test_placement, true },
	{ "libsdsm: locks and barriers", test_locks, true },
	{ "libsdsm: futex wait and wake", test_futex, true },
	{ "libsdsm: condition variables on a lock", test_cond, true },
	{ "libsdsm: sysfs node table", test_sysfs_nodes, true },
	{ "libsdsm: sysfs counters and histogram", test_sysfs_stats, true },
	{ "sdsmctl: join config parsing", test_join_config, false },
};

static bool run_one(const struct test *t)
{
	int status;
	pid_t pid;

	check_failed = 0;
	if (!t->fork) {
		t->fn();
		return !check_failed;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		t->fn();
		fflush(stdout);
		_exit(check_failed ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return false;
	if (WIFSIGNALED(status))
		printf("#   killed by signal %d\n", WTERMSIG(status));
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

static void rm_tree(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
	struct tap_args ta;
	int ret;
	int ntests = sizeof(tests) / sizeof(tests[0]);
	int first = 1, i, failed = 0, plan = 1;
	const char *prefix = "";
	char tmp[] = "/tmp/sdsm-userlib.XXXXXX";

	ret = tap_parse_args(argc, argv, ntests, &ta);
	if (ret >= 0)
		return ret;
	first = ta.first;
	prefix = ta.prefix;
	plan = ta.plan;
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(fake_path, sizeof(fake_path), "%s/dev-sdsm", tmp);
	snprintf(sysfs_dir, sizeof(sysfs_dir), "%s/sysfs", tmp);
	mkdir(sysfs_dir, 0755);
	make_fixture();
	unsetenv("SDSM_POLICY");
	unsetenv("SDSM_CONSISTENCY");
	if (plan)
		printf("TAP version 13\n1..%d\n", ntests);
	for (i = 0; i < ntests; i++) {
		bool ok = run_one(&tests[i]);

		printf("%s %d - %s%s\n", ok ? "ok" : "not ok", first + i,
		       prefix, tests[i].name);
		fflush(stdout);
		failed += !ok;
	}
	rm_tree(tmp);
	return failed ? 1 : 0;
}
