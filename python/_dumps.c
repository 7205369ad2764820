/* _dumps.c - the other direction: Python values -> Flight, for dumps().
 *
 * One walk over the value in C that makes builder values (rsc_build_*)
 * for the types loads returns, then flushes the builder's rows; lazies and
 * promises met on the way settle after the rows that hold them are
 * flushed, as Suspense streams them. Where a value sits ("value['a'][0]")
 * is kept as a stack of path segments and only spelled out for an error:
 * the message names the value's type and that place. Nesting is bounded by
 * the builder's 4096 levels, so the C recursion is too. */

#include "_rscpy.h"

#define DUMPS_DEPTH 4096

/* A step of the path from the root: pre, then the key's repr or the index
 * (when there is one), then post. */
typedef struct dseg {
  const char *pre;
  PyObject *key; /* borrowed: the walk holds it while the segment is up */
  Py_ssize_t index;
  const char *post;
} dseg;

/* A lazy or promise written before its value: settled after a flush. */
typedef struct dlater {
  rsc_bval *p;
  PyObject *thenable;
  PyObject *where;
} dlater;

typedef struct dwalk {
  rsc_builder *b;
  PyObject *base; /* where the path starts: "value", or a lazy's place */
  dseg *path;
  size_t n_path, cap_path;
  PyObject **open; /* elements being walked: one that holds itself meets
                      itself again before it is made */
  size_t n_open, cap_open;
  PyObject **memo_keys;    /* values with identity made so far (held), and */
  rsc_bval **memo_vals;    /* their builder values: a value met again is the
                              same builder value, written once then named */
  size_t n_memo, cap_memo; /* cap a power of 2 */
  dlater *later;
  size_t n_later, cap_later;
  size_t depth;
} dwalk;

static PyTypeObject *d_symbol; /* Symbol (the class of T.symbol_for) */

static int d_grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *p = realloc(*arr, nc * elem);
  if (!p) {
    PyErr_NoMemory();
    return -1;
  }
  *arr = p;
  *cap = nc;
  return 0;
}

static int d_push(dwalk *w, const char *pre, PyObject *key, Py_ssize_t index, const char *post) {
  if (w->n_path == w->cap_path &&
      d_grow((void **)&w->path, &w->cap_path, w->n_path + 1, sizeof *w->path))
    return -1;
  w->path[w->n_path++] = (dseg){pre, key, index, post};
  return 0;
}

static inline void d_pop(dwalk *w) { w->n_path--; }

/* The place the walk is at, as a str ("value['a'][0]"), or NULL. */
static PyObject *d_where(dwalk *w) {
  PyObject *s = w->base;
  Py_INCREF(s);
  for (size_t i = 0; i < w->n_path && s; i++) {
    const dseg *g = &w->path[i];
    PyObject *piece;
    if (g->key) piece = PyUnicode_FromFormat("%s%R%s", g->pre, g->key, g->post);
    else if (g->index >= 0) piece = PyUnicode_FromFormat("%s%zd%s", g->pre, g->index, g->post);
    else piece = PyUnicode_FromString(g->pre);
    if (!piece) {
      Py_CLEAR(s);
      break;
    }
    PyObject *t = PyUnicode_Concat(s, piece);
    Py_DECREF(piece);
    Py_SETREF(s, t);
  }
  return s;
}

/* TypeError "cannot write <type of v> at <where>[: why]"; returns NULL. */
static void *d_refuse(dwalk *w, PyObject *v, const char *why) {
  PyObject *where = d_where(w);
  if (!where) return NULL;
  PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(v), "__name__");
  if (name)
    PyErr_Format(PyExc_TypeError, "rscflight.dumps: cannot write %S at %U%s%s", name, where,
                 why ? ": " : "", why ? why : "");
  Py_XDECREF(name);
  Py_DECREF(where);
  return NULL;
}

/* The builder refused a call: MemoryError or ValueError naming the code. */
static void *d_refused(dwalk *w, rsc_status st) {
  PyObject *where = d_where(w);
  if (!where) return NULL;
  if (st == RSC_ERR_NOMEM) {
    PyErr_Format(PyExc_MemoryError, "rscflight.dumps: out of memory at %U", where);
  } else if (st == RSC_ERR_LIMIT) {
    PyErr_SetString(PyExc_ValueError, "rscflight.dumps: the value is nested deeper than the "
                                      "4096 levels the builder writes");
  } else {
    PyObject *code = PyLong_FromLong((long)st), *name = NULL;
    PyObject *names = code ? PyObject_GetAttrString(T.decode_error, "CODE_NAMES") : NULL;
    if (names) name = PyObject_CallMethod(names, "get", "OO", code, code);
    if (name)
      PyErr_Format(PyExc_ValueError, "rscflight.dumps: the builder refused the value at %U (%S)",
                   where, name);
    Py_XDECREF(code);
    Py_XDECREF(names);
    Py_XDECREF(name);
  }
  Py_DECREF(where);
  return NULL;
}

static inline rsc_bval *d_check(dwalk *w, rsc_bval *r) {
  return r ? r : (rsc_bval *)d_refused(w, rsc_builder_status(w->b));
}

static inline int d_ok(dwalk *w, rsc_status st) {
  if (st == RSC_OK) return 0;
  d_refused(w, st);
  return -1;
}

/* UTF-8 of a str, lone surrogates as WTF-8 (surrogatepass). *hold gets a
 * bytes object to release when the text is not the str's own. */
