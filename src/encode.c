/* encode.c - Flight written back from a decoded payload (rsc_encode).
 *
 * An output stage: it reads the decoder (its row log, RSC_OPT_KEEP_ROWS,
 * and its chunk table) and writes each logged row again, in order. A model
 * row is the JSON of its chunk's value with every revived value in the "$"
 * form React's server writes for it; where the server deduplicates, the
 * writer does what the server does (ReactFlightServer.js, writtenObjects):
 * a value that is a row's own value is "$<id>" everywhere but at the top
 * of that row, and an object met again is the path of its first place
 * ("$0:props:children:1"), recorded only below a parent that has a
 * reference and under keys without a ':'. Rows whose text the values do
 * not hold (hints, debug rows, development errors) are written as the log
 * kept them. Text goes out through textout.c. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chunks.h"
#include "idmap.h"
#include "json.h"
#include "revive.h"
#include "rowlog.h"
#include "rowtags.h"
#include "shared.h"
#include "textout.h"

/* What the writer may write for a value: a row's reference ("$5", "$Q2":
 * its text, and the log index of the row it names), or a path, kept as
 * its container's reference and a key (an array index when key is NULL),
 * spelled out only when written. */
typedef struct ref {
  int64_t row;     /* -1 for a path                       */
  uint32_t parent; /* a path: its container's reference   */
  uint32_t klen;
  const char *key;
  uint32_t index;
  uint32_t sp_off, sp_len; /* a path spelled as a parent: its text in spelled */
  uint8_t n;               /* a row's reference: its length in s; 0 for a path */
  char s[27];              /* "$" + a form + 16 hex digits at most */
} ref;

/* A row's text, made before it is written: a row that the server
 * outlined while it wrote another (a Map's entries) is written first but
 * serialized inside the other, and the paths of what both hold depend on
 * that order. */
typedef struct row_text {
  char *p;
  size_t len;
  uint8_t state; /* 0 not made, 1 being made, 2 made */
  bool outlined; /* a form names it: the server wrote it where it met it */
} row_text;

typedef struct row_info {
  rsc_chunk *chunk;
  rsc_stream *stream; /* a stream's later row (an item, its end)            */
  uint32_t item;      /* the stream's items before this row                 */
} row_info;

typedef struct enc {
  rsc_decoder *d;
  struct rsc_enc_cache *cache; /* the tables, kept in the decoder between encodes */
  rsc_text *out;               /* where the row being made goes: sink, or its own text */
  rsc_text sink;               /* the writer's                                        */
  size_t emit_next;            /* the log index of the next row to hand the writer */
  rsc_idmap written;           /* identity -> refs: what stands for a value met again   */
  rsc_idmap firsts;            /* identity -> refs: the form that stands for a value at
                                  its first meeting ("$Q2", a typed array's "$6"); met
                                  again, the path of that first place does            */
  rsc_idmap texts;             /* a string's or symbol's text pointer -> refs: a row's
                                  own string value, written as "$<id>" elsewhere       */
  uint64_t text_bits[4];       /* a bit for each text in texts (text_bit): most strings
                                  are no row's, and miss here without a lookup         */
  rsc_idmap rowidx;            /* row id + 1 -> the log index of its model row        */
  rsc_idmap protos;            /* a "__proto__" member's address -> protos index      */
  rsc_idmap tails;             /* a development element -> tails index                */
  ref *refs;
  size_t refs_len, refs_cap;
  rsc_text scratch; /* a path spelled out */
  rsc_text spelled; /* the paths spelled as the parents of others (ref.sp_off) */
  row_text *rows;
  row_info *infos;           /* by log index                                     */
  uint32_t *item_index;      /* by the log index of a stream's start: items so far */
  size_t cur_row;            /* the log index of the row being made              */
  uint32_t depth, max_depth; /* containers open, and how many may be     */
  bool no_id;                /* the row being made had no id              */
  uintptr_t row_root;        /* the identity of the value of the row being made  */
  bool fail;                 /* out of memory                                    */
  bool streaming;            /* rsc_encode_ready: chunks read only when safe (below) */
  size_t lazies_fulfilled;   /* the log's element lazies known fulfilled, in order */
} enc;

/* id in lowercase hex (a negative id as its two's complement, as "%llx"
 * writes it); returns its length. */
static size_t hex_id(char *buf, int64_t id) {
  uint64_t v = (uint64_t)id;
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  for (size_t i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = 0;
  return n;
}

/* v in decimal; returns its length. */
static size_t dec_u64(char *buf, uint64_t v) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  return n;
}

/* ---- references ---------------------------------------------------------- */

static uint32_t new_ref(enc *e) {
  if (__builtin_expect(e->refs_len == e->refs_cap, 0)) {
    size_t cap = e->refs_cap ? e->refs_cap * 2 : 256;
    ref *r = (ref *)realloc(e->refs, cap * sizeof *r);
    if (!r) {
      e->fail = true;
      return RSC_IDMAP_NONE;
    }
    e->refs = r;
    e->refs_cap = cap;
  }
  memset(&e->refs[e->refs_len], 0, sizeof(ref));
  return (uint32_t)e->refs_len++;
}

static uint32_t add_ref(enc *e, const char *s, size_t n, int64_t row) {
  uint32_t i = n && n < sizeof e->refs[0].s ? new_ref(e) : RSC_IDMAP_NONE;
  if (i == RSC_IDMAP_NONE) {
    e->fail = true;
    return RSC_IDMAP_NONE;
  }
  memcpy(e->refs[i].s, s, n);
  e->refs[i].n = (uint8_t)n;
  e->refs[i].row = row;
  return i;
}

/* A path below the reference parent. */
static uint32_t add_path(enc *e, uint32_t parent, const char *key, size_t klen, uint32_t index) {
  uint32_t i = new_ref(e);
  if (i == RSC_IDMAP_NONE) return i;
  ref *r = &e->refs[i];
  r->row = -1;
  r->parent = parent;
  r->key = key;
  r->klen = (uint32_t)klen;
  r->index = index;
  return i;
}

/* Appends to the scratch text (a growing buffer: inline while it has room
 * for the text and its NUL). */
static inline void scratch_put(enc *e, const char *s, size_t n) {
  rsc_text *b = &e->scratch;
  if (n < b->cap - b->len) {
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
  } else {
    rsc__text_put_slow(b, s, n);
  }
}

/* Appends reference i's text to the scratch text. A path spelled as the
 * parent of another keeps its text, as the paths below one parent (the
 * items of a list) spell it again and again. */
static void spell(enc *e, uint32_t i, bool parent) {
  const ref *r = &e->refs[i];
  if (r->n) {
    scratch_put(e, r->s, r->n);
    return;
  }
  if (r->sp_len) {
    scratch_put(e, e->spelled.p + r->sp_off, r->sp_len);
    return;
  }
  size_t start = e->scratch.len;
  spell(e, r->parent, true);
  scratch_put(e, ":", 1);
  if (r->key) scratch_put(e, r->key, r->klen);
  else {
    char buf[20];
    scratch_put(e, buf, dec_u64(buf, r->index));
  }
  size_t n = e->scratch.len - start, off = e->spelled.len;
  if (parent && !e->scratch.status && n <= UINT32_MAX && off <= UINT32_MAX) {
    rsc__text_put(&e->spelled, e->scratch.p + start, n);
    if (!e->spelled.status) {
      e->refs[i].sp_off = (uint32_t)off;
      e->refs[i].sp_len = (uint32_t)n;
    }
  }
}

/* k stands for "$" + form + id (the row at log index row) in m, unless it
 * already has a reference there. */
static void put_id_ref(enc *e, rsc_idmap *m, uintptr_t k, const char *form, int64_t id,
                       int64_t row) {
  if (!k || rsc__idmap_get(m, k) != RSC_IDMAP_NONE) return;
  char buf[40];
  size_t n = strlen(form);
  buf[0] = '$';
  memcpy(buf + 1, form, n);
  n++;
  if (!(form[0] == 'Z' && id < 0)) n += hex_id(buf + n, id);
  uint32_t i = add_ref(e, buf, n, row);
  if (i == RSC_IDMAP_NONE) return;
  if (!rsc__idmap_put(m, k, i)) e->fail = true;
}

