/* test_builder.c - the Flight builder (src/builder.c): each value kind's
 * exact bytes against what React 19.3.1's server wrote for the same model
 * (tests/golden/builder/, from tests/conformance/builder-react-server.cjs),
 * every tree of builder_trees.c and 2,000 random ones (bt_random) decoded
 * back to their intended dumps, streaming
 * flushes, and errors on bad use (never a crash, out of memory included). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_trees.h"
#include "support.h"

#define GOLDEN RSC_FIXTURES "/../tests/golden/builder/"

static void expect_text(ts_sink *o, const char *want) {
  cr_expect_eq(o->len, strlen(want), "length %zu, want %zu: %s", o->len, strlen(want),
               o->p ? o->p : "");
  if (o->len && o->len == strlen(want))
    cr_expect(!memcmp(o->p, want, o->len), "got %s want %s", o->p, want);
  free(o->p);
  o->p = NULL;
  o->len = o->cap = 0;
}

/* --- every tree --------------------------------------------------------- */

Test(builder, trees_decode_to_their_intended_dumps) {
  cr_assert_geq(bt_count, 30);
  for (size_t i = 0; i < bt_count; i++) {
    const builder_tree *t = &bt_trees[i];
    size_t len;
    rsc_status s;
    char *bytes = bt_write(t, &len, &s);
    cr_assert_not_null(bytes, "%s: %s", t->name, rsc_status_name(s));
    char *want = bt_dump(t);
    /* whole, and in pieces of 7 bytes */
    for (size_t piece = 0; piece <= 7; piece += 7) {
      rsc_decoder *d = ts_decode(bytes, len, piece, 0);
      const rsc_error *e = rsc_decoder_error(d);
      cr_expect_eq(e->code, RSC_OK, "%s: %s at %llu", t->name, e->msg ? e->msg : "",
                   (unsigned long long)e->offset);
      cr_expect_null(rsc_decoder_incomplete(d), "%s: incomplete", t->name);
      char *got = ts_dump(d);
      const char *why = NULL;
      cr_expect(got && ts_json_equal(got, strlen(got), want, strlen(want), &why),
                "%s: %s\n got  %.600s\n want %.600s", t->name, why ? why : "no dump",
                got ? got : "", want);
      rsc_free(got);
      rsc_decoder_free(d);
    }
    free(want);
    free(bytes);
  }
}

Test(builder, random_trees_decode_to_their_intended_dumps) {
  for (uint64_t seed = 1; seed <= 2000; seed++) {
    size_t len;
    rsc_status s;
    char *want;
    char *bytes = bt_random(seed, &len, &want, &s);
    cr_assert_not_null(bytes, "seed %llu: %s", (unsigned long long)seed, rsc_status_name(s));
    rsc_decoder *d = ts_decode(bytes, len, seed % 3 ? 0 : 5, 0);
    const rsc_error *e = rsc_decoder_error(d);
    cr_expect_eq(e->code, RSC_OK, "seed %llu: %s", (unsigned long long)seed, e->msg ? e->msg : "");
    cr_expect_null(rsc_decoder_incomplete(d), "seed %llu: incomplete", (unsigned long long)seed);
    char *got = ts_dump(d);
    const char *why = NULL;
    if (!(got && ts_json_equal(got, strlen(got), want, strlen(want), &why))) {
      cr_expect_fail("seed %llu: %s\n got  %.2000s\n want %.2000s\n bytes %.*s",
                     (unsigned long long)seed, why ? why : "no dump", got ? got : "", want,
                     (int)(len < 3000 ? len : 3000), bytes);
      seed = 100000; /* one report is enough */
    }
    rsc_free(got);
    rsc_decoder_free(d);
    free(want);
    free(bytes);
  }
}

