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
#include "rowlog.h"
#include "rowtags.h"
#include "textout.h"

/* A reference string the writer may write for a value ("$5", "$0:a:b"). */
typedef struct ref {
  char *s;
  size_t n;
} ref;

typedef struct enc {
  rsc_decoder *d;
  rsc_text out;
  rsc_idmap written; /* identity -> refs index: what stands for a value met again */
  rsc_idmap forms;   /* identity -> forms index: the form that made a value */
  rsc_idmap texts;   /* a T row's text pointer -> refs index               */
  ref *refs;
  size_t refs_len, refs_cap;
  const rsc_logged_form *formv;
  uintptr_t row_root; /* the identity of the value of the row being written */
  bool fail;          /* out of memory                                      */
} enc;

/* ---- references ---------------------------------------------------------- */

static uint32_t add_ref(enc *e, const char *s, size_t n) {
  if (e->refs_len == e->refs_cap) {
    size_t cap = e->refs_cap ? e->refs_cap * 2 : 256;
    ref *r = (ref *)realloc(e->refs, cap * sizeof *r);
    if (!r) {
      e->fail = true;
      return RSC_IDMAP_NONE;
    }
    e->refs = r;
    e->refs_cap = cap;
  }
  char *c = (char *)malloc(n + 1);
  if (!c) {
    e->fail = true;
    return RSC_IDMAP_NONE;
  }
  memcpy(c, s, n);
  c[n] = 0;
  e->refs[e->refs_len] = (ref){c, n};
  return (uint32_t)e->refs_len++;
}

static void put_ref(enc *e, rsc_idmap *m, uintptr_t k, const char *s, size_t n) {
  if (!k || rsc__idmap_get(m, k) != RSC_IDMAP_NONE) return;
  uint32_t i = add_ref(e, s, n);
  if (i == RSC_IDMAP_NONE) return;
  if (!rsc__idmap_put(m, k, i)) e->fail = true;
}

static size_t hex_id(char *buf, int64_t id) { return (size_t)sprintf(buf, "%llx", (long long)id); }

static void put_id_ref(enc *e, rsc_idmap *m, uintptr_t k, int64_t id) {
  char buf[24];
  buf[0] = '$';
  size_t n = 1 + hex_id(buf + 1, id);
  put_ref(e, m, k, buf, n);
}

/* ---- values -------------------------------------------------------------- */

static void put(enc *e, const char *s, size_t n) { rsc__text_put(&e->out, s, n); }
static void puts_(enc *e, const char *s) { rsc__text_puts(&e->out, s); }

static void put_hex(enc *e, int64_t id) {
  char buf[24];
  put(e, buf, hex_id(buf, id));
}

/* A string value prefixed: "$" + prefix + text as one JSON string. */
static void put_prefixed(enc *e, const char *prefix, const char *s, size_t n) {
  size_t pn = strlen(prefix);
  char stack[256];
  char *buf = pn + n <= sizeof stack ? stack : (char *)malloc(pn + n);
  if (!buf) {
    e->fail = true;
    return;
  }
  memcpy(buf, prefix, pn);
  if (n) memcpy(buf + pn, s, n);
  rsc__text_json_string(&e->out, buf, pn + n);
  if (buf != stack) free(buf);
}

static void put_number(enc *e, double v) {
  if (isnan(v)) puts_(e, "\"$NaN\"");
  else if (isinf(v)) puts_(e, v > 0 ? "\"$Infinity\"" : "\"$-Infinity\"");
  else if (v == 0 && signbit(v)) puts_(e, "\"$-0\"");
  else {
    char buf[40];
    put(e, buf, rsc__format_number(v, buf));
  }
}

/* JSON as the server stringifies data it does not revive (an I row's
 * metadata): no "$" forms. */
