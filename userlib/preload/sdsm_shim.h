/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job of an unmodified pthread program spread over sdsm nodes
 * (sdsmctl -N): what the launcher, the workers (libsdsm-preload.so) and the
 * per-node agent sdsmd share.  All of it lives in sdsm regions, so every
 * field is read and written from several nodes; words that are waited on
 * are 32-bit and aligned for SDSM_IOC_FUTEX.  See Documentation/preload.rst.
 *
 * Regions of job P = "j.<launcher node>.<launcher pid>", all created by the
 * launcher with SDSM_REGION_F_OWNED (gone when it exits):
 *   P.c   struct shim_ctl, at SHIM_CTL_ADDR in the job's processes;
 *   P.a   one page nobody else maps: it exists while the launcher lives;
 *   P.g   the executable's .data/.bss (launcher layout);
 *   P.h<k> the heap of node k, heap_mb MiB at shim_heap_base(k).
 * Per node, sdsmd creates "sdsmd.<k>" (struct shim_inbox), owned by it.
 */
#ifndef SDSM_SHIM_H
#define SDSM_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <unistd.h>

#include "../sdsm_heap.h"
#include "../sdsm_internal.h"

#define SHIM_MAGIC		0x5344534cU	/* "SDSL": the layout of P.c */
/*
 * The value of the SIGSYS the launcher queues to its thread serving a
 * slot, to end that slot's call with EINTR (sdsm_fd.c, "interrupt").
 */
#define SHIM_SIG_INTR		0x53494e54	/* "SINT" */
/* What a job says of a call it refuses (shim_say(), with the call). */
#define SHIM_REFUSED_FMT	"%s is not supported in a job over several nodes (sdsmctl -N): a new process or program cannot follow the job's memory and threads"
/* ... of a call on a thread of node %u (shim_say(), with the call). */
#define SHIM_REMOTE_FMT		"%s of a thread on node %u is not supported in a job over several nodes (sdsmctl -N): call it in that thread"
#define SHIM_THREADS		256
#define SHIM_PLACE_MAX		64	/* entries of SDSM_PLACE */
#define SHIM_RING		32768
#define SHIM_BLOB		65536
#define SHIM_PATH		4096
/* A node's heap: at least, and a multiple of, one slot of libsdsm's heap. */
#define SHIM_HEAP_UNIT		SDSM_HEAP_SLOT_SIZE
#define SHIM_STACK		(2UL << 20)	/* the least, and the unit */
#define SHIM_MAIN_STACK		(8UL << 20)
/* Below each stack, never mapped for access (shim_stack_alloc()). */
#define SHIM_STACK_GUARD	(64UL << 10)
/* Thread stacks a process can have (those of ended threads kept too). */
#define SHIM_STACKS		512
#define SHIM_INBOX_LOCK		0x5344534d44000000ULL	/* + node */
/*
 * Release consistency: wait words of condvars; barriers in use at once
 * where the module does not name the serial arrival.
 */
#define SHIM_CONDS		512
#define SHIM_BARRIERS		256
/*
 * Thread-specific keys made while a job runs are the job's (any node's
 * thread may use any of them): key SHIM_KEY_BASE + i is keys[i] of P.c.
 * glibc's own keys are below PTHREAD_KEYS_MAX (1024).
 */
#define SHIM_KEYS		1024
#define SHIM_KEY_BASE		0x4000U
/*
 * Descriptors are the launcher's (sdsm_fd.c): on a worker, descriptors 0
 * to fd_limit - 1 stand for the launcher's own, whose soft RLIMIT_NOFILE
 * is fd_limit, at most SHIM_FDS_MAX.
 */
#define SHIM_FDS_MAX		65536

/*
 * Where every process of the job maps P.c: pthread_t values are addresses
 * of its thread table, the same on every node.
 */
#define SHIM_CTL_ADDR		0x10f000000000UL

/* The heap of node k: its own 1 TiB window above libsdsm's. */
static inline uintptr_t shim_heap_base(unsigned int node)
{
	return SDSM_HEAP_BASE + ((uintptr_t)(node + 1) << 40);
}

/* struct shim_node.state */
enum {
	SHIM_NODE_NONE,
	SHIM_NODE_POSTED,	/* the launcher asked sdsmd */
	SHIM_NODE_STARTED,	/* sdsmd forked the worker */
	SHIM_NODE_READY,	/* the worker mapped the job */
	SHIM_NODE_FAILED,	/* could not start: err */
	SHIM_NODE_DONE,		/* the worker ended: status; output drained */
};

