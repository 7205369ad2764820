/* test_pathological.c - hostile shapes under a time limit (public API).
 *
 * Nesting 10^6 deep, chains of 10^5 rows in both directions, reference
 * bombs, cycles of lazies, a 100 MB text row: each decodes, or stops with
 * RSC_ERR_LIMIT, quickly and without deepening the C stack. The deep cases
 * also run on a thread with a 1 MB stack (the JVM's and many pools'
 * default). Under AddressSanitizer every frame is larger (about 2.5x), so
 * there the small thread gets 4 MB; the release suite checks 1 MB.
 * Regressions for what the fuzzers found are at the end. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#if defined(__SANITIZE_ADDRESS__)
#  define RSC_TEST_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define RSC_TEST_ASAN 1
#  endif
#endif
#ifdef RSC_TEST_ASAN
#  define SMALL_STACK ((size_t)4 << 20)
#else
#  define SMALL_STACK ((size_t)1 << 20)
#endif

/* ---- a growable buffer ---------------------------------------------------- */

typedef struct buf {
  char *p;
  size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1) cap *= 2;
    b->p = realloc(b->p, cap);
    cr_assert(b->p);
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void putf(buf *b, const char *fmt, unsigned long v) {
  char tmp[64];
  int n = snprintf(tmp, sizeof tmp, fmt, v);
  put(b, tmp, (size_t)n);
}
static void rep(buf *b, const char *s, size_t times) {
  size_t n = strlen(s);
  for (size_t i = 0; i < times; i++) put(b, s, n);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Decodes with a depth limit (0: default), fed in 64 KiB pieces. */
static rsc_decoder *decode(const buf *b, uint32_t max_depth, uint32_t flags, rsc_error *err) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  opt.limits.max_depth = max_depth;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert(d);
  for (size_t i = 0; i < b->len; i += 65536)
    rsc_decoder_feed(d, b->p + i, b->len - i < 65536 ? b->len - i : 65536);
  rsc_decoder_finish(d);
  *err = *rsc_decoder_error(d);
  return d;
}

/* ---- nesting ---------------------------------------------------------------- */

#define MILLION 1000000

enum shape { ARRAYS, OBJECTS, ELEMENTS, FALLBACK };

/* 0:<n levels of the shape around a value>\n, and the offset of the first
 * bracket past `limit` levels of JSON. */
static void deep(buf *b, enum shape s, size_t n, uint32_t limit, uint64_t *limit_offset) {
  puts_(b, "0:");
  uint64_t json_levels = 0;
  *limit_offset = 0;
  for (size_t i = 0; i < n; i++) {
    size_t before = b->len;
    switch (s) {
    case ARRAYS:
    case FALLBACK: puts_(b, "["); break;
    case OBJECTS: puts_(b, "{\"a\":"); break;
    case ELEMENTS: puts_(b, "[\"$\",\"div\",null,{\"children\":"); break;
    }
    /* brackets in this level: arrays 1, objects 1, elements 2 ('[' '{') */
    const char *p = b->p + before;
    for (; p < b->p + b->len; p++)
      if ((*p == '[' || *p == '{') && ++json_levels == (uint64_t)limit + 1)
        *limit_offset = (uint64_t)(p - b->p);
  }
  puts_(b, s == FALLBACK ? "\"\\ud800\"" : "\"$1\"");
  for (size_t i = 0; i < n; i++) puts_(b, s == OBJECTS ? "}" : s == ELEMENTS ? "}]" : "]");
  puts_(b, "\n1:\"leaf\"\n");
}

typedef struct deep_case {
  enum shape shape;
  size_t n;
  uint32_t max_depth; /* 0: default (5000) */
  bool expect_ok;
  bool done;
  char detail[160];
} deep_case;

static void *run_deep(void *arg) {
  deep_case *c = arg;
  buf b = {0};
  uint64_t lim_off;
  deep(&b, c->shape, c->n, c->max_depth ? c->max_depth : 5000, &lim_off);
  rsc_error e;
  rsc_decoder *d = decode(&b, c->max_depth, 0, &e);
  if (c->expect_ok) {
    char *dump = e.code == RSC_OK ? rsc_dump(d, 0, NULL) : NULL;
    bool ok = dump && strncmp(dump, "{\"ok\":", 6) == 0 &&
              strstr(dump, c->shape == FALLBACK ? "\\ud800" : "leaf") != NULL;
    snprintf(c->detail, sizeof c->detail, "code %d (%s), dump %s", e.code, e.msg ? e.msg : "-",
             ok ? "ok" : "wrong");
    c->done = e.code == RSC_OK && ok;
    rsc_free(dump);
  } else {
    snprintf(c->detail, sizeof c->detail, "code %d (%s) at %llu, want the limit at %llu", e.code,
             e.msg ? e.msg : "-", (unsigned long long)e.offset, (unsigned long long)lim_off);
    c->done = e.code == RSC_ERR_LIMIT && e.offset == lim_off && e.row_id == 0;
  }
  rsc_decoder_free(d);
  free(b.p);
  return NULL;
}

