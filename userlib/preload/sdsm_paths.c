// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Job mode (sdsmctl -N): the files a program names are the launcher's.
 *
 * A thread of the job on another node that opens a file by its path
 * (open(), openat(), creat(), fopen()), or stats, checks, removes, renames
 * or makes one (stat(), lstat(), access(), unlink(), remove(), rename(),
 * mkdir(), rmdir()), does it on the launcher's node, as a thread of one
 * process would: the nodes need not share a filesystem, and a descriptor
 * it opens is the launcher's, which every thread of the job may use
 * (sdsm_fd.c).  Paths under /proc, /sys and /dev are the node's own (its
 * kernel, CPUs and devices), and so are a worker's own directory
 * descriptors.  Other calls that name a path, and the C library's own
 * opens (locales, name service, dlopen(), opendir()), stay on the node.
 * The pipes and event counters such a thread makes (pipe(), pipe2(),
 * eventfd()) are the launcher's too, so any thread may use them.
 * poll(), ppoll(), select() and pselect() of such a thread on the
 * launcher's descriptors wait there: the filter cannot see descriptors in
 * an array.  See "Files and descriptors" in Documentation/preload.rst.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sdsm_shim.h"

#define EXPORT		__attribute__((visibility("default")))
/* The C library's @name, looked up once. */
#define REAL(name) ({							\
	static __typeof__(&name) real_;					\
									\
	if (!real_)							\
		real_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name);	\
	real_;								\
})

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Whether this is a job thread on a worker: its descriptors are the launcher's. */
static bool passing(void)
{
	return sdsm_shim_role == 2 && shim_job && shim_job->fd_limit > 3 &&
	       shim_thread_slot() >= 0;
}

/* Whether a call on @path, relative to @dirfd, is made on the launcher. */
static bool at_launcher(int dirfd, const char *path)
{
	uint32_t f = (uint32_t)dirfd;

	if (!passing() || !path)
		return false;
	if (dirfd != AT_FDCWD && f && (f < 3 || f >= shim_job->fd_limit))
		return false;	/* a directory this worker opened */
	return path[0] != '/' || !(under(path, "/proc") ||
				   under(path, "/sys") || under(path, "/dev"));
}

static long ret_errno(long ret)
{
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/* @nr(AT_FDCWD or @dirfd, @path, @a2, @a3) on the launcher. */
static long path1(unsigned int nr, int dirfd, const char *path, uint64_t a2,
		  uint64_t a3)
{
	uint64_t a[6] = { (uint64_t)(int64_t)dirfd, (uintptr_t)path, a2, a3 };

	return shim_fd_path_call(nr, a, 1, -1, -1, 0);
}

static int open_at(int dirfd, const char *path, int flags, mode_t mode)
{
	return ret_errno(path1(SYS_openat, dirfd, path, flags, mode));
}

/* open()'s mode: there only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode) do {					\
	if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) {	\
		va_list ap;						\
									\
		va_start(ap, flags);					\
		mode = va_arg(ap, int);					\
		va_end(ap);						\
	}								\
} while (0)

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (at_launcher(AT_FDCWD, path))
		return open_at(AT_FDCWD, path, flags, mode);
	return REAL(open)(path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (at_launcher(dirfd, path))
		return open_at(dirfd, path, flags, mode);
	return REAL(openat)(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));

/* What _FORTIFY_SOURCE calls when open()'s flags are not constant. */
int __open_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);

