// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Job mode (sdsmctl -N): one table of descriptors, the launcher's.
 *
 * The threads of a process share its descriptors: main() opens a file and
 * any thread reads it.  In a job, the threads of the other nodes run in
 * worker processes, whose descriptors are their own.  So on a worker,
 * descriptors 0 to fd_limit - 1 (fd_limit: the launcher's soft
 * RLIMIT_NOFILE) stand for the launcher's.  sdsmd starts the worker with
 * 0 and 3 to fd_limit - 1 taken by an O_PATH descriptor of /dev/null (1
 * and 2 are its pipes to sdsmd), so the worker's own descriptors (its
 * libraries', /dev/sdsm) get numbers from fd_limit on; and the job's
 * seccomp filter (sdsm_futex_trap.c) traps every call of calls[] below
 * whose first argument is one of them.
 *
 * A trapped call goes to the launcher.  The job thread fills in its slot
 * of P.c (struct shim_fdcall), and a thread of the launcher, one per slot,
 * makes the same system call with the same arguments there.  Pointers into
 * the job's memory (heaps, stacks, globals: the same address on every
 * node) go as they are, so a read() lands in the caller's buffer through
 * sdsm; a buffer anywhere else (memory the program mapped at an address of
 * its own) goes through the slot's page.
 *
 * A job thread's output on descriptors 1 and 2 is thus written by the
 * launcher, in order with main()'s.  The calls on 1 and 2 of a thread
 * that is not the job's (the worker's own, at its end), or of a signal
 * handler during a call passed on, go to the worker's pipes to sdsmd,
 * which copies them into the job's rings.
 *
 * The calls of calls[] that cannot go this way (sockets', descriptors of
 * directories for *at() calls, ...) fail with EBADF, after one message
 * naming the call.  Calls whose descriptors are in an array (poll(2),
 * select(2)) are not trapped; sdsm_paths.c interposes the C library's and
 * makes them on the launcher when they wait on its descriptors.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sdsm_shim.h"

#define EXPORT		__attribute__((visibility("default")))

#define MS		1000000LL
#define KTERMIOS	36	/* the kernel's struct termios (TCGETS) */

void shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void shim_futex_lost(const void *addr, int err) __attribute__((noreturn));

enum fd_kind {
	FD_PLAIN,	/* no pointer */
	FD_BUF_OUT,	/* arg 1: a buffer of arg 2 bytes that the call fills */
	FD_BUF_IN,	/* arg 1: a buffer of arg 2 bytes that the call reads */
	FD_IOV,		/* arg 1: arg 2 struct iovec */
	FD_STAT,	/* arg 1: a struct stat that the call fills */
	FD_STATFS,	/* arg 1: a struct statfs that the call fills */
	FD_STATAT,	/* newfstatat(fd, "", st, AT_EMPTY_PATH): fstat */
	FD_STATX,	/* statx(fd, "", AT_EMPTY_PATH, mask, stx) */
	FD_FCNTL,
	FD_IOCTL,
	FD_DUP2,	/* arg 1: a descriptor that must be the launcher's too */
	FD_REFUSED,
};

