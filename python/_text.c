/* _text.c - strings: the decoder's WTF-8 -> str in two vectorised passes
 * (the width and length, then the fill; SSE2, AVX2 where the CPU has it),
 * and small caches of the str objects of short keys and values. */

#include "_rscpy.h"

/* Every string the decoder hands over is valid WTF-8 (UTF-8, plus a lone
 * surrogate as its 3-byte form, which CPython reads with surrogatepass):
 * simdjson validated it, or the decoder repaired it as TextDecoder does.
 * CPython's decoder checks it again, goes char by char after the first
 * non-ASCII byte and widens its result, copying what it has, whenever it
 * meets a wider character. Here one vectorised pass finds the widest byte
 * and the number of characters, so the str is made once at its final
 * width, and a second pass fills it, runs of ASCII, 2-byte and 4-byte
 * characters 16 bytes at a time (SSE2, which every x86-64 has; elsewhere
 * CPython's decoder does it all). Short strings, and bytes that are not
 * what the first pass promised, go to CPython's decoder. */
/* Strings the direct path refused (none, unless a string was not valid
 * after all): tests read it through _text_refused(). Touched with the GIL
 * held. */
static size_t text_refused;

static PyObject *py_text_refused(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromSize_t(text_refused);
}

#ifdef __SSE2__
#  define TEXT_DIRECT_MIN 16

/* For n >= 16 bytes: the width their widest character needs (1: ASCII,
 * 2: up to U+00FF, 3: up to U+FFFF, 4: beyond; the lead bytes tell, as
 * valid UTF-8 has no overlong forms) and the number of continuation bytes
 * (10xxxxxx), so of characters. The last 16 bytes are read once more, their
 * first ones masked out of the count. */
static const uint8_t lane_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static inline int lanes_at_least(__m128i v, int byte) {
  return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8((char)byte)), v)) != 0;
}

#  ifdef HAVE_TEXT_AVX2
/* Where the CPU has AVX2 (checked once, when the module is installed;
 * _text_avx2() turns it off for the tests), the scan's bulk and the fill's
 * runs of 2- and 4-byte characters go 32 bytes at a time (on long text the
 * scan is much of text()'s time). Reads the 32-byte blocks of p[0..n) and
 * returns the bytes read (a multiple of 32); their widest byte goes in
 * *vmax, their continuation bytes in *cont. */
__attribute__((target("avx2"))) static size_t scan_blocks_avx2(const uint8_t *p, size_t n,
                                                               __m128i *vmax, size_t *cont) {
  const __m256i zero = _mm256_setzero_si256(), below = _mm256_set1_epi8(-64);
  __m256i vm = zero;
  size_t i = 0, c = 0, blocks = n / 32;
  while (blocks > 0) {
    /* a byte lane counts to 255: 254 blocks at a time */
    size_t m = blocks < 254 ? blocks : 254;
    __m256i vcont = zero;
    for (size_t k = 0; k < m; k++, i += 32) {
      __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
      vm = _mm256_max_epu8(vm, v);
      vcont = _mm256_sub_epi8(vcont, _mm256_cmpgt_epi8(below, v));
    }
    __m256i sum = _mm256_sad_epu8(vcont, zero);
    c += (size_t)_mm256_extract_epi64(sum, 0) + (size_t)_mm256_extract_epi64(sum, 1) +
         (size_t)_mm256_extract_epi64(sum, 2) + (size_t)_mm256_extract_epi64(sum, 3);
    blocks -= m;
  }
  *vmax = _mm_max_epu8(_mm256_castsi256_si128(vm), _mm256_extracti128_si256(vm, 1));
  *cont = c;
  return i;
}

/* ascii_copy's bulk: copies 32-byte blocks of p[0..n) to out while they
 * are ASCII; returns the bytes copied (a multiple of 32). */
__attribute__((target("avx2"))) static size_t ascii_copy_avx2(const uint8_t *p, size_t n,
                                                              uint8_t *out) {
  size_t i = 0;
  for (; n - i >= 32; i += 32) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
    if (_mm256_movemask_epi8(v)) break;
    _mm256_storeu_si256((__m256i *)(out + i), v);
  }
  return i;
}

