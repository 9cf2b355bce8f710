// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm-preload.so: an unmodified program's memory in sdsm.
 *
 * LD_PRELOAD'ed (sdsmctl POLICY -- prog does it), this library replaces
 * the malloc family, so every heap allocation of the program and of the
 * libraries it uses comes from libsdsm's allocator (sdsm_heap.c) under the
 * policy of SDSM_POLICY; moves the executable's writable globals (.data
 * and .bss) into an sdsm region under that policy; and serves the
 * program's anonymous private read-write mmap()s from the heap (in a job
 * over several nodes, its private and read-only shared file mappings too).
 *
 * Before its constructor has set up the heap, allocations (the dynamic
 * linker's and libc's start-up ones) come from a static bootstrap arena;
 * they are never freed.  Allocations made while the heap itself runs
 * (sdsm_heap_busy) go there too, so nothing recurses.  Without a usable
 * /dev/sdsm the constructor prints one line naming the cause and exits
 * with status 127: a program asked to be placed is never silently run
 * unplaced (sdsmctl --no-preload runs it without this library).
 *
 * fork(): the child gets private copies of the heap chunks and of the
 * globals (what fork() means), so it cannot corrupt its parent's heap.
 * See Documentation/preload.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sdsm_internal.h"
#include "../sdsm_heap.h"

/* sdsm_shim.c: job mode (sdsmctl -N). */
extern int sdsm_shim_role;
int shim_init(const struct sdsm_policy *pol, unsigned int cflags);
const char *shim_globals_name(char *buf, size_t len);
void shim_set_globals(void *addr, size_t len);
bool shim_foreign(const void *p);
void shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t shim_foreign_room(const void *p);
void shim_free_remote(void *p, size_t len);
uint64_t *shim_take_remote(void);
int shim_map_globals(uintptr_t addr, size_t len, const char *name);
void *shim_stack_alloc(size_t len);
void shim_heap_full(const char *call, size_t size);
void shim_keys_start(void);

#define EXPORT		__attribute__((visibility("default")))
#define PG		4096UL
#define BOOT_SIZE	(4UL << 20)

extern struct sdsm_heap_space sdsm_heap_space;

static struct sdsm_heap *heap;		/* set once, by the constructor */
static __thread int heap_busy;

static char boot_arena[BOOT_SIZE] __attribute__((aligned(4096)));
static size_t boot_used;

/* The globals region, for the fork child's private copy. */
static void *globals_addr;
static size_t globals_len;

static void say(const char *fmt, ...)
{
	char buf[320];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "libsdsm-preload: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		n = 0;
}

/* ---- the bootstrap arena: 16-byte header with the size ---- */

static bool boot_has(const void *p)
{
	return (const char *)p >= boot_arena &&
	       (const char *)p < boot_arena + BOOT_SIZE;
}

static void *boot_alloc(size_t size, size_t align)
{
	size_t old, at, end;

	if (align < 16)
		align = 16;
	if (size > BOOT_SIZE)
		goto full;
	old = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
	do {
		at = (old + 16 + align - 1) & ~(align - 1);
		end = at + ((size + 15) & ~15UL);
		if (end > BOOT_SIZE)
			goto full;
	} while (!__atomic_compare_exchange_n(&boot_used, &old, end, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	memcpy(boot_arena + at - sizeof(size_t), &size, sizeof(size));
	return boot_arena + at;
full:
	errno = ENOMEM;
	return NULL;
}

static size_t boot_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(n));
	return n;
}

/*
 * ---- per-thread caches ----
 *
 * Freed small blocks of up to TC_MAX_SIZE bytes go to a per-thread stack
 * per class (at most TC_COUNT each) and the next malloc of that class
 * takes them back without the heap's lock.  For the heap they stay
 * allocated.  A cached block holds the next pointer and the thread's key
 * (as glibc's tcache does), so a second free of a cached block is found.
 * At thread exit a key destructor gives the blocks back.
 */
#define TC_MAX_SIZE	1024
#define TC_COUNT	32
#define TC_CLASSES	20	/* classes up to 1024 bytes */

struct tcache {
	void *head[TC_CLASSES];
	unsigned int count[TC_CLASSES];
};

