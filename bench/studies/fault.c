/* bench/studies/fault.c - a study, not part of the build (twenty-fifth
 * round, docs/performance.md): what memory fresh from the kernel costs on
 * this machine, the price a new decoder pays on every decode of a payload
 * too big for the kept decoder (its 250 MB of blocks for a 100 MB payload
 * go back to the kernel when it is freed). Allocates MiB mebibytes, touches
 * one byte per 4 KiB page, frees them, six times; with "thp" the block is
 * 2 MiB aligned and marked MADV_HUGEPAGE, as src/arena.c does for big
 * blocks.
 *
 *   cc -O2 bench/studies/fault.c -o /tmp/fault && /tmp/fault 250 && /tmp/fault 250 thp
 */
#define _DEFAULT_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MiB [thp]\n", argv[0]);
    return 2;
  }
  size_t size = (size_t)atol(argv[1]) << 20;
  int thp = argc > 2 && strcmp(argv[2], "thp") == 0;
  for (int round = 0; round < 6; round++) {
    double t0 = now_ms();
    char *p = NULL;
    if (thp) {
      if (posix_memalign((void **)&p, (size_t)2 << 20, size) != 0) return 1;
      madvise(p, size, MADV_HUGEPAGE);
    } else {
      p = malloc(size);
      if (!p) return 1;
    }
    for (size_t i = 0; i < size; i += 4096) p[i] = 1;
    double ms = now_ms() - t0;
    free(p);
    printf("%zu MiB%s: %.1f ms to touch (%.2f us per 4 KiB page)\n", size >> 20,
           thp ? " (huge pages)" : "", ms, ms * 1e3 / (double)(size / 4096));
  }
  return 0;
}