static const char *d_utf8(PyObject *s, Py_ssize_t *n, PyObject **hold) {
  *hold = NULL;
  if (PyUnicode_IS_ASCII(s)) {
    *n = PyUnicode_GET_LENGTH(s);
    return (const char *)PyUnicode_DATA(s);
  }
  const char *p = PyUnicode_AsUTF8AndSize(s, n);
  if (p) return p;
  if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return NULL;
  PyErr_Clear();
  if (!(*hold = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass"))) return NULL;
  *n = PyBytes_GET_SIZE(*hold);
  return PyBytes_AS_STRING(*hold);
}

/* A str wanted here (else TypeError at the current place). */
static const char *d_text(dwalk *w, PyObject *s, Py_ssize_t *n, PyObject **hold) {
  if (!PyUnicode_Check(s)) {
    *hold = NULL;
    return d_refuse(w, s, "a str is needed here");
  }
  return d_utf8(s, n, hold);
}

/* A str without NUL, for the builder's C strings. */
static const char *d_cstr(dwalk *w, PyObject *s, PyObject **hold) {
  Py_ssize_t n;
  const char *p = d_text(w, s, &n, hold);
  if (p && memchr(p, 0, (size_t)n)) {
    Py_CLEAR(*hold);
    return d_refuse(w, s, "a NUL character cannot be written here");
  }
  return p;
}

static rsc_bval *d_value(dwalk *w, PyObject *v);

/* ---- identity: an open-addressing table of the values made ---------------- */

static inline size_t d_hash(PyObject *v, size_t cap) {
  return (size_t)(((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static rsc_bval *d_seen(dwalk *w, PyObject *v) {
  if (!w->n_memo) return NULL;
  for (size_t i = d_hash(v, w->cap_memo);; i = (i + 1) & (w->cap_memo - 1)) {
    if (w->memo_keys[i] == v) return w->memo_vals[i];
    if (!w->memo_keys[i]) return NULL;
  }
}

/* Remembers that v made r (r, or NULL when v could not be held). */
static rsc_bval *d_keep(dwalk *w, PyObject *v, rsc_bval *r) {
  if (!r) return NULL;
  if (2 * (w->n_memo + 1) > w->cap_memo) {
    size_t cap = w->cap_memo ? w->cap_memo * 2 : 64;
    PyObject **keys = (PyObject **)calloc(cap, sizeof *keys);
    rsc_bval **vals = (rsc_bval **)calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      free(keys);
      free(vals);
      return (rsc_bval *)PyErr_NoMemory();
    }
    for (size_t i = 0; i < w->cap_memo; i++)
      if (w->memo_keys[i]) {
        size_t j = d_hash(w->memo_keys[i], cap);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = w->memo_keys[i];
        vals[j] = w->memo_vals[i];
      }
    free(w->memo_keys);
    free(w->memo_vals);
    w->memo_keys = keys;
    w->memo_vals = vals;
    w->cap_memo = cap;
  }
  size_t i = d_hash(v, w->cap_memo);
  while (w->memo_keys[i]) i = (i + 1) & (w->cap_memo - 1);
  Py_INCREF(v);
  w->memo_keys[i] = v;
  w->memo_vals[i] = r;
  w->n_memo++;
  return r;
}

/* d_value of a slot or item at a segment of the path. */
static rsc_bval *d_at(dwalk *w, PyObject *v, const char *pre, PyObject *key, Py_ssize_t index,
                      const char *post) {
  if (d_push(w, pre, key, index, post)) return NULL;
  rsc_bval *r = d_value(w, v);
  d_pop(w);
  return r;
}

static rsc_bval *d_int(dwalk *w, PyObject *v) {
  int overflow;
  long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (!overflow && i >= -(1LL << 53) && i <= (1LL << 53))
    return d_check(w, rsc_build_number(w->b, (double)i));
  if (i == -1 && PyErr_Occurred()) return NULL;
  double f = PyLong_AsDouble(v);
  int exact = 0;
  if (f == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
    PyErr_Clear();
  } else {
    PyObject *fo = PyFloat_FromDouble(f);
    if (!fo) return NULL;
    exact = PyObject_RichCompareBool(fo, v, Py_EQ);
    Py_DECREF(fo);
    if (exact < 0) return NULL;
  }
  if (exact) return d_check(w, rsc_build_number(w->b, f));
  PyObject *why = PyUnicode_FromFormat("%S is not a double (a BigInt is)", v);
  if (!why) return NULL;
  d_refuse(w, v, PyUnicode_AsUTF8(why));
  Py_DECREF(why);
  return NULL;
}

static rsc_bval *d_bigint(dwalk *w, PyObject *v) {
  PyObject *s = PyLong_Type.tp_repr(v); /* int.__repr__: the digits */
  if (!s) return NULL;
  Py_ssize_t n;
  const char *p = PyUnicode_AsUTF8AndSize(s, &n);
  rsc_bval *r = p ? d_check(w, rsc_build_bigint(w->b, p, (size_t)n)) : NULL;
  Py_DECREF(s);
  return r;
}

/* Date.prototype.toJSON of a datetime: UTC (an aware one converted),
 * milliseconds. */
static rsc_bval *d_datetime(dwalk *w, PyObject *v) {
  PyObject *dt = v;
  Py_INCREF(dt);
  if (PyDateTime_DATE_GET_TZINFO(v) != Py_None) {
    Py_SETREF(dt, PyObject_CallMethod(v, "astimezone", "O", T.utc));
    if (!dt) return NULL;
    if (!PyDateTime_Check(dt)) {
      Py_DECREF(dt);
      PyErr_SetString(PyExc_TypeError, "rscflight.dumps: astimezone did not give a datetime");
      return NULL;
    }
  }
  char s[64];
  int n = snprintf(s, sizeof s, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", PyDateTime_GET_YEAR(dt),
                   PyDateTime_GET_MONTH(dt), PyDateTime_GET_DAY(dt), PyDateTime_DATE_GET_HOUR(dt),
                   PyDateTime_DATE_GET_MINUTE(dt), PyDateTime_DATE_GET_SECOND(dt),
                   PyDateTime_DATE_GET_MICROSECOND(dt) / 1000);
  Py_DECREF(dt);
  return d_check(w, rsc_build_date(w->b, s, (size_t)n));
}

/* Bytes of a buffer as the payload has them: typed arrays' elements
 * little-endian. */
static rsc_bval *d_binary(dwalk *w, PyObject *v, rsc_binary_kind kind) {
  Py_buffer view;
  if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) return NULL;
  rsc_bval *r;
#if PY_BIG_ENDIAN
  Py_ssize_t size = kind == RSC_ARRAY_BUFFER ? 1 : ((PyObject *)v)->ob_type->tp_itemsize;
  if (kind != RSC_ARRAY_BUFFER && kind != RSC_DATA_VIEW) {
    PyObject *is = PyObject_GetAttrString(v, "itemsize");
    size = is ? PyLong_AsSsize_t(is) : -1;
    Py_XDECREF(is);
    if (size < 0) {
      PyBuffer_Release(&view);
      return NULL;
    }
  }
  if (size > 1) {
    char *c = (char *)malloc(view.len ? (size_t)view.len : 1);
    if (!c) {
      PyBuffer_Release(&view);
      return (rsc_bval *)PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i + size <= view.len; i += size)
      for (Py_ssize_t j = 0; j < size; j++) c[i + j] = ((const char *)view.buf)[i + size - 1 - j];
    r = d_check(w, rsc_build_binary(w->b, kind, c, (size_t)view.len));
    free(c);
    PyBuffer_Release(&view);
    return r;
  }
#endif
  r = d_check(w, rsc_build_binary(w->b, kind, view.buf, (size_t)view.len));
  PyBuffer_Release(&view);
  return r;
}

/* A reference with numeric ids: its metadata as JSON text,
 * json.dumps([id, chunks, name(, 1)]) without spaces (what webpack's
 * server writes), for rsc_build_client_ref_json. */
static rsc_bval *d_client_ref_json(dwalk *w, PyObject *id, PyObject *chunks, PyObject *name,
                                   PyObject *async) {
  int is_async = PyObject_IsTrue(async);
  if (is_async < 0) return NULL;
  rsc_bval *r = NULL;
  PyObject *json = PyImport_ImportModule("json");
  PyObject *fn = json ? PyObject_GetAttrString(json, "dumps") : NULL;
  PyObject *meta = is_async ? Py_BuildValue("[OOOi]", id, chunks, name, 1)
                            : Py_BuildValue("[OOO]", id, chunks, name);
  PyObject *args = meta ? PyTuple_Pack(1, meta) : NULL;
  PyObject *kw = Py_BuildValue("{s:(ss),s:O}", "separators", ",", ":", "ensure_ascii", Py_False);
  PyObject *text = fn && args && kw ? PyObject_Call(fn, args, kw) : NULL;
  Py_ssize_t len;
  const char *s = text ? PyUnicode_AsUTF8AndSize(text, &len) : NULL;
  if (s) r = d_check(w, rsc_build_client_ref_json(w->b, s, (size_t)len));
  Py_XDECREF(text);
  Py_XDECREF(kw);
  Py_XDECREF(args);
  Py_XDECREF(meta);
  Py_XDECREF(fn);
  Py_XDECREF(json);
  return r;
}

static rsc_bval *d_client_ref(dwalk *w, PyObject *v) {
  const slotted *s = &T.client_ref;
  PyObject *chunks = get_slot(v, s, CR_CHUNKS), *id = get_slot(v, s, CR_ID),
           *name = get_slot(v, s, CR_NAME), *async = get_slot(v, s, CR_ASYNC),
           *imap = get_slot(v, s, CR_IMPORT_MAP);
  if (!id || !chunks || !name || !async || !imap) {
    PyErr_SetString(PyExc_AttributeError, "rscflight.dumps: a ClientReference lacks a slot");
    return NULL;
  }
  if (imap != Py_None) return d_refuse(w, v, "Parcel's references (import_map) are not written");
  if (!PyList_Check(chunks)) return d_refuse(w, v, "chunks must be a list of str or int");
  Py_INCREF(chunks);
  Py_ssize_t n = PyList_GET_SIZE(chunks);
  PyObject **holds = NULL;
  const char **arr = NULL;
  rsc_bval *r = NULL;
  /* webpack's numeric module and chunk ids: the metadata as JSON text */
  int numeric = PyLong_CheckExact(id);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *c = PyList_GET_ITEM(chunks, i);
    if (PyLong_CheckExact(c)) {
      numeric = 1;
    } else if (!PyUnicode_Check(c)) {
      if (!d_push(w, ".chunks[", NULL, i, "]")) {
        d_refuse(w, c, "a reference's chunks are str or int");
        d_pop(w);
      }
      goto done;
    }
  }
  if (numeric) {
    if (!PyUnicode_Check(id) && !PyLong_CheckExact(id)) {
      if (!d_push(w, ".id", NULL, -1, "")) {
        d_refuse(w, id, "a reference's id is str or int");
        d_pop(w);
      }
      goto done;
    }
    r = d_client_ref_json(w, id, chunks, name, async);
    goto done;
  }
  holds = (PyObject **)calloc((size_t)n + 3, sizeof *holds);
  arr = (const char **)calloc((size_t)n + 1, sizeof *arr);
  if (!holds || !arr) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *c = PyList_GET_ITEM(chunks, i);
    if (d_push(w, ".chunks[", NULL, i, "]")) goto done;
    arr[i] = d_cstr(w, c, &holds[i]);
    d_pop(w);
    if (!arr[i]) goto done;
  }
  if (d_push(w, ".id", NULL, -1, "")) goto done;
  const char *cid = PyUnicode_Check(id) ? d_cstr(w, id, &holds[n])
                                        : d_refuse(w, id, "a reference's id is str or int");
  d_pop(w);
  if (!cid || d_push(w, ".name", NULL, -1, "")) goto done;
  const char *cname = d_cstr(w, name, &holds[n + 1]);
  d_pop(w);
  if (!cname) goto done;
  int is_async = PyObject_IsTrue(async);
  if (is_async < 0) goto done;
  r = d_check(w, rsc_build_client_ref(w->b, cid, n ? arr : NULL, (size_t)n, cname, is_async));
done:
  if (holds)
    for (Py_ssize_t i = 0; i < n + 3; i++) Py_XDECREF(holds[i]);
  free(holds);
  free((void *)arr);
  Py_DECREF(chunks);
  return r;
}

static rsc_bval *d_thenable(dwalk *w, PyObject *v, const slotted *s, int lazy) {
  PyObject *status = get_slot(v, s, TH_STATUS);
  int settled = 0;
  if (status && PyUnicode_Check(status))
    settled = PyUnicode_CompareWithASCIIString(status, "fulfilled") == 0 ||
              PyUnicode_CompareWithASCIIString(status, "rejected") == 0;
  if (!settled) {
    PyObject *why = PyUnicode_FromFormat("a %s %S has no value to write", lazy ? "Lazy" : "Promise",
                                         status ? status : Py_None);
    if (!why) return NULL;
    d_refuse(w, v, PyUnicode_AsUTF8(why));
    Py_DECREF(why);
    return NULL;
  }
  rsc_bval *p = d_check(w, lazy ? rsc_build_lazy(w->b) : rsc_build_promise(w->b));
  if (!p) return NULL;
  if (d_grow((void **)&w->later, &w->cap_later, w->n_later + 1, sizeof *w->later)) return NULL;
  PyObject *where = d_where(w);
  if (!where) return NULL;
  Py_INCREF(v);
  w->later[w->n_later++] = (dlater){p, v, where};
  return p;
}

static rsc_bval *d_element(dwalk *w, PyObject *v) {
  const slotted *s = &T.element;
  PyObject *ty = get_slot(v, s, E_TYPE), *key = get_slot(v, s, E_KEY),
           *props = get_slot(v, s, E_PROPS);
  if (!ty || !key || !props) {
    PyErr_SetString(PyExc_AttributeError, "rscflight.dumps: an Element lacks a slot");
    return NULL;
  }
  Py_INCREF(ty);
  Py_INCREF(key);
  Py_INCREF(props);
  rsc_bval *r = NULL, *tv = NULL, *pv = NULL;
  PyObject *hold = NULL;
  if (Py_IS_TYPE(ty, T.lazy.tp)) {
    /* The client's lazy for a client component: "$L" of its I row. */
    PyObject *st = get_slot(ty, &T.lazy, TH_STATUS), *val = get_slot(ty, &T.lazy, TH_VALUE);
    if (st && val && PyUnicode_Check(st) &&
        PyUnicode_CompareWithASCIIString(st, "fulfilled") == 0 &&
        Py_IS_TYPE(val, T.client_ref.tp)) {
      Py_INCREF(val);
      Py_SETREF(ty, val);
    }
  }
  if (d_push(w, ".type", NULL, -1, "")) goto done;
  if (!PyUnicode_Check(ty) && !Py_IS_TYPE(ty, T.client_ref.tp) && !Py_IS_TYPE(ty, d_symbol))
    d_refuse(w, ty, "an element's type is a str, a ClientReference or a Symbol");
  else tv = d_value(w, ty);
  d_pop(w);
  if (!tv) goto done;
  const char *k = NULL;
  Py_ssize_t kn = 0;
  if (key != Py_None) {
    if (d_push(w, ".key", NULL, -1, "")) goto done;
    k = d_text(w, key, &kn, &hold);
    d_pop(w);
    if (!k) goto done;
  }
  if (d_push(w, ".props", NULL, -1, "")) goto done;
  if (!PyDict_CheckExact(props)) d_refuse(w, props, "an element's props are a dict");
  else pv = d_value(w, props);
  d_pop(w);
  if (pv) r = d_check(w, rsc_build_element(w->b, tv, k, (size_t)kn, pv));
done:
  Py_XDECREF(hold);
  Py_DECREF(ty);
  Py_DECREF(key);
  Py_DECREF(props);
  return r;
}

static rsc_bval *d_dict(dwalk *w, PyObject *v) {
  rsc_bval *o = d_keep(w, v, d_check(w, rsc_build_object(w->b)));
  if (!o) return NULL;
  Py_ssize_t pos = 0;
  PyObject *k, *x;
  while (PyDict_Next(v, &pos, &k, &x)) {
    Py_INCREF(k);
    Py_INCREF(x);
    rsc_bval *xv = NULL;
    if (!PyUnicode_Check(k)) {
      if (!d_push(w, " key ", k, -1, "")) {
        d_refuse(w, k, "object keys are str (a Map holds other keys)");
        d_pop(w);
      }
    } else {
      xv = d_at(w, x, "[", k, -1, "]");
    }
    PyObject *hold = NULL;
    Py_ssize_t kn = 0;
    const char *kb = xv ? d_utf8(k, &kn, &hold) : NULL;
    int bad = !kb || d_ok(w, rsc_build_put(w->b, o, kb, (size_t)kn, xv));
    Py_XDECREF(hold);
    Py_DECREF(k);
    Py_DECREF(x);
    if (bad) return NULL;
  }
  return o;
}

static rsc_bval *d_list(dwalk *w, PyObject *v) {
  rsc_bval *a = d_keep(w, v, d_check(w, rsc_build_array(w->b)));
  if (!a) return NULL;
  int list = PyList_Check(v);
  for (Py_ssize_t i = 0; i < (list ? PyList_GET_SIZE(v) : PyTuple_GET_SIZE(v)); i++) {
    PyObject *x = list ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i);
    Py_INCREF(x);
    rsc_bval *xv = d_at(w, x, "[", NULL, i, "]");
    Py_DECREF(x);
    if (!xv || d_ok(w, rsc_build_push(w->b, a, xv))) return NULL;
  }
  return a;
}

/* k, x = pair, as Python unpacks it. */
static int d_unpack2(PyObject *pair, PyObject **k, PyObject **x) {
  if ((PyTuple_CheckExact(pair) && PyTuple_GET_SIZE(pair) == 2) ||
      (PyList_CheckExact(pair) && PyList_GET_SIZE(pair) == 2)) {
    *k = PySequence_Fast_GET_ITEM(pair, 0);
    *x = PySequence_Fast_GET_ITEM(pair, 1);
    Py_INCREF(*k);
    Py_INCREF(*x);
    return 0;
  }
  PyObject *it = PyObject_GetIter(pair);
  if (!it) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object",
                   Py_TYPE(pair)->tp_name);
    }
    return -1;
  }
  PyObject *got[3] = {NULL, NULL, NULL};
  int n = 0;
  while (n < 3 && (got[n] = PyIter_Next(it))) n++;
  Py_DECREF(it);
  if (PyErr_Occurred() || n != 2) {
    for (int i = 0; i < n; i++) Py_DECREF(got[i]);
    if (!PyErr_Occurred()) {
      if (n < 2)
        PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected 2, got %d)", n);
      else PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 2)");
    }
    return -1;
  }
  *k = got[0];
  *x = got[1];
  return 0;
}

