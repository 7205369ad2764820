/* test_rewrite.c - the streaming rewriter (src/rewrite.c): rules, the rows
 * they see, split feeds, the row hook, errors and failing allocators. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"
#include "support.h"

/* in[0..len) fed at the cuts (sorted), the output; *err filled. */
static char *rewrite_cuts(const rsc_rewrite_options *o, const char *in, size_t len,
                          const size_t *cuts, size_t ncuts, rsc_error *err, size_t *out_len) {
  ts_sink s = {0};
  ts_sink_write(&s, "", 0);
  s.calls = 0;
  rsc_rewriter *rw = rsc_rewriter_new(o, ts_sink_write, &s);
  cr_assert(rw);
  size_t at = 0;
  for (size_t k = 0; k <= ncuts; k++) {
    size_t end = k < ncuts ? cuts[k] : len;
    if (rsc_rewriter_feed(rw, in + at, end - at) != RSC_OK) break;
    at = end;
  }
  rsc_rewriter_finish(rw);
  *err = *rsc_rewriter_error(rw);
  rsc_rewriter_free(rw);
  if (out_len) *out_len = s.len;
  return s.p;
}

static char *rewrite_piece(const rsc_rewrite_options *o, const char *in, size_t len, size_t piece,
                           rsc_error *err, size_t *out_len) {
  size_t n = piece ? (len + piece - 1) / piece : 0;
  size_t *cuts = calloc(n + 1, sizeof *cuts), k = 0;
  for (size_t at = piece; piece && at < len; at += piece) cuts[k++] = at;
  char *r = rewrite_cuts(o, in, len, cuts, k, err, out_len);
  free(cuts);
  return r;
}

static rsc_rewrite_rule prefix_rule[4];
static rsc_rewrite_options prefix_opts(const char *from, const char *to) {
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  prefix_rule[0].from = (rsc_rewrite_str){from, strlen(from)};
  prefix_rule[0].to = (rsc_rewrite_str){to, strlen(to)};
  o.prefix = prefix_rule;
  o.prefix_count = 1;
  return o;
}

/* Rewrites in whole with o: no error, exactly want. */
static void expect_rw(const rsc_rewrite_options *o, const char *in, const char *want) {
  rsc_error e;
  size_t n;
  char *out = rewrite_piece(o, in, strlen(in), 0, &e, &n);
  cr_assert_eq(e.code, RSC_OK, "%s: error %d at %llu: %s", in, e.code, (unsigned long long)e.offset,
               e.msg ? e.msg : "");
  cr_expect_eq(n, strlen(want), "%s -> [%s], want [%s]", in, out, want);
  cr_expect(memcmp(out, want, n < strlen(want) ? n : strlen(want)) == 0, "%s -> [%s], want [%s]",
            in, out, want);
  free(out);
}

Test(rewrite, prefix_in_model_rows) {
  rsc_rewrite_options o = prefix_opts("/_next/", "https://cdn.example/_next/");
  expect_rw(&o, "1:\"/_next/a.js\"\n", "1:\"https://cdn.example/_next/a.js\"\n");
  expect_rw(
      &o, "2:[\"$\",\"script\",null,{\"src\":\"/_next/b.js\",\"async\":true}]\n",
      "2:[\"$\",\"script\",null,{\"src\":\"https://cdn.example/_next/b.js\",\"async\":true}]\n");
  /* no match: the row as it came, spaces and all */
  expect_rw(&o, "3:{ \"a\" : [1, 2.50, \"x\"] }\n", "3:{ \"a\" : [1, 2.50, \"x\"] }\n");
  /* only the changed string is written again; other bytes stay */
  expect_rw(&o, "4:{ \"a\" : 1.0e0, \"b\":\"/_next/c\" }\n",
            "4:{ \"a\" : 1.0e0, \"b\":\"https://cdn.example/_next/c\" }\n");
}

