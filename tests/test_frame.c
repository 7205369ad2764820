/* test_frame.c - the row framer alone: no JSON, no chunk table. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "support.h"

typedef struct collected {
  char log[8192];
  size_t len;
  int rows;
  size_t piece_bytes; /* bytes of 'b' pieces, however split */
} collected;

/* Logs "id:tag:len:data|" per row; 'b' pieces are merged by the caller. */
static rsc_status collect(void *ctx, const rsc_row *row) {
  collected *c = ctx;
  if (row->tag == 'b') {
    c->piece_bytes += row->len;
    if (row->partial) return RSC_OK;
  }
  c->rows++;
  int n = snprintf(c->log + c->len, sizeof c->log - c->len, "%lld:%c:%zu:", (long long)row->id,
                   row->tag ? row->tag : '-', row->tag == 'b' ? c->piece_bytes : row->len);
  c->len += (size_t)n;
  if (row->tag != 'b') {
    memcpy(c->log + c->len, row->data, row->len);
    c->len += row->len;
  }
  c->log[c->len++] = '|';
  c->log[c->len] = 0;
  if (row->tag == 'b') c->piece_bytes = 0;
  return RSC_OK;
}

/* Frames `in` fed in pieces of `piece` bytes (0: whole). */
static rsc_status frame_all(const char *in, size_t len, size_t piece, collected *c, rsc_error *e,
                            bool lenient) {
  memset(c, 0, sizeof *c);
  rsc_frame *f = rsc__frame_new(NULL, lenient, 1 << 20);
  rsc_status st = RSC_OK;
  if (!piece) piece = len ? len : 1;
  for (size_t i = 0; i < len && st == RSC_OK; i += piece)
    st = rsc__frame_feed(f, (const uint8_t *)in + i, len - i < piece ? len - i : piece, collect, c,
                         e);
  rsc__frame_free(f);
  return st;
}

static void expect_rows(const char *in, size_t len, const char *want) {
  for (size_t piece = 0; piece <= len; piece = piece ? piece * 2 : 1) {
    collected c;
    rsc_error e;
    cr_assert_eq(frame_all(in, len, piece, &c, &e, false), RSC_OK, "piece %zu", piece);
    cr_expect_str_eq(c.log, want, "fed in pieces of %zu", piece);
  }
}

Test(frame, newline_rows_and_tags) {
  const char in[] = "0:{\"a\":1}\n1:I[\"m\",[],\"x\"]\n:HD\"h\"\n2:zabc\n";
  expect_rows(in, sizeof in - 1,
              "0:-:7:{\"a\":1}|1:I:12:[\"m\",[],\"x\"]|0:H:4:D\"h\"|2:-:4:zabc|");
}

Test(frame, length_rows_keep_newlines_and_end_without_terminator) {
  const char in[] = "1:T5,a\nb\nc0:\"$1\"\n2:o3,\n\n\n";
  expect_rows(in, sizeof in - 1, "1:T:5:a\nb\nc|0:-:4:\"$1\"|2:o:3:\n\n\n|");
}

Test(frame, lowercase_letters_that_start_json_are_not_tags) {
  const char in[] = "0:null\n1:true\n2:false\n3:#x\n4:r\n5:x\n";
  expect_rows(in, sizeof in - 1, "0:-:4:null|1:-:4:true|2:-:5:false|3:#:1:x|4:r:0:|5:x:0:|");
}

Test(frame, byte_stream_pieces_arrive_early) {
  const char in[] = "1:b6,Hello 1:b5,world1:C\n";
  for (size_t piece = 1; piece < sizeof in; piece++) {
    collected c;
    rsc_error e;
    cr_assert_eq(frame_all(in, sizeof in - 1, piece, &c, &e, false), RSC_OK);
    cr_expect_str_eq(c.log, "1:b:6:|1:b:5:|1:C:0:|", "piece %zu", piece);
  }
}

Test(frame, a_final_row_without_its_end_is_not_delivered) {
  collected c;
  rsc_error e;
  cr_assert_eq(frame_all("0:{\"a\":1}", 9, 0, &c, &e, false), RSC_OK);
  cr_expect_eq(c.rows, 0);
  cr_assert_eq(frame_all("0:\"x\"\n1:o0,", 11, 0, &c, &e, false), RSC_OK);
  cr_expect_eq(c.rows, 1, "an empty length row at the very end is never completed");
}

