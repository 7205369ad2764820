/* textout.h - text the output stages write (the dump; what writes Flight):
 * into a buffer that grows to hold it all, or in pieces of a fixed buffer
 * handed to a writer each time it fills, so that the text never has to
 * sit in memory whole; JSON strings as JSON.stringify writes them, and
 * base64. */
#ifndef RSC_TEXTOUT_H
#define RSC_TEXTOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The size of the pieces a writer gets (rsc__text_to_writer). */
#define RSC_TEXT_PIECE 65536

typedef struct rsc_text {
  char *p;
  size_t len, cap;
  rsc_status status;  /* RSC_ERR_NOMEM, or RSC_ERR_USER when the writer failed:
                         nothing more is written */
  bool off;           /* writing disabled: every put is a no-op */
  rsc_write_fn write; /* NULL: the buffer grows (malloc) */
  void *ctx;
} rsc_text;

/* A text handed in pieces to write(ctx, ...): false when out of memory. */
bool rsc__text_to_writer(rsc_text *b, rsc_write_fn write, void *ctx);
/* Hands the buffered text to the writer. */
void rsc__text_flush(rsc_text *b);
void rsc__text_put_slow(rsc_text *b, const char *s, size_t n);
/* Appends s[0..n): into a writer's piece when it has room (inline), else
 * through rsc__text_put_slow. */
static inline void rsc__text_put(rsc_text *b, const char *s, size_t n) {
  if (b->write && !b->off && !b->status && n <= b->cap - b->len) {
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return;
  }
  rsc__text_put_slow(b, s, n);
}
static inline void rsc__text_puts(rsc_text *b, const char *s) { rsc__text_put(b, s, strlen(s)); }
/* The size from which rsc__text_put_span hands bytes to the writer as they
 * are. */
#define RSC_TEXT_SPAN 1024
/* Appends s[0..n) as rsc__text_put does, but a span of RSC_TEXT_SPAN bytes
 * or more goes to a writer as it is, after the text before it (in pieces
 * of at most RSC_TEXT_PIECE bytes), not copied into the piece: the bytes of
 * a binary or text row. */
void rsc__text_put_span(rsc_text *b, const char *s, size_t n);
/* A JSON string as JSON.stringify writes it (ES2019): lone surrogates, kept
 * as WTF-8 inside, come out as lowercase \udxxx escapes. */
void rsc__text_json_string(rsc_text *b, const char *s, size_t n);
/* s[0, n) escaped as inside a JSON string, without the quotes. */
void rsc__text_json_escaped(rsc_text *b, const char *s, size_t n);
/* One JSON string of an ASCII prefix followed by s[0, n) ("$$" escapes,
 * "$L" and "$@" ids), without joining them first. */
void rsc__text_json_string_prefixed(rsc_text *b, const char *prefix, const char *s, size_t n);
/* v in lowercase hex, as Flight writes row ids and T row lengths. */
void rsc__text_hex(rsc_text *b, uint64_t v);
/* Bytes as a quoted base64 string (with padding). */
void rsc__text_base64(rsc_text *b, const uint8_t *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
