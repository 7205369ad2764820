// json_shim.cpp - the only C++ file: simdjson's DOM -> rsc nodes, plus
// double-conversion for JavaScript number text. It marks strings that start
// with "$" for the revive walk; in production model rows it also asks the
// revive stage, through the hooks the decoder gave it (json.h), to build
// element tuples that hold no reference and to place "$<id>" values that
// have already arrived, so that the walk never enters them. Those hooks are
// its only calls against the flow; it also peeks at the framer's next rows
// (batches, below).
//
// One dom::parser per decoder keeps its buffers hot. The DOM's tape is
// borrowed (the next row overwrites it) and converted in one walk; the
// strings are not copied: simdjson writes them into a region of the
// decoder's string arena (string_region below). No exception crosses into C.
#include <simdjson.h>
#include <double-conversion/double-conversion.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "frame.h"
#include "json.h"
#include "utf8.h"

using namespace simdjson;

// An open array or object of the tape walk below: its node, and its
// parent's state, saved while it is open (the state of the container being
// filled lives in the walk's locals).
struct open_container {
  rsc_node *node;      // the container's node (flags set when it closes)
  rsc_member *next;    // the parent's next member, if an object
  const uint64_t *end; // the parent's end word on the tape
  uint32_t walk;       // the parent's NF_DOLLAR | NF_WALK and W_* bits
  uint64_t key_bits;   // the parent's tiny Bloom filter of the keys seen
};

// Rows that stage 1 indexed in one pass (rsc__json_parse, "batches").
// simdjson's stage 1 has a fixed cost per call (a padded copy of the last
// block, the SIMD set-up) that dominates small rows, so one stage-1 pass
// runs over a run of the rows a feed holds, then stage 2 (stage2_next)
// row by row as each row comes (docs/performance.md). Each row
// is copied into buf followed by "\n#\n": a '#' is wrong in every place a
// JSON value can be, so a row's document can never run on into the next
// row's bytes (its tape and strings stay within what the row alone would
// write), and an unclosed string puts the '\n' inside it, which stage 1
// refuses. Each row's document must start at the row's first byte and end
// at its '#'; anything else, or any error, abandons the batch and the row
// is parsed alone, as every row used to be.
struct batch_row {
  const uint8_t *src; // where the framer will hand the row out
  uint32_t off, len;  // its copy in buf
};
struct row_batch {
  static const size_t BYTES = 8 * 1024; // rows' bytes in one batch
  static const size_t ROW_MAX = 256;    // longer rows are parsed alone
  static const uint32_t ROWS = RSC_FRAME_PEEKS;
  // Fewer are parsed alone. Two gained nothing (a payload of an import
  // row and its root row, 0.95x); three are what a 4 KB feed of
  // text-heavy pages holds between its text rows (1.07x there, 22nd
  // round; four left them all alone).
  static const uint32_t MIN_ROWS = 3;
  static const uint32_t PASS_MAX = 4; // text or binary rows between two
  uint8_t *buf = nullptr;
  size_t cap = 0;
  batch_row *rows = nullptr;
  uint32_t rows_cap = 0;         // grown as runs need it, up to ROWS
  uint32_t count = 0, next = 0;  // rows in it; the next to parse
  const uint8_t *cool = nullptr; // no batch starts before this byte
  uint64_t feed = 0;             // the decoder's feed they are in (feeds)
};

struct rsc_json {
  rsc_decoder *d;
  rsc_json_hooks hooks;
  dom::parser parser;
  open_container *stack; // the tape walk's stack, kept across rows
  size_t stack_cap;
  uint8_t *pad_buf; // a padded copy for rows that end too close to a buffer end
  size_t pad_cap;
  uint32_t max_depth;
  row_batch batch;
};

extern "C" rsc_json *rsc__json_new(rsc_decoder *d, const rsc_json_hooks *hooks) {
  try {
    rsc_json *j = new rsc_json();
    j->d = d;
    j->hooks = *hooks;
    j->pad_buf = nullptr;
    j->pad_cap = 0;
    j->stack = nullptr;
    j->stack_cap = 0;
    j->max_depth = d->opt.limits.max_depth;
    // simdjson's own depth check runs before our walk, so the walk below
    // recurses at most max_depth deep.
    if (j->parser.allocate(SIMDJSON_PADDING, j->max_depth + 1)) {
      delete j;
      return nullptr;
    }
    return j;
  } catch (...) {
    return nullptr;
  }
}

