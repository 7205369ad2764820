/* rowlog.c - the row log of RSC_OPT_KEEP_ROWS: the order, ids and tags of
 * the rows, which the chunk table does not keep (a stream's rows share
 * one id; hints and debug rows make no chunk), the text of the rows whose
 * content the values do not hold, and the reference forms that made
 * collections. Only the decoder calls here, and only with the flag set;
 * encode.c reads the log. Arena memory: a reset empties it. */
#include "rowlog.h"

#include "rowtags.h"
#include "rscflight.h"

/* Rows whose text is kept: hints (not part of any value), development
 * debug rows (D, N, J, W: read by nothing here), development errors
 * (their stacks and owners are not kept in the error values), and the
 * rows that may end with no value to write, which is known only at the
 * end: model rows (with any tag that makes one: rsc__is_model_tag) (rejected by an error they
 * referenced, blocked on a row that never came), I rows (rspack's, whose export name revives to no
 * reference) and the rows of a stream (an item a ReadableStream dropped
 * when it errored). */
static bool keeps_text(const rsc_decoder *d, uint8_t tag, bool in_stream) {
  if (in_stream) return true;
  switch (tag) {
  case 0:
  case 'I':
  case 'H':
  case 'D':
  case 'N':
  case 'J':
  case 'W': return true;
  case 'E': return d->dev;
  default: return rsc__is_model_tag(tag);
  }
}

static void *grow(rsc_decoder *d, void *old, size_t *cap, size_t len, size_t size) {
  if (len < *cap) return old;
  size_t ncap = *cap ? *cap * 2 : 64;
  void *p = rsc__alloc(d, ncap * size);
  if (!p) return NULL;
  if (len) memcpy(p, old, len * size);
  *cap = ncap;
  return p;
}

bool rsc__rowlog_row(rsc_decoder *d, int64_t id, bool no_id, bool in_stream, uint8_t tag,
                     const uint8_t *p, size_t n, bool partial) {
  struct rsc_rowlog *l = &d->rowlog;
  if (l->piece_open) {
    /* the next piece of the row before: one row of the payload */
    rsc_logged_row *r = &l->rows[l->len - 1];
    l->piece_open = partial;
    r->pieces++;
    if (!r->raw || !n) return true;
    char *t = (char *)rsc__alloc(d, r->raw_len + n + 1);
    if (!t) return false;
    memcpy(t, r->raw, r->raw_len);
    memcpy(t + r->raw_len, p, n);
    t[r->raw_len + n] = 0;
    r->raw = t;
    r->raw_len += n;
    return true;
  }
  l->piece_open = partial;
  rsc_logged_row *rows = (rsc_logged_row *)grow(d, l->rows, &l->cap, l->len, sizeof *rows);
  if (!rows) return false;
  l->rows = rows;
  rsc_logged_row *r = &rows[l->len];
  r->id = id;
  r->tag = tag;
  r->no_id = no_id;
  r->pieces = 1;
  r->raw = NULL;
  r->raw_len = 0;
  if (keeps_text(d, tag, in_stream)) {
    char *t = rsc__strdup(d, (const char *)p, n);
    if (!t) return false;
    r->raw = t;
    r->raw_len = n;
  }
  l->len++;
  return true;
}

void rsc__rowlog_form_id(rsc_decoder *d, char form, int64_t id, const rsc_node *v) {
  uintptr_t identity = rsc__writer_identity(v);
  if (!identity) return;
  struct rsc_rowlog *l = &d->rowlog;
  rsc_logged_form *f = (rsc_logged_form *)grow(d, l->forms, &l->forms_cap, l->forms_len, sizeof *f);
  if (!f) return;
  l->forms = f;
  f[l->forms_len++] = (rsc_logged_form){identity, id, form};
}

void rsc__rowlog_map_form(rsc_decoder *d, uint8_t map, int64_t id, const rsc_node *v) {
  char form;
  switch (map) {
  case MAP_MAP: form = 'Q'; break;
  case MAP_SET: form = 'W'; break;
  case MAP_FORMDATA: form = 'K'; break;
  case MAP_BLOB: form = 'B'; break;
  case MAP_ITERATOR: form = 'i'; break;
  case MAP_SERVER_REF: form = 'h'; break;
  case MAP_ERROR_DEV: form = 'Z'; break;
  default: return;
  }
  rsc__rowlog_form_id(d, form, id, v);
}

void rsc__rowlog_proto(rsc_decoder *d, const rsc_member *m) {
  if (!(d->opt.flags & RSC_OPT_KEEP_ROWS)) return;
  struct rsc_rowlog *l = &d->rowlog;
  rsc_logged_proto *p =
      (rsc_logged_proto *)grow(d, l->protos, &l->protos_cap, l->protos_len, sizeof *p);
  if (!p) return;
  l->protos = p;
  p[l->protos_len++] = (rsc_logged_proto){m, m->val};
}

void rsc__rowlog_tail(rsc_decoder *d, const struct rsc_element *el, const rsc_node *slots,
                      uint32_t n) {
  struct rsc_rowlog *l = &d->rowlog;
  rsc_logged_tail *t = (rsc_logged_tail *)grow(d, l->tails, &l->tails_cap, l->tails_len, sizeof *t);
  if (!t) return;
  l->tails = t;
  t[l->tails_len++] = (rsc_logged_tail){el, slots, n};
}

void rsc__rowlog_element_lazy(rsc_decoder *d, struct rsc_chunk *c) {
  struct rsc_rowlog *l = &d->rowlog;
  struct rsc_chunk **v = (struct rsc_chunk **)grow(d, l->element_lazies, &l->element_lazies_cap,
                                                   l->element_lazies_len, sizeof *v);
  if (!v) return;
  l->element_lazies = v;
  v[l->element_lazies_len++] = c;
}
