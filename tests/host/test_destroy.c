// SPDX-License-Identifier: GPL-2.0
/*
 * Host model checker of how a region destroy ends (kmod/sdsm_destroy.c):
 * the destroyer's two phases, and the survivors' decision when the
 * destroyer goes down before they learn its own ("Destroys in doubt" in
 * kmod/sdsm_region.c).  Printed as TAP 13.
 *
 * The rules are the module's own source; around them, a model of what
 * sdsm_region.c does with them, on N nodes (3 or 4) of which node 0 is the
 * destroyer:
 *
 *  sessions   one per pair of nodes, each a FIFO channel per direction.
 *             A session may end at any time (what it held is lost, both
 *             sides are told: DOWN), and come back as a new one.  The
 *             destroyer may die: every session of its ends, for good.
 *  destroyer  prepares itself, sends PREPARE to every node, collects the
 *             answers (a node whose session ends first answers no), then
 *             decides with sdsm_destroy_commits() (a session of its ended
 *             since the PREPARE: not kept) and sends COMMIT or ABORT.
 *  nodes      PREPARE: prepared, yes (no if busy: a mapping).  COMMIT:
 *             the region goes, and the node remembers that it saw the
 *             commit (its tombstone); ABORT: prepared no more.  DOWN of
 *             the destroyer while prepared: in doubt.  In doubt, a node asks
 *             every node it has a session with but the destroyer (whose
 *             decision counts only where it arrived) (REGION_QUERY); each
 *             answers sdsm_destroy_view() of its own state; an answer lost
 *             with its session counts as WAIT; when the round is complete,
 *             sdsm_destroy_end() decides, or a later round asks again.
 *  late       a node may not have learned the region yet when the destroy
 *             starts (the creator's ADD, or its own registrar's answer, is
 *             on its way: the registrar knows a region first, and may
 *             destroy it at once).  It votes yes without the region and is
 *             prepared all the same (its vote is kept, sdsm_absent_votes),
 *             in doubt too if the destroyer goes down; a COMMIT leaves its
 *             tombstone.  It learns the region at a random step (the ADD is
 *             never lost: a creator whose ADD is lost takes its create
 *             back), unless its tombstone refuses it, and then keeps the
 *             state of its vote.
 *
 * Each schedule runs random steps, then ends quiescent: no more faults,
 * sessions come back between the living nodes, messages drain, rounds
 * run.  Invariants: (a) at the end no living node is prepared or in doubt
 * (no destroy stays open); (b) the surviving nodes agree on whether the
 * region exists, unless one aborted while a node it could not reach had
 * committed or might still (a partition: each side decides with the nodes
 * it reaches, as a DOWN node counts as dead everywhere in sdsm); (c) the
 * destroyer agrees
 * with them too, except in the same case or in the window the rules leave
 * open: it committed, sent its COMMIT to every node, and none arrived
 * (Documentation/coherent-memory.rst, "Regions").  Planted bugs (mutations
 * of the rules' use, one TAP line each) must be caught.
 *
 * Environment: SDSM_SEED (schedule i uses SDSM_SEED + i), SDSM_SCHEDULES
 * (default 5000).  Options: --schedules N, --seed S, --count, --first N,
 * --prefix STR, --no-plan.  A failing schedule is printed with its trace.
 * A planted bug runs until it is caught, at most 20 * SDSM_SCHEDULES
 * schedules and 200,000 at least.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdsm_destroy.h"
#include "tap_args.h"

#define MAXN	4
#define QLEN	64
#define STEPS	60
#define TRACE	4096

enum mut {
	MUT_NONE,
	MUT_ABORT_ON_DOWN,	/* in doubt: abort at once, ask nobody */
	MUT_GONE_IGNORED,	/* a GONE answer counted as KEPT */
	MUT_WAIT_IGNORED,	/* a WAIT answer counted as KEPT */
	MUT_LOST_IS_KEPT,	/* an answer lost with its session: KEPT */
	MUT_NO_SESSION_CHECK,	/* the destroyer commits though sessions ended */
	MUT_DOUBT_WAITS,	/* a node in doubt answers WAIT */
	MUT_COMMIT_ON_DOWN,	/* in doubt: commit at once, ask nobody */
	MUT_ASK_DESTROYER,	/* the destroyer is asked too (the first version) */
	MUT_LEARN_UNPREPARED,	/* a late node learns the region unprepared */
	MUT_ABSENT_IS_GONE,	/* no region here answers GONE, tombstone or not */
	MUT_VOTE_DROPPED,	/* a vote without the region ends on DOWN */
};

