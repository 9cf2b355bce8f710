// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm cluster membership: peer state machine, handshake check, heartbeat,
 * reconnect, and the message handler table and peer notifier that upper
 * layers use.
 *
 * A peer's state follows its connection:
 *   DOWN        no connection
 *   CONNECTING  a connection exists but is not both ESTABLISHED (rdma_cm)
 *               and VERIFIED (the peer's pattern page arrived intact)
 *   UP          both, and the pattern's incarnation is the one the connect
 *               private data announced
 * A connection is attached to its peer only once the peer is authenticated
 * (sdsm_transport.c): on the active side when the accept's MAC verified, on
 * the passive side when the AUTH message verified; until then the passive
 * side keeps it in peer->pending, where it cannot disturb the connection in
 * use.  Neither side sends its pattern page before that.
 * Any failure (cm event, completion error, heartbeat silence, bad message)
 * sets SDSM_CONN_FAILED; the peer work then detaches the connection, hands
 * it to the reaper and, on the active side (lower id), schedules a new
 * attempt after a backoff of 100 ms doubling to 2 s, reset once UP.  The
 * passive side waits for the peer to come back.
 *
 * The peer work is the only place that calls the notifier, so UP and DOWN
 * of one peer are reported in order; a peer that came back with a new
 * incarnation before the work ran is reported DOWN then UP.
 *
 * The heartbeat work sends a PING on every established connection each
 * heartbeat_ms and fails a connection that received nothing for
 * peer_timeout_ms, or that has not come up within 2 * peer_timeout_ms.
 *
 * Send queues.  Every upper layer (coherence, regions, locks, barriers,
 * futexes) sends through one FIFO per destination, this node included
 * (struct sdsm_txq, sdsm_queue()), drained by its own work item, which
 * sleeps for a slot and a credit; a message to this node is
 * handed to its handler as if it had arrived.  A message for an UP peer
 * with nothing queued before it is posted by the caller at once, without
 * a worker's wake-up in between (on these guests each costs 0.3 ms or
 * more); that post never sleeps.  Messages for a peer that is not UP wait
 * for its UP.  A DOWN report drops what is queued for the peer, before
 * the upper layers hear of it and again after: what they queue for it
 * while they handle the DOWN addresses the incarnation that went away.
 * A queue that is corked (sdsm_queue_cork(), while a receive worker hands
 * on one received train and while a fault reads ahead) holds the corking
 * task's messages until uncorked; the worker, and the uncork, post what
 * is queued for a peer as trains of up to SDSM_TRAIN_MAX messages, one
 * send each (sdsm_conn_send_train()).
 * Queued messages take preallocated entries (SDSM_TXQ_POOL a queue)
 * before they allocate.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>

#include "sdsm.h"
#include "sdsm_stats.h"
#include "sdsm_trace.h"

static sdsm_handler_fn sdsm_handlers[SDSM_MSG_MAX];
static BLOCKING_NOTIFIER_HEAD(sdsm_peer_notifier);

const char *sdsm_peer_state_name(enum sdsm_peer_state state)
{
	switch (state) {
	case SDSM_PEER_SELF:		return "self";
	case SDSM_PEER_DOWN:		return "down";
	case SDSM_PEER_CONNECTING:	return "connecting";
	case SDSM_PEER_UP:		return "up";
	}
	return "invalid";
}

/* Locks: peer->lock held. */
void sdsm_peer_set_state(struct sdsm_peer *peer, enum sdsm_peer_state state)
{
	lockdep_assert_held(&peer->lock);
	if (peer->state == state)
		return;
	trace_sdsm_peer_state(peer->id, peer->state, state);
	WRITE_ONCE(peer->state, state);
}

/**
 * sdsm_peer_member_state - a peer's state as the upper layers know it
 * @peer: the peer
 *
 * Its link's state, except that a peer whose link is lost while its
 * session waits for the next one is still "up": it was not reported down,
 * and what is sent to it will arrive.  It is "up" until the upper layers
 * have handled its DOWN report.
 */
enum sdsm_peer_state sdsm_peer_member_state(struct sdsm_peer *peer)
{
	enum sdsm_peer_state state = READ_ONCE(peer->state);

	/* notified_up stays set until the DOWN report is done. */
	if (state != SDSM_PEER_SELF && READ_ONCE(peer->notified_up))
		return SDSM_PEER_UP;
	return state;
}

/**
 * sdsm_peer_shown_state - a peer's state as sysfs shows it
 * @peer: the peer
 *
 * Its member state, but "up" only once every layer has handled its UP
 * report: whoever reads "up" may use the peer at once (a cluster lock it
 * manages, say).  The member state turns up before the report, so that
 * the layers can send to it while they handle it.
 */
enum sdsm_peer_state sdsm_peer_shown_state(struct sdsm_peer *peer)
{
	enum sdsm_peer_state state = sdsm_peer_member_state(peer);

	if (state == SDSM_PEER_UP && !READ_ONCE(peer->reported_gen))
		return SDSM_PEER_CONNECTING;
	return state;
}

void sdsm_peer_kick(struct sdsm_peer *peer)
{
	queue_work(sdsm_cl.wq, &peer->work);
}

u64 sdsm_pattern_word(unsigned int node_id, u64 incarnation, unsigned int i)
{
	return incarnation ^ ((u64)node_id << 48) ^
	       ((u64)(i + 1) * 0x9e3779b97f4a7c15ULL);
}

static void sdsm_pattern_fill(struct page *page)
{
	u64 *p = kmap_local_page(page);
	unsigned int i;

	for (i = 0; i < PAGE_SIZE / sizeof(u64); i++)
		p[i] = sdsm_pattern_word(sdsm_cl.node_id, sdsm_cl.incarnation, i);
	kunmap_local(p);
}

/* Index of the first wrong word, or -1 if the page is intact. */
static int sdsm_pattern_check(struct page *page, unsigned int node_id,
			      u64 incarnation)
{
	u64 *p = kmap_local_page(page);
	int i, bad = -1;

	for (i = 0; i < PAGE_SIZE / sizeof(u64); i++) {
		if (p[i] != sdsm_pattern_word(node_id, incarnation, i)) {
			bad = i;
			break;
		}
	}
	kunmap_local(p);
	return bad;
}

static void sdsm_ping_fill(struct sdsm_wire_ping *ping)
{
	ping->time_ns = cpu_to_be64(ktime_get_ns());
	ping->incarnation = cpu_to_be64(sdsm_cl.incarnation);
}

/* ------------------------------------------------------------------ */
/* Sessions (sdsm_session.h)                                           */

static void sdsm_hello_to_wire(const struct sdsm_sess_hello *h,
			       struct sdsm_wire_hello *w)
{
	memset(w, 0, sizeof(*w));
	w->ping.incarnation = cpu_to_be64(h->inc);
	w->peer_incarnation = cpu_to_be64(h->peer_inc);
	w->sid = cpu_to_be32(h->sid);
	w->rx_seq = cpu_to_be32(h->rx_seq);
	w->flags = cpu_to_be32(h->resume ? SDSM_WIRE_HELLO_F_RESUME : 0);
}

/* Does @conn carry the peer's current session?  Locks: peer->sess_lock. */
static bool sdsm_conn_in_session(const struct sdsm_conn *conn)
{
	const struct sdsm_sess *sess = &conn->peer->sess;

	return conn->sess_gen && conn->sess_gen == sess->gen &&
	       sdsm_sess_live(sess);
}

/*
 * Drop the ring's hold on messages @first .. @first + @n - 1, acknowledged
 * or of a session that ended.  Locks: peer->sess_lock.
 */
static void sdsm_ring_release(struct sdsm_peer *peer, u32 first, u32 n)
{
	n = min_t(u32, n, SDSM_SESS_RING);
	while (n--) {
		struct sdsm_sess_msg *m = &peer->ring[first++ % SDSM_SESS_RING];

		if (m->page)
			put_page(m->page);
		m->page = NULL;
	}
}

/* End the session, if any, for @why.  Locks: peer->sess_lock. */
static void sdsm_session_end_locked(struct sdsm_peer *peer, const char *why)
{
	struct sdsm_sess *sess = &peer->sess;

	if (!sdsm_sess_live(sess))
		return;
	sdsm_ring_release(peer, sess->acked + 1, sdsm_sess_unacked(sess));
	sdsm_sess_end(sess);
	peer->sess_end = why;
}

