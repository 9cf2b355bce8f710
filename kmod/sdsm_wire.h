/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm wire format: everything that crosses between two nodes.
 *
 * All multi-byte fields are big endian.  These structs are append-only: add
 * new fields at the end, never reorder or resize existing ones, and bump
 * SDSM_WIRE_VERSION when a peer running the old layout cannot understand the
 * new one.  Sizes are pinned by static_assert below.
 *
 * A message is one RC SEND.  Its first bytes are struct sdsm_wire_hdr and a
 * small payload (at most SDSM_MSG_MAX_PAYLOAD bytes).  A message that carries
 * a page sends a full SDSM_HDR_SLOT_SIZE header slot followed by the page, so
 * the page lands in the page-sized second scatter element of every posted
 * receive; no remote keys are ever exchanged.
 */
#ifndef SDSM_WIRE_H
#define SDSM_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define SDSM_WIRE_MAGIC		0x5344534dU	/* "SDSM" */
#define SDSM_WIRE_VERSION	1

/* Size of the first scatter element of each receive: header + payload. */
#define SDSM_HDR_SLOT_SIZE	256

/**
 * enum sdsm_msg_type - every message type, in one place.
 * @SDSM_MSG_PING: heartbeat request; with a page: handshake pattern page
 * @SDSM_MSG_PONG: heartbeat reply, echoes the PING timestamp
 * @SDSM_MSG_COHERENCE_FIRST: first type reserved for coherence (issue 3)
 * @SDSM_MSG_COHERENCE_LAST: last type reserved for coherence
 * @SDSM_MSG_MAX: number of types; the handler table has this many slots
 *
 * Type 0 is never valid.  Numbers never change once assigned.
 */
enum sdsm_msg_type {
	SDSM_MSG_PING = 1,
	SDSM_MSG_PONG = 2,
	SDSM_MSG_COHERENCE_FIRST = 0x20,
	SDSM_MSG_COHERENCE_LAST = 0x5f,
	SDSM_MSG_MAX = 0x80,
};

/* sdsm_wire_hdr.flags */
#define SDSM_WIRE_F_PAGE	0x0001	/* a PAGE_SIZE page follows the slot */

/**
 * struct sdsm_wire_hdr - header of every message
 * @type: enum sdsm_msg_type
 * @flags: SDSM_WIRE_F_*
 * @len: bytes of payload that follow this header in the header slot
 * @seq: per-connection sequence number of the sender, starting at 1
 */
struct sdsm_wire_hdr {
	__be16 type;
	__be16 flags;
	__be32 len;
	__be64 seq;
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

/**
 * struct sdsm_wire_connect - rdma_cm private data of connect and accept
 * @magic: SDSM_WIRE_MAGIC
 * @version: SDSM_WIRE_VERSION
 * @node_id: node id of the sender
 * @nr_nodes: number of nodes the sender's nodes= lists
 * @rx_depth: receives the sender keeps posted
 * @__reserved: zero
 * @incarnation: random, chosen at every module load of the sender
 *
 * Must fit the 56 bytes of IB CM REQ private data that rdma_cm leaves us.
 */
struct sdsm_wire_connect {
	__be32 magic;
	__be16 version;
	__be16 node_id;
	__be16 nr_nodes;
	__be16 rx_depth;
	__be32 __reserved;
	__be64 incarnation;
};

static_assert(sizeof(struct sdsm_wire_connect) == 24);

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

#endif /* SDSM_WIRE_H */
