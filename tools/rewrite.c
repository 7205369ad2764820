/* rewrite.c - `rscflight rewrite`: a Flight payload changed by rules
 * (rsc_rewriter, include/rscflight.h), streamed from FILE or stdin to
 * stdout; a one-line summary on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
  if (html) {
    /* (pages: the HTML stage) */
    fprintf(stderr, "rscflight: rewrite: --html is not supported yet\n");
    rc = 2;
  } else {
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
    char *buf = malloc(cap);
    size_t n;
    rsc_status st = buf ? RSC_OK : RSC_ERR_NOMEM;
    while (st == RSC_OK && (n = fread(buf, 1, cap, in)) > 0) st = rsc_rewriter_feed(rw, buf, n);
    bool ioerr = ferror(in);
    if (in != stdin) fclose(in);
    free(buf);
    if (st == RSC_OK && !ioerr) st = rsc_rewriter_finish(rw);
    if (fflush(stdout) != 0) ioerr = true;
    if (ioerr) {
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
    rsc_rewriter_free(rw);
  }
out:
  free(exact.items);
  free(prefix.items);
  free(keys.items);
  free(drop.items);
  free(set.items);
  return rc;
}
