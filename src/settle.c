/* settle.c - the read-through at finish: every chunk the root reaches is
 * read (initialised, as a consumer's first read does), so a finished
 * decoder holds a revived tree that output stages only read. It walks the
 * graph in the order the canonical dump does, so both meet chunks in the
 * same order and revive them the same way. */
#include "settle.h"

#include <stdlib.h>

#include "chunks.h"
#include "idmap.h"
#include "path.h"
#include "revive.h"

/* The dump's walk without printing: pre-order, children left to right, each
 * identity once, reading every lazy, promise and stream slot it meets in the
 * order the dump would. An explicit stack, no paths, of runs: n nodes from
 * `at`, stride bytes apart, to visit in order (a container's children are
 * one entry, not one each: a root of 2,000 lazies took 16 KB of pointers,
 * held at the decode's peak). A run with a stride is filtered (fw_needed);
 * a single node pushed alone (stride 0) is visited whatever it is. */
typedef struct fw_run {
  const char *at;
  uint32_t n, stride;
} fw_run;

typedef struct force_walk {
  rsc_decoder *d;
  fw_run *stack;
  size_t len, cap;
  rsc_idmap seen; /* identities met (places unused); chunks too, if no epoch */
  uint32_t epoch; /* chunks met are marked with it (force_mark); 0: none */
  bool fail;
  bool audit;    /* rsc__unread_reachable: enter everything, read nothing */
  size_t unread; /* audit: chunks met that are still unparsed rows */
  /* audit with RSC_OPT_TRACK_SHARED (rsc__unshared_repeats): chunk values
   * met (node addresses), identities rsc_decoder_shares does not name with
   * how they were met (1: as a chunk's value, 2: elsewhere), and how many
   * of those a converter would make twice */
  bool shares;
  rsc_idmap chunk_values, met;
  size_t unshared;
} force_walk;

static void fw_push_run(force_walk *f, const void *at, size_t n, uint32_t stride) {
  if (!n) return;
  if (f->len == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 32;
    fw_run *s = (fw_run *)rsc__heap_realloc(&f->d->arena.alloc, f->stack, f->cap * sizeof *s,
                                            cap * sizeof *s);
    if (!s) {
      f->fail = true;
      return;
    }
    f->stack = s;
    f->cap = cap;
  }
  /* Node counts are 32-bit (rsc_node.len). */
  f->stack[f->len++] = (fw_run){(const char *)at, (uint32_t)n, stride};
}

/* One node, visited whatever it is. */
static void fw_push(force_walk *f, const rsc_node *n) { fw_push_run(f, n, 1, 0); }

/* Adds an identity; false when it was there already. One probe: the
 * read-through meets every chunk and shared container here. */
static bool fw_first(force_walk *f, uintptr_t id) {
  rsc_idmap *m = &f->seen;
  if (m->cap) {
    size_t h = (size_t)rsc__idmap_hash(id) & (m->cap - 1);
    while (m->keys[h]) {
      if (m->keys[h] == id) return false;
      h = (h + 1) & (m->cap - 1);
    }
    if ((m->count + 1) * 2 <= m->cap) {
      m->keys[h] = id;
      m->count++;
      return true;
    }
  }
  if (!rsc__idmap_put(m, id, 0)) { /* grows the table */
    f->fail = true;
    return false;
  }
  return true;
}

/* Whether a value can lead to a chunk to read. A JSON container with no
 * "$" string inside (no NF_WALK) holds plain data only, and so does an
 * element whose tuple's walk met nothing that may lead to one (no
 * NF_REACH): a row of a table with one lazy cell enters that cell only. */
static bool fw_needed(const force_walk *f, const rsc_node *n) {
  switch (n->kind) {
  case RSC_NULL:
  case RSC_BOOL:
  case RSC_NUMBER:
  case RSC_STRING:
  case RSC_UNDEFINED:
  case RSC_BIGINT:
  case RSC_DATE:
  case RSC_SYMBOL:
  case RSC_TEMP_REF:
  case RSC_FUNCTION:
  case RSC_NONE:
  case RSC_ERROR: return false;
  case RSC_BINARY:
  case RSC_BLOB: return f->shares; /* values with identity, for the sharing audit */
  case RSC_ARRAY:
  case RSC_OBJECT: return f->audit || (n->flags & NF_WALK) != 0;
  case RSC_ELEMENT: return f->audit || (n->flags & NF_REACH) != 0;
  default: return true;
  }
}

