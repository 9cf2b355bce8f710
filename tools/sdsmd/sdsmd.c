// SPDX-License-Identifier: GPL-2.0
/*
 * sdsmd: the per-node agent that starts the workers of sdsmctl -N jobs
 * (Documentation/preload.rst).  Run as root on every node once the module
 * is loaded: it creates the region "sdsmd.<node>" (its inbox, owned by it,
 * so it is gone when sdsmd is) and waits on it with SDSM_IOC_FUTEX.  A
 * launcher posts a job name there; sdsmd forks a supervisor for the job,
 * which
 *   - checks the executable is there (else SHIM_NODE_FAILED with errno),
 *   - starts the worker: same path, argv, environment (+ SDSM_JOB), cwd,
 *     ASLR off, stdin /dev/null, stdout/stderr on pipes,
 *   - copies the pipes into the job's rings, which the launcher prints,
 *   - kills the worker when the launcher is gone (region P.a vanished) or
 *     a node of the job is down (and then leaves the job's regions be),
 *   - reports the worker's wait status and ends.
 * No ssh: whoever can open /dev/sdsm (root) can start programs here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdsm.h"
#include "sdsm_internal.h"
#include "preload/sdsm_shim.h"

static int me;
static uint64_t job_nodes;	/* the nodes of the supervised job */
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sdsmd[node %d]: ", me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Thread ids unique across a job: glibc keeps the owner's thread id in a
 * mutex or rwlock, so two threads with one id on two nodes could both own
 * a recursive mutex.  The worker of node k, and the threads it makes, take
 * their ids from the top of the id space, [PID_TOP - (k + 1) * PID_SPAN,
 * PID_TOP - k * PID_SPAN): before forking it, the supervisor sets the last
 * id handed out (ns_last_pid) below that range, and the kernel counts up
 * from there.  The launcher's ids are the low ones of its node.
 */
#define PID_TOP		4194304		/* PID_MAX_LIMIT on 64-bit */
#define PID_SPAN	65536

static int write_proc(const char *path, long val)
{
	char buf[32];
	int fd, n, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%ld", val);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* At start: ids up to PID_TOP (as systemd configures by default). */
static void pid_max_init(void)
{
	long cur = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int ret;

	if (f) {
		if (fscanf(f, "%ld", &cur) != 1)
			cur = 0;
		fclose(f);
	}
	if (cur >= PID_TOP)
		return;
	ret = write_proc("/proc/sys/kernel/pid_max", PID_TOP);
	if (ret)
		logmsg("cannot raise kernel.pid_max to %d: %s; thread ids of a job may repeat across nodes",
		       PID_TOP, strerror(-ret));
	else
		logmsg("kernel.pid_max raised from %ld to %d (thread ids of jobs)",
		       cur, PID_TOP);
}

/* Before forking the worker: its ids come from this node's range. */
static void pid_range_enter(void)
{
	int ret = write_proc("/proc/sys/kernel/ns_last_pid",
			     PID_TOP - (long)(me + 1) * PID_SPAN - 1);

	if (ret)
		logmsg("cannot set ns_last_pid: %s; thread ids of a job may repeat across nodes",
		       strerror(-ret));
}

static void *map_region(const char *name, size_t *len)
{
	struct sdsm_region_info ri;
	void *p;

	if (sdsm_region_info(name, &ri) < 0)
		return NULL;
	p = sdsm_sys_mmap(NULL, ri.length, PROT_READ | PROT_WRITE, MAP_SHARED,
			  sdsm_fd(), ri.offset);
	if (p == MAP_FAILED)
		return NULL;
	*len = ri.length;
	return p;
}

static bool job_alive(const char *alive)
{
	struct sdsm_region_info ri;

	return sdsm_region_info(alive, &ri) == 0 || errno != ENOENT;
}

/* A node of the job other than this one that is down, or -1. */
static int job_node_down(void)
{
	unsigned int k;

	for (k = 0; k < SDSM_MAX_NODES; k++)
		if ((job_nodes >> k & 1) && (int)k != me && shim_node_down(k))
			return k;
	return -1;
}

static void wake_launcher(struct shim_ctl *c)
{
	__atomic_add_fetch(&c->event, 1, __ATOMIC_SEQ_CST);
	sdsm_futex_wake(&c->event, 1);
}

/* Copy what @fd has into @r; false at EOF or error. */
static bool pump(int fd, struct shim_ring *r, struct shim_ctl *c,
		 const char *alive)
{
	char buf[4096];
	ssize_t n, i = 0;
	uint64_t head, tail;
	int spins = 0;

	n = read(fd, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && errno == EINTR;
	head = r->head;
	while (i < n) {
		tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (head - tail >= SHIM_RING) {
			/* Full: the launcher, woken, empties it. */
			if (++spins % 100 == 0 &&
			    (!job_alive(alive) || job_node_down() >= 0))
				return false;
			wake_launcher(c);
			usleep(10000);
			continue;
		}
		r->data[head % SHIM_RING] = buf[i++];
		head++;
	}
	__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
	wake_launcher(c);
	return true;
}

static char **split(const char *blob, uint32_t len, const char *extra)
{
	uint32_t i, n = 0;
	char **v;

	for (i = 0; i < len; i++)
		n += !blob[i];
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0, n = 0; i < len; i += strlen(blob + i) + 1)
		v[n++] = (char *)blob + i;
	if (extra)
		v[n++] = (char *)extra;
	return v;
}

/*
 * Descriptors 0 and 3 to @limit - 1 of the worker stand for the
 * launcher's (sdsm_fd.c): an O_PATH descriptor of /dev/null holds each
 * number, so the worker's own descriptors come after them, and a call the
 * job's filter does not pass on (poll(2)) fails there.
 */
static int hold_launcher_fds(uint32_t limit)
{
	struct rlimit rl;
	uint32_t fd;
	int ph;

	close(0);
	if (limit <= 3)		/* an old launcher: stdin is /dev/null */
		return open("/dev/null", O_RDONLY) == 0 ? 0 : -EBADF;
	if (limit > SHIM_FDS_MAX)
		return -EINVAL;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur < (rlim_t)limit + 1024) {
		rl.rlim_cur = (rlim_t)limit + 1024;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -errno;
	}
	ph = open("/dev/null", O_PATH);
	if (ph < 0)
		return -errno;
	if (ph != 0)
		return -EBADF;
	for (fd = 3; fd < limit; fd++)
		if (dup2(ph, fd) < 0)
			return -errno;
	return 0;
}