/* End the session with @peer; its peer work reports it DOWN. */
static void sdsm_session_end(struct sdsm_peer *peer, const char *why)
{
	spin_lock_bh(&peer->sess_lock);
	sdsm_session_end_locked(peer, why);
	spin_unlock_bh(&peer->sess_lock);
	sdsm_peer_kick(peer);
}

/*
 * The peer's hello arrived on @conn: the passive side decides whether the
 * session resumes, the active side takes that decision.  Return: false if
 * @conn failed (the session ended: it could not agree with the peer's).
 * Context: the receive worker of @conn.
 */
bool sdsm_session_hello_rx(struct sdsm_conn *conn,
			   const struct sdsm_wire_hello *w)
{
	struct sdsm_peer *peer = conn->peer;
	struct sdsm_sess *sess = &peer->sess;
	struct sdsm_sess_hello h = {
		.inc = be64_to_cpu(w->ping.incarnation),
		.peer_inc = be64_to_cpu(w->peer_incarnation),
		.sid = be32_to_cpu(w->sid),
		.rx_seq = be32_to_cpu(w->rx_seq),
		.resume = be32_to_cpu(w->flags) & SDSM_WIRE_HELLO_F_RESUME,
	};
	enum sdsm_sess_verdict v = SDSM_SESS_BAD;
	u64 old_inc;
	const char *why = NULL;
	u32 first, n, resend = 0;

	spin_lock(&peer->lock);
	if (peer->conn != conn)
		why = "a hello on a replaced connection";
	spin_unlock(&peer->lock);
	if (why) {
		sdsm_conn_fail(conn, why);
		return false;
	}

	spin_lock_bh(&peer->sess_lock);
	old_inc = sess->remote_inc;
	if (conn->sess_gen) {
		why = "a second hello";
	} else {
		if (conn->active)
			v = sdsm_sess_follow(sess, sdsm_cl.incarnation, &h,
					     &first, &n);
		else
			v = sdsm_sess_decide(sess, sdsm_cl.incarnation, &h,
					     &first, &n);
		sdsm_ring_release(peer, first, n);
	}
	if (v == SDSM_SESS_BAD) {
		if (!why)
			why = "its hello disagrees with our session";
		sdsm_session_end_locked(peer, why);
	} else {
		conn->sess_gen = sess->gen;
		WRITE_ONCE(peer->heard, jiffies);	/* not expired meanwhile */
		if (v == SDSM_SESS_RESUME)
			resend = sdsm_sess_unacked(sess);
		else if (old_inc)
			peer->sess_end = old_inc != h.inc ?
				"it restarted (new incarnation)" :
				"it came back without our session";
		if (!conn->active) {
			sdsm_sess_hello_fill(sess, sdsm_cl.incarnation, &h);
			h.resume = v == SDSM_SESS_RESUME;
			sdsm_hello_to_wire(&h, &conn->hello_out);
		}
	}
	spin_unlock_bh(&peer->sess_lock);

	if (v == SDSM_SESS_BAD) {
		pr_warn("node %u (%pI4): %s: session ended\n", peer->id,
			&peer->addr.sin_addr, why);
		sdsm_conn_fail(conn, why);
		sdsm_peer_kick(peer);
		return false;
	}
	if (v == SDSM_SESS_RESUME) {
		atomic64_inc(&peer->resumes);
		pr_info("node %u (%pI4): link back, session resumed; %u message(s) to send again\n",
			peer->id, &peer->addr.sin_addr, resend);
	}
	return true;
}

/* The acknowledgment a message on @conn carries; 0 if none. */
u32 sdsm_session_ack(struct sdsm_conn *conn)
{
	struct sdsm_peer *peer = conn->peer;
	u32 ack = 0;

	spin_lock_bh(&peer->sess_lock);
	if (sdsm_conn_in_session(conn))
		ack = sdsm_sess_ack_value(&peer->sess);
	spin_unlock_bh(&peer->sess_lock);
	return ack;
}

/* Has the session room for one more message?  Locks: conn->tx_lock. */
bool sdsm_session_room(struct sdsm_conn *conn)
{
	struct sdsm_peer *peer = conn->peer;
	bool room;

	spin_lock(&peer->sess_lock);
	room = sdsm_sess_tx_room(&peer->sess);
	spin_unlock(&peer->sess_lock);
	return room;
}

/**
 * sdsm_session_tx - number a message of the session, or take one again
 * @conn: the connection that will send it
 * @type: the message's type, if new
 * @resend: 0 for a new message, whose type, length and payload are in
 *	@hdr already; else the number of the message to send again, whose
 *	type, length and payload this copies into @hdr
 * @hdr: the send slot's header
 * @page: a new message's page, or NULL (the ring takes a reference); for
 *	a resend, set to the ring's page, referenced for the caller
 *
 * Fills @hdr's seq and ack.  Context: process, holding a send slot.
 * Return: 0; -ENOTCONN if @conn does not carry the current session;
 * -EAGAIN if the ring is full or older messages are still to be sent
 * again; -EALREADY if message @resend is acknowledged already.
 */
int sdsm_session_tx(struct sdsm_conn *conn, u16 type, u32 resend,
		    struct sdsm_wire_hdr *hdr, struct page **page)
{
	struct sdsm_peer *peer = conn->peer;
	struct sdsm_sess *sess = &peer->sess;
	struct sdsm_sess_msg *m;
	int ret = 0;
	u32 seq;

	spin_lock_bh(&peer->sess_lock);
	if (!sdsm_conn_in_session(conn)) {
		ret = -ENOTCONN;
	} else if (resend) {
		if ((s32)(resend - sess->acked) <= 0 ||
		    (s32)(resend - sess->tx_seq) > 0) {
			ret = -EALREADY;
			goto out;
		}
		m = &peer->ring[resend % SDSM_SESS_RING];
		hdr->type = cpu_to_be16(m->type);
		hdr->len = cpu_to_be16(m->len);
		memcpy(hdr + 1, m->payload, m->len);
		*page = m->page;
		if (m->page)
			get_page(m->page);
		hdr->seq = cpu_to_be32(resend);
	} else {
		seq = sdsm_sess_resending(sess) ? 0 : sdsm_sess_tx_next(sess);
		if (!seq) {
			ret = -EAGAIN;
			goto out;
		}
		m = &peer->ring[seq % SDSM_SESS_RING];
		m->type = type;
		m->len = be16_to_cpu(hdr->len);
		memcpy(m->payload, hdr + 1, m->len);
		m->page = *page;
		if (m->page)
			get_page(m->page);
		hdr->seq = cpu_to_be32(seq);
	}
	hdr->ack = cpu_to_be32(sdsm_sess_ack_value(sess));
out:
	spin_unlock_bh(&peer->sess_lock);
	return ret;
}

/* An acknowledgment arrived on @conn.  Context: softirq. */
void sdsm_session_ack_rx(struct sdsm_conn *conn, u32 ack)
{
	struct sdsm_peer *peer = conn->peer;
	u32 first;
	int n = 0;

	spin_lock_bh(&peer->sess_lock);
	if (sdsm_conn_in_session(conn)) {
		n = sdsm_sess_ack(&peer->sess, ack, &first);
		if (n > 0)
			sdsm_ring_release(peer, first, n);
	}
	spin_unlock_bh(&peer->sess_lock);
	if (n < 0) {
		pr_err("node %u: malformed message: it acknowledges message %u, never sent\n",
		       peer->id, ack);
		sdsm_conn_fail(conn, "malformed message");
	} else if (n) {
		wake_up(&conn->tx_wait);	/* room in the ring */
	}
}

/*
 * Tests only: a message of a session, once found to be the next one,
 * waits this many ms (at most 60000; writing 0 ends the wait) before its
 * delivery, as a receiver starved of CPU does, with the peer's rx_mutex
 * held.  Documentation/transport.rst, "Fault injection".
 */
static unsigned int sdsm_inject_rx_delay_ms;
module_param_named(inject_rx_delay_ms, sdsm_inject_rx_delay_ms, uint, 0644);
MODULE_PARM_DESC(inject_rx_delay_ms,
		 "tests only: delay in ms before each received message is delivered (default 0, at most 60000)");

/*
 * Tests only: the peer work waits this many ms (at most 60000; writing 0
 * ends the wait) after it logged a peer down and before it reports DOWN
 * to the layers, as a peer work behind a long DOWN report does.
 * Documentation/transport.rst, "Fault injection".
 */
