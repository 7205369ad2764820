/* stats.c - `rscflight stats`: where the bytes of a payload go, the "why is
 * my payload big" view:
 *
 *   - bytes per row type (model JSON, T text, I client module, H hint, ...);
 *   - bytes per client module: its I rows, and the elements of that
 *     component (their own bytes, and the whole subtree under them);
 *   - bytes per component (element type): host tags, built-ins, clients;
 *   - the largest chunks (all rows of one id), with the start of each;
 *   - strings repeated across model rows, by the bytes they take.
 *
 * The library gives values, not byte offsets, so the bytes are counted here:
 * a row scanner re-frames the raw input the way React's row parser does
 * (docs/spec/FLIGHT-PROTOCOL.md 2.1: `<hex id>:<tag>`, LF rows and hex-length
 * rows), with the framer's own tag and hex tables (src/rowtags.h, src/hex.h),
 * and a small JSON scanner walks each model row to find element tuples
 * (["$", type, key, props, ...]) and their byte spans. The scanner stays
 * here because no library stage reports spans: the parsers build values,
 * strings unescaped, and they refuse the rows a decode rejects, which stats
 * still counts (bracket by bracket, raw string bytes as they are written).
 * The decoder (public API) is used for names: what "$L3" (a client module)
 * or "$1" (a symbol row) in an element's type slot stands for. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hex.h"
#include "rowtags.h"

enum { TAG_HALT = RSC__TAG_HALT, TAG_CUT = RSC__TAG_CUT }; /* rowtags.h */
enum { STATS_DEFAULT_TOP = 10, STATS_MIN_STRING = 4, STATS_MAX_JSON_DEPTH = 100000 };

/* MARK: rows -------------------------------------------------------------- */

typedef struct row {
  int64_t id;        /* -1: side-channel rows (H, N, W) and TAG_CUT  */
  unsigned char tag; /* 0: model; 'T', 'I', ...; TAG_HALT, TAG_CUT    */
  size_t off, len;   /* the whole row, id to LF (or last byte)        */
  size_t data, dlen; /* its payload                                   */
} row;

typedef struct row_list {
  row *v;
  size_t n, cap;
} row_list;

static int push_row(row_list *l, const row *r) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    row *v = realloc(l->v, cap * sizeof *v);
    if (!v) return 0;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = *r;
  return 1;
}

/* Frames one row starting at r->off into r (rowtags.h). Returns 0 when it
 * cannot be framed or the input ends inside it. */
static int scan_row(const char *buf, size_t len, row *r) {
  rsc__flat_row f;
  if (!rsc__scan_row(buf, len, r->off, &f)) return 0;
  r->id = f.id;
  r->tag = f.tag;
  r->len = (size_t)f.len;
  r->data = (size_t)f.data;
  r->dlen = (size_t)f.dlen;
  return 1;
}

/* Splits buf into rows (docs/spec/FLIGHT-PROTOCOL.md 2.3). What cannot be
 * framed, or a last row the input cuts off, becomes one TAG_CUT row. 0: out of
 * memory. */
static int scan_rows(const char *buf, size_t len, row_list *out) {
  size_t p = 0;
  while (p < len) {
    row r = {0, 0, p, 0, 0, 0};
    if (!scan_row(buf, len, &r)) {
      row cut = {-1, TAG_CUT, p, len - p, p, len - p};
      return push_row(out, &cut);
    }
    if (!push_row(out, &r)) return 0;
    p += r.len;
  }
  return 1;
}

/* MARK: string map --------------------------------------------------------- */

/* Open addressing from byte strings to a size_t. Keys are borrowed: the
 * caller keeps them alive (the input buffer, or a stat's own copy). */
typedef struct smap_entry {
  const char *key;
  size_t len;
  size_t value;
} smap_entry;

typedef struct smap {
  smap_entry *e;
  size_t cap, count;
} smap;

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int smap_grow(smap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  smap_entry *e = calloc(cap, sizeof *e);
  if (!e) return 0;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->e[i].key) continue;
    size_t h = (size_t)hash_bytes(m->e[i].key, m->e[i].len) & (cap - 1);
    while (e[h].key) h = (h + 1) & (cap - 1);
    e[h] = m->e[i];
  }
  free(m->e);
  m->e = e;
  m->cap = cap;
  return 1;
}

