/* fuzz_write.c - the stages that write Flight or read it for a person:
 * rsc_encode and rsc_encode_ready, the rewriter, the byte report. Input:
 * the decode harness's format (fuzz_common.h); byte 3's bits 2-7 choose
 * what runs (below).
 *
 * Checks beyond "no crash, no sanitizer report, no leak":
 *   - encode: when the decode succeeds, rsc_encode succeeds (or fails with
 *     the error of reading a chunk no one had read) and, when the stream
 *     did not end inside a row, its rows decode (with the same options) to
 *     the same dump (but for a row that names itself, names_own_row, and
 *     for React's lazies around elements, strip_element_lazies); rsc_encode_ready,
 *     called after every feed and once after finish, writes the same
 *     bytes; with the failing allocator, a failed allocation is never a
 *     success and every block comes back;
 *   - rewrite: the streaming rewriter fed in the chosen pieces writes the
 *     same bytes and stops at the same error (code, offset, row) as
 *     rsc_rewrite fed whole; with no rule, what it writes is the input;
 *     a payload the strict decoder accepts (that does not end inside a
 *     row, and whose model rows are JSON: the decoder rejects the chunk of
 *     one that is not, the rewriter stops), the rewriter accepts, and what
 *     it writes decodes too;
 *   - report: a page whenever its writer takes it, whatever the payload. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* byte 3: bit 2 encode while feeding (rsc_encode_ready); bits 3-4 the
 * rewrite rule; bit 5 the byte report. */
enum { W_READY = 4, W_RULE_SHIFT = 3, W_REPORT = 32 };

static int count_only(void *ctx, const char *s, size_t n) {
  (void)s;
  *(size_t *)ctx += n;
  return 0;
}

/* Whether a row of p names itself ("$h0", "$L0", "$0:a" in row 0): React's
 * client then waits on the row being read, and a blocked element around
 * such a reference stays a lazy of itself once it settles; no server
 * writes it, and the writer, which writes the element where the lazy was,
 * gives a tree without that lazy. */
static bool names_own_row(const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t id_end = i;
    while (id_end < n && p[id_end] != ':' && p[id_end] != '\n') id_end++;
    size_t end = id_end;
    while (end < n && p[end] != '\n') end++;
    if (id_end < n && p[id_end] == ':' && id_end > i) {
      for (size_t k = id_end + 1; k + 1 < end; k++) {
        if (p[k] != '"' || p[k + 1] != '$') continue;
        size_t a = k + 2;
        if (a < end &&
            ((p[a] >= 'A' && p[a] <= 'Z') || (p[a] >= 'g' && p[a] <= 'z') || p[a] == '@'))
          a++;
        size_t len = id_end - i;
        if (a + len < end && memcmp(p + a, p + i, len) == 0 &&
            (p[a + len] == '"' || p[a + len] == ':'))
          return true;
      }
    }
    i = end + 1;
  }
  return false;
}

/* The dump with every fulfilled lazy around an element replaced by the
 * element (and the "/value" steps of reference paths dropped). React's client wraps an element that
 * waited on a row in such a lazy; when the reference it waited on placed a value the writer writes
 * in place ("$F4" naming a row that is no server reference: null; "$1"
 * naming a number row), the element written back waits on nothing, and
 * no server writes either. The same wrapper met again (a "$@0" of the row
 * whose value it is) holds a reference to the element, a path through a
 * "/value": it goes too. The writer writes "$L" lazies as such, so only
 * those wrappers differ. malloc'd. */
/* Whether s opens a fulfilled lazy whose value is a reference to a place
 * through a wrapper's "/value" (the element it wraps, met before). */
static bool wraps_value_ref(const char *s) {
  static const char head[] =
      "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\",\"to\":\"";
  if (strncmp(s, head, sizeof head - 1) != 0) return false;
  const char *path = s + sizeof head - 1, *q = strchr(path, '"');
  return q && q - path >= 6 && strncmp(q - 6, "/value", 6) == 0;
}

static char *strip_element_lazies(const char *s) {
  static const char wrap[] =
      "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\"";
  static const size_t head = sizeof "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":" - 1;
  size_t n = strlen(s), o = 0, sp = 0;
  char *out = (char *)malloc(n + 1);
  char *stack = (char *)malloc(n + 1); /* 'W': a wrapper's brace, dropped */
  FUZZ_CHECK(out && stack);
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c == '"') { /* a string, copied whole; in a reference's path
                     * ("/ok/value/props"), the steps through a wrapper
                     * ("/value") dropped, in both dumps alike */
      size_t j = i + 1;
      while (j < n && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      j = j < n ? j + 1 : n;
      bool path = j - i > 2 && s[i + 1] == '/';
      for (size_t k = i; k < j;) {
        if (path && strncmp(s + k, "/value", 6) == 0 && k + 6 < j &&
            (s[k + 6] == '/' || s[k + 6] == '"')) {
          k += 6;
          continue;
        }
        out[o++] = s[k++];
      }
      i = j;
      continue;
    }
    if (c == '{' && (strncmp(s + i, wrap, sizeof wrap - 1) == 0 || wraps_value_ref(s + i))) {
      stack[sp++] = 'W';
      i += head;
      continue;
    }
    if (c == '{' || c == '[') stack[sp++] = 'R';
    if ((c == '}' || c == ']') && sp > 0 && stack[--sp] == 'W') {
      i++;
      continue;
    }
    out[o++] = c;
    i++;
  }
  out[o] = 0;
  free(stack);
  return out;
}