/* A chunk's value about to be walked: a converter reaches it through its
 * chunk and remembers it whatever rsc_decoder_shares says. */
static void fw_chunk_value(force_walk *f, const rsc_node *n) {
  if (f->shares && rsc__idmap_get(&f->chunk_values, (uintptr_t)n) == RSC_IDMAP_NONE &&
      !rsc__idmap_put(&f->chunk_values, (uintptr_t)n, 1))
    f->fail = true;
  fw_push(f, n);
}

/* The sharing audit's view of one meeting of identity id at n: a value
 * met twice must be named by rsc_decoder_shares, unless every meeting is
 * as a chunk's value. */
static void fw_audit_meeting(force_walk *f, const rsc_node *n, uintptr_t id) {
  if (rsc_decoder_shares(f->d, id)) return;
  uint32_t how = rsc__idmap_get(&f->chunk_values, (uintptr_t)n) != RSC_IDMAP_NONE ? 1 : 2;
  uint32_t *met = rsc__idmap_place(&f->met, id);
  if (met) {
    if ((*met | how) & 2) f->unshared++;
    *met |= how;
  } else if (!rsc__idmap_put(&f->met, id, how)) {
    f->fail = true;
  }
}

static void fw_items(force_walk *f, const rsc_node *items, size_t n) {
  fw_push_run(f, items, n, sizeof *items);
}

static void fw_chunk(force_walk *f, rsc_chunk *c) {
  /* Each chunk once: a cycle of lazies (0:"$L0") has no identity to stop
   * at, and a second visit would read nothing new. A mark in the chunk
   * says so without hashing (every row is a chunk). */
  if (f->epoch) {
    if (c->force_mark == f->epoch) return;
    c->force_mark = f->epoch;
  } else if (!fw_first(f, (uintptr_t)c)) {
    return;
  }
  if (f->audit && c->state == CS_RESOLVED_MODEL) {
    f->unread++;
    return;
  }
  rsc__read_chunk(f->d, c);
  /* Chunks that are not model rows (text, binary, modules, streams' own
   * chunks) have reaches unset too; only streams need a look inside. */
  bool look = f->audit || c->reaches || c->stream || c->id < 0;
  if (c->state == CS_FULFILLED && look) fw_chunk_value(f, &c->value);
  else if (c->state == CS_REJECTED) fw_push(f, &c->reason);
}

