/* _rscpy.h - what the C files of the Python binding share.
 *
 * cffi gives Python the whole C API of include/rscflight.h (lib.*), one FFI
 * call per function. Converting a decoded graph that way would cost an FFI
 * call per node, so the binding adds CPython functions of its own to the
 * extension module rscflight._rscflight (rscpy_install, called once at
 * import, registers them): they decode with the GIL released and then walk
 * the decoder's values with the library's bulk views (rsc_node_views),
 * building Python objects directly.
 *
 * The files, in the order build_ffi.py includes them into the extension's
 * one translation unit (so the string helpers inline into the walk; each
 * file uses what the earlier ones define):
 *   _types.c    the Python classes of rscflight/_types.py, handed over once
 *               (_set_types); instances of their __slots__ classes are made
 *               without __init__, their slots written by offset
 *   _text.c     UTF-8/WTF-8 -> str (SSE2, AVX2 where the CPU has it) and the
 *               caches of short keys and values
 *   _convert.c  the walk: decoded values -> Python objects, with an identity
 *               memo so shared values stay shared and cycles close
 *   _dumps.c    the other direction for dumps: Python values -> builder
 *               values (rsc_build_*) -> Flight rows, in one walk
 *   _decoder.c  one-shot decodes (loads, canonical_dump) and their pool of
 *               decoders, the streaming Decoder, the module's function table
 *               and rscpy_install
 * The one call against that order: the walk keeps open streams and server
 * references of a streaming decoder through track(), in _decoder.c. */

#ifndef RSCPY_H
#define RSCPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifdef Py_LIMITED_API
#  error "the binding needs the full CPython API (build_ffi.py defines _CFFI_NO_LIMITED_API)"
#endif
#include <datetime.h>
#include <structmember.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#  include <emmintrin.h>
#endif
#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#  include <immintrin.h>
#  define HAVE_TEXT_AVX2 1
#endif

#include "rscflight.h"

/* ---- the Python side's types ---------------------------------------------- */

enum { E_TYPE, E_KEY, E_PROPS, E_N };                              /* Element        */
enum { TH_ID, TH_STATUS, TH_VALUE, TH_REASON, TH_N };              /* Lazy, Promise  */
enum { CR_ID, CR_CHUNKS, CR_NAME, CR_ASYNC, CR_IMPORT_MAP, CR_N }; /* ClientReference */
enum { SR_ID, SR_BOUND, SR_N };                                    /* ServerReference */
enum { BL_TYPE, BL_DATA, BL_N };                                   /* Blob           */
enum { ST_KIND, ST_ITEMS, ST_STATUS, ST_VALUE, ST_REASON, ST_N };  /* Stream   */
enum { HI_CODE, HI_VALUE, HI_N };                                  /* Hint           */
enum { DR_TAG, DR_ID, DR_TEXT, DR_N };                             /* DebugRow       */

typedef struct slotted {
  PyTypeObject *tp;
  Py_ssize_t off[6];
} slotted;

static struct {
  int ready;
  PyObject *undefined;
  slotted element, lazy, promise, chunk, client_ref, server_ref, blob, stream, hint, debug_row,
      iterator, temp_ref, function;
  PyObject *symbol_for; /* Symbol.for_key (interns)                        */
  PyObject *big_int, *date_string, *map, *map_pairs, *set_items, *form_data, *server_error;
  PyObject *decode_error;
  PyObject *typed[13];    /* rsc_binary_kind -> class; ArrayBuffer, DataView: NULL */
  PyObject *typecode[13]; /* and (its array typecode,): ("f",), ...          */
  newfunc array_new;      /* array.array's own tp_new                        */
  PyObject *frombytes;    /* array.array.frombytes (a method descriptor)     */
  PyObject *borrowed;     /* one BorrowedBytes, lent out for each copy       */
  PyObject *utc;
  PyObject *s_status[5]; /* rsc_chunk_state -> "pending", ...               */
  PyObject *s_stream_kind[4];
  PyObject *s_stream_end[3];
  PyObject *s_digest;
  PyObject *s_closed; /* "closed": a root the end of the stream rejected */
} T;                  /* filled once by _set_types (_types.c) */

/* The streaming decoder's state (_decoder.c), readied by _set_types. */
static PyTypeObject DecStateType;

/* _types.c */
static PyObject *new_slotted(const slotted *s);
static inline int set_slot(PyObject *o, const slotted *s, int i, PyObject *v);
static inline PyObject *get_slot(PyObject *o, const slotted *s, int i);
static PyObject *py_set_types(PyObject *self, PyObject *ns);

/* _text.c: a new str of the WTF-8 s[0..n), or NULL with an exception;
 * key_text and value_text go through the caches of short strings. */
static PyObject *text(const char *s, size_t n);
static inline PyObject *key_text(const char *s, size_t n);
static inline PyObject *value_text(const char *s, size_t n);
static PyObject *py_text_refused(PyObject *self, PyObject *unused);
#ifdef HAVE_TEXT_AVX2
static int text_avx2;
static PyObject *py_text_avx2(PyObject *self, PyObject *arg);
#endif

#endif
