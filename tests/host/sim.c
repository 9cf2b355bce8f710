// SPDX-License-Identifier: GPL-2.0
/*
 * Host model of an sdsm cluster driving kmod/sdsm_proto.c.
 *
 * Every node keeps, per page, the protocol's node-side state, its copy of
 * the page (a 64-bit value) and the mapping the protocol allowed.  Each
 * page's home also keeps the directory entry and the home copy.  Messages
 * travel in per-(src,dst) FIFO channels, delivered one at a time in
 * whatever order the test or the random scheduler picks, which is exactly
 * the freedom RC gives: FIFO per peer pair, nothing across pairs.  Messages
 * to self use the (n,n) channel.
 *
 * A local access runs sdsm_proto_fault(), or on the page's home with
 * @own_grant sdsm_proto_fault_home(), as the module does; on HIT it
 * performs at once (the per-page lock makes it atomic), on WAIT it sleeps
 * until the protocol's wake action, then faults again in a later step.
 *
 * sim_check() runs after every step and verifies, for every page:
 *  - at most one node may write it, and never while another may read it;
 *  - each node's mapping matches its protocol state (M=RW, S=RO, I=none);
 *  - every mapped copy holds the last value written (so every read does);
 *  - a node has at most one request in flight, and one exactly while its
 *    state says a request is pending (no lost or duplicate request);
 *  - when the page is quiescent, the directory agrees with the nodes and
 *    the home copy is current unless a node owns the page.
 *  - progress: a copy a grant brought is never taken back (INV, FETCH)
 *    before a local fault used it or its hold timed out, and a request
 *    parked at a home sees at most as many grants to others as there are
 *    nodes before its own (round-robin): together, under any schedule
 *    fair to faulters, every node that keeps trying completes accesses.
 * sim_check_final() adds: no message undelivered, no access unfinished.
 *
 * A grant's hold ends in its own steps, as in the kernel: the deferred
 * work after a fault used the copy (sim_release()), or the bound for an
 * unused grant (sim_release() with @timeout), interleaved with deliveries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "sim.h"

struct sim_priv {
	struct sim *s;
	int node;
	int page;
	const struct sim_msg *in;	/* message being delivered */
};

static const char * const sim_state_names[] = { "I", "S", "M" };
static const char * const sim_map_names[] = { "none", "RO", "RW" };

u64 sim_rand(struct sim *s, u64 bound)
{
	/* splitmix64 */
	u64 z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return bound ? z % bound : z;
}

void sim_tracef(struct sim *s, const char *fmt, ...)
{
	char *line = s->trace[s->ntrace % SIM_TRACE];
	int n;
	va_list ap;

	if (s->quiet)
		return;
	n = snprintf(line, sizeof(s->trace[0]), "%6lu ", s->steps);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(s->trace[0]) - n, fmt, ap);
	va_end(ap);
	s->ntrace++;
}

void sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	sim_tracef(s, "VIOLATION: %s", s->why);
}

void sim_dump(const struct sim *s, const char *prefix)
{
	unsigned int i, first;
	int n, p;

	printf("%sviolation: %s\n", prefix, s->why);
	printf("%slast steps:\n", prefix);
	first = s->ntrace > SIM_TRACE ? s->ntrace - SIM_TRACE : 0;
	for (i = first; i < s->ntrace; i++)
		printf("%s  %s\n", prefix, s->trace[i % SIM_TRACE]);
	printf("%sstate:\n", prefix);
	for (p = 0; p < s->npages; p++) {
		const struct sdsm_proto_home *d = &s->dir[p];

		printf("%s  page %d home %d: dir state %u owner %d sharers %#llx busy %u req %d acks %#llx flags %#x pend r%#llx w%#llx; home copy %llu last %llu%s\n",
		       prefix, p, s->home[p], d->state,
		       d->owner == SDSM_PROTO_NO_NODE ? -1 : d->owner,
		       (unsigned long long)d->sharers, d->busy,
		       d->requester == SDSM_PROTO_NO_NODE ? -1 : d->requester,
		       (unsigned long long)d->acks, d->flags,
		       (unsigned long long)d->pend_read,
		       (unsigned long long)d->pend_write,
		       (unsigned long long)s->backing[p],
		       (unsigned long long)s->last[p],
		       s->lost[p] ? " LOST" : "");
		for (n = 0; n < s->nnodes; n++) {
			const struct sdsm_proto_node *nd = &s->node[n][p];

			printf("%s    node %d: %s pending %u map %s copy %llu%s, sends to %d\n",
			       prefix, n, sim_state_names[nd->state % 3],
			       nd->pending, sim_map_names[s->map[n][p] % 3],
			       (unsigned long long)s->local[n][p],
			       s->dead[n] ? " (dead)" : "", s->view[n][p]);
		}
	}
}

static void sim_fmt_msg(char *buf, size_t len, const struct sim_msg *m)
{
	snprintf(buf, len, "%s %d->%d page %llu seq %u%s%s",
		 sdsm_proto_msg_name(m->m.type), m->m.src, m->m.dst,
		 (unsigned long long)m->m.page, m->m.seq,
		 m->m.flags & SDSM_PROTO_F_DATA ? " +data " : "",
		 m->m.flags & SDSM_PROTO_F_DATA ? "" : "");
	if (m->m.flags & SDSM_PROTO_F_DATA) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, "%llu", (unsigned long long)m->data);
	}
}

/*
 * The home of page @p ended a transaction for @dst: each other parked
 * request was passed over once more (the round-robin bound).
 */
static void sim_count_grant(struct sim *s, int p, int dst)
{
	const struct sdsm_proto_home *d = &s->dir[p];
	u64 parked = d->pend_read | d->pend_write;
	int n;

	s->bypass[p][dst] = 0;
	for (n = 0; n < s->nnodes; n++) {
		if (n == dst || s->dead[n] || !(parked & ((u64)1 << n)))
			continue;
		if (++s->bypass[p][n] > s->max_bypass)
			s->max_bypass = s->bypass[p][n];
		if (s->bypass[p][n] > s->nnodes - 1)
			sim_fail(s, "page %d: node %d's request parked through %d grants to others (starvation)",
				 p, n, s->bypass[p][n]);
	}
}

/* ---- the action table ---- */

static void sim_push(struct sim *s, const struct sim_msg *m)
{
	struct sim_chan *c = &s->chan[m->m.src][m->m.dst];
	char buf[128] = "";

	if (!s->quiet)
		sim_fmt_msg(buf, sizeof(buf), m);
	if (s->dead[m->m.src] || s->dead[m->m.dst]) {
		sim_tracef(s, "  drop %s (dead peer)", buf);
		return;
	}
	if (c->len == SIM_CHAN_CAP) {
		sim_fail(s, "channel %d->%d overflow", m->m.src, m->m.dst);
		return;
	}
	c->q[(c->head + c->len) % SIM_CHAN_CAP] = *m;
	c->len++;
	sim_tracef(s, "  send %s", buf);
}

