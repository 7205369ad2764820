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

struct rsc_json {
  rsc_decoder *d;
  dom::parser parser;
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
  std::free(j->pad_buf);
  delete j;
}

namespace {

struct converter {
  rsc_decoder *d;

  static bool is_proto(std::string_view k) { return k == "__proto__"; }

  // Whether a key is a canonical array index ("0", "17", < 2^32 - 1), which
  // JavaScript enumerates before other keys.
  static bool is_index_key(std::string_view k) {
    if (k.empty() || k.size() > 10 || k[0] < '0' || k[0] > '9') return false;
    if (k.size() > 1 && k[0] == '0') return false;
    uint64_t v = 0;
    for (char c : k) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + uint64_t(c - '0');
    }
    return v < 4294967295ull;
  }

  const char *copy(std::string_view s) { return rsc__strdup(d, s.data(), s.size()); }

  // Converts one element into *out. Returns false when memory runs out.
  bool convert(dom::element el, rsc_node *out) {
    switch (el.type()) {
    case dom::element_type::ARRAY: {
      dom::array arr = el.get_array().value_unsafe();
      size_t n = arr.size();
      rsc_node *items = rsc__alloc_nodes(d, n ? n : 1);
      if (!items) return false;
      *out = rsc__mk(RSC_ARRAY);
      out->u.items = items;
      out->len = uint32_t(n);
      size_t i = 0;
      uint16_t walk = 0;
      for (dom::element child : arr) {
        if (!convert(child, &items[i])) return false;
        walk |= items[i].flags & (NF_DOLLAR | NF_WALK);
        i++;
      }
      if (walk) out->flags |= NF_WALK;
      return true;
    }
    case dom::element_type::OBJECT: {
      dom::object obj = el.get_object().value_unsafe();
      size_t n = obj.size();
      rsc_member *m = static_cast<rsc_member *>(rsc__alloc(d, sizeof(rsc_member) * (n ? n : 1)));
      if (!m) return false;
      *out = rsc__mk(RSC_OBJECT);
      out->u.members = m;
      out->len = uint32_t(n);
      size_t i = 0;
      bool reorder = false;
      for (dom::key_value_pair kv : obj) {
        std::string_view k = kv.key;
        m[i].key = copy(k);
        if (!m[i].key) return false;
        m[i].klen = uint32_t(k.size());
        m[i].pad = 0;
        if (!convert(kv.value, &m[i].val)) return false;
        if (m[i].val.flags & (NF_DOLLAR | NF_WALK)) out->flags |= NF_WALK;
        if (is_proto(k)) out->flags |= NF_WALK | NF_PROTO;
        if (!reorder && is_index_key(k)) reorder = true;
        i++;
      }
      if (n > 1) rsc__object_normalize(d, out);
      (void)reorder;
      return true;
    }
    case dom::element_type::STRING: {
      std::string_view s = el.get_string().value_unsafe();
      const char *p = copy(s);
      if (!p) return false;
      *out = rsc__str(RSC_STRING, p, s.size());
      if (!s.empty() && s[0] == '$') out->flags |= NF_DOLLAR;
      return true;
    }
    case dom::element_type::INT64:
      *out = rsc__num(double(el.get_int64().value_unsafe()));
      return true;
    case dom::element_type::UINT64:
      *out = rsc__num(double(el.get_uint64().value_unsafe()));
      return true;
    case dom::element_type::DOUBLE:
      *out = rsc__num(el.get_double().value_unsafe());
      return true;
    case dom::element_type::BOOL:
      *out = rsc__mk(RSC_BOOL);
      out->u.boolean = el.get_bool().value_unsafe() ? 1 : 0;
      return true;
    case dom::element_type::NULL_VALUE:
    default:
      *out = rsc__mk(RSC_NULL);
      return true;
    }
  }
};

}  // namespace

static const uint8_t *ensure_padded(rsc_json *j, const uint8_t *data, size_t len, bool padded) {
  if (padded) return data;
  size_t need = len + SIMDJSON_PADDING;
  if (need > j->pad_cap) {
    size_t cap = j->pad_cap ? j->pad_cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *nb = static_cast<uint8_t *>(std::realloc(j->pad_buf, cap));
    if (!nb) return nullptr;
    j->pad_buf = nb;
    j->pad_cap = cap;
  }
  std::memcpy(j->pad_buf, data, len);
  std::memset(j->pad_buf + len, 0, SIMDJSON_PADDING);
  return j->pad_buf;
}

static_assert(SIMDJSON_PADDING <= RSC_FRAME_PADDING, "framer padding too small");

extern "C" json_result rsc__json_parse(rsc_json *j, const uint8_t *data, size_t len,
                                       bool padded, rsc_node *out, const char **msg) {
  try {
    const uint8_t *p = ensure_padded(j, data, len, padded);
    if (!p) return JSON_NOMEM;
    dom::element root;
    error_code err = j->parser.parse(p, len, false).get(root);
    if (err == UTF8_ERROR) {
      // TextDecoder turns bad bytes into U+FFFD; do the same, then retry.
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
      return rsc__json_fallback(j->d, data, len, out, msg);
    }
    converter c{j->d};
    if (!c.convert(root, out)) return j->d->err.code == RSC_ERR_LIMIT ? JSON_LIMIT : JSON_NOMEM;
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
