#define _XOPEN_SOURCE 700
/* test_dump.c - the streamed dump (rsc_dump_to): the same text as rsc_dump
 * on every fixture, pieces of bounded size, a writer that fails stops it,
 * and deep nesting (whose indented text grows with the square of the depth)
 * prints without the text sitting in memory. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define PIECE_MAX 65536

/* A writer that keeps the text (when keep is set) and the sizes of its
 * pieces, and fails on call fail_at (1-based; 0: never). */
typedef struct sink {
  bool keep;
  char *text;
  size_t len, cap;
  size_t calls, fail_at;
  size_t max_piece, min_piece;
  size_t heap_base, heap_peak; /* heap_in_use() before and at most */
} sink;

/* malloc'd bytes in use: the heap's and the mmap'd blocks'. */
static size_t heap_in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

static int sink_write(void *ctx, const char *buf, size_t len) {
  sink *s = ctx;
  s->calls++;
  if (len > s->max_piece) s->max_piece = len;
  if (!s->min_piece || len < s->min_piece) s->min_piece = len;
  size_t heap = heap_in_use();
  if (heap > s->heap_peak) s->heap_peak = heap;
  if (s->fail_at && s->calls == s->fail_at) return -1;
  if (s->keep) {
    if (s->len + len > s->cap) {
      s->cap = (s->len + len) * 2;
      s->text = realloc(s->text, s->cap);
      cr_assert_not_null(s->text);
    }
    memcpy(s->text + s->len, buf, len);
  }
  s->len += len;
  return 0;
}

/* Both dumps of d at one indent: the same bytes, in pieces of 1 to
 * PIECE_MAX bytes. */
static void expect_same(rsc_decoder *d, int pretty, const char *what) {
  size_t len = 0;
  char *want = rsc_dump(d, pretty, &len);
  sink s = {.keep = true};
  rsc_status st = rsc_dump_to(d, pretty, sink_write, &s);
  if (!want) {
    cr_expect_neq(st, RSC_OK, "%s: rsc_dump failed, rsc_dump_to did not", what);
    free(s.text);
    return;
  }
  cr_expect_eq(st, RSC_OK, "%s (indent %d): %s", what, pretty, rsc_status_name(st));
  cr_expect(s.len == len && memcmp(s.text, want, len) == 0, "%s (indent %d): the texts differ",
            what, pretty);
  cr_expect(s.max_piece <= PIECE_MAX && s.min_piece >= 1, "%s: a piece of %zu bytes", what,
            s.max_piece);
  cr_expect_eq(s.calls, (len + PIECE_MAX - 1) / PIECE_MAX, "%s: %zu pieces for %zu bytes", what,
               s.calls, len);
  rsc_free(want);
  free(s.text);
}

static size_t nfixtures, ndumped, nlarge;

static int each_fixture(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  size_t n = strlen(path);
  if (type != FTW_F || n < 4 || strcmp(path + n - 4, ".rsc") != 0) return 0;
  if (st->st_size > (1 << 20)) return 0; /* benchmarks, not shapes */
  size_t len;
  char *buf = ts_read(path, &len);
  cr_assert_not_null(buf, "%s", path);
  rsc_decoder *d = ts_decode(buf, len, 0, 0);
  cr_assert_not_null(d);
  nfixtures++;
  if (rsc_decoder_error(d)->code == RSC_OK) {
    ndumped++;
    expect_same(d, 2, path);
    expect_same(d, 0, path);
    size_t dlen = 0;
    char *t = rsc_dump(d, 2, &dlen);
    if (dlen > PIECE_MAX) nlarge++;
    rsc_free(t);
  } else {
    /* A failed decoder writes nothing and answers its own error. */
    sink s = {0};
    cr_expect_eq(rsc_dump_to(d, 2, sink_write, &s), rsc_decoder_error(d)->code, "%s", path);
    cr_expect_eq(s.calls, 0, "%s", path);
  }
  rsc_decoder_free(d);
  free(buf);
  return 0;
}

Test(dump_to, every_fixture_same_as_rsc_dump, .timeout = 300) {
  cr_assert_eq(nftw(RSC_FIXTURES, each_fixture, 16, FTW_PHYS), 0);
  cr_expect_gt(nfixtures, 400);
  cr_expect_gt(ndumped, 300);
  cr_expect_gt(nlarge, 0, "no fixture's dump crosses a piece boundary");
}

