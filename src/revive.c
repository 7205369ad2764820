/* revive.c - React's reviveModel walk and parseModelString, in place.
 *
 * One walk per parsed row: "$" strings become typed values
 * (docs/spec/FLIGHT-PROTOCOL.md 5), arrays whose slot 0 is the element marker
 * become elements (7), object members that revive to undefined and "__proto__"
 * members become absent (4.1). References go through the chunk table and either
 * resolve now or leave a null placeholder and a listener (6). Containers the
 * JSON stage marked clean (no "$" string, no "__proto__" key inside) are
 * skipped. */
#include "revive.h"
#include "jsstring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chunks.h"
#include "hex.h"
#include "json.h"
#include "utf8.h"

const char rsc__generic_error[] =
    "An error occurred in the Server Components render. The specific message is omitted in "
    "production builds to avoid leaking sensitive details. A digest property is included on "
    "this error instance which may provide additional details about the nature of the error.";
const char rsc__dev_default_error[] =
    "An error occurred in the Server Components render but no message was provided";
static const char omitted_message[] =
    "This object has been omitted by React in the console log to avoid sending too much data "
    "from the server. Try logging smaller or more specific objects.";
static const char missing_temp_refs[] =
    "Missing a temporary reference set but the RSC response returned a temporary reference. "
    "Pass a temporaryReference option with the set that was used with the reply.";

rsc_node rsc__lazy(rsc_chunk *c) {
  rsc_node n = rsc__mk(RSC_LAZY);
  n.u.chunk = c;
  return n;
}

/* ---- small helpers ---------------------------------------------------------- */

static bool key_is(const char *k, uint32_t n, const char *lit) {
  size_t l = strlen(lit);
  return n == l && memcmp(k, lit, l) == 0;
}

int64_t rsc__parse_ref_id(const char *s, size_t len) {
  /* The common case: lowercase hex digits up to the end or a ':'. */
  if (len > 0 && len <= 12) {
    uint64_t v;
    size_t k = rsc__hex_prefix((const uint8_t *)s, len, &v);
    if (k > 0 && (k == len || s[k] == ':') && !(k >= 2 && s[0] == '0' && s[1] == 'x'))
      return (int64_t)v;
  }
  size_t i = 0;
  /* parseInt trims white space (ASCII, NBSP and BOM here). */
  for (;;) {
    if (i < len && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) {
      i++;
    } else if (i + 1 < len && (uint8_t)s[i] == 0xC2 && (uint8_t)s[i + 1] == 0xA0) {
      i += 2;
    } else if (i + 2 < len && (uint8_t)s[i] == 0xEF && (uint8_t)s[i + 1] == 0xBB &&
               (uint8_t)s[i + 2] == 0xBF) {
      i += 3;
    } else {
      break;
    }
  }
  bool neg = false;
  if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i + 1 < len && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) i += 2;
  double v = 0;
  size_t digits = 0;
  for (; i < len; i++) {
    char c = s[i];
    int h = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (h < 0) break;
    v = v * 16 + h;
    digits++;
  }
  if (digits == 0) return INT64_MIN; /* NaN: one chunk no row can name */
  if (neg) v = -v;
  if (v >= 9.2e18 || v <= -9.2e18) return INT64_MIN + 1;
  return (int64_t)v;
}

/* BigInt(text) as JavaScript reads it: trimmed, optional sign for decimal,
 * 0x / 0o / 0b prefixes, "" is 0. Returns decimal digits, or NULL (throw). */
static const char *parse_bigint(rsc_decoder *d, const char *s, size_t len, size_t *out_len) {
  size_t a = 0, b = len;
  while (a < b && (s[a] == ' ' || (s[a] >= '\t' && s[a] <= '\r'))) a++;
  while (b > a && (s[b - 1] == ' ' || (s[b - 1] >= '\t' && s[b - 1] <= '\r'))) b--;
  if (a == b) {
    *out_len = 1;
    return "0";
  }
  int base = 10;
  bool neg = false;
  if (b - a > 2 && s[a] == '0' && strchr("xXoObB", s[a + 1])) {
    base = (s[a + 1] | 0x20) == 'x' ? 16 : (s[a + 1] | 0x20) == 'o' ? 8 : 2;
    a += 2;
  } else if (s[a] == '-' || s[a] == '+') {
    neg = s[a] == '-';
    a++;
    if (a == b) return NULL;
  }
  size_t n = b - a;
  if (base == 10) {
    /* Decimal (what React's server writes): the digits as they are, less
     * leading zeros; no base conversion. */
    while (a < b - 1 && s[a] == '0') a++;
    bool digits = true;
    for (size_t i = a; i < b; i++) digits &= s[i] >= '0' && s[i] <= '9';
    if (!digits) return NULL;
    neg &= !(b - a == 1 && s[a] == '0'); /* BigInt("-0") is 0n */
    char *out = (char *)rsc__alloc(d, b - a + 2);
    if (!out) return NULL;
    size_t o = 0;
    if (neg) out[o++] = '-';
    memcpy(out + o, s + a, b - a);
    o += b - a;
    out[o] = 0;
    *out_len = o;
    return out;
  }
  /* Base conversion into little-endian base-1e9 limbs. */
  size_t limbs_cap = n / 2 + 2;
  uint32_t *limbs = (uint32_t *)rsc__alloc(d, limbs_cap * sizeof(uint32_t));
  if (!limbs) return NULL;
  size_t nl = 0;
  for (size_t i = a; i < b; i++) {
    char c = s[i];
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    if (v >= base) return NULL;
    uint64_t carry = (uint64_t)v;
    for (size_t k = 0; k < nl; k++) {
      uint64_t x = (uint64_t)limbs[k] * (uint64_t)base + carry;
      limbs[k] = (uint32_t)(x % 1000000000u);
      carry = x / 1000000000u;
    }
    while (carry) {
      limbs[nl++] = (uint32_t)(carry % 1000000000u);
      carry /= 1000000000u;
    }
  }
  while (nl > 0 && limbs[nl - 1] == 0) nl--;
  if (nl == 0) {
    *out_len = 1;
    return "0";
  }
  /* No sign here: a 0x, 0o or 0b prefix takes none (BigInt("-0x1") is a
   * SyntaxError), so only decimal text, handled above, is negative. */
  char *out = (char *)rsc__alloc(d, nl * 9 + 1);
  if (!out) return NULL;
  size_t o = 0;
  /* The top limb without leading zeros, the others as nine digits. */
  char top[10];
  size_t t = 0;
  for (uint32_t x = limbs[nl - 1]; x; x /= 10) top[t++] = (char)('0' + x % 10);
  while (t) out[o++] = top[--t];
  for (size_t k = nl - 1; k-- > 0;) {
    uint32_t x = limbs[k];
    for (int i = 8; i >= 0; i--, x /= 10) out[o + (size_t)i] = (char)('0' + x % 10);
    o += 9;
  }
  out[o] = 0;
  *out_len = o;
  return out;
}

/* ---- stepping along a path ------------------------------------------------- */

static bool canonical_index(rsc_key k, uint32_t *out) {
  if (k.n == 0 || k.n > 10) return false;
  if (k.n > 1 && k.s[0] == '0') return false;
  uint64_t v = 0;
  for (uint32_t i = 0; i < k.n; i++) {
    if (k.s[i] < '0' || k.s[i] > '9') return false;
    v = v * 10 + (uint64_t)(k.s[i] - '0');
  }
  if (v >= 4294967295ull) return false;
  *out = (uint32_t)v;
  return true;
}

/* Wide objects. A path step scans an object's members, and n references
 * into one object of n members took n^2 steps (1.15 MB of them, 10.7 s;
 * JavaScript objects are hash tables). The first step into an object of
 * more than WIDE_OBJECT members indexes its keys, which never change once
 * parsed (only values are filled in or deleted) and are distinct (parsing
 * drops duplicates). The index lives in the arena, found by the members
 * array in a table of the decoder; without memory for it, steps scan. */
#define WIDE_OBJECT 32

typedef struct wide_index {
  const rsc_member *members;
  uint32_t *pos; /* open addressing on the key hash: member position or ~0 */
  uint32_t cap;  /* a power of two, at least twice the members            */
} wide_index;

static const wide_index *wide_lookup(rsc_decoder *d, const rsc_node *obj) {
  const rsc_member *members = obj->u.members;
  if ((d->wide_count + 1) * 2 > d->wide_cap) {
    uint32_t cap = d->wide_cap ? d->wide_cap * 2 : 16;
    wide_index *t = (wide_index *)rsc__arena_alloc(&d->arena, cap * sizeof *t);
    if (!t) return NULL;
    memset(t, 0, cap * sizeof *t);
    for (uint32_t i = 0; i < d->wide_cap; i++) {
      if (!d->wide[i].members) continue;
      size_t h = (size_t)rsc__hash_final((uintptr_t)d->wide[i].members) & (cap - 1);
      while (t[h].members) h = (h + 1) & (cap - 1);
      t[h] = d->wide[i];
    }
    d->wide = t;
    d->wide_cap = cap;
  }
  size_t h = (size_t)rsc__hash_final((uintptr_t)members) & (d->wide_cap - 1);
  for (; d->wide[h].members; h = (h + 1) & (d->wide_cap - 1))
    if (d->wide[h].members == members) return &d->wide[h];
  uint32_t cap = 64;
  while (cap < 2 * obj->len) cap *= 2;
  uint32_t *pos = (uint32_t *)rsc__arena_alloc(&d->arena, cap * sizeof *pos);
  if (!pos) return NULL;
  memset(pos, 0xff, cap * sizeof *pos);
  for (uint32_t i = 0; i < obj->len; i++) {
    uint32_t klen = rsc__member_klen(&members[i]);
    size_t k = (size_t)rsc__key_hash(d->hash_seed, members[i].key, klen) & (cap - 1);
    while (pos[k] != UINT32_MAX) k = (k + 1) & (cap - 1);
    pos[k] = i;
  }
  wide_index *w = &d->wide[h];
  w->members = members;
  w->pos = pos;
  w->cap = cap;
  d->wide_count++;
  return w;
}

