/*
 * Tests for src/html_rewrite.c (a Flight payload rewritten inside its HTML
 * page). The rows come from a small stand-in for the rewriter (fake_rows
 * below): it frames rows (newline rows, and the length rows T and binary)
 * and replaces every occurrence of one byte string by another in each row,
 * recomputing a length row's length. What is tested is the page: where the
 * new bytes go, how each push is written again, and that the page reads
 * back as the rewritten payload. Run from the repository root (or with
 * RSC_FIXTURES_DIR defined) for the fixture pages.
 */
#include "html.h"
#include "html_rewrite.h"
#include "support.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RSC_FIXTURES_DIR
#  define RSC_FIXTURES_DIR "fixtures/html"
#endif

/* ------------------------------------------------------ the stand-in */

typedef struct fake {
  const char *from, *to; /* replace every from by to; NULL: change nothing */
  bool all_changed;      /* report every row as changed (with its bytes) */
  long stop_at_row;      /* 1-based; the hook's answer is ignored from then on */
  rsc_status fail;       /* fail with this after the rows, at fail_off */
  uint64_t fail_off;
  long order_bug; /* report row n twice (1-based): rows out of order */
} fake;

static bool length_tag(char c) { return c && strchr("TAOoUSsLlGgMmVb", c) != NULL; }