static const struct fd_call {
	uint16_t nr;
	uint8_t kind;
	const char *name;
} calls[] = {
	{ SYS_read, FD_BUF_OUT, "read" },
	{ SYS_write, FD_BUF_IN, "write" },
	{ SYS_pread64, FD_BUF_OUT, "pread" },
	{ SYS_pwrite64, FD_BUF_IN, "pwrite" },
	{ SYS_readv, FD_IOV, "readv" },
	{ SYS_writev, FD_IOV, "writev" },
	{ SYS_preadv, FD_IOV, "preadv" },
	{ SYS_pwritev, FD_IOV, "pwritev" },
	{ SYS_preadv2, FD_IOV, "preadv2" },
	{ SYS_pwritev2, FD_IOV, "pwritev2" },
	{ SYS_getdents64, FD_BUF_OUT, "getdents64" },
	{ SYS_close, FD_PLAIN, "close" },
	{ SYS_lseek, FD_PLAIN, "lseek" },
	{ SYS_fsync, FD_PLAIN, "fsync" },
	{ SYS_fdatasync, FD_PLAIN, "fdatasync" },
	{ SYS_syncfs, FD_PLAIN, "syncfs" },
	{ SYS_sync_file_range, FD_PLAIN, "sync_file_range" },
	{ SYS_ftruncate, FD_PLAIN, "ftruncate" },
	{ SYS_fallocate, FD_PLAIN, "fallocate" },
	{ SYS_fadvise64, FD_PLAIN, "posix_fadvise" },
	{ SYS_readahead, FD_PLAIN, "readahead" },
	{ SYS_flock, FD_PLAIN, "flock" },
	{ SYS_fchmod, FD_PLAIN, "fchmod" },
	{ SYS_fchown, FD_PLAIN, "fchown" },
	{ SYS_dup, FD_PLAIN, "dup" },
	{ SYS_dup2, FD_DUP2, "dup2" },
	{ SYS_dup3, FD_DUP2, "dup3" },
	{ SYS_fstat, FD_STAT, "fstat" },
	{ SYS_fstatfs, FD_STATFS, "fstatfs" },
	{ SYS_newfstatat, FD_STATAT, "fstatat" },
	{ SYS_statx, FD_STATX, "statx" },
	{ SYS_fcntl, FD_FCNTL, "fcntl" },
	{ SYS_ioctl, FD_IOCTL, "ioctl" },
	/* Refused, named. */
	{ SYS_close_range, FD_REFUSED, "close_range" },
	{ SYS_sendfile, FD_REFUSED, "sendfile" },
	{ SYS_splice, FD_REFUSED, "splice" },
	{ SYS_tee, FD_REFUSED, "tee" },
	{ SYS_vmsplice, FD_REFUSED, "vmsplice" },
	{ SYS_copy_file_range, FD_REFUSED, "copy_file_range" },
	{ SYS_fchdir, FD_REFUSED, "fchdir" },
	{ SYS_openat, FD_REFUSED, "openat" },
	{ SYS_openat2, FD_REFUSED, "openat2" },
	{ SYS_mkdirat, FD_REFUSED, "mkdirat" },
	{ SYS_mknodat, FD_REFUSED, "mknodat" },
	{ SYS_fchownat, FD_REFUSED, "fchownat" },
	{ SYS_futimesat, FD_REFUSED, "futimesat" },
	{ SYS_utimensat, FD_REFUSED, "utimensat" },
	{ SYS_unlinkat, FD_REFUSED, "unlinkat" },
	{ SYS_renameat, FD_REFUSED, "renameat" },
	{ SYS_renameat2, FD_REFUSED, "renameat2" },
	{ SYS_linkat, FD_REFUSED, "linkat" },
	{ SYS_readlinkat, FD_REFUSED, "readlinkat" },
	{ SYS_fchmodat, FD_REFUSED, "fchmodat" },
	{ SYS_faccessat, FD_REFUSED, "faccessat" },
	{ SYS_faccessat2, FD_REFUSED, "faccessat2" },
	{ SYS_name_to_handle_at, FD_REFUSED, "name_to_handle_at" },
	{ SYS_execveat, FD_REFUSED, "execveat" },
	{ SYS_fgetxattr, FD_REFUSED, "fgetxattr" },
	{ SYS_fsetxattr, FD_REFUSED, "fsetxattr" },
	{ SYS_flistxattr, FD_REFUSED, "flistxattr" },
	{ SYS_fremovexattr, FD_REFUSED, "fremovexattr" },
	{ SYS_connect, FD_REFUSED, "connect" },
	{ SYS_accept, FD_REFUSED, "accept" },
	{ SYS_accept4, FD_REFUSED, "accept4" },
	{ SYS_bind, FD_REFUSED, "bind" },
	{ SYS_listen, FD_REFUSED, "listen" },
	{ SYS_sendto, FD_REFUSED, "send" },
	{ SYS_recvfrom, FD_REFUSED, "recv" },
	{ SYS_sendmsg, FD_REFUSED, "sendmsg" },
	{ SYS_recvmsg, FD_REFUSED, "recvmsg" },
	{ SYS_sendmmsg, FD_REFUSED, "sendmmsg" },
	{ SYS_recvmmsg, FD_REFUSED, "recvmmsg" },
	{ SYS_shutdown, FD_REFUSED, "shutdown" },
	{ SYS_getsockname, FD_REFUSED, "getsockname" },
	{ SYS_getpeername, FD_REFUSED, "getpeername" },
	{ SYS_getsockopt, FD_REFUSED, "getsockopt" },
	{ SYS_setsockopt, FD_REFUSED, "setsockopt" },
	{ SYS_epoll_ctl, FD_REFUSED, "epoll_ctl" },
	{ SYS_epoll_wait, FD_REFUSED, "epoll_wait" },
	{ SYS_epoll_pwait, FD_REFUSED, "epoll_pwait" },
	{ SYS_inotify_add_watch, FD_REFUSED, "inotify_add_watch" },
	{ SYS_inotify_rm_watch, FD_REFUSED, "inotify_rm_watch" },
	{ SYS_timerfd_settime, FD_REFUSED, "timerfd_settime" },
	{ SYS_timerfd_gettime, FD_REFUSED, "timerfd_gettime" },
};

#define NCALLS	(sizeof(calls) / sizeof(calls[0]))

const unsigned int shim_fd_ncalls = NCALLS;

unsigned int shim_fd_call_nr(unsigned int j)
{
	return j < NCALLS ? calls[j].nr : ~0U;
}

static const struct fd_call *find(unsigned int nr)
{
	unsigned int j;

	for (j = 0; j < NCALLS; j++)
		if (calls[j].nr == nr)
			return &calls[j];
	return NULL;
}

bool shim_fd_trapped(unsigned int nr)
{
	return find(nr) != NULL;
}

/* Makes a call on the launcher (the host test has its own). */
static long fd_exec_sys(unsigned int nr, const uint64_t *a)
{
	long ret = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);

	return ret < 0 ? -errno : ret;
}

static long (*fd_exec)(unsigned int nr, const uint64_t *a) = fd_exec_sys;

/* [a, a + len) is the job's memory: the same bytes on every node. */
static bool job_range(uint64_t a, uint64_t len)
{
	uint64_t glo = shim_job->globals_addr;

	if (!len)
		return true;
	if (a + len < a)
		return false;
	return (a >= SHIM_CTL_ADDR &&
		a + len <= shim_heap_base(SDSM_MAX_NODES)) ||
	       (a >= glo && a + len <= glo + shim_job->globals_len);
}

/* Whether @fd stands for a launcher's descriptor on this worker. */
static bool launcher_fd(uint64_t fd)
{
	return (uint32_t)fd < shim_job->fd_limit;
}

