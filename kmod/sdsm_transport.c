// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm transport: rdma_cm connections, RC QPs, message send and receive,
 * and the ib_client that follows RDMA devices coming and going.
 *
 * Connection rule: the lower node id connects, the higher one listens on
 * its own address of nodes= (port port=) and accepts.  The connect private
 * data carries a version handshake (struct sdsm_wire_connect) that the
 * passive side checks before it accepts; a reject carries a reason the
 * active side logs.
 *
 * Authentication (auth=hmac-sha256, the default): both sides prove that
 * they know the cluster secret, a logon key read once at module load, with
 * HMAC-SHA256 over struct sdsm_wire_auth_input (both node ids, both
 * incarnations, both fresh nonces, and a label per direction).  The connect
 * request carries the active side's nonce; the accept carries the passive
 * side's nonce and MAC, which the active side verifies before it treats the
 * connection as established; the active side then sends AUTH, the first
 * message on the QP, with its MAC.  Until AUTH verifies, the passive side
 * keeps the connection in peer->pending: it processes no other message and
 * leaves the peer's connection in use alone.  A failed check fails the
 * connection and is logged with the peer's address.  auth=none sends zero
 * MACs and checks none; both sides must run the same mode.
 *
 * A send carries a train of 1 to SDSM_TRAIN_MAX messages (sdsm_wire.h):
 * every posted receive has one scatter element for the train's header
 * slots and SDSM_TRAIN_MAX page-sized ones, and a send has one for its
 * header slots and one per page, so a page crosses the wire as part of a
 * plain SEND and no memory is ever exposed to remote access; local
 * elements use the PD's local_dma_lkey.  The send queues make trains of
 * the messages queued for a peer (sdsm_cluster.c).  Sends in flight are
 * bounded by SDSM_TX_DEPTH slots; a sender sleeps (bounded) for a free one.
 * Completions arrive in softirq through ib_cqe.done; receives are queued
 * to the connection's rx_work, which hands their messages to
 * sdsm_msg_dispatch() in process context in arrival order and then
 * reposts the receive.
 *
 * Lifetime: a struct sdsm_conn is attached to its peer (peer->conn) or owned
 * by the reaper, never both.  Only the reaper (sdsm_conn_destroy) releases
 * the cm_id and verbs objects, always in this order: mark DYING, disconnect,
 * destroy the cm_id (this waits for running cm handlers, so the reaper
 * holds no lock), drain the QP, cancel rx_work, destroy QP, CQ, buffers, PD.
 * A cm handler never destroys its own cm_id and always returns 0, except for
 * a rejected CONNECT_REQUEST that has no conn yet (rdma_cm then destroys the
 * new id).  Device removal (sdsm_ib_remove) detaches every connection on the
 * device and runs the reaper synchronously, before rdma_cm's own removal,
 * so a later RDMA_CM_EVENT_DEVICE_REMOVAL finds nothing of ours.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <keys/user-type.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/key.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "sdsm.h"
#include "sdsm_auth_input.h"
#include "sdsm_stats.h"
#include "sdsm_trace.h"
#include "sdsm_train.h"

/*
 * A sender may fill the receives after which the peer returns credits
 * with trains: the ring of the session must hold their messages, or the
 * sender would wait for an acknowledgment only the peer's traffic brings.
 */
static_assert(SDSM_CREDIT_BATCH * SDSM_TRAIN_MAX <= SDSM_SESS_RING);

/*
 * Tests only: the next N sends that carry a page fail as if their DMA
 * mapping had failed.  Documentation/transport.rst, "Fault injection".
 */
static unsigned int sdsm_inject_dma_errors;
module_param_named(inject_dma_errors, sdsm_inject_dma_errors, uint, 0644);
MODULE_PARM_DESC(inject_dma_errors,
		 "tests only: fail the DMA mapping of the next N page sends (default 0)");

/**
 * sdsm_inject_take - consume one injected fault of a test-only counter
 * @count: the module parameter counting the faults still to inject
 *
 * Return: true if one was armed (and is now used).
 */
bool sdsm_inject_take(unsigned int *count)
{
	unsigned int n = READ_ONCE(*count), old;

	while (n) {
		old = cmpxchg(count, n, n - 1);
		if (old == n)
			return true;
		n = old;
	}
	return false;
}

/**
 * sdsm_inject_pause - a test-only pause that ends early once its parameter
 *	is written back to 0, so a test need not sleep it out
 * @ms: the module parameter holding the pause, in ms (at most 60000)
 *
 * Interruptible: no hung-task report for a long pause; a signal ends it.
 */
void sdsm_inject_pause(const unsigned int *ms)
{
	unsigned long end = jiffies +
			    msecs_to_jiffies(min(READ_ONCE(*ms), 60000U));

	while (READ_ONCE(*ms) && time_before(jiffies, end) &&
	       !signal_pending(current))
		msleep_interruptible(20);
}

static void sdsm_conn_release(struct kref *ref)
{
	kfree(container_of(ref, struct sdsm_conn, ref));
}

void sdsm_conn_put(struct sdsm_conn *conn)
{
	kref_put(&conn->ref, sdsm_conn_release);
}

/* Reference the peer's current connection, if any. */
struct sdsm_conn *sdsm_conn_get(struct sdsm_peer *peer)
{
	struct sdsm_conn *conn;

	spin_lock(&peer->lock);
	conn = peer->conn;
	if (conn)
		kref_get(&conn->ref);
	spin_unlock(&peer->lock);
	return conn;
}

/* Reference the peer's connection waiting for its AUTH, if any. */
struct sdsm_conn *sdsm_conn_get_pending(struct sdsm_peer *peer)
{
	struct sdsm_conn *conn;

	spin_lock(&peer->lock);
	conn = peer->pending;
	if (conn)
		kref_get(&conn->ref);
	spin_unlock(&peer->lock);
	return conn;
}

/*
 * Mark a connection broken; the peer work detaches and reaps it.  Its
 * receive worker may be waiting for its session's UP report
 * (sdsm_session_rx()): wake it, so that the reap does not wait for the
 * end of that wait.  Any context; the first reason is kept for the log.
 */
void sdsm_conn_fail(struct sdsm_conn *conn, const char *why)
{
	if (test_and_set_bit(SDSM_CONN_FAILED, &conn->flags))
		return;
	conn->fail_reason = why;
	wake_up_all(&conn->peer->report_wait);
	sdsm_peer_kick(conn->peer);
}

static struct sdsm_conn *sdsm_conn_alloc(struct sdsm_peer *peer, bool active)
{
	struct sdsm_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	conn->peer = peer;
	conn->active = active;
	conn->created = jiffies;
	conn->last_rx = jiffies;
	spin_lock_init(&conn->rx_lock);
	INIT_LIST_HEAD(&conn->rx_list);
	spin_lock_init(&conn->tx_lock);
	INIT_LIST_HEAD(&conn->tx_free);
	conn->tx_credits = SDSM_RX_DEPTH;
	atomic_set(&conn->rx_owed, 0);
	init_waitqueue_head(&conn->tx_wait);
	INIT_LIST_HEAD(&conn->reap_node);
	INIT_WORK(&conn->rx_work, sdsm_rx_work);
	get_random_bytes(conn->nonce, sizeof(conn->nonce));
	return conn;
}

/* ------------------------------------------------------------------ */
/* Authentication                                                      */

/* Smallest cluster secret accepted, in bytes (HMAC-SHA256 wants >= 32). */
#define SDSM_AUTH_SECRET_MIN	16

/*
 * Read the cluster secret (the logon key auth_key) and key hmac(sha256)
 * with it.  The key is looked up in the keyrings of the process that loads
 * the module; only the tfm keeps the secret, and freeing the tfm zeroes it.
 * Context: module init.
 */
static int sdsm_auth_start(void)
{
	const struct user_key_payload *payload;
	struct crypto_shash *tfm;
	struct key *key;
	int ret;

	if (!sdsm_cl.auth_key) {
		pr_warn("auth=none: peers are NOT authenticated; any host that reaches port %u can join as any node\n",
			sdsm_cl.port);
		return 0;
	}
	key = request_key(&key_type_logon, sdsm_cl.auth_key, NULL);
	if (IS_ERR(key)) {
		ret = PTR_ERR(key);
		pr_err("no cluster secret: logon key '%s' not found (%d); add it (keyctl padd logon %s @u < KEYFILE, or sdsmctl join) or load with auth=none\n",
		       sdsm_cl.auth_key, ret, sdsm_cl.auth_key);
		return ret;
	}
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm)) {
		ret = PTR_ERR(tfm);
		pr_err("cannot allocate hmac(sha256): %d\n", ret);
		goto out_put_key;
	}
	down_read(&key->sem);
	payload = user_key_payload_locked(key);
	if (!payload) {
		ret = -EKEYREVOKED;
		pr_err("cluster secret '%s' was revoked\n", sdsm_cl.auth_key);
	} else if (payload->datalen < SDSM_AUTH_SECRET_MIN) {
		ret = -EINVAL;
		pr_err("cluster secret '%s' has %u bytes, fewer than %u\n",
		       sdsm_cl.auth_key, payload->datalen,
		       SDSM_AUTH_SECRET_MIN);
	} else {
		ret = crypto_shash_setkey(tfm, payload->data,
					  payload->datalen);
		if (ret)
			pr_err("cannot key hmac(sha256): %d\n", ret);
	}
	up_read(&key->sem);
	if (ret)
		goto out_free_tfm;
	key_put(key);
	sdsm_cl.auth_tfm = tfm;
	return 0;

