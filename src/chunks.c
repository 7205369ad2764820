/* chunks.c - the chunk table and React's chunk lifecycle.
 *
 * Mirrors ReactFlightClient.js (19.3.1): pending chunks collect listener
 * records; a model row is revived when something waits on it or reads it;
 * a chunk whose revived value still waits on others is blocked until its
 * scope's dependency count drops to zero. Waking listeners runs from an
 * explicit job stack rather than recursion, so a chain of 10^5 rows each
 * waiting on the next settles without deepening the C stack.
 *
 * Calls path.c (a waiting reference's path, when its chunk settles),
 * collections.c (its map function) and, against the flow, revive.c by
 * one function: initialising a chunk revives its stored row (rsc__revive),
 * as React's initializeModelChunk does. The walk calls here to get, read
 * and wait on chunks. */
#include "chunks.h"
#include "json.h"

#include <math.h>

#include "collections.h"
#include "path.h"
#include "revive.h"
#include "rowlog.h"

/* Nested chunk initialisations allowed (a backward reference chain). */
#define RSC_MAX_INIT_DEPTH 1000

/* ---- the table ----------------------------------------------------------- */

/* React's server numbers rows from 0 up, so most ids index an array
 * (dense): a lookup is a load and a compare (hashing took 25-30
 * instructions, once or twice per row). Ids far beyond the count of chunks
 * (a lenient id, a forged one) go to a hash table, so the array stays
 * within 4 slots per chunk plus 128: it grows for an id below twice the
 * count plus 64. */
rsc_chunk *rsc__find_chunk(const rsc_decoder *d, int64_t id) {
  const chunk_table *t = &d->table;
  if ((uint64_t)id < t->dense_cap) return t->dense[id];
  if (!t->hashed) return NULL;
  size_t mask = t->cap - 1, h = (size_t)rsc__hash_final((uint64_t)id) & mask;
  for (;;) {
    rsc_chunk *c = t->slots[h];
    if (!c) return NULL;
    if (c->id == id) return c;
    h = (h + 1) & mask;
  }
}

/* Moves the hashed chunks into slots (cap of them, zeroed), those with ids
 * now below dense_cap into the array; cannot fail. */
static void rehash_into(rsc_decoder *d, rsc_chunk **slots, size_t cap) {
  chunk_table *t = &d->table;
  size_t hashed = 0;
  for (size_t i = 0; i < t->cap; i++) {
    rsc_chunk *c = t->slots[i];
    if (!c) continue;
    if ((uint64_t)c->id < t->dense_cap) {
      t->dense[c->id] = c;
      continue;
    }
    size_t h = (size_t)rsc__hash_final((uint64_t)c->id) & (cap - 1);
    while (slots[h]) h = (h + 1) & (cap - 1);
    slots[h] = c;
    hashed++;
  }
  rsc__heap_free(&d->arena.alloc, t->slots);
  t->slots = slots;
  t->cap = cap;
  t->hashed = hashed;
}

static rsc_chunk **new_slots(rsc_decoder *d, size_t cap) {
  rsc_chunk **slots = (rsc_chunk **)rsc__heap_alloc(&d->arena.alloc, cap * sizeof *slots);
  if (slots) memset(slots, 0, cap * sizeof *slots);
  return slots;
}

/* Rebuilds the hash table with cap slots. */
static bool rehash(rsc_decoder *d, size_t cap) {
  rsc_chunk **slots = new_slots(d, cap);
  if (!slots) return false;
  rehash_into(d, slots, cap);
  return true;
}

/* Makes the array hold id (the caller checked it is near the count). The
 * hash table's new slots come first: if the array grew and they then
 * failed, hashed ids below the new size would be looked for in the array
 * only, and not found (fuzz_walk: a chunk listed by rsc_decoder_chunk_at
 * that rsc_decoder_chunk did not find, after an allocation failure). */
static bool dense_grow(rsc_decoder *d, uint64_t id) {
  chunk_table *t = &d->table;
  size_t cap = t->dense_cap ? t->dense_cap * 2 : 64;
  while (cap <= id) cap *= 2;
  rsc_chunk **slots = NULL;
  if (t->hashed && !(slots = new_slots(d, t->cap))) return false;
  rsc_chunk **dense = (rsc_chunk **)rsc__heap_realloc(
      &d->arena.alloc, t->dense, t->dense_cap * sizeof *dense, cap * sizeof *dense);
  if (!dense) {
    rsc__heap_free(&d->arena.alloc, slots);
    return false;
  }
  memset(dense + t->dense_cap, 0, (cap - t->dense_cap) * sizeof *dense);
  t->dense = dense;
  t->dense_cap = cap;
  if (slots) rehash_into(d, slots, t->cap);
  return true;
}

rsc_chunk *rsc__new_chunk(rsc_decoder *d, uint8_t state) {
  rsc_chunk *c = (rsc_chunk *)rsc__alloc(d, sizeof *c);
  if (!c) return NULL;
  *c = (rsc_chunk){.id = -1, .state = state, .owner = d};
  return c;
}

rsc_chunk *rsc__add_chunk(rsc_decoder *d, int64_t id, uint8_t state) {
  chunk_table *t = &d->table;
  if (t->count >= d->opt.limits.max_chunks) {
    rsc__fail(d, RSC_ERR_LIMIT, d->row_offset, d->row_id, "too many chunks");
    return NULL;
  }
  uint64_t key = (uint64_t)id;
  bool dense = key < t->dense_cap;
  if (!dense && key < 2 * (uint64_t)t->count + 64) {
    if (!dense_grow(d, key)) {
      rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, d->row_id, "out of memory");
      return NULL;
    }
    dense = true;
  }
  if (!dense && (t->hashed + 1) * 2 > t->cap && !rehash(d, t->cap ? t->cap * 2 : 64)) {
    rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, d->row_id, "out of memory");
    return NULL;
  }
  if (t->count == t->order_cap) {
    size_t cap = t->order_cap ? t->order_cap * 2 : 64;
    rsc_chunk **o = (rsc_chunk **)rsc__heap_realloc(&d->arena.alloc, t->order,
                                                    t->order_cap * sizeof *o, cap * sizeof *o);
    if (!o) {
      rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, d->row_id, "out of memory");
      return NULL;
    }
    t->order = o;
    t->order_cap = cap;
  }
  rsc_chunk *c = rsc__new_chunk(d, state);
  if (!c) return NULL;
  c->id = id;
  if (dense) {
    t->dense[key] = c;
  } else {
    size_t h = (size_t)rsc__hash_final(key) & (t->cap - 1);
    while (t->slots[h]) h = (h + 1) & (t->cap - 1);
    t->slots[h] = c;
    t->hashed++;
  }
  t->order[t->count++] = c;
  return c;
}

