/* test_errors.c - malformed framing and data (public API only).
 *
 * Every error test fills the rsc_error with garbage first and then checks
 * every field: code, offset, row id and message. Each input is decoded
 * three ways (rsc_decode whole, one byte per feed, 7 bytes per feed) and
 * must fail identically: offsets count bytes of the whole stream, wherever
 * the feed boundaries fall. The comment under an input puts a caret under
 * the byte the offset names.
 *
 * Where React's client decodes a value instead of failing (invalid UTF-8,
 * a truncated stream, CRLF around JSON, unknown tags...), the test asserts
 * the canonical dump instead, and says so. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define S(lit) lit, sizeof(lit) - 1

static rsc_decoder *decode_mode(const char *in, size_t len, uint32_t flags, int mode,
                                rsc_error *err) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  if (mode == 0) return rsc_decode(in, len, &opt, err);
  size_t piece = mode == 1 ? 1 : 7;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert(d);
  for (size_t i = 0; i < len; i += piece)
    rsc_decoder_feed(d, in + i, len - i < piece ? len - i : piece);
  rsc_decoder_finish(d);
  *err = *rsc_decoder_error(d);
  return d;
}

/* Decodes in every feed pattern and checks every field of the error. */
static void expect_error(const char *in, size_t len, uint32_t flags, rsc_status code,
                         uint64_t offset, int64_t row, const char *msg) {
  for (int mode = 0; mode < 3; mode++) {
    rsc_error e;
    memset(&e, 0xA5, sizeof e); /* garbage: every field must be written */
    rsc_decoder *d = decode_mode(in, len, flags, mode, &e);
    cr_assert(d);
    cr_expect_eq(e.code, code, "mode %d: code %d (%s), want %d", mode, e.code, e.msg ? e.msg : "",
                 code);
    cr_expect_eq(e.offset, offset, "mode %d: offset %llu, want %llu", mode,
                 (unsigned long long)e.offset, (unsigned long long)offset);
    cr_expect_eq(e.row_id, row, "mode %d: row %lld, want %lld", mode, (long long)e.row_id,
                 (long long)row);
    cr_assert(e.msg != NULL, "mode %d: an error has a message", mode);
    if (msg) cr_expect_str_eq(e.msg, msg, "mode %d", mode);
    /* Sticky: later calls give the same error and leave it unchanged. */
    cr_expect_eq(rsc_decoder_feed(d, "0:1\n", 4), code);
    cr_expect_eq(rsc_decoder_finish(d), code);
    const rsc_error *again = rsc_decoder_error(d);
    cr_expect_eq(again->code, code);
    cr_expect_eq(again->offset, offset);
    cr_expect(rsc_dump(d, 0, NULL) == NULL, "a failed decoder has no dump");
    rsc_decoder_free(d);
  }
}

/* Decodes in every feed pattern: no error, and this canonical dump. */
static void expect_dump(const char *in, size_t len, uint32_t flags, const char *want) {
  for (int mode = 0; mode < 3; mode++) {
    rsc_error e;
    memset(&e, 0xA5, sizeof e);
    rsc_decoder *d = decode_mode(in, len, flags, mode, &e);
    cr_assert(d);
    cr_assert_eq(e.code, RSC_OK, "mode %d: %s at %llu", mode, e.msg ? e.msg : "?",
                 (unsigned long long)e.offset);
    cr_expect_eq(e.offset, 0);
    cr_expect_eq(e.row_id, -1);
    cr_expect_null(e.msg);
    char *dump = ts_dump(d);
    cr_assert(dump, "mode %d: no dump", mode);
    const char *why = "";
    cr_expect(ts_json_equal(dump, strlen(dump), want, strlen(want), &why),
              "mode %d: %s\n got: %s\nwant: %s", mode, why, dump, want);
    rsc_free(dump);
    rsc_decoder_free(d);
  }
}

#define CLOSED "{\"rejected\":{\"$\":\"Error\",\"message\":\"Connection closed.\"}}"

/* ---- row ids ------------------------------------------------------------- */

Test(errors, uppercase_id) {
  expect_error(S("A:1\n"), 0, RSC_ERR_BAD_ID, 0, -1, "row id has an uppercase hex digit");
  /*            ^ */
  expect_error(S("0:1\n1F:2\n"), 0, RSC_ERR_BAD_ID, 5, -1, "row id has an uppercase hex digit");
  /*                 ^ */
}

Test(errors, non_hex_id) {
  expect_error(S("g:1\n"), 0, RSC_ERR_BAD_ID, 0, -1, "row id is not lowercase hex");
  expect_error(S("0x1:1\n"), 0, RSC_ERR_BAD_ID, 1, -1, "row id is not lowercase hex");
  /*               ^ */
  expect_error(S("0:1\n -1:2\n"), 0, RSC_ERR_BAD_ID, 4, -1, NULL);
  /*               ^ */
}

