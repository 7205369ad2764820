/* _convert.c - the native half of the Python binding (compiled into the cffi
 * extension rscflight._rscflight by build_ffi.py).
 *
 * cffi gives Python the whole C API of include/rscflight.h (lib.*), one FFI
 * call per function. Converting a decoded graph that way would cost an FFI
 * call per node, so this file adds CPython functions of its own to the
 * extension module (rscpy_install, called once at import, registers them):
 * they decode with the GIL released and then walk the decoder's values with
 * the library's bulk views (rsc_node_views), building Python objects
 * directly. The walk keeps an explicit job stack (graphs can be 10^5 deep):
 * a container is created empty when first met, remembered by identity (so
 * shared values stay shared and cycles close), and filled later.
 *
 * The Python classes (Element, Lazy, ...) live in rscflight/_types.py; they
 * are handed over once (_set_types) and instances of the __slots__ classes
 * are created without calling __init__, their slots written by offset. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifdef Py_LIMITED_API
#error "_convert.c needs the full CPython API (build_ffi.py defines _CFFI_NO_LIMITED_API)"
#endif
#include <datetime.h>
#include <structmember.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_TEXT_AVX2 1
#endif

#include "rscflight.h"

/* ---- the Python side's types ---------------------------------------------- */

enum { E_TYPE, E_KEY, E_PROPS, E_N };                       /* Element        */
enum { TH_ID, TH_STATUS, TH_VALUE, TH_REASON, TH_N };        /* Lazy, Promise  */
enum { CR_ID, CR_CHUNKS, CR_NAME, CR_ASYNC, CR_IMPORT_MAP, CR_N };          /* ClientReference */
enum { SR_ID, SR_BOUND, SR_N };                              /* ServerReference */
enum { BL_TYPE, BL_DATA, BL_N };                             /* Blob           */
enum { ST_KIND, ST_ITEMS, ST_STATUS, ST_VALUE, ST_REASON, ST_N }; /* Stream   */
enum { HI_CODE, HI_VALUE, HI_N };                            /* Hint           */
enum { DR_TAG, DR_ID, DR_TEXT, DR_N };                       /* DebugRow       */

typedef struct slotted {
  PyTypeObject *tp;
  Py_ssize_t off[6];
} slotted;

static struct {
  int ready;
  PyObject *undefined;
  slotted element, lazy, promise, chunk, client_ref, server_ref, blob, stream, hint, debug_row,
      iterator, temp_ref, function;
  PyObject *symbol_for;   /* Symbol.for_key (interns)                        */
  PyObject *big_int, *date_string, *map, *map_pairs, *set_items, *form_data, *server_error;
  PyObject *decode_error;
  PyObject *typed[13];    /* rsc_binary_kind -> class; ArrayBuffer, DataView: NULL */
  PyObject *typecode[13]; /* and (its array typecode,): ("f",), ...          */
  newfunc array_new;      /* array.array's own tp_new                        */
  PyObject *frombytes;    /* array.array.frombytes (a method descriptor)     */
  PyObject *borrowed;     /* one BorrowedBytes, lent out for each copy       */
  PyObject *utc;
  PyObject *s_status[5];  /* rsc_chunk_state -> "pending", ...               */
  PyObject *s_stream_kind[4];
  PyObject *s_stream_end[3];
  PyObject *s_digest;
  PyObject *s_closed;     /* "closed": a root the end of the stream rejected */
} T;

static PyTypeObject DecStateType; /* the streaming decoder's state, below */

/* The decoder's bytes, lent to array.array.frombytes through the buffer
 * protocol for the length of one call: a memoryview would cost two
 * objects per typed array, a bytes object a copy. */
typedef struct {
  PyObject_HEAD
  const void *bytes;
  Py_ssize_t len;
} BorrowedBytes;

static int bb_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  BorrowedBytes *b = (BorrowedBytes *)self;
  if (!b->bytes && b->len) {
    PyErr_SetString(PyExc_BufferError, "no bytes lent");
    return -1;
  }
  return PyBuffer_FillInfo(view, self, (void *)b->bytes, b->len, 1, flags);
}

static PyBufferProcs bb_as_buffer = {.bf_getbuffer = bb_getbuffer};

static PyTypeObject BorrowedBytesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rscflight._rscflight.BorrowedBytes",
    .tp_basicsize = sizeof(BorrowedBytes),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_as_buffer = &bb_as_buffer,
    .tp_doc = "the decoder's bytes for one copy (internal)",
};

static int slot_offsets(slotted *s, PyObject *ns, const char *cls, const char *const *names) {
  PyObject *c = PyDict_GetItemString(ns, cls);
  if (!c || !PyType_Check(c)) {
    PyErr_Format(PyExc_TypeError, "_set_types: %s is not a class", cls);
    return -1;
  }
  s->tp = (PyTypeObject *)c;
  Py_INCREF(c);
  for (int i = 0; names[i]; i++) {
    PyObject *d = PyObject_GetAttrString(c, names[i]);
    if (!d) return -1;
    int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
    if (ok) s->off[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    if (!ok) {
      PyErr_Format(PyExc_TypeError, "_set_types: %s.%s is not a __slots__ member", cls, names[i]);
      return -1;
    }
  }
  return 0;
}

/* A new instance of a __slots__ class, slots unset; NULL on error. */
static PyObject *new_slotted(const slotted *s) { return s->tp->tp_alloc(s->tp, 0); }

/* Sets slot i, stealing v (NULL: an error is pending, nothing set). */
static inline int set_slot(PyObject *o, const slotted *s, int i, PyObject *v) {
  if (!v) return -1;
  PyObject **p = (PyObject **)((char *)o + s->off[i]);
  Py_XSETREF(*p, v);
  return 0;
}
static inline PyObject *get_slot(PyObject *o, const slotted *s, int i) {
  return *(PyObject **)((char *)o + s->off[i]);
}

static PyObject *need(PyObject *ns, const char *name) {
  PyObject *o = PyDict_GetItemString(ns, name);
  if (!o) PyErr_Format(PyExc_KeyError, "_set_types: %s missing", name);
  Py_XINCREF(o);
  return o;
}

static PyObject *py_set_types(PyObject *self, PyObject *ns) {
  if (!PyDict_Check(ns)) {
    PyErr_SetString(PyExc_TypeError, "_set_types takes a dict");
    return NULL;
  }
  if (T.ready) Py_RETURN_NONE;
  static const char *const el[] = {"type", "key", "props", NULL};
  static const char *const th[] = {"id", "status", "value", "reason", NULL};
  static const char *const cr[] = {"id", "chunks", "name", "is_async", "import_map", NULL};
  static const char *const sr[] = {"id", "bound", NULL};
  static const char *const bl[] = {"type", "data", NULL};
  static const char *const st[] = {"kind", "items", "status", "value", "reason", NULL};
  static const char *const hi[] = {"code", "value", NULL};
  static const char *const dr[] = {"tag", "id", "text", NULL};
  static const char *const it[] = {"items", NULL};
  static const char *const tr[] = {"path", NULL};
  static const char *const fn[] = {"source", NULL};
  if (slot_offsets(&T.element, ns, "Element", el) || slot_offsets(&T.lazy, ns, "Lazy", th) ||
      slot_offsets(&T.promise, ns, "Promise", th) || slot_offsets(&T.chunk, ns, "Chunk", th) ||
      slot_offsets(&T.client_ref, ns, "ClientReference", cr) ||
      slot_offsets(&T.server_ref, ns, "ServerReference", sr) ||
      slot_offsets(&T.blob, ns, "Blob", bl) || slot_offsets(&T.stream, ns, "Stream", st) ||
      slot_offsets(&T.hint, ns, "Hint", hi) || slot_offsets(&T.debug_row, ns, "DebugRow", dr) ||
      slot_offsets(&T.iterator, ns, "Iterator", it) ||
      slot_offsets(&T.temp_ref, ns, "TemporaryReference", tr) ||
      slot_offsets(&T.function, ns, "Function", fn))
    return NULL;
  if (!(T.undefined = need(ns, "undefined")) || !(T.symbol_for = need(ns, "symbol_for")) ||
      !(T.big_int = need(ns, "BigInt")) || !(T.date_string = need(ns, "DateString")) ||
      !(T.map = need(ns, "Map")) || !(T.map_pairs = need(ns, "MapPairs")) || !(T.set_items = need(ns, "SetItems")) ||
      !(T.form_data = need(ns, "FormData")) || !(T.server_error = need(ns, "ServerError")) ||
      !(T.decode_error = need(ns, "DecodeError")))
    return NULL;
  for (int k = 0; k < 13; k++) {
    if (k == RSC_ARRAY_BUFFER || k == RSC_DATA_VIEW) continue;
    if (!(T.typed[k] = need(ns, rsc_binary_kind_name((rsc_binary_kind)k)))) return NULL;
    /* The classes are array.array subclasses whose __new__ (Python) only
     * byteswaps on big-endian hosts; on little-endian ones binary() calls
     * array.array's tp_new itself: no Python frame per typed array (a
     * third of loads on binary-heavy payloads). */
    PyTypeObject *cls = (PyTypeObject *)T.typed[k];
    PyObject *empty = PyObject_CallNoArgs(T.typed[k]);
    if (!empty) return NULL;
    PyObject *code = PyObject_GetAttrString(empty, "typecode");
    Py_DECREF(empty);
    if (!code || !PyUnicode_Check(code) || !cls->tp_base || !cls->tp_base->tp_new) {
      Py_XDECREF(code);
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "_set_types: a typed array class is not an array.array");
      return NULL;
    }
    T.typecode[k] = PyTuple_Pack(1, code);
    Py_DECREF(code);
    if (!T.typecode[k]) return NULL;
    T.array_new = cls->tp_base->tp_new;
  }
  /* The typed arrays' base: array.array, whose frombytes copies a buffer. */
  PyTypeObject *base = ((PyTypeObject *)T.typed[RSC_UINT8])->tp_base;
  if (!(T.frombytes = PyObject_GetAttrString((PyObject *)base, "frombytes"))) return NULL;
  if (PyType_Ready(&BorrowedBytesType) < 0) return NULL;
  if (!(T.borrowed = PyType_GenericNew(&BorrowedBytesType, NULL, NULL))) return NULL;
  PyDateTime_IMPORT;
  if (!PyDateTimeAPI) return NULL;
  T.utc = PyDateTime_TimeZone_UTC;
  Py_INCREF(T.utc);
  static const char *const status[] = {"pending", "blocked", "fulfilled", "rejected", "halted"};
  static const char *const skind[] = {"text", "bytes", "iterable", "iterator"};
  static const char *const send[] = {"open", "done", "errored"};
  for (int i = 0; i < 5; i++)
    if (!(T.s_status[i] = PyUnicode_InternFromString(status[i]))) return NULL;
  for (int i = 0; i < 4; i++)
    if (!(T.s_stream_kind[i] = PyUnicode_InternFromString(skind[i]))) return NULL;
  for (int i = 0; i < 3; i++)
    if (!(T.s_stream_end[i] = PyUnicode_InternFromString(send[i]))) return NULL;
  if (!(T.s_digest = PyUnicode_InternFromString("digest"))) return NULL;
  if (!(T.s_closed = PyUnicode_InternFromString("closed"))) return NULL;
  if (PyType_Ready(&DecStateType) < 0) return NULL;
  T.ready = 1;
  Py_RETURN_NONE;
}

