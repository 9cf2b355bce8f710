// SPDX-License-Identifier: GPL-2.0
/*
 * sdsmctl join [--node K] [--module PATH] [--dry-run] CONFIG: load sdsm.ko
 * with the parameters a cluster config file gives.
 *
 * CONFIG, one statement per line, '#' starts a comment:
 *	node ID IPV4		every node of the cluster, IDs 0..N-1, once each
 *	port N			rdma_cm port (optional; the module's default)
 *	secret PATH		file with the cluster secret (optional)
 * This node is the one whose address is configured on a local interface
 * (getifaddrs), or --node K.  With a secret, the file (a regular file of
 * 16..4096 bytes that only its owner, root or us, can read or write) is
 * added as the logon key "sdsm:cluster" to the user keyring first, where
 * the module finds it.  The module is loaded with
 * "insmod PATH" (--module) or "modprobe sdsm", plus node_id=K
 * nodes=ADDR0,ADDR1,... and port=N when given.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "sdsmctl.h"

static int sdsmctl_cfg_err(char *err, size_t len, const char *name,
			   unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int sdsmctl_cfg_err(char *err, size_t len, const char *name,
			   unsigned int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = line ? snprintf(err, len, "%s:%u: ", name, line) :
		   snprintf(err, len, "%s: ", name);
	if (n < 0 || (size_t)n >= len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, len - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int sdsmctl_cfg_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned int)(*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

int sdsmctl_parse_config(FILE *f, const char *name,
			 struct sdsmctl_config *cfg, char *err, size_t errlen)
{
	unsigned char seen[SDSM_MAX_NODES] = { 0 };
	unsigned int line = 0, i, j, max_id = 0, count = 0;
	int port_line = 0, secret_line = 0;
	char buf[512];

	memset(cfg, 0, sizeof(*cfg));
	while (fgets(buf, sizeof(buf), f)) {
		char *tok[4], *save = NULL, *p;
		unsigned long v;
		struct in_addr a;
		int n = 0;

		line++;
		if (!strchr(buf, '\n') && !feof(f))
			return sdsmctl_cfg_err(err, errlen, name, line,
					       "line too long");
		p = strchr(buf, '#');
		if (p)
			*p = '\0';
		for (p = strtok_r(buf, " \t\r\n", &save); p && n < 4;
		     p = strtok_r(NULL, " \t\r\n", &save))
			tok[n++] = p;
		if (!n)
			continue;
		if (!strcmp(tok[0], "node")) {
			if (n != 3)
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "expected 'node ID ADDRESS'");
			if (sdsmctl_cfg_uint(tok[1], SDSM_MAX_NODES - 1, &v) < 0)
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "node id '%s' is not 0..%d",
						       tok[1], SDSM_MAX_NODES - 1);
			if (seen[v])
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "node %lu listed twice", v);
			if (inet_pton(AF_INET, tok[2], &a) != 1)
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "'%s' is not an IPv4 address",
						       tok[2]);
			seen[v] = 1;
			inet_ntop(AF_INET, &a, cfg->addr[v], sizeof(cfg->addr[v]));
			if (v > max_id)
				max_id = v;
			count++;
		} else if (!strcmp(tok[0], "port")) {
			if (n != 2 || sdsmctl_cfg_uint(tok[1], 65535, &v) < 0 || !v)
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "expected 'port N' with N in 1..65535");
			if (port_line)
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "port given twice (first on line %d)",
						       port_line);
			port_line = line;
			cfg->port = v;
		} else if (!strcmp(tok[0], "secret")) {
			if (n != 2 || strlen(tok[1]) >= sizeof(cfg->secret))
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "expected 'secret PATH' (PATH shorter than %zu)",
						       sizeof(cfg->secret));
			if (secret_line)
				return sdsmctl_cfg_err(err, errlen, name, line,
						       "secret given twice (first on line %d)",
						       secret_line);
			secret_line = line;
			strcpy(cfg->secret, tok[1]);
		} else {
			return sdsmctl_cfg_err(err, errlen, name, line,
					       "unknown statement '%s' (expected node, port or secret)",
					       tok[0]);
		}
	}
	if (ferror(f))
		return sdsmctl_cfg_err(err, errlen, name, 0, "read error");
	if (!count)
		return sdsmctl_cfg_err(err, errlen, name, 0, "no node lines");
	for (i = 0; i <= max_id; i++)
		if (!seen[i])
			return sdsmctl_cfg_err(err, errlen, name, 0,
					       "node %u missing (ids must be 0..%u without gaps)",
					       i, max_id);
	for (i = 0; i <= max_id; i++)
		for (j = i + 1; j <= max_id; j++)
			if (!strcmp(cfg->addr[i], cfg->addr[j]))
				return sdsmctl_cfg_err(err, errlen, name, 0,
						       "nodes %u and %u have the same address %s",
						       i, j, cfg->addr[i]);
	cfg->nr_nodes = max_id + 1;
	return 0;
}

#define SDSMCTL_SECRET_MIN	16	/* the module's minimum */
#define SDSMCTL_SECRET_MAX	4096

