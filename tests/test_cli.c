/* test_cli.c - the rscflight CLI run as a user runs it: `tree` and `stats`
 * output compared byte for byte with golden files in tests/golden/, help
 * texts, exit statuses, colors, and every fixture through both commands
 * without a crash; `report` writing its page to stdout or a file.
 *
 * Golden files are plain text (the --color=always one holds ANSI escapes).
 * After a deliberate change of the output, rewrite them with
 *     RSC_UPDATE_GOLDEN=1 build/tests/test_cli
 * and review the diff. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

#define GOLDEN_DIR RSC_FIXTURES "/../tests/golden"
#define EXAMPLES_DIR RSC_FIXTURES "/../examples"
#define VECTORS_DIR RSC_FIXTURES "/vectors"
#define REACT_DIR RSC_FIXTURES "/react/19.3.1"

typedef struct run_result {
  char *out; /* stdout, NUL-terminated */
  size_t len;
  int status; /* exit status; 128 + signal when killed */
} run_result;

/* Runs a shell command and captures its stdout. */
static run_result run_sh(const char *cmd) {
  run_result r = {NULL, 0, -1};
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p, "popen: %s", cmd);
  size_t cap = 1 << 16;
  r.out = malloc(cap);
  cr_assert_not_null(r.out);
  size_t n;
  while ((n = fread(r.out + r.len, 1, cap - r.len - 1, p)) > 0) {
    r.len += n;
    if (cap - r.len - 1 == 0) {
      cap *= 2;
      r.out = realloc(r.out, cap);
      cr_assert_not_null(r.out);
    }
  }
  r.out[r.len] = '\0';
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

/* Runs `cd DIR && rscflight ARGS` and captures stdout (stderr is inherited
 * unless args redirect it). */
static run_result run_in(const char *dir, const char *args) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s", dir, RSC_CLI, args);
  return run_sh(cmd);
}

static run_result run(const char *args) { return run_in(EXAMPLES_DIR, args); }

/* The 1-based line where a and b first differ, with both lines. */
static void first_difference(const char *a, size_t alen, const char *b, size_t blen, char *msg,
                             size_t cap) {
  size_t i = 0, line = 1, start = 0;
  while (i < alen && i < blen && a[i] == b[i]) {
    if (a[i] == '\n') {
      line++;
      start = i + 1;
    }
    i++;
  }
  const char *ea = memchr(a + start, '\n', alen - start);
  const char *eb = memchr(b + start, '\n', blen - start);
  int la = (int)((ea ? (size_t)(ea - a) : alen) - start);
  int lb = (int)((eb ? (size_t)(eb - b) : blen) - start);
  snprintf(msg, cap, "line %zu:\n  expected: %.*s\n  actual:   %.*s", line, la > 300 ? 300 : la,
           b + start, lb > 300 ? 300 : lb, a + start);
}

/* Runs args in dir and compares stdout with tests/golden/<name>; rewrites
 * the golden file instead when RSC_UPDATE_GOLDEN is set. */
static void check_golden(const char *name, const char *dir, const char *args) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, name);
  run_result r = run_in(dir, args);
  cr_assert_eq(r.status, 0, "rscflight %s: exit status %d", args, r.status);
  const char *update = getenv("RSC_UPDATE_GOLDEN");
  if (update && *update && strcmp(update, "0") != 0) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fwrite(r.out, 1, r.len, f);
    fclose(f);
    free(r.out);
    return;
  }
  size_t len;
  char *want = ts_read(path, &len);
  cr_assert_not_null(want, "missing golden file %s (RSC_UPDATE_GOLDEN=1 writes it)", path);
  if (len != r.len || memcmp(want, r.out, len) != 0) {
    char msg[1024];
    first_difference(r.out, r.len, want, len, msg, sizeof msg);
    cr_assert_fail("rscflight %s differs from tests/golden/%s at %s", args, name, msg);
  }
  free(want);
  free(r.out);
}

/* ---- tree --------------------------------------------------------------- */

Test(tree, shop) { check_golden("tree-shop.txt", EXAMPLES_DIR, "tree shop.rsc"); }

Test(tree, shop_color_always) {
  check_golden("tree-shop-color.txt", EXAMPLES_DIR, "tree --color=always --depth 6 shop.rsc");
}

Test(tree, shop_depth_and_full) {
  check_golden("tree-shop-depth3-full.txt", EXAMPLES_DIR, "tree --depth 3 --full shop.rsc");
}

/* The stream cut after its shell: what a client sees mid-flight (pending
 * lazies), read from stdin; and the same cut ended (rejected lazies). */
Test(tree, shop_cut_no_finish) {
  check_golden("tree-shop-cut-no-finish.txt", EXAMPLES_DIR,
               "tree --no-finish --depth 5 - < ../tests/golden/shop-cut.rsc");
}

Test(tree, shop_cut_finished) {
  check_golden("tree-shop-cut.txt", EXAMPLES_DIR, "tree --depth 5 ../tests/golden/shop-cut.rsc");
}

Test(tree, shop_cut_allow_partial) {
  check_golden("tree-shop-cut-allow-partial.txt", EXAMPLES_DIR,
               "tree --allow-partial --depth 5 ../tests/golden/shop-cut.rsc");
}

Test(tree, client_component_in_object) {
  check_golden("tree-clientComponentGreeting.txt", VECTORS_DIR,
               "tree clientComponentGreeting.prod.rsc");
}

Test(tree, keyed_fragments_dev) {
  check_golden("tree-keyedServerComponentFragment.txt", VECTORS_DIR,
               "tree keyedServerComponentFragment.dev.rsc");
}

Test(tree, large_row_deferral) {
  check_golden("tree-largeRowDeferral.txt", VECTORS_DIR, "tree largeRowDeferral.prod.rsc");
}

Test(tree, suspense_nested_async) {
  check_golden("tree-suspense-nested-async.txt", REACT_DIR "/prod",
               "tree suspense-nested-async.rsc");
}

Test(tree, errors_in_suspense) {
  check_golden("tree-errors-in-suspense.txt", REACT_DIR "/prod", "tree errors-in-suspense.rsc");
}

Test(tree, value_types_in_props) {
  check_golden("tree-value-types-in-props.txt", REACT_DIR "/prod",
               "tree --full value-types-in-props.rsc");
}

Test(tree, shared_and_cycles) {
  check_golden("tree-shared-and-cycles.txt", REACT_DIR "/prod", "tree shared-and-cycles.rsc");
}

Test(tree, client_components) {
  check_golden("tree-client-components.txt", REACT_DIR "/prod", "tree client-components.rsc");
}

Test(tree, no_color_when_piped) {
  run_result r = run("tree shop.rsc");
  cr_assert_eq(r.status, 0);
  cr_assert_null(strchr(r.out, '\033'), "escape codes in piped output");
  free(r.out);
  r = run("tree --color=never --no-color shop.rsc");
  cr_assert_null(strchr(r.out, '\033'));
  free(r.out);
}