static rsc_bval *d_map(dwalk *w, PyObject *v, int pairs) {
  rsc_bval *m = d_keep(w, v, d_check(w, rsc_build_map(w->b)));
  if (!m) return NULL;
  PyObject *seq = pairs ? v : PyObject_CallMethod(v, "items", NULL);
  if (!seq) return NULL;
  if (!pairs) {
    Py_SETREF(seq, PySequence_List(seq));
    if (!seq) return NULL;
  } else {
    Py_INCREF(seq);
  }
  rsc_bval *r = m;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seq); i++) {
    PyObject *pair = PyList_GET_ITEM(seq, i), *k, *x;
    Py_INCREF(pair);
    int bad = d_unpack2(pair, &k, &x);
    Py_DECREF(pair);
    if (bad) {
      r = NULL;
      break;
    }
    rsc_bval *kv = d_at(w, k, ".entries[", NULL, i, "].key");
    rsc_bval *xv = kv ? d_at(w, x, ".entries[", NULL, i, "].value") : NULL;
    Py_DECREF(k);
    Py_DECREF(x);
    if (!xv || d_ok(w, rsc_build_map_put(w->b, m, kv, xv))) {
      r = NULL;
      break;
    }
  }
  Py_DECREF(seq);
  return r;
}

static rsc_bval *d_set(dwalk *w, PyObject *v) {
  rsc_bval *s = d_keep(w, v, d_check(w, rsc_build_set(w->b)));
  if (!s) return NULL;
  PyObject *it = PyObject_GetIter(v), *x;
  if (!it) return NULL;
  Py_ssize_t i = 0;
  while ((x = PyIter_Next(it))) {
    rsc_bval *xv = d_at(w, x, ".values[", NULL, i++, "]");
    Py_DECREF(x);
    if (!xv || d_ok(w, rsc_build_push(w->b, s, xv))) {
      s = NULL;
      break;
    }
  }
  Py_DECREF(it);
  return PyErr_Occurred() ? NULL : s;
}