/* n rows, each an element whose child is the next row's lazy. */
static char *nested_lazies(size_t n, size_t *len) {
  size_t cap = n * 64 + 64;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (i + 1 < n)
      o += (size_t)snprintf(buf + o, cap - o, "%zx:[\"$\",\"div\",null,{\"children\":\"$L%zx\"}]\n",
                            i, i + 1);
    else
      o += (size_t)snprintf(buf + o, cap - o, "%zx:[\"$\",\"div\",null,{\"children\":\"end\"}]\n",
                            i);
  }
  *len = o;
  return buf;
}

Test(dump_to, nested_lazies_same_as_rsc_dump) {
  size_t len;
  char *buf = nested_lazies(500, &len);
  rsc_decoder *d = ts_decode(buf, len, 0, 0);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  expect_same(d, 2, "500 nested lazies"); /* about 8 MB: pieces cross indentation */
  expect_same(d, 0, "500 nested lazies");
  expect_same(d, 7, "500 nested lazies");
  rsc_decoder_free(d);
  free(buf);
}

/* 3,000 levels print about 290 MB with an indent of 2: the writer holds one
 * piece at a time and the heap does not grow with the text. */
Test(dump_to, deep_nesting_memory_stays_bounded, .timeout = 120) {
  size_t len;
  char *buf = nested_lazies(3000, &len);
  rsc_decoder *d = ts_decode(buf, len, 0, 0);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  sink s = {0};
  s.heap_base = heap_in_use();
  cr_assert_eq(rsc_dump_to(d, 2, sink_write, &s), RSC_OK);
  cr_expect_gt(s.len, (size_t)250 << 20, "%zu bytes", s.len);
  cr_expect_leq(s.max_piece, PIECE_MAX);
  cr_expect_eq(s.calls, (s.len + PIECE_MAX - 1) / PIECE_MAX);
  /* mallinfo2 counts glibc's heap (a sanitizer's allocator reports 0). */
  size_t grew = s.heap_peak > s.heap_base ? s.heap_peak - s.heap_base : 0;
  cr_expect_lt(grew, (size_t)8 << 20, "the heap grew by %zu bytes during the dump", grew);
  rsc_decoder_free(d);
  free(buf);
}

Test(dump_to, a_failing_writer_stops_the_dump) {
  size_t len;
  char *buf = nested_lazies(300, &len); /* about 3 MB indented: many pieces */
  rsc_decoder *d = ts_decode(buf, len, 0, 0);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK);
  size_t fail_at[] = {1, 2, 5};
  for (size_t i = 0; i < sizeof fail_at / sizeof fail_at[0]; i++) {
    sink s = {.fail_at = fail_at[i]};
    cr_expect_eq(rsc_dump_to(d, 2, sink_write, &s), RSC_ERR_USER);
    cr_expect_eq(s.calls, fail_at[i], "the writer was called again after it failed");
    cr_expect_eq(rsc_decoder_error(d)->code, RSC_OK, "the decoder keeps no error");
  }
  /* The last piece fails too: a one-piece dump. */
  rsc_decoder *small = ts_decode("0:[1,2]\n", 8, 0, 0);
  sink s = {.fail_at = 1};
  cr_expect_eq(rsc_dump_to(small, 0, sink_write, &s), RSC_ERR_USER);
  cr_expect_eq(s.calls, 1);
  /* The decoder dumps again afterwards. */
  s = (sink){.keep = true};
  cr_expect_eq(rsc_dump_to(small, 0, sink_write, &s), RSC_OK);
  cr_expect(s.len == 12 && memcmp(s.text, "{\"ok\":[1,2]}", 12) == 0, "%.*s", (int)s.len, s.text);
  free(s.text);
  rsc_decoder_free(small);
  rsc_decoder_free(d);
  free(buf);
}

Test(dump_to, bad_arguments) {
  sink s = {0};
  cr_expect_eq(rsc_dump_to(NULL, 0, sink_write, &s), RSC_ERR_STATE);
  rsc_decoder *d = ts_decode("0:1\n", 4, 0, 0);
  cr_expect_eq(rsc_dump_to(d, 0, NULL, NULL), RSC_ERR_STATE);
  cr_expect_eq(s.calls, 0);
  rsc_decoder_free(d);
}