/* The worker's own standard output and error, above fd_limit. */
static int own_out = 1, own_err = 2;

/* On a worker, before the filter: keep its own descriptors 1 and 2. */
void shim_fd_worker_init(void)
{
	int out = fcntl(1, F_DUPFD_CLOEXEC, shim_job->fd_limit);
	int err = fcntl(2, F_DUPFD_CLOEXEC, shim_job->fd_limit);

	if (out >= 0)
		own_out = out;
	if (err >= 0)
		own_err = err;
}

/* Where the preload's own messages go: this process's standard error. */
int shim_stderr(void)
{
	return own_err;
}

/*
 * The calls that take descriptors in an array, which the filter cannot
 * see: sdsm_paths.c interposes the C library's and comes to
 * shim_fd_poll() and shim_fd_select().
 */
static const struct fd_call waits[] = {
	{ SYS_ppoll, FD_REFUSED, "poll" },
	{ SYS_pselect6, FD_REFUSED, "select" },
};

#define NWAITS	(sizeof(waits) / sizeof(waits[0]))

/* One message per call, then EBADF (or @err). */
static long refuse(const struct fd_call *c, int fd, const char *why, int err)
{
	static uint8_t said[NCALLS + NWAITS];
	unsigned int j = c >= waits && c < waits + NWAITS ?
			 NCALLS + (c - waits) : (unsigned int)(c - calls);
	int slot = shim_thread_slot();

	if (!__atomic_exchange_n(&said[j], 1, __ATOMIC_RELAXED))
		shim_say("%s() on descriptor %d from a thread on node %d is not supported in a job over several nodes (sdsmctl -N): %s",
			 c->name, fd,
			 slot >= 0 ? (int)shim_job->threads[slot].node : -1,
			 why);
	return -err;
}

/* Slot @slot wants the launcher's service thread (shim_fd_serve()). */
static void wake_service(unsigned int slot)
{
	__atomic_fetch_or(&shim_job->fd_want[slot / 64], 1ULL << (slot % 64),
			  __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&shim_job->event, 1, __ATOMIC_SEQ_CST);
	shim_futex_op(&shim_job->event, SDSM_FUTEX_WAKE, 1, -1);
}

/* A slot with no server yet asks the launcher's service thread for one. */
static void want_server(struct shim_fdcall *s, unsigned int slot)
{
	if (!__atomic_load_n(&s->server, __ATOMIC_ACQUIRE))
		wake_service(slot);
}

/*
 * Ask the launcher to end the slot's call @seq with EINTR: its thread
 * serving the slot gets a SIGSYS (SHIM_SIG_INTR), which ends a blocking
 * system call as a signal with a handler would (shim_fd_serve()).
 */
static void want_intr(struct shim_fdcall *s, unsigned int slot, uint32_t seq)
{
	__atomic_store_n(&s->intr, seq, __ATOMIC_RELEASE);
	wake_service(slot);
}

/* want_intr() for the slot's last call if it still runs; its number. */
static uint32_t end_running(struct shim_fdcall *s, unsigned int slot)
{
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) != seq)
		want_intr(s, slot, seq);
	return seq;
}

/*
 * The handlers the program set that ran on this thread since its last
 * call was posted (post_call()), told by sdsm_shim.c's trampoline
 * (shim_fd_handler_ran()): one with SA_RESTART (RAN_RESTART), one
 * without (RAN_NO_RESTART).  Written by a handler, read by the thread.
 */
#define RAN_RESTART	1U
#define RAN_NO_RESTART	2U
static __thread unsigned int handlers_ran;

void shim_fd_handler_ran(bool restart)
{
	__atomic_or_fetch(&handlers_ran, restart ? RAN_RESTART : RAN_NO_RESTART,
			  __ATOMIC_RELAXED);
}

/*
 * Whether a handler that ran since the call was posted ends it: any
 * handler if @signal_ends (poll() and select(), which the kernel never
 * restarts after a handler), else one without SA_RESTART.  So the kernel
 * ends a blocking call natively once it began, and it began when it was
 * posted: a handler that ran before the thread's wait, where no EINTR
 * tells of it (on the way back from the wake of the slot's server, or
 * from a fault on the slot's page), ends it too.
 */
static bool handler_ends(bool signal_ends)
{
	return __atomic_load_n(&handlers_ran, __ATOMIC_RELAXED) &
	       (signal_ends ? RAN_RESTART | RAN_NO_RESTART : RAN_NO_RESTART);
}

/*
 * Until the slot's call @seq is answered, or ended early for a handler
 * that ran (handler_ends(); a handler of a signal the shim does not
 * share that interrupts the wait ends it if @signal_ends).  An interrupt
 * asked for is asked again every 200 ms: its signal may have come
 * between two calls of the server.
 */
static void wait_done(struct shim_fdcall *s, unsigned int slot, uint32_t seq,
		      bool signal_ends)
{
	uint32_t d;
	bool intr;
	int ret;

	while ((d = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) != seq) {
		intr = __atomic_load_n(&s->intr, __ATOMIC_ACQUIRE) == seq;
		if (!intr && handler_ends(signal_ends)) {
			want_intr(s, slot, seq);
			intr = true;
		}
		ret = shim_futex_op(&s->done, SDSM_FUTEX_WAIT, d,
				    (intr ? 200 : 1000) * MS);
		if (ret && ret != -ETIMEDOUT && ret != -EAGAIN &&
		    ret != -EINTR)
			shim_futex_lost(&s->done, -ret);
		if ((ret == -EINTR && signal_ends) ||
		    (ret == -ETIMEDOUT && intr))
			want_intr(s, slot, seq);
		/* The launcher could not start its server yet. */
		else if (ret == -ETIMEDOUT)
			want_server(s, slot);
	}
}

