/* tree.c - `rscflight tree`: the element structure of a payload, one line
 * per element, indented by depth:
 *
 *   <div className="x">
 *     <Suspense fallback={<p>"Loading"}>
 *       <Button (client: mod/Button.js#Button) key="a" label="Go"/>
 *       [lazy 3: pending]
 *
 * Host tags, React built-ins (Fragment, Suspense, ...) and client components
 * are named; keys and props are shown abbreviated; children are React's
 * children (arrays flatten, null/undefined/booleans render nothing). A lazy
 * or promise shows as a marker: "[lazy 3] " before its value when it
 * arrived, "[lazy 3: pending]" (or blocked, halted, rejected: reason) when
 * not. Values around the elements (a root object, say) are shown as
 * "key: value" lines, expanded only where they hold elements.
 *
 * A thin client of include/rscflight.h: it only walks the decoded graph. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "describe.h"
#include "symbols.h"

/* Recursion guards: the graph may be deep, shared or cyclic (hostile input),
 * and the walk is recursive. Past these limits a "…" line stands in. */
enum { TREE_MAX_LEVEL = 2000, TREE_DEFAULT_PROPS = 6, TREE_TEXT_CHARS = 60, TREE_PROP_CHARS = 24 };
static const unsigned long TREE_MAX_VISITS = 2000000;

typedef struct tree_opts {
  int color;          /* 1: ANSI colors                                   */
  int full;           /* 1: no abbreviation of strings and props          */
  int finish;         /* 0: show the stream as it stands (--no-finish)     */
  int strict;         /* 1: exit 1 when the stream ended early (--strict)  */
  unsigned max_depth; /* levels printed before "…" (0: all)                */
  size_t chunk;       /* feed size (0: whole input)                        */
  bool html;          /* the input is an HTML page (--html)                */
  rsc_options decode; /* the decode flags (cli_decode_flag)                */
} tree_opts;

/* Output state: the stream, colors, and the ancestors being printed (by
 * identity) so that a cycle prints "[cycle]" instead of recursing. A
 * counting filter over the ancestors' identities makes the common "not an
 * ancestor" answer O(1); only a filter hit scans the stack. */
enum { TREE_FILTER = 4096 };
typedef struct tree_out {
  FILE *f;
  const tree_opts *o;
  uintptr_t stack[TREE_MAX_LEVEL + 1];
  uint16_t filter[TREE_FILTER];
  unsigned level;
  unsigned long visits;
  int stopped;
} tree_out;

/* MARK: colored output --------------------------------------------------- */

typedef enum role {
  R_PLAIN,
  R_HOST,
  R_CLIENT,
  R_BUILTIN,
  R_NOTE,
  R_KEY,
  R_PROP,
  R_STRING,
  R_PENDING,
  R_REJECTED,
  R_LAZY
} role;

/* SGR parameters per role: tags blue, components magenta, built-ins cyan,
 * strings green, keys and pending markers yellow, rejections red. */
static const char *const role_sgr[] = {"",   "1;34", "1;35", "1;36", "2", "33",
                                       "36", "32",   "33",   "1;31", "2"};

static void color_on(tree_out *t, role r) {
  if (t->o->color && r != R_PLAIN) fprintf(t->f, "\033[%sm", role_sgr[r]);
}

static void color_off(tree_out *t, role r) {
  if (t->o->color && r != R_PLAIN) fputs("\033[0m", t->f);
}

static void put(tree_out *t, role r, const char *s) {
  color_on(t, r);
  fputs(s, t->f);
  color_off(t, r);
}

static void putf(tree_out *t, role r, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  put(t, r, buf);
}

static void indent(tree_out *t, unsigned depth) {
  for (unsigned i = 0; i < depth; i++) fputs("  ", t->f);
}

static void newline(tree_out *t) { fputc('\n', t->f); }

/* Writes s (len bytes of UTF-8) escaped as a JSON string body: quotes,
 * backslashes and control characters escaped, at most max_chars code points
 * (0: all), "…" when cut. */
static void put_escaped(tree_out *t, const char *s, size_t len, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c & 0xC0) != 0x80 && max_chars && chars++ == max_chars) {
      fputs("…", t->f);
      return;
    }
    if (c == '"' || c == '\\') fprintf(t->f, "\\%c", c);
    else if (c == '\n') fputs("\\n", t->f);
    else if (c == '\t') fputs("\\t", t->f);
    else if (c == '\r') fputs("\\r", t->f);
    else if (c < 0x20 || c == 0x7f) fprintf(t->f, "\\u%04x", c);
    else fputc(c, t->f);
  }
}

