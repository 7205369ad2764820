#define _POSIX_C_SOURCE 200809L
/* test_revive.c - the reviveModel walk (src/revive.c), through compact
 * dumps of one-row payloads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "chunks.h"
#include "json.h"
#include "path.h"
#include "revive.h"
#include "settle.h"
#include "support.h"

/* The same tree from the production and the development client. */
static void expect_dump_both(const char *in, const char *want) {
  ts_expect_dump(in, strlen(in), 0, want);
  ts_expect_dump(in, strlen(in), RSC_OPT_DEV, want);
}

/* A table case whose payload may hold NUL bytes (binary rows). */
typedef struct sized_case {
  const char *in;
  size_t len;
  const char *want;
} sized_case;
#define SIZED(in, want)                                                                            \
  { in, sizeof(in) - 1, want }
static void expect_sized_cases(const sized_case *c, size_t n, uint32_t flags) {
  for (size_t i = 0; i < n; i++) ts_expect_dump(c[i].in, c[i].len, flags, c[i].want);
}
#define DUMP_DEV(in, want) ts_expect_dump(in, sizeof(in) - 1, RSC_OPT_DEV, want)
/* React's value for a payload no server writes (RSC_OPT_LENIENT_VALUES). */
#define DUMP_LENIENT(in, want) ts_expect_dump(in, sizeof(in) - 1, RSC_OPT_LENIENT_VALUES, want)

/* A payload no server writes, refused by default with RSC_ERR_BAD_VALUE at
 * the first byte of a row, whole and fed a byte at a time. */
static void expect_refused(const char *in, size_t len, uint32_t flags, uint64_t offset, int64_t row,
                           const char *msg) {
  for (size_t piece = 0; piece <= 1; piece++) {
    rsc_decoder *d = ts_decode(in, len, piece, flags);
    const rsc_error *e = rsc_decoder_error(d);
    cr_expect_eq(e->code, RSC_ERR_BAD_VALUE, "%s (piece %zu): code %d", in, piece, e->code);
    cr_expect_eq(e->offset, offset, "%s (piece %zu): offset %llu", in, piece,
                 (unsigned long long)e->offset);
    cr_expect_eq(e->row_id, row, "%s (piece %zu): row %lld", in, piece, (long long)e->row_id);
    cr_expect(e->msg && strcmp(e->msg, msg) == 0, "%s: %s", in, e->msg ? e->msg : "(null)");
    rsc_decoder_free(d);
  }
}
#define REFUSED(in, offset, row, msg) expect_refused(in, sizeof(in) - 1, 0, offset, row, msg)
static const char self_msg[] = "a row whose whole value is a reference to itself";
static const char circle_msg[] = "rows whose whole values reference each other in a circle";

Test(revive, second_character_dispatch) {
  DUMP("0:[\"$-0\",\"$-Infinity\",\"$-x\",\"$Infinity\",\"$Ixyz\",\"$NaN\",\"$Nope\",\"$"
       "undefined\",\"$uxyz\","
       "\"$Dnot-a-date\",\"$n-42\",\"$$\",\"$$$\",\"$Sfoo\"]\n",
       "{\"ok\":[{\"$\":\"-0\"},{\"$\":\"-Infinity\"},{\"$\":\"-Infinity\"},{\"$\":\"Infinity\"},"
       "{\"$\":\"Infinity\"},{\"$\":\"NaN\"},{\"$\":\"NaN\"},{\"$\":\"undefined\"},{\"$\":"
       "\"undefined\"},"
       "{\"$\":\"Date\",\"v\":\"not-a-date\"},{\"$\":\"bigint\",\"v\":\"-42\"},\"$\",\"$$\","
       "{\"$\":\"symbol\",\"v\":\"foo\"}]}");
}

Test(revive, bigint_reads_like_javascript) {
  DUMP("0:[\"$n0x1F\",\"$n 12 "
       "\",\"$n\",\"$n-0\",\"$n000123\",\"$n123456789012345678901234567890\"]\n",
       "{\"ok\":[{\"$\":\"bigint\",\"v\":\"31\"},{\"$\":\"bigint\",\"v\":\"12\"},{\"$\":\"bigint\","
       "\"v\":\"0\"},"
       "{\"$\":\"bigint\",\"v\":\"0\"},{\"$\":\"bigint\",\"v\":\"123\"},"
       "{\"$\":\"bigint\",\"v\":\"123456789012345678901234567890\"}]}");
  DUMP("0:{\"x\":\"$nabc\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert abc to a BigInt\"}}");
  /* Signs, zeros and prefixes as node prints BigInt(text) of each; the
   * hex ones check the nine-digit groups of the base conversion. */
  DUMP("0:[\"$n+5\",\"$n-000\",\"$n-0012\",\"$n "
       "\\u0020-7\\n\",\"$n0x3B9ACA00\",\"$n0b101\",\"$n0o777\","
       "\"$n0x1F0000000000000000000000001\"]\n",
       "{\"ok\":[{\"$\":\"bigint\",\"v\":\"5\"},{\"$\":\"bigint\",\"v\":\"0\"},{\"$\":\"bigint\","
       "\"v\":\"-12\"},"
       "{\"$\":\"bigint\",\"v\":\"-7\"},{\"$\":\"bigint\",\"v\":\"1000000000\"},{\"$\":\"bigint\","
       "\"v\":\"5\"},"
       "{\"$\":\"bigint\",\"v\":\"511\"},{\"$\":\"bigint\",\"v\":"
       "\"39297168607075111446397799366657\"}]}");
  DUMP("0:{\"x\":\"$n1_000\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert 1_000 to a BigInt\"}}");
  DUMP("0:{\"x\":\"$n-0x10\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert -0x10 to a BigInt\"}}");
  DUMP("0:{\"x\":\"$n0x\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert 0x to a BigInt\"}}");
}

/* A Blob's parts and type, and FormData's entries, are what new Blob and
 * FormData.append make of the model in Node 20: String() of each value
 * that is not a Blob or a buffer (arrays joined, cycles skipped, objects
 * tagged, dates in UTC, lone surrogates as U+FFFD), and the TypeError
 * JavaScript throws for a Symbol, an object whose "toString" is data, or
 * a model that is no array (null, a string, an ArrayBuffer, ...). Every
 * expected dump is what React 19.3.1's client decoded from the same
 * payload. */
