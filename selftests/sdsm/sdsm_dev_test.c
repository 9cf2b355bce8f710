// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_dev_test - /dev/sdsm and /sys/kernel/sdsm on one node.
 *
 * GET_INFO works and agrees with sysfs; bad GET_INFO input gets the errno
 * that uapi/linux/sdsm.h documents; every sysfs file exists, parses, and
 * refuses writes; module parameters are read-only.  Every test SKIPs when
 * the module is not loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/sdsm.h>

#include "kselftest_harness.h"

#define SYS_SDSM "/sys/kernel/sdsm"

static const char * const node_files[] = {
	"addr", "state", "rtt_us", "tx_msgs", "rx_msgs", "tx_bytes",
	"rx_bytes",
};

/* Read a sysfs file into buf without the trailing newline; -errno. */
static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* Parse a whole decimal u64; 0 on success. */
static int parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int read_u64(const char *path, unsigned long long *v)
{
	char buf[64];
	int ret = read_file(path, buf, sizeof(buf));

	return ret ? ret : parse_u64(buf, v);
}

/*
 * The 6.1 harness runs the test body even after SKIP() in FIXTURE_SETUP,
 * so every test checks again.
 */
#define REQUIRE_DEV()							\
	do {								\
		if (self->fd < 0)					\
			SKIP(return, "/dev/sdsm absent: sdsm.ko not loaded"); \
	} while (0)

FIXTURE(sdsm) {
	int fd;
	struct sdsm_info info;
};

FIXTURE_SETUP(sdsm)
{
	self->fd = open("/dev/sdsm", O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "/dev/sdsm absent: sdsm.ko not loaded");
	ASSERT_LE(0, self->fd);
	memset(&self->info, 0, sizeof(self->info));
	self->info.size = sizeof(self->info);
	ASSERT_EQ(0, ioctl(self->fd, SDSM_IOC_GET_INFO, &self->info));
}

FIXTURE_TEARDOWN(sdsm)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Issue GET_INFO with a buffer of @size bytes; return 0 or errno. */
static int get_info_raw(int fd, void *buf)
{
	return ioctl(fd, SDSM_IOC_GET_INFO, buf) ? errno : 0;
}

TEST_F(sdsm, get_info_matches_sysfs)
{
	unsigned long long node_id, nr_nodes;

	REQUIRE_DEV();

	EXPECT_EQ(SDSM_API_VERSION, self->info.api_version);
	EXPECT_EQ(0, self->info.flags);
	EXPECT_EQ(0, self->info.__reserved);
	EXPECT_TRUE(self->info.features & SDSM_FEATURE_PAGE_TRANSPORT);
	ASSERT_EQ(0, read_u64(SYS_SDSM "/node_id", &node_id));
	ASSERT_EQ(0, read_u64(SYS_SDSM "/nr_nodes", &nr_nodes));
	EXPECT_EQ(node_id, self->info.node_id);
	EXPECT_EQ(nr_nodes, self->info.nr_nodes);
	EXPECT_LT(self->info.node_id, self->info.nr_nodes);
	EXPECT_LE(1, self->info.nr_nodes);
	EXPECT_GE(32, self->info.nr_nodes);
}

TEST_F(sdsm, get_info_size_too_small)
{
	struct sdsm_info info = {};

	REQUIRE_DEV();

	info.size = 0;
	EXPECT_EQ(EINVAL, get_info_raw(self->fd, &info));
	info.size = 4;
	EXPECT_EQ(EINVAL, get_info_raw(self->fd, &info));
	info.size = sizeof(info) - 1;
	EXPECT_EQ(EINVAL, get_info_raw(self->fd, &info));
}

TEST_F(sdsm, get_info_larger_struct)
{
	struct {
		struct sdsm_info info;
		__u64 tail[2];
	} big;

	REQUIRE_DEV();

	/* A newer user space: zero tail is fine and left alone. */
	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	ASSERT_EQ(0, get_info_raw(self->fd, &big));
	EXPECT_EQ(self->info.node_id, big.info.node_id);
	EXPECT_EQ(0, big.tail[0]);
	EXPECT_EQ(0, big.tail[1]);

	/* ... but a request this kernel does not understand is refused. */
	big.tail[1] = 1;
	EXPECT_EQ(E2BIG, get_info_raw(self->fd, &big));
}

TEST_F(sdsm, get_info_reserved_nonzero)
{
	struct sdsm_info info = { .size = sizeof(info), .__reserved = 1 };

	REQUIRE_DEV();

	EXPECT_EQ(EINVAL, get_info_raw(self->fd, &info));
}

TEST_F(sdsm, get_info_unknown_flags)
{
	struct sdsm_info info = { .size = sizeof(info), .flags = 1 };

	REQUIRE_DEV();

	EXPECT_EQ(EOPNOTSUPP, get_info_raw(self->fd, &info));
	info.flags = 1u << 31;
	EXPECT_EQ(EOPNOTSUPP, get_info_raw(self->fd, &info));
}