Test(rewrite, unchanged_rows_are_byte_identical) {
  rsc_rewrite_options o = prefix_opts("/nowhere/", "/x/");
  const char *in = "0:\"$L1\"\n01:{\"a\":\"\\u0041\"}\n:HL[\"/a.css\",\"style\"]\n"
                   "2:T3,abc3:I[1,[],\"\"]\n4:E{\"digest\":\"d\"}\n5:o3,\x01\x02\x03";
  size_t len = strlen(in) + 0;
  rsc_error e;
  size_t n;
  char *out = rewrite_piece(&o, in, len, 0, &e, &n);
  cr_assert_eq(e.code, RSC_OK);
  cr_expect_eq(n, len);
  cr_expect(memcmp(out, in, len) == 0, "[%s]", out);
  free(out);
  size_t flen;
  char *fx = ts_fixture("html/next-turbopack-catalog.rsc", &flen);
  cr_assert(fx);
  out = rewrite_piece(&o, fx, flen, 0, &e, &n);
  cr_assert_eq(e.code, RSC_OK);
  cr_expect(n == flen && memcmp(out, fx, n) == 0);
  free(out);
  free(fx);
}

/* The same output whatever the feed boundaries: every 2-way split, byte
 * by byte, and pieces of a few sizes on a real page. */
Test(rewrite, split_anywhere) {
  static const char in[] =
      "1:T7,/p/é-x2:[\"$$/p/a\",\"$L1\",{\"href\":\"/p/b\",\"drop\":[\"/p/c\"]}]\n"
      ":HL[\"/p/c.css\",\"style\"]\n3:I[1,[\"/p/ch.js\"],\"\"]\n"
      "4:b3,\x01\x02\x03"
      "5:\"/p/\\u00e9\"\n";
  size_t len = sizeof in - 1;
  rsc_rewrite_options o = prefix_opts("/p/", "https://c.example/p/");
  rsc_rewrite_str drop = {"drop", 4};
  o.drop_props = &drop;
  o.drop_props_count = 1;
  rsc_error e;
  size_t wn;
  char *want = rewrite_piece(&o, in, len, 0, &e, &wn);
  cr_assert_eq(e.code, RSC_OK, "%s", e.msg);
  cr_assert(strstr(want, "1:T18,https://c.example/p/é-x"), "%s", want);
  for (size_t cut = 1; cut < len; cut++) {
    size_t n;
    char *got = rewrite_cuts(&o, in, len, &cut, 1, &e, &n);
    cr_assert_eq(e.code, RSC_OK, "cut %zu: %s", cut, e.msg);
    cr_assert(n == wn && memcmp(got, want, n) == 0, "cut %zu: [%.*s]", cut, (int)n, got);
    free(got);
  }
  size_t n;
  char *got = rewrite_piece(&o, in, len, 1, &e, &n);
  cr_assert_eq(e.code, RSC_OK);
  cr_assert(n == wn && memcmp(got, want, n) == 0, "bytewise: [%.*s]", (int)n, got);
  free(got);
  free(want);

  size_t flen;
  char *fx = ts_fixture("html/next-turbopack-catalog.rsc", &flen);
  cr_assert(fx);
  o = prefix_opts("/_next/", "https://cdn.example/_next/");
  want = rewrite_piece(&o, fx, flen, 0, &e, &wn);
  cr_assert_eq(e.code, RSC_OK);
  cr_expect(wn > flen);
  static const size_t pieces[] = {1, 2, 3, 7, 64, 1000, 4096};
  for (size_t k = 0; k < sizeof pieces / sizeof *pieces; k++) {
    got = rewrite_piece(&o, fx, flen, pieces[k], &e, &n);
    cr_assert_eq(e.code, RSC_OK);
    cr_assert(n == wn && memcmp(got, want, n) == 0, "pieces of %zu", pieces[k]);
    free(got);
  }
  free(want);
  free(fx);
}

Test(rewrite, text_row_length_recomputed) {
  rsc_rewrite_options o = prefix_opts("a", "ééé");
  /* "aé😀" is 1 + 2 + 4 bytes; the new text 6 + 2 + 4 = 12 = 0xc */
  expect_rw(&o, "1:T7,aé😀2:\"$1\"\n", "1:Tc,éééé😀2:\"$1\"\n");
  /* the text is not JSON: quotes and "$" are bytes like any other */
  o = prefix_opts("$", "\"$");
  expect_rw(&o, "1:T3,$$x", "1:T4,\"$$x");
  /* a length row header with leading zeros is kept when unchanged */
  o = prefix_opts("zz", "y");
  expect_rw(&o, "1:T003,abc", "1:T003,abc");
}