static unsigned int sdsm_inject_down_delay_ms;
module_param_named(inject_down_delay_ms, sdsm_inject_down_delay_ms, uint,
		   0644);
MODULE_PARM_DESC(inject_down_delay_ms,
		 "tests only: delay in ms before a peer's DOWN is reported to the layers (default 0, at most 60000)");

/*
 * Tests only: the peer work waits this many ms (at most 60000; writing 0
 * ends the wait) when it finds a peer's connection ready to come up,
 * before it marks the peer up and reports it to the layers, as a peer
 * work that runs late does.  Documentation/transport.rst, "Fault
 * injection".
 */
static unsigned int sdsm_inject_up_delay_ms;
module_param_named(inject_up_delay_ms, sdsm_inject_up_delay_ms, uint, 0644);
MODULE_PARM_DESC(inject_up_delay_ms,
		 "tests only: delay in ms before a peer's connection is marked up and its UP reported (default 0, at most 60000)");

/*
 * Is @peer's connection ready to come up: established, the peer's hello
 * verified and ours sent, while the peer is still connecting?  The peer
 * work then marks it up.  Locks: @peer->lock.
 */
static bool sdsm_peer_comes_up(struct sdsm_peer *peer)
{
	struct sdsm_conn *conn = peer->conn;

	return conn && peer->state == SDSM_PEER_CONNECTING &&
	       !test_bit(SDSM_CONN_FAILED, &conn->flags) &&
	       test_bit(SDSM_CONN_ESTABLISHED, &conn->flags) &&
	       test_bit(SDSM_CONN_VERIFIED, &conn->flags) &&
	       test_bit(SDSM_CONN_HELLO_SENT, &conn->flags);
}

/*
 * Have the layers heard of the session @conn carries?  Its messages are
 * delivered only once they have.  Until the session before it was
 * reported DOWN, the layers still hold the old incarnation's state (a
 * sharer, a lock holder): a handler of the new session would add to it,
 * and the DOWN report would then take that away from the new incarnation.
 * And a session that ends before its UP was reported is never reported
 * DOWN: what its messages had left in the layers would stay there for
 * the next incarnation.  @conn->sess_gen is written by this receive
 * worker alone (sdsm_session_hello_rx()); 0 (no hello yet) is the
 * caller's to refuse.
 */
static bool sdsm_session_reported(struct sdsm_conn *conn)
{
	u32 gen = conn->sess_gen;

	/* Pairs with sdsm_peer_work()'s release: the report's effects seen. */
	return !gen || smp_load_acquire(&conn->peer->reported_gen) == gen;
}

/*
 * Wait until the layers heard of @conn's session, which the peer work
 * reports (after the DOWN of the session before it) while the session may
 * already carry messages: at most heartbeat_ms, so that the receive worker
 * returns credits and the link stays alive.  False if the report is not
 * done by then, or @conn failed (sdsm_conn_fail() wakes the wait), or
 * the module unloads: the message is then not delivered, and the caller
 * fails @conn, so the session resumes on the next connection and sends it
 * again.
 */
static bool sdsm_session_wait_reported(struct sdsm_conn *conn)
{
	struct sdsm_peer *peer = conn->peer;

	if (likely(sdsm_session_reported(conn)))
		return true;
	sdsm_peer_kick(peer);
	return wait_event_timeout(peer->report_wait,
				  sdsm_session_reported(conn) ||
				  test_bit(SDSM_CONN_FAILED, &conn->flags) ||
				  READ_ONCE(sdsm_cl.shutdown),
				  msecs_to_jiffies(sdsm_cl.heartbeat_ms)) &&
	       sdsm_session_reported(conn);
}

/*
 * A message of the session arrived on @conn: deliver it if it is the next
 * one; drop a duplicate, or a message of a session that ended.  A
 * delivery that found the session live ends before the peer is reported
 * DOWN (sdsm_peer_work()), and a session's first delivery waits until the
 * session was reported UP (after the DOWN of the one before it).  Context:
 * the receive worker of @conn.
 */
void sdsm_session_rx(struct sdsm_conn *conn, const struct sdsm_msg *msg,
		     u32 seq)
{
	struct sdsm_peer *peer = conn->peer;
	enum sdsm_sess_rx res = SDSM_SESS_DUP;
	u32 want = 0;
	bool early;

	if (!sdsm_session_wait_reported(conn)) {
		sdsm_conn_fail(conn, "its session not yet reported up");
		return;
	}
	mutex_lock(&peer->rx_mutex);
	spin_lock_bh(&peer->sess_lock);
	early = !conn->sess_gen;
	if (sdsm_conn_in_session(conn)) {
		want = peer->sess.rx_seq + 1;
		res = sdsm_sess_rx(&peer->sess, seq);
	}
	spin_unlock_bh(&peer->sess_lock);
	if (res == SDSM_SESS_DELIVER) {
		if (unlikely(READ_ONCE(sdsm_inject_rx_delay_ms)))
			sdsm_inject_pause(&sdsm_inject_rx_delay_ms);
		sdsm_msg_dispatch(conn, msg);
	}
	mutex_unlock(&peer->rx_mutex);

	if (early) {
		pr_err("node %u: malformed message: type %u before the hello\n",
		       peer->id, msg->type);
		sdsm_conn_fail(conn, "malformed message");
	} else if (res == SDSM_SESS_GAP) {
		pr_err("node %u: message %u of the session arrived, %u expected: connection failed\n",
		       peer->id, seq, want);
		sdsm_conn_fail(conn, "session message lost");
	}
}

/* The peer's module unloads: its session ends now. */
void sdsm_session_bye(struct sdsm_conn *conn)
{
	struct sdsm_peer *peer = conn->peer;
	bool ours;

	spin_lock_bh(&peer->sess_lock);
	ours = sdsm_conn_in_session(conn);
	if (ours)
		sdsm_session_end_locked(peer, "it said goodbye");
	spin_unlock_bh(&peer->sess_lock);
	sdsm_conn_fail(conn, "the peer said goodbye");
	sdsm_peer_kick(peer);
}

/* Are messages of a resumed session still to be sent again? */
static bool sdsm_session_resending(struct sdsm_peer *peer)
{
	bool resending;

	spin_lock_bh(&peer->sess_lock);
	resending = sdsm_sess_live(&peer->sess) &&
		    sdsm_sess_resending(&peer->sess);
	spin_unlock_bh(&peer->sess_lock);
	return resending;
}

/*
 * rdma_cm reported ESTABLISHED (cm handler context): once the peer is also
 * authenticated, send our pattern page.
 */
void sdsm_conn_established(struct sdsm_conn *conn)
{
	struct sdsm_peer *peer = conn->peer;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	/* For the log line that says page frames do not get through. */
	if (!ib_query_qp(conn->qp, &attr, IB_QP_PATH_MTU, &init))
		conn->path_mtu = ib_mtu_enum_to_int(attr.path_mtu);
	spin_lock(&peer->lock);
	WRITE_ONCE(conn->last_rx, jiffies);
	set_bit(SDSM_CONN_ESTABLISHED, &conn->flags);
	spin_unlock(&peer->lock);
	sdsm_conn_hello(conn);
}

/*
 * Send our hello, the PING with the pattern page, so the peer can check
 * the page path before it reports us up, and learn where our session
 * stands: once per connection, when it is both ESTABLISHED and AUTHED
 * and, on the passive side, the active side's hello decided the session
 * (whichever comes last calls this).  Process context.
 */
void sdsm_conn_hello(struct sdsm_conn *conn)
{
	struct sdsm_peer *peer = conn->peer;
	struct sdsm_wire_hello hello;
	struct sdsm_sess_hello h;
	struct page *page;
	bool send;
	int ret;

	spin_lock(&peer->lock);
	send = test_bit(SDSM_CONN_ESTABLISHED, &conn->flags) &&
	       test_bit(SDSM_CONN_AUTHED, &conn->flags) &&
	       (conn->active || test_bit(SDSM_CONN_VERIFIED, &conn->flags)) &&
	       !test_and_set_bit(SDSM_CONN_HELLO, &conn->flags);
	spin_unlock(&peer->lock);
	if (!send)
		return;

	page = alloc_page(GFP_KERNEL);
	if (!page) {
		sdsm_conn_fail(conn, "no memory for the pattern page");
		return;
	}
	sdsm_pattern_fill(page);
	if (conn->active) {
		/* The session we hold, for the passive side to decide on. */
		spin_lock_bh(&peer->sess_lock);
		sdsm_sess_hello_fill(&peer->sess, sdsm_cl.incarnation, &h);
		spin_unlock_bh(&peer->sess_lock);
		sdsm_hello_to_wire(&h, &hello);
	} else {
		hello = conn->hello_out;	/* the decision, made already */
	}
	sdsm_ping_fill(&hello.ping);
	ret = sdsm_conn_send(conn, SDSM_MSG_PING, &hello, sizeof(hello), page,
			     true);
	put_page(page);
	if (!ret) {
		set_bit(SDSM_CONN_HELLO_SENT, &conn->flags);
	} else if (ret != -ENOTCONN) {
		pr_err("node %u: cannot send the pattern page: %d\n",
		       peer->id, ret);
		sdsm_conn_fail(conn, "pattern page send failed");
	}
	sdsm_peer_kick(peer);
}