/* The fill's runs of 2-byte characters 16 at a time, as 16-bit lanes (a
 * pair is lead | continuation << 8), while 32 bytes remain and all are such
 * pairs: the 16-byte loop of utf8_fill twice as wide. Returns the new i,
 * *kp moved past the characters written. kind 1 only for leads below C4
 * (utf8_fill's test), so packing saturates nothing. */
__attribute__((target("avx2"))) static size_t run2_avx2(const uint8_t *p, size_t n, size_t i,
                                                        void *out, size_t *kp, int kind) {
  const __m256i form = _mm256_set1_epi16((short)0xC0E0), pair = _mm256_set1_epi16((short)0x80C0);
  const __m256i low5 = _mm256_set1_epi16(0x1F), low6 = _mm256_set1_epi16(0x3F);
  size_t k = *kp;
  while (n - i >= 32) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
    if ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_and_si256(v, form), pair)) !=
        0xFFFFFFFFu)
      break;
    __m256i ch = _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(v, low5), 6),
                                 _mm256_and_si256(_mm256_srli_epi16(v, 8), low6));
    if (kind == 1) {
      /* packing works per 128-bit half: gather the halves' low 8 bytes */
      __m256i b8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(ch, ch), 0x08);
      _mm_storeu_si128((__m128i *)((uint8_t *)out + k), _mm256_castsi256_si128(b8));
    } else if (kind == 2) {
      _mm256_storeu_si256((__m256i *)((uint16_t *)out + k), ch);
    } else {
      _mm256_storeu_si256((__m256i *)((uint32_t *)out + k),
                          _mm256_cvtepu16_epi32(_mm256_castsi256_si128(ch)));
      _mm256_storeu_si256((__m256i *)((uint32_t *)out + k + 8),
                          _mm256_cvtepu16_epi32(_mm256_extracti128_si256(ch, 1)));
    }
    i += 32, k += 16;
  }
  *kp = k;
  return i;
}

/* The same for 4-byte characters (emoji), 8 at a time as 32-bit lanes,
 * into a str of kind 4. */
__attribute__((target("avx2"))) static size_t run4_avx2(const uint8_t *p, size_t n, size_t i,
                                                        void *out, size_t *kp) {
  const __m256i form = _mm256_set1_epi32((int)0xC0C0C0F8),
                quad = _mm256_set1_epi32((int)0x808080F0), low6 = _mm256_set1_epi32(0x3F),
                top = _mm256_set1_epi32(0x10FFFF);
  size_t k = *kp;
  while (n - i >= 32) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
    if ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_and_si256(v, form), quad)) !=
        0xFFFFFFFFu)
      break;
    __m256i ch = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x07)), 18),
                        _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(v, 8), low6), 12)),
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(v, 16), low6), 6),
                        _mm256_and_si256(_mm256_srli_epi32(v, 24), low6)));
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(ch, top))) break; /* F5-F7 leads */
    _mm256_storeu_si256((__m256i *)((uint32_t *)out + k), ch);
    i += 32, k += 8;
  }
  *kp = k;
  return i;
}

static int text_avx2; /* set by rscpy_install */

static PyObject *py_text_avx2(PyObject *self, PyObject *arg) {
  (void)self;
  int prev = text_avx2;
  int on = PyObject_IsTrue(arg);
  if (on < 0) return NULL;
  text_avx2 = on && __builtin_cpu_supports("avx2");
  return PyBool_FromLong(prev);
}
#  endif