out_free_tfm:
	crypto_free_shash(tfm);
out_put_key:
	key_put(key);
	return ret;
}

static void sdsm_auth_stop(void)
{
	if (!sdsm_cl.auth_tfm)
		return;
	crypto_free_shash(sdsm_cl.auth_tfm);	/* zeroes the keyed state */
	sdsm_cl.auth_tfm = NULL;
}

/*
 * MAC one direction of the handshake of @conn into @mac: @label says who
 * proves (SDSM_AUTH_LABEL_ACCEPT: the passive side, _AUTH: the active
 * side).  The input is sdsm_auth_input_fill()'s, checked on the host by
 * tests/host/test_auth.c.  With auth=none the MAC is all zero.  Process
 * context.
 */
static int sdsm_auth_mac(struct sdsm_conn *conn, const char *label, u8 *mac)
{
	const struct sdsm_auth_side me = {
		.id = sdsm_cl.node_id,
		.incarnation = sdsm_cl.incarnation,
		.nonce = conn->nonce,
	};
	const struct sdsm_auth_side peer = {
		.id = conn->peer->id,
		.incarnation = conn->remote_incarnation,
		.nonce = conn->remote_nonce,
	};
	struct sdsm_wire_auth_input in;
	int ret;

	memset(mac, 0, SDSM_AUTH_MAC_SIZE);
	if (!sdsm_cl.auth_tfm)
		return 0;
	sdsm_auth_input_fill(&in, label, sdsm_cl.nr_nodes, conn->active,
			     &me, &peer);
	ret = crypto_shash_tfm_digest(sdsm_cl.auth_tfm, (const u8 *)&in,
				      sizeof(in), mac);
	memzero_explicit(&in, sizeof(in));
	return ret;
}

/* True if @mac is the peer's proof for @label on @conn. */
static bool sdsm_auth_check(struct sdsm_conn *conn, const char *label,
			    const u8 *mac)
{
	u8 want[SDSM_AUTH_MAC_SIZE];
	bool ok;

	if (!sdsm_cl.auth_tfm)
		return true;
	if (sdsm_auth_mac(conn, label, want))
		return false;
	ok = !crypto_memneq(want, mac, SDSM_AUTH_MAC_SIZE);
	memzero_explicit(want, sizeof(want));
	return ok;
}

/*
 * Passive side: the AUTH message of a pending connection.  If it verifies,
 * the connection replaces the peer's current one.
 */
static void sdsm_auth_rx(struct sdsm_conn *conn, const struct sdsm_msg *msg)
{
	const struct sdsm_wire_auth *auth = msg->payload;
	struct sdsm_peer *peer = conn->peer;
	struct sdsm_conn *old = NULL;
	bool promoted = false;

	if (conn->active || test_bit(SDSM_CONN_AUTHED, &conn->flags) ||
	    msg->len < sizeof(*auth) || msg->page) {
		pr_warn_ratelimited("node %u (%pI4): unexpected AUTH message\n",
				    peer->id, &peer->addr.sin_addr);
		sdsm_conn_fail(conn, "unexpected AUTH");
		return;
	}
	if (!sdsm_auth_check(conn, SDSM_AUTH_LABEL_AUTH, auth->mac)) {
		pr_warn_ratelimited("node %u (%pI4): authentication failed (wrong cluster secret): connection refused\n",
				    peer->id, &peer->addr.sin_addr);
		sdsm_conn_fail(conn, "authentication failed");
		return;
	}
	spin_lock(&peer->lock);
	if (peer->pending == conn && !READ_ONCE(sdsm_cl.shutdown) &&
	    !test_bit(SDSM_CONN_FAILED, &conn->flags)) {
		set_bit(SDSM_CONN_AUTHED, &conn->flags);
		peer->pending = NULL;
		old = peer->conn;
		peer->conn = conn;
		sdsm_peer_set_state(peer, SDSM_PEER_CONNECTING);
		promoted = true;
	}
	spin_unlock(&peer->lock);
	if (!promoted)
		return;	/* superseded or failing: the peer work reaps it */
	if (old) {
		pr_info("node %u connects again (incarnation %llx, was %llx): dropping the old connection\n",
			peer->id, conn->remote_incarnation,
			old->remote_incarnation);
		sdsm_conn_reap(old);
	}
	sdsm_conn_hello(conn);
	sdsm_peer_kick(peer);
}

/* ------------------------------------------------------------------ */
/* Receive path                                                        */

static int sdsm_rx_post(struct sdsm_conn *conn, struct sdsm_rx_slot *slot)
{
	struct ib_sge sge[1 + SDSM_TRAIN_MAX];
	struct ib_recv_wr wr = {};
	int i, ret;

	ib_dma_sync_single_for_device(conn->dev, slot->hdr_dma,
				      SDSM_TRAIN_HDRS, DMA_FROM_DEVICE);
	sge[0].addr = slot->hdr_dma;
	sge[0].length = SDSM_TRAIN_HDRS;
	sge[0].lkey = conn->pd->local_dma_lkey;
	for (i = 0; i < SDSM_TRAIN_MAX; i++) {
		ib_dma_sync_single_for_device(conn->dev, slot->page_dma[i],
					      PAGE_SIZE, DMA_FROM_DEVICE);
		sge[1 + i].addr = slot->page_dma[i];
		sge[1 + i].length = PAGE_SIZE;
		sge[1 + i].lkey = conn->pd->local_dma_lkey;
	}
	wr.wr_cqe = &slot->cqe;
	wr.sg_list = sge;
	wr.num_sge = ARRAY_SIZE(sge);

	spin_lock_bh(&conn->rx_lock);
	if (test_bit(SDSM_CONN_DYING, &conn->flags))
		ret = -ENOTCONN;
	else
		ret = ib_post_recv(conn->qp, &wr, NULL);
	spin_unlock_bh(&conn->rx_lock);
	return ret;
}

/*
 * The credits a received send returns (struct sdsm_conn, Credits), and the
 * messages of the session it acknowledges, both in the first header of its
 * train, taken at its completion:
 * our sends must not wait until the receive worker reaches the message,
 * and a credit comes back no earlier than the acknowledgment of the
 * message that used it.  More credits than receives exist is a malformed
 * message.  Context: softirq.
 */
static void sdsm_credits_rx(struct sdsm_conn *conn, struct sdsm_rx_slot *slot)
{
	const struct sdsm_wire_hdr *hdr = slot->hdr;
	unsigned int n, used;

	if (slot->byte_len < sizeof(*hdr))
		return;		/* sdsm_rx_process() fails the runt */
	ib_dma_sync_single_for_cpu(conn->dev, slot->hdr_dma, sizeof(*hdr),
				   DMA_FROM_DEVICE);
	if (hdr->ack)
		sdsm_session_ack_rx(conn, be32_to_cpu(hdr->ack));
	n = be16_to_cpu(hdr->credits);
	if (!n)
		return;
	spin_lock(&conn->tx_lock);
	used = SDSM_RX_DEPTH - conn->tx_credits;
	if (n <= used)
		conn->tx_credits += n;
	spin_unlock(&conn->tx_lock);
	if (n > used) {
		pr_err("node %u: malformed message: %u credits returned, %u in use\n",
		       conn->peer->id, n, used);
		sdsm_conn_fail(conn, "malformed message");
		return;
	}
	wake_up(&conn->tx_wait);
	/* A CREDIT of ours may have waited for a credit to go in. */
	if (atomic_read(&conn->rx_owed) >= SDSM_CREDIT_BATCH)
		queue_work(sdsm_cl.wq, &conn->rx_work);
}

static void sdsm_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdsm_rx_slot *slot =
		container_of(wc->wr_cqe, struct sdsm_rx_slot, cqe);
	struct sdsm_conn *conn = slot->conn;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("node %u: receive failed: %s\n",
					   conn->peer->id,
					   ib_wc_status_msg(wc->status));
		sdsm_conn_fail(conn, "receive completion error");
		return;
	}
	WRITE_ONCE(conn->last_rx, jiffies);
	if (test_bit(SDSM_CONN_AUTHED, &conn->flags))
		WRITE_ONCE(conn->peer->heard, jiffies);
	slot->byte_len = wc->byte_len;
	sdsm_credits_rx(conn, slot);
	spin_lock(&conn->rx_lock);
	list_add_tail(&slot->node, &conn->rx_list);
	spin_unlock(&conn->rx_lock);
	queue_work(sdsm_cl.wq, &conn->rx_work);
}

