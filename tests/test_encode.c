/* test_encode.c - rsc_encode (src/encode.c): decode then encode gives the
 * input bytes, for every payload a React server wrote in fixtures/ (React's
 * own 19.0 to 19.3, the other bundlers' and the Next.js pages'), with the
 * exceptions tests/encode-known.txt lists with their reasons; and each
 * value kind, row kind and error path on small payloads.
 *
 * The fixture test fails when a payload not in the list differs, and when
 * one in the list has become exact (take it out of the list). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define KNOWN_LIST RSC_FIXTURES "/../tests/encode-known.txt"

/* Decodes in[0..len) with RSC_OPT_KEEP_ROWS and the flags, and encodes it. */
static rsc_status encode_with(const char *in, size_t len, uint32_t flags, rsc_bundler bundler,
                              ts_sink *out) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags | RSC_OPT_KEEP_ROWS;
  opt.bundler = bundler;
  rsc_error err;
  rsc_decoder *d = rsc_decode(in, len, &opt, &err);
  cr_assert_not_null(d);
  memset(out, 0, sizeof *out);
  rsc_status st = rsc_encode(d, ts_sink_write, out);
  rsc_decoder_free(d);
  return st;
}

/* The payload encodes to itself. */
static void round_trip(const char *in, size_t len, uint32_t flags) {
  ts_sink out;
  rsc_status st = encode_with(in, len, flags, RSC_BUNDLER_WEBPACK, &out);
  cr_assert_eq(st, RSC_OK, "rsc_encode: %s", rsc_status_name(st));
  cr_expect(out.len == len && memcmp(out.p, in, len) == 0, "\n  input:  %.*s\n  output: %.*s",
            (int)len, in, (int)out.len, out.p ? out.p : "");
  free(out.p);
}
#define RT(s) round_trip(s, sizeof(s) - 1, 0)
#define RT_DEV(s) round_trip(s, sizeof(s) - 1, RSC_OPT_DEV)

/* The payload (a C string) encodes to want. */
static void encodes_to(const char *in, uint32_t flags, const char *want) {
  ts_sink out;
  cr_assert_eq(encode_with(in, strlen(in), flags, RSC_BUNDLER_WEBPACK, &out), RSC_OK);
  cr_assert_str_eq(out.p, want);
  free(out.p);
}

static void encode_same(rsc_decoder *d, const char *want) {
  ts_sink out = {0};
  cr_assert_eq(rsc_encode(d, ts_sink_write, &out), RSC_OK);
  cr_expect_str_eq(out.p ? out.p : "", want);
  free(out.p);
}

/* ---- value kinds ------------------------------------------------------------ */

Test(values, json_and_escapes) {
  RT("0:{\"n\":null,\"t\":true,\"f\":false,\"i\":42,\"x\":1.5,\"e\":1e+21,\"s\":\"plain\","
     "\"q\":\"quote \\\" and \\\\ and \\n\\u0001\",\"u\":\"\xc3\xbc\",\"a\":[],\"o\":{}}\n");
  RT("0:[\"$$\",\"$$$\",\"$$L1\",\"$$undefined\",\"a$b\"]\n");
  RT("0:\"top\"\n");
  RT("0:123\n");
  RT("0:null\n");
}

/* Each byte that needs an escape, at every offset of a string longer than
 * the eight bytes the writer scans at once; integers and numbers around
 * the exact integers' bounds. */
