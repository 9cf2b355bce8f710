// SPDX-License-Identifier: GPL-2.0
/*
 * Host model checker of the sessions (kmod/sdsm_session.c): exactly-once,
 * in-order delivery of the upper layers' messages across connections that
 * fail and are replaced.  Printed as TAP 13.
 *
 * The core is the module's own source; around it, a model of the glue as
 * the transport uses it, between two nodes: A, the active side (it opens
 * every connection), and B, the passive side.  Each holds its sdsm_sess
 * of the other, an incarnation and a ring of SDSM_SESS_RING messages.
 *
 *  connection  two FIFO channels; a break loses a random suffix of what
 *              each channel holds that its receiver has not completed yet,
 *              the rest is still delivered, also after newer connections
 *              exist.  Each side's view: decided, and its sess_gen.
 *  completion  a message's ack is taken at its completion (softirq), that
 *              may run ahead of the receive worker that processes it.
 *  handshake   A's hello first; B decides on it (only on its current
 *              connection) and answers with its own; A follows (likewise).
 *              BAD fails the connection.
 *  sending     only on the current connection once decided, resends first;
 *              a post may fail after numbering (the message stays in the
 *              ring, the connection is doomed: its sender fails it later).
 *              A control message (PING, CREDIT) carries ack 0 on a
 *              connection its sender has not decided on, as
 *              sdsm_session_ack() does: with sdsm_sess_ack_value(), A's
 *              PING between its hello and B's NEW would acknowledge old
 *              numbers in the new session (planted below).
 *  expiry      a side with no decided, working connection ends its session;
 *              a node restarts (B mostly) as a new incarnation.
 *  reports     each side's peer work, run at random times, reports the
 *              end of the session it last reported up (DOWN: the upper
 *              layers forget everything of the peer), then the live
 *              session on a decided connection (UP), as sdsm_peer_work()
 *              does; a message waits until the layers heard of its
 *              connection's session (sdsm_session_wait_reported()), or
 *              is lost with its connection, which then fails.  A message
 *              found deliverable may be handled later (the delivery
 *              mutex held meanwhile): a DOWN report waits for it.
 *
 * Schedules differ in their fault rates; in some, old connections deliver
 * late, or handshakes break between B's decision and A's; in the second
 * test every session's numbers start just below 2^32 and wrap.
 *
 * Ghost state: a NEW verdict at B creates a global session id, that A
 * adopts when it follows; every message carries its sender's session and
 * its index there.  Invariants, after every step: (a) an upper layer gets
 * only messages of the session it is in; (b) the k-th message it gets of
 * a session is the peer's k-th of that session; (d) a handshake leaves
 * both sides with one id and each other's incarnations, and a resume joins
 * the same ghost session on both sides; (e) the core's counters are sane
 * and the ring holds exactly the unacknowledged messages; a message leaves
 * the ring on an acknowledgment only once the peer's upper layer got it.
 * (g) a DOWN report takes from the layers only what the session it reports
 * left there; (i) the layers handle only messages of the session they
 * were told of.  Each schedule ends quiescent (no more faults; reconnect,
 * drain, let acks flow): (c) both sides then share a live session in
 * which everything sent was delivered and acknowledged, (f) a session
 * both held when faults stopped is that one, and (h) once the reports
 * are done, the layers hold nothing of any other session: what an ended
 * session left was reported DOWN.  Planted bugs (glue mutations, one TAP
 * line each) must be caught.
 *
 * Environment: SDSM_SEED (schedule i uses SDSM_SEED + i), SDSM_SCHEDULES
 * (default 5000; the random tests run 6 and 2 times as many), SDSM_TRACE=1
 * (print the trace of the schedule that caught each planted bug too); a
 * failing schedule is printed with its trace.  Options:
 * --schedules N, --seed S (override the environment), --count, --first N,
 * --prefix STR, --no-plan.  A planted bug runs until it is caught, at most
 * 20 * SDSM_SCHEDULES schedules.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sdsm_session.h"
#include "tap_args.h"

#define RING		SDSM_SESS_RING
#define NA		0		/* the active side */
#define NB		1		/* the passive side */
#define MAXCONN		64		/* connections of a schedule */
#define CONN_CAP	48		/* ... before the quiescent phase */
#define MAXQ		640		/* messages per channel and connection */
#define MAXG		(MAXCONN + 2)	/* ghost sessions (1, 2, ...) */
#define NTRACE		160		/* trace lines kept for a report */
#define QROUNDS		10		/* quiescent rounds of acks */

enum mut {
	MUT_NONE,
	MUT_RX_DUP,		/* a duplicate is delivered again */
	MUT_RESEND_SKIP,	/* the resend skips the first unacked */
	MUT_ACK_AHEAD,		/* acknowledges before delivering */
	MUT_RELEASE_ON_POST,	/* ring entry freed when posted */
	MUT_RESUME_ANY_SID,	/* passive resumes without comparing ids */
	MUT_HELLO_FIRST,	/* passive's hello before reading A's */
	MUT_KEEP_NUMBERING,	/* active ignores NEW: keeps its numbers */
	MUT_GAP_DELIVERED,	/* a gap is delivered, link not failed */
	MUT_ANY_CONN_ACKS,	/* acks of any connection applied */
	MUT_ANY_CONN_RX,	/* no sess_gen check on receive */
	MUT_EXPIRY_KEEPS_CORE,	/* expiry reports DOWN, core untouched */
	MUT_EXPIRY_NO_RELEASE,	/* expiry ends, ring entries kept */
	MUT_NO_RESEND,		/* a resume sends nothing again */
	MUT_EARLY_ACK,		/* ack_value() before the decision */
	MUT_WAIT_OLD_DOWN,	/* waits for the old DOWN only (4d468da) */
	MUT_UNGATED,		/* delivers before any report */
	MUT_DOWN_NO_WAIT,	/* DOWN not after a delivery under way */
	MUT_UP_FOR_DOWN,	/* a new session's UP, no DOWN of the old */
};

enum mtype { M_HELLO, M_DATA, M_CTRL };

struct msg {
	enum mtype type;
	u32 seq;		/* M_DATA */
	u32 ack;
	bool completed;		/* its ack was taken */
	int gsid;		/* ghost: sender's session (M_DATA, M_HELLO) */
	int idx;		/* ghost: M_DATA's index in @gsid */
	struct sdsm_sess_hello h;
};

struct chan {
	int head, tail;
	struct msg q[MAXQ];
};

struct conn {
	struct chan ch[2];	/* ch[x]: from node x to the other */
	bool broken;
	bool doomed;		/* a post failed: its sender fails it */
	bool gone[2];		/* that side restarted */
	bool decided[2];
	u32 sess_gen[2];
};

struct slot {
	bool used;
	u32 seq;
	int gsid, idx;
};

struct node {
	struct sdsm_sess sess;
	u64 inc;
	struct slot ring[RING];
	int cur;		/* current connection, -1: none */
	int gsid;		/* ghost session its upper layer is in */
	/*
	 * The peer work's, as in struct sdsm_peer; its reported_gen is
	 * notified_gen while notified_up: here a report is one step.
	 */
	bool notified_up;
	u32 notified_gen;
	int rep_gsid;		/* ghost: the session reported UP */
	bool held[MAXG];	/* ghost: sessions whose messages it got */
	/* A delivery under way: rx_mutex held, its handler still to run. */
	bool rx_busy;
	int rx_busy_g;
};

struct stats {
	unsigned long steps, sent, delivered, dups, gaps, ackerr;
	unsigned long resumes, news, bad_decide, bad_follow, resent;
	unsigned long old_conn_rx, expiries, restarts, postfail, breaks;
	unsigned long conns, quiesce_resumes;
};