Test(errors, lenient_ids_copy_react) {
  /* With RSC_OPT_LENIENT_IDS React's formula maps 'A' (0x41) to 17. */
  expect_dump(S("A:\"x\"\n0:\"$11\"\n"), RSC_OPT_LENIENT_IDS, "{\"ok\":\"x\"}");
}

Test(errors, id_of_2_31_and_more) {
  expect_error(S("80000000:1\n"), 0, RSC_ERR_BAD_ID, 7, -1, "row id is 2^31 or more");
  /*                     ^ the digit that makes it 2^31 */
  expect_error(S("100000000:1\n"), 0, RSC_ERR_BAD_ID, 8, -1, "row id is 2^31 or more");
  expect_error(S("0:1\nffffffffffffffffffff:1\n"), 0, RSC_ERR_BAD_ID, 11, -1, NULL);
  /*                      ^ (offset 4 + 7) */
  /* 2^31 - 1 is the largest id; leading zeros do not count. */
  expect_dump(S("7fffffff:1\n0:\"$7fffffff\"\n"), 0, "{\"ok\":1}");
  expect_dump(S("000000000000000000000000001:2\n0:\"$1\"\n"), 0, "{\"ok\":2}");
}

Test(errors, duplicate_ids) {
  expect_error(S("0:1\n0:2\n"), 0, RSC_ERR_DUPLICATE_ROW, 4, 0,
               "a second row for a chunk that is not a stream");
  /*              ^ */
  expect_error(S("1:T1,a1:T1,b0:\"$1\"\n"), 0, RSC_ERR_DUPLICATE_ROW, 6, 1, NULL);
  /*                    ^ */
  expect_error(S("1:\"a\"\n1:E{}\n0:\"$1\"\n"), 0, RSC_ERR_DUPLICATE_ROW, 6, 1, NULL);
  /* React ignores a second I row for a module it already has (value). */
  expect_dump(S("1:I[\"a\",[],\"b\"]\n1:I[\"c\",[],\"d\"]\n0:\"$1\"\n"), 0,
              "{\"ok\":{\"$\":\"client_ref\",\"id\":\"a\",\"chunks\":[],\"name\":\"b\"}}");
}

/* ---- lengths -------------------------------------------------------------- */

Test(errors, hex_length_past_the_row_limit) {
  /* 0xfffffff (7 digits) is under the 256 MiB default; the 8th digit is not. */
  expect_error(S("1:Tffffffffffffffffffff,"), 0, RSC_ERR_LIMIT, 10, 1,
               "row length exceeds the row size limit");
  /*              1:Tfffffff^ */
}

Test(errors, hex_length_that_overflows_64_bits) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.limits.max_row_bytes = UINT64_MAX;
  static const char in[] = "1:T10000000000000000,";
  /*                        1:T1000000000000000^ the 17th digit */
  rsc_error e;
  memset(&e, 0xA5, sizeof e);
  rsc_decoder *d = rsc_decode(in, sizeof in - 1, &opt, &e);
  cr_assert_eq(e.code, RSC_ERR_BAD_LENGTH);
  cr_expect_eq(e.offset, 19);
  cr_expect_eq(e.row_id, 1);
  cr_expect_str_eq(e.msg, "row length overflows 64 bits");
  rsc_decoder_free(d);
  /* Leading zeros are not an overflow. */
  static const char zeros[] = "1:T000000000000000000000003,abc0:\"$1\"\n";
  memset(&e, 0xA5, sizeof e);
  d = rsc_decode(zeros, sizeof zeros - 1, &opt, &e);
  cr_expect_eq(e.code, RSC_OK);
  char *dump = ts_dump(d);
  cr_expect_str_eq(dump, "{\"ok\":\"abc\"}");
  rsc_free(dump);
  rsc_decoder_free(d);
}

Test(errors, malformed_hex_length) {
  expect_error(S("1:TA,abc"), 0, RSC_ERR_BAD_LENGTH, 3, 1, "row length is not lowercase hex");
  /*                 ^ */
  expect_error(S("0:1\n1:T3x,abc"), 0, RSC_ERR_BAD_LENGTH, 8, 1, NULL);
  /*                     ^ */
  expect_error(S("1:o-1,"), 0, RSC_ERR_BAD_LENGTH, 3, 1, NULL);
}

/* ---- truncation ------------------------------------------------------------ */

