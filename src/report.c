/* report.c - the byte report: where a payload's bytes go, as one
 * self-contained HTML page (rsc_report_html).
 *
 * The decoder gives values, not byte spans, so the spans are measured here
 * on the raw bytes, as `rscflight stats` does: rows re-framed with the
 * framer's tag and hex tables (rowtags.h, hex.h), each model and I row's
 * JSON walked token by token into a tree of spans (a value's span is its
 * JSON text exactly, so children add up to their parent and rows to the
 * payload). The finished decoder only names things: what "$L1" in an
 * element's type slot is (a client module, a symbol). Rows the decoder
 * refused are measured all the same (a row whose JSON is malformed stays
 * one span).
 *
 * From the tree: components (element types: their elements' own bytes and
 * the subtrees of the outermost ones), duplicates (string values and
 * subtrees whose JSON text occurs more than once), and the Suspense
 * boundary (or lazy, or promise) each row settles. The page (report_page.h)
 * gets a bounded part of the tree: the largest nodes are opened first until
 * a node budget is spent; children under 0.1 % of their parent fold into
 * one "N small items" leaf. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "describe.h"
#include "hex.h"
#include "report_page.h"
#include "rowtags.h"
#include "symbols.h"

enum { TAG_HALT = RSC__TAG_HALT, TAG_CUT = RSC__TAG_CUT }; /* rowtags.h */
enum {
  RPT_MAX_DEPTH = 100000,
  RPT_MIN_STRING = 4,     /* shorter strings are not counted as repeats   */
  RPT_MIN_SUBTREE = 24,   /* nor shorter subtrees                         */
  RPT_MAX_DUPS = 100,     /* rows of each duplicates table                */
  RPT_MAX_COMPS = 300,    /* rows of the components table                 */
  RPT_MAX_STREAM = 20000, /* timeline entries before small rows merge     */
  RPT_NAME_CHARS = 60,    /* code points of a string shown as a name      */
  RPT_GROUP = 100         /* children a node shows before small ones group */
};

/* MARK: growable arrays and the name pool ---------------------------------- */

/* Memory goes through the caller's hooks (rsc_options.alloc), as the
 * decoder's does. */
static void *r_alloc(const rsc__report *r, size_t n) { return rsc__heap_alloc(&r->al, n ? n : 1); }

static void *r_zalloc(const rsc__report *r, size_t n, size_t size) {
  if (n == 0) n = 1;
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = r_alloc(r, n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

static void *r_realloc(const rsc__report *r, void *p, size_t old, size_t n) {
  return rsc__heap_realloc(&r->al, p, old, n);
}

static void r_free(const rsc__report *r, void *p) { rsc__heap_free(&r->al, p); }

static int grow(const rsc__report *r, void **v, size_t n, size_t *cap, size_t size) {
  if (n < *cap) return 1;
  size_t c = *cap ? *cap * 2 : 256;
  if (c > SIZE_MAX / size) return 0;
  void *nv = r_realloc(r, *v, *cap * size, c * size);
  if (!nv) return 0;
  *v = nv;
  *cap = c;
  return 1;
}

static int grow32(const rsc__report *r, void **v, uint32_t n, uint32_t *cap, size_t size) {
  size_t c = *cap;
  if (n >= UINT32_MAX - 1) return 0;
  if (!grow(r, v, n, &c, size)) return 0;
  *cap = c > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)c;
  return 1;
}

/* Appends a NUL-terminated copy of s[0..n) to the pool; its offset + 1, or 0
 * when memory ran out (r->nomem set). */
static uint32_t pool_add(rsc__report *r, const char *s, size_t n) {
  while (r->pool_len + n + 1 > r->pool_cap) {
    size_t cap = r->pool_cap ? r->pool_cap * 2 : 4096;
    char *p = cap > UINT32_MAX - 2 ? NULL : r_realloc(r, r->pool, r->pool_cap, cap);
    if (!p) {
      r->nomem = 1;
      return 0;
    }
    r->pool = p;
    r->pool_cap = cap;
  }
  uint32_t at = (uint32_t)r->pool_len;
  memcpy(r->pool + at, s, n);
  r->pool[at + n] = 0;
  r->pool_len += n + 1;
  return at + 1;
}

const char *rsc__report_name(const rsc__report *r, uint32_t name) {
  return name ? r->pool + name - 1 : "";
}

/* Byte-string map (open addressing) to a uint32 value; keys are borrowed. */
typedef struct smap_e {
  const char *key;
  size_t len;
  uint64_t hash;
  uint32_t value;
} smap_e;

typedef struct smap {
  smap_e *e;
  size_t cap, count;
} smap;

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  h ^= h >> 29;
  return h * 0xc4ceb9fe1a85ec53ull;
}

static int smap_grow(const rsc__report *r, smap *m) {
  size_t cap = m->cap ? m->cap * 2 : 256;
  smap_e *e = r_zalloc(r, cap, sizeof *e);
  if (!e) return 0;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->e[i].key) continue;
    size_t h = (size_t)m->e[i].hash & (cap - 1);
    while (e[h].key) h = (h + 1) & (cap - 1);
    e[h] = m->e[i];
  }
  r_free(r, m->e);
  m->e = e;
  m->cap = cap;
  return 1;
}

/* The entry for key, or NULL when there is none. */
static const smap_e *smap_find(const smap *m, const char *key, size_t len) {
  if (!m->cap) return NULL;
  uint64_t hash = hash_bytes(key, len);
  size_t h = (size_t)hash & (m->cap - 1);
  for (; m->e[h].key; h = (h + 1) & (m->cap - 1))
    if (m->e[h].hash == hash && m->e[h].len == len && memcmp(m->e[h].key, key, len) == 0)
      return &m->e[h];
  return NULL;
}

/* The entry for key; *added tells a new one (value 0). NULL: no memory. */
static smap_e *smap_get(const rsc__report *r, smap *m, const char *key, size_t len, int *added) {
  if ((m->count + 1) * 2 > m->cap && !smap_grow(r, m)) return NULL;
  uint64_t hash = hash_bytes(key, len);
  size_t h = (size_t)hash & (m->cap - 1);
  while (m->e[h].key) {
    if (m->e[h].hash == hash && m->e[h].len == len && memcmp(m->e[h].key, key, len) == 0) {
      *added = 0;
      return &m->e[h];
    }
    h = (h + 1) & (m->cap - 1);
  }
  m->e[h] = (smap_e){key, len, hash, 0};
  m->count++;
  *added = 1;
  return &m->e[h];
}

/* MARK: nodes --------------------------------------------------------------- */

static uint32_t add_node(rsc__report *r, uint32_t parent, uint8_t kind, uint64_t off) {
  if (!grow32(r, (void **)&r->nodes, r->nnodes, &r->cap_nodes, sizeof *r->nodes)) {
    r->nomem = 1;
    return RSC__RPT_NONE;
  }
  uint32_t i = r->nnodes++;
  rsc__rpt_node *n = &r->nodes[i];
  memset(n, 0, sizeof *n);
  n->off = off;
  n->kind = kind;
  n->parent = parent;
  n->first = n->last = n->next = RSC__RPT_NONE;
  n->key_len = RSC__RPT_NONE;
  n->comp = RSC__RPT_NONE;
  if (parent != RSC__RPT_NONE) {
    rsc__rpt_node *p = &r->nodes[parent];
    n->idx = p->nkids++;
    if (p->last == RSC__RPT_NONE) p->first = i;
    else r->nodes[p->last].next = i;
    p->last = i;
  }
  return i;
}

/* Drops nodes from `keep` on (the nodes of a row whose JSON is malformed),
 * unlinking them from `parent`, the row's node. */
static void drop_nodes(rsc__report *r, uint32_t keep, uint32_t parent) {
  r->nnodes = keep;
  rsc__rpt_node *p = &r->nodes[parent];
  p->first = p->last = RSC__RPT_NONE;
  p->nkids = 0;
}

