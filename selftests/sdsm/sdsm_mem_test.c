// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_mem_test - coherent memory, regions and placement on one node: every
 * bad input gets the errno uapi/linux/sdsm.h and
 * Documentation/coherent-memory.rst promise, and nothing oopses.
 *
 * Table-driven like selftests/iommu: test_err_ioctl() expects one errno.
 * Run it on a node of a cluster whose nodes are all up (create and destroy
 * need them); every test SKIPs when the module is not loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/sdsm.h>

#include "kselftest_harness.h"

#ifndef offsetofend
#define offsetofend(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#endif

#define PAGE 4096UL

/* 0 or the errno of the ioctl. */
static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? errno : 0;
}

#define test_err_ioctl(_errno, _req, _arg)				\
	EXPECT_EQ(_errno, xioctl(self->fd, _req, _arg))

static void *map_at(int fd, uint64_t off, size_t len, int prot, int flags)
{
	return mmap(NULL, len, prot, flags, fd, off);
}

static int map_err(int fd, uint64_t off, size_t len, int prot, int flags)
{
	void *p = map_at(fd, off, len, prot, flags);

	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

FIXTURE(mem) {
	int fd;
	struct sdsm_info info;
	struct sdsm_region_info def;
	char name[32];
};

FIXTURE_SETUP(mem)
{
	self->fd = open("/dev/sdsm", O_RDWR | O_CLOEXEC);
	if (self->fd < 0)
		SKIP(return, "/dev/sdsm absent: sdsm.ko not loaded");
	self->info.size = sizeof(self->info);
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_GET_INFO, &self->info));
	self->def.size = sizeof(self->def);
	self->def.region_id = SDSM_DEFAULT_REGION;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_INFO, &self->def));
	snprintf(self->name, sizeof(self->name), "memtest-%u-%d",
		 self->info.node_id, getpid());
}

FIXTURE_TEARDOWN(mem)
{
	if (self->fd >= 0)
		close(self->fd);
}

#define REQUIRE_DEV()							\
	do {								\
		if (self->fd < 0)					\
			SKIP(return, "/dev/sdsm absent: sdsm.ko not loaded"); \
	} while (0)

TEST_F(mem, features)
{
	REQUIRE_DEV();
	EXPECT_TRUE(self->info.features & SDSM_FEATURE_COHERENT_MEMORY);
	EXPECT_TRUE(self->info.features & SDSM_FEATURE_REGIONS);
	EXPECT_TRUE(self->info.features & SDSM_FEATURE_PLACEMENT);
	EXPECT_EQ(0, self->def.offset);
	EXPECT_STREQ("default", self->def.name);
	EXPECT_EQ(SDSM_POLICY_INTERLEAVE, self->def.policy.mode);
	EXPECT_LT(0, self->def.length);
}

