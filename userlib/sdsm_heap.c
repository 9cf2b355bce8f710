// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The libsdsm allocator (see sdsm_heap.h for the shapes).
 *
 * A chunk's first pages are its metadata: per page a bit "in use", a bit
 * "ever handed out" (so zero-filled allocations clear only pages that may
 * hold old data), the first page of its span, and its kind; per span start
 * its length.  Spans are found first-fit in the in-use bitmap, so freed
 * neighbours merge by themselves.  A run is a span of one size class: a
 * header with a bitmap of allocated blocks (a second free() of a block is
 * caught), a free list threaded through the free blocks, and a bump index
 * for blocks never used.  Runs with free blocks sit on the heap's list of
 * their class.  Blocks are 16-byte aligned; larger alignments take a
 * bigger block (or span) and return an aligned address inside it, which
 * free() maps back to its block.
 *
 * Everything lives in the chunk, so the heap's metadata is in sdsm memory
 * next to the data, at the same address on every node.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "sdsm_heap.h"

#define PG		4096UL
#define CHUNK_MAGIC	0x7364736d6368756eULL	/* "sdsmchun" */
#define RUN_MAGIC	0x72756e73U		/* "runs" */
#define RUN_MIN_PAGES	16
#define SLOT_FOREIGN	UINT32_MAX	/* taken, but not by this process */

enum { KIND_FREE, KIND_META, KIND_LARGE, KIND_RUN };

struct sdsm_heap_chunk {
	uint64_t magic;
	struct sdsm_heap *heap;
	struct sdsm_heap_chunk *next;
	uint32_t region_id;
	uint32_t npages;	/* including the metadata */
	uint32_t first;		/* first page after the metadata */
	uint32_t nused;		/* pages in spans */
	uint32_t hint;		/* no free page below it */
	uint32_t nslots;
	uint64_t *used;
	uint64_t *dirty;
	uint32_t *start;	/* per page: first page of its span */
	uint32_t *span;		/* per span start: pages */
	uint8_t *kind;		/* per page */
};

struct sdsm_heap_run {
	uint32_t magic;
	uint16_t cls;
	uint16_t listed;	/* on heap->partial[cls] */
	uint32_t nblocks;
	uint32_t nfree;
	uint32_t bump;		/* blocks from here on were never used */
	uint32_t free_head;	/* index + 1 of the first free block, 0: none */
	uint32_t off;		/* of block 0 from the run */
	uint32_t size;
	struct sdsm_heap_run *next, *prev;
	uint64_t bitmap[];	/* bit set: block allocated */
};

static uint32_t cls_size[SDSM_HEAP_CLASSES];
static uint32_t cls_pages[SDSM_HEAP_CLASSES];
static uint32_t cls_nblocks[SDSM_HEAP_CLASSES];
static uint32_t cls_off[SDSM_HEAP_CLASSES];
static uint8_t size_cls[SDSM_HEAP_SMALL_MAX / 16 + 1];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

static size_t run_off(uint32_t n)
{
	return (sizeof(struct sdsm_heap_run) + 8 * ((n + 63) / 64) + 15) &
	       ~15UL;
}

static void cls_init(void)
{
	unsigned int c = 0, i, p;
	size_t bytes;
	uint32_t n;

	for (i = 1; i <= 8; i++)
		cls_size[c++] = 16 * i;
	for (p = 128; p < SDSM_HEAP_SMALL_MAX; p *= 2)
		for (i = 5; i <= 8; i++)
			cls_size[c++] = p * i / 4;
	for (c = 0; c < SDSM_HEAP_CLASSES; c++) {
		uint32_t sz = cls_size[c];

		cls_pages[c] = (8 * sz + 1024 + PG - 1) / PG;
		if (cls_pages[c] < RUN_MIN_PAGES)
			cls_pages[c] = RUN_MIN_PAGES;
		bytes = cls_pages[c] * PG;
		n = bytes / sz;
		while (run_off(n) + (size_t)n * sz > bytes)
			n--;
		cls_nblocks[c] = n;
		cls_off[c] = run_off(n);
	}
	for (i = 0, c = 0; i <= SDSM_HEAP_SMALL_MAX / 16; i++) {
		while (cls_size[c] < i * 16)
			c++;
		size_cls[i] = c;
	}
}

