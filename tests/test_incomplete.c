#define _XOPEN_SOURCE 700
/* test_incomplete.c - a stream that ends early (rsc_decoder_incomplete,
 * rsc_chunk_closed, rsc_error_closed): every fixture cut mid-row, between
 * rows, inside an id and inside a T row, each answer checked against what
 * this file's own row scanner finds in the bytes. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* ---- an independent row scanner ------------------------------------------ */

typedef struct trow {
  size_t start, colon, end; /* first byte, its ':', one past the row     */
  size_t data;              /* first data byte                            */
  int64_t id;
  char tag; /* 0 for a plain model row                    */
} trow;

static int length_tag(char c) { return c && strchr("TAOoUSsLlGgMmVb", c) != NULL; }
static int newline_tag(char c) {
  return (c >= 'A' && c <= 'Z') || c == '#' || c == 'r' || c == 'x';
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* The rows of buf (FLIGHT-PROTOCOL 2.3); -1 when it is not framed as
 * strict ids and whole rows (such a fixture is skipped). */
static long scan_rows(const char *buf, size_t len, trow **out) {
  size_t cap = 64, n = 0;
  trow *rows = malloc(cap * sizeof *rows);
  size_t p = 0;
  while (p < len) {
    trow r = {.start = p, .id = 0};
    while (p < len && buf[p] != ':') {
      int h = hexval(buf[p]);
      if (h < 0 || r.id > (1 << 26)) goto bad;
      r.id = r.id * 16 + h;
      p++;
    }
    if (p >= len) goto bad;
    r.colon = p++;
    if (p >= len) goto bad;
    char c = buf[p];
    if (length_tag(c)) {
      r.tag = c;
      uint64_t l = 0;
      p++;
      while (p < len && buf[p] != ',') {
        int h = hexval(buf[p]);
        if (h < 0) goto bad;
        l = l * 16 + (uint64_t)h;
        p++;
      }
      if (p >= len || l > len - p - 1) goto bad;
      r.data = p + 1;
      r.end = r.data + l;
    } else {
      r.tag = newline_tag(c) ? c : 0;
      r.data = r.tag ? p + 1 : p;
      const char *nl = memchr(buf + p, '\n', len - p);
      if (!nl) goto bad;
      r.end = (size_t)(nl - buf) + 1;
    }
    p = r.end;
    if (n == cap) rows = realloc(rows, (cap *= 2) * sizeof *rows);
    rows[n++] = r;
  }
  *out = rows;
  return (long)n;
bad:
  free(rows);
  return -1;
}

/* ---- what a cut at k must report ------------------------------------------ */

typedef struct expect {
  int cut;
  int64_t cut_id;
  uint64_t cut_offset;
  int64_t *arrived, *open; /* ids; arrived unsorted */
  size_t narrived, nopen;
} expect;

static int has(const int64_t *v, size_t n, int64_t id) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == id) return 1;
  return 0;
}