/* On a terminal (script(1) gives one) colors are on, unless NO_COLOR. */
Test(tree, color_on_a_terminal) {
  if (system("command -v script >/dev/null 2>&1") != 0) cr_skip_test("no script(1)");
  char args[4096];
  snprintf(args, sizeof args, "-q -e -c \"'%s' tree --depth 2 shop.rsc\" /dev/null", RSC_CLI);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "cd '%s' && TERM=xterm script %s", EXAMPLES_DIR, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, p);
  buf[n] = '\0';
  pclose(p);
  cr_assert_not_null(strstr(buf, "\033[1;34mhtml"), "no color on a tty: %s", buf);
  snprintf(cmd, sizeof cmd, "cd '%s' && NO_COLOR=1 TERM=xterm script %s", EXAMPLES_DIR, args);
  p = popen(cmd, "r");
  cr_assert_not_null(p);
  n = fread(buf, 1, sizeof buf - 1, p);
  buf[n] = '\0';
  pclose(p);
  cr_assert_null(strchr(buf, '\033'), "NO_COLOR ignored: %s", buf);
}

Test(tree, stdin_equals_file) {
  run_result a = run("tree shop.rsc");
  run_result b = run("tree < shop.rsc");
  cr_assert_eq(a.status, 0);
  cr_assert_eq(b.status, 0);
  cr_assert(a.len == b.len && memcmp(a.out, b.out, a.len) == 0);
  free(a.out);
  free(b.out);
}

/* Feeding in small pieces changes nothing once the stream is finished. */
Test(tree, chunk_size_changes_nothing) {
  run_result a = run("tree shop.rsc");
  run_result b = run("tree --chunk-size 7 shop.rsc");
  cr_assert(a.len == b.len && memcmp(a.out, b.out, a.len) == 0);
  free(a.out);
  free(b.out);
}

/* Rows borrowed from the input (RSC_OPT_BORROW_INPUT) give the same dump,
 * whole and in pieces (text, typed arrays, a byte stream). */
Test(dump, borrow_input_changes_nothing) {
  const char *files[] = {"prod/binary-heavy.rsc", "prod/text-heavy.rsc", "dev/binary-heavy.rsc"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char args[256];
    snprintf(args, sizeof args, "dump --compact %s", files[i]);
    run_result a = run_in(REACT_DIR, args);
    snprintf(args, sizeof args, "dump --compact --borrow-input %s", files[i]);
    run_result b = run_in(REACT_DIR, args);
    snprintf(args, sizeof args, "dump --compact --borrow-input --chunk-size 100 %s", files[i]);
    run_result c = run_in(REACT_DIR, args);
    cr_assert(a.status == 0 && b.status == 0 && c.status == 0, "%s", files[i]);
    cr_expect(a.len > 1000 && a.len == b.len && memcmp(a.out, b.out, a.len) == 0, "%s", files[i]);
    cr_expect(a.len == c.len && memcmp(a.out, c.out, a.len) == 0, "%s", files[i]);
    free(a.out);
    free(b.out);
    free(c.out);
  }
}

/* --drop-bom and --lenient reach the decoder in every command that decodes
 * (RSC_OPT_DROP_BOM, RSC_OPT_LENIENT_VALUES). */
static run_result run_stdin(const char *payload_printf, const char *args) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "printf '%s' | '%s' %s 2>/dev/null", payload_printf, RSC_CLI, args);
  return run_sh(cmd);
}

Test(dump, drop_bom_and_lenient_flags) {
  static const char bom[] = "1:T3,\\357\\273\\2770:\"$1\"\\n";
  run_result kept = run_stdin(bom, "dump --compact -");
  run_result dropped = run_stdin(bom, "dump --compact --drop-bom -");
  cr_expect(kept.status == 0 && strcmp(kept.out, "{\"ok\":\"\xef\xbb\xbf\"}\n") == 0, "%s",
            kept.out);
  cr_expect(dropped.status == 0 && strcmp(dropped.out, "{\"ok\":\"\"}\n") == 0, "%s", dropped.out);
  free(kept.out);
  free(dropped.out);
  static const char self[] = "0:\"$0\"\\n";
  const char *cmds[] = {"dump --compact", "tree", "stats"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    char args[128];
    snprintf(args, sizeof args, "%s -", cmds[i]);
    run_result strict = run_stdin(self, args);
    snprintf(args, sizeof args, "%s --lenient -", cmds[i]);
    run_result lenient = run_stdin(self, args);
    if (i == 2) { /* stats reports the decode's error and goes on */
      cr_expect(strict.status == 0 && strstr(strict.out, "decoded: error at offset 0: a row whose"),
                "%s", strict.out);
      cr_expect(strstr(lenient.out, "decoded: ok"), "%s", lenient.out);
    } else {
      cr_expect_eq(strict.status, 1, "%s: refused", cmds[i]);
    }
    cr_expect_eq(lenient.status, 0, "%s --lenient: React's null", cmds[i]);
    snprintf(args, sizeof args, "%s --drop-bom -", cmds[i]);
    run_result drop = run_stdin(bom, args);
    cr_expect_eq(drop.status, 0, "%s --drop-bom", cmds[i]);
    free(strict.out);
    free(lenient.out);
    free(drop.out);
  }
  run_result lenient = run_stdin(self, "dump --compact --lenient -");
  cr_expect_str_eq(lenient.out, "{\"ok\":null}\n");
  free(lenient.out);
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "f=$(mktemp) && printf '0:\"$0\"\\n' > $f && '%s' bench --min-time 0.01 --drop-bom "
           "--lenient $f "
           ">/dev/null; s=$?; rm -f $f; echo $s",
           RSC_CLI);
  run_result bench = run_sh(cmd);
  cr_expect_str_eq(bench.out, "0\n", "bench --lenient decodes it");
  free(bench.out);
}

/* ---- stats -------------------------------------------------------------- */

Test(stats, shop) { check_golden("stats-shop.txt", EXAMPLES_DIR, "stats shop.rsc"); }

Test(stats, large_row_deferral) {
  check_golden("stats-largeRowDeferral.txt", VECTORS_DIR, "stats largeRowDeferral.prod.rsc");
}

Test(stats, hints) { check_golden("stats-hints.txt", VECTORS_DIR, "stats hints.prod.rsc"); }

Test(stats, binary_rows) {
  check_golden("stats-typed-arrays.txt", REACT_DIR "/prod", "stats typed-arrays.rsc");
}

Test(stats, dev_payload) {
  check_golden("stats-keyedServerComponentFragment.txt", VECTORS_DIR,
               "stats keyedServerComponentFragment.dev.rsc");
}

Test(stats, top_three) {
  check_golden("stats-page-16k-top3.txt", REACT_DIR "/prod", "stats --top 3 page-16k.rsc");
}

/* A cut or refused stream is still counted: the rest is one "cut off" row. */
Test(stats, cut_stream) {
  check_golden("stats-shop-cut.txt", EXAMPLES_DIR, "stats ../tests/golden/shop-cut.rsc");
}

Test(stats, refused_stream) {
  check_golden("stats-duplicateRow.txt", VECTORS_DIR, "stats duplicateRow.prod.rsc");
}

/* Every row's bytes are counted once: the per-type table adds up to the file. */
Test(stats, row_types_add_up) {
  run_result r = run("stats shop.rsc");
  cr_assert_eq(r.status, 0);
  const char *t = strstr(r.out, "Bytes per row type\n");
  cr_assert_not_null(t);
  t = strchr(strchr(t, '\n') + 1, '\n') + 1; /* skip the column names */
  unsigned long long sum = 0;
  while (*t == ' ' && t[2] != '\0' && t[2] != '\n') {
    char label[64];
    unsigned long long rows, bytes;
    cr_assert_eq(sscanf(t + 2, "%29c %llu %llu", label, &rows, &bytes), 3, "%.80s", t);
    sum += bytes;
    t = strchr(t, '\n') + 1;
  }
  size_t len;
  free(ts_read(EXAMPLES_DIR "/shop.rsc", &len));
  cr_assert_eq(sum, len);
  free(r.out);
}