static void fw_visit(force_walk *f, const rsc_node *n) {
  if (rsc__has_identity(n)) {
    uintptr_t id = rsc_node_identity(n);
    if (f->shares) fw_audit_meeting(f, n, id);
    if (!fw_first(f, id)) return;
  }
  switch (n->kind) {
  case RSC_ARRAY: fw_items(f, n->u.items, n->len); return;
  case RSC_OBJECT:
    if (n->len) fw_push_run(f, &n->u.members[0].val, n->len, sizeof(rsc_member));
    return;
  case RSC_ELEMENT:
    fw_push_run(f, &n->u.el->type, 3, sizeof(rsc_node)); /* type, key, props */
    return;
  case RSC_LAZY:
  case RSC_PROMISE: fw_chunk(f, n->u.chunk); return;
  case RSC_CLIENT_REF:
    /* Converters make one object per module reference (the dump writes
     * it out each time): the sharing audit meets its parts once. */
    if (f->shares && !fw_first(f, (uintptr_t)n->u.cref)) return;
    if (n->u.cref->import_map.kind != RSC_NONE) fw_push(f, &n->u.cref->import_map);
    fw_push(f, &n->u.cref->name);
    fw_push(f, &n->u.cref->chunks);
    fw_push(f, &n->u.cref->id);
    return;
  case RSC_SERVER_REF: {
    const rsc_server_ref *sr = n->u.sref;
    if (sr->bound.kind == RSC_PROMISE) {
      rsc_chunk *c = sr->bound.u.chunk;
      if (f->audit && c->state == CS_RESOLVED_MODEL) f->unread++;
      if (!f->audit) rsc__read_chunk(f->d, c);
      fw_chunk_value(f, c->state == CS_FULFILLED ? &c->value : &sr->bound);
    } else {
      fw_chunk_value(f, &sr->bound);
    }
    fw_push(f, &sr->id);
    return;
  }
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: fw_items(f, n->u.items, n->len); return;
  case RSC_ITERATOR: fw_items(f, n->u.iter->array.u.items, n->u.iter->array.len); return;
  case RSC_STREAM: {
    const rsc_stream *s = n->u.stream;
    if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) {
      if (s->end == RSC_STREAM_ERRORED) fw_push(f, &s->end_value);
      if (s->kind == RSC_STREAM_TEXT) fw_items(f, s->items, s->len);
      return;
    }
    if (f->audit) {
      /* The slots the read-through reads: in order, up to the first one
       * not fulfilled or done (rsc__stream_results). */
      for (uint32_t i = 0; i < s->len; i++) {
        rsc_chunk *c = s->slots[i];
        if (c->state == CS_RESOLVED_MODEL) {
          f->unread++;
          break;
        }
        if (c->state == CS_REJECTED) fw_push(f, &c->reason);
        if (c->state != CS_FULFILLED) break;
        fw_push(f, &c->value);
        rsc_node tmp;
        if (c->value.kind == RSC_OBJECT && rsc__step(f->d, &c->value, (rsc_key){"done", 4}, &tmp) &&
            tmp.kind == RSC_BOOL && tmp.u.boolean)
          break;
      }
      return;
    }
    const rsc_chunk *end; /* read in order, as the dump reads them */
    size_t count = rsc__stream_results(f->d, s, &end);
    if (end && end->state == CS_FULFILLED) fw_push(f, rsc__slot_value(end));
    else if (end && end->state == CS_REJECTED) fw_push(f, &end->reason);
    for (size_t i = count; i-- > 0;) fw_push(f, rsc__slot_value(s->slots[i]));
    return;
  }
  default: return;
  }
}

static size_t force_run(rsc_decoder *d, bool audit, size_t *unshared) {
  rsc_chunk *root = rsc__find_chunk(d, 0);
  if (!root) return 0;
  force_walk f;
  memset(&f, 0, sizeof f);
  f.d = d;
  f.audit = audit;
  f.shares = unshared != NULL;
  f.seen.al = &d->arena.alloc; /* inside finish: through the caller's hooks */
  f.seen.set = true;
  /* A new epoch for the chunks' marks; once they ran out (2^32 walks of
   * one stream), chunks go in the map of identities. */
  if (d->force_epoch < UINT32_MAX) f.epoch = ++d->force_epoch;
  fw_chunk(&f, root);
  while (f.len > 0 && !f.fail && !d->err.code) {
    fw_run *r = &f.stack[f.len - 1];
    const rsc_node *n = (const rsc_node *)r->at;
    bool filtered = r->stride != 0;
    if (--r->n == 0) f.len--;
    else r->at += r->stride;
    if (!filtered || fw_needed(&f, n)) fw_visit(&f, n); /* may push, moving the stack */
  }
  if (f.fail && !audit) rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, -1, "out of memory");
  rsc__heap_free(&d->arena.alloc, f.stack);
  rsc__idmap_free(&f.seen);
  rsc__idmap_free(&f.chunk_values);
  rsc__idmap_free(&f.met);
  if (unshared) *unshared = f.fail ? SIZE_MAX : f.unshared;
  return f.fail ? SIZE_MAX : f.unread;
}

void rsc__force(rsc_decoder *d) { (void)force_run(d, false, NULL); }

size_t rsc__unread_reachable(rsc_decoder *d) { return force_run(d, true, NULL); }

size_t rsc__unshared_repeats(rsc_decoder *d) {
  if (!(d->opt.flags & RSC_OPT_TRACK_SHARED)) return 0;
  size_t unshared = 0;
  (void)force_run(d, true, &unshared);
  return unshared;
}
