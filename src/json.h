/* json.h - one JSON row -> generic nodes (NULL, BOOL, NUMBER, STRING, ARRAY,
 * OBJECT) in the decoder's arena. Strings that start with "$" are marked
 * for the revive walk (revive.c), which gives them their meaning.
 *
 * The fast path is simdjson (json_shim.cpp, the only C++). Rows simdjson
 * refuses but JavaScript's JSON.parse accepts (lone surrogate escapes,
 * integers past 2^64, 1e400) or that hold invalid UTF-8 (repaired to U+FFFD
 * as TextDecoder does) take the fallback parser (json_fallback.c), which
 * also words syntax errors as V8 does, since React shows them as reasons. */
#ifndef RSC_JSON_H
#define RSC_JSON_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum json_result {
  JSON_OK = 0,
  JSON_SYNTAX = 1, /* *msg: a V8-style SyntaxError message (rsc__json_msg_len) */
  JSON_NOMEM = 2,
  JSON_LIMIT = 3 /* nesting deeper than the depth limit, or node limit      */
} json_result;

/* A SyntaxError message is laid out as keys are (internal.h): its length
 * as a 32-bit word before it and a NUL after, since V8 quotes the source
 * in it and the source may hold NULs. */
static inline size_t rsc__json_msg_len(const char *msg) {
  uint32_t n;
  memcpy(&n, msg - 4, 4);
  return n;
}

typedef struct rsc_json rsc_json;

/* What the JSON stage asks of the revive stage while it converts a
 * production model row, as callbacks, so that it stays below that stage
 * (the decoder wires them up: decoder.c). */
typedef struct rsc_json_hooks {
  /* An element tuple with nothing else to revive, as its array closes:
   * slots are its items after the "$" marker; builds the element in *out. */
  bool (*plain_element)(rsc_decoder *d, rsc_node *slots, uint32_t n, rsc_node *out);
  /* A "$<hex id>" string (n bytes at s): true and the value in *out when
   * that chunk's plain value has arrived and may be placed as it is. */
  bool (*arrived_value)(rsc_decoder *d, const char *s, uint32_t n, rsc_node *out);
} rsc_json_hooks;

rsc_json *rsc__json_new(rsc_decoder *d, const rsc_json_hooks *hooks);
void rsc__json_free(rsc_json *j);
/* The longest row the parser's buffers are sized for (simdjson's
 * capacity, or the padded copy's). */
size_t rsc__json_capacity(const rsc_json *j);

/* Parses data[0..len). padded: RSC_FRAME_PADDING readable bytes follow.
 * A row inside the bytes being fed (the decoder's feed_begin..feed_end)
 * may be stage-1 indexed with the model rows after it, in one pass
 * (json_shim.cpp, batches).
 * elements: a production model row, whose element tuples with nothing else
 * to revive are built as elements already (the plain_element hook). */
json_result rsc__json_parse(rsc_json *j, const uint8_t *data, size_t len, bool padded,
                            bool elements, rsc_node *out, const char **msg);

/* Parse only (benchmark floor): returns 0 when simdjson accepts the row. */
int rsc__json_parse_only(rsc_json *j, const uint8_t *data, size_t len, bool padded);
/* Parse, then read every value of the tape once, looking at each string's
 * first byte (the floor with a walk, bench_hooks.h): returns the strings
 * that start with "$", or -1 when simdjson refuses the row. */
long rsc__json_parse_walk(rsc_json *j, const uint8_t *data, size_t len, bool padded);

/* The fallback parser. data is valid UTF-8 (lone surrogates allowed as
 * escapes). Same contract as rsc__json_parse. */
json_result rsc__json_fallback(rsc_decoder *d, const uint8_t *data, size_t len, rsc_node *out,
                               const char **msg);

/* Object members: JavaScript key order (array-index keys first, ascending),
 * and a duplicate key keeps its first position and its last value. */
void rsc__object_normalize(rsc_decoder *d, rsc_node *obj);

/* Whether simdjson's validator accepts the bytes as UTF-8. */
int rsc__utf8_valid(const uint8_t *data, size_t len);

/* Number text as JavaScript's Number.prototype.toString prints it
 * (double-conversion's EcmaScript mode). buf holds >= 32 bytes. */
size_t rsc__format_number(double v, char *buf);

#ifdef __cplusplus
}
#endif
#endif
