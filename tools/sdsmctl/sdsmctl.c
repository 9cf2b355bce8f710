// SPDX-License-Identifier: GPL-2.0
/*
 * sdsmctl: options, --show, --hardware, and running a command under a
 * placement policy (numactl(8) for an sdsm cluster).
 *
 * Like numactl, getopt_long() runs with a leading '+' so parsing stops at
 * the command; the policy travels to the command in SDSM_POLICY and the
 * consistency (--consistency) in SDSM_CONSISTENCY, which libsdsm reads
 * for sdsm_alloc(), then sdsmctl execvp()s it.  With a policy or a
 * consistency, the command also gets libsdsm-preload.so in front of
 * LD_PRELOAD (its heap, globals and anonymous mmaps in sdsm memory under
 * the policy, Documentation/preload.rst) and ASLR off, unless
 * --no-preload.  Node lists
 * are checked against the live cluster (nr_nodes in sysfs) when the module
 * is loaded, else against SDSM_MAX_NODES.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "sdsmctl.h"

/* SDSM_PRELOAD_PATH: where install puts libsdsm-preload.so (Makefile). */

const char *sdsmctl_prog = "sdsmctl";

void sdsmctl_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", sdsmctl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sdsmctl_usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", sdsmctl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try '%s --help')\n", sdsmctl_prog);
	return EXIT_USAGE;
}

unsigned int sdsmctl_nr_nodes(void)
{
	int n = sdsm_sysfs_nr_nodes();

	return n > 0 ? (unsigned int)n : SDSM_MAX_NODES;
}

