/* arena.c - bump allocator: one malloc per block, never one per node. */
#define _DEFAULT_SOURCE 1
#include "arena.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#  include <sys/mman.h>
#endif

/* Big blocks from libc are aligned to 2 MiB and marked for transparent huge
 * pages: a fresh decoder touches all of its memory once, and one fault per
 * 2 MiB instead of per 4 KiB is most of the cost on large payloads. */
#define HUGE_BLOCK ((size_t)2 << 20)

static void *block_alloc(rsc_arena *a, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (!a->alloc.malloc && size >= HUGE_BLOCK) {
    void *p = NULL;
    if (posix_memalign(&p, HUGE_BLOCK, size) != 0) return NULL;
    madvise(p, size, MADV_HUGEPAGE);
    return p;
  }
#endif
  return rsc__heap_alloc(&a->alloc, size);
}

void *rsc__heap_alloc(const rsc_alloc *al, size_t size) {
  if (al->malloc) return al->malloc(al->ctx, size);
  return malloc(size);
}

void *rsc__heap_realloc(const rsc_alloc *al, void *p, size_t old_size, size_t new_size) {
  if (al->realloc) return al->realloc(al->ctx, p, old_size, new_size);
  if (al->malloc) {
    /* A malloc/free pair without realloc: copy by hand. */
    void *q = al->malloc(al->ctx, new_size);
    if (!q) return NULL;
    if (p) {
      memcpy(q, p, old_size < new_size ? old_size : new_size);
      if (al->free) al->free(al->ctx, p);
    }
    return q;
  }
  return realloc(p, new_size);
}

void rsc__heap_free(const rsc_alloc *al, void *p) {
  if (!p) return;
  if (al->free) al->free(al->ctx, p);
  else if (!al->malloc) free(p);
}

void rsc__arena_init(rsc_arena *a, const rsc_alloc *alloc) {
  memset(a, 0, sizeof *a);
  if (alloc) a->alloc = *alloc;
  a->next_size = 4096;
}

/* A new block of `size` usable bytes, counted in what the arena holds;
 * used 0. Not linked. */
static rsc_arena_block *block_new(rsc_arena *a, size_t size, bool aside) {
  if (size > SIZE_MAX - RSC_ARENA_HDR) return NULL;
  rsc_arena_block *b = (rsc_arena_block *)block_alloc(a, RSC_ARENA_HDR + size);
  if (!b) return NULL;
  b->size = size;
  b->used = 0;
  b->aside = aside;
  a->total += RSC_ARENA_HDR + size;
  if (a->total > a->peak) a->peak = a->total;
  return b;
}

/* A block of at least `size` usable bytes: one kept by a reset (already
 * mapped and touched; the smallest that fits, so the big block kept for a
 * big row is still there when that row comes again, not allocated anew
 * beside it; the list is short) or a new one of `want`. Not linked. */
static rsc_arena_block *block_get(rsc_arena *a, size_t size, size_t want) {
  rsc_arena_block **link = NULL;
  for (rsc_arena_block **l = &a->spare; *l; l = &(*l)->prev)
    if ((*l)->size >= size && (!link || (*l)->size < (*link)->size)) link = l;
  if (!link) return block_new(a, want, false);
  rsc_arena_block *b = *link;
  *link = b->prev;
  b->used = 0;
  return b;
}

/* The largest block the arena makes (past it, requests get blocks of their
 * own size). */
static size_t block_cap(const rsc_arena *a) {
  return a->max_block ? a->max_block : ((size_t)4 << 20);
}