void sdsm_heap_space_init(struct sdsm_heap_space *s, uintptr_t base,
			  const struct sdsm_heap_ops *ops, void *ctx)
{
	pthread_once(&cls_once, cls_init);
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->base = base;
	s->ops = ops;
	s->ctx = ctx;
	s->chunk_pages = SDSM_HEAP_SLOT_SIZE / PG;
}

struct sdsm_heap *sdsm_heap_get(struct sdsm_heap_space *s,
				const struct sdsm_policy *policy)
{
	struct sdsm_heap *h = NULL;
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nheaps; i++)
		if (!memcmp(&s->heaps[i].policy, policy, sizeof(*policy))) {
			h = &s->heaps[i];
			goto out;
		}
	if (s->nheaps == SDSM_HEAP_MAX) {
		/* Reuse a heap that never got a chunk (its policy failed). */
		for (i = 0; i < s->nheaps; i++) {
			h = &s->heaps[i];
			pthread_mutex_lock(&h->lock);
			if (!h->chunks) {
				h->policy = *policy;
				pthread_mutex_unlock(&h->lock);
				goto out;
			}
			pthread_mutex_unlock(&h->lock);
		}
		h = NULL;
		errno = ENOSPC;
		goto out;
	}
	h = &s->heaps[s->nheaps];
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	h->space = s;
	h->policy = *policy;
	h->used = true;
	/* Published last: lookups above run under the same lock. */
	s->nheaps++;
out:
	pthread_mutex_unlock(&s->lock);
	return h;
}

/* ---- bitmaps ---- */

static bool bit_test(const uint64_t *m, uint32_t i)
{
	return m[i / 64] >> (i % 64) & 1;
}

static void bits_set(uint64_t *m, uint32_t i, uint32_t n, bool on)
{
	for (; n; i++, n--) {
		if (!(i % 64) && n >= 64) {
			m[i / 64] = on ? ~0ULL : 0;
			i += 63;
			n -= 63;
			continue;
		}
		if (on)
			m[i / 64] |= 1ULL << (i % 64);
		else
			m[i / 64] &= ~(1ULL << (i % 64));
	}
}

/* ---- chunks ---- */

static struct sdsm_heap_chunk *chunk_of(const struct sdsm_heap_space *s,
					const void *p)
{
	uintptr_t a = (uintptr_t)p;
	struct sdsm_heap_chunk *c;
	uint32_t v;

	if (a < s->base || a - s->base >= (uintptr_t)SDSM_HEAP_SLOTS <<
					  SDSM_HEAP_SLOT_SHIFT)
		return NULL;
	v = __atomic_load_n(&s->slots[(a - s->base) >> SDSM_HEAP_SLOT_SHIFT],
			    __ATOMIC_ACQUIRE);
	if (!v || v == SLOT_FOREIGN)
		return NULL;
	c = (struct sdsm_heap_chunk *)(s->base +
				       ((uintptr_t)(v - 1) << SDSM_HEAP_SLOT_SHIFT));
	return c->magic == CHUNK_MAGIC ? c : NULL;
}

bool sdsm_heap_owns(const struct sdsm_heap_space *s, const void *p)
{
	return chunk_of(s, p) != NULL;
}

static size_t meta_bytes(uint32_t np)
{
	size_t words = (np + 63) / 64;

	return sizeof(struct sdsm_heap_chunk) + 2 * 8 * words + 8UL * np + np;
}

/* A new chunk of at least @pages usable pages; heap locked. */
static struct sdsm_heap_chunk *chunk_new(struct sdsm_heap *h, size_t pages)
{
	struct sdsm_heap_space *s = h->space;
	struct sdsm_heap_chunk *c;
	uint32_t first, nslots, k, i, np, meta;
	bool reused = false;
	size_t len;
	uint32_t id = 0;
	char *m;
	int ret = -ENOMEM;

