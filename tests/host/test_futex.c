// SPDX-License-Identifier: GPL-2.0
/*
 * Host model checker of the distributed futex (kmod/sdsm_sync.c, section
 * "Futexes"; Documentation/protocol.rst, "Distributed futex"), printed as
 * TAP 13.
 *
 * A faithful model of the module's state machines, not the module's code
 * (which is tied to the kernel's locks and wait queues):
 *
 *  manager   node 0, the home of the futex word: a FIFO of waiters
 *            (node, request id); WAIT queues and answers QUEUED, WAKE
 *            answers WOKEN to up to n waiters then the count to the waker,
 *            CANCEL answers CANCELLED or STALE; a node's DOWN drops its
 *            waiters.  Its own node's calls are direct (synchronous).
 *  waiter    reads the word (EAGAIN if it differs), sends WAIT, waits for
 *            QUEUED, reads again (changed: CANCEL), sleeps until WOKEN; may
 *            give up (timeout, signal) at any time: CANCEL, and the answer
 *            decides; manager DOWN: EHOSTDOWN.
 *  waker     stores word + 1 (the memory is sequentially consistent: MSI
 *            makes the store visible everywhere before the fault returns),
 *            then sends WAKE and waits for the count.
 *
 * Messages are delivered in random order across pairs, FIFO per pair (as
 * RC guarantees); a random non-manager node, or the manager, may die.
 * Invariants, after every step and after draining: a waiter never sleeps
 * on after a store it could not have seen was followed by a completed WAKE
 * of all (no lost wake-up); no call hangs; a WOKEN reaches a call still
 * waiting for it (a consumed wake-up is never lost); a WAKE's count is the
 * number of waiters it really woke, never one of a dead node or a
 * cancelled one; the manager keeps no waiter that is gone.  Planted bugs
 * (one TAP line each) must be caught.
 *
 * Environment: SDSM_SEED, SDSM_SCHEDULES (default 5000), as test_proto;
 * a planted bug runs until it is caught, at most 50 * SDSM_SCHEDULES.
 * Options: --count, --first N, --prefix STR, --no-plan.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tap_args.h"

#define NODES		3
#define PROCS		2		/* processes per node */
#define MGR		0		/* the manager: home of the word */
#define MAXQ		64		/* messages in flight per pair */
#define MAXW		(NODES * PROCS)	/* waiters at the manager */
#define MAXWAKES	512

enum mut {
	MUT_NONE,
	MUT_RECHECK_BEFORE_QUEUED,	/* re-read before the manager queued */
	MUT_WAKE_BEFORE_STORE,		/* waker sends WAKE, then stores */
	MUT_CANCEL_WRONG_WAITER,	/* CANCEL drops the node's first waiter */
	MUT_COUNT_CANCELLED,		/* CANCEL leaves a dead entry WAKE counts */
	MUT_KEEP_DEAD_WAITERS,		/* DOWN does not drop a node's waiters */
	MUT_WOKEN_IGNORED_CANCELLING,	/* a WOKEN while cancelling is dropped */
};

enum msg_type { M_WAIT, M_CANCEL, M_WAKE, M_QUEUED, M_WOKEN, M_CANCELLED,
		M_STALE, M_COUNT };

struct msg {
	enum msg_type type;
	int req;		/* the call: proc index * 1000 + sequence */
	int wake;		/* M_WAKE/M_WOKEN/M_COUNT: the wake's id */
	int count;		/* M_WAKE: most to wake; M_COUNT: woken */
	unsigned int value;	/* M_WAKE: the value the waker stored */
};

struct chan {
	struct msg q[MAXQ];
	int head, len;
};

enum pstate { P_IDLE, P_REG_SENT, P_RECHECK, P_SLEEPING, P_CANCELLING,
	      P_STORE, P_WAKE_SEND, P_WAKE_SENT, P_DONE_HALT };