/* ---- strings ---------------------------------------------------------------- */

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
#define TEXT_DIRECT_MIN 16

/* For n >= 16 bytes: the width their widest character needs (1: ASCII,
 * 2: up to U+00FF, 3: up to U+FFFF, 4: beyond; the lead bytes tell, as
 * valid UTF-8 has no overlong forms) and the number of continuation bytes
 * (10xxxxxx), so of characters. The last 16 bytes are read once more, their
 * first ones masked out of the count. */
static const uint8_t lane_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static inline int lanes_at_least(__m128i v, int byte) {
  return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8((char)byte)), v)) != 0;
}

#ifdef HAVE_TEXT_AVX2
/* Where the CPU has AVX2 (checked once, when the module is installed;
 * _text_avx2() turns it off for the tests), the scan's bulk and the fill's
 * runs of 2- and 4-byte characters go 32 bytes at a time. The scan: on long text it
 * was half of text(). Reads the 32-byte blocks of p[0..n)
 * and returns the bytes read (a multiple of 32); their widest byte goes in
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
  const __m256i form = _mm256_set1_epi32((int)0xC0C0C0F8), quad = _mm256_set1_epi32((int)0x808080F0),
                low6 = _mm256_set1_epi32(0x3F), top = _mm256_set1_epi32(0x10FFFF);
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
#endif

static int utf8_scan(const uint8_t *p, size_t n, size_t *cont) {
  const __m128i zero = _mm_setzero_si128(), below = _mm_set1_epi8(-64); /* 0x80..0xBF: -128..-65 */
  __m128i vmax = zero;
  size_t i = 0, c = 0;
#ifdef HAVE_TEXT_AVX2
  if (text_avx2 && n >= 64) i = scan_blocks_avx2(p, n, &vmax, &c);
#endif
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

static inline __attribute__((always_inline)) void put_char(void *out, size_t k, uint32_t ch, int kind) {
  if (kind == 1) ((uint8_t *)out)[k] = (uint8_t)ch;
  else if (kind == 2) ((uint16_t *)out)[k] = (uint16_t)ch;
  else ((uint32_t *)out)[k] = ch;
}

/* The character of 2 to 4 bytes at p[*i], whose lead byte is lead, into
 * *ch (continuation bytes taken as they are); *i moves past it. 0 if lead
 * cannot lead (C0, C1, F5-FF, or a continuation byte). */
static inline __attribute__((always_inline)) int utf8_take(const uint8_t *p, size_t *i, uint32_t lead,
                                                          uint32_t *ch) {
  const uint8_t *s = p + *i;
  if (lead < 0xE0) {
    if (lead < 0xC2) return 0;
    *ch = (lead & 0x1F) << 6 | (s[1] & 0x3Fu), *i += 2;
  } else if (lead < 0xF0) {
    *ch = (lead & 0x0F) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu), *i += 3;
  } else {
    if (lead > 0xF4) return 0;
    *ch = (lead & 0x07) << 18 | (s[1] & 0x3Fu) << 12 | (s[2] & 0x3Fu) << 6 | (s[3] & 0x3Fu), *i += 4;
  }
  return 1;
}

/* 16 ASCII bytes as 16 characters of `kind` bytes. */
static inline __attribute__((always_inline)) void put_ascii16(void *out, size_t k, __m128i v, int kind) {
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
#ifdef HAVE_TEXT_AVX2
    if (text_avx2 && n - i >= 32) i = run2_avx2(p, n, i, out, &k, kind);
#endif
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
    __m128i ch = _mm_or_si128(
        _mm_or_si128(_mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x07)), 18),
                     _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(v, 8), low6), 12)),
        _mm_or_si128(_mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(v, 16), low6), 6),
                     _mm_and_si128(_mm_srli_epi32(v, 24), low6)));
    if (_mm_movemask_epi8(_mm_cmpgt_epi32(ch, top))) break; /* F5-F7 leads */
    _mm_storeu_si128((__m128i *)((uint32_t *)out + k), ch);
    i += 16, k += 4;
#ifdef HAVE_TEXT_AVX2
    if (text_avx2 && n - i >= 32) i = run4_avx2(p, n, i, out, &k);
#endif
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
#ifdef HAVE_TEXT_AVX2
  if (text_avx2) i = ascii_copy_avx2(p, n, out);
#endif
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
#define ASCII_FIRST_MIN 64

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
    a = (uint64_t)(uint8_t)s[0] | (uint64_t)(uint8_t)s[n / 2] << 8 | (uint64_t)(uint8_t)s[n - 1] << 16;
    b = 0;
  }
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + n) * 0xFF51AFD7ED558CCDull;
  return (size_t)(h ^ (h >> 29) ^ (h >> 47));
}

/* a[0..n) == b[0..n) for 1 <= n <= KC_MAXLEN, by overlapping loads as
 * short_hash reads: a call to memcmp for the few bytes of a key or a class
 * name was a third of the cache's cost (feed-1mb: 3.4 % of loads). */
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

/* JavaScript numbers: integral values that a double holds exactly become
 * int (as json.loads gives for "5"); -0, NaN, infinities and the rest float. */
static inline PyObject *number(double v) {
  if (v >= -9007199254740992.0 && v <= 9007199254740992.0) {
    long long i = (long long)v;
    if ((double)i == v && (i != 0 || !signbit(v))) return PyLong_FromLongLong(i);
  }
  return PyFloat_FromDouble(v);
}

static int digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 1;
}

/* "$D" text: a datetime when it is what Date.prototype.toISOString writes
 * for years 1..9999 (YYYY-MM-DDTHH:MM:SS.sssZ), else the text as a
 * DateString (a str), so nothing is lost. */
static PyObject *date(const char *s, size_t n) {
  int y, mo, d, h, mi, se, ms;
  if (n == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
      s[19] == '.' && s[23] == 'Z' && digits(s, 4, &y) && digits(s + 5, 2, &mo) &&
      digits(s + 8, 2, &d) && digits(s + 11, 2, &h) && digits(s + 14, 2, &mi) &&
      digits(s + 17, 2, &se) && digits(s + 20, 3, &ms) && y >= 1 && mo >= 1 && mo <= 12 &&
      d >= 1 && d <= 31 && h < 24 && mi < 60 && se < 60) {
    PyObject *dt = PyDateTimeAPI->DateTime_FromDateAndTime(y, mo, d, h, mi, se, ms * 1000, T.utc,
                                                           PyDateTimeAPI->DateTimeType);
    if (dt) return dt;
    if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
    PyErr_Clear(); /* 2023-02-30 and the like */
  }
  PyObject *t = text(s, n);
  if (!t) return NULL;
  PyObject *r = PyObject_CallOneArg(T.date_string, t);
  Py_DECREF(t);
  return r;
}

/* ---- identity memo ---------------------------------------------------------- */

/* Kinds of memo entries beyond rsc_kind: one wrapper object per chunk. */
enum { MK_LAZY = 100, MK_PROMISE, MK_CHUNK };

/* identity -> Python object. The kind goes in the key's top byte (user
 * space pointers are below 2^56), so a Map and the array it was built from,
 * which share their items, stay two entries. 16-byte entries, linear
 * probing, load factor at most 1/2. */
typedef struct memo_ent {
  uint64_t key; /* 0: empty */
  PyObject *obj; /* strong */
} memo_ent;

typedef struct memo {
  memo_ent *e;
  size_t cap, count;
  /* 1: the memo owns a reference to each object (a streaming decoder keeps
   * its memo across calls). 0: borrowed, for one conversion whose result
   * holds every object it makes (loads), so nothing is dropped meanwhile. */
  int strong;
} memo;

static inline uint64_t memo_key(uintptr_t k, uint32_t kind) {
  return (uint64_t)k ^ ((uint64_t)kind << 56);
}

static inline size_t memo_hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

static inline PyObject *memo_get(const memo *m, uintptr_t k, uint32_t kind) {
  if (!m->cap) return NULL;
  uint64_t key = memo_key(k, kind);
  size_t mask = m->cap - 1, h = memo_hash(key) & mask;
  while (m->e[h].key) {
    if (m->e[h].key == key) return m->e[h].obj;
    h = (h + 1) & mask;
  }
  return NULL;
}

static int memo_grow(memo *m, size_t want) {
  /* A small first table: calloc clears it, and one loads of a small
   * payload remembers a handful of values. */
  size_t cap = m->cap ? m->cap : 64;
  while (cap < want * 2) cap *= 2;
  memo_ent *e = (memo_ent *)calloc(cap, sizeof *e);
  if (!e) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->e[i].key) continue;
    size_t h = memo_hash(m->e[i].key) & (cap - 1);
    while (e[h].key) h = (h + 1) & (cap - 1);
    e[h] = m->e[i];
  }
  free(m->e);
  m->e = e;
  m->cap = cap;
  return 0;
}

static inline int memo_reserve(memo *m, size_t want) {
  return want * 2 <= m->cap ? 0 : memo_grow(m, want);
}

/* Remembers obj (a new strong reference is taken). */
static int memo_put(memo *m, uintptr_t k, uint32_t kind, PyObject *obj) {
  if (memo_reserve(m, m->count + 1) < 0) return -1;
  uint64_t key = memo_key(k, kind);
  size_t mask = m->cap - 1, h = memo_hash(key) & mask;
  while (m->e[h].key) h = (h + 1) & mask;
  m->e[h].key = key;
  m->e[h].obj = m->strong ? Py_NewRef(obj) : obj;
  m->count++;
  return 0;
}

static void memo_clear(memo *m) {
  /* Decref after detaching: a destructor must not see a half-freed table. */
  memo_ent *e = m->e;
  size_t cap = m->cap;
  m->e = NULL;
  m->cap = m->count = 0;
  if (m->strong)
    for (size_t i = 0; i < cap; i++)
      if (e[i].key) Py_DECREF(e[i].obj);
  free(e);
}

/* ---- the walk ----------------------------------------------------------------- */

typedef struct job {
  const rsc_node *node;
  PyObject *obj; /* strong */
  uint32_t kind; /* rsc_kind, or MK_* */
  size_t len;
} job;

/* Containers that are still open (streams) or wrappers that may still
 * settle, for a streaming decoder to refresh after each feed. */
