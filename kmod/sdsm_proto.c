// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm page-coherence protocol: node side and home (directory) side.
 *
 * Design in brief (details and diagrams in Documentation/protocol.rst):
 *
 * - Four hops.  A node only ever talks to the page's home about a page;
 *   the home fetches the owner's data and forwards it.  Every exchange is
 *   on one node<->home FIFO, so a grant always reaches a node before any
 *   INV or FETCH the home sends it later, and an INV_ACK or DATA always
 *   reaches the home after any request the node sent before it.
 * - The home runs one transaction per page at a time.  Requests that
 *   arrive meanwhile are parked in @pend_read / @pend_write (one bit per
 *   node: a node has at most one request per page in flight) and served
 *   round-robin when the page goes idle, so none starves and nothing is
 *   NACKed just for being busy.
 * - A transaction ends when the home sends its grant; no completion
 *   message is needed because the next INV or FETCH to that node travels
 *   behind the grant on the same FIFO.
 * - Progress: a granted copy is held until a local access used it; an
 *   INV or FETCH arriving meanwhile waits for sdsm_proto_node_release(),
 *   which the caller also calls after a short bound if nobody uses it.
 *   Without this, the next transaction's INV right behind a grant can take
 *   the page back before the woken fault retries, again and again.
 * - A node may send a READ before any fault needs the page (prefetch):
 *   the home cannot tell it from a fault's READ.  Its grant is not held,
 *   unless a fault started waiting for it in the meantime.
 * - The home's own accesses use the same messages, sent to itself, with
 *   exceptions: when the home's directory finds the page MODIFIED by the
 *   home node itself, it has its own node side give the copy up at once
 *   (ops->own_fetch, sdsm_proto_node_yield()) and grants in the same
 *   call, instead of a FETCH and a DATA to itself; likewise a read copy
 *   of its own that another node's write must invalidate goes in the
 *   call (ops->own_inv, sdsm_proto_node_drop()), no INV and INV_ACK.  If
 *   that copy cannot be given up now (its grant is still on the way or
 *   held), the FETCH or INV goes as a message, behind the grant.  And
 *   the other way round: a fault on the home whose directory is idle and
 *   needs no other node (nobody else holds the page, or only readers and
 *   it reads) is granted in the fault's own call (sdsm_proto_fault_home(),
 *   ops->own_grant), with no READ or WRITE to itself and no grant back.
 *   One that needs other nodes' copies taken back starts its transaction
 *   in the fault instead of sending itself a request, and, given the
 *   node side (ctx->self_node), the directory grants it there when the
 *   last INV_ACK or the owner's DATA arrives, instead of a grant to
 *   itself.
 *
 * No allocation, no locks, no sleeping, bounded loops; the caller holds the
 * page's lock and performs the actions in struct sdsm_proto_ops.
 */
#include <linux/errno.h>
#include "sdsm_proto.h"

static inline u32 sdsm_proto_bit(u16 node)
{
	return (u32)1 << node;
}

static const char * const sdsm_proto_msg_names[SDSM_PROTO_MSG_NR] = {
	[SDSM_PROTO_MSG_READ]		= "READ",
	[SDSM_PROTO_MSG_WRITE]		= "WRITE",
	[SDSM_PROTO_MSG_INV_ACK]	= "INV_ACK",
	[SDSM_PROTO_MSG_DATA]		= "DATA",
	[SDSM_PROTO_MSG_GRANT_READ]	= "GRANT_READ",
	[SDSM_PROTO_MSG_GRANT_WRITE]	= "GRANT_WRITE",
	[SDSM_PROTO_MSG_INV]		= "INV",
	[SDSM_PROTO_MSG_FETCH]		= "FETCH",
	[SDSM_PROTO_MSG_FETCH_INV]	= "FETCH_INV",
	[SDSM_PROTO_MSG_NACK]		= "NACK",
};

const char *sdsm_proto_msg_name(u8 type)
{
	if (type >= SDSM_PROTO_MSG_NR || !sdsm_proto_msg_names[type])
		return "?";
	return sdsm_proto_msg_names[type];
}

static void sdsm_proto_send(const struct sdsm_proto_ctx *ctx, u16 dst,
			    u8 type, u32 seq, u8 flags, u16 err)
{
	struct sdsm_proto_msg msg = {
		.region = ctx->region,
		.page = ctx->page,
		.seq = seq,
		.src = ctx->self,
		.dst = dst,
		.type = type,
		.flags = flags,
		.err = err,
	};

	ctx->ops->send(ctx->priv, &msg);
}

static int sdsm_proto_bad(const struct sdsm_proto_ctx *ctx,
			  const struct sdsm_proto_msg *msg, const char *why)
{
	ctx->ops->error(ctx->priv, msg, why);
	return -EPROTO;
}

/* ---- node side ---- */