static void __attribute__((noreturn))
run_worker(struct shim_ctl *c, int out, int err)
{
	char job[SDSM_NAME_MAX + 16], **argv, **envp;
	int ret;

	snprintf(job, sizeof(job), "SDSM_JOB=%s", c->prefix);
	argv = split(c->blob, c->argv_len, NULL);
	envp = split(c->blob + c->argv_len, c->env_len, job);
	if (dup2(out, 1) < 0 || dup2(err, 2) < 0 || !argv || !envp)
		_exit(126);
	/*
	 * Nothing of sdsmd's (its device, what its starter left open)
	 * reaches the worker: its descriptors below the launcher's limit
	 * are the launcher's.
	 */
	if (close_range(3, ~0U, 0) < 0)
		_exit(126);
	ret = hold_launcher_fds(c->fd_limit);
	if (ret) {
		dprintf(2, "sdsmd: node %d: cannot keep descriptors below %u for the launcher's: %s\n",
			me, c->fd_limit, strerror(-ret));
		_exit(126);
	}
	if (chdir(c->cwd) < 0) {
		dprintf(2, "sdsmd: node %d: chdir %s: %s\n", me, c->cwd,
			strerror(errno));
		_exit(126);
	}
	personality(ADDR_NO_RANDOMIZE);
	/* A supervisor that dies (SIGBUS on a lost page) takes it along. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_DFL);
	execve(c->exe, argv, envp);
	dprintf(2, "sdsmd: node %d: cannot run %s: %s\n", me, c->exe,
		strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* The supervisor of one job on this node. */
static int supervise(const char *prefix)
{
	char name[SDSM_NAME_MAX], alive[SDSM_NAME_MAX];
	struct pollfd pfd[2];
	struct shim_node *n;
	struct shim_ctl *c;
	int po[2], pe[2], st = 0, open_fds, ticks = 0, busy = 0, checks = 0;
	int down;
	bool exited = false;
	size_t len;
	pid_t pid;

	signal(SIGCHLD, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	snprintf(name, sizeof(name), "%s.c", prefix);
	snprintf(alive, sizeof(alive), "%s.a", prefix);
	c = map_region(name, &len);
	if (!c || len < sizeof(*c) || c->magic != SHIM_MAGIC) {
		logmsg("job %s: %s", prefix, c ? "bad control region" :
		       sdsm_last_error());
		return 1;
	}
	n = &c->node[me];
	job_nodes = c->nodemask;
	if (access(c->exe, X_OK) < 0) {
		n->err = errno;
		__atomic_store_n(&n->state, SHIM_NODE_FAILED, __ATOMIC_RELEASE);
		wake_launcher(c);
		return 1;
	}
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		n->err = errno;
		__atomic_store_n(&n->state, SHIM_NODE_FAILED, __ATOMIC_RELEASE);
		wake_launcher(c);
		return 1;
	}
	pid_range_enter();
	pid = fork();
	if (pid < 0) {
		n->err = errno;
		__atomic_store_n(&n->state, SHIM_NODE_FAILED, __ATOMIC_RELEASE);
		wake_launcher(c);
		return 1;
	}
	if (!pid)
		run_worker(c, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	n->pid = pid;
	__atomic_store_n(&n->state, SHIM_NODE_STARTED, __ATOMIC_RELEASE);
	pfd[0].fd = po[0];
	pfd[1].fd = pe[0];
	pfd[0].events = pfd[1].events = POLLIN;
	open_fds = 2;
	/* Until the worker is gone and its pipes are at EOF (bounded). */
	while (open_fds || !exited) {
		int r = poll(pfd, 2, 100);

		if (r > 0) {
			if (pfd[0].revents && !pump(po[0], &n->out, c, alive)) {
				pfd[0].fd = -1;
				open_fds--;
			}
			if (pfd[1].revents &&
			    !pump(pe[0], &n->err_ring, c, alive)) {
				pfd[1].fd = -1;
				open_fds--;
			}
			if (++busy % 64)
				continue;
		}
		if (!exited && waitpid(pid, &st, WNOHANG) == pid)
			exited = true;
		if (exited && ++ticks > 20)
			break;	/* a grandchild holds the pipes: stop */
		if (!exited && !job_alive(alive)) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			exited = true;
		}
		/*
		 * A node of the job died: the job cannot go on, and its
		 * regions cannot be destroyed (so P.a may stay) while the node
		 * is down.  Pages it held are lost: do not touch the control
		 * region again.
		 */
		down = ++checks % 10 ? -1 : job_node_down();
		if (down >= 0) {
			logmsg("job %s: node %d is down: worker %d killed",
			       prefix, down, pid);
			if (!exited) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
			}
			return 1;
		}
	}
	n->status = st;
	__atomic_store_n(&n->state, SHIM_NODE_DONE, __ATOMIC_RELEASE);
	wake_launcher(c);
	return 0;
}

