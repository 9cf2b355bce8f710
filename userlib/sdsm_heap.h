/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The libsdsm allocator: one allocator for sdsm_alloc*() and for the
 * malloc family of libsdsm-preload.so.  Never installed.
 *
 * A space is a window of virtual addresses cut into 64 MiB slots.  A heap
 * (one per placement policy) takes chunks from its space: a chunk is one
 * mapping of one or more slots at a fixed address, backed by whatever the
 * space's ops map there (an sdsm region under the heap's policy in
 * libsdsm; anonymous memory in the host tests).  A chunk starts with its
 * own metadata (a page map) and hands out page spans: "large" spans
 * straight to the caller, and "runs" of one size class that hold small
 * blocks.  So many allocations share few regions, and free() finds the
 * chunk of any address by its slot.  See Documentation/preload.rst.
 */
#ifndef SDSM_HEAP_H
#define SDSM_HEAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdsm.h"

#define SDSM_HEAP_SLOT_SHIFT	26		/* 64 MiB slots */
#define SDSM_HEAP_SLOT_SIZE	(1UL << SDSM_HEAP_SLOT_SHIFT)
#define SDSM_HEAP_SLOTS		16384		/* a 1 TiB window */
#define SDSM_HEAP_MAX		16		/* policies per space */
#define SDSM_HEAP_CLASSES	36
#define SDSM_HEAP_SMALL_MAX	16384		/* larger: page spans */

/* Where libsdsm's heap lives: the same address on every node. */
#define SDSM_HEAP_BASE		0x110000000000UL

struct sdsm_heap_chunk;
struct sdsm_heap_run;

/**
 * struct sdsm_heap_ops - what backs a space's chunks
 * @map: map @len bytes at exactly @addr under @policy; 0, or a negative
 *	errno (-EEXIST: @addr is taken, the space tries further up); *@id
 *	is the backend's name for it (a region id), given back to @unmap
 * @unmap: undo @map
 * @keeps_data: @map and @unmap only hand out and take back parts of a
 *	reservation, whose memory keeps what was written there: a chunk
 *	mapped where another was released clears its metadata and takes
 *	every page as handed out before (zero-filled allocations clear
 *	them), where otherwise a fresh mapping reads zero.  Nothing is
 *	written at the release: freeing a large block costs no write of it.
 */
struct sdsm_heap_ops {
	int (*map)(void *ctx, void *addr, size_t len,
		   const struct sdsm_policy *policy, uint32_t *id);
	void (*unmap)(void *ctx, void *addr, size_t len, uint32_t id);
	bool keeps_data;
};

struct sdsm_heap {
	pthread_mutex_t lock;		/* everything below, and its chunks */
	struct sdsm_heap_space *space;
	struct sdsm_policy policy;
	struct sdsm_heap_chunk *chunks;
	struct sdsm_heap_run *partial[SDSM_HEAP_CLASSES];
	bool used;
};

/*
 * Locks: space->lock protects the slot table's writers, next_slot and
 * heaps[].used/nheaps; heap->lock protects a heap and its chunks.  The
 * order is heap->lock, then space->lock.  slots[] is read without a lock
 * (an address a caller frees keeps its chunk mapped).
 */
struct sdsm_heap_space {
	pthread_mutex_t lock;
	uintptr_t base;
	const struct sdsm_heap_ops *ops;
	void *ctx;
	uint32_t next_slot;
	unsigned int nheaps;
	unsigned int chunk_pages;	/* pages of a normal chunk */
	uint32_t slots[SDSM_HEAP_SLOTS];	/* first slot of its chunk + 1 */
	/* Slots a released chunk held (ops->keeps_data): not zero. */
	uint64_t released[SDSM_HEAP_SLOTS / 64];
	struct sdsm_heap heaps[SDSM_HEAP_MAX];
};

/* Per-allocation answers of sdsm_heap_find(). */
struct sdsm_heap_block {
	void *start;		/* what malloc returned (block or span start) */
	size_t usable;		/* bytes from start */
	bool large;		/* a page span */
};

void sdsm_heap_space_init(struct sdsm_heap_space *s, uintptr_t base,
			  const struct sdsm_heap_ops *ops, void *ctx);
struct sdsm_heap *sdsm_heap_get(struct sdsm_heap_space *s,
				const struct sdsm_policy *policy);
void *sdsm_heap_alloc(struct sdsm_heap *h, size_t size, size_t align);
void *sdsm_heap_alloc_zeroed(struct sdsm_heap *h, size_t size, size_t align);
void *sdsm_heap_alloc_pages(struct sdsm_heap *h, size_t size, bool zero,
			    unsigned int align);
int sdsm_heap_free(struct sdsm_heap_space *s, void *p);
bool sdsm_heap_owns(const struct sdsm_heap_space *s, const void *p);
int sdsm_heap_find(struct sdsm_heap_space *s, const void *p,
		   struct sdsm_heap_block *b);
int sdsm_heap_trim(struct sdsm_heap_space *s, void *p, size_t len);
size_t sdsm_heap_usable(struct sdsm_heap_space *s, const void *p);
int sdsm_heap_size_class(size_t size);
size_t sdsm_heap_class_size(int cls);
int sdsm_heap_block_class(const struct sdsm_heap_space *s,
			  const struct sdsm_heap *h, const void *p);
void sdsm_heap_lock_all(struct sdsm_heap_space *s);
void sdsm_heap_unlock_all(struct sdsm_heap_space *s);
void sdsm_heap_forget(struct sdsm_heap_space *s);
void sdsm_heap_chunk_disown(void *chunk);
typedef int (*sdsm_heap_chunk_fn)(void *addr, size_t len, size_t used_len,
				  const uint64_t *dirty, void *arg);
int sdsm_heap_for_each_chunk(struct sdsm_heap_space *s, sdsm_heap_chunk_fn fn,
			     void *arg);
unsigned int sdsm_heap_nr_chunks(struct sdsm_heap_space *s);

#endif /* SDSM_HEAP_H */
