// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Job mode (sdsmctl -N): glibc's own synchronization across nodes.
 *
 * glibc's mutexes, condition variables, barriers, rwlocks, semaphores and
 * pthread_once keep their algorithms in user space on atomics (coherent
 * through sdsm) and sleep and wake with futex(2).  The kernel's futex only
 * knows the waiters of its own node, so a futex(2) on job memory is
 * redirected: a seccomp filter traps (SECCOMP_RET_TRAP) every futex(2)
 * whose address lies in the job's memory (the window from the job's
 * control region to the last node's heap, and the executable's .data/.bss),
 * and the SIGSYS handler performs it with SDSM_IOC_FUTEX, which is managed
 * at the home of the word's page and loses no wake-up across nodes.  A
 * futex on any other address (libc's own data, the stacks of threads glibc
 * made) is not trapped and stays the kernel's.
 *
 * The handler answers with futex(2)'s return values and errors.  Errors
 * glibc treats as fatal that mean the word's memory is gone (its home node
 * is down, its page's data is lost or could not be brought here: EFAULT)
 * end the job with a message naming the nodes down and status 125 instead
 * of glibc's "unexpected error" abort.
 *
 * The same filter refuses vfork(2) and a clone(2) without CLONE_VM (a
 * process with a private copy of the job's memory) in every thread of the
 * job: the handler names the call and answers ENOSYS, as the job's fork()
 * does (sdsm_refuse.c).  A clone(2) that shares the memory (a thread, or a
 * sanitizer's tracer) is allowed; so is clone3(2), which keeps its flags
 * in memory, where a filter cannot look, and which glibc makes its threads
 * with.
 *
 * On a worker, the filter also traps the calls of sdsm_fd.c whose first
 * argument is one of the launcher's descriptors, and the handler passes
 * them on to the launcher there.
 *
 * PI futexes, FUTEX_WAKE_OP and the requeue-PI operations on job memory
 * fail with ENOSYS (the job's pthread_mutex_init() refuses robust and
 * PTHREAD_PRIO_INHERIT mutexes there first, sdsm_shim.c); FUTEX_REQUEUE and FUTEX_CMP_REQUEUE wake every waiter, which
 * futex(2)'s spurious wake-ups allow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "sdsm_shim.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP	1	/* si_code of a seccomp SIGSYS */
#endif
#ifndef EXPORT_SYM
#define EXPORT_SYM	__attribute__((visibility("default")))
#endif

void shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void shim_futex_lost(const void *addr, int err) __attribute__((noreturn));

/* futex(2) calls sent to sdsm (read by the host test). */
static unsigned long trap_count;

static int sdsm_backend(struct sdsm_futex *f)
{
	return ioctl(sdsm_fd(), SDSM_IOC_FUTEX, f) < 0 ? -errno : 0;
}

/* Performs a trapped futex: SDSM_IOC_FUTEX (the host test has its own). */
static int (*futex_backend)(struct sdsm_futex *f) = sdsm_backend;
static bool trap_on;

/*
 * SDSM_FUTEX_WAIT or SDSM_FUTEX_WAKE on @addr, @timeout_ns relative (-1:
 * none); safe in a signal handler (sdsm_fd.c waits in its SIGSYS).  The
 * threads woken, 0, or -errno.
 */
int shim_futex_op(uint32_t *addr, uint32_t op, uint32_t val,
		  int64_t timeout_ns)
{
	struct sdsm_futex f;
	int ret;

	sdsm_futex_req(&f, op, addr, val, timeout_ns);
	ret = futex_backend(&f);
	if (ret)
		return ret;
	return f.woken > INT_MAX ? INT_MAX : (int)f.woken;
}

/* futex(2) with the trapped registers; returns what the syscall returns. */
static long trap_futex(uint32_t *uaddr, int op, uint32_t val,
		       const struct timespec *ts, uint32_t val3)
{
	struct sdsm_futex f;
	int cmd = op & FUTEX_CMD_MASK, ret;

	sdsm_futex_req(&f, 0, uaddr, 0, -1);
	switch (cmd) {
	case FUTEX_WAIT_BITSET:
		f.bitset = val3;
		f.flags = SDSM_FUTEX_F_ABSTIME;
		if (op & FUTEX_CLOCK_REALTIME)
			f.clockid = CLOCK_REALTIME;
		/* fall through */
	case FUTEX_WAIT:
		if (cmd == FUTEX_WAIT && (op & FUTEX_CLOCK_REALTIME))
			return -ENOSYS;	/* as futex(2) */
		f.op = SDSM_FUTEX_WAIT;
		f.val = val;
		if (ts) {
			if (ts->tv_sec < 0 || ts->tv_nsec < 0 ||
			    ts->tv_nsec >= 1000000000L)
				return -EINVAL;
			if (ts->tv_sec > INT64_MAX / 1000000000LL - 1)
				f.timeout_ns = INT64_MAX;
			else
				f.timeout_ns = ts->tv_sec * 1000000000LL +
					       ts->tv_nsec;
		}
		break;
	case FUTEX_WAKE_BITSET:
		f.bitset = val3;
		/* fall through */
	case FUTEX_WAKE:
		f.op = SDSM_FUTEX_WAKE;
		f.val = val ? val : 1;	/* futex(2) wakes one for 0 */
		break;
	case FUTEX_CMP_REQUEUE:
		if (__atomic_load_n(uaddr, __ATOMIC_SEQ_CST) != val3)
			return -EAGAIN;
		/* fall through */
	case FUTEX_REQUEUE:
		f.op = SDSM_FUTEX_WAKE;
		f.val = INT_MAX;
		break;
	default:
		return -ENOSYS;
	}
	ret = futex_backend(&f);
	/* A WAKE's home did not answer in 2 * peer_timeout_ms + 1 s. */
	if (ret == -ETIMEDOUT && f.op == SDSM_FUTEX_WAKE)
		return -EHOSTDOWN;
	if (ret)
		return ret;
	return f.op == SDSM_FUTEX_WAKE ?
	       (f.woken > INT_MAX ? INT_MAX : (long)f.woken) : 0;
}

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	greg_t *r = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int saved = errno;
	long ret;

	(void)sig;
	/* The launcher ending a passed-on call its thread makes (sdsm_fd.c). */
	if (si->si_code == SI_QUEUE && si->si_pid == getpid() &&
	    si->si_value.sival_int == SHIM_SIG_INTR)
		return;
	if (si->si_code == SYS_SECCOMP &&
	    (si->si_syscall == SYS_vfork || si->si_syscall == SYS_clone)) {
		shim_say(SHIM_REFUSED_FMT, si->si_syscall == SYS_vfork ?
			 "vfork()" : "clone() without CLONE_VM");
		r[REG_RAX] = -ENOSYS;
		errno = saved;
		return;
	}
	if (si->si_code == SYS_SECCOMP && si->si_syscall != SYS_futex &&
	    shim_fd_trapped(si->si_syscall)) {
		uint64_t a[6] = { r[REG_RDI], r[REG_RSI], r[REG_RDX],
				  r[REG_R10], r[REG_R8], r[REG_R9] };

		r[REG_RAX] = shim_fd_trap(si->si_syscall, a);
		errno = saved;
		return;
	}
	if (si->si_code != SYS_SECCOMP || si->si_syscall != SYS_futex) {
		/* Not ours: what an untrapped SIGSYS would have done. */
		signal(SIGSYS, SIG_DFL);
		raise(SIGSYS);
		return;
	}
	__atomic_add_fetch(&trap_count, 1, __ATOMIC_RELAXED);
	ret = trap_futex((uint32_t *)r[REG_RDI], (int)r[REG_RSI],
			 (uint32_t)r[REG_RDX],
			 (const struct timespec *)r[REG_R10],
			 (uint32_t)r[REG_R9]);
	switch (ret) {
	case -EHOSTDOWN:
	case -EIO:
	case -EFAULT:	/* the word's page could not be brought here */
	case -ENOSPC:
	case -ENOMEM:
	case -ENOTCONN:
		shim_futex_lost((void *)r[REG_RDI], (int)-ret);
	}
	r[REG_RAX] = ret;
	errno = saved;
}

#define LOAD(field)	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
				 offsetof(struct seccomp_data, field))
