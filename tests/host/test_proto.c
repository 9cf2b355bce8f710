// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of kmod/sdsm_proto.c, printed as TAP 13.
 *
 *   random schedules  thousands of seeded random interleavings, invariants
 *                     checked after every step (see sim.c)
 *   planted bugs      the same checker against deliberately broken
 *                     variants; each passes only if its bug is caught
 *   races             scripted interleavings of the known hard cases
 *   failures          node death: waiters fail, lost pages stay lost
 *   leaving           a node that unloads (rmmod) hands its pages back
 *
 * Environment: SDSM_SEED (base seed, default from the clock; schedule i
 * uses SDSM_SEED + i), SDSM_SCHEDULES (default 5000), SDSM_STEPS (steps per
 * schedule before draining, default 300), SDSM_ONLY (run only tests whose
 * name contains it).  Options: --count, --first N (number of the first
 * test), --prefix STR (prepended to names), --no-plan (no TAP header).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"
#include "tap_args.h"

struct test {
	const char *name;
	bool (*fn)(const struct test *t);
	int arg;
};

static u64 base_seed;
static unsigned long schedules = 5000;
static unsigned long steps = 300;
static char replay_name[160];

static void report_failure(struct sim *s, u64 seed)
{
	printf("# seed %llu failed; replay: SDSM_SEED=%llu SDSM_SCHEDULES=1 SDSM_ONLY='%s' make -s -C tests/host run\n",
	       (unsigned long long)seed, (unsigned long long)seed,
	       replay_name);
	sim_dump(s, "# ");
}

/* ---- random schedules ---- */

/* @flags: RANDOM_FAILURES, RANDOM_PREFETCH, RANDOM_LEAVES. */
#define RANDOM_FAILURES	0x100	/* one node may die */
#define RANDOM_PREFETCH	0x200	/* nodes also read pages ahead */
#define RANDOM_LEAVES	0x400	/* one idle node may leave (rmmod) */

static void random_setup(struct sim *s, int nnodes, int npages, u64 seed,
			 int mutation, unsigned int flags)
{
	int homes[SIM_PAGES], p, n;

	sim_init(s, nnodes, npages, NULL, seed);
	/* Random homes: some nodes home several pages, some none. */
	for (p = 0; p < npages; p++)
		homes[p] = (int)sim_rand(s, nnodes);
	sim_init(s, nnodes, npages, homes, seed);
	s->mutation = mutation;
	s->failures = flags & RANDOM_FAILURES;
	s->prefetch = (flags & RANDOM_PREFETCH) ||
		      mutation == MUT_PREFETCH_NOT_HELD;
	s->leaves = (flags & RANDOM_LEAVES) ||
		    mutation == MUT_LEAVE_NO_TAKE_BACK;
	/* Half the schedules grant unowned pages' READs writable. */
	s->exclusive = (seed >> 1) & 1;
	/* Half detect migratory pages (the module's default). */
	s->migratory = (seed >> 4) & 1 ||
		       mutation == MUT_MIGRATORY_KEEPS_COPY;
	/*
	 * Three in four let the home grant its own faults in the call, as
	 * the module does; the rest keep its messages to itself explored.
	 */
	s->own_grant = (seed >> 2) & 3 || mutation == MUT_OWN_GRANT_SHARED ||
		       mutation == MUT_OWN_GRANT_STALE ||
		       mutation == MUT_OWN_FINISH_NOT_HELD ||
		       mutation == MUT_OWN_INV_HELD;
	/* Views of a home that is gone would fail for no reason of its own. */
	if (s->failures || s->leaves)
		return;
	/*
	 * A placement change racing first touches: some nodes take another
	 * node for the home of a page (at worst themselves) until refused.
	 */
	for (p = 0; p < npages; p++)
		for (n = 0; n < nnodes; n++)
			if (n != homes[p] && !sim_rand(s, 4))
				s->view[n][p] = (homes[p] + 1 +
						 (int)sim_rand(s, nnodes - 1)) %
						nnodes;
}

static bool test_random(const struct test *t)
{
	static struct sim s;
	unsigned long i, reads = 0, writes = 0, msgs = 0, coal = 0, errs = 0;
	unsigned long deaths = 0, invup = 0, parked = 0, fetch = 0, self = 0;
	unsigned long own = 0, pref = 0, joined = 0, unused = 0, excl = 0;
	unsigned long own_grants = 0, own_finishes = 0, own_invs = 0;
	unsigned long deferred = 0, released = 0, timeouts = 0, redir = 0;
	unsigned long migr = 0, reverts = 0, leaves = 0, taken = 0;
	unsigned long n = schedules * (t->arg >> 16 ? t->arg >> 16 : 1);
	int npages = (t->arg >> 12) & 0xf ? (t->arg >> 12) & 0xf : SIM_PAGES;
	int bypass = 0;

	for (i = 0; i < n; i++) {
		u64 seed = base_seed + i;

		random_setup(&s, t->arg & 0xff, npages, seed, MUT_NONE,
			     t->arg & 0x700);
		s.quiet = true;
		sim_random(&s, npages < SIM_PAGES ? steps / 10 : steps);
		if (s.failed) {
			/* Same seed, same schedule: now with its trace. */
			random_setup(&s, t->arg & 0xff, npages, seed, MUT_NONE,
				     t->arg & 0x700);
			sim_random(&s, npages < SIM_PAGES ? steps / 10 : steps);
			report_failure(&s, seed);
			return false;
		}
		reads += s.reads;
		writes += s.writes;
		msgs += s.delivered;
		coal += s.coalesced;
		errs += s.errs;
		deaths += s.dead[0] + s.dead[1] + s.dead[2] + s.dead[3];
		invup += s.inv_vs_upgrade;
		parked += s.parked;
		fetch += s.fetches;
		self += s.self_msgs;
		own += s.own_fetches;
		own_grants += s.own_grants;
		own_finishes += s.own_finishes;
		own_invs += s.own_invs;
		deferred += s.deferred;
		released += s.released;
		timeouts += s.hold_timeouts;
		redir += s.redirects;
		pref += s.prefetches;
		excl += s.exclusive_grants;
		migr += s.migratory_grants;
		reverts += s.migratory_reverts;
		joined += s.prefetch_joined;
		unused += s.prefetch_unused;
		leaves += s.leaver >= 0;
		taken += s.taken_back;
		if (s.max_bypass > bypass)
			bypass = s.max_bypass;
	}
	printf("# %lu schedules x %lu steps: %lu reads, %lu writes, %lu messages, %lu coalesced faults, %lu failed accesses, %lu node deaths\n",
	       n, npages < SIM_PAGES ? steps / 10 : steps, reads, writes,
	       msgs, coal, errs, deaths);
	printf("# holds: %lu INV/FETCH deferred, %lu answered after a use, %lu on the bound; a parked request saw at most %d grants to others\n",
	       deferred, released, timeouts, bypass);
	printf("# races hit: %lu INV vs pending upgrade, %lu requests parked at a busy home, %lu fetches from owners, %lu messages to self, %lu requests refused by a non-home (ESTALE)\n",
	       invup, parked, fetch, self, redir);
	printf("# %lu modified copies a home took from its own node side without messages, %lu read copies it dropped so, %lu faults a home granted itself without messages, %lu of them at the end of a transaction, %lu READs of unowned pages granted writable\n",
	       own, own_invs, own_grants, own_finishes, excl);
	if (!own) {
		printf("# the home-is-owner path was never explored\n");
		return false;
	}
	if (!own_grants) {
		printf("# the home's own grant was never explored\n");
		return false;
	}
	if (!own_invs) {
		printf("# the home dropping its own read copy was never explored\n");
		return false;
	}
	if (!own_finishes) {
		printf("# the home's own grant at a transaction's end was never explored\n");
		return false;
	}
	if (!excl && n > 1) {
		printf("# no READ was ever granted writable (exclusive)\n");
		return false;
	}
	printf("# migratory sharing: %lu READs granted writable, %lu pages found read-shared again\n",
	       migr, reverts);
	if ((!migr || !reverts) && n > 1) {
		printf("# migratory sharing or its end was never explored\n");
		return false;
	}
	if (t->arg & RANDOM_LEAVES) {
		printf("# leaving: %lu nodes left, their homes read %lu pages back from them\n",
		       leaves, taken);
		if (!taken) {
			printf("# no home ever read a page back from a leaving node\n");
			return false;
		}
	}
	if (!(t->arg & RANDOM_PREFETCH))
		return true;
	printf("# prefetch: %lu READs ahead of a fault, %lu faults waited for one, %lu prefetched copies taken back unused\n",
	       pref, joined, unused);
	if (!joined || !unused) {
		printf("# a fault joining a prefetch, or a prefetched copy taken back, was never explored\n");
		return false;
	}
	return true;
}