static void sdsm_ping_rx(struct sdsm_conn *conn, const struct sdsm_msg *msg)
{
	struct sdsm_peer *peer = conn->peer;
	const struct sdsm_wire_ping *ping = msg->payload;
	u64 inc;
	int bad;

	if (msg->len < sizeof(*ping)) {
		pr_err("node %u: short PING\n", peer->id);
		sdsm_conn_fail(conn, "malformed message");
		return;
	}
	inc = be64_to_cpu(ping->incarnation);
	if (msg->page) {
		if (msg->len < sizeof(struct sdsm_wire_hello)) {
			pr_err("node %u: short hello\n", peer->id);
			sdsm_conn_fail(conn, "malformed message");
			return;
		}
		bad = sdsm_pattern_check(msg->page, peer->id, inc);
		if (bad >= 0) {
			pr_err("node %u: pattern page corrupt at word %d: connection torn down\n",
			       peer->id, bad);
			sdsm_conn_fail(conn, "pattern page corrupt");
			return;
		}
		if (!sdsm_session_hello_rx(conn, msg->payload))
			return;
		spin_lock(&peer->lock);
		conn->hello_incarnation = inc;
		set_bit(SDSM_CONN_VERIFIED, &conn->flags);
		spin_unlock(&peer->lock);
		if (!conn->active)
			sdsm_conn_hello(conn);	/* our answer */
		sdsm_peer_kick(peer);
	}
	/* Echo the sender's timestamp; our own clock plays no part. */
	sdsm_conn_send(conn, SDSM_MSG_PONG, ping, sizeof(*ping), NULL, false);
}

static void sdsm_pong_rx(struct sdsm_conn *conn, const struct sdsm_msg *msg)
{
	struct sdsm_peer *peer = conn->peer;
	const struct sdsm_wire_ping *pong = msg->payload;
	u64 now = ktime_get_ns(), sent, rtt, srtt;

	if (msg->len < sizeof(*pong) ||
	    be64_to_cpu(pong->incarnation) != sdsm_cl.incarnation)
		return;
	sent = be64_to_cpu(pong->time_ns);
	if (sent > now)
		return;
	rtt = now - sent;
	/* Smoothed like TCP's srtt: 7/8 old + 1/8 new; first sample as is. */
	srtt = READ_ONCE(peer->srtt_ns);
	srtt = srtt ? srtt - (srtt >> 3) + (rtt >> 3) : rtt;
	WRITE_ONCE(peer->srtt_ns, max_t(u64, srtt, 1));
}

/* Deliver one received message; rx_work of @conn (process context). */
void sdsm_msg_dispatch(struct sdsm_conn *conn, const struct sdsm_msg *msg)
{
	sdsm_handler_fn fn;

	switch (msg->type) {
	case SDSM_MSG_PING:
		sdsm_ping_rx(conn, msg);
		return;
	case SDSM_MSG_PONG:
		sdsm_pong_rx(conn, msg);
		return;
	}
	fn = msg->type < SDSM_MSG_MAX ? READ_ONCE(sdsm_handlers[msg->type]) :
					NULL;
	if (!fn) {
		pr_warn_ratelimited("node %u: no handler for message type %u, dropped\n",
				    msg->peer->id, msg->type);
		return;
	}
	fn(msg);
}

/**
 * sdsm_handler_register - install the receive handler of a message type
 * @type: a type of enum sdsm_msg_type after SDSM_MSG_LINK_LAST
 * @fn: called in process context for every message of @type, in order per
 *	peer; may sleep and send; @msg and its page are valid only during the
 *	call
 *
 * Return: 0, -EINVAL for a bad type, -EBUSY if a handler is installed.
 */
int sdsm_handler_register(u16 type, sdsm_handler_fn fn)
{
	if (!fn || type <= SDSM_MSG_LINK_LAST || type >= SDSM_MSG_MAX)
		return -EINVAL;
	if (cmpxchg(&sdsm_handlers[type], NULL, fn))
		return -EBUSY;
	return 0;
}

/*
 * Remove a handler and wait until no call of it is running.  Context:
 * process, not from a handler or notifier (it flushes their workqueue).
 */
void sdsm_handler_unregister(u16 type)
{
	if (type <= SDSM_MSG_LINK_LAST || type >= SDSM_MSG_MAX)
		return;
	WRITE_ONCE(sdsm_handlers[type], NULL);
	flush_workqueue(sdsm_cl.wq);
	flush_workqueue(sdsm_cl.tx_wq);	/* deliveries to this node */
}

/* SDSM_PEER_EVENT_UP / _DOWN with the struct sdsm_peer * as data. */
int sdsm_peer_notifier_register(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&sdsm_peer_notifier, nb);
}

int sdsm_peer_notifier_unregister(struct notifier_block *nb)
{
	return blocking_notifier_chain_unregister(&sdsm_peer_notifier, nb);
}

/*
 * Post a train of @n messages to an UP peer: sdsm_conn_send_train() on its
 * connection.  Only a send queue's holder calls this (struct sdsm_txq,
 * @sending), so a session's messages are numbered in queue order.
 * Return: as sdsm_conn_send_train(), or -ENOTCONN if the peer's link is
 * not up.
 */
