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

#ifdef __cplusplus
}
#endif
#endif
