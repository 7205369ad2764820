/* utf8.h - decoding bytes as TextDecoder does. */
#ifndef RSC_UTF8_H
#define RSC_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Replaces each invalid sequence (WHATWG "maximal subpart") with U+FFFD,
 * the way React's TextDecoder decodes a row. Returns a NUL-terminated copy
 * in the arena (NULL when out of memory); *out_len gets its length. */
uint8_t *rsc__utf8_repair(rsc_decoder *d, const uint8_t *s, size_t len, size_t *out_len);

/* Copies s[0..len) to dst while its bytes are ASCII and returns how many
 * it copied: len when all were. Every byte before the returned offset is
 * ASCII, so the rest starts at a character boundary and can be validated
 * on its own. A text row that is all ASCII is then checked as it is copied,
 * one pass where a validation and a copy were two. */
size_t rsc__ascii_copy(uint8_t *dst, const uint8_t *s, size_t len);
/* The same scan without the copy: how many bytes of s are ASCII before the
 * first other one. */
size_t rsc__ascii_prefix(const uint8_t *s, size_t len);

/* UTF-16 code units in a UTF-8 (or WTF-8) prefix: V8's positions count these. */
size_t rsc__utf16_units(const uint8_t *s, size_t len);

/* Bytes of the UTF-8 (WTF-8) character at s[i] of s[0..len), read from its
 * lead byte (a stray continuation byte counts one), cut at len. */
static inline size_t rsc__utf8_char_len(const uint8_t *s, size_t len, size_t i) {
  uint8_t c = s[i];
  size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  return i + n > len ? len - i : n;
}

/* One code point of s[0..len) (len >= 1) as the WHATWG UTF-8 decoder reads
 * it: returns the bytes taken (>= 1) with the code point in *cp, or U+FFFD
 * for a maximal invalid subpart (the byte that broke the sequence is not
 * taken: it starts the next read). Surrogates and overlongs are invalid. */
static inline size_t rsc__utf8_decode(const uint8_t *s, size_t len, uint32_t *cp) {
  uint8_t c = s[0], lo = 0x80, hi = 0xBF;
  size_t need;
  uint32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
    v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    need = 2;
    v = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    need = 3;
    v = c & 0x07;
  } else {
    *cp = 0xFFFD;
    return 1;
  }
  for (size_t i = 1; i <= need; i++) {
    if (i >= len || s[i] < lo || s[i] > hi) {
      *cp = 0xFFFD;
      return i;
    }
    lo = 0x80;
    hi = 0xBF;
    v = (v << 6) | (s[i] & 0x3F);
  }
  *cp = v;
  return need + 1;
}

/* Writes code point cp (at most U+10FFFF) as UTF-8 to out; returns its
 * 1 to 4 bytes. */
static inline size_t rsc__utf8_encode(uint32_t cp, uint8_t *out) {
  if (cp < 0x80) {
    out[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (uint8_t)(0xC0 | (cp >> 6));
    out[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (uint8_t)(0xE0 | (cp >> 12));
    out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | (cp >> 18));
  out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/* The high (or the low) UTF-16 half of the 4-byte character at s, as the
 * three WTF-8 bytes of that lone surrogate: what JavaScript leaves where a
 * string is cut inside a pair. */
static inline void rsc__wtf8_half(const uint8_t *s, bool high, uint8_t out[3]) {
  uint32_t cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
                ((uint32_t)(s[2] & 0x3F) << 6) | (uint32_t)(s[3] & 0x3F);
  uint32_t u = high ? 0xD800 + ((cp - 0x10000) >> 10) : 0xDC00 + ((cp - 0x10000) & 0x3FF);
  out[0] = (uint8_t)(0xE0 | (u >> 12));
  out[1] = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
  out[2] = (uint8_t)(0x80 | (u & 0x3F));
}

#ifdef __cplusplus
}
#endif
#endif