static int sdsm_peer_send_train(struct sdsm_peer *peer,
				const struct sdsm_wmsg *m, unsigned int n,
				bool wait)
{
	struct sdsm_conn *conn = NULL;
	int ret;

	if (!peer || peer->id == sdsm_cl.node_id)
		return -EINVAL;
	spin_lock(&peer->lock);
	if (peer->state == SDSM_PEER_UP) {
		conn = peer->conn;
		kref_get(&conn->ref);
	}
	spin_unlock(&peer->lock);
	if (!conn)
		return -ENOTCONN;
	ret = sdsm_conn_send_train(conn, m, n, wait);
	sdsm_conn_put(conn);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Send queues                                                         */

/* A message waiting in a send queue. */
struct sdsm_out {
	struct list_head node;
	unsigned int epoch;
	u16 type;
	u16 len;
	bool pooled;		/* an entry of its queue's pool */
	struct page *page;
	u8 payload[];
};

/* Preallocated entries a queue has (struct sdsm_txq, @pool). */
#define SDSM_TXQ_POOL		32
#define SDSM_OUT_SIZE \
	ALIGN(sizeof(struct sdsm_out) + SDSM_MSG_MAX_PAYLOAD, sizeof(long))

/* What became of a message a queue tried to post. */
enum sdsm_txq_res {
	SDSM_TXQ_DONE,		/* sent, delivered here, or dropped */
	SDSM_TXQ_RETRY,		/* no slot or credit yet: try again */
	SDSM_TXQ_PARK,		/* not connected: wait for the peer's UP */
};

/*
 * Messages to this node are delivered by whoever holds sdsm_self_drain:
 * its queue's work item, a faulting task that finishes its own
 * transaction (home here) without waiting for a worker, or the receive
 * handler whose message queued them; one drainer keeps them FIFO.
 */
static DEFINE_MUTEX(sdsm_self_drain);

static void sdsm_out_free(struct sdsm_txq *q, struct sdsm_out *out)
{
	if (out->page)
		put_page(out->page);
	if (!out->pooled) {
		kfree(out);
		return;
	}
	spin_lock(&q->lock);
	list_add(&out->node, &q->free);
	spin_unlock(&q->lock);
}

/* A message of the fault path: coherence, or a home look-up. */
static bool sdsm_msg_costs(u16 type)
{
	return type == SDSM_MSG_COH || type == SDSM_MSG_HOME_REQ ||
	       type == SDSM_MSG_HOME_REP;
}

/* A message to this node, handed to its handler as if received. */
static void sdsm_deliver_local(struct sdsm_peer *self, struct sdsm_out *out)
{
	struct sdsm_msg msg = {
		.peer = self,
		.type = out->type,
		.len = out->len,
		.payload = out->payload,
		.page = out->page,
	};
	sdsm_handler_fn fn = READ_ONCE(sdsm_handlers[out->type]);

	if (sdsm_msg_costs(out->type))
		sdsm_cost(SDSM_STAT_COST_LOCAL_MSGS);
	/* No handler: the layer that queued it is gone (module unload). */
	if (fn)
		fn(&msg);
}

/*
 * Post @n messages @m of epoch @epoch to @peer (not this node) as one
 * train; *@taken: how many of them are done with (sent, or dropped).
 * Context: process context, the caller holds @peer->txq.sending.
 */
static enum sdsm_txq_res sdsm_txq_send(struct sdsm_peer *peer,
				       unsigned int epoch,
				       const struct sdsm_wmsg *m,
				       unsigned int n, bool wait,
				       unsigned int *taken)
{
	unsigned int i;
	int ret;

	*taken = n;
	if (epoch != READ_ONCE(peer->txq.epoch))
		return SDSM_TXQ_DONE;
	ret = sdsm_peer_send_train(peer, m, n, wait);
	if (READ_ONCE(sdsm_cl.shutdown))
		return SDSM_TXQ_DONE;
	*taken = 0;
	if (ret == -ETIMEDOUT || ret == -EAGAIN)
		return SDSM_TXQ_RETRY;	/* peer slow but up: keep order */
	if (ret == -ENOTCONN)
		return SDSM_TXQ_PARK;	/* its DOWN drops it, or its UP sends it */
	*taken = ret > 0 ? ret : n;
	for (i = 0; ret > 0 && i < ret; i++) {
		if (m[i].page)
			sdsm_stat_add(SDSM_STAT_BYTES_SENT, PAGE_SIZE);
		if (sdsm_msg_costs(m[i].type))
			sdsm_cost(SDSM_STAT_COST_MSGS);
	}
	/*
	 * Not numbered, and the transport failed the connection
	 * (sdsm_conn_send()); cannot happen to a message of the upper
	 * layers unless the session is gone, which reports the peer DOWN,
	 * and the upper layers account for the message.
	 */
	if (ret < 0)
		pr_warn_ratelimited("node %u: message %u not sent (%d), connection failed\n",
				    peer->id, m[0].type, ret);
	return SDSM_TXQ_DONE;
}

/*
 * Post the @n messages @out (of one epoch; one, for this node) to @peer as
 * a train, or deliver it here if @peer is this node; *@taken: how many,
 * from the first, are done with.  Context: process context, the caller
 * holds @peer->txq.sending.
 */
static enum sdsm_txq_res sdsm_txq_post(struct sdsm_peer *peer,
				       struct sdsm_out **out, unsigned int n,
				       bool wait, unsigned int *taken)
{
	struct sdsm_wmsg m[SDSM_TRAIN_MAX];
	unsigned int i;

	if (peer->id != sdsm_cl.node_id) {
		for (i = 0; i < n; i++)
			m[i] = (struct sdsm_wmsg){ .type = out[i]->type,
						   .len = out[i]->len,
						   .payload = out[i]->payload,
						   .page = out[i]->page };
		return sdsm_txq_send(peer, out[0]->epoch, m, n, wait, taken);
	}
	*taken = 1;
	if (out[0]->epoch == READ_ONCE(peer->txq.epoch))
		sdsm_deliver_local(peer, out[0]);
	return SDSM_TXQ_DONE;
}

/*
 * A queued copy of a message, in an entry of @q's pool if one is free;
 * small and bounded, it cannot fail.
 */
static struct sdsm_out *sdsm_out_new(struct sdsm_txq *q, u16 type,
				     const void *payload, u32 len,
				     struct page *page)
{
	struct sdsm_out *out;

	spin_lock(&q->lock);
	out = list_first_entry_or_null(&q->free, struct sdsm_out, node);
	if (out)
		list_del(&out->node);
	spin_unlock(&q->lock);
	if (!out) {
		out = kmalloc(struct_size(out, payload, len),
			      GFP_KERNEL | __GFP_NOFAIL);
		out->pooled = false;
		if (sdsm_msg_costs(type))
			sdsm_cost(SDSM_STAT_COST_ALLOCS);
	}
	out->type = type;
	out->len = len;
	out->page = page;
	memcpy(out->payload, payload, len);
	return out;
}

/*
 * Give up @q->sending after posting @out; @out goes back to the head of
 * the queue unless done.  With @kick, the worker is woken for what queued
 * up meanwhile (unless the peer is not connected: its UP kicks).
 */
static void sdsm_txq_release(struct sdsm_txq *q, struct sdsm_out *out,
			     enum sdsm_txq_res res, bool kick)
{
	bool more;

	spin_lock(&q->lock);
	if (res != SDSM_TXQ_DONE)
		list_add(&out->node, &q->queue);
	q->sending = false;
	more = !list_empty(&q->queue);
	spin_unlock(&q->lock);
	if (res == SDSM_TXQ_DONE && out)
		sdsm_out_free(q, out);
	if (more && kick && res != SDSM_TXQ_PARK)
		queue_work(sdsm_cl.tx_wq, &q->work);
}

/**
 * sdsm_queue - queue a message for a node, this node included
 * @dst: node id
 * @type: enum sdsm_msg_type
 * @payload: @len bytes, copied
 * @len: at most SDSM_MSG_MAX_PAYLOAD
 * @page: optional page, taken over (put once sent or dropped); its
 *	contents must not change until then
 *
 * Messages to one node leave in the order they were queued.  A message
 * for a peer that is not UP waits for its UP; one queued before a DOWN
 * report of its peer, or while the upper layers handle it, is dropped.
 * One posted at once (nothing queued before it) is not copied: only a
 * message that has to wait is.
 *
 * Context: process context, any locks but spinlocks held; never sleeps
 * for the network, so receive handlers may call it.
 */
void sdsm_queue(u16 dst, u16 type, const void *payload, u32 len,
		struct page *page)
{
	enum sdsm_txq_res res;
	struct sdsm_peer *peer;
	unsigned int epoch;
	struct sdsm_txq *q;
	struct sdsm_out *out;
	bool direct, corked;

	if (WARN_ON_ONCE(dst >= sdsm_cl.nr_nodes || !type ||
			 type >= SDSM_MSG_MAX ||
			 len > SDSM_MSG_MAX_PAYLOAD)) {
		if (page)
			put_page(page);
		return;
	}
	peer = &sdsm_cl.peers[dst];
	q = &peer->txq;
	spin_lock(&q->lock);
	epoch = q->epoch;
	direct = dst != sdsm_cl.node_id && !q->sending && !q->dead &&
		 q->corker != current && list_empty(&q->queue) &&
		 READ_ONCE(peer->state) == SDSM_PEER_UP &&
		 !sdsm_session_resending(peer);
	if (direct)
		q->sending = true;
	spin_unlock(&q->lock);
	if (direct) {
		struct sdsm_wmsg m = { .type = type, .len = len,
				       .payload = payload, .page = page };
		unsigned int taken;

		res = sdsm_txq_send(peer, epoch, &m, 1, false, &taken);
		out = NULL;
		if (res == SDSM_TXQ_DONE) {
			if (page)
				put_page(page);
		} else {
			/* It waits after all: first in line, as a copy. */
			out = sdsm_out_new(q, type, payload, len, page);
			out->epoch = epoch;
		}
		sdsm_txq_release(q, out, res, true);
		return;
	}
	/* Queued behind others: the protocols cannot take a send back. */
	out = sdsm_out_new(q, type, payload, len, page);
	spin_lock(&q->lock);
	out->epoch = q->epoch;
	list_add_tail(&out->node, &q->queue);
	corked = q->corker == current;
	spin_unlock(&q->lock);
	if (!corked)
		queue_work(sdsm_cl.tx_wq, &q->work);
}

/**
 * sdsm_node_epoch - how many times messages queued for a node were dropped
 * @node: a peer
 *
 * The count grows when the node is reported down (its session ended: what
 * was queued or unacknowledged is lost); a caller that compares two
 * readings knows whether everything it sent in between can still arrive.
 */
unsigned int sdsm_node_epoch(unsigned int node)
{
	return node < sdsm_cl.nr_nodes ?
	       READ_ONCE(sdsm_cl.peers[node].txq.epoch) : 0;
}

/**
 * sdsm_node_up - reported up, and not down since: what is queued for it
 *	arrives, whether or not its link is up right now
 * @node: node id; false for this node
 */
bool sdsm_node_up(unsigned int node)
{
	return node < sdsm_cl.nr_nodes && node != sdsm_cl.node_id &&
	       sdsm_peer_member_state(&sdsm_cl.peers[node]) == SDSM_PEER_UP &&
	       sdsm_node_usable(node);
}

/**
 * sdsm_peer_reset - end the session with a peer, and its connection
 * @peer: a peer whose messages make no sense (a bug on one side)
 * @why: for the log
 *
 * Both sides report each other DOWN and start afresh: the peer learns it
 * from our hello on the next connection.  Context: process, not holding
 * a lock of the messaging layer.
 */
void sdsm_peer_reset(struct sdsm_peer *peer, const char *why)
{
	struct sdsm_conn *conn = sdsm_conn_get(peer);

	sdsm_session_end(peer, why);
	if (conn) {
		sdsm_conn_fail(conn, why);
		sdsm_conn_put(conn);
	}
}

/**
 * sdsm_node_usable - not reported down since it was last up
 * @node: node id; this node is always usable
 */
bool sdsm_node_usable(unsigned int node)
{
	return node < sdsm_cl.nr_nodes &&
	       !READ_ONCE(sdsm_cl.peers[node].txq.dead);
}

/*
 * Send again, in order, what a resumed session's peer did not deliver;
 * before anything new.  Context: the caller holds @peer->txq.sending.
 * Return: SDSM_TXQ_DONE when all went, SDSM_TXQ_PARK if the connection
 * went away (the next one resumes the session again).
 */
static enum sdsm_txq_res sdsm_txq_resend(struct sdsm_peer *peer)
{
	struct sdsm_conn *conn;
	u32 seq;
	int ret;

	for (;;) {
		spin_lock(&peer->lock);
		conn = peer->state == SDSM_PEER_UP ? peer->conn : NULL;
		if (conn)
			kref_get(&conn->ref);
		spin_unlock(&peer->lock);
		if (!conn)
			return SDSM_TXQ_PARK;
		spin_lock_bh(&peer->sess_lock);
		seq = sdsm_conn_in_session(conn) ?
		      sdsm_sess_resend_next(&peer->sess) : 0;
		spin_unlock_bh(&peer->sess_lock);
		ret = seq ? sdsm_conn_resend(conn, seq) : 0;
		/* A peer that takes none for peer_timeout_ms: new link. */
		if (ret && ret != -ENOTCONN)
			sdsm_conn_fail(conn, "resend timed out");
		sdsm_conn_put(conn);
		if (ret)
			return SDSM_TXQ_PARK;
		if (!seq)
			return SDSM_TXQ_DONE;
	}
}

/*
 * Post what is queued for @peer, in trains, until the queue is empty or
 * the peer cannot take more now.  @wait: sleep for a send slot and a
 * credit, as the queue's worker does; else leave what cannot leave at once
 * to the worker.  Context: process context.
 */
static void sdsm_txq_drain(struct sdsm_peer *peer, bool wait)
{
	bool self = peer->id == sdsm_cl.node_id;
	struct sdsm_out *out[SDSM_TRAIN_MAX];
	struct sdsm_txq *q = &peer->txq;
	unsigned int i, n, taken;
	enum sdsm_txq_res res;

	for (;;) {
		spin_lock(&q->lock);
		if (q->sending) {
			/* A direct sender; it kicks us when it is done. */
			spin_unlock(&q->lock);
			return;
		}
		if (!self && READ_ONCE(peer->state) == SDSM_PEER_UP &&
		    sdsm_session_resending(peer)) {
			if (!wait) {
				spin_unlock(&q->lock);
				queue_work(sdsm_cl.tx_wq, &q->work);
				return;
			}
			q->sending = true;
			spin_unlock(&q->lock);
			res = sdsm_txq_resend(peer);
			spin_lock(&q->lock);
			q->sending = false;
			spin_unlock(&q->lock);
			if (res == SDSM_TXQ_PARK)
				return;
			continue;
		}
		out[0] = list_first_entry_or_null(&q->queue, struct sdsm_out,
						  node);
		if (!out[0] || (out[0]->epoch == q->epoch && !self &&
				READ_ONCE(peer->state) != SDSM_PEER_UP)) {
			/* Empty, or not up yet: the UP report kicks us. */
			spin_unlock(&q->lock);
			return;
		}
		list_del(&out[0]->node);
		/*
		 * A train: the messages after it of its epoch, the current,
		 * all of the upper layers (a link message travels alone).
		 */
		for (n = 1; !self && n < SDSM_TRAIN_MAX &&
		     out[0]->epoch == q->epoch &&
		     out[0]->type > SDSM_MSG_LINK_LAST &&
		     !list_empty(&q->queue); n++) {
			out[n] = list_first_entry(&q->queue, struct sdsm_out,
						  node);
			if (out[n]->epoch != q->epoch ||
			    out[n]->type <= SDSM_MSG_LINK_LAST)
				break;
			list_del(&out[n]->node);
		}
		q->sending = true;
		spin_unlock(&q->lock);
		res = sdsm_txq_post(peer, out, n, wait, &taken);
		for (i = 0; i < taken; i++)
			sdsm_out_free(q, out[i]);
		/* The others go back to the head of the queue, in order. */
		spin_lock(&q->lock);
		for (i = n; i-- > taken;)
			list_add(&out[i]->node, &q->queue);
		q->sending = false;
		spin_unlock(&q->lock);
		if (res == SDSM_TXQ_PARK)
			return;
		if (res == SDSM_TXQ_RETRY && !wait) {
			queue_work(sdsm_cl.tx_wq, &q->work);
			return;
		}
		cond_resched();
	}
}

/**
 * sdsm_queue_cork - hold back this task's messages for a node, for trains
 * @dst: node id; this node's own queue is never held back
 *
 * Until the matching sdsm_queue_uncork(), what this task queues for @dst
 * waits in its queue: no direct post, no worker woken.  At the uncork it
 * leaves as trains of up to SDSM_TRAIN_MAX messages a send.  Other tasks'
 * messages are not held back (they find the queue not empty, queue theirs
 * behind and wake the worker, which posts all in order).  One task at a
 * time holds a queue's cork: the receive worker holds its peer's while it
 * hands on a received train (the answers to it leave together), a fault
 * the home's while it reads ahead.
 *
 * Context: process context, any locks but spinlocks held; the task waits
 * for nothing it queued before it uncorks.
 * Return: true if this task holds the cork now; only then uncork.
 */
bool sdsm_queue_cork(u16 dst)
{
	bool held = false;
	struct sdsm_txq *q;

	if (dst >= sdsm_cl.nr_nodes || dst == sdsm_cl.node_id)
		return false;
	q = &sdsm_cl.peers[dst].txq;
	spin_lock(&q->lock);
	if (!q->corker || q->corker == current) {
		q->corker = current;
		q->corked++;
		held = true;
	}
	spin_unlock(&q->lock);
	return held;
}

/**
 * sdsm_queue_uncork - end a sdsm_queue_cork() of @dst that returned true
 * @dst: node id, as given to sdsm_queue_cork()
 *
 * The last uncork posts what waits, as trains, without sleeping; what the
 * peer cannot take at once is left to the queue's worker.
 * Context: process context, as sdsm_queue_cork(), in the same task.
 */
void sdsm_queue_uncork(u16 dst)
{
	struct sdsm_peer *peer;
	struct sdsm_txq *q;
	bool post = false;

	if (dst >= sdsm_cl.nr_nodes || dst == sdsm_cl.node_id)
		return;
	peer = &sdsm_cl.peers[dst];
	q = &peer->txq;
	spin_lock(&q->lock);
	if (!WARN_ON_ONCE(q->corker != current || !q->corked) &&
	    !--q->corked) {
		q->corker = NULL;
		post = !list_empty(&q->queue);
	}
	spin_unlock(&q->lock);
	if (post)
		sdsm_txq_drain(peer, false);
}

static void sdsm_txq_work(struct work_struct *work)
{
	struct sdsm_txq *q = container_of(work, struct sdsm_txq, work);
	struct sdsm_peer *peer = container_of(q, struct sdsm_peer, txq);

	if (peer->id != sdsm_cl.node_id) {
		sdsm_txq_drain(peer, true);
		return;
	}
	mutex_lock(&sdsm_self_drain);
	sdsm_txq_drain(peer, true);
	mutex_unlock(&sdsm_self_drain);
}

/**
 * sdsm_queue_drain_self - deliver what is queued for this node, now
 *
 * In the caller, unless someone else is at it.  Context: process context,
 * no lock held that a handler of a queued message takes.
 */
void sdsm_queue_drain_self(void)
{
	struct sdsm_peer *self = &sdsm_cl.peers[sdsm_cl.node_id];

	if (list_empty_careful(&self->txq.queue) ||
	    !mutex_trylock(&sdsm_self_drain))
		return;
	sdsm_txq_drain(self, true);
	mutex_unlock(&sdsm_self_drain);
}

/* Drop everything queued for @peer; with @down, mark it not usable. */
static void sdsm_txq_purge(struct sdsm_peer *peer, bool down)
{
	struct sdsm_txq *q = &peer->txq;
	struct sdsm_out *out, *tmp;
	LIST_HEAD(drop);

	spin_lock(&q->lock);
	q->epoch++;
	if (down)
		WRITE_ONCE(q->dead, true);
	list_splice_init(&q->queue, &drop);
	spin_unlock(&q->lock);
	list_for_each_entry_safe(out, tmp, &drop, node)
		sdsm_out_free(q, out);
}

/*
 * Drop every queued message and stop the queues' work.  Context: module
 * init failure or exit, after the upper layers are gone.
 */
void sdsm_queues_purge(void)
{
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];

		sdsm_txq_purge(peer, false);
		cancel_work_sync(&peer->txq.work);
		sdsm_txq_purge(peer, false);
	}
}

