#define _POSIX_C_SOURCE 200809L
/* test_json.c - the JSON stage (src/json_shim.cpp, src/json_fallback.c):
 * what JSON.parse makes of a row (key order, numbers, surrogates, bad
 * UTF-8, V8's SyntaxError texts) and runs of rows parsed as one batch,
 * through compact dumps of small payloads; and the iterators of src/value.h. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "json.h"
#include "support.h"
#include "value.h"

Test(json, objects_follow_javascript_rules) {
  DUMP("0:{\"b\":1,\"2\":2,\"a\":3,\"1\":4,\"10\":5,\"-1\":6,\"01\":7}\n",
       "{\"ok\":{\"1\":4,\"2\":2,\"10\":5,\"b\":1,\"a\":3,\"-1\":6,\"01\":7}}");
  DUMP("0:{\"a\":1,\"b\":2,\"a\":\"$undefined\"}\n", "{\"ok\":{\"b\":2}}");
  DUMP("0:{\"a\":1,\"b\":2,\"a\":3}\n", "{\"ok\":{\"a\":3,\"b\":2}}");
  DUMP("0:{\"__proto__\":{\"polluted\":true},\"a\":1,\"c\":[\"$undefined\"]}\n",
       "{\"ok\":{\"a\":1,\"c\":[{\"$\":\"undefined\"}]}}");
  DUMP("0:{\"__proto__\":\"$5\"}\n", "{\"ok\":{}}");
  DUMP("0:{\"$a\":\"$$b\",\"$\":1}\n",
       "{\"ok\":{\"$\":\"object\",\"members\":{\"$a\":\"$b\",\"$\":1}}}");
}

Test(json, numbers_are_javascript_doubles) {
  DUMP("0:[12345678901234567890,100000000000000000000000,1e400,-1e400,0.1,1e21,1.5e-7,-0.0]\n",
       "{\"ok\":[12345678901234567000,1e+23,{\"$\":\"Infinity\"},{\"$\":\"-Infinity\"},0.1,1e+21,"
       "1.5e-7,{\"$\":\"-0\"}]}");
}

Test(json, lone_surrogates_survive) {
  DUMP("0:[\"\\ud800\",\"a\\udc00b\",\"\\ud83d\\ude00\",\"\\ud800\\u0041\"]\n",
       "{\"ok\":[\"\\ud800\",\"a\\udc00b\",\"\xf0\x9f\x98\x80\",\"\\ud800A\"]}");
}

Test(json, invalid_utf8_becomes_replacement_characters) {
  DUMP("0:\"a\xff"
       "b\xe2\x82"
       "c\xf0\x9f\x98\"\n",
       "{\"ok\":\"a\xef\xbf\xbd"
       "b\xef\xbf\xbd"
       "c\xef\xbf\xbd\"}");
  DUMP("1:T4,a\xc3\x28z0:\"$1\"\n", "{\"ok\":\"a\xef\xbf\xbd(z\"}");
}

Test(json, syntax_errors_read_like_v8) {
  DUMP("0:zabc\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'z', "
                   "\\\"zabc\\\" is not valid JSON\"}}");
  DUMP("0:{\"a\":1\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected ',' or '}' after "
                       "property value in JSON at position 6\"}}");
  DUMP("0:[1,2\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected ',' or ']' after array "
                   "element in JSON at position 4\"}}");
  DUMP(
      "0:\"abc\n",
      "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unterminated string in JSON at position 4\"}}");
  DUMP("0:{\"aaaaaaaaaaaaaaaaaaaa\":zzzzzzzzzzzzzzzzzzzzzz}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'z', "
       "...\\\"aaaaaaaa\\\":zzzzzzzzzz\\\"... is not valid JSON\"}}");
  DUMP("0:01\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected number in JSON at position 1\"}}");
  DUMP("0:undefined\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"\\\"undefined\\\" is not valid JSON\"}}");
}

/* The SyntaxError texts of Node 20's V8 (11.3), where React's client runs,
 * for each way a row can fail: which errors name what was expected and
 * which name the token found (a ':' missing after an object's first key
 * is named, after a later key the token is), the end of input inside an
 * escape, an escaped character beyond Latin-1, the one UTF-16 unit V8
 * quotes (half of a surrogate pair), context cut inside a pair, and NUL
 * bytes kept in the message. Every expected text was checked against
 * Node 20's JSON.parse of the same body. */
