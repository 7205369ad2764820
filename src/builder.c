/* builder.c - Flight written from values a host makes (the "Building
 * Flight" API of rscflight.h), as React 19.3.1's server
 * (ReactFlightServer.js, react-server-dom-webpack for Node) writes them.
 *
 * Values are a graph of rsc_bval: a value with identity placed twice is
 * written once and named from then on by where it was written (a refnode:
 * React's writtenObjects), so shared values and cycles are written as
 * React writes them. Writing follows React's tasks: a task is a row id and
 * the model it writes; the root is task 0. Rendering a model writes its
 * JSON into the row's own text and emits, as they are met, the rows React
 * emits at once: T rows, binary rows, outlined Map, Set, FormData,
 * iterator and server reference rows, streams' R/r/X/x rows (into the
 * regular rows, so they come before the row that names them), I rows,
 * their outlined strings and symbols (into the import rows), E rows (into
 * the error rows). Lazies and promises settled later, elements deferred
 * after 3200 units of text in one row (React's serializedSize), promises
 * already settled, Blobs' rows and streams' items and ends become tasks of
 * the next batch, as React pings them for its next performWork. A flush
 * runs batches until none is ready, writing each batch's import, regular
 * then error rows, as flushCompletedChunks does.
 *
 * Calls: textout.c (text, JSON strings), json_shim.cpp (numbers as
 * JavaScript prints them), arena.c (the allocator hooks). Called by hosts
 * only. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "rscflight.h"
#include "textout.h"

/* React's limits (ReactFlightServer.js). */
#define LONG_STRING 1024    /* strings this long (UTF-16 units) go in T rows */
#define DEFER_SIZE 3200     /* text in a row after which elements are deferred */
#define IMPORT_SHORT 16     /* import strings shorter than this stay inline */
#define IMPORT_BUDGET 32768 /* total length of outlined import strings */
#define MAX_DEPTH 4096

enum bkind {
  BK_NULL,
  BK_UNDEFINED,
  BK_BOOL,
  BK_NUMBER,
  BK_STRING,
  BK_BIGINT,
  BK_DATE,
  BK_SYMBOL,
  BK_ERROR,
  BK_ARRAY,
  BK_OBJECT,
  BK_MAP,
  BK_SET,
  BK_ELEMENT,
  BK_CREF,
  BK_BINARY,
  BK_LAZY,
  BK_PROMISE,
  BK_SERVER_REF,
  BK_FORMDATA,
  BK_BLOB,
  BK_STREAM,
  BK_ITERATOR
};

/* LAZY, PROMISE: PS_*; STREAM: PS_PENDING while open, PS_RESOLVED once
 * closed, PS_REJECTED once errored. */
enum { PS_PENDING, PS_RESOLVED, PS_REJECTED };

/* Where a value was first written, for the second place that names it
 * (React's writtenObjects): a row's value ("$<id>") or a member of a value
 * that has one ("$<id>:a:0"), its key or index. */
typedef struct refnode {
  const struct refnode *up; /* NULL: the row's value */
  int64_t id;               /* the row, when up is NULL */
  const char *key;          /* NULL: an index */
  size_t klen;              /* or the index */
} refnode;

/* The place a value is rendered at: its parent's node (NULL: none) and
 * its key there (key NULL: the index klen). */
typedef struct slot {
  const refnode *up;
  const char *key;
  size_t klen;
} slot;

struct rsc_bval {
  rsc_builder *owner;
  struct rsc_bval *next_all; /* every value of the builder, for freeing */
  uint8_t kind;
  uint8_t sub;   /* BINARY: rsc_binary_kind; CREF: async; STREAM: rsc_stream_kind */
  uint8_t state; /* LAZY, PROMISE, STREAM: PS_* */
  bool written;  /* rendered: a container no longer changes */
  bool has_key;  /* ELEMENT: key is not null */
  int boolean;
  double num;
  char *str; /* STRING, BIGINT, DATE, SYMBOL, BINARY bytes, ELEMENT key, CREF
                and SERVER_REF id, LAZY/PROMISE/STREAM digest */
  size_t len;
  rsc_bval **items; /* ARRAY, SET, ITERATOR, OBJECT values, MAP and FORMDATA
                       key/value pairs, ELEMENT type and props, LAZY/PROMISE
                       value, SERVER_REF bound promise, BLOB its row's array,
                       STREAM items pushed before it is written */
  size_t n, cap;
  char **keys; /* OBJECT keys; CREF: chunks then name */
  size_t *klens;
  size_t kcap, lcap;    /* room in keys and klens */
  int64_t id;           /* LAZY/PROMISE/SERVER_REF/STREAM: row id once written, else -1 */
  const refnode *ref;   /* where it was first written (values with identity) */
  struct rsc_bval *ret; /* STREAM: the value it closed with (iterators) */
};

enum { TK_MODEL, TK_ITEM, TK_BYTES, TK_CLOSE };

/* A row to write: a model's (TK_MODEL; model NULL: an E row with digest),
 * a stream's item (TK_ITEM, TK_BYTES for a byte stream's; model the item) or its end (TK_CLOSE;
 * model the value an iterator returned, or NULL). delay: batches to wait first (a Blob's content is
 * read a turn later than an empty one's). */
typedef struct task {
  int64_t id;
  rsc_bval *model;
  const char *digest;
  uint8_t kind, delay;
} task;

typedef struct written_ref {
  char *key; /* client reference key, or import string */
  size_t len;
  int64_t id;
} written_ref;

struct rsc_builder {
  rsc_alloc al;
  rsc_arena arena; /* values, their strings, written keys */
  rsc_bval *all;
  rsc_status status;
  rsc_status broken; /* a flush failed: nothing more is written */
  int64_t next_id;
  bool root_set;
  size_t waiting;      /* written lazies/promises not settled */
  task *queue, *batch; /* ready for the next batch; the batch */
  size_t queue_len, queue_cap, batch_cap;
  written_ref *crefs, *strings, *symbols; /* written client references,
                                            import strings, symbols */
  size_t crefs_len, crefs_cap, strings_len, strings_cap, symbols_len, symbols_cap;
  size_t strings_size; /* React's writtenImportStringsSize */
  size_t serialized;   /* React's serializedSize */
  rsc_text imports, regular, errors;
  rsc_text **rows; /* texts of rows being rendered (outlined rows nest),
                      kept for the rows that follow */
  size_t rows_used, rows_cap;
  size_t depth;
  rsc_bval *model_root;     /* the value of the row being written (React's modelRoot) */
  const refnode *task_node; /* "$<id>" of that row */
};

/* --- memory ------------------------------------------------------------- */

/* Memory that lives as long as the builder. */
static void *b_alloc(rsc_builder *b, size_t n) {
  void *p = rsc__arena_alloc(&b->arena, n ? n : 1);
  if (!p) b->status = RSC_ERR_NOMEM;
  return p;
}

static bool grow(rsc_builder *b, void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap * 2 : 4;
  while (nc < need) nc *= 2;
  if (nc > SIZE_MAX / elem) {
    b->status = RSC_ERR_NOMEM;
    return false;
  }
  void *p = rsc__heap_realloc(&b->al, *arr, *cap * elem, nc * elem);
  if (!p) {
    b->status = RSC_ERR_NOMEM;
    return false;
  }
  *arr = p;
  *cap = nc;
  return true;
}