Test(revive, blob_and_form_data_parts_convert_as_javascript) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct {
    const char *in;
    size_t len;
    const char *want;
  } cases[] = {
      {"0:\"$B1\"\n1:\"abc\"\n", 16, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string ('bc')\"}}"},
      {"0:\"$B1\"\n1:null\n", 15, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of null (reading 'slice')\"}}"},
      {"0:\"$B1\"\n1:5\n", 12, "{\"rejected\":{\"$\":\"Error\",\"message\":\"model.slice is not a function\"}}"},
      {"0:\"$B1\"\n1:{\"a\":1}\n", 18, "{\"rejected\":{\"$\":\"Error\",\"message\":\"model.slice is not a function\"}}"},
      {"0:\"$B1\"\n1:[\"t\",\"$\"]\n", 20, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert a Symbol value to a string\"}}"},
      {"0:\"$B1\"\n1:[\"$\",\"a\"]\n", 20, "{\"rejected\":{\"$\":\"Error\",\"message\":\"model.slice is not a function\"}}"},
      {"0:\"$B1\"\n1:[\"$undefined\",\"a\"]\n", 29, "{\"ok\":{\"$\":\"Blob\",\"type\":\"\",\"base64\":\"YQ==\"}}"},
      {"0:\"$B1\"\n1:[\"t\",[\"a\",null,\"$undefined\",[\"b\",1]],\"c\"]\n", 52, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"YSwsLGIsMWM=\"}}"},
      {"0:\"$B1\"\n1:[\"t\",\"$D2020-01-01T00:00:00.000Z\",\"$Dnope\",\"$D2020-02-31\",\"$D+002020-01-01T10:20:30.5+05:30\"]\n", 104, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"V2VkIEphbiAwMSAyMDIwIDAwOjAwOjAwIEdNVCswMDAwIChDb29yZGluYXRlZCBVbml2ZXJzYWwgVGltZSlJbnZhbGlkIERhdGVNb24gTWFyIDAyIDIwMjAgMDA6MDA6MDAgR01UKzAwMDAgKENvb3JkaW5hdGVkIFVuaXZlcnNhbCBUaW1lKVdlZCBKYW4gMDEgMjAyMCAwNDo1MDozMCBHTVQrMDAwMCAoQ29vcmRpbmF0ZWQgVW5pdmVyc2FsIFRpbWUp\"}}"},
      {"0:\"$B1\"\n1:[\"t\",\"$Q2\",\"$W3\",\"$@4\",\"$K5\",{\"toString\":1},{\"a\":\"$undefined\",\"toString\":\"$undefined\"}]\n2:[]\n3:[]\n4:1\n5:[]\n", 117, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert object to primitive value\"}}"},
      {"0:\"$B1\"\n1:[\"t\",\"a\\ud800b\",-0,1e21,\"$NaN\",\"$n-0042\"]\n", 52, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"Ye+/vWIwMWUrMjFOYU4tNDI=\"}}"},
      {"0:\"$B1\"\n1:[\"ten\",\"$1\"]\n", 23, "{\"ok\":{\"$\":\"Blob\",\"type\":\"ten\",\"base64\":\"dGVuLA==\"}}"},
      {"0:\"$B1\"\n1:[\"t\",[\"x\",\"$1:1\"]]\n", 29, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"eCw=\"}}"},
      {"1:o3,hij0:\"$B1\"\n", 16, "{\"ok\":{\"$\":\"Blob\",\"type\":\"104\",\"base64\":\"MTA1MTA2\"}}"},
      {"1:A2,hi0:\"$B1\"\n", 15, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received an instance of ArrayBuffer\"}}"},
      {"1:V2,hi0:\"$B1\"\n", 15, "{\"rejected\":{\"$\":\"Error\",\"message\":\"model.slice is not a function\"}}"},
      {"1:g10,\x00""\x00""\x00""\x00""\x00""\x00""\xf8""?\x00""\x00""\x00""\x00""\x00""\x00""\x02""@0:\"$B1\"\n", 30, "{\"ok\":{\"$\":\"Blob\",\"type\":\"1.5\",\"base64\":\"Mi4yNQ==\"}}"},
      {"1:M10,\x05""\x00""\x00""\x00""\x00""\x00""\x00""\x00""\xfa""\xff""\xff""\xff""\xff""\xff""\xff""\xff""0:\"$B1\"\n", 30, "{\"ok\":{\"$\":\"Blob\",\"type\":\"5\",\"base64\":\"LTY=\"}}"},
      {"1:o2,hi0:\"$B2\"\n2:[\"t\",\"$1\",[\"$1\"]]\n", 35, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"aGkxMDQsMTA1\"}}"},
      {"0:\"$B1\"\n1:d16,\x00""\x00""\x00""\x00""\x00""\x00""\xf8""?\x00""\x00""\x00""\x00""\x00""\x00""\x02""@", 30, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Connection closed.\"}}"},
      {"0:\"$B1\"\n1:\"it's a long string with many chars\"\n", 47, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string (\\\"t's a long string with ma...\\\")\"}}"},
      {"0:\"$B1\"\n1:\"xa'b\\\"c\\n\"\n", 22, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string (\\\"a'b\\\\\\\"c\\\\n\\\")\"}}"},
      {"0:\"$B1\"\n1:\"x\\ud83d\\ude00abc\"\n", 29, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string ('\xf0""\x9f""\x98""\x80""abc')\"}}"},
      {"0:\"$B1\"\n1:[\"$Z2\"]\n2:E{\"digest\":\"d\"}\n", 36, "{\"ok\":{\"$\":\"Blob\",\"type\":\"error: an error occurred in the server components render. the specific message is omitted in production builds to avoid leaking sensitive details. a digest property is included on this error instance which may provide additional details about the nature of the error.\",\"base64\":\"\"}}"},
      {"0:\"$B2\"\n2:[\"t\",\"$B1\"]\n1:[\"u\",\"zz\"]\n", 35, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"eno=\"}}"},
      {"0:\"$K1\"\n1:[[\"a\",\"$\"]]\n", 22, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot convert a Symbol value to a string\"}}"},
      {"0:\"$K1\"\n1:[[\"k\",[\"x\",1]],[\"\\ud800\",2]]\n", 39, "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"k\",\"x,1\"],[\"\xef""\xbf""\xbd""\",\"2\"]]}}"},
      {"0:\"$B1\"\n1:[\"t\",\"$1:0\"]\n", 23, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"dA==\"}}"},
      {"0:\"$B1\"\n1:\"-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'yy\"\n", 47, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string ('xxxxxxxxxxxxxxxxxxxxxxxxx...')\"}}"},
      {"0:\"$B1\"\n1:\"-'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n", 45, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string (\\\"'xxxxxxxxxxxxxxxxxxxxxxxx...\\\")\"}}"},
      {"0:\"$B1\"\n1:\"-\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\"\n", 94, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string ('\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\xf0""\x9f""\x98""\x80""\\ud83d...')\"}}"},
      {"0:\"$B1\"\n1:\"-xxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n", 42, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string ('xxxxxxxxxxxxxxxxxxxxxxxxxxxx')\"}}"},
      {"0:\"$B1\"\n1:\"-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n", 43, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string ('xxxxxxxxxxxxxxxxxxxxxxxxx...')\"}}"},
      {"0:\"$B1\"\n1:\"-'\\u0001\\ud800\"\n", 27, "{\"rejected\":{\"$\":\"Error\",\"message\":\"The \\\"sources\\\" argument must be a sequence. Received type string (\\\"'\\\\u0001\\\\ud800\\\")\"}}"},
      {"0:\"$B1\"\n1:[\"t\",\"$0\"]\n", 21, "{\"ok\":{\"$\":\"Blob\",\"type\":\"t\",\"base64\":\"bnVsbA==\"}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ts_expect_dump(cases[i].in, cases[i].len, 0, cases[i].want);
}

/* Map.prototype.set and Set.prototype.add keep a -0 key as +0 (values
 * and the same -0 elsewhere stay -0), as React's client's new Map and new
 * Set do; checked against React 19.3.1's client. */
Test(revive, map_and_set_store_minus_zero_keys_as_zero) {
  DUMP("0:[\"$Q1\",\"$W2\"]\n1:[[\"$-0\",1],[0,2]]\n2:[\"$-0\",0,\"$-0\"]\n",
       "{\"ok\":[{\"$\":\"Map\",\"entries\":[[0,2]]},{\"$\":\"Set\",\"values\":[0]}]}");
  DUMP("0:[\"$Q1\",\"$W2\",[\"$-0\"]]\n1:[[\"$-0\",\"$-0\"]]\n2:[\"$-0\"]\n",
       "{\"ok\":[{\"$\":\"Map\",\"entries\":[[0,{\"$\":\"-0\"}]]},{\"$\":\"Set\",\"values\":[0]},"
       "[{\"$\":\"-0\"}]]}");
}

/* React parses an async iterable's item and end rows as the text of their
 * iterator result, {"done":false,"value":<row>} (done:true at the end), so
 * a SyntaxError points into that text and a row can write the result's
 * members: "1,\"done\":true" ends the iteration with 1, "\"q\",\"done\":false"
 * at the end yields one more item. An empty end row is "$undefined".
 * Every expected dump is React 19.3.1's client's. */
Test(revive, async_iterable_rows_parse_as_their_iterator_results) {
  DUMP("1:x\n0:{\"it\":\"$1\"}\n1:\"a\"\n1:1,\"done\":true\n1:\"b\"\n1:C\"end\"\n",
       "{\"ok\":{\"it\":{\"$\":\"AsyncIterator\",\"items\":[\"a\"],\"end\":{\"done\":1}}}}");
  DUMP("1:x\n0:{\"it\":\"$1\"}\n1:{bad\n1:C\n",
       "{\"ok\":{\"it\":{\"$\":\"AsyncIterator\",\"items\":[],\"end\":{\"error\":{\"$\":\"Error\","
       "\"message\":\"Expected property name or '}' in JSON at position 23\"}}}}}");
  DUMP("1:X\n0:{\"it\":\"$1\"}\n1:\"a\"\n1:C\n",
       "{\"ok\":{\"it\":{\"$\":\"AsyncIterable\",\"items\":[\"a\"],\"end\":{\"done\":{\"$\":"
       "\"undefined\"}}}}}");
  DUMP("1:x\n0:{\"it\":\"$1\"}\n1:\"a\"},{\"z\":1\n1:C\"q\",\"done\":false\n",
       "{\"ok\":{\"it\":{\"$\":\"AsyncIterator\",\"items\":[],\"end\":{\"error\":{\"$\":\"Error\","
       "\"message\":\"Unexpected non-whitespace character after JSON at position 26\"}}}}}");
  DUMP("1:x\n0:{\"it\":\"$1\"}\n1:\n1:C\n",
       "{\"ok\":{\"it\":{\"$\":\"AsyncIterator\",\"items\":[],\"end\":{\"error\":{\"$\":\"Error\","
       "\"message\":\"Unexpected token '}', ...\\\"e,\\\"value\\\":}\\\" is not valid JSON\"}}}}}");
  DUMP("1:x\n0:{\"it\":\"$1\"}\n1:\"a\"\n1:C\"q\",\"done\":false\n",
       "{\"ok\":{\"it\":{\"$\":\"AsyncIterator\",\"items\":[\"a\",\"q\"],\"end\":{\"done\":{\"$\":"
       "\"undefined\"}}}}}");
}

/* Each "$L" string is its own lazy object in React's client, so a Set or
 * Map keeps two of them apart; the same lazy reached twice (through "$3",
 * whose value is one) is one key. Checked against React 19.3.1's client. */
Test(revive, map_and_set_keep_each_lazy_string_apart) {
  DUMP("0:{\"o\":\"$W1\",\"p\":\"$Q2\"}\n1:[\"$L5\",\"$L5\",\"$3\",\"$3\"]\n3:\"$L5\"\n"
       "2:[[\"$L5\",1],[\"$3\",2],[\"$3\",3]]\n5:1\n",
       "{\"ok\":{\"o\":{\"$\":\"Set\",\"values\":[{\"$\":\"lazy\",\"status\":\"fulfilled\","
       "\"value\":1},"
       "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":1},{\"$\":\"lazy\",\"status\":"
       "\"fulfilled\","
       "\"value\":1}]},\"p\":{\"$\":\"Map\",\"entries\":[[{\"$\":\"lazy\",\"status\":\"fulfilled\","
       "\"value\":1},1],"
       "[{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":1},3]]}}}");
}

/* new Map(model), new Set(model), model[Symbol.iterator]() ($i) and
 * React's createFormData for every kind of model and entry, as Node 20
 * runs them: null and undefined make empty collections, a string is
 * iterated by code points, other values are not iterable with V8's words
 * for their type, a Map's entry may be any object, FormData reads
 * model.length and model[i][0], [1]. Every expected dump is React 19.3.1's
 * client's ("$i" of a string: iterators_of_models_that_are_not_arrays). */