void rsc__settle(rsc_decoder *d, rsc_chunk *c, uint8_t state) {
  c->state = state;
  if (d->opt.on_event && !c->notified &&
      (state == CS_FULFILLED || state == CS_REJECTED || state == CS_HALTED)) {
    c->notified = true;
    rsc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = RSC_EVENT_CHUNK_SETTLED;
    ev.chunk_id = c->id;
    ev.chunk = c;
    if (d->opt.on_event(d->opt.event_ctx, &ev) != 0)
      rsc__fail(d, RSC_ERR_USER, d->row_offset, d->row_id, "stopped by the consumer hook");
  }
}

rsc_chunk *rsc__get_chunk(rsc_decoder *d, int64_t id) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (c) return c;
  if (!d->closed) return rsc__add_chunk(d, id, CS_PENDING);
  /* After close a new id can never arrive (React's getChunk). */
  bool partial = (d->opt.flags & RSC_OPT_ALLOW_PARTIAL) != 0;
  c = rsc__add_chunk(d, id, partial ? CS_HALTED : CS_REJECTED);
  if (!c) return NULL;
  c->ended = CE_MISSING;
  if (!partial) c->reason = d->closed_error;
  return c;
}

/* ---- listeners and the wake loop ---------------------------------------- */

/* Whether a listener of this kind is an rsc_stream_listener. */
static inline bool stream_kind(uint8_t kind) { return kind >= LK_STREAM_ENQUEUE; }

/* Fills l (an rsc_stream_listener for the stream kinds) and appends it to
 * c's listeners. */
static inline void append_listener(rsc_chunk *c, rsc_listener *l, uint8_t kind, rsc_ref *ref,
                                   rsc_stream *s, rsc_chunk *target, rsc_node value) {
  l->kind = kind;
  l->ref = ref;
  if (stream_kind(kind)) {
    rsc_stream_listener *sl = (rsc_stream_listener *)l;
    sl->stream = s;
    sl->chunk = target;
    sl->value = value;
  }
  if (c->tail) {
    l->next = c->tail->next;
    c->tail->next = l;
  } else {
    l->next = l;
  }
  c->tail = l;
}

bool rsc__add_listener(rsc_decoder *d, rsc_chunk *c, uint8_t kind, rsc_ref *ref, rsc_stream *s,
                       rsc_chunk *target, rsc_node value) {
  size_t size = stream_kind(kind) ? sizeof(rsc_stream_listener) : sizeof(rsc_listener);
  rsc_listener *l = (rsc_listener *)rsc__alloc(d, size);
  if (!l) return false;
  append_listener(c, l, kind, ref, s, target, value);
  return true;
}

typedef struct wake_job {
  rsc_listener *cur;
  rsc_node value;
  rsc_chunk *chunk;
  bool reject;
} wake_job;

static void stream_push(rsc_decoder *d, rsc_stream *s, rsc_node v);
static void stream_set_error(rsc_decoder *d, rsc_stream *s, rsc_node e);
static void resolve_model_chunk(rsc_decoder *d, rsc_chunk *c, rsc_node json,
                                const char *json_error);

static void run_listener(rsc_decoder *d, rsc_listener *l, rsc_node v, rsc_chunk *from,
                         bool reject) {
  if (l->kind == LK_REF) {
    if (reject) rsc__reject_reference(d, l->ref->handler, v);
    else rsc__fulfill_reference(d, l->ref, v, from);
    return;
  }
  if (!stream_kind(l->kind)) return; /* LK_NOOP */
  const rsc_stream_listener *sl = (const rsc_stream_listener *)l;
  switch (l->kind) {
  case LK_STREAM_ENQUEUE:
    if (reject) stream_set_error(d, sl->stream, v);
    else stream_push(d, sl->stream, v);
    break;
  case LK_STREAM_RESUME:
    if (!reject) {
      if (sl->stream->previous_blocked == sl->chunk) sl->stream->previous_blocked = NULL;
      resolve_model_chunk(d, sl->chunk, sl->value, l->json_error);
    }
    break;
  case LK_STREAM_CLOSE:
    if (!reject) sl->stream->end = RSC_STREAM_DONE;
    break;
  case LK_STREAM_ERROR:
    if (!reject) stream_set_error(d, sl->stream, sl->value);
    break;
  case LK_STREAM_PUSH:
    if (!reject) stream_push(d, sl->stream, sl->value);
    break;
  }
}

/* React's blockedChunk.then(onFulfilled) in a ReadableStream's controller:
 * at once when the chunk is fulfilled already (a blocked item stays the
 * stream's previousBlockedChunk after it resolves), never when it was
 * rejected (there is no onRejected: the item's own listener errored the
 * stream), else when it settles. */
static void after_blocked(rsc_decoder *d, rsc_chunk *blocked, uint8_t kind, rsc_stream *s,
                          rsc_chunk *target, rsc_node value, const char *json_error) {
  if (blocked->state == CS_FULFILLED) {
    rsc_stream_listener now = {.head = {.kind = kind, .json_error = json_error},
                               .stream = s,
                               .chunk = target,
                               .value = value};
    run_listener(d, &now.head, blocked->value, blocked, false);
    return;
  }
  if (blocked->state == CS_REJECTED) return;
  rsc_stream_listener *l = (rsc_stream_listener *)rsc__alloc(d, sizeof *l);
  if (!l) return;
  append_listener(blocked, &l->head, kind, NULL, s, target, value);
  l->head.json_error = json_error; /* LK_STREAM_RESUME's: no ref to share it */
}

