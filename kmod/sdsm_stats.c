// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm statistics: per-CPU counters summed at sysfs read time, as rtrs does.
 *
 *   /sys/kernel/sdsm/stats/<counter>           one decimal number
 *   /sys/kernel/sdsm/stats/fault_latency_hist  "<lo>-<hi> <count>" lines, us
 *   /sys/kernel/sdsm/stats/rc_lock_notices     one decimal number, a gauge
 *                                              (sdsm_sync.c keeps it)
 *
 * The per-CPU area is allocated first at module init and freed last at exit
 * (sdsm_stats_alloc/free), so it outlives the sysfs files and every path that
 * counts; kernfs drains running reads on removal, so no lock is needed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "sdsm_stats.h"
#include "sdsm_sync.h"

struct sdsm_stats_cpu __percpu *sdsm_stats;

static const char * const sdsm_stat_names[SDSM_NR_STATS] = {
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
	[SDSM_STAT_FAULT_ERRORS]		= "fault_errors",
	[SDSM_STAT_LOCK_ACQUIRES]		= "lock_acquires",
	[SDSM_STAT_LOCK_WAITS]			= "lock_waits",
	[SDSM_STAT_BARRIER_WAITS]		= "barrier_waits",
	[SDSM_STAT_MANAGER_LOCK_QUEUED]		= "manager_lock_queued",
	[SDSM_STAT_MANAGER_BARRIER_ARRIVALS]	= "manager_barrier_arrivals",
	[SDSM_STAT_MANAGER_FUTEX_QUEUED]	= "manager_futex_queued",
	[SDSM_STAT_PREFETCHES]			= "prefetches",
	[SDSM_STAT_PREFETCH_HITS]		= "prefetch_hits",
	[SDSM_STAT_FAULT_AROUND_PAGES]		= "fault_around_pages",
	[SDSM_STAT_OWN_GRANTS]			= "own_grants",
	[SDSM_STAT_PAGES_LOST]			= "pages_lost",
	[SDSM_STAT_PAGES_HANDED_BACK]		= "pages_handed_back",
	[SDSM_STAT_TRAINS]			= "trains",
	[SDSM_STAT_TRAIN_MSGS]			= "train_msgs",
	[SDSM_STAT_TWINS]			= "twins",
	[SDSM_STAT_DIFFS_SENT]			= "diffs_sent",
	[SDSM_STAT_DIFF_BYTES_SENT]		= "diff_bytes_sent",
	[SDSM_STAT_RC_INVALIDATIONS]		= "rc_invalidations",
	[SDSM_STAT_RC_EXCLUSIVE_SKIPS]		= "rc_exclusive_skips",
	[SDSM_STAT_RC_GRANT_NOTICES]		= "rc_grant_notices",
	[SDSM_STAT_RC_RELEASE_NOTICES]		= "rc_release_notices",
	[SDSM_STAT_COST_WAKEUPS]		= "cost_wakeups",
	[SDSM_STAT_COST_COPIES]			= "cost_copies",
	[SDSM_STAT_COST_ALLOCS]			= "cost_allocs",
	[SDSM_STAT_COST_MSGS]			= "cost_msgs",
	[SDSM_STAT_COST_LOCAL_MSGS]		= "cost_local_msgs",
	[SDSM_STAT_SPARE_REFILLS]		= "spare_refills",
	[SDSM_STAT_SPARE_CHUNKS]		= "spare_chunks",
};

static struct kobject *sdsm_stats_kobj;

void sdsm_stat_fault_latency(u64 ns)
{
	u64 us = div_u64(ns, NSEC_PER_USEC);
	unsigned int b = us ? ilog2(us) + 1 : 0;

	this_cpu_inc(sdsm_stats->lat[min_t(unsigned int, b,
					   SDSM_LAT_BUCKETS - 1)]);
}

u64 sdsm_stat_read(enum sdsm_stat s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sdsm_stats, cpu)->count[s];
	return sum;
}

