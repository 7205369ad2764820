#define _POSIX_C_SOURCE 200809L
/* test_fixtures.c - differential tests: payloads written by React's real
 * server (fixtures/react, index.json) decode to the dump React's own client
 * gave, fed whole, one byte at a time and in seeded random pieces. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "json.h"
#include "settle.h"
#include "support.h"

typedef struct fixture {
  char file[512], expected[512];
  uint32_t flags;
  rsc_bundler bundler; /* fixtures/bundlers: whose server wrote it */
} fixture;

static const char *member_str(const rsc_node *obj, const char *key, char *buf, size_t cap) {
  const rsc_node *v = rsc_object_get(obj, key, strlen(key));
  size_t n;
  const char *s = rsc_node_string(v, &n);
  if (!s || n >= cap) return NULL;
  memcpy(buf, s, n);
  buf[n] = 0;
  return buf;
}

/* <dir>/index.json: [{"file","expected","client_options":{...}},...],
 * plus "bundler" in fixtures/bundlers. */
static fixture *load_from(const char *dir, size_t *count) {
  size_t len;
  char index[64];
  snprintf(index, sizeof index, "%s/index.json", dir);
  char *text = ts_fixture(index, &len);
  *count = 0;
  if (!text) return NULL;
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  rsc_node root;
  const char *msg;
  cr_assert_eq(
      rsc__json_parse((rsc_json *)d->json, (const uint8_t *)text, len, false, false, &root, &msg),
      JSON_OK, "fixtures/%s does not parse", index);
  fixture *f = calloc(root.len + 1, sizeof *f);
  for (size_t i = 0; i < rsc_node_len(&root); i++) {
    const rsc_node *e = rsc_node_at(&root, i);
    fixture *x = &f[*count];
    if (!member_str(e, "file", x->file, sizeof x->file)) continue;
    if (!member_str(e, "expected", x->expected, sizeof x->expected)) continue;
    const rsc_node *co = rsc_object_get(e, "client_options", 14);
    const rsc_node *partial = rsc_object_get(co, "allow_partial", 13);
    if (rsc_node_bool(partial)) x->flags |= RSC_OPT_ALLOW_PARTIAL;
    const rsc_node *build = rsc_object_get(e, "build", 5);
    if (build && rsc_node_string(build, NULL) && strcmp(rsc_node_string(build, NULL), "dev") == 0)
      x->flags |= RSC_OPT_DEV;
    char bundler[16];
    x->bundler = RSC_BUNDLER_WEBPACK;
    if (member_str(e, "bundler", bundler, sizeof bundler)) {
      if (strcmp(bundler, "turbopack") == 0) x->bundler = RSC_BUNDLER_TURBOPACK;
      else if (strcmp(bundler, "parcel") == 0) x->bundler = RSC_BUNDLER_PARCEL;
      else if (strcmp(bundler, "rspack") == 0) x->bundler = RSC_BUNDLER_RSPACK;
      else cr_assert_fail("%s: unknown bundler %s", x->file, bundler);
    }
    (*count)++;
  }
  rsc_decoder_free(d);
  free(text);
  return f;
}

static fixture *load(size_t *count) { return load_from("react", count); }

static char *read_in(const char *dir, const char *rel, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  return ts_fixture(path, len);
}

static char *read_rel(const char *rel, size_t *len) { return read_in("react", rel, len); }

static char *outcome(rsc_decoder *d) {
  char *r;
  if (rsc_decoder_error(d)->code) {
    char buf[300];
    snprintf(buf, sizeof buf, "error %d at %llu: %s", rsc_decoder_error(d)->code,
             (unsigned long long)rsc_decoder_error(d)->offset, rsc_decoder_error(d)->msg);
    r = strdup(buf);
  } else {
    /* finish read everything the root reaches (checked before the dump,
     * which reads on its own) */
    cr_expect_eq(rsc__unread_reachable(d), 0, "the read-through at finish left a chunk unread");
    /* with RSC_OPT_TRACK_SHARED: every value met twice is one it names */
    cr_expect_eq(rsc__unshared_repeats(d), 0, "a value met twice that rsc_decoder_shares misses");
    char *t = ts_dump(d);
    r = t ? strdup(t) : strdup("dump failed");
    rsc_free(t);
  }
  rsc_decoder_free(d);
  return r;
}