/* React's wakeChunk / rejectChunk, run from a job stack: a job pushed while
 * another runs is finished first, which is the order recursion would take. */
static void run_listeners(rsc_decoder *d, rsc_listener *list, rsc_node v, rsc_chunk *c,
                          bool reject) {
  if (!list) return;
  if (d->jobs_len == d->jobs_cap) {
    size_t cap = d->jobs_cap ? d->jobs_cap * 2 : 64;
    wake_job *j = (wake_job *)rsc__heap_realloc(&d->arena.alloc, d->jobs, d->jobs_cap * sizeof *j,
                                                cap * sizeof *j);
    if (!j) {
      rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, d->row_id, "out of memory");
      return;
    }
    d->jobs = j;
    d->jobs_cap = cap;
  }
  wake_job *job = &d->jobs[d->jobs_len++];
  job->cur = list;
  job->value = v;
  job->chunk = c;
  job->reject = reject;
  if (d->waking) return;
  d->waking = true;
  while (d->jobs_len > 0) {
    if (d->err.code) { /* the decode has failed: nothing more to wake */
      d->jobs_len = 0;
      break;
    }
    wake_job *top = &d->jobs[d->jobs_len - 1];
    rsc_listener *l = top->cur;
    if (!l) {
      d->jobs_len--;
      continue;
    }
    top->cur = l->next;
    rsc_node val = top->value;
    rsc_chunk *from = top->chunk;
    bool rej = top->reject;
    run_listener(d, l, val, from, rej); /* may push jobs (and move d->jobs) */
  }
  d->waking = false;
}

static void wake_chunk(rsc_decoder *d, rsc_listener *list, rsc_node v, rsc_chunk *c) {
  run_listeners(d, list, v, c, false);
}

static void reject_chunk(rsc_decoder *d, rsc_listener *list, rsc_node e) {
  run_listeners(d, list, e, NULL, true);
}

/* React's resolveBlockedCycle is a depth-first search over every path of
 * waiting scopes: a chain of chunks each waited on twice by the next has
 * 2^n paths (React hangs on it). The search here is bounded in depth (C
 * stack) and in the listeners it may visit in all (time); past either
 * bound it reports no cycle, so the reference keeps waiting, which is what
 * a search that found nothing means (docs/hardening.md). */
enum { CYCLE_MAX_DEPTH = 64, CYCLE_MAX_VISITS = 1024 };

static rsc_scope *blocked_cycle(rsc_chunk *resolved, rsc_ref *ref, int depth, int *budget) {
  rsc_chunk *referenced = ref->handler->chunk;
  if (!referenced) return NULL;
  if (referenced == resolved) return ref->handler;
  if (depth > CYCLE_MAX_DEPTH) return NULL;
  rsc_listener *last = referenced->tail;
  for (rsc_listener *l = last ? last->next : NULL; l; l = l == last ? NULL : l->next) {
    if (l->kind != LK_REF) continue;
    if (--*budget < 0) return NULL;
    rsc_scope *h = blocked_cycle(resolved, l->ref, depth + 1, budget);
    if (h) return h;
  }
  return NULL;
}

rsc_scope *rsc__resolve_blocked_cycle(rsc_chunk *resolved, rsc_ref *ref, int depth) {
  int budget = CYCLE_MAX_VISITS;
  return blocked_cycle(resolved, ref, depth, &budget);
}

/* Whether filling ref with the value of scope `from` would make a row's
 * whole value the placeholder (null) of another whole value still waiting:
 * a row that is a reference to itself ("$0" as row 0) or rows whose whole
 * values reference each other in a circle, which no server writes and
 * React's client turns into null. Such a decode fails with
 * RSC_ERR_BAD_VALUE at the row that closes the circle (c's; NULL: the row
 * being decoded) unless RSC_OPT_LENIENT_VALUES. (A reference from inside
 * a value, as a Map's entries naming the Map, takes the placeholder as
 * React does: servers write those.) */
static bool placeholder_fill(rsc_decoder *d, const rsc_ref *ref, const rsc_scope *from,
                             const rsc_chunk *c) {
  if (ref->key_index != -2 || !from->root_waits || (d->opt.flags & RSC_OPT_LENIENT_VALUES))
    return false;
  bool self = c && ref->handler->chunk == c && from == ref->handler;
  uint64_t offset = c && c->has_row ? c->row_offset : d->row_offset;
  int64_t row = c && c->has_row ? c->row_id : d->row_id;
  rsc__fail(d, RSC_ERR_BAD_VALUE, offset, row,
            self ? "a row whose whole value is a reference to itself"
                 : "rows whose whole values reference each other in a circle");
  return true;
}

/* React's wakeChunkIfInitialized, with listeners detached from c first. */
static void wake_if_initialized(rsc_decoder *d, rsc_chunk *c, rsc_listener *list) {
  switch (c->state) {
  case CS_FULFILLED: wake_chunk(d, list, c->value, c); return;
  case CS_BLOCKED: {
    /* A listener whose scope leads back to c closes a cycle: fill it with
     * the partial value now instead of waiting forever. */
    rsc_listener *prev = NULL, *l = list;
    while (l) {
      rsc_listener *next = l->next;
      if (l->kind == LK_REF) {
        rsc_scope *cyc = rsc__resolve_blocked_cycle(c, l->ref, 0);
        if (cyc) {
          if (placeholder_fill(d, l->ref, cyc, c)) return;
          if (prev) prev->next = next;
          else list = next;
          rsc__fulfill_reference(d, l->ref, cyc->value, c);
          if (c->state == CS_FULFILLED) {
            wake_chunk(d, list, c->value, c);
            return;
          }
          if (c->state == CS_REJECTED) {
            reject_chunk(d, list, c->reason);
            return;
          }
          l = next;
          continue;
        }
      }
      prev = l;
      l = next;
    }
  }
    /* fall through */
  case CS_PENDING:
    if (list) {
      /* Back into the ring, after what was added meanwhile. */
      rsc_listener *tail = list;
      while (tail->next) tail = tail->next;
      if (c->tail) {
        tail->next = c->tail->next;
        c->tail->next = list;
      } else {
        tail->next = list;
      }
      c->tail = tail;
    }
    return;
  case CS_REJECTED: reject_chunk(d, list, c->reason); return;
  default: return;
  }
}