Test(json, syntax_errors_follow_node20) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct {
    const char *in;
    const char *want;
  } cases[] = {
      {"0: {\"a\":1}x\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected non-whitespace character after JSON at position 8\"}}"},
      {"0: {\"a\":1,\"b\",1}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token ',', \\\" {\\\"a\\\":1,\\\"b\\\",1}\\\" is not valid JSON\"}}"},
      {"0: {\"a\":1,\"b\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected end of JSON input\"}}"},
      {"0: {\"a\" 1}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected ':' after property name in JSON at position 6\"}}"},
      {"0: {\"a\":1,\"b\" 2}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected number in JSON at position 12\"}}"},
      {"0: {\"a\":1,\"b\" \"c\"}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected string in JSON at position 12\"}}"},
      {"0: nul\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected string in JSON at position 4\"}}"},
      {"0: tru1\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected number in JSON at position 4\"}}"},
      {"0: fals-\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected number in JSON at position 5\"}}"},
      {"0: \"ab\\\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected end of JSON input\"}}"},
      {"0: \"\\\xe6""\x9d""\xb1""\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '\xe6""\x9d""\xb1""', \\\" \\\"\\\\\xe6""\x9d""\xb1""\\\"\\\" is not valid JSON\"}}"},
      {"0: \"\\\xc3""\xa9""\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Bad escaped character in JSON at position 3\"}}"},
      {"0: \x00""\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '\\u0000', \\\" \\u0000\\\" is not valid JSON\"}}"},
      {"0: [1,\x00""]\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '\\u0000', \\\" [1,\\u0000]\\\" is not valid JSON\"}}"},
      {"0: \xf0""\x9f""\x98""\x80""\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '\\ud83d', \\\" \xf0""\x9f""\x98""\x80""\\\" is not valid JSON\"}}"},
      {"0: x\xf0""\x9f""\x98""\x80""yyyyyyyyyyyyyyyyyyyyyyyyy\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'x', \\\" x\xf0""\x9f""\x98""\x80""yyyyyyy\\\"... is not valid JSON\"}}"},
      {"0: xyyyyyyyy\xf0""\x9f""\x98""\x80""yyyyyyyyyyyyy\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'x', \\\" xyyyyyyyy\\ud83d\\\"... is not valid JSON\"}}"},
      {"0: yyyyyyyyyyyyyyyyyyyy\xf0""\x9f""\x98""\x80""\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'y', \\\" yyyyyyyyyy\\\"... is not valid JSON\"}}"},
      {"0: yyyyyyyyyyyy\xf0""\x9f""\x98""\x80""yyyyyy\xf0""\x9f""\x98""\x80""yyyyyyyyyyy\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'y', \\\" yyyyyyyyyy\\\"... is not valid JSON\"}}"},
      {"0: [1,2]]\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected non-whitespace character after JSON at position 6\"}}"},
      {"0: {\"a\":1,}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected double-quoted property name in JSON at position 8\"}}"},
      {"0: [1,]\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token ']', \\\" [1,]\\\" is not valid JSON\"}}"},
      {"0: {,}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected property name or '}' in JSON at position 2\"}}"},
      {"0: \"\\u12G4\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Bad Unicode escape in JSON at position 6\"}}"},
      {"0: \"a\x01""\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Bad control character in string literal in JSON at position 3\"}}"},
      {"0: -x\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"No number after minus sign in JSON at position 2\"}}"},
      {"0: 1.e\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unterminated fractional number in JSON at position 3\"}}"},
      {"0: 1e+\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Exponent part is missing a number in JSON at position 4\"}}"},
      {"0: 01\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected number in JSON at position 2\"}}"},
      {"0: -\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"No number after minus sign in JSON at position 2\"}}"},
      {"0: [\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected end of JSON input\"}}"},
      {"0: {\"a\"\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected ':' after property name in JSON at position 5\"}}"},
      {"0: {\"a\":\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected end of JSON input\"}}"},
      {"0: {\"a\":1\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected ',' or '}' after property value in JSON at position 7\"}}"},
      {"0: {\"a\":1 \"b\"}\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Expected ',' or '}' after property value in JSON at position 8\"}}"},
      {"0: [\"\xf0""\x9f""\x98""\x80""aaaaaaa\",xzzzzzzzzzzzzzzzzzzzzzz]\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'x', ...\\\"\\ude00aaaaaaa\\\",xzzzzzzzzz\\\"... is not valid JSON\"}}"},
      {"0: [\"\xf0""\x9f""\x98""\x80""aaaaaaaa\",xzzzzzzzzzzzzzzzzzzzzz]\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'x', ...\\\"aaaaaaaa\\\",xzzzzzzzzz\\\"... is not valid JSON\"}}"},
      {"0: [\"\xf0""\x9f""\x98""\x80""aaaaaa\",xzzzzzzzzzzzzzzzzzzzzz]\x0a""", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token 'x', ...\\\"\xf0""\x9f""\x98""\x80""aaaaaa\\\",xzzzzzzzzz\\\"... is not valid JSON\"}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    /* the bodies hold NULs: their length is up to the row's LF */
    const char *in = cases[i].in;
    size_t n = 0;
    while (in[n] != '\n') n++;
    ts_expect_dump(in, n + 1, 0, cases[i].want);
  }
}

