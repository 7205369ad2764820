#define _XOPEN_SOURCE 700
/* test_report.c - the byte report (src/report.c, rsc_report_html): spans
 * that add up to the rows and the payload on fixtures, value spans that are
 * their JSON text, components, duplicates and boundaries on crafted
 * payloads, a 10 MB report smaller than its input, and bad input of every
 * kind answered with a page or a code, never a crash. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_page.h"
#include "support.h"

static rsc__report build(const char *buf, size_t len) {
  rsc__report r;
  cr_assert_eq(rsc__report_build(&r, buf, len, NULL), RSC_OK);
  return r;
}

/* Every node's children lie inside it, disjoint, and add up to at most its
 * size; groups are exactly their children's sum; the chunks add up to the
 * payload and each chunk to its rows. */
static void check_spans(const rsc__report *r) {
  cr_assert_eq(r->nodes[0].size, r->len);
  for (uint32_t i = 0; i < r->nnodes; i++) {
    const rsc__rpt_node *n = &r->nodes[i];
    uint64_t sum = 0, prev_end = 0;
    uint32_t count = 0;
    for (uint32_t c = n->first; c != RSC__RPT_NONE; c = r->nodes[c].next) {
      const rsc__rpt_node *k = &r->nodes[c];
      cr_assert_eq(k->parent, i);
      sum += k->size;
      count++;
      /* chunks (and groups of them) come by id, not by offset */
      if (n->kind == RSC__RPT_ROOT || n->kind == RSC__RPT_CHUNK || k->kind == RSC__RPT_CHUNK ||
          (k->kind == RSC__RPT_GROUP && r->nodes[k->first].kind == RSC__RPT_CHUNK))
        continue;
      cr_assert_geq(k->off, prev_end, "node %u: child %u overlaps its sibling", i, c);
      if (n->kind != RSC__RPT_GROUP)
        cr_assert(k->off >= n->off && k->off + k->size <= n->off + n->size,
                  "node %u (%c): child %u outside it", i, n->kind, c);
      prev_end = k->off + k->size;
    }
    cr_assert_eq(count, n->nkids);
    if (n->kind == RSC__RPT_ROOT || n->kind == RSC__RPT_GROUP)
      cr_assert_eq(sum, n->size, "node %u (%c): children %llu of %llu", i, n->kind,
                   (unsigned long long)sum, (unsigned long long)n->size);
    else cr_assert_leq(sum, n->size);
  }
  uint64_t rows = 0;
  for (size_t i = 0; i < r->nrows; i++) rows += r->rows[i].len;
  cr_assert_eq(rows, r->len);
}

Test(report, spans_add_up_on_fixtures) {
  static const char *const files[] = {
      "react/19.3.1/prod/page-1k.rsc",        "react/19.3.1/prod/page-25k.rsc",
      "react/19.3.1/prod/ssr-dashboard.rsc",  "react/19.3.1/prod/many-tiny-rows.rsc",
      "react/19.3.1/prod/binary-heavy.rsc",   "react/19.3.1/prod/feed-1mb.rsc",
      "html/next-turbopack-catalog.rsc",      "html/next-turbopack-suspense.rsc",
      "react/19.3.1/prod/table-1000-rows.rsc"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    size_t len;
    char *buf = ts_fixture(files[f], &len);
    cr_assert(buf, "%s", files[f]);
    rsc__report r = build(buf, len);
    cr_assert_eq(r.decode.code, RSC_OK, "%s", files[f]);
    check_spans(&r);
    rsc__report_free(&r);
    free(buf);
  }
}

/* Every fixture and page: its spans add up (payloads the decoder refuses
 * are measured all the same) and rsc_report_html writes a whole page. */
static size_t nreported, npages;

static int report_fixture(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  size_t n = strlen(path);
  bool page = n > 5 && strcmp(path + n - 5, ".html") == 0;
  if (type != FTW_F || strstr(path, "node_modules") ||
      (!page && (n < 4 || strcmp(path + n - 4, ".rsc"))))
    return 0;
  size_t len;
  char *buf = ts_read(path, &len);
  cr_assert_not_null(buf, "%s", path);
  if (!page) {
    rsc__report r;
    cr_assert_eq(rsc__report_build(&r, buf, len, NULL), RSC_OK, "%s", path);
    check_spans(&r);
    rsc__report_free(&r);
  }
  ts_sink out = {0};
  rsc_error err;
  cr_assert_eq(rsc_report_html(buf, len, page ? 1 : 0, NULL, ts_sink_write, &out, &err), RSC_OK,
               "%s", path);
  cr_assert(out.len > 1000 && strncmp(out.p, "<!doctype html>", 15) == 0, "%s", path);
  cr_assert(strstr(out.p, "</html>"), "%s: the page is cut", path);
  free(out.p);
  free(buf);
  nreported++;
  npages += page;
  return 0;
}