/* MARK: names --------------------------------------------------------------- */

static size_t utf8_cut(const char *s, size_t n, size_t chars, int *cut) {
  size_t i = 0, k = 0;
  *cut = 0;
  for (; i < n; i++) {
    if (((unsigned char)s[i] & 0xC0) != 0x80 && k++ == chars) {
      *cut = 1;
      return i;
    }
  }
  return n;
}

/* An element type: display name, kind and (client) module, as
 * `rscflight tree` and `stats` name components: a client component by
 * its export name (a default export by its file's base name). */
typedef struct type_desc {
  char name[160];
  char module[320];
  uint8_t kind; /* 'h' host, 'c' client, 'r' React, 'o' other */
} type_desc;

static uint8_t report_kind(rsc__type_kind k) {
  switch (k) {
  case RSC__TYPE_HOST: return 'h';
  case RSC__TYPE_CLIENT: return 'c';
  case RSC__TYPE_BUILTIN: return 'r';
  case RSC__TYPE_LAZY:
  case RSC__TYPE_OTHER: break;
  }
  return 'o';
}

/* The report's description of a type (describe.h), into out's buffers. */
static rsc__type_desc report_desc(type_desc *out) {
  return (rsc__type_desc){.name = out->name,
                          .name_cap = sizeof out->name,
                          .module = out->module,
                          .module_cap = sizeof out->module};
}

static void describe_client(const rsc_node *ref, type_desc *out) {
  rsc__type_desc d = report_desc(out);
  rsc__describe_client(ref, &d);
  out->kind = report_kind(d.kind);
}

static int all_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (rsc__hex_digit((uint8_t)s[i]) < 0) return 0;
  return n > 0 && n <= 8;
}

/* What the raw JSON string in an element's type slot names (describe.h):
 * names show as much of the slot's text as fits. */
static void describe_raw_type(rsc_decoder *d, const char *s, size_t n, type_desc *out) {
  memset(out, 0, sizeof *out);
  rsc__type_desc t = report_desc(out);
  rsc__describe_raw_type(d, s, n, SIZE_MAX, &t);
  out->kind = report_kind(t.kind);
}

/* MARK: components ------------------------------------------------------------ */

typedef struct build {
  rsc__report *r;
  rsc_decoder *d;
  smap type_by_raw; /* raw type-slot text -> component index + 1       */
  smap comp_by_key; /* "kind\x1fname\x1fmodule" -> component index + 1  */
  char **comp_keys; /* owned copies of comp_by_key's keys               */
  uint32_t cap_keys;
  smap strings;  /* string values -> dup index + 1                   */
  smap subtrees; /* container text -> dup index + 1                  */
  rsc__rpt_dup *sdup, *tdup;
  size_t nsdup, cap_sdup, ntdup, cap_tdup;
  uint32_t *dup_of; /* node -> subtree dup index + 1                     */
} build;

static uint32_t comp_for(build *b, const type_desc *t) {
  rsc__report *r = b->r;
  char key[600];
  int k = snprintf(key, sizeof key, "%c\x1f%s\x1f%s", t->kind, t->name, t->module);
  size_t klen = (size_t)k < sizeof key ? (size_t)k : sizeof key - 1;
  int added;
  smap_e *e = smap_get(r, &b->comp_by_key, key, klen, &added);
  if (!e) goto nomem;
  if (!added) return e->value - 1;
  char *own = r_alloc(r, klen + 1);
  if (!own || !grow32(r, (void **)&r->comps, r->ncomps, &r->cap_comps, sizeof *r->comps) ||
      !grow32(r, (void **)&b->comp_keys, r->ncomps, &b->cap_keys, sizeof *b->comp_keys)) {
    r_free(r, own);
    e->key = NULL; /* leave no borrowed key behind; the run stops anyway */
    goto nomem;
  }
  memcpy(own, key, klen + 1);
  e->key = own;
  b->comp_keys[r->ncomps] = own;
  rsc__rpt_comp *c = &r->comps[r->ncomps];
  memset(c, 0, sizeof *c);
  c->kind = t->kind;
  c->name = pool_add(r, t->name, strlen(t->name));
  c->module = t->module[0] ? pool_add(r, t->module, strlen(t->module)) : 0;
  e->value = ++r->ncomps;
  return r->ncomps - 1;
nomem:
  r->nomem = 1;
  return RSC__RPT_NONE;
}

static uint32_t comp_for_raw(build *b, const char *s, size_t n) {
  int added;
  smap_e *e = smap_get(b->r, &b->type_by_raw, s, n, &added);
  if (!e) {
    b->r->nomem = 1;
    return RSC__RPT_NONE;
  }
  if (!added) return e->value - 1;
  type_desc t;
  describe_raw_type(b->d, s, n, &t);
  uint32_t c = comp_for(b, &t);
  e->value = c + 1;
  return c;
}

/* MARK: duplicates -------------------------------------------------------------- */

static void note_dup(build *b, smap *m, rsc__rpt_dup **v, size_t *nv, size_t *cap, uint64_t off,
                     uint64_t len, uint32_t node, int subtree) {
  rsc__report *r = b->r;
  int added;
  smap_e *e = smap_get(r, m, r->buf + off, (size_t)len, &added);
  if (!e || (added && !grow(r, (void **)v, *nv, cap, sizeof **v))) {
    if (e && added) e->key = NULL, m->count--;
    r->nomem = 1;
    return;
  }
  if (added) {
    e->value = (uint32_t)++ * nv;
    (*v)[*nv - 1] = (rsc__rpt_dup){off, len, 0, {0}, 0};
  }
  rsc__rpt_dup *dup = &(*v)[e->value - 1];
  dup->count++;
  if (dup->nwhere < RSC__RPT_PLACES) dup->where[dup->nwhere++] = node;
  if (subtree) b->dup_of[node] = e->value;
}

/* MARK: the JSON walk -------------------------------------------------------------- */

typedef struct frame {
  uint32_t node;    /* the container's node (an element's, for its props) */
  uint32_t item;    /* array: index of the current item                   */
  uint64_t key_off; /* object: the pending key                            */
  uint32_t key_len;
  uint8_t is_array, is_elem, props, expect_key;
} frame;

typedef struct walk {
  frame *f;
  size_t depth, cap;
} walk;

static size_t string_end(const char *s, size_t i, size_t n) {
  for (i++; i < n; i++) {
    if (s[i] == '\\') i++;
    else if (s[i] == '"') return i + 1;
  }
  return 0;
}

static int is_delim(char c) {
  return c == ',' || c == ']' || c == '}' || c == ':' || c == ' ' || c == '\t' || c == '\n' ||
         c == '\r' || c == '[' || c == '{' || c == '"';
}

/* The node a value at the top frame attaches to, with its key; or 0 when
 * the value is an element's slot that makes no node (its "$", type, key). */
static int place_value(rsc__report *r, walk *w, uint32_t row_node, uint8_t kind, uint64_t off,
                       uint32_t *out) {
  if (!w->depth) {
    *out = add_node(r, row_node, kind, off);
    return *out != RSC__RPT_NONE;
  }
  frame *top = &w->f[w->depth - 1];
  if (top->is_elem && top->item < 3) return 0;
  *out = add_node(r, top->node, kind, off);
  if (*out == RSC__RPT_NONE) return 0;
  if (!top->is_array) {
    r->nodes[*out].key_off = top->key_off;
    r->nodes[*out].key_len = top->key_len;
  } else if (top->is_elem) {
    r->nodes[*out].idx = top->item; /* development tuple slots past props */
  }
  return 1;
}

/* Walks one row's JSON (payload at absolute offset base) into nodes under
 * row_node. 0 when it is not well-formed JSON (the row stays one span). */