/* The entry for key, added (value 0) when missing. NULL: out of memory. */
static smap_entry *smap_get(smap *m, const char *key, size_t len) {
  if ((m->count + 1) * 2 > m->cap && !smap_grow(m)) return NULL;
  size_t h = (size_t)hash_bytes(key, len) & (m->cap - 1);
  while (m->e[h].key) {
    if (m->e[h].len == len && memcmp(m->e[h].key, key, len) == 0) return &m->e[h];
    h = (h + 1) & (m->cap - 1);
  }
  m->e[h].key = key;
  m->e[h].len = len;
  m->e[h].value = 0;
  m->count++;
  return &m->e[h];
}

/* MARK: element types and client modules ---------------------------------- */

typedef struct type_stat {
  char key[400]; /* kind + name + module: the identity            */
  cli_type type;
  uint64_t elements, self, subtree;
  uint32_t open; /* elements of this type open now (outermost?)   */
} type_stat;

typedef struct mod_stat {
  char key[256]; /* "id#export"                                   */
  uint64_t irows, ibytes, elements, self, subtree;
} mod_stat;

typedef struct stats {
  const char *buf;
  rsc_decoder *d; /* for names; NULL when decoding failed to start  */
  row_list rows;
  uint64_t tag_rows[256], tag_bytes[256];
  smap type_by_raw; /* raw type-slot string -> index in types        */
  smap type_by_key; /* type_stat.key -> index in types               */
  type_stat **types;
  size_t ntypes, cap_types;
  smap mods; /* mod_stat.key -> index in mods_v               */
  mod_stat **mods_v;
  size_t nmods, cap_mods;
  smap strings; /* repeated string values: raw -> count          */
  uint64_t model_bytes, element_bytes;
  int nomem;
} stats;

static int grow_ptrs(void ***v, size_t n, size_t *cap) {
  if (n < *cap) return 1;
  size_t c = *cap ? *cap * 2 : 32;
  void **nv = realloc(*v, c * sizeof *nv);
  if (!nv) return 0;
  *v = nv;
  *cap = c;
  return 1;
}

static type_stat *type_by_desc(stats *st, const cli_type *ty) {
  char key[400];
  snprintf(key, sizeof key, "%d\x1f%s\x1f%s", (int)ty->kind, ty->name, ty->module);
  size_t klen = strlen(key);
  smap_entry *e = smap_get(&st->type_by_key, key, klen);
  if (!e) return NULL;
  if (e->key != key) return st->types[e->value];
  /* New: the map must point at the stat's own copy of the key. */
  type_stat *t = calloc(1, sizeof *t);
  if (!t || !grow_ptrs((void ***)&st->types, st->ntypes, &st->cap_types)) {
    free(t);
    e->key = NULL; /* leave no dangling key behind */
    st->type_by_key.count--;
    return NULL;
  }
  memcpy(t->key, key, klen + 1);
  t->type = *ty;
  e->key = t->key;
  e->value = st->ntypes;
  st->types[st->ntypes++] = t;
  return t;
}

/* The stat for a type slot's raw string (cached by the raw text). */
static type_stat *type_for_raw(stats *st, const char *s, size_t n) {
  smap_entry *e = smap_get(&st->type_by_raw, s, n);
  if (!e) return NULL;
  if (e->value) return st->types[e->value - 1];
  cli_type ty;
  cli_describe_raw_type(st->d, s, n, &ty);
  type_stat *t = type_by_desc(st, &ty);
  if (t) {
    for (size_t i = 0; i < st->ntypes; i++)
      if (st->types[i] == t) e->value = i + 1;
  }
  return t;
}

static type_stat *type_other(stats *st) {
  cli_type ty;
  memset(&ty, 0, sizeof ty);
  ty.kind = CLI_TYPE_OTHER;
  snprintf(ty.name, sizeof ty.name, "(not a string)");
  return type_by_desc(st, &ty);
}

static mod_stat *mod_for(stats *st, const char *key) {
  size_t klen = strlen(key);
  smap_entry *e = smap_get(&st->mods, key, klen);
  if (!e) return NULL;
  if (e->key != key) return st->mods_v[e->value];
  mod_stat *m = calloc(1, sizeof *m);
  if (!m || !grow_ptrs((void ***)&st->mods_v, st->nmods, &st->cap_mods)) {
    free(m);
    e->key = NULL;
    st->mods.count--;
    return NULL;
  }
  snprintf(m->key, sizeof m->key, "%s", key);
  e->key = m->key;
  e->len = strlen(m->key);
  e->value = st->nmods;
  st->mods_v[st->nmods++] = m;
  return m;
}