/* Takes c's listeners as a list ending in NULL, first to last. */
static rsc_listener *detach(rsc_chunk *c) {
  rsc_listener *last = c->tail;
  if (!last) return NULL;
  rsc_listener *first = last->next;
  last->next = NULL;
  c->tail = NULL;
  return first;
}

/* ---- scopes and references ----------------------------------------------- */

rsc_scope *rsc__current_scope_dep(rsc_decoder *d) {
  if (d->initializing_handler) {
    d->initializing_handler->deps++;
    return d->initializing_handler;
  }
  rsc_scope *h = (rsc_scope *)rsc__alloc(d, sizeof *h);
  if (!h) return NULL;
  memset(h, 0, sizeof *h);
  h->value = rsc__mk(RSC_NULL);
  h->deps = 1;
  d->initializing_handler = h;
  return h;
}

rsc_node rsc__wait_for_reference(rsc_decoder *d, rsc_chunk *c, rsc_ref *proto) {
  /* A development client without a debug channel drops owner and stack
   * references that are still pending instead of blocking on them. */
  if (d->dev && c->state == CS_PENDING && proto->tuple && rsc__is_marker(&proto->tuple[0]) &&
      (proto->key_index == 4 || proto->key_index == 5))
    return rsc__mk(RSC_NULL);
  rsc_scope *h = rsc__current_scope_dep(d);
  /* The reference and its first listener in one allocation (a reference
   * may get more listeners later, on lazies its path meets). */
  struct waiting {
    rsc_listener l;
    rsc_ref ref;
  } *w = (struct waiting *)rsc__alloc(d, sizeof *w);
  if (!h || !w) return rsc__mk(RSC_NULL);
  w->ref = *proto;
  w->ref.handler = h;
  if (proto->key_index == -2) h->root_waits = true;
  if ((proto->key_index == 1 || proto->key_index == 2) && proto->tuple &&
      rsc__is_marker(&proto->tuple[0]))
    h->lost_slot = true;
  append_listener(c, &w->l, LK_REF, &w->ref, NULL, NULL, rsc__mk(RSC_NONE));
  return rsc__mk(RSC_NULL);
}

void rsc__reject_reference(rsc_decoder *d, rsc_scope *h, rsc_node error) {
  if (h->errored) return;
  h->errored = true;
  h->value = rsc__mk(RSC_NULL);
  h->reason = error;
  rsc_chunk *c = h->chunk;
  if (!c || c->state != CS_BLOCKED) return;
  rsc__trigger_error(d, c, error);
}

static bool is_lazy(const rsc_node *v) { return v->kind == RSC_LAZY; }

void rsc__fulfill_reference(rsc_decoder *d, rsc_ref *ref, rsc_node value, rsc_chunk *from) {
  rsc_scope *h = ref->handler;
  rsc_node thrown;
  /* From the root, a path that shares its prefix with the last one walked
   * resumes at the prefix's end (the path memo, revive.h). */
  const rsc_node root = value;
  uint32_t n = ref->path.n;
  bool hopped = false;
  memo_walk memo;
  uint32_t i = rsc__memo_start(d, &memo, &root, &ref->path, ref->path_pos, h, &value, NULL);
  for (; i < n; i++) {
    lazy_hops hops = {NULL, 0, 0};
    uint32_t hop_count = 0;
    while (is_lazy(&value)) {
      /* A lazy on a path was inserted for a blocked element: look inside. */
      rsc_chunk *rc = value.u.chunk;
      if (rsc__lazy_cycle(&hops, rc)) break; /* a cycle of lazies: no object */
      hop_count++;
      if (rc == h->chunk) {
        value = h->value;
        continue;
      }
      rsc__read_chunk(d, rc);
      switch (rc->state) {
      case CS_FULFILLED: value = rc->value; continue;
      case CS_BLOCKED: {
        rsc_scope *cyc = rsc__resolve_blocked_cycle(rc, ref, 0);
        if (cyc) {
          memo.on = false;
          value = cyc->value;
          continue;
        }
      }
        /* fall through */
      case CS_PENDING:
        ref->path_pos = i;
        rsc__add_listener(d, rc, LK_REF, ref, NULL, NULL, rsc__mk(RSC_NONE));
        return;
      case CS_HALTED: return;
      default: rsc__reject_reference(d, h, rc->reason); return;
      }
    }
    if (hop_count) hopped = true;
    rsc_node tmp;
    const rsc_node *at = rsc__step_at(d, &value, rsc__path_key(&ref->path, i), &tmp);
    if (!at) {
      rsc__reject_reference(d, h, rsc__error_node(d, "Invalid reference.", NULL));
      return;
    }
    rsc__memo_note(d, &memo, i, n, hop_count, &value, at, &tmp);
    value = *at;
  }
  rsc__memo_finish(d, &memo, &root, &ref->path, hopped);
  lazy_hops hops = {NULL, 0, 0};
  while (is_lazy(&value)) {
    rsc_chunk *rc = value.u.chunk;
    if (rsc__lazy_cycle(&hops, rc)) break; /* the lazy stays the value */
    if (rc == h->chunk) {
      /* "$1" as row 0 and "$L0" as row 1: the row's own placeholder */
      if (placeholder_fill(d, ref, h, NULL)) return;
      value = h->value;
      continue;
    }
    rsc__read_chunk(d, rc);
    if (rc->state == CS_FULFILLED) {
      value = rc->value;
      continue;
    }
    break;
  }
  rsc_node mapped;
  if (!rsc__apply_map(d, ref->map, value, &mapped, &thrown)) {
    if (d->err.code) return;
    rsc__reject_reference(d, h, thrown);
    return;
  }
  *ref->slot = mapped;
  if (ref->map != MAP_MODEL && (d->opt.flags & RSC_OPT_KEEP_ROWS) && from)
    rsc__rowlog_map_form(d, ref->map, from->id, &mapped);
  if (ref->key_index == -2) h->root_waits = false;
  if (ref->key_index == -2 && h->value.kind == RSC_NULL) h->value = mapped;
  if (ref->tuple && rsc__is_marker(&ref->tuple[0]) && h->value.kind == RSC_ELEMENT) {
    rsc_element *el = h->value.u.el;
    if (ref->key_index == 3) el->props = mapped;
    else if (ref->key_index == 4 && (h->value.sub & EL_HAS_OWNER)) el->owner = mapped;
  }
  h->deps--;
  if (h->deps == 0) {
    rsc_chunk *c = h->chunk;
    if (!c || c->state != CS_BLOCKED) return;
    rsc_listener *list = detach(c);
    c->value = h->value;
    rsc__settle(d, c, CS_FULFILLED);
    wake_chunk(d, list, c->value, c);
  }
}

