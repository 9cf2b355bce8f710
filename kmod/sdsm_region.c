// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm regions and placement: the region table, cluster-wide create / open /
 * destroy, policy ranges, page managers, and their ioctls and sysfs files.
 *
 * Regions.  Region 0 ("default") exists on every node from module load,
 * identical without any message.  A named region gets an id without
 * coordination: the creating node's id in the high bits, a per-node counter
 * below.  Its name is serialized by a registrar, node hash(name) % nodes:
 * the creator CLAIMs the name there (the registrar records the region, or
 * answers with the region that already has the name), then sends ADD to
 * every other node that is up and waits for their answers, so when CREATE
 * returns every reachable node knows the region.  A node that comes up
 * later gets every region (and policy range) from every peer.  OPEN by name
 * is then a local lookup on any node.  A node may know the region before
 * the creator's ADD reached the others (as its registrar, from the
 * registrar's answer to a CREATE of its own, from its ADD), so the first
 * CREATE or OPEN that returns an existing region to a process here sends
 * ADD once more itself (sdsm_region_announce()): a fault must not reach a
 * node that does not know the region yet.
 *
 * Destroy is two-phase: PREPARE to every node (each refuses with EBUSY if a
 * VMA of its maps the region, else stops new mmaps), then COMMIT or ABORT.
 * Memory is freed when the last reference goes (VMAs, faults waiting with
 * the mmap lock dropped, handlers).  Destroy and SET_POLICY need every node
 * up (EHOSTDOWN), since a node that misses them would act on stale state.
 * A node remembers the ids destroyed for a while (sdsm_tombstones), those
 * of undone creates it never learned too, so that a registrar's answer
 * overtaken by the destroy does not bring one back here.  A node that
 * does not have the region counts as done (it is gone there already), but
 * it may yet learn the region before the decision (the creator learns its
 * own from the registrar's answer, and the others from the creator's ADD,
 * while the registrar may already destroy it): its vote is a preparation
 * without the region (sdsm_absent_votes), ended by the decision, in doubt
 * when the destroyer goes down, and a region learned meanwhile is learned
 * prepared by that destroy, so that a COMMIT removes it here too.
 *
 * Destroys in doubt (the rules: sdsm_destroy.c, checked by
 * tests/host/test_destroy.c).  The destroyer commits only if every node
 * voted yes and no node's session with it ended since its PREPARE.  A node
 * whose destroyer went down (its session ended) while the region was
 * prepared here cannot learn the decision from it any more: the region is
 * in doubt, and a work item asks every other node that is up, but the
 * destroyer (REGION_QUERY).  One that saw the COMMIT (its tombstone)
 * says so: commit.  One that has it prepared by a destroyer still up there
 * may yet see it: ask again later.  Otherwise no node can have committed
 * but the destroyer itself: abort, and the region is usable again.  A
 * destroyer cut off after it decided to commit and before any COMMIT
 * arrived keeps its region destroyed while the others keep it, and so
 * does a node whose in-doubt round could not reach a node that saw the
 * COMMIT (a partition); a destroy from a node that has the region then
 * removes it everywhere.
 *
 * Placement.  Every page has a static manager: its home under the region's
 * creation policy if that computes homes (INTERLEAVE, BIND to one node),
 * else the region's manager if it was created with one
 * (SDSM_REGION_F_MANAGER: a process's heap, whose pages that process's node
 * places without a message), else the page's interleave over all nodes.
 * Pages whose range still follows an INTERLEAVE creation policy
 * have a computable home (the manager itself) and need no message.  Other
 * pages (BIND, PREFERRED, FIRST_TOUCH, and any range changed by SET_POLICY)
 * get their home from the manager at a node's first fault; the manager
 * fixes it at the first touch by anyone and every node caches the answer.
 * A manager whose own directory already served the page (touched under the
 * computable rule before a SET_POLICY) answers itself, so a page never gets
 * two homes.  SET_POLICY therefore changes only pages that nobody touched,
 * as mbind(2) without MPOL_MF_MOVE.  A node that computed the manager as
 * home before a SET_POLICY reached it, while the manager already fixed
 * another home, is refused (NACK ESTALE, sdsm_coh_home() in sdsm_mem.c)
 * and asks the manager.
 *
 * Owned regions (SDSM_REGION_F_OWNED).  Creating one records (file, id) on
 * sdsm_owned; when the file is released (no process holds it any more),
 * its records move to sdsm_reclaim and a work item destroys each region
 * as the DESTROY ioctl does, from a kernel thread (the releasing task may
 * be dying).  EBUSY (mapped by a process of another node), EHOSTDOWN and
 * ETIMEDOUT are retried every second, for at most sdsm_reclaim_tries
 * seconds, then the region is left with a warning; "sdsmctl region
 * destroy" removes it later.
 *
 * Permissions.  A region has an owner (the creator's effective uid and gid)
 * and permission bits, as a SysV shared memory segment does; both travel
 * with the region to every node, which checks them itself: OPEN (and
 * CREATE of an existing name) and mmap need read permission, a writable
 * mapping and SET_POLICY write permission, DESTROY the owner.  Uids are
 * numbers in the initial user namespace and must mean the same user on
 * every node, as with NFS's AUTH_SYS.  The default region is root's, mode
 * 0666: who may open /dev/sdsm may use it.
 *
 * Locks: sdsm_regions_mutex serializes changes of the table and of policy
 * ranges, name lookups and iteration (it may be held while taking page
 * mutexes, never the other way).  The xarray's lock makes lookups by id
 * safe against removal (kref_get_unless_zero under it).  region->lock
 * protects nr_maps against dying, and the policy list for readers.
 * Cluster calls wait with no lock held.  sdsm_owned_lock protects
 * sdsm_owned and sdsm_reclaim (never held across a call).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/jhash.h>
#include <linux/kstrtox.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "sdsm_destroy.h"
#include "sdsm_mem.h"
#include "sdsm_sync.h"

static unsigned int max_region_mb = 4096;
module_param(max_region_mb, uint, 0444);
MODULE_PARM_DESC(max_region_mb,
		 "largest region SDSM_IOC_REGION_CREATE accepts, MiB (1..1048576, default 4096)");

static DEFINE_XARRAY(sdsm_regions);
static DEFINE_MUTEX(sdsm_regions_mutex);
static unsigned int sdsm_region_counter;	/* under sdsm_regions_mutex */

/*
 * Ids destroyed lately (here, or taken back from the cluster before this
 * node learned them), each with the jiffies when it may be learned again,
 * under sdsm_regions_mutex.  A registrar's answer sent
 * before a destroy reached it can arrive after the destroy committed
 * here; learning from it would bring the region back on this node only.
 * Answers older than sdsm_fault_timeout_ms are ignored by their call, so
 * twice that is long enough.
 */
static DEFINE_XARRAY(sdsm_tombstones);
/* Ids a create tries while nodes refuse them as stale (a tombstone). */
#define SDSM_CREATE_TRIES	16

/*
 * Ids whose PREPARE this node answered without having the region, each
 * with the token of that destroy and SDSM_VOTE_IN_DOUBT once its destroyer
 * went down (an xarray value: tokens are below 2^62), until its decision
 * arrives or a round makes it here; a region learned meanwhile takes the
 * vote over.  Never an id of a region here.  Under sdsm_regions_mutex.
 */
static DEFINE_XARRAY(sdsm_absent_votes);
#define SDSM_VOTE_IN_DOUBT	BIT_ULL(62)

static u64 sdsm_vote_token(const void *vote)
{
	return xa_to_value(vote) & ~SDSM_VOTE_IN_DOUBT;
}

/* Does @id have a tombstone that has not expired?  Locks: RCU only. */
static bool sdsm_tombstone_live(u32 id)
{
	void *v = xa_load(&sdsm_tombstones, id);

	return v && time_before(jiffies, xa_to_value(v));
}

/* Is @id destroyed lately?  Locks: table. */
static bool sdsm_tombstone_check(u32 id)
{
	lockdep_assert_held(&sdsm_regions_mutex);
	return sdsm_tombstone_live(id);
}

/*
 * Region @id goes: it is not learned again for a while.  The stones that
 * expired are swept here, so the table holds only the destroys of the
 * last window.  Locks: table.
 */
static void sdsm_tombstone_add(u32 id)
{
	unsigned long until = jiffies +
			      2 * msecs_to_jiffies(sdsm_fault_timeout_ms);
	unsigned long i;
	void *v;

	lockdep_assert_held(&sdsm_regions_mutex);
	xa_for_each(&sdsm_tombstones, i, v)
		if (time_after_eq(jiffies, xa_to_value(v)))
			xa_erase(&sdsm_tombstones, i);
	/* Without memory, only the stale-answer window stays open. */
	xa_store(&sdsm_tombstones, id, xa_mk_value(until & LONG_MAX),
		 GFP_KERNEL);
}

/**
 * sdsm_region_gone - was region @id destroyed here lately?
 * @id: region id
 *
 * For write notices that arrive after their region's destroy (see
 * sdsm_sync_rc_forget()).  Unlike sdsm_tombstone_check(), without
 * sdsm_regions_mutex: xa_load() is safe under RCU and neither entry is
 * dereferenced.  A tombstone is added before its region is removed, and
 * both before the removal's sdsm_sync_rc_forget() takes the sync lock,
 * so a caller that holds that lock after the forget sees the tombstone.
 *
 * Context: any; takes no lock but RCU.
 */
bool sdsm_region_gone(u32 id)
{
	return sdsm_tombstone_live(id) && !xa_load(&sdsm_regions, id);
}

/* A region of SDSM_REGION_F_OWNED and the file it belongs to. */
struct sdsm_owned {
	struct list_head node;
	const struct file *file;
	u32 id;
	unsigned int tries;
};

#define SDSM_RECLAIM_TRIES	30	/* one a second */

static DEFINE_SPINLOCK(sdsm_owned_lock);
static LIST_HEAD(sdsm_owned);
static LIST_HEAD(sdsm_reclaim);
static void sdsm_reclaim_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(sdsm_reclaim_work, sdsm_reclaim_fn);
static void sdsm_in_doubt_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(sdsm_in_doubt_work, sdsm_in_doubt_fn);

/*
 * Test only: the destroyer of a region sleeps this long between the votes
 * and its decision, so a test can cut it off then (mem_destroy_in_doubt).
 */
static unsigned int sdsm_inject_destroy_stall_ms;
module_param_named(inject_destroy_stall_ms, sdsm_inject_destroy_stall_ms,
		   uint, 0644);
MODULE_PARM_DESC(inject_destroy_stall_ms,
		 "test only: a destroyer's pause before it decides, ms (max 60000; 0 ends it)");

/*
 * Test only: a creator sleeps this long between its registrar's answer
 * and learning the region, as a creating thread starved of CPU does, so
 * that a destroy can overtake it (mem_destroy_overtakes_create).
 */
static unsigned int sdsm_inject_learn_delay_ms;
module_param_named(inject_learn_delay_ms, sdsm_inject_learn_delay_ms,
		   uint, 0644);
MODULE_PARM_DESC(inject_learn_delay_ms,
		 "test only: a creator's pause before it learns its region from the registrar, ms (max 60000; 0 ends it)");

static struct kobject *sdsm_regions_kobj;

/* ------------------------------------------------------------------ */
/* Cluster calls: a request to some nodes, the REPLY messages, a bounded wait */

/**
 * struct sdsm_call - a request waiting for answers
 * @node: on sdsm_calls
 * @cookie: sent with the request, echoed in the answers
 * @waiting: nodes that have not answered
 * @status: first error (positive errno) an answer or a death reported
 * @home: HOME_REP: the answer
 * @next: HOME_REP: what it told of the next pages (struct sdsm_wire_home)
 * @have_region: REPLY carried a region
 * @region: that region
 * @enoent_ok: an answer ENOENT counts as success (a destroy: a node that
 *	does not have the region is done)
 *
 * Locks: sdsm_calls_lock protects everything but @node's owner fields set
 * before the call is listed.
 */
struct sdsm_call {
	struct list_head node;
	u64 cookie;
	u64 waiting;
	int status;
	s32 home;
	u8 next[SDSM_WIRE_HOME_NEXT];
	bool have_region;
	bool enoent_ok;
	struct sdsm_wire_region region;
};

static LIST_HEAD(sdsm_calls);
static DEFINE_SPINLOCK(sdsm_calls_lock);
static DECLARE_WAIT_QUEUE_HEAD(sdsm_calls_wq);
static atomic64_t sdsm_cookie_seq;

static void sdsm_call_start(struct sdsm_call *call, u64 waiting)
{
	memset(call, 0, sizeof(*call));
	call->cookie = atomic64_inc_return(&sdsm_cookie_seq);
	call->waiting = waiting;
	spin_lock(&sdsm_calls_lock);
	list_add(&call->node, &sdsm_calls);
	spin_unlock(&sdsm_calls_lock);
}

static bool sdsm_call_done(struct sdsm_call *call)
{
	bool done;

	spin_lock(&sdsm_calls_lock);
	done = !call->waiting;
	spin_unlock(&sdsm_calls_lock);
	return done;
}

/* Wait up to @ms for every answer; return 0 or a negative errno. */
static int sdsm_call_wait_ms(struct sdsm_call *call, unsigned int ms)
{
	long left;
	int ret;

	left = wait_event_killable_timeout(sdsm_calls_wq, sdsm_call_done(call),
					   msecs_to_jiffies(ms));
	spin_lock(&sdsm_calls_lock);
	list_del(&call->node);
	if (call->status)
		ret = -call->status;
	else if (left < 0)
		ret = -EINTR;
	else if (call->waiting)
		ret = -ETIMEDOUT;
	else
		ret = 0;
	spin_unlock(&sdsm_calls_lock);
	return ret;
}

/* Wait up to fault_timeout_ms for every answer. */
static int sdsm_call_wait(struct sdsm_call *call)
{
	return sdsm_call_wait_ms(call, sdsm_fault_timeout_ms);
}

/*
 * Answer @cookie from @src: @status a positive errno; a HOME_REP's @home
 * and @next (NULL for a REPLY), a REPLY's @region (or NULL).
 */
static void sdsm_call_answer(u16 src, u64 cookie, int status, s32 home,
			     const u8 *next,
			     const struct sdsm_wire_region *region)
{
	struct sdsm_call *call;

	spin_lock(&sdsm_calls_lock);
	list_for_each_entry(call, &sdsm_calls, node) {
		if (call->cookie != cookie || !(call->waiting & BIT_ULL(src)))
			continue;
		call->waiting &= ~BIT_ULL(src);
		if (status == ENOENT && call->enoent_ok)
			status = 0;
		if (status && !call->status)
			call->status = status;
		call->home = home;
		if (next)
			memcpy(call->next, next, sizeof(call->next));
		if (region) {
			call->region = *region;
			call->have_region = true;
		}
		break;
	}
	spin_unlock(&sdsm_calls_lock);
	wake_up_all(&sdsm_calls_wq);
}

/* Answer request @cookie of node @dst: REPLY, @status a positive errno. */
void sdsm_reply(u16 dst, u64 cookie, int status,
		const struct sdsm_wire_region *region)
{
	struct sdsm_wire_reply w = {
		.cookie = cpu_to_be64(cookie),
		.status = cpu_to_be32(status),
	};

	if (!cookie)
		return;
	if (region)
		w.region = *region;
	sdsm_queue(dst, SDSM_MSG_REPLY, &w, sizeof(w), NULL);
}

/* Nodes other than this one that are up now. */
static u64 sdsm_up_peers(void)
{
	u64 mask = 0;
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		if (i != sdsm_cl.node_id && sdsm_node_up(i))
			mask |= BIT_ULL(i);
	return mask;
}

static u64 sdsm_all_peers(void)
{
	return GENMASK_ULL(sdsm_cl.nr_nodes - 1, 0) & ~BIT_ULL(sdsm_cl.node_id);
}

/* Epochs only grow: the sum changes when a node of @mask lost messages. */
static u64 sdsm_mask_epochs(u64 mask)
{
	unsigned int i;
	u64 sum = 0;

	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		if (mask & BIT_ULL(i))
			sum += sdsm_node_epoch(i);
	return sum;
}

static void sdsm_send_mask(u64 mask, u16 type, const void *payload, u32 len)
{
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		if (mask & BIT_ULL(i))
			sdsm_queue(i, type, payload, len, NULL);
}

/* ------------------------------------------------------------------ */
/* Policies                                                            */

static u64 sdsm_all_nodes(void)
{
	return GENMASK_ULL(sdsm_cl.nr_nodes - 1, 0);
}

/* Check @p as user input and fill in the defaults; 0 or -EINVAL. */
static int sdsm_policy_check(struct sdsm_policy *p)
{
	u64 all = sdsm_all_nodes();

	switch (p->mode) {
	case SDSM_POLICY_INTERLEAVE:
	case SDSM_POLICY_BIND:
		if (p->preferred_node || (p->nodemask & ~all))
			return -EINVAL;
		if (!p->nodemask)
			p->nodemask = all;
		if (p->mode == SDSM_POLICY_BIND) {
			if (p->block_size)
				return -EINVAL;
			break;
		}
		if (p->block_size % PAGE_SIZE ||
		    p->block_size > SDSM_REGION_MAX_BYTES)
			return -EINVAL;
		if (!p->block_size)
			p->block_size = PAGE_SIZE;
		break;
	case SDSM_POLICY_PREFERRED:
		if (p->preferred_node >= sdsm_cl.nr_nodes || p->nodemask ||
		    p->block_size)
			return -EINVAL;
		break;
	case SDSM_POLICY_FIRST_TOUCH:
		if (p->preferred_node || p->nodemask || p->block_size)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* The page of @idx in a rotation over @mask, @block bytes per node. */
static u16 sdsm_interleave(u64 mask, u64 block, u64 idx)
{
	u64 bpages = max_t(u64, block >> PAGE_SHIFT, 1);
	unsigned int n = hweight64(mask), k, bit;
	u32 rem;

	if (WARN_ON_ONCE(!n))
		return 0;
	div_u64_rem(div64_u64(idx, bpages), n, &rem);
	k = rem;
	for_each_set_bit(bit, (unsigned long *)&mask, 64)
		if (!k--)
			return bit;
	return 0;
}

/*
 * True if @p names every page's home by itself: interleave, or bind to a
 * single node.  Such a page's home is its manager, computed anywhere.
 */
static bool sdsm_policy_computes_home(const struct sdsm_policy *p)
{
	return p->mode == SDSM_POLICY_INTERLEAVE ||
	       (p->mode == SDSM_POLICY_BIND && hweight64(p->nodemask) == 1);
}

u16 sdsm_page_manager(const struct sdsm_region *r, u64 idx)
{
	if (sdsm_policy_computes_home(&r->policy))
		return sdsm_interleave(r->policy.nodemask,
				       r->policy.block_size, idx);
	if (r->manager != SDSM_PROTO_NO_NODE)
		return r->manager;
	return sdsm_interleave(sdsm_all_nodes(), PAGE_SIZE, idx);
}

/* The policy of page @idx: true if a SET_POLICY range covers it. */
static bool sdsm_policy_of(struct sdsm_region *r, u64 idx,
			   struct sdsm_policy *p)
{
	struct sdsm_policy_range *pr;
	bool ranged = false;

	spin_lock(&r->lock);
	*p = r->policy;
	list_for_each_entry(pr, &r->policies, node) {
		if (idx >= pr->first && idx - pr->first < pr->npages) {
			*p = pr->policy;
			ranged = true;
			break;
		}
	}
	spin_unlock(&r->lock);
	return ranged;
}

bool sdsm_page_home_computable(struct sdsm_region *r, u64 idx)
{
	struct sdsm_policy p;

	return !sdsm_policy_of(r, idx, &p) && sdsm_policy_computes_home(&p);
}

/*
 * The home a page's manager has for it already: the one it fixed, else
 * this node if the page was touched here (before a first touch anywhere
 * else); -ENOENT if none.  Fixes nothing.  Locks: the page's mutex.
 */
static int sdsm_manager_fixed(const struct sdsm_page *pg)
{
	if (pg->mgr_home != SDSM_PROTO_NO_NODE)
		return pg->mgr_home;
	if (pg->flags & SDSM_PAGE_TOUCHED)
		return sdsm_cl.node_id;
	return -ENOENT;
}

/**
 * sdsm_manager_decide - the home of a page, at its manager
 * @r: region
 * @idx: page
 * @pg: its state here; NULL if it has none (only if !@assign: a page
 *	without state here has no home fixed)
 * @requester: the node whose first touch this is
 * @assign: fix the home now if it is not yet (a fault); else only tell
 *
 * Return: a node id, or -ENOENT if !@assign and the page has no home yet.
 * Locks: the page's mutex, if @pg.
 */
int sdsm_manager_decide(struct sdsm_region *r, u64 idx, struct sdsm_page *pg,
			u16 requester, bool assign)
{
	struct sdsm_policy p;
	u64 mask;
	int home;

	if (WARN_ON_ONCE(!pg && assign))
		return -EIO;
	home = pg ? sdsm_manager_fixed(pg) : -ENOENT;
	if (home >= 0) {
		pg->mgr_home = home;
		return home;
	}
	sdsm_policy_of(r, idx, &p);
	switch (p.mode) {
	case SDSM_POLICY_INTERLEAVE:
		home = sdsm_interleave(p.nodemask, p.block_size, idx);
		break;
	case SDSM_POLICY_BIND:
		mask = p.nodemask;
		if (requester < 64 && (mask & BIT_ULL(requester)))
			home = requester;
		else
			home = sdsm_interleave(mask, PAGE_SIZE, idx);
		break;
	case SDSM_POLICY_PREFERRED:
		if (p.preferred_node == sdsm_cl.node_id ||
		    sdsm_node_up(p.preferred_node))
			home = p.preferred_node;
		else
			home = requester;
		break;
	default:
		home = requester;
		break;
	}
	if (WARN_ON_ONCE((unsigned int)home >= SDSM_MAX_NODES))
		return -EIO;
	if (!assign)
		return p.mode == SDSM_POLICY_INTERLEAVE ? home : -ENOENT;
	pg->mgr_home = home;
	return home;
}

/*
 * What this manager tells of the SDSM_WIRE_HOME_NEXT pages after @idx that
 * it manages, into @next (SDSM_WIRE_HOME_UNKNOWN for the others).  To a
 * fault (!@query): the homes it fixed already, so that a node reading a
 * run of pages learns their homes with the first and reads the rest ahead
 * (sdsm_prefetch()).  To a query of @src: the answer to a query of each,
 * SDSM_WIRE_HOME_NONE for no home yet, so that QUERY_HOME of a run of
 * pages asks once per SDSM_WIRE_HOME_NEXT + 1 of them.  Allocates nothing.
 * Locks: none (takes each page's mutex).
 */
static void sdsm_home_next(struct sdsm_region *r, u64 idx, u16 src,
			   bool query, u8 *next)
{
	struct sdsm_page *pg;
	struct mutex *lock;	/* the page's, sdsm_page_lock() */
	unsigned int i;
	int home;
	u64 j;

	memset(next, SDSM_WIRE_HOME_UNKNOWN, SDSM_WIRE_HOME_NEXT);
	for (i = 0; i < SDSM_WIRE_HOME_NEXT; i++) {
		j = idx + 1 + i;
		if (j >= r->npages)
			break;
		if (sdsm_page_manager(r, j) != sdsm_cl.node_id)
			continue;
		pg = sdsm_page_get(r, j, false);
		if (!pg && !query)
			continue;
		lock = sdsm_page_lock(r, j);
		mutex_lock(lock);
		if (query) {
			home = sdsm_manager_decide(r, j, pg, src, false);
			if (home >= 0)
				next[i] = home;
			else if (home == -ENOENT)
				next[i] = SDSM_WIRE_HOME_NONE;
		} else {
			home = sdsm_manager_fixed(pg);
			if (home >= 0)
				next[i] = home;
		}
		mutex_unlock(lock);
	}
}

/* HOME_REQ at the page's manager. */
void sdsm_home_req_recv(u16 src, const struct sdsm_wire_home *w)
{
	struct sdsm_wire_home rep = *w;
	u64 idx = be64_to_cpu(w->page);
	struct sdsm_region *r;
	struct sdsm_page *pg;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	int home;

	memset(rep.next, SDSM_WIRE_HOME_UNKNOWN, sizeof(rep.next));
	r = sdsm_region_get(be32_to_cpu(w->region));
	if (!r) {
		home = -ENXIO;
		goto reply;
	}
	if (idx >= r->npages || sdsm_page_manager(r, idx) != sdsm_cl.node_id) {
		home = -EPROTO;
		goto out_put;
	}
	pg = sdsm_page_get(r, idx, true);
	if (!pg) {
		home = -ENOMEM;
		goto out_put;
	}
	lock = sdsm_page_lock(r, idx);
	mutex_lock(lock);
	home = sdsm_manager_decide(r, idx, pg, src,
				   be32_to_cpu(w->flags) & SDSM_WIRE_HOME_ASSIGN);
	mutex_unlock(lock);
	sdsm_home_next(r, idx, src, !!w->cookie, rep.next);
out_put:
	sdsm_region_put(r);
reply:
	rep.home = cpu_to_be32(home);
	sdsm_queue(src, SDSM_MSG_HOME_REP, &rep, sizeof(rep), NULL);
}

/*
 * Make pages [first, first + npages) follow @p from now on.
 * Locks: sdsm_regions_mutex.
 */
static int sdsm_policy_apply(struct sdsm_region *r, u64 first, u64 npages,
			     const struct sdsm_policy *p)
{
	struct sdsm_policy_range *pr, *tmp, *nr;

	lockdep_assert_held(&sdsm_regions_mutex);
	if (first >= r->npages || npages > r->npages - first || !npages)
		return -EINVAL;
	nr = kmalloc(sizeof(*nr), GFP_KERNEL);
	if (!nr)
		return -ENOMEM;
	nr->first = first;
	nr->npages = npages;
	nr->policy = *p;
	spin_lock(&r->lock);
	/* Ranges the new one hides completely are dropped. */
	list_for_each_entry_safe(pr, tmp, &r->policies, node) {
		if (pr->first >= first &&
		    pr->first + pr->npages <= first + npages) {
			list_del(&pr->node);
			r->nr_policies--;
			kfree(pr);
		}
	}
	if (r->nr_policies >= SDSM_MAX_POLICY_RANGES) {
		spin_unlock(&r->lock);
		kfree(nr);
		return -ENOSPC;
	}
	list_add(&nr->node, &r->policies);
	r->nr_policies++;
	spin_unlock(&r->lock);
	return 0;
}

static void sdsm_policy_to_wire(struct sdsm_wire_policy *w,
				const struct sdsm_policy *p)
{
	w->mode = cpu_to_be32(p->mode);
	w->preferred_node = cpu_to_be32(p->preferred_node);
	w->nodemask = cpu_to_be64(p->nodemask);
	w->block_size = cpu_to_be64(p->block_size);
}

static void sdsm_policy_from_wire(struct sdsm_policy *p,
				  const struct sdsm_wire_policy *w)
{
	p->mode = be32_to_cpu(w->mode);
	p->preferred_node = be32_to_cpu(w->preferred_node);
	p->nodemask = be64_to_cpu(w->nodemask);
	p->block_size = be64_to_cpu(w->block_size);
}

/* ------------------------------------------------------------------ */
/* The region table                                                    */

static void sdsm_region_release(struct kref *ref)
{
	struct sdsm_region *r = container_of(ref, struct sdsm_region, ref);
	struct sdsm_policy_range *pr, *tmp;

	sdsm_mem_region_free(r);
	list_for_each_entry_safe(pr, tmp, &r->policies, node)
		kfree(pr);
	kvfree(r->chunks);
	kvfree(r->home_chunks);
	kvfree(r->rc_chunks);
	kvfree(r->rc_sums);
	kfree(r);
}

void sdsm_region_put(struct sdsm_region *r)
{
	kref_put(&r->ref, sdsm_region_release);
}

struct sdsm_region *sdsm_region_get(u32 id)
{
	struct sdsm_region *r;

	xa_lock(&sdsm_regions);
	r = xa_load(&sdsm_regions, id);
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	xa_unlock(&sdsm_regions);
	return r;
}

/* A new mapping, unless the region is being destroyed. */
bool sdsm_region_map(struct sdsm_region *r)
{
	bool ok;

	spin_lock(&r->lock);
	ok = !r->dying;
	if (ok)
		r->nr_maps++;
	spin_unlock(&r->lock);
	return ok;
}

void sdsm_region_unmap(struct sdsm_region *r)
{
	spin_lock(&r->lock);
	if (!WARN_ON_ONCE(!r->nr_maps))
		r->nr_maps--;
	spin_unlock(&r->lock);
}

/*
 * May the current task access @r as @mask (MAY_READ | MAY_WRITE) asks?
 * The owner's bits apply to the owner, the group's to members of the
 * group, the others' to the rest; CAP_IPC_OWNER passes, as for SysV IPC
 * (ipcperms()).  Return 0 or -EACCES.
 */
int sdsm_region_permission(const struct sdsm_region *r, int mask)
{
	unsigned int granted = r->mode;

	mask &= MAY_READ | MAY_WRITE;
	if (uid_eq(current_euid(), r->uid))
		granted >>= 6;
	else if (in_egroup_p(r->gid))
		granted >>= 3;
	if ((mask & ~granted & 7) && !capable(CAP_IPC_OWNER))
		return -EACCES;
	return 0;
}

static bool sdsm_name_valid(const char *name)
{
	size_t len = strnlen(name, SDSM_NAME_MAX), i;

	if (!len || len == SDSM_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

static struct sdsm_region *sdsm_region_alloc(u32 id, const char *name,
					     u64 length,
					     const struct sdsm_policy *p,
					     u32 consistency)
{
	struct sdsm_region *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return NULL;
	kref_init(&r->ref);
	r->id = id;
	strscpy(r->name, name, sizeof(r->name));
	r->length = length;
	r->npages = length >> PAGE_SHIFT;
	r->policy = *p;
	r->manager = SDSM_PROTO_NO_NODE;
	spin_lock_init(&r->lock);
	spin_lock_init(&r->ra_lock);
	INIT_LIST_HEAD(&r->policies);
	atomic64_set(&r->pages_homed, 0);
	atomic64_set(&r->pages_cached, 0);
	sdsm_mem_region_init(r);
	r->nchunks = DIV_ROUND_UP(r->npages, SDSM_CHUNK_PAGES);
	r->chunks = kvcalloc(r->nchunks, sizeof(*r->chunks), GFP_KERNEL);
	if (!r->chunks)
		goto fail;
	r->home_chunks = kvcalloc(r->nchunks, sizeof(*r->home_chunks),
				  GFP_KERNEL);
	if (!r->home_chunks)
		goto fail_chunks;
	r->consistency = consistency;
	mutex_init(&r->rc_lock);
	if (consistency == SDSM_CONSISTENCY_RELEASE) {
		r->rc_chunks = kvcalloc(r->nchunks, sizeof(*r->rc_chunks),
					GFP_KERNEL);
		if (!r->rc_chunks)
			goto fail_home_chunks;
		r->rc_sums = kvcalloc(r->nchunks, sizeof(*r->rc_sums),
				      GFP_KERNEL);
		if (!r->rc_sums)
			goto fail_rc_chunks;
		sdsm_rc_region_init(r);
	}
	return r;

fail_rc_chunks:
	kvfree(r->rc_chunks);
fail_home_chunks:
	kvfree(r->home_chunks);
fail_chunks:
	kvfree(r->chunks);
fail:
	kfree(r);
	return NULL;
}

static const struct attribute_group sdsm_region_group;

/* Locks: sdsm_regions_mutex.  Takes over the caller's reference. */
static int sdsm_region_insert(struct sdsm_region *r)
{
	char name[16];
	int ret;

	lockdep_assert_held(&sdsm_regions_mutex);
	ret = xa_insert(&sdsm_regions, r->id, r, GFP_KERNEL);
	if (ret) {
		sdsm_region_put(r);
		return ret == -EBUSY ? -EEXIST : ret;
	}
	snprintf(name, sizeof(name), "%u", r->id);
	r->kobj = kobject_create_and_add(name, sdsm_regions_kobj);
	if (!r->kobj || sysfs_create_group(r->kobj, &sdsm_region_group))
		pr_warn("region %u: sysfs directory incomplete\n", r->id);
	return 0;
}

/* Locks: sdsm_regions_mutex.  Drops the table's reference. */
static void sdsm_region_remove(struct sdsm_region *r)
{
	lockdep_assert_held(&sdsm_regions_mutex);
	xa_erase(&sdsm_regions, r->id);
	kobject_put(r->kobj);
	r->kobj = NULL;
	sdsm_region_put(r);
}

/* Locks: sdsm_regions_mutex. */
static struct sdsm_region *sdsm_region_by_name(const char *name)
{
	struct sdsm_region *r;
	unsigned long id;

	lockdep_assert_held(&sdsm_regions_mutex);
	xa_for_each(&sdsm_regions, id, r)
		if (!strncmp(r->name, name, SDSM_NAME_MAX))
			return r;
	return NULL;
}

void sdsm_region_for_each(void (*fn)(struct sdsm_region *r, void *arg),
			  void *arg)
{
	struct sdsm_region *r;
	unsigned long id;

	mutex_lock(&sdsm_regions_mutex);
	xa_for_each(&sdsm_regions, id, r)
		fn(r, arg);
	mutex_unlock(&sdsm_regions_mutex);
}

static void sdsm_region_to_wire(struct sdsm_wire_region *w,
				const struct sdsm_region *r)
{
	memset(w, 0, sizeof(*w));
	w->id = cpu_to_be32(r->id);
	w->length = cpu_to_be64(r->length);
	sdsm_policy_to_wire(&w->policy, &r->policy);
	strscpy(w->name, r->name, sizeof(w->name));
	w->uid = cpu_to_be32(from_kuid(&init_user_ns, r->uid));
	w->gid = cpu_to_be32(from_kgid(&init_user_ns, r->gid));
	w->mode = cpu_to_be32(r->mode);
	w->consistency = cpu_to_be32(r->consistency);
	w->manager = cpu_to_be32(r->manager == SDSM_PROTO_NO_NODE ?
				 SDSM_MANAGER_INTERLEAVE : r->manager);
}

/*
 * A region's manager, as create and the wire give it: SDSM_MANAGER_INTERLEAVE
 * (none), or a node of the cluster for a policy that does not compute homes.
 * Return: the node, SDSM_PROTO_NO_NODE for none, or -EINVAL.
 */
static int sdsm_manager_check(u32 manager, const struct sdsm_policy *p)
{
	if (manager == SDSM_MANAGER_INTERLEAVE)
		return SDSM_PROTO_NO_NODE;
	if (manager >= sdsm_cl.nr_nodes || sdsm_policy_computes_home(p))
		return -EINVAL;
	return manager;
}

/*
 * A region described by node @src (this node for its own create); checked
 * like user input, and against this node's max_region_mb: a larger region
 * is refused with EFBIG and one log line, and nothing of it is kept here.
 * Locks: sdsm_regions_mutex.  Return 0 if known now (already or inserted).
 */
static int sdsm_region_learn(u16 src, const struct sdsm_wire_region *w)
{
	kuid_t uid = make_kuid(&init_user_ns, be32_to_cpu(w->uid));
	kgid_t gid = make_kgid(&init_user_ns, be32_to_cpu(w->gid));
	u32 mode = be32_to_cpu(w->mode);
	u32 consistency = be32_to_cpu(w->consistency);
	u32 id = be32_to_cpu(w->id);
	u64 length = be64_to_cpu(w->length);
	struct sdsm_region *r, *named;
	char name[SDSM_NAME_MAX];
	struct sdsm_policy p;
	int manager, ret;
	void *vote;

	lockdep_assert_held(&sdsm_regions_mutex);
	memcpy(name, w->name, sizeof(name));
	sdsm_policy_from_wire(&p, &w->policy);
	if (!id || id > SDSM_REGION_ID_MAX || !sdsm_name_valid(name) ||
	    !length || length % PAGE_SIZE ||
	    length > SDSM_REGION_MAX_BYTES || sdsm_policy_check(&p) ||
	    !uid_valid(uid) || !gid_valid(gid) || mode & ~0777U ||
	    consistency > SDSM_CONSISTENCY_RELEASE || w->__reserved)
		return -EINVAL;
	manager = sdsm_manager_check(be32_to_cpu(w->manager), &p);
	if (manager < 0)
		return manager;
	if (length > (u64)max_region_mb << 20) {
		pr_warn("node %u: region %u '%s' of %llu MiB refused: max_region_mb=%u here\n",
			src, id, name, length >> 20, max_region_mb);
		return -EFBIG;
	}
	r = xa_load(&sdsm_regions, id);
	named = sdsm_region_by_name(name);
	if (r && r == named)
		return 0;
	if (!r && sdsm_tombstone_check(id))
		return -ENOENT;	/* a stale answer about a destroyed region */
	if (r || named) {
		pr_warn("region %u '%s' from a peer conflicts with region %u '%s'\n",
			id, name, r ? r->id : named->id,
			r ? r->name : named->name);
		return -EEXIST;
	}
	r = sdsm_region_alloc(id, name, length, &p, consistency);
	if (!r)
		return -ENOMEM;
	r->uid = uid;
	r->gid = gid;
	r->mode = mode;
	r->manager = manager;
	/* A destroy this node voted on is under way: prepared by it. */
	vote = xa_load(&sdsm_absent_votes, id);
	if (vote) {
		r->dying = sdsm_vote_token(vote);
		r->in_doubt = xa_to_value(vote) & SDSM_VOTE_IN_DOUBT;
	}
	ret = sdsm_region_insert(r);
	if (!ret && vote) {
		xa_erase(&sdsm_absent_votes, id);
		if (r->in_doubt)
			mod_delayed_work(system_unbound_wq, &sdsm_in_doubt_work,
					 0);
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */

/*
 * CLAIM at the name's registrar: record the region, or tell the one that
 * has the name.  Locks: none.  Return 0 and fill @have if the name exists
 * compatibly (@have->id then differs from @w->id), or an errno.
 */
static int sdsm_region_claim(u16 src, const struct sdsm_wire_region *w,
			     struct sdsm_wire_region *have)
{
	struct sdsm_region *r;
	struct sdsm_policy p;
	int ret;

	sdsm_policy_from_wire(&p, &w->policy);
	mutex_lock(&sdsm_regions_mutex);
	r = sdsm_region_by_name(w->name);
	if (r) {
		ret = -EEXIST;
		if (!(be32_to_cpu(w->flags) & SDSM_WIRE_REGION_EXCL) &&
		    !r->dying && r->length == be64_to_cpu(w->length) &&
		    r->consistency == be32_to_cpu(w->consistency) &&
		    !sdsm_policy_check(&p) &&
		    !memcmp(&r->policy, &p, sizeof(p)) &&
		    sdsm_manager_check(be32_to_cpu(w->manager), &p) ==
		    r->manager) {
			sdsm_region_to_wire(have, r);
			ret = 0;
		}
	} else {
		ret = sdsm_region_learn(src, w);
		*have = *w;
	}
	mutex_unlock(&sdsm_regions_mutex);
	return ret;
}

/*
 * A destroy's token: its destroyer's node above bit 56, the cookie of its
 * call below (a counter that does not reach 2^56).
 */
static u64 sdsm_destroy_token(u16 node, u64 cookie)
{
	return ((u64)(node + 1) << 56) ^ cookie;
}

static unsigned int sdsm_destroy_token_node(u64 token)
{
	return (token >> 56) - 1;
}

/* Is the destroyer of @token up here, or this node? */
static bool sdsm_token_node_up(u64 token)
{
	unsigned int node = sdsm_destroy_token_node(token);

	return node == sdsm_cl.node_id || sdsm_node_up(node);
}

/*
 * Destroy phase 1 here: 0 or -EBUSY / -ENOENT.  Without the region, and
 * without a tombstone (a region destroyed here is not learned again), the
 * vote is kept as a preparation (sdsm_absent_votes): ENOENT, or EBUSY if
 * another destroy has one.  Locks: none.
 */
static int sdsm_region_prepare(u32 id, u64 token)
{
	struct sdsm_region *r;
	int ret = 0;

	BUILD_BUG_ON((u64)SDSM_MAX_NODES << 56 >= SDSM_VOTE_IN_DOUBT);
	mutex_lock(&sdsm_regions_mutex);
	r = xa_load(&sdsm_regions, id);
	if (!r) {
		ret = -ENOENT;
		/* Without memory, a region learned meanwhile stays here. */
		if (!sdsm_tombstone_check(id) &&
		    xa_insert(&sdsm_absent_votes, id, xa_mk_value(token),
			      GFP_KERNEL) == -EBUSY)
			ret = -EBUSY;
	} else {
		spin_lock(&r->lock);
		if (r->dying || r->nr_maps)
			ret = -EBUSY;
		else
			r->dying = token;
		spin_unlock(&r->lock);
	}
	mutex_unlock(&sdsm_regions_mutex);
	return ret;
}

/*
 * Destroy phase 2 here.  A release region committed (or one this node
 * never learned, that notices may have named) leaves its write notices
 * too, once sdsm_regions_mutex is dropped (sdsm_sync.c's lock is never
 * nested with it).
 */
static void sdsm_region_finish(u32 id, u64 token, bool commit)
{
	struct sdsm_region *r;
	bool forget = false;
	void *vote;

	mutex_lock(&sdsm_regions_mutex);
	vote = xa_load(&sdsm_absent_votes, id);
	if (vote && sdsm_vote_token(vote) == token)
		xa_erase(&sdsm_absent_votes, id);
	r = xa_load(&sdsm_regions, id);
	if (r && r->dying == token) {
		if (commit) {
			forget = r->consistency == SDSM_CONSISTENCY_RELEASE;
			sdsm_tombstone_add(id);
			sdsm_region_remove(r);
		} else {
			spin_lock(&r->lock);
			r->dying = 0;
			r->in_doubt = false;
			spin_unlock(&r->lock);
		}
	} else if (!r && commit) {
		/*
		 * An undone create this node never learned: a registrar's
		 * answer naming the region may still be on its way here (a
		 * create of the same name that opened it meanwhile).
		 */
		sdsm_tombstone_add(id);
		forget = true;
	}
	mutex_unlock(&sdsm_regions_mutex);
	if (forget)
		sdsm_sync_rc_forget(id);
}

/* On the wire, a view is the REPLY's status (sdsm_wire.h, REGION_QUERY). */
static int sdsm_destroy_view_errno(enum sdsm_destroy_view v)
{
	return v == SDSM_DESTROY_GONE ? -ENOENT :
	       v == SDSM_DESTROY_WAIT ? -EINPROGRESS : 0;
}

/* An answer, or the failed call's errno (no answer: WAIT). */
static enum sdsm_destroy_view sdsm_destroy_errno_view(int err)
{
	return err == -ENOENT ? SDSM_DESTROY_GONE :
	       err ? SDSM_DESTROY_WAIT : SDSM_DESTROY_KEPT;
}

/*
 * REGION_QUERY here, for a node whose destroyer of @id went down: this
 * node's view (sdsm_destroy_view()) as an errno.
 */
static int sdsm_region_query(u32 id)
{
	enum sdsm_destroy_view v;
	bool gone, in_doubt;
	struct sdsm_region *r;
	u64 token = 0;
	void *vote;

	mutex_lock(&sdsm_regions_mutex);
	r = xa_load(&sdsm_regions, id);
	if (r) {
		gone = false;
		spin_lock(&r->lock);
		token = r->dying;
		in_doubt = r->in_doubt;
		spin_unlock(&r->lock);
	} else {
		vote = xa_load(&sdsm_absent_votes, id);
		gone = sdsm_tombstone_check(id);
		if (vote)
			token = sdsm_vote_token(vote);
		in_doubt = vote && xa_to_value(vote) & SDSM_VOTE_IN_DOUBT;
	}
	mutex_unlock(&sdsm_regions_mutex);
	v = sdsm_destroy_view(gone, token != 0, in_doubt,
			      token && sdsm_token_node_up(token));
	return sdsm_destroy_view_errno(v);
}

/*
 * One round of questions about the destroy in doubt of region @id, to
 * every other node that is up but the destroyer @destroyer (back in a new
 * session, its word would count where its decision never arrived: a
 * node that asked the others before it came back may have aborted): how
 * it ends here.  Locks: none (it waits for answers).
 */
static enum sdsm_destroy_end sdsm_region_resolve(u32 id,
						 unsigned int destroyer)
{
	struct sdsm_wire_region w = { .id = cpu_to_be32(id) };
	struct sdsm_destroy_tally t = {};
	u64 up = sdsm_up_peers();
	struct sdsm_call call;
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		if (!(up & BIT_ULL(i)) || i == destroyer)
			continue;
		sdsm_call_start(&call, BIT_ULL(i));
		w.cookie = cpu_to_be64(call.cookie);
		sdsm_queue(i, SDSM_MSG_REGION_QUERY, &w, sizeof(w), NULL);
		sdsm_destroy_tally_add(&t,
				       sdsm_destroy_errno_view(sdsm_call_wait(&call)));
	}
	return sdsm_destroy_end(&t);
}

#define SDSM_IN_DOUBT_RETRY_MS	500

/*
 * The destroy in doubt here with the lowest id from @start on, of a region
 * or of a vote without one (the ids differ: a region takes its vote over),
 * or 0.  Locks: sdsm_regions_mutex.
 */
static u64 sdsm_in_doubt_next(unsigned long start, unsigned long *idp)
{
	struct sdsm_region *r;
	unsigned long id;
	u64 token = 0;
	void *vote;

	lockdep_assert_held(&sdsm_regions_mutex);
	xa_for_each_start(&sdsm_regions, id, r, start) {
		spin_lock(&r->lock);
		if (r->in_doubt)
			token = r->dying;
		spin_unlock(&r->lock);
		if (token) {
			*idp = id;
			break;
		}
	}
	xa_for_each_range(&sdsm_absent_votes, id, vote, start,
			  token ? *idp : ULONG_MAX) {
		if (xa_to_value(vote) & SDSM_VOTE_IN_DOUBT) {
			*idp = id;
			return sdsm_vote_token(vote);
		}
	}
	return token;
}

/*
 * Every destroy in doubt here is decided (see "Destroys in doubt" above),
 * or asked about again later.
 */
static void sdsm_in_doubt_fn(struct work_struct *work)
{
	unsigned long id, start = 0;
	enum sdsm_destroy_end end;
	bool again = false;
	u64 token;

	for (;;) {
		mutex_lock(&sdsm_regions_mutex);
		token = sdsm_in_doubt_next(start, &id);
		mutex_unlock(&sdsm_regions_mutex);
		if (!token)
			break;
		end = sdsm_region_resolve(id, sdsm_destroy_token_node(token));
		if (end == SDSM_DESTROY_AGAIN) {
			again = true;
		} else {
			pr_info("region %lu: destroy by node %u in doubt, %s\n",
				id, sdsm_destroy_token_node(token),
				end == SDSM_DESTROY_COMMIT ? "committed" :
							     "aborted");
			sdsm_region_finish(id, token,
					   end == SDSM_DESTROY_COMMIT);
		}
		start = id + 1;
	}
	if (again)
		queue_delayed_work(system_unbound_wq, &sdsm_in_doubt_work,
				   msecs_to_jiffies(SDSM_IN_DOUBT_RETRY_MS));
}

static void sdsm_policy_msg(u16 src, const struct sdsm_wire_policy_set *w)
{
	struct sdsm_region *r;
	struct sdsm_policy p;
	int ret;

	sdsm_policy_from_wire(&p, &w->policy);
	mutex_lock(&sdsm_regions_mutex);
	r = xa_load(&sdsm_regions, be32_to_cpu(w->region));
	if (!r)
		ret = -ENOENT;
	else if (sdsm_policy_check(&p))
		ret = -EINVAL;
	else
		ret = sdsm_policy_apply(r, be64_to_cpu(w->first),
					be64_to_cpu(w->npages), &p);
	mutex_unlock(&sdsm_regions_mutex);
	if (ret)
		pr_warn("node %u: policy for region %u not applied: %d\n", src,
			be32_to_cpu(w->region), ret);
	sdsm_reply(src, be64_to_cpu(w->cookie), -ret, NULL);
}

/* Region messages, in the order @peer sent them (sdsm_mem.c dispatches). */
void sdsm_region_msg(struct sdsm_peer *peer, u16 type, const void *payload,
		     u32 len)
{
	union {
		struct sdsm_wire_region region;
		struct sdsm_wire_policy_set policy;
		struct sdsm_wire_reply reply;
		struct sdsm_wire_home home;
	} u;
	struct sdsm_wire_region have;
	u16 src = peer->id;
	u64 cookie;
	int ret;

	switch (type) {
	case SDSM_MSG_REGION_CLAIM:
	case SDSM_MSG_REGION_ADD:
	case SDSM_MSG_REGION_PREPARE:
	case SDSM_MSG_REGION_COMMIT:
	case SDSM_MSG_REGION_ABORT:
	case SDSM_MSG_REGION_QUERY:
		if (len < sizeof(u.region))
			goto short_msg;
		memcpy(&u.region, payload, sizeof(u.region));
		u.region.name[SDSM_NAME_MAX - 1] = 0;
		cookie = be64_to_cpu(u.region.cookie);
		break;
	case SDSM_MSG_POLICY:
		if (len < sizeof(u.policy))
			goto short_msg;
		memcpy(&u.policy, payload, sizeof(u.policy));
		sdsm_policy_msg(src, &u.policy);
		return;
	case SDSM_MSG_REPLY:
		if (len < sizeof(u.reply))
			goto short_msg;
		memcpy(&u.reply, payload, sizeof(u.reply));
		sdsm_call_answer(src, be64_to_cpu(u.reply.cookie),
				 be32_to_cpu(u.reply.status), 0, NULL,
				 u.reply.region.id ? &u.reply.region : NULL);
		return;
	case SDSM_MSG_HOME_REP:
		if (len < sizeof(u.home))
			goto short_msg;
		memcpy(&u.home, payload, sizeof(u.home));
		sdsm_call_answer(src, be64_to_cpu(u.home.cookie), 0,
				 (s32)be32_to_cpu(u.home.home), u.home.next,
				 NULL);
		return;
	default:
		pr_warn_ratelimited("node %u: unexpected message type %u\n",
				    src, type);
		return;
	}

	switch (type) {
	case SDSM_MSG_REGION_CLAIM:
		memset(&have, 0, sizeof(have));
		ret = sdsm_region_claim(src, &u.region, &have);
		sdsm_reply(src, cookie, -ret, ret ? NULL : &have);
		break;
	case SDSM_MSG_REGION_ADD:
		mutex_lock(&sdsm_regions_mutex);
		ret = sdsm_region_learn(src, &u.region);
		mutex_unlock(&sdsm_regions_mutex);
		sdsm_reply(src, cookie, -ret, NULL);
		break;
	case SDSM_MSG_REGION_PREPARE:
		ret = sdsm_region_prepare(be32_to_cpu(u.region.id),
					  sdsm_destroy_token(src, cookie));
		sdsm_reply(src, cookie, -ret, NULL);
		break;
	case SDSM_MSG_REGION_COMMIT:
	case SDSM_MSG_REGION_ABORT:
		sdsm_region_finish(be32_to_cpu(u.region.id),
				   sdsm_destroy_token(src, cookie),
				   type == SDSM_MSG_REGION_COMMIT);
		break;
	case SDSM_MSG_REGION_QUERY:
		ret = sdsm_region_query(be32_to_cpu(u.region.id));
		sdsm_reply(src, cookie, -ret, NULL);
		break;
	}
	return;

short_msg:
	pr_warn_ratelimited("node %u: short message type %u (%u bytes) dropped\n",
			    src, type, len);
}

/**
 * sdsm_region_handback - ask the homes of pages held writable here to
 *	take them back, before this node leaves
 * @homes: those homes (a mask of nodes); those not up are left out
 *
 * HANDBACK to each, and wait for every REPLY (sdsm_mem_take_back() on
 * the home), up to twice fault_timeout_ms: a home waits up to that long
 * for the pages themselves.  Context: module exit (sdsm_mem_leave()).
 *
 * Return: 0, or a negative errno (-ETIMEDOUT, -EHOSTDOWN, a home's error).
 */
int sdsm_region_handback(u64 homes)
{
	struct sdsm_wire_region w = {};
	struct sdsm_call call;

	homes &= sdsm_up_peers();
	if (!homes)
		return 0;
	sdsm_call_start(&call, homes);
	w.cookie = cpu_to_be64(call.cookie);
	sdsm_send_mask(homes, SDSM_MSG_HANDBACK, &w, sizeof(w));
	return sdsm_call_wait_ms(&call, 2 * sdsm_fault_timeout_ms);
}

/* A peer came up: tell it every region and policy range we know. */
void sdsm_region_peer_up(unsigned int node)
{
	struct sdsm_wire_policy_set wp;
	struct sdsm_policy_range *pr;
	struct sdsm_wire_region w;
	struct sdsm_region *r;
	unsigned long id;

	mutex_lock(&sdsm_regions_mutex);
	xa_for_each(&sdsm_regions, id, r) {
		if (id) {
			sdsm_region_to_wire(&w, r);
			sdsm_queue(node, SDSM_MSG_REGION_ADD, &w, sizeof(w), NULL);
		}
		/* Writers hold the mutex too: the list is stable here. */
		list_for_each_entry_reverse(pr, &r->policies, node) {
			memset(&wp, 0, sizeof(wp));
			wp.region = cpu_to_be32(r->id);
			wp.first = cpu_to_be64(pr->first);
			wp.npages = cpu_to_be64(pr->npages);
			sdsm_policy_to_wire(&wp.policy, &pr->policy);
			sdsm_queue(node, SDSM_MSG_POLICY, &wp, sizeof(wp), NULL);
		}
	}
	mutex_unlock(&sdsm_regions_mutex);
}

/*
 * A peer died: calls waiting for it fail with EHOSTDOWN, and the destroys
 * it prepared here are in doubt.
 */
void sdsm_region_peer_down(unsigned int node)
{
	bool in_doubt = false;
	struct sdsm_region *r;
	struct sdsm_call *call;
	unsigned long id;
	void *vote;

	spin_lock(&sdsm_calls_lock);
	list_for_each_entry(call, &sdsm_calls, node) {
		if (!(call->waiting & BIT_ULL(node)))
			continue;
		call->waiting &= ~BIT_ULL(node);
		if (!call->status)
			call->status = EHOSTDOWN;
	}
	spin_unlock(&sdsm_calls_lock);
	wake_up_all(&sdsm_calls_wq);

	mutex_lock(&sdsm_regions_mutex);
	xa_for_each(&sdsm_absent_votes, id, vote) {
		if (sdsm_destroy_token_node(sdsm_vote_token(vote)) != node)
			continue;
		/* Replacing an entry allocates nothing. */
		xa_store(&sdsm_absent_votes, id,
			 xa_mk_value(xa_to_value(vote) | SDSM_VOTE_IN_DOUBT),
			 GFP_KERNEL);
		in_doubt = true;
	}
	xa_for_each(&sdsm_regions, id, r) {
		spin_lock(&r->lock);
		if (r->dying && sdsm_destroy_token_node(r->dying) == node) {
			r->in_doubt = true;
			in_doubt = true;
		}
		spin_unlock(&r->lock);
	}
	mutex_unlock(&sdsm_regions_mutex);
	if (in_doubt)
		mod_delayed_work(system_unbound_wq, &sdsm_in_doubt_work, 0);
}

/* ------------------------------------------------------------------ */
/* ioctls                                                              */

/* Every node up and usable, or -EHOSTDOWN. */
static int sdsm_need_all_up(void)
{
	return sdsm_up_peers() == sdsm_all_peers() ? 0 : -EHOSTDOWN;
}

/*
 * Destroy region @w->id on every node: 0 or a negative errno.  @undo: a create
 * that some node refused is taken back from the nodes that are up, whether
 * they learned it or not (ENOENT), and needs no down node (it never learned
 * the region, and learns nothing of it when it comes back), nor this
 * node (its own create is undone when this node could not learn it).
 */
static int sdsm_region_destroy_wire(struct sdsm_wire_region *w, bool undo)
{
	u32 id = be32_to_cpu(w->id);
	struct sdsm_call call;
	u64 mask, token, epochs;
	int ret;

	ret = undo ? 0 : sdsm_need_all_up();
	if (ret)
		return ret;

	mask = undo ? sdsm_up_peers() : sdsm_all_peers();
	sdsm_call_start(&call, mask);
	call.enoent_ok = true;
	token = sdsm_destroy_token(sdsm_cl.node_id, call.cookie);
	w->cookie = cpu_to_be64(call.cookie);
	ret = sdsm_region_prepare(id, token);
	if (ret == -ENOENT && undo)
		ret = 0;	/* this node never learned it */
	if (!ret) {
		epochs = sdsm_mask_epochs(mask);
		sdsm_send_mask(mask, SDSM_MSG_REGION_PREPARE, w, sizeof(*w));
		ret = sdsm_call_wait(&call);
		if (unlikely(READ_ONCE(sdsm_inject_destroy_stall_ms)))
			sdsm_inject_pause(&sdsm_inject_destroy_stall_ms);
		/*
		 * A node whose session ended since its PREPARE decides without
		 * us ("Destroys in doubt"): abort, as it will unless another
		 * node saw a COMMIT, which none can have.
		 */
		if (!ret && !sdsm_destroy_commits(true, sdsm_mask_epochs(mask) ==
							epochs))
			ret = -EHOSTDOWN;
	} else {
		spin_lock(&sdsm_calls_lock);
		list_del(&call.node);
		spin_unlock(&sdsm_calls_lock);
		/* The vote kept here for a region gone meanwhile ends. */
		if (ret == -ENOENT)
			sdsm_region_finish(id, token, false);
		return ret;
	}
	sdsm_send_mask(mask, ret ? SDSM_MSG_REGION_ABORT :
				   SDSM_MSG_REGION_COMMIT, w, sizeof(*w));
	sdsm_region_finish(id, token, !ret);
	return ret;
}

#define SDSM_UNDO_TRIES		10
#define SDSM_UNDO_WAIT_MS	50

/*
 * Take back a create that not every node took (undo above).  A destroy of
 * the same region started meanwhile by a thread that opened it holds the
 * region prepared (EBUSY) until it fails, as it must: a node that refused
 * the region answers it ENOENT.  Try again then, a bounded number of
 * times, so that no node keeps the region.
 */
static int sdsm_region_undo(struct sdsm_wire_region *w)
{
	int ret, i;

	for (i = 0; i < SDSM_UNDO_TRIES; i++) {
		ret = sdsm_region_destroy_wire(w, true);
		if (ret != -EBUSY)
			break;
		msleep(SDSM_UNDO_WAIT_MS);
	}
	return ret;
}

static int sdsm_region_destroy(u32 id, bool undo)
{
	struct sdsm_wire_region w;
	struct sdsm_region *r;

	r = sdsm_region_get(id);
	if (!r)
		return -ENOENT;
	sdsm_region_to_wire(&w, r);
	sdsm_region_put(r);
	return undo ? sdsm_region_undo(&w) : sdsm_region_destroy_wire(&w, false);
}

static unsigned int sdsm_registrar(const char *name)
{
	return jhash(name, strnlen(name, SDSM_NAME_MAX), 0) %
	       sdsm_cl.nr_nodes;
}

/*
 * ADD region @w to the nodes of @mask and wait for their answers: 0 once
 * each knows it (a node that went down meanwhile learns it when it comes
 * back), else the first refusal (EFBIG, ENOENT for a tombstone, EEXIST)
 * or ETIMEDOUT.  Locks: none.
 */
static int sdsm_region_add_round(struct sdsm_wire_region *w, u64 mask)
{
	struct sdsm_call call;
	int ret;

	if (!mask)
		return 0;
	sdsm_call_start(&call, mask);
	w->cookie = cpu_to_be64(call.cookie);
	w->flags = 0;
	sdsm_send_mask(mask, SDSM_MSG_REGION_ADD, w, sizeof(*w));
	ret = sdsm_call_wait(&call);
	return ret == -EHOSTDOWN ? 0 : ret;
}

/*
 * Every other node that is up knows region @r before a process of this
 * node gets it (CREATE of an existing name, OPEN), since its first fault
 * may follow at once: a node drops the coherence messages of a region it
 * does not know, and the fault would wait for nothing until
 * fault_timeout_ms and fail (SIGBUS).  Only the creator's return implies
 * it; this node may have learned the region earlier, as its registrar
 * or from the registrar's answer to its own CREATE or from the creator's
 * ADD, while that ADD is still on its way to the others.  So this node
 * sends ADD to every other node that is up and waits (a second ADD of a
 * region is answered at once), the first time only.  Return 0, or the
 * errno of the round (ENOENT: destroyed meanwhile).  Locks: none (the
 * fields sent are fixed at creation).
 */
static int sdsm_region_announce(struct sdsm_region *r)
{
	struct sdsm_wire_region w;
	int ret;

	if (READ_ONCE(r->announced))
		return 0;
	sdsm_region_to_wire(&w, r);
	ret = sdsm_region_add_round(&w, sdsm_up_peers());
	if (!ret)
		WRITE_ONCE(r->announced, true);
	return ret;
}

/*
 * One try of sdsm_region_create() with a new id, in *@idp: -ESTALE if a
 * node refused the id as one of a region destroyed lately (its
 * tombstone), taken back everywhere.
 */
static int sdsm_region_create_try(struct sdsm_region_create *c,
				  bool *created, u32 *idp)
{
	unsigned int self = sdsm_cl.node_id, reg;
	struct sdsm_wire_region w, have;
	struct sdsm_call call;
	struct sdsm_region *r;
	u32 id;
	int ret;

	if (c->flags & ~(SDSM_REGION_F_EXCL | SDSM_REGION_F_OWNED |
			 SDSM_REGION_F_MODE | SDSM_REGION_F_RELEASE |
			 SDSM_REGION_F_MANAGER))
		return -EOPNOTSUPP;
	if (c->__reserved || !sdsm_name_valid(c->name) ||
	    !c->length || c->length % PAGE_SIZE ||
	    c->length > (u64)max_region_mb << 20 ||
	    sdsm_policy_check(&c->policy) || c->mode & ~0777U ||
	    (c->mode && !(c->flags & SDSM_REGION_F_MODE)))
		return -EINVAL;
	if (c->flags & SDSM_REGION_F_MANAGER) {
		if (c->manager == SDSM_MANAGER_INTERLEAVE ||
		    sdsm_manager_check(c->manager, &c->policy) < 0)
			return -EINVAL;
	} else if (c->manager) {
		return -EINVAL;
	}

	/* Counters wrap: ids of destroyed regions are used again. */
	mutex_lock(&sdsm_regions_mutex);
	for (id = 1; id < 1U << SDSM_REGION_ID_SHIFT; id++) {
		if (++sdsm_region_counter >= 1U << SDSM_REGION_ID_SHIFT)
			sdsm_region_counter = 1;
		id = (self << SDSM_REGION_ID_SHIFT) | sdsm_region_counter;
		if (!xa_load(&sdsm_regions, id) && !sdsm_tombstone_check(id))
			break;
	}
	id = (self << SDSM_REGION_ID_SHIFT) | sdsm_region_counter;
	*idp = id;
	if (xa_load(&sdsm_regions, id)) {
		mutex_unlock(&sdsm_regions_mutex);
		return -ENOSPC;
	}
	mutex_unlock(&sdsm_regions_mutex);

	memset(&w, 0, sizeof(w));
	w.id = cpu_to_be32(id);
	w.flags = cpu_to_be32(c->flags & SDSM_REGION_F_EXCL ?
			      SDSM_WIRE_REGION_EXCL : 0);
	w.length = cpu_to_be64(c->length);
	sdsm_policy_to_wire(&w.policy, &c->policy);
	memcpy(w.name, c->name, sizeof(w.name));
	w.uid = cpu_to_be32(from_kuid(&init_user_ns, current_euid()));
	w.gid = cpu_to_be32(from_kgid(&init_user_ns, current_egid()));
	w.mode = cpu_to_be32(c->flags & SDSM_REGION_F_MODE ? c->mode : 0600);
	w.consistency = cpu_to_be32(c->flags & SDSM_REGION_F_RELEASE ?
				    SDSM_CONSISTENCY_RELEASE :
				    SDSM_CONSISTENCY_SEQUENTIAL);
	w.manager = cpu_to_be32(c->flags & SDSM_REGION_F_MANAGER ?
				c->manager : SDSM_MANAGER_INTERLEAVE);

	reg = sdsm_registrar(c->name);
	memset(&have, 0, sizeof(have));
	if (reg == self) {
		ret = sdsm_region_claim(self, &w, &have);
	} else {
		if (!sdsm_node_up(reg))
			return -EHOSTDOWN;
		sdsm_call_start(&call, BIT_ULL(reg));
		w.cookie = cpu_to_be64(call.cookie);
		sdsm_queue(reg, SDSM_MSG_REGION_CLAIM, &w, sizeof(w), NULL);
		ret = sdsm_call_wait(&call);
		if (ret == -ENOENT)	/* sdsm_region_learn(): a tombstone */
			return -ESTALE;
		if (!ret && !call.have_region)
			ret = -EPROTO;
		have = call.region;
		have.cookie = 0;
		if (unlikely(READ_ONCE(sdsm_inject_learn_delay_ms)))
			sdsm_inject_pause(&sdsm_inject_learn_delay_ms);
		if (!ret) {
			mutex_lock(&sdsm_regions_mutex);
			ret = sdsm_region_learn(reg, &have);
			mutex_unlock(&sdsm_regions_mutex);
			/*
			 * The registrar recorded our region, this node could
			 * not (its table has the name for a region that was
			 * destroyed elsewhere meanwhile): take ours back.
			 */
			if (ret && be32_to_cpu(have.id) == id) {
				int undo = sdsm_region_undo(&have);

				pr_warn("region %u '%s' not created: not learned here (%d); taken back: %d\n",
					id, c->name, ret, undo);
			}
		}
	}
	if (ret)
		return ret;

	if (be32_to_cpu(have.id) == id) {
		/* Ours: every other node that is up learns it now. */
		ret = sdsm_region_add_round(&w, sdsm_up_peers() & ~BIT_ULL(reg));
		if (ret) {
			/* Refused (EFBIG) or unanswered: no node keeps it. */
			int undo = sdsm_region_destroy(id, true);

			if (ret == -ENOENT && !undo)	/* a tombstone */
				return -ESTALE;
			pr_warn("region %u '%s' not created: not every node took it (%d); taken back: %d\n",
				id, c->name, ret, undo);
			return ret;
		}
	}
	*created = be32_to_cpu(have.id) == id;
	r = sdsm_region_get(be32_to_cpu(have.id));
	if (!r)
		return -ENOENT;	/* destroyed meanwhile */
	if (*created) {
		WRITE_ONCE(r->announced, true);
	} else {
		ret = sdsm_region_permission(r, MAY_READ | MAY_WRITE);
		if (!ret)
			ret = sdsm_region_announce(r);
		if (ret) {
			sdsm_region_put(r);
			return ret;
		}
	}
	c->region_id = r->id;
	c->offset = sdsm_region_offset(r);
	sdsm_region_put(r);
	return ret;
}

/*
 * Create or open; *@created tells whether this call made the region.
 *
 * A node whose module was loaded again counts its region ids from 1
 * again, while its peers keep the tombstones of the ids its previous load
 * destroyed (2 x fault_timeout_ms, sdsm_tombstone_add()), and refuse
 * those as stale.  Such an id gets a tombstone here too and the create
 * takes the next one: a node that comes back can create regions at once.
 */
static int sdsm_region_create(struct sdsm_region_create *c, bool *created)
{
	unsigned int tries;
	int ret;
	u32 id;

	for (tries = 0; tries < SDSM_CREATE_TRIES; tries++) {
		ret = sdsm_region_create_try(c, created, &id);
		if (ret != -ESTALE)
			return ret;
		mutex_lock(&sdsm_regions_mutex);
		sdsm_tombstone_add(id);
		mutex_unlock(&sdsm_regions_mutex);
	}
	pr_warn("region '%s' not created: %u ids refused as stale\n", c->name,
		tries);
	return -ENOENT;
}

int sdsm_cmd_region_create(struct file *file, void *cmd)
{
	struct sdsm_region_create *c = cmd;
	struct sdsm_owned *own = NULL;
	bool created = false;
	int ret;

	if (c->flags & SDSM_REGION_F_OWNED) {
		own = kzalloc(sizeof(*own), GFP_KERNEL);
		if (!own)
			return -ENOMEM;
	}
	ret = sdsm_region_create(c, &created);
	if (ret || !created || !own) {
		kfree(own);
		return ret;
	}
	own->file = file;
	own->id = c->region_id;
	spin_lock(&sdsm_owned_lock);
	list_add(&own->node, &sdsm_owned);
	spin_unlock(&sdsm_owned_lock);
	return 0;
}

static void sdsm_region_info_fill(struct sdsm_region_info *info,
				  const struct sdsm_region *r)
{
	info->region_id = r->id;
	memcpy(info->name, r->name, sizeof(info->name));
	info->length = r->length;
	info->offset = sdsm_region_offset(r);
	info->policy = r->policy;
	info->uid = from_kuid_munged(current_user_ns(), r->uid);
	info->gid = from_kgid_munged(current_user_ns(), r->gid);
	info->mode = r->mode;
	info->consistency = r->consistency;
	info->manager = r->manager == SDSM_PROTO_NO_NODE ?
			SDSM_MANAGER_INTERLEAVE : r->manager;
}

int sdsm_cmd_region_open(struct file *file, void *cmd)
{
	struct sdsm_region_info *info = cmd;
	struct sdsm_region *r;
	int ret = -ENOENT;

	if (info->flags)
		return -EOPNOTSUPP;
	if (info->__reserved || !sdsm_name_valid(info->name))
		return -EINVAL;
	mutex_lock(&sdsm_regions_mutex);
	r = sdsm_region_by_name(info->name);
	if (r)
		ret = sdsm_region_permission(r, MAY_READ);
	if (!ret) {
		sdsm_region_info_fill(info, r);
		kref_get(&r->ref);	/* the table's is stable under the mutex */
	}
	mutex_unlock(&sdsm_regions_mutex);
	if (ret)
		return ret;
	ret = sdsm_region_announce(r);
	sdsm_region_put(r);
	return ret;
}

int sdsm_cmd_region_info(struct file *file, void *cmd)
{
	struct sdsm_region_info *info = cmd;
	struct sdsm_region *r;

	if (info->flags)
		return -EOPNOTSUPP;
	if (info->__reserved)
		return -EINVAL;
	r = sdsm_region_get(info->region_id);
	if (!r)
		return -ENOENT;
	sdsm_region_info_fill(info, r);
	sdsm_region_put(r);
	return 0;
}

/* Forget the owner record of region @id, if any. */
static void sdsm_owned_forget(u32 id)
{
	struct sdsm_owned *own, *tmp;

	spin_lock(&sdsm_owned_lock);
	list_for_each_entry_safe(own, tmp, &sdsm_owned, node)
		if (own->id == id) {
			list_del(&own->node);
			kfree(own);
			break;
		}
	spin_unlock(&sdsm_owned_lock);
}

int sdsm_cmd_region_destroy(struct file *file, void *cmd)
{
	struct sdsm_region_destroy *d = cmd;
	struct sdsm_region *r;
	int ret;

	if (d->flags)
		return -EOPNOTSUPP;
	if (d->__reserved)
		return -EINVAL;
	if (d->region_id == SDSM_DEFAULT_REGION)
		return -EPERM;
	/* The owner, or an administrator, as IPC_RMID allows. */
	r = sdsm_region_get(d->region_id);
	if (!r)
		return -ENOENT;
	ret = uid_eq(current_euid(), r->uid) || capable(CAP_SYS_ADMIN) ?
	      0 : -EPERM;
	sdsm_region_put(r);
	if (ret)
		return ret;
	ret = sdsm_region_destroy(d->region_id, false);
	if (!ret)
		sdsm_owned_forget(d->region_id);
	return ret;
}

/* Destroy what released files owned; retry what cannot go yet. */
static void sdsm_reclaim_fn(struct work_struct *work)
{
	struct sdsm_owned *own;
	bool again = false;
	LIST_HEAD(todo);
	int ret;

	spin_lock(&sdsm_owned_lock);
	list_splice_init(&sdsm_reclaim, &todo);
	spin_unlock(&sdsm_owned_lock);

	while ((own = list_first_entry_or_null(&todo, struct sdsm_owned,
					       node))) {
		list_del(&own->node);
		ret = READ_ONCE(sdsm_cl.shutdown) ? -ESHUTDOWN :
		      sdsm_region_destroy(own->id, false);
		if ((ret == -EBUSY || ret == -EHOSTDOWN || ret == -ETIMEDOUT ||
		     ret == -EINTR) && ++own->tries < SDSM_RECLAIM_TRIES) {
			spin_lock(&sdsm_owned_lock);
			list_add_tail(&own->node, &sdsm_reclaim);
			spin_unlock(&sdsm_owned_lock);
			again = true;
			continue;
		}
		if (ret && ret != -ENOENT)
			pr_warn("region %u: not destroyed after its owner exited: %d\n",
				own->id, ret);
		kfree(own);
	}
	if (again && !READ_ONCE(sdsm_cl.shutdown))
		queue_delayed_work(system_unbound_wq, &sdsm_reclaim_work, HZ);
}

/* @file is released: the regions it owns go, on every node. */
void sdsm_region_release_file(const struct file *file)
{
	struct sdsm_owned *own, *tmp;
	bool any = false;

	spin_lock(&sdsm_owned_lock);
	list_for_each_entry_safe(own, tmp, &sdsm_owned, node)
		if (own->file == file) {
			list_move_tail(&own->node, &sdsm_reclaim);
			any = true;
		}
	spin_unlock(&sdsm_owned_lock);
	if (any)
		mod_delayed_work(system_unbound_wq, &sdsm_reclaim_work, 0);
}

int sdsm_cmd_set_policy(struct file *file, void *cmd)
{
	struct sdsm_set_policy *c = cmd;
	struct mm_struct *mm = current->mm;
	struct sdsm_wire_policy_set w;
	struct vm_area_struct *vma;
	struct sdsm_call call;
	struct sdsm_region *r;
	u64 first, npages, mask;
	int ret;

	if (c->flags)
		return -EOPNOTSUPP;
	if (!c->length || c->length % PAGE_SIZE || c->addr % PAGE_SIZE ||
	    c->addr + c->length < c->addr || sdsm_policy_check(&c->policy))
		return -EINVAL;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, c->addr);
	r = sdsm_vma_region(vma, &first, c->addr);
	ret = !r ? -EFAULT : c->addr + c->length > vma->vm_end ? -EINVAL :
	      sdsm_region_permission(r, MAY_WRITE);
	mmap_read_unlock(mm);
	if (ret)
		goto out_put;
	npages = c->length >> PAGE_SHIFT;
	ret = sdsm_need_all_up();
	if (ret)
		goto out_put;

	memset(&w, 0, sizeof(w));
	w.region = cpu_to_be32(r->id);
	w.first = cpu_to_be64(first);
	w.npages = cpu_to_be64(npages);
	sdsm_policy_to_wire(&w.policy, &c->policy);
	mask = sdsm_all_peers();
	if (mask) {
		sdsm_call_start(&call, mask);
		w.cookie = cpu_to_be64(call.cookie);
		sdsm_send_mask(mask, SDSM_MSG_POLICY, &w, sizeof(w));
		ret = sdsm_call_wait(&call);
		if (ret)
			goto out_put;
	}
	mutex_lock(&sdsm_regions_mutex);
	ret = sdsm_policy_apply(r, first, npages, &c->policy);
	mutex_unlock(&sdsm_regions_mutex);
out_put:
	if (r)
		sdsm_region_put(r);
	return ret;
}

/**
 * struct sdsm_query_window - what one QUERY_HOME learnt of a run of pages
 * @valid: @next holds a HOME_REP's answer
 * @region: region id of that answer
 * @mgr: the manager that answered
 * @page: the page it was asked; @next tells of the pages after it
 * @next: struct sdsm_wire_home.next of the answer
 *
 * Kept for one ioctl only: an answer SDSM_WIRE_HOME_NONE (no home yet) is
 * true only when it is given.
 */
struct sdsm_query_window {
	bool valid;
	u32 region;
	u16 mgr;
	u64 page;
	u8 next[SDSM_WIRE_HOME_NEXT];
};

/*
 * The home @win knows of page @idx of @r, managed by @mgr: a node id,
 * -ENOENT, or -EAGAIN when it does not know.
 */
static int sdsm_query_window_home(const struct sdsm_query_window *win,
				  struct sdsm_region *r, u64 idx, u16 mgr)
{
	u8 h;

	if (!win->valid || win->region != r->id || win->mgr != mgr ||
	    idx <= win->page || idx - win->page > SDSM_WIRE_HOME_NEXT)
		return -EAGAIN;
	h = win->next[idx - win->page - 1];
	if (h == SDSM_WIRE_HOME_NONE)
		return -ENOENT;
	return h < sdsm_cl.nr_nodes ? h : -EAGAIN;
}

/*
 * The home of one address of this process, or a negative errno; what its
 * manager answers of the pages after it goes into @win.
 */
static int sdsm_query_one(u64 addr, struct sdsm_query_window *win)
{
	struct mm_struct *mm = current->mm;
	struct sdsm_wire_home w = {};
	struct sdsm_call call;
	struct sdsm_region *r;
	struct sdsm_page *pg;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	int home = -ENOENT;
	u16 mgr;
	u64 idx;

	if (addr > ULONG_MAX)
		return -EFAULT;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	r = sdsm_vma_region(vma_lookup(mm, addr), &idx, addr);
	mmap_read_unlock(mm);
	if (!r)
		return -EFAULT;
	mgr = sdsm_page_manager(r, idx);
	pg = sdsm_page_get(r, idx, true);
	if (!pg) {
		home = -ENOMEM;
		goto out_put;
	}
	lock = sdsm_page_lock(r, idx);
	mutex_lock(lock);
	if (pg->home != SDSM_PROTO_NO_NODE)
		home = pg->home;
	else if (sdsm_page_home_computable(r, idx))
		home = mgr;
	else if (mgr == sdsm_cl.node_id)
		home = sdsm_manager_decide(r, idx, pg, sdsm_cl.node_id, false);
	else
		home = sdsm_query_window_home(win, r, idx, mgr);
	mutex_unlock(lock);
	if (home != -EAGAIN)
		goto out_put;

	if (!sdsm_node_up(mgr)) {
		home = -EHOSTDOWN;
		goto out_put;
	}
	sdsm_call_start(&call, BIT_ULL(mgr));
	w.cookie = cpu_to_be64(call.cookie);
	w.region = cpu_to_be32(r->id);
	w.page = cpu_to_be64(idx);
	sdsm_queue(mgr, SDSM_MSG_HOME_REQ, &w, sizeof(w), NULL);
	home = sdsm_call_wait(&call);
	if (!home) {
		home = call.home;
		win->valid = true;
		win->region = r->id;
		win->mgr = mgr;
		win->page = idx;
		memcpy(win->next, call.next, sizeof(win->next));
	}
out_put:
	sdsm_region_put(r);
	return home;
}

int sdsm_cmd_query_home(struct file *file, void *cmd)
{
	struct sdsm_query_home *q = cmd;
	u64 __user *addrs = u64_to_user_ptr(q->addrs);
	s32 __user *homes = u64_to_user_ptr(q->homes);
	struct sdsm_query_window win = {};
	u32 i;

	if (q->flags)
		return -EOPNOTSUPP;
	if (q->__reserved || !q->count || q->count > 4096)
		return -EINVAL;
	for (i = 0; i < q->count; i++) {
		u64 addr;
		int home;

		if (get_user(addr, &addrs[i]))
			return -EFAULT;
		home = sdsm_query_one(addr, &win);
		if (home == -EINTR)
			return -EINTR;
		if (put_user(home, &homes[i]))
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * sysfs: regions/<id>/{name,size,policy,uid,gid,mode,consistency,manager,
 * ...}
 */

static struct sdsm_region *sdsm_kobj_region(struct kobject *kobj)
{
	u32 id;

	if (kstrtou32(kobject_name(kobj), 10, &id))
		return NULL;
	return sdsm_region_get(id);
}

#define SDSM_REGION_ATTR(field, fmt, expr)				\
static ssize_t field##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct sdsm_region *r = sdsm_kobj_region(kobj);			\
	ssize_t ret;							\
									\
	if (!r)								\
		return -ENODEV;						\
	ret = sysfs_emit(buf, fmt, expr);				\
	sdsm_region_put(r);						\
	return ret;							\
}									\
static struct kobj_attribute sdsm_region_attr_##field = __ATTR_RO(field)

SDSM_REGION_ATTR(name, "%s\n", r->name);
SDSM_REGION_ATTR(size, "%llu\n", r->length);
SDSM_REGION_ATTR(uid, "%u\n", from_kuid_munged(&init_user_ns, r->uid));
SDSM_REGION_ATTR(gid, "%u\n", from_kgid_munged(&init_user_ns, r->gid));
SDSM_REGION_ATTR(mode, "%04o\n", r->mode);
SDSM_REGION_ATTR(consistency, "%s\n",
		 r->consistency == SDSM_CONSISTENCY_RELEASE ? "release" :
		 "sequential");
static ssize_t manager_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct sdsm_region *r = sdsm_kobj_region(kobj);
	ssize_t ret;

	if (!r)
		return -ENODEV;
	if (r->manager == SDSM_PROTO_NO_NODE)
		ret = sysfs_emit(buf, "interleave\n");
	else
		ret = sysfs_emit(buf, "%u\n", r->manager);
	sdsm_region_put(r);
	return ret;
}

static struct kobj_attribute sdsm_region_attr_manager = __ATTR_RO(manager);

SDSM_REGION_ATTR(pages_homed, "%lld\n", atomic64_read(&r->pages_homed));
SDSM_REGION_ATTR(pages_cached, "%lld\n", atomic64_read(&r->pages_cached));

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct sdsm_region *r = sdsm_kobj_region(kobj);
	const struct sdsm_policy *p;
	ssize_t ret;

	if (!r)
		return -ENODEV;
	p = &r->policy;
	switch (p->mode) {
	case SDSM_POLICY_INTERLEAVE:
		ret = sysfs_emit(buf, "interleave nodemask=0x%llx block_size=%llu\n",
				 p->nodemask, p->block_size);
		break;
	case SDSM_POLICY_BIND:
		ret = sysfs_emit(buf, "bind nodemask=0x%llx\n", p->nodemask);
		break;
	case SDSM_POLICY_PREFERRED:
		ret = sysfs_emit(buf, "preferred node=%u\n",
				 p->preferred_node);
		break;
	default:
		ret = sysfs_emit(buf, "first-touch\n");
		break;
	}
	sdsm_region_put(r);
	return ret;
}

static struct kobj_attribute sdsm_region_attr_policy = __ATTR_RO(policy);

static struct attribute *sdsm_region_attrs[] = {
	&sdsm_region_attr_name.attr,
	&sdsm_region_attr_size.attr,
	&sdsm_region_attr_policy.attr,
	&sdsm_region_attr_uid.attr,
	&sdsm_region_attr_gid.attr,
	&sdsm_region_attr_mode.attr,
	&sdsm_region_attr_consistency.attr,
	&sdsm_region_attr_manager.attr,
	&sdsm_region_attr_pages_homed.attr,
	&sdsm_region_attr_pages_cached.attr,
	NULL,
};

static const struct attribute_group sdsm_region_group = {
	.attrs = sdsm_region_attrs,
};

/* ------------------------------------------------------------------ */

int sdsm_region_check_params(void)
{
	if (max_region_mb < 1 || max_region_mb > (1U << 20)) {
		pr_err("max_region_mb=%u out of range 1..1048576\n",
		       max_region_mb);
		return -EINVAL;
	}
	return 0;
}

int sdsm_region_init(unsigned int default_mb, struct kobject *parent)
{
	struct sdsm_policy p = {
		.mode = SDSM_POLICY_INTERLEAVE,
		.nodemask = sdsm_all_nodes(),
		.block_size = PAGE_SIZE,
	};
	struct sdsm_region *r;
	int ret;

	sdsm_region_counter = 0;
	sdsm_regions_kobj = kobject_create_and_add("regions", parent);
	if (!sdsm_regions_kobj)
		return -ENOMEM;
	r = sdsm_region_alloc(SDSM_DEFAULT_REGION, "default",
			      (u64)default_mb << 20, &p, SDSM_CONSISTENCY_SEQUENTIAL);
	if (!r) {
		ret = -ENOMEM;
		goto out_put_kobj;
	}
	/* Root's, open to whoever may open /dev/sdsm. */
	r->uid = GLOBAL_ROOT_UID;
	r->gid = GLOBAL_ROOT_GID;
	r->mode = 0666;
	r->announced = true;	/* every node has it from load */
	mutex_lock(&sdsm_regions_mutex);
	ret = sdsm_region_insert(r);
	mutex_unlock(&sdsm_regions_mutex);
	if (ret)
		goto out_put_kobj;
	return 0;

out_put_kobj:
	kobject_put(sdsm_regions_kobj);
	sdsm_regions_kobj = NULL;
	return ret;
}

/* Module exit: no file is open, so only the table holds references. */
void sdsm_region_exit(void)
{
	struct sdsm_owned *own, *tmp;
	struct sdsm_region *r;
	unsigned long id;

	/* Every file is closed: what is still to reclaim stays on peers. */
	cancel_delayed_work_sync(&sdsm_reclaim_work);
	cancel_delayed_work_sync(&sdsm_in_doubt_work);
	list_splice_init(&sdsm_owned, &sdsm_reclaim);
	list_for_each_entry_safe(own, tmp, &sdsm_reclaim, node) {
		list_del(&own->node);
		kfree(own);
	}

	/*
	 * No sdsm_sync_rc_forget(): sdsm_sync_exit() ran before and freed
	 * every table of write notices.
	 */
	mutex_lock(&sdsm_regions_mutex);
	xa_for_each(&sdsm_regions, id, r) {
		WARN_ON_ONCE(kref_read(&r->ref) != 1);
		sdsm_region_remove(r);
	}
	mutex_unlock(&sdsm_regions_mutex);
	xa_destroy(&sdsm_regions);
	xa_destroy(&sdsm_tombstones);
	xa_destroy(&sdsm_absent_votes);
	kobject_put(sdsm_regions_kobj);
	sdsm_regions_kobj = NULL;
}