/* Hand message @hdr of a received train, page @page or NULL, on. */
static void sdsm_rx_deliver(struct sdsm_conn *conn, struct sdsm_rx_slot *slot,
			    const struct sdsm_wire_hdr *hdr, int page)
{
	struct sdsm_peer *peer = conn->peer;
	struct sdsm_msg msg = { .peer = peer };
	u32 seq = be32_to_cpu(hdr->seq);

	msg.type = be16_to_cpu(hdr->type);
	msg.len = be16_to_cpu(hdr->len);
	msg.payload = hdr + 1;
	if (page >= 0) {
		ib_dma_sync_single_for_cpu(conn->dev, slot->page_dma[page],
					   PAGE_SIZE, DMA_FROM_DEVICE);
		msg.page = slot->page[page];
		msg.slot = slot;
	}
	atomic64_inc(&peer->rx_msgs);
	trace_sdsm_msg_recv(peer->id, msg.type, msg.len, !!msg.page, seq);
	if (msg.type == SDSM_MSG_AUTH) {
		sdsm_auth_rx(conn, &msg);
		return;
	}
	if (!test_bit(SDSM_CONN_AUTHED, &conn->flags)) {
		pr_warn_ratelimited("node %u (%pI4): message type %u before authentication: connection refused\n",
				    peer->id, &peer->addr.sin_addr, msg.type);
		sdsm_conn_fail(conn, "message before authentication");
		return;
	}
	if (msg.type == SDSM_MSG_CREDIT)
		return;		/* its credits went in at its completion */
	if (msg.type == SDSM_MSG_BYE) {
		sdsm_session_bye(conn);
		return;
	}
	if (seq)
		sdsm_session_rx(conn, &msg, seq);
	else
		sdsm_msg_dispatch(conn, &msg);
}

/*
 * Check one received send, a train of messages (sdsm_train_parse()), and
 * hand each to its handler in order; nothing of a malformed train is
 * handed on.
 */
static void sdsm_rx_process(struct sdsm_conn *conn, struct sdsm_rx_slot *slot)
{
	struct sdsm_peer *peer = conn->peer;
	struct sdsm_train t;
	unsigned int i;
	bool failed;

	ib_dma_sync_single_for_cpu(conn->dev, slot->hdr_dma, SDSM_TRAIN_HDRS,
				   DMA_FROM_DEVICE);
	if (sdsm_train_parse(slot->hdr, slot->byte_len, &t)) {
		pr_err("node %u: malformed message: %s (%u bytes)\n",
		       peer->id, t.why, slot->byte_len);
		sdsm_conn_fail(conn, "malformed message");
		return;
	}
	atomic64_add(slot->byte_len, &peer->rx_bytes);
	failed = test_bit(SDSM_CONN_FAILED, &conn->flags);
	for (i = 0; i < t.count; i++) {
		/* One that failed the connection: the session resends. */
		if (i && (test_bit(SDSM_CONN_DYING, &conn->flags) ||
			  (!failed &&
			   test_bit(SDSM_CONN_FAILED, &conn->flags))))
			return;
		sdsm_rx_deliver(conn, slot,
				slot->hdr + i * SDSM_HDR_SLOT_SIZE, t.page[i]);
	}
}

/**
 * sdsm_msg_take_page - take a received page, leaving another in its place
 * @msg: the message being handled, with its page
 * @fresh: an order-0 page of the caller's, to receive into next
 *
 * The zero-copy receive of a page: the caller owns @msg->page from now
 * on, and the receive is posted again with @fresh when the handler
 * returns (sdsm_rx_work()).  The device wrote all of @msg->page: every page
 * of a train is a whole page (sdsm_rx_process()).
 *
 * Context: the handler of @msg, in the connection's receive worker.
 * Return: @msg->page, or NULL if it cannot be taken (a message this node
 * sent itself, or @fresh cannot be mapped for the device): the caller
 * copies it, and @fresh stays the caller's.
 */
struct page *sdsm_msg_take_page(const struct sdsm_msg *msg,
				struct page *fresh)
{
	struct sdsm_rx_slot *slot = msg->slot;
	struct ib_device *dev;
	struct page *got;
	int i;
	u64 dma;

	if (!slot || !msg->page)
		return NULL;
	for (i = 0; slot->page[i] != msg->page; i++)
		if (i == SDSM_TRAIN_MAX - 1)
			return NULL;
	dev = slot->conn->dev;
	dma = ib_dma_map_page(dev, fresh, 0, PAGE_SIZE, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, dma))
		return NULL;
	ib_dma_unmap_page(dev, slot->page_dma[i], PAGE_SIZE, DMA_FROM_DEVICE);
	got = slot->page[i];
	slot->page[i] = fresh;
	slot->page_dma[i] = dma;
	return got;
}

void sdsm_rx_work(struct work_struct *work)
{
	struct sdsm_conn *conn = container_of(work, struct sdsm_conn, rx_work);
	struct sdsm_rx_slot *slot;
	int budget = SDSM_RX_DEPTH;
	bool corked;
	int ret;

	while (budget--) {
		spin_lock_bh(&conn->rx_lock);
		slot = list_first_entry_or_null(&conn->rx_list,
						struct sdsm_rx_slot, node);
		if (slot)
			list_del_init(&slot->node);
		spin_unlock_bh(&conn->rx_lock);
		if (!slot)
			break;
		if (test_bit(SDSM_CONN_DYING, &conn->flags))
			continue;
		/* What the handlers answer a train with leaves as trains. */
		corked = sdsm_queue_cork(conn->peer->id);
		sdsm_rx_process(conn, slot);
		if (corked)
			sdsm_queue_uncork(conn->peer->id);
		ret = sdsm_rx_post(conn, slot);
		if (!ret) {
			/* A sender waiting to take its last credit may go. */
			if (atomic_inc_return(&conn->rx_owed) == 1)
				wake_up(&conn->tx_wait);
		} else if (ret != -ENOTCONN) {
			pr_err("node %u: cannot repost a receive: %d\n",
			       conn->peer->id, ret);
			sdsm_conn_fail(conn, "receive repost failed");
		}
	}
	if (atomic_read(&conn->rx_owed) >= SDSM_CREDIT_BATCH)
		sdsm_conn_send(conn, SDSM_MSG_CREDIT, NULL, 0, NULL, false);
	/* More queued: yield so other peers' receives get their turn. */
	if (budget < 0)
		queue_work(sdsm_cl.wq, &conn->rx_work);
}

/* ------------------------------------------------------------------ */
/* Send path                                                           */

/*
 * A page message failed (the peer never acknowledged it: the retries ran
 * out, or the connection failed with it outstanding for a second or more)
 * although the peer kept sending to us after it was posted, and no page
 * ever got through on the connection: the frames of a page, as large as
 * the path MTU, are dropped on the way (an interface or switch with a
 * smaller MTU than the RDMA device's).  RC keeps order, so nothing sent
 * after the page arrives either, and the connection fails and comes back,
 * over and over, each time for a reason that hides this one ("heartbeat
 * timed out", "disconnected by peer"): say it once per peer, until a page
 * gets through again.
 */
static void sdsm_tx_page_failed(struct sdsm_conn *conn,
				const struct sdsm_tx_slot *slot,
				enum ib_wc_status st)
{
	struct sdsm_peer *peer = conn->peer;

	if ((st != IB_WC_RETRY_EXC_ERR &&
	     time_before(jiffies, slot->posted + HZ)) ||
	    READ_ONCE(sdsm_cl.shutdown) ||
	    !time_after(READ_ONCE(conn->last_rx), slot->posted) ||
	    test_bit(SDSM_CONN_PAGE_OK, &conn->flags) ||
	    xchg(&peer->page_mtu_logged, 1))
		return;
	pr_err("node %u (%pI4): our messages with a page are never acknowledged while the peer's arrive: frames of the RDMA path MTU (%d) are dropped on the way; give every node's interface the MTU the link really carries\n",
	       peer->id, &peer->addr.sin_addr, conn->path_mtu);
}

/* Unmap and drop the pages of send @slot. */
static void sdsm_tx_unmap(struct sdsm_conn *conn, struct sdsm_tx_slot *slot)
{
	unsigned int i;

	for (i = 0; i < slot->pages; i++) {
		ib_dma_unmap_page(conn->dev, slot->page_dma[i], PAGE_SIZE,
				  DMA_TO_DEVICE);
		put_page(slot->page[i]);
		slot->page[i] = NULL;
	}
	slot->pages = 0;
}

static void sdsm_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdsm_tx_slot *slot =
		container_of(wc->wr_cqe, struct sdsm_tx_slot, cqe);
	struct sdsm_conn *conn = slot->conn;

	if (wc->status == IB_WC_SUCCESS && slot->pages) {
		set_bit(SDSM_CONN_PAGE_OK, &conn->flags);
		WRITE_ONCE(conn->peer->page_mtu_logged, 0);
	} else if (wc->status != IB_WC_SUCCESS && slot->pages) {
		sdsm_tx_page_failed(conn, slot, wc->status);
	}
	sdsm_tx_unmap(conn, slot);
	spin_lock(&conn->tx_lock);
	list_add(&slot->node, &conn->tx_free);
	conn->tx_taken--;
	spin_unlock(&conn->tx_lock);
	wake_up(&conn->tx_wait);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("node %u: send failed: %s\n",
					   conn->peer->id,
					   ib_wc_status_msg(wc->status));
		sdsm_conn_fail(conn, "send completion error");
	}
}

/*
 * May a message of @type take a credit now?  The last credit only with
 * credits to return (struct sdsm_conn, Credits); a CREDIT message only
 * when there are enough to return.  @type 0: a message of the session
 * sent again.  Locks: @conn->tx_lock.
 */
