/* test_alloc.c - allocation failure through rsc_options.alloc.
 *
 * An allocator that fails its Nth call (malloc or realloc), once, for N
 * from 1 until a decode sees no failure, on fixtures of every shape. A
 * failure must give RSC_ERR_NOMEM (or a NULL decoder) and never a success:
 * the later calls succeed, so a failure the decoder swallowed would show
 * as an RSC_OK with a wrong tree. Every block is given back (the allocator
 * counts them; ASan's leak checker watches too in the sanitizer build).
 *
 * In "fine" mode the arenas are cut to 16-byte blocks, so nearly every
 * allocation site in the decoder (each node array, string, scope, chunk)
 * goes to the allocator and is failed in turn, not just the block
 * boundaries a normal decode meets.
 *
 * Not covered, and documented in docs/hardening.md: simdjson's parser
 * buffers, which simdjson allocates with C++ new (a failure there is
 * still RSC_ERR_NOMEM), and the text rsc_dump returns (libc, released with
 * rsc_free). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"    /* the framer's own buffer */
#include "internal.h" /* fine mode: the arena's block size */
#include "support.h"

/* One decode with the Nth call failing; returns the dump (NULL on error)
 * and the status. piece 0: fed whole. */
static bool fine;
/* Decode the input once without failures, rsc_decoder_reset, then count
 * and fail calls of the second decode (which runs on reused memory). */
static bool via_reset;

static char *decode_with(const char *in, size_t len, uint32_t flags, size_t piece, ts_counting *c,
                         rsc_status *status, bool *null_decoder) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  opt.alloc.malloc = ts_counting_malloc;
  opt.alloc.realloc = ts_counting_realloc;
  opt.alloc.free = ts_counting_free;
  opt.alloc.ctx = c;
  *null_decoder = false;
  unsigned long fail_at = c->fail_at;
  if (via_reset) c->fail_at = 0; /* not before the reset */
  rsc_decoder *d = rsc_decoder_new(&opt);
  if (!d) {
    *null_decoder = true;
    *status = RSC_ERR_NOMEM;
    return NULL;
  }
  if (fine) {
    /* Close the blocks decoder_new filled a little, then keep new ones
     * at 16 bytes: each allocation then needs a block of its own. */
    rsc_arena *arenas[] = {&d->arena, &d->strings};
    for (int k = 0; k < 2; k++) {
      if (arenas[k]->head) arenas[k]->head->used = arenas[k]->head->size;
      arenas[k]->next_size = arenas[k]->max_block = 16;
    }
  }
  if (piece == 0) piece = len ? len : 1;
  if (via_reset) {
    rsc_decoder_feed(d, in, len);
    rsc_decoder_finish(d);
    c->calls = 0;
    c->fail_at = fail_at;
    rsc_status r = rsc_decoder_reset(d);
    cr_assert(r == RSC_OK || r == RSC_ERR_NOMEM);
  }
  for (size_t i = 0; i < len; i += piece)
    if (rsc_decoder_feed(d, in + i, len - i < piece ? len - i : piece) != RSC_OK) break;
  *status = rsc_decoder_finish(d);
  const rsc_error *e = rsc_decoder_error(d);
  cr_assert_eq(e->code, *status);
  if (*status != RSC_OK) {
    cr_assert(e->msg != NULL);
    cr_assert(e->offset <= len, "offset %llu past %zu bytes", (unsigned long long)e->offset, len);
  }
  /* Whatever failed, the table finds by id each chunk it lists. */
  for (size_t i = 0, n = rsc_decoder_chunk_count(d); i < n; i++) {
    const rsc_chunk *ch = rsc_decoder_chunk_at(d, i);
    cr_assert(ch && rsc_decoder_chunk(d, rsc_chunk_id(ch)) == ch,
              "failing call %lu: chunk %zu (id %lld) is listed but not found", fail_at, i,
              ch ? (long long)rsc_chunk_id(ch) : -1LL);
  }
  char *dump = rsc_dump(d, 0, NULL);
  if (*status != RSC_OK) cr_assert_null(dump, "a failed decoder has no dump");
  rsc_decoder_free(d);
  return dump;
}

