/* settle.h - the read-through at finish (settle.c): initialises every
 * chunk the root reaches, so output stages only read a finished tree. */
#ifndef RSC_SETTLE_H
#define RSC_SETTLE_H

#include "internal.h"

/* Walks the root as the dump does, initialising lazily parsed chunks on the
 * way (a consumer's first read), without printing. */
void rsc__force(rsc_decoder *d);
/* For tests and fuzzing: the chunks the root reaches (through every
 * container, whatever the read-through's flags say) that are still unparsed
 * rows; reads nothing. After a successful finish it must be 0: the
 * read-through skipped nothing it had to read. SIZE_MAX: out of memory. */
size_t rsc__unread_reachable(rsc_decoder *d);
/* For tests and fuzzing, with RSC_OPT_TRACK_SHARED: the values the root
 * reaches more than once (same identity) that rsc_decoder_shares does not
 * name, other than a chunk's value met only as that. A converter that
 * remembers just those two kinds (the Python binding's loads) would make
 * each of these twice. Must be 0; SIZE_MAX: out of memory. */
size_t rsc__unshared_repeats(rsc_decoder *d);

#endif