Test(rewrite, dollar_strings) {
  rsc_rewrite_options o = prefix_opts("$x", "$y");
  /* "$$x..." is the string "$x...": matched, and written back with "$$" */
  expect_rw(&o, "1:[\"$$x1\",\"$x2\",\"$L1\"]\n", "1:[\"$$y1\",\"$x2\",\"$L1\"]\n");
  /* other "$" strings are never values */
  o = prefix_opts("$", "z");
  expect_rw(&o, "1:[\"$L1\",\"$undefined\",\"$D2020\",\"$1:a:b\",\"$\"]\n",
            "1:[\"$L1\",\"$undefined\",\"$D2020\",\"$1:a:b\",\"$\"]\n");
  expect_rw(&o, "1:[\"$$a\"]\n", "1:[\"za\"]\n");
  /* a value made to start with "$" gets its "$$" */
  o = prefix_opts("/", "$/");
  expect_rw(&o, "1:{\"a\":\"/b\"}\n", "1:{\"a\":\"$$/b\"}\n");
  /* escapes are decoded before matching: \u0024L1 is the reference $L1 */
  expect_rw(&o, "1:[\"\\u0024L1\",\"\\/c\\n\"]\n", "1:[\"\\u0024L1\",\"$$/c\\n\"]\n");
  /* new values are written as JSON.stringify writes them */
  o = prefix_opts("/", "\"\\\x01\xed\xa0\x80");
  expect_rw(&o, "1:\"/q\"\n", "1:\"\\\"\\\\\\u0001\\ud800q\"\n");
}

/* A row of many tiny changed strings: its changes take more room than the
 * list keeps, and it is scanned again to be written; the same bytes as a
 * row of few changes. */
Test(rewrite, many_tiny_changes) {
  rsc_rewrite_options o = prefix_opts("a", "$b");
  size_t n = 20000;
  char *in = malloc(n * 5 + 16), *want = malloc(n * 8 + 16);
  size_t k = 0, w = 0;
  k += (size_t)sprintf(in, "1:[");
  w += (size_t)sprintf(want, "1:[");
  for (size_t i = 0; i < n; i++) {
    k += (size_t)sprintf(in + k, "%s\"a\"", i ? "," : "");
    w += (size_t)sprintf(want + w, "%s\"$$b\"", i ? "," : "");
  }
  k += (size_t)sprintf(in + k, "]\n");
  w += (size_t)sprintf(want + w, "]\n");
  expect_rw(&o, in, want);
  free(in);
  free(want);
}

Test(rewrite, exact_before_prefix) {
  rsc_rewrite_rule ex = {{"/a", 2}, {"EXACT", 5}};
  rsc_rewrite_options o = prefix_opts("/a", "/b");
  o.exact = &ex;
  o.exact_count = 1;
  expect_rw(&o, "1:[\"/a\",\"/ab\",\"x/a\"]\n", "1:[\"EXACT\",\"/bb\",\"x/a\"]\n");
  /* several prefixes: the first that matches */
  rsc_rewrite_rule two[2] = {{{"/a/b", 4}, {"1", 1}}, {{"/a", 2}, {"2", 1}}};
  o.prefix = two;
  o.prefix_count = 2;
  o.exact_count = 0;
  expect_rw(&o, "1:[\"/a/b/c\",\"/a/c\"]\n", "1:[\"1/c\",\"2/c\"]\n");
}

Test(rewrite, keys_filter) {
  rsc_rewrite_options o = prefix_opts("/", "//cdn/");
  rsc_rewrite_str keys[] = {{"href", 4}, {"src", 3}};
  o.keys = keys;
  o.keys_count = 2;
  expect_rw(
      &o,
      "1:[\"/top\",{\"href\":\"/a\",\"title\":\"/b\",\"src\":[\"/c\",{\"x\":\"/d\"}],"
      "\"sr\\u0063\":\"/e\"}]\n",
      "1:[\"/top\",{\"href\":\"//cdn/a\",\"title\":\"/b\",\"src\":[\"//cdn/c\",{\"x\":\"/d\"}],"
      "\"sr\\u0063\":\"//cdn/e\"}]\n");
  /* T rows and whole-row strings have no key */
  expect_rw(&o, "2:T2,/a3:\"/b\"\n", "2:T2,/a3:\"/b\"\n");
  /* hint and I row URLs are URLs whatever the filter */
  expect_rw(&o, ":HL[\"/a.css\",\"style\"]\n", ":HL[\"//cdn/a.css\",\"style\"]\n");
}