static bool sdsm_tx_credit_ok(struct sdsm_conn *conn, u16 type)
{
	int owed = atomic_read(&conn->rx_owed);

	if (type == SDSM_MSG_CREDIT)
		return conn->tx_credits && owed >= SDSM_CREDIT_BATCH;
	/* A new message of the session also needs an entry of its ring. */
	if (type > SDSM_MSG_LINK_LAST && !sdsm_session_room(conn))
		return false;
	return conn->tx_credits > 1 || (conn->tx_credits && owed);
}

/*
 * Take a free send slot and a credit for a message of @type, and the
 * credits it returns (@credits); true when done (slot, or NULL if dying
 * or, for a CREDIT message, if it is not due).
 */
static bool sdsm_tx_get(struct sdsm_conn *conn, u16 type,
			struct sdsm_tx_slot **slot, u16 *credits)
{
	bool done = true;

	spin_lock_bh(&conn->tx_lock);
	*slot = NULL;
	if (test_bit(SDSM_CONN_DYING, &conn->flags))
		goto out;
	if (list_empty(&conn->tx_free) || !sdsm_tx_credit_ok(conn, type)) {
		done = type == SDSM_MSG_CREDIT;
		goto out;
	}
	*slot = list_first_entry(&conn->tx_free, struct sdsm_tx_slot, node);
	list_del_init(&(*slot)->node);
	conn->tx_taken++;
	conn->tx_credits--;
	*credits = atomic_xchg(&conn->rx_owed, 0);
out:
	spin_unlock_bh(&conn->tx_lock);
	return done;
}

static void sdsm_tx_put(struct sdsm_conn *conn, struct sdsm_tx_slot *slot)
{
	spin_lock_bh(&conn->tx_lock);
	list_add(&slot->node, &conn->tx_free);
	conn->tx_taken--;
	spin_unlock_bh(&conn->tx_lock);
	wake_up(&conn->tx_wait);
}

/* Give back a slot, its credit and the credits it was to return, unsent. */
static void sdsm_tx_unget(struct sdsm_conn *conn, struct sdsm_tx_slot *slot,
			  u16 credits)
{
	spin_lock_bh(&conn->tx_lock);
	list_add(&slot->node, &conn->tx_free);
	conn->tx_taken--;
	conn->tx_credits++;
	atomic_add(credits, &conn->rx_owed);
	spin_unlock_bh(&conn->tx_lock);
	wake_up(&conn->tx_wait);
}

static bool sdsm_tx_idle(struct sdsm_conn *conn)
{
	bool idle;

	spin_lock_bh(&conn->tx_lock);
	idle = !conn->tx_taken;
	spin_unlock_bh(&conn->tx_lock);
	return idle;
}

/*
 * Post a train of @n messages @m; @resend: instead, message @resend of the
 * session alone, taken from its ring.  See sdsm_conn_send_train().
 */
static int __sdsm_conn_send(struct sdsm_conn *conn, const struct sdsm_wmsg *m,
			    unsigned int n, bool wait, u32 resend)
{
	struct sdsm_peer *peer = conn->peer;
	struct ib_sge sge[1 + SDSM_TRAIN_MAX];
	struct page *page[SDSM_TRAIN_MAX];
	const struct ib_send_wr *bad_wr;
	struct page *ring_page = NULL;
	struct ib_send_wr wr = {};
	struct sdsm_tx_slot *slot;
	struct sdsm_wire_hdr *hdr;
	unsigned int i, pages = 0, taken = 0;
	u16 type = resend ? 0 : m[0].type;
	bool numbered = false;
	u32 bytes, len = 0;
	u16 credits = 0;
	int ret = 0;

	if (wait) {
		ret = wait_event_timeout(conn->tx_wait,
					 sdsm_tx_get(conn, type, &slot,
						     &credits),
					 msecs_to_jiffies(sdsm_cl.peer_timeout_ms));
		if (!ret)
			return -ETIMEDOUT;
		ret = 0;
	} else if (!sdsm_tx_get(conn, type, &slot, &credits)) {
		return -EAGAIN;
	}
	if (!slot)
		return -ENOTCONN;

	for (i = 0; i < (resend ? 1 : n); i++) {
		struct page *pg = resend ? NULL : m[i].page;

		hdr = slot->hdr + i * SDSM_HDR_SLOT_SIZE;
		if (!resend) {
			type = m[i].type;
			len = m[i].len;
			hdr->type = cpu_to_be16(type);
			hdr->len = cpu_to_be16(len);
			if (len)
				memcpy(hdr + 1, m[i].payload, len);
		}
		if (resend || type > SDSM_MSG_LINK_LAST) {
			/*
			 * Numbered and kept until acknowledged, its page too;
			 * a resend's page comes back referenced for this send.
			 * One the ring cannot take ends the train before it.
			 */
			ring_page = pg;
			ret = sdsm_session_tx(conn, type, resend, hdr,
					      &ring_page);
			if (!resend)
				ring_page = NULL;
			if (ret)
				break;
			numbered = true;
			if (resend) {
				type = be16_to_cpu(hdr->type);
				len = be16_to_cpu(hdr->len);
				pg = ring_page;
			}
		} else {
			hdr->seq = 0;
			hdr->ack = cpu_to_be32(sdsm_session_ack(conn));
		}
		hdr->flags = cpu_to_be16(pg ? SDSM_WIRE_F_PAGE : 0);
		hdr->credits = cpu_to_be16(i ? 0 : credits);
		if (pg)
			page[pages++] = pg;
		taken++;
	}
	if (!taken) {
		sdsm_tx_unget(conn, slot, credits);
		return ret == -EALREADY ? 0 : ret;
	}
	ret = 0;
	bytes = sdsm_train_close(slot->hdr, taken, pages);
	sge[0].addr = slot->hdr_dma;
	sge[0].length = bytes;
	sge[0].lkey = conn->pd->local_dma_lkey;
	for (i = 0; i < pages; i++) {
		u64 dma = ib_dma_map_page(conn->dev, page[i], 0, PAGE_SIZE,
					  DMA_TO_DEVICE);

		if (ib_dma_mapping_error(conn->dev, dma) ||
		    unlikely(sdsm_inject_take(&sdsm_inject_dma_errors))) {
			if (!ib_dma_mapping_error(conn->dev, dma))
				ib_dma_unmap_page(conn->dev, dma, PAGE_SIZE,
						  DMA_TO_DEVICE);
			sdsm_tx_unmap(conn, slot);
			sdsm_tx_put(conn, slot);
			pr_err_ratelimited("node %u: page of message %u not mappable for DMA: connection failed\n",
					   peer->id, type);
			sdsm_conn_fail(conn, "DMA mapping failed");
			ret = -EIO;
			goto out;
		}
		get_page(page[i]);
		slot->page[i] = page[i];
		slot->page_dma[i] = dma;
		slot->pages = i + 1;
		sge[1 + i].addr = dma;
		sge[1 + i].length = PAGE_SIZE;
		sge[1 + i].lkey = conn->pd->local_dma_lkey;
		bytes += PAGE_SIZE;
	}
	slot->posted = jiffies;
	wr.wr_cqe = &slot->cqe;
	wr.sg_list = sge;
	wr.num_sge = 1 + pages;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;

	spin_lock_bh(&conn->tx_lock);
	if (test_bit(SDSM_CONN_DYING, &conn->flags)) {
		ret = -ENOTCONN;
	} else {
		ib_dma_sync_single_for_device(conn->dev, slot->hdr_dma,
					      SDSM_TRAIN_HDRS,
					      DMA_TO_DEVICE);
		ret = ib_post_send(conn->qp, &wr, &bad_wr);
	}
	spin_unlock_bh(&conn->tx_lock);
	if (ret) {
		sdsm_tx_unmap(conn, slot);
		sdsm_tx_put(conn, slot);
		if (ret != -ENOTCONN) {
			pr_err("node %u: ib_post_send failed: %d\n",
			       peer->id, ret);
			sdsm_conn_fail(conn, "send post failed");
		}
		goto out;
	}
	atomic64_add(taken, &peer->tx_msgs);
	atomic64_add(bytes, &peer->tx_bytes);
	if (taken > 1) {
		sdsm_stat_inc(SDSM_STAT_TRAINS);
		sdsm_stat_add(SDSM_STAT_TRAIN_MSGS, taken);
	}
	for (i = 0; i < taken; i++) {
		hdr = slot->hdr + i * SDSM_HDR_SLOT_SIZE;
		trace_sdsm_msg_send(peer->id, be16_to_cpu(hdr->type),
				    be16_to_cpu(hdr->len),
				    be16_to_cpu(hdr->flags) & SDSM_WIRE_F_PAGE,
				    be32_to_cpu(hdr->seq));
	}
out:
	if (ring_page)
		put_page(ring_page);
	/* The session has them: the next connection sends them if this failed. */
	return numbered || !ret ? taken : ret;
}

