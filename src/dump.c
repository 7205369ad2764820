/* dump.c - the canonical dump of the root (docs/spec/CANONICAL-DUMP.md).
 *
 * The walk keeps its own stack, so a graph 10^5 lazies deep prints without
 * deepening the C stack. A value with identity met a second time prints as
 * {"$":"ref","to":<JSON Pointer of its first place>}. It only reads: finish
 * has already read every chunk the root reaches (settle.c), in this walk's
 * order. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chunks.h"
#include "idmap.h"
#include "json.h"
#include "revive.h"
#include "textout.h"
#include "value.h"

/* ---- the walk ----------------------------------------------------------------- */

/* What a slot of a composite prints. */
typedef enum child_kind {
  C_NODE,          /* a value                                                  */
  C_TEXT,          /* a literal JSON string (tags, statuses)                   */
  C_TRUE,          /* true                                                     */
  C_OPEN,          /* "open" (a stream that never ended)                       */
  C_ITEMS,         /* a JSON array of values from items[0..n) (stride 1)       */
  C_PAIRS,         /* a JSON array of [k, v] pairs from items[0..2n)           */
  C_PAIR,          /* one [k, v] pair                                          */
  C_MEMBERS,       /* an object's members, printed without the "$" escape      */
  C_ARRAY,         /* an array's items (an iterator's array)                   */
  C_BASE64,        /* bytes as a base64 string                                 */
  C_STREAM_BASE64, /* a byte stream's pieces joined, as a base64 string  */
  C_SLOTS,         /* an async iterable's items (result slots)                 */
  C_END            /* a stream's end                                           */
} child_kind;

/* One slot of an open composite. Every open frame holds its slots until it
 * closes, so a graph nested 10^5 deep holds some 10^6 of them at its
 * deepest: the kind's fields share their room. */
typedef struct child {
  const char *key; /* member name, or NULL inside arrays */
  uint32_t klen;
  uint8_t kind;
  bool own; /* C_NODE: the value is inline_node */
  union {
    const rsc_node *node; /* C_NODE, C_MEMBERS, C_ARRAY */
    rsc_node inline_node; /* C_NODE with own */
    struct {
      const rsc_node *items; /* C_ITEMS, C_PAIRS, C_PAIR */
      size_t n;
    };
    struct {
      const char *text; /* C_TEXT, C_BASE64 */
      size_t text_len;
    };
    const rsc_stream *stream; /* C_STREAM_BASE64, C_SLOTS, C_END */
  };
} child;

typedef struct frame {
  child *kids;
  size_t n, pos;
  bool object;
  bool fresh;             /* inside a client reference: printed anew, never a ref */
  uint32_t place;         /* where this composite is */
  rsc_chunk *chunk;       /* a lazy or promise wrapper's chunk, while open */
  uint32_t outer_frame;   /* a wrapper's: its chunk's dump_frame before it   */
  uint64_t identities_at; /* a wrapper's: walker.identities when it opened */
} frame;

/* A place in the document: its parent's place and the last segment of its
 * JSON Pointer (a member name, or an array index when seg is NULL). Places
 * are recorded only for composites and values with identity, and a ref's
 * pointer is rebuilt from them when it is written: keeping a copy of every
 * pointer would cost memory quadratic in the nesting (10^6 levels deep is
 * 10^12 bytes). Place 0 is the document itself. */
typedef struct place {
  uint32_t parent;
  uint32_t n; /* the segment's length, or the index when seg is NULL */
  const char *seg;
} place;

typedef struct walker {
  rsc_decoder *d;
  rsc_text out;
  rsc_idmap seen;
  frame *stack;
  size_t depth, cap;
  place *places;
  size_t nplaces, places_cap;
  uint32_t parent, here; /* the value being visited: its parent's place, */
  const char *seg;       /* its own (RSC_IDMAP_NONE until needed), its segment */
  uint32_t segn;
  int indent;
  bool fail;
  bool fresh;          /* the value being visited sits inside a client reference */
  rsc_idmap scope;     /* identities met inside the client reference being printed */
  uint64_t identities; /* values with identity written out so far */
} walker;