Test(report, every_fixture_and_page, .timeout = 600) {
  cr_assert_eq(nftw(RSC_FIXTURES, report_fixture, 16, FTW_PHYS), 0);
  cr_expect_gt(nreported, 700);
  cr_expect_gt(npages, 20);
}

/* The value of a member spans its JSON text exactly. */
static const rsc__rpt_node *member(const rsc__report *r, uint32_t parent, const char *key) {
  for (uint32_t c = r->nodes[parent].first; c != RSC__RPT_NONE; c = r->nodes[c].next) {
    const rsc__rpt_node *k = &r->nodes[c];
    if (k->key_len == strlen(key) && memcmp(r->buf + k->key_off, key, k->key_len) == 0) return k;
  }
  return NULL;
}

Test(report, values_span_their_json_text) {
  static const char in[] = "0:{\"a\":\"xy\",\"b\":[1,22,{\"c\":null}],\"d\":\"$1\"}\n1:T5,hello";
  rsc__report r = build(in, sizeof in - 1);
  cr_assert_eq(r.nrows, 2);
  const rsc__rpt_node *chunk0 = NULL;
  for (uint32_t c = r.nodes[0].first; c != RSC__RPT_NONE; c = r.nodes[c].next)
    if (r.nodes[c].idx == 0) chunk0 = &r.nodes[c];
  cr_assert(chunk0);
  cr_assert_eq(chunk0->size, r.rows[0].len);
  uint32_t obj = chunk0->first;
  cr_assert_eq(r.nodes[obj].kind, RSC__RPT_OBJECT);
  cr_assert_eq(r.nodes[obj].size, r.rows[0].dlen);
  const rsc__rpt_node *a = member(&r, obj, "a"), *b = member(&r, obj, "b");
  cr_assert(a && b);
  cr_assert_eq(a->size, 4);
  cr_assert_eq(b->kind, RSC__RPT_ARRAY);
  cr_assert_eq(b->size, strlen("[1,22,{\"c\":null}]"));
  cr_assert_eq(b->nkids, 3);
  cr_assert_eq(r.nodes[r.nodes[b->first].next].size, 2);
  check_spans(&r);
  rsc__report_free(&r);
}

Test(report, elements_by_component_and_module) {
  static const char in[] =
      "1:I[\"app/Button.js\",[],\"Button\"]\n"
      "0:[\"$\",\"div\",null,{\"children\":[[\"$\",\"$L1\",null,{\"label\":\"a\"}],"
      "[\"$\",\"$L1\",null,{\"label\":\"b\"}]]}]\n";
  rsc__report r = build(in, sizeof in - 1);
  cr_assert_eq(r.decode.code, RSC_OK);
  int seen = 0;
  for (uint32_t i = 0; i < r.ncomps; i++) {
    const rsc__rpt_comp *c = &r.comps[i];
    const char *name = rsc__report_name(&r, c->name);
    if (strcmp(name, "Button") == 0) {
      seen |= 1;
      cr_assert_eq(c->kind, 'c');
      cr_assert_str_eq(rsc__report_name(&r, c->module), "app/Button.js#Button");
      cr_assert_eq(c->elements, 2);
      cr_assert_eq(c->self, 2 * strlen("[\"$\",\"$L1\",null,{\"label\":\"a\"}]"));
    } else if (strcmp(name, "div") == 0) {
      seen |= 2;
      cr_assert_eq(c->kind, 'h');
      cr_assert_eq(c->subtree, r.rows[1].dlen);
      cr_assert_eq(c->self, r.rows[1].dlen - 2 * strlen("[\"$\",\"$L1\",null,{\"label\":\"a\"}]"));
    }
  }
  cr_assert_eq(seen, 3);
  rsc__report_free(&r);
}

/* A type slot's reference id is read as the decoder reads it, leading
 * zeros and all (rsc__describe_raw_type, shared with `rscflight stats`). */