enum { LIVE_STREAM, LIVE_SERVER_REF };
typedef struct live {
  const rsc_node *node; /* pinned */
  PyObject *obj;        /* strong */
  int kind;             /* LIVE_*                                          */
} live;

typedef struct pydec pydec;

typedef struct conv {
  memo *m;
  job *jobs;
  size_t njobs, capjobs;
  rsc_view *views;
  size_t capviews;
  pydec *dec; /* a streaming decoder (open streams are tracked), or NULL */
  /* loads: remember only what can be met twice, a value a reference placed
   * (rsc_decoder_shares) or a chunk's own value (force); NULL: everything
   * (a streaming decoder converts as rows arrive, before later references
   * are known). A memo of every container missed the cache on each. */
  const rsc_decoder *shares;
  const rsc_node *force;
  /* A guard against a value met twice that shares did not name (a cycle
   * would convert forever): containers made without the memo, at most one
   * per 16 bytes the decoder allocated; past that loads starts again
   * remembering everything. */
  size_t unshared, unshared_max;
  int overrun;
  int share_none; /* tests: as if shares named nothing (the guard's test) */
} conv;

static int push_job(conv *c, const rsc_node *node, PyObject *obj, uint32_t kind, size_t len) {
  if (c->njobs == c->capjobs) {
    size_t cap = c->capjobs ? c->capjobs * 2 : 256;
    job *j = (job *)realloc(c->jobs, cap * sizeof *j);
    if (!j) {
      PyErr_NoMemory();
      return -1;
    }
    c->jobs = j;
    c->capjobs = cap;
  }
  c->jobs[c->njobs++] = (job){node, Py_NewRef(obj), kind, len};
  return 0;
}

static rsc_view *views(conv *c, size_t n) {
  if (n > c->capviews) {
    size_t cap = c->capviews ? c->capviews : 64;
    while (cap < n) cap *= 2;
    rsc_view *v = (rsc_view *)realloc(c->views, cap * sizeof *v);
    if (!v) {
      PyErr_NoMemory();
      return NULL;
    }
    c->views = v;
    c->capviews = cap;
  }
  return c->views;
}

static PyObject *get(conv *c, const rsc_view *v);
static int track(conv *c, const rsc_node *node, PyObject *obj, int kind);

static PyObject *get_node(conv *c, const rsc_node *n) {
  rsc_view v;
  rsc_node_view(n, &v);
  return get(c, &v);
}

/* Whether v (which has identity) goes in the memo. */
static inline int remembered(const conv *c, const rsc_view *v) {
  return !c->shares || v->node == c->force ||
         (!c->share_none && rsc_decoder_shares(c->shares, v->identity));
}

/* Puts o in the memo if v can be met again (rem: remembered(c, v), asked
 * once by get); -1 with an exception. */
static int remember(conv *c, const rsc_view *v, int rem, PyObject *o) {
  if (!v->identity) return 0;
  if (rem) return memo_put(c->m, v->identity, v->kind, o);
  if (++c->unshared <= c->unshared_max) return 0;
  c->overrun = 1;
  PyErr_SetString(PyExc_RuntimeError, "rscflight: conversion overran the decoded graph");
  return -1;
}

/* A chunk's own value: a root, a lazy's or promise's value, met through
 * its chunk as often as wrappers of the chunk are met. */
static PyObject *get_chunk_value(conv *c, const rsc_node *n) {
  const rsc_node *saved = c->force;
  c->force = n;
  PyObject *o = get_node(c, n);
  c->force = saved;
  return o;
}

/* Shell of a container: created empty, remembered, filled by a job. */
static PyObject *shell(conv *c, const rsc_view *v, int rem, PyObject *o, size_t len) {
  if (!o) return NULL;
  if (remember(c, v, rem, o) < 0) goto fail;
  if (len && push_job(c, v->node, o, v->kind, len) < 0) goto fail;
  return o;
fail:
  Py_DECREF(o);
  return NULL;
}

/* Kinds whose Python value hashes by value without surprises, or by
 * identity; a Map or Set of these becomes a dict or set. */
static int hashable_kind(rsc_kind k) {
  switch (k) {
  case RSC_NULL: case RSC_BOOL: case RSC_NUMBER: case RSC_STRING: case RSC_UNDEFINED:
  case RSC_NONE: case RSC_BIGINT: case RSC_DATE: case RSC_SYMBOL: case RSC_ELEMENT:
  case RSC_LAZY: case RSC_PROMISE: case RSC_CLIENT_REF: case RSC_SERVER_REF:
  case RSC_TEMP_REF: case RSC_BLOB: case RSC_ITERATOR: case RSC_STREAM:
    return 1;
  default:
    return 0;
  }
}

/* Kinds that become Python values compared by value (all others are
 * objects compared by identity, which cannot collide). They hold no other
 * value, so a throw-away copy drops nothing the memo knows. */
static int value_kind(rsc_kind k) {
  switch (k) {
  case RSC_NULL: case RSC_BOOL: case RSC_NUMBER: case RSC_STRING: case RSC_UNDEFINED:
  case RSC_NONE: case RSC_BIGINT: case RSC_DATE: case RSC_SYMBOL:
    return 1;
  default:
    return 0;
  }
}

/* JavaScript keeps 1, 1n and true apart in a Map or Set, Python does not;
 * two dates are two keys in JavaScript, one in Python when equal. Such a
 * collision (fewer distinct keys in Python) makes the ordered list type, as
 * unhashable keys do. The check runs on throw-away copies of the keys
 * compared by value, before anything is built. */
static PyObject *map_or_set(conv *c, const rsc_view *v, int rem) {
  int is_map = v->kind == RSC_MAP;
  size_t n = v->len, step = is_map ? 2 : 1;
  rsc_view *kv = NULL;
  PyObject *o = NULL, *seen = NULL;
  if (n) {
    kv = (rsc_view *)malloc(n * sizeof *kv);
    if (!kv) return PyErr_NoMemory();
    rsc_node_views(v->node, 0, kv, n);
  }
  int as_dict = 1;
  for (size_t i = 0; i < n && as_dict; i += step) as_dict = hashable_kind(kv[i].kind);
  if (as_dict && n) {
    if (!(seen = PySet_New(NULL))) goto fail;
    size_t fresh = 0;
    for (size_t i = 0; i < n; i += step) {
      if (!value_kind(kv[i].kind)) continue;
      PyObject *k = get(c, &kv[i]);
      int r = k ? PySet_Add(seen, k) : -1;
      Py_XDECREF(k);
      if (r < 0) goto fail;
      fresh++;
    }
    as_dict = (size_t)PySet_GET_SIZE(seen) == fresh;
    Py_CLEAR(seen);
  }
  if (as_dict) {
    o = is_map ? PyObject_CallNoArgs(T.map) : PySet_New(NULL);
    if (!o) goto fail;
    if (remember(c, v, rem, o) < 0) goto fail;
    /* keys and values now (containers among them are shells): complete */
    for (size_t i = 0; i < n; i += step) {
      PyObject *k = get(c, &kv[i]), *x = NULL;
      int r = -1;
      if (k && is_map && (x = get(c, &kv[i + 1]))) r = PyDict_SetItem(o, k, x);
      else if (k && !is_map) r = PySet_Add(o, k);
      Py_XDECREF(k);
      Py_XDECREF(x);
      if (r < 0) goto fail;
    }
  } else {
    o = shell(c, v, rem, PyObject_CallNoArgs(is_map ? T.map_pairs : T.set_items), n);
  }
  goto done;
fail:
  Py_XDECREF(seen);
  Py_CLEAR(o);
done:
  free(kv);
  return o;
}

static PyObject *binary(const rsc_view *v) {
  PyObject *b;
  if (v->sub == RSC_ARRAY_BUFFER || v->sub == RSC_DATA_VIEW) {
    b = PyByteArray_FromStringAndSize((const char *)v->bytes, (Py_ssize_t)v->bytes_len);
    if (!b || v->sub == RSC_ARRAY_BUFFER) return b;
    PyObject *mv = PyMemoryView_FromObject(b);
    Py_DECREF(b);
    return mv;
  }
  if (v->sub >= 13 || !T.typed[v->sub]) {
    PyErr_SetString(PyExc_ValueError, "unknown binary kind");
    return NULL;
  }
#if PY_BIG_ENDIAN
  b = PyBytes_FromStringAndSize((const char *)v->bytes, (Py_ssize_t)v->bytes_len);
  if (!b) return NULL;
  PyObject *r = PyObject_CallOneArg(T.typed[v->sub], b); /* __new__ byteswaps */
  Py_DECREF(b);
  return r;
#else
  /* An empty array, then the decoder's bytes copied in once, lent through
   * BorrowedBytes (array.array(code, bytes) would take a bytes copy first).
   * The lender is reused while nothing else holds it. */
  PyObject *r = T.array_new((PyTypeObject *)T.typed[v->sub], T.typecode[v->sub], NULL);
  if (!r || !v->bytes_len) return r;
  BorrowedBytes *lend = (BorrowedBytes *)T.borrowed;
  if (Py_REFCNT(T.borrowed) == 1) {
    Py_INCREF(T.borrowed);
  } else if (!(lend = PyObject_New(BorrowedBytes, &BorrowedBytesType))) {
    Py_DECREF(r);
    return NULL;
  }
  lend->bytes = v->bytes;
  lend->len = (Py_ssize_t)v->bytes_len;
  PyObject *args[2] = {r, (PyObject *)lend};
  PyObject *done = PyObject_Vectorcall(T.frombytes, args, 2, NULL);
  lend->bytes = NULL;
  lend->len = 0;
  Py_DECREF(lend);
  if (!done) {
    Py_DECREF(r);
    return NULL;
  }
  Py_DECREF(done);
  return r;
#endif
}

/* The class of a chunk's wrapper: Lazy, Promise or Chunk (MK_*). */
static const slotted *thenable_class(uint32_t mk) {
  return mk == MK_LAZY ? &T.lazy : mk == MK_PROMISE ? &T.promise : &T.chunk;
}

static PyObject *thenable(conv *c, const rsc_chunk *ch, uint32_t mk) {
  if (!ch) return Py_NewRef(T.undefined);
  PyObject *o = memo_get(c->m, (uintptr_t)ch, mk);
  if (o) return Py_NewRef(o);
  const slotted *s = thenable_class(mk);
  o = new_slotted(s);
  if (!o) return NULL;
  if (set_slot(o, s, TH_ID, PyLong_FromLongLong(rsc_chunk_id(ch))) < 0 ||
      set_slot(o, s, TH_STATUS, Py_NewRef(T.s_status[RSC_CHUNK_PENDING])) < 0 ||
      set_slot(o, s, TH_VALUE, Py_NewRef(Py_None)) < 0 ||
      set_slot(o, s, TH_REASON, Py_NewRef(Py_None)) < 0 ||
      memo_put(c->m, (uintptr_t)ch, mk, o) < 0 || push_job(c, (const rsc_node *)ch, o, mk, 1) < 0) {
    Py_DECREF(o);
    return NULL;
  }
  return o;
}