static char *b_strdup(rsc_builder *b, const char *s, size_t n) {
  char *p = (char *)b_alloc(b, n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static rsc_bval *new_val(rsc_builder *b, enum bkind kind) {
  if (!b) return NULL;
  rsc_bval *v = (rsc_bval *)b_alloc(b, sizeof *v);
  if (!v) return NULL;
  memset(v, 0, sizeof *v);
  v->owner = b;
  v->kind = (uint8_t)kind;
  v->id = -1;
  v->next_all = b->all;
  b->all = v;
  return v;
}

/* The arrays a value grows on the heap (the rest is in the arena). */
static void free_val(rsc_builder *b, rsc_bval *v) {
  if (v->kind != BK_CREF) rsc__heap_free(&b->al, v->keys);
  rsc__heap_free(&b->al, v->klens);
  rsc__heap_free(&b->al, v->items);
}

rsc_builder *rsc_builder_new(const rsc_alloc *alloc) {
  rsc_alloc al = {0};
  if (alloc) al = *alloc;
  rsc_builder *b = (rsc_builder *)rsc__heap_alloc(&al, sizeof *b);
  if (!b) return NULL;
  memset(b, 0, sizeof *b);
  b->al = al;
  rsc__arena_init(&b->arena, &b->al);
  b->next_id = 1;
  return b;
}

static void free_refs(rsc_builder *b, written_ref *r) { rsc__heap_free(&b->al, r); }

void rsc_builder_free(rsc_builder *b) {
  if (!b) return;
  for (rsc_bval *v = b->all, *next; v; v = next) {
    next = v->next_all;
    free_val(b, v);
  }
  rsc__heap_free(&b->al, b->queue);
  rsc__heap_free(&b->al, b->batch);
  free_refs(b, b->crefs);
  free_refs(b, b->strings);
  free_refs(b, b->symbols);
  for (size_t i = 0; i < b->rows_cap && b->rows[i]; i++) {
    free(b->rows[i]->p);
    rsc__heap_free(&b->al, b->rows[i]);
  }
  rsc__heap_free(&b->al, b->rows);
  free(b->imports.p);
  free(b->regular.p);
  free(b->errors.p);
  rsc__arena_free(&b->arena);
  rsc__heap_free(&b->al, b);
}

rsc_status rsc_builder_status(const rsc_builder *b) { return b ? b->status : RSC_ERR_STATE; }

static rsc_status fail(rsc_builder *b, rsc_status s) {
  if (b) b->status = s;
  return s;
}

/* --- values ------------------------------------------------------------- */

rsc_bval *rsc_build_null(rsc_builder *b) { return new_val(b, BK_NULL); }
rsc_bval *rsc_build_undefined(rsc_builder *b) { return new_val(b, BK_UNDEFINED); }
rsc_bval *rsc_build_error(rsc_builder *b) { return new_val(b, BK_ERROR); }
rsc_bval *rsc_build_array(rsc_builder *b) { return new_val(b, BK_ARRAY); }
rsc_bval *rsc_build_object(rsc_builder *b) { return new_val(b, BK_OBJECT); }
rsc_bval *rsc_build_map(rsc_builder *b) { return new_val(b, BK_MAP); }
rsc_bval *rsc_build_set(rsc_builder *b) { return new_val(b, BK_SET); }
rsc_bval *rsc_build_lazy(rsc_builder *b) { return new_val(b, BK_LAZY); }
rsc_bval *rsc_build_promise(rsc_builder *b) { return new_val(b, BK_PROMISE); }
rsc_bval *rsc_build_form_data(rsc_builder *b) { return new_val(b, BK_FORMDATA); }
rsc_bval *rsc_build_iterator(rsc_builder *b) { return new_val(b, BK_ITERATOR); }

rsc_bval *rsc_build_stream(rsc_builder *b, rsc_stream_kind kind) {
  if (!b) return NULL;
  if ((unsigned)kind > RSC_STREAM_ITERATOR) {
    b->status = RSC_ERR_BAD_VALUE;
    return NULL;
  }
  rsc_bval *r = new_val(b, BK_STREAM);
  if (r) r->sub = (uint8_t)kind;
  return r;
}

rsc_bval *rsc_build_bool(rsc_builder *b, int v) {
  rsc_bval *r = new_val(b, BK_BOOL);
  if (r) r->boolean = v != 0;
  return r;
}

rsc_bval *rsc_build_number(rsc_builder *b, double v) {
  rsc_bval *r = new_val(b, BK_NUMBER);
  if (r) r->num = v;
  return r;
}

static rsc_bval *text_val(rsc_builder *b, enum bkind kind, const char *s, size_t n) {
  if (!b) return NULL;
  if (!s && n) {
    b->status = RSC_ERR_STATE;
    return NULL;
  }
  rsc_bval *r = new_val(b, kind);
  if (!r) return NULL;
  if (!(r->str = b_strdup(b, s, n))) return NULL;
  r->len = n;
  return r;
}

rsc_bval *rsc_build_string(rsc_builder *b, const char *s, size_t len) {
  return text_val(b, BK_STRING, s, len);
}

rsc_bval *rsc_build_bigint(rsc_builder *b, const char *digits, size_t len) {
  if (!b) return NULL;
  size_t i = digits && len && digits[0] == '-' ? 1 : 0;
  bool ok = digits && i < len;
  for (size_t j = i; ok && j < len; j++) ok = digits[j] >= '0' && digits[j] <= '9';
  /* BigInt's toString never writes leading zeros or "-0". */
  if (ok && digits[i] == '0') ok = len == 1;
  if (!ok) {
    b->status = RSC_ERR_BAD_VALUE;
    return NULL;
  }
  return text_val(b, BK_BIGINT, digits, len);
}

rsc_bval *rsc_build_date(rsc_builder *b, const char *iso, size_t len) {
  return text_val(b, BK_DATE, iso, len);
}

rsc_bval *rsc_build_symbol(rsc_builder *b, const char *key, size_t len) {
  return text_val(b, BK_SYMBOL, key, len);
}

static const struct {
  char tag;
  uint8_t size;
} binary_tags[] = {
    [RSC_ARRAY_BUFFER] = {'A', 1},  [RSC_INT8] = {'O', 1},     [RSC_UINT8] = {'o', 1},
    [RSC_UINT8_CLAMPED] = {'U', 1}, [RSC_INT16] = {'S', 2},    [RSC_UINT16] = {'s', 2},
    [RSC_INT32] = {'L', 4},         [RSC_UINT32] = {'l', 4},   [RSC_FLOAT32] = {'G', 4},
    [RSC_FLOAT64] = {'g', 8},       [RSC_BIGINT64] = {'M', 8}, [RSC_BIGUINT64] = {'m', 8},
    [RSC_DATA_VIEW] = {'V', 1}};

rsc_bval *rsc_build_binary(rsc_builder *b, rsc_binary_kind kind, const void *bytes, size_t len) {
  if (!b) return NULL;
  if ((unsigned)kind > RSC_DATA_VIEW || len % binary_tags[kind].size || (!bytes && len)) {
    b->status = RSC_ERR_BAD_VALUE;
    return NULL;
  }
  rsc_bval *r = text_val(b, BK_BINARY, (const char *)bytes, len);
  if (r) r->sub = (uint8_t)kind;
  return r;
}

rsc_bval *rsc_build_client_ref(rsc_builder *b, const char *id, const char *const *chunks,
                               size_t n_chunks, const char *name, int async) {
  if (!b) return NULL;
  if (!id || !name || (n_chunks && !chunks)) {
    b->status = RSC_ERR_STATE;
    return NULL;
  }
  for (size_t i = 0; i < n_chunks; i++)
    if (!chunks[i]) {
      b->status = RSC_ERR_STATE;
      return NULL;
    }
  rsc_bval *r = text_val(b, BK_CREF, id, strlen(id));
  if (!r) return NULL;
  r->sub = async != 0;
  if (n_chunks + 1 > SIZE_MAX / sizeof(char *)) {
    b->status = RSC_ERR_NOMEM;
    return NULL;
  }
  if (!(r->keys = (char **)b_alloc(b, (n_chunks + 1) * sizeof(char *)))) return NULL;
  memset(r->keys, 0, (n_chunks + 1) * sizeof(char *));
  r->n = n_chunks;
  for (size_t i = 0; i < n_chunks; i++)
    if (!(r->keys[i] = b_strdup(b, chunks[i], strlen(chunks[i])))) return NULL;
  if (!(r->keys[n_chunks] = b_strdup(b, name, strlen(name)))) return NULL;
  return r;
}

/* BK_CREF's sub: async (1), or its metadata given as JSON text in str. */
enum { CREF_JSON = 2 };

/* Whether React's webpack client reads json as a client reference: an I
 * row of it, decoded, named by the root. */
static bool client_ref_metadata(rsc_builder *b, const char *json, size_t len) {
  if (memchr(json, '\n', len)) return false; /* the row would end there */
  size_t at = 0;
  while (at < len && (json[at] == ' ' || json[at] == '\t' || json[at] == '\r')) at++;
  if (at == len || json[at] != '[') return false; /* webpack's array, not React 18's object */
  static const char head[] = "1:I", tail[] = "\n0:\"$1\"\n";
  size_t n = sizeof head - 1 + len + sizeof tail - 1;
  char *row = (char *)rsc__heap_alloc(&b->al, n);
  if (!row) {
    b->status = RSC_ERR_NOMEM;
    return false;
  }
  memcpy(row, head, sizeof head - 1);
  memcpy(row + sizeof head - 1, json, len);
  memcpy(row + sizeof head - 1 + len, tail, sizeof tail - 1);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.alloc = b->al;
  rsc_error err;
  rsc_decoder *d = rsc_decode(row, n, &opt, &err);
  bool ok = false;
  if (!d || err.code == RSC_ERR_NOMEM) b->status = RSC_ERR_NOMEM;
  else if (err.code == RSC_OK)
    ok = rsc_node_kind(rsc_chunk_value(rsc_decoder_root(d))) == RSC_CLIENT_REF;
  rsc_decoder_free(d);
  rsc__heap_free(&b->al, row);
  return ok;
}

rsc_bval *rsc_build_client_ref_json(rsc_builder *b, const char *json, size_t len) {
  if (!b) return NULL;
  if (!json) {
    b->status = RSC_ERR_STATE;
    return NULL;
  }
  if (!client_ref_metadata(b, json, len)) {
    if (!b->status) b->status = RSC_ERR_BAD_VALUE;
    return NULL;
  }
  rsc_bval *r = text_val(b, BK_CREF, json, len);
  if (r) r->sub = CREF_JSON;
  return r;
}

/* A value with one item (the items array grown to hold it). */
static bool hold(rsc_builder *b, rsc_bval *v, rsc_bval *item) {
  if (!grow(b, (void **)&v->items, &v->cap, v->n + 1, sizeof *v->items)) return false;
  v->items[v->n++] = item;
  return true;
}

rsc_bval *rsc_build_server_ref(rsc_builder *b, const char *id, size_t len, rsc_bval *bound) {
  if (!b) return NULL;
  if (bound && (bound->owner != b || bound->kind != BK_ARRAY)) {
    b->status = RSC_ERR_STATE;
    return NULL;
  }
  rsc_bval *r = text_val(b, BK_SERVER_REF, id, len);
  if (!r || !bound) return r;
  /* React writes the bound arguments as Promise.resolve(bound). */
  rsc_bval *p = rsc_build_promise(b);
  if (!p || !hold(b, p, bound) || !hold(b, r, p)) return NULL;
  p->state = PS_RESOLVED;
  return r;
}

rsc_bval *rsc_build_blob(rsc_builder *b, const char *type, size_t type_len, const void *bytes,
                         size_t len) {
  if (!b) return NULL;
  if (!bytes && len) {
    b->status = RSC_ERR_STATE;
    return NULL;
  }
  /* What React's server writes for it: [type, ...its chunks as Uint8Array]
   * (one chunk here; none when empty). */
  rsc_bval *r = new_val(b, BK_BLOB), *row = rsc_build_array(b),
           *t = rsc_build_string(b, type, type_len);
  if (!r || !row || !t || !hold(b, row, t) || !hold(b, r, row)) return NULL;
  if (len) {
    rsc_bval *data = rsc_build_binary(b, RSC_UINT8, bytes, len);
    if (!data || !hold(b, row, data)) return NULL;
  }
  return r;
}

/* What placing v under a parent needs: v from b. A value may be placed
 * any number of times (a value with identity is written once, then named). */
static rsc_status place(rsc_builder *b, rsc_bval *v) {
  if (!v)
    return fail(b, b->status == RSC_ERR_NOMEM || b->status == RSC_ERR_BAD_VALUE ? b->status
                                                                                : RSC_ERR_STATE);
  if (v->owner != b) return fail(b, RSC_ERR_STATE);
  return RSC_OK;
}

static rsc_status container_ok(rsc_builder *b, rsc_bval *c, enum bkind k1, enum bkind k2) {
  if (!c) return place(b, c);
  if (c->owner != b || (c->kind != k1 && c->kind != k2) || c->written)
    return fail(b, RSC_ERR_STATE);
  return RSC_OK;
}

rsc_bval *rsc_build_element(rsc_builder *b, rsc_bval *type, const char *key, size_t key_len,
                            rsc_bval *props) {
  if (!b) return NULL;
  if (place(b, type) || (props && place(b, props))) return NULL;
  if (props && (props->kind != BK_OBJECT || props == type)) {
    b->status = RSC_ERR_STATE;
    return NULL;
  }
  if (!props && !(props = rsc_build_object(b))) return NULL;
  rsc_bval *r = new_val(b, BK_ELEMENT);
  if (!r) return NULL;
  if (key) {
    if (!(r->str = b_strdup(b, key, key_len))) return NULL;
    r->len = key_len;
    r->has_key = true;
  }
  if (!grow(b, (void **)&r->items, &r->cap, 2, sizeof *r->items)) return NULL;
  r->items[0] = type;
  r->items[1] = props;
  r->n = 2;
  return r;
}

rsc_status rsc_build_push(rsc_builder *b, rsc_bval *c, rsc_bval *v) {
  if (!b) return RSC_ERR_STATE;
  rsc_status s = c && c->kind == BK_ITERATOR ? container_ok(b, c, BK_ITERATOR, BK_ITERATOR)
                                             : container_ok(b, c, BK_ARRAY, BK_SET);
  if (s || (s = place(b, v))) return s;
  if (!grow(b, (void **)&c->items, &c->cap, c->n + 1, sizeof *c->items)) return RSC_ERR_NOMEM;
  c->items[c->n++] = v;
  return RSC_OK;
}

rsc_status rsc_build_form_append(rsc_builder *b, rsc_bval *fd, const char *name, size_t name_len,
                                 rsc_bval *v) {
  if (!b) return RSC_ERR_STATE;
  rsc_status s = container_ok(b, fd, BK_FORMDATA, BK_FORMDATA);
  if (s || (s = place(b, v))) return s;
  if (v->kind != BK_STRING && v->kind != BK_BLOB) return fail(b, RSC_ERR_STATE);
  rsc_bval *k = rsc_build_string(b, name, name_len);
  if (!k) return b->status;
  if (!grow(b, (void **)&fd->items, &fd->cap, fd->n + 2, sizeof *fd->items)) return RSC_ERR_NOMEM;
  fd->items[fd->n++] = k;
  fd->items[fd->n++] = v;
  return RSC_OK;
}

rsc_status rsc_build_map_put(rsc_builder *b, rsc_bval *m, rsc_bval *k, rsc_bval *v) {
  if (!b) return RSC_ERR_STATE;
  rsc_status s = container_ok(b, m, BK_MAP, BK_MAP);
  if (s || (s = place(b, k)) || (s = place(b, v))) return s;
  if (!grow(b, (void **)&m->items, &m->cap, m->n + 2, sizeof *m->items)) return RSC_ERR_NOMEM;
  m->items[m->n++] = k;
  m->items[m->n++] = v;
  return RSC_OK;
}

rsc_status rsc_build_put(rsc_builder *b, rsc_bval *o, const char *key, size_t key_len,
                         rsc_bval *v) {
  if (!b) return RSC_ERR_STATE;
  rsc_status s = container_ok(b, o, BK_OBJECT, BK_OBJECT);
  if (s || (s = place(b, v))) return s;
  if (!key && key_len) return fail(b, RSC_ERR_STATE);
  for (size_t i = 0; i < o->n; i++)
    if (o->klens[i] == key_len && (!key_len || !memcmp(o->keys[i], key, key_len))) {
      o->items[i] = v;
      return RSC_OK;
    }
  if (!grow(b, (void **)&o->items, &o->cap, o->n + 1, sizeof *o->items) ||
      !grow(b, (void **)&o->keys, &o->kcap, o->n + 1, sizeof *o->keys) ||
      !grow(b, (void **)&o->klens, &o->lcap, o->n + 1, sizeof *o->klens))
    return RSC_ERR_NOMEM;
  char *k = b_strdup(b, key, key_len);
  if (!k) return RSC_ERR_NOMEM;
  o->keys[o->n] = k;
  o->klens[o->n] = key_len;
  o->items[o->n++] = v;
  return RSC_OK;
}

/* --- identity (React's writtenObjects) ----------------------------------- */

static bool has_identity(const rsc_bval *v) {
  switch (v->kind) {
  case BK_ARRAY:
  case BK_OBJECT:
  case BK_MAP:
  case BK_SET:
  case BK_ELEMENT:
  case BK_BINARY:
  case BK_ERROR:
  case BK_FORMDATA:
  case BK_BLOB:
  case BK_STREAM:
  case BK_ITERATOR: return true;
  default: return false;
  }
}

static const refnode *ref_new(rsc_builder *b, const refnode *up, int64_t id, const char *key,
                              size_t klen) {
  refnode *r = (refnode *)b_alloc(b, sizeof *r);
  if (r) *r = (refnode){up, id, key, klen};
  return r;
}

/* A row's value: "$<id>". */
static const refnode *ref_row(rsc_builder *b, int64_t id) { return ref_new(b, NULL, id, NULL, 0); }

/* The node of a value at a slot into *out: none when its parent has none
 * or the key holds a ":" (a path could not name it). false: no memory. */
static bool ref_at(rsc_builder *b, const slot *at, const refnode **out) {
  *out = NULL;
  if (!at || !at->up || (at->key && memchr(at->key, ':', at->klen))) return true;
  return (*out = ref_new(b, at->up, 0, at->key, at->klen)) != NULL;
}

static void put_path(rsc_text *t, const refnode *r) {
  char num[24];
  if (!r->up) {
    rsc__text_put(t, "$", 1);
    rsc__text_hex(t, (uint64_t)r->id);
    return;
  }
  put_path(t, r->up);
  rsc__text_put(t, ":", 1);
  if (r->key) rsc__text_json_escaped(t, r->key, r->klen);
  else rsc__text_put(t, num, (size_t)snprintf(num, sizeof num, "%zu", r->klen));
}

/* --- tasks -------------------------------------------------------------- */

static bool enqueue_task(rsc_builder *b, task k) {
  if (!grow(b, (void **)&b->queue, &b->queue_cap, b->queue_len + 1, sizeof *b->queue)) return false;
  b->queue[b->queue_len++] = k;
  return true;
}

static bool enqueue(rsc_builder *b, int64_t id, rsc_bval *model, const char *digest) {
  return enqueue_task(b, (task){id, model, digest, TK_MODEL, 0});
}

/* Whether p is this builder's, still pending, and of a kind that settles
 * as the call asks: a lazy or promise, or (stream) a stream. */
static rsc_status pending(rsc_builder *b, rsc_bval *p, bool stream) {
  if (!b) return RSC_ERR_STATE;
  if (!p) return place(b, p);
  bool kind = stream ? p->kind == BK_STREAM : p->kind == BK_LAZY || p->kind == BK_PROMISE;
  if (p->owner != b || !kind || p->state != PS_PENDING) return fail(b, RSC_ERR_STATE);
  return RSC_OK;
}

/* p settled: nothing waits on it any more. */
static void settled(rsc_builder *b, rsc_bval *p, uint8_t state) {
  p->state = state;
  if (p->id >= 0) b->waiting--;
}

rsc_status rsc_builder_resolve(rsc_builder *b, rsc_bval *p, rsc_bval *v) {
  rsc_status s = pending(b, p, false);
  if (s || (s = place(b, v))) return s;
  if (v == p) return fail(b, RSC_ERR_STATE);
  if (!p->cap && !grow(b, (void **)&p->items, &p->cap, 1, sizeof *p->items)) return RSC_ERR_NOMEM;
  if (p->id >= 0 && !enqueue(b, p->id, v, NULL)) return RSC_ERR_NOMEM;
  p->items[0] = v;
  p->n = 1;
  settled(b, p, PS_RESOLVED);
  return RSC_OK;
}

/* Rejects a promise or errors a stream, once it may settle: its digest
 * ("" for NULL) kept, its row queued when it has one. */
static rsc_status reject_with(rsc_builder *b, rsc_bval *p, const char *digest) {
  if (!digest) digest = "";
  char *d = b_strdup(b, digest, strlen(digest));
  if (!d) return RSC_ERR_NOMEM;
  if (p->id >= 0 && !enqueue(b, p->id, NULL, d)) return RSC_ERR_NOMEM;
  p->str = d;
  settled(b, p, PS_REJECTED);
  return RSC_OK;
}

rsc_status rsc_builder_reject(rsc_builder *b, rsc_bval *p, const char *digest) {
  rsc_status s = pending(b, p, false);
  return s ? s : reject_with(b, p, digest);
}

rsc_status rsc_builder_root(rsc_builder *b, rsc_bval *root) {
  if (!b) return RSC_ERR_STATE;
  if (b->root_set) return fail(b, RSC_ERR_STATE);
  rsc_status s = place(b, root);
  if (s) return s;
  if (!enqueue(b, 0, root, NULL)) return RSC_ERR_NOMEM;
  /* createTask: the root is row 0's value, "$0" wherever else it is. */
  if (has_identity(root) && !root->ref && !(root->ref = ref_row(b, 0))) return RSC_ERR_NOMEM;
  b->root_set = true;
  return RSC_OK;
}

/* A stream's rows once it is written: its items and its end, in order. */
rsc_status rsc_builder_stream_push(rsc_builder *b, rsc_bval *s, rsc_bval *v) {
  rsc_status st = pending(b, s, true);
  if (st || (st = place(b, v))) return st;
  if (s->sub == RSC_STREAM_BYTES && v->kind != BK_BINARY) return fail(b, RSC_ERR_STATE);
  uint8_t kind = s->sub == RSC_STREAM_BYTES ? TK_BYTES : TK_ITEM;
  if (s->id >= 0) return enqueue_task(b, (task){s->id, v, NULL, kind, 0}) ? RSC_OK : RSC_ERR_NOMEM;
  return hold(b, s, v) ? RSC_OK : RSC_ERR_NOMEM;
}

rsc_status rsc_builder_stream_close(rsc_builder *b, rsc_bval *s, rsc_bval *ret) {
  rsc_status st = pending(b, s, true);
  if (st || (ret && (st = place(b, ret)))) return st;
  /* A ReadableStream ends without a value. */
  if (ret && s->sub != RSC_STREAM_ITERABLE && s->sub != RSC_STREAM_ITERATOR)
    return fail(b, RSC_ERR_STATE);
  if (s->id >= 0 && !enqueue_task(b, (task){s->id, ret, NULL, TK_CLOSE, 0})) return RSC_ERR_NOMEM;
  s->ret = ret;
  settled(b, s, PS_RESOLVED);
  return RSC_OK;
}

rsc_status rsc_builder_stream_error(rsc_builder *b, rsc_bval *s, const char *digest) {
  rsc_status st = pending(b, s, true);
  return st ? st : reject_with(b, s, digest);
}

size_t rsc_builder_pending(const rsc_builder *b) { return b ? b->waiting + b->queue_len : 0; }

/* --- rendering ---------------------------------------------------------- */

/* JavaScript's string length: UTF-16 units of UTF-8 (or WTF-8) text. */
static size_t u16_len(const char *s, size_t n) {
  size_t units = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = (uint8_t)s[i];
    if ((c & 0xC0) != 0x80) units += c >= 0xF0 ? 2 : 1;
  }
  return units;
}

/* escapeStringValue: a string that starts with "$" gets another. */
static void put_escaped(rsc_text *t, const char *s, size_t n) {
  if (n && s[0] == '$') rsc__text_json_string_prefixed(t, "$", s, n);
  else rsc__text_json_string(t, s, n);
}

/* "$<id>" (or with another prefix) as a JSON string. */
static void put_ref(rsc_text *t, const char *prefix, int64_t id) {
  rsc__text_put(t, "\"", 1);
  rsc__text_puts(t, prefix);
  rsc__text_hex(t, (uint64_t)id);
  rsc__text_put(t, "\"", 1);
}

static void append(rsc_text *dst, rsc_text *src) {
  if (src->status && !dst->status) dst->status = src->status;
  rsc__text_put(dst, src->p, src->len);
}

/* A T row: the text as TextEncoder encodes it (lone surrogates become
 * U+FFFD), after its byte length. */
static void emit_text_row(rsc_builder *b, int64_t id, const char *s, size_t n) {
  /* A WTF-8 surrogate and U+FFFD are both 3 bytes: the length holds. */
  rsc_text *t = &b->regular;
  rsc__text_hex(t, (uint64_t)id);
  rsc__text_put(t, ":T", 2);
  rsc__text_hex(t, (uint64_t)n);
  rsc__text_put(t, ",", 1);
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    if (i + 2 < n && (uint8_t)s[i] == 0xED && ((uint8_t)s[i + 1] & 0xE0) == 0xA0) {
      rsc__text_put(t, s + i - run, run);
      run = 0;
      rsc__text_put(t, "\xEF\xBF\xBD", 3);
      i += 2;
    } else {
      run++;
    }
  }
  rsc__text_put(t, s + n - run, run);
}

