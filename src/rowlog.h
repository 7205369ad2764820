/* rowlog.h - what RSC_OPT_KEEP_ROWS keeps for the Flight writer
 * (encode.c): the rows in order, and the reference forms that made values. */
#ifndef RSC_ROWLOG_H
#define RSC_ROWLOG_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The identity the writer knows a value by: rsc_node_identity, and the
 * client and server references and errors, which are objects too. */
static inline uintptr_t rsc__writer_identity(const rsc_node *n) {
  switch (n->kind) {
  case RSC_CLIENT_REF: return (uintptr_t)n->u.cref;
  case RSC_SERVER_REF: return (uintptr_t)n->u.sref;
  case RSC_ERROR: return (uintptr_t)n->u.err;
  /* rsc_node_identity's, inline (the writer asks for every container) */
  case RSC_ARRAY:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: return (uintptr_t)n->u.items;
  case RSC_OBJECT: return (uintptr_t)n->u.members;
  case RSC_ELEMENT: return (uintptr_t)n->u.el;
  default: return rsc_node_identity(n);
  }
}

/* Notes a row (its payload p, n bytes, is copied for the tags whose text
 * the values do not hold); partial: a piece of a 'b' row with more to
 * come, which the next call continues. false: out of memory (the error
 * is set). */
bool rsc__rowlog_row(rsc_decoder *d, int64_t id, bool no_id, bool in_stream, uint8_t tag,
                     const uint8_t *p, size_t n, bool partial);
/* Notes that the form ("$Q" for 'Q') naming row id made v; for a
 * reference that waited, the form its map stands for (nothing for
 * MAP_MODEL). */
void rsc__rowlog_form_id(rsc_decoder *d, char form, int64_t id, const rsc_node *v);
void rsc__rowlog_map_form(rsc_decoder *d, uint8_t map, int64_t id, const rsc_node *v);
/* Notes a development element's tuple slots from the owner on. */
/* Notes the chunk of a lazy revive made of an element (blocked, or
 * errored): the writer asks whether it fulfilled (encode.c). */
void rsc__rowlog_element_lazy(rsc_decoder *d, struct rsc_chunk *c);
void rsc__rowlog_tail(rsc_decoder *d, const struct rsc_element *el, const rsc_node *slots,
                      uint32_t n);
/* Notes the value of a "__proto__" member before revive deletes it (with
 * RSC_OPT_KEEP_ROWS; otherwise nothing). */
void rsc__rowlog_proto(rsc_decoder *d, const rsc_member *m);

#ifdef __cplusplus
}
#endif
#endif