static void expect_at(const trow *rows, long nrows, size_t k, expect *e) {
  memset(e, 0, sizeof *e);
  e->cut_id = -1;
  e->cut_offset = k;
  e->arrived = malloc((size_t)(nrows + 1) * sizeof *e->arrived);
  e->open = malloc((size_t)(nrows + 1) * sizeof *e->open);
  for (long i = 0; i < nrows; i++) {
    const trow *r = &rows[i];
    if (r->start >= k) break;
    /* the end falls inside this row; an empty length row that ends at k
     * is dropped too (React handles a row once a byte follows its comma) */
    if (r->end > k || (length_tag(r->tag) && r->data == r->end && r->end == k)) {
      e->cut = 1;
      e->cut_offset = r->start;
      e->cut_id = k > r->colon ? r->id : -1;
      break;
    }
    /* H (hints) and D, N, W (debug rows) settle no chunk; C only ends a
     * stream that started */
    if (!r->tag || !strchr("HDNWC", r->tag)) e->arrived[e->narrived++] = r->id;
    if (r->tag == 'R' || r->tag == 'r' || r->tag == 'X' || r->tag == 'x') {
      if (!has(e->open, e->nopen, r->id)) e->open[e->nopen++] = r->id;
    } else if (r->tag == 'C' || r->tag == 'E') {
      for (size_t j = 0; j < e->nopen; j++)
        if (e->open[j] == r->id) e->open[j] = e->open[--e->nopen];
    }
  }
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Reads every chunk of the table (a read may add chunks after finish:
 * ids a row first revived now references). */
static void read_all(rsc_decoder *d) {
  for (size_t i = 0; i < rsc_decoder_chunk_count(d); i++)
    (void)rsc_chunk_status(rsc_decoder_chunk_at(d, i));
}

static int is_closed_text(const rsc_node *reason) {
  const char *m = rsc_error_message(reason);
  return m && strcmp(m, "Connection closed.") == 0 && !rsc_error_digest(reason);
}

static size_t cases_checked, cases_cut, cases_missing, cases_closed_root;

/* Decodes buf[0..k) and checks the end's report. */
static void check_cut(const char *name, const char *buf, size_t k, const trow *rows, long nrows,
                      uint32_t flags) {
  rsc_decoder *d = ts_decode(buf, k, 0, flags);
  cr_assert_not_null(d);
  if (rsc_decoder_error(d)->code) { /* a prefix the decoder refuses: nothing ended early */
    cr_expect_null(rsc_decoder_incomplete(d), "%s at %zu: a report beside an error", name, k);
    rsc_decoder_free(d);
    return;
  }
  read_all(d);
  expect e;
  expect_at(rows, nrows, k, &e);
  /* missing: every id the decoder heard of whose row is not among the
   * whole rows before k */
  size_t nchunks = rsc_decoder_chunk_count(d), nmissing = 0;
  int64_t *missing = malloc((nchunks + 1) * sizeof *missing);
  for (size_t i = 0; i < nchunks; i++) {
    int64_t id = rsc_chunk_id(rsc_decoder_chunk_at(d, i));
    if (!has(e.arrived, e.narrived, id)) missing[nmissing++] = id;
  }
  qsort(missing, nmissing, sizeof *missing, cmp64);
  qsort(e.open, e.nopen, sizeof *e.open, cmp64);

  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  if (!e.cut && !nmissing && !e.nopen) {
    cr_expect_null(inc, "%s at %zu: a complete stream reported as ended early", name, k);
  } else {
    cr_assert_not_null(inc, "%s at %zu: an early end not reported", name, k);
    cr_expect_eq(inc->offset, k, "%s at %zu: offset %llu", name, k,
                 (unsigned long long)inc->offset);
    cr_expect_eq(inc->cut, e.cut, "%s at %zu: cut %d", name, k, inc->cut);
    cr_expect_eq(inc->cut_id, e.cut_id, "%s at %zu: cut id %lld, want %lld", name, k,
                 (long long)inc->cut_id, (long long)e.cut_id);
    cr_expect_eq(inc->cut_offset, e.cut_offset, "%s at %zu: cut offset %llu, want %llu", name, k,
                 (unsigned long long)inc->cut_offset, (unsigned long long)e.cut_offset);
    cr_expect_eq(inc->missing_len, nmissing, "%s at %zu: %zu missing, want %zu", name, k,
                 inc->missing_len, nmissing);
    for (size_t i = 0; i < nmissing && i < inc->missing_len; i++)
      cr_expect_eq(inc->missing[i], missing[i], "%s at %zu: missing[%zu] %lld, want %lld", name, k,
                   i, (long long)inc->missing[i], (long long)missing[i]);
    cr_expect_eq(inc->open_streams_len, e.nopen, "%s at %zu: %zu open streams, want %zu", name, k,
                 inc->open_streams_len, e.nopen);
    for (size_t i = 0; i < e.nopen && i < inc->open_streams_len; i++)
      cr_expect_eq(inc->open_streams[i], e.open[i], "%s at %zu: open stream %lld, want %lld", name,
                   k, (long long)inc->open_streams[i], (long long)e.open[i]);
    cr_expect_eq(rsc_decoder_incomplete(d), inc, "%s at %zu: a second call, a new answer", name, k);
    cases_cut += e.cut;
    cases_missing += nmissing > 0;
  }
  /* each chunk: closed exactly when the end settled it */
  bool partial = (flags & RSC_OPT_ALLOW_PARTIAL) != 0;
  for (size_t i = 0; i < nchunks; i++) {
    const rsc_chunk *c = rsc_decoder_chunk_at(d, i);
    int64_t id = rsc_chunk_id(c);
    rsc_chunk_state st = rsc_chunk_status(c);
    const rsc_node *reason = rsc_chunk_reason(c);
    int want;
    if (has(missing, nmissing, id)) {
      cr_expect_eq(st, partial ? RSC_CHUNK_HALTED : RSC_CHUNK_REJECTED, "%s at %zu: chunk %lld",
                   name, k, (long long)id);
      want = 1;
    } else {
      want = !partial && st == RSC_CHUNK_REJECTED && is_closed_text(reason);
    }
    cr_expect_eq(rsc_chunk_closed(c), want, "%s at %zu: chunk %lld closed %d, want %d", name, k,
                 (long long)id, rsc_chunk_closed(c), want);
    if (st == RSC_CHUNK_REJECTED)
      cr_expect_eq(rsc_error_closed(reason), want, "%s at %zu: chunk %lld's reason", name, k,
                   (long long)id);
    if (id == 0 && want) cases_closed_root++;
  }
  cases_checked++;
  free(missing);
  free(e.arrived);
  free(e.open);
  rsc_decoder_free(d);
}

/* The cut points of one payload: the empty stream, the whole, and for a
 * spread of rows their start, one byte in (inside the id), the middle,
 * the middle of their data (a T row's text), and their end. */
static size_t cut_points(const trow *rows, long nrows, size_t len, size_t *out) {
  size_t n = 0;
  out[n++] = 0;
  out[n++] = len;
  long step = nrows > 6 ? nrows / 6 : 1;
  int t_done = 0;
  for (long i = 0; i < nrows; i++) {
    const trow *r = &rows[i];
    if (r->tag == 'T' && !t_done && r->end - r->data >= 2) {
      out[n++] = r->data + (r->end - r->data) / 2;
      t_done = 1;
    }
    if (i % step && i != nrows - 1) continue;
    out[n++] = r->start + 1;
    out[n++] = r->start + (r->end - r->start) / 2;
    out[n++] = r->data + (r->end - r->data) / 2;
    out[n++] = r->end - 1;
    out[n++] = r->end;
  }
  return n;
}

static char *files[1024];
static size_t nfiles;

static int collect(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  size_t l = strlen(path);
  if (type == FTW_F && l > 4 && strcmp(path + l - 4, ".rsc") == 0 && nfiles < 1024)
    files[nfiles++] = strdup(path);
  return 0;
}

Test(incomplete, every_fixture_cut) {
  cr_assert_eq(nftw(RSC_FIXTURES, collect, 16, FTW_PHYS), 0);
  cr_assert_gt(nfiles, 500, "fixtures found: %zu", nfiles);
  size_t scanned = 0;
  for (size_t f = 0; f < nfiles; f++) {
    size_t len;
    char *buf = ts_read(files[f], &len);
    cr_assert_not_null(buf, "%s", files[f]);
    trow *rows = NULL;
    long nrows = scan_rows(buf, len, &rows);
    if (nrows < 0) {
      free(buf);
      continue; /* not strictly framed (a vector of bad framing, lenient ids) */
    }
    scanned++;
    size_t cuts[64];
    size_t ncuts = cut_points(rows, nrows, len, cuts);
    for (size_t i = 0; i < ncuts; i++) {
      if (cuts[i] > len) continue;
      check_cut(files[f], buf, cuts[i], rows, nrows, 0);
      check_cut(files[f], buf, cuts[i], rows, nrows, RSC_OPT_ALLOW_PARTIAL);
    }
    free(rows);
    free(buf);
  }
  cr_expect_gt(scanned, 500, "fixtures scanned: %zu", scanned);
  /* the cuts met every case */
  cr_expect_gt(cases_cut, 1000, "cuts inside a row: %zu", cases_cut);
  cr_expect_gt(cases_missing, 1000, "cuts with missing rows: %zu", cases_missing);
  cr_expect_gt(cases_closed_root, 500, "roots closed: %zu", cases_closed_root);
}

/* ---- small cases, by hand ------------------------------------------------------- */

static rsc_decoder *dec(const char *s, uint32_t flags) {
  rsc_decoder *d = ts_decode(s, strlen(s), 0, flags);
  cr_assert_not_null(d);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK, "%s", rsc_decoder_error(d)->msg);
  return d;
}