static __thread struct tcache tcache;
static __thread bool tcache_keyed;
static pthread_key_t tcache_key;
static bool tcache_on;

static void tcache_flush(void *arg)
{
	unsigned int c;
	void *p, *next;

	(void)arg;
	heap_busy++;
	for (c = 0; c < TC_CLASSES; c++) {
		for (p = tcache.head[c]; p; p = next) {
			next = *(void **)p;
			sdsm_heap_free(&sdsm_heap_space, p);
		}
		tcache.head[c] = NULL;
		tcache.count[c] = 0;
	}
	heap_busy--;
}

static void *tcache_get(size_t size)
{
	int c = sdsm_heap_size_class(size);
	void *p;

	if (c < 0 || c >= TC_CLASSES || !tcache.head[c])
		return NULL;
	p = tcache.head[c];
	tcache.head[c] = *(void **)p;
	tcache.count[c]--;
	((void **)p)[1] = NULL;
	return p;
}

/* true: @p is cached now. */
static bool tcache_put(struct sdsm_heap *h, void *p)
{
	int c = sdsm_heap_block_class(&sdsm_heap_space, h, p);
	void *q;

	if (c < 0 || c >= TC_CLASSES || tcache.count[c] >= TC_COUNT)
		return false;
	if (((void **)p)[1] == &tcache) {
		for (q = tcache.head[c]; q; q = *(void **)q)
			if (q == p) {
				say("free(%p): double free", p);
				abort();
			}
	}
	if (!tcache_keyed) {
		tcache_keyed = true;
		pthread_setspecific(tcache_key, &tcache);
	}
	((void **)p)[0] = tcache.head[c];
	((void **)p)[1] = &tcache;
	tcache.head[c] = p;
	tcache.count[c]++;
	return true;
}

/* ---- the malloc family ---- */

static struct sdsm_heap *ready_heap(void)
{
	struct sdsm_heap *h = __atomic_load_n(&heap, __ATOMIC_ACQUIRE);

	return h && !heap_busy ? h : NULL;
}

/*
 * Give back to this node's heap the blocks other nodes of the job freed
 * (shim_free_remote()).  heap_busy is held by the caller.
 */
static void drain_remote(void)
{
	uint64_t *rec = shim_take_remote(), *next;

	for (; rec; rec = next) {
		next = (uint64_t *)(uintptr_t)rec[0];
		if (rec[1]) {
			/* munmap() of pages not mapped is no error. */
			sdsm_heap_trim(&sdsm_heap_space, rec, rec[1]);
			continue;
		}
		if (sdsm_heap_free(&sdsm_heap_space, rec)) {
			say("free(%p) on another node: double free or invalid pointer",
			    (void *)rec);
			abort();
		}
	}
}

/*
 * @zero: zero-filled, writing only what may hold old data (the boot arena
 * is never reused; sdsm_heap_alloc_zeroed()).
 */
static void *do_alloc(size_t size, size_t align, bool zero)
{
	struct sdsm_heap *h = ready_heap();
	void *p;

	if (!h)
		return boot_alloc(size, align);
	if (align <= 16 && tcache_on) {
		p = tcache_get(size);
		if (p) {
			if (zero)
				memset(p, 0, size);
			return p;
		}
	}
	heap_busy++;
	drain_remote();
	p = zero ? sdsm_heap_alloc_zeroed(h, size, align) :
		   sdsm_heap_alloc(h, size, align);
	heap_busy--;
	if (!p) {
		errno = errno == EINVAL ? EINVAL : ENOMEM;
		if (errno == ENOMEM)
			shim_heap_full("malloc()", size);
	}
	return p;
}

static size_t usable(const void *p)
{
	if (boot_has(p))
		return boot_size(p);
	return sdsm_heap_usable(&sdsm_heap_space, p);
}

EXPORT void *malloc(size_t size)
{
	return do_alloc(size, 16, false);
}

