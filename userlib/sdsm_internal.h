/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdsm internals shared by its source files; never installed.
 *
 * Error rule: a failing function calls sdsm_fail(), which records a
 * one-line message for sdsm_last_error(), sets errno and returns -1.
 */
#ifndef SDSM_INTERNAL_H
#define SDSM_INTERNAL_H

#include "sdsm.h"


/* Most addresses SDSM_IOC_QUERY_HOME takes in one call. */
#define SDSM_QUERY_MAX	4096

int sdsm_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sdsm_clear_error(void);

/* The process's file of /dev/sdsm and the module's answer to GET_INFO. */
int sdsm_dev(struct sdsm_info *info);
int sdsm_dev_ioctl(unsigned long req, void *arg, uint64_t feature,
		   const char *what);

/* nr_nodes of the live cluster, from sysfs or GET_INFO; 0 if unknown. */
unsigned int sdsm_live_nr_nodes(void);

#endif /* SDSM_INTERNAL_H */
