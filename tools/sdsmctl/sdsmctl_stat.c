// SPDX-License-Identifier: GPL-2.0
/*
 * sdsmctl stat [-i SECONDS] [-c COUNT]: this node's counters from
 * /sys/kernel/sdsm/stats/ and the per-peer traffic from nodes/<n>/, like
 * numastat/vmstat: the first report shows totals since the module was
 * loaded, every later one the change over the interval.  Counters the
 * module does not export print "-".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdsmctl.h"

struct sdsmctl_sample {
	struct sdsm_stats stats;
	struct sdsm_node_info nodes[SDSM_MAX_NODES];
	int nr;
};

static int sdsmctl_sample(struct sdsmctl_sample *s)
{
	if (sdsm_stats_read(&s->stats) < 0)
		return -1;
	s->nr = sdsm_node_table(s->nodes, SDSM_MAX_NODES);
	if (s->nr < 0)
		return -1;
	if (s->nr > SDSM_MAX_NODES)
		s->nr = SDSM_MAX_NODES;
	return 0;
}

static int64_t sdsmctl_delta(int64_t now, int64_t then)
{
	if (now == SDSM_STAT_UNKNOWN)
		return SDSM_STAT_UNKNOWN;
	if (then == SDSM_STAT_UNKNOWN)
		return now;
	return now - then;
}

static void sdsmctl_val(int64_t v, int width)
{
	if (v == SDSM_STAT_UNKNOWN)
		printf(" %*s", width, "-");
	else
		printf(" %*lld", width, (long long)v);
}

static const struct sdsm_node_info *sdsmctl_find(const struct sdsmctl_sample *s,
						  int id)
{
	int i;

	for (i = 0; s && i < s->nr; i++)
		if (s->nodes[i].id == id)
			return &s->nodes[i];
	return NULL;
}

static void sdsmctl_report(const struct sdsmctl_sample *now,
			   const struct sdsmctl_sample *prev, double interval)
{
	struct sdsm_hist_bucket hist[64];
	int i, nh;

	if (prev)
		printf("# change over %g s\n", interval);
	else
		printf("# since the module was loaded\n");
	printf("%-24s %14s\n", "counter", "value");
	for (i = 0; i < SDSM_STAT_NR; i++) {
		printf("%-24s", sdsm_stat_name(i));
		sdsmctl_val(prev ? sdsmctl_delta(now->stats.value[i],
						 prev->stats.value[i]) :
			    now->stats.value[i], 14);
		printf("\n");
	}
	printf("%-4s %-10s %12s %12s %14s %14s\n", "node", "state", "tx_msgs",
	       "rx_msgs", "tx_bytes", "rx_bytes");
	for (i = 0; i < now->nr; i++) {
		const struct sdsm_node_info *n = &now->nodes[i];
		const struct sdsm_node_info *p = sdsmctl_find(prev, n->id);

		printf("%-4d %-10s", n->id, n->state);
		sdsmctl_val(p ? sdsmctl_delta(n->tx_msgs, p->tx_msgs) : n->tx_msgs, 12);
		sdsmctl_val(p ? sdsmctl_delta(n->rx_msgs, p->rx_msgs) : n->rx_msgs, 12);
		sdsmctl_val(p ? sdsmctl_delta(n->tx_bytes, p->tx_bytes) : n->tx_bytes, 14);
		sdsmctl_val(p ? sdsmctl_delta(n->rx_bytes, p->rx_bytes) : n->rx_bytes, 14);
		printf("\n");
	}
	if (prev)
		return;
	nh = sdsm_latency_hist(hist, 64);
	if (nh > 0) {
		printf("fault latency (us)     count\n");
		for (i = 0; i < nh && i < 64; i++) {
			char hi[24] = "";	/* empty: the open last bucket */

			if (hist[i].hi_us != UINT64_MAX)
				snprintf(hi, sizeof(hi), "%llu",
					 (unsigned long long)hist[i].hi_us);
			printf("%8llu-%-8s %14llu\n",
			       (unsigned long long)hist[i].lo_us, hi,
			       (unsigned long long)hist[i].count);
		}
	} else if (nh < 0 && errno != ENOENT) {
		sdsmctl_err("%s", sdsm_last_error());
	}
}

static int sdsmctl_parse_interval(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400)
		return -1;
	*out = v;
	return 0;
}

int sdsmctl_stat_main(int argc, char **argv)
{
	struct sdsmctl_sample a, b, *now = &a, *prev = NULL;
	double interval = 0;
	long count = 0, i;
	int c;

	static const struct option none[] = { { NULL, 0, NULL, 0 } };

	while ((c = getopt_long(argc, argv, "+:i:c:", none, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'i':
			if (sdsmctl_parse_interval(optarg, &interval) < 0)
				return sdsmctl_usage_err("stat -i: '%s' is not a number of seconds in (0, 86400]",
							 optarg);
			break;
		case 'c':
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || count < 1 ||
			    count > 1000000)
				return sdsmctl_usage_err("stat -c: '%s' is not a count in 1..1000000",
							 optarg);
			break;
		case ':':
			return sdsmctl_usage_err("stat: option '-%c' needs a value",
						 optopt);
		default:
			if (optopt)
				return sdsmctl_usage_err("stat: unknown option '-%c'",
							 optopt);
			return sdsmctl_usage_err("stat: unknown option '%s'",
						 argv[optind - 1]);
		}
	}
	if (optind != argc)
		return sdsmctl_usage_err("stat: unexpected argument '%s'",
					 argv[optind]);
	if (!count)
		count = interval > 0 ? -1 : 1;
	if (interval == 0)
		interval = 1;
	for (i = 0; count < 0 || i < count; i++) {
		if (i) {
			struct timespec ts = {
				.tv_sec = (time_t)interval,
				.tv_nsec = (long)((interval - (time_t)interval) * 1e9),
			};

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			printf("\n");
		}
		if (sdsmctl_sample(now) < 0) {
			sdsmctl_err("%s", sdsm_last_error());
			return 1;
		}
		sdsmctl_report(now, prev, interval);
		fflush(stdout);
		prev = now;
		now = now == &a ? &b : &a;
	}
	return 0;
}