/* The end of the row starting at p[i] (n when it runs off the end). */
static size_t row_end(const char *p, size_t n, size_t i) {
  size_t j = i;
  while (j < n && p[j] != ':' && p[j] != '\n') j++;
  if (j + 1 < n && p[j] == ':' && length_tag(p[j + 1])) {
    size_t k = j + 2, len = 0;
    while (k < n && p[k] != ',') {
      char c = p[k++];
      len = len * 16 + (size_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (k < n) return k + 1 + len <= n ? k + 1 + len : n;
  }
  while (j < n && p[j] != '\n') j++;
  return j < n ? j + 1 : n;
}

/* Appends row p[b..e) with the replacement to *out (malloc'd). */
static size_t rewrite_row(const fake *f, const char *p, size_t b, size_t e, char **out) {
  size_t cap = (e - b) * 4 + 64, k = 0, i = b, body = b;
  char *o = malloc(cap);
  size_t j = b;
  while (j < e && p[j] != ':' && p[j] != '\n') j++;
  bool lrow = j + 1 < e && p[j] == ':' && length_tag(p[j + 1]) && memchr(p + j, ',', e - j);
  if (lrow) body = (size_t)((const char *)memchr(p + j, ',', e - j) - p) + 1;
  char *txt = malloc(cap);
  size_t tk = 0;
  for (i = body; i < e;) {
    size_t fl = f->from ? strlen(f->from) : 0;
    if (fl && e - i >= fl && memcmp(p + i, f->from, fl) == 0) {
      memcpy(txt + tk, f->to, strlen(f->to));
      tk += strlen(f->to);
      i += fl;
    } else {
      txt[tk++] = p[i++];
    }
  }
  if (lrow) {
    memcpy(o, p + b, j + 2 - b);
    k = j + 2 - b;
    k += (size_t)sprintf(o + k, "%zx,", tk);
  } else {
    memcpy(o, p + b, body - b);
    k = body - b;
  }
  memcpy(o + k, txt, tk);
  k += tk;
  free(txt);
  *out = o;
  return k;
}

static rsc_status fake_rows(void *ctx, const char *p, size_t n, rsc__rewrite_row_fn fn,
                            void *fn_ctx, rsc_error *err) {
  const fake *f = ctx;
  long row = 0;
  size_t i = 0;
  while (i < n) {
    size_t e = row_end(p, n, i);
    char *o;
    size_t ol = rewrite_row(f, p, i, e, &o);
    bool changed = f->all_changed || ol != e - i || memcmp(o, p + i, ol) != 0;
    row++;
    int r = fn(fn_ctx, i, e, o, ol, changed);
    if (f->order_bug == row) r = r || fn(fn_ctx, i, e, o, ol, changed);
    free(o);
    if (r || row == f->stop_at_row) {
      *err = (rsc_error){RSC_ERR_USER, i, -1, "a consumer hook stopped the rewriter"};
      return RSC_ERR_USER;
    }
    i = e;
  }
  if (f->fail) {
    *err = (rsc_error){f->fail, f->fail_off, 7, "the rewriter failed"};
    return f->fail;
  }
  return RSC_OK;
}

/* The payload the stand-in makes of p[0..n): what the page must read back. */
static char *fake_payload(const fake *f, const char *p, size_t n, size_t *len) {
  size_t cap = n * 4 + 64, k = 0, i = 0;
  char *out = malloc(cap);
  while (i < n) {
    size_t e = row_end(p, n, i);
    char *o;
    size_t ol = rewrite_row(f, p, i, e, &o);
    if (k + ol > cap) out = realloc(out, cap = (k + ol) * 2);
    memcpy(out + k, o, ol);
    k += ol;
    free(o);
    i = e;
  }
  *len = k;
  return out;
}

/* ---------------------------------------------------------- helpers */

typedef struct res {
  rsc_status st;
  char *out;
  size_t len;
  rsc_html_rewrite_info info;
  rsc_error err;
} res;

static res rewrite_n(const char *html, size_t n, const fake *f) {
  res r;
  memset(&r, 0, sizeof r);
  char *buf = malloc(n ? n : 1); /* exact size: ASan catches any over-read */
  memcpy(buf, html, n);
  r.st = rsc__html_rewrite(buf, n, RSC_HTML_AUTO, fake_rows, (void *)f, NULL, &r.out, &r.len,
                           &r.info, &r.err);
  free(buf);
  cr_assert_eq(r.err.code, r.st);
  if (r.st == RSC_OK) {
    cr_assert_not_null(r.out);
    cr_assert_eq(r.out[r.len], 0);
    cr_assert_null(r.err.msg);
  } else {
    cr_assert_null(r.out);
    cr_assert_not_null(r.err.msg);
  }
  return r;
}

static res rewrite(const char *html, const fake *f) { return rewrite_n(html, strlen(html), f); }

static char *extract(const char *html, size_t n, size_t *len) {
  char *out;
  rsc_error err;
  rsc_status st = rsc__html_extract(html, n, RSC_HTML_AUTO, NULL, &out, len, &err, NULL);
  cr_assert_eq(st, RSC_OK, "the rewritten page does not read: %s at %llu", err.msg,
               (unsigned long long)err.offset);
  return out;
}

/* The page reads back as the stand-in's payload, and every byte outside the
 * literals of the pushes whose bytes changed is as it was. */
static void check_page(const char *name, const char *html, size_t n, const res *r, const fake *f) {
  size_t plen, qlen, elen, ns, ms;
  char *p, *q, *pe, *qe;
  rsc__html_seg *s, *m;
  cr_assert_eq(r->st, RSC_OK, "%s: %s at %llu", name, r->err.msg,
               (unsigned long long)r->err.offset);
  cr_assert_eq(rsc__html_extract_segs(html, n, RSC_HTML_AUTO, NULL, &p, &plen, &s, &ns, NULL, NULL),
               RSC_OK);
  cr_assert_eq(
      rsc__html_extract_segs(r->out, r->len, RSC_HTML_AUTO, NULL, &q, &qlen, &m, &ms, NULL, NULL),
      RSC_OK);
  char *want = fake_payload(f, p, plen, &elen);
  cr_assert_eq(qlen, elen, "%s: payload %zu bytes, expected %zu", name, qlen, elen);
  cr_assert(memcmp(q, want, elen) == 0, "%s: the page reads back another payload", name);
  cr_assert_eq(ms, ns, "%s: pushes added or dropped", name);
  size_t at = 0, bt = 0, changed = 0;
  for (size_t i = 0; i < ns; i++) {
    /* the bytes between literals, then the literal if its bytes are the same */
    cr_assert_eq(s[i].lit_b - at, m[i].lit_b - bt);
    cr_assert(memcmp(html + at, r->out + bt, s[i].lit_b - at) == 0, "%s: page bytes changed", name);
    cr_assert_eq(s[i].base64, m[i].base64);
    pe = p + s[i].pay_b;
    qe = q + m[i].pay_b;
    bool same = s[i].pay_e - s[i].pay_b == m[i].pay_e - m[i].pay_b &&
                memcmp(pe, qe, s[i].pay_e - s[i].pay_b) == 0;
    if (same) {
      cr_assert_eq(s[i].lit_e - s[i].lit_b, m[i].lit_e - m[i].lit_b,
                   "%s: push %zu rewritten though its bytes did not change", name, i);
      cr_assert(memcmp(html + s[i].lit_b, r->out + m[i].lit_b, s[i].lit_e - s[i].lit_b) == 0);
    } else {
      changed++;
    }
    at = s[i].lit_e;
    bt = m[i].lit_e;
  }
  cr_assert_eq(n - at, r->len - bt);
  cr_assert(memcmp(html + at, r->out + bt, n - at) == 0, "%s: page bytes changed", name);
  cr_assert_eq(r->info.pushes, ns);
  cr_assert_eq(r->info.pushes_changed, changed);
  cr_assert_eq(r->info.payload_in, plen);
  cr_assert_eq(r->info.payload_out, qlen);
  free(want);
  free(p);
  free(q);
  free(s);
  free(m);
}

#define BOOT "<script>(self.__next_f=self.__next_f||[]).push([0])</script>"
#define NPUSH(lit) "<script>self.__next_f.push([1," lit "])</script>"
#define NPUSH3(lit) "<script>self.__next_f.push([3," lit "])</script>"
#define RPUSH(lit) "<script>(self.__FLIGHT_DATA||=[]).push(" lit ")</script>"
#define RPUSHB(lit)                                                                                \
  "<script>(self.__FLIGHT_DATA||=[]).push(Uint8Array.from(atob(" lit "), m => m.codePointAt(0)))"  \
  "</script>"

static void expect_page(const char *html, const fake *f, const char *want) {
  res r = rewrite(html, f);
  cr_assert_eq(r.st, RSC_OK, "%s at %llu", r.err.msg, (unsigned long long)r.err.offset);
  cr_assert_str_eq(r.out, want);
  check_page("page", html, strlen(html), &r, f);
  free(r.out);
}

/* ---------------------------------------------------------- unchanged */

Test(unchanged, no_rule_matches_byte_identical) {
  const char *html = "<!doctype html><p>x</p>" BOOT NPUSH(
      "'0:{\\\"a\\\":\\x22/_next/x\\\"}\\n'") "<script>var "
                                              "s='self.__next_f.push([1,\"x\"])'</"
                                              "script>" NPUSH(
                                                  "\"1:\\u0022\\u003cb\\u003e\\u0022\\n\"");
  fake f = {.from = "nothing-here", .to = "y"};
  res r = rewrite(html, &f);
  cr_assert_eq(r.st, RSC_OK);
  cr_assert_str_eq(r.out, html);
  cr_assert_eq(r.info.flavor, RSC_HTML_NEXT);
  cr_assert_eq(r.info.rows, 2);
  cr_assert_eq(r.info.rows_changed, 0);
  cr_assert_eq(r.info.pushes, 2);
  cr_assert_eq(r.info.pushes_changed, 0);
  free(r.out);
  /* rows reported changed with the same bytes: the pushes stay as written */
  f.all_changed = true;
  r = rewrite(html, &f);
  cr_assert_str_eq(r.out, html);
  cr_assert_eq(r.info.rows_changed, 2);
  cr_assert_eq(r.info.pushes_changed, 0);
  free(r.out);
}

/* Every page in fixtures/html: a rule that matches nothing gives the page
 * back byte for byte; a rule that matches rewrites it so that it reads
 * back as the rewritten payload with every other byte in place. */
static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t got = fread(b, 1, (size_t)n, fp);
  fclose(fp);
  cr_assert_eq(got, (size_t)n);
  b[n] = 0;
  *len = (size_t)n;
  return b;
}

Test(fixtures, every_page) {
  size_t ilen, pages = 0, rewritten = 0;
  char *index = slurp(RSC_FIXTURES_DIR "/index.json", &ilen);
  cr_assert_not_null(index, "cannot read " RSC_FIXTURES_DIR "/index.json");
  const char *p = index;
  static const struct {
    const char *from, *to;
  } rules[] = {{"/_next/", "https://cdn.example/_next/"},  {"mod/", "https://cdn.example/mod/"},
               {"caf", "<\\/script>&\\u2028</script>"},    {"\xc3\xa9", "<!--<script>"},
               {"loading", "loading \xe2\x80\xa8 & more"}, {"x", "xy"}};
  while ((p = strstr(p, "\"html\": \""))) {
    char name[256], path[512];
    p += 9;
    size_t k = (size_t)(strchr(p, '"') - p), hlen;
    memcpy(name, p, k);
    name[k] = 0;
    snprintf(path, sizeof path, "%s/%s", RSC_FIXTURES_DIR, name);
    char *html = slurp(path, &hlen);
    cr_assert_not_null(html, "missing %s", path);
    fake none = {.from = "\x01never\x01", .to = "z"};
    res r = rewrite_n(html, hlen, &none);
    cr_assert_eq(r.st, RSC_OK, "%s: %s", name, r.err.msg);
    cr_assert_eq(r.len, hlen, "%s: unchanged page not byte-identical", name);
    cr_assert(memcmp(r.out, html, hlen) == 0, "%s: unchanged page not byte-identical", name);
    free(r.out);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
      fake f = {.from = rules[i].from, .to = rules[i].to};
      r = rewrite_n(html, hlen, &f);
      check_page(name, html, hlen, &r, &f);
      if (r.info.rows_changed) rewritten++;
      free(r.out);
    }
    free(html);
    pages++;
  }
  cr_assert_geq(pages, 22);
  cr_assert_geq(rewritten, 30);
  free(index);
}

