/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm wire format: everything that crosses between two nodes.
 *
 * All multi-byte fields are big endian.  These structs are append-only: add
 * new fields at the end, never reorder or resize existing ones, and bump
 * SDSM_WIRE_VERSION when a peer running the old layout cannot understand the
 * new one.  Sizes are pinned by static_assert below.
 *
 * A message is struct sdsm_wire_hdr and a small payload (at most
 * SDSM_MSG_MAX_PAYLOAD bytes) in a header slot of SDSM_HDR_SLOT_SIZE bytes,
 * and may carry a page.  One RC SEND carries a train of 1 to SDSM_TRAIN_MAX
 * messages: their header slots in order, then the pages of those that carry
 * one, in the same order.  Every posted receive has a scatter element of
 * SDSM_TRAIN_MAX header slots followed by SDSM_TRAIN_MAX page-sized ones, so
 * a send with pages fills all SDSM_TRAIN_MAX header slots (the unused ones
 * zero, type 0) before its first page; a send without pages is its header
 * slots alone, the last one cut to its message's length.  No remote keys
 * are ever exchanged.
 */
#ifndef SDSM_WIRE_H
#define SDSM_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define SDSM_WIRE_MAGIC		0x5344534dU	/* "SDSM" */
/*
 * 2: authenticated connect (AUTH); 3: region owner and mode; 4: receive
 * credits in the header, CREDIT; 5: sessions (the header's seq and ack,
 * struct sdsm_wire_hello, BYE); 6: REGION_QUERY; 7: region consistency,
 * RC, RC_NOTICES; 8: the object a grant's RC_NOTICES come from; 9: a
 * region's manager, the next pages' homes in HOME_REP; 10: the serial
 * arrival of a barrier generation (SDSM_WIRE_SYNC_F_SERIAL); 11: HANDBACK;
 * 12: trains (several messages a send)
 */
#define SDSM_WIRE_VERSION	12

/* Size of a message's header slot: header + payload. */
#define SDSM_HDR_SLOT_SIZE	256
/* Messages one send carries at most. */
#define SDSM_TRAIN_MAX		8
/* The header slots of a train, the first scatter element of a receive. */
#define SDSM_TRAIN_HDRS		(SDSM_TRAIN_MAX * SDSM_HDR_SLOT_SIZE)

/**
 * enum sdsm_msg_type - every message type, in one place.
 * @SDSM_MSG_PING: heartbeat request; with a page: handshake pattern page
 * @SDSM_MSG_PONG: heartbeat reply, echoes the PING timestamp
 * @SDSM_MSG_AUTH: active to passive side, the first message on a new
 *	connection: struct sdsm_wire_auth; the passive side accepts nothing
 *	else until it verifies
 * @SDSM_MSG_CREDIT: no payload; returns receive credits (the header's
 *	credits) when no other message goes back soon enough
 * @SDSM_MSG_BYE: no payload; the sender's module is unloading: the
 *	session ends now, without waiting for peer_timeout_ms of silence
 * @SDSM_MSG_LINK_LAST: the types above and this one belong to the
 *	connection and are never numbered; the types after it belong to the
 *	upper layers and their session (sdsm_session.h)
 * @SDSM_MSG_COHERENCE_FIRST: first type reserved for coherence (issue 3)
 * @SDSM_MSG_COH: a page-coherence protocol message, struct sdsm_wire_coh
 * @SDSM_MSG_HOME_REQ: ask a page's manager for its home, sdsm_wire_home
 * @SDSM_MSG_HOME_REP: the manager's answer, struct sdsm_wire_home
 * @SDSM_MSG_REGION_CLAIM: reserve a region name at its registrar,
 *	struct sdsm_wire_region; answered by REPLY
 * @SDSM_MSG_REGION_ADD: learn a region, struct sdsm_wire_region; answered
 *	by REPLY unless the cookie is 0
 * @SDSM_MSG_REGION_PREPARE: destroy, phase 1: refuse new mappings and
 *	answer EBUSY if mapped; struct sdsm_wire_region, answered by REPLY
 * @SDSM_MSG_REGION_COMMIT: destroy, phase 2: forget the region
 * @SDSM_MSG_REGION_ABORT: destroy failed: allow mappings again
 * @SDSM_MSG_POLICY: set the policy of a page range, struct
 *	sdsm_wire_policy_set; answered by REPLY
 * @SDSM_MSG_REPLY: answer to a request carrying a cookie, sdsm_wire_reply
 * @SDSM_MSG_REGION_QUERY: what became of a destroy whose destroyer went
 *	down: struct sdsm_wire_region (id and cookie), answered by REPLY:
 *	ENOENT (the region is gone here), EINPROGRESS (prepared here by a
 *	destroyer still up here) or 0 (here anyway)
 * @SDSM_MSG_HANDBACK: the sender's module is about to unload: take back
 *	every page homed here that it holds writable (a read here of each),
 *	then answer REPLY; struct sdsm_wire_region, only @cookie used
 * @SDSM_MSG_RC: a release-consistency message (Documentation/protocol.rst,
 *	"Release consistency"), struct sdsm_wire_rc
 * @SDSM_MSG_COHERENCE_LAST: last type reserved for coherence
 * @SDSM_MSG_MAX: number of types; the handler table has this many slots
 *
 * Type 0 is never valid.  Numbers never change once assigned.
 */
