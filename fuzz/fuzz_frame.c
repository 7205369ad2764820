/* fuzz_frame.c - the framer alone (src/frame.h).
 *
 * Input: byte 0 picks lenient ids (bit 0) and the row size limit (bits 1-3),
 * byte 1 seeds the feed split; the rest is the stream. It is framed twice,
 * whole and in random pieces, and both runs must hand out the same rows (a
 * 'b' row's pieces joined) and the same error. Every row's bytes must be
 * the input's bytes at the offsets it claims, and a row marked padded must
 * have RSC_FRAME_PADDING readable bytes after it (ASan checks the reads).
 * The split run gives text and binary rows buffers of their own (dest_fn)
 * when the seed's low bit is set: exactly the row's size, so a write past
 * a row is caught too, and a row gathered there must come back in one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz_common.h"

typedef struct log {
  const uint8_t *input;
  size_t input_len;
  bool lenient;
  uint64_t hash;
  uint64_t rows;
  /* the 'b' row being gathered */
  bool in_b;
  uint64_t b_offset, b_data_offset, b_next, b_len;
  int64_t b_id;
  /* buffers dest_fn gave (the split run) */
  uint8_t **given;
  size_t n_given;
} log_t;

static uint8_t *give(void *ctx, uint8_t tag, size_t len) {
  log_t *l = (log_t *)ctx;
  FUZZ_CHECK(tag != 'b' && len > 0);
  uint8_t **g = (uint8_t **)realloc(l->given, (l->n_given + 1) * sizeof *g);
  FUZZ_CHECK(g);
  l->given = g;
  g[l->n_given] = (uint8_t *)malloc(len);
  FUZZ_CHECK(g[l->n_given]);
  return g[l->n_given++];
}

static void mix(log_t *l, const void *p, size_t n) {
  const uint8_t *b = (const uint8_t *)p;
  for (size_t i = 0; i < n; i++) l->hash = (l->hash ^ b[i]) * 1099511628211ull;
}

static void record(log_t *l, int64_t id, uint8_t tag, uint64_t off, uint64_t doff, uint64_t len) {
  mix(l, &id, sizeof id);
  mix(l, &tag, 1);
  mix(l, &off, sizeof off);
  mix(l, &doff, sizeof doff);
  mix(l, &len, sizeof len);
  l->rows++;
}

static rsc_status on_row(void *ctx, const rsc_row *row) {
  log_t *l = (log_t *)ctx;
  volatile uint8_t sink = 0;
  FUZZ_CHECK(row->offset <= row->data_offset);
  FUZZ_CHECK(row->data_offset + row->len <= l->input_len);
  if (row->len) {
    FUZZ_CHECK(row->data != NULL);
    FUZZ_CHECK(memcmp(row->data, l->input + row->data_offset, row->len) == 0);
  }
  if (row->padded)
    for (size_t i = 0; i < RSC_FRAME_PADDING; i++) sink ^= row->data[row->len + i];
  (void)sink;
  if (!l->lenient) FUZZ_CHECK(row->id >= 0 && row->id <= INT32_MAX);
  else FUZZ_CHECK(row->id >= INT32_MIN && row->id <= INT32_MAX);
  if (row->tag == 'b') {
    if (!l->in_b) {
      l->in_b = true;
      l->b_offset = row->offset;
      l->b_data_offset = row->data_offset;
      l->b_next = row->data_offset;
      l->b_len = 0;
      l->b_id = row->id;
    }
    FUZZ_CHECK(row->offset == l->b_offset && row->id == l->b_id);
    FUZZ_CHECK(row->data_offset == l->b_next);
    l->b_next += row->len;
    l->b_len += row->len;
    if (!row->partial) {
      record(l, row->id, 'b', l->b_offset, l->b_data_offset, l->b_len);
      l->in_b = false;
    }
    return RSC_OK;
  }
  FUZZ_CHECK(!l->in_b);
  FUZZ_CHECK(!row->partial);
  if (row->gathered) {
    FUZZ_CHECK(l->n_given > 0 && row->data == l->given[l->n_given - 1]);
    FUZZ_CHECK(!row->in_place && !row->padded);
  }
  record(l, row->id, row->tag, row->offset, row->data_offset, row->len);
  return RSC_OK;
}

static void run(const uint8_t *p, size_t n, bool lenient, uint64_t max_row, int split,
                uint64_t seed, log_t *l, rsc_error *err) {
  memset(l, 0, sizeof *l);
  l->input = p;
  l->input_len = n;
  l->lenient = lenient;
  l->hash = 1469598103934665603ull;
  err->code = RSC_OK;
  err->offset = 0;
  err->row_id = -1;
  err->msg = NULL;
  rsc_frame *f = rsc__frame_new(NULL, lenient, max_row);
  FUZZ_CHECK(f);
  if (split && (seed & 1)) f->dest_fn = give;
  size_t i = 0;
  while (i < n) {
    size_t take = split ? 1 + (size_t)(fuzz_rand(&seed) % 17) : n;
    if (take > n - i) take = n - i;
    /* Feed from a heap copy of exactly the piece, so a read past its end
     * (or of padding the framer did not guarantee) is caught by ASan. */
    uint8_t *piece = (uint8_t *)malloc(take);
    memcpy(piece, p + i, take);
    rsc_status st = rsc__frame_feed(f, piece, take, on_row, l, err);
    free(piece);
    if (st != RSC_OK) {
      FUZZ_CHECK(err->code == st);
      FUZZ_CHECK(err->offset < n);
      FUZZ_CHECK(err->msg != NULL);
      break;
    }
    i += take;
    FUZZ_CHECK(rsc__frame_offset(f) == i);
  }
  rsc__frame_free(f);
  for (size_t k = 0; k < l->n_given; k++) free(l->given[k]);
  free(l->given);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  bool lenient = data[0] & 1;
  unsigned lim = (data[0] >> 1) & 7;
  uint64_t max_row = lim == 0 ? (uint64_t)256 << 20 : (uint64_t)1 << (lim * 2);
  uint64_t seed = data[1];
  const uint8_t *p = data + 2;
  size_t n = size - 2;
  log_t a, b;
  rsc_error ea, eb;
  run(p, n, lenient, max_row, 0, seed, &a, &ea);
  run(p, n, lenient, max_row, 1, seed, &b, &eb);
  FUZZ_CHECK(ea.code == eb.code);
  FUZZ_CHECK(ea.offset == eb.offset);
  FUZZ_CHECK(ea.row_id == eb.row_id);
  FUZZ_CHECK(a.rows == b.rows);
  FUZZ_CHECK(a.hash == b.hash);
  return 0;
}
