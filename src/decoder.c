/* decoder.c - public entry points: new / feed / finish / free, and the row
 * dispatch by tag (docs/spec/FLIGHT-PROTOCOL.md 2.2, 3) between the framer and
 * the chunk table. */
#include <math.h>
#include <stdlib.h>
#ifndef __STDC_NO_ATOMICS__
#  include <stdatomic.h>
#endif

#include "bench_hooks.h"
#include "chunks.h"
#include "settle.h"
#include "frame.h"
#include "json.h"
#include "path.h"
#include "revive.h"
#include "rowlog.h"
#include "rowtags.h"
#include "utf8.h"

static const char dev_row_message[] =
    "Failed to read a RSC payload created by a development version of React on the server "
    "while using a production version on the client. Always use matching versions on the "
    "server and the client.";

const char *rsc_version(void) { return RSC_VERSION_STRING; }

void rsc_options_init(rsc_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
}

static void fill_limits(rsc_limits *l) {
  if (!l->max_row_bytes) l->max_row_bytes = (uint64_t)256 << 20;
  if (!l->max_depth) l->max_depth = 5000;
  /* max_nodes stays 0 for its default, which grows with the input
   * (rsc__node_cap): copies can grow faster than the input ($Q, $W, $K,
   * $B referenced many times, docs/hardening.md). */
  if (!l->max_chunks) l->max_chunks = 1u << 24;
  if (!l->max_path_hops) l->max_path_hops = 1024;
}

/* The per-stream state of a new (or reset) decoder: hash seed, marker,
 * the closed error and the root chunk, awaited as a caller of
 * createFromNodeStream awaits it, so its row is revived as it arrives. */
static bool start_stream(rsc_decoder *d, uint64_t salt) {
  d->dev = (d->opt.flags & RSC_OPT_DEV) != 0;
  d->row_id = -1;
  d->err.row_id = -1; /* no error: outside any row */
  /* Differs per decoder and per run (heap and stack addresses move with
   * ASLR); no global state, so decoders stay independent. */
  d->hash_seed = rsc__hash_final((uint64_t)(uintptr_t)d ^ (salt << 21) ^ 0x9E3779B97F4A7C15ull);
  d->marker = rsc__str(RSC_SYMBOL, rsc__element_symbol, sizeof(RSC_ELEMENT_SYMBOL) - 1);
  d->node_budget = rsc__node_cap(d);
  d->closed_error = rsc__error_node(d, rsc__closed_message, NULL);
  rsc_chunk *root = rsc__add_chunk(d, 0, CS_PENDING);
  return root && d->closed_error.kind == RSC_ERROR &&
         ((d->opt.flags & RSC_OPT_LAZY_ROOT) ||
          rsc__add_listener(d, root, LK_NOOP, NULL, NULL, NULL, rsc__mk(RSC_NONE)));
}

/* A host that makes a decoder per response (the natural use) paid for
 * fresh memory on each one: glibc hands a heap top of more than 128 KiB
 * back to the kernel when it is freed, so every new decoder faulted its
 * blocks in again (table-1000-rows: 1.6x the time of a reused decoder,
 * about 100 page faults and a dozen brk calls per decode; a synthetic 4 MB
 * payload 1.57x, 2,200 faults). So rsc_decoder_free keeps one decoder in
 * a slot for the next rsc_decoder_new, emptied and trimmed: its arenas
 * keep at most WARM_MAX_HELD bytes of blocks (the largest go back first:
 * they are huge pages, cheap to fault again), its chunk table at most
 * WARM_MAX_TABLE bytes, its stacks WARM_MAX_STACK entries. A decoder with
 * row buffers for rows of more than WARM_MAX_ROW_BUFFER (a reset keeps
 * those), or on the caller's allocator, is not kept. A decoder with the same JSON depth limit
 * (simdjson's buffers are sized by it) takes it, under the new options. One atomic slot: a decoder
 * is never shared between threads. rsc_release_memory frees it. */
#define WARM_MAX_HELD ((size_t)16 << 20)
#define WARM_MAX_TABLE ((size_t)256 << 10)
#define WARM_MAX_STACK 4096                   /* entries of the wake queue, of the walk's stack */
#define WARM_MAX_ROW_BUFFER ((size_t)2 << 20) /* buffers double as they grow */
#ifndef __STDC_NO_ATOMICS__
static _Atomic(rsc_decoder *) warm_slot;
#  define WARM_SWAP(d) atomic_exchange(&warm_slot, (d))
#else
#  define WARM_SWAP(d) (d) /* no atomics: no slot */
#endif

static bool default_alloc(const rsc_alloc *al) { return !al->malloc && !al->realloc && !al->free; }

static void decoder_destroy(rsc_decoder *d);
static uint8_t *row_dest(void *ctx, uint8_t tag, size_t len);

/* The framer's share of the options: a new decoder's and a kept one's. */
static void frame_take_options(rsc_frame *f, const rsc_options *o) {
  f->lenient = (o->flags & RSC_OPT_LENIENT_IDS) != 0;
  f->max_row_bytes = o->limits.max_row_bytes;
  f->max_total = o->limits.max_total_bytes;
}

static rsc_decoder *warm_take(const rsc_options *o) {
  rsc_decoder *d = WARM_SWAP(NULL);
  if (!d) return NULL;
  if (d->opt.limits.max_depth != o->limits.max_depth) {
    rsc_decoder *other = WARM_SWAP(d); /* left for a decoder like it */
    if (other) decoder_destroy(other);
    return NULL;
  }
  d->opt = *o;
  frame_take_options(d->frame, o);
  if (rsc_decoder_reset(d) == RSC_OK) return d;
  decoder_destroy(d);
  return NULL;
}