/* Row id's own value k: "$<id>" stands for it even where a row before it
 * named it first ("7:\"$c\"" before "c:o9,..."), as that row is written
 * as naming it. */
static void put_own_ref(enc *e, rsc_idmap *m, uintptr_t k, int64_t id, int64_t row) {
  uint32_t *own = rsc__idmap_place(m, k);
  if (!own) {
    put_id_ref(e, m, k, "", id, row);
    return;
  }
  char buf[24] = "$";
  uint32_t i = add_ref(e, buf, 1 + hex_id(buf + 1, id), row);
  if (i != RSC_IDMAP_NONE) *own = i;
}

static int64_t row_of(enc *e, int64_t id) {
  uint32_t r = rsc__idmap_get(&e->rowidx, (uintptr_t)(id + 1));
  return r == RSC_IDMAP_NONE ? -1 : (int64_t)r;
}

static void make_row(enc *e, size_t r);

/* Writes a reference; a row it names that is written before the one being
 * made, and not made yet, was serialized right here (outlined). */
static void write_ref(enc *e, uint32_t i) {
  int64_t row = e->refs[i].row;
  if (row >= 0 && e->rows[row].state == 0 && ((size_t)row < e->cur_row || e->rows[row].outlined))
    make_row(e, (size_t)row); /* (may grow refs) */
  if (e->refs[i].n) {         /* "$", a form and hex digits: nothing to escape */
    char q[sizeof e->refs[i].s + 2];
    size_t n = e->refs[i].n;
    q[0] = '"';
    memcpy(q + 1, e->refs[i].s, n);
    q[n + 1] = '"';
    rsc__text_put(e->out, q, n + 2);
    return;
  }
  e->scratch.len = 0;
  spell(e, i, false);
  if (e->scratch.status) e->fail = true;
  else rsc__text_json_string(e->out, e->scratch.p, e->scratch.len);
}

/* ---- values -------------------------------------------------------------- */

/* Whether c is an internal chunk (an element that waited on another row):
 * a negative id, and not the table's (a row's chunk may have a negative id
 * too, with RSC_OPT_LENIENT_IDS). */
static bool internal_chunk(rsc_decoder *d, rsc_chunk *c) {
  return c->id < 0 && rsc__find_chunk(d, c->id) != c;
}

/* A lazy of an internal chunk is the value it settled to: the server wrote
 * that value there. */
static const rsc_node *unwrap(rsc_decoder *d, const rsc_node *v) {
  for (int hops = 0; v->kind == RSC_LAZY && internal_chunk(d, v->u.chunk) && hops < 64; hops++) {
    rsc_chunk *c = v->u.chunk;
    rsc__read_chunk(d, c);
    if (c->state != CS_FULFILLED) break;
    v = &c->value;
  }
  return v;
}

/* Most puts fit where the row goes (the writer's piece, or a row's own
 * text): one copy then, without the checks rsc__text_put makes for texts
 * the writer never has (one writing is disabled in; what lands in a failed
 * writer's piece is never handed on; a row's own text is not read as a C
 * string, so it needs no NUL). */
static inline void put(enc *e, const char *s, size_t n) {
  rsc_text *b = e->out;
  size_t len = b->len;
  if (__builtin_expect(n < b->cap - len, 1)) {
    memcpy(b->p + len, s, n);
    b->len = len + n;
  } else {
    rsc__text_put_slow(b, s, n);
  }
}
/* A string literal (its length known when compiled). */
#define PUT_LIT(e, lit) put(e, lit, sizeof(lit) - 1)

static void put_hex(enc *e, int64_t id) {
  char buf[24];
  put(e, buf, hex_id(buf, id));
}

/* A string value prefixed: prefix + text as one JSON string. */
static void put_prefixed(enc *e, const char *prefix, const char *s, size_t n) {
  rsc__text_json_string_prefixed(e->out, prefix, s, n);
}

static void put_number(enc *e, double v) {
  if (isnan(v)) PUT_LIT(e, "\"$NaN\"");
  else if (isinf(v) && v > 0) PUT_LIT(e, "\"$Infinity\"");
  else if (isinf(v)) PUT_LIT(e, "\"$-Infinity\"");
  else if (v == 0 && signbit(v)) PUT_LIT(e, "\"$-0\"");
  else if (v >= -9007199254740991.0 && v <= 9007199254740991.0 && v == (double)(int64_t)v) {
    /* an integer JavaScript holds exactly: its digits (as ToString) */
    char buf[24];
    int64_t i = (int64_t)v;
    size_t n = 0;
    if (i < 0) buf[n++] = '-';
    n += dec_u64(buf + n, i < 0 ? (uint64_t)-i : (uint64_t)i);
    put(e, buf, n);
  } else {
    char buf[40];
    put(e, buf, rsc__format_number(v, buf));
  }
}

/* A text pointer's bit in text_bits. */
static inline unsigned text_bit(const char *p) {
  return (unsigned)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 56);
}

static inline bool text_bit_has(const enc *e, const char *p) {
  unsigned b = text_bit(p);
  return (e->text_bits[b / 64] >> (b % 64)) & 1;
}

/* A string another row holds as its own value: that row's "$<id>". */
static bool put_row_string(enc *e, const rsc_node *v, bool top) {
  if (!v->len) return false;
  if (!e->texts.count || !text_bit_has(e, v->u.str)) return false;
  uint32_t t = rsc__idmap_get(&e->texts, (uintptr_t)v->u.str);
  if (t == RSC_IDMAP_NONE || (top && e->refs[t].row == (int64_t)e->cur_row)) return false;
  write_ref(e, t);
  return true;
}

/* How put_plain writes strings: as they are (PLAIN_BARE: what a client
 * reads with a bare JSON.parse, an E row's digest), or as the strings
 * that other rows hold ("$<id>") where they are one, "$" escaped or not. */
typedef enum { PLAIN_BARE, PLAIN_ROWS, PLAIN_ROWS_ESCAPED } plain_mode;

/* JSON as the server stringifies what it does not serialize as a model
 * (an I row's metadata, a "__proto__" member, an E row's digest). */
static void put_plain(enc *e, const rsc_node *v, plain_mode mode) {
  switch (v->kind) {
  case RSC_NULL: PUT_LIT(e, "null"); return;
  case RSC_BOOL: put(e, v->u.boolean ? "true" : "false", v->u.boolean ? 4 : 5); return;
  case RSC_NUMBER: {
    char buf[40];
    put(e, buf, rsc__format_number(v->u.num, buf));
    return;
  }
  case RSC_STRING:
    if (mode != PLAIN_BARE && put_row_string(e, v, false)) return;
    if (mode == PLAIN_ROWS_ESCAPED && v->len && v->u.str[0] == '$')
      put_prefixed(e, "$", v->u.str, v->len);
    else rsc__text_json_string(e->out, v->u.str, v->len);
    return;
  case RSC_ARRAY:
    put(e, "[", 1);
    for (uint32_t i = 0; i < v->len; i++) {
      if (i) put(e, ",", 1);
      put_plain(e, &v->u.items[i], mode);
    }
    put(e, "]", 1);
    return;
  case RSC_OBJECT: {
    put(e, "{", 1);
    bool first = true;
    for (uint32_t i = 0; i < v->len; i++) {
      const rsc_member *m = &v->u.members[i];
      if (m->val.kind == RSC_UNDEFINED) continue;
      if (!first) put(e, ",", 1);
      first = false;
      rsc__text_json_string(e->out, m->key, rsc__member_klen(m));
      put(e, ":", 1);
      put_plain(e, &m->val, mode);
    }
    put(e, "}", 1);
    return;
  }
  default: PUT_LIT(e, "null"); return;
  }
}

/* The reference of a container being written, for the paths of what it
 * holds: made when a value below it needs it (a container the decoder
 * placed only once gets none of its own, as no second meeting can ask for
 * it), so a frame keeps what makes it: the frame of the container around
 * and the key. NULL: no reference (a row's top, a parent without one). */