static void on_thread(void *(*fn)(void *), void *arg, size_t stack) {
  pthread_attr_t a;
  pthread_attr_init(&a);
  cr_assert_eq(pthread_attr_setstacksize(&a, stack), 0);
  pthread_t t;
  cr_assert_eq(pthread_create(&t, &a, fn, arg), 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&a);
}

static const char *shape_name[] = {"arrays", "objects", "elements", "fallback"};

/* 10^6 levels stop at the default depth limit, with the bracket's offset;
 * the same input decodes when the caller raises the limit: nothing on the
 * C stack grows with the nesting (JSON parsers, revive walk, dump). */
Test(pathological, million_deep_nesting) {
  for (int s = ARRAYS; s <= FALLBACK; s++) {
    deep_case c = {(enum shape)s, MILLION, 0, false, false, ""};
    run_deep(&c);
    cr_expect(c.done, "%s, default limit: %s", shape_name[s], c.detail);
    deep_case big = {(enum shape)s, MILLION, 3 * MILLION, true, false, ""};
    run_deep(&big);
    cr_expect(big.done, "%s, limit raised: %s", shape_name[s], big.detail);
  }
}

Test(pathological, deep_nesting_on_a_small_thread_stack) {
  for (int s = ARRAYS; s <= FALLBACK; s++) {
    deep_case at_limit = {(enum shape)s, s == ELEMENTS ? 2500 : 5000, 0, true, false, ""};
    on_thread(run_deep, &at_limit, SMALL_STACK);
    cr_expect(at_limit.done, "%s at the default limit: %s", shape_name[s], at_limit.detail);
    deep_case over = {(enum shape)s, MILLION, 0, false, false, ""};
    on_thread(run_deep, &over, SMALL_STACK);
    cr_expect(over.done, "%s past it: %s", shape_name[s], over.detail);
    deep_case raised = {(enum shape)s, 200000, MILLION, true, false, ""};
    on_thread(run_deep, &raised, SMALL_STACK);
    cr_expect(raised.done, "%s raised: %s", shape_name[s], raised.detail);
  }
}

/* ---- chains of rows -------------------------------------------------------------- */

#define CHAIN 100000

/* Rows 0..n-1, each [ref to the next], the last a leaf; written in id
 * order (forward: each waits on a row still to come) or reversed (each
 * row's reference points back at one that already came). */
static void chain(buf *b, size_t n, bool backward, const char *ref) {
  for (size_t k = 0; k < n; k++) {
    size_t id = backward ? n - k : k;
    if (backward && id == n) {
      putf(b, "%lx:\"leaf\"\n", (unsigned long)n);
      continue;
    }
    putf(b, "%lx:[\"", (unsigned long)id);
    puts_(b, ref);
    putf(b, "%lx\"]\n", (unsigned long)(id + 1));
  }
  if (backward) puts_(b, "0:[\"$1\"]\n");
  else putf(b, "%lx:\"leaf\"\n", (unsigned long)n);
}

typedef struct chain_case {
  bool backward;
  const char *ref;
  rsc_status code;
  uint64_t offset;
  bool dump_ok;
  double seconds;
} chain_case;

static void *run_chain(void *arg) {
  chain_case *c = arg;
  buf b = {0};
  chain(&b, CHAIN, c->backward, c->ref);
  double t = now();
  rsc_error e;
  rsc_decoder *d = decode(&b, 0, 0, &e);
  c->code = e.code;
  c->offset = e.offset;
  char *dump = rsc_dump(d, 0, NULL);
  c->dump_ok = dump && strncmp(dump, "{\"ok\":", 6) == 0 && strstr(dump, "leaf");
  c->seconds = now() - t;
  rsc_free(dump);
  rsc_decoder_free(d);
  free(b.p);
  return NULL;
}

/* Forward chains settle through the wake queue (no recursion), whatever
 * the reference: plain, lazy, promise. */
Test(pathological, forward_chains_of_1e5_rows) {
  const char *refs[] = {"$", "$L", "$@"};
  for (int i = 0; i < 3; i++) {
    chain_case c = {false, refs[i], 0, 0, false, 0};
    on_thread(run_chain, &c, SMALL_STACK);
    cr_expect_eq(c.code, RSC_OK, "%s", refs[i]);
    cr_expect(c.dump_ok, "%s", refs[i]);
  }
}

/* Backward plain references nest initialisations (React recurses and
 * overflows near 850): 1000 levels are allowed, then RSC_ERR_LIMIT. Lazy
 * and promise references are read one by one at finish: they decode. */
