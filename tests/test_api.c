/* test_api.c - the public API (include/rscflight.h), and the benchmark hook
 * a host does not see (src/bench_hooks.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rscflight.h"
#include "bench_hooks.h"
#include "support.h"

static const rsc_node *get(const rsc_node *obj, const char *key) {
  return rsc_object_get(obj, key, strlen(key));
}

Test(api, version_and_names) {
  cr_expect_str_eq(rsc_version(), RSC_VERSION_STRING);
  cr_expect_eq(RSC_VERSION,
               (RSC_VERSION_MAJOR << 16) | (RSC_VERSION_MINOR << 8) | RSC_VERSION_PATCH);
  cr_expect_str_eq(rsc_status_name(RSC_ERR_BAD_ID), "bad row id");
  cr_expect_str_eq(rsc_status_name(RSC_ERR_BAD_VALUE), "value no server writes");
  cr_expect_str_eq(rsc_kind_name(RSC_ELEMENT), "element");
  cr_expect_str_eq(rsc_binary_kind_name(RSC_BIGUINT64), "BigUint64Array");
}

Test(api, accessors_are_safe_on_null_and_wrong_kinds) {
  cr_expect_eq(rsc_node_kind(NULL), RSC_NONE);
  cr_expect_eq(rsc_node_len(NULL), 0);
  cr_expect_null(rsc_node_at(NULL, 0));
  cr_expect_null(rsc_node_string(NULL, NULL));
  cr_expect_null(rsc_element_type(NULL));
  cr_expect_null(rsc_chunk_value(NULL));
  cr_expect_eq(rsc_chunk_id(NULL), -1);
  rsc_decoder *d = ts_decode_str("0:[1,\"a\"]\n", 0);
  const rsc_node *arr = ts_root_value(d);
  cr_assert_eq(rsc_node_kind(arr), RSC_ARRAY);
  size_t len = 99;
  cr_expect_null(rsc_node_string(arr, &len));
  cr_expect_eq(len, 0);
  cr_expect_eq(rsc_node_number(rsc_node_at(arr, 1)), 0, "a string is not a number");
  cr_expect_null(rsc_node_at(arr, 2));
  cr_expect_null(rsc_element_props(arr));
  cr_expect_null(rsc_object_get(arr, "x", 1));
  cr_expect_null(rsc_error_message(arr));
  cr_expect_eq(rsc_node_identity(rsc_node_at(arr, 0)), 0);
  rsc_decoder_free(d);
  rsc_decoder_free(NULL);
}

Test(api, values_and_kinds) {
  rsc_decoder *d = ts_decode_str("1:I[\"mod/B.js\",[\"c1\",\"c1.js\"],\"B\",1]\n"
                                 "2:[[\"k\",1]]\n"
                                 "3:o3,\x01\x02\x03"
                                 "0:{\"el\":[\"$\",\"$L1\",\"k\",{\"n\":\"$n-12\"}],\"m\":\"$Q2\","
                                 "\"b\":\"$3\",\"d\":\"$D2020-01-01T00:00:00.000Z\","
                                 "\"u\":\"$undefined\",\"z\":\"$-0\",\"e\":\"$Z\",\"s\":\"$$x\"}\n",
                                 0);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  const rsc_node *root = ts_root_value(d);
  cr_assert_eq(rsc_node_kind(root), RSC_OBJECT);
  cr_expect_eq(rsc_node_len(root), 7, "u is absent");
  cr_expect_null(get(root, "u"));
  const rsc_node *el = get(root, "el");
  cr_assert_eq(rsc_node_kind(el), RSC_ELEMENT);
  cr_expect_str_eq(ts_str(rsc_element_key(el)), "k");
  const rsc_node *type = rsc_element_type(el);
  cr_assert_eq(rsc_node_kind(type), RSC_LAZY);
  const rsc_chunk *mod = rsc_node_chunk(type);
  cr_expect_eq(rsc_chunk_id(mod), 1);
  cr_assert_eq(rsc_chunk_status(mod), RSC_CHUNK_FULFILLED);
  const rsc_node *cref = rsc_chunk_value(mod);
  cr_assert_eq(rsc_node_kind(cref), RSC_CLIENT_REF);
  cr_expect_str_eq(ts_str(rsc_client_ref_id(cref)), "mod/B.js");
  cr_expect_str_eq(ts_str(rsc_client_ref_name(cref)), "B");
  cr_expect_eq(rsc_node_len(rsc_client_ref_chunks(cref)), 2);
  cr_expect(rsc_client_ref_is_async(cref));
  const rsc_node *big = get(rsc_element_props(el), "n");
  cr_expect_eq(rsc_node_kind(big), RSC_BIGINT);
  cr_expect_str_eq(ts_str(big), "-12");
  const rsc_node *m = get(root, "m");
  cr_assert_eq(rsc_node_kind(m), RSC_MAP);
  cr_expect_eq(rsc_node_len(m), 2);
  cr_expect_str_eq(ts_str(rsc_node_at(m, 0)), "k");
  cr_expect_eq(rsc_node_number(rsc_node_at(m, 1)), 1);
  size_t blen;
  const uint8_t *bytes = rsc_node_bytes(get(root, "b"), &blen);
  cr_assert_eq(blen, 3);
  cr_expect_eq(bytes[2], 3);
  cr_expect_eq(rsc_node_binary_kind(get(root, "b")), RSC_UINT8);
  cr_expect_eq(rsc_node_kind(get(root, "d")), RSC_DATE);
  double z = rsc_node_number(get(root, "z"));
  cr_expect(z == 0 && signbit(z));
  cr_expect_eq(rsc_node_kind(get(root, "e")), RSC_ERROR);
  cr_expect_null(rsc_error_digest(get(root, "e")));
  cr_expect_str_eq(ts_str(get(root, "s")), "$x");
  size_t klen;
  cr_expect_str_eq(rsc_object_key(root, 0, &klen), "el");
  rsc_decoder_free(d);
}

/* Keys keep their length wherever they were made: simdjson's rows, rows
 * only the fallback parser reads (a lone surrogate, 1e400), duplicate keys
 * merged, index keys moved first. (An iterator's {done, value}, whose keys
 * are static, is read by key in chunks::streams.) */