/* The place of the value being visited, recorded on first need. */
static uint32_t here(walker *w) {
  if (w->here != RSC_IDMAP_NONE) return w->here;
  if (w->nplaces == w->places_cap) {
    size_t cap = w->places_cap ? w->places_cap * 2 : 256;
    place *p = cap < RSC_IDMAP_NONE ? (place *)realloc(w->places, cap * sizeof *p) : NULL;
    if (!p) {
      w->fail = true;
      return 0;
    }
    w->places = p;
    w->places_cap = cap;
  }
  place *p = &w->places[w->nplaces];
  p->parent = w->parent;
  p->n = w->segn;
  p->seg = w->seg;
  w->here = (uint32_t)w->nplaces++;
  return w->here;
}

/* Writes the JSON Pointer of a place as a JSON string (RFC 6901: "~" is
 * "~0" and "/" is "~1" inside a segment). */
static void sb_pointer(walker *w, uint32_t at) {
  if (w->out.off || w->fail) return;
  size_t depth = 0, bytes = 0;
  for (uint32_t q = at; q != 0; q = w->places[q].parent) {
    depth++;
    bytes += 1 + (w->places[q].seg ? 2 * (size_t)w->places[q].n : 10);
  }
  uint32_t *chain = (uint32_t *)malloc((depth ? depth : 1) * sizeof *chain);
  char *text = (char *)malloc(bytes + 1);
  if (!chain || !text) {
    free(chain);
    free(text);
    w->fail = true;
    return;
  }
  size_t i = depth;
  for (uint32_t q = at; q != 0; q = w->places[q].parent) chain[--i] = q;
  size_t o = 0;
  for (i = 0; i < depth; i++) {
    const place *p = &w->places[chain[i]];
    text[o++] = '/';
    if (!p->seg) {
      o += (size_t)snprintf(text + o, 11, "%u", p->n);
      continue;
    }
    for (uint32_t k = 0; k < p->n; k++) {
      char c = p->seg[k];
      if (c == '~' || c == '/') {
        text[o++] = '~';
        text[o++] = c == '~' ? '0' : '1';
      } else {
        text[o++] = c;
      }
    }
  }
  rsc__text_json_string(&w->out, text, o);
  free(chain);
  free(text);
}

static void newline(walker *w, size_t depth) {
  if (!w->indent || w->out.off) return;
  static const char spaces[] = "                                                                "
                               "                                                                ";
  rsc__text_put(&w->out, "\n", 1);
  for (size_t left = depth * (size_t)w->indent; left > 0;) {
    size_t n = left < sizeof spaces - 1 ? left : sizeof spaces - 1;
    rsc__text_put(&w->out, spaces, n);
    left -= n;
  }
}

static child *kids_alloc(walker *w, size_t n) {
  child *k = (child *)calloc(n ? n : 1, sizeof *k);
  if (!k) w->fail = true;
  return k;
}

static void kid_text(child *c, const char *key, const char *text) {
  c->key = key;
  c->klen = (uint32_t)strlen(key);
  c->kind = C_TEXT;
  c->text = text;
  c->text_len = strlen(text);
}

static void kid_node(child *c, const char *key, const rsc_node *n) {
  c->key = key;
  c->klen = key ? (uint32_t)strlen(key) : 0;
  c->kind = C_NODE;
  c->node = n;
}

static void kid_inline(child *c, const char *key, rsc_node n) {
  c->key = key;
  c->klen = key ? (uint32_t)strlen(key) : 0;
  c->kind = C_NODE;
  c->own = true;
  c->inline_node = n;
}

static void push_frame(walker *w, child *kids, size_t n, bool object) {
  if (w->fail) {
    free(kids);
    return;
  }
  if (w->depth == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 64;
    frame *s = (frame *)realloc(w->stack, cap * sizeof *s);
    if (!s) {
      w->fail = true;
      free(kids);
      return;
    }
    w->stack = s;
    w->cap = cap;
  }
  rsc__text_put(&w->out, object ? "{" : "[", 1);
  frame *f = &w->stack[w->depth++];
  f->kids = kids;
  f->n = n;
  f->pos = 0;
  f->object = object;
  f->place = here(w);
  f->fresh = w->fresh;
  f->chunk = NULL;
}