Test(pathological, backward_chains_of_1e5_rows) {
  chain_case plain = {true, "$", 0, 0, false, 0};
  on_thread(run_chain, &plain, SMALL_STACK);
  cr_expect_eq(plain.code, RSC_ERR_LIMIT);
  cr_expect(!plain.dump_ok);
  /* The error names the row whose reference could not be followed: the
   * 1000th of the chain, counted from the root (row 0x3e7 = 999). */
  buf b = {0};
  chain(&b, CHAIN, true, "$");
  const char *row = strstr(b.p, "\n3e7:");
  cr_assert(row);
  cr_expect_eq(plain.offset, (uint64_t)(row + 1 - b.p));
  free(b.p);
  const char *refs[] = {"$L", "$@"};
  for (int i = 0; i < 2; i++) {
    chain_case c = {true, refs[i], 0, 0, false, 0};
    on_thread(run_chain, &c, SMALL_STACK);
    cr_expect_eq(c.code, RSC_OK, "%s", refs[i]);
    cr_expect(c.dump_ok, "%s", refs[i]);
  }
  /* 999 levels still decode. */
  buf s = {0};
  chain(&s, 998, true, "$");
  rsc_error e;
  rsc_decoder *d = decode(&s, 0, 0, &e);
  cr_expect_eq(e.code, RSC_OK, "%s", e.msg ? e.msg : "");
  rsc_decoder_free(d);
  free(s.p);
}

/* A consumer that reads each chunk as its row arrives keeps a backward
 * chain shallow: every read finds the previous row already revived. */
Test(pathological, backward_chain_read_as_it_streams) {
  rsc_decoder *d = rsc_decoder_new(NULL);
  char row[64];
  int n = snprintf(row, sizeof row, "1:\"leaf\"\n");
  rsc_decoder_feed(d, row, (size_t)n);
  for (unsigned long k = 2; k <= CHAIN; k++) {
    n = snprintf(row, sizeof row, "%lx:[\"$%lx\"]\n", k, k - 1);
    cr_assert_eq(rsc_decoder_feed(d, row, (size_t)n), RSC_OK);
    cr_assert_eq(rsc_chunk_status(rsc_decoder_chunk(d, (int64_t)k)), RSC_CHUNK_FULFILLED);
  }
  n = snprintf(row, sizeof row, "0:\"$%lx\"\n", (unsigned long)CHAIN);
  rsc_decoder_feed(d, row, (size_t)n);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  char *dump = rsc_dump(d, 0, NULL);
  cr_expect(dump && strstr(dump, "leaf"));
  rsc_free(dump);
  rsc_decoder_free(d);
}

/* ---- reference bombs ------------------------------------------------------------ */

/* Each row references its neighbour twice: 2^n paths through n values.
 * Shared values are the same node, so decoding stays linear in time and
 * memory. Written forward (row k = ["$k+1","$k+1"], rows in id order) or
 * backward (row k = ["$k-1","$k-1"], each read as it arrives). */
static rsc_decoder *bomb(size_t n, bool backward, double *secs) {
  rsc_decoder *d = rsc_decoder_new(NULL);
  buf b = {0};
  double t = now();
  if (!backward) {
    for (size_t k = 0; k < n; k++) {
      putf(&b, "%lx:[\"$", (unsigned long)k);
      putf(&b, "%lx\",\"$", (unsigned long)(k + 1));
      putf(&b, "%lx\"]\n", (unsigned long)(k + 1));
    }
    putf(&b, "%lx:\"leaf\"\n", (unsigned long)n);
    rsc_decoder_feed(d, b.p, b.len);
  } else {
    rsc_decoder_feed(d, "1:\"leaf\"\n", 9);
    for (size_t k = 2; k <= n; k++) {
      b.len = 0;
      putf(&b, "%lx:[\"$", (unsigned long)k);
      putf(&b, "%lx\",\"$", (unsigned long)(k - 1));
      putf(&b, "%lx\"]\n", (unsigned long)(k - 1));
      rsc_decoder_feed(d, b.p, b.len);
      rsc_chunk_status(rsc_decoder_chunk(d, (int64_t)k));
    }
    b.len = 0;
    putf(&b, "0:\"$%lx\"\n", (unsigned long)n);
    rsc_decoder_feed(d, b.p, b.len);
  }
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK, "%s", rsc_decoder_error(d)->msg);
  *secs = now() - t;
  free(b.p);
  return d;
}

/* Follows the bomb down through the public accessors: both slots hold the
 * same value (one identity) at every level. */
