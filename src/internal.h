/* internal.h - types shared by the pipeline stages (not installed). */
#ifndef RSC_INTERNAL_H
#define RSC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h> /* snprintf: rsc__binary_elem_read */

#include "rscflight.h"
#include "arena.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values ------------------------------------------------------------ */

/* Node flags. */
enum {
  NF_DOLLAR = 1u << 0,   /* a STRING whose first byte is '$': revive must look  */
  NF_WALK = 1u << 1,     /* a container holding something revive must touch    */
  NF_HOLES = 1u << 2,    /* an OBJECT with absent (undefined) members           */
  NF_PROTO = 1u << 3,    /* an OBJECT member list holds a "__proto__" key        */
  NF_BORROWED = 1u << 4, /* a STRING in the caller's buffer: no NUL after it    */
  NF_REACH = 1u << 5     /* an ELEMENT whose subtree may lead the read-through at
                            finish to a chunk it must read (the revive walk
                            sets it as it clears NF_WALK on plain containers) */
};

/* A value: 16 bytes, stored inline in arrays and members. Containers are
 * shared by pointer, so copying a node keeps the identity of what it holds. */
struct rsc_node {
  uint8_t kind;   /* rsc_kind                                              */
  uint8_t sub;    /* RSC_BINARY: rsc_binary_kind; RSC_ELEMENT: EL_HAS_OWNER;
                   * RSC_ARRAY: ARR_NO_MARKER                                */
  uint16_t flags; /* NF_*                                                  */
  uint32_t len;   /* bytes of a string; items of an array; members         */
  union {
    double num;
    int boolean;
    const char *str;
    rsc_node *items;             /* ARRAY, MAP, SET, FORMDATA          */
    struct rsc_member *members;  /* OBJECT                             */
    struct rsc_element *el;      /* ELEMENT                            */
    struct rsc_chunk *chunk;     /* LAZY, PROMISE                      */
    struct rsc_client_ref *cref; /* CLIENT_REF                         */
    struct rsc_server_ref *sref; /* SERVER_REF                         */
    struct rsc_errval *err;      /* ERROR                              */
    struct rsc_blob *blob;       /* BLOB                               */
    struct rsc_iter *iter;       /* ITERATOR                           */
    const uint8_t *bytes;        /* BINARY                             */
    struct rsc_stream *stream;   /* STREAM                             */
  } u;
};

/* An object member: 24 bytes. Its key's length is not stored here: every
 * key is preceded by its length as a 32-bit word (native order), which is
 * how simdjson writes strings (the other key makers copy that format:
 * json_fallback.c, RSC_KEY), so rsc__member_klen reads it from there.
 * (32-byte members with the length beside the pointer were a quarter of
 * the memory of a page of props objects.) */
typedef struct rsc_member {
  const char *key;
  rsc_node val; /* RSC_UNDEFINED: absent (deleted by revive, or __proto__)  */
} rsc_member;

#ifndef __cplusplus
_Static_assert(sizeof(rsc_member) == 24, "a member is a key pointer and a node");
#endif

static inline uint32_t rsc__member_klen(const rsc_member *m) {
  uint32_t n;
  memcpy(&n, m->key - 4, 4);
  return n;
}

/* A static key in that format: RSC_KEY(k_done, "done") defines k_done,
 * whose .s is the key. */
#define RSC_KEY(name, text)                                                                        \
  static const struct {                                                                            \
    uint32_t n;                                                                                    \
    char s[sizeof(text)];                                                                          \
  } name = {sizeof(text) - 1, text}

/* React's element object. Production elements are the first three fields
 * (48 bytes, a third of a table row's memory was elements), laid out like
 * the tuple's slots 1-3: an element built while parsing is those slots, in
 * place (rsc__plain_element). Development elements also carry their owner,
 * and their ELEMENT node's sub says so (EL_HAS_OWNER). The tuple's debug
 * stack and validated flag are read by nothing here, so they are not kept. */
