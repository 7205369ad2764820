/*
 * html.c - the Flight payload an HTML page inlines, read as a browser runs
 * the page (html.h).
 *
 * What a browser runs, and so what this file reads
 * ------------------------------------------------
 * The page is scanned once, left to right, following the tokenizer of the
 * HTML standard (WHATWG, "Tokenization") for everything that decides where a
 * script element's text begins and ends:
 *
 *  - Comments <!-- ... --> end at the first "-->" or "--!>", and the abrupt
 *    forms <!--> and <!---> end at once. <!DOCTYPE ...>, <?...>, </ followed by
 *    a non-letter, and <!...> other than a comment are bogus comments that end
 *    at the next '>'. Nothing inside any of them is markup.
 *  - Tags: tag name up to whitespace, '/' or '>'; attributes follow the
 *    attribute states exactly, so a '>' inside a quoted attribute value does
 *    not end the tag; a tag cut off by the end of the input is never emitted.
 *    Names compare ASCII case-insensitively. End tags are parsed the same way
 *    (their attributes are ignored).
 *  - After a start tag the tree builder switches the tokenizer:
 *    <title>, <textarea>: RCDATA; <style>, <xmp>, <iframe>, <noembed>,
 *    <noframes>, <noscript> (scripting is enabled in a browser that runs the
 *    framework): RAWTEXT; <plaintext>: the rest of the page is text; <script>:
 *    script data. An RCDATA/RAWTEXT element ends only at "</name" followed by
 *    whitespace, '/' or '>'.
 *  - Script data follows every script-data state, including the escaped and
 *    double-escaped states entered by "<!--" and "<script" inside a script:
 *    inside "<!-- <script> ... " the text "</script>" does not end the element.
 *  - A script element that is not closed before the end of the input is never
 *    executed (the tree builder marks it "already started"), so it is ignored.
 *
 * A script element's text is executed as a classic script when ("prepare the
 * script element"):
 *  - it has no src attribute (an external script ignores its inline text);
 *  - its type is a JavaScript MIME type essence match (type absent or empty,
 *    "text/javascript", "application/javascript", ... the standard's 16
 *    strings, ASCII case-insensitive, surrounding ASCII whitespace stripped,
 *    no parameters), or, with no type attribute, language="X" where "text/X"
 *    is one. type="application/json", "importmap", "text/x-template" etc. are
 *    data blocks and never run;
 *  - it has no nomodule attribute, and if it has both event and for
 *    attributes, they are "window" and "onload"/"onload()";
 *  - it is not inside an inert <template>. Template contents are tokenized like
 *    any markup (so their RAWTEXT, comments and scripts are skipped exactly)
 *    but never run. Decision: a <template shadowrootmode="open|closed">
 *    (declarative shadow DOM) is NOT inert: the parser attaches its contents
 *    to a shadow root in the document, where scripts do run. Whether the host
 *    element can take a shadow root is not checked.
 *  - An attribute value that contains a character reference ('&') in type,
 *    language, for or event is not decoded: such a script is treated as not
 *    executing (frameworks never write one).
 *  - A module script (type="module") runs deferred, after parsing, in an order
 *    this module does not model: a module script whose text starts like a
 *    Flight push is an error; other module scripts are ignored.
 *
 * Not modelled (documented limitations): foreign content (<svg>, <math>: there
 * <style>/<title>/<script> are not RAWTEXT/RCDATA/script-data and CDATA
 * sections exist), <frameset> documents, the "in select" insertion mode's
 * ignoring of some start tags, character encodings other than UTF-8 (the page
 * is taken as UTF-8, as both frameworks send it), document.write.
 *
 * Which scripts carry Flight data
 * -------------------------------
 * A running script is a Flight script if, after JavaScript white space and
 * comments, it starts with "self.__next_f" or "(self.__next_f" (Next.js) or
 * "(self.__FLIGHT_DATA" (rsc-html-stream). Any other script is ignored, even
 * if it mentions those names later (for example inside a string). A Flight
 * script must then consist only of these statements, separated by ';' or by a
 * line break where JavaScript inserts a semicolon, with any white space and
 * comments between tokens (also the HTML-like "<!--" and line-initial "-->"
 * comments of classic scripts); anything else in it is an error, because the
 * script's statements are then not the ones the frameworks write:
 *
 *   (self.__next_f=self.__next_f||[]).push(A)        Next.js bootstrap form
 *   self.__next_f.push(A)                            Next.js
 *     A = [0]  bootstrap
 *       | [1, STRING]  text: its UTF-8 bytes are appended
 *       | [2, JSON]    form state: skipped (any JSON/JS literal value)
 *       | [3, STRING]  base64: the decoded bytes are appended
 *   (self.__FLIGHT_DATA||=[]).push(STRING)            rsc-html-stream text
 *   (self.__FLIGHT_DATA||=[]).push(Uint8Array.from(atob(STRING), m => m.codePointAt(0)))
 *
 * As in JavaScript, a syntax error anywhere in a script means none of it runs;
 * here it is an error for the whole page. Next.js rules from app-index.js: a
 * [1]/[3] segment before any [0] throws "missing bootstrap script" (an error
 * here); a second [0] resets the client's buffer only if it ran before the
 * client code, which depends on timing (an error here); [2] is ignored. A page
 * that mixes both frameworks' scripts is an error with RSC_HTML_AUTO.
 *
 * STRING is a JavaScript string literal ('...' or "..."): escapes \' \" \\ \b
 * \f \n \r \t \v \0, \xHH, \uHHHH, \u{H...}, line continuations, legacy octal
 * escapes \1..\377 and \8 \9 (classic scripts are sloppy mode), and any other
 * escaped character stands for itself (\/ \! \s as rsc-html-stream writes in
 * "<\!--" and "</\script"). Invalid \x or \u escapes, raw line breaks and
 * unterminated strings are errors. The raw page bytes are UTF-8 decoded as the
 * browser does (each maximal invalid subsequence becomes U+FFFD, and a NUL
 * byte in script data becomes U+FFFD).
 *
 * Text segments are then encoded as TextEncoder.encode does, one segment at a
 * time as both runtimes (Next's app-index.js, rsc-html-stream/client) call it:
 * UTF-8, a surrogate pair (\ud83d\ude00) becomes one 4-byte sequence, and a
 * lone surrogate becomes U+FFFD (EF BF BD), not WTF-8 (TextEncoder takes a
 * USVString). Base64 segments are decoded as atob does
 * (WHATWG forgiving-base64: ASCII white space removed, up to two '=' removed
 * when the length is a multiple of 4, a remainder of 1 or any other character
 * is an error, trailing bits ignored). The payload is the concatenation of all
 * segments in document order, so a T row whose text continues over several
 * scripts comes out whole.
 */
#include "html.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

#include "arena.h"
#include "hex.h"
#include "utf8.h"

/* ---- state and errors ---------------------------------------------------- */

typedef struct rsc_html_scan {
  const uint8_t *s;
  size_t n;
  rsc_html_flavor want;
  rsc_html_flavor found;
  rsc_alloc alloc;
  uint8_t *buf; /* the payload, cap bytes of which len are used */
  size_t len, cap;
  bool next_boot; /* a Next.js [0] has run */
  rsc_error err;  /* the first error; code RSC_OK until then */
  bool want_segs; /* record each data push in segs */
  rsc__html_seg *segs;
  size_t nsegs, segcap;
} rsc_html_scan;

/* Records the first error (later ones are consequences of it) and returns
 * its code. */
static rsc_status fail(rsc_html_scan *x, rsc_status code, size_t off, const char *msg) {
  if (!x->err.code) {
    x->err.code = code;
    x->err.offset = off;
    x->err.msg = msg;
  }
  return x->err.code;
}

