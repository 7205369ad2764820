/* arena.h - bump allocator on top of the caller's allocator. */
#ifndef RSC_ARENA_H
#define RSC_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rsc_arena_block {
  struct rsc_arena_block *prev;
  size_t size; /* usable bytes after the header                          */
  size_t used;
  bool aside; /* a block of one request, behind the head (alloc_slow)  */
} rsc_arena_block;

typedef struct rsc_arena {
  rsc_alloc alloc;
  rsc_arena_block *head;
  rsc_arena_block *spare; /* blocks kept by a reset, largest first      */
  size_t next_size;       /* size of the next block (grows geometrically)     */
  size_t total;           /* bytes held now                                   */
  size_t peak;            /* most bytes held                                  */
  size_t max_block;       /* blocks stop growing here (0: 4 MiB); the
                             allocation-failure tests make it tiny so that
                             every allocation site meets the allocator       */
  bool aside;             /* a request that does not fit while the head has
                             RSC_ARENA_ASIDE bytes free gets a block of its
                             own behind the head. rsc__arena_shrink_last
                             gives nothing back from such a block, so an
                             arena that shrinks its allocations as a rule
                             (the string arena) leaves this off            */
} rsc_arena;

#define RSC_ARENA_ASIDE 1024

void rsc__arena_init(rsc_arena *a, const rsc_alloc *alloc);
/* 8-byte aligned memory, or NULL when the allocator fails. Sizes round up
 * to 8, not 16: a member is 24 bytes, and 16-byte rounding cost the 8 a
 * props object of one member saves (nodes at 8 mod 16 read as fast). */
#define RSC_ARENA_ALIGN 8
static inline size_t rsc__arena_round(size_t size) {
  return (size + RSC_ARENA_ALIGN - 1) & ~(size_t)(RSC_ARENA_ALIGN - 1);
}
/* The slow path: a new block, or (aside) a block of its own behind the head. */
void *rsc__arena_alloc_slow(rsc_arena *a, size_t size, bool aside);

#define RSC_ARENA_HDR ((sizeof(rsc_arena_block) + 15) & ~(size_t)15)

/* The common case inline: bump within the current block. A request that
 * does not fit goes to a new block, or, with aside, while the head has
 * RSC_ARENA_ASIDE bytes free, to a block of its own behind the head (which
 * rsc__arena_shrink_last leaves as it is). */
static inline void *rsc__arena_alloc_placed(rsc_arena *a, size_t size, bool aside) {
  size = rsc__arena_round(size);
  rsc_arena_block *b = a->head;
  if (b && size && b->size - b->used >= size) {
    void *p = (char *)b + RSC_ARENA_HDR + b->used;
    b->used += size;
    return p;
  }
  return rsc__arena_alloc_slow(a, size, aside);
}
/* As the arena's `aside` switch says. */
static inline void *rsc__arena_alloc(rsc_arena *a, size_t size) {
  return rsc__arena_alloc_placed(a, size, a->aside);
}
/* As if the switch were set, for this request (a JSON row's string region). */
static inline void *rsc__arena_alloc_aside(rsc_arena *a, size_t size) {
  return rsc__arena_alloc_placed(a, size, true);
}
/* Bytes the head block can still hand out without a new block. */
static inline size_t rsc__arena_room(const rsc_arena *a) {
  return a->head ? a->head->size - a->head->used : 0;
}
void rsc__arena_free(rsc_arena *a);
/* Empties the arena but keeps its blocks for the allocations that follow
 * (memory already touched: no page faults, no unmap). Blocks grown a step
 * at a time over several are given back instead, and the next block holds
 * what they held: one block for the next decode (arena.c). */
void rsc__arena_reset(rsc_arena *a);
/* Empties a and b as a reset does (merging blocks grown a step at a time
 * only while the one block stays below a huge page), then gives back the
 * largest blocks until together they hold at most `limit` bytes (what a
 * decoder kept for the next one may hold, decoder.c). */
void rsc__arena_trim(rsc_arena *a, rsc_arena *b, size_t limit);
/* Gives back the tail of the most recent allocation p, keeping `keep` bytes
 * (p must be the last thing allocated from a). Nothing is given back when p
 * is not in the head block (an aside block of its own). */
static inline void rsc__arena_shrink_last(rsc_arena *a, void *p, size_t keep) {
  rsc_arena_block *b = a->head;
  if (!b || !p) return;
  size_t start = (size_t)((char *)p - ((char *)b + RSC_ARENA_HDR));
  if (start <= b->used) b->used = start + rsc__arena_round(keep);
}

/* Plain heap helpers over the same allocator (for buffers that grow). */
void *rsc__heap_alloc(const rsc_alloc *al, size_t size);
void *rsc__heap_realloc(const rsc_alloc *al, void *p, size_t old_size, size_t new_size);
void rsc__heap_free(const rsc_alloc *al, void *p);

#ifdef __cplusplus
}
#endif
#endif
