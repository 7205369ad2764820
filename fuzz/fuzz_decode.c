/* fuzz_decode.c - the whole decoder: options and feed pattern from the
 * first bytes (fuzz_common.h), then finish and rsc_dump.
 *
 * Checks beyond "no crash, no sanitizer report, no leak":
 *   - the error is sticky and its offset lies inside what was fed;
 *   - with the failing allocator, a failure is RSC_ERR_NOMEM (or a NULL
 *     decoder) and every block the decoder took is given back;
 *   - without it, the same payload fed whole gives the same error and the
 *     same dump as the chosen feed pattern (splitting must not matter),
 *     except for 'b' rows, whose pieces React delivers as they come;
 *   - the decoder reset (rsc_decoder_reset) and fed the payload again gives
 *     the same error and dump as the first time, with reference paths
 *     split whole and walked from their roots (no split cache, no memo);
 *   - the payload fed whole through rsc_decoder_feed_padded, junk after it,
 *     gives the same error and dump too;
 *   - with RSC_OPT_TRACK_SHARED, rsc_decoder_shares names every value the
 *     root reaches twice (rsc__unshared_repeats);
 *   - with RSC_OPT_BORROW_INPUT (text and binary rows left in the input,
 *     libFuzzer's buffer of exactly the input's size), the same feed
 *     pattern gives the same error and dump. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "settle.h"

/* A feed mode of this harness: the payload whole through
 * rsc_decoder_feed_padded, from a copy followed by RSC_PADDING bytes of
 * JSON-looking junk (read ahead, never data). */
#define PADDED_WHOLE (-1)

static rsc_decoder *decode_into(rsc_decoder *d, const fuzz_opts *fo, const uint8_t *p, size_t n,
                                int mode, char **dump, rsc_error *err) {
  *dump = NULL;
  if (!d) return NULL;
  if (mode == PADDED_WHOLE) rsc_decoder_feed_padded(d, (const char *)p, n);
  else fuzz_feed(d, p, n, mode, fo->mode_byte);
  rsc_status st = rsc_decoder_finish(d);
  const rsc_error *e = rsc_decoder_error(d);
  FUZZ_CHECK(e->code == st);
  FUZZ_CHECK(rsc_decoder_finish(d) == st); /* twice is harmless */
  if (st != RSC_OK) {
    FUZZ_CHECK(e->msg != NULL);
    FUZZ_CHECK(e->offset <= n);
    FUZZ_CHECK(rsc_decoder_feed(d, "0:1\n", 4) == st); /* sticky */
  } else {
    FUZZ_CHECK(rsc_decoder_feed(d, "0:1\n", 4) == RSC_ERR_STATE || fo->failing);
  }
  *err = *e;
  /* The read-through at finish left nothing the root reaches unparsed
   * (its flags let it skip plain subtrees; this audit enters them all). */
  if (st == RSC_OK && !fo->failing) FUZZ_CHECK(rsc__unread_reachable(d) == 0);
  /* With RSC_OPT_TRACK_SHARED, every value met twice is one
   * rsc_decoder_shares names (or a chunk's value met only as that). */
  if (st == RSC_OK && !fo->failing) FUZZ_CHECK(rsc__unshared_repeats(d) == 0);
  if (st == RSC_OK) {
    size_t len = 0;
    *dump = rsc_dump(d, (fo->mode_byte & 4) ? 2 : 0, &len);
    if (*dump) FUZZ_CHECK(strlen(*dump) == len);
  }
  return d;
}

/* Two decodes of one payload must agree on the error (code, offset, row)
 * and the dump; otherwise both go to stderr and the run aborts. */
static void expect_same(const char *a_name, const rsc_error *a, const char *a_dump,
                        const char *b_name, const rsc_error *b, const char *b_dump) {
  if (a->code == b->code && a->offset == b->offset && a->row_id == b->row_id &&
      (a_dump == NULL) == (b_dump == NULL) && (!a_dump || strcmp(a_dump, b_dump) == 0))
    return;
  fprintf(stderr, "%s: %d @%llu row %lld (%s)\n%s\n%s: %d @%llu row %lld (%s)\n%s\n", a_name,
          a->code, (unsigned long long)a->offset, (long long)a->row_id, a->msg ? a->msg : "",
          a_dump ? a_dump : "(no dump)", b_name, b->code, (unsigned long long)b->offset,
          (long long)b->row_id, b->msg ? b->msg : "", b_dump ? b_dump : "(no dump)");
  abort();
}

