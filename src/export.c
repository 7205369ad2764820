/* export.c - bulk views of values for bindings (the Python binding's
 * converter): one call describes a value, or every child of a container,
 * instead of one accessor call per field. Read-only, like the accessors in
 * node.c, except rsc_node_pin, which copies one node into the arena. */
#include "chunks.h"
#include "value.h"

void rsc_node_view(const rsc_node *n, rsc_view *v) {
  /* Every field is written once (no memset): converters call this per value. */
  v->node = n;
  v->key = NULL;
  v->key_len = 0;
  v->boolean = 0;
  v->number = 0;
  v->str = NULL;
  v->str_len = 0;
  v->bytes = NULL;
  v->bytes_len = 0;
  v->len = 0;
  v->sub = 0;
  v->identity = 0;
  if (!n) {
    v->kind = RSC_NONE;
    return;
  }
  v->kind = rsc__kind(n);
  switch (v->kind) {
  case RSC_BOOL: v->boolean = rsc__boolean(n); break;
  case RSC_NUMBER: v->number = rsc__number(n); break;
  case RSC_STRING:
  case RSC_BIGINT:
  case RSC_DATE:
  case RSC_SYMBOL:
  case RSC_TEMP_REF:
  case RSC_FUNCTION: {
    uint32_t len;
    v->str = rsc__text(n, &len);
    v->str_len = len;
    break;
  }
  case RSC_BLOB:
    v->str = n->u.blob->type;
    v->str_len = n->u.blob->type_len;
    v->bytes = n->u.blob->bytes;
    v->bytes_len = n->u.blob->len;
    v->identity = (uintptr_t)n->u.blob;
    break;
  case RSC_BINARY:
    v->sub = n->sub;
    v->bytes = n->u.bytes;
    v->bytes_len = n->len;
    v->identity = (uintptr_t)n->u.bytes;
    break;
  case RSC_ERROR:
    v->str = n->u.err->message;
    v->str_len = n->u.err->message_len;
    break;
  case RSC_STREAM:
    v->sub = n->u.stream->kind;
    v->len = rsc_stream_len(n);
    v->identity = (uintptr_t)n->u.stream;
    break;
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA:
    v->len = rsc__items_len(n);
    v->identity = rsc__identity(n);
    break;
  case RSC_ITERATOR:
    v->len = rsc__items_len(rsc__iter_array(n));
    v->identity = (uintptr_t)n->u.iter;
    break;
  case RSC_OBJECT:
    v->len = rsc__members_len(n);
    v->identity = rsc__identity(n);
    break;
  case RSC_ELEMENT: v->identity = (uintptr_t)n->u.el; break;
  default: break;
  }
}

size_t rsc_node_views(const rsc_node *n, size_t start, rsc_view *out, size_t cap) {
  if (!n) return 0;
  size_t total = 0, w = 0;
  switch (rsc__kind(n)) {
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA:
  case RSC_ITERATOR:
  case RSC_OBJECT: {
    rsc__iter it;
    for (rsc__iter_begin(&it, n); rsc__iter_next(&it);) {
      if (it.index <= start) continue;
      if (w == cap) break; /* the rest is only counted */
      rsc_node_view(it.val, &out[w]);
      if (it.key) {
        out[w].key = it.key;
        out[w].key_len = it.klen;
      }
      w++;
    }
    if (rsc__kind(n) == RSC_OBJECT) return w == cap ? rsc__members_len(n) : it.index;
    return rsc__items_len(rsc__kind(n) == RSC_ITERATOR ? rsc__iter_array(n) : n);
  }
  case RSC_STREAM: {
    const rsc_stream *s = n->u.stream;
    if (s->kind == RSC_STREAM_TEXT || s->kind == RSC_STREAM_BYTES) {
      total = s->len;
      for (size_t i = start; i < total && w < cap; i++) rsc_node_view(&s->items[i], &out[w++]);
      return total;
    }
    total = rsc_stream_len(n);
    for (size_t i = start; i < total && w < cap; i++)
      rsc_node_view(rsc__slot_value(s->slots[i]), &out[w++]);
    return total;
  }
  default: return 0;
  }
}

const rsc_node *rsc_error_digest_node(const rsc_node *n) {
  if (!n || n->kind != RSC_ERROR) return NULL;
  const rsc_node *dg = &n->u.err->digest;
  return dg->kind == RSC_NONE || dg->kind == RSC_UNDEFINED ? NULL : dg;
}

const rsc_node *rsc_node_pin(rsc_decoder *d, const rsc_node *n) {
  if (!d || !n) return NULL;
  rsc_node *copy = rsc__alloc_nodes(d, 1);
  if (!copy) return NULL;
  *copy = *n;
  return copy;
}
