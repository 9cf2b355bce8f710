/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm trains: the layout of the messages one send carries (sdsm_wire.h),
 * as the sender lays out their header slots and as the receiver checks
 * them, free of kernel services.  The same source is compiled into the
 * module and into the host test (tests/host/test_train.c).  See
 * Documentation/transport.rst, "Messages".
 */
#ifndef _SDSM_TRAIN_H
#define _SDSM_TRAIN_H

#include <linux/types.h>

#include "sdsm_wire.h"

/**
 * struct sdsm_train - a received send, checked
 * @count: its messages, 1 to SDSM_TRAIN_MAX
 * @pages: the pages it carries, 0 to @count
 * @page: per message, the index of its page among the receive's page
 *	elements, or -1
 * @why: for a malformed send, what is wrong
 */
struct sdsm_train {
	unsigned int count;
	unsigned int pages;
	s8 page[SDSM_TRAIN_MAX];
	const char *why;
};

u32 sdsm_train_close(void *hdrs, unsigned int count, unsigned int pages);
int sdsm_train_parse(const void *hdrs, u32 len, struct sdsm_train *t);

#endif /* _SDSM_TRAIN_H */
