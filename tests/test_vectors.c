#define _POSIX_C_SOURCE 200809L
/* test_vectors.c - every spec vector (fixtures/vectors, copied from
 * flight-test-vectors.json) decodes to its expected canonical dump, fed
 * whole, one byte at a time, at every 2-way split (payloads under 4 KB) and
 * in 20 seeded random splittings. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "settle.h"

typedef struct vec {
  char name[128], rsc[160], expected[160];
  uint32_t flags;
  bool lenient;
  bool values;                   /* a value no server writes: RSC_OPT_LENIENT_VALUES */
  size_t inspect_at;             /* bytes fed before the root is first read, or SIZE_MAX */
  size_t chunk_cuts[8], nchunks; /* the vector's own input chunks */
} vec;

static vec *load_index(size_t *n) {
  size_t len;
  char *text = ts_fixture("vectors/index.tsv", &len);
  cr_assert(text, "fixtures/vectors/index.tsv is missing");
  vec *v = calloc(1024, sizeof *v);
  size_t count = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char flags[64];
    vec *x = &v[count];
    if (sscanf(line, "%127s\t%159s\t%159s\t%63s", x->name, x->rsc, x->expected, flags) != 4)
      continue;
    if (strstr(flags, "dev")) x->flags |= RSC_OPT_DEV;
    if (strstr(flags, "partial")) x->flags |= RSC_OPT_ALLOW_PARTIAL;
    if (strstr(flags, "lenient")) {
      x->flags |= RSC_OPT_LENIENT_IDS;
      x->lenient = true;
    }
    if (strstr(flags, "values")) {
      x->flags |= RSC_OPT_LENIENT_VALUES;
      x->values = true;
    }
    x->inspect_at = SIZE_MAX;
    char *ins = strstr(flags, "inspect="), *ch = strstr(flags, "chunks=");
    if (ins && ch) {
      /* React inspected the root after chunk #k only: not subscribed before. */
      int k = atoi(ins + 8);
      size_t off = 0;
      char *p = ch + 7;
      while (*p && x->nchunks < 8) {
        off += (size_t)strtoul(p, &p, 10);
        x->chunk_cuts[x->nchunks++] = off;
        if (*p == '/') p++;
        else break;
      }
      x->inspect_at = x->chunk_cuts[k];
      x->flags |= RSC_OPT_LAZY_ROOT;
    }
    count++;
  }
  free(text);
  *n = count;
  return v;
}

static char *read_vec(const char *file, size_t *len) {
  char rel[256];
  snprintf(rel, sizeof rel, "vectors/%s", file);
  return ts_fixture(rel, len);
}

/* The dump, or "error <code>" when the decoder refused the input. */
static char *outcome(rsc_decoder *d) {
  if (!d) return strdup("no decoder");
  if (rsc_decoder_error(d)->code) {
    char buf[64];
    snprintf(buf, sizeof buf, "error %d", rsc_decoder_error(d)->code);
    rsc_decoder_free(d);
    return strdup(buf);
  }
  /* finish read everything the root reaches (before the dump reads) */
  cr_expect_eq(rsc__unread_reachable(d), 0, "the read-through at finish left a chunk unread");
  /* with RSC_OPT_TRACK_SHARED: every value met twice is one it names */
  cr_expect_eq(rsc__unshared_repeats(d), 0, "a value met twice that rsc_decoder_shares misses");
  char *text = ts_dump(d);
  rsc_decoder_free(d);
  char *copy = text ? strdup(text) : strdup("dump failed");
  rsc_free(text);
  return copy;
}

Test(vectors, whole_buffer_matches_expected) {
  size_t n;
  vec *v = load_index(&n);
  cr_assert_gt(n, 250);
  int agree = 0, total = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(v[i].expected, "-") == 0) continue;
    total++;
    size_t len, elen;
    char *buf = read_vec(v[i].rsc, &len);
    char *exp = read_vec(v[i].expected, &elen);
    cr_assert(buf && exp, "%s: missing files", v[i].name);
    char *early = NULL;
    char *got =
        outcome(ts_decode_inspect(buf, len, v[i].chunk_cuts, v[i].nchunks,
                                  v[i].flags | RSC_OPT_TRACK_SHARED, v[i].inspect_at, &early));
    if (v[i].inspect_at != SIZE_MAX) {
      char rel[300];
      size_t ealen;
      snprintf(rel, sizeof rel, "%.*s.early.json", (int)(strlen(v[i].expected) - 5), v[i].expected);
      char *eexp = read_vec(rel, &ealen);
      const char *ewhy = "";
      cr_expect(eexp && early && ts_json_equal(early, strlen(early), eexp, ealen, &ewhy),
                "%s: root read early: %s\n  got:      %s\n  expected: %s", v[i].name, ewhy,
                early ? early : "(none)", eexp ? eexp : "(none)");
      free(eexp);
    }
    rsc_free(early);
    const char *why = "";
    bool eq = ts_json_equal(got, strlen(got), exp, elen, &why);
    cr_expect(eq, "%s: %s\n  got:      %s\n  expected: %s", v[i].name, why, got, exp);
    if (eq) agree++;
    free(got);
    free(buf);
    free(exp);
  }
  cr_log_info("vectors agreeing: %d of %d", agree, total);
  free(v);
}