/* A U+FEFF that begins a row is kept, as React's client with ignoreBOM
 * (its fix, the client Next.js ships): in a text row it is the first
 * character; a JSON row that begins with it is a SyntaxError worded as
 * V8's JSON.parse words it (node 20). RSC_OPT_DROP_BOM drops it per row, as
 * React 19.3.1's TextDecoder does. One and two marks, fed whole and split
 * at every byte. */
#define BOM "\xef\xbb\xbf"
static void expect_dump_split(const char *in, size_t len, uint32_t flags, const char *want) {
  for (size_t cut = 0; cut < len; cut++) {
    size_t cuts[1] = {cut};
    rsc_decoder *d = ts_decode_cuts(in, len, cuts, cut ? 1 : 0, flags);
    cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK, "%s (cut %zu): %s", in, cut,
                 rsc_decoder_error(d)->msg);
    char *got = ts_dump(d);
    cr_expect_str_eq(got, want, "input: %s cut %zu flags %u got %s", in, cut, flags, got);
    rsc_free(got);
    rsc_decoder_free(d);
  }
  rsc_decoder *d = ts_decode(in, len, 1, flags); /* a byte at a time */
  char *got = ts_dump(d);
  cr_expect_str_eq(got, want, "input: %s bytewise got %s", in, got);
  rsc_free(got);
  rsc_decoder_free(d);
}
#define SPLIT(in, flags, want) expect_dump_split(in, sizeof(in) - 1, flags, want)

Test(json, a_byte_order_mark_is_kept) {
  SPLIT("1:T3," BOM "0:\"$1\"\n", 0, "{\"ok\":\"" BOM "\"}");
  SPLIT("1:T6," BOM BOM "0:\"$1\"\n", 0, "{\"ok\":\"" BOM BOM "\"}");
  SPLIT("1:T7," BOM "a,b\n0:\"$1\"\n", 0, "{\"ok\":\"" BOM "a,b\\n\"}");
  SPLIT("0:" BOM "{\"a\":1}\n", 0,
        "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '" BOM "', \\\"" BOM
        "{\\\"a\\\":1}\\\" is not valid JSON\"}}");
  SPLIT("0:" BOM BOM "\"x\"\n", 0,
        "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '" BOM "', \\\"" BOM BOM
        "\\\"x\\\"\\\" is not valid JSON\"}}");
  /* a model row referenced from another: the reference rejects with it */
  SPLIT("1:" BOM "[1]\n0:{\"x\":\"$1\"}\n", 0,
        "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '" BOM "', \\\"" BOM
        "[1]\\\" is not valid JSON\"}}");
  /* inside a text row (not at its start) and inside JSON strings it is text */
  SPLIT("0:\"" BOM "x\"\n", 0, "{\"ok\":\"" BOM "x\"}");
  SPLIT("1:T4,a" BOM "0:\"$1\"\n", 0, "{\"ok\":\"a" BOM "\"}");
  SPLIT("1:T4,a" BOM "0:\"$1\"\n", RSC_OPT_DROP_BOM, "{\"ok\":\"a" BOM "\"}");
}

