/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm private header: cluster, peers, connections, and the messaging API
 * that the coherence layer builds on.
 *
 * Objects:
 *  - struct sdsm_cluster: one per module load (sdsm_cl); parameters,
 *    the rdma_cm listener, the heartbeat.
 *  - struct sdsm_peer: one per node listed in nodes=, self included; lives
 *    as long as the module.  Its state is derived from its connection.
 *  - struct sdsm_conn: one RC QP to one peer, with its cm_id, PD, CQ and
 *    buffers.  A failed connection is never reused: it is detached from its
 *    peer, destroyed by the reaper, and a new one is made.
 *
 * Sessions (sdsm_session.h): the upper layers' messages to a peer belong
 * to the session with that peer's incarnation, not to a connection.  A
 * connection that fails loses none of them: they are sent again on the
 * next one, each delivered once, in order.  The peer is reported DOWN
 * only when the session ends: peer_timeout_ms without a word from it, a
 * BYE (its module unloads), or its coming back as another incarnation or
 * without the session.
 *
 * Messaging API for upper layers (process context only):
 *  - sdsm_queue(dst, type, payload, len, page) queues one message for a
 *    node, this node included, in the node's FIFO send queue; it never
 *    waits for the network.  Every layer sends this way.
 *  - sdsm_handler_register(type, fn) installs the receive handler for a
 *    type.  Handlers run in process context, may sleep, and see the
 *    messages of one peer in the order that peer sent them.  They must not
 *    wait for a message from the same peer (it queues behind them), nor
 *    for a credit: a peer returns credits as its own receive worker goes
 *    on, so two handlers waiting so would wait for each other.  They
 *    queue what they send.
 *  - sdsm_peer_notifier_register(nb) reports SDSM_PEER_UP / SDSM_PEER_DOWN
 *    for a struct sdsm_peer *, in process context, in order per peer: the
 *    start and the end of each session.
 */
#ifndef SDSM_H
#define SDSM_H

#include <linux/atomic.h>
#include <linux/in.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "sdsm_session.h"
#include "sdsm_wire.h"

#define SDSM_MAX_NODES		32
#define SDSM_DEFAULT_PORT	18610

#define SDSM_RX_DEPTH		16	/* receives posted per connection */
#define SDSM_TX_DEPTH		16	/* sends in flight per connection */
/* Receive credits owed to the peer that make a CREDIT message worth it. */
#define SDSM_CREDIT_BATCH	(SDSM_RX_DEPTH / 2)
/*
 * A message holds its ring entry until acknowledged, and the peer
 * acknowledges it at the latest with the credit of its receive: the ring
 * never has fewer entries than there are credits.
 */
static_assert(SDSM_SESS_RING >= SDSM_RX_DEPTH);

/* Reconnect backoff of the active side. */
#define SDSM_BACKOFF_MIN_MS	100
#define SDSM_BACKOFF_MAX_MS	2000

#define SDSM_RESOLVE_TIMEOUT_MS	2000

enum sdsm_peer_state {
	SDSM_PEER_SELF,
	SDSM_PEER_DOWN,
	SDSM_PEER_CONNECTING,
	SDSM_PEER_UP,
};

/* Events of the peer notifier chain; data is the struct sdsm_peer *. */
enum sdsm_peer_event {
	SDSM_PEER_EVENT_UP = 1,
	SDSM_PEER_EVENT_DOWN,
};

/* struct sdsm_conn.flags bits */
enum {
	SDSM_CONN_ESTABLISHED,	/* rdma_cm reported ESTABLISHED */
	SDSM_CONN_VERIFIED,	/* the peer's pattern page arrived intact */
	SDSM_CONN_AUTHED,	/* the peer proved the cluster secret */
	SDSM_CONN_HELLO,	/* our pattern page is being sent */
	SDSM_CONN_HELLO_SENT,	/* ... and posted: session messages may follow */
	SDSM_CONN_FAILED,	/* broken; the peer work detaches it */
	SDSM_CONN_DYING,	/* reaper owns it; no new sends or receives */
	SDSM_CONN_PAGE_OK,	/* a send with a page completed */
};

struct crypto_shash;
struct sdsm_conn;

/* One posted receive: the header slots of a train and its pages. */
struct sdsm_rx_slot {
	struct ib_cqe cqe;
	struct sdsm_conn *conn;
	struct list_head node;	/* on conn->rx_list once completed */
	void *hdr;		/* SDSM_TRAIN_HDRS bytes */
	u64 hdr_dma;
	struct page *page[SDSM_TRAIN_MAX];
	u64 page_dma[SDSM_TRAIN_MAX];
	u32 byte_len;
};

