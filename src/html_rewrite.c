/*
 * html_rewrite.c - a Flight payload rewritten inside the HTML page that
 * inlines it, so that the page's own runtime reads the rewritten payload
 * (rsc_rewrite_html in rscflight.h; html_rewrite.h).
 *
 * The page is read by html.c, which gives the payload and every data push
 * with its string literal in the page and its span in the payload. The
 * payload goes through the rewriter, which reports each row with its span
 * and its new bytes. The new bytes of each push are then:
 *
 *  - an unchanged row's bytes stay in the pushes that held them;
 *  - a changed row's new bytes all go to the push where the row started
 *    (at the place the row started), and the later pushes it ran into keep
 *    only the bytes that are not the row's. When the new bytes are not
 *    UTF-8 and the row started in a text push, they go to the first base64
 *    push the row runs into instead (a row the server cut inside a
 *    character, with the rest inlined as base64). No push is added, dropped or
 *    merged, so every script of the page stays where it was, and the
 *    joined payload is the rewritten one.
 *
 * A push whose bytes come out the same is left exactly as it was. Any other
 * push has its string literal, and only that, written again (the rest of
 * the statement, of the script and of the page is copied as it was) the way
 * its framework writes a literal:
 *
 *  - text, Next.js (next/dist/server/app-render/use-flight-response.js):
 *    JSON.stringify, then htmlEscapeJsonString
 *    (next/dist/shared/lib/htmlescape.js): '<' '>' '&' U+2028 U+2029 as
 *    \u003c \u003e \u0026 \u2028 \u2029;
 *  - text, rsc-html-stream (rsc-html-stream/server.js): JSON.stringify, then
 *    escapeScript: "<!--" as "<\!--" and "</script" (any case) as
 *    "</\script";
 *  - base64 (Next.js [3,"..."], rsc-html-stream atob("...")): the bytes as
 *    btoa writes them (standard alphabet, '=' padding) in double quotes.
 *
 * JSON.stringify here: '"' and '\' escaped, \b \f \n \r \t, other control
 * characters below U+0020 as \u00xx (lowercase hex), everything else as it
 * is (UTF-8).
 *
 * A text push must hold UTF-8, since TextEncoder gives the runtime UTF-8 for
 * whatever string the page holds: a text push whose new bytes are not UTF-8
 * (a rewritten row ending inside a character, which React's writers never
 * do) is an error rather than a push that would read back differently.
 */
#include "html_rewrite.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "html.h"
#include "utf8.h"

typedef struct rsc_hr {
  rsc_alloc al;
  const uint8_t *pay; /* the payload as the page gives it */
  size_t plen;
  const rsc__html_seg *segs;
  size_t nsegs;
  size_t *qb; /* nsegs + 1: segment i's new bytes are q[qb[i]..qb[i+1]) */
  uint8_t *q; /* the rewritten payload */
  size_t qlen, qcap;
  size_t cur;    /* the segment receiving bytes */
  uint64_t done; /* payload bytes accounted for */
  size_t rows, rows_changed;
  rsc_error err; /* the first error; code RSC_OK until then */
} rsc_hr;

static rsc_status hr_fail(rsc_hr *h, rsc_status code, uint64_t off, const char *msg) {
  if (!h->err.code) {
    h->err.code = code;
    h->err.offset = off;
    h->err.row_id = -1;
    h->err.msg = msg;
  }
  return h->err.code;
}

/* ---- a growable byte buffer ---------------------------------------------- */

typedef struct rsc_hr_buf {
  uint8_t *p;
  size_t len, cap;
} rsc_hr_buf;

static bool buf_reserve(const rsc_alloc *al, rsc_hr_buf *b, size_t extra) {
  if (b->cap - b->len > extra) return true; /* room for a final NUL too */
  if (extra > SIZE_MAX / 2 - b->len - 1) return false;
  size_t need = b->len + extra + 1, nc = b->cap ? b->cap : 256;
  while (nc < need) nc *= 2;
  void *p = rsc__heap_realloc(al, b->p, b->cap, nc);
  if (!p) return false;
  b->p = (uint8_t *)p;
  b->cap = nc;
  return true;
}

