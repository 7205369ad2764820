/* builder_trees.c - the builder's trees and their intended dumps
 * (builder_trees.h). Trees marked react are the models of
 * tests/conformance/builder-react-server.cjs, built the same way. */
#include "builder_trees.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(s) rsc_build_string(b, s, strlen(s))
#define N(x) rsc_build_number(b, x)
#define H(tag) rsc_build_string(b, tag, strlen(tag))
#define FLUSH()                                                                                    \
  do {                                                                                             \
    rsc_status s_ = rsc_builder_flush(b, write, ctx);                                              \
    if (s_) return s_;                                                                             \
  } while (0)
#define TRY(x)                                                                                     \
  do {                                                                                             \
    rsc_status s_ = (x);                                                                           \
    if (s_) return s_;                                                                             \
  } while (0)

#define PROD_ERROR                                                                                 \
  "\"An error occurred in the Server Components render. The specific message is omitted in "       \
  "production builds to avoid leaking sensitive details. A digest property is included on this "   \
  "error instance which may provide additional details about the nature of the error.\""
#define ERR(digest) "{\"$\":\"Error\",\"message\":" PROD_ERROR ",\"digest\":\"" digest "\"}"
#define ERRZ "{\"$\":\"Error\",\"message\":" PROD_ERROR "}"

/* An array of n values; NULL when any is NULL or placing fails. */
static rsc_bval *arr(rsc_builder *b, int n, ...) {
  rsc_bval *a = rsc_build_array(b);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    if (rsc_build_push(b, a, va_arg(ap, rsc_bval *))) a = NULL;
  va_end(ap);
  return a;
}

/* An object of n key, value pairs. */
static rsc_bval *obj(rsc_builder *b, int n, ...) {
  rsc_bval *o = rsc_build_object(b);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) {
    const char *k = va_arg(ap, const char *);
    if (rsc_build_put(b, o, k, strlen(k), va_arg(ap, rsc_bval *))) o = NULL;
  }
  va_end(ap);
  return o;
}

static rsc_bval *set_of(rsc_builder *b, int n, ...) {
  rsc_bval *s = rsc_build_set(b);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    if (rsc_build_push(b, s, va_arg(ap, rsc_bval *))) s = NULL;
  va_end(ap);
  return s;
}

/* A map of n key, value pairs. */
static rsc_bval *map_of(rsc_builder *b, int n, ...) {
  rsc_bval *m = rsc_build_map(b);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) {
    rsc_bval *k = va_arg(ap, rsc_bval *);
    if (rsc_build_map_put(b, m, k, va_arg(ap, rsc_bval *))) m = NULL;
  }
  va_end(ap);
  return m;
}

static rsc_bval *el(rsc_builder *b, rsc_bval *type, const char *key, rsc_bval *props) {
  return rsc_build_element(b, type, key, key ? strlen(key) : 0, props);
}

/* An element with one child. */
static rsc_bval *tag1(rsc_builder *b, const char *tag, rsc_bval *child) {
  return el(b, H(tag), NULL, obj(b, 1, "children", child));
}

static rsc_bval *rep(rsc_builder *b, const char *prefix, const char *unit, size_t n) {
  size_t pl = strlen(prefix), ul = strlen(unit);
  char *s = malloc(pl + ul * n + 1);
  if (!s) return NULL;
  memcpy(s, prefix, pl);
  for (size_t i = 0; i < n; i++) memcpy(s + pl + i * ul, unit, ul);
  rsc_bval *v = rsc_build_string(b, s, pl + ul * n);
  free(s);
  return v;
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* printf into a malloc'd string. */
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  char *s = malloc((size_t)n + 1);
  va_start(ap, f);
  vsnprintf(s, (size_t)n + 1, f, ap);
  va_end(ap);
  return s;
}

static char *repeat(const char *unit, size_t n) {
  size_t ul = strlen(unit);
  char *s = malloc(ul * n + 1);
  for (size_t i = 0; i < n; i++) memcpy(s + i * ul, unit, ul);
  s[ul * n] = 0;
  return s;
}

/* --- the trees React's server wrote too --------------------------------- */

static rsc_status t_primitives(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *a = rsc_build_array(b);
  rsc_bval *items[] = {rsc_build_null(b),
                       rsc_build_bool(b, 1),
                       rsc_build_bool(b, 0),
                       N(0),
                       N(-0.0),
                       N(1.5),
                       N(1e21),
                       N(-2.5e-7),
                       N(NAN),
                       N(INFINITY),
                       N(-INFINITY),
                       rsc_build_undefined(b),
                       S("a"),
                       S("$x"),
                       S(""),
                       S("\xc3\xa9\n\"\xe2\x80\xa8"),
                       rsc_build_bigint(b, "12345678901234567890", 20),
                       rsc_build_bigint(b, "-5", 2),
                       rsc_build_date(b, "1970-01-01T00:00:00.000Z", 24),
                       rsc_build_symbol(b, "react.x", 7)};
  for (size_t i = 0; i < sizeof items / sizeof *items; i++) TRY(rsc_build_push(b, a, items[i]));
  TRY(rsc_builder_root(b, a));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_long_strings(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, obj(b, 4, "a", rep(b, "", "x", 1024), "b", rep(b, "", "y", 1023), "c",
                              rep(b, "$", "z", 1100), "d", rep(b, "", "\xc3\xa9", 1024))));
  FLUSH();
  return RSC_OK;
}

static char *d_long_strings(void) {
  char *x = repeat("x", 1024), *y = repeat("y", 1023), *z = repeat("z", 1100),
       *e = repeat("\xc3\xa9", 1024);
  char *s = fmt("{\"ok\":{\"a\":\"%s\",\"b\":\"%s\",\"c\":\"$%s\",\"d\":\"%s\"}}", x, y, z, e);
  free(x), free(y), free(z), free(e);
  return s;
}