/* struct shim_ctl.state */
enum { SHIM_JOB_RUNNING, SHIM_JOB_ENDING };

/* struct shim_thread.state */
enum {
	SHIM_T_FREE,
	SHIM_T_NEW,		/* placed on node, not started yet */
	SHIM_T_RUNNING,
	SHIM_T_EXITED,		/* ret valid, waiting for a join */
	SHIM_T_CLAIMED,		/* taken by a creator filling it in */
};

struct shim_ring {
	uint64_t head;		/* written by the node's sdsmd */
	uint64_t tail;		/* written by the launcher */
	char data[SHIM_RING];
};

struct shim_node {
	uint32_t state;
	uint32_t wseq;		/* futex: wakes the worker's loop */
	int32_t err;		/* SHIM_NODE_FAILED: errno */
	int32_t status;		/* SHIM_NODE_DONE: wait status */
	int32_t pid;		/* the worker's pid on its node */
	uint32_t ncpus;		/* CPUs online there, set before READY */
	uint32_t pad[10];
	struct shim_ring out, err_ring;
};

/*
 * A thread of the job.  Its node's loop (the worker's, or the launcher's
 * service thread) starts it (SHIM_T_NEW) and sends it what other nodes ask
 * with pthread_kill() and pthread_cancel().
 */
struct shim_thread {
	uint32_t state;		/* futex */
	uint32_t node;
	uint32_t detached;
	uint32_t cancel;	/* pthread_cancel() asked, not yet done */
	uint64_t fn, arg, ret;
	uint64_t real;		/* its pthread_t on its node; 0 until it runs */
	uint64_t sigmask;	/* its creator's signal mask, signals 1..64 */
	uint64_t sigpend;	/* pthread_kill() signals not yet sent */
	uint64_t stack;		/* stack size asked (attr), 0: the default */
};

/*
 * A signal disposition the program set (sigaction(), signal()) on one
 * node: every node of the job sets it too (the same binary and libraries
 * at the same addresses, so the handler's address means the same).
 */
#define SHIM_NSIG		65

struct shim_sigact {
	uint64_t handler;	/* sa_handler or sa_sigaction */
	uint64_t mask;		/* sa_mask, signals 1..64 */
	uint32_t flags;		/* sa_flags */
	uint32_t set;		/* 1: published */
};

/*
 * Blocks of node k's heap that other nodes freed: a stack pushed with
 * compare-and-swap by any node, emptied whole (exchange with 0) by node k,
 * which gives them back to its heap.  Only whole-list take-outs, so no ABA.
 * A page of its own per node: pushes for node j do not take node k's list
 * page away from node k.  Each entry is the freed block itself: word 0 the
 * next entry, word 1 the bytes of an munmap() (0: a free()).
 */
struct shim_rfree {
	uint64_t head;
	uint64_t pad[511];
};

/*
 * One pthread barrier of the program that the cluster's barrier serves,
 * where the module does not name the serial arrival (no
 * SDSM_FEATURE_BARRIER_SERIAL; sdsm_shim_sync.c): @key is shim_key() of
 * the barrier, 0 when the slot is free; @arrivals counts its arrivals.
 */
struct shim_barrier_slot {
	uint64_t key;
	uint64_t arrivals;
};

/*
 * A thread-specific key of the job: @seq odd while it exists (bumped by
 * pthread_key_create and pthread_key_delete, as glibc's), @destr its
 * destructor's address, the same in every process of the job.
 */
struct shim_key {
	uint32_t seq;
	uint32_t pad;
	uint64_t destr;
};

/*
 * A call on a descriptor of the launcher made by a job thread on another
 * node (sdsm_fd.c): slot i of job thread i, a page of its own.  The thread
 * fills in @nr and @args, bumps @seq and waits until @done equals it; a
 * thread of the launcher (started when @server is 0 and the thread asked
 * for one in fd_want) makes the call with the same arguments, which point
 * into the job's memory (the same address on every node) or into @data,
 * and sets @ret and then @done.
 */
struct shim_fdcall {
	uint32_t seq;		/* futex: bumped by the thread that asks */
	uint32_t done;		/* futex: = seq once @ret is in */
	uint32_t server;	/* 1: a launcher thread serves this slot */
	uint32_t nr;		/* the system call */
	uint64_t args[6];
	int64_t ret;		/* what it returned, or -errno */
	uint32_t intr;		/* = seq: the asker wants that call ended */
	uint32_t pad;
	uint8_t data[4096 - 80];	/* what fits of the call's objects */
};

