/*
 * rscflight.h - decode React Server Components "Flight" payloads.
 *
 * The only header users include. A decoder is fed bytes in pieces split
 * anywhere; it frames rows, parses each JSON row with simdjson, revives the
 * "$" forms into typed values and keeps React's chunk table. The result is a
 * graph of rsc_node values (shared values are the same node; cycles happen).
 *
 * Ownership: every rsc_node, rsc_chunk and string reachable from a decoder
 * lives in that decoder's arena and dies with rsc_decoder_free(). Nothing is
 * freed one by one. Text returned by rsc_dump() is released with rsc_free().
 * With RSC_OPT_BORROW_INPUT, text and binary rows may point into the
 * buffers fed instead, which the caller then keeps alive as long.
 *
 * Thread-safety: the library's one piece of global state is the slot in
 * which rsc_decoder_free may keep a freed decoder for the next
 * rsc_decoder_new, swapped atomically. Decoders are independent: two
 * threads may use two decoders at once. One decoder (and
 * every node it owns) must be used by one thread at a time; reading a chunk
 * may initialise it (React parses lazily), so even reads count as use.
 *
 * Streaming use:
 *
 *     rsc_options opt; rsc_options_init(&opt);
 *     rsc_decoder *d = rsc_decoder_new(&opt);
 *     while ((n = read(fd, buf, sizeof buf)) > 0)
 *         if (rsc_decoder_feed(d, buf, n) != RSC_OK) break;
 *     rsc_decoder_finish(d);
 *     const rsc_error *e = rsc_decoder_error(d);   // code RSC_OK when fine
 *     const rsc_chunk *root = rsc_decoder_root(d);
 *     ...
 *     rsc_decoder_free(d);
 *
 * One-shot use: rsc_decode(buf, len, &opt, &err) is new + feed + finish.
 */
#ifndef RSCFLIGHT_H
#define RSCFLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "rscflight_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && !defined(RSC_STATIC)
#  ifdef RSC_BUILDING
#    define RSC_API __declspec(dllexport)
#  else
#    define RSC_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define RSC_API __attribute__((visibility("default")))
#else
#  define RSC_API
#endif

/* cdef:begin */

/* Error codes. RSC_OK is 0; every other code is an error. */
typedef enum rsc_status {
  RSC_OK = 0,
  RSC_ERR_NOMEM = 1,         /* an allocation failed                          */
  RSC_ERR_BAD_ID = 2,        /* a row id that is not lowercase hex or >= 2^31 */
  RSC_ERR_BAD_LENGTH = 3,    /* a length row's hex length is malformed        */
  RSC_ERR_DUPLICATE_ROW = 4, /* a second row for an id that is not a stream  */
  RSC_ERR_DEV_ROW = 5,       /* a development-only row seen in production mode */
  RSC_ERR_BAD_ROW = 6,       /* an I, E or H row whose JSON does not parse, or
                                a byte stream item that is not binary         */
  RSC_ERR_LIMIT = 7,         /* a limit of rsc_limits was exceeded             */
  RSC_ERR_USER = 8,          /* a consumer hook returned non-zero              */
  RSC_ERR_STATE = 9,         /* feed after finish, or a NULL decoder          */
  RSC_ERR_HTML = 10,         /* rsc_html_extract: no payload, or a bad push    */
  RSC_ERR_BAD_VALUE = 11     /* a value no React server writes, which React's
                                client would turn quietly into null, undefined
                                or a truncated value: a row whose whole value
                                is a reference to itself, rows whose whole
                                values reference each other in a circle, a
                                typed array row whose length is not a multiple
                                of its element size, an I row that is neither
                                an array nor an object. The offset is the
                                first byte of the row (for a circle, of the
                                row that closes it). RSC_OPT_LENIENT_VALUES
                                decodes React's values instead.              */
} rsc_status;

/* A decode error. offset counts bytes across every feed (the whole stream);
 * row_id is the id of the row being read, or -1 outside a row; msg is a
 * static string (never free it) or NULL when code is RSC_OK. */
typedef struct rsc_error {
  rsc_status code;
  uint64_t offset;
  int64_t row_id;
  const char *msg;
} rsc_error;

/* Allocator hooks. NULL functions mean libc. ctx is passed back to every
 * call. realloc gets the old size, so an arena or pool can plug in. */
typedef struct rsc_alloc {
  void *(*malloc)(void *ctx, size_t size);
  void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
  void (*free)(void *ctx, void *ptr);
  void *ctx;
} rsc_alloc;

/* Limits. 0 means the default given beside each field. Exceeding one stops
 * the decoder with RSC_ERR_LIMIT and the offset where it happened: the
 * first byte past the row or stream limit (or the length digit that asked
 * for too much), the bracket past the depth limit, and the first byte of
 * the row being decoded for nodes, chunks and path hops (the row its JSON
 * came from, even when it is revived later). The same error at the same
 * offset whatever the feed boundaries. docs/hardening.md has the rest. */
typedef struct rsc_limits {
  uint64_t max_row_bytes;   /* one row's payload; default 256 MiB           */
  uint64_t max_total_bytes; /* the whole stream; default unlimited (0)      */
  uint32_t max_depth;       /* JSON nesting per row; default 5000           */
  uint64_t max_nodes;       /* values allocated in total; default (0): 2^20
                               plus 64 per byte read, at most 2^25           */
  uint32_t max_chunks;      /* entries in the chunk table; default 1 << 24  */
  uint32_t max_path_hops;   /* keys in one "$id:a:b" path; default 1024     */
} rsc_limits;

typedef struct rsc_chunk rsc_chunk;
typedef struct rsc_node rsc_node;
typedef struct rsc_decoder rsc_decoder;

/* What a consumer hook is told about. */
typedef enum rsc_event_kind {
  RSC_EVENT_CHUNK_SETTLED = 1, /* a chunk became fulfilled, rejected or halted */
  RSC_EVENT_HINT = 2,          /* an H row: code and value                     */
  RSC_EVENT_DEBUG_ROW = 3      /* a D, N, J or W row (development payloads)    */
} rsc_event_kind;

typedef struct rsc_event {
  rsc_event_kind kind;
  int64_t chunk_id;       /* the chunk (CHUNK_SETTLED, D/J rows), else -1   */
  const rsc_chunk *chunk; /* CHUNK_SETTLED: the chunk                       */
  char tag;               /* HINT: the hint code (0 for one of more than a
                             byte, as a kept U+FEFF); DEBUG_ROW: the row tag */
  const rsc_node
      *value;       /* HINT: the revived hint payload (lives as long as the decoder), else NULL */
  const char *text; /* DEBUG_ROW: the raw row text; HINT: the code's
                       UTF-8 bytes (not NUL-ended)                    */
  size_t text_len;
} rsc_event;

/* A consumer hook: 0 continues, non-zero stops the decoder with RSC_ERR_USER.
 * Called from inside feed/finish; it may read nodes but must not feed. */
typedef int (*rsc_event_fn)(void *ctx, const rsc_event *event);

