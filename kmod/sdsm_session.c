// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm sessions: exactly-once, in-order delivery across connections.
 * The rules are in sdsm_session.h; this file holds no kernel service.
 *
 * Sequence numbers are u32 and compared by their difference as s32, as
 * TCP does: two numbers of one session that are compared are never more
 * than SDSM_SESS_RING apart, unless a peer is broken, and then the
 * difference is out of range and refused.
 *
 * 0 is no number (no message, no acknowledgment; on the wire, a message
 * not of the session): after 2^32 - 1 the numbers go on with 1.  The 0
 * skipped still counts in the differences, as a message that was never
 * sent and is delivered and acknowledged with the one before it: it takes
 * a ring entry, which holds nothing, among the unacknowledged ones and
 * among those the caller releases.
 */
#include "sdsm_session.h"

/* a - b as a signed distance, for numbers modulo 2^32. */
static s32 sdsm_sess_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

/* The number after @seq: 0 is skipped. */
static u32 sdsm_sess_next(u32 seq)
{
	return seq + 1 ?: 1;
}

/* A session that holds nothing and has never held anything. */
void sdsm_sess_init(struct sdsm_sess *s)
{
	*s = (struct sdsm_sess){ .resend = 1 };
}

bool sdsm_sess_live(const struct sdsm_sess *s)
{
	return s->remote_inc != 0;
}

/*
 * Messages given a number that the peer has not acknowledged yet, 0 among
 * them once the numbers wrapped (see above).
 */
u32 sdsm_sess_unacked(const struct sdsm_sess *s)
{
	return s->tx_seq - s->acked;
}

/*
 * End the session, if any.  The caller first releases the unacknowledged
 * messages: sdsm_sess_unacked() of them, from @acked + 1.
 */
void sdsm_sess_end(struct sdsm_sess *s)
{
	u32 next_sid = s->next_sid, gen = s->gen;

	sdsm_sess_init(s);
	s->next_sid = next_sid;
	s->gen = gen + 1;
}

/* Start session @sid with incarnation @remote_inc of the peer. */
static void sdsm_sess_start(struct sdsm_sess *s, u64 remote_inc, u32 sid)
{
	sdsm_sess_end(s);
	s->remote_inc = remote_inc;
	s->sid = sid;
}

/*
 * May one more message get a number (the ring has a free entry)?  Two
 * entries when the numbers wrap: 0 takes one.
 */
bool sdsm_sess_tx_room(const struct sdsm_sess *s)
{
	return sdsm_sess_live(s) &&
	       sdsm_sess_unacked(s) + !(s->tx_seq + 1) < SDSM_SESS_RING;
}

/*
 * Number the next message: its ring entry is (seq % SDSM_SESS_RING).
 * Return: the number, or 0 if the ring is full or there is no session.
 */
u32 sdsm_sess_tx_next(struct sdsm_sess *s)
{
	if (!sdsm_sess_tx_room(s))
		return 0;
	s->tx_seq = sdsm_sess_next(s->tx_seq);
	/* Nothing of the new number waits to be sent again. */
	if (s->resend == s->tx_seq)
		s->resend = sdsm_sess_next(s->tx_seq);
	return s->tx_seq;
}

/* The acknowledgment our messages carry: 0 (none) without a session. */
u32 sdsm_sess_ack_value(const struct sdsm_sess *s)
{
	return sdsm_sess_live(s) ? s->rx_seq : 0;
}

/*
 * The peer delivered every message up to @ack.  An acknowledgment at or
 * below the last is old news; 0 acknowledges nothing.
 * Return: how many messages, from *@first on, the caller may now release;
 * -1 if @ack names a message never numbered (the peer is broken).
 */
int sdsm_sess_ack(struct sdsm_sess *s, u32 ack, u32 *first)
{
	s32 n = sdsm_sess_diff(ack, s->acked);

	*first = s->acked + 1;
	if (!sdsm_sess_live(s) || !ack || n <= 0)
		return 0;
	if (sdsm_sess_diff(ack, s->tx_seq) > 0)
		return -1;
	s->acked = ack;
	if (sdsm_sess_diff(s->resend, ack) <= 0)
		s->resend = sdsm_sess_next(ack);
	return n;
}

/*
 * A message numbered @seq arrived on a connection of this session.  With
 * no session there is none to deliver it in: the connection's hello was
 * BAD (its sess_gen is that of the ended session) or it is undecided on a
 * node that never held one (sess_gen and gen both 0).
 */
enum sdsm_sess_rx sdsm_sess_rx(struct sdsm_sess *s, u32 seq)
{
	s32 d = sdsm_sess_diff(seq, s->rx_seq);

	if (!sdsm_sess_live(s) || d <= 0)
		return SDSM_SESS_DUP;
	if (seq != sdsm_sess_next(s->rx_seq))
		return SDSM_SESS_GAP;
	s->rx_seq = seq;
	return SDSM_SESS_DELIVER;
}