/* ------------------------------------------------- where new bytes go */

Test(placement, one_push) {
  fake f = {.from = "/_next/", .to = "https://cdn.example/_next/"};
  expect_page("<html>" BOOT NPUSH("\"0:[\\\"/_next/a.js\\\"]\\n1:\\\"x\\\"\\n\"") "</html>", &f,
              "<html>" BOOT NPUSH(
                  "\"0:[\\\"https://cdn.example/_next/a.js\\\"]\\n1:\\\"x\\\"\\n\"") "</html>");
}

/* A T row over three pushes: its new bytes all go to the push where it
 * started, the pushes it ran into keep only what follows it. */
Test(placement, row_split_across_pushes) {
  fake f = {.from = "/_next/", .to = "/cdn/_next/"};
  expect_page(BOOT NPUSH("\"0:\\\"a\\\"\\n1:Td,/_ne\"") NPUSH("\"xt/abcde\"")
                  NPUSH("\"f2:\\\"b\\\"\\n\""),
              &f,
              BOOT NPUSH("\"0:\\\"a\\\"\\n1:T11,/cdn/_next/abcdef\"") NPUSH("\"\"")
                  NPUSH("\"2:\\\"b\\\"\\n\""));
  /* a row header alone in its push */
  expect_page(BOOT NPUSH("\"1:T7,\"") NPUSH("\"/_next/\"") NPUSH("\"\""), &f,
              BOOT NPUSH("\"1:Tb,/cdn/_next/\"") NPUSH("\"\"") NPUSH("\"\""));
  /* rsc-html-stream: the same */
  expect_page(RPUSH("\"0:[\\\"/_ne\"") RPUSH("\"xt/\\\"]\\n1:1\\n\""), &f,
              RPUSH("\"0:[\\\"/cdn/_next/\\\"]\\n\"") RPUSH("\"1:1\\n\""));
}