/* MARK: JSON scan of model rows -------------------------------------------- */

typedef struct jframe {
  size_t start;        /* offset of '[' or '{' in the row's payload     */
  uint64_t child;      /* bytes of element descendants (for self bytes) */
  int64_t elem_parent; /* nearest element frame below, or -1            */
  uint32_t item;       /* array: index of the current item              */
  unsigned char is_array, is_elem, expect_key, outer;
  type_stat *type;
} jframe;

typedef struct jscan {
  jframe *f;
  size_t depth, cap;
} jscan;

static int jpush(jscan *j, size_t start, int is_array) {
  if (j->depth == j->cap) {
    size_t cap = j->cap ? j->cap * 2 : 64;
    if (cap > STATS_MAX_JSON_DEPTH) return 0;
    jframe *f = realloc(j->f, cap * sizeof *f);
    if (!f) return 0;
    j->f = f;
    j->cap = cap;
  }
  jframe *top = j->depth ? &j->f[j->depth - 1] : NULL;
  jframe *f = &j->f[j->depth];
  memset(f, 0, sizeof *f);
  f->start = start;
  f->is_array = (unsigned char)is_array;
  f->expect_key = (unsigned char)!is_array;
  f->elem_parent = !top ? -1 : top->is_elem ? (int64_t)(j->depth - 1) : top->elem_parent;
  j->depth++;
  return 1;
}

/* Closes the innermost frame at end (one past its bracket): an element adds
 * its bytes to its type, and its span to the element around it. */
static void jpop(stats *st, jscan *j, size_t end) {
  jframe *f = &j->f[--j->depth];
  if (!f->is_elem) return;
  uint64_t span = end - f->start;
  type_stat *t = f->type ? f->type : type_other(st);
  if (!t) {
    st->nomem = 1;
    return;
  }
  t->elements++;
  t->self += span - f->child;
  if (f->outer) {
    t->subtree += span;
    t->open--;
  }
  if (f->elem_parent >= 0) j->f[f->elem_parent].child += span;
  else st->element_bytes += span;
}

static void count_string(stats *st, const char *s, size_t n) {
  if (n < STATS_MIN_STRING || s[0] == '$') return;
  smap_entry *e = smap_get(&st->strings, s, n);
  if (e) e->value++;
  else st->nomem = 1;
}

/* A string token (its raw bytes, quotes excluded) in the current frame. */
static void on_string(stats *st, jscan *j, const char *s, size_t n) {
  jframe *top = j->depth ? &j->f[j->depth - 1] : NULL;
  if (top && top->is_array && top->item == 0 && n == 1 && s[0] == '$') {
    top->is_elem = 1;
  } else if (top && top->is_elem && top->item == 1) {
    top->type = type_for_raw(st, s, n);
    if (!top->type) st->nomem = 1;
    else if (top->type->open++ == 0) top->outer = 1;
  } else if (!(top && !top->is_array && top->expect_key)) {
    count_string(st, s, n);
  }
}

/* Index one past the string token that opens at s[i] ('"'). */
static size_t string_end(const char *s, size_t i, size_t n) {
  for (i++; i < n; i++) {
    if (s[i] == '\\') i++;
    else if (s[i] == '"') return i + 1;
  }
  return n;
}

/* Walks one model row's JSON. It does not validate (the decoder does): it
 * only tracks brackets, strings and commas, which is enough to find the
 * element tuples and their spans. */
static void scan_json(stats *st, jscan *j, const char *s, size_t n) {
  size_t i = 0;
  j->depth = 0;
  while (i < n && !st->nomem) {
    char c = s[i];
    if (c == '[' || c == '{') {
      if (!jpush(j, i, c == '[')) break;
      i++;
    } else if (c == ']' || c == '}') {
      if (j->depth) jpop(st, j, i + 1);
      i++;
    } else if (c == ',' && j->depth) {
      jframe *top = &j->f[j->depth - 1];
      if (top->is_array) top->item++;
      else top->expect_key = 1;
      i++;
    } else if (c == ':' && j->depth) {
      j->f[j->depth - 1].expect_key = 0;
      i++;
    } else if (c == '"') {
      size_t e = string_end(s, i, n);
      if (e - i >= 2 && s[e - 1] == '"') on_string(st, j, s + i + 1, e - i - 2);
      i = e;
    } else {
      i++;
    }
  }
  /* Frames left open (cut or too deep JSON) release their outermost marks. */
  while (j->depth) {
    jframe *f = &j->f[--j->depth];
    if (f->outer && f->type) f->type->open--;
  }
}