Test(api, object_keys_keep_their_length) {
  rsc_decoder *d =
      ts_decode_str("0:{\"k\\ud800\":1,\"a longer key than most\":1e400,\"b\":2,\"b\":3,\"10\":4,"
                    "\"\":5}\n",
                    0);
  const rsc_node *root = ts_root_value(d);
  cr_assert_eq(rsc_node_kind(root), RSC_OBJECT);
  cr_assert_eq(rsc_node_len(root), 5);
  static const struct {
    const char *key;
    size_t len;
  } want[] = {{"10", 2}, {"k\xed\xa0\x80", 4}, {"a longer key than most", 22}, {"b", 1}, {"", 0}};
  for (size_t i = 0; i < 5; i++) {
    size_t klen = 99;
    const char *k = rsc_object_key(root, i, &klen);
    cr_assert_not_null(k);
    cr_expect_eq(klen, want[i].len, "key %zu: length %zu", i, klen);
    cr_expect(memcmp(k, want[i].key, want[i].len) == 0, "key %zu", i);
  }
  cr_expect_eq(rsc_node_number(get(root, "b")), 3);
  rsc_decoder_free(d);
}

/* Shared values are one node: a reference never copies. */
Test(api, references_share_identity) {
  rsc_decoder *d = ts_decode_str(
      "1:{\"x\":1}\n0:{\"a\":\"$1\",\"b\":\"$1\",\"c\":\"$0:a\",\"self\":\"$0\"}\n", 0);
  const rsc_node *root = ts_root_value(d);
  uintptr_t a = rsc_node_identity(get(root, "a"));
  cr_expect_neq(a, 0);
  cr_expect_eq(rsc_node_identity(get(root, "b")), a);
  cr_expect_eq(rsc_node_identity(get(root, "c")), a);
  cr_expect_eq(rsc_node_identity(get(root, "self")), rsc_node_identity(root));
  rsc_decoder_free(d);
}

/* RSC_OPT_TRACK_SHARED names what a reference placed, forward references
 * and the values a Map copies out of its row included, and nothing else. */
Test(api, shares_names_what_references_placed) {
  /* 4 arrives before the root: the JSON stage places it (rsc__arrived_value) */
  const char *payload = "4:o2,ab"
                        "0:{\"a\":\"$1\",\"p\":\"$2:q\",\"m\":\"$Q3\",\"own\":[1],"
                        "\"self\":\"$0\",\"bin\":\"$4\"}\n"
                        "1:{\"x\":[2]}\n2:{\"q\":{\"r\":1},\"s\":[3]}\n"
                        "3:[[\"k\",{\"v\":1}]]\n";
  rsc_decoder *d = ts_decode_str(payload, RSC_OPT_TRACK_SHARED);
  const rsc_node *root = ts_root_value(d);
  cr_assert_not_null(root);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(root)), 1);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(root, "a"))), 1);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(root, "p"))), 1);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(root, "m"))), 1);
  const rsc_node *v = rsc_node_at(get(root, "m"), 1); /* the Map's value {"v":1} */
  cr_expect_eq(rsc_node_kind(v), RSC_OBJECT);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(v)), 1);
  cr_expect_eq(rsc_node_kind(get(root, "bin")), RSC_BINARY);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(root, "bin"))), 1);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(root, "own"))), 0);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(get(root, "a"), "x"))), 0);
  const rsc_node *two = rsc_chunk_value(rsc_decoder_chunk(d, 2));
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(two, "s"))), 0);
  rsc_decoder_free(d);
  /* Without the option every identity may be shared. */
  d = ts_decode_str(payload, 0);
  cr_expect_eq(rsc_decoder_shares(d, rsc_node_identity(get(ts_root_value(d), "own"))), 1);
  /* A reset forgets them. */
  rsc_decoder_free(d);
  d = ts_decode_str(payload, RSC_OPT_TRACK_SHARED);
  uintptr_t a = rsc_node_identity(get(ts_root_value(d), "a"));
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_expect_eq(rsc_decoder_shares(d, a), 0);
  rsc_decoder_free(d);
}

/* A streaming consumer can use the root before later rows come (H7). */
Test(api, root_usable_before_later_rows) {
  rsc_decoder *d = rsc_decoder_new(NULL);
  const char *r0 = "0:[\"$\",\"div\",null,{\"children\":\"$1\"}]\n";
  cr_assert_eq(rsc_decoder_feed(d, r0, strlen(r0)), RSC_OK);
  const rsc_chunk *root = rsc_decoder_root(d);
  cr_assert_eq(rsc_chunk_status(root), RSC_CHUNK_FULFILLED);
  const rsc_node *lazy = rsc_chunk_value(root);
  cr_assert_eq(rsc_node_kind(lazy), RSC_LAZY);
  cr_expect_eq(rsc_chunk_status(rsc_node_chunk(lazy)), RSC_CHUNK_BLOCKED);
  cr_expect_eq(rsc_chunk_status(rsc_decoder_chunk(d, 1)), RSC_CHUNK_PENDING);
  cr_assert_eq(rsc_decoder_feed(d, "1:\"late\"\n", 9), RSC_OK);
  cr_assert_eq(rsc_chunk_status(rsc_node_chunk(lazy)), RSC_CHUNK_FULFILLED);
  const rsc_node *el = rsc_chunk_value(rsc_node_chunk(lazy));
  cr_expect_str_eq(ts_str(get(rsc_element_props(el), "children")), "late");
  cr_expect_eq(rsc_decoder_finish(d), RSC_OK);
  rsc_decoder_free(d);
}

typedef struct seen {
  int settled, hints, debug;
  int64_t order[16];
  char hint_code;
  char hint_href[32];
} seen;

static int on_event(void *ctx, const rsc_event *ev) {
  seen *s = ctx;
  if (ev->kind == RSC_EVENT_CHUNK_SETTLED && s->settled < 16) s->order[s->settled++] = ev->chunk_id;
  if (ev->kind == RSC_EVENT_HINT) {
    s->hints++;
    s->hint_code = ev->tag;
    size_t n;
    const char *h = rsc_node_string(rsc_node_at(ev->value, 0), &n);
    if (h && n < sizeof s->hint_href) memcpy(s->hint_href, h, n + 1);
  }
  if (ev->kind == RSC_EVENT_DEBUG_ROW) s->debug++;
  return 0;
}

/* A decoder whose hook records into *s (cleared). */
static rsc_decoder *hooked_decoder(seen *s) {
  memset(s, 0, sizeof *s);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.on_event = on_event;
  opt.event_ctx = s;
  return rsc_decoder_new(&opt);
}

