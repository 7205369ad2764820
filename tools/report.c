/* report.c - `rscflight report`: the byte report (rsc_report_html) of a
 * payload or a page, one self-contained HTML file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_report_help(FILE *f) {
  fputs("usage: rscflight report [options] [FILE|-] [-o report.html]\n"
        "\n"
        "Write one self-contained HTML page (no network: styles, script and data\n"
        "inline) that shows where the bytes of a Flight payload go: a zoomable treemap\n"
        "of bytes by row and value (elements by component or host tag, client modules\n"
        "by module), components by their bytes, repeated strings and subtrees with the\n"
        "bytes they cost and where they occur, and the rows in stream order coloured by\n"
        "the Suspense boundary (lazy or promise) each settles. An HTML page (one that\n"
        "opens with '<', or any input with --html) is reported as the payload it\n"
        "inlines, against the page's own bytes. A payload the decoder refuses is\n"
        "measured all the same (the page and stderr say where it failed).\n"
        "\n"
        "options:\n"
        "  -o FILE            write the page to FILE (default: stdout)\n"
        "  --html             the input is an HTML page\n"
        "  -h, --help         this help\n"
        "\n" CLI_DECODE_HELP,
        f);
}

static int write_file(void *ctx, const char *buf, size_t len) {
  return fwrite(buf, 1, len, (FILE *)ctx) == len ? 0 : 1;
}

int cli_report_main(int argc, char **argv) {
  const char *file = NULL, *outpath = NULL;
  int page = -1;
  rsc_options opt;
  rsc_options_init(&opt);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int known = cli_decode_flag(argc, argv, &i, &opt);
    if (known < 0) {
      fprintf(stderr, "rscflight report: %s wants a bundler name\n", a);
      return 2;
    } else if (known) continue;
    else if (strcmp(a, "-o") == 0 && i + 1 < argc) outpath = argv[++i];
    else if (strcmp(a, "--html") == 0) page = 1;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      cli_report_help(stdout);
      return 0;
    } else if ((a[0] == '-' && a[1]) || file) {
      fprintf(stderr, "rscflight report: unexpected argument '%s' (see rscflight report --help)\n",
              a);
      return 2;
    } else file = a;
  }
  if (!file) file = "-";
  size_t len;
  char *buf = cli_read_file(file, &len);
  if (!buf) {
    fprintf(stderr, "rscflight: %s: %s\n", file, strerror(errno));
    return 1;
  }
  FILE *out = outpath ? fopen(outpath, "wb") : stdout;
  if (!out) {
    fprintf(stderr, "rscflight: %s: %s\n", outpath, strerror(errno));
    free(buf);
    return 1;
  }
  rsc_error err;
  rsc_status st = rsc_report_html(buf, len, page, &opt, write_file, out, &err);
  free(buf);
  int rc = 0;
  if (st == RSC_ERR_USER || fflush(out) != 0) {
    fprintf(stderr, "rscflight: %s: write failed\n", outpath ? outpath : "stdout");
    rc = 1;
  } else if (st != RSC_OK) {
    cli_report_error(file, &err);
    rc = 1;
  } else if (err.code != RSC_OK) {
    fprintf(stderr, "rscflight: %s: the payload does not decode (reported all the same): ", file);
    if (err.row_id >= 0)
      fprintf(stderr, "offset %llu, row %llx: %s\n", (unsigned long long)err.offset,
              (unsigned long long)err.row_id, err.msg);
    else fprintf(stderr, "offset %llu: %s\n", (unsigned long long)err.offset, err.msg);
  }
  if (outpath && fclose(out) != 0 && rc == 0) {
    fprintf(stderr, "rscflight: %s: %s\n", outpath, strerror(errno));
    rc = 1;
  }
  return rc;
}
