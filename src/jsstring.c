/* jsstring.c - JavaScript's String(value) of decoded values (jsstring.h). */
#include "jsstring.h"

#include <stdio.h>

#include "json.h"
#include "value.h"

void rsc__strbuf_free(rsc_decoder *d, rsc_strbuf *sb) {
  rsc__heap_free(&d->arena.alloc, sb->p);
  sb->p = NULL;
  sb->len = sb->cap = 0;
}

/* Room for n more bytes. The text is bounded as values are (16 bytes a
 * value), so shared arrays joined over and over cannot grow it without
 * bound: past the limit the decode fails as on too many values. */
static bool room(rsc_decoder *d, rsc_strbuf *sb, size_t n) {
  if (sb->cap - sb->len >= n) return true;
  size_t want = sb->len + n;
  uint64_t max = rsc__node_cap(d), left = d->nodes < max ? max - d->nodes : 0;
  if (want / sizeof(rsc_node) > left) {
    rsc__fail(d, RSC_ERR_LIMIT, d->row_offset, d->row_id, "too many values");
    return false;
  }
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < want) cap *= 2;
  char *p = (char *)rsc__heap_realloc(&d->arena.alloc, sb->p, sb->cap, cap);
  if (!p) {
    rsc__alloc_fail(d);
    return false;
  }
  sb->p = p;
  sb->cap = cap;
  return true;
}

static bool put(rsc_decoder *d, rsc_strbuf *sb, const char *s, size_t n) {
  if (!room(d, sb, n)) return false;
  if (n) memcpy(sb->p + sb->len, s, n);
  sb->len += n;
  return true;
}

bool rsc__strbuf_put(rsc_decoder *d, rsc_strbuf *sb, const char *s, size_t n) {
  return put(d, sb, s, n);
}

static bool put_c(rsc_decoder *d, rsc_strbuf *sb, const char *s) {
  return put(d, sb, s, strlen(s));
}

static bool put_number(rsc_decoder *d, rsc_strbuf *sb, double v) {
  char buf[40];
  return put(d, sb, buf, rsc__format_number(v, buf));
}

/* ---- Date.prototype.toString, in UTC -------------------------------------- */

static int digits(const char *s, size_t n, size_t *i, int count, long *out) {
  long v = 0;
  for (int k = 0; k < count; k++) {
    if (*i >= n || s[*i] < '0' || s[*i] > '9') return 0;
    v = v * 10 + (s[(*i)++] - '0');
  }
  *out = v;
  return 1;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; m 1-12, d may run
 * past the month, as MakeDay lets it). */
static long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* The ECMAScript date-time string format (what Date.prototype.toJSON
 * writes, and its shorter forms) to a time value in ms; false when the
 * text is not in it or the time is out of range. A date-time without an
 * offset is local time, which is UTC here. */
static bool parse_iso_date(const char *s, size_t n, double *tv) {
  size_t i = 0;
  long year, month = 1, day = 1, hh = 0, mm = 0, ss = 0, ms = 0;
  if (i < n && (s[i] == '+' || s[i] == '-')) {
    int neg = s[i++] == '-';
    if (!digits(s, n, &i, 6, &year)) return false;
    if (neg && year == 0) return false;
    if (neg) year = -year;
  } else if (!digits(s, n, &i, 4, &year)) {
    return false;
  }
  if (i < n && s[i] == '-') {
    i++;
    if (!digits(s, n, &i, 2, &month) || month < 1 || month > 12) return false;
    if (i < n && s[i] == '-') {
      i++;
      if (!digits(s, n, &i, 2, &day) || day < 1 || day > 31) return false;
    }
  }
  long offset_min = 0;
  if (i < n && (s[i] == 'T' || s[i] == 't')) {
    i++;
    if (!digits(s, n, &i, 2, &hh) || i >= n || s[i++] != ':' || !digits(s, n, &i, 2, &mm))
      return false;
    if (i < n && s[i] == ':') {
      i++;
      if (!digits(s, n, &i, 2, &ss)) return false;
      if (i < n && s[i] == '.') {
        i++;
        size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
          if (i - start < 3) ms = ms * 10 + (s[i] - '0');
          i++;
        }
        if (i == start) return false;
        for (size_t k = i - start; k < 3; k++) ms *= 10;
      }
    }
    if (hh > 24 || mm > 59 || ss > 59 || (hh == 24 && (mm || ss || ms))) return false;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
      i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
      int neg = s[i++] == '-';
      long oh, om;
      if (!digits(s, n, &i, 2, &oh) || i >= n || s[i++] != ':' || !digits(s, n, &i, 2, &om) ||
          oh > 23 || om > 59)
        return false;
      offset_min = (neg ? -1 : 1) * (oh * 60 + om);
    }
  }
  if (i != n) return false;
  double t = (double)days_from_civil(year, month, 1) + (double)(day - 1);
  t = t * 86400000.0 + (double)(hh * 3600000 + mm * 60000 + ss * 1000 + ms) -
      (double)offset_min * 60000.0;
  if (t < -8.64e15 || t > 8.64e15) return false;
  *tv = t;
  return true;
}

