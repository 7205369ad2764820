/* path.h - reference paths: splitting "id:k1:k2", stepping along the keys,
 * and the memo that lets a run of paths sharing a prefix skip it. The
 * state lives in rsc_decoder.paths (struct rsc_paths, internal.h). */
#ifndef RSC_PATH_H
#define RSC_PATH_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * from d->paths.notes: the slots, what the walk read there, and where each value
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
  uint32_t gen; /* d->paths.notes.gen when it began */
} memo_walk;

static inline uint32_t rsc__memo_start(rsc_decoder *d, memo_walk *w, const rsc_node *root,
                                       const rsc_path *path, uint32_t from, const rsc_scope *h,
                                       rsc_node *value, bool *hopped) {
  uint32_t n = path->n;
  w->on = from == 0 && n >= 2 && n - 1 <= RSC_MEMO_DEPTH && !d->paths.plain_paths;
  w->gen = 0;
  if (!w->on) return from;
  uint32_t i = rsc__memo_resume(d, root, path, h, value, hopped);
  w->on = i == 0; /* a resumed walk keeps the memo as it is */
  w->gen = ++d->paths.notes.gen;
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
  if (i > 0) d->paths.notes.led[i - 1] = *value;
  if (i + 1 < n) {
    d->paths.notes.slot[i] = at;
    memcpy(&d->paths.notes.seen[i], at, sizeof d->paths.notes.seen[i]);
  }
}

static inline void rsc__memo_finish(rsc_decoder *d, const memo_walk *w, const rsc_node *root,
                                    const rsc_path *path, bool hopped) {
  if (w->on && d->paths.notes.gen == w->gen) rsc__memo_record(d, root, path, hopped);
}

/* Finds the ':' of s[0, len): the first cap offsets go to pos; returns how
 * many there are. */
uint32_t rsc__find_colons(const char *s, size_t len, uint32_t *pos, uint32_t cap);

/* Splits "id:k1:k2" into its keys (after the id), in *path; in the header
 * so that it stays inline in getOutlinedModel, its one caller. Deduplicated
 * objects come back as runs of paths that differ in their last key only,
 * so a path that repeats the last one up to its last ':' takes its keys
 * but the last from it: the same array (rsc_path.head), whose keys point
 * into the earlier text (the same bytes, which live as long). Otherwise
 * only the rest is split. false: a limit or out of memory (recorded). */
static inline bool rsc__split_path(rsc_decoder *d, const char *ref, size_t len, size_t *id_len,
                                   rsc_path *path) {
  /* The most recent entry is [0]; a path that shares the other's keys
   * makes it [0], and a new split goes in [0], the one there moving on. */
  struct split_cache *sc = d->paths.split;
  uint32_t small[16];
  uint32_t *pos = small;
  bool plain = d->paths.plain_paths;
  bool sharing = !plain && sc->n && len > sc->last && memcmp(ref, sc->text, sc->last + 1) == 0;
  if (!sharing && !plain) {
    struct split_cache t = sc[0];
    sharing = sc[1].n && len > sc[1].last && memcmp(ref, sc[1].text, sc[1].last + 1) == 0;
    sc[0] = sc[1];
    sc[1] = t;
    if (!sharing) sc[0].n = 0; /* the least recent one, to be written over */
  }
  size_t from = sharing ? sc->last + 1 : 0;
  uint32_t found = rsc__find_colons(ref + from, len - from, pos, 16);
  memset(path, 0, sizeof *path);
  if (sharing && !found) {
    /* The common case of a run: only the last key is new. */
    *id_len = sc->id_len;
    path->head = sc->head;
    path->last_s = ref + from;
    path->last_n = (uint32_t)(len - from);
    path->n = sc->n;
    return true;
  }
  /* Keys: the shared ones and the one the scan starts in, then one after
   * each colon found (without sharing, the first colon ends the id). */
  uint32_t shared = sharing ? sc->n - 1 : 0;
  uint32_t n = sharing ? shared + 1 + found : found;
  *id_len = sharing ? sc->id_len : found ? pos[0] : len;
  if (!n) return true;
  if (n > d->opt.limits.max_path_hops) {
    rsc__fail(d, RSC_ERR_LIMIT, d->row_offset, d->row_id, "reference path too long");
    return false;
  }
  if (found > 16) {
    pos = (uint32_t *)rsc__alloc(d, found * sizeof *pos);
    if (!pos) return false;
    (void)rsc__find_colons(ref + from, len - from, pos, found);
  }
  /* All n keys, the last one included: the array is made once per run. */
  rsc_key *keys = (rsc_key *)rsc__alloc(d, n * sizeof *keys);
  if (!keys) return false;
  uint32_t k = 0;
  if (sharing) {
    memcpy(keys, sc->head, shared * sizeof *keys);
    k = shared;
    size_t end = found ? from + pos[0] : len;
    keys[k].s = ref + from;
    keys[k].n = (uint32_t)(end - from);
    k++;
  }
  for (uint32_t c = 0; c < found; c++, k++) {
    size_t start = from + pos[c] + 1, end = c + 1 < found ? from + pos[c + 1] : len;
    keys[k].s = ref + start;
    keys[k].n = (uint32_t)(end - start);
  }
  if (found) sc->last = from + pos[found - 1];
  sc->text = ref;
  sc->id_len = *id_len;
  sc->head = keys;
  sc->n = n;
  path->head = keys;
  path->last_s = keys[n - 1].s;
  path->last_n = keys[n - 1].n;
  path->n = n;
  return true;
}

#ifdef __cplusplus
}
#endif
#endif