typedef struct seen {
  int calls;
  char log[2048];
} seen;

static int place_fn(void *ctx, const rsc_rewrite_place *pl, const char *s, size_t len,
                    const char **out, size_t *out_len) {
  seen *v = ctx;
  v->calls++;
  size_t at = strlen(v->log);
  at += (size_t)snprintf(v->log + at, sizeof v->log - at, "%lld%c:", (long long)pl->row_id,
                         pl->tag ? pl->tag : '0');
  for (size_t k = 0; k < pl->depth; k++) {
    if (pl->path[k].key)
      at += (size_t)snprintf(v->log + at, sizeof v->log - at, "/%.*s", (int)pl->path[k].key_len,
                             pl->path[k].key);
    else
      at +=
          (size_t)snprintf(v->log + at, sizeof v->log - at, "/%lld", (long long)pl->path[k].index);
  }
  snprintf(v->log + at, sizeof v->log - at, "=%.*s;", (int)len, s);
  if (len == 3 && memcmp(s, "old", 3) == 0) {
    *out = "new";
    *out_len = 3;
    return 1;
  }
  if (len == 4 && memcmp(s, "stop", 4) == 0) return -1;
  return 0;
}

Test(rewrite, callback_sees_place) {
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  seen v = {0};
  o.fn = place_fn;
  o.fn_ctx = &v;
  expect_rw(&o, "a:[\"$\",\"a\",null,{\"href\":\"old\",\"k\\u0031\":[1,\"$$x\"],\"r\":\"$1\"}]\n",
            "a:[\"$\",\"a\",null,{\"href\":\"new\",\"k\\u0031\":[1,\"$$x\"],\"r\":\"$1\"}]\n");
  cr_expect_str_eq(v.log, "100:/1=a;100:/3/href=old;100:/3/k1/1=$x;");
  memset(&v, 0, sizeof v);
  expect_rw(&o, "1:T3,old", "1:T3,new");
  expect_rw(&o, ":HL[\"old\"]\n", ":HL[\"new\"]\n");
  cr_expect_str_eq(v.log, "1T:=old;0H:/0=old;");
  /* a prefix rule runs first: the callback sees its result */
  o = prefix_opts("o", "");
  o.fn = place_fn;
  o.fn_ctx = &v;
  memset(&v, 0, sizeof v);
  expect_rw(&o, "2:\"oold\"\n", "2:\"new\"\n");
  /* non-zero, non-one: the rewrite stops with RSC_ERR_USER */
  rsc_error e;
  char *out = rewrite_piece(&o, "2:[1]\n3:\"ostop\"\n", 16, 0, &e, NULL);
  cr_expect_eq(e.code, RSC_ERR_USER);
  cr_expect_eq(e.row_id, 3);
  cr_expect_eq(e.offset, 6);
  cr_expect_str_eq(out, "2:[1]\n");
  free(out);
}

Test(rewrite, drop_and_set_props) {
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  rsc_rewrite_str drop = {"d", 1};
  rsc_rewrite_rule set = {{"s", 1}, {"{\"new\":[1]}", 11}};
  o.drop_props = &drop;
  o.drop_props_count = 1;
  o.set_props = &set;
  o.set_props_count = 1;
  expect_rw(&o, "1:{\"d\":1}\n", "1:{}\n");
  expect_rw(&o, "1:{\"d\":1,\"a\":2}\n", "1:{\"a\":2}\n");
  expect_rw(&o, "1:{\"a\":1,\"d\":2}\n", "1:{\"a\":1}\n");
  expect_rw(&o, "1:{\"a\":1,\"d\":2,\"b\":3}\n", "1:{\"a\":1,\"b\":3}\n");
  expect_rw(&o, "1:{\"d\":1,\"d\":{\"x\":[2]},\"a\":3,\"d\":4}\n", "1:{\"a\":3}\n");
  expect_rw(&o, "1:{\"d\":1, \"d\":2}\n", "1:{}\n");
  expect_rw(&o, "1:[{\"s\":\"x\",\"k\":{\"d\":[]}},\"d\"]\n",
            "1:[{\"s\":{\"new\":[1]},\"k\":{}},\"d\"]\n");
  /* dropped values are not rewritten (nor seen) */
  o.prefix = prefix_rule;
  o.prefix_count = 1;
  prefix_rule[0] = (rsc_rewrite_rule){{"/", 1}, {"#", 1}};
  expect_rw(&o, "1:{\"d\":\"/a\",\"b\":\"/b\",\"s\":\"/c\"}\n",
            "1:{\"b\":\"#b\",\"s\":{\"new\":[1]}}\n");
  /* a set_props value that is not JSON is refused */
  set.to = (rsc_rewrite_str){"{nope", 5};
  cr_expect_null(rsc_rewriter_new(&o, ts_sink_write, NULL));
}