/* ---- planted bugs ---- */

static bool test_planted(const struct test *t)
{
	static struct sim s;
	unsigned long i, n = schedules > 2000 ? schedules : 2000;

	for (i = 0; i < n; i++) {
		u64 seed = base_seed + i;

		/* Every other schedule: one page, all contention. */
		random_setup(&s, 3, i & 1 ? 1 : SIM_PAGES, seed, t->arg, 0);
		sim_random(&s, steps);
		if (s.failed) {
			printf("# caught by schedule %lu (seed %llu): %s\n",
			       i + 1, (unsigned long long)seed, s.why);
			return true;
		}
	}
	printf("# NOT caught in %lu schedules\n", n);
	return false;
}

/* ---- scripted races ---- */

#define EXPECT(s, cond, ...)						\
	do {								\
		if (!(s)->failed && !(cond))				\
			sim_fail((s), __VA_ARGS__);			\
	} while (0)

static void expect_deliver(struct sim *s, int src, int dst, u8 type,
			   bool data)
{
	const struct sim_msg *m = sim_peek(s, src, dst);

	if (s->failed)
		return;
	if (!m || m->m.type != type ||
	    !!(m->m.flags & SDSM_PROTO_F_DATA) != data) {
		sim_fail(s, "expected %s%s on %d->%d, found %s%s",
			 sdsm_proto_msg_name(type), data ? "+data" : "",
			 src, dst, m ? sdsm_proto_msg_name(m->m.type) : "nothing",
			 m && (m->m.flags & SDSM_PROTO_F_DATA) ? "+data" : "");
		return;
	}
	sim_deliver(s, src, dst);
}

/* Deliver everything and run every woken access, in a fixed order. */
static void settle(struct sim *s)
{
	int guard, a, b;
	bool moved = true;

	for (guard = 0; guard < 10000 && moved && !s->failed; guard++) {
		moved = false;
		for (a = 0; a < s->nnodes; a++)
			for (b = 0; b < s->nnodes; b++)
				if (s->chan[a][b].len) {
					sim_deliver(s, a, b);
					moved = true;
				}
		if (sim_retry_all(s))
			moved = true;
		/* Holds a fault used end; unused ones on their bound. */
		for (a = 0; a < s->nnodes; a++)
			for (b = 0; b < s->npages; b++)
				if (sim_can_release(s, a, b, false) ||
				    (!moved && sim_can_release(s, a, b, true))) {
					sim_release(s, a, b,
						    s->node[a][b].flags &
						    SDSM_PROTO_NODE_HELD);
					moved = true;
				}
	}
	EXPECT(s, !moved, "no quiescence");
}

/* A complete access; returns the value read (or 0 on error). */
static u64 do_access(struct sim *s, int n, int p, bool write)
{
	int slot = sim_access(s, n, p, write);

	settle(s);
	EXPECT(s, slot >= 0 && s->acc[n][slot].state == ACC_FREE,
	       "access on node %d page %d did not complete", n, p);
	return write ? s->last[p] : s->last_read;
}

static bool script_done(struct sim *s)
{
	settle(s);
	if (!s->failed)
		sim_check_final(s);
	if (s->failed)
		sim_dump(s, "# ");
	return !s->failed;
}

/*
 * Sharers 1 and 2 both upgrade.  2's WRITE reaches the home first, so the
 * home invalidates 1 while 1's own WRITE is already on its way: 1 must end
 * up with a full grant (with data) after 2's write, not a bare upgrade.
 */
static bool test_upgrade_vs_inv(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a1, a2;
	u64 v2;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	do_access(&s, 1, 0, false);
	do_access(&s, 2, 0, false);
	a1 = sim_access(&s, 1, 0, true);	/* upgrade request in flight */
	a2 = sim_access(&s, 2, 0, true);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_WRITE, false);
	EXPECT(&s, s.dir[0].acks == 2, "home must wait for node 1's ack");
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_WRITE, false); /* parked */
	EXPECT(&s, s.dir[0].pend_write == 2, "node 1's WRITE not parked");
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_INV, false);
	EXPECT(&s, s.node[1][0].state == SDSM_PROTO_NODE_I &&
	       s.node[1][0].pending == SDSM_PROTO_REQ_WRITE,
	       "node 1 must drop its copy and keep waiting");
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_INV_ACK, false);
	/* 2 upgrades without data; the home then fetches from 2 for 1. */
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_GRANT_WRITE, false);
	sim_retry(&s, 2, a2);
	v2 = s.last[0];
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_FETCH_INV, false);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_DATA, true);
	EXPECT(&s, s.backing[0] == v2, "home copy not updated by DATA");
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_WRITE, true);
	EXPECT(&s, s.local[1][0] == v2, "node 1 did not get node 2's write");
	sim_retry(&s, 1, a1);
	EXPECT(&s, s.dir[0].owner == 1, "node 1 should own the page");
	EXPECT(&s, do_access(&s, 0, 0, false) == s.last[0] &&
	       s.last[0] > v2, "home reads a stale value");
	return script_done(&s);
}

/*
 * Nodes 1 and 2 write a page neither holds, at the same moment.  The home
 * grants 2 first; the FETCH_INV for 1 travels behind that grant on the
 * same FIFO, so 2 always gets the page before it must give it back.
 */