Test(values, escapes_at_every_offset) {
  static const char *escs[] = {"\\\"",    "\\\\",     "\\n",          "\\u0001", "\\u001f",
                               "\\ud800", "\xc3\xbc", "\xed\x9f\xbf", "~"};
  for (size_t k = 0; k < sizeof escs / sizeof *escs; k++) {
    for (int at = 0; at < 20; at++) {
      char in[128];
      int n = snprintf(in, sizeof in, "0:\"%.*s%s%.*s\"\n", at, "abcdefghijklmnopqrstuvwxyz",
                       escs[k], 19 - at, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
      round_trip(in, (size_t)n, 0);
    }
  }
  RT("0:[0,-1,1,9007199254740991,-9007199254740991,9007199254740992,1e+21,123456789012345680000,"
     "0.1,-2.5e-7]\n");
}

/* The value is written, not the row's text: JSON the server never writes
 * (spaces, escapes JSON.stringify does not make) comes out as it would. */
Test(values, written_from_the_value) {
  const char in[] = "0:{ \"a\" : [1.50, \"\\u0041\", 1E3] }\n";
  ts_sink out;
  cr_assert_eq(encode_with(in, sizeof in - 1, 0, RSC_BUNDLER_WEBPACK, &out), RSC_OK);
  cr_assert_str_eq(out.p, "0:{\"a\":[1.5,\"A\",1000]}\n");
  free(out.p);
}

Test(values, special_numbers_and_primitives) {
  RT("0:[\"$undefined\",\"$NaN\",\"$Infinity\",\"$-Infinity\",\"$-0\",0,-1]\n");
  RT("0:{\"d\":\"$D2024-01-02T03:04:05.678Z\",\"b\":\"$n-12345678901234567890\","
     "\"s\":\"$Sreact.fragment\"}\n");
}

Test(values, undefined_members_stay) { RT("0:{\"a\":\"$undefined\",\"b\":1}\n"); }

Test(values, elements) {
  RT("0:[\"$\",\"div\",null,{\"className\":\"x\",\"children\":[[\"$\",\"span\",\"k\","
     "{\"children\":\"hi\"}],\"text\"]}]\n");
  RT("0:[\"$\",\"$Sreact.suspense\",null,{\"fallback\":\"wait\",\"children\":\"ok\"}]\n");
}

Test(values, client_references_and_lazies) {
  RT("1:I[\"app/B.js\",[\"main\",\"main.js\"],\"B\"]\n"
     "0:[\"$\",\"$L1\",null,{\"as\":\"$1\",\"p\":\"$@2\",\"l\":\"$L2\"}]\n"
     "2:{\"late\":true}\n");
}

Test(values, outlined_rows_and_symbols) {
  RT("1:\"$Sreact.suspense\"\n"
     "0:[\"$\",\"$1\",null,{\"children\":\"x\"}]\n");
  RT("1:\"shared text\"\n"
     "2:I[\"$1\",[],\"X\"]\n"
     "0:[\"$1\",\"$L2\"]\n");
}

Test(values, path_references) {
  RT("0:{\"a\":{\"x\":1},\"b\":\"$0:a\",\"c\":{\"self\":\"$0:c\"},\"d\":[\"$0:a\"]}\n");
  RT("0:[\"$\",\"div\",null,{\"o\":{\"v\":1},\"children\":[\"$\",\"p\",null,"
     "{\"o\":\"$0:props:o\"}]}]\n");
  /* a key with a ':' gets no path: what sits under it is written again */
  RT("0:{\"a:b\":{\"x\":{\"y\":1}},\"c\":{\"y\":2}}\n");
}

/* Paths below one parent (which the writer spells once and keeps), at
 * depths, under a key that needs an escape, and in a second encode of the
 * decoder and of another after a reset. */
Test(values, paths_that_share_a_parent) {
  const char a[] = "0:{\"l\":[{\"a\":{\"v\":1}},{\"a\":{\"v\":2}},{\"a\":{\"v\":[{\"w\":3}]}}],"
                   "\"q\\\"k\":{\"z\":{\"v\":4},\"y\":{\"v\":5}},"
                   "\"r\":[\"$0:l:0:a\",\"$0:l:1:a\",\"$0:l:2:a:v:0\",\"$0:l:2:a\",\"$0:l:1\","
                   "\"$0:q\\\"k:y\",\"$0:q\\\"k:z\",\"$0:q\\\"k\"]}\n";
  const char b[] =
      "0:{\"m\":[{\"a\":{\"v\":1}},{\"b\":{\"v\":2}}],\"r\":[\"$0:m:1:b\",\"$0:m:0:a\","
      "\"$0:m:0\"]}\n";
  RT(a);
  RT(b);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_KEEP_ROWS;
  rsc_decoder *d = rsc_decode(a, sizeof a - 1, &opt, NULL);
  cr_assert_not_null(d);
  encode_same(d, a);
  encode_same(d, a);
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_assert_eq(rsc_decoder_feed(d, b, sizeof b - 1), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  encode_same(d, b);
  rsc_decoder_free(d);
}

Test(values, collections) {
  RT("1:[[\"k\",\"v\"],[1,{\"o\":1}]]\n"
     "2:[1,2,3]\n"
     "3:[[\"name\",\"Ada\"]]\n"
     "0:{\"m\":\"$Q1\",\"s\":\"$W2\",\"f\":\"$K3\"}\n");
  /* a Map met twice: its form first, then the path of its first place */
  RT("1:[[\"k\",\"v\"]]\n"
     "0:{\"m\":\"$Q1\",\"again\":\"$0:m\"}\n");
  /* the entries row is written first but serialized inside row 0: the
   * object both hold is row 0's at its first place */
  RT("1:[[\"k\",\"$0:first\"]]\n"
     "0:{\"first\":{\"id\":7},\"map\":\"$Q1\"}\n");
}

Test(values, iterators_and_blobs) {
  RT("1:[1,2]\n0:{\"it\":\"$i1\"}\n");
  RT("0:\"$B1\"\n2:o3,\x01\x02\x03"
     "1:[\"application/x-test\",\"$2\"]\n");
}

Test(values, production_errors) { RT("0:{\"err\":\"$Z\",\"list\":[\"$Z\"]}\n"); }

Test(values, proto_member_kept) { RT("0:{\"o\":{\"a\":1,\"__proto__\":{\"x\":\"$1\"}}}\n"); }

/* ---- row kinds ---------------------------------------------------------------- */

Test(rows, text_and_binary_rows) {
  RT("1:T5,hello2:o3,\x01\x02\x03"
     "3:U4,\x01\x00\x02\x00"
     "0:{\"t\":\"$1\",\"b\":\"$2\",\"u\":\"$3\",\"again\":\"$0:u\"}\n");
  /* a T row's length counts bytes */
  RT("1:T2,\xc3\xbc"
     "0:\"$1\"\n");
}

Test(rows, hints_errors_and_halts) {
  RT(":HL[\"/a.css\",\"style\"]\n"
     ":HC\"https://cdn.example.com\"\n"
     "0:[\"$L1\",\"$L2\"]\n"
     "1:E{\"digest\":\"boom\"}\n"
     "2:E{}\n");
}

Test(rows, streams) {
  RT("1:R\n"
     "0:{\"s\":\"$1\",\"again\":\"$0:s\"}\n"
     "1:{\"a\":1}\n"
     "1:T3,abc"
     "1:C\n");
  RT("1:r\n"
     "0:\"$1\"\n"
     "1:b3,abc"
     "1:C\n");
  RT("1:X\n"
     "0:\"$1\"\n"
     "1:\"first\"\n"
     "1:{\"second\":2}\n"
     "1:C\"ret\"\n");
  RT("1:x\n"
     "0:\"$1\"\n"
     "1:1\n"
     "1:C\n");
}

/* An iterator's end that names a row which errored: written as it came. */
Test(rows, an_iterators_end_that_errored) {
  RT("1:x\n0:\"$1\"\n1:\"a\"\n2:\"ret\"list\n1:C\"$2\"\n");
}

/* A form whose id is followed by other characters names the row of its
 * hex digits, as parseInt reads it: written as that row's form. */
Test(values, form_ids_read_as_parse_int) {
  encodes_to("1:[[\"a\",\"1\"],[\"a\",\"2\"]]\n0:\"$K1zz\"\n", 0,
             "1:[[\"a\",\"1\"],[\"a\",\"2\"]]\n0:\"$K1\"\n");
}

/* A lazy or promise of an id no row can name (parseInt's NaN, a number
 * too large, a negative one) names it again. */
Test(values, references_no_row_can_name) {
  const char *in[] = {"0:{\"x\":\"$@:R10\"}\n", "0:[\"$Lzz\",\"$@-1f\"]\n",
                      "0:[\"$L123456789abcdef01\"]\n"};
  const char *want[] = {"0:{\"x\":\"$@NaN\"}\n", "0:[\"$LNaN\",\"$@-1f\"]\n",
                        "0:[\"$L10000000000000000\"]\n"};
  for (size_t i = 0; i < sizeof in / sizeof *in; i++) encodes_to(in[i], 0, want[i]);
}

/* A development halt row for a row that arrived: written as it came. */
Test(rows, an_empty_row_after_its_chunk_settled) { RT_DEV("0:{\"x\":1}\n0:\n"); }

/* A stream started by a row with no id, then rows of ids it does not
 * name: encoded without reading outside the stream's table. */
Test(rows, stream_rows_whose_start_has_no_id) {
  encodes_to(":N1796006742907.7888\n:x\n00:{\"\n1:C$\"\"2\n", RSC_OPT_DEV,
             ":N1796006742907.7888\n:x\n0:{\"\n1:C\n");
}

/* A row that names a T row before it arrives: the text stays the T row's,
 * written the same whole or streamed. */
Test(rows, a_text_named_before_its_row) { RT("f0:\"$1\"\n1:T3,def0:\"$1\"\n"); }

/* A stream met again in an element's key slot is named by its row: a
 * path to its first place (the type slot) would wait there, and React
 * fills the tuple, not the element (the key would be lost). */
Test(rows, a_stream_again_in_an_element_slot) { RT("1:x\n0:[[\"$\",\"$1\",\"$1\",{}]]\n1:C\n"); }

/* A row naming a binary row before it arrives: the bytes stay the binary
 * row's, so that row is named (not the naming row itself), there and
 * where the bytes are met again. */
Test(rows, binary_named_before_its_row) {
  RT("7:\"$c\"\nc:o3,abc");
  encodes_to("7:\"$c\"\nc:o3,abc0:{\"x\":\"$7\"}\n", 0, "7:\"$c\"\nc:o3,abc0:{\"x\":\"$c\"}\n");
}

/* A stream met twice is named by its row both times: a path to its first
 * place reads null while its row has not come. */
Test(rows, a_stream_named_twice) {
  RT("0:{\"a\":\"$1\",\"b\":\"$1\"}\n1:X\n1:C\n");
  RT("0:[\"$1\",{\"c\":\"$1\"}]\n1:R\n1:C\n");
}

/* A C row for a chunk that is no stream names nothing: the model row
 * after it is written, not named. */
Test(rows, a_close_row_before_its_model_row) {
  RT("0:C\n0:{\"a\":1}\n");
  encodes_to(":C:{\"a\":1}\n0:[\"$\",\"div\",null,{}]\n", 0, ":C\n0:[\"$\",\"div\",null,{}]\n");
}

/* An E row's digest is read with a bare JSON.parse: a "$" in it is no
 * form, so it is written without the model's escapes or row names. */
Test(rows, error_digests_as_plain_json) {
  RT("0:\"$L1\"\n1:E{\"digest\":\"$x\"}\n");
  RT("0:[\"$L1\",\"abc\"]\n1:E{\"digest\":\"abc\"}\n");
  RT("0:\"$L1\"\n1:E{\"digest\":{\"a\":[\"$1\",2]}}\n");
}

/* A row of a negative id (React's folding of row ids, RSC_OPT_LENIENT_IDS)
 * can be named by no "$<id>" ("$-10" reads as -Infinity): its value is
 * named by the rows that hold it, its lazy as "$L-10". */
Test(rows, rows_of_negative_ids) {
  encodes_to("1:R\n :{\"a\":\"$1\"}\n0:[\"$1\",\"$L-10\"]\n1:C\n", RSC_OPT_LENIENT_IDS,
             "1:R\nfffffffffffffff0:{\"a\":\"$1\"}\n0:[\"$1\",\"$L-10\"]\n1:C\n");
}

Test(rows, development_rows_as_kept) {
  RT_DEV("0:D{\"name\":\"App\",\"env\":\"Server\",\"key\":null,\"owner\":null}\n"
         ":N1700000000000.5\n"
         "0:\"ok\"\n");
}

/* A newline tag that names no kind of row ('#', 'Q', ...) makes a model
 * row, as in React's client: written back with its tag, parsed or not. */
Test(rows, model_rows_with_other_tags) {
  RT("1:#abc\n0:\"$1\"\n");
  RT("1:#{\"a\":[1,\"$0\"]}\n0:[\"$1\",\"$L1\"]\n");
  RT("0:Q{\"a\":1}\n");
  RT_DEV("1:#\n0:\"$L1\"\n");
}

/* An element that errored, or waited on a row that never came, is a lazy
 * that did not fulfil: its row goes out as it came (not as null). */
Test(rows, lost_elements_keep_their_row) {
  RT("0:[\"$\",\"div\",null,{\"x\":\"$1\"}]\n1:E{\"digest\":\"d\"}\n");
  RT("0:{\"a\":[\"$\",\"div\",null,{\"x\":\"$1\"}],\"b\":2}\n");
  RT("0:[\"$\",\"div\",null,{},\"$1\",\"$2\",1]\n");
  /* such a row still names what it would have: a Map's entries outlined
   * before it hold a path into it */
  RT("3:[[\"k\",\"$0:first\"]]\n"
     "0:{\"first\":{\"id\":7},\"map1\":\"$Q3\",\"client\":[\"$\",\"div\",null,{\"x\":\"$0:nope\"}]}"
     "\n");
}

/* A row whose whole value is another row's (a client reference, an
 * object) names that row. */
Test(rows, a_row_naming_another_rows_value) {
  RT("1:I[\"mod/A.js\",[],\"A\",1]\n0:\"$1\"\n");
  RT("1:{\"a\":1}\n0:\"$1\"\n");
}

/* An I row whose metadata a webpack client revives to other kinds (an
 * unescaped "$" name, as rspack writes them): written as it came. */
Test(rows, import_rows_with_revived_metadata) {
  RT("1:I[\"app/D.js\",[],\"$\"]\n2:I[\"app/S.js\",[\"s\",\"s.js\"],\"$store\"]\n"
     "0:[[\"$\",\"$L1\",null,{}],[\"$\",\"$L2\",null,{}]]\n");
}

/* A reference in an element's type or key slot that waited: React fills
 * the tuple, not the element, which keeps null there; the row goes out as
 * it came. */
Test(rows, element_slots_that_waited) {
  RT("0:[\"$\",\"$2\",null,{}]\n2:\"div\"\n");
  RT("0:{\"x\":[\"$\",\"p\",\"$2\",{\"a\":1}]}\n2:\"k\"\n");
}

Test(rows, order_and_ids_kept) {
  RT("a:\"ten\"\n"
     "3:{\"x\":\"$a\"}\n"
     "0:[\"$3\",\"$La\",\"$@3\"]\n");
}

/* ---- the API --------------------------------------------------------------------- */

Test(api, needs_keep_rows) {
  rsc_decoder *d = rsc_decode("0:1\n", 4, NULL, NULL);
  ts_sink out = {0};
  cr_assert_eq(rsc_encode(d, ts_sink_write, &out), RSC_ERR_STATE);
  cr_assert_eq(out.len, 0);
  cr_assert_eq(rsc_encode(NULL, ts_sink_write, &out), RSC_ERR_STATE);
  cr_assert_eq(rsc_encode(d, NULL, &out), RSC_ERR_STATE);
  rsc_decoder_free(d);
}

Test(api, decoder_error_writes_nothing) {
  ts_sink out;
  rsc_status st = encode_with("0:1\n0:2\n", 8, 0, RSC_BUNDLER_WEBPACK, &out);
  cr_assert_eq(st, RSC_ERR_DUPLICATE_ROW);
  cr_assert_eq(out.len, 0);
}

Test(api, writer_failure_stops) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_KEEP_ROWS;
  const char in[] = "0:{\"a\":1}\n";
  rsc_decoder *d = rsc_decode(in, sizeof in - 1, &opt, NULL);
  ts_sink out = {0};
  out.fail_at = 1;
  cr_assert_eq(rsc_encode(d, ts_sink_write, &out), RSC_ERR_USER);
  /* the decoder is untouched: a second encode gives the payload */
  ts_sink again = {0};
  cr_assert_eq(rsc_encode(d, ts_sink_write, &again), RSC_OK);
  cr_assert(again.len == sizeof in - 1 && memcmp(again.p, in, again.len) == 0);
  free(again.p);
  rsc_decoder_free(d);
}

/* Without the flag nothing is kept (the log stays empty); a reset empties it. */
Test(api, reset_empties_the_log) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_KEEP_ROWS;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_eq(rsc_decoder_feed(d, "0:1\n", 4), RSC_OK);
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_assert_eq(rsc_decoder_feed(d, "0:2\n", 4), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  ts_sink out = {0};
  cr_assert_eq(rsc_encode(d, ts_sink_write, &out), RSC_OK);
  cr_assert_str_eq(out.p, "0:2\n");
  free(out.p);
  rsc_decoder_free(d);
}

/* The encoder's tables are kept in the decoder between encodes: each
 * encode starts from empty ones, also after a reset puts new values at the
 * addresses of the old (a stale identity would write a path or a "$Q"). */
Test(api, tables_kept_between_encodes) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_KEEP_ROWS;
  const char a[] = "1:[[\"k\",{\"v\":1}]]\n0:{\"m\":\"$Q1\",\"o\":{\"x\":[1]},\"p\":\"$0:o:x\","
                   "\"s\":\"$2\"}\n2:\"shared\"\n";
  const char b[] = "0:{\"m\":[[\"k\",{\"v\":1}]],\"o\":{\"x\":[1]},\"p\":[1],\"s\":\"shared\"}\n";
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_eq(rsc_decoder_feed(d, a, sizeof a - 1), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  for (int i = 0; i < 3; i++) encode_same(d, a);
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_assert_eq(rsc_decoder_feed(d, b, sizeof b - 1), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  for (int i = 0; i < 2; i++) encode_same(d, b);
  /* a payload with more rows than the tables were sized for */
  char big[8192];
  size_t n = 0;
  for (int i = 0; i < 300; i++) n += (size_t)sprintf(big + n, "%x:{\"i\":%d}\n", i, i);
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_assert_eq(rsc_decoder_feed(d, big, n), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  encode_same(d, big);
  rsc_decoder_free(d);
}

/* ---- the string writer (src/textout.c) ------------------------------------------------- */

#include "textout.h"

/* A JSON string as JSON.stringify writes it, a byte at a time. */
static size_t json_string_ref(char *o, const char *s, size_t n) {
  size_t k = 0;
  o[k++] = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      o[k++] = '\\';
      o[k++] = (char)c;
    } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
      o[k++] = '\\';
      o[k++] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
    } else if (c < 0x20) {
      k += (size_t)sprintf(o + k, "\\u%04x", c);
    } else if (c == 0xED && i + 2 < n && ((unsigned char)s[i + 1] & 0xE0) == 0xA0) {
      unsigned cp =
          0xD000u | (((unsigned char)s[i + 1] & 0x3Fu) << 6) | ((unsigned char)s[i + 2] & 0x3Fu);
      k += (size_t)sprintf(o + k, "\\u%04x", cp);
      i += 2;
    } else {
      o[k++] = (char)c;
    }
  }
  o[k++] = '"';
  return k;
}