/**
 * sdsm_proto_fault - a local access to the page needs checking
 * @ctx: caller, page.
 * @node: this node's state of the page.
 * @write: the access writes.
 *
 * Return: SDSM_PROTO_HIT if the current state allows the access (the caller
 * maps the page with the permission of @node->state); SDSM_PROTO_WAIT if the
 * caller must sleep until woken and then call again (a request is in flight,
 * sent now or by an earlier fault: faults coalesce); -EHOSTDOWN if the
 * page's home is gone.
 */
int sdsm_proto_fault(const struct sdsm_proto_ctx *ctx,
		     struct sdsm_proto_node *node, bool write)
{
	if (node->flags & SDSM_PROTO_NODE_DEAD)
		return -EHOSTDOWN;
	if (node->state == SDSM_PROTO_NODE_M ||
	    (node->state == SDSM_PROTO_NODE_S && !write)) {
		/* The grant is used: the caller releases after the access. */
		node->flags &= ~SDSM_PROTO_NODE_HELD;
		return SDSM_PROTO_HIT;
	}
	/*
	 * The copy cannot serve this access (a write to a read copy): the
	 * hold has no purpose any more, answer a deferred message first.
	 */
	sdsm_proto_node_release(ctx, node);
	/*
	 * One request per page per node: a read fault waits for a pending
	 * WRITE (it will grant reading too); a write fault waits for a
	 * pending READ and then faults again, upgrading.
	 */
	if (node->pending != SDSM_PROTO_REQ_NONE) {
		/* A fault waits for it now: its grant is held for the fault. */
		node->flags &= ~SDSM_PROTO_NODE_PREFETCH;
		return SDSM_PROTO_WAIT;
	}
	node->pending = write ? SDSM_PROTO_REQ_WRITE : SDSM_PROTO_REQ_READ;
	node->seq++;
	sdsm_proto_send(ctx, ctx->home,
			write ? SDSM_PROTO_MSG_WRITE : SDSM_PROTO_MSG_READ,
			node->seq, 0, 0);
	return SDSM_PROTO_WAIT;
}

/**
 * sdsm_proto_prefetch - ask for a read copy no fault needs yet
 * @ctx: caller, page.
 * @node: this node's state of the page.
 *
 * Sends a READ if the node has no copy and no request in flight; its
 * grant installs a read copy that a later read fault maps without a
 * message.  Nobody waits for it, so it is not held (see
 * SDSM_PROTO_NODE_PREFETCH) and may be taken back before any use.
 *
 * Return: true if a READ was sent.
 */
bool sdsm_proto_prefetch(const struct sdsm_proto_ctx *ctx,
			 struct sdsm_proto_node *node)
{
	if ((node->flags & SDSM_PROTO_NODE_DEAD) ||
	    node->state != SDSM_PROTO_NODE_I ||
	    node->pending != SDSM_PROTO_REQ_NONE)
		return false;
	node->pending = SDSM_PROTO_REQ_READ;
	node->flags |= SDSM_PROTO_NODE_PREFETCH;
	node->seq++;
	sdsm_proto_send(ctx, ctx->home, SDSM_PROTO_MSG_READ, node->seq, 0, 0);
	return true;
}

/*
 * A grant for this node: from a message, or with @own from the home's
 * directory in this node itself (sdsm_proto_home_grant()), whose copy
 * ops->own_grant installs in place of the message's payload.
 */
static int sdsm_proto_node_grant(const struct sdsm_proto_ctx *ctx,
				 struct sdsm_proto_node *node,
				 const struct sdsm_proto_msg *msg, bool own)
{
	bool data = msg->flags & SDSM_PROTO_F_DATA;

	if (msg->type == SDSM_PROTO_MSG_GRANT_READ) {
		if (node->pending != SDSM_PROTO_REQ_READ)
			return sdsm_proto_bad(ctx, msg, "GRANT_READ unasked");
		if (!data)
			return sdsm_proto_bad(ctx, msg, "GRANT_READ no data");
		if (own)
			ctx->ops->own_grant(ctx->priv, false);
		else
			ctx->ops->install(ctx->priv, msg);
		node->state = SDSM_PROTO_NODE_S;
		node->pending = SDSM_PROTO_REQ_NONE;
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
	} else {
		/* A READ is answered so when nobody held the page, or the
		 * page migrates (SDSM_PROTO_HOME_MIGRATORY).
		 */
		if (node->pending != SDSM_PROTO_REQ_WRITE &&
		    (node->pending != SDSM_PROTO_REQ_READ || !data))
			return sdsm_proto_bad(ctx, msg, "GRANT_WRITE unasked");
		/* Without data only an upgrade of a valid read copy. */
		if (!data && node->state != SDSM_PROTO_NODE_S)
			return sdsm_proto_bad(ctx, msg,
					      "GRANT_WRITE without data, no copy");
		if (data && own)
			ctx->ops->own_grant(ctx->priv, true);
		else if (data)
			ctx->ops->install(ctx->priv, msg);
		node->state = SDSM_PROTO_NODE_M;
		node->pending = SDSM_PROTO_REQ_NONE;
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RW);
	}
	/*
	 * Held until a local fault uses it: see sdsm_proto_node_release().
	 * A prefetch nobody waited for has no fault to make progress.
	 */
	if (!(node->flags & SDSM_PROTO_NODE_PREFETCH))
		node->flags |= SDSM_PROTO_NODE_HELD;
	node->flags &= ~SDSM_PROTO_NODE_PREFETCH;
	ctx->ops->wake(ctx->priv, 0);
	return 0;
}

