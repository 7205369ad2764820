/* frame.h - row framing: bytes -> (id, tag, payload) rows. Knows no JSON.
 *
 * Follows React's row parser states (ROW_ID, ROW_TAG, ROW_LENGTH,
 * ROW_CHUNK_BY_NEWLINE, ROW_CHUNK_BY_LENGTH; docs/spec/FLIGHT-PROTOCOL.md 2.3).
 * A row that ends inside one fed buffer is handed out in place; a row split
 * across feeds is gathered once into the framer's buffer, or a text or binary
 * row into the consumer's memory (rsc_dest_fn). New bytes are scanned once: the
 * cost stays linear whatever the piece sizes. */
#ifndef RSC_FRAME_H
#define RSC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of readable memory guaranteed after a row's data when padded is
 * set (simdjson's SIMDJSON_PADDING is 64). */
#define RSC_FRAME_PADDING 64

/* Newline rows whose ends a framer remembers (rsc__frame_remember_row). */
#define RSC_FRAME_PEEKS 256

typedef struct rsc_row {
  int64_t id;    /* the row id (0 when empty)                        */
  uint8_t tag;   /* 0 for a plain model row                          */
  bool partial;  /* a piece of a 'b' row; more pieces follow         */
  bool padded;   /* RSC_FRAME_PADDING readable bytes follow data     */
  bool in_place; /* data points into the buffer being fed (else into
                    the framer's own, reused for the next row)        */
  bool gathered; /* data is the buffer the consumer's dest_fn gave
                    for this row (its own memory: nothing to copy)   */
  size_t ascii;  /* gathered text rows: data[0..ascii) is ASCII, as
                    checked while the pieces were copied (else 0)    */
  const uint8_t *data;
  size_t len;
  uint64_t offset;      /* stream offset of the row's first byte (its id)   */
  uint64_t data_offset; /* stream offset of data[0]                         */
} rsc_row;

/* Called for each complete row (and each piece of a 'b' row). Returns
 * RSC_OK to go on; anything else stops the framer with that code (the
 * callback has already recorded the error). */
typedef rsc_status (*rsc_row_fn)(void *ctx, const rsc_row *row);

/* Where a length row (T or binary; not 'b', whose pieces go out as they
 * arrive) that a feed leaves unfinished is gathered: len bytes of the
 * consumer's memory, where it would have copied the row to (ctx is the row
 * callback's), or NULL for the framer's own buffer. The row is then
 * copied once, piece by piece, instead of into the framer's buffer (grown
 * by doubling, a copy at each step) and again out of it. */
typedef uint8_t *(*rsc_dest_fn)(void *ctx, uint8_t tag, size_t len);

/* The framer's state. Its layout is here (not in frame.c) only for the
 * inline one-byte path below; everything else goes through the functions. */
enum { ROW_ID, ROW_TAG, ROW_LENGTH, ROW_CHUNK_BY_NEWLINE, ROW_CHUNK_BY_LENGTH };

typedef struct rsc_frame {
  rsc_alloc alloc;
  bool lenient;
  uint64_t max_row_bytes;
  int state;
  int64_t row_id;
  int id_digits;
  uint8_t row_tag;
  uint64_t row_length; /* bytes still wanted by a length row            */
  int len_digits;
  uint64_t offset;    /* bytes fed so far                              */
  uint64_t row_start; /* offset of the current row's id                */
  uint8_t *buf;       /* pending bytes of a row split across feeds     */
  /* Not next to row_start: the two were read as one 16-byte load into the
   * row handed out, just after data_start's own 8-byte store, which the
   * store buffer cannot forward (a stall per row). */
  uint64_t data_start; /* offset of the current row's first data byte   */
  size_t buf_len, buf_cap;
  size_t slack;       /* readable bytes after the buffer being fed     */
  uint64_t max_total; /* the stream's size limit (0: none)             */
  /* rsc__frame_take_byte appends while buf_len < fast_end, with no other
   * test: the row's buffer room, its size limit, the stream's, and a
   * length row's bytes but its last, folded into one bound when a feed
   * leaves a row being gathered (0: no fast path, also once the decoder
   * has stopped). Bytes it appends count in offset and row_length only
   * when the framer next runs (rsc__frame_settle): one store per byte, no
   * chain of counters through memory. */
  size_t fast_end;
  size_t fast_mark;  /* buf_len when fast_end was set                  */
  bool fast_newline; /* the row gathered ends at an LF (else a length) */
  /* Last, apart from the fields every byte touches. */
  rsc_dest_fn dest_fn; /* length rows split across feeds go there       */
  bool in_dest;        /* buf is dest_fn's buffer for the current row,
                          sized to it (own_buf is the framer's)         */
  size_t dest_ascii;   /* a text row in dest: buf[0..dest_ascii) is ASCII */
  uint8_t *own_buf;
  size_t own_cap;
  /* The ends of newline rows found ahead in the buffer being fed
   * (rsc__frame_remember_row), in order: the framer takes a row's end from
   * here when the row starts where the next one noted does, instead of
   * scanning for its LF again (cleared as each feed ends).
   * Room for up to RSC_FRAME_PEEKS, grown as the runs need it. */
  struct rsc_peeked {
    const uint8_t *data, *nl;
  } * peeked;
  uint32_t peeked_count, peeked_next;
  uint32_t peeked_cap; /* grown as runs need it, up to RSC_FRAME_PEEKS  */
} rsc_frame;

/* lenient: fold any id byte with React's formula and wrap at 32 bits. */
rsc_frame *rsc__frame_new(const rsc_alloc *alloc, bool lenient, uint64_t max_row_bytes);
void rsc__frame_free(rsc_frame *f);
/* Back to the start of a stream, keeping the gather buffer. */
void rsc__frame_reset(rsc_frame *f);
/* The framer's own gather buffer's size (not a dest_fn buffer's). */
size_t rsc__frame_buffer_cap(const rsc_frame *f);

/* Feeds bytes. On a framing error returns its code and fills *err. */
rsc_status rsc__frame_feed(rsc_frame *f, const uint8_t *buf, size_t len, rsc_row_fn fn, void *ctx,
                           rsc_error *err);

/* A feed of one byte inside a model row being gathered, inline in the
 * caller (a call per byte is the whole cost of byte-sized feeds): appends
 * and returns true, or returns false having done nothing. */
static inline bool rsc__frame_take_byte(rsc_frame *f, uint8_t c) {
  size_t n = f->buf_len;
  if (n >= f->fast_end || (f->fast_newline && c == '\n')) return false;
  f->buf[n] = c;
  f->buf_len = n + 1;
  return true;
}

/* Counts what rsc__frame_take_byte took and closes its fast path until the
 * framer next runs: the decoder calls it when it stops (an error, finish),
 * so that a one-byte feed needs no test of its own for those. */
static inline void rsc__frame_settle(rsc_frame *f) {
  if (!f->fast_end) return;
  size_t n = f->buf_len - f->fast_mark;
  f->offset += n;
  if (!f->fast_newline) f->row_length -= n;
  f->fast_end = 0;
}

/* The fast path of a small feed (at most 16 bytes) in the middle of a row
 * being gathered: appends and returns true, or returns false having done
 * nothing (then call rsc__frame_feed). The stream's size limit
 * (max_total) holds: the append must not cross it. */
bool rsc__frame_append_small(rsc_frame *f, const uint8_t *buf, size_t len);
/* The same for a feed of any size inside a text or binary row that does
 * not end in it, when the row's buffer has room: one copy. */
bool rsc__frame_append_length(rsc_frame *f, const uint8_t *buf, size_t len);
/* A look at the row that starts at p, for the JSON stage's batches
 * (json_shim.cpp): when the whole row lies before end, its tag (0 for a
 * plain model row), data and length, and the byte after it (past the LF
 * of a newline row); NULL for anything else (an id longer than 7 digits,
 * a row that goes on past end, a newline row longer than max_len, which
 * is not scanned further). A guess ahead of the framer: the rows the
 * framer hands out are what count, and the JSON stage checks each row it
 * parses against the guess. */
typedef struct rsc_peek {
  uint8_t tag;
  const uint8_t *data;
  size_t len;
} rsc_peek;
const uint8_t *rsc__frame_peek(const uint8_t *p, const uint8_t *end, size_t max_len, rsc_peek *row);
/* Notes that the newline row whose data starts at data, in the buffer
 * being fed, ends at data[len] (found by rsc__frame_peek): the framer
 * then takes its end from here instead of scanning its bytes again. Rows
 * are noted in order, at most RSC_FRAME_PEEKS a feed (the rest are
 * scanned as usual). False when the allocator fails. */
bool rsc__frame_remember_row(rsc_frame *f, const uint8_t *data, size_t len);

/* Whether the stream ended in the middle of a row (React drops it). */
bool rsc__frame_in_row(const rsc_frame *f);
/* Total bytes fed. */
uint64_t rsc__frame_offset(const rsc_frame *f);
/* The id of the row being read once its id is complete, else -1. */
int64_t rsc__frame_row_id(const rsc_frame *f);

#ifdef __cplusplus
}
#endif
#endif
