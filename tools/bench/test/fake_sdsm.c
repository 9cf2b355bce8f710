// SPDX-License-Identifier: GPL-2.0
/*
 * fake_sdsm.so - an LD_PRELOAD stand-in for /dev/sdsm on the host, so the
 * bench pipeline (guest.sh, the measurement programs, report.py) can be
 * tested without QEMU: tools/bench/test/selftest.sh.
 *
 * open("/dev/sdsm") opens $FAKE_SDSM_DIR/mem instead, a sparse file that
 * every process of the test shares, so mmap() gives memory that "nodes"
 * (processes with different SDSM_NODE_ID) really share.  ioctl() on such a
 * descriptor implements GET_INFO, REGION_CREATE/OPEN/DESTROY, QUERY_HOME
 * (from the region's policy, never -ENOENT) and BARRIER (a counter file);
 * a region keeps the consistency SDSM_REGION_F_RELEASE asks for (refused
 * with EOPNOTSUPP when $FAKE_SDSM_NO_RELEASE is set, as an older module);
 * the region table is a file of fixed records under flock().  Features come
 * from $FAKE_SDSM_FEATURES (default: all).  Nothing here is coherent or
 * slow: it checks plumbing, not performance.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdsm.h>

#define FAKE_REGION_SPAN	(64ull << 20)
#define FAKE_MAX_REGIONS	256
#define FAKE_MAX_MAPS		64

struct fake_rec {
	char name[SDSM_NAME_MAX];
	uint32_t id;
	uint32_t live;
	uint64_t length;
	struct sdsm_policy policy;
	uint32_t consistency;
	uint32_t pad;
};

static struct {
	void *addr;
	size_t len;
	uint64_t off;
} fake_maps[FAKE_MAX_MAPS];

static int fake_fds[1024];

static const char *fake_dir(void)
{
	const char *d = getenv("FAKE_SDSM_DIR");

	return d ? d : "/dev/shm/fake-sdsm";
}

static int fake_env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v ? atoi(v) : def;
}

static int fake_open_file(const char *leaf, int flags)
{
	char path[512];
	int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");

	snprintf(path, sizeof(path), "%s/%s", fake_dir(), leaf);
	return real_open(path, flags, 0600);
}

static int fake_is_dev(const char *path)
{
	return path && !strcmp(path, "/dev/sdsm");
}

static int fake_open_dev(int flags)
{
	int fd = fake_open_file("mem", (flags & ~O_CREAT) | O_RDWR);

	if (fd >= 0 && fd < 1024)
		fake_fds[fd] = 1;
	return fd;
}

int open(const char *path, int flags, ...)
{
	int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	if (fake_is_dev(path))
		return fake_open_dev(flags);
	return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open64");
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	if (fake_is_dev(path))
		return fake_open_dev(flags);
	return real_open(path, flags, mode);
}

/* fio must see a character device, as in the guest, or it lays a file out. */
static int fake_stat_dev(struct stat *st)
{
	int fd = fake_open_file("mem", O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = fstat(fd, st);
	close(fd);
	st->st_mode = S_IFCHR | 0600;
	st->st_size = 0;
	st->st_rdev = makedev(10, 250);
	return ret;
}

int stat(const char *path, struct stat *st)
{
	int (*real_stat)(const char *, struct stat *) = dlsym(RTLD_NEXT, "stat");

	return fake_is_dev(path) ? fake_stat_dev(st) : real_stat(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	int (*real_stat)(const char *, struct stat64 *) =
		dlsym(RTLD_NEXT, "stat64");

	return fake_is_dev(path) ? fake_stat_dev((struct stat *)st) :
		real_stat(path, st);
}

int lstat(const char *path, struct stat *st)
{
	int (*real_lstat)(const char *, struct stat *) =
		dlsym(RTLD_NEXT, "lstat");

	return fake_is_dev(path) ? fake_stat_dev(st) : real_lstat(path, st);
}

int ftruncate(int fd, off_t len)
{
	int (*real_ftruncate)(int, off_t) = dlsym(RTLD_NEXT, "ftruncate");

	if (fd >= 0 && fd < 1024 && fake_fds[fd]) {
		errno = EINVAL;
		return -1;
	}
	return real_ftruncate(fd, len);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*real_mmap)(void *, size_t, int, int, int, off_t) =
		dlsym(RTLD_NEXT, "mmap");
	void *p = real_mmap(addr, len, prot, flags, fd, off);
	int i;

	if (p != MAP_FAILED && fd >= 0 && fd < 1024 && fake_fds[fd])
		for (i = 0; i < FAKE_MAX_MAPS; i++)
			if (!fake_maps[i].addr) {
				fake_maps[i].addr = p;
				fake_maps[i].len = len;
				fake_maps[i].off = off;
				break;
			}
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

int close(int fd)
{
	int (*real_close)(int) = dlsym(RTLD_NEXT, "close");

	if (fd >= 0 && fd < 1024)
		fake_fds[fd] = 0;
	return real_close(fd);
}

/* The region table: record i is region id i + 1 at offset (i + 1) * span. */
static int fake_table(struct fake_rec *recs, int *nr)
{
	int fd = fake_open_file("regions", O_RDWR | O_CREAT);
	ssize_t n;

	if (fd < 0)
		return -1;
	flock(fd, LOCK_EX);
	n = pread(fd, recs, sizeof(*recs) * FAKE_MAX_REGIONS, 0);
	*nr = n > 0 ? n / sizeof(*recs) : 0;
	return fd;
}

static void fake_table_done(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

static struct fake_rec fake_recs[FAKE_MAX_REGIONS];

static int fake_find(const char *name, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (fake_recs[i].live && !strcmp(fake_recs[i].name, name))
			return i;
	return -1;
}

static int fake_home(const struct sdsm_policy *p, uint64_t off, int nodes)
{
	uint64_t mask = p->nodemask ? p->nodemask : (1ull << nodes) - 1;
	uint64_t block = p->block_size ? p->block_size : 4096, idx;
	int n, cnt = __builtin_popcountll(mask);

	switch (p->mode) {
	case SDSM_POLICY_PREFERRED:
		return p->preferred_node;
	case SDSM_POLICY_BIND:
		return __builtin_ctzll(mask);
	case SDSM_POLICY_INTERLEAVE:
		idx = (off / block) % cnt;
		for (n = 0; n < 64; n++)
			if ((mask >> n & 1) && !idx--)
				return n;
		return -EINVAL;
	default:
		return fake_env_int("SDSM_NODE_ID", 0);
	}
}

static int fake_query(struct sdsm_query_home *q)
{
	uint64_t *addrs = (uint64_t *)(uintptr_t)q->addrs;
	int32_t *homes = (int32_t *)(uintptr_t)q->homes;
	int fd, nr, nodes = fake_env_int("SDSM_NR_NODES", 1);
	uint32_t i;
	int m;

	fd = fake_table(fake_recs, &nr);
	if (fd < 0)
		return -1;
	for (i = 0; i < q->count; i++) {
		homes[i] = -EFAULT;
		for (m = 0; m < FAKE_MAX_MAPS; m++) {
			uint64_t a = addrs[i], base = (uintptr_t)fake_maps[m].addr;
			uint64_t off, rel;
			int r;

			if (!base || a < base || a >= base + fake_maps[m].len)
				continue;
			off = fake_maps[m].off + (a - base);
			r = off / FAKE_REGION_SPAN - 1;
			rel = off % FAKE_REGION_SPAN;
			if (r >= 0 && r < nr && fake_recs[r].live &&
			    rel < fake_recs[r].length)
				homes[i] = fake_home(&fake_recs[r].policy, rel,
						     nodes);
		}
	}
	fake_table_done(fd);
	return 0;
}

static int fake_barrier(struct sdsm_barrier *b)
{
	char leaf[64];
	uint64_t st[2] = { 0, 0 }, gen, end;
	int fd, need = b->count ? (int)b->count :
		__builtin_popcountll(b->nodemask ? b->nodemask :
				     (1ull << fake_env_int("SDSM_NR_NODES", 1)) - 1);

	snprintf(leaf, sizeof(leaf), "barrier-%llx",
		 (unsigned long long)b->barrier_id);
	fd = fake_open_file(leaf, O_RDWR | O_CREAT);
	if (fd < 0)
		return -1;
	flock(fd, LOCK_EX);
	if (pread(fd, st, sizeof(st), 0) < 0)
		st[0] = st[1] = 0;
	gen = st[1];
	if (++st[0] == (uint64_t)need) {
		st[0] = 0;
		st[1]++;
	}
	pwrite(fd, st, sizeof(st), 0);
	flock(fd, LOCK_UN);
	end = time(NULL) + (b->timeout_ms ? b->timeout_ms / 1000 + 1 : 600);
	while (st[1] == gen) {
		if ((uint64_t)time(NULL) > end) {
			close(fd);
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(1000);
		pread(fd, st, sizeof(st), 0);
	}
	close(fd);
	return 0;
}

static int fake_ioctl(unsigned long req, void *arg)
{
	int fd, nr, i;

	switch (req) {
	case SDSM_IOC_GET_INFO: {
		struct sdsm_info *info = arg;
		const char *f = getenv("FAKE_SDSM_FEATURES");

		info->api_version = SDSM_API_VERSION;
		info->node_id = fake_env_int("SDSM_NODE_ID", 0);
		info->nr_nodes = fake_env_int("SDSM_NR_NODES", 1);
		info->features = f ? strtoull(f, NULL, 0) : 0x7f;
		return 0;
	}
	case SDSM_IOC_REGION_CREATE: {
		struct sdsm_region_create *c = arg;

		if ((c->flags & SDSM_REGION_F_RELEASE) &&
		    getenv("FAKE_SDSM_NO_RELEASE")) {
			errno = EOPNOTSUPP;
			return -1;
		}
		fd = fake_table(fake_recs, &nr);
		if (fd < 0)
			return -1;
		if (fake_find(c->name, nr) >= 0) {
			fake_table_done(fd);
			errno = EEXIST;
			return -1;
		}
		if (nr >= FAKE_MAX_REGIONS || c->length > FAKE_REGION_SPAN ||
		    !c->length || c->length % 4096) {
			fake_table_done(fd);
			errno = nr >= FAKE_MAX_REGIONS ? ENOSPC : EINVAL;
			return -1;
		}
		memset(&fake_recs[nr], 0, sizeof(fake_recs[nr]));
		strcpy(fake_recs[nr].name, c->name);
		fake_recs[nr].id = nr + 1;
		fake_recs[nr].live = 1;
		fake_recs[nr].length = c->length;
		fake_recs[nr].policy = c->policy;
		fake_recs[nr].consistency = (c->flags & SDSM_REGION_F_RELEASE) ?
			SDSM_CONSISTENCY_RELEASE : SDSM_CONSISTENCY_SEQUENTIAL;
		pwrite(fd, &fake_recs[nr], sizeof(fake_recs[nr]),
		       nr * sizeof(fake_recs[nr]));
		c->region_id = nr + 1;
		c->offset = (nr + 1) * FAKE_REGION_SPAN;
		fake_table_done(fd);
		return 0;
	}
	case SDSM_IOC_REGION_OPEN: {
		struct sdsm_region_info *info = arg;

		fd = fake_table(fake_recs, &nr);
		if (fd < 0)
			return -1;
		i = fake_find(info->name, nr);
		fake_table_done(fd);
		if (i < 0) {
			errno = ENOENT;
			return -1;
		}
		info->region_id = fake_recs[i].id;
		info->length = fake_recs[i].length;
		info->offset = (i + 1) * FAKE_REGION_SPAN;
		info->policy = fake_recs[i].policy;
		info->consistency = fake_recs[i].consistency;
		return 0;
	}
	case SDSM_IOC_REGION_DESTROY: {
		struct sdsm_region_destroy *d = arg;

		fd = fake_table(fake_recs, &nr);
		if (fd < 0)
			return -1;
		i = d->region_id - 1;
		if (i < 0 || i >= nr || !fake_recs[i].live) {
			fake_table_done(fd);
			errno = ENOENT;
			return -1;
		}
		fake_recs[i].live = 0;
		pwrite(fd, &fake_recs[i], sizeof(fake_recs[i]),
		       i * sizeof(fake_recs[i]));
		fake_table_done(fd);
		return 0;
	}
	case SDSM_IOC_QUERY_HOME:
		return fake_query(arg);
	case SDSM_IOC_BARRIER:
		return fake_barrier(arg);
	default:
		errno = ENOTTY;
		return -1;
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*real_ioctl)(int, unsigned long, void *) =
		dlsym(RTLD_NEXT, "ioctl");
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd < 1024 && fake_fds[fd])
		return fake_ioctl(req, arg);
	return real_ioctl(fd, req, arg);
}
