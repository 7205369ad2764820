/* dump.h - the canonical dump (spec CANONICAL-DUMP.md) and the read-through
 * that initialises every chunk the root reaches. */
#ifndef RSC_DUMP_H
#define RSC_DUMP_H

#include "internal.h"

/* Walks the root as the dump does, initialising lazily parsed chunks on the
 * way (a consumer's first read), without printing. */
void rsc__force(rsc_decoder *d);

#endif
