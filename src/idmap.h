/* idmap.h - identities (addresses of shared values) to places, or a set of
 * identities: open addressing, grown at half full, on the decoder's
 * allocator hooks (or libc when al is NULL). A zeroed rsc_idmap is empty. */
#ifndef RSC_IDMAP_H
#define RSC_IDMAP_H

#include "internal.h"

#define RSC_IDMAP_NONE UINT32_MAX

typedef struct rsc_idmap {
  uintptr_t *keys;
  uint32_t *places; /* the first place (see "places" below); NULL: a set */
  size_t cap, count;
  const rsc_alloc *al; /* the decoder's hooks (read-through), NULL: libc */
  bool set;            /* keys only: no places kept (the read-through's
                          identities, where they were a cache miss of their
                          own on every insert and a third of the map's
                          memory, at the decode's peak) */
} rsc_idmap;

uint64_t rsc__idmap_hash(uintptr_t p);
/* Where k's place is kept, or NULL when k is absent (not for a set). */
uint32_t *rsc__idmap_place(rsc_idmap *m, uintptr_t k);
/* k's place, or RSC_IDMAP_NONE. */
uint32_t rsc__idmap_get(rsc_idmap *m, uintptr_t k);
/* Adds k (absent) with its place; false: out of memory, the map unchanged. */
bool rsc__idmap_put(rsc_idmap *m, uintptr_t k, uint32_t place);
/* Where k's place is kept, k added with RSC_IDMAP_NONE when absent (not
 * for a set): one probe for a lookup that may insert. NULL: out of memory,
 * the map unchanged. The pointer holds until the next insert. */
uint32_t *rsc__idmap_slot(rsc_idmap *m, uintptr_t k);
void rsc__idmap_free(rsc_idmap *m);

#endif
