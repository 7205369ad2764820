/* error.c - the bottom of the library: the sticky decode error, and the
 * allocation and value-limit failures every stage reports through it, and
 * the error messages more than one stage gives.
 * Every stage may call here; this file calls only the framer (to close its
 * one-byte fast path once the decoder has failed) and the arenas. */
#include "frame.h"
#include "internal.h"

rsc_status rsc__fail(rsc_decoder *d, rsc_status code, uint64_t offset, int64_t row,
                     const char *msg) {
  if (d->err.code == RSC_OK) {
    d->err.code = code;
    d->err.offset = offset;
    d->err.row_id = row;
    d->err.msg = msg;
    if (d->frame) rsc__frame_settle(d->frame); /* no more one-byte appends */
  }
  return d->err.code;
}

void *rsc__alloc_fail(rsc_decoder *d) {
  rsc__fail(d, RSC_ERR_NOMEM, d->row_offset, d->row_id, "out of memory");
  return NULL;
}

uint64_t rsc__node_cap(const rsc_decoder *d) {
  if (d->opt.limits.max_nodes) return d->opt.limits.max_nodes;
  const uint64_t most = (uint64_t)1 << 25, floor = (uint64_t)1 << 20;
  uint64_t end = d->input_end < most ? d->input_end : most; /* no overflow */
  uint64_t cap = floor + 64 * end;
  return cap < most ? cap : most;
}

rsc_node *rsc__alloc_nodes_slow(rsc_decoder *d, size_t n) {
  d->node_budget = rsc__node_cap(d);
  if (d->nodes > d->node_budget) {
    rsc__fail(d, RSC_ERR_LIMIT, d->row_offset, d->row_id, "too many values");
    return NULL;
  }
  if (n > SIZE_MAX / sizeof(rsc_node)) return (rsc_node *)rsc__alloc_fail(d);
  return (rsc_node *)rsc__alloc(d, n * sizeof(rsc_node));
}

const char rsc__generic_error[] =
    "An error occurred in the Server Components render. The specific message is omitted in "
    "production builds to avoid leaking sensitive details. A digest property is included on "
    "this error instance which may provide additional details about the nature of the error.";
const char rsc__dev_default_error[] =
    "An error occurred in the Server Components render but no message was provided";

rsc_node rsc__error_node(rsc_decoder *d, const char *msg, const char *digest) {
  rsc_errval *e = (rsc_errval *)rsc__alloc(d, sizeof *e);
  if (!e) return rsc__mk(RSC_NULL);
  memset(e, 0, sizeof *e);
  e->message = msg ? msg : "";
  e->message_len = strlen(e->message);
  e->digest = digest ? rsc__str(RSC_STRING, digest, strlen(digest)) : rsc__mk(RSC_NONE);
  e->cause = rsc__mk(RSC_NONE);
  rsc_node n = rsc__mk(RSC_ERROR);
  n.u.err = e;
  return n;
}

rsc_node rsc__type_error(rsc_decoder *d, const char *msg) {
  rsc_node e = rsc__error_node(d, msg, NULL);
  if (e.kind == RSC_ERROR) e.u.err->name = "TypeError";
  return e;
}

const char *rsc_status_name(rsc_status code) {
  switch (code) {
  case RSC_OK: return "ok";
  case RSC_ERR_NOMEM: return "out of memory";
  case RSC_ERR_BAD_ID: return "bad row id";
  case RSC_ERR_BAD_LENGTH: return "bad row length";
  case RSC_ERR_DUPLICATE_ROW: return "duplicate row";
  case RSC_ERR_DEV_ROW: return "development row in production mode";
  case RSC_ERR_BAD_ROW: return "bad row";
  case RSC_ERR_LIMIT: return "limit exceeded";
  case RSC_ERR_USER: return "stopped by the consumer";
  case RSC_ERR_STATE: return "bad state";
  case RSC_ERR_HTML: return "no Flight payload in the page";
  case RSC_ERR_BAD_VALUE: return "value no server writes";
  default: return "unknown error";
  }
}
