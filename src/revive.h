/* revive.h - the reviveModel walk: JSON nodes -> typed values, in place.
 * Knows no byte stream: it sees one parsed row at a time. */
#ifndef RSC_REVIVE_H
#define RSC_REVIVE_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Walks *root in place (React's parseModel after JSON.parse). Returns true,
 * or false when the walk threw: *thrown holds the error value (or the
 * decoder failed: check d->err). */
bool rsc__revive(rsc_decoder *d, rsc_node *root, rsc_node *thrown);

/* Whether the walk has anything to do in n: a "$" string, or a container
 * the JSON stage marked (a "$" string or a "__proto__" key below it). */
static inline bool rsc__needs_revive(const rsc_node *n) {
  if (n->kind == RSC_STRING) return (n->flags & NF_DOLLAR) != 0;
  return (n->kind == RSC_ARRAY || n->kind == RSC_OBJECT) && (n->flags & NF_WALK);
}

/* The element the walk makes of a tuple ["$", type, key, props, ...] that
 * holds nothing else to revive: no "$" string but its marker, no
 * "__proto__" key. Nothing can block or throw in such a tuple, so the
 * result is the plain element whenever the walk would meet it; the JSON
 * stage builds it as the tuple's array closes (production model rows; see
 * json_shim.cpp), and the walk never enters it. slots: the n slots after
 * the marker. false: out of memory. */
bool rsc__plain_element(rsc_decoder *d, rsc_node *slots, uint32_t n, rsc_node *out);

/* "$<id>" (lowercase hex, no path) naming a chunk already fulfilled whose
 * value reaches nothing unread: a text or binary row that has arrived, or a
 * model row read already. A fulfilled chunk never changes, so the walk
 * would place this very value here (getOutlinedModel on an initialized
 * chunk, in production, maps it as it is). The JSON stage places it while
 * parsing production model rows, so a row whose only references are such
 * values needs no walk, and its elements are built plain.
 * true: *out is the value; false: s takes the walk as usual. */
bool rsc__arrived_value(rsc_decoder *d, const char *s, uint32_t n, rsc_node *out);

/* A lazy wrapper node around c. */
rsc_node rsc__lazy(rsc_chunk *c);

/* JavaScript's parseInt(s, 16) as a chunk key; NaN maps to a key no row
 * can have. */
int64_t rsc__parse_ref_id(const char *s, size_t len);

/* The text a development "$Y" (a value React omitted) revives to: one
 * copy, so that a writer knows the string by its pointer. */
extern const char rsc__omitted_message[];

#ifdef __cplusplus
}
#endif
#endif