/* N from 1 until nothing fails; returns how many calls a clean run takes. */
static unsigned long fail_each(const char *name, uint32_t flags, size_t piece) {
  size_t len;
  char *in = ts_fixture(name, &len);
  cr_assert(in, "missing fixture %s", name);
  ts_counting clean = {0};
  rsc_status st;
  bool null_decoder;
  char *want = decode_with(in, len, flags, piece, &clean, &st, &null_decoder);
  cr_assert_eq(clean.live, 0, "%s: %ld blocks not freed", name, clean.live);
  rsc_status want_st = st;
  unsigned long n;
  for (n = 1;; n++) {
    ts_counting c = {.fail_at = n};
    char *got = decode_with(in, len, flags, piece, &c, &st, &null_decoder);
    cr_assert_eq(c.live, 0, "%s: fail at %lu: %ld blocks not freed", name, n, c.live);
    if (!c.failed) {
      /* Past the last call: the decode is the clean one. */
      cr_assert_eq(st, want_st, "%s", name);
      cr_assert((got == NULL) == (want == NULL));
      if (got) cr_assert_str_eq(got, want, "%s", name);
      rsc_free(got);
      break;
    }
    if (!null_decoder)
      cr_assert(st == RSC_ERR_NOMEM || (want_st != RSC_OK && st == want_st),
                "%s: failing call %lu of %lu gave %d (%s), not RSC_ERR_NOMEM", name, n, clean.calls,
                st, rsc_status_name(st));
    cr_assert(st != RSC_OK, "%s: failing call %lu was swallowed: RSC_OK", name, n);
    rsc_free(got);
    cr_assert(n <= clean.calls + 1, "%s: more calls than a clean run (%lu > %lu)", name, n,
              clean.calls);
  }
  if (getenv("RSC_TEST_VERBOSE"))
    fprintf(stderr, "%s (piece %zu): %lu calls\n", name, piece, n - 1);
  rsc_free(want);
  free(in);
  return n;
}

static const struct {
  const char *name;
  uint32_t flags;
} fixtures[] = {
    {"vectors/primitives.prod.rsc", 0},
    {"vectors/map.prod.rsc", 0},
    {"vectors/set.dev.rsc", RSC_OPT_DEV},
    {"vectors/formData.prod.rsc", 0},
    {"vectors/blob.prod.rsc", 0},
    {"vectors/typedArrays.prod.rsc", 0},
    {"vectors/textStream.prod.rsc", 0},
    {"vectors/byteStream.prod.rsc", 0},
    {"vectors/binaryReadableStream.prod.rsc", 0},
    {"vectors/asyncIterable.dev.rsc", RSC_OPT_DEV},
    {"vectors/streamRows.prod.rsc", 0},
    {"vectors/iterRowsWithError.dev.rsc", RSC_OPT_DEV},
    {"vectors/textRowUtf8Split.prod.rsc", 0},
    {"vectors/refToText.prod.rsc", 0},
    {"vectors/errorsInDev.dev.rsc", RSC_OPT_DEV},
    {"vectors/devErrorRow.prod.rsc", 0},
    {"vectors/hints.prod.rsc", 0},
    {"vectors/cyclic.prod.rsc", 0},
    {"vectors/dedupe.dev.rsc", RSC_OPT_DEV},
    {"vectors/lazyChain.prod.rsc", 0},
    {"vectors/serverRefBound.prod.rsc", 0},
    {"vectors/weirdNumbers.prod.rsc", 0},
    {"vectors/haltedPrerender.prod.rsc", RSC_OPT_ALLOW_PARTIAL},
    {"vectors/missingRowAtClose.prod.rsc", 0},
    {"react/19.3.1/prod/shared-and-cycles.rsc", 0},
    {"react/19.3.1/prod/streams-that-error.rsc", 0},
    {"react/19.3.1/dev/client-components.rsc", RSC_OPT_DEV},
    {"react/19.3.1/prod/page-16k.rsc", 0},
};

Test(alloc, every_call_fails_cleanly_whole) {
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
    fail_each(fixtures[i].name, fixtures[i].flags, 0);
}

/* Fed one byte at a time, rows split across feeds grow the framer's
 * buffer: more calls, other failure points. */
Test(alloc, every_call_fails_cleanly_bytewise) {
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    if (strstr(fixtures[i].name, "react/")) continue; /* large: whole only */
    fail_each(fixtures[i].name, fixtures[i].flags, 1);
  }
}