/* Give up the copy as INV / FETCH / FETCH_INV @type of txn @seq asks. */
static void sdsm_proto_node_answer(const struct sdsm_proto_ctx *ctx,
				   struct sdsm_proto_node *node, u8 type,
				   u32 seq)
{
	if (type == SDSM_PROTO_MSG_INV) {
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
		node->state = SDSM_PROTO_NODE_I;
		sdsm_proto_send(ctx, ctx->home, SDSM_PROTO_MSG_INV_ACK, seq, 0,
				0);
		return;
	}
	/* Stop writers first, so the snapshot sent is final. */
	if (type == SDSM_PROTO_MSG_FETCH) {
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
		node->state = SDSM_PROTO_NODE_S;
	} else {
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
		node->state = SDSM_PROTO_NODE_I;
	}
	sdsm_proto_send(ctx, ctx->home, SDSM_PROTO_MSG_DATA, seq,
			SDSM_PROTO_F_DATA, 0);
}

/**
 * sdsm_proto_node_release - end the hold of a granted copy
 * @ctx: caller, page.
 * @node: this node's state of the page.
 *
 * The progress rule: a copy a grant brought is held until a local access
 * has used it (sdsm_proto_fault() returned HIT) and the caller then calls
 * this, or until the caller's bound for an unused grant expires (the
 * waiter was killed or timed out) and it calls this anyway.  An INV, FETCH
 * or FETCH_INV that arrived meanwhile is answered now.
 *
 * Return: true if a deferred message was answered.
 */
bool sdsm_proto_node_release(const struct sdsm_proto_ctx *ctx,
			     struct sdsm_proto_node *node)
{
	u8 type = node->deferred;

	node->flags &= ~SDSM_PROTO_NODE_HELD;
	if (!type)
		return false;
	node->deferred = 0;
	sdsm_proto_node_answer(ctx, node, type, node->deferred_seq);
	return true;
}

/*
 * Whether this node, the page's home, may give its copy up to its own
 * directory in the directory's call: the copy is in @state, neither held
 * nor answering a deferred message.  Otherwise the grant that made it so
 * is still queued to self or held by the progress rule, and the FETCH or
 * INV must travel as a message behind it.
 */
static bool sdsm_proto_node_own_ready(const struct sdsm_proto_ctx *ctx,
				      const struct sdsm_proto_node *node,
				      u8 state)
{
	return ctx->self == ctx->home && node->state == state &&
	       !(node->flags & (SDSM_PROTO_NODE_HELD | SDSM_PROTO_NODE_DEAD)) &&
	       !node->deferred;
}

/**
 * sdsm_proto_node_yield - the home takes its own node's modified copy
 * @ctx: caller, page; this node is the page's home.
 * @node: this node's state of the page.
 * @inv: as FETCH_INV (drop the copy) rather than FETCH (keep a read copy).
 *
 * Called through ops->own_fetch by the home's directory in this node,
 * which records this node as the page's owner.  Does what answering a
 * FETCH or FETCH_INV does, the page-table change first, but sends no
 * DATA: the caller makes this node's copy the home copy.  Refuses (and
 * changes nothing) unless the copy is modified and neither held nor
 * answering a deferred message: then the grant that made this node the
 * owner has not arrived (it is queued to self) or is held by the progress
 * rule, and the home must send FETCH / FETCH_INV behind it.
 *
 * Return: true if the copy was given up.
 */
bool sdsm_proto_node_yield(const struct sdsm_proto_ctx *ctx,
			   struct sdsm_proto_node *node, bool inv)
{
	if (!sdsm_proto_node_own_ready(ctx, node, SDSM_PROTO_NODE_M))
		return false;
	if (inv) {
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
		node->state = SDSM_PROTO_NODE_I;
	} else {
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
		node->state = SDSM_PROTO_NODE_S;
	}
	return true;
}

/**
 * sdsm_proto_node_drop - the home drops its own node's read copy
 * @ctx: caller, page; this node is the page's home.
 * @node: this node's state of the page.
 *
 * Called through ops->own_inv by the home's directory in this node, which
 * records this node as a sharer, for another node's write.  Does what
 * answering an INV does, the mapping first, but sends no INV_ACK: the
 * directory takes it as acknowledged.  A pending upgrade stays pending,
 * as when an INV crosses it.  Refuses (and changes nothing) unless the
 * copy is a read copy, neither held nor answering a deferred message:
 * then the grant that made this node a sharer has not arrived (it is
 * queued to self) or is held by the progress rule, and the INV must
 * travel behind it.
 *
 * Return: true if the copy was dropped.
 */