enum {
  EL_HAS_OWNER = 1,
  EL_LOST_SLOT = 2 /* its type or key was a reference that waited and is
                      null in it for good (rsc_scope.lost_slot): the writer
                      cannot write it from the value (encode.c) */
};

/* An element tuple of a production model row that still needs the walk is
 * parsed without its "$" slot (it would cost a node per element and is
 * always the same symbol): u.items starts at the type, while len still
 * counts the marker, so index i of the tuple is u.items[i - 1]. The walk
 * turns it into an element (or a lazy) before anything else reads it. */
enum { ARR_NO_MARKER = 1 };
typedef struct rsc_element {
  rsc_node type, key, props;
  rsc_node owner; /* only with EL_HAS_OWNER: not allocated otherwise       */
} rsc_element;

typedef struct rsc_client_ref {
  rsc_node metadata, id, chunks, name;
  rsc_node import_map; /* Parcel's 4th element; RSC_NONE when absent      */
  int is_async;
  int is_parcel; /* read as [id, name, bundles, importMap?]          */
} rsc_client_ref;

typedef struct rsc_server_ref {
  rsc_node id, bound, metadata;
} rsc_server_ref;

typedef struct rsc_errval {
  const char *message; /* NUL-terminated; may hold NULs (message_len)      */
  size_t message_len;
  rsc_node digest;  /* RSC_NONE: the error has no digest                  */
  const char *name; /* NULL: "Error"                                      */
  const char *env;  /* development errors: environment name, or NULL      */
  rsc_node cause;   /* RSC_NONE when absent                               */
} rsc_errval;

typedef struct rsc_blob {
  const char *type;
  uint32_t type_len;
  const uint8_t *bytes;
  size_t len;
} rsc_blob;

typedef struct rsc_iter {
  rsc_node array; /* live view over the outlined array ($i)                */
} rsc_iter;

/* ---- chunks ------------------------------------------------------------ */

typedef enum chunk_state {
  CS_PENDING = 0,
  CS_BLOCKED,
  CS_RESOLVED_MODEL,
  CS_FULFILLED,
  CS_REJECTED,
  CS_HALTED
} chunk_state;

struct rsc_scope;
struct rsc_listener;

/* What a reference does with the value it finds (React's "map" functions).
 * The _THEN maps are a reference under the key "then": React's
 * createModel gives null there for a function, and loadServerReference
 * null for any server reference (no thenable is ever made). */
typedef enum ref_map {
  MAP_MODEL = 0,
  MAP_MAP,
  MAP_SET,
  MAP_FORMDATA,
  MAP_BLOB,
  MAP_ERROR_DEV,
  MAP_ITERATOR,
  MAP_SERVER_REF,
  MAP_PROTO,
  MAP_MODEL_THEN,
  MAP_SERVER_REF_THEN
} ref_map;

/* One key of a reference path ("$1:props:children"), pointing into the
 * reference string (which lives in the arena). */
typedef struct rsc_key {
  const char *s;
  uint32_t n;
} rsc_key;

/* A reference's path: its keys after the id. Deduplicated objects come as
 * runs of paths that differ in their last key only ("$0:props:users:3",
 * "$0:props:users:4"), so the keys before the last are an array the paths
 * of a run share (path.c, rsc__split_path), and the last is the path's own. */
typedef struct rsc_path {
  const rsc_key *head; /* keys 0 .. n-2                                    */
  const char *last_s;  /* key n-1                                          */
  uint32_t last_n;
  uint32_t n; /* keys in all; 0: none                             */
} rsc_path;

static inline rsc_key rsc__path_key(const rsc_path *p, uint32_t i) {
  if (i + 1 < p->n) return p->head[i];
  rsc_key k = {p->last_s, p->last_n};
  return k;
}

/* React's InitializationReference: fill parent[key] once a chunk settles. */
typedef struct rsc_ref {
  struct rsc_scope *handler;
  rsc_node *slot;        /* parentObject[key]                              */
  const rsc_node *tuple; /* parentObject when it is an array: its slot 0
                          * (the marker for a tuple without one), else NULL */
  int32_t key_index;     /* array index; -1 for object keys; -2 for root "" */
  uint8_t map;           /* ref_map                                        */
  uint32_t path_pos;     /* the key the walk goes on from                  */
  rsc_path path;
} rsc_ref;