static int walk_json(build *b, walk *w, uint32_t row_node, uint64_t base, size_t n) {
  rsc__report *r = b->r;
  const char *s = r->buf + base;
  size_t i = 0;
  int done = 0;
  w->depth = 0;
  while (i < n && !r->nomem) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      i++;
      continue;
    }
    frame *top = w->depth ? &w->f[w->depth - 1] : NULL;
    if (c == ',' || c == ':') {
      if (!top) return 0;
      if (c == ',') {
        if (top->is_array) top->item++;
        else top->expect_key = 1;
      } else if (top->is_array || top->expect_key) {
        return 0;
      }
      i++;
      continue;
    }
    if (done && !top) return 0; /* a second value after the first */
    if (c == '}' || c == ']') {
      if (!top || top->is_array != (c == ']')) return 0;
      uint32_t node = top->node;
      if (!top->props) r->nodes[node].size = base + i + 1 - r->nodes[node].off;
      w->depth--;
      i++;
      if (!w->depth) done = 1;
      continue;
    }
    if (top && !top->is_array && top->expect_key) {
      if (c != '"') return 0;
      size_t e = string_end(s, i, n);
      if (!e) return 0;
      top->key_off = base + i + 1;
      top->key_len = (uint32_t)(e - i - 2);
      top->expect_key = 0;
      i = e;
      continue;
    }
    if (c == '{' || c == '[') {
      uint32_t node = RSC__RPT_NONE;
      int props = top && top->is_elem && !top->props && top->item == 3 && c == '{';
      if (props) node = top->node;
      else if (!place_value(r, w, row_node, c == '{' ? RSC__RPT_OBJECT : RSC__RPT_ARRAY, base + i,
                            &node)) {
        if (r->nomem) return 0;
        node = RSC__RPT_NONE; /* a type or key slot that is a container */
      }
      if (w->depth == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        if (cap > RPT_MAX_DEPTH) return 0;
        frame *f = r_realloc(r, w->f, w->cap * sizeof *f, cap * sizeof *f);
        if (!f) {
          r->nomem = 1;
          return 0;
        }
        w->f = f;
        w->cap = cap;
        if (top) top = &w->f[w->depth - 1]; /* it moved with the stack */
      }
      frame *f = &w->f[w->depth++];
      memset(f, 0, sizeof *f);
      f->node = node == RSC__RPT_NONE ? (top ? top->node : row_node) : node;
      f->is_array = c == '[';
      f->expect_key = c == '{';
      f->props = (uint8_t)(props || node == RSC__RPT_NONE);
      i++;
      continue;
    }
    if (c == '"') {
      size_t e = string_end(s, i, n);
      if (!e) return 0;
      const char *str = s + i + 1;
      size_t sn = e - i - 2;
      if (top && top->is_array && top->item == 0 && !top->is_elem && sn == 1 && str[0] == '$' &&
          top->node != row_node && r->nodes[top->node].kind == RSC__RPT_ARRAY &&
          r->nodes[top->node].nkids == 0) {
        top->is_elem = 1;
        r->nodes[top->node].kind = RSC__RPT_ELEMENT;
      } else if (top && top->is_elem && top->item == 1) {
        uint32_t comp = comp_for_raw(b, str, sn);
        r->nodes[top->node].comp = comp;
        if (comp != RSC__RPT_NONE) r->nodes[top->node].name = r->comps[comp].name;
      } else {
        uint32_t node;
        if (place_value(r, w, row_node, RSC__RPT_STRING, base + i, &node)) {
          r->nodes[node].size = e - i;
          if (sn >= RPT_MIN_STRING && str[0] != '$')
            note_dup(b, &b->strings, &b->sdup, &b->nsdup, &b->cap_sdup, base + i + 1, sn, node, 0);
        }
      }
      i = e;
      if (!top) done = 1;
      continue;
    }
    size_t e = i + 1;
    while (e < n && !is_delim(s[e])) e++;
    uint32_t node;
    if (place_value(r, w, row_node, RSC__RPT_SCALAR, base + i, &node)) r->nodes[node].size = e - i;
    i = e;
    if (!top) done = 1;
  }
  return !r->nomem && w->depth == 0 && done;
}

/* MARK: rows ------------------------------------------------------------------------ */

static int scan_row(const char *buf, size_t len, rsc__rpt_row *w) {
  rsc__flat_row f;
  if (!rsc__scan_row(buf, len, (size_t)w->off, &f)) return 0;
  w->id = f.id;
  w->tag = f.tag;
  w->len = f.len;
  w->data = f.data;
  w->dlen = f.dlen;
  return 1;
}

static int scan_rows(rsc__report *r) {
  size_t p = 0;
  while (p < r->len) {
    if (!grow(r, (void **)&r->rows, r->nrows, &r->cap_rows, sizeof *r->rows)) return 0;
    rsc__rpt_row *w = &r->rows[r->nrows];
    memset(w, 0, sizeof *w);
    w->off = p;
    w->settled_by = w->boundary = w->node = RSC__RPT_NONE;
    if (!scan_row(r->buf, r->len, w)) {
      *w = (rsc__rpt_row){
          p, r->len - p, p, r->len - p, -1, TAG_CUT, RSC__RPT_NONE, RSC__RPT_NONE, RSC__RPT_NONE};
      r->nrows++;
      return 1;
    }
    r->nrows++;
    p += (size_t)w->len;
  }
  return 1;
}

/* A chunk node's name: "row 1f · <main>", "row 1 · I app/Feed.js#Feed". */
static uint32_t chunk_name(build *b, int64_t id, const rsc__rpt_row *first) {
  rsc__report *r = b->r;
  char buf[600], label[64];
  if (id < 0) return pool_add(r, "rows without an id", 18);
  int k = snprintf(buf, sizeof buf, "row %llx · ", (unsigned long long)id);
  const rsc_chunk *c = b->d ? rsc_decoder_chunk(b->d, id) : NULL;
  const rsc_node *v = c && rsc_chunk_status(c) == RSC_CHUNK_FULFILLED ? rsc_chunk_value(c) : NULL;
  if (first->tag == 'I' && rsc_node_kind(v) == RSC_CLIENT_REF) {
    type_desc t;
    memset(&t, 0, sizeof t);
    describe_client(v, &t);
    snprintf(buf + k, sizeof buf - (size_t)k, "I %s", t.module);
  } else if (first->tag == 0 && first->node != RSC__RPT_NONE) {
    const rsc__rpt_node *n = &r->nodes[first->node];
    const rsc__rpt_node *top = n->first != RSC__RPT_NONE ? &r->nodes[n->first] : NULL;
    if (top && top->kind == RSC__RPT_ELEMENT)
      snprintf(buf + k, sizeof buf - (size_t)k, "<%s>", rsc__report_name(r, top->name));
    else if (top && top->kind == RSC__RPT_ARRAY)
      snprintf(buf + k, sizeof buf - (size_t)k, "[%u items]", top->nkids);
    else if (top && top->kind == RSC__RPT_OBJECT)
      snprintf(buf + k, sizeof buf - (size_t)k, "{%u keys}", top->nkids);
    else snprintf(buf + k, sizeof buf - (size_t)k, "model");
  } else {
    snprintf(buf + k, sizeof buf - (size_t)k, "%s",
             rsc__row_tag_label(first->tag, 1, label, sizeof label));
  }
  return pool_add(r, buf, strlen(buf));
}