Test(errors, truncated_stream_is_a_value) {
  /* React drops a final row without its LF (or a length row cut short) and
   * rejects what never arrived when the stream closes: no decoder error. */
  expect_dump(S("0:{\"a\":1}"), 0, CLOSED);
  expect_dump(S("0:T5,ab"), 0, CLOSED);
  expect_dump(S("0:\"$1\"\n1:{\"a\""), 0, CLOSED);
  expect_dump(S("0:"), 0, CLOSED);
  expect_dump(S(""), 0, CLOSED);
  /* An allowed partial stream halts instead. */
  expect_dump(S("0:{\"a\":1}"), RSC_OPT_ALLOW_PARTIAL, "{\"halted\":true}");
  /* Only newlines: React folds LF into a row id and rejects the root at
   * close; strict ids refuse the first LF (docs/conformance.md, "Row ids
   * are strict by default"), RSC_OPT_LENIENT_IDS gives React's value. */
  expect_error(S("\n\n\n"), 0, RSC_ERR_BAD_ID, 0, -1, "row id is not lowercase hex");
  expect_dump(S("\n\n\n"), RSC_OPT_LENIENT_IDS, CLOSED);
}

/* ---- tags -------------------------------------------------------------------- */

Test(errors, unknown_tags_are_model_rows) {
  /* React: any other uppercase letter is consumed as a tag and the rest of
   * the row resolves as a model row (docs/spec/FLIGHT-PROTOCOL.md 2.1). */
  expect_dump(S("0:Z{\"a\":1}\n"), 0, "{\"ok\":{\"a\":1}}");
  expect_dump(S("0:P[1]\n"), 0, "{\"ok\":[1]}");
  /* Any other byte is not a tag: it starts the JSON, which then fails to
   * parse, and the chunk is rejected with V8's SyntaxError text. */
  expect_dump(S("0:q1\n"), 0,
              "{\"rejected\":{\"$\":\"Error\",\"message\":"
              "\"Unexpected token 'q', \\\"q1\\\" is not valid JSON\"}}");
}

Test(errors, bad_json_in_I_E_H_rows) {
  expect_error(S("1:I[\"a\",\n"), 0, RSC_ERR_BAD_ROW, 3, 1, "I row is not valid JSON");
  /*                 ^ data */
  expect_error(S("1:E{bad\n"), 0, RSC_ERR_BAD_ROW, 3, 1, "E row is not valid JSON");
  expect_error(S("0:1\n:HL{\n"), 0, RSC_ERR_BAD_ROW, 6, 0, "H row is not valid JSON");
  /*                   ^ data (the hint code) */
  expect_error(S(":H\n"), 0, RSC_ERR_BAD_ROW, 2, 0, "H row without a hint code");
}

/* A U+FEFF kept at the start of an I or E row: JSON.parse throws out of
 * React's row handler, as for any bad JSON there; at the start of an H row
 * it is React's hint code (unknown: told as 0) and the rest parses.
 * RSC_OPT_DROP_BOM drops it first, as React 19.3.1 does. */
static int last_hint_code = -1;
static char last_hint_text[8];
static int note_hint(void *ctx, const rsc_event *ev) {
  (void)ctx;
  if (ev->kind != RSC_EVENT_HINT) return 0;
  last_hint_code = (unsigned char)ev->tag;
  memset(last_hint_text, 0, sizeof last_hint_text);
  if (ev->text_len < sizeof last_hint_text) memcpy(last_hint_text, ev->text, ev->text_len);
  return 0;
}
Test(errors, byte_order_marks_in_I_E_H_rows) {
  expect_error(S("1:I\xef\xbb\xbf[\"a\",[],\"b\"]\n0:\"$1\"\n"), 0, RSC_ERR_BAD_ROW, 3, 1,
               "I row is not valid JSON");
  expect_error(S("1:E\xef\xbb\xbf{\"digest\":\"x\"}\n0:\"$1\"\n"), 0, RSC_ERR_BAD_ROW, 3, 1,
               "E row is not valid JSON");
  expect_dump(S("1:I\xef\xbb\xbf[\"a\",[],\"b\"]\n0:\"$1\"\n"), RSC_OPT_DROP_BOM,
              "{\"ok\":{\"$\":\"client_ref\",\"id\":\"a\",\"chunks\":[],\"name\":\"b\"}}");
  expect_dump(S(":H\xef\xbb\xbf[\"x\"]\n0:1\n"), 0, "{\"ok\":1}");
  for (int drop = 0; drop <= 1; drop++) {
    rsc_options opt;
    rsc_options_init(&opt);
    opt.flags = drop ? RSC_OPT_DROP_BOM : 0;
    opt.on_event = note_hint;
    static const char in[] = ":H\xef\xbb\xbf"
                             "D[\"x\"]\n0:1\n";
    last_hint_code = -1;
    rsc_error e;
    rsc_decoder *d = rsc_decode(in, sizeof in - 1, &opt, &e);
    /* kept: the code is U+FEFF and "D[..." is no JSON; dropped: a D hint */
    if (drop) {
      cr_expect_eq(e.code, RSC_OK);
      cr_expect_eq(last_hint_code, 'D');
      cr_expect_str_eq(last_hint_text, "D");
    } else {
      cr_expect_eq(e.code, RSC_ERR_BAD_ROW);
    }
    rsc_decoder_free(d);
  }
  rsc_options opt;
  rsc_options_init(&opt);
  opt.on_event = note_hint;
  last_hint_code = -1;
  rsc_decoder *d = rsc_decode(S(":H\xef\xbb\xbf[\"x\"]\n0:1\n"), &opt, NULL);
  cr_expect_eq(rsc_decoder_error(d)->code, RSC_OK);
  cr_expect_eq(last_hint_code, 0, "a code of more than a byte is told as 0");
  cr_expect_str_eq(last_hint_text, "\xef\xbb\xbf", "the code's bytes");
  rsc_decoder_free(d);
}