void rsc_release_memory(void) { decoder_destroy(WARM_SWAP(NULL)); }

rsc_decoder *rsc_decoder_new(const rsc_options *opt) {
  rsc_options o;
  if (opt) o = *opt;
  else rsc_options_init(&o);
  /* internal: rsc__decoder_set_parse_only and _walk */
  o.flags &= ~(RSC__OPT_PARSE_ONLY | RSC__OPT_PARSE_WALK);
  /* the writer asks which values a reference placed (encode.c) */
  if (o.flags & RSC_OPT_KEEP_ROWS) o.flags |= RSC_OPT_TRACK_SHARED;
  fill_limits(&o.limits);
  rsc_alloc al = o.alloc;
  if (default_alloc(&al)) {
    rsc_decoder *w = warm_take(&o);
    if (w) return w;
  }
  rsc_decoder *d = (rsc_decoder *)rsc__heap_alloc(&al, sizeof *d);
  if (!d) return NULL;
  memset(d, 0, sizeof *d);
  d->opt = o;
  rsc__arena_init(&d->arena, &al);
  d->arena.aside = true;
  rsc__arena_init(&d->strings, &al);
  d->frame = rsc__frame_new(&al, (o.flags & RSC_OPT_LENIENT_IDS) != 0, o.limits.max_row_bytes);
  if (d->frame) {
    frame_take_options(d->frame, &o);
    d->frame->dest_fn = row_dest;
  }
  static const rsc_json_hooks revive_hooks = {rsc__plain_element, rsc__arrived_value};
  d->json = d->frame ? rsc__json_new(d, &revive_hooks) : NULL;
  if (!d->json || !start_stream(d, (uint64_t)(uintptr_t)&o)) {
    decoder_destroy(d);
    return NULL;
  }
  return d;
}

rsc_status rsc_decoder_reset(rsc_decoder *d) {
  if (!d) return RSC_ERR_STATE;
  /* Keep what holds memory; everything else starts again from zero. */
  rsc_decoder keep = *d;
  rsc__arena_reset(&keep.arena);
  rsc__arena_reset(&keep.strings);
  rsc__frame_reset(keep.frame);
  if (keep.table.slots) memset(keep.table.slots, 0, keep.table.cap * sizeof *keep.table.slots);
  if (keep.table.dense)
    memset(keep.table.dense, 0, keep.table.dense_cap * sizeof *keep.table.dense);
  memset(d, 0, sizeof *d);
  d->opt = keep.opt;
  d->arena = keep.arena;
  d->strings = keep.strings;
  d->frame = keep.frame;
  d->json = keep.json;
  d->table.dense = keep.table.dense;
  d->table.dense_cap = keep.table.dense_cap;
  d->table.slots = keep.table.slots;
  d->table.cap = keep.table.cap;
  d->table.order = keep.table.order;
  d->table.order_cap = keep.table.order_cap;
  d->jobs = keep.jobs;
  d->jobs_cap = keep.jobs_cap;
  d->walk.frames = keep.walk.frames;
  d->walk.cap = keep.walk.cap;
  d->paths.plain_paths = keep.paths.plain_paths;
  d->enc_cache = keep.enc_cache;
  d->feeds = keep.feeds; /* counts on: what the JSON stage found ahead in a
                            feed before the reset is never taken for a later one */
  /* rsc_encode_ready's state named the rows of the payload before */
  rsc__encode_stream_free(keep.enc_stream);
  if (!start_stream(d, keep.hash_seed)) {
    rsc__fail(d, RSC_ERR_NOMEM, 0, -1, "out of memory");
    return RSC_ERR_NOMEM;
  }
  return RSC_OK;
}

static bool keepable(const rsc_decoder *d) {
  return default_alloc(&d->opt.alloc) && d->frame && d->json &&
         rsc__frame_buffer_cap(d->frame) <= WARM_MAX_ROW_BUFFER &&
         rsc__json_capacity(d->json) <= WARM_MAX_ROW_BUFFER;
}

/* What a kept decoder holds, bounded (above); its values are gone. */
static void warm_trim(rsc_decoder *d) {
  rsc__encode_cache_free(d->enc_cache); /* sized by what was encoded */
  d->enc_cache = NULL;
  rsc__encode_stream_free(d->enc_stream);
  d->enc_stream = NULL;
  rsc__arena_trim(&d->arena, &d->strings, WARM_MAX_HELD);
  chunk_table *t = &d->table;
  size_t table = (t->dense_cap + t->cap + t->order_cap) * sizeof(rsc_chunk *);
  if (table > WARM_MAX_TABLE) { /* they grow again as they did */
    rsc__heap_free(&d->opt.alloc, t->dense);
    rsc__heap_free(&d->opt.alloc, t->slots);
    rsc__heap_free(&d->opt.alloc, t->order);
    memset(t, 0, sizeof *t);
  }
  /* The wake queue and the walk's stack grow with a payload's breadth and
   * depth, rarely past their first sizes (64 entries). */
  if (d->jobs_cap > WARM_MAX_STACK) {
    rsc__heap_free(&d->opt.alloc, d->jobs);
    d->jobs = NULL;
    d->jobs_cap = 0;
  }
  if (d->walk.cap > WARM_MAX_STACK) {
    rsc__heap_free(&d->opt.alloc, d->walk.frames);
    d->walk.frames = NULL;
    d->walk.cap = 0;
  }
}

void rsc__decoder_set_parse_only(rsc_decoder *d) {
  if (d) d->opt.flags |= RSC__OPT_PARSE_ONLY;
}