/* Every allocation site, one at a time, on the small fixtures. */
Test(alloc, every_site_fails_cleanly) {
  fine = true;
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    fail_each(fixtures[i].name, fixtures[i].flags, 0);
    if (!strstr(fixtures[i].name, "react/")) fail_each(fixtures[i].name, fixtures[i].flags, 3);
  }
  fine = false;
}

/* After a reset the decoder runs on the blocks and buffers it kept; a
 * failure among the allocations it still makes is as clean. */
Test(alloc, every_call_fails_cleanly_after_reset) {
  via_reset = true;
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
    fail_each(fixtures[i].name, fixtures[i].flags, 1);
  fine = true;
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
    if (!strstr(fixtures[i].name, "react/")) fail_each(fixtures[i].name, fixtures[i].flags, 0);
  fine = false;
  via_reset = false;
}

/* Failure inside the row stages of hostile shapes: a deep row (the JSON
 * parser's and the walk's stacks), and one simdjson refuses (the fallback
 * parser's stack). */
/* A row id far past the count goes to the hash table; when the array
 * later grows past it, it moves into the array. Each allocation of that
 * growth fails in turn (fuzz_walk found the table losing the id). */
Test(alloc, chunk_array_growth_fails_cleanly) {
  char in[4096];
  size_t n = (size_t)sprintf(in, "60:\"far\"\n");
  for (int i = 1; i < 0x50; i++) n += (size_t)sprintf(in + n, "%x:%d\n", i, i);
  n += (size_t)sprintf(in + n, "0:[\"$60\",\"$4f\"]\n");
  ts_counting clean = {0};
  rsc_status st;
  bool null_decoder;
  char *want = decode_with(in, n, 0, 0, &clean, &st, &null_decoder);
  cr_assert_eq(st, RSC_OK);
  cr_assert_str_eq(want, "{\"ok\":[\"far\",79]}");
  for (unsigned long k = 1; k <= clean.calls; k++) {
    ts_counting c = {.fail_at = k};
    char *got = decode_with(in, n, 0, 0, &c, &st, &null_decoder);
    cr_assert_eq(c.live, 0, "fail at %lu: %ld blocks not freed", k, c.live);
    cr_assert(st == RSC_ERR_NOMEM, "fail at %lu: %s", k, rsc_status_name(st));
    rsc_free(got);
  }
  rsc_free(want);
}

Test(alloc, deep_rows) {
  static const char *inners[] = {"\"$1\"", "\"\\ud800$1\""};
  for (int k = 0; k < 2; k++) {
    char buf[8192];
    size_t o = (size_t)sprintf(buf, "1:\"x\"\n0:");
    for (int i = 0; i < 2000; i++) buf[o++] = '[';
    o += (size_t)sprintf(buf + o, "%s", inners[k]);
    for (int i = 0; i < 2000; i++) buf[o++] = ']';
    buf[o++] = '\n';
    for (unsigned long n = 1;; n++) {
      ts_counting c = {.fail_at = n};
      rsc_status st;
      bool null_decoder;
      char *got = decode_with(buf, o, 0, 0, &c, &st, &null_decoder);
      cr_assert_eq(c.live, 0);
      rsc_free(got);
      if (!c.failed) {
        cr_assert_eq(st, RSC_OK);
        break;
      }
      cr_assert_eq(st, RSC_ERR_NOMEM, "inner %d, call %lu: %d", k, n, st);
    }
  }
}

/* The hooks see every byte the decoder holds: NULL functions mean libc,
 * and a malloc/free pair without realloc works too. */
Test(alloc, malloc_and_free_without_realloc) {
  ts_counting c = {0};
  rsc_options opt;
  rsc_options_init(&opt);
  opt.alloc.malloc = ts_counting_malloc;
  opt.alloc.free = ts_counting_free;
  opt.alloc.ctx = &c;
  size_t len;
  char *in = ts_fixture("react/19.3.1/prod/page-16k.rsc", &len);
  cr_assert(in);
  rsc_decoder *d = rsc_decoder_new(&opt);
  for (size_t i = 0; i < len; i += 100) rsc_decoder_feed(d, in + i, len - i < 100 ? len - i : 100);
  cr_expect_eq(rsc_decoder_finish(d), RSC_OK);
  cr_expect(c.live > 0);
  rsc_decoder_free(d);
  cr_expect_eq(c.live, 0);
  free(in);
}

