/* rscflight - command-line tool: a thin client of include/rscflight.h (and
 * of src/bench_hooks.h for bench --parse-only).
 *
 *   rscflight dump  [--chunk-size N] [--dev] [--allow-partial] [--lenient-ids]
 *                   [--temp-refs] [--borrow-input] [--bundler B] [--compact] [--html]
 *                   [--strict]
 *                   [FILE|-]
 *   rscflight bench [--json] [--min-time S] [--chunk-size N[,N...]] [--parse-only]
 *                   [--encode | --rewrite [--replace-prefix OLD NEW]]
 *                   [--parse-walk]
 *                   [--borrow-input] [--reuse] [--files-in-turns] [--threads N[,N...]]
 *                   [--html] [FILE...|-]
 *   rscflight tree  [--color[=WHEN]] [--no-color] [--full] [--depth N] [--no-finish]
 *                   [--chunk-size N] [--dev] [--allow-partial] [--lenient-ids]
 *                   [--temp-refs] [--bundler B] [--html] [--strict] [FILE|-]
 *   rscflight stats [--top N] [--dev] [--html] [FILE|-]
 *   rscflight report [--html] [-o report.html] [FILE|-]
 *   rscflight encode [--dev] [--bundler B] [--html] [FILE|-]
 *   rscflight rewrite [--replace-prefix OLD NEW] [--replace OLD NEW] [--keys K,...]
 *                   [--drop-prop KEY] [--set-prop KEY JSON] [--html] [FILE|-]
 *   rscflight extract [--flavor auto|next|rsc-html-stream] FILE.html|-
 *   rscflight help [COMMAND] | --help | --version
 *
 * Every command that decodes reads stdin for - or no FILE, and reads an HTML
 * page as the payload it inlines (cli_read_payload): with --html, or by
 * itself when the input opens with '<'. tree, stats and report live in
 * tree.c, stats.c and report.c (see cli.h).
 * Exit status: 0 success, 1 input refused (or I/O error, or with --strict a
 * stream that ended early), 2 usage error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rscflight.h"
#include "bench_hooks.h"
#include "cli.h"
#include "describe.h"

static const char *prog = "rscflight";
/* The subcommand being run (NULL before one is chosen): usage() prints its help. */
static const char *command;

static void top_help(FILE *f) {
  fprintf(f,
          "usage: %s <command> [options] [FILE...]\n"
          "\n"
          "Decode and inspect React Server Components \"Flight\" payloads (rscflight %s).\n"
          "\n"
          "commands:\n"
          "  dump [FILE|-]      print the canonical dump (CANONICAL-DUMP.md) of a Flight payload\n"
          "  tree [FILE|-]      print the element tree: tags, components, keys, props, lazies\n"
          "  stats [FILE|-]     where the bytes go: per row type, client module, component,\n"
          "                     largest chunks, repeated strings\n"
          "  report [FILE|-]    the same as one self-contained HTML page: a zoomable\n"
          "                     treemap, duplicates, the stream by boundary (-o FILE)\n"
          "  encode [FILE|-]    decode a Flight payload and write it back as Flight\n"
          "  rewrite [FILE|-]   change strings and props of a payload by rules (prefix,\n"
          "                     exact, keys, dropped props); unchanged rows copied\n"
          "  extract FILE.html  write the Flight payload a page inlines (Next.js,\n"
          "                     rsc-html-stream) to stdout\n"
          "  bench [FILE...|-]  time full decodes: bytes, median ns, MB/s, peak memory\n"
          "  help [COMMAND]     this help, or a command's options (also: COMMAND --help)\n"
          "\n"
          "options:\n"
          "  -h, --help         this help\n"
          "  --version          print the library version\n"
          "\n"
          "dump, tree, stats, report and bench read stdin for - or no FILE, and an HTML page\n"
          "(one that opens with '<', or any input with --html) as the Flight payload\n"
          "it inlines.\n"
          "\n"
          "Exit status: 0 success, 1 input refused or I/O error, 2 usage error.\n",
          prog, rsc_version());
}

static void dump_help(FILE *f) {
  fprintf(f,
          "usage: %s dump [options] [FILE|-]\n"
          "\n"
          "Print the canonical dump (CANONICAL-DUMP.md) of a Flight payload, read from\n"
          "FILE or stdin.\n"
          "\n"
          "options:\n"
          "  --chunk-size N     feed the decoder N bytes at a time (default: whole input)\n"
          "  --compact          one line instead of 2-space indentation\n"
          "  --html             the input is an HTML page: decode the payload it inlines\n"
          "                     (a page that opens with '<' is read so without it)\n"
          "  --strict           exit 1 when the stream ended early (a row cut off, rows\n"
          "                     referenced that never arrived, a stream left open)\n"
          "  -h, --help         this help\n"
          "\n" CLI_DECODE_HELP "\n"
          "A stream that ended early still dumps as React's client sees it (what never\n"
          "arrived is rejected with \"Connection closed.\"); stderr says where it ended\n"
          "and which rows were missing.\n",
          prog);
}

static int usage(FILE *f, int code);
static void encode_help(FILE *f);

static void extract_help(FILE *f) {
  fprintf(f,
          "usage: %s extract [--flavor auto|next|rsc-html-stream] FILE.html|-\n"
          "\n"
          "Write to stdout the Flight payload bytes an HTML page hands to React's client:\n"
          "Next.js self.__next_f pushes or rsc-html-stream __FLIGHT_DATA pushes, found as\n"
          "a browser runs the page's scripts (look-alikes in comments, templates, text\n"
          "areas, data scripts and other scripts' strings are not pushes).\n",
          prog);
}

/* The payload an HTML page inlines; NULL (after reporting) on failure. */
static char *html_payload(const char *file, const char *html, size_t hlen, rsc_html_flavor flavor,
                          size_t *len) {
  char *out = NULL;
  rsc_error e;
  if (rsc_html_extract(html, hlen, flavor, &out, len, &e, NULL) != RSC_OK) {
    cli_report_error(file, &e);
    return NULL;
  }
  return out;
}

static int cmd_extract(int argc, char **argv) {
  rsc_html_flavor flavor = RSC_HTML_AUTO;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--flavor") == 0 && i + 1 < argc) {
      const char *v = argv[++i];
      if (strcmp(v, "auto") == 0) flavor = RSC_HTML_AUTO;
      else if (strcmp(v, "next") == 0) flavor = RSC_HTML_NEXT;
      else if (strcmp(v, "rsc-html-stream") == 0) flavor = RSC_HTML_RSC_HTML_STREAM;
      else return usage(stderr, 2);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(stdout, 0);
    else if (a[0] == '-' && a[1]) return usage(stderr, 2);
    else if (file) return usage(stderr, 2);
    else file = a;
  }
  if (!file) return usage(stderr, 2);
  size_t hlen, len;
  char *html = cli_read_file(file, &hlen);
  if (!html) {
    fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(errno));
    return 1;
  }
  char *payload = html_payload(file, html, hlen, flavor, &len);
  free(html);
  if (!payload) return 1;
  fwrite(payload, 1, len, stdout);
  rsc_free(payload);
  return 0;
}