Test(builder, trees_react_wrote_are_byte_for_byte) {
  int n = 0;
  for (size_t i = 0; i < bt_count; i++) {
    const builder_tree *t = &bt_trees[i];
    if (!t->react) continue;
    n++;
    char path[512];
    snprintf(path, sizeof path, GOLDEN "%s.rsc", t->name);
    size_t glen, len;
    char *golden = ts_read(path, &glen);
    cr_assert_not_null(golden, "%s", path);
    rsc_status s;
    char *bytes = bt_write(t, &len, &s);
    cr_assert_not_null(bytes, "%s: %s", t->name, rsc_status_name(s));
    cr_expect(len == glen && !memcmp(bytes, golden, len),
              "%s differs from React's bytes:\n got  %.*s\n want %.*s", t->name,
              (int)(len < 800 ? len : 800), bytes, (int)(glen < 800 ? glen : 800), golden);
    free(bytes);
    free(golden);
  }
  cr_expect_eq(n, 28);
}

/* --- each kind's bytes ---------------------------------------------------- */

static void root_bytes(rsc_builder *b, rsc_bval *v, const char *want) {
  ts_sink o = {0};
  cr_assert_eq(rsc_builder_root(b, v), RSC_OK);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, want);
  rsc_builder_free(b);
}

Test(builder, scalars) {
  rsc_builder *b = rsc_builder_new(NULL);
  root_bytes(b, rsc_build_null(b), "0:null\n");
  b = rsc_builder_new(NULL);
  root_bytes(b, rsc_build_number(b, -0.0), "0:\"$-0\"\n");
  b = rsc_builder_new(NULL);
  root_bytes(b, rsc_build_number(b, 1e-7), "0:1e-7\n");
  b = rsc_builder_new(NULL);
  root_bytes(b, rsc_build_number(b, -INFINITY), "0:\"$-Infinity\"\n");
  b = rsc_builder_new(NULL);
  root_bytes(b, rsc_build_undefined(b), "0:\"$undefined\"\n");
  b = rsc_builder_new(NULL);
  root_bytes(b, rsc_build_string(b, "$a\"\n", 4), "0:\"$$a\\\"\\n\"\n");
}

Test(builder, bad_bigints_are_refused) {
  rsc_builder *b = rsc_builder_new(NULL);
  cr_expect_null(rsc_build_bigint(b, "-0", 2));
  cr_expect_eq(rsc_builder_status(b), RSC_ERR_BAD_VALUE);
  cr_expect_eq(rsc_builder_root(b, NULL), RSC_ERR_BAD_VALUE);
  cr_expect_null(rsc_build_bigint(b, "012", 3));
  cr_expect_null(rsc_build_bigint(b, "1a", 2));
  cr_expect_null(rsc_build_bigint(b, "", 0));
  cr_expect_not_null(rsc_build_bigint(b, "0", 1));
  rsc_builder_free(b);
}

Test(builder, symbols_and_client_refs_are_written_once) {
  rsc_builder *b = rsc_builder_new(NULL);
  const char *chunks[] = {"a-very-long-chunk-name.js"};
  rsc_bval *a = rsc_build_array(b);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_symbol(b, "s", 1)), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_client_ref(b, "m", chunks, 1, "A", 0)), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_client_ref(b, "m", chunks, 1, "B", 0)), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_client_ref(b, "m", chunks, 1, "A", 1)), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_client_ref(b, "m", chunks, 1, "A", 0)), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_symbol(b, "s", 1)), RSC_OK);
  root_bytes(b, a,
             "1:\"$Ss\"\n2:\"a-very-long-chunk-name.js\"\n3:I[\"m\",[\"$2\"],\"A\"]\n"
             "4:I[\"m\",[\"$2\"],\"B\"]\n5:I[\"m\",[\"$2\"],\"A\",1]\n"
             "0:[\"$1\",\"$3\",\"$4\",\"$5\",\"$3\",\"$1\"]\n");
}

/* Metadata given as JSON: written as given, once per text, and refused
 * unless React's webpack client reads it as a client reference. */