extern "C" size_t rsc__json_capacity(const rsc_json *j) {
  size_t cap = j->parser.capacity();
  return j->pad_cap > cap ? j->pad_cap : cap;
}

extern "C" void rsc__json_free(rsc_json *j) {
  if (!j) return;
  // The growable buffers go through the caller's allocator hooks, like
  // every other buffer; simdjson's own parser buffers cannot (see
  // docs/hardening.md, "Allocation failure").
  rsc__heap_free(&j->d->arena.alloc, j->pad_buf);
  rsc__heap_free(&j->d->arena.alloc, j->stack);
  rsc__heap_free(&j->d->arena.alloc, j->batch.buf);
  rsc__heap_free(&j->d->arena.alloc, j->batch.rows);
  delete j;
}

namespace {

// The DOM's tape (simdjson doc/tape.md), walked in one loop with an explicit
// stack: one 64-bit word per value (two for numbers), type in the top byte.
// Faster than the element/iterator API and never recursive, whatever the
// nesting depth.
enum : uint8_t {
  T_ROOT = 'r',
  T_ARRAY = '[',
  T_OBJECT = '{',
  T_END_ARRAY = ']',
  T_END_OBJECT = '}',
  T_STRING = '"',
  T_INT64 = 'l',
  T_UINT64 = 'u',
  T_DOUBLE = 'd',
  T_TRUE = 't',
  T_FALSE = 'f',
  T_NULL = 'n'
};

struct tape_converter {
  rsc_decoder *d;
  const rsc_json_hooks *hooks;
  const uint64_t *tape;
  const uint8_t *strings;
  open_container *stack;
  size_t cap;

  static uint8_t type(uint64_t w) { return uint8_t(w >> 56); }
  static uint64_t payload(uint64_t w) { return w & 0x00FFFFFFFFFFFFFFull; }

  // Elements of the container whose start word is at p (counts saturate
  // at 2^24 - 1 on the tape: count by walking then).
  uint32_t count_at(const uint64_t *p) const {
    uint64_t w = *p;
    uint32_t n = uint32_t((w >> 32) & 0xFFFFFF);
    if (n < 0xFFFFFF) return n;
    size_t end = size_t(uint32_t(w)) - 1, k = size_t(p - tape) + 1;
    n = 0;
    bool object = type(w) == T_OBJECT;
    while (k < end) {
      if (object) k++; // the key
      uint8_t t = type(tape[k]);
      if (t == T_ARRAY || t == T_OBJECT) k = size_t(uint32_t(tape[k]));
      else if (t == T_INT64 || t == T_UINT64 || t == T_DOUBLE) k += 2;
      else k++;
      n++;
    }
    return n;
  }

  // Doubles the stack (kept across rows in rsc_json); NULL: out of memory.
  open_container *grow() {
    size_t ncap = cap ? cap * 2 : 64;
    auto *ns = static_cast<open_container *>(rsc__heap_realloc(
        &d->arena.alloc, stack, cap * sizeof(open_container), ncap * sizeof(open_container)));
    if (!ns) return nullptr;
    stack = ns;
    cap = ncap;
    return ns;
  }

  // "$" then a lowercase hex digit: perhaps "$<id>" (the arrived_value hook).
  static bool maybe_ref_id(char c) { return uint8_t(c - '0') < 10 || uint8_t(c - 'a') < 6; }

  static bool index_key(const char *k, uint32_t n) { return n > 0 && k[0] >= '0' && k[0] <= '9'; }

  // A string where simdjson wrote it (sp: its 32-bit length, then the text
  // and a NUL): the text, its length in *n.
  static const char *text_at(const uint8_t *sp, uint32_t *n) {
    std::memcpy(n, sp, 4);
    return reinterpret_cast<const char *>(sp + 4);
  }

  // Strings stay where simdjson wrote them: the buffer is the decoder's.
  // simdjson writes them in tape order, so the last one met (its 32-bit
  // length, then the text and a NUL) ends the region in use.
  const uint8_t *last_sp = nullptr;
  size_t strings_end() const {
    if (!last_sp) return 0;
    uint32_t n;
    const char *s = text_at(last_sp, &n);
    return size_t(reinterpret_cast<const uint8_t *>(s) - strings) + n + 1;
  }

