/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm node-wide statistics: per-CPU counters of the coherence, lock and
 * barrier layers, and a log2 histogram of page-fault latency.  Updating is a
 * this_cpu_add() from any context; sysfs sums every possible CPU on read
 * (/sys/kernel/sdsm/stats/, Documentation/ABI/testing/sysfs-kernel-sdsm).
 * Counters only grow; readers take differences.  stats/rc_lock_notices,
 * a gauge sdsm_sync.c keeps, is not one of them.
 */
#ifndef SDSM_STATS_H
#define SDSM_STATS_H

#include <linux/kobject.h>
#include <linux/percpu.h>
#include <linux/types.h>

/* Keep in step with sdsm_stat_names[] in sdsm_stats.c. */
enum sdsm_stat {
	SDSM_STAT_READ_FAULTS_LOCAL,	/* read fault served on this node */
	SDSM_STAT_READ_FAULTS_REMOTE,	/* read fault that sent a request */
	SDSM_STAT_WRITE_FAULTS_LOCAL,
	SDSM_STAT_WRITE_FAULTS_REMOTE,
	SDSM_STAT_PAGES_FETCHED,	/* page payloads installed here */
	SDSM_STAT_UPGRADES,		/* read copy made writable in place */
	SDSM_STAT_INVALIDATIONS_SENT,
	SDSM_STAT_INVALIDATIONS_RECEIVED,
	SDSM_STAT_BYTES_SENT,		/* page payload bytes sent */
	SDSM_STAT_BYTES_RECEIVED,	/* page payload bytes received */
	SDSM_STAT_FAULT_ERRORS,		/* faults answered with SIGBUS */
	SDSM_STAT_LOCK_ACQUIRES,
	SDSM_STAT_LOCK_WAITS,		/* acquires that had to wait */
	SDSM_STAT_BARRIER_WAITS,
	/* Counted by this node's managers, for requests from any node: */
	SDSM_STAT_MANAGER_LOCK_QUEUED,	/* ACQUIREs queued behind a holder */
	SDSM_STAT_MANAGER_BARRIER_ARRIVALS, /* arrivals recorded */
	SDSM_STAT_MANAGER_FUTEX_QUEUED,	/* futex WAITs queued */
	SDSM_STAT_PREFETCHES,		/* READs sent ahead of a fault */
	SDSM_STAT_PREFETCH_HITS,	/* faults that found one's copy */
	SDSM_STAT_FAULT_AROUND_PAGES,	/* mapped by a neighbour's fault */
	SDSM_STAT_OWN_GRANTS,		/* faults the home's directory granted */
	SDSM_STAT_PAGES_LOST,		/* homed here, only copy on a dead node */
	SDSM_STAT_PAGES_HANDED_BACK,	/* homed here, back from a leaving node */
	SDSM_STAT_TRAINS,		/* sends that carried 2 or more messages */
	SDSM_STAT_TRAIN_MSGS,		/* the messages those carried */
	/* Release-consistent regions: */
	SDSM_STAT_TWINS,		/* intervals' first writes to a page */
	SDSM_STAT_DIFFS_SENT,		/* diffs of written pages to homes */
	SDSM_STAT_DIFF_BYTES_SENT,	/* their encoded bytes */
	SDSM_STAT_RC_INVALIDATIONS,	/* copies dropped by write notices */
	SDSM_STAT_RC_EXCLUSIVE_SKIPS,	/* home pages a release left alone */
	SDSM_STAT_RC_GRANT_NOTICES,	/* notices a manager granted */
	SDSM_STAT_RC_RELEASE_NOTICES,	/* notices this node's releases published */
	/*
	 * What faults cost, counted at the call sites on every node
	 * (Documentation/performance.rst, "What a fault costs"):
	 */
	SDSM_STAT_COST_WAKEUPS,		/* sleeps of a faulting thread */
	SDSM_STAT_COST_COPIES,		/* CPU copies of a page payload */
	SDSM_STAT_COST_ALLOCS,		/* allocations on the coherence path */
	SDSM_STAT_COST_MSGS,		/* coherence messages to other nodes */
	SDSM_STAT_COST_LOCAL_MSGS,	/* coherence messages to this node */
	SDSM_STAT_SPARE_REFILLS,	/* pages the spare pool allocated */
	SDSM_STAT_SPARE_CHUNKS,		/* regions' spare chunks allocated */
	SDSM_NR_STATS
};

/* Bucket 0: under 1 us; bucket b: [2^(b-1), 2^b) us; the last is open. */
#define SDSM_LAT_BUCKETS	24

struct sdsm_stats_cpu {
	u64 count[SDSM_NR_STATS];
	u64 lat[SDSM_LAT_BUCKETS];
};

extern struct sdsm_stats_cpu __percpu *sdsm_stats;

static inline void sdsm_stat_add(enum sdsm_stat s, u64 v)
{
	this_cpu_add(sdsm_stats->count[s], v);
}

static inline void sdsm_stat_inc(enum sdsm_stat s)
{
	sdsm_stat_add(s, 1);
}

/* One unit of a cost, SDSM_STAT_COST_*: a per-CPU add, any context. */
static inline void sdsm_cost(enum sdsm_stat s)
{
	sdsm_stat_inc(s);
}

void sdsm_stat_fault_latency(u64 ns);
u64 sdsm_stat_read(enum sdsm_stat s);

/*
 * The counters live from sdsm_stats_alloc(), first thing at module init, to
 * sdsm_stats_free(), last thing at exit, so every path may count without a
 * check.  sdsm_stats_init()/exit() add and remove only the sysfs files.
 */
int sdsm_stats_alloc(void);
void sdsm_stats_free(void);
int sdsm_stats_init(struct kobject *parent);
void sdsm_stats_exit(void);

#endif /* SDSM_STATS_H */