static void put_plain(enc *e, const rsc_node *v) {
  switch (v->kind) {
  case RSC_NULL: puts_(e, "null"); return;
  case RSC_BOOL: puts_(e, v->u.boolean ? "true" : "false"); return;
  case RSC_NUMBER: {
    char buf[40];
    put(e, buf, rsc__format_number(v->u.num, buf));
    return;
  }
  case RSC_STRING: rsc__text_json_string(&e->out, v->u.str, v->len); return;
  case RSC_ARRAY:
    put(e, "[", 1);
    for (uint32_t i = 0; i < v->len; i++) {
      if (i) put(e, ",", 1);
      put_plain(e, &v->u.items[i]);
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
      rsc__text_json_string(&e->out, m->key, rsc__member_klen(m));
      put(e, ":", 1);
      put_plain(e, &m->val);
    }
    put(e, "}", 1);
    return;
  }
  default: puts_(e, "null"); return;
  }
}

/* The reference a child of a parent whose reference is pref gets under
 * key: pref + ":" + key (NULL when the parent has none or the key holds a
 * ':', as the server skips those). */
typedef struct path_ref {
  const char *s;
  size_t n;
} path_ref;

static void put_value(enc *e, const rsc_node *v, path_ref parent, const char *key, size_t klen,
                      bool top);

static void put_child(enc *e, const rsc_node *v, path_ref self, const char *key, size_t klen) {
  put_value(e, v, self, key, klen, false);
}

static void put_index_child(enc *e, const rsc_node *v, path_ref self, uint32_t i) {
  char buf[16];
  int n = snprintf(buf, sizeof buf, "%u", i);
  put_child(e, v, self, buf, (size_t)n);
}

static void put_form(enc *e, const rsc_logged_form *f) {
  char buf[32];
  buf[0] = '"';
  buf[1] = '$';
  buf[2] = f->form;
  size_t n = 3;
  if (!(f->form == 'Z' && f->id < 0)) n += hex_id(buf + 3, f->id);
  buf[n++] = '"';
  put(e, buf, n);
}