/* Orders row indices by id, then offset. */
static const rsc__rpt_row *g_rows;
static int cmp_row_id(const void *a, const void *b) {
  const rsc__rpt_row *x = &g_rows[*(const size_t *)a], *y = &g_rows[*(const size_t *)b];
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* The row's value under node (a chunk, or a row of it). */
static void measure_row(build *b, walk *w, rsc__rpt_row *row, uint32_t node) {
  rsc__report *r = b->r;
  row->node = node;
  if ((row->tag == 0 || row->tag == 'I' || row->tag == 'E' || row->tag == 'H') && row->dlen) {
    uint32_t keep = r->nnodes;
    uint64_t base = row->data;
    size_t n = (size_t)row->dlen;
    if (row->tag == 'H' && n) base++, n--; /* the hint code */
    if (!walk_json(b, w, node, base, n) && !r->nomem) {
      drop_nodes(r, keep, node);
      uint32_t t = add_node(r, node, RSC__RPT_DATA, row->data);
      if (t != RSC__RPT_NONE) {
        r->nodes[t].size = row->dlen;
        r->nodes[t].name = pool_add(r, "(not JSON)", 10);
      }
    }
  } else if (row->dlen) {
    uint32_t t = add_node(r, node, RSC__RPT_DATA, row->data);
    if (t != RSC__RPT_NONE) {
      char label[64], buf[96];
      snprintf(buf, sizeof buf, "%s data", rsc__row_tag_label(row->tag, 1, label, sizeof label));
      r->nodes[t].size = row->dlen;
      r->nodes[t].name = pool_add(r, buf, strlen(buf));
    }
  }
}

/* The tree: the root, a chunk per id (rows without an id share one), a ROW
 * node per row when a chunk has several, values under them. */
static int build_tree(build *b) {
  rsc__report *r = b->r;
  walk w = {NULL, 0, 0};
  size_t *idx = r_zalloc(r, r->nrows, sizeof *idx);
  if (!idx) return 0;
  for (size_t i = 0; i < r->nrows; i++) idx[i] = i;
  g_rows = r->rows;
  if (r->nrows > 1) qsort(idx, r->nrows, sizeof *idx, cmp_row_id);
  uint32_t root = add_node(r, RSC__RPT_NONE, RSC__RPT_ROOT, 0);
  if (root == RSC__RPT_NONE) goto fail;
  r->nodes[root].size = r->len;
  r->nodes[root].name = pool_add(r, "payload", 7);
  for (size_t i = 0; i < r->nrows && !r->nomem;) {
    size_t j = i;
    uint64_t bytes = 0;
    while (j < r->nrows && r->rows[idx[j]].id == r->rows[idx[i]].id) bytes += r->rows[idx[j++]].len;
    rsc__rpt_row *first = &r->rows[idx[i]];
    uint32_t chunk = add_node(r, root, RSC__RPT_CHUNK, first->off);
    if (chunk == RSC__RPT_NONE) break;
    r->nodes[chunk].size = bytes;
    r->nodes[chunk].idx = first->id < 0 ? RSC__RPT_NONE : (uint32_t)first->id;
    r->nchunks++;
    if (j - i == 1) {
      measure_row(b, &w, first, chunk);
    } else {
      for (size_t k = i; k < j && !r->nomem; k++) {
        rsc__rpt_row *row = &r->rows[idx[k]];
        uint32_t rn = add_node(r, chunk, RSC__RPT_ROW, row->off);
        if (rn == RSC__RPT_NONE) break;
        char label[64], buf[128];
        snprintf(buf, sizeof buf, "%s row at %llu",
                 rsc__row_tag_label(row->tag, 1, label, sizeof label),
                 (unsigned long long)row->off);
        r->nodes[rn].size = row->len;
        r->nodes[rn].name = pool_add(r, buf, strlen(buf));
        measure_row(b, &w, row, rn);
      }
      first->node = chunk; /* the chunk's name reads its first row's value */
      if (first->tag == 0 && r->nodes[chunk].first != RSC__RPT_NONE)
        first->node = r->nodes[chunk].first;
    }
    if (!r->nomem) r->nodes[chunk].name = chunk_name(b, first->id, first);
    if (j - i > 1)
      for (size_t k = i; k < j; k++) r->rows[idx[k]].node = chunk;
    i = j;
  }
fail:
  r_free(r, idx);
  r_free(r, w.f);
  return !r->nomem;
}

/* Appends node c to p's children (c keeps its index as a key). */
static void link_child(rsc__report *r, uint32_t p, uint32_t c) {
  rsc__rpt_node *pn = &r->nodes[p];
  r->nodes[c].parent = p;
  r->nodes[c].next = RSC__RPT_NONE;
  if (pn->last == RSC__RPT_NONE) pn->first = c;
  else r->nodes[pn->last].next = c;
  pn->last = c;
  pn->nkids++;
}

static uint32_t group_name(rsc__report *r, uint32_t g) {
  const rsc__rpt_node *gn = &r->nodes[g];
  const rsc__rpt_node *a = &r->nodes[gn->first], *z = &r->nodes[gn->last];
  char buf[128];
  if (a->kind == RSC__RPT_CHUNK && a->idx != RSC__RPT_NONE && z->idx != RSC__RPT_NONE)
    snprintf(buf, sizeof buf, "%u rows %x…%x", gn->nkids, a->idx, z->idx);
  else if (a->key_len != RSC__RPT_NONE) snprintf(buf, sizeof buf, "%u members", gn->nkids);
  else snprintf(buf, sizeof buf, "[%u…%u] %u items", a->idx, z->idx, gn->nkids);
  return pool_add(r, buf, strlen(buf));
}

/* A node with many children under 0.1 % of it (the rows of a long
 * stream, the items of a long list) gets its runs of such children put in
 * groups of consecutive ones, so that the page can show them a level
 * down instead of folding them all into one leaf. Groups of many are
 * grouped again in turn (they come later in the node list). */
static void group_children(rsc__report *r) {
  uint32_t *kids = NULL;
  size_t cap = 0;
  for (uint32_t i = 0; i < r->nnodes && !r->nomem; i++) {
    if (r->nodes[i].nkids <= RPT_GROUP) continue;
    uint64_t psize = r->nodes[i].size, small_bytes = 0;
    size_t nsmall = 0, n = 0;
    if (cap < r->nodes[i].nkids) {
      uint32_t *nk = r_realloc(r, kids, cap * sizeof *kids, r->nodes[i].nkids * sizeof *kids);
      if (!nk) {
        r->nomem = 1;
        break;
      }
      kids = nk;
      cap = r->nodes[i].nkids;
    }
    for (uint32_t c = r->nodes[i].first; c != RSC__RPT_NONE; c = r->nodes[c].next) {
      kids[n++] = c;
      if (r->nodes[c].size * 1000 < psize) nsmall++, small_bytes += r->nodes[c].size;
    }
    if (nsmall <= RPT_GROUP || small_bytes * 100 < psize) continue;
    size_t per = (nsmall + RPT_GROUP - 1) / RPT_GROUP;
    if (per < RPT_GROUP) per = RPT_GROUP;
    r->nodes[i].first = r->nodes[i].last = RSC__RPT_NONE;
    r->nodes[i].nkids = 0;
    uint32_t g = RSC__RPT_NONE;
    for (size_t k = 0; k < n && !r->nomem; k++) {
      uint32_t c = kids[k];
      if (r->nodes[c].size * 1000 >= psize) {
        link_child(r, i, c);
        g = RSC__RPT_NONE;
        continue;
      }
      if (g == RSC__RPT_NONE || r->nodes[g].nkids == per) {
        if (g != RSC__RPT_NONE) r->nodes[g].name = group_name(r, g);
        g = add_node(r, i, RSC__RPT_GROUP, r->nodes[c].off);
        if (g == RSC__RPT_NONE) break;
      }
      link_child(r, g, c);
      r->nodes[g].size += r->nodes[c].size;
      if (k + 1 == n || r->nodes[kids[k + 1]].size * 1000 >= psize)
        r->nodes[g].name = group_name(r, g);
    }
  }
  r_free(r, kids);
}

/* MARK: components, duplicates and boundaries ------------------------------------- */

static void count_components(build *b) {
  rsc__report *r = b->r;
  uint64_t *inner = r_zalloc(r, r->nnodes, sizeof *inner);
  if (!inner) {
    r->nomem = 1;
    return;
  }
  /* nodes are made parents first: from the end, every element's nested
   * elements are counted before it */
  for (uint32_t i = r->nnodes; i-- > 0;) {
    const rsc__rpt_node *n = &r->nodes[i];
    if (n->kind != RSC__RPT_ELEMENT) continue;
    uint32_t outer = RSC__RPT_NONE;
    int outermost = 1;
    for (uint32_t p = n->parent; p != RSC__RPT_NONE; p = r->nodes[p].parent) {
      if (r->nodes[p].kind != RSC__RPT_ELEMENT) continue;
      if (outer == RSC__RPT_NONE) outer = p;
      if (r->nodes[p].comp == n->comp) {
        outermost = 0;
        break;
      }
    }
    if (outer != RSC__RPT_NONE) inner[outer] += n->size;
    if (n->comp == RSC__RPT_NONE) continue;
    rsc__rpt_comp *c = &r->comps[n->comp];
    c->elements++;
    c->self += n->size - inner[i];
    if (outermost) c->subtree += n->size;
  }
  r_free(r, inner);
}

static void note_subtrees(build *b) {
  rsc__report *r = b->r;
  b->dup_of = r_zalloc(r, r->nnodes, sizeof *b->dup_of);
  if (!b->dup_of) {
    r->nomem = 1;
    return;
  }
  for (uint32_t i = 0; i < r->nnodes && !r->nomem; i++) {
    const rsc__rpt_node *n = &r->nodes[i];
    if ((n->kind == RSC__RPT_OBJECT || n->kind == RSC__RPT_ARRAY || n->kind == RSC__RPT_ELEMENT) &&
        n->size >= RPT_MIN_SUBTREE)
      note_dup(b, &b->subtrees, &b->tdup, &b->ntdup, &b->cap_tdup, n->off, n->size, i, 1);
  }
}

static uint64_t dup_cost(const rsc__rpt_dup *d, int quoted) {
  return (d->count - 1) * (d->len + (quoted ? 2 : 0));
}
static int cmp_dup_str(const void *a, const void *b) {
  uint64_t x = dup_cost(a, 1), y = dup_cost(b, 1);
  return x < y ? 1 : x > y ? -1 : 0;
}
static int cmp_dup_tree(const void *a, const void *b) {
  uint64_t x = dup_cost(a, 0), y = dup_cost(b, 0);
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Keeps the repeated ones, most costly first; for subtrees only those not
 * implied by a repeated parent (the same text inside a repeated subtree
 * repeats with it, as often). */
static void rank_dups(build *b) {
  rsc__report *r = b->r;
  size_t k = 0;
  for (size_t i = 0; i < b->nsdup; i++)
    if (b->sdup[i].count > 1) b->sdup[k++] = b->sdup[i];
  if (k > 1) qsort(b->sdup, k, sizeof *b->sdup, cmp_dup_str);
  r->strings = b->sdup;
  r->nstrings = k;
  b->sdup = NULL;
  k = 0;
  for (size_t i = 0; i < b->ntdup; i++) {
    rsc__rpt_dup *d = &b->tdup[i];
    if (d->count < 2) continue;
    uint32_t p = r->nodes[d->where[0]].parent;
    uint32_t pd = p == RSC__RPT_NONE ? 0 : b->dup_of[p];
    if (pd && b->tdup[pd - 1].count >= d->count) continue;
    b->tdup[k++] = *d;
  }
  if (k > 1) qsort(b->tdup, k, sizeof *b->tdup, cmp_dup_tree);
  r->subtrees = b->tdup;
  r->nsubtrees = k;
  b->tdup = NULL;
}

static int64_t row_id_of(const rsc__report *r, uint32_t node) {
  for (; node != RSC__RPT_NONE; node = r->nodes[node].parent)
    if (r->nodes[node].kind == RSC__RPT_CHUNK)
      return r->nodes[node].idx == RSC__RPT_NONE ? -1 : (int64_t)r->nodes[node].idx;
  return -1;
}

/* The row (index) a node sits in. */
static size_t row_of(const rsc__report *r, uint32_t node) {
  uint64_t off = r->nodes[node].off;
  size_t lo = 0, hi = r->nrows;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (r->rows[mid].off <= off) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Which reference each row settles (the first "$L<id>" or "$@<id>" of its
 * id), and the boundary that is: the Suspense element around the
 * reference, else the boundary of the row the reference sits in, else the
 * lazy or promise itself. Rows come in order and a reference precedes the
 * row it names, so one pass in row order sees each boundary first. */
static void find_boundaries(build *b) {
  rsc__report *r = b->r;
  smap firsts = {NULL, 0, 0}; /* id text -> node + 1 of the first reference */
  for (uint32_t i = 0; i < r->nnodes && !r->nomem; i++) {
    const rsc__rpt_node *n = &r->nodes[i];
    if (n->kind != RSC__RPT_STRING || n->size < 5) continue;
    const char *s = r->buf + n->off + 1;
    size_t sn = (size_t)n->size - 2;
    if (s[0] != '$' || (s[1] != 'L' && s[1] != '@') || !all_hex(s + 2, sn - 2)) continue;
    int added;
    smap_e *e = smap_get(r, &firsts, s + 2, sn - 2, &added);
    if (!e) r->nomem = 1;
    else if (added) e->value = i + 1;
  }
  char hex[24];
  for (size_t i = 0; i < r->nrows && !r->nomem; i++) {
    rsc__rpt_row *row = &r->rows[i];
    if (row->id < 0) continue;
    int k = snprintf(hex, sizeof hex, "%llx", (unsigned long long)row->id);
    const smap_e *e = smap_find(&firsts, hex, (size_t)k);
    if (!e) continue; /* no reference names it */
    uint32_t ref = e->value - 1;
    row->settled_by = ref;
    uint32_t boundary = RSC__RPT_NONE;
    for (uint32_t p = r->nodes[ref].parent; p != RSC__RPT_NONE; p = r->nodes[p].parent) {
      const rsc__rpt_node *pn = &r->nodes[p];
      if (pn->kind == RSC__RPT_CHUNK || pn->kind == RSC__RPT_ROW) break;
      if (pn->kind == RSC__RPT_ELEMENT && pn->comp != RSC__RPT_NONE &&
          r->comps[pn->comp].kind == 'r' &&
          strcmp(rsc__report_name(r, r->comps[pn->comp].name), "Suspense") == 0) {
        boundary = p;
        break;
      }
    }
    uint32_t index = RSC__RPT_NONE;
    if (boundary == RSC__RPT_NONE) {
      size_t from = row_of(r, ref);
      if (from < i && r->rows[from].boundary != RSC__RPT_NONE) index = r->rows[from].boundary;
      else boundary = ref;
    }
    if (index == RSC__RPT_NONE) {
      for (uint32_t k2 = 0; k2 < r->nbounds; k2++)
        if (r->bounds[k2].node == boundary) index = k2;
    }
    if (index == RSC__RPT_NONE) {
      if (!grow32(r, (void **)&r->bounds, r->nbounds, &r->cap_bounds, sizeof *r->bounds)) {
        r->nomem = 1;
        break;
      }
      r->bounds[r->nbounds] = (rsc__rpt_boundary){boundary, row_id_of(r, boundary)};
      index = r->nbounds++;
    }
    row->boundary = index;
  }
  r_free(r, firsts.e);
}

/* MARK: build ------------------------------------------------------------------------ */

static void build_free(build *b) {
  const rsc__report *r = b->r;
  for (uint32_t i = 0; i < r->ncomps && b->comp_keys; i++) r_free(r, b->comp_keys[i]);
  r_free(r, b->comp_keys);
  r_free(r, b->type_by_raw.e);
  r_free(r, b->comp_by_key.e);
  r_free(r, b->strings.e);
  r_free(r, b->subtrees.e);
  r_free(r, b->sdup);
  r_free(r, b->tdup);
  r_free(r, b->dup_of);
}

rsc_status rsc__report_build(rsc__report *r, const char *buf, size_t len, const rsc_options *opt) {
  memset(r, 0, sizeof *r);
  r->buf = buf;
  r->len = len;
  rsc_options o;
  if (opt) o = *opt;
  else rsc_options_init(&o);
  r->al = o.alloc;
  o.on_event = NULL;
  build b;
  memset(&b, 0, sizeof b);
  b.r = r;
  b.d = rsc_decode(buf, len, &o, &r->decode);
  if (!b.d) {
    r->decode = (rsc_error){RSC_ERR_NOMEM, 0, -1, "out of memory"};
    r->nomem = 1;
  } else {
    r->dev = rsc_decoder_is_dev(b.d);
  }
  if (!r->nomem && !scan_rows(r)) r->nomem = 1;
  if (!r->nomem) build_tree(&b);
  if (!r->nomem) group_children(r);
  if (!r->nomem) count_components(&b);
  if (!r->nomem) note_subtrees(&b);
  if (!r->nomem) rank_dups(&b);
  if (!r->nomem) find_boundaries(&b);
  build_free(&b);
  rsc_decoder_free(b.d);
  return r->nomem ? RSC_ERR_NOMEM : RSC_OK;
}

void rsc__report_free(rsc__report *r) {
  r_free(r, r->nodes);
  r_free(r, r->rows);
  r_free(r, r->pool);
  r_free(r, r->comps);
  r_free(r, r->strings);
  r_free(r, r->subtrees);
  r_free(r, r->bounds);
  memset(r, 0, sizeof *r);
}

/* MARK: output ------------------------------------------------------------------------ */

enum { OUT_CAP = 65536 };

typedef struct out {
  rsc_write_fn write;
  void *ctx;
  char buf[OUT_CAP];
  size_t len;
  int failed;
} out;

static void out_flush(out *o) {
  if (o->len && !o->failed && o->write(o->ctx, o->buf, o->len) != 0) o->failed = 1;
  o->len = 0;
}

static void out_bytes(out *o, const char *s, size_t n) {
  while (n && !o->failed) {
    size_t room = OUT_CAP - o->len, k = n < room ? n : room;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
    if (o->len == OUT_CAP) out_flush(o);
  }
}

static void out_str(out *o, const char *s) { out_bytes(o, s, strlen(s)); }

static void out_fmt(out *o, const char *fmt, unsigned long long v) {
  char buf[64];
  int k = snprintf(buf, sizeof buf, fmt, v);
  out_bytes(o, buf, (size_t)k);
}

/* A JSON string safe inside a <script> element: quotes, backslashes and
 * control bytes escaped, and '<', '>', '&' as \u escapes. Bytes that are
 * not UTF-8 are written as U+FFFD. cut: code points kept (0: all). */
static void out_json_str(out *o, const char *s, size_t n, size_t cut) {
  out_bytes(o, "\"", 1);
  size_t chars = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (cut && chars++ == cut) {
      out_str(o, "…");
      break;
    }
    if (c < 0x80) {
      char esc[8];
      if (c == '"' || c == '\\') {
        esc[0] = '\\';
        esc[1] = (char)c;
        out_bytes(o, esc, 2);
      } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
        snprintf(esc, sizeof esc, "\\u%04x", c);
        out_bytes(o, esc, 6);
      } else {
        out_bytes(o, (const char *)&c, 1);
      }
      i++;
      continue;
    }
    size_t k = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    int ok = k && i + k <= n;
    for (size_t j = 1; ok && j < k; j++) ok = ((unsigned char)s[i + j] & 0xC0) == 0x80;
    if (ok && k == 3) {
      unsigned char c1 = (unsigned char)s[i + 1];
      ok = !(c == 0xE0 && c1 < 0xA0); /* surrogates (WTF-8) pass: the page shows them */
    }
    if (ok && k == 4) {
      unsigned char c1 = (unsigned char)s[i + 1];
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok && k == 3 && c == 0xED && (unsigned char)s[i + 1] >= 0xA0) {
      out_str(o, "\\ufffd"); /* a lone surrogate is no valid UTF-8 in JSON text */
      i += 3;
      continue;
    }
    if (ok) {
      out_bytes(o, s + i, k);
      i += k;
    } else {
      out_str(o, "\\ufffd");
      i++;
    }
  }
  out_bytes(o, "\"", 1);
}

/* A value's display name: the node's own name, else its JSON text shortened. */
static void out_node_name(out *o, const rsc__report *r, const rsc__rpt_node *n) {
  char buf[64];
  if (n->name) {
    const char *nm = rsc__report_name(r, n->name);
    if (n->kind == RSC__RPT_ELEMENT) {
      char t[200];
      snprintf(t, sizeof t, "<%s>", nm);
      out_json_str(o, t, strlen(t), 0);
    } else {
      out_json_str(o, nm, strlen(nm), 0);
    }
    return;
  }
  switch (n->kind) {
  case RSC__RPT_ELEMENT: out_json_str(o, "<?>", 3, 0); return;
  case RSC__RPT_OBJECT:
    snprintf(buf, sizeof buf, "{%u key%s}", n->nkids, n->nkids == 1 ? "" : "s");
    break;
  case RSC__RPT_ARRAY:
    snprintf(buf, sizeof buf, "[%u item%s]", n->nkids, n->nkids == 1 ? "" : "s");
    break;
  default: out_json_str(o, r->buf + n->off, (size_t)n->size, RPT_NAME_CHARS); return;
  }
  out_json_str(o, buf, strlen(buf), 0);
}

static void out_node_key(out *o, const rsc__report *r, const rsc__rpt_node *n) {
  if (n->kind == RSC__RPT_CHUNK) {
    if (n->idx == RSC__RPT_NONE) out_str(o, "null");
    else {
      char hex[24];
      snprintf(hex, sizeof hex, "\"%llx\"", (unsigned long long)n->idx);
      out_str(o, hex);
    }
  } else if (n->parent == RSC__RPT_NONE || n->kind == RSC__RPT_ROW || n->kind == RSC__RPT_GROUP ||
             r->nodes[n->parent].kind == RSC__RPT_CHUNK ||
             r->nodes[n->parent].kind == RSC__RPT_ROW) {
    out_str(o, "null");
  } else if (n->key_len != RSC__RPT_NONE) {
    out_json_str(o, r->buf + n->key_off, n->key_len, RPT_NAME_CHARS);
  } else {
    out_fmt(o, "%llu", n->idx);
  }
}

/* A node's place: its row and key path, "row 0 › children › 2". */
static void out_place(out *o, const rsc__report *r, uint32_t node) {
  uint32_t path[24];
  size_t n = 0, more = 0;
  int64_t row = -1;
  for (uint32_t p = node; p != RSC__RPT_NONE; p = r->nodes[p].parent) {
    const rsc__rpt_node *pn = &r->nodes[p];
    if (pn->kind == RSC__RPT_CHUNK) {
      row = pn->idx == RSC__RPT_NONE ? -1 : (int64_t)pn->idx;
      break;
    }
    if (pn->kind == RSC__RPT_ROW || pn->kind == RSC__RPT_GROUP || pn->parent == RSC__RPT_NONE)
      continue;
    uint32_t up = pn->parent;
    while (r->nodes[up].kind == RSC__RPT_GROUP) up = r->nodes[up].parent;
    const rsc__rpt_node *par = &r->nodes[up];
    if (par->kind == RSC__RPT_CHUNK || par->kind == RSC__RPT_ROW) continue;
    if (n < 24) path[n++] = p;
    else more++;
  }
  char buf[400];
  size_t k = 0;
  if (row >= 0) k += (size_t)snprintf(buf, sizeof buf, "row %llx", (unsigned long long)row);
  else k += (size_t)snprintf(buf, sizeof buf, "(no row id)");
  if (more) k += (size_t)snprintf(buf + k, sizeof buf - k, " › …");
  for (size_t i = n; i-- > 0 && k < sizeof buf - 80;) {
    const rsc__rpt_node *pn = &r->nodes[path[i]];
    if (pn->key_len != RSC__RPT_NONE) {
      int cut;
      size_t m = utf8_cut(r->buf + pn->key_off, pn->key_len, 30, &cut);
      k += (size_t)snprintf(buf + k, sizeof buf - k, " › %.*s%s", (int)m, r->buf + pn->key_off,
                            cut ? "…" : "");
    } else {
      k += (size_t)snprintf(buf + k, sizeof buf - k, " › %u", pn->idx);
    }
  }
  out_json_str(o, buf, k < sizeof buf ? k : sizeof buf - 1, 0);
}

/* MARK: which nodes the page gets ------------------------------------------------- */

typedef struct heap {
  uint32_t *v;
  size_t n, cap;
  const rsc__rpt_node *nodes;
  const rsc__report *r;
} heap;

static int heap_push(heap *h, uint32_t x) {
  if (!grow(h->r, (void **)&h->v, h->n, &h->cap, sizeof *h->v)) return 0;
  size_t i = h->n++;
  while (i && h->nodes[h->v[(i - 1) / 2]].size < h->nodes[x].size) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = x;
  return 1;
}

static uint32_t heap_pop(heap *h) {
  uint32_t top = h->v[0], x = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->nodes[h->v[c + 1]].size > h->nodes[h->v[c]].size) c++;
    if (h->nodes[h->v[c]].size <= h->nodes[x].size) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n) h->v[i] = x;
  return top;
}