enum msg_type { M_PREPARE, M_VOTE, M_COMMIT, M_ABORT, M_QUERY, M_ANSWER };

struct msg {
	enum msg_type type;
	int val;		/* VOTE: yes; ANSWER: the view; QUERY/ANSWER: round */
};

struct chan {
	struct msg q[QLEN];
	int head, n;
};

struct node {
	bool dead, have, prepared, in_doubt, busy;
	bool late;		/* has not learned the region yet */
	bool tomb;		/* saw the commit (its tombstone) */
	/*
	 * ghost: aborted alone (a round, or a mutant) while a node it could
	 * not reach had committed, or still could (a partition)
	 */
	bool blind;
	/* the destroyer */
	int phase;		/* 0 idle, 1 waiting for votes, 2 decided */
	unsigned int voted, yes;
	unsigned int epochs;	/* sum of its sessions' epochs at PREPARE */
	bool committed;
	/* a node in doubt: the round in flight */
	int round;
	unsigned int asked, answered;
	struct sdsm_destroy_tally tally;
	bool in_round;
};

struct world {
	int n;
	enum mut mut;
	unsigned long long rng;
	struct node nd[MAXN];
	bool up[MAXN][MAXN];
	unsigned int epoch[MAXN][MAXN];
	struct chan ch[MAXN][MAXN];
	bool commit_delivered;	/* ghost: a COMMIT reached a node */
	bool commit_sent_all;	/* ghost: the COMMIT went to every node */
	char trace[TRACE];
	size_t tlen;
};

static unsigned long long base_seed;
static const char *last_why;	/* the invariant the last schedule broke */
static unsigned long schedules = 5000;

static unsigned int rnd(struct world *w, unsigned int n)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (unsigned int)(w->rng % n);
}

static void tr(struct world *w, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (w->tlen >= TRACE - 1)
		return;
	va_start(ap, fmt);
	len = vsnprintf(w->trace + w->tlen, TRACE - w->tlen, fmt, ap);
	va_end(ap);
	if (len > 0)
		w->tlen += (size_t)len;
	if (w->tlen > TRACE - 1)
		w->tlen = TRACE - 1;
}

static bool send(struct world *w, int from, int to, enum msg_type t, int val)
{
	struct chan *c = &w->ch[from][to];

	if (!w->up[from][to] || c->n == QLEN)
		return false;
	c->q[(c->head + c->n) % QLEN] = (struct msg){ t, val };
	c->n++;
	return true;
}

static unsigned int epochs_of(struct world *w, int k)
{
	unsigned int s = 0;
	int j;

	for (j = 0; j < w->n; j++)
		s += w->epoch[k][j];
	return s;
}

/*
 * Node @k aborts with the nodes of @reach up: blind if another node out of
 * its reach (the destroyer aside) had committed, or was prepared for a
 * destroyer it was in touch with, and so might commit yet.
 */
static bool blind(struct world *w, int k, unsigned int reach)
{
	int z;

	for (z = 1; z < w->n; z++) {
		if (z == k || (reach & (1u << z)))
			continue;
		if (w->nd[z].tomb ||
		    (w->nd[z].prepared && !w->nd[z].in_doubt && w->up[z][0]))
			return true;
	}
	return false;
}

/* Node @x sees the commit: the region goes, its tombstone stays. */
static void saw_commit(struct node *x)
{
	x->have = false;
	x->tomb = true;
}

/* A node's round of questions is complete: decide, or ask again later. */
static void round_done(struct world *w, int k)
{
	struct node *x = &w->nd[k];
	enum sdsm_destroy_end end = sdsm_destroy_end(&x->tally);

	x->in_round = false;
	if (end == SDSM_DESTROY_ABORT)
		x->blind = blind(w, k, x->asked);
	tr(w, " n%d-round%d:%s", k, x->round,
	   end == SDSM_DESTROY_COMMIT ? "commit" :
	   end == SDSM_DESTROY_ABORT ? "abort" : "again");
	if (end == SDSM_DESTROY_AGAIN)
		return;
	if (end == SDSM_DESTROY_COMMIT)
		saw_commit(x);
	x->prepared = false;
	x->in_doubt = false;
}