/* The arena: a request that does not fit while the head block still has
 * RSC_ARENA_ASIDE bytes free gets a block of its own behind the head,
 * which goes on serving what fits; a reset frees such blocks and keeps the
 * others for reuse. */
static bool in_block(const rsc_arena_block *b, const void *p) {
  const char *start = (const char *)b + RSC_ARENA_HDR;
  return (const char *)p >= start && (const char *)p < start + b->size;
}

/* An arena on the counting allocator: c counts its blocks. */
static void arena_on(rsc_arena *a, ts_counting *c) {
  memset(c, 0, sizeof *c);
  rsc_alloc al = {ts_counting_malloc, ts_counting_realloc, ts_counting_free, c};
  rsc__arena_init(a, &al);
}

/* n allocations of size bytes. */
static void fill(rsc_arena *a, int n, size_t size) {
  for (int i = 0; i < n; i++) cr_assert(rsc__arena_alloc(a, size));
}

/* p went to a block of its own behind the head, which stayed. */
static void expect_set_aside(const rsc_arena *a, const rsc_arena_block *head, const void *p) {
  cr_expect_eq(a->head, head, "the head stays");
  cr_expect(!in_block(head, p));
  cr_assert(head->prev && head->prev->aside && in_block(head->prev, p));
}

/* p opened a new head, an ordinary block. */
static void expect_new_head(const rsc_arena *a, const rsc_arena_block *old_head, const void *p) {
  cr_expect_neq(a->head, old_head);
  cr_expect(in_block(a->head, p) && !a->head->aside);
}

Test(alloc, arena_puts_a_big_request_aside_while_the_head_has_room) {
  ts_counting c;
  rsc_arena a;
  arena_on(&a, &c);
  a.aside = true;
  void *first = rsc__arena_alloc(&a, 16);
  rsc_arena_block *head = a.head;
  cr_assert(first && in_block(head, first));
  size_t room = head->size - head->used;
  cr_assert_geq(room, RSC_ARENA_ASIDE);
  /* Too big for the room left: its own block, behind the head. */
  void *big = rsc__arena_alloc(&a, room + 16);
  cr_assert(big);
  expect_set_aside(&a, head, big);
  memset(big, 0xab, room + 16);
  /* The head's room still serves small requests. */
  void *small = rsc__arena_alloc(&a, 32);
  cr_expect(in_block(head, small));
  size_t held = a.total;
  cr_expect_eq(c.live, 2);
  /* A reset gives the block of one request back and keeps the head. */
  rsc__arena_reset(&a);
  cr_expect_eq(c.live, 1);
  cr_expect_lt(a.total, held);
  cr_expect_eq(a.spare, head);
  cr_expect_null(a.spare->prev);
  cr_expect_eq(rsc__arena_alloc(&a, 16), first, "the kept block is reused");
  rsc__arena_free(&a);
  cr_expect_eq(c.live, 0);
}

/* Without the switch (the string arena, whose last allocation is shrunk
 * in place), a request that does not fit opens a new head, as before. */
Test(alloc, arena_without_aside_opens_a_new_head) {
  ts_counting c;
  rsc_arena a;
  arena_on(&a, &c);
  rsc__arena_alloc(&a, 16);
  rsc_arena_block *head = a.head;
  void *big = rsc__arena_alloc(&a, head->size - head->used + 16);
  cr_assert(big);
  expect_new_head(&a, head, big);
  rsc__arena_free(&a);
  cr_expect_eq(c.live, 0);
}

/* rsc__arena_alloc_aside gives one request the aside placement on an arena
 * without the switch (the string arena, for a JSON row's region). */