Test(incomplete, cut_mid_row) {
  rsc_decoder *d = dec("0:{\"a\":", 0);
  const rsc_chunk *root = rsc_decoder_root(d);
  cr_expect_eq(rsc_chunk_status(root), RSC_CHUNK_REJECTED);
  cr_expect_eq(rsc_chunk_closed(root), 1);
  cr_expect_eq(rsc_error_closed(rsc_chunk_reason(root)), 1);
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  cr_assert_not_null(inc);
  cr_expect_eq(inc->offset, 7);
  cr_expect_eq(inc->cut, 1);
  cr_expect_eq(inc->cut_id, 0);
  cr_expect_eq(inc->cut_offset, 0);
  cr_assert_eq(inc->missing_len, 1);
  cr_expect_eq(inc->missing[0], 0);
  cr_expect_eq(inc->open_streams_len, 0);
  rsc_decoder_free(d);
}

Test(incomplete, server_error_is_not_closed) {
  rsc_decoder *d = dec("0:E{\"message\":\"Connection closed.\",\"stack\":\"\"}\n", RSC_OPT_DEV);
  const rsc_chunk *root = rsc_decoder_root(d);
  cr_expect_eq(rsc_chunk_status(root), RSC_CHUNK_REJECTED);
  cr_expect_str_eq(rsc_error_message(rsc_chunk_reason(root)), "Connection closed.");
  cr_expect_eq(rsc_chunk_closed(root), 0);
  cr_expect_eq(rsc_error_closed(rsc_chunk_reason(root)), 0);
  cr_expect_null(rsc_decoder_incomplete(d));
  rsc_decoder_free(d);
  d = dec("0:E{\"digest\":\"x\"}\n", 0);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_root(d)), 0);
  cr_expect_null(rsc_decoder_incomplete(d));
  rsc_decoder_free(d);
}