Test(revive, collections_of_any_model_as_javascript_builds_them) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"0:\"$Q1\"\n1:null\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[]}}"},
      {"0:\"$W1\"\n1:null\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[]}}"},
      {"0:\"$K1\"\n1:null\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of null (reading 'length')\"}}"},
      {"0:\"$i1\"\n1:null\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"object null is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$Q1\"\n1:\"$undefined\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[]}}"},
      {"0:\"$W1\"\n1:\"$undefined\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[]}}"},
      {"0:\"$K1\"\n1:\"$undefined\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of undefined (reading 'length')\"}}"},
      {"0:\"$Q1\"\n1:5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"number 5 is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"number 5 is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$i1\"\n1:5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"model[Symbol.iterator] is not a function\"}}"},
      {"0:\"$Q1\"\n1:-1.5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"number -1.5 is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:-1.5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"number -1.5 is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:-1.5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$i1\"\n1:-1.5\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"model[Symbol.iterator] is not a function\"}}"},
      {"0:\"$Q1\"\n1:true\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"boolean true is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:true\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"boolean true is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:true\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$i1\"\n1:true\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"model[Symbol.iterator] is not a function\"}}"},
      {"0:\"$Q1\"\n1:\"$n5\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"bigint is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:\"$n5\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"bigint is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:\"$n5\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$Q1\"\n1:\"$Sx\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"symbol is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:\"$Sx\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"symbol is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:\"$Sx\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$Q1\"\n1:{\"a\":1}\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"object is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:{\"a\":1}\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"object is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:{\"a\":1}\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$i1\"\n1:{\"a\":1}\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"model[Symbol.iterator] is not a function\"}}"},
      {"0:\"$Q1\"\n1:\"ab\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value a is not an entry object\"}}"},
      {"0:\"$W1\"\n1:\"ab\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[\"a\",\"b\"]}}"},
      {"0:\"$K1\"\n1:\"ab\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"a\",\"undefined\"],[\"b\",\"undefined\"]]}}"},
      {"0:\"$Q1\"\n1:\"\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[]}}"},
      {"0:\"$W1\"\n1:\"\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[]}}"},
      {"0:\"$K1\"\n1:\"\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$Q1\"\n1:\"\\ud83d\\ude00a\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value \xf0""\x9f""\x98""\x80"" is not an entry object\"}}"},
      {"0:\"$W1\"\n1:\"\\ud83d\\ude00a\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[\"\xf0""\x9f""\x98""\x80""\",\"a\"]}}"},
      {"0:\"$K1\"\n1:\"\\ud83d\\ude00a\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"\xef""\xbf""\xbd""\",\"undefined\"],[\"\xef""\xbf""\xbd""\",\"undefined\"],[\"a\",\"undefined\"]]}}"},
      {"0:\"$Q1\"\n1:\"$h2\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"function is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$W1\"\n1:\"$h2\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"function is not iterable (cannot read property Symbol(Symbol.iterator))\"}}"},
      {"0:\"$K1\"\n1:\"$h2\"\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[]}}"},
      {"0:\"$Q1\"\n1:[1]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value 1 is not an entry object\"}}"},
      {"0:\"$W1\"\n1:[1]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[1]}}"},
      {"0:\"$K1\"\n1:[1]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"undefined\",\"undefined\"]]}}"},
      {"0:\"$i1\"\n1:[1]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[1]}}"},
      {"0:\"$Q1\"\n1:[null]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value null is not an entry object\"}}"},
      {"0:\"$W1\"\n1:[null]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[null]}}"},
      {"0:\"$K1\"\n1:[null]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of null (reading '0')\"}}"},
      {"0:\"$i1\"\n1:[null]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[null]}}"},
      {"0:\"$Q1\"\n1:[\"ab\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value ab is not an entry object\"}}"},
      {"0:\"$W1\"\n1:[\"ab\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[\"ab\"]}}"},
      {"0:\"$K1\"\n1:[\"ab\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"a\",\"b\"]]}}"},
      {"0:\"$i1\"\n1:[\"ab\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[\"ab\"]}}"},
      {"0:\"$Q1\"\n1:[\"$Sx\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value Symbol(x) is not an entry object\"}}"},
      {"0:\"$W1\"\n1:[\"$Sx\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[{\"$\":\"symbol\",\"v\":\"x\"}]}}"},
      {"0:\"$K1\"\n1:[\"$Sx\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"undefined\",\"undefined\"]]}}"},
      {"0:\"$i1\"\n1:[\"$Sx\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[{\"$\":\"symbol\",\"v\":\"x\"}]}}"},
      {"0:\"$Q1\"\n1:[\"$-0\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value 0 is not an entry object\"}}"},
      {"0:\"$W1\"\n1:[\"$-0\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[0]}}"},
      {"0:\"$K1\"\n1:[\"$-0\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"undefined\",\"undefined\"]]}}"},
      {"0:\"$i1\"\n1:[\"$-0\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[{\"$\":\"-0\"}]}}"},
      {"0:\"$Q1\"\n1:[\"$D2020-01-01T00:00:00.000Z\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[[{\"$\":\"undefined\"},{\"$\":\"undefined\"}]]}}"},
      {"0:\"$W1\"\n1:[\"$D2020-01-01T00:00:00.000Z\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[{\"$\":\"Date\",\"v\":\"2020-01-01T00:00:00.000Z\"}]}}"},
      {"0:\"$K1\"\n1:[\"$D2020-01-01T00:00:00.000Z\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"undefined\",\"undefined\"]]}}"},
      {"0:\"$i1\"\n1:[\"$D2020-01-01T00:00:00.000Z\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[{\"$\":\"Date\",\"v\":\"2020-01-01T00:00:00.000Z\"}]}}"},
      {"0:\"$Q1\"\n1:[[\"k\",\"v\"],{\"0\":\"a\",\"1\":\"b\"}]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[[\"k\",\"v\"],[\"a\",\"b\"]]}}"},
      {"0:\"$W1\"\n1:[[\"k\",\"v\"],{\"0\":\"a\",\"1\":\"b\"}]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[[\"k\",\"v\"],{\"0\":\"a\",\"1\":\"b\"}]}}"},
      {"0:\"$K1\"\n1:[[\"k\",\"v\"],{\"0\":\"a\",\"1\":\"b\"}]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"k\",\"v\"],[\"a\",\"b\"]]}}"},
      {"0:\"$i1\"\n1:[[\"k\",\"v\"],{\"0\":\"a\",\"1\":\"b\"}]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[[\"k\",\"v\"],{\"0\":\"a\",\"1\":\"b\"}]}}"},
      {"0:\"$Q1\"\n1:[\"$undefined\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Iterator value undefined is not an entry object\"}}"},
      {"0:\"$W1\"\n1:[\"$undefined\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Set\",\"values\":[{\"$\":\"undefined\"}]}}"},
      {"0:\"$K1\"\n1:[\"$undefined\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of undefined (reading '0')\"}}"},
      {"0:\"$i1\"\n1:[\"$undefined\"]\n2:{\"id\":\"x\",\"bound\":null}\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[{\"$\":\"undefined\"}]}}"},
      {"0:\"$K1\"\n1:[\"a\",\"\\ud83d\\ude00\",\"x\\ud83d\\ude00\"]\n", "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"a\",\"undefined\"],[\"\xef""\xbf""\xbd""\",\"\xef""\xbf""\xbd""\"],[\"x\",\"\xef""\xbf""\xbd""\"]]}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ts_expect_dump(cases[i].in, strlen(cases[i].in), 0, cases[i].want);
}

/* loadServerReference: a server reference under the key "then" is null
 * (even when its row is null), so is one whose id is no string, and null
 * or undefined metadata is a TypeError; createModel gives null for a
 * plain reference to a function under "then". Found by the differential
 * check (fuzz corpus); every expected dump is React 19.3.1's client's. */
Test(revive, server_references_as_load_server_reference_reads_them) {
  DUMP("1:{\"id\":\"a#b\",\"bound\":null}\n0:{\"then\":\"$h1\",\"x\":\"$h1\"}\n",
       "{\"ok\":{\"then\":null,\"x\":{\"$\":\"server_ref\",\"id\":\"a#b\",\"bound\":null}}}");
  DUMP("1:{\"id\":\"a#b\",\"bound\":null}\n2:\"$h1\"\n0:{\"then\":\"$2\",\"x\":\"$2\"}\n",
       "{\"ok\":{\"then\":null,\"x\":{\"$\":\"server_ref\",\"id\":\"a#b\",\"bound\":null}}}");
  DUMP("0:{\"then\":\"$h1\"}\n1:{\"id\":\"a#b\",\"bound\":null}\n", "{\"ok\":{\"then\":null}}");
  DUMP("1:{\"then\":\"$h1\"}\n0:{\"then\":\"$h2\"}\n2:null\n", "{\"ok\":{\"then\":null}}");
  DUMP("1:{\"id\":7}\n0:[\"$h1\",{\"then\":\"$1\"}]\n", "{\"ok\":[null,{\"then\":{\"id\":7}}]}");
  DUMP("1:[2]\n0:\"$h1\"\n", "{\"ok\":null}");
  DUMP("1:{\"id\":null,\"bound\":[1]}\n0:\"$h1\"\n", "{\"ok\":null}");
  DUMP("1:null\n0:\"$h1\"\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties "
                              "of null (reading 'id')\"}}");
  DUMP("1:\"$undefined\"\n0:\"$h1\"\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read "
                                        "properties of undefined (reading 'id')\"}}");
  REFUSED("1:\"$h1?2\"\n0:\"$1:\"\n", 0, 1, self_msg);
  DUMP_LENIENT("1:\"$h1?2\"\n0:\"$1:\"\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot "
                                           "read properties of null (reading 'id')\"}}");
}

/* A row that refers to itself while it is being revived: the reference
 * waits on the row, which fills it with the value the row revived to (the
 * null that stood for the reference, for a row that is only that
 * reference), and the row's value is then what the reference made of it:
 * new Map(null) is an empty Map. Every expected dump is React 19.3.1's. */
Test(revive, a_row_that_refers_to_itself) {
  /* React's values (lenient); refused by default: no server writes them */
  DUMP_LENIENT("0:\"$Q0\"\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[]}}");
  DUMP_LENIENT("0:\"$W0\"\n", "{\"ok\":{\"$\":\"Set\",\"values\":[]}}");
  DUMP_LENIENT("1:\"$Q1\"\n0:\"$1\"\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[]}}");
  DUMP_LENIENT("0:\"$0\"\n", "{\"ok\":null}");
  DUMP_LENIENT("0:\"$h0\"\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties "
                              "of null (reading 'id')\"}}");
  DUMP("0:{\"a\":\"$L0\",\"b\":\"$0:a:k\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}");
  DUMP("0:{\"a\":\"$L0\",\"b\":\"$0:a\"}\n",
       "{\"ok\":{\"a\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\",\"to\":\"/"
       "ok\"}},"
       "\"b\":{\"$\":\"ref\",\"to\":\"/ok\"}}}");
  REFUSED("0:\"$0\"\n", 0, 0, self_msg);
  REFUSED("0:\"$Q0\"\n", 0, 0, self_msg);
  REFUSED("0:\"$W0\"\n", 0, 0, self_msg);
  REFUSED("0:\"$h0\"\n", 0, 0, self_msg);
  REFUSED("1:\"$1\"\n0:[\"$1\"]\n", 0, 1, self_msg); /* not the root */
  REFUSED("1:\"$Q1\"\n0:\"$1\"\n", 0, 1, self_msg);
  /* a reference from inside the row is a cycle servers write */
  DUMP("0:{\"a\":\"$0\"}\n", "{\"ok\":{\"a\":{\"$\":\"ref\",\"to\":\"/ok\"}}}");
}

/* Rows whose whole values reference each other in a circle: React's
 * client fills the reference that closes the circle with the null that
 * stood for the other row's value, so every row of it is null. No server
 * writes one: refused at the row that closes the circle, in any order of
 * arrival; lenient, React's nulls. A circle through a lazy ("$L") is the
 * same null when it closes on a reference; through a promise ("$@") the
 * value is the promise, as React's (nothing is lost: kept). */
Test(revive, rows_whose_whole_values_form_a_circle) {
  REFUSED("0:\"$1\"\n1:\"$0\"\n", 7, 1, circle_msg);
  REFUSED("1:\"$0\"\n0:\"$1\"\n", 7, 0, circle_msg);
  REFUSED("0:\"$1\"\n1:\"$2\"\n2:\"$0\"\n", 14, 2, circle_msg);
  REFUSED("0:\"$1\"\n1:\"$0:a\"\n", 7, 1, circle_msg);
  REFUSED("0:\"$1\"\n1:\"$L0\"\n", 7, 1, circle_msg);
  expect_refused("1:\"$0\"\n0:\"$1\"\n", 14, RSC_OPT_LAZY_ROOT, 7, 0, circle_msg);
  DUMP_LENIENT("0:\"$1\"\n1:\"$0\"\n", "{\"ok\":null}");
  DUMP_LENIENT("1:\"$0\"\n0:\"$1\"\n", "{\"ok\":null}");
  DUMP_LENIENT("0:\"$1\"\n1:\"$2\"\n2:\"$0\"\n", "{\"ok\":null}");
  DUMP_LENIENT("0:\"$1\"\n1:\"$L0\"\n", "{\"ok\":null}");
  DUMP("0:\"$1\"\n1:\"$@0\"\n", "{\"ok\":{\"$\":\"promise\",\"status\":\"fulfilled\","
                                "\"value\":{\"$\":\"ref\",\"to\":\"/ok\"}}}");
  /* values that hold each other are cycles servers write */
  DUMP("0:\"$1\"\n1:{\"a\":\"$0\"}\n", "{\"ok\":{\"a\":{\"$\":\"ref\",\"to\":\"/ok\"}}}");
  DUMP("1:[[\"k\",\"$0\"]]\n0:\"$Q1\"\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[[\"k\",null]]}}");
}

/* "$i" calls model[Symbol.iterator](): a string, a Map, a Set, a FormData
 * and a typed array have their own iterators (code points, [key, value]
 * entries, values, elements), an iterator is its own, an ArrayBuffer and
 * anything else throw. Found by mutated payloads through the differential
 * check; every expected dump is React 19.3.1's client's (its oracle reads
 * these iterators as it reads an array's). */
Test(revive, iterators_of_models_that_are_not_arrays) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const sized_case cases[] = {
      SIZED("0:\"$i1\"\n1:\"gamma\"\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[\"g\",\"a\",\"m\",\"m\",\"a\"]}}"),
      SIZED("0:\"$i1\"\n1:\"a\\ud83d\\ude00b\\ud800\"\n",
       "{\"ok\":{\"$\":\"Iterator\",\"items\":[\"a\",\"\xf0\x9f\x98\x80\",\"b\",\"\\ud800\"]}}"),
      SIZED("0:\"$i1\"\n1:\"\"\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[]}}"),
      SIZED("0:\"$i1\"\n1:\"$Q2\"\n2:[[\"a\",1]]\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[[\"a\",1]]}}"),
      SIZED("0:\"$i1\"\n1:\"$W2\"\n2:[\"a\",1]\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[\"a\",1]}}"),
      SIZED("0:\"$i1\"\n1:\"$K2\"\n2:[[\"a\",\"b\"]]\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[[\"a\",\"b\"]]}}"),
      SIZED("1:o2,\x01\x02" "0:\"$i1\"\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[1,2]}}"),
      SIZED("1:M10,\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff" "0:\"$i1\"\n",
       "{\"ok\":{\"$\":\"Iterator\",\"items\":[{\"$\":\"bigint\",\"v\":\"1\"},{\"$\":\"bigint\",\"v\":\"-1\"}]}}"),
      SIZED("1:A2,\x01\x02" "0:\"$i1\"\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"model[Symbol.iterator] is not a function\"}}"),
      SIZED("0:\"$i1\"\n1:\"$i2\"\n2:[1]\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[1]}}"),
      SIZED("0:[\"$i1\",\"$1\"]\n1:\"$Q2\"\n2:[[{\"x\":1},\"$3\"]]\n3:[2]\n",
       "{\"ok\":[{\"$\":\"Iterator\",\"items\":[[{\"x\":1},[2]]]},{\"$\":\"Map\",\"entries\":[[{\"$\":\"ref\",\"to\":\"/ok/0/items/0/0\"},{\"$\":\"ref\",\"to\":\"/ok/0/items/0/1\"}]]}]}"),
      SIZED("0:\"$i1\"\n1:5\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"model[Symbol.iterator] is not a function\"}}"),
  };
  // clang-format on
  expect_sized_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* new Map(model) and a FormData read each entry as entry[0], entry[1]: of
 * a typed array, its first two elements (numbers, or BigInts for the
 * 64-bit kinds; undefined past its end or for an ArrayBuffer). Found by
 * mutated payloads; every expected dump is React 19.3.1's client's. */
Test(revive, map_and_form_data_entries_that_are_typed_arrays) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const sized_case cases[] = {
      SIZED("1:M10,\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"
        "2:[\"text/plain\",\"$1\"]\n0:\"$K2\"\n",
        "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"t\",\"e\"],[\"1\",\"-1\"]]}}"),
      SIZED("1:G8,\x00\x00\xc0\x3f\x00\x00\x80\x7f" "2:[\"$1\"]\n0:\"$K2\"\n",
        "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"1.5\",\"Infinity\"]]}}"),
      SIZED("1:o3,abc2:[\"$1\"]\n0:\"$Q2\"\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[[97,98]]}}"),
      SIZED("1:o1,a2:[\"$1\"]\n0:\"$Q2\"\n", "{\"ok\":{\"$\":\"Map\",\"entries\":[[97,{\"$\":\"undefined\"}]]}}"),
      SIZED("1:L8,\xff\xff\xff\xff\x01\x00\x00\x00" "2:[\"$1\"]\n0:\"$Q2\"\n",
        "{\"ok\":{\"$\":\"Map\",\"entries\":[[-1,1]]}}"),
      SIZED("1:A2,ab2:[\"$1\"]\n0:\"$Q2\"\n",
        "{\"ok\":{\"$\":\"Map\",\"entries\":[[{\"$\":\"undefined\"},{\"$\":\"undefined\"}]]}}"),
  };
  // clang-format on
  expect_sized_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* The development client's "$Z" (resolveErrorDev) and "$P"
 * (applyConstructor) read their model as JavaScript does: errorInfo.name
 * of null or undefined and "cause" in a primitive throw, and so does
 * Object.setPrototypeOf with a prototype that is no object or null (the
 * key is deleted otherwise). Found by the differential check (fuzz
 * corpus); every expected dump is React 19.3.1's development client's. */
Test(revive, development_errors_and_prototypes_of_other_values) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct { const char *in, *want; } cases[] = {
      {"1:null\n0:{\"e\":\"$Z1\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of null (reading 'name')\"}}"},
      {"0:{\"e\":\"$Z1\"}\n1:\"$undefined\"\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of undefined (reading 'name')\"}}"},
      {"1:5\n0:{\"e\":\"$Z1\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot use 'in' operator to search for 'cause' in 5\"}}"},
      {"1:\"abc\"\n0:{\"e\":\"$Z1\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot use 'in' operator to search for 'cause' in abc\"}}"},
      {"1:\"$Sfoo\"\n0:{\"e\":\"$Z1\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot use 'in' operator to search for 'cause' in Symbol(foo)\"}}"},
      {"1:1.5e300\n0:{\"e\":\"$Z1\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot use 'in' operator to search for 'cause' in 1.5e+300\"}}"},
      {"1:\"$n12\"\n0:{\"e\":\"$Z1\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot use 'in' operator to search for 'cause' in 12\"}}"},
      {":{\"\":\"$Z0-:\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of null (reading 'name')\"}}"},
      {"1:{\"message\":\"m\",\"stack\":[],\"env\":\"Server\"}\n0:{\"e\":\"$Z1\"}\n",
       "{\"ok\":{\"e\":{\"$\":\"Error\",\"message\":\"m\"}}}"},
      {"1:[]\n0:{\"a\":{\"\":\"$P1\",\"b\":2}}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Object prototype may only be an Object or null: undefined\"}}"},
      {"1:{\"prototype\":\"xy\"}\n0:{\"a\":{\"\":\"$P1\"}}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Object prototype may only be an Object or null: xy\"}}"},
      {"1:{\"prototype\":true}\n0:{\"a\":{\"\":\"$P1\"}}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Object prototype may only be an Object or null: true\"}}"},
      {"1:\"$Sx\"\n0:{\"a\":{\"\":\"$P1\"}}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Object prototype may only be an Object or null: undefined\"}}"},
      {"1:null\n0:[\"$P1\"]\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of null (reading 'prototype')\"}}"},
      {"1:\"$undefined\"\n0:{\"a\":{\"\":\"$P1\"}}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Cannot read properties of undefined (reading 'prototype')\"}}"},
      {"1:{\"prototype\":null}\n0:{\"a\":{\"\":\"$P1\",\"b\":2}}\n", "{\"ok\":{\"a\":{\"b\":2}}}"},
      {"1:{\"prototype\":{\"q\":1}}\n0:{\"a\":{\"\":\"$P1\",\"b\":2}}\n", "{\"ok\":{\"a\":{\"b\":2}}}"},
      {"1:{\"prototype\":[1,2]}\n0:{\"a\":{\"\":\"$P1\"}}\n", "{\"ok\":{\"a\":{}}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ts_expect_dump(cases[i].in, strlen(cases[i].in), RSC_OPT_DEV, cases[i].want);
}

/* A development "$Y" (a value the server omitted) is a getter on its
 * parent; a row's whole value has the throwaway {"": value} for one, so
 * the chunk's value is null there (React 19.3.1's client). */
Test(revive, omitted_value_as_a_whole_row) {
  DUMP_DEV(":\"$Y\"\n", "{\"ok\":null}");
  DUMP_DEV("1:\"$Y\"\n0:{\"a\":\"$1\",\"b\":\"$L1\"}\n",
           "{\"ok\":{\"a\":null,\"b\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":null}}}");
  DUMP_DEV(
      "0:[\"$Y\"]\n",
      "{\"ok\":[\"This object has been omitted by React in the console log to avoid sending too "
      "much data from the server. Try logging smaller or more specific objects.\"]}");
}

Test(revive, element_tuples) {
  DUMP("0:[\"$\",\"div\"]\n", "{\"ok\":{\"$\":\"element\",\"type\":\"div\",\"key\":{\"$\":"
                              "\"undefined\"},\"props\":{\"$\":\"undefined\"}}}");
  DUMP("0:[\"$\",\"div\",\"k\",{\"a\":1},null,null,2,\"extra\"]\n",
       "{\"ok\":{\"$\":\"element\",\"type\":\"div\",\"key\":\"k\",\"props\":{\"a\":1}}}");
  DUMP("0:[0,\"$\"]\n", "{\"ok\":[0,{\"$\":\"symbol\",\"v\":\"react.transitional.element\"}]}");
  /* A development tuple's owner and stack never block a development client. */
  DUMP_DEV("0:[\"$\",\"div\",null,{},\"$1\",\"$2\",1]\n",
           "{\"ok\":{\"$\":\"element\",\"type\":\"div\",\"key\":null,\"props\":{}}}");
}

/* The JSON stage builds the element of a production model row's tuple that
 * holds nothing else to revive as its array closes (rsc__plain_element);
 * the walk never enters it. Each case decodes as the walk alone decodes it
 * (development rows take the walk: the same dumps), and rows the client
 * does not revive keep their arrays. */
Test(revive, plain_element_tuples_are_built_while_parsing) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"0:[[\"$\"],[\"$\",\"a\"],[\"$\",\"a\",\"b\"],[\"$\",\"$\"],[\"$\",\"$$\"]]\n",
       "{\"ok\":[{\"$\":\"element\",\"type\":{\"$\":\"undefined\"},\"key\":{\"$\":\"undefined\"},"
       "\"props\":{\"$\":\"undefined\"}},{\"$\":\"element\",\"type\":\"a\",\"key\":{\"$\":\"undefined\"},"
       "\"props\":{\"$\":\"undefined\"}},{\"$\":\"element\",\"type\":\"a\",\"key\":\"b\",\"props\":{\"$\":"
       "\"undefined\"}},{\"$\":\"element\",\"type\":{\"$\":\"symbol\",\"v\":\"react.transitional.element\"},"
       "\"key\":{\"$\":\"undefined\"},\"props\":{\"$\":\"undefined\"}},{\"$\":\"element\",\"type\":\"$\","
       "\"key\":{\"$\":\"undefined\"},\"props\":{\"$\":\"undefined\"}}]}"},
      /* shared through references and paths, nested */
      {"0:{\"a\":\"$1\",\"b\":\"$1\",\"t\":\"$1:type\",\"c\":\"$1:props:children\"}\n"
       "1:[\"$\",\"div\",null,{\"children\":[\"$\",\"b\",\"k\",{}]}]\n",
       "{\"ok\":{\"a\":{\"$\":\"element\",\"type\":\"div\",\"key\":null,\"props\":{\"children\":{\"$\":"
       "\"element\",\"type\":\"b\",\"key\":\"k\",\"props\":{}}}},\"b\":{\"$\":\"ref\",\"to\":\"/ok/a\"},"
       "\"t\":\"div\",\"c\":{\"$\":\"ref\",\"to\":\"/ok/a/props/children\"}}}"},
      /* a "__proto__" key is the walk's to delete */
      {"0:[\"$\",\"div\",null,{\"__proto__\":{\"x\":1},\"y\":2}]\n",
       "{\"ok\":{\"$\":\"element\",\"type\":\"div\",\"key\":null,\"props\":{\"y\":2}}}"},
      /* inside what the walk revives: a lazy, a promise */
      {"0:[\"$\",\"div\",null,{\"children\":\"$L1\"}]\n1:[\"$\",\"span\",null,{}]\n",
       "{\"ok\":{\"$\":\"element\",\"type\":\"div\",\"key\":null,\"props\":{\"children\":{\"$\":\"lazy\","
       "\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"span\",\"key\":null,\"props\":{}}}}}}"},
      {"0:\"$@1\"\n1:[\"$\",\"x\",null,{\"a\":[\"$\",\"y\",null,{}]}]\n",
       "{\"ok\":{\"$\":\"promise\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"x\","
       "\"key\":null,\"props\":{\"a\":{\"$\":\"element\",\"type\":\"y\",\"key\":null,\"props\":{}}}}}}"},
      /* a module row's metadata is revived by the walk (an element here:
       * no id, no chunks, no name, and not async) */
      {"1:I[\"$\",[],\"x\"]\n0:\"$L1\"\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"client_ref\",\"id\":{\"$\":"
       "\"undefined\"},\"chunks\":{\"$\":\"undefined\"},\"name\":{\"$\":\"undefined\"}}}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_dump_both(cases[i].in, cases[i].want);
  /* The JSON stage itself: an element for a model row, an array otherwise
   * (other rows are not revived, or take the walk), and an array when
   * anything else in the tuple needs the walk. */
  rsc_decoder *d = rsc_decoder_new(NULL);
  const char *row =
      "[\"$\",\"div\",null,{\"a\":[\"$\",\"b\",null,{}],\"r\":[\"$\",\"c\",\"$1\",{}]}]";
  rsc_node n;
  const char *msg;
  cr_assert_eq(rsc__json_parse((rsc_json *)d->json, (const uint8_t *)row, strlen(row), false, true,
                               &n, &msg),
               JSON_OK);
  cr_expect_eq(n.kind, RSC_ARRAY, "a tuple holding one that needs the walk");
  cr_expect_eq(n.sub, ARR_NO_MARKER, "a model row's tuple has no marker slot");
  cr_expect_eq(n.len, 4);
  const rsc_node *props = &n.u.items[2];
  cr_expect_eq(rsc_object_get(props, "a", 1)->kind, RSC_ELEMENT);
  cr_expect_eq(rsc_object_get(props, "r", 1)->kind, RSC_ARRAY);
  cr_expect(n.flags & NF_WALK);
  cr_assert_eq(rsc__json_parse((rsc_json *)d->json, (const uint8_t *)row, strlen(row), false, false,
                               &n, &msg),
               JSON_OK);
  cr_expect_eq(n.sub, 0, "not a model row: the marker keeps its slot");
  cr_expect(rsc__is_marker(&n.u.items[0]) ||
            (n.u.items[0].kind == RSC_STRING && n.u.items[0].len == 1));
  cr_expect_eq(rsc_object_get(&n.u.items[3], "a", 1)->kind, RSC_ARRAY, "not a model row");
  rsc_decoder_free(d);
}