static void sdsm_peer_work(struct work_struct *work)
{
	struct sdsm_peer *peer = container_of(work, struct sdsm_peer, work);
	struct sdsm_conn *conn, *dead = NULL, *refused = NULL;
	enum sdsm_peer_state was, state;
	const char *why = NULL, *ended;
	bool connect = false, live;
	unsigned int delay = 0;
	u64 inc;
	u32 gen;

	if (unlikely(READ_ONCE(sdsm_inject_up_delay_ms))) {
		bool hold;

		spin_lock(&peer->lock);
		hold = sdsm_peer_comes_up(peer);
		spin_unlock(&peer->lock);
		if (hold)
			sdsm_inject_pause(&sdsm_inject_up_delay_ms);
	}
	spin_lock(&peer->lock);
	if (peer->pending && test_bit(SDSM_CONN_FAILED, &peer->pending->flags)) {
		refused = peer->pending;
		peer->pending = NULL;
	}
	was = peer->state;
	conn = peer->conn;
	if (conn && test_bit(SDSM_CONN_FAILED, &conn->flags)) {
		why = conn->fail_reason;
		dead = conn;
	} else if (sdsm_peer_comes_up(peer)) {
		if (conn->hello_incarnation != conn->remote_incarnation) {
			why = "pattern incarnation differs from handshake";
			dead = conn;
		} else {
			sdsm_peer_set_state(peer, SDSM_PEER_UP);
			peer->backoff_ms = SDSM_BACKOFF_MIN_MS;
			peer->last_err = 0;
			peer->last_fail = NULL;
		}
	}
	if (dead) {
		peer->conn = NULL;
		sdsm_peer_set_state(peer, SDSM_PEER_DOWN);
	}
	state = peer->state;
	spin_lock_bh(&peer->sess_lock);
	live = sdsm_sess_live(&peer->sess);
	gen = peer->sess.gen;
	inc = peer->sess.remote_inc;
	ended = peer->sess_end;
	spin_unlock_bh(&peer->sess_lock);
	if (!peer->conn && peer->id > sdsm_cl.node_id &&
	    !READ_ONCE(sdsm_cl.shutdown)) {
		connect = true;
		delay = peer->backoff_ms;
		peer->backoff_ms = min(peer->backoff_ms * 2,
				       (unsigned int)SDSM_BACKOFF_MAX_MS);
		/* A session waits for the link: try often enough. */
		if (live)
			peer->backoff_ms = min(peer->backoff_ms,
					       sdsm_cl.heartbeat_ms);
	}
	spin_unlock(&peer->lock);

	if (refused) {
		/* Reached us from the peer's address, never authenticated. */
		pr_warn_ratelimited("node %u (%pI4): connection refused before authentication: %s\n",
				    peer->id, &peer->addr.sin_addr,
				    refused->fail_reason);
		sdsm_conn_reap(refused);
	}
	if (dead) {
		if (was == SDSM_PEER_UP && live)
			pr_info("node %u (%pI4): link lost (%s); the session waits for it up to %u ms\n",
				peer->id, &peer->addr.sin_addr, why,
				sdsm_cl.peer_timeout_ms);
		else if (was == SDSM_PEER_UP)
			pr_info("node %u (%pI4): link lost: %s\n", peer->id,
				&peer->addr.sin_addr, why);
		else if (test_bit(SDSM_CONN_ESTABLISHED, &dead->flags) &&
			 why != peer->last_fail)
			/* Connected but never came up: worth a line. */
			pr_info("node %u (%pI4): connection failed before up: %s\n",
				peer->id, &peer->addr.sin_addr, why);
		else
			pr_debug("node %u: connection attempt failed: %s\n",
				 peer->id, why);
		peer->last_fail = why;
		sdsm_conn_reap(dead);
	}

	/* DOWN and UP are the session's, not the connection's. */
	if (peer->notified_up && (!live || gen != peer->notified_gen)) {
		pr_info("node %u (%pI4) down: %s\n", peer->id,
			&peer->addr.sin_addr, ended ?: "session ended");
		/*
		 * A delivery that found the session live before it ended
		 * finishes first: no handler sees the dead session's
		 * messages after the layers have forgotten its node.
		 */
		mutex_lock(&peer->rx_mutex);
		mutex_unlock(&peer->rx_mutex);
		if (unlikely(READ_ONCE(sdsm_inject_down_delay_ms)))
			sdsm_inject_pause(&sdsm_inject_down_delay_ms);
		sdsm_txq_purge(peer, true);
		blocking_notifier_call_chain(&sdsm_peer_notifier,
					     SDSM_PEER_EVENT_DOWN, peer);
		sdsm_txq_purge(peer, true);
		/* Nothing is delivered until the next session's UP. */
		smp_store_release(&peer->reported_gen, 0);
		WRITE_ONCE(peer->notified_up, false);
	}
	if (!peer->notified_up && state == SDSM_PEER_UP && live) {
		WRITE_ONCE(peer->notified_gen, gen);
		WRITE_ONCE(peer->notified_up, true);
		pr_info("node %u (%pI4) up, incarnation %llx\n", peer->id,
			&peer->addr.sin_addr, inc);
		/* What waited for the UP leaves before what the layers send. */
		WRITE_ONCE(peer->txq.dead, false);
		queue_work(sdsm_cl.tx_wq, &peer->txq.work);
		blocking_notifier_call_chain(&sdsm_peer_notifier,
					     SDSM_PEER_EVENT_UP, peer);
		/* The session's messages may be delivered now. */
		smp_store_release(&peer->reported_gen, gen);
		wake_up_all(&peer->report_wait);
	} else if (was != SDSM_PEER_UP && state == SDSM_PEER_UP) {
		/* Resumed: what the link lost goes again, then the queue. */
		queue_work(sdsm_cl.tx_wq, &peer->txq.work);
	}
	if (connect)
		queue_delayed_work(sdsm_cl.wq, &peer->connect_work,
				   msecs_to_jiffies(delay));
}