static bool test_two_writers(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a1, a2;
	u64 v2;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	a1 = sim_access(&s, 1, 0, true);
	a2 = sim_access(&s, 2, 0, true);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_WRITE, false);
	EXPECT(&s, s.dir[0].owner == 2 && sim_peek(&s, 0, 2),
	       "home should grant node 2 at once");
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_WRITE, false);
	EXPECT(&s, s.dir[0].busy == SDSM_PROTO_TXN_WRITE &&
	       s.dir[0].requester == 1 && s.chan[0][2].len == 2,
	       "home should fetch from 2 for 1, behind 2's grant");
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_GRANT_WRITE, true);
	EXPECT(&s, !sim_peek(&s, 0, 1), "node 1 must still wait");
	sim_retry(&s, 2, a2);
	v2 = s.last[0];
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_FETCH_INV, false);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_DATA, true);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_WRITE, true);
	EXPECT(&s, s.local[1][0] == v2, "node 1 did not get node 2's write");
	sim_retry(&s, 1, a1);
	EXPECT(&s, s.last[0] > v2 && s.dir[0].owner == 1,
	       "node 1 should own the page and have written last");
	EXPECT(&s, do_access(&s, 0, 0, false) == s.last[0],
	       "home reads a stale value");
	return script_done(&s);
}

/* Node 1 reads a page that node 2 owns dirty; home is node 0. */
static bool test_read_remote_owner(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	u64 v2;
	int a1;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	v2 = do_access(&s, 2, 0, true);
	a1 = sim_access(&s, 1, 0, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_READ, false);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_FETCH, false);
	EXPECT(&s, s.node[2][0].state == SDSM_PROTO_NODE_S &&
	       s.map[2][0] == SDSM_PROTO_MAP_RO,
	       "owner must downgrade to a read copy");
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_DATA, true);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_READ, true);
	sim_retry(&s, 1, a1);
	EXPECT(&s, s.last_read == v2, "reader got %llu, not the owner's %llu",
	       (unsigned long long)s.last_read, (unsigned long long)v2);
	EXPECT(&s, s.dir[0].sharers == 6 &&
	       s.dir[0].state == SDSM_PROTO_HOME_SHARED,
	       "directory should list sharers 1 and 2");
	return script_done(&s);
}

/*
 * Exclusive reads: node 1 reads a page nobody holds and gets it writable
 * (GRANT_WRITE with the data), so its write that follows is no fault; node
 * 2's read then fetches node 1's copy through the home, and both end up
 * sharing it.  With @arg false (exclusive off) the read is a read copy and
 * the write an upgrade.
 */
static bool test_exclusive_read(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	u64 msgs, v1;
	int a1;

	sim_init(&s, 3, 1, homes, 1);
	s.exclusive = t->arg;
	a1 = sim_access(&s, 1, 0, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_READ, false);
	expect_deliver(&s, 0, 1, t->arg ? SDSM_PROTO_MSG_GRANT_WRITE :
			SDSM_PROTO_MSG_GRANT_READ, true);
	sim_retry(&s, 1, a1);
	EXPECT(&s, s.node[1][0].state == (t->arg ? SDSM_PROTO_NODE_M :
					   SDSM_PROTO_NODE_S) &&
	       s.dir[0].owner == (t->arg ? 1 : SDSM_PROTO_NO_NODE),
	       "node 1 should hold the page %s", t->arg ? "modified" : "shared");
	msgs = s.delivered;
	v1 = do_access(&s, 1, 0, true);
	EXPECT(&s, (s.delivered == msgs) == !!t->arg,
	       "the write after the read took %llu messages",
	       (unsigned long long)(s.delivered - msgs));
	EXPECT(&s, do_access(&s, 2, 0, false) == v1,
	       "node 2 does not read node 1's write");
	EXPECT(&s, s.dir[0].sharers == 6 &&
	       s.dir[0].state == SDSM_PROTO_HOME_SHARED,
	       "directory should list sharers 1 and 2");
	return script_done(&s);
}

/*
 * The home (node 0) wrote its page, then node 1 reads it (@arg false) or
 * writes it (@arg true): the home takes its own modified copy without a
 * FETCH / DATA to itself and answers node 1 in one step; then the home
 * writes again and node 1 must see that write.
 */
static bool test_home_owner(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	bool write = t->arg;
	u64 v0;
	int a1, a0;

	sim_init(&s, 2, 1, homes, 1);
	v0 = do_access(&s, 0, 0, true);
	EXPECT(&s, s.node[0][0].state == SDSM_PROTO_NODE_M &&
	       s.dir[0].owner == 0, "home node should own its page");
	a1 = sim_access(&s, 1, 0, write);
	expect_deliver(&s, 1, 0, write ? SDSM_PROTO_MSG_WRITE :
			SDSM_PROTO_MSG_READ, false);
	EXPECT(&s, !sim_peek(&s, 0, 0), "home sent itself a message");
	EXPECT(&s, s.own_fetches == 1, "home did not take its own copy");
	EXPECT(&s, s.node[0][0].state == (write ? SDSM_PROTO_NODE_I :
					   SDSM_PROTO_NODE_S) &&
	       s.map[0][0] == (write ? SDSM_PROTO_MAP_NONE : SDSM_PROTO_MAP_RO),
	       "home's own copy not %s", write ? "invalidated" :
	       "write-protected");
	EXPECT(&s, s.backing[0] == v0, "home copy %llu is not the write %llu",
	       (unsigned long long)s.backing[0], (unsigned long long)v0);
	expect_deliver(&s, 0, 1, write ? SDSM_PROTO_MSG_GRANT_WRITE :
			SDSM_PROTO_MSG_GRANT_READ, true);
	sim_retry(&s, 1, a1);
	EXPECT(&s, s.done[1] == 1 && s.local[1][0] == (write ? s.last[0] : v0),
	       "node 1 did not get the home's write");
	EXPECT(&s, write ? s.dir[0].owner == 1 && !s.dir[0].sharers :
	       s.dir[0].sharers == 3 &&
	       s.dir[0].state == SDSM_PROTO_HOME_SHARED,
	       "directory wrong after the home gave its copy up");
	/* The home writes again: node 1 must lose its copy, then see it. */
	a0 = sim_access(&s, 0, 0, true);
	settle(&s);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE, "home write did not end");
	EXPECT(&s, do_access(&s, 1, 0, false) == s.last[0],
	       "node 1 reads a stale value after the home wrote again");
	EXPECT(&s, s.own_fetches == 2, "second read did not take the home's copy");
	return script_done(&s);
}

/*
 * The home's own faults with an idle directory need no message: node 0,
 * page 0's home, reads (a read copy, granted in the fault), upgrades (it
 * is the only reader) and after node 1 read the page, writes again: with
 * another reader that write goes by messages (INV to node 1), and node 1
 * then reads the new value.
 */
