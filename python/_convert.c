/* _convert.c - the walk: a decoded graph -> Python objects.
 *
 * The walk keeps an explicit job stack (graphs can be 10^5 deep): a
 * container is created empty when first met, remembered by identity in the
 * memo (so shared values stay shared and cycles close), and filled later.
 * loads remembers only the values a reference placed (rsc_decoder_shares)
 * and chunks' own values; a streaming decoder remembers everything and
 * keeps open streams and wrappers that may still settle (track, in
 * _decoder.c). */

#include "_rscpy.h"

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
      digits(s + 17, 2, &se) && digits(s + 20, 3, &ms) && y >= 1 && mo >= 1 && mo <= 12 && d >= 1 &&
      d <= 31 && h < 24 && mi < 60 && se < 60) {
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
  uint64_t key;  /* 0: empty */
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
   * are known). A memo of every container would miss the cache on each. */
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
  case RSC_NULL:
  case RSC_BOOL:
  case RSC_NUMBER:
  case RSC_STRING:
  case RSC_UNDEFINED:
  case RSC_NONE:
  case RSC_BIGINT:
  case RSC_DATE:
  case RSC_SYMBOL:
  case RSC_ELEMENT:
  case RSC_LAZY:
  case RSC_PROMISE:
  case RSC_CLIENT_REF:
  case RSC_SERVER_REF:
  case RSC_TEMP_REF:
  case RSC_BLOB:
  case RSC_ITERATOR:
  case RSC_STREAM: return 1;
  default: return 0;
  }
}

/* Kinds that become Python values compared by value (all others are
 * objects compared by identity, which cannot collide). They hold no other
 * value, so a throw-away copy drops nothing the memo knows. */
static int value_kind(rsc_kind k) {
  switch (k) {
  case RSC_NULL:
  case RSC_BOOL:
  case RSC_NUMBER:
  case RSC_STRING:
  case RSC_UNDEFINED:
  case RSC_NONE:
  case RSC_BIGINT:
  case RSC_DATE:
  case RSC_SYMBOL: return 1;
  default: return 0;
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
  case RSC_NONE:
  case RSC_UNDEFINED: return Py_NewRef(T.undefined);
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
  case RSC_MAP:
  case RSC_SET: return map_or_set(c, v, rem);
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
  case RSC_STREAM: return fill_stream(c, node, o);
  case MK_LAZY:
  case MK_PROMISE:
  case MK_CHUNK: return fill_thenable(c, o, (const rsc_chunk *)node, j->kind);
  default: return 0;
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
      PyObject *list = j.kind == RSC_ARRAY      ? j.obj
                       : j.kind == RSC_ITERATOR ? get_slot(j.obj, &T.iterator, 0)
                                                : NULL;
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
