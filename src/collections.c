/* collections.c - React's map functions (createMap, createSet,
 * createFormData, createBlob, createIterator, the error and server
 * reference models, applyConstructor) applied to a value a reference
 * reached, with what JavaScript does for models of the wrong shape: its
 * String() of values (jsstring.c) and the TypeErrors it throws.
 * Calls path.c (a model's members), jsstring.c, shared.c (values placed,
 * RSC_OPT_TRACK_SHARED) and the error helpers; the chunk stage and the
 * revive walk call here, never the other way. */
#include "collections.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsstring.h"
#include "path.h"
#include "shared.h"
#include "utf8.h"

/* A STRING's text as a C string: errors keep their message, name and env
 * NUL-terminated, and a T row borrowed from the caller's buffer
 * (RSC_OPT_BORROW_INPUT) is not; it is copied. NULL: out of memory. */
static const char *c_string(rsc_decoder *d, const rsc_node *s) {
  if (!(s->flags & NF_BORROWED)) return s->u.str;
  return rsc__strdup(d, s->u.str, s->len);
}

/* ---- collections (React's map functions) ---------------------------------- */

static uintptr_t identity(const rsc_node *n) {
  switch (n->kind) {
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: return (uintptr_t)n->u.items;
  case RSC_OBJECT: return (uintptr_t)n->u.members;
  case RSC_DATE: /* every "$D" is a new Date object */
  case RSC_ELEMENT:
  case RSC_LAZY:
  case RSC_CLIENT_REF:
  case RSC_SERVER_REF:
  case RSC_ERROR:
  case RSC_BLOB:
  case RSC_ITERATOR:
  case RSC_BINARY:
  case RSC_STREAM:
  case RSC_PROMISE:
  case RSC_FUNCTION: return (uintptr_t)n->u.str;
  default: return 0;
  }
}

/* SameValueZero, as Map and Set compare keys. */
static bool same_value_zero(const rsc_node *a, const rsc_node *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case RSC_NULL:
  case RSC_UNDEFINED: return true;
  case RSC_BOOL: return a->u.boolean == b->u.boolean;
  case RSC_NUMBER: return a->u.num == b->u.num || (isnan(a->u.num) && isnan(b->u.num));
  case RSC_STRING:
  case RSC_BIGINT:
  case RSC_SYMBOL: return a->len == b->len && memcmp(a->u.str, b->u.str, a->len) == 0;
  case RSC_LAZY: /* a lazy object per "$L" string (lazy_serial) */
    return a->u.chunk == b->u.chunk && a->len == b->len;
  default: return identity(a) == identity(b);
  }
}

static uint64_t value_hash(uint64_t seed, const rsc_node *n) {
  uint64_t h = (1469598103934665603ull ^ seed) ^ n->kind;
  switch (n->kind) {
  case RSC_NUMBER: {
    double v = n->u.num == 0 ? 0 : n->u.num;
    if (isnan(v)) return rsc__hash_final(h);
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return rsc__hash_final((h ^ bits) * 1099511628211ull);
  }
  case RSC_BOOL: return rsc__hash_final(h ^ (uint64_t)n->u.boolean);
  case RSC_STRING:
  case RSC_BIGINT:
  case RSC_SYMBOL:
    for (uint32_t i = 0; i < n->len; i++) h = (h ^ (uint8_t)n->u.str[i]) * 1099511628211ull;
    return rsc__hash_final(h);
  default: return rsc__hash_final(h ^ (uint64_t)identity(n) * 0x9E3779B97F4A7C15ull);
  }
}

/* Appends keys[i] (stride 1 for Set, 2 for Map) unless an equal key exists;
 * an equal key keeps its position and takes the new value (Map.set). */
static uint32_t dedupe(rsc_decoder *d, rsc_node *items, uint32_t count, uint32_t stride) {
  uint32_t n = 0;
  size_t cap = 16;
  while (cap < (size_t)count * 2) cap *= 2;
  uint32_t *tab = count > 16 ? (uint32_t *)rsc__alloc(d, cap * sizeof(uint32_t)) : NULL;
  if (tab) memset(tab, 0xff, cap * sizeof(uint32_t));
  for (uint32_t i = 0; i < count; i++) {
    rsc_node *k = &items[i * stride];
    uint32_t found = UINT32_MAX;
    if (tab) {
      size_t h = (size_t)value_hash(d->hash_seed, k) & (cap - 1);
      while (tab[h] != UINT32_MAX) {
        if (same_value_zero(&items[tab[h] * stride], k)) {
          found = tab[h];
          break;
        }
        h = (h + 1) & (cap - 1);
      }
      if (found == UINT32_MAX) tab[h] = n;
    } else {
      for (uint32_t j = 0; j < n; j++)
        if (same_value_zero(&items[j * stride], k)) {
          found = j;
          break;
        }
    }
    if (found != UINT32_MAX) {
      if (stride == 2) items[found * 2 + 1] = items[i * 2 + 1];
      continue;
    }
    if (n != i) memcpy(&items[n * stride], &items[i * stride], stride * sizeof *items);
    /* Map.prototype.set and Set.prototype.add store a -0 key as +0 */
    if (items[n * stride].kind == RSC_NUMBER && items[n * stride].u.num == 0)
      items[n * stride].u.num = 0.0;
    n++;
  }
  return n;
}