static void emit_error_row(rsc_builder *b, int64_t id, const char *digest) {
  rsc_text *t = &b->errors;
  rsc__text_hex(t, (uint64_t)id);
  rsc__text_put(t, ":E{\"digest\":", 12);
  rsc__text_json_string(t, digest, strlen(digest));
  rsc__text_put(t, "}\n", 2);
}

static int render(rsc_builder *b, rsc_text *t, rsc_bval *v, bool type_slot, const slot *at);

/* A row's own text until the row is whole (a kept one, emptied), or NULL;
 * row_done gives it back. */
static rsc_text *row_text(rsc_builder *b) {
  if (b->rows_used == b->rows_cap) {
    size_t cap = b->rows_cap;
    if (!grow(b, (void **)&b->rows, &cap, b->rows_used + 1, sizeof *b->rows)) return NULL;
    memset(b->rows + b->rows_cap, 0, (cap - b->rows_cap) * sizeof *b->rows);
    b->rows_cap = cap;
  }
  rsc_text *t = b->rows[b->rows_used];
  if (!t) {
    if (!(t = (rsc_text *)rsc__heap_alloc(&b->al, sizeof *t))) {
      b->status = RSC_ERR_NOMEM;
      return NULL;
    }
    memset(t, 0, sizeof *t);
    b->rows[b->rows_used] = t;
  }
  b->rows_used++;
  t->len = 0;
  t->status = RSC_OK;
  return t;
}

