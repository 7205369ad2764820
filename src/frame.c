/* frame.c - React's row state machine over bytes
 * (docs/spec/FLIGHT-PROTOCOL.md 2.3). */
#include "frame.h"

#include <string.h>

#include "arena.h"
#include "hex.h"
#include "rowtags.h"
#include "utf8.h"

rsc_frame *rsc__frame_new(const rsc_alloc *alloc, bool lenient, uint64_t max_row_bytes) {
  rsc_alloc al = {0};
  if (alloc) al = *alloc;
  rsc_frame *f = (rsc_frame *)rsc__heap_alloc(&al, sizeof *f);
  if (!f) return NULL;
  memset(f, 0, sizeof *f);
  f->alloc = al;
  f->lenient = lenient;
  f->max_row_bytes = max_row_bytes;
  return f;
}

/* Back to the framer's own buffer after a row gathered into dest_fn's. */
static void leave_dest(rsc_frame *f) {
  if (!f->in_dest) return;
  f->buf = f->own_buf;
  f->buf_cap = f->own_cap;
  f->in_dest = false;
}

void rsc__frame_free(rsc_frame *f) {
  if (!f) return;
  leave_dest(f);
  rsc_alloc al = f->alloc;
  rsc__heap_free(&al, f->buf);
  rsc__heap_free(&al, f->peeked);
  rsc__heap_free(&al, f);
}

void rsc__frame_reset(rsc_frame *f) {
  leave_dest(f);
  rsc_frame keep = *f;
  memset(f, 0, sizeof *f);
  f->alloc = keep.alloc;
  f->lenient = keep.lenient;
  f->max_row_bytes = keep.max_row_bytes;
  f->max_total = keep.max_total;
  f->buf = keep.buf;
  f->buf_cap = keep.buf_cap;
  f->dest_fn = keep.dest_fn;
  f->peeked = keep.peeked;
  f->peeked_cap = keep.peeked_cap;
}

size_t rsc__frame_buffer_cap(const rsc_frame *f) { return f->in_dest ? f->own_cap : f->buf_cap; }

/* rsc__frame_take_byte's bound, after anything that moved the framer. */
static void fast_update(rsc_frame *f) {
  uint64_t room = 0;
  bool newline = f->state == ROW_CHUNK_BY_NEWLINE;
  bool length = f->state == ROW_CHUNK_BY_LENGTH && f->row_tag != 'b' && f->row_length > 1;
  if ((newline || length) && f->buf_len + RSC_FRAME_PADDING < f->buf_cap &&
      f->buf_len < f->max_row_bytes && (!f->max_total || f->offset < f->max_total)) {
    room = f->buf_cap - RSC_FRAME_PADDING - f->buf_len;
    if (room > f->max_row_bytes - f->buf_len) room = f->max_row_bytes - f->buf_len;
    if (f->max_total && room > f->max_total - f->offset) room = f->max_total - f->offset;
    if (length && room > f->row_length - 1) room = f->row_length - 1;
  }
  f->fast_end = room ? f->buf_len + (size_t)room : 0;
  f->fast_mark = f->buf_len;
  f->fast_newline = newline;
}

const uint8_t *rsc__frame_peek(const uint8_t *p, const uint8_t *end, size_t max_len,
                               rsc_peek *row) {
  size_t n = (size_t)(end - p);
  uint64_t v;
  size_t k = rsc__hex_prefix(p, n < 7 ? n : 7, &v);
  if (k == 0 || k + 1 >= n || p[k] != ':') return NULL;
  uint8_t c = p[++k];
  if (rsc__is_length_tag(c)) {
    size_t left = n - k - 1;
    size_t d = rsc__hex_prefix(p + k + 1, left < 15 ? left : 15, &v);
    if (d == 0 || d >= left || p[k + 1 + d] != ',') return NULL;
    const uint8_t *data = p + k + 2 + d;
    if (v > (uint64_t)(end - data)) return NULL;
    row->tag = c;
    row->data = data;
    row->len = (size_t)v;
    return data + v;
  }
  if (rsc__is_newline_tag(c)) k++;
  else c = 0;
  size_t scan = n - k < max_len + 1 ? n - k : max_len + 1;
  const uint8_t *nl = (const uint8_t *)memchr(p + k, '\n', scan);
  if (!nl) return NULL;
  row->tag = c;
  row->data = p + k;
  row->len = (size_t)(nl - (p + k));
  return nl + 1;
}

