/* builder_trees.h - trees written with the Flight builder (src/builder.c),
 * each with the value it is meant to be, as a canonical dump
 * (docs/spec/CANONICAL-DUMP.md) written by hand. tests/test_builder.c
 * decodes them with rscflight; tests/conformance/builder-check.mjs with
 * React 19.3.1's client (scripts/test.d/65-builder.sh). */
#ifndef RSC_BUILDER_TREES_H
#define RSC_BUILDER_TREES_H

#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

typedef struct builder_tree {
  const char *name;
  /* Makes the values, sets the root and flushes to write(ctx, ...), more
   * than once when values settle later (as a host streaming Suspense). */
  rsc_status (*build)(rsc_builder *b, rsc_write_fn write, void *ctx);
  const char *dump;         /* the intended dump; NULL: make_dump gives it */
  char *(*make_dump)(void); /* malloc'd */
  int react;                /* tests/golden/builder/NAME.rsc holds React's bytes for it */
} builder_tree;

extern const builder_tree bt_trees[];
extern const size_t bt_count;

/* The tree's intended dump, malloc'd. */
char *bt_dump(const builder_tree *t);
/* The tree's bytes (malloc'd, *len), or NULL with *status set. */
char *bt_write(const builder_tree *t, size_t *len, rsc_status *status);

/* A random tree of every kind (lazies and promises settled now, later or
 * rejected), its bytes (malloc'd) and its intended dump in *dump
 * (malloc'd); NULL with *status set when the builder failed. */
char *bt_random(uint64_t seed, size_t *len, char **dump, rsc_status *status);

#endif