/* Strings of every length up to 70 with one byte that needs an escape (or
 * one that looks close but needs none) at every place, each in a block of
 * exactly its length (so ASan sees a read past it), into a growing text
 * and a writer's: as the byte-at-a-time writer writes them. */
Test(strings, every_length_and_place_of_an_escape) {
  static const char *const odd[] = {"\"",           "\\",       "\n", "\x01",
                                    "\x1f",         "\x7f",     " ",  "\xed\xa0\x80",
                                    "\xed\x9f\xbf", "\xc3\xa9", "!",  "#"};
  char want[1024];
  for (size_t n = 0; n <= 70; n++) {
    for (size_t o = 0; o < sizeof odd / sizeof *odd; o++) {
      size_t on = strlen(odd[o]);
      for (size_t at = 0; at + on <= n || (n == 0 && at == 0); at++) {
        char *s = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) s[i] = (char)('a' + (i * 7 + o) % 26);
        if (n) memcpy(s + at, odd[o], on);
        size_t wn = json_string_ref(want, s, n);
        /* a growing text, empty and with room */
        for (int room = 0; room < 2; room++) {
          rsc_text grow;
          memset(&grow, 0, sizeof grow);
          if (room) {
            rsc__text_put(&grow, want, 200);
            grow.len = 0;
          }
          rsc__text_json_string(&grow, s, n);
          cr_assert_eq(grow.len, wn, "length %zu, odd %zu at %zu", n, o, at);
          cr_assert(memcmp(grow.p, want, wn) == 0, "length %zu, odd %zu at %zu", n, o, at);
          cr_assert_eq(grow.p[grow.len], 0);
          free(grow.p);
        }
        /* a writer's piece, empty and near its end */
        for (int end = 0; end < 2; end++) {
          ts_sink out = {0};
          rsc_text w;
          cr_assert(rsc__text_to_writer(&w, ts_sink_write, &out));
          w.len = end ? RSC_TEXT_PIECE - 3 - (n + at) % 7 : 0;
          size_t before = w.len;
          rsc__text_json_string(&w, s, n);
          rsc__text_flush(&w);
          cr_assert_eq(out.len, before + wn);
          cr_assert(memcmp(out.p + before, want, wn) == 0, "writer: length %zu, odd %zu at %zu", n,
                    o, at);
          free(w.p);
          free(out.p);
        }
        free(s);
        if (!n) break;
      }
    }
  }
}