/* A digest for the builder: reason.digest when it is a str (else none).
 * 0, or -1 with an exception. */
static int d_digest(dwalk *w, PyObject *reason, const char **digest, PyObject **hold) {
  *digest = NULL;
  *hold = NULL;
  if (!reason) return 0;
  PyObject *d = PyObject_GetAttr(reason, T.s_digest);
  if (!d) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
  }
  int err = 0;
  if (PyUnicode_Check(d)) {
    if (d_push(w, ".reason.digest", NULL, -1, "")) err = -1;
    else {
      *digest = d_cstr(w, d, hold);
      d_pop(w);
      if (!*digest) err = -1;
    }
  }
  Py_DECREF(d);
  return err;
}

static rsc_bval *d_server_ref(dwalk *w, PyObject *v) {
  PyObject *id = get_slot(v, &T.server_ref, SR_ID), *bound = get_slot(v, &T.server_ref, SR_BOUND);
  if (!id || !bound) {
    PyErr_SetString(PyExc_AttributeError, "rscflight.dumps: a ServerReference lacks a slot");
    return NULL;
  }
  Py_INCREF(id);
  Py_INCREF(bound);
  rsc_bval *r = NULL, *bv = NULL;
  PyObject *hold = NULL;
  Py_ssize_t n = 0;
  const char *s = NULL;
  if (!d_push(w, ".id", NULL, -1, "")) {
    s = PyUnicode_Check(id) ? d_utf8(id, &n, &hold)
                            : d_refuse(w, id, "a server reference's id is a str");
    d_pop(w);
  }
  if (s && bound != Py_None) {
    if (!d_push(w, ".bound", NULL, -1, "")) {
      if (PyList_CheckExact(bound) || PyTuple_CheckExact(bound)) bv = d_value(w, bound);
      else d_refuse(w, bound, "bound is None or a list");
      d_pop(w);
    }
  }
  if (s && (bv || bound == Py_None)) r = d_check(w, rsc_build_server_ref(w->b, s, (size_t)n, bv));
  Py_XDECREF(hold);
  Py_DECREF(id);
  Py_DECREF(bound);
  return r;
}