static void put_value(enc *e, const rsc_node *v, path_ref parent, const char *key, size_t klen,
                      bool top) {
  if (e->fail || e->out.status) return;
  switch (v->kind) {
  case RSC_NONE:
  case RSC_UNDEFINED: puts_(e, "\"$undefined\""); return;
  case RSC_NULL: puts_(e, "null"); return;
  case RSC_BOOL: puts_(e, v->u.boolean ? "true" : "false"); return;
  case RSC_NUMBER: put_number(e, v->u.num); return;
  case RSC_STRING: {
    uint32_t t = v->len ? rsc__idmap_get(&e->texts, (uintptr_t)v->u.str) : RSC_IDMAP_NONE;
    if (t != RSC_IDMAP_NONE) {
      rsc__text_json_string(&e->out, e->refs[t].s, e->refs[t].n);
      return;
    }
    if (v->len && v->u.str[0] == '$') put_prefixed(e, "$", v->u.str, v->len);
    else rsc__text_json_string(&e->out, v->u.str, v->len);
    return;
  }
  case RSC_BIGINT: put_prefixed(e, "$n", v->u.str, v->len); return;
  case RSC_DATE: put_prefixed(e, "$D", v->u.str, v->len); return;
  case RSC_SYMBOL:
    if (rsc__is_marker(v)) puts_(e, "\"$\"");
    else put_prefixed(e, "$S", v->u.str, v->len);
    return;
  case RSC_TEMP_REF: put_prefixed(e, "$T", v->u.str, v->len); return;
  case RSC_FUNCTION: put_prefixed(e, "$E", v->u.str, v->len); return;
  case RSC_LAZY:
  case RSC_PROMISE: {
    rsc_chunk *c = v->u.chunk;
    if (c->id >= 0) {
      puts_(e, v->kind == RSC_LAZY ? "\"$L" : "\"$@");
      put_hex(e, c->id);
      put(e, "\"", 1);
      return;
    }
    /* an internal chunk (a blocked element's): its value stands here */
    rsc__read_chunk(e->d, c);
    if (c->state == CS_FULFILLED) put_value(e, &c->value, parent, key, klen, top);
    else puts_(e, "null");
    return;
  }
  default: break;
  }

  /* values with identity */
  uintptr_t id = rsc__writer_identity(v);
  uint32_t w = id ? rsc__idmap_get(&e->written, id) : RSC_IDMAP_NONE;
  path_ref self = {NULL, 0};
  if (w != RSC_IDMAP_NONE) {
    if (!(top && id == e->row_root)) {
      rsc__text_json_string(&e->out, e->refs[w].s, e->refs[w].n);
      return;
    }
    self = (path_ref){e->refs[w].s, e->refs[w].n};
  } else if (id && parent.s && !memchr(key, ':', klen)) {
    char stack[512];
    size_t n = parent.n + 1 + klen;
    char *buf = n <= sizeof stack ? stack : (char *)malloc(n);
    if (!buf) {
      e->fail = true;
      return;
    }
    memcpy(buf, parent.s, parent.n);
    buf[parent.n] = ':';
    memcpy(buf + parent.n + 1, key, klen);
    uint32_t i = add_ref(e, buf, n);
    if (buf != stack) free(buf);
    if (i == RSC_IDMAP_NONE) return;
    if (!rsc__idmap_put(&e->written, id, i)) {
      e->fail = true;
      return;
    }
    self = (path_ref){e->refs[i].s, e->refs[i].n};
  }
  uint32_t f = id ? rsc__idmap_get(&e->forms, id) : RSC_IDMAP_NONE;
  if (f != RSC_IDMAP_NONE) {
    put_form(e, &e->formv[f]);
    return;
  }

  switch (v->kind) {
  case RSC_OBJECT: {
    put(e, "{", 1);
    for (uint32_t i = 0; i < v->len; i++) {
      const rsc_member *m = &v->u.members[i];
      uint32_t kn = rsc__member_klen(m);
      if (i) put(e, ",", 1);
      rsc__text_json_string(&e->out, m->key, kn);
      put(e, ":", 1);
      put_child(e, &m->val, self, m->key, kn);
    }
    put(e, "}", 1);
    return;
  }
  case RSC_ARRAY:
    put(e, "[", 1);
    for (uint32_t i = 0; i < v->len; i++) {
      if (i) put(e, ",", 1);
      put_index_child(e, &v->u.items[i], self, i);
    }
    put(e, "]", 1);
    return;
  case RSC_ELEMENT: {
    const rsc_element *el = v->u.el;
    puts_(e, "[\"$\",");
    put_child(e, &el->type, self, "type", 4);
    put(e, ",", 1);
    put_child(e, &el->key, self, "key", 3);
    put(e, ",", 1);
    put_child(e, &el->props, self, "props", 5);
    if (v->sub & EL_HAS_OWNER) {
      put(e, ",", 1);
      put_child(e, &el->owner, self, "_owner", 6);
    }
    put(e, "]", 1);
    return;
  }
  default:
    /* a value whose form the log does not name (a stream, binary data or a
     * reference that is no row's value) */
    puts_(e, "null");
    return;
  }
}

/* ---- rows ---------------------------------------------------------------- */

typedef struct stream_pos {
  int64_t id;
  uint32_t next; /* items written so far */
} stream_pos;

static void row_head(enc *e, int64_t id, uint8_t tag) {
  put_hex(e, id);
  put(e, ":", 1);
  if (tag) put(e, (const char *)&tag, 1);
}

static void length_row(enc *e, int64_t id, uint8_t tag, const void *p, size_t n) {
  row_head(e, id, tag);
  put_hex(e, (int64_t)n);
  put(e, ",", 1);
  put(e, (const char *)p, n);
}