/* React's InitializationHandler: a blocking scope (a chunk or an element). */
typedef struct rsc_scope {
  struct rsc_scope *parent;
  struct rsc_chunk *chunk;
  rsc_node value;
  rsc_node reason;
  int64_t deps;
  bool errored;
  bool root_waits; /* a reference that is the row's whole value waits: value
                      is a placeholder (null), not the row's value yet      */
  bool lost_slot;  /* a reference in the element tuple's type or key slot
                      waited: React fills the tuple, never the element, so
                      the element keeps null there (EL_LOST_SLOT)          */
} rsc_scope;

/* 80 bytes: there is a chunk per row, a large share of the memory of a
 * page of many small rows, so fields a chunk needs in one state only share
 * room. */
struct rsc_chunk {
  int64_t id;          /* -1 for internal chunks                           */
  uint8_t state;       /* chunk_state                                      */
  uint8_t is_root_sub; /* subscribed (root): parse as soon as it arrives   */
  uint8_t json_failed; /* resolved_model: the row's JSON did not parse, and
                          value.u.str is the message (rsc__chunk_json_error) */
  bool notified;       /* the settle event was sent                        */
  uint32_t dump_frame; /* dump.c: 1 + the frame of its open wrapper, or 0  */
  /* state and reaches sit in different 8-byte words on purpose: the test
   * `state != FULFILLED || reaches` that follows a chunk's creation would
   * otherwise compile to one 8-byte load over the byte stores that just
   * made the chunk, which the store buffer cannot forward (a stall). */
  uint32_t force_mark; /* dump.c: the read-through that met it last        */
  uint8_t reaches;     /* its value may hold a lazy, promise, stream or a
                          value of another chunk: a read-through must look */
  bool has_row;        /* row_offset/row_id name the row its JSON came from */
  uint8_t ended;       /* chunk_end: what the end of the stream did to it   */
  union {
    rsc_node value;  /* fulfilled value; resolved_model: raw JSON        */
    rsc_node reason; /* rejected: the reason (a rejected chunk has no value) */
  };
  /* Listeners in a ring: the last one, whose next is the first (one
   * pointer for appending in order and for taking the list). */
  struct rsc_listener *tail;
  struct rsc_stream *stream; /* a stream chunk's controller                */
  rsc_decoder *owner;        /* reads that must parse go through it            */
  uint64_t row_offset;       /* so errors while it is revived (maybe lazily, at  */
  int32_t row_id;            /* finish) point at that row (ids fit: frame.c)     */
};

#ifndef __cplusplus
_Static_assert(sizeof(struct rsc_chunk) == 80, "a chunk is 80 bytes");
#endif

/* rsc_chunk.ended: set at finish only (rsc__close, and rsc__get_chunk
 * after it), read by rsc_chunk_closed and rsc_decoder_incomplete. */
enum chunk_end {
  CE_NONE = 0,
  CE_MISSING = 1,    /* no row had arrived: rejected or halted by the end   */
  CE_OPEN_STREAM = 2 /* a stream whose end row had not arrived             */
};

/* A resolved_model chunk's JSON error message, or NULL. */
static inline const char *rsc__chunk_json_error(const struct rsc_chunk *c) {
  return c->json_failed ? c->value.u.str : NULL;
}

/* Listener actions. */
typedef enum listener_kind {
  LK_REF = 0,        /* an InitializationReference                         */
  LK_NOOP,           /* a subscription that only marks interest            */
  LK_STREAM_ENQUEUE, /* ReadableStream: enqueue the value (blocked item)   */
  LK_STREAM_RESUME,  /* ReadableStream: previous item settled, go on       */
  LK_STREAM_CLOSE,   /* ReadableStream: close after the blocked item       */
  LK_STREAM_ERROR,   /* ReadableStream: error after the blocked item       */
  LK_STREAM_PUSH     /* ReadableStream: enqueue value (a text or binary
                        row) once the blocked item before it is fulfilled */
} listener_kind;

