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

/* The element the walk makes of a tuple ["$", type, key, props, ...] that
 * holds nothing else to revive: no "$" string but its marker, no
 * "__proto__" key. Nothing can block or throw in such a tuple, so the
 * result is the plain element whenever the walk would meet it; the JSON
 * stage builds it as the tuple's array closes (production model rows; see
 * json_shim.cpp), and the walk never enters it. false: out of memory. */
bool rsc__plain_element(rsc_decoder *d, rsc_node *tuple, uint32_t len, rsc_node *out);

/* Follows a path and applies a map function (React's fulfillReference tail
 * and getOutlinedModel's map step). Returns false on a throw. */
bool rsc__apply_map(rsc_decoder *d, uint8_t map, rsc_node value, rsc_node *out,
                    rsc_node *thrown);

/* Steps from value into key (own properties of plain objects, arrays and
 * elements only). false: "Invalid reference." */
bool rsc__step(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *out);

/* A lazy wrapper node around c. */
rsc_node rsc__lazy(rsc_chunk *c);

/* JavaScript's parseInt(s, 16) as a chunk key; NaN maps to a key no row
 * can have. */
int64_t rsc__parse_ref_id(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