/* The present member of obj named key, by a scan; NULL: none. */
static inline const rsc_node *scan_members(const rsc_node *obj, rsc_key key) {
  const rsc_member *m = obj->u.members, *end = m + obj->len;
  for (; m < end; m++)
    if (rsc__member_klen(m) == key.n && m->val.kind != RSC_UNDEFINED &&
        rsc__same_bytes(m->key, key.s, key.n))
      return &m->val;
  return NULL;
}

/* A step into an object of more than WIDE_OBJECT members: by its key index,
 * or by a scan without memory for one. Out of line: the common step into a
 * small object or an array stays a leaf with few registers to save. */
static __attribute__((noinline)) const rsc_node *step_wide(rsc_decoder *d, const rsc_node *value,
                                                          rsc_key key) {
  const wide_index *w = wide_lookup(d, value);
  if (w) {
    size_t k = (size_t)rsc__key_hash(d->hash_seed, key.s, key.n) & (w->cap - 1);
    for (; w->pos[k] != UINT32_MAX; k = (k + 1) & (w->cap - 1)) {
      const rsc_member *m = &value->u.members[w->pos[k]];
      if (rsc__member_klen(m) == key.n && rsc__same_bytes(m->key, key.s, key.n))
        return m->val.kind == RSC_UNDEFINED ? NULL : &m->val;
    }
    return NULL;
  }
  return scan_members(value, key);
}

const rsc_node *rsc__step_at(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *tmp) {
  switch (value->kind) {
  case RSC_OBJECT: {
    /* Own members only: nothing is inherited, so "constructor" and the
     * like exist only as own data. "__proto__" never does: the walk
     * deletes it before anything can step in (React's traversal guards
     * after CVE-2025-55182); refuse it here as well. */
    if (key.n == 9 && rsc__same_bytes(key.s, "__proto__", 9)) return NULL;
    if (value->len > WIDE_OBJECT) return step_wide(d, value, key);
    return scan_members(value, key);
  }
  case RSC_ARRAY: {
    uint32_t idx;
    if (canonical_index(key, &idx)) {
      if (idx >= value->len) return NULL;
      if (value->sub != ARR_NO_MARKER) return &value->u.items[idx];
      return idx ? &value->u.items[idx - 1] : &d->marker; /* only inside the walk */
    }
    if (key.n == 6 && rsc__same_bytes(key.s, "length", 6)) {
      *tmp = rsc__num((double)value->len);
      return tmp;
    }
    return NULL;
  }
  case RSC_ELEMENT: {
    /* An element is a plain object on the client: its own properties. */
    rsc_element *el = value->u.el;
    switch (key.n) {
    case 5:
      return rsc__same_bytes(key.s, "props", 5) ? &el->props : NULL;
    case 4:
      return rsc__same_bytes(key.s, "type", 4) ? &el->type : NULL;
    case 3:
      if (rsc__same_bytes(key.s, "key", 3)) return &el->key;
      if (!rsc__same_bytes(key.s, "ref", 3)) return NULL;
      *tmp = rsc__mk(RSC_NULL);
      return tmp;
    case 8:
      if (!rsc__same_bytes(key.s, "$$typeof", 8)) return NULL;
      *tmp = d->marker;
      return tmp;
    case 6:
      return (value->sub & EL_HAS_OWNER) && rsc__same_bytes(key.s, "_owner", 6) ? &el->owner
                                                                                 : NULL;
    default:
      return NULL;
    }
  }
  default:
    return NULL;
  }
}

bool rsc__step(rsc_decoder *d, const rsc_node *value, rsc_key key, rsc_node *out) {
  rsc_node tmp;
  const rsc_node *at = rsc__step_at(d, value, key, &tmp);
  if (!at) return false;
  *out = *at;
  return true;
}

/* ---- the path memo (revive.h) ------------------------------------------------ */

/* Bytes from the first key of path to the end of its key n-1. */
static size_t prefix_text_len(const rsc_key *path, uint32_t n) {
  return (size_t)(path[n - 1].s + path[n - 1].n - path[0].s);
}

uint32_t rsc__memo_resume(rsc_decoder *d, const rsc_node *root, const rsc_path *path,
                          const rsc_scope *h, rsc_node *value, bool *hopped) {
  const struct path_memo *m = &d->memo;
  uint32_t depth = m->depth;
  if (!depth || path->n <= depth || memcmp(root, &m->root, sizeof *root) != 0) return 0;
  /* The same text over the same span is the same keys: both split at ':'.
   * (The prefix is keys 0 .. depth-1, all in path->head.) */
  const rsc_key *head = path->head;
  size_t len = prefix_text_len(head, depth);
  if (len != m->text_len || (head[0].s != m->text && memcmp(head[0].s, m->text, len) != 0))
    return 0;
  for (uint32_t i = 0; i < depth; i++) {
    if (memcmp(m->slot[i], &m->seen[i], sizeof m->seen[i]) != 0) return 0;
    if (m->seen[i].kind != RSC_LAZY) continue;
    const rsc_chunk *rc = m->seen[i].u.chunk;
    const rsc_node *to;
    if (h && rc == h->chunk) to = &h->value;
    else if (rc->state == CS_FULFILLED) to = &rc->value;
    else return 0;
    if (memcmp(to, &m->value[i], sizeof *to) != 0) return 0;
  }
  memcpy(value, &m->value[depth - 1], sizeof *value);
  if (m->hopped && hopped) *hopped = true;
  return depth;
}

void rsc__memo_record(rsc_decoder *d, const rsc_node *root, const rsc_path *path, bool hopped) {
  struct path_memo *m = &d->memo;
  const struct path_notes *w = &d->notes;
  uint32_t n = path->n, depth = n - 1;
  if (n < 2 || depth > RSC_MEMO_DEPTH) return;
  memcpy(&m->root, root, sizeof *root);
  m->text = path->head[0].s;
  m->text_len = prefix_text_len(path->head, depth);
  memcpy(m->slot, w->slot, depth * sizeof *m->slot);
  memcpy(m->seen, w->seen, depth * sizeof *m->seen);
  memcpy(m->value, w->led, depth * sizeof *m->value);
  m->hopped = hopped;
  m->depth = depth;
}

/* A STRING's text as a C string: errors keep their message, name and env
 * NUL-terminated, and a T row borrowed from the caller's buffer
 * (RSC_OPT_BORROW_INPUT) is not; it is copied. NULL: out of memory. */
static const char *c_string(rsc_decoder *d, const rsc_node *s) {
  if (!(s->flags & NF_BORROWED)) return s->u.str;
  return rsc__strdup(d, s->u.str, s->len);
}

/* ---- collections (React's map functions) ---------------------------------- */

static uintptr_t identity(const rsc_node *n) {
  switch (n->kind) {
  case RSC_ARRAY: case RSC_MAP: case RSC_SET: case RSC_FORMDATA:
    return (uintptr_t)n->u.items;
  case RSC_OBJECT: return (uintptr_t)n->u.members;
  case RSC_DATE: /* every "$D" is a new Date object */
  case RSC_ELEMENT: case RSC_LAZY: case RSC_CLIENT_REF: case RSC_SERVER_REF:
  case RSC_ERROR: case RSC_BLOB: case RSC_ITERATOR: case RSC_BINARY: case RSC_STREAM:
  case RSC_PROMISE: case RSC_FUNCTION:
    return (uintptr_t)n->u.str;
  default:
    return 0;
  }
}

/* SameValueZero, as Map and Set compare keys. */
static bool same_value_zero(const rsc_node *a, const rsc_node *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case RSC_NULL: case RSC_UNDEFINED: return true;
  case RSC_BOOL: return a->u.boolean == b->u.boolean;
  case RSC_NUMBER: return a->u.num == b->u.num || (isnan(a->u.num) && isnan(b->u.num));
  case RSC_STRING: case RSC_BIGINT: case RSC_SYMBOL:
    return a->len == b->len && memcmp(a->u.str, b->u.str, a->len) == 0;
  case RSC_LAZY: /* a lazy object per "$L" string (lazy_serial) */
    return a->u.chunk == b->u.chunk && a->len == b->len;
  default: return identity(a) == identity(b);
  }
}

static uint64_t value_hash(uint64_t seed, const rsc_node *n) {
  uint64_t h = (1469598103934665603ull ^ seed) ^ n->kind;
  switch (n->kind) {
  case RSC_NUMBER: {
    double v = n->u.num == 0 ? 0 : n->u.num;
    if (isnan(v)) return rsc__hash_final(h);
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return rsc__hash_final((h ^ bits) * 1099511628211ull);
  }
  case RSC_BOOL: return rsc__hash_final(h ^ (uint64_t)n->u.boolean);
  case RSC_STRING: case RSC_BIGINT: case RSC_SYMBOL:
    for (uint32_t i = 0; i < n->len; i++) h = (h ^ (uint8_t)n->u.str[i]) * 1099511628211ull;
    return rsc__hash_final(h);
  default: return rsc__hash_final(h ^ (uint64_t)identity(n) * 0x9E3779B97F4A7C15ull);
  }
}

/* Appends keys[i] (stride 1 for Set, 2 for Map) unless an equal key exists;
 * an equal key keeps its position and takes the new value (Map.set). */
