/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm release consistency: home-based lazy release consistency (HLRC),
 * the state machine and the diff codec, free of kernel services.
 *
 * Any number of nodes may hold a page writable at once.  The first write
 * of an interval keeps a twin; at a release each dirty page's diff against
 * its twin goes to the page's home, which applies it and answers with the
 * page's new version; once every diff is acknowledged the releaser
 * publishes write notices (page, version) with the synchronization
 * operation.  At an acquire a node invalidates every copy older than the
 * notices it receives; the next access fetches the merged page from the
 * home.  Versions are counted by the home per page, so a notice is one
 * number and knowledge merges by taking the maximum.
 *
 * As in sdsm_proto.h, the caller owns all state (struct sdsm_rc_page per
 * page per node, struct sdsm_rc_home per page at its home, struct
 * sdsm_rc_local per node and region), holds the page's lock around every
 * call and performs the actions asked through struct sdsm_rc_ops: no
 * allocation, locking, sleeping or I/O happens in here.  The diff codec
 * works on buffers the caller passes.
 *
 * The module runs it for release regions (sdsm_mem.c, its glue; write
 * notices travel in sdsm_sync.c).  See Documentation/protocol.rst,
 * "Release consistency" and "Release consistency in the module".
 */
#ifndef _SDSM_RC_H
#define _SDSM_RC_H

#include <linux/types.h>
#include "sdsm_proto.h"

/* ---- diffs ---- */

/* Largest page the codec handles; a page's size is a multiple of 8. */
#define SDSM_RC_PAGE_MAX	4096

/*
 * A diff is a 4-byte header then a body:
 *   byte 0  SDSM_RC_DIFF_RUNS or SDSM_RC_DIFF_WHOLE
 *   byte 1  zero
 *   2-3     RUNS: number of runs, little-endian; WHOLE: zero
 * RUNS body: per run, in increasing offset order and not overlapping,
 *   le16 offset, le16 length (at least 1), then length bytes.
 * WHOLE body: a mask of len / 8 bytes (bit i % 8 of byte i / 8 set: byte
 *   i changed), then all len bytes of the page.  Only the masked bytes
 *   are applied: a whole page written over the home copy would undo the
 *   bytes concurrent writers changed.
 */
#define SDSM_RC_DIFF_RUNS	1
#define SDSM_RC_DIFF_WHOLE	2
#define SDSM_RC_DIFF_HDR	4
#define SDSM_RC_RUN_HDR		4

/* Bytes a diff of a page of @len bytes may take: the WHOLE form. */
#define SDSM_RC_DIFF_MAX(len)	(SDSM_RC_DIFF_HDR + (len) * 9 / 8)

int sdsm_rc_diff_make(const u8 *twin, const u8 *page, u32 len, u8 *buf,
		      u32 cap, u32 limit);
int sdsm_rc_diff_check(const u8 *diff, u32 size, u32 len);
int sdsm_rc_diff_apply(u8 *page, u32 len, const u8 *diff, u32 size);

/* ---- protocol ---- */

/**
 * enum sdsm_rc_msg_type - release-consistency messages
 * @SDSM_RC_MSG_READ: node to home, the node wants a copy of the page.
 * @SDSM_RC_MSG_DIFF: node to home, a diff (payload) to apply.
 * @SDSM_RC_MSG_GRANT_READ: home to node, the home copy (payload) and its
 *	@version.
 * @SDSM_RC_MSG_DIFF_ACK: home to node, the diff @seq is applied and the
 *	page is now at @version; with @err, it was refused and not applied.
 * @SDSM_RC_MSG_NACK: home to node, the READ failed with @err (ESTALE: the
 *	receiver is not the page's home).
 * @SDSM_RC_MSG_NR: number of message types plus one.
 */
enum sdsm_rc_msg_type {
	SDSM_RC_MSG_READ = 1,
	SDSM_RC_MSG_DIFF,
	SDSM_RC_MSG_GRANT_READ,
	SDSM_RC_MSG_DIFF_ACK,
	SDSM_RC_MSG_NACK,
	SDSM_RC_MSG_NR,
};

/* GRANT_READ: the home copy is attached (see struct sdsm_rc_ops.send). */
#define SDSM_RC_F_DATA		0x01
/* DIFF: a diff of this node's copy against its twin is attached. */
#define SDSM_RC_F_DIFF		0x02

