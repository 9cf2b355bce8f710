/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsmctl - the numactl of an sdsm cluster.  One file per concern:
 * sdsmctl.c (options, --show, --hardware, running a command under a
 * policy), sdsmctl_region.c, sdsmctl_stat.c, sdsmctl_join.c.
 *
 * Exit status everywhere: 0 success, 1 failure, 2 usage error; when running
 * a command, 126 (cannot execute) and 127 (not found) like env(1), else the
 * command's own status.
 */
#ifndef SDSMCTL_H
#define SDSMCTL_H

#include <stdio.h>
#include "sdsm.h"

/* The one version of sdsm: the top-level VERSION file, via the Makefile. */
#define SDSMCTL_VERSION		SDSM_VERSION

#define EXIT_USAGE		2

extern const char *sdsmctl_prog;

void sdsmctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int sdsmctl_usage_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Cluster size for node-list checks: live nr_nodes, or SDSM_MAX_NODES. */
unsigned int sdsmctl_nr_nodes(void);

/*
 * Policy options shared by the main command and "region create":
 * build the SDSM_POLICY string of one option (opt is the long name).
 * Returns 0, or an exit status after printing the message.
 */
struct sdsmctl_policy_opt {
	const char *opt;	/* option that set it, for messages */
	struct sdsm_policy policy;
	int set;
	char block[32];		/* --block-size, or "" */
};

int sdsmctl_policy_option(struct sdsmctl_policy_opt *po, const char *opt,
			  const char *arg);
int sdsmctl_policy_finish(struct sdsmctl_policy_opt *po);
int sdsmctl_parse_size(const char *s, unsigned long long *out);

/*
 * --consistency=sequential|release: the enum sdsm_consistency of @arg, or
 * -1 for any other word; and the word of a consistency, for output.
 */
int sdsmctl_parse_consistency(const char *arg);
const char *sdsmctl_consistency_name(unsigned int consistency);

int sdsmctl_region_main(int argc, char **argv);
int sdsmctl_stat_main(int argc, char **argv);
int sdsmctl_join_main(int argc, char **argv);

/* Config file of "sdsmctl join": node lines and a port. */
struct sdsmctl_config {
	unsigned int nr_nodes;
	int port;		/* 0 = module default */
	char addr[SDSM_MAX_NODES][16];
	char secret[256];	/* key file of the cluster secret, "" = none */
};

/*
 * Parse a join config from f (name for messages).  Returns 0, or -1 with a
 * "name:line: message" in err.
 */
int sdsmctl_parse_config(FILE *f, const char *name,
			 struct sdsmctl_config *cfg, char *err, size_t errlen);

#endif /* SDSMCTL_H */