static void bench_help(FILE *f) {
  fprintf(f,
          "usage: %s bench [options] [FILE...|-]\n"
          "\n"
          "Time full decodes of each FILE (stdin for - or no FILE): bytes, median ns,\n"
          "MB/s, peak memory.\n"
          "\n"
          "options:\n"
          "  --json             print a JSON list of {file,bytes,median_ns,mb_per_s,peak_bytes,\n"
          "                     rss_growth_bytes,runs,threads,chunk_size}; rss_growth_bytes\n"
          "                     is what the first file's first decode added to the\n"
          "                     resident set (Linux; -1 otherwise, and for the rest)\n"
          "  --min-time S       time each file for at least S seconds (default 1)\n"
          "  --chunk-size N     feed N bytes at a time (0: the buffer whole, the default)\n"
          "  --parse-only       frame rows and parse their JSON with simdjson only (floor)\n"
          "  --parse-walk       the floor, then one pass reading every value of the tape\n"
          "  --drop-bom         drop a U+FEFF that begins a row, as React 19.3.1 does\n"
          "  --lenient          decode values no server writes as React does\n"
          "  --borrow-input     text and binary rows point into the input, not copies\n"
          "  --html             the input is an HTML page: time the payload it inlines\n"
          "                     (a page that opens with '<' is read so without it)\n"
          "  --encode           time rsc_encode writing the decoded payload back as\n"
          "                     Flight (to a writer that drops it) beside the decode of\n"
          "                     the same bytes, in turns: median ns and MB/s of each\n"
          "  --rewrite          time rsc_rewrite (a prefix rule, a writer that drops\n"
          "                     the output) beside the decode of the same bytes, in\n"
          "                     turns; then the streaming rewriter's peak heap fed in\n"
          "                     64 KiB pieces against the largest row\n"
          "  --replace-prefix OLD NEW  the rule of --rewrite (default /_next/ ->\n"
          "                     https://cdn.example/_next/)\n"
          "  --reuse            reset one decoder between decodes (rsc_decoder_reset)\n"
          "                     instead of a new one each time: memory stays mapped\n"
          "  --files-in-turns   time all FILEs in one process, in turns (the file that\n"
          "                     has had the least time next, about 2 ms or one decode\n"
          "                     a turn), a decoder each: their ratios leave out what\n"
          "                     differs between processes (whole buffer, one thread)\n"
          "  --threads N        N threads decode at once, batch after batch (each thread\n"
          "                     several decodes per batch); median_ns is the wall time\n"
          "                     of N concurrent decodes, mb_per_s the aggregate\n"
          "                     --chunk-size and --threads take lists (4096,65536) or\n"
          "                     repeat: every combination is timed in turns of about\n"
          "                     2 ms in one process, one result each, so that their\n"
          "                     ratios leave out what differs between processes\n"
          "  -h, --help         this help\n",
          prog);
}

/* Prints the help of the command being run (the top-level help before one
 * is chosen) and returns code. */
static int usage(FILE *f, int code) {
  if (command && strcmp(command, "dump") == 0) dump_help(f);
  else if (command && strcmp(command, "encode") == 0) encode_help(f);
  else if (command && strcmp(command, "bench") == 0) bench_help(f);
  else if (command && strcmp(command, "extract") == 0) extract_help(f);
  else if (command && strcmp(command, "tree") == 0) cli_tree_help(f);
  else if (command && strcmp(command, "stats") == 0) cli_stats_help(f);
  else if (command && strcmp(command, "report") == 0) cli_report_help(f);
  else if (command && strcmp(command, "rewrite") == 0) cli_rewrite_help(f);
  else top_help(f);
  return code;
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0) break;
  }
  if (f != stdin) fclose(f);
  /* RSC_PADDING readable bytes after the data: rsc_decoder_feed_padded
   * parses the last row in place. */
  if (buf && cap - n < RSC_PADDING) {
    char *nb = realloc(buf, n + RSC_PADDING);
    if (!nb) free(buf);
    buf = nb;
  }
  if (buf) memset(buf + n, 0, RSC_PADDING);
  *len = n;
  return buf;
}

char *cli_read_file(const char *path, size_t *len) {
  struct stat st;
  if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR; /* fopen accepts a directory; reading it gives nothing */
    return NULL;
  }
  return read_all(path, len);
}

char *cli_read_payload(const char *path, bool html, size_t *len) {
  char *buf = cli_read_file(path, len);
  if (!buf) {
    fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    return NULL;
  }
  if (!html && !rsc__looks_like_page(buf, *len)) return buf;
  size_t n;
  char *payload = html_payload(path, buf, *len, RSC_HTML_AUTO, &n);
  free(buf);
  if (!payload) return NULL;
  buf = malloc(n + RSC_PADDING);
  if (!buf) {
    fprintf(stderr, "%s: %s: out of memory\n", prog, path);
  } else {
    memcpy(buf, payload, n);
    memset(buf + n, 0, RSC_PADDING);
    *len = n;
  }
  rsc_free(payload);
  return buf;
}

void cli_report_error(const char *file, const rsc_error *e) {
  if (e->row_id >= 0)
    fprintf(stderr, "%s: %s: offset %llu, row %llx: %s\n", prog, file,
            (unsigned long long)e->offset, (unsigned long long)e->row_id, e->msg);
  else
    fprintf(stderr, "%s: %s: offset %llu: %s\n", prog, file, (unsigned long long)e->offset, e->msg);
}

/* Up to CLI_MAX_IDS ids in hex, ", "-separated, then how many more. */
enum { CLI_MAX_IDS = 16 };
static void print_ids(const int64_t *ids, size_t n) {
  for (size_t i = 0; i < n && i < CLI_MAX_IDS; i++) {
    if (ids[i] < 0) fprintf(stderr, "%s(not hex)", i ? ", " : "");
    else fprintf(stderr, "%s%llx", i ? ", " : "", (unsigned long long)ids[i]);
  }
  if (n > CLI_MAX_IDS) fprintf(stderr, " and %zu more", n - CLI_MAX_IDS);
}

int cli_report_incomplete(const char *file, rsc_decoder *d) {
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  if (!inc) return 0;
  fprintf(stderr, "%s: %s: the stream ended early, at offset %llu", prog, file,
          (unsigned long long)inc->offset);
  if (inc->cut && inc->cut_id >= 0)
    fprintf(stderr, "; row %llx (from offset %llu) was cut off", (unsigned long long)inc->cut_id,
            (unsigned long long)inc->cut_offset);
  else if (inc->cut)
    fprintf(stderr, "; a row (from offset %llu) was cut off inside its id",
            (unsigned long long)inc->cut_offset);
  if (inc->missing_len) {
    fprintf(stderr, "; rows that never arrived: ");
    print_ids(inc->missing, inc->missing_len);
  }
  if (inc->open_streams_len) {
    fprintf(stderr, "; streams left open: ");
    print_ids(inc->open_streams, inc->open_streams_len);
  }
  fputc('\n', stderr);
  return 1;
}

