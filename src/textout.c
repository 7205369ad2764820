/* textout.c - text the output stages write (textout.h). */
#include "textout.h"

#ifdef __SSE2__
#  include <emmintrin.h>
#endif

#include <stdio.h>
#include <stdlib.h>

bool rsc__text_to_writer(rsc_text *b, rsc_write_fn write, void *ctx) {
  memset(b, 0, sizeof *b);
  b->write = write;
  b->ctx = ctx;
  b->cap = RSC_TEXT_PIECE;
  b->p = (char *)malloc(RSC_TEXT_PIECE);
  return b->p != NULL;
}

/* Hands the buffered text to the writer. */
void rsc__text_flush(rsc_text *b) {
  if (b->status || !b->len) return;
  if (b->write(b->ctx, b->p, b->len) != 0) b->status = RSC_ERR_USER;
  b->len = 0;
}

void rsc__text_put_span(rsc_text *b, const char *s, size_t n) {
  if (!b->write || n < RSC_TEXT_SPAN || b->off || b->status) {
    rsc__text_put(b, s, n);
    return;
  }
  rsc__text_flush(b);
  while (n && !b->status) {
    size_t k = n < RSC_TEXT_PIECE ? n : RSC_TEXT_PIECE;
    if (b->write(b->ctx, s, k) != 0) b->status = RSC_ERR_USER;
    s += k;
    n -= k;
  }
}

void rsc__text_put_slow(rsc_text *b, const char *s, size_t n) {
  if (b->off || b->status) return;
  if (b->write) {
    while (n > b->cap - b->len) {
      size_t room = b->cap - b->len;
      memcpy(b->p + b->len, s, room);
      b->len += room;
      s += room;
      n -= room;
      rsc__text_flush(b);
      if (b->status) return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1) cap *= 2;
    char *np = (char *)realloc(b->p, cap);
    if (!np) {
      b->status = RSC_ERR_NOMEM;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

/* The bytes put_escaped looks at: controls, '"', '\\', and 0xED
 * (which begins a lone surrogate's WTF-8). */
static const bool json_special[256] = {
    [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
    [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1,
    [0x0E] = 1, [0x0F] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
    [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1A] = 1, [0x1B] = 1,
    [0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0x1F] = 1, ['"'] = 1,  ['\\'] = 1, [0xED] = 1,
};

/* Whether one of the eight bytes at p is special (a control, '"', '\\' or
 * 0xED): each test sets a byte's high bit where it holds (a borrow may set
 * more above one that does, which "any" does not mind). */
static inline bool special8(const char *p) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  uint64_t x;
  memcpy(&x, p, 8);
  uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\'), ed = x ^ (ones * 0xED);
  uint64_t hit =
      ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | ((ed - ones) & ~ed);
  return (hit & highs) != 0;
}

/* s[0, n) escaped as inside a JSON string. */
static void put_escaped(rsc_text *b, const char *s, size_t n) {
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    /* eight bytes at a time while none is special */
    while (i + 8 <= n && !special8(s + i)) {
      i += 8;
      run += 8;
    }
    if (i >= n) break;
    uint8_t c = (uint8_t)s[i];
    if (!json_special[c]) { /* most bytes: part of the run written as is */
      run++;
      continue;
    }
    const char *esc = NULL;
    char tmp[8];
    size_t skip = 0;
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c == '\b') esc = "\\b";
    else if (c == '\f') esc = "\\f";
    else if (c < 0x20) {
      snprintf(tmp, sizeof tmp, "\\u%04x", c);
      esc = tmp;
    } else if (c == 0xED && i + 2 < n && ((uint8_t)s[i + 1] & 0xE0) == 0xA0) {
      unsigned cp = 0xD000u | (((uint8_t)s[i + 1] & 0x3Fu) << 6) | ((uint8_t)s[i + 2] & 0x3Fu);
      snprintf(tmp, sizeof tmp, "\\u%04x", cp);
      esc = tmp;
      skip = 2;
    }
    if (esc) {
      rsc__text_put(b, s + i - run, run);
      run = 0;
      rsc__text_puts(b, esc);
      i += skip;
    } else {
      run++;
    }
  }
  rsc__text_put(b, s + n - run, run);
}

void rsc__text_json_escaped(rsc_text *b, const char *s, size_t n) {
  if (b->off || !n) return;
  put_escaped(b, s, n);
}

#ifdef __SSE2__
/* Whether none of the sixteen bytes of x is special: a control (at most
 * 0x1F), '"', '\\' or 0xED. */
static inline bool plain16(__m128i x) {
  const __m128i ctl = _mm_set1_epi8(0x1F), q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'),
                ed = _mm_set1_epi8((char)0xED);
  __m128i hit =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl), _mm_cmpeq_epi8(x, q)),
                   _mm_or_si128(_mm_cmpeq_epi8(x, bs), _mm_cmpeq_epi8(x, ed)));
  return _mm_movemask_epi8(hit) == 0;
}
#endif