TEST_F(mem, map_read_write)
{
	volatile uint64_t *p;
	int ro;

	REQUIRE_DEV();
	p = map_at(self->fd, 0, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	p[1] = 0x1234;
	p[PAGE / 8] = p[1] + 1;
	EXPECT_EQ(0x1235, p[PAGE / 8]);
	munmap((void *)p, 2 * PAGE);
	p = map_at(self->fd, 0, 2 * PAGE, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0x1235, p[PAGE / 8]);
	munmap((void *)p, 2 * PAGE);
	/* A read-only open maps read-only, shared, and sees the same. */
	ro = open("/dev/sdsm", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	EXPECT_EQ(EACCES, map_err(ro, 0, PAGE, PROT_READ | PROT_WRITE,
				  MAP_SHARED));
	p = map_at(ro, PAGE, PAGE, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0x1235, p[0]);
	munmap((void *)p, PAGE);
	close(ro);
}

TEST_F(mem, mmap_errors)
{
	uint64_t len = self->def.length;
	void *p;

	REQUIRE_DEV();
	EXPECT_EQ(EINVAL, map_err(self->fd, 0, PAGE, PROT_READ, MAP_PRIVATE));
	EXPECT_EQ(EPERM, map_err(self->fd, 0, PAGE, PROT_READ | PROT_EXEC,
				 MAP_SHARED));
	/* Past the end of the default region, or straddling it. */
	EXPECT_EQ(EINVAL, map_err(self->fd, len, PAGE, PROT_READ, MAP_SHARED));
	EXPECT_EQ(EINVAL, map_err(self->fd, len - PAGE, 2 * PAGE, PROT_READ,
				  MAP_SHARED));
	/* A region slot nobody created. */
	EXPECT_EQ(ENXIO, map_err(self->fd, 0x7ffeULL << 40, PAGE, PROT_READ,
				 MAP_SHARED));
	/* Unaligned offsets never reach the driver. */
	EXPECT_EQ(EINVAL, map_err(self->fd, 100, PAGE, PROT_READ, MAP_SHARED));
	/* No exec later either. */
	p = map_at(self->fd, 0, PAGE, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, PAGE, PROT_READ | PROT_EXEC));
	munmap(p, PAGE);
}

/* Size, flags, reserved and pointer checks common to every command. */
TEST_F(mem, ioctl_common_errors)
{
#define SDSM_CMD(req, type, first, reserved)				\
	{ req, offsetofend(type, first), sizeof(type), reserved }
	static const struct {
		unsigned long req;
		size_t min;		/* size of the first version */
		size_t size;		/* size of this header's version */
		size_t reserved_off;	/* 0: none */
	} cmds[] = {
		SDSM_CMD(SDSM_IOC_REGION_CREATE, struct sdsm_region_create,
			 offset, offsetof(struct sdsm_region_create,
					  __reserved)),
		/* A manager without SDSM_REGION_F_MANAGER. */
		SDSM_CMD(SDSM_IOC_REGION_CREATE, struct sdsm_region_create,
			 offset, offsetof(struct sdsm_region_create, manager)),
		SDSM_CMD(SDSM_IOC_REGION_OPEN, struct sdsm_region_info, policy,
			 offsetof(struct sdsm_region_info, __reserved)),
		SDSM_CMD(SDSM_IOC_REGION_INFO, struct sdsm_region_info, policy,
			 offsetof(struct sdsm_region_info, __reserved)),
		SDSM_CMD(SDSM_IOC_REGION_DESTROY, struct sdsm_region_destroy,
			 __reserved,
			 offsetof(struct sdsm_region_destroy, __reserved)),
		SDSM_CMD(SDSM_IOC_SET_POLICY, struct sdsm_set_policy, policy,
			 0),
		SDSM_CMD(SDSM_IOC_QUERY_HOME, struct sdsm_query_home, homes,
			 offsetof(struct sdsm_query_home, __reserved)),
	};
#undef SDSM_CMD
	unsigned char buf[512];
	unsigned int i;

	REQUIRE_DEV();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		uint32_t *size = (uint32_t *)buf, *flags = size + 1;

		TH_LOG("command %u", i);
		memset(buf, 0, sizeof(buf));
		*size = 4;
		test_err_ioctl(EINVAL, cmds[i].req, buf);
		*size = cmds[i].min - 1;
		test_err_ioctl(EINVAL, cmds[i].req, buf);
		/* Larger struct with a non-zero byte the kernel lacks. */
		memset(buf, 0, sizeof(buf));
		*size = cmds[i].size + 8;
		buf[cmds[i].size + 3] = 1;
		test_err_ioctl(E2BIG, cmds[i].req, buf);
		memset(buf, 0, sizeof(buf));
		*size = cmds[i].size;
		*flags = 0x80000000;
		test_err_ioctl(EOPNOTSUPP, cmds[i].req, buf);
		if (cmds[i].reserved_off) {
			memset(buf, 0, sizeof(buf));
			*size = cmds[i].size;
			buf[cmds[i].reserved_off] = 1;
			test_err_ioctl(EINVAL, cmds[i].req, buf);
		}
		test_err_ioctl(EFAULT, cmds[i].req, NULL);
		test_err_ioctl(EFAULT, cmds[i].req, (void *)16);
	}
}