/* Throws the text built in sb (ok: it was built) as a TypeError, NULs and
 * all, and frees sb. Always false: *thrown is set, or the decoder failed. */
static bool throw_text(rsc_decoder *d, rsc_strbuf *sb, bool ok, rsc_node *thrown) {
  char *m = ok ? rsc__strdup(d, sb->p, sb->len) : NULL;
  size_t n = sb->len;
  rsc__strbuf_free(d, sb);
  if (!m) {
    if (ok) rsc__alloc_fail(d);
    return false;
  }
  *thrown = rsc__type_error(d, m);
  if (thrown->kind == RSC_ERROR) thrown->u.err->message_len = n;
  return false;
}

/* Node's ERR_INVALID_ARG_TYPE for a string given as a Blob's sources: the
 * text cut to 25 UTF-16 units and "..." when longer than 28 (a cut pair
 * leaves its high half), then quoted: '...', or as JSON.stringify writes
 * it when the text holds a "'". */
static bool blob_sources_string(rsc_decoder *d, const char *s, size_t n, rsc_node *thrown) {
  rsc_strbuf t = {NULL, 0, 0}, q = {NULL, 0, 0};
  bool ok = true;
  if (rsc__utf16_units((const uint8_t *)s, n) > 28) {
    size_t u = 0, i = 0;
    while (ok && i < n && u < 25) {
      size_t k = rsc__utf8_char_len((const uint8_t *)s, n, i);
      if (k == 4 && u == 24) {
        uint8_t w[3];
        rsc__wtf8_half((const uint8_t *)s + i, true, w);
        ok = rsc__strbuf_put(d, &t, (const char *)w, 3);
        break;
      }
      ok = rsc__strbuf_put(d, &t, s + i, k);
      u += k == 4 ? 2 : 1;
      i += k;
    }
    ok = ok && rsc__strbuf_put(d, &t, "...", 3);
  } else {
    ok = rsc__strbuf_put(d, &t, s, n);
  }
  static const char head[] = "The \"sources\" argument must be a sequence. Received type string (";
  ok = ok && rsc__strbuf_put(d, &q, head, sizeof head - 1);
  if (ok && !(t.len && memchr(t.p, '\'', t.len))) {
    ok = rsc__strbuf_put(d, &q, "'", 1) && rsc__strbuf_put(d, &q, t.p, t.len) &&
         rsc__strbuf_put(d, &q, "'", 1);
  } else if (ok) {
    ok = rsc__strbuf_put(d, &q, "\"", 1);
    for (size_t i = 0; ok && i < t.len; i++) {
      uint8_t c = (uint8_t)t.p[i];
      char esc[8];
      if (c == '"' || c == '\\') {
        esc[0] = '\\';
        esc[1] = (char)c;
        ok = rsc__strbuf_put(d, &q, esc, 2);
      } else if (c < 0x20) {
        static const char short_esc[] = "btn\0fr";
        if (c >= 8 && c <= 13 && c != 11) {
          esc[0] = '\\';
          esc[1] = short_esc[c - 8];
          ok = rsc__strbuf_put(d, &q, esc, 2);
        } else {
          ok = rsc__strbuf_put(d, &q, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
        }
      } else if (c == 0xED && i + 2 < t.len && (uint8_t)t.p[i + 1] >= 0xA0) { /* lone surrogate */
        uint32_t u = 0xD000 | (((uint32_t)t.p[i + 1] & 0x3F) << 6) | ((uint32_t)t.p[i + 2] & 0x3F);
        ok = rsc__strbuf_put(d, &q, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", u));
        i += 2;
      } else {
        ok = rsc__strbuf_put(d, &q, (const char *)&t.p[i], 1);
      }
    }
    ok = ok && rsc__strbuf_put(d, &q, "\"", 1);
  }
  ok = ok && rsc__strbuf_put(d, &q, ")", 1);
  rsc__strbuf_free(d, &t);
  return throw_text(d, &q, ok, thrown);
}

static bool is_nullish(const rsc_node *v) {
  return v->kind == RSC_NULL || v->kind == RSC_UNDEFINED || v->kind == RSC_NONE;
}

/* The TypeError JavaScript throws reading a property of null or undefined
 * (v is one of them): "Cannot read properties of null (reading 'id')".
 * Always false: the error is thrown, or the decoder failed. */
static bool read_of_nullish(rsc_decoder *d, const rsc_node *v, const char *prop, rsc_node *thrown) {
  char buf[96];
  int n = snprintf(buf, sizeof buf, "Cannot read properties of %s (reading '%s')",
                   v->kind == RSC_NULL ? "null" : "undefined", prop);
  char *m = rsc__strdup(d, buf, (size_t)n);
  if (m) *thrown = rsc__type_error(d, m);
  return false;
}

/* new Blob(model.slice(1), {type: model[0]}) as Node 20 runs it: each part
 * a Blob's or a buffer's bytes, or String(part) as a USVString
 * (jsstring.h); the type String(model[0]) lowercased, "" when undefined or
 * when it holds a character outside U+0020-007E. A part or type that
 * cannot become a string throws, and so do models that are not arrays, as
 * JavaScript would on model.slice. */
static bool make_blob(rsc_decoder *d, rsc_node model, rsc_node *out, rsc_node *thrown) {
  const rsc_node *items = model.u.items;
  uint32_t count = model.len;
  rsc_node *elements = NULL;
  switch (model.kind) {
  case RSC_ARRAY: break;
  case RSC_NULL:
  case RSC_NONE:
  case RSC_UNDEFINED: return read_of_nullish(d, &model, "slice", thrown);
  case RSC_STRING: {
    /* String.prototype.slice(1) works; a string is no sequence of parts */
    size_t skip = model.len ? rsc__utf8_char_len((const uint8_t *)model.u.str, model.len, 0) : 0;
    if (skip == 4) { /* slice(1) cuts a pair: its low half stays */
      char *t = (char *)rsc__alloc(d, model.len - 1);
      if (!t) return false;
      rsc__wtf8_half((const uint8_t *)model.u.str, false, (uint8_t *)t);
      memcpy(t + 3, model.u.str + 4, model.len - 4);
      return blob_sources_string(d, t, model.len - 1, thrown);
    }
    return blob_sources_string(d, model.u.str + skip, model.len - skip, thrown);
  }
  case RSC_BLOB:
    *thrown = rsc__type_error(
        d, "The \"sources\" argument must be a sequence. Received an instance of Blob");
    return false;
  case RSC_BINARY:
    if (model.sub == RSC_ARRAY_BUFFER) {
      *thrown =
          rsc__type_error(d, "The \"sources\" argument must be a sequence. Received an instance of "
                             "ArrayBuffer");
      return false;
    }
    if (model.sub != RSC_DATA_VIEW) {
      /* A typed array's slice is a typed array: its numbers are the parts
       * (and the first the type). */
      size_t w = rsc__binary_elem_size(model.sub);
      count = (uint32_t)(model.len / w);
      elements = rsc__alloc_nodes(d, (size_t)count + 1);
      if (!elements) return false;
      for (uint32_t i = 0; i < count; i++) {
        elements[i] = model;
        elements[i].u.bytes = model.u.bytes + (size_t)i * w;
        elements[i].len = (uint32_t)w; /* a one-element array: its String is the number */
      }
      items = elements;
      break;
    }
    *thrown = rsc__type_error(d, "model.slice is not a function"); /* a DataView has no slice */
    return false;
  default: *thrown = rsc__type_error(d, "model.slice is not a function"); return false;
  }
  rsc_strbuf sb = {NULL, 0, 0};
  bool ok = true;
  for (uint32_t i = 1; ok && i < count; i++) {
    const rsc_node *p = &items[i];
    if (p->kind == RSC_BINARY && !elements)
      ok = rsc__strbuf_put(d, &sb, (const char *)p->u.bytes, p->len);
    else if (p->kind == RSC_BLOB)
      ok = rsc__strbuf_put(d, &sb, (const char *)p->u.blob->bytes, p->u.blob->len);
    else {
      size_t from = sb.len;
      ok = rsc__js_string(d, p, &sb, thrown);
      if (ok && sb.len > from) rsc__usv_in_place(sb.p + from, sb.len - from);
    }
  }
  rsc_node type = rsc__str(RSC_STRING, "", 0);
  if (ok && count > 0 && items[0].kind != RSC_UNDEFINED && items[0].kind != RSC_NONE)
    ok = rsc__js_string_node(d, &items[0], false, &type, thrown);
  if (!ok) {
    rsc__strbuf_free(d, &sb);
    return false;
  }
  rsc_blob *b = (rsc_blob *)rsc__alloc(d, sizeof *b);
  /* Counted against the node limit (16 bytes a node): every "$B" copies
   * its parts, so n references to one blob row would hold n copies. */
  uint8_t *bytes = b ? (uint8_t *)rsc__alloc_nodes(d, sb.len / sizeof(rsc_node) + 1) : NULL;
  if (!bytes) {
    rsc__strbuf_free(d, &sb);
    return false;
  }
  memset(b, 0, sizeof *b);
  if (sb.len) memcpy(bytes, sb.p, sb.len);
  b->bytes = bytes;
  b->len = sb.len;
  rsc__strbuf_free(d, &sb);
  /* The type: lowercased, or "" when it has a character outside U+0020-7E. */
  b->type = "";
  char *lt = rsc__strdup(d, type.u.str, type.len);
  if (!lt) return false;
  bool printable = true;
  for (uint32_t i = 0; i < type.len; i++) {
    uint8_t c = (uint8_t)lt[i];
    if (c < 0x20 || c > 0x7E) printable = false;
    else if (c >= 'A' && c <= 'Z') lt[i] = (char)(c + 32);
  }
  if (printable) {
    b->type = lt;
    b->type_len = type.len;
  }
  *out = rsc__mk(RSC_BLOB);
  out->u.blob = b;
  return true;
}

static const rsc_node *member(const rsc_node *obj, const char *name) {
  return rsc_object_get(obj, name, strlen(name));
}

static bool apply_map(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out, rsc_node *thrown);

/* Every value a reference places goes through here. With
 * RSC_OPT_TRACK_SHARED it notes what now sits in a second place: the value
 * placed and, for the collections built from a model, the values they
 * copied out of it (a Map's keys and values are also the model's). */
bool rsc__apply_map(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out, rsc_node *thrown) {
  if (!apply_map(d, map, model, out, thrown)) return false;
  if (!(d->opt.flags & RSC_OPT_TRACK_SHARED)) return true;
  rsc__note_shared(d, out);
  if (map == MAP_MODEL) return true;
  switch (out->kind) {
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA:
    for (uint32_t i = 0; i < out->len; i++) rsc__note_shared(d, &out->u.items[i]);
    break;
  case RSC_ITERATOR: {
    const rsc_node *a = &out->u.iter->array;
    for (uint32_t i = 0; i < a->len; i++) {
      rsc__note_shared(d, &a->u.items[i]);
      if (model.kind == RSC_MAP || model.kind == RSC_FORMDATA) { /* [key, value] pairs */
        rsc__note_shared(d, &a->u.items[i].u.items[0]);
        rsc__note_shared(d, &a->u.items[i].u.items[1]);
      }
    }
    break;
  }
  case RSC_SERVER_REF:
    rsc__note_shared(d, &out->u.sref->id);
    rsc__note_shared(d, &out->u.sref->bound);
    break;
  case RSC_ERROR: rsc__note_shared(d, &out->u.err->cause); break;
  default: break;
  }
  return true;
}

/* ---- collections of what is not an array ------------------------------------ */

static bool is_primitive(uint8_t kind) {
  switch (kind) {
  case RSC_NULL:
  case RSC_UNDEFINED:
  case RSC_NONE:
  case RSC_BOOL:
  case RSC_NUMBER:
  case RSC_STRING:
  case RSC_BIGINT:
  case RSC_SYMBOL: return true;
  default: return false;
  }
}

/* A TypeError whose message is head + String(v) + tail (String: a
 * Symbol prints as Symbol(key)). false: *thrown set, or the decoder failed. */
static bool error_with_value(rsc_decoder *d, const char *head, const rsc_node *v, const char *tail,
                             rsc_node *thrown) {
  rsc_strbuf sb = {NULL, 0, 0};
  rsc_node ignored;
  bool ok = rsc__strbuf_put(d, &sb, head, strlen(head));
  if (ok && v && v->kind == RSC_SYMBOL)
    ok = rsc__strbuf_put(d, &sb, "Symbol(", 7) && rsc__strbuf_put(d, &sb, v->u.str, v->len) &&
         rsc__strbuf_put(d, &sb, ")", 1);
  else if (ok && v) ok = rsc__js_string(d, v, &sb, &ignored);
  ok = ok && rsc__strbuf_put(d, &sb, tail, strlen(tail));
  return throw_text(d, &sb, ok, thrown);
}

/* s[index] of a string: the UTF-16 unit there as a string (half of a pair
 * as its lone surrogate), undefined past the end. */
static bool string_unit(rsc_decoder *d, const rsc_node *s, size_t index, rsc_node *out) {
  const uint8_t *p = (const uint8_t *)s->u.str;
  size_t u = 0;
  for (size_t i = 0; i < s->len;) {
    size_t k = rsc__utf8_char_len(p, s->len, i);
    if (k == 4 && (u == index || u + 1 == index)) {
      uint8_t w[3];
      rsc__wtf8_half(p + i, u == index, w);
      char *c = rsc__strdup(d, (const char *)w, 3);
      if (!c) return false;
      *out = rsc__str(RSC_STRING, c, 3);
      return true;
    }
    if (u == index) {
      char *c = rsc__strdup(d, (const char *)p + i, k);
      if (!c) return false;
      *out = rsc__str(RSC_STRING, c, k);
      return true;
    }
    u += k == 4 ? 2 : 1;
    i += k;
  }
  *out = rsc__mk(RSC_UNDEFINED);
  return true;
}

/* new Map([..., e, ...]) with e no object. */
static bool not_an_entry(rsc_decoder *d, const rsc_node *e, rsc_node *thrown) {
  return error_with_value(d, "Iterator value ", e, " is not an entry object", thrown);
}

/* React's createFormData reads model[i][0] and model[i][1]: a null or
 * undefined entry throws, any other value reads its members (a
 * primitive has none here: undefined, both). */
static bool form_data_entry(rsc_decoder *d, const rsc_node *e, rsc_node *thrown) {
  return is_nullish(e) ? read_of_nullish(d, e, "0", thrown) : true;
}

/* A string's code points, each a string (a lone surrogate one of its own),
 * as an array: what iterating a string yields. */
static bool code_points(rsc_decoder *d, const rsc_node *str, rsc_node *out) {
  const uint8_t *p = (const uint8_t *)str->u.str;
  rsc_node *items = rsc__alloc_nodes(d, (size_t)str->len + 1);
  if (!items) return false;
  uint32_t n = 0;
  for (size_t i = 0; i < str->len;) {
    size_t k = rsc__utf8_char_len(p, str->len, i);
    char *c = rsc__strdup(d, (const char *)p + i, k);
    if (!c) return false;
    items[n++] = rsc__str(RSC_STRING, c, k);
    i += k;
  }
  *out = rsc__mk(RSC_ARRAY);
  out->u.items = items;
  out->len = n;
  return true;
}

/* new Map(model), new Set(model), createFormData for a model that is no
 * array, as JavaScript runs them: null and undefined give empty Maps and
 * Sets (FormData reads model.length and throws); a string is iterated by
 * code points (a Set of them; a Map throws on its first, no entry
 * object); other primitives and objects are not iterable (V8's message
 * names the value's type), and FormData, reading .length, gets none. */
static bool collection_of_other(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out,
                                rsc_node *thrown) {
  uint8_t kind = map == MAP_MAP ? RSC_MAP : map == MAP_SET ? RSC_SET : RSC_FORMDATA;
  bool nullish = is_nullish(&model);
  if (map == MAP_FORMDATA && nullish) return read_of_nullish(d, &model, "length", thrown);
  if (model.kind == RSC_STRING && model.len > 0 && map != MAP_FORMDATA) {
    const uint8_t *s = (const uint8_t *)model.u.str;
    size_t first = rsc__utf8_char_len(s, model.len, 0);
    if (map == MAP_MAP) {
      char *c = rsc__strdup(d, (const char *)s, first);
      if (!c) return false;
      rsc_node cn = rsc__str(RSC_STRING, c, first);
      return not_an_entry(d, &cn, thrown);
    }
    rsc_node points;
    if (!code_points(d, &model, &points)) return false;
    *out = rsc__mk(RSC_SET);
    out->u.items = points.u.items;
    out->len = dedupe(d, points.u.items, points.len, 1);
    return true;
  }
  if (nullish || map == MAP_FORMDATA || model.kind == RSC_STRING) {
    /* empty (a FormData of anything else but a string: a .length that is
     * undefined, or the string's, whose units give no entries here) */
    if (map == MAP_FORMDATA && model.kind == RSC_STRING && model.len > 0) {
      /* model[i][0] is the unit itself, model[i][1] undefined */
      size_t units = rsc__utf16_units((const uint8_t *)model.u.str, model.len);
      rsc_node *items = rsc__alloc_nodes(d, 2 * units + 1);
      if (!items) return false;
      const uint8_t *s = (const uint8_t *)model.u.str;
      size_t u = 0;
      for (size_t i = 0; i < model.len;) {
        size_t k = rsc__utf8_char_len(s, model.len, i);
        char *c;
        if (k == 4) { /* two units: each a lone surrogate, U+FFFD as a USVString */
          c = rsc__strdup(d, "\xEF\xBF\xBD", 3);
          if (!c) return false;
          items[2 * u] = items[2 * u + 2] = rsc__str(RSC_STRING, c, 3);
          items[2 * u + 1] = items[2 * u + 3] = rsc__str(RSC_STRING, "undefined", 9);
          u += 2;
        } else {
          c = rsc__strdup(d, (const char *)s + i, k);
          if (!c) return false;
          rsc__usv_in_place(c, k);
          items[2 * u] = rsc__str(RSC_STRING, c, k);
          items[2 * u + 1] = rsc__str(RSC_STRING, "undefined", 9);
          u++;
        }
        i += k;
      }
      *out = rsc__mk(RSC_FORMDATA);
      out->u.items = items;
      out->len = (uint32_t)(2 * u);
      return true;
    }
    rsc_node *items = rsc__alloc_nodes(d, 1);
    if (!items) return false;
    *out = rsc__mk(kind);
    out->u.items = items;
    out->len = 0;
    return true;
  }
  const char *what;
  switch (model.kind) {
  case RSC_NUMBER:
    return error_with_value(d, "number ", &model,
                            " is not iterable (cannot read "
                            "property Symbol(Symbol.iterator))",
                            thrown);
  case RSC_BOOL:
    return error_with_value(d, "boolean ", &model,
                            " is not iterable (cannot read "
                            "property Symbol(Symbol.iterator))",
                            thrown);
  case RSC_BIGINT: what = "bigint"; break;
  case RSC_SYMBOL: what = "symbol"; break;
  case RSC_SERVER_REF: what = "function"; break;
  default: what = "object"; break;
  }
  return error_with_value(d, what, NULL,
                          " is not iterable (cannot read property "
                          "Symbol(Symbol.iterator))",
                          thrown);
}

/* typedArray[i]: a number, a BigInt for the 64-bit kinds, undefined past
 * the end (an ArrayBuffer or a DataView has no elements: undefined). */
static bool binary_element(rsc_decoder *d, const rsc_node *ta, size_t i, rsc_node *out) {
  unsigned kind = ta->sub;
  *out = rsc__mk(RSC_UNDEFINED);
  if (kind == RSC_ARRAY_BUFFER || kind >= RSC_DATA_VIEW) return true;
  if (i >= ta->len / rsc__binary_elem_size(kind)) return true;
  double num;
  char big[24];
  int len = rsc__binary_elem_read(kind, ta->u.bytes, i, &num, big);
  if (!len) {
    *out = rsc__num(num);
    return true;
  }
  char *c = rsc__strdup(d, big, (size_t)len);
  if (!c) return false;
  *out = rsc__str(RSC_BIGINT, c, (size_t)len);
  return true;
}

/* What model[Symbol.iterator]() yields for a model that is no array, as an
 * array of its items (a snapshot): a string's code points, a Map's and a
 * FormData's [key, value] entries, a Set's values, a typed array's
 * elements (BigInts for the 64-bit ones). Anything else has no
 * Symbol.iterator: the TypeError JavaScript throws. */
static bool iterated_items(rsc_decoder *d, const rsc_node *model, rsc_node *out, rsc_node *thrown) {
  size_t n = 0;
  rsc_node *items = NULL;
  switch (model->kind) {
  case RSC_STRING: return code_points(d, model, out);
  case RSC_SET:
    n = model->len;
    items = rsc__alloc_nodes(d, n + 1);
    if (!items) return false;
    if (n) memcpy(items, model->u.items, n * sizeof *items);
    break;
  case RSC_MAP:
  case RSC_FORMDATA:
    n = model->len / 2;
    items = rsc__alloc_nodes(d, 3 * n + 1);
    if (!items) return false;
    for (size_t i = 0; i < n; i++) {
      rsc_node *pair = items + n + 2 * i;
      pair[0] = model->u.items[2 * i];
      pair[1] = model->u.items[2 * i + 1];
      items[i] = rsc__mk(RSC_ARRAY);
      items[i].u.items = pair;
      items[i].len = 2;
    }
    break;
  case RSC_BINARY: {
    unsigned kind = model->sub;
    if (kind == RSC_ARRAY_BUFFER || kind >= RSC_DATA_VIEW) goto not_iterable;
    n = model->len / rsc__binary_elem_size(kind);
    items = rsc__alloc_nodes(d, n + 1);
    if (!items) return false;
    for (size_t i = 0; i < n; i++)
      if (!binary_element(d, model, i, &items[i])) return false;
    break;
  }
  default:
  not_iterable:
    *thrown = rsc__type_error(d, "model[Symbol.iterator] is not a function");
    return false;
  }
  *out = rsc__mk(RSC_ARRAY);
  out->u.items = items;
  out->len = (uint32_t)n;
  return true;
}

static bool apply_map(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out,
                      rsc_node *thrown) {
  switch (map) {
  case MAP_MODEL: *out = model; return true;
  case MAP_MAP:
  case MAP_SET:
  case MAP_FORMDATA: {
    if (model.kind != RSC_ARRAY) return collection_of_other(d, map, model, out, thrown);
    uint32_t stride = map == MAP_SET ? 1 : 2;
    /* A snapshot, as new Map(model) takes one: later fills of the outlined
     * array do not reach it (docs/spec/FLIGHT-PROTOCOL.md 6.4). */
    rsc_node *items = rsc__alloc_nodes(d, (size_t)model.len * stride + 1);
    if (!items) return false;
    for (uint32_t i = 0; i < model.len; i++) {
      const rsc_node *e = &model.u.items[i];
      if (stride == 1) {
        items[i] = *e;
        continue;
      }
      if (map == MAP_MAP && is_primitive(e->kind)) {
        /* new Map takes objects as entries, any object (e[0], e[1]) */
        not_an_entry(d, e, thrown);
        return false;
      }
      if (map == MAP_FORMDATA && !form_data_entry(d, e, thrown)) return false;
      rsc_node k = rsc__mk(RSC_UNDEFINED), v = rsc__mk(RSC_UNDEFINED), tmp;
      if (e->kind == RSC_STRING) { /* a string's [0] and [1]: its first two units */
        if (!string_unit(d, e, 0, &k) || !string_unit(d, e, 1, &v)) return false;
      } else if (e->kind == RSC_BINARY) { /* a typed array's first two elements */
        if (!binary_element(d, e, 0, &k) || !binary_element(d, e, 1, &v)) return false;
      } else {
        if (rsc__step(d, e, (rsc_key){"0", 1}, &tmp)) k = tmp;
        if (rsc__step(d, e, (rsc_key){"1", 1}, &tmp)) v = tmp;
      }
      if (map == MAP_FORMDATA) {
        /* FormData.append(name, value): USVStrings, unless value is a Blob */
        if (!rsc__js_string_node(d, &k, true, &k, thrown)) return false;
        if (v.kind != RSC_BLOB && !rsc__js_string_node(d, &v, true, &v, thrown)) return false;
      }
      items[2 * i] = k;
      items[2 * i + 1] = v;
    }
    uint32_t n = map == MAP_FORMDATA ? model.len : dedupe(d, items, model.len, stride);
    *out = rsc__mk(map == MAP_MAP ? RSC_MAP : map == MAP_SET ? RSC_SET : RSC_FORMDATA);
    out->u.items = items;
    out->len = n * stride;
    return true;
  }
  case MAP_BLOB: return make_blob(d, model, out, thrown);
  case MAP_ITERATOR: {
    /* model[Symbol.iterator]() */
    if (model.kind == RSC_NULL) {
      *thrown = rsc__type_error(d, "object null is not iterable (cannot read property "
                                   "Symbol(Symbol.iterator))");
      return false;
    }
    if (model.kind == RSC_UNDEFINED || model.kind == RSC_NONE) {
      *thrown = rsc__type_error(d, "undefined is not iterable (cannot read property "
                                   "Symbol(Symbol.iterator))");
      return false;
    }
    if (model.kind == RSC_ITERATOR) { /* an iterator's own iterator is itself */
      *out = model;
      return true;
    }
    rsc_node array = model;
    if (model.kind != RSC_ARRAY && !iterated_items(d, &model, &array, thrown)) return false;
    rsc_iter *it = (rsc_iter *)rsc__alloc(d, sizeof *it);
    if (!it) return false;
    it->array = array;
    *out = rsc__mk(RSC_ITERATOR);
    out->u.iter = it;
    return true;
  }
  case MAP_ERROR_DEV: {
    /* resolveErrorDev reads errorInfo.name, then asks "cause" in errorInfo */
    switch (model.kind) {
    case RSC_NULL:
    case RSC_UNDEFINED:
    case RSC_NONE: return read_of_nullish(d, &model, "name", thrown);
    case RSC_STRING:
    case RSC_NUMBER:
    case RSC_BOOL:
    case RSC_BIGINT:
    case RSC_SYMBOL:
      return error_with_value(d, "Cannot use 'in' operator to search for 'cause' in ", &model, "",
                              thrown);
    default: break;
    }
    rsc_node e = rsc__error_node(d, rsc__dev_default_error, NULL);
    if (e.kind != RSC_ERROR) return false;
    const rsc_node *msg = member(&model, "message");
    if (msg && msg->kind == RSC_STRING && msg->len > 0) {
      if (!(e.u.err->message = c_string(d, msg))) return false;
      e.u.err->message_len = msg->len;
    } else if (msg && msg->kind != RSC_STRING && msg->kind != RSC_NULL &&
               !(msg->kind == RSC_BOOL && !msg->u.boolean) &&
               !(msg->kind == RSC_NUMBER && (msg->u.num == 0 || isnan(msg->u.num)))) {
      rsc_node text;
      if (!rsc__js_string_node(d, msg, false, &text, thrown)) return false;
      e.u.err->message = text.u.str;
      e.u.err->message_len = text.len;
    }
    const rsc_node *name = member(&model, "name");
    if (name && name->kind == RSC_STRING && !(e.u.err->name = c_string(d, name))) return false;
    const rsc_node *env = member(&model, "env");
    if (env && env->kind == RSC_STRING && !(e.u.err->env = c_string(d, env))) return false;
    const rsc_node *cause = member(&model, "cause");
    if (cause) e.u.err->cause = *cause;
    *out = e;
    return true;
  }
  case MAP_MODEL_THEN:
    *out = model.kind == RSC_SERVER_REF || model.kind == RSC_FUNCTION ? rsc__mk(RSC_NULL) : model;
    return true;
  case MAP_SERVER_REF_THEN: *out = rsc__mk(RSC_NULL); return true;
  case MAP_SERVER_REF: {
    /* loadServerReference reads metaData.id: a TypeError on null and
     * undefined, null for an id that is no string */
    if (is_nullish(&model)) return read_of_nullish(d, &model, "id", thrown);
    rsc_node id, bound = rsc__mk(RSC_UNDEFINED);
    if (!rsc__step(d, &model, (rsc_key){"id", 2}, &id) || id.kind != RSC_STRING) {
      *out = rsc__mk(RSC_NULL);
      return true;
    }
    rsc_server_ref *s = (rsc_server_ref *)rsc__alloc(d, sizeof *s);
    if (!s) return false;
    s->metadata = model;
    s->id = id;
    rsc_node tmp;
    if (rsc__step(d, &model, (rsc_key){"bound", 5}, &tmp)) bound = tmp;
    s->bound = bound;
    *out = rsc__mk(RSC_SERVER_REF);
    out->u.sref = s;
    return true;
  }
  case MAP_PROTO: {
    /* applyConstructor: Object.setPrototypeOf(parent, model.prototype),
     * and the key is deleted. The parent's prototype is not kept (nothing
     * here reads inherited properties); what JavaScript throws is. Module
     * exports, server actions and "$E" functions are functions, with a
     * prototype or not depending on the host: taken as fine. */
    if (is_nullish(&model)) return read_of_nullish(d, &model, "prototype", thrown);
    *out = rsc__mk(RSC_UNDEFINED);
    if (model.kind == RSC_CLIENT_REF || model.kind == RSC_SERVER_REF || model.kind == RSC_FUNCTION)
      return true;
    rsc_node proto = rsc__mk(RSC_UNDEFINED);
    const rsc_node *p = model.kind == RSC_OBJECT ? member(&model, "prototype") : NULL;
    if (p) proto = *p;
    switch (proto.kind) {
    case RSC_STRING:
    case RSC_NUMBER:
    case RSC_BOOL:
    case RSC_BIGINT:
    case RSC_SYMBOL:
    case RSC_UNDEFINED:
    case RSC_NONE:
      return error_with_value(d, "Object prototype may only be an Object or null: ", &proto, "",
                              thrown);
    default: return true;
    }
  }
  default:
    *out = rsc__mk(RSC_UNDEFINED); /* the key is deleted */
    return true;
  }
}