static void sim_op_send(void *priv, const struct sdsm_proto_msg *msg)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;
	struct sim_msg m = { .m = *msg };
	int p = (int)msg->page;

	if (msg->src != sp->node || msg->dst >= s->nnodes) {
		sim_fail(s, "send from %d to %d by node %d", msg->src,
			 msg->dst, sp->node);
		return;
	}
	if (msg->flags & SDSM_PROTO_F_DATA)
		m.data = sdsm_proto_msg_to_home(msg->type) ?
			 s->local[sp->node][p] : s->backing[p];
	if (msg->type == SDSM_PROTO_MSG_DATA) {
		if (s->map[sp->node][p] == SDSM_PROTO_MAP_RW)
			sim_fail(s, "node %d page %d: DATA sent while still writable",
				 sp->node, p);
		if (s->has_snap[sp->node][p]) {
			/* MUT_DATA_BEFORE_REVOKE: the early snapshot. */
			m.data = s->snap[sp->node][p];
			s->has_snap[sp->node][p] = false;
		}
	}
	/* A reply ends a transaction: count it against the parked. */
	if ((msg->type == SDSM_PROTO_MSG_GRANT_READ ||
	     msg->type == SDSM_PROTO_MSG_GRANT_WRITE ||
	     msg->type == SDSM_PROTO_MSG_NACK) && msg->src == s->home[p])
		sim_count_grant(s, p, msg->dst);

	if (msg->type == SDSM_PROTO_MSG_GRANT_WRITE &&
	    (s->dir[p].flags & SDSM_PROTO_HOME_READ_AS_WRITE) &&
	    msg->src == s->home[p])
		s->migratory_grants++;
	switch (s->mutation) {
	case MUT_MIGRATORY_KEEPS_COPY:
		/* The reader granted writable, the old owner's copy kept. */
		if (msg->type == SDSM_PROTO_MSG_FETCH_INV &&
		    (s->dir[p].flags & SDSM_PROTO_HOME_READ_AS_WRITE) &&
		    msg->src == s->home[p]) {
			sim_tracef(s, "  (planted) migratory READ: FETCH, not FETCH_INV");
			m.m.type = SDSM_PROTO_MSG_FETCH;
		}
		break;
	case MUT_EXCL_SHARED:
		/* The exclusive grant without its condition: nobody holds it. */
		if (msg->type == SDSM_PROTO_MSG_GRANT_READ &&
		    (s->dir[p].sharers & ~((u64)1 << msg->dst))) {
			sim_tracef(s, "  (planted) READ granted writable, other readers kept");
			m.m.type = SDSM_PROTO_MSG_GRANT_WRITE;
		}
		break;
	case MUT_EARLY_GRANT:
		/* The home counts the INV_ACK as if it had come back. */
		if (msg->type == SDSM_PROTO_MSG_INV && s->nhook < SIM_HOOKS) {
			s->hook[s->nhook] = *msg;
			s->hook[s->nhook].type = SDSM_PROTO_MSG_INV_ACK;
			s->hook[s->nhook].src = msg->dst;
			s->hook[s->nhook].dst = msg->src;
			s->nhook++;
			s->swallow_ack[msg->dst][p]++;
		}
		if (msg->type == SDSM_PROTO_MSG_INV_ACK &&
		    s->swallow_ack[msg->src][p]) {
			s->swallow_ack[msg->src][p]--;
			sim_tracef(s, "  (planted) swallow real INV_ACK");
			return;
		}
		break;
	case MUT_GRANT_BEFORE_DATA:
		/* The home takes its own stale copy as the owner's DATA. */
		if ((msg->type == SDSM_PROTO_MSG_FETCH ||
		     msg->type == SDSM_PROTO_MSG_FETCH_INV) &&
		    s->nhook < SIM_HOOKS) {
			s->hook[s->nhook] = *msg;
			s->hook[s->nhook].type = SDSM_PROTO_MSG_DATA;
			s->hook[s->nhook].flags = SDSM_PROTO_F_DATA;
			s->hook[s->nhook].src = msg->dst;
			s->hook[s->nhook].dst = msg->src;
			s->nhook++;
			s->swallow_data[msg->dst][p]++;
		}
		if (msg->type == SDSM_PROTO_MSG_DATA &&
		    s->swallow_data[msg->src][p]) {
			s->swallow_data[msg->src][p]--;
			sim_tracef(s, "  (planted) swallow the owner's DATA");
			return;
		}
		break;
	case MUT_FORGET_SHARER:
		if (msg->type == SDSM_PROTO_MSG_GRANT_READ &&
		    s->nhook < SIM_HOOKS)
			s->hook[s->nhook++] = *msg;
		break;
	}
	sim_push(s, &m);
}

static void sim_op_install(void *priv, const struct sdsm_proto_msg *msg)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;

	if (!sp->in || &sp->in->m != msg) {
		sim_fail(s, "install outside the delivery of its message");
		return;
	}
	if (sdsm_proto_msg_to_home(msg->type))
		s->backing[sp->page] = sp->in->data;
	else
		s->local[sp->node][sp->page] = sp->in->data;
}

static void sim_op_map(void *priv, enum sdsm_proto_map how)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;
	int n = sp->node, p = sp->page;

	if (how < s->map[n][p] && s->unused[n][p] && !s->in_peer_down &&
	    !s->lax_progress)
		sim_fail(s, "node %d page %d: granted copy taken back before a local access used it (livelock)",
			 n, p);
	if (s->mutation == MUT_DATA_BEFORE_REVOKE &&
	    s->map[n][p] == SDSM_PROTO_MAP_RW && how < SDSM_PROTO_MAP_RW &&
	    !s->in_peer_down) {
		/* Snapshot first; a thread stores before the PTE goes. */
		s->snap[n][p] = s->local[n][p];
		s->has_snap[n][p] = true;
		s->local[n][p] = ++s->next_value;
		s->last[p] = s->local[n][p];
		sim_tracef(s, "  (planted) node %d page %d: DATA snapshot %llu, then store %llu before write-protect",
			   n, p, (unsigned long long)s->snap[n][p],
			   (unsigned long long)s->last[p]);
	}
	s->map[n][p] = how;
	sim_tracef(sp->s, "  node %d page %d map %s", sp->node, sp->page,
		   sim_map_names[how % 3]);
}

static bool sim_err_ok(struct sim *s, int p, int err)
{
	if (err == -EHOSTDOWN)
		return s->dead[s->home[p]];
	if (err == -EIO)
		return s->lost[p];
	return false;
}

static void sim_complete_err(struct sim *s, int n, int slot, int err)
{
	struct sim_access *a = &s->acc[n][slot];

	sim_tracef(s, "  access #%u node %d page %d %s fails %d", a->id, n,
		   a->page, a->write ? "write" : "read", err);
	if (!sim_err_ok(s, a->page, err))
		sim_fail(s, "access #%u node %d page %d failed with %d for no reason",
			 a->id, n, a->page, err);
	s->errs++;
	s->last_err = err;
	a->state = ACC_FREE;
}