Test(fixtures, whole_buffer_matches_react) {
  size_t n;
  fixture *f = load(&n);
  if (!f) cr_skip_test("fixtures/react/index.json is missing");
  int agree = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len, elen;
    char *buf = read_rel(f[i].file, &len);
    char *exp = read_rel(f[i].expected, &elen);
    cr_assert(buf && exp, "%s: missing files", f[i].file);
    char *got = outcome(ts_decode(buf, len, 0, f[i].flags | RSC_OPT_TRACK_SHARED));
    const char *why = "";
    bool eq = ts_json_equal(got, strlen(got), exp, elen, &why);
    cr_expect(eq, "%s: %s (got %.300s)", f[i].file, why, got);
    agree += eq;
    free(got);
    free(buf);
    free(exp);
  }
  cr_log_info("React server fixtures agreeing: %d of %zu", agree, n);
  free(f);
}

Test(fixtures, one_byte_and_random_pieces) {
  size_t n;
  fixture *f = load(&n);
  if (!f) cr_skip_test("fixtures/react/index.json is missing");
  uint64_t seed = 2024;
  for (size_t i = 0; i < n; i++) {
    size_t len;
    char *buf = read_rel(f[i].file, &len);
    char *whole = outcome(ts_decode(buf, len, 0, f[i].flags));
    char *one = outcome(ts_decode(buf, len, 1, f[i].flags));
    cr_expect(strcmp(one, whole) == 0, "%s: 1-byte feeds differ", f[i].file);
    free(one);
    for (int r = 0; r < 3; r++) {
      size_t cap = len / 64 + 8, nc = 0;
      size_t *cuts = malloc(cap * sizeof *cuts);
      size_t pos = 0;
      while (nc < cap) {
        pos += 1 + ts_rand(&seed) % 4096;
        if (pos >= len) break;
        cuts[nc++] = pos;
      }
      char *got = outcome(ts_decode_cuts(buf, len, cuts, nc, f[i].flags));
      cr_expect(strcmp(got, whole) == 0, "%s: random pieces (round %d) differ", f[i].file, r);
      free(got);
      free(cuts);
    }
    free(whole);
    free(buf);
  }
  free(f);
}

/* rsc_decoder_feed_padded: rows parsed where they lie, the padding after
 * the buffer read ahead but never used (it is filled with quotes,
 * backslashes and brackets here; ASan checks nothing reads past it). Whole
 * and in random pieces (each piece is followed by the rest of the buffer),
 * every fixture decodes as a plain feed does. */
static rsc_decoder *decode_padded(const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                                  uint32_t flags) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  rsc_decoder *d = rsc_decoder_new(&opt);
  size_t prev = 0;
  for (size_t i = 0; i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    rsc_decoder_feed_padded(d, buf + prev, end - prev);
    prev = end;
  }
  rsc_decoder_finish(d);
  return d;
}

Test(fixtures, padded_feeds_match_plain_ones) {
  size_t n;
  fixture *f = load(&n);
  if (!f) cr_skip_test("fixtures/react/index.json is missing");
  uint64_t seed = 7;
  for (size_t i = 0; i < n; i++) {
    size_t len;
    char *plain = read_rel(f[i].file, &len);
    char *buf = malloc(len + RSC_PADDING);
    memcpy(buf, plain, len);
    for (size_t k = 0; k < RSC_PADDING; k++) buf[len + k] = "\"\\{[:\n"[k % 6];
    char *whole = outcome(ts_decode(plain, len, 0, f[i].flags));
    char *got = outcome(decode_padded(buf, len, NULL, 0, f[i].flags));
    cr_expect(strcmp(got, whole) == 0, "%s: a padded feed differs", f[i].file);
    free(got);
    size_t cuts[64], nc = 0, pos = 0;
    while (nc < 64) {
      pos += 1 + ts_rand(&seed) % 2048;
      if (pos >= len) break;
      cuts[nc++] = pos;
    }
    got = outcome(decode_padded(buf, len, cuts, nc, f[i].flags));
    cr_expect(strcmp(got, whole) == 0, "%s: padded pieces differ", f[i].file);
    free(got);
    free(whole);
    free(buf);
    free(plain);
  }
  free(f);
}

/* rsc_decoder_reset: one decoder per option set, reset between fixtures
 * (forwards, then backwards, so big payloads come before small ones too),
 * decodes each fixture exactly as a fresh decoder does. */
