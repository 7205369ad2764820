/* test_limits.c - every rsc_limits field: its default, and the error it
 * gives (RSC_ERR_LIMIT, the offset, the row) whatever the feed pattern.
 *
 * Offsets: the row limit names the first byte past the limit (or the
 * length digit that declared too much); the total limit names the first
 * byte past it; the depth limit names the bracket that went too deep;
 * node, chunk and path limits name the start of the row being decoded
 * (the row the JSON came from, even when it is revived later). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define S(lit) lit, sizeof(lit) - 1

static rsc_decoder *decode_lim(const char *in, size_t len, const rsc_limits *lim, uint32_t flags,
                               int mode, rsc_error *err) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  if (lim) opt.limits = *lim;
  if (mode == 0) return rsc_decode(in, len, &opt, err);
  /* 1 and 5: the one-byte and small-feed fast paths; 24: longer pieces of
   * a text or binary row (rsc__frame_append_length). */
  size_t piece = mode == 1 ? 1 : mode == 2 ? 5 : 24;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert(d);
  for (size_t i = 0; i < len; i += piece)
    rsc_decoder_feed(d, in + i, len - i < piece ? len - i : piece);
  rsc_decoder_finish(d);
  *err = *rsc_decoder_error(d);
  return d;
}

static void expect_limit(const char *in, size_t len, const rsc_limits *lim, uint32_t flags,
                         uint64_t offset, int64_t row, const char *msg) {
  for (int mode = 0; mode < 4; mode++) {
    rsc_error e;
    memset(&e, 0xA5, sizeof e);
    rsc_decoder *d = decode_lim(in, len, lim, flags, mode, &e);
    cr_assert(d);
    cr_expect_eq(e.code, RSC_ERR_LIMIT, "mode %d: code %d (%s)", mode, e.code, e.msg ? e.msg : "");
    cr_expect_eq(e.offset, offset, "mode %d: offset %llu, want %llu", mode,
                 (unsigned long long)e.offset, (unsigned long long)offset);
    cr_expect_eq(e.row_id, row, "mode %d: row %lld, want %lld", mode, (long long)e.row_id,
                 (long long)row);
    cr_assert(e.msg != NULL);
    if (msg) cr_expect_str_eq(e.msg, msg, "mode %d", mode);
    cr_expect_null(rsc_dump(d, 0, NULL));
    rsc_decoder_free(d);
  }
}

static void expect_ok(const char *in, size_t len, const rsc_limits *lim, uint32_t flags,
                      const char *want) {
  for (int mode = 0; mode < 4; mode++) {
    rsc_error e;
    memset(&e, 0xA5, sizeof e);
    rsc_decoder *d = decode_lim(in, len, lim, flags, mode, &e);
    cr_assert(d);
    cr_assert_eq(e.code, RSC_OK, "mode %d: %s at %llu", mode, e.msg ? e.msg : "",
                 (unsigned long long)e.offset);
    if (want) {
      char *dump = ts_dump(d);
      cr_assert(dump);
      cr_expect_str_eq(dump, want, "mode %d", mode);
      rsc_free(dump);
    }
    rsc_decoder_free(d);
  }
}

/* n nested arrays (or objects) around a value, as a model row of id 0. */
static char *nest(size_t n, bool objects, const char *inner, size_t *len) {
  size_t il = strlen(inner);
  char *b = malloc(n * 8 + il + 8);
  size_t o = 0;
  o += (size_t)sprintf(b + o, "0:");
  for (size_t i = 0; i < n; i++) o += (size_t)sprintf(b + o, objects ? "{\"a\":" : "[");
  memcpy(b + o, inner, il);
  o += il;
  for (size_t i = 0; i < n; i++) b[o++] = objects ? '}' : ']';
  b[o++] = '\n';
  b[o] = 0;
  *len = o;
  return b;
}

/* ---- defaults ------------------------------------------------------------ */