/* Option flags (bits of rsc_options.flags). 0 is the strict default. */
enum {
  /* Decode with React's development client semantics (DEV errors, $Z with an
   * id, halt rows, debug rows accepted). Without it the decoder switches to
   * them by itself when the stream opens with a ":N" time-origin row. */
  RSC_OPT_DEV = 1u << 0,
  /* React's unstable_allowPartialStream: chunks missing at the end halt
   * instead of rejecting with "Connection closed.", open streams close. */
  RSC_OPT_ALLOW_PARTIAL = 1u << 1,
  /* Copy React's lenient id parsing: any byte is folded into the id with
   * React's formula and ids wrap at 32 bits (docs/spec/FLIGHT-PROTOCOL.md 2.8).
   * RISK: uppercase or garbage ids silently address other chunks. */
  RSC_OPT_LENIENT_IDS = 1u << 2,
  /* Decode "$T" as a temporary reference node instead of rejecting the
   * chunk, as React does when the caller passed a temporaryReferences set. */
  RSC_OPT_TEMP_REFS = 1u << 3,
  /* 1u << 4 is reserved: ignored when set. */
  /* Do not await the root from the start: its row is revived on its first
   * read (rsc_chunk_status and friends, or finish), as React does for a
   * caller that awaits the root late. Rows that arrived by then resolve in
   * place instead of through blocked lazies
   * (docs/spec/FLIGHT-PROTOCOL.md 8.3). */
  RSC_OPT_LAZY_ROOT = 1u << 5,
  /* Note which values a reference placed (rsc_decoder_shares), for a
   * converter that wants to remember only values it can meet twice. */
  RSC_OPT_TRACK_SHARED = 1u << 6,
  /* Text (T) and binary rows that arrive whole inside one fed buffer point
   * into that buffer instead of being copied into the decoder. The caller
   * keeps every buffer it feeds alive and unchanged until the decoder is
   * reset or freed. RISK: the text of such a T row is not NUL-terminated
   * (rsc_node_string's length says where it ends). Rows split across feeds
   * are in the decoder's memory as without the flag (gathered there piece
   * by piece as they arrive, one copy). */
  RSC_OPT_BORROW_INPUT = 1u << 7,
  /* Drop a U+FEFF (the bytes EF BB BF) that begins a row, as React 19.3.1's
   * client does (its TextDecoder takes it for an encoding signature). By
   * default it is kept, as React's fixed client and the one Next.js ships
   * do: a text row keeps it as its first character, and a JSON row that
   * begins with it fails to parse (a SyntaxError, as JSON.parse throws). */
  RSC_OPT_DROP_BOM = 1u << 8,
  /* Decode values no React server writes as React's client does instead of
   * failing with RSC_ERR_BAD_VALUE: a whole-value self reference or circle
   * becomes null, a typed array drops its last partial element, an I row
   * of another JSON kind becomes a client reference whose id, chunks and
   * name are undefined. For hosts that must match React's values exactly.
   * RISK: damaged or forged payloads then decode without a word. */
  RSC_OPT_LENIENT_VALUES = 1u << 9,
  /* Keep what rsc_encode needs beside the decoded values: a log of the
   * rows in their order (id, whether it had one, tag), the text of the
   * rows whose content the values do not hold (H hints, development D,
   * N, J, W rows and the E rows of a development stream, whose stacks are
   * not kept) and of model rows (written as they came only when their
   * chunk ends with no value: rejected by an error it referenced, or
   * blocked on a row that never came), the reference form ("$Q", "$W",
   * "$K", "$B", "$i", "$h", "$Z") that made each Map, Set, FormData,
   * Blob, iterator, server reference and development error, the value of
   * a "__proto__" member (which revive deletes) and a development
   * element's tuple slots after its props. Sets RSC_OPT_TRACK_SHARED
   * (the writer records only the values a reference placed). Costs
   * memory about the size of the model rows' text; a decode without the
   * flag pays nothing. */
  RSC_OPT_KEEP_ROWS = 1u << 10
};

/* Which bundler integration of React's Flight server wrote the payload
 * (rsc_options.bundler): each writes client references (I rows) in its own
 * shape and decodes them with its own client.
 * WEBPACK (the default) and TURBOPACK: [id, chunks, name] plus a 4th
 *   element when the module is async, or React 18's {id, chunks, name,
 *   async}. An array whose second element is a string can only be Parcel's
 *   and is read as Parcel's under WEBPACK and TURBOPACK too.
 * PARCEL: [id, name, bundles, importMap?]; never async.
 * RSPACK: webpack's shape, but its server does not escape export names
 *   (an export named "$" or "$store" arrives as "$" or "$store", which the
 *   client revives as the element marker or a reference): as its client
 *   does, a reference whose revived name is not a string is undefined. */
typedef enum rsc_bundler {
  RSC_BUNDLER_WEBPACK = 0,
  RSC_BUNDLER_TURBOPACK = 1,
  RSC_BUNDLER_PARCEL = 2,
  RSC_BUNDLER_RSPACK = 3
} rsc_bundler;

typedef struct rsc_options {
  uint32_t flags; /* RSC_OPT_* bits                                 */
  rsc_limits limits;
  rsc_alloc alloc;       /* all NULL: libc                                 */
  rsc_event_fn on_event; /* NULL: no events                                */
  void *event_ctx;
  rsc_bundler bundler; /* I row shape; RSC_BUNDLER_WEBPACK by default    */
} rsc_options;

/* Chunk states, as React's client has them (resolved_model and
 * resolved_module are internal: reading a chunk initialises it first). */
typedef enum rsc_chunk_state {
  RSC_CHUNK_PENDING = 0, /* referenced, row not arrived                    */
  RSC_CHUNK_BLOCKED = 1, /* arrived, waits on a chunk that has not         */
  RSC_CHUNK_FULFILLED = 2,
  RSC_CHUNK_REJECTED = 3,
  RSC_CHUNK_HALTED = 4 /* will never resolve, and is no error            */
} rsc_chunk_state;

/* Value kinds. Accessors called on the wrong kind (or NULL) return a
 * neutral value: 0, NULL, RSC_NONE. */
typedef enum rsc_kind {
  RSC_NONE = 0,
  RSC_NULL,
  RSC_BOOL,
  RSC_NUMBER,
  RSC_STRING,
  RSC_UNDEFINED,
  RSC_BIGINT, /* rsc_node_string: decimal digits, '-' if negative     */
  RSC_DATE,   /* rsc_node_string: the text after "$D", as sent        */
  RSC_SYMBOL, /* rsc_node_string: the key of Symbol.for(key)          */
  RSC_ARRAY,
  RSC_OBJECT,
  RSC_ELEMENT,    /* rsc_element_type / _key / _props                     */
  RSC_LAZY,       /* rsc_node_chunk: the chunk it wraps                   */
  RSC_PROMISE,    /* rsc_node_chunk                                       */
  RSC_CLIENT_REF, /* rsc_client_ref_*                                     */
  RSC_SERVER_REF, /* rsc_server_ref_*                                     */
  RSC_TEMP_REF,   /* rsc_node_string: the path after "$T"                 */
  RSC_MAP,        /* rsc_node_len pairs: rsc_node_at(2i) key, (2i+1) value */
  RSC_SET,        /* rsc_node_len values                                  */
  RSC_FORMDATA,   /* like RSC_MAP: name, value                            */
  RSC_BLOB,       /* rsc_node_string: MIME type; rsc_node_bytes: content  */
  RSC_ITERATOR,   /* rsc_node_len items                                   */
  RSC_BINARY,     /* rsc_node_binary_kind; rsc_node_bytes                 */
  RSC_STREAM,     /* rsc_stream_*                                         */
  RSC_ERROR,      /* rsc_error_message / _digest                          */
  RSC_FUNCTION    /* development "$E" source that evaluates to a function:
                     rsc_node_string is the source (React evals it)        */
} rsc_kind;