static rsc_bval *d_blob(dwalk *w, PyObject *v) {
  PyObject *type = get_slot(v, &T.blob, BL_TYPE), *data = get_slot(v, &T.blob, BL_DATA);
  if (!type || !data) {
    PyErr_SetString(PyExc_AttributeError, "rscflight.dumps: a Blob lacks a slot");
    return NULL;
  }
  Py_INCREF(type);
  Py_INCREF(data);
  rsc_bval *r = NULL;
  PyObject *hold = NULL;
  Py_ssize_t n = 0;
  const char *s = NULL;
  if (!d_push(w, ".type", NULL, -1, "")) {
    s = d_text(w, type, &n, &hold);
    d_pop(w);
  }
  if (s) {
    Py_buffer view;
    if (!PyObject_CheckBuffer(data)) {
      if (!d_push(w, ".data", NULL, -1, "")) {
        d_refuse(w, data, "a Blob's data is bytes-like");
        d_pop(w);
      }
    } else if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) == 0) {
      r = d_check(w, rsc_build_blob(w->b, s, (size_t)n, view.buf, (size_t)view.len));
      PyBuffer_Release(&view);
    }
  }
  Py_XDECREF(hold);
  Py_DECREF(type);
  Py_DECREF(data);
  return r;
}

static rsc_bval *d_form_data(dwalk *w, PyObject *v) {
  rsc_bval *f = d_keep(w, v, d_check(w, rsc_build_form_data(w->b)));
  if (!f) return NULL;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
    PyObject *pair = PyList_GET_ITEM(v, i), *name, *x;
    Py_INCREF(pair);
    int bad = d_unpack2(pair, &name, &x);
    Py_DECREF(pair);
    if (bad) return NULL;
    PyObject *hold = NULL;
    Py_ssize_t n = 0;
    const char *s = NULL;
    rsc_bval *xv = NULL;
    if (!d_push(w, ".entries[", NULL, i, "].name")) {
      s = d_text(w, name, &n, &hold);
      d_pop(w);
    }
    if (s && !d_push(w, ".entries[", NULL, i, "].value")) {
      if (PyUnicode_Check(x) || Py_IS_TYPE(x, T.blob.tp)) xv = d_value(w, x);
      else d_refuse(w, x, "a FormData value is a str or a Blob");
      d_pop(w);
    }
    bad = !xv || d_ok(w, rsc_build_form_append(w->b, f, s, (size_t)n, xv));
    Py_XDECREF(hold);
    Py_DECREF(name);
    Py_DECREF(x);
    if (bad) return NULL;
  }
  return f;
}

