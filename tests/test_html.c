/*
 * Tests for src/html.c (Flight payloads inside HTML pages). The fixture test
 * reads fixtures/html/index.json relative to the working directory (run from
 * the repository root), or RSC_FIXTURES_DIR if defined.
 */
#include "html.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* Allocator hooks that count live blocks and bytes, check the old sizes
 * html.c passes, and fail the fail_after-th allocation or resize (1-based;
 * 0: never). */
typedef struct alloc_ctx {
  long live_blocks;
  size_t live_bytes;
  long calls;
  long fail_after;
  struct {
    void *p;
    size_t size;
  } blocks[8];
} alloc_ctx;

static size_t *block_slot(alloc_ctx *a, void *p) {
  for (size_t i = 0; i < sizeof a->blocks / sizeof a->blocks[0]; i++)
    if (a->blocks[i].p == p) {
      if (!p) a->blocks[i].size = 0;
      return &a->blocks[i].size;
    }
  cr_assert_fail("block %p not allocated here (or too many live blocks)", p);
  return NULL;
}

static void *test_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
  alloc_ctx *a = ctx;
  a->calls++;
  if (a->fail_after && a->calls >= a->fail_after) return NULL;
  if (ptr) cr_assert_eq(*block_slot(a, ptr), old_size, "realloc given a wrong old size");
  void *p = realloc(ptr, new_size);
  if (!p) return NULL;
  if (!ptr) a->live_blocks++;
  a->live_bytes += new_size;
  a->live_bytes -= ptr ? old_size : 0;
  size_t *slot = block_slot(a, ptr);
  for (size_t i = 0; i < sizeof a->blocks / sizeof a->blocks[0]; i++)
    if (&a->blocks[i].size == slot) a->blocks[i].p = p;
  *slot = new_size;
  return p;
}

static void *test_malloc(void *ctx, size_t size) { return test_realloc(ctx, NULL, 0, size); }

static void test_free(void *ctx, void *ptr) {
  alloc_ctx *a = ctx;
  if (!ptr) return;
  size_t *slot = block_slot(a, ptr);
  a->live_blocks--;
  a->live_bytes -= *slot;
  for (size_t i = 0; i < sizeof a->blocks / sizeof a->blocks[0]; i++)
    if (&a->blocks[i].size == slot) a->blocks[i].p = NULL;
  *slot = 0;
  free(ptr);
}

static rsc_alloc test_alloc(alloc_ctx *a) {
  return (rsc_alloc){.malloc = test_malloc, .realloc = test_realloc, .free = test_free, .ctx = a};
}

/* The two kinds of RSC_ERR_HTML the tests tell apart by their message: a
 * page without any Flight script, and everything else. */
#define NOT_FOUND_MSG "no Flight payload found"
enum { ERR_SYNTAX = 100, ERR_NOT_FOUND = 101 };

typedef struct result {
  int rc; /* RSC_OK, RSC_ERR_NOMEM, ERR_SYNTAX or ERR_NOT_FOUND */
  char *out;
  size_t len;
  size_t eoff;
  const char *emsg;
  rsc_html_flavor found;
} result;

static int error_kind(const rsc_error *e) {
  if (e->code != RSC_ERR_HTML) return (int)e->code;
  return strcmp(e->msg, NOT_FOUND_MSG) == 0 ? ERR_NOT_FOUND : ERR_SYNTAX;
}

static result run_n(const char *html, size_t n, rsc_html_flavor fl) {
  result r;
  alloc_ctx a = {0};
  rsc_alloc al = test_alloc(&a);
  rsc_error err;
  memset(&r, 0, sizeof r);
  memset(&err, 0xA5, sizeof err);
  /* copy into an exact-size heap buffer so ASan catches any over-read */
  char *buf = malloc(n ? n : 1);
  cr_assert_not_null(buf);
  memcpy(buf, html, n);
  rsc_status st = rsc__html_extract(buf, n, fl, &al, &r.out, &r.len, &err, &r.found);
  free(buf);
  cr_assert_eq(err.code, st);
  cr_assert_eq(err.row_id, -1);
  r.rc = st == RSC_OK ? RSC_OK : error_kind(&err);
  r.eoff = (size_t)err.offset;
  r.emsg = err.msg;
  if (st == RSC_OK) {
    cr_assert_eq(err.offset, 0);
    cr_assert_null(err.msg);
    cr_assert_not_null(r.out);
    cr_assert_eq(r.out[r.len], 0, "output must be NUL-terminated");
    cr_assert_eq(a.live_blocks, 1);
    cr_assert_eq(a.live_bytes, r.len + 1, "allocation must be exactly out_len + 1");
    char *copy = malloc(r.len + 1);
    memcpy(copy, r.out, r.len + 1);
    test_free(&a, r.out);
    r.out = copy;
  } else {
    cr_assert_null(r.out);
    cr_assert_eq(r.len, 0);
    cr_assert_not_null(r.emsg);
    cr_assert_leq(r.eoff, n);
  }
  cr_assert_eq(a.live_blocks, 0, "leaked %ld block(s)", a.live_blocks);
  cr_assert_eq(a.live_bytes, 0);
  return r;
}

static result run(const char *html, rsc_html_flavor fl) { return run_n(html, strlen(html), fl); }