/* ---- counting allocator (peak memory) ------------------------------------- */

typedef struct counter {
  size_t now, peak;
} counter;

static void *c_malloc(void *ctx, size_t n) {
  counter *c = ctx;
  size_t *p = malloc(n + 16);
  if (!p) return NULL;
  p[0] = n;
  c->now += n;
  if (c->now > c->peak) c->peak = c->now;
  return (char *)p + 16;
}
static void c_free(void *ctx, void *ptr) {
  if (!ptr) return;
  counter *c = ctx;
  size_t *p = (size_t *)((char *)ptr - 16);
  c->now -= p[0];
  free(p);
}
static void *c_realloc(void *ctx, void *ptr, size_t old, size_t n) {
  (void)old;
  void *q = c_malloc(ctx, n);
  if (!q) return NULL;
  if (ptr) {
    size_t *p = (size_t *)((char *)ptr - 16);
    memcpy(q, ptr, p[0] < n ? p[0] : n);
    c_free(ctx, ptr);
  }
  return q;
}

/* ---- decode ------------------------------------------------------------------ */

/* buf has RSC_PADDING readable bytes after len (cli_read_file's buffers
 * do). Pieces are fed plainly, as a network read would give them. */
static void feed_all(rsc_decoder *d, const char *buf, size_t len, size_t chunk) {
  if (chunk == 0 || chunk >= len) {
    rsc_decoder_feed_padded(d, buf, len);
  } else {
    for (size_t i = 0; i < len; i += chunk)
      if (rsc_decoder_feed(d, buf + i, len - i < chunk ? len - i : chunk) != RSC_OK) break;
  }
  rsc_decoder_finish(d);
}

/* A decoder for opt. bench --parse-only asks for the library's internal
 * floor (bench_hooks.h) with RSC__OPT_PARSE_ONLY in opt->flags, a bit
 * rsc_decoder_new itself ignores. */
static rsc_decoder *decoder_new(const rsc_options *opt) {
  rsc_decoder *d = rsc_decoder_new(opt);
  if (d && (opt->flags & RSC__OPT_PARSE_WALK)) rsc__decoder_set_parse_walk(d);
  else if (d && (opt->flags & RSC__OPT_PARSE_ONLY)) rsc__decoder_set_parse_only(d);
  return d;
}

static rsc_decoder *decode(const char *buf, size_t len, const rsc_options *opt, size_t chunk) {
  rsc_decoder *d = decoder_new(opt);
  if (d) feed_all(d, buf, len, chunk);
  return d;
}

/* One timed decode: a fresh decoder, or (reuse) *keep reset. */
static bool decode_timed(const char *buf, size_t len, const rsc_options *opt, size_t chunk,
                         rsc_decoder **keep) {
  if (keep) {
    if (!*keep) *keep = decoder_new(opt);
    else if (rsc_decoder_reset(*keep) != RSC_OK) return false;
    if (!*keep) return false;
    feed_all(*keep, buf, len, chunk);
    return rsc_decoder_error(*keep)->code == RSC_OK;
  }
  rsc_decoder *d = decode(buf, len, opt, chunk);
  bool ok = d && rsc_decoder_error(d)->code == RSC_OK;
  rsc_decoder_free(d);
  return ok;
}

/* rsc_dump_to's writer: stdout. */
static int write_stdout(void *ctx, const char *buf, size_t len) {
  (void)ctx;
  return fwrite(buf, 1, len, stdout) == len ? 0 : -1;
}

int cli_parse_bundler(const char *name, rsc_bundler *out) {
  static const char *const names[] = {"webpack", "turbopack", "parcel", "rspack"};
  static const rsc_bundler values[] = {RSC_BUNDLER_WEBPACK, RSC_BUNDLER_TURBOPACK,
                                       RSC_BUNDLER_PARCEL, RSC_BUNDLER_RSPACK};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = values[i];
      return 1;
    }
  return 0;
}

int cli_decode_flag(int argc, char **argv, int *i, rsc_options *opt) {
  static const struct {
    const char *name;
    uint32_t flag;
  } flags[] = {
      {"--dev", RSC_OPT_DEV},
      {"--allow-partial", RSC_OPT_ALLOW_PARTIAL},
      {"--lenient-ids", RSC_OPT_LENIENT_IDS},
      {"--temp-refs", RSC_OPT_TEMP_REFS},
      {"--borrow-input", RSC_OPT_BORROW_INPUT},
      {"--drop-bom", RSC_OPT_DROP_BOM},
      {"--lenient", RSC_OPT_LENIENT_VALUES},
  };
  const char *a = argv[*i];
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    if (strcmp(a, flags[k].name) == 0) {
      opt->flags |= flags[k].flag;
      return 1;
    }
  if (strcmp(a, "--bundler") != 0) return 0;
  if (*i + 1 >= argc || !cli_parse_bundler(argv[*i + 1], &opt->bundler)) return -1;
  ++*i;
  return 1;
}

/* The input of dump and encode decoded, or NULL after saying why on
 * stderr (the caller exits 1). *buf holds the input: it outlives the
 * decoder (RSC_OPT_BORROW_INPUT may point into it). */
static rsc_decoder *decode_input(const char *file, int html, const rsc_options *opt, size_t chunk,
                                 char **buf) {
  size_t len;
  *buf = cli_read_payload(file, html, &len);
  if (!*buf) return NULL;
  rsc_decoder *d = decode(*buf, len, opt, chunk);
  if (!d) {
    fprintf(stderr, "%s: %s: out of memory\n", prog, file);
  } else if (rsc_decoder_error(d)->code != RSC_OK) {
    cli_report_error(file, rsc_decoder_error(d));
    rsc_decoder_free(d);
    d = NULL;
  }
  if (!d) {
    free(*buf);
    *buf = NULL;
  }
  return d;
}

/* How writing the text of d ended, said on stderr when it failed. */
static void report_written(const char *file, rsc_decoder *d, rsc_status st) {
  if (st == RSC_ERR_USER) fprintf(stderr, "%s: stdout: %s\n", prog, strerror(errno));
  else if (st == RSC_ERR_NOMEM) fprintf(stderr, "%s: %s: out of memory\n", prog, file);
  else if (st != RSC_OK && rsc_decoder_error(d)->code) cli_report_error(file, rsc_decoder_error(d));
  else if (st != RSC_OK) fprintf(stderr, "%s: %s: %s\n", prog, file, rsc_status_name(st));
}