  // The walk's own bits next to the NF_DOLLAR | NF_WALK of `walk`.
  static constexpr uint32_t W_OBJECT = 1u << 16;    // the container is an object
  static constexpr uint32_t W_MULTI = 1u << 17;     // an object of more than one member
  static constexpr uint32_t W_NORMALIZE = 1u << 18; // an index key or a possible duplicate
  static constexpr uint32_t W_MARKER = 1u << 19;    // an array opening with the "$" string

  // Production model rows: a tuple ["$", ...] with nothing else to revive
  // becomes its element as its array closes (the plain_element hook), so the
  // revive walk never enters element trees that hold no reference.
  bool elements = false;

  // Converts the document into *out in one loop. The state of the
  // container being filled lives in locals, so a value touches no stack
  // memory: it is saved when a child opens and restored when the child
  // ends. The root is a container too (no stack entry), whose end is the
  // final root word. Not inlined: inside its caller the locals no longer
  // fit in registers. false: out of memory or a limit.
  __attribute__((noinline)) bool run(rsc_node *out) {
    const uint8_t *sb = strings;
    const uint8_t *last = nullptr; // the last string met (its length word)
    open_container *top = stack;   // one past the container being filled
    // tape[0] is the root word: the final root word's index + 1.
    const uint64_t *p = tape + 1;
    const uint64_t *end = tape + uint32_t(tape[0]) - 1;
    rsc_node *dst = out;        // the slot of the value at p
    rsc_member *next = nullptr; // objects: the next member
    uint32_t walk = 0;
    uint64_t key_bits = 0;
    for (;;) {
      uint64_t w = *p;
      uint8_t t = type(w);
      switch (t) {
      case T_STRING: {
        const uint8_t *sp = sb + payload(w);
        uint32_t n;
        const char *s = text_at(sp, &n);
        last = sp;
        *dst = rsc__str(RSC_STRING, s, n);
        if (s[0] == '$' && // "" holds the NUL
            !(n - 2u < 12u && elements && maybe_ref_id(s[1]) &&
              hooks->arrived_value(d, s, n, dst))) {
          dst->flags = NF_DOLLAR;
          walk |= NF_DOLLAR;
        }
        p++;
        break;
      }
      case T_ARRAY:
      case T_OBJECT: {
        uint32_t n = count_at(p);
        if (top == stack + cap) {
          size_t k = cap;
          if (!grow()) goto fail;
          top = stack + k;
        }
        rsc_node *node = dst;
        *top++ = open_container{node, next, end, walk, key_bits};
        end = tape + uint32_t(w) - 1;
        key_bits = 0;
        if (t == T_ARRAY) {
          // An element tuple's marker: kept out of the array's flags, so
          // that whether anything else in it needs the walk is known when
          // it closes. A model row's tuple gets no slot for it at all
          // (ARR_NO_MARKER): the element has none, and the walk knows.
          const uint8_t *marker = nullptr; // its length word
          const char *marker_text = nullptr;
          if (type(p[1]) == T_STRING) {
            const uint8_t *sp = sb + payload(p[1]);
            uint32_t sl;
            const char *s = text_at(sp, &sl);
            if (sl == 1 && s[0] == '$') {
              marker = sp;
              marker_text = s;
            }
          }
          uint32_t slots = n - (marker && elements);
          rsc_node *items = rsc__alloc_nodes(d, slots ? slots : 1);
          if (!items) goto fail;
          *node = rsc__mk(RSC_ARRAY);
          node->len = n;
          node->u.items = items;
          dst = items;
          walk = 0;
          if (marker) {
            last = marker;
            if (elements) {
              node->sub = ARR_NO_MARKER;
            } else {
              *dst = rsc__str(RSC_STRING, marker_text, 1);
              dst->flags = NF_DOLLAR;
              dst++;
            }
            walk = W_MARKER;
            p++;
          }
        } else {
          next = static_cast<rsc_member *>(rsc__alloc(d, sizeof(rsc_member) * (n ? n : 1)));
          if (!next) goto fail;
          *node = rsc__mk(RSC_OBJECT);
          node->len = n;
          node->u.members = next;
          // One member (most props objects) has no order to fix and no
          // duplicate to find.
          walk = n > 1 ? W_OBJECT | W_MULTI : W_OBJECT;
        }
        p++;
        goto slot; // dst is the first item already
      }
      case T_INT64: {
        int64_t v;
        std::memcpy(&v, p + 1, 8);
        *dst = rsc__num(double(v));
        p += 2;
        break;
      }
      case T_UINT64: {
        uint64_t v;
        std::memcpy(&v, p + 1, 8);
        *dst = rsc__num(double(v));
        p += 2;
        break;
      }
      case T_DOUBLE: {
        double v;
        std::memcpy(&v, p + 1, 8);
        *dst = rsc__num(v);
        p += 2;
        break;
      }
      case T_TRUE:
      case T_FALSE:
        *dst = rsc__mk(RSC_BOOL);
        dst->u.boolean = t == T_TRUE;
        p++;
        break;
      default:
        *dst = rsc__mk(RSC_NULL);
        p++;
        break;
      }
      // The next slot: an array's next item (in an object, the member's
      // value, set below), after closing what ended.
      dst++;
    slot:
      while (p == end) {
        if (top == stack) { // the root's end
          last_sp = last;
          return true;
        }
        rsc_node *node = top[-1].node;
        uint32_t needs = walk & (NF_DOLLAR | NF_WALK | W_MARKER);
        if (needs == W_MARKER && elements) {
          if (!hooks->plain_element(d, node->u.items, node->len - 1, node)) goto fail;
        } else {
          node->flags |= needs ? NF_WALK : 0;
        }
        if (walk & W_NORMALIZE) rsc__object_normalize(d, node);
        uint32_t up = node->flags & (NF_DOLLAR | NF_WALK);
        dst = node + 1; // the node is its parent's slot
        const open_container &c = *--top;
        next = c.next;
        end = c.end;
        walk = c.walk | up;
        key_bits = c.key_bits;
        p++;
      }
      if (walk & W_OBJECT) {
        // An object member: the key, then its value.
        rsc_member *m = next++;
        const uint8_t *sp = sb + payload(*p);
        uint32_t kl;
        const char *k = text_at(sp, &kl);
        last = sp;
        m->key = k; // simdjson's length word precedes it (rsc__member_klen)
        if (kl == 9 && std::memcmp(k, "__proto__", 9) == 0) {
          top[-1].node->flags |= NF_PROTO;
          walk |= NF_WALK;
        }
        if (walk & W_MULTI) {
          uint64_t bit =
              kl ? uint64_t(1) << ((kl * 7u + uint8_t(k[0]) + uint8_t(k[kl - 1])) & 63) : 1;
          if ((key_bits & bit) || index_key(k, kl)) walk |= W_NORMALIZE;
          key_bits |= bit;
        }
        dst = &m->val;
        p++;
      }
    }
  fail:
    last_sp = last;
    return false;
  }
};

} // namespace

