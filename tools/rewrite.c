/* rewrite.c - `rscflight rewrite`: a Flight payload changed by rules
 * (rsc_rewriter, include/rscflight.h), streamed from FILE or stdin to
 * stdout, or an HTML page that inlines one rewritten whole
 * (rsc_rewrite_html); a one-line summary on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "describe.h"
#include "rscflight.h"

void cli_rewrite_help(FILE *f) {
  fprintf(f, "usage: rscflight rewrite [options] [FILE|-]\n"
             "\n"
             "Rewrite a Flight payload by rules and write it to stdout; rows no rule\n"
             "changes are copied byte for byte, changed rows are written again (T rows\n"
             "with their new length). A one-line summary goes to stderr.\n"
             "\n"
             "options:\n"
             "  --replace-prefix OLD NEW  strings starting with OLD start with NEW instead\n"
             "                            (several: the first that matches)\n"
             "  --replace OLD NEW         strings equal to OLD become NEW (before prefixes)\n"
             "  --keys K1,K2,...          only strings whose nearest object key is one of\n"
             "                            these (model rows; hint and I row URLs always)\n"
             "  --drop-prop KEY           drop object members with this key (several)\n"
             "  --set-prop KEY JSON       replace the value of members with this key\n"
             "  --no-hints                leave the URLs of H (hint) rows alone\n"
             "  --no-imports              leave the chunk lists of I rows alone\n"
             "  --html                    the input is an HTML page (Next.js or\n"
             "                            rsc-html-stream): its inlined payload is rewritten\n"
             "                            and the page written again, the pushes whose bytes\n"
             "                            changed escaped as the framework escapes them and\n"
             "                            every other byte as it was (an input that opens\n"
             "                            with '<' is read so without it)\n"
             "  --chunk-size N            feed the input in pieces of N bytes\n"
             "  -q, --quiet               no summary\n"
             "  -h, --help                this help\n"
             "\n"
             "Strings seen are decoded values: \"$$x\" in a row is the string \"$x\";\n"
             "other \"$\" strings (references, $L, $undefined...) are never matched.\n"
             "Exit status: 0 success, 1 input refused (offset and row on stderr) or I/O\n"
             "error, 2 usage error.\n");
}

static int put_stdout(void *ctx, const char *buf, size_t len) {
  (void)ctx;
  return fwrite(buf, 1, len, stdout) == len ? 0 : 1;
}

typedef struct list {
  void *items;
  size_t n, cap, elem;
} list;

static void *list_add(list *l) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 8;
    l->items = realloc(l->items, l->cap * l->elem);
    if (!l->items) {
      perror("rscflight");
      exit(1);
    }
  }
  return (char *)l->items + l->elem * l->n++;
}

static rsc_rewrite_str str(const char *s) {
  rsc_rewrite_str r = {s, strlen(s)};
  return r;
}

/* Grows *buf to hold at least need bytes. */
static bool grow(char **buf, size_t *cap, size_t need) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap : 1 << 16;
  while (nc < need) nc *= 2;
  char *p = realloc(*buf, nc);
  if (!p) return false;
  *buf = p;
  *cap = nc;
  return true;
}

/* Whether buf[0..len) holds a byte other than a UTF-8 byte-order mark and
 * whitespace: enough to tell a page from a payload. */
