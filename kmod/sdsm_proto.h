/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm page-coherence protocol: the state machine, free of kernel services.
 *
 * Home-based directory, write-invalidate, single writer / multiple readers
 * (MSI), four hops: every message of a page goes between a node and the
 * page's home, never node to node, so the per-peer FIFO order of RC is all
 * the ordering the protocol needs.  The home serializes transactions per
 * page and parks requests that arrive while a page is busy in two bitmaps
 * (one request per node and page can exist, thanks to fault coalescing).
 * Nodes are numbered 0..SDSM_PROTO_MAX_NODES-1; bitmaps of nodes are u32
 * and node numbers in the directory u8, to keep the directory entry small
 * (Documentation/performance.rst, "Memory").
 *
 * The caller owns all state (struct sdsm_proto_node per page per node,
 * struct sdsm_proto_home per page at its home), holds the page's lock
 * around every call, and performs the actions the protocol asks for
 * through struct sdsm_proto_ops: no allocation, locking, sleeping or I/O
 * happens in here, and page data never moves in here either.
 *
 * The same source is compiled into the module and into the host model
 * checker in tests/host/.  See Documentation/protocol.rst.
 */
#ifndef _SDSM_PROTO_H
#define _SDSM_PROTO_H

#include <linux/types.h>

#define SDSM_PROTO_MAX_NODES	32
#define SDSM_PROTO_NO_NODE	0xff

/**
 * enum sdsm_proto_msg_type - protocol messages
 * @SDSM_PROTO_MSG_READ: node to home, the node wants a read copy.
 * @SDSM_PROTO_MSG_WRITE: node to home, the node wants the page writable.
 * @SDSM_PROTO_MSG_INV_ACK: node to home, read copy dropped, PTEs gone.
 * @SDSM_PROTO_MSG_DATA: node to home, the owner's page (payload) after a
 *	FETCH or FETCH_INV.
 * @SDSM_PROTO_MSG_GRANT_READ: home to node, a read copy (payload).
 * @SDSM_PROTO_MSG_GRANT_WRITE: home to node, write permission; carries the
 *	page unless the node kept a valid read copy (upgrade).
 * @SDSM_PROTO_MSG_INV: home to sharer, drop the read copy, then INV_ACK.
 * @SDSM_PROTO_MSG_FETCH: home to owner, write-protect, send DATA, keep a
 *	read copy.
 * @SDSM_PROTO_MSG_FETCH_INV: home to owner, unmap, send DATA, drop the copy.
 * @SDSM_PROTO_MSG_NACK: home to node, the request failed with @err (or
 *	a node that is not the page's home refused it, ESTALE).
 * @SDSM_PROTO_MSG_NR: number of message types plus one.
 */
enum sdsm_proto_msg_type {
	SDSM_PROTO_MSG_READ = 1,
	SDSM_PROTO_MSG_WRITE,
	SDSM_PROTO_MSG_INV_ACK,
	SDSM_PROTO_MSG_DATA,
	SDSM_PROTO_MSG_GRANT_READ,
	SDSM_PROTO_MSG_GRANT_WRITE,
	SDSM_PROTO_MSG_INV,
	SDSM_PROTO_MSG_FETCH,
	SDSM_PROTO_MSG_FETCH_INV,
	SDSM_PROTO_MSG_NACK,
	SDSM_PROTO_MSG_NR,
};

/* The message carries a page payload: see struct sdsm_proto_ops.send. */
#define SDSM_PROTO_F_DATA	0x01
/*
 * DATA only, set by the home's receive path, never taken from the wire:
 * the payload equals the home copy, so the owner wrote nothing since its
 * grant (see SDSM_PROTO_HOME_MIGRATORY).  Without it, the owner wrote, or
 * the caller did not look.
 */
#define SDSM_PROTO_F_CLEAN	0x02
/* The flags a message carries on the wire; the others are local. */
#define SDSM_PROTO_F_WIRE	SDSM_PROTO_F_DATA

/**
 * struct sdsm_proto_msg - one protocol message, in memory (not the wire)
 * @region: region id of the page.
 * @page: page index within the region.
 * @seq: requests: the requester's per-page request counter (for traces);
 *	home messages: the home's transaction id for the page; INV_ACK and
 *	DATA: the transaction id of the INV / FETCH they answer.
 * @src: sending node; the receiver's transport fills it from the
 *	connection the message came on, never from the wire.
 * @dst: destination node.
 * @type: enum sdsm_proto_msg_type.
 * @flags: SDSM_PROTO_F_*.
 * @err: NACK only, a positive errno (EIO: page data lost; ESTALE: the
 *	receiver is not the page's home, ask where it is again).
 */