/* Sets a wrapper's status and value or reason from its chunk (a read: it
 * parses a chunk whose row arrived unparsed, as React's first read does). */
static int fill_thenable(conv *c, PyObject *o, const rsc_chunk *ch, uint32_t mk) {
  const slotted *s = thenable_class(mk);
  rsc_chunk_state st = rsc_chunk_status(ch);
  if ((unsigned)st > RSC_CHUNK_HALTED) st = RSC_CHUNK_PENDING;
  if (get_slot(o, s, TH_STATUS) == T.s_status[st] && st != RSC_CHUNK_PENDING &&
      st != RSC_CHUNK_BLOCKED)
    return 0; /* settled before: final */
  PyObject *value = Py_NewRef(Py_None), *reason = Py_NewRef(Py_None);
  if (st == RSC_CHUNK_FULFILLED) {
    Py_SETREF(value, get_chunk_value(c, rsc_chunk_value(ch)));
  } else if (st == RSC_CHUNK_REJECTED) {
    Py_SETREF(reason, get_node(c, rsc_chunk_reason(ch)));
  }
  if (!value || !reason) {
    Py_XDECREF(value);
    Py_XDECREF(reason);
    return -1;
  }
  set_slot(o, s, TH_VALUE, value);
  set_slot(o, s, TH_REASON, reason);
  set_slot(o, s, TH_STATUS, Py_NewRef(T.s_status[st]));
  return 0;
}

static PyObject *error_value(conv *c, const rsc_view *v) {
  PyObject *msg = text(v->str ? v->str : "", v->str_len);
  if (!msg) return NULL;
  PyObject *e = PyObject_CallOneArg(T.server_error, msg);
  Py_DECREF(msg);
  if (!e) return NULL;
  const rsc_node *dg = rsc_error_digest_node(v->node);
  if (dg) {
    PyObject *d = get_node(c, dg);
    if (!d || PyObject_SetAttr(e, T.s_digest, d) < 0) {
      Py_XDECREF(d);
      Py_DECREF(e);
      return NULL;
    }
    Py_DECREF(d);
  }
  return e;
}

/* One ClientReference per I row, one ServerReference per $h: the parts'
 * addresses stand for their identity (rsc_node_identity has none: the dump
 * writes them out in full each time). */
static PyObject *client_ref(conv *c, const rsc_view *v) {
  uintptr_t id = (uintptr_t)rsc_client_ref_metadata(v->node);
  PyObject *o = memo_get(c->m, id, RSC_CLIENT_REF);
  if (o) return Py_NewRef(o);
  o = new_slotted(&T.client_ref);
  if (!o) return NULL;
  if (set_slot(o, &T.client_ref, CR_ID, get_node(c, rsc_client_ref_id(v->node))) < 0 ||
      set_slot(o, &T.client_ref, CR_CHUNKS, get_node(c, rsc_client_ref_chunks(v->node))) < 0 ||
      set_slot(o, &T.client_ref, CR_NAME, get_node(c, rsc_client_ref_name(v->node))) < 0 ||
      set_slot(o, &T.client_ref, CR_ASYNC, PyBool_FromLong(rsc_client_ref_is_async(v->node))) < 0 ||
      set_slot(o, &T.client_ref, CR_IMPORT_MAP,
               rsc_client_ref_import_map(v->node) ? get_node(c, rsc_client_ref_import_map(v->node))
                                                  : Py_NewRef(Py_None)) < 0 ||
      memo_put(c->m, id, RSC_CLIENT_REF, o) < 0) {
    Py_DECREF(o);
    return NULL;
  }
  return o;
}

/* bound as the client holds it: a $@ promise's value once it fulfilled,
 * otherwise the promise (docs/spec/CANONICAL-DUMP.md 2). */
static PyObject *server_ref(conv *c, const rsc_view *v) {
  uintptr_t id = (uintptr_t)rsc_server_ref_id(v->node);
  PyObject *o = memo_get(c->m, id, RSC_SERVER_REF);
  if (o) return Py_NewRef(o);
  o = new_slotted(&T.server_ref);
  if (!o) return NULL;
  const rsc_node *bound = rsc_server_ref_bound(v->node);
  int waiting = 0;
  if (rsc_node_kind(bound) == RSC_PROMISE) {
    const rsc_chunk *ch = rsc_node_chunk(bound);
    rsc_chunk_state st = rsc_chunk_status(ch);
    if (st == RSC_CHUNK_FULFILLED) bound = rsc_chunk_value(ch);
    else waiting = st == RSC_CHUNK_PENDING || st == RSC_CHUNK_BLOCKED;
  }
  if (set_slot(o, &T.server_ref, SR_ID, get_node(c, rsc_server_ref_id(v->node))) < 0 ||
      set_slot(o, &T.server_ref, SR_BOUND, get_chunk_value(c, bound)) < 0 ||
      memo_put(c->m, id, RSC_SERVER_REF, o) < 0 ||
      (waiting && c->dec && track(c, v->node, o, LIVE_SERVER_REF) < 0)) {
    Py_DECREF(o);
    return NULL;
  }
  return o;
}

static PyObject *one_slot(const slotted *s, const char *str, size_t n) {
  PyObject *o = new_slotted(s);
  if (!o) return NULL;
  if (set_slot(o, s, 0, text(str ? str : "", n)) < 0) {
    Py_DECREF(o);
    return NULL;
  }
  return o;
}

/* The Python value for v: a new reference, or NULL with an exception. */
static PyObject *get(conv *c, const rsc_view *v) {
  PyObject *o;
  switch (v->kind) {
  case RSC_NULL: Py_RETURN_NONE;
  case RSC_BOOL: return PyBool_FromLong(v->boolean);
  case RSC_NUMBER: return number(v->number);
  case RSC_STRING: return value_text(v->str, v->str_len);
  case RSC_NONE: case RSC_UNDEFINED: return Py_NewRef(T.undefined);
  case RSC_BIGINT: {
    char small[64], *buf = v->str_len < sizeof small ? small : (char *)malloc(v->str_len + 1);
    if (!buf) return PyErr_NoMemory();
    memcpy(buf, v->str, v->str_len);
    buf[v->str_len] = 0;
    PyObject *i = PyLong_FromString(buf, NULL, 10);
    if (buf != small) free(buf);
    if (!i) return NULL;
    o = PyObject_CallOneArg(T.big_int, i);
    Py_DECREF(i);
    return o;
  }
  case RSC_DATE: return date(v->str, v->str_len);
  case RSC_SYMBOL: {
    PyObject *k = text(v->str, v->str_len);
    if (!k) return NULL;
    o = PyObject_CallOneArg(T.symbol_for, k);
    Py_DECREF(k);
    return o;
  }
  case RSC_TEMP_REF: return one_slot(&T.temp_ref, v->str, v->str_len);
  case RSC_FUNCTION: return one_slot(&T.function, v->str, v->str_len);
  case RSC_ERROR: return error_value(c, v);
  case RSC_CLIENT_REF: return client_ref(c, v);
  case RSC_SERVER_REF: return server_ref(c, v);
  case RSC_LAZY: return thenable(c, rsc_node_chunk(v->node), MK_LAZY);
  case RSC_PROMISE: return thenable(c, rsc_node_chunk(v->node), MK_PROMISE);
  default: break;
  }
  /* values with identity */
  int rem = v->identity && remembered(c, v);
  if (rem && (o = memo_get(c->m, v->identity, v->kind))) return Py_NewRef(o);
  switch (v->kind) {
  case RSC_ARRAY: return shell(c, v, rem, PyList_New((Py_ssize_t)v->len), v->len);
  case RSC_OBJECT: return shell(c, v, rem, _PyDict_NewPresized((Py_ssize_t)v->len), v->len);
  case RSC_ELEMENT: return shell(c, v, rem, new_slotted(&T.element), 1);
  case RSC_FORMDATA: return shell(c, v, rem, PyObject_CallNoArgs(T.form_data), v->len);
  case RSC_MAP: case RSC_SET: return map_or_set(c, v, rem);
  case RSC_ITERATOR: {
    o = new_slotted(&T.iterator);
    if (!o) return NULL;
    if (set_slot(o, &T.iterator, 0, PyList_New((Py_ssize_t)v->len)) < 0) {
      Py_DECREF(o);
      return NULL;
    }
    return shell(c, v, rem, o, v->len);
  }
  case RSC_STREAM: {
    o = new_slotted(&T.stream);
    if (!o) return NULL;
    if (set_slot(o, &T.stream, ST_KIND, Py_NewRef(T.s_stream_kind[v->sub & 3])) < 0 ||
        set_slot(o, &T.stream, ST_ITEMS, PyList_New(0)) < 0 ||
        set_slot(o, &T.stream, ST_STATUS, Py_NewRef(T.s_stream_end[0])) < 0 ||
        set_slot(o, &T.stream, ST_VALUE, Py_NewRef(Py_None)) < 0 ||
        set_slot(o, &T.stream, ST_REASON, Py_NewRef(Py_None)) < 0) {
      Py_DECREF(o);
      return NULL;
    }
    return shell(c, v, rem, o, 1);
  }
  case RSC_BLOB: {
    o = new_slotted(&T.blob);
    if (!o) return NULL;
    if (set_slot(o, &T.blob, BL_TYPE, text(v->str, v->str_len)) < 0 ||
        set_slot(o, &T.blob, BL_DATA,
                 PyBytes_FromStringAndSize((const char *)v->bytes, (Py_ssize_t)v->bytes_len)) < 0) {
      Py_DECREF(o);
      return NULL;
    }
    return shell(c, v, rem, o, 0);
  }
  case RSC_BINARY: return shell(c, v, rem, binary(v), 0);
  default:
    PyErr_Format(PyExc_ValueError, "rscflight: cannot convert a value of kind %s",
                 rsc_kind_name(v->kind));
    return NULL;
  }
}

/* Brings a stream's items up to date and sets how it ended. (An erroring
 * ReadableStream drops what no reader took: the list can shrink.) */