static bool page_or_payload(const char *buf, size_t len) {
  size_t i = 0;
  if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) i = 3;
  else if (len < 3 && memcmp(buf, "\xEF\xBB\xBF", len) == 0) return false;
  while (i < len &&
         (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\f'))
    i++;
  return i < len;
}

static const char *flavor_name(rsc_html_flavor f) {
  return f == RSC_HTML_NEXT ? "next" : f == RSC_HTML_RSC_HTML_STREAM ? "rsc-html-stream" : "none";
}

/* An HTML page (the whole of it in page[0..len)): rewritten with
 * rsc_rewrite_html and written to stdout. Returns the exit status. */
static int rewrite_page(const char *file, const char *page, size_t len,
                        const rsc_rewrite_options *o, bool quiet) {
  char *out = NULL;
  size_t out_len = 0;
  rsc_html_rewrite_info info;
  rsc_error err;
  if (rsc_rewrite_html(page, len, RSC_HTML_AUTO, o, &out, &out_len, &info, &err) != RSC_OK) {
    cli_report_error(file, &err);
    return 1;
  }
  bool ok = fwrite(out, 1, out_len, stdout) == out_len && fflush(stdout) == 0;
  rsc_free(out);
  if (!ok) {
    fprintf(stderr, "rscflight: %s: I/O error\n", file);
    return 1;
  }
  const rsc_rewrite_stats *s = &info.rewriter;
  if (!quiet)
    fprintf(stderr,
            "rscflight: rewrite: %s page: %llu rows, %llu changed, %llu strings changed, %llu "
            "props dropped, %llu set, %zu of %zu pushes rewritten, payload %zu bytes in, %zu "
            "out, page %zu bytes in, %zu out\n",
            flavor_name(info.flavor), (unsigned long long)s->rows,
            (unsigned long long)s->rows_changed, (unsigned long long)s->strings_changed,
            (unsigned long long)s->props_dropped, (unsigned long long)s->props_set,
            info.pushes_changed, info.pushes, info.payload_in, info.payload_out, len, out_len);
  return 0;
}

int cli_rewrite_main(int argc, char **argv) {
  list exact = {0, 0, 0, sizeof(rsc_rewrite_rule)};
  list prefix = {0, 0, 0, sizeof(rsc_rewrite_rule)};
  list keys = {0, 0, 0, sizeof(rsc_rewrite_str)};
  list drop = {0, 0, 0, sizeof(rsc_rewrite_str)};
  list set = {0, 0, 0, sizeof(rsc_rewrite_rule)};
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  const char *file = NULL;
  size_t chunk = 0;
  bool quiet = false, html = false;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if ((strcmp(a, "--replace-prefix") == 0 || strcmp(a, "--replace") == 0 ||
         strcmp(a, "--set-prop") == 0) &&
        i + 2 < argc) {
      list *l = a[2] == 'r' ? (a[9] == '-' ? &prefix : &exact) : &set;
      rsc_rewrite_rule *r = (rsc_rewrite_rule *)list_add(l);
      r->from = str(argv[i + 1]);
      r->to = str(argv[i + 2]);
      i += 2;
    } else if (strcmp(a, "--keys") == 0 && i + 1 < argc) {
      char *s = argv[++i];
      for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ","))
        *(rsc_rewrite_str *)list_add(&keys) = str(tok);
    } else if (strcmp(a, "--drop-prop") == 0 && i + 1 < argc) {
      *(rsc_rewrite_str *)list_add(&drop) = str(argv[++i]);
    } else if (strcmp(a, "--html") == 0) {
      html = true;
    } else if (strcmp(a, "--no-hints") == 0) {
      o.flags |= RSC_REWRITE_NO_HINTS;
    } else if (strcmp(a, "--no-imports") == 0) {
      o.flags |= RSC_REWRITE_NO_IMPORTS;
    } else if (strcmp(a, "--chunk-size") == 0 && i + 1 < argc) {
      chunk = (size_t)strtoull(argv[++i], NULL, 10);
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_rewrite_help(stdout);
      return 0;
    } else if (a[0] == '-' && a[1] != 0) {
      fprintf(stderr, "rscflight: rewrite: unknown or incomplete option '%s'\n", a);
      cli_rewrite_help(stderr);
      return 2;
    } else if (!file) {
      file = a;
    } else {
      fprintf(stderr, "rscflight: rewrite: one input at a time\n");
      return 2;
    }
  }
  if (!file) file = "-";
  o.exact = (const rsc_rewrite_rule *)exact.items;
  o.exact_count = exact.n;
  o.prefix = (const rsc_rewrite_rule *)prefix.items;
  o.prefix_count = prefix.n;
  o.keys = (const rsc_rewrite_str *)keys.items;
  o.keys_count = keys.n;
  o.drop_props = (const rsc_rewrite_str *)drop.items;
  o.drop_props_count = drop.n;
  o.set_props = (const rsc_rewrite_rule *)set.items;
  o.set_props_count = set.n;
  int rc = 0;
  rsc_rewriter *rw = rsc_rewriter_new(&o, put_stdout, NULL);
  if (!rw) {
    fprintf(stderr, "rscflight: rewrite: out of memory or a --set-prop value that is not JSON\n");
    rc = 2;
    goto out;
  }
  FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
  if (!in) {
    perror(file);
    rsc_rewriter_free(rw);
    rc = 1;
    goto out;
  }
  size_t cap = chunk ? chunk : 1 << 16;
  /* The input's start, read until it shows whether it is a page: a page is
   * rewritten whole in memory, a payload streamed. */
  char *buf = NULL;
  size_t len = 0, bcap = 0, n;
  bool ioerr = false, page;
  rsc_status st = RSC_OK;
  do {
    if (!grow(&buf, &bcap, len + cap)) {
      st = RSC_ERR_NOMEM;
      break;
    }
    n = fread(buf + len, 1, cap, in);
    len += n;
  } while (n > 0 && !page_or_payload(buf, len));
  page = st == RSC_OK && (html || rsc__looks_like_page(buf, len));
  if (page) {
    while (st == RSC_OK && n > 0) {
      if (!grow(&buf, &bcap, len + cap)) st = RSC_ERR_NOMEM;
      else len += n = fread(buf + len, 1, cap, in);
    }
  } else if (st == RSC_OK && len) {
    st = rsc_rewriter_feed(rw, buf, len);
    len = 0;
    while (st == RSC_OK && (n = fread(buf, 1, cap, in)) > 0) st = rsc_rewriter_feed(rw, buf, n);
  }
  ioerr = ferror(in);
  if (in != stdin) fclose(in);
  if (st == RSC_ERR_NOMEM && !rsc_rewriter_error(rw)->code) {
    fprintf(stderr, "rscflight: %s: out of memory\n", file);
    rc = 1;
  } else if (ioerr) {
    fprintf(stderr, "rscflight: %s: I/O error\n", file);
    rc = 1;
  } else if (page) {
    rc = rewrite_page(file, buf, len, &o, quiet);
  } else {
    if (st == RSC_OK) st = rsc_rewriter_finish(rw);
    if (fflush(stdout) != 0) {
      fprintf(stderr, "rscflight: %s: I/O error\n", file);
      rc = 1;
    } else if (st != RSC_OK) {
      cli_report_error(file, rsc_rewriter_error(rw));
      rc = 1;
    }
    const rsc_rewrite_stats *s = rsc_rewriter_stats(rw);
    if (!quiet && rc == 0)
      fprintf(stderr,
              "rscflight: rewrite: %llu rows, %llu changed, %llu strings changed, %llu props "
              "dropped, %llu set, %llu bytes in, %llu out\n",
              (unsigned long long)s->rows, (unsigned long long)s->rows_changed,
              (unsigned long long)s->strings_changed, (unsigned long long)s->props_dropped,
              (unsigned long long)s->props_set, (unsigned long long)s->bytes_in,
              (unsigned long long)s->bytes_out);
  }
  free(buf);
  rsc_rewriter_free(rw);
out:
  free(exact.items);
  free(prefix.items);
  free(keys.items);
  free(drop.items);
  free(set.items);
  return rc;
}