/* ----------------------------------------------------------- base64 */

Test(base64, pushes_reencoded) {
  fake f = {.from = "ab", .to = "abc"};
  /* "0:\"ab\"\n" = MDoiYWIiCg== ; "0:\"abc\"\n" = MDoiYWJjIgo= */
  expect_page(BOOT NPUSH3("\"MDoiYWIiCg==\"") NPUSH("\"1:2\\n\""), &f,
              BOOT NPUSH3("\"MDoiYWJjIgo=\"") NPUSH("\"1:2\\n\""));
  expect_page(RPUSHB("'MDoiYWIiCg'") RPUSH("\"1:2\\n\""), &f,
              RPUSHB("\"MDoiYWJjIgo=\"") RPUSH("\"1:2\\n\""));
  /* a binary row left alone next to a changed row in the same push:
   * "1:o2,\xff\xfe0:\"ab\"\n" */
  expect_page(BOOT NPUSH3("\"MTpvMiz//jA6ImFiIgo=\""), &f, BOOT NPUSH3("\"MTpvMiz//jA6ImFiYyIK\""));
  /* a text row started in a text push and ending in a base64 one */
  expect_page(BOOT NPUSH("\"0:\\\"a\"") NPUSH3("\"YiIK\""), &f, /* b"\n */
              BOOT NPUSH("\"0:\\\"abc\\\"\\n\"") NPUSH3("\"\""));
}