EXPORT void free(void *p)
{
	struct sdsm_heap *h;
	int ret;

	if (!p || boot_has(p))
		return;
	if (shim_foreign(p)) {
		shim_free_remote(p, 0);
		return;
	}
	if (!sdsm_heap_has(p))
		return;		/* not ours (none should exist): leave it */
	h = ready_heap();
	if (h && tcache_on && tcache_put(h, p))
		return;
	heap_busy++;
	drain_remote();
	ret = sdsm_heap_free(&sdsm_heap_space, p);
	heap_busy--;
	if (ret) {
		say("free(%p): double free or invalid pointer", p);
		abort();
	}
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_alloc(total, 16, true);
}

EXPORT void *realloc(void *old, size_t size)
{
	size_t have;
	void *p;

	if (!old)
		return malloc(size);
	if (!size) {
		free(old);
		return NULL;
	}
	if (shim_foreign(old)) {
		/* Another node's block: copied, and given back to its heap. */
		have = shim_foreign_room(old);
		p = malloc(size);
		if (p) {
			memcpy(p, old, size < have ? size : have);
			shim_free_remote(old, 0);
		}
		return p;
	}
	have = usable(old);
	if (size <= have && (boot_has(old) || size > have / 2))
		return old;
	p = malloc(size);
	if (!p)
		return NULL;
	memcpy(p, old, size < have ? size : have);
	free(old);
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, total);
}