static bool test_home_own_grant(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a0;

	sim_init(&s, 2, 1, homes, 1);
	s.own_grant = true;
	s.exclusive = t->arg;
	a0 = sim_access(&s, 0, 0, false);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE && s.done[0] == 1,
	       "home's read did not complete in its fault");
	EXPECT(&s, !sim_peek(&s, 0, 0), "home sent itself a message");
	EXPECT(&s, s.own_grants == 1, "home did not grant itself");
	EXPECT(&s, t->arg ? s.node[0][0].state == SDSM_PROTO_NODE_M &&
	       s.dir[0].owner == 0 :
	       s.node[0][0].state == SDSM_PROTO_NODE_S &&
	       s.dir[0].sharers == 1, "home's own read granted wrongly");
	a0 = sim_access(&s, 0, 0, true);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE && s.done[0] == 2,
	       "home's write did not complete in its fault");
	EXPECT(&s, !sim_peek(&s, 0, 0), "home sent itself a message");
	EXPECT(&s, s.own_grants == 1, "an upgrade installed a copy again");
	EXPECT(&s, s.dir[0].owner == 0 && !s.dir[0].sharers &&
	       s.node[0][0].state == SDSM_PROTO_NODE_M,
	       "directory wrong after the home's own write");
	EXPECT(&s, do_access(&s, 1, 0, false) == s.last[0],
	       "node 1 does not read the home's write");
	EXPECT(&s, s.own_fetches == 1, "home did not give its copy up");
	a0 = sim_access(&s, 0, 0, true);
	EXPECT(&s, s.acc[0][a0].state == ACC_WAIT && s.dir[0].requester == 0,
	       "home's write past a reader did not start its transaction");
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_INV, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_INV_ACK, false);
	EXPECT(&s, s.node[0][0].state == SDSM_PROTO_NODE_M &&
	       (s.node[0][0].flags & SDSM_PROTO_NODE_HELD),
	       "home's write not granted, held, at the last INV_ACK");
	EXPECT(&s, s.own_finishes == 1 && s.own_grants == 1,
	       "an upgrade at a transaction's end installed a copy again");
	sim_retry(&s, 0, a0);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE, "home write did not end");
	EXPECT(&s, !s.self_msgs, "home sent itself a message");
	EXPECT(&s, do_access(&s, 1, 0, false) == s.last[0],
	       "node 1 reads a stale value after the home wrote again");
	return script_done(&s);
}

/*
 * The home's own read of a page another node owns: FETCH to the owner,
 * and at its DATA the directory grants the home's node side the owner's
 * data, held for the waiting fault: no READ to itself, no GRANT_READ
 * back.  Then its write, with the old owner reading: INV, and the grant
 * at the INV_ACK.
 */
static bool test_home_own_finish(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a0;
	u64 v1;

	(void)t;
	sim_init(&s, 2, 1, homes, 1);
	s.own_grant = true;
	v1 = do_access(&s, 1, 0, true);
	a0 = sim_access(&s, 0, 0, false);
	EXPECT(&s, s.acc[0][a0].state == ACC_WAIT &&
	       s.dir[0].busy == SDSM_PROTO_TXN_READ,
	       "home's read did not start its transaction");
	EXPECT(&s, !sim_peek(&s, 0, 0), "home sent itself a request");
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_FETCH, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_DATA, true);
	EXPECT(&s, !sim_peek(&s, 0, 0), "home sent itself a grant");
	EXPECT(&s, s.node[0][0].state == SDSM_PROTO_NODE_S &&
	       (s.node[0][0].flags & SDSM_PROTO_NODE_HELD) &&
	       s.local[0][0] == v1,
	       "home not granted the owner's data, held, at its DATA");
	sim_retry(&s, 0, a0);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE && s.last_read == v1,
	       "home's read did not see node 1's write");
	a0 = sim_access(&s, 0, 0, true);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_INV, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_INV_ACK, false);
	sim_retry(&s, 0, a0);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE, "home's write did not end");
	EXPECT(&s, s.own_finishes == 2 && !s.self_msgs,
	       "home's requests went through messages to itself");
	EXPECT(&s, do_access(&s, 1, 0, false) == s.last[0],
	       "node 1 reads a stale value after the home wrote");
	return script_done(&s);
}

/*
 * Another node's write past the home's own read copy: the directory drops
 * that copy in its call (ops->own_inv), no INV or INV_ACK through the
 * loop-back; node 2's copy goes by message.  The home then reads node 1's
 * write (FETCH, granted at the DATA), still sending itself nothing.
 */
static bool test_home_own_inv(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	u64 v1;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	s.own_grant = true;
	do_access(&s, 0, 0, false);
	do_access(&s, 2, 0, false);
	v1 = do_access(&s, 1, 0, true);
	EXPECT(&s, s.own_invs == 1 && s.node[0][0].state == SDSM_PROTO_NODE_I &&
	       s.map[0][0] == SDSM_PROTO_MAP_NONE,
	       "home's read copy not dropped in the directory's call");
	EXPECT(&s, s.node[2][0].state == SDSM_PROTO_NODE_I,
	       "node 2's read copy survived node 1's write");
	EXPECT(&s, do_access(&s, 0, 0, false) == v1,
	       "home reads a stale value after node 1's write");
	EXPECT(&s, !s.self_msgs, "home sent itself a message");
	return script_done(&s);
}

/*
 * A busy directory makes the home's own fault wait its turn: node 1 owns
 * page 0 (home 0), node 2's READ makes the home FETCH from node 1, and
 * the home's own read in the meantime goes to itself as a READ, parked
 * behind node 2's; both then read node 1's write.
 */
static bool test_home_own_busy(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a0, a2;
	u64 v1;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	s.own_grant = true;
	v1 = do_access(&s, 1, 0, true);
	a2 = sim_access(&s, 2, 0, false);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_READ, false);
	EXPECT(&s, s.dir[0].busy == SDSM_PROTO_TXN_READ,
	       "home not fetching from the owner");
	a0 = sim_access(&s, 0, 0, false);
	EXPECT(&s, s.acc[0][a0].state == ACC_WAIT,
	       "home's read went past a busy directory");
	expect_deliver(&s, 0, 0, SDSM_PROTO_MSG_READ, false);
	EXPECT(&s, s.dir[0].pend_read == 1, "home's own READ not parked");
	settle(&s);
	EXPECT(&s, s.acc[0][a0].state == ACC_FREE &&
	       s.acc[2][a2].state == ACC_FREE, "reads did not end");
	EXPECT(&s, s.local[0][0] == v1 && s.local[2][0] == v1,
	       "a reader missed node 1's write");
	/* Its parked READ is served after node 2's, without a grant back. */
	EXPECT(&s, s.own_finishes == 1 && s.self_msgs == 1,
	       "home's parked READ not granted on its node side");
	return script_done(&s);
}

/* The home (node 0) writes its own page while 1 and 2 hold read copies. */
static bool test_home_write_vs_sharers(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a0;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	do_access(&s, 0, 0, false);
	do_access(&s, 1, 0, false);
	do_access(&s, 2, 0, false);
	a0 = sim_access(&s, 0, 0, true);
	expect_deliver(&s, 0, 0, SDSM_PROTO_MSG_WRITE, false);
	EXPECT(&s, s.dir[0].acks == 6, "home must invalidate 1 and 2");
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_INV, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_INV_ACK, false);
	EXPECT(&s, !sim_peek(&s, 0, 0), "granted before node 2's ack");
	/* Node 1 wants it back meanwhile: parked behind the home's write. */
	sim_access(&s, 1, 0, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_READ, false);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_INV, false);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_INV_ACK, false);
	expect_deliver(&s, 0, 0, SDSM_PROTO_MSG_GRANT_WRITE, false);
	sim_retry(&s, 0, a0);
	EXPECT(&s, s.node[0][0].state == SDSM_PROTO_NODE_M,
	       "home node should be the writer");
	if (!script_done(&s))
		return false;
	EXPECT(&s, s.local[1][0] == s.last[0], "node 1 reads a stale copy");
	return !s.failed;
}