/* What every listener has: 24 bytes, all that a reference (LK_REF) and a
 * subscription (LK_NOOP) take. A page's path references each wait with
 * one (the 1 MB page has 3,379), so a stream's fields are not in it. */
typedef struct rsc_listener {
  struct rsc_listener *next;
  uint8_t kind;
  union {
    rsc_ref *ref;           /* LK_REF                                     */
    const char *json_error; /* LK_STREAM_RESUME: the row's JSON error     */
  };
} rsc_listener;

/* The LK_STREAM_* kinds: the head, then what they act on. */
typedef struct rsc_stream_listener {
  rsc_listener head;
  struct rsc_stream *stream;
  struct rsc_chunk *chunk; /* LK_STREAM_RESUME: the chunk to resolve      */
  rsc_node value;          /* LK_STREAM_RESUME: the JSON row; ERROR: error */
} rsc_stream_listener;

#ifndef __cplusplus
_Static_assert(sizeof(rsc_listener) == 24, "a reference's listener is 24 bytes");
#endif

/* A stream chunk's controller: ReadableStream (R, r) or async iterable. */
typedef struct rsc_stream {
  uint8_t kind;       /* rsc_stream_kind                              */
  bool closed;        /* close or error was called                    */
  uint8_t end;        /* rsc_stream_end as observed by a reader       */
  rsc_node end_value; /* DONE: return value; ERRORED: the error       */
  /* ReadableStream: values enqueued so far.
   * Iterables: result slots, each a chunk whose value is the item. */
  rsc_node *items;
  struct rsc_chunk **slots;
  bool *slot_done;
  uint32_t len, cap;
  uint32_t next_write;                /* iterables                                   */
  struct rsc_chunk *previous_blocked; /* ReadableStream ordering           */
  struct rsc_chunk *owner;
} rsc_stream;

/* ---- the row log (RSC_OPT_KEEP_ROWS, rowlog.c) ------------------------- */

/* A row as it arrived: its id and tag (0 for a model row), and its text
 * when the decoded values do not hold it (rowlog.c says which rows). */
typedef struct rsc_logged_row {
  int64_t id;
  uint8_t tag;
  bool no_id;      /* the row had no id (":H...", as React writes hints) */
  uint32_t pieces; /* the stream items it made: a 'b' row that arrived in
                      pieces made one each (React enqueues them as they
                      come); 1 for the others */
  const char *raw; /* arena copy, or NULL */
  size_t raw_len;
} rsc_logged_row;

/* A value a reference form made from another row: "$Q<id>" (form 'Q')
 * made the Map of that identity. */
typedef struct rsc_logged_form {
  uintptr_t identity;
  int64_t id;
  char form;
} rsc_logged_form;

/* A "__proto__" member's value, which revive deletes without walking it
 * (React's client never sees it): kept as parsed. */
typedef struct rsc_logged_proto {
  const rsc_member *member;
  rsc_node value;
} rsc_logged_proto;

/* A development element's tuple slots from the owner on (owner, debug
 * stack, validated flag), which the element keeps only the first of: the
 * tuple's own slots, so that references filled later are seen. */
typedef struct rsc_logged_tail {
  const struct rsc_element *element;
  const rsc_node *slots;
  uint32_t n;
} rsc_logged_tail;

struct rsc_rowlog {
  rsc_logged_row *rows;
  size_t len, cap;
  bool piece_open; /* the last row is a 'b' row whose next piece is to come */
  rsc_logged_form *forms;
  size_t forms_len, forms_cap;
  rsc_logged_proto *protos;
  size_t protos_len, protos_cap;
  rsc_logged_tail *tails;
  size_t tails_len, tails_cap;
  struct rsc_chunk **element_lazies; /* the chunks of the lazies revive made
                                        of elements (blocked, errored)   */
  size_t element_lazies_len, element_lazies_cap;
};

/* ---- the decoder ------------------------------------------------------- */

typedef struct rsc_frame rsc_frame; /* frame.h */

