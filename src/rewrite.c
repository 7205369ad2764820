/* rewrite.c - a streaming Flight rewriter (rscflight.h, rewrite.h).
 *
 * Rows come from the framer (frame.c), split anywhere across feeds. A row
 * no rule changes is copied byte for byte (runs of such rows inside one
 * feed in one write). A JSON row is scanned once by a validating scanner
 * that keeps each string's place in the row's bytes; a change is an edit
 * of a span of those bytes (a string written again as JSON.stringify
 * writes it, a member dropped with its comma, a value replaced), and a
 * changed row is its bytes with the edits applied: for rows as React's
 * server writes them (JSON.stringify), the row JSON.stringify would write
 * for the changed value. The scanner keeps byte positions, which the
 * decoder's parse (json_shim.cpp) does not. Nothing is revived: "$"
 * strings are told apart by their first bytes only. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

#include "arena.h"
#include "frame.h"
#include "rewrite.h"
#include "rowtags.h"
#include "textout.h"

#define DEFAULT_MAX_ROW (256ull << 20)
#define DEFAULT_MAX_DEPTH 5000
#define OUT_PIECE 16384 /* changed rows go to the writer in pieces this big */

typedef struct rbuf {
  uint8_t *p;
  size_t len, cap;
} rbuf;

/* A change of a row's data[from..to): a string written again (aux: where
 * the callback's answer is in rep), a member or comma cut, a value set
 * (aux: the set_props rule). */
enum { EDIT_STRING, EDIT_CUT, EDIT_SET };
typedef struct edit {
  size_t from, to, aux;
  int kind;
} edit_rec;

typedef struct step {
  const uint8_t *key; /* raw key bytes in the row (NULL: an index)        */
  size_t key_len;
  bool key_esc; /* the raw key holds escapes                         */
  int64_t index;
} step;

enum { MODE_MODEL, MODE_HINT, MODE_IMPORT };

struct rsc_rewriter {
  rsc_rewrite_options o;
  rsc_alloc al;
  rsc_write_fn write;
  void *wctx;
  rsc__rewrite_row_fn row_fn;
  void *row_ctx;
  rsc_frame *frame;
  rsc_error err;
  rsc_rewrite_stats st;
  bool finished;
  bool write_failed; /* write is not called again                      */
  const rsc_row *cur_row;
  /* the feed under way */
  const uint8_t *feed;
  uint64_t feed_base;
  size_t feed_len;
  uint64_t span_start, span_end; /* unchanged rows not yet written (feed) */
  /* the header of a row that began in an earlier feed */
  rbuf hdr;
  uint64_t hdr_row;
  /* a byte stream row ('b') being read */
  bool b_open;
  uint64_t b_start;
  rbuf out;           /* a row written again, or assembled for row_fn        */
  rbuf rep;           /* replacement bytes of the row's edits                  */
  rbuf sdec;          /* a string's value, decoded                             */
  rbuf sval;          /* a string's value after the rules                      */
  rbuf kdec;          /* keys decoded for the callback's place                 */
  size_t n_edits;     /* changes the first scan of a row found            */
  struct edit *edits; /* where they are, while they take little room */
  size_t edits_cap;
  bool edits_ok; /* every change of the row is in edits                  */
  bool replay;   /* the second scan: the callback's answers from rep   */
  size_t rep_at;
  step *path;
  size_t depth, path_cap;
  rsc_rewrite_step *pub;
  size_t pub_cap;
  rsc_text tx; /* changed rows, through out_sink                       */
};

/* --- small helpers --------------------------------------------------------- */

static bool fail(rsc_rewriter *rw, rsc_status code, uint64_t off, int64_t row, const char *msg) {
  if (!rw->err.code) {
    rw->err.code = code;
    rw->err.offset = off;
    rw->err.row_id = row;
    rw->err.msg = msg;
  }
  return false;
}

static bool grow(rsc_rewriter *rw, void **p, size_t *cap, size_t elem, size_t need) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = rsc__heap_realloc(&rw->al, *p, *cap * elem, c * elem);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

static bool rb_put(rsc_rewriter *rw, rbuf *b, const void *s, size_t n) {
  if (n > b->cap - b->len && !grow(rw, (void **)&b->p, &b->cap, 1, b->len + n)) return false;
  if (n) memcpy(b->p + b->len, s, n);
  b->len += n;
  return true;
}

static void rb_free(rsc_rewriter *rw, rbuf *b) {
  rsc__heap_free(&rw->al, b->p);
  memset(b, 0, sizeof *b);
}

static bool is_newline_row(uint8_t tag) { return tag == 0 || !rsc__is_length_tag(tag); }

static bool str_eq(const rsc_rewrite_str *a, const uint8_t *s, size_t n) {
  return a->len == n && (n == 0 || memcmp(a->p, s, n) == 0);
}

/* --- output ---------------------------------------------------------------- */

static bool out_write(rsc_rewriter *rw, const void *p, size_t n, uint64_t at, int64_t row) {
  if (!n) return true;
  if (rw->write_failed) return false;
  if (rw->write((void *)rw->wctx, (const char *)p, n) != 0) {
    rw->write_failed = true;
    return fail(rw, RSC_ERR_USER, at, row, "the writer stopped the rewrite");
  }
  rw->st.bytes_out += n;
  return true;
}

static bool flush_span(rsc_rewriter *rw) {
  if (rw->span_end == rw->span_start) return true;
  const uint8_t *p = rw->feed + (rw->span_start - rw->feed_base);
  size_t n = (size_t)(rw->span_end - rw->span_start);
  rw->span_start = rw->span_end;
  return out_write(rw, p, n, rw->span_start, -1);
}