Test(fixtures, a_reset_decoder_decodes_like_a_new_one) {
  size_t n;
  fixture *f = load(&n);
  if (!f) cr_skip_test("fixtures/react/index.json is missing");
  rsc_decoder *keep[4] = {0};
  const uint32_t sets[4] = {0, RSC_OPT_DEV, RSC_OPT_ALLOW_PARTIAL,
                            RSC_OPT_DEV | RSC_OPT_ALLOW_PARTIAL};
  for (size_t k = 0; k < 2 * n; k++) {
    size_t i = k < n ? k : 2 * n - 1 - k;
    size_t len;
    char *buf = read_rel(f[i].file, &len);
    int s = 0;
    while (sets[s] != f[i].flags) s++;
    if (!keep[s]) {
      rsc_options opt;
      rsc_options_init(&opt);
      opt.flags = f[i].flags;
      keep[s] = rsc_decoder_new(&opt);
    } else {
      cr_assert_eq(rsc_decoder_reset(keep[s]), RSC_OK);
    }
    rsc_decoder_feed(keep[s], buf, len);
    rsc_decoder_finish(keep[s]);
    char *got = ts_dump(keep[s]);
    char *fresh = outcome(ts_decode(buf, len, 0, f[i].flags));
    cr_expect(got && strcmp(got, fresh) == 0, "%s: reset decoder differs", f[i].file);
    rsc_free(got);
    free(fresh);
    free(buf);
  }
  for (int s = 0; s < 4; s++) rsc_decoder_free(keep[s]);
  free(f);
}

/* HTML pages (fixtures/html): the payload extracted from each page is the
 * payload its framework's runtime reads, and it decodes to the same dump,
 * which for a Next.js page is the dump Next's own Flight client gave. */
Test(fixtures, html_pages_decode_like_their_payloads) {
  size_t len;
  char *text = ts_fixture("html/index.json", &len);
  if (!text) cr_skip_test("fixtures/html/index.json is missing");
  rsc_decoder *jd = rsc_decoder_new(NULL);
  rsc_node root;
  const char *msg;
  cr_assert_eq(
      rsc__json_parse((rsc_json *)jd->json, (const uint8_t *)text, len, false, false, &root, &msg),
      JSON_OK);
  const rsc_node *list = rsc_object_get(&root, "fixtures", 8);
  cr_assert_gt(rsc_node_len(list), 10);
  int decoded = 0, next_dumps = 0;
  for (size_t i = 0; i < rsc_node_len(list); i++) {
    const rsc_node *e = rsc_node_at(list, i);
    char hname[256], pname[256], rel[300];
    if (!member_str(e, "html", hname, sizeof hname) ||
        !member_str(e, "payload", pname, sizeof pname))
      continue;
    size_t hlen, plen;
    snprintf(rel, sizeof rel, "html/%s", hname);
    char *html = ts_fixture(rel, &hlen);
    snprintf(rel, sizeof rel, "html/%s", pname);
    char *payload = ts_fixture(rel, &plen);
    cr_assert(html && payload, "%s: missing files", hname);
    char *got = NULL;
    size_t glen = 0;
    rsc_error err;
    rsc_html_flavor found;
    cr_assert_eq(rsc_html_extract(html, hlen, RSC_HTML_AUTO, &got, &glen, &err, &found), RSC_OK,
                 "%s: %s at %llu", hname, err.msg, (unsigned long long)err.offset);
    cr_expect(glen == plen && memcmp(got, payload, plen) == 0, "%s: extracted bytes differ", hname);
    char *a = outcome(ts_decode(got, glen, 0, 0));
    char *b = outcome(ts_decode(payload, plen, 0, 0));
    cr_expect_str_eq(a, b, "%s: dumps differ", hname);
    /* Next.js pages: the dump equals the one Next's own Flight client gave */
    char dname[256];
    if (member_str(e, "next_client_dump", dname, sizeof dname)) {
      size_t dlen;
      snprintf(rel, sizeof rel, "html/%s", dname);
      char *want = ts_fixture(rel, &dlen);
      cr_assert(want, "%s: missing %s", hname, dname);
      const char *why = "";
      cr_expect(ts_json_equal(a, strlen(a), want, dlen, &why), "%s: differs from %s: %s", hname,
                dname, why);
      next_dumps++;
      free(want);
    }
    /* A page whose runtime reads damaged bytes (rsc-html-stream loses a
     * byte in one hand-made case) fails alike both ways; the others decode. */
    const rsc_node *same = rsc_object_get(e, "payload_equals_server_payload", 29);
    if (!same || rsc_node_bool(same)) cr_expect(strncmp(a, "error", 5) != 0, "%s: %s", hname, a);
    decoded += strncmp(a, "error", 5) != 0;
    free(a);
    free(b);
    rsc_free(got);
    free(html);
    free(payload);
  }
  cr_log_info("HTML pages decoded: %d, equal to Next's client: %d", decoded, next_dumps);
  cr_expect_gt(next_dumps, 0, "no next_client_dump in fixtures/html/index.json");
  rsc_decoder_free(jd);
  free(text);
}