static int utf8_scan(const uint8_t *p, size_t n, size_t *cont) {
  const __m128i zero = _mm_setzero_si128(), below = _mm_set1_epi8(-64); /* 0x80..0xBF: -128..-65 */
  __m128i vmax = zero;
  size_t i = 0, c = 0;
#  ifdef HAVE_TEXT_AVX2
  if (text_avx2 && n >= 64) i = scan_blocks_avx2(p, n, &vmax, &c);
#  endif
  while (i < n) {
    /* a byte lane counts to 255: 254 blocks and the last 16 bytes */
    __m128i vcont = zero;
    size_t blocks = (n - i) / 16, end = i + 16 * (blocks < 254 ? blocks : 254);
    for (; i < end; i += 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
      vmax = _mm_max_epu8(vmax, v);
      vcont = _mm_sub_epi8(vcont, _mm_cmplt_epi8(v, below)); /* a true lane is -1 */
    }
    if (i < n && n - i < 16) { /* the last 16 bytes, those counted already masked out */
      __m128i v = _mm_loadu_si128((const __m128i *)(p + n - 16));
      __m128i fresh = _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *)lane_index),
                                     _mm_set1_epi8((char)(15 - (n - i))));
      vmax = _mm_max_epu8(vmax, v);
      vcont = _mm_sub_epi8(vcont, _mm_and_si128(_mm_cmplt_epi8(v, below), fresh));
      i = n;
    }
    __m128i sum = _mm_sad_epu8(vcont, zero);
    c += (size_t)_mm_cvtsi128_si32(sum) + (size_t)_mm_extract_epi16(sum, 4);
  }
  *cont = c;
  if (!_mm_movemask_epi8(vmax)) return 1;
  return lanes_at_least(vmax, 0xF0) ? 4 : lanes_at_least(vmax, 0xC4) ? 3 : 2;
}

static inline __attribute__((always_inline)) void put_char(void *out, size_t k, uint32_t ch,
                                                           int kind) {
  if (kind == 1) ((uint8_t *)out)[k] = (uint8_t)ch;
  else if (kind == 2) ((uint16_t *)out)[k] = (uint16_t)ch;
  else ((uint32_t *)out)[k] = ch;
}

/* The character of 2 to 4 bytes at p[*i], whose lead byte is lead, into
 * *ch (continuation bytes taken as they are); *i moves past it. 0 if lead
 * cannot lead (C0, C1, F5-FF, or a continuation byte). */
static inline __attribute__((always_inline)) int utf8_take(const uint8_t *p, size_t *i,
                                                           uint32_t lead, uint32_t *ch) {
  const uint8_t *s = p + *i;
  if (lead < 0xE0) {
    if (lead < 0xC2) return 0;
    *ch = (lead & 0x1F) << 6 | (s[1] & 0x3Fu), *i += 2;
  } else if (lead < 0xF0) {
    *ch = (lead & 0x0F) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu), *i += 3;
  } else {
    if (lead > 0xF4) return 0;
    *ch = (lead & 0x07) << 18 | (s[1] & 0x3Fu) << 12 | (s[2] & 0x3Fu) << 6 | (s[3] & 0x3Fu),
    *i += 4;
  }
  return 1;
}

/* 16 ASCII bytes as 16 characters of `kind` bytes. */
static inline __attribute__((always_inline)) void put_ascii16(void *out, size_t k, __m128i v,
                                                              int kind) {
  const __m128i zero = _mm_setzero_si128();
  if (kind == 1) {
    _mm_storeu_si128((__m128i *)((uint8_t *)out + k), v);
    return;
  }
  __m128i lo = _mm_unpacklo_epi8(v, zero), hi = _mm_unpackhi_epi8(v, zero);
  if (kind == 2) {
    _mm_storeu_si128((__m128i *)((uint16_t *)out + k), lo);
    _mm_storeu_si128((__m128i *)((uint16_t *)out + k + 8), hi);
  } else {
    uint32_t *o = (uint32_t *)out + k;
    _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(lo, zero));
    _mm_storeu_si128((__m128i *)(o + 4), _mm_unpackhi_epi16(lo, zero));
    _mm_storeu_si128((__m128i *)(o + 8), _mm_unpacklo_epi16(hi, zero));
    _mm_storeu_si128((__m128i *)(o + 12), _mm_unpackhi_epi16(hi, zero));
  }
}