static const uint8_t *ensure_padded(rsc_json *j, const uint8_t *data, size_t len, bool padded) {
  if (padded) return data;
  size_t need = len + SIMDJSON_PADDING;
  if (need > j->pad_cap) {
    size_t cap = j->pad_cap ? j->pad_cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *nb =
        static_cast<uint8_t *>(rsc__heap_realloc(&j->d->arena.alloc, j->pad_buf, j->pad_cap, cap));
    if (!nb) return nullptr;
    j->pad_buf = nb;
    j->pad_cap = cap;
  }
  std::memcpy(j->pad_buf, data, len);
  std::memset(j->pad_buf + len, 0, SIMDJSON_PADDING);
  return j->pad_buf;
}

static_assert(SIMDJSON_PADDING <= RSC_FRAME_PADDING, "framer padding too small");
static_assert(RSC_FRAME_PADDING <= RSC_PADDING, "rsc_decoder_feed_padded promises too little");

// The '"' bytes of data[0..len): 16 at a time in byte lanes (GCC's vector
// extension: SSE2 or NEON), folded into the total before a lane can wrap.
static size_t count_quotes(const uint8_t *data, size_t len) {
  typedef uint8_t v16 __attribute__((vector_size(16)));
  const v16 quote = {'"', '"', '"', '"', '"', '"', '"', '"',
                     '"', '"', '"', '"', '"', '"', '"', '"'};
  size_t total = 0, blocks = len / 16;
  for (size_t b = 0; b < blocks;) {
    size_t m = blocks - b < 255 ? blocks - b : 255;
    const uint8_t *p = data + 16 * b;
    v16 acc = {0};
    for (size_t k = 0; k < m; k++) {
      v16 block;
      std::memcpy(&block, p + 16 * k, 16);
      acc -= (v16)(block == quote); // a true lane is all ones: -1
    }
    for (int k = 0; k < 16; k++) total += acc[k];
    b += m;
  }
  for (size_t i = 16 * blocks; i < len; i++) total += data[i] == '"';
  return total;
}

