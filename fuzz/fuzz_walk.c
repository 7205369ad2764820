/* fuzz_walk.c - every node through the public accessors.
 *
 * Options come from the first bytes (fuzz_common.h). The payload is fed in
 * two halves; after the first half and again after finish, the harness
 * walks everything reachable from every chunk in the table with an
 * explicit stack (cycles are normal: identities are visited once) and
 * calls every accessor on every node, the wrong-kind ones too, reading
 * every byte of every string and buffer so ASan sees a bad length. Reads
 * mid-stream are allowed by the API (they initialise chunks as React's
 * first read does). Then the dump is taken. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

typedef struct set {
  uintptr_t *keys;
  size_t cap, count;
} set;

static bool set_add(set *s, uintptr_t k) {
  if ((s->count + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    uintptr_t *keys = (uintptr_t *)calloc(cap, sizeof *keys);
    FUZZ_CHECK(keys);
    for (size_t i = 0; i < s->cap; i++) {
      uintptr_t x = s->keys[i];
      if (!x) continue;
      size_t h = (size_t)(x * 0x9E3779B97F4A7C15ull) & (cap - 1);
      while (keys[h]) h = (h + 1) & (cap - 1);
      keys[h] = x;
    }
    free(s->keys);
    s->keys = keys;
    s->cap = cap;
  }
  size_t h = (size_t)(k * 0x9E3779B97F4A7C15ull) & (s->cap - 1);
  while (s->keys[h]) {
    if (s->keys[h] == k) return false;
    h = (h + 1) & (s->cap - 1);
  }
  s->keys[h] = k;
  s->count++;
  return true;
}

typedef struct walker {
  const rsc_node **stack;
  size_t len, cap;
  set seen;
  size_t budget;
  volatile uint8_t sink;
} walker;

static void push(walker *w, const rsc_node *n) {
  if (!n) return;
  if (w->len == w->cap) {
    w->cap = w->cap ? w->cap * 2 : 256;
    w->stack = (const rsc_node **)realloc(w->stack, w->cap * sizeof *w->stack);
    FUZZ_CHECK(w->stack);
  }
  w->stack[w->len++] = n;
}

static void touch(walker *w, const void *p, size_t n) {
  const uint8_t *b = (const uint8_t *)p;
  for (size_t i = 0; i < n; i++) w->sink ^= b[i];
}

static void visit_chunk(walker *w, const rsc_chunk *c) {
  if (!c || !set_add(&w->seen, (uintptr_t)c)) return;
  (void)rsc_chunk_id(c);
  rsc_chunk_state st = rsc_chunk_status(c);
  FUZZ_CHECK(st >= RSC_CHUNK_PENDING && st <= RSC_CHUNK_HALTED);
  const rsc_node *v = rsc_chunk_value(c), *r = rsc_chunk_reason(c);
  FUZZ_CHECK(!(v && r));
  push(w, v);
  push(w, r);
}

static void visit(walker *w, const rsc_node *n) {
  rsc_kind k = rsc_node_kind(n);
  FUZZ_CHECK(k >= RSC_NONE && k <= RSC_FUNCTION);
  FUZZ_CHECK(rsc_kind_name(k) != NULL);
  uintptr_t id = rsc_node_identity(n);
  if (id && !set_add(&w->seen, id)) return;
  (void)rsc_node_bool(n);
  (void)rsc_node_number(n);
  size_t slen = 99;
  const char *s = rsc_node_string(n, &slen);
  if (s) {
    touch(w, s, slen);
    FUZZ_CHECK(s[slen] == 0); /* NUL-terminated, as the header promises */
  } else {
    FUZZ_CHECK(slen == 0);
  }
  size_t len = rsc_node_len(n);
  if (k == RSC_OBJECT) {
    FUZZ_CHECK(rsc_node_at(n, 0) == NULL);
    for (size_t i = 0; i < len; i++) {
      size_t kl = 99;
      const char *key = rsc_object_key(n, i, &kl);
      FUZZ_CHECK(key != NULL);
      touch(w, key, kl);
      const rsc_node *v = rsc_object_value(n, i);
      FUZZ_CHECK(v != NULL && rsc_node_kind(v) != RSC_UNDEFINED);
      /* Keys are unique after JSON.parse's duplicate rule. */
      FUZZ_CHECK(rsc_object_get(n, key, kl) == v);
      push(w, v);
    }
    FUZZ_CHECK(rsc_object_key(n, len, NULL) == NULL);
    FUZZ_CHECK(rsc_object_value(n, len) == NULL);
  } else {
    for (size_t i = 0; i < len; i++) {
      const rsc_node *c = rsc_node_at(n, i);
      FUZZ_CHECK(c != NULL);
      push(w, c);
    }
    FUZZ_CHECK(rsc_node_at(n, len) == NULL);
    FUZZ_CHECK(rsc_object_key(n, 0, NULL) == NULL);
    FUZZ_CHECK(rsc_object_get(n, "a", 1) == NULL);
  }
  push(w, rsc_element_type(n));
  push(w, rsc_element_key(n));
  push(w, rsc_element_props(n));
  push(w, rsc_element_owner(n));
  if (k == RSC_ELEMENT) FUZZ_CHECK(rsc_element_props(n) != NULL);
  visit_chunk(w, rsc_node_chunk(n));
  if (k == RSC_LAZY || k == RSC_PROMISE) FUZZ_CHECK(rsc_node_chunk(n) != NULL);
  push(w, rsc_client_ref_metadata(n));
  push(w, rsc_client_ref_id(n));
  push(w, rsc_client_ref_chunks(n));
  push(w, rsc_client_ref_name(n));
  (void)rsc_client_ref_is_async(n);
  push(w, rsc_server_ref_id(n));
  push(w, rsc_server_ref_bound(n));
  size_t blen = 99;
  const uint8_t *bytes = rsc_node_bytes(n, &blen);
  if (bytes) touch(w, bytes, blen);
  else FUZZ_CHECK(blen == 0);
  FUZZ_CHECK(rsc_binary_kind_name(rsc_node_binary_kind(n)) != NULL);
  const char *msg = rsc_error_message(n);
  if (k == RSC_ERROR) FUZZ_CHECK(msg != NULL);
  if (msg) touch(w, msg, strlen(msg));
  const char *dg = rsc_error_digest(n);
  if (dg) touch(w, dg, strlen(dg));
  (void)rsc_stream_kind_of(n);
  size_t sl = rsc_stream_len(n);
  for (size_t i = 0; i < sl; i++) {
    const rsc_node *it = rsc_stream_at(n, i);
    FUZZ_CHECK(it != NULL);
    push(w, it);
  }
  FUZZ_CHECK(rsc_stream_at(n, sl) == NULL);
  rsc_stream_end e = rsc_stream_end_of(n);
  FUZZ_CHECK(e >= RSC_STREAM_OPEN && e <= RSC_STREAM_ERRORED);
  push(w, rsc_stream_end_value(n));
}