static void sim_op_wake(void *priv, int err)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;
	int i;

	if (s->mutation == MUT_LOST_WAKEUP && !err) {
		sim_tracef(s, "  (planted) wakeup lost");
		return;
	}
	if (err == -ESTALE) {
		/* Not the home: ask the page's manager, which knows it. */
		sim_tracef(s, "  node %d page %d: %d is not the home, ask again: %d",
			   sp->node, sp->page, s->view[sp->node][sp->page],
			   s->home[sp->page]);
		s->view[sp->node][sp->page] = s->home[sp->page];
		s->redirects++;
		err = 0;
	}
	for (i = 0; i < SIM_ACC; i++) {
		struct sim_access *a = &s->acc[sp->node][i];

		if (a->state != ACC_WAIT || a->page != sp->page)
			continue;
		if (err)
			sim_complete_err(s, sp->node, i, err);
		else
			a->state = ACC_RUNNABLE;
	}
}

static void sim_op_error(void *priv, const struct sdsm_proto_msg *msg,
			 const char *why)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;

	s->errors++;
	sim_tracef(s, "  protocol error at node %d: %s (%s from %d)",
		   sp->node, why, sdsm_proto_msg_name(msg->type), msg->src);
	if (s->errors > s->expect_errors)
		sim_fail(s, "protocol error at node %d page %d: %s (%s %d->%d)",
			 sp->node, sp->page, why,
			 sdsm_proto_msg_name(msg->type), msg->src, msg->dst);
}

static const struct sdsm_proto_ops sim_ops;

/*
 * The context of the node side of @sp's page, for a directory action on
 * its own node (own_fetch, own_inv); false if @sp is not the page's home.
 */
static bool sim_own_ctx(struct sim_priv *sp, struct sdsm_proto_ctx *ctx,
			const char *what)
{
	struct sim *s = sp->s;
	int n = sp->node, p = sp->page;

	*ctx = (struct sdsm_proto_ctx){
		.ops = &sim_ops, .priv = sp, .region = 1, .page = p,
		.self = n, .home = s->view[n][p], .exclusive = s->exclusive,
		.migratory = s->migratory,
	};
	if (n == s->home[p])
		return true;
	sim_fail(s, "node %d %s of page %d, home %d", n, what, p, s->home[p]);
	return false;
}

/* The home's directory takes its own node's modified copy, no messages. */
static bool sim_op_own_fetch(void *priv, bool inv)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;
	int n = sp->node, p = sp->page;
	struct sdsm_proto_ctx ctx;

	if (!sim_own_ctx(sp, &ctx, "takes its own copy"))
		return false;
	if (inv && s->mutation == MUT_MIGRATORY_KEEPS_COPY &&
	    (s->dir[p].flags & SDSM_PROTO_HOME_READ_AS_WRITE)) {
		sim_tracef(s, "  (planted) migratory READ: home keeps its own read copy");
		inv = false;
	}
	if (!sdsm_proto_node_yield(&ctx, &s->node[n][p], inv)) {
		sim_tracef(s, "  node %d page %d: own copy not yieldable, FETCH to self",
			   n, p);
		return false;
	}
	s->backing[p] = s->local[n][p];
	s->own_fetches++;
	sim_tracef(s, "  node %d page %d: home takes its own copy %llu (%s)",
		   n, p, (unsigned long long)s->backing[p],
		   inv ? "invalidated" : "kept read-only");
	if (s->mutation == MUT_OWN_FETCH_KEEPS_RW && !inv) {
		sim_tracef(s, "  (planted) node %d page %d stays writable", n,
			   p);
		s->map[n][p] = SDSM_PROTO_MAP_RW;
	}
	return true;
}

/* The home's directory drops its own node's read copy, no messages. */
static bool sim_op_own_inv(void *priv)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;
	int n = sp->node, p = sp->page;
	struct sdsm_proto_node *nd = &s->node[n][p];
	struct sdsm_proto_ctx ctx;

	if (!sim_own_ctx(sp, &ctx, "drops its own copy"))
		return false;
	/* As for its own grants: the rest keep the loop-back explored. */
	if (!s->own_grant)
		return false;
	if (s->mutation == MUT_OWN_INV_HELD &&
	    (nd->flags & SDSM_PROTO_NODE_HELD) && !nd->deferred) {
		sim_tracef(s, "  (planted) node %d page %d: held copy dropped",
			   n, p);
		nd->flags &= ~SDSM_PROTO_NODE_HELD;
	}
	if (!sdsm_proto_node_drop(&ctx, nd)) {
		sim_tracef(s, "  node %d page %d: own copy not droppable, INV to self",
			   n, p);
		return false;
	}
	s->own_invs++;
	sim_tracef(s, "  node %d page %d: home drops its own read copy", n, p);
	return true;
}

/* The home's directory grants its own node's fault: the home copy. */
static void sim_op_own_grant(void *priv, bool write)
{
	struct sim_priv *sp = priv;
	struct sim *s = sp->s;
	int n = sp->node, p = sp->page;

	/* In a fault, or ending a transaction at the directory. */
	if (n != s->home[p] ||
	    (sp->in && !sdsm_proto_msg_to_home(sp->in->m.type))) {
		sim_fail(s, "node %d grants itself page %d (home %d)%s", n, p,
			 s->home[p], sp->in ? " in a node's delivery" : "");
		return;
	}
	s->own_grants++;
	if (write && (s->dir[p].flags & SDSM_PROTO_HOME_READ_AS_WRITE))
		s->migratory_grants++;
	if (s->mutation == MUT_OWN_GRANT_STALE) {
		sim_tracef(s, "  (planted) node %d page %d: own grant keeps copy %llu",
			   n, p, (unsigned long long)s->local[n][p]);
		return;
	}
	s->local[n][p] = s->backing[p];
	sim_tracef(s, "  node %d page %d: home grants itself %s, copy %llu",
		   n, p, write ? "writable" : "read-only",
		   (unsigned long long)s->local[n][p]);
}

static const struct sdsm_proto_ops sim_ops = {
	.send = sim_op_send,
	.install = sim_op_install,
	.map = sim_op_map,
	.wake = sim_op_wake,
	.error = sim_op_error,
	.own_fetch = sim_op_own_fetch,
	.own_inv = sim_op_own_inv,
	.own_grant = sim_op_own_grant,
};

static void sim_ctx(struct sim *s, struct sim_priv *sp,
		    struct sdsm_proto_ctx *ctx, int n, int p)
{
	sp->s = s;
	sp->node = n;
	sp->page = p;
	sp->in = NULL;
	ctx->ops = &sim_ops;
	ctx->priv = sp;
	ctx->region = 1;
	ctx->page = p;
	ctx->self = n;
	ctx->home = s->view[n][p];
	/* As the module: a home grants its own requests on its node side. */
	ctx->self_node = s->own_grant && n == s->home[p] ? &s->node[n][p] :
			 NULL;
	ctx->exclusive = s->exclusive;
	ctx->migratory = s->migratory;
}