/**
 * sdsm_conn_send - send one message on a connection
 * @conn: the connection, referenced by the caller
 * @type: enum sdsm_msg_type
 * @payload: @len bytes copied into the message, may be NULL if @len is 0
 * @len: at most SDSM_MSG_MAX_PAYLOAD
 * @page: optional page sent after the header slots; referenced until the
 *	send completes (for a type of the upper layers, until the peer
 *	acknowledges it), and its contents must not change until then
 * @wait: sleep up to peer_timeout_ms for a send slot and a receive credit
 *	of the peer (struct sdsm_conn, Credits) instead of -EAGAIN
 *
 * A message of the upper layers (a type after SDSM_MSG_LINK_LAST) is
 * numbered in the connection's session and kept until the peer
 * acknowledges it: once numbered it is the session's, sent again on the
 * next connection if this one fails, and this returns 0.  It needs the
 * connection to carry the peer's current session (-ENOTCONN otherwise).
 * A message that cannot be posted once a send slot is taken (its page
 * cannot be mapped for DMA, ib_post_send() fails) fails the connection.
 *
 * Context: process context; may sleep if @wait.
 * Return: 0 once posted (or numbered), -EINVAL, -EMSGSIZE, -EAGAIN,
 * -ETIMEDOUT, -ENOTCONN (connection going away, or not in the session),
 * -EIO (page not mappable: connection failed) or an error of
 * ib_post_send() (connection failed).
 */
int sdsm_conn_send(struct sdsm_conn *conn, u16 type, const void *payload,
		   u32 len, struct page *page, bool wait)
{
	struct sdsm_wmsg m = { .type = type, .len = len, .payload = payload,
			       .page = page };
	int ret = sdsm_conn_send_train(conn, &m, 1, wait);

	return ret < 0 ? ret : 0;
}

/**
 * sdsm_conn_send_train - send several messages of the session in one send
 * @conn: the connection, referenced by the caller
 * @m: the messages, in order, each as for sdsm_conn_send()
 * @n: 1 to SDSM_TRAIN_MAX; more than one: all of the upper layers
 * @wait: as for sdsm_conn_send()
 *
 * One send slot and one receive credit of the peer carry them all, and
 * the peer acknowledges one RC message instead of @n (sdsm_wire.h).  The
 * ring of the session may take fewer than @n (it is full, or older
 * messages are to be sent again first): the train then ends before the
 * first it did not take, and the caller sends the rest later.
 *
 * Context: process context; may sleep if @wait.
 * Return: how many of @m, from the first, were posted or numbered (at
 * least 1); else an error as sdsm_conn_send()'s, and none was.
 */
int sdsm_conn_send_train(struct sdsm_conn *conn, const struct sdsm_wmsg *m,
			 unsigned int n, bool wait)
{
	unsigned int i;

	if (!n || n > SDSM_TRAIN_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!m[i].type || m[i].type >= SDSM_MSG_MAX ||
		    (m[i].len && !m[i].payload) ||
		    (n > 1 && m[i].type <= SDSM_MSG_LINK_LAST))
			return -EINVAL;
		if (m[i].len > SDSM_MSG_MAX_PAYLOAD)
			return -EMSGSIZE;
	}
	return __sdsm_conn_send(conn, m, n, wait, 0);
}

/**
 * sdsm_conn_resend - send message @seq of the session again
 * @conn: the connection, referenced by the caller, that carries the session
 * @seq: a message of the session not acknowledged yet
 *
 * Context: process context; sleeps as sdsm_conn_send() with @wait.
 * Return: 0 once posted, or if the peer acknowledged @seq meanwhile; else
 * as sdsm_conn_send().
 */
int sdsm_conn_resend(struct sdsm_conn *conn, u32 seq)
{
	int ret = __sdsm_conn_send(conn, NULL, 1, true, seq);

	return ret < 0 ? ret : 0;
}

/* ------------------------------------------------------------------ */
/* Verbs resources of one connection                                   */

static void sdsm_qp_event(struct ib_event *ev, void *ctx)
{
	struct sdsm_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		break;
	default:
		pr_err("node %u: QP event %s\n", conn->peer->id,
		       ib_event_msg(ev->event));
		sdsm_conn_fail(conn, "QP error event");
	}
}

static void sdsm_conn_free_bufs(struct sdsm_conn *conn)
{
	struct ib_device *dev = conn->dev;
	int i, j;

	for (i = 0; i < SDSM_RX_DEPTH; i++) {
		struct sdsm_rx_slot *rx = &conn->rx[i];

		for (j = 0; j < SDSM_TRAIN_MAX; j++) {
			if (rx->page_dma[j])
				ib_dma_unmap_page(dev, rx->page_dma[j],
						  PAGE_SIZE, DMA_FROM_DEVICE);
			if (rx->page[j])
				__free_page(rx->page[j]);
		}
		if (rx->hdr_dma)
			ib_dma_unmap_single(dev, rx->hdr_dma, SDSM_TRAIN_HDRS,
					    DMA_FROM_DEVICE);
	}
	for (i = 0; i < SDSM_TX_DEPTH; i++) {
		struct sdsm_tx_slot *tx = &conn->tx[i];

		if (tx->hdr_dma)
			ib_dma_unmap_single(dev, tx->hdr_dma, SDSM_TRAIN_HDRS,
					    DMA_TO_DEVICE);
	}
	kfree(conn->rx_hdrs);
	conn->rx_hdrs = NULL;
	kfree(conn->tx_hdrs);
	conn->tx_hdrs = NULL;
}

static int sdsm_conn_alloc_bufs(struct sdsm_conn *conn)
{
	struct ib_device *dev = conn->dev;
	int i, j;

	conn->rx_hdrs = kcalloc(SDSM_RX_DEPTH, SDSM_TRAIN_HDRS, GFP_KERNEL);
	conn->tx_hdrs = kcalloc(SDSM_TX_DEPTH, SDSM_TRAIN_HDRS, GFP_KERNEL);
	if (!conn->rx_hdrs || !conn->tx_hdrs)
		goto out_free_bufs;

	for (i = 0; i < SDSM_RX_DEPTH; i++) {
		struct sdsm_rx_slot *rx = &conn->rx[i];
		u64 dma;

		rx->conn = conn;
		rx->cqe.done = sdsm_rx_done;
		INIT_LIST_HEAD(&rx->node);
		rx->hdr = conn->rx_hdrs + i * SDSM_TRAIN_HDRS;
		dma = ib_dma_map_single(dev, rx->hdr, SDSM_TRAIN_HDRS,
					DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, dma))
			goto out_free_bufs;
		rx->hdr_dma = dma;
		for (j = 0; j < SDSM_TRAIN_MAX; j++) {
			rx->page[j] = alloc_page(GFP_KERNEL);
			if (!rx->page[j])
				goto out_free_bufs;
			dma = ib_dma_map_page(dev, rx->page[j], 0, PAGE_SIZE,
					      DMA_FROM_DEVICE);
			if (ib_dma_mapping_error(dev, dma))
				goto out_free_bufs;
			rx->page_dma[j] = dma;
		}
	}
	for (i = 0; i < SDSM_TX_DEPTH; i++) {
		struct sdsm_tx_slot *tx = &conn->tx[i];
		u64 dma;

		tx->conn = conn;
		tx->cqe.done = sdsm_tx_done;
		tx->hdr = conn->tx_hdrs + i * SDSM_TRAIN_HDRS;
		dma = ib_dma_map_single(dev, tx->hdr, SDSM_TRAIN_HDRS,
					DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, dma))
			goto out_free_bufs;
		tx->hdr_dma = dma;
		list_add_tail(&tx->node, &conn->tx_free);
	}
	return 0;

out_free_bufs:
	sdsm_conn_free_bufs(conn);
	return -ENOMEM;
}

/*
 * Create PD, CQ, QP and buffers on the cm_id's device and post every
 * receive.  Called from the cm handler (ROUTE_RESOLVED or CONNECT_REQUEST)
 * of conn->cm_id; on failure everything created here is released again.
 */
static int sdsm_conn_create_ib(struct sdsm_conn *conn)
{
	struct rdma_cm_id *id = conn->cm_id;
	struct ib_qp_init_attr attr = {};
	int i, ret;

	conn->dev = id->device;
	if (conn->dev->attrs.max_send_sge < 1 + SDSM_TRAIN_MAX ||
	    conn->dev->attrs.max_recv_sge < 1 + SDSM_TRAIN_MAX) {
		pr_err_ratelimited("%s: %d send and %d receive scatter elements a request; sdsm needs %d\n",
				   dev_name(&conn->dev->dev),
				   conn->dev->attrs.max_send_sge,
				   conn->dev->attrs.max_recv_sge,
				   1 + SDSM_TRAIN_MAX);
		ret = -EOPNOTSUPP;
		goto out_clear;
	}
	conn->pd = ib_alloc_pd(conn->dev, 0);
	if (IS_ERR(conn->pd)) {
		ret = PTR_ERR(conn->pd);
		goto out_clear;
	}
	/* +2 for the drain WRs of ib_drain_qp(). */
	conn->cq = ib_alloc_cq(conn->dev, conn,
			       SDSM_TX_DEPTH + SDSM_RX_DEPTH + 2,
			       0, IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		goto out_dealloc_pd;
	}
	ret = sdsm_conn_alloc_bufs(conn);
	if (ret)
		goto out_free_cq;

	attr.event_handler = sdsm_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_send_wr = SDSM_TX_DEPTH + 1;
	attr.cap.max_recv_wr = SDSM_RX_DEPTH + 1;
	attr.cap.max_send_sge = 1 + SDSM_TRAIN_MAX;
	attr.cap.max_recv_sge = 1 + SDSM_TRAIN_MAX;
	ret = rdma_create_qp(id, conn->pd, &attr);
	if (ret)
		goto out_free_bufs;
	conn->qp = id->qp;

	for (i = 0; i < SDSM_RX_DEPTH; i++) {
		ret = sdsm_rx_post(conn, &conn->rx[i]);
		if (ret)
			goto out_destroy_qp;
	}
	return 0;

out_destroy_qp:
	/* Nothing completed yet: destroying the QP discards the receives. */
	rdma_destroy_qp(id);
	conn->qp = NULL;
out_free_bufs:
	sdsm_conn_free_bufs(conn);
out_free_cq:
	ib_free_cq(conn->cq);
	conn->cq = NULL;
out_dealloc_pd:
	ib_dealloc_pd(conn->pd);
	conn->pd = NULL;
out_clear:
	conn->dev = NULL;
	return ret;
}

