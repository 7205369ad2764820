/* path.c - reference paths ("$id:k1:k2"): splitting them into keys,
 * stepping along the keys (own properties of objects, arrays and elements,
 * with a key index for wide objects), and the path memo (path.h). Its state
 * is rsc_decoder.paths. Calls only the arena and the error helpers: the
 * chunk stage and the revive walk call here, never the other way. */
#include "path.h"

#include <string.h>

/* ---- stepping along a path ------------------------------------------------- */

static bool canonical_index(rsc_key k, uint32_t *out) {
  if (k.n == 0 || k.n > 10) return false;
  if (k.n > 1 && k.s[0] == '0') return false;
  uint64_t v = 0;
  for (uint32_t i = 0; i < k.n; i++) {
    if (k.s[i] < '0' || k.s[i] > '9') return false;
    v = v * 10 + (uint64_t)(k.s[i] - '0');
  }
  if (v >= 4294967295ull) return false;
  *out = (uint32_t)v;
  return true;
}

/* Wide objects. A path step scans an object's members, so n references
 * into one object of n members would take n^2 steps (JavaScript objects
 * are hash tables). The first step into an object of
 * more than WIDE_OBJECT members indexes its keys, which never change once
 * parsed (only values are filled in or deleted) and are distinct (parsing
 * drops duplicates). The index lives in the arena, found by the members
 * array in a table of the decoder; without memory for it, steps scan. */
#define WIDE_OBJECT 32

typedef struct wide_index {
  const rsc_member *members;
  uint32_t *pos; /* open addressing on the key hash: member position or ~0 */
  uint32_t cap;  /* a power of two, at least twice the members            */
} wide_index;

static const wide_index *wide_lookup(rsc_decoder *d, const rsc_node *obj) {
  const rsc_member *members = obj->u.members;
  if ((d->paths.wide_count + 1) * 2 > d->paths.wide_cap) {
    uint32_t cap = d->paths.wide_cap ? d->paths.wide_cap * 2 : 16;
    wide_index *t = (wide_index *)rsc__arena_alloc(&d->arena, cap * sizeof *t);
    if (!t) return NULL;
    memset(t, 0, cap * sizeof *t);
    for (uint32_t i = 0; i < d->paths.wide_cap; i++) {
      if (!d->paths.wide[i].members) continue;
      size_t h = (size_t)rsc__hash_final((uintptr_t)d->paths.wide[i].members) & (cap - 1);
      while (t[h].members) h = (h + 1) & (cap - 1);
      t[h] = d->paths.wide[i];
    }
    d->paths.wide = t;
    d->paths.wide_cap = cap;
  }
  size_t h = (size_t)rsc__hash_final((uintptr_t)members) & (d->paths.wide_cap - 1);
  for (; d->paths.wide[h].members; h = (h + 1) & (d->paths.wide_cap - 1))
    if (d->paths.wide[h].members == members) return &d->paths.wide[h];
  uint32_t cap = 64;
  while (cap < 2 * obj->len) cap *= 2;
  uint32_t *pos = (uint32_t *)rsc__arena_alloc(&d->arena, cap * sizeof *pos);
  if (!pos) return NULL;
  memset(pos, 0xff, cap * sizeof *pos);
  for (uint32_t i = 0; i < obj->len; i++) {
    uint32_t klen = rsc__member_klen(&members[i]);
    size_t k = (size_t)rsc__key_hash(d->hash_seed, members[i].key, klen) & (cap - 1);
    while (pos[k] != UINT32_MAX) k = (k + 1) & (cap - 1);
    pos[k] = i;
  }
  wide_index *w = &d->paths.wide[h];
  w->members = members;
  w->pos = pos;
  w->cap = cap;
  d->paths.wide_count++;
  return w;
}

/* The present member of obj named key, by a scan; NULL: none. */
static inline const rsc_node *scan_members(const rsc_node *obj, rsc_key key) {
  const rsc_member *m = obj->u.members, *end = m + obj->len;
  for (; m < end; m++)
    if (rsc__member_klen(m) == key.n && m->val.kind != RSC_UNDEFINED &&
        rsc__same_bytes(m->key, key.s, key.n))
      return &m->val;
  return NULL;
}