/* A production model row's tuple that still needs the walk is parsed
 * without its "$" slot (ARR_NO_MARKER): references into it, late slots,
 * paths through it and the element scopes its marker opens behave as with
 * the slot. Every expected dump is React 19.3.1's client's
 * (tests/conformance/differential.py); the development rows keep the slot. */
Test(revive, tuples_without_their_marker_slot) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct {
    const char *in, *want;
  } cases[] = {
      /* late props, a client type and a late prop, a late key (it fills
       * the tuple, not the element) */
      {"0:[\"$\",\"div\",null,\"$1\"]\n1:{\"a\":1}\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"div\","
       "\"key\":null,\"props\":{\"a\":1}}}}"},
      {"0:[\"$\",\"$L1\",null,{\"x\":\"$2\"}]\n1:I[\"m\",[],\"B\"]\n2:\"late\"\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":{\"$\":"
       "\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"client_ref\",\"id\":\"m\",\"chunks\":[],"
       "\"name\":\"B\"}},\"key\":null,\"props\":{\"x\":\"late\"}}}}"},
      {"0:[\"$\",\"div\",\"$1\",{}]\n1:\"k\"\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"div\","
       "\"key\":null,\"props\":{}}}}"},
      /* paths into an element, through its props, to a tuple index, to a
       * marker */
      {"0:{\"t\":\"$1:type\",\"p\":\"$1:props:x\",\"e\":\"$1\"}\n1:[\"$\",\"div\",null,{\"x\":\"$2\"}]\n"
       "2:[1,2]\n",
       "{\"ok\":{\"t\":\"div\",\"p\":[1,2],\"e\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":"
       "\"element\",\"type\":\"div\",\"key\":null,\"props\":{\"x\":{\"$\":\"ref\",\"to\":\"/ok/p\"}}}}}}"},
      {"0:[\"$\",\"div\",null,{\"c\":\"$0:props:d:1\",\"d\":[\"a\",\"b\"]}]\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"div\","
       "\"key\":null,\"props\":{\"c\":\"b\",\"d\":[\"a\",\"b\"]}}}}"},
      {"0:[\"$\",\"div\",null,{\"c\":\"$0:1\"}]\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"rejected\",\"reason\":{\"$\":\"Error\",\"message\":"
       "\"Invalid reference.\"}}}"},
      {"0:{\"a\":[\"$\",\"p\",null,{\"x\":\"$1\"}],\"b\":\"$0:a:0\"}\n1:\"y\"\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}"},
      /* a tuple as a type; tuples of one and two slots */
      {"0:[\"$\",[\"$\",\"x\",\"$1\",{}],null,{}]\n1:\"k\"\n",
       "{\"ok\":{\"$\":\"element\",\"type\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":"
       "\"element\",\"type\":\"x\",\"key\":null,\"props\":{}}},\"key\":null,\"props\":{}}}"},
      {"0:[[\"$\"],[\"$\",\"$1\"],[\"$\",\"$1\",\"$1\"]]\n1:\"a\"\n",
       "{\"ok\":[{\"$\":\"element\",\"type\":{\"$\":\"undefined\"},\"key\":{\"$\":\"undefined\"},"
       "\"props\":{\"$\":\"undefined\"}},{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":"
       "\"element\",\"type\":null,\"key\":{\"$\":\"undefined\"},\"props\":{\"$\":\"undefined\"}}},{\"$\":"
       "\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":null,\"key\":null,"
       "\"props\":{\"$\":\"undefined\"}}}]}"},
      /* inside a blocked element, a tuple's marker opens its own scope:
       * it blocks, errors or fills its key on its own */
      {"0:[\"$\",\"div\",null,{\"a\":\"$1\",\"c\":[\"$\",\"span\",null,{\"b\":\"$2\"}]}]\n2:\"x\"\n1:\"y\"\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"div\","
       "\"key\":null,\"props\":{\"a\":\"y\",\"c\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":"
       "\"element\",\"type\":\"span\",\"key\":null,\"props\":{\"b\":\"x\"}}}}}}}"},
      {"0:[\"$\",\"div\",null,{\"a\":\"$1\",\"c\":[\"$\",\"span\",\"$2\",{}]}]\n1:\"y\"\n2:\"k\"\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"div\","
       "\"key\":null,\"props\":{\"a\":\"y\",\"c\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":"
       "\"element\",\"type\":\"span\",\"key\":null,\"props\":{}}}}}}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_dump_both(cases[i].in, cases[i].want);
  /* an error in it: the clients word it apart */
  static const char errored[] =
      "0:[\"$\",\"div\",null,{\"a\":\"$1\",\"c\":[\"$\",\"span\",null,{\"b\":\"$2\"}]}]\n1:\"y\"\n"
      "2:E{\"digest\":\"d\"}\n";
  static const char errored_want[] =
      "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":"
      "\"div\","
      "\"key\":null,\"props\":{\"a\":\"y\",\"c\":{\"$\":\"lazy\",\"status\":\"rejected\","
      "\"reason\":{\"$\":"
      "\"Error\",\"message\":\"An error occurred in the Server Components render. The specific "
      "message is "
      "omitted in production builds to avoid leaking sensitive details. A digest property is "
      "included on "
      "this error instance which may provide additional details about the nature of the error.\","
      "\"digest\":\"d\"}}}}}}";
  ts_expect_dump(errored, sizeof errored - 1, 0, errored_want);
}

/* "$<id>" naming a chunk that is fulfilled when the row arrives, and holds
 * nothing to read, is placed by the JSON stage (rsc__arrived_value): the
 * trees must be the walk's, in production and development alike. */
Test(revive, arrived_values_are_placed_while_parsing) {
  /* A vector table: one case a line, as generated. */
  // clang-format off
  static const struct {
    const char *in, *want;
  } cases[] = {
      /* a text row, twice */
      {"1:T3,abc0:[\"$\",\"p\",null,{\"children\":\"$1\",\"title\":\"$1\"}]\n",
       "{\"ok\":{\"$\":\"element\",\"type\":\"p\",\"key\":null,\"props\":{\"children\":\"abc\","
       "\"title\":\"abc\"}}}"},
      /* a typed array keeps its identity */
      {"1:o2,ab0:{\"a\":\"$1\",\"b\":\"$1\"}\n",
       "{\"ok\":{\"a\":{\"$\":\"Uint8Array\",\"base64\":\"YWI=\"},"
       "\"b\":{\"$\":\"ref\",\"to\":\"/ok/a\"}}}"},
      /* a model row read already, holding a lazy: the walk's */
      {"0:[\"$1\",\"$L3\"]\n1:{\"x\":\"$L2\"}\n3:\"$1\"\n2:\"y\"\n",
       "{\"ok\":[{\"x\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":\"y\"}},{\"$\":\"lazy\","
       "\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\",\"to\":\"/ok/0\"}}]}"},
      /* a model row read already, plain: the same object */
      {"0:[\"$1\",\"$L2\"]\n1:{\"x\":1}\n2:[\"$1\",\"$1\"]\n",
       "{\"ok\":[{\"x\":1},{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":[{\"$\":\"ref\",\"to\":"
       "\"/ok/0\"},{\"$\":\"ref\",\"to\":\"/ok/0\"}]}]}"},
      /* ids parseInt reads that the fast path leaves to the walk */
      {"1a:T1,x0:[\"$1A\",\"$01a\",\"$1a\"]\n",
       "{\"ok\":[\"x\",\"x\",\"x\"]}"},
      /* not arrived yet: a forward reference waits (the element blocks) */
      {"0:[\"$\",\"p\",null,{\"children\":\"$1\"}]\n1:T1,z",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":\"p\","
       "\"key\":null,\"props\":{\"children\":\"z\"}}}}"},
  };
  // clang-format on
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_dump_both(cases[i].in, cases[i].want);
  /* A value read already that holds a lazy is the walk's: the walk notes
   * that the row reaches it, and the read-through at finish reads it. Here
   * chunk 1 is read by the consumer, and the root reaches it through 3. */
  static const char *feeds[] = {"0:\"$L3\"\n1:{\"x\":\"$L2\"}\n", "3:\"$1\"\n2:\"y\"\n"};
  rsc_decoder *r = rsc_decoder_new(NULL);
  cr_assert_eq(rsc_decoder_feed(r, feeds[0], strlen(feeds[0])), RSC_OK);
  cr_assert_eq(rsc_chunk_status(rsc_decoder_chunk(r, 1)), RSC_CHUNK_FULFILLED);
  cr_assert_eq(rsc_decoder_feed(r, feeds[1], strlen(feeds[1])), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(r), RSC_OK);
  cr_expect_eq(rsc__unread_reachable(r), 0, "the lazy inside chunk 1 was left unread");
  rsc_decoder_free(r);

  /* The JSON stage itself, on a production model row: the text placed, no
   * walk left, so the tuple is an element already; other rows keep it. */
  rsc_decoder *d = rsc_decoder_new(NULL);
  static const char rows[] = "1:T3,abc";
  cr_assert_eq(rsc_decoder_feed(d, rows, sizeof rows - 1), RSC_OK);
  const char *row = "[\"$\",\"p\",null,{\"children\":\"$1\",\"later\":\"$2\"}]";
  const char *one = "[\"$\",\"p\",null,{\"children\":\"$1\"}]";
  rsc_node n;
  const char *msg;
  cr_assert_eq(rsc__json_parse((rsc_json *)d->json, (const uint8_t *)one, strlen(one), false, true,
                               &n, &msg),
               JSON_OK);
  cr_assert_eq(n.kind, RSC_ELEMENT, "the text placed: nothing left to revive");
  const rsc_node *child = rsc_object_get(&n.u.el->props, "children", 8);
  cr_expect_eq(child->kind, RSC_STRING);
  cr_expect(child->len == 3 && memcmp(child->u.str, "abc", 3) == 0);
  cr_assert_eq(rsc__json_parse((rsc_json *)d->json, (const uint8_t *)row, strlen(row), false, true,
                               &n, &msg),
               JSON_OK);
  cr_expect_eq(n.kind, RSC_ARRAY, "$2 has not arrived: the walk's");
  cr_expect_eq(n.sub, ARR_NO_MARKER);
  cr_expect_eq(rsc_object_get(&n.u.items[2], "children", 8)->kind, RSC_STRING);
  cr_expect_eq(rsc_object_get(&n.u.items[2], "later", 5)->flags & NF_DOLLAR, NF_DOLLAR);
  cr_assert_eq(rsc__json_parse((rsc_json *)d->json, (const uint8_t *)one, strlen(one), false, false,
                               &n, &msg),
               JSON_OK);
  cr_expect_eq(rsc_object_get(&n.u.items[3], "children", 8)->flags & NF_DOLLAR, NF_DOLLAR,
               "not a model row: left as it is");
  rsc_decoder_free(d);
}

Test(revive, blocked_and_errored_elements_become_lazies) {
  DUMP("0:{\"el\":[\"$\",\"div\",null,{\"children\":\"$1\"}],\"n\":1}\n1:E{\"digest\":\"d\"}\n",
       "{\"ok\":{\"el\":{\"$\":\"lazy\",\"status\":\"rejected\",\"reason\":{\"$\":\"Error\","
       "\"message\":"
       "\"An error occurred in the Server Components render. The specific message is omitted in "
       "production "
       "builds to avoid leaking sensitive details. A digest property is included on this error "
       "instance "
       "which may provide additional details about the nature of the "
       "error.\",\"digest\":\"d\"}},\"n\":1}}");
  DUMP("0:[\"$\",\"$L1\",null,{\"prop\":{\"obj\":\"$0:props:prop\"}}]\n1:I[\"m\",[],\"B\"]\n",
       "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"element\",\"type\":{\"$"
       "\":\"lazy\","
       "\"status\":\"fulfilled\",\"value\":{\"$\":\"client_ref\",\"id\":\"m\",\"chunks\":[],"
       "\"name\":\"B\"}},"
       "\"key\":null,\"props\":{\"prop\":{\"obj\":{\"$\":\"ref\",\"to\":\"/ok/value/props/"
       "prop\"}}}}}}");
}

Test(revive, paths_only_step_into_own_members) {
  DUMP("0:{\"a\":{\"b\":[1,2]},\"c\":\"$0:a:b:1\",\"d\":\"$0:a:b:length\"}\n",
       "{\"ok\":{\"a\":{\"b\":[1,2]},\"c\":2,\"d\":2}}");
  DUMP("1:{\"a\":\"str\"}\n0:{\"x\":\"$1:a:length\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}");
  DUMP("1:{\"a\":{}}\n0:{\"x\":\"$1:a:constructor\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}");
  DUMP("1:{\"__proto__\":{\"x\":1}}\n0:{\"x\":\"$1:__proto__:x\"}\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}");
  DUMP("0:[[\"$\",\"b\",null,{\"x\":1}],\"$0:0:props:x\",\"$0:0:type\"]\n",
       "{\"ok\":[{\"$\":\"element\",\"type\":\"b\",\"key\":null,\"props\":{\"x\":1}},1,\"b\"]}");
}

/* A decode with the split cache and the path memo (revive.h) against one
 * that splits every path whole and walks it from its root. */
static char *decode_paths(const char *in, bool plain) {
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert(d);
  d->paths.plain_paths = plain;
  rsc_decoder_feed(d, in, strlen(in));
  rsc_decoder_finish(d);
  char buf[200];
  snprintf(buf, sizeof buf, "error %d: %s", rsc_decoder_error(d)->code,
           rsc_decoder_error(d)->msg ? rsc_decoder_error(d)->msg : "");
  char *dump = ts_dump(d);
  char *out = strdup(dump ? dump : buf);
  rsc_free(dump);
  rsc_decoder_free(d);
  return out;
}

static void expect_paths_agree(const char *in, const char *want) {
  char *memo = decode_paths(in, false), *plain = decode_paths(in, true);
  cr_expect_str_eq(memo, plain, "input: %s", in);
  if (want) cr_expect_str_eq(memo, want, "input: %s", in);
  free(memo);
  free(plain);
}

Test(revive, paths_sharing_a_prefix_read_like_paths_walked_whole) {
  /* Runs of paths that differ in their last key, longer and shorter ones,
   * other ids that end alike, a synthesized "length" on the way. */
  expect_paths_agree(
      "1:{\"a\":{\"b\":{\"x\":1,\"y\":2,\"z\":{\"w\":3}},\"bb\":[5,6],\"b:\":7}}\n"
      "11:{\"a\":{\"b\":{\"x\":8}}}\n"
      "0:[\"$1:a:b:x\",\"$1:a:b:y\",\"$1:a:b:z:w\",\"$1:a:b\",\"$1:a:bb:1\",\"$1:a:bb:length\","
      "\"$11:a:b:x\",\"$1:a:b:x\",\"$1:a\",\"$1:a:b:y\",\"$1:a:bb:0\"]\n",
      "{\"ok\":[1,2,3,{\"x\":1,\"y\":2,\"z\":{\"w\":3}},6,2,8,1,{\"b\":{\"$\":\"ref\",\"to\":\"/ok/"
      "3\"},"
      "\"bb\":[5,6],\"b:\":7},2,5]}");
  /* A path that fails after others with its prefix succeeded. */
  expect_paths_agree("1:{\"a\":{\"b\":{\"x\":1}}}\n0:[\"$1:a:b:x\",\"$1:a:b:q\"]\n",
                     "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}");
  /* Paths back into the row itself wait for it (React's self references),
   * through the lazy of the element they block, then resume from the memo. */
  expect_paths_agree("0:[\"$\",\"$L1\",null,{\"users\":[{\"id\":1},{\"id\":2},{\"id\":3}],"
                     "\"posts\":[{\"by\":\"$0:props:users:1\"},{\"by\":\"$0:props:users:0\"},"
                     "{\"by\":\"$0:props:users:2:id\"},{\"by\":\"$0:props:users:1\"},{\"n\":\"$0:"
                     "props:users:length\"}]}]\n"
                     "1:I[\"m\",[],\"B\"]\n",
                     NULL);
  /* Element steps: props, type, key, ref and $$typeof (made on the spot). */
  expect_paths_agree("0:[[\"$\",\"b\",\"k\",{\"x\":1,\"y\":[2]}],\"$0:0:props:x\",\"$0:0:props:y:"
                     "0\",\"$0:0:type\","
                     "\"$0:0:key\",\"$0:0:ref\",\"$0:0:props:x\"]\n",
                     "{\"ok\":[{\"$\":\"element\",\"type\":\"b\",\"key\":\"k\",\"props\":{\"x\":1,"
                     "\"y\":[2]}},1,2,\"b\","
                     "\"k\",null,1]}");
  /* A slot on the memo's way filled in between: a reference that waited on
   * a later row, then paths through it. */
  expect_paths_agree("0:{\"a\":{\"b\":\"$2\"},\"p\":\"$0:a:b:x\",\"q\":\"$0:a:b:y\"}\n"
                     "2:{\"x\":1,\"y\":2}\n",
                     NULL);
  expect_paths_agree(
      "2:{\"x\":{\"v\":1},\"y\":{\"v\":2}}\n"
      "0:{\"a\":{\"b\":\"$L2\"},\"p\":\"$0:a:b:x\",\"q\":\"$0:a:b:y:v\",\"r\":\"$0:a:b:x:v\"}\n",
      NULL);
  /* Runs into two rows interleaving (what Next.js writes for a list of
   * client components given the same props objects), one of them under
   * a prefix of 11 keys. */
  expect_paths_agree(
      "9:[[0,{\"d\":{\"r\":{\"props\":{\"children\":[{\"props\":{\"children\":[{\"props\":"
      "{\"labels\":{\"l\":1},\"currency\":{\"c\":2}}}]}}]}}}}]]\n"
      "19:{\"props\":{\"options\":{\"shipping\":{\"s\":3}}}}\n"
      "0:[\"$9:0:1:d:r:props:children:0:props:children:0:props:labels\","
      "\"$9:0:1:d:r:props:children:0:props:children:0:props:currency\","
      "\"$19:props:options:shipping\","
      "\"$9:0:1:d:r:props:children:0:props:children:0:props:currency\","
      "\"$9:0:1:d:r:props:children:0:props:children:0:props:labels\","
      "\"$19:props:options:shipping\",\"$19:props:options:shipping:s\","
      "\"$9:0:1:d:r:props:children:0:props:children:0:props:labels:l\"]\n",
      "{\"ok\":[{\"l\":1},{\"c\":2},{\"s\":3},{\"$\":\"ref\",\"to\":\"/ok/1\"},{\"$\":\"ref\","
      "\"to\":\"/ok/0\"},{\"$\":\"ref\",\"to\":\"/ok/2\"},3,1]}");
}

/* A path over the keys k[0, n): the keys but the last in k, the last apart. */
#define P(keys, count) (&(rsc_path){(keys), (keys)[(count)-1].s, (keys)[(count)-1].n, (count)})

/* The memo's own checks, which payloads hardly reach (slots on a path rarely
 * change once a walk could pass them): {"a":{"b":[10, lazy]}}, the memo
 * recorded for "a:b:*", then a slot on the way or a lazy's target changed. */
Test(revive, the_path_memo_resumes_only_over_unchanged_slots) {
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  rsc_member *outer = rsc__alloc(d, sizeof *outer), *inner = rsc__alloc(d, sizeof *inner);
  rsc_node *items = rsc__alloc_nodes(d, 2);
  rsc_chunk *c = rsc__new_chunk(d, CS_FULFILLED);
  c->value = rsc__num(7);
  items[0] = rsc__num(10);
  items[1] = rsc__lazy(c);
  RSC_KEY(k_a, "a");
  RSC_KEY(k_b, "b");
  *inner = (rsc_member){k_b.s, rsc__mk(RSC_ARRAY)};
  inner->val.len = 2, inner->val.u.items = items;
  *outer = (rsc_member){k_a.s, rsc__mk(RSC_OBJECT)};
  outer->val.len = 1, outer->val.u.members = inner;
  rsc_node root = rsc__mk(RSC_OBJECT);
  root.len = 1, root.u.members = outer;
  const char text[] = "0:a:b:0", other[] = "0:a:c:0";
  rsc_key path[3] = {{text + 2, 1}, {text + 4, 1}, {text + 6, 1}};
  rsc_key path2[3] = {{other + 2, 1}, {other + 4, 1}, {other + 6, 1}};
  /* What a walk of "a:b:0" notes: the slots of a and b, values as read. */
  struct path_notes *w = &d->paths.notes;
  w->slot[0] = &outer->val, w->seen[0] = outer->val, w->led[0] = outer->val;
  w->slot[1] = &inner->val, w->seen[1] = inner->val, w->led[1] = inner->val;
  rsc__memo_record(d, &root, P(path, 3), false);
  rsc_node v;
  cr_expect_eq(rsc__memo_resume(d, &root, P(path, 3), NULL, &v, NULL), 2);
  cr_expect(v.kind == RSC_ARRAY && v.u.items == items);
  cr_expect_eq(rsc__memo_resume(d, &root, P(path2, 3), NULL, &v, NULL), 0, "another prefix");
  cr_expect_eq(rsc__memo_resume(d, &root, P(path, 2), NULL, &v, NULL), 0, "no key after it");
  rsc_node other_root = root;
  other_root.len = 0;
  cr_expect_eq(rsc__memo_resume(d, &other_root, P(path, 3), NULL, &v, NULL), 0, "another root");
  inner->val.len = 1; /* the slot of b now holds another value */
  cr_expect_eq(rsc__memo_resume(d, &root, P(path, 3), NULL, &v, NULL), 0, "a changed slot");
  inner->val.len = 2;
  cr_expect_eq(rsc__memo_resume(d, &root, P(path, 3), NULL, &v, NULL), 2);
  /* Through a lazy: "a:b:1:x" reads items[1], a lazy led to c's value. */
  const char text3[] = "0:a:b:1:x";
  rsc_key path3[4] = {{text3 + 2, 1}, {text3 + 4, 1}, {text3 + 6, 1}, {text3 + 8, 1}};
  w->slot[2] = &items[1], w->seen[2] = items[1], w->led[2] = c->value;
  rsc__memo_record(d, &root, P(path3, 4), true);
  /* "a:b" is the memo's other entry now (two_prefixes_interleave below);
   * forgotten here, so that what follows tests the lazy's checks alone */
  d->paths.memo[1].depth = 0;
  bool hopped = false;
  cr_expect_eq(rsc__memo_resume(d, &root, P(path3, 4), NULL, &v, &hopped), 3);
  cr_expect(v.kind == RSC_NUMBER && v.u.num == 7 && hopped);
  c->value = rsc__num(8); /* the lazy leads elsewhere now */
  cr_expect_eq(rsc__memo_resume(d, &root, P(path3, 4), NULL, &v, NULL), 0, "a lazy led elsewhere");
  c->value = rsc__num(7);
  c->state = CS_PENDING; /* a walk would wait on it */
  cr_expect_eq(rsc__memo_resume(d, &root, P(path3, 4), NULL, &v, NULL), 0, "a lazy not fulfilled");
  rsc_scope h = {0};
  h.chunk = c, h.value = rsc__num(7); /* the waiting reference's own chunk */
  cr_expect_eq(rsc__memo_resume(d, &root, P(path3, 4), &h, &v, NULL), 3);
  rsc_decoder_free(d);
}

/* Runs of paths into two objects interleave (a list of client components,
 * each given the same two props objects): the memo keeps two prefixes,
 * the most recent first, and a third replaces the least recent. */
Test(revive, the_path_memo_keeps_two_prefixes_that_interleave) {
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  rsc_member *m = rsc__alloc(d, 3 * sizeof *m);
  RSC_KEY(k_a, "a");
  RSC_KEY(k_b, "b");
  RSC_KEY(k_c, "c");
  m[0] = (rsc_member){k_a.s, rsc__num(1)};
  m[1] = (rsc_member){k_b.s, rsc__num(2)};
  m[2] = (rsc_member){k_c.s, rsc__num(3)};
  rsc_node root = rsc__mk(RSC_OBJECT);
  root.len = 3, root.u.members = m;
  const char ta[] = "0:a:x", tb[] = "0:b:x", tc[] = "0:c:x";
  rsc_key pa[2] = {{ta + 2, 1}, {ta + 4, 1}}, pb[2] = {{tb + 2, 1}, {tb + 4, 1}},
          pc[2] = {{tc + 2, 1}, {tc + 4, 1}};
  struct path_notes *w = &d->paths.notes;
  rsc_node v;
  w->slot[0] = &m[0].val, w->seen[0] = m[0].val, w->led[0] = m[0].val;
  rsc__memo_record(d, &root, P(pa, 2), false);
  w->slot[0] = &m[1].val, w->seen[0] = m[1].val, w->led[0] = m[1].val;
  rsc__memo_record(d, &root, P(pb, 2), false);
  for (int round = 0; round < 3; round++) {
    cr_expect_eq(rsc__memo_resume(d, &root, P(pa, 2), NULL, &v, NULL), 1, "round %d", round);
    cr_expect(v.kind == RSC_NUMBER && v.u.num == 1);
    cr_expect_eq(rsc__memo_resume(d, &root, P(pb, 2), NULL, &v, NULL), 1, "round %d", round);
    cr_expect(v.kind == RSC_NUMBER && v.u.num == 2);
  }
  /* b was met last: c replaces a */
  w->slot[0] = &m[2].val, w->seen[0] = m[2].val, w->led[0] = m[2].val;
  rsc__memo_record(d, &root, P(pc, 2), false);
  cr_expect_eq(rsc__memo_resume(d, &root, P(pc, 2), NULL, &v, NULL), 1);
  cr_expect_eq(rsc__memo_resume(d, &root, P(pb, 2), NULL, &v, NULL), 1);
  cr_expect_eq(rsc__memo_resume(d, &root, P(pa, 2), NULL, &v, NULL), 0, "a was the least recent");
  rsc_decoder_free(d);
}

Test(revive, collections) {
  DUMP("1:[[\"a\",1],[\"a\",2],[{\"k\":1},3]]\n2:[1,1,\"1\"]\n0:{\"m\":\"$Q1\",\"s\":\"$W2\",\"f\":"
       "\"$K1\"}\n",
       "{\"ok\":{\"m\":{\"$\":\"Map\",\"entries\":[[\"a\",2],[{\"k\":1},3]]},\"s\":{\"$\":\"Set\","
       "\"values\":[1,\"1\"]},"
       "\"f\":{\"$\":\"FormData\",\"entries\":[[\"a\",\"1\"],[\"a\",\"2\"],[\"[object "
       "Object]\",\"3\"]]}}}");
  DUMP("1:[\"A\",\"B\"]\n0:\"$i1\"\n", "{\"ok\":{\"$\":\"Iterator\",\"items\":[\"A\",\"B\"]}}");
}

Test(revive, temporary_references) {
  DUMP("0:\"$T0:a\"\n",
       "{\"rejected\":{\"$\":\"Error\",\"message\":\"Missing a temporary reference set but the "
       "RSC response returned a temporary reference. Pass a temporaryReference option with "
       "the set that was used with the reply.\"}}");
  ts_expect_dump("0:\"$T0:a\"\n", 10, RSC_OPT_TEMP_REFS,
                 "{\"ok\":{\"$\":\"temporary_ref\",\"v\":\"0:a\"}}");
}

Test(revive, development_forms) {
  DUMP_DEV("0:{\"x\":\"$Efunction f(){}\",\"y\":\"$E(function g(){})\",\"z\":\"$Y\"}\n",
           "{\"ok\":{\"y\":{\"$\":\"function\",\"source\":\"(function g(){})\"},\"z\":\"This "
           "object has been "
           "omitted by React in the console log to avoid sending too much data from the server. "
           "Try logging "
           "smaller or more specific objects.\"}}");
  DUMP_DEV(
      "1:{\"name\":\"TypeError\",\"message\":\"bad\",\"stack\":[],\"env\":\"Server\"}\n0:\"$Z1\"\n",
      "{\"ok\":{\"$\":\"Error\",\"message\":\"bad\"}}");
  /* a message is text, NULs included (not a C string) */
  DUMP_DEV("1:{\"message\":\"a\\u0000b\",\"stack\":[],\"env\":\"Server\"}\n0:\"$Z1\"\n",
           "{\"ok\":{\"$\":\"Error\",\"message\":\"a\\u0000b\"}}");
  DUMP_DEV("1:E{\"message\":\"c\\u0000d\",\"stack\":[],\"env\":\"Server\"}\n0:\"$1\"\n",
           "{\"rejected\":{\"$\":\"Error\",\"message\":\"c\\u0000d\"}}");
}

/* A text row split over feeds, gathered piece by piece (frame.c's
 * dest_fn, which checks pieces of 256 bytes or more as ASCII as it copies
 * them), is checked as UTF-8 and repaired past its ASCII prefix as a row
 * fed whole is: the same text whatever the pieces. */
Test(revive, split_text_rows_are_checked_past_their_ascii_prefix) {
  static const char *tails[] = {"", "\xc3\xa9 ok", "\xff bad", "\xe2\x82", "x\xf0\x9f\x98\x80"};
  enum { ASCII = 2000 };
  static char in[ASCII + 64];
  for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
    const char *tail = tails[t];
    size_t tn = strlen(tail);
    /* the tail in the middle of the row, in a piece that is not its last */
    int h = snprintf(in, sizeof in, "1:T%zx,", ASCII + tn);
    for (int k = 0; k < ASCII; k++)
      in[h + k + (k < ASCII / 2 ? 0 : (int)tn)] = (char)('a' + k % 26);
    memcpy(in + h + ASCII / 2, tail, tn);
    int n = h + ASCII + (int)tn;
    n += snprintf(in + n, sizeof in - (size_t)n, "0:[\"$1\"]\n");
    rsc_decoder *whole = ts_decode(in, (size_t)n, 0, 0);
    char *want = ts_dump(whole);
    cr_assert(want);
    for (size_t piece = 1; piece <= 1024; piece = piece < 20 ? piece + 1 : piece * 2) {
      rsc_decoder *d = ts_decode(in, (size_t)n, piece, 0);
      char *got = ts_dump(d);
      cr_expect(got && strcmp(got, want) == 0, "tail %zu, pieces of %zu:\n%s\nwhole:\n%s", t, piece,
                got, want);
      rsc_free(got);
      rsc_decoder_free(d);
    }
    rsc_free(want);
    rsc_decoder_free(whole);
  }
}

/* The read-through at finish enters an element only when its tuple's walk
 * met something that may lead to a chunk to read (NF_REACH): here the
 * first cell's lazy names row 1, parsed on read; the second cell holds a
 * date and a reference to a plain row that has arrived, so nothing of it
 * leads anywhere. Row 1 is still read at finish. */
Test(revive, only_elements_that_may_reach_a_chunk_are_entered_at_finish) {
  rsc_decoder *d = ts_decode_str("2:{\"a\":1}\n"
                                 "0:[\"$\",\"tr\",null,{\"children\":["
                                 "[\"$\",\"td\",null,{\"children\":\"$L1\"}],"
                                 "[\"$\",\"td\",null,{\"title\":\"$D2024-01-01T00:00:00.000Z\","
                                 "\"data\":\"$2\"}]]}]\n"
                                 "1:[\"$\",\"b\",null,{\"children\":\"late\"}]\n",
                                 0);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  const rsc_node *row = ts_root_value(d);
  cr_assert_eq(rsc_node_kind(row), RSC_ELEMENT);
  const rsc_node *cells = rsc_object_get(rsc_element_props(row), "children", 8);
  const rsc_node *lazy_cell = rsc_node_at(cells, 0), *plain_cell = rsc_node_at(cells, 1);
  cr_expect(row->flags & NF_REACH, "the row holds the lazy cell");
  cr_expect(lazy_cell->flags & NF_REACH);
  cr_expect_not(plain_cell->flags & NF_REACH, "nothing in it leads to a chunk");
  const rsc_node *lazy = rsc_object_get(rsc_element_props(lazy_cell), "children", 8);
  cr_assert_eq(rsc_node_kind(lazy), RSC_LAZY);
  cr_expect_eq(rsc_chunk_status(rsc_node_chunk(lazy)), RSC_CHUNK_FULFILLED, "read at finish");
  rsc_decoder_free(d);
}
