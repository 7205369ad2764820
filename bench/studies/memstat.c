/* bench/studies/memstat.c - a study, not part of the build (twenty-second
 * round, docs/performance.md): where one decode's peak memory sits. It
 * decodes a payload whole on a new decoder through counting allocator
 * hooks (as `rscflight bench` counts its peak), then reads the decoder's
 * internals: the node arena's and the string arena's blocks (size held,
 * bytes used), the chunk table's arrays and the stacks. What is left of
 * the peak is the framer's, the JSON stage's and the decoder's own
 * buffers.
 *
 *   cmake --build build-release --target rscflight_static
 *   cc -O2 -Isrc -Iinclude -Ibuild-release/include bench/studies/memstat.c \
 *       build-release/librscflight.a -lsimdjson -ldouble-conversion -lutf8proc
 * \ -lstdc++ -lm -o /tmp/memstat /tmp/memstat
 * fixtures/react/19.3.1/prod/many-tiny-rows.rsc
 *
 * A chunk is 80 bytes (sizeof(struct rsc_chunk)), so on many tiny rows
 * the 1,875 row chunks are 150 KB of the arena. */
#include "frame.h"
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
typedef struct {
  size_t now, peak;
} cnt_t;
static size_t *hdr(void *p) { return (size_t *)p - 2; }
static void *m(void *c, size_t n) {
  cnt_t *k = c;
  size_t *p = malloc(n + 16);
  p[0] = n;
  k->now += n;
  if (k->now > k->peak)
    k->peak = k->now;
  return p + 2;
}
static void f(void *c, void *p) {
  if (!p)
    return;
  cnt_t *k = c;
  size_t *h = hdr(p);
  k->now -= h[0];
  free(h);
}
static void *r(void *c, void *p, size_t o, size_t n) {
  (void)o;
  void *q = m(c, n);
  if (p) {
    size_t *h = hdr(p);
    memcpy(q, p, h[0] < n ? h[0] : n);
    f(c, p);
  }
  return q;
}
static void arena_stat(const char *name, rsc_arena *a) {
  size_t used = 0, size = 0;
  int nb = 0;
  for (rsc_arena_block *b = a->head; b; b = b->prev) {
    used += b->used;
    size += b->size;
    nb++;
  }
  printf("%s: blocks %d size %zu used %zu total %zu peak %zu\n", name, nb, size,
         used, a->total, a->peak);
}
int main(int argc, char **argv) {
  FILE *fp = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (!fp) {
    fprintf(stderr, "usage: memstat FILE\n");
    return 2;
  }
  fseek(fp, 0, 2);
  long len = ftell(fp);
  rewind(fp);
  char *buf = malloc(len);
  fread(buf, 1, len, fp);
  cnt_t k = {0};
  rsc_options o;
  rsc_options_init(&o);
  o.alloc.malloc = m;
  o.alloc.free = f;
  o.alloc.realloc = r;
  o.alloc.ctx = &k;
  rsc_decoder *d = rsc_decoder_new(&o);
  rsc_decoder_feed(d, (const uint8_t *)buf, len);
  rsc_decoder_finish(d);

  printf("input %ld peak %zu now %zu (%.2fx)\n", len, k.peak, k.now,
         (double)k.peak / len);
  arena_stat("arena", &d->arena);
  arena_stat("strings", &d->strings);
  printf("table count %zu dense_cap %zu cap %zu order_cap %zu\n",
         d->table.count, d->table.dense_cap, d->table.cap, d->table.order_cap);
  printf("batched %llu\n", (unsigned long long)d->batched_rows);
  printf("nodes %llu jobs_cap %zu walk_cap %zu\n", (unsigned long long)d->nodes,
         d->jobs_cap, d->walk_cap);
  return 0;
}