static void put_quoted(tree_out *t, role r, const char *s, size_t len, size_t max_chars) {
  color_on(t, r);
  fputc('"', t->f);
  put_escaped(t, s, len, t->o->full ? 0 : max_chars);
  fputc('"', t->f);
  color_off(t, r);
}

/* MARK: naming ------------------------------------------------------------ */

/* Formats a number the way JavaScript prints it, near enough: integers
 * without a fraction, others with the fewest digits that read back. */
const char *cli_symbol_name(const char *key, char *buf, size_t cap) {
  const char *name = key ? rsc__react_symbol_name(key, strlen(key)) : NULL;
  if (name) snprintf(buf, cap, "%s", name);
  else snprintf(buf, cap, "Symbol(%s)", key ? key : "");
  return buf;
}

/* The CLI's description of a type (src/describe.h): into out's buffers. */
static rsc__type_desc cli_desc(cli_type *out) {
  return (rsc__type_desc){.name = out->name,
                          .name_cap = sizeof out->name,
                          .module = out->module,
                          .module_cap = sizeof out->module};
}

static cli_type_kind cli_kind(rsc__type_kind k) {
  switch (k) {
  case RSC__TYPE_HOST: return CLI_TYPE_HOST;
  case RSC__TYPE_CLIENT: return CLI_TYPE_CLIENT;
  case RSC__TYPE_BUILTIN: return CLI_TYPE_BUILTIN;
  case RSC__TYPE_LAZY: return CLI_TYPE_LAZY;
  case RSC__TYPE_OTHER: break;
  }
  return CLI_TYPE_OTHER;
}

static void describe_client(const rsc_node *ref, cli_type *out) {
  rsc__type_desc d = cli_desc(out);
  rsc__describe_client(ref, &d);
  out->kind = cli_kind(d.kind);
}

void cli_describe_type(const rsc_node *type, cli_type *out) {
  memset(out, 0, sizeof *out);
  out->chunk_id = -1;
  rsc__type_desc d = cli_desc(out);
  rsc__describe_type(type, &d);
  out->kind = cli_kind(d.kind);
  if (d.kind == RSC__TYPE_LAZY) {
    out->chunk_id = rsc_chunk_id(d.lazy);
    out->state = rsc_chunk_status(d.lazy);
  }
}

void cli_describe_raw_type(rsc_decoder *d, const char *s, size_t n, cli_type *out) {
  memset(out, 0, sizeof *out);
  out->chunk_id = -1;
  rsc__type_desc t = cli_desc(out);
  rsc__describe_raw_type(d, s, n, 100, &t);
  out->kind = cli_kind(t.kind);
  if (t.kind == RSC__TYPE_LAZY) {
    out->chunk_id = rsc_chunk_id(t.lazy);
    out->state = rsc_chunk_status(t.lazy);
  }
}

static const char *state_name(rsc_chunk_state st) {
  switch (st) {
  case RSC_CHUNK_PENDING: return "pending";
  case RSC_CHUNK_BLOCKED: return "blocked";
  case RSC_CHUNK_FULFILLED: return "fulfilled";
  case RSC_CHUNK_REJECTED: return "rejected";
  case RSC_CHUNK_HALTED: return "halted";
  }
  return "?";
}

/* MARK: abbreviated values ------------------------------------------------ */

static void abbrev(tree_out *t, const rsc_node *v, int nested);
static int renders_something(const rsc_node *v, int budget);