bool sdsm_proto_node_drop(const struct sdsm_proto_ctx *ctx,
			  struct sdsm_proto_node *node)
{
	if (!sdsm_proto_node_own_ready(ctx, node, SDSM_PROTO_NODE_S))
		return false;
	ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
	node->state = SDSM_PROTO_NODE_I;
	return true;
}

/**
 * sdsm_proto_node_recv - a message from the page's home reached this node
 * @ctx: caller, page.
 * @node: this node's state of the page.
 * @msg: the message; @msg->src must be the page's home.
 *
 * Return: 0, or -EPROTO if @msg breaks the protocol (reported through
 * ops->error, state unchanged).
 */
int sdsm_proto_node_recv(const struct sdsm_proto_ctx *ctx,
			 struct sdsm_proto_node *node,
			 const struct sdsm_proto_msg *msg)
{
	if (msg->src != ctx->home)
		return sdsm_proto_bad(ctx, msg, "not from the page's home");
	if (node->flags & SDSM_PROTO_NODE_DEAD)
		return sdsm_proto_bad(ctx, msg, "home declared dead");

	switch (msg->type) {
	case SDSM_PROTO_MSG_GRANT_READ:
	case SDSM_PROTO_MSG_GRANT_WRITE:
		return sdsm_proto_node_grant(ctx, node, msg, false);
	case SDSM_PROTO_MSG_INV:
	case SDSM_PROTO_MSG_FETCH:
	case SDSM_PROTO_MSG_FETCH_INV:
		/*
		 * Only sharers get INV.  A pending WRITE (upgrade) stays
		 * pending: the home will grant it with data, since it
		 * removes us from the sharers on this INV_ACK.
		 */
		if (msg->type == SDSM_PROTO_MSG_INV &&
		    node->state != SDSM_PROTO_NODE_S)
			return sdsm_proto_bad(ctx, msg, "INV but not shared");
		if (msg->type != SDSM_PROTO_MSG_INV &&
		    node->state != SDSM_PROTO_NODE_M)
			return sdsm_proto_bad(ctx, msg, "FETCH but not owner");
		if (node->deferred)
			return sdsm_proto_bad(ctx, msg,
					      "second INV/FETCH while one is deferred");
		if (node->flags & SDSM_PROTO_NODE_HELD) {
			node->deferred = msg->type;
			node->deferred_seq = msg->seq;
			return 0;
		}
		sdsm_proto_node_answer(ctx, node, msg->type, msg->seq);
		return 0;
	case SDSM_PROTO_MSG_NACK:
		if (node->pending == SDSM_PROTO_REQ_NONE)
			return sdsm_proto_bad(ctx, msg, "NACK unasked");
		node->pending = SDSM_PROTO_REQ_NONE;
		node->flags &= ~SDSM_PROTO_NODE_PREFETCH;
		ctx->ops->wake(ctx->priv, msg->err ? -(int)msg->err : -EIO);
		return 0;
	default:
		return sdsm_proto_bad(ctx, msg, "not a node message");
	}
}

/**
 * sdsm_proto_node_peer_down - node @dead is gone for good
 * @ctx: caller, page.
 * @node: this node's state of the page.
 * @dead: the node that died.
 *
 * Only the page's home matters to a node: if it died, the copy is
 * dropped, the waiters fail and every later fault fails with -EHOSTDOWN.
 */
void sdsm_proto_node_peer_down(const struct sdsm_proto_ctx *ctx,
			       struct sdsm_proto_node *node, u16 dead)
{
	if (dead != ctx->home || (node->flags & SDSM_PROTO_NODE_DEAD))
		return;
	node->flags |= SDSM_PROTO_NODE_DEAD;
	/* A deferred message dies with the home that sent it. */
	node->flags &= ~(SDSM_PROTO_NODE_HELD | SDSM_PROTO_NODE_PREFETCH);
	node->deferred = 0;
	if (node->state != SDSM_PROTO_NODE_I)
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
	node->state = SDSM_PROTO_NODE_I;
	if (node->pending != SDSM_PROTO_REQ_NONE) {
		node->pending = SDSM_PROTO_REQ_NONE;
		ctx->ops->wake(ctx->priv, -EHOSTDOWN);
	}
}

/* ---- home side ---- */

void sdsm_proto_home_init(struct sdsm_proto_home *home)
{
	*home = (struct sdsm_proto_home) {
		.owner = SDSM_PROTO_NO_NODE,
		.requester = SDSM_PROTO_NO_NODE,
		.state = SDSM_PROTO_HOME_UNOWNED,
		.busy = SDSM_PROTO_TXN_IDLE,
	};
}

/* The transaction ended; @requester stays, for sdsm_proto_home_migrate(). */
static void sdsm_proto_home_idle(struct sdsm_proto_home *home)
{
	home->busy = SDSM_PROTO_TXN_IDLE;
	home->flags &= ~(SDSM_PROTO_HOME_WAIT_DATA |
			 SDSM_PROTO_HOME_READ_AS_WRITE);
	home->acks = 0;
}