typedef struct chunk_table {
  rsc_chunk **dense; /* by id, for ids below dense_cap (chunks.c)        */
  size_t dense_cap;
  rsc_chunk **slots;  /* open addressing on id, for the other ids         */
  size_t cap, hashed; /* slots, and the chunks in them                    */
  size_t count;       /* chunks in the table                              */
  rsc_chunk **order;  /* creation order as an array (for _at)             */
  size_t order_cap;
} chunk_table;

/* Keys of a reference path prefix the path memo keeps (path.c): Next.js
 * pages dedupe props objects under paths of 12 keys and more. */
#define RSC_MEMO_DEPTH 16
/* Entries of the split cache and of the path memo: runs of paths into two
 * objects interleave (a list of client components each given the same
 * two props objects), and one entry of each missed on every change. */
#define RSC_PATH_WAYS 2

/* Reference paths (path.c): the key indexes of wide objects, the split
 * cache, the path memo and what the walk under way notes for it. */
struct rsc_paths {
  /* key indexes of wide objects that paths step into, by members array;
   * arena memory */
  struct wide_index *wide;
  uint32_t wide_cap, wide_count;
  /* the last reference paths split (the most recent in [0]): the next one
   * that repeats one up to its last ':' takes those keys from it */
  struct split_cache {
    const char *text; /* the reference after "$", as split               */
    size_t last;      /* offset of its last ':'                           */
    size_t id_len;
    const rsc_key *head; /* its keys but the last (rsc_path.head)          */
    uint32_t n;          /* keys; 0: nothing cached                          */
  } split[RSC_PATH_WAYS];
  /* the prefixes (all keys but the last) of the last reference paths
   * walked from a chunk's value, with the slots they read (path memo; the
   * most recent in [0]) */
  struct path_memo {
    rsc_node root;    /* the value the walk started from    */
    const char *text; /* the prefix's keys, as written      */
    size_t text_len;
    uint32_t depth;                       /* keys in the prefix; 0: no memo     */
    const rsc_node *slot[RSC_MEMO_DEPTH]; /* where each step read its value */
    rsc_node seen[RSC_MEMO_DEPTH];        /* and what it read there             */
    rsc_node value[RSC_MEMO_DEPTH];       /* seen, or where its one lazy led    */
    bool hopped;                          /* the prefix went through a lazy     */
  } memo[RSC_PATH_WAYS];
  /* what the walk under way notes for the memo: here, not on the C stack,
   * since walks nest as deep as chunk initialisations do; a nested walk
   * bumps gen, and the walk it interrupted then records nothing */
  struct path_notes {
    uint32_t gen;
    const rsc_node *slot[RSC_MEMO_DEPTH];
    rsc_node seen[RSC_MEMO_DEPTH], led[RSC_MEMO_DEPTH];
  } notes;
  /* tests and fuzzing: split every path whole and walk it from its root
   * (no split cache, no memo), to compare the two; kept across reset */
  bool plain_paths;
};

/* The revive walk (revive.c): its stack of open containers (an explicit
 * stack; a walk nested in another, a reference initialising a chunk,
 * stacks above it) and what the walk under way learned. */
struct rsc_walk {
  struct walk_frame *frames;
  size_t len, cap;
  bool reaches;         /* the walk under way met a wrapper or a reference */
  uint32_t lazy_serial; /* "$L" strings made so far: each is its own lazy
                           object in React, one Map or Set key each (the
                           LAZY node's len; copies of a node share it)    */
};

