/* revive.c - React's reviveModel walk, parseModelString, getOutlinedModel
 * and the elements they build, in place. Its state is rsc_decoder.walk.
 *
 * One walk per parsed row: "$" strings become typed values
 * (docs/spec/FLIGHT-PROTOCOL.md 5), arrays whose slot 0 is the element marker
 * become elements (7), object members that revive to undefined and "__proto__"
 * members become absent (4.1). References go through the chunk table and either
 * resolve now or leave a null placeholder and a listener (6). Containers the
 * JSON stage marked clean (no "$" string, no "__proto__" key inside) are
 * skipped.
 *
 * Calls path.c (splitting and stepping along reference paths),
 * collections.c (the map functions a reference applies), shared.c, and
 * the chunk stage: getting a chunk, reading it, waiting on it
 * (listeners, scopes). The chunk stage calls back here against the flow,
 * by one function: reading a chunk whose row arrived but was not revived
 * yet runs rsc__revive on that row (React's initializeModelChunk). */
#include "revive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chunks.h"
#include "collections.h"
#include "hex.h"
#include "json.h"
#include "path.h"
#include "rowlog.h"
#include "shared.h"

const char rsc__omitted_message[] =
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
/* ---- getOutlinedModel ------------------------------------------------------- */

typedef struct slot_ctx {
  rsc_node *slot;
  const rsc_node *tuple; /* the parent array's slot 0 (rsc_ref.tuple), or NULL */
  int32_t key_index;     /* -1 object member, -2 the row's root               */
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
  case RSC_NULL:
  case RSC_BOOL:
  case RSC_NUMBER:
  case RSC_STRING:
  case RSC_UNDEFINED:
  case RSC_BIGINT:
  case RSC_DATE:
  case RSC_SYMBOL:
  case RSC_BINARY:
  case RSC_ARRAY:
  case RSC_OBJECT:
  case RSC_ELEMENT:
  case RSC_CLIENT_REF: return false;
  default: return true;
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
  if (!ok || !target || ref_may_reach(d, target, map, hopped, out)) d->walk.reaches = true;
  return ok;
}