/* Whether a fault of node @n waits for page @p. */
static bool sim_waits(const struct sim *s, int n, int p)
{
	int i;

	for (i = 0; i < SIM_ACC; i++)
		if (s->acc[n][i].state == ACC_WAIT && s->acc[n][i].page == p)
			return true;
	return false;
}

/*
 * Node @n's request of page @p (@pending before) was just granted, by a
 * message or by its own directory (ctx->self_node).  A prefetch's grant
 * nobody waits for (@waited false) need not be held; one a fault waits
 * for must be.
 */
static void sim_granted(struct sim *s, int n, int p, u8 pending,
			bool waited, bool own)
{
	struct sdsm_proto_node *nd = &s->node[n][p];

	if (nd->state == SDSM_PROTO_NODE_M && pending == SDSM_PROTO_REQ_READ)
		s->exclusive_grants++;
	s->unused[n][p] = waited;
	s->ahead[n][p] = !waited;
	if (own) {
		s->own_finishes++;
		sim_count_grant(s, p, n);
	}
	if (s->mutation == MUT_NO_HOLD ||
	    (own && s->mutation == MUT_OWN_FINISH_NOT_HELD)) {
		sim_tracef(s, "  (planted) node %d does not hold the grant", n);
		nd->flags &= ~SDSM_PROTO_NODE_HELD;
	}
}

/* A directory call of the home @h of page @p granted its node side. */
static void sim_home_granted(struct sim *s, int h, int p, u8 pending,
			     bool waited)
{
	const struct sdsm_proto_node *nd = &s->node[h][p];

	/*
	 * Its request is answered (a NACK to itself goes as a message), even
	 * if the next transaction then dropped a prefetch's unheld copy.
	 */
	if (h == s->home[p] && pending && !nd->pending)
		sim_granted(s, h, p, pending, waited, true);
}

/* Mutation work that must run after the protocol call returned. */
static void sim_run_hooks(struct sim *s)
{
	struct sdsm_proto_msg todo[SIM_HOOKS];
	int i, k, round;

	/* A forged call may queue more hooks; the rounds are bounded. */
	for (round = 0; round < SIM_HOOKS && s->nhook; round++) {
		k = s->nhook;
		memcpy(todo, s->hook, k * sizeof(todo[0]));
		s->nhook = 0;
		for (i = 0; i < k; i++) {
			struct sdsm_proto_msg *m = &todo[i];
			int p = (int)m->page;
			struct sdsm_proto_ctx ctx;
			struct sim_priv sp;

			if (m->type == SDSM_PROTO_MSG_GRANT_READ) {
				sim_tracef(s, "  (planted) home forgets sharer %d",
					   m->dst);
				s->dir[p].sharers &= ~((u64)1 << m->dst);
				continue;
			}
			sim_ctx(s, &sp, &ctx, s->home[p], p);
			if (m->type == SDSM_PROTO_MSG_DATA) {
				struct sim_msg fm = {
					.m = *m, .data = s->backing[p],
				};

				/* MUT_GRANT_BEFORE_DATA */
				sim_tracef(s, "  (planted) home takes its copy %llu for %d's DATA",
					   (unsigned long long)fm.data, m->src);
				sp.in = &fm;
				sdsm_proto_home_recv(&ctx, &s->dir[p], &fm.m);
				continue;
			}
			/* MUT_EARLY_GRANT: forged INV_ACK, taken right now. */
			sim_tracef(s, "  (planted) home takes INV_ACK of %d early",
				   m->src);
			sdsm_proto_home_recv(&ctx, &s->dir[p], m);
		}
	}
	s->nhook = 0;
}

/* ---- invariants ---- */

static bool sim_is_req(u8 type)
{
	return type == SDSM_PROTO_MSG_READ || type == SDSM_PROTO_MSG_WRITE;
}

static bool sim_is_reply(u8 type)
{
	return type == SDSM_PROTO_MSG_GRANT_READ ||
	       type == SDSM_PROTO_MSG_GRANT_WRITE ||
	       type == SDSM_PROTO_MSG_NACK;
}

static int sim_count(const struct sim *s, int src, int dst, int p,
		     bool (*match)(u8 type))
{
	const struct sim_chan *c = &s->chan[src][dst];
	unsigned int i;
	int k = 0;

	for (i = 0; i < c->len; i++) {
		const struct sim_msg *m = &c->q[(c->head + i) % SIM_CHAN_CAP];

		if ((int)m->m.page == p && (!match || match(m->m.type)))
			k++;
	}
	return k;
}

static bool sim_page_in_flight(const struct sim *s, int p)
{
	int a, b;

	for (a = 0; a < s->nnodes; a++)
		for (b = 0; b < s->nnodes; b++)
			if (sim_count(s, a, b, p, NULL))
				return true;
	return false;
}

static void sim_check_page(struct sim *s, int p)
{
	const struct sdsm_proto_home *d = &s->dir[p];
	int h = s->home[p];
	int writers = 0, readers = 0, n;
	bool quiet;

	for (n = 0; n < s->nnodes; n++) {
		const struct sdsm_proto_node *nd = &s->node[n][p];
		int want = nd->state == SDSM_PROTO_NODE_M ? SDSM_PROTO_MAP_RW :
			   nd->state == SDSM_PROTO_NODE_S ? SDSM_PROTO_MAP_RO :
			   SDSM_PROTO_MAP_NONE;

		if (s->dead[n])
			continue;
		if (s->map[n][p] == SDSM_PROTO_MAP_RW)
			writers++;
		else if (s->map[n][p] == SDSM_PROTO_MAP_RO)
			readers++;
		if (s->map[n][p] != want)
			return sim_fail(s, "page %d node %d: state %s but mapped %s",
					p, n, sim_state_names[nd->state % 3],
					sim_map_names[s->map[n][p] % 3]);
		if (s->map[n][p] != SDSM_PROTO_MAP_NONE && !s->lost[p] &&
		    s->local[n][p] != s->last[p])
			return sim_fail(s, "page %d node %d maps value %llu, last written %llu",
					p, n,
					(unsigned long long)s->local[n][p],
					(unsigned long long)s->last[p]);
	}
	if (writers > 1)
		return sim_fail(s, "page %d has %d writers", p, writers);
	if (writers && readers)
		return sim_fail(s, "page %d has a writer and %d readers", p,
				readers);
	if (s->dead[h])
		return;

	/* Requests: at most one per node, and one exactly while pending. */
	quiet = d->busy == SDSM_PROTO_TXN_IDLE && !d->pend_read &&
		!d->pend_write && !sim_page_in_flight(s, p);
	for (n = 0; n < s->nnodes; n++) {
		const struct sdsm_proto_node *nd = &s->node[n][p];
		u64 bit = (u64)1 << n;
		int reqs, replies, v;

		if (s->dead[n])
			continue;
		reqs = sim_count(s, n, h, p, sim_is_req) +
		       !!((d->pend_read | d->pend_write) & bit) +
		       (d->busy != SDSM_PROTO_TXN_IDLE && d->requester == n);
		replies = sim_count(s, h, n, p, sim_is_reply);
		v = s->view[n][p];
		if (v != h) {
			/* To and from the node it takes for the home. */
			reqs += sim_count(s, n, v, p, sim_is_req);
			replies += sim_count(s, v, n, p, sim_is_reply);
		}
		if (reqs > 1)
			return sim_fail(s, "page %d node %d has %d requests in flight",
					p, n, reqs);
		if (nd->deferred && (nd->pending || !nd->state))
			return sim_fail(s, "page %d node %d: %s deferred with state %s, pending %u",
					p, n, sdsm_proto_msg_name(nd->deferred),
					sim_state_names[nd->state % 3],
					nd->pending);
		if (reqs + replies != (nd->pending != SDSM_PROTO_REQ_NONE))
			return sim_fail(s, "page %d node %d pending %u but %d requests, %d replies in flight",
					p, n, nd->pending, reqs, replies);
		if (nd->pending)
			quiet = false;
	}
	if (!quiet)
		return;
	for (n = 0; n < s->nnodes; n++) {
		const struct sdsm_proto_node *nd = &s->node[n][p];
		bool own = d->state == SDSM_PROTO_HOME_MODIFIED &&
			   d->owner == n;
		bool shr = d->sharers & ((u64)1 << n);

		if (s->dead[n])
			continue;
		if ((nd->state == SDSM_PROTO_NODE_M) != own ||
		    (nd->state == SDSM_PROTO_NODE_S) != shr)
			return sim_fail(s, "page %d quiescent: node %d is %s but directory says owner %d sharers %#llx",
					p, n, sim_state_names[nd->state % 3],
					d->owner == SDSM_PROTO_NO_NODE ?
					-1 : d->owner,
					(unsigned long long)d->sharers);
	}
	if ((d->state == SDSM_PROTO_HOME_SHARED) != !!d->sharers)
		return sim_fail(s, "page %d: directory state %u, sharers %#llx",
				p, d->state, (unsigned long long)d->sharers);
	if (d->state != SDSM_PROTO_HOME_MODIFIED && !s->lost[p] &&
	    s->backing[p] != s->last[p])
		return sim_fail(s, "page %d: home copy %llu not current (%llu) and no owner",
				p, (unsigned long long)s->backing[p],
				(unsigned long long)s->last[p]);
}