/* Three faults on one page of one node make one request. */
static bool test_coalesce(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a, b, c;

	(void)t;
	sim_init(&s, 2, 1, homes, 1);
	a = sim_access(&s, 1, 0, false);
	b = sim_access(&s, 1, 0, false);
	c = sim_access(&s, 1, 0, true);
	EXPECT(&s, s.chan[1][0].len == 1, "%u requests sent, want 1",
	       s.chan[1][0].len);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_READ, false);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_READ, true);
	EXPECT(&s, s.acc[1][a].state == ACC_RUNNABLE &&
	       s.acc[1][b].state == ACC_RUNNABLE &&
	       s.acc[1][c].state == ACC_RUNNABLE, "grant must wake all");
	sim_retry(&s, 1, a);
	sim_retry(&s, 1, b);
	EXPECT(&s, s.acc[1][a].state == ACC_FREE &&
	       s.acc[1][b].state == ACC_FREE, "reads must hit now");
	sim_retry(&s, 1, c);	/* the write now upgrades */
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_WRITE, false);
	return script_done(&s);
}

/* The home of a page dies while a fault waits: it fails, and so do later. */
static bool test_home_dies(const struct test *t)
{
	static struct sim s;
	int homes[2] = { 2, 0 };
	int a;

	(void)t;
	sim_init(&s, 3, 2, homes, 1);
	do_access(&s, 1, 1, true);
	a = sim_access(&s, 1, 0, false);
	sim_kill(&s, 2);
	EXPECT(&s, s.acc[1][a].state == ACC_FREE && s.last_err == -EHOSTDOWN,
	       "waiter not failed with EHOSTDOWN");
	s.last_err = 0;
	do_access(&s, 0, 0, true);
	EXPECT(&s, s.last_err == -EHOSTDOWN, "later fault did not fail");
	EXPECT(&s, do_access(&s, 0, 1, false) == s.last[1] && s.last[1],
	       "page homed elsewhere must still work");
	return script_done(&s);
}

/* The owner dies before returning the page: readers get EIO, not stale. */
static bool test_owner_dies(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	do_access(&s, 1, 0, false);
	do_access(&s, 2, 0, true);
	a = sim_access(&s, 1, 0, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_READ, false);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_FETCH, false);
	sim_kill(&s, 2);	/* its DATA dies with it */
	EXPECT(&s, s.dir[0].state == SDSM_PROTO_HOME_LOST, "page not lost");
	settle(&s);
	EXPECT(&s, s.acc[1][a].state == ACC_FREE && s.last_err == -EIO,
	       "reader not failed with EIO");
	s.last_err = 0;
	do_access(&s, 0, 0, true);
	EXPECT(&s, s.last_err == -EIO, "home's own write must fail too");
	return script_done(&s);
}

/* Messages that break the protocol are refused, state untouched. */
static bool test_bad_messages(const struct test *t)
{
	static struct sim s;
	struct sdsm_proto_node before;
	struct sdsm_proto_home hbefore;
	struct sim_msg m = { 0 };
	int homes[1] = { 0 };
	int i;
	static const struct { u8 type; int src, dst; } bad[] = {
		{ SDSM_PROTO_MSG_GRANT_READ, 0, 1 },	/* unasked */
		{ SDSM_PROTO_MSG_GRANT_WRITE, 0, 1 },	/* unasked */
		{ SDSM_PROTO_MSG_INV, 0, 2 },		/* not a sharer */
		{ SDSM_PROTO_MSG_FETCH, 0, 1 },		/* not the owner */
		{ SDSM_PROTO_MSG_NACK, 0, 2 },		/* unasked */
		{ SDSM_PROTO_MSG_INV_ACK, 1, 0 },	/* unasked */
		{ SDSM_PROTO_MSG_DATA, 2, 0 },		/* unasked */
		{ SDSM_PROTO_MSG_READ, 1, 0 },		/* from a sharer */
		{ SDSM_PROTO_MSG_GRANT_READ, 2, 1 },	/* not from home */
		{ 77, 0, 1 },				/* unknown */
		{ 77, 1, 0 },				/* unknown, to home */
	};

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	do_access(&s, 1, 0, false);
	s.expect_errors = 1000;
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		struct sim_chan *c = &s.chan[bad[i].src][bad[i].dst];
		int errors = s.errors;

		m.m.type = bad[i].type;
		m.m.src = bad[i].src;
		m.m.dst = bad[i].dst;
		m.m.flags = SDSM_PROTO_F_DATA;
		m.m.seq = 12345;
		before = s.node[bad[i].dst][0];
		hbefore = s.dir[0];
		c->q[(c->head + c->len) % SIM_CHAN_CAP] = m;
		c->len++;
		sim_deliver(&s, bad[i].src, bad[i].dst);
		EXPECT(&s, s.errors == errors + 1,
		       "bad %s %d->%d not refused",
		       sdsm_proto_msg_name(bad[i].type), bad[i].src,
		       bad[i].dst);
		EXPECT(&s, !memcmp(&before, &s.node[bad[i].dst][0],
				   sizeof(before)) &&
		       !memcmp(&hbefore, &s.dir[0], sizeof(hbefore)),
		       "bad %s changed state",
		       sdsm_proto_msg_name(bad[i].type));
	}
	s.expect_errors = s.errors;
	do_access(&s, 2, 0, true);
	return script_done(&s);
}

/* ---- progress ---- */

/* Receive context first: every message, every hold a fault used. */
static void receive_all(struct sim *s)
{
	bool moved = true;
	int a, b, guard;

	for (guard = 0; guard < 1000 && moved && !s->failed; guard++) {
		moved = false;
		for (a = 0; a < s->nnodes; a++)
			for (b = 0; b < s->nnodes; b++)
				if (s->chan[a][b].len) {
					sim_deliver(s, a, b);
					moved = true;
				}
		for (a = 0; a < s->nnodes; a++)
			for (b = 0; b < s->npages; b++)
				if (sim_can_release(s, a, b, false)) {
					sim_release(s, a, b, false);
					moved = true;
				}
	}
}

/*
 * Three writers on one page (home 0), each always wanting to write again,
 * under the schedule of the issue: the receive side always runs before a
 * woken faulter retries.  The faulters themselves are served fairly: in
 * each round every node retries its woken accesses once, node by node,
 * each after everything deliverable was delivered.  Holds never time out.
 * @arg: the mutation; MUT_NO_HOLD plays the protocol before the fix and
 * passes if some node starves, MUT_NONE passes if every node progresses.
 */