struct shim_ctl {
	uint32_t magic;
	uint32_t launcher;	/* node of main() */
	uint64_t nodemask;	/* nodes of the job */
	uint32_t state;		/* futex: SHIM_JOB_* */
	uint32_t event;		/* futex: wakes the launcher's service thread */
	uint32_t exit_req;	/* 0, or 0x100 | status of an exit() on a worker */
	uint32_t place_next;	/* round-robin: index of the next thread */
	uint32_t sig_gen;	/* bumped after a change of sigact[] */
	uint32_t consistency;	/* enum sdsm_consistency of P.g and P.h<k> */
	uint32_t key_tag;	/* shim_key(): this job's lock and barrier ids */
	uint32_t place_len;	/* entries of place[]: SDSM_PLACE, or 0 */
	uint8_t place[SHIM_PLACE_MAX];	/* node of thread k: place[k % len] */
	uint32_t fd_limit;	/* the launcher's soft RLIMIT_NOFILE */
	int32_t dev_fd;		/* the launcher's /dev/sdsm: never a worker's */
	int32_t launcher_pid;	/* getpid() of main()'s process */
	uint32_t heap_mb;	/* MiB of each P.h<k> (shim_heap_size()) */
	uint32_t stack_mb;	/* of a thread whose creator set no size */
	uint32_t pad;
	uint64_t proc_sigs;	/* signals kill()ed at the job by workers */
	uint64_t fd_want[SHIM_THREADS / 64];	/* slots that want a server */
	struct shim_sigact sigact[SHIM_NSIG];
	uint64_t globals_addr, globals_len;
	char prefix[SDSM_NAME_MAX];
	char exe[SHIM_PATH];
	char cwd[SHIM_PATH];
	uint32_t argv_len, env_len;	/* NUL-separated strings in blob */
	char blob[SHIM_BLOB];
	struct shim_thread threads[SHIM_THREADS];
	struct shim_node node[SDSM_MAX_NODES];
	struct shim_rfree rfree[SDSM_MAX_NODES] __attribute__((aligned(4096)));
	/* Release consistency only (sdsm_shim_sync.c): */
	struct sdsm_cond conds[SHIM_CONDS] __attribute__((aligned(4096)));
	struct shim_barrier_slot barriers[SHIM_BARRIERS];
	struct shim_key keys[SHIM_KEYS] __attribute__((aligned(4096)));
	struct shim_fdcall fdcalls[SHIM_THREADS] __attribute__((aligned(4096)));
};

/* Node @k's inbox, "sdsmd.<k>", into @buf of SDSM_NAME_MAX bytes. */
static inline void shim_inbox_name(char *buf, unsigned int k)
{
	snprintf(buf, SDSM_NAME_MAX, "sdsmd.%u", k);
}

struct shim_inbox {
	uint32_t seq;		/* futex: bumped by a launcher */
	uint32_t ack;		/* = seq once sdsmd took the job */
	char job[SDSM_NAME_MAX];
	uint32_t ncpus;		/* CPUs online on this node, set before ready */
};

/* Futex words 4-aligned; the control region far from the heaps. */
_Static_assert(sizeof(struct shim_thread) % 8 == 0, "shim_thread size");
_Static_assert(sizeof(struct shim_node) % 8 == 0, "shim_node size");
_Static_assert(sizeof(struct shim_rfree) == 4096, "shim_rfree size");
_Static_assert(sizeof(struct shim_fdcall) == 4096, "shim_fdcall size");
_Static_assert(SHIM_CTL_ADDR + sizeof(struct shim_ctl) < SDSM_HEAP_BASE,
	       "P.c overlaps libsdsm's heap");

/*
 * Create region @name of @len bytes, owned by this process's file
 * (SDSM_REGION_F_OWNED | SDSM_REGION_F_EXCL), and map it where the kernel
 * chooses.  The address, or NULL with sdsm_last_error() set.
 */