TEST_F(mem, region_create_errors)
{
	static const char * const bad_names[] = {
		"", "has space", "slash/no", "x\n",
		"0123456789012345678901234567890123456789",
	};
	static const struct sdsm_policy bad_policies[] = {
		{ .mode = 9 },
		{ .mode = SDSM_POLICY_INTERLEAVE, .block_size = 100 },
		{ .mode = SDSM_POLICY_INTERLEAVE, .nodemask = 1ULL << 40 },
		{ .mode = SDSM_POLICY_INTERLEAVE, .preferred_node = 1 },
		{ .mode = SDSM_POLICY_BIND, .block_size = 4096 },
		{ .mode = SDSM_POLICY_PREFERRED, .preferred_node = 63 },
		{ .mode = SDSM_POLICY_PREFERRED, .nodemask = 1 },
		{ .mode = SDSM_POLICY_FIRST_TOUCH, .nodemask = 1 },
		{ .mode = SDSM_POLICY_FIRST_TOUCH, .block_size = 4096 },
	};
	static const uint64_t bad_lengths[] = { 0, 100, 4097, 1ULL << 50 };
	struct sdsm_region_create c;
	unsigned int i;

	REQUIRE_DEV();
	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.length = PAGE;
		memcpy(c.name, bad_names[i], strlen(bad_names[i]) <
		       sizeof(c.name) ? strlen(bad_names[i]) : sizeof(c.name));
		TH_LOG("name '%s'", bad_names[i]);
		test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c);
	}
	for (i = 0; i < sizeof(bad_policies) / sizeof(bad_policies[0]); i++) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.length = PAGE;
		strcpy(c.name, self->name);
		c.policy = bad_policies[i];
		TH_LOG("policy %u", i);
		test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c);
	}
	for (i = 0; i < sizeof(bad_lengths) / sizeof(bad_lengths[0]); i++) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.length = bad_lengths[i];
		strcpy(c.name, self->name);
		TH_LOG("length %llu", (unsigned long long)bad_lengths[i]);
		test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c);
	}
	/* Permission bits: 0..0777, and only with SDSM_REGION_F_MODE. */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.length = PAGE;
	strcpy(c.name, self->name);
	c.flags = SDSM_REGION_F_MODE;
	c.mode = 01777;
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c);
	c.flags = 0;
	c.mode = 0644;
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c);
}

TEST_F(mem, region_lookup_errors)
{
	struct sdsm_region_info info = { .size = sizeof(info) };
	struct sdsm_region_destroy d = { .size = sizeof(d) };

	REQUIRE_DEV();
	strcpy(info.name, "no-such-region-here");
	test_err_ioctl(ENOENT, SDSM_IOC_REGION_OPEN, &info);
	strcpy(info.name, "bad name");
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_OPEN, &info);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.region_id = 0x7ffe;
	test_err_ioctl(ENOENT, SDSM_IOC_REGION_INFO, &info);
	d.region_id = SDSM_DEFAULT_REGION;
	test_err_ioctl(EPERM, SDSM_IOC_REGION_DESTROY, &d);
	d.region_id = 0x7ffe;
	test_err_ioctl(ENOENT, SDSM_IOC_REGION_DESTROY, &d);
}

/* Create, the EXCL and mismatch rules, destroy while mapped, destroy. */
TEST_F(mem, region_lifecycle)
{
	struct sdsm_region_create c = { .size = sizeof(c) }, c2;
	struct sdsm_region_destroy d = { .size = sizeof(d) };
	struct sdsm_region_info info = { .size = sizeof(info) };
	volatile uint64_t *p;

	REQUIRE_DEV();
	strcpy(c.name, self->name);
	c.length = 4 * PAGE;
	c.policy.mode = SDSM_POLICY_FIRST_TOUCH;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_CREATE, &c));
	EXPECT_NE(0, c.region_id);
	EXPECT_NE(0, c.offset);

	c2 = c;
	test_err_ioctl(0, SDSM_IOC_REGION_CREATE, &c2);
	EXPECT_EQ(c.region_id, c2.region_id);
	c2.flags = SDSM_REGION_F_EXCL;
	test_err_ioctl(EEXIST, SDSM_IOC_REGION_CREATE, &c2);
	c2 = c;
	c2.length = 8 * PAGE;
	test_err_ioctl(EEXIST, SDSM_IOC_REGION_CREATE, &c2);

	strcpy(info.name, self->name);
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_OPEN, &info));
	EXPECT_EQ(c.region_id, info.region_id);
	EXPECT_EQ(c.offset, info.offset);
	EXPECT_EQ(4 * PAGE, info.length);
	EXPECT_EQ(SDSM_POLICY_FIRST_TOUCH, info.policy.mode);
	EXPECT_EQ(SDSM_CONSISTENCY_SEQUENTIAL, info.consistency);

	EXPECT_EQ(EINVAL, map_err(self->fd, c.offset, 5 * PAGE, PROT_READ,
				  MAP_SHARED));
	p = map_at(self->fd, c.offset + PAGE, PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 77;
	EXPECT_EQ(77, p[0]);

	d.region_id = c.region_id;
	test_err_ioctl(EBUSY, SDSM_IOC_REGION_DESTROY, &d);
	munmap((void *)p, PAGE);
	test_err_ioctl(0, SDSM_IOC_REGION_DESTROY, &d);
	test_err_ioctl(ENOENT, SDSM_IOC_REGION_DESTROY, &d);
	EXPECT_EQ(ENXIO, map_err(self->fd, c.offset, PAGE, PROT_READ,
				 MAP_SHARED));
	test_err_ioctl(ENOENT, SDSM_IOC_REGION_OPEN, &info);
}