Test(api, consumer_hook_sees_settles_hints_and_debug_rows) {
  seen s;
  rsc_decoder *d = hooked_decoder(&s);
  const char *in =
      ":N1.5\n:HL[\"/f.woff2\",\"font\"]\n0:{\"p\":\"$@1\"}\n1:D{\"time\":1}\n1:\"v\"\n";
  cr_assert_eq(rsc_decoder_feed(d, in, strlen(in)), RSC_OK);
  rsc_decoder_finish(d);
  cr_expect(rsc_decoder_is_dev(d), "a :N first row switches to development semantics");
  cr_expect_eq(s.hints, 1);
  cr_expect_eq(s.hint_code, 'L');
  cr_expect_str_eq(s.hint_href, "/f.woff2");
  cr_expect_eq(s.debug, 2);
  cr_assert_geq(s.settled, 1);
  cr_expect_eq(s.order[0], 0, "the root settles first");
  rsc_decoder_free(d);
}

/* Rows nothing waits for stay unparsed until the read-through at finish,
 * which reads them in the order the dump meets them: an element's type,
 * key and props in turn, an object's members and an array's items left to
 * right, each subtree before the next sibling. */
Test(api, the_read_through_reads_in_dump_order) {
  seen s;
  rsc_decoder *d = hooked_decoder(&s);
  const char *in = "1:{\"t\":1}\n2:{\"k\":2}\n3:{\"p\":\"$L5\"}\n4:[4]\n5:[5]\n6:[6]\n"
                   "0:[[\"$\",\"$L1\",\"$L2\",{\"a\":\"$L3\",\"b\":[\"$L4\"]}],\"$L6\"]\n";
  cr_assert_eq(rsc_decoder_feed(d, in, strlen(in)), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  static const int64_t want[] = {0, 1, 2, 3, 5, 4, 6};
  cr_assert_eq(s.settled, 7);
  for (int i = 0; i < 7; i++)
    cr_expect_eq(s.order[i], want[i], "settle %d: chunk %lld", i, (long long)s.order[i]);
  rsc_decoder_free(d);
}

static int stop_at_first(void *ctx, const rsc_event *ev) {
  (void)ctx;
  return ev->kind == RSC_EVENT_CHUNK_SETTLED;
}

Test(api, a_hook_can_stop_the_decoder) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.on_event = stop_at_first;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_expect_eq(rsc_decoder_feed(d, "0:1\n1:2\n", 8), RSC_ERR_USER);
  cr_expect_eq(rsc_decoder_feed(d, "2:3\n", 4), RSC_ERR_USER, "errors are sticky");
  rsc_decoder_free(d);
}

Test(api, errors_are_sticky_and_feed_after_finish_fails) {
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_expect_eq(rsc_decoder_feed(d, "0:1\n", 4), RSC_OK);
  cr_expect_eq(rsc_decoder_finish(d), RSC_OK);
  cr_expect_eq(rsc_decoder_finish(d), RSC_OK, "finish twice is harmless");
  cr_expect_eq(rsc_decoder_feed(d, "1:2\n", 4), RSC_ERR_STATE);
  const rsc_error *e = rsc_decoder_error(d);
  cr_expect_eq(e->code, RSC_ERR_STATE);
  cr_expect_eq(e->offset, 4);
  cr_expect_null(rsc_dump(d, 0, NULL), "no dump from a failed decoder");
  rsc_decoder_free(d);
  cr_expect_eq(rsc_decoder_feed(NULL, "x", 1), RSC_ERR_STATE);
  /* One-byte feeds in the middle of a row being gathered (the framer's
   * fast path), then after finish; and after an error. */
  d = rsc_decoder_new(NULL);
  cr_expect_eq(rsc_decoder_feed(d, "1:[\"abcdefgh", 12), RSC_OK);
  cr_expect_eq(rsc_decoder_feed(d, "i", 1), RSC_OK);
  cr_expect_eq(rsc_decoder_finish(d), RSC_OK);
  cr_expect_eq(rsc_decoder_feed(d, "j", 1), RSC_ERR_STATE);
  cr_expect_eq(rsc_decoder_error(d)->offset, 13, "the offset counts the byte-sized feed");
  rsc_decoder_free(d);
  d = rsc_decoder_new(NULL);
  cr_expect_eq(rsc_decoder_feed(d, "0:1\n0:2\n1:[\"abcdefgh", 21), RSC_ERR_DUPLICATE_ROW);
  cr_expect_eq(rsc_decoder_feed(d, "i", 1), RSC_ERR_DUPLICATE_ROW);
  rsc_decoder_free(d);
}

Test(api, one_shot_equals_streaming) {
  const char *in = "1:T5,a\nb\nc2:[\"$1\",\"$@3\"]\n0:{\"x\":\"$2\",\"y\":\"$L3\"}\n3:\"three\"\n";
  rsc_error err;
  memset(&err, 0x5a, sizeof err);
  rsc_decoder *a = rsc_decode(in, strlen(in), NULL, &err);
  cr_expect_eq(err.code, RSC_OK);
  cr_expect_null(err.msg);
  char *da = rsc_dump(a, 0, NULL);
  rsc_decoder *b = rsc_decoder_new(NULL);
  for (size_t i = 0; i < strlen(in); i += 3)
    rsc_decoder_feed(b, in + i, strlen(in) - i < 3 ? strlen(in) - i : 3);
  rsc_decoder_finish(b);
  char *db = rsc_dump(b, 0, NULL);
  cr_expect_str_eq(da, db);
  cr_expect_str_eq(da, "{\"ok\":{\"x\":[\"a\\nb\\nc\",{\"$\":\"promise\",\"status\":\"fulfilled\","
                       "\"value\":\"three\"}],"
                       "\"y\":{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":\"three\"}}}");
  rsc_free(da);
  rsc_free(db);
  rsc_decoder_free(a);
  rsc_decoder_free(b);
}

static size_t alloc_calls, free_calls;
static void *count_malloc(void *ctx, size_t n) {
  (void)ctx;
  alloc_calls++;
  return malloc(n);
}
static void *count_realloc(void *ctx, void *p, size_t old, size_t n) {
  (void)ctx;
  (void)old;
  alloc_calls++;
  return realloc(p, n);
}
static void count_free(void *ctx, void *p) {
  (void)ctx;
  if (p) free_calls++;
  free(p);
}

Test(api, custom_allocator_is_used) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.alloc.malloc = count_malloc;
  opt.alloc.realloc = count_realloc;
  opt.alloc.free = count_free;
  rsc_decoder *d = rsc_decoder_new(&opt);
  const char *in = "0:{\"a\":[1,2,3],\"b\":\"$1\"}\n1:T3,abc";
  rsc_decoder_feed(d, in, strlen(in));
  rsc_decoder_finish(d);
  cr_expect_gt(alloc_calls, 0);
  cr_expect_gt(rsc_decoder_peak_memory(d), 0);
  cr_expect_eq(rsc_decoder_bytes(d), strlen(in));
  rsc_decoder_free(d);
  cr_expect_gt(free_calls, 0);
}

