// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of trains, several messages in one send (kmod/sdsm_train.c,
 * the module's own source): the sender's layout of the header slots
 * (sdsm_train_close()) and the receiver's check (sdsm_train_parse()).
 * Printed as TAP 13.
 *
 * A send here is what the wire carries: the header slots the sender's
 * first scatter element covers, then its pages, landing in a receive
 * whose header slots still hold an earlier send's bytes (a receive is
 * posted again as it is).  Checks:
 *
 *  round trip  random trains of 1 to SDSM_TRAIN_MAX messages (random
 *              types of the upper layers, payload lengths, pages;
 *              credits in the first header) parse into the same
 *              messages and pages, whatever the stale bytes;
 *  link        a link message (PING ... BYE) travels alone: alone it
 *              parses, in a train it is refused;
 *  malformed   each way a send can be wrong (a length that is not slots
 *              and whole pages, more pages than a train holds, a page
 *              without its message or a message without its page, a
 *              payload past what arrived, unknown flags, a number where
 *              none belongs or none where one does, credits past the
 *              first header, a type out of range, nothing at all) is
 *              refused, for that reason;
 *  random      random bytes of random lengths, and valid trains with a
 *              few bits and their length changed: a send that parses is
 *              consistent (count, pages in order), none reads past what
 *              arrived (the -san build).
 *
 * Planted bugs, one TAP line each: mutations of a copy of the sender's
 * close (close_copy(), in step with sdsm_train_close()), each of which
 * the round trip must catch.
 *
 * Environment: SDSM_SEED, SDSM_SCHEDULES (trains a check, default
 * 20000).  Options: --seed S, --schedules N, --count, --first N,
 * --prefix STR, --no-plan.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <asm/byteorder.h>
#include <asm/page.h>
#include "sdsm_train.h"
#include "tap_args.h"

#define SLOT		SDSM_HDR_SLOT_SIZE
#define MAXMSG		SDSM_TRAIN_MAX

static unsigned long long base_seed;
static unsigned long schedules = 20000;
static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned int)(rng % n) : 0;
}

/* A train as the sender's caller has it. */
struct train {
	unsigned int count;
	u16 type[MAXMSG], len[MAXMSG], credits;
	u32 seq[MAXMSG];
	bool page[MAXMSG];
	unsigned int pages;
};

/* A send on the wire: the receive it lands in. */
struct wire {
	u8 *hdrs;		/* SDSM_TRAIN_HDRS bytes, malloc()ed exactly */
	u32 len;		/* the completion's byte_len */
};

typedef u32 close_fn(void *hdrs, unsigned int count, unsigned int pages);

static void rand_train(struct train *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->count = 1 + rnd(MAXMSG);
	t->credits = rnd(3) ? 0 : 1 + rnd(16);
	for (i = 0; i < t->count; i++) {
		t->type[i] = SDSM_MSG_LINK_LAST + 1 +
			     rnd(SDSM_MSG_MAX - SDSM_MSG_LINK_LAST - 1);
		t->len[i] = rnd(4) ? rnd(SDSM_MSG_MAX_PAYLOAD + 1) :
			    (rnd(2) ? 0 : SDSM_MSG_MAX_PAYLOAD);
		t->seq[i] = 1 + rnd(1000000);
		t->page[i] = rnd(2);
		t->pages += t->page[i];
	}
}

/*
 * Lay @t out in @src as the sender does (headers, payloads, @close), and
 * deliver it into @w, whose header slots hold stale bytes.
 */
static void send_train(const struct train *t, close_fn *close, u8 *src,
		       struct wire *w)
{
	unsigned int i, j;
	u32 first;

	for (i = 0; i < SDSM_TRAIN_HDRS; i++)
		src[i] = rnd(256);		/* the sender's old slots too */
	for (i = 0; i < t->count; i++) {
		struct sdsm_wire_hdr *h = (void *)(src + i * SLOT);

		h->type = cpu_to_be16(t->type[i]);
		h->flags = cpu_to_be16(t->page[i] ? SDSM_WIRE_F_PAGE : 0);
		h->credits = cpu_to_be16(i ? 0 : t->credits);
		h->len = cpu_to_be16(t->len[i]);
		h->seq = cpu_to_be32(t->seq[i]);
		h->ack = cpu_to_be32(rnd(1000));
		for (j = 0; j < t->len[i]; j++)
			((u8 *)(h + 1))[j] = rnd(256);
	}
	first = close(src, t->count, t->pages);
	for (i = 0; i < SDSM_TRAIN_HDRS; i++)
		w->hdrs[i] = rnd(256) | 1;	/* stale, no type 0 */
	memcpy(w->hdrs, src, first > SDSM_TRAIN_HDRS ? SDSM_TRAIN_HDRS : first);
	w->len = first + t->pages * PAGE_SIZE;
}