/* Whether a child is shown on its own (not folded into "N small items"). */
static int shown(const rsc__rpt_node *parent, const rsc__rpt_node *child) {
  return child->size * 1000 >= parent->size && child->size > 0;
}

/* Marks the nodes to open (expanded[i] = 1), largest first, until about
 * budget nodes are shown. */
static uint8_t *choose(const rsc__report *r, size_t budget) {
  uint8_t *open = r_zalloc(r, r->nnodes, 1);
  heap h = {NULL, 0, 0, r->nodes, r};
  if (!open || !r->nnodes || !heap_push(&h, 0)) goto done;
  size_t count = 1;
  while (h.n) {
    uint32_t i = heap_pop(&h);
    const rsc__rpt_node *n = &r->nodes[i];
    if (n->first == RSC__RPT_NONE) continue;
    size_t kids = 0;
    for (uint32_t c = n->first; c != RSC__RPT_NONE; c = r->nodes[c].next)
      kids += shown(n, &r->nodes[c]);
    if (count + kids + 2 > budget && i != 0) continue;
    open[i] = 1;
    count += kids + 2;
    for (uint32_t c = n->first; c != RSC__RPT_NONE; c = r->nodes[c].next)
      if (shown(n, &r->nodes[c]) && r->nodes[c].first != RSC__RPT_NONE && !heap_push(&h, c)) {
        r_free(r, open);
        open = NULL;
        goto done;
      }
  }
done:
  r_free(r, h.v);
  return open;
}