#define ARG_LO(n)	(offsetof(struct seccomp_data, args[n]))
#define ARG_HI(n)	(offsetof(struct seccomp_data, args[n]) + 4)
#define FILTER_MAX	256

/*
 * The filter: trap vfork(2), clone(2) without CLONE_VM, and futex(2)
 * on [lo0, hi0) or [lo1, hi1) (64-bit bounds, compared as two 32-bit
 * halves); with @fd_hi > 3 (a worker), trap the calls of sdsm_fd.c
 * whose first argument, an int, is below @fd_hi; allow everything else.
 */
static int install_filter(uint64_t lo0, uint64_t hi0, uint64_t lo1,
			  uint64_t hi1, unsigned int fd_hi)
{
/*
 * 11 instructions: TRAP if lo <= arg0 < hi, else on to the next one.  A
 * jump offset counts from the next instruction.
 */
#define RANGE(lo, hi)							\
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(0)),			\
	BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)((lo) >> 32), 3, 0),	\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)((lo) >> 32), 0, 8), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),			\
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)(lo), 0, 6), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(0)),			\
	BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)((hi) >> 32), 4, 0), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)((hi) >> 32), 0, 2), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),			\
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)(hi), 1, 0), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP)
	static const struct sock_filter fd_check[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0 /* fd_hi */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	const struct sock_filter head[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_VM, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		/* futex(2): on to its ranges, else past them */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 23),
		RANGE(lo0, hi0),
		RANGE(lo1, hi1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
#undef RANGE
	unsigned int nfd = fd_hi > 3 ? shim_fd_ncalls : 0, n, j;
	struct sock_filter insns[FILTER_MAX];
	struct sock_fprog prog = { .filter = insns };

	_Static_assert(sizeof(head) / sizeof(head[0]) == 33, "jump over futex");
	if (nfd > 255 ||
	    33 + nfd + 1 + sizeof(fd_check) / sizeof(fd_check[0]) > FILTER_MAX)
		return -E2BIG;
	memcpy(insns, head, sizeof(head));
	n = sizeof(head) / sizeof(head[0]);
	/* Each call of the list jumps to fd_check, past the ALLOW after it. */
	for (j = 0; j < nfd; j++)
		insns[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ |
			BPF_K, shim_fd_call_nr(j), nfd - j, 0);
	insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						  SECCOMP_RET_ALLOW);
	if (nfd) {
		memcpy(insns + n, fd_check, sizeof(fd_check));
		insns[n + 1].k = fd_hi;
		n += sizeof(fd_check) / sizeof(fd_check[0]);
	}
	prog.len = n;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		return errno ? -errno : -ESRCH;
	return 0;
}