static inline void *shim_create_owned(const char *name, size_t len,
				      const struct sdsm_policy *pol)
{
	struct sdsm_region_create c;
	void *p;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = SDSM_REGION_F_EXCL | SDSM_REGION_F_OWNED;
	c.length = len;
	c.policy = *pol;
	snprintf(c.name, sizeof(c.name), "%s", name);
	if (sdsm_dev_ioctl(SDSM_IOC_REGION_CREATE, &c, SDSM_FEATURE_REGIONS,
			   "create a job region") < 0)
		return NULL;
	p = sdsm_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  sdsm_fd(), c.offset);
	if (p == MAP_FAILED) {
		sdsm_fail(errno, "mmap of region '%s': %s", name,
			  strerror(errno));
		return NULL;
	}
	return p;
}

/*
 * Node @k is lost to the job, as this node sees it (its sysfs state): not
 * "up" (nor "self").  A node stays "up" while its session waits for a
 * lost link, until it is declared down and its loss handled; then it is
 * "down" until the node of the lower id tries again, then "connecting"
 * for a while, and so on: a dead node's state alternates between the
 * two, and a job's nodes were all up when it started.  Safe in a signal
 * handler, and touches no memory of the job: not even environ (a
 * copy-relocated variable in the executable's globals, which may be a page
 * lost with a dead node), so the real sysfs path, not SDSM_SYSFS_ROOT.
 */
static inline bool shim_node_down(unsigned int k)
{
	char path[64], st[8];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/sdsm/nodes/%u/state", k);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, st, sizeof(st));
	close(fd);
	return n >= 3 && memcmp(st, "up\n", 3) && memcmp(st, "self", 4);
}

/* Fibonacci hashing: take the high bits of the product. */
static inline uint64_t shim_hash(uint64_t x)
{
	return x * 0x9e3779b97f4a7c15ULL;
}

/* sdsm_shim.c */
extern int sdsm_shim_role;		/* 0: none, 1: launcher, 2: worker */
extern struct shim_ctl *shim_job;
bool shim_job_mem(const void *p);

/*
 * sdsm_shim_sync.c, a job of release consistency.  shim_rc_handoff(true)
 * takes the job's hand-off lock (an acquire), (false) releases it (a
 * release); shim_rc_sync() does both.  No-ops in a sequential job.
 */
void shim_rc_handoff(bool take);
void shim_rc_sync(void);

/*
 * sdsm_futex_trap.c: futex(2) on the job's memory goes to sdsm; on a
 * worker (@fd_limit > 3), calls on the launcher's descriptors go to
 * sdsm_fd.c.
 */
int shim_futex_trap_init(uintptr_t globals_lo, uintptr_t globals_hi,
			 unsigned int fd_limit);
int shim_futex_op(uint32_t *addr, uint32_t op, uint32_t val,
		  int64_t timeout_ns);

/*
 * sdsm_fd.c.  shim_fd_call_nr(0 .. shim_fd_ncalls - 1): the calls trapped
 * on a worker when their first argument is one of the launcher's
 * descriptors; shim_fd_trap() performs one, with its six arguments, and
 * returns what the system call returns.  shim_fd_serve(): on the launcher,
 * start the threads that slots asked for.
 */
extern const unsigned int shim_fd_ncalls;
unsigned int shim_fd_call_nr(unsigned int j);
bool shim_fd_trapped(unsigned int nr);
void shim_fd_worker_init(void);
int shim_stderr(void);
long shim_fd_trap(unsigned int nr, const uint64_t args[6]);
long shim_fd_path_call(unsigned int nr, uint64_t args[6], int path1,
		       int path2, int obj, size_t obj_len);
/*
 * poll(2) and select(2) of a job thread on a worker (sdsm_paths.c): what
 * the call returns, or -errno, or SHIM_FD_HERE when it is this node's.
 */
#define SHIM_FD_HERE	LONG_MIN
long shim_fd_poll(struct pollfd *fds, nfds_t nfds,
		  const struct timespec *tmo, const sigset_t *mask);
long shim_fd_select(int nfds, fd_set *r, fd_set *w, fd_set *e,
		    struct timeval *tv, const struct timespec *ts,
		    const sigset_t *mask);
void shim_fd_serve(void);
/*
 * A handler the program set runs on this thread, with SA_RESTART or
 * without (sdsm_shim.c's trampoline): a passed-on call it interrupts
 * ends with EINTR if it had none, or if the call is a poll() or select().
 */
void shim_fd_handler_ran(bool restart);
/* sdsm_shim.c: the slot of this job thread, or -1; a thread of this
 * process only, detached, every signal blocked. */
int shim_thread_slot(void);
int shim_native_thread(void *(*fn)(void *), void *arg);

#endif /* SDSM_SHIM_H */