static void sdsm_conn_set_dying(struct sdsm_conn *conn)
{
	spin_lock_bh(&conn->tx_lock);
	spin_lock(&conn->rx_lock);
	set_bit(SDSM_CONN_DYING, &conn->flags);
	spin_unlock(&conn->rx_lock);
	spin_unlock_bh(&conn->tx_lock);
	wake_up_all(&conn->tx_wait);
}

/* Release everything of a detached connection; sleeps.  Reaper only. */
static void sdsm_conn_destroy(struct sdsm_conn *conn)
{
	sdsm_conn_set_dying(conn);
	if (conn->cm_id) {
		/*
		 * Sends a DREQ if established, and waits for a running
		 * handler; no handler runs for this conn afterwards.
		 */
		rdma_destroy_id(conn->cm_id);
		conn->cm_id = NULL;
	}
	if (conn->qp) {
		/* Every posted WR completes (flushed) before we free. */
		ib_drain_qp(conn->qp);
		/*
		 * A sender that took a slot before DYING was set gives it
		 * back without sleeping; wait so it never sees freed memory.
		 */
		wait_event(conn->tx_wait, sdsm_tx_idle(conn));
		cancel_work_sync(&conn->rx_work);
		ib_destroy_qp(conn->qp);
		conn->qp = NULL;
	}
	cancel_work_sync(&conn->rx_work);
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	if (conn->dev)
		sdsm_conn_free_bufs(conn);
	if (conn->pd) {
		ib_dealloc_pd(conn->pd);
		conn->pd = NULL;
	}
	sdsm_conn_put(conn);
}

static void sdsm_reap_work(struct work_struct *work)
{
	struct sdsm_conn *conn;

	for (;;) {
		spin_lock(&sdsm_cl.reap_lock);
		conn = list_first_entry_or_null(&sdsm_cl.reap_list,
						struct sdsm_conn, reap_node);
		if (conn)
			list_del_init(&conn->reap_node);
		spin_unlock(&sdsm_cl.reap_lock);
		if (!conn)
			break;
		sdsm_conn_destroy(conn);
	}
}

/* Hand a detached connection to the reaper.  Any process context. */
void sdsm_conn_reap(struct sdsm_conn *conn)
{
	sdsm_conn_set_dying(conn);
	spin_lock(&sdsm_cl.reap_lock);
	list_add_tail(&conn->reap_node, &sdsm_cl.reap_list);
	spin_unlock(&sdsm_cl.reap_lock);
	queue_work(sdsm_cl.wq, &sdsm_cl.reap_work);
}

/* Wait until every connection handed to the reaper is gone. */
void sdsm_reap_sync(void)
{
	flush_work(&sdsm_cl.reap_work);
}

/* ------------------------------------------------------------------ */
/* rdma_cm                                                             */

static void sdsm_fill_connect(struct sdsm_conn *conn,
			      struct sdsm_wire_connect *c)
{
	memset(c, 0, sizeof(*c));
	c->magic = cpu_to_be32(SDSM_WIRE_MAGIC);
	c->version = cpu_to_be16(SDSM_WIRE_VERSION);
	c->node_id = cpu_to_be16(sdsm_cl.node_id);
	c->nr_nodes = cpu_to_be16(sdsm_cl.nr_nodes);
	c->rx_depth = cpu_to_be16(SDSM_RX_DEPTH);
	c->flags = cpu_to_be32(sdsm_cl.auth_tfm ? SDSM_WIRE_CONNECT_F_AUTH : 0);
	c->incarnation = cpu_to_be64(sdsm_cl.incarnation);
	memcpy(c->nonce, conn->nonce, sizeof(c->nonce));
}

/*
 * The queue pair's ACK timeout (ack_timeout=), set before the route is
 * resolved (RoCE derives the path's packet lifetime from it) and before
 * the accept.  A failure leaves rdma_cm's default: slower recovery from a
 * lost frame, nothing worse.
 */
static void sdsm_set_ack_timeout(struct rdma_cm_id *id)
{
	int ret;

	if (!sdsm_cl.ack_timeout)
		return;
	ret = rdma_set_ack_timeout(id, sdsm_cl.ack_timeout);
	if (ret)
		pr_warn_once("cannot set the ACK timeout: %d\n", ret);
}

/* @priv: @len bytes, a struct sdsm_wire_connect or sdsm_wire_accept. */
static void sdsm_fill_conn_param(struct rdma_conn_param *param,
				 const void *priv, u8 len)
{
	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = len;
	/* 7 would be "forever" on soft-RoCE: a lost link never failed. */
	param->retry_count = 6;
	param->rnr_retry_count = 7;
}

static const char *sdsm_reject_name(unsigned int reason)
{
	switch (reason) {
	case SDSM_REJ_BAD_MAGIC:	return "not an sdsm node (bad magic)";
	case SDSM_REJ_BAD_VERSION:	return "wire version mismatch";
	case SDSM_REJ_BAD_NR_NODES:	return "nodes= lists differ in length";
	case SDSM_REJ_BAD_NODE_ID:	return "node id out of range or ours";
	case SDSM_REJ_BAD_ADDRESS:	return "source address is not nodes[node_id]";
	case SDSM_REJ_WRONG_DIRECTION:	return "higher node id connected to lower";
	case SDSM_REJ_SHUTDOWN:		return "module unloading";
	case SDSM_REJ_NO_RESOURCES:	return "out of resources";
	case SDSM_REJ_AUTH_MODE:	return "one side runs auth=none";
	}
	return "unknown reason";
}

/*
 * Validate connect private data of at least @size bytes (the connect or
 * the accept struct); 0 if fine, else an sdsm_reject_reason.
 */
static int sdsm_check_connect(const void *data, u8 len, size_t size,
			      unsigned int *from)
{
	const struct sdsm_wire_connect *c = data;
	u32 flags, want;
	unsigned int id;

	/* magic and version are where every version put them */
	if (!data || len < offsetofend(struct sdsm_wire_connect, version) ||
	    be32_to_cpu(c->magic) != SDSM_WIRE_MAGIC)
		return SDSM_REJ_BAD_MAGIC;
	if (be16_to_cpu(c->version) != SDSM_WIRE_VERSION)
		return SDSM_REJ_BAD_VERSION;
	if (len < size)
		return SDSM_REJ_BAD_MAGIC;
	flags = be32_to_cpu(c->flags);
	want = sdsm_cl.auth_tfm ? SDSM_WIRE_CONNECT_F_AUTH : 0;
	if (flags != want)
		return SDSM_REJ_AUTH_MODE;
	if (be16_to_cpu(c->nr_nodes) != sdsm_cl.nr_nodes)
		return SDSM_REJ_BAD_NR_NODES;
	id = be16_to_cpu(c->node_id);
	if (id >= sdsm_cl.nr_nodes || id == sdsm_cl.node_id)
		return SDSM_REJ_BAD_NODE_ID;
	*from = id;
	return 0;
}

static int sdsm_cm_reject(struct rdma_cm_id *id, unsigned int reason)
{
	struct sdsm_wire_reject rej = {
		.magic = cpu_to_be32(SDSM_WIRE_MAGIC),
		.version = cpu_to_be16(SDSM_WIRE_VERSION),
		.reason = cpu_to_be16(reason),
	};

	const struct sockaddr_in *src =
		(struct sockaddr_in *)&id->route.addr.dst_addr;
	/* Serialized by the listener's handler mutex; only dedups the log. */
	static __be32 last_addr;
	static unsigned int last_reason;

	if (src->sin_addr.s_addr != last_addr || reason != last_reason)
		pr_warn("rejected a connection from %pI4: %s\n",
			&src->sin_addr, sdsm_reject_name(reason));
	else
		pr_debug("rejected a connection from %pI4: %s\n",
			 &src->sin_addr, sdsm_reject_name(reason));
	last_addr = src->sin_addr.s_addr;
	last_reason = reason;
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	return 1;	/* rdma_cm destroys the new id */
}