static void row_done(rsc_builder *b) { b->rows_used--; }

/* The reference a second place writes: "$<id>" or "$<id>:a:0". */
static void put_node(rsc_text *t, const refnode *r) {
  rsc__text_put(t, "\"", 1);
  put_path(t, r);
  rsc__text_put(t, "\"", 1);
}

/* outlineModel: the items (pairs for a Map and FormData) as an array in a
 * row of its own, written before the row that names them; the array is
 * that row's value, its items members of it. */
static int outline(rsc_builder *b, rsc_text *t, rsc_bval *v, const char *prefix) {
  int64_t id = b->next_id++;
  size_t saved = b->serialized;
  const refnode *root = ref_row(b, id);
  rsc_text *row = root ? row_text(b) : NULL;
  if (!row) return RSC_ERR_NOMEM;
  rsc__text_hex(row, (uint64_t)id);
  rsc__text_put(row, ":[", 2);
  bool pairs = v->kind == BK_MAP || v->kind == BK_FORMDATA;
  size_t count = pairs ? v->n / 2 : v->n;
  int err = 0;
  for (size_t i = 0; i < count && !err; i++) {
    char idx[24];
    b->serialized += (size_t)snprintf(idx, sizeof idx, "%zu", i);
    if (i) rsc__text_put(row, ",", 1);
    slot at = {root, NULL, i};
    if (pairs) {
      b->serialized += 2; /* the entry's keys "0" and "1" */
      const refnode *pair = ref_new(b, root, 0, NULL, i);
      if (!pair) {
        err = RSC_ERR_NOMEM;
        break;
      }
      slot k = {pair, NULL, 0}, x = {pair, NULL, 1};
      rsc__text_put(row, "[", 1);
      err = render(b, row, v->items[2 * i], false, &k);
      rsc__text_put(row, ",", 1);
      if (!err) err = render(b, row, v->items[2 * i + 1], false, &x);
      rsc__text_put(row, "]", 1);
    } else {
      err = render(b, row, v->items[i], false, &at);
    }
  }
  rsc__text_put(row, "]\n", 2);
  if (!err) append(&b->regular, row);
  row_done(b);
  b->serialized = saved;
  if (!err) put_ref(t, prefix, id);
  return err;
}