Test(rewrite, hint_and_import_rows) {
  rsc_rewrite_options o = prefix_opts("/_next/", "https://cdn/_next/");
  expect_rw(&o, ":HL[\"/_next/a.css\",\"style\",{\"x\":\"/_next/no\"}]\n",
            ":HL[\"https://cdn/_next/a.css\",\"style\",{\"x\":\"/_next/no\"}]\n");
  expect_rw(&o, ":HD\"/_next/dns\"\n", ":HD\"https://cdn/_next/dns\"\n");
  /* webpack/turbopack [id, chunks, name]; "$" items are references */
  expect_rw(&o, "3:I[\"/_next/id\",[\"1\",\"/_next/c.js\",\"$2\"],\"/_next/n\"]\n",
            "3:I[\"/_next/id\",[\"1\",\"https://cdn/_next/c.js\",\"$2\"],\"/_next/n\"]\n");
  /* Parcel [id, name, bundles]; React 18 {"chunks": [...]} */
  expect_rw(&o, "3:I[\"i\",\"/_next/n\",[\"/_next/b.js\"]]\n",
            "3:I[\"i\",\"/_next/n\",[\"https://cdn/_next/b.js\"]]\n");
  expect_rw(&o, "3:I{\"id\":\"/_next/i\",\"chunks\":[\"/_next/b.js\"]}\n",
            "3:I{\"id\":\"/_next/i\",\"chunks\":[\"https://cdn/_next/b.js\"]}\n");
  /* a stream's close row carries a model value; other rows are copied */
  expect_rw(&o, "4:x\n5:\"/_next/i\"\n4:C\"/_next/r\"\n4:C\n6:E{\"message\":\"/_next/e\"}\n",
            "4:x\n5:\"https://cdn/_next/i\"\n4:C\"https://cdn/_next/r\"\n4:C\n"
            "6:E{\"message\":\"/_next/e\"}\n");
  o.flags = RSC_REWRITE_NO_HINTS | RSC_REWRITE_NO_IMPORTS;
  expect_rw(&o, ":HL[\"/_next/a.css\"]\n3:I[1,[\"/_next/c.js\"],\"\"]\n",
            ":HL[\"/_next/a.css\"]\n3:I[1,[\"/_next/c.js\"],\"\"]\n");
}

static void expect_error(const rsc_rewrite_options *o, const char *in, rsc_status code,
                         uint64_t offset, int64_t row, const char *out_want) {
  for (size_t piece = 0; piece <= 1; piece++) {
    rsc_error e;
    size_t n;
    char *out = rewrite_piece(o, in, strlen(in), piece, &e, &n);
    cr_expect_eq(e.code, code, "%s: code %d", in, e.code);
    cr_expect_eq(e.offset, offset, "%s: offset %llu", in, (unsigned long long)e.offset);
    cr_expect_eq(e.row_id, row, "%s: row %lld", in, (long long)e.row_id);
    cr_expect(e.msg && *e.msg);
    if (out_want) cr_expect_str_eq(out, out_want);
    free(out);
  }
}