/* One send: the header slots of a train and its mapped pages. */
struct sdsm_tx_slot {
	struct ib_cqe cqe;
	struct sdsm_conn *conn;
	struct list_head node;	/* on conn->tx_free while free */
	void *hdr;		/* SDSM_TRAIN_HDRS bytes */
	u64 hdr_dma;
	/* referenced until the send completes */
	struct page *page[SDSM_TRAIN_MAX];
	u64 page_dma[SDSM_TRAIN_MAX];
	unsigned int pages;
	unsigned long posted;	/* jiffies, sends with pages */
};

/* A message to send: sdsm_conn_send_train(). */
struct sdsm_wmsg {
	u16 type;
	u32 len;
	const void *payload;
	struct page *page;
};

/**
 * struct sdsm_conn - one RC connection to a peer
 *
 * Credits: @tx_credits is how many receives the peer has posted that our
 * sends have not used yet: SDSM_RX_DEPTH at the start, one less per send,
 * more when a message of the peer returns some (sdsm_wire_hdr.credits).
 * @rx_owed counts the receives we reposted and have not told the peer of
 * yet; every send takes it to 0 and carries it, and the receive worker
 * sends a CREDIT message when SDSM_CREDIT_BATCH are owed.  A send may take
 * the last credit only if it returns one, so two nodes that both run out
 * always have a message on its way that gives one of them a credit back.
 * No send ever finds the peer without a posted receive (no RNR NAK, whose
 * retry waits for the RNR timer).
 *
 * Locks: @tx_lock protects @tx_free, @tx_taken and @tx_credits and, with
 * @rx_lock, orders posting against the DYING bit: whoever posts checks
 * DYING under the lock, and the reaper sets DYING under both locks before
 * it drains and destroys the QP, then waits for @tx_taken to reach 0.
 * Both are taken from softirq (completions): use the _bh variants elsewhere.
 * The conn fields written by cm handlers (@remote_incarnation, flags) are
 * read under the owning peer's lock.
 */
struct sdsm_conn {
	struct kref ref;
	struct sdsm_peer *peer;
	bool active;			/* we called rdma_connect */
	unsigned long flags;		/* SDSM_CONN_* bits */
	unsigned long created;		/* jiffies */
	unsigned long last_rx;		/* jiffies of the last completion */
	u64 remote_incarnation;		/* from connect private data */
	u64 hello_incarnation;		/* from the pattern PING */
	u32 sess_gen;			/* peer->sess.gen it carries; 0: undecided */
	struct sdsm_wire_hello hello_out; /* passive: ours, filled at the decision */
	u8 nonce[SDSM_AUTH_NONCE_SIZE];		/* ours, this attempt */
	u8 remote_nonce[SDSM_AUTH_NONCE_SIZE];	/* the peer's */
	const char *fail_reason;	/* first reason of SDSM_CONN_FAILED */
	int path_mtu;			/* bytes, the QP's at ESTABLISHED */
	struct list_head reap_node;	/* on sdsm_cl.reap_list */

	struct rdma_cm_id *cm_id;
	struct ib_device *dev;		/* set once resources exist */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;

	void *rx_hdrs;			/* SDSM_RX_DEPTH trains of header slots */
	u64 rx_hdrs_dma;
	struct sdsm_rx_slot rx[SDSM_RX_DEPTH];
	spinlock_t rx_lock;		/* see Locks above */
	struct list_head rx_list;	/* completed receives, FIFO */
	struct work_struct rx_work;

	void *tx_hdrs;			/* SDSM_TX_DEPTH trains of header slots */
	u64 tx_hdrs_dma;
	struct sdsm_tx_slot tx[SDSM_TX_DEPTH];
	spinlock_t tx_lock;		/* see Locks above */
	struct list_head tx_free;
	unsigned int tx_taken;		/* slots not on tx_free */
	unsigned int tx_credits;	/* see Credits above */
	atomic_t rx_owed;		/* see Credits above */
	wait_queue_head_t tx_wait;	/* woken when a slot or a credit frees, or DYING */
};

/**
 * struct sdsm_txq - the send queue of one destination (sdsm_queue())
 * @lock: protects @queue, @epoch, @dead, @sending, @corker, @corked and
 *	@free;
 *	process context only
 * @queue: struct sdsm_out, FIFO
 * @work: drains @queue on sdsm_cl.tx_wq; one instance runs at a time
 * @epoch: bumped when the peer is reported down; older messages are dropped
 * @dead: the peer was reported down and not up since
 * @sending: a task is posting one of this queue's messages: the worker, or
 *	a sender that found @queue empty and posts its message itself.  Only
 *	the holder posts, so messages leave in queue order.
 * @corker: the task whose messages wait in @queue, to leave as trains
 *	(sdsm_queue_cork()), or NULL
 * @corked: @corker's sdsm_queue_cork() calls not yet uncorked
 * @free: entries of @pool not in use, taken before any allocation
 * @pool: SDSM_TXQ_POOL preallocated queue entries
 */