struct rsc_decoder {
  rsc_options opt;
  rsc_arena arena;
  rsc_arena strings; /* simdjson writes row strings straight in here;
                        text and binary rows' copies (rsc__alloc_bytes) */
  rsc_error err;
  bool dev;
  bool finished;
  bool closed;          /* React's response._closed                        */
  bool mode_locked;     /* something was decoded with the current semantics */
  uint64_t nodes;       /* values allocated (limit)                        */
  uint64_t node_budget; /* values allowed for now (rsc__node_cap)           */
  uint64_t input_end;   /* the end of the last whole row (rsc__node_cap)    */
  uint64_t hash_seed;   /* per decoder: duplicate-key tables (rsc__hash)   */
  rsc_frame *frame;
  void *json; /* json_shim parser                                */
  chunk_table table;
  rsc_scope *initializing_handler;
  rsc_chunk *initializing_chunk;
  uint32_t init_depth; /* nested chunk initialisations (C stack guard)   */
  bool has_iterables;  /* an X or x row started a stream: model rows may be
                          an iterable's items (decoder.c, iterable_stream) */
  /* The bytes being framed now (feed), or NULL: the JSON stage may look
   * ahead at the rows they hold (json_shim.cpp, batches); feeds counts
   * the feeds, so that nothing it found ahead outlives the feed. */
  const uint8_t *feed_begin, *feed_end;
  uint64_t feeds;
  uint64_t batched_rows; /* rows whose stage 1 ran in a batch (tests)     */
  uint64_t row_offset;   /* offset of the row being processed              */
  int64_t row_id;
  rsc_node marker;       /* the element marker symbol                       */
  rsc_node closed_error; /* "Connection closed." (message rsc__closed_message) */
  /* rsc_decoder_incomplete's answer (arena memory), and the table's
   * count when it was made: a read after finish may add chunks */
  struct rsc_incomplete *incomplete;
  size_t incomplete_chunks;
  /* wake queue (explicit stack) */
  struct wake_job *jobs;
  size_t jobs_len, jobs_cap;
  bool waking;
  struct rsc_walk walk;   /* revive.c */
  struct rsc_paths paths; /* path.c */
  uint32_t force_epoch;   /* read-throughs so far (settle.c, force_mark)       */
  /* RSC_OPT_TRACK_SHARED (shared.c): identities a reference placed (open
   * addressing, load at most 1/2; arena memory, so a reset empties it), behind a
   * filter of cap * 8 bits: most identities a converter asks about are
   * absent, and the filter, an eighth of the slots' size, answers those
   * (the slots missed the cache in Python's loads) */
  struct shared_set {
    uintptr_t *slot;
    uint64_t *filter; /* a bit per identity, from the hash's high half */
    size_t cap, count;
  } shared;
  struct rsc_rowlog rowlog;          /* RSC_OPT_KEEP_ROWS (rowlog.c); arena memory */
  struct rsc_enc_cache *enc_cache;   /* rsc_encode's tables (encode.c), libc memory
                                        kept for the next encode; a reset keeps it */
  struct rsc_enc_stream *enc_stream; /* rsc_encode_ready's state (encode.c), libc
                                        memory; a reset frees it */
};

/* Frees rsc_encode's tables (NULL: nothing). */
void rsc__encode_cache_free(struct rsc_enc_cache *c);
/* Frees rsc_encode_ready's state (NULL: nothing). */
void rsc__encode_stream_free(struct rsc_enc_stream *s);

/* ---- shared helpers ---------------------------------------------------- */

/* Sets the sticky error once; returns the code. */
rsc_status rsc__fail(rsc_decoder *d, rsc_status code, uint64_t offset, int64_t row,
                     const char *msg);

/* Arena allocation; failure records RSC_ERR_NOMEM. Inline: the revive and
 * JSON stages allocate per value. */
void *rsc__alloc_fail(rsc_decoder *d);
rsc_node *rsc__alloc_nodes_slow(rsc_decoder *d, size_t n);

/* The values a decode may allocate by now: max_nodes when the caller set
 * it; by default (0) 2^20 plus 64 per byte of input up to the end of the
 * last whole row, at most 2^25 (16 bytes a value). A few hundred bytes of
 * references that copy what they name (a Blob of Blobs of one row doubles
 * with each "$B") then stop at 16 MiB, not 512 MiB, while real pages (one
 * value per 8 bytes) keep a 500-fold margin. Rows arrive in order, so the
 * bound at any step does not depend on how the input was split into feeds. */
uint64_t rsc__node_cap(const rsc_decoder *d);

static inline void *rsc__alloc(rsc_decoder *d, size_t size) {
  void *p = rsc__arena_alloc(&d->arena, size);
  return p ? p : rsc__alloc_fail(d);
}