/* Per schedule: weights of the random actions. */
enum act { ACT_DELIVER, ACT_COMPLETE, ACT_SEND, ACT_CTRL, ACT_BREAK,
	   ACT_BREAK_HELLO, ACT_NOTICE, ACT_CONNECT, ACT_EXPIRE, ACT_RESTART,
	   ACT_POSTFAIL, ACT_DOOM, ACT_REPORT, ACT_FINISH, ACT_N };

struct model {
	enum mut mut;
	struct node n[2];
	int nconn;
	int nghost;
	int sent[MAXG][2];	/* [gsid][x]: messages x sent in gsid */
	int deliv[MAXG][2];	/* [gsid][x]: of those, delivered */
	u32 base[MAXG][2];	/* [gsid][x]: x's numbers start after it */
	int weight[ACT_N];
	u64 rng;
	u64 next_inc;
	bool quiet, failed, quiescent;
	bool wrap;		/* sessions start 2^32 - 40 .. - 1 */
	int lazy_old;		/* old connections deliver 1 in 2^lazy_old */
	char why[256];
	char trace[NTRACE][200];
	unsigned long ntrace;
	struct stats st;
};

/* The channels are large: kept apart, reset one connection at a time. */
static struct conn conns[MAXCONN];

static u64 rnd(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng;
}

static unsigned int rndn(struct model *m, unsigned int n)
{
	return n ? (unsigned int)(rnd(m) % n) : 0;
}

static char nm(int x)
{
	return x == NA ? 'A' : 'B';
}

static void __attribute__((format(printf, 2, 3)))
tracef(struct model *m, const char *fmt, ...)
{
	char *line = m->trace[m->ntrace % NTRACE];
	va_list ap;
	int n;

	if (m->quiet)
		return;
	n = snprintf(line, sizeof(m->trace[0]), "%5lu%s ", m->st.steps,
		     m->quiescent ? "q" : " ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(m->trace[0]) - n, fmt, ap);
	va_end(ap);
	m->ntrace++;
}

static void __attribute__((format(printf, 2, 3)))
fail(struct model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->failed)
		return;
	m->failed = true;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
	tracef(m, "VIOLATION: %s", m->why);
}

static void dump_sess(const struct model *m, int x)
{
	const struct node *n = &m->n[x];
	const struct sdsm_sess *s = &n->sess;

	printf("#   %c: inc %#llx ghost %d cur %d: remote_inc %#llx sid %u next_sid %u gen %u tx %u acked %u rx %u resend %u\n",
	       nm(x), (unsigned long long)n->inc, n->gsid, n->cur,
	       (unsigned long long)s->remote_inc, s->sid, s->next_sid,
	       s->gen, s->tx_seq, s->acked, s->rx_seq, s->resend);
	printf("#      reported: up %d gen %u (session %d)%s\n",
	       n->notified_up, n->notified_gen, n->rep_gsid,
	       n->rx_busy ? ", a delivery under way" : "");
}

static void dump(const struct model *m)
{
	unsigned long i, first;
	int c;

	printf("# violation: %s\n", m->why);
	printf("# last steps (q: quiescent phase):\n");
	first = m->ntrace > NTRACE ? m->ntrace - NTRACE : 0;
	for (i = first; i < m->ntrace; i++)
		printf("#   %s\n", m->trace[i % NTRACE]);
	printf("# state:\n");
	dump_sess(m, NA);
	dump_sess(m, NB);
	for (c = 0; c < m->nconn; c++) {
		const struct conn *k = &conns[c];

		printf("#   conn %d:%s%s A: %s gen %u, B: %s gen %u; in flight A->B %d, B->A %d\n",
		       c, k->broken ? " broken" : "",
		       k->doomed ? " doomed" : "",
		       k->decided[NA] ? "decided" : "undecided",
		       k->sess_gen[NA],
		       k->decided[NB] ? "decided" : "undecided",
		       k->sess_gen[NB],
		       k->ch[NA].tail - k->ch[NA].head,
		       k->ch[NB].tail - k->ch[NB].head);
	}
}

/* ---- the ring ---- */

/*
 * Node @x releases @n ring entries from @first on: on an acknowledgment
 * (@acked), else because its session ends.
 */
static void release(struct model *m, int x, u32 first, u32 n, bool acked)
{
	u32 i;

	if (n > RING) {
		fail(m, "%c releases %u messages from %u: more than a ring",
		     nm(x), n, first);
		return;
	}
	for (i = 0; i < n; i++) {
		u32 seq = first + i;
		struct slot *sl = &m->n[x].ring[seq % RING];

		if (!seq)
			continue;	/* never a message: nothing there */
		if (!sl->used || sl->seq != seq) {
			fail(m, "(e) %c releases message %u, which its ring does not hold",
			     nm(x), seq);
			return;
		}
		if (acked && sl->gsid &&
		    m->deliv[sl->gsid][x] < sl->idx) {
			fail(m, "%c releases message %u (session %d #%d) on an ack, but the peer's upper layer did not get it",
			     nm(x), seq, sl->gsid, sl->idx);
			return;
		}
		sl->used = false;
	}
	if (n)
		tracef(m, "%c releases %u..%u%s", nm(x), first, first + n - 1,
		       acked ? " (acked)" : "");
}

/* (e): the core's counters, and the ring holds the unacked messages. */
static void check_sane(struct model *m)
{
	int x, i, used;

	for (x = 0; x < 2 && !m->failed; x++) {
		const struct sdsm_sess *s = &m->n[x].sess;
		s32 unacked = (s32)(s->tx_seq - s->acked);
		u32 none = s->tx_seq + 1 ?: 1;	/* resend: nothing to */

		if (unacked < 0 || unacked > RING)
			fail(m, "(e) %c: acked %u, tx_seq %u", nm(x),
			     s->acked, s->tx_seq);
		else if (!s->resend ||
			 (s->resend != none &&
			  ((s32)(s->resend - s->acked) < 1 ||
			   (s32)(s->resend - s->tx_seq) > 0)))
			fail(m, "(e) %c: resend %u outside acked %u + 1 .. tx_seq %u + 1",
			     nm(x), s->resend, s->acked, s->tx_seq);
		if (m->failed)
			return;
		for (i = 0, used = 0; i < RING; i++) {
			const struct slot *sl = &m->n[x].ring[i];

			if (!sl->used)
				continue;
			used++;
			if ((s32)(sl->seq - s->acked) <= 0 ||
			    (s32)(sl->seq - s->tx_seq) > 0)
				fail(m, "(e) %c's ring holds message %u, not in acked %u .. tx_seq %u",
				     nm(x), sl->seq, s->acked, s->tx_seq);
		}
		/* 0, skipped when the numbers wrap, holds nothing. */
		if (unacked && (u32)(0u - s->acked - 1) < (u32)unacked)
			unacked--;
		if (used != unacked)
			fail(m, "(e) %c's ring holds %d messages, %d unacknowledged",
			     nm(x), used, unacked);
	}
}

/* ---- connections ---- */

static const char *mname(const struct msg *x)
{
	return x->type == M_HELLO ? "hello" : x->type == M_DATA ? "msg" :
	       "ctrl";
}

/* Node @from posts @x on connection @c: lost if it is broken. */
static void post(struct model *m, int c, int from, const struct msg *x)
{
	struct conn *k = &conns[c];
	struct chan *ch = &k->ch[from];

	if (k->broken || k->gone[!from]) {
		tracef(m, "%c posts %s seq %u ack %u on conn %d: lost (broken)",
		       nm(from), mname(x), x->seq, x->ack, c);
		return;
	}
	if (ch->tail == MAXQ) {
		fail(m, "harness: channel of conn %d full", c);
		return;
	}
	ch->q[ch->tail++] = *x;
	tracef(m, "%c posts %s seq %u ack %u on conn %d", nm(from), mname(x),
	       x->seq, x->ack, c);
}