static size_t bomb_levels(rsc_decoder *d) {
  const rsc_node *v = rsc_chunk_value(rsc_decoder_root(d));
  size_t levels = 0;
  while (rsc_node_kind(v) == RSC_ARRAY) {
    cr_assert_eq(rsc_node_len(v), 2);
    cr_assert_eq(rsc_node_identity(rsc_node_at(v, 0)), rsc_node_identity(rsc_node_at(v, 1)));
    v = rsc_node_at(v, 0);
    levels++;
  }
  cr_expect_str_eq(rsc_node_string(v, NULL), "leaf");
  return levels;
}

Test(pathological, reference_bomb_is_linear) {
  for (int dir = 0; dir < 2; dir++) {
    double t1, t2;
    rsc_decoder *small = bomb(CHAIN / 10, dir, &t1);
    rsc_decoder *big = bomb(CHAIN, dir, &t2);
    size_t p1 = rsc_decoder_peak_memory(small), p2 = rsc_decoder_peak_memory(big);
    cr_expect_eq(bomb_levels(big), dir ? CHAIN - 1 : CHAIN);
    /* 10x the rows: about 10x the memory and (loosely) the time */
    cr_expect(p2 < 12 * p1 + ((size_t)8 << 20), "memory %zu vs %zu", p2, p1);
    cr_expect(p2 < (size_t)CHAIN * 1024, "memory %zu", p2);
    cr_expect(t2 < 40 * t1 + 0.5, "time %.3fs vs %.3fs", t2, t1);
    rsc_decoder_free(small);
    rsc_decoder_free(big);
  }
}

/* The dump writes a shared value's second meeting as a ref, never a copy:
 * "leaf" is written twice (in the innermost array) whatever the depth. A ref is a JSON Pointer to
 * the first place, and here the first place of level k is k levels deep, so the dump of an n-level
 * bomb holds about n^2 pointer bytes (the format's cost; the dump's own memory besides its text
 * stays linear). */
Test(pathological, reference_bomb_dump_uses_refs) {
  const size_t n = 2000;
  for (int dir = 0; dir < 2; dir++) {
    double t;
    rsc_decoder *d = bomb(n, dir, &t);
    size_t len = 0;
    char *dump = rsc_dump(d, 0, &len);
    cr_assert(dump);
    size_t refs = 0, leaves = 0;
    for (const char *p = dump; (p = strstr(p, "\"ref\"")) != NULL; p++) refs++;
    for (const char *p = dump; (p = strstr(p, "leaf")) != NULL; p++) leaves++;
    cr_expect_eq(leaves, 2); /* the innermost ["leaf","leaf"]: strings have no identity */
    cr_expect_eq(refs, dir ? n - 2 : n - 1);
    cr_expect(len < 3 * n * n + 64 * n, "%zu bytes", len);
    rsc_free(dump);
    rsc_decoder_free(d);
  }
}

/* ---- cycles ------------------------------------------------------------------------ */

static char *dump_of(const char *in, size_t len, rsc_status *code) {
  rsc_error e;
  rsc_decoder *d = rsc_decode(in, len, NULL, &e);
  *code = e.code;
  char *dump = rsc_dump(d, 0, NULL);
  rsc_decoder_free(d);
  return dump;
}

#define S(lit) lit, sizeof(lit) - 1

/* A cycle of lazies (or promises) has no value with identity to stop at.
 * React's client loops forever unwrapping it; rscflight stops: the dump
 * writes the inner wrapper as a ref to the enclosing one, and a path
 * through it is an invalid reference. (Found by fuzz_decode.) */