static void sdsm_connect_work(struct work_struct *work)
{
	struct sdsm_peer *peer = container_of(to_delayed_work(work),
					      struct sdsm_peer, connect_work);
	int ret;

	if (READ_ONCE(sdsm_cl.shutdown))
		return;
	ret = sdsm_connect_active(peer);
	if (ret && ret != -ESHUTDOWN) {
		pr_debug("node %u: cannot start a connect: %d\n",
			 peer->id, ret);
		sdsm_peer_kick(peer);	/* schedules the next attempt */
	}
}

/*
 * A session whose link is down ends after peer_timeout_ms without a word
 * of the peer; the peer work then reports it DOWN.
 */
static void sdsm_session_expire(struct sdsm_peer *peer, unsigned long timeout)
{
	bool end;

	spin_lock_bh(&peer->sess_lock);
	end = sdsm_sess_live(&peer->sess) &&
	      READ_ONCE(peer->state) != SDSM_PEER_UP &&
	      time_after(jiffies, READ_ONCE(peer->heard) + timeout);
	if (end)
		sdsm_session_end_locked(peer, "heartbeat timed out");
	spin_unlock_bh(&peer->sess_lock);
	if (end)
		sdsm_peer_kick(peer);
}

/* Is a session waiting for a new link to the peer? */
static bool sdsm_session_live(struct sdsm_peer *peer)
{
	bool live;

	spin_lock_bh(&peer->sess_lock);
	live = sdsm_sess_live(&peer->sess);
	spin_unlock_bh(&peer->sess_lock);
	return live;
}

