// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm cluster-wide locks, barriers and futexes (SDSM_IOC_LOCK,
 * SDSM_IOC_BARRIER, SDSM_IOC_FUTEX).
 *
 * Every lock and barrier has a manager node that keeps its state; the other
 * nodes talk to it with the messages of the sync section of sdsm_wire.h.
 * A node plays two roles:
 *
 *  requester  an ioctl puts a struct sdsm_sync_req (on its stack) in
 *             sdsm_sync.reqs, sends it to the manager (or calls the manager
 *             code directly when the manager is this node) and sleeps until
 *             the reply, a signal, its timeout, or a DOWN event.
 *  manager    struct sdsm_mgr_lock: holder and a FIFO of waiters;
 *             struct sdsm_mgr_barrier: the arrivals of the current
 *             generation.  Both exist only while they hold state, so a
 *             barrier is reusable as soon as a generation completes.
 *
 * The manager of a lock is hash_64(id) % nr_nodes; that of a barrier is one
 * node of its nodemask, picked by hash_64(id).  The manager knows a lock's
 * holder as (node, request id); which thread holds it, through which open
 * file, is known only on that node (struct sdsm_sync_held), which answers
 * EPERM and EDEADLK and releases a file's locks when it is closed.  The
 * owner is the thread: another thread of the same process (the same file)
 * queues at the manager like a thread of another node.
 *
 * Giving up (signal, timeout, a barrier node down): the requester asks the
 * manager to cancel and waits for the answer, which is bounded: the manager
 * answers at once, or goes DOWN.  The answer decides: withdrawn (the call
 * fails with the reason), or the grant / generation release was sent first
 * (per-peer FIFO: it arrived before the answer) and the call succeeds after
 * all.  So a waiter that leaves never holds a lock nobody releases and
 * never stays counted in a barrier generation.  A lock grant that completes
 * no request (the request failed meanwhile) is released at once.
 *
 * Failures: a DOWN event for node X fails every request managed by X with
 * EHOSTDOWN, marks the locks held through X as lost (RELEASE answers
 * EHOSTDOWN), fails the barrier waits whose nodemask has X, and, in the
 * manager role, releases every lock X held, drops X's waiters and fails
 * every barrier generation whose nodemask has X.  A manager serves a node
 * only while it sees it up.  A sync message that cannot be posted fails
 * the connection (the transport does), so both sides resynchronise through
 * DOWN; one that waits for a slow peer's send credit stays queued, and the
 * heartbeat decides whether that peer is gone.
 *
 * Sending: messages are queued under sdsm_sync.lock in the peer's send
 * queue of the messaging layer (sdsm_queue()), the one coherence and
 * regions use: FIFO per peer, posted at once when nothing is queued before
 * them, else by the queue's work item; nothing waits for the network with
 * the lock held.  A message for a peer that is not up (yet) waits for the
 * peer's UP event; its DOWN event drops it.
 *
 * Memory ordering: with the default, sequentially consistent (MSI) memory
 * nothing is needed at acquire, release or barrier.  Release-consistent
 * regions (Documentation/protocol.rst, "Release consistency") need it:
 * a lock release, barrier arrival or futex wake first makes this node's
 * writes visible at their homes (sdsm_rc_release(), without the lock),
 * then sends its write notices (sdsm_rc_knowledge()) to the manager ahead
 * of the RELEASE, ARRIVE or FUTEX_WAKE: those that rose since this node's
 * last publish to that object (struct sdsm_rc_since).  The manager keeps,
 * per lock, barrier and futex, the largest version of every page it was
 * told of (struct sdsm_rc_table) and sends a node what rose since its
 * last one ahead of its grant, departure, or futex QUEUED or WOKEN
 * answer; the node applies them (sdsm_rc_notice()) as they arrive, so
 * before the answer (per-peer FIFO).  A manager on this node merges and
 * applies directly.  Tables live as long as they hold notices: a lock
 * that nobody holds still knows what was released to it, a barrier what
 * its past generations brought (a node a generation with a count
 * departed without gets it at its next departure).  When a release
 * region leaves this node's region table, its notices leave every table
 * (sdsm_sync_rc_forget(), called after sdsm_regions_mutex is dropped),
 * and a table left empty is freed: lock and barrier ids come and go with
 * programs, region ids are used again.  A notice that arrives after
 * that, for a region destroyed here lately, is not merged
 * (sdsm_region_gone()).
 *
 * Futexes (Documentation/protocol.rst, "Distributed futex"): the key of a
 * futex is the mmap offset of its word, the same on every node; its
 * manager is the home of the word's page, so it dies only with the data.
 * The manager keeps, per key, a FIFO of waiters (struct sdsm_mgr_futex).
 * A WAIT reads the word (EAGAIN at once if it differs), queues itself at
 * the manager and waits for the manager's QUEUED answer, then reads the
 * word again (changed: EAGAIN) and sleeps until the manager's WOKEN answer,
 * its timeout, a signal or the manager's DOWN.  Giving up is a CANCEL as
 * for locks: CANCELLED fails the call, STALE means the WOKEN answer went
 * out first (and completed the call: a consumed wake-up is never lost).
 * A WAKE is a request the manager answers with the number of waiters it
 * woke.  No wake-up is lost: the waker's store is visible on every node
 * before its WAKE leaves (MSI grants a write only after every sharer
 * acknowledged the invalidation), and the manager serializes queueing and
 * waking, so either the WAKE finds the waiter queued or the waiter's
 * second read comes after the store.  A manager keeps at most
 * SDSM_FUTEX_MAX_WAITERS waiters of each node, and drops the waiters of a
 * node that goes down.
 *
 * With release regions a WAKE is also a release and a wait an acquire:
 * the waker publishes to the futex as to a lock (what rose since its
 * last publish to that futex), and the manager's QUEUED and WOKEN
 * answers carry the futex table's grant.  A word in release memory then
 * loses no wake-up either: the waker's store reached the home before its
 * notices left, and a waiter queued after them invalidates its old copy
 * of the word before its second read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/highmem.h>
#include <linux/sdsm.h>

#include "sdsm.h"
#include "sdsm_mem.h"
#include "sdsm_stats.h"
#include "sdsm_sync.h"

#define SDSM_SYNC_HASH_BITS	7

/**
 * struct sdsm_sync_req - one ioctl waiting for a manager
 * @hnode: in sdsm_sync.reqs by @id
 * @id: unique on this node for the module's life, never 0
 * @key: the lock or barrier id, or the futex key
 * @nodemask: barrier: the resolved nodemask
 * @count: barrier: the resolved count; futex WAKE: most waiters to wake
 * @manager: node id of the manager
 * @barrier: a barrier arrival (else a lock ACQUIRE or TRY, or a futex call)
 * @futex: a futex WAIT or WAKE
 * @done: @status is final; set once, under the lock
 * @waited: lock: granted after queueing at the manager
 * @serial: barrier: this arrival completed its generation
 * @queued: futex WAIT: the manager answered that the waiter is queued
 * @status: 0 or -errno
 * @abort: barrier: -EHOSTDOWN once a node of @nodemask went down
 * @cancel_err: why this node gave up; the result if the manager withdraws
 * @bitset: futex: the WAIT's or WAKE's bitset
 * @woken: futex WAKE: the number of waiters the manager woke
 */
struct sdsm_sync_req {
	struct hlist_node hnode;
	u64 id;
	u64 key;
	u64 nodemask;
	u32 count;
	unsigned int manager;
	bool barrier;
	bool futex;
	bool done;
	bool waited;
	bool serial;
	bool queued;
	int status;
	int abort;
	int cancel_err;
	u32 bitset;
	u32 woken;
};

/* A lock held by a thread through an open file of this node. */
struct sdsm_sync_held {
	struct hlist_node hnode;	/* in sdsm_sync.held by @lock_id */
	u64 lock_id;
	u64 req_id;			/* of the grant; names it to the manager */
	struct file *file;
	struct pid *owner;		/* the thread that took it (a reference) */
	unsigned int manager;
	bool lost;			/* the manager went down meanwhile */
};

/* A queued lock request, barrier arrival or futex waiter at its manager. */
struct sdsm_mgr_waiter {
	struct list_head node;
	unsigned int node_id;
	u64 req_id;
	u32 bitset;			/* futex waiter only */
};

/* A lock this node manages; exists while held or waited for. */
struct sdsm_mgr_lock {
	struct hlist_node hnode;	/* in sdsm_sync.locks by @id */
	u64 id;
	bool held;
	unsigned int holder_node;
	u64 holder_req;
	struct list_head waiters;	/* FIFO of struct sdsm_mgr_waiter */
};

/* The current generation of a barrier this node manages. */
struct sdsm_mgr_barrier {
	struct hlist_node hnode;	/* in sdsm_sync.barriers by @id */
	u64 id;
	u64 nodemask;
	u32 count;
	u32 arrived;
	struct list_head arrivals;	/* struct sdsm_mgr_waiter */
};

/* A futex this node manages; exists while it has waiters. */
struct sdsm_mgr_futex {
	struct hlist_node hnode;	/* in sdsm_sync.futexes by @key */
	u64 key;
	struct list_head waiters;	/* FIFO of struct sdsm_mgr_waiter */
};

/*
 * Write notices a manager keeps for a lock, a barrier or a futex, while
 * it has any: @notices maps a page (key of sdsm_rc_knowledge()) to
 * sdsm_rc_entry(the largest version released, @clock when it rose).  A
 * lock's grant, a barrier's departure and a futex's QUEUED or WOKEN
 * carry only the entries stamped after @sent of the node
 * (Documentation/protocol.rst, "Publishing").  A barrier's table lives
 * across its generations.  The notices of a region go when it leaves
 * this node's table (sdsm_sync_rc_forget()), and a table with them once
 * empty.
 */
struct sdsm_rc_table {
	struct hlist_node hnode;	/* in sdsm_sync.rc_tables by @id */
	u64 id;				/* lock id, barrier id, futex key */
	u8 kind;			/* SDSM_WIRE_NOTICES_LOCK etc. */
	struct xarray notices;
	unsigned long nr;		/* entries of @notices */
	u32 clock;			/* batches of notices merged */
	u32 sent[SDSM_MAX_NODES];	/* @clock at each node's last grant */
};

/*
 * What this node published to a lock, a barrier or a futex: per release
 * region, the region's clock at its last publish sent to the object's
 * manager (struct sdsm_rc_publish).  The manager keeps what it was told for as
 * long as the object's table lives, so the next release to the object
 * publishes only the notices stamped after that.  Dropped when the
 * manager goes down (what it was told may be lost with it), with a
 * region's entries when the region goes, and, being only a saving, any
 * one of them when SDSM_RC_SINCE_MAX exist: without it a release
 * publishes everything.
 */
struct sdsm_rc_since {
	struct hlist_node hnode;	/* in sdsm_sync.rc_since by @id */
	u64 id;				/* lock, barrier id; futex key */
	u8 kind;			/* SDSM_WIRE_NOTICES_LOCK etc. */
	unsigned int manager;		/* the node told */
	struct xarray clocks;		/* region id -> xa_mk_value(clock) */
};

#define SDSM_RC_SINCE_MAX	4096

/* This layer's view of one peer. */
struct sdsm_sync_peer {
	bool up;			/* between its UP and DOWN events */
};

/*
 * Locks: @lock (a mutex, process context only) protects everything here
 * but @wait and @objects; nothing sleeps with it held but to allocate.
 * Handlers, the peer notifier and the ioctls take it.
 * Waiters sleep on @wait without it and re-check under it.
 * It is never nested with sdsm_regions_mutex (sdsm_region.c), either
 * way: under it only page mutexes and the region xarray's lock are taken
 * (sdsm_rc_notice(), sdsm_region_gone()), and a region's removal calls
 * sdsm_sync_rc_forget() after dropping sdsm_regions_mutex.
 */
