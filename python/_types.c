/* _types.c - the Python classes the binding builds (rscflight/_types.py),
 * handed over once by _set_types: where each __slots__ class keeps its
 * slots (instances are made without __init__ and filled by offset), the
 * other classes and interned strings, and BorrowedBytes, which lends the
 * decoder's bytes to array.array for one copy. */

#include "_rscpy.h"

/* The decoder's bytes, lent to array.array.frombytes through the buffer
 * protocol for the length of one call: a memoryview would cost two
 * objects per typed array, a bytes object a copy. */
typedef struct {
  PyObject_HEAD const void *bytes;
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
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rscflight._rscflight.BorrowedBytes",
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
      !(T.map = need(ns, "Map")) || !(T.map_pairs = need(ns, "MapPairs")) ||
      !(T.set_items = need(ns, "SetItems")) || !(T.form_data = need(ns, "FormData")) ||
      !(T.server_error = need(ns, "ServerError")) || !(T.decode_error = need(ns, "DecodeError")))
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