/* --------------------------------------------------------- escaping */

Test(escaping, next) {
  fake f = {.from = "X",
            .to = "<a href=\"q\\\\\">&amp;</script>\xe2\x80\xa8\xe2\x80\xa9\x01\t\x7f"
                  "\xf0\x9f\x98\x80'"};
  expect_page(BOOT NPUSH("\"0:X\\n\""), &f,
              BOOT NPUSH("\"0:\\u003ca href=\\\"q\\\\\\\\\\\"\\u003e\\u0026amp;\\u003c/script"
                         "\\u003e\\u2028\\u2029\\u0001\\t\x7f\xf0\x9f\x98\x80'\\n\""));
}

Test(escaping, rsc_html_stream) {
  fake f = {.from = "X", .to = "<a>&</script></SCRIPT x<!--<script>\xe2\x80\xa8\b\f\r\"<"};
  expect_page(
      RPUSH("\"0:X\\n\""), &f,
      RPUSH("\"0:<a>&</\\script></\\SCRIPT x<\\!--<script>\xe2\x80\xa8\\b\\f\\r\\\"<\\n\""));
}

/* `</script>` in a rewritten string does not end the script: the page
 * still has one script per push and reads back whole. */
Test(escaping, script_end_in_a_string) {
  fake f = {.from = "/_next/", .to = "</script><script>alert(1)</script>"};
  const char *pages[] = {BOOT NPUSH("\"0:\\\"/_next/\\\"\\n\"") NPUSH("\"1:1\\n\""),
                         RPUSH("\"0:\\\"/_next/\\\"\\n\"") RPUSH("\"1:1\\n\"")};
  for (int i = 0; i < 2; i++) {
    res r = rewrite(pages[i], &f);
    check_page("script end", pages[i], strlen(pages[i]), &r, &f);
    cr_assert_eq(r.info.pushes_changed, 1);
    free(r.out);
  }
}

/* ----------------------------------------------------------- errors */