/* ---- help, version, usage ----------------------------------------------- */

Test(help, top_level) {
  run_result r = run("--help");
  cr_assert_eq(r.status, 0);
  cr_assert_not_null(strstr(r.out, "usage: rscflight <command>"));
  const char *cmds[] = {"  dump ", "  tree ", "  stats ", "  bench ", "--version"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    cr_assert_not_null(strstr(r.out, cmds[i]), "no %s in --help", cmds[i]);
  free(r.out);
  r = run("help");
  cr_assert_eq(r.status, 0);
  cr_assert_not_null(strstr(r.out, "usage: rscflight <command>"));
  free(r.out);
}

/* `CMD --help`, `CMD -h` and `help CMD` print CMD's own help. */
Test(help, per_command) {
  const char *cmds[] = {"dump", "encode", "tree", "stats", "bench"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    char args[64], want[64];
    snprintf(want, sizeof want, "usage: rscflight %s ", cmds[i]);
    snprintf(args, sizeof args, "%s --help", cmds[i]);
    run_result a = run(args);
    snprintf(args, sizeof args, "help %s", cmds[i]);
    run_result b = run(args);
    snprintf(args, sizeof args, "%s %s", cmds[i], strcmp(cmds[i], "bench") ? "-h" : "--help");
    run_result c = run(args);
    cr_assert_eq(a.status, 0, "%s --help", cmds[i]);
    cr_assert_eq(b.status, 0);
    cr_assert_eq(c.status, 0);
    cr_assert(strncmp(a.out, want, strlen(want)) == 0, "%s --help: %.60s", cmds[i], a.out);
    cr_assert(a.len == b.len && memcmp(a.out, b.out, a.len) == 0, "help %s", cmds[i]);
    cr_assert(a.len == c.len && memcmp(a.out, c.out, a.len) == 0, "%s -h", cmds[i]);
    free(a.out);
    free(b.out);
    free(c.out);
  }
  run_result r = run("tree --help");
  cr_assert_not_null(strstr(r.out, "--color"));
  free(r.out);
  r = run("stats --help");
  cr_assert_not_null(strstr(r.out, "--top"));
  free(r.out);
}

Test(help, version) {
  char want[64];
  snprintf(want, sizeof want, "rscflight %s\n", rsc_version());
  run_result r = run("--version");
  cr_assert_eq(r.status, 0);
  cr_assert_str_eq(r.out, want);
  free(r.out);
  snprintf(want, sizeof want, "%d.%d.%d", RSC_VERSION_MAJOR, RSC_VERSION_MINOR, RSC_VERSION_PATCH);
  cr_assert_str_eq(rsc_version(), want);
  cr_assert_str_eq(RSC_VERSION_STRING, want);
}

Test(usage, errors) {
  struct {
    const char *args;
    int status;
  } cases[] = {
      {"", 2},
      {"frobnicate", 2},
      {"help frobnicate", 2},
      {"tree --bogus shop.rsc", 2},
      {"tree shop.rsc shop.rsc", 2},
      {"tree --depth 0 shop.rsc", 2},
      {"tree --depth x shop.rsc", 2},
      {"tree --chunk-size -3 shop.rsc", 2},
      {"stats --top 0 shop.rsc", 2},
      {"stats --top", 2},
      {"stats --bogus shop.rsc", 2},
      {"tree no-such-file.rsc", 1},
      {"stats no-such-file.rsc", 1},
      {"tree ../tests/golden", 1},
      /* the decode flags, one parser for every command that decodes */
      {"tree --bundler nope shop.rsc", 2},
      {"dump --bundler nope shop.rsc", 2},
      {"encode --bundler nope shop.rsc", 2},
      {"stats --bundler nope shop.rsc", 2},
      {"report --bundler nope shop.rsc", 2},
      {"tree --bundler", 2},
      {"tree --bundler turbopack --lenient --drop-bom shop.rsc >/dev/null", 0},
      {"stats --bundler parcel --allow-partial shop.rsc >/dev/null", 0},
      {"encode --lenient-ids --temp-refs shop.rsc >/dev/null", 0},
      {"report --allow-partial shop.rsc -o /dev/null", 0},
      {"encode --stream --borrow-input shop.rsc", 2},
      {"tree --borrow-input --full shop.rsc >/dev/null", 0},
      {"stats --borrow-input shop.rsc >/dev/null", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char args[256];
    snprintf(args, sizeof args, "%s 2>/dev/null", cases[i].args);
    run_result r = run(args);
    cr_expect_eq(r.status, cases[i].status, "rscflight %s: exit %d, want %d", cases[i].args,
                 r.status, cases[i].status);
    free(r.out);
  }
}

/* A refused payload: tree reports the error like dump does and exits 1. */
Test(usage, tree_refused_payload) {
  run_result r = run_in(VECTORS_DIR, "tree duplicateRow.prod.rsc 2>&1");
  cr_assert_eq(r.status, 1);
  cr_assert_not_null(strstr(r.out, "rscflight: duplicateRow.prod.rsc: offset "), "%s", r.out);
  free(r.out);
}

/* ---- encode ------------------------------------------------------------------ */

/* encode writes the payload back: the same bytes, from a file or stdin. */
Test(encode, round_trips_a_file_and_stdin) {
  const char *f = "client-components.rsc";
  size_t len;
  char *want = ts_fixture("react/19.3.1/prod/client-components.rsc", &len);
  cr_assert_not_null(want);
  char args[256];
  snprintf(args, sizeof args, "encode %s", f);
  run_result a = run_in(REACT_DIR "/prod", args);
  cr_assert_eq(a.status, 0);
  cr_assert(a.len == len && memcmp(a.out, want, len) == 0, "encode FILE");
  snprintf(args, sizeof args, "encode - < %s", f);
  run_result b = run_in(REACT_DIR "/prod", args);
  cr_assert_eq(b.status, 0);
  cr_assert(b.len == len && memcmp(b.out, want, len) == 0, "encode - < FILE");
  run_result c = run_in(REACT_DIR "/prod", "encode < client-components.rsc");
  cr_assert(c.len == len && memcmp(c.out, want, len) == 0, "encode < FILE");
  free(a.out);
  free(b.out);
  free(c.out);
  free(want);
}

/* A page: the payload it inlines, encoded. */
Test(encode, reads_pages) {
  size_t len;
  char *want = ts_fixture("html/next-webpack-home.rsc", &len);
  cr_assert_not_null(want);
  run_result r = run_in(RSC_FIXTURES "/html", "encode next-webpack-home.html");
  cr_assert_eq(r.status, 0);
  cr_assert(r.len == len && memcmp(r.out, want, len) == 0);
  free(r.out);
  free(want);
}

/* Bad input: exit 1 and the error with its offset, nothing on stdout. */
Test(encode, refused_input) {
  run_result r = run_in(VECTORS_DIR, "encode duplicateRow.prod.rsc 2>/dev/null");
  cr_assert_eq(r.status, 1);
  cr_assert_eq(r.len, 0);
  free(r.out);
  r = run_in(VECTORS_DIR, "encode duplicateRow.prod.rsc 2>&1 >/dev/null");
  cr_assert_eq(r.status, 1);
  cr_assert_not_null(strstr(r.out, "rscflight: duplicateRow.prod.rsc: offset "), "%s", r.out);
  free(r.out);
  r = run_sh("printf '0:1\\n1:Tzz,a' | '" RSC_CLI "' encode 2>&1 >/dev/null");
  cr_assert_eq(r.status, 1);
  cr_assert_not_null(strstr(r.out, "-: offset 7, row 1: "), "%s", r.out);
  free(r.out);
  r = run("encode --bogus shop.rsc 2>/dev/null");
  cr_assert_eq(r.status, 2);
  free(r.out);
  r = run("encode no-such-file.rsc 2>/dev/null");
  cr_assert_eq(r.status, 1);
  free(r.out);
}

/* encode --stream: the same bytes, whatever the size of the reads. */
Test(encode, stream_round_trips_in_pieces) {
  static const char *const files[] = {"client-components.rsc", "ssr-dashboard.rsc",
                                      "streams-and-iterables.rsc",
                                      "test-should-support-binary-readablestreams.rsc"};
  static const char *const sizes[] = {"1", "7", "4096", NULL};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "react/19.3.1/prod/%s", files[i]);
    size_t len;
    char *want = ts_fixture(rel, &len);
    cr_assert_not_null(want, "%s", rel);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      char args[512];
      if (sizes[k])
        snprintf(args, sizeof args, "encode --stream --chunk-size %s < %s", sizes[k], files[i]);
      else snprintf(args, sizeof args, "encode --stream %s", files[i]);
      run_result r = run_in(REACT_DIR "/prod", args);
      cr_assert_eq(r.status, 0, "%s", args);
      cr_assert(r.len == len && memcmp(r.out, want, len) == 0, "%s", args);
      free(r.out);
    }
    free(want);
  }
  run_result r = run_in(VECTORS_DIR, "encode --stream duplicateRow.prod.rsc 2>&1 >/dev/null");
  cr_assert_eq(r.status, 1);
  cr_assert_not_null(strstr(r.out, "rscflight: duplicateRow.prod.rsc: offset "), "%s", r.out);
  free(r.out);
  r = run("encode --stream --html shop.rsc 2>/dev/null");
  cr_assert_eq(r.status, 2);
  free(r.out);
}