Test(alloc, arena_alloc_aside_places_one_request_aside) {
  ts_counting c;
  rsc_arena a;
  arena_on(&a, &c);
  void *first = rsc__arena_alloc_aside(&a, 16);
  rsc_arena_block *head = a.head;
  cr_assert(first && in_block(head, first), "a request that fits takes the head");
  size_t room = rsc__arena_room(&a);
  cr_assert_eq(room, head->size - head->used);
  cr_assert_geq(room, RSC_ARENA_ASIDE);
  void *big = rsc__arena_alloc_aside(&a, room + 16);
  cr_assert(big);
  expect_set_aside(&a, head, big);
  cr_expect_eq(rsc__arena_room(&a), room, "the head's room is untouched");
  /* Shrinking it leaves the head as it is (it is not the head's). */
  rsc__arena_shrink_last(&a, big, 8);
  cr_expect_eq(rsc__arena_room(&a), room);
  cr_expect(in_block(head, rsc__arena_alloc(&a, 32)), "small requests fill the head");
  /* With less than RSC_ARENA_ASIDE left, a new head opens, as for any
   * request. */
  fill(&a, 1, rsc__arena_room(&a) - 512);
  void *next = rsc__arena_alloc_aside(&a, 1024);
  cr_assert(next);
  expect_new_head(&a, head, next);
  rsc__arena_free(&a);
  cr_expect_eq(c.live, 0);
}

/* The arena grows by an eighth of what it holds: what it holds and has
 * not handed out stays within an eighth of it (plus the block headers). */
Test(alloc, arena_holds_at_most_an_eighth_more_than_it_gave) {
  ts_counting c;
  rsc_arena a;
  arena_on(&a, &c);
  size_t given = 0;
  for (int i = 0; i < 200000; i++) {
    cr_assert(rsc__arena_alloc(&a, 8));
    given += 8;
    size_t blocks = 0;
    if (i % 997) continue;
    for (rsc_arena_block *b = a.head; b; b = b->prev) blocks++;
    cr_assert_leq(a.total - given, a.total / 8 + 4096 + blocks * (RSC_ARENA_HDR + 8),
                  "%zu held for %zu given in %zu blocks", a.total, given, blocks);
  }
  rsc__arena_free(&a);
}

/* A JSON row too big for the rest of the string arena's block (the first,
 * 4 KiB) gets a region of its own; the small rows after it go on filling
 * that block (it was left behind, mostly empty: 4 KB of page-16k's 25 KB
 * of strings). */