enum sdsm_msg_type {
	SDSM_MSG_PING = 1,
	SDSM_MSG_PONG = 2,
	SDSM_MSG_AUTH = 3,
	SDSM_MSG_CREDIT = 4,
	SDSM_MSG_BYE = 5,
	SDSM_MSG_LINK_LAST = 5,
	SDSM_MSG_COHERENCE_FIRST = 0x20,
	SDSM_MSG_COH = 0x20,
	SDSM_MSG_HOME_REQ = 0x21,
	SDSM_MSG_HOME_REP = 0x22,
	SDSM_MSG_RC = 0x23,
	SDSM_MSG_REGION_CLAIM = 0x28,
	SDSM_MSG_REGION_ADD = 0x29,
	SDSM_MSG_REGION_PREPARE = 0x2a,
	SDSM_MSG_REGION_COMMIT = 0x2b,
	SDSM_MSG_REGION_ABORT = 0x2c,
	SDSM_MSG_POLICY = 0x2d,
	SDSM_MSG_REPLY = 0x2e,
	SDSM_MSG_REGION_QUERY = 0x2f,
	SDSM_MSG_HANDBACK = 0x30,
	SDSM_MSG_COHERENCE_LAST = 0x5f,
	SDSM_MSG_MAX = 0x80,
};

/* sdsm_wire_hdr.flags */
#define SDSM_WIRE_F_PAGE	0x0001	/* carries the train's next page */

/**
 * struct sdsm_wire_hdr - header of every message
 * @type: enum sdsm_msg_type
 * @flags: SDSM_WIRE_F_*
 * @credits: receives the sender posted again since its previous message
 *	said so: the receiver of this message may send that many more
 * @len: bytes of payload that follow this header in the header slot
 * @seq: the message's number in its session (1, 2, ... modulo 2^32) for
 *	the upper layers' types; 0 for the connection's own (PING, PONG,
 *	AUTH, CREDIT, BYE)
 * @ack: the last message of the session the sender delivered; 0 before
 *	the session of the connection is settled
 */
struct sdsm_wire_hdr {
	__be16 type;
	__be16 flags;
	__be16 credits;
	__be16 len;
	__be32 seq;
	__be32 ack;
};

static_assert(sizeof(struct sdsm_wire_hdr) == 16);

#define SDSM_MSG_MAX_PAYLOAD \
	(SDSM_HDR_SLOT_SIZE - sizeof(struct sdsm_wire_hdr))

/**
 * struct sdsm_wire_ping - payload of PING and PONG
 * @time_ns: sender's ktime_get_ns() at PING; echoed unchanged in the PONG
 * @incarnation: incarnation of the node sending this message
 *
 * A PING carrying a page is the handshake check: the page holds
 * sdsm_pattern_word(sender node id, @incarnation, i) in its i-th 64-bit word.
 */
struct sdsm_wire_ping {
	__be64 time_ns;
	__be64 incarnation;
};

static_assert(sizeof(struct sdsm_wire_ping) == 16);

/* sdsm_wire_hello.flags */
#define SDSM_WIRE_HELLO_F_RESUME	0x00000001	/* passive: resumed */