/* Passive side: a lower node connects to us. */
static int sdsm_cm_connect_request(struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	const struct sockaddr_in *src =
		(struct sockaddr_in *)&id->route.addr.dst_addr;
	const struct sdsm_wire_connect *req = ev->param.conn.private_data;
	struct sdsm_wire_accept priv;
	struct rdma_conn_param param;
	struct sdsm_conn *conn, *old;
	struct sdsm_peer *peer;
	unsigned int from = 0;
	int reason, ret;

	if (READ_ONCE(sdsm_cl.shutdown))
		return sdsm_cm_reject(id, SDSM_REJ_SHUTDOWN);
	reason = sdsm_check_connect(req, ev->param.conn.private_data_len,
				    sizeof(*req), &from);
	if (reason)
		return sdsm_cm_reject(id, reason);
	peer = &sdsm_cl.peers[from];
	if (src->sin_family != AF_INET ||
	    src->sin_addr.s_addr != peer->addr.sin_addr.s_addr)
		return sdsm_cm_reject(id, SDSM_REJ_BAD_ADDRESS);
	if (from > sdsm_cl.node_id)
		return sdsm_cm_reject(id, SDSM_REJ_WRONG_DIRECTION);

	conn = sdsm_conn_alloc(peer, false);
	if (!conn)
		return sdsm_cm_reject(id, SDSM_REJ_NO_RESOURCES);
	conn->cm_id = id;
	conn->remote_incarnation = be64_to_cpu(req->incarnation);
	memcpy(conn->remote_nonce, req->nonce, sizeof(conn->remote_nonce));
	sdsm_fill_connect(conn, &priv.c);
	ret = sdsm_auth_mac(conn, SDSM_AUTH_LABEL_ACCEPT, priv.mac);
	if (ret) {
		pr_err("node %u: cannot compute the accept MAC: %d\n", from, ret);
		kfree(conn);
		return sdsm_cm_reject(id, SDSM_REJ_NO_RESOURCES);
	}
	ret = sdsm_conn_create_ib(conn);
	if (ret) {
		pr_err("node %u: cannot create a queue pair: %d\n", from, ret);
		kfree(conn);
		return sdsm_cm_reject(id, SDSM_REJ_NO_RESOURCES);
	}
	id->context = conn;

	spin_lock(&peer->lock);
	if (READ_ONCE(sdsm_cl.shutdown)) {
		spin_unlock(&peer->lock);
		/* Never published: undo here, rdma_cm destroys the id. */
		id->context = NULL;
		conn->cm_id = NULL;
		rdma_destroy_qp(id);
		conn->qp = NULL;
		sdsm_conn_destroy(conn);
		return sdsm_cm_reject(id, SDSM_REJ_SHUTDOWN);
	}
	/*
	 * Not authenticated yet: park it, leaving peer->conn and the peer's
	 * state alone.  Only an earlier attempt that never authenticated
	 * either is dropped for it.
	 */
	old = peer->pending;
	peer->pending = conn;
	spin_unlock(&peer->lock);

	if (old) {
		pr_debug("node %u: a new connect request supersedes an unauthenticated one\n",
			 from);
		sdsm_conn_reap(old);
	}

	sdsm_set_ack_timeout(id);
	sdsm_fill_conn_param(&param, &priv, sizeof(priv));
	ret = rdma_accept(id, &param);
	if (ret) {
		pr_err("node %u: rdma_accept failed: %d\n", from, ret);
		sdsm_conn_fail(conn, "accept failed");
	}
	return 0;
}

/* Active side: address resolved, route resolved, connect. */
static void sdsm_cm_route_resolved(struct sdsm_conn *conn)
{
	struct sdsm_wire_connect priv;
	struct rdma_conn_param param;
	int ret;

	if (test_bit(SDSM_CONN_DYING, &conn->flags))
		return;
	ret = sdsm_conn_create_ib(conn);
	if (ret) {
		pr_err("node %u: cannot create a queue pair: %d\n",
		       conn->peer->id, ret);
		sdsm_conn_fail(conn, "no resources");
		return;
	}
	sdsm_fill_connect(conn, &priv);
	sdsm_fill_conn_param(&param, &priv, sizeof(priv));
	ret = rdma_connect_locked(conn->cm_id, &param);
	if (ret) {
		pr_err("node %u: rdma_connect failed: %d\n",
		       conn->peer->id, ret);
		sdsm_conn_fail(conn, "connect failed");
	}
}

static void sdsm_cm_established(struct sdsm_conn *conn,
				struct rdma_cm_event *ev)
{
	struct sdsm_peer *peer = conn->peer;
	const struct sdsm_wire_accept *rep = ev->param.conn.private_data;
	struct sdsm_wire_auth auth;
	unsigned int from = 0;
	int reason, ret;

	if (!conn->active) {
		/* Passive: AUTH (sdsm_auth_rx) decides, not this event. */
		sdsm_conn_established(conn);
		return;
	}
	reason = sdsm_check_connect(rep, ev->param.conn.private_data_len,
				    sizeof(*rep), &from);
	if (!reason && from != peer->id)
		reason = SDSM_REJ_BAD_NODE_ID;
	if (reason) {
		pr_err("node %u (%pI4): bad accept data: %s\n", peer->id,
		       &peer->addr.sin_addr, sdsm_reject_name(reason));
		sdsm_conn_fail(conn, "bad accept data");
		return;
	}
	spin_lock(&peer->lock);
	conn->remote_incarnation = be64_to_cpu(rep->c.incarnation);
	spin_unlock(&peer->lock);
	memcpy(conn->remote_nonce, rep->c.nonce, sizeof(conn->remote_nonce));
	if (!sdsm_auth_check(conn, SDSM_AUTH_LABEL_ACCEPT, rep->mac)) {
		pr_warn_ratelimited("node %u (%pI4): authentication failed (wrong cluster secret): connection refused\n",
				    peer->id, &peer->addr.sin_addr);
		sdsm_conn_fail(conn, "authentication failed");
		return;
	}
	set_bit(SDSM_CONN_AUTHED, &conn->flags);
	/* The first message on the QP: our proof. */
	ret = sdsm_auth_mac(conn, SDSM_AUTH_LABEL_AUTH, auth.mac);
	if (!ret)
		ret = sdsm_conn_send(conn, SDSM_MSG_AUTH, &auth, sizeof(auth),
				     NULL, true);
	memzero_explicit(&auth, sizeof(auth));
	if (ret) {
		if (ret != -ENOTCONN)
			pr_err("node %u: cannot send AUTH: %d\n", peer->id, ret);
		sdsm_conn_fail(conn, "AUTH send failed");
		return;
	}
	sdsm_conn_established(conn);
}

/* Log a failed connect attempt once per distinct error. */
static void sdsm_cm_connect_error(struct sdsm_conn *conn,
				  struct rdma_cm_event *ev)
{
	struct sdsm_peer *peer = conn->peer;
	int err = ev->event << 16 | (ev->status & 0xffff);
	const struct sdsm_wire_reject *rej = NULL;
	u8 len = 0;
	bool log;

	spin_lock(&peer->lock);
	log = peer->last_err != err;
	peer->last_err = err;
	spin_unlock(&peer->lock);

	if (ev->event == RDMA_CM_EVENT_REJECTED)
		rej = rdma_consumer_reject_data(conn->cm_id, ev, &len);
	if (!log)
		goto out_fail;
	if (rej && len >= sizeof(*rej) &&
	    be32_to_cpu(rej->magic) == SDSM_WIRE_MAGIC)
		pr_warn("node %u (%pI4) rejected us: %s\n", peer->id,
			&peer->addr.sin_addr,
			sdsm_reject_name(be16_to_cpu(rej->reason)));
	else if (ev->event == RDMA_CM_EVENT_REJECTED)
		pr_info("node %u (%pI4): connect rejected: %s (will retry)\n",
			peer->id, &peer->addr.sin_addr,
			rdma_reject_msg(conn->cm_id, ev->status));
	else
		pr_info("node %u (%pI4): %s, status %d (will retry)\n",
			peer->id, &peer->addr.sin_addr,
			rdma_event_msg(ev->event), ev->status);
out_fail:
	sdsm_conn_fail(conn, rdma_event_msg(ev->event));
}