/* ---- state transitions ---------------------------------------------------- */

static void stream_error(rsc_decoder *d, rsc_stream *s, rsc_node e);

void rsc__trigger_error(rsc_decoder *d, rsc_chunk *c, rsc_node error) {
  if (c->state != CS_PENDING && c->state != CS_BLOCKED) {
    if (c->stream) stream_error(d, c->stream, error);
    return;
  }
  rsc_listener *list = detach(c);
  c->reason = error;
  rsc__settle(d, c, CS_REJECTED);
  reject_chunk(d, list, error);
}

void rsc__init_model_chunk(rsc_decoder *d, rsc_chunk *c) {
  if (d->init_depth >= RSC_MAX_INIT_DEPTH) {
    /* Initialising a chunk that references a chunk not yet initialised
     * nests (React does it recursively and overflows at about 850). Each
     * level costs about 620 bytes of C stack (1.5 KB under ASan), so 1000
     * levels fit a 1 MB thread stack (docs/hardening.md). */
    rsc__fail(d, RSC_ERR_LIMIT, d->row_offset, d->row_id, "reference chain too deep to initialise");
    return;
  }
  d->mode_locked = true; /* revived with the current semantics */
  /* Errors raised while reviving name the row the JSON came from, even
   * when it is revived later than it arrived (lazily, or at finish). */
  uint64_t prev_offset = d->row_offset;
  int64_t prev_row = d->row_id;
  if (c->has_row) {
    d->row_offset = c->row_offset;
    d->row_id = c->row_id;
  }
  if (!c->json_failed && !c->tail && !rsc__needs_revive(&c->value)) {
    /* Nothing to revive (no "$" string, no __proto__ key: most rows of
     * element-heavy pages, built while parsing) and nobody waiting: the
     * JSON is the value, as the walk below would leave it, and it holds
     * nothing a read-through must read. */
    c->reaches = 0;
    rsc__settle(d, c, CS_FULFILLED);
    d->row_offset = prev_offset;
    d->row_id = prev_row;
    return;
  }
  rsc_scope *prev_handler = d->initializing_handler;
  rsc_chunk *prev_chunk = d->initializing_chunk;
  d->initializing_handler = NULL;
  rsc_node json = c->value;
  bool failed = c->json_failed;
  const char *json_error = rsc__chunk_json_error(c);
  /* Blocked while we parse, so a cycle back to c waits instead of looping. */
  c->state = CS_BLOCKED;
  c->value = rsc__mk(RSC_NULL);
  c->json_failed = 0;
  d->initializing_chunk = c;
  d->init_depth++;
  bool prev_reaches = d->walk.reaches;
  d->walk.reaches = false;
  rsc_node thrown;
  bool ok;
  /* The root's holder ({"": root} in React) outlives this call: a
   * reference that resolves later writes into it. */
  rsc_node *holder = rsc__alloc_nodes(d, 1);
  if (!holder) {
    thrown = rsc__mk(RSC_NULL);
    ok = false;
  } else if (failed) {
    thrown = rsc__error_node(d, json_error, NULL);
    if (thrown.kind == RSC_ERROR) thrown.u.err->message_len = rsc__json_msg_len(json_error);
    ok = false;
  } else {
    *holder = json;
    ok = rsc__revive(d, holder, &thrown);
    json = *holder;
  }
  /* Known before the chunk settles: a listener or the consumer hook may
   * read chunks that wrap this one (revive.c asks). */
  c->reaches = d->walk.reaches || !ok;
  if (ok) {
    /* The scope knows its chunk and value before the references that c
     * made to itself are filled (React's initializeModelChunk): filling
     * the last of them settles c with the scope's value, which a
     * reference from the row's root to c itself ("$Q0" as row 0: a Map
     * of the null it stood for) has just set. */
    rsc_scope *h = d->initializing_handler;
    if (h && !h->errored) {
      h->value = json;
      h->chunk = c;
    }
    rsc_listener *self = detach(c);
    /* A decoder error ends the decode: the listeners after it would only
     * repeat the work that failed (each copying up to the limit). */
    for (rsc_listener *l = self; l && !d->err.code; l = l->next) {
      if (l->kind == LK_REF && h && placeholder_fill(d, l->ref, h, c)) break;
      if (l->kind == LK_REF) rsc__fulfill_reference(d, l->ref, json, c);
      else run_listener(d, l, json, c, false);
    }
    if (h && h->errored) {
      thrown = h->reason;
      ok = false;
    } else if (c->state == CS_BLOCKED && !(h && h->deps > 0)) {
      c->value = json;
      rsc__settle(d, c, CS_FULFILLED);
    }
  }
  if (!ok) {
    c->reason = thrown;
    rsc__settle(d, c, CS_REJECTED);
  }
  /* A value built from its own row alone, with no wrapper and no reference,
   * holds nothing a read-through would have to read. */
  c->reaches |= !ok;
  d->walk.reaches = prev_reaches || c->reaches;
  d->init_depth--;
  d->initializing_handler = prev_handler;
  d->initializing_chunk = prev_chunk;
  d->row_offset = prev_offset;
  d->row_id = prev_row;
}

void rsc__read_chunk(rsc_decoder *d, rsc_chunk *c) {
  if (c->state == CS_RESOLVED_MODEL) rsc__init_model_chunk(d, c);
}