/* Leaves the top frame (a wrapper frame releases its chunk). */
static void pop_frame(walker *w) {
  frame *f = &w->stack[--w->depth];
  if (f->chunk) f->chunk->dump_frame = f->outer_frame;
  free(f->kids);
}

static const char *status_text(const rsc_chunk *c) {
  switch (c->state) {
  case CS_FULFILLED: return "fulfilled";
  case CS_REJECTED: return "rejected";
  case CS_HALTED: return "halted";
  case CS_BLOCKED: return "blocked";
  default: return "pending";
  }
}

static bool has_dollar_member(const rsc_node *n) {
  rsc__iter it;
  for (rsc__iter_members(&it, n); rsc__next_member(&it);)
    if (it.klen == 1 && it.key[0] == '$') return true;
  return false;
}

static void open_members(walker *w, const rsc_node *n) {
  size_t count = rsc__members_len(n);
  child *k = kids_alloc(w, count);
  if (!k) return;
  rsc__iter it;
  for (rsc__iter_members(&it, n); rsc__next_member(&it);) {
    child *c = &k[it.index - 1];
    c->key = it.key;
    c->klen = it.klen;
    c->kind = C_NODE;
    c->node = it.val;
  }
  push_frame(w, k, count, true);
}

/* An array (or an iterator's array), read with the iterator. */
static void open_array(walker *w, const rsc_node *n) {
  size_t count = rsc__items_len(n);
  child *k = kids_alloc(w, count);
  if (!k) return;
  rsc__iter it;
  for (rsc__iter_items(&it, n); rsc__next_item(&it);) kid_node(&k[it.index - 1], NULL, it.val);
  push_frame(w, k, count, false);
}

static void open_items(walker *w, const rsc_node *items, size_t n) {
  child *k = kids_alloc(w, n);
  if (!k) return;
  for (size_t i = 0; i < n; i++) kid_node(&k[i], NULL, &items[i]);
  push_frame(w, k, n, false);
}

static void wrapper_kids(walker *w, const char *tag, rsc_chunk *c) {
  if (c->dump_frame && w->stack[c->dump_frame - 1].identities_at == w->identities) {
    /* A wrapper inside its own value with nothing that has identity in
     * between (0:"$L0", or 1:"$L2" with 2:"$L1"): React's value is a
     * cycle of lazies. It is written as a ref to the enclosing wrapper,
     * where printing it out would never end (docs/hardening.md). With a
     * value that has identity in between, the wrapper is written anew, as
     * every wrapper is (docs/spec/CANONICAL-DUMP.md 5), and that value as a
     * ref. */
    const frame *open = &w->stack[c->dump_frame - 1];
    rsc__text_puts(&w->out, "{\"$\":\"ref\",\"to\":");
    sb_pointer(w, open->place);
    rsc__text_puts(&w->out, "}");
    return;
  }
  rsc__read_chunk(w->d, c); /* a consumer's first read parses it */
  child *k = kids_alloc(w, 3);
  if (!k) return;
  kid_text(&k[0], "$", tag);
  kid_text(&k[1], "status", status_text(c));
  size_t n = 2;
  if (c->state == CS_FULFILLED) kid_node(&k[n++], "value", &c->value);
  else if (c->state == CS_REJECTED) kid_node(&k[n++], "reason", &c->reason);
  size_t depth = w->depth;
  push_frame(w, k, n, true);
  if (w->depth > depth) {
    frame *f = &w->stack[w->depth - 1];
    f->chunk = c;
    f->outer_frame = c->dump_frame;
    f->identities_at = w->identities;
    c->dump_frame = (uint32_t)w->depth;
  }
}

static const char *binary_name(uint8_t kind) { return rsc_binary_kind_name((rsc_binary_kind)kind); }

/* A value's text as a JSON string. */
static void put_text(rsc_text *b, const rsc_node *n) {
  uint32_t len;
  const char *t = rsc__text(n, &len);
  rsc__text_json_string(b, t, len);
}

