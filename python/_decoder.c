/* _decoder.c - the module's functions: one-shot decodes (loads,
 * canonical_dump) with the GIL released and a small pool of decoders kept
 * for the next call, the streaming Decoder (feed, finish, its events, its
 * live values), the function table and rscpy_install, which adds it to the
 * cffi module at import. */

#include "_rscpy.h"

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
 * decoder touches fresh memory, and its page faults can be up to half of a
 * decode. Decoders that read at most SMALL_BYTES are kept, and one that
 * read up to POOL_MAX_BYTES (its arenas and simdjson's buffers scale with
 * the payload, about 2.5 times what it read, which bounds what is held for
 * the next call). Past POOL_MAX_BYTES a decoder is freed outright
 * (free_decoder says why). The pool is only touched with the GIL held. */
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
 * rsc_decoder_new either, and the allocator is asked to hand memory back
 * (rsc_release_memory). glibc raises its trim threshold to twice the
 * largest mapped block freed, and a decoder that is never freed frees none
 * (such as simdjson's buffers for a big row): the heap top that held the
 * strings of the last result would then go back to the kernel each time
 * the result went, and be faulted in again by the next loads. */
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
 * copied: borrowing them makes loads slower, since with no large block of
 * the decoder's freed, glibc keeps trimming the heap the converted strings
 * had used, and each loads faults it back in. NULL: the buffer is released
 * here. */
static rsc_decoder *decode_all(PyObject *data, PyObject *flags, PyObject *limits,
                               uint32_t extra_flags, rsc_options *opt, Py_buffer *hold) {
  Py_buffer buf;
  if (!check_ready() || parse_options(flags, limits, opt) < 0 || get_data(data, &buf) < 0)
    return NULL;
  int borrow = hold && (uint64_t)buf.len <= SMALL_BYTES;
  opt->flags = (opt->flags & ~PY_SHARE_NONE) | extra_flags | (borrow ? RSC_OPT_BORROW_INPUT : 0);
  rsc_decoder *d = pool_take(opt);
  Py_BEGIN_ALLOW_THREADS if (d && rsc_decoder_reset(d) != RSC_OK) {
    rsc_decoder_free(d);
    d = NULL;
  }
  if (!d) d = rsc_decoder_new(opt);
  if (d) {
    rsc_decoder_feed(d, (const char *)buf.buf, (size_t)buf.len);
    rsc_decoder_finish(d);
  }
  Py_END_ALLOW_THREADS if (d && borrow) { *hold = buf; }
  else {
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
  PyObject_HEAD pydec *p;
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
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rscflight._rscflight.DecoderState",
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
  Py_BEGIN_ALLOW_THREADS rsc_decoder_feed(p->d, (const char *)buf.buf, (size_t)buf.len);
  Py_END_ALLOW_THREADS PyBuffer_Release(&buf);
  PyObject *r = after_call(p);
  p->busy = 0;
  return r;
}

/* rsc_encode_ready's writer: a growing buffer. */
typedef struct out_buf {
  char *p;
  size_t len, cap;
} out_buf;

static int out_write(void *ctx, const char *s, size_t n) {
  out_buf *b = (out_buf *)ctx;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *q = (char *)realloc(b->p, cap);
    if (!q) return 1;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  return 0;
}

/* _dec_encode_ready(cap) -> ((events, ok), bytes): the rows rsc_encode_ready
 * wrote (reading chunks on the way may settle some: their events). */
static PyObject *py_dec_encode_ready(PyObject *self, PyObject *cap) {
  pydec *p = get_dec(cap);
  if (!p) return NULL;
  if (enter(p) < 0) return NULL;
  out_buf b = {0};
  rsc_status st;
  Py_BEGIN_ALLOW_THREADS st = rsc_encode_ready(p->d, out_write, &b);
  Py_END_ALLOW_THREADS PyObject *r = after_call(p);
  p->busy = 0;
  PyObject *data = NULL;
  if (r && (st == RSC_ERR_USER || st == RSC_ERR_NOMEM)) PyErr_NoMemory();
  else if (r) data = PyBytes_FromStringAndSize(b.p ? b.p : "", (Py_ssize_t)b.len);
  free(b.p);
  if (!data) {
    Py_XDECREF(r);
    return NULL;
  }
  return Py_BuildValue("(NN)", r, data);
}

/* Wrappers are refreshed when their chunk settles; a chunk that ends
 * blocked (waiting on a row that never came, with allow_partial) never
 * settles, so at the end every wrapper still pending reads its chunk once
 * more (one pass over the memo, once). */
static int refresh_unsettled(pydec *p) {
  /* First the list (a conversion may grow and rehash the memo), then the
   * refills. */
  typedef struct {
    PyObject *w;
    const rsc_chunk *ch;
    uint32_t mk;
  } stale;
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
  Py_BEGIN_ALLOW_THREADS rsc_decoder_finish(p->d);
  Py_END_ALLOW_THREADS PyObject *r = after_call(p);
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
    {"_dec_encode_ready", (PyCFunction)py_dec_encode_ready, METH_O, NULL},
    {"_dec_info", (PyCFunction)py_dec_info, METH_O, NULL},
    {"_dec_close", (PyCFunction)py_dec_close, METH_O, NULL},
    {"_dec_incomplete", (PyCFunction)py_dec_incomplete, METH_O, NULL},
    {"_dumps", (PyCFunction)py_dumps, METH_O,
     "_dumps(value) -> the Flight rows the builder writes"},
    {"_release_memory", (PyCFunction)py_release_memory, METH_NOARGS,
     "free the decoders kept for the next decode"},
    {"_pool", (PyCFunction)py_pool, METH_NOARGS, "bytes read by each decoder kept (tests)"},
#ifdef HAVE_TEXT_AVX2
    {"_text_avx2", (PyCFunction)py_text_avx2, METH_O,
     "use AVX2 in the string scan and fill (where the CPU has it); returns the old setting "
     "(tests)"},
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