void rsc__decoder_set_parse_walk(rsc_decoder *d) {
  if (d) d->opt.flags |= RSC__OPT_PARSE_ONLY | RSC__OPT_PARSE_WALK;
}

void rsc_decoder_free(rsc_decoder *d) {
  if (d && keepable(d)) {
    warm_trim(d);
    d = WARM_SWAP(d); /* kept; the one it replaces is freed */
  }
  decoder_destroy(d);
}

static void decoder_destroy(rsc_decoder *d) {
  if (!d) return;
  rsc_alloc al = d->opt.alloc;
  rsc__json_free((rsc_json *)d->json);
  rsc__frame_free(d->frame);
  rsc__heap_free(&al, d->table.dense);
  rsc__heap_free(&al, d->table.slots);
  rsc__heap_free(&al, d->table.order);
  rsc__heap_free(&al, d->jobs);
  rsc__heap_free(&al, d->walk.frames);
  rsc__encode_cache_free(d->enc_cache);
  rsc__encode_stream_free(d->enc_stream);
  rsc__arena_free(&d->arena);
  rsc__arena_free(&d->strings);
  rsc__heap_free(&al, d);
}

const rsc_error *rsc_decoder_error(const rsc_decoder *d) { return &d->err; }
int rsc_decoder_is_dev(const rsc_decoder *d) { return d && d->dev; }
uint64_t rsc_decoder_bytes(const rsc_decoder *d) { return d ? rsc__frame_offset(d->frame) : 0; }
size_t rsc_decoder_peak_memory(const rsc_decoder *d) {
  return d ? d->arena.peak + d->strings.peak : 0;
}

/* ---- row dispatch --------------------------------------------------------- */

/* RSC_OPT_DROP_BOM: React 19.3.1's TextDecoder drops a byte-order mark at
 * the start of each row. Without the flag the row keeps it, as a decoder
 * with ignoreBOM does (React's fix, the client Next.js ships); a JSON row
 * that begins with it then fails to parse as JSON.parse fails: simdjson
 * refuses the BOM too (and a row that does not begin with '[' or '{' never
 * joins a batch), so the fallback parser words the SyntaxError. */
static void strip_bom(const uint8_t **p, size_t *n) {
  if (*n >= 3 && (*p)[0] == 0xEF && (*p)[1] == 0xBB && (*p)[2] == 0xBF) {
    *p += 3;
    *n -= 3;
  }
}

/* Index of the first '[' or '{' nested deeper than max_depth (outside
 * strings), for the offset of a depth error; simdjson reports none. */
static size_t depth_offset(const uint8_t *p, size_t n, uint32_t max_depth) {
  uint64_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = p[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    }
  }
  return 0;
}

/* JSON.parse of a row; the failure message for a SyntaxError, or a fatal
 * decoder error (memory, limits). elements: a model row (production ones
 * get their plain element tuples built while parsing: rsc__json_parse).
 * lead: bytes at the start of p that are not the row's own (the iterator
 * result's text around an item row, parse_iterator_result, starting
 * lead bytes before row->data); a depth error points into the row. */
static bool parse_json_lead(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n,
                            size_t lead, bool elements, rsc_node *out, const char **syntax) {
  *syntax = NULL;
  /* A shifted start (BOM, hint code) keeps the same bytes after the end. */
  bool padded = row->padded;
  json_result r =
      rsc__json_parse((rsc_json *)d->json, p, n, padded, elements && !d->dev, out, syntax);
  switch (r) {
  case JSON_OK: return true;
  case JSON_SYNTAX: return true;
  case JSON_LIMIT:
    /* The node limit has already failed with its own message; otherwise
     * this is depth: point at the bracket that went past the limit. */
    if (d->err.code == RSC_OK) {
      size_t at = depth_offset(p, n, d->opt.limits.max_depth);
      rsc__fail(d, RSC_ERR_LIMIT,
                row->data_offset + (uint64_t)(p + lead - row->data) + (at > lead ? at - lead : 0),
                row->id, "JSON nested deeper than the depth limit");
    }
    return false;
  default: rsc__fail(d, RSC_ERR_NOMEM, row->data_offset, row->id, "out of memory"); return false;
  }
}

static bool parse_json(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n,
                       bool elements, rsc_node *out, const char **syntax) {
  return parse_json_lead(d, row, p, n, 0, elements, out, syntax);
}

/* How a text or binary row's bytes are held: copied into the decoder,
 * left where they were fed (RSC_OPT_BORROW_INPUT), or in the decoder's
 * memory already (gathered there across feeds: row_dest). */
typedef enum { BYTES_COPY, BYTES_BORROW, BYTES_OWN } bytes_hold;

static bytes_hold holding(const rsc_decoder *d, const rsc_row *row) {
  if (row->gathered) return BYTES_OWN;
  return (d->opt.flags & RSC_OPT_BORROW_INPUT) && row->in_place ? BYTES_BORROW : BYTES_COPY;
}

/* Room for a text or binary row's n bytes and a NUL in the string arena
 * (*raw: the allocation, for rsc__arena_shrink_last). Long rows start on a
 * 32-byte boundary, where none of the 32-byte stores of a copy or loads
 * of a check straddles a cache line (the arena gives 8). */
static uint8_t *alloc_row_bytes(rsc_decoder *d, size_t n, uint8_t **raw) {
  size_t pad = n >= 128 ? 24 : 0;
  *raw = (uint8_t *)rsc__alloc_bytes(d, n + 1 + pad);
  if (!*raw || !pad) return *raw;
  return (uint8_t *)(((uintptr_t)*raw + 31) & ~(uintptr_t)31);
}

