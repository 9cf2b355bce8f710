// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm release consistency (home-based lazy release consistency): the
 * diff codec, the node side and the home side.
 *
 * Design in brief (details in Documentation/protocol.rst, "Release
 * consistency"):
 *
 * - A node's copy of a page is invalid (I), read-only (RO) or writable
 *   with a twin (RW).  Any number of nodes may be RW at once.
 * - The home keeps the home copy and a version per page: the number of
 *   diffs applied.  It runs no transaction: READ is answered with the
 *   copy and its version, DIFF is applied and answered with the new
 *   version.  Both travel on the node's FIFO to the home, so a READ sent
 *   after a DIFF is answered with a copy that holds it.
 * - Knowledge is a version per page (@need): the largest version known to
 *   be released.  It rises with the DIFF_ACKs of this node's own diffs
 *   and with the notices acquires bring; a copy whose @ver is below it is
 *   stale once an acquire has seen the notice.
 * - Release: sdsm_rc_flush() every page (write-protect, diff, drop the
 *   twin), wait for every DIFF_ACK (sdsm_rc_release_ready()), then publish
 *   notices.  Acquire: sdsm_rc_acquire() each notice; a dirty stale page
 *   sends its diff before it is dropped, so no write of the open interval
 *   is lost.
 * - Where the home's copy is the home copy, a page no other node was
 *   served is exclusive to the home: its releases skip it
 *   (sdsm_rc_flush_skip()), and the first message from another node
 *   closes the home's interval silently, then shares it for good
 *   (sdsm_rc_home_share()).
 *
 * No allocation, no locks, no sleeping, bounded loops; the caller holds the
 * page's lock and performs the actions in struct sdsm_rc_ops.
 */
#include <linux/errno.h>
#include "sdsm_rc.h"

/* ---- diff codec ---- */

static inline u16 sdsm_rc_get16(const u8 *p)
{
	return (u16)(p[0] | p[1] << 8);
}

static inline void sdsm_rc_put16(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static bool sdsm_rc_len_ok(u32 len)
{
	return len && len <= SDSM_RC_PAGE_MAX && !(len % 8);
}

static int sdsm_rc_diff_whole(const u8 *twin, const u8 *page, u32 len,
			      u8 *buf)
{
	u8 *mask = buf + SDSM_RC_DIFF_HDR;
	u32 i;

	buf[0] = SDSM_RC_DIFF_WHOLE;
	buf[1] = 0;
	sdsm_rc_put16(buf + 2, 0);
	for (i = 0; i < len / 8; i++)
		mask[i] = 0;
	for (i = 0; i < len; i++) {
		if (page[i] != twin[i])
			mask[i / 8] |= (u8)(1 << (i % 8));
		mask[len / 8 + i] = page[i];
	}
	return SDSM_RC_DIFF_MAX(len);
}

/**
 * sdsm_rc_diff_make - encode the bytes of @page that differ from @twin
 * @twin: the page as it was at the first write of the interval.
 * @page: the page now (no writer may run meanwhile).
 * @len: page size, a multiple of 8, at most SDSM_RC_PAGE_MAX.
 * @buf: where the diff goes.
 * @cap: size of @buf, at least SDSM_RC_DIFF_MAX(@len).
 * @limit: the largest RUNS encoding wanted; a larger diff is encoded in
 *	the WHOLE form instead (0: always WHOLE).
 *
 * Each run covers changed bytes only: two runs are never joined across
 * unchanged bytes, which another node may have changed at the home.
 *
 * Return: the diff's size, or -EINVAL (bad @len), -ENOSPC (@cap too small).
 */
int sdsm_rc_diff_make(const u8 *twin, const u8 *page, u32 len, u8 *buf,
		      u32 cap, u32 limit)
{
	u32 i = 0, size = SDSM_RC_DIFF_HDR, runs = 0;

	if (!sdsm_rc_len_ok(len))
		return -EINVAL;
	if (cap < SDSM_RC_DIFF_MAX(len))
		return -ENOSPC;
	/* A RUNS form larger than the WHOLE one is never worth it. */
	if (limit > SDSM_RC_DIFF_MAX(len))
		limit = SDSM_RC_DIFF_MAX(len);
	while (i < len) {
		u32 start, n;

		if (page[i] == twin[i]) {
			i++;
			continue;
		}
		start = i;
		while (i < len && page[i] != twin[i])
			i++;
		n = i - start;
		if (size + SDSM_RC_RUN_HDR + n > limit)
			return sdsm_rc_diff_whole(twin, page, len, buf);
		sdsm_rc_put16(buf + size, start);
		sdsm_rc_put16(buf + size + 2, n);
		size += SDSM_RC_RUN_HDR;
		for (; start < i; start++)
			buf[size++] = page[start];
		runs++;
	}
	if (size > limit)
		return sdsm_rc_diff_whole(twin, page, len, buf);
	buf[0] = SDSM_RC_DIFF_RUNS;
	buf[1] = 0;
	sdsm_rc_put16(buf + 2, runs);
	return (int)size;
}

/**
 * sdsm_rc_diff_check - is @diff a well-formed diff of a @len-byte page?
 * @diff: the diff, as it came from the network.
 * @size: its size in bytes.
 * @len: page size.
 *
 * Return: 0, or -EPROTO (malformed: unknown form, a run out of the page,
 * out of order, overlapping or empty, a size that does not match), or
 * -EINVAL (bad @len).
 */
int sdsm_rc_diff_check(const u8 *diff, u32 size, u32 len)
{
	u32 runs, at, end = 0, i;

	if (!sdsm_rc_len_ok(len))
		return -EINVAL;
	if (!diff || size < SDSM_RC_DIFF_HDR || diff[1])
		return -EPROTO;
	runs = sdsm_rc_get16(diff + 2);
	if (diff[0] == SDSM_RC_DIFF_WHOLE)
		return runs || size != SDSM_RC_DIFF_MAX(len) ? -EPROTO : 0;
	if (diff[0] != SDSM_RC_DIFF_RUNS)
		return -EPROTO;
	at = SDSM_RC_DIFF_HDR;
	for (i = 0; i < runs; i++) {
		u32 off, n;

		if (size - at < SDSM_RC_RUN_HDR)
			return -EPROTO;
		off = sdsm_rc_get16(diff + at);
		n = sdsm_rc_get16(diff + at + 2);
		at += SDSM_RC_RUN_HDR;
		if (!n || off < end || off > len || n > len - off ||
		    n > size - at)
			return -EPROTO;
		end = off + n;
		at += n;
	}
	return at == size ? 0 : -EPROTO;
}

/**
 * sdsm_rc_diff_apply - merge a diff into a page
 * @page: the page (the home copy).
 * @len: its size.
 * @diff: the diff.
 * @size: the diff's size.
 *
 * The whole diff is checked first: a malformed one changes nothing.
 *
 * Return: 0, or the error of sdsm_rc_diff_check().
 */
int sdsm_rc_diff_apply(u8 *page, u32 len, const u8 *diff, u32 size)
{
	int err = sdsm_rc_diff_check(diff, size, len);
	u32 runs, at, i;

	if (err)
		return err;
	if (diff[0] == SDSM_RC_DIFF_WHOLE) {
		const u8 *mask = diff + SDSM_RC_DIFF_HDR;

		for (i = 0; i < len; i++)
			if (mask[i / 8] & (1 << (i % 8)))
				page[i] = mask[len / 8 + i];
		return 0;
	}
	runs = sdsm_rc_get16(diff + 2);
	at = SDSM_RC_DIFF_HDR;
	for (i = 0; i < runs; i++) {
		u32 off = sdsm_rc_get16(diff + at);
		u32 n = sdsm_rc_get16(diff + at + 2);

		at += SDSM_RC_RUN_HDR;
		for (; n; n--)
			page[off++] = diff[at++];
	}
	return 0;
}

/* ---- messages ---- */

static const char * const sdsm_rc_msg_names[SDSM_RC_MSG_NR] = {
	[SDSM_RC_MSG_READ]	= "READ",
	[SDSM_RC_MSG_DIFF]	= "DIFF",
	[SDSM_RC_MSG_GRANT_READ] = "GRANT_READ",
	[SDSM_RC_MSG_DIFF_ACK]	= "DIFF_ACK",
	[SDSM_RC_MSG_NACK]	= "NACK",
};

const char *sdsm_rc_msg_name(u8 type)
{
	if (type >= SDSM_RC_MSG_NR || !sdsm_rc_msg_names[type])
		return "?";
	return sdsm_rc_msg_names[type];
}

static void sdsm_rc_send(const struct sdsm_rc_ctx *ctx, u16 dst, u8 type,
			 u32 seq, u32 version, u8 flags, u16 err)
{
	struct sdsm_rc_msg msg = {
		.region = ctx->region,
		.page = ctx->page,
		.seq = seq,
		.version = version,
		.src = ctx->self,
		.dst = dst,
		.type = type,
		.flags = flags,
		.err = err,
	};

	ctx->ops->send(ctx->priv, &msg);
}

static int sdsm_rc_bad(const struct sdsm_rc_ctx *ctx,
		       const struct sdsm_rc_msg *msg, const char *why)
{
	ctx->ops->error(ctx->priv, msg, why);
	return -EPROTO;
}

/* ---- node side ---- */

static void sdsm_rc_raise(const struct sdsm_rc_ctx *ctx,
			  struct sdsm_rc_page *pg, u32 version)
{
	if (version <= pg->need)
		return;
	pg->need = version;
	pg->stamp = ++ctx->local->clock;
}

static void sdsm_rc_read(const struct sdsm_rc_ctx *ctx,
			 struct sdsm_rc_page *pg)
{
	pg->flags |= SDSM_RC_PAGE_PENDING;
	pg->asked = pg->need;
	pg->seq++;
	sdsm_rc_send(ctx, ctx->home, SDSM_RC_MSG_READ, pg->seq, 0, 0, 0);
}

/**
 * sdsm_rc_fault - a local access to the page needs checking
 * @ctx: caller, page.
 * @pg: this node's state of the page.
 * @write: the access writes.
 *
 * A write to a read-only copy starts the page's interval here: the twin
 * is made, then the page is mapped writable.  A miss sends READ (one per
 * page: later faults wait for it).
 *
 * Return: SDSM_RC_HIT, SDSM_RC_WAIT (sleep until woken, then call again),
 * -EHOSTDOWN (the page's home is gone) or the error of ops->twin.
 */
int sdsm_rc_fault(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg,
		  bool write)
{
	int err;

	if (pg->flags & SDSM_RC_PAGE_DEAD)
		return -EHOSTDOWN;
	if (pg->state == SDSM_RC_NODE_RW ||
	    (pg->state == SDSM_RC_NODE_RO && !write))
		return SDSM_RC_HIT;
	if (pg->state == SDSM_RC_NODE_RO) {
		err = ctx->ops->twin(ctx->priv);
		if (err)
			return err;
		pg->state = SDSM_RC_NODE_RW;
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RW);
		return SDSM_RC_HIT;
	}
	if (!(pg->flags & SDSM_RC_PAGE_PENDING))
		sdsm_rc_read(ctx, pg);
	return SDSM_RC_WAIT;
}

/**
 * sdsm_rc_flush - send the page's diff if it was written in this interval
 * @ctx: caller, page.
 * @pg: this node's state of the page.
 *
 * Write-protects first, so the diff is final, then sends it (ops->send
 * with SDSM_RC_F_DIFF) and drops the twin; the copy stays valid,
 * read-only.  A release calls it for every page of the region.
 *
 * Return: true if a diff was sent (its DIFF_ACK is awaited).
 */
bool sdsm_rc_flush(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg)
{
	if (pg->state != SDSM_RC_NODE_RW)
		return false;
	ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
	pg->state = SDSM_RC_NODE_RO;
	pg->dseq++;
	pg->unacked++;
	ctx->local->unacked++;
	sdsm_rc_send(ctx, ctx->home, SDSM_RC_MSG_DIFF, pg->dseq, 0,
		     SDSM_RC_F_DIFF, 0);
	ctx->ops->drop_twin(ctx->priv);
	return true;
}

/**
 * sdsm_rc_acquire - apply one write notice at an acquire
 * @ctx: caller, page.
 * @pg: this node's state of the page (kept even for a page never used:
 *	its knowledge is published again by this node's releases).
 * @version: the notice's version.
 *
 * A copy older than what this node now knows is invalidated; if it was
 * written in this interval, its diff goes to the home first (its
 * DIFF_ACK is awaited by the next release).  A READ in flight is checked
 * when its GRANT_READ arrives.
 *
 * Return: true if the copy was invalidated.
 */
bool sdsm_rc_acquire(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg,
		     u32 version)
{
	sdsm_rc_raise(ctx, pg, version);
	if (pg->state == SDSM_RC_NODE_I || pg->ver >= pg->need)
		return false;
	sdsm_rc_flush(ctx, pg);
	ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
	pg->state = SDSM_RC_NODE_I;
	return true;
}

static int sdsm_rc_node_grant(const struct sdsm_rc_ctx *ctx,
			      struct sdsm_rc_page *pg,
			      const struct sdsm_rc_msg *msg)
{
	if (!(pg->flags & SDSM_RC_PAGE_PENDING) ||
	    pg->state != SDSM_RC_NODE_I || msg->seq != pg->seq)
		return sdsm_rc_bad(ctx, msg, "GRANT_READ unasked");
	if (!(msg->flags & SDSM_RC_F_DATA))
		return sdsm_rc_bad(ctx, msg, "GRANT_READ without data");
	if (msg->version < pg->asked)
		return sdsm_rc_bad(ctx, msg, "GRANT_READ older than asked");
	/*
	 * Served before the releases an acquire since told us of (the READ
	 * was on its way): that copy is stale already, ask again.  The next
	 * answer holds them: the home made those versions before they were
	 * noticed.
	 */
	if (msg->version < pg->need) {
		sdsm_rc_read(ctx, pg);
		return 0;
	}
	ctx->ops->install(ctx->priv, msg);
	pg->ver = msg->version;
	pg->state = SDSM_RC_NODE_RO;
	pg->flags &= ~SDSM_RC_PAGE_PENDING;
	ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
	ctx->ops->wake(ctx->priv, 0);
	return 0;
}

static int sdsm_rc_node_ack(const struct sdsm_rc_ctx *ctx,
			    struct sdsm_rc_page *pg,
			    const struct sdsm_rc_msg *msg)
{
	/* Acks come in the order of the diffs: FIFO, applied in order. */
	if (!pg->unacked || msg->seq != pg->dseq - pg->unacked + 1 ||
	    !ctx->local->unacked)
		return sdsm_rc_bad(ctx, msg, "DIFF_ACK unasked");
	if (!msg->err && !msg->version)
		return sdsm_rc_bad(ctx, msg, "DIFF_ACK without version");
	pg->unacked--;
	ctx->local->unacked--;
	if (msg->err) {
		ctx->local->lost++;
	} else {
		/*
		 * The home applied our diff alone on top of the version our
		 * copy holds: the copy (twin, if written again) holds the
		 * new version.  A copy fetched since cannot be here yet: its
		 * GRANT_READ travels behind this ack.
		 */
		if (pg->state != SDSM_RC_NODE_I && msg->version == pg->ver + 1)
			pg->ver = msg->version;
		sdsm_rc_raise(ctx, pg, msg->version);
	}
	if (!ctx->local->unacked)
		ctx->ops->acked(ctx->priv);
	return 0;
}

/**
 * sdsm_rc_node_recv - a message from the page's home reached this node
 * @ctx: caller, page.
 * @pg: this node's state of the page.
 * @msg: the message; @msg->src must be the page's home.
 *
 * Return: 0, or -EPROTO if @msg breaks the protocol (reported through
 * ops->error, state unchanged).
 */
int sdsm_rc_node_recv(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg,
		      const struct sdsm_rc_msg *msg)
{
	if (msg->src != ctx->home)
		return sdsm_rc_bad(ctx, msg, "not from the page's home");
	if (pg->flags & SDSM_RC_PAGE_DEAD)
		return sdsm_rc_bad(ctx, msg, "home declared dead");

	switch (msg->type) {
	case SDSM_RC_MSG_GRANT_READ:
		return sdsm_rc_node_grant(ctx, pg, msg);
	case SDSM_RC_MSG_DIFF_ACK:
		return sdsm_rc_node_ack(ctx, pg, msg);
	case SDSM_RC_MSG_NACK:
		if (!(pg->flags & SDSM_RC_PAGE_PENDING) || msg->seq != pg->seq)
			return sdsm_rc_bad(ctx, msg, "NACK unasked");
		pg->flags &= ~SDSM_RC_PAGE_PENDING;
		ctx->ops->wake(ctx->priv, msg->err ? -(int)msg->err : -EIO);
		return 0;
	default:
		return sdsm_rc_bad(ctx, msg, "not a node message");
	}
}

/**
 * sdsm_rc_node_peer_down - node @dead is gone for good
 * @ctx: caller, page.
 * @pg: this node's state of the page.
 * @dead: the node that died.
 *
 * Only the page's home matters: if it died, the copy and the twin are
 * dropped, waiting faults and later ones fail with -EHOSTDOWN, and diffs
 * awaiting an ack count as lost (the release that waits fails).
 */
void sdsm_rc_node_peer_down(const struct sdsm_rc_ctx *ctx,
			    struct sdsm_rc_page *pg, u16 dead)
{
	if (dead != ctx->home || (pg->flags & SDSM_RC_PAGE_DEAD))
		return;
	pg->flags |= SDSM_RC_PAGE_DEAD;
	if (pg->state == SDSM_RC_NODE_RW)
		ctx->ops->drop_twin(ctx->priv);
	if (pg->state != SDSM_RC_NODE_I)
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_NONE);
	pg->state = SDSM_RC_NODE_I;
	if (pg->unacked) {
		ctx->local->lost += pg->unacked;
		ctx->local->unacked -= pg->unacked;
		pg->unacked = 0;
		if (!ctx->local->unacked)
			ctx->ops->acked(ctx->priv);
	}
	if (pg->flags & SDSM_RC_PAGE_PENDING) {
		pg->flags &= ~SDSM_RC_PAGE_PENDING;
		ctx->ops->wake(ctx->priv, -EHOSTDOWN);
	}
}