/* Connection @c breaks: each channel loses a suffix it has not completed. */
static void conn_break(struct model *m, int c)
{
	struct conn *k = &conns[c];
	int d, u, keep;

	if (k->broken)
		return;
	k->broken = true;
	m->st.breaks++;
	for (d = 0; d < 2; d++) {
		struct chan *ch = &k->ch[d];

		for (u = ch->head; u < ch->tail && ch->q[u].completed; u++)
			;
		/* Mostly all or nothing; sometimes a real suffix. */
		switch (rndn(m, 4)) {
		case 0:
			keep = u;
			break;
		case 1:
			keep = ch->tail;
			break;
		default:
			keep = u + (int)rndn(m, ch->tail - u + 1);
		}
		if (keep < ch->tail)
			tracef(m, "conn %d breaks: %c->%c loses %d", c, nm(d),
			       nm(!d), ch->tail - keep);
		ch->tail = keep;
	}
	tracef(m, "conn %d broken", c);
}

/* Node @x fails connection @c (and knows it). */
static void conn_fail(struct model *m, int x, int c, const char *why)
{
	tracef(m, "%c fails conn %d: %s", nm(x), c, why);
	conn_break(m, c);
	if (m->n[x].cur == c)
		m->n[x].cur = -1;
}

/* ---- the glue ---- */

static u32 ack_value(struct model *m, int x)
{
	const struct sdsm_sess *s = &m->n[x].sess;

	if (m->mut == MUT_ACK_AHEAD && sdsm_sess_live(s))
		return sdsm_sess_ack_value(s) + 1;
	return sdsm_sess_ack_value(s);
}

static void post_hello(struct model *m, int x, int c, bool resume)
{
	struct msg h = { .type = M_HELLO };

	sdsm_sess_hello_fill(&m->n[x].sess, m->n[x].inc, &h.h);
	h.h.resume = resume;
	h.ack = ack_value(m, x);
	h.gsid = m->n[x].gsid;
	tracef(m, "%c hello on conn %d: sid %u rx %u peer_inc %#llx%s (ghost %d)",
	       nm(x), c, h.h.sid, h.h.rx_seq,
	       (unsigned long long)h.h.peer_inc, resume ? " resume" : "",
	       h.gsid);
	post(m, c, x, &h);
}

/* @r's layers handle a message of ghost session @g. */
static void handled(struct model *m, int r, int g)
{
	struct node *n = &m->n[r];

	if (g != n->rep_gsid) {
		fail(m, "(i) %c's layers, told of session %d, handle a message of session %d",
		     nm(r), n->rep_gsid, g);
		return;
	}
	n->held[g] = true;
}

/* @x's delivery under way ends: its handler runs, rx_mutex goes. */
static bool act_finish(struct model *m, int x)
{
	struct node *n = &m->n[x];

	if (!n->rx_busy)
		return false;
	n->rx_busy = false;
	tracef(m, "%c's handler of a message of session %d runs", nm(x),
	       n->rx_busy_g);
	handled(m, x, n->rx_busy_g);
	return true;
}

/* The upper layer of @r gets @x: its handler runs now or later. */
static void upper_rx(struct model *m, int r, const struct msg *x)
{
	int g = m->n[r].gsid, from = !r;

	m->st.delivered++;
	tracef(m, "%c delivers seq %u (session %d #%d)", nm(r), x->seq,
	       x->gsid, x->idx);
	if (!g || x->gsid != g) {
		fail(m, "(a) %c's upper layer, in session %d, gets message #%d of session %d",
		     nm(r), g, x->idx, x->gsid);
		return;
	}
	if (x->idx != m->deliv[g][from] + 1) {
		fail(m, "(b) %c's upper layer gets #%d of session %d from %c, expected #%d",
		     nm(r), x->idx, g, nm(from), m->deliv[g][from] + 1);
		return;
	}
	m->deliv[g][from]++;
	if (rndn(m, 4)) {
		handled(m, r, g);
		return;
	}
	m->n[r].rx_busy = true;
	m->n[r].rx_busy_g = g;
}

/* After a RESUME: the resends the glue starts with. */
static void resume_start(struct model *m, int x)
{
	struct sdsm_sess *s = &m->n[x].sess;
	u32 seq;

	if (m->mut == MUT_RESEND_SKIP && sdsm_sess_resending(s)) {
		seq = sdsm_sess_resend_next(s);
		tracef(m, "%c (planted) skips resending %u", nm(x), seq);
	}
	if (m->mut == MUT_NO_RESEND) {
		while ((seq = sdsm_sess_resend_next(s)))
			;
	}
}

static void ghost_new_session(struct model *m, int g)
{
	m->sent[g][NA] = m->sent[g][NB] = 0;
	m->deliv[g][NA] = m->deliv[g][NB] = 0;
	m->base[g][NA] = m->wrap ? 0xffffffffu - rndn(m, 40) : 0;
	m->base[g][NB] = m->wrap ? 0xffffffffu - rndn(m, 40) : 0;
}

/*
 * Wrap mode: a new session of ghost @g on node @x numbers as if 2^32
 * messages had gone before (white-box: the core starts at 0).
 */
static void wrap_start(struct model *m, int x, int g)
{
	struct sdsm_sess *s = &m->n[x].sess;

	if (!m->wrap || !g)
		return;
	s->tx_seq = s->acked = m->base[g][x];
	s->resend = s->tx_seq + 1 ?: 1;
	s->rx_seq = m->base[g][!x];
}

/* B got A's hello @x on connection @c. */
static void b_decide(struct model *m, int c, const struct msg *x)
{
	struct node *b = &m->n[NB];
	struct conn *k = &conns[c];
	struct sdsm_sess_hello h = x->h;
	enum sdsm_sess_verdict v;
	u32 first, n;

	if (c != b->cur || k->decided[NB]) {
		tracef(m, "B ignores A's hello on conn %d (not current)", c);
		return;
	}
	if (m->mut == MUT_RESUME_ANY_SID && sdsm_sess_live(&b->sess) &&
	    b->sess.remote_inc == h.inc && h.peer_inc == b->inc &&
	    h.sid != b->sess.sid) {
		tracef(m, "B (planted) takes A's sid %u for its %u", h.sid,
		       b->sess.sid);
		h.sid = b->sess.sid;
	}
	v = sdsm_sess_decide(&b->sess, b->inc, &h, &first, &n);
	release(m, NB, first, n, false);
	k->sess_gen[NB] = b->sess.gen;
	k->decided[NB] = true;
	switch (v) {
	case SDSM_SESS_RESUME:
		m->st.resumes++;
		if (m->quiescent)
			m->st.quiesce_resumes++;
		tracef(m, "B decides RESUME sid %u on conn %d (ghost %d)",
		       b->sess.sid, c, b->gsid);
		if (!b->gsid || b->gsid != x->gsid)
			fail(m, "(d) B resumes its session %d, A's hello was of session %d",
			     b->gsid, x->gsid);
		break;
	case SDSM_SESS_NEW:
		m->st.news++;
		if (m->nghost + 1 >= MAXG) {
			fail(m, "harness: too many sessions");
			return;
		}
		b->gsid = ++m->nghost;
		ghost_new_session(m, b->gsid);
		wrap_start(m, NB, b->gsid);
		tracef(m, "B decides NEW sid %u on conn %d (ghost %d)",
		       b->sess.sid, c, b->gsid);
		break;
	default:
		m->st.bad_decide++;
		tracef(m, "B decides BAD on conn %d", c);
		b->gsid = 0;
		conn_fail(m, NB, c, "bad hello");
		return;
	}
	if (b->sess.remote_inc != h.inc || !b->sess.sid)
		fail(m, "(d) B's session after its decision: remote_inc %#llx sid %u",
		     (unsigned long long)b->sess.remote_inc, b->sess.sid);
	if (v == SDSM_SESS_RESUME)
		resume_start(m, NB);
	if (m->mut != MUT_HELLO_FIRST)
		post_hello(m, NB, c, v == SDSM_SESS_RESUME);
}