static uint32_t dedupe(rsc_decoder *d, rsc_node *items, uint32_t count, uint32_t stride) {
  uint32_t n = 0;
  size_t cap = 16;
  while (cap < (size_t)count * 2) cap *= 2;
  uint32_t *tab = count > 16 ? (uint32_t *)rsc__alloc(d, cap * sizeof(uint32_t)) : NULL;
  if (tab) memset(tab, 0xff, cap * sizeof(uint32_t));
  for (uint32_t i = 0; i < count; i++) {
    rsc_node *k = &items[i * stride];
    uint32_t found = UINT32_MAX;
    if (tab) {
      size_t h = (size_t)value_hash(d->hash_seed, k) & (cap - 1);
      while (tab[h] != UINT32_MAX) {
        if (same_value_zero(&items[tab[h] * stride], k)) {
          found = tab[h];
          break;
        }
        h = (h + 1) & (cap - 1);
      }
      if (found == UINT32_MAX) tab[h] = n;
    } else {
      for (uint32_t j = 0; j < n; j++)
        if (same_value_zero(&items[j * stride], k)) {
          found = j;
          break;
        }
    }
    if (found != UINT32_MAX) {
      if (stride == 2) items[found * 2 + 1] = items[i * 2 + 1];
      continue;
    }
    if (n != i) memcpy(&items[n * stride], &items[i * stride], stride * sizeof *items);
    /* Map.prototype.set and Set.prototype.add store a -0 key as +0 */
    if (items[n * stride].kind == RSC_NUMBER && items[n * stride].u.num == 0)
      items[n * stride].u.num = 0.0;
    n++;
  }
  return n;
}

/* Throws the text built in sb (ok: it was built) as a TypeError, NULs and
 * all, and frees sb. Always false: *thrown is set, or the decoder failed. */
static bool throw_text(rsc_decoder *d, rsc_strbuf *sb, bool ok, rsc_node *thrown) {
  char *m = ok ? rsc__strdup(d, sb->p, sb->len) : NULL;
  size_t n = sb->len;
  rsc__strbuf_free(d, sb);
  if (!m) {
    if (ok) rsc__alloc_fail(d);
    return false;
  }
  *thrown = rsc__type_error(d, m);
  if (thrown->kind == RSC_ERROR) thrown->u.err->message_len = n;
  return false;
}

/* Node's ERR_INVALID_ARG_TYPE for a string given as a Blob's sources: the
 * text cut to 25 UTF-16 units and "..." when longer than 28 (a cut pair
 * leaves its high half), then quoted: '...', or as JSON.stringify writes
 * it when the text holds a "'". */