/* Bytes with an optional k/m/g suffix (powers of 1024). */
int sdsmctl_parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v = 0, mul = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (1ULL << 50))
			return -1;
		v = v * 10 + (unsigned int)(*p - '0');
	}
	switch (*p) {
	case 'k': case 'K': mul = 1ULL << 10; p++; break;
	case 'm': case 'M': mul = 1ULL << 20; p++; break;
	case 'g': case 'G': mul = 1ULL << 30; p++; break;
	}
	if (*p || v > (1ULL << 50) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* ---- consistency ---- */

int sdsmctl_parse_consistency(const char *arg)
{
	if (!strcmp(arg, "sequential"))
		return SDSM_CONSISTENCY_SEQUENTIAL;
	if (!strcmp(arg, "release"))
		return SDSM_CONSISTENCY_RELEASE;
	return -1;
}

const char *sdsmctl_consistency_name(unsigned int consistency)
{
	switch (consistency) {
	case SDSM_CONSISTENCY_SEQUENTIAL:
		return "sequential";
	case SDSM_CONSISTENCY_RELEASE:
		return "release";
	}
	return "unknown";
}

/* ---- policy options ---- */

struct sdsmctl_pending {
	const char *mode;
	const char *arg;
};

static struct sdsmctl_pending sdsmctl_pend;

int sdsmctl_policy_option(struct sdsmctl_policy_opt *po, const char *opt,
			  const char *arg)
{
	if (!strcmp(opt, "block-size")) {
		unsigned long long v;

		if (sdsmctl_parse_size(arg, &v) < 0 || !v || v % SDSM_PAGE_SIZE)
			return sdsmctl_usage_err("--block-size: '%s' is not a non-zero multiple of 4096 bytes",
						 arg);
		snprintf(po->block, sizeof(po->block), "%llu", v);
		return 0;
	}
	if (po->set)
		return sdsmctl_usage_err("--%s: only one of --interleave, --membind, --preferred, --localalloc",
					 opt);
	po->set = 1;
	po->opt = opt;
	sdsmctl_pend.mode = !strcmp(opt, "interleave") ? "interleave" :
			    !strcmp(opt, "membind") ? "bind" :
			    !strcmp(opt, "preferred") ? "preferred" : "local";
	sdsmctl_pend.arg = arg;
	if (arg && !*arg)
		return sdsmctl_usage_err("--%s=: empty node list", opt);
	return 0;
}

int sdsmctl_policy_finish(struct sdsmctl_policy_opt *po)
{
	char str[320];

	if (!po->set) {
		if (po->block[0])
			return sdsmctl_usage_err("--block-size needs --interleave");
		return 0;
	}
	if (po->block[0] && strcmp(sdsmctl_pend.mode, "interleave"))
		return sdsmctl_usage_err("--block-size needs --interleave");
	if (!sdsmctl_pend.arg)
		snprintf(str, sizeof(str), "%s", sdsmctl_pend.mode);
	else if (po->block[0])
		snprintf(str, sizeof(str), "%s:%s/%s", sdsmctl_pend.mode,
			 sdsmctl_pend.arg, po->block);
	else
		snprintf(str, sizeof(str), "%s:%s", sdsmctl_pend.mode,
			 sdsmctl_pend.arg);
	if (sdsm_parse_policy(str, sdsmctl_nr_nodes(), &po->policy) < 0) {
		const char *msg = sdsm_last_error();

		/* The option and its value lead; drop the library's prefix. */
		if ((!strncmp(msg, "bad policy '", 12) ||
		     !strncmp(msg, "bad node list '", 15)) && strstr(msg, "': "))
			msg = strstr(msg, "': ") + 3;
		return sdsmctl_usage_err("--%s=%s: %s", po->opt,
					 sdsmctl_pend.arg ? sdsmctl_pend.arg : "",
					 msg);
	}
	return 0;
}

/* ---- --show ---- */

static void sdsmctl_print_features(uint64_t f)
{
	uint64_t bit;
	int any = 0;

	printf("features:");
	for (bit = 1; bit; bit <<= 1) {
		const char *name;

		if (!(f & bit))
			continue;
		name = sdsm_feature_name(bit);
		if (name)
			printf(" %s", name);
		else
			printf(" 0x%llx", (unsigned long long)bit);
		any = 1;
	}
	printf("%s\n", any ? "" : " none");
}

/* The consistency line of --show: the option, else SDSM_CONSISTENCY. */
static int sdsmctl_show_consistency(int consistency)
{
	const char *env = getenv("SDSM_CONSISTENCY");

	if (consistency >= 0) {
		printf("consistency: %s (from --consistency)\n",
		       sdsmctl_consistency_name(consistency));
		return 0;
	}
	if (!env || !*env) {
		printf("consistency: sequential (default: SDSM_CONSISTENCY not set)\n");
		return 0;
	}
	if (sdsmctl_parse_consistency(env) < 0) {
		printf("consistency: invalid\n");
		sdsmctl_err("SDSM_CONSISTENCY: '%s' is neither sequential nor release",
			    env);
		return 1;
	}
	printf("consistency: %s (from SDSM_CONSISTENCY)\n", env);
	return 0;
}

static int sdsmctl_show(const struct sdsmctl_policy_opt *po, int consistency)
{
	struct sdsm_node_info nodes[SDSM_MAX_NODES];
	const char *env = getenv("SDSM_POLICY");
	struct sdsm_policy pol;
	char buf[320];
	uint64_t up = 0, features;
	int n, i, id, ret = 0;

	if (po->set) {
		sdsm_format_policy(&po->policy, buf, sizeof(buf));
		printf("policy: %s (from --%s)\n", buf, po->opt);
	} else if (!env || !*env) {
		printf("policy: local (default: SDSM_POLICY not set)\n");
	} else if (sdsm_get_policy(&pol) < 0) {
		printf("policy: invalid\n");
		sdsmctl_err("%s", sdsm_last_error());
		ret = 1;
	} else {
		sdsm_format_policy(&pol, buf, sizeof(buf));
		printf("policy: %s (from SDSM_POLICY=%s)\n", buf, env);
	}
	if (sdsmctl_show_consistency(consistency))
		ret = 1;
	id = sdsm_sysfs_node_id();
	n = sdsm_node_table(nodes, SDSM_MAX_NODES);
	if (id < 0 || n < 0) {
		printf("this node: - (%s)\n", sdsm_last_error());
		return 1;
	}
	printf("this node: %d\n", id);
	printf("nodes: %d\n", n);
	for (i = 0; i < n && i < SDSM_MAX_NODES; i++)
		if (!strcmp(nodes[i].state, "up") ||
		    !strcmp(nodes[i].state, "self"))
			up |= 1ULL << nodes[i].id;
	if (sdsm_format_nodemask(up, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	printf("nodes up: %s\n", up ? buf : "none");
	if (sdsm_features(&features) == 0)
		sdsmctl_print_features(features);
	else
		printf("features: - (%s)\n", sdsm_last_error());
	return ret;
}

/* ---- --hardware ---- */

static void sdsmctl_num(int64_t v, int width)
{
	if (v == SDSM_STAT_UNKNOWN)
		printf(" %*s", width, "-");
	else
		printf(" %*lld", width, (long long)v);
}

/*
 * Distance, numactl style: 10 for a node to itself; for a peer that is up,
 * relative to the nearest peer that is up: 20 (numactl's usual remote
 * distance) times rtt_us / the smallest rtt_us, rounded, at most 254 (the
 * ACPI SLIT range).  A peer twice as far in round-trip time shows 40,
 * whether round trips are 10 us (RDMA hardware) or 2 ms (the TCG test
 * cluster, where an absolute scale saturated); rtt_us shows the absolute
 * figure.  Only this node's round trips are measured here; other pairs
 * print "-".  min_rtt is the smallest rtt_us of the peers that are up.
 */
static int sdsmctl_distance(const struct sdsm_node_info *n, int64_t min_rtt)
{
	long long d, rtt;

	if (!strcmp(n->state, "self"))
		return 10;
	if (strcmp(n->state, "up") || n->rtt_us == SDSM_STAT_UNKNOWN)
		return -1;
	rtt = n->rtt_us < 1 ? 1 : n->rtt_us;
	if (min_rtt < 1)
		min_rtt = 1;
	if (rtt > 1000000000LL)
		return 254;
	d = (20 * rtt + min_rtt / 2) / min_rtt;
	if (d < 20)
		d = 20;
	return d > 254 ? 254 : (int)d;
}

static int sdsmctl_hardware(void)
{
	struct sdsm_node_info nodes[SDSM_MAX_NODES];
	int n, i, j, id, nr;
	int64_t min_rtt = -1;
	uint64_t all = 0;
	char buf[200];

	nr = sdsm_sysfs_nr_nodes();
	id = sdsm_sysfs_node_id();
	n = sdsm_node_table(nodes, SDSM_MAX_NODES);
	if (nr < 0 || id < 0 || n < 0) {
		sdsmctl_err("%s", sdsm_last_error());
		return 1;
	}
	if (n > SDSM_MAX_NODES)
		n = SDSM_MAX_NODES;
	for (i = 0; i < n; i++) {
		all |= 1ULL << nodes[i].id;
		if (!strcmp(nodes[i].state, "up") &&
		    nodes[i].rtt_us != SDSM_STAT_UNKNOWN &&
		    (min_rtt < 0 || nodes[i].rtt_us < min_rtt))
			min_rtt = nodes[i].rtt_us;
	}
	sdsm_format_nodemask(all, buf, sizeof(buf));
	printf("available: %d nodes (%s)\n", n, n ? buf : "none");
	printf("this node: %d\n", id);
	if (n != nr)
		printf("warning: nr_nodes is %d but sysfs lists %d nodes\n", nr,
		       n);
	printf("%-4s %-15s %-10s %8s %12s %12s %10s %10s %12s %12s\n", "node",
	       "address", "state", "rtt_us", "homed_pages", "free_kb",
	       "tx_msgs", "rx_msgs", "tx_bytes", "rx_bytes");
	for (i = 0; i < n; i++) {
		const struct sdsm_node_info *p = &nodes[i];

		printf("%-4d %-15s %-10s", p->id, p->addr, p->state);
		sdsmctl_num(p->rtt_us, 8);
		sdsmctl_num(p->homed_pages, 12);
		sdsmctl_num(p->free_kb, 12);
		sdsmctl_num(p->tx_msgs, 10);
		sdsmctl_num(p->rx_msgs, 10);
		sdsmctl_num(p->tx_bytes, 12);
		sdsmctl_num(p->rx_bytes, 12);
		printf("\n");
	}
	printf("node distances:\nnode");
	for (j = 0; j < n; j++)
		printf(" %4d", nodes[j].id);
	printf("\n");
	for (i = 0; i < n; i++) {
		printf("%3d:", nodes[i].id);
		for (j = 0; j < n; j++) {
			int d = -1;

			if (i == j)
				d = 10;
			else if (nodes[i].id == id)
				d = sdsmctl_distance(&nodes[j], min_rtt);
			else if (nodes[j].id == id)
				d = sdsmctl_distance(&nodes[i], min_rtt);
			if (d < 0)
				printf(" %4s", "-");
			else
				printf(" %4d", d);
		}
		printf("\n");
	}
	return 0;
}

/* ---- main ---- */

static void sdsmctl_help(void)
{
	printf("Usage: %s [POLICY] [--consistency=C] [--] COMMAND [ARGS...]\n"
	       "       %s --hardware | -H\n"
	       "       %s [POLICY] [--consistency=C] --show | -s\n"
	       "       %s region list | create NAME SIZE [POLICY] [--excl] [--mode OCTAL]\n"
	       "                [--consistency=C] [--manager=NODE] | destroy NAME | show NAME\n"
	       "       %s stat [-i SECONDS] [-c COUNT]\n"
	       "       %s join [--node K] [--module PATH] [--dry-run] CONFIG\n"
	       "\n"
	       "POLICY (one of; NODES = all | N | N-M | N,M,... | !NODES):\n"
	       "  -i, --interleave=NODES   homes rotate over NODES\n"
	       "      --block-size=SIZE    bytes per node in the rotation (4096 multiple)\n"
	       "  -m, --membind=NODES      homes only on NODES\n"
	       "  -p, --preferred=NODE     home on NODE while it is up\n"
	       "  -l, --localalloc         home on the node that touches first\n"
	       "\n"
	       "      --consistency=C      C = sequential (the default) or release: the\n"
	       "                           memory model of COMMAND's sdsm memory\n"
	       "                           (SDSM_CONSISTENCY), or of the region created\n"
	       "      --no-preload         only set SDSM_POLICY and SDSM_CONSISTENCY,\n"
	       "                           no libsdsm-preload.so\n"
	       "\n"
	       "  -N, --cpunodebind=NODES  run COMMAND's threads on NODES: a worker process\n"
	       "                           on each (started by sdsmd there), threads placed\n"
	       "                           round-robin over NODES from the one after main()'s,\n"
	       "                           or over the node list SDSM_PLACE gives; see\n"
	       "                           preload.rst\n"
	       "\n"
	       "The policy reaches COMMAND in SDSM_POLICY, the consistency in\n"
	       "SDSM_CONSISTENCY (libsdsm's sdsm_alloc() uses them), and\n"
	       "libsdsm-preload.so puts COMMAND's heap, globals and anonymous mmaps\n"
	       "in sdsm memory under them (LD_PRELOAD, ASLR off).\n"
	       "  -h, --help               this text\n"
	       "  -V, --version            version\n"
	       "See sdsmctl(8).\n",
	       sdsmctl_prog, sdsmctl_prog, sdsmctl_prog, sdsmctl_prog,
	       sdsmctl_prog, sdsmctl_prog);
}

/*
 * Where libsdsm-preload.so is: SDSM_PRELOAD_LIB, else next to a build-tree
 * sdsmctl (../../userlib), else the installed path.
 */
static int sdsmctl_preload_path(char *buf, size_t len)
{
	const char *env = getenv("SDSM_PRELOAD_LIB");
	char exe[2048], *slash;
	ssize_t n;

	if (env && *env) {
		if (access(env, R_OK) < 0) {
			sdsmctl_err("SDSM_PRELOAD_LIB=%s: %s", env,
				    strerror(errno));
			return -1;
		}
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, len, "%s/../../userlib/libsdsm-preload.so",
				 exe);
			if (!access(buf, R_OK))
				return 0;
		}
	}
	snprintf(buf, len, "%s", SDSM_PRELOAD_PATH);
	if (!access(buf, R_OK))
		return 0;
	sdsmctl_err("libsdsm-preload.so not found (tried %s); set SDSM_PRELOAD_LIB, or run with --no-preload",
		    SDSM_PRELOAD_PATH);
	return -1;
}

/* LD_PRELOAD = the shim, then what was there (unless it is there). */
static int sdsmctl_set_preload(void)
{
	const char *old = getenv("LD_PRELOAD");
	char lib[4096], *val;
	int ret;

	if (sdsmctl_preload_path(lib, sizeof(lib)) < 0)
		return -1;
	if (old && *old && strstr(old, lib))
		return 0;
	if (old && *old)
		ret = asprintf(&val, "%s:%s", lib, old);
	else
		ret = asprintf(&val, "%s", lib);
	if (ret < 0 || setenv("LD_PRELOAD", val, 1) < 0) {
		sdsmctl_err("setenv LD_PRELOAD: %s", strerror(errno));
		return -1;
	}
	free(val);
	/* One address layout on every node: no ASLR for the command. */
	if (personality(0xffffffff) != -1)
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	return 0;
}

static int sdsmctl_exec(char **argv, const struct sdsmctl_policy_opt *po,
			int consistency, int no_preload, const char *cpunodes)
{
	char buf[320];
	uint64_t mask;
	int err;

	if (cpunodes) {
		/* The job's nodes: libsdsm-preload.so starts the workers. */
		if (sdsm_parse_nodemask(cpunodes, sdsmctl_nr_nodes(),
					&mask) < 0) {
			const char *msg = sdsm_last_error();

			if (!strncmp(msg, "bad node list '", 15) &&
			    strstr(msg, "': "))
				msg = strstr(msg, "': ") + 3;
			return sdsmctl_usage_err("--cpunodebind=%s: %s",
						 cpunodes, msg);
		}
		if (!mask)
			return sdsmctl_usage_err("--cpunodebind=%s: empty node list",
						 cpunodes);
		if (sdsm_format_nodemask(mask, buf, sizeof(buf)) < 0 ||
		    setenv("SDSM_CPUNODES", buf, 1) < 0) {
			sdsmctl_err("setenv SDSM_CPUNODES: %s", strerror(errno));
			return 1;
		}
		if (!po->set && consistency < 0 && sdsmctl_set_preload() < 0)
			return 1;
	}
	if (consistency >= 0) {
		if (setenv("SDSM_CONSISTENCY",
			   sdsmctl_consistency_name(consistency), 1) < 0) {
			sdsmctl_err("setenv: %s", strerror(errno));
			return 1;
		}
		if (!no_preload && !po->set && sdsmctl_set_preload() < 0)
			return 1;
	}
	if (po->set) {
		if (sdsm_format_policy(&po->policy, buf, sizeof(buf)) < 0) {
			sdsmctl_err("%s", sdsm_last_error());
			return 1;
		}
		if (setenv("SDSM_POLICY", buf, 1) < 0) {
			sdsmctl_err("setenv: %s", strerror(errno));
			return 1;
		}
		if (!no_preload && sdsmctl_set_preload() < 0)
			return 1;
	}
	fflush(stdout);
	execvp(argv[0], argv);
	err = errno;
	sdsmctl_err("%s: %s", argv[0], strerror(err));
	return err == ENOENT ? 127 : 126;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hardware",	no_argument,		NULL, 'H' },
		{ "show",	no_argument,		NULL, 's' },
		{ "interleave",	required_argument,	NULL, 'i' },
		{ "membind",	required_argument,	NULL, 'm' },
		{ "preferred",	required_argument,	NULL, 'p' },
		{ "localalloc",	no_argument,		NULL, 'l' },
		{ "block-size",	required_argument,	NULL, 'b' },
		{ "no-preload",	no_argument,		NULL, 'N' + 256 },
		{ "consistency", required_argument,	NULL, 'C' + 256 },
		{ "cpunodebind", required_argument,	NULL, 'N' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sdsmctl_policy_opt po;
	int hardware = 0, show = 0, no_preload = 0, c, ret, dashdash, i;
	int consistency = -1;
	const char *cpunodes = NULL;
	char **rest;
	int nrest;

	memset(&po, 0, sizeof(po));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:Hsi:m:p:lN:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			hardware = 1;
			break;
		case 's':
			show = 1;
			break;
		case 'i':
			ret = sdsmctl_policy_option(&po, "interleave", optarg);
			if (ret)
				return ret;
			break;
		case 'm':
			ret = sdsmctl_policy_option(&po, "membind", optarg);
			if (ret)
				return ret;
			break;
		case 'p':
			ret = sdsmctl_policy_option(&po, "preferred", optarg);
			if (ret)
				return ret;
			break;
		case 'l':
			ret = sdsmctl_policy_option(&po, "localalloc", NULL);
			if (ret)
				return ret;
			break;
		case 'b':
			ret = sdsmctl_policy_option(&po, "block-size", optarg);
			if (ret)
				return ret;
			break;
		case 'N' + 256:
			no_preload = 1;
			break;
		case 'C' + 256:
			consistency = sdsmctl_parse_consistency(optarg);
			if (consistency < 0)
				return sdsmctl_usage_err("--consistency=%s: expected sequential or release",
							 optarg);
			break;
		case 'N':
			if (!*optarg)
				return sdsmctl_usage_err("--cpunodebind=: empty node list");
			cpunodes = optarg;
			break;
		case 'h':
			sdsmctl_help();
			return 0;
		case 'V':
			printf("sdsmctl (sdsm) %s\n", SDSMCTL_VERSION);
			return 0;
		case ':':
			return sdsmctl_usage_err("option '%s' needs a value",
						 argv[optind - 1]);
		default:
			if (!strncmp(argv[optind - 1], "--", 2))
				return sdsmctl_usage_err("unknown option or unexpected value '%s'",
							 argv[optind - 1]);
			return sdsmctl_usage_err("unknown option '-%c'", optopt);
		}
	}
	ret = sdsmctl_policy_finish(&po);
	if (ret)
		return ret;
	rest = argv + optind;
	nrest = argc - optind;
	dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");

	if (hardware || show) {
		if (nrest)
			return sdsmctl_usage_err("--%s takes no command",
						 hardware ? "hardware" : "show");
		if (cpunodes)
			return sdsmctl_usage_err("--cpunodebind needs a command");
		if (hardware && (show || po.set || consistency >= 0))
			return sdsmctl_usage_err("--hardware takes no other option");
		return hardware ? sdsmctl_hardware() :
				  sdsmctl_show(&po, consistency);
	}
	if (!nrest && cpunodes)
		return sdsmctl_usage_err("no command to run under --cpunodebind");
	if (!nrest && !po.set && consistency >= 0)
		return sdsmctl_usage_err("no command to run under --consistency");
	if (!nrest)
		return sdsmctl_usage_err(po.set ? "no command to run under --%s" :
					 "no command given%s",
					 po.set ? po.opt : "");
	if (!dashdash && (!strcmp(rest[0], "region") ||
			  !strcmp(rest[0], "stat") || !strcmp(rest[0], "join"))) {
		if (po.set)
			return sdsmctl_usage_err("policy options cannot precede '%s'",
						 rest[0]);
		if (consistency >= 0)
			return sdsmctl_usage_err("--consistency cannot precede '%s'",
						 rest[0]);
		for (i = 1; i < nrest && strcmp(rest[i], "--"); i++) {
			if (!strcmp(rest[i], "--help") || !strcmp(rest[i], "-h")) {
				sdsmctl_help();
				return 0;
			}
		}
		optind = 0;
		if (!strcmp(rest[0], "region"))
			return sdsmctl_region_main(nrest, rest);
		if (!strcmp(rest[0], "stat"))
			return sdsmctl_stat_main(nrest, rest);
		return sdsmctl_join_main(nrest, rest);
	}
	if (no_preload && !po.set && consistency < 0)
		return sdsmctl_usage_err("--no-preload needs a policy option or --consistency");
	if (no_preload && cpunodes)
		return sdsmctl_usage_err("--cpunodebind needs libsdsm-preload.so: no --no-preload");
	return sdsmctl_exec(rest, &po, consistency, no_preload, cpunodes);
}