struct sdsm_proto_msg {
	u64 region;
	u64 page;
	u32 seq;
	u16 src;
	u16 dst;
	u8 type;
	u8 flags;
	u16 err;
};

/**
 * enum sdsm_proto_node_state - a node's copy of one page
 * @SDSM_PROTO_NODE_I: invalid, no copy, no PTEs.
 * @SDSM_PROTO_NODE_S: shared, valid read-only copy.
 * @SDSM_PROTO_NODE_M: modified, the only copy that is current, writable.
 */
enum sdsm_proto_node_state {
	SDSM_PROTO_NODE_I = 0,
	SDSM_PROTO_NODE_S,
	SDSM_PROTO_NODE_M,
};

/**
 * enum sdsm_proto_req - the request a node has in flight for a page
 * @SDSM_PROTO_REQ_NONE: none.
 * @SDSM_PROTO_REQ_READ: READ sent, waiting for GRANT_READ or NACK.
 * @SDSM_PROTO_REQ_WRITE: WRITE sent, waiting for GRANT_WRITE or NACK.
 */
enum sdsm_proto_req {
	SDSM_PROTO_REQ_NONE = 0,
	SDSM_PROTO_REQ_READ,
	SDSM_PROTO_REQ_WRITE,
};

/* Node side: the page's home is gone, every fault fails. */
#define SDSM_PROTO_NODE_DEAD	0x01
/*
 * Node side: a grant arrived and no local fault has used it yet.  An INV,
 * FETCH or FETCH_INV arriving meanwhile is deferred (see @deferred) until
 * sdsm_proto_node_release(): the progress rule, Documentation/protocol.rst.
 */
#define SDSM_PROTO_NODE_HELD	0x02
/*
 * Node side: the pending READ was sent ahead of any fault
 * (sdsm_proto_prefetch()) and no fault waits for it yet: its grant is not
 * held, since no access is there to use it.  A fault that finds the READ
 * pending clears it, and the grant is held for that fault as usual.
 */
#define SDSM_PROTO_NODE_PREFETCH	0x04

/**
 * struct sdsm_proto_node - node-side state of one page (caller memory)
 * @seq: request counter, copied into each request sent (traces only).
 * @deferred_seq: the home's transaction id of the @deferred message.
 * @state: enum sdsm_proto_node_state.
 * @pending: enum sdsm_proto_req; not NONE means later faults wait.
 * @flags: SDSM_PROTO_NODE_*.
 * @deferred: type of the INV, FETCH or FETCH_INV that arrived while the
 *	copy was held, 0 if none.  At most one: the home runs one
 *	transaction per page and waits for this node's answer to it.
 *
 * Zero-initialized means invalid, nothing pending.
 */
struct sdsm_proto_node {
	u16 seq;
	u16 deferred_seq;
	u8 state;
	u8 pending;
	u8 flags;
	u8 deferred;
};

/**
 * enum sdsm_proto_home_state - directory state of one page
 * @SDSM_PROTO_HOME_UNOWNED: no node has a copy; the home copy is current.
 * @SDSM_PROTO_HOME_SHARED: @sharers hold read copies equal to the home copy.
 * @SDSM_PROTO_HOME_MODIFIED: @owner holds the only current copy.
 * @SDSM_PROTO_HOME_LOST: the owner died holding the only current copy;
 *	every request is NACKed with EIO.
 */
enum sdsm_proto_home_state {
	SDSM_PROTO_HOME_UNOWNED = 0,
	SDSM_PROTO_HOME_SHARED,
	SDSM_PROTO_HOME_MODIFIED,
	SDSM_PROTO_HOME_LOST,
};

/**
 * enum sdsm_proto_txn - the transaction a page's home is running
 * @SDSM_PROTO_TXN_IDLE: none; a request is served at once.
 * @SDSM_PROTO_TXN_READ: serving @requester's READ.
 * @SDSM_PROTO_TXN_WRITE: serving @requester's WRITE.
 */
enum sdsm_proto_txn {
	SDSM_PROTO_TXN_IDLE = 0,
	SDSM_PROTO_TXN_READ,
	SDSM_PROTO_TXN_WRITE,
};