/*
 * Grant transaction @home->txn to @req: a message, or, when @req is this
 * node and the caller passed this node's node side, on that node side at
 * once, as the message would on arrival.  Nothing of the page can be on
 * this node's loop-back ahead of it: its request was taken (or never
 * sent, sdsm_proto_fault_home()), and the home sends no INV or FETCH to
 * the requester it serves.
 */
static void sdsm_proto_home_grant(const struct sdsm_proto_ctx *ctx,
				  const struct sdsm_proto_home *home, u16 req,
				  u8 type, u8 flags)
{
	if (req == ctx->self && ctx->self_node && ctx->ops->own_grant) {
		struct sdsm_proto_msg msg = {
			.region = ctx->region,
			.page = ctx->page,
			.seq = home->txn,
			.src = ctx->self,
			.dst = req,
			.type = type,
			.flags = flags,
		};

		sdsm_proto_node_grant(ctx, ctx->self_node, &msg, true);
		return;
	}
	sdsm_proto_send(ctx, req, type, home->txn, flags, 0);
}

/*
 * All INV_ACKs or the owner's DATA are in: update the directory and grant.
 * A requester that died meanwhile (NO_NODE) gets nothing, the directory
 * still ends consistent.
 */
static void sdsm_proto_home_finish(const struct sdsm_proto_ctx *ctx,
				   struct sdsm_proto_home *home)
{
	u16 req = home->requester;
	bool alive = req != SDSM_PROTO_NO_NODE;

	if (home->busy == SDSM_PROTO_TXN_READ) {
		/* After a FETCH the old owner kept a read copy. */
		if (home->owner != SDSM_PROTO_NO_NODE) {
			home->sharers |= sdsm_proto_bit(home->owner);
			if (alive)
				home->flags |= SDSM_PROTO_HOME_FETCHED;
		}
		home->owner = SDSM_PROTO_NO_NODE;
		if (alive)
			home->sharers |= sdsm_proto_bit(req);
		home->state = home->sharers ? SDSM_PROTO_HOME_SHARED :
					      SDSM_PROTO_HOME_UNOWNED;
		if (alive)
			sdsm_proto_home_grant(ctx, home, req,
					      SDSM_PROTO_MSG_GRANT_READ,
					      SDSM_PROTO_F_DATA);
	} else {
		/* Every other copy is gone; a sharer requester upgrades. */
		bool upgrade = alive && (home->sharers & sdsm_proto_bit(req));

		home->sharers = 0;
		if (alive) {
			home->owner = req;
			home->state = SDSM_PROTO_HOME_MODIFIED;
			sdsm_proto_home_grant(ctx, home, req,
					      SDSM_PROTO_MSG_GRANT_WRITE,
					      upgrade ? 0 : SDSM_PROTO_F_DATA);
		} else {
			home->owner = SDSM_PROTO_NO_NODE;
			home->state = SDSM_PROTO_HOME_UNOWNED;
		}
	}
	sdsm_proto_home_idle(home);
}

/*
 * Migratory sharing (SDSM_PROTO_HOME_MIGRATORY): whether @req's request
 * (@write) is to be served as a WRITE.  Called as its transaction starts,
 * while @home still tells how the last one ended.
 */
static bool sdsm_proto_home_migrate(const struct sdsm_proto_ctx *ctx,
				    struct sdsm_proto_home *home, u16 req,
				    bool write)
{
	bool fetched = home->flags & SDSM_PROTO_HOME_FETCHED;
	u32 others = home->sharers & ~sdsm_proto_bit(req);

	home->flags &= ~SDSM_PROTO_HOME_FETCHED;
	if (!ctx->migratory) {
		home->flags &= ~SDSM_PROTO_HOME_MIGRATORY;
		return write;
	}
	/*
	 * The reader the last transaction gave the last writer's data now
	 * writes it, the two of them its only sharers: the page migrates.
	 * (The last writer writing again is a producer, not a migration.)
	 */
	if (write && fetched && home->requester == req &&
	    home->state == SDSM_PROTO_HOME_SHARED &&
	    (home->sharers & sdsm_proto_bit(req)) &&
	    others && !(others & (others - 1)))
		home->flags |= SDSM_PROTO_HOME_MIGRATORY;
	if (write || !(home->flags & SDSM_PROTO_HOME_MIGRATORY) ||
	    home->state != SDSM_PROTO_HOME_MODIFIED)
		return write;
	home->flags |= SDSM_PROTO_HOME_READ_AS_WRITE;
	return true;
}