Test(incomplete, root_waiting_on_a_missing_row) {
  rsc_decoder *d = dec("0:{\"a\":\"$1\",\"b\":\"$2\"}\n2:\"x\"\n3:[", 0);
  const rsc_chunk *root = rsc_decoder_root(d);
  cr_expect_eq(rsc_chunk_status(root), RSC_CHUNK_REJECTED);
  cr_expect_eq(rsc_chunk_closed(root), 1, "the root waited on a chunk the end rejected");
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_chunk(d, 1)), 1);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_chunk(d, 2)), 0);
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  cr_assert_not_null(inc);
  cr_expect_eq(inc->cut_id, 3);
  cr_expect_eq(inc->cut_offset, 28);
  cr_assert_eq(inc->missing_len, 1, "the root arrived: only 1 is missing");
  cr_expect_eq(inc->missing[0], 1);
  rsc_decoder_free(d);
  /* allow_partial: 1 halts, the root stays blocked (not closed) */
  d = dec("0:{\"a\":\"$1\"}\n", RSC_OPT_ALLOW_PARTIAL);
  cr_expect_eq(rsc_chunk_status(rsc_decoder_root(d)), RSC_CHUNK_BLOCKED);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_root(d)), 0);
  cr_expect_eq(rsc_chunk_status(rsc_decoder_chunk(d, 1)), RSC_CHUNK_HALTED);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_chunk(d, 1)), 1);
  inc = rsc_decoder_incomplete(d);
  cr_assert_not_null(inc);
  cr_expect_eq(inc->cut, 0);
  cr_expect_eq(inc->cut_id, -1);
  cr_expect_eq(inc->cut_offset, inc->offset);
  cr_assert_eq(inc->missing_len, 1);
  rsc_decoder_free(d);
}