void sim_check(struct sim *s)
{
	int p;

	for (p = 0; p < s->npages && !s->failed; p++)
		sim_check_page(s, p);
}

int sim_pending_accesses(const struct sim *s)
{
	int n, i, k = 0;

	for (n = 0; n < s->nnodes; n++)
		for (i = 0; i < SIM_ACC; i++)
			k += s->acc[n][i].state != ACC_FREE;
	return k;
}

int sim_pending_accesses_node(const struct sim *s, int n)
{
	int i, k = 0;

	for (i = 0; i < SIM_ACC; i++)
		k += s->acc[n][i].state != ACC_FREE;
	return k;
}

void sim_check_final(struct sim *s)
{
	int a, b, n, i;

	sim_check(s);
	for (a = 0; a < s->nnodes && !s->failed; a++)
		for (b = 0; b < s->nnodes; b++)
			if (s->chan[a][b].len)
				sim_fail(s, "%u messages left undelivered %d->%d",
					 s->chan[a][b].len, a, b);
	for (n = 0; n < s->nnodes && !s->failed; n++)
		for (i = 0; i < SIM_ACC; i++)
			if (s->acc[n][i].state != ACC_FREE)
				sim_fail(s, "access #%u node %d page %d never completed (deadlock or lost wakeup)",
					 s->acc[n][i].id, n,
					 s->acc[n][i].page);
	/* A node that left cost the others only the pages homed on it. */
	for (n = 0; s->leaver >= 0 && n < s->npages && !s->failed; n++)
		if (s->home[n] != s->leaver &&
		    s->dir[n].state == SDSM_PROTO_HOME_LOST)
			sim_fail(s, "page %d, homed at node %d, lost when node %d left",
				 n, s->home[n], s->leaver);
}

/* ---- steps ---- */

void sim_init(struct sim *s, int nnodes, int npages, const int *homes,
	      u64 seed)
{
	int n, p;

	memset(s, 0, sizeof(*s));
	s->nnodes = nnodes;
	s->npages = npages;
	s->victim = -1;
	s->leaver = -1;
	s->rng = seed;
	for (p = 0; p < npages; p++) {
		s->home[p] = homes ? homes[p] : p % nnodes;
		sdsm_proto_home_init(&s->dir[p]);
		for (n = 0; n < SIM_NODES; n++) {
			s->view[n][p] = s->home[p];
			sdsm_proto_home_init(&s->stray[n][p]);
		}
	}
}

static void sim_perform(struct sim *s, int n, int slot)
{
	struct sim_access *a = &s->acc[n][slot];
	int p = a->page;

	if (s->lost[p]) {
		sim_fail(s, "access #%u to lost page %d succeeded", a->id, p);
		return;
	}
	if (a->write) {
		if (s->map[n][p] != SDSM_PROTO_MAP_RW)
			return sim_fail(s, "write hit on node %d page %d mapped %s",
					n, p, sim_map_names[s->map[n][p] % 3]);
		s->local[n][p] = ++s->next_value;
		s->last[p] = s->local[n][p];
		s->writes++;
		sim_tracef(s, "  access #%u node %d page %d write %llu done",
			   a->id, n, p, (unsigned long long)s->last[p]);
	} else {
		if (s->map[n][p] == SDSM_PROTO_MAP_NONE)
			return sim_fail(s, "read hit on node %d page %d unmapped",
					n, p);
		if (s->local[n][p] != s->last[p])
			return sim_fail(s, "node %d page %d read %llu, last written %llu",
					n, p,
					(unsigned long long)s->local[n][p],
					(unsigned long long)s->last[p]);
		s->last_read = s->local[n][p];
		s->reads++;
		sim_tracef(s, "  access #%u node %d page %d read %llu done",
			   a->id, n, p, (unsigned long long)s->local[n][p]);
	}
	s->done[n]++;
	a->state = ACC_FREE;
}