/* A got B's hello @x on connection @c. */
static void a_follow(struct model *m, int c, const struct msg *x)
{
	struct node *a = &m->n[NA], *b = &m->n[NB];
	struct conn *k = &conns[c];
	struct sdsm_sess old = a->sess;
	enum sdsm_sess_verdict v;
	u32 first, n;

	if (c != a->cur || k->decided[NA]) {
		tracef(m, "A ignores B's hello on conn %d (not current)", c);
		return;
	}
	v = sdsm_sess_follow(&a->sess, a->inc, &x->h, &first, &n);
	if (v == SDSM_SESS_NEW)
		wrap_start(m, NA, x->gsid);
	if (m->mut == MUT_KEEP_NUMBERING && v == SDSM_SESS_NEW) {
		tracef(m, "A (planted) keeps its numbering: tx %u acked %u",
		       old.tx_seq, old.acked);
		a->sess.tx_seq = old.tx_seq;
		a->sess.acked = old.acked;
		a->sess.resend = old.resend;
		n = 0;
	}
	release(m, NA, first, n, false);
	k->sess_gen[NA] = a->sess.gen;
	k->decided[NA] = true;
	switch (v) {
	case SDSM_SESS_RESUME:
		tracef(m, "A follows RESUME sid %u on conn %d (ghost %d)",
		       a->sess.sid, c, a->gsid);
		if (!a->gsid || a->gsid != x->gsid)
			fail(m, "(d) A resumes its session %d, B's hello was of session %d",
			     a->gsid, x->gsid);
		break;
	case SDSM_SESS_NEW:
		a->gsid = x->gsid;
		tracef(m, "A follows NEW sid %u on conn %d (ghost %d)",
		       a->sess.sid, c, a->gsid);
		if (!x->gsid)
			fail(m, "(d) A starts a session B's hello did not name");
		break;
	default:
		m->st.bad_follow++;
		tracef(m, "A follows BAD on conn %d", c);
		a->gsid = 0;
		conn_fail(m, NA, c, "bad hello");
		return;
	}
	if (a->sess.sid != x->h.sid || a->sess.remote_inc != x->h.inc)
		fail(m, "(d) A's session after following: sid %u remote_inc %#llx; B's hello: sid %u inc %#llx",
		     a->sess.sid, (unsigned long long)a->sess.remote_inc,
		     x->h.sid, (unsigned long long)x->h.inc);
	/* B still in the session its hello named: both agree. */
	if (b->gsid && b->gsid == x->gsid &&
	    (b->sess.sid != a->sess.sid || b->sess.remote_inc != a->inc ||
	     a->sess.remote_inc != b->inc))
		fail(m, "(d) after the handshake A holds sid %u with %#llx, B sid %u with %#llx",
		     a->sess.sid, (unsigned long long)a->sess.remote_inc,
		     b->sess.sid, (unsigned long long)b->sess.remote_inc);
	if (v == SDSM_SESS_RESUME)
		resume_start(m, NA);
}

/* The ack of the first message of @c's channel @d not completed yet. */
static bool complete(struct model *m, int c, int d)
{
	struct conn *k = &conns[c];
	struct chan *ch = &k->ch[d];
	int r = !d, u, ret;
	struct node *n = &m->n[r];
	struct msg *x;
	u32 first;

	for (u = ch->head; u < ch->tail && ch->q[u].completed; u++)
		;
	if (u == ch->tail)
		return false;
	x = &ch->q[u];
	x->completed = true;
	if (k->sess_gen[r] != n->sess.gen && m->mut != MUT_ANY_CONN_ACKS)
		return true;
	ret = sdsm_sess_ack(&n->sess, x->ack, &first);
	if (ret < 0) {
		m->st.ackerr++;
		tracef(m, "%c: ack %u on conn %d names a message never sent",
		       nm(r), x->ack, c);
		conn_fail(m, r, c, "bad ack");
		return true;
	}
	release(m, r, first, ret, true);
	return true;
}

static bool act_report(struct model *m, int x);

/*
 * Have @r's layers heard of session @gen (a connection's sess_gen), so
 * that its messages may be delivered?  As sdsm_session_reported(); gen 0
 * goes on to be dropped.
 */
static bool reported(const struct model *m, int r, u32 gen)
{
	const struct node *n = &m->n[r];

	if (m->mut == MUT_UNGATED)
		return true;
	if (m->mut == MUT_WAIT_OLD_DOWN)
		return !n->notified_up || !gen || n->notified_gen == gen;
	return !gen || (n->notified_up && n->notified_gen == gen);
}

/* The receive worker of @c's channel @d takes its head. */
static bool deliver(struct model *m, int c, int d)
{
	struct conn *k = &conns[c];
	struct chan *ch = &k->ch[d];
	int r = !d;
	struct node *n = &m->n[r];
	enum sdsm_sess_rx v;
	struct msg x;
	bool data;

	if (ch->head == ch->tail)
		return false;
	if (!ch->q[ch->head].completed)
		complete(m, c, d);
	if (ch->head == ch->tail)
		return true;	/* cannot happen: completed is kept */
	data = ch->q[ch->head].type == M_DATA;
	/* The delivery mutex is held: the worker waits for it. */
	if (data && n->rx_busy)
		return false;
	/* It kicks the peer work, which may run at once. */
	if (data && !reported(m, r, k->sess_gen[r]) &&
	    (m->quiescent || !rndn(m, 4)))
		act_report(m, r);
	if (data && !reported(m, r, k->sess_gen[r])) {
		/*
		 * The worker waits, at most heartbeat_ms; not on a failed
		 * connection, nor once faults stopped (the report is done or
		 * will never come).
		 */
		if (!k->broken && !m->quiescent && rndn(m, 2))
			return false;
		x = ch->q[ch->head++];
		tracef(m, "%c receives msg seq %u on conn %d, its session not reported up",
		       nm(r), x.seq, c);
		conn_fail(m, r, c, "its session not yet reported up");
		return true;
	}
	x = ch->q[ch->head++];
	tracef(m, "%c receives %s seq %u ack %u on conn %d", nm(r),
	       mname(&x), x.seq, x.ack, c);
	if (x.type == M_HELLO) {
		if (r == NB)
			b_decide(m, c, &x);
		else
			a_follow(m, c, &x);
		return true;
	}
	if (x.type != M_DATA)
		return true;
	if (k->sess_gen[r] != n->sess.gen && m->mut != MUT_ANY_CONN_RX) {
		tracef(m, "%c drops it: conn %d's gen %u, session's %u", nm(r),
		       c, k->sess_gen[r], n->sess.gen);
		return true;
	}
	v = sdsm_sess_rx(&n->sess, x.seq);
	if (v == SDSM_SESS_DELIVER) {
		if (c != n->cur)
			m->st.old_conn_rx++;
		upper_rx(m, r, &x);
	} else if (v == SDSM_SESS_DUP) {
		m->st.dups++;
		tracef(m, "%c: duplicate %u", nm(r), x.seq);
		if (m->mut == MUT_RX_DUP)
			upper_rx(m, r, &x);
	} else {
		m->st.gaps++;
		if (m->mut == MUT_GAP_DELIVERED) {
			tracef(m, "%c (planted) delivers gap %u", nm(r), x.seq);
			n->sess.rx_seq = x.seq;
			upper_rx(m, r, &x);
			return true;
		}
		conn_fail(m, r, c, "gap");
	}
	return true;
}

static int cur_decided(struct model *m, int x)
{
	int c = m->n[x].cur;

	return c >= 0 && conns[c].decided[x] ? c : -1;
}