bool rsc__frame_remember_row(rsc_frame *f, const uint8_t *data, size_t len) {
  if (f->peeked_count == f->peeked_cap) {
    if (f->peeked_cap == RSC_FRAME_PEEKS) return true; /* the rest are scanned */
    /* Grown as runs need it: a small payload's run of three rows took
     * 4 KB for 256 at once, a fifth of its peak (page-25k). */
    uint32_t cap = f->peeked_cap ? f->peeked_cap * 2 : 16;
    if (cap > RSC_FRAME_PEEKS) cap = RSC_FRAME_PEEKS;
    struct rsc_peeked *p = (struct rsc_peeked *)rsc__heap_realloc(
        &f->alloc, f->peeked, f->peeked_cap * sizeof *p, cap * sizeof *p);
    if (!p) return false;
    f->peeked = p;
    f->peeked_cap = cap;
  }
  f->peeked[f->peeked_count].data = data;
  f->peeked[f->peeked_count++].nl = data + len;
  return true;
}

bool rsc__frame_in_row(const rsc_frame *f) { return f->state != ROW_ID || f->id_digits > 0; }

uint64_t rsc__frame_offset(const rsc_frame *f) {
  return f->offset + (f->fast_end ? f->buf_len - f->fast_mark : 0);
}

int64_t rsc__frame_row_id(const rsc_frame *f) { return f->state == ROW_ID ? -1 : f->row_id; }

static rsc_status set_err(rsc_error *err, rsc_status code, uint64_t off, int64_t row,
                          const char *msg) {
  err->code = code;
  err->offset = off;
  err->row_id = row;
  err->msg = msg;
  return code;
}

/* Appends to the pending row, keeping RSC_FRAME_PADDING spare bytes so the
 * JSON parser can read past the end without a second copy. */
static rsc_status buf_append_slow(rsc_frame *f, const uint8_t *p, size_t n);

/* The common case inline: room left, a few bytes (small feeds). */
static inline rsc_status buf_append(rsc_frame *f, const uint8_t *p, size_t n) {
  if (n <= 16 && f->buf_len + n + RSC_FRAME_PADDING <= f->buf_cap) {
    uint8_t *d = f->buf + f->buf_len;
    for (size_t k = 0; k < n; k++) d[k] = p[k];
    f->buf_len += n;
    return RSC_OK;
  }
  return buf_append_slow(f, p, n);
}

static rsc_status buf_append_slow(rsc_frame *f, const uint8_t *p, size_t n) {
  size_t need = f->buf_len + n + RSC_FRAME_PADDING;
  if (need > f->buf_cap) {
    /* Doubling, then half again past 1 MiB: a row gathered from many
     * pieces holds the old and the new buffer while it grows, so the
     * smaller step keeps that peak near twice the row, not three times. */
    size_t cap = f->buf_cap ? f->buf_cap : 256;
    while (cap < need) cap = cap < ((size_t)1 << 20) ? cap * 2 : cap + cap / 2;
    uint8_t *nb = (uint8_t *)rsc__heap_realloc(&f->alloc, f->buf, f->buf_cap, cap);
    if (!nb) return RSC_ERR_NOMEM;
    f->buf = nb;
    f->buf_cap = cap;
  }
  memcpy(f->buf + f->buf_len, p, n);
  f->buf_len += n;
  return RSC_OK;
}

/* A length row a feed leaves unfinished goes on in dest_fn's buffer, if
 * what that allocates at once stays near what has arrived: rows up to
 * DEST_AT_ONCE from their first piece, longer ones once an eighth of them
 * is here (a length can claim 256 MiB and send one byte). What the framer
 * gathered so far is copied over; every append path (buf_append, the
 * one-byte and small-feed fast paths) then fills that buffer, sized to the
 * row plus the padding they keep in reserve, so none ever grows it. */
#define DEST_AT_ONCE ((uint64_t)1 << 20)
static void enter_dest(rsc_frame *f, void *ctx, size_t avail) {
  uint64_t total = f->buf_len + f->row_length;
  if (total > DEST_AT_ONCE && (f->buf_len + avail) * (uint64_t)8 < total) return;
  uint8_t *dest = f->dest_fn(ctx, f->row_tag, (size_t)total);
  if (!dest) return;
  if (f->buf_len) memcpy(dest, f->buf, f->buf_len);
  f->own_buf = f->buf;
  f->own_cap = f->buf_cap;
  f->buf = dest;
  f->buf_cap = (size_t)total + RSC_FRAME_PADDING;
  f->in_dest = true;
  f->dest_ascii = 0;
}