struct proc {
	int node;
	enum pstate st;
	int req;		/* current call id */
	int seq;
	unsigned int expected;	/* waiter: the value it waits on */
	int cancel_err;		/* 0: none */
	int wake;		/* waker: its wake id */
	bool waker;
	bool count_seen;	/* MUT_WAKE_BEFORE_STORE: answered already */
	bool final;		/* the drain's store + WAKE of all */
};

struct mwaiter {
	int node, req;
	bool cancelled;		/* MUT_COUNT_CANCELLED only */
};

struct model {
	enum mut mut;
	unsigned int word;
	bool alive[NODES];
	bool mgr_sees[NODES];	/* manager: node is up */
	struct chan ch[NODES][NODES];
	struct proc p[NODES * PROCS + 1];	/* + the final waker */
	struct mwaiter w[MAXW * 4];
	int nw;
	int nwakes;
	int wake_reported[MAXWAKES];	/* -1: no answer yet */
	int wake_sent[MAXWAKES];	/* WOKEN the manager sent */
	int wake_consumed[MAXWAKES];	/* WOKEN that completed a WAIT */
	int wake_purged[MAXWAKES];	/* WOKEN lost with a dead node */
	int ops_left;
	unsigned int woke_all_for;	/* highest value of a WAKE of all */
	uint64_t rng;
	char err[200];
};

static uint64_t rnd(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng;
}

static void fail(struct model *m, const char *why, int a)
{
	if (!m->err[0])
		snprintf(m->err, sizeof(m->err), "%s (%d)", why, a);
}

static struct proc *proc_of_req(struct model *m, int req)
{
	int i = req / 1000;

	return i >= 0 && i <= NODES * PROCS ? &m->p[i] : NULL;
}

static void mgr_recv(struct model *m, int src, const struct msg *x);
static void proc_recv(struct model *m, struct proc *p, const struct msg *x);

/* Send @x from @src to @dst; the manager's own calls are direct. */
static void send(struct model *m, int src, int dst, struct msg x)
{
	struct chan *c = &m->ch[src][dst];

	if (!m->alive[src] || !m->alive[dst])
		return;
	if (src == dst) {
		if (dst == MGR && x.type <= M_WAKE)
			mgr_recv(m, src, &x);
		else
			proc_recv(m, proc_of_req(m, x.req), &x);
		return;
	}
	if (c->len == MAXQ) {
		fail(m, "channel overflow", src);
		return;
	}
	c->q[(c->head + c->len++) % MAXQ] = x;
}

/* ---- manager ---- */

static void mgr_unlink(struct model *m, int i)
{
	memmove(&m->w[i], &m->w[i + 1], (m->nw - i - 1) * sizeof(m->w[0]));
	m->nw--;
}

static void mgr_recv(struct model *m, int src, const struct msg *x)
{
	struct msg r = { .req = x->req, .wake = x->wake };
	int i, woken = 0;

	if (!m->mgr_sees[src])
		return;		/* answered HOSTDOWN; src sees us down too */
	switch (x->type) {
	case M_WAIT:
		if (m->nw == (int)(sizeof(m->w) / sizeof(m->w[0]))) {
			fail(m, "manager waiter table full", src);
			return;
		}
		m->w[m->nw++] = (struct mwaiter){ src, x->req, false };
		r.type = M_QUEUED;
		send(m, MGR, src, r);
		return;
	case M_WAKE:
		if (x->count >= MAXW && x->value > m->woke_all_for)
			m->woke_all_for = x->value;
		/* FIFO; mgr_unlink() moves the next waiter to @i. */
		for (i = 0; i < m->nw && woken < x->count; ) {
			struct mwaiter w = m->w[i];

			mgr_unlink(m, i);
			woken++;
			/* Entries only the planted bugs leave behind. */
			if (w.cancelled || !m->mgr_sees[w.node])
				continue;
			m->wake_sent[x->wake]++;
			send(m, MGR, w.node, (struct msg){ M_WOKEN, w.req,
							   x->wake, 0, 0 });
		}
		r.type = M_COUNT;
		r.count = woken;
		send(m, MGR, src, r);
		return;
	case M_CANCEL:
		for (i = 0; i < m->nw; i++) {
			if (m->w[i].node != src || m->w[i].cancelled)
				continue;
			if (m->w[i].req != x->req &&
			    m->mut != MUT_CANCEL_WRONG_WAITER)
				continue;
			if (m->mut == MUT_COUNT_CANCELLED)
				m->w[i].cancelled = true;
			else
				mgr_unlink(m, i);
			r.type = M_CANCELLED;
			send(m, MGR, src, r);
			return;
		}
		r.type = M_STALE;
		send(m, MGR, src, r);
		return;
	default:
		fail(m, "manager got an answer", x->type);
	}
}