/* Binary row kinds (RSC_BINARY). */
typedef enum rsc_binary_kind {
  RSC_ARRAY_BUFFER = 0,
  RSC_INT8,
  RSC_UINT8,
  RSC_UINT8_CLAMPED,
  RSC_INT16,
  RSC_UINT16,
  RSC_INT32,
  RSC_UINT32,
  RSC_FLOAT32,
  RSC_FLOAT64,
  RSC_BIGINT64,
  RSC_BIGUINT64,
  RSC_DATA_VIEW
} rsc_binary_kind;

/* Stream kinds (RSC_STREAM) and how a stream ended. */
typedef enum rsc_stream_kind {
  RSC_STREAM_TEXT = 0,     /* R: ReadableStream of values                   */
  RSC_STREAM_BYTES = 1,    /* r: byte ReadableStream                        */
  RSC_STREAM_ITERABLE = 2, /* X: AsyncIterable                              */
  RSC_STREAM_ITERATOR = 3  /* x: AsyncIterator                              */
} rsc_stream_kind;

typedef enum rsc_stream_end {
  RSC_STREAM_OPEN = 0,
  RSC_STREAM_DONE = 1,
  RSC_STREAM_ERRORED = 2
} rsc_stream_end;

/* --- version ------------------------------------------------------------ */

/* The library's version string, e.g. "0.1.0" (RSC_VERSION_STRING at build). */
RSC_API const char *rsc_version(void);
/* A static, human-readable name for an error code. */
RSC_API const char *rsc_status_name(rsc_status code);

/* --- decoder ------------------------------------------------------------ */

/* Fills *opt with the defaults: strict production semantics, default
 * limits, libc allocator, no hook. */
RSC_API void rsc_options_init(rsc_options *opt);

/* A new decoder, or NULL when memory runs out. opt may be NULL (defaults);
 * it is copied. Free it with rsc_decoder_free. */
RSC_API rsc_decoder *rsc_decoder_new(const rsc_options *opt);

/* Feeds len bytes (len 0 is allowed). The split may fall anywhere. Returns
 * RSC_OK or the error that stopped the decoder; errors are sticky: every
 * later call returns the same error. buf is not kept after the call. */
RSC_API rsc_status rsc_decoder_feed(rsc_decoder *d, const char *buf, size_t len);

/* Readable bytes rsc_decoder_feed_padded may assume after a buffer. */
enum { RSC_PADDING = 64 };

/* rsc_decoder_feed for a caller whose buffer has RSC_PADDING more readable
 * bytes after buf[len - 1] (any values; they are read, never used or
 * written): a row that ends near the end of buf is then parsed where it
 * lies instead of copied first (the JSON parser reads ahead in blocks). A
 * file read whole into a buffer RSC_PADDING bytes larger needs no copy of
 * its last row, often the largest. */
RSC_API rsc_status rsc_decoder_feed_padded(rsc_decoder *d, const char *buf, size_t len);

/* Ends the stream: chunks that never arrived are rejected with
 * "Connection closed." (halted with RSC_OPT_ALLOW_PARTIAL), open streams end,
 * and every chunk reachable from the root is initialised, so the whole tree
 * is revived. Calling it twice is harmless. Returns the sticky status.
 * rsc_decoder_incomplete, rsc_chunk_closed and rsc_error_closed tell such
 * an end from an error the server sent, without comparing text. */
RSC_API rsc_status rsc_decoder_finish(rsc_decoder *d);

/* The sticky error (code RSC_OK when none). Never NULL for a non-NULL d. */
RSC_API const rsc_error *rsc_decoder_error(const rsc_decoder *d);

/* Frees the decoder and everything it owns. NULL is ignored. A decoder on
 * the default allocator, with row buffers for rows of at most 2 MiB (a
 * reset keeps those), is instead kept, emptied, for the next
 * rsc_decoder_new (one at a time, replacing the one kept before), holding
 * at most 16 MiB of arena blocks, 256 KiB of chunk table and stacks of
 * 4,096 entries (the rest goes back): a host making a decoder per response then skips the page
 * faults of fresh memory (see rsc_decoder_reset). Nothing read from d survives either way.
 * rsc_release_memory frees the kept one. */
RSC_API void rsc_decoder_free(rsc_decoder *d);

/* Frees the decoder rsc_decoder_free may have kept. Thread-safe. */
RSC_API void rsc_release_memory(void);

/* Makes d a new decoder with the same options, for the next stream, but
 * keeps the memory it holds (arena blocks, the JSON parser's buffers,
 * tables): a host decoding response after response on one thread skips
 * the page faults and unmaps of fresh memory. Every node, chunk and string
 * read from d before the reset is gone. Not from inside a consumer hook.
 * RSC_ERR_NOMEM leaves d in error; free it. */
RSC_API rsc_status rsc_decoder_reset(rsc_decoder *d);

/* One shot: new + feed(buf, len) + finish. Returns the decoder (check
 * rsc_decoder_error) or NULL when memory ran out; err, if not NULL,
 * receives a copy of the decoder's error. */
RSC_API rsc_decoder *rsc_decode(const char *buf, size_t len, const rsc_options *opt,
                                rsc_error *err);

/* Whether the decoder uses development semantics (set, or detected). */
RSC_API int rsc_decoder_is_dev(const rsc_decoder *d);
/* Bytes fed so far, and the most memory the decoder has held (for a
 * decoder that rsc_decoder_new took from what rsc_decoder_free kept, or one
 * reset, the memory it kept counts from the start). */
RSC_API uint64_t rsc_decoder_bytes(const rsc_decoder *d);
RSC_API size_t rsc_decoder_peak_memory(const rsc_decoder *d);

/* What the end of the stream left unfinished (rsc_decoder_incomplete).
 * Row ids as the framer read them; lists ascending, without repeats. */
typedef struct rsc_incomplete {
  uint64_t offset;        /* where the stream ended: bytes fed in total     */
  int cut;                /* 1 when it ended inside a row (which is dropped,
                             as React drops it), else 0                    */
  int64_t cut_id;         /* that row's id, or -1 (no row was cut, or the
                             end fell inside its id)                       */
  uint64_t cut_offset;    /* that row's first byte (offset when cut is 0)   */
  const int64_t *missing; /* ids the stream referenced whose row never
                             arrived: rejected with "Connection closed."
                             (halted with RSC_OPT_ALLOW_PARTIAL). The cut
                             row's id is here too when it was referenced.
                             A chunk whose row arrived but waits on one of
                             these is not.                                 */
  size_t missing_len;
  const int64_t *open_streams; /* ids of streams (R, r, X, x rows) whose end
                              (C or E row) never arrived: ended with
                              "Connection closed." (closed with
                              RSC_OPT_ALLOW_PARTIAL)                        */
  size_t open_streams_len;
} rsc_incomplete;

/* After rsc_decoder_finish: NULL when the stream ended complete (no row cut,
 * nothing referenced missing, no stream left open), and also before finish
 * or when the decoder stopped with an error (see rsc_decoder_error: an error
 * is not an early end). Otherwise what was
 * unfinished. The struct and its lists live in d's arena until the next
 * rsc_decoder_reset or rsc_decoder_free; a chunk first read after finish
 * can reference an id never seen, so a later call may return a new struct
 * (the earlier one stays valid, as it was). Only finish and this call pay
 * for it: nothing is kept while bytes are fed. */
RSC_API const rsc_incomplete *rsc_decoder_incomplete(rsc_decoder *d);

/* --- chunks ------------------------------------------------------------- */