/* serializeImportString: a string of 16 units or more is a row of its
 * own among the import rows, written once, while the budget lasts. */
static int import_string(rsc_builder *b, rsc_text *t, const char *s) {
  size_t n = strlen(s), units = u16_len(s, n);
  if (units < IMPORT_SHORT) {
    put_escaped(t, s, n);
    return 0;
  }
  for (size_t i = 0; i < b->strings_len; i++)
    if (b->strings[i].len == n && !memcmp(b->strings[i].key, s, n)) {
      put_ref(t, "$", b->strings[i].id);
      return 0;
    }
  if (b->strings_size + units > IMPORT_BUDGET) {
    put_escaped(t, s, n);
    return 0;
  }
  if (!grow(b, (void **)&b->strings, &b->strings_cap, b->strings_len + 1, sizeof *b->strings))
    return RSC_ERR_NOMEM;
  char *k = b_strdup(b, s, n);
  if (!k) return RSC_ERR_NOMEM;
  b->strings_size += units;
  int64_t id = b->next_id++;
  b->strings[b->strings_len++] = (written_ref){k, n, id};
  rsc__text_hex(&b->imports, (uint64_t)id);
  rsc__text_put(&b->imports, ":", 1);
  put_escaped(&b->imports, s, n);
  rsc__text_put(&b->imports, "\n", 1);
  put_ref(t, "$", id);
  return 0;
}

/* A client reference's key in pieces: its I row is written once per key,
 * the pieces' concatenation. */
typedef struct cref_key {
  const char *part[4];
  size_t len[4];
  size_t total;
} cref_key;