/* The keys of an element's type and key slots in paths, told apart from
 * an object's members of those names by their address: a reference that
 * waits there is lost (React fills the tuple, not the element). */
static const char el_type_slot[] = "type", el_key_slot[] = "key";

typedef struct pframe {
  const struct pframe *up;
  uint32_t ref; /* LAZY_REF: not made yet; NO_REF: none */
  uint32_t klen;
  const char *key;
  uint32_t index;
} pframe;
#define NO_REF RSC_IDMAP_NONE
#define LAZY_REF (RSC_IDMAP_NONE - 1)

/* The server's parentReference + ':' + key, recorded only below a parent
 * with a reference and under a key without a ':'. */
static uint32_t frame_ref(enc *e, pframe *f) {
  if (!f) return NO_REF;
  if (f->ref != LAZY_REF) return f->ref;
  uint32_t up = frame_ref(e, (pframe *)f->up);
  f->ref = NO_REF;
  if (up != NO_REF && !(f->key && memchr(f->key, ':', f->klen)))
    f->ref = add_path(e, up, f->key, f->klen, f->index);
  return f->ref;
}

static void put_value(enc *e, const rsc_node *v, pframe *parent, const char *key, size_t klen,
                      uint32_t index, bool top);
static void put_container(enc *e, const rsc_node *v, pframe *self);

static void put_index_child(enc *e, const rsc_node *v, pframe *self, uint32_t i) {
  put_value(e, v, self, NULL, 0, i, false);
}

/* The server's writtenObjects.set(value, parentReference + ':' + key): a
 * value first met below a parent with a reference, under a key without a
 * ':', is that path when met again; slot is where the written map keeps
 * the value's reference. Returns the value's own reference. */
static uint32_t note_path(enc *e, uint32_t *slot, pframe *parent, const char *key, size_t klen,
                          uint32_t index) {
  if (!parent || (key && memchr(key, ':', klen))) return NO_REF;
  /* (the slot's pointer holds until the next insert into the written map:
   * making the parent's path inserts nothing there) */
  uint32_t up = frame_ref(e, parent);
  if (up == NO_REF) return NO_REF;
  uint32_t i = add_path(e, up, key, klen, index);
  if (i == RSC_IDMAP_NONE) return NO_REF;
  *slot = i;
  return i;
}

static void put_members(enc *e, const rsc_node *v, pframe *self) {
  put(e, "{", 1);
  for (uint32_t i = 0; i < v->len; i++) {
    const rsc_member *m = &v->u.members[i];
    uint32_t kn = rsc__member_klen(m);
    if (i) put(e, ",", 1);
    rsc__text_json_string(e->out, m->key, kn);
    put(e, ":", 1);
    uint32_t p = m->val.kind == RSC_UNDEFINED && (v->flags & NF_PROTO)
                     ? rsc__idmap_get(&e->protos, (uintptr_t)m)
                     : RSC_IDMAP_NONE;
    if (p != RSC_IDMAP_NONE) put_plain(e, &e->d->rowlog.protos[p].value, PLAIN_ROWS);
    else put_value(e, &m->val, self, m->key, kn, 0, false);
  }
  put(e, "}", 1);
}

static void put_value(enc *e, const rsc_node *v, pframe *parent, const char *key, size_t klen,
                      uint32_t index, bool top) {
  if (e->fail || e->out->status) return;
  /* a value reached through a lazy may be met through another copy of
   * the lazy: the decoder notes the lazy as shared, not the value */
  const rsc_node *outer = v;
  v = unwrap(e->d, v);
  bool lazy = v != outer;
  /* A cycle the server would have written as a path, where no path was
   * recorded, ends here instead of in the C stack. */
  if (e->depth >= e->max_depth) {
    PUT_LIT(e, "null");
    return;
  }
  switch (v->kind) {
  case RSC_NONE:
  case RSC_UNDEFINED: PUT_LIT(e, "\"$undefined\""); return;
  case RSC_NULL: PUT_LIT(e, "null"); return;
  case RSC_BOOL: put(e, v->u.boolean ? "true" : "false", v->u.boolean ? 4 : 5); return;
  case RSC_NUMBER: put_number(e, v->u.num); return;
  case RSC_STRING:
    if (put_row_string(e, v, top)) return;
    if (v->u.str == rsc__omitted_message) {
      PUT_LIT(e, "\"$Y\"");
      return;
    }
    if (v->len && v->u.str[0] == '$') put_prefixed(e, "$", v->u.str, v->len);
    else rsc__text_json_string(e->out, v->u.str, v->len);
    return;
  case RSC_BIGINT: put_prefixed(e, "$n", v->u.str, v->len); return;
  case RSC_DATE: put_prefixed(e, "$D", v->u.str, v->len); return;
  case RSC_SYMBOL:
    if (put_row_string(e, v, top)) return;
    if (rsc__is_marker(v) && v->u.str == rsc__element_symbol) PUT_LIT(e, "\"$\"");
    else put_prefixed(e, "$S", v->u.str, v->len);
    return;
  case RSC_TEMP_REF: put_prefixed(e, "$T", v->u.str, v->len); return;
  case RSC_FUNCTION:
    if (put_row_string(e, v, top)) return;
    put_prefixed(e, "$E", v->u.str, v->len);
    return;
  case RSC_LAZY:
  case RSC_PROMISE: {
    rsc_chunk *c = v->u.chunk;
    if (c->id >= 0) {
      put(e, v->kind == RSC_LAZY ? "\"$L" : "\"$@", 3);
      put_hex(e, c->id);
      put(e, "\"", 1);
      return;
    }
    if (rsc__find_chunk(e->d, c->id) == c) {
      /* a chunk of the table no row can name (rsc__parse_ref_id read
       * NaN, a number too large, or a negative one): text that names it
       * again */
      put(e, v->kind == RSC_LAZY ? "\"$L" : "\"$@", 3);
      if (c->id == INT64_MIN) PUT_LIT(e, "NaN");
      else if (c->id == INT64_MIN + 1) PUT_LIT(e, "10000000000000000");
      else {
        put(e, "-", 1);
        put_hex(e, -c->id);
      }
      put(e, "\"", 1);
      return;
    }
    PUT_LIT(e, "null"); /* an internal chunk that did not settle */
    return;
  }
  case RSC_ERROR:
    if (!e->d->dev) { /* production errors are all "$Z" */
      PUT_LIT(e, "\"$Z\"");
      return;
    }
    break;
  default: break;
  }

  /* values with identity */
  uintptr_t id = rsc__writer_identity(v);
  pframe self = {parent, LAZY_REF, (uint32_t)klen, key, index};
  if (id && !top && !lazy && !e->streaming &&
      (v->kind == RSC_OBJECT || v->kind == RSC_ARRAY || v->kind == RSC_ELEMENT) &&
      !rsc__shared_has(e->d, id)) {
    /* a plain container no reference placed (the decoder notes what they
     * place; a row's own value is met at its top, or placed by one): met
     * once here, so nothing stands for it and it is written out; its path
     * is made only if a value below it needs it. (While the payload
     * streams in, a row written may hold what a later row's reference
     * places: every container is recorded then.) */
    e->depth++;
    put_container(e, v, &self);
    e->depth--;
    return;
  }
  /* a value not met yet gets its slot in the written map in the same
   * probe (RSC_IDMAP_NONE: nothing stands for it) */
  uint32_t *slot = id ? rsc__idmap_slot(&e->written, id) : NULL;
  if (id && !slot) {
    e->fail = true;
    return;
  }
  uint32_t w = slot ? *slot : RSC_IDMAP_NONE;
  self.up = NULL;
  self.ref = NO_REF;
  if (w != RSC_IDMAP_NONE) {
    /* a row's own value is written in it; another row's, named */
    int64_t named = e->refs[w].row;
    if (!(top && id == e->row_root && (named < 0 || (size_t)named == e->cur_row))) {
      /* in an element's type or key slot, a value a row stands for (a
       * stream, a binary row: "$<id>") is named by that row, not by the
       * path to where it was met, which may wait */
      uint32_t f = RSC_IDMAP_NONE;
      if ((key == el_type_slot || key == el_key_slot) && e->firsts.count) {
        f = rsc__idmap_get(&e->firsts, id);
        if (f != RSC_IDMAP_NONE &&
            (e->refs[f].n < 2 || rsc__hex_digit((uint8_t)e->refs[f].s[1]) < 0))
          f = RSC_IDMAP_NONE;
      }
      write_ref(e, f != RSC_IDMAP_NONE ? f : w);
      return;
    }
    self.ref = w;
  } else if (id) {
    self.ref = note_path(e, slot, parent, key, klen, index);
  }
  uint32_t f = id && e->firsts.count ? rsc__idmap_get(&e->firsts, id) : RSC_IDMAP_NONE;
  if (f != RSC_IDMAP_NONE) {
    /* a stream whose row comes after this one is named by its row at
     * every meeting: a path to where it was first met reads null in
     * React's client until that row comes (React's server writes a
     * stream's row first, and paths after) */
    if (slot && v->kind == RSC_STREAM && e->refs[f].row > (int64_t)e->cur_row) *slot = f;
    write_ref(e, f);
    return;
  }

  e->depth++;
  put_container(e, v, &self);
  e->depth--;
}