/* ---- every React-written fixture ------------------------------------------------------ */

typedef struct known {
  char *path;
  bool seen;
} known;

static known *read_known(size_t *n) {
  size_t len;
  char *text = ts_read(KNOWN_LIST, &len);
  cr_assert_not_null(text, "missing %s", KNOWN_LIST);
  known *k = calloc(len / 2 + 1, sizeof *k);
  size_t count = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || line[0] == 0) continue;
    char *sp = strchr(line, ' ');
    cr_assert_not_null(sp, "encode-known.txt: no reason on: %s", line);
    k[count++].path = strndup(line, (size_t)(sp - line));
  }
  free(text);
  *n = count;
  return k;
}

static known *find_known(known *k, size_t n, const char *rel) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(k[i].path, rel) == 0) return &k[i];
  return NULL;
}

static rsc_bundler bundler_of(const char *rel) {
  if (strstr(rel, "bundlers/parcel/")) return RSC_BUNDLER_PARCEL;
  if (strstr(rel, "bundlers/turbopack/") || strstr(rel, "next-turbopack"))
    return RSC_BUNDLER_TURBOPACK;
  if (strstr(rel, "bundlers/rspack/")) return RSC_BUNDLER_RSPACK;
  return RSC_BUNDLER_WEBPACK;
}