/* A reset clears the sticky error, the chunks and the mode (a dev row seen
 * before), keeps the options, and the decoder works as new. */
Test(api, reset_starts_a_new_stream) {
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  const char bad[] = "0:[1,\n";
  rsc_decoder_feed(d, "1:\"x\"\n", 6);
  rsc_decoder_feed(d, "zz", 2); /* bad id */
  cr_assert_neq(rsc_decoder_error(d)->code, RSC_OK);
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_expect_eq(rsc_decoder_error(d)->code, RSC_OK);
  cr_expect_eq(rsc_decoder_bytes(d), 0);
  cr_expect_null(rsc_decoder_chunk(d, 1), "chunk 1 of the old stream is gone");
  const char good[] = "0:{\"a\":\"$1\"}\n1:[2]\n";
  cr_assert_eq(rsc_decoder_feed(d, good, strlen(good)), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  const rsc_node *a = get(ts_root_value(d), "a");
  cr_expect_eq(rsc_node_number(rsc_node_at(a, 0)), 2);
  cr_expect_eq(rsc_decoder_chunk_count(d), 2);
  /* Errors come at offsets of the new stream. */
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  rsc_decoder_feed(d, bad, strlen(bad));
  rsc_decoder_finish(d);
  const rsc_node *r = rsc_chunk_value(rsc_decoder_root(d));
  cr_expect(r == NULL || rsc_node_kind(r) != RSC_ARRAY);
  /* A reset after finish, many times: memory stays bounded by the largest
   * stream (blocks are reused, not added). */
  size_t peak = 0;
  for (int i = 0; i < 200; i++) {
    cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
    char row[64];
    int n = snprintf(row, sizeof row, "0:[\"$1\",%d]\n1:\"%0*d\"\n", i, 40, i);
    cr_assert_eq(rsc_decoder_feed(d, row, (size_t)n), RSC_OK);
    cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
    cr_expect_eq(rsc_node_number(rsc_node_at(ts_root_value(d), 1)), i);
    if (i == 10) peak = rsc_decoder_peak_memory(d);
  }
  cr_expect_eq(rsc_decoder_peak_memory(d), peak);
  /* A big row between small ones: its big blocks are found again after a
   * reset (the smallest spare that fits), not allocated anew beside them. */
  size_t big = (size_t)3 << 20, first = 0;
  char *text = malloc(big + 4096); /* 50 small rows, the big one, the root */
  cr_assert(text);
  for (int i = 0; i < 12; i++) {
    cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
    size_t n = 0;
    for (int k = 0; k < 50; k++) n += (size_t)sprintf(text + n, "%x:[%d,\"x\"]\n", k + 2, k);
    n += (size_t)sprintf(text + n, "1:\"");
    memset(text + n, 'a', big);
    n += big;
    n += (size_t)sprintf(text + n, "\"\n0:[\"$1\",\"$2\"]\n");
    cr_assert_eq(rsc_decoder_feed(d, text, n), RSC_OK);
    cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
    size_t slen = 0;
    cr_expect(rsc_node_string(rsc_node_at(ts_root_value(d), 0), &slen) && slen == big);
    /* The first reset may gather small blocks into one (arena.c): from
     * the second round on, the same memory each time, never more. */
    size_t now = rsc_decoder_peak_memory(d);
    if (i == 0) first = now;
    if (i == 1) peak = now;
    cr_expect_leq(now, first, "round %d: %zu, round 0 %zu", i, now, first);
    if (i > 1) cr_expect_eq(now, peak, "round %d: %zu, round 1 %zu", i, now, peak);
  }
  free(text);
  cr_expect_eq(rsc_decoder_reset(NULL), RSC_ERR_STATE);
  rsc_decoder_free(d);
}

/* Development elements carry their owner (tuple slot 4), also when it
 * fills the element later through a reference (its chunk was blocked);
 * an owner still pending is dropped, as React's client without a debug
 * channel drops it. Production elements have none, and their "_owner" is
 * not a property a path can reach. */
/* A payload of n small rows and a root that lists them: a few hundred KB
 * of arena for n = 4000, over 1 MiB of input for n = 40000. */
static char *many_rows(int n, size_t *len) {
  char *b = malloc((size_t)n * 48 + 16);
  size_t k = 0;
  for (int i = 1; i <= n; i++)
    k += (size_t)sprintf(b + k, "%x:{\"a\":\"s%d\",\"b\":[1,2]}\n", i, i);
  k += (size_t)sprintf(b + k, "0:[");
  for (int i = 1; i <= n; i++) k += (size_t)sprintf(b + k, "%s\"$%x\"", i > 1 ? "," : "", i);
  k += (size_t)sprintf(b + k, "]\n");
  *len = k;
  return b;
}

static int warm_events;
static int count_event(void *ctx, const rsc_event *ev) {
  (void)ctx;
  (void)ev;
  warm_events++;
  return 0;
}

/* rsc_decoder_free keeps one freed decoder (default allocator) for the
 * next rsc_decoder_new: it comes back empty, under the new caller's
 * options, still holding its memory. */
Test(api, freed_decoder_is_kept_for_the_next) {
  rsc_release_memory();
  size_t len;
  char *big = many_rows(4000, &len);
  rsc_options lenient;
  rsc_options_init(&lenient);
  lenient.flags = RSC_OPT_LENIENT_IDS | RSC_OPT_DEV;
  rsc_decoder *d1 = rsc_decoder_new(&lenient);
  cr_assert_eq(rsc_decoder_feed(d1, big, len), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d1), RSC_OK);
  size_t held = rsc_decoder_peak_memory(d1);
  cr_assert_gt(held, (size_t)256 << 10, "%zu", held);
  rsc_decoder_free(d1);

  /* Same decoder, emptied; the lenient and development flags are gone,
   * the hook is the new one. */
  rsc_options hooked;
  rsc_options_init(&hooked);
  hooked.on_event = count_event;
  rsc_decoder *d2 = rsc_decoder_new(&hooked);
  cr_expect_eq(d2, d1);
  cr_expect_geq(rsc_decoder_peak_memory(d2), held / 2);
  cr_expect_eq(rsc_decoder_bytes(d2), 0);
  cr_expect_eq(rsc_decoder_error(d2)->code, RSC_OK);
  cr_expect_not(rsc_decoder_is_dev(d2));
  cr_expect_eq(rsc_chunk_status(rsc_decoder_root(d2)), RSC_CHUNK_PENDING);
  cr_expect_eq(rsc_decoder_feed(d2, "A:1\n", 4), RSC_ERR_BAD_ID);
  rsc_decoder_free(d2);

  rsc_decoder *d3 = rsc_decoder_new(NULL);
  cr_expect_eq(d3, d1);
  int before = warm_events;
  cr_assert_eq(rsc_decoder_feed(d3, "0:[7]\n", 6), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d3), RSC_OK);
  cr_expect_eq(rsc_node_number(rsc_node_at(ts_root_value(d3), 0)), 7);
  cr_expect_eq(warm_events, before, "the hook of a decoder freed before was called");

  /* Another depth limit sizes simdjson's buffers otherwise: a new decoder,
   * and the kept one stays for a decoder like it. */
  rsc_decoder_free(d3);
  rsc_options deep;
  rsc_options_init(&deep);
  deep.limits.max_depth = 100;
  rsc_decoder *d4 = rsc_decoder_new(&deep);
  cr_expect_neq(d4, d1);
  cr_expect_lt(rsc_decoder_peak_memory(d4), held / 2);
  rsc_decoder *d5 = rsc_decoder_new(NULL);
  cr_expect_eq(d5, d1);
  rsc_decoder_free(d4); /* replaces nothing: the slot was empty */
  rsc_decoder_free(d5); /* replaces d4, which is freed */

  /* rsc_release_memory frees the kept one. */
  rsc_release_memory();
  rsc_decoder *d6 = rsc_decoder_new(NULL);
  cr_expect_lt(rsc_decoder_peak_memory(d6), held / 2);
  rsc_decoder_free(d6);
  rsc_release_memory();
  free(big);
}