static void put_container(enc *e, const rsc_node *v, pframe *self) {
  switch (v->kind) {
  case RSC_OBJECT: put_members(e, v, self); return;
  case RSC_ARRAY:
    put(e, "[", 1);
    for (uint32_t i = 0; i < v->len; i++) {
      if (i) put(e, ",", 1);
      put_index_child(e, &v->u.items[i], self, i);
    }
    put(e, "]", 1);
    return;
  case RSC_ELEMENT: {
    /* the tuple's slots are the element's type, key, props and owner in
     * the server's paths */
    const rsc_element *el = v->u.el;
    PUT_LIT(e, "[\"$\",");
    put_value(e, &el->type, self, el_type_slot, 4, 0, false);
    put(e, ",", 1);
    put_value(e, &el->key, self, el_key_slot, 3, 0, false);
    put(e, ",", 1);
    put_value(e, &el->props, self, "props", 5, 0, false);
    uint32_t t =
        (v->sub & EL_HAS_OWNER) ? rsc__idmap_get(&e->tails, (uintptr_t)el) : RSC_IDMAP_NONE;
    if (t != RSC_IDMAP_NONE) { /* owner, debug stack, validated, as sent */
      const rsc_logged_tail *tl = &e->d->rowlog.tails[t];
      for (uint32_t i = 0; i < tl->n; i++) {
        put(e, ",", 1);
        if (i == 0) put_value(e, &tl->slots[i], self, "_owner", 6, 0, false);
        else put_index_child(e, &tl->slots[i], self, i + 4);
      }
    }
    put(e, "]", 1);
    return;
  }
  default:
    /* a value whose form the log does not name */
    PUT_LIT(e, "null");
    return;
  }
}

/* ---- rows ---------------------------------------------------------------- */

static void row_head(enc *e, int64_t id, uint8_t tag) {
  if (e->no_id) {
    put(e, ":", 1);
    if (tag) put(e, (const char *)&tag, 1);
    return;
  }
  put_hex(e, id);
  put(e, ":", 1);
  if (tag) put(e, (const char *)&tag, 1);
}

static void length_row(enc *e, int64_t id, uint8_t tag, const void *p, size_t n) {
  row_head(e, id, tag);
  put_hex(e, (int64_t)n);
  put(e, ",", 1);
  rsc__text_put_span(e->out, (const char *)p, n); /* not copied when large */
}

/* A row's value: its own identity stands for it everywhere but here. */
static void row_value(enc *e, const rsc_node *v) {
  uintptr_t outer = e->row_root;
  v = unwrap(e->d, v);
  e->row_root = rsc__writer_identity(v);
  put_value(e, v, NULL, "", 0, 0, true);
  e->row_root = outer;
}

static void error_line(enc *e, int64_t id, const rsc_node *reason) {
  row_head(e, id, 'E');
  put(e, "{", 1);
  if (reason && reason->kind == RSC_ERROR && reason->u.err->digest.kind != RSC_NONE) {
    PUT_LIT(e, "\"digest\":"); /* read with a bare JSON.parse: no "$" forms */
    put_plain(e, &reason->u.err->digest, PLAIN_BARE);
  }
  put(e, "}\n", 2);
}

/* The value a row of a stream carries (the item it added), or NULL. */
static const rsc_node *stream_item(const rsc_stream *st, uint32_t i) {
  if (i >= st->len) return NULL;
  if (st->kind == RSC_STREAM_TEXT || st->kind == RSC_STREAM_BYTES) return &st->items[i];
  if (st->slots[i]->state != CS_FULFILLED) return NULL;
  return rsc__slot_value(st->slots[i]);
}

/* Rows written as the log kept them: what no value holds. (The log also
 * keeps model, I and stream rows, for when their value is missing.) */
static bool keeps_row_text(uint8_t tag) {
  switch (tag) {
  case 'H':
  case 'D':
  case 'N':
  case 'J':
  case 'W':
  case 'E': return true;
  default: return false;
  }
}

static bool settled_deep(enc *e, rsc_idmap *seen, const rsc_node *v, uint32_t depth,
                         bool fulfilled);

/* Whether v holds an element that became a lazy which did not fulfil
 * (revive.c: it errored, or a row it waited on never came): the writer
 * would write null for it, so its row goes out as it came. Looked for
 * only when the decoder made such lazies. */
static bool holds_lost_element(enc *e, const rsc_node *v) {
  /* none to look for while every element lazy made so far fulfilled with
   * all its slots (a fulfilled chunk stays so: the scan resumes) */
  const struct rsc_rowlog *l = &e->d->rowlog;
  for (; e->lazies_fulfilled < l->element_lazies_len; e->lazies_fulfilled++) {
    const rsc_chunk *c = l->element_lazies[e->lazies_fulfilled];
    if (c->state != CS_FULFILLED || (c->value.kind == RSC_ELEMENT && (c->value.sub & EL_LOST_SLOT)))
      break;
  }
  if (e->lazies_fulfilled == l->element_lazies_len) return false;
  rsc_idmap seen = {0};
  seen.al = &e->d->arena.alloc;
  bool lost = !settled_deep(e, &seen, v, 0, true);
  rsc__idmap_free(&seen);
  return lost;
}

