/* value.h - reading values through handles (internal).
 *
 * A handle is the `const rsc_node *` the public API hands out and takes.
 * Readers inside the library (accessors, bulk views, the dump, String()
 * of values) go through these helpers rather than through a node's
 * fields, so that what stands behind a handle is decided here alone: today
 * every handle is a node; a container is read item by item with an
 * iterator, never by indexing its storage, so a container whose items are
 * not an array of nodes can be walked in one pass as well.
 *
 * The stages that build and revive values (the JSON stage, revive.c,
 * collections.c, path.c) still read and write nodes directly, and so do
 * the read-through (settle.c) and the writer (encode.c). */
#ifndef RSC_VALUE_H
#define RSC_VALUE_H

#include "internal.h"

static inline rsc_kind rsc__kind(const rsc_node *h) { return (rsc_kind)h->kind; }

static inline int rsc__boolean(const rsc_node *h) { return h->u.boolean; }
static inline double rsc__number(const rsc_node *h) { return h->u.num; }

/* The text of a STRING, BIGINT, DATE, SYMBOL, TEMP_REF or FUNCTION. */
static inline const char *rsc__text(const rsc_node *h, uint32_t *len) {
  *len = h->len;
  return h->u.str;
}

/* Items of an ARRAY, MAP, SET or FORMDATA (a Map's keys and values
 * interleaved); an ITERATOR's is rsc__iter_array's. */
static inline uint32_t rsc__items_len(const rsc_node *h) { return h->len; }

/* The array an ITERATOR views. */
static inline const rsc_node *rsc__iter_array(const rsc_node *h) { return &h->u.iter->array; }

/* An object's visible members (absent ones are not counted). */
static inline size_t rsc__members_len(const rsc_node *h) {
  /* A pointer walk with a size_t count: GCC vectorises an index loop over
   * the 24-byte members into byte gathers that cost more than they save. */
  size_t c = 0;
  for (const rsc_member *m = h->u.members, *e = m + h->len; m < e; m++)
    if (m->val.kind != RSC_UNDEFINED) c++;
  return c;
}

/* A walk over a container's children in order: an ARRAY's, MAP's, SET's,
 * FORMDATA's or ITERATOR's items, or an OBJECT's visible members (key and
 * value). Any other kind has none.
 *
 *   rsc__iter it;
 *   for (rsc__iter_begin(&it, h); rsc__iter_next(&it);) use(it.val, it.key);
 *
 * A reader that knows the kind uses rsc__iter_items / rsc__next_item or
 * rsc__iter_members / rsc__next_member (no test of the kind per child).
 */
typedef struct rsc__iter {
  const rsc_node *val; /* the child's handle                            */
  const char *key;     /* OBJECT: the member's key (NUL-terminated); else NULL */
  uint32_t klen;
  uint32_t index; /* children returned so far                              */
  const char *at, *end;
  bool object;
} rsc__iter;

/* Begins a walk over an ARRAY's, MAP's, SET's or FORMDATA's items. */
static inline void rsc__iter_items(rsc__iter *it, const rsc_node *h) {
  it->val = NULL;
  it->key = NULL;
  it->klen = 0;
  it->index = 0;
  it->object = false;
  it->at = (const char *)h->u.items;
  it->end = (const char *)(h->u.items + h->len);
}

/* Begins a walk over an OBJECT's visible members. */
static inline void rsc__iter_members(rsc__iter *it, const rsc_node *h) {
  it->val = NULL;
  it->key = NULL;
  it->klen = 0;
  it->index = 0;
  it->object = true;
  it->at = (const char *)h->u.members;
  it->end = (const char *)(h->u.members + h->len);
}

/* Begins a walk over any value's children (none for other kinds). */
static inline void rsc__iter_begin(rsc__iter *it, const rsc_node *h) {
  switch (h ? h->kind : RSC_NONE) {
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: rsc__iter_items(it, h); return;
  case RSC_ITERATOR: rsc__iter_items(it, &h->u.iter->array); return;
  case RSC_OBJECT: rsc__iter_members(it, h); return;
  default:
    it->val = NULL;
    it->key = NULL;
    it->klen = 0;
    it->index = 0;
    it->object = false;
    it->at = it->end = NULL;
    return;
  }
}

/* The next item of a walk begun by rsc__iter_items. */
static inline bool rsc__next_item(rsc__iter *it) {
  if (it->at == it->end) return false;
  it->val = (const rsc_node *)it->at;
  it->at += sizeof(rsc_node);
  it->index++;
  return true;
}

/* The next member of a walk begun by rsc__iter_members. */
static inline bool rsc__next_member(rsc__iter *it) {
  const rsc_member *m = (const rsc_member *)it->at, *e = (const rsc_member *)it->end;
  while (m < e && m->val.kind == RSC_UNDEFINED) m++;
  if (m == e) {
    it->at = it->end;
    return false;
  }
  it->val = &m->val;
  it->key = m->key;
  it->klen = rsc__member_klen(m);
  it->at = (const char *)(m + 1);
  it->index++;
  return true;
}

/* The next child of a walk begun by rsc__iter_begin. */
static inline bool rsc__iter_next(rsc__iter *it) {
  return it->object ? rsc__next_member(it) : rsc__next_item(it);
}

/* Item i of an ARRAY, MAP, SET, FORMDATA or ITERATOR, or NULL past the end. */
static inline const rsc_node *rsc__item(const rsc_node *h, size_t i) {
  if (h->kind == RSC_ITERATOR) h = &h->u.iter->array;
  return i < h->len ? &h->u.items[i] : NULL;
}

/* What rsc_node_identity returns: the address of what a value holds, so
 * that the same container reached twice has the same identity; 0 for
 * values without one. */
static inline uintptr_t rsc__identity(const rsc_node *h) {
  switch (h->kind) {
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: return (uintptr_t)h->u.items;
  case RSC_OBJECT: return (uintptr_t)h->u.members;
  case RSC_ELEMENT: return (uintptr_t)h->u.el;
  case RSC_BLOB: return (uintptr_t)h->u.blob;
  case RSC_BINARY: return (uintptr_t)h->u.bytes;
  case RSC_ITERATOR: return (uintptr_t)h->u.iter;
  case RSC_STREAM: return (uintptr_t)h->u.stream;
  default: return 0;
  }
}

/* The element's parts. */
static inline const rsc_node *rsc__el_type(const rsc_node *h) { return &h->u.el->type; }
static inline const rsc_node *rsc__el_key(const rsc_node *h) { return &h->u.el->key; }
static inline const rsc_node *rsc__el_props(const rsc_node *h) { return &h->u.el->props; }
static inline const rsc_node *rsc__el_owner(const rsc_node *h) {
  return (h->sub & EL_HAS_OWNER) ? &h->u.el->owner : NULL;
}

#endif