/* A decoder that held more is kept too, with at most 16 MiB of its arena
 * blocks (the largest go back, alloc::arena_trim_*): a tiny payload next
 * takes no new block. */
Test(api, a_big_decoder_is_kept_trimmed) {
  rsc_release_memory();
  size_t len;
  char *big = many_rows(200000, &len);
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_assert_eq(rsc_decoder_feed(d, big, len), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  size_t held = rsc_decoder_peak_memory(d);
  cr_assert_gt(held, (size_t)24 << 20, "%zu", held);
  rsc_decoder_free(d);
  rsc_decoder *d2 = rsc_decoder_new(NULL);
  cr_expect_eq(d2, d, "a decoder that read %zu bytes was not kept", len);
  size_t kept = rsc_decoder_peak_memory(d2);
  cr_expect_leq(kept, (size_t)16 << 20, "%zu of %zu kept", kept, held);
  cr_expect_gt(kept, (size_t)8 << 20, "%zu of %zu kept", kept, held);
  cr_assert_eq(rsc_decoder_feed(d2, "0:[1]\n", 6), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d2), RSC_OK);
  cr_expect_eq(rsc_node_number(rsc_node_at(ts_root_value(d2), 0)), 1);
  cr_expect_eq(rsc_decoder_peak_memory(d2), kept, "a tiny payload took a new block");
  rsc_decoder_free(d2);
  rsc_release_memory();
  free(big);
}

Test(api, what_is_not_kept) {
  rsc_release_memory();
  /* buffers sized for a 3 MiB row, kept by a reset before a small stream */
  size_t held, row = (size_t)3 << 20;
  char *one = malloc(row + 16);
  size_t m = (size_t)sprintf(one, "0:\"");
  memset(one + m, 'a', row);
  m += row;
  m += (size_t)sprintf(one + m, "\"\n");
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_assert_eq(rsc_decoder_feed(d, one, m), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_assert_eq(rsc_decoder_feed(d, "0:1\n", 4), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  held = rsc_decoder_peak_memory(d);
  cr_assert_gt(held, row, "%zu", held);
  rsc_decoder_free(d);
  d = rsc_decoder_new(NULL);
  cr_expect_lt(rsc_decoder_peak_memory(d), held / 8, "%zu of %zu", rsc_decoder_peak_memory(d),
               held);
  rsc_decoder_free(d);
  rsc_release_memory();
  free(one);
  /* a caller's allocator: the decoder is freed through it */
  rsc_options opt;
  rsc_options_init(&opt);
  opt.alloc.malloc = count_malloc;
  opt.alloc.realloc = count_realloc;
  opt.alloc.free = count_free;
  d = rsc_decoder_new(&opt);
  rsc_decoder_feed(d, "0:1\n", 4);
  rsc_decoder_finish(d);
  size_t frees = free_calls;
  rsc_decoder_free(d);
  cr_expect_gt(free_calls, frees, "a decoder on the caller's allocator was kept");
}

/* Threads that make and free decoders at once never share one (run under
 * ASan and TSan-free builds alike: a shared decoder would mix values). */
static void *warm_worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < 2000; i++) {
    char row[64];
    int n = snprintf(row, sizeof row, "0:[%d,%d,\"$1\"]\n1:\"x\"\n", t, i);
    rsc_decoder *d = rsc_decoder_new(NULL);
    if (!d || rsc_decoder_feed(d, row, (size_t)n) != RSC_OK || rsc_decoder_finish(d) != RSC_OK)
      return (void *)1;
    const rsc_node *v = ts_root_value(d);
    if (rsc_node_number(rsc_node_at(v, 0)) != t || rsc_node_number(rsc_node_at(v, 1)) != i)
      return (void *)1;
    rsc_decoder_free(d);
  }
  return NULL;
}

Test(api, threads_make_and_free_decoders) {
  pthread_t th[3];
  for (int t = 0; t < 3; t++)
    cr_assert_eq(pthread_create(&th[t], NULL, warm_worker, (void *)(intptr_t)t), 0);
  for (int t = 0; t < 3; t++) {
    void *r;
    pthread_join(th[t], &r);
    cr_expect_null(r, "thread %d saw another's values", t);
  }
  rsc_release_memory();
}