Test(fixtures, every_server_written_payload_round_trips, .timeout = 600) {
  static const char *const patterns[] = {
      "react/*/prod/*.rsc",     "react/*/dev/*.rsc", "bundlers/*/*/prod/*.rsc",
      "bundlers/*/*/dev/*.rsc", "html/next-*.rsc",
  };
  size_t nknown;
  known *k = read_known(&nknown);
  size_t total = 0, exact = 0, unexpected = 0, fixed = 0;
  for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/%s", RSC_FIXTURES, patterns[p]);
    glob_t g;
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no fixtures at %s", pat);
    size_t ptotal = 0, pexact = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
      const char *path = g.gl_pathv[i];
      const char *rel = path + strlen(RSC_FIXTURES) + 1;
      size_t len;
      char *in = ts_read(path, &len);
      cr_assert_not_null(in);
      uint32_t flags = strstr(rel, "/dev/") ? RSC_OPT_DEV : 0;
      ts_sink out;
      rsc_status st = encode_with(in, len, flags, bundler_of(rel), &out);
      bool same = st == RSC_OK && out.len == len && memcmp(out.p, in, len) == 0;
      known *kn = find_known(k, nknown, rel);
      if (kn) kn->seen = true;
      ptotal++;
      if (same) pexact++;
      if (!same && !kn) {
        size_t at = 0;
        while (at < len && at < out.len && in[at] == out.p[at]) at++;
        cr_log_error("%s: differs at byte %zu (status %s)", rel, at, rsc_status_name(st));
        unexpected++;
      } else if (same && kn) {
        cr_log_error("%s: now exact: take it out of tests/encode-known.txt", rel);
        fixed++;
      }
      free(out.p);
      free(in);
    }
    fprintf(stderr, "encode: %-26s exact %zu / %zu\n", patterns[p], pexact, ptotal);
    total += ptotal;
    exact += pexact;
    globfree(&g);
  }
  fprintf(stderr, "encode: all exact %zu / %zu\n", exact, total);
  for (size_t i = 0; i < nknown; i++) {
    cr_expect(k[i].seen, "tests/encode-known.txt lists %s, which is no fixture", k[i].path);
    free(k[i].path);
  }
  free(k);
  cr_expect_eq(unexpected, 0, "%zu fixtures differ that tests/encode-known.txt does not list",
               unexpected);
  cr_expect_eq(fixed, 0, "%zu fixtures listed in tests/encode-known.txt are now exact", fixed);
}