/* The items of an Iterator or a Stream: a list. */
static PyObject *d_items(dwalk *w, PyObject *v, const slotted *s, int slot) {
  PyObject *items = get_slot(v, s, slot);
  if (!items || !PyList_Check(items)) {
    if (!d_push(w, ".items", NULL, -1, "")) {
      d_refuse(w, items ? items : Py_None, "items are a list");
      d_pop(w);
    }
    return NULL;
  }
  Py_INCREF(items);
  return items;
}

static rsc_bval *d_iterator(dwalk *w, PyObject *v) {
  PyObject *items = d_items(w, v, &T.iterator, 0);
  if (!items) return NULL;
  rsc_bval *it = d_keep(w, v, d_check(w, rsc_build_iterator(w->b)));
  for (Py_ssize_t i = 0; it && i < PyList_GET_SIZE(items); i++) {
    PyObject *x = PyList_GET_ITEM(items, i);
    Py_INCREF(x);
    rsc_bval *xv = d_at(w, x, ".items[", NULL, i, "]");
    Py_DECREF(x);
    if (!xv || d_ok(w, rsc_build_push(w->b, it, xv))) it = NULL;
  }
  Py_DECREF(items);
  return it;
}

static rsc_bval *d_stream(dwalk *w, PyObject *v) {
  static const char *const kinds[] = {"text", "bytes", "iterable", "iterator"};
  const slotted *sl = &T.stream;
  PyObject *kind = get_slot(v, sl, ST_KIND), *status = get_slot(v, sl, ST_STATUS);
  int k = -1, done = 0, errored = 0;
  for (int i = 0; i < 4 && kind && PyUnicode_Check(kind); i++)
    if (PyUnicode_CompareWithASCIIString(kind, kinds[i]) == 0) k = i;
  if (k < 0) return d_refuse(w, v, "a Stream's kind is text, bytes, iterable or iterator");
  if (status && PyUnicode_Check(status)) {
    done = PyUnicode_CompareWithASCIIString(status, "done") == 0;
    errored = PyUnicode_CompareWithASCIIString(status, "errored") == 0;
  }
  if (!done && !errored) {
    PyObject *why =
        PyUnicode_FromFormat("a Stream %S has no end to write", status ? status : Py_None);
    if (!why) return NULL;
    d_refuse(w, v, PyUnicode_AsUTF8(why));
    Py_DECREF(why);
    return NULL;
  }
  PyObject *items = d_items(w, v, sl, ST_ITEMS);
  if (!items) return NULL;
  rsc_bval *s = d_keep(w, v, d_check(w, rsc_build_stream(w->b, (rsc_stream_kind)k)));
  for (Py_ssize_t i = 0; s && i < PyList_GET_SIZE(items); i++) {
    PyObject *x = PyList_GET_ITEM(items, i);
    Py_INCREF(x);
    rsc_bval *xv = NULL;
    if (k == RSC_STREAM_BYTES) {
      /* a byte stream's items are its bytes, not values with identity */
      if (!d_push(w, ".items[", NULL, i, "]")) {
        Py_buffer view;
        if (!PyObject_CheckBuffer(x)) d_refuse(w, x, "a bytes Stream's items are bytes-like");
        else if (PyObject_GetBuffer(x, &view, PyBUF_SIMPLE) == 0) {
          xv = d_check(w, rsc_build_binary(w->b, RSC_UINT8, view.buf, (size_t)view.len));
          PyBuffer_Release(&view);
        }
        d_pop(w);
      }
    } else {
      xv = d_at(w, x, ".items[", NULL, i, "]");
    }
    Py_DECREF(x);
    if (!xv || d_ok(w, rsc_builder_stream_push(w->b, s, xv))) s = NULL;
  }
  Py_DECREF(items);
  if (!s) return NULL;
  if (errored) {
    const char *digest;
    PyObject *hold, *reason = get_slot(v, sl, ST_REASON);
    Py_XINCREF(reason);
    int bad =
        d_digest(w, reason, &digest, &hold) || d_ok(w, rsc_builder_stream_error(w->b, s, digest));
    Py_XDECREF(hold);
    Py_XDECREF(reason);
    return bad ? NULL : s;
  }
  /* An async iterable's or iterator's return value; a ReadableStream has
   * none (undefined). */
  PyObject *value = get_slot(v, sl, ST_VALUE);
  rsc_bval *ret = NULL;
  if (value && value != T.undefined && (k == RSC_STREAM_ITERABLE || k == RSC_STREAM_ITERATOR)) {
    Py_INCREF(value);
    ret = d_at(w, value, ".value", NULL, -1, "");
    Py_DECREF(value);
    if (!ret) return NULL;
  }
  return d_ok(w, rsc_builder_stream_close(w->b, s, ret)) ? NULL : s;
}