/* The root chunk (id 0); never NULL for a non-NULL decoder. */
RSC_API const rsc_chunk *rsc_decoder_root(rsc_decoder *d);
/* The chunk with this id, or NULL if the stream never mentioned it. */
RSC_API const rsc_chunk *rsc_decoder_chunk(rsc_decoder *d, int64_t id);
/* Number of chunks in the table, and the i-th in order of creation. */
RSC_API size_t rsc_decoder_chunk_count(const rsc_decoder *d);
RSC_API const rsc_chunk *rsc_decoder_chunk_at(const rsc_decoder *d, size_t i);

/* The chunk's id (-1 for internal chunks such as a blocked element's). */
RSC_API int64_t rsc_chunk_id(const rsc_chunk *c);
/* Its status. A chunk whose row arrived but was not parsed yet is parsed
 * first, as React's first read does. */
RSC_API rsc_chunk_state rsc_chunk_status(const rsc_chunk *c);
/* Its value when fulfilled, else NULL. */
RSC_API const rsc_node *rsc_chunk_value(const rsc_chunk *c);
/* Its reason (an RSC_ERROR node, or any value) when rejected, else NULL. */
RSC_API const rsc_node *rsc_chunk_reason(const rsc_chunk *c);
/* 1 when the end of the stream settled c: its row never arrived (rejected,
 * or halted with RSC_OPT_ALLOW_PARTIAL), or it was rejected because a chunk
 * it waited on was (its reason is then the end's error: rsc_error_closed).
 * 0 otherwise: fulfilled, an error the server sent (an E row, a "$Z"
 * error), a halt the server sent, or still blocked (with
 * RSC_OPT_ALLOW_PARTIAL a chunk waiting on a halted one stays blocked;
 * rsc_decoder_incomplete says whether the stream ended early). Reads c as
 * rsc_chunk_status does. */
RSC_API int rsc_chunk_closed(const rsc_chunk *c);

/* --- values ------------------------------------------------------------- */

RSC_API rsc_kind rsc_node_kind(const rsc_node *n);
/* A static name for a kind ("object", "element", ...). */
RSC_API const char *rsc_kind_name(rsc_kind k);
RSC_API int rsc_node_bool(const rsc_node *n);
RSC_API double rsc_node_number(const rsc_node *n);
/* Text of STRING, BIGINT, DATE, SYMBOL, TEMP_REF, BLOB (its type) nodes:
 * UTF-8 (WTF-8 where JSON had a lone surrogate), NUL-terminated (but the
 * text of a T row borrowed with RSC_OPT_BORROW_INPUT), length in *len (may
 * be NULL). NULL for other kinds. */
RSC_API const char *rsc_node_string(const rsc_node *n, size_t *len);
/* Items of ARRAY, SET, ITERATOR; 2 * entries of MAP and FORMDATA; visible
 * members of OBJECT; 0 otherwise. */
RSC_API size_t rsc_node_len(const rsc_node *n);
/* The i-th item (see rsc_node_len), or NULL when out of range. */
RSC_API const rsc_node *rsc_node_at(const rsc_node *n, size_t i);
/* OBJECT members in JavaScript key order (array-index keys first); i counts
 * visible members only (undefined and __proto__ members are absent). */
RSC_API const char *rsc_object_key(const rsc_node *n, size_t i, size_t *len);
RSC_API const rsc_node *rsc_object_value(const rsc_node *n, size_t i);
/* The member named key (len bytes), or NULL. */
RSC_API const rsc_node *rsc_object_get(const rsc_node *n, const char *key, size_t len);
/* ELEMENT parts: type, key, props (an UNDEFINED node when the tuple was too
 * short), and the development-only owner and stack (NULL in production). */
RSC_API const rsc_node *rsc_element_type(const rsc_node *n);
RSC_API const rsc_node *rsc_element_key(const rsc_node *n);
RSC_API const rsc_node *rsc_element_props(const rsc_node *n);
RSC_API const rsc_node *rsc_element_owner(const rsc_node *n);
/* LAZY and PROMISE: the chunk they stand for. */
RSC_API const rsc_chunk *rsc_node_chunk(const rsc_node *n);
/* CLIENT_REF: the metadata as the I row sent it (revived), and its parts:
 * module id (a STRING or NUMBER node), chunk list (Parcel's bundle list),
 * export name, async flag (never set for Parcel), and Parcel's import map
 * (NULL when the row has none or is not Parcel's). rsc_client_ref_is_parcel
 * says whether the row was read in Parcel's shape. */
RSC_API const rsc_node *rsc_client_ref_metadata(const rsc_node *n);
RSC_API const rsc_node *rsc_client_ref_id(const rsc_node *n);
RSC_API const rsc_node *rsc_client_ref_chunks(const rsc_node *n);
RSC_API const rsc_node *rsc_client_ref_name(const rsc_node *n);
RSC_API int rsc_client_ref_is_async(const rsc_node *n);
RSC_API const rsc_node *rsc_client_ref_import_map(const rsc_node *n);
RSC_API int rsc_client_ref_is_parcel(const rsc_node *n);
/* SERVER_REF: its id and bound arguments (NULL node, a PROMISE, or a value). */
RSC_API const rsc_node *rsc_server_ref_id(const rsc_node *n);
RSC_API const rsc_node *rsc_server_ref_bound(const rsc_node *n);
/* BINARY and BLOB bytes (little-endian element data, as sent; no alignment
 * is promised: read elements with memcpy). */
RSC_API const uint8_t *rsc_node_bytes(const rsc_node *n, size_t *len);
RSC_API rsc_binary_kind rsc_node_binary_kind(const rsc_node *n);
/* A static name for a binary kind ("Uint8Array", "DataView", ...). */
RSC_API const char *rsc_binary_kind_name(rsc_binary_kind k);
/* ERROR: the message (never NULL for an ERROR node; NUL-terminated, but
 * it may hold NULs, as a SyntaxError quoting its row can: rsc_node_view's
 * str_len is its whole length) and digest (NULL when the error has none). */
RSC_API const char *rsc_error_message(const rsc_node *n);
RSC_API const char *rsc_error_digest(const rsc_node *n);
/* 1 when n is the error the decoder made for the end of the stream
 * ("Connection closed.": a chunk that never arrived, or a stream left open,
 * at finish), 0 for any other node, an error the server sent with the
 * same message included. */
RSC_API int rsc_error_closed(const rsc_node *n);
/* STREAM: kind, items (values; for byte streams each piece's bytes as a
 * Uint8Array BINARY node), how it ended, and the return value (DONE) or
 * error (ERRORED). */
RSC_API rsc_stream_kind rsc_stream_kind_of(const rsc_node *n);
RSC_API size_t rsc_stream_len(const rsc_node *n);
RSC_API const rsc_node *rsc_stream_at(const rsc_node *n, size_t i);
RSC_API rsc_stream_end rsc_stream_end_of(const rsc_node *n);
RSC_API const rsc_node *rsc_stream_end_value(const rsc_node *n);
/* A value's identity: equal for the same shared object, array, element...
 * (a dump writes a second meeting as a ref); 0 for values without one. */
RSC_API uintptr_t rsc_node_identity(const rsc_node *n);
/* Whether a value of this identity can be met more than once: 1 when a
 * reference ("$5", "$0:props:users:3", "$Q2"...) placed it somewhere; 0
 * when it sits in one place only. Values with identity are shared only
 * that way, or as a chunk's own value (the root, a lazy's or promise's
 * value), which a converter reaches through the chunk. Needs
 * RSC_OPT_TRACK_SHARED (otherwise every identity answers 1); valid after
 * finish, until the next reset. */
