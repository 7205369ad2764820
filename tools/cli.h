/* cli.h - what the rscflight subcommands share. tools/ only: every tool is a
 * client of include/rscflight.h. From src/ the CLI includes only header-only
 * tables (rowtags.h, hex.h: stats re-frames rows as the framer does; symbols.h
 * and describe.h: tree, stats and the byte report name types and tell pages
 * from payloads alike) and the benchmark hooks (bench_hooks.h: bench
 * --parse-only), which is why it links the static library.
 *
 * rscflight.c owns main(), file reading and error reporting; tree.c and
 * stats.c each own one subcommand. tree.c also owns cli_describe_type, the
 * CLI's one door to describe.h's rsc__describe_type, so that tree and stats
 * name components the same way. */
#ifndef RSC_CLI_H
#define RSC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rscflight.h"

/* rscflight.c: the whole file, or stdin for "-", followed by RSC_PADDING
 * readable bytes (for rsc_decoder_feed_padded). NULL on failure with errno
 * set; release with free(). */
char *cli_read_file(const char *path, size_t *len);
/* rscflight.c: the Flight payload every decoding command reads from path
 * ("-": stdin): the input itself, or the payload an HTML page inlines when
 * html is set or the input opens with '<' (after whitespace and a UTF-8
 * byte-order mark: rsc__looks_like_page), which no Flight payload does. Followed by RSC_PADDING
 * readable bytes; release with free(). NULL after the failure was reported
 * on stderr. */
char *cli_read_payload(const char *path, bool html, size_t *len);
/* rscflight.c: "rscflight: FILE: offset N, row X: message" on stderr. */
void cli_report_error(const char *file, const rsc_error *e);

/* rscflight.c: after finish, when the stream ended early
 * (rsc_decoder_incomplete), says so on stderr: where it ended, the row it
 * cut, the rows that never arrived and the streams left open. Returns 1
 * when it did (dump and tree exit 1 for it with --strict), else 0. */
int cli_report_incomplete(const char *file, rsc_decoder *d);

/* rscflight.c: "webpack", "turbopack", "parcel" or "rspack" to *out
 * (--bundler); 0 for any other name. */
int cli_parse_bundler(const char *name, rsc_bundler *out);

/* rscflight.c: the flags that say how to decode, one parser for every
 * command that decodes (dump, encode, tree, stats, report): --dev,
 * --allow-partial, --lenient-ids, --temp-refs, --borrow-input, --drop-bom,
 * --lenient and --bundler NAME, into *opt. Returns 1 when argv[*i] is one
 * (*i then stands on its last word), 0 when it is not, -1 when its value
 * is missing or unknown. */
int cli_decode_flag(int argc, char **argv, int *i, rsc_options *opt);
/* The help lines of the flags cli_decode_flag reads. */
#define CLI_DECODE_HELP                                                                            \
  "decode flags:\n"                                                                                \
  "  --dev              decode with React's development client semantics\n"                        \
  "                     (detected by itself when the stream opens with a :N row)\n"                \
  "  --allow-partial    missing chunks halt instead of rejecting (prerenders)\n"                   \
  "  --lenient-ids      fold row ids the way React does (any byte, 32-bit wrap)\n"                 \
  "  --temp-refs        decode $T as temporary references instead of rejecting\n"                  \
  "  --bundler NAME     whose server wrote the payload: webpack (default),\n"                      \
  "                     turbopack, parcel or rspack (the shape of its I rows)\n"                   \
  "  --drop-bom         drop a U+FEFF that begins a row, as React 19.3.1 does\n"                   \
  "  --lenient          decode values no server writes as React does (null for\n"                  \
  "                     a self reference, truncated typed arrays) instead of\n"                    \
  "                     refusing them\n"                                                           \
  "  --borrow-input     text and binary rows point into the input, not copies\n"                   \
  "                     (RSC_OPT_BORROW_INPUT; the output is the same)\n"

/* tree.c, stats.c and report.c: the subcommands (argv excludes the command name) and
 * their help texts. Exit status: 0 ok, 1 input refused or I/O error, 2 usage. */
int cli_tree_main(int argc, char **argv);
int cli_stats_main(int argc, char **argv);
int cli_report_main(int argc, char **argv);
int cli_rewrite_main(int argc, char **argv); /* rewrite.c */
void cli_rewrite_help(FILE *f);
void cli_tree_help(FILE *f);
void cli_stats_help(FILE *f);
void cli_report_help(FILE *f);

/* What an element's type slot stands for. */
typedef enum cli_type_kind {
  CLI_TYPE_HOST,    /* "div": name is the tag                                */
  CLI_TYPE_CLIENT,  /* a client reference: name, plus module "id#export"     */
  CLI_TYPE_BUILTIN, /* a React symbol: Fragment, Suspense, ...               */
  CLI_TYPE_LAZY,    /* a lazy type whose chunk is not fulfilled: chunk, state */
  CLI_TYPE_OTHER    /* anything else: name is "(kind)"                      */
} cli_type_kind;

typedef struct cli_type {
  cli_type_kind kind;
  char name[128];        /* NUL-terminated, cut on a UTF-8 boundary      */
  char module[256];      /* CLIENT: "app/Button.js#Button", else ""      */
  int64_t chunk_id;      /* LAZY: the chunk's id (-1: internal)          */
  rsc_chunk_state state; /* LAZY: its state                              */
} cli_type;

/* tree.c: describes an element type node (rsc_element_type) as
 * rsc__describe_type does (describe.h); fulfilled lazy types are followed.
 * NULL describes as CLI_TYPE_OTHER "(none)". Reading a lazy's status may
 * initialise its chunk (see rsc_chunk_status). */
void cli_describe_type(const rsc_node *type, cli_type *out);
/* tree.c: describes the raw JSON string s[0..n) of an element's type slot
 * as rsc__describe_raw_type does, for the decoder d (may be NULL); names
 * keep at most 100 bytes of the slot's text. */
void cli_describe_raw_type(rsc_decoder *d, const char *s, size_t n, cli_type *out);
/* tree.c: the display name of a React symbol key ("react.suspense" ->
 * "Suspense"); writes into buf (cap bytes) and returns it. */
const char *cli_symbol_name(const char *key, char *buf, size_t cap);

#endif /* RSC_CLI_H */