/* known: bytes at p already checked as ASCII (a gathered row's, frame.c). */
static rsc_node text_node(rsc_decoder *d, const uint8_t *p, size_t n, size_t known,
                          bytes_hold hold) {
  if (hold != BYTES_COPY) {
    size_t ascii = hold == BYTES_OWN ? known + rsc__ascii_prefix(p + known, n - known) : 0;
    if (ascii == n || rsc__utf8_valid(p + ascii, n - ascii)) {
      rsc_node v = rsc__str(RSC_STRING, (const char *)p, n);
      if (hold == BYTES_BORROW) v.flags = NF_BORROWED;
      else ((uint8_t *)p)[n] = 0; /* row_dest left room for it */
      return v;
    }
    /* Invalid: repaired below (gathered bytes stay in the arena). */
  } else {
    /* Copied as it is checked while it is ASCII; only what follows the
     * first other byte goes through simdjson's validator, then a copy. */
    uint8_t *raw;
    uint8_t *s = alloc_row_bytes(d, n, &raw);
    if (!s) return rsc__mk(RSC_NONE);
    size_t ascii = rsc__ascii_copy(s, p, n);
    if (ascii == n || rsc__utf8_valid(p + ascii, n - ascii)) {
      memcpy(s + ascii, p + ascii, n - ascii);
      s[n] = 0;
      return rsc__str(RSC_STRING, (const char *)s, n);
    }
    rsc__arena_shrink_last(&d->strings, raw, 0); /* invalid: repaired below */
  }
  size_t fixed_len;
  uint8_t *fixed = rsc__utf8_repair(d, p, n, &fixed_len);
  if (!fixed) return rsc__mk(RSC_NONE);
  return rsc__str(RSC_STRING, (const char *)fixed, fixed_len);
}

/* The framer's rsc_dest_fn: a text or binary row that a feed leaves
 * unfinished is gathered into the string arena, where its value keeps it
 * (with room for a text's NUL), instead of into the framer's buffer and
 * then copied out. Out of memory fails the decode, as any allocation
 * does (the framer then goes on into its own buffer until the row ends,
 * where on_row stops it). */
static uint8_t *row_dest(void *ctx, uint8_t tag, size_t len) {
  rsc_decoder *d = (rsc_decoder *)ctx;
  size_t elem;
  if (d->err.code || (d->opt.flags & RSC__OPT_PARSE_ONLY)) return NULL;
  if (tag != 'T' && rsc__binary_tag_kind(tag, &elem) < 0) return NULL;
  uint8_t *raw;
  return alloc_row_bytes(d, len, &raw);
}

static rsc_node binary_node(rsc_decoder *d, int kind, const uint8_t *p, size_t n, bytes_hold hold) {
  /* Borrowed or not, the bytes' address is the value's identity: an empty
   * row gets a byte of its own. */
  const uint8_t *b = p;
  if (hold == BYTES_COPY || !n) {
    uint8_t *copy = (uint8_t *)rsc__alloc_bytes(d, n ? n : 1);
    if (!copy) return rsc__mk(RSC_NONE);
    if (n) memcpy(copy, p, n);
    b = copy;
  }
  rsc_node v = rsc__mk(RSC_BINARY);
  v.sub = (uint8_t)kind;
  v.u.bytes = b;
  v.len = (uint32_t)n;
  return v;
}

/* E rows: bare JSON.parse, then the error as the client builds it. */
static rsc_status error_row(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n) {
  d->mode_locked = true;
  rsc_node info;
  const char *syntax;
  if (!parse_json(d, row, p, n, false, &info, &syntax)) return d->err.code;
  if (syntax)
    return rsc__fail(d, RSC_ERR_BAD_ROW, row->data_offset, row->id, "E row is not valid JSON");
  rsc_node e = rsc__error_node(d, d->dev ? rsc__dev_default_error : rsc__generic_error, NULL);
  if (e.kind != RSC_ERROR) return d->err.code;
  rsc_node tmp;
  if (rsc__step(d, &info, (rsc_key){"digest", 6}, &tmp)) e.u.err->digest = tmp;
  if (d->dev) {
    /* React's DEV client needs a stack array and crashes without one
     * (docs/spec/FLIGHT-PROTOCOL.md 3.4); either shape is accepted here. */
    if (rsc__step(d, &info, (rsc_key){"message", 7}, &tmp) && tmp.kind == RSC_STRING && tmp.len) {
      e.u.err->message = tmp.u.str;
      e.u.err->message_len = tmp.len;
    }
    if (rsc__step(d, &info, (rsc_key){"name", 4}, &tmp) && tmp.kind == RSC_STRING)
      e.u.err->name = tmp.u.str;
    if (rsc__step(d, &info, (rsc_key){"env", 3}, &tmp) && tmp.kind == RSC_STRING)
      e.u.err->env = tmp.u.str;
    if (rsc__step(d, &info, (rsc_key){"cause", 5}, &tmp)) {
      /* 19.3.1 revives cause as a reference. */
      rsc_node *holder = rsc__alloc_nodes(d, 1);
      if (!holder) return d->err.code;
      *holder = tmp;
      rsc_node thrown;
      rsc_scope *prev = d->initializing_handler;
      d->initializing_handler = NULL;
      if (rsc__revive(d, holder, &thrown)) e.u.err->cause = *holder;
      d->initializing_handler = prev;
    }
  }
  return rsc__resolve_error_row(d, row->id, e);
}

/* I rows: the metadata, revived, as a client reference
 * (docs/spec/FLIGHT-PROTOCOL.md 3.2). */