/* Prints a value, or opens a frame for a composite one. */
static void visit(walker *w, const rsc_node *n) {
  rsc_decoder *d = w->d;
  rsc_text *b = &w->out;
  char num[40];
  if (rsc__has_identity(n)) {
    /* Inside a client reference values are printed anew (they may have
     * been met before), but met twice inside the same client reference
     * they are refs too: its metadata is a graph like any other, and
     * printing it as a tree would never end on a cycle (4:I[1,["$4"],"x"])
     * and double at each shared level (found by fuzz_walk). */
    rsc_idmap *m = w->fresh ? &w->scope : &w->seen;
    uintptr_t id = rsc_node_identity(n);
    uint32_t first = rsc__idmap_get(m, id);
    if (first != RSC_IDMAP_NONE) {
      rsc__text_puts(b, "{\"$\":\"ref\",\"to\":");
      sb_pointer(w, first);
      rsc__text_puts(b, "}");
      return;
    }
    uint32_t at = here(w);
    if (w->fail || !rsc__idmap_put(m, id, at)) {
      w->fail = true;
      return;
    }
    w->identities++;
  }
  switch (rsc__kind(n)) {
  case RSC_NULL: rsc__text_puts(b, "null"); return;
  case RSC_BOOL: rsc__text_puts(b, rsc__boolean(n) ? "true" : "false"); return;
  case RSC_NUMBER: {
    double v = rsc__number(n);
    if (isnan(v)) rsc__text_puts(b, "{\"$\":\"NaN\"}");
    else if (isinf(v)) rsc__text_puts(b, v > 0 ? "{\"$\":\"Infinity\"}" : "{\"$\":\"-Infinity\"}");
    else if (v == 0 && signbit(v)) rsc__text_puts(b, "{\"$\":\"-0\"}");
    else rsc__text_put(b, num, rsc__format_number(v, num));
    return;
  }
  case RSC_STRING: put_text(b, n); return;
  case RSC_UNDEFINED:
  case RSC_NONE: rsc__text_puts(b, "{\"$\":\"undefined\"}"); return;
  case RSC_BIGINT:
    rsc__text_puts(b, "{\"$\":\"bigint\",\"v\":");
    put_text(b, n);
    rsc__text_puts(b, "}");
    return;
  case RSC_DATE:
    rsc__text_puts(b, "{\"$\":\"Date\",\"v\":");
    put_text(b, n);
    rsc__text_puts(b, "}");
    return;
  case RSC_SYMBOL:
    rsc__text_puts(b, "{\"$\":\"symbol\",\"v\":");
    put_text(b, n);
    rsc__text_puts(b, "}");
    return;
  case RSC_TEMP_REF:
    rsc__text_puts(b, "{\"$\":\"temporary_ref\",\"v\":");
    put_text(b, n);
    rsc__text_puts(b, "}");
    return;
  case RSC_FUNCTION:
    rsc__text_puts(b, "{\"$\":\"function\",\"source\":");
    put_text(b, n);
    rsc__text_puts(b, "}");
    return;
  case RSC_ARRAY: open_array(w, n); return;
  case RSC_OBJECT:
    if (has_dollar_member(n)) {
      child *k = kids_alloc(w, 2);
      if (!k) return;
      kid_text(&k[0], "$", "object");
      k[1].key = "members";
      k[1].klen = 7;
      k[1].kind = C_MEMBERS;
      k[1].node = n;
      push_frame(w, k, 2, true);
    } else {
      open_members(w, n);
    }
    return;
  case RSC_ELEMENT: {
    child *k = kids_alloc(w, 4);
    if (!k) return;
    kid_text(&k[0], "$", "element");
    kid_node(&k[1], "type", rsc__el_type(n));
    kid_node(&k[2], "key", rsc__el_key(n));
    kid_node(&k[3], "props", rsc__el_props(n));
    push_frame(w, k, 4, true);
    return;
  }
  case RSC_LAZY: wrapper_kids(w, "lazy", n->u.chunk); return;
  case RSC_PROMISE: wrapper_kids(w, "promise", n->u.chunk); return;
  case RSC_CLIENT_REF: {
    const rsc_client_ref *cr = n->u.cref;
    child *k = kids_alloc(w, 5);
    if (!k) return;
    kid_text(&k[0], "$", "client_ref");
    kid_node(&k[1], "id", &cr->id);
    kid_node(&k[2], "chunks", &cr->chunks);
    kid_node(&k[3], "name", &cr->name);
    size_t cnt = 4;
    if (cr->import_map.kind != RSC_NONE) {
      kid_node(&k[4], "importMap", &cr->import_map);
      cnt = 5;
    } else if (cr->is_async) {
      k[4].key = "async";
      k[4].klen = 5;
      k[4].kind = C_TRUE;
      cnt = 5;
    }
    /* A client reference is the module's export on the client: its
     * metadata is printed in full wherever it appears. */
    bool fresh = w->fresh;
    if (!fresh) {
      /* A new client reference at the top: its own scope of identities. */
      rsc__idmap_free(&w->scope);
      memset(&w->scope, 0, sizeof w->scope);
    }
    w->fresh = true;
    push_frame(w, k, cnt, true);
    w->fresh = fresh;
    return;
  }
  case RSC_SERVER_REF: {
    const rsc_server_ref *sr = n->u.sref;
    child *k = kids_alloc(w, 3);
    if (!k) return;
    kid_text(&k[0], "$", "server_ref");
    kid_node(&k[1], "id", &sr->id);
    if (sr->bound.kind == RSC_PROMISE) {
      rsc_chunk *c = sr->bound.u.chunk;
      rsc__read_chunk(d, c);
      if (c->state == CS_FULFILLED) kid_node(&k[2], "bound", &c->value);
      else kid_node(&k[2], "bound", &sr->bound);
    } else {
      kid_node(&k[2], "bound", &sr->bound);
    }
    push_frame(w, k, 3, true);
    return;
  }
  case RSC_MAP:
  case RSC_FORMDATA:
  case RSC_SET: {
    child *k = kids_alloc(w, 2);
    if (!k) return;
    kid_text(&k[0], "$", n->kind == RSC_MAP ? "Map" : n->kind == RSC_SET ? "Set" : "FormData");
    k[1].key = n->kind == RSC_SET ? "values" : "entries";
    k[1].klen = (uint32_t)strlen(k[1].key);
    k[1].kind = n->kind == RSC_SET ? C_ITEMS : C_PAIRS;
    k[1].items = n->u.items;
    k[1].n = n->kind == RSC_SET ? n->len : n->len / 2;
    push_frame(w, k, 2, true);
    return;
  }
  case RSC_BLOB: {
    child *k = kids_alloc(w, 3);
    if (!k) return;
    kid_text(&k[0], "$", "Blob");
    k[1].key = "type";
    k[1].klen = 4;
    k[1].kind = C_TEXT;
    k[1].text = n->u.blob->type;
    k[1].text_len = n->u.blob->type_len;
    k[2].key = "base64";
    k[2].klen = 6;
    k[2].kind = C_BASE64;
    k[2].text = (const char *)n->u.blob->bytes;
    k[2].text_len = n->u.blob->len;
    push_frame(w, k, 3, true);
    return;
  }
  case RSC_BINARY: {
    child *k = kids_alloc(w, 2);
    if (!k) return;
    kid_text(&k[0], "$", binary_name(n->sub));
    k[1].key = "base64";
    k[1].klen = 6;
    k[1].kind = C_BASE64;
    k[1].text = (const char *)n->u.bytes;
    k[1].text_len = n->len;
    push_frame(w, k, 2, true);
    return;
  }
  case RSC_ITERATOR: {
    child *k = kids_alloc(w, 2);
    if (!k) return;
    kid_text(&k[0], "$", "Iterator");
    k[1].key = "items";
    k[1].klen = 5;
    k[1].kind = C_ARRAY;
    k[1].node = rsc__iter_array(n);
    push_frame(w, k, 2, true);
    return;
  }
  case RSC_STREAM: {
    const rsc_stream *s = n->u.stream;
    child *k = kids_alloc(w, 4);
    if (!k) return;
    size_t cnt = 0;
    if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) {
      kid_text(&k[cnt++], "$", "ReadableStream");
      kid_text(&k[cnt++], "type", s->kind == RSC_STREAM_TEXT ? "text" : "bytes");
      if (s->kind == RSC_STREAM_TEXT) {
        k[cnt].key = "items";
        k[cnt].klen = 5;
        k[cnt].kind = C_ITEMS;
        k[cnt].items = s->items;
        k[cnt].n = s->len;
        cnt++;
      } else {
        k[cnt].key = "base64";
        k[cnt].klen = 6;
        k[cnt].kind = C_STREAM_BASE64;
        k[cnt].stream = s;
        cnt++;
      }
    } else {
      kid_text(&k[cnt++], "$", s->kind == RSC_STREAM_ITERABLE ? "AsyncIterable" : "AsyncIterator");
      k[cnt].key = "items";
      k[cnt].klen = 5;
      k[cnt].kind = C_SLOTS;
      k[cnt].stream = s;
      cnt++;
    }
    k[cnt].key = "end";
    k[cnt].klen = 3;
    k[cnt].kind = C_END;
    k[cnt].stream = s;
    cnt++;
    push_frame(w, k, cnt, true);
    return;
  }
  case RSC_ERROR: {
    const rsc_errval *e = n->u.err;
    child *k = kids_alloc(w, 3);
    if (!k) return;
    kid_text(&k[0], "$", "Error");
    kid_text(&k[1], "message", e->message);
    k[1].text_len = e->message_len;
    size_t cnt = 2;
    if (e->digest.kind != RSC_NONE && e->digest.kind != RSC_UNDEFINED)
      kid_node(&k[cnt++], "digest", &e->digest);
    push_frame(w, k, cnt, true);
    return;
  }
  default: rsc__text_puts(b, "null"); return;
  }
}

