/* collections.h - React's map functions on a referenced value. */
#ifndef RSC_COLLECTIONS_H
#define RSC_COLLECTIONS_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Applies the map function `map` (ref_map: model, Map, Set, FormData, Blob,
 * iterator, ...) to the value a reference reached, as React's
 * fulfillReference tail and getOutlinedModel's map step do. Returns false
 * on a throw (*thrown), or when the decoder failed (d->err). */
bool rsc__apply_map(rsc_decoder *d, uint8_t map, rsc_node value, rsc_node *out, rsc_node *thrown);

#ifdef __cplusplus
}
#endif
#endif