/* Remembers the row being decoded as the one c's JSON came from. */
static void note_row(rsc_decoder *d, rsc_chunk *c) {
  c->has_row = true;
  c->row_offset = d->row_offset;
  c->row_id = d->row_id;
}

/* A resolved_model chunk's JSON: the parsed row, or the message of why it
 * did not parse (a failed row's value is never read). */
static inline void set_model(rsc_chunk *c, rsc_node json, const char *json_error) {
  c->json_failed = json_error != NULL;
  if (json_error) {
    c->value = rsc__mk(RSC_NONE);
    c->value.u.str = json_error;
  } else {
    c->value = json;
  }
}

static void resolve_model_chunk(rsc_decoder *d, rsc_chunk *c, rsc_node json,
                                const char *json_error) {
  if (!c->has_row) note_row(d, c);
  rsc_listener *list = detach(c);
  c->state = CS_RESOLVED_MODEL;
  set_model(c, json, json_error);
  if (list) {
    /* Something waits already: parse now (React reads it eagerly too). */
    rsc__init_model_chunk(d, c);
    wake_if_initialized(d, c, list);
  }
}

void rsc__resolve_model(rsc_decoder *d, int64_t id, rsc_node json, const char *json_error);

/* ---- streams ---------------------------------------------------------------- */

static bool stream_grow(rsc_decoder *d, rsc_stream *s) {
  if (s->len < s->cap) return true;
  uint32_t cap = s->cap ? s->cap * 2 : 8;
  if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) {
    rsc_node *n = rsc__alloc_nodes(d, cap);
    if (!n) return false;
    if (s->len) memcpy(n, s->items, s->len * sizeof *n);
    s->items = n;
  } else {
    rsc_chunk **n = (rsc_chunk **)rsc__alloc(d, cap * sizeof *n);
    if (!n) return false;
    if (s->len) memcpy(n, s->slots, s->len * sizeof *n);
    s->slots = n;
  }
  s->cap = cap;
  return true;
}

static void stream_push(rsc_decoder *d, rsc_stream *s, rsc_node v) {
  if (s->end != RSC_STREAM_OPEN) return; /* a closed or errored stream drops it */
  if (s->kind == RSC_STREAM_BYTES && (v.kind != RSC_BINARY || v.sub == RSC_ARRAY_BUFFER)) {
    /* A byte stream's controller takes views only: React's enqueue of a
     * model, text or ArrayBuffer item throws a TypeError out of the row
     * (uncaught; the rest of the network chunk is lost). */
    rsc__fail(d, RSC_ERR_BAD_ROW, d->row_offset, d->row_id,
              "a byte stream item that is not a binary view (only b rows and typed arrays)");
    return;
  }
  if (!stream_grow(d, s)) {
    rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, d->row_id, "out of memory");
    return;
  }
  s->items[s->len++] = v;
}

/* The web stream's controller.error(): queued items are discarded. */
static void stream_set_error(rsc_decoder *d, rsc_stream *s, rsc_node e) {
  (void)d;
  /* A closed stream whose queue a reader has not drained is still
   * readable: an error then (an item that waited behind a blocked one and
   * is rejected after the close, which React's controller did not wait
   * for) discards the queue, as it would when read after the end. */
  if (s->end == RSC_STREAM_ERRORED || (s->end == RSC_STREAM_DONE && s->len == 0)) return;
  s->end = RSC_STREAM_ERRORED;
  s->end_value = e;
  s->len = 0;
}

rsc_chunk *rsc__stream_slot(rsc_decoder *d, rsc_stream *s, uint32_t i) {
  while (s->len <= i) {
    if (!stream_grow(d, s)) return NULL;
    rsc_chunk *c = rsc__new_chunk(d, CS_PENDING);
    if (!c) return NULL;
    s->slots[s->len++] = c;
  }
  return s->slots[i];
}

/* {"done": done, "value": json} for an iterator result (React wraps the row
 * text the same way before parsing it). */
RSC_KEY(k_done, "done");
RSC_KEY(k_value, "value");
static rsc_node iter_result(rsc_decoder *d, bool done, rsc_node value) {
  rsc_member *m = (rsc_member *)rsc__alloc(d, 2 * sizeof *m);
  rsc_node o = rsc__mk(RSC_OBJECT);
  if (!m) return o;
  m[0].key = k_done.s;
  m[0].val = rsc__mk(RSC_BOOL);
  m[0].val.u.boolean = done;
  m[1].key = k_value.s;
  m[1].val = value;
  o.u.members = m;
  o.len = 2;
  if (value.flags & (NF_DOLLAR | NF_WALK)) o.flags |= NF_WALK;
  return o;
}

/* is_result: json is the item's iterator result, {"done":...,"value":<row>}
 * as its row parsed (decoder.c, parse_iterator_result); otherwise the
 * result {"done":done,"value":json} is made here (the end of a stream cut
 * short). */
static void iterable_enqueue_model(rsc_decoder *d, rsc_stream *s, rsc_node json,
                                   const char *json_error, bool is_result, bool done) {
  rsc_chunk *slot = rsc__stream_slot(d, s, s->next_write);
  if (!slot) return;
  s->next_write++;
  rsc_node result = json_error || is_result ? json : iter_result(d, done, json);
  if (slot->state == CS_PENDING) resolve_model_chunk(d, slot, result, json_error);
}