RSC_API int rsc_decoder_shares(const rsc_decoder *d, uintptr_t identity);

/* --- Flight inside HTML --------------------------------------------------- */

/* Which framework inlined the payload into the page. */
typedef enum rsc_html_flavor {
  RSC_HTML_AUTO = 0,           /* detect (as a result: none found)           */
  RSC_HTML_NEXT = 1,           /* Next.js: self.__next_f.push([1,"..."]) ... */
  RSC_HTML_RSC_HTML_STREAM = 2 /* rsc-html-stream (Vite RSC, Waku, Parcel)   */
} rsc_html_flavor;

/* Extracts the Flight payload bytes a page hands to React's client: the
 * framework's inline <script> pushes, found as a browser tokenizes the page
 * (comments, <template>, <textarea>, data scripts and strings in other
 * scripts are not pushes) and read as JavaScript string literals, joined in
 * order (text as UTF-8, base64 segments decoded). Feed the result to a
 * decoder. flavor RSC_HTML_AUTO accepts either framework. On success returns
 * RSC_OK with *out (NUL-terminated; release it with rsc_free) and *out_len;
 * *found (may be NULL) tells the framework. Otherwise returns RSC_ERR_HTML
 * (or RSC_ERR_NOMEM) with err (may be NULL) giving the byte offset in the
 * page and a static message. Thread-safe; no state. */
RSC_API rsc_status rsc_html_extract(const char *html, size_t len, rsc_html_flavor flavor,
                                    char **out, size_t *out_len, rsc_error *err,
                                    rsc_html_flavor *found);

/* --- output ------------------------------------------------------------- */

/* The canonical dump (docs/spec/CANONICAL-DUMP.md) of the root, after finish.
 * pretty: 0 for one line, otherwise the indent width. Returns a
 * NUL-terminated string to release with rsc_free, or NULL when memory ran
 * out or the decoder failed (see rsc_decoder_error). */
RSC_API char *rsc_dump(rsc_decoder *d, int pretty, size_t *len);
/* Receives the dump's text in pieces of 1 to 65536 bytes, in order; returns
 * 0 to go on, anything else to stop the dump. */
typedef int (*rsc_write_fn)(void *ctx, const char *buf, size_t len);
/* The same text as rsc_dump, handed to write as it is made: the dump holds
 * at most one piece of text at a time, whatever the size of the whole (deep
 * nesting printed with an indent grows with the square of the depth).
 * Returns RSC_OK when all of it was written; RSC_ERR_USER when write
 * returned non-zero (it is not called again); RSC_ERR_NOMEM; the decoder's
 * error when it has one (nothing written) or when reading a chunk failed on
 * the way; RSC_ERR_STATE for a NULL decoder or write. On an error the text
 * written so far is incomplete. The decoder's own error is left as it was
 * unless a chunk read on the way failed. */
RSC_API rsc_status rsc_dump_to(rsc_decoder *d, int pretty, rsc_write_fn write, void *ctx);
/* --- writing Flight (src/encode.c) -------------------------------------- */

/* Writes the payload d decoded as Flight rows, handed to write in pieces as
 * rsc_dump_to does: the rows in their original order with their original
 * ids and tags, each model row the JSON of its value with every revived
 * value written back in its "$" form (elements as ["$",type,key,props],
 * lazies and promises as "$L" and "$@" of their chunk, a value that is
 * another row's as "$<id>", an object met again as the path reference
 * React's server writes, "$undefined", "$NaN", "$-0", "$D", "$n", "$S",
 * strings starting with "$" as "$$"...), T and binary rows with their
 * byte lengths, I, E, H and stream rows. Rows whose value cannot say what
 * came are written as they came: I rows (their metadata), and a model row
 * holding an element React's client turned into a lazy that did not
 * fulfil (it errored, a row it waited on never came, or the reference
 * that waited was its type or key, which the client never fills in).
 * Needs a decoder made with
 * RSC_OPT_KEEP_ROWS (else RSC_ERR_STATE); call it after finish (it may
 * read chunks, as rsc_dump does). For the payloads React's server writes
 * the result is the input, byte for byte, but for the cases
 * tests/encode-known.txt lists with their reasons. Rows go to write as
 * they are made; a row the server outlined while it wrote a later one
 * waits in memory until its turn. Returns RSC_OK, RSC_ERR_USER when write
 * returned non-zero (it is not called again), RSC_ERR_NOMEM, the
 * decoder's error when it has one (nothing written) or when reading a
 * chunk failed on the way, RSC_ERR_STATE for a NULL decoder or write. On
 * an error the text written so far is incomplete. */
RSC_API rsc_status rsc_encode(rsc_decoder *d, rsc_write_fn write, void *ctx);
/* rsc_encode while the payload streams in, for a host that forwards it:
 * called after any feed, writes the rows after those it wrote before
 * that can be written for good now; called after finish, writes the
 * rest. What all the calls on a decoder write, concatenated, is what
 * rsc_encode writes for it. Rows go out in their original order, so a
 * row that cannot be written yet holds back the rows after it. A row
 * waits while its chunk has not settled (a model row blocked on a row
 * still to come; an element in it blocked so; an iterator's item not
 * settled), while a row the server outlined before it (a Map's entries)
 * waits for the row that names it, and, for a model row whose value is
 * an array (or an object with "bound", or any object in a development
 * payload), until a later model row has settled to another kind of
 * value or the payload ended: such a row may be the entries of a "$Q",
 * "$W", "$K", "$B", "$i", "$h" or "$Z" form in the row after it, and
 * then it is written as part of that row (its paths depend on it). Reads
 * chunks as they arrive, as a consumer reading values during the feed
 * does: a development ":N" row that comes after a model row already read
 * no longer switches the decoder to development semantics. Keeps its
 * state in the decoder (rsc_encode's own is apart; a reset drops it); the
 * rows made and not written yet (those after a waiting row, or outlined)
 * wait in memory. Needs RSC_OPT_KEEP_ROWS (else RSC_ERR_STATE). Returns
 * RSC_OK (also after the rest was written, with nothing more to write),
 * RSC_ERR_USER when write returned non-zero, RSC_ERR_NOMEM (both sticky:
 * later calls return them and write nothing), the decoder's error when
 * it has one (nothing written), RSC_ERR_STATE for a NULL decoder or
 * write. */
RSC_API rsc_status rsc_encode_ready(rsc_decoder *d, rsc_write_fn write, void *ctx);

/* --- the byte report (src/report.c) ------------------------------------ */

/* Writes one self-contained HTML page (styles, script and data inline; it
 * loads nothing) that shows where the bytes of a payload go: a zoomable
 * treemap of byte spans (rows by id, the values inside model rows, elements
 * named by component or host tag, client modules by module name), element
 * types by their bytes, repeated strings and subtrees (the same JSON text
 * written more than once) with the bytes they cost and where they occur,
 * and the rows in stream order with the Suspense boundary, lazy or promise
 * each settles. input is a payload, or an HTML page whose inlined payload
 * is reported against the page's own bytes: page 1 says it is one, 0 that
 * it is not, -1 decides by whether it opens with '<' (after whitespace and
 * a byte-order mark). opt (may be NULL) gives the decode's options; its
 * hook is not called; its allocator takes the decode's memory and the
 * measuring's (about 80 bytes per JSON value of the payload; a page's
 * extraction uses libc, as rsc_html_extract does). The page
 * goes to write in pieces as rsc_dump_to does; it is bounded (about one
 * value per 100 bytes of payload is drawn, 2000 to 20000 of them, and
 * children under 0.1 % of their parent fold), so a payload of 10 MB gives
 * a page under 1 MB.
 * Returns RSC_OK when the page was written: then err (may be NULL) holds
 * the decode's error, which the page shows too (a payload the decoder
 * refuses is measured all the same). Otherwise no page, or an incomplete
 * one: RSC_ERR_HTML (err: where the page failed), RSC_ERR_NOMEM,
 * RSC_ERR_USER (write returned non-zero), RSC_ERR_STATE (no write, or
 * input NULL with len > 0). */
