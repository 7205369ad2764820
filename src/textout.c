/* textout.c - text the output stages write (textout.h). */
#include "textout.h"

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

void rsc__text_put(rsc_text *b, const char *s, size_t n) {
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

/* s[0, n) escaped as inside a JSON string. */
static void put_escaped(rsc_text *b, const char *s, size_t n) {
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = (uint8_t)s[i];
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

void rsc__text_json_string(rsc_text *b, const char *s, size_t n) {
  if (b->off) return;
  rsc__text_put(b, "\"", 1);
  put_escaped(b, s, n);
  rsc__text_put(b, "\"", 1);
}

void rsc__text_json_string_prefixed(rsc_text *b, const char *prefix, const char *s, size_t n) {
  if (b->off) return;
  rsc__text_put(b, "\"", 1);
  put_escaped(b, prefix, strlen(prefix));
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