/* ---- waiters and wakers ---- */

static void proc_done(struct model *m, struct proc *p, int ret)
{
	(void)m;
	(void)ret;
	p->st = P_IDLE;
	p->req = -1;	/* answers after this one are stale */
}

static void proc_cancel(struct model *m, struct proc *p, int err)
{
	p->cancel_err = err;
	p->st = P_CANCELLING;
	send(m, p->node, MGR, (struct msg){ M_CANCEL, p->req, 0, 0, 0 });
}

static void proc_recv(struct model *m, struct proc *p, const struct msg *x)
{
	if (!p || p->req != x->req) {
		if (x->type == M_WOKEN)
			fail(m, "WOKEN for a call that is over: wake-up lost",
			     x->req);
		return;
	}
	switch (x->type) {
	case M_QUEUED:
		if (p->st == P_REG_SENT)
			p->st = P_RECHECK;
		/* P_CANCELLING: the CANCEL follows it; nothing to do. */
		return;
	case M_WOKEN:
		if (p->st == P_CANCELLING &&
		    m->mut == MUT_WOKEN_IGNORED_CANCELLING)
			return;	/* waits for the CANCEL's answer */
		if (p->st != P_SLEEPING && p->st != P_RECHECK &&
		    p->st != P_REG_SENT && p->st != P_CANCELLING) {
			fail(m, "WOKEN reached a call not waiting", x->req);
			return;
		}
		m->wake_consumed[x->wake]++;
		proc_done(m, p, 0);
		return;
	case M_CANCELLED:
		if (p->st != P_CANCELLING)
			fail(m, "CANCELLED without a CANCEL", x->req);
		proc_done(m, p, p->cancel_err);
		return;
	case M_STALE:
		/* The WOKEN went first and completed the call. */
		if (m->mut == MUT_WOKEN_IGNORED_CANCELLING) {
			proc_done(m, p, p->cancel_err);
			return;
		}
		fail(m, "STALE reached a call still waiting", x->req);
		return;
	case M_COUNT:
		if (p->st == P_STORE) {	/* MUT_WAKE_BEFORE_STORE */
			p->count_seen = true;
		} else if (p->st != P_WAKE_SENT) {
			fail(m, "COUNT without a WAKE", x->req);
			return;
		}
		m->wake_reported[x->wake] = x->count;
		if (x->count != m->wake_sent[x->wake])
			fail(m, "WAKE count differs from waiters woken",
			     x->wake);
		if (p->st != P_STORE)
			proc_done(m, p, x->count);
		return;
	default:
		fail(m, "process got a request", x->type);
	}
}

static void proc_new_call(struct proc *p, int idx)
{
	p->req = idx * 1000 + ++p->seq % 1000;
}