/* A container's walk. Containers are remembered as they are made, before
 * their items, so a cycle names the container; an element is made after
 * its props, so one met again while it is walked holds itself. */
static rsc_bval *d_container(dwalk *w, PyObject *v, int kind) {
  switch (kind) {
  case 0: return d_dict(w, v);
  case 1: return d_list(w, v);
  case 2: return d_map(w, v, 0);
  case 3: return d_map(w, v, 1);
  case 4: return d_set(w, v);
  case 6: return d_form_data(w, v);
  case 7: return d_iterator(w, v);
  case 8: return d_stream(w, v);
  default: break;
  }
  for (size_t i = 0; i < w->n_open; i++)
    if (w->open[i] == v) return d_refuse(w, v, "a cycle (the value holds itself)");
  if (d_grow((void **)&w->open, &w->cap_open, w->n_open + 1, sizeof *w->open)) return NULL;
  w->open[w->n_open++] = v;
  rsc_bval *r = d_keep(w, v, d_element(w, v));
  w->n_open--;
  return r;
}

static rsc_bval *d_value(dwalk *w, PyObject *v) {
  PyTypeObject *t = Py_TYPE(v);
  if (w->depth >= DUMPS_DEPTH) {
    PyErr_SetString(PyExc_ValueError, "rscflight.dumps: the value is nested deeper than the "
                                      "4096 levels the builder writes");
    return NULL;
  }
  rsc_builder *b = w->b;
  if (t == &PyUnicode_Type) {
    Py_ssize_t n;
    PyObject *hold;
    const char *s = d_utf8(v, &n, &hold);
    rsc_bval *r = s ? d_check(w, rsc_build_string(b, s, (size_t)n)) : NULL;
    Py_XDECREF(hold);
    return r;
  }
  if (v == Py_None) return d_check(w, rsc_build_null(b));
  if (v == T.undefined) return d_check(w, rsc_build_undefined(b));
  if (t == &PyBool_Type) return d_check(w, rsc_build_bool(b, v == Py_True));
  if (t == (PyTypeObject *)T.big_int) return d_bigint(w, v);
  if (t == &PyLong_Type) return d_int(w, v);
  if (t == &PyFloat_Type) return d_check(w, rsc_build_number(b, PyFloat_AS_DOUBLE(v)));
  if (t == (PyTypeObject *)T.date_string || PyUnicode_Check(v)) {
    Py_ssize_t n;
    PyObject *hold;
    const char *s = d_utf8(v, &n, &hold);
    rsc_bval *r = !s ? NULL
                  : t == (PyTypeObject *)T.date_string
                      ? d_check(w, rsc_build_date(b, s, (size_t)n))
                      : d_check(w, rsc_build_string(b, s, (size_t)n));
    Py_XDECREF(hold);
    return r;
  }
  rsc_bval *seen = d_seen(w, v);
  if (seen) return seen;
  int kind = -1;
  if (t == &PyDict_Type) kind = 0;
  else if (t == &PyList_Type || t == &PyTuple_Type) kind = 1;
  else if (t == T.element.tp) kind = 5;
  else if (t == (PyTypeObject *)T.map) kind = 2;
  else if (t == (PyTypeObject *)T.map_pairs) kind = 3;
  else if (t == &PySet_Type || t == &PyFrozenSet_Type || t == (PyTypeObject *)T.set_items) kind = 4;
  else if (t == (PyTypeObject *)T.form_data) kind = 6;
  else if (t == T.iterator.tp) kind = 7;
  else if (t == T.stream.tp) kind = 8;
  if (kind >= 0) {
    w->depth++;
    rsc_bval *r = d_container(w, v, kind);
    w->depth--;
    return r;
  }
  if (t == PyDateTimeAPI->DateTimeType) return d_datetime(w, v);
  if (t == d_symbol) {
    PyObject *key = PyObject_GetAttrString(v, "key"), *hold;
    if (!key) return NULL;
    Py_ssize_t n;
    const char *s = NULL;
    if (!d_push(w, ".key", NULL, -1, "")) {
      s = d_text(w, key, &n, &hold);
      d_pop(w);
    }
    rsc_bval *r = s ? d_check(w, rsc_build_symbol(b, s, (size_t)n)) : NULL;
    if (s) Py_XDECREF(hold);
    Py_DECREF(key);
    return r;
  }
  int is_error = PyObject_IsInstance(v, T.server_error);
  if (is_error < 0) return NULL;
  if (is_error) return d_keep(w, v, d_check(w, rsc_build_error(b)));
  if (t == T.client_ref.tp) return d_client_ref(w, v);
  if (t == T.lazy.tp) return d_keep(w, v, d_thenable(w, v, &T.lazy, 1));
  if (t == T.promise.tp) return d_keep(w, v, d_thenable(w, v, &T.promise, 0));
  if (t == T.server_ref.tp) return d_keep(w, v, d_server_ref(w, v));
  if (t == T.blob.tp) return d_keep(w, v, d_blob(w, v));
  for (int k = 0; k < 13; k++)
    if (T.typed[k] && t == (PyTypeObject *)T.typed[k])
      return d_keep(w, v, d_binary(w, v, (rsc_binary_kind)k));
  if (t == &PyBytes_Type || t == &PyByteArray_Type)
    return d_keep(w, v, d_binary(w, v, RSC_ARRAY_BUFFER));
  if (t == &PyMemoryView_Type) {
    PyObject *data = PyObject_CallMethod(v, "tobytes", NULL);
    if (!data) return NULL;
    rsc_bval *r = d_binary(w, data, RSC_DATA_VIEW);
    Py_DECREF(data);
    return d_keep(w, v, r);
  }
  return d_refuse(w, v, NULL);
}

