/* idmap.c - a map from value identities (addresses) to the first place a
 * walk met them, or a set of identities: the dump's and the settle walk's
 * memory of what they have seen. */
#include "idmap.h"

#include "arena.h"

static const rsc_alloc libc_alloc; /* no hooks: malloc and free */

static const rsc_alloc *rsc__idmap_alloc(const rsc_idmap *m) { return m->al ? m->al : &libc_alloc; }

uint64_t rsc__idmap_hash(uintptr_t p) {
  uint64_t x = (uint64_t)p;
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  return x;
}

/* Where k's place is kept, or NULL when k is absent (not for a set). */
uint32_t *rsc__idmap_place(rsc_idmap *m, uintptr_t k) {
  if (!m->cap) return NULL;
  size_t h = (size_t)rsc__idmap_hash(k) & (m->cap - 1);
  while (m->keys[h]) {
    if (m->keys[h] == k) return &m->places[h];
    h = (h + 1) & (m->cap - 1);
  }
  return NULL;
}

uint32_t rsc__idmap_get(rsc_idmap *m, uintptr_t k) {
  const uint32_t *p = rsc__idmap_place(m, k);
  return p ? *p : RSC_IDMAP_NONE;
}

/* Rehashes into cap slots (a power of two); false: out of memory, the map
 * unchanged. */
static bool rsc__idmap_grow(rsc_idmap *m, size_t cap) {
  const rsc_alloc *al = rsc__idmap_alloc(m);
  uintptr_t *keys = (uintptr_t *)rsc__heap_alloc(al, cap * sizeof *keys);
  uint32_t *places = m->set ? NULL : (uint32_t *)rsc__heap_alloc(al, cap * sizeof *places);
  if (!keys || (!places && !m->set)) {
    rsc__heap_free(al, keys);
    rsc__heap_free(al, places);
    return false;
  }
  memset(keys, 0, cap * sizeof *keys);
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t h = (size_t)rsc__idmap_hash(m->keys[i]) & (cap - 1);
    while (keys[h]) h = (h + 1) & (cap - 1);
    keys[h] = m->keys[i];
    if (places) places[h] = m->places[i];
  }
  rsc__heap_free(al, m->keys);
  rsc__heap_free(al, m->places);
  m->keys = keys;
  m->places = places;
  m->cap = cap;
  return true;
}

bool rsc__idmap_put(rsc_idmap *m, uintptr_t k, uint32_t place) {
  if ((m->count + 1) * 2 > m->cap && !rsc__idmap_grow(m, m->cap ? m->cap * 2 : 64)) return false;
  size_t h = (size_t)rsc__idmap_hash(k) & (m->cap - 1);
  while (m->keys[h]) h = (h + 1) & (m->cap - 1);
  m->keys[h] = k;
  if (m->places) m->places[h] = place;
  m->count++;
  return true;
}

uint32_t *rsc__idmap_slot(rsc_idmap *m, uintptr_t k) {
  if ((m->count + 1) * 2 > m->cap && !rsc__idmap_grow(m, m->cap ? m->cap * 2 : 64)) return NULL;
  size_t h = (size_t)rsc__idmap_hash(k) & (m->cap - 1);
  while (m->keys[h]) {
    if (m->keys[h] == k) return &m->places[h];
    h = (h + 1) & (m->cap - 1);
  }
  m->keys[h] = k;
  m->places[h] = RSC_IDMAP_NONE;
  m->count++;
  return &m->places[h];
}

void rsc__idmap_free(rsc_idmap *m) {
  rsc__heap_free(rsc__idmap_alloc(m), m->keys);
  rsc__heap_free(rsc__idmap_alloc(m), m->places);
}