/* A piece of a length row into dest_fn's buffer (sized to the row). A
 * text row's pieces of 256 bytes or more are checked as ASCII while they
 * are copied, for as long as all before them were (smaller pieces and the
 * small-feed fast paths copy without a check, and the prefix then stops
 * growing): the decoder's UTF-8 check then has nothing left to scan,
 * instead of a copy and then a scan: one pass over a split text row's
 * bytes, not two (docs/performance.md). */
#define DEST_CHECK_MIN                                                                             \
  256 /* smaller pieces: a plain copy (text-heavy in 64-byte                                       \
         pieces was 0.855x with the check's call each) */
static inline void dest_append(rsc_frame *f, const uint8_t *p, size_t n) {
  uint8_t *d = f->buf + f->buf_len;
  size_t ascii = 0;
  if (f->row_tag == 'T' && n >= DEST_CHECK_MIN && f->dest_ascii == f->buf_len) {
    ascii = rsc__ascii_copy(d, p, n);
    f->dest_ascii += ascii;
  }
  if (ascii < n) memcpy(d + ascii, p + ascii, n - ascii);
  f->buf_len += n;
}

static void reset_row(rsc_frame *f) {
  leave_dest(f);
  f->state = ROW_ID;
  f->row_id = 0;
  f->id_digits = 0;
  f->row_tag = 0;
  f->row_length = 0;
  f->len_digits = 0;
  f->buf_len = 0;
}

bool rsc__frame_append_small(rsc_frame *f, const uint8_t *chunk, size_t len) {
  rsc__frame_settle(f);
  uint64_t max_total = f->max_total;
  /* Small pieces in the middle of a row (a network that delivers a few
   * bytes at a time) only append: no state machine, no calls. Its own
   * function, so the feed of one byte does not pay the prologue of the
   * whole state machine. */
  if (len > 16 || f->buf_len + len + RSC_FRAME_PADDING > f->buf_cap ||
      f->buf_len + len > f->max_row_bytes || (max_total && f->offset + len > max_total))
    return false;
  if (f->state == ROW_CHUNK_BY_NEWLINE) {
    for (size_t k = 0; k < len; k++)
      if (chunk[k] == '\n') return false;
  } else if (f->state == ROW_CHUNK_BY_LENGTH && f->row_tag != 'b') {
    if (len >= f->row_length) return false;
    f->row_length -= len;
  } else {
    return false;
  }
  uint8_t *d = f->buf + f->buf_len;
  for (size_t k = 0; k < len; k++) d[k] = chunk[k];
  f->buf_len += len;
  f->offset += len;
  fast_update(f);
  return true;
}

bool rsc__frame_append_length(rsc_frame *f, const uint8_t *chunk, size_t len) {
  rsc__frame_settle(f);
  /* The middle of a text or binary row whose buffer has room (after its
   * first piece, which set the buffer up): a copy, no state machine. The
   * declared length was checked against the row limit when it was read. */
  if (f->state != ROW_CHUNK_BY_LENGTH || f->row_tag == 'b' || f->buf_len == 0 ||
      len >= f->row_length || f->buf_len + len + RSC_FRAME_PADDING > f->buf_cap ||
      (f->max_total && f->offset + len > f->max_total))
    return false;
  /* (dest_append copies a small piece as this does; the size is tested
   * here first so that small feeds skip the call) */
  if (len >= DEST_CHECK_MIN && f->in_dest) {
    dest_append(f, chunk, len);
  } else {
    memcpy(f->buf + f->buf_len, chunk, len);
    f->buf_len += len;
  }
  f->row_length -= len;
  f->offset += len;
  fast_update(f);
  return true;
}

static rsc_status frame_feed(rsc_frame *f, const uint8_t *chunk, size_t len, rsc_row_fn fn,
                             void *ctx, rsc_error *err);

rsc_status rsc__frame_feed(rsc_frame *f, const uint8_t *chunk, size_t len, rsc_row_fn fn, void *ctx,
                           rsc_error *err) {
  rsc__frame_settle(f); /* before anything reads offset or row_length */
  rsc_status st = frame_feed(f, chunk, len, fn, ctx, err);
  f->peeked_count = f->peeked_next = 0; /* they point into chunk */
  fast_update(f);
  return st;
}