/* encode --stream in a pipe: the first rows come out while the input is
 * still open, before the rest is written. */
Test(encode, stream_writes_rows_before_the_input_ends) {
  size_t len;
  char *in = ts_fixture("react/19.3.1/prod/ssr-dashboard.rsc", &len);
  cr_assert_not_null(in);
  int to[2], from[2];
  cr_assert_eq(pipe(to), 0);
  cr_assert_eq(pipe(from), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[0]), close(to[1]), close(from[0]), close(from[1]);
    execl(RSC_CLI, RSC_CLI, "encode", "--stream", (char *)NULL);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  /* the first line (its first row) and a little of the second */
  const char *nl = memchr(in, '\n', len);
  cr_assert_not_null(nl);
  size_t head = (size_t)(nl - in) + 10;
  cr_assert_eq(write(to[1], in, head), (ssize_t)head);
  char *out = malloc(len + 1);
  size_t got = 0;
  /* the first row arrives while the input is open */
  while (got <= (size_t)(nl - in)) {
    ssize_t n = read(from[0], out + got, len - got);
    cr_assert_gt(n, 0, "encode --stream wrote nothing before the input ended");
    got += (size_t)n;
  }
  cr_assert(memcmp(out, in, (size_t)(nl - in) + 1) == 0);
  /* the rest written as the output is read (the pipes hold less than the
   * payload) */
  size_t put = head;
  while (put < len || got < len + 1) {
    struct pollfd fds[2] = {{from[0], POLLIN, 0}, {put < len ? to[1] : -1, POLLOUT, 0}};
    cr_assert_gt(poll(fds, 2, 30000), 0, "encode --stream stalled");
    if (fds[1].revents & POLLOUT) {
      size_t k = len - put < 4096 ? len - put : 4096;
      ssize_t w = write(to[1], in + put, k);
      cr_assert_gt(w, 0);
      put += (size_t)w;
      if (put == len) close(to[1]);
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      ssize_t n = read(from[0], out + got, len + 1 - got);
      if (n <= 0) break;
      got += (size_t)n;
    }
  }
  close(from[0]);
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  cr_assert(got == len && memcmp(out, in, len) == 0);
  free(out);
  free(in);
}

Test(encode, help) {
  run_result r = run("encode --help");
  cr_assert_eq(r.status, 0);
  cr_assert(strncmp(r.out, "usage: rscflight encode ", 24) == 0, "%s", r.out);
  free(r.out);
  r = run("--help");
  cr_assert_not_null(strstr(r.out, "  encode "));
  free(r.out);
}

/* ---- robustness ----------------------------------------------------------- */

/* Every fixture through tree (finished, and not) and stats: exit 0 or 1,
 * never a crash or a usage error. One shell loop per folder keeps it fast
 * (files over 1 MB are skipped: they are benchmarks, not shapes). Under ASan
 * a report exits 86, so it cannot pass for a refused input. The timeout
 * only catches a hang: a sanitizer build on a busy machine takes minutes. */
static void run_all(const char *dir) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "export ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86\"; "
           "cd '%s' && for f in *.rsc; do [ $(wc -c < \"$f\") -gt 1000000 ] && continue; "
           "for a in 'tree' 'tree --no-finish --chunk-size 5' 'stats'; do "
           "'%s' $a \"$f\" >/dev/null 2>&1; rc=$?; "
           "[ $rc -le 1 ] || echo \"$a $f: exit $rc\"; done; done",
           dir, RSC_CLI);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, p);
  buf[n] = '\0';
  pclose(p);
  cr_assert_eq(n, 0, "in %s:\n%s", dir, buf);
}

Test(robust, vectors, .timeout = 600) { run_all(VECTORS_DIR); }
Test(robust, react_prod, .timeout = 600) { run_all(REACT_DIR "/prod"); }
Test(robust, react_dev, .timeout = 600) { run_all(REACT_DIR "/dev"); }

/* Hostile shapes: an element whose children are its own props, an array
 * that holds itself, 5000 nested arrays, 3000 nested elements, a cut row,
 * a cut length row, garbage. */