static bool outlined_model(rsc_decoder *d, const char *ref, size_t len, const slot_ctx *sc,
                           uint8_t map, rsc_node *out, rsc_node *thrown, bool *hopped,
                           rsc_chunk **target) {
  size_t id_len;
  rsc_path path;
  if (!rsc__split_path(d, ref, len, &id_len, &path)) return false;
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
        case CS_FULFILLED: value = rc->value; continue;
        case CS_BLOCKED:
        case CS_PENDING: *out = wait_on(d, rc, sc, map, &path, i); return true;
        case CS_HALTED: *out = halted_dep(d); return true;
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
  case CS_BLOCKED: *out = wait_on(d, c, sc, map, &path, 0); return true;
  case CS_HALTED: *out = halted_dep(d); return true;
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

/* RSC_OPT_KEEP_ROWS: which form made a collection, server reference or
 * development error (rowlog.c), for the Flight writer. Returns ok. */
static bool noted(rsc_decoder *d, char form, const char *rest, size_t rlen, const rsc_node *out,
                  bool ok) {
  if (!ok || !(d->opt.flags & RSC_OPT_KEEP_ROWS)) return ok;
  /* the row the form named, as the reference read it ("$K1x" is row 1) */
  int64_t id = rsc__parse_ref_id(rest, rlen);
  if (id >= 0) rsc__rowlog_form_id(d, form, id, out);
  return ok;
}

static bool parse_model_string(rsc_decoder *d, const slot_ctx *sc, const char *key, uint32_t klen,
                               rsc_node *out, rsc_node *thrown) {
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
  case '$': *out = rsc__str(RSC_STRING, s + 1, n - 1); return true;
  case 'L':
  case '@': {
    rsc_chunk *c = rsc__get_chunk(d, rsc__parse_ref_id(rest, rlen));
    if (!c) return false;
    /* A wrapper of a settled chunk with nothing to read inside (a client
     * module's I row, a text row, plain data) leads a read-through nowhere. */
    if (c->state != CS_FULFILLED || c->reaches || c->stream) d->walk.reaches = true;
    if (s[1] == 'L') {
      *out = rsc__lazy(c);
      out->len = ++d->walk.lazy_serial;
    } else {
      *out = rsc__mk(RSC_PROMISE);
      out->u.chunk = c;
    }
    return true;
  }
  case 'S': *out = rsc__str(RSC_SYMBOL, rest, rlen); return true;
  case 'h':
  case 'F': /* servers up to 19.0/19.1 wrote server references as "$F" */
    return noted(d, s[1], rest, rlen, out,
                 get_outlined_model(d, rest, rlen, sc,
                                    then_key(key, klen) ? MAP_SERVER_REF_THEN : MAP_SERVER_REF, out,
                                    thrown));
  case 'T':
    if (!(d->opt.flags & RSC_OPT_TEMP_REFS)) {
      *thrown = rsc__error_node(d, missing_temp_refs, NULL);
      return false;
    }
    *out = rsc__str(RSC_TEMP_REF, rest, rlen);
    return true;
  case 'Q':
    return noted(d, 'Q', rest, rlen, out,
                 get_outlined_model(d, rest, rlen, sc, MAP_MAP, out, thrown));
  case 'W':
    return noted(d, 'W', rest, rlen, out,
                 get_outlined_model(d, rest, rlen, sc, MAP_SET, out, thrown));
  case 'B':
    return noted(d, 'B', rest, rlen, out,
                 get_outlined_model(d, rest, rlen, sc, MAP_BLOB, out, thrown));
  case 'K':
    return noted(d, 'K', rest, rlen, out,
                 get_outlined_model(d, rest, rlen, sc, MAP_FORMDATA, out, thrown));
  case 'Z':
    if (d->dev)
      return noted(d, 'Z', rest, rlen, out,
                   get_outlined_model(d, rest, rlen, sc, MAP_ERROR_DEV, out, thrown));
    *out = rsc__error_node(d, rsc__generic_error, NULL);
    return out->kind == RSC_ERROR;
  case 'i':
    return noted(d, 'i', rest, rlen, out,
                 get_outlined_model(d, rest, rlen, sc, MAP_ITERATOR, out, thrown));
  case 'I': *out = rsc__num(INFINITY); return true;
  case '-': *out = rsc__num(n == 3 && s[2] == '0' ? -0.0 : -INFINITY); return true;
  case 'N': *out = rsc__num(NAN); return true;
  case 'u': *out = rsc__mk(RSC_UNDEFINED); return true;
  case 'D': *out = rsc__str(RSC_DATE, rest, rlen); return true;
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
      if ((sl >= 8 && memcmp(src, "function", 8) == 0) ||
          (sl >= 5 && memcmp(src, "class", 5) == 0)) {
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
      *out = sc->key_index == -2
                 ? rsc__mk(RSC_NULL)
                 : rsc__str(RSC_STRING, rsc__omitted_message, sizeof rsc__omitted_message - 1);
      return true;
    }
    break;
  default: break;
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
    if ((d->opt.flags & RSC_OPT_KEEP_ROWS) && n > 3) rsc__rowlog_tail(d, el, slots + 3, n - 3);
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
      if (d->opt.flags & RSC_OPT_KEEP_ROWS) rsc__rowlog_element_lazy(d, c);
      return true;
    }
    if (h->deps > 0) {
      rsc_chunk *c = rsc__new_chunk(d, CS_BLOCKED);
      if (!c) return false;
      if (h->lost_slot) element.sub |= EL_LOST_SLOT;
      h->value = element;
      h->chunk = c;
      *out = rsc__lazy(c);
      if (d->opt.flags & RSC_OPT_KEEP_ROWS) rsc__rowlog_element_lazy(d, c);
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
  rsc_node *slot;     /* the container's node (leaves are filled, never it)  */
  uint32_t i, n;      /* next child, child count                           */
  bool outer_reaches; /* d->walk.reaches of the enclosing container    */
} walk_frame;

/* Grows the walk stack; false: out of memory (recorded). */
static bool walk_grow(rsc_decoder *d) {
  size_t cap = d->walk.cap ? d->walk.cap * 2 : 64;
  walk_frame *w = (walk_frame *)rsc__heap_realloc(&d->arena.alloc, d->walk.frames,
                                                  d->walk.cap * sizeof *w, cap * sizeof *w);
  if (!w) {
    rsc__alloc_fail(d);
    return false;
  }
  d->walk.frames = w;
  d->walk.cap = cap;
  return true;
}

/* React's reviveModel, depth first and in key order: "$" strings are
 * parsed as they are met, an array whose slot 0 is the element marker
 * becomes an element once all its slots are revived.
 *
 * The stack top lives in locals (len; the array in d->walk.frames): stores
 * into nodes could alias the decoder, which would make every child reload
 * both. parse_model_string may run a nested walk (a reference that
 * initialises a chunk), which stacks above `len` and may move the array:
 * d->walk.len is set before and the array reread after. */
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
  d->walk.len = len;
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
  const size_t base = d->walk.len;
  size_t len = base;
  bool ok = true;
  rsc_node *push = root; /* a container to open before the next step */
  while (ok) {
    if (push) {
      if (len == d->walk.cap && !walk_grow(d)) {
        ok = false;
        break;
      }
      walk_frame *nf = &d->walk.frames[len++];
      nf->slot = push;
      nf->i = 0;
      nf->n = push->len;
      /* revive_reaches now says whether this container's subtree met a
       * wrapper or a reference that may hold one (see the pop below). */
      nf->outer_reaches = d->walk.reaches;
      d->walk.reaches = false;
      push = NULL;
    }
    if (len == base) break;
    walk_frame *f = &d->walk.frames[len - 1];
    rsc_node *v = f->slot;
    /* The children from f->i on, in one loop, until one must be entered.
     * A string child may run a nested walk that moves d->walk.frames: f is
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
          rsc__rowlog_proto(d, m);         /* (RSC_OPT_KEEP_ROWS only) */
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
    f = &d->walk.frames[len - 1];
    f->i = i;
    if (!ok || push || i < n) continue;
    /* Leaving the container. */
    bool outer = f->outer_reaches;
    len--;
    bool reaches = d->walk.reaches;
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
      else if (reaches) v->flags |= NF_REACH;
    }
    d->walk.reaches = outer || reaches;
  }
  if (len > base) d->walk.reaches = true; /* stopped inside: assume so */
  d->walk.len = base;
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