/*
 * The frame of this thread's call in progress (shim_fd_trap(),
 * shim_fd_path_call()): a call from a frame below it, or on the thread's
 * alternate signal stack, is a signal handler's that interrupted it
 * (nested()); one from above it comes after a cancellation unwound it.
 */
static __thread uintptr_t call_frame;

/*
 * This thread leaves its call in progress unanswered: a cancellation
 * unwinds it, or a signal handler that interrupted it leaves by
 * longjmp().  Natively the call ended there, so the launcher is asked to
 * end it now (the slot's next call makes sure it did: call_enter()), and
 * the thread's later calls are its own, not nested in it, however deep
 * their frames (a clean-up handler's printf() is deeper than read()).
 */
static void leave_call(void)
{
	int slot = shim_thread_slot();

	if (call_frame && slot >= 0)
		end_running(&shim_job->fdcalls[slot], slot);
	call_frame = 0;
}

static void call_left(void *arg)
{
	(void)arg;
	leave_call();
}

/* wait_done() for this thread's own call, which a cancellation leaves. */
static void wait_call(struct shim_fdcall *s, unsigned int slot, uint32_t seq,
		      bool signal_ends)
{
	pthread_cleanup_push(call_left, NULL);
	wait_done(s, slot, seq, signal_ends);
	pthread_cleanup_pop(0);
}

/*
 * Whether a call from frame @here interrupted one of this thread's own: a
 * frame below the call's, or any on the thread's alternate signal stack
 * (a handler's with SA_ONSTACK, wherever that stack lies; only a
 * handler's code runs there).
 */
static bool nested(uintptr_t here)
{
	stack_t ss;

	if (!call_frame)
		return false;
	if (here < call_frame)
		return true;
	return !sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK);
}

/*
 * Enter a call of this thread from frame @here: -EINTR for a signal
 * handler's during one of the thread's own (whose arguments and data
 * are in the slot), else 0 once a call of the slot that may still run
 * (a thread cancelled while it waited) has returned.
 */
static int call_enter(unsigned int slot, uintptr_t here)
{
	static bool said;
	struct shim_fdcall *s = &shim_job->fdcalls[slot];
	uint32_t seq;

	if (nested(here)) {
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			shim_say("a call on the launcher's descriptors from a signal handler that interrupted another one returns EINTR (sdsmctl -N)");
		return -EINTR;
	}
	call_frame = here;
	/*
	 * A call of the slot still running was left by its thread (a
	 * cancellation, or a longjmp() out of a signal handler): natively
	 * it would have ended there, so it is ended now (if leave_call()'s
	 * interrupt was lost) and waited for.
	 */
	seq = end_running(s, slot);
	wait_done(s, slot, seq, false);
	return 0;
}

/*
 * Call @nr with @a on the launcher, through slot @slot.  Under release
 * consistency the buffers are the job's release-consistent memory: the
 * thread releases what it wrote before the call and acquires what the
 * call wrote after it, and the launcher's server does the converse.
 * @signal_ends: as wait_done()'s.
 */
static long post_call(unsigned int slot, unsigned int nr, const uint64_t a[6],
		      bool signal_ends)
{
	struct shim_fdcall *s = &shim_job->fdcalls[slot];
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	long ret;

	__atomic_store_n(&handlers_ran, 0, __ATOMIC_RELAXED);
	shim_rc_sync();
	s->nr = nr;
	memcpy(s->args, a, sizeof(s->args));
	__atomic_store_n(&s->seq, ++seq, __ATOMIC_RELEASE);
	shim_futex_op(&s->seq, SDSM_FUTEX_WAKE, 1, -1);
	want_server(s, slot);
	wait_call(s, slot, seq, signal_ends);
	ret = s->ret;
	shim_rc_sync();
	return ret;
}

static long post(unsigned int slot, unsigned int nr, const uint64_t a[6])
{
	return post_call(slot, nr, a, false);
}

/* An object a call takes by pointer: argument @arg, @len bytes. */
struct fd_obj {
	int arg;
	size_t len;
	bool in;	/* the call reads it */
	bool out;	/* the call writes it */
};

/*
 * Whether @len bytes from @off on fit in slot @s's page.  What fits goes
 * through it even when it is in the job's memory: the page the call's
 * arguments travel in carries it, where the object's own page would move
 * to the launcher and back, two more faults a call (each line a thread
 * prints with stdio is a write(), each fstat() a struct stat).  What does
 * not fit goes as it is if it is in the job's memory.
 */
static bool slot_fits(const struct shim_fdcall *s, size_t off, uint64_t len)
{
	return len <= sizeof(s->data) && off <= sizeof(s->data) - len;
}

/*
 * A call whose arguments point to objects @o[0 .. @n - 1] (@n <= 6): each
 * through the slot's page from @off on if it fits (slot_fits()), else as
 * it is if it is in the job's memory, else -EFAULT.  @signal_ends: as
 * wait_done()'s.
 */