/* A row's value: its own identity stands for it everywhere but here. */
static void row_value(enc *e, const rsc_node *v) {
  e->row_root = rsc__writer_identity(v);
  put_value(e, v, (path_ref){NULL, 0}, "", 0, true);
  e->row_root = 0;
}

static void model_line(enc *e, int64_t id, const rsc_node *v) {
  row_head(e, id, 0);
  row_value(e, v);
  put(e, "\n", 1);
}

static void error_line(enc *e, int64_t id, const rsc_node *reason) {
  row_head(e, id, 'E');
  put(e, "{", 1);
  if (reason && reason->kind == RSC_ERROR && reason->u.err->digest.kind != RSC_NONE) {
    puts_(e, "\"digest\":");
    put_value(e, &reason->u.err->digest, (path_ref){NULL, 0}, "", 0, false);
  }
  put(e, "}\n", 2);
}

/* The position of stream id among the streams started so far, or NULL. */
static stream_pos *find_stream(stream_pos *s, size_t n, int64_t id) {
  for (size_t i = n; i-- > 0;)
    if (s[i].id == id) return &s[i];
  return NULL;
}

static void write_rows(enc *e) {
  rsc_decoder *d = e->d;
  const struct rsc_rowlog *l = &d->rowlog;
  stream_pos *streams = NULL;
  size_t nstreams = 0, cap = 0;
  for (size_t r = 0; r < l->len && !e->fail && !e->out.status; r++) {
    const rsc_logged_row *row = &l->rows[r];
    rsc_chunk *c = rsc__find_chunk(d, row->id);
    if (c) rsc__read_chunk(d, c);
    if (d->err.code) break;
    if (row->raw) {
      if (row->tag == 'H') put(e, ":", 1);
      else row_head(e, row->id, 0);
      put(e, (const char *)&row->tag, 1);
      put(e, row->raw, row->raw_len);
      put(e, "\n", 1);
      continue;
    }
    stream_pos *sp = c && c->stream ? find_stream(streams, nstreams, row->id) : NULL;
    rsc_stream *st = sp ? c->stream : NULL;
    switch (row->tag) {
    case 'R':
    case 'r':
    case 'X':
    case 'x':
      if (nstreams == cap) {
        cap = cap ? cap * 2 : 16;
        stream_pos *ns = (stream_pos *)realloc(streams, cap * sizeof *ns);
        if (!ns) {
          e->fail = true;
          break;
        }
        streams = ns;
      }
      streams[nstreams++] = (stream_pos){row->id, 0};
      row_head(e, row->id, row->tag);
      put(e, "\n", 1);
      break;
    case 'C':
      row_head(e, row->id, 'C');
      if (st && (st->kind == RSC_STREAM_ITERABLE || st->kind == RSC_STREAM_ITERATOR) &&
          sp->next < st->len && st->slots[sp->next]->state == CS_FULFILLED) {
        const rsc_node *v = rsc__slot_value(st->slots[sp->next]);
        if (v->kind != RSC_UNDEFINED) row_value(e, v);
      }
      put(e, "\n", 1);
      break;
    case 'E': {
      const rsc_node *reason = NULL;
      if (c && c->state == CS_REJECTED) reason = &c->reason;
      else if (st && st->end == RSC_STREAM_ERRORED) reason = &st->end_value;
      error_line(e, row->id, reason);
      break;
    }
    case 'I':
      row_head(e, row->id, 'I');
      if (c && c->state == CS_FULFILLED && c->value.kind == RSC_CLIENT_REF)
        put_plain(e, &c->value.u.cref->metadata);
      else puts_(e, "null");
      put(e, "\n", 1);
      break;
    case 'T':
      if (c && c->state == CS_FULFILLED && c->value.kind == RSC_STRING)
        length_row(e, row->id, 'T', c->value.u.str, c->value.len);
      break;
    case 0:
      if (st) {
        const rsc_node *v = NULL;
        if (st->kind == RSC_STREAM_TEXT || st->kind == RSC_STREAM_BYTES)
          v = sp->next < st->len ? &st->items[sp->next] : NULL;
        else if (sp->next < st->len && st->slots[sp->next]->state == CS_FULFILLED)
          v = rsc__slot_value(st->slots[sp->next]);
        sp->next++;
        if (v) model_line(e, row->id, v);
        break;
      }
      if (c && c->state == CS_FULFILLED) model_line(e, row->id, &c->value);
      else if (c && c->state == CS_HALTED) {
        row_head(e, row->id, 0);
        put(e, "\n", 1);
      }
      break;
    default:
      if (rsc__is_length_tag(row->tag)) {
        const rsc_node *v = NULL;
        if (row->tag == 'b' && st) {
          v = sp->next < st->len ? &st->items[sp->next] : NULL;
          sp->next++;
        } else if (c && c->state == CS_FULFILLED) v = &c->value;
        if (v && v->kind == RSC_BINARY) length_row(e, row->id, row->tag, v->u.bytes, v->len);
      }
      break;
    }
  }
  free(streams);
}