struct sdsm_txq {
	spinlock_t lock;		/* see above */
	struct list_head queue;
	struct work_struct work;
	unsigned int epoch;
	bool dead;
	bool sending;
	struct task_struct *corker;
	unsigned int corked;
	struct list_head free;
	void *pool;
};

/**
 * struct sdsm_peer - a node of the cluster as this node sees it
 *
 * Locks: @lock (spinlock, process context only, never held while sleeping)
 * protects @conn, @pending, @state, @backoff_ms and @last_err.  Nobody calls into
 * rdma_cm or waits for a work item with it held, so cm handlers may take it.
 * @work serializes notifier calls, so @notified_* and @reported_gen are
 * written only there.  sdsm_session_rx() reads @reported_gen (with
 * acquire: the report's effects come before it) to hold a session's
 * messages until the layers have heard of it, and sleeps on @report_wait,
 * which the peer work wakes after each UP report and sdsm_conn_fail()
 * when a connection of the peer fails.
 */
struct sdsm_peer {
	unsigned int id;
	struct sockaddr_in addr;
	spinlock_t lock;		/* see Locks above */
	enum sdsm_peer_state state;
	struct sdsm_conn *conn;
	/*
	 * Passive side: an accepted connection whose AUTH has not arrived
	 * yet.  It never touches @conn or @state; a verified AUTH moves it
	 * to @conn (dropping the old one), anything else reaps it.
	 */
	struct sdsm_conn *pending;
	unsigned int backoff_ms;
	int last_err;			/* last logged connect error */
	const char *last_fail;		/* last logged failure, peer work */
	/* The page-MTU diagnosis is logged (xchg); a page send clears it. */
	unsigned int page_mtu_logged;

	struct work_struct work;	/* reconcile state, notify */
	struct delayed_work connect_work;	/* active side only */
	bool notified_up;
	u32 notified_gen;		/* sess.gen reported UP */
	/*
	 * The sess.gen whose UP report every layer handled, until its DOWN
	 * report is done; else 0 (sysfs state, delivery).
	 */
	u32 reported_gen;
	wait_queue_head_t report_wait;	/* see Locks above */

	struct sdsm_txq txq;		/* messages for this node */

	/*
	 * The session with the peer (sdsm_session.h).  @sess_lock (taken
	 * in softirq: _bh elsewhere; inside a conn's tx_lock) protects
	 * @sess, @ring and the @sess_gen of the peer's connections.
	 * @rx_mutex makes the check of a received message's number and its
	 * delivery one step, whichever of the peer's connections (the old
	 * one may still be delivering) it came on.  The peer work takes it
	 * once before a DOWN report, so the layers hear DOWN only after the
	 * last delivery of the session that ended.  A handler holds it: it
	 * must not wait for the peer work.
	 */
	spinlock_t sess_lock;		/* see above */
	struct sdsm_sess sess;
	struct sdsm_sess_msg *ring;	/* SDSM_SESS_RING, by seq */
	const char *sess_end;		/* why the last session ended */
	unsigned long heard;		/* jiffies: last message of the peer */
	struct mutex rx_mutex;		/* see above */
	atomic64_t resumes;		/* sessions resumed on a new link */

	u64 srtt_ns;			/* smoothed PING round trip */
	atomic64_t tx_msgs;
	atomic64_t rx_msgs;
	atomic64_t tx_bytes;
	atomic64_t rx_bytes;
	struct kobject *kobj;		/* nodes/<id> */
};

/**
 * struct sdsm_cluster - everything one module load owns
 *
 * Locks: @reap_lock protects @reap_list.  @listen_lock (mutex) protects
 * @listen_id; nobody holding it waits for @listen_work.  @shutdown is set
 * once, before teardown starts; after it nothing new is connected or
 * scheduled.  @auth_tfm is set before the listener exists and freed after
 * every connection is gone; NULL means auth=none.
 */
struct sdsm_cluster {
	unsigned int node_id;
	unsigned int nr_nodes;
	u16 port;
	unsigned int heartbeat_ms;
	unsigned int peer_timeout_ms;
	u8 ack_timeout;			/* RC local ACK timeout, 0: default */
	u64 incarnation;
	bool shutdown;
	const char *auth_key;		/* logon key description, NULL: none */
	struct crypto_shash *auth_tfm;	/* hmac(sha256) keyed with the secret */

	struct sdsm_peer peers[SDSM_MAX_NODES];
	struct workqueue_struct *wq;
	struct workqueue_struct *tx_wq;	/* the send queues' works */
	struct mutex listen_lock;	/* see Locks above */
	struct rdma_cm_id *listen_id;
	struct delayed_work listen_work;	/* (re)create the listener */
	struct delayed_work heartbeat_work;

	spinlock_t reap_lock;		/* see Locks above */
	struct list_head reap_list;
	struct work_struct reap_work;