static void expect_ok_n(const char *html, rsc_html_flavor fl, const char *exp, size_t explen,
                        rsc_html_flavor found) {
  result r = run(html, fl);
  cr_assert_eq(r.rc, 0, "unexpected error %d at %zu: %s\nhtml: %s", r.rc, r.eoff,
               r.emsg ? r.emsg : "", html);
  cr_assert_eq(r.found, found, "found flavor %d, expected %d", (int)r.found, (int)found);
  cr_assert_eq(r.len, explen, "payload length %zu, expected %zu: [%.*s]", r.len, explen, (int)r.len,
               r.out);
  cr_assert(memcmp(r.out, exp, explen) == 0, "payload [%.*s] expected [%.*s]", (int)r.len, r.out,
            (int)explen, exp);
  free(r.out);
}

#define EXPECT_NEXT(html, lit) expect_ok_n(html, RSC_HTML_AUTO, lit, sizeof(lit) - 1, RSC_HTML_NEXT)
#define EXPECT_RHS(html, lit)                                                                      \
  expect_ok_n(html, RSC_HTML_AUTO, lit, sizeof(lit) - 1, RSC_HTML_RSC_HTML_STREAM)

/* expects an error whose offset is where `marker` first occurs in html (+ delta) */
static void expect_err_at(const char *html, rsc_html_flavor fl, int rc, const char *marker,
                          long delta, const char *msg_part) {
  result r = run(html, fl);
  const char *m = marker ? strstr(html, marker) : html;
  cr_assert_not_null(m, "marker not in html");
  cr_assert_eq(r.rc, rc, "rc %d, expected %d (%s at %zu)\nhtml: %s", r.rc, rc, r.emsg ? r.emsg : "",
               r.eoff, html);
  cr_assert_eq(r.eoff, (size_t)((m - html) + delta), "offset %zu, expected %ld (%s)\nhtml: %s",
               r.eoff, (long)((m - html) + delta), r.emsg, html);
  if (msg_part)
    cr_assert(strstr(r.emsg, msg_part) != NULL, "message '%s' lacks '%s'", r.emsg, msg_part);
}

static void expect_err(const char *html, rsc_html_flavor fl, int rc, const char *msg_part) {
  result r = run(html, fl);
  cr_assert_eq(r.rc, rc, "rc %d, expected %d (%s at %zu)\nhtml: %s", r.rc, rc, r.emsg ? r.emsg : "",
               r.eoff, html);
  if (msg_part)
    cr_assert(strstr(r.emsg, msg_part) != NULL, "message '%s' lacks '%s'", r.emsg, msg_part);
}

#define BOOT "<script>(self.__next_f=self.__next_f||[]).push([0])</script>"
#define PUSH1(s) "<script>self.__next_f.push([1," s "])</script>"
#define RHS(s) "<script>(self.__FLIGHT_DATA||=[]).push(" s ")</script>"
#define RHS_B64(s)                                                                                 \
  "<script>(self.__FLIGHT_DATA||=[]).push(Uint8Array.from(atob(" s                                 \
  "), m => m.codePointAt(0)))</script>"

/* ------------------------------------------------------------ Next.js */

Test(next, basic_segments) {
  EXPECT_NEXT("<!DOCTYPE html><html><head>" BOOT
              "</head><body>" PUSH1("\"0:\\\"hi\\\"\\n\"") "</body></html>",
              "0:\"hi\"\n");
  EXPECT_NEXT(BOOT PUSH1("\"ab\"") PUSH1(
                  "\"cd\"") "<script>self.__next_f.push([3,\"AAEC\"])</script>" PUSH1("\"ef\""),
              "abcd\x00\x01\x02"
              "ef");
}

Test(next, bootstrap_with_form_state_in_one_script) {
  EXPECT_NEXT(
      "<script>(self.__next_f=self.__next_f||[]).push([0]);self.__next_f.push([2,[\"$h\",{\"a\":[1,"
      "-2.5e3,true,false,null,\"x\\u003c\"],\"b\":{}},[]]])</script>" PUSH1("\"x\""),
      "x");
  /* form state before the bootstrap is allowed (Next only stores it) */
  EXPECT_NEXT("<script>self.__next_f.push([2,null])</script>" BOOT PUSH1("\"y\""), "y");
}