static void walk_all(rsc_decoder *d) {
  walker w;
  memset(&w, 0, sizeof w);
  w.budget = 2000000;
  size_t count = rsc_decoder_chunk_count(d);
  FUZZ_CHECK(rsc_decoder_root(d) != NULL);
  visit_chunk(&w, rsc_decoder_root(d));
  for (size_t i = 0; i < count; i++) {
    const rsc_chunk *c = rsc_decoder_chunk_at(d, i);
    FUZZ_CHECK(c != NULL);
    int64_t id = rsc_chunk_id(c);
    FUZZ_CHECK(rsc_decoder_chunk(d, id) == c);
    visit_chunk(&w, c);
    while (w.len > 0 && w.budget > 0) {
      w.budget--;
      visit(&w, w.stack[--w.len]);
    }
    /* Reads may add chunks (a reference to a new id): count again. */
    count = rsc_decoder_chunk_count(d);
  }
  FUZZ_CHECK(rsc_decoder_chunk_at(d, count) == NULL);
  free(w.stack);
  free(w.seen.keys);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < FUZZ_HDR) return 0;
  fuzz_alloc fa = {0, 0, 0};
  fuzz_opts fo;
  fuzz_parse_opts(data, &fo, &fa);
  const uint8_t *p = data + FUZZ_HDR;
  size_t n = size - FUZZ_HDR;

  /* NULL and out-of-range arguments are neutral. */
  FUZZ_CHECK(rsc_node_kind(NULL) == RSC_NONE);
  FUZZ_CHECK(rsc_chunk_value(NULL) == NULL && rsc_chunk_id(NULL) == -1);
  FUZZ_CHECK(rsc_decoder_root(NULL) == NULL && rsc_decoder_chunk_count(NULL) == 0);
  FUZZ_CHECK(rsc_kind_name((rsc_kind)999) != NULL);
  FUZZ_CHECK(rsc_binary_kind_name((rsc_binary_kind)999) != NULL);

  rsc_release_memory(); /* a fresh decoder, so that the input replays alone */
  rsc_decoder *d = rsc_decoder_new(&fo.opt);
  if (!d) {
    FUZZ_CHECK(fo.failing);
    return 0;
  }
  size_t half = n / 2;
  fuzz_feed(d, p, half, fo.mode, fo.mode_byte);
  walk_all(d);
  fuzz_feed(d, p + half, n - half, fo.mode, fo.mode_byte);
  rsc_decoder_finish(d);
  walk_all(d);
  char *dump = rsc_dump(d, 0, NULL);
  if (dump) FUZZ_CHECK(rsc_decoder_error(d)->code == RSC_OK);
  rsc_free(dump);
  rsc_decoder_free(d);
  if (fo.failing) FUZZ_CHECK(fa.live == 0);
  return 0;
}