Test(builder, client_refs_from_metadata_json) {
  rsc_builder *b = rsc_builder_new(NULL);
  static const char meta[] = "[1337,[7,\"7.chunk.js\"],\"default\"]";
  rsc_bval *a = rsc_build_array(b);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_client_ref_json(b, meta, sizeof meta - 1)), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, rsc_build_client_ref_json(b, meta, sizeof meta - 1)), RSC_OK);
  root_bytes(b, a, "1:I[1337,[7,\"7.chunk.js\"],\"default\"]\n0:[\"$1\",\"$1\"]\n");
  static const char *const bad[] = {
      "",    "[", "{\"id\":1}", "[1,[],\"x\"]]", "[1,\n[],\"x\"]", "\"m\"", "[1,[],\"x\"] junk",
      "null"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    b = rsc_builder_new(NULL);
    cr_expect_null(rsc_build_client_ref_json(b, bad[i], strlen(bad[i])), "%s", bad[i]);
    cr_expect_eq(rsc_builder_status(b), RSC_ERR_BAD_VALUE, "%s", bad[i]);
    rsc_builder_free(b);
  }
  b = rsc_builder_new(NULL);
  cr_expect_null(rsc_build_client_ref_json(b, NULL, 0));
  cr_expect_eq(rsc_builder_status(b), RSC_ERR_STATE);
  rsc_builder_free(b);
  cr_expect_null(rsc_build_client_ref_json(NULL, meta, sizeof meta - 1));
}

Test(builder, import_strings_escape_dollars) {
  rsc_builder *b = rsc_builder_new(NULL);
  const char *chunks[] = {"$c"};
  root_bytes(b, rsc_build_client_ref(b, "$m", chunks, 1, "$$typeof-is-long-enough", 0),
             "1:\"$$$typeof-is-long-enough\"\n2:I[\"$$m\",[\"$$c\"],\"$1\"]\n0:\"$2\"\n");
}

Test(builder, long_string_with_lone_surrogate_is_written_as_textencoder_does) {
  rsc_builder *b = rsc_builder_new(NULL);
  char s[1100];
  memset(s, 'a', sizeof s);
  memcpy(s + 10, "\xed\xa0\x80", 3);
  char want[1200];
  memcpy(want, "1:T44c,", 7);
  memcpy(want + 7, s, sizeof s);
  memcpy(want + 7 + 10, "\xef\xbf\xbd", 3);
  strcpy(want + 7 + sizeof s, "0:\"$1\"\n");
  root_bytes(b, rsc_build_string(b, s, sizeof s), want);
}

Test(builder, string_of_1023_units_stays_inline) {
  /* 1023 units: 511 emoji (2 units each) and one 'a' */
  rsc_builder *b = rsc_builder_new(NULL);
  char s[511 * 4 + 1];
  for (int i = 0; i < 511; i++) memcpy(s + 4 * i, "\xf0\x9f\x98\x80", 4);
  s[511 * 4] = 'a';
  cr_assert_eq(rsc_builder_root(b, rsc_build_string(b, s, sizeof s)), RSC_OK);
  ts_sink o = {0};
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  cr_expect(!strncmp(o.p, "0:\"", 3));
  free(o.p);
  o = (ts_sink){0};
  rsc_builder_free(b);
  b = rsc_builder_new(NULL);
  cr_assert_eq(rsc_builder_root(b, rsc_build_string(b, s, sizeof s - 1)), RSC_OK);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  cr_expect(!strncmp(o.p, "0:\"", 3), "1022 units");
  free(o.p);
  rsc_builder_free(b);
}