/* dump's and encode's --chunk-size N: N, a positive decimal, or 0 when the
 * text is not one. */
static size_t chunk_size_arg(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 10);
  return *end || v <= 0 ? 0 : (size_t)v;
}

static int cmd_dump(int argc, char **argv) {
  rsc_options opt;
  rsc_options_init(&opt);
  size_t chunk = 0;
  int pretty = 2, html = 0, strict = 0;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int known = cli_decode_flag(argc, argv, &i, &opt);
    if (known < 0) return usage(stderr, 2);
    else if (known) continue;
    else if (strcmp(a, "--compact") == 0) pretty = 0;
    else if (strcmp(a, "--html") == 0) html = 1;
    else if (strcmp(a, "--strict") == 0) strict = 1;
    else if (strcmp(a, "--chunk-size") == 0 && i + 1 < argc) {
      if (!(chunk = chunk_size_arg(argv[++i]))) return usage(stderr, 2);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(stdout, 0);
    else if (a[0] == '-' && a[1]) return usage(stderr, 2);
    else if (file) return usage(stderr, 2);
    else file = a;
  }
  if (!file) file = "-";
  char *buf;
  rsc_decoder *d = decode_input(file, html, &opt, chunk, &buf);
  if (!d) return 1;
  /* Streamed: the text can be far larger than the decode (deep nesting,
   * indented). */
  rsc_status st = rsc_dump_to(d, pretty, write_stdout, NULL);
  if (st == RSC_OK && !pretty) fputc('\n', stdout);
  if (st == RSC_OK && fflush(stdout) != 0) st = RSC_ERR_USER;
  report_written(file, d, st);
  int early = st == RSC_OK ? cli_report_incomplete(file, d) : 0;
  rsc_decoder_free(d);
  free(buf);
  if (st != RSC_OK) return 1;
  return strict && early ? 1 : 0;
}

static void encode_help(FILE *f) {
  fprintf(f,
          "usage: %s encode [decode flags] [--html] [FILE|-]\n"
          "       %s encode --stream [--chunk-size N] [decode flags] [FILE|-]\n"
          "\n"
          "Decode a Flight payload, then write it back as Flight to stdout (rsc_encode):\n"
          "for what React's server wrote, the same bytes. Exit 1 with the error's byte\n"
          "offset when the input is refused.\n"
          "\n"
          "  --stream        read the input in pieces as it comes (at most N bytes a read,\n"
          "                  65536 unless --chunk-size says) and write each row to stdout\n"
          "                  as soon as it is final (rsc_encode_ready), flushed after\n"
          "                  every piece: a proxy's pass-through that does not wait for\n"
          "                  the end of the stream. The output is that of encode.\n"
          "  --html          the input is an HTML page: encode the payload it inlines\n"
          "\n" CLI_DECODE_HELP,
          prog, prog);
}

/* encode --stream: the input read in pieces of at most chunk bytes, each
 * fed, then the rows that are final written and flushed. */
static int encode_stream(const char *file, const rsc_options *opt, size_t chunk) {
  int fd = strcmp(file, "-") == 0 ? 0 : open(file, O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(errno));
    return 1;
  }
  char *buf = (char *)malloc(chunk);
  rsc_decoder *d = buf ? decoder_new(opt) : NULL;
  if (!d) {
    fprintf(stderr, "%s: %s: out of memory\n", prog, file);
    free(buf);
    if (fd) close(fd);
    return 1;
  }
  rsc_status st = RSC_OK;
  int read_failed = 0;
  for (;;) {
    ssize_t n = read(fd, buf, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_failed = errno;
      break;
    }
    if (n == 0) break;
    if (rsc_decoder_feed(d, buf, (size_t)n) != RSC_OK) break;
    st = rsc_encode_ready(d, write_stdout, NULL);
    if (st == RSC_OK && fflush(stdout) != 0) st = RSC_ERR_USER;
    if (st != RSC_OK) break;
  }
  if (fd) close(fd);
  free(buf);
  if (read_failed) {
    fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(read_failed));
    rsc_decoder_free(d);
    return 1;
  }
  if (st == RSC_OK && rsc_decoder_error(d)->code == RSC_OK) rsc_decoder_finish(d);
  if (rsc_decoder_error(d)->code != RSC_OK) {
    fflush(stdout);
    cli_report_error(file, rsc_decoder_error(d));
    rsc_decoder_free(d);
    return 1;
  }
  if (st == RSC_OK) st = rsc_encode_ready(d, write_stdout, NULL);
  if (st == RSC_OK && fflush(stdout) != 0) st = RSC_ERR_USER;
  report_written(file, d, st);
  rsc_decoder_free(d);
  return st != RSC_OK;
}

static int cmd_encode(int argc, char **argv) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags |= RSC_OPT_KEEP_ROWS;
  int html = 0, stream = 0;
  size_t chunk = 0;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int known = cli_decode_flag(argc, argv, &i, &opt);
    if (known < 0) return usage(stderr, 2);
    else if (known) continue;
    else if (strcmp(a, "--html") == 0) html = 1;
    else if (strcmp(a, "--stream") == 0) stream = 1;
    else if (strcmp(a, "--chunk-size") == 0 && i + 1 < argc) {
      if (!(chunk = chunk_size_arg(argv[++i]))) return usage(stderr, 2);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(stdout, 0);
    else if (a[0] == '-' && a[1]) return usage(stderr, 2);
    else if (file) return usage(stderr, 2);
    else file = a;
  }
  if (!file) file = "-";
  /* --stream reads into one buffer again and again: nothing can borrow it */
  if (stream && (html || (opt.flags & RSC_OPT_BORROW_INPUT))) return usage(stderr, 2);
  if (stream) return encode_stream(file, &opt, chunk ? chunk : 65536);
  char *buf;
  rsc_decoder *d = decode_input(file, html, &opt, 0, &buf);
  if (!d) return 1;
  rsc_status st = rsc_encode(d, write_stdout, NULL);
  if (st == RSC_OK && fflush(stdout) != 0) st = RSC_ERR_USER;
  report_written(file, d, st);
  rsc_decoder_free(d);
  free(buf);
  return st != RSC_OK;
}

/* ---- bench ------------------------------------------------------------------- */

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* What one timing measures: a piece size (0: the buffer whole) and a
 * number of threads decoding at once. Several are timed in turns in one
 * process (--chunk-size and --threads given more than once), so their
 * ratios do not carry the differences between processes: on a VM one
 * process's memory can copy at half the speed of the next one's. */
typedef struct bench_config {
  size_t chunk;
  int threads;
  size_t reps; /* decodes per thread per batch (threads > 1)         */
  double *t;   /* samples: ns per decode (per decode round if > 1)   */
  size_t n, cap;
  size_t runs; /* decodes by the timing thread                       */
  size_t peak; /* peak bytes of one decode at this piece size        */
} bench_config;

#define BENCH_MAX_CONFIGS 16