/* ---- rsc_encode_ready: rows written as they settle --------------------------- */

/* How a payload is cut into feeds. */
enum split { SPLIT_WHOLE, SPLIT_BYTES, SPLIT_LINES, SPLIT_SMALL, SPLIT_LARGE };

/* The length of the feed at in[at..len). */
static size_t piece(enum split how, const char *in, size_t at, size_t len, unsigned *seed) {
  size_t left = len - at, n;
  switch (how) {
  case SPLIT_WHOLE: return left;
  case SPLIT_BYTES: return 1;
  case SPLIT_LINES: {
    const char *nl = memchr(in + at, '\n', left);
    return nl ? (size_t)(nl - (in + at)) + 1 : left;
  }
  case SPLIT_SMALL: n = 1 + rand_r(seed) % 23; break;
  default: n = 1 + rand_r(seed) % 3000; break;
  }
  return n < left ? n : left;
}

typedef struct streamed {
  ts_sink out;
  size_t first_at; /* bytes fed when the first byte came out (len + 1: at finish) */
  rsc_status st;
} streamed;

/* Feeds in[0..len) split as how says, calling rsc_encode_ready after each
 * feed and once after finish; *dp (when not NULL) gets the decoder. */
static streamed stream_encode(const char *in, size_t len, uint32_t flags, rsc_bundler bundler,
                              enum split how, unsigned seed, rsc_decoder **dp) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags | RSC_OPT_KEEP_ROWS;
  opt.bundler = bundler;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_not_null(d);
  streamed s;
  memset(&s, 0, sizeof s);
  s.first_at = len + 1;
  size_t at = 0;
  while (at < len && s.st == RSC_OK) {
    size_t n = piece(how, in, at, len, &seed);
    if (rsc_decoder_feed(d, in + at, n) != RSC_OK) break;
    at += n;
    s.st = rsc_encode_ready(d, ts_sink_write, &s.out);
    if (s.out.len && s.first_at > len) s.first_at = at;
  }
  if (s.st == RSC_OK) {
    rsc_decoder_finish(d);
    s.st = rsc_encode_ready(d, ts_sink_write, &s.out);
  }
  if (dp) *dp = d;
  else rsc_decoder_free(d);
  return s;
}

/* The text of a payload streamed, as one string (writes into out). */
static void stream_same(const char *in, enum split how, const char *want, size_t *first_at) {
  streamed s = stream_encode(in, strlen(in), 0, RSC_BUNDLER_WEBPACK, how, 1, NULL);
  cr_assert_eq(s.st, RSC_OK, "%s", rsc_status_name(s.st));
  cr_expect_str_eq(s.out.p ? s.out.p : "", want);
  if (first_at) *first_at = s.first_at;
  free(s.out.p);
}

/* Feeds the rows one at a time and checks what each call writes. */
static void stream_steps(const char *const *rows, const char *const *want, size_t n) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_KEEP_ROWS;
  rsc_decoder *d = rsc_decoder_new(&opt);
  for (size_t i = 0; i <= n; i++) {
    if (i < n) cr_assert_eq(rsc_decoder_feed(d, rows[i], strlen(rows[i])), RSC_OK);
    else cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
    ts_sink out = {0};
    cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &out), RSC_OK);
    cr_expect_str_eq(out.p ? out.p : "", want[i], "after %s", i < n ? rows[i] : "finish");
    free(out.p);
  }
  rsc_decoder_free(d);
}

Test(stream, rows_go_out_as_they_settle) {
  /* an element row, then an I row, then the model row its lazy names */
  const char *rows[] = {"0:[\"$\",\"div\",null,{\"children\":\"$L1\"}]\n", "2:I[\"m\",[],\"C\"]\n",
                        "1:[\"$\",\"$2\",null,{}]\n"};
  const char *want[] = {rows[0], rows[1], rows[2], ""};
  stream_steps(rows, want, 3);
}

Test(stream, a_pending_reference_holds_the_rows_after_it) {
  /* row 0 waits for row 1; row 2 is ready but goes out after row 0 */
  const char *rows[] = {"0:{\"a\":\"$1\"}\n", "2:\"later\"\n", "1:\"x\"\n"};
  const char *want[] = {"", "", "0:{\"a\":\"$1\"}\n2:\"later\"\n1:\"x\"\n", ""};
  stream_steps(rows, want, 3);
}