static bool blob_sources_string(rsc_decoder *d, const char *s, size_t n, rsc_node *thrown) {
  rsc_strbuf t = {NULL, 0, 0}, q = {NULL, 0, 0};
  bool ok = true;
  if (rsc__utf16_units((const uint8_t *)s, n) > 28) {
    size_t u = 0, i = 0;
    while (ok && i < n && u < 25) {
      size_t k = rsc__utf8_char_len((const uint8_t *)s, n, i);
      if (k == 4 && u == 24) {
        uint8_t w[3];
        rsc__wtf8_half((const uint8_t *)s + i, true, w);
        ok = rsc__strbuf_put(d, &t, (const char *)w, 3);
        break;
      }
      ok = rsc__strbuf_put(d, &t, s + i, k);
      u += k == 4 ? 2 : 1;
      i += k;
    }
    ok = ok && rsc__strbuf_put(d, &t, "...", 3);
  } else {
    ok = rsc__strbuf_put(d, &t, s, n);
  }
  static const char head[] = "The \"sources\" argument must be a sequence. Received type string (";
  ok = ok && rsc__strbuf_put(d, &q, head, sizeof head - 1);
  if (ok && !(t.len && memchr(t.p, '\'', t.len))) {
    ok = rsc__strbuf_put(d, &q, "'", 1) && rsc__strbuf_put(d, &q, t.p, t.len) &&
         rsc__strbuf_put(d, &q, "'", 1);
  } else if (ok) {
    ok = rsc__strbuf_put(d, &q, "\"", 1);
    for (size_t i = 0; ok && i < t.len; i++) {
      uint8_t c = (uint8_t)t.p[i];
      char esc[8];
      if (c == '"' || c == '\\') {
        esc[0] = '\\';
        esc[1] = (char)c;
        ok = rsc__strbuf_put(d, &q, esc, 2);
      } else if (c < 0x20) {
        static const char short_esc[] = "btn\0fr";
        if (c >= 8 && c <= 13 && c != 11) {
          esc[0] = '\\';
          esc[1] = short_esc[c - 8];
          ok = rsc__strbuf_put(d, &q, esc, 2);
        } else {
          ok = rsc__strbuf_put(d, &q, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
        }
      } else if (c == 0xED && i + 2 < t.len && (uint8_t)t.p[i + 1] >= 0xA0) { /* lone surrogate */
        uint32_t u = 0xD000 | (((uint32_t)t.p[i + 1] & 0x3F) << 6) | ((uint32_t)t.p[i + 2] & 0x3F);
        ok = rsc__strbuf_put(d, &q, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", u));
        i += 2;
      } else {
        ok = rsc__strbuf_put(d, &q, (const char *)&t.p[i], 1);
      }
    }
    ok = ok && rsc__strbuf_put(d, &q, "\"", 1);
  }
  ok = ok && rsc__strbuf_put(d, &q, ")", 1);
  rsc__strbuf_free(d, &t);
  return throw_text(d, &q, ok, thrown);
}

static bool is_nullish(const rsc_node *v) {
  return v->kind == RSC_NULL || v->kind == RSC_UNDEFINED || v->kind == RSC_NONE;
}

/* The TypeError JavaScript throws reading a property of null or undefined
 * (v is one of them): "Cannot read properties of null (reading 'id')".
 * Always false: the error is thrown, or the decoder failed. */
static bool read_of_nullish(rsc_decoder *d, const rsc_node *v, const char *prop,
                            rsc_node *thrown) {
  char buf[96];
  int n = snprintf(buf, sizeof buf, "Cannot read properties of %s (reading '%s')",
                   v->kind == RSC_NULL ? "null" : "undefined", prop);
  char *m = rsc__strdup(d, buf, (size_t)n);
  if (m) *thrown = rsc__type_error(d, m);
  return false;
}

/* new Blob(model.slice(1), {type: model[0]}) as Node 20 runs it: each part
 * a Blob's or a buffer's bytes, or String(part) as a USVString
 * (jsstring.h); the type String(model[0]) lowercased, "" when undefined or
 * when it holds a character outside U+0020-007E. A part or type that
 * cannot become a string throws, and so do models that are not arrays, as
 * JavaScript would on model.slice. */
static bool make_blob(rsc_decoder *d, rsc_node model, rsc_node *out, rsc_node *thrown) {
  const rsc_node *items = model.u.items;
  uint32_t count = model.len;
  rsc_node *elements = NULL;
  switch (model.kind) {
  case RSC_ARRAY: break;
  case RSC_NULL: case RSC_NONE: case RSC_UNDEFINED:
    return read_of_nullish(d, &model, "slice", thrown);
  case RSC_STRING: {
    /* String.prototype.slice(1) works; a string is no sequence of parts */
    size_t skip = model.len ? rsc__utf8_char_len((const uint8_t *)model.u.str, model.len, 0) : 0;
    if (skip == 4) { /* slice(1) cuts a pair: its low half stays */
      char *t = (char *)rsc__alloc(d, model.len - 1);
      if (!t) return false;
      rsc__wtf8_half((const uint8_t *)model.u.str, false, (uint8_t *)t);
      memcpy(t + 3, model.u.str + 4, model.len - 4);
      return blob_sources_string(d, t, model.len - 1, thrown);
    }
    return blob_sources_string(d, model.u.str + skip, model.len - skip, thrown);
  }
  case RSC_BLOB:
    *thrown = rsc__type_error(d, "The \"sources\" argument must be a sequence. Received an instance of Blob");
    return false;
  case RSC_BINARY:
    if (model.sub == RSC_ARRAY_BUFFER) {
      *thrown = rsc__type_error(d, "The \"sources\" argument must be a sequence. Received an instance of "
                              "ArrayBuffer");
      return false;
    }
    if (model.sub != RSC_DATA_VIEW) {
      /* A typed array's slice is a typed array: its numbers are the parts
       * (and the first the type). */
      size_t w = rsc__binary_elem_size(model.sub);
      count = (uint32_t)(model.len / w);
      elements = rsc__alloc_nodes(d, (size_t)count + 1);
      if (!elements) return false;
      for (uint32_t i = 0; i < count; i++) {
        elements[i] = model;
        elements[i].u.bytes = model.u.bytes + (size_t)i * w;
        elements[i].len = (uint32_t)w; /* a one-element array: its String is the number */
      }
      items = elements;
      break;
    }
    *thrown = rsc__type_error(d, "model.slice is not a function"); /* a DataView has no slice */
    return false;
  default:
    *thrown = rsc__type_error(d, "model.slice is not a function");
    return false;
  }
  rsc_strbuf sb = {NULL, 0, 0};
  bool ok = true;
  for (uint32_t i = 1; ok && i < count; i++) {
    const rsc_node *p = &items[i];
    if (p->kind == RSC_BINARY && !elements)
      ok = rsc__strbuf_put(d, &sb, (const char *)p->u.bytes, p->len);
    else if (p->kind == RSC_BLOB)
      ok = rsc__strbuf_put(d, &sb, (const char *)p->u.blob->bytes, p->u.blob->len);
    else {
      size_t from = sb.len;
      ok = rsc__js_string(d, p, &sb, thrown);
      if (ok && sb.len > from) rsc__usv_in_place(sb.p + from, sb.len - from);
    }
  }
  rsc_node type = rsc__str(RSC_STRING, "", 0);
  if (ok && count > 0 && items[0].kind != RSC_UNDEFINED && items[0].kind != RSC_NONE)
    ok = rsc__js_string_node(d, &items[0], false, &type, thrown);
  if (!ok) {
    rsc__strbuf_free(d, &sb);
    return false;
  }
  rsc_blob *b = (rsc_blob *)rsc__alloc(d, sizeof *b);
  /* Counted against the node limit (16 bytes a node): every "$B" copies
   * its parts, so n references to one blob row would hold n copies. */
  uint8_t *bytes = b ? (uint8_t *)rsc__alloc_nodes(d, sb.len / sizeof(rsc_node) + 1) : NULL;
  if (!bytes) {
    rsc__strbuf_free(d, &sb);
    return false;
  }
  memset(b, 0, sizeof *b);
  if (sb.len) memcpy(bytes, sb.p, sb.len);
  b->bytes = bytes;
  b->len = sb.len;
  rsc__strbuf_free(d, &sb);
  /* The type: lowercased, or "" when it has a character outside U+0020-7E. */
  b->type = "";
  char *lt = rsc__strdup(d, type.u.str, type.len);
  if (!lt) return false;
  bool printable = true;
  for (uint32_t i = 0; i < type.len; i++) {
    uint8_t c = (uint8_t)lt[i];
    if (c < 0x20 || c > 0x7E) printable = false;
    else if (c >= 'A' && c <= 'Z') lt[i] = (char)(c + 32);
  }
  if (printable) {
    b->type = lt;
    b->type_len = type.len;
  }
  *out = rsc__mk(RSC_BLOB);
  out->u.blob = b;
  return true;
}

static const rsc_node *member(const rsc_node *obj, const char *name) {
  return rsc_object_get(obj, name, strlen(name));
}

static bool apply_map(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out,
                      rsc_node *thrown);

/* Every value a reference places goes through here. With
 * RSC_OPT_TRACK_SHARED it notes what now sits in a second place: the value
 * placed and, for the collections built from a model, the values they
 * copied out of it (a Map's keys and values are also the model's). */
bool rsc__apply_map(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out,
                    rsc_node *thrown) {
  if (!apply_map(d, map, model, out, thrown)) return false;
  if (!(d->opt.flags & RSC_OPT_TRACK_SHARED)) return true;
  rsc__note_shared(d, out);
  if (map == MAP_MODEL) return true;
  switch (out->kind) {
  case RSC_MAP: case RSC_SET: case RSC_FORMDATA:
    for (uint32_t i = 0; i < out->len; i++) rsc__note_shared(d, &out->u.items[i]);
    break;
  case RSC_ITERATOR: {
    const rsc_node *a = &out->u.iter->array;
    for (uint32_t i = 0; i < a->len; i++) {
      rsc__note_shared(d, &a->u.items[i]);
      if (model.kind == RSC_MAP || model.kind == RSC_FORMDATA) { /* [key, value] pairs */
        rsc__note_shared(d, &a->u.items[i].u.items[0]);
        rsc__note_shared(d, &a->u.items[i].u.items[1]);
      }
    }
    break;
  }
  case RSC_SERVER_REF:
    rsc__note_shared(d, &out->u.sref->id);
    rsc__note_shared(d, &out->u.sref->bound);
    break;
  case RSC_ERROR:
    rsc__note_shared(d, &out->u.err->cause);
    break;
  default:
    break;
  }
  return true;
}

/* ---- collections of what is not an array ------------------------------------ */

static bool is_primitive(uint8_t kind) {
  switch (kind) {
  case RSC_NULL: case RSC_UNDEFINED: case RSC_NONE: case RSC_BOOL: case RSC_NUMBER:
  case RSC_STRING: case RSC_BIGINT: case RSC_SYMBOL:
    return true;
  default:
    return false;
  }
}

/* A TypeError whose message is head + String(v) + tail (String: a
 * Symbol prints as Symbol(key)). false: *thrown set, or the decoder failed. */
static bool error_with_value(rsc_decoder *d, const char *head, const rsc_node *v, const char *tail,
                             rsc_node *thrown) {
  rsc_strbuf sb = {NULL, 0, 0};
  rsc_node ignored;
  bool ok = rsc__strbuf_put(d, &sb, head, strlen(head));
  if (ok && v && v->kind == RSC_SYMBOL)
    ok = rsc__strbuf_put(d, &sb, "Symbol(", 7) && rsc__strbuf_put(d, &sb, v->u.str, v->len) &&
         rsc__strbuf_put(d, &sb, ")", 1);
  else if (ok && v)
    ok = rsc__js_string(d, v, &sb, &ignored);
  ok = ok && rsc__strbuf_put(d, &sb, tail, strlen(tail));
  return throw_text(d, &sb, ok, thrown);
}

/* s[index] of a string: the UTF-16 unit there as a string (half of a pair
 * as its lone surrogate), undefined past the end. */
static bool string_unit(rsc_decoder *d, const rsc_node *s, size_t index, rsc_node *out) {
  const uint8_t *p = (const uint8_t *)s->u.str;
  size_t u = 0;
  for (size_t i = 0; i < s->len;) {
    size_t k = rsc__utf8_char_len(p, s->len, i);
    if (k == 4 && (u == index || u + 1 == index)) {
      uint8_t w[3];
      rsc__wtf8_half(p + i, u == index, w);
      char *c = rsc__strdup(d, (const char *)w, 3);
      if (!c) return false;
      *out = rsc__str(RSC_STRING, c, 3);
      return true;
    }
    if (u == index) {
      char *c = rsc__strdup(d, (const char *)p + i, k);
      if (!c) return false;
      *out = rsc__str(RSC_STRING, c, k);
      return true;
    }
    u += k == 4 ? 2 : 1;
    i += k;
  }
  *out = rsc__mk(RSC_UNDEFINED);
  return true;
}

/* new Map([..., e, ...]) with e no object. */
static bool not_an_entry(rsc_decoder *d, const rsc_node *e, rsc_node *thrown) {
  return error_with_value(d, "Iterator value ", e, " is not an entry object", thrown);
}

/* React's createFormData reads model[i][0] and model[i][1]: a null or
 * undefined entry throws, any other value reads its members (a
 * primitive has none here: undefined, both). */
static bool form_data_entry(rsc_decoder *d, const rsc_node *e, rsc_node *thrown) {
  return is_nullish(e) ? read_of_nullish(d, e, "0", thrown) : true;
}

/* A string's code points, each a string (a lone surrogate one of its own),
 * as an array: what iterating a string yields. */
static bool code_points(rsc_decoder *d, const rsc_node *str, rsc_node *out) {
  const uint8_t *p = (const uint8_t *)str->u.str;
  rsc_node *items = rsc__alloc_nodes(d, (size_t)str->len + 1);
  if (!items) return false;
  uint32_t n = 0;
  for (size_t i = 0; i < str->len;) {
    size_t k = rsc__utf8_char_len(p, str->len, i);
    char *c = rsc__strdup(d, (const char *)p + i, k);
    if (!c) return false;
    items[n++] = rsc__str(RSC_STRING, c, k);
    i += k;
  }
  *out = rsc__mk(RSC_ARRAY);
  out->u.items = items;
  out->len = n;
  return true;
}

/* new Map(model), new Set(model), createFormData for a model that is no
 * array, as JavaScript runs them: null and undefined give empty Maps and
 * Sets (FormData reads model.length and throws); a string is iterated by
 * code points (a Set of them; a Map throws on its first, no entry
 * object); other primitives and objects are not iterable (V8's message
 * names the value's type), and FormData, reading .length, gets none. */
static bool collection_of_other(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out,
                                rsc_node *thrown) {
  uint8_t kind = map == MAP_MAP ? RSC_MAP : map == MAP_SET ? RSC_SET : RSC_FORMDATA;
  bool nullish = is_nullish(&model);
  if (map == MAP_FORMDATA && nullish) return read_of_nullish(d, &model, "length", thrown);
  if (model.kind == RSC_STRING && model.len > 0 && map != MAP_FORMDATA) {
    const uint8_t *s = (const uint8_t *)model.u.str;
    size_t first = rsc__utf8_char_len(s, model.len, 0);
    if (map == MAP_MAP) {
      char *c = rsc__strdup(d, (const char *)s, first);
      if (!c) return false;
      rsc_node cn = rsc__str(RSC_STRING, c, first);
      return not_an_entry(d, &cn, thrown);
    }
    rsc_node points;
    if (!code_points(d, &model, &points)) return false;
    *out = rsc__mk(RSC_SET);
    out->u.items = points.u.items;
    out->len = dedupe(d, points.u.items, points.len, 1);
    return true;
  }
  if (nullish || map == MAP_FORMDATA || model.kind == RSC_STRING) {
    /* empty (a FormData of anything else but a string: a .length that is
     * undefined, or the string's, whose units give no entries here) */
    if (map == MAP_FORMDATA && model.kind == RSC_STRING && model.len > 0) {
      /* model[i][0] is the unit itself, model[i][1] undefined */
      size_t units = rsc__utf16_units((const uint8_t *)model.u.str, model.len);
      rsc_node *items = rsc__alloc_nodes(d, 2 * units + 1);
      if (!items) return false;
      const uint8_t *s = (const uint8_t *)model.u.str;
      size_t u = 0;
      for (size_t i = 0; i < model.len;) {
        size_t k = rsc__utf8_char_len(s, model.len, i);
        char *c;
        if (k == 4) { /* two units: each a lone surrogate, U+FFFD as a USVString */
          c = rsc__strdup(d, "\xEF\xBF\xBD", 3);
          if (!c) return false;
          items[2 * u] = items[2 * u + 2] = rsc__str(RSC_STRING, c, 3);
          items[2 * u + 1] = items[2 * u + 3] = rsc__str(RSC_STRING, "undefined", 9);
          u += 2;
        } else {
          c = rsc__strdup(d, (const char *)s + i, k);
          if (!c) return false;
          rsc__usv_in_place(c, k);
          items[2 * u] = rsc__str(RSC_STRING, c, k);
          items[2 * u + 1] = rsc__str(RSC_STRING, "undefined", 9);
          u++;
        }
        i += k;
      }
      *out = rsc__mk(RSC_FORMDATA);
      out->u.items = items;
      out->len = (uint32_t)(2 * u);
      return true;
    }
    rsc_node *items = rsc__alloc_nodes(d, 1);
    if (!items) return false;
    *out = rsc__mk(kind);
    out->u.items = items;
    out->len = 0;
    return true;
  }
  const char *what;
  switch (model.kind) {
  case RSC_NUMBER: return error_with_value(d, "number ", &model, " is not iterable (cannot read "
                                           "property Symbol(Symbol.iterator))", thrown);
  case RSC_BOOL: return error_with_value(d, "boolean ", &model, " is not iterable (cannot read "
                                         "property Symbol(Symbol.iterator))", thrown);
  case RSC_BIGINT: what = "bigint"; break;
  case RSC_SYMBOL: what = "symbol"; break;
  case RSC_SERVER_REF: what = "function"; break;
  default: what = "object"; break;
  }
  return error_with_value(d, what, NULL, " is not iterable (cannot read property "
                          "Symbol(Symbol.iterator))", thrown);
}

/* typedArray[i]: a number, a BigInt for the 64-bit kinds, undefined past
 * the end (an ArrayBuffer or a DataView has no elements: undefined). */
static bool binary_element(rsc_decoder *d, const rsc_node *ta, size_t i, rsc_node *out) {
  unsigned kind = ta->sub;
  *out = rsc__mk(RSC_UNDEFINED);
  if (kind == RSC_ARRAY_BUFFER || kind >= RSC_DATA_VIEW) return true;
  if (i >= ta->len / rsc__binary_elem_size(kind)) return true;
  double num;
  char big[24];
  int len = rsc__binary_elem_read(kind, ta->u.bytes, i, &num, big);
  if (!len) {
    *out = rsc__num(num);
    return true;
  }
  char *c = rsc__strdup(d, big, (size_t)len);
  if (!c) return false;
  *out = rsc__str(RSC_BIGINT, c, (size_t)len);
  return true;
}

/* What model[Symbol.iterator]() yields for a model that is no array, as an
 * array of its items (a snapshot): a string's code points, a Map's and a
 * FormData's [key, value] entries, a Set's values, a typed array's
 * elements (BigInts for the 64-bit ones). Anything else has no
 * Symbol.iterator: the TypeError JavaScript throws. */
static bool iterated_items(rsc_decoder *d, const rsc_node *model, rsc_node *out,
                           rsc_node *thrown) {
  size_t n = 0;
  rsc_node *items = NULL;
  switch (model->kind) {
  case RSC_STRING:
    return code_points(d, model, out);
  case RSC_SET:
    n = model->len;
    items = rsc__alloc_nodes(d, n + 1);
    if (!items) return false;
    if (n) memcpy(items, model->u.items, n * sizeof *items);
    break;
  case RSC_MAP:
  case RSC_FORMDATA:
    n = model->len / 2;
    items = rsc__alloc_nodes(d, 3 * n + 1);
    if (!items) return false;
    for (size_t i = 0; i < n; i++) {
      rsc_node *pair = items + n + 2 * i;
      pair[0] = model->u.items[2 * i];
      pair[1] = model->u.items[2 * i + 1];
      items[i] = rsc__mk(RSC_ARRAY);
      items[i].u.items = pair;
      items[i].len = 2;
    }
    break;
  case RSC_BINARY: {
    unsigned kind = model->sub;
    if (kind == RSC_ARRAY_BUFFER || kind >= RSC_DATA_VIEW) goto not_iterable;
    n = model->len / rsc__binary_elem_size(kind);
    items = rsc__alloc_nodes(d, n + 1);
    if (!items) return false;
    for (size_t i = 0; i < n; i++)
      if (!binary_element(d, model, i, &items[i])) return false;
    break;
  }
  default:
  not_iterable:
    *thrown = rsc__type_error(d, "model[Symbol.iterator] is not a function");
    return false;
  }
  *out = rsc__mk(RSC_ARRAY);
  out->u.items = items;
  out->len = (uint32_t)n;
  return true;
}

static bool apply_map(rsc_decoder *d, uint8_t map, rsc_node model, rsc_node *out,
                      rsc_node *thrown) {
  switch (map) {
  case MAP_MODEL:
    *out = model;
    return true;
  case MAP_MAP:
  case MAP_SET:
  case MAP_FORMDATA: {
    if (model.kind != RSC_ARRAY) return collection_of_other(d, map, model, out, thrown);
    uint32_t stride = map == MAP_SET ? 1 : 2;
    /* A snapshot, as new Map(model) takes one: later fills of the outlined
     * array do not reach it (docs/spec/FLIGHT-PROTOCOL.md 6.4). */
    rsc_node *items = rsc__alloc_nodes(d, (size_t)model.len * stride + 1);
    if (!items) return false;
    for (uint32_t i = 0; i < model.len; i++) {
      const rsc_node *e = &model.u.items[i];
      if (stride == 1) {
        items[i] = *e;
        continue;
      }
      if (map == MAP_MAP && is_primitive(e->kind)) {
        /* new Map takes objects as entries, any object (e[0], e[1]) */
        not_an_entry(d, e, thrown);
        return false;
      }
      if (map == MAP_FORMDATA && !form_data_entry(d, e, thrown)) return false;
      rsc_node k = rsc__mk(RSC_UNDEFINED), v = rsc__mk(RSC_UNDEFINED), tmp;
      if (e->kind == RSC_STRING) { /* a string's [0] and [1]: its first two units */
        if (!string_unit(d, e, 0, &k) || !string_unit(d, e, 1, &v)) return false;
      } else if (e->kind == RSC_BINARY) { /* a typed array's first two elements */
        if (!binary_element(d, e, 0, &k) || !binary_element(d, e, 1, &v)) return false;
      } else {
        if (rsc__step(d, e, (rsc_key){"0", 1}, &tmp)) k = tmp;
        if (rsc__step(d, e, (rsc_key){"1", 1}, &tmp)) v = tmp;
      }
      if (map == MAP_FORMDATA) {
        /* FormData.append(name, value): USVStrings, unless value is a Blob */
        if (!rsc__js_string_node(d, &k, true, &k, thrown)) return false;
        if (v.kind != RSC_BLOB && !rsc__js_string_node(d, &v, true, &v, thrown)) return false;
      }
      items[2 * i] = k;
      items[2 * i + 1] = v;
    }
    uint32_t n = map == MAP_FORMDATA ? model.len : dedupe(d, items, model.len, stride);
    *out = rsc__mk(map == MAP_MAP ? RSC_MAP : map == MAP_SET ? RSC_SET : RSC_FORMDATA);
    out->u.items = items;
    out->len = n * stride;
    return true;
  }
  case MAP_BLOB:
    return make_blob(d, model, out, thrown);
  case MAP_ITERATOR: {
    /* model[Symbol.iterator]() */
    if (model.kind == RSC_NULL) {
      *thrown = rsc__type_error(d, "object null is not iterable (cannot read property "
                              "Symbol(Symbol.iterator))");
      return false;
    }
    if (model.kind == RSC_UNDEFINED || model.kind == RSC_NONE) {
      *thrown = rsc__type_error(d, "undefined is not iterable (cannot read property "
                              "Symbol(Symbol.iterator))");
      return false;
    }
    if (model.kind == RSC_ITERATOR) { /* an iterator's own iterator is itself */
      *out = model;
      return true;
    }
    rsc_node array = model;
    if (model.kind != RSC_ARRAY && !iterated_items(d, &model, &array, thrown)) return false;
    rsc_iter *it = (rsc_iter *)rsc__alloc(d, sizeof *it);
    if (!it) return false;
    it->array = array;
    *out = rsc__mk(RSC_ITERATOR);
    out->u.iter = it;
    return true;
  }
  case MAP_ERROR_DEV: {
    /* resolveErrorDev reads errorInfo.name, then asks "cause" in errorInfo */
    switch (model.kind) {
    case RSC_NULL: case RSC_UNDEFINED: case RSC_NONE:
      return read_of_nullish(d, &model, "name", thrown);
    case RSC_STRING: case RSC_NUMBER: case RSC_BOOL: case RSC_BIGINT: case RSC_SYMBOL:
      return error_with_value(d, "Cannot use 'in' operator to search for 'cause' in ", &model, "",
                              thrown);
    default:
      break;
    }
    rsc_node e = rsc__error_node(d, rsc__dev_default_error, NULL);
    if (e.kind != RSC_ERROR) return false;
    const rsc_node *msg = member(&model, "message");
    if (msg && msg->kind == RSC_STRING && msg->len > 0) {
      if (!(e.u.err->message = c_string(d, msg))) return false;
      e.u.err->message_len = msg->len;
    } else if (msg && msg->kind != RSC_STRING && msg->kind != RSC_NULL &&
             !(msg->kind == RSC_BOOL && !msg->u.boolean) &&
             !(msg->kind == RSC_NUMBER && (msg->u.num == 0 || isnan(msg->u.num)))) {
      rsc_node text;
      if (!rsc__js_string_node(d, msg, false, &text, thrown)) return false;
      e.u.err->message = text.u.str;
      e.u.err->message_len = text.len;
    }
    const rsc_node *name = member(&model, "name");
    if (name && name->kind == RSC_STRING && !(e.u.err->name = c_string(d, name))) return false;
    const rsc_node *env = member(&model, "env");
    if (env && env->kind == RSC_STRING && !(e.u.err->env = c_string(d, env))) return false;
    const rsc_node *cause = member(&model, "cause");
    if (cause) e.u.err->cause = *cause;
    *out = e;
    return true;
  }
  case MAP_MODEL_THEN:
    *out = model.kind == RSC_SERVER_REF || model.kind == RSC_FUNCTION ? rsc__mk(RSC_NULL) : model;
    return true;
  case MAP_SERVER_REF_THEN:
    *out = rsc__mk(RSC_NULL);
    return true;
  case MAP_SERVER_REF: {
    /* loadServerReference reads metaData.id: a TypeError on null and
     * undefined, null for an id that is no string */
    if (is_nullish(&model)) return read_of_nullish(d, &model, "id", thrown);
    rsc_node id, bound = rsc__mk(RSC_UNDEFINED);
    if (!rsc__step(d, &model, (rsc_key){"id", 2}, &id) || id.kind != RSC_STRING) {
      *out = rsc__mk(RSC_NULL);
      return true;
    }
    rsc_server_ref *s = (rsc_server_ref *)rsc__alloc(d, sizeof *s);
    if (!s) return false;
    s->metadata = model;
    s->id = id;
    rsc_node tmp;
    if (rsc__step(d, &model, (rsc_key){"bound", 5}, &tmp)) bound = tmp;
    s->bound = bound;
    *out = rsc__mk(RSC_SERVER_REF);
    out->u.sref = s;
    return true;
  }
  case MAP_PROTO: {
    /* applyConstructor: Object.setPrototypeOf(parent, model.prototype),
     * and the key is deleted. The parent's prototype is not kept (nothing
     * here reads inherited properties); what JavaScript throws is. Module
     * exports, server actions and "$E" functions are functions, with a
     * prototype or not depending on the host: taken as fine. */
    if (is_nullish(&model)) return read_of_nullish(d, &model, "prototype", thrown);
    *out = rsc__mk(RSC_UNDEFINED);
    if (model.kind == RSC_CLIENT_REF || model.kind == RSC_SERVER_REF || model.kind == RSC_FUNCTION)
      return true;
    rsc_node proto = rsc__mk(RSC_UNDEFINED);
    const rsc_node *p = model.kind == RSC_OBJECT ? member(&model, "prototype") : NULL;
    if (p) proto = *p;
    switch (proto.kind) {
    case RSC_STRING: case RSC_NUMBER: case RSC_BOOL: case RSC_BIGINT: case RSC_SYMBOL:
    case RSC_UNDEFINED: case RSC_NONE:
      return error_with_value(d, "Object prototype may only be an Object or null: ", &proto, "",
                              thrown);
    default:
      return true;
    }
  }
  default:
    *out = rsc__mk(RSC_UNDEFINED); /* the key is deleted */
    return true;
  }
}

/* ---- getOutlinedModel ------------------------------------------------------- */

typedef struct slot_ctx {
  rsc_node *slot;
  const rsc_node *tuple; /* the parent array's slot 0 (rsc_ref.tuple), or NULL */
  int32_t key_index; /* -1 object member, -2 the row's root               */
} slot_ctx;

static void errored_scope(rsc_decoder *d, rsc_node reason) {
  rsc_scope *h = d->initializing_handler;
  if (h) {
    h->errored = true;
    h->value = rsc__mk(RSC_NULL);
    h->reason = reason;
    return;
  }
  h = (rsc_scope *)rsc__alloc(d, sizeof *h);
  if (!h) return;
  memset(h, 0, sizeof *h);
  h->value = rsc__mk(RSC_NULL);
  h->reason = reason;
  h->errored = true;
  d->initializing_handler = h;
}

/* The ':' of eight bytes (a little-endian word) as the high bits of their
 * bytes: a byte of w XOR ':' is zero exactly there, and this zero-byte test
 * has no borrow from one byte into the next. */
static inline uint64_t colon_bits(const char *s) {
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t w;
  memcpy(&w, s, 8);
  uint64_t x = w ^ 0x3a3a3a3a3a3a3a3aull;
  return ~(((x & low7) + low7) | x | low7);
}

/* Finds the ':' of s[0, len): the first cap offsets go to pos; returns how
 * many there are. Reference paths are read for every deduplicated object
 * ("$0:props:children:1:props:users:93"), so eight bytes at a time. */
static uint32_t find_colons(const char *s, size_t len, uint32_t *pos, uint32_t cap) {
  uint32_t n = 0;
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (len >= 8) {
    for (;; i += 8) {
      uint64_t bits;
      if (i + 8 <= len) {
        bits = colon_bits(s + i);
      } else {
        /* The last word, overlapping the one before: drop what it saw. */
        size_t seen = i - (len - 8);
        bits = colon_bits(s + len - 8) >> (8 * seen);
      }
      for (; bits; bits &= bits - 1) {
        if (n < cap) pos[n] = (uint32_t)(i + ((size_t)__builtin_ctzll(bits) >> 3));
        n++;
      }
      if (i + 8 >= len) return n;
    }
  }
#endif
  for (; i < len; i++) {
    if (s[i] != ':') continue;
    if (n < cap) pos[n] = (uint32_t)i;
    n++;
  }
  return n;
}

/* Splits "id:k1:k2" into its keys (after the id), in *path. Deduplicated
 * objects come back as runs of paths that differ in their last key only,
 * so a path that repeats the last one up to its last ':' takes its keys
 * but the last from it: the same array (rsc_path.head), whose keys point
 * into the earlier text (the same bytes, which live as long). Otherwise
 * only the rest is split. false: a limit or out of memory (recorded). */
static bool split_path(rsc_decoder *d, const char *ref, size_t len, size_t *id_len,
                       rsc_path *path) {
  struct split_cache *sc = &d->split;
  uint32_t small[16];
  uint32_t *pos = small;
  bool sharing = sc->n && len > sc->last && !d->plain_paths &&
                 memcmp(ref, sc->text, sc->last + 1) == 0;
  size_t from = sharing ? sc->last + 1 : 0;
  uint32_t found = find_colons(ref + from, len - from, pos, 16);
  memset(path, 0, sizeof *path);
  if (sharing && !found) {
    /* The common case of a run: only the last key is new. */
    *id_len = sc->id_len;
    path->head = sc->head;
    path->last_s = ref + from;
    path->last_n = (uint32_t)(len - from);
    path->n = sc->n;
    return true;
  }
  /* Keys: the shared ones and the one the scan starts in, then one after
   * each colon found (without sharing, the first colon ends the id). */
  uint32_t shared = sharing ? sc->n - 1 : 0;
  uint32_t n = sharing ? shared + 1 + found : found;
  *id_len = sharing ? sc->id_len : found ? pos[0] : len;
  if (!n) return true;
  if (n > d->opt.limits.max_path_hops) {
    rsc__fail(d, RSC_ERR_LIMIT, d->row_offset, d->row_id, "reference path too long");
    return false;
  }
  if (found > 16) {
    pos = (uint32_t *)rsc__alloc(d, found * sizeof *pos);
    if (!pos) return false;
    (void)find_colons(ref + from, len - from, pos, found);
  }
  /* All n keys, the last one included: the array is made once per run. */
  rsc_key *keys = (rsc_key *)rsc__alloc(d, n * sizeof *keys);
  if (!keys) return false;
  uint32_t k = 0;
  if (sharing) {
    memcpy(keys, sc->head, shared * sizeof *keys);
    k = shared;
    size_t end = found ? from + pos[0] : len;
    keys[k].s = ref + from;
    keys[k].n = (uint32_t)(end - from);
    k++;
  }
  for (uint32_t c = 0; c < found; c++, k++) {
    size_t start = from + pos[c] + 1, end = c + 1 < found ? from + pos[c + 1] : len;
    keys[k].s = ref + start;
    keys[k].n = (uint32_t)(end - start);
  }
  if (found) sc->last = from + pos[found - 1];
  sc->text = ref;
  sc->id_len = *id_len;
  sc->head = keys;
  sc->n = n;
  path->head = keys;
  path->last_s = keys[n - 1].s;
  path->last_n = keys[n - 1].n;
  path->n = n;
  return true;
}

static rsc_node wait_on(rsc_decoder *d, rsc_chunk *c, const slot_ctx *sc, uint8_t map,
                        const rsc_path *path, uint32_t pos) {
  rsc_ref proto;
  memset(&proto, 0, sizeof proto);
  proto.slot = sc->slot;
  proto.tuple = sc->tuple;
  proto.key_index = sc->key_index;
  proto.map = map;
  proto.path = *path;
  proto.path_pos = pos;
  return rsc__wait_for_reference(d, c, &proto);
}

static rsc_node halted_dep(rsc_decoder *d) {
  rsc__current_scope_dep(d); /* a dependency that will never resolve */
  return rsc__mk(RSC_NULL);
}

/* Whether a value a reference placed may itself hold something to read:
 * a wrapper, a stream, a collection made on the spot. */
static bool value_may_reach(const rsc_node *v) {
  switch (v->kind) {
  case RSC_NULL: case RSC_BOOL: case RSC_NUMBER: case RSC_STRING: case RSC_UNDEFINED:
  case RSC_BIGINT: case RSC_DATE: case RSC_SYMBOL: case RSC_BINARY: case RSC_ARRAY:
  case RSC_OBJECT: case RSC_ELEMENT: case RSC_CLIENT_REF:
    return false;
  default:
    return true;
  }
}

/* Whether a value revived from a reference can lead a read-through to a
 * chunk it must read: not when it is plain data of this chunk's own tree
 * (a path back into it, "$0:props:users:3", which the read-through meets
 * where it sits) or of a settled chunk that holds nothing to read (a text
 * row, a model row without wrappers). Anything else may. */
static bool ref_may_reach(const rsc_decoder *d, const rsc_chunk *c, uint8_t map, bool hopped,
                          const rsc_node *out) {
  if (map != MAP_MODEL || hopped) return true;
  if (c != d->initializing_chunk && (c->state != CS_FULFILLED || c->reaches || c->stream))
    return true;
  return value_may_reach(out);
}

static bool outlined_model(rsc_decoder *d, const char *ref, size_t len, const slot_ctx *sc,
                           uint8_t map, rsc_node *out, rsc_node *thrown, bool *hopped,
                           rsc_chunk **target);

static bool get_outlined_model(rsc_decoder *d, const char *ref, size_t len, const slot_ctx *sc,
                               uint8_t map, rsc_node *out, rsc_node *thrown) {
  bool hopped = false;
  rsc_chunk *target = NULL;
  bool ok = outlined_model(d, ref, len, sc, map, out, thrown, &hopped, &target);
  if (!ok || !target || ref_may_reach(d, target, map, hopped, out)) d->revive_reaches = true;
  return ok;
}

static bool outlined_model(rsc_decoder *d, const char *ref, size_t len, const slot_ctx *sc,
                           uint8_t map, rsc_node *out, rsc_node *thrown, bool *hopped,
                           rsc_chunk **target) {
  size_t id_len;
  rsc_path path;
  if (!split_path(d, ref, len, &id_len, &path)) return false;
  const uint32_t nkeys = path.n;
  rsc_chunk *c = rsc__get_chunk(d, rsc__parse_ref_id(ref, id_len));
  if (!c) return false;
  rsc__read_chunk(d, c);
  if (d->err.code) return false;
  *target = c;
  switch (c->state) {
  case CS_FULFILLED: {
    /* A path that shares its prefix with the last one walked from this
     * value resumes at the prefix's end (the path memo, revive.h). */
    rsc_node value = c->value;
    memo_walk memo;
    uint32_t i = rsc__memo_start(d, &memo, &c->value, &path, 0, NULL, &value, hopped);
    for (; i < nkeys; i++) {
      lazy_hops hops = {NULL, 0, 0};
      uint32_t hop_count = 0;
      while (value.kind == RSC_LAZY) {
        rsc_chunk *rc = value.u.chunk;
        if (rsc__lazy_cycle(&hops, rc)) break; /* a cycle of lazies: no object */
        *hopped = true;
        hop_count++;
        rsc__read_chunk(d, rc);
        switch (rc->state) {
        case CS_FULFILLED:
          value = rc->value;
          continue;
        case CS_BLOCKED:
        case CS_PENDING:
          *out = wait_on(d, rc, sc, map, &path, i);
          return true;
        case CS_HALTED:
          *out = halted_dep(d);
          return true;
        default:
          errored_scope(d, rc->reason);
          *out = rsc__mk(RSC_NULL);
          return true;
        }
      }
      rsc_node tmp;
      const rsc_node *at = rsc__step_at(d, &value, rsc__path_key(&path, i), &tmp);
      if (!at) {
        *thrown = rsc__error_node(d, "Invalid reference.", NULL);
        return false;
      }
      rsc__memo_note(d, &memo, i, nkeys, hop_count, &value, at, &tmp);
      value = *at;
    }
    rsc__memo_finish(d, &memo, &c->value, &path, *hopped);
    lazy_hops hops = {NULL, 0, 0};
    while (value.kind == RSC_LAZY) {
      rsc_chunk *rc = value.u.chunk;
      if (rsc__lazy_cycle(&hops, rc)) break; /* the lazy stays the value */
      *hopped = true;
      rsc__read_chunk(d, rc);
      if (rc->state != CS_FULFILLED) break;
      value = rc->value;
    }
    return rsc__apply_map(d, map, value, out, thrown);
  }
  case CS_PENDING:
  case CS_BLOCKED:
    *out = wait_on(d, c, sc, map, &path, 0);
    return true;
  case CS_HALTED:
    *out = halted_dep(d);
    return true;
  default:
    errored_scope(d, c->reason);
    *out = rsc__mk(RSC_NULL);
    return true;
  }
}

/* ---- parseModelString ------------------------------------------------------- */

static bool then_key(const char *key, uint32_t klen) {
  return klen == 4 && memcmp(key, "then", 4) == 0;
}

/* The element marker at slot 0 inside a blocking scope: the element's own
 * scope opens beneath it (create_element pops it). false: out of memory. */
static bool open_element_scope(rsc_decoder *d) {
  rsc_scope *h = (rsc_scope *)rsc__alloc(d, sizeof *h);
  if (!h) return false;
  memset(h, 0, sizeof *h);
  h->value = rsc__mk(RSC_NULL);
  h->parent = d->initializing_handler;
  d->initializing_handler = h;
  return true;
}

static bool parse_model_string(rsc_decoder *d, const slot_ctx *sc, const char *key,
                               uint32_t klen, rsc_node *out, rsc_node *thrown) {
  const rsc_node v = *sc->slot;
  const char *s = v.u.str;
  size_t n = v.len;
  if (n == 1) {
    /* The element marker; at slot 0 (key "0") it opens an element scope. */
    if (d->initializing_handler &&
        (sc->key_index == 0 || (sc->key_index == -1 && klen == 1 && key[0] == '0')) &&
        !open_element_scope(d))
      return false;
    *out = d->marker;
    return true;
  }
  const char *rest = s + 2;
  size_t rlen = n - 2;
  switch (s[1]) {
  case '$':
    *out = rsc__str(RSC_STRING, s + 1, n - 1);
    return true;
  case 'L':
  case '@': {
    rsc_chunk *c = rsc__get_chunk(d, rsc__parse_ref_id(rest, rlen));
    if (!c) return false;
    /* A wrapper of a settled chunk with nothing to read inside (a client
     * module's I row, a text row, plain data) leads a read-through nowhere. */
    if (c->state != CS_FULFILLED || c->reaches || c->stream) d->revive_reaches = true;
    if (s[1] == 'L') {
      *out = rsc__lazy(c);
      out->len = ++d->lazy_serial;
    } else {
      *out = rsc__mk(RSC_PROMISE);
      out->u.chunk = c;
    }
    return true;
  }
  case 'S':
    *out = rsc__str(RSC_SYMBOL, rest, rlen);
    return true;
  case 'h':
  case 'F': /* servers up to 19.0/19.1 wrote server references as "$F" */
    return get_outlined_model(d, rest, rlen, sc,
                              then_key(key, klen) ? MAP_SERVER_REF_THEN : MAP_SERVER_REF, out,
                              thrown);
  case 'T':
    if (!(d->opt.flags & RSC_OPT_TEMP_REFS)) {
      *thrown = rsc__error_node(d, missing_temp_refs, NULL);
      return false;
    }
    *out = rsc__str(RSC_TEMP_REF, rest, rlen);
    return true;
  case 'Q':
    return get_outlined_model(d, rest, rlen, sc, MAP_MAP, out, thrown);
  case 'W':
    return get_outlined_model(d, rest, rlen, sc, MAP_SET, out, thrown);
  case 'B':
    return get_outlined_model(d, rest, rlen, sc, MAP_BLOB, out, thrown);
  case 'K':
    return get_outlined_model(d, rest, rlen, sc, MAP_FORMDATA, out, thrown);
  case 'Z':
    if (d->dev) return get_outlined_model(d, rest, rlen, sc, MAP_ERROR_DEV, out, thrown);
    *out = rsc__error_node(d, rsc__generic_error, NULL);
    return out->kind == RSC_ERROR;
  case 'i':
    return get_outlined_model(d, rest, rlen, sc, MAP_ITERATOR, out, thrown);
  case 'I':
    *out = rsc__num(INFINITY);
    return true;
  case '-':
    *out = rsc__num(n == 3 && s[2] == '0' ? -0.0 : -INFINITY);
    return true;
  case 'N':
    *out = rsc__num(NAN);
    return true;
  case 'u':
    *out = rsc__mk(RSC_UNDEFINED);
    return true;
  case 'D':
    *out = rsc__str(RSC_DATE, rest, rlen);
    return true;
  case 'n': {
    size_t dl;
    const char *digits = parse_bigint(d, rest, rlen, &dl);
    if (!digits) {
      if (d->err.code) return false;
      size_t mlen = rlen + 40;
      char *m = (char *)rsc__alloc(d, mlen);
      if (!m) return false;
      snprintf(m, mlen, "Cannot convert %.*s to a BigInt", (int)rlen, rest);
      *thrown = rsc__error_node(d, m, NULL);
      if (thrown->kind == RSC_ERROR) thrown->u.err->name = "SyntaxError";
      return false;
    }
    *out = rsc__str(RSC_BIGINT, digits, dl);
    return true;
  }
  case 'P':
    if (d->dev) return get_outlined_model(d, rest, rlen, sc, MAP_PROTO, out, thrown);
    break;
  case 'E':
    if (d->dev) {
      /* React evaluates the source. A declaration evaluates to undefined
       * (the key is deleted); anything else becomes a function. */
      const char *src = rest;
      if (rlen >= 6 && memcmp(src, "async ", 6) == 0) src += 6;
      size_t sl = rlen - (size_t)(src - rest);
      if ((sl >= 8 && memcmp(src, "function", 8) == 0) || (sl >= 5 && memcmp(src, "class", 5) == 0)) {
        *out = rsc__mk(RSC_UNDEFINED);
      } else {
        *out = rsc__str(RSC_FUNCTION, rest, rlen);
      }
      return true;
    }
    break;
  case 'Y':
    if (d->dev) {
      /* An omitted value: a getter on the parent that answers with this
       * message. A row's whole value has the throwaway {"": value} for a
       * parent: the chunk's value is the null the case returns. */
      *out = sc->key_index == -2 ? rsc__mk(RSC_NULL)
                                 : rsc__str(RSC_STRING, omitted_message, sizeof omitted_message - 1);
      return true;
    }
    break;
  default:
    break;
  }
  return get_outlined_model(d, s + 1, n - 1, sc, then_key(key, klen) ? MAP_MODEL_THEN : MAP_MODEL,
                            out, thrown);
}

/* ---- elements ----------------------------------------------------------------- */

/* React's element object for a tuple whose slots are revived: slots are
 * the n slots after the marker (type, key, props, owner). */
static bool new_element(rsc_decoder *d, const rsc_node *slots, uint32_t n, rsc_node *out) {
  size_t size = d->dev ? sizeof(rsc_element) : offsetof(rsc_element, owner);
  rsc_element *el = (rsc_element *)rsc__alloc(d, size);
  if (!el) return false;
  rsc_node undef = rsc__mk(RSC_UNDEFINED);
  el->type = n > 0 ? slots[0] : undef;
  el->key = n > 1 ? slots[1] : undef;
  el->props = n > 2 ? slots[2] : undef;
  *out = rsc__mk(RSC_ELEMENT);
  out->u.el = el;
  if (d->dev) {
    el->owner = n > 3 && slots[3].kind != RSC_UNDEFINED ? slots[3] : rsc__mk(RSC_NULL);
    out->sub = EL_HAS_OWNER;
  }
  return true;
}

/* A production element's fields are the tuple's slots 1-3 in order. */
_Static_assert(offsetof(rsc_element, key) == sizeof(rsc_node) &&
                   offsetof(rsc_element, props) == 2 * sizeof(rsc_node) &&
                   offsetof(rsc_element, owner) == 3 * sizeof(rsc_node),
               "rsc_element must lay out like tuple slots");

bool rsc__plain_element(rsc_decoder *d, rsc_node *slots, uint32_t n, rsc_node *out) {
  d->mode_locked = true; /* built with production semantics */
  if (n >= 3 && !d->dev) {
    /* Nothing else holds the tuple and nothing will write into it (it has
     * no reference to fill): its slots 1-3 are the element, in place. A
     * tuple with references keeps its own element, as React's client
     * does: a late type or key fills the tuple, not the element. */
    *out = rsc__mk(RSC_ELEMENT);
    out->u.el = (rsc_element *)slots;
    return true;
  }
  return new_element(d, slots, n, out);
}

bool rsc__arrived_value(rsc_decoder *d, const char *s, uint32_t n, rsc_node *out) {
  uint64_t id;
  if (n < 2 || n > 13 || rsc__hex_prefix((const uint8_t *)s + 1, n - 1, &id) != n - 1) return false;
  const rsc_chunk *c = rsc__find_chunk(d, (int64_t)id);
  if (!c || c->state != CS_FULFILLED || c->stream || c->reaches || value_may_reach(&c->value))
    return false;
  *out = c->value;
  rsc__note_shared(d, out); /* as rsc__apply_map notes what it places */
  return true;
}

static bool create_element(rsc_decoder *d, const rsc_node *slots, uint32_t n, rsc_node *out) {
  rsc_node element;
  if (!new_element(d, slots, n, &element)) return false;
  rsc_scope *h = d->initializing_handler;
  if (h) {
    /* Leaving the element: pop its scope. Blocking and errors inside it
     * turn it into a lazy, so the tree around it stays usable (7.4). */
    d->initializing_handler = h->parent;
    if (h->errored) {
      rsc_chunk *c = rsc__new_chunk(d, CS_REJECTED);
      if (!c) return false;
      c->reason = h->reason;
      *out = rsc__lazy(c);
      return true;
    }
    if (h->deps > 0) {
      rsc_chunk *c = rsc__new_chunk(d, CS_BLOCKED);
      if (!c) return false;
      h->value = element;
      h->chunk = c;
      *out = rsc__lazy(c);
      return true;
    }
  }
  *out = element;
  return true;
}

/* ---- the walk ------------------------------------------------------------------- */

/* One open container of the walk. The walk keeps an explicit stack in the
 * decoder, so hostile nesting never deepens the C stack (docs/hardening.md).
 * A walk nested in another (a reference that initialises a chunk) stacks
 * its frames above the outer ones; frames are addressed by index because
 * the array may move when a nested walk grows it. */
typedef struct walk_frame {
  rsc_node *slot; /* the container's node (leaves are filled, never it)  */
  uint32_t i, n;  /* next child, child count                           */
  bool outer_reaches; /* d->revive_reaches of the enclosing container    */
} walk_frame;

/* Grows the walk stack; false: out of memory (recorded). */
static bool walk_grow(rsc_decoder *d) {
  size_t cap = d->walk_cap ? d->walk_cap * 2 : 64;
  walk_frame *w = (walk_frame *)rsc__heap_realloc(&d->arena.alloc, d->walk,
                                                  d->walk_cap * sizeof *w, cap * sizeof *w);
  if (!w) {
    rsc__alloc_fail(d);
    return false;
  }
  d->walk = w;
  d->walk_cap = cap;
  return true;
}

/* React's reviveModel, depth first and in key order: "$" strings are
 * parsed as they are met, an array whose slot 0 is the element marker
 * becomes an element once all its slots are revived.
 *
 * The stack top lives in locals (len; the array in d->walk): stores into
 * nodes could alias the decoder, and reloading both per child was a fifth
 * of the walk. parse_model_string may run a nested walk (a reference that
 * initialises a chunk), which stacks above `len` and may move the array:
 * d->walk_len is set before and the array reread after. */
/* One "$" string child revived in place; false on an error. */
static bool revive_string(rsc_decoder *d, rsc_node *v, rsc_node *it, const slot_ctx *child,
                          const char *key, uint32_t klen, size_t len, rsc_node *thrown) {
  if (it->len == 1 && !d->initializing_handler) {
    /* The element marker outside any blocking scope (most of them):
     * nothing to open, no call. */
    *it = d->marker;
    return true;
  }
  rsc_node out;
  d->walk_len = len;
  if (!parse_model_string(d, child, key, klen, &out, thrown) || d->err.code) return false;
  rsc__copy_fresh_node(it, &out);
  if (v->kind == RSC_OBJECT && it->kind == RSC_UNDEFINED) v->flags |= NF_HOLES;
  return true;
}

static bool walk(rsc_decoder *d, rsc_node *root, rsc_node *thrown) {
  if (root->kind == RSC_STRING) {
    if (!(root->flags & NF_DOLLAR)) return true;
    /* The root's parent is the wrapper {"": root}, key "" (React 4.1). */
    slot_ctx sc = {root, NULL, -2};
    rsc_node out;
    if (!parse_model_string(d, &sc, "", 0, &out, thrown)) return false;
    rsc__copy_fresh_node(root, &out);
    return true;
  }
  if (!rsc__needs_revive(root)) return true;
  const size_t base = d->walk_len;
  size_t len = base;
  bool ok = true;
  rsc_node *push = root; /* a container to open before the next step */
  while (ok) {
    if (push) {
      if (len == d->walk_cap && !walk_grow(d)) {
        ok = false;
        break;
      }
      walk_frame *nf = &d->walk[len++];
      nf->slot = push;
      nf->i = 0;
      nf->n = push->len;
      /* revive_reaches now says whether this container's subtree met a
       * wrapper or a reference that may hold one (see the pop below). */
      nf->outer_reaches = d->revive_reaches;
      d->revive_reaches = false;
      push = NULL;
    }
    if (len == base) break;
    walk_frame *f = &d->walk[len - 1];
    rsc_node *v = f->slot;
    /* The children from f->i on, in one loop, until one must be entered.
     * A string child may run a nested walk that moves d->walk: f is
     * fetched again after it. */
    uint32_t i = f->i, n = f->n;
    if (v->kind == RSC_ARRAY) {
      rsc_node *items = v->u.items;
      /* A tuple without its marker slot: index i is items[i - 1], and its
       * references see the decoder's marker as their tuple's slot 0
       * (rsc_ref.tuple[0] tells them they are in an element). */
      uint32_t skip = v->sub == ARR_NO_MARKER;
      const rsc_node *slot0 = skip ? &d->marker : items;
      if (skip && i == 0) {
        i = 1; /* the marker, as revived there: it opens the element's scope */
        if (d->initializing_handler && !open_element_scope(d)) ok = false;
      }
      for (; ok && i < n && !push; i++) {
        rsc_node *it = &items[i - skip];
        if (!rsc__needs_revive(it)) continue;
        if (it->kind != RSC_STRING) {
          push = it;
          continue;
        }
        slot_ctx child = {it, slot0, (int32_t)(i > INT32_MAX ? INT32_MAX : i)};
        if (!revive_string(d, v, it, &child, NULL, 0, len, thrown)) {
          ok = false;
          break;
        }
      }
    } else {
      for (; i < n && !push; i++) {
        rsc_member *m = &v->u.members[i];
        if ((v->flags & NF_PROTO) && key_is(m->key, rsc__member_klen(m), "__proto__")) {
          m->val = rsc__mk(RSC_UNDEFINED); /* deleted without walking it */
          v->flags |= NF_HOLES;
          continue;
        }
        rsc_node *it = &m->val;
        if (!rsc__needs_revive(it)) continue;
        if (it->kind != RSC_STRING) {
          push = it;
          continue;
        }
        slot_ctx child = {it, NULL, -1};
        if (!revive_string(d, v, it, &child, m->key, rsc__member_klen(m), len, thrown)) {
          ok = false;
          break;
        }
      }
    }
    f = &d->walk[len - 1];
    f->i = i;
    if (!ok || push || i < n) continue;
    /* Leaving the container. */
    bool outer = f->outer_reaches;
    len--;
    bool reaches = d->revive_reaches;
    if (!reaches) {
      /* Plain data once revived: the read-through at finish (rsc__force)
       * need not enter it. */
      v->flags &= (uint16_t)~NF_WALK;
    }
    if (v->kind == RSC_ARRAY && n > 0 &&
        (v->sub == ARR_NO_MARKER || rsc__is_marker(&v->u.items[0]))) {
      rsc_node el;
      uint32_t marker_slots = v->sub != ARR_NO_MARKER;
      if (!create_element(d, v->u.items + marker_slots, n - 1, &el)) ok = false;
      else *v = el;
      if (v->kind != RSC_ELEMENT) reaches = true; /* blocked or errored: a lazy */
    }
    d->revive_reaches = outer || reaches;
  }
  if (len > base) d->revive_reaches = true; /* stopped inside: assume so */
  d->walk_len = base;
  return ok;
}

bool rsc__revive(rsc_decoder *d, rsc_node *root, rsc_node *thrown) {
  bool ok = walk(d, root, thrown);
  if (d->err.code) {
    *thrown = rsc__error_node(d, d->err.msg ? d->err.msg : "decoder failed", NULL);
    return false;
  }
  return ok;
}