Test(api, element_owner_in_development_only) {
  const char *now = "1:{\"name\":\"App\"}\n0:[\"$\",\"div\",null,{},\"$1\",null,1]\n";
  const char *blocked =
      "1:{\"name\":\"App\",\"x\":\"$2\"}\n0:[\"$\",\"div\",null,{},\"$1\",null,1]\n"
      "2:\"v\"\n";
  const char *pending = "0:[\"$\",\"div\",null,{},\"$1\",null,1]\n1:{\"name\":\"App\"}\n";
  const char *inputs[] = {now, blocked, pending};
  for (int k = 0; k < 3; k++) {
    rsc_decoder *d = ts_decode_str(inputs[k], RSC_OPT_DEV);
    cr_assert_not_null(d);
    const rsc_node *el = ts_root_value(d);
    while (el && rsc_node_kind(el) == RSC_LAZY) el = rsc_chunk_value(rsc_node_chunk(el));
    cr_assert_eq(rsc_node_kind(el), RSC_ELEMENT, "input %d", k);
    const rsc_node *owner = rsc_element_owner(el);
    if (k == 2) {
      cr_expect_null(owner);
    } else {
      cr_assert_not_null(owner, "input %d", k);
      cr_expect_str_eq(ts_str(get(owner, "name")), "App");
    }
    rsc_decoder_free(d);
  }
  rsc_decoder *d = ts_decode_str(now, 0);
  cr_assert_eq(rsc_node_kind(ts_root_value(d)), RSC_ELEMENT);
  cr_expect_null(rsc_element_owner(ts_root_value(d)));
  rsc_decoder_free(d);
  d = ts_decode_str(
      "2:{\"name\":\"App\"}\n1:[\"$\",\"div\",null,{},\"$2\",null,1]\n0:\"$1:_owner:name\"\n",
      RSC_OPT_DEV);
  cr_expect_str_eq(ts_str(ts_root_value(d)), "App");
  rsc_decoder_free(d);
}

/* The padding after a padded feed is read ahead, never taken as data: a
 * row cut off by its newline stays the same JSON error whatever follows
 * it, and a string or number ending at the buffer's end keeps its value
 * (each case decodes as a plain feed of the row alone does). */
Test(api, padded_feed_ignores_what_follows) {
  const char *tail = "\"]}\\u0041\",\"x\"]\n1:\"z\"\n";
  struct {
    const char *row, *dump;
  } cases[] = {
      {"0:[\"abc\"]\n", "{\"ok\":[\"abc\"]}"},
      {"0:[\"abc\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unterminated string in JSON at "
                     "position 5\"}}"},
      {"0:123\n", "{\"ok\":123}"},
      {"0:\"ab\\\"c\"\n", "{\"ok\":\"ab\\\"c\"}"},
      {"0:tru\n", "{\"rejected\":{\"$\":\"Error\",\"message\":\"Unexpected end of JSON input\"}}"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = strlen(cases[i].row);
    char *buf = malloc(n + RSC_PADDING);
    memcpy(buf, cases[i].row, n);
    for (size_t k = 0; k < RSC_PADDING; k++) buf[n + k] = tail[k % strlen(tail)];
    rsc_decoder *d = rsc_decoder_new(NULL);
    rsc_decoder_feed_padded(d, buf, n);
    rsc_decoder_finish(d);
    cr_expect_eq(rsc_decoder_error(d)->code, RSC_OK, "case %zu", i);
    char *text = rsc_dump(d, 0, NULL);
    cr_expect_str_eq(text, cases[i].dump, "case %zu", i);
    rsc_free(text);
    rsc_decoder_free(d);
    free(buf);
  }
  cr_expect_eq(rsc_decoder_feed_padded(NULL, "", 0), RSC_ERR_STATE);
}

/* Whether p lies inside [buf, buf + n). */
static bool inside(const void *p, const char *buf, size_t n) {
  return (const char *)p >= buf && (const char *)p < buf + n;
}

Test(api, borrowed_input) {
  /* RSC_OPT_BORROW_INPUT: text and binary rows stay in the fed buffer; a
   * borrowed text that becomes an error's message is copied (it has no
   * NUL: row 4 ends the buffer, so reading past it is caught under ASan);
   * rows split across feeds are copied; the tree is the same. */
  const char in[] = "2:T3,bad3:o3,\x01\x02\x03"
                    "1:{\"name\":\"E\",\"message\":\"$4\",\"stack\":[],\"env\":\"$2\"}\n"
                    "0:[\"$Z1\",\"$2\",\"$3\",\"$4\"]\n4:T3,end";
  size_t n = sizeof in - 1;
  char *buf = malloc(n); /* no byte after the last row */
  memcpy(buf, in, n);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_DEV;
  rsc_decoder *copied = rsc_decoder_new(&opt);
  rsc_decoder_feed(copied, buf, n);
  cr_assert_eq(rsc_decoder_finish(copied), RSC_OK);
  char *want = rsc_dump(copied, 0, NULL);
  cr_assert_not_null(want);

  for (size_t piece = 0; piece <= 1; piece++) { /* whole, then byte by byte */
    opt.flags = RSC_OPT_DEV | RSC_OPT_BORROW_INPUT;
    rsc_decoder *d = rsc_decoder_new(&opt);
    if (piece) {
      for (size_t i = 0; i < n; i++) rsc_decoder_feed(d, buf + i, 1);
    } else {
      rsc_decoder_feed(d, buf, n);
    }
    cr_assert_eq(rsc_decoder_finish(d), RSC_OK, "%s", rsc_decoder_error(d)->msg);
    const rsc_node *root = ts_root_value(d);
    size_t len;
    const char *text = rsc_node_string(rsc_node_at(root, 1), &len);
    const uint8_t *bytes = rsc_node_bytes(rsc_node_at(root, 2), &len);
    cr_assert(text && bytes);
    /* Whole, the rows arrive inside the buffer fed; byte by byte, never. */
    cr_expect_eq(inside(text, buf, n), !piece);
    cr_expect_eq(inside(bytes, buf, n), !piece);
    cr_expect_eq(len, 3);
    const char *message = rsc_error_message(rsc_node_at(root, 0));
    cr_expect_str_eq(message, "end");
    cr_expect(!inside(message, buf, n), "the message is a NUL-terminated copy");
    char *got = rsc_dump(d, 0, NULL);
    cr_expect_str_eq(got, want, "piece %zu", piece);
    rsc_free(got);
    rsc_decoder_free(d);
  }
  rsc_free(want);
  rsc_decoder_free(copied);
  free(buf);
}

/* I rows in each bundler's shape (rsc_options.bundler). */
static rsc_decoder *decode_bundler(const char *s, rsc_bundler bundler) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.bundler = bundler;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_not_null(d);
  rsc_decoder_feed(d, s, strlen(s));
  rsc_decoder_finish(d);
  return d;
}