/* MARK: gathering ------------------------------------------------------------ */

/* Adds each I row's bytes to its module (named through the decoder). */
static void gather_modules(stats *st) {
  for (size_t i = 0; i < st->ntypes; i++) {
    type_stat *t = st->types[i];
    if (t->type.kind != CLI_TYPE_CLIENT) continue;
    mod_stat *m = mod_for(st, t->type.module);
    if (!m) {
      st->nomem = 1;
      return;
    }
    m->elements += t->elements;
    m->self += t->self;
    m->subtree += t->subtree;
  }
  for (size_t i = 0; i < st->rows.n; i++) {
    const row *r = &st->rows.v[i];
    if (r->tag != 'I') continue;
    const rsc_chunk *c = st->d ? rsc_decoder_chunk(st->d, r->id) : NULL;
    cli_type ty;
    char key[256];
    cli_describe_type(c && rsc_chunk_status(c) == RSC_CHUNK_FULFILLED ? rsc_chunk_value(c) : NULL,
                      &ty);
    if (ty.kind == CLI_TYPE_CLIENT) snprintf(key, sizeof key, "%s", ty.module);
    else snprintf(key, sizeof key, "(I row %llx)", (unsigned long long)r->id);
    mod_stat *m = mod_for(st, key);
    if (!m) {
      st->nomem = 1;
      return;
    }
    m->irows++;
    m->ibytes += r->len;
  }
}

static int gather(stats *st, size_t len) {
  jscan j = {NULL, 0, 0};
  if (!scan_rows(st->buf, len, &st->rows)) return 0;
  for (size_t i = 0; i < st->rows.n && !st->nomem; i++) {
    const row *r = &st->rows.v[i];
    st->tag_rows[r->tag]++;
    st->tag_bytes[r->tag] += r->len;
    if (r->tag != 0) continue;
    st->model_bytes += r->len;
    scan_json(st, &j, st->buf + r->data, r->dlen);
  }
  free(j.f);
  if (!st->nomem) gather_modules(st);
  return !st->nomem;
}

/* MARK: report ------------------------------------------------------------------ */

static double pct(uint64_t part, uint64_t total) {
  return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* Prints s cut to width code points ("…" when cut) and padded to width. */
static void put_cell(const char *s, size_t width) {
  size_t chars = 0, i = 0, n = strlen(s);
  for (size_t k = 0; k < n; k++)
    if (((unsigned char)s[k] & 0xC0) != 0x80) chars++;
  if (chars <= width) {
    fputs(s, stdout);
    for (; chars < width; chars++) fputc(' ', stdout);
    return;
  }
  for (chars = 0; i < n; i++) {
    if (((unsigned char)s[i] & 0xC0) != 0x80 && chars++ == width - 1) break;
    fputc(s[i], stdout);
  }
  fputs("…", stdout);
}

/* A preview of bytes: printable text as is, control bytes as '.', at most
 * max code points, cut on a UTF-8 boundary. */
static void put_preview(const char *s, size_t n, size_t max) {
  size_t chars = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c & 0xC0) != 0x80 && chars++ == max) {
      fputs("…", stdout);
      return;
    }
    fputc(c < 0x20 || c == 0x7f ? '.' : c, stdout);
  }
}

static int cmp_u64_desc(uint64_t a, uint64_t b) { return a < b ? 1 : a > b ? -1 : 0; }

static void report_row_types(const stats *st, uint64_t total) {
  unsigned char order[256];
  size_t n = 0;
  for (int t = 0; t < 256; t++)
    if (st->tag_rows[t]) order[n++] = (unsigned char)t;
  /* by bytes, descending; ties by tag (insertion sort: at most 256) */
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0 && st->tag_bytes[order[k]] > st->tag_bytes[order[k - 1]]; k--) {
      unsigned char x = order[k];
      order[k] = order[k - 1];
      order[k - 1] = x;
    }
  printf("\nBytes per row type\n  %-28s %8s %10s %7s\n", "row type", "rows", "bytes", "%");
  for (size_t i = 0; i < n; i++) {
    unsigned char t = order[i];
    char label[64];
    const char *l = rsc__row_tag_label(t, 0, label, sizeof label);
    if (strcmp(l, "other tag") == 0) snprintf(label, sizeof label, "%c (other tag)", t);
    else if (l != label) snprintf(label, sizeof label, "%s", l);
    printf("  ");
    put_cell(label, 28);
    printf(" %8llu %10llu %6.1f%%\n", (unsigned long long)st->tag_rows[t],
           (unsigned long long)st->tag_bytes[t], pct(st->tag_bytes[t], total));
  }
}