/* One step of process @i; false if it has nothing to do now. */
static bool proc_step(struct model *m, int i, bool drain)
{
	struct proc *p = &m->p[i];
	int r = rnd(m) % 8;

	if (!m->alive[p->node])
		return false;
	if (!m->alive[MGR]) {
		/* A call needs the manager up (sdsm_sync_req_start()). */
		if (p->st == P_IDLE)
			return false;
		proc_done(m, p, -112);
		return true;
	}
	switch (p->st) {
	case P_IDLE:
		if (drain || m->ops_left <= 0 || p->final)
			return false;
		m->ops_left--;
		proc_new_call(p, i);
		p->cancel_err = 0;
		if (rnd(m) % 3 == 0) {
			p->waker = true;
			if (m->nwakes >= MAXWAKES)
				return false;
			p->wake = m->nwakes++;
			m->wake_reported[p->wake] = -1;
			m->wake_sent[p->wake] = 0;
			p->st = m->mut == MUT_WAKE_BEFORE_STORE ? P_WAKE_SEND :
				P_STORE;
			return true;
		}
		p->waker = false;
		/* Mostly the current value; sometimes a stale one. */
		p->expected = m->word - (rnd(m) % 4 == 0);
		if (p->expected != m->word) {
			proc_done(m, p, -11);	/* EAGAIN, no message */
			return true;
		}
		p->st = P_REG_SENT;
		send(m, p->node, MGR, (struct msg){ M_WAIT, p->req, 0, 0, 0 });
		if (m->mut == MUT_RECHECK_BEFORE_QUEUED && p->st == P_REG_SENT)
			p->st = P_SLEEPING;	/* re-read now: unchanged */
		return true;
	case P_STORE:
		m->word++;
		if (m->mut != MUT_WAKE_BEFORE_STORE)
			p->st = P_WAKE_SEND;
		else if (p->count_seen)
			proc_done(m, p, 0);
		else
			p->st = P_WAKE_SENT;
		return true;
	case P_WAKE_SEND:
		p->st = m->mut == MUT_WAKE_BEFORE_STORE ? P_STORE : P_WAKE_SENT;
		p->count_seen = false;
		/* A WAKE of all, or of one or two. */
		send(m, p->node, MGR, (struct msg){ M_WAKE, p->req, p->wake,
			(int)(p->final || rnd(m) % 2 ? 1000 :
			      1 + rnd(m) % 2),
			m->mut == MUT_WAKE_BEFORE_STORE ? m->word + 1 :
			m->word });
		return true;
	case P_RECHECK:
		if (m->word != p->expected)
			proc_cancel(m, p, -11);
		else
			p->st = P_SLEEPING;
		return true;
	case P_REG_SENT:
	case P_SLEEPING:
		/* Timeout or signal: rare, never while draining. */
		if (drain || r)
			return false;
		proc_cancel(m, p, -110);
		return true;
	default:
		return false;
	}
}

/* ---- node death ---- */

static void node_dies(struct model *m, int x)
{
	int i, k;

	m->alive[x] = false;
	for (k = 0; k < NODES; k++) {
		struct chan *c = &m->ch[k][x];

		for (i = 0; i < c->len; i++)
			if (c->q[(c->head + i) % MAXQ].type == M_WOKEN)
				m->wake_purged[c->q[(c->head + i) % MAXQ].wake]++;
		m->ch[x][k].len = 0;
		m->ch[k][x].len = 0;
	}
	if (x == MGR) {
		/* Every call waiting for the manager fails: EHOSTDOWN. */
		for (i = 0; i <= NODES * PROCS; i++) {
			struct proc *p = &m->p[i];

			if (m->alive[p->node] && p->st != P_IDLE &&
			    p->st != P_STORE && p->st != P_WAKE_SEND)
				proc_done(m, p, -112);
			if (p->st == P_STORE || p->st == P_WAKE_SEND)
				p->st = P_IDLE;
			p->req = -1;
		}
		return;
	}
	m->mgr_sees[x] = false;
	if (m->mut == MUT_KEEP_DEAD_WAITERS)
		return;
	for (i = 0; i < m->nw; )
		if (m->w[i].node == x)
			mgr_unlink(m, i);
		else
			i++;
}

/* ---- the schedule ---- */

static bool deliver_one(struct model *m, int src, int dst)
{
	struct chan *c = &m->ch[src][dst];
	struct msg x;

	if (!c->len)
		return false;
	x = c->q[c->head];
	c->head = (c->head + 1) % MAXQ;
	c->len--;
	if (dst == MGR && x.type <= M_WAKE)
		mgr_recv(m, src, &x);
	else
		proc_recv(m, proc_of_req(m, x.req), &x);
	return true;
}