static long post_objs(unsigned int slot, unsigned int nr, uint64_t a[6],
		      const struct fd_obj *o, int n, size_t off,
		      bool signal_ends)
{
	struct shim_fdcall *s = &shim_job->fdcalls[slot];
	void *user[6] = { NULL };
	size_t at[6];
	long ret;
	int i;

	for (i = 0; i < n; i++) {
		user[i] = (void *)(uintptr_t)a[o[i].arg];
		if (!user[i])
			continue;
		if (!slot_fits(s, off, o[i].len)) {
			user[i] = NULL;
			if (job_range(a[o[i].arg], o[i].len))
				continue;
			return -EFAULT;
		}
		at[i] = off;
		off = (off + o[i].len + 7) & ~7UL;
		/* The slot is this thread's: no call of another thread uses it. */
		if (o[i].in)
			memcpy(s->data + at[i], user[i], o[i].len);
		a[o[i].arg] = (uintptr_t)(s->data + at[i]);
	}
	ret = post_call(slot, nr, a, signal_ends);
	for (i = 0; i < n; i++)
		if (user[i] && o[i].out && ret >= 0)
			memcpy(user[i], s->data + at[i], o[i].len);
	return ret;
}

/* One object (post_objs()). */
static long post_obj(unsigned int slot, unsigned int nr, uint64_t a[6],
		     int arg, size_t len, bool in, bool out, size_t off)
{
	const struct fd_obj o = { arg, len, in, out };

	return post_objs(slot, nr, a, &o, 1, off, false);
}

/*
 * Whether a buffer of @len bytes at @addr goes as it is: none, or one
 * that does not fit in the slot's page and is in the job's memory
 * (slot_fits()).  Others go through the page, a page's worth at a time.
 */
static bool buf_direct(const struct shim_fdcall *s, uint64_t addr,
		       uint64_t len)
{
	return !len || (!slot_fits(s, 0, len) && job_range(addr, len));
}

/* read(2) and its kind into a buffer elsewhere: at most a page at once. */
static long buf_out(unsigned int slot, unsigned int nr, uint64_t a[6])
{
	struct shim_fdcall *s = &shim_job->fdcalls[slot];
	void *user = (void *)(uintptr_t)a[1];
	long ret;

	if (buf_direct(s, a[1], a[2]))
		return post(slot, nr, a);
	if (a[2] > sizeof(s->data))
		a[2] = sizeof(s->data);	/* a short read */
	a[1] = (uintptr_t)s->data;
	ret = post(slot, nr, a);
	if (ret > 0)
		memcpy(user, s->data, ret);
	return ret;
}

/* write(2) and pwrite(2) from a buffer elsewhere: a page at a time. */
static long buf_in(unsigned int slot, unsigned int nr, uint64_t a[6])
{
	struct shim_fdcall *s = &shim_job->fdcalls[slot];
	const char *user = (const char *)(uintptr_t)a[1];
	uint64_t len = a[2], off = a[3], done = 0, n;
	long ret;

	if (buf_direct(s, a[1], a[2]))
		return post(slot, nr, a);
	while (done < len) {
		n = len - done;
		if (n > sizeof(s->data))
			n = sizeof(s->data);
		memcpy(s->data, user + done, n);
		a[1] = (uintptr_t)s->data;
		a[2] = n;
		a[3] = off + done;	/* pwrite's offset */
		ret = post(slot, nr, a);
		if (ret < 0)
			return done ? (long)done : ret;
		done += ret;
		if ((uint64_t)ret < n)
			break;
	}
	return done;
}

static long iov(const struct fd_call *c, unsigned int slot, uint64_t a[6])
{
	const struct iovec *v = (const struct iovec *)(uintptr_t)a[1];
	uint64_t i;

	if (a[2] > IOV_MAX)
		return -EINVAL;
	if (!job_range(a[1], a[2] * sizeof(*v)))
		return refuse(c, (int)a[0], "its iovec is outside the job's memory",
			      EFAULT);
	for (i = 0; i < a[2]; i++)
		if (!job_range((uintptr_t)v[i].iov_base, v[i].iov_len))
			return refuse(c, (int)a[0],
				      "a buffer is outside the job's memory",
				      EFAULT);
	return post(slot, c->nr, a);
}

static long fcntl_call(const struct fd_call *c, unsigned int slot,
		       uint64_t a[6])
{
	switch ((int)a[1]) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
	case F_GETFD:
	case F_SETFD:
	case F_GETFL:
	case F_SETFL:
	case F_GETPIPE_SZ:
	case F_SETPIPE_SZ:
	case F_ADD_SEALS:
	case F_GET_SEALS:
		return post(slot, c->nr, a);
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return post_obj(slot, c->nr, a, 2, sizeof(struct flock), true,
				true, 0);
	}
	return refuse(c, (int)a[0], "this command is not passed on to the launcher",
		      EINVAL);
}

static long ioctl_call(const struct fd_call *c, unsigned int slot,
		       uint64_t a[6])
{
	switch ((unsigned int)a[1]) {
	case FIOCLEX:
	case FIONCLEX:
		return post(slot, c->nr, a);
	case TCGETS:
		return post_obj(slot, c->nr, a, 2, KTERMIOS, false, true, 0);
	case TIOCGWINSZ:
		return post_obj(slot, c->nr, a, 2, sizeof(struct winsize),
				false, true, 0);
	case FIONREAD:
		return post_obj(slot, c->nr, a, 2, sizeof(int), false, true,
				0);
	case FIONBIO:
		return post_obj(slot, c->nr, a, 2, sizeof(int), true, false,
				0);
	}
	return refuse(c, (int)a[0], "this request is not passed on to the launcher",
		      ENOTTY);
}