static rsc_status module_row(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n) {
  rsc_node meta;
  const char *syntax;
  if (!parse_json(d, row, p, n, false, &meta, &syntax)) return d->err.code;
  if (syntax)
    return rsc__fail(d, RSC_ERR_BAD_ROW, row->data_offset, row->id, "I row is not valid JSON");
  /* Servers write an array (React 18: an object); React's client makes
   * no client reference of anything else. */
  if (meta.kind != RSC_ARRAY && meta.kind != RSC_OBJECT && !(d->opt.flags & RSC_OPT_LENIENT_VALUES))
    return rsc__fail(d, RSC_ERR_BAD_VALUE, row->offset, row->id,
                     "I row is neither an array nor an object");
  rsc_node thrown;
  rsc_node *holder = rsc__alloc_nodes(d, 1); /* later fills land here */
  if (!holder) return d->err.code;
  *holder = meta;
  rsc_scope *prev = d->initializing_handler;
  d->initializing_handler = NULL;
  rsc__revive(d, holder, &thrown);
  d->initializing_handler = prev;
  if (d->err.code) return d->err.code;
  meta = *holder;
  rsc_client_ref *cr = (rsc_client_ref *)rsc__alloc(d, sizeof *cr);
  if (!cr) return d->err.code;
  cr->metadata = meta;
  cr->id = cr->chunks = cr->name = rsc__mk(RSC_UNDEFINED);
  cr->import_map = rsc__mk(RSC_NONE);
  cr->is_parcel = 0;
  cr->is_async = 0; /* metadata of another shape (revived to anything) */
  rsc_bundler bundler = d->opt.bundler;
  if (meta.kind == RSC_ARRAY && bundler != RSC_BUNDLER_PARCEL && bundler != RSC_BUNDLER_RSPACK &&
      meta.len > 1 && meta.u.items[1].kind == RSC_STRING)
    bundler = RSC_BUNDLER_PARCEL; /* webpack's chunk list is never a string */
  if (meta.kind == RSC_ARRAY && bundler == RSC_BUNDLER_PARCEL) {
    /* Parcel: [id, name, bundles, importMap?]; its client loads the
     * bundles and has no async modules. */
    cr->is_parcel = 1;
    if (meta.len > 0) cr->id = meta.u.items[0];
    if (meta.len > 1) cr->name = meta.u.items[1];
    if (meta.len > 2) cr->chunks = meta.u.items[2];
    if (meta.len > 3) cr->import_map = meta.u.items[3];
  } else if (meta.kind == RSC_ARRAY) {
    /* webpack / turbopack / rspack: [id, chunks, name] plus a 4th slot
     * when async. */
    if (meta.len > 0) cr->id = meta.u.items[0];
    if (meta.len > 1) cr->chunks = meta.u.items[1];
    if (meta.len > 2) cr->name = meta.u.items[2];
    cr->is_async = meta.len >= 4;
  } else if (meta.kind == RSC_OBJECT) {
    /* Older webpack metadata: {id, chunks, name, async}. */
    rsc_node tmp;
    if (rsc__step(d, &meta, (rsc_key){"id", 2}, &tmp)) cr->id = tmp;
    if (rsc__step(d, &meta, (rsc_key){"chunks", 6}, &tmp)) cr->chunks = tmp;
    if (rsc__step(d, &meta, (rsc_key){"name", 4}, &tmp)) cr->name = tmp;
    if (rsc__step(d, &meta, (rsc_key){"async", 5}, &tmp))
      cr->is_async = tmp.kind == RSC_BOOL ? tmp.u.boolean : tmp.kind != RSC_NULL;
  }
  rsc_node v = rsc__mk(RSC_CLIENT_REF);
  v.u.cref = cr;
  /* rspack's client looks the export up by the revived name: an unescaped
   * "$" (the element marker) or "$store" (a reference) is no own export of
   * any module, so the reference is undefined. */
  if (bundler == RSC_BUNDLER_RSPACK && meta.kind == RSC_ARRAY && cr->name.kind != RSC_STRING)
    v = rsc__mk(RSC_UNDEFINED);
  rsc__resolve_module(d, row->id, v);
  return d->err.code;
}

static rsc_status hint_row(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n) {
  if (n == 0)
    return rsc__fail(d, RSC_ERR_BAD_ROW, row->data_offset, row->id, "H row without a hint code");
  /* React's code is the row's first UTF-16 unit and JSON.parse reads the
   * rest: a code that is not one byte (a U+FEFF kept at the row's start)
   * is no hint React knows, and is told as 0. */
  size_t code_len = p[0] < 0xC0 ? 1 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;
  if (code_len > n || code_len == 4) code_len = 1; /* a pair: React's code is half */
  for (size_t i = 1; i < code_len; i++)
    if ((p[i] & 0xC0) != 0x80) code_len = 1; /* not a character: as before */
  char code = code_len == 1 ? (char)p[0] : 0;
  rsc_node v;
  const char *syntax;
  if (!parse_json(d, row, p + code_len, n - code_len, false, &v, &syntax)) return d->err.code;
  if (syntax)
    return rsc__fail(d, RSC_ERR_BAD_ROW, row->data_offset, row->id, "H row is not valid JSON");
  rsc_node thrown;
  rsc_node *holder = rsc__alloc_nodes(d, 1); /* later fills land here */
  if (!holder) return d->err.code;
  *holder = v;
  rsc_scope *prev = d->initializing_handler;
  d->initializing_handler = NULL;
  rsc__revive(d, holder, &thrown);
  d->initializing_handler = prev;
  v = *holder;
  if (d->err.code) return d->err.code;
  if (d->opt.on_event) {
    rsc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = RSC_EVENT_HINT;
    ev.chunk_id = -1;
    ev.tag = code;
    ev.text = (const char *)p; /* the code's bytes */
    ev.text_len = code_len;
    ev.value = holder; /* arena memory: valid as long as the decoder */
    if (d->opt.on_event(d->opt.event_ctx, &ev) != 0)
      return rsc__fail(d, RSC_ERR_USER, row->offset, row->id, "stopped by the consumer hook");
  }
  return RSC_OK;
}