/* s[0, n) for 0 < n < 8 as eight bytes that hold each of them and no
 * other: the first four and last four of 4 to 7 (overlapping), or the
 * first, middle and last of 1 to 3 (repeated). */
static inline uint64_t short_word(const char *s, size_t n) {
  if (n >= 4) {
    uint32_t lo, hi;
    memcpy(&lo, s, 4);
    memcpy(&hi, s + n - 4, 4);
    return (uint64_t)lo | (uint64_t)hi << 32;
  }
  uint64_t x = (uint8_t)s[0] | (uint32_t)(uint8_t)s[n / 2] << 8 |
               (uint32_t)(uint8_t)s[n - 1] << 16 | (uint32_t)(uint8_t)s[n - 1] << 24;
  return x | x << 32;
}

/* Whether s[0, n) needs no escape. Reads only s[0, n): a short string's
 * bytes as overlapping words, where a byte loop cost a branch a byte. */
static inline bool plain(const char *s, size_t n) {
  if (!n) return true;
#ifdef __SSE2__
  if (n < 8) return plain16(_mm_set1_epi64x((long long)short_word(s, n)));
  if (n <= 16)
    return plain16(_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)s),
                                      _mm_loadl_epi64((const __m128i *)(const void *)(s + n - 8))));
  /* sixteen bytes at a time, the last sixteen overlapping */
  for (size_t i = 0;; i += 16) {
    if (i + 16 > n) i = n - 16;
    if (!plain16(_mm_loadu_si128((const __m128i *)(const void *)(s + i)))) return false;
    if (i + 16 == n) return true;
  }
#else
  if (n < 8) {
    uint64_t x = short_word(s, n);
    return !special8((const char *)&x);
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (special8(s + i)) return false;
  return i == n || !special8(s + n - 8);
#endif
}

/* Copies n bytes; a short run inline, as overlapping words (memcpy's call
 * cost more than the copy for most strings). */
static inline void copy_short(char *o, const char *s, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t a, z;
    memcpy(&a, s, 8);
    memcpy(&z, s + n - 8, 8);
    memcpy(o, &a, 8);
    memcpy(o + n - 8, &z, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, z;
    memcpy(&a, s, 4);
    memcpy(&z, s + n - 4, 4);
    memcpy(o, &a, 4);
    memcpy(o + n - 4, &z, 4);
  } else if (n < 4) {
    if (n) {
      o[0] = s[0];
      o[n / 2] = s[n / 2];
      o[n - 1] = s[n - 1];
    }
  } else {
    memcpy(o, s, n);
  }
}

/* Most strings need no escape and fit in the writer's piece: quoted with
 * one copy (pre: the prefix, pn ASCII bytes that need none). false: the
 * slow way. */
static inline bool put_plain_string(rsc_text *b, const char *pre, size_t pn, const char *s,
                                    size_t n) {
  if (b->off || b->status || n + pn + 2 >= b->cap - b->len || !plain(s, n)) return false;
  char *o = b->p + b->len;
  *o++ = '"';
  memcpy(o, pre, pn);
  copy_short(o + pn, s, n);
  o[pn + n] = '"';
  if (!b->write) o[pn + n + 1] = 0; /* (a growing buffer's text is a C string) */
  b->len += pn + n + 2;
  return true;
}

void rsc__text_json_string(rsc_text *b, const char *s, size_t n) {
  if (b->off || put_plain_string(b, "", 0, s, n)) return;
  rsc__text_put(b, "\"", 1);
  put_escaped(b, s, n);
  rsc__text_put(b, "\"", 1);
}

void rsc__text_json_string_prefixed(rsc_text *b, const char *prefix, const char *s, size_t n) {
  size_t pn = strlen(prefix);
  if (b->off || (plain(prefix, pn) && put_plain_string(b, prefix, pn, s, n))) return;
  rsc__text_put(b, "\"", 1);
  put_escaped(b, prefix, pn);
  put_escaped(b, s, n);
  rsc__text_put(b, "\"", 1);
}

void rsc__text_hex(rsc_text *b, uint64_t v) {
  char buf[16];
  size_t n = 0;
  do buf[sizeof buf - ++n] = "0123456789abcdef"[v & 15];
  while ((v >>= 4) && n < sizeof buf);
  rsc__text_put(b, buf + sizeof buf - n, n);
}

void rsc__text_base64(rsc_text *b, const uint8_t *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (b->off) return;
  rsc__text_put(b, "\"", 1);
  char out[4];
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    out[0] = tab[v >> 18];
    out[1] = tab[(v >> 12) & 63];
    out[2] = tab[(v >> 6) & 63];
    out[3] = tab[v & 63];
    rsc__text_put(b, out, 4);
  }
  if (i < n) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
    out[0] = tab[v >> 18];
    out[1] = tab[(v >> 12) & 63];
    out[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
    out[3] = '=';
    rsc__text_put(b, out, 4);
  }
  rsc__text_put(b, "\"", 1);
}