static int fill_stream(conv *c, const rsc_node *node, PyObject *o) {
  PyObject *items = get_slot(o, &T.stream, ST_ITEMS);
  size_t have = (size_t)PyList_GET_SIZE(items);
  size_t total = rsc_node_views(node, 0, NULL, 0);
  if (total < have) {
    if (PyList_SetSlice(items, (Py_ssize_t)total, (Py_ssize_t)have, NULL) < 0) return -1;
  } else if (total > have) {
    rsc_view *kv = (rsc_view *)malloc((total - have) * sizeof *kv);
    if (!kv) {
      PyErr_NoMemory();
      return -1;
    }
    rsc_node_views(node, have, kv, total - have);
    for (size_t i = 0; i < total - have; i++) {
      PyObject *x = get(c, &kv[i]);
      if (!x || PyList_Append(items, x) < 0) {
        Py_XDECREF(x);
        free(kv);
        return -1;
      }
      Py_DECREF(x);
    }
    free(kv);
  }
  rsc_stream_end end = rsc_stream_end_of(node);
  if ((unsigned)end > RSC_STREAM_ERRORED) end = RSC_STREAM_OPEN;
  if (end != RSC_STREAM_OPEN) {
    const rsc_node *ev = rsc_stream_end_value(node);
    PyObject *x = ev ? get_node(c, ev) : Py_NewRef(T.undefined);
    if (!x) return -1;
    set_slot(o, &T.stream, end == RSC_STREAM_DONE ? ST_VALUE : ST_REASON, x);
  }
  set_slot(o, &T.stream, ST_STATUS, Py_NewRef(T.s_stream_end[end]));
  if (end == RSC_STREAM_OPEN && c->dec) return track(c, node, o, LIVE_STREAM);
  return 0;
}

static int fill(conv *c, const job *j) {
  const rsc_node *node = j->node;
  PyObject *o = j->obj;
  switch (j->kind) {
  case RSC_ARRAY:
  case RSC_ITERATOR: {
    PyObject *list = j->kind == RSC_ARRAY ? o : get_slot(o, &T.iterator, 0);
    rsc_view *kv = views(c, j->len);
    if (!kv) return -1;
    size_t n = rsc_node_views(node, 0, kv, j->len);
    if (n > j->len) n = j->len;
    for (size_t i = 0; i < n; i++) {
      PyObject *x = get(c, &kv[i]);
      if (!x) return -1;
      PyList_SET_ITEM(list, (Py_ssize_t)i, x);
    }
    for (size_t i = n; i < j->len; i++) PyList_SET_ITEM(list, (Py_ssize_t)i, Py_NewRef(Py_None));
    return 0;
  }
  case RSC_OBJECT: {
    rsc_view *kv = views(c, j->len);
    if (!kv) return -1;
    size_t n = rsc_node_views(node, 0, kv, j->len);
    if (n > j->len) n = j->len;
    for (size_t i = 0; i < n; i++) {
      PyObject *k = key_text(kv[i].key, kv[i].key_len);
      if (!k) return -1;
      PyObject *x = get(c, &kv[i]);
      int r = x ? PyDict_SetItem(o, k, x) : -1;
      Py_DECREF(k);
      Py_XDECREF(x);
      if (r < 0) return -1;
    }
    return 0;
  }
  case RSC_ELEMENT:
    if (set_slot(o, &T.element, E_TYPE, get_node(c, rsc_element_type(node))) < 0 ||
        set_slot(o, &T.element, E_KEY, get_node(c, rsc_element_key(node))) < 0 ||
        set_slot(o, &T.element, E_PROPS, get_node(c, rsc_element_props(node))) < 0)
      return -1;
    return 0;
  case RSC_MAP:
  case RSC_SET:
  case RSC_FORMDATA: {
    /* MapPairs, SetItems, FormData (a Map as a dict or a set is complete) */
    rsc_view *kv = views(c, j->len);
    if (!kv) return -1;
    size_t n = rsc_node_views(node, 0, kv, j->len);
    if (n > j->len) n = j->len;
    size_t step = j->kind == RSC_SET ? 1 : 2;
    for (size_t i = 0; i + step <= n; i += step) {
      PyObject *k = get(c, &kv[i]);
      if (!k) return -1;
      PyObject *x = k;
      int r;
      if (step == 2) {
        PyObject *val = get(c, &kv[i + 1]);
        if (!val) {
          Py_DECREF(k);
          return -1;
        }
        x = PyTuple_Pack(2, k, val);
        Py_DECREF(k);
        Py_DECREF(val);
        if (!x) return -1;
      }
      r = PyList_Append(o, x);
      Py_DECREF(x);
      if (r < 0) return -1;
    }
    return 0;
  }
  case RSC_STREAM:
    return fill_stream(c, node, o);
  case MK_LAZY:
  case MK_PROMISE:
  case MK_CHUNK:
    return fill_thenable(c, o, (const rsc_chunk *)node, j->kind);
  default:
    return 0;
  }
}

/* Fills every container met so far (and those they meet). On an error the
 * remaining jobs are dropped; lists are completed with None so no list with
 * empty slots escapes to Python. */
static int drain(conv *c) {
  int rc = 0;
  while (c->njobs) {
    job j = c->jobs[--c->njobs];
    if (!rc && fill(c, &j) < 0) rc = -1;
    if (rc) {
      PyObject *list = j.kind == RSC_ARRAY ? j.obj
                       : j.kind == RSC_ITERATOR ? get_slot(j.obj, &T.iterator, 0) : NULL;
      if (list && PyList_Check(list))
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
          if (!PyList_GET_ITEM(list, i)) PyList_SET_ITEM(list, i, Py_NewRef(Py_None));
    }
    Py_DECREF(j.obj);
  }
  return rc;
}

/* The whole graph under n. The cyclic garbage collector is paused while
 * it is built: every object made is reachable from the result, so its
 * passes over them (each 700 allocations, and full ones as the heap grows)
 * would find nothing. */
static PyObject *convert(conv *c, const rsc_node *n) {
  int gc_was_on = PyGC_Disable();
  PyObject *o = get_chunk_value(c, n);
  if (drain(c) < 0) Py_CLEAR(o);
  if (gc_was_on) PyGC_Enable();
  return o;
}

static void conv_free(conv *c) {
  while (c->njobs) Py_DECREF(c->jobs[--c->njobs].obj);
  free(c->jobs);
  free(c->views);
  c->jobs = NULL;
  c->views = NULL;
  c->capjobs = c->capviews = 0;
}

/* ---- options and errors ------------------------------------------------------- */

/* A flag bit of _decode for tests only (never an RSC_OPT_* bit). */
#define PY_SHARE_NONE (1u << 31)
/* Two bits of the flags the Python layer passes carry rsc_options.bundler
 * (rscflight._flags' bundler=); they are no RSC_OPT_* bits. */
#define PY_BUNDLER_SHIFT 28
#define PY_BUNDLER_MASK (3u << PY_BUNDLER_SHIFT)

static int parse_options(PyObject *flags, PyObject *limits, rsc_options *opt) {
  rsc_options_init(opt);
  opt->flags = (uint32_t)PyLong_AsUnsignedLong(flags);
  if (PyErr_Occurred()) return -1;
  opt->bundler = (rsc_bundler)((opt->flags & PY_BUNDLER_MASK) >> PY_BUNDLER_SHIFT);
  opt->flags &= ~PY_BUNDLER_MASK;
  if (limits != Py_None) {
    unsigned long long l[6];
    if (!PyArg_ParseTuple(limits, "KKKKKK;limits must be 6 integers", &l[0], &l[1], &l[2], &l[3],
                          &l[4], &l[5]))
      return -1;
    if (l[0]) opt->limits.max_row_bytes = l[0];
    if (l[1]) opt->limits.max_total_bytes = l[1];
    if (l[2]) opt->limits.max_depth = (uint32_t)l[2];
    if (l[3]) opt->limits.max_nodes = l[3];
    if (l[4]) opt->limits.max_chunks = (uint32_t)l[4];
    if (l[5]) opt->limits.max_path_hops = (uint32_t)l[5];
  }
  return 0;
}

static PyObject *raise_decode_error(const rsc_error *e) {
  PyObject *row = e->row_id >= 0 ? PyLong_FromLongLong(e->row_id) : Py_NewRef(Py_None);
  PyObject *exc = row ? PyObject_CallFunction(T.decode_error, "sKOi", e->msg ? e->msg : "error",
                                              (unsigned long long)e->offset, row, (int)e->code)
                      : NULL;
  Py_XDECREF(row);
  if (exc) {
    PyErr_SetObject(T.decode_error, exc);
    Py_DECREF(exc);
  }
  return NULL;
}

/* Bytes from bytes-like objects, or UTF-8 from str. */
static int get_data(PyObject *data, Py_buffer *buf) {
  if (PyUnicode_Check(data)) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(data, &n);
    if (!s) return -1;
    return PyBuffer_FillInfo(buf, data, (void *)s, n, 1, PyBUF_SIMPLE);
  }
  return PyObject_GetBuffer(data, buf, PyBUF_SIMPLE);
}

static int check_ready(void) {
  if (!T.ready) PyErr_SetString(PyExc_RuntimeError, "rscflight: _set_types was not called");
  return T.ready;
}

/* Decodes a whole payload with the GIL released. NULL (exception set) when
 * memory ran out; a decoder error is left in the decoder. */
/* One-shot decodes (loads, canonical_dump) reuse a few decoders: a fresh
 * decoder touches fresh memory, and its page faults were up to half of a
 * decode. Decoders that read at most SMALL_BYTES are kept, and one that
 * read up to POOL_MAX_BYTES (its arenas and simdjson's buffers scale with
 * the payload: about 2.5x what it read, so at most ~20 MB held for the
 * next call). A 4 MB page faulted ~2,900 pages a loads when its decoder
 * was freed each time, ~820 pooled (the rest are Python's own objects):
 * 1.1-1.2x faster (docs/performance.md, twenty-third round). Past
 * POOL_MAX_BYTES a decoder is freed outright (free_decoder says why). The
 * pool is only touched with the GIL held. */
#define POOL_SIZE 2
#define SMALL_BYTES ((uint64_t)1 << 20)
#define POOL_MAX_BYTES ((uint64_t)8 << 20)
static struct {
  rsc_decoder *d;
  rsc_options opt;
} pool[POOL_SIZE];
static int pool_len;

static rsc_decoder *pool_take(const rsc_options *opt) {
  for (int i = pool_len; i-- > 0;)
    if (memcmp(&pool[i].opt, opt, sizeof *opt) == 0) {
      rsc_decoder *d = pool[i].d;
      pool[i] = pool[--pool_len];
      return d;
    }
  return NULL;
}

/* A bigger decoder (of loads, or of a streaming Decoder) is freed, and not
 * left in the slot where rsc_decoder_free keeps one for the next
 * rsc_decoder_new either: kept, it made loads of the 10 MB page 1.15x
 * slower (synth-4M 1.2x faster; a Decoder of the page 4,583 faults a
 * decode against 975-1,090).
 * glibc raises its trim threshold to twice the largest mapped block freed,
 * and a decoder that is never freed frees none (simdjson's 10 MB buffers
 * of the page's big row, here): the heap top that held the strings of the
 * last result, 15 MB, was then handed back to the kernel each time the
 * result went, and faulted in again by the next loads (2,160 faults a
 * call against 610). */
static void free_decoder(rsc_decoder *d) {
  int big = d && rsc_decoder_bytes(d) > SMALL_BYTES;
  rsc_decoder_free(d);
  if (big) rsc_release_memory();
}