static const char *plural(size_t n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

/* An element in one token: <p/>, <p>"text", <p>… */
static void abbrev_element(tree_out *t, const rsc_node *el) {
  cli_type ty;
  cli_describe_type(rsc_element_type(el), &ty);
  role r = ty.kind == CLI_TYPE_HOST      ? R_HOST
           : ty.kind == CLI_TYPE_CLIENT  ? R_CLIENT
           : ty.kind == CLI_TYPE_BUILTIN ? R_BUILTIN
                                         : R_NOTE;
  put(t, R_PLAIN, "<");
  put(t, r, ty.name);
  const rsc_node *children = rsc_object_get(rsc_element_props(el), "children", 8);
  size_t n;
  const char *s = rsc_node_string(children, &n);
  if (rsc_node_kind(children) == RSC_STRING) {
    put(t, R_PLAIN, ">");
    put_quoted(t, R_STRING, s, n, TREE_PROP_CHARS);
  } else if (renders_something(children, 4)) {
    put(t, R_PLAIN, ">…");
  } else {
    put(t, R_PLAIN, "/>");
  }
}

/* An error value: Error("message", digest "d"). */
static void abbrev_error(tree_out *t, const rsc_node *e) {
  const char *msg = rsc_error_message(e);
  const char *digest = rsc_error_digest(e);
  put(t, R_REJECTED, "Error(");
  put_quoted(t, R_REJECTED, msg ? msg : "", msg ? strlen(msg) : 0, 80);
  if (digest) {
    put(t, R_REJECTED, ", digest ");
    put_quoted(t, R_REJECTED, digest, strlen(digest), 40);
  }
  put(t, R_REJECTED, ")");
}

static void abbrev_chunk(tree_out *t, const char *word, const rsc_chunk *c, int nested) {
  rsc_chunk_state st = rsc_chunk_status(c);
  if (st == RSC_CHUNK_FULFILLED && !nested) {
    abbrev(t, rsc_chunk_value(c), 1);
    return;
  }
  int64_t id = rsc_chunk_id(c);
  if (id >= 0)
    putf(t, st == RSC_CHUNK_REJECTED ? R_REJECTED : R_PENDING, "%s %llx (%s)", word,
         (unsigned long long)id, state_name(st));
  else putf(t, st == RSC_CHUNK_REJECTED ? R_REJECTED : R_PENDING, "%s (%s)", word, state_name(st));
}

/* One value in one token, JavaScript-ish: "text", 42, [3 items], {2 keys},
 * Map(2), <p>…; nested: inside another abbreviation (no deeper look). */
static void abbrev(tree_out *t, const rsc_node *v, int nested) {
  char num[64];
  size_t n = 0;
  const char *s = rsc_node_string(v, &n);
  rsc_kind k = rsc_node_kind(v);
  if (!s) s = "";
  switch (k) {
  case RSC_NONE: put(t, R_NOTE, "?"); return;
  case RSC_NULL: put(t, R_PLAIN, "null"); return;
  case RSC_UNDEFINED: put(t, R_PLAIN, "undefined"); return;
  case RSC_BOOL: put(t, R_PLAIN, rsc_node_bool(v) ? "true" : "false"); return;
  case RSC_NUMBER:
    rsc__js_number(rsc_node_number(v), num, sizeof num);
    put(t, R_PLAIN, num);
    return;
  case RSC_STRING: put_quoted(t, R_STRING, s, n, TREE_PROP_CHARS); return;
  case RSC_BIGINT: putf(t, R_PLAIN, "%.60sn", s); return;
  case RSC_DATE: putf(t, R_PLAIN, "Date(%.40s)", s); return;
  case RSC_SYMBOL: putf(t, R_BUILTIN, "Symbol(%.60s)", s); return;
  case RSC_TEMP_REF: putf(t, R_NOTE, "temporary reference %.40s", s); return;
  case RSC_ARRAY:
    n = rsc_node_len(v);
    putf(t, R_PLAIN, n ? "[%zu %s]" : "[]", n, plural(n, "item", "items"));
    return;
  case RSC_OBJECT:
    n = rsc_node_len(v);
    putf(t, R_PLAIN, n ? "{%zu %s}" : "{}", n, plural(n, "key", "keys"));
    return;
  case RSC_ELEMENT:
    if (nested) put(t, R_PLAIN, "<…>");
    else abbrev_element(t, v);
    return;
  case RSC_LAZY: abbrev_chunk(t, "lazy", rsc_node_chunk(v), nested); return;
  case RSC_PROMISE: abbrev_chunk(t, "promise", rsc_node_chunk(v), 1); return;
  case RSC_CLIENT_REF: {
    cli_type ty;
    describe_client(v, &ty);
    putf(t, R_CLIENT, "client(%s)", ty.module);
    return;
  }
  case RSC_SERVER_REF:
    s = rsc_node_string(rsc_server_ref_id(v), &n);
    if (!s) s = "";
    putf(t, R_NOTE, "server(%.*s)", (int)(n > 100 ? 100 : n), s);
    return;
  case RSC_MAP:
  case RSC_FORMDATA:
    putf(t, R_PLAIN, "%s(%zu)", k == RSC_MAP ? "Map" : "FormData", rsc_node_len(v) / 2);
    return;
  case RSC_SET: putf(t, R_PLAIN, "Set(%zu)", rsc_node_len(v)); return;
  case RSC_ITERATOR: putf(t, R_PLAIN, "Iterator(%zu)", rsc_node_len(v)); return;
  case RSC_BLOB:
    rsc_node_bytes(v, &n);
    putf(t, R_PLAIN, "Blob(%zu bytes)", n);
    return;
  case RSC_BINARY:
    rsc_node_bytes(v, &n);
    putf(t, R_PLAIN, "%s(%zu bytes)", rsc_binary_kind_name(rsc_node_binary_kind(v)), n);
    return;
  case RSC_STREAM: {
    static const char *const kinds[] = {"ReadableStream", "ReadableStream(bytes)", "AsyncIterable",
                                        "AsyncIterator"};
    static const char *const ends[] = {"open", "done", "errored"};
    rsc_stream_kind sk = rsc_stream_kind_of(v);
    rsc_stream_end se = rsc_stream_end_of(v);
    putf(t, R_PLAIN, "%s[%zu, %s]", kinds[sk <= RSC_STREAM_ITERATOR ? sk : 0], rsc_stream_len(v),
         ends[se <= RSC_STREAM_ERRORED ? se : 0]);
    return;
  }
  case RSC_ERROR: abbrev_error(t, v); return;
  case RSC_FUNCTION: put(t, R_NOTE, "function"); return;
  }
  putf(t, R_NOTE, "(%s)", rsc_kind_name(k));
}

/* MARK: the walk ----------------------------------------------------------- */

static void walk_children(tree_out *t, const rsc_node *v, unsigned depth, int started);
static void walk_data(tree_out *t, const rsc_node *v, unsigned depth, int started);

static size_t filter_slot(uintptr_t id) {
  return (size_t)((id >> 4) ^ (id >> 16)) & (TREE_FILTER - 1);
}

static int is_ancestor(const tree_out *t, uintptr_t id) {
  if (!id || !t->filter[filter_slot(id)]) return 0;
  for (unsigned i = 0; i < t->level; i++)
    if (t->stack[i] == id) return 1;
  return 0;
}

/* Enters a node: 0 (after printing a stand-in line) when it is an ancestor
 * of itself, too deep, or the output budget is spent. */
static int enter(tree_out *t, const rsc_node *v, unsigned depth, int started) {
  const char *why = NULL;
  uintptr_t id = rsc_node_identity(v);
  if (t->stopped) return 0;
  if (++t->visits > TREE_MAX_VISITS) {
    t->stopped = 1;
    why = "… (output stopped: too many nodes)";
  } else if (t->level >= TREE_MAX_LEVEL || (t->o->max_depth && depth >= t->o->max_depth)) {
    why = "…";
  } else if (is_ancestor(t, id)) {
    why = "[cycle]";
  }
  if (why) {
    if (!started) indent(t, depth);
    put(t, R_NOTE, why);
    newline(t);
    return 0;
  }
  t->stack[t->level++] = id;
  if (id) t->filter[filter_slot(id)]++;
  return 1;
}

static void leave(tree_out *t) {
  uintptr_t id = t->stack[--t->level];
  if (id) t->filter[filter_slot(id)]--;
}

/* Whether v renders anything as React children (looking a few levels in). */
static int renders_something(const rsc_node *v, int budget) {
  switch (rsc_node_kind(v)) {
  case RSC_NONE:
  case RSC_NULL:
  case RSC_UNDEFINED:
  case RSC_BOOL: return 0;
  case RSC_ARRAY:
  case RSC_ITERATOR:
  case RSC_SET:
    if (budget <= 0) return 1;
    for (size_t i = 0, n = rsc_node_len(v); i < n; i++)
      if (renders_something(rsc_node_at(v, i), budget - 1)) return 1;
    return 0;
  default: return 1;
  }
}

/* Whether a data value holds an element or a lazy somewhere (bounded). */
static int holds_elements(const rsc_node *v, int *budget, int depth) {
  if (--*budget < 0 || depth > 32) return 0;
  switch (rsc_node_kind(v)) {
  case RSC_ELEMENT:
  case RSC_LAZY: return 1;
  case RSC_OBJECT:
    for (size_t i = 0, n = rsc_node_len(v); i < n; i++)
      if (holds_elements(rsc_object_value(v, i), budget, depth + 1)) return 1;
    return 0;
  case RSC_ARRAY:
  case RSC_ITERATOR:
  case RSC_SET:
    for (size_t i = 0, n = rsc_node_len(v); i < n; i++)
      if (holds_elements(rsc_node_at(v, i), budget, depth + 1)) return 1;
    return 0;
  default: return 0;
  }
}

static void print_type(tree_out *t, const cli_type *ty) {
  switch (ty->kind) {
  case CLI_TYPE_HOST: put(t, R_HOST, ty->name); break;
  case CLI_TYPE_BUILTIN: put(t, R_BUILTIN, ty->name); break;
  case CLI_TYPE_CLIENT:
    put(t, R_CLIENT, ty->name);
    putf(t, R_NOTE, " (client: %s)", ty->module);
    break;
  case CLI_TYPE_LAZY:
    put(t, R_PENDING, ty->name);
    if (ty->chunk_id >= 0)
      putf(t, R_NOTE, " (lazy %llx: %s)", (unsigned long long)ty->chunk_id, state_name(ty->state));
    else putf(t, R_NOTE, " (lazy: %s)", state_name(ty->state));
    break;
  case CLI_TYPE_OTHER: put(t, R_NOTE, ty->name); break;
  }
}

static void print_key(tree_out *t, const rsc_node *key) {
  size_t n;
  const char *s = rsc_node_string(key, &n);
  rsc_kind k = rsc_node_kind(key);
  if (k == RSC_NONE || k == RSC_NULL || k == RSC_UNDEFINED) return;
  if (s && k == RSC_STRING) {
    color_on(t, R_KEY);
    fputs(" key=\"", t->f);
    put_escaped(t, s, n, 0);
    fputc('"', t->f);
    color_off(t, R_KEY);
  } else {
    put(t, R_KEY, " key=");
    put(t, R_KEY, "{");
    abbrev(t, key, 1);
    put(t, R_KEY, "}");
  }
}

/* Props other than children: name="text" or name={value}, at most
 * TREE_DEFAULT_PROPS of them (all with --full), then "…+N". */
static void print_props(tree_out *t, const rsc_node *props) {
  rsc_kind k = rsc_node_kind(props);
  if (k == RSC_UNDEFINED || k == RSC_NONE || k == RSC_NULL) return;
  if (k != RSC_OBJECT) {
    put(t, R_PLAIN, " {...");
    abbrev(t, props, 0);
    put(t, R_PLAIN, "}");
    return;
  }
  size_t n = rsc_node_len(props), shown = 0, hidden = 0;
  for (size_t i = 0; i < n; i++) {
    size_t klen;
    const char *key = rsc_object_key(props, i, &klen);
    if (key && klen == 8 && memcmp(key, "children", 8) == 0) continue;
    if (!t->o->full && shown == TREE_DEFAULT_PROPS) {
      hidden++;
      continue;
    }
    shown++;
    const rsc_node *v = rsc_object_value(props, i);
    put(t, R_PLAIN, " ");
    color_on(t, R_PROP);
    put_escaped(t, key ? key : "", klen, 0);
    color_off(t, R_PROP);
    put(t, R_PLAIN, "=");
    if (rsc_node_kind(v) == RSC_STRING) {
      size_t len;
      const char *s = rsc_node_string(v, &len);
      put_quoted(t, R_STRING, s, len, TREE_PROP_CHARS);
    } else {
      put(t, R_PLAIN, "{");
      abbrev(t, v, 0);
      put(t, R_PLAIN, "}");
    }
  }
  if (hidden) putf(t, R_NOTE, " …+%zu", hidden);
}

/* One element: its line, then its children one level deeper. A lone text
 * child stays on the element's line. */
static void walk_element(tree_out *t, const rsc_node *el, unsigned depth, int started) {
  if (!enter(t, el, depth, started)) return;
  if (!started) indent(t, depth);
  cli_type ty;
  cli_describe_type(rsc_element_type(el), &ty);
  const rsc_node *props = rsc_element_props(el);
  put(t, R_PLAIN, "<");
  print_type(t, &ty);
  print_key(t, rsc_element_key(el));
  print_props(t, props);
  const rsc_node *children = rsc_object_get(props, "children", 8);
  rsc_kind ck = rsc_node_kind(children);
  if (!renders_something(children, 4)) {
    put(t, R_PLAIN, "/>");
    newline(t);
  } else if (ck == RSC_STRING) {
    size_t n;
    const char *s = rsc_node_string(children, &n);
    put(t, R_PLAIN, ">");
    put_quoted(t, R_STRING, s, n, TREE_TEXT_CHARS);
    newline(t);
  } else {
    put(t, R_PLAIN, ">");
    newline(t);
    walk_children(t, children, depth + 1, 0);
  }
  leave(t);
}

/* A rejected chunk's reason, in a marker. */
static void put_reason(tree_out *t, const rsc_node *reason) {
  if (rsc_node_kind(reason) == RSC_ERROR) {
    const char *msg = rsc_error_message(reason);
    const char *digest = rsc_error_digest(reason);
    color_on(t, R_REJECTED);
    put_escaped(t, msg ? msg : "", msg ? strlen(msg) : 0, t->o->full ? 0 : 80);
    color_off(t, R_REJECTED);
    if (digest) {
      put(t, R_REJECTED, " (digest ");
      put_quoted(t, R_REJECTED, digest, strlen(digest), 40);
      put(t, R_REJECTED, ")");
    }
  } else {
    abbrev(t, reason, 1);
  }
}

/* A lazy or promise. Arrived: "[lazy 3] " then its value on the same line
 * when that is one line's worth, else on its own line with the value one
 * level deeper. Internal chunks (id -1: an element that was blocked) are
 * transparent once fulfilled. Not arrived: a marker line. */
static void walk_chunk(tree_out *t, const rsc_node *v, unsigned depth, int started,
                       int as_children) {
  const char *word = rsc_node_kind(v) == RSC_PROMISE ? "promise" : "lazy";
  const rsc_chunk *c = rsc_node_chunk(v);
  rsc_chunk_state st = rsc_chunk_status(c);
  int64_t id = rsc_chunk_id(c);
  char label[64];
  if (id >= 0) snprintf(label, sizeof label, "[%s %llx", word, (unsigned long long)id);
  else snprintf(label, sizeof label, "[%s", word);
  if (!enter(t, v, depth, started)) return;
  if (st == RSC_CHUNK_FULFILLED) {
    const rsc_node *val = rsc_chunk_value(c);
    rsc_kind k = rsc_node_kind(val);
    int inline_value =
        k == RSC_ELEMENT || k == RSC_STRING || k == RSC_NUMBER || k == RSC_LAZY || k == RSC_PROMISE;
    if (id < 0 && (inline_value || started)) {
      if (as_children) walk_children(t, val, depth, started);
      else walk_data(t, val, depth, started);
    } else if (inline_value) {
      if (!started) indent(t, depth);
      putf(t, R_LAZY, "%s] ", label);
      if (as_children) walk_children(t, val, depth, 1);
      else walk_data(t, val, depth, 1);
    } else {
      if (!started) indent(t, depth);
      putf(t, R_LAZY, "%s]", label);
      newline(t);
      if (as_children) walk_children(t, val, depth + 1, 0);
      else walk_data(t, val, depth + 1, 0);
    }
  } else {
    if (!started) indent(t, depth);
    if (st == RSC_CHUNK_REJECTED) {
      putf(t, R_REJECTED, "%s: rejected: ", label);
      put_reason(t, rsc_chunk_reason(c));
      put(t, R_REJECTED, "]");
    } else {
      putf(t, st == RSC_CHUNK_HALTED ? R_NOTE : R_PENDING, "%s: %s]", label, state_name(st));
    }
    newline(t);
  }
  leave(t);
}

/* React children: arrays and iterables flatten, null, undefined and
 * booleans render nothing, text is a quoted line. */
static void walk_children(tree_out *t, const rsc_node *v, unsigned depth, int started) {
  switch (rsc_node_kind(v)) {
  case RSC_NONE:
  case RSC_NULL:
  case RSC_UNDEFINED:
  case RSC_BOOL:
    if (started) newline(t);
    return;
  case RSC_ARRAY:
  case RSC_ITERATOR:
  case RSC_SET: {
    size_t n = rsc_node_len(v);
    if (started && !renders_something(v, 4)) {
      newline(t);
      return;
    }
    if (!enter(t, v, depth, started)) return;
    for (size_t i = 0; i < n; i++) {
      const rsc_node *item = rsc_node_at(v, i);
      if (!renders_something(item, 4)) continue;
      walk_children(t, item, depth, started);
      started = 0;
    }
    leave(t);
    return;
  }
  case RSC_ELEMENT: walk_element(t, v, depth, started); return;
  case RSC_LAZY:
  case RSC_PROMISE: walk_chunk(t, v, depth, started, 1); return;
  case RSC_STRING: {
    size_t n;
    const char *s = rsc_node_string(v, &n);
    if (!started) indent(t, depth);
    put_quoted(t, R_STRING, s, n, TREE_TEXT_CHARS);
    newline(t);
    return;
  }
  default:
    if (!started) indent(t, depth);
    if (rsc_node_kind(v) == RSC_NUMBER || rsc_node_kind(v) == RSC_BIGINT) abbrev(t, v, 0);
    else {
      put(t, R_PLAIN, "{");
      abbrev(t, v, 0);
      put(t, R_PLAIN, "}");
    }
    newline(t);
    return;
  }
}

/* Members of an object, or items of an array, as "key: value" lines. */
static void walk_members(tree_out *t, const rsc_node *v, unsigned depth) {
  int is_object = rsc_node_kind(v) == RSC_OBJECT;
  for (size_t i = 0, n = rsc_node_len(v); i < n && !t->stopped; i++) {
    indent(t, depth);
    if (is_object) {
      size_t klen;
      const char *key = rsc_object_key(v, i, &klen);
      color_on(t, R_PROP);
      put_escaped(t, key ? key : "", klen, 0);
      color_off(t, R_PROP);
      put(t, R_PLAIN, ": ");
      walk_data(t, rsc_object_value(v, i), depth, 1);
    } else {
      putf(t, R_PROP, "[%zu]", i);
      put(t, R_PLAIN, ": ");
      walk_data(t, rsc_node_at(v, i), depth, 1);
    }
  }
}

static int is_container(rsc_kind k) {
  return k == RSC_OBJECT || k == RSC_ARRAY || k == RSC_ITERATOR || k == RSC_SET;
}

/* A container as a summary line ("{3 keys}"), then its members. */
static void walk_container(tree_out *t, const rsc_node *v, unsigned depth, int started) {
  if (!enter(t, v, depth, started)) return;
  if (!started) indent(t, depth);
  abbrev(t, v, 0);
  newline(t);
  walk_members(t, v, depth + 1);
  leave(t);
}

/* A value that is not in a children position: elements and lazies as in
 * the tree, objects and arrays expanded when they hold elements, anything
 * else abbreviated on one line. */
static void walk_data(tree_out *t, const rsc_node *v, unsigned depth, int started) {
  rsc_kind k = rsc_node_kind(v);
  if (k == RSC_ELEMENT) {
    walk_element(t, v, depth, started);
    return;
  }
  if (k == RSC_LAZY || k == RSC_PROMISE) {
    walk_chunk(t, v, depth, started, 0);
    return;
  }
  int budget = 4096;
  if (!is_container(k) || !holds_elements(v, &budget, 0)) {
    if (!started) indent(t, depth);
    abbrev(t, v, 0);
    newline(t);
    return;
  }
  walk_container(t, v, depth, started);
}

/* The root chunk: its value, or a marker when it is not fulfilled. */
static void walk_root(tree_out *t, rsc_decoder *d) {
  const rsc_chunk *root = rsc_decoder_root(d);
  rsc_chunk_state st = rsc_chunk_status(root);
  const rsc_node *v = rsc_chunk_value(root);
  if (st == RSC_CHUNK_FULFILLED && is_container(rsc_node_kind(v))) {
    walk_container(t, v, 0, 0); /* the root's members, elements or not */
  } else if (st == RSC_CHUNK_FULFILLED) {
    walk_data(t, v, 0, 0);
  } else if (st == RSC_CHUNK_REJECTED) {
    put(t, R_REJECTED, "[root: rejected: ");
    put_reason(t, rsc_chunk_reason(root));
    put(t, R_REJECTED, "]");
    newline(t);
  } else {
    putf(t, st == RSC_CHUNK_HALTED ? R_NOTE : R_PENDING, "[root: %s]", state_name(st));
    newline(t);
  }
}

/* MARK: command line ------------------------------------------------------- */

void cli_tree_help(FILE *f) {
  fputs("usage: rscflight tree [options] [FILE|-]\n"
        "\n"
        "Print the element structure of a Flight payload: host tags, React built-ins\n"
        "(Fragment, Suspense, ...), client components with their module, keys and\n"
        "abbreviated props, one element per line, children indented. Lazy and promise\n"
        "values show as [lazy ID] before their value, or [lazy ID: pending | blocked |\n"
        "halted | rejected: reason] when they did not arrive. Reads stdin for - or no FILE,\n"
        "and an HTML page (one that opens with '<') as the payload it inlines.\n"
        "\n"
        "options:\n"
        "  --color[=WHEN]     color the output: auto (default: when stdout is a terminal\n"
        "                     and NO_COLOR is unset), always, never\n"
        "  --no-color         the same as --color=never\n"
        "  --full             do not abbreviate strings or cut the list of props\n"
        "  --depth N          print N levels of elements, then \"…\"\n"
        "  --no-finish        do not end the stream: show it as a client sees it when\n"
        "                     the input ends (rows that never came stay pending)\n"
        "  --chunk-size N     feed the decoder N bytes at a time\n"
        "  --strict           exit 1 when the stream ended early (a row cut off, rows\n"
        "                     referenced that never arrived, a stream left open);\n"
        "                     stderr says so either way (not with --no-finish)\n"
        "  --html             the input is an HTML page: show the payload it inlines\n"
        "  -h, --help         this help\n"
        "\n" CLI_DECODE_HELP,
        f);
}

static int color_auto(void) {
  const char *no = getenv("NO_COLOR");
  const char *term = getenv("TERM");
  if (no && no[0]) return 0;
  if (term && strcmp(term, "dumb") == 0) return 0;
  return isatty(fileno(stdout));
}

static int parse_count(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end || errno || s[0] == '-' || v == 0) return 0;
  *out = v;
  return 1;
}