/* An HTML (syntax) error for the functions that return a count or a
 * flavor: -1. */
static int syntax_error(rsc_html_scan *x, size_t off, const char *msg) {
  fail(x, RSC_ERR_HTML, off, msg);
  return -1;
}

static rsc_status out_reserve(rsc_html_scan *x, size_t extra, size_t off) {
  if (x->cap - x->len >= extra) return RSC_OK;
  if (extra > SIZE_MAX - x->len - 1) return fail(x, RSC_ERR_NOMEM, off, "output too large");
  size_t need = x->len + extra + 1; /* room for the final NUL */
  size_t nc = x->cap ? x->cap : 256;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) {
      nc = need;
      break;
    }
    nc *= 2;
  }
  void *p = rsc__heap_realloc(&x->alloc, x->buf, x->cap, nc);
  if (!p) return fail(x, RSC_ERR_NOMEM, off, "out of memory");
  x->buf = (uint8_t *)p;
  x->cap = nc;
  return RSC_OK;
}

static rsc_status out_bytes(rsc_html_scan *x, const uint8_t *b, size_t k, size_t off) {
  rsc_status st = out_reserve(x, k, off);
  if (st) return st;
  memcpy(x->buf + x->len, b, k);
  x->len += k;
  return RSC_OK;
}

/* Records a data push whose string literal is s[lit_b..lit_e) and whose
 * bytes are the payload from pay_b to what is written now; push_b is where
 * its statement starts (its end is set when the statement ends). */
static rsc_status seg_add(rsc_html_scan *x, size_t push_b, size_t lit_b, size_t lit_e, size_t pay_b,
                          bool base64) {
  if (!x->want_segs) return RSC_OK;
  if (x->nsegs == x->segcap) {
    size_t nc = x->segcap ? x->segcap * 2 : 16;
    if (nc > SIZE_MAX / sizeof *x->segs) return fail(x, RSC_ERR_NOMEM, lit_b, "output too large");
    void *p =
        rsc__heap_realloc(&x->alloc, x->segs, x->segcap * sizeof *x->segs, nc * sizeof *x->segs);
    if (!p) return fail(x, RSC_ERR_NOMEM, lit_b, "out of memory");
    x->segs = (rsc__html_seg *)p;
    x->segcap = nc;
  }
  rsc__html_seg *g = &x->segs[x->nsegs++];
  g->push_b = push_b;
  g->push_e = lit_e;
  g->lit_b = lit_b;
  g->lit_e = lit_e;
  g->pay_b = pay_b;
  g->pay_e = x->len;
  g->base64 = base64;
  return RSC_OK;
}

/* ---- small character helpers --------------------------------------------- */

static bool html_ws(uint8_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x20;
}
static bool is_alpha(uint8_t c) { return (uint8_t)((c | 0x20) - 'a') < 26; }
static bool is_digit(uint8_t c) { return (uint8_t)(c - '0') < 10; }
static uint8_t lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c; }
/* A hex digit of either case (JavaScript's \x and \u escapes); -1 otherwise. */
static int hex_digit_ci(uint8_t c) {
  return rsc__hex_digit(c >= 'A' && c <= 'F' ? (uint8_t)(c | 0x20) : c);
}
static bool ident_part(uint8_t c) {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '\\' || c >= 0x80;
}

/* s[p..e) equals lit (ASCII case-insensitive; lit is lowercase). */
static bool ci_eq(const uint8_t *s, size_t p, size_t e, const char *lit) {
  size_t k = strlen(lit);
  if (e < p || e - p != k) return false;
  for (size_t i = 0; i < k; i++)
    if (lower(s[p + i]) != (uint8_t)lit[i]) return false;
  return true;
}

/* Trims ASCII whitespace off both ends of s[*b..*e). */
static void trim(const uint8_t *s, size_t *b, size_t *e) {
  while (*b < *e && html_ws(s[*b])) (*b)++;
  while (*e > *b && html_ws(s[*e - 1])) (*e)--;
}

/* ---- HTML tokenizer pieces ----------------------------------------------- */

/* The attributes that decide whether a script runs, and whether a template
 * is a declarative shadow root. */
enum { A_NONE = -1, A_TYPE, A_LANG, A_SRC, A_NOMODULE, A_FOR, A_EVENT, A_SRM, A_COUNT };

typedef struct rsc_html_attr {
  bool has;
  size_t b, e; /* the value's range (empty without a value) */
} rsc_html_attr;

typedef struct rsc_html_attrs {
  rsc_html_attr v[A_COUNT];
} rsc_html_attrs;

static int attr_id(const uint8_t *s, size_t b, size_t e) {
  if (ci_eq(s, b, e, "type")) return A_TYPE;
  if (ci_eq(s, b, e, "language")) return A_LANG;
  if (ci_eq(s, b, e, "src")) return A_SRC;
  if (ci_eq(s, b, e, "nomodule")) return A_NOMODULE;
  if (ci_eq(s, b, e, "for")) return A_FOR;
  if (ci_eq(s, b, e, "event")) return A_EVENT;
  if (ci_eq(s, b, e, "shadowrootmode")) return A_SRM;
  return A_NONE;
}

/* Records an attribute's presence (the first occurrence wins, as in the tree
 * builder); returns the id to receive a value, or A_NONE. src and nomodule
 * count only by their presence. */
static int attr_begin(rsc_html_attrs *a, const uint8_t *s, size_t b, size_t e) {
  if (!a) return A_NONE;
  int id = attr_id(s, b, e);
  if (id == A_NONE) return A_NONE;
  rsc_html_attr *at = &a->v[id];
  if (id == A_SRC || id == A_NOMODULE) {
    at->has = true;
    return A_NONE;
  }
  if (at->has) return A_NONE; /* a duplicate attribute is dropped */
  at->has = true;
  at->b = at->e = e; /* empty until a value is seen */
  return id;
}

static void attr_value(rsc_html_attrs *a, int id, size_t b, size_t e) {
  if (!a || id == A_NONE) return;
  a->v[id].b = b;
  a->v[id].e = e;
}

/*
 * Runs the attribute states from p (the byte right after the tag name) to the
 * '>' that emits the tag. Returns true with *after the position after '>', or
 * false if the input ends first (the tag is never emitted).
 */