/* The tree in pre-order: [name, bytes, parent, key, kind, values inside]
 * with parent an index into this list (-1 for the root). */
static int out_tree(out *o, const rsc__report *r, const uint8_t *open) {
  uint32_t *stack = r_zalloc(r, r->nnodes, sizeof *stack);
  uint32_t *index = r_zalloc(r, r->nnodes, sizeof *index);
  if (!stack || !index) {
    r_free(r, stack);
    r_free(r, index);
    return 0;
  }
  size_t sp = 0, emitted = 0;
  stack[sp++] = 0;
  out_str(o, "[");
  while (sp && !o->failed) {
    uint32_t i = stack[--sp];
    const rsc__rpt_node *n = &r->nodes[i];
    index[i] = (uint32_t)emitted;
    long long parent = n->parent == RSC__RPT_NONE ? -1 : (long long)index[n->parent];
    out_str(o, emitted ? ",\n[" : "[");
    out_node_name(o, r, n);
    out_fmt(o, ",%llu,", n->size);
    char pb[32];
    snprintf(pb, sizeof pb, "%lld,", parent);
    out_str(o, pb);
    out_node_key(o, r, n);
    char kb[8] = {',', '"', (char)n->kind, '"', ',', 0};
    out_str(o, kb);
    out_fmt(o, "%llu]", open[i] ? 0 : n->nkids);
    emitted++;
    if (!open[i]) continue;
    uint64_t small = 0, kids = 0, nsmall = 0;
    size_t mark = sp;
    for (uint32_t c = n->first; c != RSC__RPT_NONE; c = r->nodes[c].next) {
      kids += r->nodes[c].size;
      if (shown(n, &r->nodes[c])) stack[sp++] = c;
      else small += r->nodes[c].size, nsmall++;
    }
    /* children in their order: reverse what the stack pops */
    for (size_t a = mark, z = sp; a + 1 < z; a++, z--) {
      uint32_t t = stack[a];
      stack[a] = stack[z - 1];
      stack[z - 1] = t;
    }
    /* folded and own bytes come first in the list, as leaves of this node */
    long long me = (long long)index[i];
    char buf[160];
    if (nsmall) {
      snprintf(buf, sizeof buf, ",\n[\"%llu small item%s\",%llu,%lld,null,\"f\",%llu]",
               (unsigned long long)nsmall, nsmall == 1 ? "" : "s", (unsigned long long)small, me,
               (unsigned long long)nsmall);
      out_str(o, buf);
      emitted++;
    }
    if (n->size > kids) {
      snprintf(buf, sizeof buf, ",\n[\"%s\",%llu,%lld,null,\"w\",0]",
               n->kind == RSC__RPT_ROOT                               ? "(unframed)"
               : n->kind == RSC__RPT_CHUNK || n->kind == RSC__RPT_ROW ? "(row header)"
               : n->kind == RSC__RPT_ELEMENT                          ? "(type, key, brackets)"
                                                                      : "(keys, brackets, commas)",
               (unsigned long long)(n->size - kids), me);
      out_str(o, buf);
      emitted++;
    }
  }
  out_str(o, "]");
  r_free(r, stack);
  r_free(r, index);
  return 1;
}

