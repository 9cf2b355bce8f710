// SPDX-License-Identifier: GPL-2.0
/*
 * sdsmctl region list | create | destroy | show.
 *
 * "list" reads /sys/kernel/sdsm/regions/<id>/ and prints "-" for what the
 * module does not export.  "create" and "show" print the region's
 * consistency from struct sdsm_region_info (a module older than release
 * consistency leaves it 0, sequential, which is all it has).  "show" maps
 * the region (mapping places no page) and asks SDSM_IOC_QUERY_HOME for
 * every page, like move_pages(2) with a NULL target, to count pages per
 * home node.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdsmctl.h"

/*
 * Region @ri's manager as sysfs regions/<id>/manager shows it (a node id
 * or "interleave"), into @buf; "-" from a module without managers.
 */
static const char *sdsmctl_manager_name(const struct sdsm_region_info *ri,
					char *buf, size_t len)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "regions/%u/manager", ri->region_id);
	if (sdsm_sysfs_read(rel, buf, len) < 0)
		snprintf(buf, len, "-");
	return buf;
}

static int sdsmctl_region_list(void)
{
	static const char *const cols[] = {
		"name", "size", "policy", "pages_homed", "pages_cached",
		"uid", "gid", "mode", "consistency", "manager",
	};
	char path[512], rel[300], val[128];
	struct dirent **ents;
	size_t c;
	int n, i;

	if (sdsm_sysfs_nr_nodes() < 0) {
		sdsmctl_err("%s", sdsm_last_error());
		return 1;
	}
	snprintf(path, sizeof(path), "%s/regions", sdsm_sysfs_root());
	n = scandir(path, &ents, NULL, versionsort);
	if (n < 0) {
		if (errno == ENOENT)
			sdsmctl_err("region list: the loaded module has no regions (no %s)",
				    path);
		else
			sdsmctl_err("%s: %s", path, strerror(errno));
		return 1;
	}
	printf("%-6s %-31s %12s %-24s %12s %12s %6s %6s %4s %-11s %s\n", "id",
	       "name", "size", "policy", "pages_homed", "pages_cached", "uid",
	       "gid", "mode", "consistency", "manager");
	for (i = 0; i < n; i++) {
		const char *id = ents[i]->d_name;

		if (id[0] == '.')
			goto next;
		printf("%-6s", id);
		for (c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			static const int width[] = {
				-31, 12, -24, 12, 12, 6, 6, 4, -11, 0,
			};

			snprintf(rel, sizeof(rel), "regions/%s/%s", id, cols[c]);
			if (sdsm_sysfs_read(rel, val, sizeof(val)) < 0)
				snprintf(val, sizeof(val), "-");
			printf(" %*s", width[c], val);
		}
		printf("\n");
next:
		free(ents[i]);
	}
	free(ents);
	return 0;
}

static int sdsmctl_region_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interleave",	required_argument,	NULL, 'i' },
		{ "membind",	required_argument,	NULL, 'm' },
		{ "preferred",	required_argument,	NULL, 'p' },
		{ "localalloc",	no_argument,		NULL, 'l' },
		{ "block-size",	required_argument,	NULL, 'b' },
		{ "excl",	no_argument,		NULL, 'x' },
		{ "mode",	required_argument,	NULL, 'M' },
		{ "consistency", required_argument,	NULL, 'C' },
		{ "manager",	required_argument,	NULL, 'G' },
		{ NULL, 0, NULL, 0 }
	};
	struct sdsmctl_policy_opt po;
	struct sdsm_region_info ri;
	unsigned long long size;
	unsigned int flags = 0, mode = 0600;
	int manager = -1;
	unsigned long v;
	char *end;
	const char *name;
	char pol[320], mgr[32];
	int c, ret, cons;
	void *addr;

	memset(&po, 0, sizeof(po));
	while ((c = getopt_long(argc, argv, ":i:m:p:lx", opts, NULL)) != -1) {
		const char *opt = NULL;

		switch (c) {
		case 'i': opt = "interleave"; break;
		case 'm': opt = "membind"; break;
		case 'p': opt = "preferred"; break;
		case 'l': opt = "localalloc"; break;
		case 'b': opt = "block-size"; break;
		case 'x':
			flags |= SDSM_REGION_F_EXCL;
			continue;
		case 'M':
			errno = 0;
			mode = strtoul(optarg, &end, 8);
			if (errno || !*optarg || *end || mode > 0777)
				return sdsmctl_usage_err("region create: bad mode '%s' (octal, 0..0777)",
							 optarg);
			continue;
		case 'C':
			cons = sdsmctl_parse_consistency(optarg);
			if (cons < 0)
				return sdsmctl_usage_err("region create: --consistency=%s: expected sequential or release",
							 optarg);
			if (cons == SDSM_CONSISTENCY_RELEASE)
				flags |= SDSM_REGION_F_RELEASE;
			else
				flags &= ~SDSM_REGION_F_RELEASE;
			continue;
		case 'G':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || !*optarg || *end || *optarg == '-' ||
			    v >= sdsmctl_nr_nodes())
				return sdsmctl_usage_err("region create: --manager=%s: expected a node, 0 to %u",
							 optarg,
							 sdsmctl_nr_nodes() - 1);
			manager = v;
			continue;
		case ':':
			return sdsmctl_usage_err("region create: option '%s' needs a value",
						 argv[optind - 1]);
		default:
			return sdsmctl_usage_err("region create: unknown option '%s'",
						 argv[optind - 1]);
		}
		ret = sdsmctl_policy_option(&po, opt, c == 'l' ? NULL : optarg);
		if (ret)
			return ret;
	}
	ret = sdsmctl_policy_finish(&po);
	if (ret)
		return ret;
	if (argc - optind != 2)
		return sdsmctl_usage_err("region create needs NAME SIZE");
	name = argv[optind];
	if (sdsmctl_parse_size(argv[optind + 1], &size) < 0 || !size)
		return sdsmctl_usage_err("region create: bad size '%s'",
					 argv[optind + 1]);
	addr = sdsm_region_create_managed(name, size,
					  po.set ? &po.policy : NULL, flags,
					  mode, manager);
	if (!addr) {
		sdsmctl_err("%s", sdsm_last_error());
		return 1;
	}
	sdsm_region_unmap(addr, size);
	if (sdsm_region_info(name, &ri) < 0) {
		sdsmctl_err("%s", sdsm_last_error());
		return 1;
	}
	if (sdsm_format_policy(&ri.policy, pol, sizeof(pol)) < 0)
		snprintf(pol, sizeof(pol), "?");
	printf("region %s: id %u, %llu bytes, policy %s, offset %llu, owner %u:%u, mode %04o, manager %s, consistency %s\n",
	       name, ri.region_id, (unsigned long long)ri.length, pol,
	       (unsigned long long)ri.offset, ri.uid, ri.gid, ri.mode,
	       sdsmctl_manager_name(&ri, mgr, sizeof(mgr)),
	       sdsmctl_consistency_name(ri.consistency));
	return 0;
}