	np = s->chunk_pages;
	while (np - (meta_bytes(np) + PG - 1) / PG < pages) {
		if (np > (SDSM_HEAP_SLOTS / 4) * (SDSM_HEAP_SLOT_SIZE / PG)) {
			errno = ENOMEM;
			return NULL;
		}
		np += SDSM_HEAP_SLOT_SIZE / PG;
	}
	len = (size_t)np * PG;
	nslots = (len + SDSM_HEAP_SLOT_SIZE - 1) >> SDSM_HEAP_SLOT_SHIFT;

	pthread_mutex_lock(&s->lock);
	for (first = s->next_slot; first + nslots <= SDSM_HEAP_SLOTS; first++) {
		for (k = 0; k < nslots && !s->slots[first + k]; k++)
			;
		if (k < nslots) {
			first += k;
			continue;
		}
		ret = s->ops->map(s->ctx, (void *)(s->base + ((uintptr_t)first <<
						     SDSM_HEAP_SLOT_SHIFT)),
				  len, &h->policy, &id);
		if (ret != -EEXIST)
			break;
		first += nslots - 1;	/* someone else's mapping: skip it */
	}
	if (ret) {
		pthread_mutex_unlock(&s->lock);
		errno = ret == -EEXIST || ret == 0 ? ENOMEM : -ret;
		return NULL;
	}
	for (k = 0; k < nslots; k++) {
		__atomic_store_n(&s->slots[first + k], first + 1,
				 __ATOMIC_RELEASE);
		reused |= bit_test(s->released, first + k);
	}
	if (first == s->next_slot)
		s->next_slot = first + nslots;
	pthread_mutex_unlock(&s->lock);

	c = (struct sdsm_heap_chunk *)(s->base +
				       ((uintptr_t)first << SDSM_HEAP_SLOT_SHIFT));
	meta = (meta_bytes(np) + PG - 1) / PG;
	/* Where a chunk was released (ops->keeps_data): its old bytes. */
	if (reused)
		memset(c, 0, (size_t)meta * PG);
	c->heap = h;
	c->region_id = id;
	c->npages = np;
	c->nslots = nslots;
	m = (char *)(c + 1);
	c->used = (uint64_t *)m;
	m += 8 * ((np + 63) / 64);
	c->dirty = (uint64_t *)m;
	m += 8 * ((np + 63) / 64);
	c->start = (uint32_t *)m;
	m += 4UL * np;
	c->span = (uint32_t *)m;
	m += 4UL * np;
	c->kind = (uint8_t *)m;
	c->first = meta;
	c->hint = meta;
	bits_set(c->used, 0, meta, true);
	bits_set(c->dirty, 0, reused ? np : meta, true);
	for (i = 0; i < meta; i++)
		c->kind[i] = KIND_META;
	c->next = h->chunks;
	h->chunks = c;
	c->magic = CHUNK_MAGIC;
	return c;
}