/* The fill's runs of 2-byte characters (Latin, Greek, Cyrillic, Hebrew,
 * Arabic) from p[i], at least 16 bytes left: 8 at a time as 16-bit lanes (a
 * pair is lead | continuation << 8), and once a run has gone 16 characters,
 * 16 at a time with AVX2 where the CPU has it. Returns the new i, *kp moved
 * past the characters written. Out of line, so that the fill's scalar loop
 * keeps its registers. */
typedef struct fill_at {
  size_t i, k; /* bytes read, characters written */
} fill_at;

__attribute__((noinline)) static fill_at run2(const uint8_t *p, size_t n, size_t i, void *out,
                                              size_t k, int kind) {
  const __m128i form = _mm_set1_epi16((short)0xC0E0), pair = _mm_set1_epi16((short)0x80C0);
  do {
    __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, form), pair)) != 0xFFFF) break;
    __m128i ch = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x1F)), 6),
                              _mm_and_si128(_mm_srli_epi16(v, 8), _mm_set1_epi16(0x3F)));
    if (kind == 1) {
      _mm_storel_epi64((__m128i *)((uint8_t *)out + k), _mm_packus_epi16(ch, ch));
    } else if (kind == 2) {
      _mm_storeu_si128((__m128i *)((uint16_t *)out + k), ch);
    } else {
      const __m128i zero = _mm_setzero_si128();
      _mm_storeu_si128((__m128i *)((uint32_t *)out + k), _mm_unpacklo_epi16(ch, zero));
      _mm_storeu_si128((__m128i *)((uint32_t *)out + k + 4), _mm_unpackhi_epi16(ch, zero));
    }
    i += 16, k += 8;
#  ifdef HAVE_TEXT_AVX2
    if (text_avx2 && n - i >= 32) i = run2_avx2(p, n, i, out, &k, kind);
#  endif
  } while (n - i >= 16);
  return (fill_at){i, k};
}

/* The same for 4-byte characters (emoji) into a str of kind 4: 4 at a time
 * as 32-bit lanes, then 8 at a time with AVX2. */
__attribute__((noinline)) static fill_at run4(const uint8_t *p, size_t n, size_t i, void *out,
                                              size_t k) {
  const __m128i form = _mm_set1_epi32((int)0xC0C0C0F8), quad = _mm_set1_epi32((int)0x808080F0),
                low6 = _mm_set1_epi32(0x3F), top = _mm_set1_epi32(0x10FFFF);
  do {
    __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(v, form), quad)) != 0xFFFF) break;
    __m128i ch =
        _mm_or_si128(_mm_or_si128(_mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x07)), 18),
                                  _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(v, 8), low6), 12)),
                     _mm_or_si128(_mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(v, 16), low6), 6),
                                  _mm_and_si128(_mm_srli_epi32(v, 24), low6)));
    if (_mm_movemask_epi8(_mm_cmpgt_epi32(ch, top))) break; /* F5-F7 leads */
    _mm_storeu_si128((__m128i *)((uint32_t *)out + k), ch);
    i += 16, k += 4;
#  ifdef HAVE_TEXT_AVX2
    if (text_avx2 && n - i >= 32) i = run4_avx2(p, n, i, out, &k);
#  endif
  } while (n - i >= 16);
  return (fill_at){i, k};
}

/* Writes the characters of p[0..n) into out, a str's data of `chars`
 * characters of `kind` bytes each (a constant where it is inlined); 0 when
 * they are not exactly `chars` characters. No write can pass `chars`: each
 * character starts at a byte that is not a continuation byte (ASCII, or a
 * lead byte checked here), and utf8_scan counted `chars` such bytes.
 * Continuation bytes are not checked (the text is valid); lengths are, so
 * no read passes n. Runs go one by one for 8 characters, then 16 bytes at a
 * time while they last: words stay cheap, long runs get fast. */