void *rsc__arena_alloc_slow(rsc_arena *a, size_t size, bool aside) {
  size = rsc__arena_round(size);
  if (size == 0) size = RSC_ARENA_ALIGN;
  rsc_arena_block *b = a->head;
  if (b && b->size - b->used < size && aside && b->size - b->used >= RSC_ARENA_ASIDE) {
    /* The head still has room, too little for this (at least 1 KiB, then):
     * the request gets a block of its own behind the head, which goes on
     * serving what fits (a payload of many tiny rows would otherwise leave
     * much of each block's rest unused). Such a block is freed
     * by a reset, not kept: there may be one per request, and the spare
     * list a reset keeps must stay short. */
    rsc_arena_block *side = block_new(a, size, true);
    if (!side) return NULL;
    side->used = size;
    side->prev = b->prev;
    b->prev = side;
    return (char *)side + RSC_ARENA_HDR;
  }
  if (!b || b->size - b->used < size) {
    size_t want = a->next_size;
    if (want < size) want = size;
    b = block_get(a, size, want);
    if (!b) return NULL;
    b->prev = a->head;
    a->head = b;
    /* Grow geometrically up to 4 MiB blocks, so tiny payloads stay tiny:
     * below 2 MiB held the next block is an eighth of what is held, so
     * the arena holds at most 1.125x what it has handed out (larger steps
     * leave the last block mostly empty on small payloads). From 2 MiB on
     * it is a quarter: smaller steps mean many small blocks, each faulted
     * in 4 KiB at a time by a fresh decoder. A reused decoder is not
     * slowed by the extra blocks: its reset makes one block of what the
     * decode held. From 1 MiB on, blocks are whole huge pages, which a
     * fresh decoder faults in far faster (docs/performance.md). */
    size_t cap = block_cap(a);
    size_t step = a->total < HUGE_BLOCK ? a->total / 8 : a->total / 4;
    if (step > a->next_size) a->next_size = step;
    if (a->next_size >= HUGE_BLOCK / 2 && !a->max_block)
      a->next_size = (a->next_size + HUGE_BLOCK - 1) & ~(HUGE_BLOCK - 1);
    if (a->next_size > cap) a->next_size = cap;
  }
  void *p = (char *)b + RSC_ARENA_HDR + b->used;
  b->used += size;
  return p;
}

static void free_chain(rsc_arena *a, rsc_arena_block *b) {
  while (b) {
    rsc_arena_block *prev = b->prev;
    rsc__heap_free(&a->alloc, b);
    b = prev;
  }
}

void rsc__arena_free(rsc_arena *a) {
  free_chain(a, a->head);
  free_chain(a, a->spare);
  a->head = NULL;
  a->spare = NULL;
  a->total = 0;
}

static void reset_blocks(rsc_arena *a, size_t merge_max) {
  /* The blocks go before the spares left from an earlier reset (never
   * needed since); blocks of one request each go back to the allocator. */
  rsc_arena_block *b = a->head, *keep = a->spare;
  size_t held = 0; /* usable bytes this decode held, asides included */
  size_t largest = 0;
  unsigned blocks = 0;
  while (b) {
    rsc_arena_block *prev = b->prev;
    held += b->size;
    if (b->size > largest) largest = b->size;
    if (b->aside) {
      a->total -= RSC_ARENA_HDR + b->size;
      rsc__heap_free(&a->alloc, b);
    } else {
      b->prev = keep;
      keep = b;
      blocks++;
    }
    b = prev;
  }
  a->head = NULL;
  if (blocks > 2 && held <= merge_max && largest < held / 2) {
    /* The decode spread over blocks grown a step at a time (4 KiB first):
     * the next one gets a single block of what this one held, so that it
     * allocates in one bump run instead of opening a block (and scanning
     * the spares for one) every few rows and taking blocks of their own
     * for requests that fit no block's rest. What the arena holds
     * stays the same (the headers of the blocks fewer); this happens once
     * per size a reused decoder grows to. A decode with one big block
     * (a big row's) keeps its blocks: the big request finds its block
     * again after the small ones, which a shared block might not leave
     * room for. */
    free_chain(a, keep);
    keep = NULL;
    a->total = 0;
    a->next_size = held;
  }
  a->spare = keep;
  a->peak = a->total;
}

void rsc__arena_reset(rsc_arena *a) { reset_blocks(a, block_cap(a)); }

/* The largest blocks go first: from 1 MiB on they are huge pages, which
 * fault once per 2 MiB when taken again, while the small blocks fault
 * 4 KiB at a time: those are the ones worth keeping. Blocks are merged
 * into one of what they held, as a reset merges them, only below a huge
 * page: the next decoder's payload may be tiny, and a fresh huge page
 * zeroed for a few bytes took 90 us. */
void rsc__arena_trim(rsc_arena *a, rsc_arena *b, size_t limit) {
  reset_blocks(a, HUGE_BLOCK - RSC_ARENA_HDR - 1);
  reset_blocks(b, HUGE_BLOCK - RSC_ARENA_HDR - 1);
  rsc_arena *arenas[2] = {a, b};
  while (a->total + b->total > limit) {
    rsc_arena *from = NULL;
    rsc_arena_block **link = NULL;
    for (int i = 0; i < 2; i++)
      for (rsc_arena_block **l = &arenas[i]->spare; *l; l = &(*l)->prev)
        if (!link || (*l)->size > (*link)->size) {
          link = l;
          from = arenas[i];
        }
    if (!link) break; /* nothing left to give back */
    rsc_arena_block *big = *link;
    *link = big->prev;
    from->total -= RSC_ARENA_HDR + big->size;
    rsc__heap_free(&from->alloc, big);
  }
  a->peak = a->total;
  b->peak = b->total;
}