#define CONTENTION_ROUNDS	10000

static bool test_contention(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	unsigned long r, min;
	int n, i;

	sim_init(&s, 3, 1, homes, base_seed);
	s.mutation = t->arg;
	s.lax_progress = t->arg == MUT_NO_HOLD;
	for (r = 0; r < CONTENTION_ROUNDS && !s.failed; r++) {
		for (n = 0; n < s.nnodes; n++)
			if (!sim_pending_accesses_node(&s, n))
				sim_access(&s, n, 0, true);
		for (n = 0; n < s.nnodes; n++) {
			receive_all(&s);
			for (i = 0; i < SIM_ACC; i++)
				if (s.acc[n][i].state == ACC_RUNNABLE)
					sim_retry(&s, n, i);
		}
	}
	receive_all(&s);
	if (s.failed) {
		report_failure(&s, base_seed);
		return false;
	}
	min = s.done[0];
	for (n = 1; n < s.nnodes; n++)
		if (s.done[n] < min)
			min = s.done[n];
	printf("# %d rounds: writes per node %lu %lu %lu; %lu INV/FETCH deferred\n",
	       CONTENTION_ROUNDS, s.done[0], s.done[1], s.done[2], s.deferred);
	if (t->arg == MUT_NO_HOLD)
		return min == 0;
	/* Every round each node retries once: it writes in every cycle. */
	return min >= CONTENTION_ROUNDS / (unsigned long)(2 * s.nnodes);
}

/*
 * The hold: node 1's grant is followed at once by the FETCH_INV for node
 * 2; node 1 answers it only after its fault used the copy, then once the
 * deferred work ran.
 */
static bool test_hold_defers(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a1, a2;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	a1 = sim_access(&s, 1, 0, true);
	a2 = sim_access(&s, 2, 0, true);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_WRITE, true);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_FETCH_INV, false);
	EXPECT(&s, s.node[1][0].deferred == SDSM_PROTO_MSG_FETCH_INV &&
	       s.node[1][0].state == SDSM_PROTO_NODE_M && !s.chan[1][0].len,
	       "FETCH_INV must wait for node 1's fault");
	EXPECT(&s, !sim_can_release(&s, 1, 0, false),
	       "release possible before the use");
	sim_retry(&s, 1, a1);
	EXPECT(&s, s.acc[1][a1].state == ACC_FREE && s.done[1] == 1,
	       "node 1's write must complete");
	sim_release(&s, 1, 0, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_DATA, true);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_GRANT_WRITE, true);
	sim_retry(&s, 2, a2);
	EXPECT(&s, s.done[2] == 1 && s.local[2][0] == s.last[0],
	       "node 2's write must follow node 1's");
	return script_done(&s);
}

/*
 * A read grant, held; an INV for node 2's write is deferred; then node 1
 * wants to write: the read copy cannot serve that, so the fault ends the
 * hold (INV_ACK first) and asks for the page writable.
 */
static bool test_hold_read_then_upgrade(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a1, a2, w1;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	a1 = sim_access(&s, 1, 0, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_READ, false);
	a2 = sim_access(&s, 2, 0, true);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_GRANT_READ, true);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_INV, false);
	EXPECT(&s, s.node[1][0].deferred == SDSM_PROTO_MSG_INV,
	       "INV not deferred");
	w1 = sim_access(&s, 1, 0, true);
	EXPECT(&s, !s.node[1][0].deferred &&
	       s.node[1][0].state == SDSM_PROTO_NODE_I &&
	       s.chan[1][0].len == 2, "write fault must answer INV, then ask");
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_INV_ACK, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_GRANT_WRITE, true);
	sim_retry(&s, 2, a2);
	(void)a1;
	(void)w1;
	return script_done(&s);
}

/* Nobody uses the grant: the bound ends the hold, the page moves on. */
static bool test_hold_bound(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 2 };

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	sim_access(&s, 1, 0, true);
	sim_access(&s, 0, 0, true);
	expect_deliver(&s, 1, 2, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 2, 1, SDSM_PROTO_MSG_GRANT_WRITE, true);
	expect_deliver(&s, 2, 1, SDSM_PROTO_MSG_FETCH_INV, false);
	/* Node 1's waiter was killed: its access vanishes unserved. */
	s.acc[1][0].state = ACC_FREE;
	EXPECT(&s, sim_can_release(&s, 1, 0, true), "no bound to run");
	sim_release(&s, 1, 0, true);
	EXPECT(&s, s.hold_timeouts == 1 && s.chan[1][2].len == 1,
	       "bound must answer the FETCH_INV");
	return script_done(&s);
}

/* The home dies while a node holds a FETCH_INV: the message is dropped. */
static bool test_hold_home_dies(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 2 };

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	sim_access(&s, 1, 0, true);
	sim_access(&s, 0, 0, true);
	expect_deliver(&s, 1, 2, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 2, 1, SDSM_PROTO_MSG_GRANT_WRITE, true);
	expect_deliver(&s, 2, 1, SDSM_PROTO_MSG_FETCH_INV, false);
	sim_kill(&s, 2);
	EXPECT(&s, !s.node[1][0].deferred &&
	       !(s.node[1][0].flags & SDSM_PROTO_NODE_HELD) &&
	       !sim_can_release(&s, 1, 0, true),
	       "deferred message must die with the home");
	return script_done(&s);
}

/* The home's own grant to itself is held like any other. */
static bool test_hold_home_self(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a0;

	(void)t;
	sim_init(&s, 2, 1, homes, 1);
	a0 = sim_access(&s, 0, 0, true);
	sim_access(&s, 1, 0, true);
	expect_deliver(&s, 0, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 0, 0, SDSM_PROTO_MSG_GRANT_WRITE, true);
	expect_deliver(&s, 0, 0, SDSM_PROTO_MSG_FETCH_INV, false);
	EXPECT(&s, s.node[0][0].deferred == SDSM_PROTO_MSG_FETCH_INV,
	       "home's own FETCH_INV not deferred");
	sim_retry(&s, 0, a0);
	EXPECT(&s, s.done[0] == 1, "home's write must complete first");
	return script_done(&s);
}

/*
 * Two homes for one page (issue 13): a SET_POLICY moved page 0's home to
 * node 1 while node 2 still computes the old home, node 0.  Node 0 writes
 * through the real home; node 2's WRITE reaches node 0, which must refuse
 * it (NACK ESTALE) rather than run a second directory and grant a second
 * writer.  Node 2 then asks again and gets the page from node 1.
 */