/* Are messages of a resumed session still to be sent again? */
bool sdsm_sess_resending(const struct sdsm_sess *s)
{
	return sdsm_sess_diff(s->resend, s->tx_seq) <= 0;
}

/* The next message to send again, or 0 when all were. */
u32 sdsm_sess_resend_next(struct sdsm_sess *s)
{
	u32 seq = s->resend;

	if (!sdsm_sess_resending(s))
		return 0;
	s->resend = sdsm_sess_next(seq);
	return seq;
}

/* What our hello says of the session we hold with the peer. */
void sdsm_sess_hello_fill(const struct sdsm_sess *s, u64 my_inc,
			  struct sdsm_sess_hello *h)
{
	h->inc = my_inc;
	h->peer_inc = s->remote_inc;
	h->sid = s->sid;
	h->rx_seq = sdsm_sess_ack_value(s);
	h->resume = false;
}

/*
 * Both hold session @h->sid with each other, and the peer delivered
 * @h->rx_seq of it: acknowledge that, and send again what follows.
 */
static enum sdsm_sess_verdict sdsm_sess_resume(struct sdsm_sess *s,
					       const struct sdsm_sess_hello *h,
					       u32 *first, u32 *n)
{
	int acked;

	/* The peer cannot have delivered less than it acknowledged. */
	if (sdsm_sess_diff(h->rx_seq, s->acked) < 0)
		return SDSM_SESS_BAD;
	acked = sdsm_sess_ack(s, h->rx_seq, first);
	if (acked < 0)
		return SDSM_SESS_BAD;
	*n = acked;
	s->resend = sdsm_sess_next(s->acked);
	return SDSM_SESS_RESUME;
}

/* End the session after a bad hello; *@first, *@n: what to release. */
static enum sdsm_sess_verdict sdsm_sess_bad(struct sdsm_sess *s, u32 *first,
					    u32 *n)
{
	*first = s->acked + 1;
	*n = sdsm_sess_unacked(s);
	sdsm_sess_end(s);
	return SDSM_SESS_BAD;
}

/**
 * sdsm_sess_decide - the passive side decides from the active side's hello
 * @s: our session with the peer
 * @my_inc: our incarnation
 * @h: the active side's hello
 * @first: set to the first message the caller may release
 * @n: set to how many, from @first on
 *
 * The session resumes if both hold it: the same id, with each other's
 * current incarnations.  Otherwise ours ends and a new one starts.
 * Return: the verdict, which our hello reports (SDSM_SESS_BAD: none, the
 * caller fails the connection).
 */
enum sdsm_sess_verdict sdsm_sess_decide(struct sdsm_sess *s, u64 my_inc,
					const struct sdsm_sess_hello *h,
					u32 *first, u32 *n)
{
	*first = s->acked + 1;
	*n = 0;
	if (!h->inc)
		return sdsm_sess_bad(s, first, n);
	if (sdsm_sess_live(s) && s->remote_inc == h->inc &&
	    h->peer_inc == my_inc && h->sid == s->sid) {
		if (sdsm_sess_resume(s, h, first, n) == SDSM_SESS_RESUME)
			return SDSM_SESS_RESUME;
		return sdsm_sess_bad(s, first, n);
	}
	*n = sdsm_sess_unacked(s);
	if (!++s->next_sid)	/* 0 means no session */
		s->next_sid = 1;
	sdsm_sess_start(s, h->inc, s->next_sid);
	return SDSM_SESS_NEW;
}

/**
 * sdsm_sess_follow - the active side takes the passive side's decision
 * @s: our session with the peer
 * @my_inc: our incarnation
 * @h: the passive side's hello, sent after it read ours
 * @first: set to the first message the caller may release
 * @n: set to how many, from @first on
 *
 * A resume names the session our hello named; if we no longer hold it (it
 * timed out since), the verdict is SDSM_SESS_BAD, and our next hello says
 * we hold none.
 * Return: the verdict.
 */
enum sdsm_sess_verdict sdsm_sess_follow(struct sdsm_sess *s, u64 my_inc,
					const struct sdsm_sess_hello *h,
					u32 *first, u32 *n)
{
	*first = s->acked + 1;
	*n = 0;
	if (!h->inc || !h->sid || h->peer_inc != my_inc)
		return sdsm_sess_bad(s, first, n);
	if (h->resume) {
		if (!sdsm_sess_live(s) || s->remote_inc != h->inc ||
		    h->sid != s->sid ||
		    sdsm_sess_resume(s, h, first, n) != SDSM_SESS_RESUME)
			return sdsm_sess_bad(s, first, n);
		return SDSM_SESS_RESUME;
	}
	*n = sdsm_sess_unacked(s);
	sdsm_sess_start(s, h->inc, h->sid);
	return SDSM_SESS_NEW;
}