/* Node @x sends the next message: again from the ring, or a new one. */
static bool act_send(struct model *m, int x, bool post_fails)
{
	struct node *n = &m->n[x];
	int c = cur_decided(m, x);
	struct msg d = { .type = M_DATA };
	struct slot *sl;
	u32 seq;

	if (c < 0)
		return false;
	if (sdsm_sess_resending(&n->sess)) {
		if (post_fails)
			return false;
		seq = sdsm_sess_resend_next(&n->sess);
		sl = &n->ring[seq % RING];
		if (!sl->used || sl->seq != seq) {
			fail(m, "(e) %c resends message %u, which its ring does not hold",
			     nm(x), seq);
			return true;
		}
		m->st.resent++;
		d.seq = seq;
		d.ack = ack_value(m, x);
		d.gsid = sl->gsid;
		d.idx = sl->idx;
		tracef(m, "%c resends %u (session %d #%d)", nm(x), seq, d.gsid,
		       d.idx);
		post(m, c, x, &d);
		return true;
	}
	seq = sdsm_sess_tx_next(&n->sess);
	if (!seq)
		return false;
	sl = &n->ring[seq % RING];
	if (sl->used) {
		fail(m, "(e) %c numbers %u, its ring entry still holds %u",
		     nm(x), seq, sl->seq);
		return true;
	}
	if (n->gsid + 0u >= MAXG) {
		fail(m, "harness: bad ghost session %d", n->gsid);
		return true;
	}
	*sl = (struct slot){ true, seq, n->gsid, ++m->sent[n->gsid][x] };
	m->st.sent++;
	d.seq = seq;
	d.ack = ack_value(m, x);
	d.gsid = sl->gsid;
	d.idx = sl->idx;
	tracef(m, "%c sends %u (session %d #%d)", nm(x), seq, d.gsid, d.idx);
	if (post_fails) {
		m->st.postfail++;
		conns[c].doomed = true;
		tracef(m, "%c: posting %u on conn %d fails", nm(x), seq, c);
	} else {
		post(m, c, x, &d);
	}
	if (m->mut == MUT_RELEASE_ON_POST) {
		tracef(m, "%c (planted) frees ring entry of %u", nm(x), seq);
		sl->used = false;
	}
	return true;
}

/*
 * A control message (PING, CREDIT, ...): it only carries an ack, 0 on a
 * connection its sender has not decided on (sdsm_session_ack()).
 */
static bool act_ctrl(struct model *m, int x)
{
	struct msg d = { .type = M_CTRL };
	int c = cur_decided(m, x);

	if (c < 0 && m->mut == MUT_EARLY_ACK && m->n[x].cur >= 0) {
		c = m->n[x].cur;
		tracef(m, "%c (planted) acks %u on undecided conn %d", nm(x),
		       ack_value(m, x), c);
	} else if (c < 0) {
		if (m->n[x].cur < 0)
			return false;
		c = m->n[x].cur;
		post(m, c, x, &d);
		return true;
	}
	d.ack = ack_value(m, x);
	post(m, c, x, &d);
	return true;
}

/* A notices that its current connection broke, and may open another. */
static bool act_notice(struct model *m, int x)
{
	int c = m->n[x].cur;

	if (c < 0 || !conns[c].broken)
		return false;
	tracef(m, "%c notices conn %d broke", nm(x), c);
	m->n[x].cur = -1;
	return true;
}

static bool act_connect(struct model *m, int cap)
{
	struct conn *k;
	int c = m->nconn, b = m->n[NB].cur;

	if (m->n[NA].cur >= 0 || c >= cap)
		return false;
	if (b >= 0 && !conns[b].broken) {
		fail(m, "harness: B's current conn %d still works", b);
		return true;
	}
	k = &conns[c];
	/* Not the whole struct: the channels are large. */
	k->ch[0].head = k->ch[0].tail = 0;
	k->ch[1].head = k->ch[1].tail = 0;
	k->broken = k->doomed = false;
	k->gone[0] = k->gone[1] = false;
	k->decided[0] = k->decided[1] = false;
	k->sess_gen[0] = k->sess_gen[1] = 0;
	m->nconn++;
	m->st.conns++;
	m->n[NA].cur = m->n[NB].cur = c;
	tracef(m, "A connects: conn %d", c);
	post_hello(m, NA, c, false);
	if (m->mut == MUT_HELLO_FIRST) {
		tracef(m, "B (planted) answers before reading A's hello");
		post_hello(m, NB, c, sdsm_sess_live(&m->n[NB].sess));
	}
	return true;
}

/* The failure detector: no decided, working connection for a while. */
static bool act_expire(struct model *m, int x)
{
	struct node *n = &m->n[x];
	struct sdsm_sess *s = &n->sess;
	int c = n->cur;

	if (c >= 0 && conns[c].decided[x] && !conns[c].broken)
		return false;
	if (!sdsm_sess_live(s))
		return false;
	m->st.expiries++;
	tracef(m, "%c's session %d (sid %u) expires", nm(x), n->gsid, s->sid);
	n->gsid = 0;
	if (m->mut == MUT_EXPIRY_KEEPS_CORE)
		return true;
	if (m->mut != MUT_EXPIRY_NO_RELEASE)
		release(m, x, s->acked + 1, sdsm_sess_unacked(s), false);
	sdsm_sess_end(s);
	return true;
}

static u64 new_inc(struct model *m)
{
	return ++m->next_inc << 20 | (rnd(m) & 0xfffff);
}

static bool act_restart(struct model *m, int x)
{
	struct node *n = &m->n[x];
	int c;

	m->st.restarts++;
	for (c = 0; c < m->nconn; c++) {
		conns[c].gone[x] = true;
		/* What it had received dies with it. */
		conns[c].ch[!x].head = conns[c].ch[!x].tail;
		conn_break(m, c);
	}
	n->inc = new_inc(m);
	sdsm_sess_init(&n->sess);
	memset(n->ring, 0, sizeof(n->ring));
	n->cur = -1;
	n->gsid = 0;
	/* A new module: its layers and peer work start afresh. */
	n->notified_up = false;
	n->notified_gen = 0;
	n->rep_gsid = 0;
	memset(n->held, 0, sizeof(n->held));
	n->rx_busy = false;
	tracef(m, "%c restarts: incarnation %#llx", nm(x),
	       (unsigned long long)n->inc);
	return true;
}

/*
 * @x's peer work: DOWN of the session it reported UP if that one ended
 * (the layers forget everything of the peer), then UP of the live session
 * if its connection is decided, as sdsm_peer_work().  False if nothing
 * was to report.
 */
static bool act_report(struct model *m, int x)
{
	struct node *n = &m->n[x];
	bool live = sdsm_sess_live(&n->sess), moved = false;
	u32 gen = n->sess.gen;
	int g;

	if (n->notified_up && (!live || gen != n->notified_gen)) {
		/* A delivery under way ends first (rx_mutex). */
		if (n->rx_busy && m->mut != MUT_DOWN_NO_WAIT)
			return false;
		if (m->mut == MUT_UP_FOR_DOWN && live) {
			/* The UP below replaces the session unreported. */
			tracef(m, "%c (planted) skips the DOWN of session %d",
			       nm(x), n->rep_gsid);
		} else {
			tracef(m, "%c reports session %d down", nm(x),
			       n->rep_gsid);
			for (g = 1; g <= m->nghost; g++) {
				if (n->held[g] && g != n->rep_gsid) {
					fail(m, "(g) %c's DOWN report of session %d takes away what session %d left",
					     nm(x), n->rep_gsid, g);
					return true;
				}
			}
			memset(n->held, 0, sizeof(n->held));
			n->rep_gsid = 0;
		}
		n->notified_up = false;
		moved = true;
	}
	if (!n->notified_up && live && n->gsid && cur_decided(m, x) >= 0) {
		n->notified_up = true;
		n->notified_gen = gen;
		n->rep_gsid = n->gsid;
		tracef(m, "%c reports session %d up", nm(x), n->gsid);
		moved = true;
	}
	return moved;
}

