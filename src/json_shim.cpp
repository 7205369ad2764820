// json_shim.cpp - the only C++ file: simdjson's DOM -> rsc nodes, plus
// double-conversion for JavaScript number text. Knows no "$" forms.
//
// One dom::parser per decoder keeps its buffers hot. The DOM is borrowed:
// it is overwritten by the next row, so every string is copied into the
// decoder's arena once, while the tree is converted in one walk. No
// exception crosses into C.
#include <simdjson.h>
#include <double-conversion/double-conversion.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "frame.h"
#include "json.h"
#include "utf8.h"

using namespace simdjson;

// One open array or object of the tape walk below.
struct open_container {
  rsc_node *node;     // the container's node (flags set when it closes)
  rsc_node *items;    // arrays
  rsc_member *members;// objects
  uint32_t pos;
  uint16_t walk;      // NF_DOLLAR | NF_WALK seen in a child
  bool normalize;     // an index key or a possible duplicate key
  uint64_t key_bits;  // a tiny Bloom filter of the keys seen
};


struct rsc_json {
  rsc_decoder *d;
  dom::parser parser;
  open_container *stack; // the tape walk's stack, kept across rows
  size_t stack_cap;
  uint8_t *pad_buf;  // a padded copy for rows that end too close to a buffer end
  size_t pad_cap;
  uint32_t max_depth;
};