static long fd_call(const struct fd_call *c, unsigned int slot,
		    uint64_t a[6])
{
	unsigned int nr = c->nr;
	const char *path;

	switch (c->kind) {
	case FD_PLAIN:
		return post(slot, nr, a);
	case FD_BUF_OUT:
		return buf_out(slot, nr, a);
	case FD_BUF_IN:
		return buf_in(slot, nr, a);
	case FD_IOV:
		return iov(c, slot, a);
	case FD_STAT:
		return post_obj(slot, nr, a, 1, sizeof(struct stat), false,
				true, 0);
	case FD_STATFS:
		return post_obj(slot, nr, a, 1, sizeof(struct statfs), false,
				true, 0);
	case FD_STATAT:
		path = (const char *)(uintptr_t)a[1];
		if (!path || *path || !(a[3] & AT_EMPTY_PATH))
			break;
		a[1] = a[2];	/* fstat(fd, st) */
		return post_obj(slot, SYS_fstat, a, 1, sizeof(struct stat),
				false, true, 0);
	case FD_STATX:
		path = (const char *)(uintptr_t)a[1];
		if (!path || *path || !(a[2] & AT_EMPTY_PATH))
			break;
		shim_job->fdcalls[slot].data[0] = 0;
		a[1] = (uintptr_t)shim_job->fdcalls[slot].data;
		return post_obj(slot, nr, a, 4, sizeof(struct statx), false,
				true, 64);
	case FD_FCNTL:
		return fcntl_call(c, slot, a);
	case FD_IOCTL:
		return ioctl_call(c, slot, a);
	case FD_DUP2:
		if (!launcher_fd(a[1]))
			return refuse(c, (int)a[0],
				      "the new descriptor would not be the launcher's",
				      EBADF);
		return post(slot, nr, a);
	}
	return refuse(c, (int)a[0], "descriptors are the launcher's", EBADF);
}

/* The SIGSYS handler's: a call on a descriptor of the launcher. */
long shim_fd_trap(unsigned int nr, const uint64_t args[6])
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	const struct fd_call *c = find(nr);
	int slot = shim_thread_slot();
	uint64_t a[6];
	long ret;

	if (!c)
		return -ENOSYS;
	memcpy(a, args, sizeof(a));
	if ((a[0] == 1 || a[0] == 2) &&
	    (slot < 0 || nested(here))) {
		/* Not through the slot: the worker's own pipe to sdsmd. */
		a[0] = a[0] == 1 ? own_out : own_err;
		return fd_exec_sys(nr, a);
	}
	if (slot < 0)
		return refuse(c, (int)a[0], "not a thread of the job", EBADF);
	if ((int32_t)a[0] == shim_job->dev_fd)
		return refuse(c, (int)a[0], "that is the launcher's /dev/sdsm",
			      EBADF);
	ret = call_enter(slot, here);
	if (ret)
		return ret;
	ret = fd_call(c, slot, a);
	call_frame = 0;
	return ret;
}

/*
 * A call that names a path (sdsm_paths.c), made on the launcher: @nr with
 * @a, whose arguments @p1 and @p2 (or -1) are paths, copied into the
 * slot's page (one of over 1,536 bytes with its NUL in the job's memory
 * goes as it is), and whose argument @obj (or -1) is an object of
 * @obj_len bytes that the call fills.  What the system call returns, or
 * -errno.
 */
long shim_fd_path_call(unsigned int nr, uint64_t a[6], int p1, int p2,
		       int obj, size_t obj_len)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	int slot = shim_thread_slot(), p[2] = { p1, p2 }, i;
	struct shim_fdcall *s;
	size_t len;
	long ret;

	if (slot < 0)
		return -EBADF;
	ret = call_enter(slot, here);
	if (ret)
		return ret;
	s = &shim_job->fdcalls[slot];
	for (i = 0; i < 2; i++) {
		const char *path = (const char *)(uintptr_t)a[p[i]];

		if (p[i] < 0 || !path)
			continue;
		len = strnlen(path, PATH_MAX) + 1;
		if (len > PATH_MAX) {
			ret = -ENAMETOOLONG;
			goto out;
		}
		/*
		 * Paths in the first 3 KiB, objects after; a longer path
		 * in the job's memory goes as it is (slot_fits()).
		 */
		if (len > 1536) {
			if (job_range(a[p[i]], len))
				continue;
			ret = -ENAMETOOLONG;
			goto out;
		}
		memcpy(s->data + 1536 * i, path, len);
		a[p[i]] = (uintptr_t)(s->data + 1536 * i);
	}
	if (obj < 0)
		ret = post(slot, nr, a);
	else
		ret = post_obj(slot, nr, a, obj, obj_len, false, true, 3072);
out:
	call_frame = 0;
	return ret;
}

/* ---- longjmp(3) out of a signal handler ---- */

/*
 * A longjmp() from below the frame of this thread's call in progress is
 * a signal handler's that interrupted the call: it leaves the call
 * (leave_call()).  A handler that jumps within itself leaves it too:
 * the call then returns EINTR, or what it had done.  The C library's
 * functions are found before main() (a handler cannot call dlsym()).
 * glibc's longjmp, _longjmp and siglongjmp are one function (the mask
 * is restored if sigsetjmp() saved it); __longjmp_chk is
 * _FORTIFY_SOURCE's.
 */