/**
 * struct sdsm_wire_hello - payload of the PING with the pattern page
 * @ping: as any PING; @ping.incarnation is the sender's
 * @peer_incarnation: the receiver's incarnation that the sender's session
 *	is with; 0 if it holds no session
 * @sid: the sender's session id, 0 if none; from the passive side, the id
 *	of the session the connection carries
 * @rx_seq: the last message of that session the sender delivered
 * @flags: SDSM_WIRE_HELLO_F_*; unknown bits must be zero
 *
 * The active side sends its hello once the connection is established and
 * authenticated; the passive side sends its own only after it has read
 * the active side's and decided whether the session resumes
 * (sdsm_sess_decide()).
 */
struct sdsm_wire_hello {
	struct sdsm_wire_ping ping;
	__be64 peer_incarnation;
	__be32 sid;
	__be32 rx_seq;
	__be32 flags;
	__be32 __reserved;
};

static_assert(sizeof(struct sdsm_wire_hello) == 40);

/* Peer authentication: HMAC-SHA256 keyed with the cluster secret. */
#define SDSM_AUTH_NONCE_SIZE	32
#define SDSM_AUTH_MAC_SIZE	32

/* sdsm_wire_connect.flags */
#define SDSM_WIRE_CONNECT_F_AUTH	0x00000001	/* sender uses auth */

/**
 * struct sdsm_wire_connect - rdma_cm private data of connect and accept
 * @magic: SDSM_WIRE_MAGIC
 * @version: SDSM_WIRE_VERSION
 * @node_id: node id of the sender
 * @nr_nodes: number of nodes the sender's nodes= lists
 * @rx_depth: receives the sender keeps posted
 * @flags: SDSM_WIRE_CONNECT_F_*; unknown bits must be zero (version 1
 *	called this field __reserved)
 * @incarnation: random, chosen at every module load of the sender
 * @nonce: random, chosen for every connection attempt by its sender
 *	(version 2)
 *
 * Must fit the 56 bytes of IB CM REQ private data that rdma_cm leaves us.
 */
struct sdsm_wire_connect {
	__be32 magic;
	__be16 version;
	__be16 node_id;
	__be16 nr_nodes;
	__be16 rx_depth;
	__be32 flags;
	__be64 incarnation;
	__u8 nonce[SDSM_AUTH_NONCE_SIZE];
};

static_assert(sizeof(struct sdsm_wire_connect) == 56);

/**
 * struct sdsm_wire_accept - rdma_cm private data of an accept (version 2)
 * @c: the passive side's connect data, with its own nonce
 * @mac: HMAC(secret, struct sdsm_wire_auth_input labelled
 *	SDSM_AUTH_LABEL_ACCEPT); zero if the passive side runs auth=none
 */
struct sdsm_wire_accept {
	struct sdsm_wire_connect c;
	__u8 mac[SDSM_AUTH_MAC_SIZE];
};

static_assert(sizeof(struct sdsm_wire_accept) == 88);

/**
 * struct sdsm_wire_auth - payload of AUTH
 * @mac: HMAC(secret, struct sdsm_wire_auth_input labelled
 *	SDSM_AUTH_LABEL_AUTH); zero if the active side runs auth=none
 */
struct sdsm_wire_auth {
	__u8 mac[SDSM_AUTH_MAC_SIZE];
};

static_assert(sizeof(struct sdsm_wire_auth) == 32);

#define SDSM_AUTH_LABEL_SIZE	16
#define SDSM_AUTH_LABEL_ACCEPT	"sdsm v2 accept"	/* passive proves */
#define SDSM_AUTH_LABEL_AUTH	"sdsm v2 auth"		/* active proves */

/**
 * struct sdsm_wire_auth_input - what an accept or AUTH MAC covers
 * @label: SDSM_AUTH_LABEL_ACCEPT or SDSM_AUTH_LABEL_AUTH, zero padded:
 *	the direction, so a MAC is never valid in the other direction
 * @nr_nodes: the cluster size both sides announced
 * @active_id: node id of the side that connected (the lower id)
 * @passive_id: node id of the side that accepted
 * @__reserved: zero
 * @active_incarnation: incarnation the active side announced
 * @passive_incarnation: incarnation the passive side announced
 * @active_nonce: nonce of the connect request
 * @passive_nonce: nonce of the accept
 *
 * Never sent: both sides build it from the connect private data and MAC
 * it.  Fresh nonces of both sides make every MAC good for one connection
 * attempt only, so a recorded accept or AUTH cannot be replayed.
 */