static bool parse_attrs(const uint8_t *s, size_t n, size_t p, rsc_html_attrs *a, size_t *after) {
  enum {
    BEFORE_NAME,
    NAME,
    AFTER_NAME,
    BEFORE_VAL,
    VAL_DQ,
    VAL_SQ,
    VAL_UQ,
    AFTER_VAL_Q,
    SELF_CLOSING
  };
  int st = BEFORE_NAME, cur = A_NONE;
  size_t nb = p, vb = p;
  while (p < n) {
    uint8_t c = s[p];
    switch (st) {
    case BEFORE_NAME:
      if (html_ws(c)) {
        p++;
      } else if (c == '/' || c == '>') {
        st = AFTER_NAME;
      } else {
        nb = p;
        if (c == '=') p++;
        st = NAME;
      }
      break;
    case NAME:
      if (html_ws(c) || c == '/' || c == '>') {
        cur = attr_begin(a, s, nb, p);
        st = AFTER_NAME;
      } else if (c == '=') {
        cur = attr_begin(a, s, nb, p);
        p++;
        st = BEFORE_VAL;
      } else {
        p++;
      }
      break;
    case AFTER_NAME:
      if (html_ws(c)) {
        p++;
      } else if (c == '/') {
        p++;
        st = SELF_CLOSING;
      } else if (c == '=') {
        p++;
        st = BEFORE_VAL;
      } else if (c == '>') {
        *after = p + 1;
        return true;
      } else {
        nb = p;
        cur = A_NONE;
        st = NAME;
      }
      break;
    case BEFORE_VAL:
      if (html_ws(c)) {
        p++;
      } else if (c == '"') {
        p++;
        vb = p;
        st = VAL_DQ;
      } else if (c == '\'') {
        p++;
        vb = p;
        st = VAL_SQ;
      } else if (c == '>') {
        *after = p + 1;
        return true;
      } else {
        vb = p;
        st = VAL_UQ;
      }
      break;
    case VAL_DQ:
    case VAL_SQ: {
      const uint8_t *q = memchr(s + p, st == VAL_DQ ? '"' : '\'', n - p);
      if (!q) return false;
      p = (size_t)(q - s);
      attr_value(a, cur, vb, p);
      cur = A_NONE;
      p++;
      st = AFTER_VAL_Q;
      break;
    }
    case VAL_UQ:
      if (html_ws(c)) {
        attr_value(a, cur, vb, p);
        cur = A_NONE;
        p++;
        st = BEFORE_NAME;
      } else if (c == '>') {
        attr_value(a, cur, vb, p);
        *after = p + 1;
        return true;
      } else {
        p++;
      }
      break;
    case AFTER_VAL_Q:
      if (html_ws(c)) {
        p++;
        st = BEFORE_NAME;
      } else if (c == '/') {
        p++;
        st = SELF_CLOSING;
      } else if (c == '>') {
        *after = p + 1;
        return true;
      } else {
        st = BEFORE_NAME;
      }
      break;
    default: /* SELF_CLOSING */
      if (c == '>') {
        *after = p + 1;
        return true;
      }
      st = BEFORE_NAME;
      break;
    }
  }
  return false;
}

/* Tag name from p (an ASCII letter) to whitespace, '/' or '>'. */
static size_t tag_name_end(const uint8_t *s, size_t n, size_t p) {
  while (p < n && !html_ws(s[p]) && s[p] != '/' && s[p] != '>') p++;
  return p;
}

/* position after the '>' that ends a bogus comment starting at p */
static size_t skip_bogus(const uint8_t *s, size_t n, size_t p) {
  const uint8_t *q = p < n ? memchr(s + p, '>', n - p) : NULL;
  return q ? (size_t)(q - s) + 1 : n;
}

/* p = right after "<!--"; returns the position after the comment */
static size_t skip_comment(const uint8_t *s, size_t n, size_t p) {
  size_t i;
  if (p < n && s[p] == '>') return p + 1;                        /* <!--> */
  if (p + 1 < n && s[p] == '-' && s[p + 1] == '>') return p + 2; /* <!---> */
  i = p;
  while (i + 2 < n) {
    const uint8_t *q = memchr(s + i, '-', n - i);
    if (!q) break;
    i = (size_t)(q - s);
    if (i + 2 >= n) break;
    if (s[i + 1] == '-') {
      if (s[i + 2] == '>') return i + 3;
      if (s[i + 2] == '!' && i + 3 < n && s[i + 3] == '>') return i + 4;
    }
    i++;
  }
  return n;
}

/* "</name" + whitespace, '/' or '>' at q (which holds '<')? */
static bool end_tag_at(const uint8_t *s, size_t n, size_t q, const char *name) {
  size_t k = strlen(name);
  if (q + 2 + k >= n || s[q + 1] != '/') return false;
  for (size_t i = 0; i < k; i++)
    if (lower(s[q + 2 + i]) != (uint8_t)name[i]) return false;
  uint8_t c = s[q + 2 + k];
  return html_ws(c) || c == '/' || c == '>';
}

/* RCDATA / RAWTEXT: returns the position of the '<' of the end tag, or n */
static size_t scan_raw(const uint8_t *s, size_t n, size_t p, const char *name) {
  while (p < n) {
    const uint8_t *q = memchr(s + p, '<', n - p);
    if (!q) return n;
    p = (size_t)(q - s);
    if (end_tag_at(s, n, p, name)) return p;
    p++;
  }
  return n;
}

/* length of the ASCII-letter run at p */
static size_t alpha_run(const uint8_t *s, size_t n, size_t p) {
  size_t b = p;
  while (p < n && is_alpha(s[p])) p++;
  return p - b;
}

/*
 * Script data with its escape states. p = first byte of the script text.
 * Returns the position of the '<' of the "</script" that ends it, or n.
 */
static size_t scan_script(const uint8_t *s, size_t n, size_t p) {
  enum { SD, ESC, ESC_DASH, ESC_DD, DESC, DESC_DASH, DESC_DD };
  int st = SD;
  while (p < n) {
    uint8_t c = s[p];
    switch (st) {
    case SD:
      if (c != '<') {
        const uint8_t *q = memchr(s + p, '<', n - p);
        if (!q) return n;
        p = (size_t)(q - s);
        break;
      }
      /* script data less-than sign state */
      if (p + 1 >= n) return n;
      if (s[p + 1] == '/') {
        if (end_tag_at(s, n, p, "script")) return p;
        p += 2; /* a failed end tag: its letters are script text */
      } else if (s[p + 1] == '!') {
        /* escape start: "<!--" enters the escaped state (at "dash dash") */
        if (p + 3 < n && s[p + 2] == '-' && s[p + 3] == '-') {
          st = ESC_DD;
          p += 4;
        } else {
          p += 2;
        }
      } else {
        p++;
      }
      break;
    case ESC:
    case ESC_DASH:
    case ESC_DD:
      if (c == '-') {
        st = (st == ESC) ? ESC_DASH : ESC_DD;
        p++;
      } else if (c == '<') {
        /* script data escaped less-than sign state */
        if (p + 1 >= n) return n;
        if (s[p + 1] == '/') {
          if (end_tag_at(s, n, p, "script")) return p;
          p += 2;
          st = ESC;
        } else if (is_alpha(s[p + 1])) {
          /* double escape start */
          size_t k = alpha_run(s, n, p + 1), t = p + 1 + k;
          if (t >= n) return n;
          if (html_ws(s[t]) || s[t] == '/' || s[t] == '>') {
            st = ci_eq(s, p + 1, t, "script") ? DESC : ESC;
            p = t + 1;
          } else {
            st = ESC;
            p = t;
          }
        } else {
          st = ESC;
          p++;
        }
      } else if (c == '>' && st == ESC_DD) {
        st = SD;
        p++;
      } else {
        st = ESC;
        p++;
      }
      break;
    default: /* DESC, DESC_DASH, DESC_DD */
      if (c == '-') {
        st = (st == DESC) ? DESC_DASH : DESC_DD;
        p++;
      } else if (c == '<') {
        /* double escaped less-than sign */
        st = DESC;
        p++;
        if (p < n && s[p] == '/') {
          /* double escape end */
          size_t k = alpha_run(s, n, p + 1), t = p + 1 + k;
          if (t >= n) return n;
          if (html_ws(s[t]) || s[t] == '/' || s[t] == '>') {
            st = ci_eq(s, p + 1, t, "script") ? ESC : DESC;
            p = t + 1;
          } else {
            p = t;
          }
        }
      } else if (c == '>' && st == DESC_DD) {
        st = SD;
        p++;
      } else {
        st = DESC;
        p++;
      }
      break;
    }
  }
  return n;
}

/* ---- script element: does it run? ---------------------------------------- */

enum { SK_NONE = 0, SK_CLASSIC = 1, SK_MODULE = 2 };

static bool range_has_amp(const uint8_t *s, size_t b, size_t e) {
  return e > b && memchr(s + b, '&', e - b) != NULL;
}