/* Names the I row already written for k in t ("$<id>", "$L<id>" in a type
 * slot): 1, or 0 when there is none. */
static int cref_named(rsc_builder *b, rsc_text *t, const char *prefix, const cref_key *k) {
  for (size_t i = 0; i < b->crefs_len; i++) {
    const written_ref *r = &b->crefs[i];
    if (r->len != k->total) continue;
    size_t at = 0, j = 0;
    for (; j < 4 && !memcmp(r->key + at, k->part[j], k->len[j]); j++) at += k->len[j];
    if (j == 4) {
      put_ref(t, prefix, r->id);
      return 1;
    }
  }
  return 0;
}

/* Room for one more written reference, and k as one string in the
 * builder's memory; NULL when out of memory. */
static char *cref_new_key(rsc_builder *b, const cref_key *k) {
  if (!grow(b, (void **)&b->crefs, &b->crefs_cap, b->crefs_len + 1, sizeof *b->crefs)) return NULL;
  char *key = (char *)b_alloc(b, k->total + 1);
  if (!key) return NULL;
  size_t at = 0;
  for (size_t j = 0; j < 4; j++) {
    if (k->len[j]) memcpy(key + at, k->part[j], k->len[j]);
    at += k->len[j];
  }
  key[at] = 0;
  return key;
}

/* Opens a new I row among the import rows: "<id>:I", its id. */
static int64_t cref_row(rsc_builder *b) {
  int64_t id = b->next_id++;
  rsc__text_hex(&b->imports, (uint64_t)id);
  rsc__text_put(&b->imports, ":I", 2);
  return id;
}

/* Remembers the I row id written for key and names it in t. */
static void cref_written(rsc_builder *b, rsc_text *t, const char *prefix, char *key, size_t kl,
                         int64_t id) {
  b->crefs[b->crefs_len++] = (written_ref){key, kl, id};
  put_ref(t, prefix, id);
}

/* A reference given as metadata text: its I row, once per text. */
static int client_ref_json(rsc_builder *b, rsc_text *t, rsc_bval *v, const char *prefix) {
  /* "\x01": no "id#name" key starts so */
  cref_key k = {{"\x01", v->str, "", ""}, {1, v->len, 0, 0}, v->len + 1};
  if (cref_named(b, t, prefix, &k)) return 0;
  char *key = cref_new_key(b, &k);
  if (!key) return RSC_ERR_NOMEM;
  int64_t id = cref_row(b);
  rsc__text_put(&b->imports, v->str, v->len);
  rsc__text_put(&b->imports, "\n", 1);
  if (b->imports.status) return b->imports.status;
  cref_written(b, t, prefix, key, k.total, id);
  return 0;
}

static int client_ref(rsc_builder *b, rsc_text *t, rsc_bval *v, bool type_slot) {
  const char *prefix = type_slot ? "$L" : "$";
  if (v->sub == CREF_JSON) return client_ref_json(b, t, v, prefix);
  const char *name = v->keys[v->n];
  /* React's key: the manifest's "id#name", "#async" added for async ones. */
  size_t nl = strlen(name), al = v->sub ? 6 : 0;
  cref_key k = {{v->str, "#", name, "#async"}, {v->len, 1, nl, al}, v->len + 1 + nl + al};
  if (cref_named(b, t, prefix, &k)) return 0;
  char *key = cref_new_key(b, &k);
  if (!key) return RSC_ERR_NOMEM;
  rsc_text *meta = row_text(b);
  if (!meta) return RSC_ERR_NOMEM;
  int err = 0;
  rsc__text_put(meta, "[", 1);
  err = import_string(b, meta, v->str);
  rsc__text_put(meta, ",[", 2);
  for (size_t i = 0; i < v->n && !err; i++) {
    if (i) rsc__text_put(meta, ",", 1);
    err = import_string(b, meta, v->keys[i]);
  }
  rsc__text_put(meta, "],", 2);
  if (!err) err = import_string(b, meta, name);
  rsc__text_put(meta, v->sub ? ",1]" : "]", v->sub ? 3 : 1);
  if (!err && meta->status) err = meta->status;
  if (err) {
    row_done(b);
    return err;
  }
  int64_t id = cref_row(b);
  append(&b->imports, meta);
  rsc__text_put(&b->imports, "\n", 1);
  row_done(b);
  cref_written(b, t, prefix, key, k.total, id);
  return 0;
}

/* A symbol is a row of its own among the import rows, written once:
 * "$<id>" names it everywhere, an element's type included. */
static int symbol(rsc_builder *b, rsc_text *t, rsc_bval *v) {
  for (size_t i = 0; i < b->symbols_len; i++)
    if (b->symbols[i].len == v->len && !memcmp(b->symbols[i].key, v->str, v->len)) {
      put_ref(t, "$", b->symbols[i].id);
      return 0;
    }
  if (!grow(b, (void **)&b->symbols, &b->symbols_cap, b->symbols_len + 1, sizeof *b->symbols))
    return RSC_ERR_NOMEM;
  char *k = b_strdup(b, v->str, v->len);
  if (!k) return RSC_ERR_NOMEM;
  int64_t id = b->next_id++;
  b->symbols[b->symbols_len++] = (written_ref){k, v->len, id};
  rsc__text_hex(&b->imports, (uint64_t)id);
  rsc__text_put(&b->imports, ":", 1);
  rsc__text_json_string_prefixed(&b->imports, "$S", v->str, v->len);
  rsc__text_put(&b->imports, "\n", 1);
  put_ref(t, "$", id);
  return 0;
}

/* Object keys in JavaScript's order: canonical array indices (below
 * 2^32 - 1) first, ascending, then the others as they were set. */
static bool index_key(const char *k, size_t n, uint32_t *out) {
  if (!n || n > 10 || (n > 1 && k[0] == '0')) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (k[i] < '0' || k[i] > '9') return false;
    v = v * 10 + (uint64_t)(k[i] - '0');
  }
  if (v >= 0xFFFFFFFFu) return false;
  *out = (uint32_t)v;
  return true;
}

static int render_member(rsc_builder *b, rsc_text *t, rsc_bval *o, size_t i, bool *first) {
  if (!*first) rsc__text_put(t, ",", 1);
  *first = false;
  b->serialized += u16_len(o->keys[i], o->klens[i]);
  rsc__text_json_string(t, o->keys[i], o->klens[i]);
  rsc__text_put(t, ":", 1);
  slot at = {o->ref, o->keys[i], o->klens[i]};
  return render(b, t, o->items[i], false, &at);
}

typedef struct index_member {
  uint32_t index;
  size_t at;
} index_member;

static int cmp_index(const void *a, const void *b) {
  uint32_t x = ((const index_member *)a)->index, y = ((const index_member *)b)->index;
  return x < y ? -1 : x > y;
}

static int render_object(rsc_builder *b, rsc_text *t, rsc_bval *o) {
  rsc__text_put(t, "{", 1);
  bool first = true;
  int err = 0;
  size_t nidx = 0;
  uint32_t k;
  for (size_t i = 0; i < o->n; i++) nidx += index_key(o->keys[i], o->klens[i], &k);
  if (nidx) {
    index_member *idx = (index_member *)rsc__heap_alloc(&b->al, nidx * sizeof *idx);
    if (!idx) return RSC_ERR_NOMEM;
    size_t j = 0;
    for (size_t i = 0; i < o->n; i++)
      if (index_key(o->keys[i], o->klens[i], &k)) idx[j++] = (index_member){k, i};
    qsort(idx, nidx, sizeof *idx, cmp_index);
    for (j = 0; j < nidx && !err; j++) err = render_member(b, t, o, idx[j].at, &first);
    rsc__heap_free(&b->al, idx);
  }
  for (size_t i = 0; i < o->n && !err; i++)
    if (!index_key(o->keys[i], o->klens[i], &k)) err = render_member(b, t, o, i, &first);
  rsc__text_put(t, "}", 1);
  return err;
}