static void sdsm_proto_home_start(const struct sdsm_proto_ctx *ctx,
				  struct sdsm_proto_home *home, u16 req,
				  bool write)
{
	u32 inv;
	u16 n;

	write = sdsm_proto_home_migrate(ctx, home, req, write);
	/* Nobody holds it: the reader gets it writable, one round trip. */
	if (!write && ctx->exclusive &&
	    home->state == SDSM_PROTO_HOME_UNOWNED)
		write = true;
	home->txn++;
	home->busy = write ? SDSM_PROTO_TXN_WRITE : SDSM_PROTO_TXN_READ;
	home->requester = req;

	if (home->state == SDSM_PROTO_HOME_LOST) {
		sdsm_proto_send(ctx, req, SDSM_PROTO_MSG_NACK, home->txn, 0,
				EIO);
		sdsm_proto_home_idle(home);
		return;
	}
	if (home->state == SDSM_PROTO_HOME_MODIFIED) {
		/*
		 * The owner is this node: its node side gives the copy up
		 * now (PTEs first, then its copy becomes the home copy) and
		 * the requester is granted at once, no message to self.
		 */
		if (home->owner == ctx->self && ctx->ops->own_fetch &&
		    ctx->ops->own_fetch(ctx->priv, write)) {
			if (write)
				home->owner = SDSM_PROTO_NO_NODE;
			sdsm_proto_home_finish(ctx, home);
			return;
		}
		/* 4-hop: the owner returns the page to us, we forward it. */
		home->flags |= SDSM_PROTO_HOME_WAIT_DATA;
		sdsm_proto_send(ctx, home->owner,
				write ? SDSM_PROTO_MSG_FETCH_INV :
					SDSM_PROTO_MSG_FETCH,
				home->txn, 0, 0);
		return;
	}
	inv = write ? home->sharers & ~sdsm_proto_bit(req) : 0;
	/* This node's own read copy goes in the call, if it can. */
	if ((inv & sdsm_proto_bit(ctx->self)) && ctx->ops->own_inv &&
	    ctx->ops->own_inv(ctx->priv)) {
		inv &= ~sdsm_proto_bit(ctx->self);
		home->sharers &= ~sdsm_proto_bit(ctx->self);
	}
	home->acks = inv;
	for (n = 0; n < SDSM_PROTO_MAX_NODES && inv; n++) {
		if (!(inv & sdsm_proto_bit(n)))
			continue;
		inv &= ~sdsm_proto_bit(n);
		sdsm_proto_send(ctx, n, SDSM_PROTO_MSG_INV, home->txn, 0, 0);
	}
	if (!home->acks)
		sdsm_proto_home_finish(ctx, home);
}

/* Serve parked requests, round-robin from @cursor, while the page idles. */
static void sdsm_proto_home_pump(const struct sdsm_proto_ctx *ctx,
				 struct sdsm_proto_home *home)
{
	unsigned int i;

	for (i = 0; i < 2 * SDSM_PROTO_MAX_NODES; i++) {
		u32 pend = home->pend_read | home->pend_write;
		u16 n = home->cursor % SDSM_PROTO_MAX_NODES;
		bool write;

		if (home->busy != SDSM_PROTO_TXN_IDLE || !pend)
			return;
		home->cursor = (n + 1) % SDSM_PROTO_MAX_NODES;
		if (!(pend & sdsm_proto_bit(n)))
			continue;
		write = home->pend_write & sdsm_proto_bit(n);
		home->pend_read &= ~sdsm_proto_bit(n);
		home->pend_write &= ~sdsm_proto_bit(n);
		sdsm_proto_home_start(ctx, home, n, write);
	}
}

static int sdsm_proto_home_request(const struct sdsm_proto_ctx *ctx,
				   struct sdsm_proto_home *home,
				   const struct sdsm_proto_msg *msg)
{
	u32 bit = sdsm_proto_bit(msg->src);
	bool write = msg->type == SDSM_PROTO_MSG_WRITE;

	if ((home->pend_read | home->pend_write) & bit ||
	    (home->busy != SDSM_PROTO_TXN_IDLE && home->requester == msg->src))
		return sdsm_proto_bad(ctx, msg, "second request in flight");
	if (home->owner == msg->src)
		return sdsm_proto_bad(ctx, msg, "request from the owner");
	if (!write && (home->sharers & bit))
		return sdsm_proto_bad(ctx, msg, "READ from a sharer");
	if (write)
		home->pend_write |= bit;
	else
		home->pend_read |= bit;
	sdsm_proto_home_pump(ctx, home);
	return 0;
}

/**
 * sdsm_proto_home_recv - a message for the page's directory reached this node
 * @ctx: caller, page; @ctx->home is the page's home as this node knows it.
 * @home: the page's directory entry here.
 * @msg: the message; @msg->src set by the transport.
 *
 * A READ or WRITE that reaches a node other than the page's home is
 * answered NACK(ESTALE) and serves nothing: one directory per page.
 *
 * Return: 0, or -EPROTO if @msg breaks the protocol (reported through
 * ops->error, state unchanged).
 */