Test(frame, ids_and_offsets) {
  collected c;
  rsc_error e;
  memset(&e, 0x5a, sizeof e);
  cr_assert_eq(frame_all("1f:1\nA:1\n", 9, 0, &c, &e, false), RSC_ERR_BAD_ID);
  cr_expect_eq(e.offset, 5); /* the 'A' */
  cr_expect_eq(e.row_id, -1);
  cr_expect_str_eq(c.log, "31:-:1:1|");
  memset(&e, 0x5a, sizeof e);
  cr_assert_eq(frame_all("80000000:1\n", 11, 1, &c, &e, false), RSC_ERR_BAD_ID);
  cr_expect_eq(e.offset, 7, "the digit that reaches 2^31");
  memset(&e, 0x5a, sizeof e);
  cr_assert_eq(frame_all("1:Tz,", 5, 0, &c, &e, false), RSC_ERR_BAD_LENGTH);
  cr_expect_eq(e.offset, 3);
  cr_expect_eq(e.row_id, 1);
}

Test(frame, lenient_ids_fold_like_react) {
  collected c;
  rsc_error e;
  cr_assert_eq(frame_all("A:1\ng:2\n80000000:3\n", 20, 0, &c, &e, true), RSC_OK);
  cr_expect_str_eq(c.log, "17:-:1:1|16:-:1:2|-2147483648:-:1:3|");
}

Test(frame, row_size_limit) {
  rsc_frame *f = rsc__frame_new(NULL, false, 8);
  collected c;
  memset(&c, 0, sizeof c);
  rsc_error e;
  cr_expect_eq(rsc__frame_feed(f, (const uint8_t *)"1:T10,", 6, collect, &c, &e), RSC_ERR_LIMIT);
  rsc__frame_free(f);
  f = rsc__frame_new(NULL, false, 8);
  cr_expect_eq(rsc__frame_feed(f, (const uint8_t *)"0:\"12345678\"\n", 13, collect, &c, &e),
               RSC_ERR_LIMIT);
  cr_expect_eq(e.offset, 10, "the first byte past the limit");
  rsc__frame_free(f);
}

/* A length read whole in one buffer (the framer's fast path) and one read
 * byte by byte give the same rows and the same error at the same offset:
 * at and over the limit, leading zeros, 15 and 16 digits, overflow, bad
 * digits, an empty length. */
Test(frame, lengths_whole_and_split_agree) {
  const char *cases[] = {
      "1:T8,abcdefgh0:1\n",
      "1:T9,abcdefghi",
      "1:T0008,abcdefgh",
      "1:T,0:1\n",
      "1:T00000000000008,abcdefgh",
      "1:T000000000000008,abcdefgh",
      "1:T10000000000000000,x",
      "1:TA,x",
      "1:T8x,abcdefgh",
      "1:o3,abc2:T1,z",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *in = cases[i];
    size_t len = strlen(in);
    rsc_status want_st = 0;
    uint64_t want_off = 0;
    char want_log[8192];
    for (size_t piece = 0; piece <= 2; piece++) { /* whole, then 1 and 2 bytes */
      collected c;
      memset(&c, 0, sizeof c);
      rsc_error e;
      memset(&e, 0, sizeof e);
      rsc_frame *f = rsc__frame_new(NULL, false, 8);
      rsc_status st = RSC_OK;
      size_t step = piece ? piece : len;
      for (size_t k = 0; k < len && st == RSC_OK; k += step)
        st = rsc__frame_feed(f, (const uint8_t *)in + k, len - k < step ? len - k : step, collect,
                             &c, &e);
      rsc__frame_free(f);
      if (!piece) {
        want_st = st;
        want_off = st ? e.offset : 0;
        strcpy(want_log, c.log);
        continue;
      }
      cr_expect_eq(st, want_st, "%s in pieces of %zu", in, piece);
      if (st) cr_expect_eq(e.offset, want_off, "%s in pieces of %zu", in, piece);
      cr_expect_str_eq(c.log, want_log, "%s in pieces of %zu", in, piece);
    }
  }
}

static rsc_status collect_count_only(void *ctx, const rsc_row *row) {
  collected *c = ctx;
  c->rows++;
  c->piece_bytes = row->len;
  return RSC_OK;
}