/* Parses argv into o and *file. Returns 0 to go on, else the exit code
 * (help printed: 0; usage error: 2). */
static int tree_parse(int argc, char **argv, tree_opts *o, const char **file) {
  int color = -1;
  unsigned long long v;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int known = cli_decode_flag(argc, argv, &i, &o->decode);
    if (known < 0) {
      fprintf(stderr, "rscflight tree: %s wants a bundler name\n", a);
      return 2;
    } else if (known) continue;
    else if (strcmp(a, "--color") == 0 || strcmp(a, "--color=always") == 0) color = 1;
    else if (strcmp(a, "--color=never") == 0 || strcmp(a, "--no-color") == 0) color = 0;
    else if (strcmp(a, "--color=auto") == 0) color = -1;
    else if (strcmp(a, "--full") == 0) o->full = 1;
    else if (strcmp(a, "--no-finish") == 0) o->finish = 0;
    else if (strcmp(a, "--strict") == 0) o->strict = 1;
    else if (strcmp(a, "--html") == 0) o->html = true;
    else if (strcmp(a, "--depth") == 0 && i + 1 < argc && parse_count(argv[i + 1], &v) &&
             v < 100000) {
      o->max_depth = (unsigned)v;
      i++;
    } else if (strcmp(a, "--chunk-size") == 0 && i + 1 < argc && parse_count(argv[i + 1], &v)) {
      o->chunk = (size_t)v;
      i++;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      cli_tree_help(stdout);
      return -1;
    } else if ((a[0] == '-' && a[1]) || *file) {
      fprintf(stderr, "rscflight tree: unexpected argument '%s' (see rscflight tree --help)\n", a);
      return 2;
    } else *file = a;
  }
  o->color = color < 0 ? color_auto() : color;
  return 0;
}