/* A random connection with something in channel *@d. */
static int pick_chan(struct model *m, int *d)
{
	int i, c, tries = m->nconn * 2;

	for (i = 0; i < tries; i++) {
		c = rndn(m, m->nconn);
		*d = rndn(m, 2);
		/* Favour the current connection. */
		if (i == 0 && m->n[NA].cur >= 0 && rndn(m, 2))
			c = m->n[NA].cur;
		/* Some schedules hold old connections' messages back. */
		if (m->lazy_old && !m->quiescent && c != m->n[NA].cur &&
		    c != m->n[NB].cur && rndn(m, 1u << m->lazy_old))
			continue;
		if (conns[c].ch[*d].head < conns[c].ch[*d].tail)
			return c;
	}
	for (c = 0; c < m->nconn; c++)
		for (*d = 0; *d < 2; (*d)++)
			if (conns[c].ch[*d].head < conns[c].ch[*d].tail)
				return c;
	return -1;
}

static bool do_act(struct model *m, enum act a)
{
	int x = rndn(m, 2), c, d;

	switch (a) {
	case ACT_DELIVER:
	case ACT_COMPLETE:
		c = pick_chan(m, &d);
		if (c < 0)
			return false;
		return a == ACT_DELIVER ? deliver(m, c, d) : complete(m, c, d);
	case ACT_SEND:
		return act_send(m, x, false);
	case ACT_POSTFAIL:
		return act_send(m, x, true);
	case ACT_CTRL:
		return act_ctrl(m, x);
	case ACT_BREAK:
		c = m->n[NA].cur;
		if (c < 0 || conns[c].broken)
			return false;
		conn_break(m, c);
		return true;
	case ACT_BREAK_HELLO:
		/* In the middle of a handshake: B decided, A did not. */
		c = m->n[NA].cur;
		if (c < 0 || conns[c].broken || !conns[c].decided[NB] ||
		    conns[c].decided[NA])
			return false;
		conn_break(m, c);
		return true;
	case ACT_DOOM:
		/* The sender of a failed post fails its connection. */
		for (c = 0; c < m->nconn; c++) {
			if (conns[c].doomed && !conns[c].broken) {
				conn_fail(m, m->n[NA].cur == c ? NA : NB, c,
					  "post failed");
				return true;
			}
		}
		return false;
	case ACT_NOTICE:
		return act_notice(m, x) || act_notice(m, !x);
	case ACT_CONNECT:
		return act_connect(m, CONN_CAP);
	case ACT_EXPIRE:
		return act_expire(m, x);
	case ACT_RESTART:
		/* B mostly; A too, rarely. */
		return act_restart(m, rndn(m, 4) ? NB : NA);
	case ACT_REPORT:
		return act_report(m, x);
	case ACT_FINISH:
		return act_finish(m, x);
	default:
		return false;
	}
}

static bool random_step(struct model *m)
{
	int tries, a, sum = 0, r;

	for (a = 0; a < ACT_N; a++)
		sum += m->weight[a];
	for (tries = 0; tries < 32; tries++) {
		r = rndn(m, sum);
		for (a = 0; r >= m->weight[a]; a++)
			r -= m->weight[a];
		if (do_act(m, a))
			return true;
	}
	return do_act(m, ACT_DELIVER) || do_act(m, ACT_NOTICE) ||
	       act_finish(m, NA) || act_finish(m, NB) ||
	       act_report(m, NA) || act_report(m, NB) ||
	       act_connect(m, CONN_CAP);
}

/* ---- the quiescent phase ---- */

/* One step without faults or new messages; false when nothing moves. */
static bool quiet_step(struct model *m)
{
	int c, d, x;

	/* Mostly the receive workers; the rest in a random order. */
	if (rndn(m, 4)) {
		c = pick_chan(m, &d);
		if (c >= 0 && (rndn(m, 6) ? deliver(m, c, d) :
			       complete(m, c, d)))
			return true;
	}
	x = rndn(m, 2);
	if (act_finish(m, x) || act_finish(m, !x) ||
	    act_report(m, x) || act_report(m, !x))
		return true;
	if (act_notice(m, x) || act_notice(m, !x))
		return true;
	if (act_connect(m, MAXCONN))
		return true;
	for (d = 0; d < 2; d++) {
		int c2 = cur_decided(m, x);

		if (c2 >= 0 && sdsm_sess_resending(&m->n[x].sess))
			return act_send(m, x, false);
		x = !x;
	}
	c = pick_chan(m, &d);
	return c >= 0 && deliver(m, c, d);
}

/* Both on one working, decided connection, all sent and acknowledged. */
static bool settled(struct model *m)
{
	int c = m->n[NA].cur, x;

	if (c < 0 || c != m->n[NB].cur || conns[c].broken ||
	    !conns[c].decided[NA] || !conns[c].decided[NB])
		return false;
	for (x = 0; x < 2; x++) {
		const struct sdsm_sess *s = &m->n[x].sess;

		if (!sdsm_sess_live(s) || sdsm_sess_unacked(s) ||
		    sdsm_sess_resending(s))
			return false;
	}
	for (c = 0; c < m->nconn; c++)
		for (x = 0; x < 2; x++)
			if (conns[c].ch[x].head < conns[c].ch[x].tail)
				return false;
	return true;
}

static void quiesce(struct model *m)
{
	const struct node *a = &m->n[NA], *b = &m->n[NB];
	int both = a->gsid && a->gsid == b->gsid ? a->gsid : 0;
	int round, k, c, x, g;

	m->quiescent = true;
	tracef(m, "quiescent phase: A in session %d, B in %d", a->gsid,
	       b->gsid);
	for (c = 0; c < m->nconn; c++)
		if (conns[c].doomed && !conns[c].broken)
			conn_fail(m, m->n[NA].cur == c ? NA : NB, c,
				  "post failed");
	for (round = 0; round < QROUNDS && !m->failed; round++) {
		for (k = 0; k < 4000 && !m->failed; k++) {
			m->st.steps++;
			if (!quiet_step(m))
				break;
			check_sane(m);
		}
		if (m->failed || settled(m))
			break;
		act_ctrl(m, NA);
		act_ctrl(m, NB);
	}
	if (m->failed)
		return;
	if (!settled(m)) {
		fail(m, "(c) not settled after the quiescent phase: A in session %d (unacked %u), B in %d (unacked %u)",
		     a->gsid, sdsm_sess_unacked(&a->sess), b->gsid,
		     sdsm_sess_unacked(&b->sess));
		return;
	}
	g = a->gsid;
	if (!g || g != b->gsid) {
		fail(m, "(c) after the quiescent phase A is in session %d, B in %d",
		     g, b->gsid);
		return;
	}
	if (a->sess.sid != b->sess.sid || a->sess.remote_inc != b->inc ||
	    b->sess.remote_inc != a->inc) {
		fail(m, "(d) after the quiescent phase: sids %u/%u, incarnations differ",
		     a->sess.sid, b->sess.sid);
		return;
	}
	for (x = 0; x < 2; x++) {
		if (m->deliv[g][x] != m->sent[g][x]) {
			fail(m, "(c) %c sent %d messages in session %d, %d delivered",
			     nm(x), m->sent[g][x], g, m->deliv[g][x]);
			return;
		}
		if (m->n[x].sess.tx_seq != m->n[!x].sess.rx_seq) {
			fail(m, "(c) %c numbered %u, %c delivered %u", nm(x),
			     m->n[x].sess.tx_seq, nm(!x),
			     m->n[!x].sess.rx_seq);
			return;
		}
	}
	if (both && g != both) {
		fail(m, "(f) session %d, held by both when faults stopped, ended (now %d)",
		     both, g);
		return;
	}
	while (act_finish(m, NA) || act_finish(m, NB) ||
	       act_report(m, NA) || act_report(m, NB))
		;
	for (x = 0; x < 2 && !m->failed; x++) {
		int h;

		if (m->n[x].rep_gsid != g) {
			fail(m, "(h) %c's layers heard of session %d, not of the last one, %d",
			     nm(x), m->n[x].rep_gsid, g);
			return;
		}
		for (h = 1; h <= m->nghost; h++)
			if (m->n[x].held[h] && h != g)
				fail(m, "(h) %c's layers hold what ended session %d left: never reported down",
				     nm(x), h);
	}
}