Test(stream, a_blocked_element_holds_its_row) {
  /* the element inside row 0 waits for row 1 (the row's chunk settles
   * around a lazy in its place) */
  const char *rows[] = {"0:{\"e\":[\"$\",\"div\",null,{\"x\":\"$1\"}]}\n", "1:\"y\"\n"};
  const char *want[] = {"", "0:{\"e\":[\"$\",\"div\",null,{\"x\":\"$1\"}]}\n1:\"y\"\n", ""};
  stream_steps(rows, want, 2);
}

Test(stream, outlined_entries_wait_for_the_row_that_names_them) {
  /* row 1 may be a Map's entries: it waits; row 0 names it, both go out,
   * made as rsc_encode makes them (the shared object a path into row 1) */
  const char *rows[] = {"1:[[\"k\",{\"v\":1}]]\n", "0:{\"m\":\"$Q1\",\"p\":\"$1:0:1\"}\n"};
  const char *want[] = {"", "1:[[\"k\",{\"v\":1}]]\n0:{\"m\":\"$Q1\",\"p\":\"$1:0:1\"}\n", ""};
  stream_steps(rows, want, 2);
}

Test(stream, an_array_row_goes_out_once_a_later_row_shows_it_is_no_form) {
  const char *rows[] = {"0:[1,\"$L1\"]\n", "2:[3]\n", "1:\"s\"\n"};
  const char *want[] = {"", "", "0:[1,\"$L1\"]\n2:[3]\n1:\"s\"\n", ""};
  stream_steps(rows, want, 3);
  /* and at the end when no such row comes */
  const char *rows2[] = {"0:[1,2]\n"};
  const char *want2[] = {"", "0:[1,2]\n"};
  stream_steps(rows2, want2, 1);
}

/* A stream's item, which the stream drops when the payload ends before
 * the stream's end, is written as it came, the same streamed (made while
 * the item was held) and whole (made after): a text that is not UTF-8, a
 * JSON row not as the writer would spell it. */
Test(stream, a_dropped_item_as_it_came) {
  const char in[] = "0:\"$1\"\n1:R\n1:T3,a\xd1"
                    "b";
  ts_sink whole;
  cr_assert_eq(encode_with(in, sizeof in - 1, RSC_OPT_ALLOW_PARTIAL, RSC_BUNDLER_WEBPACK, &whole),
               RSC_OK);
  cr_expect_str_eq(whole.p, in);
  streamed s = stream_encode(in, sizeof in - 1, RSC_OPT_ALLOW_PARTIAL, RSC_BUNDLER_WEBPACK,
                             SPLIT_LINES, 1, NULL);
  cr_assert_eq(s.st, RSC_OK);
  cr_expect_str_eq(s.out.p, in);
  free(whole.p);
  free(s.out.p);
  /* a model row's item too: the same bytes whole and streamed, and the
   * entries row it names still written */
  const char *items[] = {"1:\"$0\"\n0:R\n0:{\"a\": 1.0}\n",
                         "2:\"$0\"\n0:R\n1:[[\"k\",1]]\n0:{\"m\":\"$Q1\"}\n"};
  for (size_t i = 0; i < 2; i++) {
    cr_assert_eq(encode_with(items[i], strlen(items[i]), 0, RSC_BUNDLER_WEBPACK, &whole), RSC_OK);
    cr_expect_str_eq(whole.p, items[i]);
    s = stream_encode(items[i], strlen(items[i]), 0, RSC_BUNDLER_WEBPACK, SPLIT_BYTES, 1, NULL);
    cr_assert_eq(s.st, RSC_OK);
    cr_expect_str_eq(s.out.p, items[i]);
    free(whole.p);
    free(s.out.p);
  }
  /* a 'b' row fed a byte at a time (an item each) of a stream that is no
   * byte stream: the whole row, streamed as whole */
  const char bytes[] = "0:\"$1\"\n1:R\n1:b6,belo\x18"
                       "b1:C\n";
  for (int how = SPLIT_WHOLE; how <= SPLIT_SMALL; how++) {
    s = stream_encode(bytes, sizeof bytes - 1, 0, RSC_BUNDLER_WEBPACK, (enum split)how, 1, NULL);
    cr_assert_eq(s.st, RSC_OK);
    cr_expect_str_eq(s.out.p, bytes, "split %d", how);
    free(s.out.p);
  }
  /* a 'b' row for a chunk that is no stream's, named by a row before it
   * and cut: that row waits until the 'b' row is noted, then names it */
  const char cut[] = ":\"$1\"\n1:b6,\n";
  cr_assert_eq(encode_with(cut, sizeof cut - 1, RSC_OPT_ALLOW_PARTIAL, RSC_BUNDLER_WEBPACK, &whole),
               RSC_OK);
  cr_expect_str_eq(whole.p, ":\"$1\"\n1:b1,\n");
  s = stream_encode(cut, sizeof cut - 1, RSC_OPT_ALLOW_PARTIAL, RSC_BUNDLER_WEBPACK, SPLIT_BYTES, 1,
                    NULL);
  cr_assert_eq(s.st, RSC_OK);
  cr_expect_str_eq(s.out.p, whole.p);
  free(whole.p);
  free(s.out.p);
  /* a stream that closes keeps the item: as it came too */
  RT("0:\"$1\"\n1:R\n1:T3,a\xd1"
     "b1:C\n");
}

Test(stream, splits_change_nothing) {
  const char in[] =
      ":HL[\"/a.css\",\"style\"]\n1:I[\"m\",[],\"C\"]\n0:[\"$\",\"$1\",null,{\"t\":\"$2\","
      "\"d\":\"$D2020-01-01T00:00:00.000Z\",\"l\":\"$L3\"}]\n2:T5,hello3:[\"$\",\"p\","
      "null,{\"children\":\"$$x\"}]\n4:E{\"digest\":\"d\"}\n";
  for (int how = SPLIT_WHOLE; how <= SPLIT_LARGE; how++) {
    size_t first = 0;
    stream_same(in, (enum split)how, in, &first);
    if (how == SPLIT_BYTES) cr_expect_lt(first, sizeof in - 1, "the hint goes out before the end");
  }
}