static void count_answer(struct world *w, int k, enum sdsm_destroy_view v)
{
	struct node *x = &w->nd[k];

	if (w->mut == MUT_GONE_IGNORED && v == SDSM_DESTROY_GONE)
		v = SDSM_DESTROY_KEPT;
	if (w->mut == MUT_WAIT_IGNORED && v == SDSM_DESTROY_WAIT)
		v = SDSM_DESTROY_KEPT;
	sdsm_destroy_tally_add(&x->tally, v);
}

/* Node @k's view of the destroy, as it answers a REGION_QUERY. */
static enum sdsm_destroy_view view_of(struct world *w, int k)
{
	struct node *y = &w->nd[k];

	if (w->mut == MUT_DOUBT_WAITS && y->in_doubt)
		return SDSM_DESTROY_WAIT;
	if (w->mut == MUT_ABSENT_IS_GONE && !y->have)
		return SDSM_DESTROY_GONE;
	return sdsm_destroy_view(y->tomb, y->prepared, y->in_doubt,
				 k == 0 || w->up[k][0]);
}

/* The destroyer has every vote: decide, apply, tell. */
static void decide(struct world *w)
{
	struct node *d = &w->nd[0];
	bool all = d->yes == d->voted;
	bool kept = epochs_of(w, 0) == d->epochs;
	bool commit;
	int j;

	if (w->mut == MUT_NO_SESSION_CHECK)
		kept = true;
	commit = sdsm_destroy_commits(all, kept);
	d->phase = 2;
	d->committed = commit;
	tr(w, " d:%s", commit ? "COMMIT" : "ABORT");
	if (commit)
		saw_commit(d);
	d->prepared = false;
	w->commit_sent_all = commit;
	for (j = 1; j < w->n; j++)
		if (!send(w, 0, j, commit ? M_COMMIT : M_ABORT, 0))
			w->commit_sent_all = false;
}

static void all_votes_in(struct world *w)
{
	struct node *d = &w->nd[0];
	unsigned int all = ((1u << w->n) - 1) & ~1u;

	if (d->phase == 1 && d->voted == all)
		decide(w);
}

/* Session (a, b) ends: its messages are lost, both sides see DOWN. */
static unsigned int reach_of(struct world *w, int k)
{
	unsigned int m = 0;
	int j;

	for (j = 0; j < w->n; j++)
		if (w->up[k][j])
			m |= 1u << j;
	return m;
}

static void session_end(struct world *w, int a, int b)
{
	int s;

	if (!w->up[a][b])
		return;
	tr(w, " end%d-%d", a, b);
	for (s = 0; s < 2; s++) {
		int x = s ? b : a, y = s ? a : b;
		struct node *nx = &w->nd[x];

		w->up[x][y] = false;
		w->ch[x][y].n = 0;
		w->epoch[x][y]++;
		if (nx->dead)
			continue;
		/* The destroyer: a vote that cannot come is a no. */
		if (x == 0 && nx->phase == 1 && !(nx->voted & (1u << y))) {
			nx->voted |= 1u << y;
			all_votes_in(w);
		}
		if (w->mut == MUT_VOTE_DROPPED && y == 0 && nx->prepared &&
		    !nx->have)
			nx->prepared = false;
		/* A node prepared by the destroyer, now out of its reach. */
		if (y == 0 && nx->prepared && !nx->in_doubt) {
			nx->in_doubt = true;
			if (w->mut == MUT_ABORT_ON_DOWN ||
			    w->mut == MUT_COMMIT_ON_DOWN) {
				if (w->mut == MUT_COMMIT_ON_DOWN)
					saw_commit(nx);
				if (w->mut == MUT_ABORT_ON_DOWN)
					nx->blind = blind(w, x, reach_of(w, x));
				nx->prepared = false;
				nx->in_doubt = false;
			}
		}
		/* Its round waits for no answer from there. */
		if (nx->in_round && (nx->asked & (1u << y)) &&
		    !(nx->answered & (1u << y))) {
			nx->answered |= 1u << y;
			count_answer(w, x, w->mut == MUT_LOST_IS_KEPT ?
				     SDSM_DESTROY_KEPT : SDSM_DESTROY_WAIT);
			if (nx->answered == nx->asked)
				round_done(w, x);
		}
	}
}