Test(next, escapes) {
  EXPECT_NEXT(BOOT PUSH1("\"\\u003cdiv\\u003e \\u0026 \\x41\\x62 \\n\\r\\t\\b\\f\\v \\\\ \\\" \\' "
                         "\\/ \\! \\s\\u2028\\u2029\""),
              "<div> & Ab \n\r\t\b\f\v \\ \" ' / ! s\xE2\x80\xA8\xE2\x80\xA9");
  /* \0, legacy octal (sloppy-mode scripts), \8 \9, \u{...}, line continuations */
  expect_ok_n(
      BOOT PUSH1("\"\\0|\\08|\\101|\\377|\\400|\\18|\\8\\9|\\u{41}\\u{0001F600}|a\\\nb|c\\\r\nd\""),
      RSC_HTML_AUTO,
      "\0|\0"
      "8|A|\xC3\xBF|\x20"
      "0|\x01"
      "8|89|A\xF0\x9F\x98\x80|ab|cd",
      30, RSC_HTML_NEXT);
  /* single-quoted literals are JavaScript too */
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([1,'it\\'s \"q\"'])</script>", "it's \"q\"");
  /* raw UTF-8 and U+2028 inside the literal pass through */
  EXPECT_NEXT(BOOT PUSH1("\"Grüße 😀 \xE2\x80\xA8\""), "Grüße 😀 \xE2\x80\xA8");
}

Test(next, surrogate_pairs_and_lone_surrogates) {
  EXPECT_NEXT(BOOT PUSH1("\"\\ud83d\\ude00\""), "\xF0\x9F\x98\x80");
  EXPECT_NEXT(BOOT PUSH1("\"\\uD83D\\uDE00\""), "\xF0\x9F\x98\x80");
  /* \u{D83D}\u{DE00} are code units too, and pair up */
  EXPECT_NEXT(BOOT PUSH1("\"\\u{D83D}\\u{DE00}\""), "\xF0\x9F\x98\x80");
  /* TextEncoder turns every lone surrogate into U+FFFD */
  EXPECT_NEXT(BOOT PUSH1("\"a\\ud800b\""), "a\xEF\xBF\xBD"
                                           "b");
  EXPECT_NEXT(BOOT PUSH1("\"a\\udc00b\""), "a\xEF\xBF\xBD"
                                           "b");
  EXPECT_NEXT(BOOT PUSH1("\"\\ud800\""), "\xEF\xBF\xBD");
  EXPECT_NEXT(BOOT PUSH1("\"\\ud800\\ud800\\ude00\""), "\xEF\xBF\xBD\xF0\x90\x88\x80");
  EXPECT_NEXT(BOOT PUSH1("\"\\ude00\\ud83d\""), "\xEF\xBF\xBD\xEF\xBF\xBD");
  /* a pair split over two segments: each string is encoded on its own */
  EXPECT_NEXT(BOOT PUSH1("\"\\ud83d\"") PUSH1("\"\\ude00\""), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

Test(next, raw_bytes_decoded_like_a_browser) {
  /* invalid UTF-8 in the page: each maximal subpart becomes U+FFFD */
  EXPECT_NEXT(BOOT PUSH1("\"a\xFF"
                         "b\xC3(\xED\xA0\x80\xF0\x9F\x98\""),
              "a\xEF\xBF\xBD"
              "b\xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  /* a NUL byte in script data is U+FFFD */
  {
    static const char html[] = BOOT "<script>self.__next_f.push([1,\"a\0b\"])</script>";
    result r = run_n(html, sizeof html - 1, RSC_HTML_AUTO);
    cr_assert_eq(r.rc, 0);
    cr_assert_eq(r.len, 5);
    cr_assert(memcmp(r.out,
                     "a\xEF\xBF\xBD"
                     "b",
                     5) == 0);
    free(r.out);
  }
}

Test(next, t_row_across_scripts) {
  /* "1:T9,é😀ab" : 9 = 2 (é) + 4 (😀) + 3 bytes; the text continues over 3 scripts */
  EXPECT_NEXT(
      BOOT PUSH1("\"1:T9,\"")
          PUSH1("\"\\u00e9\\ud83d\\ude00\"") "<p>html between</p>" PUSH1("\"abc0:\\\"$1\\\"\\n\""),
      "1:T9,\xC3\xA9\xF0\x9F\x98\x80"
      "abc0:\"$1\"\n");
  /* and continuing in a base64 segment */
  EXPECT_NEXT(BOOT PUSH1("\"1:T4,ab\"") "<script>self.__next_f.push([3,\"/w0K\"])</script>",
              "1:T4,ab\xFF\x0D\x0A");
}

Test(next, base64_forgiving) {
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"YQ==\"])</script>", "a");
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"YQ\"])</script>", "a");
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"YWI=\"])</script>", "ab");
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\" Y W\\nJ j \"])</script>", "abc");
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"YR==\"])</script>",
              "a"); /* trailing bits ignored */
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"\"])</script>", "");
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"\\u0059\\x51\"])</script>",
              "a"); /* escapes inside */
  EXPECT_NEXT(BOOT "<script>self.__next_f.push([3,\"+/+/\"])</script>", "\xFB\xFF\xBF");
}

Test(next, whitespace_comments_and_statements) {
  EXPECT_NEXT(
      "<script>\n  ( self . __next_f = self . __next_f || [ ] ) . push ( [ 0 ] ) ;\n</script>"
      "<script> /* c */ self.__next_f // line\n .push([ 1 , \"a\" ]) ; ; </script>"
      "<script>self.__next_f.push([1,\"b\"])\nself.__next_f.push([1,\"c\"])</script>"
      "<script>;self.__next_f.push([1,\"d\"])</script>",
      "abcd");
  /* HTML-like comments of classic scripts: "<!--" to the end of the line, "-->" at a line start */
  EXPECT_NEXT(
      BOOT "<script><!--\nself.__next_f.push([1,\"a\"]) <!-- x\n  --> y\n/*\n*/ --> z\n--></script>"
           "<script>--> c\nself.__next_f.push([1,\"b\"])</script>",
      "ab");
  expect_err(BOOT "<script>self.__next_f.push([1,\"a\"]) --> x</script>", RSC_HTML_AUTO, ERR_SYNTAX,
             "unexpected text");
  expect_err(BOOT "<script>self.__next_f.push([1,\"a\"]) self.__next_f.push([1,\"b\"])</script>",
             RSC_HTML_AUTO, ERR_SYNTAX, "unexpected text");
  /* a following line that starts with '(' is a call, not a new statement */
  expect_err(
      BOOT
      "<script>self.__next_f.push([1,\"a\"])\n(self.__next_f=self.__next_f||[]).push([0])</script>",
      RSC_HTML_AUTO, ERR_SYNTAX, NULL);
}