Test(json, a_byte_order_mark_is_dropped_per_row_with_the_flag) {
  SPLIT("1:T3," BOM "0:\"$1\"\n", RSC_OPT_DROP_BOM, "{\"ok\":\"\"}");
  SPLIT("1:T6," BOM BOM "0:\"$1\"\n", RSC_OPT_DROP_BOM, "{\"ok\":\"" BOM "\"}");
  SPLIT("0:" BOM "{\"a\":1}\n", RSC_OPT_DROP_BOM, "{\"ok\":{\"a\":1}}");
  SPLIT("0:" BOM BOM "\"x\"\n", RSC_OPT_DROP_BOM,
        "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected token '" BOM "', \\\"" BOM
        "\\\"x\\\"\\\" is not valid JSON\"}}");
  SPLIT("1:" BOM "[1]\n0:{\"x\":\"$1\"}\n", RSC_OPT_DROP_BOM, "{\"ok\":{\"x\":[1]}}");
}

/* ---- the walk floor (bench_hooks.h) -------------------------------------- */

/* It reads every value of the tape: each string's first byte, keys
 * included, numbers' two words skipped; a row simdjson refuses is -1. */
Test(json, parse_walk_counts_the_dollar_strings_of_every_value) {
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_not_null(d);
  rsc_json *j = (rsc_json *)d->json;
  static const struct {
    const char *row;
    long want;
  } cases[] = {
      {"[\"$\",\"div\",null,{\"a\":\"$L1\"}]", 2},
      {"{\"$k\":1.5,\"n\":-7,\"u\":18446744073709551615,\"s\":\"$@2\"}", 2},
      {"[[[\"$a\"]],{},[],true,false,\"\",\"x$\"]", 1},
      {"\"$Sreact.fragment\"", 1},
      {"12", 0},
      {"[1,", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *row = cases[i].row;
    cr_expect_eq(rsc__json_parse_walk(j, (const uint8_t *)row, strlen(row), false), cases[i].want,
                 "%s", row);
  }
  rsc_decoder_free(d);
}

/* ---- JSON batches (json_shim.cpp) ---------------------------------------- */

/* Rows that a feed holds whole are stage-1 indexed a run at a time; fed a
 * byte at a time, no row lies whole in a feed and each is parsed alone. A
 * row that is not a document of its own in the run (bad JSON, extra
 * values, a value going on into the next row, bad UTF-8, what simdjson
 * refuses) leaves the run and decodes as it would alone. */
#define GOOD4 "1:[\"a\",1,{\"k\":[true,null]}]\n2:{\"x\":\"#\"}\n3:[\"$\",\"i\",null,{}]\n4:[]\n"
#define GOOD4B "a:[\"b\"]\nb:{\"y\":[1,2]}\nc:[\"\\n#\\n\",\"q\\\"\"]\nd:[{}]\n"
#define ROOT "0:[\"$L1\",\"$L2\",\"$L3\",\"$L4\",\"$L5\",\"$L6\",\"$La\",\"$Lb\",\"$Lc\",\"$Ld\"]\n"

static void expect_batched_as_alone(const char *in, bool batches) {
  size_t len = strlen(in);
  rsc_decoder *whole = ts_decode(in, len, 0, 0);
  rsc_decoder *bytes = ts_decode(in, len, 1, 0);
  const rsc_error *a = rsc_decoder_error(whole), *b = rsc_decoder_error(bytes);
  cr_expect_eq(a->code, b->code, "%s: code %d, alone %d", in, a->code, b->code);
  cr_expect_eq(a->offset, b->offset, "%s", in);
  cr_expect_eq(a->row_id, b->row_id, "%s", in);
  char *da = ts_dump(whole), *db = ts_dump(bytes);
  if (!a->code) cr_expect(da && db && strcmp(da, db) == 0, "%s:\n%s\nalone:\n%s", in, da, db);
  cr_expect_eq(bytes->batched_rows, 0);
  if (batches)
    cr_expect(whole->batched_rows >= 3, "%s: %llu rows batched", in,
              (unsigned long long)whole->batched_rows);
  else cr_expect_eq(whole->batched_rows, 0, "%s", in);
  rsc_free(da);
  rsc_free(db);
  rsc_decoder_free(whole);
  rsc_decoder_free(bytes);
}

Test(batch, runs_of_rows_decode_as_rows_alone) {
  /* Whether the run's rows still go through it: a byte that stage 1
   * refuses (bad UTF-8, a line feed inside a string) stops the whole run,
   * and its rows are parsed alone. */
  static const struct {
    const char *row;
    bool batched;
  } middle[] = {
      {"", true},                /* nothing odd        */
      {"5:[\"abc]\n", false},    /* an unclosed string */
      {"5:[1] 2\n", true},       /* a second value     */
      {"5:[1]#\n", true},        /* the separator byte */
      {"5:[1,\n6:[2]]\n", true}, /* a value over 2 rows */
      {"5:{\"a\":\n6:{\"b\":1}}\n", true},
      {"5:[\"\xff\"]\n", false},                      /* bad UTF-8: U+FFFD  */
      {"5:[123456789012345678901234567890]\n", true}, /* past 2^64          */
      {"5:[\"\\ud800\"]\n", true},                    /* a lone surrogate   */
      {"5:[1e400]\n", true},
      {"5:[\n", true},
      {"5:[ 1 , 2 ]   \r\n6:{}\r\n", true}, /* spaces, CRLF       */
      {"5:T3,a\"b6:[\"t\"]\n", true},       /* text with a quote  */
      {"5:I[\"m\",[],\"\"]\n", true},       /* a tagged JSON row  */
      {"5:\"s\"\n6:5\n", true},             /* rows not batched   */
  };
  for (size_t i = 0; i < sizeof middle / sizeof *middle; i++) {
    char in[1024];
    snprintf(in, sizeof in, "%s%s%s%s", GOOD4, middle[i].row, GOOD4B, ROOT);
    expect_batched_as_alone(in, middle[i].batched);
  }
}

Test(batch, limits_and_errors_hold_in_a_run) {
  /* Deeper than the depth limit in the middle of a run: the same error,
   * at the same byte. */
  char deep[4096];
  int n = snprintf(deep, sizeof deep, "%s5:", GOOD4);
  for (int k = 0; k < 300; k++) deep[n++] = '[';
  for (int k = 0; k < 300; k++) deep[n++] = ']';
  snprintf(deep + n, sizeof deep - n, "\n%s%s", GOOD4B, ROOT);
  expect_batched_as_alone(deep, true);
  /* A bad row id ahead of the run: the rows before it decode, then the
   * framer's error. */
  expect_batched_as_alone(GOOD4 GOOD4B "X:[1]\n" ROOT, true);
  /* Two rows: too few for a run; three make one. */
  expect_batched_as_alone("1:[1]\n0:[\"$1\"]\n", false);
  expect_batched_as_alone("1:[1]\n2:[2]\n0:[\"$1\",\"$2\"]\n", true);
}

/* A decoder reset between two decodes of one buffer, and a feed that
 * stops in the middle of a run (the rest comes in the next feed). */
Test(batch, runs_never_outlive_their_feed) {
  const char *in = GOOD4 GOOD4B ROOT;
  size_t len = strlen(in);
  rsc_decoder *alone = ts_decode(in, len, 1, 0);
  char *want = ts_dump(alone);
  rsc_decoder *d = rsc_decoder_new(NULL);
  for (int round = 0; round < 3; round++) {
    size_t cut = round == 0 ? len : len / 3 + 7 * (size_t)round;
    rsc_decoder_feed(d, in, cut);
    rsc_decoder_feed(d, in + cut, len - cut);
    rsc_decoder_finish(d);
    char *got = ts_dump(d);
    cr_expect(got && strcmp(got, want) == 0, "round %d cut %zu:\n%s", round, cut, got);
    cr_expect(d->batched_rows > 0);
    rsc_free(got);
    rsc_decoder_reset(d);
  }
  rsc_decoder_free(d);
  rsc_free(want);
  rsc_decoder_free(alone);
}

/* src/value.h: the iterators the readers walk values with. */
Test(value, iterators_walk_items_and_visible_members_in_order) {
  rsc_decoder *d = ts_decode_str(
      "0:{\"b\":[1,\"x\",null],\"gone\":\"$undefined\",\"a\":{},\"it\":\"$i1\",\"s\":\"str\"}\n"
      "1:[7,8]\n",
      0);
  const rsc_node *obj = ts_root_value(d);
  cr_assert_eq(rsc__kind(obj), RSC_OBJECT);
  cr_expect_eq(rsc__members_len(obj), 4);
  static const char *const keys[] = {"b", "a", "it", "s"};
  rsc__iter it;
  const rsc_node *b = NULL, *iter = NULL, *str = NULL;
  for (rsc__iter_members(&it, obj); rsc__next_member(&it);) {
    cr_assert_leq(it.index, 4);
    cr_expect_str_eq(it.key, keys[it.index - 1]);
    cr_expect_eq(it.klen, strlen(keys[it.index - 1]));
    cr_expect_eq(it.val, rsc_object_value(obj, it.index - 1));
    if (it.index == 1) b = it.val;
    if (it.index == 3) iter = it.val;
    if (it.index == 4) str = it.val;
  }
  cr_expect_eq(it.index, 4);
  cr_expect_not(rsc__next_member(&it)); /* stays at its end */
  /* The generic walk gives the same children. */
  uint32_t n = 0;
  for (rsc__iter_begin(&it, obj); rsc__iter_next(&it);) n++;
  cr_expect_eq(n, 4);
  cr_assert_eq(rsc__kind(b), RSC_ARRAY);
  cr_expect_eq(rsc__items_len(b), 3);
  for (rsc__iter_begin(&it, b); rsc__iter_next(&it);) {
    cr_expect_null(it.key);
    cr_expect_eq(it.val, rsc__item(b, it.index - 1));
  }
  cr_expect_eq(it.index, 3);
  cr_expect_null(rsc__item(b, 3));
  cr_expect_eq(rsc__number(rsc__item(b, 0)), 1);
  uint32_t len = 0;
  cr_expect_str_eq(rsc__text(rsc__item(b, 1), &len), "x");
  cr_expect_eq(len, 1);
  /* An iterator's items are its array's. */
  cr_assert_eq(rsc__kind(iter), RSC_ITERATOR);
  cr_expect_eq(rsc__items_len(rsc__iter_array(iter)), 2);
  cr_expect_eq(rsc__number(rsc__item(iter, 1)), 8);
  cr_expect_null(rsc__item(iter, 2));
  n = 0;
  for (rsc__iter_begin(&it, iter); rsc__iter_next(&it);) n++;
  cr_expect_eq(n, 2);
  /* Values without children have none; identities are the public ones. */
  n = 0;
  for (rsc__iter_begin(&it, str); rsc__iter_next(&it);) n++;
  for (rsc__iter_begin(&it, NULL); rsc__iter_next(&it);) n++;
  cr_expect_eq(n, 0);
  cr_expect_eq(rsc__identity(b), rsc_node_identity(b));
  cr_expect_neq(rsc__identity(b), 0);
  cr_expect_eq(rsc__identity(str), 0);
  rsc_decoder_free(d);
}
