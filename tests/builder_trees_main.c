/* builder_trees - writes each tree of builder_trees.c, and 60 random ones
 * (bt_random, seeds 1 to 60), as OUTDIR/NAME.rsc
 * (what the builder wrote) and OUTDIR/NAME.dump (its intended dump), and
 * the names, one a line, in OUTDIR/trees.txt. Exit 1 when a tree fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_trees.h"

static int put(const char *dir, const char *name, const char *ext, const char *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
  FILE *f = fopen(path, "wb");
  if (!f) return 1;
  int bad = fwrite(p, 1, n, f) != n;
  return fclose(f) != 0 || bad;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: builder_trees OUTDIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/trees.txt", argv[1]);
  FILE *list = fopen(path, "w");
  if (!list) {
    perror(path);
    return 1;
  }
  int bad = 0;
  for (size_t i = 0; i < bt_count; i++) {
    const builder_tree *t = &bt_trees[i];
    size_t len;
    rsc_status s;
    char *bytes = bt_write(t, &len, &s);
    char *dump = bt_dump(t);
    if (!bytes || !dump || put(argv[1], t->name, "rsc", bytes, len) ||
        put(argv[1], t->name, "dump", dump, strlen(dump))) {
      fprintf(stderr, "builder_trees: %s: %s\n", t->name, rsc_status_name(s));
      bad = 1;
    } else {
      fprintf(list, "%s\n", t->name);
    }
    free(bytes);
    free(dump);
  }
  /* and 60 random trees */
  for (uint64_t seed = 1; seed <= 60; seed++) {
    size_t len;
    rsc_status s;
    char *dump, name[32];
    snprintf(name, sizeof name, "random_%llu", (unsigned long long)seed);
    char *bytes = bt_random(seed, &len, &dump, &s);
    if (!bytes || put(argv[1], name, "rsc", bytes, len) ||
        put(argv[1], name, "dump", dump, strlen(dump))) {
      fprintf(stderr, "builder_trees: %s: %s\n", name, rsc_status_name(s));
      bad = 1;
    } else {
      fprintf(list, "%s\n", name);
    }
    free(bytes);
    free(dump);
  }
  return fclose(list) != 0 || bad;
}