struct sdsm_wire_auth_input {
	char label[SDSM_AUTH_LABEL_SIZE];
	__be16 nr_nodes;
	__be16 active_id;
	__be16 passive_id;
	__be16 __reserved;
	__be64 active_incarnation;
	__be64 passive_incarnation;
	__u8 active_nonce[SDSM_AUTH_NONCE_SIZE];
	__u8 passive_nonce[SDSM_AUTH_NONCE_SIZE];
};

static_assert(sizeof(struct sdsm_wire_auth_input) == 104);

/* Why a passive side refused a connection (struct sdsm_wire_reject.reason). */
enum sdsm_reject_reason {
	SDSM_REJ_BAD_MAGIC = 1,
	SDSM_REJ_BAD_VERSION = 2,
	SDSM_REJ_BAD_NR_NODES = 3,
	SDSM_REJ_BAD_NODE_ID = 4,	/* id out of range or is ours */
	SDSM_REJ_BAD_ADDRESS = 5,	/* source address is not nodes[id] */
	SDSM_REJ_WRONG_DIRECTION = 6,	/* only lower ids connect to higher */
	SDSM_REJ_SHUTDOWN = 7,		/* module is unloading */
	SDSM_REJ_NO_RESOURCES = 8,
	SDSM_REJ_AUTH_MODE = 9,		/* one side runs auth=none */
};

/**
 * struct sdsm_wire_reject - rdma_cm private data of a reject
 * @magic: SDSM_WIRE_MAGIC
 * @version: SDSM_WIRE_VERSION of the rejecting node
 * @reason: enum sdsm_reject_reason
 */
struct sdsm_wire_reject {
	__be32 magic;
	__be16 version;
	__be16 reason;
};

static_assert(sizeof(struct sdsm_wire_reject) == 8);

/* ------------------------------------------------------------------ */
/* Cluster locks and barriers (sdsm_sync.c): types 0x60-0x7f only.     */

/**
 * enum sdsm_sync_msg_type - message types of cluster locks and barriers
 * @SDSM_MSG_SYNC_FIRST: first type reserved for locks and barriers
 * @SDSM_MSG_LOCK_ACQUIRE: requester to manager, struct sdsm_wire_lock;
 *	answered by one LOCK_REPLY (OK, possibly after a wait, or BUSY for
 *	SDSM_WIRE_LOCK_F_TRY, or an error)
 * @SDSM_MSG_LOCK_RELEASE: holder to manager, struct sdsm_wire_lock with
 *	the req_id of the grant; never answered
 * @SDSM_MSG_LOCK_CANCEL: requester to manager, struct sdsm_wire_lock:
 *	withdraw a waiting ACQUIRE; answered CANCELLED or STALE
 * @SDSM_MSG_LOCK_REPLY: manager to requester, struct sdsm_wire_sync_reply
 * @SDSM_MSG_BARRIER_ARRIVE: participant to manager, struct
 *	sdsm_wire_barrier; answered when the generation completes or fails
 * @SDSM_MSG_BARRIER_CANCEL: participant to manager, struct
 *	sdsm_wire_barrier: withdraw an arrival; answered CANCELLED or STALE
 * @SDSM_MSG_BARRIER_REPLY: manager to participant, struct
 *	sdsm_wire_sync_reply
 * @SDSM_MSG_FUTEX_WAIT: waiter to manager, struct sdsm_wire_futex:
 *	queue a waiter; answered by FUTEX_REPLY OK with
 *	SDSM_WIRE_FUTEX_F_QUEUED (or an error), and later by a FUTEX_REPLY OK
 *	without it when a WAKE picks the waiter
 * @SDSM_MSG_FUTEX_CANCEL: waiter to manager, struct sdsm_wire_futex naming
 *	the WAIT: withdraw it; answered CANCELLED or STALE (woken before)
 * @SDSM_MSG_FUTEX_WAKE: waker to manager, struct sdsm_wire_futex: wake up
 *	to @count waiters; answered by FUTEX_REPLY with the number woken
 * @SDSM_MSG_FUTEX_REPLY: manager to requester, struct sdsm_wire_futex_reply
 * @SDSM_MSG_RC_NOTICES: write notices of release-consistent regions,
 *	struct sdsm_wire_rc_notices and a page of struct sdsm_wire_rc_notice;
 *	never answered
 * @SDSM_MSG_SYNC_LAST: last type reserved for locks and barriers
 */