static struct {
	struct mutex lock;		/* see Locks above */
	bool running;
	u64 next_req;
	DECLARE_HASHTABLE(reqs, SDSM_SYNC_HASH_BITS);
	DECLARE_HASHTABLE(held, SDSM_SYNC_HASH_BITS);
	DECLARE_HASHTABLE(locks, SDSM_SYNC_HASH_BITS);
	DECLARE_HASHTABLE(barriers, SDSM_SYNC_HASH_BITS);
	DECLARE_HASHTABLE(futexes, SDSM_SYNC_HASH_BITS);
	DECLARE_HASHTABLE(rc_tables, SDSM_SYNC_HASH_BITS);
	DECLARE_HASHTABLE(rc_since, SDSM_SYNC_HASH_BITS);
	unsigned int nr_rc_since;
	/* futex waiters of each node queued here, at most MAX_WAITERS */
	u32 futex_waiters[SDSM_MAX_NODES];
	struct sdsm_sync_peer peers[SDSM_MAX_NODES];
	wait_queue_head_t wait;
	atomic_t objects;		/* allocations not yet freed */
	/* notices in all tables; read without @lock for sysfs */
	unsigned long rc_lock_notices;
} sdsm_sync;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static void *sdsm_sync_alloc(size_t size)
{
	void *p = kzalloc(size, GFP_KERNEL);

	if (p)
		atomic_inc(&sdsm_sync.objects);
	return p;
}

static void sdsm_sync_free(void *p)
{
	if (!p)
		return;
	atomic_dec(&sdsm_sync.objects);
	kfree(p);
}

/* ------------------------------------------------------------------ */
/* Write notices of release-consistent regions                         */

static struct sdsm_rc_table *sdsm_rc_table_find(u8 kind, u64 id, bool alloc)
{
	struct sdsm_rc_table *t;

	lockdep_assert_held(&sdsm_sync.lock);
	hash_for_each_possible(sdsm_sync.rc_tables, t, hnode, id)
		if (t->id == id && t->kind == kind)
			return t;
	if (!alloc)
		return NULL;
	t = sdsm_sync_alloc(sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	t->kind = kind;
	xa_init(&t->notices);
	hash_add(sdsm_sync.rc_tables, &t->hnode, id);
	return t;
}

/* @t has @delta more (or fewer) notices.  Locks: sdsm_sync.lock. */
static void sdsm_rc_table_count(struct sdsm_rc_table *t, long delta)
{
	t->nr += delta;
	WRITE_ONCE(sdsm_sync.rc_lock_notices,
		   sdsm_sync.rc_lock_notices + delta);
}

static void sdsm_rc_table_free(struct sdsm_rc_table *t)
{
	if (!t)
		return;
	sdsm_rc_table_count(t, -(long)t->nr);
	hash_del(&t->hnode);
	xa_destroy(&t->notices);
	sdsm_sync_free(t);
}

/* A table without notices is as good as none.  Locks: sdsm_sync.lock. */
static void sdsm_rc_table_trim(struct sdsm_rc_table *t)
{
	if (t && !t->nr)
		sdsm_rc_table_free(t);
}

static void sdsm_rc_since_free(struct sdsm_rc_since *rs)
{
	hash_del(&rs->hnode);
	xa_destroy(&rs->clocks);
	sdsm_sync.nr_rc_since--;
	sdsm_sync_free(rs);
}

/* Any one of them, NULL if none.  Locks: sdsm_sync.lock. */
static struct sdsm_rc_since *sdsm_rc_since_any(void)
{
	struct sdsm_rc_since *rs;
	int bkt;

	hash_for_each(sdsm_sync.rc_since, bkt, rs, hnode)
		return rs;
	return NULL;
}

/*
 * The record of object @id of @kind managed by @manager.  A record
 * found with another manager (a futex key whose region id was used
 * again) is dropped: it told another node.  Locks: sdsm_sync.lock.
 */
static struct sdsm_rc_since *sdsm_rc_since_find(u8 kind, u64 id,
						unsigned int manager,
						bool alloc)
{
	struct sdsm_rc_since *rs;

	hash_for_each_possible(sdsm_sync.rc_since, rs, hnode, id) {
		if (rs->id != id || rs->kind != kind)
			continue;
		if (rs->manager == manager)
			return rs;
		sdsm_rc_since_free(rs);
		break;
	}
	if (!alloc)
		return NULL;
	if (sdsm_sync.nr_rc_since >= SDSM_RC_SINCE_MAX)
		sdsm_rc_since_free(sdsm_rc_since_any());
	rs = sdsm_sync_alloc(sizeof(*rs));
	if (!rs)
		return NULL;
	rs->id = id;
	rs->kind = kind;
	rs->manager = manager;
	xa_init(&rs->clocks);
	hash_add(sdsm_sync.rc_since, &rs->hnode, id);
	sdsm_sync.nr_rc_since++;
	return rs;
}

/*
 * Copy into @to what this node published to object @id of @kind, managed
 * by @manager, before (empty: the release publishes everything).
 * Whatever cannot be copied is left out, which only makes the release
 * publish more.  Locks: sdsm_sync.lock.
 */
static void sdsm_rc_since_copy(u8 kind, u64 id, unsigned int manager,
			       struct xarray *to)
{
	struct sdsm_rc_since *rs = sdsm_rc_since_find(kind, id, manager,
						      false);
	unsigned long region;
	void *v;

	if (!rs)
		return;
	xa_for_each(&rs->clocks, region, v)
		if (xa_err(xa_store(to, region, v, GFP_KERNEL)))
			break;
}

/*
 * A publish to object @id of @kind was sent to its @manager (should the
 * session end before it arrives, the manager's DOWN drops the record) or
 * merged here: remember the clocks it was gathered at (@clocks) for the
 * next release to the object.  A clock not kept leaves the older one,
 * which only makes the next release publish more.  Locks: sdsm_sync.lock.
 */
static void sdsm_rc_since_commit(u8 kind, u64 id, unsigned int manager,
				 struct xarray *clocks)
{
	struct sdsm_rc_since *rs;
	unsigned long region;
	void *v, *old;