// simdjson writes unescaped strings into the document's string buffer. For
// the length of one parse that buffer is a region of the decoder's string
// arena, so the strings need no copy afterwards; the region is then cut to
// what the row used. Its size is simdjson's own bound (5/3 of the row), or
// for a big row a bound from its quotes.
struct string_region {
  // Rows from this size on get a region fitted to their strings (below).
  static const size_t BIG_ROW = 64 * 1024;
  rsc_json *j;
  uint8_t *theirs = nullptr;
  uint8_t *region = nullptr;

  bool install(const uint8_t *data, size_t len) {
    dom::parser &p = j->parser;
    size_t want = len < 32 ? 32 : len;
    // What parse()'s ensure_capacity would do, done before the swap so it
    // never frees the region.
    if (p.doc.capacity() < want && p.doc.allocate(want)) return false;
    if (p.capacity() < want && p.allocate(want, p.max_depth())) return false;
    size_t cap = ((5 * len / 3 + SIMDJSON_PADDING) + 63) & ~size_t(63);
    rsc_arena *strings = &j->d->strings;
    if (len >= BIG_ROW || cap > rsc__arena_room(strings)) {
      // Each string takes its text (no longer than in the row) plus a
      // 4-byte length and a NUL for its two quotes: len + 3 per string
      // bounds what simdjson writes. Counting the quotes is a fast pass;
      // on the 1 MB page it cuts the region from 5/3 of the row to 1.2.
      // A row whose 5/3 bound does not fit in what is left of the block
      // counts them too: the tighter bound may fit, and otherwise the
      // rest of the block, left unused, is smaller.
      size_t quotes = count_quotes(data, len);
      size_t tight = ((len + 3 * (quotes / 2 + 1) + SIMDJSON_PADDING) + 63) & ~size_t(63);
      if (tight < cap) cap = tight;
    }
    // A region that does not fit the rest of the block while that rest is
    // worth keeping (1 KiB or more) gets a block of its own, at the tight
    // bound; the small rows that follow go on filling the rest. Text and
    // binary copies never do this (rsc__alloc_bytes): nothing small would
    // fill the head behind them.
    region = static_cast<uint8_t *>(rsc__arena_alloc_aside(strings, cap));
    if (!region) return false;
    theirs = p.doc.string_buf.release();
    p.doc.string_buf.reset(region);
    return true;
  }
  // Hands simdjson its own buffer back; keeps `used` bytes of the region.
  void finish(size_t used) {
    if (!region) return;
    j->parser.doc.string_buf.release();
    j->parser.doc.string_buf.reset(theirs);
    rsc__arena_shrink_last(&j->d->strings, region, used);
    region = nullptr;
  }
  ~string_region() { finish(0); }
};

// Ends the batch; no other starts before the end of its last row (else a
// row that stage 1 refuses would be indexed again by every row before it).
static void batch_abandon(rsc_json *j) {
  row_batch &b = j->batch;
  if (b.count) b.cool = b.rows[b.count - 1].src + b.rows[b.count - 1].len;
  b.count = b.next = 0;
}

// A failed allocation fails the decode, as everywhere (RSC_ERR_NOMEM):
// rsc__json_parse sees the error and returns JSON_NOMEM.
static bool batch_nomem(rsc_json *j) {
  rsc__alloc_fail(j->d);
  return false;
}

// Room for row n of a run in `rows`: the first MIN_ROWS are on the stack
// (`first`: nothing is allocated for a run too short to batch), the rest
// in the batch's list, which starts at 16 rows and doubles up to ROWS (a
// list of ROWS at once was 4 KB, a fifth of a small page's peak), with the
// first rows copied in when it is first used. `move`: into the list even
// when the stack has room. NULL: out of memory.
static batch_row *batch_room(rsc_json *j, batch_row *rows, const batch_row *first, uint32_t n,
                             bool move) {
  row_batch &b = j->batch;
  if (rows == first ? n < row_batch::MIN_ROWS && !move : n < b.rows_cap) return rows;
  if (n >= b.rows_cap) {
    uint32_t cap = b.rows_cap ? b.rows_cap * 2 : 16;
    if (cap > row_batch::ROWS) cap = row_batch::ROWS;
    auto *nr = static_cast<batch_row *>(rsc__heap_realloc(
        &j->d->arena.alloc, b.rows, b.rows_cap * sizeof(batch_row), cap * sizeof(batch_row)));
    if (!nr) return nullptr;
    b.rows = nr;
    b.rows_cap = cap;
  }
  if (rows == first) std::memcpy(b.rows, first, n * sizeof *first);
  return b.rows;
}