	struct kobject *kobj;		/* /sys/kernel/sdsm */
	struct kobject *nodes_kobj;	/* /sys/kernel/sdsm/nodes */
};

extern struct sdsm_cluster sdsm_cl;

/* A message of a session kept until the peer acknowledges it. */
struct sdsm_sess_msg {
	u16 type;
	u16 len;
	struct page *page;		/* referenced, or NULL */
	u8 payload[SDSM_MSG_MAX_PAYLOAD];
};

/* A received message as handlers see it; valid only during the call. */
struct sdsm_msg {
	struct sdsm_peer *peer;
	u16 type;
	u32 len;
	const void *payload;
	struct page *page;	/* NULL unless the sender attached one */
	struct sdsm_rx_slot *slot;	/* its receive; NULL: this node's */
};

typedef void (*sdsm_handler_fn)(const struct sdsm_msg *msg);

/* sdsm_transport.c */
struct page *sdsm_msg_take_page(const struct sdsm_msg *msg,
				struct page *fresh);

/* sdsm_cluster.c */
void sdsm_queue(u16 dst, u16 type, const void *payload, u32 len,
		struct page *page);
bool sdsm_queue_cork(u16 dst);
void sdsm_queue_uncork(u16 dst);
void sdsm_queue_drain_self(void);
void sdsm_queues_purge(void);
bool sdsm_node_usable(unsigned int node);
bool sdsm_node_up(unsigned int node);
unsigned int sdsm_node_epoch(unsigned int node);
void sdsm_peer_reset(struct sdsm_peer *peer, const char *why);
int sdsm_handler_register(u16 type, sdsm_handler_fn fn);
void sdsm_handler_unregister(u16 type);
int sdsm_peer_notifier_register(struct notifier_block *nb);
int sdsm_peer_notifier_unregister(struct notifier_block *nb);
const char *sdsm_peer_state_name(enum sdsm_peer_state state);
void sdsm_peer_kick(struct sdsm_peer *peer);
enum sdsm_peer_state sdsm_peer_member_state(struct sdsm_peer *peer);
enum sdsm_peer_state sdsm_peer_shown_state(struct sdsm_peer *peer);
void sdsm_peer_set_state(struct sdsm_peer *peer, enum sdsm_peer_state state);
void sdsm_conn_established(struct sdsm_conn *conn);
void sdsm_msg_dispatch(struct sdsm_conn *conn, const struct sdsm_msg *msg);
void sdsm_session_rx(struct sdsm_conn *conn, const struct sdsm_msg *msg,
		     u32 seq);
bool sdsm_session_hello_rx(struct sdsm_conn *conn,
			   const struct sdsm_wire_hello *hello);
void sdsm_session_ack_rx(struct sdsm_conn *conn, u32 ack);
int sdsm_session_tx(struct sdsm_conn *conn, u16 type, u32 resend,
		    struct sdsm_wire_hdr *hdr, struct page **page);
bool sdsm_session_room(struct sdsm_conn *conn);
u32 sdsm_session_ack(struct sdsm_conn *conn);
void sdsm_session_bye(struct sdsm_conn *conn);
u64 sdsm_pattern_word(unsigned int node_id, u64 incarnation, unsigned int i);
int sdsm_cluster_start(void);
void sdsm_cluster_run(void);
void sdsm_cluster_stop(void);
void sdsm_cluster_free(void);

/* sdsm_transport.c */
struct sdsm_conn *sdsm_conn_get(struct sdsm_peer *peer);
struct sdsm_conn *sdsm_conn_get_pending(struct sdsm_peer *peer);
void sdsm_conn_hello(struct sdsm_conn *conn);
void sdsm_conn_put(struct sdsm_conn *conn);
int sdsm_conn_send(struct sdsm_conn *conn, u16 type, const void *payload,
		   u32 len, struct page *page, bool wait);
int sdsm_conn_resend(struct sdsm_conn *conn, u32 seq);
int sdsm_conn_send_train(struct sdsm_conn *conn, const struct sdsm_wmsg *m,
			 unsigned int n, bool wait);
bool sdsm_inject_take(unsigned int *count);
void sdsm_inject_pause(const unsigned int *ms);
void sdsm_conn_fail(struct sdsm_conn *conn, const char *why);
void sdsm_conn_reap(struct sdsm_conn *conn);
void sdsm_rx_work(struct work_struct *work);
void sdsm_reap_sync(void);
int sdsm_connect_active(struct sdsm_peer *peer);
int sdsm_transport_start(void);
void sdsm_transport_goodbye(void);
void sdsm_transport_stop(void);
void sdsm_transport_exit(void);

/* sdsm_sysfs.c */
int sdsm_sysfs_init(void);
void sdsm_sysfs_exit(void);

#endif /* SDSM_H */