static bool test_not_home(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 1 };
	int a2;
	u64 v0;

	sim_init(&s, 3, 1, homes, 1);
	s.mutation = t->arg;
	s.view[2][0] = 0;
	v0 = do_access(&s, 0, 0, true);
	a2 = sim_access(&s, 2, 0, true);
	expect_deliver(&s, 2, 0, SDSM_PROTO_MSG_WRITE, false);
	if (t->arg == MUT_NO_HOME_CHECK) {
		/* Before the fix: node 0 grants too; caught as two writers. */
		if (sim_peek(&s, 0, 2))
			sim_deliver(&s, 0, 2);
		if (!s.failed)
			sim_retry(&s, 2, a2);
		printf("# %s\n", s.failed ? s.why : "NOT caught");
		return s.failed;
	}
	EXPECT(&s, s.stray[0][0].busy == SDSM_PROTO_TXN_IDLE &&
	       s.stray[0][0].state == SDSM_PROTO_HOME_UNOWNED &&
	       !s.stray[0][0].sharers && !s.stray[0][0].txn,
	       "node 0 ran a directory for a page it is not home of");
	expect_deliver(&s, 0, 2, SDSM_PROTO_MSG_NACK, false);
	EXPECT(&s, s.view[2][0] == 1 && s.redirects == 1 &&
	       s.acc[2][a2].state == ACC_RUNNABLE,
	       "node 2 must retry at the real home");
	sim_retry(&s, 2, a2);
	expect_deliver(&s, 2, 1, SDSM_PROTO_MSG_WRITE, false);
	expect_deliver(&s, 1, 0, SDSM_PROTO_MSG_FETCH_INV, false);
	expect_deliver(&s, 0, 1, SDSM_PROTO_MSG_DATA, true);
	expect_deliver(&s, 1, 2, SDSM_PROTO_MSG_GRANT_WRITE, true);
	EXPECT(&s, s.local[2][0] == v0, "node 2 did not get node 0's write");
	sim_retry(&s, 2, a2);
	EXPECT(&s, s.done[2] == 1 && s.dir[0].owner == 2,
	       "node 2 should own the page");
	EXPECT(&s, do_access(&s, 0, 0, false) == s.last[0] && s.last[0] > v0,
	       "node 0 reads a stale value");
	return script_done(&s);
}

/*
 * Migratory sharing: node 2 reads what node 1 wrote and then writes it
 * (the detection); node 1's next READ takes the page whole, one
 * transaction, and its write after it needs no message.  With @t->arg
 * the pair is the home itself and node 1 (the bench's ping-pong).
 */
static bool test_migratory(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int a = t->arg ? 0 : 1, b = t->arg ? 1 : 2;	/* writer, reader */
	unsigned long msgs;
	u64 v;

	sim_init(&s, 3, 1, homes, 1);
	s.migratory = true;
	s.own_grant = true;
	do_access(&s, a, 0, true);
	do_access(&s, b, 0, false);
	EXPECT(&s, s.dir[0].flags & SDSM_PROTO_HOME_FETCHED,
	       "a READ served by the owner's data not marked");
	do_access(&s, b, 0, true);
	EXPECT(&s, s.dir[0].flags & SDSM_PROTO_HOME_MIGRATORY,
	       "read-then-write by the last writer's reader not detected");
	v = s.last[0];
	msgs = s.delivered;
	EXPECT(&s, do_access(&s, a, 0, false) == v, "stale read");
	EXPECT(&s, s.node[a][0].state == SDSM_PROTO_NODE_M &&
	       s.node[b][0].state == SDSM_PROTO_NODE_I,
	       "a migratory READ must take the page whole");
	do_access(&s, a, 0, true);
	/* READ, FETCH_INV, DATA, GRANT_WRITE; none to or from the home's self. */
	EXPECT(&s, s.delivered - msgs <= (t->arg ? 2 : 4),
	       "a hand-off took %lu messages", s.delivered - msgs);
	EXPECT(&s, do_access(&s, b, 0, false) == s.last[0] &&
	       s.node[b][0].state == SDSM_PROTO_NODE_M,
	       "the page no longer migrates");
	return script_done(&s);
}

/*
 * A migratory page that is then only read: the reader granted it whole
 * gives it back unwritten for another READ, and the home goes back to
 * read copies for everyone.
 */
static bool test_migratory_revert(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	s.migratory = true;
	do_access(&s, 1, 0, true);
	do_access(&s, 2, 0, false);
	do_access(&s, 2, 0, true);
	do_access(&s, 1, 0, false);	/* migratory: 1 takes it whole */
	EXPECT(&s, s.node[1][0].state == SDSM_PROTO_NODE_M,
	       "migratory READ not granted writable");
	do_access(&s, 2, 0, false);	/* 1 wrote nothing: read-shared */
	EXPECT(&s, !(s.dir[0].flags & SDSM_PROTO_HOME_MIGRATORY),
	       "a page given back unwritten stays migratory");
	do_access(&s, 1, 0, false);
	EXPECT(&s, s.node[1][0].state == SDSM_PROTO_NODE_S &&
	       s.node[2][0].state == SDSM_PROTO_NODE_S,
	       "readers of a read-shared page do not share it");
	return script_done(&s);
}

/*
 * Producer and consumer: node 1 writes, node 2 reads, node 1 writes
 * again.  The upgrade comes from the last writer, not from its reader:
 * not migratory, node 2 keeps getting read copies.
 */
static bool test_migratory_producer(const struct test *t)
{
	static struct sim s;
	int homes[1] = { 0 };
	int i;

	(void)t;
	sim_init(&s, 3, 1, homes, 1);
	s.migratory = true;
	for (i = 0; i < 3; i++) {
		do_access(&s, 1, 0, true);
		EXPECT(&s, do_access(&s, 2, 0, false) == s.last[0],
		       "consumer reads a stale value");
		EXPECT(&s, s.node[1][0].state == SDSM_PROTO_NODE_S &&
		       s.node[2][0].state == SDSM_PROTO_NODE_S,
		       "round %d: the consumer took the producer's copy", i);
	}
	EXPECT(&s, !(s.dir[0].flags & SDSM_PROTO_HOME_MIGRATORY),
	       "producer-consumer taken for migratory");
	return script_done(&s);
}