/* ---- home side ---- */

/**
 * sdsm_rc_home_recv - a READ or DIFF for the page reached this node
 * @ctx: caller, page; @ctx->home is the page's home as this node knows it.
 * @home: the page's state here.
 * @msg: the message; @msg->src set by the transport.
 *
 * READ is answered GRANT_READ with the home copy and its version.  DIFF
 * is applied (ops->apply) and answered DIFF_ACK with the new version; a
 * malformed diff is answered DIFF_ACK with EPROTO and changes nothing.  A
 * node that is not the home refuses both (NACK or DIFF_ACK with ESTALE).
 *
 * Return: 0, or -EPROTO if @msg is refused (reported through ops->error).
 */
int sdsm_rc_home_recv(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_home *home,
		      const struct sdsm_rc_msg *msg)
{
	int err;

	if (msg->src >= SDSM_PROTO_MAX_NODES)
		return sdsm_rc_bad(ctx, msg, "source node out of range");

	switch (msg->type) {
	case SDSM_RC_MSG_READ:
		if (ctx->self != ctx->home) {
			sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_NACK, msg->seq,
				     0, 0, ESTALE);
			return 0;
		}
		sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_GRANT_READ, msg->seq,
			     home->ver, SDSM_RC_F_DATA, 0);
		return 0;
	case SDSM_RC_MSG_DIFF:
		if (ctx->self != ctx->home) {
			sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_DIFF_ACK,
				     msg->seq, 0, 0, ESTALE);
			return 0;
		}
		if (!(msg->flags & SDSM_RC_F_DIFF)) {
			sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_DIFF_ACK,
				     msg->seq, 0, 0, EPROTO);
			return sdsm_rc_bad(ctx, msg, "DIFF without a diff");
		}
		if (home->ver == 0xffffffffU) {
			sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_DIFF_ACK,
				     msg->seq, 0, 0, EOVERFLOW);
			return sdsm_rc_bad(ctx, msg, "page version exhausted");
		}
		err = ctx->ops->apply(ctx->priv, msg);
		if (err) {
			sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_DIFF_ACK,
				     msg->seq, 0, 0, EPROTO);
			return sdsm_rc_bad(ctx, msg, "malformed diff");
		}
		home->ver++;
		sdsm_rc_send(ctx, msg->src, SDSM_RC_MSG_DIFF_ACK, msg->seq,
			     home->ver, 0, 0);
		return 0;
	default:
		return sdsm_rc_bad(ctx, msg, "not a home message");
	}
}