Test(builder, streaming_flushes_write_rows_as_values_settle) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *l = rsc_build_lazy(b), *p = rsc_build_promise(b);
  rsc_bval *a = rsc_build_array(b);
  cr_assert_eq(rsc_build_push(b, a, l), RSC_OK);
  cr_assert_eq(rsc_build_push(b, a, p), RSC_OK);
  cr_assert_eq(rsc_builder_root(b, a), RSC_OK);
  cr_expect_eq(rsc_builder_pending(b), 1);
  ts_sink o = {0};
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "0:[\"$L1\",\"$@2\"]\n");
  cr_expect_eq(rsc_builder_pending(b), 2);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "");
  cr_assert_eq(rsc_builder_resolve(b, p, rsc_build_bool(b, 1)), RSC_OK);
  cr_expect_eq(rsc_builder_pending(b), 2);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "2:true\n");
  cr_expect_eq(rsc_builder_pending(b), 1);
  cr_assert_eq(rsc_builder_reject(b, l, "x"), RSC_OK);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "1:E{\"digest\":\"x\"}\n");
  cr_expect_eq(rsc_builder_pending(b), 0);
  rsc_builder_free(b);
}

/* --- bad use ------------------------------------------------------------ */

Test(builder, a_row_whose_value_is_a_pending_lazy_waits_for_it) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *l = rsc_build_lazy(b), *m = rsc_build_lazy(b);
  cr_assert_eq(rsc_builder_root(b, l), RSC_OK);
  ts_sink o = {0};
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "");
  cr_expect_eq(rsc_builder_pending(b), 1);
  cr_assert_eq(rsc_builder_resolve(b, l, m), RSC_OK);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "");
  cr_assert_eq(rsc_builder_reject(b, m, "late"), RSC_OK);
  cr_assert_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "0:E{\"digest\":\"late\"}\n");
  cr_expect_eq(rsc_builder_pending(b), 0);
  rsc_builder_free(b);
}

Test(builder, a_value_placed_twice_is_written_once_then_named) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *x = rsc_build_array(b), *z = rsc_build_array(b), *o = rsc_build_object(b),
           *p = rsc_build_object(b);
  cr_expect_eq(rsc_build_push(b, z, rsc_build_number(b, 1)), RSC_OK);
  cr_expect_eq(rsc_build_push(b, z, x), RSC_OK); /* x -> z -> x */
  cr_expect_eq(rsc_build_push(b, x, z), RSC_OK);
  cr_expect_eq(rsc_build_push(b, x, z), RSC_OK);
  cr_expect_eq(rsc_build_push(b, x, o), RSC_OK);
  /* under a key with ":" no path names it: written again */
  cr_expect_eq(rsc_build_put(b, o, "a:b", 3, p), RSC_OK);
  cr_expect_eq(rsc_build_put(b, o, "k", 1, p), RSC_OK);
  cr_expect_eq(rsc_build_put(b, o, "l", 1, p), RSC_OK);
  /* primitives and client references may be placed again, as before */
  rsc_bval *s = rsc_build_string(b, "s", 1);
  rsc_bval *c = rsc_build_client_ref(b, "m", NULL, 0, "n", 0);
  cr_expect_eq(rsc_build_put(b, p, "s", 1, s), RSC_OK);
  cr_expect_eq(rsc_build_push(b, x, s), RSC_OK);
  cr_expect_eq(rsc_build_push(b, x, c), RSC_OK);
  cr_expect_eq(rsc_build_push(b, x, c), RSC_OK);
  cr_expect_eq(rsc_builder_root(b, x), RSC_OK);
  ts_sink w = {0};
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &w), RSC_OK);
  expect_text(&w,
              "1:I[\"m\",[],\"n\"]\n"
              "0:[[1,\"$0\"],\"$0:0\",{\"a:b\":{\"s\":\"s\"},\"k\":{\"s\":\"s\"},\"l\":\"$0:2:k\"},"
              "\"s\",\"$1\",\"$1\"]\n");
  rsc_builder_free(b);

  b = rsc_builder_new(NULL);
  rsc_bval *same = rsc_build_object(b);
  cr_expect_eq(rsc_build_map_put(b, same, same, same), RSC_ERR_STATE); /* not a map */
  cr_expect_eq(rsc_build_push(b, same, same), RSC_ERR_STATE);          /* not an array */
  cr_expect_null(rsc_build_element(b, rsc_build_string(b, "p", 1), NULL, 0, rsc_build_array(b)));
  cr_expect_null(rsc_build_element(b, same, NULL, 0, same));
  cr_expect_eq(rsc_builder_status(b), RSC_ERR_STATE);
  rsc_builder_free(b);
}