/* Opens the composite for a child that is not a plain value. */
static void visit_child(walker *w, child *c) {
  rsc_text *b = &w->out;
  switch (c->kind) {
  case C_NODE: visit(w, c->own ? &c->inline_node : c->node); return;
  case C_TEXT: rsc__text_json_string(b, c->text, c->text_len); return;
  case C_TRUE: rsc__text_puts(b, "true"); return;
  case C_OPEN: rsc__text_puts(b, "\"open\""); return;
  case C_ITEMS: open_items(w, c->items, c->n); return;
  case C_MEMBERS: open_members(w, c->node); return;
  case C_ARRAY: open_array(w, c->node); return;
  case C_PAIRS: {
    child *k = kids_alloc(w, c->n);
    if (!k) return;
    for (size_t i = 0; i < c->n; i++) {
      k[i].kind = C_PAIR;
      k[i].items = c->items + 2 * i;
    }
    push_frame(w, k, c->n, false);
    return;
  }
  case C_PAIR: open_items(w, c->items, 2); return;
  case C_BASE64: rsc__text_base64(b, (const uint8_t *)c->text, c->text_len); return;
  case C_STREAM_BASE64: {
    /* A byte stream's pieces joined: their boundaries follow the network. */
    size_t total = 0;
    for (uint32_t i = 0; i < c->stream->len; i++) total += c->stream->items[i].len;
    uint8_t *all = (uint8_t *)malloc(total ? total : 1);
    if (!all) {
      w->fail = true;
      return;
    }
    size_t o = 0;
    for (uint32_t i = 0; i < c->stream->len; i++) {
      memcpy(all + o, c->stream->items[i].u.bytes, c->stream->items[i].len);
      o += c->stream->items[i].len;
    }
    rsc__text_base64(b, all, total);
    free(all);
    return;
  }
  case C_SLOTS: {
    const rsc_chunk *end;
    size_t n = rsc__stream_results(w->d, c->stream, &end);
    child *k = kids_alloc(w, n);
    if (!k) return;
    for (size_t i = 0; i < n; i++) kid_node(&k[i], NULL, rsc__slot_value(c->stream->slots[i]));
    push_frame(w, k, n, false);
    return;
  }
  case C_END: {
    const rsc_stream *s = c->stream;
    child *k = kids_alloc(w, 1);
    if (!k) return;
    if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) {
      if (s->end == RSC_STREAM_DONE) kid_inline(&k[0], "done", rsc__mk(RSC_UNDEFINED));
      else if (s->end == RSC_STREAM_ERRORED) kid_node(&k[0], "error", &s->end_value);
      else {
        free(k);
        rsc__text_puts(b, "\"open\"");
        return;
      }
    } else {
      const rsc_chunk *end;
      rsc__stream_results(w->d, s, &end);
      if (end && end->state == CS_FULFILLED) kid_node(&k[0], "done", rsc__slot_value(end));
      else if (end && end->state == CS_REJECTED) kid_node(&k[0], "error", &end->reason);
      else if (!end && s->closed && s->next_write == s->len)
        kid_inline(&k[0], "done", rsc__mk(RSC_UNDEFINED));
      else {
        free(k);
        rsc__text_puts(b, "\"open\"");
        return;
      }
    }
    push_frame(w, k, 1, true);
    return;
  }
  }
}