int main(int argc, char **argv)
{
	struct sdsm_policy pol = { 0 };
	struct shim_inbox *in;
	char name[SDSM_NAME_MAX], job[SDSM_NAME_MAX];
	uint32_t seq;

	if (argc > 1) {
		fprintf(stderr, "usage: sdsmd (run as root on every node; see sdsmd(8) in Documentation/preload.rst)\n");
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	if (sdsm_available() < 0) {
		fprintf(stderr, "sdsmd: %s\n", sdsm_last_error());
		return 1;
	}
	me = sdsm_node_id();
	shim_inbox_name(name, me);
	pol.mode = SDSM_POLICY_BIND;
	pol.nodemask = 1ULL << me;
	in = shim_create_owned(name, 4096, &pol);
	if (!in) {
		logmsg("cannot create %s: %s (another sdsmd running?)", name,
		       sdsm_last_error());
		return 1;
	}
	/* What a job's launcher counts before its workers run (CPUs). */
	__atomic_store_n(&in->ncpus, (uint32_t)get_nprocs(), __ATOMIC_RELEASE);
	pid_max_init();
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	logmsg("ready (inbox %s)", name);
	seq = __atomic_load_n(&in->seq, __ATOMIC_ACQUIRE);
	in->ack = seq;
	while (!stop) {
		pid_t pid;

		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (__atomic_load_n(&in->seq, __ATOMIC_ACQUIRE) == seq) {
			sdsm_futex_wait(&in->seq, seq, 200 * 1000000LL);
			continue;
		}
		seq = __atomic_load_n(&in->seq, __ATOMIC_ACQUIRE);
		memcpy(job, in->job, sizeof(job));
		job[sizeof(job) - 1] = '\0';
		pid = fork();
		if (pid == 0)
			_exit(supervise(job));
		if (pid < 0)
			logmsg("job %s: fork: %s", job, strerror(errno));
		__atomic_store_n(&in->ack, seq, __ATOMIC_RELEASE);
		sdsm_futex_wake(&in->ack, INT32_MAX);
	}
	sdsm_region_destroy(name);
	return 0;
}