static void chunk_release(struct sdsm_heap *h, struct sdsm_heap_chunk *c)
{
	struct sdsm_heap_space *s = h->space;
	struct sdsm_heap_chunk **pp;
	uint32_t first, k, id = c->region_id, nslots = c->nslots;
	size_t len = (size_t)c->npages * PG;

	for (pp = &h->chunks; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	c->magic = 0;
	first = ((uintptr_t)c - s->base) >> SDSM_HEAP_SLOT_SHIFT;
	s->ops->unmap(s->ctx, c, len, id);
	pthread_mutex_lock(&s->lock);
	for (k = 0; k < nslots; k++)
		__atomic_store_n(&s->slots[first + k], 0, __ATOMIC_RELEASE);
	if (s->ops->keeps_data)
		bits_set(s->released, first, nslots, true);
	if (first < s->next_slot)
		s->next_slot = first;
	pthread_mutex_unlock(&s->lock);
}

/*
 * First fit of @n free pages starting at a multiple of @align pages, or 0
 * (page 0 is always metadata).
 */
static uint32_t chunk_find(struct sdsm_heap_chunk *c, uint32_t n,
			   uint32_t align)
{
	uint32_t i = c->hint, run = 0, at = 0;

	while (i < c->npages) {
		if (!(i % 64) && c->used[i / 64] == ~0ULL) {
			run = 0;
			i += 64;
			continue;
		}
		if (bit_test(c->used, i)) {
			run = 0;
		} else if (run || !(i % align)) {
			if (!run)
				at = i;
			if (++run == n)
				return at;
		}
		i++;
	}
	return 0;
}

/*
 * Pages [at, at + n) become a span of @kind; those of its first @clear
 * pages that were handed out before are zeroed.
 */
static void *chunk_take(struct sdsm_heap_chunk *c, uint32_t at, uint32_t n,
			uint8_t kind, uint32_t clear)
{
	char *base = (char *)c;
	uint32_t i;

	bits_set(c->used, at, n, true);
	for (i = at; i < at + n; i++) {
		c->start[i] = at;
		c->kind[i] = kind;
		if (i < at + clear && bit_test(c->dirty, i))
			memset(base + (size_t)i * PG, 0, PG);
	}
	bits_set(c->dirty, at, n, true);
	c->span[at] = n;
	c->nused += n;
	if (at == c->hint)
		c->hint = at + n;
	return base + (size_t)at * PG;
}

/* Pages [at, at + n) of a span go back to the chunk. */
static void chunk_put(struct sdsm_heap_chunk *c, uint32_t at, uint32_t n)
{
	memset(c->kind + at, KIND_FREE, n);
	bits_set(c->used, at, n, false);
	c->nused -= n;
	if (at < c->hint)
		c->hint = at;
}

static void *heap_span(struct sdsm_heap *h, size_t pages, uint32_t align,
		       uint8_t kind, uint32_t clear,
		       struct sdsm_heap_chunk **cp)
{
	struct sdsm_heap_chunk *c;
	uint32_t at;

	if (pages >= UINT32_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	for (c = h->chunks; c; c = c->next) {
		if (c->npages - c->nused - c->first < pages)
			continue;
		at = chunk_find(c, pages, align);
		if (at)
			goto found;
	}
	c = chunk_new(h, pages + align - 1);
	if (!c)
		return NULL;
	at = chunk_find(c, pages, align);
	if (!at) {
		errno = ENOMEM;
		return NULL;
	}
found:
	*cp = c;
	return chunk_take(c, at, pages, kind, clear);
}

/* ---- runs ---- */

static void run_list_add(struct sdsm_heap *h, struct sdsm_heap_run *r)
{
	r->prev = NULL;
	r->next = h->partial[r->cls];
	if (r->next)
		r->next->prev = r;
	h->partial[r->cls] = r;
	r->listed = 1;
}

static void run_list_del(struct sdsm_heap *h, struct sdsm_heap_run *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		h->partial[r->cls] = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->listed = 0;
}

static void *run_alloc(struct sdsm_heap *h, unsigned int cls)
{
	struct sdsm_heap_run *r = h->partial[cls];
	struct sdsm_heap_chunk *c;
	uint32_t idx;
	char *blk;

	if (!r) {
		r = heap_span(h, cls_pages[cls], 1, KIND_RUN, 0, &c);
		if (!r)
			return NULL;
		r->magic = RUN_MAGIC;
		r->cls = cls;
		r->nblocks = cls_nblocks[cls];
		r->nfree = r->nblocks;
		r->bump = 0;
		r->free_head = 0;
		r->off = cls_off[cls];
		r->size = cls_size[cls];
		memset(r->bitmap, 0, 8 * ((r->nblocks + 63) / 64));
		run_list_add(h, r);
	}
	if (r->free_head) {
		idx = r->free_head - 1;
		blk = (char *)r + r->off + (size_t)idx * r->size;
		memcpy(&r->free_head, blk, sizeof(r->free_head));
	} else {
		idx = r->bump++;
		blk = (char *)r + r->off + (size_t)idx * r->size;
	}
	r->bitmap[idx / 64] |= 1ULL << (idx % 64);
	if (!--r->nfree)
		run_list_del(h, r);
	return blk;
}

/* ---- allocation ---- */

static void *heap_alloc(struct sdsm_heap *h, size_t size, size_t align,
			bool zero)
{
	struct sdsm_heap_chunk *c;
	size_t need, pages;
	bool small;
	char *p;

	if (!size)
		size = 1;
	if (align < 16)
		align = 16;
	if (align & (align - 1) || size > SIZE_MAX / 2 || align > SIZE_MAX / 4) {
		errno = align & (align - 1) ? EINVAL : ENOMEM;
		return NULL;
	}
	need = size + align - 16;
	small = need <= SDSM_HEAP_SMALL_MAX;
	pthread_mutex_lock(&h->lock);
	if (small) {
		p = run_alloc(h, size_cls[(need + 15) / 16]);
	} else {
		need = align <= PG ? size : size + align - PG;
		/*
		 * And one page more, as glibc's mmap()ed chunks have a page
		 * for their header: blocks of a power-of-two size made one
		 * after the other (a program's arrays) then do not lie a
		 * power of two apart, where the same element of each would
		 * be in the same set of the TLB and the caches (and in the
		 * same entry of QEMU's direct-mapped TLB).  The page costs
		 * address space, not memory: nobody touches it, nor does a
		 * zero-filled allocation clear it.
		 */
		pages = (need + PG - 1) / PG;
		p = heap_span(h, pages + 1, 1, KIND_LARGE, zero ? pages : 0,
			      &c);
	}
	pthread_mutex_unlock(&h->lock);
	if (!p)
		return NULL;
	p = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (zero && small)
		memset(p, 0, size);
	return p;
}

void *sdsm_heap_alloc(struct sdsm_heap *h, size_t size, size_t align)
{
	return heap_alloc(h, size, align, false);
}

/*
 * sdsm_heap_alloc(), zero-filled.  A span clears only its pages that were
 * handed out before: the others are still the region's zero pages, and
 * writing them would make this node the owner of pages another node's
 * thread may be the first to use (calloc() of a shared array).
 */
void *sdsm_heap_alloc_zeroed(struct sdsm_heap *h, size_t size, size_t align)
{
	return heap_alloc(h, size, align, true);
}

/*
 * Whole pages, starting at a page of the chunk (so of its region) whose
 * index is a multiple of @align: an interleaved allocation can start on
 * the first node of its rotation.
 */
void *sdsm_heap_alloc_pages(struct sdsm_heap *h, size_t size, bool zero,
			    unsigned int align)
{
	struct sdsm_heap_chunk *c;
	size_t pages;
	void *p;

	if (!size || size > SIZE_MAX / 2 || !align || align > 65536) {
		errno = size && align && align <= 65536 ? ENOMEM : EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&h->lock);
	pages = (size + PG - 1) / PG;
	p = heap_span(h, pages, align, KIND_LARGE, zero ? pages : 0, &c);
	pthread_mutex_unlock(&h->lock);
	return p;
}

/* Classify @p; chunk's heap locked by the caller.  0 or -EINVAL. */
static int find_locked(struct sdsm_heap_chunk *c, const void *p,
		       struct sdsm_heap_block *b, struct sdsm_heap_run **rp,
		       uint32_t *idxp)
{
	uint32_t pg = ((uintptr_t)p - (uintptr_t)c) / PG, st, idx;
	struct sdsm_heap_run *r;
	size_t off;

	if (pg >= c->npages)
		return -EINVAL;
	switch (c->kind[pg]) {
	case KIND_LARGE:
		st = c->start[pg];
		b->start = (char *)c + (size_t)st * PG;
		b->usable = (size_t)c->span[st] * PG;
		b->large = true;
		*rp = NULL;
		return 0;
	case KIND_RUN:
		r = (struct sdsm_heap_run *)((char *)c + (size_t)c->start[pg] * PG);
		off = (const char *)p - (char *)r;
		if (r->magic != RUN_MAGIC || off < r->off)
			return -EINVAL;
		idx = (off - r->off) / r->size;
		if (idx >= r->nblocks || !(r->bitmap[idx / 64] >> (idx % 64) & 1))
			return -EINVAL;
		b->start = (char *)r + r->off + (size_t)idx * r->size;
		b->usable = r->size;
		b->large = false;
		*rp = r;
		*idxp = idx;
		return 0;
	default:
		return -EINVAL;
	}
}

int sdsm_heap_find(struct sdsm_heap_space *s, const void *p,
		   struct sdsm_heap_block *b)
{
	struct sdsm_heap_chunk *c = chunk_of(s, p);
	struct sdsm_heap_run *r;
	uint32_t idx;
	int ret;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->heap->lock);
	ret = find_locked(c, p, b, &r, &idx);
	pthread_mutex_unlock(&c->heap->lock);
	return ret;
}

size_t sdsm_heap_usable(struct sdsm_heap_space *s, const void *p)
{
	struct sdsm_heap_block b;

	if (sdsm_heap_find(s, p, &b))
		return 0;
	return (char *)b.start + b.usable - (const char *)p;
}

/*
 * Free the allocation @p is in.  0, or -EINVAL when @p is not allocated
 * (never was, or freed already: a double free).
 */
int sdsm_heap_free(struct sdsm_heap_space *s, void *p)
{
	struct sdsm_heap_chunk *c = chunk_of(s, p);
	struct sdsm_heap_block b;
	struct sdsm_heap_run *r;
	struct sdsm_heap *h;
	uint32_t idx, st;
	char *blk;
	int ret;

	if (!c)
		return -EINVAL;
	h = c->heap;
	pthread_mutex_lock(&h->lock);
	ret = find_locked(c, p, &b, &r, &idx);
	if (ret)
		goto out;
	if (b.large) {
		st = ((char *)b.start - (char *)c) / PG;
		chunk_put(c, st, c->span[st]);
		if (!c->nused && c->npages > h->space->chunk_pages)
			chunk_release(h, c);
		goto out;
	}
	blk = b.start;
	r->bitmap[idx / 64] &= ~(1ULL << (idx % 64));
	memcpy(blk, &r->free_head, sizeof(r->free_head));
	r->free_head = idx + 1;
	r->nfree++;
	if (!r->listed) {
		run_list_add(h, r);
	} else if (r->nfree == r->nblocks && (r->next || r->prev)) {
		/* Empty and not the last run of its class: give it back. */
		run_list_del(h, r);
		r->magic = 0;
		st = ((char *)r - (char *)c) / PG;
		chunk_put(c, st, c->span[st]);
	}
out:
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/*
 * Give back the pages [p, p + len) of page spans, as munmap() of part of
 * an anonymous mapping does: what is left of a span stays allocated.
 */
int sdsm_heap_trim(struct sdsm_heap_space *s, void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, end;
	struct sdsm_heap_chunk *c;
	struct sdsm_heap *h;
	uint32_t pg, lim, st, se, i, from, to;

	if (a % PG || !len || len > SIZE_MAX - PG)
		return -EINVAL;
	end = a + ((len + PG - 1) & ~(PG - 1));
	c = chunk_of(s, p);
	if (!c || end > (uintptr_t)c + (size_t)c->npages * PG)
		return -EINVAL;
	h = c->heap;
	pthread_mutex_lock(&h->lock);
	pg = (a - (uintptr_t)c) / PG;
	lim = (end - (uintptr_t)c) / PG;
	while (pg < lim) {
		if (c->kind[pg] != KIND_LARGE) {
			pg++;
			continue;
		}
		st = c->start[pg];
		se = st + c->span[st];
		from = pg;
		to = se < lim ? se : lim;
		if (from > st)
			c->span[st] = from - st;
		if (to < se) {
			for (i = to; i < se; i++)
				c->start[i] = to;
			c->span[to] = se - to;
		}
		chunk_put(c, from, to - from);
		pg = to;
	}
	if (!c->nused && c->npages > s->chunk_pages)
		chunk_release(h, c);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

/* ---- for per-thread caches (libsdsm-preload.so) ---- */

/* The class of a small request, or -1 if it is served by page spans. */
int sdsm_heap_size_class(size_t size)
{
	if (size > SDSM_HEAP_SMALL_MAX)
		return -1;
	return size_cls[(size ? size + 15 : 16) / 16];
}

size_t sdsm_heap_class_size(int cls)
{
	return cls_size[cls];
}

/*
 * The class of @p if it is the start of a small block of @h, else -1.
 * No lock: a run lives while one of its blocks is allocated, and a block
 * in a thread's cache is allocated as far as the heap knows.  A wrong
 * answer for a pointer that is not allocated only sends it to
 * sdsm_heap_free(), which refuses it.
 */
int sdsm_heap_block_class(const struct sdsm_heap_space *s,
			  const struct sdsm_heap *h, const void *p)
{
	struct sdsm_heap_chunk *c = chunk_of(s, p);
	struct sdsm_heap_run *r;
	uint32_t pg;
	size_t off;

	if (!c || c->heap != h)
		return -1;
	pg = ((uintptr_t)p - (uintptr_t)c) / PG;
	if (pg >= c->npages ||
	    __atomic_load_n(&c->kind[pg], __ATOMIC_RELAXED) != KIND_RUN)
		return -1;
	r = (struct sdsm_heap_run *)((char *)c + (size_t)c->start[pg] * PG);
	off = (const char *)p - (char *)r;
	if (r->magic != RUN_MAGIC || r->cls >= SDSM_HEAP_CLASSES ||
	    off < r->off || (off - r->off) % r->size)
		return -1;
	return r->cls;
}

/* ---- fork and inspection ---- */

void sdsm_heap_lock_all(struct sdsm_heap_space *s)
{
	unsigned int i, n = __atomic_load_n(&s->nheaps, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		pthread_mutex_lock(&s->heaps[i].lock);
	pthread_mutex_lock(&s->lock);
}

void sdsm_heap_unlock_all(struct sdsm_heap_space *s)
{
	unsigned int i, n = s->nheaps;

	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		pthread_mutex_unlock(&s->heaps[i].lock);
}

/*
 * In a child after fork(): forget every chunk (they belong to the parent,
 * which keeps using them); their slots stay taken.  Every lock is held.
 */
void sdsm_heap_forget(struct sdsm_heap_space *s)
{
	unsigned int i;

	for (i = 0; i < SDSM_HEAP_SLOTS; i++)
		if (s->slots[i])
			s->slots[i] = SLOT_FOREIGN;
	for (i = 0; i < s->nheaps; i++) {
		s->heaps[i].chunks = NULL;
		memset(s->heaps[i].partial, 0, sizeof(s->heaps[i].partial));
	}
}

/* After privatizing a chunk in a child: its region is not the child's. */
void sdsm_heap_chunk_disown(void *chunk)
{
	((struct sdsm_heap_chunk *)chunk)->region_id = 0;
}

/*
 * Call @fn for every chunk with its address, length, the bytes of its
 * metadata and its "ever handed out" page bitmap; stops at a non-zero
 * return.  The caller holds every lock (sdsm_heap_lock_all()).
 */
int sdsm_heap_for_each_chunk(struct sdsm_heap_space *s, sdsm_heap_chunk_fn fn,
			     void *arg)
{
	struct sdsm_heap_chunk *c;
	unsigned int i;
	int ret;

	for (i = 0; i < s->nheaps; i++)
		for (c = s->heaps[i].chunks; c; c = c->next) {
			ret = fn(c, (size_t)c->npages * PG,
				 (size_t)c->first * PG, c->dirty, arg);
			if (ret)
				return ret;
		}
	return 0;
}

unsigned int sdsm_heap_nr_chunks(struct sdsm_heap_space *s)
{
	struct sdsm_heap_chunk *c;
	unsigned int i, n = 0;

	for (i = 0; i < s->nheaps; i++) {
		pthread_mutex_lock(&s->heaps[i].lock);
		for (c = s->heaps[i].chunks; c; c = c->next)
			n++;
		pthread_mutex_unlock(&s->heaps[i].lock);
	}
	return n;
}