/* The bytes of a text or binary row's copy: beside the strings simdjson
 * writes, not between the nodes and chunks, which stay dense (a chunk read
 * after kilobytes of text would be a cache and TLB miss each). A copy that
 * does not fit the rest of a block opens the next one: with a block of
 * its own behind the head instead (the node arena's `aside`), every text
 * row became a malloc, since nothing small fills the head here. */
static inline void *rsc__alloc_bytes(rsc_decoder *d, size_t size) {
  void *p = rsc__arena_alloc(&d->strings, size);
  return p ? p : rsc__alloc_fail(d);
}

/* Nodes, counted against the node limit. */
static inline rsc_node *rsc__alloc_nodes(rsc_decoder *d, size_t n) {
  d->nodes += n;
  if (d->nodes > d->node_budget || n > ((size_t)1 << 40)) return rsc__alloc_nodes_slow(d, n);
  return (rsc_node *)rsc__alloc(d, n * sizeof(rsc_node));
}

/* Bytes per element of a binary kind (rsc_binary_kind; 1 for ArrayBuffer
 * and DataView). */
static inline size_t rsc__binary_elem_size(unsigned kind) {
  static const uint8_t size[] = {1, 1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 1};
  return kind < sizeof size ? size[kind] : 1;
}

/* Element i of a typed array (kind below RSC_DATA_VIEW, not an
 * ArrayBuffer) as JavaScript reads it: a number in *num, or, for
 * BigInt64Array and BigUint64Array, the BigInt's decimal digits in big
 * (returns their length; 0 for a number). */
static inline int rsc__binary_elem_read(unsigned kind, const uint8_t *bytes, size_t i, double *num,
                                        char big[24]) {
  const uint8_t *e = bytes + i * rsc__binary_elem_size(kind);
  switch (kind) {
  case RSC_INT8: *num = (int8_t)e[0]; return 0;
  case RSC_UINT8:
  case RSC_UINT8_CLAMPED: *num = e[0]; return 0;
  case RSC_INT16: {
    int16_t x;
    memcpy(&x, e, 2);
    *num = x;
    return 0;
  }
  case RSC_UINT16: {
    uint16_t x;
    memcpy(&x, e, 2);
    *num = x;
    return 0;
  }
  case RSC_INT32: {
    int32_t x;
    memcpy(&x, e, 4);
    *num = x;
    return 0;
  }
  case RSC_UINT32: {
    uint32_t x;
    memcpy(&x, e, 4);
    *num = x;
    return 0;
  }
  case RSC_FLOAT32: {
    float x;
    memcpy(&x, e, 4);
    *num = x;
    return 0;
  }
  case RSC_FLOAT64: memcpy(num, e, 8); return 0;
  case RSC_BIGINT64: {
    int64_t x;
    memcpy(&x, e, 8);
    return snprintf(big, 24, "%lld", (long long)x);
  }
  default: {
    uint64_t x;
    memcpy(&x, e, 8);
    return snprintf(big, 24, "%llu", (unsigned long long)x);
  }
  }
}