Test(incomplete, cut_inside_an_id_and_a_text_row) {
  rsc_decoder *d = dec("0:\"$1\"\n1:T5,ab", 0);
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  cr_assert_not_null(inc);
  cr_expect_eq(inc->cut_id, 1);
  cr_expect_eq(inc->cut_offset, 7);
  cr_expect_eq(inc->missing_len, 1);
  rsc_decoder_free(d);
  d = dec("0:\"$1a\"\n1", 0);
  inc = rsc_decoder_incomplete(d);
  cr_assert_not_null(inc);
  cr_expect_eq(inc->cut, 1);
  cr_expect_eq(inc->cut_id, -1, "the end fell inside the id");
  cr_expect_eq(inc->cut_offset, 8);
  cr_assert_eq(inc->missing_len, 1);
  cr_expect_eq(inc->missing[0], 0x1a);
  rsc_decoder_free(d);
}

Test(incomplete, open_stream_and_its_error) {
  rsc_decoder *d = dec("0:\"$1\"\n1:r\n1:b3,abc", 0);
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  cr_assert_not_null(inc);
  cr_expect_eq(inc->cut, 0);
  cr_expect_eq(inc->missing_len, 0);
  cr_assert_eq(inc->open_streams_len, 1);
  cr_expect_eq(inc->open_streams[0], 1);
  const rsc_node *s = rsc_chunk_value(rsc_decoder_root(d));
  cr_assert_eq(rsc_node_kind(s), RSC_STREAM);
  cr_expect_eq(rsc_stream_end_of(s), RSC_STREAM_ERRORED);
  cr_expect_eq(rsc_error_closed(rsc_stream_end_value(s)), 1);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_root(d)), 0, "fulfilled with the stream");
  rsc_decoder_free(d);
  d = dec("0:\"$1\"\n1:r\n1:C\n", 0);
  cr_expect_null(rsc_decoder_incomplete(d));
  rsc_decoder_free(d);
}

Test(incomplete, none_before_finish_or_after_an_error) {
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  rsc_decoder_feed(d, "0:{", 3);
  cr_expect_null(rsc_decoder_incomplete(d), "before finish");
  rsc_decoder_finish(d);
  cr_expect_not_null(rsc_decoder_incomplete(d));
  cr_expect_eq(rsc_decoder_reset(d), RSC_OK);
  cr_expect_null(rsc_decoder_incomplete(d), "after a reset");
  rsc_decoder_feed(d, "0:1\n", 4);
  rsc_decoder_finish(d);
  cr_expect_null(rsc_decoder_incomplete(d), "a complete stream");
  rsc_decoder_free(d);
  d = ts_decode("0:1\n0:2\n1:{", 11, 0, 0);
  cr_expect_neq(rsc_decoder_error(d)->code, RSC_OK);
  cr_expect_null(rsc_decoder_incomplete(d), "a refused stream");
  rsc_decoder_free(d);
  cr_expect_null(rsc_decoder_incomplete(NULL));
  cr_expect_eq(rsc_chunk_closed(NULL), 0);
  cr_expect_eq(rsc_error_closed(NULL), 0);
}

Test(incomplete, a_read_after_finish_adds_missing_ids) {
  /* LAZY_ROOT: the root's row is revived on its first read; 5 is first
   * referenced then, after the end */
  rsc_decoder *d = dec("1:{\"x\":\"$5\"}\n0:\"$L1\"\n", RSC_OPT_LAZY_ROOT);
  const rsc_incomplete *first = rsc_decoder_incomplete(d);
  cr_assert_not_null(first);
  cr_assert_eq(first->missing_len, 1);
  cr_expect_eq(first->missing[0], 5);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_chunk(d, 1)), 1, "1 waited on 5");
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_root(d)), 0, "fulfilled with a lazy");
  rsc_decoder_free(d);
  /* a chunk outside the root's reach, read only now */
  d = dec("0:1\n1:{\"x\":\"$5\"}\n", 0);
  first = rsc_decoder_incomplete(d);
  cr_expect_null(first, "nothing the root reaches is missing");
  cr_expect_eq(rsc_chunk_status(rsc_decoder_chunk(d, 1)), RSC_CHUNK_REJECTED);
  const rsc_incomplete *later = rsc_decoder_incomplete(d);
  cr_assert_not_null(later);
  cr_assert_eq(later->missing_len, 1);
  cr_expect_eq(later->missing[0], 5);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_chunk(d, 5)), 1);
  cr_expect_eq(rsc_chunk_closed(rsc_decoder_chunk(d, 1)), 1);
  rsc_decoder_free(d);
}