/* fixtures/bundlers: payloads from react-server-dom-turbopack, -parcel and
 * -rspack, each judged by its own package's client. Decoded with the
 * bundler's option, whole, one byte at a time and in seeded random pieces;
 * Parcel's and turbopack's also without it (Parcel's shape is recognised,
 * turbopack's is webpack's). */
static rsc_decoder *decode_for(const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                               uint32_t flags, rsc_bundler bundler) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  opt.bundler = bundler;
  rsc_decoder *d = rsc_decoder_new(&opt);
  if (!d) return NULL;
  size_t prev = 0;
  for (size_t i = 0; i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    if (end > prev) rsc_decoder_feed(d, buf + prev, end - prev);
    prev = end;
  }
  rsc_decoder_finish(d);
  return d;
}

Test(fixtures, bundler_payloads_match_their_own_clients) {
  size_t n;
  fixture *f = load_from("bundlers", &n);
  if (!f) cr_skip_test("fixtures/bundlers/index.json is missing");
  cr_expect_geq(n, 3 * 2 * 12, "fewer bundler fixtures than expected: %zu", n);
  uint64_t seed = 4040;
  int agree = 0;
  size_t per[4] = {0};
  for (size_t i = 0; i < n; i++) {
    size_t len, elen;
    char *buf = read_in("bundlers", f[i].file, &len);
    char *exp = read_in("bundlers", f[i].expected, &elen);
    cr_assert(buf && exp, "%s: missing files", f[i].file);
    per[f[i].bundler]++;
    uint32_t fl = f[i].flags;
    char *whole = outcome(decode_for(buf, len, NULL, 0, fl | RSC_OPT_TRACK_SHARED, f[i].bundler));
    const char *why = "";
    bool eq = ts_json_equal(whole, strlen(whole), exp, elen, &why);
    cr_expect(eq, "%s: %s (got %.300s)", f[i].file, why, whole);
    agree += eq;
    if (f[i].bundler == RSC_BUNDLER_PARCEL || f[i].bundler == RSC_BUNDLER_TURBOPACK) {
      char *dflt = outcome(decode_for(buf, len, NULL, 0, fl, RSC_BUNDLER_WEBPACK));
      cr_expect(ts_json_equal(dflt, strlen(dflt), exp, elen, &why),
                "%s: without the bundler option: %s (got %.300s)", f[i].file, why, dflt);
      free(dflt);
    }
    size_t *cuts = malloc((len + 1) * sizeof *cuts);
    for (size_t k = 0; k < len; k++) cuts[k] = k + 1;
    char *one = outcome(decode_for(buf, len, cuts, len, fl, f[i].bundler));
    cr_expect(strcmp(one, whole) == 0, "%s: 1-byte feeds differ", f[i].file);
    free(one);
    for (int r = 0; r < 3; r++) {
      size_t nc = 0, pos = 0;
      for (;;) {
        pos += 1 + ts_rand(&seed) % 512;
        if (pos >= len) break;
        cuts[nc++] = pos;
      }
      char *got = outcome(decode_for(buf, len, cuts, nc, fl, f[i].bundler));
      cr_expect(strcmp(got, whole) == 0, "%s: random pieces (round %d) differ", f[i].file, r);
      free(got);
    }
    free(cuts);
    free(whole);
    free(buf);
    free(exp);
  }
  cr_expect(per[RSC_BUNDLER_TURBOPACK] && per[RSC_BUNDLER_PARCEL] && per[RSC_BUNDLER_RSPACK],
            "a bundler has no fixtures");
  cr_log_info("bundler fixtures agreeing: %d of %zu", agree, n);
  free(f);
}