static void write_row(enc *e, size_t r) {
  rsc_decoder *d = e->d;
  const rsc_logged_row *row = &d->rowlog.rows[r];
  rsc_chunk *c = e->infos[r].chunk;
  rsc_stream *st = e->infos[r].stream;
  if (row->raw && keeps_row_text(row->tag)) {
    row_head(e, row->id, 0);
    put(e, (const char *)&row->tag, 1);
    put(e, row->raw, row->raw_len);
    put(e, "\n", 1);
    return;
  }
  switch (row->tag) {
  case 'R':
  case 'r':
  case 'X':
  case 'x':
    row_head(e, row->id, row->tag);
    put(e, "\n", 1);
    return;
  case 'C': {
    row_head(e, row->id, 'C');
    const rsc_node *v = NULL;
    if (st && (st->kind == RSC_STREAM_ITERABLE || st->kind == RSC_STREAM_ITERATOR)) {
      v = stream_item(st, e->infos[r].item);
      if (!v && row->raw) { /* an end that did not fulfil (a reference to a
                             * row that errored): as it came */
        put(e, row->raw, row->raw_len);
        put(e, "\n", 1);
        return;
      }
    }
    /* the return value sits in no row of its own */
    if (v && v->kind != RSC_UNDEFINED) put_value(e, v, NULL, "", 0, 0, false);
    put(e, "\n", 1);
    return;
  }
  case 'E': {
    const rsc_node *reason = NULL;
    if (c && c->state == CS_REJECTED) reason = &c->reason;
    else if (st && st->end == RSC_STREAM_ERRORED) reason = &st->end_value;
    else if (st && (st->kind == RSC_STREAM_ITERABLE || st->kind == RSC_STREAM_ITERATOR) &&
             e->infos[r].item < st->len && st->slots[e->infos[r].item]->state == CS_REJECTED)
      reason = &st->slots[e->infos[r].item]->reason;
    error_line(e, row->id, reason);
    return;
  }
  case 'I':
    row_head(e, row->id, 'I');
    /* the row's metadata as it came: what a client revives from it is
     * not always what was written (rspack's unescaped export names, a
     * "$..." name under webpack), and it is in no value to change */
    if (row->raw) put(e, row->raw, row->raw_len);
    else if (c && c->state == CS_FULFILLED && c->value.kind == RSC_CLIENT_REF)
      put_plain(e, &c->value.u.cref->metadata, PLAIN_ROWS_ESCAPED);
    else PUT_LIT(e, "null");
    put(e, "\n", 1);
    return;
  default: break;
  }
  const rsc_node *v = NULL;
  if (st) v = stream_item(st, e->infos[r].item);
  else if (c && c->state == CS_FULFILLED) v = &c->value;
  if (rsc__is_model_tag(row->tag)) {
    /* an empty row (a development halt, which leaves a chunk that another
     * row settled as it was) is no value of its own */
    if (row->raw && row->raw_len == 0) v = NULL;
    if (v && row->raw && (st || holds_lost_element(e, v))) {
      /* walked as if written, unwritten, so that the rows it names and
       * the places of what it holds are what they would be; then the
       * row as it came (a stream's item too: what an item the stream
       * drops later is written as, so a row made before the drop and one
       * made after are the same bytes) */
      rsc_text *out = e->out, discard;
      memset(&discard, 0, sizeof discard);
      discard.off = true;
      e->out = &discard;
      row_value(e, v);
      e->out = out;
      v = NULL;
    }
    if (v) {
      row_head(e, row->id, row->tag);
      row_value(e, v);
      put(e, "\n", 1);
    } else if (row->raw) { /* no value: the row as it came */
      row_head(e, row->id, row->tag);
      put(e, row->raw, row->raw_len);
      put(e, "\n", 1);
    }
    return;
  }
  if (st && row->raw) {
    /* a stream's row as it came (the log keeps a stream's rows), as a
     * model row's above: an item the stream dropped, a 'b' row that came
     * in pieces (an item each), a text that is not UTF-8 (the item holds
     * U+FFFD where the row did not) all go out as they were sent */
    length_row(e, row->id, row->tag, row->raw, row->raw_len);
    return;
  }
  if (!v) return;
  if (row->tag == 'T' && v->kind == RSC_STRING) length_row(e, row->id, 'T', v->u.str, v->len);
  else if (v->kind == RSC_BINARY) length_row(e, row->id, row->tag, v->u.bytes, v->len);
}

/* Makes row r: straight to the writer when it is the next to go out and
 * no other row is being made, else into a text of its own, handed on
 * once the rows before it have gone (emit_ready). */
static void make_row(enc *e, size_t r) {
  row_text *t = &e->rows[r];
  if (t->state) return;
  t->state = 1;
  rsc_text *outer = e->out;
  size_t outer_row = e->cur_row;
  bool direct = !outer && r == e->emit_next;
  rsc_text own;
  memset(&own, 0, sizeof own);
  e->out = direct ? &e->sink : &own;
  e->cur_row = r;
  bool outer_no_id = e->no_id;
  e->no_id = e->d->rowlog.rows[r].no_id;
  write_row(e, r);
  e->no_id = outer_no_id;
  if (own.status == RSC_ERR_NOMEM) e->fail = true;
  t->p = own.p;
  t->len = own.len;
  t->state = 2;
  e->out = outer;
  e->cur_row = outer_row;
}

/* Hands the writer the rows made, in order, up to the first not made. */
static void emit_ready(enc *e, size_t n) {
  while (e->emit_next < n && e->rows[e->emit_next].state == 2) {
    row_text *t = &e->rows[e->emit_next++];
    if (t->p) rsc__text_put(&e->sink, t->p, t->len);
    free(t->p);
    t->p = NULL;
  }
}

/* Row r's place in the tables: its chunk (read), whether it belongs to a
 * stream and which item it carries, and the row its id names. */
static void note_row(enc *e, size_t r) {
  rsc_decoder *d = e->d;
  const rsc_logged_row *row = &d->rowlog.rows[r];
  rsc_chunk *c = rsc__find_chunk(d, row->id);
  if (c && !e->streaming) rsc__read_chunk(d, c);
  if (d->err.code) return;
  e->infos[r].chunk = c;
  uint32_t start =
      c && c->stream && row->tag != 'R' && row->tag != 'r' && row->tag != 'X' && row->tag != 'x'
          ? rsc__idmap_get(&e->rowidx, (uintptr_t)(row->id + 1))
          : RSC_IDMAP_NONE;
  if (start != RSC_IDMAP_NONE) {
    /* a stream's later row: the next item, or its end (C, E); (a stream
     * whose start row the log has not seen under this id, as a row with
     * no id may leave it, is not one here) */
    uint32_t *n = &e->item_index[start];
    e->infos[r].stream = c->stream;
    e->infos[r].item = *n;
    if (row->tag != 'C' && row->tag != 'E' && !(row->raw && keeps_row_text(row->tag)))
      *n += row->pieces;
    return;
  }
  if (row->tag == 'R' || row->tag == 'r' || row->tag == 'X' || row->tag == 'x' ||
      (rsc__is_model_tag(row->tag) || row->tag == 'I' || row->tag == 'T' ||
       rsc__is_length_tag(row->tag))) {
    if (rsc__idmap_get(&e->rowidx, (uintptr_t)(row->id + 1)) == RSC_IDMAP_NONE &&
        !rsc__idmap_put(&e->rowidx, (uintptr_t)(row->id + 1), (uint32_t)r))
      e->fail = true;
  }
}

/* What stands for row r's own value elsewhere. false: its chunk has not
 * settled yet, so it is not known. */
static bool register_row(enc *e, size_t r) {
  rsc_decoder *d = e->d;
  const rsc_logged_row *row = &d->rowlog.rows[r];
  rsc_chunk *c = e->infos[r].chunk;
  if (!c || e->infos[r].stream) return true;
  /* a negative id (a row id folded as React folds them: RSC_OPT_LENIENT_IDS)
   * is no row a reference can name: "$-100" reads as -Infinity */
  if (row->id < 0) return true;
  if (c->stream) {
    put_id_ref(e, &e->firsts, (uintptr_t)c->stream, "", row->id, (int64_t)r);
    return true;
  }
  /* (a C row names no value: React's client ignores one whose chunk is no
   * stream, as before the row that brings it: "0:C" then "0:{...}") */
  if ((row->raw && keeps_row_text(row->tag)) || row->tag == 'E' || row->tag == 'C') return true;
  if (c->state != CS_FULFILLED) return c->state == CS_REJECTED || c->state == CS_HALTED;
  const rsc_node *v = unwrap(d, &c->value);
  if (v->kind == RSC_STRING || v->kind == RSC_SYMBOL || v->kind == RSC_FUNCTION) {
    if (v->len) {
      /* a T row's text is that row's own ("f0:\"$1\"" before "1:T3,def") */
      if (row->tag == 'T') put_own_ref(e, &e->texts, (uintptr_t)v->u.str, row->id, (int64_t)r);
      else put_id_ref(e, &e->texts, (uintptr_t)v->u.str, "", row->id, (int64_t)r);
      unsigned b = text_bit(v->u.str);
      e->text_bits[b / 64] |= (uint64_t)1 << (b % 64);
    }
  } else if (v->kind == RSC_BINARY) {
    /* emitted as its own row where it is first met; a path after (a
     * binary row's bytes are that row's own) */
    if (rsc__is_length_tag(row->tag))
      put_own_ref(e, &e->firsts, rsc__writer_identity(v), row->id, (int64_t)r);
    else put_id_ref(e, &e->firsts, rsc__writer_identity(v), "", row->id, (int64_t)r);
  } else {
    put_id_ref(e, &e->written, rsc__writer_identity(v), "", row->id, (int64_t)r);
  }
  return true;
}

/* The form the log noted at i: its value's first meeting is that form,
 * and the row it names was written where the server met it. */