static bool buf_put(const rsc_alloc *al, rsc_hr_buf *b, const void *s, size_t k) {
  if (!buf_reserve(al, b, k)) return false;
  if (k) memcpy(b->p + b->len, s, k);
  b->len += k;
  return true;
}

/* ---- the new bytes of each push ------------------------------------------ */

static bool q_put(rsc_hr *h, const void *s, size_t k) {
  rsc_hr_buf b = {h->q, h->qlen, h->qcap};
  bool ok = buf_put(&h->al, &b, s, k);
  h->q = b.p;
  h->qlen = b.len;
  h->qcap = b.cap;
  return ok;
}

static bool q_reserve(rsc_hr *h, size_t extra) {
  rsc_hr_buf b = {h->q, h->qlen, h->qcap};
  bool ok = buf_reserve(&h->al, &b, extra);
  h->q = b.p;
  h->qcap = b.cap;
  return ok;
}

/* Moves the bytes being written on to segment i (>= cur): the segments in
 * between end here. */
static void advance_to(rsc_hr *h, size_t i) {
  while (h->cur < i) h->qb[++h->cur] = h->qlen;
}

/* The segment, from cur on, whose payload span holds byte a (< plen). */
static size_t seg_of(const rsc_hr *h, uint64_t a) {
  size_t i = h->cur;
  while (i < h->nsegs && h->segs[i].pay_e <= a) i++;
  return i;
}

/* Payload bytes [a, b) kept as they were, each in its own segment. */
static rsc_status keep(rsc_hr *h, uint64_t a, uint64_t b) {
  while (a < b) {
    size_t i = seg_of(h, a);
    if (i >= h->nsegs) return hr_fail(h, RSC_ERR_STATE, a, "row past the end of the payload");
    uint64_t e = h->segs[i].pay_e < b ? h->segs[i].pay_e : b;
    advance_to(h, i);
    if (!q_put(h, h->pay + a, (size_t)(e - a)))
      return hr_fail(h, RSC_ERR_NOMEM, a, "out of memory");
    a = e;
  }
  return RSC_OK;
}

static bool valid_utf8(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint32_t cp;
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = rsc__utf8_decode(s + i, n - i, &cp);
    if (cp == 0xFFFD && !(k == 3 && s[i] == 0xEF && s[i + 1] == 0xBF && s[i + 2] == 0xBD))
      return false;
    i += k;
  }
  return true;
}

static int on_row(void *ctx, uint64_t in_start, uint64_t in_end, const char *out, size_t out_len,
                  bool changed) {
  rsc_hr *h = ctx;
  if (h->err.code) return 1;
  if (in_end > h->plen && in_start <= h->plen) in_end = h->plen; /* a last row's newline */
  if (in_start < h->done || in_end < in_start) {
    hr_fail(h, RSC_ERR_STATE, in_start, "rewriter reported rows out of order");
    return 1;
  }
  if (keep(h, h->done, in_start)) return 1; /* bytes outside any row */
  h->rows++;
  if (!changed) {
    if (keep(h, in_start, in_end)) return 1;
  } else {
    h->rows_changed++;
    size_t i = seg_of(h, in_start);
    if (i < h->nsegs && !h->segs[i].base64 && !valid_utf8((const uint8_t *)out, out_len)) {
      /* bytes a text push cannot hold: the first base64 push the row runs
       * into, if any */
      for (size_t j = i + 1; j < h->nsegs && h->segs[j].pay_b < in_end; j++)
        if (h->segs[j].base64) {
          i = j;
          break;
        }
    }
    if (i < h->nsegs) advance_to(h, i); /* else: the end of the payload, in the last push */
    if (!q_put(h, out, out_len)) {
      hr_fail(h, RSC_ERR_NOMEM, in_start, "out of memory");
      return 1;
    }
  }
  h->done = in_end;
  return 0;
}