/**
 * struct sdsm_rc_msg - one message, in memory (not the wire)
 * @region: region id of the page.
 * @page: page index within the region.
 * @seq: READ: the requester's per-page request counter; DIFF: the
 *	sender's per-page diff counter; GRANT_READ, NACK, DIFF_ACK: the
 *	counter of the message answered.
 * @version: GRANT_READ: the home version of the attached copy;
 *	DIFF_ACK: the version the diff made (0 with @err).
 * @src: sending node, filled by the receiving transport.
 * @dst: destination node.
 * @type: enum sdsm_rc_msg_type.
 * @flags: SDSM_RC_F_*.
 * @err: NACK, DIFF_ACK: 0 or a positive errno.
 */
struct sdsm_rc_msg {
	u64 region;
	u64 page;
	u32 seq;
	u32 version;
	u16 src;
	u16 dst;
	u8 type;
	u8 flags;
	u16 err;
};

/**
 * struct sdsm_rc_notice - a write notice, carried by synchronization
 * @region: region id of the page.
 * @page: page index within the region.
 * @version: every diff of the page up to this home version was released
 *	before the synchronization that carries the notice.
 *
 * Notices travel with lock grants and releases, barrier arrivals and
 * departures, condvar and futex wakes; a receiver that sees several for
 * one page keeps the largest version.
 */
struct sdsm_rc_notice {
	u64 region;
	u64 page;
	u32 version;
};

/**
 * enum sdsm_rc_node_state - a node's copy of one page
 * @SDSM_RC_NODE_I: invalid, no copy, no PTEs.
 * @SDSM_RC_NODE_RO: valid copy, mapped read-only.
 * @SDSM_RC_NODE_RW: valid copy written in this interval, a twin kept,
 *	mapped writable.
 */
enum sdsm_rc_node_state {
	SDSM_RC_NODE_I = 0,
	SDSM_RC_NODE_RO,
	SDSM_RC_NODE_RW,
};

/* Node side: a READ is in flight. */
#define SDSM_RC_PAGE_PENDING	0x01
/* Node side: the page's home is gone, every fault fails. */
#define SDSM_RC_PAGE_DEAD	0x02

/**
 * struct sdsm_rc_page - node-side state of one page (caller memory)
 * @stamp: @local->clock when @need last rose; see sdsm_rc_notice_due().
 * @ver: the copy holds every diff of the page up to this home version
 *	(meaningful unless state I).
 * @need: the largest version this node knows to be released: a copy
 *	older than it is stale after an acquire.
 * @asked: @need when the READ in flight was sent: the home had made that
 *	version already, so its GRANT_READ cannot be older.
 * @seq: READ counter.
 * @dseq: DIFF counter.
 * @unacked: DIFFs of this page sent and not acknowledged.
 * @state: enum sdsm_rc_node_state.
 * @flags: SDSM_RC_PAGE_*.
 *
 * Zero-initialized means invalid, nothing known, nothing pending.
 */
struct sdsm_rc_page {
	u64 stamp;
	u32 ver;
	u32 need;
	u32 asked;
	u32 seq;
	u32 dseq;
	u16 unacked;
	u8 state;
	u8 flags;
};

/**
 * struct sdsm_rc_local - a node's release bookkeeping for one region
 * @clock: counts the rises of any page's @need; stamps them.
 * @unacked: DIFFs sent, acknowledgments awaited, over all pages: a
 *	release publishes only once this is 0.
 * @lost: DIFFs refused by a home or lost with it since the caller last
 *	cleared this: their writes are gone, the release fails.
 *
 * Zero-initialized.
 */
struct sdsm_rc_local {
	u64 clock;
	u32 unacked;
	u32 lost;
};

/**
 * struct sdsm_rc_home - a page's state at its home
 * @ver: diffs applied to the home copy so far; the version of the copy.
 * @shared: another node was served a copy (or sent a DIFF); never
 *	cleared.  Until then the page is *exclusive* to its home: see
 *	sdsm_rc_flush_skip().
 *
 * Zero-initialized.  The home runs no transaction: it serves READs and
 * applies DIFFs in the order they arrive.
 */
struct sdsm_rc_home {
	u32 ver;
	bool shared;
};

/**
 * struct sdsm_rc_ops - actions the protocol asks its caller to perform
 * @send: queue @msg to node @msg->dst (possibly this node: delivered like
 *	a peer's message, FIFO, after the current call returns).  With
 *	SDSM_RC_F_DATA attach a snapshot of the home copy taken now; with
 *	SDSM_RC_F_DIFF attach sdsm_rc_diff_make() of this node's copy
 *	against its twin, made now (the PTEs are read-only already).
 * @install: copy the payload of GRANT_READ @msg into this node's copy.
 * @apply: home: sdsm_rc_diff_apply() the payload of DIFF @msg to the home
 *	copy; return 0, or a negative errno if the diff is malformed (the
 *	home copy must then be unchanged).
 * @twin: save a copy of this node's copy as the twin; 0 or -ENOMEM.
 * @drop_twin: free the twin.
 * @map: make this node's PTEs allow at most @how, complete (TLBs
 *	flushed) when it returns.
 * @wake: wake the local faults waiting on the page; @err 0 means fault
 *	again, a negative errno means fail them.
 * @acked: the last acknowledgment a release waits for arrived
 *	(@local->unacked is 0 now): wake the releaser.
 * @error: a message broke the protocol (@why says how); state unchanged.
 */