static void note_form(enc *e, size_t i) {
  const rsc_logged_form *f = &e->d->rowlog.forms[i];
  char form[2] = {f->form, 0};
  int64_t row = row_of(e, f->id);
  put_id_ref(e, &e->firsts, f->identity, form, f->id, row);
  if (row >= 0) e->rows[row].outlined = true;
}

/* What stands for each row's own value, the forms the log noted, and
 * which rows belong to streams. */
static void prepare(enc *e) {
  rsc_decoder *d = e->d;
  const struct rsc_rowlog *l = &d->rowlog;
  for (size_t i = 0; i < l->tails_len && !e->fail; i++)
    if (!rsc__idmap_put(&e->tails, (uintptr_t)l->tails[i].element, (uint32_t)i)) e->fail = true;
  for (size_t i = 0; i < l->protos_len && !e->fail; i++)
    if (!rsc__idmap_put(&e->protos, (uintptr_t)l->protos[i].member, (uint32_t)i)) e->fail = true;
  for (size_t r = 0; r < l->len && !e->fail; r++) {
    note_row(e, r);
    if (d->err.code) return;
    register_row(e, r);
  }
  for (size_t i = 0; i < l->forms_len && !e->fail; i++) note_form(e, i);
}

/* What an encode allocates, kept in the decoder for the next encode of it
 * (emptied, not freed): a fresh set faulted its pages in on every encode,
 * which cost more than the writing. */
struct rsc_enc_cache {
  rsc_idmap written, firsts, texts, rowidx, protos, tails;
  ref *refs;
  size_t refs_cap;
  row_text *rows;
  row_info *infos;
  uint32_t *item_index;
  size_t rows_cap;
  char *piece; /* the writer's buffer, RSC_TEXT_PIECE bytes */
  rsc_text scratch, spelled;
};

static void idmap_clear(rsc_idmap *m) {
  if (m->count) memset(m->keys, 0, m->cap * sizeof *m->keys);
  m->count = 0;
}

void rsc__encode_cache_free(struct rsc_enc_cache *c) {
  if (!c) return;
  rsc__idmap_free(&c->written);
  rsc__idmap_free(&c->firsts);
  rsc__idmap_free(&c->texts);
  rsc__idmap_free(&c->rowidx);
  rsc__idmap_free(&c->protos);
  rsc__idmap_free(&c->tails);
  free(c->refs);
  free(c->rows);
  free(c->infos);
  free(c->item_index);
  free(c->piece);
  free(c->scratch.p);
  free(c->spelled.p);
  free(c);
}

/* Takes the decoder's cache (made on the first encode) into e, emptied and
 * sized for n rows; false: out of memory. */
static bool enc_open(enc *e, size_t n) {
  struct rsc_enc_cache *c = e->d->enc_cache;
  if (!c) {
    c = (struct rsc_enc_cache *)calloc(1, sizeof *c);
    if (!c) return false;
    e->d->enc_cache = c;
  }
  e->cache = c;
  if (n + 1 > c->rows_cap) {
    free(c->rows);
    free(c->infos);
    free(c->item_index);
    c->rows = (row_text *)malloc((n + 1) * sizeof *c->rows);
    c->infos = (row_info *)malloc((n + 1) * sizeof *c->infos);
    c->item_index = (uint32_t *)malloc((n + 1) * sizeof *c->item_index);
    c->rows_cap = c->rows && c->infos && c->item_index ? n + 1 : 0;
    if (!c->rows_cap) return false;
  }
  memset(c->rows, 0, (n + 1) * sizeof *c->rows);
  memset(c->infos, 0, (n + 1) * sizeof *c->infos);
  memset(c->item_index, 0, (n + 1) * sizeof *c->item_index);
  if (!c->piece && !(c->piece = (char *)malloc(RSC_TEXT_PIECE))) return false;
  rsc_idmap *maps[] = {&c->written, &c->firsts, &c->texts, &c->rowidx, &c->protos, &c->tails};
  for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) idmap_clear(maps[i]);
  e->written = c->written;
  e->firsts = c->firsts;
  e->texts = c->texts;
  e->rowidx = c->rowidx;
  e->protos = c->protos;
  e->tails = c->tails;
  e->refs = c->refs;
  e->refs_cap = c->refs_cap;
  e->rows = c->rows;
  e->infos = c->infos;
  e->item_index = c->item_index;
  e->scratch = c->scratch;
  e->scratch.len = 0;
  e->scratch.status = RSC_OK;
  e->spelled = c->spelled;
  e->spelled.len = 0;
  e->spelled.status = RSC_OK;
  return true;
}

/* Gives the tables back to the cache (they may have grown). */
static void enc_close(enc *e) {
  struct rsc_enc_cache *c = e->cache;
  if (!c) return;
  c->written = e->written;
  c->firsts = e->firsts;
  c->texts = e->texts;
  c->rowidx = e->rowidx;
  c->protos = e->protos;
  c->tails = e->tails;
  c->refs = e->refs;
  c->refs_cap = e->refs_cap;
  c->scratch = e->scratch;
  c->spelled = e->spelled;
}

rsc_status rsc_encode(rsc_decoder *d, rsc_write_fn write, void *ctx) {
  if (!d || !write) return RSC_ERR_STATE;
  if (d->err.code) return d->err.code;
  if (!(d->opt.flags & RSC_OPT_KEEP_ROWS)) return RSC_ERR_STATE;
  enc e;
  memset(&e, 0, sizeof e);
  e.d = d;
  /* a row's JSON nests at most max_depth deep: this bounds the C stack
   * (about 300 bytes a level) where a cycle has no path to end it */
  e.max_depth = d->opt.limits.max_depth + 64;
  size_t n = d->rowlog.len;
  if (!enc_open(&e, n)) e.fail = true;
  if (!e.fail) {
    e.sink.write = write;
    e.sink.ctx = ctx;
    e.sink.cap = RSC_TEXT_PIECE;
    e.sink.p = e.cache->piece;
  }
  if (!e.fail) prepare(&e);
  /* rows a form names (a Map's entries...) are made where they are met
   * first, then what is left in order */
  for (size_t r = 0; r < n && !e.fail && !d->err.code && !e.sink.status; r++) {
    if (!e.rows[r].outlined) make_row(&e, r);
    emit_ready(&e, n);
  }
  for (size_t r = 0; r < n && !e.fail && !d->err.code && !e.sink.status; r++) {
    make_row(&e, r);
    emit_ready(&e, n);
  }
  if (!e.fail && !d->err.code) rsc__text_flush(&e.sink);
  rsc_status st = e.sink.status;
  for (size_t r = 0; e.rows && r < n; r++) free(e.rows[r].p);
  enc_close(&e);
  if (d->err.code) return d->err.code;
  if (e.fail) return RSC_ERR_NOMEM;
  return st;
}

/* ---- streaming: rows written as their chunks settle ---------------------- */

/* The state of rsc_encode_ready between calls, in the decoder: the
 * writer's tables as rsc_encode fills them, filled as rows come. */
struct rsc_enc_stream {
  enc e;
  size_t cap;        /* rows, infos, item_index and flags, by log index   */
  uint8_t *flags;    /* ES_ bits, by log index                            */
  size_t noted;      /* rows note_row has seen                            */
  size_t registered; /* the rows before it have their values registered  */
  size_t forms;      /* forms note_form has seen                          */
  size_t tails, protos;
  size_t make_next;  /* the log index of the next row to make in order   */
  size_t clear_row;  /* a settled model row that no form names: the rows
                        before it are not the entries of a later form    */
  rsc_idmap seen;    /* settled_deep's containers                          */
  rsc_status status; /* sticky: the writer failed, or memory ran out      */
  bool done;         /* the final call wrote the rest                      */
};

enum { ES_REGISTERED = 1, ES_SETTLED = 2 };

void rsc__encode_stream_free(struct rsc_enc_stream *s) {
  if (!s) return;
  enc *e = &s->e;
  for (size_t r = 0; r < s->cap && e->rows; r++) free(e->rows[r].p);
  rsc__idmap_free(&e->written);
  rsc__idmap_free(&e->firsts);
  rsc__idmap_free(&e->texts);
  rsc__idmap_free(&e->rowidx);
  rsc__idmap_free(&e->protos);
  rsc__idmap_free(&e->tails);
  rsc__idmap_free(&s->seen);
  free(e->refs);
  free(e->rows);
  free(e->infos);
  free(e->item_index);
  free(e->sink.p);
  free(e->scratch.p);
  free(e->spelled.p);
  free(s->flags);
  free(s);
}