static bool put_date(rsc_decoder *d, rsc_strbuf *sb, const char *s, size_t n) {
  double tv;
  if (!parse_iso_date(s, n, &tv)) return put_c(d, sb, "Invalid Date");
  static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  long long ms = (long long)tv;
  long long days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
  long long in_day = ms - days * 86400000;
  /* civil from days (Howard Hinnant's algorithm) */
  long long z = days + 719468;
  long long era = (z >= 0 ? z : z - 146096) / 146097;
  long long doe = z - era * 146097;
  long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long y = yoe + era * 400;
  long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  long long mp = (5 * doy + 2) / 153;
  long long dd = doy - (153 * mp + 2) / 5 + 1;
  long long m = mp + (mp < 10 ? 3 : -9);
  y += m <= 2;
  int weekday = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday */
  char buf[96];
  int w = snprintf(buf, sizeof buf,
                   "%s %s %02lld %s%04lld %02lld:%02lld:%02lld GMT+0000 "
                   "(Coordinated Universal Time)",
                   wd[weekday], mon[m - 1], dd, y < 0 ? "-" : "", y < 0 ? -y : y, in_day / 3600000,
                   in_day / 60000 % 60, in_day / 1000 % 60);
  return put(d, sb, buf, (size_t)w);
}

/* ---- values ----------------------------------------------------------------- */

/* TypedArray.prototype.toString: the elements joined, as numbers. */
static bool put_typed_array(rsc_decoder *d, rsc_strbuf *sb, const rsc_node *v) {
  unsigned kind = v->sub;
  if (kind == RSC_ARRAY_BUFFER) return put_c(d, sb, "[object ArrayBuffer]");
  if (kind >= RSC_DATA_VIEW) return put_c(d, sb, "[object DataView]");
  size_t count = v->len / rsc__binary_elem_size(kind);
  for (size_t i = 0; i < count; i++) {
    if (i && !put(d, sb, ",", 1)) return false;
    double num;
    char big[24];
    int len = rsc__binary_elem_read(kind, v->u.bytes, i, &num, big);
    if (len ? !put(d, sb, big, (size_t)len) : !put_number(d, sb, num)) return false;
  }
  return true;
}

static bool has_own_to_string(const rsc_node *v) {
  rsc__iter it;
  for (rsc__iter_members(&it, v); rsc__next_member(&it);)
    if (it.klen == 8 && memcmp(it.key, "toString", 8) == 0) return true;
  return false;
}

/* A value's text (STRING, BIGINT, DATE). */
static bool put_text(rsc_decoder *d, rsc_strbuf *sb, const rsc_node *v) {
  uint32_t n;
  const char *t = rsc__text(v, &n);
  return put(d, sb, t, n);
}

/* String(v) of anything but an array (arrays: js_join). */
static bool put_value(rsc_decoder *d, rsc_strbuf *sb, const rsc_node *v, rsc_node *thrown) {
  switch (rsc__kind(v)) {
  case RSC_STRING:
  case RSC_BIGINT: return put_text(d, sb, v);
  case RSC_NUMBER: return put_number(d, sb, rsc__number(v));
  case RSC_BOOL: return put_c(d, sb, rsc__boolean(v) ? "true" : "false");
  case RSC_NULL: return put_c(d, sb, "null");
  case RSC_NONE:
  case RSC_UNDEFINED: return put_c(d, sb, "undefined");
  case RSC_SYMBOL:
    *thrown = rsc__type_error(d, "Cannot convert a Symbol value to a string");
    return false;
  case RSC_DATE: {
    uint32_t n;
    const char *t = rsc__text(v, &n);
    return put_date(d, sb, t, n);
  }
  case RSC_OBJECT:
    /* A "toString" member is data here, never a method, and valueOf
     * gives the object back: no primitive (OrdinaryToPrimitive). */
    if (has_own_to_string(v)) {
      *thrown = rsc__type_error(d, "Cannot convert object to primitive value");
      return false;
    }
    return put_c(d, sb, "[object Object]");
  case RSC_PROMISE: return put_c(d, sb, "[object Promise]");
  case RSC_MAP: return put_c(d, sb, "[object Map]");
  case RSC_SET: return put_c(d, sb, "[object Set]");
  case RSC_FORMDATA: return put_c(d, sb, "[object FormData]");
  case RSC_ITERATOR: return put_c(d, sb, "[object Array Iterator]");
  case RSC_BLOB: return put_c(d, sb, "[object Blob]");
  case RSC_BINARY: return put_typed_array(d, sb, v);
  case RSC_STREAM: {
    unsigned k = v->u.stream->kind;
    return put_c(d, sb,
                 k == RSC_STREAM_TEXT || k == RSC_STREAM_BYTES ? "[object ReadableStream]"
                                                               : "[object Object]");
  }
  case RSC_ERROR: {
    /* Error.prototype.toString */
    const rsc_errval *e = v->u.err;
    const char *name = e->name ? e->name : "Error";
    if (!*name) return put(d, sb, e->message, e->message_len);
    if (!e->message_len) return put_c(d, sb, name);
    return put_c(d, sb, name) && put(d, sb, ": ", 2) && put(d, sb, e->message, e->message_len);
  }
  default: /* elements, lazies; module exports and actions (jsstring.h) */
    return put_c(d, sb, "[object Object]");
  }
}