TEST_F(sdsm, get_info_bad_pointer)
{
	void *page;

	REQUIRE_DEV();

	EXPECT_EQ(EFAULT, get_info_raw(self->fd, NULL));
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	EXPECT_EQ(EFAULT, get_info_raw(self->fd, page));
	munmap(page, 4096);

	/* Readable but not writable: the result cannot be stored. */
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	((struct sdsm_info *)page)->size = sizeof(struct sdsm_info);
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
	EXPECT_EQ(EFAULT, get_info_raw(self->fd, page));
	munmap(page, 4096);
}

TEST_F(sdsm, unknown_ioctl)
{
	struct sdsm_info info = { .size = sizeof(info) };

	REQUIRE_DEV();

	EXPECT_EQ(-1, ioctl(self->fd, _IO(SDSM_TYPE, SDSM_CMD_BASE + 0x7f),
			    &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO(SDSM_TYPE, 0), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO('x', SDSM_CMD_GET_INFO), &info));
	EXPECT_EQ(ENOTTY, errno);
	/* Same number with a size encoded is a different ioctl. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(SDSM_TYPE, SDSM_CMD_GET_INFO,
					    struct sdsm_info), &info));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(sdsm, sysfs_nodes_parse)
{
	unsigned int n = self->info.nr_nodes;
	char path[256], buf[256];
	unsigned long long v;
	struct in_addr a;
	unsigned int i, j;

	REQUIRE_DEV();

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), SYS_SDSM "/nodes/%u/addr", i);
		ASSERT_EQ(0, read_file(path, buf, sizeof(buf)));
		EXPECT_EQ(1, inet_pton(AF_INET, buf, &a)) {
			TH_LOG("%s: '%s'", path, buf);
		}

		snprintf(path, sizeof(path), SYS_SDSM "/nodes/%u/state", i);
		ASSERT_EQ(0, read_file(path, buf, sizeof(buf)));
		if (i == self->info.node_id) {
			EXPECT_STREQ("self", buf);
		} else {
			EXPECT_TRUE(!strcmp(buf, "up") ||
				    !strcmp(buf, "down") ||
				    !strcmp(buf, "connecting")) {
				TH_LOG("%s: '%s'", path, buf);
			}
		}

		for (j = 2; j < sizeof(node_files) / sizeof(node_files[0]);
		     j++) {
			snprintf(path, sizeof(path), SYS_SDSM "/nodes/%u/%s",
				 i, node_files[j]);
			EXPECT_EQ(0, read_u64(path, &v)) {
				TH_LOG("%s does not hold a number", path);
			}
		}
	}
	/* Exactly nr_nodes node directories. */
	snprintf(path, sizeof(path), SYS_SDSM "/nodes/%u", n);
	EXPECT_NE(0, access(path, F_OK));
}

TEST_F(sdsm, sysfs_self_counters_zero)
{
	unsigned long long v;
	char path[256];
	unsigned int j;

	REQUIRE_DEV();

	for (j = 2; j < sizeof(node_files) / sizeof(node_files[0]); j++) {
		snprintf(path, sizeof(path), SYS_SDSM "/nodes/%u/%s",
			 self->info.node_id, node_files[j]);
		ASSERT_EQ(0, read_u64(path, &v));
		EXPECT_EQ(0, v) {
			TH_LOG("%s = %llu: nothing is sent to self", path, v);
		}
	}
}

static void expect_no_write(struct __test_metadata *_metadata,
			    const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		EXPECT_GT(0, write(fd, "1\n", 2)) {
			TH_LOG("%s accepted a write", path);
		}
		close(fd);
	} else {
		EXPECT_TRUE(errno == EACCES || errno == EPERM) {
			TH_LOG("%s: open for write: %s", path,
			       strerror(errno));
		}
	}
}

TEST_F(sdsm, sysfs_read_only)
{
	char path[256];
	unsigned int i, j;

	REQUIRE_DEV();

	expect_no_write(_metadata, SYS_SDSM "/node_id");
	expect_no_write(_metadata, SYS_SDSM "/nr_nodes");
	for (i = 0; i < self->info.nr_nodes; i++) {
		for (j = 0; j < sizeof(node_files) / sizeof(node_files[0]);
		     j++) {
			snprintf(path, sizeof(path), SYS_SDSM "/nodes/%u/%s",
				 i, node_files[j]);
			expect_no_write(_metadata, path);
		}
	}
}

TEST_F(sdsm, params_read_only)
{
	static const char * const params[] = {
		"node_id", "nodes", "port", "heartbeat_ms", "peer_timeout_ms",
	};
	char path[256], buf[512];
	unsigned long long v;
	unsigned int i;

	REQUIRE_DEV();

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		snprintf(path, sizeof(path), "/sys/module/sdsm/parameters/%s",
			 params[i]);
		ASSERT_EQ(0, read_file(path, buf, sizeof(buf))) {
			TH_LOG("%s missing", path);
		}
		expect_no_write(_metadata, path);
	}
	ASSERT_EQ(0, read_u64("/sys/module/sdsm/parameters/node_id", &v));
	EXPECT_EQ(self->info.node_id, v);
}

TEST_F(sdsm, open_many)
{
	int fds[16], i;

	REQUIRE_DEV();

	for (i = 0; i < 16; i++) {
		fds[i] = open("/dev/sdsm", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, close(fds[i]));
}

TEST_HARNESS_MAIN