/* ---- writing a literal as the framework does ----------------------------- */

static bool ci_script(const uint8_t *s, size_t n) {
  static const char w[] = "script";
  if (n < 6) return false;
  for (size_t i = 0; i < 6; i++)
    if ((s[i] | 0x20) != (uint8_t)w[i]) return false;
  return true;
}

/* s[0..n) (UTF-8) as the framework writes a text push's literal. */
static bool put_text_literal(const rsc_alloc *al, rsc_hr_buf *o, const uint8_t *s, size_t n,
                             rsc_html_flavor fl) {
  static const char hexd[] = "0123456789abcdef";
  if (!buf_reserve(al, o, n + 2)) return false;
  o->p[o->len++] = '"';
  size_t i = 0;
  while (i < n) {
    /* the run of bytes written as they are */
    size_t r = i;
    while (r < n) {
      uint8_t c = s[r];
      if (c < 0x20 || c == '"' || c == '\\' || c == '<') break;
      if (fl == RSC_HTML_NEXT &&
          (c == '>' || c == '&' ||
           (c == 0xE2 && r + 2 < n && s[r + 1] == 0x80 && (s[r + 2] == 0xA8 || s[r + 2] == 0xA9))))
        break;
      r++;
    }
    if (!buf_put(al, o, s + i, r - i)) return false;
    i = r;
    if (i >= n) break;
    uint8_t c = s[i];
    char e[12];
    size_t k = 0, take = 1;
    if (c == '"' || c == '\\') {
      e[k++] = '\\';
      e[k++] = (char)c;
    } else if (c < 0x20) {
      e[k++] = '\\';
      switch (c) {
      case 0x08: e[k++] = 'b'; break;
      case 0x0C: e[k++] = 'f'; break;
      case 0x0A: e[k++] = 'n'; break;
      case 0x0D: e[k++] = 'r'; break;
      case 0x09: e[k++] = 't'; break;
      default:
        memcpy(e + k, "u00", 3);
        k += 3;
        e[k++] = hexd[c >> 4];
        e[k++] = hexd[c & 15];
        break;
      }
    } else if (fl == RSC_HTML_NEXT) {
      uint32_t cp = c;
      if (c == 0xE2) {
        cp = s[i + 2] == 0xA8 ? 0x2028 : 0x2029;
        take = 3;
      }
      memcpy(e, "\\u", 2);
      k = 2;
      for (int sh = 12; sh >= 0; sh -= 4) e[k++] = hexd[(cp >> sh) & 15];
    } else if (i + 3 < n && s[i + 1] == '!' && s[i + 2] == '-' && s[i + 3] == '-') {
      memcpy(e, "<\\!--", 5); /* rsc-html-stream's escapeScript */
      k = 5;
      take = 4;
    } else if (i + 1 < n && s[i + 1] == '/' && ci_script(s + i + 2, n - i - 2)) {
      memcpy(e, "</\\", 3);
      memcpy(e + 3, s + i + 2, 6);
      k = 9;
      take = 8;
    } else {
      e[k++] = '<';
    }
    if (!buf_put(al, o, e, k)) return false;
    i += take;
  }
  return buf_put(al, o, "\"", 1);
}

