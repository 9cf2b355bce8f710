/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdsm - user-space API of sdsm, software distributed shared memory.
 *
 * The numactl/libnuma of the cluster: allocate memory whose pages have
 * their home on chosen nodes, ask where a page lives, take cluster-wide
 * locks and barriers, and read the statistics the module exports in sysfs.
 * The ABI types (struct sdsm_policy, enum sdsm_policy_mode, ...) come from
 * <linux/sdsm.h>; this header only adds functions.  See sdsm(3) and the
 * per-group pages sdsm_alloc(3), sdsm_region_create(3), sdsm_set_policy(3),
 * sdsm_lock(3), sdsm_futex_wait(3), sdsm_cond_wait(3), sdsm_stats_read(3),
 * sdsm_parse_nodemask(3).
 *
 * Every function that returns int or a pointer reports failure as -1 or
 * NULL with errno set; sdsm_strerror() explains sdsm's errno values and
 * sdsm_last_error() gives the message of this thread's last failure.
 */
#ifndef SDSM_H
#define SDSM_H

#include <stddef.h>
#include <stdint.h>
#include <linux/sdsm.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SDSM_PAGE_SIZE		4096UL

/* Paths, overridable for tests (see sdsm(3), ENVIRONMENT). */
#define SDSM_DEVICE_PATH	"/dev/sdsm"
#define SDSM_SYSFS_PATH		"/sys/kernel/sdsm"

/* ---- availability and cluster shape: sdsm_available(3) ---- */

int sdsm_available(void);
int sdsm_num_nodes(void);
int sdsm_node_id(void);
int sdsm_features(uint64_t *features);
int sdsm_has_feature(uint64_t feature);
const char *sdsm_feature_name(uint64_t feature);
int sdsm_fd(void);
const char *sdsm_strerror(int errnum);
const char *sdsm_last_error(void);

/* ---- allocation: sdsm_alloc(3) ---- */

void *sdsm_alloc(size_t size);
void *sdsm_alloc_interleaved(size_t size);
void *sdsm_alloc_interleaved_subset(size_t size, uint64_t nodemask);
void *sdsm_alloc_onnode(size_t size, int node);
void *sdsm_alloc_local(size_t size);
void *sdsm_alloc_policy(size_t size, const struct sdsm_policy *policy);
int sdsm_free(void *addr, size_t size);

/* ---- named regions: sdsm_region_create(3) ---- */

void *sdsm_region_create(const char *name, size_t size,
			 const struct sdsm_policy *policy, unsigned int flags);
void *sdsm_region_create_mode(const char *name, size_t size,
			      const struct sdsm_policy *policy,
			      unsigned int flags, unsigned int mode);
void *sdsm_region_create_managed(const char *name, size_t size,
				 const struct sdsm_policy *policy,
				 unsigned int flags, unsigned int mode,
				 int manager);
void *sdsm_region_open(const char *name, size_t *size);
int sdsm_region_info(const char *name, struct sdsm_region_info *info);
int sdsm_region_info_id(uint32_t region_id, struct sdsm_region_info *info);
int sdsm_region_unmap(void *addr, size_t size);
int sdsm_region_destroy(const char *name);

/* ---- placement: sdsm_set_policy(3) ---- */

int sdsm_get_policy(struct sdsm_policy *policy);
int sdsm_set_policy(void *addr, size_t len, const struct sdsm_policy *policy);
int sdsm_home_node(const void *addr);
int sdsm_query_homes(size_t count, void *const addrs[], int homes[]);

/* ---- node lists and policy strings: sdsm_parse_nodemask(3) ---- */

int sdsm_parse_nodemask(const char *str, unsigned int nr_nodes,
			uint64_t *mask);
int sdsm_format_nodemask(uint64_t mask, char *buf, size_t len);
int sdsm_parse_policy(const char *str, unsigned int nr_nodes,
		      struct sdsm_policy *policy);
int sdsm_format_policy(const struct sdsm_policy *policy, char *buf,
		       size_t len);