/* Threads past the first wait at the start barrier for a batch; `active`
 * of them (the timing thread counted) decode `reps` times each, then all
 * meet at the end barrier. The fields are set before the start barrier,
 * which orders them for the workers. */
typedef struct bench_pool {
  const char *buf;
  size_t len, chunk;
  uint32_t flags;
  bool reuse, stop;
  int active;
  size_t reps;
  pthread_barrier_t start, end;
  int ok;
} bench_pool;

static void decode_reps(bench_pool *p, rsc_decoder **keep) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = p->flags;
  for (size_t r = 0; r < p->reps; r++)
    if (!decode_timed(p->buf, p->len, &opt, p->chunk, p->reuse ? keep : NULL)) p->ok = 0;
}

typedef struct bench_worker_arg {
  bench_pool *pool;
  int index;
} bench_worker_arg;

static void *bench_worker(void *arg) {
  bench_worker_arg *w = arg;
  bench_pool *p = w->pool;
  rsc_decoder *keep = NULL;
  for (;;) {
    pthread_barrier_wait(&p->start);
    if (p->stop) break;
    if (w->index < p->active) decode_reps(p, &keep);
    pthread_barrier_wait(&p->end);
  }
  rsc_decoder_free(keep);
  return NULL;
}

static bool add_sample(bench_config *c, double ns) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 1024;
    double *nt = realloc(c->t, cap * sizeof *nt);
    if (!nt) return false;
    c->t = nt;
    c->cap = cap;
  }
  c->t[c->n++] = ns;
  return true;
}

/* A field of /proc/self/status in bytes ("VmHWM:"), or -1 (not Linux). */
static long long proc_status_bytes(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) {
      v = atoll(line + n) * 1024; /* "VmHWM:     1234 kB" */
      break;
    }
  fclose(f);
  return v;
}

/* Starts counting the resident set's peak again from what is resident now
 * (Linux: 5 to clear_refs resets VmHWM); false when it cannot. The peak
 * from exec on (ru_maxrss) would not do: it counts the memory of the
 * process that forked this one, before the exec. */
static bool reset_rss_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  bool ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

/* One decode with a counting allocator: the peak bytes at this piece size. */
static bool measure_peak(const char *buf, size_t len, uint32_t flags, size_t chunk, size_t *peak,
                         const char **msg) {
  counter cnt = {0, 0};
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  opt.alloc.malloc = c_malloc;
  opt.alloc.realloc = c_realloc;
  opt.alloc.free = c_free;
  opt.alloc.ctx = &cnt;
  rsc_decoder *d = decode(buf, len, &opt, chunk);
  bool ok = d && rsc_decoder_error(d)->code == RSC_OK;
  *msg = d ? rsc_decoder_error(d)->msg : "out of memory";
  rsc_decoder_free(d);
  *peak = cnt.peak;
  return ok;
}

/* Times every config on one file, in turns of about 2 ms each, until each
 * has had min_time and at least 5 samples. A one-thread config samples
 * each decode; a config of T threads samples batches (the wall time from
 * the barrier that starts a batch to the one that ends it, per decode
 * round), each batch `reps` decodes per thread so that the barriers'
 * wake-ups (tens of microseconds on a VM) do not swamp small payloads. */
static bool bench_file(const char *buf, size_t len, uint32_t flags, bool reuse, double min_time,
                       bench_config *cfg, int ncfg) {
  int max_threads = 1;
  for (int i = 0; i < ncfg; i++)
    if (cfg[i].threads > max_threads) max_threads = cfg[i].threads;
  bench_pool pool = {buf, len, 0, flags, reuse, false, 1, 1, {{0}}, {{0}}, 1};
  pthread_t th[64];
  bench_worker_arg args[64];
  if (max_threads > 1) {
    pthread_barrier_init(&pool.start, NULL, (unsigned)max_threads);
    pthread_barrier_init(&pool.end, NULL, (unsigned)max_threads);
    for (int k = 1; k < max_threads; k++) {
      args[k] = (bench_worker_arg){&pool, k};
      if (pthread_create(&th[k], NULL, bench_worker, &args[k]) != 0) {
        /* The threads already started wait at a barrier that cannot fill. */
        fprintf(stderr, "%s: bench: cannot start thread %d\n", prog, k + 1);
        exit(1);
      }
    }
  }
  rsc_decoder *keep = NULL;
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  /* Calibrate the batches: about 2 ms of decodes per thread. */
  for (int i = 0; i < ncfg; i++) {
    pool.chunk = cfg[i].chunk;
    pool.reps = 1;
    double t0 = now_ns();
    decode_reps(&pool, &keep);
    decode_reps(&pool, &keep);
    double per = (now_ns() - t0) / 2;
    if (per < 1) per = 1;
    cfg[i].reps = per >= 2e6 ? 1 : (size_t)(2e6 / per);
  }
  const double turn_ns = 2e6;
  double spent[BENCH_MAX_CONFIGS] = {0};
  bool ok = true;
  while (ok) {
    bool done = true;
    for (int i = 0; i < ncfg; i++)
      if (cfg[i].n < 5 || spent[i] < min_time * 1e9) done = false;
    if (done) break;
    for (int i = 0; ok && i < ncfg; i++) {
      bench_config *c = &cfg[i];
      pool.chunk = c->chunk;
      double start = now_ns();
      if (c->threads == 1) {
        double t1;
        do {
          double t0 = now_ns();
          if (!decode_timed(buf, len, &opt, c->chunk, reuse ? &keep : NULL)) pool.ok = 0;
          t1 = now_ns();
          ok = add_sample(c, t1 - t0);
          c->runs++;
        } while (ok && t1 - start < turn_ns);
      } else {
        pool.active = c->threads;
        pool.reps = c->reps;
        pthread_barrier_wait(&pool.start);
        decode_reps(&pool, &keep);
        pthread_barrier_wait(&pool.end);
        ok = add_sample(c, (now_ns() - start) / (double)pool.reps);
        c->runs += pool.reps;
      }
      spent[i] += now_ns() - start;
    }
  }
  if (max_threads > 1) {
    pool.stop = true;
    pthread_barrier_wait(&pool.start);
    for (int k = 1; k < max_threads; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&pool.start);
    pthread_barrier_destroy(&pool.end);
  }
  rsc_decoder_free(keep);
  return ok && pool.ok;
}

/* --files-in-turns: several files timed in one process, one reused (or
 * fresh) decoder each, so that their per-byte ratios (1 MB against 100 MB,
 * the scaling study) leave out the speed differences between processes,
 * which on a VM reach 1.5x. The file that has had the least time goes
 * next, for a turn of about 2 ms or one decode, whichever is longer, until
 * each has had min_time and 5 samples. One thread, the whole buffer. */
typedef struct turn_file {
  const char *buf;
  size_t len;
  rsc_decoder *keep;
  bench_config cfg;
  double spent;
} turn_file;