static bool same_but_element_lazies(const char *a, const char *b) {
  char *x = strip_element_lazies(a), *y = strip_element_lazies(b);
  bool same = strcmp(x, y) == 0;
  free(x);
  free(y);
  return same;
}

/* The dump of p[0..n) decoded with opt (NULL when refused); *cut: whether
 * the stream ended inside a row (React drops that row). */
static char *dump_of(const rsc_options *opt, const char *p, size_t n, rsc_status *st, int *cut) {
  rsc_decoder *d = rsc_decoder_new(opt);
  FUZZ_CHECK(d != NULL);
  rsc_decoder_feed(d, p, n);
  *st = rsc_decoder_finish(d);
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  if (cut) *cut = inc && inc->cut;
  char *dump = *st == RSC_OK ? rsc_dump(d, 0, NULL) : NULL;
  rsc_decoder_free(d);
  return dump;
}

static void check_encode(const fuzz_opts *fo, fuzz_alloc *fa, const uint8_t *p, size_t n,
                         bool ready) {
  rsc_options opt = fo->opt;
  opt.flags |= RSC_OPT_KEEP_ROWS;
  rsc_decoder *d = rsc_decoder_new(&opt);
  if (!d) {
    FUZZ_CHECK(fo->failing);
    return;
  }
  fuzz_buf streamed = {0}, whole = {0};
  rsc_status rst = RSC_OK;
  if (ready) {
    /* fuzz_feed's pieces, with rsc_encode_ready after each */
    uint64_t seed = fuzz_seed(fo->mode_byte, n);
    for (size_t i = 0; i < n;) {
      size_t take = fuzz_take(fo->mode, fo->mode_byte, &seed, n - i);
      if (rsc_decoder_feed(d, (const char *)p + i, take) != RSC_OK) break;
      i += take;
      rsc_status s = rsc_encode_ready(d, fuzz_buf_write, &streamed);
      if (rst == RSC_OK) rst = s;
    }
  } else {
    fuzz_feed(d, p, n, fo->mode, fo->mode_byte);
  }
  rsc_status st = rsc_decoder_finish(d);
  if (ready) {
    rsc_status s = rsc_encode_ready(d, fuzz_buf_write, &streamed);
    if (rst == RSC_OK) rst = s;
  }
  rsc_status est = rsc_encode(d, fuzz_buf_write, &whole);
  if (st != RSC_OK) FUZZ_CHECK(est == st);
  if (fo->failing) {
    /* a failed allocation is never swallowed */
    if (fa->calls >= fa->fail_at && st == RSC_OK) FUZZ_CHECK(est != RSC_OK || rst != RSC_OK);
  } else if (st == RSC_OK && est != RSC_OK) {
    /* reading a chunk no consumer had read failed (a row whose value is
     * a reference to itself): the decoder's error now, and the encode's */
    FUZZ_CHECK(est == rsc_decoder_error(d)->code && est != RSC_ERR_NOMEM);
  } else if (st == RSC_OK) {
    if (ready) {
      FUZZ_CHECK(rst == RSC_OK);
      if (streamed.len != whole.len || (whole.len && memcmp(streamed.p, whole.p, whole.len) != 0)) {
        fprintf(stderr, "rsc_encode_ready wrote:\n%.*s\nrsc_encode wrote:\n%.*s\n",
                (int)streamed.len, streamed.p, (int)whole.len, whole.p);
        abort();
      }
    }
    /* What was written decodes to what was read (with the default limits:
     * the rows written may be longer than those read), unless the stream
     * ended inside a row: the rows before it are written, and a zero-length
     * T row is then the last row, which React's client (and the decoder)
     * never completes ("0:T0," at the end of a stream). */
    const rsc_incomplete *inc = rsc_decoder_incomplete(d);
    if (inc && inc->cut) goto done;
    rsc_options again;
    rsc_options_init(&again);
    again.flags = fo->opt.flags;
    again.bundler = fo->opt.bundler;
    char *a = rsc_dump(d, 0, NULL);
    FUZZ_CHECK(a != NULL);
    rsc_status st2;
    char *b = dump_of(&again, whole.p ? whole.p : "", whole.len, &st2, NULL);
    if (st2 != RSC_OK ||
        (strcmp(a, b) != 0 && !names_own_row(p, n) && !same_but_element_lazies(a, b))) {
      fprintf(stderr, "decoded:\n%s\nencoded:\n%.*s\ndecoded again (%s):\n%s\n", a, (int)whole.len,
              whole.p, rsc_status_name(st2), b ? b : "(refused)");
      abort();
    }
    rsc_free(a);
    rsc_free(b);
  }
done:
  rsc_decoder_free(d);
  free(streamed.p);
  free(whole.p);
}