Test(errors, page_errors_as_extract) {
  fake f = {.from = "a", .to = "b"};
  const char *bad = BOOT "<script>self.__next_f.push([1,x])</script>";
  res r = rewrite(bad, &f);
  cr_assert_eq(r.st, RSC_ERR_HTML);
  cr_assert_eq(r.err.offset, (uint64_t)(strstr(bad, "x])") - bad));
  cr_assert_str_eq(r.err.msg, "expected a string literal");
  r = rewrite("<p>no payload</p>", &f);
  cr_assert_eq(r.st, RSC_ERR_HTML);
  cr_assert_str_eq(r.err.msg, "no Flight payload found");
  cr_assert_eq(r.info.flavor, RSC_HTML_AUTO);
}

Test(errors, rewriter_error_at_its_push) {
  const char *html = BOOT NPUSH("\"0:1\\n\"") NPUSH("\"1:2\\n\"");
  fake f = {.fail = RSC_ERR_BAD_ROW, .fail_off = 5};
  res r = rewrite(html, &f);
  cr_assert_eq(r.st, RSC_ERR_BAD_ROW);
  cr_assert_eq(r.err.offset, (uint64_t)(strstr(html, "\"1:2") - html), "offset %llu",
               (unsigned long long)r.err.offset);
  cr_assert_eq(r.err.row_id, 7);
  cr_assert_str_eq(r.err.msg, "the rewriter failed");
  cr_assert_eq(r.info.flavor, RSC_HTML_NEXT);
  f = (fake){.stop_at_row = 1};
  r = rewrite(html, &f);
  cr_assert_eq(r.st, RSC_ERR_USER);
  f = (fake){.order_bug = 1};
  r = rewrite(html, &f);
  cr_assert_eq(r.st, RSC_ERR_STATE);
  cr_assert_str_eq(r.err.msg, "rewriter reported rows out of order");
}

/* A text push whose new bytes would not be UTF-8: a row cut inside a
 * character by a length the rewriter got wrong. */
Test(errors, text_push_not_utf8) {
  fake f = {.from = "X", .to = "\xc3"};
  res r = rewrite(BOOT NPUSH("\"0:X\\n\""), &f);
  cr_assert_eq(r.st, RSC_ERR_HTML);
  cr_assert_str_eq(r.err.msg, "rewritten bytes of a text push are not UTF-8");
  /* in a base64 push the same bytes are fine */
  r = rewrite(BOOT NPUSH3("\"MDpYCg==\""), &f);
  cr_assert_eq(r.st, RSC_OK);
  free(r.out);
}

Test(errors, arguments) {
  fake f = {0};
  char *out = (char *)1;
  size_t len = 3;
  rsc_error err;
  cr_assert_eq(
      rsc__html_rewrite(BOOT, strlen(BOOT), RSC_HTML_AUTO, NULL, &f, NULL, &out, &len, NULL, &err),
      RSC_ERR_HTML);
  cr_assert_null(out);
  cr_assert_eq(len, 0);
  cr_assert_str_eq(err.msg, "invalid argument");
  cr_assert_eq(
      rsc__html_rewrite(NULL, 5, RSC_HTML_AUTO, fake_rows, &f, NULL, &out, &len, NULL, &err),
      RSC_ERR_HTML);
  cr_assert_eq(rsc__html_rewrite(BOOT, strlen(BOOT), RSC_HTML_AUTO, fake_rows, &f, NULL, NULL, &len,
                                 NULL, NULL),
               RSC_ERR_HTML);
  /* a bootstrap alone: an empty payload, the page as it was */
  res r = rewrite(BOOT, &f);
  cr_assert_eq(r.st, RSC_OK);
  cr_assert_str_eq(r.out, BOOT);
  free(r.out);
}