/* Does @w parse back into @t, every header byte for byte? */
static bool same(const struct train *t, const u8 *src, const struct wire *w,
		 const char **why)
{
	struct sdsm_train r;
	unsigned int i, p = 0;

	*why = NULL;
	if (sdsm_train_parse(w->hdrs, w->len, &r)) {
		*why = r.why;
		return false;
	}
	if (r.count != t->count || r.pages != t->pages)
		return false;
	for (i = 0; i < t->count; i++) {
		if (r.page[i] != (t->page[i] ? (int)p++ : -1))
			return false;
		if (memcmp(w->hdrs + i * SLOT, src + i * SLOT,
			   sizeof(struct sdsm_wire_hdr) + t->len[i]))
			return false;
	}
	return true;
}

static struct wire wire_new(void)
{
	struct wire w = { .hdrs = malloc(SDSM_TRAIN_HDRS) };

	if (!w.hdrs)
		abort();
	return w;
}

static bool round_trip(close_fn *close, unsigned long n)
{
	struct wire w = wire_new();
	u8 src[SDSM_TRAIN_HDRS];
	unsigned long k;
	const char *why;
	struct train t;
	bool ok = true;

	for (k = 0; k < n && ok; k++) {
		rand_train(&t);
		send_train(&t, close, src, &w);
		if (!same(&t, src, &w, &why)) {
			printf("# train %lu: %u messages, %u pages, %u bytes: %s\n",
			       k, t.count, t.pages, w.len,
			       why ? why : "parsed into other messages");
			ok = false;
		}
	}
	free(w.hdrs);
	return ok;
}

static bool test_round_trip(void)
{
	rng = base_seed | 1;
	return round_trip(sdsm_train_close, schedules);
}

static bool test_link_alone(void)
{
	struct wire w = wire_new();
	u8 src[SDSM_TRAIN_HDRS];
	struct sdsm_train r;
	struct train t;
	const char *why;
	u16 type;
	bool ok = true;

	rng = base_seed | 3;
	for (type = 1; type <= SDSM_MSG_LINK_LAST && ok; type++) {
		rand_train(&t);
		t.count = 1;
		t.type[0] = type;
		t.seq[0] = 0;
		t.pages = t.page[0];
		send_train(&t, sdsm_train_close, src, &w);
		if (!same(&t, src, &w, &why)) {
			printf("# type %u alone: %s\n", type, why ? why : "other");
			ok = false;
		}
		rand_train(&t);
		while (t.count < 2)
			rand_train(&t);
		t.type[t.count - 1] = type;
		t.seq[t.count - 1] = 0;
		send_train(&t, sdsm_train_close, src, &w);
		if (!sdsm_train_parse(w.hdrs, w.len, &r) ||
		    !strstr(r.why, "link message in a train")) {
			printf("# type %u in a train of %u: %s\n", type,
			       t.count, r.why ? r.why : "accepted");
			ok = false;
		}
	}
	free(w.hdrs);
	return ok;
}

/* One way to spoil a valid send, and the reason it must be refused for. */
struct spoil {
	const char *name;
	const char *why;
	/* Change @w (and @t, as the receiver should see it); false: n/a. */
	bool (*fn)(struct train *t, struct wire *w);
};

static struct sdsm_wire_hdr *hdr_of(struct wire *w, unsigned int i)
{
	return (void *)(w->hdrs + i * SLOT);
}

static bool sp_len_odd(struct train *t, struct wire *w)
{
	if (!t->pages)
		return false;
	w->len += 1 + rnd(PAGE_SIZE - 1);
	return true;
}

static bool sp_too_many_pages(struct train *t, struct wire *w)
{
	if (!t->pages)
		return false;
	w->len = SDSM_TRAIN_HDRS + (MAXMSG + 1 + rnd(3)) * PAGE_SIZE;
	return true;
}

static bool sp_page_unclaimed(struct train *t, struct wire *w)
{
	if (!t->pages || t->pages == MAXMSG)
		return false;
	w->len += PAGE_SIZE;
	return true;
}

static bool sp_page_missing(struct train *t, struct wire *w)
{
	/* One page fewer, every flag kept (with one page: no pages left). */
	if (t->pages < 2)
		return false;
	w->len -= PAGE_SIZE;
	return true;
}