Test(limits, zero_means_the_documented_default) {
  rsc_options opt;
  rsc_options_init(&opt);
  cr_expect_eq(opt.limits.max_row_bytes, 0);
  cr_expect_eq(opt.limits.max_depth, 0);
  /* The default depth is 5000: 5000 levels decode, 5001 do not, through
   * both JSON parsers (simdjson, and the fallback a lone surrogate takes). */
  const char *inners[] = {"1", "\"\\ud800\""};
  for (int k = 0; k < 2; k++) {
    size_t len;
    char *in = nest(5000, false, inners[k], &len);
    rsc_error e;
    rsc_decoder *d = rsc_decode(in, len, NULL, &e);
    cr_expect_eq(e.code, RSC_OK, "%s: %s", inners[k], e.msg ? e.msg : "");
    rsc_decoder_free(d);
    free(in);
    in = nest(5001, false, inners[k], &len);
    d = rsc_decode(in, len, NULL, &e);
    cr_expect_eq(e.code, RSC_ERR_LIMIT);
    cr_expect_eq(e.offset, 2 + 5000); /* the 5001st '[' */
    cr_expect_eq(e.row_id, 0);
    rsc_decoder_free(d);
    free(in);
  }
  /* The row default is 256 MiB: a length of 0x10000000 is allowed, one
   * more byte is not (nothing is allocated for a declared length). */
  expect_limit(S("1:T10000001,"), NULL, 0, 10, 1, "row length exceeds the row size limit");
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_expect_eq(rsc_decoder_feed(d, S("1:T10000000,abc")), RSC_OK);
  rsc_decoder_free(d);
}

/* ---- row bytes ----------------------------------------------------------- */

Test(limits, row_bytes_newline_row) {
  rsc_limits lim = {0};
  lim.max_row_bytes = 8;
  expect_ok(S("0:\"123456\"\n"), &lim, 0, "{\"ok\":\"123456\"}"); /* 8 bytes of data */
  expect_limit(S("0:\"1234567\"\n"), &lim, 0, 10, 0, "row exceeds the row size limit");
  /*                      ^ offset 2 + 8: the 9th byte of the row's data */
  expect_limit(S("1:2\n0:Z\"12345678901234567890\"\n"), &lim, 0, 7 + 8, 0, NULL);
  /*                         ^ data starts after the tag, at 7 */
}

Test(limits, row_bytes_length_row) {
  rsc_limits lim = {0};
  lim.max_row_bytes = 8;
  expect_ok(S("1:T8,123456780:\"$1\"\n"), &lim, 0, "{\"ok\":\"12345678\"}");
  expect_limit(S("1:T9,123456789"), &lim, 0, 3, 1, "row length exceeds the row size limit");
  /*                 ^ the length digit */
  expect_limit(S("0:\"$1\"\n1:T100,"), &lim, 0, 11, 1, NULL);
  /*               0:"$1"\n1:T1^ "10" is 16 */
  expect_limit(S("1:r\n1:b9,abcdefghi"), &lim, 0, 7, 1, NULL);
}

/* ---- total bytes --------------------------------------------------------- */

Test(limits, total_bytes_at_the_exact_byte) {
  rsc_limits lim = {0};
  lim.max_total_bytes = 10;
  /* 0:1\n1:23456\n  - the 11th byte (offset 10) is the '6' */
  expect_limit(S("0:1\n1:23456\n"), &lim, 0, 10, 1, "stream exceeds the total size limit");
  /* In the middle of an id: no row id yet. */
  lim.max_total_bytes = 5;
  expect_limit(S("0:1\n12:3\n"), &lim, 0, 5, -1, NULL);
  /* Exactly the limit is fine. */
  lim.max_total_bytes = 12;
  expect_ok(S("0:1\n1:23456\n"), &lim, 0, "{\"ok\":1}");
  /* Inside a text row fed in pieces longer than the small-feed path's:
   * 0:"$1"\n is 7 bytes, 1:T40, 6 more; the limit falls at offset 60,
   * inside the third 24-byte piece, and the stream stops 5 bytes short of
   * the row's end: a piece appended past the limit would leave no error
   * but the unfinished row's. */
  static const char text[] = "0:\"$1\"\n1:T40,"
                             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?";
  lim.max_total_bytes = 60;
  expect_limit(text, sizeof text - 1 - 5, &lim, 0, 60, 1, "stream exceeds the total size limit");
  expect_limit(text, sizeof text - 1, &lim, 0, 60, 1, "stream exceeds the total size limit");
  lim.max_total_bytes = sizeof text - 1;
  expect_ok(text, sizeof text - 1, &lim, 0,
            "{\"ok\":\"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?\"}");
}