Test(alloc, a_big_row_leaves_the_string_block_to_the_small_ones) {
  char in[16384];
  size_t len = 0;
  len += (size_t)snprintf(in + len, sizeof in - len, "1:{\"a\":\"b\"}\n2:[");
  for (int i = 0; i < 600; i++)
    len += (size_t)snprintf(in + len, sizeof in - len, "%s\"s%03d\"", i ? "," : "", i);
  len += (size_t)snprintf(in + len, sizeof in - len, "]\n");
  for (int i = 0; i < 40; i++)
    len += (size_t)snprintf(in + len, sizeof in - len, "%x:{\"k\":\"v%d\"}\n", i + 3, i);
  len += (size_t)snprintf(in + len, sizeof in - len, "0:\"$2\"\n");
  rsc_options opt;
  rsc_options_init(&opt);
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert(d);
  cr_assert_eq(rsc_decoder_feed(d, in, len), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  size_t plain = 0, aside = 0;
  for (rsc_arena_block *b = d->strings.head; b; b = b->prev) {
    if (b->aside) aside++;
    else plain++;
  }
  cr_expect_eq(plain, 1, "the small rows share the first block");
  cr_assert_eq(aside, 1, "the 600-string row has its own");
  /* The aside region is the tight bound: the row's length plus 3 per
   * string and the padding, not 5/3 of the row. */
  size_t row = 2 + 600 * 7;
  cr_assert(d->strings.head->prev && d->strings.head->prev->aside);
  cr_expect_leq(d->strings.head->prev->size, row + 3 * 601 + 64 + 64);
  rsc_decoder_free(d);
}

/* A decode that spread over several blocks leaves, at reset, one block's
 * worth for the next: the blocks go back to the allocator and the next
 * block holds all the last decode held, so the same allocations again
 * take one block. */
Test(alloc, arena_reset_gathers_several_blocks_into_one) {
  ts_counting c;
  rsc_arena a;
  arena_on(&a, &c);
  fill(&a, 200, 1000);
  size_t blocks = 0;
  for (rsc_arena_block *b = a.head; b; b = b->prev) blocks++;
  cr_assert_gt(blocks, 2);
  size_t held = a.total;
  rsc__arena_reset(&a);
  cr_expect_eq(c.live, 0, "the blocks went back");
  cr_expect_eq(a.total, 0);
  fill(&a, 200, 1000);
  cr_expect_eq(c.live, 1, "the same allocations again fit one block");
  cr_expect_null(a.head->prev);
  cr_expect_leq(a.total, held);
  /* Now in one block, a reset keeps it. */
  rsc_arena_block *one = a.head;
  rsc__arena_reset(&a);
  cr_expect_eq(a.spare, one);
  cr_expect_eq(c.live, 1);
  rsc__arena_free(&a);
  cr_expect_eq(c.live, 0);
}

/* Past the largest block the arena makes, blocks are kept as they are. */
Test(alloc, arena_reset_keeps_blocks_past_the_block_cap) {
  ts_counting c;
  rsc_arena a;
  arena_on(&a, &c);
  a.max_block = 8192;
  fill(&a, 200, 1000);
  size_t live = c.live;
  cr_assert_gt(live, 2);
  rsc__arena_reset(&a);
  cr_expect_eq(c.live, live, "every block kept for reuse");
  rsc__arena_free(&a);
  cr_expect_eq(c.live, 0);
}

/* What a decoder kept for the next one holds (decoder.c, warm_trim): the
 * largest blocks of its two arenas go back until both hold at most the
 * limit. */
Test(alloc, arena_trim_gives_back_the_largest_blocks) {
  ts_counting c1, c2;
  rsc_arena a, b;
  arena_on(&a, &c1);
  arena_on(&b, &c2);
  fill(&a, 3000, 1000); /* 3 MB: not merged (arena_trim_merges_below_...) */
  fill(&b, 2, 1000);    /* one block */
  size_t before = a.total + b.total, limit = before / 2;
  size_t biggest_before = 0;
  for (rsc_arena_block *x = a.head; x; x = x->prev)
    if (x->size > biggest_before) biggest_before = x->size;
  rsc__arena_trim(&a, &b, limit);
  cr_expect_null(a.head);
  cr_expect_null(b.head);
  cr_expect_leq(a.total + b.total, limit, "%zu of %zu", a.total + b.total, before);
  cr_expect_gt(a.total + b.total, limit / 2, "gave back more than it had to");
  size_t biggest_kept = 0, held = 0;
  rsc_arena *both[] = {&a, &b};
  for (int k = 0; k < 2; k++)
    for (rsc_arena_block *x = both[k]->spare; x; x = x->prev) {
      if (x->size > biggest_kept) biggest_kept = x->size;
      held += RSC_ARENA_HDR + x->size;
    }
  cr_expect_eq(held, a.total + b.total, "the totals count the blocks kept");
  cr_expect_lt(biggest_kept, biggest_before, "the largest block was kept");
  cr_expect_eq(a.peak, a.total);
  /* What was kept serves the next fill without new blocks. */
  long live = c1.live;
  fill(&a, 10, 1000);
  cr_expect_eq(c1.live, live);
  rsc__arena_free(&a);
  rsc__arena_free(&b);
  cr_expect_eq(c1.live + c2.live, 0);
}

/* Blocks grown a step at a time are merged into one of what they held, as
 * a reset merges them, only while that stays below a huge page: the next
 * decoder's payload may be tiny, and a fresh huge page zeroed for a few
 * bytes took 90 us. */
Test(alloc, arena_trim_merges_below_a_huge_page_only) {
  ts_counting c1, c2;
  rsc_arena a, b;
  arena_on(&a, &c1);
  arena_on(&b, &c2);
  fill(&a, 3000, 1000); /* about 3 MB in blocks of an eighth of the total */
  fill(&b, 300, 1000);  /* about 300 KB */
  long live_a = c1.live;
  cr_assert_gt(live_a, 2);
  cr_assert_gt(a.total, (size_t)2 << 20);
  cr_assert_lt(a.total, (size_t)4 << 20);
  rsc__arena_trim(&a, &b, (size_t)16 << 20);
  cr_expect_eq(c1.live, live_a, "blocks of 3 MB were merged, as a reset merges them");
  cr_expect_eq(c2.live, 0, "blocks of 300 KB were not merged");
  cr_expect_eq(b.total, 0);
  /* A reset of the same 3 MB merges them, for a decode like the last. */
  fill(&a, 3000, 1000);
  rsc__arena_reset(&a);
  cr_expect_eq(c1.live, 0);
  rsc__arena_free(&a);
  rsc__arena_free(&b);
}

/* A kept decoder's stacks are bounded too: the walk's grew to 8,192
 * entries for an array nested 5,000 deep, and goes back past 4,096. */
Test(alloc, a_kept_decoder_gives_back_a_deep_walk_stack) {
  rsc_release_memory();
  size_t n = 5000, k = 0;
  char *b = malloc(2 * n + 32);
  k += (size_t)sprintf(b, "0:");
  for (size_t i = 0; i < n; i++) b[k++] = '[';
  k += (size_t)sprintf(b + k, "\"$undefined\"");
  for (size_t i = 0; i < n; i++) b[k++] = ']';
  b[k++] = '\n';
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_assert_eq(rsc_decoder_feed(d, b, k), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  cr_assert_gt(d->walk.cap, 4096);
  rsc_decoder_free(d);
  rsc_decoder *again = rsc_decoder_new(NULL);
  cr_expect_eq(again, d, "kept");
  cr_expect_leq(again->walk.cap, 4096);
  cr_assert_eq(rsc_decoder_feed(again, b, k), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(again), RSC_OK);
  rsc_decoder_free(again);
  rsc_release_memory();
  free(b);
}

/* Text and binary rows' copies live in the string arena, not between the
 * nodes and chunks of the node arena (a chunk read after kilobytes of text
 * would be a cache miss each). */
static bool in_arena(const rsc_arena *a, const void *p) {
  for (const rsc_arena_block *b = a->head; b; b = b->prev)
    if (in_block(b, p)) return true;
  return false;
}

Test(alloc, row_copies_live_beside_the_strings) {
  char text[3000];
  memset(text, 'x', sizeof text);
  char payload[4000];
  int n = snprintf(payload, sizeof payload, "1:T%zx,%.*s2:o3,abc0:[\"$1\",\"$2\"]\n", sizeof text,
                   (int)sizeof text, text);
  rsc_decoder *d = rsc_decoder_new(NULL);
  cr_assert_eq(rsc_decoder_feed(d, payload, (size_t)n), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
  size_t len = 0;
  const char *s = rsc_node_string(rsc_node_at(root, 0), &len);
  cr_assert(s && len == sizeof text);
  const uint8_t *bytes = rsc_node_bytes(rsc_node_at(root, 1), &len);
  cr_assert(bytes && len == 3 && memcmp(bytes, "abc", 3) == 0);
  cr_expect(in_arena(&d->strings, s) && !in_arena(&d->arena, s));
  cr_expect(in_arena(&d->strings, bytes) && !in_arena(&d->arena, bytes));
  cr_expect(in_arena(&d->arena, rsc_decoder_root(d)), "chunks stay in the node arena");
  rsc_decoder_free(d);
}

/* A text or binary row split across feeds is gathered straight into the
 * string arena, where its value stays: one copy, no framer buffer the
 * size of the row. The dump is the one of the payload fed whole, for
 * valid text, invalid text (repaired), a BOM (kept, and dropped with
 * RSC_OPT_DROP_BOM), and a typed array whose length is no multiple of its
 * element size (RSC_OPT_LENIENT_VALUES truncates it, as React does). */
static void gathered_rows(bool drop_bom) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = RSC_OPT_LENIENT_VALUES | (drop_bom ? RSC_OPT_DROP_BOM : 0);
  size_t n = 100000;
  char *text = malloc(n);
  for (size_t k = 0; k < n; k++) text[k] = (char)('a' + k % 26);
  memcpy(text + 5000, "\xc3\xa9", 2); /* é */
  char *bad = malloc(n);
  memcpy(bad, text, n);
  bad[7000] = (char)0xff;
  size_t cap = 3 * n + 200;
  char *payload = malloc(cap);
  int len = snprintf(payload, cap, "1:T%zx,%.*s2:T%zx,%.*s3:T%zx,\xef\xbb\xbf%.*s4:g13,", n, (int)n,
                     text, n, (int)n, bad, n - 3, (int)(n - 6), text);
  memcpy(payload + len, "0123456789abcdefghi", 0x13);
  len += 0x13;
  len += snprintf(payload + len, cap - (size_t)len, "0:[\"$1\",\"$2\",\"$3\",\"$4\"]\n");
  rsc_decoder *whole = rsc_decoder_new(&opt);
  cr_assert_eq(rsc_decoder_feed(whole, payload, (size_t)len), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(whole), RSC_OK);
  char *want = rsc_dump(whole, 0, NULL);
  rsc_decoder_free(whole);
  size_t pieces[] = {1, 7, 4096, 65536};
  for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
    rsc_release_memory(); /* a new decoder, not the one just freed */
    rsc_decoder *d = rsc_decoder_new(&opt);
    size_t piece = pieces[i];
    for (size_t k = 0; k < (size_t)len; k += piece)
      cr_assert_eq(
          rsc_decoder_feed(d, payload + k, (size_t)len - k < piece ? (size_t)len - k : piece),
          RSC_OK);
    cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
    char *got = rsc_dump(d, 0, NULL);
    cr_expect_str_eq(got, want, "pieces of %zu", piece);
    rsc_free(got);
    const rsc_node *root = rsc_chunk_value(rsc_decoder_root(d));
    size_t sl = 0, bl = 0;
    const char *s = rsc_node_string(rsc_node_at(root, 0), &sl);
    const char *bom = rsc_node_string(rsc_node_at(root, 2), &bl);
    cr_assert(s && sl == n && memcmp(s, text, n) == 0 && s[n] == 0);
    size_t mark = drop_bom ? 0 : 3;
    cr_assert(bom && bl == n - 6 + mark && memcmp(bom, "\xef\xbb\xbf", mark) == 0 &&
              memcmp(bom + mark, text, n - 6) == 0 && bom[bl] == 0);
    cr_expect(in_arena(&d->strings, s) && in_arena(&d->strings, bom));
    cr_expect_lt(rsc__frame_buffer_cap(d->frame), 4096,
                 "pieces of %zu: the framer gathered no long row itself", piece);
    rsc_decoder_free(d);
  }
  rsc_free(want);
  free(payload);
  free(bad);
  free(text);
}

Test(alloc, split_text_and_binary_rows_are_gathered_where_they_stay) {
  gathered_rows(false);
  gathered_rows(true);
}

/* ---- what a short batch takes ---------------------------------------------- */

/* Bytes held through the hooks, at most (each block's size kept before it). */
typedef struct sized {
  size_t now, peak;
} sized;
static void *s_malloc(void *ctx, size_t n) {
  sized *s = ctx;
  size_t *p = malloc(n + 16);
  if (!p) return NULL;
  p[0] = n;
  s->now += n;
  if (s->now > s->peak) s->peak = s->now;
  return (char *)p + 16;
}
static void s_free(void *ctx, void *q) {
  if (!q) return;
  sized *s = ctx;
  size_t *p = (size_t *)((char *)q - 16);
  s->now -= p[0];
  free(p);
}
static void *s_realloc(void *ctx, void *q, size_t old_size, size_t n) {
  (void)old_size;
  void *r = s_malloc(ctx, n);
  if (r && q) {
    size_t had = ((size_t *)((char *)q - 16))[0];
    memcpy(r, q, had < n ? had : n);
    s_free(ctx, q);
  }
  return r;
}

static size_t peak_of(const char *in, uint64_t *batched) {
  sized s = {0, 0};
  rsc_options opt;
  rsc_options_init(&opt);
  opt.alloc.malloc = s_malloc;
  opt.alloc.realloc = s_realloc;
  opt.alloc.free = s_free;
  opt.alloc.ctx = &s;
  rsc_decoder *d = rsc_decoder_new(&opt);
  cr_assert(d);
  cr_assert_eq(rsc_decoder_feed(d, in, strlen(in)), RSC_OK);
  cr_assert_eq(rsc_decoder_finish(d), RSC_OK);
  *batched = d->batched_rows;
  rsc_decoder_free(d);
  return s.peak;
}

/* A run of three small rows shares one stage 1 (json_shim.cpp): its
 * buffers are sized to those rows, not to the longest run (256 rows and
 * 8 KB at once were a fifth of page-25k's peak). */
Test(alloc, a_short_batch_takes_room_for_its_rows_only) {
  uint64_t batched;
  size_t alone = peak_of("1:[1]\n0:[\"$1\"]\n", &batched);
  cr_expect_eq(batched, 0);
  size_t run = peak_of("1:[1]\n2:[2]\n0:[\"$1\",\"$2\"]\n", &batched);
  cr_expect_eq(batched, 3);
  cr_expect_lt(run, alone + 2048, "a batch of three rows took %zu bytes more", run - alone);
}