Test(vectors, lenient_vectors_are_refused_by_default) {
  size_t n;
  vec *v = load_index(&n);
  int checked = 0;
  for (size_t i = 0; i < n; i++) {
    if (!v[i].lenient) continue;
    size_t len;
    char *buf = read_vec(v[i].rsc, &len);
    rsc_decoder *d = ts_decode(buf, len, 0, v[i].flags & ~(uint32_t)RSC_OPT_LENIENT_IDS);
    cr_expect_eq(rsc_decoder_error(d)->code, RSC_ERR_BAD_ID, "%s: expected a bad id error",
                 v[i].name);
    rsc_decoder_free(d);
    free(buf);
    checked++;
  }
  cr_expect_gt(checked, 3);
  free(v);
}

Test(vectors, impossible_values_are_refused_by_default) {
  size_t n;
  vec *v = load_index(&n);
  int checked = 0;
  for (size_t i = 0; i < n; i++) {
    if (!v[i].values) continue;
    size_t len;
    char *buf = read_vec(v[i].rsc, &len);
    for (size_t piece = 0; piece <= 1; piece++) {
      rsc_decoder *d = ts_decode(buf, len, piece, v[i].flags & ~(uint32_t)RSC_OPT_LENIENT_VALUES);
      cr_expect_eq(rsc_decoder_error(d)->code, RSC_ERR_BAD_VALUE, "%s: expected a bad value error",
                   v[i].name);
      rsc_decoder_free(d);
    }
    free(buf);
    checked++;
  }
  cr_expect_geq(checked, 1);
  free(v);
}

/* Every feed pattern gives the text the whole buffer gives. */
static void check_splits(bool one_byte, bool two_way, bool random) {
  size_t n;
  vec *v = load_index(&n);
  uint64_t seed = 12345;
  for (size_t i = 0; i < n; i++) {
    size_t len;
    char *buf = read_vec(v[i].rsc, &len);
    char *whole = outcome(ts_decode_inspect(buf, len, NULL, 0, v[i].flags, v[i].inspect_at, NULL));
    if (one_byte) {
      size_t *ones = malloc(len * sizeof *ones);
      for (size_t k = 0; k < len; k++) ones[k] = k + 1;
      char *got =
          outcome(ts_decode_inspect(buf, len, ones, len, v[i].flags, v[i].inspect_at, NULL));
      free(ones);
      cr_expect_str_eq(got, whole, "%s: 1-byte feed differs", v[i].name);
      free(got);
    }
    if (two_way && len < 4096) {
      for (size_t cut = 1; cut < len; cut++) {
        char *got =
            outcome(ts_decode_inspect(buf, len, &cut, 1, v[i].flags, v[i].inspect_at, NULL));
        if (strcmp(got, whole) != 0) {
          cr_expect_str_eq(got, whole, "%s: split at %zu differs", v[i].name, cut);
          free(got);
          break;
        }
        free(got);
      }
    }
    if (random) {
      for (int r = 0; r < 20; r++) {
        size_t cuts[64], nc = 0;
        size_t pos = 0;
        while (nc < 64 && len > 0) {
          pos += 1 + ts_rand(&seed) % (len / 8 + 2);
          if (pos >= len) break;
          cuts[nc++] = pos;
        }
        char *got =
            outcome(ts_decode_inspect(buf, len, cuts, nc, v[i].flags, v[i].inspect_at, NULL));
        cr_expect_str_eq(got, whole, "%s: random splitting %d differs", v[i].name, r);
        free(got);
      }
    }
    free(whole);
    free(buf);
  }
  free(v);
}

Test(vectors, one_byte_feeds) { check_splits(true, false, false); }
Test(vectors, every_two_way_split) { check_splits(false, true, false); }
Test(vectors, random_splits) { check_splits(false, false, true); }

/* Vectors where React's client crashes or hangs: rscflight gives a defined
 * value or a clean error instead (fixtures/vectors/deliberate.tsv,
 * docs/conformance.md). */
Test(vectors, deliberate_differences) {
  size_t len;
  char *text = ts_fixture("vectors/deliberate.tsv", &len);
  cr_assert(text);
  size_t n;
  vec *v = load_index(&n);
  int checked = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char name[128], outcome[200];
    if (sscanf(line, "%127[^\t]\t%199[^\t]", name, outcome) != 2) continue;
    const vec *x = NULL;
    for (size_t i = 0; i < n; i++)
      if (strcmp(v[i].name, name) == 0) x = &v[i];
    cr_assert(x, "%s is not a vector", name);
    size_t blen;
    char *buf = read_vec(x->rsc, &blen);
    rsc_decoder *d = ts_decode(buf, blen, 0, x->flags);
    int code;
    unsigned long long off;
    if (sscanf(outcome, "error %d %llu", &code, &off) == 2) {
      cr_expect_eq(rsc_decoder_error(d)->code, code, "%s: code", name);
      cr_expect_eq(rsc_decoder_error(d)->offset, off, "%s: offset", name);
      /* and the same however the bytes are split */
      rsc_decoder *b = ts_decode(buf, blen, 1, x->flags);
      cr_expect_eq(rsc_decoder_error(b)->code, code, "%s: code, 1-byte feeds", name);
      cr_expect_eq(rsc_decoder_error(b)->offset, off, "%s: offset, 1-byte feeds", name);
      rsc_decoder_free(b);
    } else {
      size_t elen;
      char *exp = read_vec(outcome, &elen);
      char *got = ts_dump(d);
      const char *why = "";
      cr_expect(got && exp && ts_json_equal(got, strlen(got), exp, elen, &why), "%s: %s", name,
                why);
      rsc_free(got);
      free(exp);
    }
    rsc_decoder_free(d);
    free(buf);
    checked++;
  }
  cr_expect_eq(checked, 16);
  free(text);
  free(v);
}