static void run(walker *w) {
  while (w->depth > 0 && !w->fail && !w->out.status && !w->d->err.code) {
    frame *f = &w->stack[w->depth - 1];
    if (f->pos == f->n) {
      if (f->n) newline(w, w->depth - 1);
      rsc__text_put(&w->out, f->object ? "}" : "]", 1);
      pop_frame(w);
      continue;
    }
    child *c = &f->kids[f->pos];
    if (f->pos > 0) rsc__text_put(&w->out, ",", 1);
    newline(w, w->depth);
    w->parent = f->place;
    w->here = RSC_IDMAP_NONE;
    if (f->object) {
      rsc__text_json_string(&w->out, c->key, c->klen);
      rsc__text_put(&w->out, w->indent ? ": " : ":", w->indent ? 2 : 1);
      w->seg = c->key;
      w->segn = c->klen;
    } else {
      w->seg = NULL;
      w->segn = (uint32_t)f->pos;
    }
    f->pos++;
    w->fresh = f->fresh;
    visit_child(w, c);
  }
  while (w->depth > 0) pop_frame(w);
}

/* Writes the dump of the root into out (set up by the caller). Returns
 * RSC_OK, the decoder's error when reading a chunk failed on the way,
 * RSC_ERR_NOMEM, RSC_ERR_USER (out's writer failed) or RSC_ERR_STATE (no
 * root). */
