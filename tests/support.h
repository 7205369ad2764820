/* support.h - helpers shared by the criterion suites. */
#ifndef RSC_TEST_SUPPORT_H
#define RSC_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

/* Reads a whole file (NULL if missing); free with free(). */
char *ts_read(const char *path, size_t *len);
/* Reads fixtures/<rel>. */
char *ts_fixture(const char *rel, size_t *len);

/* Decodes buf fed in pieces: sizes from cut points (sorted offsets), or all
 * at once when ncuts is 0. */
rsc_decoder *ts_decode_cuts(const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                            uint32_t flags);
/* The same, reading the root (as a late consumer would) once exactly
 * `inspect_at` bytes were fed, and leaving its dump then in *early (may be
 * NULL; free with rsc_free). inspect_at SIZE_MAX: never. */
rsc_decoder *ts_decode_inspect(const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                               uint32_t flags, size_t inspect_at, char **early);
/* Fed in pieces of `piece` bytes (0: whole). */
rsc_decoder *ts_decode(const char *buf, size_t len, size_t piece, uint32_t flags);

/* The compact dump, or NULL (decoder error). Free with rsc_free. */
char *ts_dump(rsc_decoder *d);

/* rsc_decode of a NUL-terminated payload with these flags. */
rsc_decoder *ts_decode_str(const char *s, uint32_t flags);
/* The root's value when fulfilled, else NULL. */
const rsc_node *ts_root_value(rsc_decoder *d);
/* rsc_node_string without the length. */
const char *ts_str(const rsc_node *n);

/* Decodes in[0..len) whole: no error, and exactly this compact dump. */
void ts_expect_dump(const char *in, size_t len, uint32_t flags, const char *want);
#define DUMP(in, want) ts_expect_dump(in, sizeof(in) - 1, 0, want)

/* JSON equality as docs/spec/CANONICAL-DUMP.md defines it: objects as
 * unordered sets of members, numbers as doubles. *why gets a short reason
 * when unequal. */
bool ts_json_equal(const char *a, size_t alen, const char *b, size_t blen, const char **why);

/* A deterministic PRNG (splitmix64). */
uint64_t ts_rand(uint64_t *state);

/* A writer (rsc_write_fn) that gathers what it is given in p, NUL-ended:
 * for rsc_dump_to, rsc_encode, rsc_rewrite and the report. Its call
 * number fail_at (counting from 1; 0: none) and every later one fail. */
typedef struct ts_sink {
  char *p;
  size_t len, cap;
  int calls, fail_at;
} ts_sink;
int ts_sink_write(void *ctx, const char *buf, size_t len);

/* An allocator (rsc_alloc) over libc that counts its calls (malloc and
 * realloc, from 1) and the blocks it has out: call number fail_at (0:
 * none) fails, and with sticky every later one too; failed says one did. */
typedef struct ts_counting {
  unsigned long calls, fail_at;
  bool sticky;
  bool failed;
  long live; /* blocks given and not freed */
} ts_counting;
void *ts_counting_malloc(void *ctx, size_t n);
void *ts_counting_realloc(void *ctx, void *p, size_t old_size, size_t n);
void ts_counting_free(void *ctx, void *p);
/* The three hooks on c. */
rsc_alloc ts_counting_alloc(ts_counting *c);

#endif