static void enqueue_model(rsc_decoder *d, rsc_stream *s, rsc_node json, const char *json_error) {
  if (s->kind == RSC_STREAM_ITERABLE || s->kind == RSC_STREAM_ITERATOR) {
    iterable_enqueue_model(d, s, json, json_error, true, false);
    return;
  }
  if (!s->previous_blocked) {
    rsc_chunk *c = rsc__new_chunk(d, CS_RESOLVED_MODEL);
    if (!c) return;
    note_row(d, c);
    set_model(c, json, json_error);
    rsc__init_model_chunk(d, c);
    if (c->state == CS_FULFILLED) {
      stream_push(d, s, c->value);
    } else {
      rsc__add_listener(d, c, LK_STREAM_ENQUEUE, NULL, s, NULL, rsc__mk(RSC_NONE));
      s->previous_blocked = c;
      if (c->state == CS_REJECTED) {
        rsc_listener *list = detach(c);
        reject_chunk(d, list, c->reason);
      }
    }
  } else {
    /* Wait behind the blocked item so values keep their order. */
    rsc_chunk *blocked = s->previous_blocked;
    rsc_chunk *c = rsc__new_chunk(d, CS_PENDING);
    if (!c) return;
    note_row(d, c); /* its JSON is this row's, revived later */
    rsc__add_listener(d, c, LK_STREAM_ENQUEUE, NULL, s, NULL, rsc__mk(RSC_NONE));
    s->previous_blocked = c;
    after_blocked(d, blocked, LK_STREAM_RESUME, s, c, json, json_error);
  }
}

static void enqueue_value(rsc_decoder *d, rsc_stream *s, rsc_node v) {
  if (s->kind == RSC_STREAM_ITERABLE || s->kind == RSC_STREAM_ITERATOR) {
    rsc_chunk *slot = rsc__stream_slot(d, s, s->next_write);
    if (!slot) return;
    s->next_write++;
    if (slot->state != CS_PENDING) return;
    rsc_listener *list = detach(slot);
    slot->value = iter_result(d, false, v);
    rsc__settle(d, slot, CS_FULFILLED);
    wake_if_initialized(d, slot, list);
    return;
  }
  if (!s->previous_blocked) stream_push(d, s, v);
  else after_blocked(d, s->previous_blocked, LK_STREAM_PUSH, s, NULL, v, NULL);
}

/* is_result: json is an iterable's end result as its row parsed
 * (iterable_enqueue_model). */
static void stream_close(rsc_decoder *d, rsc_stream *s, rsc_node json, const char *json_error,
                         bool is_result) {
  if (s->closed) return;
  s->closed = true;
  if (s->kind == RSC_STREAM_ITERABLE || s->kind == RSC_STREAM_ITERATOR) {
    iterable_enqueue_model(d, s, json, json_error, is_result, true);
    while (s->next_write < s->len) {
      rsc_chunk *slot = s->slots[s->next_write++];
      if (slot->state == CS_PENDING)
        resolve_model_chunk(d, slot, iter_result(d, true, rsc__mk(RSC_UNDEFINED)), NULL);
    }
    return;
  }
  if (!s->previous_blocked) {
    s->end = RSC_STREAM_DONE;
    s->end_value = rsc__mk(RSC_UNDEFINED);
  } else {
    rsc_chunk *blocked = s->previous_blocked;
    s->previous_blocked = NULL;
    after_blocked(d, blocked, LK_STREAM_CLOSE, s, NULL, rsc__mk(RSC_NONE), NULL);
  }
}

static void stream_error(rsc_decoder *d, rsc_stream *s, rsc_node e) {
  if (s->closed) return;
  s->closed = true;
  if (s->kind == RSC_STREAM_ITERABLE || s->kind == RSC_STREAM_ITERATOR) {
    if (s->next_write == s->len && !rsc__stream_slot(d, s, s->len)) return;
    while (s->next_write < s->len) rsc__trigger_error(d, s->slots[s->next_write++], e);
    return;
  }
  if (!s->previous_blocked) {
    stream_set_error(d, s, e);
  } else {
    rsc_chunk *blocked = s->previous_blocked;
    s->previous_blocked = NULL;
    after_blocked(d, blocked, LK_STREAM_ERROR, s, NULL, e, NULL);
  }
}

/* An async iterable's results as a reader sees them: fulfilled slots in
 * order, up to the first that is not an item. */
size_t rsc__stream_results(rsc_decoder *d, const rsc_stream *s, const rsc_chunk **end_slot) {
  size_t count = 0;
  *end_slot = NULL;
  for (uint32_t i = 0; i < s->len; i++) {
    rsc_chunk *c = s->slots[i];
    rsc__read_chunk(d, c);
    if (c->state != CS_FULFILLED) {
      *end_slot = c;
      break;
    }
    rsc_node tmp;
    if (c->value.kind == RSC_OBJECT && rsc__step(d, &c->value, (rsc_key){"done", 4}, &tmp) &&
        tmp.kind == RSC_BOOL && tmp.u.boolean) {
      *end_slot = c;
      break;
    }
    count++;
  }
  return count;
}

/* ---- row arrivals ---------------------------------------------------------- */

static rsc_status duplicate(rsc_decoder *d) {
  return rsc__fail(d, RSC_ERR_DUPLICATE_ROW, d->row_offset, d->row_id,
                   "a second row for a chunk that is not a stream");
}

void rsc__resolve_model(rsc_decoder *d, int64_t id, rsc_node json, const char *json_error) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (!c) {
    c = rsc__add_chunk(d, id, CS_RESOLVED_MODEL);
    if (!c) return;
    note_row(d, c);
    set_model(c, json, json_error);
    return;
  }
  if (c->state != CS_PENDING) {
    if (c->stream && c->state == CS_FULFILLED) enqueue_model(d, c->stream, json, json_error);
    else duplicate(d);
    return;
  }
  resolve_model_chunk(d, c, json, json_error);
}

rsc_status rsc__resolve_value(rsc_decoder *d, int64_t id, rsc_node value) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (c && c->state != CS_PENDING) {
    if (c->stream && c->state == CS_FULFILLED) {
      enqueue_value(d, c->stream, value);
      return d->err.code;
    }
    return duplicate(d);
  }
  if (!c) {
    c = rsc__add_chunk(d, id, CS_FULFILLED);
    if (!c) return d->err.code;
    c->value = value;
    rsc__settle(d, c, CS_FULFILLED);
    return d->err.code;
  }
  /* React replaces a pending chunk here and its waiters hang (FLIGHT-
   * PROTOCOL 2.8); resolving the existing chunk is the documented fix. */
  rsc_listener *list = detach(c);
  c->value = value;
  rsc__settle(d, c, CS_FULFILLED);
  wake_chunk(d, list, value, c);
  return d->err.code;
}

