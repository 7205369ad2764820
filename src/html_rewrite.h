/*
 * html_rewrite.h - a Flight payload rewritten inside the HTML page that
 * inlines it (html_rewrite.c). rsc_rewrite_html (rscflight.h) runs the
 * rewriter of rewrite.c over it; the stage itself takes any source of
 * rewritten rows, so that it can be tested row by row.
 */
#ifndef RSC_HTML_REWRITE_H
#define RSC_HTML_REWRITE_H

#include <stddef.h>

#include "rewrite.h"
#include "rscflight.h"

/* Rewrites payload[0..len) and reports every row to fn(fn_ctx, ...), in
 * order, as rsc__rewrite_row_fn says. Returns RSC_OK, or an error with
 * *err filled (its offset in the payload); RSC_ERR_USER when fn stopped
 * it. */
typedef rsc_status (*rsc__html_rows_fn)(void *ctx, const char *payload, size_t len,
                                        rsc__rewrite_row_fn fn, void *fn_ctx, rsc_error *err);

/* rsc_rewrite_html with the rows coming from rows(rows_ctx, ...) and the
 * memory from alloc (NULL: libc); *out is released through alloc. */
rsc_status rsc__html_rewrite(const char *html, size_t len, rsc_html_flavor flavor,
                             rsc__html_rows_fn rows, void *rows_ctx, const rsc_alloc *alloc,
                             char **out, size_t *out_len, rsc_html_rewrite_info *info,
                             rsc_error *err);

#endif