/* A row's output, as one piece (row_fn) or written. */
static bool emit(rsc_rewriter *rw, const rsc_row *row, uint64_t in_end, const uint8_t *p, size_t n,
                 bool changed) {
  if (rw->row_fn) {
    if (rw->row_fn(rw->row_ctx, row->offset, in_end, (const char *)p, n, changed) != 0)
      return fail(rw, RSC_ERR_USER, row->offset, row->id, "the row hook stopped the rewrite");
    rw->st.bytes_out += n;
    return true;
  }
  if (!flush_span(rw)) return false;
  return out_write(rw, p, n, row->offset, row->id);
}

/* The row's header (id, ':', tag, length and ','): in the feed, or partly
 * kept from earlier feeds. NULL when memory ran out. */
static const uint8_t *row_header(rsc_rewriter *rw, const rsc_row *row, uint64_t data_offset,
                                 size_t *len) {
  size_t need = (size_t)(data_offset - row->offset);
  *len = need;
  if (row->offset >= rw->feed_base) return rw->feed + (row->offset - rw->feed_base);
  if (rw->hdr_row != row->offset) rw->hdr.len = 0, rw->hdr_row = row->offset;
  if (rw->hdr.len < need && !rb_put(rw, &rw->hdr, rw->feed, need - rw->hdr.len)) {
    fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
    return NULL;
  }
  return rw->hdr.p ? rw->hdr.p : (const uint8_t *)"";
}

/* An unchanged row, copied. */
static bool copy_row(rsc_rewriter *rw, const rsc_row *row) {
  bool nl = is_newline_row(row->tag);
  uint64_t in_end = row->data_offset + row->len + (nl ? 1 : 0);
  bool contiguous = row->in_place && row->offset >= rw->feed_base;
  if (contiguous) {
    if (rw->row_fn)
      return emit(rw, row, in_end, rw->feed + (row->offset - rw->feed_base),
                  (size_t)(in_end - row->offset), false);
    if (rw->span_end != row->offset) {
      if (!flush_span(rw)) return false;
      rw->span_start = row->offset;
    }
    rw->span_end = in_end;
    return true;
  }
  size_t hlen;
  const uint8_t *h = row_header(rw, row, row->data_offset, &hlen);
  if (!h) return false;
  if (!rw->row_fn) {
    if (!flush_span(rw)) return false;
    return out_write(rw, h, hlen, row->offset, row->id) &&
           out_write(rw, row->data, row->len, row->offset, row->id) &&
           (!nl || out_write(rw, "\n", 1, row->offset, row->id));
  }
  rw->out.len = 0;
  if (!rb_put(rw, &rw->out, h, hlen) || !rb_put(rw, &rw->out, row->data, row->len) ||
      (nl && !rb_put(rw, &rw->out, "\n", 1)))
    return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
  return emit(rw, row, in_end, rw->out.p, rw->out.len, false);
}

/* A piece of a byte stream row: written as it comes (row_fn: gathered and
 * handed over whole). */
static bool stream_piece(rsc_rewriter *rw, const rsc_row *row) {
  uint64_t in_end = row->data_offset + row->len;
  if (!rw->b_open) {
    rw->b_open = true;
    rw->b_start = row->offset;
    rw->out.len = 0;
    size_t hlen;
    const uint8_t *h = row_header(rw, row, row->data_offset, &hlen);
    if (!h) return false;
    if (rw->row_fn) {
      if (!rb_put(rw, &rw->out, h, hlen))
        return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
    } else if (row->offset >= rw->feed_base) {
      if (rw->span_end != row->offset) {
        if (!flush_span(rw)) return false;
        rw->span_start = row->offset;
      }
      rw->span_end = row->data_offset;
    } else if (!flush_span(rw) || !out_write(rw, h, hlen, row->offset, row->id)) {
      return false;
    }
  }
  if (rw->row_fn) {
    if (!rb_put(rw, &rw->out, row->data, row->len))
      return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
  } else {
    if (rw->span_end != row->data_offset) {
      if (!flush_span(rw)) return false;
      rw->span_start = row->data_offset;
    }
    rw->span_end = in_end;
  }
  if (row->partial) return true;
  rw->b_open = false;
  rw->st.rows++;
  if (in_end - rw->b_start > rw->st.largest_row) rw->st.largest_row = in_end - rw->b_start;
  if (rw->row_fn) {
    rsc_row whole = *row;
    whole.offset = rw->b_start;
    return emit(rw, &whole, in_end, rw->out.p, rw->out.len, false);
  }
  return true;
}

/* --- the rules ------------------------------------------------------------- */

/* The output of changed rows goes through rw->tx: into rw->out for the
 * row hook, else to the writer in pieces of the tx buffer's size. */
static int out_sink(void *ctx, const char *buf, size_t len) {
  rsc_rewriter *rw = (rsc_rewriter *)ctx;
  const rsc_row *row = rw->cur_row;
  if (rw->row_fn) {
    if (rb_put(rw, &rw->out, buf, len)) return 0;
    fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
    return 1;
  }
  return out_write(rw, buf, len, row->offset, row->id) ? 0 : 1;
}

/* The place of the string being looked at, for the callback. */
static bool make_place(rsc_rewriter *rw, const rsc_row *row, rsc_rewrite_place *pl);

/* A new string value: a[0..an) then b[0..bn). */
typedef struct newval {
  const uint8_t *a, *b;
  size_t an, bn;
} newval;

/* Applies the rules to the value v[0..n): 1 and the new value in *nv when
 * it changes, 0 when not, -1 on an error. A changed JSON row is scanned
 * twice (to know that it changes, then to write it): the callback runs in
 * the first scan only, its answers kept in rep and replayed in the second. */