/* A row split into many pieces is gathered once: the cost stays linear. */
Test(frame, one_byte_feeds_of_a_large_row) {
  size_t n = 1 << 20;
  char *in = malloc(n + 16);
  memcpy(in, "0:\"", 3);
  memset(in + 3, 'x', n);
  memcpy(in + 3 + n, "\"\n", 2);
  collected c;
  rsc_error e;
  rsc_frame *f = rsc__frame_new(NULL, false, (uint64_t)1 << 24);
  memset(&c, 0, sizeof c);
  for (size_t i = 0; i < n + 5; i++) {
    /* collect() logs only short rows; count rows here instead */
    rsc_status st = rsc__frame_feed(f, (const uint8_t *)in + i, 1, collect_count_only, &c, &e);
    cr_assert_eq(st, RSC_OK);
  }
  cr_expect_eq(c.rows, 1);
  cr_expect_eq(c.piece_bytes, n + 2);
  rsc__frame_free(f);
  free(in);
}

/* A consumer's rsc_dest_fn: hands out buffers it records, or none. */
typedef struct dest_log {
  collected c;
  int asked;         /* calls of dest_fn                                   */
  bool refuse;       /* answer NULL (the framer gathers into its own)      */
  uint8_t *given[8]; /* the buffers handed out                             */
  size_t given_len[8];
  int gathered;  /* rows that came back in a given buffer              */
  bool mismatch; /* a gathered row not at the start of its buffer     */
} dest_log;

static uint8_t *dest_give(void *ctx, uint8_t tag, size_t len) {
  dest_log *l = ctx;
  (void)tag;
  if (l->refuse || l->asked == 8) return NULL;
  uint8_t *b = malloc(len + 1);
  l->given[l->asked] = b;
  l->given_len[l->asked++] = len;
  return b;
}

static rsc_status collect_dest(void *ctx, const rsc_row *row) {
  dest_log *l = ctx;
  if (row->gathered) {
    l->gathered++;
    bool found = false;
    for (int k = 0; k < l->asked; k++)
      found |= row->data == l->given[k] && row->len == l->given_len[k];
    if (!found || row->in_place) l->mismatch = true;
  }
  return row->len < 1024 ? collect(&l->c, row) : collect_count_only(&l->c, row);
}

static void frame_dest(const char *in, size_t len, size_t piece, dest_log *l, uint64_t max_row) {
  rsc_frame *f = rsc__frame_new(NULL, false, max_row);
  f->dest_fn = dest_give;
  rsc_error e;
  for (size_t i = 0; i < len; i += piece)
    cr_assert_eq(rsc__frame_feed(f, (const uint8_t *)in + i, len - i < piece ? len - i : piece,
                                 collect_dest, l, &e),
                 RSC_OK);
  rsc__frame_free(f);
}

static void dest_free(dest_log *l) {
  for (int k = 0; k < l->asked; k++) free(l->given[k]);
}

/* Text and binary rows a feed leaves unfinished are gathered into the
 * consumer's buffer, sized to the row: the same rows, whatever the
 * pieces; JSON rows, 'b' pieces and rows that end inside one feed are
 * not. With the consumer declining, the framer's own buffer serves. */
Test(frame, split_length_rows_gather_into_the_consumers_buffer) {
  const char in[] = "1:T5,a\nb\nc0:\"$1\"\n2:o3,\n\n\n3:b4,xyzw4:T0,5:g10,0123456789abcdef";
  const char want[] =
      "1:T:5:a\nb\nc|0:-:4:\"$1\"|2:o:3:\n\n\n|3:b:4:|4:T:0:|5:g:16:0123456789abcdef|";
  size_t len = sizeof in - 1;
  for (size_t piece = 1; piece <= len; piece++) {
    dest_log l;
    memset(&l, 0, sizeof l);
    frame_dest(in, len, piece, &l, 1 << 20);
    cr_expect_str_eq(l.c.log, want, "pieces of %zu", piece);
    cr_expect(!l.mismatch, "pieces of %zu: a gathered row is not its buffer", piece);
    cr_expect_eq(l.gathered, l.asked, "pieces of %zu: every buffer given is used", piece);
    if (piece == 1) cr_expect_eq(l.gathered, 3, "T, o and g rows, one byte at a time");
    if (piece == len) cr_expect_eq(l.asked, 0, "fed whole, every row is in place");
    dest_free(&l);
    memset(&l, 0, sizeof l);
    l.refuse = true;
    frame_dest(in, len, piece, &l, 1 << 20);
    cr_expect_str_eq(l.c.log, want, "pieces of %zu, declined", piece);
    cr_expect_eq(l.gathered, 0);
  }
}

/* A text row gathered into the consumer's buffer reports how much of it
 * was checked as ASCII while its pieces were copied: never past its first
 * other byte, and of an ASCII row fed in pieces of 256 bytes or more, all
 * but the last piece at least (smaller pieces, and the decoder's
 * small-feed fast paths, copy without a check). */