enum sdsm_sync_msg_type {
	SDSM_MSG_SYNC_FIRST = 0x60,
	SDSM_MSG_LOCK_ACQUIRE = 0x60,
	SDSM_MSG_LOCK_RELEASE = 0x61,
	SDSM_MSG_LOCK_CANCEL = 0x62,
	SDSM_MSG_LOCK_REPLY = 0x63,
	SDSM_MSG_BARRIER_ARRIVE = 0x64,
	SDSM_MSG_BARRIER_CANCEL = 0x65,
	SDSM_MSG_BARRIER_REPLY = 0x66,
	SDSM_MSG_FUTEX_WAIT = 0x67,
	SDSM_MSG_FUTEX_CANCEL = 0x68,
	SDSM_MSG_FUTEX_WAKE = 0x69,
	SDSM_MSG_FUTEX_REPLY = 0x6a,
	SDSM_MSG_RC_NOTICES = 0x6b,
	SDSM_MSG_SYNC_LAST = 0x7f,
};

static_assert((int)SDSM_MSG_SYNC_FIRST > (int)SDSM_MSG_COHERENCE_LAST);
static_assert((int)SDSM_MSG_SYNC_LAST < (int)SDSM_MSG_MAX);

/* sdsm_wire_lock.flags */
#define SDSM_WIRE_LOCK_F_TRY	0x0001	/* answer BUSY instead of queueing */

/**
 * struct sdsm_wire_lock - payload of LOCK_ACQUIRE, LOCK_RELEASE, LOCK_CANCEL
 * @req_id: the requester's id of the ACQUIRE (unique per node and module
 *	load); RELEASE and CANCEL name the ACQUIRE they undo
 * @lock_id: the lock (struct sdsm_lock.lock_id)
 * @flags: SDSM_WIRE_LOCK_F_*; zero for RELEASE and CANCEL
 * @__reserved: zero
 */
struct sdsm_wire_lock {
	__be64 req_id;
	__be64 lock_id;
	__be32 flags;
	__be32 __reserved;
};

static_assert(sizeof(struct sdsm_wire_lock) == 24);

/**
 * struct sdsm_wire_barrier - payload of BARRIER_ARRIVE and BARRIER_CANCEL
 * @req_id: the participant's id of this arrival; CANCEL names the ARRIVE
 * @barrier_id: the barrier (struct sdsm_barrier.barrier_id)
 * @nodemask: the participating nodes, never 0 (0 is resolved to every
 *	node by the sender)
 * @count: arrivals that complete a generation, never 0 (resolved likewise)
 * @__reserved: zero
 */
struct sdsm_wire_barrier {
	__be64 req_id;
	__be64 barrier_id;
	__be64 nodemask;
	__be32 count;
	__be32 __reserved;
};

static_assert(sizeof(struct sdsm_wire_barrier) == 32);

/**
 * enum sdsm_sync_status - sdsm_wire_sync_reply.status
 * @SDSM_SYNC_OK: lock granted, or barrier generation complete
 * @SDSM_SYNC_BUSY: TRY on a held lock
 * @SDSM_SYNC_INVAL: the manager refused the request (barrier count or
 *	nodemask differs from the generation's, not the right manager, ...)
 * @SDSM_SYNC_HOSTDOWN: the manager sees the requester or a node of the
 *	barrier's nodemask down
 * @SDSM_SYNC_NOMEM: the manager could not allocate
 * @SDSM_SYNC_CANCELLED: the request was withdrawn by a CANCEL
 * @SDSM_SYNC_STALE: a CANCEL found nothing to withdraw (the answer to the
 *	request was sent before it)
 * @SDSM_SYNC_LIMIT: FUTEX_WAIT: the manager keeps SDSM_FUTEX_MAX_WAITERS
 *	waiters of the requester's node already
 */