static int sdsm_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdsm_conn *conn = id->context;
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdsm_cm_connect_request(id, ev);
	if (!conn)	/* the listener */
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, SDSM_RESOLVE_TIMEOUT_MS);
		if (ret) {
			pr_err("node %u: rdma_resolve_route failed: %d\n",
			       conn->peer->id, ret);
			sdsm_conn_fail(conn, "route resolution failed");
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		sdsm_cm_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		sdsm_cm_established(conn, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		sdsm_cm_connect_error(conn, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		sdsm_conn_fail(conn, "disconnected by peer");
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * sdsm_ib_remove() normally got here first.  Never return
		 * non-zero: the reaper owns the id and destroys it.
		 */
		sdsm_conn_fail(conn, "device removed");
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		sdsm_conn_fail(conn, "address changed");
		break;
	default:
		break;
	}
	return 0;
}

/**
 * sdsm_connect_active - start one connect attempt to a higher peer
 * @peer: the peer; must have no connection
 *
 * Context: process context, from the peer's connect_work.
 * Return: 0 if an attempt is under way (attached to @peer), else -errno.
 */
int sdsm_connect_active(struct sdsm_peer *peer)
{
	struct sockaddr_in src = sdsm_cl.peers[sdsm_cl.node_id].addr;
	struct sockaddr_in dst = peer->addr;
	struct sdsm_conn *conn;
	struct rdma_cm_id *id;
	int ret;

	conn = sdsm_conn_alloc(peer, true);
	if (!conn)
		return -ENOMEM;
	id = rdma_create_id(&init_net, sdsm_cm_handler, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out_free;
	}
	conn->cm_id = id;
	sdsm_set_ack_timeout(id);
	src.sin_port = 0;
	dst.sin_port = htons(sdsm_cl.port);
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst,
				SDSM_RESOLVE_TIMEOUT_MS);
	if (ret)
		goto out_destroy_id;

	/*
	 * Attach only now, so nobody reaps the id while rdma_resolve_addr()
	 * runs.  Handlers may already have failed it: the kick sees that.
	 */
	spin_lock(&peer->lock);
	if (READ_ONCE(sdsm_cl.shutdown) || peer->conn) {
		spin_unlock(&peer->lock);
		sdsm_conn_reap(conn);
		return -ESHUTDOWN;
	}
	peer->conn = conn;
	sdsm_peer_set_state(peer, SDSM_PEER_CONNECTING);
	spin_unlock(&peer->lock);
	sdsm_peer_kick(peer);
	return 0;

out_destroy_id:
	rdma_destroy_id(id);
out_free:
	kfree(conn);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */

/*
 * Listen on this node's own address of nodes=, never INADDR_ANY.  Binding
 * a unicast address ties the listener to the RDMA device that has it, so
 * it is made again whenever a device comes (sdsm_ib_add) and dropped with
 * its device (sdsm_ib_remove).  Locks: sdsm_cl.listen_lock held.
 */
static int sdsm_listen(void)
{
	struct sockaddr_in addr = sdsm_cl.peers[sdsm_cl.node_id].addr;
	struct rdma_cm_id *id;
	int ret;

	lockdep_assert_held(&sdsm_cl.listen_lock);
	if (sdsm_cl.listen_id || READ_ONCE(sdsm_cl.shutdown))
		return 0;
	addr.sin_port = htons(sdsm_cl.port);
	id = rdma_create_id(&init_net, sdsm_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&addr);
	if (!ret)
		ret = rdma_listen(id, SDSM_MAX_NODES);
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	sdsm_cl.listen_id = id;
	pr_debug("listening on %pI4 port %u\n", &addr.sin_addr, sdsm_cl.port);
	return 0;
}

/* Retry listening until this node's address is on an RDMA device. */
static void sdsm_listen_work(struct work_struct *work)
{
	static int last_err;
	int ret;

	mutex_lock(&sdsm_cl.listen_lock);
	ret = sdsm_listen();
	mutex_unlock(&sdsm_cl.listen_lock);
	if (!ret) {
		last_err = 0;
		return;
	}
	if (ret != last_err)
		pr_warn("cannot listen on %pI4 port %u: %d (retrying)\n",
			&sdsm_cl.peers[sdsm_cl.node_id].addr.sin_addr,
			sdsm_cl.port, ret);
	last_err = ret;
	if (!READ_ONCE(sdsm_cl.shutdown))
		queue_delayed_work(sdsm_cl.wq, &sdsm_cl.listen_work,
				   msecs_to_jiffies(SDSM_BACKOFF_MAX_MS));
}

static int sdsm_ib_add(struct ib_device *dev)
{
	int i;

	pr_debug("RDMA device %s added\n", dev_name(&dev->dev));
	if (!READ_ONCE(sdsm_cl.shutdown))
		mod_delayed_work(sdsm_cl.wq, &sdsm_cl.listen_work, 0);
	/* Retry now rather than at the end of the backoff. */
	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];
		bool idle;

		if (i <= sdsm_cl.node_id || READ_ONCE(sdsm_cl.shutdown))
			continue;
		spin_lock(&peer->lock);
		peer->backoff_ms = SDSM_BACKOFF_MIN_MS;
		idle = !peer->conn;
		spin_unlock(&peer->lock);
		if (idle)
			mod_delayed_work(sdsm_cl.wq, &peer->connect_work, 0);
	}
	return 0;
}

static bool sdsm_conn_on(struct sdsm_conn *conn, struct ib_device *dev)
{
	return conn && (conn->dev == dev ||
			READ_ONCE(conn->cm_id->device) == dev);
}

static void sdsm_ib_remove(struct ib_device *dev, void *client_data)
{
	struct rdma_cm_id *listen_id = NULL;
	unsigned int i, n = 0;

	mutex_lock(&sdsm_cl.listen_lock);
	if (sdsm_cl.listen_id && sdsm_cl.listen_id->device == dev) {
		listen_id = sdsm_cl.listen_id;
		sdsm_cl.listen_id = NULL;
	}
	mutex_unlock(&sdsm_cl.listen_lock);
	if (listen_id)
		rdma_destroy_id(listen_id);	/* waits for its handlers */

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];
		struct sdsm_conn *conn, *pending;

		spin_lock(&peer->lock);
		conn = peer->conn;
		if (sdsm_conn_on(conn, dev)) {
			peer->conn = NULL;
			sdsm_peer_set_state(peer, SDSM_PEER_DOWN);
		} else {
			conn = NULL;
		}
		pending = peer->pending;
		if (sdsm_conn_on(pending, dev))
			peer->pending = NULL;
		else
			pending = NULL;
		spin_unlock(&peer->lock);
		if (pending)
			sdsm_conn_reap(pending);
		if (conn) {
			sdsm_conn_reap(conn);
			sdsm_peer_kick(peer);
			n++;
		}
	}
	sdsm_reap_sync();
	pr_info("RDMA device %s removed: %u connections closed\n",
		dev_name(&dev->dev), n);
}

static struct ib_client sdsm_ib_client = {
	.name = "sdsm",
	.add = sdsm_ib_add,
	.remove = sdsm_ib_remove,
};

/*
 * Read the cluster secret, then listen.  A port already taken fails the
 * load; an address not (yet) on an RDMA device is retried by listen_work.
 */
int sdsm_transport_start(void)
{
	int ret;

	INIT_WORK(&sdsm_cl.reap_work, sdsm_reap_work);
	mutex_init(&sdsm_cl.listen_lock);
	INIT_DELAYED_WORK(&sdsm_cl.listen_work, sdsm_listen_work);
	ret = sdsm_auth_start();
	if (ret)
		return ret;
	ret = ib_register_client(&sdsm_ib_client);
	if (ret) {
		pr_err("cannot register the RDMA client: %d\n", ret);
		goto out_auth_stop;
	}
	mutex_lock(&sdsm_cl.listen_lock);
	ret = sdsm_listen();
	mutex_unlock(&sdsm_cl.listen_lock);
	if (ret == -EADDRINUSE) {
		pr_err("cannot listen on %pI4 port %u: port in use\n",
		       &sdsm_cl.peers[sdsm_cl.node_id].addr.sin_addr,
		       sdsm_cl.port);
		goto out_unregister_client;
	}
	if (ret)
		mod_delayed_work(sdsm_cl.wq, &sdsm_cl.listen_work, 0);
	return 0;

out_unregister_client:
	ib_unregister_client(&sdsm_ib_client);
out_auth_stop:
	sdsm_auth_stop();
	return ret;
}

/*
 * Say BYE on every connection that is up, so the peers end the session at
 * once instead of after peer_timeout_ms of silence; wait a little for the
 * sends to complete.  Context: module exit, after sdsm_cl.shutdown is set,
 * before sdsm_transport_stop().
 */
void sdsm_transport_goodbye(void)
{
	struct sdsm_conn *conns[SDSM_MAX_NODES];
	unsigned int i, n = 0;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];
		struct sdsm_conn *conn;

		if (i == sdsm_cl.node_id ||
		    READ_ONCE(peer->state) != SDSM_PEER_UP)
			continue;
		conn = sdsm_conn_get(peer);
		if (!conn)
			continue;
		if (sdsm_conn_send(conn, SDSM_MSG_BYE, NULL, 0, NULL, false))
			sdsm_conn_put(conn);
		else
			conns[n++] = conn;
	}
	for (i = 0; i < n; i++) {
		wait_event_timeout(conns[i]->tx_wait, sdsm_tx_idle(conns[i]),
				   msecs_to_jiffies(200));
		sdsm_conn_put(conns[i]);
	}
}

/*
 * Stop accepting (waits for running connect-request handlers), then
 * unregister the client: sdsm_ib_remove() closes every connection bound to
 * a device.  Connections still resolving are left to sdsm_cluster_stop(),
 * which runs before sdsm_transport_exit() drops the secret.
 */
void sdsm_transport_stop(void)
{
	struct rdma_cm_id *id;

	cancel_delayed_work_sync(&sdsm_cl.listen_work);
	mutex_lock(&sdsm_cl.listen_lock);
	id = sdsm_cl.listen_id;
	sdsm_cl.listen_id = NULL;
	mutex_unlock(&sdsm_cl.listen_lock);
	if (id)
		rdma_destroy_id(id);
	ib_unregister_client(&sdsm_ib_client);
	/* ib_add may have queued it again before the client went away. */
	cancel_delayed_work_sync(&sdsm_cl.listen_work);
	sdsm_reap_sync();
}

/*
 * Drop the cluster secret.  Called at the end of sdsm_cluster_stop(), when
 * no connection is left to use it.
 */
void sdsm_transport_exit(void)
{
	sdsm_auth_stop();
}