static const rsc_node *module_value(rsc_decoder *d, int64_t id) {
  const rsc_chunk *c = rsc_decoder_chunk(d, id);
  cr_assert_not_null(c);
  cr_assert_eq(rsc_chunk_status(c), RSC_CHUNK_FULFILLED);
  return rsc_chunk_value(c);
}

static const char parcel_rows[] =
    "1:\"Feed.1c9e03.js\"\n"
    "5:I[\"Fd3eE\",\"Feed\",[\"$1\",\"a.js\"],{\"1c9e03\":\"/Feed.1c9e03.js\"}]\n"
    "6:I[\"Ab12C\",\"*\",[]]\n"
    "0:[\"$5\",\"$6\"]\n";

Test(api, parcel_client_refs_carry_bundles_name_and_import_map) {
  for (int pass = 0; pass < 2; pass++) {
    /* with the option, and recognised without it (a string where webpack
     * has its chunk list) */
    rsc_decoder *d = decode_bundler(parcel_rows, pass ? RSC_BUNDLER_PARCEL : RSC_BUNDLER_WEBPACK);
    cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
    const rsc_node *cr = module_value(d, 5);
    cr_assert_eq(rsc_node_kind(cr), RSC_CLIENT_REF);
    cr_expect(rsc_client_ref_is_parcel(cr));
    cr_expect_str_eq(ts_str(rsc_client_ref_id(cr)), "Fd3eE");
    cr_expect_str_eq(ts_str(rsc_client_ref_name(cr)), "Feed");
    const rsc_node *bundles = rsc_client_ref_chunks(cr);
    cr_assert_eq(rsc_node_len(bundles), 2);
    cr_expect_str_eq(ts_str(rsc_node_at(bundles, 0)), "Feed.1c9e03.js", "outlined, revived");
    cr_expect_not(rsc_client_ref_is_async(cr), "a 4th element is Parcel's import map");
    const rsc_node *map = rsc_client_ref_import_map(cr);
    cr_assert_not_null(map);
    cr_expect_str_eq(ts_str(get(map, "1c9e03")), "/Feed.1c9e03.js");
    const rsc_node *ns = module_value(d, 6);
    cr_expect_str_eq(ts_str(rsc_client_ref_name(ns)), "*");
    cr_expect_null(rsc_client_ref_import_map(ns));
    char *dump = rsc_dump(d, 0, NULL);
    cr_expect(strstr(dump, "\"chunks\":[\"Feed.1c9e03.js\",\"a.js\"],\"name\":\"Feed\","
                           "\"importMap\":{\"1c9e03\":\"/Feed.1c9e03.js\"}}") != NULL,
              "%s", dump);
    cr_expect(strstr(dump, "async") == NULL, "%s", dump);
    rsc_free(dump);
    rsc_decoder_free(d);
  }
}

Test(api, webpack_rows_stay_webpack_and_rspack_unescaped_names_are_undefined) {
  static const char rows[] = "1:I[\"app/S.js\",[\"s\",\"s.js\"],\"$store\"]\n"
                             "2:I[\"app/D.js\",[],\"$\",1]\n"
                             "3:I[\"app/W.js\",[],\"W\",1]\n"
                             "0:[\"$1\",\"$2\",\"$3\"]\n";
  rsc_decoder *d = decode_bundler(rows, RSC_BUNDLER_WEBPACK);
  const rsc_node *w = module_value(d, 3);
  cr_expect_not(rsc_client_ref_is_parcel(w));
  cr_expect(rsc_client_ref_is_async(w));
  cr_expect_null(rsc_client_ref_import_map(w));
  cr_expect_eq(rsc_node_kind(module_value(d, 2)), RSC_CLIENT_REF, "webpack keeps the metadata");
  rsc_decoder_free(d);
  d = decode_bundler(rows, RSC_BUNDLER_RSPACK);
  cr_expect_eq(rsc_node_kind(module_value(d, 2)), RSC_UNDEFINED, "\"$\" is the element marker");
  cr_expect_eq(rsc_node_kind(module_value(d, 3)), RSC_CLIENT_REF);
  cr_expect_str_eq(ts_str(rsc_client_ref_name(module_value(d, 3))), "W");
  rsc_decoder_free(d);
}

/* ---- the parse-only floor (src/bench_hooks.h) ------------------------------- */

/* The floor is not a public flag: the bit it uses inside the library is
 * ignored in a host's options, so such a decode revives as any other. */
Test(api, parse_only_bit_in_host_options_is_ignored) {
  rsc_decoder *d = ts_decode_str("0:{\"a\":\"hi\"}\n", RSC__OPT_PARSE_ONLY);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  cr_expect_str_eq(ts_str(get(ts_root_value(d), "a")), "hi");
  rsc_decoder_free(d);
  FILE *f = fopen(RSC_FIXTURES "/../include/rscflight.h", "r");
  cr_assert_not_null(f);
  char line[512];
  while (fgets(line, sizeof line, f)) cr_expect_null(strstr(line, "PARSE_ONLY"), "%s", line);
  fclose(f);
}

/* The hook frames and parses rows and builds nothing: no chunks, nothing
 * incomplete even for a stream that ends early; it holds across a reset,
 * and a decoder made afterwards from the same options is a full one. */
