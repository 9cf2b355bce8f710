/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm sessions: the upper layers' messages to one peer, delivered exactly
 * once and in order across the connections that carry them, free of
 * kernel services.
 *
 * A session joins this node and one incarnation of a peer.  It outlives
 * the connection that opened it: when a connection fails, the messages it
 * had not delivered are sent again on the next one, and the upper layers
 * notice nothing.  A session ends only when the peer stays silent for
 * peer_timeout_ms, comes back as another incarnation or without this
 * session, or says goodbye; only that is a node going down.
 *
 * Every message of the upper layers gets the next sequence number of its
 * session (1, 2, ..., 2^32 - 1, 1, ...: 0 is none; u32, compared modulo
 * 2^32) and stays in the sender's ring until the peer acknowledges it.
 * Every message, of any type, carries the sequence number of the last
 * message its sender delivered of the session: the acknowledgment.  A
 * message is delivered only if its number is the next one; a lower one is
 * a duplicate, dropped; a higher one means messages were lost on the way,
 * which RC never does within a connection: the connection is failed and
 * the session resumes.
 *
 * At every connection the two nodes exchange a hello (the PING with the
 * pattern page).  The active side says which session it holds, if any,
 * and what it delivered of it; the passive side alone decides, from that
 * and its own session, whether the session resumes or a new one starts,
 * and says so in its own hello, which it sends only after the active
 * side's.  A resumed session sends again, in order, every message after
 * the one the peer said it delivered.  So the two sides never disagree on
 * which session a connection carries.
 *
 * The caller keeps the messages (the ring, SDSM_SESS_RING entries indexed
 * by sequence number modulo SDSM_SESS_RING; the entry of the 0 skipped
 * when the numbers wrap holds nothing, yet is among those released) and
 * holds one lock around every call for a peer.  The same source is
 * compiled into the module and into the host checker
 * (tests/host/test_session.c).  See Documentation/transport.rst.
 */
#ifndef _SDSM_SESSION_H
#define _SDSM_SESSION_H

#include <linux/types.h>

/*
 * Messages of a session not yet acknowledged, at most: at least the trains
 * of the receives after which a peer returns credits, and with them its
 * acknowledgment (sdsm_transport.c asserts it), so that a sender never
 * waits for ring room that only traffic the other way would bring.
 */
#define SDSM_SESS_RING		64

/**
 * struct sdsm_sess - this node's side of the session with one peer
 * @remote_inc: incarnation of the peer, 0 when there is no session
 * @sid: the session's id, chosen by the passive side; 0 with no session
 * @next_sid: the last id this node chose as a passive side
 * @gen: changes whenever a session starts or ends, never repeats
 * @tx_seq: sequence number of the last message given one
 * @acked: the peer delivered every message up to this one
 * @rx_seq: sequence number of the last message delivered here
 * @resend: next message to send again after a resume; @tx_seq + 1: none
 */
struct sdsm_sess {
	u64 remote_inc;
	u32 sid;
	u32 next_sid;
	u32 gen;
	u32 tx_seq;
	u32 acked;
	u32 rx_seq;
	u32 resend;
};

/**
 * struct sdsm_sess_hello - what a hello says of the session
 * @inc: incarnation of the sender
 * @peer_inc: incarnation of the receiver the sender's session is with,
 *	0 if it holds none
 * @sid: the sender's session id, 0 if it holds none
 * @rx_seq: the last message the sender delivered of that session
 * @resume: passive side only: the session resumes (else a new one starts,
 *	with id @sid)
 */
struct sdsm_sess_hello {
	u64 inc;
	u64 peer_inc;
	u32 sid;
	u32 rx_seq;
	bool resume;
};

/* What became of a received message of a session. */
enum sdsm_sess_rx {
	SDSM_SESS_DELIVER,	/* the next one: hand it to its handler */
	SDSM_SESS_DUP,		/* delivered before: drop it */
	SDSM_SESS_GAP,		/* some before it were lost: fail the link */
};

/* What a hello decided. */
enum sdsm_sess_verdict {
	SDSM_SESS_RESUME,	/* same session; send again from @resend */
	SDSM_SESS_NEW,		/* a new session started; the old one ended */
	SDSM_SESS_BAD,		/* inconsistent: session ended, link failed */
};

void sdsm_sess_init(struct sdsm_sess *s);
bool sdsm_sess_live(const struct sdsm_sess *s);
u32 sdsm_sess_unacked(const struct sdsm_sess *s);
void sdsm_sess_end(struct sdsm_sess *s);
bool sdsm_sess_tx_room(const struct sdsm_sess *s);
u32 sdsm_sess_tx_next(struct sdsm_sess *s);
u32 sdsm_sess_ack_value(const struct sdsm_sess *s);
int sdsm_sess_ack(struct sdsm_sess *s, u32 ack, u32 *first);
enum sdsm_sess_rx sdsm_sess_rx(struct sdsm_sess *s, u32 seq);
bool sdsm_sess_resending(const struct sdsm_sess *s);
u32 sdsm_sess_resend_next(struct sdsm_sess *s);
void sdsm_sess_hello_fill(const struct sdsm_sess *s, u64 my_inc,
			  struct sdsm_sess_hello *h);
enum sdsm_sess_verdict sdsm_sess_decide(struct sdsm_sess *s, u64 my_inc,
					const struct sdsm_sess_hello *h,
					u32 *first, u32 *n);
enum sdsm_sess_verdict sdsm_sess_follow(struct sdsm_sess *s, u64 my_inc,
					const struct sdsm_sess_hello *h,
					u32 *first, u32 *n);

#endif /* _SDSM_SESSION_H */