static rsc_status debug_event(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n) {
  if (!d->opt.on_event) return RSC_OK;
  rsc_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = RSC_EVENT_DEBUG_ROW;
  ev.chunk_id = row->tag == 'N' || row->tag == 'W' ? -1 : row->id;
  ev.tag = (char)row->tag;
  ev.text = (const char *)p;
  ev.text_len = n;
  if (d->opt.on_event(d->opt.event_ctx, &ev) != 0)
    return rsc__fail(d, RSC_ERR_USER, row->offset, row->id, "stopped by the consumer hook");
  return RSC_OK;
}

/* Whether the row's chunk is an async iterable (X) or iterator (x) stream
 * taking items. */
static bool iterable_stream(const rsc_decoder *d, int64_t id) {
  if (!d->has_iterables) return false; /* the common case: no lookup per row */
  const rsc_chunk *c = rsc__find_chunk(d, id);
  return c && c->state == CS_FULFILLED && c->stream &&
         (c->stream->kind == RSC_STREAM_ITERABLE || c->stream->kind == RSC_STREAM_ITERATOR);
}

/* React parses an item or end row of an async iterable as the text of its
 * iterator result, {"done":false,"value":<row>} (done:true for the end;
 * createResolvedIteratorResultChunk), so that text is what JSON.parse
 * sees: a SyntaxError points into it, and the row can write the result's
 * own members ("1,\"done\":true" ends the iteration). So it is parsed
 * here too, into the result object the stream stores as it is. */
static bool parse_iterator_result(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n,
                                  bool done, rsc_node *out, const char **syntax) {
  static const char open_false[] = "{\"done\":false,\"value\":";
  static const char open_true[] = "{\"done\":true,\"value\":";
  const char *open = done ? open_true : open_false;
  size_t head = done ? sizeof open_true - 1 : sizeof open_false - 1;
  uint8_t *text = (uint8_t *)rsc__alloc(d, head + n + 1);
  if (!text) return false;
  memcpy(text, open, head);
  if (n) memcpy(text + head, p, n);
  text[head + n] = '}';
  rsc_row wrapped = *row;
  wrapped.data = text + head; /* the row's own bytes, at row->data_offset */
  wrapped.len = n;
  wrapped.padded = false;
  return parse_json_lead(d, &wrapped, text, head + n + 1, head, true, out, syntax);
}

static rsc_status model_row(rsc_decoder *d, const rsc_row *row, const uint8_t *p, size_t n) {
  rsc_node json;
  const char *syntax;
  bool ok = iterable_stream(d, row->id) ? parse_iterator_result(d, row, p, n, false, &json, &syntax)
                                        : parse_json(d, row, p, n, true, &json, &syntax);
  if (!ok) return d->err.code;
  rsc__resolve_model(d, row->id, syntax ? rsc__mk(RSC_NULL) : json, syntax);
  return d->err.code;
}

/* Apart from on_row, so that a decode without RSC_OPT_KEEP_ROWS pays one
 * flag test: the row's id, whether it had one (hints and time-origin
 * rows come as ":H", ":N"), its tag and payload. */
__attribute__((noinline, cold)) static bool log_row(rsc_decoder *d, const rsc_row *row,
                                                    const uint8_t *p, size_t n) {
  bool no_id =
      !rsc__is_length_tag(row->tag) && row->data_offset - row->offset == 1u + (row->tag != 0);
  const rsc_chunk *c = rsc__find_chunk(d, row->id);
  return rsc__rowlog_row(d, row->id, no_id, c && c->stream, row->tag, p, n, row->partial);
}