static int apply_rules(rsc_rewriter *rw, const rsc_row *row, const uint8_t *v, size_t n,
                       newval *nv) {
  const rsc_rewrite_options *o = &rw->o;
  newval r = {NULL, NULL, 0, 0};
  bool changed = false;
  for (size_t i = 0; i < o->exact_count; i++)
    if (str_eq(&o->exact[i].from, v, n)) {
      r.a = (const uint8_t *)o->exact[i].to.p, r.an = o->exact[i].to.len;
      changed = true;
      break;
    }
  if (!changed)
    for (size_t i = 0; i < o->prefix_count; i++) {
      const rsc_rewrite_str *f = &o->prefix[i].from;
      if (f->len <= n && (f->len == 0 || memcmp(f->p, v, f->len) == 0)) {
        r.a = (const uint8_t *)o->prefix[i].to.p, r.an = o->prefix[i].to.len;
        r.b = v + f->len, r.bn = n - f->len;
        changed = true;
        break;
      }
    }
  if (o->fn && rw->replay) {
    uint8_t tag = rw->rep.p[rw->rep_at++];
    if (tag) {
      size_t len;
      memcpy(&len, rw->rep.p + rw->rep_at, sizeof len);
      r.a = rw->rep.p + rw->rep_at + sizeof len, r.an = len;
      r.b = NULL, r.bn = 0;
      rw->rep_at += sizeof len + len;
      changed = true;
    }
  } else if (o->fn) {
    const uint8_t *cur = v;
    size_t cur_n = n;
    if (changed) {
      rw->sval.len = 0;
      if (!rb_put(rw, &rw->sval, r.a, r.an) || !rb_put(rw, &rw->sval, r.b, r.bn)) goto nomem;
      cur = rw->sval.p ? rw->sval.p : (const uint8_t *)"", cur_n = rw->sval.len;
    }
    rsc_rewrite_place pl;
    if (!make_place(rw, row, &pl)) return -1;
    const char *out = NULL;
    size_t out_n = 0;
    int k = o->fn(o->fn_ctx, &pl, (const char *)cur, cur_n, &out, &out_n);
    if (k != 0 && k != 1) {
      fail(rw, RSC_ERR_USER, row->offset, row->id, "the string callback stopped the rewrite");
      return -1;
    }
    uint8_t tag = (uint8_t)k;
    size_t at = rw->rep.len;
    if (!rb_put(rw, &rw->rep, &tag, 1)) goto nomem;
    if (k == 1) {
      if (!rb_put(rw, &rw->rep, &out_n, sizeof out_n) || !rb_put(rw, &rw->rep, out, out_n))
        goto nomem;
      r.a = rw->rep.p + at + 1 + sizeof out_n, r.an = out_n;
      r.b = NULL, r.bn = 0;
      changed = true;
    }
  }
  if (!changed) return 0;
  if (r.an + r.bn == n && (r.an == 0 || memcmp(r.a, v, r.an) == 0) &&
      (r.bn == 0 || memcmp(r.b, v + r.an, r.bn) == 0))
    return 0;
  *nv = r;
  return 1;
nomem:
  fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
  return -1;
}

/* --- the JSON scanner ---------------------------------------------------- */

typedef struct scan {
  rsc_rewriter *rw;
  const rsc_row *row;
  const uint8_t *p;
  size_t n, i;
  size_t base; /* p[0] is the row's data[base] (a hint's code byte)     */
  int mode;
  bool dollar;      /* "$" strings are Flight's forms ("$$": a "$" string) */
  bool parcel;      /* an I row's metadata is Parcel's (item 1 a string)   */
  bool emit;        /* the second scan: writes the row as it goes        */
  size_t at;        /* (emit) the row's data written up to here          */
  const char *what; /* "model row", ... for error messages           */
} scan;

static const char *const bad_json[] = {"model row is not valid JSON", "hint row is not valid JSON",
                                       "I row is not valid JSON"};

static bool syntax(scan *s) {
  return fail(s->rw, RSC_ERR_BAD_ROW, s->row->data_offset + s->base + s->i, s->row->id,
              bad_json[s->mode]);
}