/* ---- values no server writes ------------------------------------------------------ */

/* A typed array row whose length is no multiple of its element size:
 * React's view drops the partial element; no server writes one. */
Test(errors, typed_arrays_of_partial_elements) {
  static const char msg[] = "typed array row length is not a multiple of its element size";
  expect_error(S("1:g9,123456789\n0:\"$1\"\n"), 0, RSC_ERR_BAD_VALUE, 0, 1, msg);
  expect_error(S("0:1\n2:S3,abc"), 0, RSC_ERR_BAD_VALUE, 4, 2, msg);
  /*              ^ the row */
  expect_error(S("0:[\"$1\",\"$2\"]\n2:L4,abcd1:L5,abcde"), 0, RSC_ERR_BAD_VALUE, 23, 1, msg);
  expect_error(S("1:m1,x0:\"$1\"\n"), 0, RSC_ERR_BAD_VALUE, 0, 1, msg);
  /* every tag: its element size */
  static const struct {
    char tag;
    int size;
  } tags[] = {{'A', 1}, {'O', 1}, {'o', 1}, {'U', 1}, {'S', 2}, {'s', 2}, {'L', 4},
              {'l', 4}, {'G', 4}, {'g', 8}, {'M', 8}, {'m', 8}, {'V', 1}};
  for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
    char in[64];
    int n = snprintf(in, sizeof in, "1:%c%x,%.*s0:\"$1\"\n", tags[i].tag, tags[i].size * 2 + 1,
                     tags[i].size * 2 + 1, "0123456789abcdefghijklmnopq");
    if (tags[i].size == 1) {
      rsc_decoder *d = ts_decode(in, (size_t)n, 0, 0);
      cr_expect_eq(rsc_decoder_error(d)->code, RSC_OK, "%c", tags[i].tag);
      rsc_decoder_free(d);
    } else {
      expect_error(in, (size_t)n, 0, RSC_ERR_BAD_VALUE, 0, 1, msg);
    }
  }
  /* React's truncation, with the flag */
  expect_dump(S("1:S3,\x01\x00\x02"
                "0:\"$1\"\n"),
              RSC_OPT_LENIENT_VALUES, "{\"ok\":{\"$\":\"Int16Array\",\"base64\":\"AQA=\"}}");
  expect_dump(S("1:S4,\x01\x00\x02\x00"
                "0:\"$1\"\n"),
              0, "{\"ok\":{\"$\":\"Int16Array\",\"base64\":\"AQACAA==\"}}");
}

/* I rows: servers write an array (React 18 an object, still accepted). */
Test(errors, I_rows_neither_array_nor_object) {
  static const char msg[] = "I row is neither an array nor an object";
  expect_error(S("1:I\"abc\"\n0:\"$1\"\n"), 0, RSC_ERR_BAD_VALUE, 0, 1, msg);
  expect_error(S("0:1\n1:I12\n"), 0, RSC_ERR_BAD_VALUE, 4, 1, msg);
  expect_error(S("0:1\n1:Inull\n"), 0, RSC_ERR_BAD_VALUE, 4, 1, msg);
  expect_error(S("0:1\n1:Itrue\n"), 0, RSC_ERR_BAD_VALUE, 4, 1, msg);
  expect_dump(S("1:I{\"id\":\"a\",\"chunks\":[],\"name\":\"b\"}\n0:\"$1\"\n"), 0,
              "{\"ok\":{\"$\":\"client_ref\",\"id\":\"a\",\"chunks\":[],\"name\":\"b\"}}");
  expect_dump(S("1:I\"abc\"\n0:\"$1\"\n"), RSC_OPT_LENIENT_VALUES,
              "{\"ok\":{\"$\":\"client_ref\",\"id\":{\"$\":\"undefined\"},"
              "\"chunks\":{\"$\":\"undefined\"},\"name\":{\"$\":\"undefined\"}}}");
}

