/*
 * memcheck_each - every fixture through the library in one process, for
 * valgrind (scripts/test.d/30-valgrind.sh): one valgrind start for hundreds
 * of payloads instead of one each.
 *
 * usage: memcheck_each FILE...
 *
 * For each file (a Flight payload; decoded with --dev semantics when its
 * path has a "/dev/" directory or ends in ".dev.rsc", as the CLI stage
 * chooses) it decodes the bytes fed in pieces of 4096, writes the pretty
 * canonical dump to a counting sink, then decodes again with
 * RSC_OPT_KEEP_ROWS and writes rsc_encode's rows to a counting sink. It
 * prints one line per file: the path, the decode's status, the dump's
 * status and byte count, the encode's status and byte count. Run twice,
 * with and without valgrind, the lines must be the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rscflight.h"

static int count_bytes(void *ctx, const char *buf, size_t len) {
  (void)buf;
  *(uint64_t *)ctx += len;
  return 0;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      char *grown = realloc(buf, cap);
      if (!grown) break;
      buf = grown;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad || !buf) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static rsc_decoder *decode(const char *buf, size_t len, uint32_t flags) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags |= flags;
  rsc_decoder *d = rsc_decoder_new(&opt);
  if (!d) return NULL;
  for (size_t at = 0; at < len; at += 4096) {
    size_t n = len - at < 4096 ? len - at : 4096;
    if (rsc_decoder_feed(d, buf + at, n) != RSC_OK) return d;
  }
  rsc_decoder_finish(d);
  return d;
}

int main(int argc, char **argv) {
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    const char *path = argv[i];
    size_t len = 0;
    char *buf = read_file(path, &len);
    if (!buf) {
      fprintf(stderr, "memcheck_each: %s: cannot read\n", path);
      failed = 1;
      continue;
    }
    size_t plen = strlen(path);
    uint32_t dev = strstr(path, "/dev/") || (plen >= 8 && strcmp(path + plen - 8, ".dev.rsc") == 0)
                       ? RSC_OPT_DEV
                       : 0;
    uint64_t dumped = 0, encoded = 0;
    rsc_decoder *d = decode(buf, len, dev);
    rsc_decoder *k = decode(buf, len, dev | RSC_OPT_KEEP_ROWS);
    if (!d || !k) {
      fprintf(stderr, "memcheck_each: %s: out of memory\n", path);
      failed = 1;
    } else {
      rsc_status decoded = rsc_decoder_error(d)->code;
      rsc_status dump = rsc_dump_to(d, 2, count_bytes, &dumped);
      rsc_status enc = rsc_encode(k, count_bytes, &encoded);
      printf("%s %s dump=%s:%llu encode=%s:%llu\n", path, rsc_status_name(decoded),
             rsc_status_name(dump), (unsigned long long)dumped, rsc_status_name(enc),
             (unsigned long long)encoded);
    }
    rsc_decoder_free(d);
    rsc_decoder_free(k);
    free(buf);
  }
  return failed;
}