/* ---- schedules ---- */

static void setup(struct model *m, enum mut mut, u64 seed, bool wrap,
		  bool quiet)
{
	static const int w_break[] = { 0, 6, 20, 60 };
	static const int w_expire[] = { 0, 4, 15, 40 };
	static const int w_postfail[] = { 0, 3, 12 };
	static const int w_restart[] = { 0, 0, 2, 6 };
	static const int w_break_hello[] = { 0, 0, 40, 300 };
	int x;

	memset(m, 0, sizeof(*m));
	m->mut = mut;
	m->wrap = wrap;
	m->quiet = quiet;
	m->rng = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	for (x = 0; x < 8; x++)
		rnd(m);
	for (x = 0; x < 2; x++) {
		m->n[x].inc = new_inc(m);
		sdsm_sess_init(&m->n[x].sess);
		m->n[x].cur = -1;
	}
	m->weight[ACT_DELIVER] = 300;
	m->weight[ACT_COMPLETE] = 40;
	m->weight[ACT_SEND] = 150 + rndn(m, 200);
	m->weight[ACT_CTRL] = 20 + rndn(m, 60);
	m->weight[ACT_BREAK] = w_break[rndn(m, 4)];
	m->weight[ACT_BREAK_HELLO] = w_break_hello[rndn(m, 4)];
	m->weight[ACT_NOTICE] = 40;
	m->weight[ACT_CONNECT] = 60;
	m->weight[ACT_EXPIRE] = w_expire[rndn(m, 4)];
	m->weight[ACT_RESTART] = w_restart[rndn(m, 4)];
	m->weight[ACT_POSTFAIL] = w_postfail[rndn(m, 3)];
	m->weight[ACT_DOOM] = 20;
	/* Some peer works run late. */
	m->weight[ACT_REPORT] = 5 + rndn(m, 80);
	m->weight[ACT_FINISH] = 10 + rndn(m, 80);
	m->lazy_old = rndn(m, 3) * 3;
}

/* One schedule; true if every invariant held. */
static bool run_schedule(struct model *m, enum mut mut, u64 seed, bool wrap,
			 bool quiet)
{
	unsigned long steps, i;

	setup(m, mut, seed, wrap, quiet);
	steps = 40 + rndn(m, 360);
	for (i = 0; i < steps && !m->failed; i++) {
		m->st.steps++;
		if (!random_step(m))
			break;
		check_sane(m);
	}
	if (!m->failed)
		quiesce(m);
	return !m->failed;
}

/* ---- TAP ---- */

static unsigned long long base_seed;
static unsigned long schedules = 5000;
static bool trace_plants;

static void add_stats(struct stats *t, const struct stats *s)
{
	const unsigned long *a = (const unsigned long *)s;
	unsigned long *b = (unsigned long *)t;
	size_t i;

	for (i = 0; i < sizeof(*s) / sizeof(*a); i++)
		b[i] += a[i];
}

static void report_failure(struct model *m, enum mut mut, u64 seed,
			   bool wrap)
{
	printf("# seed %llu%s failed; replay: SDSM_SEED=%llu SDSM_SCHEDULES=1 ./test_session\n",
	       (unsigned long long)seed, wrap ? " (wrapping)" : "",
	       (unsigned long long)seed);
	run_schedule(m, mut, seed, wrap, false);
	dump(m);
}

/* @wrap: the numbers of every session wrap past 2^32 soon. */
static bool test_random(int wrap)
{
	static struct model m;
	struct stats t = { 0 };
	unsigned long i, n = schedules * (wrap ? 2 : 6);
	clock_t t0 = clock();

	for (i = 0; i < n; i++) {
		u64 seed = base_seed + i;

		if (!run_schedule(&m, MUT_NONE, seed, wrap, true)) {
			report_failure(&m, MUT_NONE, seed, wrap);
			return false;
		}
		add_stats(&t, &m.st);
	}
	printf("# %lu schedules, %lu steps, %.1f s: %lu connections (%lu breaks), %lu messages sent, %lu delivered, %lu resent\n",
	       n, t.steps, (double)(clock() - t0) / CLOCKS_PER_SEC, t.conns,
	       t.breaks, t.sent, t.delivered, t.resent);
	printf("# verdicts: %lu RESUME (%lu quiescent), %lu NEW, %lu BAD decided, %lu BAD followed\n",
	       t.resumes, t.quiesce_resumes, t.news, t.bad_decide,
	       t.bad_follow);
	printf("# %lu duplicates dropped, %lu gaps failed a link, %lu bad acks, %lu delivered from an old connection, %lu failed posts, %lu expiries, %lu restarts\n",
	       t.dups, t.gaps, t.ackerr, t.old_conn_rx, t.postfail,
	       t.expiries, t.restarts);
	if (n >= 100 && (!t.resumes || !t.news || !t.bad_follow || !t.dups ||
			 !t.gaps || !t.old_conn_rx || !t.restarts)) {
		printf("# some path was never explored\n");
		return false;
	}
	return true;
}

/* ---- scripted cases, on the core alone ---- */