// A batch from the row data[0..len) and the plain model rows that follow it
// in the bytes being framed (text and binary rows between them are passed
// over), when there are MIN_ROWS or more. Returns whether it made one.
// (Called when the bytes being fed hold the row and room for MIN_ROWS
// rows of its size, batch_may_take: a small payload's last rows, which
// could not make a run, are not looked at.)
__attribute__((noinline)) static bool batch_start(rsc_json *j, const uint8_t *data, size_t len) {
  row_batch &b = j->batch;
  rsc_decoder *d = j->d;
  const uint8_t *end = d->feed_end;
  if (b.feed != d->feeds) b.cool = nullptr, b.feed = d->feeds;
  if (data < b.cool || (data[0] != '[' && data[0] != '{') || data[len] != '\n') return false;
  // The rows, found ahead (the first few here: nothing is allocated for a
  // run too short to batch).
  batch_row first[row_batch::MIN_ROWS];
  batch_row *rows = first;
  size_t total = len + 3; // their bytes, each with its "\n#\n"
  uint32_t n = 0;
  rows[n++] = batch_row{data, 0, uint32_t(len)};
  const uint8_t *p = data + len + 1;
  uint32_t passed = 0; // text and binary rows passed over since the last row
  while (n < row_batch::ROWS && passed <= row_batch::PASS_MAX) {
    rsc_peek r;
    const uint8_t *after = rsc__frame_peek(p, end, row_batch::ROW_MAX, &r);
    if (!after) break;
    if (r.tag == 0) {
      if (r.len == 0 || r.len > row_batch::ROW_MAX || (r.data[0] != '[' && r.data[0] != '{') ||
          total + r.len + 3 > row_batch::BYTES)
        break;
      if (!(rows = batch_room(j, rows, first, n, false))) return batch_nomem(j);
      rows[n++] = batch_row{r.data, uint32_t(total), uint32_t(r.len)};
      total += r.len + 3;
      passed = 0;
    } else if (r.data + r.len == after) {
      passed++;
      // a text or binary row: no JSON; a newline row with a tag has some
      // (it would be parsed between the batch's rows), so it ends the run
    } else {
      break;
    }
    p = after;
  }
  if (n < row_batch::MIN_ROWS) {
    b.cool = p;
    return false;
  }
  if (rows == first && !batch_room(j, rows, first, n, true)) return batch_nomem(j);
  if (b.cap < total + SIMDJSON_PADDING) {
    // grown as runs need it, up to the most a batch holds
    size_t cap = b.cap * 2;
    if (cap < total + SIMDJSON_PADDING) cap = total + SIMDJSON_PADDING;
    if (cap > row_batch::BYTES + SIMDJSON_PADDING) cap = row_batch::BYTES + SIMDJSON_PADDING;
    uint8_t *nb = static_cast<uint8_t *>(rsc__heap_realloc(&d->arena.alloc, b.buf, b.cap, cap));
    if (!nb) return batch_nomem(j);
    b.buf = nb;
    b.cap = cap;
  }
  // The framer finds each row's end where the scan above did.
  for (uint32_t i = 1; i < n; i++)
    if (!rsc__frame_remember_row(d->frame, b.rows[i].src, b.rows[i].len)) return batch_nomem(j);
  for (uint32_t i = 0; i < n; i++) {
    uint8_t *q = b.buf + b.rows[i].off;
    std::memcpy(q, b.rows[i].src, b.rows[i].len);
    std::memcpy(q + b.rows[i].len, "\n#\n", 3);
  }
  std::memset(b.buf + total, 0, SIMDJSON_PADDING);
  b.count = n;
  b.next = 0;
  dom::parser &ps = j->parser;
  if ((ps.capacity() < total && ps.allocate(total, ps.max_depth())) ||
      ps.implementation->stage1(b.buf, total, stage1_mode::regular)) {
    batch_abandon(j);
    return false;
  }
  return true;
}

