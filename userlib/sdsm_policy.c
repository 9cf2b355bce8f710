// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm placement: node lists and policy strings (the grammar of
 * SDSM_POLICY and of sdsmctl's options), the current policy, and the
 * SET_POLICY / QUERY_HOME ioctls.
 *
 * Node lists, numactl style:
 *	all | [!]ITEM[,ITEM]...	ITEM = N | N-M (N <= M)
 * "!" inverts the list against the nodes of the cluster.  Every node must
 * be below nr_nodes (the live cluster size, or SDSM_MAX_NODES when it is
 * not known).
 *
 * Policies:
 *	interleave:NODES[/BLOCK] | bind:NODES | preferred:N | local
 * "first-touch" is a synonym of "local", "membind" of "bind".  BLOCK is a
 * byte count with an optional k or m suffix, a multiple of 4096.  In a
 * struct sdsm_policy "all" is nodemask 0 ("every node"), so a policy
 * string with "all" follows the cluster it is used in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdsm_internal.h"

static unsigned int sdsm_limit(unsigned int nr_nodes)
{
	return nr_nodes && nr_nodes <= SDSM_MAX_NODES ? nr_nodes :
		SDSM_MAX_NODES;
}

static uint64_t sdsm_all_mask(unsigned int nr_nodes)
{
	unsigned int n = sdsm_limit(nr_nodes);

	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

/* A decimal node number; *end is left after it.  -1 on error (reported). */
static int sdsm_parse_node(const char *s, const char **end,
			   unsigned int nr_nodes, const char *whole)
{
	unsigned long long v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return sdsm_fail(EINVAL, "bad node list '%s': expected a node number at '%s'",
				 whole, s);
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned int)(*p - '0');
		if (v > 1000000)
			return sdsm_fail(ERANGE, "bad node list '%s': node number too large",
					 whole);
		p++;
	}
	if (v >= sdsm_limit(nr_nodes))
		return sdsm_fail(ERANGE,
				 "bad node list '%s': node %llu out of range (nodes are 0-%u)",
				 whole, v, sdsm_limit(nr_nodes) - 1);
	*end = p;
	return (int)v;
}

int sdsm_parse_nodemask(const char *str, unsigned int nr_nodes, uint64_t *mask)
{
	const char *p = str;
	uint64_t m = 0;
	int invert = 0;

	if (!str || !mask)
		return sdsm_fail(EINVAL, "sdsm_parse_nodemask: NULL pointer");
	if (!strcmp(str, "all")) {
		*mask = sdsm_all_mask(nr_nodes);
		return 0;
	}
	if (*p == '!') {
		invert = 1;
		p++;
	}
	if (!*p)
		return sdsm_fail(EINVAL, "bad node list '%s': empty", str);
	for (;;) {
		int lo, hi;

		lo = sdsm_parse_node(p, &p, nr_nodes, str);
		if (lo < 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			hi = sdsm_parse_node(p + 1, &p, nr_nodes, str);
			if (hi < 0)
				return -1;
			if (hi < lo)
				return sdsm_fail(EINVAL,
						 "bad node list '%s': range %d-%d goes backwards",
						 str, lo, hi);
		}
		for (; lo <= hi; lo++)
			m |= 1ULL << lo;
		if (!*p)
			break;
		if (*p != ',')
			return sdsm_fail(EINVAL, "bad node list '%s': unexpected '%c'",
					 str, *p);
		p++;
	}
	if (invert)
		m = ~m & sdsm_all_mask(nr_nodes);
	if (!m)
		return sdsm_fail(EINVAL, "bad node list '%s': selects no node", str);
	*mask = m;
	return 0;
}