static void deliver(struct world *w, int from, int to)
{
	struct chan *c = &w->ch[from][to];
	struct node *x = &w->nd[to];
	struct msg m = c->q[c->head];

	c->head = (c->head + 1) % QLEN;
	c->n--;
	switch (m.type) {
	case M_PREPARE:
		/* Late: the region is not here yet (ENOENT, a yes). */
		if ((x->have || (x->late && !x->tomb)) && !x->prepared &&
		    !x->busy) {
			x->prepared = true;
			send(w, to, from, M_VOTE, 1);
		} else {
			send(w, to, from, M_VOTE, 0);
		}
		break;
	case M_VOTE:
		if (x->phase == 1 && !(x->voted & (1u << from))) {
			x->voted |= 1u << from;
			if (m.val)
				x->yes |= 1u << from;
			all_votes_in(w);
		}
		break;
	case M_COMMIT:
		w->commit_delivered = true;
		if (x->prepared || !x->have) {
			saw_commit(x);
			x->prepared = false;
			x->in_doubt = false;
		}
		break;
	case M_ABORT:
		x->prepared = false;
		x->in_doubt = false;
		break;
	case M_QUERY:
		send(w, to, from, M_ANSWER, view_of(w, to) << 8 | m.val);
		break;
	case M_ANSWER:
		if (x->in_round && (m.val & 0xff) == (x->round & 0xff) &&
		    !(x->answered & (1u << from))) {
			x->answered |= 1u << from;
			count_answer(w, to, (enum sdsm_destroy_view)(m.val >> 8));
			if (x->answered == x->asked)
				round_done(w, to);
		}
		break;
	}
}

/*
 * A node in doubt starts a round: every node it has a session with, the
 * destroyer aside.
 */
static void start_round(struct world *w, int k)
{
	struct node *x = &w->nd[k];
	int j;

	x->round++;
	x->asked = 0;
	x->answered = 0;
	memset(&x->tally, 0, sizeof(x->tally));
	x->in_round = true;
	/* Not the destroyer: its decision counts only where it arrived. */
	for (j = w->mut == MUT_ASK_DESTROYER ? 0 : 1; j < w->n; j++)
		if (j != k && w->up[k][j] && send(w, k, j, M_QUERY, x->round & 0xff))
			x->asked |= 1u << j;
	tr(w, " n%d-ask%x", k, x->asked);
	if (!x->asked)
		round_done(w, k);
}

/* Late node @k learns the region: refused after a commit it saw. */
static void learn(struct world *w, int k)
{
	struct node *x = &w->nd[k];

	x->late = false;
	tr(w, " n%d-learns%s", k, x->tomb ? ":refused" : x->prepared ?
	   ":prepared" : "");
	if (x->tomb)
		return;
	x->have = true;
	if (w->mut == MUT_LEARN_UNPREPARED) {
		x->prepared = false;
		x->in_doubt = false;
	}
}

/* A living late node, looking from @a on, or -1. */
static int late_node(struct world *w, int a)
{
	int k, tries;

	for (tries = 0; tries < w->n; tries++) {
		k = (a + tries) % w->n;
		if (w->nd[k].late && !w->nd[k].dead)
			return k;
	}
	return -1;
}

static void reconnect(struct world *w, int a, int b)
{
	if (w->up[a][b] || w->nd[a].dead || w->nd[b].dead)
		return;
	tr(w, " up%d-%d", a, b);
	w->up[a][b] = w->up[b][a] = true;
}

/* One random step; @faults: sessions may end and a node may die. */
static bool step(struct world *w, bool faults)
{
	int a = rnd(w, w->n), b = rnd(w, w->n), k, tries;

	if (faults && rnd(w, 12) == 0) {
		if (a != b)
			session_end(w, a, b);
		return true;
	}
	if (faults && rnd(w, 40) == 0 && !w->nd[0].dead) {
		tr(w, " DIES");
		w->nd[0].dead = true;
		for (k = 1; k < w->n; k++)
			session_end(w, 0, k);
		return true;
	}
	if (rnd(w, 6) == 0 && a != b) {
		reconnect(w, a, b);
		return true;
	}
	if (rnd(w, 8) == 0 && (k = late_node(w, a)) >= 0) {
		learn(w, k);
		return true;
	}
	if (rnd(w, 5) == 0) {
		for (tries = 0; tries < w->n; tries++) {
			k = (a + tries) % w->n;
			if (!w->nd[k].dead && w->nd[k].in_doubt &&
			    !w->nd[k].in_round) {
				start_round(w, k);
				return true;
			}
		}
	}
	for (tries = 0; tries < w->n * w->n; tries++) {
		int f = (a + tries / w->n) % w->n, t = (b + tries) % w->n;

		if (f != t && w->ch[f][t].n && !w->nd[t].dead) {
			deliver(w, f, t);
			return true;
		}
	}
	return false;
}