static void sdsm_heartbeat_work(struct work_struct *work)
{
	unsigned long timeout = msecs_to_jiffies(sdsm_cl.peer_timeout_ms);
	struct sdsm_wire_ping ping;
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];
		unsigned long connect_timeout = 2 * timeout;
		struct sdsm_conn *conn;

		if (i == sdsm_cl.node_id)
			continue;
		sdsm_session_expire(peer, timeout);
		/*
		 * An attempt made while the link was still down waits for
		 * rdma_cm's own timeouts, seconds: a session waiting for
		 * the link tries again sooner.
		 */
		if (sdsm_session_live(peer))
			connect_timeout = msecs_to_jiffies(2 * sdsm_cl.heartbeat_ms);
		/* An accepted connection must authenticate in time. */
		conn = sdsm_conn_get_pending(peer);
		if (conn) {
			if (time_after(jiffies, conn->created + 2 * timeout))
				sdsm_conn_fail(conn, "no AUTH in time");
			sdsm_conn_put(conn);
		}
		conn = sdsm_conn_get(peer);
		if (!conn)
			continue;
		if (!test_bit(SDSM_CONN_ESTABLISHED, &conn->flags)) {
			if (time_after(jiffies, conn->created + connect_timeout))
				sdsm_conn_fail(conn, "connect timed out");
		} else if (time_after(jiffies,
				      READ_ONCE(conn->last_rx) + timeout)) {
			sdsm_conn_fail(conn, "heartbeat timed out");
		} else {
			sdsm_ping_fill(&ping);
			/* A full send queue is itself a sign of trouble. */
			sdsm_conn_send(conn, SDSM_MSG_PING, &ping, sizeof(ping),
				       NULL, false);
			if (test_bit(SDSM_CONN_VERIFIED, &conn->flags) &&
			    READ_ONCE(peer->state) == SDSM_PEER_CONNECTING)
				sdsm_peer_kick(peer);
		}
		sdsm_conn_put(conn);
	}
	if (!READ_ONCE(sdsm_cl.shutdown))
		queue_delayed_work(sdsm_cl.wq, &sdsm_cl.heartbeat_work,
				   msecs_to_jiffies(sdsm_cl.heartbeat_ms));
}

/* Fill @q's pool of queue entries (struct sdsm_txq, @free). */
static int sdsm_txq_pool_init(struct sdsm_txq *q)
{
	unsigned int i;

	INIT_LIST_HEAD(&q->free);
	q->pool = kcalloc(SDSM_TXQ_POOL, SDSM_OUT_SIZE, GFP_KERNEL);
	if (!q->pool)
		return -ENOMEM;
	for (i = 0; i < SDSM_TXQ_POOL; i++) {
		struct sdsm_out *out = q->pool + i * SDSM_OUT_SIZE;

		out->pooled = true;
		list_add_tail(&out->node, &q->free);
	}
	return 0;
}

/* Peers are set up (ids, addresses) by sdsm_main.c before this. */
int sdsm_cluster_start(void)
{
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];

		spin_lock_init(&peer->lock);
		peer->state = i == sdsm_cl.node_id ? SDSM_PEER_SELF :
						     SDSM_PEER_DOWN;
		peer->backoff_ms = SDSM_BACKOFF_MIN_MS;
		INIT_WORK(&peer->work, sdsm_peer_work);
		INIT_DELAYED_WORK(&peer->connect_work, sdsm_connect_work);
		spin_lock_init(&peer->txq.lock);
		INIT_LIST_HEAD(&peer->txq.queue);
		INIT_WORK(&peer->txq.work, sdsm_txq_work);
		peer->txq.epoch = 0;
		peer->txq.dead = false;
		peer->txq.sending = false;
		peer->txq.corked = 0;
		peer->txq.corker = NULL;
		if (sdsm_txq_pool_init(&peer->txq))
			goto out_free;
		spin_lock_init(&peer->sess_lock);
		sdsm_sess_init(&peer->sess);
		peer->sess_end = NULL;
		mutex_init(&peer->rx_mutex);
		init_waitqueue_head(&peer->report_wait);
		atomic64_set(&peer->resumes, 0);
		if (i != sdsm_cl.node_id) {
			peer->ring = kcalloc(SDSM_SESS_RING,
					     sizeof(*peer->ring), GFP_KERNEL);
			if (!peer->ring)
				goto out_free;
		}
		atomic64_set(&peer->tx_msgs, 0);
		atomic64_set(&peer->rx_msgs, 0);
		atomic64_set(&peer->tx_bytes, 0);
		atomic64_set(&peer->rx_bytes, 0);
	}
	INIT_DELAYED_WORK(&sdsm_cl.heartbeat_work, sdsm_heartbeat_work);
	return 0;

out_free:
	/* Peer i may have its pool. */
	kfree(sdsm_cl.peers[i].txq.pool);
	sdsm_cl.peers[i].txq.pool = NULL;
	while (i--) {
		kfree(sdsm_cl.peers[i].ring);
		sdsm_cl.peers[i].ring = NULL;
		kfree(sdsm_cl.peers[i].txq.pool);
		sdsm_cl.peers[i].txq.pool = NULL;
	}
	return -ENOMEM;
}

/* Connect to every higher node and start the heartbeat. */
void sdsm_cluster_run(void)
{
	unsigned int i;

	for (i = sdsm_cl.node_id + 1; i < sdsm_cl.nr_nodes; i++)
		queue_delayed_work(sdsm_cl.wq, &sdsm_cl.peers[i].connect_work,
				   0);
	queue_delayed_work(sdsm_cl.wq, &sdsm_cl.heartbeat_work,
			   msecs_to_jiffies(sdsm_cl.heartbeat_ms));
}

/*
 * Tear every connection down.  Context: module init failure or exit, after
 * sdsm_cl.shutdown is set and sdsm_transport_stop() ran, so nothing new
 * appears meanwhile.
 */
void sdsm_cluster_stop(void)
{
	unsigned int i;

	cancel_delayed_work_sync(&sdsm_cl.heartbeat_work);
	for (i = 0; i < sdsm_cl.nr_nodes; i++)
		cancel_delayed_work_sync(&sdsm_cl.peers[i].connect_work);
	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];
		struct sdsm_conn *conn, *pending;

		spin_lock(&peer->lock);
		conn = peer->conn;
		peer->conn = NULL;
		pending = peer->pending;
		peer->pending = NULL;
		if (i != sdsm_cl.node_id)
			sdsm_peer_set_state(peer, SDSM_PEER_DOWN);
		spin_unlock(&peer->lock);
		if (conn)
			sdsm_conn_reap(conn);
		if (pending)
			sdsm_conn_reap(pending);
	}
	sdsm_reap_sync();
	/* Every session ends: the peer works report DOWN, then stop. */
	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		if (i != sdsm_cl.node_id)
			sdsm_session_end(&sdsm_cl.peers[i], "module unloading");
		flush_work(&sdsm_cl.peers[i].work);
		cancel_delayed_work_sync(&sdsm_cl.peers[i].connect_work);
	}
	sdsm_transport_exit();	/* no connection left: drop the secret */
}

/*
 * Free the sessions' rings.  Context: module init failure or exit, after
 * sdsm_cluster_stop() and after the send queues stopped.
 */
void sdsm_cluster_free(void)
{
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct sdsm_peer *peer = &sdsm_cl.peers[i];

		/* sdsm_queues_purge() gave every entry back. */
		kfree(peer->txq.pool);
		peer->txq.pool = NULL;
		if (!peer->ring)
			continue;
		spin_lock_bh(&peer->sess_lock);
		sdsm_session_end_locked(peer, "module unloading");
		spin_unlock_bh(&peer->sess_lock);
		kfree(peer->ring);
		peer->ring = NULL;
	}
}