RSC_API rsc_status rsc_report_html(const char *input, size_t len, int page, const rsc_options *opt,
                                   rsc_write_fn write, void *ctx, rsc_error *err);
/* --- rewriting Flight (src/rewrite.c) ----------------------------------- */

/* What to change: the rules (string values by exact match or prefix, a
 * callback per string that sees its place, props dropped or replaced, hint
 * URLs). Defined with the rules below. */
typedef struct rsc_rewrite_options rsc_rewrite_options;
/* Bytes, not NUL-terminated. */
typedef struct rsc_rewrite_str {
  const char *p;
  size_t len;
} rsc_rewrite_str;
/* from -> to: an exact match or a prefix (the rest of the string is kept),
 * or a prop's key and its new value as JSON text (set_props). */
typedef struct rsc_rewrite_rule {
  rsc_rewrite_str from, to;
} rsc_rewrite_rule;
/* One step on the way from a row's value to a string: an object key
 * (key != NULL, decoded) or an array index. */
typedef struct rsc_rewrite_step {
  const char *key;
  size_t key_len;
  int64_t index; /* -1 for a key */
} rsc_rewrite_step;
/* Where a string is: its row's id, the row's tag (0 for a model row, 'T',
 * 'H', 'I') and the steps from the row's value down to it (depth 0: the
 * row's whole value). Valid during the callback only. */
typedef struct rsc_rewrite_place {
  int64_t row_id;
  char tag;
  size_t depth;
  const rsc_rewrite_step *path;
} rsc_rewrite_place;
/* Sees each string the rules may change, after the exact and prefix rules
 * (s is the value as they left it, decoded: "$$x" in the row is "$x").
 * Returns 0 to keep s, 1 to replace it with out[0..*out_len) (the callee's
 * memory, read before the next call), anything else to stop the rewriter
 * with RSC_ERR_USER. */
typedef int (*rsc_rewrite_string_fn)(void *ctx, const rsc_rewrite_place *place, const char *s,
                                     size_t len, const char **out, size_t *out_len);

/* rsc_rewrite_options.flags */
enum {
  RSC_REWRITE_NO_HINTS = 1,  /* leave the URLs of H rows alone               */
  RSC_REWRITE_NO_IMPORTS = 2 /* leave the chunk lists of I rows alone        */
};

/* The strings the rules see: string values of model rows ("$$x" is the
 * value "$x"; other "$" strings are references or tags, never matched;
 * keys never), the text of T rows, the URL of H rows (the hint's string,
 * or the first item of its array) and the strings in the chunk list of I
 * rows (webpack/turbopack [id, chunks, name]; Parcel [id, name, bundles];
 * React 18's {"chunks": [...]}); a stream's C row is a model row. Other
 * rows (E, debug rows, binary rows) are copied. The keys filter applies
 * to model rows: only strings whose nearest object key is in the set (so
 * never a T row or a row whose whole value is a string); H and I URLs
 * ignore it. For each string: the first exact rule that matches, else the
 * first prefix rule, then fn. drop_props and set_props act on object
 * members of model rows by key (the first wins); what lies under them is
 * not rewritten. A changed string is written as JSON.stringify writes it,
 * and the rest of its row as it came: for rows React's server wrote, the
 * row JSON.stringify writes for the changed value. */
struct rsc_rewrite_options {
  const rsc_rewrite_rule *exact;
  size_t exact_count;
  const rsc_rewrite_rule *prefix;
  size_t prefix_count;
  const rsc_rewrite_str *keys; /* 0 keys: every key */
  size_t keys_count;
  const rsc_rewrite_str *drop_props;
  size_t drop_props_count;
  const rsc_rewrite_rule *set_props; /* to: valid JSON text */
  size_t set_props_count;
  rsc_rewrite_string_fn fn; /* NULL: none */
  void *fn_ctx;
  unsigned flags;         /* RSC_REWRITE_* */
  uint64_t max_row_bytes; /* 0: 256 MiB */
  uint32_t max_depth;     /* JSON nesting per row; 0: 5000 */
  rsc_alloc alloc;
};
/* No rules, the defaults. */
RSC_API void rsc_rewrite_options_init(rsc_rewrite_options *opts);

/* What a rewriter did so far. */
typedef struct rsc_rewrite_stats {
  uint64_t rows;            /* rows seen (a byte stream row once)          */
  uint64_t rows_changed;    /* rows written again                           */
  uint64_t strings_changed; /* strings replaced                             */
  uint64_t props_dropped;
  uint64_t props_set;
  uint64_t bytes_in, bytes_out;
  uint64_t largest_row; /* the longest input row's bytes (id to newline)  */
} rsc_rewrite_stats;

/* A streaming rewriter: bytes in, in pieces split anywhere; rewritten rows
 * out through write as each row completes. Rows no rule changes are copied
 * as they came; changed rows are written again (T rows with their new byte
 * length). Memory is bounded by the largest row: the framer's buffer for
 * a row split across feeds, plus a constant (a changed row is written in
 * pieces of 16 KiB as it is made). Errors (a row that is not JSON, a row
 * cut at finish, framing errors, limits) give the code, the byte offset,
 * the row id and a message; the rows before the failing one are written,
 * nothing after it. */
typedef struct rsc_rewriter rsc_rewriter;

/* A rewriter that writes to write(ctx, ...); NULL when memory ran out or
 * opts is invalid. opts is copied; its strings must outlive the rewriter. */
RSC_API rsc_rewriter *rsc_rewriter_new(const rsc_rewrite_options *opts, rsc_write_fn write,
                                       void *ctx);
/* Feeds the next len bytes of the payload. Returns RSC_OK or the error that
 * stopped the rewriter (see rsc_rewriter_error); after an error every call
 * returns it again. */
RSC_API rsc_status rsc_rewriter_feed(rsc_rewriter *rw, const void *buf, size_t len);
/* Ends the payload: writes what is left, or fails on a row cut short. */
RSC_API rsc_status rsc_rewriter_finish(rsc_rewriter *rw);
/* The error that stopped the rewriter (code RSC_OK when none). */
RSC_API const rsc_error *rsc_rewriter_error(const rsc_rewriter *rw);
RSC_API void rsc_rewriter_free(rsc_rewriter *rw);
/* What the rewriter did so far (rows written, strings changed, bytes). */
RSC_API const rsc_rewrite_stats *rsc_rewriter_stats(const rsc_rewriter *rw);
/* new + feed + finish + free in one call: the rewritten payload goes to
 * write; err and stats (either may be NULL) are filled. */
RSC_API rsc_status rsc_rewrite(const void *buf, size_t len, const rsc_rewrite_options *opts,
                               rsc_write_fn write, void *ctx, rsc_error *err,
                               rsc_rewrite_stats *stats);