static void out_dups(out *o, const rsc__report *r, const rsc__rpt_dup *v, size_t n, int quoted) {
  out_str(o, "[");
  for (size_t i = 0; i < n && i < RPT_MAX_DUPS; i++) {
    const rsc__rpt_dup *d = &v[i];
    out_str(o, i ? ",\n[" : "[");
    out_json_str(o, r->buf + d->off, (size_t)d->len, 80);
    out_fmt(o, ",%llu", d->count);
    out_fmt(o, ",%llu,[", d->len + (quoted ? 2 : 0));
    for (uint32_t k = 0; k < d->nwhere; k++) {
      if (k) out_str(o, ",");
      out_place(o, r, d->where[k]);
    }
    out_str(o, "]]");
  }
  out_str(o, "]");
}

static int cmp_comp(const void *a, const void *b) {
  const rsc__rpt_comp *x = a, *y = b;
  return x->self < y->self ? 1 : x->self > y->self ? -1 : 0;
}

static void out_components(out *o, rsc__report *r) {
  if (r->ncomps > 1) qsort(r->comps, r->ncomps, sizeof *r->comps, cmp_comp);
  out_str(o, "[");
  size_t shown_n = 0;
  for (uint32_t i = 0; i < r->ncomps && shown_n < RPT_MAX_COMPS; i++) {
    const rsc__rpt_comp *c = &r->comps[i];
    if (!c->elements) continue;
    out_str(o, shown_n++ ? ",\n[" : "[");
    const char *nm = rsc__report_name(r, c->name), *mod = rsc__report_name(r, c->module);
    out_json_str(o, nm, strlen(nm), 0);
    char kb[8] = {',', '"', (char)c->kind, '"', ',', 0};
    out_str(o, kb);
    out_json_str(o, mod, strlen(mod), 0);
    out_fmt(o, ",%llu", c->elements);
    out_fmt(o, ",%llu", c->self);
    out_fmt(o, ",%llu]", c->subtree);
  }
  out_str(o, "]");
}