/* Whole-value self references and circles (test_revive.c has the rest):
 * the error is the same in every feed pattern. */
Test(errors, whole_value_self_references_and_circles) {
  expect_error(S("0:\"$0\"\n"), 0, RSC_ERR_BAD_VALUE, 0, 0,
               "a row whose whole value is a reference to itself");
  expect_error(S("0:\"$1\"\n1:\"$0\"\n"), 0, RSC_ERR_BAD_VALUE, 7, 1,
               "rows whose whole values reference each other in a circle");
  expect_dump(S("0:\"$1\"\n1:\"$0\"\n"), RSC_OPT_LENIENT_VALUES, "{\"ok\":null}");
}

/* ---- line ends, NUL ------------------------------------------------------------ */

Test(errors, crlf_line_ends) {
  /* Around JSON, CR is white space (value, as React). */
  expect_dump(S("0:{\"a\":\"$1\"}\r\n1:2\r\n"), 0, "{\"ok\":{\"a\":2}}");
  /* After a length row the CR would begin the next row id: React folds it
   * into a garbage id silently; rscflight stops at it. */
  expect_error(S("1:T3,abc\r\n0:\"$1\"\n"), 0, RSC_ERR_BAD_ID, 8, -1,
               "row id is not lowercase hex");
  /*                      ^ */
}

Test(errors, nul_bytes) {
  expect_error(S("\0:1\n"), 0, RSC_ERR_BAD_ID, 0, -1, NULL);
  expect_error(S("0:1\n\0"), 0, RSC_ERR_BAD_ID, 4, -1, NULL);
  /* Inside a T row a NUL is just a character (value). */
  expect_dump(S("1:T3,a\0b0:\"$1\"\n"), 0, "{\"ok\":\"a\\u0000b\"}");
  /* Raw in a JSON string it is a control character: JSON.parse throws and
   * the chunk is rejected with V8's text (value). */
  expect_dump(S("0:\"a\0b\"\n"), 0,
              "{\"rejected\":{\"$\":\"Error\",\"message\":"
              "\"Bad control character in string literal in JSON at position 2\"}}");
}

/* ---- development rows ------------------------------------------------------------- */

static const char dev_msg[] =
    "Failed to read a RSC payload created by a development version of React on the server "
    "while using a production version on the client. Always use matching versions on the "
    "server and the client.";

Test(errors, development_rows_in_production) {
  expect_error(S("1:D{\"name\":\"x\"}\n0:1\n"), 0, RSC_ERR_DEV_ROW, 0, 1, dev_msg);
  expect_error(S("0:1\n1:J{}\n"), 0, RSC_ERR_DEV_ROW, 4, 1, dev_msg);
  expect_error(S("0:1\n:W[\"log\"]\n"), 0, RSC_ERR_DEV_ROW, 4, 0, dev_msg);
  /* A time-origin row after something was decoded the production way. */
  expect_error(S("0:1\n:N1.5\n"), 0, RSC_ERR_DEV_ROW, 4, 0, dev_msg);
  /*              ^ */
  /* Accepted with RSC_OPT_DEV, or when the stream opens with ":N". */
  expect_dump(S("1:D{\"name\":\"x\"}\n0:1\n"), RSC_OPT_DEV, "{\"ok\":1}");
  expect_dump(S(":N1.5\n1:D{\"name\":\"x\"}\n0:1\n"), 0, "{\"ok\":1}");
}

/* ---- garbage ----------------------------------------------------------------------- */

Test(errors, garbage) {
  expect_error(S("<!DOCTYPE html><html>"), 0, RSC_ERR_BAD_ID, 0, -1, "row id is not lowercase hex");
  expect_error(S("\x89PNG\r\n\x1a\n"), 0, RSC_ERR_BAD_ID, 0, -1, NULL);
  expect_error(S("{\"a\":1}\n"), 0, RSC_ERR_BAD_ID, 0, -1, NULL);
  expect_error(S("deadbeef"), 0, RSC_ERR_BAD_ID, 7, -1, "row id is 2^31 or more");
  expect_error(S("0:1\n\xff\xfe\xfd"), 0, RSC_ERR_BAD_ID, 4, -1, NULL);
  /* Hex digits with no colon: a row that never ends (value). */
  expect_dump(S("cafe"), 0, CLOSED);
}

/* ---- invalid UTF-8 ----------------------------------------------------------------- */

/* React decodes rows with TextDecoder: each maximal subpart of an invalid
 * sequence becomes one U+FFFD (WHATWG Encoding; Unicode 3.9). No error. */