/* The SIGSYS handler, and SIGSYS (and SIGBUS) unblocked for good. */
static int install_handler(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	/*
	 * SA_NODEFER: a thread cancelled while it waits in here (glibc's
	 * cancellation handler unwinds out of this one) would otherwise keep
	 * SIGSYS blocked, and the first futex(2) of its clean-up would kill
	 * the process.  No SA_RESTART: a SIGSYS of seccomp comes instead of
	 * a system call, not during one, and the only other one handled is
	 * SHIM_SIG_INTR, which is meant to end the call it interrupts.
	 */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return -errno;
	__atomic_store_n(&trap_on, true, __ATOMIC_SEQ_CST);
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	sigaddset(&set, SIGBUS);
	return -pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * Redirect futex(2) on the job's memory to SDSM_IOC_FUTEX, in every thread
 * of this process (and every thread it makes later).  @glo/@ghi: the
 * executable's .data/.bss in sdsm memory, or 0/0.  @fd_limit: on a worker,
 * the launcher's fd_limit (its descriptors' calls go to sdsm_fd.c), else 0.
 */
int shim_futex_trap_init(uintptr_t glo, uintptr_t ghi, unsigned int fd_limit)
{
	int ret;

	ret = install_handler();
	if (!ret)
		ret = install_filter(SHIM_CTL_ADDR,
				     shim_heap_base(SDSM_MAX_NODES), glo, ghi,
				     fd_limit);
	if (ret)
		shim_say("cannot redirect futex(2) to sdsm (seccomp): %s",
			 strerror(-ret));
	return ret;
}

/*
 * A trapped futex(2) with SIGSYS blocked would kill the process (the
 * kernel forces the default action), and programs commonly block every
 * signal in all threads but one: once the trap is on, SIGSYS is never
 * blocked.  Nor is SIGBUS, for the same reason: a page lost with a node
 * that died raises it, and the job's handler must run to say so.
 */
static const sigset_t *keep_sigsys(int how, const sigset_t *set,
				   sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK ||
	    !__atomic_load_n(&trap_on, __ATOMIC_RELAXED) ||
	    (!sigismember(set, SIGSYS) && !sigismember(set, SIGBUS)))
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	sigdelset(copy, SIGBUS);
	return copy;
}

EXPORT_SYM int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*real)(int, const sigset_t *, sigset_t *);
	sigset_t copy;

	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_sigmask");
	return real(how, keep_sigsys(how, set, &copy), old);
}

EXPORT_SYM int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*real)(int, const sigset_t *, sigset_t *);
	sigset_t copy;

	if (!real)
		real = dlsym(RTLD_NEXT, "sigprocmask");
	return real(how, keep_sigsys(how, set, &copy), old);
}