/* s[0..n) as btoa writes it, in double quotes. */
static bool put_base64_literal(const rsc_alloc *al, rsc_hr_buf *o, const uint8_t *s, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (n > (SIZE_MAX - 3) / 4 * 3 - 3 || !buf_reserve(al, o, (n + 2) / 3 * 4 + 2)) return false;
  uint8_t *w = o->p + o->len;
  *w++ = '"';
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    *w++ = (uint8_t)t[v >> 18];
    *w++ = (uint8_t)t[(v >> 12) & 63];
    *w++ = (uint8_t)t[(v >> 6) & 63];
    *w++ = (uint8_t)t[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)s[i] << 16;
    *w++ = (uint8_t)t[v >> 18];
    *w++ = (uint8_t)t[(v >> 12) & 63];
    *w++ = '=';
    *w++ = '=';
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
    *w++ = (uint8_t)t[v >> 18];
    *w++ = (uint8_t)t[(v >> 12) & 63];
    *w++ = (uint8_t)t[(v >> 6) & 63];
    *w++ = '=';
  }
  *w++ = '"';
  o->len = (size_t)(w - o->p);
  return true;
}

/* ---- the stage ----------------------------------------------------------- */

/* The page offset of the push whose bytes hold payload offset off. */
static uint64_t page_offset(const rsc__html_seg *segs, size_t nsegs, uint64_t off) {
  for (size_t i = 0; i < nsegs; i++)
    if (off < segs[i].pay_e || i + 1 == nsegs) return segs[i].lit_b;
  return 0;
}

rsc_status rsc__html_rewrite(const char *html, size_t len, rsc_html_flavor flavor,
                             rsc__html_rows_fn rows, void *rows_ctx, const rsc_alloc *alloc,
                             char **out, size_t *out_len, rsc_html_rewrite_info *info,
                             rsc_error *err) {
  rsc_hr h;
  rsc_html_flavor found = RSC_HTML_AUTO;
  rsc__html_seg *segs = NULL;
  char *pay = NULL;
  rsc_hr_buf o = {0};
  rsc_status st;
  memset(&h, 0, sizeof h);
  if (alloc) h.al = *alloc;
  if (out) *out = NULL;
  if (out_len) *out_len = 0;
  if (info) memset(info, 0, sizeof *info);
  if (!out || !out_len || !rows) {
    hr_fail(&h, RSC_ERR_HTML, 0, "invalid argument");
    goto done;
  }
  st = rsc__html_extract_segs(html, len, flavor, &h.al, &pay, &h.plen, &segs, &h.nsegs, &h.err,
                              &found);
  if (st) goto done;
  h.pay = (const uint8_t *)pay;
  h.segs = segs;
  h.qb = rsc__heap_alloc(&h.al, (h.nsegs + 1) * sizeof *h.qb);
  if (!h.qb) {
    hr_fail(&h, RSC_ERR_NOMEM, 0, "out of memory");
    goto done;
  }
  h.qb[0] = 0;
  if (!q_reserve(&h, h.plen + h.plen / 8)) { /* the rewritten payload, grown rarely */
    hr_fail(&h, RSC_ERR_NOMEM, 0, "out of memory");
    goto done;
  }

  rsc_error rerr = {0};
  st = rows(rows_ctx, pay, h.plen, on_row, &h, &rerr);
  if (h.err.code) goto done; /* this stage stopped the rewriter */
  if (st) {
    h.err = rerr;
    h.err.code = st;
    h.err.offset = page_offset(segs, h.nsegs, rerr.offset);
    goto done;
  }
  if (keep(&h, h.done, h.plen)) goto done;
  advance_to(&h, h.nsegs);

  /* the page, with the literal of each push whose bytes changed written
   * again */
  if (!buf_reserve(&h.al, &o, len + len / 8)) {
    hr_fail(&h, RSC_ERR_NOMEM, 0, "out of memory");
    goto done;
  }
  size_t at = 0, changed = 0;
  for (size_t i = 0; i < h.nsegs; i++) {
    const rsc__html_seg *g = &segs[i];
    const uint8_t *nb = h.q + h.qb[i];
    size_t nn = h.qb[i + 1] - h.qb[i];
    if (nn == g->pay_e - g->pay_b && (!nn || memcmp(nb, h.pay + g->pay_b, nn) == 0)) continue;
    if (!g->base64 && !valid_utf8(nb, nn)) {
      hr_fail(&h, RSC_ERR_HTML, g->lit_b, "rewritten bytes of a text push are not UTF-8");
      goto done;
    }
    changed++;
    if (!buf_put(&h.al, &o, html + at, g->lit_b - at) ||
        !(g->base64 ? put_base64_literal(&h.al, &o, nb, nn)
                    : put_text_literal(&h.al, &o, nb, nn, found))) {
      hr_fail(&h, RSC_ERR_NOMEM, g->lit_b, "out of memory");
      goto done;
    }
    at = g->lit_e;
  }
  if (!buf_put(&h.al, &o, html + at, len - at)) {
    hr_fail(&h, RSC_ERR_NOMEM, len, "out of memory");
    goto done;
  }
  o.p[o.len] = 0;
  *out = (char *)o.p;
  *out_len = o.len;
  o.p = NULL;
  if (info) {
    info->flavor = found;
    info->rows = h.rows;
    info->rows_changed = h.rows_changed;
    info->pushes = h.nsegs;
    info->pushes_changed = changed;
    info->payload_in = h.plen;
    info->payload_out = h.qlen;
  }

done:
  if (info && h.err.code) info->flavor = found;
  rsc__heap_free(&h.al, o.p);
  rsc__heap_free(&h.al, h.q);
  rsc__heap_free(&h.al, h.qb);
  rsc__heap_free(&h.al, segs);
  rsc__heap_free(&h.al, pay);
  if (err) *err = h.err.code ? h.err : (rsc_error){.code = RSC_OK, .row_id = -1};
  return h.err.code;
}