Test(errors, invalid_utf8_in_json_strings) {
  expect_dump(S("0:\"a\xff"
                "b\"\n"),
              0, "{\"ok\":\"a\\ufffdb\"}");
  /* a 4-byte sequence cut after 3 bytes: one maximal subpart */
  expect_dump(S("0:\"\xf0\x9f\x98\"\n"), 0, "{\"ok\":\"\\ufffd\"}");
  /* a 3-byte sequence cut after 2 bytes */
  expect_dump(S("0:\"\xe2\x82\"\n"), 0, "{\"ok\":\"\\ufffd\"}");
  /* an encoded surrogate: ED may not be followed by A0, so 3 subparts */
  expect_dump(S("0:\"\xed\xa0\x80\"\n"), 0, "{\"ok\":\"\\ufffd\\ufffd\\ufffd\"}");
  /* overlong forms */
  expect_dump(S("0:\"\xc0\xaf\"\n"), 0, "{\"ok\":\"\\ufffd\\ufffd\"}");
  expect_dump(S("0:\"\xe0\x80\x80\"\n"), 0, "{\"ok\":\"\\ufffd\\ufffd\\ufffd\"}");
  /* past U+10FFFF, and a 5-byte lead */
  expect_dump(S("0:\"\xf4\x90\x80\x80\"\n"), 0, "{\"ok\":\"\\ufffd\\ufffd\\ufffd\\ufffd\"}");
  expect_dump(S("0:\"\xf8\x88\x80\x80\x80\"\n"), 0,
              "{\"ok\":\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"}");
  /* a lone continuation byte, and one in a key */
  expect_dump(S("0:{\"\x80\":\"x\x80y\"}\n"), 0, "{\"ok\":{\"\\ufffd\":\"x\\ufffdy\"}}");
  /* valid text next to it survives */
  expect_dump(S("0:\"\xe2\x82\xac\xff\xf0\x9f\x98\x80\"\n"), 0,
              "{\"ok\":\"\\u20ac\\ufffd\\ud83d\\ude00\"}");
}

/* Text rows are copied while they are ASCII (rsc__ascii_copy: 64 bytes a
 * step where the CPU has AVX2, then 8, then 1), and what follows the first
 * other byte is validated on its own: a valid or invalid sequence at every
 * offset across those steps' edges, with and without borrowed input. */
Test(errors, text_rows_ascii_then_other) {
#define FFFD "\xef\xbf\xbd"
  static const struct {
    const char *bytes, *json, *decoded;
  } others[] = {{"\xc3\xa9", "\\u00e9", "\xc3\xa9"},
                {"\xf0\x9f\x98\x80", "\\ud83d\\ude00", "\xf0\x9f\x98\x80"},
                {"\xff", "\\ufffd", FFFD},
                {"\xe2\x82", "\\ufffd", FFFD},
                {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd", FFFD FFFD FFFD},
                {"\x7f", "\\u007f", "\x7f"}};
#undef FFFD
  static const size_t tails[] = {0, 9, 70};
  char text[300], in[400], want[800];
  for (size_t at = 0; at <= 140; at++)
    for (size_t o = 0; o < sizeof others / sizeof others[0]; o++)
      for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
        size_t olen = strlen(others[o].bytes), n = at + olen + tails[t];
        memset(text, 'a', at);
        memcpy(text + at, others[o].bytes, olen);
        memset(text + at + olen, 'z', tails[t]);
        int len = snprintf(in, sizeof in, "1:T%zx,", n);
        memcpy(in + len, text, n);
        len += (int)n;
        len += snprintf(in + len, sizeof in - (size_t)len, "0:\"$1\"\n");
        int w = snprintf(want, sizeof want, "{\"ok\":\"%.*s%s%.*s\"}", (int)at, text,
                         others[o].json, (int)tails[t], text + at + olen);
        cr_assert(w > 0 && (size_t)w < sizeof want);
        expect_dump(in, (size_t)len, 0, want);
        expect_dump(in, (size_t)len, RSC_OPT_BORROW_INPUT, want);
        /* the string's own bytes (a dump might mend what it prints) */
        char bytes[400];
        size_t dlen = strlen(others[o].decoded), blen = at + dlen + tails[t];
        memcpy(bytes, text, at);
        memcpy(bytes + at, others[o].decoded, dlen);
        memcpy(bytes + at + dlen, text + at + olen, tails[t]);
        for (int borrow = 0; borrow < 2; borrow++) {
          rsc_options opt;
          rsc_options_init(&opt);
          opt.flags = borrow ? RSC_OPT_BORROW_INPUT : 0;
          rsc_error e;
          rsc_decoder *d = rsc_decode(in, (size_t)len, &opt, &e);
          cr_assert(d && e.code == RSC_OK);
          size_t slen = 0;
          const char *str = rsc_node_string(rsc_chunk_value(rsc_decoder_root(d)), &slen);
          cr_assert(str && slen == blen && memcmp(str, bytes, blen) == 0,
                    "at %zu, other %zu, tail %zu, borrow %d", at, o, tails[t], borrow);
          rsc_decoder_free(d);
        }
      }
}