/*
 * A release-consistent region: INFO and sysfs say so; the name cannot be
 * opened as sequential (or the reverse); its pages read and write.
 */
/* Read sysfs regions/<id>/<attr> into @buf; 0 or -1. */
static int region_sysfs(uint32_t id, const char *attr, char *buf, int len)
{
	char path[96];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/sdsm/regions/%u/%s", id,
		 attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ret = fgets(buf, len, f) ? 0 : -1;
	fclose(f);
	return ret;
}

TEST_F(mem, region_consistency)
{
	struct sdsm_region_create c = { .size = sizeof(c) }, c2;
	struct sdsm_region_destroy d = { .size = sizeof(d) };
	struct sdsm_region_info info = { .size = sizeof(info) };
	volatile uint64_t *p;
	char buf[32] = "";

	REQUIRE_DEV();
	strcpy(c.name, self->name);
	c.length = 2 * PAGE;
	c.flags = SDSM_REGION_F_RELEASE;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_CREATE, &c));
	c2 = c;
	test_err_ioctl(0, SDSM_IOC_REGION_CREATE, &c2);
	EXPECT_EQ(c.region_id, c2.region_id);
	c2.flags = 0;
	test_err_ioctl(EEXIST, SDSM_IOC_REGION_CREATE, &c2);
	c2.flags = 1u << 31;
	test_err_ioctl(EOPNOTSUPP, SDSM_IOC_REGION_CREATE, &c2);

	info.region_id = c.region_id;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_INFO, &info));
	EXPECT_EQ(SDSM_CONSISTENCY_RELEASE, info.consistency);
	ASSERT_EQ(0, region_sysfs(c.region_id, "consistency", buf,
				  sizeof(buf)));
	EXPECT_STREQ("release\n", buf);

	p = map_at(self->fd, c.offset, 2 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, p[0]);
	p[0] = 41;
	p[PAGE / 8] = 42;
	EXPECT_EQ(41, p[0]);
	EXPECT_EQ(42, p[PAGE / 8]);
	munmap((void *)p, 2 * PAGE);
	d.region_id = c.region_id;
	test_err_ioctl(0, SDSM_IOC_REGION_DESTROY, &d);

	/* A sequential region of the name is not opened as release. */
	c.flags = 0;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_CREATE, &c));
	c2 = c;
	c2.flags = SDSM_REGION_F_RELEASE;
	test_err_ioctl(EEXIST, SDSM_IOC_REGION_CREATE, &c2);
	d.region_id = c.region_id;
	test_err_ioctl(0, SDSM_IOC_REGION_DESTROY, &d);
}

/*
 * SDSM_REGION_F_MANAGER: only with a policy that does not compute homes,
 * only a node of the cluster; INFO and sysfs show it; a CREATE that would
 * open the name with another manager fails.  The default region has none.
 */
