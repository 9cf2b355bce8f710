// SPDX-License-Identifier: GPL-2.0
/*
 * fio_offset.so - LD_PRELOAD for fio so that its mmap engine reads a region
 * of /dev/sdsm that does not start at mmap offset 0.
 *
 * fio 3.33's mmap engine maps the file from offset 0 and indexes the
 * mapping with (I/O offset - --offset), so --offset=X reads bytes [0, len)
 * of the file, not [X, X + len): for /dev/sdsm that is the default region,
 * not the region being measured.  guest.sh therefore runs fio with
 * --offset=0 --size=len and this shim adds $SDSM_BENCH_MMAP_BASE (the
 * region's mmap offset) to every mmap() of the file named
 * $SDSM_BENCH_MMAP_PATH (default /dev/sdsm).  Nothing else is touched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fio_offset_is_dev(int fd)
{
	const char *want = getenv("SDSM_BENCH_MMAP_PATH");
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (fd < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	return !strcmp(path, want ? want : "/dev/sdsm");
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*real_mmap)(void *, size_t, int, int, int, off_t) =
		dlsym(RTLD_NEXT, "mmap");
	const char *base = getenv("SDSM_BENCH_MMAP_BASE");

	if (base && fio_offset_is_dev(fd))
		off += strtoull(base, NULL, 0);
	return real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
