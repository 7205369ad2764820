/* utf8.c - the UTF-8 work the decoder does itself: text rows copied while
 * they are ASCII, and invalid UTF-8 repaired as TextDecoder does (with
 * utf8proc). Validation is simdjson's. */
#include "utf8.h"

#include <string.h>

#include <utf8proc.h>

/* Length of the maximal subpart of an ill-formed sequence starting at s
 * (Unicode 3.9 / WHATWG decoder): the bytes that could begin a valid
 * sequence are consumed together and replaced by one U+FFFD. */
static size_t maximal_subpart(const uint8_t *s, size_t len) {
  uint8_t c = s[0];
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else return 1;
  size_t i = 1;
  for (; i <= need && i < len; i++) {
    uint8_t b = s[i];
    if (b < lo || b > hi) break;
    lo = 0x80;
    hi = 0xBF;
  }
  return i;
}

uint8_t *rsc__utf8_repair(rsc_decoder *d, const uint8_t *s, size_t len, size_t *out_len) {
  /* Each bad byte may grow to 3 bytes of U+FFFD. */
  if (len > (SIZE_MAX - 1) / 3) return NULL;
  uint8_t *out = (uint8_t *)rsc__alloc(d, len * 3 + 1);
  if (!out) return NULL;
  size_t o = 0, i = 0;
  while (i < len) {
    if (s[i] < 0x80) {
      out[o++] = s[i++];
      continue;
    }
    utf8proc_int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate(s + i, (utf8proc_ssize_t)(len - i), &cp);
    if (n > 0 && utf8proc_codepoint_valid(cp)) {
      memcpy(out + o, s + i, (size_t)n);
      o += (size_t)n;
      i += (size_t)n;
      continue;
    }
    o += (size_t)utf8proc_encode_char(0xFFFD, out + o);
    i += maximal_subpart(s + i, len - i);
  }
  out[o] = 0;
  *out_len = o;
  return out;
}

/* Both below share one body: copy (text_node's copies) or only scan (text
 * gathered in place), the flag a constant at each inlined call. */
#define ASCII_INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__) && defined(__GNUC__)
#  include <immintrin.h>
#  define HAVE_ASCII_AVX2 1
/* 128 bytes a step, then 32, where the CPU has AVX2 (checked per call: a
 * load and a test of what libgcc read at start-up); the rest of the
 * library is built for baseline x86-64. */
__attribute__((target("avx2"))) ASCII_INLINE size_t ascii_run_avx2(uint8_t *dst, const uint8_t *s,
                                                                   size_t len, bool copy) {
  size_t i = 0;
  for (; len - i >= 128; i += 128) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
    __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
    __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
    __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
    if (_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, e)))) break;
    if (copy) {
      _mm256_storeu_si256((__m256i *)(dst + i), a);
      _mm256_storeu_si256((__m256i *)(dst + i + 32), b);
      _mm256_storeu_si256((__m256i *)(dst + i + 64), c);
      _mm256_storeu_si256((__m256i *)(dst + i + 96), e);
    }
  }
  for (; len - i >= 32; i += 32) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
    if (_mm256_movemask_epi8(a)) break;
    if (copy) _mm256_storeu_si256((__m256i *)(dst + i), a);
  }
  return i;
}
__attribute__((target("avx2"))) static size_t ascii_copy_avx2(uint8_t *dst, const uint8_t *s,
                                                              size_t len) {
  return ascii_run_avx2(dst, s, len, true);
}
__attribute__((target("avx2"))) static size_t ascii_scan_avx2(const uint8_t *s, size_t len) {
  return ascii_run_avx2(NULL, s, len, false);
}
#endif

ASCII_INLINE size_t ascii_run(uint8_t *dst, const uint8_t *s, size_t len, bool copy) {
  size_t i = 0;
#ifdef HAVE_ASCII_AVX2
  if (len >= 32 && __builtin_cpu_supports("avx2"))
    i = copy ? ascii_copy_avx2(dst, s, len) : ascii_scan_avx2(s, len);
#endif
  uint64_t w;
  for (; len - i >= 8; i += 8) {
    memcpy(&w, s + i, 8);
    if (w & 0x8080808080808080u) goto bytes;
    if (copy) memcpy(dst + i, &w, 8);
  }
  if (i == len) return len;
  if (len >= 8) { /* the last bytes, as the last 8 (those before are ASCII) */
    memcpy(&w, s + len - 8, 8);
    if (!(w & 0x8080808080808080u)) {
      if (copy) memcpy(dst + len - 8, &w, 8);
      return len;
    }
  }
bytes:
  for (; i < len && s[i] < 0x80; i++)
    if (copy) dst[i] = s[i];
  return i;
}

size_t rsc__ascii_copy(uint8_t *dst, const uint8_t *s, size_t len) {
  return ascii_run(dst, s, len, true);
}

size_t rsc__ascii_prefix(const uint8_t *s, size_t len) { return ascii_run(NULL, s, len, false); }

size_t rsc__utf16_units(const uint8_t *s, size_t len) {
  size_t units = 0;
  for (size_t i = 0; i < len; i++) {
    uint8_t c = s[i];
    if ((c & 0xC0) != 0x80) units += c >= 0xF0 ? 2 : 1;
  }
  return units;
}