static bool bench_in_turns(turn_file *tf, int n, uint32_t flags, bool reuse, double min_time) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  bool ok = true;
  for (;;) {
    int next = -1;
    bool done = true;
    for (int i = 0; i < n; i++) {
      if (tf[i].cfg.n < 5 || tf[i].spent < min_time * 1e9) done = false;
      if (next < 0 || tf[i].spent < tf[next].spent) next = i;
    }
    if (done || !ok) break;
    turn_file *f = &tf[next];
    double start = now_ns(), t1;
    do {
      double t0 = now_ns();
      if (!decode_timed(f->buf, f->len, &opt, 0, reuse ? &f->keep : NULL)) ok = false;
      t1 = now_ns();
      if (!add_sample(&f->cfg, t1 - t0)) ok = false;
      f->cfg.runs++;
    } while (ok && t1 - start < 2e6);
    f->spent += t1 - start;
  }
  return ok;
}

/* A file name as a JSON string: bench --json records stay valid JSON
 * whatever the path holds (quotes, backslashes, control bytes). */
static void print_json_name(const char *s) {
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') printf("\\%c", *c);
    else if (*c < 0x20) printf("\\u%04x", *c);
    else putchar(*c);
  }
  putchar('"');
}

/* One config's result: its samples sorted for the median, then a JSON
 * record (after a comma unless first) or a text line ending in label.
 * Shared by the per-file configs and --files-in-turns. */
static void print_result(const char *file, size_t len, bench_config *c, long long rss_growth,
                         bool first, int json, const char *label) {
  qsort(c->t, c->n, sizeof *c->t, cmp_double);
  double median = c->n ? c->t[c->n / 2] : 0; /* per decode, or per decode round */
  double mbps = median > 0 ? (double)c->threads * (double)len / (median / 1e9) / 1e6 : 0;
  if (json) {
    printf("%s\n {\"file\":", first ? "" : ",");
    print_json_name(file);
    printf(",\"bytes\":%zu,\"median_ns\":%.0f,\"mb_per_s\":%.2f,\"peak_bytes\":%zu,"
           "\"rss_growth_bytes\":%lld,\"runs\":%zu,\"threads\":%d,\"chunk_size\":%zu}",
           len, median, mbps, c->peak, rss_growth, c->runs, c->threads, c->chunk);
  } else {
    printf("%-40s %10zu B  %12.0f ns  %9.2f MB/s  peak %zu B%s\n", file, len, median, mbps, c->peak,
           label);
  }
}

/* "  (pieces of N B, T threads)" for the text lines of several configs. */
static const char *config_label(const bench_config *c) {
  static char s[80];
  if (c->chunk)
    snprintf(s, sizeof s, "  (pieces of %zu B, %d thread%s)", c->chunk, c->threads,
             c->threads == 1 ? "" : "s");
  else snprintf(s, sizeof s, "  (whole, %d thread%s)", c->threads, c->threads == 1 ? "" : "s");
  return s;
}

/* A list option given once or more: N, or N,M,... */
static bool parse_list(const char *s, long long lo, long long hi, long long *out, int *n, int max) {
  if (!*s) return false;
  while (*s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < lo || v > hi || *n >= max) return false;
    out[(*n)++] = v;
    if (*end == ',' && end[1]) end++;
    else if (*end) return false;
    s = end;
  }
  return true;
}

static int bench_files_in_turns(char **files, int nfiles, bool html, uint32_t flags, bool reuse,
                                double min_time, int json) {
  turn_file *tf = calloc((size_t)nfiles, sizeof *tf);
  if (!tf) return 1;
  int rc = 0;
  for (int f = 0; f < nfiles && !rc; f++) {
    size_t len;
    char *buf = cli_read_payload(files[f], html, &len);
    if (!buf) {
      rc = 1;
      break;
    }
    tf[f].buf = buf;
    tf[f].len = len;
    tf[f].cfg.threads = 1;
    const char *msg;
    if (!measure_peak(buf, len, flags, 0, &tf[f].cfg.peak, &msg)) {
      fprintf(stderr, "%s: %s: %s\n", prog, files[f], msg);
      rc = 1;
    }
  }
  if (!rc && !bench_in_turns(tf, nfiles, flags, reuse, min_time)) rc = 1;
  if (!rc && json) printf("[");
  for (int f = 0; f < nfiles; f++) {
    bench_config *c = &tf[f].cfg;
    if (!rc) print_result(files[f], tf[f].len, c, -1, f == 0, json, "  (in turns)");
    free(c->t);
    rsc_decoder_free(tf[f].keep);
    free((char *)tf[f].buf);
  }
  if (!rc && json) printf("\n]\n");
  free(tf);
  return rc;
}

/* rsc_encode's writer for timing: counts, keeps nothing. */
static int count_bytes(void *ctx, const char *buf, size_t len) {
  (void)buf;
  *(size_t *)ctx += len;
  return 0;
}

static double median_of(double *t, size_t n) {
  qsort(t, n, sizeof *t, cmp_double);
  return n ? t[n / 2] : 0;
}

/* What bench --encode and --rewrite time against a decode: one run writing
 * to count_bytes into *out_bytes (0 before it); other than RSC_OK after
 * saying why on stderr. */
typedef rsc_status (*bench_op)(void *ctx, size_t *out_bytes);

/* A decode of buf[0..len) with opt and op, in turns until min_time has
 * passed (5 turns at the least, 1 << 16 at the most), each timed alone:
 * their median ns in *md and *mo, the turns in *runs. 1 when op failed or
 * memory ran out, else 0. */
static int bench_pair(const char *buf, size_t len, const rsc_options *opt, double min_time,
                      bench_op op, void *ctx, size_t *out_bytes, double *md, double *mo,
                      size_t *runs) {
  size_t cap = 1 << 16, n = 0;
  double *td = malloc(cap * sizeof *td), *to = malloc(cap * sizeof *to);
  int rc = !td || !to;
  double start = now_ns();
  while (!rc && n < cap && (n < 5 || now_ns() - start < min_time * 1e9)) {
    double t0 = now_ns();
    rsc_decoder *d = rsc_decode(buf, len, opt, NULL);
    double t1 = now_ns();
    rsc_decoder_free(d);
    *out_bytes = 0;
    double t2 = now_ns();
    rsc_status st = op(ctx, out_bytes);
    double t3 = now_ns();
    if (st != RSC_OK) {
      rc = 1;
      break;
    }
    td[n] = t1 - t0;
    to[n] = t3 - t2;
    n++;
  }
  if (!rc) {
    *md = median_of(td, n);
    *mo = median_of(to, n);
    *runs = n;
  }
  free(td);
  free(to);
  return rc;
}

typedef struct encode_run {
  const char *file;
  rsc_decoder *kept;
} encode_run;

