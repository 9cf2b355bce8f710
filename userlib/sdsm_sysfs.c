// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm readers of /sys/kernel/sdsm (Documentation/ABI/testing/
 * sysfs-kernel-sdsm): counters, the node table, the fault-latency
 * histogram.  The root is $SDSM_SYSFS_ROOT when set, for tests against a
 * fixture tree.  A file the module does not (yet) export reads as
 * SDSM_STAT_UNKNOWN or "-", never as an error; a file with garbage in it
 * is an error (EINVAL naming the file), and a missing root is ENODEV.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdsm_internal.h"

static const char *const sdsm_stat_names[SDSM_STAT_NR] = {
	[SDSM_STAT_READ_FAULTS_LOCAL]		= "read_faults_local",
	[SDSM_STAT_READ_FAULTS_REMOTE]		= "read_faults_remote",
	[SDSM_STAT_WRITE_FAULTS_LOCAL]		= "write_faults_local",
	[SDSM_STAT_WRITE_FAULTS_REMOTE]		= "write_faults_remote",
	[SDSM_STAT_PAGES_FETCHED]		= "pages_fetched",
	[SDSM_STAT_UPGRADES]			= "upgrades",
	[SDSM_STAT_INVALIDATIONS_SENT]		= "invalidations_sent",
	[SDSM_STAT_INVALIDATIONS_RECEIVED]	= "invalidations_received",
	[SDSM_STAT_BYTES_SENT]			= "bytes_sent",
	[SDSM_STAT_BYTES_RECEIVED]		= "bytes_received",
	[SDSM_STAT_LOCK_WAITS]			= "lock_waits",
	[SDSM_STAT_BARRIER_WAITS]		= "barrier_waits",
};

const char *sdsm_stat_name(enum sdsm_stat stat)
{
	return (unsigned int)stat < SDSM_STAT_NR ? sdsm_stat_names[stat] : NULL;
}

const char *sdsm_sysfs_root(void)
{
	const char *p = getenv("SDSM_SYSFS_ROOT");

	return p && *p ? p : SDSM_SYSFS_PATH;
}

static int sdsm_root_missing(void)
{
	struct stat st;

	if (stat(sdsm_sysfs_root(), &st) == 0)
		return 0;
	sdsm_fail(ENODEV, "%s: sdsm module not loaded", sdsm_sysfs_root());
	return 1;
}

/* Read a whole small file into buf, NUL-terminated; length or -1. */
static ssize_t sdsm_read_file(const char *relpath, char *buf, size_t len)
{
	char path[512];
	ssize_t n, got = 0;
	int fd;

	if (!relpath || !buf || !len)
		return sdsm_fail(EINVAL, "sdsm_sysfs_read: bad arguments");
	if (relpath[0] == '/' || strstr(relpath, ".."))
		return sdsm_fail(EINVAL, "sysfs path '%s' must be relative",
				 relpath);
	if (snprintf(path, sizeof(path), "%s/%s", sdsm_sysfs_root(), relpath) >=
	    (int)sizeof(path))
		return sdsm_fail(ENAMETOOLONG, "sysfs path too long");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT && sdsm_root_missing())
			return -1;
		return sdsm_fail(err, "%s: %s", path, strerror(err));
	}
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			close(fd);
			return sdsm_fail(err, "%s: %s", path, strerror(err));
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