static bool random_step(struct model *m, bool drain)
{
	int tries;

	for (tries = 0; tries < 64; tries++) {
		int r = rnd(m) % 3;

		if (r == 0) {
			int s = rnd(m) % NODES, d = rnd(m) % NODES;

			if (deliver_one(m, s, d))
				return true;
		} else if (proc_step(m, rnd(m) % (NODES * PROCS + 1), drain)) {
			return true;
		}
	}
	/* Nothing found at random: take the first thing that can move. */
	for (tries = 0; tries < NODES * NODES; tries++)
		if (deliver_one(m, tries / NODES, tries % NODES))
			return true;
	for (tries = 0; tries <= NODES * PROCS; tries++)
		if (proc_step(m, tries, drain))
			return true;
	return false;
}

/*
 * No lost wake-up, at a quiescent point: values only grow, so a waiter
 * that expects @e read it before any store of a larger value; once a WAKE
 * of all that followed such a store reached the manager, the waiter was
 * queued then (and woken) or queued later (and its second read saw the
 * store): it cannot be asleep.
 */
static void check_no_lost_wakeup(struct model *m)
{
	int i;

	for (i = 0; i <= NODES * PROCS; i++) {
		struct proc *p = &m->p[i];

		if (m->alive[p->node] && m->alive[MGR] &&
		    p->st == P_SLEEPING && p->expected < m->woke_all_for)
			fail(m, "waiter asleep after a WAKE of all that followed a store: lost wake-up",
			     i);
	}
}

static void check_final(struct model *m)
{
	int i, j;

	for (i = 0; i <= NODES * PROCS; i++) {
		struct proc *p = &m->p[i];

		if (!m->alive[p->node])
			continue;
		if (p->st != P_IDLE && !(p->st == P_SLEEPING && m->alive[MGR])) {
			fail(m, "call never completes", i * 100 + p->st);
		}
	}
	if (!m->alive[MGR])
		return;
	/* The manager keeps exactly the sleeping waiters. */
	for (j = 0; j < m->nw; j++) {
		struct proc *p = proc_of_req(m, m->w[j].req);

		if (!p || p->req != m->w[j].req || p->st != P_SLEEPING ||
		    p->node != m->w[j].node || m->w[j].cancelled)
			fail(m, "manager keeps a waiter that is gone", j);
	}
	for (i = 0; i < m->nwakes; i++) {
		if (m->wake_reported[i] >= 0 &&
		    m->wake_reported[i] != m->wake_sent[i])
			fail(m, "WAKE count differs from waiters woken", i);
		if (m->wake_consumed[i] + m->wake_purged[i] != m->wake_sent[i])
			fail(m, "a WOKEN completed no WAIT: wake-up lost", i);
	}
}

/* Drain: a last store + WAKE of all from a live node, if the manager is. */
static void start_final_wake(struct model *m)
{
	struct proc *f = &m->p[NODES * PROCS];
	int k;

	if (!m->alive[MGR] || m->nwakes >= MAXWAKES)
		return;
	do
		k = rnd(m) % NODES;
	while (!m->alive[k]);
	f->node = k;
	f->waker = true;
	proc_new_call(f, NODES * PROCS);
	f->wake = m->nwakes++;
	m->wake_reported[f->wake] = -1;
	f->st = m->mut == MUT_WAKE_BEFORE_STORE ? P_WAKE_SEND : P_STORE;
}

