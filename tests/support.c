/* support.c - test helpers: fixtures, feeding, JSON equality. */
#include "support.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "json.h"

char *ts_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *len = (size_t)n;
  }
  return buf;
}

char *ts_fixture(const char *rel, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", RSC_FIXTURES, rel);
  return ts_read(path, len);
}

rsc_decoder *ts_decode_inspect(const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                               uint32_t flags, size_t inspect_at, char **early) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  rsc_decoder *d = rsc_decoder_new(&opt);
  if (!d) return NULL;
  if (early) *early = NULL;
  size_t prev = 0;
  for (size_t i = 0; i <= ncuts + 1; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    if (end > len) end = len;
    if (prev < inspect_at && end > inspect_at) end = inspect_at; /* stop there first */
    if (end > prev) rsc_decoder_feed(d, buf + prev, end - prev);
    prev = end;
    if (prev == inspect_at) {
      rsc_chunk_status(rsc_decoder_root(d));
      if (early) *early = rsc_dump(d, 0, NULL);
      inspect_at = SIZE_MAX;
      if (i < ncuts && cuts[i] > prev) i--; /* finish this piece */
    }
    if (i >= ncuts && prev >= len) break;
  }
  rsc_decoder_finish(d);
  return d;
}

rsc_decoder *ts_decode_cuts(const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                            uint32_t flags) {
  return ts_decode_inspect(buf, len, cuts, ncuts, flags, SIZE_MAX, NULL);
}

rsc_decoder *ts_decode(const char *buf, size_t len, size_t piece, uint32_t flags) {
  if (piece == 0 || piece >= len) return ts_decode_cuts(buf, len, NULL, 0, flags);
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  rsc_decoder *d = rsc_decoder_new(&opt);
  if (!d) return NULL;
  for (size_t i = 0; i < len; i += piece)
    rsc_decoder_feed(d, buf + i, len - i < piece ? len - i : piece);
  rsc_decoder_finish(d);
  return d;
}

char *ts_dump(rsc_decoder *d) { return d ? rsc_dump(d, 0, NULL) : NULL; }

rsc_decoder *ts_decode_str(const char *s, uint32_t flags) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.flags = flags;
  rsc_error err;
  return rsc_decode(s, strlen(s), &opt, &err);
}

const rsc_node *ts_root_value(rsc_decoder *d) { return rsc_chunk_value(rsc_decoder_root(d)); }

const char *ts_str(const rsc_node *n) { return rsc_node_string(n, NULL); }

void ts_expect_dump(const char *in, size_t len, uint32_t flags, const char *want) {
  rsc_decoder *d = ts_decode(in, len, 0, flags);
  cr_assert_eq(rsc_decoder_error(d)->code, RSC_OK, "%s: %s", in, rsc_decoder_error(d)->msg);
  char *got = ts_dump(d);
  cr_expect_str_eq(got, want, "input: %s got %s", in, got);
  rsc_free(got);
  rsc_decoder_free(d);
}

static bool node_equal(const rsc_node *a, const rsc_node *b, const char **why) {
  if (a->kind != b->kind) {
    *why = "different types";
    return false;
  }
  switch (a->kind) {
  case RSC_NULL: return true;
  case RSC_BOOL:
    if (a->u.boolean != b->u.boolean) {
      *why = "booleans differ";
      return false;
    }
    return true;
  case RSC_NUMBER:
    if (a->u.num != b->u.num) {
      *why = "numbers differ";
      return false;
    }
    return true;
  case RSC_STRING:
    if (a->len != b->len || memcmp(a->u.str, b->u.str, a->len) != 0) {
      *why = "strings differ";
      return false;
    }
    return true;
  case RSC_ARRAY:
    if (a->len != b->len) {
      *why = "array lengths differ";
      return false;
    }
    for (uint32_t i = 0; i < a->len; i++)
      if (!node_equal(&a->u.items[i], &b->u.items[i], why)) return false;
    return true;
  case RSC_OBJECT:
    if (a->len != b->len) {
      *why = "member counts differ";
      return false;
    }
    for (uint32_t i = 0; i < a->len; i++) {
      const rsc_member *m = &a->u.members[i];
      const rsc_member *o = NULL;
      uint32_t klen = rsc__member_klen(m);
      for (uint32_t j = 0; j < b->len; j++)
        if (rsc__member_klen(&b->u.members[j]) == klen &&
            memcmp(b->u.members[j].key, m->key, klen) == 0) {
          o = &b->u.members[j];
          break;
        }
      if (!o) {
        *why = "a member is missing";
        return false;
      }
      if (!node_equal(&m->val, &o->val, why)) return false;
    }
    return true;
  default: *why = "unexpected node"; return false;
  }
}

bool ts_json_equal(const char *a, size_t alen, const char *b, size_t blen, const char **why) {
  rsc_options opt;
  rsc_options_init(&opt);
  opt.limits.max_depth = 100000;
  rsc_decoder *d = rsc_decoder_new(&opt);
  rsc_node na, nb;
  const char *msg = NULL;
  *why = "parse error";
  bool ok = d &&
            rsc__json_parse((rsc_json *)d->json, (const uint8_t *)a, alen, false, false, &na,
                            &msg) == JSON_OK &&
            rsc__json_parse((rsc_json *)d->json, (const uint8_t *)b, blen, false, false, &nb,
                            &msg) == JSON_OK &&
            node_equal(&na, &nb, why);
  rsc_decoder_free(d);
  return ok;
}

uint64_t ts_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int ts_sink_write(void *ctx, const char *buf, size_t len) {
  ts_sink *s = ctx;
  if (++s->calls >= s->fail_at && s->fail_at) return 1;
  if (!s->p || s->len + len + 1 > s->cap) {
    s->cap = (s->len + len + 1) * 2;
    s->p = realloc(s->p, s->cap);
    if (!s->p) abort();
  }
  if (len) memcpy(s->p + s->len, buf, len);
  s->len += len;
  s->p[s->len] = 0;
  return 0;
}

/* Whether this call (counted here) is one to fail. */
static bool counting_fails(ts_counting *c) {
  c->calls++;
  bool fail = c->fail_at && (c->sticky ? c->calls >= c->fail_at : c->calls == c->fail_at);
  if (fail) c->failed = true;
  return fail;
}

void *ts_counting_malloc(void *ctx, size_t n) {
  ts_counting *c = ctx;
  if (counting_fails(c)) return NULL;
  void *p = malloc(n);
  if (p) c->live++;
  return p;
}

void *ts_counting_realloc(void *ctx, void *p, size_t old_size, size_t n) {
  ts_counting *c = ctx;
  (void)old_size;
  if (counting_fails(c)) return NULL;
  void *q = realloc(p, n);
  if (q && !p) c->live++;
  return q;
}

void ts_counting_free(void *ctx, void *p) {
  ts_counting *c = ctx;
  if (p) c->live--;
  free(p);
}

rsc_alloc ts_counting_alloc(ts_counting *c) {
  return (rsc_alloc){ts_counting_malloc, ts_counting_realloc, ts_counting_free, c};
}