Test(report, type_slot_ids_as_the_decoder_reads_them) {
  static const char in[] =
      "1:I[\"app/Button.js\",[],\"Button\"]\n"
      "0:[[\"$\",\"$L000000001\",null,{}],[\"$\",\"$L00000000009\",null,{}]]\n";
  rsc__report r = build(in, sizeof in - 1);
  cr_assert_eq(r.decode.code, RSC_OK);
  int seen = 0;
  for (uint32_t i = 0; i < r.ncomps; i++) {
    const char *name = rsc__report_name(&r, r.comps[i].name);
    if (strcmp(name, "Button") == 0) {
      seen |= 1;
      cr_expect_eq(r.comps[i].kind, 'c');
      cr_expect_eq(r.comps[i].elements, 1);
    } else if (strcmp(name, "$L00000000009 (unresolved)") == 0) {
      seen |= 2;
      cr_expect_eq(r.comps[i].kind, 'o');
    }
  }
  cr_assert_eq(seen, 3);
  rsc__report_free(&r);
}

/* A module named by a number (webpack's numeric ids), as JavaScript
 * prints it, the same as the CLI's tree and stats show it. */
Test(report, numeric_module_ids_as_javascript_prints_them) {
  static const char in[] = "1:I[0.1,[],\"\"]\n"
                           "0:[\"$\",\"$L1\",null,{}]\n";
  rsc__report r = build(in, sizeof in - 1);
  cr_assert_eq(r.decode.code, RSC_OK);
  int seen = 0;
  for (uint32_t i = 0; i < r.ncomps; i++)
    if (r.comps[i].kind == 'c') {
      seen++;
      cr_expect_str_eq(rsc__report_name(&r, r.comps[i].module), "0.1#");
      cr_expect_str_eq(rsc__report_name(&r, r.comps[i].name), "0"); /* a file "0.1" */
    }
  cr_assert_eq(seen, 1);
  rsc__report_free(&r);
}

/* An element's type slot that is a container, met as the walk's stack of
 * open containers grows (64 deep): its parent is read from the moved stack
 * (the ASan stage sees a read of the old one). */
Test(report, a_container_type_slot_as_the_stack_grows) {
  char in[512];
  size_t n = 0;
  n += (size_t)snprintf(in + n, sizeof in - n, "0:");
  for (int i = 0; i < 63; i++) in[n++] = '[';
  n += (size_t)snprintf(in + n, sizeof in - n, "[\"$\",{\"t\":1},null,{}]");
  for (int i = 0; i < 63; i++) in[n++] = ']';
  in[n++] = '\n';
  rsc__report r = build(in, n);
  check_spans(&r);
  rsc__report_free(&r);
}

Test(report, duplicates_found) {
  /* a string three times; a subtree twice (in two rows), holding a smaller
   * subtree that repeats only with it; a short subtree twice (too short) */
  static const char in[] =
      "0:{\"x\":\"hello world\",\"y\":[\"hello world\",\"hello world\"],\"s\":[1,2],\"t\":[1,2],"
      "\"p\":{\"inner\":{\"deep\":\"value-value-value\"},\"n\":12345}}\n"
      "1:{\"q\":{\"inner\":{\"deep\":\"value-value-value\"},\"n\":12345}}\n";
  rsc__report r = build(in, sizeof in - 1);
  cr_assert_geq(r.nstrings, 1);
  cr_assert_eq(r.strings[0].len, 11);
  cr_assert_eq(memcmp(r.buf + r.strings[0].off, "hello world", 11), 0);
  cr_assert_eq(r.strings[0].count, 3);
  cr_assert_eq(r.strings[0].nwhere, 3);
  cr_assert_eq(r.nsubtrees, 1, "only the outer repeated subtree: %zu", r.nsubtrees);
  const char *want = "{\"inner\":{\"deep\":\"value-value-value\"},\"n\":12345}";
  cr_assert_eq(r.subtrees[0].len, strlen(want));
  cr_assert_eq(memcmp(r.buf + r.subtrees[0].off, want, strlen(want)), 0);
  cr_assert_eq(r.subtrees[0].count, 2);
  /* the places: row 0 member p, row 1 member q */
  cr_assert_eq(r.subtrees[0].nwhere, 2);
  const rsc__rpt_node *p0 = &r.nodes[r.subtrees[0].where[0]];
  const rsc__rpt_node *p1 = &r.nodes[r.subtrees[0].where[1]];
  cr_assert_eq(memcmp(r.buf + p0->key_off, "p", 1), 0);
  cr_assert_eq(memcmp(r.buf + p1->key_off, "q", 1), 0);
  rsc__report_free(&r);
}