/* A deferred element or lazy: "$L<id>", its row in the next batch (the
 * element is that row's value from now on, as React's createTask says). */
static int defer(rsc_builder *b, rsc_text *t, rsc_bval *model) {
  int64_t id = b->next_id++;
  if (!enqueue(b, id, model, NULL)) return RSC_ERR_NOMEM;
  if (!(model->ref = ref_row(b, id))) return RSC_ERR_NOMEM;
  put_ref(t, "$L", id);
  return 0;
}

/* A row of a stream (or a Blob's) value: the binary or text row of its
 * own id that emitChunk writes for bytes and strings. */
static void emit_binary_row(rsc_builder *b, int64_t id, char tag, const rsc_bval *v) {
  rsc_text *r = &b->regular;
  rsc__text_hex(r, (uint64_t)id);
  rsc__text_put(r, ":", 1);
  rsc__text_put(r, &tag, 1);
  rsc__text_hex(r, v->len);
  rsc__text_put(r, ",", 1);
  rsc__text_put(r, v->str, v->len);
}

/* serializeReadableStream / serializeAsyncIterable: "<id>:R" (r, X, x)
 * now, the items and the end as rows of that id from the next batch on. */
static int stream(rsc_builder *b, rsc_text *t, rsc_bval *v) {
  static const char tags[] = "RrXx";
  int64_t id = b->next_id++;
  v->id = id;
  if (!(v->ref = ref_row(b, id))) return RSC_ERR_NOMEM;
  rsc_text *r = &b->regular;
  rsc__text_hex(r, (uint64_t)id);
  rsc__text_put(r, ":", 1);
  rsc__text_put(r, &tags[v->sub], 1);
  rsc__text_put(r, "\n", 1);
  for (size_t i = 0; i < v->n; i++)
    if (!enqueue_task(
            b, (task){id, v->items[i], NULL, v->sub == RSC_STREAM_BYTES ? TK_BYTES : TK_ITEM, 0}))
      return RSC_ERR_NOMEM;
  if (v->state == PS_RESOLVED && !enqueue_task(b, (task){id, v->ret, NULL, TK_CLOSE, 0}))
    return RSC_ERR_NOMEM;
  if (v->state == PS_REJECTED && !enqueue(b, id, NULL, v->str)) return RSC_ERR_NOMEM;
  if (v->state == PS_PENDING) b->waiting++;
  put_ref(t, "$", id);
  return 0;
}

static int render(rsc_builder *b, rsc_text *t, rsc_bval *v, bool type_slot, const slot *at) {
  if (++b->depth > MAX_DEPTH) return RSC_ERR_LIMIT;
  int err = 0;
  char num[40];
  bool is_root = v == b->model_root;
  if (has_identity(v)) {
    if (is_root) {
      /* The row's own value: written here, whatever names it. */
      b->model_root = NULL;
      if (v->ref && v->kind != BK_ELEMENT && (v->ref->up || v->ref->id != b->task_node->id)) {
        put_node(t, v->ref);
        b->depth--;
        return 0;
      }
    } else if (v->ref) {
      put_node(t, v->ref);
      b->depth--;
      return 0;
    } else if (!ref_at(b, at, &v->ref)) {
      return RSC_ERR_NOMEM;
    }
  }
  v->written = true;
  switch ((enum bkind)v->kind) {
  case BK_NULL: rsc__text_put(t, "null", 4); break;
  case BK_UNDEFINED: rsc__text_puts(t, "\"$undefined\""); break;
  case BK_BOOL: rsc__text_puts(t, v->boolean ? "true" : "false"); break;
  case BK_NUMBER:
    if (isnan(v->num)) rsc__text_puts(t, "\"$NaN\"");
    else if (isinf(v->num)) rsc__text_puts(t, v->num > 0 ? "\"$Infinity\"" : "\"$-Infinity\"");
    else if (v->num == 0 && signbit(v->num)) rsc__text_puts(t, "\"$-0\"");
    else rsc__text_put(t, num, rsc__format_number(v->num, num));
    break;
  case BK_STRING: {
    size_t units = u16_len(v->str, v->len);
    b->serialized += units;
    if (units >= LONG_STRING) {
      int64_t id = b->next_id++;
      emit_text_row(b, id, v->str, v->len);
      put_ref(t, "$", id);
    } else {
      put_escaped(t, v->str, v->len);
    }
    break;
  }
  case BK_BIGINT: rsc__text_json_string_prefixed(t, "$n", v->str, v->len); break;
  case BK_DATE:
    b->serialized += u16_len(v->str, v->len);
    rsc__text_json_string_prefixed(t, "$D", v->str, v->len);
    break;
  case BK_SYMBOL: err = symbol(b, t, v); break;
  case BK_ERROR: rsc__text_puts(t, "\"$Z\""); break;
  case BK_ARRAY:
    rsc__text_put(t, "[", 1);
    for (size_t i = 0; i < v->n && !err; i++) {
      b->serialized += (size_t)snprintf(num, sizeof num, "%zu", i);
      if (i) rsc__text_put(t, ",", 1);
      slot item = {v->ref, NULL, i};
      err = render(b, t, v->items[i], false, &item);
    }
    rsc__text_put(t, "]", 1);
    break;
  case BK_OBJECT: err = render_object(b, t, v); break;
  case BK_MAP: err = outline(b, t, v, "$Q"); break;
  case BK_SET: err = outline(b, t, v, "$W"); break;
  case BK_FORMDATA: err = outline(b, t, v, "$K"); break;
  case BK_ITERATOR: err = outline(b, t, v, "$i"); break;
  case BK_ELEMENT: {
    /* The tuple's members are named from the row's value when the element
     * is it, else from the element's own place. */
    const refnode *tuple = is_root ? b->task_node : v->ref;
    if (b->serialized > DEFER_SIZE) {
      err = defer(b, t, v);
      break;
    }
    b->serialized += 4; /* the tuple's keys "0" to "3" */
    rsc__text_put(t, "[\"$\",", 5);
    err = render(b, t, v->items[0], true, NULL);
    rsc__text_put(t, ",", 1);
    if (!v->has_key) {
      rsc__text_put(t, "null", 4);
    } else {
      rsc_bval key = {.kind = BK_STRING, .str = v->str, .len = v->len};
      if (!err) err = render(b, t, &key, false, NULL);
    }
    rsc__text_put(t, ",", 1);
    slot props = {tuple, "props", 5};
    if (!err) err = render(b, t, v->items[1], false, &props);
    rsc__text_put(t, "]", 1);
    break;
  }
  case BK_CREF: err = client_ref(b, t, v, type_slot); break;
  case BK_BINARY: {
    int64_t id = b->next_id++;
    emit_binary_row(b, id, binary_tags[v->sub].tag, v);
    put_ref(t, "$", id);
    break;
  }
  case BK_BLOB: {
    /* serializeBlob: its row when the content is read, a batch later
     * when there is content to read. */
    int64_t id = b->next_id++;
    rsc_bval *row = v->items[0];
    if (!(row->ref = ref_row(b, id)) ||
        !enqueue_task(b, (task){id, row, NULL, TK_MODEL, (uint8_t)(row->n > 1)}))
      return RSC_ERR_NOMEM;
    put_ref(t, "$B", id);
    break;
  }
  case BK_STREAM: err = stream(b, t, v); break;
  case BK_SERVER_REF:
    /* Written once, as React's writtenServerReferences: an outlined
     * {id, bound} row ("bound" the promise of the bound arguments). */
    if (v->id < 0) {
      int64_t id = b->next_id++;
      size_t saved = b->serialized;
      const refnode *root = ref_row(b, id);
      rsc_text *row = root ? row_text(b) : NULL;
      if (!row) return RSC_ERR_NOMEM;
      rsc__text_hex(row, (uint64_t)id);
      rsc__text_put(row, ":{\"id\":", 7);
      rsc_bval sid = {.kind = BK_STRING, .str = v->str, .len = v->len};
      err = render(b, row, &sid, false, NULL);
      rsc__text_put(row, ",\"bound\":", 9);
      if (v->n) {
        slot bound = {root, "bound", 5};
        if (!err) err = render(b, row, v->items[0], false, &bound);
      } else {
        rsc__text_put(row, "null", 4);
      }
      rsc__text_put(row, "}\n", 2);
      if (!err) append(&b->regular, row);
      row_done(b);
      b->serialized = saved;
      if (err) break;
      v->id = id;
    }
    put_ref(t, "$h", v->id);
    break;
  case BK_LAZY:
    if (v->id >= 0) {
      put_ref(t, "$L", v->id);
    } else if (b->serialized > DEFER_SIZE) {
      /* deferTask: the lazy is read in a task of its own next time. */
      v->id = b->next_id++;
      if (v->state == PS_PENDING) b->waiting++;
      else if (!enqueue(b, v->id, v->state == PS_RESOLVED ? v->items[0] : NULL, v->str))
        err = RSC_ERR_NOMEM;
      put_ref(t, "$L", v->id);
    } else if (v->state == PS_RESOLVED) {
      err = render(b, t, v->items[0], type_slot, at);
    } else {
      v->id = b->next_id++;
      if (v->state == PS_PENDING) b->waiting++;
      else emit_error_row(b, v->id, v->str);
      put_ref(t, "$L", v->id);
    }
    break;
  case BK_PROMISE:
    if (v->id < 0) {
      v->id = b->next_id++;
      if (v->state == PS_PENDING) b->waiting++;
      else if (v->state == PS_REJECTED) emit_error_row(b, v->id, v->str);
      else if (!enqueue(b, v->id, v->items[0], NULL)) err = RSC_ERR_NOMEM;
    }
    put_ref(t, "$@", v->id);
    break;
  }
  b->depth--;
  return err;
}

