// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Job mode (sdsmctl -N): what cannot work is refused, naming the call.
 *
 * A new process or program cannot follow a job over nodes: its memory
 * would be a private copy of the job's (fork) or gone (exec), its threads
 * not the job's, and the futex filter of the job would stay on it.  So in
 * a job, fork(), the exec family, posix_spawn(), system() and popen() print
 * one line naming the call and fail with ENOSYS (popen: NULL; system: -1).
 * Outside a job each one is the C library's.  vfork() and a clone()
 * without CLONE_VM cannot be wrapped (a wrapper's stack frame is the
 * child's too): the job's seccomp filter refuses those system calls
 * instead (sdsm_futex_trap.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "sdsm_shim.h"

#define EXPORT		__attribute__((visibility("default")))
#define MAX_ARGS	4096

void shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int refused(const char *call)
{
	if (!sdsm_shim_role)
		return 0;
	shim_say(SHIM_REFUSED_FMT, call);
	errno = ENOSYS;
	return 1;
}

#define REAL(name)	((__typeof__(&name))dlsym(RTLD_NEXT, #name))

EXPORT pid_t fork(void)
{
	if (refused("fork()"))
		return -1;
	return REAL(fork)();
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (refused("execve()"))
		return -1;
	return REAL(execve)(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	if (refused("execv()"))
		return -1;
	return REAL(execv)(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	if (refused("execvp()"))
		return -1;
	return REAL(execvp)(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (refused("execvpe()"))
		return -1;
	return REAL(execvpe)(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (refused("fexecve()"))
		return -1;
	return REAL(fexecve)(fd, argv, envp);
}

/* The list forms: collect the arguments, then the vector form. */
static int collect(const char *arg0, va_list ap, char **argv)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (argv[n - 1]) {
		if (n == MAX_ARGS) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = va_arg(ap, char *);
	}
	return n;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_ARGS];
	va_list ap;
	int n;

	if (refused("execl()"))
		return -1;
	va_start(ap, arg);
	n = collect(arg, ap, argv);
	va_end(ap);
	return n < 0 ? -1 : REAL(execv)(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_ARGS];
	va_list ap;
	int n;

	if (refused("execlp()"))
		return -1;
	va_start(ap, arg);
	n = collect(arg, ap, argv);
	va_end(ap);
	return n < 0 ? -1 : REAL(execvp)(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_ARGS], **envp;
	va_list ap;
	int n;

	if (refused("execle()"))
		return -1;
	va_start(ap, arg);
	n = collect(arg, ap, argv);
	envp = n < 0 ? NULL : va_arg(ap, char **);
	va_end(ap);
	return n < 0 ? -1 : REAL(execve)(path, argv, envp);
}

EXPORT int posix_spawn(pid_t *pid, const char *path,
		       const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[],
		       char *const envp[])
{
	if (refused("posix_spawn()"))
		return ENOSYS;
	return REAL(posix_spawn)(pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[],
			char *const envp[])
{
	if (refused("posix_spawnp()"))
		return ENOSYS;
	return REAL(posix_spawnp)(pid, file, fa, attr, argv, envp);
}

EXPORT int system(const char *command)
{
	if (refused("system()"))
		return -1;
	return REAL(system)(command);
}

EXPORT FILE *popen(const char *command, const char *type)
{
	if (refused("popen()"))
		return NULL;
	return REAL(popen)(command, type);
}