static inline __attribute__((always_inline)) int utf8_fill(const uint8_t *p, size_t n, void *out,
                                                           size_t chars, int kind) {
  size_t i = 0, k = 0;
  while (i < n) {
    uint32_t b = p[i];
    if (b < 0x80) { /* ASCII */
      size_t stop = n - i > 8 ? i + 8 : n;
      do put_char(out, k++, b, kind);
      while (++i < stop && (b = p[i]) < 0x80);
      if (i != stop || i == n || p[i] >= 0x80) continue;
      while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        if (_mm_movemask_epi8(v)) break;
        put_ascii16(out, k, v, kind);
        i += 16, k += 16;
      }
      continue;
    }
    if (n - i < 4) break; /* the last bytes: below */
    int m = 0;
    do {
      uint32_t ch;
      if (!utf8_take(p, &i, b, &ch)) return 0;
      put_char(out, k++, ch, kind);
    } while (++m < 8 && n - i >= 4 && (b = p[i]) >= 0x80);
    if (m < 8 || n - i < 16 || (b = p[i]) < 0x80) continue;
    fill_at at = {i, k};
    if (b < 0xE0 && (kind > 1 || b < 0xC4)) at = run2(p, n, i, out, k, kind);
    else if (kind == 4 && b >= 0xF0) at = run4(p, n, i, out, k);
    i = at.i, k = at.k;
  }
  /* The last bytes, each length checked. */
  while (i < n) {
    uint32_t b = p[i];
    if (b < 0x80) {
      put_char(out, k++, b, kind);
      i++;
      continue;
    }
    uint32_t ch;
    if (n - i < (b < 0xE0 ? 2u : b < 0xF0 ? 3u : 4u) || !utf8_take(p, &i, b, &ch)) return 0;
    put_char(out, k++, ch, kind);
  }
  return k == chars;
}

/* For n >= 16: copies p[0..n) to out 16 bytes at a time (32 with AVX2)
 * while they are ASCII. Returns n when all were, else where the first block
 * holding a non-ASCII byte starts (a multiple of 16). */
static size_t ascii_copy(const uint8_t *p, size_t n, uint8_t *out) {
  size_t i = 0;
#  ifdef HAVE_TEXT_AVX2
  if (text_avx2) i = ascii_copy_avx2(p, n, out);
#  endif
  for (; n - i >= 16; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
    if (_mm_movemask_epi8(v)) return i;
    _mm_storeu_si128((__m128i *)(out + i), v);
  }
  if (i < n) { /* the last bytes, as the last 16 */
    __m128i v = _mm_loadu_si128((const __m128i *)(p + n - 16));
    if (_mm_movemask_epi8(v)) return i;
    _mm_storeu_si128((__m128i *)(out + n - 16), v);
  }
  return n;
}

/* Long strings whose first 16 bytes are ASCII are copied into an ASCII str
 * as they are checked, one pass over text that is all ASCII (most text rows)
 * where the scan and a copy were two. A non-ASCII byte further on drops
 * that str; the scan then starts where the ASCII stopped. */
#  define ASCII_FIRST_MIN 64

static PyObject *text(const char *s, size_t n) {
  if (n < TEXT_DIRECT_MIN || n > (size_t)PY_SSIZE_T_MAX)
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogatepass");
  const uint8_t *p = (const uint8_t *)s;
  size_t head = 0; /* bytes known to be ASCII */
  if (n >= ASCII_FIRST_MIN && !_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p))) {
    PyObject *o = PyUnicode_New((Py_ssize_t)n, 127);
    if (!o) return NULL;
    head = ascii_copy(p, n, PyUnicode_1BYTE_DATA(o));
    if (head == n) return o;
    Py_DECREF(o);
  }
  /* The scan of the rest: utf8_scan reads its last 16 bytes as p[n-16..n),
   * which stay inside the string (n >= 16), the ASCII head's lanes masked
   * out of the count and below 0x80 for the width. */
  size_t cont;
  int width = utf8_scan(p + head, n - head, &cont);
  if (width == 1) {
    PyObject *o = PyUnicode_New((Py_ssize_t)n, 127);
    if (o) memcpy(PyUnicode_1BYTE_DATA(o), p, n);
    return o;
  }
  size_t chars = n - cont;
  static const Py_UCS4 widest[5] = {0, 0x7F, 0xFF, 0xFFFF, 0x10FFFF};
  PyObject *o = PyUnicode_New((Py_ssize_t)chars, widest[width]);
  if (!o) return NULL;
  int ok;
  switch (PyUnicode_KIND(o)) {
  case PyUnicode_1BYTE_KIND: ok = utf8_fill(p, n, PyUnicode_DATA(o), chars, 1); break;
  case PyUnicode_2BYTE_KIND: ok = utf8_fill(p, n, PyUnicode_DATA(o), chars, 2); break;
  default: ok = utf8_fill(p, n, PyUnicode_DATA(o), chars, 4); break;
  }
  if (ok) return o;
  Py_DECREF(o);
  text_refused++;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogatepass");
}
#else
static PyObject *text(const char *s, size_t n) {
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogatepass");
}
#endif