Test(robust, hostile_shapes) {
  const char *inputs[] = {
      "printf '0:[\"$\",\"div\",null,{\"children\":\"$0:props\"}]\\n'",
      "printf '0:[\"$0\",\"$0\"]\\n'",
      "awk 'BEGIN{printf \"0:\"; for(i=0;i<5000;i++) printf \"[\"; "
      "for(i=0;i<5000;i++) printf \"]\"; print \"\"}'",
      "awk 'BEGIN{printf \"0:\"; for(i=0;i<3000;i++) printf "
      "\"[\\\"$\\\",\\\"b\\\",null,{\\\"children\\\":\"; "
      "printf \"null\"; for(i=0;i<3000;i++) printf \"}]\"; print \"\"}'",
      "printf '0:[\"$\",\"div\",null,{\"children\":\"unterminated'",
      "printf '1:T5,ab'",
      "printf 'zz:garbage\\n'",
  };
  const char *cmds[] = {"tree -", "tree --no-finish -", "stats -"};
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
      char cmd[2048];
      snprintf(cmd, sizeof cmd,
               "{ %s; } 2>/dev/null | ASAN_OPTIONS=exitcode=86 '%s' %s >/dev/null 2>&1; echo $?",
               inputs[i], RSC_CLI, cmds[k]);
      run_result r = run_sh(cmd);
      int rc = atoi(r.out);
      cr_expect(rc == 0 || rc == 1, "%s | rscflight %s: exit %d", inputs[i], cmds[k], rc);
      free(r.out);
    }
  }
}

/* ---- extract and dump --html --------------------------------------------- */

#define HTML_DIR RSC_FIXTURES "/html"

Test(extract, next_page_gives_the_payload_next_reads) {
  run_result r = run_in(HTML_DIR, "extract next-turbopack-unicode.html");
  cr_assert_eq(r.status, 0);
  size_t len;
  char *want = ts_fixture("html/next-turbopack-unicode.rsc", &len);
  cr_assert_not_null(want);
  cr_expect(r.len == len && memcmp(r.out, want, len) == 0, "extracted bytes differ");
  free(want);
  free(r.out);
}

Test(extract, dump_html_equals_dump_of_the_payload) {
  run_result a = run_in(HTML_DIR, "dump --html rhs-rechunked.html");
  run_result b = run_in(HTML_DIR, "dump rhs-rechunked.rsc");
  cr_assert_eq(a.status, 0);
  cr_assert_eq(b.status, 0);
  cr_expect_str_eq(a.out, b.out);
  free(a.out);
  free(b.out);
}

Test(extract, a_page_without_flight_data_is_refused) {
  run_result r = run_in(HTML_DIR, "extract README.md 2>&1");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.out, "no Flight payload found") != NULL, "%s", r.out);
  free(r.out);
  r = run_in(HTML_DIR, "extract --flavor nope x.html 2>/dev/null");
  cr_expect_eq(r.status, 2);
  free(r.out);
}

/* ---- bench ------------------------------------------------------------------- */

/* Counts the occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Lists of piece sizes and thread counts: one JSON record per pair, each
 * naming its pair, with a time and as many decodes as it reports. */
Test(bench, lists_give_one_record_per_pair, .timeout = 60) {
  run_result r = run("bench --json --reuse --min-time 0.01 --chunk-size 0,64 --threads 1 "
                     "--threads 2 shop.rsc");
  cr_assert_eq(r.status, 0, "%s", r.out);
  cr_assert_eq(count_of(r.out, "\"file\":\"shop.rsc\""), 4, "%s", r.out);
  const char *pairs[] = {"\"threads\":1,\"chunk_size\":0}", "\"threads\":2,\"chunk_size\":0}",
                         "\"threads\":1,\"chunk_size\":64}", "\"threads\":2,\"chunk_size\":64}"};
  for (size_t i = 0; i < 4; i++) {
    const char *rec = strstr(r.out, pairs[i]);
    cr_assert_not_null(rec, "no %s in %s", pairs[i], r.out);
    const char *start = rec;
    while (start > r.out && *start != '{') start--;
    double ns = -1;
    size_t runs = 0;
    const char *m = strstr(start, "\"median_ns\":");
    const char *n = strstr(start, "\"runs\":");
    cr_assert(m && m < rec && n && n < rec);
    ns = strtod(m + 12, NULL);
    runs = strtoul(n + 7, NULL, 10);
    cr_assert(ns > 0, "median_ns %g in %s", ns, pairs[i]);
    cr_assert(runs >= 5, "runs %zu in %s", runs, pairs[i]);
  }
  /* The resident-set growth comes with the first record only (Linux, when
   * the peak can be reset); -1 elsewhere. */
  const char *g = strstr(r.out, "\"rss_growth_bytes\":");
  cr_assert_not_null(g, "%s", r.out);
  long long first = strtoll(g + 19, NULL, 10);
  if (access("/proc/self/clear_refs", W_OK) == 0)
    cr_expect_gt(first, 0, "a decode adds to the resident set: %lld", first);
  cr_expect_eq(count_of(r.out, "\"rss_growth_bytes\":-1,"), first < 0 ? 4 : 3, "%s", r.out);
  free(r.out);
  /* The text form labels each line once there are several. */
  r = run("bench --min-time 0.01 --chunk-size 0,4096 shop.rsc");
  cr_assert_eq(r.status, 0);
  cr_assert_eq(count_of(r.out, "(whole, 1 thread)"), 1, "%s", r.out);
  cr_assert_eq(count_of(r.out, "(pieces of 4096 B, 1 thread)"), 1, "%s", r.out);
  free(r.out);
}

/* --parse-only (the library's internal floor, src/bench_hooks.h) times a
 * fresh and a reused decoder, one record each run. */
Test(bench, parse_only_floor_runs, .timeout = 60) {
  const char *modes[] = {"", "--reuse"};
  for (size_t i = 0; i < 2; i++) {
    char args[128];
    snprintf(args, sizeof args, "bench --json --parse-only %s --min-time 0.01 shop.rsc", modes[i]);
    run_result r = run(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.out);
    cr_expect_eq(count_of(r.out, "\"file\":\"shop.rsc\""), 1, "%s", r.out);
    cr_expect_not_null(strstr(r.out, "\"median_ns\":"), "%s", r.out);
    free(r.out);
  }
}

/* --parse-walk (the floor and one pass over the tape) runs the same way. */
Test(bench, parse_walk_floor_runs, .timeout = 60) {
  run_result r = run("bench --json --parse-walk --reuse --min-time 0.01 shop.rsc");
  cr_assert_eq(r.status, 0, "%s", r.out);
  cr_expect_eq(count_of(r.out, "\"file\":\"shop.rsc\""), 1, "%s", r.out);
  cr_expect_not_null(strstr(r.out, "\"median_ns\":"), "%s", r.out);
  free(r.out);
}

/* --files-in-turns: every file timed in one process, one record each, in
 * the order given, each with its own sizes and at least 5 decodes; it
 * takes the whole buffer on one thread only. */
/* A path holding a quote, a backslash and a tab still gives valid JSON
 * records: the name is escaped, in both kinds of bench record. */
Test(bench, json_records_escape_the_file_name, .timeout = 60) {
  char dir[] = "/tmp/rsc-cli-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cp '%s/shop.rsc' \"%s/a\\\"b\\\\c\tx.rsc\"", EXAMPLES_DIR, dir);
  run_result r = run_sh(cmd);
  cr_assert_eq(r.status, 0, "%s", cmd);
  free(r.out);
  const char *modes[] = {"", "--files-in-turns"};
  for (size_t i = 0; i < 2; i++) {
    char args[256];
    snprintf(args, sizeof args, "bench --json --min-time 0.01 %s \"a\\\"b\\\\c\tx.rsc\"", modes[i]);
    r = run_in(dir, args);
    cr_assert_eq(r.status, 0, "%s", r.out);
    cr_assert_not_null(strstr(r.out, "\"file\":\"a\\\"b\\\\c\\u0009x.rsc\","), "%s: %s", modes[i],
                       r.out);
    free(r.out);
  }
  snprintf(cmd, sizeof cmd, "rm -r '%s'", dir);
  r = run_sh(cmd);
  free(r.out);
}

