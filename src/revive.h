/* revive.h - the reviveModel walk: JSON nodes -> typed values, in place.
 * Knows no byte stream: it sees one parsed row at a time. */
#ifndef RSC_REVIVE_H
#define RSC_REVIVE_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Walks *root in place (React's parseModel after JSON.parse). Returns true,
 * or false when the walk threw: *thrown holds the error value (or the
 * decoder failed: check d->err). */
bool rsc__revive(rsc_decoder *d, rsc_node *root, rsc_node *thrown);

/* Whether the walk has anything to do in n: a "$" string, or a container
 * the JSON stage marked (a "$" string or a "__proto__" key below it). */
static inline bool rsc__needs_revive(const rsc_node *n) {
  if (n->kind == RSC_STRING) return (n->flags & NF_DOLLAR) != 0;
  return (n->kind == RSC_ARRAY || n->kind == RSC_OBJECT) && (n->flags & NF_WALK);
}

/* The element the walk makes of a tuple ["$", type, key, props, ...] that
 * holds nothing else to revive: no "$" string but its marker, no
 * "__proto__" key. Nothing can block or throw in such a tuple, so the
 * result is the plain element whenever the walk would meet it; the JSON
 * stage builds it as the tuple's array closes (production model rows; see
 * json_shim.cpp), and the walk never enters it. slots: the n slots after
 * the marker. false: out of memory. */
bool rsc__plain_element(rsc_decoder *d, rsc_node *slots, uint32_t n, rsc_node *out);

/* "$<id>" (lowercase hex, no path) naming a chunk already fulfilled whose
 * value reaches nothing unread: a text or binary row that has arrived, or a
 * model row read already. A fulfilled chunk never changes, so the walk
 * would place this very value here (getOutlinedModel on an initialized
 * chunk, in production, maps it as it is). The JSON stage places it while
 * parsing production model rows, so a row whose only references are such
 * values needs no walk, and its elements are built plain.
 * true: *out is the value; false: s takes the walk as usual. */
bool rsc__arrived_value(rsc_decoder *d, const char *s, uint32_t n, rsc_node *out);

/* Follows a path and applies a map function (React's fulfillReference tail
 * and getOutlinedModel's map step). Returns false on a throw. */
bool rsc__apply_map(rsc_decoder *d, uint8_t map, rsc_node value, rsc_node *out,
                    rsc_node *thrown);

/* Steps from value into key (own properties of plain objects, arrays and
 * elements only). false: "Invalid reference." */
bool rsc__step(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *out);

/* rsc__step, returning where the value is: a slot of value's container, or
 * tmp for a value made on the spot (an array's length, an element's ref or
 * $$typeof). NULL: "Invalid reference." */
const rsc_node *rsc__step_at(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *tmp);

/* The path memo. Deduplicated objects come back as references to where
 * they first appeared ("$0:props:children:1:props:users:93"), many sharing
 * all keys but the last. After a walk from root over path[0, n) whose first
 * n-1 steps read their values from slots, each value a lazy at most once
 * (the blocked element's wrapper), rsc__memo_record keeps that prefix
 * from d->notes: the slots, what the walk read there, and where each value
 * led. The next walk
 * from the same root with the same prefix resumes at the prefix's end
 * (rsc__memo_resume) once every slot holds what the first walk read there
 * and every lazy still leads where it led: keys never change once parsed
 * and containers are never freed while a decode lasts, so the same slots
 * give the same walk. A lazy leads, as the walks follow it, to h's value
 * when it wraps h's chunk (h: the waiting reference's scope, or NULL), else
 * to its fulfilled chunk's value. rsc__memo_resume returns the keys it
 * skipped (0: walk from the root), sets *value, and *hopped if a skipped
 * step went through a lazy. */
uint32_t rsc__memo_resume(rsc_decoder *d, const rsc_node *root, const rsc_path *path,
                          const rsc_scope *h, rsc_node *value, bool *hopped);
void rsc__memo_record(rsc_decoder *d, const rsc_node *root, const rsc_path *path, bool hopped);

/* A walk's part in the path memo, so that the walks that use it
 * (fulfillReference, getOutlinedModel) keep its rules in one place:
 * rsc__memo_start resumes from the memo where it can and returns the first
 * key to step (from when the memo does not apply); rsc__memo_note follows
 * each step of key i that read *at from *value, reached after `hops` lazy
 * hops (tmp: where the step puts a value it makes up); rsc__memo_finish
 * records the walk unless it cannot be (a hop too many, a made-up value on
 * the way, a resumed walk) or another walk ran inside it. */
typedef struct memo_walk {
  bool on;      /* the walk may still be recorded */
  uint32_t gen; /* d->notes.gen when it began */
} memo_walk;

static inline uint32_t rsc__memo_start(rsc_decoder *d, memo_walk *w, const rsc_node *root,
                                       const rsc_path *path, uint32_t from,
                                       const rsc_scope *h, rsc_node *value, bool *hopped) {
  uint32_t n = path->n;
  w->on = from == 0 && n >= 2 && n - 1 <= RSC_MEMO_DEPTH && !d->plain_paths;
  w->gen = 0;
  if (!w->on) return from;
  uint32_t i = rsc__memo_resume(d, root, path, h, value, hopped);
  w->on = i == 0; /* a resumed walk keeps the memo as it is */
  w->gen = ++d->notes.gen;
  return i;
}

static inline void rsc__memo_note(rsc_decoder *d, memo_walk *w, uint32_t i, uint32_t n,
                                  uint32_t hops, const rsc_node *value, const rsc_node *at,
                                  const rsc_node *tmp) {
  if (!w->on) return;
  if (hops > 1 || (hops && i == 0) || (i + 1 < n && at == tmp)) {
    w->on = false;
    return;
  }
  if (i > 0) d->notes.led[i - 1] = *value;
  if (i + 1 < n) {
    d->notes.slot[i] = at;
    memcpy(&d->notes.seen[i], at, sizeof d->notes.seen[i]);
  }
}

static inline void rsc__memo_finish(rsc_decoder *d, const memo_walk *w, const rsc_node *root,
                                    const rsc_path *path, bool hopped) {
  if (w->on && d->notes.gen == w->gen) rsc__memo_record(d, root, path, hopped);
}

/* A lazy wrapper node around c. */
rsc_node rsc__lazy(rsc_chunk *c);

/* JavaScript's parseInt(s, 16) as a chunk key; NaN maps to a key no row
 * can have. */
int64_t rsc__parse_ref_id(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