static rsc_status on_row(void *ctx, const rsc_row *row) {
  rsc_decoder *d = (rsc_decoder *)ctx;
  if (d->err.code) return d->err.code;
  d->row_offset = row->offset;
  d->row_id = row->id;
  if (!row->partial) d->input_end = row->data_offset + row->len;
  uint8_t tag = row->tag;
  /* A development server's time-origin row: switch to development
   * semantics, unless something was already decoded the production way
   * (a prerender may put import rows before it; those are only stored). */
  if (tag == 'N' && !d->dev && !d->mode_locked) d->dev = true;
  const uint8_t *p = row->data;
  size_t n = row->len;
  size_t elem;
  int bkind = rsc__binary_tag_kind(tag, &elem);

  /* One test for both rare modes: the row log of the Flight writer
   * (RSC_OPT_KEEP_ROWS, rowlog.c) and the parse-only benchmark. */
  if (__builtin_expect((d->opt.flags & (RSC__OPT_PARSE_ONLY | RSC_OPT_KEEP_ROWS)) != 0, 0)) {
    if ((d->opt.flags & RSC_OPT_KEEP_ROWS) && !log_row(d, row, p, n)) return d->err.code;
    if (d->opt.flags & RSC__OPT_PARSE_ONLY) {
      if (bkind >= 0 || tag == 'T' || tag == 'N' || tag == 'R' || tag == 'r' || tag == 'X' ||
          tag == 'x' || n == 0)
        return RSC_OK;
      if (tag == 'H') p++, n--;
      if (d->opt.flags & RSC__OPT_PARSE_WALK)
        rsc__json_parse_walk((rsc_json *)d->json, p, n, row->padded);
      else rsc__json_parse_only((rsc_json *)d->json, p, n, row->padded);
      return RSC_OK;
    }
  }

  if (bkind >= 0) {
    if (tag == 'b') {
      /* A piece of a byte stream: enqueued as it arrives. */
      rsc_node v = binary_node(d, RSC_UINT8, p, n, holding(d, row));
      if (v.kind == RSC_NONE) return d->err.code;
      return rsc__resolve_value(d, row->id, v);
    }
    /* No server writes a typed array of a partial element; React's view
     * holds floor(len / element size) elements (docs/spec/FLIGHT-PROTOCOL.md 2.4). */
    if (n % elem && !(d->opt.flags & RSC_OPT_LENIENT_VALUES))
      return rsc__fail(d, RSC_ERR_BAD_VALUE, row->offset, row->id,
                       "typed array row length is not a multiple of its element size");
    rsc_node v = binary_node(d, bkind, p, n - n % elem, holding(d, row));
    if (v.kind == RSC_NONE) return d->err.code;
    return rsc__resolve_value(d, row->id, v);
  }
  if (d->opt.flags & RSC_OPT_DROP_BOM) strip_bom(&p, &n);
  switch (tag) {
  case 'T': {
    /* (row->ascii is 0 but for gathered rows; a BOM is not ASCII: where
     * one was stripped, nothing was known) */
    size_t known = p == row->data ? row->ascii : 0;
    rsc_node v = text_node(d, p, n, known, holding(d, row));
    if (v.kind == RSC_NONE) return d->err.code;
    return rsc__resolve_value(d, row->id, v);
  }
  case 'I': return module_row(d, row, p, n);
  case 'H': return hint_row(d, row, p, n);
  case 'E': return error_row(d, row, p, n);
  case 'N':
  case 'D':
  case 'J':
  case 'W':
    if (!d->dev) return rsc__fail(d, RSC_ERR_DEV_ROW, row->offset, row->id, dev_row_message);
    if (debug_event(d, row, p, n) != RSC_OK) return d->err.code;
    if (tag == 'J') return model_row(d, row, p, n); /* I/O info resolves its chunk */
    return RSC_OK;
  case 'R': rsc__start_stream(d, row->id, RSC_STREAM_TEXT); return d->err.code;
  case 'r': rsc__start_stream(d, row->id, RSC_STREAM_BYTES); return d->err.code;
  case 'X': rsc__start_stream(d, row->id, RSC_STREAM_ITERABLE); return d->err.code;
  case 'x': rsc__start_stream(d, row->id, RSC_STREAM_ITERATOR); return d->err.code;
  case 'C': {
    rsc_node json;
    const char *syntax;
    if (iterable_stream(d, row->id)) {
      /* the end's result, as an item's (parse_iterator_result); an empty
       * row is React's '"$undefined"' */
      static const uint8_t undefined_text[] = "\"$undefined\"";
      if (n == 0) {
        p = undefined_text;
        n = sizeof undefined_text - 1;
      }
      if (!parse_iterator_result(d, row, p, n, true, &json, &syntax)) return d->err.code;
      rsc__stop_stream(d, row->id, syntax ? rsc__mk(RSC_NULL) : json, true, syntax);
      return d->err.code;
    }
    if (n == 0) {
      rsc__stop_stream(d, row->id, rsc__mk(RSC_UNDEFINED), false, NULL);
      return d->err.code;
    }
    if (!parse_json(d, row, p, n, false, &json, &syntax)) return d->err.code;
    rsc__stop_stream(d, row->id, syntax ? rsc__mk(RSC_NULL) : json, true, syntax);
    return d->err.code;
  }
  default:
    if (n == 0 && d->dev) {
      rsc__resolve_halt(d, row->id); /* "<id>:\n" in a development stream */
      return d->err.code;
    }
    return model_row(d, row, p, n);
  }
}

static rsc_status feed(rsc_decoder *d, const char *buf, size_t len, size_t slack);

static rsc_status feed_small(rsc_decoder *d, const char *buf, size_t len);

rsc_status rsc_decoder_feed(rsc_decoder *d, const char *buf, size_t len) {
  /* One byte inside a row being gathered: appended inline, no state
   * machine and no stack frame (anything else goes on to feed_small). */
  if (d && len == 1 && rsc__frame_take_byte(d->frame, (uint8_t)buf[0]))
    return RSC_OK; /* (an error or finish closed this path: rsc__frame_settle) */
  return feed_small(d, buf, len);
}

/* Apart from rsc_decoder_feed, so that a feed of one byte does not pay
 * the frame of this one. */
__attribute__((noinline)) static rsc_status feed_small(rsc_decoder *d, const char *buf,
                                                       size_t len) {
  if (!d) return RSC_ERR_STATE;
  /* A few bytes of a row still being gathered, or more of a text or
   * binary row that goes on past them: no state machine. */
  if (len > 1 && d->err.code == RSC_OK && !d->finished &&
      (len <= 16 ? rsc__frame_append_small(d->frame, (const uint8_t *)buf, len)
                 : rsc__frame_append_length(d->frame, (const uint8_t *)buf, len)))
    return RSC_OK;
  return feed(d, buf, len, 0);
}

rsc_status rsc_decoder_feed_padded(rsc_decoder *d, const char *buf, size_t len) {
  if (!d) return RSC_ERR_STATE;
  return feed(d, buf, len, RSC_PADDING);
}