/* Allocation failures at every step leave nothing allocated. */
Test(errors, allocation_failures_are_clean) {
  const char *html = BOOT NPUSH("\"0:\\\"/_next/a\\\"\\n1:T3,abc\"") NPUSH3("\"MjoiYiIK\"");
  fake f = {.from = "/_next/", .to = "https://cdn.example/_next/"};
  long at;
  for (at = 1; at < 40; at++) {
    ts_counting c = {.fail_at = (unsigned long)at};
    rsc_alloc al = ts_counting_alloc(&c);
    char *out;
    size_t len;
    rsc_error err;
    rsc_status st = rsc__html_rewrite(html, strlen(html), RSC_HTML_AUTO, fake_rows, &f, &al, &out,
                                      &len, NULL, &err);
    if (st == RSC_OK) {
      ts_counting_free(&c, out);
      cr_assert_eq(c.live, 0);
      break;
    }
    cr_assert_eq(st, RSC_ERR_NOMEM, "at %ld: %d %s", at, st, err.msg);
    cr_assert_null(out);
    cr_assert_eq(c.live, 0, "leak after allocation failure %ld", at);
  }
  cr_assert_gt(at, 3);
  cr_assert_lt(at, 40);
}

/* ---------------------------------------------- the public entry */

/* rsc_rewrite_html: the real rewriter's rows, libc memory, its stats. */
Test(api, public_entry_with_the_rewriter) {
  size_t hlen, plen, qlen;
  char *html = slurp(RSC_FIXTURES_DIR "/next-turbopack-suspense.html", &hlen);
  cr_assert_not_null(html);
  rsc_rewrite_rule rule = {{"/_next/", 7}, {"https://cdn.example/_next/", 26}};
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  o.prefix = &rule;
  o.prefix_count = 1;
  char *out = NULL, *p = NULL, *q = NULL;
  size_t out_len = 0;
  rsc_html_rewrite_info info;
  rsc_error err;
  cr_assert_eq(rsc_rewrite_html(html, hlen, RSC_HTML_AUTO, &o, &out, &out_len, &info, &err), RSC_OK,
               "%s", err.msg);
  cr_assert_eq(err.code, RSC_OK);
  cr_assert_eq(info.flavor, RSC_HTML_NEXT);
  cr_assert_gt(info.rewriter.strings_changed, 0);
  cr_assert_eq(info.rewriter.rows_changed, info.rows_changed);
  cr_assert_eq(info.rewriter.rows, info.rows);
  cr_assert_gt(info.pushes_changed, 0);
  cr_assert_lt(info.pushes_changed, info.pushes);
  /* the page reads back as the payload rewritten on its own */
  cr_assert_eq(rsc_html_extract(html, hlen, RSC_HTML_AUTO, &p, &plen, NULL, NULL), RSC_OK);
  cr_assert_eq(rsc_html_extract(out, out_len, RSC_HTML_AUTO, &q, &qlen, NULL, NULL), RSC_OK);
  ts_sink want = {0};
  cr_assert_eq(rsc_rewrite(p, plen, &o, ts_sink_write, &want, NULL, NULL), RSC_OK);
  cr_assert_eq(qlen, want.len);
  cr_assert(memcmp(q, want.p, want.len) == 0);
  cr_assert_eq(info.payload_out, qlen);
  free(want.p);
  rsc_free(p);
  rsc_free(q);
  rsc_free(out);
  /* NULL options; NULL out (the page is released inside) */
  cr_assert_eq(rsc_rewrite_html(html, hlen, RSC_HTML_AUTO, NULL, &out, &out_len, &info, &err),
               RSC_ERR_STATE);
  cr_assert_null(out);
  cr_assert_eq(rsc_rewrite_html(html, hlen, RSC_HTML_AUTO, &o, NULL, &out_len, NULL, NULL), RSC_OK);
  cr_assert_gt(out_len, hlen);
  /* the rewriter's error, at the push holding the bad row */
  const char *bad = BOOT NPUSH("\"0:[1]\\n\"") NPUSH("\"1:{x}\\n\"");
  cr_assert_eq(rsc_rewrite_html(bad, strlen(bad), RSC_HTML_AUTO, &o, &out, &out_len, &info, &err),
               RSC_ERR_BAD_ROW);
  cr_assert_eq(err.offset, (uint64_t)(strstr(bad, "\"1:{") - bad));
  cr_assert_eq(err.row_id, 1);
  cr_assert_null(out);
  free(html);
}