enum sdsm_sync_status {
	SDSM_SYNC_OK = 0,
	SDSM_SYNC_BUSY = 1,
	SDSM_SYNC_INVAL = 2,
	SDSM_SYNC_HOSTDOWN = 3,
	SDSM_SYNC_NOMEM = 4,
	SDSM_SYNC_CANCELLED = 5,
	SDSM_SYNC_STALE = 6,
	SDSM_SYNC_LIMIT = 7,
};

/* sdsm_wire_sync_reply.flags */
#define SDSM_WIRE_SYNC_F_WAITED	0x0001	/* lock granted after queueing */
#define SDSM_WIRE_SYNC_F_SERIAL	0x0002	/* barrier: the generation's last arrival */

/**
 * struct sdsm_wire_sync_reply - payload of LOCK_REPLY and BARRIER_REPLY
 * @req_id: the request answered
 * @id: its lock or barrier id
 * @status: enum sdsm_sync_status
 * @flags: SDSM_WIRE_SYNC_F_*
 */
struct sdsm_wire_sync_reply {
	__be64 req_id;
	__be64 id;
	__be32 status;
	__be32 flags;
};

static_assert(sizeof(struct sdsm_wire_sync_reply) == 24);

/* Waiters of one node a futex manager keeps at most (all keys). */
#define SDSM_FUTEX_MAX_WAITERS	4096

/**
 * struct sdsm_wire_futex - payload of FUTEX_WAIT, FUTEX_CANCEL, FUTEX_WAKE
 * @req_id: the requester's id of this call; CANCEL names the WAIT
 * @key: the futex: mmap offset of the word on /dev/sdsm (region id <<
 *	40 + byte offset in the region), the same on every node
 * @count: WAKE: most waiters to wake, at least 1; else zero
 * @bitset: WAIT and WAKE: non-zero; a WAKE picks waiters sharing a bit
 */
struct sdsm_wire_futex {
	__be64 req_id;
	__be64 key;
	__be32 count;
	__be32 bitset;
};

static_assert(sizeof(struct sdsm_wire_futex) == 24);

/* sdsm_wire_futex_reply.flags */
#define SDSM_WIRE_FUTEX_F_QUEUED	0x0001	/* WAIT: the waiter is queued */

/**
 * struct sdsm_wire_futex_reply - payload of FUTEX_REPLY
 * @req_id: the call answered
 * @key: its futex
 * @status: enum sdsm_sync_status
 * @flags: SDSM_WIRE_FUTEX_F_*
 * @woken: WAKE: the number of waiters woken; else zero
 * @__reserved: zero
 */
struct sdsm_wire_futex_reply {
	__be64 req_id;
	__be64 key;
	__be32 status;
	__be32 flags;
	__be32 woken;
	__be32 __reserved;
};

static_assert(sizeof(struct sdsm_wire_futex_reply) == 32);

/* sdsm_wire_rc_notices.kind: to a manager, about a lock or barrier... */
#define SDSM_WIRE_NOTICES_LOCK		1
#define SDSM_WIRE_NOTICES_BARRIER	2
/* ...or from a manager, to apply before its grant, departure or WOKEN... */
#define SDSM_WIRE_NOTICES_ACQUIRE	3
/* ...or to a manager, about a futex (@id: its key), ahead of a WAKE */
#define SDSM_WIRE_NOTICES_FUTEX		4

/**
 * struct sdsm_wire_rc_notice - one write notice (struct sdsm_rc_notice)
 * @region: region id
 * @version: the page's version released
 * @page: page index in the region
 */
struct sdsm_wire_rc_notice {
	__be32 region;
	__be32 version;
	__be64 page;
};

static_assert(sizeof(struct sdsm_wire_rc_notice) == 16);

/* Notices one RC_NOTICES message carries, in its page. */
#define SDSM_WIRE_NOTICES_MAX	(4096 / sizeof(struct sdsm_wire_rc_notice))