static inline void skip_ws(scan *s) {
  while (s->i < s->n) {
    uint8_t c = s->p[s->i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    s->i++;
  }
}

static int hexval(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The first byte at or after i that ends a run of plain string bytes: a
 * '"', a '\\' or a control (n when none). */
#if defined(__SSE2__)
static inline size_t plain_run(const uint8_t *p, size_t i, size_t n) {
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
  while (i + 16 <= n) {
    __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
                             _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if (mask) return i + (size_t)__builtin_ctz(mask);
    i += 16;
  }
  while (i < n && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20) i++;
  return i;
}
#else
static inline size_t plain_run(const uint8_t *p, size_t i, size_t n) {
  while (i < n && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20) i++;
  return i;
}
#endif

/* The string token at s->i ('"'): its content's span and whether it holds
 * escapes; s->i ends past the closing quote. */
static bool string_token(scan *s, size_t *start, size_t *end, bool *esc) {
  const uint8_t *p = s->p;
  size_t i = s->i + 1, n = s->n;
  *start = i;
  *esc = false;
  for (;;) {
    i = plain_run(p, i, n);
    if (i >= n) {
      s->i = n;
      return syntax(s);
    }
    uint8_t c = p[i];
    if (c == '"') break;
    if (c < 0x20) {
      s->i = i;
      return syntax(s);
    }
    /* an escape */
    *esc = true;
    if (i + 1 >= n) {
      s->i = n;
      return syntax(s);
    }
    uint8_t e = p[i + 1];
    if (e == 'u') {
      if (i + 6 > n || hexval(p[i + 2]) < 0 || hexval(p[i + 3]) < 0 || hexval(p[i + 4]) < 0 ||
          hexval(p[i + 5]) < 0) {
        s->i = i + 1;
        return syntax(s);
      }
      i += 6;
    } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
               e == 't') {
      i += 2;
    } else {
      s->i = i + 1;
      return syntax(s);
    }
  }
  *end = i;
  s->i = i + 1;
  return true;
}

static void put_utf8(uint8_t *o, size_t *k, uint32_t cp) {
  if (cp < 0x80) o[(*k)++] = (uint8_t)cp;
  else if (cp < 0x800) {
    o[(*k)++] = (uint8_t)(0xC0 | cp >> 6);
    o[(*k)++] = (uint8_t)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    o[(*k)++] = (uint8_t)(0xE0 | cp >> 12);
    o[(*k)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[(*k)++] = (uint8_t)(0x80 | (cp & 0x3F));
  } else {
    o[(*k)++] = (uint8_t)(0xF0 | cp >> 18);
    o[(*k)++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[(*k)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[(*k)++] = (uint8_t)(0x80 | (cp & 0x3F));
  }
}

/* Decodes a checked string token's content into b (lone surrogates as
 * WTF-8, as the library keeps them). */
static bool decode_into(rsc_rewriter *rw, rbuf *b, const uint8_t *p, size_t n) {
  b->len = 0;
  if (n > b->cap && !grow(rw, (void **)&b->p, &b->cap, 1, n)) return false;
  uint8_t *o = b->p;
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    if (p[i] != '\\') {
      o[k++] = p[i++];
      continue;
    }
    uint8_t e = p[i + 1];
    i += 2;
    switch (e) {
    case 'b': o[k++] = '\b'; break;
    case 'f': o[k++] = '\f'; break;
    case 'n': o[k++] = '\n'; break;
    case 'r': o[k++] = '\r'; break;
    case 't': o[k++] = '\t'; break;
    case 'u': {
      uint32_t cp = (uint32_t)(hexval(p[i]) << 12 | hexval(p[i + 1]) << 8 | hexval(p[i + 2]) << 4 |
                               hexval(p[i + 3]));
      i += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= n && p[i] == '\\' && p[i + 1] == 'u') {
        uint32_t lo = (uint32_t)(hexval(p[i + 2]) << 12 | hexval(p[i + 3]) << 8 |
                                 hexval(p[i + 4]) << 4 | hexval(p[i + 5]));
        if (lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        }
      }
      put_utf8(o, &k, cp); /* an escape is 6 bytes: its UTF-8 fits */
      break;
    }
    default: o[k++] = e; break;
    }
  }
  b->len = k;
  return true;
}

static bool make_place(rsc_rewriter *rw, const rsc_row *row, rsc_rewrite_place *pl) {
  size_t d = rw->depth;
  if (!grow(rw, (void **)&rw->pub, &rw->pub_cap, sizeof *rw->pub, d + 1))
    return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
  /* escaped keys are decoded one after another into kdec (not moved
   * once all are in: offsets first, pointers after) */
  rw->kdec.len = 0;
  for (size_t k = 0; k < d; k++) {
    step *st = &rw->path[k];
    rsc_rewrite_step *ps = &rw->pub[k];
    ps->index = st->index;
    ps->key = NULL;
    ps->key_len = 0;
    if (!st->key) continue;
    if (!st->key_esc) {
      ps->key = (const char *)st->key;
      ps->key_len = st->key_len;
      continue;
    }
    rbuf tmp = {0};
    if (!decode_into(rw, &tmp, st->key, st->key_len)) {
      rb_free(rw, &tmp);
      return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
    }
    size_t at = rw->kdec.len;
    bool ok = rb_put(rw, &rw->kdec, tmp.p, tmp.len);
    rb_free(rw, &tmp);
    if (!ok) return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
    ps->key = (const char *)(uintptr_t)at; /* an offset until the end */
    ps->key_len = rw->kdec.len - at;
  }
  for (size_t k = 0; k < d; k++)
    if (rw->path[k].key && rw->path[k].key_esc)
      rw->pub[k].key = (const char *)rw->kdec.p + (uintptr_t)rw->pub[k].key;
  pl->row_id = row->id;
  pl->tag = (char)row->tag;
  pl->depth = d;
  pl->path = rw->pub;
  return true;
}

/* Whether a key (raw bytes, maybe escaped) is s; false with the error set
 * when memory ran out decoding it. */
static bool key_is(rsc_rewriter *rw, const step *st, const rsc_rewrite_str *s) {
  if (!st->key_esc) return str_eq(s, st->key, st->key_len);
  rbuf tmp = {0};
  bool r = false;
  if (decode_into(rw, &tmp, st->key, st->key_len)) r = str_eq(s, tmp.p, tmp.len);
  else fail(rw, RSC_ERR_NOMEM, rw->cur_row->offset, rw->cur_row->id, "out of memory");
  rb_free(rw, &tmp);
  return r;
}

/* Whether the rules look at the string at the current path. */
static bool eligible(scan *s) {
  rsc_rewriter *rw = s->rw;
  size_t d = rw->depth;
  switch (s->mode) {
  case MODE_HINT: return d == 0 || (d == 1 && rw->path[0].index == 0);
  case MODE_IMPORT:
    if (d < 2) return false;
    if (rw->path[0].key) {
      static const rsc_rewrite_str chunks = {"chunks", 6};
      return key_is(rw, &rw->path[0], &chunks);
    }
    return rw->path[0].index == (s->parcel ? 2 : 1);
  default: break;
  }
  if (!rw->o.keys_count) return true;
  for (size_t k = d; k-- > 0;)
    if (rw->path[k].key) {
      for (size_t j = 0; j < rw->o.keys_count; j++)
        if (key_is(rw, &rw->path[k], &rw->o.keys[j])) return true;
      return false;
    }
  return false;
}

/* A change of the row's data[from..to) (what replaces it is written next,
 * by the caller): counted in the first scan, written in the second. */
static bool edit(scan *s, size_t from, size_t to, int kind, size_t aux) {
  rsc_rewriter *rw = s->rw;
  if (!s->emit) {
    rw->n_edits++;
    /* kept while they take at most an eighth of the row's size (a row of
     * tiny changed strings is scanned again instead) */
    if (rw->edits_ok) {
      if (rw->n_edits * sizeof(edit_rec) > s->row->len / 8 + 4096 ||
          !grow(rw, (void **)&rw->edits, &rw->edits_cap, sizeof(edit_rec), rw->n_edits)) {
        rw->edits_ok = false;
        return true;
      }
      edit_rec *e = &rw->edits[rw->n_edits - 1];
      *e = (edit_rec){from, to, aux, kind};
    }
    return true;
  }
  rsc__text_put(&rw->tx, (const char *)s->row->data + s->at, from - s->at);
  s->at = to;
  return true;
}

static void put_string(rsc_rewriter *rw, bool dollar, const newval *nv);

/* A string value: its content is p[start..end), escapes in it or not. */
static bool string_value(scan *s, size_t start, size_t end, bool esc) {
  rsc_rewriter *rw = s->rw;
  bool look = eligible(s);
  if (rw->err.code) return false;
  if (!look) return true;
  const uint8_t *v = s->p + start;
  size_t n = end - start;
  if (esc) {
    if (!decode_into(rw, &rw->sdec, v, n))
      return fail(rw, RSC_ERR_NOMEM, s->row->offset, s->row->id, "out of memory");
    v = rw->sdec.p;
    n = rw->sdec.len;
  }
  if (s->dollar && n > 0 && v[0] == '$') {
    if (n < 2 || v[1] != '$') return true; /* a reference or a tag */
    v++, n--;
  }
  newval nv;
  size_t rep_mark = rw->rep.len;
  int r = apply_rules(rw, s->row, v, n, &nv);
  if (r <= 0) return r == 0;
  if (!s->emit) rw->st.strings_changed++;
  if (!edit(s, s->base + start - 1, s->base + end + 1, EDIT_STRING, rep_mark)) return false;
  if (s->emit) put_string(rw, s->dollar, &nv);
  return true;
}

/* A new string value as JSON.stringify writes it ("$$" before a "$"). */
static void put_string(rsc_rewriter *rw, bool dollar, const newval *nv) {
  rsc_text *tx = &rw->tx;
  uint8_t first = nv->an ? nv->a[0] : nv->bn ? nv->b[0] : 0;
  rsc__text_put(tx, dollar && first == '$' ? "\"$" : "\"", dollar && first == '$' ? 2 : 1);
  rsc__text_json_escaped(tx, (const char *)nv->a, nv->an);
  rsc__text_json_escaped(tx, (const char *)nv->b, nv->bn);
  rsc__text_put(tx, "\"", 1);
}

static bool value(scan *s, bool quiet);

static bool push(scan *s, const uint8_t *key, size_t key_len, bool esc, int64_t index) {
  rsc_rewriter *rw = s->rw;
  if (!grow(rw, (void **)&rw->path, &rw->path_cap, sizeof *rw->path, rw->depth + 1))
    return fail(rw, RSC_ERR_NOMEM, s->row->offset, s->row->id, "out of memory");
  step *st = &rw->path[rw->depth++];
  st->key = key;
  st->key_len = key_len;
  st->key_esc = esc;
  st->index = index;
  return true;
}

/* The prop rule for a member's key: 1 drop, 2 set (*rule), 0 none. */
static int prop_rule(scan *s, const step *st, const rsc_rewrite_rule **rule) {
  rsc_rewriter *rw = s->rw;
  if (s->mode != MODE_MODEL) return 0;
  for (size_t j = 0; j < rw->o.drop_props_count; j++)
    if (key_is(rw, st, &rw->o.drop_props[j])) return 1;
  for (size_t j = 0; j < rw->o.set_props_count; j++)
    if (key_is(rw, st, &rw->o.set_props[j].from)) {
      *rule = &rw->o.set_props[j];
      return 2;
    }
  return 0;
}

static bool object(scan *s, bool quiet) {
  rsc_rewriter *rw = s->rw;
  bool props = !quiet && (rw->o.drop_props_count || rw->o.set_props_count);
  size_t prev_end = s->i + 1; /* end of the previous member (or '{') */
  bool any_kept = false, pending = false;
  s->i++;
  skip_ws(s);
  if (s->i < s->n && s->p[s->i] == '}') {
    s->i++;
    return true;
  }
  for (;;) {
    skip_ws(s);
    if (s->i >= s->n || s->p[s->i] != '"') return syntax(s);
    size_t key_tok = s->i, ks, ke;
    bool kesc;
    if (!string_token(s, &ks, &ke, &kesc)) return false;
    skip_ws(s);
    if (s->i >= s->n || s->p[s->i] != ':') return syntax(s);
    s->i++;
    skip_ws(s);
    if (!push(s, s->p + ks, ke - ks, kesc, -1)) return false;
    const rsc_rewrite_rule *set = NULL;
    int pr = props ? prop_rule(s, &rw->path[rw->depth - 1], &set) : 0;
    if (rw->err.code) return false;
    if (pr != 1 && pending) { /* the comma after members dropped before it */
      if (!edit(s, s->base + prev_end, s->base + key_tok, EDIT_CUT, 0)) return false;
      pending = false;
    }
    size_t vstart = s->i;
    if (!value(s, quiet || pr != 0)) return false;
    rw->depth--;
    size_t vend = s->i;
    if (pr == 1) {
      if (!s->emit) rw->st.props_dropped++;
      if (any_kept || pending) { /* with the comma before it */
        if (!edit(s, s->base + prev_end, s->base + vend, EDIT_CUT, 0)) return false;
      } else {
        if (!edit(s, s->base + key_tok, s->base + vend, EDIT_CUT, 0)) return false;
        pending = true;
      }
    } else {
      any_kept = true;
      if (pr == 2) {
        if (!s->emit) rw->st.props_set++;
        if (!edit(s, s->base + vstart, s->base + vend, EDIT_SET, (size_t)(set - rw->o.set_props)))
          return false;
        if (s->emit) rsc__text_put(&rw->tx, set->to.p, set->to.len);
      }
    }
    prev_end = vend;
    skip_ws(s);
    if (s->i >= s->n) return syntax(s);
    uint8_t c = s->p[s->i++];
    if (c == '}') return true;
    if (c != ',') {
      s->i--;
      return syntax(s);
    }
  }
}

static bool array(scan *s, bool quiet) {
  rsc_rewriter *rw = s->rw;
  s->i++;
  skip_ws(s);
  if (s->i < s->n && s->p[s->i] == ']') {
    s->i++;
    return true;
  }
  for (int64_t k = 0;; k++) {
    skip_ws(s);
    if (!push(s, NULL, 0, false, k)) return false;
    if (s->mode == MODE_IMPORT && rw->depth == 1 && k == 1 && s->i < s->n && s->p[s->i] == '"')
      s->parcel = true;
    if (!value(s, quiet)) return false;
    rw->depth--;
    skip_ws(s);
    if (s->i >= s->n) return syntax(s);
    uint8_t c = s->p[s->i++];
    if (c == ']') return true;
    if (c != ',') {
      s->i--;
      return syntax(s);
    }
  }
}

static bool number(scan *s) {
  const uint8_t *p = s->p;
  size_t i = s->i, n = s->n;
  if (i < n && p[i] == '-') i++;
  if (i >= n) goto bad;
  if (p[i] == '0') i++;
  else if (p[i] >= '1' && p[i] <= '9')
    while (i < n && p[i] >= '0' && p[i] <= '9') i++;
  else goto bad;
  if (i < n && p[i] == '.') {
    i++;
    if (i >= n || p[i] < '0' || p[i] > '9') goto bad;
    while (i < n && p[i] >= '0' && p[i] <= '9') i++;
  }
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    i++;
    if (i < n && (p[i] == '+' || p[i] == '-')) i++;
    if (i >= n || p[i] < '0' || p[i] > '9') goto bad;
    while (i < n && p[i] >= '0' && p[i] <= '9') i++;
  }
  s->i = i;
  return true;
bad:
  s->i = i;
  return syntax(s);
}

static bool literal(scan *s, const char *w, size_t len) {
  if (s->n - s->i < len || memcmp(s->p + s->i, w, len) != 0) return syntax(s);
  s->i += len;
  return true;
}

static bool value(scan *s, bool quiet) {
  if (s->i >= s->n) return syntax(s);
  uint8_t c = s->p[s->i];
  if ((c == '{' || c == '[') && s->rw->depth >= s->rw->o.max_depth)
    return fail(s->rw, RSC_ERR_LIMIT, s->row->data_offset + s->base + s->i, s->row->id,
                "JSON nesting deeper than the depth limit");
  switch (c) {
  case '{': return object(s, quiet);
  case '[': return array(s, quiet);
  case '"': {
    size_t a, b;
    bool esc;
    if (!string_token(s, &a, &b, &esc)) return false;
    return quiet || string_value(s, a, b, esc);
  }
  case 't': return literal(s, "true", 4);
  case 'f': return literal(s, "false", 5);
  case 'n': return literal(s, "null", 4);
  default: return number(s);
  }
}

/* Scans the row's JSON (its data from base on): the first scan counts the
 * changes (n_edits), the second (emit) writes the row through tx. */
static bool scan_json(rsc_rewriter *rw, const rsc_row *row, size_t base, int mode, bool emit) {
  scan s = {rw,   row,  row->data + base,  row->len - base, 0,
            base, mode, mode != MODE_HINT, false,           emit,
            0,    NULL};
  rw->depth = 0;
  skip_ws(&s);
  if (!value(&s, false)) return false;
  skip_ws(&s);
  if (s.i != s.n) return syntax(&s);
  if (emit) rsc__text_put(&rw->tx, (const char *)row->data + s.at, row->len - s.at);
  return true;
}

/* Writes a changed row's data from its edits (instead of a second scan). */
static bool replay_edits(rsc_rewriter *rw, const rsc_row *row, int mode) {
  const uint8_t *d = row->data;
  size_t at = 0;
  for (size_t k = 0; k < rw->n_edits; k++) {
    edit_rec *e = &rw->edits[k];
    rsc__text_put(&rw->tx, (const char *)d + at, e->from - at);
    at = e->to;
    if (e->kind == EDIT_SET) {
      const rsc_rewrite_str *to = &rw->o.set_props[e->aux].to;
      rsc__text_put(&rw->tx, to->p, to->len);
    } else if (e->kind == EDIT_STRING) {
      const uint8_t *v = d + e->from + 1;
      size_t n = e->to - e->from - 2;
      if (memchr(v, '\\', n)) {
        if (!decode_into(rw, &rw->sdec, v, n))
          return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
        v = rw->sdec.p, n = rw->sdec.len;
      }
      bool dollar = mode != MODE_HINT;
      if (dollar && n > 0 && v[0] == '$') v++, n--; /* "$$" */
      newval nv;
      rw->rep_at = e->aux;
      if (apply_rules(rw, row, v, n, &nv) != 1) /* as in the first scan */
        return fail(rw, RSC_ERR_STATE, row->offset, row->id, "rewrite: replay mismatch");
      put_string(rw, dollar, &nv);
    }
  }
  rsc__text_put(&rw->tx, (const char *)d + at, row->len - at);
  return true;
}

/* --- rows ---------------------------------------------------------------- */

/* Starts a changed row's output (its header is written next). */
static bool begin_changed(rsc_rewriter *rw) {
  if (rw->row_fn) rw->out.len = 0;
  else if (!flush_span(rw)) return false;
  return true;
}

/* Ends a changed row's output: written, or handed to the row hook. */
static bool end_changed(rsc_rewriter *rw, const rsc_row *row, uint64_t in_end) {
  rsc__text_flush(&rw->tx);
  if (rw->err.code) return false;
  if (rw->tx.status) return fail(rw, RSC_ERR_NOMEM, row->offset, row->id, "out of memory");
  rw->st.rows_changed++;
  if (!rw->row_fn) return true;
  return emit(rw, row, in_end, rw->out.p, rw->out.len, true);
}

static bool text_row(rsc_rewriter *rw, const rsc_row *row) {
  if (rw->o.keys_count) return copy_row(rw, row);
  rw->depth = 0;
  rw->replay = false;
  rw->rep.len = 0;
  newval nv;
  int r = apply_rules(rw, row, row->data, row->len, &nv);
  if (r < 0) return false;
  if (r == 0) return copy_row(rw, row);
  rw->st.strings_changed++;
  size_t hlen;
  const uint8_t *h = row_header(rw, row, row->data_offset, &hlen);
  if (!h || !begin_changed(rw)) return false;
  /* the header up to its tag, then the new byte length */
  size_t t = 0;
  while (t < hlen && h[t] != ':') t++;
  char hex[17];
  size_t hn = 0;
  uint64_t v = nv.an + nv.bn;
  do hex[16 - hn++] = "0123456789abcdef"[v & 15];
  while ((v >>= 4) != 0);
  rsc_text *tx = &rw->tx;
  rsc__text_put(tx, (const char *)h, t + 2);
  rsc__text_put(tx, hex + 17 - hn, hn);
  rsc__text_put(tx, ",", 1);
  if (nv.an) rsc__text_put(tx, (const char *)nv.a, nv.an);
  if (nv.bn) rsc__text_put(tx, (const char *)nv.b, nv.bn);
  return end_changed(rw, row, row->data_offset + row->len);
}

static rsc_status on_row(void *ctx, const rsc_row *row) {
  rsc_rewriter *rw = (rsc_rewriter *)ctx;
  rw->cur_row = row;
  if (row->tag == 'b') return stream_piece(rw, row) ? RSC_OK : rw->err.code;
  rw->st.rows++;
  uint64_t size = row->data_offset + row->len + is_newline_row(row->tag) - row->offset;
  if (size > rw->st.largest_row) rw->st.largest_row = size;
  int mode;
  size_t base = 0;
  switch (row->tag) {
  case 0:
    if (!rw->o.exact_count && !rw->o.prefix_count && !rw->o.fn && !rw->o.drop_props_count &&
        !rw->o.set_props_count)
      return copy_row(rw, row) ? RSC_OK : rw->err.code;
    mode = MODE_MODEL;
    break;
  case 'C': /* a stream's close: its return value is a model value */
    if (row->len == 0) return copy_row(rw, row) ? RSC_OK : rw->err.code;
    if (!rw->o.exact_count && !rw->o.prefix_count && !rw->o.fn && !rw->o.drop_props_count &&
        !rw->o.set_props_count)
      return copy_row(rw, row) ? RSC_OK : rw->err.code;
    mode = MODE_MODEL;
    break;
  case 'T': return text_row(rw, row) ? RSC_OK : rw->err.code;
  case 'H':
    if ((rw->o.flags & RSC_REWRITE_NO_HINTS) || row->len == 0)
      return copy_row(rw, row) ? RSC_OK : rw->err.code;
    mode = MODE_HINT;
    base = 1;
    break;
  case 'I':
    if (rw->o.flags & RSC_REWRITE_NO_IMPORTS) return copy_row(rw, row) ? RSC_OK : rw->err.code;
    mode = MODE_IMPORT;
    break;
  default: return copy_row(rw, row) ? RSC_OK : rw->err.code;
  }
  if (mode != MODE_MODEL && !rw->o.exact_count && !rw->o.prefix_count && !rw->o.fn)
    return copy_row(rw, row) ? RSC_OK : rw->err.code;
  rw->n_edits = 0;
  rw->edits_ok = true;
  rw->rep.len = 0;
  rw->replay = false;
  if (!scan_json(rw, row, base, mode, false)) return rw->err.code;
  if (!rw->n_edits) return copy_row(rw, row) ? RSC_OK : rw->err.code;
  size_t hlen;
  const uint8_t *h = row_header(rw, row, row->data_offset, &hlen);
  if (!h || !begin_changed(rw)) return rw->err.code;
  rsc__text_put(&rw->tx, (const char *)h, hlen);
  rw->replay = true;
  rw->rep_at = 0;
  if (rw->edits_ok ? !replay_edits(rw, row, mode) : !scan_json(rw, row, base, mode, true))
    return rw->err.code;
  if (is_newline_row(row->tag)) rsc__text_put(&rw->tx, "\n", 1);
  uint64_t in_end = row->data_offset + row->len + (is_newline_row(row->tag) ? 1 : 0);
  return end_changed(rw, row, in_end) ? RSC_OK : rw->err.code;
}

/* --- the API ------------------------------------------------------------- */

void rsc_rewrite_options_init(rsc_rewrite_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

static int no_write(void *ctx, const char *buf, size_t len) {
  (void)ctx, (void)buf, (void)len;
  return 0;
}

rsc_rewriter *rsc_rewriter_new(const rsc_rewrite_options *opts, rsc_write_fn write, void *ctx) {
  rsc_rewrite_options o;
  if (opts) o = *opts;
  else rsc_rewrite_options_init(&o);
  if ((o.exact_count && !o.exact) || (o.prefix_count && !o.prefix) || (o.keys_count && !o.keys) ||
      (o.drop_props_count && !o.drop_props) || (o.set_props_count && !o.set_props))
    return NULL;
  if (!o.max_row_bytes) o.max_row_bytes = DEFAULT_MAX_ROW;
  if (!o.max_depth) o.max_depth = DEFAULT_MAX_DEPTH;
  rsc_rewriter *rw = (rsc_rewriter *)rsc__heap_alloc(&o.alloc, sizeof *rw);
  if (!rw) return NULL;
  memset(rw, 0, sizeof *rw);
  rw->o = o;
  rw->al = o.alloc;
  rw->write = write ? write : no_write;
  rw->wctx = ctx;
  rw->hdr_row = UINT64_MAX;
  rw->frame = rsc__frame_new(&rw->al, false, o.max_row_bytes);
  if (!rw->frame) {
    rsc__heap_free(&rw->al, rw);
    return NULL;
  }
  rw->tx.write = out_sink;
  rw->tx.ctx = rw;
  rw->tx.cap = OUT_PIECE;
  rw->tx.p = (char *)rsc__heap_alloc(&rw->al, OUT_PIECE);
  if (!rw->tx.p) {
    rsc_rewriter_free(rw);
    return NULL;
  }
  /* the values of set_props must be JSON */
  for (size_t j = 0; j < o.set_props_count; j++) {
    rsc_row r = {0};
    r.data = (const uint8_t *)o.set_props[j].to.p;
    r.len = o.set_props[j].to.len;
    scan s = {rw, &r, r.data, r.len, 0, 0, MODE_HINT, false, false, false, 0, NULL};
    skip_ws(&s);
    bool ok = r.len && value(&s, true);
    skip_ws(&s);
    if (!ok || s.i != s.n) {
      rsc_rewriter_free(rw);
      return NULL;
    }
  }
  return rw;
}

void rsc__rewriter_set_row_fn(rsc_rewriter *rw, rsc__rewrite_row_fn fn, void *ctx) {
  if (!rw) return;
  rw->row_fn = fn;
  rw->row_ctx = ctx;
}

/* Keeps the header bytes of the row the feed leaves unfinished. */
static bool keep_header(rsc_rewriter *rw) {
  rsc_frame *f = rw->frame;
  if (!rsc__frame_in_row(f)) return true;
  if (rw->hdr_row != f->row_start) rw->hdr.len = 0, rw->hdr_row = f->row_start;
  uint64_t end = rw->feed_base + rw->feed_len;
  bool data = f->state == ROW_CHUNK_BY_NEWLINE || f->state == ROW_CHUNK_BY_LENGTH;
  if (data && f->data_start < end) end = f->data_start;
  uint64_t start = f->row_start > rw->feed_base ? f->row_start : rw->feed_base;
  if (end <= start) return true;
  if (!rb_put(rw, &rw->hdr, rw->feed + (start - rw->feed_base), (size_t)(end - start)))
    return fail(rw, RSC_ERR_NOMEM, f->row_start, rsc__frame_row_id(f), "out of memory");
  return true;
}

rsc_status rsc_rewriter_feed(rsc_rewriter *rw, const void *buf, size_t len) {
  if (!rw) return RSC_ERR_STATE;
  if (rw->err.code) return rw->err.code;
  if (rw->finished) {
    fail(rw, RSC_ERR_STATE, rsc__frame_offset(rw->frame), -1, "feed after finish");
    return rw->err.code;
  }
  if (!len) return RSC_OK;
  if (!buf) {
    fail(rw, RSC_ERR_STATE, rsc__frame_offset(rw->frame), -1, "NULL buffer");
    return rw->err.code;
  }
  rw->feed = (const uint8_t *)buf;
  rw->feed_base = rsc__frame_offset(rw->frame);
  rw->feed_len = len;
  rw->span_start = rw->span_end = rw->feed_base;
  rsc_error ferr = {0};
  rsc_status st = rsc__frame_feed(rw->frame, rw->feed, len, on_row, rw, &ferr);
  if (st != RSC_OK) {
    if (!rw->err.code) rw->err = ferr;
    /* the rows before the one that failed are written (not when the
     * writer is what failed) */
    if (!rw->write_failed) {
      rsc_error keep = rw->err;
      flush_span(rw);
      rw->err = keep;
    }
    return rw->err.code;
  }
  rw->st.bytes_in += len;
  if (!flush_span(rw) || !keep_header(rw)) return rw->err.code;
  rw->feed = NULL;
  return RSC_OK;
}

rsc_status rsc_rewriter_finish(rsc_rewriter *rw) {
  if (!rw) return RSC_ERR_STATE;
  if (rw->err.code) return rw->err.code;
  if (rw->finished) return RSC_OK;
  rw->finished = true;
  rsc_frame *f = rw->frame;
  if (rsc__frame_in_row(f)) {
    fail(rw, RSC_ERR_BAD_ROW, f->row_start, f->state == ROW_ID && !f->id_digits ? -1 : f->row_id,
         "the payload ends inside a row");
    return rw->err.code;
  }
  return RSC_OK;
}

const rsc_error *rsc_rewriter_error(const rsc_rewriter *rw) {
  static const rsc_error none = {RSC_OK, 0, -1, NULL};
  static const rsc_error state = {RSC_ERR_STATE, 0, -1, "NULL rewriter"};
  if (!rw) return &state;
  return rw->err.code ? &rw->err : &none;
}

const rsc_rewrite_stats *rsc_rewriter_stats(const rsc_rewriter *rw) {
  static const rsc_rewrite_stats zero;
  return rw ? &rw->st : &zero;
}

void rsc_rewriter_free(rsc_rewriter *rw) {
  if (!rw) return;
  rsc__frame_free(rw->frame);
  rb_free(rw, &rw->hdr);
  rb_free(rw, &rw->out);
  rb_free(rw, &rw->rep);
  rb_free(rw, &rw->sdec);
  rb_free(rw, &rw->sval);
  rb_free(rw, &rw->kdec);
  rsc__heap_free(&rw->al, rw->tx.p);
  rsc__heap_free(&rw->al, rw->edits);
  rsc__heap_free(&rw->al, rw->path);
  rsc__heap_free(&rw->al, rw->pub);
  rsc_alloc al = rw->al;
  rsc__heap_free(&al, rw);
}

rsc_status rsc_rewrite(const void *buf, size_t len, const rsc_rewrite_options *opts,
                       rsc_write_fn write, void *ctx, rsc_error *err, rsc_rewrite_stats *stats) {
  rsc_rewriter *rw = rsc_rewriter_new(opts, write, ctx);
  if (!rw) {
    if (err) {
      err->code = RSC_ERR_NOMEM;
      err->offset = 0;
      err->row_id = -1;
      err->msg = "out of memory, or invalid options";
    }
    return RSC_ERR_NOMEM;
  }
  rsc_rewriter_feed(rw, buf, len);
  rsc_rewriter_finish(rw);
  rsc_status st = rw->err.code;
  if (err) *err = *rsc_rewriter_error(rw);
  if (stats) *stats = rw->st;
  rsc_rewriter_free(rw);
  return st;
}