#define EXPECT(cond)							\
	do {								\
		if (!(cond)) {						\
			printf("# line %d: %s\n", __LINE__, #cond);	\
			return false;					\
		}							\
	} while (0)

#define INC_A	0xa1
#define INC_B	0xb2

/* A handshake: A's hello, B decides, B's hello, A follows. */
static void handshake(struct sdsm_sess *a, struct sdsm_sess *b,
		      enum sdsm_sess_verdict *va, enum sdsm_sess_verdict *vb)
{
	struct sdsm_sess_hello h;
	u32 first, n;

	sdsm_sess_hello_fill(a, INC_A, &h);
	*vb = sdsm_sess_decide(b, INC_B, &h, &first, &n);
	sdsm_sess_hello_fill(b, INC_B, &h);
	h.resume = *vb == SDSM_SESS_RESUME;
	*va = sdsm_sess_follow(a, INC_A, &h, &first, &n);
}

/*
 * A's session times out between its hello and B's RESUME: A's follow is
 * BAD, but the glue still marks the connection with A's (new) gen, and
 * B's resends on it must not be delivered: A holds no session.
 */
static bool test_bad_follow(int arg)
{
	struct sdsm_sess a, b;
	struct sdsm_sess_hello h;
	enum sdsm_sess_verdict va, vb;
	u32 first, n;

	(void)arg;
	sdsm_sess_init(&a);
	sdsm_sess_init(&b);
	handshake(&a, &b, &va, &vb);
	EXPECT(vb == SDSM_SESS_NEW && va == SDSM_SESS_NEW);
	EXPECT(sdsm_sess_tx_next(&b) == 1 && sdsm_sess_tx_next(&b) == 2);
	/* The link breaks; A's hello on the next one, then A expires. */
	sdsm_sess_hello_fill(&a, INC_A, &h);
	sdsm_sess_end(&a);
	EXPECT(sdsm_sess_decide(&b, INC_B, &h, &first, &n) ==
	       SDSM_SESS_RESUME);
	EXPECT(sdsm_sess_resend_next(&b) == 1);
	sdsm_sess_hello_fill(&b, INC_B, &h);
	h.resume = true;
	EXPECT(sdsm_sess_follow(&a, INC_A, &h, &first, &n) == SDSM_SESS_BAD);
	EXPECT(sdsm_sess_rx(&a, 1) != SDSM_SESS_DELIVER);
	/* A node that never held a session: its undecided links' gen 0. */
	sdsm_sess_init(&a);
	EXPECT(a.gen == 0 && sdsm_sess_rx(&a, 1) != SDSM_SESS_DELIVER);
	return true;
}

/*
 * The numbers go on past 2^32 - 1 with 1: never 0, which is no number
 * (the caller's "none", the wire's "not of the session").
 */
static bool test_wrap(int arg)
{
	struct sdsm_sess a, b;
	struct sdsm_sess_hello h;
	enum sdsm_sess_verdict va, vb;
	u32 first, n, seq, i, last = 0;
	int k;

	(void)arg;
	sdsm_sess_init(&a);
	sdsm_sess_init(&b);
	handshake(&a, &b, &va, &vb);
	EXPECT(vb == SDSM_SESS_NEW && va == SDSM_SESS_NEW);
	/* As if 2^32 - 4 messages had gone from A to B. */
	a.tx_seq = a.acked = b.rx_seq = 0xfffffffcu;
	a.resend = 0xfffffffdu;
	/* The ring fills: 0 takes an entry of its own. */
	for (i = 0; (seq = sdsm_sess_tx_next(&a)); i++) {
		EXPECT(seq != 0 && seq % RING != 0);
		last = seq;
	}
	EXPECT(i == RING - 1 && last == RING - 4);
	EXPECT(sdsm_sess_unacked(&a) == RING);
	/* B gets 0xfffffffd .. 0xffffffff, then 1: no gap. */
	for (seq = 0xfffffffdu; seq; seq++)
		EXPECT(sdsm_sess_rx(&b, seq) == SDSM_SESS_DELIVER);
	EXPECT(sdsm_sess_rx(&b, 2) == SDSM_SESS_GAP);
	EXPECT(sdsm_sess_rx(&b, 1) == SDSM_SESS_DELIVER);
	EXPECT(sdsm_sess_rx(&b, 0xffffffffu) == SDSM_SESS_DUP);
	EXPECT(sdsm_sess_ack_value(&b) == 1);
	/* An ack of 0 is none; an ack of 1 covers 0 too. */
	EXPECT(sdsm_sess_ack(&a, 0, &first) == 0);
	k = sdsm_sess_ack(&a, 0xffffffffu, &first);
	EXPECT(k == 3 && first == 0xfffffffdu);
	EXPECT(sdsm_sess_ack(&a, 0, &first) == 0);
	k = sdsm_sess_ack(&a, 1, &first);
	EXPECT(k == 2 && first == 0);
	/* The link breaks: the resume sends again from 2, never 0. */
	handshake(&a, &b, &va, &vb);
	EXPECT(vb == SDSM_SESS_RESUME && va == SDSM_SESS_RESUME);
	for (seq = 2; seq <= last; seq++)
		EXPECT(sdsm_sess_resend_next(&a) == seq);
	EXPECT(!sdsm_sess_resend_next(&a) && !sdsm_sess_resending(&a));
	/* A resume right at the wrap: B delivered up to 2^32 - 1. */
	a.tx_seq = 1;
	a.acked = 0xfffffffeu;
	a.resend = 2;
	b.rx_seq = 0xffffffffu;
	sdsm_sess_hello_fill(&a, INC_A, &h);
	EXPECT(sdsm_sess_decide(&b, INC_B, &h, &first, &n) ==
	       SDSM_SESS_RESUME);
	sdsm_sess_hello_fill(&b, INC_B, &h);
	h.resume = true;
	EXPECT(sdsm_sess_follow(&a, INC_A, &h, &first, &n) ==
	       SDSM_SESS_RESUME);
	EXPECT(first == 0xffffffffu && n == 1);
	EXPECT(sdsm_sess_resend_next(&a) == 1 && !sdsm_sess_resend_next(&a));
	EXPECT(sdsm_sess_tx_next(&a) == 2);
	return true;
}

/* ---- planted bugs ---- */

static unsigned long plant_caught;

static bool test_planted(int mut)
{
	static struct model m;
	unsigned long i, n = schedules * 20;

	for (i = 0; i < n; i++) {
		u64 seed = base_seed + i;
		/* One schedule in four with the numbers wrapping. */
		bool wrap = (i & 3) == 3;

		if (!run_schedule(&m, mut, seed, wrap, true)) {
			plant_caught = i + 1;
			printf("# caught by schedule %lu (seed %llu%s): %s\n",
			       i + 1, (unsigned long long)seed,
			       wrap ? ", wrapping" : "", m.why);
			if (trace_plants) {
				run_schedule(&m, mut, seed, wrap, false);
				dump(&m);
			}
			return true;
		}
	}
	printf("# NOT caught in %lu schedules\n", n);
	plant_caught = 0;
	return false;
}

static const struct {
	const char *name;
	bool (*fn)(int arg);
	int arg;
} tests[] = {
	{ "session: random schedules keep every invariant", test_random, 0 },
	{ "session: random schedules keep every invariant, numbers wrapping past 2^32",
	  test_random, 1 },
	{ "session: no delivery without a session (BAD follow, never-held gen 0)",
	  test_bad_follow, 0 },
	{ "session: numbers wrap past 2^32 - 1 to 1, never 0", test_wrap, 0 },
	{ "receiver delivers duplicates", test_planted, MUT_RX_DUP },
	{ "resend skips the first unacknowledged message", test_planted,
	  MUT_RESEND_SKIP },
	{ "ack one ahead of delivery", test_planted, MUT_ACK_AHEAD },
	{ "ring entry released when posted, not when acked", test_planted,
	  MUT_RELEASE_ON_POST },
	{ "passive resumes without comparing the session id", test_planted,
	  MUT_RESUME_ANY_SID },
	{ "passive sends its hello before reading the active side's",
	  test_planted, MUT_HELLO_FIRST },
	{ "active ignores a NEW verdict, keeps its numbering", test_planted,
	  MUT_KEEP_NUMBERING },
	{ "gap delivered instead of failing the link", test_planted,
	  MUT_GAP_DELIVERED },
	{ "acks of undecided or old connections applied", test_planted,
	  MUT_ANY_CONN_ACKS },
	{ "old session's messages delivered (no sess_gen check)",
	  test_planted, MUT_ANY_CONN_RX },
	{ "expiry leaves the core's session live", test_planted,
	  MUT_EXPIRY_KEEPS_CORE },
	{ "expiry ends the session, keeps its ring entries", test_planted,
	  MUT_EXPIRY_NO_RELEASE },
	{ "resume sends nothing again", test_planted, MUT_NO_RESEND },
	{ "a ping before the decision acknowledges the old session",
	  test_planted, MUT_EARLY_ACK },
	{ "a session's messages wait for the old one's DOWN only, not for its UP",
	  test_planted, MUT_WAIT_OLD_DOWN },
	{ "messages delivered before their session is reported", test_planted,
	  MUT_UNGATED },
	{ "DOWN reported while a delivery is under way", test_planted,
	  MUT_DOWN_NO_WAIT },
	{ "a new session reported up without the old one's DOWN",
	  test_planted, MUT_UP_FOR_DOWN },
};

#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

int main(int argc, char **argv)
{
	struct tap_args ta;
	int i, ret, failed = 0;

	trace_plants = tap_env_ulong("SDSM_TRACE", 0);
	ret = tap_begin_seeded(argc, argv, NTESTS, &ta, &base_seed,
			       &schedules, "session model", "schedules");
	if (ret >= 0)
		return ret;
	for (i = 0; i < NTESTS; i++) {
		bool ok;

		fflush(stdout);
		ok = tests[i].fn(tests[i].arg);
		if (tests[i].fn == test_planted)
			tap_result(&ta, i, ok,
				   "planted %s is caught (after %lu schedules)",
				   tests[i].name, plant_caught);
		else
			tap_result(&ta, i, ok, "%s", tests[i].name);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
