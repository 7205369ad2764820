/*
 * rscflight: extracting a Flight (RSC) payload from an HTML page.
 *
 * Frameworks inline the Flight payload of the first render into the HTML as a
 * series of <script> elements. This module finds those scripts the way a
 * browser would (HTML tokenizer rules, including comments, RCDATA, RAWTEXT,
 * script-data escape states, inert <template> contents and non-executing
 * script types), reads the push statements inside them as JavaScript (string
 * literals with every escape form), and concatenates the bytes exactly as the
 * framework's client runtime hands them to React's Flight client:
 *
 *   RSC_HTML_NEXT              Next.js App Router: self.__next_f.push([0]),
 *                              [1,"text"], [2,formState], [3,"base64"]
 *                              (next/dist/client/app-index.js)
 *   RSC_HTML_RSC_HTML_STREAM   rsc-html-stream (Vite RSC plugin, Waku,
 *                              Parcel): (self.__FLIGHT_DATA||=[]).push("text")
 *                              and .push(Uint8Array.from(atob("b64"),
 *                              m => m.codePointAt(0)))
 *
 * Text segments are encoded as TextEncoder does (UTF-8; a lone surrogate
 * becomes U+FFFD, EF BF BD), base64 segments are decoded as atob does
 * (forgiving-base64). See the comment at the top of html.c for every rule and
 * every decision (what is and is not considered to execute).
 *
 * All names carry the rsc__ prefix: this is an internal header, wrapped by the
 * public one.
 */
#ifndef RSCFLIGHT_SRC_HTML_H
#define RSCFLIGHT_SRC_HTML_H

#include <stddef.h>

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RSC_HTML_AUTO (detect; as an output: nothing found), RSC_HTML_NEXT,
 * RSC_HTML_RSC_HTML_STREAM: the public enum. */
typedef rsc_html_flavor rsc__html_flavor;

/* Return codes of rsc__html_extract (any nonzero value is an error). */
#define RSC__HTML_OK 0
#define RSC__HTML_ERR_SYNTAX 1    /* malformed push statement, escape, base64, order */
#define RSC__HTML_ERR_NOT_FOUND 2 /* "no Flight payload found" */
#define RSC__HTML_ERR_NOMEM 3     /* realloc_fn returned NULL, or size overflow */
#define RSC__HTML_ERR_ARG 4       /* bad argument (NULL html with len > 0, NULL out, bad flavor) */

/* Allocator: realloc_fn(ctx, NULL, 0, n) allocates, realloc_fn(ctx, p, old, n)
 * resizes (contents kept as realloc does), realloc_fn(ctx, p, old, 0) frees
 * (the return value is then ignored). A NULL realloc_fn means the C library's
 * realloc/free. */
typedef void *(*rsc__html_realloc_fn)(void *ctx, void *ptr, size_t old_size, size_t new_size);

/*
 * Extracts the Flight payload bytes from html[0..len).
 *
 * flavor: RSC_HTML_AUTO accepts either framework's scripts (a page holding
 *   both is an error); RSC_HTML_NEXT / RSC_HTML_RSC_HTML_STREAM take only that
 *   framework's scripts and ignore the other's as ordinary scripts.
 *
 * On success returns 0, *out points to a buffer of exactly *out_len + 1 bytes
 * allocated with realloc_fn (the payload followed by one NUL byte that is not
 * part of it); the caller frees it with realloc_fn(ctx, *out, *out_len + 1, 0).
 * A page whose Next.js bootstrap ([0]) has no data segments gives a
 * zero-length payload (still a 1-byte buffer). *found is set to the flavor that
 * was read.
 *
 * On error returns nonzero, sets *out = NULL, *out_len = 0, *err_offset to a
 * byte offset into html and *err_msg to a static string, and frees anything it
 * allocated. *found tells which flavor had been detected (RSC_HTML_AUTO if
 * none). A page without any Flight script gives RSC__HTML_ERR_NOT_FOUND with
 * "no Flight payload found".
 *
 * err_offset, err_msg and found may be NULL. The output is at most 3 bytes per
 * input byte; no other memory is allocated; nothing recurses; no global state.
 */
int rsc__html_extract(const char *html, size_t len, rsc__html_flavor flavor,
                      void *(*realloc_fn)(void *ctx, void *ptr, size_t old_size, size_t new_size),
                      void *ctx, char **out, size_t *out_len, size_t *err_offset,
                      const char **err_msg, rsc__html_flavor *found);

#ifdef __cplusplus
}
#endif

#endif /* RSCFLIGHT_SRC_HTML_H */