/* The rows in order: [offset, bytes, id, tag, boundary, settles, rows]; with
 * more rows than the page draws, runs of small rows of one boundary merge
 * (rows > 1). */
static void out_stream(out *o, const rsc__report *r) {
  out_str(o, "[");
  uint64_t small = r->len / RPT_MAX_STREAM;
  size_t emitted = 0;
  for (size_t i = 0; i < r->nrows && !o->failed;) {
    const rsc__rpt_row *w = &r->rows[i];
    size_t j = i + 1;
    uint64_t len = w->len;
    if (r->nrows > RPT_MAX_STREAM && w->len < small)
      while (j < r->nrows && r->rows[j].len < small && r->rows[j].boundary == w->boundary &&
             len < small * 4)
        len += r->rows[j++].len;
    out_str(o, emitted++ ? ",[" : "[");
    out_fmt(o, "%llu", w->off);
    out_fmt(o, ",%llu,", len);
    if (w->id < 0) out_str(o, "null");
    else out_fmt(o, "\"%llx\"", (unsigned long long)w->id);
    char label[64];
    const char *t = rsc__row_tag_label(w->tag, 1, label, sizeof label);
    out_str(o, ",");
    out_json_str(o, t, strlen(t), 0);
    if (w->boundary == RSC__RPT_NONE) out_str(o, ",-1,");
    else out_fmt(o, ",%llu,", w->boundary);
    if (w->settled_by == RSC__RPT_NONE) out_str(o, "null");
    else out_json_str(o, r->buf + r->nodes[w->settled_by].off + 1, 2, 0);
    out_fmt(o, ",%llu]", j - i);
    i = j;
  }
  out_str(o, "]");
}

static void out_bounds(out *o, const rsc__report *r) {
  out_str(o, "[");
  for (uint32_t i = 0; i < r->nbounds; i++) {
    const rsc__rpt_node *n = &r->nodes[r->bounds[i].node];
    out_str(o, i ? ",[" : "[");
    if (n->kind == RSC__RPT_ELEMENT) out_json_str(o, "<Suspense>", 10, 0);
    else out_json_str(o, r->buf + n->off + 1, (size_t)n->size - 2, 0);
    out_str(o, ",");
    out_place(o, r, r->bounds[i].node);
    out_str(o, "]");
  }
  out_str(o, "]");
}

static const char *flavor_name(rsc_html_flavor f) {
  return f == RSC_HTML_NEXT ? "next" : f == RSC_HTML_RSC_HTML_STREAM ? "rsc-html-stream" : "";
}

static void out_data(out *o, rsc__report *r, const uint8_t *open, const char *title) {
  out_str(o, "{\"title\":");
  out_json_str(o, title ? title : "payload", title ? strlen(title) : 7, 0);
  out_fmt(o, ",\"total\":%llu", r->len);
  out_fmt(o, ",\"rows\":%llu", r->nrows);
  out_fmt(o, ",\"chunks\":%llu", r->nchunks);
  out_fmt(o, ",\"values\":%llu", r->nnodes);
  out_str(o, r->dev ? ",\"dev\":true" : ",\"dev\":false");
  if (r->html_len) {
    out_fmt(o, ",\"page\":{\"html\":%llu", r->html_len);
    out_str(o, ",\"flavor\":\"");
    out_str(o, flavor_name(r->flavor));
    out_str(o, "\"}");
  } else {
    out_str(o, ",\"page\":null");
  }
  if (r->decode.code != RSC_OK) {
    out_fmt(o, ",\"error\":{\"code\":%llu", (unsigned long long)r->decode.code);
    out_fmt(o, ",\"offset\":%llu", r->decode.offset);
    if (r->decode.row_id >= 0)
      out_fmt(o, ",\"row\":\"%llx\"", (unsigned long long)r->decode.row_id);
    out_str(o, ",\"msg\":");
    const char *m = r->decode.msg ? r->decode.msg : "";
    out_json_str(o, m, strlen(m), 0);
    out_str(o, "}");
  } else {
    out_str(o, ",\"error\":null");
  }
  out_str(o, ",\n\"tree\":");
  out_tree(o, r, open);
  out_str(o, ",\n\"components\":");
  out_components(o, r);
  out_str(o, ",\n\"strings\":");
  out_dups(o, r, r->strings, r->nstrings, 1);
  out_str(o, ",\n\"subtrees\":");
  out_dups(o, r, r->subtrees, r->nsubtrees, 0);
  out_str(o, ",\n\"boundaries\":");
  out_bounds(o, r);
  out_str(o, ",\n\"stream\":");
  out_stream(o, r);
  out_str(o, "}");
}

/* MARK: the public call ---------------------------------------------------------------- */

rsc_status rsc_report_html(const char *input, size_t len, int page, const rsc_options *opt,
                           rsc_write_fn write, void *ctx, rsc_error *err) {
  rsc_error none = {RSC_OK, 0, -1, NULL};
  if (!err) err = &none;
  *err = none;
  if (!write || (!input && len)) {
    *err = (rsc_error){RSC_ERR_STATE, 0, -1, "rsc_report_html: no input or no write function"};
    return RSC_ERR_STATE;
  }
  if (!input) input = "";
  char *payload = NULL;
  size_t plen = len;
  rsc_html_flavor flavor = RSC_HTML_AUTO;
  if (page > 0 || (page < 0 && rsc__looks_like_page(input, len))) {
    rsc_status st = rsc_html_extract(input, len, RSC_HTML_AUTO, &payload, &plen, err, &flavor);
    if (st != RSC_OK) return st;
  }
  rsc__report r;
  rsc_status st = rsc__report_build(&r, payload ? payload : input, plen, opt);
  if (payload) {
    r.html_len = len;
    r.flavor = flavor;
  }
  uint8_t *open = st == RSC_OK ? choose(&r, plen / 100 < 2000    ? 2000
                                            : plen / 100 > 20000 ? 20000
                                                                 : plen / 100)
                               : NULL;
  if (st == RSC_OK && !open) st = RSC_ERR_NOMEM;
  if (st == RSC_OK) {
    out *o = r_alloc(&r, sizeof *o);
    if (!o) {
      st = RSC_ERR_NOMEM;
    } else {
      o->write = write;
      o->ctx = ctx;
      o->len = 0;
      o->failed = 0;
      out_bytes(o, rsc__report_page_head, sizeof rsc__report_page_head - 1);
      out_data(o, &r, open, payload ? "page" : "payload");
      out_bytes(o, rsc__report_page_tail, sizeof rsc__report_page_tail - 1);
      out_flush(o);
      if (o->failed) st = RSC_ERR_USER;
      r_free(&r, o);
    }
  }
  if (st == RSC_ERR_NOMEM) *err = (rsc_error){RSC_ERR_NOMEM, 0, -1, "out of memory"};
  else if (st == RSC_ERR_USER) *err = (rsc_error){RSC_ERR_USER, 0, -1, "the write function failed"};
  else *err = r.decode;
  r_free(&r, open);
  rsc__report_free(&r);
  rsc_free(payload);
  return st;
}