int sdsm_proto_home_recv(const struct sdsm_proto_ctx *ctx,
			 struct sdsm_proto_home *home,
			 const struct sdsm_proto_msg *msg)
{
	if (msg->src >= SDSM_PROTO_MAX_NODES)
		return sdsm_proto_bad(ctx, msg, "source node out of range");

	switch (msg->type) {
	case SDSM_PROTO_MSG_READ:
	case SDSM_PROTO_MSG_WRITE:
		/*
		 * A requester that took this node for the home (a view from
		 * before a placement change) must not get a second directory
		 * for the page: refuse, it asks where the home is again.
		 */
		if (ctx->self != ctx->home) {
			sdsm_proto_send(ctx, msg->src, SDSM_PROTO_MSG_NACK,
					msg->seq, 0, ESTALE);
			return 0;
		}
		return sdsm_proto_home_request(ctx, home, msg);
	case SDSM_PROTO_MSG_INV_ACK:
		if (!(home->acks & sdsm_proto_bit(msg->src)) ||
		    msg->seq != home->txn)
			return sdsm_proto_bad(ctx, msg, "INV_ACK unasked");
		home->acks &= ~sdsm_proto_bit(msg->src);
		home->sharers &= ~sdsm_proto_bit(msg->src);
		if (!home->acks)
			sdsm_proto_home_finish(ctx, home);
		break;
	case SDSM_PROTO_MSG_DATA:
		if (!(home->flags & SDSM_PROTO_HOME_WAIT_DATA) ||
		    msg->src != home->owner || msg->seq != home->txn)
			return sdsm_proto_bad(ctx, msg, "DATA unasked");
		if (!(msg->flags & SDSM_PROTO_F_DATA))
			return sdsm_proto_bad(ctx, msg, "DATA without data");
		/* Given to a reader, back unwritten to a reader: read-shared. */
		if ((msg->flags & SDSM_PROTO_F_CLEAN) &&
		    (home->flags & SDSM_PROTO_HOME_READ_AS_WRITE))
			home->flags &= ~SDSM_PROTO_HOME_MIGRATORY;
		ctx->ops->install(ctx->priv, msg);
		home->flags &= ~SDSM_PROTO_HOME_WAIT_DATA;
		if (home->busy == SDSM_PROTO_TXN_WRITE)
			home->owner = SDSM_PROTO_NO_NODE;
		sdsm_proto_home_finish(ctx, home);
		break;
	default:
		return sdsm_proto_bad(ctx, msg, "not a home message");
	}
	sdsm_proto_home_pump(ctx, home);
	return 0;
}

/**
 * sdsm_proto_home_peer_down - node @dead is gone for good
 * @ctx: caller, page (@ctx->self == @ctx->home).
 * @home: the page's directory entry.
 * @dead: the node that died; its messages in flight are lost.
 *
 * Its read copy and parked request vanish; an INV_ACK awaited from it
 * counts as received.  If it owned the page, the only current copy is
 * gone: the page becomes LOST and every request for it fails with EIO.
 */
void sdsm_proto_home_peer_down(const struct sdsm_proto_ctx *ctx,
			       struct sdsm_proto_home *home, u16 dead)
{
	u32 bit;

	if (dead >= SDSM_PROTO_MAX_NODES)
		return;
	bit = sdsm_proto_bit(dead);
	home->pend_read &= ~bit;
	home->pend_write &= ~bit;
	home->sharers &= ~bit;
	if (home->state == SDSM_PROTO_HOME_SHARED && !home->sharers)
		home->state = SDSM_PROTO_HOME_UNOWNED;
	if (home->requester == dead)
		home->requester = SDSM_PROTO_NO_NODE;

	if (home->owner == dead) {
		u16 req = home->requester;

		home->owner = SDSM_PROTO_NO_NODE;
		home->state = SDSM_PROTO_HOME_LOST;
		if (home->busy != SDSM_PROTO_TXN_IDLE) {
			if (req != SDSM_PROTO_NO_NODE)
				sdsm_proto_send(ctx, req, SDSM_PROTO_MSG_NACK,
						home->txn, 0, EIO);
			sdsm_proto_home_idle(home);
		}
	} else if (home->acks & bit) {
		home->acks &= ~bit;
		if (!home->acks)
			sdsm_proto_home_finish(ctx, home);
	}
	sdsm_proto_home_pump(ctx, home);
}

/*
 * sdsm_proto_home_free(): whether the directory @home may serve its own
 * node's fault itself, in the fault: this node is the page's home, no
 * request of this node for the page is in flight and no grant to it is
 * held or answering late (so nothing of it is on its loop-back either:
 * an INV_ACK or DATA in flight keeps the directory busy), the directory
 * runs no transaction and parks no other node's request (those go
 * first).  sdsm_proto_home_local(): whether it may also grant it on the
 * spot, because the access needs no other node's copy taken back: a read
 * of a page nobody owns, a write of a page nobody but this node reads.
 * The directory's record of this node must agree with the node's state;
 * if not, the message path reports it.
 */
static bool sdsm_proto_home_free(const struct sdsm_proto_ctx *ctx,
				 const struct sdsm_proto_node *node,
				 const struct sdsm_proto_home *home)
{
	return ctx->self == ctx->home && ctx->ops->own_grant &&
	       ctx->self < SDSM_PROTO_MAX_NODES &&
	       !(node->flags & (SDSM_PROTO_NODE_DEAD | SDSM_PROTO_NODE_HELD)) &&
	       !node->deferred && node->pending == SDSM_PROTO_REQ_NONE &&
	       home->busy == SDSM_PROTO_TXN_IDLE &&
	       !home->pend_read && !home->pend_write;
}