/**
 * struct sdsm_proto_home - directory entry of one page at its home
 * @sharers: nodes holding a read copy (state SHARED).
 * @acks: sharers whose INV_ACK the running transaction still awaits.
 * @pend_read: nodes whose READ waits for the running transaction to end.
 * @pend_write: nodes whose WRITE waits likewise.
 * @txn: id of the running (or last) transaction; wraps at 2^16, long after
 *	the last answer to an old one has arrived (one transaction at a time
 *	per page, each waits for its answers, links are FIFO).
 * @owner: the writer in state MODIFIED, else SDSM_PROTO_NO_NODE.
 * @requester: the node the running transaction serves, NO_NODE if it
 *	died; while idle, the node the last one served (NO_NODE: none, or it
 *	died), which migratory-sharing detection needs.
 * @state: enum sdsm_proto_home_state.
 * @busy: enum sdsm_proto_txn.
 * @flags: SDSM_PROTO_HOME_*.
 * @cursor: where the round-robin scan of the pending bitmaps resumes.
 *
 * Initialize with sdsm_proto_home_init().
 */
struct sdsm_proto_home {
	u32 sharers;
	u32 acks;
	u32 pend_read;
	u32 pend_write;
	u16 txn;
	u8 owner;
	u8 requester;
	u8 state;
	u8 busy;
	u8 flags;
	u8 cursor;
};

/* The running transaction awaits DATA from @owner. */
#define SDSM_PROTO_HOME_WAIT_DATA	0x01
/*
 * The last transaction was @requester's READ, served with the data of the
 * page's owner then (FETCH), which kept a read copy: the two sharers are
 * the reader and the last writer.  Cleared when the next one starts.
 */
#define SDSM_PROTO_HOME_FETCHED		0x02
/*
 * Migratory sharing (struct sdsm_proto_ctx.migratory): the page moves
 * from node to node, each reading then writing it.  A READ of it in state
 * MODIFIED is served as a WRITE: the owner's copy is taken back whole
 * (FETCH_INV) and the reader granted it writable, one transaction where
 * a read and an upgrade took two.
 */
#define SDSM_PROTO_HOME_MIGRATORY	0x04
/* The running WRITE transaction serves a READ of a migratory page. */
#define SDSM_PROTO_HOME_READ_AS_WRITE	0x08

/**
 * enum sdsm_proto_map - what a node's PTEs for a page may allow
 * @SDSM_PROTO_MAP_NONE: no PTE at all (zap them and flush the TLBs).
 * @SDSM_PROTO_MAP_RO: read-only PTEs (write-protect existing ones).
 * @SDSM_PROTO_MAP_RW: writable PTEs.
 */
enum sdsm_proto_map {
	SDSM_PROTO_MAP_NONE = 0,
	SDSM_PROTO_MAP_RO,
	SDSM_PROTO_MAP_RW,
};

/**
 * struct sdsm_proto_ops - actions the protocol asks its caller to perform
 * @send: queue @msg to node @msg->dst (which may be this node: deliver it
 *	like any peer's message, FIFO, after the current call returns).  If
 *	@msg->flags has SDSM_PROTO_F_DATA, attach a snapshot of the page taken
 *	now: the home copy for messages from the home (GRANT_*), this node's
 *	copy for DATA.
 * @install: copy the payload that came with @msg into this node's copy
 *	(GRANT_*) or into the home copy (DATA).
 * @map: make this node's PTEs for the page allow at most @how; the change
 *	must be complete (TLBs flushed) when @map returns, as the protocol
 *	may acknowledge right after.
 * @wake: wake the local faults waiting on the page; @err 0 means retry the
 *	fault, a negative errno means fail them with it (SIGBUS).
 * @error: a message broke the protocol (@why says how); the protocol left
 *	its state as it was, the caller logs it and counts it.
 * @own_fetch: home only: the page's owner is this node itself.  Give its
 *	node side's copy up now, as a FETCH (@inv false) or FETCH_INV (@inv
 *	true) from the home would, without a message: call
 *	sdsm_proto_node_yield() on this node's state of the page; if that
 *	returns true (PTEs write-protected or gone, state S or I), make this
 *	node's copy the home copy (the data the grant that follows carries)
 *	and return true.  Return false if it returned false: the protocol
 *	then sends FETCH / FETCH_INV to itself, the 4-hop path.  May be NULL
 *	(always the 4-hop path).
 * @own_inv: home only: a write of another node needs this node's read
 *	copy gone.  Drop it now, as an INV from the home would, without a
 *	message either way: call sdsm_proto_node_drop() on this node's state
 *	of the page and return what it returned.  False: the protocol sends
 *	the INV to itself and waits for its INV_ACK.  May be NULL (always
 *	the message).
 * @own_grant: home only: its directory grants this node's own fault
 *	without a message: in the fault's call (sdsm_proto_fault_home()), or
 *	when the transaction the fault started ends, in the handler of the
 *	last INV_ACK or of the owner's DATA (ctx->self_node).  Make this
 *	node's copy hold the home copy's data, as installing a grant's
 *	payload would (the same page may serve both); @write: the copy is
 *	about to become the only current one, writable.  Not called for an
 *	upgrade of a valid read copy.  May be NULL (the home's own faults
 *	then always send READ / WRITE to itself).
 */