static int sim_fault(struct sim *s, int n, int slot)
{
	struct sim_access *a = &s->acc[n][slot];
	struct sdsm_proto_ctx ctx;
	struct sim_priv sp;
	int ret, was_pending, was_prefetch;

	sim_ctx(s, &sp, &ctx, n, a->page);
	if (s->mutation == MUT_NO_COALESCE &&
	    s->node[n][a->page].pending != SDSM_PROTO_REQ_NONE) {
		sim_tracef(s, "  (planted) node %d forgets its request", n);
		s->node[n][a->page].pending = SDSM_PROTO_REQ_NONE;
	}
	was_pending = s->node[n][a->page].pending;
	was_prefetch = s->node[n][a->page].flags & SDSM_PROTO_NODE_PREFETCH;
	/* Any fault after a grant uses it (or finds it useless). */
	s->unused[n][a->page] = false;
	s->ahead[n][a->page] = false;
	if (s->own_grant && n == s->home[a->page] &&
	    s->view[n][a->page] == n) {
		struct sdsm_proto_home *d = &s->dir[a->page];
		u32 others = d->sharers & ~((u32)1 << n), hidden = 0;

		/*
		 * Planted: the home grants its own write while other nodes
		 * read: the check of the sharers is missing (everything
		 * else of the fast path holds).
		 */
		if (s->mutation == MUT_OWN_GRANT_SHARED && a->write &&
		    others && d->busy == SDSM_PROTO_TXN_IDLE &&
		    !d->pend_read && !d->pend_write &&
		    d->state == SDSM_PROTO_HOME_SHARED &&
		    s->node[n][a->page].pending == SDSM_PROTO_REQ_NONE &&
		    !s->node[n][a->page].deferred &&
		    !(s->node[n][a->page].flags & SDSM_PROTO_NODE_HELD)) {
			sim_tracef(s, "  (planted) node %d page %d: own write granted, sharers %#x ignored",
				   n, a->page, others);
			hidden = others;
			d->sharers &= ~others;
		}
		ret = sdsm_proto_fault_home(&ctx, &s->node[n][a->page], d,
					    a->write);
		/* Not granted after all: the directory as it was. */
		if (hidden && d->state != SDSM_PROTO_HOME_MODIFIED)
			d->sharers |= hidden;
	} else {
		ret = sdsm_proto_fault(&ctx, &s->node[n][a->page], a->write);
	}
	sim_run_hooks(s);
	if (ret == SDSM_PROTO_HIT) {
		sim_perform(s, n, slot);
	} else if (ret == SDSM_PROTO_WAIT) {
		if (was_pending != SDSM_PROTO_REQ_NONE)
			s->coalesced++;
		if (was_prefetch) {
			s->prefetch_joined++;
			if (s->mutation == MUT_PREFETCH_NOT_HELD) {
				sim_tracef(s, "  (planted) node %d page %d: the grant stays a prefetch's, not held",
					   n, a->page);
				s->node[n][a->page].flags |=
					SDSM_PROTO_NODE_PREFETCH;
			}
		}
		a->state = ACC_WAIT;
	} else {
		sim_complete_err(s, n, slot, ret);
	}
	return ret;
}

/* Start an access; returns its slot (its state says whether it finished). */
int sim_access(struct sim *s, int n, int p, bool write)
{
	int i;

	for (i = 0; i < SIM_ACC; i++)
		if (s->acc[n][i].state == ACC_FREE)
			break;
	if (i == SIM_ACC || s->dead[n]) {
		sim_fail(s, "no access slot on node %d", n);
		return -1;
	}
	s->steps++;
	s->acc[n][i] = (struct sim_access){
		.state = ACC_RUNNABLE, .page = p, .write = write,
		.id = ++s->next_id,
	};
	sim_tracef(s, "node %d starts access #%u: %s page %d", n,
		   s->next_id, write ? "write" : "read", p);
	sim_fault(s, n, i);
	sim_check(s);
	return i;
}

/* Node @n asks for a read copy of page @p ahead of any fault. */
bool sim_prefetch(struct sim *s, int n, int p)
{
	struct sdsm_proto_ctx ctx;
	struct sim_priv sp;
	bool sent;

	s->steps++;
	sim_ctx(s, &sp, &ctx, n, p);
	sent = sdsm_proto_prefetch(&ctx, &s->node[n][p]);
	sim_tracef(s, "node %d prefetches page %d: %s", n, p,
		   sent ? "READ sent" : "nothing to do");
	if (sent)
		s->prefetches++;
	sim_run_hooks(s);
	sim_check(s);
	return sent;
}

void sim_retry(struct sim *s, int n, int slot)
{
	struct sim_access *a = &s->acc[n][slot];

	if (a->state != ACC_RUNNABLE) {
		sim_fail(s, "retry of access in state %d", a->state);
		return;
	}
	s->steps++;
	sim_tracef(s, "node %d retries access #%u: %s page %d", n, a->id,
		   a->write ? "write" : "read", a->page);
	sim_fault(s, n, slot);
	sim_check(s);
}

int sim_retry_all(struct sim *s)
{
	int n, i, k = 0;

	for (n = 0; n < s->nnodes; n++)
		for (i = 0; i < SIM_ACC; i++)
			if (s->acc[n][i].state == ACC_RUNNABLE) {
				sim_retry(s, n, i);
				k++;
			}
	return k;
}

/* Node @n just answered a @type (INV, FETCH, FETCH_INV) for page @p. */
static void sim_answered(struct sim *s, int n, int p, u8 type)
{
	if (s->mutation == MUT_FETCH_KEEPS_RW && type == SDSM_PROTO_MSG_FETCH) {
		sim_tracef(s, "  (planted) node %d stays writable", n);
		s->map[n][p] = SDSM_PROTO_MAP_RW;
	}
}

const struct sim_msg *sim_peek(const struct sim *s, int src, int dst)
{
	const struct sim_chan *c = &s->chan[src][dst];

	return c->len ? &c->q[c->head] : NULL;
}