static void pool_give(rsc_decoder *d, const rsc_options *opt) {
  uint64_t read = d ? rsc_decoder_bytes(d) : 0;
  int room = pool_len < POOL_SIZE && read <= POOL_MAX_BYTES;
  for (int i = 0; room && read > SMALL_BYTES && i < pool_len; i++)
    if (rsc_decoder_bytes(pool[i].d) > SMALL_BYTES) room = 0; /* one big one at most */
  if (d && room) {
    pool[pool_len].d = d;
    pool[pool_len].opt = *opt;
    pool_len++;
    return;
  }
  free_decoder(d);
}

/* hold: the data's buffer is left held in *hold (release it with
 * PyBuffer_Release once done with the decoder's values; hold->obj is NULL
 * when there is nothing to release). Payloads of at most SMALL_BYTES
 * then decode with RSC_OPT_BORROW_INPUT: text and binary rows point into
 * the data instead of being copied into the pooled decoder. Larger ones are
 * copied as before: there, borrowing made loads slower (the 10 MB page 0.7x,
 * docs/performance.md, eighth round): with no large block of the decoder's
 * freed, glibc kept trimming the heap the converted strings had used, and
 * each loads faulted it back in. NULL: the buffer is released here. */
static rsc_decoder *decode_all(PyObject *data, PyObject *flags, PyObject *limits,
                               uint32_t extra_flags, rsc_options *opt, Py_buffer *hold) {
  Py_buffer buf;
  if (!check_ready() || parse_options(flags, limits, opt) < 0 || get_data(data, &buf) < 0)
    return NULL;
  int borrow = hold && (uint64_t)buf.len <= SMALL_BYTES;
  opt->flags = (opt->flags & ~PY_SHARE_NONE) | extra_flags | (borrow ? RSC_OPT_BORROW_INPUT : 0);
  rsc_decoder *d = pool_take(opt);
  Py_BEGIN_ALLOW_THREADS
  if (d && rsc_decoder_reset(d) != RSC_OK) {
    rsc_decoder_free(d);
    d = NULL;
  }
  if (!d) d = rsc_decoder_new(opt);
  if (d) {
    rsc_decoder_feed(d, (const char *)buf.buf, (size_t)buf.len);
    rsc_decoder_finish(d);
  }
  Py_END_ALLOW_THREADS
  if (d && borrow) {
    *hold = buf;
  } else {
    PyBuffer_Release(&buf);
    if (hold) hold->obj = NULL;
  }
  if (!d) PyErr_NoMemory();
  return d;
}

/* What the end of the stream left unfinished (rsc_decoder_incomplete), for
 * IncompleteError: (offset, missing, cut, open streams), where missing holds
 * the ids never seen and the cut row's id, ascending, and cut is (id or
 * None, first byte) or None; None when the stream ended complete. */
static PyObject *incomplete_info(rsc_decoder *d) {
  const rsc_incomplete *inc = rsc_decoder_incomplete(d);
  if (!inc) Py_RETURN_NONE;
  PyObject *missing = PyList_New(0), *open = PyTuple_New((Py_ssize_t)inc->open_streams_len);
  PyObject *cut = NULL, *r = NULL;
  if (!missing || !open) goto done;
  int cut_listed = !inc->cut || inc->cut_id < 0;
  for (size_t i = 0; i <= inc->missing_len; i++) {
    int64_t id;
    if (i < inc->missing_len) {
      id = inc->missing[i];
      cut_listed |= id == inc->cut_id;
    } else if (!cut_listed) {
      id = inc->cut_id; /* sorted in below */
    } else {
      break;
    }
    PyObject *x = PyLong_FromLongLong(id);
    if (!x || PyList_Append(missing, x) < 0) {
      Py_XDECREF(x);
      goto done;
    }
    Py_DECREF(x);
  }
  if (PyList_Sort(missing) < 0) goto done;
  for (size_t i = 0; i < inc->open_streams_len; i++) {
    PyObject *x = PyLong_FromLongLong(inc->open_streams[i]);
    if (!x) goto done;
    PyTuple_SET_ITEM(open, (Py_ssize_t)i, x);
  }
  if (!inc->cut) cut = Py_NewRef(Py_None);
  else if (inc->cut_id >= 0)
    cut = Py_BuildValue("(LK)", (long long)inc->cut_id, (unsigned long long)inc->cut_offset);
  else cut = Py_BuildValue("(OK)", Py_None, (unsigned long long)inc->cut_offset);
  if (!cut) goto done;
  r = Py_BuildValue("(KNOO)", (unsigned long long)inc->offset, PyList_AsTuple(missing), cut, open);
done:
  Py_XDECREF(missing);
  Py_XDECREF(open);
  Py_XDECREF(cut);
  return r;
}

/* _decode(data, flags, limits) -> (status, value or reason, incomplete):
 * the root chunk after the whole payload, its value or reason converted;
 * status "closed" for a root the end of the stream rejected, and then (or
 * for any root that did not fulfil) incomplete_info. */
static PyObject *root_result(conv *c, rsc_decoder *d) {
  const rsc_chunk *root = rsc_decoder_root(d);
  rsc_chunk_state st = rsc_chunk_status(root);
  if ((unsigned)st > RSC_CHUNK_HALTED) st = RSC_CHUNK_PENDING;
  PyObject *value = NULL, *status = T.s_status[st], *info = NULL;
  if (st == RSC_CHUNK_FULFILLED) value = convert(c, rsc_chunk_value(root));
  else if (st == RSC_CHUNK_REJECTED) value = convert(c, rsc_chunk_reason(root));
  else value = Py_NewRef(Py_None);
  if (!value) return NULL;
  if (st == RSC_CHUNK_FULFILLED) {
    info = Py_NewRef(Py_None);
  } else {
    if (st == RSC_CHUNK_REJECTED && rsc_chunk_closed(root)) status = T.s_closed;
    info = incomplete_info(d);
  }
  PyObject *r = info ? PyTuple_Pack(3, status, value, info) : NULL;
  Py_DECREF(value);
  Py_XDECREF(info);
  return r;
}

static PyObject *py_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "_decode(data, flags, limits)");
    return NULL;
  }
  rsc_options opt;
  Py_buffer data; /* held while its text and binary rows are converted */
  rsc_decoder *d = decode_all(args[0], args[1], args[2], RSC_OPT_TRACK_SHARED, &opt, &data);
  if (!d) return NULL;
  const rsc_error *e = rsc_decoder_error(d);
  PyObject *r = NULL;
  if (e->code != RSC_OK) {
    raise_decode_error(e);
  } else {
    memo m = {NULL, 0, 0, 0}; /* borrowed: the result holds every object */
    conv c = {.m = &m, .shares = d};
    c.unshared_max = rsc_decoder_peak_memory(d) / 16 + 64;
    c.share_none = (PyLong_AsUnsignedLong(args[1]) & PY_SHARE_NONE) != 0;
    r = root_result(&c, d);
    if (!r && c.overrun) {
      /* A value met twice that rsc_decoder_shares did not name: a bug, but
       * not a wrong result. Again, remembering every value. */
      PyErr_Clear();
      conv_free(&c);
      memo_clear(&m);
      c.shares = NULL;
      c.overrun = 0;
      /* a start for this memo (it grows): about one value with identity per
       * 128 bytes of payload */
      if (memo_reserve(&m, (size_t)(rsc_decoder_bytes(d) / 128)) < 0) PyErr_Clear();
      r = root_result(&c, d);
    }
    conv_free(&c);
    memo_clear(&m);
  }
  /* The result holds no pointer into the decoder (loads converts all). */
  pool_give(d, &opt);
  if (data.obj) PyBuffer_Release(&data);
  return r;
}

static PyObject *dump_text(rsc_decoder *d, int pretty) {
  size_t n = 0;
  char *s = rsc_dump(d, pretty < 0 ? 0 : pretty, &n);
  if (!s) return PyErr_NoMemory();
  PyObject *r = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape");
  rsc_free(s);
  if (r && pretty == 0) { /* the CLI's --compact output ends with a newline */
    PyObject *nl = PyUnicode_FromStringAndSize("\n", 1);
    PyObject *t = nl ? PyUnicode_Concat(r, nl) : NULL;
    Py_XDECREF(nl);
    Py_SETREF(r, t);
  }
  return r;
}

/* _dump(data, flags, limits, pretty) -> the text `rscflight dump` prints
 * (pretty 2) or `rscflight dump --compact` (pretty 0); pretty -1: the
 * compact dump without the newline. */
static PyObject *py_dump(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "_dump(data, flags, limits, pretty)");
    return NULL;
  }
  int pretty = PyLong_AsLong(args[3]);
  if (pretty == -1 && PyErr_Occurred()) return NULL;
  rsc_options opt;
  rsc_decoder *d = decode_all(args[0], args[1], args[2], 0, &opt, NULL);
  if (!d) return NULL;
  PyObject *r;
  const rsc_error *e = rsc_decoder_error(d);
  if (e->code != RSC_OK) r = raise_decode_error(e);
  else r = dump_text(d, pretty);
  pool_give(d, &opt);
  return r;
}

/* ---- the streaming decoder ------------------------------------------------------ */

typedef struct ev_rec {
  int kind;
  int64_t chunk_id;
  const rsc_chunk *chunk;
  char tag;
  const rsc_node *value; /* pinned */
  char *text;            /* malloc'd copy */
  size_t text_len;
} ev_rec;

struct pydec {
  rsc_decoder *d;
  memo m;
  ev_rec *ev;
  size_t nev, capev;
  int oom;
  int busy;
  live *streams;
  size_t nstreams, capstreams;
};


/* The consumer hook: runs inside feed/finish with the GIL released, so it
 * only records. */
static int hook(void *ctx, const rsc_event *e) {
  pydec *p = (pydec *)ctx;
  if (p->nev == p->capev) {
    size_t cap = p->capev ? p->capev * 2 : 64;
    ev_rec *n = (ev_rec *)realloc(p->ev, cap * sizeof *n);
    if (!n) {
      p->oom = 1;
      return 1;
    }
    p->ev = n;
    p->capev = cap;
  }
  ev_rec *r = &p->ev[p->nev];
  memset(r, 0, sizeof *r);
  r->kind = e->kind;
  r->chunk_id = e->chunk_id;
  r->chunk = e->chunk;
  r->tag = e->tag;
  if (e->value) {
    r->value = rsc_node_pin(p->d, e->value);
    if (!r->value) {
      p->oom = 1;
      return 1;
    }
  }
  if (e->kind == RSC_EVENT_DEBUG_ROW || (e->kind == RSC_EVENT_HINT && e->text_len)) {
    r->text = (char *)malloc(e->text_len ? e->text_len : 1);
    if (!r->text) {
      p->oom = 1;
      return 1;
    }
    if (e->text_len) memcpy(r->text, e->text, e->text_len);
    r->text_len = e->text_len;
  }
  p->nev++;
  return 0;
}