Test(rewrite, errors_with_offsets) {
  rsc_rewrite_options o = prefix_opts("/", "#");
  expect_error(&o, "1:[1]\n2:[1,]\n", RSC_ERR_BAD_ROW, 6 + 5, 2, "1:[1]\n");
  expect_error(&o, "1:{\"a\" 1}\n", RSC_ERR_BAD_ROW, 7, 1, "");
  expect_error(&o, "1:\"a\\x\"\n", RSC_ERR_BAD_ROW, 5, 1, "");
  expect_error(&o, "1:\"a\tb\"\n", RSC_ERR_BAD_ROW, 4, 1, "");
  expect_error(&o, "1:[1] x\n", RSC_ERR_BAD_ROW, 6, 1, "");
  expect_error(&o, "1:\n", RSC_ERR_BAD_ROW, 2, 1, "");
  expect_error(&o, ":HL[\"/a\"\n", RSC_ERR_BAD_ROW, 8, 0, "");
  expect_error(&o, "1:I[1,\n", RSC_ERR_BAD_ROW, 6, 1, "");
  /* a row cut at the end: the error names its first byte */
  expect_error(&o, "1:[1]\n2:[\"/a\"", RSC_ERR_BAD_ROW, 6, 2, "1:[1]\n");
  expect_error(&o, "1:[1]\n2:T10,abc", RSC_ERR_BAD_ROW, 6, 2, "1:[1]\n");
  expect_error(&o, "1:[1]\n2", RSC_ERR_BAD_ROW, 6, 2, NULL);
  /* framing errors come from the framer */
  expect_error(&o, "1:[1]\nX:1\n", RSC_ERR_BAD_ID, 6, -1, "1:[1]\n");
  /* depth */
  o.max_depth = 3;
  expect_error(&o, "1:[[[1]]]\n1:[[[[1]]]]\n", RSC_ERR_LIMIT, 10 + 5, 1, "1:[[[1]]]\n");
}

Test(rewrite, writer_failure_and_state) {
  rsc_rewrite_options o = prefix_opts("/", "#");
  ts_sink s = {0};
  s.fail_at = 2;
  rsc_rewriter *rw = rsc_rewriter_new(&o, ts_sink_write, &s);
  cr_assert(rw);
  cr_expect_eq(rsc_rewriter_feed(rw, "1:\"/a\"\n2:\"/b\"\n", 14), RSC_ERR_USER);
  cr_expect_eq(rsc_rewriter_error(rw)->row_id, 2);
  cr_expect_eq(rsc_rewriter_feed(rw, "3:1\n", 4), RSC_ERR_USER);
  rsc_rewriter_free(rw);
  free(s.p);
  memset(&s, 0, sizeof s);
  rw = rsc_rewriter_new(&o, ts_sink_write, &s);
  cr_expect_eq(rsc_rewriter_feed(rw, "1:1\n", 4), RSC_OK);
  cr_expect_eq(rsc_rewriter_finish(rw), RSC_OK);
  cr_expect_eq(rsc_rewriter_feed(rw, "1:1\n", 4), RSC_ERR_STATE);
  rsc_rewriter_free(rw);
  free(s.p);
  cr_expect_eq(rsc_rewriter_feed(NULL, "x", 1), RSC_ERR_STATE);
  cr_expect_eq(rsc_rewriter_error(NULL)->code, RSC_ERR_STATE);
}

Test(rewrite, stats) {
  rsc_rewrite_options o = prefix_opts("/", "##");
  rsc_rewrite_str drop = {"d", 1};
  o.drop_props = &drop;
  o.drop_props_count = 1;
  const char *in = "1:[\"/a\",\"/b\"]\n2:[1]\n3:T2,/c4:{\"d\":1}\n5:b2,xy";
  rsc_rewrite_stats st;
  rsc_error e;
  ts_sink s = {0};
  cr_assert_eq(rsc_rewrite(in, strlen(in), &o, ts_sink_write, &s, &e, &st), RSC_OK);
  cr_expect_eq(st.rows, 5);
  cr_expect_eq(st.rows_changed, 3);
  cr_expect_eq(st.strings_changed, 3);
  cr_expect_eq(st.props_dropped, 1);
  cr_expect_eq(st.bytes_in, strlen(in));
  cr_expect_eq(st.bytes_out, s.len);
  cr_expect_str_eq(s.p, "1:[\"##a\",\"##b\"]\n2:[1]\n3:T3,##c4:{}\n5:b2,xy");
  free(s.p);
}

/* The row hook: one call per row, in order, spans that tile the input,
 * and outputs that join into what write gets. */
typedef struct hooked {
  ts_sink out;
  uint64_t next;
  int rows, changed;
  bool tiles;
} hooked;

static int hook(void *ctx, uint64_t a, uint64_t b, const char *out, size_t n, bool changed) {
  hooked *h = ctx;
  if (a != h->next || b <= a) h->tiles = false;
  h->next = b;
  h->rows++;
  h->changed += changed;
  ts_sink_write(&h->out, out, n);
  return 0;
}