/* A row's model rendered as React's retryTask does: the value is the row's
 * own (modelRoot); one with identity is named "$<id>" from now on unless a
 * place named it before (an element only through its tuple's members). */
static int render_row(rsc_builder *b, int64_t id, rsc_bval *m) {
  while (m->kind == BK_LAZY && m->state == PS_RESOLVED && m->id < 0) m = m->items[0];
  b->serialized = 0;
  b->depth = 0;
  b->rows_used = 0;
  if (!(b->task_node = ref_row(b, id))) return RSC_ERR_NOMEM;
  b->model_root = m;
  if (has_identity(m) && !m->ref && m->kind != BK_ELEMENT) m->ref = b->task_node;
  rsc_text *row = row_text(b);
  if (!row) return RSC_ERR_NOMEM;
  rsc__text_hex(row, (uint64_t)id);
  rsc__text_put(row, ":", 1);
  int err = render(b, row, m, false, NULL);
  rsc__text_put(row, "\n", 1);
  if (!err) err = row->status;
  if (!err) append(&b->regular, row);
  row_done(b);
  b->model_root = NULL;
  b->task_node = NULL;
  return err;
}

/* tryStreamTask / emitChunk: an item of the stream of id as a row of that
 * id: bytes of a byte stream as a "b" row, a string as a T row, a typed
 * array as its binary row, any other value as a model row (not a row's
 * own value: it is named by no later place). */
static int run_item(rsc_builder *b, const task *k, bool bytes) {
  rsc_bval *v = k->model;
  while (v->kind == BK_LAZY && v->state == PS_RESOLVED && v->id < 0) v = v->items[0];
  if (bytes) emit_binary_row(b, k->id, 'b', v);
  else if (v->kind == BK_STRING) emit_text_row(b, k->id, v->str, v->len);
  else if (v->kind == BK_BINARY) emit_binary_row(b, k->id, binary_tags[v->sub].tag, v);
  else {
    b->serialized = 0;
    b->depth = 0;
    b->rows_used = 0;
    b->task_node = NULL;
    b->model_root = NULL;
    rsc_text *row = row_text(b);
    if (!row) return RSC_ERR_NOMEM;
    rsc__text_hex(row, (uint64_t)k->id);
    rsc__text_put(row, ":", 1);
    int err = render(b, row, v, false, NULL);
    rsc__text_put(row, "\n", 1);
    if (!err) err = row->status;
    if (!err) append(&b->regular, row);
    row_done(b);
    return err;
  }
  return 0;
}

/* retryTask: the model's row. A model that is a lazy not settled yet
 * suspends the task: the row keeps its id and comes when the lazy settles
 * (an E row if it is rejected), as React's task waits on the thenable. */
static int run_task(rsc_builder *b, const task *k) {
  rsc_bval *m = k->model;
  if (k->kind == TK_ITEM || k->kind == TK_BYTES) return run_item(b, k, k->kind == TK_BYTES);
  if (k->kind == TK_CLOSE) {
    /* The stream's end: "C", after the outlined row of an iterator's
     * return value. */
    int64_t rid = -1;
    if (m) {
      rid = b->next_id++;
      int err = render_row(b, rid, m);
      if (err) return err;
    }
    rsc__text_hex(&b->regular, (uint64_t)k->id);
    rsc__text_put(&b->regular, ":C", 2);
    if (m) {
      rsc__text_put(&b->regular, "\"$", 2);
      rsc__text_hex(&b->regular, (uint64_t)rid);
      rsc__text_put(&b->regular, "\"", 1);
    }
    rsc__text_put(&b->regular, "\n", 1);
    return 0;
  }
  if (!m) {
    emit_error_row(b, k->id, k->digest);
    return 0;
  }
  if (m->kind == BK_LAZY && m->id < 0 && m->state != PS_RESOLVED) {
    m->id = k->id;
    m->written = true;
    if (m->state == PS_PENDING) b->waiting++;
    else emit_error_row(b, k->id, m->str);
    return 0;
  }
  return render_row(b, k->id, m);
}

static rsc_status write_text(rsc_text *t, rsc_write_fn write, void *ctx) {
  if (t->len && write(ctx, t->p, t->len) != 0) return RSC_ERR_USER;
  t->len = 0;
  return RSC_OK;
}

rsc_status rsc_builder_flush(rsc_builder *b, rsc_write_fn write, void *ctx) {
  if (!b || !write) return fail(b, RSC_ERR_STATE);
  if (b->broken) return fail(b, b->broken);
  while (b->queue_len) {
    /* The batch: what was ready; what it makes ready waits for the next. */
    task *tmp = b->batch;
    size_t n = b->queue_len, tcap = b->batch_cap;
    b->batch = b->queue;
    b->batch_cap = b->queue_cap;
    b->queue = tmp;
    b->queue_cap = tcap;
    b->queue_len = 0;
    int err = 0;
    for (size_t i = 0; i < n && !err; i++) {
      task *k = &b->batch[i];
      if (k->delay) {
        k->delay--;
        if (!enqueue_task(b, *k)) err = RSC_ERR_NOMEM;
      } else {
        err = run_task(b, k);
      }
    }
    if (!err) err = b->imports.status ? b->imports.status : b->regular.status;
    if (!err) err = b->errors.status;
    if (err) {
      b->imports.len = b->regular.len = b->errors.len = 0;
      return fail(b, b->broken = (rsc_status)err);
    }
    rsc_status s = write_text(&b->imports, write, ctx);
    if (!s) s = write_text(&b->regular, write, ctx);
    if (!s) s = write_text(&b->errors, write, ctx);
    if (s) return fail(b, b->broken = s);
  }
  return RSC_OK;
}