Test(api, parse_only_hook_builds_nothing_and_holds_across_reset) {
  static const char rows[] = "1:T5,hello2:[\"$1\",\"$3\"]\n0:{\"a\":\"$2\"}\n";
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert_not_null(d);
  rsc__decoder_set_parse_only(d);
  for (int round = 0; round < 2; round++) {
    cr_assert_eq(rsc_decoder_feed(d, rows, sizeof rows - 1), RSC_OK);
    cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
    cr_expect_eq(rsc_decoder_chunk_count(d), 1, "only the awaited root: round %d", round);
    cr_expect_null(ts_root_value(d), "round %d", round);
    cr_expect_null(rsc_decoder_incomplete(d), "row 3 never came: round %d", round);
    cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  }
  rsc_decoder_free(d);
  d = rsc_decoder_new(&opt);
  cr_assert_eq(rsc_decoder_feed(d, rows, sizeof rows - 1), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_expect_eq(rsc_decoder_chunk_count(d), 4, "0, 1, 2 and the missing 3");
  cr_expect_eq(rsc_chunk_status(rsc_decoder_chunk(d, 1)), RSC_CHUNK_FULFILLED);
  cr_expect_not_null(rsc_decoder_incomplete(d), "row 3 never came");
  rsc_decoder_free(d);
  rsc__decoder_set_parse_only(NULL); /* safe on NULL */
}

/* The walk floor is the parse-only floor plus a pass over the tape: it too
 * builds nothing, and its bit in a host's options is ignored. */
Test(api, parse_walk_hook_builds_nothing_and_its_bit_is_ignored) {
  static const char rows[] = "2:[\"$1\",{\"k\":\"$3\"}]\n0:{\"a\":\"$2\"}\n";
  rsc_decoder *d = ts_decode_str(rows, RSC__OPT_PARSE_WALK);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  cr_expect_eq(rsc_decoder_chunk_count(d), 4, "a host's bit is ignored: a full decode");
  rsc_decoder_free(d);
  rsc_options opt;
  rsc_options_init(&opt);
  d = rsc_decoder_new(&opt);
  cr_assert_not_null(d);
  rsc__decoder_set_parse_walk(d);
  cr_assert_eq(rsc_decoder_feed(d, rows, sizeof rows - 1), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_expect_eq(rsc_decoder_chunk_count(d), 1, "only the awaited root");
  cr_expect_null(ts_root_value(d));
  rsc_decoder_free(d);
  rsc__decoder_set_parse_walk(NULL); /* safe on NULL */
}

/* Containers read through handles: by index in order and out of order,
 * past the end, with bulk views from an offset, and with the revived
 * values and references that sit among plain ones. */
Test(api, array_items_by_index_in_any_order) {
  rsc_decoder *d = ts_decode_str("0:[10,\"x\",{\"a\":1},[5,6],null]\n", 0);
  const rsc_node *arr = ts_root_value(d);
  cr_assert_eq(rsc_node_len(arr), 5);
  const rsc_node *in_order[5];
  for (size_t i = 0; i < 5; i++) in_order[i] = rsc_node_at(arr, i);
  static const size_t order[] = {4, 0, 3, 1, 2, 2, 0};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
    cr_expect_eq(rsc_node_at(arr, order[k]), in_order[order[k]]);
  cr_expect_eq(rsc_node_number(in_order[0]), 10);
  cr_expect_eq(rsc_node_kind(in_order[4]), RSC_NULL);
  cr_expect_eq(rsc_node_number(rsc_node_at(in_order[3], 1)), 6);
  cr_expect_null(rsc_node_at(arr, 5));
  cr_expect_null(rsc_node_at(arr, (size_t)-1));
  cr_expect_null(rsc_node_at(in_order[3], 2));
  /* The same handles as the views' nodes, from an offset and capped. */
  rsc_view v[2];
  cr_expect_eq(rsc_node_views(arr, 2, v, 2), 5);
  cr_expect_eq(v[0].node, in_order[2]);
  cr_expect_eq(v[1].node, in_order[3]);
  cr_expect_eq(v[1].len, 2);
  cr_expect_eq(rsc_node_views(arr, 5, v, 2), 5);
  cr_expect_eq(rsc_node_views(arr, 9, v, 2), 5);
  rsc_decoder_free(d);
}

Test(api, object_members_skip_absent_ones_by_index_and_in_views) {
  rsc_decoder *d = ts_decode_str("0:{\"a\":1,\"u\":\"$undefined\",\"b\":\"x\",\"c\":[]}\n", 0);
  const rsc_node *obj = ts_root_value(d);
  cr_assert_eq(rsc_node_len(obj), 3);
  size_t len = 0;
  cr_expect_str_eq(rsc_object_key(obj, 1, &len), "b");
  cr_expect_eq(len, 1);
  cr_expect_str_eq(rsc_node_string(rsc_object_value(obj, 1), NULL), "x");
  cr_expect_null(rsc_object_key(obj, 3, &len));
  cr_expect_eq(len, 0);
  cr_expect_null(rsc_object_value(obj, 3));
  cr_expect_null(get(obj, "u"));
  cr_expect_eq(get(obj, "c"), rsc_object_value(obj, 2));
  rsc_view v[4];
  cr_expect_eq(rsc_node_views(obj, 1, v, 1), 3);
  cr_expect_str_eq(v[0].key, "b");
  cr_expect_eq(v[0].node, rsc_object_value(obj, 1));
  cr_expect_eq(rsc_node_views(obj, 0, v, 4), 3);
  cr_expect_str_eq(v[2].key, "c");
  cr_expect_eq(v[2].kind, RSC_ARRAY);
  rsc_decoder_free(d);
}

Test(api, revived_values_and_forward_references_inside_plain_arrays) {
  rsc_decoder *d = ts_decode_str("0:[1,\"$D2020-01-01\",[\"$\",\"div\",null,{}],\"$1\",[\"$1\"],"
                                 "\"$i2\"]\n1:{\"x\":1}\n2:[7,8]\n",
                                 0);
  const rsc_node *arr = ts_root_value(d);
  cr_assert_eq(rsc_node_len(arr), 6);
  cr_expect_eq(rsc_node_kind(rsc_node_at(arr, 0)), RSC_NUMBER);
  cr_expect_eq(rsc_node_kind(rsc_node_at(arr, 1)), RSC_DATE);
  cr_expect_eq(rsc_node_kind(rsc_node_at(arr, 2)), RSC_ELEMENT);
  cr_expect_str_eq(rsc_node_string(rsc_element_type(rsc_node_at(arr, 2)), NULL), "div");
  /* "$1" came before row 1: both places were filled when it arrived, and
   * hold the same object. */
  const rsc_node *one = rsc_node_at(arr, 3);
  cr_assert_eq(rsc_node_kind(one), RSC_OBJECT);
  cr_expect_eq(rsc_node_number(get(one, "x")), 1);
  cr_expect_eq(rsc_node_identity(rsc_node_at(rsc_node_at(arr, 4), 0)), rsc_node_identity(one));
  const rsc_node *it = rsc_node_at(arr, 5);
  cr_assert_eq(rsc_node_kind(it), RSC_ITERATOR);
  cr_expect_eq(rsc_node_len(it), 2);
  cr_expect_eq(rsc_node_number(rsc_node_at(it, 1)), 8);
  cr_expect_null(rsc_node_at(it, 2));
  rsc_view v[3];
  cr_expect_eq(rsc_node_views(it, 1, v, 3), 2);
  cr_expect_eq(v[0].number, 8);
  cr_expect_eq(rsc_node_views(arr, 1, v, 2), 6);
  cr_expect_eq(v[0].kind, RSC_DATE);
  cr_expect_eq(v[1].kind, RSC_ELEMENT);
  rsc_decoder_free(d);
}