struct sdsm_rc_ops {
	void (*send)(void *priv, const struct sdsm_rc_msg *msg);
	void (*install)(void *priv, const struct sdsm_rc_msg *msg);
	int (*apply)(void *priv, const struct sdsm_rc_msg *msg);
	int (*twin)(void *priv);
	void (*drop_twin)(void *priv);
	void (*map)(void *priv, enum sdsm_proto_map how);
	void (*wake)(void *priv, int err);
	void (*acked)(void *priv);
	void (*error)(void *priv, const struct sdsm_rc_msg *msg,
		      const char *why);
};

/**
 * struct sdsm_rc_ctx - who is calling about which page (caller's stack)
 * @ops: the action table.
 * @priv: passed to every action.
 * @local: this node's bookkeeping for the page's region (node side).
 * @region: region id of the page, copied into messages.
 * @page: page index, copied into messages.
 * @self: this node.
 * @home: the page's home node.
 */
struct sdsm_rc_ctx {
	const struct sdsm_rc_ops *ops;
	void *priv;
	struct sdsm_rc_local *local;
	u64 region;
	u64 page;
	u16 self;
	u16 home;
};

/* Return values of sdsm_rc_fault() besides negative errnos. */
#define SDSM_RC_HIT	0	/* access allowed now */
#define SDSM_RC_WAIT	1	/* sleep until woken, then fault again */

int sdsm_rc_fault(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg,
		  bool write);
bool sdsm_rc_flush(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg);
bool sdsm_rc_acquire(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg,
		     u32 version);
int sdsm_rc_node_recv(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_page *pg,
		      const struct sdsm_rc_msg *msg);
void sdsm_rc_node_peer_down(const struct sdsm_rc_ctx *ctx,
			    struct sdsm_rc_page *pg, u16 dead);
int sdsm_rc_home_recv(const struct sdsm_rc_ctx *ctx, struct sdsm_rc_home *home,
		      const struct sdsm_rc_msg *msg);
void sdsm_rc_home_share(const struct sdsm_rc_ctx *ctx,
			struct sdsm_rc_home *home, struct sdsm_rc_page *pg,
			const struct sdsm_rc_msg *msg);

/**
 * sdsm_rc_flush_skip - may a release leave this page alone?
 * @ctx: caller, page.
 * @home: the page's home state on this node.
 *
 * True on the page's home while no other node was ever served a copy
 * (@home->shared clear): nobody holds a copy a notice would invalidate,
 * and the first READ from another node gets the home copy with every
 * write of the home in it.  The release then neither write-protects nor
 * diffs the page, which stays writable.  Only for a caller whose copy on
 * the home is the home copy itself (no twin, diffs without bytes): a
 * private copy's writes reach the home copy only by its diff.
 */
static inline bool sdsm_rc_flush_skip(const struct sdsm_rc_ctx *ctx,
				      const struct sdsm_rc_home *home)
{
	return ctx->self == ctx->home && !home->shared;
}

/**
 * sdsm_rc_release_ready - may the release publish its notices now?
 * @local: this node's bookkeeping for the region.
 *
 * A release first calls sdsm_rc_flush() on every page of the region, then
 * waits (ops->acked) until this is true, then publishes a notice for every
 * page for which sdsm_rc_notice_due() is true.
 */
static inline bool sdsm_rc_release_ready(const struct sdsm_rc_local *local)
{
	return local->unacked == 0;
}

/**
 * sdsm_rc_notice_due - does a release to a sync object carry this page?
 * @pg: the page's node-side state.
 * @since: @local->clock when this node last published to the same
 *	synchronization object (0 the first time).
 *
 * Entries that did not rise since were published then and the object
 * keeps them; publishing only the rest keeps knowledge transitive.  The
 * notice is (region, page, @pg->need).
 */
static inline bool sdsm_rc_notice_due(const struct sdsm_rc_page *pg,
				      u64 since)
{
	return pg->need && pg->stamp > since;
}

/* True for the messages a home receives, false for those a node receives. */
static inline bool sdsm_rc_msg_to_home(u8 type)
{
	return type == SDSM_RC_MSG_READ || type == SDSM_RC_MSG_DIFF;
}

const char *sdsm_rc_msg_name(u8 type);

#endif /* _SDSM_RC_H */