static rsc_status frame_feed(rsc_frame *f, const uint8_t *chunk, size_t len, rsc_row_fn fn,
                             void *ctx, rsc_error *err) {
  size_t i = 0;
  const uint64_t base = f->offset;
  while (i < len) {
    switch (f->state) {
    case ROW_ID: {
      if (f->id_digits == 0 && !f->lenient) {
        /* A whole id and its ':' in this buffer (nearly every row): one
         * tight loop. Anything else, errors included, goes byte by byte. */
        uint64_t v;
        size_t k = i + rsc__hex_prefix(chunk + i, len - i < 7 ? len - i : 7, &v);
        if (k > i && k < len && chunk[k] == ':') {
          f->row_start = base + i;
          f->row_id = (int64_t)v;
          f->id_digits = (int)(k - i);
          f->state = ROW_TAG;
          i = k + 1;
          continue;
        }
      }
      uint8_t c = chunk[i];
      if (f->id_digits == 0) f->row_start = base + i;
      i++;
      if (c == ':') {
        f->state = ROW_TAG;
        continue;
      }
      if (f->lenient) {
        /* React: rowID = (rowID << 4) | digit, as a 32-bit integer. */
        int32_t digit = c > 96 ? (int32_t)c - 87 : (int32_t)c - 48;
        uint32_t v = ((uint32_t)(int32_t)f->row_id << 4) | (uint32_t)digit;
        f->row_id = (int32_t)v;
        f->id_digits++;
        continue;
      }
      int h = rsc__hex_digit(c);
      if (h < 0) {
        f->offset = base + i;
        return set_err(err, RSC_ERR_BAD_ID, base + i - 1, -1,
                       c >= 'A' && c <= 'F' ? "row id has an uppercase hex digit"
                                            : "row id is not lowercase hex");
      }
      f->row_id = f->row_id * 16 + h;
      f->id_digits++;
      if (f->row_id > INT32_MAX) {
        f->offset = base + i;
        return set_err(err, RSC_ERR_BAD_ID, base + i - 1, -1, "row id is 2^31 or more");
      }
      continue;
    }
    case ROW_TAG: {
      uint8_t c = chunk[i];
      if (rsc__is_length_tag(c)) {
        f->row_tag = c;
        f->state = ROW_LENGTH;
        i++;
      } else if (rsc__is_newline_tag(c)) {
        f->row_tag = c;
        f->state = ROW_CHUNK_BY_NEWLINE;
        f->data_start = base + i + 1;
        i++;
      } else {
        /* Not a tag: the byte is the first byte of the JSON text. */
        f->row_tag = 0;
        f->state = ROW_CHUNK_BY_NEWLINE;
        f->data_start = base + i;
      }
      continue;
    }
    case ROW_LENGTH: {
      if (f->len_digits == 0) {
        /* A whole length and its ',' in this buffer, within the limit
         * (nearly every T or binary row): one tight loop. Anything else,
         * errors included, goes byte by byte. */
        uint64_t v;
        size_t k = i + rsc__hex_prefix(chunk + i, len - i < 15 ? len - i : 15, &v);
        if (k > i && k < len && chunk[k] == ',' && v <= f->max_row_bytes) {
          f->row_length = v;
          f->len_digits = (int)(k - i);
          f->state = ROW_CHUNK_BY_LENGTH;
          i = k + 1;
          f->data_start = base + i;
          continue;
        }
      }
      uint8_t c = chunk[i++];
      if (c == ',') {
        f->state = ROW_CHUNK_BY_LENGTH;
        f->data_start = base + i;
        continue;
      }
      int h = rsc__hex_digit(c);
      if (h < 0) {
        f->offset = base + i;
        return set_err(err, RSC_ERR_BAD_LENGTH, base + i - 1, f->row_id,
                       "row length is not lowercase hex");
      }
      /* Leading zeros are fine (React shifts them in); a value past 64
       * bits cannot be a length at all. */
      if (f->row_length > (UINT64_MAX >> 4)) {
        f->offset = base + i;
        return set_err(err, RSC_ERR_BAD_LENGTH, base + i - 1, f->row_id,
                       "row length overflows 64 bits");
      }
      f->row_length = f->row_length * 16 + (uint64_t)h;
      f->len_digits++;
      if (f->row_length > f->max_row_bytes) {
        f->offset = base + i;
        return set_err(err, RSC_ERR_LIMIT, base + i - 1, f->row_id,
                       "row length exceeds the row size limit");
      }
      continue;
    }
    case ROW_CHUNK_BY_NEWLINE: {
      const uint8_t *nl;
      if (f->peeked_next < f->peeked_count && f->peeked[f->peeked_next].data == chunk + i) {
        nl = f->peeked[f->peeked_next++].nl; /* found ahead: rsc__frame_peek */
      } else if (len - i <= 16) {            /* small feeds: no call for a few bytes */
        nl = NULL;
        for (size_t k = i; k < len; k++)
          if (chunk[k] == '\n') {
            nl = chunk + k;
            break;
          }
      } else {
        nl = (const uint8_t *)memchr(chunk + i, '\n', len - i);
      }
      size_t end = nl ? (size_t)(nl - chunk) : len;
      if (f->buf_len + (end - i) > f->max_row_bytes) {
        /* The offset is the first byte past the limit, wherever the
         * feed boundaries fall (buf_len counts from data_start). */
        f->offset = base + len;
        return set_err(err, RSC_ERR_LIMIT, f->data_start + f->max_row_bytes, f->row_id,
                       "row exceeds the row size limit");
      }
      if (!nl) {
        if (buf_append(f, chunk + i, len - i) != RSC_OK) {
          f->offset = base + len;
          return set_err(err, RSC_ERR_NOMEM, base + i, f->row_id, "out of memory");
        }
        i = len;
        continue;
      }
      rsc_row row;
      row.id = f->row_id;
      row.tag = f->row_tag;
      row.partial = false;
      row.offset = f->row_start;
      row.data_offset = f->data_start;
      row.in_place = f->buf_len == 0;
      row.gathered = false;
      row.ascii = 0;
      if (row.in_place) {
        row.data = chunk + i;
        row.len = end - i;
        row.padded = len - end + f->slack >= RSC_FRAME_PADDING;
      } else {
        if (buf_append(f, chunk + i, end - i) != RSC_OK) {
          f->offset = base + len;
          return set_err(err, RSC_ERR_NOMEM, base + i, f->row_id, "out of memory");
        }
        row.data = f->buf;
        row.len = f->buf_len;
        row.padded = true;
        /* The padding is zeroed once, when the row is handed out. */
        memset(f->buf + f->buf_len, 0, RSC_FRAME_PADDING);
      }
      i = end + 1; /* skip the LF */
      f->offset = base + i;
      rsc_status st = fn(ctx, &row);
      reset_row(f);
      if (st != RSC_OK) return st;
      continue;
    }
    case ROW_CHUNK_BY_LENGTH: {
      size_t avail = len - i;
      if (f->row_tag == 'b') {
        /* Byte-stream pieces are delivered as they arrive
         * (docs/spec/FLIGHT-PROTOCOL.md 2.5). */
        size_t take = avail < f->row_length ? avail : (size_t)f->row_length;
        bool last = take == f->row_length;
        rsc_row row;
        row.id = f->row_id;
        row.tag = 'b';
        row.partial = !last;
        row.padded = false;
        row.in_place = true;
        row.gathered = false;
        row.ascii = 0;
        row.data = chunk + i;
        row.len = take;
        row.offset = f->row_start;
        row.data_offset = base + i;
        f->row_length -= take;
        i += take;
        f->offset = base + i;
        if (take > 0 || last) {
          rsc_status st = fn(ctx, &row);
          if (last) reset_row(f);
          if (st != RSC_OK) return st;
        }
        continue;
      }
      if (avail < f->row_length) {
        if (!f->in_dest && f->dest_fn) enter_dest(f, ctx, avail);
        if (f->in_dest) dest_append(f, chunk + i, avail);
        else if (buf_append(f, chunk + i, avail) != RSC_OK) {
          f->offset = base + len;
          return set_err(err, RSC_ERR_NOMEM, base + i, f->row_id, "out of memory");
        }
        f->row_length -= avail;
        i = len;
        continue;
      }
      size_t take = (size_t)f->row_length;
      rsc_row row;
      row.id = f->row_id;
      row.tag = f->row_tag;
      row.partial = false;
      row.offset = f->row_start;
      row.data_offset = f->data_start;
      row.in_place = f->buf_len == 0;
      row.gathered = f->in_dest;
      row.ascii = 0;
      if (row.in_place) {
        row.data = chunk + i;
        row.len = take;
        row.padded = len - (i + take) + f->slack >= RSC_FRAME_PADDING;
      } else {
        if (f->in_dest) {
          dest_append(f, chunk + i, take);
          row.ascii = f->dest_ascii;
        } else if (buf_append(f, chunk + i, take) != RSC_OK) {
          f->offset = base + len;
          return set_err(err, RSC_ERR_NOMEM, base + i, f->row_id, "out of memory");
        }
        row.data = f->buf;
        row.len = f->buf_len;
        /* The padding is zeroed once, when the row is handed out (a dest
         * buffer has none: text and binary rows are not parsed). */
        row.padded = !row.gathered;
        if (row.padded) memset(f->buf + f->buf_len, 0, RSC_FRAME_PADDING);
      }
      i += take;
      f->offset = base + i;
      rsc_status st = fn(ctx, &row);
      reset_row(f);
      if (st != RSC_OK) return st;
      continue;
    }
    }
  }
  f->offset = base + len;
  return RSC_OK;
}