Test(bench, files_in_turns_give_one_record_per_file, .timeout = 60) {
  run_result r = run("bench --json --reuse --files-in-turns --min-time 0.01 shop.rsc "
                     "../tests/golden/shop-cut.rsc");
  cr_assert_eq(r.status, 0, "%s", r.out);
  const char *a = strstr(r.out, "\"file\":\"shop.rsc\"");
  const char *b = strstr(r.out, "\"file\":\"../tests/golden/shop-cut.rsc\"");
  cr_assert(a && b && a < b, "%s", r.out);
  for (const char *rec = a; rec; rec = rec == a ? b : NULL) {
    const char *m = strstr(rec, "\"median_ns\":"), *n = strstr(rec, "\"runs\":");
    cr_assert(m && n, "%s", r.out);
    cr_assert_gt(strtod(m + 12, NULL), 0, "%s", r.out);
    cr_assert_geq(strtoul(n + 7, NULL, 10), 5, "%s", r.out);
  }
  const char *bytes_a = strstr(a, "\"bytes\":"), *bytes_b = strstr(b, "\"bytes\":");
  cr_assert_neq(strtoul(bytes_a + 8, NULL, 10), strtoul(bytes_b + 8, NULL, 10), "%s", r.out);
  free(r.out);
  const char *bad[] = {"--chunk-size 64", "--threads 2", "--chunk-size 0,64"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char args[256];
    snprintf(args, sizeof args, "bench --files-in-turns --min-time 0.01 %s shop.rsc 2>/dev/null",
             bad[i]);
    r = run(args);
    cr_assert_eq(r.status, 2, "%s: exit %d", bad[i], r.status);
    free(r.out);
  }
}

Test(bench, bad_lists_are_usage_errors) {
  const char *bad[] = {
      "--chunk-size 1,,2", "--chunk-size -1",
      "--chunk-size 4k",   "--threads 0",
      "--threads 65",      "--threads 1,2,",
      "--chunk-size ''",   "--chunk-size 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char args[256];
    snprintf(args, sizeof args, "bench --min-time 0.01 %s shop.rsc 2>/dev/null", bad[i]);
    run_result r = run(args);
    cr_assert_eq(r.status, 2, "%s: exit %d", bad[i], r.status);
    free(r.out);
  }
}

/* ---- a stream that ended early: dump and tree --------------------------------- */

/* Writes n bytes to dir/name; the path in path. */
static void write_file(const char *dir, const char *name, const char *s, size_t n, char *path,
                       size_t cap) {
  snprintf(path, cap, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  cr_assert_eq(fwrite(s, 1, n, f), n);
  fclose(f);
}

/* `rscflight ARGS FILE`: stdout in .out, stderr in *err (free both). */
static run_result run_both(const char *args, const char *file, const char *dir, char **err) {
  char cmd[8192], errpath[4200];
  snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
  snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>'%s'", RSC_CLI, args, file, errpath);
  run_result r = run_sh(cmd);
  size_t n;
  *err = ts_read(errpath, &n);
  cr_assert_not_null(*err);
  return r;
}

/* The line the CLI prints for an early end, built from the library's report. */
static void expected_line(const char *file, const rsc_incomplete *inc, char *buf, size_t cap) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, cap - k, "rscflight: %s: the stream ended early, at offset %llu",
                        file, (unsigned long long)inc->offset);
  if (inc->cut && inc->cut_id >= 0)
    k += (size_t)snprintf(buf + k, cap - k, "; row %llx (from offset %llu) was cut off",
                          (unsigned long long)inc->cut_id, (unsigned long long)inc->cut_offset);
  else if (inc->cut)
    k += (size_t)snprintf(buf + k, cap - k, "; a row (from offset %llu) was cut off inside its id",
                          (unsigned long long)inc->cut_offset);
  const int64_t *lists[2] = {inc->missing, inc->open_streams};
  size_t lens[2] = {inc->missing_len, inc->open_streams_len};
  const char *names[2] = {"; rows that never arrived: ", "; streams left open: "};
  for (int l = 0; l < 2; l++) {
    if (!lens[l]) continue;
    k += (size_t)snprintf(buf + k, cap - k, "%s", names[l]);
    for (size_t i = 0; i < lens[l] && i < 16; i++) {
      if (lists[l][i] < 0) k += (size_t)snprintf(buf + k, cap - k, "%s(not hex)", i ? ", " : "");
      else
        k += (size_t)snprintf(buf + k, cap - k, "%s%llx", i ? ", " : "",
                              (unsigned long long)lists[l][i]);
    }
    if (lens[l] > 16) k += (size_t)snprintf(buf + k, cap - k, " and %zu more", lens[l] - 16);
  }
  snprintf(buf + k, cap - k, "\n");
}