/* Room for n rows, the new ones zeroed; false: out of memory. */
static bool stream_grow(struct rsc_enc_stream *s, size_t n) {
  if (n <= s->cap) return true;
  size_t cap = s->cap ? s->cap : 64;
  while (cap < n) cap *= 2;
  enc *e = &s->e;
  row_text *rows = (row_text *)realloc(e->rows, cap * sizeof *rows);
  if (rows) e->rows = rows;
  row_info *infos = (row_info *)realloc(e->infos, cap * sizeof *infos);
  if (infos) e->infos = infos;
  uint32_t *items = (uint32_t *)realloc(e->item_index, cap * sizeof *items);
  if (items) e->item_index = items;
  uint8_t *flags = (uint8_t *)realloc(s->flags, cap);
  if (flags) s->flags = flags;
  if (!rows || !infos || !items || !flags) return false;
  memset(rows + s->cap, 0, (cap - s->cap) * sizeof *rows);
  memset(infos + s->cap, 0, (cap - s->cap) * sizeof *infos);
  memset(items + s->cap, 0, (cap - s->cap) * sizeof *items);
  memset(flags + s->cap, 0, cap - s->cap);
  s->cap = cap;
  return true;
}

/* Whether v holds no internal chunk still waiting (an element blocked on
 * a row not settled yet), which the writer writes as null now and as its
 * value once it settles; with fulfilled, whether it holds none that is not
 * fulfilled (an element that errored, or whose row never came: lost to
 * the writer). seen: the containers already looked at. */
static bool settled_deep(enc *e, rsc_idmap *seen, const rsc_node *v, uint32_t depth,
                         bool fulfilled) {
  v = unwrap(e->d, v);
  if (v->kind == RSC_LAZY && internal_chunk(e->d, v->u.chunk))
    return !fulfilled && (v->u.chunk->state == CS_REJECTED || v->u.chunk->state == CS_HALTED);
  if (v->kind != RSC_ARRAY && v->kind != RSC_OBJECT && v->kind != RSC_ELEMENT) return true;
  if (depth >= e->max_depth) return true; /* the writer stops there too */
  uintptr_t id = rsc__writer_identity(v);
  if (id) {
    uint32_t *slot = rsc__idmap_slot(seen, id);
    if (!slot) {
      e->fail = true;
      return false;
    }
    if (*slot != RSC_IDMAP_NONE) return true;
    *slot = 0;
  }
  switch (v->kind) {
  case RSC_ARRAY:
    for (uint32_t i = 0; i < v->len; i++)
      if (!settled_deep(e, seen, &v->u.items[i], depth + 1, fulfilled)) return false;
    return true;
  case RSC_OBJECT:
    for (uint32_t i = 0; i < v->len; i++)
      if (!settled_deep(e, seen, &v->u.members[i].val, depth + 1, fulfilled)) return false;
    return true;
  default: {
    const rsc_element *el = v->u.el;
    if (fulfilled && (v->sub & EL_LOST_SLOT)) return false;
    if (!settled_deep(e, seen, &el->type, depth + 1, fulfilled) ||
        !settled_deep(e, seen, &el->key, depth + 1, fulfilled) ||
        !settled_deep(e, seen, &el->props, depth + 1, fulfilled))
      return false;
    uint32_t t =
        (v->sub & EL_HAS_OWNER) ? rsc__idmap_get(&e->tails, (uintptr_t)el) : RSC_IDMAP_NONE;
    if (t != RSC_IDMAP_NONE) {
      const rsc_logged_tail *tl = &e->d->rowlog.tails[t];
      for (uint32_t i = 0; i < tl->n; i++)
        if (!settled_deep(e, seen, &tl->slots[i], depth + 1, fulfilled)) return false;
    }
    return true;
  }
  }
}

/* Whether the "$" strings of a row's JSON read only chunks that have
 * arrived (and whose own JSON does so): then reading it now revives what
 * reading it after the end would. A read that met a chunk still to come
 * would wait on it where the decode of the whole payload, reading later,
 * meets it settled or being read, and may revive otherwise (a cycle
 * through it). seen: the chunks looked at. */
static bool refs_arrived(enc *e, rsc_idmap *seen, const rsc_node *v, uint32_t depth);

static bool chunk_arrived(enc *e, rsc_idmap *seen, rsc_chunk *c, uint32_t depth) {
  if (!c || c->state == CS_PENDING) return false;
  if (c->state != CS_RESOLVED_MODEL || c->json_failed) return true;
  uint32_t *slot = rsc__idmap_slot(seen, (uintptr_t)c);
  if (!slot) {
    e->fail = true;
    return false;
  }
  if (*slot != RSC_IDMAP_NONE) return true;
  *slot = 0;
  return refs_arrived(e, seen, &c->value, depth + 1);
}

static bool refs_arrived(enc *e, rsc_idmap *seen, const rsc_node *v, uint32_t depth) {
  if (depth > 64) return false;
  if (v->kind == RSC_STRING) {
    if (!(v->flags & NF_DOLLAR) || v->len < 2) return true;
    const char *p = v->u.str + 1;
    size_t n = v->len - 1;
    switch (p[0]) {
    case 'h':
    case 'F':
    case 'Q':
    case 'W':
    case 'B':
    case 'K':
    case 'i':
    case 'Z':
    case 'P': p++, n--; break; /* a form: the row after it */
    default:
      if (!((p[0] >= '0' && p[0] <= '9') || (p[0] >= 'a' && p[0] <= 'f'))) return true;
      break;
    }
    rsc_chunk *c = rsc__find_chunk(e->d, rsc__parse_ref_id(p, n));
    return chunk_arrived(e, seen, c, depth);
  }
  if (v->kind == RSC_ARRAY && (v->flags & NF_WALK)) {
    /* a tuple the JSON stage kept without its marker slot has one item
     * fewer than its length */
    uint32_t skip = v->sub == ARR_NO_MARKER;
    for (uint32_t i = skip; i < v->len; i++)
      if (!refs_arrived(e, seen, &v->u.items[i - skip], depth)) return false;
  } else if (v->kind == RSC_OBJECT && (v->flags & NF_WALK)) {
    for (uint32_t i = 0; i < v->len; i++)
      if (!refs_arrived(e, seen, &v->u.members[i].val, depth)) return false;
  }
  return true;
}

/* Reads c when that revives what a read after the end would; false: it
 * is left unread for now. */
static bool safe_read(struct rsc_enc_stream *s, rsc_chunk *c) {
  if (c->state == CS_RESOLVED_MODEL) {
    idmap_clear(&s->seen);
    if (!chunk_arrived(&s->e, &s->seen, c, 0)) return false;
    rsc__read_chunk(s->e.d, c);
  }
  return true;
}

/* A chunk's value as the writer will write it for good: settled, and
 * nothing in it waiting. */
static bool chunk_final(struct rsc_enc_stream *s, rsc_chunk *c) {
  if (!safe_read(s, c)) return false;
  if (c->state == CS_REJECTED || c->state == CS_HALTED) return true;
  if (c->state != CS_FULFILLED) return false;
  if (!c->reaches) return true; /* built from its own row alone */
  idmap_clear(&s->seen);
  return settled_deep(&s->e, &s->seen, &c->value, 0, false);
}

/* Whether a row's value could be the entries of a form a later row names
 * ("$Q", "$W", "$K", "$B", "$i": arrays; "$h": {id, bound}; "$Z": a
 * development error): the server writes such a row just before the row
 * that names it, and the writer makes it inside that row. */
static bool form_candidate(enc *e, rsc_chunk *c) {
  if (c->state != CS_FULFILLED) return false;
  const rsc_node *v = unwrap(e->d, &c->value);
  if (v->kind == RSC_ARRAY) return true;
  if (v->kind != RSC_OBJECT) return false;
  if (e->d->dev) return true;
  for (uint32_t i = 0; i < v->len; i++)
    if (rsc__member_klen(&v->u.members[i]) == 5 && !memcmp(v->u.members[i].key, "bound", 5))
      return true;
  return false;
}