void sim_deliver(struct sim *s, int src, int dst)
{
	struct sim_chan *c = &s->chan[src][dst];
	struct sdsm_proto_ctx ctx;
	struct sim_priv sp;
	struct sim_msg m;
	char buf[128] = "";
	int p;

	if (!c->len) {
		sim_fail(s, "deliver from empty channel %d->%d", src, dst);
		return;
	}
	s->steps++;
	m = c->q[c->head];
	c->head = (c->head + 1) % SIM_CHAN_CAP;
	c->len--;
	s->delivered++;
	p = (int)m.m.page;
	if (!s->quiet)
		sim_fmt_msg(buf, sizeof(buf), &m);
	sim_tracef(s, "deliver %s", buf);
	sim_ctx(s, &sp, &ctx, dst, p);
	sp.in = &m;

	if (m.m.type == SDSM_PROTO_MSG_INV &&
	    s->node[dst][p].pending == SDSM_PROTO_REQ_WRITE)
		s->inv_vs_upgrade++;
	if ((m.m.type == SDSM_PROTO_MSG_READ ||
	     m.m.type == SDSM_PROTO_MSG_WRITE) &&
	    s->dir[p].busy != SDSM_PROTO_TXN_IDLE)
		s->parked++;
	if (m.m.type == SDSM_PROTO_MSG_FETCH ||
	    m.m.type == SDSM_PROTO_MSG_FETCH_INV)
		s->fetches++;
	if (src == dst)
		s->self_msgs++;

	if (sdsm_proto_msg_to_home(m.m.type)) {
		struct sdsm_proto_home *d = dst == s->home[p] ? &s->dir[p] :
					    &s->stray[dst][p];
		bool busy = d->busy != SDSM_PROTO_TXN_IDLE;
		u8 pending = s->node[dst][p].pending;
		bool waited = sim_waits(s, dst, p);
		bool migr = d->flags & SDSM_PROTO_HOME_MIGRATORY;

		/*
		 * The caller tells the protocol where the home is; the
		 * kernel before the fix served any request as the home.
		 */
		ctx.home = s->home[p];
		if (dst != s->home[p] && s->mutation == MUT_NO_HOME_CHECK) {
			sim_tracef(s, "  (planted) node %d serves page %d as if home",
				   dst, p);
			ctx.home = dst;
		}
		/* As the module: DATA equal to the home copy was not written. */
		if (m.m.type == SDSM_PROTO_MSG_DATA && m.data == s->backing[p])
			m.m.flags |= SDSM_PROTO_F_CLEAN;
		sdsm_proto_home_recv(&ctx, d, &m.m);
		if (migr && !(d->flags & SDSM_PROTO_HOME_MIGRATORY))
			s->migratory_reverts++;
		sim_home_granted(s, dst, p, pending, waited);
		if (s->mutation == MUT_DROP_PARKED && busy &&
		    sim_is_req(m.m.type) &&
		    ((d->pend_read | d->pend_write) & ((u64)1 << src))) {
			sim_tracef(s, "  (planted) home drops %d's parked request",
				   src);
			d->pend_read &= ~((u64)1 << src);
			d->pend_write &= ~((u64)1 << src);
		}
	} else if (s->mutation == MUT_ACK_KEEPS_COPY &&
		   m.m.type == SDSM_PROTO_MSG_INV) {
		struct sim_msg ack = { .m = m.m };

		sim_tracef(s, "  (planted) node %d acks INV, keeps copy", dst);
		ack.m.type = SDSM_PROTO_MSG_INV_ACK;
		ack.m.src = dst;
		ack.m.dst = src;
		sim_push(s, &ack);
	} else {
		struct sdsm_proto_node *nd = &s->node[dst][p];
		u8 deferred = nd->deferred;
		u8 state = nd->state;
		u8 pending = nd->pending;
		/*
		 * Does a fault of this node wait for this page?  (One woken
		 * earlier and not run yet waits for nothing: if it finds no
		 * copy, it sends a request of its own.)
		 */
		bool waited = sim_waits(s, dst, p);
		if (m.m.type == SDSM_PROTO_MSG_INV && s->ahead[dst][p]) {
			s->prefetch_unused++;
			s->ahead[dst][p] = false;
		}

		sdsm_proto_node_recv(&ctx, nd, &m.m);
		if (nd->deferred && !deferred) {
			s->deferred++;
			sim_tracef(s, "  node %d page %d holds its grant: %s deferred",
				   dst, p, sdsm_proto_msg_name(nd->deferred));
		} else if (m.m.type == SDSM_PROTO_MSG_FETCH &&
			   state == SDSM_PROTO_NODE_M) {
			sim_answered(s, dst, p, m.m.type);
		}
		if ((m.m.type == SDSM_PROTO_MSG_GRANT_READ ||
		     m.m.type == SDSM_PROTO_MSG_GRANT_WRITE) && pending &&
		    !nd->pending)
			sim_granted(s, dst, p, pending, waited, false);
	}
	sim_run_hooks(s);
	sim_check(s);
}

bool sim_can_release(const struct sim *s, int n, int p, bool timeout)
{
	const struct sdsm_proto_node *nd = &s->node[n][p];

	if (s->dead[n] || !nd->deferred)
		return false;
	return timeout == !!(nd->flags & SDSM_PROTO_NODE_HELD);
}

/*
 * A hold ends with its deferred message waiting: after a fault used the
 * copy (the kernel's deferred work), or, with @timeout, on the bound for
 * a grant nobody used.
 */
void sim_release(struct sim *s, int n, int p, bool timeout)
{
	struct sdsm_proto_node *nd = &s->node[n][p];
	struct sdsm_proto_ctx ctx;
	struct sim_priv sp;
	u8 type = nd->deferred;

	if (!sim_can_release(s, n, p, timeout)) {
		sim_fail(s, "release of node %d page %d: nothing to release",
			 n, p);
		return;
	}
	s->steps++;
	sim_tracef(s, "node %d page %d: hold ends (%s), answers %s", n, p,
		   timeout ? "bound" : "used", sdsm_proto_msg_name(type));
	if (timeout) {
		s->hold_timeouts++;
		s->unused[n][p] = false;
	} else {
		s->released++;
	}
	if (s->mutation == MUT_DEFERRED_DROPPED) {
		sim_tracef(s, "  (planted) deferred %s forgotten",
			   sdsm_proto_msg_name(type));
		nd->deferred = 0;
	}
	sim_ctx(s, &sp, &ctx, n, p);
	if (sdsm_proto_node_release(&ctx, nd))
		sim_answered(s, n, p, type);
	sim_run_hooks(s);
	sim_check(s);
}

/*
 * Node @x dies: messages to it are lost from now on, its accesses vanish.
 * Messages it sent before dying may still arrive, until a survivor is
 * told (sim_tell()), which is when that survivor's transport gives up on
 * the connection and calls the protocol's peer_down functions.
 */
void sim_die(struct sim *s, int x)
{
	int n, i;

	s->steps++;
	sim_tracef(s, "node %d dies", x);
	s->dead[x] = true;
	s->victim = x;
	for (n = 0; n < s->nnodes; n++) {
		s->chan[n][x].len = 0;
		s->told[n] = n == x;
	}
	s->chan[x][x].len = 0;
	for (i = 0; i < SIM_ACC; i++)
		s->acc[x][i].state = ACC_FREE;
	sim_check(s);
}

void sim_tell(struct sim *s, int n)
{
	int x = s->victim, p;

	s->steps++;
	sim_tracef(s, "node %d learns that node %d died", n, x);
	s->told[n] = true;
	s->chan[x][n].len = 0;
	for (p = 0; p < s->npages; p++) {
		struct sdsm_proto_ctx ctx;
		struct sim_priv sp;

		/* Its owner's copy is the only current one: now gone. */
		if (s->home[p] == n && s->dir[p].owner == x)
			s->lost[p] = true;
		sim_ctx(s, &sp, &ctx, n, p);
		s->in_peer_down = true;
		sdsm_proto_node_peer_down(&ctx, &s->node[n][p], x);
		s->in_peer_down = false;
		if (s->home[p] == n) {
			u8 pending = s->node[n][p].pending;
			bool waited = sim_waits(s, n, p);

			sdsm_proto_home_peer_down(&ctx, &s->dir[p], x);
			sim_home_granted(s, n, p, pending, waited);
		}
		sim_run_hooks(s);
	}
	sim_check(s);
}

void sim_kill(struct sim *s, int x)
{
	int n;

	sim_die(s, x);
	for (n = 0; n < s->nnodes; n++)
		if (!s->dead[n])
			sim_tell(s, n);
}

/* MUT_REORDER: the transport swaps the next two messages of a pair. */
static void sim_reorder(struct sim *s, int src, int dst)
{
	struct sim_chan *c = &s->chan[src][dst];
	struct sim_msg t;
	unsigned int a = c->head, b = (c->head + 1) % SIM_CHAN_CAP;

	if (c->len < 2 || sim_rand(s, 2))
		return;
	sim_tracef(s, "(planted) transport swaps %s and %s on %d->%d",
		   sdsm_proto_msg_name(c->q[a].m.type),
		   sdsm_proto_msg_name(c->q[b].m.type), src, dst);
	t = c->q[a];
	c->q[a] = c->q[b];
	c->q[b] = t;
}