static rsc_status dump_root(rsc_decoder *d, int pretty, rsc_text *out) {
  walker w;
  memset(&w, 0, sizeof w);
  w.d = d;
  w.indent = pretty;
  w.out = *out;
  rsc_chunk *root = rsc__find_chunk(d, 0);
  if (!root) return RSC_ERR_STATE;
  rsc__read_chunk(d, root);
  child *k = kids_alloc(&w, 1);
  if (k) {
    switch (root->state) {
    case CS_FULFILLED: kid_node(&k[0], "ok", &root->value); break;
    case CS_REJECTED: kid_node(&k[0], "rejected", &root->reason); break;
    case CS_HALTED:
      k[0].key = "halted";
      k[0].klen = 6;
      k[0].kind = C_TRUE;
      break;
    default:
      k[0].key = "pending";
      k[0].klen = 7;
      k[0].kind = C_TRUE;
      break;
    }
    w.parent = RSC_IDMAP_NONE; /* place 0: the document */
    w.here = RSC_IDMAP_NONE;
    push_frame(&w, k, 1, true);
    run(&w);
  }
  if (w.indent) rsc__text_put(&w.out, "\n", 1);
  if (w.out.write && !w.fail && !d->err.code) rsc__text_flush(&w.out);
  rsc__idmap_free(&w.seen);
  rsc__idmap_free(&w.scope);
  free(w.stack);
  free(w.places);
  *out = w.out;
  if (d->err.code) return d->err.code;
  if (w.fail) return RSC_ERR_NOMEM;
  return w.out.status;
}

char *rsc_dump(rsc_decoder *d, int pretty, size_t *len) {
  if (!d || d->err.code) return NULL;
  rsc_text out;
  memset(&out, 0, sizeof out);
  if (dump_root(d, pretty, &out) != RSC_OK) {
    free(out.p);
    return NULL;
  }
  if (len) *len = out.len;
  return out.p;
}

rsc_status rsc_dump_to(rsc_decoder *d, int pretty, rsc_write_fn write, void *ctx) {
  if (!d || !write) return RSC_ERR_STATE;
  if (d->err.code) return d->err.code;
  rsc_text out;
  if (!rsc__text_to_writer(&out, write, ctx)) return RSC_ERR_NOMEM;
  rsc_status st = dump_root(d, pretty, &out);
  free(out.p);
  return st;
}
