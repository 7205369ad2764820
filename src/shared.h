/* shared.h - the values references placed (RSC_OPT_TRACK_SHARED). */
#ifndef RSC_SHARED_H
#define RSC_SHARED_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A reference placed v (RSC_OPT_TRACK_SHARED): v's identity, if it has
 * one, joins the set rsc_decoder_shares reads. */
void rsc__note_shared_slow(rsc_decoder *d, uintptr_t identity);
static inline void rsc__note_shared(rsc_decoder *d, const rsc_node *v) {
  if (!(d->opt.flags & RSC_OPT_TRACK_SHARED)) return;
  uintptr_t id = rsc_node_identity(v);
  if (id) rsc__note_shared_slow(d, id);
}

/* Whether a reference placed a value of this identity (with
 * RSC_OPT_TRACK_SHARED, which RSC_OPT_KEEP_ROWS sets; otherwise true). */
bool rsc__shared_has(const rsc_decoder *d, uintptr_t identity);

#ifdef __cplusplus
}
#endif
#endif
