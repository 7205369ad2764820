/* describe.h - how the byte report and the CLI (tree, stats, report,
 * rewrite) name what they show: whether an input is an HTML page, and what
 * an element's type slot stands for. Header-only, as symbols.h, so that the
 * library and the CLI, a client of the public header, share one copy.
 *
 * A type is named by what it is: a string is a host tag, a symbol a React
 * built-in by its display name, a client reference a component by its
 * export name (a default export by its module's file name), a fulfilled
 * lazy is followed, up to 8 hops. */
#ifndef RSC_DESCRIBE_H
#define RSC_DESCRIBE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "rscflight.h"
#include "symbols.h"

/* Whether the input is an HTML page: its first byte after whitespace and a
 * UTF-8 byte-order mark is '<'. A Flight payload opens with a row id (hex)
 * or a dev row (':'), never with markup. */
static inline int rsc__looks_like_page(const char *buf, size_t len) {
  size_t i = 0;
  if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < len &&
         (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\f'))
    i++;
  return i < len && buf[i] == '<';
}

/* A number as JavaScript's String(v) prints it (the shortest text that
 * reads back as v). */
static inline void rsc__js_number(double v, char *buf, size_t cap) {
  if (isnan(v)) snprintf(buf, cap, "NaN");
  else if (isinf(v)) snprintf(buf, cap, v > 0 ? "Infinity" : "-Infinity");
  else if (v == 0) snprintf(buf, cap, "0");
  else if (fabs(v) < 1e21 && v == floor(v)) snprintf(buf, cap, "%.0f", v);
  else {
    for (int prec = 1; prec <= 17; prec++) {
      snprintf(buf, cap, "%.*g", prec, v);
      if (strtod(buf, NULL) == v) break;
    }
  }
}

/* Copies s[0..n) into dst (cap > 0 bytes) as a C string: at most cap-1
 * bytes, cut on a UTF-8 boundary. */
static inline void rsc__copy_cut(char *dst, size_t cap, const char *s, size_t n) {
  if (!s) n = 0;
  if (n >= cap) {
    n = cap - 1;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  }
  if (n) memcpy(dst, s, n);
  dst[n] = '\0';
}

/* What an element's type slot stands for. */
typedef enum rsc__type_kind {
  RSC__TYPE_HOST,    /* "div": name is the tag                                  */
  RSC__TYPE_CLIENT,  /* a client reference: name, plus module "id#export"       */
  RSC__TYPE_BUILTIN, /* a React symbol: Fragment, Suspense, ...                 */
  RSC__TYPE_LAZY,    /* a lazy type whose chunk is not fulfilled: name "Lazy"   */
  RSC__TYPE_OTHER    /* anything else: "(kind)", or "(lazy chain)" past 8 hops  */
} rsc__type_kind;

/* One description: the caller sets the buffers (caps > 0), the calls
 * below the rest. Names are cut to fit on a UTF-8 boundary. */
typedef struct rsc__type_desc {
  char *name; /* NUL-terminated display name */
  size_t name_cap;
  char *module; /* CLIENT: "app/Button.js#Button", else "" */
  size_t module_cap;
  rsc__type_kind kind;
  const rsc_chunk *lazy; /* LAZY: the chunk that is not fulfilled (may be NULL) */
} rsc__type_desc;

/* A client reference (rsc_client_ref_*): kind CLIENT, its module and its
 * display name: the export name, or for a default, "*" (CommonJS) or ""
 * export the module's file name without extension. */
static inline void rsc__describe_client(const rsc_node *ref, rsc__type_desc *out) {
  char id[200] = "", export_name[128] = "", num[64];
  size_t n;
  const rsc_node *idn = rsc_client_ref_id(ref);
  const char *s = rsc_node_string(idn, &n);
  if (s) rsc__copy_cut(id, sizeof id, s, n);
  else if (rsc_node_kind(idn) == RSC_NUMBER) {
    rsc__js_number(rsc_node_number(idn), num, sizeof num);
    rsc__copy_cut(id, sizeof id, num, strlen(num));
  }
  s = rsc_node_string(rsc_client_ref_name(ref), &n);
  if (s) rsc__copy_cut(export_name, sizeof export_name, s, n);
  out->kind = RSC__TYPE_CLIENT;
  out->lazy = NULL;
  snprintf(out->module, out->module_cap, "%.127s#%.120s", id, export_name);
  if (export_name[0] && strcmp(export_name, "default") != 0 && strcmp(export_name, "*") != 0) {
    rsc__copy_cut(out->name, out->name_cap, export_name, strlen(export_name));
    return;
  }
  const char *base = strrchr(id, '/');
  base = base ? base + 1 : id;
  const char *dot = strrchr(base, '.');
  n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
  rsc__copy_cut(out->name, out->name_cap, base, n);
  if (!out->name[0]) rsc__copy_cut(out->name, out->name_cap, id, strlen(id));
}

/* An element type node (rsc_element_type), fulfilled lazies followed; NULL
 * describes as OTHER "(none)". Reading a lazy's status may initialise its
 * chunk (see rsc_chunk_status). */
static inline void rsc__describe_type(const rsc_node *type, rsc__type_desc *out) {
  out->name[0] = out->module[0] = '\0';
  out->lazy = NULL;
  for (int hops = 0; hops < 8; hops++) {
    size_t n;
    const char *s;
    rsc_kind k = rsc_node_kind(type);
    switch (k) {
    case RSC_STRING:
      s = rsc_node_string(type, &n);
      out->kind = RSC__TYPE_HOST;
      rsc__copy_cut(out->name, out->name_cap, s, n);
      return;
    case RSC_SYMBOL: {
      n = 0;
      s = rsc_node_string(type, &n);
      const char *sym = rsc__react_symbol_name(s, n);
      out->kind = RSC__TYPE_BUILTIN;
      if (sym) snprintf(out->name, out->name_cap, "%s", sym);
      else snprintf(out->name, out->name_cap, "Symbol(%.*s)", (int)n, s ? s : "");
      return;
    }
    case RSC_CLIENT_REF: rsc__describe_client(type, out); return;
    case RSC_LAZY:
    case RSC_PROMISE: {
      const rsc_chunk *c = rsc_node_chunk(type);
      if (c && rsc_chunk_status(c) == RSC_CHUNK_FULFILLED) {
        type = rsc_chunk_value(c);
        continue;
      }
      out->kind = RSC__TYPE_LAZY;
      out->lazy = c;
      snprintf(out->name, out->name_cap, "Lazy");
      return;
    }
    default:
      out->kind = RSC__TYPE_OTHER;
      snprintf(out->name, out->name_cap, "(%s)", rsc_kind_name(k));
      return;
    }
  }
  out->kind = RSC__TYPE_OTHER;
  snprintf(out->name, out->name_cap, "(lazy chain)");
}

/* The chunk id an all-hex reference id hex[0..n) names, as the decoder
 * reads it (rsc__parse_ref_id): up to 12 digits exactly, longer ones as
 * parseInt does, in a double, INT64_MIN + 1 from 9.2e18 on. */
static inline int64_t rsc__hex_ref_id(const char *hex, size_t n) {
  if (n <= 12) {
    uint64_t v;
    rsc__hex_prefix((const uint8_t *)hex, n, &v);
    return (int64_t)v;
  }
  double v = 0;
  for (size_t i = 0; i < n; i++) v = v * 16 + rsc__hex_digit((uint8_t)hex[i]);
  return v >= 9.2e18 ? INT64_MIN + 1 : (int64_t)v;
}

/* Whether s[0..n) is one or more (lowercase) hex digits. */
static inline int rsc__all_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (rsc__hex_digit((uint8_t)s[i]) < 0) return 0;
  return n > 0;
}

