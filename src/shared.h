/* shared.h - the values references placed (RSC_OPT_TRACK_SHARED). */
#ifndef RSC_SHARED_H
#define RSC_SHARED_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A reference placed v (RSC_OPT_TRACK_SHARED): v's identity, if it has
 * one, joins the set rsc_decoder_shares reads. */
void rsc__note_shared_slow(rsc_decoder *d, uintptr_t identity);
static inline void rsc__note_shared(rsc_decoder *d, const rsc_node *v) {
  if (!(d->opt.flags & RSC_OPT_TRACK_SHARED)) return;
  uintptr_t id = rsc_node_identity(v);
  if (id) rsc__note_shared_slow(d, id);
}

/* The set's lookups, inline: the writer asks for every container. */

/* The slot and the filter bit come from different bits of one hash. */
static inline uint64_t rsc__shared_hash(uintptr_t id) { return rsc__hash_final((uint64_t)id); }

/* The filter bit: the hash's high half first (its low bits pick the slot). */
static inline size_t rsc__shared_filter_bit(const struct shared_set *s, uint64_t h) {
  return (size_t)((h >> 32) | (h << 32)) & (s->cap * 8 - 1);
}

static inline bool rsc__shared_filter_has(const struct shared_set *s, uint64_t h) {
  size_t bit = rsc__shared_filter_bit(s, h);
  return (s->filter[bit / 64] >> (bit % 64)) & 1;
}

static inline bool rsc__shared_set_has(const struct shared_set *s, uintptr_t id, uint64_t h) {
  if (!s->count || !rsc__shared_filter_has(s, h)) return false;
  for (size_t i = (size_t)h & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
    if (s->slot[i] == id) return true;
  return false;
}

/* Whether a reference placed a value of this identity (with
 * RSC_OPT_TRACK_SHARED, which RSC_OPT_KEEP_ROWS sets; otherwise true). */
static inline bool rsc__shared_has(const rsc_decoder *d, uintptr_t id) {
  if (!(d->opt.flags & RSC_OPT_TRACK_SHARED)) return true;
  return rsc__shared_set_has(&d->shared, id, rsc__shared_hash(id));
}

#ifdef __cplusplus
}
#endif
#endif
