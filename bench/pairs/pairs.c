/* pairs.c - two builds of the library in one process, decodes alternating
 * in pairs (`bench/run pairs` builds it with run.sh; docs/performance.md,
 * eleventh round). The "before" library's symbols carry the prefix old_
 * (objcopy); the "after" one is linked as it is.
 *
 *   pairs [--seconds S] [--new] [--borrow-input] [--chunk-size N] FILE...
 *
 * For each FILE: decodes alternate before-after, after-before, ... for S
 * seconds (default 5), each pair giving time(before) / time(after). Prints
 * one tab-separated line per file for run.sh, which runs it twice with the
 * builds' places swapped and makes the table: file, pairs, both median
 * times in microseconds, the median ratio (> 1: after is faster) and its
 * quartiles. --new makes and frees a decoder per decode (default: one
 * decoder each, reset between decodes, as `rscflight bench --reuse`); the
 * two builds' dumps must agree. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rscflight.h"

/* The before build's API, renamed by run.sh. Same signatures: the API is
 * stable across the builds compared (rscflight.h is the after build's). */
void old_rsc_options_init(rsc_options *opt);
rsc_decoder *old_rsc_decoder_new(const rsc_options *opt);
rsc_status old_rsc_decoder_feed(rsc_decoder *d, const char *buf, size_t len);
rsc_status old_rsc_decoder_feed_padded(rsc_decoder *d, const char *buf, size_t len);
rsc_status old_rsc_decoder_finish(rsc_decoder *d);
rsc_status old_rsc_decoder_reset(rsc_decoder *d);
const rsc_error *old_rsc_decoder_error(const rsc_decoder *d);
void old_rsc_decoder_free(rsc_decoder *d);
char *old_rsc_dump(rsc_decoder *d, int pretty, size_t *len);
void old_rsc_free(void *p);

typedef struct api {
  void (*options_init)(rsc_options *);
  rsc_decoder *(*decoder_new)(const rsc_options *);
  rsc_status (*feed)(rsc_decoder *, const char *, size_t);
  rsc_status (*feed_padded)(rsc_decoder *, const char *, size_t);
  rsc_status (*finish)(rsc_decoder *);
  rsc_status (*reset)(rsc_decoder *);
  const rsc_error *(*error)(const rsc_decoder *);
  void (*decoder_free)(rsc_decoder *);
  char *(*dump)(rsc_decoder *, int, size_t *);
  void (*free)(void *);
} api;

static const api before = {old_rsc_options_init,   old_rsc_decoder_new,
                           old_rsc_decoder_feed,   old_rsc_decoder_feed_padded,
                           old_rsc_decoder_finish, old_rsc_decoder_reset,
                           old_rsc_decoder_error,  old_rsc_decoder_free,
                           old_rsc_dump,           old_rsc_free};
static const api after = {
    rsc_options_init,   rsc_decoder_new,   rsc_decoder_feed,  rsc_decoder_feed_padded,
    rsc_decoder_finish, rsc_decoder_reset, rsc_decoder_error, rsc_decoder_free,
    rsc_dump,           rsc_free};

typedef struct side {
  const api *a;
  rsc_options opt;
  rsc_decoder *kept; /* reused between decodes unless --new */
} side;

static bool fresh;
static size_t chunk;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One decode, as `rscflight bench` does it; its wall time in seconds. */
static double decode(side *s, const char *buf, size_t len) {
  double t0 = now();
  rsc_decoder *d = s->kept;
  if (fresh || !d) d = s->a->decoder_new(&s->opt);
  else s->a->reset(d);
  if (!d) {
    fprintf(stderr, "pairs: out of memory\n");
    exit(1);
  }
  if (chunk == 0 || chunk >= len) {
    s->a->feed_padded(d, buf, len);
  } else {
    for (size_t i = 0; i < len; i += chunk)
      if (s->a->feed(d, buf + i, len - i < chunk ? len - i : chunk) != RSC_OK) break;
  }
  s->a->finish(d);
  if (fresh) s->a->decoder_free(d);
  else s->kept = d;
  return now() - t0;
}