// Whether data[0..len) may be in a batch: the batch under way (made in
// this feed), or a row the bytes being fed hold whole with room for more
// small rows after it (batch_start looks further). Inline: every row asks.
static inline bool batch_may_take(const rsc_json *j, const uint8_t *data, size_t len) {
  const row_batch &b = j->batch;
  const rsc_decoder *d = j->d;
  if (b.next < b.count && b.feed == d->feeds) return true;
  return d->feed_end && data >= d->feed_begin && data < d->feed_end &&
         len - 1 < row_batch::ROW_MAX &&
         size_t(d->feed_end - data) >= row_batch::MIN_ROWS * (len + 4);
}

// Whether data[0..len) is the batch's next row, its document where it
// should start (stage2_next goes on from there); a batch is started when
// there is none. A row that is not the next ends the batch.
static bool batch_take(rsc_json *j, const uint8_t *data, size_t len) {
  row_batch &b = j->batch;
  const rsc_decoder *d = j->d;
  if (b.next >= b.count || b.feed != d->feeds) {
    b.count = b.next = 0; // none, or made in an earlier feed
    if (!batch_start(j, data, len)) return false;
  }
  const batch_row &r = b.rows[b.next];
  auto &impl = *j->parser.implementation;
  uint32_t i = impl.next_structural_index;
  if (r.src != data || r.len != len || i >= impl.n_structural_indexes ||
      impl.structural_indexes[i] != r.off) {
    batch_abandon(j);
    return false;
  }
  return true;
}

// Stage 2 of the batch's next row; false (the batch abandoned) when the
// row's document is not exactly the row.
static bool batch_stage2(rsc_json *j) {
  row_batch &b = j->batch;
  const batch_row &r = b.rows[b.next];
  auto &impl = *j->parser.implementation;
  if (impl.stage2_next(j->parser.doc)) {
    batch_abandon(j);
    return false;
  }
  uint32_t e = impl.next_structural_index;
  bool last = b.next + 1 == b.count;
  if (e >= impl.n_structural_indexes || impl.structural_indexes[e] != r.off + r.len + 1 ||
      (last && e + 1 != impl.n_structural_indexes)) {
    batch_abandon(j);
    return false;
  }
  impl.next_structural_index = e + 1; // past the '#'
  if (++b.next == b.count) b.count = b.next = 0;
  j->d->batched_rows++;
  return true;
}

static json_result parse_alone_outlined(rsc_json *j, const uint8_t *data, size_t len, bool padded,
                                        bool elements, rsc_node *out, const char **msg);

// The tape into nodes, the strings left where simdjson wrote them.
__attribute__((always_inline)) static inline json_result
convert(rsc_json *j, string_region &strings, bool elements, rsc_node *out) {
  tape_converter c{j->d,     &j->hooks,   j->parser.doc.tape.get(), j->parser.doc.string_buf.get(),
                   j->stack, j->stack_cap};
  c.elements = elements;
  bool ok = c.run(out);
  j->stack = c.stack;
  j->stack_cap = c.cap;
  strings.finish(c.strings_end());
  if (!ok) return j->d->err.code == RSC_ERR_LIMIT ? JSON_LIMIT : JSON_NOMEM;
  return JSON_OK;
}

// One row, one simdjson parse (inline in rsc__json_parse: most rows).
__attribute__((always_inline)) static inline json_result
parse_alone(rsc_json *j, const uint8_t *data, size_t len, bool padded, bool elements, rsc_node *out,
            const char **msg) {
  const uint8_t *p = ensure_padded(j, data, len, padded);
  if (!p) return JSON_NOMEM;
  string_region strings{j};
  if (!strings.install(data, len)) {
    rsc__alloc_fail(j->d);
    return JSON_NOMEM;
  }
  dom::element root;
  error_code err = j->parser.parse(p, len, false).get(root);
  if (err == UTF8_ERROR) {
    // TextDecoder turns bad bytes into U+FFFD; do the same, then retry.
    strings.finish(0);
    size_t fixed_len = 0;
    uint8_t *fixed = rsc__utf8_repair(j->d, data, len, &fixed_len);
    if (!fixed) return JSON_NOMEM;
    return rsc__json_parse(j, fixed, fixed_len, false, elements, out, msg);
  }
  if (err == DEPTH_ERROR) return JSON_LIMIT;
  if (err == MEMALLOC) return JSON_NOMEM;
  if (err) {
    // Lone surrogates, big integers, 1e400 and real syntax errors: the
    // fallback parser accepts what JSON.parse accepts and words the rest.
    strings.finish(0);
    return rsc__json_fallback(j->d, data, len, out, msg);
  }
  (void)root;
  return convert(j, strings, elements, out);
}