/* Feeds buf to a new decoder (in o->chunk pieces) and ends the stream
 * unless --no-finish. NULL when memory ran out. */
static rsc_decoder *tree_decode(const char *buf, size_t len, const tree_opts *o) {
  rsc_decoder *d = rsc_decoder_new(&o->decode);
  if (!d) return NULL;
  size_t step = o->chunk && o->chunk < len ? o->chunk : len;
  for (size_t i = 0; i < len; i += step)
    if (rsc_decoder_feed(d, buf + i, len - i < step ? len - i : step) != RSC_OK) break;
  if (len == 0) rsc_decoder_feed(d, buf, 0);
  if (o->finish) rsc_decoder_finish(d);
  return d;
}

int cli_tree_main(int argc, char **argv) {
  tree_opts o = {.finish = 1};
  rsc_options_init(&o.decode);
  const char *file = NULL;
  int rc = tree_parse(argc, argv, &o, &file);
  if (rc) return rc < 0 ? 0 : rc;
  if (!file) file = "-";
  size_t len;
  char *buf = cli_read_payload(file, o.html, &len);
  if (!buf) return 1;
  /* buf outlives the decoder: with --borrow-input, strings point into it */
  rsc_decoder *d = tree_decode(buf, len, &o);
  if (!d) {
    free(buf);
    fprintf(stderr, "rscflight: %s: out of memory\n", file);
    return 1;
  }
  const rsc_error *e = rsc_decoder_error(d);
  if (e->code != RSC_OK) {
    cli_report_error(file, e);
    rsc_decoder_free(d);
    free(buf);
    return 1;
  }
  tree_out *t = calloc(1, sizeof *t);
  if (!t) {
    rsc_decoder_free(d);
    free(buf);
    fprintf(stderr, "rscflight: %s: out of memory\n", file);
    return 1;
  }
  t->f = stdout;
  t->o = &o;
  walk_root(t, d);
  free(t);
  int early = cli_report_incomplete(file, d);
  rsc_decoder_free(d);
  free(buf);
  if (fflush(stdout) != 0) return 1;
  return o.strict && early ? 1 : 0;
}