int sdsm_format_nodemask(uint64_t mask, char *buf, size_t len)
{
	size_t used = 0;
	int lo, hi, n;

	if (!buf || !len)
		return sdsm_fail(EINVAL, "sdsm_format_nodemask: no buffer");
	buf[0] = '\0';
	for (lo = 0; lo < 64; lo = hi + 1) {
		if (!(mask & (1ULL << lo))) {
			hi = lo;
			continue;
		}
		for (hi = lo; hi < 63 && (mask & (1ULL << (hi + 1))); hi++)
			;
		if (hi == lo)
			n = snprintf(buf + used, len - used, "%s%d",
				     used ? "," : "", lo);
		else
			n = snprintf(buf + used, len - used, "%s%d-%d",
				     used ? "," : "", lo, hi);
		if (n < 0 || (size_t)n >= len - used)
			return sdsm_fail(ENOSPC, "node list does not fit in %zu bytes",
					 len);
		used += n;
	}
	return (int)used;
}

/* Bytes with an optional k/m suffix; a non-zero multiple of 4096. */
static int sdsm_parse_block(const char *s, uint64_t *out, const char *whole)
{
	unsigned long long v = 0, mul = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return sdsm_fail(EINVAL, "bad policy '%s': bad block size '%s'",
				 whole, s);
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned int)(*p - '0');
		if (v > (1ULL << 40))
			return sdsm_fail(ERANGE, "bad policy '%s': block size too large",
					 whole);
		p++;
	}
	if (*p == 'k' || *p == 'K')
		mul = 1024;
	else if (*p == 'm' || *p == 'M')
		mul = 1024 * 1024;
	if (mul > 1)
		p++;
	if (*p)
		return sdsm_fail(EINVAL, "bad policy '%s': bad block size '%s'",
				 whole, s);
	v *= mul;
	if (!v || v % SDSM_PAGE_SIZE)
		return sdsm_fail(EINVAL,
				 "bad policy '%s': block size must be a non-zero multiple of 4096",
				 whole);
	*out = v;
	return 0;
}

int sdsm_parse_policy(const char *str, unsigned int nr_nodes,
		      struct sdsm_policy *policy)
{
	struct sdsm_policy p;
	const char *arg;
	char nodes[256];
	char *slash;

	if (!str || !policy)
		return sdsm_fail(EINVAL, "sdsm_parse_policy: NULL pointer");
	memset(&p, 0, sizeof(p));
	if (!strcmp(str, "local") || !strcmp(str, "first-touch")) {
		p.mode = SDSM_POLICY_FIRST_TOUCH;
		*policy = p;
		return 0;
	}
	arg = strchr(str, ':');
	if (!arg)
		return sdsm_fail(EINVAL,
				 "bad policy '%s': expected interleave:NODES, bind:NODES, preferred:NODE or local",
				 str);
	arg++;
	if (!strncmp(str, "interleave:", 11)) {
		p.mode = SDSM_POLICY_INTERLEAVE;
	} else if (!strncmp(str, "bind:", 5) || !strncmp(str, "membind:", 8)) {
		p.mode = SDSM_POLICY_BIND;
	} else if (!strncmp(str, "preferred:", 10)) {
		const char *end;
		int node;

		p.mode = SDSM_POLICY_PREFERRED;
		node = sdsm_parse_node(arg, &end, nr_nodes, arg);
		if (node < 0)
			return -1;
		if (*end)
			return sdsm_fail(EINVAL,
					 "bad policy '%s': preferred takes one node",
					 str);
		p.preferred_node = node;
		*policy = p;
		return 0;
	} else {
		return sdsm_fail(EINVAL, "bad policy '%s': unknown mode", str);
	}
	if (strlen(arg) >= sizeof(nodes))
		return sdsm_fail(EINVAL, "bad policy '%s': too long", str);
	strcpy(nodes, arg);
	slash = strchr(nodes, '/');
	if (slash) {
		uint64_t block = 0;

		if (p.mode != SDSM_POLICY_INTERLEAVE)
			return sdsm_fail(EINVAL,
					 "bad policy '%s': only interleave takes a block size",
					 str);
		*slash = '\0';
		if (sdsm_parse_block(slash + 1, &block, str) < 0)
			return -1;
		p.block_size = block;
	}
	if (strcmp(nodes, "all")) {
		uint64_t mask;

		if (sdsm_parse_nodemask(nodes, nr_nodes, &mask) < 0)
			return -1;
		p.nodemask = mask;
	}
	*policy = p;
	return 0;
}