Test(rewrite, row_hook) {
  size_t flen;
  char *fx = ts_fixture("html/next-turbopack-binary.rsc", &flen);
  cr_assert(fx);
  rsc_rewrite_options o = prefix_opts("/_next/", "https://cdn.example/_next/");
  rsc_error e;
  size_t wn;
  char *want = rewrite_piece(&o, fx, flen, 0, &e, &wn);
  cr_assert_eq(e.code, RSC_OK);
  static const size_t pieces[] = {0, 1, 5, 333};
  for (size_t k = 0; k < 4; k++) {
    hooked h = {{0}, 0, 0, 0, true};
    rsc_rewriter *rw = rsc_rewriter_new(&o, ts_sink_write, NULL);
    rsc__rewriter_set_row_fn(rw, hook, &h);
    size_t p = pieces[k] ? pieces[k] : flen;
    for (size_t at = 0; at < flen; at += p)
      cr_assert_eq(rsc_rewriter_feed(rw, fx + at, at + p < flen ? p : flen - at), RSC_OK);
    cr_assert_eq(rsc_rewriter_finish(rw), RSC_OK);
    cr_expect(h.tiles, "pieces of %zu", p);
    cr_expect_eq(h.next, flen);
    cr_expect_eq((uint64_t)h.rows, rsc_rewriter_stats(rw)->rows);
    cr_expect_eq((uint64_t)h.changed, rsc_rewriter_stats(rw)->rows_changed);
    cr_expect(h.changed > 0);
    cr_expect(h.out.len == wn && memcmp(h.out.p, want, wn) == 0, "pieces of %zu", p);
    rsc_rewriter_free(rw);
    free(h.out.p);
  }
  free(want);
  free(fx);
}

/* --- failing allocators (ts_counting) ------------------------------------- */

static int sel_fn(void *ctx, const rsc_rewrite_place *pl, const char *s, size_t len,
                  const char **out, size_t *out_len) {
  (void)ctx, (void)pl;
  if (len && s[0] == 'k') {
    *out = "K";
    *out_len = 1;
    return 1;
  }
  return 0;
}

Test(rewrite, allocation_failure) {
  static const char in[] = "1:T3,/ab2:[\"/c\",{\"k\\u0031\":\"kk\",\"d\":1}]\n:HL[\"/x\"]\n3:b2,xy"
                           "4:{\"a\":[[[[\"/deep\"]]]]}\n";
  rsc_rewrite_options o = prefix_opts("/", "//");
  rsc_rewrite_str drop = {"d", 1};
  o.drop_props = &drop;
  o.drop_props_count = 1;
  o.fn = sel_fn;
  rsc_error e;
  size_t wn;
  char *want = rewrite_piece(&o, in, sizeof in - 1, 0, &e, &wn);
  cr_assert_eq(e.code, RSC_OK);
  for (size_t piece = 0; piece <= 3; piece += 3) {
    bool done = false;
    for (unsigned long n = 1; !done && n < 1000; n++) {
      ts_counting c = {.fail_at = n};
      o.alloc = ts_counting_alloc(&c);
      ts_sink s = {0};
      rsc_rewriter *rw = rsc_rewriter_new(&o, ts_sink_write, &s);
      if (rw) {
        size_t p = piece ? piece : sizeof in - 1;
        for (size_t at = 0; at < sizeof in - 1; at += p)
          if (rsc_rewriter_feed(rw, in + at, at + p < sizeof in - 1 ? p : sizeof in - 1 - at))
            break;
        rsc_rewriter_finish(rw);
        rsc_status st = rsc_rewriter_error(rw)->code;
        if (c.calls < n) {
          done = true; /* nothing failed */
          cr_expect_eq(st, RSC_OK);
          cr_expect(s.len == wn && memcmp(s.p, want, wn) == 0);
        } else if (st == RSC_OK) {
          /* the one allocation that may fail quietly: the list of a row's
           * changes, without which the row is scanned again */
          cr_expect(s.len == wn && memcmp(s.p, want, wn) == 0, "failing call %lu", n);
        } else {
          cr_expect_eq(st, RSC_ERR_NOMEM, "failing call %lu: %d", n, st);
        }
        rsc_rewriter_free(rw);
      }
      cr_expect_eq(c.live, 0, "failing call %lu leaks", n);
      free(s.p);
    }
    cr_expect(done);
  }
  free(want);
}