rsc_status rsc__resolve_error_row(rsc_decoder *d, int64_t id, rsc_node error) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (!c) {
    c = rsc__add_chunk(d, id, CS_REJECTED);
    if (!c) return d->err.code;
    c->reason = error;
    rsc__settle(d, c, CS_REJECTED);
    return d->err.code;
  }
  if (c->state != CS_PENDING && c->state != CS_BLOCKED && !c->stream) return duplicate(d);
  rsc__trigger_error(d, c, error);
  return d->err.code;
}

void rsc__resolve_module(rsc_decoder *d, int64_t id, rsc_node client_ref) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (!c) {
    c = rsc__add_chunk(d, id, CS_FULFILLED);
    if (!c) return;
    c->value = client_ref;
    rsc__settle(d, c, CS_FULFILLED);
    return;
  }
  if (c->state != CS_PENDING && c->state != CS_BLOCKED) return; /* React ignores it */
  rsc_listener *list = detach(c);
  c->value = client_ref;
  rsc__settle(d, c, CS_FULFILLED);
  wake_chunk(d, list, client_ref, c);
}

void rsc__resolve_halt(rsc_decoder *d, int64_t id) {
  rsc_chunk *c = rsc__get_chunk(d, id);
  if (!c || (c->state != CS_PENDING && c->state != CS_BLOCKED)) return;
  detach(c);
  rsc__settle(d, c, CS_HALTED);
}

void rsc__start_stream(rsc_decoder *d, int64_t id, rsc_stream_kind kind) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (c && c->state != CS_PENDING) return; /* React ignores a second start */
  rsc_stream *s = (rsc_stream *)rsc__alloc(d, sizeof *s);
  if (!s) return;
  memset(s, 0, sizeof *s);
  s->kind = (uint8_t)kind;
  if (kind == RSC_STREAM_ITERABLE || kind == RSC_STREAM_ITERATOR) d->has_iterables = true;
  rsc_node v = rsc__mk(RSC_STREAM);
  v.u.stream = s;
  if (!c) {
    c = rsc__add_chunk(d, id, CS_FULFILLED);
    if (!c) return;
    s->owner = c;
    c->stream = s;
    c->value = v;
    rsc__settle(d, c, CS_FULFILLED);
    return;
  }
  rsc_listener *list = detach(c);
  s->owner = c;
  c->stream = s;
  c->value = v;
  rsc__settle(d, c, CS_FULFILLED);
  wake_chunk(d, list, v, c);
}

void rsc__stop_stream(rsc_decoder *d, int64_t id, rsc_node json, bool has_json,
                      const char *json_error) {
  rsc_chunk *c = rsc__find_chunk(d, id);
  if (!c || c->state != CS_FULFILLED || !c->stream) return;
  if (!has_json) json = rsc__mk(RSC_UNDEFINED);
  stream_close(d, c->stream, json, json_error, has_json);
}

void rsc__close(rsc_decoder *d) {
  bool partial = (d->opt.flags & RSC_OPT_ALLOW_PARTIAL) != 0;
  d->closed = true;
  /* Chunks created while we go are visited too, as Map.forEach does. */
  for (size_t i = 0; i < d->table.count && !d->err.code; i++) {
    rsc_chunk *c = d->table.order[i];
    if (c->state == CS_PENDING) {
      c->ended = CE_MISSING;
      if (partial) {
        detach(c);
        rsc__settle(d, c, CS_HALTED);
      } else {
        rsc__trigger_error(d, c, d->closed_error);
      }
    } else if (c->state == CS_FULFILLED && c->stream) {
      if (!c->stream->closed) c->ended = CE_OPEN_STREAM;
      if (partial) stream_close(d, c->stream, rsc__mk(RSC_UNDEFINED), NULL, false);
      else stream_error(d, c->stream, d->closed_error);
    }
  }
}

/* ---- public accessors --------------------------------------------------- */

const rsc_chunk *rsc_decoder_root(rsc_decoder *d) { return d ? rsc__find_chunk(d, 0) : NULL; }

const rsc_chunk *rsc_decoder_chunk(rsc_decoder *d, int64_t id) {
  return d ? rsc__find_chunk(d, id) : NULL;
}

size_t rsc_decoder_chunk_count(const rsc_decoder *d) { return d ? d->table.count : 0; }

const rsc_chunk *rsc_decoder_chunk_at(const rsc_decoder *d, size_t i) {
  return d && i < d->table.count ? d->table.order[i] : NULL;
}

int64_t rsc_chunk_id(const rsc_chunk *c) { return c ? c->id : -1; }

/* A read parses a chunk whose row arrived but was not parsed yet, as
 * React's first read does; the owner decoder does the work. */
static void read_through(const rsc_chunk *c) {
  if (c && c->state == CS_RESOLVED_MODEL && c->owner && !c->owner->err.code)
    rsc__read_chunk(c->owner, (rsc_chunk *)c);
}

rsc_chunk_state rsc_chunk_status(const rsc_chunk *c) {
  if (!c) return RSC_CHUNK_PENDING;
  read_through(c);
  switch (c->state) {
  case CS_FULFILLED: return RSC_CHUNK_FULFILLED;
  case CS_REJECTED: return RSC_CHUNK_REJECTED;
  case CS_HALTED: return RSC_CHUNK_HALTED;
  case CS_BLOCKED: return RSC_CHUNK_BLOCKED;
  case CS_RESOLVED_MODEL: return RSC_CHUNK_BLOCKED;
  default: return RSC_CHUNK_PENDING;
  }
}

const rsc_node *rsc_chunk_value(const rsc_chunk *c) {
  read_through(c);
  return c && c->state == CS_FULFILLED ? &c->value : NULL;
}

const rsc_node *rsc_chunk_reason(const rsc_chunk *c) {
  read_through(c);
  return c && c->state == CS_REJECTED ? &c->reason : NULL;
}

int rsc_chunk_closed(const rsc_chunk *c) {
  if (!c) return 0;
  read_through(c);
  if (c->ended == CE_MISSING) return 1;
  return c->state == CS_REJECTED && rsc_error_closed(&c->reason);
}
