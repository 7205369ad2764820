/* stream_render.c - an SSR host in miniature.
 *
 * Reads a Flight payload the way a server reads it from the network, in
 * pieces of 1 to 4 KB, feeds each piece to an rscflight decoder and streams
 * HTML as soon as it can:
 *
 *   - resource hints (H rows) become <link> tags as they arrive, through
 *     the consumer hook (RSC_EVENT_HINT);
 *   - the shell is rendered once the root chunk settles (the hook reports
 *     RSC_EVENT_CHUNK_SETTLED for chunk 0), with a placeholder
 *     <template id="P:n"></template> wherever a part has not arrived yet
 *     (a lazy whose chunk is pending);
 *   - after every piece, each placeholder whose row has come in is filled:
 *     <template data-fill="P:n"> ... </template>, as React's Fizz streams
 *     late Suspense content. A part that failed on the server is filled
 *     with its error digest instead.
 *
 * Elements become HTML-ish text: host tags with their string, number and
 * boolean props as attributes, React built-ins as their children (Suspense
 * with Fizz's <!--$--> marks), client components as <rsc-client src="...">
 * (a real host would render them with its own components). The output is
 * indented for reading.
 *
 * Why the host polls its placeholders instead of waiting for an event per
 * part: React's client parses a row only when something reads it
 * (docs/spec/FLIGHT-PROTOCOL.md 8.3), and so does rscflight. A lazy's chunk
 * settles when the renderer looks at it, which is what flush_fills does after
 * each piece.
 *
 * usage: stream_render [--piece N | --pieces MIN-MAX] [--seed S] [--whole] [FILE|-]
 *   --piece N        read N bytes at a time
 *   --pieces A-B     read A..B bytes at a time, sizes from a seeded PRNG
 *                    (default 1024-4096, seed 1)
 *   --whole          decode everything first, then print the document once
 *                    (no hints, no placeholders: what every read size ends as)
 *
 * Build: cc stream_render.c $(pkg-config --cflags --libs rscflight)
 * Only <rscflight.h> is used. Everything reachable from the decoder lives
 * until rsc_decoder_free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rscflight.h>

/* MARK: the host ------------------------------------------------------------ */

typedef struct slot {
  const rsc_chunk *chunk; /* what the placeholder waits for */
  unsigned id;            /* P:id                            */
  int filled;
} slot;

typedef struct host {
  rsc_decoder *d;
  FILE *out;
  int root_settled; /* set by the hook                 */
  int shell_done;
  slot *slots;
  size_t nslots, cap;
  unsigned next_id;
  unsigned level; /* render's recursion depth          */
  char *hints;    /* <link> lines queued by the hook */
  size_t hints_len, hints_cap;
  int nomem;
} host;

static void indent(host *h, unsigned depth) {
  for (unsigned i = 0; i < depth; i++) fputs("  ", h->out);
}

static void put_text(host *h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    switch (s[i]) {
    case '&': fputs("&amp;", h->out); break;
    case '<': fputs("&lt;", h->out); break;
    case '>': fputs("&gt;", h->out); break;
    default: fputc(s[i], h->out);
    }
  }
}

static void put_attr_value(FILE *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    switch (s[i]) {
    case '&': fputs("&amp;", out); break;
    case '"': fputs("&quot;", out); break;
    case '<': fputs("&lt;", out); break;
    default: fputc(s[i], out);
    }
  }
}

/* Numbers as JavaScript prints the common ones: integers without ".0". */
static void put_number(FILE *out, double v) {
  if (v > -1e15 && v < 1e15 && v == (double)(long long)v) fprintf(out, "%lld", (long long)v);
  else fprintf(out, "%.17g", v);
}

/* MARK: hints (RSC_EVENT_HINT) ---------------------------------------------- */

static void queue_text(host *h, const char *s, size_t n) {
  if (h->hints_len + n + 1 > h->hints_cap) {
    size_t cap = h->hints_cap ? h->hints_cap * 2 : 256;
    while (cap < h->hints_len + n + 1) cap *= 2;
    char *b = realloc(h->hints, cap);
    if (!b) {
      h->nomem = 1;
      return;
    }
    h->hints = b;
    h->hints_cap = cap;
  }
  memcpy(h->hints + h->hints_len, s, n);
  h->hints_len += n;
  h->hints[h->hints_len] = '\0';
}