Test(errors, invalid_utf8_outside_strings) {
  /* U+FFFD is not JSON: the chunk is rejected with V8's message (value). */
  expect_dump(S("0:[1,\xff]\n"), 0,
              "{\"rejected\":{\"$\":\"Error\",\"message\":"
              "\"Unexpected token '\xef\xbf\xbd', \\\"[1,\xef\xbf\xbd]\\\" is not valid JSON\"}}");
}

Test(errors, invalid_utf8_in_T_rows) {
  expect_dump(S("1:T3,a\xff"
                "b0:\"$1\"\n"),
              0, "{\"ok\":\"a\\ufffdb\"}");
  /* A sequence cut by the row's end is flushed at the end of the row. */
  expect_dump(S("1:T2,a\xe2"
                "0:\"$1\"\n"),
              0, "{\"ok\":\"a\\ufffd\"}");
  expect_dump(S("1:T4,\xed\xa0\x80!0:\"$1\"\n"), 0, "{\"ok\":\"\\ufffd\\ufffd\\ufffd!\"}");
  expect_dump(S("1:T3,\xe2\x82\xac"
                "0:\"$1\"\n"),
              0, "{\"ok\":\"\\u20ac\"}");
}

/* ---- byte-stream pieces: React shows network boundaries --------------------------- */

Test(errors, b_row_outside_a_byte_stream) {
  /* Fed whole, a 'b' row for a chunk that is no stream is one Uint8Array. */
  static const char in[] = "1:b3,abc0:\"$1\"\n";
  rsc_error e;
  memset(&e, 0xA5, sizeof e);
  rsc_decoder *d = decode_mode(in, sizeof in - 1, 0, 0, &e);
  cr_assert_eq(e.code, RSC_OK);
  char *dump = ts_dump(d);
  cr_expect_str_eq(dump, "{\"ok\":{\"$\":\"Uint8Array\",\"base64\":\"YWJj\"}}");
  rsc_free(dump);
  rsc_decoder_free(d);
  /* Split, its pieces are delivered as they come (docs/spec/FLIGHT-PROTOCOL.md
   * 2.5) and the second is a second row for that chunk (React throws a
   * TypeError). */
  memset(&e, 0xA5, sizeof e);
  d = decode_mode(in, sizeof in - 1, 0, 1, &e);
  cr_expect_eq(e.code, RSC_ERR_DUPLICATE_ROW);
  cr_expect_eq(e.offset, 0);
  cr_expect_eq(e.row_id, 1);
  cr_expect(e.msg != NULL);
  rsc_decoder_free(d);
}

/* A byte stream takes binary views only: React's controller.enqueue of a
 * model, text or ArrayBuffer item throws a TypeError out of the row (and
 * the rest of the network chunk is lost); here the decode fails at the row
 * that enqueues it (docs/conformance.md). */
Test(errors, byte_stream_items_must_be_binary_views) {
  expect_error(S("1:r\n0:\"$1\"\n1:{\"a\":1}\n"), 0, RSC_ERR_BAD_ROW, 11, 1, NULL);
  /*             ^ offset 11: the model row for the stream       */
  expect_error(S("1:r\n0:\"$1\"\n1:T3,abc"), 0, RSC_ERR_BAD_ROW, 11, 1, NULL);
  expect_error(S("1:r\n0:\"$1\"\n1:A2,\x05\x06"), 0, RSC_ERR_BAD_ROW, 11, 1, NULL);
  /* A blocked item fails when the row it waited for arrives (row 2). */
  expect_error(S("1:r\n0:\"$1\"\n1:\"$2\"\n2:{\"x\":1}\n"), 0, RSC_ERR_BAD_ROW, 18, 2, NULL);
  /* Typed array rows are views: their bytes join the stream's. */
  expect_dump(S("1:r\n0:\"$1\"\n1:o2,\x05\x06"
                "1:b1,\x07"
                "1:C\n"),
              0,
              "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"bytes\",\"base64\":\"BQYH\","
              "\"end\":{\"done\":{\"$\":\"undefined\"}}}}");
}

/* ---- API misuse ---------------------------------------------------------------------- */