/* The flushed rows go to a growing buffer. */
typedef struct dout {
  char *p;
  size_t len, cap;
} dout;

static int d_out(void *ctx, const char *s, size_t n) {
  dout *o = (dout *)ctx;
  if (o->len + n > o->cap) {
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + n) cap *= 2;
    char *q = (char *)realloc(o->p, cap);
    if (!q) return 1;
    o->p = q;
    o->cap = cap;
  }
  memcpy(o->p + o->len, s, n);
  o->len += n;
  return 0;
}

static int d_flush(dwalk *w, dout *o) {
  rsc_status st = rsc_builder_flush(w->b, d_out, o);
  if (st == RSC_ERR_USER) {
    PyErr_NoMemory();
    return -1;
  }
  return d_ok(w, st);
}

/* Settles the lazies and promises written so far; what their values hold
 * is settled in the next round. */
static int d_settle(dwalk *w, dout *o) {
  while (w->n_later) {
    size_t n = w->n_later;
    dlater *batch = (dlater *)malloc(n * sizeof *batch);
    if (!batch) {
      PyErr_NoMemory();
      return -1;
    }
    memcpy(batch, w->later, n * sizeof *batch);
    w->n_later = 0;
    int err = 0;
    for (size_t i = 0; i < n; i++) {
      dlater *l = &batch[i];
      if (!err) {
        const slotted *s = Py_IS_TYPE(l->thenable, T.lazy.tp) ? &T.lazy : &T.promise;
        PyObject *st = get_slot(l->thenable, s, TH_STATUS);
        Py_SETREF(w->base, l->where);
        l->where = NULL;
        w->n_path = 0;
        if (st && PyUnicode_Check(st) && PyUnicode_CompareWithASCIIString(st, "fulfilled") == 0) {
          PyObject *val = get_slot(l->thenable, s, TH_VALUE);
          if (!val) val = Py_None;
          Py_INCREF(val);
          rsc_bval *x = d_at(w, val, ".value", NULL, -1, "");
          Py_DECREF(val);
          err = !x || d_ok(w, rsc_builder_resolve(w->b, l->p, x));
        } else {
          PyObject *reason = get_slot(l->thenable, s, TH_REASON), *hold = NULL;
          const char *digest = NULL;
          Py_XINCREF(reason);
          err = d_digest(w, reason, &digest, &hold) ||
                d_ok(w, rsc_builder_reject(w->b, l->p, digest));
          Py_XDECREF(hold);
          Py_XDECREF(reason);
        }
      }
      Py_XDECREF(l->where);
      Py_DECREF(l->thenable);
    }
    free(batch);
    if (err) return -1;
    Py_SETREF(w->base, PyUnicode_FromString("value"));
    w->n_path = 0;
    if (!w->base || d_flush(w, o)) return -1;
  }
  return 0;
}

/* _dumps(value) -> bytes: the rows React 19.3.1's server writes for value. */
static PyObject *py_dumps(PyObject *self, PyObject *value) {
  if (!T.ready) {
    PyErr_SetString(PyExc_RuntimeError, "rscflight: _set_types was not called");
    return NULL;
  }
  if (!d_symbol) {
    if (!PyMethod_Check(T.symbol_for) || !PyType_Check(PyMethod_GET_SELF(T.symbol_for))) {
      PyErr_SetString(PyExc_TypeError, "rscflight: symbol_for is not a classmethod of Symbol");
      return NULL;
    }
    d_symbol = (PyTypeObject *)PyMethod_GET_SELF(T.symbol_for);
    Py_INCREF(d_symbol);
  }
  dwalk w = {0};
  dout o = {0};
  PyObject *r = NULL;
  if (!(w.b = rsc_builder_new(NULL))) return PyErr_NoMemory();
  if (!(w.base = PyUnicode_FromString("value"))) goto done;
  rsc_bval *root = d_value(&w, value);
  if (!root || d_ok(&w, rsc_builder_root(w.b, root)) || d_flush(&w, &o) || d_settle(&w, &o))
    goto done;
  r = PyBytes_FromStringAndSize(o.p ? o.p : "", (Py_ssize_t)o.len);
done:
  for (size_t i = 0; i < w.n_later; i++) {
    Py_XDECREF(w.later[i].where);
    Py_DECREF(w.later[i].thenable);
  }
  Py_XDECREF(w.base);
  for (size_t i = 0; i < w.cap_memo; i++) Py_XDECREF(w.memo_keys[i]);
  free(w.memo_keys);
  free(w.memo_vals);
  free(w.later);
  free(w.path);
  free(w.open);
  free(o.p);
  rsc_builder_free(w.b);
  return r;
}
