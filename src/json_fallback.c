/* json_fallback.c - the JSON.parse-compatible slow path.
 *
 * simdjson (json_shim.cpp) parses almost every row. It refuses three things
 * that JavaScript's JSON.parse accepts: lone surrogate escapes ("\ud800",
 * kept here as WTF-8), integers beyond 64 bits and exponents beyond double
 * range (read as the nearest double, or Infinity). Every row simdjson
 * refuses comes here; a row that fails here too gets the SyntaxError text
 * V8 would give, because React shows JSON.parse's message as the reason of
 * the rejected chunk. Depth is bounded by the decoder's limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

double rsc__parse_number(const char *s, size_t len); /* json_shim.cpp */

typedef struct fb {
  rsc_decoder *d;
  const uint8_t *s;
  size_t len, pos;
  uint32_t depth, max_depth;
  const char *msg;
  json_result res;
} fb;

static bool is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_ws(fb *p) {
  while (p->pos < p->len && is_ws(p->s[p->pos])) p->pos++;
}

static size_t put_utf8(uint8_t *o, uint32_t cp) {
  if (cp < 0x80) {
    o[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (uint8_t)(0xC0 | (cp >> 6));
    o[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) { /* lone surrogates land here too: WTF-8 */
    o[0] = (uint8_t)(0xE0 | (cp >> 12));
    o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (uint8_t)(0xF0 | (cp >> 18));
  o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/* Room for a message of up to cap bytes, in the layout of json.h's
 * rsc__json_msg_len (msg_end writes its length). */
static char *msg_new(fb *p, size_t cap) {
  char *m = (char *)rsc__alloc(p->d, 4 + cap + 1);
  if (!m) {
    p->res = JSON_NOMEM;
    return NULL;
  }
  return m + 4;
}

static bool msg_end(fb *p, char *m, size_t len) {
  uint32_t n32 = (uint32_t)len;
  memcpy(m - 4, &n32, 4);
  m[len] = 0;
  p->msg = m;
  p->res = JSON_SYNTAX;
  return false;
}

RSC_KEY(k_eos, "Unexpected end of JSON input");

/* "<what> at position N", N in UTF-16 code units, as V8 counts. Every
 * template but the one after the value says "in JSON" (V8's message
 * templates, Node 20). */
static bool fail_msg(fb *p, const char *what, bool in_json, size_t pos) {
  if (p->res != JSON_OK) return false;
  size_t units = rsc__utf16_units(p->s, pos < p->len ? pos : p->len);
  size_t n = strlen(what) + 48;
  char *m = msg_new(p, n);
  if (!m) return false;
  int w = snprintf(m, n, "%s%s at position %zu", what, in_json ? " in JSON" : "", units);
  return msg_end(p, m, (size_t)w);
}

static bool fail_at(fb *p, const char *what, size_t pos) { return fail_msg(p, what, true, pos); }

static bool fail_eos(fb *p) {
  if (p->res != JSON_OK) return false;
  p->msg = k_eos.s;
  p->res = JSON_SYNTAX;
  return false;
}

/* Appends to o the UTF-16 units [a, b) of s as WTF-8: a 4-byte character
 * cut by a bound leaves its lone surrogate, as V8's substrings do. */
static size_t put_units(uint8_t *o, const uint8_t *s, size_t len, size_t a, size_t b) {
  size_t units = 0, w = 0;
  for (size_t i = 0; i < len && units < b;) {
    size_t n = rsc__utf8_char_len(s, len, i);
    if (n == 4) {
      bool first = units >= a, second = units + 1 >= a && units + 1 < b;
      if (first && second) {
        memcpy(o + w, s + i, 4);
        w += 4;
      } else if (first || second) {
        rsc__wtf8_half(s + i, first, o + w);
        w += 3;
      }
      units += 2;
    } else {
      if (units >= a) {
        memcpy(o + w, s + i, n);
        w += n;
      }
      units++;
    }
    i += n;
  }
  return w;
}

/* V8's "Unexpected token" message (GetErrorMessageWithEllipses): the one
 * UTF-16 unit at the error, and the source, or up to 10 units of it each
 * side of the error for sources of 21 units or more. */
static bool fail_token(fb *p) {
  if (p->res != JSON_OK) return false;
  if (p->pos >= p->len) return fail_eos(p);
  size_t total = rsc__utf16_units(p->s, p->len);
  size_t pos = rsc__utf16_units(p->s, p->pos);
  size_t a = 0, b = total;
  const char *pre = "\"", *post = "\"";
  if (total >= 21) {
    if (pos < 10) {
      b = pos + 10;
      post = "\"...";
    } else if (pos < total - 10) {
      a = pos - 10;
      b = pos + 10;
      pre = "...\"";
      post = "\"...";
    } else {
      a = pos - 10;
      pre = "...\"";
    }
  }
  /* at most 4 bytes per unit of context, as WTF-8 */
  size_t n = 4 * (b - a) + 64;
  char *m = msg_new(p, n);
  if (!m) return false;
  /* memcpy, not %s: the token and the context may be NULs */
  size_t w = 0;
  memcpy(m, "Unexpected token '", 18);
  w = 18;
  w += put_units((uint8_t *)m + w, p->s, p->len, pos, pos + 1);
  w += (size_t)snprintf(m + w, n - w, "', %s", pre);
  w += put_units((uint8_t *)m + w, p->s, p->len, a, b);
  w += (size_t)snprintf(m + w, n - w, "%s is not valid JSON", post);
  return msg_end(p, m, w);
}

/* V8's ReportUnexpectedCharacter, and ReportUnexpectedToken without a
 * message of its own: what is said depends on the token the character
 * starts, a string or a number where neither may stand, the end, or any
 * other character. */
static bool fail_char(fb *p) {
  if (p->res != JSON_OK) return false;
  if (p->pos >= p->len) return fail_eos(p);
  uint8_t c = p->s[p->pos];
  if (c == '"') return fail_at(p, "Unexpected string", p->pos);
  if (c == '-' || (c >= '0' && c <= '9')) return fail_at(p, "Unexpected number", p->pos);
  return fail_token(p);
}

static int hexval(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Reads 4 hex digits at p->pos; -1 (and the error) if they are not. */
static int32_t read_u4(fb *p) {
  int32_t v = 0;
  for (int k = 0; k < 4; k++) {
    if (p->pos >= p->len) {
      fail_at(p, "Bad Unicode escape", p->pos);
      return -1;
    }
    int h = hexval(p->s[p->pos]);
    if (h < 0) {
      fail_at(p, "Bad Unicode escape", p->pos);
      return -1;
    }
    v = v * 16 + h;
    p->pos++;
  }
  return v;
}

/* A string starting at the opening quote; stores an arena copy. */
static bool parse_string(fb *p, const char **out, size_t *out_len) {
  p->pos++; /* opening quote */
  size_t start = p->pos;
  /* The decoded text is never longer than the source. */
  size_t end = start;
  while (end < p->len && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
  size_t cap = (end > p->len ? p->len : end) - start + 1;
  /* After a 32-bit length, as simdjson writes strings: keys need it
   * (rsc__member_klen). */
  uint8_t *o = (uint8_t *)rsc__alloc(p->d, 4 + cap + 4);
  if (!o) {
    p->res = JSON_NOMEM;
    return false;
  }
  o += 4;
  size_t n = 0;
  for (;;) {
    if (p->pos >= p->len) return fail_at(p, "Unterminated string", p->len);
    uint8_t c = p->s[p->pos];
    if (c == '"') {
      p->pos++;
      break;
    }
    if (c < 0x20) return fail_at(p, "Bad control character in string literal", p->pos);
    if (c != '\\') {
      o[n++] = c;
      p->pos++;
      continue;
    }
    p->pos++;
    /* V8 reads the escaped character as a token first: the end, or one
     * beyond Latin-1, is reported as such (fail_char) */
    if (p->pos >= p->len) return fail_eos(p);
    if (p->s[p->pos] >= 0xC4) return fail_token(p);
    uint8_t e = p->s[p->pos++];
    switch (e) {
    case '"': o[n++] = '"'; break;
    case '\\': o[n++] = '\\'; break;
    case '/': o[n++] = '/'; break;
    case 'b': o[n++] = '\b'; break;
    case 'f': o[n++] = '\f'; break;
    case 'n': o[n++] = '\n'; break;
    case 'r': o[n++] = '\r'; break;
    case 't': o[n++] = '\t'; break;
    case 'u': {
      int32_t cu = read_u4(p);
      if (cu < 0) return false;
      uint32_t cp = (uint32_t)cu;
      /* A high surrogate followed by an escaped low one is one character;
       * anything else stays a lone surrogate (WTF-8), as JS strings allow. */
      if (cp >= 0xD800 && cp <= 0xDBFF && p->pos + 6 <= p->len && p->s[p->pos] == '\\' &&
          p->s[p->pos + 1] == 'u') {
        size_t save = p->pos;
        p->pos += 2;
        int32_t lo = read_u4(p);
        if (lo < 0) return false;
        if (lo >= 0xDC00 && lo <= 0xDFFF)
          cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
        else p->pos = save;
      }
      n += put_utf8(o + n, cp);
      break;
    }
    default: return fail_at(p, "Bad escaped character", p->pos - 1);
    }
  }
  o[n] = 0;
  uint32_t n32 = (uint32_t)n;
  memcpy(o - 4, &n32, 4);
  *out = (const char *)o;
  *out_len = n;
  return true;
}

static bool parse_number(fb *p, rsc_node *out) {
  size_t start = p->pos;
  if (p->s[p->pos] == '-') {
    p->pos++;
    if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
      return fail_at(p, "No number after minus sign", p->pos);
  }
  if (p->s[p->pos] == '0') {
    p->pos++;
    if (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
      return fail_at(p, "Unexpected number", p->pos);
  } else {
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  if (p->pos < p->len && p->s[p->pos] == '.') {
    p->pos++;
    if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
      return fail_at(p, "Unterminated fractional number", p->pos);
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
    p->pos++;
    if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
    if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
      return fail_at(p, "Exponent part is missing a number", p->pos);
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  *out = rsc__num(rsc__parse_number((const char *)p->s + start, p->pos - start));
  return true;
}

static bool parse_literal(fb *p, const char *word, rsc_node v, rsc_node *out) {
  size_t n = strlen(word);
  for (size_t k = 0; k < n; k++) {
    if (p->pos + k >= p->len) return fail_eos(p);
    if (p->s[p->pos + k] != (uint8_t)word[k]) {
      p->pos += k;
      return fail_char(p);
    }
  }
  p->pos += n;
  *out = v;
  return true;
}

/* An open array or object. The parser keeps its own stack of them (in
 * heap memory through the decoder's allocator), so hostile nesting is
 * bounded by the depth limit, never by the C stack (docs/hardening.md).
 * Growable scratch vectors live in the arena: a row is parsed once. */
typedef struct fb_frame {
  bool object;
  uint16_t flags; /* NF_WALK / NF_PROTO gathered from the members so far  */
  size_t n, cap;
  rsc_node *items;
  rsc_member *m;
} fb_frame;

typedef struct fb_stack {
  fb_frame *f;
  size_t len, cap;
} fb_stack;

static bool oom(fb *p) {
  if (p->res == JSON_OK) p->res = JSON_NOMEM;
  return false;
}

/* Opens a container at p->pos ('[' or '{'). */
static bool open_container(fb *p, fb_stack *st, bool object) {
  if (++p->depth > p->max_depth) {
    p->res = JSON_LIMIT;
    return false;
  }
  if (st->len == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 16;
    fb_frame *f = (fb_frame *)rsc__heap_realloc(&p->d->arena.alloc, st->f, st->cap * sizeof *f,
                                                cap * sizeof *f);
    if (!f) return oom(p);
    st->f = f;
    st->cap = cap;
  }
  fb_frame *f = &st->f[st->len++];
  memset(f, 0, sizeof *f);
  f->object = object;
  f->cap = 8;
  if (object) f->m = (rsc_member *)rsc__alloc(p->d, f->cap * sizeof *f->m);
  else f->items = rsc__alloc_nodes(p->d, f->cap);
  if (object ? !f->m : !f->items) return oom(p);
  p->pos++;
  return true;
}

/* Closes the top container into *out. */
static void close_container(fb *p, fb_stack *st, rsc_node *out) {
  fb_frame *f = &st->f[--st->len];
  p->depth--;
  *out = rsc__mk(f->object ? RSC_OBJECT : RSC_ARRAY);
  out->flags = f->flags;
  out->len = (uint32_t)f->n;
  if (f->object) {
    out->u.members = f->m;
    if (f->n > 1) rsc__object_normalize(p->d, out);
  } else {
    out->u.items = f->items;
  }
}

/* Room for one more member or item in the top container. */
static bool grow(fb *p, fb_frame *f) {
  if (f->n < f->cap) return true;
  if (f->object) {
    rsc_member *bigger = (rsc_member *)rsc__alloc(p->d, f->cap * 2 * sizeof *f->m);
    if (!bigger) return oom(p);
    memcpy(bigger, f->m, f->n * sizeof *f->m);
    f->m = bigger;
  } else {
    rsc_node *bigger = rsc__alloc_nodes(p->d, f->cap * 2);
    if (!bigger) return oom(p);
    memcpy(bigger, f->items, f->n * sizeof *f->items);
    f->items = bigger;
  }
  f->cap *= 2;
  return true;
}

/* A member name and its ':' in the top (object) container. */
static bool read_key(fb *p, fb_frame *f, bool first) {
  skip_ws(p);
  if (p->pos >= p->len || p->s[p->pos] != '"')
    return fail_at(p,
                   first ? "Expected property name or '}'" : "Expected double-quoted property name",
                   p->pos);
  if (!grow(p, f)) return false;
  const char *k;
  size_t klen;
  if (!parse_string(p, &k, &klen)) return false;
  f->m[f->n].key = k; /* its length precedes it (parse_string) */
  (void)klen;
  skip_ws(p);
  /* V8 (Node 20) names the missing ':' only after an object's first key;
   * after the others it reports the token found instead */
  if (p->pos >= p->len || p->s[p->pos] != ':')
    return first ? fail_at(p, "Expected ':' after property name", p->pos) : fail_char(p);
  p->pos++;
  return true;
}

/* A scalar (string, literal, number) at p->pos. */
static bool parse_scalar(fb *p, uint8_t c, rsc_node *out) {
  switch (c) {
  case '"': {
    const char *s;
    size_t n;
    if (!parse_string(p, &s, &n)) return false;
    *out = rsc__str(RSC_STRING, s, n);
    if (n > 0 && s[0] == '$') out->flags |= NF_DOLLAR;
    return true;
  }
  case 't': {
    rsc_node v = rsc__mk(RSC_BOOL);
    v.u.boolean = 1;
    return parse_literal(p, "true", v, out);
  }
  case 'f': return parse_literal(p, "false", rsc__mk(RSC_BOOL), out);
  case 'n': return parse_literal(p, "null", rsc__mk(RSC_NULL), out);
  default:
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, out);
    return fail_token(p);
  }
}

/* One JSON value, containers through the explicit stack. The checks and
 * their order are those of a recursive descent, so the SyntaxError texts
 * stay V8's. */
static bool parse_value(fb *p, rsc_node *out) {
  fb_stack st = {NULL, 0, 0};
  bool ok = false;
  rsc_node val;
  for (;;) {
    /* A value starts here. */
    skip_ws(p);
    if (p->pos >= p->len) {
      fail_eos(p);
      goto done;
    }
    uint8_t c = p->s[p->pos];
    if (c == '[' || c == '{') {
      bool object = c == '{';
      if (!open_container(p, &st, object)) goto done;
      skip_ws(p);
      if (p->pos < p->len && p->s[p->pos] == (object ? '}' : ']')) {
        p->pos++;
        close_container(p, &st, &val);
      } else {
        if (object && !read_key(p, &st.f[st.len - 1], true)) goto done;
        continue; /* the first member's value or the first item */
      }
    } else if (!parse_scalar(p, c, &val)) {
      goto done;
    }
    /* A value is complete: store it in the open container, then go on
     * with the next one or close containers. */
    for (;;) {
      if (st.len == 0) {
        *out = val;
        ok = true;
        goto done;
      }
      fb_frame *f = &st.f[st.len - 1];
      if (!f->object) {
        if (!grow(p, f)) goto done;
        f->items[f->n++] = val;
        if (val.flags & (NF_DOLLAR | NF_WALK)) f->flags |= NF_WALK;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
          p->pos++;
          break;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
          p->pos++;
          close_container(p, &st, &val);
          continue;
        }
        fail_at(p, "Expected ',' or ']' after array element", p->pos);
        goto done;
      }
      rsc_member *m = &f->m[f->n];
      m->val = val;
      if (val.flags & (NF_DOLLAR | NF_WALK)) f->flags |= NF_WALK;
      if (rsc__member_klen(m) == 9 && memcmp(m->key, "__proto__", 9) == 0)
        f->flags |= NF_WALK | NF_PROTO;
      f->n++;
      skip_ws(p);
      if (p->pos < p->len && p->s[p->pos] == ',') {
        p->pos++;
        if (!read_key(p, f, false)) goto done;
        break;
      }
      if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        close_container(p, &st, &val);
        continue;
      }
      fail_at(p, "Expected ',' or '}' after property value", p->pos);
      goto done;
    }
  }
done:
  rsc__heap_free(&p->d->arena.alloc, st.f);
  return ok;
}

json_result rsc__json_fallback(rsc_decoder *d, const uint8_t *data, size_t len, rsc_node *out,
                               const char **msg) {
  if (!rsc__utf8_valid(data, len)) {
    size_t fixed_len;
    uint8_t *fixed = rsc__utf8_repair(d, data, len, &fixed_len);
    if (!fixed) return JSON_NOMEM;
    data = fixed;
    len = fixed_len;
  }
  fb p = {d, data, len, 0, 0, d->opt.limits.max_depth, NULL, JSON_OK};
  /* V8 names these sources instead of pointing at a token. */
  static const char *const special[] = {"undefined", "NaN", "Infinity", "[object Object]"};
  for (size_t k = 0; k < 4; k++) {
    if (len == strlen(special[k]) && memcmp(data, special[k], len) == 0) {
      size_t n = len + 24;
      char *m = msg_new(&p, n);
      if (!m) return JSON_NOMEM;
      msg_end(&p, m, (size_t)snprintf(m, n, "\"%s\" is not valid JSON", special[k]));
      *msg = p.msg;
      return JSON_SYNTAX;
    }
  }
  if (!parse_value(&p, out)) {
    *msg = p.msg;
    return p.res == JSON_OK ? JSON_SYNTAX : p.res;
  }
  skip_ws(&p);
  if (p.pos < p.len) {
    fail_msg(&p, "Unexpected non-whitespace character after JSON", false, p.pos);
    *msg = p.msg;
    return p.res;
  }
  return JSON_OK;
}

/* ---- object key order ---------------------------------------------------- */

static bool index_key(const rsc_member *m, uint64_t *v) {
  uint32_t klen = rsc__member_klen(m);
  if (klen == 0 || klen > 10) return false;
  if (klen > 1 && m->key[0] == '0') return false;
  uint64_t x = 0;
  for (uint32_t i = 0; i < klen; i++) {
    char c = m->key[i];
    if (c < '0' || c > '9') return false;
    x = x * 10 + (uint64_t)(c - '0');
  }
  if (x >= 4294967295ull) return false;
  *v = x;
  return true;
}

static bool same_key(const rsc_member *a, const rsc_member *b) {
  uint32_t n = rsc__member_klen(a);
  return n == rsc__member_klen(b) && memcmp(a->key, b->key, n) == 0;
}

/* An array-index key and where it stood. */
typedef struct index_ent {
  uint64_t value;
  uint32_t pos;
} index_ent;

static int index_cmp(const void *pa, const void *pb) {
  const index_ent *a = (const index_ent *)pa, *b = (const index_ent *)pb;
  if (a->value != b->value) return a->value < b->value ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos; /* never equal values, but total */
}

void rsc__object_normalize(rsc_decoder *d, rsc_node *obj) {
  rsc_member *m = obj->u.members;
  uint32_t n = obj->len;
  /* Duplicate keys: JSON.parse keeps the first position, the last value. */
  bool removed = false;
  if (n <= 16) {
    for (uint32_t i = 1; i < n; i++)
      for (uint32_t j = 0; j < i; j++)
        if (m[j].key && same_key(&m[i], &m[j])) {
          m[j].val = m[i].val;
          m[i].key = NULL; /* mark for removal */
          removed = true;
          break;
        }
  } else {
    size_t cap = 32;
    while (cap < (size_t)n * 2) cap *= 2;
    uint32_t *tab = (uint32_t *)rsc__alloc(d, cap * sizeof(uint32_t));
    if (tab) {
      memset(tab, 0xff, cap * sizeof(uint32_t));
      for (uint32_t i = 0; i < n; i++) {
        size_t h =
            (size_t)rsc__key_hash(d->hash_seed, m[i].key, rsc__member_klen(&m[i])) & (cap - 1);
        for (;;) {
          if (tab[h] == UINT32_MAX) {
            tab[h] = i;
            break;
          }
          if (same_key(&m[tab[h]], &m[i])) {
            m[tab[h]].val = m[i].val;
            m[i].key = NULL;
            removed = true;
            break;
          }
          h = (h + 1) & (cap - 1);
        }
      }
    }
  }
  if (removed) {
    uint32_t o = 0;
    for (uint32_t i = 0; i < n; i++)
      if (m[i].key) m[o++] = m[i];
    n = o;
    obj->len = n;
  }
  /* Array-index keys first, ascending; the rest keep their order. The
   * index keys are distinct numbers once duplicates are gone; they are
   * sorted with qsort (an insertion sort took 6.7 s on 60,000 keys in
   * descending order). */
  uint32_t nidx = 0;
  uint64_t v;
  for (uint32_t i = 0; i < n; i++)
    if (index_key(&m[i], &v)) nidx++;
  if (nidx == 0) return;
  rsc_member *tmp = (rsc_member *)rsc__alloc(d, n * sizeof *m);
  index_ent *ix = (index_ent *)rsc__alloc(d, nidx * sizeof *ix);
  if (!tmp || !ix) return; /* the decoder has failed (out of memory) */
  uint32_t a = 0, b = nidx;
  for (uint32_t i = 0; i < n; i++) {
    if (index_key(&m[i], &v)) {
      ix[a].value = v;
      ix[a].pos = i;
      a++;
    } else {
      tmp[b++] = m[i];
    }
  }
  qsort(ix, nidx, sizeof *ix, index_cmp);
  for (uint32_t k = 0; k < nidx; k++) tmp[k] = m[ix[k].pos];
  memcpy(m, tmp, n * sizeof *m);
}