static rsc_status run_encode(void *ctx, size_t *out_bytes) {
  encode_run *e = ctx;
  rsc_status st = rsc_encode(e->kept, count_bytes, out_bytes);
  if (st != RSC_OK) fprintf(stderr, "%s: %s: encode: %s\n", prog, e->file, rsc_status_name(st));
  return st;
}

/* bench --encode: a decode (without RSC_OPT_KEEP_ROWS, as a plain decode
 * runs) and an encode of a payload decoded once with it, in turns until
 * min_time has passed, each timed alone. */
static int bench_encode(const char *file, const char *buf, size_t len, uint32_t flags,
                        double min_time, bool json, bool first) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags | RSC_OPT_KEEP_ROWS;
  rsc_error err;
  rsc_decoder *kept = rsc_decode(buf, len, &opt, &err);
  if (!kept || err.code) {
    fprintf(stderr, "%s: %s: %s\n", prog, file, kept ? err.msg : "out of memory");
    rsc_decoder_free(kept);
    return 1;
  }
  opt.flags = flags;
  size_t n = 0, out_bytes = 0;
  double md = 0, me = 0;
  encode_run e = {file, kept};
  int rc = bench_pair(buf, len, &opt, min_time, run_encode, &e, &out_bytes, &md, &me, &n);
  if (!rc) {
    double mbd = md > 0 ? (double)len / md * 1e3 : 0, mbe = me > 0 ? (double)len / me * 1e3 : 0;
    if (json)
      printf("%s\n {\"file\":\"%s\",\"bytes\":%zu,\"encoded_bytes\":%zu,\"decode_median_ns\":%.0f,"
             "\"encode_median_ns\":%.0f,\"decode_mb_per_s\":%.1f,\"encode_mb_per_s\":%.1f,"
             "\"runs\":%zu}",
             first ? "" : ",", file, len, out_bytes, md, me, mbd, mbe, n);
    else
      printf("%s: %zu bytes (encoded %zu): decode %.0f ns (%.1f MB/s), encode %.0f ns (%.1f MB/s),"
             " encode/decode %.2f, %zu runs\n",
             file, len, out_bytes, md, mbd, me, mbe, md > 0 ? me / md : 0, n);
  }
  rsc_decoder_free(kept);
  return rc;
}

typedef struct rewrite_run {
  const char *file, *buf;
  size_t len;
  const rsc_rewrite_options *ro;
  rsc_rewrite_stats st;
  rsc_error err;
} rewrite_run;

static rsc_status run_rewrite(void *ctx, size_t *out_bytes) {
  rewrite_run *r = ctx;
  rsc_status s = rsc_rewrite(r->buf, r->len, r->ro, count_bytes, out_bytes, &r->err, &r->st);
  if (s != RSC_OK) cli_report_error(r->file, &r->err);
  return s;
}

/* bench --rewrite: a decode and a rewrite of the same bytes (the prefix
 * rule given, by default /_next/ -> https://cdn.example/_next/), in turns
 * until min_time has passed, each timed alone; then the rewriter's peak
 * heap fed in pieces of 64 KiB, against the payload's largest row. */
static int bench_rewrite(const char *file, const char *buf, size_t len, uint32_t flags,
                         double min_time, const char *from, const char *to, bool json, bool first) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  rsc_rewrite_rule rule = {{from, strlen(from)}, {to, strlen(to)}};
  rsc_rewrite_options ro;
  rsc_rewrite_options_init(&ro);
  ro.prefix = &rule;
  ro.prefix_count = 1;
  size_t n = 0, out_bytes = 0;
  double md = 0, mr = 0;
  rewrite_run r = {.file = file, .buf = buf, .len = len, .ro = &ro};
  int rc = bench_pair(buf, len, &opt, min_time, run_rewrite, &r, &out_bytes, &md, &mr, &n);
  rsc_rewrite_stats st = r.st;
  /* streaming memory: pieces of 64 KiB through a counting allocator */
  counter cnt = {0, 0};
  ro.alloc.malloc = c_malloc;
  ro.alloc.realloc = c_realloc;
  ro.alloc.free = c_free;
  ro.alloc.ctx = &cnt;
  rsc_rewriter *rw = rc ? NULL : rsc_rewriter_new(&ro, count_bytes, &out_bytes);
  if (rw) {
    for (size_t at = 0; at < len; at += 65536)
      if (rsc_rewriter_feed(rw, buf + at, len - at < 65536 ? len - at : 65536)) break;
    rsc_rewriter_finish(rw);
    st = *rsc_rewriter_stats(rw);
    rsc_rewriter_free(rw);
  }
  if (!rc) {
    double mbd = md > 0 ? (double)len / md * 1e3 : 0, mbr = mr > 0 ? (double)len / mr * 1e3 : 0;
    if (json)
      printf("%s\n {\"file\":\"%s\",\"bytes\":%zu,\"rewritten_bytes\":%llu,"
             "\"strings_changed\":%llu,\"rows_changed\":%llu,\"rows\":%llu,"
             "\"decode_median_ns\":%.0f,\"rewrite_median_ns\":%.0f,\"decode_mb_per_s\":%.1f,"
             "\"rewrite_mb_per_s\":%.1f,\"largest_row\":%llu,\"stream_peak_bytes\":%zu,"
             "\"runs\":%zu}",
             first ? "" : ",", file, len, (unsigned long long)st.bytes_out,
             (unsigned long long)st.strings_changed, (unsigned long long)st.rows_changed,
             (unsigned long long)st.rows, md, mr, mbd, mbr, (unsigned long long)st.largest_row,
             cnt.peak, n);
    else
      printf("%s: %zu bytes, %llu of %llu rows and %llu strings changed: decode %.0f ns "
             "(%.1f MB/s), rewrite %.0f ns (%.1f MB/s), rewrite/decode %.2f; streaming (64 KiB "
             "pieces) peak heap %zu bytes, largest row %llu bytes (%.2fx); %zu runs\n",
             file, len, (unsigned long long)st.rows_changed, (unsigned long long)st.rows,
             (unsigned long long)st.strings_changed, md, mbd, mr, mbr, md > 0 ? mr / md : 0,
             cnt.peak, (unsigned long long)st.largest_row,
             st.largest_row ? (double)cnt.peak / (double)st.largest_row : 0, n);
  }
  return rc;
}