/* Object keys repeat (children, className...): a small cache of str objects
 * shared by every conversion (only touched with the GIL held). */
#define KC_SIZE 4096
#define KC_MAXLEN 32
typedef struct kc_ent {
  PyObject *o;
  uint32_t len;
  char b[KC_MAXLEN];
} kc_ent;
static kc_ent kcache[KC_SIZE], vcache[KC_SIZE];

static inline uint64_t load64(const char *p) {
  uint64_t x;
  memcpy(&x, p, 8);
  return x;
}

/* 1 <= n <= KC_MAXLEN (32): a few overlapping loads, mixed. */
static inline size_t short_hash(const char *s, size_t n) {
  uint64_t a, b;
  if (n >= 8) {
    a = load64(s);
    b = load64(s + n - 8);
    if (n > 16) a ^= load64(s + 8) * 0xC2B2AE3D27D4EB4Full;
  } else if (n >= 4) {
    uint32_t x, y;
    memcpy(&x, s, 4);
    memcpy(&y, s + n - 4, 4);
    a = x;
    b = y;
  } else {
    a = (uint64_t)(uint8_t)s[0] | (uint64_t)(uint8_t)s[n / 2] << 8 |
        (uint64_t)(uint8_t)s[n - 1] << 16;
    b = 0;
  }
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + n) * 0xFF51AFD7ED558CCDull;
  return (size_t)(h ^ (h >> 29) ^ (h >> 47));
}

/* a[0..n) == b[0..n) for 1 <= n <= KC_MAXLEN, by overlapping loads as
 * short_hash reads: for the few bytes of a key or a class name, a call to
 * memcmp would cost more than the rest of a cache hit. */
static inline int short_eq(const char *a, const char *b, size_t n) {
  if (n >= 8) {
    uint64_t d = (load64(a) ^ load64(b)) | (load64(a + n - 8) ^ load64(b + n - 8));
    if (n > 16) d |= (load64(a + 8) ^ load64(b + 8)) | (load64(a + n - 16) ^ load64(b + n - 16));
    return d == 0;
  }
  if (n >= 4) {
    uint32_t x, y, z, w;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    memcpy(&z, a + n - 4, 4);
    memcpy(&w, b + n - 4, 4);
    return ((x ^ y) | (z ^ w)) == 0;
  }
  return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

static PyObject *cached_text(kc_ent *cache, const char *s, size_t n) {
  kc_ent *e = &cache[short_hash(s, n) & (KC_SIZE - 1)];
  if (e->o && e->len == n && short_eq(e->b, s, n)) return Py_NewRef(e->o);
  PyObject *o = text(s, n);
  if (!o) return NULL;
  if (cache == kcache) PyUnicode_InternInPlace(&o);
  Py_XSETREF(e->o, Py_NewRef(o));
  e->len = (uint32_t)n;
  memcpy(e->b, s, n);
  return o;
}

static inline PyObject *key_text(const char *s, size_t n) {
  if (n > KC_MAXLEN || n == 0) return text(s, n);
  return cached_text(kcache, s, n);
}

/* Short string values repeat too (class names, tags, words). */
#define VC_MAXLEN 16
static inline PyObject *value_text(const char *s, size_t n) {
  if (n > VC_MAXLEN || n == 0) return text(s, n);
  return cached_text(vcache, s, n);
}