/* Frees everything the decoder holds; p stays, closed (d NULL). */
static void pydec_clear(pydec *p) {
  for (size_t i = 0; i < p->nev; i++) free(p->ev[i].text);
  free(p->ev);
  p->ev = NULL;
  p->nev = p->capev = 0;
  live *s = p->streams;
  size_t n = p->nstreams;
  p->streams = NULL;
  p->nstreams = p->capstreams = 0;
  for (size_t i = 0; i < n; i++) Py_DECREF(s[i].obj);
  free(s);
  memo_clear(&p->m);
  free_decoder(p->d);
  p->d = NULL;
}

/* The decoder's state as an object the garbage collector sees through:
 * values handed out can refer back to their Decoder (a cycle through the
 * memo), so the memo is traversed and cleared like a container's items. */
typedef struct DecState {
  PyObject_HEAD
  pydec *p;
} DecState;

static int ds_traverse(PyObject *self, visitproc visit, void *arg) {
  pydec *p = ((DecState *)self)->p;
  if (!p) return 0;
  for (size_t i = 0; i < p->m.cap; i++)
    if (p->m.e[i].key) Py_VISIT(p->m.e[i].obj);
  for (size_t i = 0; i < p->nstreams; i++) Py_VISIT(p->streams[i].obj);
  return 0;
}

static int ds_clear(PyObject *self) {
  pydec *p = ((DecState *)self)->p;
  if (!p) return 0;
  live *s = p->streams;
  size_t n = p->nstreams;
  p->streams = NULL;
  p->nstreams = p->capstreams = 0;
  for (size_t i = 0; i < n; i++) Py_DECREF(s[i].obj);
  free(s);
  memo_clear(&p->m);
  return 0;
}

static void ds_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  pydec *p = ((DecState *)self)->p;
  ((DecState *)self)->p = NULL;
  if (p) {
    pydec_clear(p);
    free(p);
  }
  PyObject_GC_Del(self);
}

static PyTypeObject DecStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rscflight._rscflight.DecoderState",
    .tp_basicsize = sizeof(DecState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "a streaming decoder's C state (rscflight.Decoder holds one)",
    .tp_traverse = ds_traverse,
    .tp_clear = ds_clear,
    .tp_dealloc = ds_dealloc,
};

/* Keeps a value that may still change (an open stream, a server reference
 * whose bound promise has not settled) to refresh after each call. */
static int track(conv *c, const rsc_node *node, PyObject *obj, int kind) {
  pydec *p = c->dec;
  for (size_t i = 0; i < p->nstreams; i++)
    if (p->streams[i].obj == obj) return 0;
  if (p->nstreams == p->capstreams) {
    size_t cap = p->capstreams ? p->capstreams * 2 : 8;
    live *n = (live *)realloc(p->streams, cap * sizeof *n);
    if (!n) {
      PyErr_NoMemory();
      return -1;
    }
    p->streams = n;
    p->capstreams = cap;
  }
  const rsc_node *pinned = rsc_node_pin(p->d, node);
  if (!pinned) {
    PyErr_NoMemory();
    return -1;
  }
  p->streams[p->nstreams++] = (live){pinned, Py_NewRef(obj), kind};
  return 0;
}

static pydec *get_dec(PyObject *obj) {
  if (!Py_IS_TYPE(obj, &DecStateType)) {
    PyErr_SetString(PyExc_TypeError, "not a DecoderState");
    return NULL;
  }
  pydec *p = ((DecState *)obj)->p;
  if (!p || !p->d) {
    PyErr_SetString(PyExc_ValueError, "the decoder is closed");
    return NULL;
  }
  return p;
}

/* _dec_new(flags, limits) -> DecoderState */
static PyObject *py_dec_new(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_dec_new(flags, limits)");
    return NULL;
  }
  rsc_options opt;
  if (!check_ready() || parse_options(args[0], args[1], &opt) < 0) return NULL;
  pydec *p = (pydec *)calloc(1, sizeof *p);
  if (!p) return PyErr_NoMemory();
  p->m.strong = 1; /* kept across calls */
  opt.on_event = hook;
  opt.event_ctx = p;
  p->d = rsc_decoder_new(&opt);
  if (!p->d) {
    free(p);
    return PyErr_NoMemory();
  }
  DecState *st = PyObject_GC_New(DecState, &DecStateType);
  if (!st) {
    pydec_clear(p);
    free(p);
    return NULL;
  }
  st->p = p;
  PyObject_GC_Track((PyObject *)st);
  return (PyObject *)st;
}

/* Converts the events recorded since the last call into a list of
 * ("chunk", Chunk) / ("hint", Hint) / ("debug", DebugRow) tuples, refreshes
 * the wrappers (Lazy, Promise, Chunk) of chunks that settled and the
 * streams still open. */
static PyObject *take_events(pydec *p) {
  PyObject *out = PyList_New(0);
  if (!out) return NULL;
  conv c = {.m = &p->m, .dec = p};
  static PyObject *s_chunk, *s_hint, *s_debug;
  if (!s_chunk && (!(s_chunk = PyUnicode_InternFromString("chunk")) ||
                   !(s_hint = PyUnicode_InternFromString("hint")) ||
                   !(s_debug = PyUnicode_InternFromString("debug"))))
    goto fail;
  /* Conversions may parse chunks, which records more events: index, not
   * pointer, re-read nev each turn, and go round until nothing is new. */
  size_t i = 0;
again:
  for (; i < p->nev; i++) {
    ev_rec r = p->ev[i];
    PyObject *item = NULL;
    if (r.kind == RSC_EVENT_CHUNK_SETTLED) {
      static const uint32_t kinds[3] = {MK_LAZY, MK_PROMISE, MK_CHUNK};
      for (int k = 0; k < 3; k++) {
        PyObject *w = memo_get(&p->m, (uintptr_t)r.chunk, kinds[k]);
        if (w && (fill_thenable(&c, w, r.chunk, kinds[k]) < 0 || drain(&c) < 0)) goto fail;
      }
      if (r.chunk_id >= 0) {
        PyObject *ch = thenable(&c, r.chunk, MK_CHUNK);
        if (!ch || drain(&c) < 0) {
          Py_XDECREF(ch);
          goto fail;
        }
        item = PyTuple_Pack(2, s_chunk, ch);
        Py_DECREF(ch);
        if (!item) goto fail;
      }
    } else if (r.kind == RSC_EVENT_HINT) {
      PyObject *h = new_slotted(&T.hint);
      if (!h) goto fail;
      /* The code is the row's first character (a kept U+FEFF is one); a
       * byte that is no character on its own reads as U+FFFD, as React's
       * TextDecoder makes it. */
      if (set_slot(h, &T.hint, HI_CODE,
                   r.text_len ? PyUnicode_DecodeUTF8(r.text, (Py_ssize_t)r.text_len, "replace")
                              : PyUnicode_DecodeUTF8(&r.tag, 1, "replace")) < 0 ||
          set_slot(h, &T.hint, HI_VALUE, convert(&c, r.value)) < 0) {
        Py_DECREF(h);
        goto fail;
      }
      item = PyTuple_Pack(2, s_hint, h);
      Py_DECREF(h);
      if (!item) goto fail;
    } else if (r.kind == RSC_EVENT_DEBUG_ROW) {
      PyObject *dr = new_slotted(&T.debug_row);
      if (!dr) goto fail;
      if (set_slot(dr, &T.debug_row, DR_TAG, PyUnicode_FromStringAndSize(&r.tag, 1)) < 0 ||
          set_slot(dr, &T.debug_row, DR_ID,
                   r.chunk_id >= 0 ? PyLong_FromLongLong(r.chunk_id) : Py_NewRef(Py_None)) < 0 ||
          set_slot(dr, &T.debug_row, DR_TEXT,
                   PyUnicode_DecodeUTF8(r.text, (Py_ssize_t)r.text_len, "replace")) < 0) {
        Py_DECREF(dr);
        goto fail;
      }
      item = PyTuple_Pack(2, s_debug, dr);
      Py_DECREF(dr);
      if (!item) goto fail;
    }
    if (item) {
      int rc = PyList_Append(out, item);
      Py_DECREF(item);
      if (rc < 0) goto fail;
    }
  }
  /* open streams: new items, maybe an end; server references: bound */
  for (size_t k = 0; k < p->nstreams;) {
    live s = p->streams[k];
    int done;
    if (s.kind == LIVE_STREAM) {
      if (fill_stream(&c, s.node, s.obj) < 0 || drain(&c) < 0) goto fail;
      done = get_slot(s.obj, &T.stream, ST_STATUS) != T.s_stream_end[RSC_STREAM_OPEN];
    } else {
      const rsc_chunk *ch = rsc_node_chunk(rsc_server_ref_bound(s.node));
      rsc_chunk_state st = rsc_chunk_status(ch);
      done = st != RSC_CHUNK_PENDING && st != RSC_CHUNK_BLOCKED;
      if (st == RSC_CHUNK_FULFILLED &&
          (set_slot(s.obj, &T.server_ref, SR_BOUND, get_node(&c, rsc_chunk_value(ch))) < 0 ||
           drain(&c) < 0))
        goto fail;
    }
    if (done) {
      p->streams[k] = p->streams[--p->nstreams];
      Py_DECREF(s.obj);
    } else {
      k++;
    }
  }
  if (i < p->nev) goto again;
  for (size_t k = 0; k < p->nev; k++) free(p->ev[k].text);
  p->nev = 0;
  conv_free(&c);
  return out;
fail:
  for (size_t k = 0; k < p->nev; k++) free(p->ev[k].text);
  p->nev = 0;
  drain(&c);
  conv_free(&c);
  Py_DECREF(out);
  return NULL;
}

static PyObject *after_call(pydec *p) {
  if (p->oom) {
    p->oom = 0;
    return PyErr_NoMemory();
  }
  PyObject *events = take_events(p);
  if (!events) return NULL;
  const rsc_error *e = rsc_decoder_error(p->d);
  if (e->code != RSC_OK) {
    /* the events before the error are kept for the caller */
    PyObject *r = PyTuple_Pack(2, events, Py_False);
    Py_DECREF(events);
    return r;
  }
  PyObject *r = PyTuple_Pack(2, events, Py_True);
  Py_DECREF(events);
  return r;
}

static int enter(pydec *p) {
  if (p->busy) {
    PyErr_SetString(PyExc_RuntimeError, "the decoder is in use by another thread");
    return -1;
  }
  p->busy = 1;
  return 0;
}