static bool js_mime(const uint8_t *s, size_t b, size_t e) {
  static const char *const types[] = {"application/ecmascript",
                                      "application/javascript",
                                      "application/x-ecmascript",
                                      "application/x-javascript",
                                      "text/ecmascript",
                                      "text/javascript",
                                      "text/javascript1.0",
                                      "text/javascript1.1",
                                      "text/javascript1.2",
                                      "text/javascript1.3",
                                      "text/javascript1.4",
                                      "text/javascript1.5",
                                      "text/jscript",
                                      "text/livescript",
                                      "text/x-ecmascript",
                                      "text/x-javascript"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (ci_eq(s, b, e, types[i])) return true;
  return false;
}

static int script_kind(const uint8_t *s, const rsc_html_attrs *a) {
  const rsc_html_attr *type = &a->v[A_TYPE], *lang = &a->v[A_LANG];
  const rsc_html_attr *for_ = &a->v[A_FOR], *event = &a->v[A_EVENT];
  int kind;
  if (a->v[A_SRC].has) return SK_NONE;
  if (type->has && type->e > type->b) {
    size_t b = type->b, e = type->e;
    if (range_has_amp(s, b, e)) return SK_NONE;
    trim(s, &b, &e);
    if (js_mime(s, b, e)) kind = SK_CLASSIC;
    else if (ci_eq(s, b, e, "module")) kind = SK_MODULE;
    else return SK_NONE;
  } else if (!type->has && lang->has && lang->e > lang->b) {
    /* the type string "text/" + language, trimmed (only at the end) */
    uint8_t tmp[40];
    size_t b = lang->b, e = lang->e;
    if (range_has_amp(s, b, e)) return SK_NONE;
    while (e > b && html_ws(s[e - 1])) e--;
    if (e - b > sizeof tmp - 6) return SK_NONE;
    memcpy(tmp, "text/", 5);
    memcpy(tmp + 5, s + b, e - b);
    if (!js_mime(tmp, 0, 5 + (e - b))) return SK_NONE;
    kind = SK_CLASSIC;
  } else {
    kind = SK_CLASSIC;
  }
  if (kind == SK_CLASSIC) {
    if (a->v[A_NOMODULE].has) return SK_NONE;
    if (for_->has && event->has) {
      size_t fb = for_->b, fe = for_->e, eb = event->b, ee = event->e;
      if (range_has_amp(s, fb, fe) || range_has_amp(s, eb, ee)) return SK_NONE;
      trim(s, &fb, &fe);
      trim(s, &eb, &ee);
      if (!ci_eq(s, fb, fe, "window")) return SK_NONE;
      if (!ci_eq(s, eb, ee, "onload") && !ci_eq(s, eb, ee, "onload()")) return SK_NONE;
    }
  }
  return kind;
}

/* ---- JavaScript tokens --------------------------------------------------- */

static bool js_lt_at(const uint8_t *s, size_t p, size_t e) {
  return s[p] == 0x0A || s[p] == 0x0D ||
         (s[p] == 0xE2 && p + 2 < e && s[p + 1] == 0x80 && (s[p + 2] == 0xA8 || s[p + 2] == 0xA9));
}

/*
 * Skips JavaScript white space, line terminators and comments in s[p..e),
 * including the HTML-like comments of classic scripts (Annex B: "<!--" up to
 * the end of the line, and "-->" at the start of a line, which V8 also accepts
 * at the start of the script: line_start). Sets *nl if a line terminator was
 * crossed (for automatic semicolons). An unterminated block comment runs to e.
 */
static size_t js_ws(const uint8_t *s, size_t p, size_t e, bool *nl, bool line_start) {
  while (p < e) {
    uint8_t c = s[p];
    if ((c == '<' && e - p >= 4 && memcmp(s + p, "<!--", 4) == 0) ||
        ((line_start || *nl) && c == '-' && e - p >= 3 && memcmp(s + p, "-->", 3) == 0)) {
      while (p < e && !js_lt_at(s, p, e)) p++;
    } else if (c == 0x09 || c == 0x0B || c == 0x0C || c == 0x20) {
      p++;
    } else if (c == 0x0A || c == 0x0D) {
      *nl = true;
      p++;
    } else if (c == '/' && p + 1 < e && s[p + 1] == '*') {
      p += 2;
      while (p < e && !(s[p] == '*' && p + 1 < e && s[p + 1] == '/')) {
        if (s[p] == 0x0A || s[p] == 0x0D) *nl = true;
        else if (s[p] == 0xE2 && p + 2 < e && s[p + 1] == 0x80 &&
                 (s[p + 2] == 0xA8 || s[p + 2] == 0xA9))
          *nl = true;
        p++;
      }
      p = (p < e) ? p + 2 : e;
    } else if (c == '/' && p + 1 < e && s[p + 1] == '/') {
      p += 2;
      while (p < e && s[p] != 0x0A && s[p] != 0x0D &&
             !(s[p] == 0xE2 && p + 2 < e && s[p + 1] == 0x80 &&
               (s[p + 2] == 0xA8 || s[p + 2] == 0xA9)))
        p++;
    } else if (c >= 0x80) {
      uint32_t cp;
      size_t k = rsc__utf8_decode(s + p, e - p, &cp);
      if (cp == 0x2028 || cp == 0x2029) {
        *nl = true;
      } else if (!(cp == 0xA0 || cp == 0xFEFF || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
                   cp == 0x202F || cp == 0x205F || cp == 0x3000)) {
        return p;
      }
      p += k;
    } else {
      return p;
    }
  }
  return p;
}

typedef struct rsc_html_js {
  rsc_html_scan *x;
  const uint8_t *s;
  size_t b, p, e; /* start of the script text, current position, its end */
  bool nl;        /* a line terminator was crossed by the last jws */
} rsc_html_js;

static void jws(rsc_html_js *j) {
  j->nl = false;
  j->p = js_ws(j->s, j->p, j->e, &j->nl, j->p == j->b);
}

static const char MSG_STMT[] = "unexpected text in a Flight script (only the push statements the "
                               "frameworks write are accepted)";

/* punctuator or keyword-free literal, after white space */
static rsc_status jpunct(rsc_html_js *j, const char *lit) {
  size_t k = strlen(lit);
  jws(j);
  if (j->e - j->p < k || memcmp(j->s + j->p, lit, k) != 0)
    return fail(j->x, RSC_ERR_HTML, j->p, MSG_STMT);
  j->p += k;
  return RSC_OK;
}

/* does the identifier `name` come next (no consumption on failure)? */
static bool jpeek_ident(rsc_html_js *j, const char *name) {
  size_t k = strlen(name);
  jws(j);
  if (j->e - j->p < k || memcmp(j->s + j->p, name, k) != 0) return false;
  if (j->p + k < j->e && ident_part(j->s[j->p + k])) return false;
  return true;
}

static rsc_status jident(rsc_html_js *j, const char *name) {
  if (!jpeek_ident(j, name)) return fail(j->x, RSC_ERR_HTML, j->p, MSG_STMT);
  j->p += strlen(name);
  return RSC_OK;
}

/* any plain ASCII identifier: returns its range */
static rsc_status jany_ident(rsc_html_js *j, size_t *b, size_t *e) {
  jws(j);
  if (j->p >= j->e || !(is_alpha(j->s[j->p]) || j->s[j->p] == '_' || j->s[j->p] == '$'))
    return fail(j->x, RSC_ERR_HTML, j->p, MSG_STMT);
  *b = j->p;
  while (j->p < j->e && ident_part(j->s[j->p])) {
    if (j->s[j->p] == '\\' || j->s[j->p] >= 0x80) return fail(j->x, RSC_ERR_HTML, j->p, MSG_STMT);
    j->p++;
  }
  *e = j->p;
  return RSC_OK;
}

/* ---- JavaScript string literals ------------------------------------------ */

typedef struct rsc_html_str {
  const uint8_t *s;
  size_t p, e;
  size_t open; /* offset of the opening quote */
  uint8_t q;
} rsc_html_str;

/*
 * Next UTF-16 code unit or code point of the literal (escapes give code units,
 * raw text gives code points). Returns 1 with *cp and *off (source offset of
 * the character), 0 at the closing quote (consumed), -1 on error.
 */
static int jstr_next(rsc_html_scan *x, rsc_html_str *t, uint32_t *cp, size_t *off) {
  const uint8_t *s = t->s;
  for (;;) {
    uint8_t c;
    if (t->p >= t->e) return syntax_error(x, t->open, "unterminated string literal");
    c = s[t->p];
    *off = t->p;
    if (c == t->q) {
      t->p++;
      return 0;
    }
    if (c == 0x0A || c == 0x0D) return syntax_error(x, t->p, "line break inside a string literal");
    if (c == 0) {
      *cp = 0xFFFD; /* the HTML tokenizer replaces NUL in script data */
      t->p++;
      return 1;
    }
    if (c >= 0x80) {
      t->p += rsc__utf8_decode(s + t->p, t->e - t->p, cp);
      return 1;
    }
    if (c != '\\') {
      *cp = c;
      t->p++;
      return 1;
    }
    /* escape sequence */
    if (t->p + 1 >= t->e) return syntax_error(x, t->open, "unterminated string literal");
    c = s[t->p + 1];
    switch (c) {
    case 0x0A: t->p += 2; continue;
    case 0x0D:
      t->p += 2;
      if (t->p < t->e && s[t->p] == 0x0A) t->p++;
      continue;
    case 'b':
      *cp = 0x08;
      t->p += 2;
      return 1;
    case 'f':
      *cp = 0x0C;
      t->p += 2;
      return 1;
    case 'n':
      *cp = 0x0A;
      t->p += 2;
      return 1;
    case 'r':
      *cp = 0x0D;
      t->p += 2;
      return 1;
    case 't':
      *cp = 0x09;
      t->p += 2;
      return 1;
    case 'v':
      *cp = 0x0B;
      t->p += 2;
      return 1;
    case 0:
      *cp = 0xFFFD;
      t->p += 2;
      return 1;
    case 'x': {
      int h1 = t->p + 2 < t->e ? hex_digit_ci(s[t->p + 2]) : -1;
      int h2 = t->p + 3 < t->e ? hex_digit_ci(s[t->p + 3]) : -1;
      if (h1 < 0 || h2 < 0) return syntax_error(x, t->p, "invalid \\x escape in string literal");
      *cp = (uint32_t)(h1 * 16 + h2);
      t->p += 4;
      return 1;
    }
    case 'u': {
      size_t q = t->p + 2;
      uint32_t v = 0;
      if (q < t->e && s[q] == '{') {
        size_t digits = 0;
        q++;
        while (q < t->e && hex_digit_ci(s[q]) >= 0) {
          v = v * 16 + (uint32_t)hex_digit_ci(s[q]);
          if (v > 0x10FFFF)
            return syntax_error(x, t->p, "invalid \\u{} escape in string literal (above 10FFFF)");
          q++;
          digits++;
        }
        if (!digits || q >= t->e || s[q] != '}')
          return syntax_error(x, t->p, "invalid \\u{} escape in string literal");
        t->p = q + 1;
      } else {
        int i;
        for (i = 0; i < 4; i++) {
          int h = q + (size_t)i < t->e ? hex_digit_ci(s[q + (size_t)i]) : -1;
          if (h < 0) return syntax_error(x, t->p, "invalid \\u escape in string literal");
          v = v * 16 + (uint32_t)h;
        }
        t->p = q + 4;
      }
      *cp = v;
      return 1;
    }
    default: break;
    }
    if (c >= '0' && c <= '7') {
      /* legacy octal escape (sloppy mode): greedy, at most \377 */
      uint32_t v = (uint32_t)(c - '0');
      size_t q = t->p + 2, maxmore = (c <= '3') ? 2 : 1;
      while (maxmore-- && q < t->e && s[q] >= '0' && s[q] <= '7') {
        v = v * 8 + (uint32_t)(s[q] - '0');
        q++;
      }
      *cp = v;
      t->p = q;
      return 1;
    }
    if (c >= 0x80) {
      uint32_t v;
      size_t k = rsc__utf8_decode(s + t->p + 1, t->e - t->p - 1, &v);
      t->p += 1 + k;
      if (v == 0x2028 || v == 0x2029) continue; /* line continuation */
      *cp = v;
      return 1;
    }
    /* \' \" \\ \/ \! \s ... : the character itself (also \8 and \9) */
    *cp = c;
    t->p += 2;
    return 1;
  }
}

static rsc_status jstr_open(rsc_html_js *j, rsc_html_str *t) {
  jws(j);
  if (j->p >= j->e || (j->s[j->p] != '"' && j->s[j->p] != '\''))
    return fail(j->x, RSC_ERR_HTML, j->p, "expected a string literal");
  t->s = j->s;
  t->q = j->s[j->p];
  t->open = j->p;
  t->p = j->p + 1;
  t->e = j->e;
  return RSC_OK;
}

/* The first offset at or after i (e when none) whose byte is not printable
 * ASCII (below 0x20 or from 0x80), or is the quote q or a backslash. */
#if defined(__SSE2__)
static inline size_t ascii_run(const uint8_t *s, size_t i, size_t e, uint8_t q) {
  /* Signed bytes: 0x80-0xFF are negative, so one compare below 0x20 takes
   * controls and non-ASCII together. */
  const __m128i quote = _mm_set1_epi8((char)q), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20);
  while (i + 16 <= e) {
    __m128i x = _mm_loadu_si128((const __m128i *)(s + i));
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bs)),
                             _mm_cmplt_epi8(x, sp));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if (mask) return i + (size_t)__builtin_ctz(mask);
    i += 16;
  }
  while (i < e && s[i] >= 0x20 && s[i] < 0x80 && s[i] != q && s[i] != '\\') i++;
  return i;
}
#else
static inline size_t ascii_run(const uint8_t *s, size_t i, size_t e, uint8_t q) {
  while (i < e && s[i] >= 0x20 && s[i] < 0x80 && s[i] != q && s[i] != '\\') i++;
  return i;
}
#endif