Test(early_end, dump_and_tree_say_where_the_stream_ended) {
  char dir[] = "/tmp/rsc-cli-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  static const char cut[] = "0:{\"a\":\"$1\",\"b\":\"$2\"}\n2:\"x\"\n1:{\"b\":";
  char path[4200], want[8400];
  write_file(dir, "cut.rsc", cut, sizeof cut - 1, path, sizeof path);
  snprintf(want, sizeof want,
           "rscflight: %s: the stream ended early, at offset 35; row 1 (from offset 28) was cut "
           "off; rows that never arrived: 1\n",
           path);
  const char *cmds[] = {"dump", "dump --compact", "tree", "tree --allow-partial"};
  for (size_t i = 0; i < 4; i++) {
    char args[128], *err, *err_strict;
    snprintf(args, sizeof args, "%s", cmds[i]);
    run_result plain = run_both(args, path, dir, &err);
    snprintf(args, sizeof args, "%s --strict", cmds[i]);
    run_result strict = run_both(args, path, dir, &err_strict);
    cr_expect_eq(plain.status, 0, "%s: exit %d", cmds[i], plain.status);
    cr_expect_eq(strict.status, 1, "%s --strict: exit %d", cmds[i], strict.status);
    cr_expect_str_eq(err, want, "%s", cmds[i]);
    cr_expect_str_eq(err_strict, want, "%s --strict", cmds[i]);
    cr_expect_str_eq(plain.out, strict.out, "%s: --strict changed stdout", cmds[i]);
    free(err);
    free(err_strict);
    free(plain.out);
    free(strict.out);
  }
  /* the canonical dump is React's: the root rejected with "Connection closed." */
  char *err;
  run_result r = run_both("dump --compact", path, dir, &err);
  cr_expect_str_eq(r.out, "{\"rejected\":{\"$\":\"Error\",\"message\":\"Connection closed.\"}}\n");
  free(r.out);
  free(err);
  /* --no-finish: the stream did not end, so nothing ended early */
  r = run_both("tree --no-finish --strict", path, dir, &err);
  cr_expect_eq(r.status, 0);
  cr_expect_str_eq(err, "");
  free(r.out);
  free(err);
  /* inside an id, and a stream left open */
  static const char in_id[] = "0:{\"s\":\"$1\",\"t\":\"$3\"}\n1:R\n2";
  write_file(dir, "id.rsc", in_id, sizeof in_id - 1, path, sizeof path);
  snprintf(want, sizeof want,
           "rscflight: %s: the stream ended early, at offset 27; a row (from offset 26) was cut "
           "off inside its id; rows that never arrived: 3; streams left open: 1\n",
           path);
  r = run_both("dump --strict", path, dir, &err);
  cr_expect_eq(r.status, 1);
  cr_expect_str_eq(err, want);
  free(r.out);
  free(err);
}

Test(early_end, complete_streams_and_server_errors_are_quiet) {
  char dir[] = "/tmp/rsc-cli-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  const char *payloads[] = {"0:{\"a\":1}\n", "0:E{\"digest\":\"x\"}\n",
                            "0:{\"a\":\"$@1\"}\n1:E{\"digest\":\"y\"}\n"};
  for (size_t i = 0; i < 3; i++) {
    char path[4200], *err;
    write_file(dir, "p.rsc", payloads[i], strlen(payloads[i]), path, sizeof path);
    const char *cmds[] = {"dump --strict", "tree --strict"};
    for (size_t j = 0; j < 2; j++) {
      run_result r = run_both(cmds[j], path, dir, &err);
      cr_expect_eq(r.status, 0, "%s on %s: exit %d", cmds[j], payloads[i], r.status);
      cr_expect_str_eq(err, "", "%s on %s", cmds[j], payloads[i]);
      free(r.out);
      free(err);
    }
  }
}

/* Every production payload of React's newest server cut in the middle:
 * stdout is the library's dump, stderr its report, --strict exits 1 for
 * an early end. */
Test(early_end, every_react_payload_cut_in_half, .timeout = 120) {
  char dir[] = "/tmp/rsc-cli-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls '%s/prod' | grep '\\.rsc$'", REACT_DIR);
  run_result ls = run_sh(cmd);
  size_t checked = 0, early = 0;
  for (char *name = strtok(ls.out, "\n"); name; name = strtok(NULL, "\n")) {
    char src[4200];
    snprintf(src, sizeof src, "%s/prod/%s", REACT_DIR, name);
    size_t len;
    char *buf = ts_read(src, &len);
    cr_assert_not_null(buf, "%s", src);
    size_t k = len / 2;
    rsc_decoder *d = ts_decode(buf, k, 0, 0);
    if (rsc_decoder_error(d)->code) {
      rsc_decoder_free(d);
      free(buf);
      continue;
    }
    char path[4200], *err;
    write_file(dir, "half.rsc", buf, k, path, sizeof path);
    char *dump = ts_dump(d);
    const rsc_incomplete *inc = rsc_decoder_incomplete(d);
    static char want[1 << 16];
    want[0] = 0;
    if (inc) expected_line(path, inc, want, sizeof want);
    run_result r = run_both("dump --strict --compact", path, dir, &err);
    cr_expect_eq(r.status, inc ? 1 : 0, "%s cut at %zu: exit %d", name, k, r.status);
    cr_expect_str_eq(err, want, "%s cut at %zu", name, k);
    cr_expect_eq(strlen(r.out), strlen(dump) + 1, "%s cut at %zu: stdout", name, k);
    cr_expect(strncmp(r.out, dump, strlen(dump)) == 0, "%s cut at %zu: stdout", name, k);
    early += inc != NULL;
    checked++;
    free(r.out);
    free(err);
    rsc_free(dump);
    rsc_decoder_free(d);
    free(buf);
  }
  free(ls.out);
  cr_expect_gt(checked, 60, "payloads checked: %zu", checked);
  cr_expect_gt(early, 60, "payloads that ended early: %zu", early);
}

/* ---- pages and stdin everywhere ------------------------------------------- */

/* Every command that decodes reads a page (recognised by its leading '<',
 * or with --html) and stdin (- or no FILE), and prints what it prints for
 * the payload the page inlines: pages of both frameworks. stats names its
 * input in its first line, bench its file and times: those are left out of
 * the comparison. The shell prints one line per difference. */
Test(pages, every_command_reads_pages_and_stdin, .timeout = 120) {
  run_result r =
      run_sh("cd '" HTML_DIR "' && cli='" RSC_CLI "'; tmp=$(mktemp -d); "
             "for page in next-webpack-client.html next-turbopack-unicode.html rhs-elements.html "
             "    rhs-typed-arrays.html; do "
             "  \"$cli\" extract \"$page\" > \"$tmp/p.rsc\" || echo \"extract $page\"; "
             "  for c in dump 'dump --compact' tree stats; do "
             "    \"$cli\" $c \"$tmp/p.rsc\" | sed 1s/^.*:// > \"$tmp/want\"; "
             "    [ -s \"$tmp/want\" ] || echo \"$c $page: no output\"; "
             "    for how in \"$page\" \"--html $page\" \"- < $page\" \"< $page\"; do "
             "      eval \"\\\"\\$cli\\\" $c $how\" | sed 1s/^.*:// | cmp -s - \"$tmp/want\" "
             "        || echo \"$c $how differs\"; "
             "    done; "
             "  done; "
             "  \"$cli\" bench --json --min-time 0.001 \"$tmp/p.rsc\" "
             "    | grep -o '\"bytes\":[0-9]*\\|\"peak_bytes\":[0-9]*' > \"$tmp/want\"; "
             "  [ -s \"$tmp/want\" ] || echo \"bench $page: no output\"; "
             "  for how in \"$page\" \"--html $page\" \"< $page\"; do "
             "    eval \"\\\"\\$cli\\\" bench --json --min-time 0.001 $how\" "
             "      | grep -o '\"bytes\":[0-9]*\\|\"peak_bytes\":[0-9]*' | cmp -s - \"$tmp/want\" "
             "      || echo \"bench $how differs\"; "
             "  done; "
             "done; rm -r \"$tmp\"");
  cr_expect_eq(r.status, 0);
  cr_expect_eq(r.len, 0, "%s", r.out);
  free(r.out);
}

/* A page may open with a byte-order mark and whitespace; a payload given
 * --html that is no page is refused as one. */
Test(pages, a_page_is_recognised_by_its_markup) {
  run_result a = run_sh("cd '" HTML_DIR "' && { printf '\\357\\273\\277 \\n\\t'; "
                        "cat rhs-elements.html; } | '" RSC_CLI "' tree");
  run_result b = run_in(HTML_DIR, "tree rhs-elements.rsc");
  cr_expect_eq(a.status, 0);
  cr_expect_str_eq(a.out, b.out);
  free(a.out);
  free(b.out);
  a = run_in(HTML_DIR, "stats --html rhs-elements.rsc 2>&1");
  cr_expect_eq(a.status, 1);
  cr_expect(strstr(a.out, "rhs-elements.rsc: offset 0: no Flight payload found") != NULL, "%s",
            a.out);
  free(a.out);
  a = run_in(HTML_DIR, "bench --min-time 0.01 < rhs-elements.rsc");
  cr_expect_eq(a.status, 0);
  cr_expect(strncmp(a.out, "- ", 2) == 0, "%s", a.out);
  free(a.out);
}

/* dump streams its text: a write error (a full disk) is reported, exit 1. */
Test(dump, a_write_error_is_reported) {
  if (access("/dev/full", W_OK) != 0) return;
  run_result r = run_in(HTML_DIR, "dump rhs-elements.rsc 2>&1 >/dev/full");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.out, "rscflight: stdout: ") != NULL, "%s", r.out);
  free(r.out);
}