/* _dec_feed(cap, data) -> (events, ok) */
static PyObject *py_dec_feed(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_dec_feed(decoder, data)");
    return NULL;
  }
  pydec *p = get_dec(args[0]);
  if (!p) return NULL;
  Py_buffer buf;
  if (get_data(args[1], &buf) < 0) return NULL;
  if (enter(p) < 0) {
    PyBuffer_Release(&buf);
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS
  rsc_decoder_feed(p->d, (const char *)buf.buf, (size_t)buf.len);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&buf);
  PyObject *r = after_call(p);
  p->busy = 0;
  return r;
}

/* Wrappers are refreshed when their chunk settles; a chunk that ends
 * blocked (waiting on a row that never came, with allow_partial) never
 * settles, so at the end every wrapper still pending reads its chunk once
 * more (one pass over the memo, once). */
static int refresh_unsettled(pydec *p) {
  /* First the list (a conversion may grow and rehash the memo), then the
   * refills. */
  typedef struct { PyObject *w; const rsc_chunk *ch; uint32_t mk; } stale;
  size_t n = 0;
  stale *list = (stale *)malloc((p->m.count + 1) * sizeof *list);
  if (!list) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < p->m.cap; i++) {
    uint64_t key = p->m.e[i].key;
    uint32_t mk = (uint32_t)(key >> 56);
    if (!key || (mk != MK_LAZY && mk != MK_PROMISE && mk != MK_CHUNK)) continue;
    const slotted *s = thenable_class(mk);
    PyObject *w = p->m.e[i].obj;
    if (get_slot(w, s, TH_STATUS) != T.s_status[RSC_CHUNK_PENDING]) continue;
    const rsc_chunk *ch = (const rsc_chunk *)(uintptr_t)(key & ((UINT64_C(1) << 56) - 1));
    list[n++] = (stale){Py_NewRef(w), ch, mk};
  }
  conv c = {.m = &p->m, .dec = p};
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (rc == 0 && (fill_thenable(&c, list[i].w, list[i].ch, list[i].mk) < 0 || drain(&c) < 0))
      rc = -1;
    Py_DECREF(list[i].w);
  }
  free(list);
  conv_free(&c);
  return rc;
}

/* _dec_finish(cap) -> (events, ok) */
static PyObject *py_dec_finish(PyObject *self, PyObject *cap) {
  pydec *p = get_dec(cap);
  if (!p || enter(p) < 0) return NULL;
  Py_BEGIN_ALLOW_THREADS
  rsc_decoder_finish(p->d);
  Py_END_ALLOW_THREADS
  PyObject *r = after_call(p);
  if (r && refresh_unsettled(p) < 0) Py_CLEAR(r);
  p->busy = 0;
  return r;
}

/* _dec_error(cap) -> None, or raises the sticky DecodeError */
static PyObject *py_dec_error(PyObject *self, PyObject *cap) {
  pydec *p = get_dec(cap);
  if (!p) return NULL;
  if (p->busy) {
    PyErr_SetString(PyExc_RuntimeError, "the decoder is in use by another thread");
    return NULL;
  }
  const rsc_error *e = rsc_decoder_error(p->d);
  if (e->code != RSC_OK) return raise_decode_error(e);
  Py_RETURN_NONE;
}

/* _dec_chunk(cap, id) -> (Chunk or None, events): a read, so it may parse. */
static PyObject *py_dec_chunk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_dec_chunk(decoder, id)");
    return NULL;
  }
  pydec *p = get_dec(args[0]);
  if (!p) return NULL;
  long long id = PyLong_AsLongLong(args[1]);
  if (id == -1 && PyErr_Occurred()) return NULL;
  if (enter(p) < 0) return NULL;
  PyObject *ch = NULL, *r = NULL;
  const rsc_chunk *c = rsc_decoder_chunk(p->d, id);
  if (c) {
    conv cv = {.m = &p->m, .dec = p};
    ch = thenable(&cv, c, MK_CHUNK);
    if (ch && (fill_thenable(&cv, ch, c, MK_CHUNK) < 0 || drain(&cv) < 0)) Py_CLEAR(ch);
    conv_free(&cv);
    if (!ch) goto done;
  } else {
    ch = Py_NewRef(Py_None);
  }
  PyObject *ev = after_call(p);
  if (ev) {
    r = PyTuple_Pack(2, ch, PyTuple_GET_ITEM(ev, 0));
    Py_DECREF(ev);
  }
  Py_DECREF(ch);
done:
  p->busy = 0;
  return r;
}

/* _dec_dump(cap, pretty) -> str */
static PyObject *py_dec_dump(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_dec_dump(decoder, pretty)");
    return NULL;
  }
  pydec *p = get_dec(args[0]);
  if (!p) return NULL;
  int pretty = PyLong_AsLong(args[1]);
  if (pretty == -1 && PyErr_Occurred()) return NULL;
  const rsc_error *e = rsc_decoder_error(p->d);
  if (e->code != RSC_OK) return raise_decode_error(e);
  if (enter(p) < 0) return NULL;
  PyObject *r = dump_text(p->d, pretty);
  p->busy = 0;
  return r;
}

/* _dec_info(cap) -> (is_dev, bytes fed, peak memory, chunk ids) */
static PyObject *py_dec_info(PyObject *self, PyObject *cap) {
  pydec *p = get_dec(cap);
  if (!p) return NULL;
  if (p->busy) {
    PyErr_SetString(PyExc_RuntimeError, "the decoder is in use by another thread");
    return NULL;
  }
  size_t n = rsc_decoder_chunk_count(p->d);
  PyObject *ids = PyList_New(0);
  if (!ids) return NULL;
  for (size_t i = 0; i < n; i++) {
    int64_t id = rsc_chunk_id(rsc_decoder_chunk_at(p->d, i));
    if (id < 0) continue;
    PyObject *x = PyLong_FromLongLong(id);
    if (!x || PyList_Append(ids, x) < 0) {
      Py_XDECREF(x);
      Py_DECREF(ids);
      return NULL;
    }
    Py_DECREF(x);
  }
  return Py_BuildValue("(OKKN)", rsc_decoder_is_dev(p->d) ? Py_True : Py_False,
                       (unsigned long long)rsc_decoder_bytes(p->d),
                       (unsigned long long)rsc_decoder_peak_memory(p->d), ids);
}

/* _dec_incomplete(cap) -> (root closed, incomplete_info): after finish. */
static PyObject *py_dec_incomplete(PyObject *self, PyObject *cap) {
  pydec *p = get_dec(cap);
  if (!p) return NULL;
  if (p->busy) {
    PyErr_SetString(PyExc_RuntimeError, "the decoder is in use by another thread");
    return NULL;
  }
  /* finish read the root: these reads parse nothing new */
  int closed = rsc_chunk_closed(rsc_decoder_root(p->d));
  PyObject *info = incomplete_info(p->d);
  if (!info) return NULL;
  return Py_BuildValue("(ON)", closed ? Py_True : Py_False, info);
}

/* _dec_close(cap): frees the decoder now; later calls raise ValueError. */
static PyObject *py_dec_close(PyObject *self, PyObject *obj) {
  if (!Py_IS_TYPE(obj, &DecStateType)) {
    PyErr_SetString(PyExc_TypeError, "not a DecoderState");
    return NULL;
  }
  pydec *p = ((DecState *)obj)->p;
  if (!p || !p->d) Py_RETURN_NONE;
  if (p->busy) {
    PyErr_SetString(PyExc_RuntimeError, "the decoder is in use by another thread");
    return NULL;
  }
  pydec_clear(p);
  Py_RETURN_NONE;
}

/* ---- registration ------------------------------------------------------------- */

/* release_memory(): the decoders loads keeps for the next call, and the
 * one rsc_decoder_free keeps in the library, freed. */
static PyObject *py_release_memory(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  while (pool_len > 0) rsc_decoder_free(pool[--pool_len].d);
  rsc_release_memory();
  Py_RETURN_NONE;
}

/* _pool(): the bytes each decoder kept by loads and canonical_dump read
 * (tests). */
static PyObject *py_pool(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  PyObject *t = PyTuple_New(pool_len);
  for (int i = 0; t && i < pool_len; i++) {
    PyObject *n = PyLong_FromUnsignedLongLong(rsc_decoder_bytes(pool[i].d));
    if (!n) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, n);
  }
  return t;
}

static PyMethodDef methods[] = {
    {"_set_types", (PyCFunction)py_set_types, METH_O, "hand over the Python classes (once)"},
    {"_decode", (PyCFunction)(void (*)(void))py_decode, METH_FASTCALL,
     "_decode(data, flags, limits) -> (root status, value or reason, incomplete)"},
    {"_dump", (PyCFunction)(void (*)(void))py_dump, METH_FASTCALL,
     "_dump(data, flags, limits, pretty) -> canonical dump text"},
    {"_dec_new", (PyCFunction)(void (*)(void))py_dec_new, METH_FASTCALL, NULL},
    {"_dec_feed", (PyCFunction)(void (*)(void))py_dec_feed, METH_FASTCALL, NULL},
    {"_dec_finish", (PyCFunction)py_dec_finish, METH_O, NULL},
    {"_dec_error", (PyCFunction)py_dec_error, METH_O, NULL},
    {"_dec_chunk", (PyCFunction)(void (*)(void))py_dec_chunk, METH_FASTCALL, NULL},
    {"_dec_dump", (PyCFunction)(void (*)(void))py_dec_dump, METH_FASTCALL, NULL},
    {"_dec_info", (PyCFunction)py_dec_info, METH_O, NULL},
    {"_dec_close", (PyCFunction)py_dec_close, METH_O, NULL},
    {"_dec_incomplete", (PyCFunction)py_dec_incomplete, METH_O, NULL},
    {"_release_memory", (PyCFunction)py_release_memory, METH_NOARGS,
     "free the decoders kept for the next decode"},
    {"_pool", (PyCFunction)py_pool, METH_NOARGS, "bytes read by each decoder kept (tests)"},
#ifdef HAVE_TEXT_AVX2
    {"_text_avx2", (PyCFunction)py_text_avx2, METH_O,
     "use AVX2 in the string scan and fill (where the CPU has it); returns the old setting (tests)"},
#endif
    {"_text_refused", (PyCFunction)py_text_refused, METH_NOARGS,
     "strings the direct UTF-8 path handed back to CPython's decoder (tests)"},
    {NULL, NULL, 0, NULL}};

/* Called once through cffi (which released the GIL for the call): adds the
 * functions above to the extension module `module_name`. 0 on success. */
int rscpy_install(const char *module_name) {
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = -1;
#ifdef HAVE_TEXT_AVX2
  text_avx2 = __builtin_cpu_supports("avx2");
#endif
  PyObject *m = PyImport_ImportModule(module_name);
  if (m) {
    if (PyObject_HasAttrString(m, "_decode")) rc = 0;
    else rc = PyModule_AddFunctions(m, methods);
    Py_DECREF(m);
  }
  if (rc < 0) PyErr_Print();
  PyGILState_Release(g);
  return rc;
}