static int cmp_mod(const void *a, const void *b) {
  const mod_stat *x = *(const mod_stat *const *)a, *y = *(const mod_stat *const *)b;
  int c = cmp_u64_desc(x->ibytes + x->subtree, y->ibytes + y->subtree);
  return c ? c : strcmp(x->key, y->key);
}

static void report_modules(stats *st, uint64_t total, size_t top) {
  printf("\nBytes per client module (its I rows; its elements: their own bytes, and the\n"
         "subtree under the outermost ones; %% of the file: I bytes + subtree)\n");
  if (!st->nmods) {
    printf("  (none)\n");
    return;
  }
  qsort(st->mods_v, st->nmods, sizeof *st->mods_v, cmp_mod);
  printf("  %-40s %6s %8s %8s %8s %9s %7s\n", "module#export", "I rows", "I bytes", "elements",
         "self", "subtree", "%");
  for (size_t i = 0; i < st->nmods && i < top; i++) {
    const mod_stat *m = st->mods_v[i];
    printf("  ");
    put_cell(m->key, 40);
    printf(" %6llu %8llu %8llu %8llu %9llu %6.1f%%\n", (unsigned long long)m->irows,
           (unsigned long long)m->ibytes, (unsigned long long)m->elements,
           (unsigned long long)m->self, (unsigned long long)m->subtree,
           pct(m->ibytes + m->subtree, total));
  }
  if (st->nmods > top) printf("  … %zu more\n", st->nmods - top);
}

static int cmp_type(const void *a, const void *b) {
  const type_stat *x = *(const type_stat *const *)a, *y = *(const type_stat *const *)b;
  int c = cmp_u64_desc(x->self, y->self);
  return c ? c : strcmp(x->key, y->key);
}

static const char *type_kind_name(cli_type_kind k) {
  switch (k) {
  case CLI_TYPE_HOST: return "host";
  case CLI_TYPE_CLIENT: return "client";
  case CLI_TYPE_BUILTIN: return "react";
  case CLI_TYPE_LAZY: return "lazy";
  case CLI_TYPE_OTHER: break;
  }
  return "other";
}

static void report_types(stats *st, uint64_t total, size_t top) {
  printf("\nBytes per component (element type; self: the element's own bytes, subtree:\n"
         "the outermost elements of that type with everything inside them)\n");
  if (st->ntypes) qsort(st->types, st->ntypes, sizeof *st->types, cmp_type);
  printf("  %-32s %-6s %8s %9s %7s %9s\n", "component", "kind", "elements", "self", "%", "subtree");
  size_t shown = 0;
  for (size_t i = 0; i < st->ntypes && shown < top; i++) {
    const type_stat *t = st->types[i];
    if (!t->elements) continue;
    shown++;
    printf("  ");
    put_cell(t->type.name, 32);
    printf(" %-6s %8llu %9llu %6.1f%% %9llu\n", type_kind_name(t->type.kind),
           (unsigned long long)t->elements, (unsigned long long)t->self, pct(t->self, total),
           (unsigned long long)t->subtree);
  }
  size_t with_elements = 0;
  for (size_t i = 0; i < st->ntypes; i++) with_elements += st->types[i]->elements != 0;
  if (with_elements > shown) printf("  … %zu more\n", with_elements - shown);
  uint64_t outside = st->model_bytes - st->element_bytes;
  printf("  ");
  put_cell("(model rows outside elements)", 32);
  printf(" %-6s %8s %9llu %6.1f%%\n", "-", "-", (unsigned long long)outside, pct(outside, total));
}

/* A chunk: every row with one id. */
typedef struct chunk_stat {
  int64_t id;
  size_t rows, largest; /* largest: a row index */
  uint64_t bytes;
} chunk_stat;

static const row *g_rows; /* for the qsort comparators below */

