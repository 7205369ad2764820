/* report.h - the byte report (src/report.c): where a payload's bytes go, as
 * a tree of byte spans, component totals, duplicates and the stream's rows.
 * Internal: rsc_report_html (include/rscflight.h) writes it as a page; the
 * tests read the model directly. */
#ifndef RSC_REPORT_H
#define RSC_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RSC__RPT_NONE UINT32_MAX

/* Node kinds (also the letters the page reads). */
enum {
  RSC__RPT_ROOT = 'p',    /* the whole payload                                 */
  RSC__RPT_CHUNK = 'c',   /* every row of one id (or the rows with none)       */
  RSC__RPT_ROW = 'r',     /* one row of a chunk that has several               */
  RSC__RPT_ELEMENT = 'e', /* ["$",type,key,props]: props' members are children */
  RSC__RPT_OBJECT = 'o',
  RSC__RPT_ARRAY = 'a',
  RSC__RPT_STRING = 's',
  RSC__RPT_SCALAR = 'v', /* number, true, false, null                         */
  RSC__RPT_DATA = 't',   /* a row's payload that is not JSON (T, binary, cut) */
  RSC__RPT_GROUP = 'g'   /* a run of a node's small children, side by side:
                            sized as their sum (it owns no bytes itself)   */
};

/* A span of the payload: a node's bytes are [off, off + size). Children
 * lie inside their parent, disjoint; what they leave is the node's own
 * bytes (brackets, commas, keys, an element's type and key, row headers). */
typedef struct rsc__rpt_node {
  uint64_t off, size;
  uint64_t key_off; /* an object member's key text (raw JSON), in payload */
  uint32_t parent, first, last, next;
  uint32_t nkids;
  uint32_t key_len; /* RSC__RPT_NONE: the node is item idx of an array     */
  uint32_t idx;
  uint32_t name; /* offset + 1 into the name pool; 0: none              */
  uint32_t comp; /* ELEMENT: component index                            */
  uint8_t kind;
} rsc__rpt_node;

typedef struct rsc__rpt_row {
  uint64_t off, len; /* the whole row, id to LF                            */
  uint64_t data, dlen;
  int64_t id;          /* -1: a row without an id (H, N, W) or a cut-off rest    */
  uint8_t tag;         /* 0: model; 1: halt (empty); 2: cut off; else the tag   */
  uint32_t node;       /* its node: the chunk, or a ROW under it               */
  uint32_t settled_by; /* the reference ($L, $@) this row's chunk settles,
                          a node index; RSC__RPT_NONE: none              */
  uint32_t boundary;   /* index into boundaries; RSC__RPT_NONE: none     */
} rsc__rpt_row;

typedef struct rsc__rpt_comp {
  uint32_t name, module; /* pool offsets + 1                              */
  uint8_t kind;          /* 'h' host, 'c' client, 'r' React, 'o' other     */
  uint64_t elements, self, subtree;
} rsc__rpt_comp;

/* A value written more than once: a string, or a subtree (the same JSON
 * text). where: up to RSC__RPT_PLACES nodes it occurs at. */
enum { RSC__RPT_PLACES = 4 };
typedef struct rsc__rpt_dup {
  uint64_t off, len; /* the first occurrence's text                        */
  uint64_t count;
  uint32_t where[RSC__RPT_PLACES];
  uint32_t nwhere;
} rsc__rpt_dup;

typedef struct rsc__rpt_boundary {
  uint32_t node;  /* the Suspense element, or the lazy / promise string   */
  int64_t row_id; /* the row it sits in                                    */
} rsc__rpt_boundary;

typedef struct rsc__report {
  const char *buf; /* the payload (borrowed)                                */
  size_t len;
  uint64_t html_len; /* the page's bytes; 0 when the input was a payload      */
  rsc_html_flavor flavor;
  rsc_error decode; /* the decode's error (code RSC_OK when fine)            */
  int dev;
  rsc__rpt_node *nodes;
  uint32_t nnodes, cap_nodes;
  rsc__rpt_row *rows;
  size_t nrows, cap_rows;
  uint32_t nchunks;
  char *pool;
  size_t pool_len, pool_cap;
  rsc__rpt_comp *comps;
  uint32_t ncomps, cap_comps;
  rsc__rpt_dup *strings, *subtrees; /* sorted by bytes they cost, most first */
  size_t nstrings, nsubtrees;
  rsc__rpt_boundary *bounds;
  uint32_t nbounds, cap_bounds;
  int nomem;
  rsc_alloc al; /* rsc_options.alloc: every block of the report (all NULL: libc) */
} rsc__report;

/* Builds the report of a payload (decoded here with opt's flags, for
 * names). RSC_OK or RSC_ERR_NOMEM; free with rsc__report_free either way. */
rsc_status rsc__report_build(rsc__report *r, const char *buf, size_t len, const rsc_options *opt);
void rsc__report_free(rsc__report *r);
/* A node's name from the pool ("" for none). */
const char *rsc__report_name(const rsc__report *r, uint32_t name);

#ifdef __cplusplus
}
#endif
#endif