/**
 * struct sdsm_wire_rc_notices - payload of RC_NOTICES
 * @id: the lock, barrier or futex key
 * @kind: SDSM_WIRE_NOTICES_*
 * @object: with @kind SDSM_WIRE_NOTICES_ACQUIRE, the kind of the object
 *	whose grant they come with (SDSM_WIRE_NOTICES_LOCK, _BARRIER or
 *	_FUTEX); otherwise zero
 * @__reserved: zero
 * @count: struct sdsm_wire_rc_notice entries in the attached page
 *	(1..SDSM_WIRE_NOTICES_MAX)
 *
 * Write notices of release-consistent regions: from a releaser to the
 * manager of the lock, barrier or futex it releases, sent before the
 * RELEASE, ARRIVE or FUTEX_WAKE; from a manager to a node, sent before
 * the grant, the barrier's departure, or a FUTEX_REPLY that queues or
 * wakes a waiter.  Per-peer FIFO delivers them first.
 */
struct sdsm_wire_rc_notices {
	__be64 id;
	__u8 kind;
	__u8 object;
	__u8 __reserved[2];
	__be32 count;
};

static_assert(sizeof(struct sdsm_wire_rc_notices) == 16);

/* ---- coherent memory, regions, placement (types 0x20-0x5f) ---- */

/* sdsm_wire_coh.data: what travels with a DATA-flagged message */
enum sdsm_wire_data {
	SDSM_WIRE_DATA_NONE = 0,	/* no page */
	SDSM_WIRE_DATA_PAGE = 1,	/* the page is attached */
	SDSM_WIRE_DATA_ZERO = 2,	/* the page is all zeroes, not sent */
};

/**
 * struct sdsm_wire_coh - one message of the coherence protocol
 * @region: region id
 * @seq: struct sdsm_proto_msg.seq
 * @page: page index in the region
 * @type: enum sdsm_proto_msg_type
 * @flags: SDSM_PROTO_F_*
 * @err: NACK: a positive errno
 * @data: enum sdsm_wire_data
 * @__reserved: zero
 *
 * The sender is the connection's peer, never a field.
 */
struct sdsm_wire_coh {
	__be32 region;
	__be32 seq;
	__be64 page;
	__u8 type;
	__u8 flags;
	__be16 err;
	__u8 data;
	__u8 __reserved[3];
};

static_assert(sizeof(struct sdsm_wire_coh) == 24);

/* sdsm_wire_rc.flags, besides SDSM_RC_F_* */
#define SDSM_WIRE_RC_PART	0x80	/* DIFF: a part, more follows */

/* A DIFF's page holds a diff of each half of the page, half 0 first. */
#define SDSM_WIRE_RC_HALVES	2

/**
 * struct sdsm_wire_rc - one message of the release-consistency protocol
 * @region: region id
 * @seq: struct sdsm_rc_msg.seq
 * @page: page index in the region
 * @version: struct sdsm_rc_msg.version
 * @err: NACK, DIFF_ACK: a positive errno
 * @type: enum sdsm_rc_msg_type
 * @flags: SDSM_RC_F_* and SDSM_WIRE_RC_*
 * @data: GRANT_READ: enum sdsm_wire_data
 * @__reserved: zero
 * @diff_len: DIFF: bytes of the attached page that hold the diff of each
 *	half of the page (sdsm_rc_diff_make() of SDSM_RC_HALF bytes), one
 *	after the other; 0: that half is not in this message.  A DIFF whose
 *	halves do not fit one page is sent as a PART with half 0 and a DIFF
 *	with half 1, back to back; only the DIFF counts as the protocol's.
 */
struct sdsm_wire_rc {
	__be32 region;
	__be32 seq;
	__be64 page;
	__be32 version;
	__be16 err;
	__u8 type;
	__u8 flags;
	__u8 data;
	__u8 __reserved[3];
	__be16 diff_len[SDSM_WIRE_RC_HALVES];
};

static_assert(sizeof(struct sdsm_wire_rc) == 32);

/* sdsm_wire_home.flags */
#define SDSM_WIRE_HOME_ASSIGN	0x1	/* fix the home now if not yet */

/* Pages after its own whose homes a HOME_REP tells (sdsm_wire_home.next) */
#define SDSM_WIRE_HOME_NEXT	32
/* sdsm_wire_home.next[] of a page whose home is not fixed yet */
#define SDSM_WIRE_HOME_UNKNOWN	0xff
/* sdsm_wire_home.next[] of a query's answer: the page has no home yet */
#define SDSM_WIRE_HOME_NONE	0xfe