Test(report, writes_a_page) {
  run_result help = run("report --help");
  cr_expect(help.status == 0 && strstr(help.out, "-o FILE"), "%s", help.out);
  run_result top = run("help");
  cr_expect(strstr(top.out, "  report [FILE|-]"), "%s", top.out);
  run_result out = run_stdin("0:[\"$\",\"p\",null,{}]\\n", "report -");
  cr_expect(out.status == 0 && strncmp(out.out, "<!doctype html>", 15) == 0, "%d", out.status);
  cr_expect(strstr(out.out, "\"total\":20,"), "the payload's bytes");
  char dir[] = "/tmp/rsc-report-XXXXXX", cmd[512];
  cr_assert(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "report '%s' -o '%s/r.html'", REACT_DIR "/prod/page-1k.rsc", dir);
  run_result to_file = run(cmd);
  cr_expect(to_file.status == 0 && to_file.len == 0);
  snprintf(cmd, sizeof cmd, "%s/r.html", dir);
  FILE *f = fopen(cmd, "rb");
  cr_assert(f);
  char head[16] = {0};
  cr_expect(fread(head, 1, 15, f) == 15 && strcmp(head, "<!doctype html>") == 0);
  fclose(f);
  remove(cmd);
  rmdir(dir);
  run_result bad = run_stdin("0:1\\n", "report --bogus -");
  cr_expect(bad.status == 2);
  run_result nopayload = run_stdin("<html><body>none</body></html>", "report -");
  cr_expect(nopayload.status == 1 && nopayload.len == 0);
  run_result refused = run_stdin("zz:1\\n", "report -");
  cr_expect(refused.status == 0 && strstr(refused.out, "\"error\":{\"code\":2"), "%s", refused.out);
  free(help.out);
  free(top.out);
  free(out.out);
  free(to_file.out);
  free(bad.out);
  free(nopayload.out);
  free(refused.out);
}

/* ---- rewrite --html ------------------------------------------------------ */

/* A page (told by its leading '<', or --html) comes back with its payload
 * rewritten: what extract reads from it is the payload rewritten alone. */
Test(rewrite, html_page_reads_back_as_the_rewritten_payload) {
  static const char *pages[] = {"next-turbopack-long.html", "next-webpack-binary.html",
                                "rhs-rechunked.html"};
  static const char *rules = "--replace-prefix /_next/ https://cdn.example/_next/ "
                             "--replace-prefix rscflight '</script>rscflight' "
                             "--replace-prefix mod/ '<!--mod/'";
  for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' rewrite -q %s %s | '%s' extract - && echo ===; '%s' extract %s | "
             "'%s' rewrite -q %s",
             HTML_DIR, RSC_CLI, rules, pages[i], RSC_CLI, RSC_CLI, pages[i], RSC_CLI, rules);
    run_result r = run_sh(cmd);
    cr_assert_eq(r.status, 0, "%s", pages[i]);
    char *sep = NULL; /* the payloads may hold NUL bytes */
    for (size_t k = 0; !sep && k + 4 <= r.len; k++)
      if (memcmp(r.out + k, "===\n", 4) == 0) sep = r.out + k;
    cr_assert_not_null(sep, "%s: %s", pages[i], r.out);
    size_t a = (size_t)(sep - r.out), b = r.len - a - 4;
    cr_expect(a == b && memcmp(r.out, sep + 4, a) == 0, "%s: the page's payload differs", pages[i]);
    cr_expect(a > 1000, "%s", pages[i]);
    free(r.out);
  }
}

Test(rewrite, html_summary_unchanged_page_and_errors) {
  run_result r = run_in(HTML_DIR, "rewrite --replace-prefix /_next/ //cdn/_next/ --html "
                                  "next-turbopack-home.html 2>&1 >/dev/null");
  cr_expect_eq(r.status, 0);
  cr_expect(strstr(r.out, "rscflight: rewrite: next page: 16 rows, 2 changed, 2 strings "
                          "changed, 0 props dropped, 0 set, 1 of 1 pushes rewritten") == r.out,
            "%s", r.out);
  free(r.out);
  /* nothing matches: the page byte for byte */
  r = run_sh("cd '" HTML_DIR "' && '" RSC_CLI "' rewrite -q --replace-prefix /nowhere/ x "
             "rhs-elements.html | cmp - rhs-elements.html && echo same");
  cr_expect_eq(r.status, 0);
  cr_expect_str_eq(r.out, "same\n");
  free(r.out);
  /* a payload given --html is no page; a page's bad row is reported at its push */
  r = run_in(HTML_DIR, "rewrite --html rhs-elements.rsc 2>&1");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.out, "rhs-elements.rsc: offset 0: no Flight payload found") != NULL, "%s",
            r.out);
  free(r.out);
  r = run_sh("printf '<script>(self.__FLIGHT_DATA||=[]).push(\"0:[1]\\\\n\")</script>"
             "<script>(self.__FLIGHT_DATA||=[]).push(\"1:{x}\\\\n\")</script>' | '" RSC_CLI
             "' rewrite --replace-prefix a b - 2>&1");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.out, "rscflight: -: offset 97, row 1: model row is not valid JSON"), "%s",
            r.out);
  free(r.out);
}

/* rscflight rewrite: the payload to stdout, a summary to stderr, exit 1
 * with the offset on bad input, 2 on usage errors. */
Test(rewrite, payload_summary_and_errors) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "printf '1:[\"/a/x\",{\"href\":\"/a/y\",\"d\":1}]\\n2:T2,/a' | '%s' rewrite "
           "--replace-prefix /a/ /b/ --keys href --drop-prop d - 2>&1",
           RSC_CLI);
  run_result r = run_sh(cmd);
  cr_expect_eq(r.status, 0);
  cr_expect_str_eq(r.out, "1:[\"/a/x\",{\"href\":\"/b/y\"}]\n2:T2,/a"
                          "rscflight: rewrite: 2 rows, 1 changed, 1 strings changed, 1 props "
                          "dropped, 0 set, 40 bytes in, 34 out\n");
  free(r.out);
  snprintf(cmd, sizeof cmd,
           "printf '1:[1]\\n2:[1,]\\n' | '%s' rewrite --replace-prefix a b - 2>&1 >/dev/null",
           RSC_CLI);
  r = run_sh(cmd);
  cr_expect_eq(r.status, 1);
  cr_expect_str_eq(r.out, "rscflight: -: offset 11, row 2: model row is not valid JSON\n");
  free(r.out);
  snprintf(cmd, sizeof cmd, "'%s' rewrite --replace-prefix a 2>/dev/null </dev/null", RSC_CLI);
  r = run_sh(cmd);
  cr_expect_eq(r.status, 2);
  free(r.out);
  /* the same bytes whatever the piece size */
  snprintf(cmd, sizeof cmd,
           "cd '%s/html' && for c in 1 7 4096; do '%s' rewrite -q --chunk-size $c "
           "--replace-prefix /_next/ https://cdn.example/_next/ next-turbopack-catalog.rsc | "
           "cksum; done | uniq | wc -l",
           RSC_FIXTURES, RSC_CLI);
  r = run_sh(cmd);
  cr_expect_str_eq(r.out, "1\n");
  free(r.out);
}
