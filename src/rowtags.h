/* rowtags.h - what a row's tag byte says (docs/spec/FLIGHT-PROTOCOL.md 2.1):
 * how the row is framed, and which binary value a length row carries.
 * Header-only, so that the framer, the decoder and `rscflight stats` (which
 * re-frames the raw bytes to count them) read tags from one table. */
#ifndef RSC_ROWTAGS_H
#define RSC_ROWTAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

/* LENTAG: rows that carry a hex byte count before a comma. */
static inline bool rsc__is_length_tag(uint8_t c) {
  switch (c) {
  case 'T':
  case 'A':
  case 'O':
  case 'o':
  case 'U':
  case 'S':
  case 's':
  case 'L':
  case 'l':
  case 'G':
  case 'g':
  case 'M':
  case 'm':
  case 'V':
  case 'b': return true;
  default: return false;
  }
}

/* NLTAG: any other uppercase letter, '#', 'r' or 'x' is consumed as a tag
 * of a row that ends at LF. */
static inline bool rsc__is_newline_tag(uint8_t c) {
  return (c >= 'A' && c <= 'Z') || c == '#' || c == 'r' || c == 'x';
}

/* The rsc_binary_kind of a binary length row ('b', a byte stream's piece,
 * is Uint8Array) and its element size in *elem; -1 for every other tag. */
static inline int rsc__binary_tag_kind(uint8_t tag, size_t *elem) {
  *elem = 1;
  switch (tag) {
  case 'A': return RSC_ARRAY_BUFFER;
  case 'O': return RSC_INT8;
  case 'o':
  case 'b': return RSC_UINT8;
  case 'U': return RSC_UINT8_CLAMPED;
  case 'S': *elem = 2; return RSC_INT16;
  case 's': *elem = 2; return RSC_UINT16;
  case 'L': *elem = 4; return RSC_INT32;
  case 'l': *elem = 4; return RSC_UINT32;
  case 'G': *elem = 4; return RSC_FLOAT32;
  case 'g': *elem = 8; return RSC_FLOAT64;
  case 'M': *elem = 8; return RSC_BIGINT64;
  case 'm': *elem = 8; return RSC_BIGUINT64;
  case 'V': return RSC_DATA_VIEW;
  default: return -1;
  }
}

#endif