/* An H row's href: the value itself, or the first item of its array. */
static const char *hint_href(const rsc_node *v, size_t *n) {
  if (rsc_node_kind(v) == RSC_ARRAY) v = rsc_node_at(v, 0);
  return rsc_node_string(v, n);
}

/* Formats one hint as the <link> (or <script>) a host puts in <head>. The
 * event's value is only valid during the hook, so the text is built now. */
static void queue_hint(host *h, char code, const rsc_node *value) {
  size_t n = 0, as_n = 0;
  const char *href = hint_href(value, &n);
  const char *as = NULL;
  const char *rel;
  switch (code) {
  case 'L':
    rel = "preload";
    as = rsc_node_string(rsc_node_at(value, 1), &as_n);
    break;
  case 'm': rel = "modulepreload"; break;
  case 'C': rel = "preconnect"; break;
  case 'D': rel = "dns-prefetch"; break;
  case 'S': rel = "stylesheet"; break;
  case 'X': rel = "script"; break;
  case 'M': rel = "module"; break;
  default: rel = NULL; break;
  }
  char line[1024];
  int len;
  if (!href || !rel) len = snprintf(line, sizeof line, "<!-- hint %c -->\n", code);
  else if (code == 'X' || code == 'M')
    len = snprintf(line, sizeof line, "<script%s src=\"%.*s\" async></script>\n",
                   code == 'M' ? " type=\"module\"" : "", (int)(n > 900 ? 900 : n), href);
  else
    len = snprintf(line, sizeof line, "<link rel=\"%s\" href=\"%.*s\"%s%.*s%s>\n", rel,
                   (int)(n > 900 ? 900 : n), href, as ? " as=\"" : "", (int)(as ? as_n : 0),
                   as ? as : "", as ? "\"" : "");
  if (len > 0) queue_text(h, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
}

/* The consumer hook. It only records: rendering happens after each feed,
 * outside the decoder (a hook may read nodes but must not feed). */
static int on_event(void *ctx, const rsc_event *ev) {
  host *h = ctx;
  if (ev->kind == RSC_EVENT_CHUNK_SETTLED) {
    if (ev->chunk_id == 0) h->root_settled = 1;
  } else if (ev->kind == RSC_EVENT_HINT) {
    queue_hint(h, ev->tag, ev->value);
  }
  return 0;
}

/* MARK: rendering ------------------------------------------------------------ */

static void render(host *h, const rsc_node *v, unsigned depth);

/* A new placeholder for a chunk that has not arrived. */
static unsigned add_slot(host *h, const rsc_chunk *c) {
  if (h->nslots == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 16;
    slot *s = realloc(h->slots, cap * sizeof *s);
    if (!s) {
      h->nomem = 1;
      return 0;
    }
    h->slots = s;
    h->cap = cap;
  }
  slot *s = &h->slots[h->nslots++];
  s->chunk = c;
  s->id = h->next_id++;
  s->filled = 0;
  return s->id;
}

/* A rejected chunk's error: its digest (what production servers send), or
 * its message. */
static void put_error_attr(host *h, const rsc_chunk *c) {
  const rsc_node *reason = rsc_chunk_reason(c);
  const char *digest = rsc_error_digest(reason);
  const char *msg = rsc_error_message(reason);
  const char *text = digest ? digest : msg ? msg : "error";
  fprintf(h->out, " data-error=\"");
  put_attr_value(h->out, text, strlen(text));
  fputc('"', h->out);
}

/* A lazy or promise: its value when it arrived, else a placeholder. */
static void render_chunk(host *h, const rsc_node *v, unsigned depth) {
  const rsc_chunk *c = rsc_node_chunk(v);
  switch (rsc_chunk_status(c)) {
  case RSC_CHUNK_FULFILLED: render(h, rsc_chunk_value(c), depth); return;
  case RSC_CHUNK_REJECTED:
    indent(h, depth);
    fputs("<template", h->out);
    put_error_attr(h, c);
    fputs("></template>\n", h->out);
    return;
  case RSC_CHUNK_HALTED:
    indent(h, depth);
    fputs("<!-- halted: never sent -->\n", h->out);
    return;
  case RSC_CHUNK_PENDING:
  case RSC_CHUNK_BLOCKED: break;
  }
  indent(h, depth);
  fprintf(h->out, "<template id=\"P:%u\"></template>\n", add_slot(h, c));
}

static int is_void_tag(const char *tag) {
  static const char *const tags[] = {"area",  "base", "br",   "col",    "embed", "hr", "img",
                                     "input", "link", "meta", "source", "track", "wbr"};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (strcmp(tag, tags[i]) == 0) return 1;
  return 0;
}

/* String, number and true props as attributes (className -> class). */
static void put_attrs(host *h, const rsc_node *props) {
  for (size_t i = 0, n = rsc_node_len(props); i < n; i++) {
    size_t klen, slen;
    const char *key = rsc_object_key(props, i, &klen);
    const rsc_node *v = rsc_object_value(props, i);
    if (!key || strcmp(key, "children") == 0 || strcmp(key, "dangerouslySetInnerHTML") == 0)
      continue;
    if (strcmp(key, "className") == 0) key = "class";
    else if (strcmp(key, "htmlFor") == 0) key = "for";
    switch (rsc_node_kind(v)) {
    case RSC_STRING: {
      const char *s = rsc_node_string(v, &slen);
      fprintf(h->out, " %s=\"", key);
      put_attr_value(h->out, s, slen);
      fputc('"', h->out);
      break;
    }
    case RSC_NUMBER:
      fprintf(h->out, " %s=\"", key);
      put_number(h->out, rsc_node_number(v));
      fputc('"', h->out);
      break;
    case RSC_BOOL:
      if (rsc_node_bool(v)) fprintf(h->out, " %s", key);
      break;
    default: break; /* objects, functions, elements: not attributes */
    }
  }
}

/* What an element's type is, after following a loaded lazy (client
 * components arrive as "$L<id>": a lazy of the I row's client reference). */
static const rsc_node *element_type(const rsc_node *el, const rsc_chunk **pending) {
  const rsc_node *t = rsc_element_type(el);
  *pending = NULL;
  while (rsc_node_kind(t) == RSC_LAZY) {
    const rsc_chunk *c = rsc_node_chunk(t);
    if (rsc_chunk_status(c) != RSC_CHUNK_FULFILLED) {
      *pending = c;
      return NULL;
    }
    t = rsc_chunk_value(c);
  }
  return t;
}

/* Whether React children render nothing (null, undefined, booleans, []). */
static int renders_nothing(const rsc_node *v) {
  switch (rsc_node_kind(v)) {
  case RSC_NONE:
  case RSC_NULL:
  case RSC_UNDEFINED:
  case RSC_BOOL: return 1;
  case RSC_ARRAY: return rsc_node_len(v) == 0;
  default: return 0;
  }
}

/* Opens a tag, renders children inside it, closes it. A lone text child
 * stays on the tag's line. */
static void render_tag(host *h, const char *open, const char *attrs_tag, const rsc_node *props,
                       const char *close, unsigned depth) {
  const rsc_node *children = rsc_object_get(props, "children", 8);
  const rsc_node *inner =
      rsc_object_get(rsc_object_get(props, "dangerouslySetInnerHTML", 23), "__html", 6);
  size_t n;
  const char *raw = rsc_node_string(inner, &n);
  indent(h, depth);
  fputs(open, h->out);
  if (attrs_tag) put_attrs(h, props);
  fputs(">", h->out);
  if (raw) {
    fwrite(raw, 1, n, h->out); /* the server vouched for this HTML */
  } else if (rsc_node_kind(children) == RSC_STRING) {
    const char *s = rsc_node_string(children, &n);
    put_text(h, s, n);
  } else if (!renders_nothing(children)) {
    fputc('\n', h->out);
    render(h, children, depth + 1);
    indent(h, depth);
  }
  fprintf(h->out, "%s\n", close);
}

static void render_element(host *h, const rsc_node *el, unsigned depth) {
  const rsc_chunk *pending;
  const rsc_node *type = element_type(el, &pending);
  const rsc_node *props = rsc_element_props(el);
  char open[300], close[300];
  size_t n;
  const char *s = rsc_node_string(type, &n);
  if (pending) { /* the component's module row has not arrived */
    indent(h, depth);
    fprintf(h->out, "<template id=\"P:%u\"></template>\n", add_slot(h, pending));
    return;
  }
  switch (rsc_node_kind(type)) {
  case RSC_STRING:
    snprintf(open, sizeof open, "<%.*s", (int)(n > 200 ? 200 : n), s);
    snprintf(close, sizeof close, "</%.*s>", (int)(n > 200 ? 200 : n), s);
    if (is_void_tag(open + 1)) {
      indent(h, depth);
      fputs(open, h->out);
      put_attrs(h, props);
      fputs("/>\n", h->out);
    } else {
      render_tag(h, open, open + 1, props, close, depth);
    }
    return;
  case RSC_SYMBOL:
    if (strcmp(s, "react.suspense") == 0) {
      indent(h, depth);
      fputs("<!--$-->\n", h->out);
      render(h, rsc_object_get(props, "children", 8), depth);
      indent(h, depth);
      fputs("<!--/$-->\n", h->out);
    } else {
      render(h, rsc_object_get(props, "children", 8), depth); /* Fragment and others */
    }
    return;
  case RSC_CLIENT_REF: {
    const rsc_node *idn = rsc_client_ref_id(type);
    const char *id = rsc_node_string(idn, NULL);
    const char *name = rsc_node_string(rsc_client_ref_name(type), NULL);
    char num[32];
    if (!id) { /* webpack's numeric module ids */
      snprintf(num, sizeof num, "%lld", (long long)rsc_node_number(idn));
      id = num;
    }
    snprintf(open, sizeof open, "<rsc-client src=\"%.120s#%.120s\"", id, name ? name : "");
    render_tag(h, open, "rsc-client", props, "</rsc-client>", depth);
    return;
  }
  default:
    indent(h, depth);
    fprintf(h->out, "<!-- element of type %s -->\n", rsc_kind_name(rsc_node_kind(type)));
    return;
  }
}

/* React children: text, elements, arrays (flattened), lazies; null,
 * undefined and booleans render nothing. */
static void render_value(host *h, const rsc_node *v, unsigned depth);

/* Renders v; nesting past 500 levels (hostile input, or an array that
 * holds itself) renders nothing, where a real host would fail the page. */
static void render(host *h, const rsc_node *v, unsigned depth) {
  if (h->level >= 500) return;
  h->level++;
  render_value(h, v, depth);
  h->level--;
}

static void render_value(host *h, const rsc_node *v, unsigned depth) {
  size_t n;
  const char *s;
  switch (rsc_node_kind(v)) {
  case RSC_STRING:
    s = rsc_node_string(v, &n);
    indent(h, depth);
    put_text(h, s, n);
    fputc('\n', h->out);
    return;
  case RSC_NUMBER:
    indent(h, depth);
    put_number(h->out, rsc_node_number(v));
    fputc('\n', h->out);
    return;
  case RSC_ARRAY:
  case RSC_ITERATOR:
    for (size_t i = 0, len = rsc_node_len(v); i < len; i++) render(h, rsc_node_at(v, i), depth);
    return;
  case RSC_ELEMENT: render_element(h, v, depth); return;
  case RSC_LAZY:
  case RSC_PROMISE: render_chunk(h, v, depth); return;
  case RSC_NONE:
  case RSC_NULL:
  case RSC_UNDEFINED:
  case RSC_BOOL: return;
  default:
    indent(h, depth);
    fprintf(h->out, "<!-- %s -->\n", rsc_kind_name(rsc_node_kind(v)));
    return;
  }
}

/* MARK: streaming ------------------------------------------------------------ */

static void flush_hints(host *h) {
  if (h->hints_len) fputs(h->hints, h->out);
  h->hints_len = 0;
}

/* Fills every placeholder whose chunk settled. Filling may add new
 * placeholders (parts inside parts); those are looked at in the same pass. */
static void flush_fills(host *h) {
  for (size_t i = 0; i < h->nslots && !h->nomem; i++) {
    slot s = h->slots[i];
    if (s.filled) continue;
    rsc_chunk_state st = rsc_chunk_status(s.chunk);
    if (st == RSC_CHUNK_PENDING || st == RSC_CHUNK_BLOCKED) continue;
    h->slots[i].filled = 1;
    if (st == RSC_CHUNK_FULFILLED) {
      fprintf(h->out, "<template data-fill=\"P:%u\">\n", s.id);
      render(h, rsc_chunk_value(s.chunk), 1);
      fputs("</template>\n", h->out);
    } else if (st == RSC_CHUNK_REJECTED) {
      fprintf(h->out, "<template data-fill=\"P:%u\"", s.id);
      put_error_attr(h, s.chunk);
      fputs("></template>\n", h->out);
    } else {
      fprintf(h->out, "<!-- P:%u halted: never sent -->\n", s.id);
    }
  }
}

/* Renders the shell once the root settled, then whatever arrived since. */
static void flush(host *h) {
  flush_hints(h);
  if (!h->shell_done && h->root_settled) {
    const rsc_chunk *root = rsc_decoder_root(h->d);
    h->shell_done = 1;
    if (rsc_chunk_status(root) == RSC_CHUNK_FULFILLED) render(h, rsc_chunk_value(root), 0);
    else {
      fputs("<template", h->out);
      put_error_attr(h, root);
      fputs("></template>\n", h->out);
    }
  }
  if (h->shell_done) flush_fills(h);
}

/* A small deterministic PRNG (xorshift32) for piece sizes. */
static size_t next_piece(unsigned *state, size_t lo, size_t hi) {
  unsigned x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return lo + x % (hi - lo + 1);
}

static int run(host *h, FILE *in, size_t lo, size_t hi, unsigned seed, int whole) {
  char *buf = malloc(hi);
  unsigned long long total = 0;
  if (!buf) return 1;
  for (;;) {
    size_t want = next_piece(&seed, lo, hi);
    size_t got = fread(buf, 1, want, in);
    if (got == 0) break;
    total += got;
    if (rsc_decoder_feed(h->d, buf, got) != RSC_OK) break;
    if (whole) continue;
    fprintf(h->out, "<!-- read %zu bytes (%llu in all) -->\n", got, total);
    flush(h);
  }
  free(buf);
  rsc_decoder_finish(h->d);
  const rsc_error *e = rsc_decoder_error(h->d);
  if (e->code != RSC_OK) {
    fprintf(stderr, "stream_render: offset %llu: %s\n", (unsigned long long)e->offset, e->msg);
    return 1;
  }
  if (whole) { /* just the document */
    const rsc_chunk *root = rsc_decoder_root(h->d);
    render(h, rsc_chunk_value(root), 0);
    return h->nomem;
  }
  fputs("<!-- end of stream -->\n", h->out);
  flush(h);
  return h->nomem;
}

static int usage(void) {
  fputs("usage: stream_render [--piece N | --pieces MIN-MAX] [--seed S] [--whole] [FILE|-]\n",
        stderr);
  return 2;
}

int main(int argc, char **argv) {
  size_t lo = 1024, hi = 4096;
  unsigned seed = 1;
  int whole = 0;
  const char *file = "-";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--piece") == 0 && i + 1 < argc) lo = hi = strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--pieces") == 0 && i + 1 < argc) {
      if (sscanf(argv[++i], "%zu-%zu", &lo, &hi) != 2) return usage();
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--whole") == 0) whole = 1;
    else if (argv[i][0] == '-' && argv[i][1]) return usage();
    else file = argv[i];
  }
  if (lo == 0 || hi < lo || hi > (1u << 26) || seed == 0) return usage();
  FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
  if (!in) {
    perror(file);
    return 1;
  }
  host h;
  memset(&h, 0, sizeof h);
  h.out = stdout;
  rsc_options opt;
  rsc_options_init(&opt);
  opt.on_event = on_event;
  opt.event_ctx = &h;
  h.d = rsc_decoder_new(&opt);
  int rc = h.d ? run(&h, in, lo, hi, seed, whole) : 1;
  if (in != stdin) fclose(in);
  rsc_decoder_free(h.d);
  free(h.slots);
  free(h.hints);
  return rc;
}