int sdsm_format_policy(const struct sdsm_policy *policy, char *buf,
		       size_t len)
{
	char nodes[200] = "all";
	const char *mode;
	int n;

	if (!policy || !buf || !len)
		return sdsm_fail(EINVAL, "sdsm_format_policy: NULL pointer");
	switch (policy->mode) {
	case SDSM_POLICY_FIRST_TOUCH:
		n = snprintf(buf, len, "local");
		goto out;
	case SDSM_POLICY_PREFERRED:
		n = snprintf(buf, len, "preferred:%u", policy->preferred_node);
		goto out;
	case SDSM_POLICY_INTERLEAVE:
		mode = "interleave";
		break;
	case SDSM_POLICY_BIND:
		mode = "bind";
		break;
	default:
		return sdsm_fail(EINVAL, "unknown policy mode %u", policy->mode);
	}
	if (policy->nodemask &&
	    sdsm_format_nodemask(policy->nodemask, nodes, sizeof(nodes)) < 0)
		return -1;
	if (policy->mode == SDSM_POLICY_INTERLEAVE && policy->block_size &&
	    policy->block_size != SDSM_PAGE_SIZE)
		n = snprintf(buf, len, "%s:%s/%llu", mode, nodes,
			     (unsigned long long)policy->block_size);
	else
		n = snprintf(buf, len, "%s:%s", mode, nodes);
out:
	if (n < 0 || (size_t)n >= len)
		return sdsm_fail(ENOSPC, "policy does not fit in %zu bytes", len);
	return n;
}

int sdsm_get_policy(struct sdsm_policy *policy)
{
	const char *env = getenv("SDSM_POLICY");
	struct sdsm_policy p;

	if (!policy)
		return sdsm_fail(EINVAL, "sdsm_get_policy: NULL pointer");
	if (!env || !*env) {
		memset(&p, 0, sizeof(p));
		p.mode = SDSM_POLICY_FIRST_TOUCH;
		*policy = p;
		return 0;
	}
	if (sdsm_parse_policy(env, sdsm_live_nr_nodes(), &p) < 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", sdsm_last_error());
		return sdsm_fail(errno, "SDSM_POLICY: %s", msg);
	}
	*policy = p;
	return 0;
}

int sdsm_set_policy(void *addr, size_t len, const struct sdsm_policy *policy)
{
	struct sdsm_set_policy sp;

	if (!policy)
		return sdsm_fail(EINVAL, "sdsm_set_policy: NULL policy");
	memset(&sp, 0, sizeof(sp));
	sp.size = sizeof(sp);
	sp.addr = (uintptr_t)addr;
	sp.length = len;
	sp.policy = *policy;
	return sdsm_dev_ioctl(SDSM_IOC_SET_POLICY, &sp, SDSM_FEATURE_PLACEMENT,
			      "set policy");
}

int sdsm_query_homes(size_t count, void *const addrs[], int homes[])
{
	uint64_t chunk[SDSM_QUERY_MAX];
	struct sdsm_query_home q;
	size_t done, n, i;

	if (!count)
		return 0;
	if (!addrs || !homes)
		return sdsm_fail(EINVAL, "sdsm_query_homes: NULL array");
	for (done = 0; done < count; done += n) {
		n = count - done;
		if (n > SDSM_QUERY_MAX)
			n = SDSM_QUERY_MAX;
		for (i = 0; i < n; i++)
			chunk[i] = (uintptr_t)addrs[done + i];
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.count = n;
		q.addrs = (uintptr_t)chunk;
		q.homes = (uintptr_t)(homes + done);
		if (sdsm_dev_ioctl(SDSM_IOC_QUERY_HOME, &q,
				   SDSM_FEATURE_PLACEMENT, "query home") < 0)
			return -1;
	}
	return 0;
}

int sdsm_home_node(const void *addr)
{
	void *a = (void *)addr;
	int home;

	if (sdsm_query_homes(1, &a, &home) < 0)
		return -1;
	if (home < 0)
		return sdsm_fail(-home, "home of %p: %s", addr,
				 home == -ENOENT ? "page not touched yet" :
				 home == -EFAULT ? "not sdsm memory" :
				 strerror(-home));
	return home;
}