/* Every other feed: the framer's state machine over the bytes. */
__attribute__((noinline)) static rsc_status feed(rsc_decoder *d, const char *buf, size_t len,
                                                 size_t slack) {
  if (d->err.code) return d->err.code;
  if (d->finished)
    return rsc__fail(d, RSC_ERR_STATE, rsc__frame_offset(d->frame), -1, "feed after finish");
  if (len == 0) return RSC_OK;
  /* The total size limit holds at the exact byte: what comes before it is
   * framed (rows that end there are decoded), then the limit error names
   * the first byte past it. */
  uint64_t max = d->opt.limits.max_total_bytes;
  size_t take = len;
  bool over = false;
  if (max) {
    uint64_t fed = rsc__frame_offset(d->frame);
    over = fed >= max || (uint64_t)len > max - fed;
    if (over) take = fed >= max ? 0 : (size_t)(max - fed);
  }
  rsc_error ferr = {RSC_OK, 0, -1, NULL};
  /* Bytes past the limit are not framed but may still be read ahead. */
  d->frame->slack = slack + (len - take);
  /* The JSON stage may look ahead at the rows these bytes hold (batches,
   * json_shim.cpp), while they are being framed and no longer. */
  d->feed_begin = (const uint8_t *)buf;
  d->feed_end = (const uint8_t *)buf + take;
  d->feeds++;
  rsc_status st =
      take ? rsc__frame_feed(d->frame, (const uint8_t *)buf, take, on_row, d, &ferr) : RSC_OK;
  d->feed_begin = d->feed_end = NULL;
  d->frame->slack = 0;
  if (st != RSC_OK && d->err.code == RSC_OK)
    rsc__fail(d, ferr.code ? ferr.code : st, ferr.offset, ferr.row_id, ferr.msg);
  if (over && d->err.code == RSC_OK)
    rsc__fail(d, RSC_ERR_LIMIT, max, rsc__frame_row_id(d->frame),
              "stream exceeds the total size limit");
  /* A row callback may have failed, after which the framer reopened its
   * fast path on the way out: close it again. */
  if (d->err.code) rsc__frame_settle(d->frame);
  d->row_id = -1;
  return d->err.code;
}

rsc_status rsc_decoder_finish(rsc_decoder *d) {
  if (!d) return RSC_ERR_STATE;
  if (d->finished || d->err.code) return d->err.code;
  d->finished = true;
  rsc__frame_settle(d->frame); /* no one-byte appends after finish */
  d->row_offset = rsc__frame_offset(d->frame);
  d->row_id = -1;
  /* A row without its final LF, or an empty length row at the very end, is
   * dropped as React drops it (docs/spec/FLIGHT-PROTOCOL.md 2.3). */
  if (d->opt.flags & RSC__OPT_PARSE_ONLY) return RSC_OK;
  rsc__close(d);
  if (d->err.code) return d->err.code;
  /* Revive everything the root reaches, as a consumer reading it would. */
  rsc__force(d);
  return d->err.code;
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The chunks marked `end` (rsc__close, rsc__get_chunk after it), their ids
 * ascending in *out (arena memory; NULL when none). False when memory ran
 * out. */
static bool ended_ids(rsc_decoder *d, uint8_t end, const int64_t **out, size_t *len) {
  size_t n = 0;
  for (size_t i = 0; i < d->table.count; i++) n += d->table.order[i]->ended == end;
  *out = NULL;
  *len = 0;
  if (!n) return true;
  int64_t *ids = (int64_t *)rsc__alloc(d, n * sizeof *ids);
  if (!ids) return false;
  n = 0;
  for (size_t i = 0; i < d->table.count; i++)
    if (d->table.order[i]->ended == end) ids[n++] = d->table.order[i]->id;
  qsort(ids, n, sizeof *ids, cmp_id);
  *out = ids;
  *len = n;
  return true;
}

const rsc_incomplete *rsc_decoder_incomplete(rsc_decoder *d) {
  if (!d || !d->closed || d->err.code) return NULL;
  if (d->incomplete && d->incomplete_chunks == d->table.count) return d->incomplete;
  rsc_incomplete r;
  memset(&r, 0, sizeof r);
  r.offset = rsc__frame_offset(d->frame);
  r.cut = rsc__frame_in_row(d->frame);
  r.cut_id = r.cut ? rsc__frame_row_id(d->frame) : -1;
  r.cut_offset = r.cut ? d->frame->row_start : r.offset;
  if (!ended_ids(d, CE_MISSING, &r.missing, &r.missing_len) ||
      !ended_ids(d, CE_OPEN_STREAM, &r.open_streams, &r.open_streams_len))
    return NULL; /* the arena recorded the failure */
  if (!r.cut && !r.missing_len && !r.open_streams_len) return NULL;
  rsc_incomplete *p = (rsc_incomplete *)rsc__alloc(d, sizeof *p);
  if (!p) return NULL;
  *p = r;
  d->incomplete = p;
  d->incomplete_chunks = d->table.count;
  return p;
}

rsc_decoder *rsc_decode(const char *buf, size_t len, const rsc_options *opt, rsc_error *err) {
  rsc_decoder *d = rsc_decoder_new(opt);
  if (!d) {
    if (err) {
      err->code = RSC_ERR_NOMEM;
      err->offset = 0;
      err->row_id = -1;
      err->msg = "out of memory";
    }
    return NULL;
  }
  rsc_decoder_feed(d, buf, len);
  rsc_decoder_finish(d);
  if (err) *err = d->err;
  return d;
}

void rsc_free(void *p) { free(p); }