Test(report, rows_settle_boundaries) {
  static const char in[] =
      "0:[\"$\",\"$Sreact.suspense\",null,{\"fallback\":\"...\",\"children\":\"$L1\"}]\n"
      "1:[\"$\",\"p\",null,{\"children\":[\"$L2\",\"$@3\"]}]\n"
      "2:\"two\"\n3:\"three\"\n4:\"four\"\n";
  rsc__report r = build(in, sizeof in - 1);
  cr_assert_eq(r.nrows, 5);
  cr_assert_eq(r.rows[0].boundary, RSC__RPT_NONE);
  cr_assert_neq(r.rows[1].settled_by, RSC__RPT_NONE);
  cr_assert_eq(memcmp(r.buf + r.nodes[r.rows[1].settled_by].off, "\"$L1\"", 5), 0);
  cr_assert_eq(r.nbounds, 1);
  cr_assert_eq(r.nodes[r.bounds[0].node].kind, RSC__RPT_ELEMENT);
  /* rows 2 and 3 are referenced inside row 1, which settles that boundary */
  for (int i = 1; i <= 3; i++) cr_assert_eq(r.rows[i].boundary, 0, "row %d", i);
  cr_assert_eq(memcmp(r.buf + r.nodes[r.rows[3].settled_by].off, "\"$@3\"", 5), 0);
  cr_assert_eq(r.rows[4].boundary, RSC__RPT_NONE);
  cr_assert_eq(r.rows[4].settled_by, RSC__RPT_NONE);
  rsc__report_free(&r);
}

Test(report, page_is_self_contained) {
  size_t len;
  char *buf = ts_fixture("html/next-turbopack-catalog.html", &len);
  cr_assert(buf);
  ts_sink s = {0};
  rsc_error err;
  cr_assert_eq(rsc_report_html(buf, len, -1, NULL, ts_sink_write, &s, &err), RSC_OK);
  cr_assert_eq(err.code, RSC_OK);
  cr_assert(strstr(s.p, "\"page\":{\"html\":458204"), "the page's bytes");
  cr_assert_null(strstr(s.p, "http://"));
  cr_assert_null(strstr(s.p, "https://"));
  cr_assert_null(strstr(s.p, "src="));
  /* one data script; nothing in the data can end it */
  const char *data = strstr(s.p, "<script id=\"report-data\"");
  cr_assert(data);
  const char *end = strstr(data, "</script>");
  cr_assert(end);
  cr_assert_null(memchr(strchr(data, '>') + 1, '<', (size_t)(end - strchr(data, '>') - 1)));
  free(s.p);
  free(buf);
}

Test(report, large_payload_report_is_smaller) {
  size_t len;
  char *buf = ts_fixture("react/19.3.1/prod/feed-10mb.rsc", &len);
  cr_assert(buf);
  ts_sink s = {0};
  cr_assert_eq(rsc_report_html(buf, len, 0, NULL, ts_sink_write, &s, NULL), RSC_OK);
  cr_assert_lt(s.len, len / 4, "report %zu bytes for %zu", s.len, len);
  cr_assert(strstr(s.p, "small item") || strstr(s.p, " items\""), "small items folded or grouped");
  free(s.p);
  free(buf);
}

/* The generated header is the page as it is in the source tree. */
Test(report, page_header_matches_template) {
  size_t len;
  char *page = ts_read(RSC_FIXTURES "/../src/report_page.html", &len);
  cr_assert(page);
  size_t h = strlen(rsc__report_page_head), t = strlen(rsc__report_page_tail);
  cr_assert_eq(len, h + strlen("<!--DATA-->\n") + t, "run scripts/gen-report-page.py");
  cr_assert_eq(memcmp(page, rsc__report_page_head, h), 0, "run scripts/gen-report-page.py");
  cr_assert_eq(memcmp(page + len - t, rsc__report_page_tail, t), 0,
               "run scripts/gen-report-page.py");
  free(page);
}

static void report_any(const char *in, size_t len, int page) {
  ts_sink s = {0};
  rsc_error err;
  rsc_status st = rsc_report_html(in, len, page, NULL, ts_sink_write, &s, &err);
  cr_assert(st == RSC_OK || st == RSC_ERR_HTML, "status %d", st);
  if (st == RSC_OK) cr_assert(s.len > 0 && strstr(s.p, "</html>"));
  else cr_assert(err.msg);
  free(s.p);
}