/* A row's value met again inside a later row is named "$<id>", and what
 * it holds from there. */
Test(builder, a_value_shared_across_rows_is_named_from_where_it_was_written) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *o = rsc_build_object(b), *inner = rsc_build_array(b), *p = rsc_build_promise(b),
           *p2 = rsc_build_promise(b), *root = rsc_build_array(b), *later = rsc_build_array(b);
  cr_expect_eq(rsc_build_put(b, o, "in", 2, inner), RSC_OK);
  cr_expect_eq(rsc_build_push(b, root, p), RSC_OK);
  cr_expect_eq(rsc_build_push(b, root, p2), RSC_OK);
  cr_expect_eq(rsc_builder_root(b, root), RSC_OK);
  ts_sink w = {0};
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &w), RSC_OK);
  expect_text(&w, "0:[\"$@1\",\"$@2\"]\n");
  cr_expect_eq(rsc_builder_resolve(b, p, o), RSC_OK);
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &w), RSC_OK);
  expect_text(&w, "1:{\"in\":[]}\n");
  cr_expect_eq(rsc_build_push(b, later, o), RSC_OK);
  cr_expect_eq(rsc_build_push(b, later, inner), RSC_OK);
  cr_expect_eq(rsc_build_push(b, later, root), RSC_OK);
  cr_expect_eq(rsc_build_push(b, later, p), RSC_OK);
  cr_expect_eq(rsc_builder_resolve(b, p2, later), RSC_OK);
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &w), RSC_OK);
  expect_text(&w, "2:[\"$1\",\"$1:in\",\"$0\",\"$@1\"]\n");
  cr_expect_eq(rsc_builder_pending(b), 0);
  rsc_builder_free(b);
}

Test(builder, values_of_another_builder_are_refused) {
  rsc_builder *b = rsc_builder_new(NULL), *c = rsc_builder_new(NULL);
  rsc_bval *v = rsc_build_string(c, "x", 1), *a = rsc_build_array(b);
  cr_expect_eq(rsc_build_push(b, a, v), RSC_ERR_STATE);
  cr_expect_eq(rsc_build_push(c, a, v), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_root(b, v), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_resolve(b, rsc_build_lazy(c), v), RSC_ERR_STATE);
  rsc_builder_free(b);
  rsc_builder_free(c);
}

Test(builder, settling_twice_or_a_non_pending_value_is_refused) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *l = rsc_build_lazy(b), *p = rsc_build_promise(b);
  cr_expect_eq(rsc_builder_resolve(b, l, rsc_build_null(b)), RSC_OK);
  cr_expect_eq(rsc_builder_resolve(b, l, rsc_build_null(b)), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_reject(b, l, "d"), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_reject(b, p, "d"), RSC_OK);
  cr_expect_eq(rsc_builder_reject(b, p, "d"), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_resolve(b, rsc_build_array(b), rsc_build_null(b)), RSC_ERR_STATE);
  rsc_bval *q = rsc_build_promise(b);
  cr_expect_eq(rsc_builder_resolve(b, q, q), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_resolve(b, NULL, q), RSC_ERR_STATE);
  rsc_builder_free(b);
}