/* The callback rule: every string gets "!" after it. */
static int bang(void *ctx, const rsc_rewrite_place *place, const char *s, size_t len,
                const char **out, size_t *out_len) {
  fuzz_buf *b = (fuzz_buf *)ctx;
  FUZZ_CHECK(place != NULL && (place->depth == 0 || place->path != NULL));
  b->len = 0;
  fuzz_buf_write(b, s, len);
  fuzz_buf_write(b, "!", 1);
  *out = b->p;
  *out_len = b->len;
  return 1;
}

static void check_rewrite(const fuzz_opts *fo, const uint8_t *p, size_t n, int rule) {
  static const rsc_rewrite_rule prefix = {{"a", 1}, {"$b/", 3}};
  static const rsc_rewrite_str children = {"children", 8};
  fuzz_buf scratch = {0};
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  switch (rule) {
  case 1:
    o.prefix = &prefix;
    o.prefix_count = 1;
    break;
  case 2:
    o.fn = bang;
    o.fn_ctx = &scratch;
    break;
  case 3:
    o.drop_props = &children;
    o.drop_props_count = 1;
    break;
  default: break;
  }
  fuzz_buf pieces = {0}, whole = {0};
  rsc_rewriter *rw = rsc_rewriter_new(&o, fuzz_buf_write, &pieces);
  FUZZ_CHECK(rw != NULL);
  uint64_t seed = fuzz_seed(fo->mode_byte, n);
  for (size_t i = 0; i < n;) {
    size_t take = fuzz_take(fo->mode, fo->mode_byte, &seed, n - i);
    if (rsc_rewriter_feed(rw, p + i, take) != RSC_OK) break;
    i += take;
  }
  rsc_rewriter_finish(rw);
  rsc_error e1 = *rsc_rewriter_error(rw), e2;
  rsc_rewriter_free(rw);
  rsc_rewrite(p, n, &o, fuzz_buf_write, &whole, &e2, NULL);
  if (e1.code != e2.code || e1.offset != e2.offset || e1.row_id != e2.row_id ||
      pieces.len != whole.len || (whole.len && memcmp(pieces.p, whole.p, whole.len) != 0)) {
    fprintf(stderr,
            "in pieces: %d @%llu row %lld (%s)\n%.*s\nwhole: %d @%llu row %lld (%s)\n%.*s\n",
            e1.code, (unsigned long long)e1.offset, (long long)e1.row_id, e1.msg ? e1.msg : "",
            (int)pieces.len, pieces.p, e2.code, (unsigned long long)e2.offset, (long long)e2.row_id,
            e2.msg ? e2.msg : "", (int)whole.len, whole.p);
    abort();
  }
  if (e2.code == RSC_OK && rule == 0)
    FUZZ_CHECK(whole.len == n && (n == 0 || memcmp(whole.p, p, n) == 0));
  /* The strict decoder's payloads: the rewriter takes them, and its output
   * is Flight the decoder takes. */
  if (fo->opt.flags == 0 && !fo->failing) {
    rsc_options strict;
    rsc_options_init(&strict);
    rsc_status s1, s2;
    int cut;
    char *a = dump_of(&strict, (const char *)p, n, &s1, &cut);
    /* (a model row that is not JSON rejects its chunk in the decoder, as
     * in React's client, and stops the rewriter, which never guesses) */
    bool not_json =
        e2.code == RSC_ERR_BAD_ROW && e2.msg && strcmp(e2.msg, "model row is not valid JSON") == 0;
    if (s1 == RSC_OK && !cut && !not_json) {
      if (e2.code != RSC_OK) {
        fprintf(stderr, "the decoder takes it, the rewriter refuses it: %s @%llu\n",
                e2.msg ? e2.msg : "", (unsigned long long)e2.offset);
        abort();
      }
      char *b = dump_of(&strict, whole.p ? whole.p : "", whole.len, &s2, NULL);
      if (s2 != RSC_OK) {
        fprintf(stderr, "rewritten (rule %d):\n%.*s\nrefused: %s\n", rule, (int)whole.len, whole.p,
                rsc_status_name(s2));
        abort();
      }
      rsc_free(b);
    }
    rsc_free(a);
  }
  free(pieces.p);
  free(whole.p);
  free(scratch.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < FUZZ_HDR) return 0;
  rsc_release_memory();
  fuzz_alloc fa = {0, 0, 0};
  fuzz_opts fo;
  fuzz_parse_opts(data, &fo, &fa);
  const uint8_t *p = data + FUZZ_HDR;
  size_t n = size - FUZZ_HDR;
  uint8_t w = data[3];

  check_encode(&fo, &fa, p, n, (w & W_READY) != 0);
  FUZZ_CHECK(fa.live == 0);
  if (fo.failing) return 0;
  check_rewrite(&fo, p, n, (w >> W_RULE_SHIFT) & 3);
  if (w & W_REPORT) {
    size_t bytes = 0;
    rsc_error err;
    rsc_status st = rsc_report_html((const char *)p, n, 0, &fo.opt, count_only, &bytes, &err);
    FUZZ_CHECK(st == RSC_OK && bytes > 0);
  }
  return 0;
}