/* A step into an object of more than WIDE_OBJECT members: by its key index,
 * or by a scan without memory for one. Out of line: the common step into a
 * small object or an array stays a leaf with few registers to save. */
static __attribute__((noinline)) const rsc_node *step_wide(rsc_decoder *d, const rsc_node *value,
                                                           rsc_key key) {
  const wide_index *w = wide_lookup(d, value);
  if (w) {
    size_t k = (size_t)rsc__key_hash(d->hash_seed, key.s, key.n) & (w->cap - 1);
    for (; w->pos[k] != UINT32_MAX; k = (k + 1) & (w->cap - 1)) {
      const rsc_member *m = &value->u.members[w->pos[k]];
      if (rsc__member_klen(m) == key.n && rsc__same_bytes(m->key, key.s, key.n))
        return m->val.kind == RSC_UNDEFINED ? NULL : &m->val;
    }
    return NULL;
  }
  return scan_members(value, key);
}

const rsc_node *rsc__step_at(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *tmp) {
  switch (value->kind) {
  case RSC_OBJECT: {
    /* Own members only: nothing is inherited, so "constructor" and the
     * like exist only as own data. "__proto__" never does: the walk
     * deletes it before anything can step in (React's traversal guards
     * after CVE-2025-55182); refuse it here as well. */
    if (key.n == 9 && rsc__same_bytes(key.s, "__proto__", 9)) return NULL;
    if (value->len > WIDE_OBJECT) return step_wide(d, value, key);
    return scan_members(value, key);
  }
  case RSC_ARRAY: {
    uint32_t idx;
    if (canonical_index(key, &idx)) {
      if (idx >= value->len) return NULL;
      if (value->sub != ARR_NO_MARKER) return &value->u.items[idx];
      return idx ? &value->u.items[idx - 1] : &d->marker; /* only inside the walk */
    }
    if (key.n == 6 && rsc__same_bytes(key.s, "length", 6)) {
      *tmp = rsc__num((double)value->len);
      return tmp;
    }
    return NULL;
  }
  case RSC_ELEMENT: {
    /* An element is a plain object on the client: its own properties. */
    rsc_element *el = value->u.el;
    switch (key.n) {
    case 5: return rsc__same_bytes(key.s, "props", 5) ? &el->props : NULL;
    case 4: return rsc__same_bytes(key.s, "type", 4) ? &el->type : NULL;
    case 3:
      if (rsc__same_bytes(key.s, "key", 3)) return &el->key;
      if (!rsc__same_bytes(key.s, "ref", 3)) return NULL;
      *tmp = rsc__mk(RSC_NULL);
      return tmp;
    case 8:
      if (!rsc__same_bytes(key.s, "$$typeof", 8)) return NULL;
      *tmp = d->marker;
      return tmp;
    case 6:
      return (value->sub & EL_HAS_OWNER) && rsc__same_bytes(key.s, "_owner", 6) ? &el->owner : NULL;
    default: return NULL;
    }
  }
  default: return NULL;
  }
}

bool rsc__step(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *out) {
  rsc_node tmp;
  const rsc_node *at = rsc__step_at(d, value, key, &tmp);
  if (!at) return false;
  *out = *at;
  return true;
}

/* ---- the path memo (revive.h) ------------------------------------------------ */

/* Bytes from the first key of path to the end of its key n-1. */
static size_t prefix_text_len(const rsc_key *path, uint32_t n) {
  return (size_t)(path[n - 1].s + path[n - 1].n - path[0].s);
}