/*
 * One step of node @x's leave: the home of a page @x holds writable reads
 * it back (one such read a step, as HANDBACK makes the module's homes do,
 * unless an access of the home to the page is in flight already); once
 * no home's directory names @x the owner of a page, @x goes (BYE: a death
 * with nothing of others' pages left on it).
 */
static void sim_leave_step(struct sim *s)
{
	int x = s->leaver, p, h, i;
	bool held = false;

	for (p = 0; p < s->npages; p++) {
		h = s->home[p];
		if (h == x || s->dead[h] ||
		    s->dir[p].state != SDSM_PROTO_HOME_MODIFIED ||
		    s->dir[p].owner != x)
			continue;
		held = true;
		if (s->mutation == MUT_LEAVE_NO_TAKE_BACK)
			break;
		for (i = 0; i < SIM_ACC; i++)
			if (s->acc[h][i].state != ACC_FREE &&
			    s->acc[h][i].page == p)
				break;
		if (i < SIM_ACC)
			continue;
		for (i = 0; i < SIM_ACC; i++)
			if (s->acc[h][i].state == ACC_FREE)
				break;
		if (i == SIM_ACC)
			continue;
		sim_tracef(s, "node %d reads page %d back from leaving node %d",
			   h, p, x);
		s->taken_back++;
		sim_access(s, h, p, false);
		return;
	}
	if (!held || s->mutation == MUT_LEAVE_NO_TAKE_BACK) {
		if (held)
			sim_tracef(s, "(planted) node %d leaves holding pages writable",
				   x);
		sim_die(s, x);
		return;
	}
	s->steps++;	/* the homes' reads are on their way */
}

/* A node starts an access, or (rarely, with failures) dies instead. */
static void sim_step_start(struct sim *s, int n)
{
	int busy = 0, m, i, p;

	/* Rarely, an idle node leaves (with leaves): no process maps. */
	if (s->leaves && s->leaver < 0 && sim_rand(s, 150) == 0) {
		for (i = 0; i < SIM_ACC; i++)
			busy += s->acc[n][i].state != ACC_FREE;
		if (!busy) {
			s->steps++;
			s->leaver = n;
			sim_tracef(s, "node %d starts to leave (rmmod)", n);
			sim_check(s);
			return;
		}
		busy = 0;
	}

	if (s->failures && sim_rand(s, 150) == 0) {
		for (m = 0; m < s->nnodes; m++)
			busy += s->dead[m];
		if (!busy) {
			sim_die(s, n);
			return;
		}
	}
	for (i = 0; i < SIM_ACC; i++)
		if (s->acc[n][i].state != ACC_FREE)
			busy++;
	if (busy >= 3) {
		s->steps++;	/* node idle: a no-op step */
		return;
	}
	/* Now and then, read a page ahead of any fault instead. */
	if (s->prefetch && !sim_rand(s, 4)) {
		sim_prefetch(s, n, (int)sim_rand(s, s->npages));
		return;
	}
	/* Half the time, fault again on a page already waited on. */
	p = (int)sim_rand(s, s->npages);
	for (i = 0; i < SIM_ACC; i++)
		if (s->acc[n][i].state != ACC_FREE && sim_rand(s, 2))
			p = s->acc[n][i].page;
	sim_access(s, n, p, sim_rand(s, 5) < 2);
}

enum { STEP_DELIVER, STEP_RETRY, STEP_START, STEP_TELL, STEP_RELEASE,
       STEP_TIMEOUT, STEP_LEAVE };
#define SIM_STEP(kind, x)	((kind) << 16 | (x))

/* Random step; @start allows new accesses.  False when nothing can run. */
static bool sim_step(struct sim *s, bool start)
{
	int cand[SIM_NODES * SIM_NODES + SIM_NODES * SIM_ACC + 2 * SIM_NODES +
		 2 * SIM_NODES * SIM_PAGES + 1];
	int k = 0, n, m, i, c, p, x;

	for (n = 0; n < s->nnodes; n++)
		for (m = 0; m < s->nnodes; m++)
			if (s->chan[n][m].len)
				cand[k++] = SIM_STEP(STEP_DELIVER,
						     n * SIM_NODES + m);
	for (n = 0; n < s->nnodes; n++)
		for (i = 0; i < SIM_ACC; i++)
			if (s->acc[n][i].state == ACC_RUNNABLE)
				cand[k++] = SIM_STEP(STEP_RETRY,
						     n * SIM_ACC + i);
	if (start)
		for (n = 0; n < s->nnodes; n++)
			if (!s->dead[n] && n != s->leaver)
				cand[k++] = SIM_STEP(STEP_START, n);
	if (s->leaver >= 0 && !s->dead[s->leaver])
		cand[k++] = SIM_STEP(STEP_LEAVE, 0);
	for (n = 0; s->victim >= 0 && n < s->nnodes; n++)
		if (!s->told[n])
			cand[k++] = SIM_STEP(STEP_TELL, n);
	for (n = 0; n < s->nnodes; n++)
		for (p = 0; p < s->npages; p++) {
			if (sim_can_release(s, n, p, false))
				cand[k++] = SIM_STEP(STEP_RELEASE,
						     n * SIM_PAGES + p);
			if (sim_can_release(s, n, p, true))
				cand[k++] = SIM_STEP(STEP_TIMEOUT,
						     n * SIM_PAGES + p);
		}
	if (!k)
		return false;
	c = cand[sim_rand(s, k)];
	x = c & 0xffff;
	switch (c >> 16) {
	case STEP_DELIVER:
		if (s->mutation == MUT_REORDER)
			sim_reorder(s, x / SIM_NODES, x % SIM_NODES);
		sim_deliver(s, x / SIM_NODES, x % SIM_NODES);
		return true;
	case STEP_RETRY:
		sim_retry(s, x / SIM_ACC, x % SIM_ACC);
		return true;
	case STEP_TELL:
		sim_tell(s, x);
		return true;
	case STEP_LEAVE:
		sim_leave_step(s);
		return true;
	case STEP_RELEASE:
	case STEP_TIMEOUT:
		sim_release(s, x / SIM_PAGES, x % SIM_PAGES,
			    c >> 16 == STEP_TIMEOUT);
		return true;
	}
	sim_step_start(s, x);
	return true;
}

bool sim_drain(struct sim *s, unsigned long bound)
{
	unsigned long i;

	for (i = 0; i < bound && !s->failed; i++)
		if (!sim_step(s, false))
			return true;
	if (!s->failed)
		sim_fail(s, "no quiescence after %lu drain steps (livelock)",
			 bound);
	return false;
}

void sim_random(struct sim *s, unsigned long steps)
{
	unsigned long i;

	for (i = 0; i < steps && !s->failed; i++)
		sim_step(s, true);
	if (!s->failed)
		sim_drain(s, 100 * steps + 10000);
	if (!s->failed)
		sim_check_final(s);
}