/* What the raw JSON string s[0..n) in an element's type slot names, for
 * the decoder d (may be NULL): "$L<hex>" and "$<hex>" the chunk they
 * reference, when fulfilled, as rsc__describe_type, else OTHER
 * "<text> (unresolved)"; "$S<key>" a React symbol; any other "$" string
 * OTHER by its text; else a host tag ("$$" escapes a leading '$').
 * Names from the slot's text keep at most show_max bytes of it ('$'
 * included; 100 of a symbol's key, of an unresolved reference's text),
 * cut on a UTF-8 boundary, and then what fits out->name. */
static inline void rsc__describe_raw_type(rsc_decoder *d, const char *s, size_t n, size_t show_max,
                                          rsc__type_desc *out) {
  out->name[0] = out->module[0] = '\0';
  out->lazy = NULL;
  const char *hex = NULL;
  size_t hn = 0;
  if (n >= 3 && s[0] == '$' && s[1] == 'L' && rsc__all_hex(s + 2, n - 2)) hex = s + 2, hn = n - 2;
  else if (n >= 2 && s[0] == '$' && rsc__all_hex(s + 1, n - 1)) hex = s + 1, hn = n - 1;
  if (hex) {
    const rsc_chunk *c = d ? rsc_decoder_chunk(d, rsc__hex_ref_id(hex, hn)) : NULL;
    if (c && rsc_chunk_status(c) == RSC_CHUNK_FULFILLED) {
      rsc__describe_type(rsc_chunk_value(c), out);
      return;
    }
    out->kind = RSC__TYPE_OTHER;
    snprintf(out->name, out->name_cap, "%.*s (unresolved)", (int)(n < 100 ? n : 100), s);
    return;
  }
  if (n >= 2 && s[0] == '$' && s[1] == 'S') {
    const char *sym = rsc__react_symbol_name(s + 2, n - 2);
    out->kind = RSC__TYPE_BUILTIN;
    if (sym) {
      snprintf(out->name, out->name_cap, "%s", sym);
    } else {
      char key[101];
      rsc__copy_cut(key, sizeof key, s + 2, n - 2);
      snprintf(out->name, out->name_cap, "Symbol(%s)", key);
    }
    return;
  }
  char shown[256];
  rsc__copy_cut(shown, show_max < sizeof shown - 1 ? show_max + 1 : sizeof shown, s, n);
  const char *name = shown;
  if (n >= 1 && s[0] == '$' && (n == 1 || s[1] != '$')) {
    out->kind = RSC__TYPE_OTHER;
  } else {
    out->kind = RSC__TYPE_HOST;
    if (n && s[0] == '$') name++;
  }
  rsc__copy_cut(out->name, out->name_cap, name, strlen(name));
}

#endif
