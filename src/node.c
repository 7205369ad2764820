/* node.c - public accessors for values. Every accessor is safe
 * on NULL and on the wrong kind: it returns 0, NULL or RSC_NONE. */
#include "value.h"

const char rsc__element_symbol[] = RSC_ELEMENT_SYMBOL;

const char rsc__closed_message[] = "Connection closed.";

rsc_kind rsc_node_kind(const rsc_node *n) { return n ? rsc__kind(n) : RSC_NONE; }

const char *rsc_kind_name(rsc_kind k) {
  static const char *const names[] = {
      "none",       "null",       "bool",          "number", "string",  "undefined", "bigint",
      "date",       "symbol",     "array",         "object", "element", "lazy",      "promise",
      "client_ref", "server_ref", "temporary_ref", "map",    "set",     "formdata",  "blob",
      "iterator",   "binary",     "stream",        "error",  "function"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "none";
}

int rsc_node_bool(const rsc_node *n) { return n && rsc__kind(n) == RSC_BOOL ? rsc__boolean(n) : 0; }
double rsc_node_number(const rsc_node *n) {
  return n && rsc__kind(n) == RSC_NUMBER ? rsc__number(n) : 0;
}

const char *rsc_node_string(const rsc_node *n, size_t *len) {
  if (len) *len = 0;
  if (!n) return NULL;
  switch (rsc__kind(n)) {
  case RSC_STRING:
  case RSC_BIGINT:
  case RSC_DATE:
  case RSC_SYMBOL:
  case RSC_TEMP_REF:
  case RSC_FUNCTION: {
    uint32_t n_len;
    const char *s = rsc__text(n, &n_len);
    if (len) *len = n_len;
    return s;
  }
  case RSC_BLOB:
    if (len) *len = n->u.blob->type_len;
    return n->u.blob->type;
  default: return NULL;
  }
}

size_t rsc_node_len(const rsc_node *n) {
  if (!n) return 0;
  switch (rsc__kind(n)) {
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: return rsc__items_len(n);
  case RSC_ITERATOR: return rsc__items_len(rsc__iter_array(n));
  case RSC_OBJECT: return rsc__members_len(n);
  default: return 0;
  }
}

const rsc_node *rsc_node_at(const rsc_node *n, size_t i) {
  if (!n) return NULL;
  switch (rsc__kind(n)) {
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA:
  case RSC_ITERATOR: return rsc__item(n, i);
  default: return NULL;
  }
}

/* The i-th visible member, as an iterator positioned on it. */
static bool visible_member(const rsc_node *n, size_t i, rsc__iter *it) {
  if (!n || rsc__kind(n) != RSC_OBJECT) return false;
  for (rsc__iter_members(it, n); rsc__next_member(it);)
    if (it->index - 1 == i) return true;
  return false;
}

const char *rsc_object_key(const rsc_node *n, size_t i, size_t *len) {
  rsc__iter it;
  bool found = visible_member(n, i, &it);
  if (len) *len = found ? it.klen : 0;
  return found ? it.key : NULL;
}

const rsc_node *rsc_object_value(const rsc_node *n, size_t i) {
  rsc__iter it;
  return visible_member(n, i, &it) ? it.val : NULL;
}

const rsc_node *rsc_object_get(const rsc_node *n, const char *key, size_t len) {
  if (!n || rsc__kind(n) != RSC_OBJECT || !key) return NULL;
  rsc__iter it;
  for (rsc__iter_members(&it, n); rsc__next_member(&it);)
    if (it.klen == len && memcmp(it.key, key, len) == 0) return it.val;
  return NULL;
}

#define IS_EL(n) ((n) && rsc__kind(n) == RSC_ELEMENT)
const rsc_node *rsc_element_type(const rsc_node *n) { return IS_EL(n) ? rsc__el_type(n) : NULL; }
const rsc_node *rsc_element_key(const rsc_node *n) { return IS_EL(n) ? rsc__el_key(n) : NULL; }
const rsc_node *rsc_element_props(const rsc_node *n) { return IS_EL(n) ? rsc__el_props(n) : NULL; }
const rsc_node *rsc_element_owner(const rsc_node *n) {
  const rsc_node *o = IS_EL(n) ? rsc__el_owner(n) : NULL;
  return o && rsc__kind(o) != RSC_NULL ? o : NULL;
}

const rsc_chunk *rsc_node_chunk(const rsc_node *n) {
  return n && (n->kind == RSC_LAZY || n->kind == RSC_PROMISE) ? n->u.chunk : NULL;
}

#define CR(n) ((n) && (n)->kind == RSC_CLIENT_REF ? (n)->u.cref : NULL)
const rsc_node *rsc_client_ref_metadata(const rsc_node *n) {
  return CR(n) ? &CR(n)->metadata : NULL;
}
const rsc_node *rsc_client_ref_id(const rsc_node *n) { return CR(n) ? &CR(n)->id : NULL; }
const rsc_node *rsc_client_ref_chunks(const rsc_node *n) { return CR(n) ? &CR(n)->chunks : NULL; }
const rsc_node *rsc_client_ref_name(const rsc_node *n) { return CR(n) ? &CR(n)->name : NULL; }
int rsc_client_ref_is_async(const rsc_node *n) { return CR(n) ? CR(n)->is_async : 0; }
const rsc_node *rsc_client_ref_import_map(const rsc_node *n) {
  return CR(n) && CR(n)->import_map.kind != RSC_NONE ? &CR(n)->import_map : NULL;
}
int rsc_client_ref_is_parcel(const rsc_node *n) { return CR(n) ? CR(n)->is_parcel : 0; }

#define SR(n) ((n) && (n)->kind == RSC_SERVER_REF ? (n)->u.sref : NULL)
const rsc_node *rsc_server_ref_id(const rsc_node *n) { return SR(n) ? &SR(n)->id : NULL; }
const rsc_node *rsc_server_ref_bound(const rsc_node *n) { return SR(n) ? &SR(n)->bound : NULL; }

const uint8_t *rsc_node_bytes(const rsc_node *n, size_t *len) {
  if (len) *len = 0;
  if (!n) return NULL;
  if (n->kind == RSC_BINARY) {
    if (len) *len = n->len;
    return n->u.bytes;
  }
  if (n->kind == RSC_BLOB) {
    if (len) *len = n->u.blob->len;
    return n->u.blob->bytes;
  }
  return NULL;
}

rsc_binary_kind rsc_node_binary_kind(const rsc_node *n) {
  return n && n->kind == RSC_BINARY ? (rsc_binary_kind)n->sub : RSC_ARRAY_BUFFER;
}

const char *rsc_binary_kind_name(rsc_binary_kind k) {
  static const char *const names[] = {
      "ArrayBuffer",   "Int8Array",      "Uint8Array",  "Uint8ClampedArray", "Int16Array",
      "Uint16Array",   "Int32Array",     "Uint32Array", "Float32Array",      "Float64Array",
      "BigInt64Array", "BigUint64Array", "DataView"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "ArrayBuffer";
}

const char *rsc_error_message(const rsc_node *n) {
  return n && n->kind == RSC_ERROR ? n->u.err->message : NULL;
}

int rsc_error_closed(const rsc_node *n) {
  return n && n->kind == RSC_ERROR && n->u.err->message == rsc__closed_message;
}

const char *rsc_error_digest(const rsc_node *n) {
  return n && n->kind == RSC_ERROR && n->u.err->digest.kind == RSC_STRING ? n->u.err->digest.u.str
                                                                          : NULL;
}

#define ST(n) ((n) && (n)->kind == RSC_STREAM ? (n)->u.stream : NULL)
rsc_stream_kind rsc_stream_kind_of(const rsc_node *n) {
  return ST(n) ? (rsc_stream_kind)ST(n)->kind : RSC_STREAM_TEXT;
}

/* For iterables an item is a fulfilled result slot's value, in order. */
size_t rsc_stream_len(const rsc_node *n) {
  const rsc_stream *s = ST(n);
  if (!s) return 0;
  if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) return s->len;
  size_t c = 0;
  for (uint32_t i = 0; i < s->len; i++) {
    const rsc_chunk *ch = s->slots[i];
    if (ch->state != CS_FULFILLED) break;
    const rsc_node *done = rsc_object_get(&ch->value, "done", 4);
    if (done && done->kind == RSC_BOOL && done->u.boolean) break;
    c++;
  }
  return c;
}

/* An iterator result whose value revived to undefined has no "value"
 * member (the walk deletes it): its value is undefined, not missing. */
static const rsc_node undefined_node = {RSC_UNDEFINED, 0, 0, 0, {0}};

const rsc_node *rsc__slot_value(const rsc_chunk *c) {
  const rsc_node *v = rsc_object_get(&c->value, "value", 5);
  return v ? v : &undefined_node;
}

const rsc_node *rsc_stream_at(const rsc_node *n, size_t i) {
  const rsc_stream *s = ST(n);
  if (!s || i >= rsc_stream_len(n)) return NULL;
  if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) return &s->items[i];
  return rsc__slot_value(s->slots[i]);
}