int sdsm_sysfs_read(const char *relpath, char *buf, size_t len)
{
	ssize_t n = sdsm_read_file(relpath, buf, len);

	if (n < 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

static int sdsm_parse_u64(const char *s, uint64_t *value)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (*p)
		return -1;
	*value = v;
	return 0;
}

int sdsm_sysfs_read_u64(const char *relpath, uint64_t *value)
{
	char buf[64];

	if (!value)
		return sdsm_fail(EINVAL, "sdsm_sysfs_read_u64: NULL value");
	if (sdsm_sysfs_read(relpath, buf, sizeof(buf)) < 0)
		return -1;
	if (sdsm_parse_u64(buf, value) < 0)
		return sdsm_fail(EINVAL, "%s/%s: not a number: '%s'",
				 sdsm_sysfs_root(), relpath, buf);
	return 0;
}

/* A number that may be missing: SDSM_STAT_UNKNOWN then; -1 on garbage. */
static int sdsm_read_opt(const char *relpath, int64_t *out)
{
	uint64_t v;

	if (sdsm_sysfs_read_u64(relpath, &v) == 0) {
		*out = v > INT64_MAX ? INT64_MAX : (int64_t)v;
		return 0;
	}
	if (errno == ENOENT) {
		*out = SDSM_STAT_UNKNOWN;
		return 0;
	}
	return -1;
}

int sdsm_stats_read(struct sdsm_stats *stats)
{
	char rel[64];
	int i, found = 0;

	if (!stats)
		return sdsm_fail(EINVAL, "sdsm_stats_read: NULL stats");
	if (sdsm_root_missing())
		return -1;
	for (i = 0; i < SDSM_STAT_NR; i++) {
		snprintf(rel, sizeof(rel), "stats/%s", sdsm_stat_names[i]);
		if (sdsm_read_opt(rel, &stats->value[i]) < 0)
			return -1;
		found += stats->value[i] != SDSM_STAT_UNKNOWN;
	}
	return found;
}

int sdsm_sysfs_node_id(void)
{
	uint64_t v;

	if (sdsm_sysfs_read_u64("node_id", &v) < 0)
		return -1;
	if (v >= SDSM_MAX_NODES)
		return sdsm_fail(ERANGE, "node_id %llu out of range",
				 (unsigned long long)v);
	return (int)v;
}

int sdsm_sysfs_nr_nodes(void)
{
	uint64_t v;

	if (sdsm_sysfs_read_u64("nr_nodes", &v) < 0)
		return -1;
	if (!v || v > SDSM_MAX_NODES)
		return sdsm_fail(ERANGE, "nr_nodes %llu out of range",
				 (unsigned long long)v);
	return (int)v;
}

static int sdsm_node_cmp(const void *a, const void *b)
{
	const struct sdsm_node_info *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int sdsm_read_str_opt(const char *relpath, char *buf, size_t len)
{
	if (sdsm_sysfs_read(relpath, buf, len) >= 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	snprintf(buf, len, "-");
	return 0;
}

static int sdsm_read_node(int id, struct sdsm_node_info *n)
{
	static const struct {
		const char *name;
		size_t offset;
	} nums[] = {
		{ "rtt_us", offsetof(struct sdsm_node_info, rtt_us) },
		{ "tx_msgs", offsetof(struct sdsm_node_info, tx_msgs) },
		{ "rx_msgs", offsetof(struct sdsm_node_info, rx_msgs) },
		{ "tx_bytes", offsetof(struct sdsm_node_info, tx_bytes) },
		{ "rx_bytes", offsetof(struct sdsm_node_info, rx_bytes) },
		{ "homed_pages", offsetof(struct sdsm_node_info, homed_pages) },
		{ "free_kb", offsetof(struct sdsm_node_info, free_kb) },
	};
	char rel[64];
	size_t i;

	memset(n, 0, sizeof(*n));
	n->id = id;
	snprintf(rel, sizeof(rel), "nodes/%d/addr", id);
	if (sdsm_read_str_opt(rel, n->addr, sizeof(n->addr)) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "nodes/%d/state", id);
	if (sdsm_read_str_opt(rel, n->state, sizeof(n->state)) < 0)
		return -1;
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		snprintf(rel, sizeof(rel), "nodes/%d/%s", id, nums[i].name);
		if (sdsm_read_opt(rel, (int64_t *)((char *)n + nums[i].offset)) < 0)
			return -1;
	}
	return 0;
}

int sdsm_node_table(struct sdsm_node_info *nodes, int max)
{
	struct sdsm_node_info all[SDSM_MAX_NODES];
	char path[512];
	struct dirent *de;
	int count = 0, i;
	DIR *dir;

	if (max < 0 || (max && !nodes))
		return sdsm_fail(EINVAL, "sdsm_node_table: bad arguments");
	if (sdsm_root_missing())
		return -1;
	snprintf(path, sizeof(path), "%s/nodes", sdsm_sysfs_root());
	dir = opendir(path);
	if (!dir)
		return sdsm_fail(errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(dir))) {
		uint64_t id;

		if (de->d_name[0] == '.')
			continue;
		if (sdsm_parse_u64(de->d_name, &id) < 0 || id >= SDSM_MAX_NODES) {
			sdsm_fail(EINVAL, "%s/%s: not a node id", path,
				  de->d_name);
			closedir(dir);
			return -1;
		}
		if (count == SDSM_MAX_NODES)
			break;
		if (sdsm_read_node((int)id, &all[count]) < 0) {
			closedir(dir);
			return -1;
		}
		count++;
	}
	closedir(dir);
	qsort(all, count, sizeof(all[0]), sdsm_node_cmp);
	for (i = 0; i < count && i < max; i++)
		nodes[i] = all[i];
	return count;
}

int sdsm_latency_hist(struct sdsm_hist_bucket *buckets, int max)
{
	char buf[8192], *line, *save = NULL;
	int count = 0;

	if (max < 0 || (max && !buckets))
		return sdsm_fail(EINVAL, "sdsm_latency_hist: bad arguments");
	if (sdsm_read_file("stats/fault_latency_hist", buf, sizeof(buf)) < 0)
		return -1;
	/*
	 * "<lo>-<hi> <count>" for [lo, hi); the last bucket is open,
	 * "<lo>- <count>", and is returned with hi_us = UINT64_MAX.
	 */
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long lo, hi, n;
		char tail;

		if (sscanf(line, "%llu-%llu %llu %c", &lo, &hi, &n, &tail) == 3 &&
		    hi > lo) {
			/* a closed bucket */
		} else if (sscanf(line, "%llu- %llu %c", &lo, &n, &tail) == 2 &&
			   strchr(line, ' ') == strchr(line, '-') + 1 &&
			   !strtok_r(NULL, "\n", &save)) {
			hi = UINT64_MAX;	/* the open last bucket */
		} else {
			return sdsm_fail(EINVAL,
					 "%s/stats/fault_latency_hist: bad line '%s'",
					 sdsm_sysfs_root(), line);
		}
		if (count < max) {
			buckets[count].lo_us = lo;
			buckets[count].hi_us = hi;
			buckets[count].count = n;
		}
		count++;
	}
	return count;
}