typedef struct ascii_log {
  size_t ascii, len;
  int rows;
} ascii_log;

static rsc_status note_ascii(void *ctx, const rsc_row *row) {
  ascii_log *l = ctx;
  if (row->tag == 'T' && row->gathered) {
    l->ascii = row->ascii;
    l->len = row->len;
    l->rows++;
  }
  return RSC_OK;
}

static uint8_t *dest_static(void *ctx, uint8_t tag, size_t len) {
  static uint8_t buf[4096];
  (void)ctx, (void)tag;
  return len < sizeof buf ? buf : NULL;
}

Test(frame, a_gathered_text_rows_ascii_prefix_is_known) {
  enum { N = 2000 };
  static char in[N + 16];
  for (int other = -1; other < N; other += 179) {
    int h = snprintf(in, sizeof in, "1:T%x,", N);
    for (int k = 0; k < N; k++) in[h + k] = (char)(k == other ? 0xC3 : 'a' + k % 26);
    if (other >= 0 && other + 1 < N) in[h + other + 1] = (char)0xA9; /* U+00E9 */
    size_t len = (size_t)h + N;
    for (size_t piece = 1; piece < len; piece = piece < 16 ? piece + 1 : piece * 2) {
      rsc_frame *f = rsc__frame_new(NULL, false, 1 << 20);
      f->dest_fn = dest_static;
      ascii_log l = {0, 0, 0};
      rsc_error e;
      for (size_t i = 0; i < len; i += piece)
        cr_assert_eq(rsc__frame_feed(f, (const uint8_t *)in + i, len - i < piece ? len - i : piece,
                                     note_ascii, &l, &e),
                     RSC_OK);
      cr_assert_eq(l.rows, 1, "pieces of %zu", piece);
      cr_expect_eq(l.len, N);
      size_t truth = other < 0 ? N : (size_t)other;
      cr_expect_leq(l.ascii, truth, "other byte at %d, pieces of %zu: %zu", other, piece, l.ascii);
      if (other < 0 && piece >= 512)
        cr_expect_geq(l.ascii, N - piece, "pieces of %zu: %zu", piece, l.ascii);
      rsc__frame_free(f);
    }
  }
}

/* A length can claim far more than arrives: a row over 1 MiB gets its
 * buffer only once an eighth of it is here (what was gathered is carried
 * over), so a claim of 256 MiB and one byte allocates nothing of that. */
Test(frame, a_long_rows_buffer_waits_for_an_eighth_of_it) {
  size_t n = (size_t)4 << 20;
  char head[32];
  int h = snprintf(head, sizeof head, "1:T%zx,", n);
  char *in = malloc((size_t)h + n);
  memcpy(in, head, (size_t)h);
  for (size_t k = 0; k < n; k++) in[h + k] = (char)('a' + k % 26);
  dest_log l;
  memset(&l, 0, sizeof l);
  rsc_frame *f = rsc__frame_new(NULL, false, (uint64_t)256 << 20);
  f->dest_fn = dest_give;
  rsc_error e;
  size_t fed = 0, piece = 64 << 10;
  cr_assert_eq(rsc__frame_feed(f, (const uint8_t *)in, (size_t)h + 1, collect_count_only, &l.c, &e),
               RSC_OK);
  fed = (size_t)h + 1;
  cr_expect_eq(l.asked, 0, "one byte of a 4 MiB row: no buffer yet");
  while (fed < (size_t)h + n / 8 - piece) {
    cr_assert_eq(rsc__frame_feed(f, (const uint8_t *)in + fed, piece, collect_count_only, &l.c, &e),
                 RSC_OK);
    fed += piece;
  }
  cr_expect_eq(l.asked, 0, "less than an eighth: no buffer yet");
  while (fed < (size_t)h + n) {
    size_t k = (size_t)h + n - fed < piece ? (size_t)h + n - fed : piece;
    cr_assert_eq(rsc__frame_feed(f, (const uint8_t *)in + fed, k, collect_dest, &l, &e), RSC_OK);
    fed += k;
  }
  cr_expect_eq(l.asked, 1);
  cr_expect_eq(l.gathered, 1);
  cr_expect(!l.mismatch);
  cr_expect(memcmp(l.given[0], in + h, n) == 0, "what was gathered before is carried over");
  cr_expect_lt(rsc__frame_buffer_cap(f), n, "the framer's own buffer stopped growing");
  rsc__frame_free(f);
  dest_free(&l);
  /* A claim of 256 MiB and a byte. */
  memset(&l, 0, sizeof l);
  f = rsc__frame_new(NULL, false, (uint64_t)256 << 20);
  f->dest_fn = dest_give;
  const char claim[] = "1:T10000000,x";
  cr_assert_eq(rsc__frame_feed(f, (const uint8_t *)claim, sizeof claim - 1, collect_dest, &l, &e),
               RSC_OK);
  cr_expect_eq(l.asked, 0);
  rsc__frame_free(f);
  free(in);
}