rsc_stream_end rsc_stream_end_of(const rsc_node *n) {
  const rsc_stream *s = ST(n);
  if (!s) return RSC_STREAM_OPEN;
  if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) return (rsc_stream_end)s->end;
  size_t i = rsc_stream_len(n);
  if (i < s->len) {
    const rsc_chunk *c = s->slots[i];
    if (c->state == CS_FULFILLED) return RSC_STREAM_DONE;
    if (c->state == CS_REJECTED) return RSC_STREAM_ERRORED;
    return RSC_STREAM_OPEN;
  }
  return s->closed ? RSC_STREAM_DONE : RSC_STREAM_OPEN;
}

const rsc_node *rsc_stream_end_value(const rsc_node *n) {
  const rsc_stream *s = ST(n);
  if (!s) return NULL;
  if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES)
    return s->end == RSC_STREAM_ERRORED ? &s->end_value : NULL;
  size_t i = rsc_stream_len(n);
  if (i >= s->len) return NULL;
  const rsc_chunk *c = s->slots[i];
  if (c->state == CS_FULFILLED) return rsc__slot_value(c);
  if (c->state == CS_REJECTED) return &c->reason;
  return NULL;
}

uintptr_t rsc_node_identity(const rsc_node *n) { return n ? rsc__identity(n) : 0; }