extern "C" rsc_json *rsc__json_new(rsc_decoder *d) {
  try {
    rsc_json *j = new rsc_json();
    j->d = d;
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

extern "C" void rsc__json_free(rsc_json *j) {
  if (!j) return;
  // The growable buffers go through the caller's allocator hooks, like
  // every other buffer; simdjson's own parser buffers cannot (see
  // docs/hardening.md, "Allocation failure").
  rsc__heap_free(&j->d->arena.alloc, j->pad_buf);
  rsc__heap_free(&j->d->arena.alloc, j->stack);
  delete j;
}

namespace {

// The DOM's tape (simdjson doc/tape.md), walked in one loop with an explicit
// stack: one 64-bit word per value (two for numbers), type in the top byte.
// Faster than the element/iterator API and never recursive, whatever the
// nesting depth.
enum : uint8_t {
  T_ROOT = 'r', T_ARRAY = '[', T_OBJECT = '{', T_END_ARRAY = ']', T_END_OBJECT = '}',
  T_STRING = '"', T_INT64 = 'l', T_UINT64 = 'u', T_DOUBLE = 'd', T_TRUE = 't',
  T_FALSE = 'f', T_NULL = 'n'
};


struct tape_converter {
  rsc_decoder *d;
  const uint64_t *tape;
  const uint8_t *strings;
  open_container *stack;
  size_t cap;

  static uint8_t type(uint64_t w) { return uint8_t(w >> 56); }
  static uint64_t payload(uint64_t w) { return w & 0x00FFFFFFFFFFFFFFull; }

  // A string's bytes: a 32-bit length, then the text (NUL-terminated).
  void string_at(uint64_t w, const char **p, uint32_t *len) const {
    const uint8_t *s = strings + payload(w);
    uint32_t n;
    std::memcpy(&n, s, 4);
    *p = reinterpret_cast<const char *>(s + 4);
    *len = n;
  }

  // Elements of the container starting at tape index i (counts saturate at
  // 2^24 - 1 on the tape: count by walking then).
  uint32_t count_at(size_t i) const {
    uint64_t w = tape[i];
    uint32_t n = uint32_t((w >> 32) & 0xFFFFFF);
    if (n < 0xFFFFFF) return n;
    size_t end = size_t(uint32_t(w)) - 1, k = i + 1;
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

  bool push(const open_container &c) {
    if (depth == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      auto *ns = static_cast<open_container *>(rsc__heap_realloc(
          &d->arena.alloc, stack, cap * sizeof(open_container), ncap * sizeof(open_container)));
      if (!ns) return false;
      stack = ns;
      cap = ncap;
    }
    stack[depth++] = c;
    return true;
  }
  size_t depth = 0;

  static bool index_key(const char *k, uint32_t n) { return n > 0 && k[0] >= '0' && k[0] <= '9'; }

  size_t strings_end = 0; // bytes of the string buffer in use (for shrinking)

  // Strings stay where simdjson wrote them: the buffer is the decoder's.
  const char *keep(const char *p, uint32_t n) {
    size_t end = size_t(reinterpret_cast<const uint8_t *>(p) - strings) + n + 1;
    if (end > strings_end) strings_end = end;
    return p;
  }

  // Converts the document into *out. false: out of memory or a limit.
  bool run(rsc_node *out) {
    size_t i = 1; // tape[0] is the root word
    size_t end = size_t(payload(tape[0])) - 1; // the closing root word
    while (i < end) {
      uint64_t w = tape[i];
      uint8_t t = type(w);
      if (t == T_END_ARRAY || t == T_END_OBJECT) {
        open_container &c = stack[--depth];
        c.node->flags |= c.walk ? NF_WALK : 0;
        if (c.normalize) rsc__object_normalize(d, c.node);
        if (depth) stack[depth - 1].walk |= c.node->flags & (NF_DOLLAR | NF_WALK);
        i++;
        continue;
      }
      rsc_node *dst = out;
      if (depth) {
        open_container &top = stack[depth - 1];
        if (top.members) {
          // An object member: the key, then its value.
          rsc_member *m = &top.members[top.pos++];
          const char *k;
          uint32_t kl;
          string_at(w, &k, &kl);
          m->key = keep(k, kl);
          m->klen = kl;
          m->pad = 0;
          uint64_t bit = uint64_t(1) << ((kl * 7u + uint8_t(kl ? k[0] : 0) + uint8_t(kl ? k[kl - 1] : 0)) & 63);
          if (top.key_bits & bit) top.normalize = true;
          top.key_bits |= bit;
          if (index_key(k, kl)) top.normalize = true;
          if (kl == 9 && std::memcmp(k, "__proto__", 9) == 0) {
            top.node->flags |= NF_PROTO;
            top.walk |= NF_WALK;
          }
          dst = &m->val;
          w = tape[++i];
          t = type(w);
        } else {
          dst = &top.items[top.pos++];
        }
      }
      switch (t) {
      case T_ARRAY: {
        uint32_t n = count_at(i);
        rsc_node *items = rsc__alloc_nodes(d, n ? n : 1);
        if (!items) return false;
        *dst = rsc__mk(RSC_ARRAY);
        dst->u.items = items;
        dst->len = n;
        if (!push(open_container{dst, items, nullptr, 0, 0, false, 0})) return false;
        i++;
        break;
      }
      case T_OBJECT: {
        uint32_t n = count_at(i);
        auto *m = static_cast<rsc_member *>(rsc__alloc(d, sizeof(rsc_member) * (n ? n : 1)));
        if (!m) return false;
        *dst = rsc__mk(RSC_OBJECT);
        dst->u.members = m;
        dst->len = n;
        if (!push(open_container{dst, nullptr, m, 0, 0, false, 0})) return false;
        i++;
        break;
      }
      case T_STRING: {
        const char *p;
        uint32_t n;
        string_at(w, &p, &n);
        *dst = rsc__str(RSC_STRING, keep(p, n), n);
        if (n && p[0] == '$') {
          dst->flags |= NF_DOLLAR;
          if (depth) stack[depth - 1].walk |= NF_DOLLAR;
        }
        i++;
        break;
      }
      case T_INT64: {
        int64_t v;
        std::memcpy(&v, &tape[i + 1], 8);
        *dst = rsc__num(double(v));
        i += 2;
        break;
      }
      case T_UINT64: {
        uint64_t v;
        std::memcpy(&v, &tape[i + 1], 8);
        *dst = rsc__num(double(v));
        i += 2;
        break;
      }
      case T_DOUBLE: {
        double v;
        std::memcpy(&v, &tape[i + 1], 8);
        *dst = rsc__num(v);
        i += 2;
        break;
      }
      case T_TRUE:
      case T_FALSE:
        *dst = rsc__mk(RSC_BOOL);
        dst->u.boolean = t == T_TRUE;
        i++;
        break;
      default:
        *dst = rsc__mk(RSC_NULL);
        i++;
        break;
      }
    }
    return true;
  }
};

}  // namespace

static const uint8_t *ensure_padded(rsc_json *j, const uint8_t *data, size_t len, bool padded) {
  if (padded) return data;
  size_t need = len + SIMDJSON_PADDING;
  if (need > j->pad_cap) {
    size_t cap = j->pad_cap ? j->pad_cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *nb = static_cast<uint8_t *>(rsc__heap_realloc(&j->d->arena.alloc, j->pad_buf, j->pad_cap, cap));
    if (!nb) return nullptr;
    j->pad_buf = nb;
    j->pad_cap = cap;
  }
  std::memcpy(j->pad_buf, data, len);
  std::memset(j->pad_buf + len, 0, SIMDJSON_PADDING);
  return j->pad_buf;
}

static_assert(SIMDJSON_PADDING <= RSC_FRAME_PADDING, "framer padding too small");

// simdjson writes unescaped strings into the document's string buffer. For
// the length of one parse that buffer is a region of the decoder's string
// arena, so the strings need no copy afterwards; the region is then cut to
// what the row used. Its size is simdjson's own bound (5/3 of the row).
struct string_region {
  rsc_json *j;
  uint8_t *theirs = nullptr;
  uint8_t *region = nullptr;

  bool install(size_t len) {
    dom::parser &p = j->parser;
    size_t want = len < 32 ? 32 : len;
    // What parse()'s ensure_capacity would do, done before the swap so it
    // never frees the region.
    if (p.doc.capacity() < want && p.doc.allocate(want)) return false;
    if (p.capacity() < want && p.allocate(want, p.max_depth())) return false;
    size_t cap = ((5 * len / 3 + SIMDJSON_PADDING) + 63) & ~size_t(63);
    region = static_cast<uint8_t *>(rsc__arena_alloc(&j->d->strings, cap));
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

extern "C" json_result rsc__json_parse(rsc_json *j, const uint8_t *data, size_t len,
                                       bool padded, rsc_node *out, const char **msg) {
  try {
    const uint8_t *p = ensure_padded(j, data, len, padded);
    if (!p) return JSON_NOMEM;
    string_region strings{j};
    if (!strings.install(len)) {
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
      return rsc__json_parse(j, fixed, fixed_len, false, out, msg);
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
    tape_converter c{j->d, j->parser.doc.tape.get(), j->parser.doc.string_buf.get(), j->stack,
                     j->stack_cap};
    bool ok = c.run(out);
    j->stack = c.stack;
    j->stack_cap = c.cap;
    strings.finish(c.strings_end);
    if (!ok) return j->d->err.code == RSC_ERR_LIMIT ? JSON_LIMIT : JSON_NOMEM;
    return JSON_OK;
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
  StringToDoubleConverter conv(0, 0.0, std::numeric_limits<double>::quiet_NaN(), "Infinity",
                               "NaN");
  int processed = 0;
  return conv.StringToDouble(s, int(len), &processed);
}