/* ---- the public entry: rows from rewrite.c ------------------------------- */

static int no_write(void *ctx, const char *buf, size_t len) {
  (void)ctx;
  (void)buf;
  (void)len;
  return 0; /* every row goes to the row hook */
}

typedef struct rsc_hr_real {
  const rsc_rewrite_options *opts;
  rsc_rewrite_stats stats;
} rsc_hr_real;

static rsc_status real_rows(void *ctx, const char *payload, size_t len, rsc__rewrite_row_fn fn,
                            void *fn_ctx, rsc_error *err) {
  rsc_hr_real *r = ctx;
  rsc_rewriter *rw = rsc_rewriter_new(r->opts, no_write, NULL);
  if (!rw) {
    *err = (rsc_error){RSC_ERR_NOMEM, 0, -1, "out of memory, or invalid options"};
    return RSC_ERR_NOMEM;
  }
  rsc__rewriter_set_row_fn(rw, fn, fn_ctx);
  rsc_status st = rsc_rewriter_feed(rw, payload, len);
  if (st == RSC_OK) st = rsc_rewriter_finish(rw);
  *err = *rsc_rewriter_error(rw);
  r->stats = *rsc_rewriter_stats(rw);
  rsc_rewriter_free(rw);
  return st;
}

rsc_status rsc_rewrite_html(const char *html, size_t len, rsc_html_flavor flavor,
                            const rsc_rewrite_options *opts, char **out, size_t *out_len,
                            rsc_html_rewrite_info *info, rsc_error *err) {
  static const rsc_alloc libc = {0}; /* what rsc_free releases */
  rsc_hr_real r = {opts, {0}};
  char *buf = NULL;
  size_t n = 0;
  rsc_status st;
  if (!opts) {
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (info) memset(info, 0, sizeof *info);
    if (err) *err = (rsc_error){RSC_ERR_STATE, 0, -1, "NULL options"};
    return RSC_ERR_STATE;
  }
  st = rsc__html_rewrite(html, len, flavor, real_rows, &r, &libc, &buf, &n, info, err);
  if (info) info->rewriter = r.stats;
  if (out) *out = buf;
  else rsc__heap_free(&libc, buf);
  if (out_len) *out_len = n;
  return st;
}