/* The attribute's index in sdsm_stat_attrs[] is its enum sdsm_stat. */
struct sdsm_stat_attr {
	struct kobj_attribute kattr;
	enum sdsm_stat stat;
};

static ssize_t sdsm_stat_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	struct sdsm_stat_attr *sa = container_of(attr, struct sdsm_stat_attr,
						 kattr);

	return sysfs_emit(buf, "%llu\n", sdsm_stat_read(sa->stat));
}

static struct sdsm_stat_attr sdsm_stat_attrs[SDSM_NR_STATS];
static struct attribute *sdsm_stats_attr_ptrs[SDSM_NR_STATS + 3];

static ssize_t fault_latency_hist_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	u64 lat[SDSM_LAT_BUCKETS] = { };
	int cpu, b, len = 0;

	for_each_possible_cpu(cpu)
		for (b = 0; b < SDSM_LAT_BUCKETS; b++)
			lat[b] += per_cpu_ptr(sdsm_stats, cpu)->lat[b];
	for (b = 0; b < SDSM_LAT_BUCKETS; b++) {
		u64 lo = b ? 1ULL << (b - 1) : 0;

		if (b == SDSM_LAT_BUCKETS - 1)
			len += sysfs_emit_at(buf, len, "%llu- %llu\n", lo,
					     lat[b]);
		else
			len += sysfs_emit_at(buf, len, "%llu-%llu %llu\n", lo,
					     1ULL << b, lat[b]);
	}
	return len;
}

static struct kobj_attribute sdsm_attr_hist = __ATTR_RO(fault_latency_hist);

/* Not a counter: what lock tables keep now, going down as regions go. */
static ssize_t rc_lock_notices_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", sdsm_sync_rc_lock_notices());
}

static struct kobj_attribute sdsm_attr_rc_lock_notices =
	__ATTR_RO(rc_lock_notices);

static const struct attribute_group sdsm_stats_group = {
	.attrs = sdsm_stats_attr_ptrs,
};

int sdsm_stats_alloc(void)
{
	sdsm_stats = alloc_percpu(struct sdsm_stats_cpu);
	return sdsm_stats ? 0 : -ENOMEM;
}

void sdsm_stats_free(void)
{
	free_percpu(sdsm_stats);
	sdsm_stats = NULL;
}

int sdsm_stats_init(struct kobject *parent)
{
	int i, ret;

	for (i = 0; i < SDSM_NR_STATS; i++) {
		struct sdsm_stat_attr *sa = &sdsm_stat_attrs[i];

		sysfs_attr_init(&sa->kattr.attr);
		sa->kattr.attr.name = sdsm_stat_names[i];
		sa->kattr.attr.mode = 0444;
		sa->kattr.show = sdsm_stat_show;
		sa->stat = i;
		sdsm_stats_attr_ptrs[i] = &sa->kattr.attr;
	}
	sdsm_stats_attr_ptrs[SDSM_NR_STATS] = &sdsm_attr_hist.attr;
	sdsm_stats_attr_ptrs[SDSM_NR_STATS + 1] =
		&sdsm_attr_rc_lock_notices.attr;
	sdsm_stats_attr_ptrs[SDSM_NR_STATS + 2] = NULL;

	sdsm_stats_kobj = kobject_create_and_add("stats", parent);
	if (!sdsm_stats_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(sdsm_stats_kobj, &sdsm_stats_group);
	if (ret)
		goto out_put_kobj;
	return 0;

out_put_kobj:
	kobject_put(sdsm_stats_kobj);
	sdsm_stats_kobj = NULL;
	return ret;
}

void sdsm_stats_exit(void)
{
	if (sdsm_stats_kobj) {
		sysfs_remove_group(sdsm_stats_kobj, &sdsm_stats_group);
		kobject_put(sdsm_stats_kobj);
		sdsm_stats_kobj = NULL;
	}
}