Test(limits, total_bytes_decodes_what_came_before) {
  rsc_limits lim = {0};
  lim.max_total_bytes = 10;
  rsc_options opt;
  rsc_options_init(&opt);
  opt.limits = lim;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_eq(rsc_decoder_feed(d, S("0:1\n")), RSC_OK);
  cr_expect_eq(rsc_decoder_feed(d, S("1:23456\n")), RSC_ERR_LIMIT);
  cr_expect_eq(rsc_decoder_bytes(d), 10); /* not one byte past the limit */
  cr_expect_eq(rsc_decoder_error(d)->offset, 10);
  /* Later feeds are refused without reading. */
  cr_expect_eq(rsc_decoder_feed(d, S("2:3\n")), RSC_ERR_LIMIT);
  cr_expect_eq(rsc_decoder_bytes(d), 10);
  rsc_decoder_free(d);
}

/* ---- depth ----------------------------------------------------------------- */

Test(limits, depth_simdjson_and_fallback) {
  rsc_limits lim = {0};
  lim.max_depth = 10;
  const char *inners[] = {"1", "\"\\ud800\"", "\"[[[[[[[[[[[[[[\""};
  for (int k = 0; k < 3; k++) {
    for (int obj = 0; obj < 2; obj++) {
      size_t len;
      char *in = nest(10, obj, inners[k], &len);
      expect_ok(in, len, &lim, 0, NULL);
      free(in);
      in = nest(11, obj, inners[k], &len);
      /* the 11th opening bracket */
      expect_limit(in, len, &lim, 0, 2 + (obj ? 5 * 10 : 10), 0,
                   "JSON nested deeper than the depth limit");
      free(in);
    }
  }
}

Test(limits, depth_in_other_rows) {
  rsc_limits lim = {0};
  lim.max_depth = 2;
  expect_limit(S("0:1\n1:E{\"a\":[[1]]}\n"), &lim, 0, 13, 1, NULL);
  /*                 0:1\n1:E{"a":[^ the third level */
  expect_limit(S(":HL[[[\"a\"]]]\n0:1\n"), &lim, 0, 5, 0, NULL);
  /*                  ^ */
  expect_limit(S("1:I[[[1]]]\n"), &lim, 0, 5, 1, NULL);
  /* A string with brackets does not count. */
  expect_ok(S("0:[[\"[[[[\"]]\n"), &lim, 0, "{\"ok\":[[\"[[[[\"]]}");
}

/* An async iterable's item and end rows are parsed inside the text of
 * their iterator result ({"done":false,"value":<row>}, as React's client
 * parses them), one level deeper than the row: the error still names the
 * row's own bracket, never a byte past the input (found by fuzz_decode:
 * the offset was the bracket's place in that text). */
Test(limits, depth_in_async_iterable_items) {
  rsc_limits lim = {0};
  lim.max_depth = 1;
  expect_limit(S("1:X\n0:\"$1\"\n1:{\"a\":1}\n"), &lim, 0, 13, 1,
               "JSON nested deeper than the depth limit");
  /*              1:X\n0:"$1"\n1:^ */
  expect_limit(S("1:x\n0:\"$1\"\n1:[1]\n"), &lim, 0, 13, 1, NULL);
  expect_limit(S("1:X\n0:\"$1\"\n1:C[1]\n"), &lim, 0, 14, 1, NULL);
  /*              1:X\n0:"$1"\n1:C^ */
  /* the fuzz input: offset 22 there, 10 bytes past the input's end */
  expect_limit(S("1:X\n1:{\n1:{\""), &lim, RSC_OPT_DEV | RSC_OPT_ALLOW_PARTIAL, 6, 1, NULL);
}

/* ---- nodes ------------------------------------------------------------------ */

Test(limits, nodes) {
  rsc_limits lim = {0};
  lim.max_nodes = 64;
  expect_ok(S("0:[1,2,3]\n"), &lim, 0, "{\"ok\":[1,2,3]}");
  char big[600];
  size_t o = (size_t)sprintf(big, "0:1\n1:2\n2:[");
  size_t row2 = 8;
  for (int i = 0; i < 100; i++) o += (size_t)sprintf(big + o, "%s%d", i ? "," : "", i);
  o += (size_t)sprintf(big + o, "]\n");
  expect_limit(big, o, &lim, 0, row2, 2, "too many values");
}

/* ---- chunks ------------------------------------------------------------------ */