Test(next, errors_with_offsets) {
  expect_err_at(BOOT PUSH1("\"ok\\xZ1\""), RSC_HTML_AUTO, ERR_SYNTAX, "\\xZ", 0, "\\x escape");
  expect_err_at(BOOT PUSH1("\"ok\\u12G4\""), RSC_HTML_AUTO, ERR_SYNTAX, "\\u12", 0, "\\u escape");
  expect_err_at(BOOT PUSH1("\"ok\\u{110000}\""), RSC_HTML_AUTO, ERR_SYNTAX, "\\u{", 0, "\\u{}");
  expect_err_at(BOOT PUSH1("\"ok\\u{}\""), RSC_HTML_AUTO, ERR_SYNTAX, "\\u{", 0, "\\u{}");
  expect_err_at(BOOT "<script>self.__next_f.push([1,\"abc])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "\"abc", 0, "unterminated");
  expect_err_at(BOOT "<script>self.__next_f.push([1,\"ab\nc\"])</script>", RSC_HTML_AUTO,
                ERR_SYNTAX, "\nc", 0, "line break");
  expect_err_at(BOOT "<script>self.__next_f.push([3,\"YQ=a\"])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "=a", 0, "base64");
  expect_err_at(BOOT "<script>self.__next_f.push([3,\"YW*j\"])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "*j", 0, "base64");
  expect_err_at(BOOT "<script>self.__next_f.push([3,\"YWJjZ\"])</script>", RSC_HTML_AUTO,
                ERR_SYNTAX, "\"YWJjZ", 0, "length");
  expect_err_at(BOOT "<script>self.__next_f.push([3,\"YQ=\"])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "=\"", 0, "base64");
  expect_err_at(BOOT "<script>self.__next_f.push([3,\"Y===\"])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "===", 0, "base64");
  expect_err_at(BOOT "<script>self.__next_f.push([3,\"\\u0100AAA\"])</script>", RSC_HTML_AUTO,
                ERR_SYNTAX, "\\u0100", 0, "base64");
  /* order rules of app-index.js */
  expect_err_at("<p>x</p>" PUSH1("\"a\"") BOOT, RSC_HTML_AUTO, ERR_SYNTAX, "self.__next_f.push([1",
                0, "before the bootstrap");
  expect_err_at(BOOT PUSH1("\"a\"") "<script> (self.__next_f=self.__next_f||[]).push([0])</script>",
                RSC_HTML_AUTO, ERR_SYNTAX, " (self", 1, "second");
  /* shapes that are not the framework's */
  expect_err_at(BOOT "<script>self.__next_f.push([4,\"a\"])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "4,", 0, "unsupported");
  expect_err_at(BOOT "<script>self.__next_f.push([1.0,\"a\"])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "1.0", 0, "unsupported");
  expect_err_at(BOOT "<script>self.__next_f.push([1,\"a\",2])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                ",2]", 0, "unexpected text");
  expect_err_at(BOOT "<script>self.__next_f.push([1,\"a\"]);alert(1)</script>", RSC_HTML_AUTO,
                ERR_SYNTAX, "alert", 0, "unexpected text");
  expect_err_at(BOOT "<script>self.__next_f.push([1,x])</script>", RSC_HTML_AUTO, ERR_SYNTAX, "x])",
                0, "string literal");
  expect_err_at(BOOT "<script>self.__next_f = []</script>", RSC_HTML_AUTO, ERR_SYNTAX, " = []", 1,
                NULL);
  expect_err_at(BOOT "<script>self.__next_f.push([2,{\"a\" 1}])</script>", RSC_HTML_AUTO,
                ERR_SYNTAX, "1}", 0, NULL);
  expect_err_at(BOOT "<script>self.__next_f.push([2,01])</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "1])", 0, NULL);
  /* a syntax error anywhere in a script: none of it runs, and it is an error */
  expect_err_at(BOOT
                "<script>self.__next_f.push([1,\"a\"]);self.__next_f.push([1,\"\\x\"])</script>",
                RSC_HTML_AUTO, ERR_SYNTAX, "\\x\"", 0, NULL);
}

Test(next, bootstrap_only_is_an_empty_payload) {
  EXPECT_NEXT(BOOT, "");
  /* form state alone is no payload */
  expect_err("<script>self.__next_f.push([2,null])</script>", RSC_HTML_AUTO, ERR_NOT_FOUND,
             "no Flight payload found");
}

/* ---------------------------------------------------- rsc-html-stream */

Test(rsc_html_stream, text_and_binary) {
  EXPECT_RHS(RHS("\"0:\\\"a\\\"\\n\"") RHS_B64("\"/wAB\"") RHS("\"z\""), "0:\"a\"\n\xFF\x00\x01z");
  /* exactly what rsc-html-stream writes for "</script>" and "<!--" */
  EXPECT_RHS(RHS("\"</\\script><\\!-- </\\SCRIPT \\u2028\""),
             "</script><!-- </SCRIPT \xE2\x80\xA8");
  /* tolerant white space; the arrow parameter may have any name */
  EXPECT_RHS("<script>( self.__FLIGHT_DATA ||= [ ] ) . push ( Uint8Array . from ( atob ( \"YQ==\" "
             ") ,x=>x.codePointAt( 0 ) ) ) ;</script>",
             "a");
  expect_ok_n(RHS("\"a\"") RHS("\"b\""), RSC_HTML_RSC_HTML_STREAM, "ab", 2,
              RSC_HTML_RSC_HTML_STREAM);
  /* flavor filter: a Next page read as rsc-html-stream has no payload, and vice versa */
  expect_err(BOOT PUSH1("\"a\""), RSC_HTML_RSC_HTML_STREAM, ERR_NOT_FOUND,
             "no Flight payload found");
  expect_err(RHS("\"a\""), RSC_HTML_NEXT, ERR_NOT_FOUND, "no Flight payload found");
  /* ... and with an explicit flavor the other framework's scripts are just scripts */
  expect_ok_n(RHS("\"a\"") BOOT PUSH1("\"n\""), RSC_HTML_NEXT, "n", 1, RSC_HTML_NEXT);
}

Test(rsc_html_stream, errors) {
  expect_err_at(RHS_B64("\"/w!B\""), RSC_HTML_AUTO, ERR_SYNTAX, "!B", 0, "base64");
  expect_err_at("<script>(self.__FLIGHT_DATA||=[]).push(Uint8Array.from(atob(\"YQ==\"), m => "
                "n.codePointAt(0)))</script>",
                RSC_HTML_AUTO, ERR_SYNTAX, "n.code", 0, NULL);
  expect_err_at("<script>(self.__FLIGHT_DATA||[]).push(\"a\")</script>", RSC_HTML_AUTO, ERR_SYNTAX,
                "||[]", 0, NULL);
  expect_err_at(RHS("\"a\"") BOOT, RSC_HTML_AUTO, ERR_SYNTAX, "(self.__next_f", 0, "mixes");
  expect_err_at("<script>(self.__FLIGHT_DATA||=[]).push(\"a\");self.__next_f.push([0])</script>",
                RSC_HTML_AUTO, ERR_SYNTAX, "self.__next_f", 0, "mixes");
}

/* ------------------------------------------------------------- look-alikes */

#define LOOK RHS("\"BAD\"")
#define GOOD RHS("\"ok\"")

Test(traps, comments) {
  EXPECT_RHS("<!-- " LOOK " -->" GOOD, "ok");
  EXPECT_RHS("<!-- a -- b --!>" GOOD, "ok"); /* --!> ends a comment */
  EXPECT_RHS("<!-->" GOOD, "ok");            /* abrupt */
  EXPECT_RHS("<!--->" GOOD, "ok");           /* abrupt */
  EXPECT_RHS("<!---->" GOOD, "ok");
  EXPECT_RHS("<!-- <!-- nested " LOOK " -->" GOOD, "ok");
  EXPECT_RHS("<!-- x --->" GOOD "<!-- y ---->", "ok");
  EXPECT_RHS("<!-- --!x " LOOK " -->" GOOD, "ok");
  EXPECT_RHS("<!--!> " LOOK " -->" GOOD, "ok"); /* "<!--!>" does not close */
  EXPECT_RHS("<!-- x <!--!> " GOOD, "ok");      /* but "<!--!>" inside one does */
  expect_err("<!-- " LOOK, RSC_HTML_AUTO, ERR_NOT_FOUND, "no Flight payload found"); /* to EOF */
}

Test(traps, bogus_comments_and_doctype) {
  EXPECT_RHS("<!DOCTYPE html PUBLIC \"-//x\" \"y\">" GOOD, "ok");
  /* a bogus comment ends at the first '>', here the one of <script> */
  EXPECT_RHS("<!x " LOOK GOOD, "ok");
  EXPECT_RHS("<?php " LOOK GOOD, "ok");
  EXPECT_RHS("<![CDATA[ " LOOK " ]]>" GOOD, "ok");
  EXPECT_RHS("</ " LOOK GOOD, "ok"); /* "</" + non-letter: bogus comment */
  EXPECT_RHS("</>" GOOD, "ok");
  EXPECT_RHS("a < b <3 " GOOD, "ok");
}

Test(traps, rcdata_and_rawtext) {
  static const char *const names[] = {"textarea", "title",   "style",    "xmp",
                                      "iframe",   "noembed", "noframes", "noscript"};
  size_t i, k;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    char html[1024], up[16];
    const char *nm = names[i];
    for (k = 0; nm[k]; k++) up[k] = (char)(nm[k] - 32);
    up[k] = 0;
    snprintf(html, sizeof html, "<%s>" LOOK "</%s>" GOOD, nm, nm);
    EXPECT_RHS(html, "ok");
    /* '>' in a quoted attribute; look-alike end tags; end tag with attributes */
    snprintf(html, sizeof html, "<%s a='>" LOOK "'></%sx>" LOOK "</%s" LOOK "</%s  x=\">\">" GOOD,
             nm, nm, up, nm);
    EXPECT_RHS(html, "ok");
    snprintf(html, sizeof html, "<%s>" LOOK "</%s/>" GOOD, up, up);
    EXPECT_RHS(html, "ok");
    /* unclosed: the rest of the page is text */
    snprintf(html, sizeof html, "<%s>" LOOK, nm);
    expect_err(html, RSC_HTML_AUTO, ERR_NOT_FOUND, NULL);
  }
  expect_err("<plaintext>" GOOD "</plaintext>" GOOD, RSC_HTML_AUTO, ERR_NOT_FOUND, NULL);
}

Test(traps, template_contents_do_not_run) {
  EXPECT_RHS("<template>" LOOK "</template>" GOOD, "ok");
  EXPECT_RHS("<template><template>" LOOK "</template>" LOOK "</template>" GOOD, "ok");
  EXPECT_RHS("</template>" GOOD "<template>" LOOK "</TEMPLATE >" GOOD,
             "okok"); /* stray end tag ignored */
  /* tokenized as usual inside: the textarea hides the </template> */
  EXPECT_RHS("<template><textarea></template>" LOOK "</textarea>" LOOK "</template>" GOOD, "ok");
  /* declarative shadow DOM: contents are attached to the document and do run */
  EXPECT_RHS("<div><template shadowrootmode=\"open\">" GOOD "</template></div>", "ok");
  EXPECT_RHS("<div><template shadowrootmode=\"bogus\">" LOOK "</template></div>" GOOD, "ok");
  EXPECT_RHS("<template><div><template shadowrootmode=\"open\">" LOOK
             "</template></div></template>" GOOD,
             "ok");
  /* unclosed template: everything after it is inert */
  expect_err("<template>" LOOK, RSC_HTML_AUTO, ERR_NOT_FOUND, NULL);
}

Test(traps, script_types_that_do_not_run) {
  EXPECT_RHS("<script type=\"application/json\">"
             "(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
             "ok");
  EXPECT_RHS(
      "<script type=\"text/x-template\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
      "ok");
  EXPECT_RHS("<script type=\"text/javascript; "
             "charset=utf-8\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
             "ok");
  EXPECT_RHS("<script type=\"importmap\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
             "ok");
  EXPECT_RHS("<script src=\"/x.js\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD, "ok");
  EXPECT_RHS("<script src>(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD, "ok");
  EXPECT_RHS("<script nomodule>(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD, "ok");
  EXPECT_RHS("<script language=\"vbscript\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
             "ok");
  EXPECT_RHS("<script for=\"button\" "
             "event=\"onclick\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
             "ok");
  EXPECT_RHS(
      "<script type=\"text/&#106;avascript\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>" GOOD,
      "ok");
  /* these do run */
  EXPECT_RHS(
      "<script type=\" TEXT/JavaScript \">(self.__FLIGHT_DATA||=[]).push(\"a\")</script>"
      "<script type=\"\">(self.__FLIGHT_DATA||=[]).push(\"b\")</script>"
      "<script type=application/ecmascript>(self.__FLIGHT_DATA||=[]).push(\"c\")</script>"
      "<script language=\"javascript1.5\">(self.__FLIGHT_DATA||=[]).push(\"d\")</script>"
      "<script type=\"text/javascript\" "
      "language=\"vbscript\">(self.__FLIGHT_DATA||=[]).push(\"e\")</script>"
      "<script for=\" window \" event=\"onload()\">(self.__FLIGHT_DATA||=[]).push(\"f\")</script>"
      "<script async defer nonce=\"n\" id=x>(self.__FLIGHT_DATA||=[]).push(\"g\")</script>"
      "<SCRIPT TYPE=\"text/javascript\">(self.__FLIGHT_DATA||=[]).push(\"h\")</SCRIPT>"
      "<script/>(self.__FLIGHT_DATA||=[]).push(\"i\")</script>"
      "<script type=\"application/json\" "
      "type=\"text/javascript\">(self.__FLIGHT_DATA||=[]).push(\"BAD\")</script>",
      "abcdefghi");
  /* a module script runs deferred: a Flight push there is refused */
  expect_err_at("<script type=module>(self.__FLIGHT_DATA||=[]).push(\"a\")</script>", RSC_HTML_AUTO,
                ERR_SYNTAX, "(self", 0, "module");
  EXPECT_RHS("<script type=module>import 'x';</script>" GOOD, "ok");
}

Test(traps, strings_inside_other_scripts) {
  EXPECT_RHS("<script>var s = '"
             "(self.__FLIGHT_DATA||=[]).push(\"BAD\")';</script>" GOOD,
             "ok");
  EXPECT_RHS(
      "<script>x = \"<script>(self.__FLIGHT_DATA||=[]).push('BAD')<\\/script>\";</script>" GOOD,
      "ok");
  EXPECT_NEXT("<script>window.x = 'self.__next_f.push([1,\"BAD\"])'</script>" BOOT PUSH1("\"ok\""),
              "ok");
  EXPECT_RHS("<div title=\"a>b " LOOK "\">x</div>" GOOD, "ok"); /* '>' inside a quoted attribute */
  EXPECT_RHS("<div title='" LOOK "'>x</div>" GOOD, "ok");
  EXPECT_RHS("<div a=\"1\"b='2'c=3 d "
             "e=\"" LOOK "\"/>" GOOD,
             "ok");
}

Test(traps, script_data_escape_states) {
  /* "<!--" then "<script>" inside a script: "</script>" no longer ends it */
  EXPECT_RHS("<script><!--\nvar t = \"<script>"
             "(self.__FLIGHT_DATA||=[]).push('BAD')</script>\";\n--></script>" GOOD,
             "ok");
  /* escaped (not double escaped): "</script>" still ends it */
  EXPECT_RHS("<script><!-- x = 1 </script>" GOOD, "ok");
  /* "<!--" closed by "-->" before "<script": back to normal script data */
  EXPECT_RHS("<script><!-- --> <script> </script>" GOOD, "ok");
  /* "<scripts>" does not start double escaping, "<script/" does */
  EXPECT_RHS("<script><!-- <scripts> </script>" GOOD, "ok");
  EXPECT_RHS("<script><!-- <script/ </script> still inside --> </script>" GOOD, "ok");
  /* "</scriptx>" and "</script" at EOF do not end a script; an unclosed script never runs */
  EXPECT_RHS("<script>a = 1 </scriptx> b </script>" GOOD, "ok");
  expect_err("<script>(self.__FLIGHT_DATA||=[]).push(\"a\")", RSC_HTML_AUTO, ERR_NOT_FOUND, NULL);
  expect_err("<script>(self.__FLIGHT_DATA||=[]).push(\"a\")</script", RSC_HTML_AUTO, ERR_NOT_FOUND,
             NULL);
  expect_err("<script>(self.__FLIGHT_DATA||=[]).push(\"a\")</script a=\">", RSC_HTML_AUTO,
             ERR_NOT_FOUND, NULL);
  /* an end tag with attributes, '>' inside quotes */
  EXPECT_RHS("<script>(self.__FLIGHT_DATA||=[]).push(\"a\")</script x=\">" LOOK "\">" GOOD, "aok");
  /* the push's own string with "<!--" written raw: a browser sees "<!--" then "<script" */
  EXPECT_RHS("<script>(self.__FLIGHT_DATA||=[]).push(\"<!--<script></script>\")</script>" GOOD
             "</script>",
             "<!--<script></script>ok");
}

/* ------------------------------------------------------------- API */

Test(api, no_payload_and_arguments) {
  char *out = (char *)1;
  size_t len = 7;
  rsc_error err;
  rsc_html_flavor fl = RSC_HTML_NEXT;
  expect_err("", RSC_HTML_AUTO, ERR_NOT_FOUND, NOT_FOUND_MSG);
  expect_err("<html><body><p>hello</p><script>console.log(1)</script></body></html>", RSC_HTML_AUTO,
             ERR_NOT_FOUND, NOT_FOUND_MSG);
  cr_assert_eq(rsc__html_extract(NULL, 0, RSC_HTML_AUTO, NULL, &out, &len, &err, &fl),
               RSC_ERR_HTML);
  cr_assert_str_eq(err.msg, NOT_FOUND_MSG);
  cr_assert_null(out);
  cr_assert_eq(fl, RSC_HTML_AUTO);
  /* argument errors: RSC_ERR_HTML "invalid argument" at offset 0 */
  memset(&err, 0xA5, sizeof err);
  cr_assert_eq(rsc__html_extract(NULL, 5, RSC_HTML_AUTO, NULL, &out, &len, &err, &fl),
               RSC_ERR_HTML);
  cr_assert_eq(err.code, RSC_ERR_HTML);
  cr_assert_eq(err.offset, 0);
  cr_assert_eq(err.row_id, -1);
  cr_assert_str_eq(err.msg, "invalid argument");
  cr_assert_null(out);
  cr_assert_eq(len, 0);
  cr_assert_eq(rsc__html_extract("", 0, (rsc_html_flavor)7, NULL, &out, &len, &err, &fl),
               RSC_ERR_HTML);
  cr_assert_str_eq(err.msg, "invalid argument");
  cr_assert_eq(rsc__html_extract("", 0, RSC_HTML_AUTO, NULL, NULL, &len, NULL, NULL), RSC_ERR_HTML);
  cr_assert_eq(rsc__html_extract("", 0, RSC_HTML_AUTO, NULL, &out, NULL, NULL, NULL), RSC_ERR_HTML);
  /* the default allocator (libc); optional outputs may be NULL */
  {
    const char *html = BOOT PUSH1("\"abc\"");
    rsc_alloc libc = {0};
    cr_assert_eq(rsc__html_extract(html, strlen(html), RSC_HTML_AUTO, NULL, &out, &len, NULL, NULL),
                 RSC_OK);
    cr_assert_eq(len, 3);
    cr_assert_str_eq(out, "abc");
    free(out);
    cr_assert_eq(
        rsc__html_extract(html, strlen(html), RSC_HTML_AUTO, &libc, &out, &len, NULL, NULL),
        RSC_OK);
    cr_assert_str_eq(out, "abc");
    free(out);
  }
}

/* The public entry: libc memory (rsc_free), the internal one's error as it is. */
Test(api, public_entry) {
  const char *ok = BOOT PUSH1("\"abc\"");
  const char *bad = BOOT "<script>self.__next_f.push([1,x])</script>";
  char *out = (char *)1;
  size_t len = 7;
  rsc_error err;
  rsc_html_flavor fl = RSC_HTML_AUTO;
  memset(&err, 0xA5, sizeof err);
  cr_assert_eq(rsc_html_extract(ok, strlen(ok), RSC_HTML_AUTO, &out, &len, &err, &fl), RSC_OK);
  cr_assert_eq(len, 3);
  cr_assert_str_eq(out, "abc");
  cr_assert_eq(fl, RSC_HTML_NEXT);
  cr_assert_eq(err.code, RSC_OK);
  cr_assert_eq(err.offset, 0);
  cr_assert_eq(err.row_id, -1);
  cr_assert_null(err.msg);
  rsc_free(out);
  /* no out: the payload is released inside */
  cr_assert_eq(rsc_html_extract(ok, strlen(ok), RSC_HTML_AUTO, NULL, &len, NULL, NULL), RSC_OK);
  cr_assert_eq(len, 3);
  cr_assert_eq(rsc_html_extract(bad, strlen(bad), RSC_HTML_AUTO, &out, &len, &err, &fl),
               RSC_ERR_HTML);
  cr_assert_null(out);
  cr_assert_eq(len, 0);
  cr_assert_eq(fl, RSC_HTML_NEXT);
  cr_assert_eq(err.code, RSC_ERR_HTML);
  cr_assert_eq(err.offset, (uint64_t)(strstr(bad, "x])") - bad));
  cr_assert_eq(err.row_id, -1);
  cr_assert_str_eq(err.msg, "expected a string literal");
  cr_assert_eq(rsc_html_extract(NULL, 1, RSC_HTML_AUTO, &out, &len, &err, &fl), RSC_ERR_HTML);
  cr_assert_eq(err.offset, 0);
  cr_assert_str_eq(err.msg, "invalid argument");
  cr_assert_eq(fl, RSC_HTML_AUTO);
}

Test(api, allocation_failures_are_clean) {
  /* a payload big enough to need several resizes */
  size_t n = 200000, i, k = 0;
  char *html = malloc(n + 200);
  long fail_at;
  k += (size_t)sprintf(html, "%s<script>self.__next_f.push([1,\"", BOOT);
  for (i = 0; i < n - 100; i++) html[k++] = (char)('a' + i % 26);
  k += (size_t)sprintf(html + k, "\"])</script>");
  for (fail_at = 1; fail_at < 30; fail_at++) {
    alloc_ctx a = {0};
    rsc_alloc al = test_alloc(&a);
    char *out;
    size_t len;
    rsc_error err;
    a.fail_after = fail_at;
    rsc_status st = rsc__html_extract(html, k, RSC_HTML_AUTO, &al, &out, &len, &err, NULL);
    if (st == RSC_OK) {
      cr_assert_eq(len, n - 100);
      test_free(&a, out);
      cr_assert_eq(a.live_blocks, 0);
      break;
    }
    cr_assert_eq(st, RSC_ERR_NOMEM);
    cr_assert_str_eq(err.msg, "out of memory");
    cr_assert_null(out);
    cr_assert_eq(a.live_blocks, 0, "leak after allocation failure %ld", fail_at);
  }
  cr_assert_gt(fail_at, 1);
  cr_assert_lt(fail_at, 30);
  free(html);
}

Test(api, output_is_bounded) {
  /* worst case: every input byte becomes 3 output bytes (NUL -> U+FFFD) */
  size_t n = 30000, i, k = 0;
  char *html = malloc(n + 200);
  result r;
  k += (size_t)sprintf(html, "%s<script>self.__next_f.push([1,\"", BOOT);
  for (i = 0; i < n; i++) html[k++] = 0;
  k += (size_t)sprintf(html + k, "\"])</script>");
  r = run_n(html, k, RSC_HTML_AUTO);
  cr_assert_eq(r.rc, 0);
  cr_assert_eq(r.len, 3 * n);
  free(r.out);
  free(html);
}

/* ----------------------------------------------------------- fixtures */

#ifndef RSC_FIXTURES_DIR
#  define RSC_FIXTURES_DIR "fixtures/html"
#endif

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *b;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b = malloc((size_t)n + 1);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(b);
    return NULL;
  }
  fclose(f);
  b[n] = 0;
  *len = (size_t)n;
  return b;
}

/* the string value of "key": "..." at or after p (no escapes in file names) */
static const char *json_str(const char *p, const char *key, char *dst, size_t cap) {
  char pat[64];
  const char *q, *e;
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  q = strstr(p, pat);
  if (!q) return NULL;
  q += strlen(pat);
  e = strchr(q, '"');
  if (!e || (size_t)(e - q) >= cap) return NULL;
  memcpy(dst, q, (size_t)(e - q));
  dst[e - q] = 0;
  return e;
}

Test(fixtures, real_pages) {
  size_t ilen, count = 0;
  char *index = slurp(RSC_FIXTURES_DIR "/index.json", &ilen);
  const char *p;
  cr_assert_not_null(index,
                     "cannot read " RSC_FIXTURES_DIR "/index.json (run from the repository root)");
  p = index;
  for (;;) {
    char hname[256], flavor[64], pname[256], path[512];
    const char *q = json_str(p, "html", hname, sizeof hname);
    size_t hlen, plen;
    char *html, *payload;
    rsc_html_flavor want;
    result r, r2;
    if (!q) break;
    cr_assert_not_null(json_str(q, "flavor", flavor, sizeof flavor));
    p = json_str(q, "payload", pname, sizeof pname);
    cr_assert_not_null(p);
    want = strcmp(flavor, "next") == 0 ? RSC_HTML_NEXT : RSC_HTML_RSC_HTML_STREAM;
    snprintf(path, sizeof path, "%s/%s", RSC_FIXTURES_DIR, hname);
    html = slurp(path, &hlen);
    cr_assert_not_null(html, "missing %s", path);
    snprintf(path, sizeof path, "%s/%s", RSC_FIXTURES_DIR, pname);
    payload = slurp(path, &plen);
    cr_assert_not_null(payload, "missing %s", path);
    r = run_n(html, hlen, RSC_HTML_AUTO);
    cr_assert_eq(r.rc, 0, "%s: error %d at %zu: %s", hname, r.rc, r.eoff, r.emsg);
    cr_assert_eq(r.found, want, "%s: flavor %d", hname, (int)r.found);
    cr_assert_eq(r.len, plen, "%s: %zu bytes, expected %zu", hname, r.len, plen);
    cr_assert(memcmp(r.out, payload, plen) == 0, "%s: payload differs", hname);
    r2 = run_n(html, hlen, want);
    cr_assert_eq(r2.rc, 0);
    cr_assert_eq(r2.len, plen);
    free(r.out);
    free(r2.out);
    /* every prefix of a real page is handled without crashing (truncated downloads) */
    for (size_t cut = 0; cut < hlen; cut += 1 + hlen / 97) {
      result t = run_n(html, cut, RSC_HTML_AUTO);
      if (t.rc == 0) free(t.out);
    }
    free(html);
    free(payload);
    count++;
  }
  cr_assert_geq(count, 20, "only %zu fixtures found", count);
  free(index);
}