static const struct test tests[] = {
	{ "random schedules, 3 nodes, 4 pages", test_random, 3 },
	{ "random schedules, 4 nodes, 4 pages", test_random, 4 },
	{ "random schedules, 4 nodes, one dies", test_random, RANDOM_FAILURES | 4 },
	{ "random short schedules x200, 3 nodes, 1 page", test_random,
	  200 << 16 | 1 << 12 | 3 },
	{ "random schedules with prefetch, 3 nodes, 4 pages", test_random,
	  RANDOM_PREFETCH | 3 },
	{ "random schedules with prefetch, 4 nodes, one dies", test_random,
	  RANDOM_PREFETCH | RANDOM_FAILURES | 4 },
	{ "random schedules, 4 nodes, one leaves (rmmod): nothing homed elsewhere lost",
	  test_random, RANDOM_LEAVES | 4 },
	{ "planted bug 'write granted before all INV_ACKs' caught",
	  test_planted, MUT_EARLY_GRANT },
	{ "planted bug 'INV acked, copy kept' caught",
	  test_planted, MUT_ACK_KEEPS_COPY },
	{ "planted bug 'home forgets a sharer' caught",
	  test_planted, MUT_FORGET_SHARER },
	{ "planted bug 'second fault sends a second request' caught",
	  test_planted, MUT_NO_COALESCE },
	{ "planted bug 'grant loses the wakeup' caught",
	  test_planted, MUT_LOST_WAKEUP },
	{ "planted bug 'owner stays writable after FETCH' caught",
	  test_planted, MUT_FETCH_KEEPS_RW },
	{ "planted bug 'grant not held: taken back before use' caught",
	  test_planted, MUT_NO_HOLD },
	{ "planted bug 'page data sent before the owner's writable mapping is revoked' caught",
	  test_planted, MUT_DATA_BEFORE_REVOKE },
	{ "planted bug 'home forwards its stale copy, not the owner's DATA' caught",
	  test_planted, MUT_GRANT_BEFORE_DATA },
	{ "planted bug 'hold ends, deferred INV/FETCH forgotten' caught",
	  test_planted, MUT_DEFERRED_DROPPED },
	{ "planted bug 'home drops a request parked while busy' caught",
	  test_planted, MUT_DROP_PARKED },
	{ "planted bug 'transport reorders one connection' caught",
	  test_planted, MUT_REORDER },
	{ "planted bug 'a node serves a page it is not home of' caught",
	  test_planted, MUT_NO_HOME_CHECK },
	{ "planted bug 'home takes its own copy, stays writable' caught",
	  test_planted, MUT_OWN_FETCH_KEEPS_RW },
	{ "planted bug 'a fault joins a prefetch, its grant is not held' caught",
	  test_planted, MUT_PREFETCH_NOT_HELD },
	{ "planted bug 'a READ granted writable while others hold copies' caught",
	  test_planted, MUT_EXCL_SHARED },
	{ "planted bug 'home grants its own write while others read' caught",
	  test_planted, MUT_OWN_GRANT_SHARED },
	{ "planted bug 'home grants itself without the home copy' caught",
	  test_planted, MUT_OWN_GRANT_STALE },
	{ "planted bug 'home's grant to itself at a transaction's end not held' caught",
	  test_planted, MUT_OWN_FINISH_NOT_HELD },
	{ "planted bug 'home drops its own read copy while its grant is held' caught",
	  test_planted, MUT_OWN_INV_HELD },
	{ "planted bug 'a migratory READ leaves the old owner a read copy' caught",
	  test_planted, MUT_MIGRATORY_KEEPS_COPY },
	{ "planted bug 'a leaving node goes before its homes read its pages back' caught",
	  test_planted, MUT_LEAVE_NO_TAKE_BACK },
	{ "migratory: read-then-write by turns, one transaction a hand-off",
	  test_migratory, 0 },
	{ "migratory: the home and a node by turns (ping-pong)",
	  test_migratory, 1 },
	{ "migratory: a page given back unwritten is read-shared again",
	  test_migratory_revert, 0 },
	{ "migratory: a producer and its consumer are not migratory",
	  test_migratory_producer, 0 },
	{ "progress: livelock reproduced without the hold (a node starves)",
	  test_contention, MUT_NO_HOLD },
	{ "progress: 3 writers, receive before retry, every node writes",
	  test_contention, MUT_NONE },
	{ "hold: INV/FETCH deferred until the woken fault used the grant",
	  test_hold_defers, 0 },
	{ "hold: read grant then upgrade answers the deferred INV",
	  test_hold_read_then_upgrade, 0 },
	{ "hold: an unused grant ends on its bound", test_hold_bound, 0 },
	{ "hold: home dies, deferred message dropped", test_hold_home_dies, 0 },
	{ "hold: the home's grant to itself is held too",
	  test_hold_home_self, 0 },
	{ "race: upgrade crossing an invalidation", test_upgrade_vs_inv, 0 },
	{ "race: two nodes write the same page at once", test_two_writers, 0 },
	{ "race: read of a page another node owns", test_read_remote_owner, 0 },
	{ "exclusive: a read of an unowned page is granted writable, its write needs no message",
	  test_exclusive_read, 1 },
	{ "exclusive off: the same read is a read copy, its write an upgrade",
	  test_exclusive_read, 0 },
	{ "race: request to a node that is not the home is refused (ESTALE)",
	  test_not_home, MUT_NONE },
	{ "race: without the home check a second home grants a stale copy",
	  test_not_home, MUT_NO_HOME_CHECK },
	{ "home owns its page, remote read: no message to itself",
	  test_home_owner, false },
	{ "home owns its page, remote write: no message to itself",
	  test_home_owner, true },
	{ "home's own faults, idle directory: granted in the fault, no message",
	  test_home_own_grant, false },
	{ "home's own faults, exclusive reads: the read granted writable",
	  test_home_own_grant, true },
	{ "home's own fault, busy directory: a READ to itself, parked, granted without a message",
	  test_home_own_busy, 0 },
	{ "home's own faults past another node's copy: FETCH or INV, granted at the answer, no message to itself",
	  test_home_own_finish, 0 },
	{ "another node's write past the home's read copy: dropped in the call, no INV to itself",
	  test_home_own_inv, 0 },
	{ "race: home writes while remote sharers exist",
	  test_home_write_vs_sharers, 0 },
	{ "concurrent faults on one node coalesce", test_coalesce, 0 },
	{ "failure: home dies, waiters and later faults fail", test_home_dies, 0 },
	{ "failure: owner dies, page lost, readers get EIO", test_owner_dies, 0 },
	{ "protocol violations refused without state change",
	  test_bad_messages, 0 },
};

int main(int argc, char **argv)
{
	int ntests = sizeof(tests) / sizeof(tests[0]);
	const char *prefix = "", *only;
	int first = 1, i, failed = 0;
	bool plan = true;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--count")) {
			printf("%d\n", ntests);
			return 0;
		} else if (!strcmp(argv[i], "--first") && i + 1 < argc) {
			first = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--prefix") && i + 1 < argc) {
			prefix = argv[++i];
		} else if (!strcmp(argv[i], "--no-plan")) {
			plan = false;
		} else {
			fprintf(stderr, "usage: %s [--count] [--first N] [--prefix STR] [--no-plan]\n",
				argv[0]);
			return 2;
		}
	}
	base_seed = tap_env_ulong("SDSM_SEED", (unsigned long)time(NULL));
	schedules = tap_env_ulong("SDSM_SCHEDULES", schedules);
	steps = tap_env_ulong("SDSM_STEPS", steps);
	only = getenv("SDSM_ONLY");

	if (plan)
		printf("TAP version 13\n1..%d\n", ntests);
	printf("# %sseed %llu, %lu schedules x %lu steps (SDSM_SEED, SDSM_SCHEDULES, SDSM_STEPS)\n",
	       prefix, (unsigned long long)base_seed, schedules, steps);
	for (i = 0; i < ntests; i++) {
		bool ok;

		if (only && *only && !strstr(tests[i].name, only)) {
			printf("ok %d - %s%s # SKIP not in SDSM_ONLY\n",
			       first + i, prefix, tests[i].name);
			continue;
		}
		snprintf(replay_name, sizeof(replay_name), "%s",
			 tests[i].name);
		fflush(stdout);
		ok = tests[i].fn(&tests[i]);
		printf("%s %d - %s%s\n", ok ? "ok" : "not ok", first + i,
		       prefix, tests[i].name);
		fflush(stdout);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