static int cmp_row_id(const void *a, const void *b) {
  const row *x = &g_rows[*(const size_t *)a], *y = &g_rows[*(const size_t *)b];
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_chunk(const void *a, const void *b) {
  const chunk_stat *x = a, *y = b;
  int c = cmp_u64_desc(x->bytes, y->bytes);
  return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

/* Groups rows by id (side-channel rows have none) into chunks. */
static chunk_stat *group_chunks(const stats *st, size_t *count) {
  size_t n = st->rows.n, k = 0;
  size_t *idx = malloc((n ? n : 1) * sizeof *idx);
  chunk_stat *c = malloc((n ? n : 1) * sizeof *c);
  if (!idx || !c) {
    free(idx);
    free(c);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (st->rows.v[i].id >= 0) idx[k++] = i;
  g_rows = st->rows.v;
  qsort(idx, k, sizeof *idx, cmp_row_id);
  size_t m = 0;
  for (size_t i = 0; i < k; i++) {
    const row *r = &st->rows.v[idx[i]];
    if (m == 0 || c[m - 1].id != r->id) {
      c[m].id = r->id;
      c[m].rows = 0;
      c[m].bytes = 0;
      c[m].largest = idx[i];
      m++;
    }
    chunk_stat *cs = &c[m - 1];
    cs->rows++;
    cs->bytes += r->len;
    if (r->len > st->rows.v[cs->largest].len) cs->largest = idx[i];
  }
  free(idx);
  qsort(c, m, sizeof *c, cmp_chunk);
  *count = m;
  return c;
}

static int is_binary_tag(unsigned char t) {
  size_t elem;
  return rsc__binary_tag_kind(t, &elem) >= 0;
}

static void report_chunks(const stats *st, uint64_t total, size_t top, size_t nchunks,
                          const chunk_stat *c) {
  printf("\nLargest chunks (all rows of one id; the type and start of its largest row)\n"
         "  %-6s %-20s %5s %9s %7s  %s\n",
         "chunk", "row type", "rows", "bytes", "%", "starts with");
  for (size_t i = 0; i < nchunks && i < top; i++) {
    const row *big = &st->rows.v[c[i].largest];
    char id[32], label[64];
    snprintf(id, sizeof id, "%llx", (unsigned long long)c[i].id);
    printf("  %-6s ", id);
    put_cell(rsc__row_tag_label(big->tag, 0, label, sizeof label), 20);
    printf(" %5zu %9llu %6.1f%%  ", c[i].rows, (unsigned long long)c[i].bytes,
           pct(c[i].bytes, total));
    if (is_binary_tag(big->tag)) printf("(%zu bytes of binary)", big->dlen);
    else put_preview(st->buf + big->data, big->dlen, 44);
    printf("\n");
  }
  if (nchunks > top) printf("  … %zu more\n", nchunks - top);
}

typedef struct str_stat {
  const char *s;
  size_t n;
  uint64_t count;
} str_stat;

static int cmp_str(const void *a, const void *b) {
  const str_stat *x = a, *y = b;
  int c = cmp_u64_desc(x->count * (x->n + 2), y->count * (y->n + 2));
  if (c) return c;
  size_t m = x->n < y->n ? x->n : y->n;
  int d = memcmp(x->s, y->s, m);
  return d ? d : (x->n < y->n ? -1 : x->n > y->n);
}

static int report_strings(const stats *st, uint64_t total, size_t top) {
  size_t k = 0;
  str_stat *v = malloc((st->strings.count ? st->strings.count : 1) * sizeof *v);
  if (!v) return 0;
  for (size_t i = 0; i < st->strings.cap; i++) {
    const smap_entry *e = &st->strings.e[i];
    if (e->key && e->value > 1) v[k++] = (str_stat){e->key, e->len, e->value};
  }
  qsort(v, k, sizeof *v, cmp_str);
  printf("\nRepeated strings (values seen more than once in model rows, by total bytes)\n"
         "  %6s %6s %9s %7s  %s\n",
         "count", "bytes", "total", "%", "string");
  for (size_t i = 0; i < k && i < top; i++) {
    uint64_t each = v[i].n + 2, all = v[i].count * each;
    printf("  %6llu %6llu %9llu %6.1f%%  \"", (unsigned long long)v[i].count,
           (unsigned long long)each, (unsigned long long)all, pct(all, total));
    put_preview(v[i].s, v[i].n, 48);
    printf("\"\n");
  }
  if (k == 0) printf("  (none)\n");
  else if (k > top) printf("  … %zu more\n", k - top);
  free(v);
  return 1;
}

static void report_header(const stats *st, const char *file, uint64_t total, size_t nchunks) {
  printf("%s: %llu bytes, %zu row%s, %zu chunk%s\n", file, (unsigned long long)total, st->rows.n,
         st->rows.n == 1 ? "" : "s", nchunks, nchunks == 1 ? "" : "s");
  const rsc_error *e = st->d ? rsc_decoder_error(st->d) : NULL;
  if (!st->d) printf("decoded: no (out of memory)\n");
  else if (e->code == RSC_OK)
    printf("decoded: ok (%s)\n", rsc_decoder_is_dev(st->d) ? "development" : "production");
  else
    printf("decoded: error at offset %llu: %s (names may be missing)\n",
           (unsigned long long)e->offset, e->msg);
}

/* MARK: command line ------------------------------------------------------------- */

void cli_stats_help(FILE *f) {
  fputs("usage: rscflight stats [options] [FILE|-]\n"
        "\n"
        "Show where the bytes of a Flight payload go: bytes per row type, per client\n"
        "module (its I rows, and the elements of that component), per component (element\n"
        "type), the largest chunks, and strings repeated across model rows. Counts come\n"
        "from the raw bytes, re-framed into rows; names come from the decoder. Reads\n"
        "stdin for - or no FILE, and an HTML page (one that opens with '<') as the\n"
        "payload it inlines.\n"
        "\n"
        "options:\n"
        "  --top N            rows per table (default 10)\n"
        "  --html             the input is an HTML page: count the payload it inlines\n"
        "  -h, --help         this help\n"
        "\n" CLI_DECODE_HELP,
        f);
}

static void stats_free(stats *st) {
  for (size_t i = 0; i < st->ntypes; i++) free(st->types[i]);
  for (size_t i = 0; i < st->nmods; i++) free(st->mods_v[i]);
  free(st->types);
  free(st->mods_v);
  free(st->type_by_raw.e);
  free(st->type_by_key.e);
  free(st->mods.e);
  free(st->strings.e);
  free(st->rows.v);
  rsc_decoder_free(st->d);
}

/* Everything after the input is read: decode for names, count, report. */
static int stats_run(const char *file, const char *buf, size_t len, size_t top,
                     const rsc_options *opt) {
  stats *st = calloc(1, sizeof *st);
  if (!st) return 1;
  st->buf = buf;
  st->d = rsc_decode(buf, len, opt, NULL);
  size_t nchunks = 0;
  chunk_stat *chunks = NULL;
  int ok = gather(st, len) && (chunks = group_chunks(st, &nchunks)) != NULL;
  if (ok) {
    report_header(st, file, len, nchunks);
    report_row_types(st, len);
    report_modules(st, len, top);
    report_types(st, len, top);
    report_chunks(st, len, top, nchunks, chunks);
    ok = report_strings(st, len, top);
  }
  if (!ok) fprintf(stderr, "rscflight: %s: out of memory\n", file);
  free(chunks);
  stats_free(st);
  free(st);
  return ok && fflush(stdout) == 0 ? 0 : 1;
}

int cli_stats_main(int argc, char **argv) {
  size_t top = STATS_DEFAULT_TOP;
  rsc_options opt;
  rsc_options_init(&opt);
  bool html = false;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    char *end;
    int known = cli_decode_flag(argc, argv, &i, &opt);
    if (known < 0) {
      fprintf(stderr, "rscflight stats: %s wants a bundler name\n", a);
      return 2;
    } else if (known) continue;
    else if (strcmp(a, "--top") == 0 && i + 1 < argc) {
      errno = 0;
      unsigned long long v = strtoull(argv[++i], &end, 10);
      if (*end || errno || v == 0 || argv[i][0] == '-') {
        fprintf(stderr, "rscflight stats: --top wants a positive number\n");
        return 2;
      }
      top = (size_t)v;
    } else if (strcmp(a, "--html") == 0) html = true;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      cli_stats_help(stdout);
      return 0;
    } else if ((a[0] == '-' && a[1]) || file) {
      fprintf(stderr, "rscflight stats: unexpected argument '%s' (see rscflight stats --help)\n",
              a);
      return 2;
    } else file = a;
  }
  if (!file) file = "-";
  size_t len;
  char *buf = cli_read_payload(file, html, &len);
  if (!buf) return 1;
  int rc = stats_run(file, buf, len, top, &opt);
  free(buf);
  return rc;
}