EXPORT void *memalign(size_t align, size_t size)
{
	if (!align || align & (align - 1)) {
		errno = EINVAL;
		return NULL;
	}
	return do_alloc(size, align, false);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

EXPORT int posix_memalign(void **pp, size_t align, size_t size)
{
	void *p;

	if (!align || align & (align - 1) || align % sizeof(void *))
		return EINVAL;
	p = do_alloc(size, align, false);
	if (!p)
		return ENOMEM;
	*pp = p;
	return 0;
}

EXPORT void *valloc(size_t size)
{
	return do_alloc(size, PG, false);
}

EXPORT void *pvalloc(size_t size)
{
	if (size > SIZE_MAX - PG) {
		errno = ENOMEM;
		return NULL;
	}
	return do_alloc((size + PG - 1) & ~(PG - 1), PG, false);
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? usable(p) : 0;
}

/* ---- anonymous mappings ---- */

static bool ours_anon(void *addr, int prot, int flags, int fd)
{
	return !addr && fd == -1 && prot == (PROT_READ | PROT_WRITE) &&
	       (flags & ~MAP_NORESERVE) == (MAP_PRIVATE | MAP_ANONYMOUS);
}

/*
 * A file mapping in a job over several nodes (sdsmctl -N): the file may
 * exist on this node only (no shared filesystem), so the mapping is served
 * from the heap, at an address every node of the job sees, and filled with
 * the file's bytes now.  That is what MAP_PRIVATE means as long as the file
 * does not change under it (a private mapping may or may not see later
 * changes to the file; this one does not), and what a read-only MAP_SHARED
 * mapping shows.  A writable MAP_SHARED file mapping would have to write
 * back to one node's file from every node's stores: refused.  Mappings with
 * an address, MAP_FIXED, PROT_EXEC or other flags, and files that are not
 * regular files (devices, /dev/sdsm itself) go to the kernel unchanged.
 * See "File mappings" in Documentation/preload.rst.
 */
enum { FILE_KERNEL, FILE_OURS, FILE_REFUSED };

static int ours_file(void *addr, int prot, int flags, int fd, off_t off)
{
	struct stat st;
	int type = flags & MAP_TYPE;

	if (!sdsm_shim_role || addr || fd < 0 || !(prot & PROT_READ) ||
	    prot & ~(PROT_READ | PROT_WRITE) ||
	    (type != MAP_PRIVATE && type != MAP_SHARED) ||
	    flags & ~(MAP_TYPE | MAP_NORESERVE | MAP_POPULATE) ||
	    off < 0 || off % PG || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return FILE_KERNEL;
	if (type == MAP_SHARED && prot & PROT_WRITE) {
		shim_say("mmap(MAP_SHARED, PROT_WRITE) of a file is not supported in a job over several nodes (sdsmctl -N): stores on other nodes cannot reach this node's file");
		return FILE_REFUSED;
	}
	return FILE_OURS;
}

/* Copy the file's bytes from @off into the fresh, zeroed pages at @p. */
static int fill_from_file(char *p, size_t len, int fd, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, p + done, len - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;	/* end of file: the rest reads as zero */
		done += n;
	}
	return 0;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	struct sdsm_heap *h = ready_heap();
	int file = FILE_KERNEL, err;
	void *p;

	if (!h)
		return sdsm_sys_mmap(addr, len, prot, flags, fd, off);
	if (!ours_anon(addr, prot, flags, fd)) {
		file = ours_file(addr, prot, flags, fd, off);
		if (file == FILE_KERNEL)
			return sdsm_sys_mmap(addr, len, prot, flags, fd, off);
		if (file == FILE_REFUSED) {
			errno = ENOSYS;
			return MAP_FAILED;
		}
		if ((fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY) {
			errno = EACCES;
			return MAP_FAILED;
		}
	}
	if (!len) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	heap_busy++;
	p = sdsm_heap_alloc_pages(h, len, true, 1);
	heap_busy--;
	if (!p) {
		shim_heap_full("mmap()", len);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (file == FILE_OURS && fill_from_file(p, len, fd, off)) {
		err = errno;
		munmap(p, len);
		errno = err;
		return MAP_FAILED;
	}
	return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off) __attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len)
{
	int ret;

	if (shim_foreign(addr)) {
		/* Another node's heap: that node gives the pages back. */
		if ((uintptr_t)addr % PG || !len) {
			errno = EINVAL;
			return -1;
		}
		shim_free_remote(addr, (len + PG - 1) & ~(PG - 1));
		return 0;
	}
	if (!sdsm_heap_has(addr))
		return sdsm_sys_munmap(addr, len);
	heap_busy++;
	ret = sdsm_heap_trim(&sdsm_heap_space, addr, len);
	heap_busy--;
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
	struct sdsm_heap_block b;
	void *p, *fixed = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		fixed = va_arg(ap, void *);
		va_end(ap);
	}
	if (!sdsm_heap_has(old))
		return (void *)syscall(SYS_mremap, old, old_len, len, flags,
				       fixed);
	old_len = (old_len + PG - 1) & ~(PG - 1);
	if (!len || flags & ~MREMAP_MAYMOVE ||
	    sdsm_heap_find(&sdsm_heap_space, old, &b) || !b.large) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	len = (len + PG - 1) & ~(PG - 1);
	if (len <= old_len) {
		if (len < old_len)
			munmap((char *)old + len, old_len - len);
		return old;
	}
	if (!(flags & MREMAP_MAYMOVE)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	memcpy(p, old, old_len);
	munmap(old, old_len);
	return p;
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	if (!sdsm_heap_has(addr))
		return syscall(SYS_madvise, addr, len, advice);
	/* Private anonymous memory reads back zero after DONTNEED. */
	if (advice == MADV_DONTNEED)
		memset(addr, 0, (len + PG - 1) & ~(PG - 1));
	return 0;
}

/* ---- the executable's globals ---- */

struct globals {
	uintptr_t start, end;
};

static int find_globals(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct globals *g = arg;
	uintptr_t relro_end = 0, lo, hi;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_RELRO)
			relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		lo = info->dlpi_addr + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		if (relro_end > lo && relro_end <= hi)
			lo = relro_end;
		g->start = (lo + PG - 1) & ~(PG - 1);
		g->end = (hi + PG - 1) & ~(PG - 1);
	}
	return 1;	/* the first object is the executable */
}

static int move_globals(const struct sdsm_policy *policy, unsigned int cflags)
{
	struct globals g = { 0, 0 };
	char name[SDSM_NAME_MAX];
	size_t len;
	uint32_t id;
	void *tmp;
	int ret;

	dl_iterate_phdr(find_globals, &g);
	if (g.end <= g.start)
		return 0;	/* nothing writable past RELRO */
	len = g.end - g.start;
	tmp = sdsm_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	memcpy(tmp, (void *)g.start, len);
	if (!shim_globals_name(name, sizeof(name)))
		snprintf(name, sizeof(name), "g.%d.%d", sdsm_node_id(),
			 (int)getpid());
	ret = sdsm_owned_map(name, (void *)g.start, len, policy, cflags,
			     sdsm_node_id(), MAP_FIXED, &id);
	if (ret) {
		/* MAP_FIXED failed before replacing anything, or the region
		 * could not be made: the globals are untouched. */
		sdsm_sys_munmap(tmp, len);
		return ret;
	}
	memcpy((void *)g.start, tmp, len);
	sdsm_sys_munmap(tmp, len);
	globals_addr = (void *)g.start;
	globals_len = len;
	shim_set_globals(globals_addr, len);
	return 0;
}