/* What rsc_rewrite_html did. */
typedef struct rsc_html_rewrite_info {
  rsc_html_flavor flavor;         /* the framework whose scripts were read      */
  size_t rows, rows_changed;      /* rows in the payload; rows a rule changed   */
  size_t pushes;                  /* data pushes (text and base64) in the page  */
  size_t pushes_changed;          /* pushes whose string literal was rewritten  */
  size_t payload_in, payload_out; /* payload bytes before and after           */
  rsc_rewrite_stats rewriter;     /* the rewriter's own figures                 */
} rsc_html_rewrite_info;

/* Rewrites the Flight payload a page inlines (as rsc_html_extract reads it)
 * by opts, and writes the page again so that its own runtime reads the
 * rewritten payload: every byte outside the pushes whose bytes changed is
 * copied as it was; in those pushes only the string literal is written
 * again, escaped as the framework escapes it (Next.js: JSON.stringify and
 * htmlEscapeJsonString; rsc-html-stream: JSON.stringify and its escapeScript;
 * base64 pushes as btoa writes them). A rewritten row goes whole into the
 * push where it started; the later pushes it ran into keep what follows it;
 * no script is added, dropped or merged. flavor as for rsc_html_extract.
 * On success returns RSC_OK with *out (NUL-terminated; rsc_free) and
 * *out_len, and fills info (may be NULL). Otherwise returns the error (*out
 * NULL): RSC_ERR_HTML for the page (as rsc_html_extract), or a text push
 * whose new bytes would not be UTF-8; the rewriter's error for the payload,
 * with err's offset the page offset of the push holding the payload byte
 * it names; RSC_ERR_NOMEM; RSC_ERR_STATE for NULL opts. err may be NULL.
 * Not streaming: the page, its
 * payload, the rewritten payload and the new page are in memory at once. */
RSC_API rsc_status rsc_rewrite_html(const char *html, size_t len, rsc_html_flavor flavor,
                                    const rsc_rewrite_options *opts, char **out, size_t *out_len,
                                    rsc_html_rewrite_info *info, rsc_error *err);

/* Frees text the library returned. */
RSC_API void rsc_free(void *p);

/* --- bulk views (src/export.c) ------------------------------------------ */

/* One value described in one call, for bindings that convert a whole graph
 * (the Python binding builds its objects from these instead of calling an
 * accessor per field). Every pointer is borrowed from the decoder's arena;
 * fields that do not apply to the kind are 0 / NULL. */
typedef struct rsc_view {
  const rsc_node *node; /* the value itself, for the accessors above       */
  const char *key;      /* rsc_node_views of an OBJECT: the member's key    */
  size_t key_len;       /*   (UTF-8/WTF-8, not NUL-terminated); else NULL   */
  rsc_kind kind;
  int boolean;     /* BOOL                                             */
  double number;   /* NUMBER                                           */
  const char *str; /* rsc_node_string's text; ERROR: the message       */
  size_t str_len;
  const uint8_t *bytes; /* rsc_node_bytes (BINARY, BLOB)                    */
  size_t bytes_len;
  size_t len;         /* rsc_node_len; STREAM: rsc_stream_len             */
  uint32_t sub;       /* BINARY: rsc_binary_kind; STREAM: rsc_stream_kind */
  uintptr_t identity; /* rsc_node_identity                                */
} rsc_view;

/* Fills *out for n (kind RSC_NONE for NULL). */
RSC_API void rsc_node_view(const rsc_node *n, rsc_view *out);
/* Views of n's children from index start, at most cap of them, in the
 * accessors' order: ARRAY, SET and ITERATOR items; MAP and FORMDATA keys and
 * values interleaved (as rsc_node_at); OBJECT visible members with their
 * keys (as rsc_object_key / _value); STREAM items (as rsc_stream_at).
 * Returns the number of children in total (0 for other kinds). */
RSC_API size_t rsc_node_views(const rsc_node *n, size_t start, rsc_view *out, size_t cap);
/* ERROR: the digest as any value (rsc_error_digest gives strings only), or
 * NULL when the error has none. */
RSC_API const rsc_node *rsc_error_digest_node(const rsc_node *n);
/* A copy of the node n in d's arena, valid until the decoder is reset or
 * freed: for a host that keeps a value whose slot a later row may still
 * fill or change (an item of a stream, a chunk's value read while it is
 * blocked). Containers are shared, not copied, so identity is kept. NULL
 * when memory runs out. */
RSC_API const rsc_node *rsc_node_pin(rsc_decoder *d, const rsc_node *n);

/* --- Building Flight (src/builder.c) ------------------------------------ */

/* For hosts that produce payloads: make values with a builder, set the root,
 * and flush rows as React 19.3.1's server (react-server-dom-webpack, Node)
 * writes them for the same model: "$" forms, T rows for strings of 1024
 * UTF-16 units or more, binary rows for typed arrays, outlined Map and Set
 * rows, I rows written once per client reference (their strings of 16 units
 * or more outlined and shared, as React does), a row per symbol, once,
 * "$L" for elements past 3200 units of text in a row, "$L"/"$@" for lazies and
 * promises whose rows come when the host resolves them, server references
 * ("$h", an outlined {id, bound} row, once each), FormData ("$K"), Blobs
 * ("$B"), iterators ("$i"), ReadableStreams and async iterables ("$<id>" of
 * an R, r, X or x row; their items and end in rows of that id as the host
 * pushes them), E rows with a production digest, and rows in React's order
 * (in each flush: I rows, then model, T and binary rows as they complete,
 * then E rows).
 *
 *     rsc_builder *b = rsc_builder_new(NULL);
 *     rsc_bval *props = rsc_build_object(b);
 *     rsc_build_put(b, props, "children", 8, rsc_build_string(b, "hi", 2));
 *     rsc_builder_root(b, rsc_build_element(b, rsc_build_string(b, "p", 1),
 *                                            NULL, 0, props));
 *     rsc_builder_flush(b, write, ctx);    // 0:["$","p",null,{"children":"hi"}]
 *     rsc_builder_free(b);
 *
 * A value belongs to the builder that made it and lives until the builder
 * is freed; any value may be placed any number of times. A value with
 * identity (a container, element, binary value, Error, FormData, Blob,
 * iterator or stream) placed twice is written once, where it is met first,
 * and each other place names it as React's server does (writtenObjects):
 * "$<id>" when it is a row's value, else the path from one ("$0:a:1",
 * "$0:props:children"), so the client gets one object, cycles included; a
 * value under a key holding ":" has no path and is written again. Lazies
 * and promises are one row each ("$L<id>", "$@<id>" in every place), a
 * server reference one outlined row. Placing a value of another builder,
 * changing a container already written or settling a value twice is
 * RSC_ERR_STATE. Constructors return NULL when memory runs out
 * (rsc_builder_status then says RSC_ERR_NOMEM) or the input is invalid
 * (RSC_ERR_BAD_VALUE); passing that NULL on returns the same code.
 * Strings are UTF-8 (WTF-8 for lone surrogates) of the given byte length;
 * in a T row a lone surrogate becomes U+FFFD, as React's TextEncoder
 * writes it. */
typedef struct rsc_builder rsc_builder;
typedef struct rsc_bval rsc_bval;

/* A builder on the given allocator hooks (NULL: libc), or NULL. */
RSC_API rsc_builder *rsc_builder_new(const rsc_alloc *alloc);
RSC_API void rsc_builder_free(rsc_builder *b);
/* The code of the last call on b that failed (RSC_OK when none did). */
RSC_API rsc_status rsc_builder_status(const rsc_builder *b);

RSC_API rsc_bval *rsc_build_null(rsc_builder *b);
RSC_API rsc_bval *rsc_build_undefined(rsc_builder *b);
RSC_API rsc_bval *rsc_build_bool(rsc_builder *b, int v);
/* Any double: NaN, +-Infinity and -0 are written as "$NaN", "$Infinity",
 * "$-Infinity", "$-0". */