/* ---- cluster locks and barriers: sdsm_lock(3) ---- */

int sdsm_lock(uint64_t lock_id);
int sdsm_lock_timeout(uint64_t lock_id, unsigned int timeout_ms);
int sdsm_trylock(uint64_t lock_id);
int sdsm_unlock(uint64_t lock_id);
int sdsm_barrier(uint64_t barrier_id, unsigned int count, uint64_t nodemask,
		 unsigned int timeout_ms);

/* ---- futex(2) on coherent memory: sdsm_futex_wait(3) ---- */

int sdsm_futex_wait(const uint32_t *addr, uint32_t val, int64_t timeout_ns);
int sdsm_futex_wake(const uint32_t *addr, unsigned int n);

/* ---- condition variables on a cluster lock: sdsm_cond_wait(3) ---- */

/* In memory mapped from /dev/sdsm; all zero (SDSM_COND_INIT) is ready. */
struct sdsm_cond {
	uint32_t seq;		/* rises with every signal and broadcast */
	uint32_t waiters;	/* threads between their wait and wake-up */
};

#define SDSM_COND_INIT	{ 0, 0 }

int sdsm_cond_wait(struct sdsm_cond *cond, uint64_t lock_id);
int sdsm_cond_timedwait(struct sdsm_cond *cond, uint64_t lock_id,
			unsigned int timeout_ms);
int sdsm_cond_signal(struct sdsm_cond *cond);
int sdsm_cond_broadcast(struct sdsm_cond *cond);

/* ---- statistics and node table from sysfs: sdsm_stats_read(3) ---- */

/* Indices into struct sdsm_stats; names as in /sys/kernel/sdsm/stats/. */
enum sdsm_stat {
	SDSM_STAT_READ_FAULTS_LOCAL,
	SDSM_STAT_READ_FAULTS_REMOTE,
	SDSM_STAT_WRITE_FAULTS_LOCAL,
	SDSM_STAT_WRITE_FAULTS_REMOTE,
	SDSM_STAT_PAGES_FETCHED,
	SDSM_STAT_UPGRADES,
	SDSM_STAT_INVALIDATIONS_SENT,
	SDSM_STAT_INVALIDATIONS_RECEIVED,
	SDSM_STAT_BYTES_SENT,
	SDSM_STAT_BYTES_RECEIVED,
	SDSM_STAT_LOCK_WAITS,
	SDSM_STAT_BARRIER_WAITS,
	SDSM_STAT_NR
};

/* Values the module does not (yet) export are SDSM_STAT_UNKNOWN. */
#define SDSM_STAT_UNKNOWN	INT64_MIN

struct sdsm_stats {
	int64_t value[SDSM_STAT_NR];
};

#define SDSM_ADDR_MAX		64
#define SDSM_STATE_MAX		16

/* One row of /sys/kernel/sdsm/nodes/; unknown numbers are SDSM_STAT_UNKNOWN. */
struct sdsm_node_info {
	int id;
	char addr[SDSM_ADDR_MAX];
	char state[SDSM_STATE_MAX];
	int64_t rtt_us;
	int64_t tx_msgs;
	int64_t rx_msgs;
	int64_t tx_bytes;
	int64_t rx_bytes;
	int64_t homed_pages;
	int64_t free_kb;
};

struct sdsm_hist_bucket {
	uint64_t lo_us;
	uint64_t hi_us;
	uint64_t count;
};

const char *sdsm_sysfs_root(void);
int sdsm_sysfs_read(const char *relpath, char *buf, size_t len);
int sdsm_sysfs_read_u64(const char *relpath, uint64_t *value);
const char *sdsm_stat_name(enum sdsm_stat stat);
int sdsm_stats_read(struct sdsm_stats *stats);
int sdsm_node_table(struct sdsm_node_info *nodes, int max);
int sdsm_latency_hist(struct sdsm_hist_bucket *buckets, int max);
int sdsm_sysfs_node_id(void);
int sdsm_sysfs_nr_nodes(void);

#ifdef __cplusplus
}
#endif

#endif /* SDSM_H */