static rsc_status t_key_order(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(
      b, obj(b, 6, "b", N(1), "2", N(2), "a", N(3), "1", N(4), "01", N(5), "4294967295", N(6))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_elements(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *kids = arr(b, 3, S("x"), el(b, H("span"), "k", obj(b, 1, "children", S("y"))),
                       el(b, H("i"), "$k", NULL));
  TRY(rsc_builder_root(b, el(b, H("div"), NULL, obj(b, 2, "className", S("a"), "children", kids))));
  FLUSH();
  return RSC_OK;
}

static rsc_bval *button(rsc_builder *b) {
  const char *chunks[] = {"main", "main.3f2a.js"};
  return rsc_build_client_ref(b, "app/Button.js", chunks, 2, "Button", 0);
}

static rsc_bval *counter(rsc_builder *b) {
  const char *chunks[] = {"widgets", "widgets.0123456789.js"};
  return rsc_build_client_ref(b, "app/widgets/Counter.js", chunks, 2, "default", 0);
}

#define BUTTON                                                                                     \
  "{\"$\":\"client_ref\",\"id\":\"app/Button.js\",\"chunks\":[\"main\",\"main.3f2a.js\"],"         \
  "\"name\":\"Button\"}"
#define COUNTER                                                                                    \
  "{\"$\":\"client_ref\",\"id\":\"app/widgets/Counter.js\",\"chunks\":[\"widgets\","               \
  "\"widgets.0123456789.js\"],\"name\":\"default\"}"
#define THING                                                                                      \
  "{\"$\":\"client_ref\",\"id\":\"app/Async.js\",\"chunks\":[],\"name\":\"Thing\",\"async\":true}"
#define LAZY(v) "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":" v "}"
#define NUMERIC                                                                                    \
  "{\"$\":\"client_ref\",\"id\":1337,\"chunks\":[7,\"7.chunk.js\",12,\"12.chunk.js\"],"            \
  "\"name\":\"default\"}"
#define ASYNC42 "{\"$\":\"client_ref\",\"id\":42,\"chunks\":[],\"name\":\"Thing\",\"async\":true}"
#define ELEM(type, key, props)                                                                     \
  "{\"$\":\"element\",\"type\":" type ",\"key\":" key ",\"props\":" props "}"

static rsc_status t_client_refs(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *B = button(b), *C = counter(b);
  rsc_bval *kids =
      arr(b, 5, el(b, B, NULL, obj(b, 1, "label", S("one"))), el(b, C, NULL, NULL),
          el(b, B, NULL, obj(b, 2, "label", S("two"), "of", B)),
          el(b, rsc_build_client_ref(b, "app/Async.js", NULL, 0, "Thing", 1), NULL, NULL),
          el(b, counter(b), NULL, NULL));
  TRY(rsc_builder_root(b, tag1(b, "main", kids)));
  FLUSH();
  return RSC_OK;
}

/* webpack's numeric module and chunk ids, given as the I row's metadata */
static rsc_status t_numeric_client_refs(rsc_builder *b, rsc_write_fn write, void *ctx) {
  static const char meta[] = "[1337,[7,\"7.chunk.js\",12,\"12.chunk.js\"],\"default\"]";
  static const char async_meta[] = "[42,[],\"Thing\",1]";
  rsc_bval *M = rsc_build_client_ref_json(b, meta, sizeof meta - 1);
  rsc_bval *kids =
      arr(b, 3, el(b, M, NULL, obj(b, 1, "n", N(1))),
          el(b, rsc_build_client_ref_json(b, meta, sizeof meta - 1), NULL, obj(b, 1, "of", M)),
          el(b, rsc_build_client_ref_json(b, async_meta, sizeof async_meta - 1), NULL, NULL));
  TRY(rsc_builder_root(b, tag1(b, "main", kids)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_map_of_sets(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *m = map_of(b, 2, S("a"), set_of(b, 2, N(1), N(2)), obj(b, 1, "k", N(1)), set_of(b, 0));
  TRY(rsc_builder_root(b, obj(b, 2, "m", m, "s", set_of(b, 1, S("x")))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_binary(rsc_builder *b, rsc_write_fn write, void *ctx) {
  static const uint8_t ab[] = {0, 0}, i8[] = {0xff}, u8[] = {1, 2, 10}, u8c[] = {0xff},
                       i16[] = {0xfe, 0xff}, u16[] = {3, 0}, i32[] = {0xfc, 0xff, 0xff, 0xff},
                       u32[] = {5, 0, 0, 0}, f32[] = {0, 0, 0xc0, 0x3f},
                       f64[] = {0, 0, 0, 0, 0, 0, 0xd0, 0xbf},
                       i64[] = {0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
                       u64[] = {7, 0, 0, 0, 0, 0, 0, 0}, dv[] = {0, 0, 0};
  static const struct {
    rsc_binary_kind k;
    const uint8_t *p;
    size_t n;
  } parts[] = {{RSC_ARRAY_BUFFER, ab, 2},   {RSC_INT8, i8, 1},      {RSC_UINT8, u8, 3},
               {RSC_UINT8_CLAMPED, u8c, 1}, {RSC_INT16, i16, 2},    {RSC_UINT16, u16, 2},
               {RSC_INT32, i32, 4},         {RSC_UINT32, u32, 4},   {RSC_FLOAT32, f32, 4},
               {RSC_FLOAT64, f64, 8},       {RSC_BIGINT64, i64, 8}, {RSC_BIGUINT64, u64, 8},
               {RSC_DATA_VIEW, dv, 3}};
  rsc_bval *a = rsc_build_array(b);
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    TRY(rsc_build_push(b, a, rsc_build_binary(b, parts[i].k, parts[i].p, parts[i].n)));
  TRY(rsc_builder_root(b, a));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_error_value(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, obj(b, 1, "e", rsc_build_error(b))));
  FLUSH();
  return RSC_OK;
}

static rsc_bval *suspense(rsc_builder *b, rsc_bval *fallback, rsc_bval *children) {
  return el(b, rsc_build_symbol(b, "react.suspense", 14), NULL,
            obj(b, 2, "fallback", fallback, "children", children));
}
#define SUSPENSE "{\"$\":\"symbol\",\"v\":\"react.suspense\"}"

static rsc_status t_suspense(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *late = rsc_build_lazy(b);
  TRY(rsc_builder_root(b, suspense(b, S("loading"), late)));
  FLUSH();
  TRY(rsc_builder_resolve(b, late, tag1(b, "b", S("late"))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_rejected(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *bad = rsc_build_lazy(b);
  TRY(rsc_builder_root(b, tag1(b, "div", bad)));
  FLUSH();
  TRY(rsc_builder_reject(b, bad, "dg"));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_promise(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *p = rsc_build_promise(b), *q = rsc_build_promise(b);
  TRY(rsc_builder_root(b, obj(b, 2, "p", p, "q", q)));
  FLUSH();
  TRY(rsc_builder_resolve(b, p, obj(b, 1, "v", N(1))));
  FLUSH();
  TRY(rsc_builder_reject(b, q, "dg"));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_nested_suspense(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *outer = rsc_build_lazy(b), *inner = rsc_build_lazy(b);
  TRY(rsc_builder_root(b, suspense(b, rsc_build_null(b), outer)));
  FLUSH();
  TRY(rsc_builder_resolve(b, outer, tag1(b, "section", inner)));
  FLUSH();
  TRY(rsc_builder_resolve(b, inner, tag1(b, "em", S("inner"))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_deferred(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, arr(b, 6, rep(b, "", "a", 1000), rep(b, "", "b", 1000),
                              rep(b, "", "c", 1000), rep(b, "", "d", 300),
                              el(b, H("i"), NULL, NULL), el(b, H("u"), NULL, NULL))));
  FLUSH();
  return RSC_OK;
}

static char *d_deferred(void) {
  char *a = repeat("a", 1000), *bb = repeat("b", 1000), *c = repeat("c", 1000),
       *d = repeat("d", 300);
  char *s = fmt("{\"ok\":[\"%s\",\"%s\",\"%s\",\"%s\"," LAZY(ELEM("\"i\"", "null", "{}")) "," LAZY(
                    ELEM("\"u\"", "null", "{}")) "]}",
                a, bb, c, d);
  free(a), free(bb), free(c), free(d);
  return s;
}

/* --- more trees ----------------------------------------------------------- */

static rsc_status t_empty_object(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, rsc_build_object(b)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_string_root(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, S("hello")));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_long_string_root(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, rep(b, "", "q", 1500)));
  FLUSH();
  return RSC_OK;
}

static char *d_long_string_root(void) {
  char *q = repeat("q", 1500);
  char *s = fmt("{\"ok\":\"%s\"}", q);
  free(q);
  return s;
}

static rsc_status t_dollar_strings(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(
      b, arr(b, 6, S("$"), S("$$"), S("$L1"), S("$@0"), S("$undefined"), obj(b, 1, "$k", S("$")))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_unicode(rsc_builder *b, rsc_write_fn write, void *ctx) {
  /* an emoji (a surrogate pair in JavaScript), a lone surrogate (WTF-8),
   * control characters, and a long string counted in UTF-16 units: 600
   * emoji are 1200 units, so a T row. */
  TRY(rsc_builder_root(b, arr(b, 4, S("\xf0\x9f\x98\x80"), S("a\xed\xa0\x80z"), S("\x01\x1f\x7f"),
                              rep(b, "", "\xf0\x9f\x98\x80", 600))));
  FLUSH();
  return RSC_OK;
}

static char *d_unicode(void) {
  char *e = repeat("\xf0\x9f\x98\x80", 600);
  char *s = fmt("{\"ok\":[\"\xf0\x9f\x98\x80\",\"a\\ud800z\",\"\\u0001\\u001f\x7f\",\"%s\"]}", e);
  free(e);
  return s;
}

static rsc_status t_deep_arrays(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *v = N(7);
  for (int i = 0; i < 50; i++) v = arr(b, 1, v);
  TRY(rsc_builder_root(b, v));
  FLUSH();
  return RSC_OK;
}

static char *d_deep_arrays(void) {
  char *o = repeat("[", 50), *c = repeat("]", 50);
  char *s = fmt("{\"ok\":%s7%s}", o, c);
  free(o), free(c);
  return s;
}

static rsc_status t_map_keys(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b,
                       map_of(b, 5, N(1), S("one"), rsc_build_null(b), S("null"), arr(b, 1, N(2)),
                              obj(b, 1, "v", rsc_build_undefined(b)), rsc_build_undefined(b),
                              rsc_build_bool(b, 1), rsc_build_bigint(b, "9", 1),
                              rsc_build_date(b, "2024-02-29T12:00:00.000Z", 24))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_set_of_maps(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, set_of(b, 3, map_of(b, 1, S("a"), N(1)), map_of(b, 0),
                                 map_of(b, 1, S("s"), set_of(b, 1, map_of(b, 1, N(0), N(0)))))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_shared_client_refs(rsc_builder *b, rsc_write_fn write, void *ctx) {
  /* each element makes its own reference value: the I rows are shared by
   * id, name and async, and the strings of 16 units or more in them too */
  rsc_bval *kids = rsc_build_array(b);
  for (int i = 0; i < 3; i++)
    TRY(rsc_build_push(b, kids, el(b, counter(b), NULL, obj(b, 1, "n", N(i)))));
  const char *more[] = {"widgets", "widgets.0123456789.js", "extra"};
  TRY(rsc_build_push(
      b, kids,
      el(b, rsc_build_client_ref(b, "app/widgets/Counter.js", more, 3, "Other", 0), NULL, NULL)));
  TRY(rsc_build_push(b, kids, obj(b, 1, "ref", counter(b))));
  TRY(rsc_builder_root(b, tag1(b, "ul", kids)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_lazy_resolved_early(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *l = rsc_build_lazy(b);
  TRY(rsc_builder_resolve(b, l, tag1(b, "p", S("now"))));
  TRY(rsc_builder_root(b, tag1(b, "div", l)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_promise_resolved_early(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *p = rsc_build_promise(b);
  TRY(rsc_builder_resolve(b, p, arr(b, 2, S("x"), N(2))));
  TRY(rsc_builder_root(b, obj(b, 1, "p", p)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_promise_rejected_early(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *p = rsc_build_promise(b), *l = rsc_build_lazy(b);
  TRY(rsc_builder_reject(b, p, "quote\"d"));
  TRY(rsc_builder_reject(b, l, NULL));
  TRY(rsc_builder_root(b, obj(b, 2, "p", p, "l", l)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_suspense_out_of_order(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *l[3];
  rsc_bval *kids = rsc_build_array(b);
  for (int i = 0; i < 3; i++) {
    l[i] = rsc_build_lazy(b);
    TRY(rsc_build_push(b, kids, suspense(b, S("..."), l[i])));
  }
  TRY(rsc_builder_root(b, tag1(b, "div", kids)));
  FLUSH();
  TRY(rsc_builder_resolve(b, l[2], tag1(b, "i", S("c"))));
  FLUSH();
  TRY(rsc_builder_resolve(b, l[0], tag1(b, "i", S("a"))));
  TRY(rsc_builder_reject(b, l[1], "b-failed"));
  FLUSH();
  return RSC_OK;
}

#define SUS(child) ELEM(SUSPENSE, "null", "{\"fallback\":\"...\",\"children\":" child "}")
#define ILAZY(text) LAZY(ELEM("\"i\"", "null", "{\"children\":\"" text "\"}"))

static rsc_status t_lazy_chain(rsc_builder *b, rsc_write_fn write, void *ctx) {
  /* a lazy settled with a lazy that settles later (its row waits for it,
   * as React's task does), and one settled with a lazy already settled
   * (written in place) */
  rsc_bval *a = rsc_build_lazy(b), *c = rsc_build_lazy(b), *d = rsc_build_lazy(b),
           *e = rsc_build_lazy(b);
  TRY(rsc_builder_root(b, arr(b, 2, a, d)));
  FLUSH();
  TRY(rsc_builder_resolve(b, a, c));
  TRY(rsc_builder_resolve(b, e, S("e")));
  TRY(rsc_builder_resolve(b, d, e));
  FLUSH();
  TRY(rsc_builder_resolve(b, c, S("c")));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_lazy_to_map(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *l = rsc_build_lazy(b);
  TRY(rsc_builder_root(b, obj(b, 1, "data", l)));
  FLUSH();
  TRY(rsc_builder_resolve(b, l, map_of(b, 1, S("k"), set_of(b, 1, S("v")))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_lazy_long_text(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *l = rsc_build_lazy(b);
  TRY(rsc_builder_root(b, tag1(b, "pre", l)));
  FLUSH();
  TRY(rsc_builder_resolve(b, l, rep(b, "line\n", "0123456789", 200)));
  FLUSH();
  return RSC_OK;
}

static char *d_lazy_long_text(void) {
  char *t = repeat("0123456789", 200);
  char *s =
      fmt("{\"ok\":" ELEM("\"pre\"", "null", "{\"children\":" LAZY("\"line\\n%s\"") "}") "}", t);
  free(t);
  return s;
}

static rsc_status t_scalars_mix(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(
      b, obj(b, 6, "when", rsc_build_date(b, "2001-09-09T01:46:40.000Z", 24), "big",
             rsc_build_bigint(b, "-170141183460469231731687303715884105728", 40), "sym",
             rsc_build_symbol(b, "app.token", 9), "sym2", rsc_build_symbol(b, "app.token", 9),
             "frag", rsc_build_symbol(b, "react.fragment", 14), "err", rsc_build_error(b))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_undefined_members(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, obj(b, 3, "a", rsc_build_undefined(b), "b",
                              arr(b, 2, rsc_build_undefined(b), rsc_build_null(b)), "c",
                              el(b, H("x"), NULL, obj(b, 1, "u", rsc_build_undefined(b))))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_many_promises(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *p[20];
  rsc_bval *a = rsc_build_array(b);
  for (int i = 0; i < 20; i++) TRY(rsc_build_push(b, a, p[i] = rsc_build_promise(b)));
  TRY(rsc_builder_root(b, a));
  FLUSH();
  for (int i = 19; i >= 0; i--) {
    TRY(rsc_builder_resolve(b, p[i], N(i)));
    if (i % 5 == 0) FLUSH();
  }
  return RSC_OK;
}

static char *d_many_promises(void) {
  char buf[4096], *o = buf;
  o += sprintf(o, "{\"ok\":[");
  for (int i = 0; i < 20; i++)
    o += sprintf(o, "%s{\"$\":\"promise\",\"status\":\"fulfilled\",\"value\":%d}", i ? "," : "", i);
  sprintf(o, "]}");
  return dup(buf);
}

static rsc_status t_binary_in_map(rsc_builder *b, rsc_write_fn write, void *ctx) {
  static const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static const uint8_t f32[] = {0, 0, 0x80, 0x7f, 0, 0, 0x80, 0xff};
  TRY(rsc_builder_root(b, map_of(b, 3, S("img"), rsc_build_binary(b, RSC_UINT8, png, 8), S("inf"),
                                 rsc_build_binary(b, RSC_FLOAT32, f32, 8), S("none"),
                                 rsc_build_binary(b, RSC_ARRAY_BUFFER, NULL, 0))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_fragment_and_keys(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *kids = arr(b, 2, el(b, H("li"), "1", obj(b, 1, "children", S("one"))),
                       el(b, H("li"), "2", obj(b, 1, "children", S("two"))));
  TRY(rsc_builder_root(
      b, el(b, rsc_build_symbol(b, "react.fragment", 14), "list", obj(b, 1, "children", kids))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_numbers(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, arr(b, 8, N(0.1), N(1e-7), N(123456789012345680000.0), N(-1e300),
                              N(5e-324), N(9007199254740991.0), N(-1), N(100))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_dollar_key(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, obj(b, 2, "$", S("d"), "x", obj(b, 1, "$", rsc_build_null(b)))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_key_replaced(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *o = obj(b, 2, "a", N(1), "b", N(2));
  TRY(rsc_build_put(b, o, "a", 1, N(3)));
  TRY(rsc_build_put(b, o, "", 0, S("empty")));
  TRY(rsc_builder_root(b, o));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_page(rsc_builder *b, rsc_write_fn write, void *ctx) {
  /* a page as a host streams it: a shell with a client nav, a list whose
   * rows arrive later, each with a shared client button and a Map of Sets */
  rsc_bval *rows = rsc_build_lazy(b);
  rsc_bval *shell = el(b, H("html"), NULL,
                       obj(b, 1, "children",
                           arr(b, 2, el(b, button(b), NULL, obj(b, 1, "label", S("home"))),
                               suspense(b, tag1(b, "p", S("loading")), rows))));
  TRY(rsc_builder_root(b, shell));
  FLUSH();
  rsc_bval *items = rsc_build_array(b);
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "item %d", i);
    TRY(rsc_build_push(
        b, items,
        el(b, H("li"), name + 5,
           obj(b, 2, "children", arr(b, 2, S(name), el(b, button(b), NULL, obj(b, 1, "id", N(i)))),
               "tags", map_of(b, 1, S("t"), set_of(b, 2, S("a"), rsc_build_bigint(b, "1", 1)))))));
  }
  TRY(rsc_builder_resolve(b, rows, tag1(b, "ul", items)));
  FLUSH();
  return RSC_OK;
}

#define ITEM(i)                                                                                    \
  ELEM("\"li\"", "\"" #i "\"",                                                                     \
       "{\"children\":[\"item " #i "\"," ELEM(                                                     \
           LAZY(BUTTON), "null",                                                                   \
           "{\"id\":" #i                                                                           \
           "}") "],\"tags\":{\"$\":\"Map\",\"entries\":[[\"t\",{\"$\":\"Set\",\"values\":[\"a\","  \
                "{\"$\":\"bigint\",\"v\":\"1\"}]}]]}}")

static rsc_status t_deferred_many(rsc_builder *b, rsc_write_fn write, void *ctx) {
  /* 40 elements of 100 units of text each: past 3200 units in the row,
   * the rest are deferred (each its own row, in a later batch) */
  rsc_bval *a = rsc_build_array(b);
  for (int i = 0; i < 40; i++) TRY(rsc_build_push(b, a, tag1(b, "p", rep(b, "", "t", 100))));
  TRY(rsc_builder_root(b, a));
  FLUSH();
  return RSC_OK;
}

static char *d_deferred_many(void) {
  /* each element counts 4 (tuple keys) + 1 ("p") + 8 ("children") + 100,
   * and its index: the ones met after 3200 units are lazies */
  char *t = repeat("t", 100);
  size_t cap = 40 * 400 + 64, len = 0;
  char *s = malloc(cap);
  len += (size_t)sprintf(s + len, "{\"ok\":[");
  size_t units = 0;
  for (int i = 0; i < 40; i++) {
    units += i < 10 ? 1 : 2;
    bool lazy = units > 3200;
    len += (size_t)sprintf(s + len,
                           "%s%s{\"$\":\"element\",\"type\":\"p\",\"key\":null,"
                           "\"props\":{\"children\":\"%s\"}}%s",
                           i ? "," : "",
                           lazy ? "{\"$\":\"lazy\",\"status\":\"fulfilled\",\"value\":" : "", t,
                           lazy ? "}" : "");
    if (!lazy) units += 4 + 1 + 8 + 100;
  }
  sprintf(s + len, "]}");
  free(t);
  return s;
}

#define PROMISE_OK(v) "{\"$\":\"promise\",\"status\":\"fulfilled\",\"value\":" v "}"

/* --- server references, FormData, Blobs, streams, iterators, shared values */

static rsc_bval *action(rsc_builder *b, const char *id, rsc_bval *bound) {
  return rsc_build_server_ref(b, id, strlen(id), bound);
}

static rsc_status t_server_refs(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *save = action(b, "app/actions.js#save", NULL);
  TRY(rsc_builder_root(b, obj(b, 4, "a", save, "again", save, "b",
                              action(b, "app/actions.js#save", arr(b, 2, N(1), S("x"))), "c",
                              action(b, "app/actions.js#other", NULL))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_form_data(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *f = rsc_build_form_data(b);
  TRY(rsc_build_form_append(b, f, "a", 1, S("b")));
  TRY(rsc_build_form_append(b, f, "a", 1, S("c")));
  TRY(rsc_build_form_append(b, f, "n", 1, S("1")));
  TRY(rsc_builder_root(b, obj(b, 1, "f", f)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_form_data_file(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *f = rsc_build_form_data(b);
  TRY(rsc_build_form_append(b, f, "a", 1, S("b")));
  TRY(rsc_build_form_append(b, f, "file", 4, rsc_build_blob(b, "text/x", 6, "zz", 2)));
  TRY(rsc_builder_root(b, f));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_blobs(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, obj(b, 3, "a", rsc_build_blob(b, "text/plain", 10, "hello world", 11),
                              "b", rsc_build_blob(b, "", 0, NULL, 0), "c",
                              rsc_build_blob(b, "", 0, "xy", 2))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_text_stream(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *s = rsc_build_stream(b, RSC_STREAM_TEXT);
  TRY(rsc_builder_stream_push(b, s, S("a")));
  TRY(rsc_builder_stream_push(b, s, obj(b, 1, "x", N(1))));
  TRY(rsc_builder_root(b, obj(b, 1, "s", s)));
  FLUSH();
  TRY(rsc_builder_stream_push(b, s, S("b")));
  TRY(rsc_builder_stream_close(b, s, NULL));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_byte_stream(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *s = rsc_build_stream(b, RSC_STREAM_BYTES);
  TRY(rsc_builder_stream_push(b, s, rsc_build_binary(b, RSC_UINT8, "\x01\x02", 2)));
  TRY(rsc_builder_root(b, obj(b, 1, "s", s)));
  FLUSH();
  TRY(rsc_builder_stream_push(b, s, rsc_build_binary(b, RSC_UINT8, "\x03", 1)));
  TRY(rsc_builder_stream_close(b, s, NULL));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_stream_error(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *s = rsc_build_stream(b, RSC_STREAM_TEXT);
  TRY(rsc_builder_stream_push(b, s, S("a")));
  TRY(rsc_builder_root(b, obj(b, 1, "s", s)));
  FLUSH();
  TRY(rsc_builder_stream_error(b, s, "dg"));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_async_iterator(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *s = rsc_build_stream(b, RSC_STREAM_ITERATOR);
  TRY(rsc_builder_stream_push(b, s, N(1)));
  TRY(rsc_builder_root(b, obj(b, 1, "it", s)));
  FLUSH();
  TRY(rsc_builder_stream_push(b, s, obj(b, 1, "a", N(2))));
  TRY(rsc_builder_stream_close(b, s, S("done")));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_async_iterable(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *s = rsc_build_stream(b, RSC_STREAM_ITERABLE);
  TRY(rsc_builder_root(b, obj(b, 1, "it", s)));
  FLUSH();
  TRY(rsc_builder_stream_push(b, s, S("x")));
  TRY(rsc_builder_stream_push(b, s, S("y")));
  TRY(rsc_builder_stream_close(b, s, NULL));
  FLUSH();
  return RSC_OK;
}

static rsc_bval *iter_of(rsc_builder *b, int n, rsc_bval *x, rsc_bval *y) {
  rsc_bval *it = rsc_build_iterator(b);
  if (rsc_build_push(b, it, x) || (n > 1 && rsc_build_push(b, it, y))) return NULL;
  return it;
}

static rsc_status t_iterators(rsc_builder *b, rsc_write_fn write, void *ctx) {
  TRY(rsc_builder_root(b, obj(b, 2, "it", iter_of(b, 2, N(1), obj(b, 1, "a", N(2))), "arr",
                              iter_of(b, 1, N(1), NULL))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_shared(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *o = obj(b, 1, "a", N(1)), *a = arr(b, 2, o, N(2)), *e = el(b, H("i"), NULL, NULL),
           *m = map_of(b, 1, N(1), N(2)), *p = obj(b, 1, "b", N(2));
  TRY(rsc_builder_root(b, obj(b, 6, "x", o, "y", a, "z", arr(b, 6, o, a, e, e, m, m), "w",
                              obj(b, 1, "deep", obj(b, 1, "o", o)), "k:1", p, "t", p)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_shared_in_element(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *o = obj(b, 1, "a", N(1));
  TRY(rsc_builder_root(b,
                       el(b, H("div"), NULL, obj(b, 3, "a", o, "b", o, "children", arr(b, 1, o)))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_shared_in_promise(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *o = obj(b, 1, "a", N(1)), *p = rsc_build_promise(b), *q = rsc_build_promise(b);
  TRY(rsc_builder_resolve(b, p, o));
  TRY(rsc_builder_resolve(b, q, arr(b, 2, o, obj(b, 1, "k", o))));
  TRY(rsc_builder_root(b, obj(b, 3, "x", o, "p", p, "q", q)));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_shared_binary(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *u = rsc_build_binary(b, RSC_UINT8, "\x01", 1), *s = set_of(b, 1, u);
  TRY(rsc_builder_root(b, arr(b, 5, u, u, s, s, obj(b, 1, "m", map_of(b, 1, S("k"), u)))));
  FLUSH();
  return RSC_OK;
}

static rsc_status t_cycle(rsc_builder *b, rsc_write_fn write, void *ctx) {
  rsc_bval *a = obj(b, 1, "n", N(1));
  TRY(rsc_build_put(b, a, "self", 4, a));
  TRY(rsc_build_put(b, a, "list", 4, arr(b, 2, a, arr(b, 1, a))));
  TRY(rsc_builder_root(b, a));
  FLUSH();
  return RSC_OK;
}

#define REF(to) "{\"$\":\"ref\",\"to\":\"" to "\"}"
#define SREF(id, bound)                                                                            \
  "{\"$\":\"server_ref\",\"id\":\"app/actions.js#" id "\",\"bound\":" bound "}"
#define UNDEF "{\"$\":\"undefined\"}"

const builder_tree bt_trees[] = {
    {"primitives", t_primitives,
     "{\"ok\":[null,true,false,0,{\"$\":\"-0\"},1.5,1e21,-2.5e-7,{\"$\":\"NaN\"},"
     "{\"$\":\"Infinity\"},{\"$\":\"-Infinity\"},{\"$\":\"undefined\"},\"a\",\"$x\",\"\","
     "\"\xc3\xa9\\n\\\"\xe2\x80\xa8\",{\"$\":\"bigint\",\"v\":\"12345678901234567890\"},"
     "{\"$\":\"bigint\",\"v\":\"-5\"},{\"$\":\"Date\",\"v\":\"1970-01-01T00:00:00.000Z\"},"
     "{\"$\":\"symbol\",\"v\":\"react.x\"}]}",
     NULL, 1},
    {"long_strings", t_long_strings, NULL, d_long_strings, 1},
    {"key_order", t_key_order,
     "{\"ok\":{\"1\":4,\"2\":2,\"b\":1,\"a\":3,\"01\":5,\"4294967295\":6}}", NULL, 1},
    {"elements", t_elements,
     "{\"ok\":" ELEM("\"div\"", "null",
                     "{\"className\":\"a\",\"children\":[\"x\"," ELEM(
                         "\"span\"", "\"k\"", "{\"children\":\"y\"}") "," ELEM("\"i\"", "\"$k\"",
                                                                               "{}") "]}") "}",
     NULL, 1},
    {"client_refs", t_client_refs,
     "{\"ok\":" ELEM(
         "\"main\"", "null",
         "{\"children\":[" ELEM(LAZY(BUTTON), "null", "{\"label\":\"one\"}") "," ELEM(
             LAZY(COUNTER), "null",
             "{}") "," ELEM(LAZY(BUTTON), "null",
                            "{\"label\":\"two\",\"of\":" BUTTON
                            "}") "," ELEM(LAZY(THING), "null", "{}") "," ELEM(LAZY(COUNTER), "null",
                                                                              "{}") "]}") "}",
     NULL, 1},
    {"numeric_client_refs", t_numeric_client_refs,
     "{\"ok\":" ELEM("\"main\"", "null",
                     "{\"children\":[" ELEM(LAZY(NUMERIC), "null", "{\"n\":1}") "," ELEM(
                         LAZY(NUMERIC), "null",
                         "{\"of\":" NUMERIC "}") "," ELEM(LAZY(ASYNC42), "null", "{}") "]}") "}",
     NULL, 0},
    {"map_of_sets", t_map_of_sets,
     "{\"ok\":{\"m\":{\"$\":\"Map\",\"entries\":[[\"a\",{\"$\":\"Set\",\"values\":[1,2]}],"
     "[{\"k\":1},{\"$\":\"Set\",\"values\":[]}]]},\"s\":{\"$\":\"Set\",\"values\":[\"x\"]}}}",
     NULL, 1},
    {"binary", t_binary,
     "{\"ok\":[{\"$\":\"ArrayBuffer\",\"base64\":\"AAA=\"},{\"$\":\"Int8Array\",\"base64\":\"/"
     "w==\"},"
     "{\"$\":\"Uint8Array\",\"base64\":\"AQIK\"},{\"$\":\"Uint8ClampedArray\",\"base64\":\"/"
     "w==\"},"
     "{\"$\":\"Int16Array\",\"base64\":\"/v8=\"},{\"$\":\"Uint16Array\",\"base64\":\"AwA=\"},"
     "{\"$\":\"Int32Array\",\"base64\":\"/P///"
     "w==\"},{\"$\":\"Uint32Array\",\"base64\":\"BQAAAA==\"},"
     "{\"$\":\"Float32Array\",\"base64\":\"AADAPw==\"},"
     "{\"$\":\"Float64Array\",\"base64\":\"AAAAAAAA0L8=\"},"
     "{\"$\":\"BigInt64Array\",\"base64\":\"+v////////8=\"},"
     "{\"$\":\"BigUint64Array\",\"base64\":\"BwAAAAAAAAA=\"},{\"$\":\"DataView\",\"base64\":"
     "\"AAAA\"}]}",
     NULL, 1},
    {"error_value", t_error_value, "{\"ok\":{\"e\":" ERRZ "}}", NULL, 1},
    {"suspense", t_suspense,
     "{\"ok\":" ELEM(SUSPENSE, "null",
                     "{\"fallback\":\"loading\",\"children\":" LAZY(
                         ELEM("\"b\"", "null", "{\"children\":\"late\"}")) "}") "}",
     NULL, 1},
    {"rejected", t_rejected,
     "{\"ok\":" ELEM(
         "\"div\"", "null",
         "{\"children\":{\"$\":\"lazy\",\"status\":\"rejected\",\"reason\":" ERR("dg") "}}") "}",
     NULL, 1},
    {"promise", t_promise,
     "{\"ok\":{\"p\":" PROMISE_OK("{\"v\":1}") ",\"q\":{\"$\":\"promise\",\"status\":\"rejected\","
                                               "\"reason\":" ERR("dg") "}}}",
     NULL, 1},
    {"nested_suspense", t_nested_suspense,
     "{\"ok\":" ELEM(SUSPENSE, "null",
                     "{\"fallback\":null,\"children\":" LAZY(
                         ELEM("\"section\"", "null",
                              "{\"children\":" LAZY(ELEM(
                                  "\"em\"", "null", "{\"children\":\"inner\"}")) "}")) "}") "}",
     NULL, 1},
    {"deferred", t_deferred, NULL, d_deferred, 1},
    {"server_refs", t_server_refs,
     "{\"ok\":{\"a\":" SREF("save", "null") ",\"again\":" SREF("save", "null") ",\"b\":" SREF(
         "save", "[1,\"x\"]") ",\"c\":" SREF("other", "null") "}}",
     NULL, 1},
    {"form_data", t_form_data,
     "{\"ok\":{\"f\":{\"$\":\"FormData\",\"entries\":[[\"a\",\"b\"],[\"a\",\"c\"],[\"n\",\"1\"]"
     "]}}}",
     NULL, 1},
    {"form_data_file", t_form_data_file,
     "{\"ok\":{\"$\":\"FormData\",\"entries\":[[\"a\",\"b\"],[\"file\",{\"$\":\"Blob\","
     "\"type\":"
     "\"text/x\",\"base64\":\"eno=\"}]]}}",
     NULL, 1},
    {"blobs", t_blobs,
     "{\"ok\":{\"a\":{\"$\":\"Blob\",\"type\":\"text/plain\",\"base64\":\"aGVsbG8gd29ybGQ=\"},"
     "\"b\":{\"$\":\"Blob\",\"type\":\"\",\"base64\":\"\"},\"c\":{\"$\":\"Blob\",\"type\":\"\","
     "\"base64\":\"eHk=\"}}}",
     NULL, 1},
    {"text_stream", t_text_stream,
     "{\"ok\":{\"s\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[\"a\",{\"x\":1},"
     "\"b\"],"
     "\"end\":{\"done\":" UNDEF "}}}}",
     NULL, 1},
    {"byte_stream", t_byte_stream,
     "{\"ok\":{\"s\":{\"$\":\"ReadableStream\",\"type\":\"bytes\",\"base64\":\"AQID\",\"end\":{"
     "\"done\":" UNDEF "}}}}",
     NULL, 1},
    /* A ReadableStream that errors drops the items not read yet. */
    {"stream_error", t_stream_error,
     "{\"ok\":{\"s\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[],\"end\":{"
     "\"error\":" ERR("dg") "}}}}",
     NULL, 1},
    {"async_iterator", t_async_iterator,
     "{\"ok\":{\"it\":{\"$\":\"AsyncIterator\",\"items\":[1,{\"a\":2}],\"end\":{\"done\":"
     "\"done\"}}}}",
     NULL, 1},
    {"async_iterable", t_async_iterable,
     "{\"ok\":{\"it\":{\"$\":\"AsyncIterable\",\"items\":[\"x\",\"y\"],\"end\":{\"done\":" UNDEF
     "}}}}",
     NULL, 1},
    {"iterators", t_iterators,
     "{\"ok\":{\"it\":{\"$\":\"Iterator\",\"items\":[1,{\"a\":2}]},\"arr\":{\"$\":\"Iterator\","
     "\"items\":[1]}}}",
     NULL, 1},
    {"shared", t_shared,
     "{\"ok\":{\"x\":{\"a\":1},\"y\":[" REF("/ok/x") ",2],\"z\":[" REF("/ok/x") "," REF(
         "/ok/y") "," ELEM("\"i\"", "null",
                           "{}") "," REF("/ok/z/2") ",{\"$\":\"Map\",\"entries\":"
                                                    "[[1,2]]}," REF(
                                                        "/ok/z/4") "],\"w\":{"
                                                                   "\"deep\":{"
                                                                   "\"o\":" REF(
                                                                       "/ok/x") "}"
                                                                                "}"
                                                                                ","
                                                                                "\"k:"
                                                                                "1\":"
                                                                                "{"
                                                                                "\"b\":2},"
                                                                                "\"t\":{\"b\":"
                                                                                "2}}}",
     NULL, 1},
    /* The element names its own row: React's client makes it a lazy. */
    {"shared_in_element", t_shared_in_element,
     "{\"ok\":" LAZY(ELEM("\"div\"", "null",
                          "{\"a\":{\"a\":1},\"b\":" REF("/ok/value/props/a") ",\"children\":[" REF(
                              "/ok/value/props/a") "]}")) "}",
     NULL, 1},
    {"shared_in_promise", t_shared_in_promise,
     "{\"ok\":{\"x\":{\"a\":1},\"p\":{\"$\":\"promise\",\"status\":\"fulfilled\","
     "\"value\":" REF("/ok/x") "},\"q\":{\"$\":\"promise\",\"status\":\"fulfilled\",\"value\":"
                               "[" REF("/ok/x") ",{"
                                                "\"k\":" REF("/ok/x") "}]}}}",
     NULL, 1},
    {"shared_binary", t_shared_binary,
     "{\"ok\":[{\"$\":\"Uint8Array\",\"base64\":\"AQ==\"}," REF(
         "/ok/0") ",{\"$\":\"Set\","
                  "\"values\":[" REF("/ok/0") "]}," REF(
                      "/ok/2") ",{\"m\":{\"$\":\"Map\",\"entries\":[[\"k\"," REF("/ok/0") "]]}}"
                                                                                          "]}",
     NULL, 1},
    {"cycle", t_cycle,
     "{\"ok\":{\"n\":1,\"self\":" REF("/ok") ",\"list\":[" REF("/ok") ",[" REF("/ok") "]]}}", NULL,
     1},
    {"empty_object", t_empty_object, "{\"ok\":{}}", NULL, 0},
    {"string_root", t_string_root, "{\"ok\":\"hello\"}", NULL, 0},
    {"long_string_root", t_long_string_root, NULL, d_long_string_root, 0},
    {"dollar_strings", t_dollar_strings,
     "{\"ok\":[\"$\",\"$$\",\"$L1\",\"$@0\",\"$undefined\",{\"$k\":\"$\"}]}", NULL, 0},
    {"unicode", t_unicode, NULL, d_unicode, 0},
    {"deep_arrays", t_deep_arrays, NULL, d_deep_arrays, 0},
    {"map_keys", t_map_keys,
     "{\"ok\":{\"$\":\"Map\",\"entries\":[[1,\"one\"],[null,\"null\"],[[2],{}],"
     "[{\"$\":\"undefined\"},true],[{\"$\":\"bigint\",\"v\":\"9\"},"
     "{\"$\":\"Date\",\"v\":\"2024-02-29T12:00:00.000Z\"}]]}}",
     NULL, 0},
    {"set_of_maps", t_set_of_maps,
     "{\"ok\":{\"$\":\"Set\",\"values\":[{\"$\":\"Map\",\"entries\":[[\"a\",1]]},"
     "{\"$\":\"Map\",\"entries\":[]},{\"$\":\"Map\",\"entries\":[[\"s\",{\"$\":\"Set\","
     "\"values\":[{\"$\":\"Map\",\"entries\":[[0,0]]}]}]]}]}}",
     NULL, 0},
    {"shared_client_refs", t_shared_client_refs,
     "{\"ok\":" ELEM(
         "\"ul\"", "null",
         "{\"children\":[" ELEM(LAZY(COUNTER), "null", "{\"n\":0}") "," ELEM(
             LAZY(COUNTER), "null",
             "{\"n\":1}") "," ELEM(LAZY(COUNTER), "null",
                                   "{\"n\":2}") "," ELEM(LAZY("{\"$\":\"client_ref\",\"id\":"
                                                              "\"app/"
                                                              "widgets/"
                                                              "Counter.js\",\"chunks\":["
                                                              "\"widgets\","
                                                              "\"widgets.0123456789.js\","
                                                              "\"extra\"]"
                                                              ",\"name\":\"Other\"}"),
                                                         "null", "{}") ",{\"ref\":" COUNTER
                                                                       "}]}") "}",
     NULL, 0},
    {"lazy_resolved_early", t_lazy_resolved_early,
     "{\"ok\":" ELEM("\"div\"", "null",
                     "{\"children\":" ELEM("\"p\"", "null", "{\"children\":\"now\"}") "}") "}",
     NULL, 0},
    {"promise_resolved_early", t_promise_resolved_early,
     "{\"ok\":{\"p\":" PROMISE_OK("[\"x\",2]") "}}", NULL, 0},
    {"promise_rejected_early", t_promise_rejected_early,
     "{\"ok\":{\"p\":{\"$\":\"promise\",\"status\":\"rejected\",\"reason\":" ERR(
         "quote\\\"d") "},\"l\":{\"$\":\"lazy\",\"status\":\"rejected\",\"reason\":" ERR("") "}"
                                                                                             "}"
                                                                                             "}",
     NULL, 0},
    {"suspense_out_of_order", t_suspense_out_of_order,
     "{\"ok\":" ELEM("\"div\"", "null",
                     "{\"children\":[" SUS(ILAZY("a")) "," SUS(
                         "{\"$\":\"lazy\",\"status\":\"rejected\",\"reason\":" ERR(
                             "b-failed") "}") "," SUS(ILAZY("c")) "]}") "}",
     NULL, 0},
    {"lazy_chain", t_lazy_chain, "{\"ok\":[" LAZY("\"c\"") "," LAZY("\"e\"") "]}", NULL, 0},
    {"lazy_to_map", t_lazy_to_map,
     "{\"ok\":{\"data\":" LAZY("{\"$\":\"Map\",\"entries\":[[\"k\",{\"$\":\"Set\",\"values\":["
                               "\"v\"]}]]}") "}}",
     NULL, 0},
    {"lazy_long_text", t_lazy_long_text, NULL, d_lazy_long_text, 0},
    {"scalars_mix", t_scalars_mix,
     "{\"ok\":{\"when\":{\"$\":\"Date\",\"v\":\"2001-09-09T01:46:40.000Z\"},\"big\":{\"$\":"
     "\"bigint\","
     "\"v\":\"-170141183460469231731687303715884105728\"},\"sym\":{\"$\":\"symbol\",\"v\":"
     "\"app.token\"},\"sym2\":{\"$\":\"symbol\",\"v\":\"app.token\"},\"frag\":{\"$\":"
     "\"symbol\","
     "\"v\":\"react.fragment\"},\"err\":" ERRZ "}}",
     NULL, 0},
    {"undefined_members", t_undefined_members,
     "{\"ok\":{\"b\":[{\"$\":\"undefined\"},null],\"c\":" ELEM("\"x\"", "null", "{}") "}}", NULL,
     0},
    {"many_promises", t_many_promises, NULL, d_many_promises, 0},
    {"binary_in_map", t_binary_in_map,
     "{\"ok\":{\"$\":\"Map\",\"entries\":[[\"img\",{\"$\":\"Uint8Array\",\"base64\":"
     "\"iVBORw0KGgo=\"}],[\"inf\",{\"$\":\"Float32Array\",\"base64\":\"AACAfwAAgP8=\"}],"
     "[\"none\",{\"$\":\"ArrayBuffer\",\"base64\":\"\"}]]}}",
     NULL, 0},
    {"fragment_and_keys", t_fragment_and_keys,
     "{\"ok\":" ELEM("{\"$\":\"symbol\",\"v\":\"react.fragment\"}", "\"list\"",
                     "{\"children\":[" ELEM("\"li\"", "\"1\"", "{\"children\":\"one\"}") "," ELEM(
                         "\"li\"", "\"2\"", "{\"children\":\"two\"}") "]}") "}",
     NULL, 0},
    {"numbers", t_numbers,
     "{\"ok\":[0.1,1e-7,123456789012345680000,-1e300,5e-324,9007199254740991,-1,100]}", NULL, 0},
    {"dollar_key", t_dollar_key,
     "{\"ok\":{\"$\":\"object\",\"members\":{\"$\":\"d\",\"x\":{\"$\":\"object\",\"members\":"
     "{\"$\":null}}}}}",
     NULL, 0},
    {"key_replaced", t_key_replaced, "{\"ok\":{\"a\":3,\"b\":2,\"\":\"empty\"}}", NULL, 0},
    {"page", t_page,
     "{\"ok\":" ELEM(
         "\"html\"", "null",
         "{\"children\":[" ELEM(LAZY(BUTTON), "null", "{\"label\":\"home\"}") "," ELEM(
             SUSPENSE, "null",
             "{\"fallback\":" ELEM(
                 "\"p\"", "null",
                 "{\"children\":\"loading\"}") ","
                                               "\"children\":" LAZY(
                                                   ELEM("\"ul\"", "null",
                                                        "{\"children\":[" ITEM(0) "," ITEM(
                                                            1) "," ITEM(2) "]}")) "}") "]}") "}",
     NULL, 0},
    {"deferred_many", t_deferred_many, NULL, d_deferred_many, 0},
};
const size_t bt_count = sizeof bt_trees / sizeof *bt_trees;

char *bt_dump(const builder_tree *t) { return t->dump ? dup(t->dump) : t->make_dump(); }

typedef struct bt_buf {
  char *p;
  size_t len, cap;
} bt_buf;

static int bt_append(void *ctx, const char *s, size_t n) {
  bt_buf *o = ctx;
  if (o->len + n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + n + 1) cap *= 2;
    char *p = realloc(o->p, cap);
    if (!p) return 1;
    o->p = p;
    o->cap = cap;
  }
  memcpy(o->p + o->len, s, n);
  o->len += n;
  o->p[o->len] = 0;
  return 0;
}

char *bt_write(const builder_tree *t, size_t *len, rsc_status *status) {
  rsc_builder *b = rsc_builder_new(NULL);
  bt_buf o = {0};
  rsc_status s = b ? t->build(b, bt_append, &o) : RSC_ERR_NOMEM;
  if (!s && rsc_builder_pending(b)) s = RSC_ERR_STATE;
  rsc_builder_free(b);
  *status = s;
  if (s) {
    free(o.p);
    return NULL;
  }
  if (!o.p) o.p = calloc(1, 1);
  *len = o.len;
  return o.p;
}

/* --- random trees ----------------------------------------------------------- */

typedef struct gen {
  uint64_t seed;
  rsc_builder *b;
  bt_buf dump;
  size_t units; /* text so far: kept below React's 3200 per row */
  int nodes;
  rsc_bval *late[64]; /* lazies and promises settled after the first flush */
  rsc_bval *late_value[64];
  const char *late_digest[64];
  int nlate;
  int no_lazy; /* the value about to be made settles a lazy or promise */
} gen;

static uint64_t rnd(gen *g) {
  uint64_t z = (g->seed += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int pick(gen *g, int n) { return (int)(rnd(g) % (uint64_t)n); }
static void out(gen *g, const char *s) { bt_append(&g->dump, s, strlen(s)); }

static const struct {
  const char *raw, *json;
} strs[] = {{"", "\"\""},
            {"a", "\"a\""},
            {"$", "\"$\""},
            {"$x", "\"$x\""},
            {"\xc3\xa9", "\"\xc3\xa9\""},
            {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},
            {"line\n", "\"line\\n\""},
            {"q\"uote", "\"q\\\"uote\""},
            {"back\\", "\"back\\\\\""},
            {"$@1", "\"$@1\""}};
static const struct {
  double v;
  const char *json;
} nums[] = {{0, "0"}, {1, "1"}, {-1, "-1"}, {1.5, "1.5"}, {1e21, "1e21"}, {-2.5e-7, "-2.5e-7"}};
static const char *keys[] = {"a", "b", "$k", "10", "2", "children", "\xc3\xa9"};
static const char *key_json[] = {"\"a\"", "\"b\"",        "\"$k\"",      "\"10\"",
                                 "\"2\"", "\"children\"", "\"\xc3\xa9\""};

static void b64(gen *g, const uint8_t *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char q[5] = {0};
  out(g, "\"");
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    q[0] = tab[v >> 18], q[1] = tab[(v >> 12) & 63];
    q[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
    q[3] = i + 2 < n ? tab[v & 63] : '=';
    out(g, q);
  }
  out(g, "\"");
}

static rsc_bval *gen_value(gen *g, int depth);

/* A settled-later value: the wrapper's dump around its value's. */
static rsc_bval *gen_pending(gen *g, int depth, int lazy) {
  rsc_builder *b = g->b;
  rsc_bval *p = lazy ? rsc_build_lazy(b) : rsc_build_promise(b);
  int mode = pick(g, 4); /* 0: settled now, 1-2: later, 3: rejected */
  if (g->nlate == 64) mode = 0;
  const char *kind = lazy ? "lazy" : "promise";
  char head[96];
  if (mode == 3) {
    static const char *digests[] = {"", "d1", "x\"y"};
    static const char *djson[] = {"\"\"", "\"d1\"", "\"x\\\"y\""};
    int d = pick(g, 3);
    snprintf(head, sizeof head, "{\"$\":\"%s\",\"status\":\"rejected\",\"reason\":", kind);
    out(g, head);
    out(g, "{\"$\":\"Error\",\"message\":" PROD_ERROR ",\"digest\":");
    out(g, djson[d]);
    out(g, "}}");
    if (pick(g, 2)) rsc_builder_reject(b, p, digests[d]);
    else
      g->late[g->nlate] = p, g->late_value[g->nlate] = NULL,
      g->late_digest[g->nlate++] = digests[d];
    return p;
  }
  /* a lazy settled before it is written is written in place */
  int wrapped = !(lazy && mode == 0);
  if (wrapped) {
    snprintf(head, sizeof head, "{\"$\":\"%s\",\"status\":\"fulfilled\",\"value\":", kind);
    out(g, head);
  }
  int slot = mode ? g->nlate++ : -1; /* parents settle before their children */
  if (slot >= 0) g->late[slot] = p, g->late_digest[slot] = NULL;
  g->no_lazy = 1;
  rsc_bval *v = gen_value(g, depth + 1);
  if (slot >= 0) g->late_value[slot] = v;
  else rsc_builder_resolve(b, p, v);
  if (wrapped) out(g, "}");
  return p;
}

static rsc_bval *gen_element(gen *g, int depth) {
  rsc_builder *b = g->b;
  rsc_bval *type;
  out(g, "{\"$\":\"element\",\"type\":");
  int t = pick(g, 4);
  if (t <= 1) {
    type = H("div");
    out(g, "\"div\"");
  } else if (t == 2) {
    int which = pick(g, 2);
    type = which ? button(b) : counter(b);
    out(g, which ? LAZY(BUTTON) : LAZY(COUNTER));
  } else {
    type = rsc_build_symbol(b, "react.fragment", 14);
    out(g, "{\"$\":\"symbol\",\"v\":\"react.fragment\"}");
  }
  const char *key = pick(g, 3) ? NULL : "k";
  out(g, key ? ",\"key\":\"k\",\"props\":{" : ",\"key\":null,\"props\":{");
  rsc_bval *props = rsc_build_object(b);
  if (pick(g, 3)) {
    out(g, "\"children\":");
    rsc_build_put(b, props, "children", 8, gen_value(g, depth + 1));
  }
  out(g, "}}");
  return rsc_build_element(b, type, key, key ? 1 : 0, props);
}

static rsc_bval *gen_value(gen *g, int depth) {
  rsc_builder *b = g->b;
  g->nodes++;
  int leaf = depth >= 5 || g->nodes > 60;
  int k = depth == 0 ? 9 + pick(g, 6) : pick(g, leaf ? 9 : 17); /* a container at the root */
  /* a lazy's or promise's value is no lazy: a row whose value is a lazy
   * not settled waits for it (React's task suspends), its wrapper gone */
  if (g->no_lazy && k == 15) k = 16;
  g->no_lazy = 0;
  char tmp[64];
  switch (k) {
  case 0: out(g, "null"); return rsc_build_null(b);
  case 1: {
    int v = pick(g, 2);
    out(g, v ? "true" : "false");
    return rsc_build_bool(b, v);
  }
  case 2: {
    int i = pick(g, 6);
    out(g, nums[i].json);
    return N(nums[i].v);
  }
  case 3: {
    static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0};
    static const char *sj[] = {"{\"$\":\"NaN\"}", "{\"$\":\"Infinity\"}", "{\"$\":\"-Infinity\"}",
                               "{\"$\":\"-0\"}"};
    int i = pick(g, 4);
    out(g, sj[i]);
    return N(sp[i]);
  }
  case 4:
  case 5: {
    if (g->units < 1000 && !pick(g, 8)) {
      /* a long one: a T row (1100 units) */
      g->units += 1100;
      out(g, "\"");
      char *e = repeat("\xc3\xa9", 1100);
      out(g, e);
      free(e);
      out(g, "\"");
      return rep(b, "", "\xc3\xa9", 1100);
    }
    int i = pick(g, 10);
    g->units += 2;
    out(g, strs[i].json);
    return S(strs[i].raw);
  }
  case 6: {
    int i = pick(g, 3);
    static const char *d[] = {"0", "-42", "123456789012345678901234567890"};
    snprintf(tmp, sizeof tmp, "{\"$\":\"bigint\",\"v\":\"%s\"}", d[i]);
    out(g, tmp);
    return rsc_build_bigint(b, d[i], strlen(d[i]));
  }
  case 7:
    g->units += 24;
    out(g, "{\"$\":\"Date\",\"v\":\"2020-01-02T03:04:05.678Z\"}");
    return rsc_build_date(b, "2020-01-02T03:04:05.678Z", 24);
  case 8: {
    int i = pick(g, 3);
    if (i == 0) {
      out(g, "{\"$\":\"symbol\",\"v\":\"app.s\"}");
      return rsc_build_symbol(b, "app.s", 5);
    }
    if (i == 1) {
      out(g, ERRZ);
      return rsc_build_error(b);
    }
    uint8_t bytes[5];
    size_t n = (size_t)pick(g, 6);
    for (size_t j = 0; j < n; j++) bytes[j] = (uint8_t)rnd(g);
    out(g, "{\"$\":\"Uint8Array\",\"base64\":");
    b64(g, bytes, n);
    out(g, "}");
    return rsc_build_binary(b, RSC_UINT8, bytes, n);
  }
  case 9:
  case 10: {
    rsc_bval *a = rsc_build_array(b);
    int n = pick(g, 5);
    out(g, "[");
    for (int i = 0; i < n; i++) {
      if (i) out(g, ",");
      if (!pick(g, 8)) {
        out(g, "{\"$\":\"undefined\"}");
        rsc_build_push(b, a, rsc_build_undefined(b));
      } else {
        rsc_build_push(b, a, gen_value(g, depth + 1));
      }
    }
    out(g, "]");
    return a;
  }
  case 11: {
    rsc_bval *o = rsc_build_object(b);
    int used = 0, first = 1;
    out(g, "{");
    for (int i = pick(g, 5); i > 0; i--) {
      int kk = pick(g, 7);
      if (used & (1 << kk)) continue;
      used |= 1 << kk;
      if (!pick(g, 8)) { /* undefined: not in the dump */
        rsc_build_put(b, o, keys[kk], strlen(keys[kk]), rsc_build_undefined(b));
        continue;
      }
      if (!first) out(g, ",");
      first = 0;
      out(g, key_json[kk]);
      out(g, ":");
      g->units += strlen(keys[kk]);
      rsc_build_put(b, o, keys[kk], strlen(keys[kk]), gen_value(g, depth + 1));
    }
    out(g, "}");
    return o;
  }
  case 12: {
    rsc_bval *m = rsc_build_map(b);
    out(g, "{\"$\":\"Map\",\"entries\":[");
    /* keys distinct as JavaScript's Map compares them: strings k0, k1... */
    for (int i = pick(g, 4), j = 0; i > 0; i--, j++) {
      char kb[8];
      snprintf(kb, sizeof kb, "k%d", j);
      out(g, j ? ",[\"" : "[\"");
      out(g, kb);
      out(g, "\",");
      rsc_bval *key = S(kb);
      rsc_build_map_put(b, m, key, gen_value(g, depth + 1));
      out(g, "]");
    }
    out(g, "]}");
    return m;
  }
  case 13: {
    rsc_bval *s = rsc_build_set(b);
    out(g, "{\"$\":\"Set\",\"values\":[");
    /* values distinct as a Set compares them: each in an array of its own */
    for (int i = pick(g, 4), j = 0; i > 0; i--, j++) {
      out(g, j ? ",[" : "[");
      rsc_build_push(b, s, arr(b, 1, gen_value(g, depth + 1)));
      out(g, "]");
    }
    out(g, "]}");
    return s;
  }
  case 14: return gen_element(g, depth);
  case 15: return gen_pending(g, depth, 1);
  default: return gen_pending(g, depth, 0);
  }
}

char *bt_random(uint64_t seed, size_t *len, char **dump, rsc_status *status) {
  gen g;
  memset(&g, 0, sizeof g);
  g.seed = seed;
  rsc_builder *b = g.b = rsc_builder_new(NULL);
  bt_buf o = {0};
  *dump = NULL;
  rsc_status s = RSC_ERR_NOMEM;
  if (b) {
    out(&g, "{\"ok\":");
    rsc_bval *root = gen_value(&g, 0);
    out(&g, "}");
    s = rsc_builder_root(b, root);
    if (!s) s = rsc_builder_flush(b, bt_append, &o);
    /* settled in creation order, each flushed before the next, so that a
     * parent's row is written while its children still wait */
    for (int i = 0; i < g.nlate && !s; i++) {
      if (g.late_value[i]) s = rsc_builder_resolve(b, g.late[i], g.late_value[i]);
      else s = rsc_builder_reject(b, g.late[i], g.late_digest[i]);
      if (!s) s = rsc_builder_flush(b, bt_append, &o);
    }
    if (!s) s = rsc_builder_flush(b, bt_append, &o);
    if (!s && rsc_builder_pending(b)) s = RSC_ERR_STATE;
    if (!s && rsc_builder_status(b)) s = rsc_builder_status(b);
  }
  rsc_builder_free(b);
  *status = s;
  if (s) {
    free(o.p);
    free(g.dump.p);
    return NULL;
  }
  if (!o.p) o.p = calloc(1, 1);
  *len = o.len;
  *dump = g.dump.p;
  return o.p;
}
