// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm trains: several messages in one send.  The rules are in
 * sdsm_train.h and sdsm_wire.h; this file holds no kernel service.
 */
#include <asm/byteorder.h>
#include <asm/page.h>
#include <linux/errno.h>
#include <linux/string.h>

#include "sdsm_train.h"

/**
 * sdsm_train_close - finish the header slots of a train before its send
 * @hdrs: SDSM_TRAIN_HDRS bytes; the first @count slots hold the messages
 * @count: 1 to SDSM_TRAIN_MAX
 * @pages: how many of them carry a page
 *
 * With pages, every slot after the messages is zeroed (the receiver stops
 * at type 0) and the send's first element is all SDSM_TRAIN_HDRS bytes,
 * so the pages land in the receive's page elements; without, the last
 * message's slot is cut to its length.
 *
 * Return: the bytes of the send's first scatter element.
 */
u32 sdsm_train_close(void *hdrs, unsigned int count, unsigned int pages)
{
	const struct sdsm_wire_hdr *last;

	if (pages) {
		memset((u8 *)hdrs + count * SDSM_HDR_SLOT_SIZE, 0,
		       SDSM_TRAIN_HDRS - count * SDSM_HDR_SLOT_SIZE);
		return SDSM_TRAIN_HDRS;
	}
	last = (const void *)((const u8 *)hdrs +
			      (count - 1) * SDSM_HDR_SLOT_SIZE);
	return (count - 1) * SDSM_HDR_SLOT_SIZE + sizeof(*last) +
	       be16_to_cpu(last->len);
}

/* Check the header in slot @i, of which @room bytes arrived. */
static int sdsm_train_check(struct sdsm_train *t, const struct sdsm_wire_hdr *h,
			    u32 room, unsigned int count, unsigned int i)
{
	u16 type = be16_to_cpu(h->type), len = be16_to_cpu(h->len);
	u16 flags = be16_to_cpu(h->flags);
	bool numbered = type > SDSM_MSG_LINK_LAST;

	t->page[i] = -1;
	if (room < sizeof(*h))
		t->why = "a header cut short";
	else if (!type || type >= SDSM_MSG_MAX)
		t->why = "a message of no type";
	else if (len > SDSM_MSG_MAX_PAYLOAD || sizeof(*h) + len > room)
		t->why = "a payload longer than what arrived";
	else if (flags & ~SDSM_WIRE_F_PAGE)
		t->why = "unknown flags";
	else if (numbered != !!h->seq)
		t->why = "a number on a link message, or none on another";
	else if (!numbered && count > 1)
		t->why = "a link message in a train";
	else if (i && h->credits)
		t->why = "credits past the first header";
	if (t->why)
		return -EPROTO;
	if (flags & SDSM_WIRE_F_PAGE)
		t->page[i] = t->pages++;
	return 0;
}

/**
 * sdsm_train_parse - check a received send before any of it is handed on
 * @hdrs: the receive's SDSM_TRAIN_HDRS bytes of header slots
 * @len: the bytes the send carried (the completion's byte_len)
 * @t: filled: the messages, their pages, or why the send is malformed
 *
 * A send is its header slots alone (at most SDSM_TRAIN_HDRS bytes, every
 * slot but the last whole), or all SDSM_TRAIN_HDRS bytes and 1 to
 * SDSM_TRAIN_MAX whole pages, its messages ending at the first slot of
 * type 0.  Each header must be well formed, only the first may return
 * credits, link messages travel alone, and the pages must be as many as
 * the messages that say they carry one; they are theirs in order.
 *
 * Return: 0, or -EPROTO with @t->why set.
 */
int sdsm_train_parse(const void *hdrs, u32 len, struct sdsm_train *t)
{
	u32 slots = len, want = 0;
	unsigned int i, count;

	memset(t, 0, sizeof(*t));
	if (len > SDSM_TRAIN_HDRS) {
		want = (len - SDSM_TRAIN_HDRS) / PAGE_SIZE;
		if ((len - SDSM_TRAIN_HDRS) % PAGE_SIZE ||
		    want > SDSM_TRAIN_MAX) {
			t->why = "not header slots and whole pages";
			return -EPROTO;
		}
		slots = SDSM_TRAIN_HDRS;
	}
	count = (slots + SDSM_HDR_SLOT_SIZE - 1) / SDSM_HDR_SLOT_SIZE;
	if (want) {
		const struct sdsm_wire_hdr *h;

		for (i = 0; i < count; i++) {
			h = (const void *)((const u8 *)hdrs +
					   i * SDSM_HDR_SLOT_SIZE);
			if (!h->type)
				break;
		}
		count = i;
	}
	if (!count) {
		t->why = "no message";
		return -EPROTO;
	}
	for (i = 0; i < count; i++) {
		u32 room = slots - i * SDSM_HDR_SLOT_SIZE;

		if (room > SDSM_HDR_SLOT_SIZE)
			room = SDSM_HDR_SLOT_SIZE;
		if (sdsm_train_check(t, (const void *)((const u8 *)hdrs +
						       i * SDSM_HDR_SLOT_SIZE),
				     room, count, i))
			return -EPROTO;
	}
	if (t->pages != want) {
		t->why = "pages not as many as the messages that carry one";
		return -EPROTO;
	}
	t->count = count;
	return 0;
}
