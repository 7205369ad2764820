/*
 * html.h - the Flight payload an HTML page inlines.
 *
 * Frameworks inline the Flight payload of the first render into the HTML as a
 * series of <script> pushes:
 *
 *   RSC_HTML_NEXT              Next.js App Router: self.__next_f.push([0]),
 *                              [1,"text"], [2,formState], [3,"base64"]
 *                              (next/dist/client/app-index.js)
 *   RSC_HTML_RSC_HTML_STREAM   rsc-html-stream (Vite RSC plugin, Waku,
 *                              Parcel): (self.__FLIGHT_DATA||=[]).push("text")
 *                              and .push(Uint8Array.from(atob("b64"),
 *                              m => m.codePointAt(0)))
 *
 * This stage finds the scripts a browser would run, reads their pushes as
 * JavaScript and joins the bytes as the framework's client runtime hands them
 * to React's Flight client. html.c's header gives every rule and decision.
 * An internal header: rsc_html_extract (rscflight.h) wraps it.
 */
#ifndef RSC_HTML_H
#define RSC_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Extracts the Flight payload bytes from html[0..len).
 *
 * flavor: RSC_HTML_AUTO accepts either framework's scripts (a page holding
 *   both is an error); RSC_HTML_NEXT / RSC_HTML_RSC_HTML_STREAM take only that
 *   framework's scripts and ignore the other's as ordinary scripts.
 *
 * On success returns RSC_OK; *out points to a buffer of exactly *out_len + 1
 * bytes from alloc (NULL or NULL hooks: libc), the payload followed by one
 * NUL byte that is not part of it, which the caller releases through the
 * same hooks. A page whose Next.js bootstrap ([0]) has no data segments
 * gives a zero-length payload (still a 1-byte buffer). *found is set to the
 * flavor that was read.
 *
 * Otherwise returns RSC_ERR_HTML (the page: a malformed push statement,
 * escape or base64, segments out of order, or "no Flight payload found";
 * the arguments: a NULL html with len > 0, a NULL out or out_len, an unknown
 * flavor, with "invalid argument") or RSC_ERR_NOMEM (the allocator failed,
 * or the size overflowed), with *out = NULL and *out_len = 0; nothing is
 * left allocated. *found tells which flavor had been detected (RSC_HTML_AUTO
 * if none).
 *
 * err (code, a byte offset into html, row_id -1 and a static message; code
 * RSC_OK, offset 0 and msg NULL on success) and found may be NULL. The
 * output is at most 3 bytes per input byte; nothing else is allocated;
 * nothing recurses; there is no global state.
 */
rsc_status rsc__html_extract(const char *html, size_t len, rsc_html_flavor flavor,
                             const rsc_alloc *alloc, char **out, size_t *out_len, rsc_error *err,
                             rsc_html_flavor *found);

/* One data push of a page: a Next.js [1,"text"] or [3,"base64"], an
 * rsc-html-stream .push("text") or .push(Uint8Array.from(atob("b64"), ...)).
 * Offsets are in the page except pay_b/pay_e, which are in the payload. */
typedef struct rsc__html_seg {
  size_t push_b, push_e; /* the push statement, from self/( to its closing ')' */
  size_t lit_b, lit_e;   /* its string literal, quotes included */
  size_t pay_b, pay_e;   /* the payload bytes it gives */
  bool base64;           /* the literal is base64 (atob) rather than text */
} rsc__html_seg;

/*
 * rsc__html_extract, and the data pushes in document order: on success
 * *segs (from alloc; NULL when there are none) holds *nsegs pushes whose
 * payload spans are consecutive and together cover the payload. On an error
 * *segs is NULL and *nsegs 0. segs and nsegs must not be NULL.
 */
rsc_status rsc__html_extract_segs(const char *html, size_t len, rsc_html_flavor flavor,
                                  const rsc_alloc *alloc, char **out, size_t *out_len,
                                  rsc__html_seg **segs, size_t *nsegs, rsc_error *err,
                                  rsc_html_flavor *found);

#ifdef __cplusplus
}
#endif

#endif