/*
 * Nodes @x and @y may disagree only where the rules allow it: one of them
 * aborted blind (a partition: each side decides with the nodes it
 * reaches), or @x is the destroyer, which committed and sent its COMMIT to
 * every node, and none arrived.
 */
static bool may_differ(struct world *w, int x, int y)
{
	const struct node *a = &w->nd[x], *b = &w->nd[y];

	if (a->blind || b->blind)
		return true;
	return x == 0 && a->committed && w->commit_sent_all &&
	       !w->commit_delivered;
}

static bool check_end(struct world *w, const char **why)
{
	int k, j;

	for (k = 0; k < w->n; k++) {
		if (w->nd[k].dead)
			continue;
		if (w->nd[k].prepared || w->nd[k].in_doubt) {
			*why = "(a) a destroy stays open";
			return false;
		}
	}
	for (k = 0; k < w->n; k++)
		for (j = k + 1; j < w->n; j++) {
			if (w->nd[k].dead || w->nd[j].dead ||
			    w->nd[k].have == w->nd[j].have || may_differ(w, k, j))
				continue;
			*why = k ? "(b) two survivors disagree" :
				   "(c) the destroyer disagrees outside the window";
			return false;
		}
	return true;
}

/* One schedule; true if every invariant held. */
static bool run_one(unsigned long long seed, int n, enum mut mut, bool print)
{
	struct world *w = calloc(1, sizeof(*w));
	const char *why = NULL;
	int i, j, k, s;
	bool ok;

	w->n = n;
	w->mut = mut;
	w->rng = seed * 2654435761ULL + 1;
	for (k = 0; k < n; k++) {
		w->nd[k].late = k && rnd(w, 3) == 0;
		w->nd[k].have = !w->nd[k].late;
		w->nd[k].busy = rnd(w, 12) == 0 && k && !w->nd[k].late;
		for (j = 0; j < n; j++)
			w->up[k][j] = k != j;
	}
	/* The destroyer prepares itself and asks everyone. */
	w->nd[0].prepared = true;
	w->nd[0].phase = 1;
	w->nd[0].epochs = epochs_of(w, 0);
	for (j = 1; j < n; j++)
		send(w, 0, j, M_PREPARE, 0);
	for (s = 0; s < STEPS; s++)
		step(w, true);
	/* Quiescence: sessions back between the living, drain, rounds. */
	tr(w, " |");
	for (i = 0; i < 400; i++) {
		for (k = 0; k < n; k++)
			for (j = k + 1; j < n; j++)
				reconnect(w, k, j);
		if (!step(w, false)) {
			bool idle = true;

			k = late_node(w, 0);
			if (k >= 0) {
				learn(w, k);
				continue;
			}
			for (k = 0; k < n; k++)
				if (!w->nd[k].dead && w->nd[k].in_doubt) {
					if (!w->nd[k].in_round)
						start_round(w, k);
					idle = false;
				}
			if (idle)
				break;
		}
	}
	ok = check_end(w, &why);
	last_why = why;
	if (!ok && print)
		printf("# schedule %llu (n=%d) broke %s; trace:%.*s\n", seed, n,
		       why, (int)w->tlen, w->trace);
	free(w);
	return ok;
}

static bool test_random(int n)
{
	unsigned long i;

	for (i = 0; i < schedules; i++)
		if (!run_one(base_seed + i, n, MUT_NONE, true))
			return false;
	printf("# %lu schedules on %d nodes\n", schedules, n);
	return true;
}