Test(report, errors_never_crash) {
  static const char *const bad[] = {
      "",
      "0:",
      "0:[",
      "0:{\"a\":}\n",
      "0:[1,2]]\n",
      "0:{\"a\" 1}\n",
      "0:\"unterminated\n",
      "zz:garbage\n",
      "0:T10,short",
      "0:[\"$\",{\"x\":1},[2],{\"children\":[\"$\"]}]\n",
      "0:[\"$\",\"$L9\",null,\"notprops\"]\n1:I{}\n",
      "0:1 2\n",
      "0:\"$L1\"\n1:\"$L0\"\n",
      "H:x\n:HL[\"a\"\n",
      "\xff\xfe\x00\x01\n0:\"\xed\xa0\x80\xc3\"\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    report_any(bad[i], strlen(bad[i]), 0);
    report_any(bad[i], strlen(bad[i]), -1);
  }
  /* a page with no payload: RSC_ERR_HTML, with a message */
  ts_sink s = {0};
  rsc_error err;
  cr_assert_eq(
      rsc_report_html("<html><body>hi</body></html>", 28, -1, NULL, ts_sink_write, &s, &err),
      RSC_ERR_HTML);
  cr_assert(err.msg);
  cr_assert_eq(s.len, 0);
  /* no writer, a NULL input, a writer that fails */
  cr_assert_eq(rsc_report_html("0:1\n", 4, 0, NULL, NULL, NULL, &err), RSC_ERR_STATE);
  cr_assert_eq(rsc_report_html(NULL, 4, 0, NULL, ts_sink_write, &s, &err), RSC_ERR_STATE);
  ts_sink f = {.fail_at = 1};
  cr_assert_eq(rsc_report_html("0:1\n", 4, 0, NULL, ts_sink_write, &f, &err), RSC_ERR_USER);
  cr_assert_eq(f.calls, 1);
  free(f.p);
  /* nesting far past the decoder's depth limit */
  size_t depth = 300000;
  char *deep = malloc(2 * depth + 4);
  cr_assert(deep);
  memcpy(deep, "0:", 2);
  memset(deep + 2, '[', depth);
  memset(deep + 2 + depth, ']', depth);
  deep[2 + 2 * depth] = '\n';
  report_any(deep, 2 * depth + 3, 0);
  free(deep);
  /* a fixture cut anywhere, and bytes flipped */
  size_t len;
  char *buf = ts_fixture("html/next-turbopack-suspense.rsc", &len);
  cr_assert(buf);
  for (size_t cut = 0; cut < len; cut += 37) report_any(buf, cut, 0);
  uint64_t seed = 44;
  for (int round = 0; round < 200; round++) {
    char *m = malloc(len);
    memcpy(m, buf, len);
    for (int k = 0; k < 4; k++) m[ts_rand(&seed) % len] = (char)ts_rand(&seed);
    report_any(m, len, 0);
    free(m);
  }
  free(buf);
}

/* Every block of the report goes through rsc_options.alloc: a counting
 * allocator sees them all given back, and failing each call in turn gives
 * RSC_ERR_NOMEM or a page, never a crash or a block left behind (fail_at:
 * that call and every later one). */
Test(report, allocator_hooks) {
  size_t len;
  char *buf = ts_fixture("react/19.3.1/prod/page-1k.rsc", &len);
  cr_assert(buf);
  ts_counting c = {.sticky = true};
  rsc_options opt;
  rsc_options_init(&opt);
  opt.alloc = ts_counting_alloc(&c);
  ts_sink whole = {0};
  rsc_error err;
  /* counted without failing: the same page as libc's */
  c.fail_at = ~0ul;
  cr_assert_eq(rsc_report_html(buf, len, 0, &opt, ts_sink_write, &whole, &err), RSC_OK);
  unsigned long calls = c.calls;
  cr_assert_eq(c.live, 0, "%ld blocks not freed", c.live);
  /* more calls than the decode alone makes: the measuring's own blocks */
  c = (ts_counting){.fail_at = ~0ul, .sticky = true};
  rsc_decoder_free(rsc_decode(buf, len, &opt, NULL));
  cr_assert_gt(calls, c.calls + 10, "report %lu calls, decode %lu", calls, c.calls);
  ts_sink libc = {0};
  cr_assert_eq(rsc_report_html(buf, len, 0, NULL, ts_sink_write, &libc, &err), RSC_OK);
  cr_assert(whole.len == libc.len && memcmp(whole.p, libc.p, libc.len) == 0);
  for (unsigned long n = 1; n <= calls; n++) {
    c = (ts_counting){.fail_at = n, .sticky = true};
    ts_sink s = {0};
    rsc_status st = rsc_report_html(buf, len, 0, &opt, ts_sink_write, &s, &err);
    cr_assert(st == RSC_ERR_NOMEM || st == RSC_OK, "fail at %lu: %s", n, rsc_status_name(st));
    cr_assert_eq(c.live, 0, "fail at %lu: %ld blocks not freed", n, c.live);
    free(s.p);
  }
  free(whole.p);
  free(libc.p);
  free(buf);
}