struct sdsm_proto_ops {
	void (*send)(void *priv, const struct sdsm_proto_msg *msg);
	void (*install)(void *priv, const struct sdsm_proto_msg *msg);
	void (*map)(void *priv, enum sdsm_proto_map how);
	void (*wake)(void *priv, int err);
	void (*error)(void *priv, const struct sdsm_proto_msg *msg,
		      const char *why);
	bool (*own_fetch)(void *priv, bool inv);
	bool (*own_inv)(void *priv);
	void (*own_grant)(void *priv, bool write);
};

/**
 * struct sdsm_proto_ctx - who is calling about which page (caller's stack)
 * @ops: the action table.
 * @priv: passed to every action.
 * @region: region id of the page, copied into messages.
 * @page: page index, copied into messages.
 * @self: this node.
 * @home: the page's home node.
 * @self_node: home side, optional: this node's node side of the page.
 *	With it (and ops->own_grant), a transaction this node requested
 *	ends by granting that node side directly (ops->own_grant, as the
 *	grant's install) instead of a grant message to itself; without it,
 *	the grant goes as a message.  The caller holds the page's lock for
 *	both sides.
 * @exclusive: home side: a READ of a page no node holds (UNOWNED) is
 *	granted writable (GRANT_WRITE), as MESI's exclusive state does, so
 *	that the reader's first write needs no upgrade; the reader's copy is
 *	then the modified one, and the next reader fetches it from there.
 * @migratory: home side: detect migratory sharing and serve it so (see
 *	SDSM_PROTO_HOME_MIGRATORY).  A page becomes migratory when a
 *	sharer asks to write it whose read copy the last transaction
 *	fetched from the writer before it, the two being its only sharers
 *	(Cox and Fowler, ISCA 1993); it stops being so when a node that
 *	got it so for a READ gives it back unwritten to serve another READ
 *	(DATA with SDSM_PROTO_F_CLEAN): then it is being read, not passed
 *	from writer to writer.
 */
struct sdsm_proto_ctx {
	const struct sdsm_proto_ops *ops;
	void *priv;
	u64 region;
	u64 page;
	u16 self;
	u16 home;
	struct sdsm_proto_node *self_node;
	bool exclusive;
	bool migratory;
};

/* Return values of sdsm_proto_fault() besides negative errnos. */
#define SDSM_PROTO_HIT	0	/* access allowed now */
#define SDSM_PROTO_WAIT	1	/* sleep until woken, then fault again */

void sdsm_proto_home_init(struct sdsm_proto_home *home);

int sdsm_proto_fault(const struct sdsm_proto_ctx *ctx,
		     struct sdsm_proto_node *node, bool write);
int sdsm_proto_fault_home(const struct sdsm_proto_ctx *ctx,
			  struct sdsm_proto_node *node,
			  struct sdsm_proto_home *home, bool write);
bool sdsm_proto_prefetch(const struct sdsm_proto_ctx *ctx,
			 struct sdsm_proto_node *node);
int sdsm_proto_node_recv(const struct sdsm_proto_ctx *ctx,
			 struct sdsm_proto_node *node,
			 const struct sdsm_proto_msg *msg);
bool sdsm_proto_node_release(const struct sdsm_proto_ctx *ctx,
			     struct sdsm_proto_node *node);
bool sdsm_proto_node_drop(const struct sdsm_proto_ctx *ctx,
			  struct sdsm_proto_node *node);
bool sdsm_proto_node_yield(const struct sdsm_proto_ctx *ctx,
			   struct sdsm_proto_node *node, bool inv);
int sdsm_proto_home_recv(const struct sdsm_proto_ctx *ctx,
			 struct sdsm_proto_home *home,
			 const struct sdsm_proto_msg *msg);
void sdsm_proto_node_peer_down(const struct sdsm_proto_ctx *ctx,
			       struct sdsm_proto_node *node, u16 dead);
void sdsm_proto_home_peer_down(const struct sdsm_proto_ctx *ctx,
			       struct sdsm_proto_home *home, u16 dead);

/* True for the messages a home receives, false for those a node receives. */
static inline bool sdsm_proto_msg_to_home(u8 type)
{
	return type >= SDSM_PROTO_MSG_READ && type <= SDSM_PROTO_MSG_DATA;
}

const char *sdsm_proto_msg_name(u8 type);

#endif /* _SDSM_PROTO_H */