Test(limits, chunks) {
  rsc_limits lim = {0};
  lim.max_chunks = 3;
  expect_ok(S("1:1\n2:2\n0:[\"$1\",\"$2\"]\n"), &lim, 0, "{\"ok\":[1,2]}");
  expect_limit(S("1:1\n2:2\n3:3\n0:1\n"), &lim, 0, 8, 3, "too many chunks");
  /*                      ^ */
  expect_limit(S("0:[\"$1\",\"$2\",\"$3\"]\n"), &lim, 0, 0, 0, "too many chunks");
}

/* ---- path hops ---------------------------------------------------------------- */

Test(limits, path_hops) {
  rsc_limits lim = {0};
  lim.max_path_hops = 2;
  expect_ok(S("1:{\"a\":{\"b\":1}}\n0:\"$1:a:b\"\n"), &lim, 0, "{\"ok\":1}");
  expect_limit(S("1:{\"a\":{\"b\":{\"c\":1}}}\n0:\"$1:a:b:c\"\n"), &lim, 0, 22, 0,
               "reference path too long");
  /*                                     ^ row 0 */
  /* A row revived lazily (read only at finish) still names its own row. */
  expect_limit(S("0:\"$L2\"\n1:{\"a\":{\"b\":{\"c\":1}}}\n2:\"$1:a:b:c\"\n"), &lim, 0, 30, 2, NULL);
  /*                       row 2 starts at 8 + 22 = 30 ^ */
}

/* ---- a limit error is sticky --------------------------------------------------- */

Test(limits, sticky) {
  rsc_limits lim = {0};
  lim.max_depth = 1;
  rsc_options opt;
  rsc_options_init(&opt);
  opt.limits = lim;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_expect_eq(rsc_decoder_feed(d, S("0:[[1]]\n")), RSC_ERR_LIMIT);
  cr_expect_eq(rsc_decoder_feed(d, S("1:1\n")), RSC_ERR_LIMIT);
  cr_expect_eq(rsc_decoder_finish(d), RSC_ERR_LIMIT);
  cr_expect_eq(rsc_decoder_error(d)->offset, 3);
  rsc_decoder_free(d);
}

/* Rows of 64 KB and more get a string region fitted to their quotes
 * (json_shim.cpp): the densest strings there are (empty ones, escapes that
 * shrink, escaped quotes, keys) still fit it; ASan would see a write past
 * it, the region being its block's whole size in a fresh decoder. */
Test(limits, big_rows_fill_their_string_region) {
  static const struct {
    const char *open, *item, *close;
    const char *first; /* the first item's string value */
  } shapes[] = {
      {"[", "\"\"", "]", ""},
      {"[", "\"\\u0041\"", "]", "A"},
      {"[", "\"\\\"\"", "]", "\""},
      {"[", "\"\\ud83d\\ude00\"", "]", "\xf0\x9f\x98\x80"},
  };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    size_t n = 40000, il = strlen(shapes[s].item);
    size_t cap = 8 + n * (il + 1) + 8;
    char *row = malloc(cap);
    size_t o = 0;
    o += (size_t)sprintf(row + o, "0:%s", shapes[s].open);
    for (size_t i = 0; i < n; i++) {
      memcpy(row + o, shapes[s].item, il);
      o += il;
      row[o++] = i + 1 < n ? ',' : ']';
    }
    row[o++] = '\n';
    rsc_decoder *d = rsc_decode(row, o, NULL, NULL);
    cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK, "shape %zu", s);
    const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
    cr_assert_eq(rsc_node_len(root), n, "shape %zu", s);
    cr_expect_str_eq(rsc_node_string(rsc_node_at(root, 0), NULL), shapes[s].first, "shape %zu", s);
    cr_expect_str_eq(rsc_node_string(rsc_node_at(root, n - 1), NULL), shapes[s].first, "shape %zu",
                     s);
    rsc_decoder_free(d);
    free(row);
  }
  /* Keys: an object of 20000 one-letter keys, all distinct. */
  size_t n = 20000, o = 0;
  char *row = malloc(16 + n * 16);
  o += (size_t)sprintf(row, "0:{");
  for (size_t i = 0; i < n; i++)
    o += (size_t)sprintf(row + o, "%s\"%zx\":\"\"", i ? "," : "", i + 0x10000);
  o += (size_t)sprintf(row + o, "}\n");
  rsc_decoder *d = rsc_decode(row, o, NULL, NULL);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  cr_expect_eq(rsc_node_len(rsc_chunk_value(rsc_decoder_root(d))), n);
  rsc_decoder_free(d);
  free(row);
}