Test(builder, root_once_and_written_containers_are_frozen) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *a = rsc_build_array(b);
  cr_expect_eq(rsc_builder_root(b, a), RSC_OK);
  cr_expect_eq(rsc_builder_root(b, rsc_build_null(b)), RSC_ERR_STATE);
  ts_sink o = {0};
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "0:[]\n");
  cr_expect_eq(rsc_build_push(b, a, rsc_build_null(b)), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_flush(b, NULL, NULL), RSC_ERR_STATE);
  rsc_builder_free(b);
}

Test(builder, bad_binary_and_null_arguments) {
  rsc_builder *b = rsc_builder_new(NULL);
  uint8_t bytes[3] = {0};
  cr_expect_null(rsc_build_binary(b, RSC_INT16, bytes, 3));
  cr_expect_eq(rsc_builder_status(b), RSC_ERR_BAD_VALUE);
  cr_expect_null(rsc_build_binary(b, (rsc_binary_kind)99, bytes, 1));
  cr_expect_null(rsc_build_string(b, NULL, 2));
  cr_expect_null(rsc_build_client_ref(b, NULL, NULL, 0, "n", 0));
  cr_expect_null(rsc_build_null(NULL));
  cr_expect_eq(rsc_build_push(NULL, NULL, NULL), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_flush(NULL, ts_sink_write, NULL), RSC_ERR_STATE);
  cr_expect_eq(rsc_builder_pending(NULL), 0);
  rsc_builder_free(NULL);
  rsc_builder_free(b);
}

Test(builder, a_failing_writer_stops_the_builder) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *l = rsc_build_lazy(b), *a = rsc_build_array(b);
  cr_assert_eq(rsc_build_push(b, a, l), RSC_OK);
  cr_assert_eq(rsc_builder_root(b, a), RSC_OK);
  ts_sink o = {.fail_at = 1};
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_ERR_USER);
  cr_expect_eq(rsc_builder_resolve(b, l, rsc_build_null(b)), RSC_OK);
  o.fail_at = 0;
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_ERR_USER);
  cr_expect_eq(o.len, 0);
  rsc_builder_free(b);
}

Test(builder, nesting_past_the_limit_is_an_error_and_writes_nothing) {
  rsc_builder *b = rsc_builder_new(NULL);
  rsc_bval *v = rsc_build_null(b);
  for (int i = 0; i < 5000; i++) {
    rsc_bval *a = rsc_build_array(b);
    cr_assert_eq(rsc_build_push(b, a, v), RSC_OK);
    v = a;
  }
  cr_assert_eq(rsc_builder_root(b, v), RSC_OK);
  ts_sink o = {0};
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_ERR_LIMIT);
  cr_expect_eq(o.len, 0);
  rsc_builder_free(b);
}

/* --- out of memory --------------------------------------------------------- */

/* A tree built under a budget of k allocations for every k until it fits;
 * each run either fails with a code or writes the bytes it writes without a
 * budget. Call k + 1 and every later one fail (ts_counting, sticky). */
static void under_every_budget(const char *name, int min_failures) {
  const builder_tree *page = NULL;
  for (size_t i = 0; i < bt_count; i++)
    if (!strcmp(bt_trees[i].name, name)) page = &bt_trees[i];
  cr_assert_not_null(page, "%s", name);
  size_t want_len;
  rsc_status s;
  char *want = bt_write(page, &want_len, &s);
  cr_assert_not_null(want);
  bool done = false;
  int failures = 0;
  for (long k = 0; k < 100000 && !done; k++) {
    ts_counting g = {.fail_at = (unsigned long)k + 1, .sticky = true};
    rsc_alloc al = ts_counting_alloc(&g);
    rsc_builder *b = rsc_builder_new(&al);
    if (!b) {
      failures++;
      continue;
    }
    ts_sink o = {0};
    s = page->build(b, ts_sink_write, &o);
    if (s == RSC_OK) {
      cr_expect_eq(o.len, want_len);
      cr_expect(!memcmp(o.p, want, want_len), "budget %ld", k);
      done = true;
    } else {
      cr_expect(s == RSC_ERR_NOMEM, "%s, budget %ld: %s", name, k, rsc_status_name(s));
      failures++;
    }
    free(o.p);
    rsc_builder_free(b);
  }
  cr_expect(done, "%s", name);
  cr_expect_gt(failures, min_failures, "%s", name);
  free(want);
}

