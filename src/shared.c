/* shared.c - the values references placed, with RSC_OPT_TRACK_SHARED: the
 * identity set rsc_decoder_shares answers from (open addressing, load at
 * most 1/2, behind a bit filter; arena memory, so a reset empties it).
 * Calls only the arena; the map functions (collections.c) and the chunk
 * stage note values here. */
#include "shared.h"

#include <string.h>

static inline void filter_add(struct shared_set *s, uint64_t h) {
  size_t bit = rsc__shared_filter_bit(s, h);
  s->filter[bit / 64] |= (uint64_t)1 << (bit % 64);
}

/* Into a set with room (load at most 1/2). */
static void shared_insert(struct shared_set *s, uintptr_t id, uint64_t h) {
  size_t i = (size_t)h & (s->cap - 1);
  while (s->slot[i]) i = (i + 1) & (s->cap - 1);
  s->slot[i] = id;
  filter_add(s, h);
  s->count++;
}

void rsc__note_shared_slow(rsc_decoder *d, uintptr_t id) {
  struct shared_set *s = &d->shared;
  uint64_t h = rsc__shared_hash(id);
  if (rsc__shared_set_has(s, id, h)) return;
  if ((s->count + 1) * 2 > s->cap) {
    /* Arena memory: the old tables stay behind until the reset. */
    size_t cap = s->cap ? s->cap * 2 : 64;
    uintptr_t *slot = (uintptr_t *)rsc__alloc(d, cap * sizeof *slot);
    uint64_t *filter = slot ? (uint64_t *)rsc__alloc(d, cap) : NULL; /* cap * 8 bits */
    if (!filter) return; /* the arena recorded the failure */
    memset(slot, 0, cap * sizeof *slot);
    memset(filter, 0, cap);
    struct shared_set old = *s;
    *s = (struct shared_set){slot, filter, cap, 0};
    for (size_t i = 0; i < old.cap; i++)
      if (old.slot[i]) shared_insert(s, old.slot[i], rsc__shared_hash(old.slot[i]));
  }
  shared_insert(s, id, h);
}

int rsc_decoder_shares(const rsc_decoder *d, uintptr_t id) {
  if (!d || !(d->opt.flags & RSC_OPT_TRACK_SHARED)) return 1;
  return rsc__shared_set_has(&d->shared, id, rsc__shared_hash(id));
}