TEST_F(mem, region_manager)
{
	struct sdsm_region_create c = { .size = sizeof(c) }, c2;
	struct sdsm_region_destroy d = { .size = sizeof(d) };
	struct sdsm_region_info info = { .size = sizeof(info) };
	uint32_t last = self->info.nr_nodes - 1;
	char buf[32] = "", want[16];
	volatile uint64_t *p;

	REQUIRE_DEV();
	EXPECT_EQ(SDSM_MANAGER_INTERLEAVE, self->def.manager);
	strcpy(c.name, self->name);
	c.length = 4 * PAGE;
	c.policy.mode = SDSM_POLICY_FIRST_TOUCH;
	c.manager = last;
	c2 = c;
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c2);	/* no flag */
	c.flags = SDSM_REGION_F_MANAGER;
	c2 = c;
	c2.manager = self->info.nr_nodes;
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c2);
	c2.manager = SDSM_MANAGER_INTERLEAVE;
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c2);
	c2 = c;
	c2.policy.mode = SDSM_POLICY_INTERLEAVE;	/* computes every home */
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c2);
	c2.policy.mode = SDSM_POLICY_BIND;
	c2.policy.nodemask = 1ULL << last;
	test_err_ioctl(EINVAL, SDSM_IOC_REGION_CREATE, &c2);

	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_CREATE, &c));
	info.region_id = c.region_id;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_INFO, &info));
	EXPECT_EQ(last, info.manager);
	EXPECT_EQ(0, info.__reserved2);
	ASSERT_EQ(0, region_sysfs(c.region_id, "manager", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%u\n", last);
	EXPECT_STREQ(want, buf);
	c2 = c;
	test_err_ioctl(0, SDSM_IOC_REGION_CREATE, &c2);	/* opens it */
	EXPECT_EQ(c.region_id, c2.region_id);
	c2.flags = 0;
	c2.manager = 0;
	test_err_ioctl(EEXIST, SDSM_IOC_REGION_CREATE, &c2);

	/* Touched first here: homed here, whoever the manager is. */
	p = map_at(self->fd, c.offset, 4 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 7;
	p[3 * PAGE / 8] = 8;
	EXPECT_EQ(7, p[0]);
	EXPECT_EQ(8, p[3 * PAGE / 8]);
	munmap((void *)p, 4 * PAGE);
	ASSERT_EQ(0, region_sysfs(c.region_id, "pages_homed", buf,
				  sizeof(buf)));
	EXPECT_STREQ("2\n", buf);
	d.region_id = c.region_id;
	test_err_ioctl(0, SDSM_IOC_REGION_DESTROY, &d);

	c.flags = 0;
	c.manager = 0;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_REGION_CREATE, &c));
	ASSERT_EQ(0, region_sysfs(c.region_id, "manager", buf, sizeof(buf)));
	EXPECT_STREQ("interleave\n", buf);
	d.region_id = c.region_id;
	test_err_ioctl(0, SDSM_IOC_REGION_DESTROY, &d);
}

TEST_F(mem, set_policy_errors)
{
	struct sdsm_set_policy s = { .size = sizeof(s) };
	char *p, *anon;

	REQUIRE_DEV();
	p = map_at(self->fd, 0, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	anon = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, anon);

	s.addr = (uintptr_t)anon;
	s.length = PAGE;
	test_err_ioctl(EFAULT, SDSM_IOC_SET_POLICY, &s);
	s.addr = (uintptr_t)p + 1;
	test_err_ioctl(EINVAL, SDSM_IOC_SET_POLICY, &s);
	s.addr = (uintptr_t)p;
	s.length = 0;
	test_err_ioctl(EINVAL, SDSM_IOC_SET_POLICY, &s);
	s.length = 100;
	test_err_ioctl(EINVAL, SDSM_IOC_SET_POLICY, &s);
	s.length = 5 * PAGE;
	test_err_ioctl(EINVAL, SDSM_IOC_SET_POLICY, &s);
	s.length = PAGE;
	s.policy.mode = 7;
	test_err_ioctl(EINVAL, SDSM_IOC_SET_POLICY, &s);
	s.policy.mode = SDSM_POLICY_PREFERRED;
	s.policy.preferred_node = 60;
	test_err_ioctl(EINVAL, SDSM_IOC_SET_POLICY, &s);
	munmap(anon, PAGE);
	munmap(p, 4 * PAGE);
}

TEST_F(mem, query_home)
{
	struct sdsm_query_home q = { .size = sizeof(q) };
	uint64_t addrs[3];
	int32_t homes[3];
	char *p;

	REQUIRE_DEV();
	p = map_at(self->fd, 0, 2 * PAGE, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	addrs[0] = (uintptr_t)p;
	addrs[1] = (uintptr_t)p + PAGE + 8;
	addrs[2] = 8;		/* not mapped */
	q.addrs = (uintptr_t)addrs;
	q.homes = (uintptr_t)homes;
	q.count = 0;
	test_err_ioctl(EINVAL, SDSM_IOC_QUERY_HOME, &q);
	q.count = 4097;
	test_err_ioctl(EINVAL, SDSM_IOC_QUERY_HOME, &q);
	q.count = 3;
	q.addrs = 16;
	test_err_ioctl(EFAULT, SDSM_IOC_QUERY_HOME, &q);
	q.addrs = (uintptr_t)addrs;
	q.homes = 16;
	test_err_ioctl(EFAULT, SDSM_IOC_QUERY_HOME, &q);
	q.homes = (uintptr_t)homes;
	ASSERT_EQ(0, xioctl(self->fd, SDSM_IOC_QUERY_HOME, &q));
	/* The default region interleaves page by page over every node. */
	EXPECT_EQ(0, homes[0]);
	EXPECT_EQ(self->info.nr_nodes > 1 ? 1 : 0, homes[1]);
	EXPECT_EQ(-EFAULT, homes[2]);
	munmap(p, 2 * PAGE);
}

TEST_HARNESS_MAIN