typedef void jump_fn(void *env, int val);

static jump_fn *real_longjmp, *real_longjmp_chk;

static __attribute__((constructor)) void find_jumps(void)
{
	real_longjmp = (jump_fn *)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (jump_fn *)dlsym(RTLD_NEXT, "__longjmp_chk");
}

static __attribute__((noreturn)) void jump(jump_fn *f, void *env, int val)
{
	if (nested((uintptr_t)__builtin_frame_address(0)))
		leave_call();
	if (!f)
		abort();
	f(env, val);
	__builtin_unreachable();
}

/* Under their C library names, whatever <setjmp.h> makes of those. */
EXPORT __attribute__((noreturn)) void shim_siglongjmp(void *env, int val)
	__asm__("siglongjmp");
EXPORT __attribute__((noreturn)) void shim_longjmp(void *env, int val)
	__asm__("longjmp") __attribute__((alias("siglongjmp")));
EXPORT __attribute__((noreturn)) void shim__longjmp(void *env, int val)
	__asm__("_longjmp") __attribute__((alias("siglongjmp")));
EXPORT __attribute__((noreturn)) void shim_longjmp_chk(void *env, int val)
	__asm__("__longjmp_chk");

void shim_siglongjmp(void *env, int val)
{
	jump(real_longjmp, env, val);
}

void shim_longjmp_chk(void *env, int val)
{
	jump(real_longjmp_chk ? real_longjmp_chk : real_longjmp, env, val);
}

/* ---- poll(2) and select(2): descriptors in an array ---- */

/*
 * Count descriptor @fd of a wait: the last of the launcher's in @theirs
 * (the launcher's /dev/sdsm, once seen, stays there to be refused), the
 * last of this worker's own in @ours.
 */
static void sort_fd(int fd, int *theirs, int *ours)
{
	if (!launcher_fd(fd))
		*ours = fd;
	else if (*theirs != shim_job->dev_fd)
		*theirs = fd;
}

/*
 * Whether a wait on descriptors @theirs (a launcher's, or -1) and @ours
 * (this worker's own, or -1) is made here (SHIM_FD_HERE), refused, or
 * entered on the launcher (0).
 */
static long wait_enter(const struct fd_call *c, int theirs, int ours,
		       unsigned int *slot, uintptr_t here)
{
	int k = shim_thread_slot();

	if (theirs < 0 || k < 0)
		return SHIM_FD_HERE;
	if (ours >= 0)
		return refuse(c, theirs,
			      "it waits on descriptors of the launcher and of this node at once",
			      EINVAL);
	if (theirs == shim_job->dev_fd)
		return refuse(c, theirs, "that is the launcher's /dev/sdsm",
			      EBADF);
	*slot = k;
	return call_enter(k, here);
}

/*
 * Post a wait whose signal mask @mask (or NULL) holds on this node while
 * it waits: the launcher's thread makes the call with its own.
 */
static long post_wait(unsigned int slot, unsigned int nr, uint64_t a[6],
		      const struct fd_obj *o, int n, const sigset_t *mask)
{
	sigset_t old;
	long ret;

	if (mask && pthread_sigmask(SIG_SETMASK, mask, &old))
		mask = NULL;
	ret = post_objs(slot, nr, a, o, n, 0, true);
	if (mask)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/*
 * ppoll(2) of a job thread on a worker (poll() too, @tmo its timeout or
 * NULL): made on the launcher if the descriptors are its, refused if
 * they are both its and this node's, else SHIM_FD_HERE.
 */
long shim_fd_poll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		  const sigset_t *mask)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	int theirs = -1, ours = -1;
	struct timespec t;
	unsigned int slot;
	uint64_t a[6];
	nfds_t i;
	long ret;

	if (n > shim_job->fd_limit)
		return SHIM_FD_HERE;	/* EINVAL, as the kernel says */
	for (i = 0; i < n; i++)
		if (fds[i].fd >= 0)
			sort_fd(fds[i].fd, &theirs, &ours);
	ret = wait_enter(&waits[0], theirs, ours, &slot, here);
	if (ret)
		return ret;
	/* The kernel writes the time left back: into a copy. */
	if (tmo)
		t = *tmo;
	a[0] = (uintptr_t)fds;
	a[1] = n;
	a[2] = tmo ? (uintptr_t)&t : 0;
	a[3] = 0;
	a[4] = _NSIG / 8;	/* the kernel's sigset_t */
	a[5] = 0;
	{
		const struct fd_obj o[] = {
			{ 0, n * sizeof(*fds), true, true },
			{ 2, sizeof(t), true, false },
		};

		ret = post_wait(slot, SYS_ppoll, a, o, 2, mask);
	}
	call_frame = 0;
	return ret;
}

static bool fd_isset(const fd_set *set, int fd)
{
	const unsigned long *w = (const unsigned long *)set;

	return set && (w[fd / (8 * sizeof(*w))] >> (fd % (8 * sizeof(*w)))) & 1;
}

/*
 * pselect(2) of a job thread on a worker (select() too: @tv its timeout,
 * which the kernel updates, else @ts and @mask), as shim_fd_poll().
 */