Test(pathological, cycles_of_lazies_terminate) {
  rsc_status code;
  char *s = dump_of(S("0:\"$L0\"\n"), &code);
  cr_expect_str_eq(s, "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\","
                      "\"to\":\"/ok\"}}}");
  rsc_free(s);
  s = dump_of(S("0:\"$@0\"\n"), &code);
  cr_expect_str_eq(s, "{\"ok\":{\"$\":\"promise\",\"status\":\"fulfilled\",\"value\":{\"$\":"
                      "\"ref\",\"to\":\"/ok\"}}}");
  rsc_free(s);
  s = dump_of(S("1:\"$L1\"\n0:\"$1\"\n"), &code);
  cr_expect_str_eq(s, "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\","
                      "\"to\":\"/ok\"}}}");
  rsc_free(s);
  s = dump_of(S("1:\"$L2\"\n2:\"$L1\"\n0:{\"a\":\"$1:x\"}\n"), &code);
  cr_expect_str_eq(s, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Invalid reference.\"}}");
  rsc_free(s);
  s = dump_of(S("1:\"$L2\"\n2:\"$L1\"\n0:[\"$L1\",\"$L1\"]\n"), &code);
  cr_expect_str_eq(s, "{\"ok\":[{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"lazy\","
                      "\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\",\"to\":\"/ok/0\"}}},"
                      "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"lazy\","
                      "\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\",\"to\":\"/ok/1\"}}}]}");
  rsc_free(s);
  /* With a value that has identity in between, the wrapper is written anew
   * and that value as a ref, as React's oracle writes it
   * (docs/spec/CANONICAL-DUMP.md 5; the dump used to write a ref to the
   * wrapper: found by running the fuzz corpus through the Python binding). */
  s = dump_of(S("1:{\"x\":\"$L1\"}\n0:\"$L1\"\n"), &code);
  cr_expect_str_eq(
      s, "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":{\"x\":{\"$\":"
         "\"lazy\",\"status\":\"fulfilled\",\"value\":{\"$\":\"ref\",\"to\":\"/ok/value\"}}}}}");
  rsc_free(s);
  s = dump_of(S("1:[\"$L2\"]\n2:\"$L1\"\n0:\"$L1\"\n"), &code);
  cr_expect_str_eq(s, "{\"ok\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":[{\"$\":\"lazy\","
                      "\"status\":\"fulfilled\",\"value\":{\"$\":\"lazy\",\"status\":\"fulfilled\","
                      "\"value\":{\"$\":\"ref\",\"to\":\"/ok/value\"}}}]}}");
  rsc_free(s);
  /* Self references with identity are plain refs (docs/spec/FLIGHT-PROTOCOL.md
   * 6.4). */
  s = dump_of(S("0:{\"self\":\"$0\",\"l\":\"$L0\"}\n"), &code);
  cr_expect_eq(code, RSC_OK);
  cr_expect(s && strstr(s, "\"ref\""));
  rsc_free(s);
}

/* React's cycle search after a blocked chunk resolves (resolveBlockedCycle)
 * walks every path of waiting scopes: a chain where each chunk is waited on
 * twice by the next has 2^n of them. The search is bounded here. */
Test(pathological, blocked_cycle_search_is_bounded) {
  buf b = {0};
  size_t k = 900;
  for (size_t i = k; i >= 2; i--) {
    putf(&b, "%lx:[\"$", (unsigned long)i);
    putf(&b, "%lx\",\"$", (unsigned long)(i - 1));
    putf(&b, "%lx\"]\n", (unsigned long)(i - 1));
  }
  putf(&b, "0:[\"$%lx\"]\n", (unsigned long)k);
  puts_(&b, "1:\"$fffff\"\n"); /* blocked for ever: its own dependency never comes */
  double t = now();
  rsc_error e;
  rsc_decoder *d = rsc_decode(b.p, b.len, NULL, &e);
  cr_expect_eq(e.code, RSC_OK);
  char *dump = rsc_dump(d, 0, NULL);
  cr_expect(dump != NULL);
  cr_expect(now() - t < 5.0, "%.2fs", now() - t);
  rsc_free(dump);
  rsc_decoder_free(d);
  free(b.p);
}

/* ---- big and many ------------------------------------------------------------------ */

Test(pathological, hundred_megabyte_text_row) {
  size_t n = (size_t)100 << 20;
  char *text = malloc(n);
  cr_assert(text);
  for (size_t i = 0; i < n; i++) text[i] = (char)('a' + i % 26);
  rsc_decoder *d = rsc_decoder_new(NULL);
  char hdr[32];
  int h = snprintf(hdr, sizeof hdr, "1:T%zx,", n);
  rsc_decoder_feed(d, hdr, (size_t)h);
  for (size_t i = 0; i < n; i += 1 << 20) rsc_decoder_feed(d, text + i, 1 << 20);
  rsc_decoder_feed(d, "0:\"$1\"\n", 7);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  size_t len = 0;
  const char *s = rsc_node_string(rsc_chunk_value(rsc_decoder_root(d)), &len);
  cr_expect_eq(len, n);
  cr_expect(s && memcmp(s, text, n) == 0);
  rsc_decoder_free(d);
  free(text);
}

Test(pathological, hundred_thousand_references_in_one_row) {
  buf b = {0};
  puts_(&b, "0:[");
  for (unsigned long i = 1; i <= CHAIN; i++) putf(&b, i > 1 ? ",\"$%lx\"" : "\"$%lx\"", i);
  puts_(&b, "]\n");
  for (unsigned long i = 1; i <= CHAIN; i++) putf(&b, "%lx:1\n", i);
  rsc_error e;
  rsc_decoder *d = decode(&b, 0, 0, &e);
  cr_expect_eq(e.code, RSC_OK);
  cr_expect_eq(rsc_node_len(rsc_chunk_value(rsc_decoder_root(d))), CHAIN);
  rsc_decoder_free(d);
  free(b.p);
}

/* ---- amplification ------------------------------------------------------------------ */

/* A Map or Set of n integer keys: the duplicate check once put every small
 * integer in one hash bucket (n^2 steps); now linear. */
Test(pathological, map_of_integer_keys_is_linear) {
  buf b = {0};
  puts_(&b, "1:[");
  for (unsigned long i = 0; i < 200000; i++) putf(&b, i ? ",[%lu,0]" : "[%lu,0]", i);
  puts_(&b, "]\n2:[");
  for (unsigned long i = 0; i < 200000; i++) putf(&b, i ? ",%lu" : "%lu", i * 4096);
  puts_(&b, "]\n0:[\"$Q1\",\"$W2\"]\n");
  double t = now();
  rsc_error e;
  rsc_decoder *d = decode(&b, 0, 0, &e);
  cr_expect_eq(e.code, RSC_OK);
  const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
  cr_expect_eq(rsc_node_len(rsc_node_at(root, 0)), 400000); /* 2 x entries */
  cr_expect_eq(rsc_node_len(rsc_node_at(root, 1)), 200000);
  cr_expect(now() - t < 5.0, "%.2fs", now() - t);
  rsc_decoder_free(d);
  free(b.p);
}

/* JavaScript puts an object's array-index keys first, ascending: 200,000
 * of them in descending order, between other keys and with a duplicate,
 * took an insertion sort n^2 / 2 steps (6.7 s for 60,000). */
Test(pathological, index_keys_in_descending_order_sort_in_n_log_n) {
  buf b = {0};
  puts_(&b, "0:{\"z\":1");
  for (unsigned long i = 200000; i >= 1; i--) {
    putf(&b, ",\"%lu\":0", i);
    if (i == 100000) puts_(&b, ",\"m\":2");
  }
  puts_(&b, ",\"7\":3,\"a\":4}\n"); /* "7" again: its last value, in index order */
  double t = now();
  rsc_error e;
  rsc_decoder *d = decode(&b, 0, 0, &e);
  cr_assert_eq(e.code, RSC_OK, "%s", e.msg);
  const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
  cr_assert_eq(rsc_node_len(root), 200003);
  size_t n;
  const char *k = rsc_object_key(root, 0, &n);
  cr_expect(k && n == 1 && k[0] == '1');
  k = rsc_object_key(root, 199999, &n);
  cr_expect(k && n == 6 && memcmp(k, "200000", 6) == 0);
  k = rsc_object_key(root, 200000, &n);
  cr_expect(k && n == 1 && k[0] == 'z', "the other keys follow in their order");
  cr_expect_eq(rsc_node_number(rsc_object_get(root, "7", 1)), 3);
  cr_expect(now() - t < 5.0, "%.2fs", now() - t);
  rsc_decoder_free(d);
  free(b.p);
}

/* Path steps into a wide object: 50,000 references into an object of
 * 50,000 members took n^2 member comparisons (10.7 s for 1.15 MB); a key
 * index built on the first step makes each one constant time. Members that
 * revive deleted stay absent through the index, as in a narrow object. */
Test(pathological, paths_into_a_wide_object_are_linear) {
  const unsigned long n = 50000;
  buf b = {0};
  puts_(&b, "1:{");
  for (unsigned long i = 0; i < n; i++)
    putf(&b, i ? ",\"k%lu\":" : "\"k%lu\":", i), putf(&b, "%lu", i);
  puts_(&b, ",\"gone\":\"$undefined\"}\n0:[");
  for (unsigned long i = 0; i < n; i++)
    putf(&b, i ? ",\"$1:k%lu\"" : "\"$1:k%lu\"", (i * 7919) % n);
  puts_(&b, "]\n");
  double t = now();
  rsc_error e;
  rsc_decoder *d = decode(&b, 0, 0, &e);
  cr_assert_eq(e.code, RSC_OK, "%s", e.msg);
  const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
  cr_assert_eq(rsc_node_len(root), n);
  for (unsigned long i = 0; i < n; i += 997)
    cr_expect_eq(rsc_node_number(rsc_node_at(root, i)), (double)((i * 7919) % n));
  cr_expect(now() - t < 5.0, "%.2fs", now() - t);
  rsc_decoder_free(d);
  /* the deleted member, and a key that is not there */
  b.len = 0;
  for (int k = 0; k < 2; k++) {
    b.len = 0;
    puts_(&b, "1:{");
    for (unsigned long i = 0; i < 40; i++) putf(&b, i ? ",\"k%lu\":1" : "\"k%lu\":1", i);
    puts_(&b, ",\"gone\":\"$undefined\"}\n");
    puts_(&b, k ? "0:\"$1:gone\"\n" : "0:\"$1:k40\"\n");
    d = decode(&b, 0, 0, &e);
    cr_assert_eq(e.code, RSC_OK);
    const rsc_node *r = rsc_chunk_reason(rsc_decoder_root(d));
    cr_expect(r != NULL, "case %d: rejected", k);
    rsc_decoder_free(d);
  }
  free(b.p);
}

/* Each "$Q", "$W", "$K" and "$B" copies what it references, as React's
 * new Map(...) and new Blob(...) do: n references to one row of m entries
 * hold n * m values. The copies count against max_nodes, which stops them;
 * by default it grows with the input (rsc__node_cap: 2^20 values plus 64
 * per byte read, at most 2^25). */
/* A Map row of 2,000 entries, a Blob of a 64 KB text row, and a root of
 * refs references to each (about 82 KB, plus 14 bytes a pair). */
static void copies_payload(buf *b, unsigned long refs) {
  b->len = 0;
  puts_(b, "1:[");
  for (unsigned long i = 0; i < 2000; i++) putf(b, i ? ",[%lu,0]" : "[%lu,0]", i);
  puts_(b, "]\n2:T10000,");
  rep(b, "x", 0x10000);
  puts_(b, "3:[\"text/plain\",\"$2\"]\n0:[");
  for (unsigned long i = 0; i < refs; i++) puts_(b, i ? ",\"$Q1\",\"$B3\"" : "\"$Q1\",\"$B3\"");
  puts_(b, "]\n");
}

Test(pathological, copies_count_against_the_node_limit) {
  buf b = {0};
  copies_payload(&b, 1000);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.limits.max_nodes = 1 << 20;
  rsc_error e;
  rsc_decoder *d = rsc_decode(b.p, b.len, &opt, &e);
  cr_expect_eq(e.code, RSC_ERR_LIMIT);
  cr_expect_str_eq(e.msg, "too many values");
  cr_expect(rsc_decoder_peak_memory(d) < ((size_t)64 << 20), "%zu", rsc_decoder_peak_memory(d));
  rsc_decoder_free(d);
  /* 8M values copied from 100 KB: past the default bound (80 a byte), and
   * within a limit the caller sets. */
  d = rsc_decode(b.p, b.len, NULL, &e);
  cr_expect_eq(e.code, RSC_ERR_LIMIT);
  cr_expect(rsc_decoder_peak_memory(d) < ((size_t)160 << 20), "%zu", rsc_decoder_peak_memory(d));
  rsc_decoder_free(d);
  opt.limits.max_nodes = (uint64_t)1 << 25;
  d = rsc_decode(b.p, b.len, &opt, &e);
  cr_expect_eq(e.code, RSC_OK, "%s", e.msg ? e.msg : "");
  rsc_decoder_free(d);
  /* Half the references, 4M values: within the default bound. */
  copies_payload(&b, 500);
  d = rsc_decode(b.p, b.len, NULL, &e);
  cr_expect_eq(e.code, RSC_OK, "%s", e.msg ? e.msg : "");
  rsc_decoder_free(d);
  free(b.p);
}

/* Found by fuzz_decode (a 10 s timeout under ASan): Blobs of the row that
 * holds them. Each "$B1" waits for row 1, and each Blob made when it
 * resolves copies the Blobs made before it: the bytes double with every
 * reference, so 40 of them in 250 bytes asked for 2^40 times the text.
 * The default node bound stopped them at 512 MiB (2.9 s, 693 MB resident);
 * now it grows with the input, and they stop at 16 MiB. */
Test(pathological, blobs_of_blobs_of_one_row_stop_early) {
  buf b = {0};
  puts_(&b, "1:[\"text/plain\",\"");
  rep(&b, "x", 64);
  puts_(&b, "\"");
  for (int i = 0; i < 40; i++) puts_(&b, ",\"$B1\"");
  puts_(&b, "]\n0:\"$1\"\n");
  double t = now();
  rsc_error e;
  rsc_decoder *d = decode(&b, 0, 0, &e);
  cr_expect_eq(e.code, RSC_ERR_LIMIT);
  cr_expect_str_eq(e.msg, "too many values");
  cr_expect_eq(e.row_id, 1);
  cr_expect(rsc_decoder_peak_memory(d) < ((size_t)64 << 20), "%zu", rsc_decoder_peak_memory(d));
  cr_expect(now() - t < 5.0, "%.2fs", now() - t);
  rsc_decoder_free(d);
  /* Three of them decode, as in React: each Blob holds "ab", the Blobs made
   * before it and "null" for each slot still waiting (14, 24, 44 bytes). */
  b.len = 0;
  puts_(&b, "1:[\"t\",\"ab\",\"$B1\",\"$B1\",\"$B1\"]\n0:\"$1\"\n");
  d = decode(&b, 0, 0, &e);
  cr_assert_eq(e.code, RSC_OK, "%s", e.msg ? e.msg : "");
  const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
  cr_assert_eq(rsc_node_len(root), 5);
  size_t n = 0;
  const uint8_t *bytes = rsc_node_bytes(rsc_node_at(root, 4), &n);
  cr_expect(bytes && n == 44 && memcmp(bytes, "ababnull", 8) == 0, "%zu", n);
  rsc_decoder_free(d);
  free(b.p);
}

/* ---- fuzz regressions ---------------------------------------------------------------- */

/* fuzz_walk, UBSan: a development element's "validated" slot held 9.2e9,
 * cast to int. */
Test(pathological, fuzz_validated_slot_out_of_int_range) {
  static const char in[] = "0:[\"$\",\"div\",null,{},null,null,9254740000]\n"
                           "1:[\"$\",\"div\",null,{},null,null,\"$NaN\"]\n";
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_DEV;
  rsc_error e;
  rsc_decoder *d = rsc_decode(in, sizeof in - 1, &opt, &e);
  cr_expect_eq(e.code, RSC_OK);
  cr_expect_eq(rsc_chunk_status(rsc_decoder_chunk(d, 1)), RSC_CHUNK_FULFILLED);
  rsc_decoder_free(d);
}

/* fuzz_decode, split versus whole: the row limit's offset depended on
 * where the feed boundaries fell. */
Test(pathological, fuzz_row_limit_offset_independent_of_feeds) {
  static const char in[] = "0:{\"s\":\"$1\"}\n";
  for (size_t piece = 1; piece <= sizeof in; piece++) {
    rsc_options opt;
    rsc_options_init(&opt);
    opt.limits.max_row_bytes = 1;
    rsc_decoder *d = rsc_decoder_new(&opt);
    for (size_t i = 0; i < sizeof in - 1; i += piece)
      rsc_decoder_feed(d, in + i, sizeof in - 1 - i < piece ? sizeof in - 1 - i : piece);
    cr_expect_eq(rsc_decoder_error(d)->code, RSC_ERR_LIMIT);
    cr_expect_eq(rsc_decoder_error(d)->offset, 3, "piece %zu", piece);
    rsc_decoder_free(d);
  }
}

/* fuzz_walk: an async iterable item that revives to undefined has no
 * "value" member in its result; rsc_stream_at gave NULL for an index
 * inside rsc_stream_len. It is an UNDEFINED node. */
Test(pathological, fuzz_iterator_item_undefined) {
  static const char in[] = "1:x\n0:\"$1\"\n1:\"$undefined\"\n1:2\n1:C\"$undefined\"\n";
  rsc_error e;
  rsc_decoder *d = rsc_decode(in, sizeof in - 1, NULL, &e);
  cr_assert_eq(e.code, RSC_OK, "%s", e.msg ? e.msg : "");
  const rsc_node *s = rsc_chunk_value(rsc_decoder_root(d));
  cr_assert_eq(rsc_node_kind(s), RSC_STREAM);
  cr_assert_eq(rsc_stream_len(s), 2);
  cr_expect_eq(rsc_node_kind(rsc_stream_at(s, 0)), RSC_UNDEFINED);
  cr_expect_eq(rsc_node_number(rsc_stream_at(s, 1)), 2);
  cr_expect_null(rsc_stream_at(s, 2));
  cr_expect_eq(rsc_stream_end_of(s), RSC_STREAM_DONE);
  cr_expect_eq(rsc_node_kind(rsc_stream_end_value(s)), RSC_UNDEFINED);
  rsc_decoder_free(d);
}

/* fuzz_walk (timeout, then out of memory): a client reference's metadata
 * is printed anew wherever the reference appears, and was printed as a
 * tree: an I row whose chunk list names the module itself never ended, and
 * shared values inside the metadata doubled at every level. Inside one
 * client reference a value met again is now a ref, like anywhere else. */
Test(pathological, fuzz_client_ref_metadata_cycle) {
  rsc_status code;
  char *s = dump_of(S("4:I[1,[\"$4\"],\"x\"]\n0:\"$4\"\n"), &code);
  cr_expect_eq(code, RSC_OK);
  cr_expect_str_eq(
      s, "{\"ok\":{\"$\":\"client_ref\",\"id\":1,\"chunks\":[{\"$\":\"client_ref\",\"id\":1,"
         "\"chunks\":{\"$\":\"ref\",\"to\":\"/ok/chunks\"},\"name\":\"x\"}],\"name\":\"x\"}}");
  rsc_free(s);
  /* 40 levels, each sharing the next twice: 2^40 nodes as a tree. */
  buf b = {0};
  for (unsigned long k = 1; k < 40; k++) {
    putf(&b, "%lx:[\"$", k);
    putf(&b, "%lx\",\"$", k + 1);
    putf(&b, "%lx\"]\n", k + 1);
  }
  puts_(&b, "28:1\n29:I[1,\"$1\",\"c\"]\n0:[\"$29\",\"$29\"]\n");
  double t = now();
  s = dump_of(b.p, b.len, &code);
  cr_expect_eq(code, RSC_OK);
  cr_expect(s && strlen(s) < 100000, "%zu bytes", s ? strlen(s) : 0);
  cr_expect(now() - t < 5.0);
  rsc_free(s);
  free(b.p);
}