/* Whether a model row after r has settled to a value no form can name:
 * the row that names r by a form, if one does, came before it (the
 * server writes a row's outlined entries just before the row), and its
 * forms are noted. */
static bool form_namer_seen(struct rsc_enc_stream *s, size_t r) {
  enc *e = &s->e;
  if (s->clear_row > r) return true;
  const struct rsc_rowlog *l = &e->d->rowlog;
  for (size_t q = r + 1; q < s->noted; q++) {
    rsc_chunk *c = e->infos[q].chunk;
    if (!rsc__is_model_tag(l->rows[q].tag) || !c || e->infos[q].stream || c->stream) continue;
    if (!safe_read(s, c)) continue;
    if (c->state == CS_FULFILLED && !form_candidate(e, c)) {
      s->clear_row = q;
      return true;
    }
  }
  return false;
}

/* Whether row r's text is final: what write_row writes for it now is what
 * it writes once the payload has ended. */
static bool row_final(struct rsc_enc_stream *s, size_t r) {
  enc *e = &s->e;
  if (s->flags[r] & ES_SETTLED) return true;
  const rsc_logged_row *row = &e->d->rowlog.rows[r];
  rsc_chunk *c = e->infos[r].chunk;
  rsc_stream *st = e->infos[r].stream;
  bool ok;
  if ((row->raw && keeps_row_text(row->tag)) || row->tag == 'R' || row->tag == 'r' ||
      row->tag == 'X' || row->tag == 'x' || row->tag == 'E') {
    ok = true;
  } else if (st) {
    uint32_t i = e->infos[r].item + (row->pieces - 1);
    if (i >= st->len) ok = st->closed; /* an item the stream dropped, or to come */
    else if (st->kind == RSC_STREAM_TEXT || st->kind == RSC_STREAM_BYTES) ok = true;
    else ok = chunk_final(s, st->slots[i]);
  } else if (!c) {
    ok = true;
  } else {
    ok = chunk_final(s, c);
  }
  if (ok) s->flags[r] |= ES_SETTLED;
  return ok;
}

/* Whether row r can be made now: its text is final, so is that of the
 * outlined rows before it that it may make, and it is not the entries of
 * a form a row still to come may name. */
static bool row_ready(struct rsc_enc_stream *s, size_t r) {
  enc *e = &s->e;
  if (!row_final(s, r)) return false;
  for (size_t q = e->emit_next; q < r; q++)
    if (e->rows[q].state == 0 && !row_final(s, q)) return false;
  const rsc_logged_row *row = &e->d->rowlog.rows[r];
  rsc_chunk *c = e->infos[r].chunk;
  if (rsc__is_model_tag(row->tag) && c && !e->infos[r].stream && !c->stream && form_candidate(e, c))
    return form_namer_seen(s, r);
  return true;
}

/* Takes in what stands for the values of the rows that settled, and the
 * forms, development element tails and "__proto__" values the log
 * gained (reading a chunk adds them). A form waits for the row it
 * names (a reference that waited names a row to come, and is noted when
 * it arrives), but at the end. */
static void stream_take_notes(struct rsc_enc_stream *s, bool end) {
  enc *e = &s->e;
  const struct rsc_rowlog *l = &e->d->rowlog;
  while (s->registered < s->noted && (s->flags[s->registered] & ES_REGISTERED)) s->registered++;
  for (size_t r = s->registered; r < s->noted && !e->fail && !e->d->err.code; r++)
    if (!(s->flags[r] & ES_REGISTERED) && register_row(e, r)) s->flags[r] |= ES_REGISTERED;
  for (; s->tails < l->tails_len && !e->fail; s->tails++)
    if (!rsc__idmap_put(&e->tails, (uintptr_t)l->tails[s->tails].element, (uint32_t)s->tails))
      e->fail = true;
  for (; s->protos < l->protos_len && !e->fail; s->protos++)
    if (!rsc__idmap_put(&e->protos, (uintptr_t)l->protos[s->protos].member, (uint32_t)s->protos))
      e->fail = true;
  for (; s->forms < l->forms_len && !e->fail; s->forms++) {
    if (!end && row_of(e, l->forms[s->forms].id) < 0) break;
    note_form(e, s->forms);
  }
}

/* Takes in the rows the log gained since the last call (their places, and
 * what stands for their values once settled), then the notes. */
static void stream_note(struct rsc_enc_stream *s, bool end) {
  enc *e = &s->e;
  rsc_decoder *d = e->d;
  const struct rsc_rowlog *l = &d->rowlog;
  if (!stream_grow(s, l->len + 1)) {
    e->fail = true;
    return;
  }
  /* (a 'b' row with pieces to come is noted once it has them all: the
   * items it makes count) */
  size_t whole = l->len - (!end && l->piece_open);
  for (; s->noted < whole && !e->fail && !d->err.code; s->noted++) note_row(e, s->noted);
  /* at the end every row is read, in order, as rsc_encode reads them */
  for (size_t r = 0; end && r < s->noted && !d->err.code; r++)
    if (e->infos[r].chunk) rsc__read_chunk(d, e->infos[r].chunk);
  stream_take_notes(s, end);
}

/* Whether the last row is a 'b' row still coming in pieces for a chunk
 * that is no stream's (no server writes one): its bytes are the chunk's
 * value, which a row before it may name, and the row that stands for
 * them is known only once it is noted. */
static bool value_row_open(rsc_decoder *d) {
  const struct rsc_rowlog *l = &d->rowlog;
  if (!l->piece_open || !l->len) return false;
  rsc_chunk *c = rsc__find_chunk(d, l->rows[l->len - 1].id);
  return !c || !c->stream;
}

rsc_status rsc_encode_ready(rsc_decoder *d, rsc_write_fn write, void *ctx) {
  if (!d || !write) return RSC_ERR_STATE;
  if (d->err.code) return d->err.code;
  if (!(d->opt.flags & RSC_OPT_KEEP_ROWS)) return RSC_ERR_STATE;
  struct rsc_enc_stream *s = d->enc_stream;
  if (!s) {
    s = (struct rsc_enc_stream *)calloc(1, sizeof *s);
    if (!s) return RSC_ERR_NOMEM;
    s->e.sink.p = (char *)malloc(RSC_TEXT_PIECE);
    if (!s->e.sink.p) {
      free(s);
      return RSC_ERR_NOMEM;
    }
    s->e.sink.cap = RSC_TEXT_PIECE;
    s->e.max_depth = d->opt.limits.max_depth + 64;
    s->e.streaming = true;
    d->enc_stream = s;
  }
  if (s->status) return s->status;
  if (s->done) return RSC_OK;
  enc *e = &s->e;
  e->d = d;
  e->sink.write = write;
  e->sink.ctx = ctx;
  bool end = d->closed;
  stream_note(s, end);
  size_t n = s->noted;
  /* the rows in order, as rsc_encode's first pass makes them, up to the
   * first whose text may still change; rows a form names are made inside
   * the row that names them */
  bool hold = !end && value_row_open(d);
  for (; s->make_next < n && !e->fail && !d->err.code && !e->sink.status; s->make_next++) {
    size_t r = s->make_next;
    if (e->rows[r].state || e->rows[r].outlined) continue;
    if (!end && (hold || !row_ready(s, r))) break;
    stream_take_notes(s, end); /* what the reads on the way noted */
    make_row(e, r);
    emit_ready(e, n);
  }
  if (end && s->make_next == n) {
    for (size_t r = 0; r < n && !e->fail && !d->err.code && !e->sink.status; r++) {
      make_row(e, r);
      emit_ready(e, n);
    }
    s->done = !e->fail && !d->err.code && !e->sink.status;
  }
  if (!e->fail && !d->err.code) rsc__text_flush(&e->sink);
  if (d->err.code) return d->err.code;
  if (e->fail) s->status = RSC_ERR_NOMEM;
  else if (e->sink.status) s->status = e->sink.status;
  return s->status;
}
