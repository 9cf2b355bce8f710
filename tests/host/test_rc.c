// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of kmod/sdsm_rc.c (release consistency), printed as TAP 13.
 *
 *   diff codec        random pages, edge runs, the WHOLE form, merges of
 *                     concurrent diffs, malformed diffs refused
 *   random schedules  3 nodes, 3 pages, 2 locks, a barrier and a futex,
 *                     a data-race-free program by construction (but for
 *                     the futex bytes); every read must return the last
 *                     value written to its byte; futex waits see posts
 *   planted bugs      the same checker against broken variants; each
 *                     passes only if its bug is caught
 *   scripted          merges, a stale GRANT_READ, knowledge handed on
 *                     through a second lock and through a barrier episode
 *                     without the reader, a dirty stale page at an
 *                     acquire, an exclusive home page, protocol
 *                     violations, a dead home
 *
 * The model: messages travel in per-(src,dst) FIFO channels (coherence and
 * synchronization alike: one link per pair), delivered in any order across
 * pairs.  Each node runs two program threads: accesses (a load or store
 * that the node's mapping allows runs at once, as through a PTE; otherwise
 * it faults through sdsm_rc_fault()), lock acquires and releases, barrier
 * arrivals, futex posts and waits.  Bytes are split among the locks and
 * the barrier phases (and mail and futex bytes, below): a lock byte is
 * touched only under its lock, a barrier byte only by its owner of the
 * current phase (the owner changes each phase), so the program is
 * data-race-free and every read must return the last value written to
 * the byte (own, or released before the reader's acquire).
 * Three schedules in four alias each home's copy to the home copy, as the
 * module does (no twin, DIFFs without bytes), and there a page is
 * exclusive to its home until another node is served it: the home's
 * releases leave it writable (sdsm_rc_flush_skip()) and the first foreign
 * READ closes the home's interval (sdsm_rc_home_share()).  A lock's
 * manager grants only the notices that rose since its previous grant to
 * the node (struct lockmgr), as the module's lock tables do.
 *
 * The futex (release memory, its manager the home of the word's page):
 * futex bytes (R_FUTEX) are one word and data bytes, written only by one
 * poster thread.  A post v stores v into some data bytes, then into the
 * word, each a plain store, other actions between them; then a release
 * as a lock's, whose notices (rose since the node's last publish to the
 * futex: its own since clock) ride with the WAKE (of all, or one).  The
 * manager merges them into its table (struct fxmgr) with a tick, then
 * wakes oldest first; each WOKEN, and the QUEUED answering a WAIT, carry
 * a grant of the table (as grant_lock()), applied as an acquire.  A
 * waiter (no lock held) reads the word e, sends WAIT(e), reads the word
 * again once QUEUED: changed, CANCEL (answered CANCELLED, or STALE after
 * a WOKEN); else asleep until WOKEN.  Then it reads some data bytes.  The
 * poster enters the barrier with no wait under way, and no wait starts
 * while it is there; the drain posts (WAKE of all) until none is left.
 * Futex bytes are racy, so the futex invariants check their reads: after
 * a grant a node's reads of each data byte return at least what the last
 * post the manager had merged left there (no stale read after a futex
 * acquire), and a waiter asleep and still queued expects at least the
 * post whose WAKE was merged before it was queued (no lost wake-up).
 * The barrier's manager names each episode's last arrival serial
 * (SDSM_WIRE_SYNC_F_SERIAL): every episode has exactly one serial
 * departure.
 *
 * After every step: a mapping never allows more than the node's state, a
 * twin exists exactly for a writable copy that is not the home copy, the
 * acknowledgment counters agree, no wake-up is lost.  After draining
 * (locks released, waits ended, a final barrier): no message in flight,
 * no waiter queued, every home copy equals the reference, every valid
 * copy equals its home copy, and every node reads every page right.
 *
 * Environment: SDSM_SEED (base seed, default from the clock; schedule i
 * uses SDSM_SEED + i), SDSM_SCHEDULES (random schedules are 20 times it,
 * default 5000), SDSM_STEPS (default 200), SDSM_ONLY (run only tests whose
 * name contains it).  Options: those of tap_args.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include "sdsm_rc.h"
#include "tap_args.h"

#define NODES		3
#define THREADS		2		/* program threads per node */
#define NTHR		(NODES * THREADS)
#define PAGES		3
#define PLEN		32		/* bytes per page in the checker */
#define LOCKS		2
#define CHAN_CAP	64
#define TRACE		64
#define DMAX		SDSM_RC_DIFF_MAX(PLEN)
#define BARMGR		0		/* the barrier's manager */
#define BAR_EPS		16		/* barrier episodes whose departures overlap */
#define T(n)		((n) * THREADS)	/* a node's first thread */
#define FBYTES		(PAGES * PLEN / 8)	/* futex bytes: word and data */
#define LOCK_FX		LOCKS		/* rel_lock of a futex release */
#define FX_MAXPOST	250		/* posts per schedule, drain's too */
#define FX_DRAIN_POSTS	16		/* posts the drain may add */

enum mutation {
	MUT_NONE = 0,
	MUT_DROP_DIFF,		/* the home acks a diff it did not apply */
	MUT_FLUSH_SKIPS,	/* a release forgets a dirty page's diff */
	MUT_LOST_NOTICE,	/* an acquire loses notices */
	MUT_SKIP_INVAL,		/* an acquire keeps a stale copy mapped */
	MUT_STALE_TWIN,		/* a new interval reuses the old twin */
	MUT_PUBLISH_EARLY,	/* a release publishes before its acks */
	MUT_WHOLE_UNMASKED,	/* the home applies a WHOLE diff unmasked */
	MUT_SINCE_ACQUIRE,	/* a grant moves the since clock unguarded */
	MUT_STALE_GRANT,	/* a GRANT_READ older than a notice installed */
	MUT_ALIAS_PRIVATE,	/* a home "aliased" writes a private copy */
	MUT_EXCL_NO_CLOSE,	/* a first foreign READ leaves it exclusive */
	MUT_EXCL_SKIP_SHARED,	/* a release skips a shared home page */
	MUT_EXCL_SHARE_OPEN,	/* not a bug: shared, interval left open */
	MUT_GRANT_STAMP_EARLY,	/* a lock's notices stamped before its clock moves */
	MUT_SINCE_SHARED,	/* one since for every lock, not one per lock */
	MUT_FX_QUEUED_BARE,	/* QUEUED carries no notices */
	MUT_FX_WOKEN_BARE,	/* WOKEN carries no notices */
	MUT_FX_WAKE_UNPUBLISHED,	/* a WAKE's release publishes nothing */
	MUT_FX_SINCE_LOCK0,	/* the futex uses lock 0's since clock */
	MUT_BAR_EPISODE,	/* a barrier's table lasts one episode */
	MUT_BAR_SERIAL_NODE,	/* every arrival of the last one's node serial */
	MUT_NR,
};

enum kind { K_RC, K_LOCK_REQ, K_LOCK_GRANT, K_LOCK_REL, K_BAR_ARRIVE,
	    K_BAR_DEPART, K_FX_WAIT, K_FX_QUEUED, K_FX_CANCEL, K_FX_CANCELLED,
	    K_FX_STALE, K_FX_WAKE, K_FX_WOKEN };

struct msg {
	int kind;
	int lock;
	int thr;		/* sync messages: the thread */
	int val;		/* WAIT: the value read; WAKE, grants: the post */
	int cnt;		/* WAKE: waiters to wake, 0: all */
	struct sdsm_rc_msg m;
	int nnot;
	struct sdsm_rc_notice not[PAGES];
	u32 size;
	u8 data[DMAX];
};

struct chan {
	struct msg q[CHAN_CAP];
	unsigned int head, len;
};

enum wait { W_NONE, W_FAULT, W_LOCK, W_RELEASE, W_BARRIER, W_FUTEX };

/*
 * A futex wait: read the word (FX_READ1, may fault), WAIT sent
 * (FX_QUEUING), QUEUED applied, read the word again (FX_READ2), then
 * asleep until WOKEN (FX_SLEEP) or, the word changed, CANCEL sent and its
 * answer awaited (FX_CANCEL).
 */
enum fx { FX_NONE, FX_READ1, FX_QUEUING, FX_READ2, FX_SLEEP, FX_CANCEL };

/* A program thread. */
struct thr {
	int held;		/* bitmap of locks held */
	int wait;		/* enum wait */
	int rel_lock;		/* W_RELEASE: the lock, or -1: barrier */
	int fpage, fbyte;	/* W_FAULT: the access */
	bool fwrite, woken;
	int ferr;
	int phase;		/* barrier episodes passed */
	int fx;			/* enum fx */
	int fx_e;		/* the word's value the wait expects */
	bool fx_woken;		/* a WOKEN came before the wait ended */
	int fx_reads;		/* futex data reads due after the wait */
};

struct node {
	struct sdsm_rc_page pg[PAGES];
	struct sdsm_rc_local local;
	u8 copy[PAGES][PLEN];
	u8 twin[PAGES][PLEN];
	bool has_twin[PAGES];
	bool aliased[PAGES];	/* the copy is the home copy (the home) */
	u8 map[PAGES];
	u64 lock_since[LOCKS], bar_since, fx_since;
	/*
	 * The checker's: what a futex grant applied here guarantees.  Each
	 * futex data byte must read at least @fbound (the byte's value
	 * after post @fbpost, the last post the manager had merged when it
	 * made the grant); @fgpost is the newest such post.
	 */
	u8 fbound[FBYTES];
	u8 fbpost[FBYTES];
	int fgpost;
};

/*
 * A lock's manager: what was released to the lock (@know), and what it
 * sent each node.  @clock counts the releases merged; @stamp[p] is the
 * clock when @know[p] last rose, @sent[n] the clock when node n was last
 * granted the lock.  A grant carries only what rose since (see
 * grant_lock()).
 */
struct lockmgr {
	int holder;
	int q[NTHR], qlen;
	u32 know[PAGES];
	u32 stamp[PAGES];
	u32 clock;
	u32 sent[NODES];
};

/*
 * The futex's manager (the home of the word's page): a table like a
 * lock's (@tab: @know, @stamp, @clock, @sent; @q, @qlen the waiters,
 * oldest first; @holder unused), and the checker's ghosts: @post is the
 * last post whose WAKE it merged, @qpost[k] what @post was when waiter
 * @tab.q[k] was queued.
 */
struct fxmgr {
	struct lockmgr tab;
	int qpost[NTHR];
	int post;
};

/*
 * A mail byte belongs to one thread, which reads and writes it without a
 * lock, and may hand it to another thread through a lock: it gives it up
 * while holding the lock, and the receiver owns it from its next acquire
 * of that lock after the giver's release.  What the receiver reads there
 * was released to that lock, possibly long before the giver acquired it:
 * knowledge must be transitive.
 */
struct mail {
	int owner;		/* thread, or -1 while handed over */
	int from, to, lock;
	bool ready;		/* the giver released the lock */
};

struct sim {
	int mutation;
	u64 rng;
	u32 limit;		/* RUNS limit of the diffs this schedule */
	int home[PAGES];
	int view[NODES][PAGES];	/* the home as each node knows it */
	struct node node[NODES];
	struct thr thr[NTHR];
	struct sdsm_rc_home hs[PAGES];
	u8 hcopy[PAGES][PLEN];
	struct lockmgr lk[LOCKS];
	struct fxmgr fx;
	int poster;		/* the futex's only poster thread */
	int fword;		/* the futex byte that is the word */
	bool fx_posting;	/* a post is under way */
	bool fx_word_left;	/* ... its store to the word is not done */
	u32 fx_left;		/* ... its data stores not done */
	int fx_cur;		/* posts begun: the value of the last */
	int fx_nwake;		/* its WAKE: waiters to wake, 0: all */
	int fx_drain_posts;
	/* Futex bytes after post v (published), and those post v wrote. */
	u8 fx_snap[FX_MAXPOST + 1][FBYTES];
	u32 fx_mask[FX_MAXPOST + 1];
	/*
	 * The barrier: its manager's table lives across episodes, as a
	 * lock's (a departure carries what rose since the node's last one);
	 * @bcount arrivals end an episode (0: every thread; scripts set
	 * fewer, as a barrier with a count), @bq those arrived.
	 */
	struct lockmgr bar;
	int bcount;
	int arrived;
	int bq[NTHR];
	/*
	 * Episode e's departures (by e % BAR_EPS): its size, those received
	 * and those named serial (SDSM_WIRE_SYNC_F_SERIAL), which must be 1.
	 */
	int ep_size[BAR_EPS], ep_departed[BAR_EPS], ep_serials[BAR_EPS];
	struct chan chan[NODES][NODES];
	struct mail mail[PAGES][PLEN];
	u8 last[PAGES][PLEN];	/* the reference: last value written */
	int writer[PAGES][PLEN];	/* thread, -1: initial zero */
	bool released[PAGES][PLEN];
	u8 counter[PAGES][PLEN];
	bool in_acquire;
	bool drain;
	bool alias;		/* homes alias their copy to the home copy */
	int target;		/* drain: the barrier phase to reach */
	int expect_errors, errors;
	bool quiet, failed;
	char why[256];
	char trace[TRACE][120];
	unsigned int ntrace;
	/* statistics */
	unsigned long reads, writes, diffs, wholes, merges, invals, refetch;
	unsigned long grants, barriers, steps, flushes_at_acquire, handoffs;
	unsigned long grant_notices, table_notices;	/* sent, whole tables */
	unsigned long pub_notices;	/* published by releases */
	unsigned long coalesced, aliased_writes;
	unsigned long excl_skips, excl_closes;
	unsigned long fx_waits, fx_woken, fx_eagain, fx_stale, fx_early;
	unsigned long fx_qnot, fx_wnot, fx_checked;
};

struct priv {
	struct sim *s;
	int n, p;
	const struct msg *in;
};

/*
 * Node @n's copy of page @p: the home copy itself where the module
 * aliases them (sdsm_rc_alias_home(): on the page's home, after a
 * GRANT_READ from itself).
 */
static u8 *copy_of(struct sim *s, int n, int p)
{
	if (s->mutation == MUT_ALIAS_PRIVATE)
		return s->node[n].copy[p];
	return s->node[n].aliased[p] ? s->hcopy[p] : s->node[n].copy[p];
}


static u64 base_seed;
static unsigned long schedules = 5000;
static unsigned long steps = 200;
static char replay_name[160];

/* ---- plumbing ---- */

static u64 rnd(struct sim *s, u64 bound)
{
	u64 z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return bound ? z % bound : z;
}

static void tracef(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void tracef(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(s->trace[s->ntrace % TRACE], sizeof(s->trace[0]), fmt, ap);
	va_end(ap);
	s->ntrace++;
}

static void fail(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

static int fx_mgr(const struct sim *s);

static void dump(const struct sim *s)
{
	unsigned int i, first = s->ntrace > TRACE ? s->ntrace - TRACE : 0;
	int n, p;

	printf("# %s\n", s->why);
	for (i = first; i < s->ntrace; i++)
		printf("#   %s\n", s->trace[i % TRACE]);
	printf("#   futex word: byte %d, manager %d, poster t%d, %d posts, last merged %d, %d queued;",
	       s->fword, fx_mgr(s), s->poster, s->fx_cur, s->fx.post,
	       s->fx.tab.qlen);
	for (n = 0; n < NTHR; n++)
		printf(" t%d wait %d fx %d e %d;", n, s->thr[n].wait,
		       s->thr[n].fx, s->thr[n].fx_e);
	printf("\n");
	for (p = 0; p < PAGES; p++) {
		printf("#   page %d home %d version %u:", p, s->home[p],
		       s->hs[p].ver);
		for (n = 0; n < NODES; n++)
			printf(" n%d state %u ver %u need %u map %u;", n,
			       s->node[n].pg[p].state, s->node[n].pg[p].ver,
			       s->node[n].pg[p].need, s->node[n].map[p]);
		printf("\n");
	}
}

static void push(struct sim *s, int src, int dst, const struct msg *m)
{
	struct chan *c = &s->chan[src][dst];

	if (c->len == CHAN_CAP) {
		fail(s, "channel %d->%d overflows", src, dst);
		return;
	}
	c->q[(c->head + c->len) % CHAN_CAP] = *m;
	c->len++;
}

static const struct sdsm_rc_ops ops;

static void ctx_for(struct sim *s, struct priv *pv, struct sdsm_rc_ctx *ctx,
		    int n, int p)
{
	pv->s = s;
	pv->n = n;
	pv->p = p;
	pv->in = NULL;
	*ctx = (struct sdsm_rc_ctx) {
		.ops = &ops,
		.priv = pv,
		.local = &s->node[n].local,
		.region = 1,
		.page = (u64)p,
		.self = (u16)n,
		.home = (u16)s->view[n][p],
	};
}

/* ---- the caller's actions ---- */

static void op_send(void *priv, const struct sdsm_rc_msg *rm)
{
	struct priv *pv = priv;
	struct sim *s = pv->s;
	struct node *nd = &s->node[pv->n];
	static struct msg m;
	int r;

	memset(&m, 0, offsetof(struct msg, data));
	m.kind = K_RC;
	m.m = *rm;
	if (rm->flags & SDSM_RC_F_DATA) {
		memcpy(m.data, s->hcopy[pv->p], PLEN);
		m.size = PLEN;
	}
	if ((rm->flags & SDSM_RC_F_DIFF) && nd->aliased[pv->p]) {
		/* Written in the home copy: a DIFF without bytes. */
		if (nd->map[pv->p] == SDSM_PROTO_MAP_RW)
			fail(s, "node %d diffs page %d still writable", pv->n,
			     pv->p);
		m.size = 0;
		s->diffs++;
	} else if (rm->flags & SDSM_RC_F_DIFF) {
		if (!nd->has_twin[pv->p] || nd->map[pv->p] == SDSM_PROTO_MAP_RW)
			fail(s, "node %d diffs page %d %s", pv->n, pv->p,
			     nd->has_twin[pv->p] ? "still writable" :
			     "without a twin");
		r = sdsm_rc_diff_make(nd->twin[pv->p], nd->copy[pv->p], PLEN,
				      m.data, DMAX, s->limit);
		if (r < 0) {
			fail(s, "diff_make: %d", r);
			return;
		}
		m.size = (u32)r;
		s->diffs++;
		s->wholes += m.data[0] == SDSM_RC_DIFF_WHOLE;
	}
	tracef(s, "n%d -> n%d %s page %d seq %u v%u%s%s", rm->src, rm->dst,
	       sdsm_rc_msg_name(rm->type), pv->p, rm->seq, rm->version,
	       rm->err ? " err" : "",
	       !(rm->flags & SDSM_RC_F_DIFF) ? "" : !m.size ? " EMPTY" :
	       m.data[0] == SDSM_RC_DIFF_WHOLE ? " WHOLE" : " RUNS");
	push(s, rm->src, rm->dst, &m);
}

static void op_install(void *priv, const struct sdsm_rc_msg *rm)
{
	struct priv *pv = priv;
	struct node *nd = &pv->s->node[pv->n];

	nd->aliased[pv->p] = pv->s->alias && rm->src == pv->n;
	if (!nd->aliased[pv->p])
		memcpy(nd->copy[pv->p], pv->in->data, PLEN);
}

static int op_apply(void *priv, const struct sdsm_rc_msg *rm)
{
	struct priv *pv = priv;
	struct sim *s = pv->s;
	const struct msg *m = pv->in;
	int i;

	if (s->mutation == MUT_DROP_DIFF && !rnd(s, 4))
		return 0;
	if (s->mutation == MUT_WHOLE_UNMASKED &&
	    m->data[0] == SDSM_RC_DIFF_WHOLE && m->size == DMAX) {
		for (i = 0; i < PLEN; i++)
			s->hcopy[pv->p][i] = m->data[SDSM_RC_DIFF_HDR +
						     PLEN / 8 + i];
		return 0;
	}
	/* The home's own DIFF: its bytes are in the home copy already. */
	if (!m->size && s->node[rm->src].aliased[pv->p])
		return 0;
	/* Concurrent diffs of one page to other bytes: merged here. */
	for (i = 0; i < NODES; i++)
		if (i != rm->src && s->node[i].pg[pv->p].unacked) {
			s->merges++;
			break;
		}
	return sdsm_rc_diff_apply(s->hcopy[pv->p], PLEN, m->data, m->size);
}

static int op_twin(void *priv)
{
	struct priv *pv = priv;
	struct node *nd = &pv->s->node[pv->n];

	if (nd->aliased[pv->p])
		return 0;	/* written in the home copy: no twin */
	if (pv->s->mutation != MUT_STALE_TWIN)
		memcpy(nd->twin[pv->p], nd->copy[pv->p], PLEN);
	nd->has_twin[pv->p] = true;
	return 0;
}

static void op_drop_twin(void *priv)
{
	struct priv *pv = priv;

	pv->s->node[pv->n].has_twin[pv->p] = false;
}

static void op_map(void *priv, enum sdsm_proto_map how)
{
	struct priv *pv = priv;
	struct sim *s = pv->s;

	if (s->mutation == MUT_SKIP_INVAL && s->in_acquire &&
	    how == SDSM_PROTO_MAP_NONE)
		return;
	tracef(s, "n%d page %d map %s", pv->n, pv->p,
	       how == SDSM_PROTO_MAP_NONE ? "none" :
	       how == SDSM_PROTO_MAP_RO ? "RO" : "RW");
	s->node[pv->n].map[pv->p] = (u8)how;
}

static void op_wake(void *priv, int err)
{
	struct priv *pv = priv;
	int t;

	for (t = T(pv->n); t < T(pv->n + 1); t++) {
		struct thr *th = &pv->s->thr[t];

		if (th->wait == W_FAULT && th->fpage == pv->p) {
			th->woken = true;
			th->ferr = err;
		}
	}
}

static void op_acked(void *priv)
{
	(void)priv;	/* the release step polls sdsm_rc_release_ready() */
}

static void op_error(void *priv, const struct sdsm_rc_msg *rm,
		     const char *why)
{
	struct priv *pv = priv;
	struct sim *s = pv->s;

	s->errors++;
	tracef(s, "n%d refused %s from n%d: %s", pv->n,
	       sdsm_rc_msg_name(rm->type), rm->src, why);
	if (s->errors > s->expect_errors)
		fail(s, "node %d refused %s from %d page %d: %s", pv->n,
		     sdsm_rc_msg_name(rm->type), rm->src, pv->p, why);
}

static const struct sdsm_rc_ops ops = {
	.send = op_send,
	.install = op_install,
	.apply = op_apply,
	.twin = op_twin,
	.drop_twin = op_drop_twin,
	.map = op_map,
	.wake = op_wake,
	.acked = op_acked,
	.error = op_error,
};

/* ---- the model ---- */

/*
 * Role of byte @i of page @p: lock 0 or 1, or R_BARRIER, or R_MAIL, or
 * R_FUTEX: pairs of bytes take the four first roles in turn, and every
 * other barrier pair is a futex pair instead (4 futex bytes a page).  Not
 * mail pairs: fewer of them hand over less, and a publish clock shared
 * by the locks (MUT_SINCE_SHARED) is then caught half as often.
 */
#define R_BARRIER	LOCKS
#define R_MAIL		(LOCKS + 1)
#define R_FUTEX		(LOCKS + 2)

static int role(int p, int i)
{
	int k = (p * PLEN + i) / 2;

	return k % 8 == 6 ? R_FUTEX : k % 4;
}

/* Index among the futex bytes of byte @i of page @p, or -1. */
static int fx_byte(int p, int i)
{
	if (role(p, i) != R_FUTEX)
		return -1;
	return (p * PLEN + i) / 16 * 2 + i % 2;
}

/* Page and byte of futex byte @b. */
static void fx_pos(int b, int *p, int *i)
{
	int pos = b / 2 * 16 + 12 + b % 2;

	*p = pos / PLEN;
	*i = pos % PLEN;
}

/* The futex's manager: the home of the word's page, as in the module. */
static int fx_mgr(const struct sim *s)
{
	int p, i;

	fx_pos(s->fword, &p, &i);
	return s->home[p];
}

static int owner(int p, int i, int phase)
{
	return (p * PLEN + i + phase) % NTHR;
}

static void sim_init(struct sim *s, u64 seed, int mutation)
{
	int p, i, n;

	memset(s, 0, sizeof(*s));
	s->rng = seed;
	s->mutation = mutation;
	s->quiet = true;
	for (p = 0; p < PAGES; p++)
		s->home[p] = (int)rnd(s, NODES);
	for (i = 0; i < LOCKS; i++)
		s->lk[i].holder = -1;
	for (p = 0; p < PAGES; p++)
		for (i = 0; i < PLEN; i++) {
			s->writer[p][i] = -1;	/* zero from the start */
			s->released[p][i] = true;
			s->mail[p][i].owner = (p * PLEN + i) % NTHR;
		}
	for (n = 0; n < NODES; n++)
		for (p = 0; p < PAGES; p++)
			s->view[n][p] = s->home[p];
	/* Sometimes always WHOLE, sometimes a small limit, mostly RUNS. */
	switch (rnd(s, 4)) {
	case 0:
		s->limit = 0;
		break;
	case 1:
		s->limit = 12;
		break;
	default:
		s->limit = DMAX;
	}
	s->poster = (int)rnd(s, NTHR);
	s->fword = (int)rnd(s, FBYTES);
}

static bool may_access(const struct sim *s, int t, int p, int i)
{
	int r = role(p, i);

	if (r < LOCKS)
		return s->thr[t].held & (1 << r);
	if (r == R_BARRIER)
		return owner(p, i, s->thr[t].phase) == t;
	if (r == R_FUTEX)
		return false;	/* only through posts and waits */
	return s->mail[p][i].owner == t;
}

static u8 perm(u8 state)
{
	return state == SDSM_RC_NODE_RW ? SDSM_PROTO_MAP_RW :
	       state == SDSM_RC_NODE_RO ? SDSM_PROTO_MAP_RO :
					  SDSM_PROTO_MAP_NONE;
}

static void fx_read(struct sim *s, int t, int p, int i, u8 v);

static void perform(struct sim *s, int t, int p, int i, bool write)
{
	struct node *nd = &s->node[t / THREADS];
	int b = fx_byte(p, i);
	u8 v;

	if (write) {
		/* A futex byte is written by posts only: the post's number. */
		v = b >= 0 ? (u8)s->fx_cur :
			     (u8)(s->counter[p][i] % 255 + 1);
		s->counter[p][i] = v;
		if (b == s->fword)
			s->fx_word_left = false;
		else if (b >= 0)
			s->fx_left &= ~(1u << b);
		copy_of(s, t / THREADS, p)[i] = v;
		s->aliased_writes += nd->aliased[p];
		s->last[p][i] = v;
		s->writer[p][i] = t;
		s->released[p][i] = false;
		s->writes++;
		tracef(s, "t%d writes page %d byte %d = %u", t, p, i, v);
		return;
	}
	v = copy_of(s, t / THREADS, p)[i];
	s->reads++;
	tracef(s, "t%d reads page %d byte %d = %u", t, p, i, v);
	if (b >= 0) {
		fx_read(s, t, p, i, v);	/* racy by design, checked there */
		return;
	}
	if (s->writer[p][i] != t && !s->released[p][i] && !s->drain)
		fail(s, "checker bug: thread %d reads page %d byte %d, written by %d and not released",
		     t, p, i, s->writer[p][i]);
	if (v != s->last[p][i])
		fail(s, "thread %d reads page %d byte %d = %u, last written %u by thread %d (%s)",
		     t, p, i, v, s->last[p][i], s->writer[p][i],
		     s->writer[p][i] == t ? "its own write" :
		     "released before the reader's acquire");
}

/* A load or store by thread @t: through the mapping, else a fault. */
static void do_access(struct sim *s, int t, int p, int i, bool write)
{
	int n = t / THREADS;
	struct node *nd = &s->node[n];
	struct thr *th = &s->thr[t];
	struct sdsm_rc_ctx ctx;
	struct priv pv;
	int r;

	/* Before perform(): a futex read may start waiting there. */
	if (nd->map[p] >= (write ? SDSM_PROTO_MAP_RW : SDSM_PROTO_MAP_RO)) {
		th->wait = W_NONE;
		perform(s, t, p, i, write);
		return;
	}
	if (nd->pg[p].flags & SDSM_RC_PAGE_PENDING)
		s->coalesced++;
	ctx_for(s, &pv, &ctx, n, p);
	r = sdsm_rc_fault(&ctx, &nd->pg[p], write);
	if (r == SDSM_RC_HIT) {
		/* The fault handler maps what the state allows. */
		nd->map[p] = perm(nd->pg[p].state);
		th->wait = W_NONE;
		perform(s, t, p, i, write);
		return;
	}
	if (r != SDSM_RC_WAIT) {
		fail(s, "thread %d fault on page %d: %d", t, p, r);
		return;
	}
	th->wait = W_FAULT;
	th->fpage = p;
	th->fbyte = i;
	th->fwrite = write;
	th->woken = false;
}

/*
 * Node @n's clock at its last publish to lock @l (-1: the barrier,
 * LOCK_FX: the futex).  The bugs: what went to one lock counts as told
 * to every lock; what went to lock 0 counts as told to the futex (and
 * the other way round).
 */
static u64 *since_for(struct sim *s, int n, int l)
{
	struct node *nd = &s->node[n];

	if (l < 0)
		return &nd->bar_since;
	if (l == LOCK_FX)
		return s->mutation == MUT_FX_SINCE_LOCK0 ? &nd->lock_since[0] :
		       &nd->fx_since;
	return s->mutation == MUT_SINCE_SHARED ? &nd->lock_since[0] :
	       &nd->lock_since[l];
}

/*
 * Node @n applies the grant of lock @l (-1: the barrier, LOCK_FX: the
 * futex).  The object knows what its grant brings: if nothing else rose
 * since the node's last publish to it, its since clock moves past them,
 * and the next release to it does not publish them back (the module's
 * struct sdsm_rc_acq).  The bug: it moves even so, and what rose before,
 * unpublished to the object, is never published to it.
 */
static void acquire_notices(struct sim *s, int n, const struct msg *m,
			    int l)
{
	u64 *since = since_for(s, n, l), before = s->node[n].local.clock;
	struct sdsm_rc_ctx ctx;
	struct priv pv;
	int k, p;

	s->in_acquire = true;
	for (k = 0; k < m->nnot; k++) {
		p = (int)m->not[k].page;
		if (s->mutation == MUT_LOST_NOTICE && rnd(s, 2))
			continue;
		ctx_for(s, &pv, &ctx, n, p);
		if (s->node[n].pg[p].state == SDSM_RC_NODE_RW)
			s->flushes_at_acquire++;
		if (!sdsm_rc_acquire(&ctx, &s->node[n].pg[p],
				     m->not[k].version))
			continue;
		s->invals++;
		/* The bug: the knowledge is kept, the stale copy too. */
		if (s->mutation == MUT_SKIP_INVAL)
			s->node[n].pg[p].state = SDSM_RC_NODE_RO;
	}
	s->in_acquire = false;
	if (*since == before || s->mutation == MUT_SINCE_ACQUIRE)
		*since = s->node[n].local.clock;
}

static void sync_send_v(struct sim *s, int src, int dst, int kind, int lock,
			int t, const u32 *know, int val, int cnt)
{
	static struct msg m;
	int p;

	memset(&m, 0, offsetof(struct msg, data));
	m.kind = kind;
	m.lock = lock;
	m.thr = t;
	m.val = val;
	m.cnt = cnt;
	m.m.src = (u16)src;
	for (p = 0; know && p < PAGES; p++)
		if (know[p]) {
			m.not[m.nnot].region = 1;
			m.not[m.nnot].page = (u64)p;
			m.not[m.nnot].version = know[p];
			m.nnot++;
		}
	push(s, src, dst, &m);
}

static void sync_send(struct sim *s, int src, int dst, int kind, int lock,
		      int t, const u32 *know)
{
	sync_send_v(s, src, dst, kind, lock, t, know, 0, 0);
}

/* What rose in table @lk since its last grant to node @n; now sent. */
static void grant_delta(struct lockmgr *lk, int n, u32 *delta)
{
	int p;

	for (p = 0; p < PAGES; p++)
		delta[p] = lk->stamp[p] > lk->sent[n] ? lk->know[p] : 0;
	lk->sent[n] = lk->clock;
}

/*
 * Grant lock @l to thread @t: its node gets the notices that rose since
 * the lock's previous grant to that node.  What the node was sent before
 * it still knows (knowledge only grows), so the grant loses nothing, and
 * a node's notices cost the lock's traffic once, not at every grant.
 */
static void grant_lock(struct sim *s, int l, int t)
{
	struct lockmgr *lk = &s->lk[l];
	int n = t / THREADS, p;
	u32 delta[PAGES];

	grant_delta(lk, n, delta);
	for (p = 0; p < PAGES; p++) {
		s->grant_notices += !!delta[p];
		s->table_notices += !!lk->know[p];
	}
	lk->holder = t;
	s->grants++;
	sync_send(s, l % NODES, n, K_LOCK_GRANT, l, t, delta);
}

/*
 * Thread @t departs the barrier: its node gets what rose in the
 * barrier's table since its last departure (a thread of the same node
 * departing in the same episode gets nothing more: its node has it).
 */
/*
 * Thread @t departs episode s->barriers: @serial if it arrived last, as
 * the module's manager names it (val: the episode, cnt: serial or not).
 */
static void grant_barrier(struct sim *s, int t, bool serial)
{
	u32 delta[PAGES];

	grant_delta(&s->bar, t / THREADS, delta);
	sync_send_v(s, BARMGR, t / THREADS, K_BAR_DEPART, -1, t, delta,
		    (int)s->barriers, serial);
}

/*
 * The WAKE of a post: what post @v left in the futex bytes is the
 * checker's bound for the grants of the tables that merge it.
 */
static void fx_wake(struct sim *s, int t, const u32 *know)
{
	int v = s->fx_cur, b, p, i;

	for (b = 0; b < FBYTES; b++) {
		fx_pos(b, &p, &i);
		s->fx_snap[v][b] = s->last[p][i];
	}
	s->fx_posting = false;
	s->thr[t].wait = W_NONE;
	tracef(s, "t%d WAKEs %s for post %d", t,
	       s->fx_nwake ? "one" : "all", v);
	/* The bug: the release's notices stay home. */
	sync_send_v(s, t / THREADS, fx_mgr(s), K_FX_WAKE, -1, t,
		    s->mutation == MUT_FX_WAKE_UNPUBLISHED ? NULL : know, v,
		    s->fx_nwake);
}

/* Publish: the release's diffs are all acknowledged (or, bug, not). */
static void publish(struct sim *s, int t)
{
	int n = t / THREADS, l = s->thr[t].rel_lock, p, i;
	struct node *nd = &s->node[n];
	u64 *since = since_for(s, n, l);
	u32 know[PAGES];

	for (p = 0; p < PAGES; p++) {
		know[p] = sdsm_rc_notice_due(&nd->pg[p], *since) ?
			  nd->pg[p].need : 0;
		s->pub_notices += !!know[p];
		for (i = 0; i < PLEN; i++) {
			struct mail *ml = &s->mail[p][i];

			if (s->writer[p][i] >= 0 &&
			    s->writer[p][i] / THREADS == n)
				s->released[p][i] = true;
			if (ml->owner < 0 && ml->from == t && ml->lock == l)
				ml->ready = true;
		}
	}
	*since = nd->local.clock;
	tracef(s, "t%d publishes to %s %d", t,
	       l == LOCK_FX ? "futex" : l >= 0 ? "lock" : "barrier", l);
	if (l == LOCK_FX) {
		fx_wake(s, t, know);
	} else if (l >= 0) {
		s->thr[t].held &= ~(1 << l);
		s->thr[t].wait = W_NONE;
		sync_send(s, n, l % NODES, K_LOCK_REL, l, t, know);
	} else {
		s->thr[t].wait = W_BARRIER;
		sync_send(s, n, BARMGR, K_BAR_ARRIVE, -1, t, know);
	}
}

/*
 * A release's flush on node @n: every page, but an exclusive page of its
 * home stays writable (sdsm_rc_flush_skip(), as the module does).
 */
static void release_flush(struct sim *s, int n)
{
	struct sdsm_rc_ctx ctx;
	struct priv pv;
	int p;

	for (p = 0; p < PAGES; p++) {
		if (s->mutation == MUT_FLUSH_SKIPS && !rnd(s, 3))
			continue;
		ctx_for(s, &pv, &ctx, n, p);
		if (s->node[n].aliased[p] &&
		    (sdsm_rc_flush_skip(&ctx, &s->hs[p]) ||
		     (s->mutation == MUT_EXCL_SKIP_SHARED &&
		      ctx.self == ctx.home))) {
			s->excl_skips += s->node[n].pg[p].state ==
					 SDSM_RC_NODE_RW;
			continue;
		}
		sdsm_rc_flush(&ctx, &s->node[n].pg[p]);
	}
}

/*
 * Release (a lock, LOCK_FX: a futex WAKE, or -1: arrival at the barrier):
 * flush every page.
 */
static void release(struct sim *s, int t, int l)
{
	tracef(s, "t%d releases %s %d", t,
	       l == LOCK_FX ? "futex" : l >= 0 ? "lock" : "barrier", l);
	release_flush(s, t / THREADS);
	s->thr[t].wait = W_RELEASE;
	s->thr[t].rel_lock = l;
	if (s->mutation == MUT_PUBLISH_EARLY)
		publish(s, t);
}

/* Keep in @know (with @stamp, if any) the larger version of each notice. */
static void merge(u32 *know, u32 *stamp, u32 now, const struct msg *m)
{
	int k, p;

	for (k = 0; k < m->nnot; k++) {
		p = (int)m->not[k].page;
		if (m->not[k].version <= know[p])
			continue;
		know[p] = m->not[k].version;
		if (stamp)
			stamp[p] = now;
	}
}

/* A release's notices reach lock @lk's manager. */
static void merge_lock(struct sim *s, struct lockmgr *lk, const struct msg *m)
{
	/* The bug: stamped with the clock a grant may have recorded already. */
	if (s->mutation == MUT_GRANT_STAMP_EARLY) {
		merge(lk->know, lk->stamp, lk->clock, m);
		lk->clock++;
		return;
	}
	merge(lk->know, lk->stamp, ++lk->clock, m);
}

/* ---- the futex ---- */

/* A futex wait is under way: the poster must not leave for a barrier. */
static bool fx_waiting(const struct sim *s)
{
	int t;

	for (t = 0; t < NTHR; t++)
		if (s->thr[t].fx != FX_NONE)
			return true;
	return false;
}

/* The poster is in a barrier episode: no wait may begin (none could end). */
static bool fx_poster_at_barrier(const struct sim *s)
{
	const struct thr *th = &s->thr[s->poster];

	return th->wait == W_BARRIER ||
	       (th->wait == W_RELEASE && th->rel_lock < 0);
}

/* A random one of the futex bytes in @mask, or of the data bytes. */
static int fx_pick(struct sim *s, u32 mask)
{
	int b, k;

	if (!mask)
		mask = ((1u << FBYTES) - 1) & ~(1u << s->fword);
	for (k = (int)rnd(s, (u64)__builtin_popcount(mask)), b = 0;; b++)
		if ((mask & (1u << b)) && !k--)
			return b;
}

static void fx_access(struct sim *s, int t, int b, bool write)
{
	int p, i;

	fx_pos(b, &p, &i);
	do_access(s, t, p, i, write);
}

/* The wait of thread @t ends; it then reads a few futex data bytes. */
static void fx_end(struct sim *s, int t, bool woken)
{
	struct thr *th = &s->thr[t];

	tracef(s, "t%d's wait for %d ends: %s", t, th->fx_e,
	       woken ? "woken" : "EAGAIN");
	th->fx = FX_NONE;
	th->wait = W_NONE;
	th->fx_woken = false;
	th->fx_reads = 1 + (int)rnd(s, 3);
	if (woken)
		s->fx_woken++;
	else
		s->fx_eagain++;
}

/* The manager drops waiter @k of its queue (woken or cancelled). */
static void fx_unqueue(struct sim *s, int k)
{
	struct lockmgr *fq = &s->fx.tab;

	fq->qlen--;
	memmove(fq->q + k, fq->q + k + 1, (fq->qlen - k) * sizeof(int));
	memmove(s->fx.qpost + k, s->fx.qpost + k + 1,
		(fq->qlen - k) * sizeof(int));
}

/*
 * The manager answers thread @t with @kind (QUEUED or WOKEN) carrying a
 * grant of the futex table, as grant_lock(): what rose since its last
 * grant to the node.  @mut drops it (sent[] untouched: never made).
 */
static void fx_grant(struct sim *s, int kind, int t, int mut)
{
	u32 delta[PAGES] = { 0 };
	int n = t / THREADS, p;

	if (s->mutation != mut)
		grant_delta(&s->fx.tab, n, delta);
	for (p = 0; p < PAGES; p++) {
		if (kind == K_FX_QUEUED)
			s->fx_qnot += !!delta[p];
		else
			s->fx_wnot += !!delta[p];
	}
	sync_send_v(s, fx_mgr(s), n, kind, -1, t, delta, s->fx.post, 0);
}

/*
 * A futex grant reaches node @n: an acquire.  From now on each data byte
 * must read at least what the grant's post (the last the manager had
 * merged) left in it: its WAKE was merged after the poster's release of
 * every post up to it, values only grow, and a node's knowledge only
 * grows, so this is sound for every later read on the node.
 */
static void fx_acquire(struct sim *s, int n, const struct msg *m)
{
	struct node *nd = &s->node[n];
	int b;

	acquire_notices(s, n, m, LOCK_FX);
	for (b = 0; b < FBYTES; b++)
		if (s->fx_snap[m->val][b] > nd->fbound[b]) {
			nd->fbound[b] = s->fx_snap[m->val][b];
			nd->fbpost[b] = (u8)m->val;
		}
	if (m->val > nd->fgpost)
		nd->fgpost = m->val;
}

/* QUEUED or WOKEN (@what) reaches node @n: its grant is applied first. */
static struct thr *fx_answered(struct sim *s, int n, const struct msg *m,
			       const char *what)
{
	tracef(s, "t%d %s (%d notices, post %d)", m->thr, what, m->nnot,
	       m->val);
	fx_acquire(s, n, m);
	return &s->thr[m->thr];
}

/* A read of futex byte @p, @i by thread @t returned @v. */
static void fx_read(struct sim *s, int t, int p, int i, u8 v)
{
	struct thr *th = &s->thr[t];
	int n = t / THREADS, b = fx_byte(p, i);

	if (v > s->last[p][i])
		fail(s, "thread %d reads futex byte page %d byte %d = %u, never written (last %u)",
		     t, p, i, v, s->last[p][i]);
	if (b != s->fword) {
		s->fx_checked += !!s->node[n].fbound[b];
		if (v < s->node[n].fbound[b])
			fail(s, "stale read after a futex acquire: thread %d reads futex data page %d byte %d = %u, but post %u, merged before a grant its node applied, left %u",
			     t, p, i, v, s->node[n].fbpost[b],
			     s->node[n].fbound[b]);
		return;
	}
	switch (th->fx) {
	case FX_READ1:
		th->fx_e = v;
		th->fx = FX_QUEUING;
		th->wait = W_FUTEX;
		s->fx_waits++;
		tracef(s, "t%d WAITs for %u", t, v);
		sync_send_v(s, n, fx_mgr(s), K_FX_WAIT, -1, t, NULL, v, 0);
		break;
	case FX_READ2:
		if (th->fx_woken) {	/* WOKEN before it could sleep */
			s->fx_early++;
			fx_end(s, t, true);
		} else if (v != th->fx_e) {
			tracef(s, "t%d sees %u, not %d: CANCEL", t, v,
			       th->fx_e);
			th->fx = FX_CANCEL;
			th->wait = W_FUTEX;
			sync_send_v(s, n, fx_mgr(s), K_FX_CANCEL, -1, t, NULL,
				    0, 0);
		} else {
			tracef(s, "t%d sleeps on %u", t, v);
			th->fx = FX_SLEEP;
			th->wait = W_FUTEX;
		}
		break;
	}
}

/*
 * Begin a post: the next number, stored into a random choice of data
 * bytes then into the word, then a release and a WAKE (post_step()).
 */
static void post_begin(struct sim *s, bool all)
{
	u32 mask = 0;
	int b;

	s->fx_cur++;
	for (b = 0; b < FBYTES; b++)
		if (b != s->fword && !rnd(s, 4))
			mask |= 1u << b;
	if (!mask)
		mask = 1u << fx_pick(s, 0);
	s->fx_mask[s->fx_cur] = mask;
	s->fx_left = mask;
	s->fx_word_left = true;
	s->fx_posting = true;
	s->fx_nwake = all || rnd(s, 3) ? 0 : 1;
	tracef(s, "post %d begins: data 0x%x, WAKE %s", s->fx_cur, mask,
	       s->fx_nwake ? "one" : "all");
}

/* The poster's next move in its post: a store, or the release. */
static void post_step(struct sim *s, int t)
{
	if (s->fx_left)
		fx_access(s, t, fx_pick(s, s->fx_left), true);
	else if (s->fx_word_left)
		fx_access(s, t, s->fword, true);
	else
		release(s, t, LOCK_FX);
}

/*
 * Before the home handles a message: the first from another node ends
 * the page's exclusivity (sdsm_rc_home_share()), closing the home's
 * interval if its copy is the home copy and writable.
 */
static void share(struct sim *s, const struct sdsm_rc_ctx *ctx, int n, int p,
		  const struct sdsm_rc_msg *rm)
{
	struct sdsm_rc_page *pg = &s->node[n].pg[p];
	bool open = s->node[n].aliased[p] && pg->state == SDSM_RC_NODE_RW &&
		    !s->hs[p].shared && rm->src != n && ctx->self == ctx->home;

	/* The bug: served as if the page were still the home's alone. */
	if (s->mutation == MUT_EXCL_NO_CLOSE && rm->type == SDSM_RC_MSG_READ)
		return;
	/* Marked shared, the home's copy left writable: harmless. */
	if (s->mutation == MUT_EXCL_SHARE_OPEN) {
		if (rm->src != n && ctx->self == ctx->home)
			s->hs[p].shared = true;
		return;
	}
	sdsm_rc_home_share(ctx, &s->hs[p],
			   s->node[n].aliased[p] ? pg : NULL, rm);
	s->excl_closes += open && pg->state == SDSM_RC_NODE_RO;
}

static void deliver(struct sim *s, int src, int dst)
{
	struct chan *c = &s->chan[src][dst];
	static struct msg m;
	struct sdsm_rc_ctx ctx;
	struct priv pv;
	struct node *nd = &s->node[dst];
	struct lockmgr *lk, *fq = &s->fx.tab;
	struct thr *th;
	int p, i, k;

	if (!c->len)
		return;
	m = c->q[c->head];
	c->head = (c->head + 1) % CHAN_CAP;
	c->len--;
	lk = m.lock >= 0 && m.lock < LOCKS ? &s->lk[m.lock] : NULL;
	switch (m.kind) {
	case K_RC:
		p = (int)m.m.page;
		ctx_for(s, &pv, &ctx, dst, p);
		pv.in = &m;
		m.m.src = (u16)src;	/* from the connection */
		tracef(s, "n%d <- n%d %s page %d seq %u v%u", dst, src,
		       sdsm_rc_msg_name(m.m.type), p, m.m.seq, m.m.version);
		if (m.m.type == SDSM_RC_MSG_GRANT_READ &&
		    m.m.version < nd->pg[p].need) {
			s->refetch++;
			if (s->mutation == MUT_STALE_GRANT)
				m.m.version = nd->pg[p].need;
		}
		if (sdsm_rc_msg_to_home(m.m.type)) {
			share(s, &ctx, dst, p, &m.m);
			sdsm_rc_home_recv(&ctx, &s->hs[p], &m.m);
		} else {
			sdsm_rc_node_recv(&ctx, &nd->pg[p], &m.m);
		}
		break;
	case K_LOCK_REQ:
		if (lk->holder < 0)
			grant_lock(s, m.lock, m.thr);
		else
			lk->q[lk->qlen++] = m.thr;
		break;
	case K_LOCK_REL:
		merge_lock(s, lk, &m);
		lk->holder = -1;
		if (lk->qlen) {
			int next = lk->q[0];

			memmove(lk->q, lk->q + 1, --lk->qlen * sizeof(int));
			grant_lock(s, m.lock, next);
		}
		break;
	case K_LOCK_GRANT:
		tracef(s, "t%d acquires lock %d (%d notices)", m.thr, m.lock,
		       m.nnot);
		acquire_notices(s, dst, &m, m.lock);
		s->thr[m.thr].held |= 1 << m.lock;
		s->thr[m.thr].wait = W_NONE;
		for (p = 0; p < PAGES; p++)
			for (i = 0; i < PLEN; i++) {
				struct mail *ml = &s->mail[p][i];

				if (ml->owner < 0 && ml->ready &&
				    ml->lock == m.lock && ml->to == m.thr) {
					ml->owner = m.thr;
					s->handoffs++;
				}
			}
		break;
	case K_BAR_ARRIVE:
		merge_lock(s, &s->bar, &m);
		s->bq[s->arrived++] = m.thr;
		if (s->arrived == (s->bcount ? s->bcount : NTHR)) {
			int last = s->bq[s->arrived - 1];

			s->ep_size[s->barriers % BAR_EPS] = s->arrived;
			/* The bug: the flag goes to the node, not the arrival. */
			for (k = 0; k < s->arrived; k++)
				grant_barrier(s, s->bq[k],
					      s->mutation == MUT_BAR_SERIAL_NODE ?
					      s->bq[k] / THREADS == last / THREADS :
					      k == s->arrived - 1);
			/* The bug: a table of one episode, as a lock's. */
			if (s->mutation == MUT_BAR_EPISODE) {
				memset(s->bar.know, 0, sizeof(s->bar.know));
				memset(s->bar.stamp, 0, sizeof(s->bar.stamp));
			}
			s->arrived = 0;
			s->barriers++;
		}
		break;
	case K_BAR_DEPART:
		tracef(s, "t%d departs barrier phase %d (%d notices)", m.thr,
		       s->thr[m.thr].phase, m.nnot);
		acquire_notices(s, dst, &m, -1);
		s->thr[m.thr].phase++;
		s->thr[m.thr].wait = W_NONE;
		k = m.val % BAR_EPS;
		s->ep_serials[k] += m.cnt;
		if (++s->ep_departed[k] < s->ep_size[k])
			break;
		if (s->ep_serials[k] != 1)
			fail(s, "barrier episode %d: %d serial departures of %d",
			     m.val, s->ep_serials[k], s->ep_size[k]);
		s->ep_departed[k] = s->ep_serials[k] = 0;
		break;
	case K_FX_WAIT:
		/* Queued oldest first, answered with a grant of the table. */
		fq->q[fq->qlen] = m.thr;
		s->fx.qpost[fq->qlen++] = s->fx.post;
		fx_grant(s, K_FX_QUEUED, m.thr, MUT_FX_QUEUED_BARE);
		break;
	case K_FX_CANCEL:
		for (k = 0; k < fq->qlen && fq->q[k] != m.thr; k++)
			;
		/* Not queued: a WOKEN went first, on the same channel. */
		if (k == fq->qlen) {
			sync_send(s, dst, src, K_FX_STALE, -1, m.thr, NULL);
			break;
		}
		fx_unqueue(s, k);
		sync_send(s, dst, src, K_FX_CANCELLED, -1, m.thr, NULL);
		break;
	case K_FX_WAKE:
		/* The notices first, with a tick: then the grants see them. */
		merge_lock(s, fq, &m);
		s->fx.post = m.val;
		for (k = 0; fq->qlen && (!m.cnt || k < m.cnt); k++) {
			int next = fq->q[0];

			fx_unqueue(s, 0);
			fx_grant(s, K_FX_WOKEN, next, MUT_FX_WOKEN_BARE);
		}
		break;
	case K_FX_QUEUED:
		th = fx_answered(s, dst, &m, "QUEUED");
		if (th->fx != FX_QUEUING) {
			fail(s, "QUEUED reached thread %d not waiting for it",
			     m.thr);
			break;
		}
		th->fx = FX_READ2;
		th->wait = W_NONE;
		break;
	case K_FX_WOKEN:
		th = fx_answered(s, dst, &m, "WOKEN");
		if (th->fx == FX_SLEEP)
			fx_end(s, m.thr, true);
		else if (th->fx == FX_READ2 || th->fx == FX_CANCEL)
			th->fx_woken = true;
		else
			fail(s, "WOKEN reached thread %d not waiting", m.thr);
		break;
	case K_FX_CANCELLED:
	case K_FX_STALE:
		th = &s->thr[m.thr];
		if (th->fx != FX_CANCEL ||
		    th->fx_woken != (m.kind == K_FX_STALE)) {
			fail(s, "%s reached thread %d (wait state %d, woken %d)",
			     m.kind == K_FX_STALE ? "STALE" : "CANCELLED",
			     m.thr, th->fx, th->fx_woken);
			break;
		}
		s->fx_stale += m.kind == K_FX_STALE;
		fx_end(s, m.thr, false);
		break;
	}
}

static void retry(struct sim *s, int t)
{
	struct thr *th = &s->thr[t];

	if (th->ferr) {
		fail(s, "thread %d access to page %d failed: %d", t, th->fpage,
		     th->ferr);
		return;
	}
	do_access(s, t, th->fpage, th->fbyte, th->fwrite);
}

/*
 * No lost wake-up: a waiter asleep and still queued at the manager was
 * queued after the manager had merged the WAKE of post qpost, so its
 * QUEUED granted post qpost's notices (the poster's release of the word's
 * store came before that WAKE); its second read must have seen the word
 * at qpost at least.  Having seen less and slept, only a later post can
 * wake it: the wake-up it was due is lost.  (A WAKE of all merged after
 * that post's store was released leaves no older waiter queued: that is
 * the quiescent form of this rule, as in test_futex.c.)
 */
static void check_wakeups(struct sim *s)
{
	const struct lockmgr *fq = &s->fx.tab;
	int k;

	for (k = 0; k < fq->qlen; k++) {
		const struct thr *th = &s->thr[fq->q[k]];

		if (th->fx == FX_SLEEP && th->fx_e < s->fx.qpost[k])
			fail(s, "lost wake-up: thread %d sleeps on futex value %d, queued after the manager merged the WAKE of post %d",
			     fq->q[k], th->fx_e, s->fx.qpost[k]);
	}
}

static void check(struct sim *s)
{
	int reads[NODES][PAGES] = { { 0 } }, diffs[NODES][PAGES] = { { 0 } };
	int n, p, a, b;
	unsigned int k;

	check_wakeups(s);

	/* Requests and answers in flight, per node and page. */
	for (a = 0; a < NODES; a++)
		for (b = 0; b < NODES; b++)
			for (k = 0; k < s->chan[a][b].len; k++) {
				const struct msg *m = &s->chan[a][b].q[
					(s->chan[a][b].head + k) % CHAN_CAP];
				int node = sdsm_rc_msg_to_home(m->m.type) ?
					   a : b;

				if (m->kind != K_RC)
					continue;
				p = (int)m->m.page;
				if (m->m.type == SDSM_RC_MSG_DIFF ||
				    m->m.type == SDSM_RC_MSG_DIFF_ACK)
					diffs[node][p]++;
				else
					reads[node][p]++;
			}
	for (n = 0; n < NODES; n++)
		for (p = 0; p < PAGES; p++) {
			const struct sdsm_rc_page *pg = &s->node[n].pg[p];

			if (reads[n][p] !=
			    !!(pg->flags & SDSM_RC_PAGE_PENDING))
				fail(s, "node %d page %d: %d READs or answers in flight, pending %d",
				     n, p, reads[n][p],
				     !!(pg->flags & SDSM_RC_PAGE_PENDING));
			if (diffs[n][p] != pg->unacked)
				fail(s, "node %d page %d: %d DIFFs or acks in flight, %u unacked",
				     n, p, diffs[n][p], pg->unacked);
		}
	for (n = 0; n < NODES; n++) {
		struct node *nd = &s->node[n];
		u32 unacked = 0;

		for (p = 0; p < PAGES; p++) {
			u8 st = nd->pg[p].state;

			unacked += nd->pg[p].unacked;
			if (nd->map[p] > perm(st))
				fail(s, "node %d page %d mapped %u beyond state %u",
				     n, p, nd->map[p], st);
			if (nd->has_twin[p] !=
			    (st == SDSM_RC_NODE_RW && !nd->aliased[p]))
				fail(s, "node %d page %d: twin %d in state %u",
				     n, p, nd->has_twin[p], st);
		}
		if (unacked != nd->local.unacked)
			fail(s, "node %d awaits %u acks, pages say %u", n,
			     nd->local.unacked, unacked);
		if (nd->local.lost)
			fail(s, "node %d lost %u diffs", n, nd->local.lost);
	}
}

/* Hand a mail byte @t owns to another thread through lock @l it holds. */
static bool handoff(struct sim *s, int t, int l)
{
	int p = (int)rnd(s, PAGES), i, k;

	for (k = 0; k < PLEN; k++) {
		struct mail *ml;

		i = (k + (int)rnd(s, PLEN)) % PLEN;
		ml = &s->mail[p][i];
		if (role(p, i) != R_MAIL || ml->owner != t)
			continue;
		ml->owner = -1;
		ml->from = t;
		ml->to = (t + 1 + (int)rnd(s, NTHR - 1)) % NTHR;
		ml->lock = l;
		ml->ready = false;
		tracef(s, "t%d hands page %d byte %d to t%d via lock %d", t,
		       p, i, ml->to, l);
		return true;
	}
	return false;
}

/* Pick a program action for idle thread @t; false if it has none now. */
static bool program(struct sim *s, int t)
{
	struct thr *th = &s->thr[t];
	int cand[PAGES * PLEN], nc = 0, p, i, l, r;

	if (th->fx == FX_READ2) {	/* QUEUED: read the word again */
		fx_access(s, t, s->fword, false);
		return true;
	}
	if (s->drain) {
		for (l = 0; l < LOCKS; l++)
			if (th->held & (1 << l)) {
				release(s, t, l);
				return true;
			}
		/*
		 * The poster ends every wait: it posts (WAKE of all) while
		 * one is under way and its last WAKE is merged already.
		 */
		if (t == s->poster && !s->fx_posting && fx_waiting(s) &&
		    s->fx.post == s->fx_cur &&
		    s->fx_drain_posts < FX_DRAIN_POSTS) {
			s->fx_drain_posts++;
			post_begin(s, true);
		}
		if (t == s->poster && s->fx_posting) {
			post_step(s, t);
			return true;
		}
		if (t == s->poster && fx_waiting(s))
			return false;
		th->fx_reads = 0;
		if (th->phase < s->target) {
			release(s, t, -1);
			return true;
		}
		return false;
	}
	/* After a wait: read what the post that ended it wrote, or any. */
	if (th->fx_reads) {
		th->fx_reads--;
		fx_access(s, t, fx_pick(s, rnd(s, 2) ? 0 :
				  s->fx_mask[s->node[t / THREADS].fgpost]),
			  false);
		return true;
	}
	/*
	 * The poster posts, a store or the release at a time, its other
	 * actions in between (a lock's release amid a post publishes some
	 * of its stores to the lock first), and sooner while a thread
	 * waits; another thread holding no lock (the poster may need it)
	 * waits, unless the poster is at the barrier.  Rarely: a thread
	 * asleep makes no lock traffic.
	 */
	if (t == s->poster) {
		if (s->fx_posting && rnd(s, 2)) {
			post_step(s, t);
			return true;
		}
		if (!s->fx_posting &&
		    s->fx_cur < FX_MAXPOST - FX_DRAIN_POSTS &&
		    !rnd(s, fx_waiting(s) ? 4 : 16)) {
			post_begin(s, false);
			post_step(s, t);
			return true;
		}
	} else if (!th->held && !fx_poster_at_barrier(s) && !rnd(s, 16)) {
		th->fx = FX_READ1;
		fx_access(s, t, s->fword, false);
		return true;
	}
	r = (int)rnd(s, 100);
	if (r < 60) {
		for (p = 0; p < PAGES; p++)
			for (i = 0; i < PLEN; i++)
				if (may_access(s, t, p, i))
					cand[nc++] = p * PLEN + i;
		if (nc) {
			i = cand[rnd(s, nc)];
			do_access(s, t, i / PLEN, i % PLEN, rnd(s, 2));
			return true;
		}
	}
	if (r < 76) {
		l = (int)rnd(s, LOCKS);
		/* In order, so no deadlock: nothing at or above @l held. */
		if (!(th->held >> l)) {
			th->wait = W_LOCK;
			sync_send(s, t / THREADS, l % NODES, K_LOCK_REQ, l, t,
				  NULL);
			return true;
		}
	}
	if (th->held) {
		for (l = (int)rnd(s, LOCKS);; l = (l + 1) % LOCKS)
			if (th->held & (1 << l))
				break;
		if (r < 84 && handoff(s, t, l))
			return true;
		release(s, t, l);
		return true;
	}
	/* The poster leaves no waiter behind at a barrier. */
	if (r >= 94 && (t != s->poster || !fx_waiting(s))) {
		release(s, t, -1);
		return true;
	}
	return false;
}

/* One random step; false if nothing can move. */
static bool step(struct sim *s)
{
	int ev[NODES * NODES + NTHR], ne = 0, nchan, a, b, e;

	for (a = 0; a < NODES; a++)
		for (b = 0; b < NODES; b++)
			if (s->chan[a][b].len)
				ev[ne++] = a * NODES + b;
	for (a = 0; a < NTHR; a++) {
		struct thr *th = &s->thr[a];

		if (th->wait == W_NONE || (th->wait == W_FAULT && th->woken) ||
		    (th->wait == W_RELEASE &&
		     sdsm_rc_release_ready(&s->node[a / THREADS].local)))
			ev[ne++] = NODES * NODES + a;
	}
	nchan = 0;
	while (nchan < ne && ev[nchan] < NODES * NODES)
		nchan++;
	while (ne) {
		/*
		 * A slow network: a thread moves two times in three if one
		 * can, so requests and acquires overlap more.
		 */
		if (nchan && nchan < ne)
			e = rnd(s, 3) ? nchan + (int)rnd(s, ne - nchan) :
					(int)rnd(s, nchan);
		else
			e = (int)rnd(s, ne);
		if (ev[e] < NODES * NODES) {
			deliver(s, ev[e] / NODES, ev[e] % NODES);
			break;
		}
		a = ev[e] - NODES * NODES;
		if (s->thr[a].wait == W_FAULT) {
			retry(s, a);
			break;
		}
		if (s->thr[a].wait == W_RELEASE) {
			publish(s, a);
			break;
		}
		if (program(s, a))
			break;
		/* Nothing to do: drop the event, keep channels first. */
		ev[e] = ev[--ne];
	}
	if (!ne)
		return false;
	s->steps++;
	check(s);
	return true;
}

/* Deliver every message, including those deliveries queue, in order. */
static void deliver_all(struct sim *s)
{
	int a, b, guard;
	bool moved = true;

	for (guard = 0; guard < 1000 && moved && !s->failed; guard++) {
		moved = false;
		for (a = 0; a < NODES; a++)
			for (b = 0; b < NODES; b++)
				if (s->chan[a][b].len) {
					deliver(s, a, b);
					moved = true;
				}
	}
}

/* A complete access by thread @t, messages delivered; the byte's value. */
static u8 sc_access(struct sim *s, int t, int p, int i, bool write)
{
	int guard;

	do_access(s, t, p, i, write);
	for (guard = 0; guard < 10 && s->thr[t].wait == W_FAULT &&
	     !s->failed; guard++) {
		deliver_all(s);
		if (s->thr[t].woken)
			retry(s, t);
	}
	if (!s->failed && s->thr[t].wait != W_NONE)
		fail(s, "access of thread %d to page %d did not complete", t,
		     p);
	return copy_of(s, t / THREADS, p)[i];
}

static void final_check(struct sim *s)
{
	int n, p, i, t;

	/* The quiescent form: nothing in flight, the poster done. */
	check_wakeups(s);
	if (!s->failed && (s->fx_posting || s->fx.tab.qlen))
		fail(s, "futex: %s, %d waiters queued after the drain",
		     s->fx_posting ? "a post unfinished" : "posts done",
		     s->fx.tab.qlen);
	for (t = 0; t < NTHR && !s->failed; t++)
		if (s->thr[t].wait != W_NONE || s->thr[t].held ||
		    s->thr[t].fx != FX_NONE ||
		    s->thr[t].phase != s->target)
			fail(s, "thread %d did not finish (wait %d, futex %d, locks %d, phase %d of %d)",
			     t, s->thr[t].wait, s->thr[t].fx, s->thr[t].held,
			     s->thr[t].phase, s->target);
	for (n = 0; n < NODES; n++)
		for (i = 0; i < NODES; i++)
			if (s->chan[n][i].len)
				fail(s, "messages left on %d->%d", n, i);
	for (p = 0; p < PAGES && !s->failed; p++) {
		for (i = 0; i < PLEN; i++)
			if (s->hcopy[p][i] != s->last[p][i])
				fail(s, "home copy of page %d byte %d = %u, last written %u by thread %d",
				     p, i, s->hcopy[p][i], s->last[p][i],
				     s->writer[p][i]);
		for (n = 0; n < NODES; n++)
			if (s->node[n].pg[p].state != SDSM_RC_NODE_I &&
			    memcmp(copy_of(s, n, p), s->hcopy[p], PLEN))
				fail(s, "node %d keeps a valid copy of page %d unlike the home copy after the last barrier",
				     n, p);
	}
	/* Every node reads every page, faulting as needed. */
	for (n = 0; n < NODES && !s->failed; n++)
		for (p = 0; p < PAGES && !s->failed; p++) {
			sc_access(s, T(n), p, 0, false);
			for (i = 0; i < PLEN && !s->failed; i++)
				if (copy_of(s, n, p)[i] != s->last[p][i])
					fail(s, "node %d reads page %d byte %d = %u after the last barrier, last written %u",
					     n, p, i, copy_of(s, n, p)[i],
					     s->last[p][i]);
		}
}

/* One random schedule of @n steps, then drain and the final checks. */
static void run_schedule(struct sim *s, unsigned long n)
{
	unsigned long i;
	int t, eff;

	for (i = 0; i < n && !s->failed && step(s); i++)
		;
	/* Locks released, then one more barrier for every thread. */
	s->drain = true;
	s->target = 0;
	for (t = 0; t < NTHR; t++) {
		struct thr *th = &s->thr[t];

		eff = th->phase + (th->wait == W_BARRIER ||
				   (th->wait == W_RELEASE && th->rel_lock < 0));
		if (eff + 1 > s->target)
			s->target = eff + 1;
	}
	for (i = 0; i < 100000 && !s->failed && step(s); i++)
		;
	if (!s->failed)
		final_check(s);
}

static void report_failure(struct sim *s, u64 seed)
{
	printf("# seed %llu failed; replay: SDSM_SEED=%llu SDSM_SCHEDULES=1 SDSM_ONLY='%s' make -s -C tests/host run\n",
	       (unsigned long long)seed, (unsigned long long)seed,
	       replay_name);
	dump(s);
}

struct test {
	const char *name;
	bool (*fn)(const struct test *t);
	int arg;
};

/* Three schedules in four alias the homes' copies, as the module does. */
static bool sim_alias(u64 seed)
{
	return seed % 4 != 0;
}

static bool test_random(const struct test *t)
{
	static struct sim s;
	unsigned long i, n = schedules * 20;
	unsigned long reads = 0, writes = 0, diffs = 0, wholes = 0;
	unsigned long merges = 0, invals = 0, refetch = 0, grants = 0;
	unsigned long gnot = 0, tnot = 0;
	unsigned long barriers = 0, flacq = 0, nsteps = 0, hand = 0, coal = 0;
	unsigned long aliased = 0, skips = 0, closes = 0, skipped = 0;
	unsigned long posts = 0, waits = 0, woken = 0, eagain = 0, stale = 0;
	unsigned long early = 0, qnot = 0, wnot = 0, checked = 0;

	(void)t;
	for (i = 0; i < n; i++) {
		u64 seed = base_seed + i;

		sim_init(&s, seed, MUT_NONE);
		s.alias = sim_alias(seed);
		run_schedule(&s, steps);
		if (s.failed) {
			/* Same seed, same schedule: now with its trace. */
			sim_init(&s, seed, MUT_NONE);
			s.alias = sim_alias(seed);
			s.quiet = false;
			run_schedule(&s, steps);
			report_failure(&s, seed);
			return false;
		}
		reads += s.reads;
		writes += s.writes;
		diffs += s.diffs;
		wholes += s.wholes;
		merges += s.merges;
		invals += s.invals;
		refetch += s.refetch;
		grants += s.grants;
		gnot += s.grant_notices;
		tnot += s.table_notices;
		barriers += s.barriers;
		flacq += s.flushes_at_acquire;
		hand += s.handoffs;
		coal += s.coalesced;
		aliased += s.aliased_writes;
		skips += s.excl_skips;
		skipped += !!s.excl_skips;
		closes += s.excl_closes;
		nsteps += s.steps;
		posts += (unsigned long)s.fx_cur;
		waits += s.fx_waits;
		woken += s.fx_woken;
		eagain += s.fx_eagain;
		stale += s.fx_stale;
		early += s.fx_early;
		qnot += s.fx_qnot;
		wnot += s.fx_wnot;
		checked += s.fx_checked;
	}
	printf("# %lu schedules x %lu steps (%lu steps with the drains): %lu reads, %lu writes, %lu lock grants, %lu barriers\n",
	       n, steps, nsteps, reads, writes, grants, barriers);
	printf("# lock grants carried %lu notices, where the whole tables held %lu\n",
	       gnot, tnot);
	printf("# %lu diffs (%lu WHOLE), %lu applied while another node's diff of the page was in flight, %lu copies invalidated at acquires, %lu dirty pages flushed by an acquire, %lu stale GRANT_READs asked again\n",
	       diffs, wholes, merges, invals, flacq, refetch);
	printf("# %lu mail bytes handed over through a lock, %lu faults coalesced with a READ in flight, %lu writes of a home in its home copy\n",
	       hand, coal, aliased);
	printf("# %lu written exclusive home pages a release left alone (in %lu schedules), %lu home intervals closed by a first foreign READ\n",
	       skips, skipped, closes);
	printf("# futex: %lu posts, %lu waits: %lu WOKEN (%lu before sleeping), %lu EAGAIN after QUEUED (%lu answered STALE); QUEUED carried %lu notices, WOKEN %lu; %lu data reads checked against a grant\n",
	       posts, waits, woken, early, eagain, stale, qnot, wnot, checked);
	/* About one schedule in 600 meets a stale GRANT_READ. */
	if (!merges || !wholes || !flacq || !hand || !coal || !aliased ||
	    !skips || !closes || !woken || !eagain || !stale || !qnot ||
	    !wnot || !checked ||
	    (n >= 10000 && !refetch)) {
		printf("# a race was never explored\n");
		return false;
	}
	return true;
}

static bool test_planted(const struct test *t)
{
	static struct sim s;
	unsigned long i, n = schedules > 10000 ? schedules : 10000;

	for (i = 0; i < n; i++) {
		u64 seed = base_seed + i;

		sim_init(&s, seed, t->arg);
		s.alias = sim_alias(seed);
		run_schedule(&s, steps);
		if (s.failed && !strncmp(s.why, "checker bug", 11)) {
			printf("# seed %llu: %s\n", (unsigned long long)seed,
			       s.why);
			return false;
		}
		if (s.failed) {
			printf("# caught by schedule %lu (seed %llu): %s\n",
			       i + 1, (unsigned long long)seed, s.why);
			return true;
		}
	}
	printf("# NOT caught in %lu schedules\n", n);
	return false;
}

/*
 * A variant that is not a bug: @t->arg must pass every schedule.  The
 * close at the first foreign READ (sdsm_rc_home_share()) keeps the page
 * in the state it has without exclusivity; a release checks @shared each
 * time, so a home copy left writable is flushed by the next one anyway.
 */
static bool test_variant(const struct test *t)
{
	static struct sim s;
	unsigned long i;

	for (i = 0; i < schedules; i++) {
		u64 seed = base_seed + i;

		sim_init(&s, seed, t->arg);
		s.alias = sim_alias(seed);
		run_schedule(&s, steps);
		if (s.failed) {
			sim_init(&s, seed, t->arg);
			s.alias = sim_alias(seed);
			s.quiet = false;
			run_schedule(&s, steps);
			report_failure(&s, seed);
			return false;
		}
	}
	printf("# %lu schedules passed\n", schedules);
	return true;
}

/* ---- the diff codec ---- */

static u64 crng = 1;

static u32 crand(u32 bound)
{
	u64 z = (crng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (u32)(z % bound);
}

static u8 dtwin[SDSM_RC_PAGE_MAX], dpage[SDSM_RC_PAGE_MAX];
static u8 dhome[SDSM_RC_PAGE_MAX], dwant[SDSM_RC_PAGE_MAX];
static u8 dbuf[SDSM_RC_DIFF_MAX(SDSM_RC_PAGE_MAX) + 16];

/*
 * Diff @dpage against @dtwin with @limit, apply it to @dhome (the twin with
 * other writers' bytes changed), compare with the merge.  Returns the size.
 */
static int roundtrip(u32 len, u32 limit, const char *what)
{
	u32 i;
	int r, e;

	for (i = 0; i < len; i++)
		dwant[i] = dpage[i] != dtwin[i] ? dpage[i] : dhome[i];
	r = sdsm_rc_diff_make(dtwin, dpage, len, dbuf, sizeof(dbuf), limit);
	if (r < SDSM_RC_DIFF_HDR || (u32)r > SDSM_RC_DIFF_MAX(len)) {
		printf("# %s: len %u limit %u: size %d\n", what, len, limit, r);
		return -1;
	}
	if (dbuf[0] == SDSM_RC_DIFF_RUNS && (u32)r > limit) {
		printf("# %s: RUNS of %d bytes over the limit %u\n", what, r,
		       limit);
		return -1;
	}
	e = sdsm_rc_diff_apply(dhome, len, dbuf, (u32)r);
	if (e || memcmp(dhome, dwant, len)) {
		printf("# %s: len %u limit %u size %d form %u: apply %d, %s\n",
		       what, len, limit, r, dbuf[0], e,
		       e ? "refused" : "wrong merge");
		return -1;
	}
	return r;
}

static bool test_diff_random(const struct test *t)
{
	static const u32 lens[] = { 8, 16, 32, 64, 4096, 4096, 4096 };
	unsigned long i, n = schedules * 2, runs = 0, whole = 0;
	u32 len, limit, j, k;

	(void)t;
	crng = base_seed;
	for (i = 0; i < n; i++) {
		len = lens[crand(sizeof(lens) / sizeof(lens[0]))];
		for (j = 0; j < len; j++)
			dtwin[j] = (u8)crand(256);
		memcpy(dpage, dtwin, len);
		memcpy(dhome, dtwin, len);
		switch (crand(5)) {
		case 0:		/* a few bytes */
			for (k = crand(8); k; k--)
				dpage[crand(len)] = (u8)crand(256);
			break;
		case 1:		/* a few runs, edges likely */
			for (k = crand(6) + 1; k; k--) {
				u32 off = crand(3) ? crand(len) :
					  crand(2) ? 0 : len - 1;
				u32 m = crand(len - off) + 1;

				for (j = off; j < off + m && j < len; j++)
					dpage[j] = (u8)(dtwin[j] + 1);
			}
			break;
		case 2:		/* everything */
			for (j = 0; j < len; j++)
				dpage[j] = (u8)(dtwin[j] + 1 + crand(255));
			break;
		case 3:		/* every other byte: the worst RUNS case */
			for (j = crand(2); j < len; j += 2)
				dpage[j] = (u8)(dtwin[j] ^ 0x5a);
			break;
		default:	/* nothing */
			break;
		}
		/* Another writer changed other bytes at the home. */
		for (k = crand(16); k; k--) {
			j = crand(len);
			if (dpage[j] == dtwin[j])
				dhome[j] = (u8)crand(256);
		}
		switch (crand(4)) {
		case 0:
			limit = 0;
			break;
		case 1:
			limit = crand(len);
			break;
		default:
			limit = SDSM_RC_DIFF_MAX(len);
		}
		if (roundtrip(len, limit, "random") < 0)
			return false;
		if (dbuf[0] == SDSM_RC_DIFF_WHOLE)
			whole++;
		else
			runs++;
	}
	printf("# %lu random diffs: %lu RUNS, %lu WHOLE, all merged right\n",
	       n, runs, whole);
	return (runs && whole) || n < 100;
}

static bool test_diff_edges(const struct test *t)
{
	static const u8 want[] = { SDSM_RC_DIFF_RUNS, 0, 2, 0,
				   0, 0, 1, 0, 0xa1,
				   6, 0, 2, 0, 0xa6, 0xa7 };
	u32 len = 4096, j;
	int r;

	(void)t;
	/* The exact encoding of a small case. */
	memset(dtwin, 0, 16);
	memset(dpage, 0, 16);
	dpage[0] = 0xa1;
	dpage[6] = 0xa6;
	dpage[7] = 0xa7;
	r = sdsm_rc_diff_make(dtwin, dpage, 16, dbuf, sizeof(dbuf), 64);
	if (r != (int)sizeof(want) || memcmp(dbuf, want, sizeof(want))) {
		printf("# encoding of runs {0}, {6,7} of a 16-byte page wrong (size %d)\n",
		       r);
		return false;
	}
	/* Nothing changed: a header alone. */
	r = sdsm_rc_diff_make(dtwin, dtwin, 8, dbuf, sizeof(dbuf), 64);
	if (r != SDSM_RC_DIFF_HDR || dbuf[2] || dbuf[3]) {
		printf("# empty diff has size %d\n", r);
		return false;
	}
	for (j = 0; j < len; j++)
		dtwin[j] = (u8)(j * 7);
#define EDGE(what, setup)						\
	do {								\
		memcpy(dpage, dtwin, len);				\
		memcpy(dhome, dtwin, len);				\
		setup;							\
		if (roundtrip(len, SDSM_RC_DIFF_MAX(len), what) < 0)	\
			return false;					\
	} while (0)
	EDGE("first byte", dpage[0]++);
	EDGE("last byte", dpage[len - 1]++);
	EDGE("first and last", (dpage[0]++, dpage[len - 1]++));
	EDGE("last two", (dpage[len - 2]++, dpage[len - 1]++));
	EDGE("whole page", for (j = 0; j < len; j++) dpage[j]++);
	EDGE("odd bytes", for (j = 1; j < len; j += 2) dpage[j]++);
	EDGE("even bytes, home's odd ones changed",
	     for (j = 0; j < len; j += 2) (dpage[j]++, dhome[j + 1]++));
#undef EDGE
	/* Dense: RUNS would exceed the WHOLE form, so WHOLE it is. */
	if (dbuf[0] != SDSM_RC_DIFF_WHOLE) {
		printf("# every other byte changed, yet RUNS\n");
		return false;
	}
	/* One run of the whole page: RUNS, 8 bytes of headers. */
	memcpy(dpage, dtwin, len);
	for (j = 0; j < len; j++)
		dpage[j]++;
	r = sdsm_rc_diff_make(dtwin, dpage, len, dbuf, sizeof(dbuf),
			      SDSM_RC_DIFF_MAX(len));
	if (r != SDSM_RC_DIFF_HDR + SDSM_RC_RUN_HDR + (int)len ||
	    dbuf[0] != SDSM_RC_DIFF_RUNS) {
		printf("# whole page changed: size %d form %u\n", r, dbuf[0]);
		return false;
	}
	return true;
}

static bool test_diff_whole(const struct test *t)
{
	u32 len = 4096, j;
	int r;

	(void)t;
	for (j = 0; j < len; j++)
		dtwin[j] = (u8)j;
	memcpy(dpage, dtwin, len);
	memcpy(dhome, dtwin, len);
	/* 300 runs of one byte: 1504 bytes as RUNS. */
	for (j = 100; j < 1000; j += 3)
		dpage[j] = (u8)(dtwin[j] + 1);
	/* Concurrent writer: bytes this diff did not touch. */
	for (j = 101; j < 1000; j += 3)
		dhome[j] = 0x11;
	r = roundtrip(len, 1000, "threshold");
	if (r != (int)SDSM_RC_DIFF_MAX(len) || dbuf[0] != SDSM_RC_DIFF_WHOLE) {
		printf("# over the threshold: size %d form %u, want WHOLE\n", r,
		       dbuf[0]);
		return false;
	}
	/* The same with a limit it fits: RUNS, concurrent bytes kept. */
	memcpy(dhome, dtwin, len);
	for (j = 101; j < 1000; j += 3)
		dhome[j] = 0x11;
	r = roundtrip(len, SDSM_RC_DIFF_MAX(len), "under the threshold");
	if (r != 1504 || dbuf[0] != SDSM_RC_DIFF_RUNS) {
		printf("# under the threshold: form %u, want RUNS\n", dbuf[0]);
		return false;
	}
	return true;
}

/* A malformed diff must be refused with -EPROTO and change nothing. */
static bool refused(const u8 *d, u32 size, u32 len, const char *what)
{
	int r;

	memcpy(dhome, dwant, len);
	r = sdsm_rc_diff_apply(dhome, len, d, size);
	if (r != -EPROTO || memcmp(dhome, dwant, len)) {
		printf("# %s: apply returned %d%s\n", what, r,
		       memcmp(dhome, dwant, len) ? ", page changed" : "");
		return false;
	}
	return true;
}

static bool test_diff_malformed(const struct test *t)
{
	static u8 d[SDSM_RC_DIFF_MAX(64) + 8];
	u32 len = 64, j, size;
	unsigned long i, accepted = 0;
	int r;

	(void)t;
	crng = base_seed ^ 0x5151;
	for (j = 0; j < len; j++) {
		dtwin[j] = (u8)j;
		dwant[j] = (u8)(j + 100);
		dpage[j] = dtwin[j];
	}
	dpage[3] = dpage[4] = dpage[40] = 0xff;
	/* RUNS: {3,4} and {40}. */
	size = (u32)sdsm_rc_diff_make(dtwin, dpage, len, dbuf, sizeof(dbuf),
				      64);
	if (size != 4 + 4 + 2 + 4 + 1) {
		printf("# setup: size %u\n", size);
		return false;
	}
	for (j = 0; j < size; j++)
		if (!refused(dbuf, j, len, "truncated RUNS"))
			return false;
#define BAD(what, edit)							\
	do {								\
		memcpy(d, dbuf, size + 1);				\
		edit;							\
		if (!refused(d, size, len, what))			\
			return false;					\
	} while (0)
	BAD("unknown form 0", d[0] = 0);
	BAD("unknown form 3", d[0] = 3);
	BAD("reserved byte set", d[1] = 1);
	BAD("one run more than present", d[2] = 3);
	BAD("one run fewer than present", d[2] = 1);
	BAD("empty run", d[6] = 0);
	BAD("run past the page", d[13] = 64);
	BAD("run ending past the page", d[13] = 63);
	BAD("runs out of order", d[13] = 1);
	BAD("runs overlapping", d[13] = 4);
	BAD("run offset 65535", (d[13] = 0xff, d[14] = 0xff));
	BAD("run length 65535", (d[6] = 0xff, d[7] = 0xff));
#undef BAD
	if (!refused(dbuf, size + 1, len, "trailing byte") ||
	    !refused(NULL, 0, len, "no diff"))
		return false;
	/* WHOLE. */
	size = (u32)sdsm_rc_diff_make(dtwin, dpage, len, dbuf, sizeof(dbuf),
				      0);
	if (size != SDSM_RC_DIFF_MAX(len) || dbuf[0] != SDSM_RC_DIFF_WHOLE) {
		printf("# setup: WHOLE size %u\n", size);
		return false;
	}
	for (j = 0; j < size; j++)
		if (!refused(dbuf, j, len, "truncated WHOLE"))
			return false;
	if (!refused(dbuf, size + 1, len, "WHOLE with a trailing byte"))
		return false;
	dbuf[2] = 1;
	if (!refused(dbuf, size, len, "WHOLE with a run count"))
		return false;
	/* Bad page sizes and buffers. */
	if (sdsm_rc_diff_apply(dhome, 0, dbuf, 4) != -EINVAL ||
	    sdsm_rc_diff_apply(dhome, 12, dbuf, 4) != -EINVAL ||
	    sdsm_rc_diff_apply(dhome, 4104, dbuf, 4) != -EINVAL ||
	    sdsm_rc_diff_make(dtwin, dpage, 0, dbuf, sizeof(dbuf), 0) !=
	    -EINVAL ||
	    sdsm_rc_diff_make(dtwin, dpage, len, dbuf,
			      SDSM_RC_DIFF_MAX(len) - 1, 0) != -ENOSPC) {
		printf("# a bad length or short buffer not refused\n");
		return false;
	}
	/* Garbage: refused untouched, or well-formed (then it applies). */
	for (i = 0; i < schedules * 20; i++) {
		size = crand(sizeof(d));
		for (j = 0; j < size; j++)
			d[j] = (u8)crand(crand(2) ? 3 : 256);
		if (crand(2))
			d[0] = (u8)(1 + crand(2));
		if (size > 1 && crand(2))
			d[1] = 0;
		memcpy(dhome, dwant, len);
		r = sdsm_rc_diff_apply(dhome, len, d, size);
		if (r == 0) {
			accepted++;
			continue;
		}
		if (r != -EPROTO || memcmp(dhome, dwant, len)) {
			printf("# garbage of %u bytes: %d%s\n", size, r,
			       memcmp(dhome, dwant, len) ? ", page changed" :
			       "");
			return false;
		}
	}
	printf("# %lu random buffers: %lu well-formed, the rest refused untouched\n",
	       schedules * 20, accepted);
	return true;
}

/* ---- scripted ---- */

#define EXPECT(s, cond, ...)						\
	do {								\
		if (!(s)->failed && !(cond))				\
			fail((s), __VA_ARGS__);				\
	} while (0)

static void sc_init(struct sim *s, int home0, int home1, int mutation)
{
	int n, p;

	sim_init(s, 1, mutation);
	s->home[0] = home0;
	s->home[1] = home1;
	s->home[2] = home0;
	for (n = 0; n < NODES; n++)
		for (p = 0; p < PAGES; p++)
			s->view[n][p] = s->home[p];
	s->limit = DMAX;
	s->quiet = false;
	s->drain = true;	/* scripts order things themselves */
}

static void sc_flush(struct sim *s, int n, int p)
{
	struct sdsm_rc_ctx ctx;
	struct priv pv;

	ctx_for(s, &pv, &ctx, n, p);
	sdsm_rc_flush(&ctx, &s->node[n].pg[p]);
}

static bool sc_acquire(struct sim *s, int n, int p, u32 version)
{
	struct sdsm_rc_ctx ctx;
	struct priv pv;

	ctx_for(s, &pv, &ctx, n, p);
	return sdsm_rc_acquire(&ctx, &s->node[n].pg[p], version);
}

static const struct msg *sc_peek(struct sim *s, int src, int dst)
{
	struct chan *c = &s->chan[src][dst];

	return c->len ? &c->q[c->head] : NULL;
}

static void sc_expect(struct sim *s, int src, int dst, u8 type)
{
	const struct msg *m = sc_peek(s, src, dst);

	if (s->failed)
		return;
	if (!m || m->kind != K_RC || m->m.type != type) {
		fail(s, "expected %s on %d->%d, found %s", sdsm_rc_msg_name(type),
		     src, dst, m ? sdsm_rc_msg_name(m->m.type) : "nothing");
		return;
	}
	deliver(s, src, dst);
}

static bool sc_done(struct sim *s)
{
	check(s);
	if (s->failed)
		dump(s);
	return !s->failed;
}

/*
 * Nodes 1 and 2 write disjoint bytes of page 0 (home 0) in the same
 * interval; both diffs merge at the home; node 1's copy follows its own
 * diff (version 1), node 2's does not (its diff made version 2 on top of
 * node 1's), so a notice of version 2 invalidates both, and both then
 * read both writes.
 */
static bool test_merge(const struct test *t)
{
	static struct sim s;
	u8 a, b;

	(void)t;
	sc_init(&s, 0, 0, MUT_NONE);
	sc_access(&s, T(1), 0, 0, false);
	sc_access(&s, T(2), 0, 0, false);
	a = sc_access(&s, T(1), 0, 5, true);
	b = sc_access(&s, T(2), 0, 6, true);
	EXPECT(&s, s.node[1].pg[0].state == SDSM_RC_NODE_RW &&
	       s.node[2].pg[0].state == SDSM_RC_NODE_RW,
	       "two writers of one page at once");
	sc_flush(&s, 1, 0);
	sc_flush(&s, 2, 0);
	sc_expect(&s, 1, 0, SDSM_RC_MSG_DIFF);
	sc_expect(&s, 2, 0, SDSM_RC_MSG_DIFF);
	EXPECT(&s, s.hcopy[0][5] == a && s.hcopy[0][6] == b &&
	       s.hs[0].ver == 2, "home did not merge both diffs");
	sc_expect(&s, 0, 1, SDSM_RC_MSG_DIFF_ACK);
	sc_expect(&s, 0, 2, SDSM_RC_MSG_DIFF_ACK);
	EXPECT(&s, s.node[1].pg[0].ver == 1 && s.node[1].pg[0].need == 1 &&
	       s.node[2].pg[0].ver == 0 && s.node[2].pg[0].need == 2,
	       "versions after the acks: n1 %u/%u n2 %u/%u",
	       s.node[1].pg[0].ver, s.node[1].pg[0].need,
	       s.node[2].pg[0].ver, s.node[2].pg[0].need);
	EXPECT(&s, sdsm_rc_release_ready(&s.node[1].local) &&
	       sdsm_rc_release_ready(&s.node[2].local), "acks not counted");
	EXPECT(&s, !sc_acquire(&s, 1, 0, 1), "node 1 holds version 1");
	EXPECT(&s, sc_acquire(&s, 1, 0, 2) && sc_acquire(&s, 2, 0, 2),
	       "a notice of version 2 must invalidate both copies");
	EXPECT(&s, sc_access(&s, T(1), 0, 6, false) == b &&
	       sc_access(&s, T(2), 0, 5, false) == a, "merged page not read");
	return sc_done(&s);
}

/*
 * Node 1's READ is served (version 0) before node 2's diff reaches the
 * home; node 1 then acquires the notice of that diff before the grant
 * arrives.  The grant is stale: node 1 must ask again, not install it.
 */
static bool test_stale_grant(const struct test *t)
{
	static struct sim s;
	u8 b;

	sc_init(&s, 0, 0, t->arg);
	sc_access(&s, T(2), 0, 0, false);
	b = sc_access(&s, T(2), 0, 9, true);
	do_access(&s, T(1), 0, 9, false);
	sc_expect(&s, 1, 0, SDSM_RC_MSG_READ);
	sc_flush(&s, 2, 0);
	sc_expect(&s, 2, 0, SDSM_RC_MSG_DIFF);
	sc_expect(&s, 0, 2, SDSM_RC_MSG_DIFF_ACK);
	EXPECT(&s, !sc_acquire(&s, 1, 0, s.node[2].pg[0].need),
	       "nothing to invalidate on node 1 yet");
	sc_expect(&s, 0, 1, SDSM_RC_MSG_GRANT_READ);
	if (t->arg == MUT_NONE)
		EXPECT(&s, s.node[1].pg[0].state == SDSM_RC_NODE_I &&
		       sc_peek(&s, 1, 0) && !s.thr[T(1)].woken,
		       "stale grant installed");
	deliver_all(&s);
	if (s.thr[T(1)].woken)
		retry(&s, T(1));
	if (t->arg == MUT_STALE_GRANT) {
		printf("# %s\n", s.failed ? s.why : "NOT caught");
		return s.failed;
	}
	EXPECT(&s, s.thr[T(1)].wait == W_NONE && s.node[1].copy[0][9] == b,
	       "node 1 reads %u, not node 2's released %u",
	       s.node[1].copy[0][9], b);
	return sc_done(&s);
}

/*
 * Node 1 wrote byte 3 (its interval is open) when an acquire tells it of
 * node 2's write to byte 4: the dirty stale copy sends its diff, then is
 * dropped; the READ of the next access travels behind the diff, so the
 * page read holds both; the release that follows waits for that diff.
 */
static bool test_dirty_acquire(const struct test *t)
{
	static struct sim s;
	u8 a, b;

	(void)t;
	sc_init(&s, 0, 0, MUT_NONE);
	sc_access(&s, T(1), 0, 0, false);
	sc_access(&s, T(2), 0, 0, false);
	a = sc_access(&s, T(1), 0, 3, true);
	b = sc_access(&s, T(2), 0, 4, true);
	sc_flush(&s, 2, 0);
	deliver_all(&s);
	EXPECT(&s, sc_acquire(&s, 1, 0, s.node[2].pg[0].need),
	       "dirty stale copy not invalidated");
	EXPECT(&s, s.node[1].pg[0].state == SDSM_RC_NODE_I &&
	       !s.node[1].has_twin[0] && s.node[1].local.unacked == 1 &&
	       sc_peek(&s, 1, 0) &&
	       sc_peek(&s, 1, 0)->m.type == SDSM_RC_MSG_DIFF,
	       "the open interval's diff must go first");
	EXPECT(&s, !sdsm_rc_release_ready(&s.node[1].local),
	       "a release must wait for that diff");
	EXPECT(&s, sc_access(&s, T(1), 0, 4, false) == b &&
	       s.node[1].copy[0][3] == a, "own write or node 2's lost");
	EXPECT(&s, sdsm_rc_release_ready(&s.node[1].local) &&
	       s.node[1].pg[0].need == 2 && s.node[1].pg[0].stamp,
	       "own diff's version not known for the next notice");
	return sc_done(&s);
}

/*
 * An exclusive home page: node 0, its home, writes it and releases twice
 * without a DIFF, the page staying writable; node 1's READ closes node
 * 0's interval (read-only, no version) and gets every write; node 0's
 * next write opens an interval its release flushes (version 1), whose
 * notice invalidates node 1's copy.
 */
static bool test_exclusive(const struct test *t)
{
	static struct sim s;
	u8 a, b;

	(void)t;
	sc_init(&s, 0, 0, MUT_NONE);
	s.alias = true;
	sc_access(&s, T(0), 0, 1, true);
	release_flush(&s, 0);
	deliver_all(&s);
	a = sc_access(&s, T(0), 0, 2, true);
	release_flush(&s, 0);
	deliver_all(&s);
	EXPECT(&s, s.node[0].pg[0].state == SDSM_RC_NODE_RW &&
	       s.node[0].map[0] == SDSM_PROTO_MAP_RW && s.excl_skips == 2 &&
	       !s.hs[0].ver && !s.diffs && !s.node[0].pg[0].need,
	       "an exclusive page was flushed");
	EXPECT(&s, sc_access(&s, T(1), 0, 2, false) == a,
	       "the first READ misses the home's write");
	EXPECT(&s, s.hs[0].shared && !s.hs[0].ver &&
	       s.node[0].pg[0].state == SDSM_RC_NODE_RO &&
	       s.node[0].map[0] == SDSM_PROTO_MAP_RO && !s.diffs,
	       "the first READ must close the home's interval silently");
	b = sc_access(&s, T(0), 0, 3, true);
	release_flush(&s, 0);
	deliver_all(&s);
	EXPECT(&s, s.excl_skips == 2 && s.diffs == 1 && s.hs[0].ver == 1 &&
	       s.node[0].pg[0].need == 1 &&
	       s.node[0].pg[0].state == SDSM_RC_NODE_RO,
	       "a shared page's write must make a version");
	EXPECT(&s, sc_acquire(&s, 1, 0, 1) &&
	       sc_access(&s, T(1), 0, 3, false) == b,
	       "the notice must bring the home's write");
	return sc_done(&s);
}

static void sc_lock(struct sim *s, int t, int l)
{
	s->thr[t].wait = W_LOCK;
	sync_send(s, t / THREADS, l % NODES, K_LOCK_REQ, l, t, NULL);
	deliver_all(s);
	EXPECT(s, s->thr[t].held & (1 << l), "thread %d not granted lock %d",
	       t, l);
}

static void sc_unlock(struct sim *s, int t, int l)
{
	release(s, t, l);
	deliver_all(s);
	if (s->thr[t].wait == W_RELEASE &&
	    sdsm_rc_release_ready(&s->node[t / THREADS].local))
		publish(s, t);
	deliver_all(s);
	EXPECT(s, s->thr[t].wait == W_NONE && !(s->thr[t].held & (1 << l)),
	       "thread %d did not release lock %d", t, l);
}

/*
 * Thread 0 (node 0) writes its mail byte of page 0, releases lock 0 (the
 * diff's notice goes to lock 0), then hands the byte to thread T(1) (node
 * 1, which holds an old copy of page 0) through lock 1.  Node 1 learns of
 * the write only from lock 1: thread 0's release of lock 1 must carry
 * what it knew before acquiring it.  With MUT_SINCE_ACQUIRE lock 1's
 * grant moves thread 0's clock for lock 1 past that write, unpublished to
 * lock 1: it does not, and the stale copy is read.
 */
static bool test_transitive(const struct test *t)
{
	static struct sim s;
	struct mail *ml;
	int i;
	u8 v;

	sc_init(&s, 0, 0, t->arg);
	for (i = 0; role(0, i) != R_MAIL; i++)
		;
	ml = &s.mail[0][i];
	ml->owner = 0;
	sc_access(&s, T(1), 0, i, false);
	v = sc_access(&s, 0, 0, i, true);
	sc_lock(&s, 0, 0);
	sc_unlock(&s, 0, 0);
	sc_lock(&s, 0, 1);
	*ml = (struct mail) { .owner = -1, .from = 0, .to = T(1), .lock = 1 };
	sc_unlock(&s, 0, 1);
	sc_lock(&s, T(1), 1);
	EXPECT(&s, ml->owner == T(1), "byte not handed over");
	sc_access(&s, T(1), 0, i, false);
	if (t->arg == MUT_SINCE_ACQUIRE) {
		printf("# %s\n", s.failed ? s.why : "NOT caught");
		return s.failed;
	}
	EXPECT(&s, s.node[1].copy[0][i] == v, "stale read");
	return sc_done(&s);
}

/*
 * Thread 0 (node 0) writes its mail byte of page 0 and releases lock 0:
 * one notice.  Thread T(1) (node 1) takes lock 0, whose grant brings that
 * notice, and releases it having written nothing: it publishes none (the
 * lock knows it).  Then it writes a byte of its own under lock 0 and
 * releases: one notice, its own; thread T(2) reads both bytes under lock 0.
 */
static bool test_grant_echo(const struct test *t)
{
	static struct sim s;
	unsigned long before;
	int i, j;
	u8 a, b;

	(void)t;
	sc_init(&s, 2, 2, MUT_NONE);
	for (i = 0; role(0, i) != R_MAIL; i++)
		;
	for (j = i + 1; role(0, j) != R_MAIL; j++)
		;
	sc_lock(&s, 0, 0);
	a = sc_access(&s, 0, 0, i, true);
	sc_unlock(&s, 0, 0);
	EXPECT(&s, s.pub_notices == 1, "thread 0 published %lu notices, want 1",
	       s.pub_notices);
	before = s.pub_notices;
	sc_lock(&s, T(1), 0);
	sc_unlock(&s, T(1), 0);
	EXPECT(&s, s.pub_notices == before,
	       "a release published %lu notices its lock's grant brought",
	       s.pub_notices - before);
	sc_lock(&s, T(1), 0);
	b = sc_access(&s, T(1), 0, j, true);
	sc_unlock(&s, T(1), 0);
	EXPECT(&s, s.pub_notices == before + 1,
	       "a release after a write published %lu notices, want 1",
	       s.pub_notices - before);
	sc_lock(&s, T(2), 0);
	EXPECT(&s, sc_access(&s, T(2), 0, i, false) == a &&
	       sc_access(&s, T(2), 0, j, false) == b, "stale read");
	sc_unlock(&s, T(2), 0);
	return sc_done(&s);
}

/* Thread @t arrives at the barrier (its release and publish done). */
static void sc_arrive(struct sim *s, int t)
{
	release(s, t, -1);
	deliver_all(s);
	if (s->thr[t].wait == W_RELEASE &&
	    sdsm_rc_release_ready(&s->node[t / THREADS].local))
		publish(s, t);
	deliver_all(s);
}

/*
 * A barrier with a count (2 of the 6 threads) departs without node 1,
 * then with it: thread 0 (node 0) writes its mail byte of page 0 (home
 * 2; node 1 holds an old copy) and arrives with thread T(2); its next
 * arrival, with thread T(1), publishes nothing new (only what rose since
 * its last arrival).  Node 1 must still get the write's notice at that
 * departure: the barrier's table keeps every episode's notices.  With
 * MUT_BAR_EPISODE it keeps one episode's, and node 1 reads its stale
 * copy.
 */
static bool test_barrier_skip(const struct test *t)
{
	static struct sim s;
	int i;
	u8 v;

	sc_init(&s, 2, 2, t->arg);
	s.bcount = 2;
	for (i = 0; role(0, i) != R_MAIL; i++)
		;
	s.mail[0][i].owner = 0;
	sc_access(&s, T(1), 0, i, false);
	v = sc_access(&s, 0, 0, i, true);
	sc_arrive(&s, 0);
	sc_arrive(&s, T(2));
	EXPECT(&s, s.thr[0].phase == 1 && s.thr[T(2)].phase == 1 &&
	       !s.thr[T(1)].phase, "first episode: threads 0 and %d", T(2));
	sc_arrive(&s, 0);
	sc_arrive(&s, T(1));
	EXPECT(&s, s.thr[0].phase == 2 && s.thr[T(1)].phase == 1,
	       "second episode: threads 0 and %d", T(1));
	sc_access(&s, T(1), 0, i, false);
	if (t->arg == MUT_BAR_EPISODE) {
		printf("# %s\n", s.failed ? s.why : "NOT caught");
		return s.failed;
	}
	EXPECT(&s, s.node[1].copy[0][i] == v, "stale read");
	return sc_done(&s);
}

/* Messages that break the protocol are refused, state untouched. */
static bool test_bad_messages(const struct test *t)
{
	static struct sim s;
	static struct msg m;
	struct sdsm_rc_page before;
	struct sdsm_rc_home hbefore;
	u8 hcopy[PLEN];
	int i, errors;
	static const struct {
		u8 type;
		int src, dst, page;
		u8 flags;
		u32 version;
	} bad[] = {
		/* unasked */
		{ SDSM_RC_MSG_GRANT_READ, 0, 1, 0, SDSM_RC_F_DATA, 1 },
		{ SDSM_RC_MSG_DIFF_ACK, 0, 1, 0, 0, 1 },
		{ SDSM_RC_MSG_NACK, 0, 1, 0, 0, 1 },
		/* not from the home */
		{ SDSM_RC_MSG_GRANT_READ, 2, 1, 0, SDSM_RC_F_DATA, 1 },
		/* asked, but no data; older than the version asked */
		{ SDSM_RC_MSG_GRANT_READ, 0, 2, 0, 0, 1 },
		{ SDSM_RC_MSG_GRANT_READ, 0, 2, 0, SDSM_RC_F_DATA, 0 },
		/* unknown */
		{ 77, 0, 1, 0, 0, 1 },
		{ 77, 1, 0, 0, 0, 1 },
		/* DIFF without a diff, with a malformed one */
		{ SDSM_RC_MSG_DIFF, 1, 0, 0, 0, 1 },
		{ SDSM_RC_MSG_DIFF, 1, 0, 0, SDSM_RC_F_DIFF, 1 },
	};

	(void)t;
	sc_init(&s, 0, 1, MUT_NONE);
	sc_access(&s, T(1), 0, 0, false);
	sc_access(&s, T(1), 0, 1, true);
	sc_flush(&s, 1, 0);
	deliver_all(&s);
	sc_acquire(&s, 2, 0, 1);
	do_access(&s, T(2), 0, 0, false);	/* READ in flight, seq 1 */
	EXPECT(&s, s.node[2].pg[0].asked == 1, "READ asks for version 1");
	s.expect_errors = 1000;
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		errors = s.errors;
		memset(&m, 0, sizeof(m));
		m.kind = K_RC;
		m.m.type = bad[i].type;
		m.m.src = (u16)bad[i].src;
		m.m.dst = (u16)bad[i].dst;
		m.m.page = (u64)bad[i].page;
		m.m.flags = bad[i].flags;
		m.m.seq = 1;
		m.m.version = bad[i].version;
		m.size = 7;		/* a truncated RUNS diff */
		m.data[0] = SDSM_RC_DIFF_RUNS;
		m.data[2] = 1;
		before = s.node[bad[i].dst].pg[bad[i].page];
		hbefore = s.hs[bad[i].page];
		memcpy(hcopy, s.hcopy[bad[i].page], PLEN);
		push(&s, bad[i].src, bad[i].dst, &m);
		deliver(&s, bad[i].src, bad[i].dst);
		EXPECT(&s, s.errors == errors + 1, "bad %s %d->%d not refused",
		       sdsm_rc_msg_name(bad[i].type), bad[i].src, bad[i].dst);
		EXPECT(&s, !memcmp(&before, &s.node[bad[i].dst].pg[bad[i].page],
				   sizeof(before)) &&
		       !memcmp(&hbefore, &s.hs[bad[i].page], sizeof(hbefore)) &&
		       !memcmp(hcopy, s.hcopy[bad[i].page], PLEN),
		       "bad %s changed state", sdsm_rc_msg_name(bad[i].type));
	}
	/* The two refused DIFFs were answered with an error, unapplied. */
	for (i = 0; i < 2; i++) {
		const struct msg *a = sc_peek(&s, 0, 1);

		EXPECT(&s, a && a->m.type == SDSM_RC_MSG_DIFF_ACK &&
		       a->m.err == EPROTO && !a->m.version,
		       "refused DIFF not answered DIFF_ACK(EPROTO)");
		if (a)
			deliver(&s, 0, 1);	/* unasked there: refused */
	}
	s.expect_errors = s.errors;
	/* Node 2's READ, still in flight, is served normally. */
	deliver_all(&s);
	EXPECT(&s, s.thr[T(2)].woken && !s.thr[T(2)].ferr, "node 2 not served");
	retry(&s, T(2));
	/* A READ at a node that is not the page's home: ESTALE. */
	s.view[0][1] = 2;
	do_access(&s, T(0), 1, 0, false);
	deliver_all(&s);
	EXPECT(&s, s.thr[T(0)].woken && s.thr[T(0)].ferr == -ESTALE &&
	       s.hs[1].ver == 0, "READ at a non-home not refused ESTALE");
	s.thr[T(0)].wait = W_NONE;
	s.view[0][1] = 1;
	return sc_done(&s);
}

/* A refused diff fails the release that waited for it. */
static bool test_diff_refused(const struct test *t)
{
	static struct sim s;

	(void)t;
	sc_init(&s, 0, 0, MUT_NONE);
	sc_access(&s, T(1), 0, 0, false);
	sc_access(&s, T(1), 0, 1, true);
	s.limit = 0;
	sc_flush(&s, 1, 0);
	s.chan[1][0].q[s.chan[1][0].head].size = 5;	/* cut in transit */
	s.expect_errors = 1;
	sc_expect(&s, 1, 0, SDSM_RC_MSG_DIFF);
	sc_expect(&s, 0, 1, SDSM_RC_MSG_DIFF_ACK);
	EXPECT(&s, s.errors == 1 && s.hs[0].ver == 0 && !s.hcopy[0][1],
	       "malformed diff applied");
	EXPECT(&s, sdsm_rc_release_ready(&s.node[1].local) &&
	       s.node[1].local.lost == 1 && !s.node[1].pg[0].need,
	       "release must end, its diff counted lost");
	s.node[1].local.lost = 0;
	return sc_done(&s);
}

/*
 * The home of page 0 (node 2) dies while node 1 waits for a copy of it
 * and for the ack of a diff of page 2 (same home): both end, the diff
 * counts as lost, later faults fail; page 1 (home 0) still works.
 */
static bool test_home_dies(const struct test *t)
{
	static struct sim s;
	struct sdsm_rc_ctx ctx;
	struct priv pv;
	int p;

	(void)t;
	sc_init(&s, 2, 0, MUT_NONE);
	sc_access(&s, T(1), 2, 0, false);
	sc_access(&s, T(1), 2, 1, true);
	sc_access(&s, T(1), 1, 0, true);
	sc_flush(&s, 1, 2);
	do_access(&s, T(1), 0, 0, false);
	for (p = 0; p < PAGES; p++) {
		ctx_for(&s, &pv, &ctx, 1, p);
		sdsm_rc_node_peer_down(&ctx, &s.node[1].pg[p], 2);
	}
	memset(s.chan[1][2].q, 0, sizeof(s.chan[1][2].q));
	s.chan[1][2].len = 0;
	EXPECT(&s, s.thr[T(1)].woken && s.thr[T(1)].ferr == -EHOSTDOWN,
	       "waiter not failed with EHOSTDOWN");
	EXPECT(&s, sdsm_rc_release_ready(&s.node[1].local) &&
	       s.node[1].local.lost == 1, "unacked diff not counted lost");
	EXPECT(&s, s.node[1].pg[2].state == SDSM_RC_NODE_I &&
	       s.node[1].map[2] == SDSM_PROTO_MAP_NONE,
	       "copy homed on the dead node kept");
	ctx_for(&s, &pv, &ctx, 1, 0);
	EXPECT(&s, sdsm_rc_fault(&ctx, &s.node[1].pg[0], false) ==
	       -EHOSTDOWN, "later fault did not fail");
	EXPECT(&s, s.node[1].pg[1].state == SDSM_RC_NODE_RW,
	       "page homed elsewhere lost");
	s.node[1].local.lost = 0;
	s.thr[T(1)].wait = W_NONE;
	return sc_done(&s);
}

static const struct test tests[] = {
	{ "diff: random pages, merged with other writers' bytes",
	  test_diff_random, 0 },
	{ "diff: edge runs and the exact encoding", test_diff_edges, 0 },
	{ "diff: over the threshold the masked whole page", test_diff_whole,
	  0 },
	{ "diff: malformed diffs refused, page untouched",
	  test_diff_malformed, 0 },
	{ "random schedules, 3 nodes, 3 pages, 2 locks, a barrier, a futex",
	  test_random, 0 },
	{ "planted bug 'home acks a diff it dropped' caught", test_planted,
	  MUT_DROP_DIFF },
	{ "planted bug 'release forgets a dirty page's diff' caught",
	  test_planted, MUT_FLUSH_SKIPS },
	{ "planted bug 'acquire loses a write notice' caught", test_planted,
	  MUT_LOST_NOTICE },
	{ "planted bug 'acquire skips an invalidation' caught", test_planted,
	  MUT_SKIP_INVAL },
	{ "planted bug 'diff against a stale twin' caught", test_planted,
	  MUT_STALE_TWIN },
	{ "planted bug 'release publishes before its diffs are acked' caught",
	  test_planted, MUT_PUBLISH_EARLY },
	{ "planted bug 'WHOLE diff applied without its mask' caught",
	  test_planted, MUT_WHOLE_UNMASKED },
	{ "planted bug 'a home writes a private copy, diffs no bytes' caught",
	  test_planted, MUT_ALIAS_PRIVATE },
	{ "planted bug 'first foreign READ leaves the home page exclusive' caught",
	  test_planted, MUT_EXCL_NO_CLOSE },
	{ "planted bug 'a release skips a shared home page' caught",
	  test_planted, MUT_EXCL_SKIP_SHARED },
	{ "variant: shared without closing the home's interval is correct too",
	  test_variant, MUT_EXCL_SHARE_OPEN },
	{ "planted bug 'lock notices stamped before the clock moves' caught",
	  test_planted, MUT_GRANT_STAMP_EARLY },
	{ "planted bug 'a node's publish to one lock counts for every lock' caught",
	  test_planted, MUT_SINCE_SHARED },
	{ "planted bug 'futex QUEUED carries no notices' caught", test_planted,
	  MUT_FX_QUEUED_BARE },
	{ "planted bug 'futex WOKEN carries no notices' caught", test_planted,
	  MUT_FX_WOKEN_BARE },
	{ "planted bug 'futex WAKE without its release's publish' caught",
	  test_planted, MUT_FX_WAKE_UNPUBLISHED },
	{ "planted bug 'the futex shares lock 0's publish clock' caught",
	  test_planted, MUT_FX_SINCE_LOCK0 },
	{ "planted bug 'a grant moves the publish clock over unpublished notices' caught",
	  test_planted, MUT_SINCE_ACQUIRE },
	{ "race: concurrent writers of one page merge at the home",
	  test_merge, 0 },
	{ "race: GRANT_READ served before a noticed diff is asked again",
	  test_stale_grant, MUT_NONE },
	{ "race: without that check the stale copy is read",
	  test_stale_grant, MUT_STALE_GRANT },
	{ "race: knowledge is transitive (a byte handed over via a second lock)",
	  test_transitive, MUT_NONE },
	{ "race: with the grant's clock moved unguarded the stale copy is read",
	  test_transitive, MUT_SINCE_ACQUIRE },
	{ "a release does not publish a lock's own grant back to it",
	  test_grant_echo, 0 },
	{ "race: a barrier departure brings what an episode without the node published",
	  test_barrier_skip, MUT_NONE },
	{ "race: with a barrier table of one episode the stale copy is read",
	  test_barrier_skip, MUT_BAR_EPISODE },
	{ "planted bug 'the serial flag goes to every arrival of the last one's node' caught",
	  test_planted, MUT_BAR_SERIAL_NODE },
	{ "race: acquire of a dirty stale page sends its diff first",
	  test_dirty_acquire, 0 },
	{ "exclusive home page: skipped until the first foreign READ closes it",
	  test_exclusive, 0 },
	{ "protocol violations refused without state change",
	  test_bad_messages, 0 },
	{ "malformed diff answered EPROTO, the release fails",
	  test_diff_refused, 0 },
	{ "failure: home dies, waiters and unacked diffs end", test_home_dies,
	  0 },
};

int main(int argc, char **argv)
{
	int ntests = sizeof(tests) / sizeof(tests[0]);
	struct tap_args a;
	const char *only;
	int i, failed = 0, r;

	r = tap_parse_args(argc, argv, ntests, &a);
	if (r >= 0)
		return r;
	base_seed = tap_env_ulong("SDSM_SEED", (unsigned long)time(NULL));
	schedules = tap_env_ulong("SDSM_SCHEDULES", schedules);
	steps = tap_env_ulong("SDSM_STEPS", steps);
	only = getenv("SDSM_ONLY");

	if (a.plan)
		printf("TAP version 13\n1..%d\n", ntests);
	printf("# %srelease consistency: seed %llu, %lu schedules x %lu steps (SDSM_SEED, SDSM_SCHEDULES x 20, SDSM_STEPS)\n",
	       a.prefix, (unsigned long long)base_seed, schedules * 20,
	       steps);
	for (i = 0; i < ntests; i++) {
		bool ok;

		if (only && *only && !strstr(tests[i].name, only)) {
			printf("ok %d - %s%s # SKIP not in SDSM_ONLY\n",
			       a.first + i, a.prefix, tests[i].name);
			continue;
		}
		snprintf(replay_name, sizeof(replay_name), "%s",
			 tests[i].name);
		fflush(stdout);
		ok = tests[i].fn(&tests[i]);
		printf("%s %d - %s%s\n", ok ? "ok" : "not ok", a.first + i,
		       a.prefix, tests[i].name);
		fflush(stdout);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