static json_result parse_alone_outlined(rsc_json *j, const uint8_t *data, size_t len, bool padded,
                                        bool elements, rsc_node *out, const char **msg) {
  return parse_alone(j, data, len, padded, elements, out, msg);
}

// A row that may be in a batch (batch_may_take); parsed alone when it is not.
__attribute__((noinline)) static json_result parse_batched(rsc_json *j, const uint8_t *data,
                                                           size_t len, bool padded, bool elements,
                                                           rsc_node *out, const char **msg) {
  rsc_status before = j->d->err.code;
  if (!batch_take(j, data, len)) {
    if (j->d->err.code == RSC_ERR_NOMEM && before != RSC_ERR_NOMEM)
      return JSON_NOMEM; // the batch's buffers
    return parse_alone_outlined(j, data, len, padded, elements, out, msg);
  }
  string_region strings{j};
  if (!strings.install(data, len)) {
    rsc__alloc_fail(j->d);
    return JSON_NOMEM;
  }
  if (!batch_stage2(j)) {
    // Not a document of its own in the batch: alone, for its own error.
    strings.finish(0);
    return parse_alone_outlined(j, data, len, padded, elements, out, msg);
  }
  return convert(j, strings, elements, out);
}

extern "C" json_result rsc__json_parse(rsc_json *j, const uint8_t *data, size_t len, bool padded,
                                       bool elements, rsc_node *out, const char **msg) {
  try {
    if (batch_may_take(j, data, len))
      return parse_batched(j, data, len, padded, elements, out, msg);
    return parse_alone(j, data, len, padded, elements, out, msg);
  } catch (...) {
    return JSON_NOMEM;
  }
}

extern "C" int rsc__json_parse_only(rsc_json *j, const uint8_t *data, size_t len, bool padded) {
  try {
    const uint8_t *p = ensure_padded(j, data, len, padded);
    if (!p) return -1;
    dom::element root;
    return j->parser.parse(p, len, false).get(root) ? 1 : 0;
  } catch (...) {
    return -1;
  }
}

extern "C" long rsc__json_parse_walk(rsc_json *j, const uint8_t *data, size_t len, bool padded) {
  try {
    const uint8_t *p = ensure_padded(j, data, len, padded);
    if (!p) return -1;
    dom::element root;
    if (j->parser.parse(p, len, false).get(root)) return -1;
    const uint64_t *tape = j->parser.doc.tape.get();
    const uint8_t *strings = j->parser.doc.string_buf.get();
    const uint64_t *w = tape + 1, *end = tape + uint32_t(tape[0]) - 1;
    long dollars = 0;
    while (w < end) {
      uint64_t word = *w;
      uint8_t type = uint8_t(word >> 56);
      if (type == '"') dollars += strings[(word & 0x00FFFFFFFFFFFFFFull) + 4] == '$';
      w += type == 'l' || type == 'u' || type == 'd' ? 2 : 1;
    }
    return dollars;
  } catch (...) {
    return -1;
  }
}

extern "C" int rsc__utf8_valid(const uint8_t *data, size_t len) {
  return simdjson::validate_utf8(reinterpret_cast<const char *>(data), len) ? 1 : 0;
}

extern "C" size_t rsc__format_number(double v, char *buf) {
  using double_conversion::DoubleToStringConverter;
  using double_conversion::StringBuilder;
  StringBuilder sb(buf, 32);
  DoubleToStringConverter::EcmaScriptConverter().ToShortest(v, &sb);
  int n = sb.position();
  sb.Finalize();
  return size_t(n);
}

extern "C" double rsc__parse_number(const char *s, size_t len) {
  using double_conversion::StringToDoubleConverter;
  StringToDoubleConverter conv(0, 0.0, std::numeric_limits<double>::quiet_NaN(), "Infinity", "NaN");
  int processed = 0;
  return conv.StringToDouble(s, int(len), &processed);
}