/*
 * A string literal as TextEncoder.encode() sees it: appended as UTF-8 when
 * emit is set, only validated otherwise.
 */
static rsc_status jstr_text(rsc_html_js *j, bool emit) {
  rsc_html_str t;
  uint32_t cp, hi = 0; /* hi: a high surrogate waiting for its low half */
  size_t off;
  int r;
  if (jstr_open(j, &t)) return j->x->err.code;
  for (;;) {
    uint8_t b[8];
    size_t k = 0;
    if (!hi) {
      /* A run of printable ASCII other than the quote and the backslash
       * reads as itself and encodes as itself: one copy. */
      size_t run = ascii_run(t.s, t.p, t.e, t.q);
      if (run > t.p) {
        if (emit && out_bytes(j->x, t.s + t.p, run - t.p, t.p)) return j->x->err.code;
        t.p = run;
      }
    }
    r = jstr_next(j->x, &t, &cp, &off);
    if (r < 0) return j->x->err.code;
    if (r == 0) {
      if (hi) k += rsc__utf8_encode(0xFFFD, b + k);
    } else if (hi && cp >= 0xDC00 && cp <= 0xDFFF) {
      k += rsc__utf8_encode(0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00), b + k);
      hi = 0;
    } else {
      if (hi) {
        k += rsc__utf8_encode(0xFFFD, b + k);
        hi = 0;
      }
      if (cp >= 0xD800 && cp <= 0xDBFF) hi = cp;
      else if (cp >= 0xDC00 && cp <= 0xDFFF) k += rsc__utf8_encode(0xFFFD, b + k);
      else k += rsc__utf8_encode(cp, b + k);
    }
    if (emit && k && out_bytes(j->x, b, k, off)) return j->x->err.code;
    if (r == 0) break;
  }
  j->p = t.p;
  return RSC_OK;
}