RSC_API rsc_bval *rsc_build_number(rsc_builder *b, double v);
RSC_API rsc_bval *rsc_build_string(rsc_builder *b, const char *s, size_t len);
/* BigInt from decimal digits with an optional leading '-' (else BAD_VALUE). */
RSC_API rsc_bval *rsc_build_bigint(rsc_builder *b, const char *digits, size_t len);
/* Date from its ISO text as Date.prototype.toJSON gives it. */
RSC_API rsc_bval *rsc_build_date(rsc_builder *b, const char *iso, size_t len);
/* Symbol.for(key). */
RSC_API rsc_bval *rsc_build_symbol(rsc_builder *b, const char *key, size_t len);
/* An Error value: production servers write it without message ("$Z"). */
RSC_API rsc_bval *rsc_build_error(rsc_builder *b);
RSC_API rsc_bval *rsc_build_array(rsc_builder *b);
RSC_API rsc_bval *rsc_build_object(rsc_builder *b);
RSC_API rsc_bval *rsc_build_map(rsc_builder *b);
RSC_API rsc_bval *rsc_build_set(rsc_builder *b);
/* Bytes as an ArrayBuffer, DataView or typed array (little-endian element
 * data); len must be a multiple of the element size (else BAD_VALUE). */
RSC_API rsc_bval *rsc_build_binary(rsc_builder *b, rsc_binary_kind kind, const void *bytes,
                                   size_t len);
/* A client reference (webpack's [id, chunks, name] metadata, with a 4th
 * element when async). References with the same id, name and async flag
 * share one I row. */
RSC_API rsc_bval *rsc_build_client_ref(rsc_builder *b, const char *id, const char *const *chunks,
                                       size_t n_chunks, const char *name, int async);
/* A client reference given as its I row's metadata, a JSON array on one
 * line, for what the function above cannot spell: webpack's numeric module and
 * chunk ids ([1337,[7,"7.chunk.js"],"default"]). It must be what React's
 * webpack client reads as a client reference (checked by decoding it as
 * one; else RSC_ERR_BAD_VALUE). Written as given; references with the
 * same text share one I row. */
RSC_API rsc_bval *rsc_build_client_ref_json(rsc_builder *b, const char *json, size_t len);
/* An element: type is a string (a host tag), a client reference or a
 * symbol; key NULL for a null key; props an object, or NULL for {}. */
RSC_API rsc_bval *rsc_build_element(rsc_builder *b, rsc_bval *type, const char *key, size_t key_len,
                                    rsc_bval *props);
/* A value that a later row settles: a lazy ("$L", what a suspended
 * component becomes; one resolved before it is written is written in
 * place) or a promise ("$@"). */
RSC_API rsc_bval *rsc_build_lazy(rsc_builder *b);
RSC_API rsc_bval *rsc_build_promise(rsc_builder *b);
/* A server reference (registerServerReference): its id ("module#export"),
 * and its bound arguments, an array, or NULL for none (bound: null). React
 * writes {id, bound} in a row of its own the first time, "bound" a promise
 * of the array whose row follows; every place is "$h<id>" of that row. */
RSC_API rsc_bval *rsc_build_server_ref(rsc_builder *b, const char *id, size_t len, rsc_bval *bound);
/* FormData ("$K"): entries added with rsc_build_form_append. */
RSC_API rsc_bval *rsc_build_form_data(rsc_builder *b);
/* A Blob ("$B"): its MIME type and content. Its row ([type, Uint8Array]) comes
 * in a later batch, as React's server reads the Blob (an empty one a batch
 * sooner). */
RSC_API rsc_bval *rsc_build_blob(rsc_builder *b, const char *type, size_t type_len,
                                 const void *bytes, size_t len);
/* An iterator ("$i": a generator object; items added with rsc_build_push),
 * written as an outlined array of what it yields. */
RSC_API rsc_bval *rsc_build_iterator(rsc_builder *b);
/* A ReadableStream (RSC_STREAM_TEXT: "R", RSC_STREAM_BYTES: "r") or an async
 * iterable ("X") or iterator ("x"): rsc_builder_stream_push adds items,
 * rsc_builder_stream_close or _error ends it, before or after it is written.
 * Its R/r/X/x row is written with the row that holds it; items and end follow
 * in later rows of its id, as React's server writes them (a string item as a
 * T row, a typed array as a binary row, another value as a model row; a byte
 * stream's items, binary values only, as "b" rows). */
RSC_API rsc_bval *rsc_build_stream(rsc_builder *b, rsc_stream_kind kind);

/* Appends v to an array, a set or an iterator. The client builds the Set (and a Map)
 * with JavaScript's equality: equal primitives (SameValueZero) are one
 * value there, so a host keeps them distinct. */
RSC_API rsc_status rsc_build_push(rsc_builder *b, rsc_bval *container, rsc_bval *v);
/* Sets an object member (a key set again keeps its place, takes the new
 * value; written in JavaScript's key order, array-index keys first). */
RSC_API rsc_status rsc_build_put(rsc_builder *b, rsc_bval *object, const char *key, size_t key_len,
                                 rsc_bval *v);
/* Appends an entry to a map. */
RSC_API rsc_status rsc_build_map_put(rsc_builder *b, rsc_bval *map, rsc_bval *key, rsc_bval *v);
/* Appends an entry to a FormData: v a string or a Blob (a File). */
RSC_API rsc_status rsc_build_form_append(rsc_builder *b, rsc_bval *form_data, const char *name,
                                         size_t name_len, rsc_bval *v);
/* A stream's next item; its end, with the value an async iterator returned
 * (NULL: none; streams end without one); its error, with a digest (NULL:
 * ""), an E row of its id. */
RSC_API rsc_status rsc_builder_stream_push(rsc_builder *b, rsc_bval *stream, rsc_bval *v);
RSC_API rsc_status rsc_builder_stream_close(rsc_builder *b, rsc_bval *stream, rsc_bval *ret);
RSC_API rsc_status rsc_builder_stream_error(rsc_builder *b, rsc_bval *stream, const char *digest);
/* Settles a lazy or promise with a value, or rejects it with an error whose
 * digest is given (NULL: ""), as React's onError return value. */
RSC_API rsc_status rsc_builder_resolve(rsc_builder *b, rsc_bval *pending, rsc_bval *v);
RSC_API rsc_status rsc_builder_reject(rsc_builder *b, rsc_bval *pending, const char *digest);

/* Sets the root (row 0); once per builder. */
RSC_API rsc_status rsc_builder_root(rsc_builder *b, rsc_bval *root);
/* Writes every row that can be written now (the root, values settled since
 * the last flush, and what they lead to), in React's order and flushes, to
 * write(ctx, ...) in pieces. RSC_ERR_USER when write failed, RSC_ERR_LIMIT
 * for values nested deeper than 4096 (nothing of that flush is written).
 * After a flush fails, every later flush returns the same code. */
RSC_API rsc_status rsc_builder_flush(rsc_builder *b, rsc_write_fn write, void *ctx);
/* Rows still to come: lazies and promises written but not settled, streams
 * written but not ended, and rows ready but not flushed yet. The payload is complete when it is 0
 * after a flush. */
RSC_API size_t rsc_builder_pending(const rsc_builder *b);

/* cdef:end */

#ifdef __cplusplus
}
#endif
#endif /* RSCFLIGHT_H */