/* One schedule; true if every invariant held. */
static bool run_schedule(enum mut mut, uint64_t seed, char *why, size_t len)
{
	static struct model m;
	int i, k, steps;

	memset(&m, 0, sizeof(m));
	m.mut = mut;
	m.rng = seed * 0x9e3779b97f4a7c15ull + 1;
	m.word = 100;
	m.ops_left = 40;
	for (k = 0; k < NODES; k++)
		m.alive[k] = m.mgr_sees[k] = true;
	for (i = 0; i <= NODES * PROCS; i++) {
		m.p[i].node = i / PROCS % NODES;
		m.p[i].req = -1;
	}
	m.p[NODES * PROCS].final = true;
	/* One schedule in eight kills a node; one in four of those, the manager. */
	k = rnd(&m) % 8 ? -1 :
	    (rnd(&m) % 4 ? 1 + (int)(rnd(&m) % (NODES - 1)) : MGR);
	for (steps = 0; steps < 400 && !m.err[0]; steps++) {
		if (k >= 0 && steps == 60 + (int)(seed % 100))
			node_dies(&m, k);
		if (!random_step(&m, false))
			break;
	}
	for (steps = 0; steps < 4000 && !m.err[0]; steps++)
		if (!random_step(&m, true))
			break;
	check_no_lost_wakeup(&m);
	start_final_wake(&m);
	for (steps = 0; steps < 4000 && !m.err[0]; steps++)
		if (!random_step(&m, true))
			break;
	check_no_lost_wakeup(&m);
	if (!m.err[0])
		check_final(&m);
	if (m.err[0])
		snprintf(why, len, "seed %llu: %s", (unsigned long long)seed,
			 m.err);
	return !m.err[0];
}

/* ---- TAP ---- */

static const struct {
	const char *name;
	enum mut mut;
} tests[] = {
	{ "futex: random schedules keep every invariant", MUT_NONE },
	{ "futex: planted bug 're-read before the manager queued' caught",
	  MUT_RECHECK_BEFORE_QUEUED },
	{ "futex: planted bug 'WAKE sent before the store' caught",
	  MUT_WAKE_BEFORE_STORE },
	{ "futex: planted bug 'CANCEL drops another waiter of the node' caught",
	  MUT_CANCEL_WRONG_WAITER },
	{ "futex: planted bug 'WAKE counts a cancelled waiter' caught",
	  MUT_COUNT_CANCELLED },
	{ "futex: planted bug 'a dead node's waiters stay queued' caught",
	  MUT_KEEP_DEAD_WAITERS },
	{ "futex: planted bug 'WOKEN while cancelling is dropped' caught",
	  MUT_WOKEN_IGNORED_CANCELLING },
};

#define NTESTS (int)(sizeof(tests) / sizeof(tests[0]))

int main(int argc, char **argv)
{
	struct tap_args ta;
	int ret;
	const char *prefix = "", *env;
	unsigned long schedules = 5000, s;
	uint64_t seed = time(NULL);
	bool plan = true;
	int first = 1, i, failed = 0;

	ret = tap_parse_args(argc, argv, NTESTS, &ta);
	if (ret >= 0)
		return ret;
	first = ta.first;
	prefix = ta.prefix;
	plan = ta.plan;
	env = getenv("SDSM_SEED");
	if (env)
		seed = strtoull(env, NULL, 0);
	env = getenv("SDSM_SCHEDULES");
	if (env && strtoul(env, NULL, 0))
		schedules = strtoul(env, NULL, 0);
	if (plan)
		printf("TAP version 13\n1..%d\n", NTESTS);
	printf("# futex model: seed %llu, %lu schedules per test\n",
	       (unsigned long long)seed, schedules);
	for (i = 0; i < NTESTS; i++) {
		char why[300] = "";
		unsigned long caught = 0;
		bool ok;

		/* A planted bug runs until caught, up to 50 times longer. */
		unsigned long limit = tests[i].mut == MUT_NONE ? schedules :
				      schedules * 50;

		for (s = 0; s < limit; s++) {
			char w[300];

			if (tests[i].mut != MUT_NONE && caught)
				break;
			if (!run_schedule(tests[i].mut, seed + s, w, sizeof(w))) {
				if (!caught++)
					memcpy(why, w, sizeof(why));
				if (tests[i].mut == MUT_NONE)
					break;
			}
		}
		ok = tests[i].mut == MUT_NONE ? !caught : caught > 0;
		if (tests[i].mut == MUT_NONE && caught)
			printf("# %s\n", why);
		else if (caught)
			printf("# caught after %lu schedules: %s\n", s, why);
		printf("%sok %d %s%s\n", ok ? "" : "not ", first + i, prefix,
		       tests[i].name);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