EXPORT int __open_2(const char *path, int flags)
{
	if (at_launcher(AT_FDCWD, path))
		return open_at(AT_FDCWD, path, flags, 0);
	return REAL(__open_2)(path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
	__attribute__((alias("__open_2")));

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	if (at_launcher(dirfd, path))
		return open_at(dirfd, path, flags, 0);
	return REAL(__openat_2)(dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
	__attribute__((alias("__openat_2")));

EXPORT int creat(const char *path, mode_t mode)
{
	if (at_launcher(AT_FDCWD, path))
		return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
			       mode);
	return REAL(creat)(path, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
	__attribute__((alias("creat")));

/* fopen()'s mode as open()'s flags, or -1. */
static int mode_flags(const char *m)
{
	int flags;

	switch (*m) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	for (m++; *m && *m != ','; m++) {
		if (*m == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'x')
			flags |= O_EXCL;
		else if (*m == 'e')
			flags |= O_CLOEXEC;
	}
	return flags;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	int flags, fd, err;
	FILE *f;

	if (!at_launcher(AT_FDCWD, path))
		return REAL(fopen)(path, mode);
	flags = mode_flags(mode);
	if (flags < 0) {
		errno = EINVAL;
		return NULL;
	}
	fd = open_at(AT_FDCWD, path, flags, 0666);
	if (fd < 0)
		return NULL;
	/* Its calls on the launcher's descriptor go there (sdsm_fd.c). */
	f = fdopen(fd, mode);
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

EXPORT FILE *fopen64(const char *path, const char *mode)
	__attribute__((alias("fopen")));

static int stat_at(const char *path, struct stat *st, int flags)
{
	uint64_t a[6] = { (uint64_t)(int64_t)AT_FDCWD, (uintptr_t)path,
			  (uintptr_t)st, flags };

	return ret_errno(shim_fd_path_call(SYS_newfstatat, a, 1, -1, 2,
					   sizeof(*st)));
}

EXPORT int stat(const char *path, struct stat *st)
{
	if (at_launcher(AT_FDCWD, path))
		return stat_at(path, st, 0);
	return REAL(stat)(path, st);
}

/* struct stat64 is struct stat on x86_64. */
EXPORT int stat64(const char *path, struct stat64 *st)
{
	return stat(path, (struct stat *)st);
}

EXPORT int lstat(const char *path, struct stat *st)
{
	if (at_launcher(AT_FDCWD, path))
		return stat_at(path, st, AT_SYMLINK_NOFOLLOW);
	return REAL(lstat)(path, st);
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return lstat(path, (struct stat *)st);
}

EXPORT int access(const char *path, int mode)
{
	if (at_launcher(AT_FDCWD, path))
		return ret_errno(path1(SYS_faccessat, AT_FDCWD, path, mode,
				       0));
	return REAL(access)(path, mode);
}

static int unlink_at(const char *path, int flags)
{
	return ret_errno(path1(SYS_unlinkat, AT_FDCWD, path, flags, 0));
}

EXPORT int unlink(const char *path)
{
	if (at_launcher(AT_FDCWD, path))
		return unlink_at(path, 0);
	return REAL(unlink)(path);
}

EXPORT int rmdir(const char *path)
{
	if (at_launcher(AT_FDCWD, path))
		return unlink_at(path, AT_REMOVEDIR);
	return REAL(rmdir)(path);
}

EXPORT int remove(const char *path)
{
	if (!at_launcher(AT_FDCWD, path))
		return REAL(remove)(path);
	if (!unlink_at(path, 0))
		return 0;
	return errno == EISDIR ? unlink_at(path, AT_REMOVEDIR) : -1;
}

EXPORT int mkdir(const char *path, mode_t mode)
{
	if (at_launcher(AT_FDCWD, path))
		return ret_errno(path1(SYS_mkdirat, AT_FDCWD, path, mode,
				       0));
	return REAL(mkdir)(path, mode);
}

EXPORT int rename(const char *from, const char *to)
{
	uint64_t a[6] = { (uint64_t)(int64_t)AT_FDCWD, (uintptr_t)from,
			  (uint64_t)(int64_t)AT_FDCWD, (uintptr_t)to };

	if (at_launcher(AT_FDCWD, from) && at_launcher(AT_FDCWD, to))
		return ret_errno(shim_fd_path_call(SYS_renameat, a, 1, 3, -1,
						   0));
	return REAL(rename)(from, to);
}

/* A pipe or an event counter is made where the descriptors are. */
EXPORT int pipe2(int fds[2], int flags)
{
	uint64_t a[6] = { (uintptr_t)fds, (uint64_t)flags };

	if (passing())
		return ret_errno(shim_fd_path_call(SYS_pipe2, a, -1, -1, 0,
						   2 * sizeof(int)));
	return REAL(pipe2)(fds, flags);
}

EXPORT int pipe(int fds[2])
{
	if (passing())
		return pipe2(fds, 0);
	return REAL(pipe)(fds);
}

EXPORT int eventfd(unsigned int count, int flags)
{
	uint64_t a[6] = { count, (uint64_t)flags };

	if (passing())
		return ret_errno(shim_fd_path_call(SYS_eventfd2, a, -1, -1, -1,
						   0));
	return REAL(eventfd)(count, flags);
}

/*
 * poll() and select() wait on descriptors in an array, where the job's
 * filter cannot look: a job thread on a worker waits on the launcher's
 * descriptors there (sdsm_fd.c).
 */
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		const sigset_t *mask, size_t fdslen);

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec t = { timeout / 1000, timeout % 1000 * 1000000L };
	long ret;

	if (passing()) {
		ret = shim_fd_poll(fds, n, timeout < 0 ? NULL : &t, NULL);
		if (ret != SHIM_FD_HERE)
			return ret_errno(ret);
	}
	return REAL(poll)(fds, n, timeout);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		 const sigset_t *mask)
{
	long ret;

	if (passing()) {
		ret = shim_fd_poll(fds, n, tmo, mask);
		if (ret != SHIM_FD_HERE)
			return ret_errno(ret);
	}
	return REAL(ppoll)(fds, n, tmo, mask);
}

/* _FORTIFY_SOURCE's: the C library checks the array's size, then polls. */
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
		      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		return REAL(__poll_chk)(fds, n, timeout, fdslen);
	return poll(fds, n, timeout);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
		       const struct timespec *tmo, const sigset_t *mask,
		       size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		return REAL(__ppoll_chk)(fds, n, tmo, mask, fdslen);
	return ppoll(fds, n, tmo, mask);
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	long ret;

	if (passing()) {
		ret = shim_fd_select(n, r, w, e, tv, NULL, NULL);
		if (ret != SHIM_FD_HERE)
			return ret_errno(ret);
	}
	return REAL(select)(n, r, w, e, tv);
}

EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
		   const struct timespec *ts, const sigset_t *mask)
{
	long ret;

	if (passing()) {
		ret = shim_fd_select(n, r, w, e, NULL, ts, mask);
		if (ret != SHIM_FD_HERE)
			return ret_errno(ret);
	}
	return REAL(pselect)(n, r, w, e, ts, mask);
}