long shim_fd_select(int n, fd_set *r, fd_set *w, fd_set *e,
		    struct timeval *tv, const struct timespec *ts,
		    const sigset_t *mask)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	int theirs = -1, ours = -1, fd;
	size_t bytes;
	struct timespec t;
	unsigned int slot;
	uint64_t a[6];
	long ret;

	if (n <= 0 || (unsigned int)n > shim_job->fd_limit + SHIM_FDS_MAX)
		return SHIM_FD_HERE;
	for (fd = 0; fd < n; fd++)
		if (fd_isset(r, fd) || fd_isset(w, fd) || fd_isset(e, fd))
			sort_fd(fd, &theirs, &ours);
	ret = wait_enter(&waits[1], theirs, ours, &slot, here);
	if (ret)
		return ret;
	bytes = (n + 63) / 64 * 8;	/* what the kernel reads of a set */
	a[0] = n;
	a[1] = (uintptr_t)r;
	a[2] = (uintptr_t)w;
	a[3] = (uintptr_t)e;
	a[5] = 0;
	{
		const struct fd_obj o[] = {
			{ 1, bytes, true, true },
			{ 2, bytes, true, true },
			{ 3, bytes, true, true },
			{ 4, tv ? sizeof(*tv) : sizeof(t), true, !!tv },
		};

		if (tv) {
			a[4] = (uintptr_t)tv;
			ret = post_wait(slot, SYS_select, a, o, 4, NULL);
		} else {
			if (ts)
				t = *ts;
			a[4] = ts ? (uintptr_t)&t : 0;
			ret = post_wait(slot, SYS_pselect6, a, o, 4, mask);
		}
	}
	call_frame = 0;
	return ret;
}

/* ---- the launcher: a thread per slot in use ---- */

/*
 * Before a thread of another node writes to this process's standard
 * output or error: what main() or a thread here printed before it, still
 * in the C library's buffer of the stream, goes first, as the one buffer
 * of a process would have it.  Not while another thread holds the stream
 * (it is writing it).
 */
static void flush_before(unsigned int nr, const uint64_t *a)
{
	FILE *f;

	if (nr != SYS_write && nr != SYS_writev)
		return;
	if (a[0] == STDOUT_FILENO)
		f = stdout;
	else if (a[0] == STDERR_FILENO)
		f = stderr;
	else
		return;
	if (!__fpending(f) || ftrylockfile(f))
		return;
	fflush_unlocked(f);
	funlockfile(f);
}

/*
 * The launcher's thread serving each slot, for want_intr()'s signal: set
 * by the thread itself before it serves, read by the service thread.
 */
static pthread_t servers[SHIM_THREADS];

static void *serve(void *arg)
{
	struct shim_fdcall *s = arg;
	uint32_t done = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE), seq;
	int ret;

	__atomic_store_n(&servers[s - shim_job->fdcalls], pthread_self(),
			 __ATOMIC_RELEASE);
	for (;;) {
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (seq == done) {
			ret = shim_futex_op(&s->seq, SDSM_FUTEX_WAIT, seq,
					    1000 * MS);
			if (ret && ret != -ETIMEDOUT && ret != -EAGAIN &&
			    ret != -EINTR)
				usleep(100000);	/* the job is ending */
			continue;
		}
		shim_rc_sync();		/* what the thread wrote */
		if (__atomic_load_n(&s->intr, __ATOMIC_ACQUIRE) == seq) {
			s->ret = -EINTR;	/* ended before it began */
		} else {
			flush_before(s->nr, s->args);
			s->ret = fd_exec(s->nr, s->args);
		}
		shim_rc_sync();		/* what the call wrote */
		done = seq;
		__atomic_store_n(&s->done, seq, __ATOMIC_RELEASE);
		shim_futex_op(&s->done, SDSM_FUTEX_WAKE, INT_MAX, -1);
	}
	return NULL;
}

/*
 * End slot @s's call in progress, if its asker wants it ended: a SIGSYS
 * to the thread serving the slot, which the SIGSYS handler knows by its
 * value (SHIM_SIG_INTR) and returns from.  Its sigaction has no
 * SA_RESTART, so a blocking system call there returns EINTR (a read()
 * that had data returns what it read).  One that came before the call
 * began is lost: the asker asks again.
 */
static void interrupt(struct shim_fdcall *s)
{
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	pthread_t t = __atomic_load_n(&servers[s - shim_job->fdcalls],
				      __ATOMIC_ACQUIRE);
	const union sigval v = { .sival_int = SHIM_SIG_INTR };

	if (t && __atomic_load_n(&s->intr, __ATOMIC_ACQUIRE) == seq &&
	    __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) != seq)
		pthread_sigqueue(t, SIGSYS, v);
}

/*
 * From the launcher's service thread: start the servers asked for, and
 * end the calls whose askers want them ended (want_intr()).
 */
void shim_fd_serve(void)
{
	unsigned int w, i;
	uint64_t bits;

	for (w = 0; w < SHIM_THREADS / 64; w++) {
		if (!__atomic_load_n(&shim_job->fd_want[w], __ATOMIC_ACQUIRE))
			continue;
		bits = __atomic_exchange_n(&shim_job->fd_want[w], 0,
					   __ATOMIC_SEQ_CST);
		while (bits) {
			struct shim_fdcall *s;

			i = __builtin_ctzll(bits);
			bits &= bits - 1;
			s = &shim_job->fdcalls[w * 64 + i];
			if (__atomic_load_n(&s->server, __ATOMIC_ACQUIRE)) {
				interrupt(s);
				continue;
			}
			/* On failure the thread asks again in a second. */
			if (!shim_native_thread(serve, s))
				__atomic_store_n(&s->server, 1,
						 __ATOMIC_RELEASE);
		}
	}
}