static rsc_decoder *decode(const fuzz_opts *fo, const uint8_t *p, size_t n, int mode, char **dump,
                           rsc_error *err) {
  return decode_into(rsc_decoder_new(&fo->opt), fo, p, n, mode, dump, err);
}

/* React delivers a 'b' row's pieces as they arrive
 * (docs/spec/FLIGHT-PROTOCOL.md 2.5): a 'b' row split across feeds for a chunk
 * that is no byte stream is a second row for that chunk (RSC_ERR_DUPLICATE_ROW,
 * as React's TypeError), while fed whole it is one Uint8Array. That difference
 * is React's, so payloads that may hold a 'b' tag skip the split-versus-whole
 * check. */
static bool has_b_tag(const uint8_t *p, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (p[i] == ':' && p[i + 1] == 'b') return true;
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < FUZZ_HDR) return 0;
  /* Each input starts without a kept decoder, so that it replays alone as
   * it ran; the decodes below then take the one the previous freed
   * (rsc_decoder_free keeps one), and must agree with the first. */
  rsc_release_memory();
  fuzz_alloc fa = {0, 0, 0};
  fuzz_opts fo;
  fuzz_parse_opts(data, &fo, &fa);
  const uint8_t *p = data + FUZZ_HDR;
  size_t n = size - FUZZ_HDR;

  char *dump;
  rsc_error err;
  rsc_decoder *d = decode(&fo, p, n, fo.mode, &dump, &err);
  if (fo.failing) {
    /* An allocation that failed must never be swallowed: the decode
     * cannot then report success (it would be a silently wrong tree). */
    bool failed = fa.calls >= fa.fail_at;
    if (d) {
      if (failed) FUZZ_CHECK(err.code != RSC_OK);
      rsc_decoder_free(d);
    }
    rsc_free(dump);
    FUZZ_CHECK(fa.live == 0);
    return 0;
  }
  FUZZ_CHECK(d != NULL);
  if (err.code == RSC_OK && !(fo.mode_byte & 4)) FUZZ_CHECK(dump != NULL);
  /* The same payload fed whole must decode the same way. Lazy-root
   * decoding depends on when the root is read, which is the same here
   * (only at finish). */
  if (fo.mode != 0 && !has_b_tag(p, n)) {
    char *dump2;
    rsc_error err2;
    rsc_decoder *d2 = decode(&fo, p, n, 0, &dump2, &err2);
    FUZZ_CHECK(d2 != NULL);
    expect_same("split", &err, dump, "whole", &err2, dump2);
    rsc_free(dump2);
    rsc_decoder_free(d2);
  }
  /* Fed whole and padded: the same again. */
  if (fo.mode == 0 || !has_b_tag(p, n)) {
    uint8_t *padded = malloc(n + RSC_PADDING);
    FUZZ_CHECK(padded != NULL);
    if (n) memcpy(padded, p, n);
    for (size_t k = 0; k < RSC_PADDING; k++) padded[n + k] = (uint8_t) "\"]}\\0:\n"[k % 7];
    char *dump4;
    rsc_error err4;
    rsc_decoder *d4 = decode(&fo, padded, n, PADDED_WHOLE, &dump4, &err4);
    FUZZ_CHECK(d4 != NULL);
    expect_same("plain", &err, dump, "padded", &err4, dump4);
    rsc_free(dump4);
    rsc_decoder_free(d4);
    free(padded);
  }
  /* Rows borrowed from the input: the same again, and no read past it. */
  {
    fuzz_opts borrow = fo;
    borrow.opt.flags |= RSC_OPT_BORROW_INPUT;
    char *dump5;
    rsc_error err5;
    rsc_decoder *d5 = decode(&borrow, p, n, fo.mode, &dump5, &err5);
    FUZZ_CHECK(d5 != NULL);
    expect_same("copied", &err, dump, "borrowed", &err5, dump5);
    rsc_free(dump5);
    rsc_decoder_free(d5);
  }
  /* Reset and decode again: nothing of the first stream may leak into the
   * second (memory is reused, state is not). This time every reference
   * path is split whole and walked from its root: the split cache and the
   * path memo must not change a thing. */
  d->paths.plain_paths = true;
  FUZZ_CHECK(rsc_decoder_reset(d) == RSC_OK);
  char *dump3;
  rsc_error err3;
  decode_into(d, &fo, p, n, fo.mode, &dump3, &err3);
  expect_same("first", &err, dump, "after reset, plain paths", &err3, dump3);
  rsc_free(dump3);
  rsc_free(dump);
  rsc_decoder_free(d);
  return 0;
}