/* Array.prototype.join(","), nested arrays joined in place (iteratively:
 * input controls the depth). An array already being joined gives "" (V8's
 * cycle check); null and undefined items give "". */
typedef struct join_frame {
  rsc__iter it;
  uintptr_t identity; /* the array's: the cycle check */
} join_frame;

static void join_open(join_frame *f, const rsc_node *arr) {
  rsc__iter_items(&f->it, arr);
  f->identity = rsc__identity(arr);
}

static bool js_join(rsc_decoder *d, const rsc_node *arr, rsc_strbuf *sb, rsc_node *thrown) {
  join_frame local[16], *st = local;
  size_t top = 0, cap = 16;
  bool ok = true;
  join_open(&st[top++], arr);
  while (top) {
    join_frame *f = &st[top - 1];
    if (!rsc__next_item(&f->it)) {
      top--;
      continue;
    }
    if (f->it.index > 1 && !put(d, sb, ",", 1)) goto fail;
    const rsc_node *it = f->it.val;
    rsc_kind k = rsc__kind(it);
    if (k == RSC_NULL || k == RSC_UNDEFINED || k == RSC_NONE) continue;
    if (k != RSC_ARRAY) {
      if (!put_value(d, sb, it, thrown)) goto fail;
      continue;
    }
    bool cycle = false;
    uintptr_t id = rsc__identity(it);
    for (size_t j = 0; j < top && !cycle; j++) cycle = st[j].identity == id;
    if (cycle || rsc__items_len(it) == 0) continue;
    if (top == cap) {
      join_frame *bigger = (join_frame *)rsc__heap_alloc(&d->arena.alloc, 2 * cap * sizeof *bigger);
      if (!bigger) {
        rsc__alloc_fail(d);
        goto fail;
      }
      memcpy(bigger, st, top * sizeof *st);
      if (st != local) rsc__heap_free(&d->arena.alloc, st);
      st = bigger;
      cap *= 2;
    }
    join_open(&st[top++], it);
  }
  goto done;
fail:
  ok = false;
done:
  if (st != local) rsc__heap_free(&d->arena.alloc, st);
  return ok;
}

bool rsc__js_string(rsc_decoder *d, const rsc_node *v, rsc_strbuf *sb, rsc_node *thrown) {
  if (rsc__kind(v) == RSC_ARRAY) return js_join(d, v, sb, thrown);
  return put_value(d, sb, v, thrown);
}

void rsc__usv_in_place(char *s, size_t n) {
  for (size_t i = 0; i + 2 < n; i++) {
    uint8_t c = (uint8_t)s[i], c1 = (uint8_t)s[i + 1];
    if (c == 0xED && c1 >= 0xA0 && c1 <= 0xBF) {
      s[i] = (char)0xEF;
      s[i + 1] = (char)0xBF;
      s[i + 2] = (char)0xBD;
      i += 2;
    }
  }
}

bool rsc__js_string_node(rsc_decoder *d, const rsc_node *v, bool usv, rsc_node *out,
                         rsc_node *thrown) {
  if (v->kind == RSC_STRING && !usv && !(v->flags & NF_BORROWED)) {
    *out = *v;
    return true;
  }
  rsc_strbuf sb = {NULL, 0, 0};
  bool ok = rsc__js_string(d, v, &sb, thrown);
  char *s = ok ? rsc__strdup(d, sb.p ? sb.p : "", sb.len) : NULL;
  size_t n = sb.len;
  rsc__strbuf_free(d, &sb);
  if (!ok) return false;
  if (!s) {
    rsc__alloc_fail(d);
    return false;
  }
  if (usv) rsc__usv_in_place(s, n);
  *out = rsc__str(RSC_STRING, s, n);
  return true;
}