	if (xa_empty(clocks))
		return;
	rs = sdsm_rc_since_find(kind, id, manager, true);
	if (!rs)
		return;
	xa_for_each(clocks, region, v) {
		old = xa_load(&rs->clocks, region);
		if (!xa_is_value(old) || xa_to_value(old) < xa_to_value(v))
			xa_store(&rs->clocks, region, v, GFP_KERNEL);
	}
}

/*
 * A batch of notices (one release's, or one message of them) is about to
 * be merged into @t: stamp it after every grant so far.  Should the clock
 * run out, every entry is stamped 1 and every node is owed the whole
 * table again.  Locks: sdsm_sync.lock.
 */
static void sdsm_rc_table_tick(struct sdsm_rc_table *t)
{
	unsigned long key;
	void *v;

	if (t->clock == SDSM_RC_STAMP_MAX) {
		xa_for_each(&t->notices, key, v)
			xa_store(&t->notices, key,
				 sdsm_rc_entry(sdsm_rc_entry_version(v), 1),
				 GFP_KERNEL);
		memset(t->sent, 0, sizeof(t->sent));
		t->clock = 1;
	}
	t->clock++;
}

/*
 * Keep in @t the larger version of @key.  A notice of a region destroyed
 * here lately is dropped: it was sent before the destroy reached its
 * sender, and sdsm_sync_rc_forget() ran already.  Return 0 or -ENOMEM.
 */
static int sdsm_rc_merge_one(struct sdsm_rc_table *t, unsigned long key,
			     u32 version)
{
	bool may_add = !sdsm_region_gone(sdsm_rc_notice_key_region(key));
	int ret = sdsm_rc_keep_max(&t->notices, key, version, t->clock,
				   may_add);

	if (ret <= 0)
		return ret;
	sdsm_rc_table_count(t, 1);
	return 0;
}

static int sdsm_rc_merge(struct sdsm_rc_table *t, struct xarray *from)
{
	unsigned long key;
	void *v;
	int ret;

	sdsm_rc_table_tick(t);
	xa_for_each(from, key, v) {
		ret = sdsm_rc_merge_one(t, key, sdsm_rc_entry_version(v));
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * sdsm_sync_rc_forget - drop the write notices of a region from every table
 * @region: a release region that left this node's region table
 *
 * Its id may be used again by a new region, whose pages must not inherit
 * the versions of the old one; and lock ids come and go with the programs
 * that use them (the preload shim makes one of every pthread object), so
 * a table that is left empty is freed.
 *
 * A notice merged after this is one that passed sdsm_region_gone(): see
 * Documentation/protocol.rst, "Release consistency in the module".
 *
 * Context: process; takes sdsm_sync.lock, so never with sdsm_regions_mutex
 * held.  From sdsm_sync_init() on; after sdsm_sync_exit() no table is left.
 */
void sdsm_sync_rc_forget(u32 region)
{
	unsigned long first = sdsm_rc_notice_key(region, 0);
	unsigned long last = sdsm_rc_notice_key(region + 1, 0) - 1;
	struct sdsm_rc_since *rs;
	struct sdsm_rc_table *t;
	struct hlist_node *tmp;
	unsigned long key;
	void *v;
	int bkt;

	mutex_lock(&sdsm_sync.lock);
	hash_for_each_safe(sdsm_sync.rc_tables, bkt, tmp, t, hnode) {
		xa_for_each_range(&t->notices, key, v, first, last) {
			xa_erase(&t->notices, key);
			sdsm_rc_table_count(t, -1);
		}
		sdsm_rc_table_trim(t);
	}
	hash_for_each_safe(sdsm_sync.rc_since, bkt, tmp, rs, hnode) {
		xa_erase(&rs->clocks, region);
		if (xa_empty(&rs->clocks))
			sdsm_rc_since_free(rs);
	}
	mutex_unlock(&sdsm_sync.lock);
}

/* Notices kept in this node's tables (stats/rc_lock_notices). */
unsigned long sdsm_sync_rc_lock_notices(void)
{
	return READ_ONCE(sdsm_sync.rc_lock_notices);
}

/*
 * An acquire applies what the manager of a lock, barrier or futex granted
 * (its @kind, @id and @manager).  The object knows those notices: a
 * release to it need not publish them back.  struct sdsm_rc_acq follows
 * each region's run of them (they come sorted by region): when nothing
 * rose in the region but what the run raised (@from to @to, @mixed
 * false) and the node's last publish to the object had everything before
 * it (its record is at @from), the record moves to @to
 * (sdsm_rc_acq_end()).  Otherwise it stays, and the next release
 * publishes them again, which is only redundant.  Documentation/
 * protocol.rst, "Publishing to a lock".  Locks: sdsm_sync.lock.
 */
struct sdsm_rc_acq {
	u8 kind;		/* 0: unknown, no record moves */
	u64 id;
	unsigned int manager;
	u32 region;		/* of the run; 0: none yet */
	bool started;		/* a notice of the run was applied */
	bool mixed;		/* something else rose in the run's region */
	u64 from, to;		/* the region's clock before and after */
	unsigned int failed;	/* notices not applied */
};

static void sdsm_rc_acq_init(struct sdsm_rc_acq *a, u8 kind, u64 id,
			     unsigned int manager)
{
	*a = (struct sdsm_rc_acq){ .kind = kind, .id = id,
				   .manager = manager };
}

/* The run of a->region is over: move the object's record past it. */
static void sdsm_rc_acq_end(struct sdsm_rc_acq *a)
{
	u64 base = a->from & ~(BIT_ULL(SDSM_RC_CLOCK_SHIFT) - 1), since;
	struct sdsm_rc_since *rs;
	void *v = NULL;

	if (!a->kind || !a->started || a->mixed || a->to == a->from ||
	    a->from < BIT_ULL(SDSM_RC_CLOCK_SHIFT))
		return;
	rs = sdsm_rc_since_find(a->kind, a->id, a->manager, false);
	if (rs)
		v = xa_load(&rs->clocks, a->region);
	/* No record of the region: only if nothing ever rose in it here. */
	since = xa_is_value(v) ? xa_to_value(v) : base;
	if (since != a->from)
		return;
	if (!rs)
		rs = sdsm_rc_since_find(a->kind, a->id, a->manager, true);
	if (rs)
		xa_store(&rs->clocks, a->region, xa_mk_value(a->to),
			 GFP_KERNEL);
}

/*
 * Apply one granted notice here (sdsm_rc_notice()).  Return 0, also when
 * @region is no release region here (nothing to do), or the error of
 * sdsm_rc_notice(), which the caller reports.
 */
static int sdsm_rc_acq_one(struct sdsm_rc_acq *a, u32 region, u64 page,
			   u32 version)
{
	u64 clock;
	int ret;

	if (region != a->region) {
		sdsm_rc_acq_end(a);
		a->region = region;
		a->started = false;
		a->mixed = false;
	}
	ret = sdsm_rc_notice(region, page, version, &clock);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		a->failed++;
		return ret;
	}
	if (!a->started) {
		a->started = true;
		a->from = clock;
		a->to = clock;
	}
	if (clock != a->to)
		a->mixed = true;
	a->to = clock + ret;
	return 0;
}

/*
 * Apply here, as an acquire of this node, every notice of @from stamped
 * @from_stamp or later: the grant of object @id of @kind by this node.
 * Return the number not applied.
 */
static unsigned int sdsm_rc_apply(u8 kind, u64 id, struct xarray *from,
				  u32 from_stamp)
{
	struct sdsm_rc_acq a;
	unsigned long key;
	u32 region;
	u64 page;
	void *v;
	int ret;

	sdsm_rc_acq_init(&a, kind, id, sdsm_cl.node_id);
	xa_for_each(from, key, v) {
		if (sdsm_rc_entry_stamp(v) < from_stamp)
			continue;
		sdsm_stat_inc(SDSM_STAT_RC_GRANT_NOTICES);
		region = sdsm_rc_notice_key_region(key);
		page = sdsm_rc_notice_key_page(key);
		ret = sdsm_rc_acq_one(&a, region, page,
				      sdsm_rc_entry_version(v));
		if (ret)
			pr_warn_ratelimited("write notice for region %u page %llu not applied: %d\n",
					    region, page, ret);
	}
	sdsm_rc_acq_end(&a);
	return a.failed;
}

/*
 * Send one page of notices: unmap @page (mapped at @e) and queue it, with
 * its @n notices, to @node as an RC_NOTICES of @w's kind and id.  The
 * message owns the page.  Locks: sdsm_sync.lock.
 */
static void sdsm_rc_send_page(unsigned int node, struct sdsm_wire_rc_notices *w,
			      struct page *page, struct sdsm_wire_rc_notice *e,
			      u32 n)
{
	kunmap_local(e);
	w->count = cpu_to_be32(n);
	sdsm_queue(node, SDSM_MSG_RC_NOTICES, w, sizeof(*w), page);
}

/*
 * Queue the notices of @from stamped @from_stamp or later to @node as
 * RC_NOTICES of @kind, @object (a grant's: the object's kind) and @id,
 * SDSM_WIRE_NOTICES_MAX a message.  Locks: sdsm_sync.lock.
 */
static void sdsm_rc_send(unsigned int node, u8 kind, u8 object, u64 id,
			 struct xarray *from, u32 from_stamp)
{
	struct sdsm_wire_rc_notices w = {
		.id = cpu_to_be64(id),
		.kind = kind,
		.object = object,
	};
	struct sdsm_wire_rc_notice *e = NULL;
	struct page *page = NULL;
	unsigned long key;
	u32 n = 0;
	void *v;

	xa_for_each(from, key, v) {
		if (sdsm_rc_entry_stamp(v) < from_stamp)
			continue;
		if (kind == SDSM_WIRE_NOTICES_ACQUIRE)
			sdsm_stat_inc(SDSM_STAT_RC_GRANT_NOTICES);
		if (!page) {
			/* Committed to by the release: cannot fail. */
			page = alloc_page(GFP_KERNEL | __GFP_NOFAIL);
			e = kmap_local_page(page);
		}
		e[n].region = cpu_to_be32(sdsm_rc_notice_key_region(key));
		e[n].version = cpu_to_be32(sdsm_rc_entry_version(v));
		e[n].page = cpu_to_be64(sdsm_rc_notice_key_page(key));
		if (++n < SDSM_WIRE_NOTICES_MAX)
			continue;
		sdsm_rc_send_page(node, &w, page, e, n);
		page = NULL;
		n = 0;
	}
	/* The last page, not full. */
	if (page)
		sdsm_rc_send_page(node, &w, page, e, n);
}

/*
 * Manager side: a lock or a barrier's departure goes to @node, or a futex
 * queues or wakes a waiter of @node: send it (or apply here) what the
 * object knows that @node was not sent yet, what rose since its last
 * grant to @node (what @node was sent it still knows).  A node that goes
 * down is owed the whole table again (sdsm_sync_node_down()), and so is
 * this node if an apply here failed.  Locks: sdsm_sync.lock.
 */
static void sdsm_rc_grant(unsigned int node, u8 kind, u64 id)
{
	struct sdsm_rc_table *t = sdsm_rc_table_find(kind, id, false);
	u32 from;

	if (!t)
		return;
	from = t->sent[node] + 1;
	t->sent[node] = t->clock;
	if (node == sdsm_cl.node_id) {
		if (sdsm_rc_apply(kind, id, &t->notices, from))
			t->sent[node] = 0;
	} else if (sdsm_sync.running) {
		sdsm_rc_send(node, SDSM_WIRE_NOTICES_ACQUIRE, kind, id,
			     &t->notices, from);
	}
}

/*
 * Start a release to object @id of @kind managed by @manager: @pub is
 * to gather what this node did not publish to it yet (@since, copied
 * under sdsm_sync.lock; left empty, all it knows).  Context:
 * sdsm_sync.lock not held.
 */
static void sdsm_rc_pub_start(struct sdsm_rc_publish *pub,
			      struct xarray *since, u8 kind, u64 id,
			      unsigned int manager)
{
	xa_init(&pub->notices);
	xa_init(&pub->clocks);
	xa_init(since);
	pub->nr = 0;
	pub->since = since;
	if (!sdsm_rc_in_use())
		return;
	mutex_lock(&sdsm_sync.lock);
	sdsm_rc_since_copy(kind, id, manager, since);
	mutex_unlock(&sdsm_sync.lock);
}

static void sdsm_rc_pub_destroy(struct sdsm_rc_publish *pub)
{
	xa_destroy(&pub->notices);
	xa_destroy(&pub->clocks);
	xa_destroy(pub->since);
}

/*
 * The release half of a lock release or barrier arrival, before
 * sdsm_sync.lock is taken: this node's writes reach their homes, and
 * what it has to publish is gathered in @pub (empty without release
 * regions).  Return 0 or the error of sdsm_rc_release() or of the
 * gathering; the caller goes on all the same (a lock is released, a
 * barrier arrived at, so nobody waits for ever), and fails with it.
 */
static int sdsm_sync_rc_release(struct sdsm_rc_publish *pub)
{
	int ret, ret2;

	if (!sdsm_rc_in_use())
		return 0;
	ret = sdsm_rc_release();
	ret2 = sdsm_rc_knowledge(pub);
	return ret ? ret : ret2;
}

/*
 * Publish @pub's notices to the manager of the object ahead of the
 * RELEASE, ARRIVE or FUTEX_WAKE the caller sends next, and record what
 * it was told (sdsm_rc_since_commit()) once they are sent or merged.
 * Locks: sdsm_sync.lock.
 */
static int sdsm_sync_rc_publish(unsigned int manager, u8 kind, u64 id,
				struct sdsm_rc_publish *pub)
{
	struct sdsm_rc_table *t;
	int ret = 0;

	lockdep_assert_held(&sdsm_sync.lock);
	if (pub->nr) {
		sdsm_stat_add(SDSM_STAT_RC_RELEASE_NOTICES, pub->nr);
		if (manager != sdsm_cl.node_id) {
			sdsm_rc_send(manager, kind, 0, id, &pub->notices, 0);
		} else {
			t = sdsm_rc_table_find(kind, id, true);
			ret = t ? sdsm_rc_merge(t, &pub->notices) : -ENOMEM;
			sdsm_rc_table_trim(t);
		}
	}
	/* Before any DOWN of the manager, which drops it. */
	if (!ret)
		sdsm_rc_since_commit(kind, id, manager, &pub->clocks);
	return ret;
}

static u64 sdsm_sync_all_nodes(void)
{
	return GENMASK_ULL(sdsm_cl.nr_nodes - 1, 0);
}

static unsigned int sdsm_sync_lock_manager(u64 lock_id)
{
	return hash_64(lock_id, 32) % sdsm_cl.nr_nodes;
}

/* @mask: non-zero subset of sdsm_sync_all_nodes(). */
static unsigned int sdsm_sync_barrier_manager(u64 barrier_id, u64 mask)
{
	unsigned int k = hash_64(barrier_id, 32) % hweight64(mask), i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		if ((mask & BIT_ULL(i)) && !k--)
			return i;
	return sdsm_cl.node_id;	/* not reached */
}

/* Locks: sdsm_sync.lock. */
static bool sdsm_sync_node_up(unsigned int node)
{
	return node == sdsm_cl.node_id || sdsm_sync.peers[node].up;
}

/* Locks: sdsm_sync.lock. */
static bool sdsm_sync_mask_up(u64 mask)
{
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		if ((mask & BIT_ULL(i)) && !sdsm_sync_node_up(i))
			return false;
	return true;
}

/* End the session with @node so both sides see it DOWN and resync. */
static void sdsm_sync_break(unsigned int node, const char *why)
{
	pr_err_ratelimited("node %u: %s: session reset\n", node, why);
	sdsm_peer_reset(&sdsm_cl.peers[node], why);
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */

/*
 * Queue one message to @node (not this node) in the node's send queue:
 * it waits there for the node's UP, and a DOWN report drops it (struct
 * sdsm_txq).  Locks: sdsm_sync.lock.
 */
static void sdsm_sync_queue(unsigned int node, u16 type, const void *payload,
			    u32 len)
{
	lockdep_assert_held(&sdsm_sync.lock);
	if (WARN_ON_ONCE(node == sdsm_cl.node_id) || !sdsm_sync.running)
		return;
	sdsm_queue(node, type, payload, len, NULL);
}

/* ------------------------------------------------------------------ */
/* Requester side: answers from managers                               */

static int sdsm_sync_status_errno(u32 status, const struct sdsm_sync_req *req)
{
	switch (status) {
	case SDSM_SYNC_OK:
		return 0;
	case SDSM_SYNC_BUSY:
		return -EBUSY;
	case SDSM_SYNC_INVAL:
		return -EINVAL;
	case SDSM_SYNC_HOSTDOWN:
		return -EHOSTDOWN;
	case SDSM_SYNC_NOMEM:
		return -ENOMEM;
	case SDSM_SYNC_LIMIT:
		return -ENOSPC;
	case SDSM_SYNC_CANCELLED:
	case SDSM_SYNC_STALE:
		if (req->cancel_err)
			return req->cancel_err;
		break;
	}
	return -EPROTO;
}

/* Complete a request; wakes its waiter.  Locks: sdsm_sync.lock. */
static void sdsm_sync_req_done(struct sdsm_sync_req *req, int status)
{
	lockdep_assert_held(&sdsm_sync.lock);
	req->status = status;
	WRITE_ONCE(req->done, true);
	wake_up_all(&sdsm_sync.wait);
}

/*
 * An answer from manager @from to request @req_id.  A lock grant that
 * completes no request is released at once.  Locks: sdsm_sync.lock.
 */
static void sdsm_sync_answer(unsigned int from, bool barrier, u64 req_id,
			     u64 id, u32 status, u32 flags)
{
	struct sdsm_sync_req *req;

	lockdep_assert_held(&sdsm_sync.lock);
	hash_for_each_possible(sdsm_sync.reqs, req, hnode, req_id) {
		if (req->id != req_id)
			continue;
		if (req->done || req->barrier != barrier ||
		    req->manager != from || req->key != id)
			break;
		req->waited = flags & SDSM_WIRE_SYNC_F_WAITED;
		req->serial = flags & SDSM_WIRE_SYNC_F_SERIAL;
		sdsm_sync_req_done(req, sdsm_sync_status_errno(status, req));
		return;
	}
	/*
	 * A remote grant nobody waits for any more: give the lock back.  A
	 * local one cannot happen: sdsm_mgr_lock_next() skips local waiters
	 * that are gone, and local cancels are synchronous.
	 */
	if (!barrier && status == SDSM_SYNC_OK && from != sdsm_cl.node_id) {
		struct sdsm_wire_lock w = {
			.req_id = cpu_to_be64(req_id),
			.lock_id = cpu_to_be64(id),
		};

		sdsm_sync_queue(from, SDSM_MSG_LOCK_RELEASE, &w, sizeof(w));
	}
}

/* A request of this node still waiting for an answer?  Locks: the lock. */
static bool sdsm_sync_req_waiting(u64 req_id)
{
	struct sdsm_sync_req *req;

	hash_for_each_possible(sdsm_sync.reqs, req, hnode, req_id)
		if (req->id == req_id)
			return !req->done;
	return false;
}

/* Manager side: answer node @to.  Locks: sdsm_sync.lock. */
static void sdsm_sync_reply(unsigned int to, bool barrier, u64 req_id, u64 id,
			    u32 status, u32 flags)
{
	struct sdsm_wire_sync_reply r = {
		.req_id = cpu_to_be64(req_id),
		.id = cpu_to_be64(id),
		.status = cpu_to_be32(status),
		.flags = cpu_to_be32(flags),
	};

	if (to == sdsm_cl.node_id)
		sdsm_sync_answer(to, barrier, req_id, id, status, flags);
	else
		sdsm_sync_queue(to, barrier ? SDSM_MSG_BARRIER_REPLY :
				SDSM_MSG_LOCK_REPLY, &r, sizeof(r));
}

/* ------------------------------------------------------------------ */
/* Manager side: locks                                                 */

/* Locks: sdsm_sync.lock (for all sdsm_mgr_* functions). */
static struct sdsm_mgr_lock *sdsm_mgr_lock_find(u64 id)
{
	struct sdsm_mgr_lock *ml;

	hash_for_each_possible(sdsm_sync.locks, ml, hnode, id)
		if (ml->id == id)
			return ml;
	return NULL;
}

/* Free @ml if it holds no state. */
static void sdsm_mgr_lock_put(struct sdsm_mgr_lock *ml)
{
	if (ml->held || !list_empty(&ml->waiters))
		return;
	hash_del(&ml->hnode);
	sdsm_sync_free(ml);
}

static void sdsm_mgr_lock_grant(struct sdsm_mgr_lock *ml, unsigned int node,
				u64 req_id, bool waited)
{
	ml->held = true;
	ml->holder_node = node;
	ml->holder_req = req_id;
	sdsm_rc_grant(node, SDSM_WIRE_NOTICES_LOCK, ml->id);
	sdsm_sync_reply(node, false, req_id, ml->id, SDSM_SYNC_OK,
			waited ? SDSM_WIRE_SYNC_F_WAITED : 0);
}

/* The holder is gone: grant to the first waiter, FIFO, or free. */
static void sdsm_mgr_lock_next(struct sdsm_mgr_lock *ml)
{
	struct sdsm_mgr_waiter *w;

	ml->held = false;
	while ((w = list_first_entry_or_null(&ml->waiters,
					     struct sdsm_mgr_waiter, node))) {
		list_del(&w->node);
		if (w->node_id != sdsm_cl.node_id ||
		    sdsm_sync_req_waiting(w->req_id))
			sdsm_mgr_lock_grant(ml, w->node_id, w->req_id, true);
		sdsm_sync_free(w);
		if (ml->held)
			break;
	}
	sdsm_mgr_lock_put(ml);
}

static void sdsm_mgr_lock_acquire(unsigned int src, u64 req_id, u64 id,
				  bool try)
{
	struct sdsm_mgr_lock *ml;
	struct sdsm_mgr_waiter *w;

	if (sdsm_sync_lock_manager(id) != sdsm_cl.node_id) {
		sdsm_sync_reply(src, false, req_id, id, SDSM_SYNC_INVAL, 0);
		return;
	}
	if (!sdsm_sync_node_up(src)) {
		sdsm_sync_reply(src, false, req_id, id, SDSM_SYNC_HOSTDOWN, 0);
		return;
	}
	ml = sdsm_mgr_lock_find(id);
	if (!ml) {
		ml = sdsm_sync_alloc(sizeof(*ml));
		if (!ml) {
			sdsm_sync_reply(src, false, req_id, id,
					SDSM_SYNC_NOMEM, 0);
			return;
		}
		ml->id = id;
		INIT_LIST_HEAD(&ml->waiters);
		hash_add(sdsm_sync.locks, &ml->hnode, id);
	}
	if (!ml->held) {
		sdsm_mgr_lock_grant(ml, src, req_id, false);
	} else if (try) {
		sdsm_sync_reply(src, false, req_id, id, SDSM_SYNC_BUSY, 0);
	} else {
		w = sdsm_sync_alloc(sizeof(*w));
		if (w) {
			w->node_id = src;
			w->req_id = req_id;
			list_add_tail(&w->node, &ml->waiters);
			sdsm_stat_inc(SDSM_STAT_MANAGER_LOCK_QUEUED);
		} else {
			sdsm_sync_reply(src, false, req_id, id,
					SDSM_SYNC_NOMEM, 0);
		}
	}
	sdsm_mgr_lock_put(ml);
}

/* Release by (node, grant): anything else is stale and ignored. */
static void sdsm_mgr_lock_release(unsigned int src, u64 req_id, u64 id)
{
	struct sdsm_mgr_lock *ml = sdsm_mgr_lock_find(id);

	if (!ml || !ml->held || ml->holder_node != src ||
	    ml->holder_req != req_id)
		return;
	sdsm_mgr_lock_next(ml);
}

static void sdsm_mgr_lock_cancel(unsigned int src, u64 req_id, u64 id)
{
	struct sdsm_mgr_lock *ml = sdsm_mgr_lock_find(id);
	struct sdsm_mgr_waiter *w;

	if (ml) {
		list_for_each_entry(w, &ml->waiters, node) {
			if (w->node_id != src || w->req_id != req_id)
				continue;
			list_del(&w->node);
			sdsm_sync_free(w);
			sdsm_mgr_lock_put(ml);
			sdsm_sync_reply(src, false, req_id, id,
					SDSM_SYNC_CANCELLED, 0);
			return;
		}
	}
	/* Granted (the grant went out first) or answered: nothing to do. */
	sdsm_sync_reply(src, false, req_id, id, SDSM_SYNC_STALE, 0);
}

/* ------------------------------------------------------------------ */
/* Manager side: barriers                                              */

static struct sdsm_mgr_barrier *sdsm_mgr_barrier_find(u64 id)
{
	struct sdsm_mgr_barrier *mb;

	hash_for_each_possible(sdsm_sync.barriers, mb, hnode, id)
		if (mb->id == id)
			return mb;
	return NULL;
}

/*
 * End the generation: answer every arrival with @status, free it all.  A
 * generation that completed names its last arrival, the list's tail, the
 * serial one (SDSM_WIRE_SYNC_F_SERIAL).
 */
static void sdsm_mgr_barrier_end(struct sdsm_mgr_barrier *mb, u32 status,
				 unsigned int skip_node)
{
	struct sdsm_mgr_waiter *w, *tmp;
	u32 flags;

	list_for_each_entry_safe(w, tmp, &mb->arrivals, node) {
		flags = status == SDSM_SYNC_OK &&
			list_is_last(&w->node, &mb->arrivals) ?
			SDSM_WIRE_SYNC_F_SERIAL : 0;
		list_del(&w->node);
		if (w->node_id != skip_node && status == SDSM_SYNC_OK)
			sdsm_rc_grant(w->node_id, SDSM_WIRE_NOTICES_BARRIER,
				      mb->id);
		if (w->node_id != skip_node)
			sdsm_sync_reply(w->node_id, true, w->req_id, mb->id,
					status, flags);
		sdsm_sync_free(w);
	}
	/*
	 * The table outlives the generation: a node that was not in this
	 * one gets its notices at its next departure, from a table its
	 * arrivals publish to only what rose since.
	 */
	hash_del(&mb->hnode);
	sdsm_sync_free(mb);
}

static void sdsm_mgr_barrier_arrive(unsigned int src, u64 req_id, u64 id,
				    u64 mask, u32 count)
{
	struct sdsm_mgr_barrier *mb;
	struct sdsm_mgr_waiter *w;
	u32 status = SDSM_SYNC_INVAL;

	if (!mask || (mask & ~sdsm_sync_all_nodes()) || !count ||
	    !(mask & BIT_ULL(src)) ||
	    sdsm_sync_barrier_manager(id, mask) != sdsm_cl.node_id)
		goto out_reply;
	status = SDSM_SYNC_HOSTDOWN;
	if (!sdsm_sync_mask_up(mask))
		goto out_reply;
	status = SDSM_SYNC_INVAL;
	mb = sdsm_mgr_barrier_find(id);
	if (mb && (mb->nodemask != mask || mb->count != count))
		goto out_reply;
	status = SDSM_SYNC_NOMEM;
	w = sdsm_sync_alloc(sizeof(*w));
	if (!w)
		goto out_reply;
	if (!mb) {
		mb = sdsm_sync_alloc(sizeof(*mb));
		if (!mb) {
			sdsm_sync_free(w);
			goto out_reply;
		}
		mb->id = id;
		mb->nodemask = mask;
		mb->count = count;
		INIT_LIST_HEAD(&mb->arrivals);
		hash_add(sdsm_sync.barriers, &mb->hnode, id);
	}
	w->node_id = src;
	w->req_id = req_id;
	list_add_tail(&w->node, &mb->arrivals);
	sdsm_stat_inc(SDSM_STAT_MANAGER_BARRIER_ARRIVALS);
	if (++mb->arrived >= mb->count)
		sdsm_mgr_barrier_end(mb, SDSM_SYNC_OK, SDSM_MAX_NODES);
	return;

out_reply:
	sdsm_sync_reply(src, true, req_id, id, status, 0);
}

static void sdsm_mgr_barrier_cancel(unsigned int src, u64 req_id, u64 id)
{
	struct sdsm_mgr_barrier *mb = sdsm_mgr_barrier_find(id);
	struct sdsm_mgr_waiter *w;

	if (mb) {
		list_for_each_entry(w, &mb->arrivals, node) {
			if (w->node_id != src || w->req_id != req_id)
				continue;
			list_del(&w->node);
			sdsm_sync_free(w);
			if (!--mb->arrived) {
				hash_del(&mb->hnode);
				sdsm_sync_free(mb);
			}
			sdsm_sync_reply(src, true, req_id, id,
					SDSM_SYNC_CANCELLED, 0);
			return;
		}
	}
	sdsm_sync_reply(src, true, req_id, id, SDSM_SYNC_STALE, 0);
}

/* ------------------------------------------------------------------ */
/* Futexes: answers and the manager side                               */

/*
 * An answer from manager @from to futex call @req_id.  An answer nobody
 * waits for any more is dropped: its call gave up after the bounded wait
 * for a CANCEL's answer (see sdsm_futex_finish()).  Locks: sdsm_sync.lock.
 */
static void sdsm_futex_answer(unsigned int from, u64 req_id, u64 key,
			      u32 status, u32 flags, u32 woken)
{
	struct sdsm_sync_req *req;

	lockdep_assert_held(&sdsm_sync.lock);
	hash_for_each_possible(sdsm_sync.reqs, req, hnode, req_id) {
		if (req->id != req_id)
			continue;
		if (req->done || !req->futex || req->manager != from ||
		    req->key != key)
			return;
		if (status == SDSM_SYNC_OK &&
		    (flags & SDSM_WIRE_FUTEX_F_QUEUED)) {
			req->queued = true;
			wake_up_all(&sdsm_sync.wait);
			return;
		}
		req->woken = woken;
		/* STALE: the WOKEN answer went first; never reached. */
		sdsm_sync_req_done(req, status == SDSM_SYNC_STALE ? 0 :
				   sdsm_sync_status_errno(status, req));
		return;
	}
}

/* Manager side: answer node @to.  Locks: sdsm_sync.lock. */
static void sdsm_futex_reply(unsigned int to, u64 req_id, u64 key,
			     u32 status, u32 flags, u32 woken)
{
	struct sdsm_wire_futex_reply r = {
		.req_id = cpu_to_be64(req_id),
		.key = cpu_to_be64(key),
		.status = cpu_to_be32(status),
		.flags = cpu_to_be32(flags),
		.woken = cpu_to_be32(woken),
	};

	if (to == sdsm_cl.node_id)
		sdsm_futex_answer(to, req_id, key, status, flags, woken);
	else
		sdsm_sync_queue(to, SDSM_MSG_FUTEX_REPLY, &r, sizeof(r));
}

static struct sdsm_mgr_futex *sdsm_mgr_futex_find(u64 key)
{
	struct sdsm_mgr_futex *mf;

	hash_for_each_possible(sdsm_sync.futexes, mf, hnode, key)
		if (mf->key == key)
			return mf;
	return NULL;
}

/* Free @mf if it has no waiter. */
static void sdsm_mgr_futex_put(struct sdsm_mgr_futex *mf)
{
	if (!list_empty(&mf->waiters))
		return;
	hash_del(&mf->hnode);
	sdsm_sync_free(mf);
}

static void sdsm_mgr_futex_unlink(struct sdsm_mgr_waiter *w)
{
	list_del(&w->node);
	sdsm_sync.futex_waiters[w->node_id]--;
	sdsm_sync_free(w);
}

/* Queue a waiter and answer QUEUED, or answer why not. */
static void sdsm_mgr_futex_wait(unsigned int src, u64 req_id, u64 key,
				u32 bitset)
{
	struct sdsm_mgr_futex *mf;
	struct sdsm_mgr_waiter *w;
	u32 status = SDSM_SYNC_INVAL;

	if (!bitset)
		goto out_reply;
	status = SDSM_SYNC_HOSTDOWN;
	if (!sdsm_sync_node_up(src))
		goto out_reply;
	status = SDSM_SYNC_LIMIT;
	if (sdsm_sync.futex_waiters[src] >= SDSM_FUTEX_MAX_WAITERS)
		goto out_reply;
	status = SDSM_SYNC_NOMEM;
	w = sdsm_sync_alloc(sizeof(*w));
	if (!w)
		goto out_reply;
	mf = sdsm_mgr_futex_find(key);
	if (!mf) {
		mf = sdsm_sync_alloc(sizeof(*mf));
		if (!mf) {
			sdsm_sync_free(w);
			goto out_reply;
		}
		mf->key = key;
		INIT_LIST_HEAD(&mf->waiters);
		hash_add(sdsm_sync.futexes, &mf->hnode, key);
	}
	w->node_id = src;
	w->req_id = req_id;
	w->bitset = bitset;
	list_add_tail(&w->node, &mf->waiters);
	sdsm_sync.futex_waiters[src]++;
	sdsm_stat_inc(SDSM_STAT_MANAGER_FUTEX_QUEUED);
	/* What WAKEs released so far, for the waiter's second read. */
	sdsm_rc_grant(src, SDSM_WIRE_NOTICES_FUTEX, key);
	sdsm_futex_reply(src, req_id, key, SDSM_SYNC_OK,
			 SDSM_WIRE_FUTEX_F_QUEUED, 0);
	return;

out_reply:
	sdsm_futex_reply(src, req_id, key, status, 0, 0);
}

/* Wake up to @count waiters sharing a bit with @bitset, oldest first. */
static void sdsm_mgr_futex_wake(unsigned int src, u64 req_id, u64 key,
				u32 count, u32 bitset)
{
	struct sdsm_mgr_waiter *w, *tmp;
	struct sdsm_mgr_futex *mf;
	u32 status = SDSM_SYNC_INVAL;
	u32 woken = 0;

	if (!count || !bitset)
		goto out_reply;
	status = SDSM_SYNC_HOSTDOWN;
	if (!sdsm_sync_node_up(src))
		goto out_reply;
	status = SDSM_SYNC_OK;
	mf = sdsm_mgr_futex_find(key);
	if (!mf)
		goto out_reply;
	list_for_each_entry_safe(w, tmp, &mf->waiters, node) {
		if (!(w->bitset & bitset))
			continue;
		sdsm_rc_grant(w->node_id, SDSM_WIRE_NOTICES_FUTEX, key);
		sdsm_futex_reply(w->node_id, w->req_id, key, SDSM_SYNC_OK, 0,
				 0);
		sdsm_mgr_futex_unlink(w);
		if (++woken >= count)
			break;
	}
	sdsm_mgr_futex_put(mf);
out_reply:
	sdsm_futex_reply(src, req_id, key, status, 0, woken);
}

static void sdsm_mgr_futex_cancel(unsigned int src, u64 req_id, u64 key)
{
	struct sdsm_mgr_futex *mf = sdsm_mgr_futex_find(key);
	struct sdsm_mgr_waiter *w;

	if (mf) {
		list_for_each_entry(w, &mf->waiters, node) {
			if (w->node_id != src || w->req_id != req_id)
				continue;
			sdsm_mgr_futex_unlink(w);
			sdsm_mgr_futex_put(mf);
			sdsm_futex_reply(src, req_id, key, SDSM_SYNC_CANCELLED,
					 0, 0);
			return;
		}
	}
	/* Woken (the WOKEN answer went out first) or refused. */
	sdsm_futex_reply(src, req_id, key, SDSM_SYNC_STALE, 0, 0);
}

/* Drop every waiter of node @x (SDSM_MAX_NODES: all).  Locks: the lock. */
static void sdsm_mgr_futex_drop(unsigned int x)
{
	struct sdsm_mgr_waiter *w, *wt;
	struct sdsm_mgr_futex *mf;
	struct hlist_node *tmp;
	int bkt;

	hash_for_each_safe(sdsm_sync.futexes, bkt, tmp, mf, hnode) {
		list_for_each_entry_safe(w, wt, &mf->waiters, node)
			if (x == SDSM_MAX_NODES || w->node_id == x)
				sdsm_mgr_futex_unlink(w);
		sdsm_mgr_futex_put(mf);
	}
}

/* ------------------------------------------------------------------ */
/* Peer events                                                         */

/* Node @x is down.  Locks: sdsm_sync.lock. */
static void sdsm_sync_node_down(unsigned int x)
{
	struct sdsm_rc_since *rs;
	struct sdsm_rc_table *t;
	struct sdsm_mgr_barrier *mb;
	struct sdsm_mgr_waiter *w, *wt;
	struct sdsm_mgr_lock *ml;
	struct sdsm_sync_held *held;
	struct sdsm_sync_req *req;
	struct hlist_node *tmp;
	int bkt;

	/* Requester role. */
	hash_for_each(sdsm_sync.reqs, bkt, req, hnode) {
		if (req->done)
			continue;
		if (req->manager == x) {
			sdsm_sync_req_done(req, -EHOSTDOWN);
		} else if (req->barrier && (req->nodemask & BIT_ULL(x))) {
			req->abort = -EHOSTDOWN;
			wake_up_all(&sdsm_sync.wait);
		}
	}
	hash_for_each(sdsm_sync.held, bkt, held, hnode)
		if (held->manager == x)
			held->lost = true;

	/* Manager role. */
	hash_for_each_safe(sdsm_sync.locks, bkt, tmp, ml, hnode) {
		list_for_each_entry_safe(w, wt, &ml->waiters, node) {
			if (w->node_id != x)
				continue;
			list_del(&w->node);
			sdsm_sync_free(w);
		}
		if (ml->held && ml->holder_node == x)
			sdsm_mgr_lock_next(ml);
		else
			sdsm_mgr_lock_put(ml);
	}
	hash_for_each_safe(sdsm_sync.barriers, bkt, tmp, mb, hnode)
		if (mb->nodemask & BIT_ULL(x))
			sdsm_mgr_barrier_end(mb, SDSM_SYNC_HOSTDOWN, x);
	sdsm_mgr_futex_drop(x);
	/* What x was granted may be lost with it: it is owed all again. */
	hash_for_each(sdsm_sync.rc_tables, bkt, t, hnode)
		t->sent[x] = 0;
	/* What x was told as a manager may be lost: tell it all. */
	hash_for_each_safe(sdsm_sync.rc_since, bkt, tmp, rs, hnode)
		if (rs->manager == x)
			sdsm_rc_since_free(rs);
}

static int sdsm_sync_peer_event(struct notifier_block *nb,
				unsigned long event, void *data)
{
	struct sdsm_peer *peer = data;
	struct sdsm_sync_peer *sp;

	if (peer->id >= sdsm_cl.nr_nodes || peer->id == sdsm_cl.node_id)
		return NOTIFY_DONE;
	sp = &sdsm_sync.peers[peer->id];
	mutex_lock(&sdsm_sync.lock);
	switch (event) {
	case SDSM_PEER_EVENT_UP:
		sp->up = true;
		break;
	case SDSM_PEER_EVENT_DOWN:
		/* What was queued for it is dropped already. */
		sp->up = false;
		sdsm_sync_node_down(peer->id);
		break;
	}
	mutex_unlock(&sdsm_sync.lock);
	return NOTIFY_OK;
}

static struct notifier_block sdsm_sync_peer_nb = {
	.notifier_call = sdsm_sync_peer_event,
};

/* ------------------------------------------------------------------ */
/* Message handlers                                                    */

static bool sdsm_sync_msg_ok(const struct sdsm_msg *msg, u32 len)
{
	if (msg->len >= len && !msg->page)
		return true;
	pr_err_ratelimited("node %u: malformed message type %#x (len %u)\n",
			   msg->peer->id, msg->type, msg->len);
	sdsm_sync_break(msg->peer->id, "malformed lock/barrier message");
	return false;
}

static void sdsm_sync_lock_rx(const struct sdsm_msg *msg)
{
	const struct sdsm_wire_lock *w = msg->payload;
	unsigned int src = msg->peer->id;
	u64 req_id, id;

	if (!sdsm_sync_msg_ok(msg, sizeof(*w)))
		return;
	req_id = be64_to_cpu(w->req_id);
	id = be64_to_cpu(w->lock_id);
	mutex_lock(&sdsm_sync.lock);
	switch (msg->type) {
	case SDSM_MSG_LOCK_ACQUIRE:
		sdsm_mgr_lock_acquire(src, req_id, id,
				      be32_to_cpu(w->flags) &
				      SDSM_WIRE_LOCK_F_TRY);
		break;
	case SDSM_MSG_LOCK_RELEASE:
		sdsm_mgr_lock_release(src, req_id, id);
		break;
	case SDSM_MSG_LOCK_CANCEL:
		sdsm_mgr_lock_cancel(src, req_id, id);
		break;
	}
	mutex_unlock(&sdsm_sync.lock);
}

static void sdsm_sync_barrier_rx(const struct sdsm_msg *msg)
{
	const struct sdsm_wire_barrier *w = msg->payload;
	unsigned int src = msg->peer->id;
	u64 req_id, id;

	if (!sdsm_sync_msg_ok(msg, sizeof(*w)))
		return;
	req_id = be64_to_cpu(w->req_id);
	id = be64_to_cpu(w->barrier_id);
	mutex_lock(&sdsm_sync.lock);
	if (msg->type == SDSM_MSG_BARRIER_ARRIVE)
		sdsm_mgr_barrier_arrive(src, req_id, id,
					be64_to_cpu(w->nodemask),
					be32_to_cpu(w->count));
	else
		sdsm_mgr_barrier_cancel(src, req_id, id);
	mutex_unlock(&sdsm_sync.lock);
}

static void sdsm_sync_reply_rx(const struct sdsm_msg *msg)
{
	const struct sdsm_wire_sync_reply *r = msg->payload;

	if (!sdsm_sync_msg_ok(msg, sizeof(*r)))
		return;
	mutex_lock(&sdsm_sync.lock);
	sdsm_sync_answer(msg->peer->id, msg->type == SDSM_MSG_BARRIER_REPLY,
			 be64_to_cpu(r->req_id), be64_to_cpu(r->id),
			 be32_to_cpu(r->status), be32_to_cpu(r->flags));
	mutex_unlock(&sdsm_sync.lock);
}

static void sdsm_sync_futex_rx(const struct sdsm_msg *msg)
{
	const struct sdsm_wire_futex *w = msg->payload;
	unsigned int src = msg->peer->id;
	u64 req_id, key;

	if (!sdsm_sync_msg_ok(msg, sizeof(*w)))
		return;
	req_id = be64_to_cpu(w->req_id);
	key = be64_to_cpu(w->key);
	mutex_lock(&sdsm_sync.lock);
	switch (msg->type) {
	case SDSM_MSG_FUTEX_WAIT:
		sdsm_mgr_futex_wait(src, req_id, key, be32_to_cpu(w->bitset));
		break;
	case SDSM_MSG_FUTEX_CANCEL:
		sdsm_mgr_futex_cancel(src, req_id, key);
		break;
	case SDSM_MSG_FUTEX_WAKE:
		sdsm_mgr_futex_wake(src, req_id, key, be32_to_cpu(w->count),
				    be32_to_cpu(w->bitset));
		break;
	}
	mutex_unlock(&sdsm_sync.lock);
}

static void sdsm_sync_futex_reply_rx(const struct sdsm_msg *msg)
{
	const struct sdsm_wire_futex_reply *r = msg->payload;

	if (!sdsm_sync_msg_ok(msg, sizeof(*r)))
		return;
	mutex_lock(&sdsm_sync.lock);
	sdsm_futex_answer(msg->peer->id, be64_to_cpu(r->req_id),
			  be64_to_cpu(r->key), be32_to_cpu(r->status),
			  be32_to_cpu(r->flags), be32_to_cpu(r->woken));
	mutex_unlock(&sdsm_sync.lock);
}

/*
 * RC_NOTICES of @kind to a manager name no @object; from a manager, the
 * kind of the object granted.
 */
static bool sdsm_rc_notices_kind_ok(u8 kind, u8 object)
{
	switch (kind) {
	case SDSM_WIRE_NOTICES_LOCK:
	case SDSM_WIRE_NOTICES_BARRIER:
	case SDSM_WIRE_NOTICES_FUTEX:
		return !object;
	case SDSM_WIRE_NOTICES_ACQUIRE:
		return object == SDSM_WIRE_NOTICES_LOCK ||
		       object == SDSM_WIRE_NOTICES_BARRIER ||
		       object == SDSM_WIRE_NOTICES_FUTEX;
	default:
		return false;
	}
}

/* Notices from a releaser (to merge) or from a manager (to apply). */
static void sdsm_sync_notices_rx(const struct sdsm_msg *msg)
{
	const struct sdsm_wire_rc_notices *w = msg->payload;
	const struct sdsm_wire_rc_notice *e;
	struct sdsm_rc_table *t = NULL;
	struct sdsm_rc_acq a;
	u32 n, i, region;
	int ret = 0;
	u64 page;

	n = msg->len < sizeof(*w) ? 0 : be32_to_cpu(w->count);
	if (!msg->page || n < 1 || n > SDSM_WIRE_NOTICES_MAX ||
	    !sdsm_rc_notices_kind_ok(w->kind, w->object)) {
		pr_err_ratelimited("node %u: malformed write notices (len %u)\n",
				   msg->peer->id, msg->len);
		sdsm_sync_break(msg->peer->id, "malformed write notices");
		return;
	}
	mutex_lock(&sdsm_sync.lock);
	if (w->kind == SDSM_WIRE_NOTICES_ACQUIRE) {
		sdsm_rc_acq_init(&a, w->object, be64_to_cpu(w->id),
				 msg->peer->id);
	} else {
		t = sdsm_rc_table_find(w->kind, be64_to_cpu(w->id), true);
		if (t)
			sdsm_rc_table_tick(t);
		else
			ret = -ENOMEM;
	}
	e = kmap_local_page(msg->page);
	for (i = 0; i < n && !ret; i++) {
		region = be32_to_cpu(e[i].region);
		page = be64_to_cpu(e[i].page);
		if (!region || region > SDSM_REGION_ID_MAX ||
		    page >= SDSM_REGION_MAX_BYTES >> PAGE_SHIFT ||
		    !e[i].version) {
			ret = -EPROTO;
		} else if (t) {
			ret = sdsm_rc_merge_one(t,
						sdsm_rc_notice_key(region, page),
						be32_to_cpu(e[i].version));
		} else {
			ret = sdsm_rc_acq_one(&a, region, page,
					      be32_to_cpu(e[i].version));
		}
	}
	kunmap_local(e);
	if (w->kind == SDSM_WIRE_NOTICES_ACQUIRE) {
		/* A refused notice leaves the records alone. */
		if (!ret)
			sdsm_rc_acq_end(&a);
	} else {
		sdsm_rc_table_trim(t);
	}
	mutex_unlock(&sdsm_sync.lock);
	if (ret == -EPROTO || ret == -EINVAL) {
		pr_err_ratelimited("node %u: write notice %u of %u refused\n",
				   msg->peer->id, i, n);
		sdsm_sync_break(msg->peer->id, "bad write notice");
	} else if (ret && w->kind == SDSM_WIRE_NOTICES_ACQUIRE) {
		/*
		 * A grant's notices not applied: the manager counts them as
		 * known here and would not send them again; a new session
		 * makes it send its whole table at the next grant.
		 */
		pr_err_ratelimited("node %u: granted write notices not applied: %d\n",
				   msg->peer->id, ret);
		sdsm_sync_break(msg->peer->id, "write notices not applied");
	} else if (ret) {
		/*
		 * A release's notices not kept: the releaser counts them as
		 * told (struct sdsm_rc_since); a new session makes it publish
		 * everything at its next release to the object.
		 */
		pr_err_ratelimited("node %u: released write notices not kept: %d\n",
				   msg->peer->id, ret);
		sdsm_sync_break(msg->peer->id, "write notices not kept");
	}
}

static const struct {
	u16 type;
	sdsm_handler_fn fn;
} sdsm_sync_handlers[] = {
	{ SDSM_MSG_LOCK_ACQUIRE, sdsm_sync_lock_rx },
	{ SDSM_MSG_LOCK_RELEASE, sdsm_sync_lock_rx },
	{ SDSM_MSG_LOCK_CANCEL, sdsm_sync_lock_rx },
	{ SDSM_MSG_LOCK_REPLY, sdsm_sync_reply_rx },
	{ SDSM_MSG_BARRIER_ARRIVE, sdsm_sync_barrier_rx },
	{ SDSM_MSG_BARRIER_CANCEL, sdsm_sync_barrier_rx },
	{ SDSM_MSG_BARRIER_REPLY, sdsm_sync_reply_rx },
	{ SDSM_MSG_FUTEX_WAIT, sdsm_sync_futex_rx },
	{ SDSM_MSG_FUTEX_CANCEL, sdsm_sync_futex_rx },
	{ SDSM_MSG_FUTEX_WAKE, sdsm_sync_futex_rx },
	{ SDSM_MSG_FUTEX_REPLY, sdsm_sync_futex_reply_rx },
	{ SDSM_MSG_RC_NOTICES, sdsm_sync_notices_rx },
};

/* ------------------------------------------------------------------ */
/* Requester side: the ioctls                                          */

/* Register @req and check its manager is reachable.  Locks: the lock. */
static int sdsm_sync_req_start(struct sdsm_sync_req *req)
{
	lockdep_assert_held(&sdsm_sync.lock);
	if (!sdsm_sync.running)
		return -EHOSTDOWN;
	if (!sdsm_sync_node_up(req->manager) ||
	    (req->barrier && !sdsm_sync_mask_up(req->nodemask)))
		return -EHOSTDOWN;
	req->id = ++sdsm_sync.next_req;
	hash_add(sdsm_sync.reqs, &req->hnode, req->id);
	return 0;
}

/* Send (or do locally) the request or its cancel.  Locks: the lock. */
static void sdsm_sync_req_send(struct sdsm_sync_req *req, bool cancel,
			       bool try)
{
	unsigned int self = sdsm_cl.node_id;

	if (req->barrier) {
		struct sdsm_wire_barrier w = {
			.req_id = cpu_to_be64(req->id),
			.barrier_id = cpu_to_be64(req->key),
			.nodemask = cpu_to_be64(req->nodemask),
			.count = cpu_to_be32(req->count),
		};

		if (req->manager != self)
			sdsm_sync_queue(req->manager, cancel ?
					SDSM_MSG_BARRIER_CANCEL :
					SDSM_MSG_BARRIER_ARRIVE, &w, sizeof(w));
		else if (cancel)
			sdsm_mgr_barrier_cancel(self, req->id, req->key);
		else
			sdsm_mgr_barrier_arrive(self, req->id, req->key,
						req->nodemask, req->count);
	} else {
		struct sdsm_wire_lock w = {
			.req_id = cpu_to_be64(req->id),
			.lock_id = cpu_to_be64(req->key),
			.flags = cpu_to_be32(try ? SDSM_WIRE_LOCK_F_TRY : 0),
		};

		if (req->manager != self)
			sdsm_sync_queue(req->manager, cancel ?
					SDSM_MSG_LOCK_CANCEL :
					SDSM_MSG_LOCK_ACQUIRE, &w, sizeof(w));
		else if (cancel)
			sdsm_mgr_lock_cancel(self, req->id, req->key);
		else
			sdsm_mgr_lock_acquire(self, req->id, req->key, try);
	}
}

/*
 * Wait for the answer to @req, which was sent with the lock held, then
 * dropped.  On a signal, the timeout, or a barrier node going down, ask the
 * manager to withdraw the request and wait (bounded) for its answer.
 * Returns with the lock held and @req out of sdsm_sync.reqs.
 */
static int sdsm_sync_req_wait(struct sdsm_sync_req *req, u32 timeout_ms)
{
	long left = timeout_ms ? (long)msecs_to_jiffies(timeout_ms) :
				 MAX_SCHEDULE_TIMEOUT;
	/* The manager answers a cancel at once or is DOWN by then. */
	unsigned long cap = msecs_to_jiffies(2 * sdsm_cl.peer_timeout_ms +
					     1000);
	long t;

	t = wait_event_interruptible_timeout(sdsm_sync.wait,
					     READ_ONCE(req->done) ||
					     READ_ONCE(req->abort), left);
	mutex_lock(&sdsm_sync.lock);
	if (!req->done) {
		req->cancel_err = t < 0 ? -EINTR : t == 0 ? -ETIMEDOUT :
				  req->abort;
		sdsm_sync_req_send(req, true, false);
		if (!req->done) {
			mutex_unlock(&sdsm_sync.lock);
			wait_event_timeout(sdsm_sync.wait,
					   READ_ONCE(req->done), cap);
			mutex_lock(&sdsm_sync.lock);
		}
		if (!req->done) {
			/* A late grant finds no request and is released. */
			pr_warn_ratelimited("node %u did not answer a cancel in time\n",
					    req->manager);
			sdsm_sync_req_done(req, req->cancel_err);
		}
	}
	hash_del(&req->hnode);
	return req->status;
}

/* What the calling thread holds through @file.  Locks: sdsm_sync.lock. */
static struct sdsm_sync_held *sdsm_sync_held_find(struct file *file,
						  u64 lock_id)
{
	struct pid *self = task_pid(current);
	struct sdsm_sync_held *held;

	hash_for_each_possible(sdsm_sync.held, held, hnode, lock_id)
		if (held->lock_id == lock_id && held->file == file &&
		    held->owner == self)
			return held;
	return NULL;
}

static void sdsm_sync_held_free(struct sdsm_sync_held *held)
{
	put_pid(held->owner);
	sdsm_sync_free(held);
}

/* Release @held (unless lost) and free it.  Locks: sdsm_sync.lock. */
static void sdsm_sync_held_drop(struct sdsm_sync_held *held)
{
	hash_del(&held->hnode);
	if (!held->lost) {
		if (held->manager == sdsm_cl.node_id) {
			sdsm_mgr_lock_release(held->manager, held->req_id,
					      held->lock_id);
		} else {
			struct sdsm_wire_lock w = {
				.req_id = cpu_to_be64(held->req_id),
				.lock_id = cpu_to_be64(held->lock_id),
			};

			sdsm_sync_queue(held->manager, SDSM_MSG_LOCK_RELEASE,
					&w, sizeof(w));
		}
	}
	sdsm_sync_held_free(held);
}

static int sdsm_sync_acquire(struct file *file, u64 lock_id, bool try,
			     u32 timeout_ms)
{
	struct sdsm_sync_req req = {
		.key = lock_id,
		.manager = sdsm_sync_lock_manager(lock_id),
	};
	struct sdsm_sync_held *held, *old;
	int ret;

	held = sdsm_sync_alloc(sizeof(*held));
	if (!held)
		return -ENOMEM;
	mutex_lock(&sdsm_sync.lock);
	old = sdsm_sync_held_find(file, lock_id);
	if (old && !old->lost) {
		ret = -EDEADLK;
		goto out_unlock;
	}
	if (old) {
		/* Lost with its manager: forget it and start afresh. */
		hash_del(&old->hnode);
		sdsm_sync_held_free(old);
	}
	ret = sdsm_sync_req_start(&req);
	if (ret)
		goto out_unlock;
	sdsm_sync_req_send(&req, false, try);
	mutex_unlock(&sdsm_sync.lock);

	ret = sdsm_sync_req_wait(&req, timeout_ms);
	if (!ret) {
		held->lock_id = lock_id;
		held->req_id = req.id;
		held->file = file;
		held->owner = get_pid(task_pid(current));
		held->manager = req.manager;
		hash_add(sdsm_sync.held, &held->hnode, lock_id);
		held = NULL;
		sdsm_stat_inc(SDSM_STAT_LOCK_ACQUIRES);
		if (req.waited)
			sdsm_stat_inc(SDSM_STAT_LOCK_WAITS);
	}
out_unlock:
	mutex_unlock(&sdsm_sync.lock);
	sdsm_sync_free(held);
	return ret;
}

static int sdsm_sync_release(struct file *file, u64 lock_id)
{
	struct sdsm_rc_publish pub;
	struct sdsm_sync_held *held;
	struct xarray since;
	int ret = -EPERM, rc_err;

	/* Only the holder releases: nobody else publishes to the lock. */
	sdsm_rc_pub_start(&pub, &since, SDSM_WIRE_NOTICES_LOCK, lock_id,
			  sdsm_sync_lock_manager(lock_id));
	rc_err = sdsm_sync_rc_release(&pub);
	mutex_lock(&sdsm_sync.lock);
	held = sdsm_sync_held_find(file, lock_id);
	if (held) {
		ret = held->lost ? -EHOSTDOWN : 0;
		if (!held->lost && !rc_err)
			rc_err = sdsm_sync_rc_publish(held->manager,
						      SDSM_WIRE_NOTICES_LOCK,
						      lock_id, &pub);
		sdsm_sync_held_drop(held);
	}
	mutex_unlock(&sdsm_sync.lock);
	sdsm_rc_pub_destroy(&pub);
	return ret ? ret : rc_err;
}

int sdsm_sync_lock(struct file *file, struct sdsm_lock *cmd)
{
	if (cmd->flags)
		return -EOPNOTSUPP;
	switch (cmd->op) {
	case SDSM_LOCK_ACQUIRE:
		return sdsm_sync_acquire(file, cmd->lock_id, false,
					 cmd->timeout_ms);
	case SDSM_LOCK_TRY:
		if (cmd->timeout_ms)
			return -EINVAL;
		return sdsm_sync_acquire(file, cmd->lock_id, true, 0);
	case SDSM_LOCK_RELEASE:
		if (cmd->timeout_ms)
			return -EINVAL;
		return sdsm_sync_release(file, cmd->lock_id);
	}
	return -EINVAL;
}

int sdsm_sync_barrier(struct file *file, struct sdsm_barrier *cmd)
{
	u64 all = sdsm_sync_all_nodes();
	u64 mask = cmd->nodemask ? cmd->nodemask : all;
	struct sdsm_sync_req req = {
		.key = cmd->barrier_id,
		.nodemask = mask,
		.barrier = true,
	};
	struct sdsm_rc_publish pub;
	struct xarray since;
	int ret, rc_err;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved || (mask & ~all) ||
	    !(mask & BIT_ULL(sdsm_cl.node_id)))
		return -EINVAL;
	cmd->out_flags = 0;
	req.count = cmd->count ? cmd->count : hweight64(mask);
	req.manager = sdsm_sync_barrier_manager(req.key, mask);

	/*
	 * What rose since this node's last arrival at the barrier (at this
	 * manager: another node mask may mean another one): the manager's
	 * table keeps every generation's, so a node a generation departed
	 * without gets them at its next departure.
	 */
	sdsm_rc_pub_start(&pub, &since, SDSM_WIRE_NOTICES_BARRIER, req.key,
			  req.manager);
	rc_err = sdsm_sync_rc_release(&pub);
	mutex_lock(&sdsm_sync.lock);
	ret = sdsm_sync_req_start(&req);
	if (ret)
		goto out_unlock;
	if (!rc_err)
		rc_err = sdsm_sync_rc_publish(req.manager,
					      SDSM_WIRE_NOTICES_BARRIER,
					      req.key, &pub);
	sdsm_sync_req_send(&req, false, false);
	mutex_unlock(&sdsm_sync.lock);

	ret = sdsm_sync_req_wait(&req, cmd->timeout_ms);
	if (!ret) {
		sdsm_stat_inc(SDSM_STAT_BARRIER_WAITS);
		if (req.serial)
			cmd->out_flags = SDSM_BARRIER_OUT_SERIAL;
	}
out_unlock:
	mutex_unlock(&sdsm_sync.lock);
	sdsm_rc_pub_destroy(&pub);
	return ret ? ret : rc_err;
}

/* ------------------------------------------------------------------ */
/* Requester side: futexes                                             */

/* Send (or do locally) @type for futex call @req.  Locks: the lock. */
static void sdsm_futex_send(struct sdsm_sync_req *req, u16 type)
{
	unsigned int self = sdsm_cl.node_id;
	struct sdsm_wire_futex w = {
		.req_id = cpu_to_be64(req->id),
		.key = cpu_to_be64(req->key),
	};

	if (type != SDSM_MSG_FUTEX_CANCEL)
		w.bitset = cpu_to_be32(req->bitset);
	if (type == SDSM_MSG_FUTEX_WAKE)
		w.count = cpu_to_be32(req->count);
	if (req->manager != self) {
		sdsm_sync_queue(req->manager, type, &w, sizeof(w));
		return;
	}
	switch (type) {
	case SDSM_MSG_FUTEX_WAIT:
		sdsm_mgr_futex_wait(self, req->id, req->key, req->bitset);
		break;
	case SDSM_MSG_FUTEX_CANCEL:
		sdsm_mgr_futex_cancel(self, req->id, req->key);
		break;
	case SDSM_MSG_FUTEX_WAKE:
		sdsm_mgr_futex_wake(self, req->id, req->key, req->count,
				    req->bitset);
		break;
	}
}

/*
 * The futex at user address @addr: read its word into @val (which faults
 * the page in and so resolves its home), then find its key and its
 * manager, the home of its page.  A word that cannot be read gives the
 * page's error, -EHOSTDOWN if its home is down, else -EFAULT.
 */
static int sdsm_futex_resolve(u64 addr, u32 *val, u64 *key,
			      unsigned int *manager)
{
	struct mm_struct *mm = current->mm;
	struct sdsm_region *r;
	struct sdsm_page *pg;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	int fault, ret = -EFAULT;
	u64 idx;

	if (addr > ULONG_MAX - sizeof(u32))
		return -EFAULT;
	fault = get_user(*val, (u32 __user *)u64_to_user_ptr(addr));
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	r = sdsm_vma_region(vma_lookup(mm, addr), &idx, addr);
	mmap_read_unlock(mm);
	if (!r)
		return -EFAULT;
	*key = sdsm_region_offset(r) + (idx << PAGE_SHIFT) +
	       offset_in_page(addr);
	pg = sdsm_page_get(r, idx, false);
	if (pg) {
		lock = sdsm_page_lock(r, idx);
		mutex_lock(lock);
		if (pg->err) {
			ret = sdsm_page_err(pg);
		} else if (pg->home == SDSM_PROTO_NO_NODE ||
			   pg->home >= sdsm_cl.nr_nodes) {
			ret = -EFAULT;
		} else if (pg->home != sdsm_cl.node_id &&
			   !sdsm_node_usable(pg->home)) {
			/* Why the fault failed: not a bad address. */
			ret = -EHOSTDOWN;
		} else if (!fault) {
			*manager = pg->home;
			ret = 0;
		}
		mutex_unlock(lock);
	}
	sdsm_region_put(r);
	return ret;
}

/*
 * Sleep until @req is done (@queued: or queued), @deadline (NULL: none) or
 * a signal.  0, -ETIMEDOUT or -ERESTARTSYS.
 */
static int sdsm_futex_sleep(struct sdsm_sync_req *req, bool queued,
			    const ktime_t *deadline)
{
	ktime_t left;
	int ret;

#define SDSM_FUTEX_READY \
	(READ_ONCE(req->done) || (queued && READ_ONCE(req->queued)))
	if (!deadline)
		return wait_event_interruptible(sdsm_sync.wait,
						SDSM_FUTEX_READY);
	left = ktime_sub(*deadline, ktime_get());
	if (ktime_to_ns(left) <= 0)
		return SDSM_FUTEX_READY ? 0 : -ETIMEDOUT;
	ret = wait_event_interruptible_hrtimeout(sdsm_sync.wait,
						 SDSM_FUTEX_READY, left);
#undef SDSM_FUTEX_READY
	return ret == -ETIME ? -ETIMEDOUT : ret;
}

/*
 * End futex WAIT @req, which gives up for reason @err unless answered:
 * withdraw it at the manager and wait (bounded) for the answer, which
 * decides.  Returns with the lock held and @req out of sdsm_sync.reqs.
 */
static int sdsm_futex_finish(struct sdsm_sync_req *req, int err)
{
	/* The manager answers a cancel at once or is DOWN by then. */
	unsigned long cap = msecs_to_jiffies(2 * sdsm_cl.peer_timeout_ms +
					     1000);

	mutex_lock(&sdsm_sync.lock);
	if (!req->done) {
		req->cancel_err = err;
		sdsm_futex_send(req, SDSM_MSG_FUTEX_CANCEL);
		if (!req->done) {
			mutex_unlock(&sdsm_sync.lock);
			wait_event_timeout(sdsm_sync.wait,
					   READ_ONCE(req->done), cap);
			mutex_lock(&sdsm_sync.lock);
		}
		if (!req->done) {
			pr_warn_ratelimited("node %u did not answer a futex cancel in time\n",
					    req->manager);
			sdsm_sync_req_done(req, err);
		}
	}
	hash_del(&req->hnode);
	return req->status;
}

/* An absolute deadline on ktime_get() for a WAIT, or false: none. */
static bool sdsm_futex_deadline(const struct sdsm_futex *cmd,
				ktime_t *deadline)
{
	ktime_t t = ns_to_ktime(cmd->timeout_ns);

	if (cmd->timeout_ns < 0)
		return false;
	if (cmd->flags & SDSM_FUTEX_F_ABSTIME) {
		if (cmd->clockid == CLOCK_MONOTONIC) {
			*deadline = t;
			return true;
		}
		/* CLOCK_REALTIME, converted once: steps are not followed */
		t = ktime_sub(t, ktime_get_real());
		if (t < 0) {	/* passed; ktime_add_safe() wants t >= 0 */
			*deadline = ktime_add(ktime_get(), t);
			return true;
		}
	}
	*deadline = ktime_add_safe(ktime_get(), t);
	return true;
}

static int sdsm_futex_wait(struct sdsm_futex *cmd)
{
	struct sdsm_sync_req req = {
		.futex = true,
		.bitset = cmd->bitset,
	};
	/*
	 * A signal restarts a WAIT with no or an absolute timeout; with a
	 * relative one it gives EINTR (futex(2) would restart it through a
	 * restart block with the time left; glibc retries EINTR anyway).
	 */
	bool restart = cmd->timeout_ns < 0 ||
		       (cmd->flags & SDSM_FUTEX_F_ABSTIME);
	ktime_t deadline;
	bool timed = sdsm_futex_deadline(cmd, &deadline);
	u32 v;
	int ret, err;

	ret = sdsm_futex_resolve(cmd->addr, &v, &req.key, &req.manager);
	if (ret)
		return ret;
	if (v != cmd->val)
		return -EAGAIN;
	if (timed && ktime_compare(ktime_get(), deadline) >= 0)
		return -ETIMEDOUT;

	mutex_lock(&sdsm_sync.lock);
	ret = sdsm_sync_req_start(&req);
	if (ret) {
		mutex_unlock(&sdsm_sync.lock);
		return ret;
	}
	sdsm_futex_send(&req, SDSM_MSG_FUTEX_WAIT);
	mutex_unlock(&sdsm_sync.lock);

	/* Queued at the manager first, then the value again. */
	err = sdsm_futex_sleep(&req, true, timed ? &deadline : NULL);
	if (!err && !READ_ONCE(req.done)) {
		smp_mb();	/* the QUEUED answer before the second read */
		if (get_user(v, (u32 __user *)u64_to_user_ptr(cmd->addr)))
			err = -EFAULT;
		else if (v != cmd->val)
			err = -EAGAIN;
		else
			err = sdsm_futex_sleep(&req, false,
					       timed ? &deadline : NULL);
	}
	if (err == -ERESTARTSYS && !restart)
		err = -EINTR;
	ret = sdsm_futex_finish(&req, err);
	mutex_unlock(&sdsm_sync.lock);
	return ret;
}

static int sdsm_futex_wake(struct sdsm_futex *cmd)
{
	struct sdsm_sync_req req = {
		.futex = true,
		.bitset = cmd->bitset,
		.count = cmd->val,
	};
	/* The manager answers at once or is DOWN by then. */
	unsigned long cap = msecs_to_jiffies(2 * sdsm_cl.peer_timeout_ms +
					     1000);
	struct sdsm_rc_publish pub;
	struct xarray since;
	int ret, rc_err;
	long t;
	u32 v;

	/*
	 * The caller's stores before the WAKE: with MSI each is visible on
	 * every node once its write fault returned; order them before the
	 * message all the same.
	 */
	smp_mb();
	ret = sdsm_futex_resolve(cmd->addr, &v, &req.key, &req.manager);
	if (ret)
		return ret;
	/*
	 * A release, as a lock's: the stores of release regions reach their
	 * homes, and their notices go to the futex's manager ahead of the
	 * WAKE, for the waiters it queues or wakes.  Threads of this node
	 * may publish to one futex at once: each publish gathers what rose
	 * since a record it copied, and the record only ever rises.
	 */
	sdsm_rc_pub_start(&pub, &since, SDSM_WIRE_NOTICES_FUTEX, req.key,
			  req.manager);
	rc_err = sdsm_sync_rc_release(&pub);
	mutex_lock(&sdsm_sync.lock);
	ret = sdsm_sync_req_start(&req);
	if (ret)
		goto out_unlock;
	if (!rc_err)
		rc_err = sdsm_sync_rc_publish(req.manager,
					      SDSM_WIRE_NOTICES_FUTEX,
					      req.key, &pub);
	sdsm_futex_send(&req, SDSM_MSG_FUTEX_WAKE);
	if (!req.done) {
		mutex_unlock(&sdsm_sync.lock);
		t = wait_event_killable_timeout(sdsm_sync.wait,
						READ_ONCE(req.done), cap);
		mutex_lock(&sdsm_sync.lock);
		if (!req.done)
			sdsm_sync_req_done(&req, t < 0 ? -EINTR : -ETIMEDOUT);
	}
	hash_del(&req.hnode);
	ret = req.status ? req.status : rc_err;
	cmd->woken = req.woken;
out_unlock:
	mutex_unlock(&sdsm_sync.lock);
	sdsm_rc_pub_destroy(&pub);
	return ret;
}

int sdsm_sync_futex(struct file *file, struct sdsm_futex *cmd)
{
	if (cmd->flags & ~SDSM_FUTEX_F_ABSTIME)
		return -EOPNOTSUPP;
	if (cmd->__reserved || !cmd->bitset ||
	    (cmd->clockid != CLOCK_REALTIME &&
	     cmd->clockid != CLOCK_MONOTONIC) ||
	    !IS_ALIGNED(cmd->addr, sizeof(u32)))
		return -EINVAL;
	cmd->woken = 0;
	switch (cmd->op) {
	case SDSM_FUTEX_WAIT:
		return sdsm_futex_wait(cmd);
	case SDSM_FUTEX_WAKE:
		if (cmd->flags || !cmd->val)
			return -EINVAL;
		return sdsm_futex_wake(cmd);
	}
	return -EINVAL;
}

void sdsm_sync_release_file(struct file *file)
{
	struct sdsm_sync_held *held;
	struct hlist_node *tmp;
	int bkt;

	mutex_lock(&sdsm_sync.lock);
	hash_for_each_safe(sdsm_sync.held, bkt, tmp, held, hnode)
		if (held->file == file)
			sdsm_sync_held_drop(held);
	mutex_unlock(&sdsm_sync.lock);
}

/* ------------------------------------------------------------------ */
/* Init and exit                                                       */

static void sdsm_sync_handlers_unregister(unsigned int n)
{
	while (n--)
		sdsm_handler_unregister(sdsm_sync_handlers[n].type);
}

int sdsm_sync_init(void)
{
	unsigned int i;
	int ret;

	mutex_init(&sdsm_sync.lock);
	hash_init(sdsm_sync.reqs);
	hash_init(sdsm_sync.held);
	hash_init(sdsm_sync.locks);
	hash_init(sdsm_sync.barriers);
	hash_init(sdsm_sync.futexes);
	hash_init(sdsm_sync.rc_tables);
	hash_init(sdsm_sync.rc_since);
	memset(sdsm_sync.futex_waiters, 0, sizeof(sdsm_sync.futex_waiters));
	init_waitqueue_head(&sdsm_sync.wait);
	atomic_set(&sdsm_sync.objects, 0);
	for (i = 0; i < ARRAY_SIZE(sdsm_sync_handlers); i++) {
		ret = sdsm_handler_register(sdsm_sync_handlers[i].type,
					    sdsm_sync_handlers[i].fn);
		if (ret) {
			pr_err("cannot register the handler of message type %#x: %d\n",
			       sdsm_sync_handlers[i].type, ret);
			goto out_unregister_handlers;
		}
	}
	ret = sdsm_peer_notifier_register(&sdsm_sync_peer_nb);
	if (ret)
		goto out_unregister_handlers;
	mutex_lock(&sdsm_sync.lock);
	sdsm_sync.running = true;
	/*
	 * Peers that came up before the notifier was registered: the state
	 * turns UP before the UP event and DOWN before the DOWN event, and
	 * events after the registration serialize with us on the lock.
	 */
	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		if (i != sdsm_cl.node_id && sdsm_node_up(i))
			sdsm_sync.peers[i].up = true;
	mutex_unlock(&sdsm_sync.lock);
	return 0;

out_unregister_handlers:
	sdsm_sync_handlers_unregister(i);
	return ret;
}

void sdsm_sync_exit(void)
{
	struct sdsm_rc_since *rs;
	struct sdsm_rc_table *t;
	struct sdsm_mgr_barrier *mb;
	struct sdsm_mgr_waiter *w, *wt;
	struct sdsm_mgr_lock *ml;
	struct sdsm_sync_held *held;
	struct sdsm_sync_req *req;
	struct hlist_node *tmp;
	int bkt, left;

	sdsm_peer_notifier_unregister(&sdsm_sync_peer_nb);
	/* Waits for running handlers; none runs afterwards. */
	sdsm_sync_handlers_unregister(ARRAY_SIZE(sdsm_sync_handlers));

	mutex_lock(&sdsm_sync.lock);
	sdsm_sync.running = false;
	/* No file is open, so no ioctl waits; fail any all the same. */
	hash_for_each(sdsm_sync.reqs, bkt, req, hnode)
		if (!req->done)
			sdsm_sync_req_done(req, -EHOSTDOWN);

	hash_for_each_safe(sdsm_sync.locks, bkt, tmp, ml, hnode) {
		list_for_each_entry_safe(w, wt, &ml->waiters, node) {
			list_del(&w->node);
			sdsm_sync_free(w);
		}
		hash_del(&ml->hnode);
		sdsm_sync_free(ml);
	}
	hash_for_each_safe(sdsm_sync.barriers, bkt, tmp, mb, hnode)
		sdsm_mgr_barrier_end(mb, SDSM_SYNC_HOSTDOWN, SDSM_MAX_NODES);
	sdsm_mgr_futex_drop(SDSM_MAX_NODES);
	hash_for_each_safe(sdsm_sync.rc_tables, bkt, tmp, t, hnode)
		sdsm_rc_table_free(t);
	hash_for_each_safe(sdsm_sync.rc_since, bkt, tmp, rs, hnode)
		sdsm_rc_since_free(rs);
	hash_for_each_safe(sdsm_sync.held, bkt, tmp, held, hnode) {
		hash_del(&held->hnode);
		sdsm_sync_held_free(held);
	}
	/* Not running: the teardown above queued nothing. */
	mutex_unlock(&sdsm_sync.lock);

	left = atomic_read(&sdsm_sync.objects);
	if (left)
		pr_err("locks/barriers: %d objects leaked\n", left);
}