Test(builder, every_allocation_failure_is_an_error_code) {
  under_every_budget("page", 50);
  const char *more[] = {"shared",         "cycle",       "server_refs",      "form_data_file",
                        "blobs",          "text_stream", "byte_stream",      "stream_error",
                        "async_iterator", "iterators",   "shared_in_promise"};
  for (size_t i = 0; i < sizeof more / sizeof *more; i++) under_every_budget(more[i], 5);
}

Test(builder, streams_and_the_new_kinds_refuse_misuse) {
  rsc_builder *b = rsc_builder_new(NULL);
  cr_expect_null(rsc_build_stream(b, (rsc_stream_kind)9));
  cr_expect_eq(rsc_builder_status(b), RSC_ERR_BAD_VALUE);
  rsc_bval *bytes = rsc_build_stream(b, RSC_STREAM_BYTES),
           *text = rsc_build_stream(b, RSC_STREAM_TEXT),
           *it = rsc_build_stream(b, RSC_STREAM_ITERATOR), *s = rsc_build_string(b, "s", 1);
  cr_expect_eq(rsc_builder_stream_push(b, bytes, s), RSC_ERR_STATE); /* bytes only */
  cr_expect_eq(rsc_builder_stream_close(b, text, s), RSC_ERR_STATE); /* no return value */
  cr_expect_eq(rsc_builder_stream_push(b, s, s), RSC_ERR_STATE);     /* not a stream */
  cr_expect_eq(rsc_builder_stream_close(b, it, s), RSC_OK);
  cr_expect_eq(rsc_builder_stream_push(b, it, s), RSC_ERR_STATE); /* ended */
  cr_expect_eq(rsc_builder_stream_error(b, it, "d"), RSC_ERR_STATE);
  cr_expect_null(rsc_build_server_ref(b, "a#b", 3, rsc_build_object(b))); /* bound: an array */
  cr_expect_null(rsc_build_blob(b, "t", 1, NULL, 3));
  rsc_bval *f = rsc_build_form_data(b);
  cr_expect_eq(rsc_build_form_append(b, f, "n", 1, rsc_build_number(b, 1)), RSC_ERR_STATE);
  cr_expect_eq(rsc_build_form_append(b, s, "n", 1, s), RSC_ERR_STATE);
  cr_expect_eq(rsc_build_push(b, rsc_build_iterator(b), s), RSC_OK);
  rsc_builder_free(b);

  /* an open stream is pending until it ends; its items follow as pushed */
  b = rsc_builder_new(NULL);
  rsc_bval *st = rsc_build_stream(b, RSC_STREAM_ITERABLE), *root = rsc_build_array(b);
  cr_expect_eq(rsc_build_push(b, root, st), RSC_OK);
  cr_expect_eq(rsc_build_push(b, root, st), RSC_OK);
  cr_expect_eq(rsc_builder_root(b, root), RSC_OK);
  ts_sink o = {0};
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "1:X\n0:[\"$1\",\"$1\"]\n");
  cr_expect_eq(rsc_builder_pending(b), 1);
  cr_expect_eq(rsc_builder_stream_push(b, st, rsc_build_number(b, 1)), RSC_OK);
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "1:1\n");
  cr_expect_eq(rsc_builder_pending(b), 1);
  cr_expect_eq(rsc_builder_stream_close(b, st, rsc_build_null(b)), RSC_OK);
  cr_expect_eq(rsc_builder_flush(b, ts_sink_write, &o), RSC_OK);
  expect_text(&o, "2:null\n1:C\"$2\"\n");
  cr_expect_eq(rsc_builder_pending(b), 0);
  rsc_builder_free(b);
}