static int sdsmctl_region_show(const char *name)
{
	int counts[SDSM_MAX_NODES] = { 0 };
	struct sdsm_region_info ri;
	size_t pages, i, untouched = 0, other = 0;
	void **addrs = NULL;
	int *homes = NULL;
	char pol[320], mgr[32];
	int ret = 1;
	size_t len;
	char *base;

	if (sdsm_region_info(name, &ri) < 0) {
		sdsmctl_err("%s", sdsm_last_error());
		return 1;
	}
	if (sdsm_format_policy(&ri.policy, pol, sizeof(pol)) < 0)
		snprintf(pol, sizeof(pol), "?");
	printf("region %s: id %u, %llu bytes, policy %s, offset %llu, owner %u:%u, mode %04o, manager %s, consistency %s\n",
	       ri.name, ri.region_id, (unsigned long long)ri.length, pol,
	       (unsigned long long)ri.offset, ri.uid, ri.gid, ri.mode,
	       sdsmctl_manager_name(&ri, mgr, sizeof(mgr)),
	       sdsmctl_consistency_name(ri.consistency));
	base = sdsm_region_open(name, &len);
	if (!base) {
		sdsmctl_err("%s", sdsm_last_error());
		return 1;
	}
	pages = len / SDSM_PAGE_SIZE;
	addrs = calloc(pages, sizeof(*addrs));
	homes = calloc(pages, sizeof(*homes));
	if (!addrs || !homes) {
		sdsmctl_err("out of memory");
		goto out_unmap;
	}
	for (i = 0; i < pages; i++)
		addrs[i] = base + i * SDSM_PAGE_SIZE;
	if (sdsm_query_homes(pages, addrs, homes) < 0) {
		sdsmctl_err("%s", sdsm_last_error());
		goto out_unmap;
	}
	for (i = 0; i < pages; i++) {
		if (homes[i] >= 0 && homes[i] < SDSM_MAX_NODES)
			counts[homes[i]]++;
		else if (homes[i] == -ENOENT)
			untouched++;
		else
			other++;
	}
	printf("pages: %zu\n", pages);
	for (i = 0; i < SDSM_MAX_NODES; i++)
		if (counts[i])
			printf("node %zu: %d\n", i, counts[i]);
	printf("untouched: %zu\n", untouched);
	if (other)
		printf("unknown: %zu\n", other);
	ret = 0;
out_unmap:
	free(addrs);
	free(homes);
	sdsm_region_unmap(base, len);
	return ret;
}

int sdsmctl_region_main(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return sdsmctl_usage_err("region needs list, create, destroy or show");
	if (!strcmp(sub, "list")) {
		if (argc != 2)
			return sdsmctl_usage_err("region list takes no argument");
		return sdsmctl_region_list();
	}
	if (!strcmp(sub, "create"))
		return sdsmctl_region_create(argc - 1, argv + 1);
	if (!strcmp(sub, "destroy") || !strcmp(sub, "show")) {
		if (argc != 3)
			return sdsmctl_usage_err("region %s needs NAME", sub);
		if (!strcmp(sub, "show"))
			return sdsmctl_region_show(argv[2]);
		if (sdsm_region_destroy(argv[2]) < 0) {
			sdsmctl_err("%s", sdsm_last_error());
			return 1;
		}
		return 0;
	}
	return sdsmctl_usage_err("region: unknown subcommand '%s'", sub);
}