/*
 * Add the cluster secret in @path as logon key sdsm:cluster to the user
 * keyring, where insmod's request_key() finds it; a logon key cannot be
 * read back from user space.  With @dry only check the file.  0 or -1
 * (reported).
 */
static int sdsmctl_add_secret(const char *path, int dry)
{
	unsigned char buf[SDSMCTL_SECRET_MAX + 1];
	struct stat st;
	ssize_t n;
	long key;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		sdsmctl_err("secret %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		sdsmctl_err("secret %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		sdsmctl_err("secret %s: not a regular file", path);
		goto out_close;
	}
	if (st.st_mode & 077 || (st.st_uid && st.st_uid != geteuid())) {
		sdsmctl_err("secret %s: mode %04o owner %u: must be 0600 or stricter, owned by root or you",
			    path, (unsigned int)(st.st_mode & 07777),
			    (unsigned int)st.st_uid);
		goto out_close;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		sdsmctl_err("secret %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (n < SDSMCTL_SECRET_MIN || n > SDSMCTL_SECRET_MAX) {
		sdsmctl_err("secret %s: %zd bytes, want %d..%d", path, n,
			    SDSMCTL_SECRET_MIN, SDSMCTL_SECRET_MAX);
		goto out_wipe;
	}
	close(fd);
	fd = -1;
	if (dry) {
		explicit_bzero(buf, sizeof(buf));
		return 0;
	}
	key = syscall(SYS_add_key, "logon", "sdsm:cluster", buf, (size_t)n,
		      -4 /* KEY_SPEC_USER_KEYRING */);
	explicit_bzero(buf, sizeof(buf));
	if (key < 0) {
		sdsmctl_err("secret %s: add_key logon sdsm:cluster: %s", path,
			    strerror(errno));
		return -1;
	}
	return 0;

out_wipe:
	explicit_bzero(buf, sizeof(buf));
out_close:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The node whose address is on a local interface; -1 (reported) if none. */
static int sdsmctl_find_self(const struct sdsmctl_config *cfg, const char *file)
{
	struct ifaddrs *ifs, *ifa;
	int found = -1;
	unsigned int i;
	char a[16];

	if (getifaddrs(&ifs) < 0) {
		sdsmctl_err("getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (ifa = ifs; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET)
			continue;
		inet_ntop(AF_INET,
			  &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, a,
			  sizeof(a));
		for (i = 0; i < cfg->nr_nodes; i++) {
			if (strcmp(cfg->addr[i], a))
				continue;
			if (found >= 0 && found != (int)i) {
				sdsmctl_err("%s: this machine has the addresses of nodes %d and %u; use --node",
					    file, found, i);
				freeifaddrs(ifs);
				return -1;
			}
			found = i;
		}
	}
	freeifaddrs(ifs);
	if (found < 0)
		sdsmctl_err("%s: no address of this machine is listed; use --node",
			    file);
	return found;
}

int sdsmctl_join_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node",	required_argument,	NULL, 'n' },
		{ "module",	required_argument,	NULL, 'M' },
		{ "dry-run",	no_argument,		NULL, 'd' },
		{ NULL, 0, NULL, 0 }
	};
	char nodes[SDSM_MAX_NODES * 16 + 16], node_arg[32], port_arg[32];
	const char *module = NULL, *file;
	struct sdsmctl_config cfg;
	char err[600], *args[8];
	unsigned long node = 0;
	int c, dry = 0, have_node = 0, status;
	unsigned int i, nargs = 0;
	size_t used = 0;
	pid_t pid;
	FILE *f;

	while ((c = getopt_long(argc, argv, ":n:M:d", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (sdsmctl_cfg_uint(optarg, SDSM_MAX_NODES - 1, &node) < 0)
				return sdsmctl_usage_err("join --node: '%s' is not a node id 0..%d",
							 optarg, SDSM_MAX_NODES - 1);
			have_node = 1;
			break;
		case 'M':
			module = optarg;
			break;
		case 'd':
			dry = 1;
			break;
		case ':':
			return sdsmctl_usage_err("join: option '%s' needs a value",
						 argv[optind - 1]);
		default:
			return sdsmctl_usage_err("join: unknown option '%s'",
						 argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return sdsmctl_usage_err("join needs one CONFIG file");
	file = argv[optind];
	f = fopen(file, "r");
	if (!f) {
		sdsmctl_err("%s: %s", file, strerror(errno));
		return 1;
	}
	if (sdsmctl_parse_config(f, file, &cfg, err, sizeof(err)) < 0) {
		fclose(f);
		sdsmctl_err("%s", err);
		return 1;
	}
	fclose(f);
	if (have_node) {
		if (node >= cfg.nr_nodes) {
			sdsmctl_err("join --node %lu: %s lists nodes 0-%u", node,
				    file, cfg.nr_nodes - 1);
			return 1;
		}
	} else {
		int self = sdsmctl_find_self(&cfg, file);

		if (self < 0)
			return 1;
		node = self;
	}
	for (i = 0; i < cfg.nr_nodes; i++)
		used += snprintf(nodes + used, sizeof(nodes) - used, "%s%s",
				 i ? "," : "", cfg.addr[i]);
	snprintf(node_arg, sizeof(node_arg), "node_id=%lu", node);
	if (module) {
		args[nargs++] = "insmod";
		args[nargs++] = (char *)module;
	} else {
		args[nargs++] = "modprobe";
		args[nargs++] = "sdsm";
	}
	args[nargs++] = node_arg;
	memmove(nodes + 6, nodes, used + 1);
	memcpy(nodes, "nodes=", 6);
	args[nargs++] = nodes;
	if (cfg.port) {
		snprintf(port_arg, sizeof(port_arg), "port=%d", cfg.port);
		args[nargs++] = port_arg;
	}
	args[nargs] = NULL;
	if (cfg.secret[0] && sdsmctl_add_secret(cfg.secret, dry) < 0)
		return 1;
	if (dry) {
		for (i = 0; i < nargs; i++)
			printf("%s%s", i ? " " : "", args[i]);
		printf("\n");
		return 0;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		sdsmctl_err("fork: %s", strerror(errno));
		return 1;
	}
	if (!pid) {
		execvp(args[0], args);
		sdsmctl_err("%s: %s", args[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			sdsmctl_err("waitpid: %s", strerror(errno));
			return 1;
		}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	sdsmctl_err("%s failed (%s %d)", args[0],
		    WIFEXITED(status) ? "exit status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 1;
}