static char *dump_of(side *s, const char *buf, size_t len) {
  rsc_decoder *d = s->a->decoder_new(&s->opt);
  if (!d) return NULL;
  s->a->feed(d, buf, len);
  s->a->finish(d);
  size_t n = 0;
  char *out = s->a->dump(d, 0, &n);
  char *copy = out ? strdup(out) : NULL;
  if (out) s->a->free(out);
  if (s->a->error(d)->code != RSC_OK && !copy) copy = strdup("(error)");
  s->a->decoder_free(d);
  return copy;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + RSC_PADDING);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) memset(buf + n, 0, RSC_PADDING);
  *len = (size_t)n;
  return buf;
}

int main(int argc, char **argv) {
  double seconds = 5;
  uint32_t flags = 0;
  int first = 1;
  for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
    if (strcmp(argv[first], "--seconds") == 0 && first + 1 < argc) seconds = atof(argv[++first]);
    else if (strcmp(argv[first], "--chunk-size") == 0 && first + 1 < argc)
      chunk = (size_t)strtoull(argv[++first], NULL, 10);
    else if (strcmp(argv[first], "--new") == 0) fresh = true;
    else if (strcmp(argv[first], "--borrow-input") == 0) flags |= RSC_OPT_BORROW_INPUT;
    else {
      fprintf(stderr, "usage: pairs [--seconds S] [--new] [--borrow-input] [--chunk-size N] "
                      "FILE...\n");
      return 2;
    }
  }
  for (int fi = first; fi < argc; fi++) {
    size_t len;
    char *buf = read_file(argv[fi], &len);
    if (!buf) {
      perror(argv[fi]);
      return 1;
    }
    side sb = {&before, {0}, NULL}, sa = {&after, {0}, NULL};
    sb.a->options_init(&sb.opt);
    sa.a->options_init(&sa.opt);
    sb.opt.flags |= flags;
    sa.opt.flags |= flags;
    char *db = dump_of(&sb, buf, len), *da = dump_of(&sa, buf, len);
    if (!db || !da || strcmp(db, da) != 0) {
      fprintf(stderr, "pairs: %s: the two builds' dumps differ\n", argv[fi]);
      return 1;
    }
    free(db);
    free(da);
    for (int w = 0; w < 5; w++) decode(&sb, buf, len), decode(&sa, buf, len);
    size_t cap = 1024, n = 0;
    double *ratio = malloc(cap * sizeof *ratio), *tb = malloc(cap * sizeof *tb),
           *ta = malloc(cap * sizeof *ta);
    double end = now() + seconds;
    while (n < 20 || now() < end) {
      if (n == cap) {
        cap *= 2;
        ratio = realloc(ratio, cap * sizeof *ratio);
        tb = realloc(tb, cap * sizeof *tb);
        ta = realloc(ta, cap * sizeof *ta);
        if (!ratio || !tb || !ta) return 1;
      }
      double x, y;
      if (n % 2 == 0) x = decode(&sb, buf, len), y = decode(&sa, buf, len);
      else y = decode(&sa, buf, len), x = decode(&sb, buf, len);
      ratio[n] = x / y, tb[n] = x, ta[n] = y, n++;
    }
    qsort(ratio, n, sizeof *ratio, by_value);
    qsort(tb, n, sizeof *tb, by_value);
    qsort(ta, n, sizeof *ta, by_value);
    const char *base = strrchr(argv[fi], '/');
    base = base ? base + 1 : argv[fi];
    printf("%s\t%zu\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\n", base, n, tb[n / 2] * 1e6, ta[n / 2] * 1e6,
           ratio[n / 2], ratio[n / 4], ratio[3 * n / 4]);
    fflush(stdout);
    if (sb.kept) sb.a->decoder_free(sb.kept);
    if (sa.kept) sa.a->decoder_free(sa.kept);
    free(ratio);
    free(tb);
    free(ta);
    free(buf);
  }
  return 0;
}