/**
 * sdsm_rc_home_share - a message from another node ends the exclusive page
 * @ctx: caller, page; @ctx->home is the page's home as this node knows it.
 * @home: the page's state here.
 * @pg: this node's own node-side state of the page if its copy is the
 *	home copy itself, else NULL.
 * @msg: a message to the home (sdsm_rc_msg_to_home()), before
 *	sdsm_rc_home_recv() handles it.
 *
 * The first READ (or DIFF) from another node to the page's home marks the
 * page shared.  If the home's own copy is writable, the home's interval
 * is closed first, silently: map RO, state RO, no DIFF, no version.  The
 * writes of that interval are in the home copy the READ is served;
 * the home's next write faults and opens a new interval, which its next
 * release flushes as before (sdsm_rc_flush_skip() is false from now on).
 */
void sdsm_rc_home_share(const struct sdsm_rc_ctx *ctx,
			struct sdsm_rc_home *home, struct sdsm_rc_page *pg,
			const struct sdsm_rc_msg *msg)
{
	if (home->shared || msg->src == ctx->self || ctx->self != ctx->home ||
	    !sdsm_rc_msg_to_home(msg->type))
		return;
	if (pg && pg->state == SDSM_RC_NODE_RW) {
		ctx->ops->map(ctx->priv, SDSM_PROTO_MAP_RO);
		pg->state = SDSM_RC_NODE_RO;
	}
	home->shared = true;
}
