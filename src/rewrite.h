/*
 * rewrite.h - the rewriter's row hook, for the stages that put rewritten
 * rows back where they came from (html_rewrite.c: the scripts of a page).
 */
#ifndef RSC_REWRITE_H
#define RSC_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

/* Called once per input row, in order, instead of the rewriter's write:
 * the row's bytes in the input stream are [in_start, in_end) (offsets
 * across every feed; a row's newline, when it has one, is inside the span)
 * and out[0..out_len) is what replaces them (the same bytes when changed is
 * false). Bytes outside any row (none in a well-formed payload) are not
 * reported. Returns 0 to go on, non-zero to stop with RSC_ERR_USER. */
typedef int (*rsc__rewrite_row_fn)(void *ctx, uint64_t in_start, uint64_t in_end, const char *out,
                                   size_t out_len, bool changed);

/* Routes rows to fn instead of write; call before the first feed. */
void rsc__rewriter_set_row_fn(rsc_rewriter *rw, rsc__rewrite_row_fn fn, void *ctx);

#endif