static int cmd_bench(int argc, char **argv) {
  int json = 0;
  bool reuse = false, in_turns = false, html = false, encode = false, rewrite = false;
  const char *rw_from = "/_next/", *rw_to = "https://cdn.example/_next/";
  double min_time = 1.0;
  long long chunks[BENCH_MAX_CONFIGS], threads[BENCH_MAX_CONFIGS];
  int nchunks = 0, nthreads = 0;
  uint32_t flags = 0;
  int nfiles = 0;
  char **files = calloc((size_t)argc + 1, sizeof *files);
  if (!files) return 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool bad = false;
    if (strcmp(a, "--json") == 0) json = 1;
    else if (strcmp(a, "--parse-only") == 0) flags |= RSC__OPT_PARSE_ONLY;
    else if (strcmp(a, "--parse-walk") == 0) flags |= RSC__OPT_PARSE_WALK;
    else if (strcmp(a, "--borrow-input") == 0) flags |= RSC_OPT_BORROW_INPUT;
    else if (strcmp(a, "--drop-bom") == 0) flags |= RSC_OPT_DROP_BOM;
    else if (strcmp(a, "--lenient") == 0) flags |= RSC_OPT_LENIENT_VALUES;
    else if (strcmp(a, "--reuse") == 0) reuse = true;
    else if (strcmp(a, "--encode") == 0) encode = true;
    else if (strcmp(a, "--rewrite") == 0) rewrite = true;
    else if (strcmp(a, "--replace-prefix") == 0 && i + 2 < argc) {
      rw_from = argv[++i];
      rw_to = argv[++i];
    } else if (strcmp(a, "--html") == 0) html = true;
    else if (strcmp(a, "--files-in-turns") == 0) in_turns = true;
    else if (strcmp(a, "--min-time") == 0 && i + 1 < argc) min_time = atof(argv[++i]);
    else if (strcmp(a, "--chunk-size") == 0 && i + 1 < argc)
      bad = !parse_list(argv[++i], 0, (long long)1 << 40, chunks, &nchunks, BENCH_MAX_CONFIGS);
    else if (strcmp(a, "--threads") == 0 && i + 1 < argc)
      bad = !parse_list(argv[++i], 1, 64, threads, &nthreads, BENCH_MAX_CONFIGS);
    else if (strcmp(a, "--help") == 0) {
      free(files);
      return usage(stdout, 0);
    } else if (a[0] == '-' && a[1]) bad = true;
    else files[nfiles++] = argv[i];
    if (bad) {
      free(files);
      return usage(stderr, 2);
    }
  }
  if (!nchunks) chunks[nchunks++] = 0;
  if (!nthreads) threads[nthreads++] = 1;
  static char stdin_name[] = "-";
  if (nfiles == 0) files[nfiles++] = stdin_name;
  if (nchunks * nthreads > BENCH_MAX_CONFIGS) {
    free(files);
    return usage(stderr, 2);
  }
  if (encode || rewrite) {
    if (encode == rewrite || in_turns || nchunks > 1 || nthreads > 1 || chunks[0] ||
        threads[0] != 1 || reuse || (flags & (RSC__OPT_PARSE_ONLY | RSC__OPT_PARSE_WALK))) {
      free(files);
      return usage(stderr, 2);
    }
    int rc = 0;
    if (json) printf("[");
    for (int f = 0; f < nfiles; f++) {
      size_t len;
      char *buf = cli_read_payload(files[f], html, &len);
      if (!buf) {
        rc = 1;
        continue;
      }
      if (encode ? bench_encode(files[f], buf, len, flags, min_time, json, f == 0)
                 : bench_rewrite(files[f], buf, len, flags, min_time, rw_from, rw_to, json, f == 0))
        rc = 1;
      free(buf);
    }
    if (json) printf("\n]\n");
    free(files);
    return rc;
  }
  if (in_turns) {
    int rc = nchunks > 1 || nthreads > 1 || chunks[0] || threads[0] != 1
                 ? usage(stderr, 2)
                 : bench_files_in_turns(files, nfiles, html, flags, reuse, min_time, json);
    free(files);
    return rc;
  }
  int rc = 0, printed = 0;
  if (json) printf("[");
  for (int f = 0; f < nfiles; f++) {
    size_t len;
    char *buf = cli_read_payload(files[f], html, &len);
    if (!buf) {
      rc = 1;
      continue;
    }
    bench_config cfg[BENCH_MAX_CONFIGS];
    int ncfg = 0;
    bool ok = true;
    /* What the first decode adds to the resident set, as the kernel counts
     * it: it includes what the allocator hooks do not see (simdjson's
     * parser buffers, libc's overhead). Only the first file's is clean:
     * later ones reuse memory the earlier ones gave back to libc. */
    long long rss_growth = -1;
    bool rss_ok = f == 0 && reset_rss_peak();
    long long rss0 = rss_ok ? proc_status_bytes("VmRSS:") : -1;
    for (int c = 0; ok && c < nchunks; c++) {
      size_t peak;
      const char *msg;
      /* One decode first, with a counting allocator, for peak memory. */
      if (!measure_peak(buf, len, flags, (size_t)chunks[c], &peak, &msg)) {
        fprintf(stderr, "%s: %s: %s\n", prog, files[f], msg);
        ok = false;
      }
      if (c == 0 && rss0 >= 0) {
        long long hwm = proc_status_bytes("VmHWM:");
        if (hwm >= rss0) rss_growth = hwm - rss0;
      }
      for (int t = 0; ok && t < nthreads; t++)
        cfg[ncfg++] = (bench_config){(size_t)chunks[c], (int)threads[t], 1, NULL, 0, 0, 0, peak};
    }
    if (ok && !bench_file(buf, len, flags, reuse, min_time, cfg, ncfg)) ok = false;
    for (int i = 0; i < ncfg; i++) {
      bench_config *c = &cfg[i];
      if (ok)
        print_result(files[f], len, c, i == 0 ? rss_growth : -1, printed++ == 0, json,
                     ncfg > 1 ? config_label(c) : "");
      free(c->t);
    }
    if (!ok) rc = 1;
    free(buf);
  }
  if (json) printf("\n]\n");
  free(files);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage(stderr, 2);
  const char *cmd = argv[1];
  static char help_flag[] = "--help";
  if (strcmp(cmd, "help") == 0 && argc > 2) { /* help COMMAND = COMMAND --help */
    cmd = argv[2];
    argv[2] = help_flag;
  }
  if (strcmp(cmd, "help") != 0 && cmd[0] != '-') command = cmd;
  if (strcmp(cmd, "dump") == 0) return cmd_dump(argc - 2, argv + 2);
  if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 2, argv + 2);
  if (strcmp(cmd, "encode") == 0) return cmd_encode(argc - 2, argv + 2);
  if (strcmp(cmd, "extract") == 0) return cmd_extract(argc - 2, argv + 2);
  if (strcmp(cmd, "tree") == 0) return cli_tree_main(argc - 2, argv + 2);
  if (strcmp(cmd, "stats") == 0) return cli_stats_main(argc - 2, argv + 2);
  if (strcmp(cmd, "report") == 0) return cli_report_main(argc - 2, argv + 2);
  if (strcmp(cmd, "rewrite") == 0) return cli_rewrite_main(argc - 2, argv + 2);
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("rscflight %s\n", rsc_version());
    return 0;
  }
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0)
    return usage(stdout, 0);
  fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
  command = NULL;
  return usage(stderr, 2);
}