static bool test_planted(int m)
{
	/* Some need a rare schedule; 200,000 take 1 s, 6 s sanitized. */
	unsigned long i, lim = 20 * schedules > 200000 ? 20 * schedules :
							   200000;

	for (i = 0; i < lim; i++)
		if (!run_one(base_seed + i, 3 + (int)(i & 1), (enum mut)m,
			     false)) {
			printf("# caught by schedule %llu: %s\n", base_seed + i,
			       last_why);
			return true;
		}
	printf("# NOT caught in %lu schedules\n", lim);
	return false;
}

/* The rules themselves, case by case. */
static bool test_rules(int unused)
{
	struct sdsm_destroy_tally t = {};
	bool ok = true;

	(void)unused;
	ok &= sdsm_destroy_commits(true, true);
	ok &= !sdsm_destroy_commits(true, false);
	ok &= !sdsm_destroy_commits(false, true);
	ok &= sdsm_destroy_view(true, false, false, false) == SDSM_DESTROY_GONE;
	ok &= sdsm_destroy_view(false, true, false, true) == SDSM_DESTROY_WAIT;
	ok &= sdsm_destroy_view(false, true, true, true) == SDSM_DESTROY_KEPT;
	ok &= sdsm_destroy_view(false, true, false, false) == SDSM_DESTROY_KEPT;
	ok &= sdsm_destroy_view(false, false, false, true) == SDSM_DESTROY_KEPT;
	ok &= sdsm_destroy_end(&t) == SDSM_DESTROY_ABORT;
	sdsm_destroy_tally_add(&t, SDSM_DESTROY_KEPT);
	ok &= sdsm_destroy_end(&t) == SDSM_DESTROY_ABORT;
	sdsm_destroy_tally_add(&t, SDSM_DESTROY_WAIT);
	ok &= sdsm_destroy_end(&t) == SDSM_DESTROY_AGAIN;
	sdsm_destroy_tally_add(&t, SDSM_DESTROY_GONE);
	ok &= sdsm_destroy_end(&t) == SDSM_DESTROY_COMMIT;
	return ok;
}

static const struct {
	const char *name;
	bool (*fn)(int);
	int arg;
} tests[] = {
	{ "the rules, case by case", test_rules, 0 },
	{ "random schedules, 3 nodes: no destroy stays open, the survivors agree", test_random, 3 },
	{ "random schedules, 4 nodes: no destroy stays open, the survivors agree", test_random, 4 },
	{ "planted bug 'a node in doubt aborts without asking' caught",
	  test_planted, MUT_ABORT_ON_DOWN },
	{ "planted bug 'a GONE answer is ignored' caught",
	  test_planted, MUT_GONE_IGNORED },
	{ "planted bug 'a WAIT answer is ignored' caught",
	  test_planted, MUT_WAIT_IGNORED },
	{ "planted bug 'an answer lost with its session counts as KEPT' caught",
	  test_planted, MUT_LOST_IS_KEPT },
	{ "planted bug 'the destroyer commits though a session ended' caught",
	  test_planted, MUT_NO_SESSION_CHECK },
	{ "planted bug 'a node in doubt answers WAIT' caught",
	  test_planted, MUT_DOUBT_WAITS },
	{ "planted bug 'a node in doubt commits without asking' caught",
	  test_planted, MUT_COMMIT_ON_DOWN },
	{ "planted bug 'the destroyer is asked too' caught",
	  test_planted, MUT_ASK_DESTROYER },
	{ "planted bug 'a node that voted without the region learns it unprepared' caught",
	  test_planted, MUT_LEARN_UNPREPARED },
	{ "planted bug 'a node without the region answers GONE, tombstone or not' caught",
	  test_planted, MUT_ABSENT_IS_GONE },
	{ "planted bug 'a vote without the region ends when the destroyer goes down' caught",
	  test_planted, MUT_VOTE_DROPPED },
};

#define NTESTS	((int)(sizeof(tests) / sizeof(tests[0])))

int main(int argc, char **argv)
{
	struct tap_args ta;
	int i, ret, failed = 0;
	bool ok;

	ret = tap_begin_seeded(argc, argv, NTESTS, &ta, &base_seed, &schedules,
			       "destroy model", "schedules");
	if (ret >= 0)
		return ret;
	for (i = 0; i < NTESTS; i++) {
		ok = tests[i].fn(tests[i].arg);
		tap_result(&ta, i, ok, "%s", tests[i].name);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