static int b64val(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return (int)(c - 'A');
  if (c >= 'a' && c <= 'z') return (int)(c - 'a' + 26);
  if (c >= '0' && c <= '9') return (int)(c - '0' + 52);
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

static bool b64ws(uint32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x20;
}

/*
 * A string literal as atob() sees it (WHATWG forgiving-base64 decode): the
 * decoded bytes are appended when emit is set. Two passes over the literal.
 */
static rsc_status jstr_base64(rsc_html_js *j, bool emit) {
  rsc_html_str t, t0;
  uint32_t cp, acc = 0;
  size_t off, total = 0, eqrun = 0, keep, used = 0, bad_off = 0, endp;
  int r, bits = 0;
  bool bad = false;
  const char *msg = "invalid base64 (atob would throw)";
  if (jstr_open(j, &t)) return j->x->err.code;
  t0 = t;
  /* pass 1: count, find the trailing '=' run and the first bad character */
  while ((r = jstr_next(j->x, &t, &cp, &off)) == 1) {
    if (b64ws(cp)) continue;
    total++;
    if (cp == '=') {
      if (!eqrun && !bad) bad_off = off; /* in case this run turns out not to be trailing */
      eqrun++;
    } else {
      if (eqrun && !bad) {
        bad = true; /* '=' followed by data */
      } else if (b64val(cp) < 0 && !bad) {
        bad = true;
        bad_off = off;
      }
      eqrun = 0;
    }
  }
  if (r < 0) return j->x->err.code;
  endp = t.p;
  keep = total;
  if (!bad) {
    if (total % 4 == 0 && eqrun >= 1 && eqrun <= 2) {
      keep = total - eqrun;
      eqrun = 0;
    }
    if (eqrun) bad = true; /* '=' that forgiving-base64 does not remove */
    else if (keep % 4 == 1) {
      bad = true;
      bad_off = t.open;
      msg = "invalid base64 length (atob would throw)";
    }
  }
  if (bad) return fail(j->x, RSC_ERR_HTML, bad_off, msg);
  if (emit) {
    t = t0;
    while ((r = jstr_next(j->x, &t, &cp, &off)) == 1 && used < keep) {
      if (b64ws(cp)) continue;
      used++;
      acc = (acc << 6) | (uint32_t)b64val(cp);
      bits += 6;
      if (bits == 24) {
        uint8_t b[3];
        b[0] = (uint8_t)(acc >> 16);
        b[1] = (uint8_t)(acc >> 8);
        b[2] = (uint8_t)acc;
        if (out_bytes(j->x, b, 3, off)) return j->x->err.code;
        acc = 0;
        bits = 0;
      }
    }
    if (r < 0) return j->x->err.code;
    if (bits == 12) {
      uint8_t b = (uint8_t)(acc >> 4);
      if (out_bytes(j->x, &b, 1, t.p)) return j->x->err.code;
    } else if (bits == 18) {
      uint8_t b[2];
      b[0] = (uint8_t)(acc >> 10);
      b[1] = (uint8_t)(acc >> 2);
      if (out_bytes(j->x, b, 2, t.p)) return j->x->err.code;
    }
  }
  j->p = endp; /* after the closing quote (pass 2 may stop early) */
  return RSC_OK;
}

/*
 * Skips one JSON-like literal value (Next.js form state, [2, value]):
 * strings, numbers, true/false/null, arrays and objects with string keys.
 * Iterative, nesting limited to 1024.
 */
static rsc_status jvalue_skip(rsc_html_js *j) {
  enum { MAXD = 1024 };
  uint8_t stack[MAXD];
  size_t depth = 0;
  for (;;) {
    uint8_t c;
    /* a value */
    jws(j);
    if (j->p >= j->e) return fail(j->x, RSC_ERR_HTML, j->p, "unterminated form-state value");
    c = j->s[j->p];
    if (c == '"' || c == '\'') {
      if (jstr_text(j, false)) return j->x->err.code;
    } else if (c == '[' || c == '{') {
      if (depth == MAXD)
        return fail(j->x, RSC_ERR_HTML, j->p, "form-state value nested too deeply");
      stack[depth++] = c;
      j->p++;
      jws(j);
      if (j->p < j->e && j->s[j->p] == (c == '[' ? ']' : '}')) {
        j->p++;
        depth--;
        goto after_value;
      }
      if (c == '{') {
        if (jstr_text(j, false) || jpunct(j, ":")) return j->x->err.code;
      }
      continue;
    } else if (c == '-' || is_digit(c)) {
      size_t p = j->p;
      if (c == '-') p++;
      if (p >= j->e || !is_digit(j->s[p]))
        return fail(j->x, RSC_ERR_HTML, p, "invalid number in form-state value");
      if (j->s[p] == '0') p++;
      else
        while (p < j->e && is_digit(j->s[p])) p++;
      if (p < j->e && j->s[p] == '.') {
        p++;
        if (p >= j->e || !is_digit(j->s[p]))
          return fail(j->x, RSC_ERR_HTML, p, "invalid number in form-state value");
        while (p < j->e && is_digit(j->s[p])) p++;
      }
      if (p < j->e && (j->s[p] == 'e' || j->s[p] == 'E')) {
        p++;
        if (p < j->e && (j->s[p] == '+' || j->s[p] == '-')) p++;
        if (p >= j->e || !is_digit(j->s[p]))
          return fail(j->x, RSC_ERR_HTML, p, "invalid number in form-state value");
        while (p < j->e && is_digit(j->s[p])) p++;
      }
      if (p < j->e && ident_part(j->s[p]))
        return fail(j->x, RSC_ERR_HTML, p, "invalid number in form-state value");
      j->p = p;
    } else if (jpeek_ident(j, "true")) {
      j->p += 4;
    } else if (jpeek_ident(j, "false")) {
      j->p += 5;
    } else if (jpeek_ident(j, "null")) {
      j->p += 4;
    } else {
      return fail(j->x, RSC_ERR_HTML, j->p, "invalid form-state value");
    }
  after_value:
    while (depth) {
      uint8_t top = stack[depth - 1];
      jws(j);
      if (j->p >= j->e) return fail(j->x, RSC_ERR_HTML, j->p, "unterminated form-state value");
      if (j->s[j->p] == ',') {
        j->p++;
        if (top == '{') {
          if (jstr_text(j, false) || jpunct(j, ":")) return j->x->err.code;
        }
        break; /* parse the next value */
      }
      if (j->s[j->p] == (top == '[' ? ']' : '}')) {
        j->p++;
        depth--;
        continue;
      }
      return fail(j->x, RSC_ERR_HTML, j->p, "invalid form-state value");
    }
    if (!depth) return RSC_OK;
  }
}

/* ---- Flight statements --------------------------------------------------- */

enum { FL_NONE = 0, FL_NEXT = RSC_HTML_NEXT, FL_RHS = RSC_HTML_RSC_HTML_STREAM };

/* Flavor of the statement at j->p (without consuming), or FL_NONE. */
static int stmt_flavor(rsc_html_js *j) {
  rsc_html_js k = *j;
  jws(&k);
  if (k.p < k.e && k.s[k.p] == '(') {
    k.p++;
    if (!jpeek_ident(&k, "self")) return FL_NONE;
    k.p += 4;
    jws(&k);
    if (k.p >= k.e || k.s[k.p] != '.') return FL_NONE;
    k.p++;
    if (jpeek_ident(&k, "__next_f")) return FL_NEXT;
    if (jpeek_ident(&k, "__FLIGHT_DATA")) return FL_RHS;
    return FL_NONE;
  }
  if (!jpeek_ident(&k, "self")) return FL_NONE;
  k.p += 4;
  jws(&k);
  if (k.p >= k.e || k.s[k.p] != '.') return FL_NONE;
  k.p++;
  return jpeek_ident(&k, "__next_f") ? FL_NEXT : FL_NONE;
}

/* [0] | [1,"text"] | [2,value] | [3,"base64"] */
static rsc_status next_array(rsc_html_js *j, bool exec, size_t stmt_off) {
  uint8_t c;
  if (jpunct(j, "[")) return j->x->err.code;
  jws(j);
  if (j->p >= j->e) return fail(j->x, RSC_ERR_HTML, j->p, MSG_STMT);
  c = j->s[j->p];
  if (c < '0' || c > '3' ||
      (j->p + 1 < j->e &&
       (is_digit(j->s[j->p + 1]) || ident_part(j->s[j->p + 1]) || j->s[j->p + 1] == '.')))
    return fail(j->x, RSC_ERR_HTML, j->p,
                "unsupported self.__next_f segment (expected [0], [1,...], [2,...] or [3,...])");
  j->p++;
  if (c == '0') {
    if (jpunct(j, "]")) return j->x->err.code;
    if (exec) {
      if (j->x->next_boot)
        return fail(j->x, RSC_ERR_HTML, stmt_off, "second self.__next_f bootstrap [0]");
      j->x->next_boot = true;
    }
    return RSC_OK;
  }
  if (jpunct(j, ",")) return j->x->err.code;
  if (exec && c != '2' && !j->x->next_boot)
    return fail(
        j->x, RSC_ERR_HTML, stmt_off,
        "self.__next_f data before the bootstrap [0] (Next throws: missing bootstrap script)");
  if (c == '2') {
    if (jvalue_skip(j)) return j->x->err.code;
  } else {
    size_t pay_b = j->x->len, lit_b;
    jws(j);
    lit_b = j->p;
    if (c == '1' ? jstr_text(j, exec) : jstr_base64(j, exec)) return j->x->err.code;
    if (exec && seg_add(j->x, stmt_off, lit_b, j->p, pay_b, c == '3')) return j->x->err.code;
  }
  return jpunct(j, "]");
}

/* One statement; returns its flavor, or -1 with the error recorded. */
static int statement_body(rsc_html_js *j, bool exec) {
  jws(j);
  size_t off = j->p;
  int fl = stmt_flavor(j);
  if (fl == FL_NONE) return syntax_error(j->x, j->p, MSG_STMT);
  if (j->s[j->p] == '(') {
    j->p++;
    if (jident(j, "self") || jpunct(j, ".")) return -1;
    if (fl == FL_NEXT) {
      if (jident(j, "__next_f") || jpunct(j, "=") || jident(j, "self") || jpunct(j, ".") ||
          jident(j, "__next_f") || jpunct(j, "||") || jpunct(j, "[") || jpunct(j, "]") ||
          jpunct(j, ")") || jpunct(j, ".") || jident(j, "push") || jpunct(j, "(") ||
          next_array(j, exec, off) || jpunct(j, ")"))
        return -1;
      return fl;
    }
    if (jident(j, "__FLIGHT_DATA") || jpunct(j, "||=") || jpunct(j, "[") || jpunct(j, "]") ||
        jpunct(j, ")") || jpunct(j, ".") || jident(j, "push") || jpunct(j, "("))
      return -1;
    jws(j);
    size_t pay_b = j->x->len, lit_b = j->p;
    if (j->p < j->e && (j->s[j->p] == '"' || j->s[j->p] == '\'')) {
      if (jstr_text(j, exec)) return -1;
      if (exec && seg_add(j->x, off, lit_b, j->p, pay_b, false)) return -1;
    } else {
      size_t ab, ae, bb, be;
      if (jident(j, "Uint8Array") || jpunct(j, ".") || jident(j, "from") || jpunct(j, "(") ||
          jident(j, "atob") || jpunct(j, "("))
        return -1;
      jws(j);
      lit_b = j->p;
      if (jstr_base64(j, exec)) return -1;
      if (exec && seg_add(j->x, off, lit_b, j->p, pay_b, true)) return -1;
      if (jpunct(j, ")") || jpunct(j, ",") || jany_ident(j, &ab, &ae) || jpunct(j, "=>") ||
          jany_ident(j, &bb, &be))
        return -1;
      if (ae - ab != be - bb || memcmp(j->s + ab, j->s + bb, ae - ab) != 0)
        return syntax_error(j->x, bb, MSG_STMT);
      if (jpunct(j, ".") || jident(j, "codePointAt") || jpunct(j, "(") || jpunct(j, "0") ||
          jpunct(j, ")") || jpunct(j, ")"))
        return -1;
    }
    if (jpunct(j, ")")) return -1;
    return fl;
  }
  if (jident(j, "self") || jpunct(j, ".") || jident(j, "__next_f") || jpunct(j, ".") ||
      jident(j, "push") || jpunct(j, "(") || next_array(j, exec, off) || jpunct(j, ")"))
    return -1;
  return fl;
}

/* statement_body, and the end of the statement for the push it recorded */
static int statement(rsc_html_js *j, bool exec) {
  size_t nsegs = j->x->nsegs;
  int fl = statement_body(j, exec);
  if (fl >= 0 && j->x->nsegs > nsegs) j->x->segs[j->x->nsegs - 1].push_e = j->p;
  return fl;
}

/* all statements of a Flight script; each must have flavor fl */
static rsc_status run_script(rsc_html_scan *x, size_t b, size_t e, int fl, bool exec) {
  rsc_html_js j = {.x = x, .s = x->s, .b = b, .p = b, .e = e};
  bool first = true;
  for (;;) {
    jws(&j);
    if (j.p >= j.e) return RSC_OK;
    if (j.s[j.p] == ';') {
      j.p++;
      first = true; /* a new statement may follow directly */
      continue;
    }
    if (!first && (!j.nl || j.s[j.p] == '(' || j.s[j.p] == '['))
      return fail(x, RSC_ERR_HTML, j.p, MSG_STMT);
    size_t at = j.p;
    int f = statement(&j, exec);
    if (f < 0) return x->err.code;
    if (f != fl)
      return fail(x, RSC_ERR_HTML, at, "a script mixes Next.js and rsc-html-stream statements");
    first = false;
  }
}

static rsc_status process_script(rsc_html_scan *x, size_t b, size_t e, int kind) {
  rsc_html_js j = {.x = x, .s = x->s, .b = b, .p = b, .e = e};
  /* leading white space, comments and empty statements */
  for (;;) {
    jws(&j);
    if (j.p < j.e && j.s[j.p] == ';') j.p++;
    else break;
  }
  int fl = stmt_flavor(&j);
  if (fl == FL_NONE) return RSC_OK;
  if (x->want != RSC_HTML_AUTO && (int)x->want != fl) return RSC_OK;
  if (kind == SK_MODULE)
    return fail(x, RSC_ERR_HTML, j.p,
                "Flight push in a module script (deferred execution order is not supported)");
  if (x->found == RSC_HTML_AUTO) x->found = (rsc_html_flavor)fl;
  else if ((int)x->found != fl)
    return fail(x, RSC_ERR_HTML, j.p, "the page mixes Next.js and rsc-html-stream Flight scripts");
  if (run_script(x, b, e, fl, false)) /* the whole script must parse before any of it runs */
    return x->err.code;
  return run_script(x, b, e, fl, true);
}

/* ---- the page ------------------------------------------------------------ */

/* Scans the page for the scripts that run, and reads the Flight ones; stops
 * at the first error (in x->err). */
static void scan_page(rsc_html_scan *x) {
  const uint8_t *s = x->s;
  size_t n = x->n, p = 0;
  size_t tdepth = 0, inert_level = 0; /* template nesting; depth of the outermost inert one */
  while (p < n && !x->err.code) {
    const uint8_t *lt = memchr(s + p, '<', n - p);
    if (!lt) return;
    size_t q = (size_t)(lt - s), ne, after;
    if (q + 1 >= n) return;
    uint8_t c = s[q + 1];
    if (c == '!') {
      if (q + 3 < n && s[q + 2] == '-' && s[q + 3] == '-') p = skip_comment(s, n, q + 4);
      else p = skip_bogus(s, n, q + 2);
    } else if (c == '?') {
      p = skip_bogus(s, n, q + 1);
    } else if (c == '/') {
      if (q + 2 >= n) return;
      if (is_alpha(s[q + 2])) {
        ne = tag_name_end(s, n, q + 2);
        if (!parse_attrs(s, n, ne, NULL, &after)) return;
        if (ci_eq(s, q + 2, ne, "template") && tdepth) {
          if (tdepth == inert_level) inert_level = 0;
          tdepth--;
        }
        p = after;
      } else if (s[q + 2] == '>') {
        p = q + 3;
      } else {
        p = skip_bogus(s, n, q + 2);
      }
    } else if (is_alpha(c)) {
      rsc_html_attrs a = {0};
      size_t nb = q + 1;
      ne = tag_name_end(s, n, nb);
      if (!parse_attrs(s, n, ne, &a, &after)) return;
      p = after;
      if (ci_eq(s, nb, ne, "script")) {
        size_t end = scan_script(s, n, p), after_end;
        if (end >= n) return; /* unclosed script: never executed */
        if (!parse_attrs(s, n, end + 8, NULL, &after_end))
          return; /* its end tag is never emitted either */
        int kind = script_kind(s, &a);
        /* an error stops the loop through x->err */
        if (kind != SK_NONE && !inert_level) process_script(x, p, end, kind);
        p = after_end;
      } else if (ci_eq(s, nb, ne, "title") || ci_eq(s, nb, ne, "textarea") ||
                 ci_eq(s, nb, ne, "style") || ci_eq(s, nb, ne, "xmp") ||
                 ci_eq(s, nb, ne, "iframe") || ci_eq(s, nb, ne, "noembed") ||
                 ci_eq(s, nb, ne, "noframes") || ci_eq(s, nb, ne, "noscript")) {
        char name[9];
        size_t k = ne - nb;
        for (size_t i = 0; i < k; i++) name[i] = (char)lower(s[nb + i]);
        name[k] = 0;
        size_t end = scan_raw(s, n, p, name);
        if (end >= n) return;
        if (!parse_attrs(s, n, end + 2 + k, NULL, &after)) return;
        p = after;
      } else if (ci_eq(s, nb, ne, "plaintext")) {
        return;
      } else if (ci_eq(s, nb, ne, "template")) {
        const rsc_html_attr *srm = &a.v[A_SRM];
        bool shadow_root =
            srm->has && (ci_eq(s, srm->b, srm->e, "open") || ci_eq(s, srm->b, srm->e, "closed"));
        tdepth++;
        if (!shadow_root && !inert_level) inert_level = tdepth;
      }
    } else {
      p = q + 1;
    }
  }
}

static rsc_status extract(const char *html, size_t len, rsc_html_flavor flavor,
                          const rsc_alloc *alloc, char **out, size_t *out_len, rsc__html_seg **segs,
                          size_t *nsegs, rsc_error *err, rsc_html_flavor *found) {
  rsc_html_scan x;
  memset(&x, 0, sizeof x);
  x.err.row_id = -1;
  if (out) *out = NULL;
  if (out_len) *out_len = 0;
  if (segs) *segs = NULL;
  if (nsegs) *nsegs = 0;
  if (found) *found = RSC_HTML_AUTO;
  if (!out || !out_len || (segs && !nsegs) || (!html && len) ||
      (flavor != RSC_HTML_AUTO && flavor != RSC_HTML_NEXT && flavor != RSC_HTML_RSC_HTML_STREAM)) {
    fail(&x, RSC_ERR_HTML, 0, "invalid argument");
    if (err) *err = x.err;
    return x.err.code;
  }
  x.s = (const uint8_t *)(html ? html : "");
  x.n = len;
  x.want = flavor;
  x.found = RSC_HTML_AUTO;
  x.want_segs = segs != NULL;
  if (alloc) x.alloc = *alloc;

  scan_page(&x);

  if (!x.err.code && (x.found == RSC_HTML_AUTO || (x.found == RSC_HTML_NEXT && !x.next_boot)))
    fail(&x, RSC_ERR_HTML, 0, "no Flight payload found");
  if (!x.err.code && x.cap != x.len + 1) {
    /* exactly len + 1 bytes, NUL-terminated */
    void *p = rsc__heap_realloc(&x.alloc, x.buf, x.cap, x.len + 1);
    if (p) {
      x.buf = (uint8_t *)p;
      x.cap = x.len + 1;
    } else {
      fail(&x, RSC_ERR_NOMEM, x.n, "out of memory");
    }
  }
  if (found) *found = x.found;
  if (err) *err = x.err;
  if (x.err.code) {
    rsc__heap_free(&x.alloc, x.buf);
    rsc__heap_free(&x.alloc, x.segs);
    return x.err.code;
  }
  x.buf[x.len] = 0;
  *out = (char *)x.buf;
  *out_len = x.len;
  if (segs) {
    *segs = x.segs;
    *nsegs = x.nsegs;
  }
  return RSC_OK;
}

rsc_status rsc__html_extract(const char *html, size_t len, rsc_html_flavor flavor,
                             const rsc_alloc *alloc, char **out, size_t *out_len, rsc_error *err,
                             rsc_html_flavor *found) {
  return extract(html, len, flavor, alloc, out, out_len, NULL, NULL, err, found);
}

rsc_status rsc__html_extract_segs(const char *html, size_t len, rsc_html_flavor flavor,
                                  const rsc_alloc *alloc, char **out, size_t *out_len,
                                  rsc__html_seg **segs, size_t *nsegs, rsc_error *err,
                                  rsc_html_flavor *found) {
  if (!segs) {
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (found) *found = RSC_HTML_AUTO;
    if (err) *err = (rsc_error){.code = RSC_ERR_HTML, .row_id = -1, .msg = "invalid argument"};
    return RSC_ERR_HTML;
  }
  return extract(html, len, flavor, alloc, out, out_len, segs, nsegs, err, found);
}

/* ---- the public entry -------------------------------------------------- */

rsc_status rsc_html_extract(const char *html, size_t len, rsc_html_flavor flavor, char **out,
                            size_t *out_len, rsc_error *err, rsc_html_flavor *found) {
  static const rsc_alloc libc = {0}; /* what rsc_free releases */
  char *buf = NULL;
  size_t n = 0;
  rsc_status st = rsc__html_extract(html, len, flavor, &libc, &buf, &n, err, found);
  if (out) *out = buf;
  else rsc__heap_free(&libc, buf);
  if (out_len) *out_len = n;
  return st;
}