/* rsc__frame_peek: the row at p when all of it lies before end. */
Test(frame, peek_sees_whole_rows_only) {
  static const char in[] = "1f:[1,2]\n2:T3,a\nb3:Hx\n4:{}";
  const uint8_t *p = (const uint8_t *)in, *end = p + sizeof in - 1;
  rsc_peek r;
  const uint8_t *next = rsc__frame_peek(p, end, 64, &r);
  cr_assert(next);
  cr_expect_eq(r.tag, 0);
  cr_expect_eq(r.len, 5);
  cr_expect(memcmp(r.data, "[1,2]", 5) == 0);
  next = rsc__frame_peek(next, end, 64, &r); /* a length row: no LF needed */
  cr_assert(next);
  cr_expect_eq(r.tag, 'T');
  cr_expect_eq(r.len, 3);
  cr_expect(memcmp(r.data, "a\nb", 3) == 0);
  next = rsc__frame_peek(next, end, 64, &r);
  cr_assert(next);
  cr_expect_eq(r.tag, 'H');
  cr_expect(r.len == 1 && r.data[0] == 'x');
  cr_expect_null(rsc__frame_peek(next, end, 64, &r), "no LF: not whole");
  cr_expect_null(rsc__frame_peek(p, end, 4, &r), "longer than max_len: not scanned");
  cr_expect(rsc__frame_peek(p, end, 5, &r) && r.len == 5, "as long as max_len");
  static const char longer[] = "2:T9,abc\n12345678:[]\n";
  cr_expect_null(rsc__frame_peek((const uint8_t *)longer, (const uint8_t *)longer + 8, 64, &r),
                 "a length past end");
  cr_expect_null(rsc__frame_peek((const uint8_t *)longer + 9,
                                 (const uint8_t *)longer + sizeof longer - 1, 64, &r),
                 "an id of 8 digits: left to the framer");
}

/* The framer takes the ends of rows peeked at in the buffer it is framing
 * instead of scanning again, and only for the rows they belong to. */
static int peek_rows;
static rsc_frame *peek_frame;
static const char peek_in[] = "1:[1]\n2:[22]\n3:T2,[45:[333]\n";
static rsc_status peek_ahead(void *ctx, const rsc_row *row) {
  static const char *want[] = {"[1]", "[22]", "[4", "[333]"};
  (void)ctx;
  cr_assert(peek_rows < 4);
  cr_expect_eq(row->len, strlen(want[peek_rows]), "row %d", peek_rows);
  cr_expect(memcmp(row->data, want[peek_rows], row->len) == 0, "row %d", peek_rows);
  const uint8_t *end = (const uint8_t *)peek_in + sizeof peek_in - 1;
  if (peek_rows == 0) { /* as the JSON stage does: the rows after this one */
    rsc_peek r;
    const uint8_t *p = row->data + row->len + 1;
    while (p && p < end) {
      p = rsc__frame_peek(p, end, 64, &r);
      if (p && r.tag == 0) cr_assert(rsc__frame_remember_row(peek_frame, r.data, r.len));
    }
    cr_expect_eq(peek_frame->peeked_count, 2, "newline rows only");
  }
  if (peek_rows == 3) cr_expect_eq(peek_frame->peeked_next, 2, "both taken");
  peek_rows++;
  return RSC_OK;
}
Test(frame, peeked_row_ends_are_taken_where_they_belong) {
  peek_frame = rsc__frame_new(NULL, false, 1 << 20);
  rsc_error err;
  peek_rows = 0;
  cr_expect_eq(rsc__frame_feed(peek_frame, (const uint8_t *)peek_in, sizeof peek_in - 1, peek_ahead,
                               NULL, &err),
               RSC_OK);
  cr_expect_eq(peek_rows, 4);
  cr_expect_eq(peek_frame->peeked_count, 0, "cleared when the feed ends");
  rsc__frame_free(peek_frame);
}
