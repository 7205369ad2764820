/* rowtags.h - what a row's tag byte says (docs/spec/FLIGHT-PROTOCOL.md 2.1):
 * how the row is framed, and which binary value a length row carries.
 * Header-only, so that the framer, the decoder, `rscflight stats` and the
 * byte report (which re-frame the raw bytes to count them) read tags from
 * one table. */
#ifndef RSC_ROWTAGS_H
#define RSC_ROWTAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hex.h"
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

/* A row the decoder reads as a model row: no tag, or a newline tag that
 * names no other kind of row (React's client parses such a row's JSON as
 * the chunk's value, e.g. the reserved '#'). */
static inline bool rsc__is_model_tag(uint8_t c) {
  if (c == 0) return true;
  if (rsc__is_length_tag(c) || !rsc__is_newline_tag(c)) return false;
  switch (c) {
  case 'I':
  case 'H':
  case 'E':
  case 'N':
  case 'D':
  case 'J':
  case 'W':
  case 'R':
  case 'r':
  case 'X':
  case 'x':
  case 'C': return false;
  default: return true;
  }
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

/* Pseudo tags of the re-framers (stats, report): "<id>:\n", unframed rest. */
enum { RSC__TAG_HALT = 1, RSC__TAG_CUT = 2 };

/* A row type's label, for `rscflight stats` (brief = 0: "model (JSON)")
 * and the byte report (brief = 1: "model"). Binary rows name their value's
 * kind as the library does (rsc_binary_kind_name), into buf; the other
 * labels are constants. */
static inline const char *rsc__row_tag_label(unsigned char tag, int brief, char *buf, size_t cap) {
  size_t elem;
  int kind = rsc__binary_tag_kind(tag, &elem);
  if (kind >= 0 && tag != 'b') {
    snprintf(buf, cap, "%c %s", tag, rsc_binary_kind_name((rsc_binary_kind)kind));
    return buf;
  }
  switch (tag) {
  case 0: return brief ? "model" : "model (JSON)";
  case RSC__TAG_HALT: return brief ? "halt" : "halt (empty row)";
  case RSC__TAG_CUT: return brief ? "cut off" : "cut off / unframed";
  case 'I': return "I client module";
  case 'H': return "H hint";
  case 'E': return "E error";
  case 'T': return "T text";
  case 'b': return "b byte stream piece";
  case 'R': return "R stream";
  case 'r': return "r byte stream";
  case 'X': return "X async iterable";
  case 'x': return "x async iterator";
  case 'C': return "C stream close";
  case 'D': return "D debug info";
  case 'N': return "N time origin";
  case 'J': return "J I/O info";
  case 'W': return "W console";
  case '#': return "# (reserved)";
  default:
    if (!brief) return "other tag";
    snprintf(buf, cap, "%c row", tag);
    return buf;
  }
}

/* A row found in a whole buffer by rsc__scan_row. */
typedef struct rsc__flat_row {
  int64_t id;          /* -1: side-channel rows (H, N, W)                    */
  unsigned char tag;   /* 0: model; 'T', 'I', ...; RSC__TAG_HALT            */
  uint64_t len;        /* the whole row from off, id to LF (or last byte)   */
  uint64_t data, dlen; /* its payload                                     */
} rsc__flat_row;

/* Frames the row at buf[off] (docs/spec/FLIGHT-PROTOCOL.md 2.3): "<hex
 * id>:" (strict lowercase hex below 2^31, as React servers write ids),
 * then a length row or a newline row. Returns 0 when it cannot be framed
 * or the buffer ends inside it. */
static inline int rsc__scan_row(const char *buf, size_t len, size_t off, rsc__flat_row *r) {
  int64_t id = 0;
  size_t p = off;
  for (; p < len && buf[p] != ':'; p++) {
    int h = rsc__hex_digit((uint8_t)buf[p]);
    if (h < 0 || (id = id * 16 + h) > INT32_MAX) return 0;
  }
  if (++p >= len) return 0;
  r->id = id;
  unsigned char c = (unsigned char)buf[p];
  if (rsc__is_length_tag(c)) {
    uint64_t n = 0;
    int digits = 0;
    for (p++; p < len && buf[p] != ','; p++) {
      int h = rsc__hex_digit((uint8_t)buf[p]);
      if (h < 0 || ++digits > 15) return 0;
      n = n * 16 + (uint64_t)h;
    }
    if (p >= len || len - (p + 1) < n) return 0;
    r->tag = c;
    r->data = p + 1;
    r->dlen = n;
    r->len = r->data + r->dlen - off;
    return 1;
  }
  r->tag = rsc__is_newline_tag(c) ? c : 0;
  r->data = r->tag ? p + 1 : p;
  const char *nl = (const char *)memchr(buf + r->data, '\n', len - (size_t)r->data);
  if (!nl) return 0;
  r->dlen = (uint64_t)(nl - (buf + r->data));
  r->len = (uint64_t)(nl - buf) + 1 - off;
  if (r->tag == 0 && r->dlen == 0) r->tag = RSC__TAG_HALT;
  if (r->tag == 'H' || r->tag == 'N' || r->tag == 'W') r->id = -1;
  return 1;
}

#endif