static bool sdsm_proto_home_local(const struct sdsm_proto_ctx *ctx,
				  const struct sdsm_proto_node *node,
				  const struct sdsm_proto_home *home,
				  bool write)
{
	u32 self;

	if (!sdsm_proto_home_free(ctx, node, home))
		return false;
	if (home->state != SDSM_PROTO_HOME_UNOWNED &&
	    home->state != SDSM_PROTO_HOME_SHARED)
		return false;
	self = sdsm_proto_bit(ctx->self);
	if (node->state == SDSM_PROTO_NODE_I)
		return !(home->sharers & self) &&
		       (!write || !home->sharers);
	/* A read copy that is written: an upgrade, if nobody else reads. */
	return write && node->state == SDSM_PROTO_NODE_S &&
	       home->sharers == self;
}

/*
 * The home's own fault needs other nodes' copies taken back (INV, FETCH):
 * its request goes straight into the directory, as its READ or WRITE
 * would on arrival, and the transaction starts here; it ends where the
 * last INV_ACK or the owner's DATA arrives, granting this node side
 * directly (sdsm_proto_home_grant()).  No message to itself either way.
 */
static int sdsm_proto_home_own_request(const struct sdsm_proto_ctx *ctx,
				       struct sdsm_proto_node *node,
				       struct sdsm_proto_home *home,
				       bool write)
{
	struct sdsm_proto_msg req = {
		.region = ctx->region,
		.page = ctx->page,
		.src = ctx->self,
		.dst = ctx->self,
		.type = write ? SDSM_PROTO_MSG_WRITE : SDSM_PROTO_MSG_READ,
	};

	node->pending = write ? SDSM_PROTO_REQ_WRITE : SDSM_PROTO_REQ_READ;
	req.seq = ++node->seq;
	if (sdsm_proto_home_request(ctx, home, &req)) {
		/* The directory disagrees with the node (reported): fail. */
		node->pending = SDSM_PROTO_REQ_NONE;
		return -EPROTO;
	}
	/* Granted in the call (nothing to take back after all): use it. */
	if (node->pending == SDSM_PROTO_REQ_NONE)
		return sdsm_proto_fault(ctx, node, write);
	return SDSM_PROTO_WAIT;
}

/**
 * sdsm_proto_fault_home - a local access on the page's home
 * @ctx: caller, page; @ctx->self is the page's home.
 * @node: this node's state of the page.
 * @home: the page's directory entry here.
 * @write: the access writes.
 *
 * As sdsm_proto_fault(), except that when the directory can grant the
 * access at once without any other node (see sdsm_proto_home_local()),
 * it does so here: one transaction of the directory, begun and finished
 * in this call, with ops->own_grant in place of the grant's install and
 * no message either way.  The copy is not held: this access uses it.
 * When the access needs other nodes' copies taken back and the caller
 * passed @node as @ctx->self_node, the transaction starts here and is
 * granted to @node when it ends, also without a message to itself
 * (sdsm_proto_home_own_request()); the grant is held, as any other.
 *
 * Return: as sdsm_proto_fault(); also -EPROTO if the directory refuses
 * the request (ops->error said why).
 */
int sdsm_proto_fault_home(const struct sdsm_proto_ctx *ctx,
			  struct sdsm_proto_node *node,
			  struct sdsm_proto_home *home, bool write)
{
	if (node->state == SDSM_PROTO_NODE_M ||
	    (node->state == SDSM_PROTO_NODE_S && !write))
		return sdsm_proto_fault(ctx, node, write);
	if (!sdsm_proto_home_local(ctx, node, home, write)) {
		if (ctx->self_node == node &&
		    sdsm_proto_home_free(ctx, node, home))
			return sdsm_proto_home_own_request(ctx, node, home,
							   write);
		return sdsm_proto_fault(ctx, node, write);
	}
	/* Nobody holds it: the reader gets it writable, as for a READ. */
	if (!write && ctx->exclusive &&
	    home->state == SDSM_PROTO_HOME_UNOWNED)
		write = true;
	home->txn++;
	home->flags &= ~SDSM_PROTO_HOME_FETCHED;
	if (write) {
		if (node->state != SDSM_PROTO_NODE_S)
			ctx->ops->own_grant(ctx->priv, true);
		home->sharers = 0;
		home->owner = ctx->self;
		home->state = SDSM_PROTO_HOME_MODIFIED;
		node->state = SDSM_PROTO_NODE_M;
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RW);
	} else {
		ctx->ops->own_grant(ctx->priv, false);
		home->sharers |= sdsm_proto_bit(ctx->self);
		home->state = SDSM_PROTO_HOME_SHARED;
		node->state = SDSM_PROTO_NODE_S;
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
	}
	node->flags &= ~SDSM_PROTO_NODE_PREFETCH;
	return SDSM_PROTO_HIT;
}