/* A NUL-terminated arena copy. */
static inline char *rsc__strdup(rsc_decoder *d, const char *s, size_t len) {
  char *p = (char *)rsc__alloc(d, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = 0;
  return p;
}

/* The last step of every hash over input data (murmur3's fmix64): the low
 * bits that pick a bucket then depend on every input bit. Small integers
 * as doubles and 16-aligned pointers have all-zero low bits, and a Map of
 * n integer keys used to take n^2 steps. Hashes start from the decoder's
 * seed, so colliding keys cannot be computed ahead (docs/hardening.md). */
static inline uint64_t rsc__hash_final(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* An object key's hash, from the decoder's seed (FNV-1a, finalised): the
 * duplicate-key table of parsing and the key index of wide objects. */
static inline uint64_t rsc__key_hash(uint64_t seed, const char *s, uint32_t n) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (uint32_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return rsc__hash_final(h);
}

/* Whether n bytes at a and b are the same: keys and path steps are short,
 * so two overlapping words compare them without a call to memcmp. */
static inline bool rsc__same_bytes(const char *a, const char *b, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t a0, b0, a1, b1;
    memcpy(&a0, a, 8), memcpy(&b0, b, 8);
    memcpy(&a1, a + n - 8, 8), memcpy(&b1, b + n - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n >= 4 && n < 8) {
    uint32_t a0, b0, a1, b1;
    memcpy(&a0, a, 4), memcpy(&b0, b, 4);
    memcpy(&a1, a + n - 4, 4), memcpy(&b1, b + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n < 4) {
    for (size_t i = 0; i < n; i++)
      if (a[i] != b[i]) return false;
    return true;
  }
  return memcmp(a, b, n) == 0;
}

/* Copies a node that a callee has just written through a pointer (two
 * 8-byte stores, still in the store buffer) as two 8-byte words: a plain
 * struct copy reads it with one 16-byte load, which the store buffer
 * cannot forward from two stores, a stall of a dozen cycles or more. The
 * empty asm keeps the compiler from fusing the halves again. */
static inline void rsc__copy_fresh_node(rsc_node *dst, const rsc_node *src) {
  uint64_t w[2];
  memcpy(&w[0], src, 8);
  memcpy(&w[1], (const char *)src + 8, 8);
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__("" : "+r"(w[0]), "+r"(w[1]));
#endif
  memcpy(dst, &w[0], 8);
  memcpy((char *)dst + 8, &w[1], 8);
}
#ifndef __cplusplus
_Static_assert(sizeof(rsc_node) == 16, "rsc__copy_fresh_node copies two words");
#endif

static inline rsc_node rsc__mk(uint8_t kind) {
  rsc_node n = {kind, 0, 0, 0, {0}};
  return n;
}
static inline rsc_node rsc__num(double v) {
  rsc_node n = rsc__mk(RSC_NUMBER);
  n.u.num = v;
  return n;
}
static inline rsc_node rsc__str(uint8_t kind, const char *s, size_t len) {
  rsc_node n = rsc__mk(kind);
  n.u.str = s;
  n.len = (uint32_t)len;
  return n;
}

/* An ERROR node with a static or arena message. */
rsc_node rsc__error_node(rsc_decoder *d, const char *msg, const char *digest);
/* A TypeError with that message: what JavaScript's own checks throw. */
rsc_node rsc__type_error(rsc_decoder *d, const char *msg);

/* The generic production error message (docs/spec/FLIGHT-PROTOCOL.md 3.4). */
extern const char rsc__generic_error[];
extern const char rsc__dev_default_error[];

/* The end of the stream's error message, one copy: only the error
 * rsc__close rejects with points at it (rsc_error_closed compares the
 * pointer; a server's error with the same text is another string). */
extern const char rsc__closed_message[];

#define RSC_ELEMENT_SYMBOL "react.transitional.element"
/* The marker's text, one copy: the "$" marker points at it, so the common
 * case is a pointer compare ("$Sreact.transitional.element" is the same
 * symbol, Symbol.for, and takes the memcmp). */
extern const char rsc__element_symbol[];
static inline bool rsc__is_marker(const rsc_node *n) {
  if (n->kind != RSC_SYMBOL) return false;
  if (n->u.str == rsc__element_symbol) return true;
  return n->len == sizeof(RSC_ELEMENT_SYMBOL) - 1 &&
         memcmp(n->u.str, RSC_ELEMENT_SYMBOL, n->len) == 0;
}

/* Whether a value has identity in JavaScript (an object: met twice, it is
 * the same value), for walks that remember what they met. */
static inline bool rsc__has_identity(const rsc_node *n) {
  switch (n->kind) {
  case RSC_OBJECT:
  case RSC_ARRAY:
  case RSC_ELEMENT:
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA:
  case RSC_BLOB:
  case RSC_BINARY:
  case RSC_ITERATOR:
  case RSC_STREAM: return true;
  default: return false;
  }
}

#ifdef __cplusplus
}
#endif
#endif