static bool sp_payload_past(struct train *t, struct wire *w)
{
	unsigned int last = t->count - 1;

	if (t->pages)
		return false;
	hdr_of(w, last)->len = cpu_to_be16(t->len[last] + 1);
	return true;
}

static bool sp_payload_max(struct train *t, struct wire *w)
{
	hdr_of(w, rnd(t->count))->len = cpu_to_be16(SDSM_MSG_MAX_PAYLOAD + 1);
	return true;
}

static bool sp_flags(struct train *t, struct wire *w)
{
	struct sdsm_wire_hdr *h = hdr_of(w, rnd(t->count));

	h->flags = cpu_to_be16(be16_to_cpu(h->flags) | (2 << rnd(14)));
	return true;
}

static bool sp_no_number(struct train *t, struct wire *w)
{
	hdr_of(w, rnd(t->count))->seq = 0;
	return true;
}

static bool sp_credits_later(struct train *t, struct wire *w)
{
	if (t->count < 2)
		return false;
	hdr_of(w, 1 + rnd(t->count - 1))->credits = cpu_to_be16(1 + rnd(8));
	return true;
}

static bool sp_type_range(struct train *t, struct wire *w)
{
	hdr_of(w, rnd(t->count))->type =
		cpu_to_be16(SDSM_MSG_MAX + rnd(0xff00));
	return true;
}

static bool sp_nothing(struct train *t, struct wire *w)
{
	if (!t->pages)
		return false;
	hdr_of(w, 0)->type = 0;
	return true;
}

static bool sp_runt(struct train *t, struct wire *w)
{
	(void)t;
	w->len = 1 + rnd(sizeof(struct sdsm_wire_hdr) - 1);
	return true;
}

static const struct spoil spoils[] = {
	{ "a length past the slots, not whole pages", "whole pages", sp_len_odd },
	{ "more pages than a train holds", "whole pages", sp_too_many_pages },
	{ "a page no message claims", "pages not as many", sp_page_unclaimed },
	{ "a message without its page", "pages not as many", sp_page_missing },
	{ "a payload past what arrived", "payload longer", sp_payload_past },
	{ "a payload longer than a slot holds", "payload longer", sp_payload_max },
	{ "unknown flags", "unknown flags", sp_flags },
	{ "a message of the session without its number", "a number", sp_no_number },
	{ "credits past the first header", "credits past", sp_credits_later },
	{ "a type out of range", "no type", sp_type_range },
	{ "pages and no message", "no message", sp_nothing },
	{ "a runt", "cut short", sp_runt },
};

#define NSPOILS	(int)(sizeof(spoils) / sizeof(spoils[0]))

static bool test_spoil(int s)
{
	const struct spoil *sp = &spoils[s];
	struct wire w = wire_new();
	u8 src[SDSM_TRAIN_HDRS];
	unsigned long k, tried = 0;
	struct sdsm_train r;
	struct train t;
	bool ok = true;

	rng = (base_seed + 17 * (s + 1)) | 1;
	for (k = 0; k < schedules / 10 + 100 && ok; k++) {
		rand_train(&t);
		send_train(&t, sdsm_train_close, src, &w);
		if (!sp->fn(&t, &w))
			continue;
		tried++;
		if (!sdsm_train_parse(w.hdrs, w.len, &r)) {
			printf("# %s: accepted (%u messages, %u pages, %u bytes)\n",
			       sp->name, r.count, r.pages, w.len);
			ok = false;
		} else if (!strstr(r.why, sp->why)) {
			printf("# %s: refused for \"%s\", not \"%s\"\n",
			       sp->name, r.why, sp->why);
			ok = false;
		}
	}
	free(w.hdrs);
	if (ok && !tried)
		printf("# %s: no train to spoil\n", sp->name);
	return ok && tried;
}

