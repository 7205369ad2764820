/* fuzz_common.h - shared by the libFuzzer harnesses: option bytes, a
 * deterministic PRNG for feed splits, and an allocator that fails on
 * demand. Header-only so each harness is one translation unit. */
#ifndef RSC_FUZZ_COMMON_H
#define RSC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rscflight.h"

#define FUZZ_CHECK(cond)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);                 \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

static inline uint64_t fuzz_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* An allocator that fails every call from the fail_at-th on (0: never),
 * counting live bytes so a leak inside the decoder shows up without LSan. */
typedef struct fuzz_alloc {
  uint64_t calls;
  uint64_t fail_at;
  int64_t live;
} fuzz_alloc;

static void *fa_malloc(void *ctx, size_t n) {
  fuzz_alloc *a = (fuzz_alloc *)ctx;
  if (a->fail_at && ++a->calls >= a->fail_at) return NULL;
  void *p = malloc(n);
  if (p) a->live++;
  return p;
}

static void *fa_realloc(void *ctx, void *p, size_t old_size, size_t n) {
  fuzz_alloc *a = (fuzz_alloc *)ctx;
  (void)old_size;
  if (a->fail_at && ++a->calls >= a->fail_at) return NULL;
  void *q = realloc(p, n);
  if (q && !p) a->live++;
  return q;
}

static void fa_free(void *ctx, void *p) {
  fuzz_alloc *a = (fuzz_alloc *)ctx;
  if (p) a->live--;
  free(p);
}

/* Options from the input's first bytes:
 *   b0  flags: bit0 DEV, bit1 ALLOW_PARTIAL, bit2 LENIENT_IDS, bit3 LAZY_ROOT,
 *       bit4 TEMP_REFS, bit5 small limits, bit6 failing allocator, bit7
 *       TRACK_SHARED
 *   b1  feed mode: low 2 bits: 0 whole, 1 one byte at a time, 2 pieces of
 *       (b1 >> 2) + 1 bytes, 3 random piece sizes seeded by b1
 *   b2  small-limit selector / allocation failure point
 *   b3  more flags: bit0 DROP_BOM, bit1 LENIENT_VALUES (the other bits
 *       reserved)
 * The payload follows. */
#define FUZZ_HDR 4

typedef struct fuzz_opts {
  rsc_options opt;
  int mode;
  uint8_t mode_byte;
  uint8_t sel;
  int failing;
} fuzz_opts;

static inline void fuzz_parse_opts(const uint8_t *data, fuzz_opts *fo, fuzz_alloc *fa) {
  memset(fo, 0, sizeof *fo);
  rsc_options_init(&fo->opt);
  uint8_t b0 = data[0];
  fo->mode_byte = data[1];
  fo->mode = data[1] & 3;
  fo->sel = data[2];
  if (b0 & 1) fo->opt.flags |= RSC_OPT_DEV;
  if (b0 & 2) fo->opt.flags |= RSC_OPT_ALLOW_PARTIAL;
  if (b0 & 4) fo->opt.flags |= RSC_OPT_LENIENT_IDS;
  if (b0 & 8) fo->opt.flags |= RSC_OPT_LAZY_ROOT;
  if (b0 & 16) fo->opt.flags |= RSC_OPT_TEMP_REFS;
  if (b0 & 128) fo->opt.flags |= RSC_OPT_TRACK_SHARED;
  if (data[3] & 1) fo->opt.flags |= RSC_OPT_DROP_BOM;
  if (data[3] & 2) fo->opt.flags |= RSC_OPT_LENIENT_VALUES;
  if (b0 & 32) {
    /* Small limits, so every limit path is reachable from short inputs. */
    uint8_t s = data[2];
    rsc_limits *l = &fo->opt.limits;
    switch (s & 7) {
    case 0: l->max_row_bytes = 1 + (s >> 3); break;
    case 1: l->max_total_bytes = 1 + (s >> 3) * 4; break;
    case 2: l->max_depth = 1 + (s >> 3); break;
    case 3: l->max_nodes = 1 + (s >> 3) * 2; break;
    case 4: l->max_chunks = 1 + (s >> 3); break;
    case 5: l->max_path_hops = 1 + (s >> 3) % 4; break;
    default:
      l->max_row_bytes = 64;
      l->max_depth = 8;
      l->max_nodes = 256;
      l->max_chunks = 16;
      l->max_path_hops = 2;
      l->max_total_bytes = 4096;
      break;
    }
  }
  if ((b0 & 64) && fa) {
    fa->fail_at = 1 + data[2];
    fo->opt.alloc.malloc = fa_malloc;
    fo->opt.alloc.realloc = fa_realloc;
    fo->opt.alloc.free = fa_free;
    fo->opt.alloc.ctx = fa;
    fo->failing = 1;
  }
}

/* The size of the next piece of a feed in the given mode (seed: the
 * random pieces' state, fuzz_seed). */
static inline uint64_t fuzz_seed(uint8_t mode_byte, size_t n) {
  return mode_byte * 0x100000001b3ull + n;
}

static inline size_t fuzz_take(int mode, uint8_t mode_byte, uint64_t *seed, size_t left) {
  size_t take;
  switch (mode) {
  case 0: take = left; break;
  case 1: take = 1; break;
  case 2: take = (size_t)(mode_byte >> 2) + 1; break;
  default: take = 1 + (size_t)(fuzz_rand(seed) % 32); break;
  }
  return take < left ? take : left;
}

/* Feeds the payload according to the mode. */
static inline void fuzz_feed(rsc_decoder *d, const uint8_t *p, size_t n, int mode,
                             uint8_t mode_byte) {
  uint64_t seed = fuzz_seed(mode_byte, n);
  for (size_t i = 0; i < n;) {
    size_t take = fuzz_take(mode, mode_byte, &seed, n - i);
    if (rsc_decoder_feed(d, (const char *)p + i, take) != RSC_OK) break;
    i += take;
  }
}

/* A writer (rsc_write_fn) that gathers what it is given, NUL-ended. */
typedef struct fuzz_buf {
  char *p;
  size_t len, cap;
} fuzz_buf;

static inline int fuzz_buf_write(void *ctx, const char *s, size_t n) {
  fuzz_buf *b = (fuzz_buf *)ctx;
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = (char *)realloc(b->p, b->cap);
    FUZZ_CHECK(b->p != NULL);
  }
  if (n) memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
  return 0;
}

#endif