Test(stream, api_errors) {
  rsc_decoder *d = rsc_decoder_new(NULL);
  ts_sink out = {0};
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &out), RSC_ERR_STATE); /* no RSC_OPT_KEEP_ROWS */
  cr_assert_eq(rsc_encode_ready(NULL, ts_sink_write, &out), RSC_ERR_STATE);
  rsc_decoder_free(d);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_KEEP_ROWS;
  d = rsc_decoder_new(&opt);
  cr_assert_eq(rsc_encode_ready(d, NULL, &out), RSC_ERR_STATE);
  /* the writer fails: sticky, nothing more written */
  cr_assert_eq(rsc_decoder_feed(d, "0:1\n", 4), RSC_OK);
  out.fail_at = 1;
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &out), RSC_ERR_USER);
  out.fail_at = 0;
  cr_assert_eq(rsc_decoder_feed(d, "1:2\n", 4), RSC_OK);
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &out), RSC_ERR_USER);
  cr_assert_eq(out.len, 0);
  /* rsc_encode keeps its own state */
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_assert_eq(rsc_encode(d, ts_sink_write, &out), RSC_OK);
  cr_assert_str_eq(out.p, "0:1\n1:2\n");
  free(out.p);
  /* a reset drops the streaming state */
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_assert_eq(rsc_decoder_feed(d, "0:3\n", 4), RSC_OK);
  ts_sink again = {0};
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &again), RSC_OK);
  cr_assert_str_eq(again.p, "0:3\n");
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &again), RSC_OK);
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &again), RSC_OK); /* nothing more */
  cr_assert_str_eq(again.p, "0:3\n");
  free(again.p);
  /* a decoder error: nothing written */
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  rsc_decoder_feed(d, "0:1\n0:2\n", 8);
  ts_sink none = {0};
  cr_assert_eq(rsc_encode_ready(d, ts_sink_write, &none), RSC_ERR_DUPLICATE_ROW);
  cr_assert_eq(none.len, 0);
  rsc_decoder_free(d);
}

/* Every server-written fixture streamed in several split patterns: the
 * concatenated output is rsc_encode's (on the same decoder and on a fresh
 * one), so the input itself for the exact ones; and rows come out before
 * the end of the input. */
Test(fixtures, every_server_written_payload_streams, .timeout = 900) {
  static const char *const patterns[] = {
      "react/*/prod/*.rsc",     "react/*/dev/*.rsc", "bundlers/*/*/prod/*.rsc",
      "bundlers/*/*/dev/*.rsc", "html/next-*.rsc",
  };
  size_t total = 0, early = 0, multi = 0, bad = 0;
  for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/%s", RSC_FIXTURES, patterns[p]);
    glob_t g;
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no fixtures at %s", pat);
    for (size_t i = 0; i < g.gl_pathc; i++) {
      const char *path = g.gl_pathv[i];
      const char *rel = path + strlen(RSC_FIXTURES) + 1;
      size_t len;
      char *in = ts_read(path, &len);
      cr_assert_not_null(in);
      uint32_t flags = strstr(rel, "/dev/") ? RSC_OPT_DEV : 0;
      rsc_bundler bundler = bundler_of(rel);
      ts_sink ref;
      rsc_status rst = encode_with(in, len, flags, bundler, &ref);
      cr_assert_eq(rst, RSC_OK, "%s: rsc_encode: %s", rel, rsc_status_name(rst));
      size_t rows = 0;
      for (size_t j = 0; j < len; j++) rows += in[j] == '\n';
      total++;
      multi += rows > 1;
      for (int how = SPLIT_WHOLE; how <= SPLIT_LARGE; how++) {
        if (how == SPLIT_BYTES && len > (1u << 18)) continue;
        rsc_decoder *d;
        streamed s = stream_encode(in, len, flags, bundler, (enum split)how, (unsigned)i + 7, &d);
        ts_sink same = {0};
        rsc_status est = rsc_encode(d, ts_sink_write, &same);
        bool ok = s.st == RSC_OK && est == RSC_OK && s.out.len == ref.len &&
                  memcmp(s.out.p, ref.p, ref.len) == 0 && same.len == ref.len &&
                  memcmp(same.p, ref.p, ref.len) == 0;
        if (!ok) {
          size_t at = 0;
          while (at < ref.len && at < s.out.len && ref.p[at] == s.out.p[at]) at++;
          bool vs_same = same.len == s.out.len && memcmp(same.p, s.out.p, same.len) == 0;
          cr_log_error("%s: split %d: streamed differs at byte %zu (%s, %zu of %zu bytes; "
                       "rsc_encode on the same decoder %s)",
                       rel, how, at, rsc_status_name(s.st), s.out.len, ref.len,
                       vs_same ? "agrees" : "differs");
          bad++;
        }
        if (how == SPLIT_BYTES && rows > 1 && s.first_at < len) early++;
        free(same.p);
        free(s.out.p);
        rsc_decoder_free(d);
      }
      free(ref.p);
      free(in);
    }
    globfree(&g);
  }
  fprintf(stderr,
          "encode stream: %zu fixtures, %zu of the %zu with more than one row wrote a row "
          "before their last byte\n",
          total, early, multi);
  cr_expect_eq(bad, 0, "%zu streamed encodes differ from rsc_encode", bad);
  cr_expect_gt(early, multi * 9 / 10, "rows come out before the end");
}