static bool test_random_bytes(void)
{
	struct wire w = wire_new();
	unsigned long k, parsed = 0;
	u8 src[SDSM_TRAIN_HDRS];
	struct sdsm_train r;
	unsigned int i, p;
	struct train t;

	rng = base_seed | 5;
	for (k = 0; k < schedules; k++) {
		if (rnd(2)) {
			/* A valid train, a few bytes and the length changed. */
			rand_train(&t);
			send_train(&t, sdsm_train_close, src, &w);
			for (i = rnd(4); i; i--)
				w.hdrs[rnd(SDSM_TRAIN_HDRS)] ^= 1 << rnd(8);
			if (!rnd(4))
				w.len += rnd(2) ? rnd(SLOT) :
					 -(u32)rnd(w.len < SLOT ? w.len : SLOT);
		} else {
			for (i = 0; i < SDSM_TRAIN_HDRS; i++)
				w.hdrs[i] = rnd(3) ? 0 : rnd(256);
			w.len = rnd(2) ? rnd(SDSM_TRAIN_HDRS + 1) :
				SDSM_TRAIN_HDRS + rnd(MAXMSG + 2) * PAGE_SIZE +
				(rnd(4) ? 0 : rnd(PAGE_SIZE));
		}
		if (sdsm_train_parse(w.hdrs, w.len, &r)) {
			TAP_CHECK(r.why, "refused without a reason");
			continue;
		}
		parsed++;
		TAP_CHECK(r.count >= 1 && r.count <= MAXMSG && r.pages <= r.count,
		      "count %u pages %u", r.count, r.pages);
		for (i = 0, p = 0; i < r.count; i++) {
			TAP_CHECK(r.page[i] == -1 || r.page[i] == (int)p,
			      "message %u: page %d, next is %u", i, r.page[i], p);
			p += r.page[i] >= 0;
		}
		TAP_CHECK(p == r.pages, "%u pages counted, %u said", p, r.pages);
		TAP_CHECK(r.pages ? w.len == SDSM_TRAIN_HDRS + r.pages * PAGE_SIZE :
			        w.len <= SDSM_TRAIN_HDRS,
		      "%u bytes for %u pages", w.len, r.pages);
	}
	printf("# %lu of %lu random sends parsed\n", parsed, schedules);
	free(w.hdrs);
	return true;
}

/*
 * A copy of sdsm_train_close() with planted bugs, in step with the
 * module's: @bug 0 is the module's logic.
 */
static int bug;

static u32 close_copy(void *hdrs, unsigned int count, unsigned int pages)
{
	const struct sdsm_wire_hdr *last;
	u8 *b = hdrs;

	if (pages) {
		/* 1: the unused slots keep the sender's old bytes. */
		if (bug != 1)
			memset(b + count * SLOT, 0, SDSM_TRAIN_HDRS - count * SLOT);
		/* 2: the first element covers the messages' slots only. */
		return bug == 2 ? count * SLOT : SDSM_TRAIN_HDRS;
	}
	last = (const void *)(b + (count - 1) * SLOT);
	/* 3: the last slot cut to the header, its payload left out. */
	return (count - 1) * SLOT + sizeof(*last) +
	       (bug == 3 ? 0 : be16_to_cpu(last->len));
}

static const char *const plants[] = {
	"unused header slots not zeroed",
	"pages sent after the messages' slots, not all of them",
	"the last message's payload left out",
};

#define NPLANTS	(int)(sizeof(plants) / sizeof(plants[0]))

static bool test_planted(int p)
{
	bool caught;

	rng = base_seed | 7;
	bug = 0;
	if (!round_trip(close_copy, schedules / 10 + 100)) {
		printf("# the copy of the close is out of step with the module's\n");
		return false;
	}
	bug = p + 1;
	rng = base_seed | 7;
	caught = !round_trip(close_copy, schedules);
	bug = 0;
	return caught;
}

static const struct {
	const char *name;
	bool (*fn)(void);
} tests[] = {
	{ "round trip: random trains parse into their messages and pages",
	  test_round_trip },
	{ "link: PING ... BYE travel alone, refused in a train", test_link_alone },
	{ "random bytes: what parses is consistent, nothing read past",
	  test_random_bytes },
};

#define NTESTS	(int)(sizeof(tests) / sizeof(tests[0]))

int main(int argc, char **argv)
{
	struct tap_args ta;
	int i, ret, n = 0, failed = 0;
	bool ok;

	ret = tap_begin_seeded(argc, argv, NTESTS + NSPOILS + NPLANTS, &ta,
			       &base_seed, &schedules, "trains", "trains");
	if (ret >= 0)
		return ret;
	for (i = 0; i < NTESTS; i++) {
		ok = tests[i].fn();
		tap_result(&ta, n++, ok, "%s", tests[i].name);
		failed += !ok;
	}
	for (i = 0; i < NSPOILS; i++) {
		ok = test_spoil(i);
		tap_result(&ta, n++, ok, "malformed: %s is refused",
			   spoils[i].name);
		failed += !ok;
	}
	for (i = 0; i < NPLANTS; i++) {
		ok = test_planted(i);
		tap_result(&ta, n++, ok, "planted %s is caught (by the round trip)",
			   plants[i]);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