/*
 * A worker: the launcher's globals region @name over this process's own
 * (whose constructors ran on them), after checking the layout is the same.
 */
int shim_map_globals(uintptr_t addr, size_t len, const char *name)
{
	struct sdsm_region_info ri;
	struct globals g = { 0, 0 };
	void *p;

	dl_iterate_phdr(find_globals, &g);
	if (g.start != addr || g.end - g.start != len) {
		say("the executable's globals are at [%#lx, %#lx) here but [%#lx, %#lx) on the launcher: not the same binary or layout",
		    (unsigned long)g.start, (unsigned long)g.end,
		    (unsigned long)addr, (unsigned long)(addr + len));
		return -1;
	}
	if (!len)
		return 0;
	if (sdsm_region_info(name, &ri) < 0) {
		say("globals region %s: %s", name, sdsm_last_error());
		return -1;
	}
	p = sdsm_sys_mmap((void *)addr, len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED, sdsm_fd(), ri.offset);
	if (p != (void *)addr) {
		say("globals region %s: mmap: %s", name, strerror(errno));
		return -1;
	}
	globals_addr = p;
	globals_len = len;
	return 0;
}

/* A thread stack in this node's heap (never given back). */
void *shim_stack_alloc(size_t len)
{
	struct sdsm_heap *h = __atomic_load_n(&heap, __ATOMIC_ACQUIRE);
	void *p;

	if (!h)
		return NULL;
	heap_busy++;
	p = sdsm_heap_alloc_pages(h, len, false, 16);
	heap_busy--;
	return p;
}

/* In a fork child: the globals become private again. */
static void globals_atfork_child(void)
{
	void *tmp;

	if (!globals_len)
		return;
	tmp = sdsm_sys_mmap(NULL, globals_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return;
	memcpy(tmp, globals_addr, globals_len);
	if ((void *)syscall(SYS_mremap, tmp, globals_len, globals_len,
			    MREMAP_MAYMOVE | MREMAP_FIXED, globals_addr) !=
	    globals_addr)
		sdsm_sys_munmap(tmp, globals_len);
}

__attribute__((constructor(101)))
static void sdsm_preload_init(void)
{
	struct sdsm_policy policy;
	unsigned int cflags;
	struct sdsm_heap *h;
	char pol[320];
	int ret;

	heap_busy++;
	if (sdsm_available() < 0 || sdsm_get_policy(&policy) < 0 ||
	    sdsm_heap_consistency(&cflags) < 0) {
		say("cannot place this program in sdsm memory: %s",
		    sdsm_last_error());
		_exit(127);
	}
	if (shim_init(&policy, cflags) < 0)
		_exit(127);
	sdsm_heap_fork_private = true;
	h = sdsm_heap_of(&policy);
	if (!h) {
		say("%s", sdsm_last_error());
		_exit(127);
	}
	ret = sdsm_shim_role == 2 ? 0 : move_globals(&policy, cflags);
	if (ret) {
		say("cannot move .data/.bss into sdsm memory: %s",
		    sdsm_last_error());
		_exit(127);
	}
	pthread_atfork(NULL, NULL, globals_atfork_child);
	tcache_on = !getenv("SDSM_PRELOAD_NO_TCACHE") &&
		    !pthread_key_create(&tcache_key, tcache_flush);
	shim_keys_start();	/* keys made from now on are the job's */
	if (getenv("SDSM_PRELOAD_VERBOSE") &&
	    sdsm_format_policy(&policy, pol, sizeof(pol)) == 0)
		say("heap, globals [%p, +%zu) and anonymous mmaps under %s, %s consistency",
		    globals_addr, globals_len, pol,
		    cflags ? "release" : "sequential");
	heap_busy--;
	__atomic_store_n(&heap, h, __ATOMIC_RELEASE);
}