/* What stands for each row's own value, and the forms the log noted. */
static void prepare(enc *e) {
  rsc_decoder *d = e->d;
  const struct rsc_rowlog *l = &d->rowlog;
  for (size_t i = 0; i < l->forms_len && !e->fail; i++) {
    uintptr_t k = l->forms[i].identity;
    if (rsc__idmap_get(&e->forms, k) == RSC_IDMAP_NONE && !rsc__idmap_put(&e->forms, k, (uint32_t)i))
      e->fail = true;
  }
  e->formv = l->forms;
  for (size_t r = 0; r < l->len && !e->fail; r++) {
    const rsc_logged_row *row = &l->rows[r];
    if (row->raw || row->tag == 'C' || row->tag == 'E' || row->tag == 'b') continue;
    rsc_chunk *c = rsc__find_chunk(d, row->id);
    if (!c || c->stream) continue;
    rsc__read_chunk(d, c);
    if (d->err.code) return;
    if (c->state != CS_FULFILLED) continue;
    if (row->tag == 'T' && c->value.kind == RSC_STRING && c->value.len)
      put_id_ref(e, &e->texts, (uintptr_t)c->value.u.str, row->id);
    else put_id_ref(e, &e->written, rsc__writer_identity(&c->value), row->id);
  }
  /* streams: "$<id>" names the stream */
  for (size_t r = 0; r < l->len && !e->fail; r++) {
    const rsc_logged_row *row = &l->rows[r];
    if (row->tag != 'R' && row->tag != 'r' && row->tag != 'X' && row->tag != 'x') continue;
    rsc_chunk *c = rsc__find_chunk(d, row->id);
    if (c && c->stream) put_id_ref(e, &e->written, (uintptr_t)c->stream, row->id);
  }
}

rsc_status rsc_encode(rsc_decoder *d, rsc_write_fn write, void *ctx) {
  if (!d || !write) return RSC_ERR_STATE;
  if (d->err.code) return d->err.code;
  if (!(d->opt.flags & RSC_OPT_KEEP_ROWS)) return RSC_ERR_STATE;
  enc e;
  memset(&e, 0, sizeof e);
  e.d = d;
  if (!rsc__text_to_writer(&e.out, write, ctx)) return RSC_ERR_NOMEM;
  prepare(&e);
  if (!e.fail && !d->err.code) write_rows(&e);
  if (!e.fail && !d->err.code && !e.out.status) rsc__text_flush(&e.out);
  for (size_t i = 0; i < e.refs_len; i++) free(e.refs[i].s);
  free(e.refs);
  rsc__idmap_free(&e.written);
  rsc__idmap_free(&e.forms);
  rsc__idmap_free(&e.texts);
  free(e.out.p);
  if (d->err.code) return d->err.code;
  if (e.fail) return RSC_ERR_NOMEM;
  return e.out.status;
}