Test(errors, feed_after_finish_and_null) {
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_assert(d);
  cr_assert_eq(rsc_decoder_feed(d, "0:1\n", 4), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_expect_eq(rsc_decoder_feed(d, "1:2\n", 4), RSC_ERR_STATE);
  const rsc_error *e = rsc_decoder_error(d);
  cr_expect_eq(e->code, RSC_ERR_STATE);
  cr_expect_eq(e->offset, 4);
  cr_expect_eq(e->row_id, -1);
  cr_expect_str_eq(e->msg, "feed after finish");
  rsc_decoder_free(d);
  cr_expect_eq(rsc_decoder_feed(NULL, "0:1\n", 4), RSC_ERR_STATE);
  cr_expect_eq(rsc_decoder_finish(NULL), RSC_ERR_STATE);
  rsc_decoder_free(NULL);
}

Test(errors, ok_clears_every_field) {
  rsc_error e;
  memset(&e, 0xA5, sizeof e);
  rsc_decoder *d = rsc_decode("0:1\n", 4, NULL, &e);
  cr_expect_eq(e.code, RSC_OK);
  cr_expect_eq(e.offset, 0);
  cr_expect_eq(e.row_id, -1);
  cr_expect_null(e.msg);
  rsc_decoder_free(d);
}

/* ---- references that try to leave their value ------------------------------------- */

#define INVALID_REF "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}"

/* A path steps into own properties of plain objects and arrays (and an
 * element's own fields) only. Nothing is inherited: "__proto__" is deleted
 * by the walk before anything can reach it, "constructor" exists only as
 * an own member, and a path never climbs out of the value it names
 * (React's traversal guards after CVE-2025-55182). Each is React's value:
 * the referencing chunk is rejected with "Invalid reference.". Both the
 * immediate path (the row came first) and the deferred one (it came later)
 * are checked. */
Test(errors, path_references_stay_inside) {
  static const struct {
    const char *target, *ref;
  } bad[] = {
      {"{\"a\":{\"b\":1}}", "$1:__proto__"},
      {"{\"__proto__\":{\"x\":1},\"a\":1}", "$1:__proto__:x"},
      {"{\"__proto__\":{\"x\":1},\"a\":1}", "$1:__proto__"},
      {"{\"a\":1}", "$1:constructor"},
      {"{\"a\":1}", "$1:constructor:prototype"},
      {"{\"a\":1}", "$1:toString"},
      {"{\"a\":1}", "$1:hasOwnProperty"},
      {"[1,2]", "$1:constructor"},
      {"[1,2]", "$1:__proto__"},
      {"[1,2]", "$1:push"},
      {"[1,2]", "$1:2"},
      {"[1,2]", "$1:-1"},
      {"[1,2]", "$1:01"},
      {"{\"a\":\"str\"}", "$1:a:length"},
      {"{\"a\":\"str\"}", "$1:a:constructor"},
      {"{\"a\":1}", "$1:a:constructor"},
      {"{\"a\":null}", "$1:a:b"},
      {"{\"a\":{}}", "$1:a:..:a"},
      {"{\"a\":{}}", "$1:"},
      {"{\"a\":{}}", "$1:a:"},
      {"[\"$\",\"div\",null,{\"x\":1}]", "$1:constructor"},
      {"[\"$\",\"div\",null,{\"x\":1}]", "$1:props:__proto__"},
      {"[\"$\",\"div\",null,{\"x\":1}]", "$1:_owner"},
      {"[\"$\",\"div\",null,{\"x\":1}]", "$1:0"},
  };
  char in[256];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int n = snprintf(in, sizeof in, "1:%s\n0:{\"v\":\"%s\"}\n", bad[i].target, bad[i].ref);
    expect_dump(in, (size_t)n, 0, INVALID_REF);
    n = snprintf(in, sizeof in, "0:{\"v\":\"%s\"}\n1:%s\n", bad[i].ref, bad[i].target);
    expect_dump(in, (size_t)n, 0, INVALID_REF);
  }
  /* What is an own property is reachable, React's value too. */
  expect_dump(S("1:{\"constructor\":5}\n0:\"$1:constructor\"\n"), 0, "{\"ok\":5}");
  expect_dump(S("1:[1,2]\n0:\"$1:length\"\n"), 0, "{\"ok\":2}");
  expect_dump(S("1:{\"a\":[7]}\n0:\"$1:a:0\"\n"), 0, "{\"ok\":7}");
  expect_dump(S("1:[\"$\",\"div\",null,{\"x\":1}]\n0:\"$1:props:x\"\n"), 0, "{\"ok\":1}");
  /* "__proto__" members are dropped from the value itself, unwalked. */
  expect_dump(S("1:{\"__proto__\":\"$2\",\"a\":1}\n0:\"$1\"\n"), 0, "{\"ok\":{\"a\":1}}");
}