/* One entry of the memo: as rsc__memo_resume. */
static inline __attribute__((always_inline)) uint32_t
memo_resume_at(const struct path_memo *m, const rsc_node *root, const rsc_path *path,
               const rsc_scope *h, rsc_node *value, bool *hopped) {
  uint32_t depth = m->depth;
  if (!depth || path->n <= depth || memcmp(root, &m->root, sizeof *root) != 0) return 0;
  /* The same text over the same span is the same keys: both split at ':'.
   * (The prefix is keys 0 .. depth-1, all in path->head.) */
  const rsc_key *head = path->head;
  size_t len = prefix_text_len(head, depth);
  if (len != m->text_len || (head[0].s != m->text && memcmp(head[0].s, m->text, len) != 0))
    return 0;
  for (uint32_t i = 0; i < depth; i++) {
    if (memcmp(m->slot[i], &m->seen[i], sizeof m->seen[i]) != 0) return 0;
    if (m->seen[i].kind != RSC_LAZY) continue;
    const rsc_chunk *rc = m->seen[i].u.chunk;
    const rsc_node *to;
    if (h && rc == h->chunk) to = &h->value;
    else if (rc->state == CS_FULFILLED) to = &rc->value;
    else return 0;
    if (memcmp(to, &m->value[i], sizeof *to) != 0) return 0;
  }
  memcpy(value, &m->value[depth - 1], sizeof *value);
  if (m->hopped && hopped) *hopped = true;
  return depth;
}

uint32_t rsc__memo_resume(rsc_decoder *d, const rsc_node *root, const rsc_path *path,
                          const rsc_scope *h, rsc_node *value, bool *hopped) {
  struct path_memo *m = d->paths.memo;
  _Static_assert(RSC_PATH_WAYS == 2, "the most recent entry, then the other");
  uint32_t depth = memo_resume_at(&m[0], root, path, h, value, hopped);
  if (depth || !(depth = memo_resume_at(&m[1], root, path, h, value, hopped))) return depth;
  /* the other entry is the most recent now: entry 0 */
  struct path_memo t = m[0];
  m[0] = m[1];
  m[1] = t;
  return depth;
}

void rsc__memo_record(rsc_decoder *d, const rsc_node *root, const rsc_path *path, bool hopped) {
  const struct path_notes *w = &d->paths.notes;
  uint32_t n = path->n, depth = n - 1;
  if (n < 2 || depth > RSC_MEMO_DEPTH) return;
  /* in entry 0, the most recent; the entry it held becomes the other */
  d->paths.memo[1] = d->paths.memo[0];
  struct path_memo *m = &d->paths.memo[0];
  memcpy(&m->root, root, sizeof *root);
  m->text = path->head[0].s;
  m->text_len = prefix_text_len(path->head, depth);
  memcpy(m->slot, w->slot, depth * sizeof *m->slot);
  memcpy(m->seen, w->seen, depth * sizeof *m->seen);
  memcpy(m->value, w->led, depth * sizeof *m->value);
  m->hopped = hopped;
  m->depth = depth;
}

/* ---- splitting a reference into keys (rsc__split_path, path.h) ------------- */

/* The ':' of eight bytes (a little-endian word) as the high bits of their
 * bytes: a byte of w XOR ':' is zero exactly there, and this zero-byte test
 * has no borrow from one byte into the next. */
static inline uint64_t colon_bits(const char *s) {
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t w;
  memcpy(&w, s, 8);
  uint64_t x = w ^ 0x3a3a3a3a3a3a3a3aull;
  return ~(((x & low7) + low7) | x | low7);
}

/* rsc__find_colons (path.h). Reference paths are read for every deduplicated object
 * ("$0:props:children:1:props:users:93"), so eight bytes at a time. */
uint32_t rsc__find_colons(const char *s, size_t len, uint32_t *pos, uint32_t cap) {
  uint32_t n = 0;
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (len >= 8) {
    for (;; i += 8) {
      uint64_t bits;
      if (i + 8 <= len) {
        bits = colon_bits(s + i);
      } else {
        /* The last word, overlapping the one before: drop what it saw. */
        size_t seen = i - (len - 8);
        bits = colon_bits(s + len - 8) >> (8 * seen);
      }
      for (; bits; bits &= bits - 1) {
        if (n < cap) pos[n] = (uint32_t)(i + ((size_t)__builtin_ctzll(bits) >> 3));
        n++;
      }
      if (i + 8 >= len) return n;
    }
  }
#endif
  for (; i < len; i++) {
    if (s[i] != ':') continue;
    if (n < cap) pos[n] = (uint32_t)i;
    n++;
  }
  return n;
}