/**
 * struct sdsm_wire_home - HOME_REQ and HOME_REP
 * @cookie: 0 for a faulting node's request (the answer is cached in the
 *	page), else the requester's call, echoed in the answer
 * @region: region id
 * @flags: SDSM_WIRE_HOME_*
 * @page: page index in the region
 * @home: HOME_REP: the node id of the home, or a negative errno
 * @__reserved: zero
 * @next: HOME_REP to a faulting node (@cookie 0): the homes of pages
 *	@page + 1 ... @page + SDSM_WIRE_HOME_NEXT that the same node manages
 *	and has fixed already, SDSM_WIRE_HOME_UNKNOWN for the others (a home
 *	never moves once fixed, so the requester may cache them); HOME_REP
 *	to a query (@cookie non-zero): for each of those pages that the same
 *	node manages, what it would answer a query of that page, a node id
 *	or SDSM_WIRE_HOME_NONE (no home yet: the requester may use it for
 *	this query only), SDSM_WIRE_HOME_UNKNOWN for the others; HOME_REQ:
 *	zero.  A node that sends a query's answer all SDSM_WIRE_HOME_UNKNOWN
 *	(version 11 did) only costs the requester more questions.
 */
struct sdsm_wire_home {
	__be64 cookie;
	__be32 region;
	__be32 flags;
	__be64 page;
	__be32 home;
	__be32 __reserved;
	u8 next[SDSM_WIRE_HOME_NEXT];
};

static_assert(sizeof(struct sdsm_wire_home) == 64);

/* struct sdsm_policy of the uapi, big endian */
struct sdsm_wire_policy {
	__be32 mode;
	__be32 preferred_node;
	__be64 nodemask;
	__be64 block_size;
};

static_assert(sizeof(struct sdsm_wire_policy) == 24);

/* sdsm_wire_region.flags */
#define SDSM_WIRE_REGION_EXCL	0x1	/* CLAIM: fail if the name exists */

/**
 * struct sdsm_wire_region - a region, in CLAIM, ADD, PREPARE, COMMIT, ABORT
 *	and REPLY
 * @cookie: the requester's call, echoed in the REPLY; 0: no reply wanted
 * @id: region id
 * @flags: SDSM_WIRE_REGION_*
 * @length: bytes
 * @policy: the policy at creation
 * @name: NUL-terminated name
 * @uid: owner's uid, in the initial user namespace
 * @gid: owner's gid, in the initial user namespace
 * @mode: permission bits, 0..0777
 * @consistency: enum sdsm_consistency
 * @manager: the node that fixes first-touch homes (SDSM_REGION_F_MANAGER),
 *	or SDSM_MANAGER_INTERLEAVE
 * @__reserved: zero
 */
struct sdsm_wire_region {
	__be64 cookie;
	__be32 id;
	__be32 flags;
	__be64 length;
	struct sdsm_wire_policy policy;
	char name[32];
	__be32 uid;
	__be32 gid;
	__be32 mode;
	__be32 consistency;
	__be32 manager;
	__be32 __reserved;
};

static_assert(sizeof(struct sdsm_wire_region) == 104);

/**
 * struct sdsm_wire_policy_set - POLICY: the policy of pages
 *	[@first, @first + @npages) of region @region
 * @cookie: the requester's call
 * @region: region id
 * @__reserved: zero
 * @first: first page index
 * @npages: number of pages
 * @policy: the policy
 */
struct sdsm_wire_policy_set {
	__be64 cookie;
	__be32 region;
	__be32 __reserved;
	__be64 first;
	__be64 npages;
	struct sdsm_wire_policy policy;
};

static_assert(sizeof(struct sdsm_wire_policy_set) == 56);

/**
 * struct sdsm_wire_reply - REPLY
 * @cookie: the call answered
 * @status: 0 or a positive errno
 * @__reserved: zero
 * @region: CLAIM of a name that exists: that region; else zero
 */
struct sdsm_wire_reply {
	__be64 cookie;
	__be32 status;
	__be32 __reserved;
	struct sdsm_wire_region region;
};

static_assert(sizeof(struct sdsm_wire_reply) == 120);

#endif /* SDSM_WIRE_H */
