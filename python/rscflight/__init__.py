"""rscflight: decode React Server Components "Flight" payloads.

In the habits of the json module::

    import rscflight
    tree = rscflight.loads(payload)             # the root value
    text = rscflight.canonical_dump(payload)    # what `rscflight dump` prints

    d = rscflight.Decoder()                     # streaming, split anywhere
    for piece in pieces:
        d.feed(piece)
        for kind, obj in d.read_events():       # ("chunk", Chunk), ("hint", Hint), ("debug", DebugRow)
            ...
    tree = d.finish()

    data = rscflight.dumps(tree)                # Flight again (React 19.3.1's rows)
    p = rscflight.loads(payload, keep_rows=True)
    rscflight.dumps(p) == payload               # written back as it came

Values: None, bool, int, float, str, list, dict as json gives them (integral
numbers that a double holds exactly are int); ``undefined``; Element,
Lazy/Promise (.status, .value, .reason), ClientReference, ServerReference,
Symbol (interned), BigInt (an int), datetime (UTC) for dates, or DateString;
Map -> Map (a dict subclass; MapPairs when keys are not hashable or
collide in Python), Set -> set (SetItems),
FormData, Blob, typed arrays (array.array subclasses named after JavaScript's),
ArrayBuffer -> bytearray, DataView -> memoryview, Iterator, Stream,
ServerError. Shared values are the same object; cycles are cycles.

The decoding runs in C with the GIL released; the conversion to Python
objects is one native call per payload (no FFI call per value).

The full C API of include/rscflight.h is available as ``rscflight.lib``
(with ``rscflight.ffi``) for anything this module does not wrap.
"""

import json
import reprlib

from . import _types
from ._types import *  # noqa: F401,F403
from ._types import (BigInt, ClientReference, DateString, DecodeError, Element, IncompleteError,
                     Lazy, Map, MapPairs, Promise, ServerError, SetItems, Symbol, TYPED_ARRAYS,
                     undefined)
from . import _rscflight

ffi = _rscflight.ffi
lib = _rscflight.lib

if lib.rscpy_install(_rscflight.__name__.encode()) != 0:  # adds _decode, _dump, _dec_*
    raise ImportError("rscflight: the native converter could not be installed")
_n = _rscflight
_n._set_types(dict(vars(_types), **TYPED_ARRAYS))

__version__ = ffi.string(lib.rsc_version()).decode()
DecodeError.CODE_NAMES.update(ffi.typeof("rsc_status").elements)

__all__ = ["loads", "dumps", "Payload", "canonical_dump", "report", "release_memory", "Decoder", "ffi", "lib", "__version__"] + list(_types.__all__)

_LIMIT_NAMES = ("max_row_bytes", "max_total_bytes", "max_depth", "max_nodes", "max_chunks",
                "max_path_hops")


# bundler= names, in rsc_bundler order; _decoder.c reads the index from
# two bits of the flags (PY_BUNDLER_SHIFT).
_BUNDLERS = ("webpack", "turbopack", "parcel", "rspack")
_BUNDLER_SHIFT = 28


def _flags(dev=False, allow_partial=False, lenient_ids=False, temp_refs=False, lazy_root=False,
           drop_bom=False, lenient=False, bundler="webpack"):
    if bundler not in _BUNDLERS:
        raise ValueError("bundler must be one of %s, not %r" % (", ".join(_BUNDLERS), bundler))
    f = _BUNDLERS.index(bundler) << _BUNDLER_SHIFT
    if dev:
        f |= lib.RSC_OPT_DEV
    if allow_partial:
        f |= lib.RSC_OPT_ALLOW_PARTIAL
    if lenient_ids:
        f |= lib.RSC_OPT_LENIENT_IDS
    if temp_refs:
        f |= lib.RSC_OPT_TEMP_REFS
    if lazy_root:
        f |= lib.RSC_OPT_LAZY_ROOT
    if drop_bom:
        f |= lib.RSC_OPT_DROP_BOM
    if lenient:
        f |= lib.RSC_OPT_LENIENT_VALUES
    return f


def _limits(limits):
    if not limits:
        return None
    unknown = set(limits) - set(_LIMIT_NAMES)
    if unknown:
        raise TypeError("unknown limits: %s" % ", ".join(sorted(unknown)))
    return tuple(int(limits.get(k, 0)) for k in _LIMIT_NAMES)


def _root(status, value, incomplete=None):
    if status == "fulfilled":
        return value
    if status == "rejected":
        if isinstance(value, BaseException):
            raise value
        e = ServerError(repr(value))
        e.value = value
        raise e
    raise IncompleteError(status, incomplete, value if status == "closed" else None)


def loads(data, *, dev=False, allow_partial=False, lenient_ids=False, temp_refs=False,
          limits=None, drop_bom=False, lenient=False, bundler="webpack", keep_rows=False):
    """Decode a whole Flight payload (bytes-like, or str as UTF-8) and return
    the root value.

    dev: React's development client semantics (detected by itself when the
    stream opens with a ``:N`` row); allow_partial: rows missing at the end
    halt instead of rejecting; lenient_ids: React's lenient row-id folding;
    temp_refs: decode ``$T`` as TemporaryReference; limits: a dict with any of
    max_row_bytes, max_total_bytes, max_depth, max_nodes, max_chunks,
    max_path_hops; drop_bom: drop a U+FEFF that begins a row, as React
    19.3.1 does (by default it is kept, as React's fixed client keeps it);
    lenient: decode values no server writes as React does (a row that is a
    reference to itself or rows in a circle become None, a typed array of a
    partial element is truncated, an ``I`` row of another JSON kind is a
    ClientReference of undefined parts) instead of raising DecodeError
    (code RSC_ERR_BAD_VALUE); bundler: whose server wrote the payload,
    "webpack" (the default), "turbopack", "parcel" or "rspack" (the shape of
    its ``I`` rows; Parcel's is recognised without it).

    Raises DecodeError when the payload is refused (bytes that are not a
    Flight stream, a limit); ServerError (the root's rejection reason) only
    when the server sent an error for the root (an ``E`` row, or a value
    that failed as React's client fails it); IncompleteError when the root
    did not settle with a value because the stream ended first: status
    "closed" (the root, or a row it waits on, never arrived: React rejects
    it with "Connection closed."), or with allow_partial "halted" or
    "blocked"; its offset, missing and cut say where the stream ended and
    which rows it lacked. A server's halt of the root (an aborted
    prerender) is IncompleteError "halted" too, with missing empty.

    keep_rows: return a Payload (its .value is the root value) that
    ``dumps`` writes back as it came, byte for byte for what React's
    servers write (``rsc_encode``; the exceptions are in
    tests/encode-known.txt). The exceptions are raised as without it.
    """
    if keep_rows:
        data = bytes(data.encode("utf-8") if isinstance(data, str) else data)
        value = loads(data, dev=dev, allow_partial=allow_partial, lenient_ids=lenient_ids,
                      temp_refs=temp_refs, limits=limits, drop_bom=drop_bom, lenient=lenient,
                      bundler=bundler)
        flags = _flags(dev, allow_partial, lenient_ids, temp_refs, False, drop_bom, lenient,
                       bundler) & ~(3 << _BUNDLER_SHIFT)
        return Payload(value, data, flags, bundler, _limits(limits))
    if (dev or allow_partial or lenient_ids or temp_refs or limits or drop_bom or lenient
            or bundler != "webpack"):
        status, value, incomplete = _n._decode(
            data, _flags(dev, allow_partial, lenient_ids, temp_refs, False, drop_bom, lenient,
                         bundler),
            _limits(limits))
    else:  # the defaults, without building them (a third of a tiny payload's loads)
        status, value, incomplete = _n._decode(data, 0, None)
    if status == "fulfilled":
        return value
    return _root(status, value, incomplete)


def release_memory():
    """Free the decoders kept for the next decode: ``loads`` and
    ``canonical_dump`` keep two (that read at most 1 MB, or one of them up
    to 8 MB, holding about 2.5 times that), and the C
    library one more (``rsc_release_memory``; streaming decoders of at
    most 1 MB go there), so that repeated decodes skip the page faults of
    fresh memory. Decoding afterwards works as before."""
    _n._release_memory()


def canonical_dump(data, *, dev=False, allow_partial=False, lenient_ids=False, temp_refs=False,
                   limits=None, compact=False, drop_bom=False, lenient=False,
                   bundler="webpack"):
    """The canonical dump (docs/spec/CANONICAL-DUMP.md) of a payload: byte for
    byte what ``rscflight dump`` prints (``--compact``: one line; ``drop_bom``,
    ``lenient`` and ``bundler``: ``--drop-bom``, ``--lenient`` and
    ``--bundler``). Raises DecodeError."""
    return _n._dump(data, _flags(dev, allow_partial, lenient_ids, temp_refs, False, drop_bom,
                                 lenient, bundler), _limits(limits), 0 if compact else 2)


def report(data, *, html=None, dev=False, drop_bom=False, lenient=False, bundler="webpack"):
    """The byte report of a payload (bytes-like, or str as UTF-8): one
    self-contained HTML page, as a str, that shows where its bytes go (a
    zoomable treemap, components, repeated strings and subtrees, the rows in
    stream order by the boundary they settle): what ``rscflight report``
    writes (``rsc_report_html``). html: True reads data as an HTML page and
    reports the payload it inlines against the page's bytes, False as a
    payload, None (the default) decides by whether it opens with '<'. A
    payload the decoder refuses is reported all the same (the page says
    where it failed); a page with no payload raises DecodeError."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    opt = ffi.new("rsc_options *")
    lib.rsc_options_init(opt)
    opt.flags = _flags(dev, False, False, False, False, drop_bom, lenient, bundler) & ~(
        3 << _BUNDLER_SHIFT)
    opt.bundler = _BUNDLERS.index(bundler)
    err = ffi.new("rsc_error *")
    cb, out = _collect()
    st = lib.rsc_report_html(data, len(data), -1 if html is None else int(bool(html)), opt, cb,
                             ffi.NULL, err)
    if st == lib.RSC_ERR_NOMEM:
        raise MemoryError("rscflight.report: out of memory")
    if st != lib.RSC_OK:
        raise DecodeError(ffi.string(err.msg).decode() if err.msg != ffi.NULL else "report failed",
                          err.offset, None if err.row_id < 0 else err.row_id, st)
    return b"".join(out).decode("utf-8")


# ---- writing Flight ------------------------------------------------------------

class Payload:
    """A payload as ``loads(data, keep_rows=True)`` returns it: the root value
    and what ``dumps`` needs to write the payload back as it came.

    value: the root value (what ``loads`` returns); data: the bytes decoded.
    ``dumps(payload)`` writes the payload as decoded (``rsc_encode``: byte
    for byte the input for what React's servers write, except the cases
    tests/encode-known.txt lists); it does not read ``value``. A value the
    host changed is written with ``dumps(payload.value)``, through the
    builder.
    """

    __slots__ = ("value", "data", "_flags", "_bundler", "_limits")

    def __init__(self, value, data, flags, bundler, limits):
        self.value = value
        self.data = data
        self._flags = flags
        self._bundler = bundler
        self._limits = limits

    def __repr__(self):
        return "Payload(%d bytes, value=%s)" % (len(self.data), reprlib.repr(self.value))


def _collect():
    """A write callback that appends to a list, and the list."""
    out = []

    def write(ctx, buf, n):
        out.append(ffi.buffer(buf, n)[:])
        return 0

    return ffi.callback("int(*)(void *, const char *, size_t)", write), out


def _encode(p):
    """rsc_encode of a Payload's bytes, decoded again with its options."""
    opt = ffi.new("rsc_options *")
    lib.rsc_options_init(opt)
    opt.flags = p._flags | lib.RSC_OPT_KEEP_ROWS
    opt.bundler = _BUNDLERS.index(p._bundler)
    for name, v in zip(_LIMIT_NAMES, p._limits or ()):
        setattr(opt.limits, name, v)
    d = lib.rsc_decoder_new(opt)
    if d == ffi.NULL:
        raise MemoryError("rscflight.dumps: no memory for a decoder")
    try:
        lib.rsc_decoder_feed(d, p.data, len(p.data))
        lib.rsc_decoder_finish(d)
        cb, out = _collect()
        st = lib.rsc_encode(d, cb, ffi.NULL)
        if st != lib.RSC_OK:
            e = lib.rsc_decoder_error(d)
            if e.code != lib.RSC_OK:
                raise DecodeError(ffi.string(e.msg).decode(), e.offset,
                                  None if e.row_id < 0 else e.row_id, e.code)
            if st == lib.RSC_ERR_NOMEM:
                raise MemoryError("rscflight.dumps: out of memory while encoding")
            raise DecodeError("rsc_encode failed", len(p.data), None, st)
        return b"".join(out)
    finally:
        lib.rsc_decoder_free(d)


def dumps(value, *, bundler="webpack"):
    """Write Flight: the rows React 19.3.1's server (webpack's, Node) writes
    for ``value``, as bytes.

    A Payload (``loads(data, keep_rows=True)``) is written as it was
    decoded (``rsc_encode``), so ``dumps(loads(b, keep_rows=True)) == b``
    for what React's servers write (tests/encode-known.txt lists the few
    exceptions); its value is not read.

    Any other value goes through the builder (rsc_build_*), walked in C
    (python/_dumps.c): the types ``loads`` returns (None, bool, int, float,
    str, list, dict, undefined, BigInt, datetime and DateString, Symbol,
    Element, ClientReference, ServerReference (its id and bound list or
    None: an outlined {id, bound} row), Lazy and Promise that fulfilled or
    rejected (their rows follow the one that holds them, as Suspense
    streams them), Map and MapPairs, set and SetItems, FormData, Blob,
    Iterator, Stream that ended (done or errored; its items and end in rows
    after the one that holds it), bytes/bytearray (ArrayBuffer), memoryview
    (DataView), the typed arrays, ServerError (an Error, written as
    production servers do, without its message)), and tuple and frozenset.
    An element's type that is a ClientReference is written as React writes
    it, and decodes to a Lazy of the reference, as React's client makes it
    (such a Lazy is written back as the reference). A Lazy that is a row's
    whole value (the root, a Promise's or Lazy's value) is written in place,
    as React's server waits for it. A value with identity (a container,
    Element, binary value, Blob, FormData, Iterator, Stream...) that appears
    in two places is written once and named in the other ("$0:a:1", as
    React's server dedupes), so ``loads(dumps(x))`` equals x as a value,
    shared values and cycles included (an element that names a value of its
    own row decodes to a fulfilled Lazy of it, as in React's client). An
    element that holds itself, a Lazy or Promise not settled, a Stream
    still open, an int no double holds, a ClientReference with an import map
    (Parcel's), and the kinds no host
    writes (TemporaryReference, Function...) raise TypeError naming the
    value's type and where it sits ("value['a'][0]"); a value nested deeper
    than 4096 levels raises ValueError.

    bundler: the I rows' shape; the builder writes webpack's only (a
    Payload keeps the bundler it was decoded with).
    """
    if isinstance(value, Payload):
        return _encode(value)
    if bundler not in _BUNDLERS:
        raise ValueError("bundler must be one of %s, not %r" % (", ".join(_BUNDLERS), bundler))
    if bundler != "webpack":
        raise ValueError("dumps writes webpack's I rows only, not %s's" % bundler)
    return _n._dumps(value)  # the walk in C (python/_dumps.c)


class Decoder:
    """A streaming decoder: feed() pieces split anywhere, then finish().

    Events (what settled during a feed, in order) queue up for read_events(),
    or go to on_event(kind, obj) when it is given: ("chunk", Chunk) when a
    chunk becomes fulfilled, rejected or halted; ("hint", Hint) for an H row;
    ("debug", DebugRow) for a development row. Values already handed out
    stay live: a Lazy or Promise settles in place when its chunk settles, a
    Stream grows as its rows arrive, a ServerReference's bound fills in. As
    in React, a row is parsed when something reads it: chunk(id) reads, and
    finish() reads everything the root reaches.

    lazy_root: do not await the root from the start (React's late reader);
    keep_rows: keep what encode_ready() needs to write the payload back as
    Flight while it streams; the other options are loads()'s. A decoder
    belongs to one thread at a time; it releases the GIL while it decodes.
    """

    def __init__(self, *, dev=False, allow_partial=False, lenient_ids=False, temp_refs=False,
                 lazy_root=False, limits=None, on_event=None, drop_bom=False, lenient=False,
                 bundler="webpack", keep_rows=False):
        flags = _flags(dev, allow_partial, lenient_ids, temp_refs, lazy_root, drop_bom, lenient,
                       bundler)
        if keep_rows:
            flags |= lib.RSC_OPT_KEEP_ROWS
        self._keep_rows = keep_rows
        self._state = _n._dec_new(flags, _limits(limits))
        self._events = []
        self._on_event = on_event
        self.hints = []
        self._finished = False

    def _deliver(self, events):
        for ev in events:
            if ev[0] == "hint":
                self.hints.append(ev[1])
        if self._on_event is None:
            self._events.extend(events)
        else:
            for kind, obj in events:
                self._on_event(kind, obj)

    def _run(self, result):
        events, ok = result
        self._deliver(events)
        if not ok:
            _n._dec_error(self._state)  # raises the DecodeError

    def feed(self, data):
        """Decode another piece of the stream (bytes-like, or str as UTF-8).
        Raises DecodeError when the stream is refused (sticky: later calls
        raise it again)."""
        self._run(_n._dec_feed(self._state, data))

    def encode_ready(self):
        """The payload written back as Flight, as far as it can be written for
        good now (rsc_encode_ready): call it after any feed() and once after
        finish(); what all the calls return, joined, is the payload as
        ``dumps(loads(data, keep_rows=True))`` writes it (the input itself
        where the round trip is exact). Rows go out in order: a row whose
        value waits on a row still to come holds back the rows after it.
        Needs ``Decoder(keep_rows=True)``; raises DecodeError when the
        stream was refused."""
        if not self._keep_rows:
            raise ValueError("encode_ready() needs Decoder(keep_rows=True)")
        result, data = _n._dec_encode_ready(self._state)
        self._run(result)
        return data

    def finish(self):
        """End the stream (rows that never came reject with "Connection
        closed.", or halt with allow_partial) and return the root value as
        loads() would, with the same exceptions: IncompleteError (status
        "closed", "halted" or "blocked", with offset, missing and cut) when
        the stream ended before the root settled, ServerError only for an
        error the server sent."""
        self._run(_n._dec_finish(self._state))
        self._finished = True
        root = self.chunk(0)
        if root.status == "fulfilled":
            return root.value
        closed, incomplete = _n._dec_incomplete(self._state)
        closed = closed and root.status == "rejected"  # allow_partial: halted
        return _root("closed" if closed else root.status, root.reason, incomplete)

    def read_events(self):
        """Iterate over the events queued since the last call (and drop them)."""
        events, self._events = self._events, []
        return iter(events)

    def chunk(self, id):
        """The chunk with this id (a Chunk: status, value, reason), read now as
        React's first read would (parsing a row that arrived unparsed). The
        same object each time; it updates in place. KeyError if the stream
        never mentioned the id."""
        ch, events = _n._dec_chunk(self._state, id)
        self._deliver(events)
        if ch is None:
            raise KeyError(id)
        return ch

    @property
    def root(self):
        """The root chunk (id 0)."""
        return self.chunk(0)

    def chunk_ids(self):
        """Ids of every chunk the stream mentioned, in order of first mention."""
        return _n._dec_info(self._state)[3]

    @property
    def is_dev(self):
        """Whether development semantics are on (asked for, or detected)."""
        return _n._dec_info(self._state)[0]

    @property
    def bytes_fed(self):
        return _n._dec_info(self._state)[1]

    @property
    def peak_memory(self):
        """The most memory the C decoder has held, in bytes."""
        return _n._dec_info(self._state)[2]

    def dump(self, compact=False):
        """The canonical dump of the root as it stands (the CLI's text after finish())."""
        return _n._dec_dump(self._state, 0 if compact else 2)

    def close(self):
        """Free the C decoder now (values already returned stay valid)."""
        _n._dec_close(self._state)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- rewriting (src/rewrite.c) ------------------------------------------------


def _bytes(s, what):
    if isinstance(s, str):
        return s.encode("utf-8", "surrogatepass")
    if isinstance(s, (bytes, bytearray, memoryview)):
        return bytes(s)
    raise TypeError("rscflight.rewrite: %s must be str or bytes, not %s" % (what, type(s).__name__))


def _text(b):
    try:
        return b.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return b.decode("utf-8", "replace")


class RewritePlace(tuple):
    """Where a string is: (row, tag, path). row: the row id; tag: "" for a
    model row, "T", "H" or "I"; path: the keys (str) and indexes (int) from
    the row's value down to the string."""

    __slots__ = ()

    def __new__(cls, row, tag, path):
        return tuple.__new__(cls, (row, tag, path))

    row = property(lambda self: self[0])
    tag = property(lambda self: self[1])
    path = property(lambda self: self[2])

    def __repr__(self):
        return "RewritePlace(row=%r, tag=%r, path=%r)" % self


class Rewriter:
    """A streaming rewrite (rsc_rewriter): feed(bytes) returns the rewritten
    rows completed so far, finish() the rest; stats after. Arguments as
    rewrite()'s."""

    def __init__(self, replace=None, *, exact=None, keys=None, drop_props=None, set_props=None,
                 fn=None, hints=True, imports=True):
        self._keep = []  # every buffer the options point into
        o = ffi.new("rsc_rewrite_options *")
        lib.rsc_rewrite_options_init(o)
        self._opts = o

        def rules(pairs, what, to_json=False):
            pairs = list(pairs.items() if isinstance(pairs, dict) else pairs or ())
            arr = ffi.new("rsc_rewrite_rule[]", max(len(pairs), 1))
            for i, (a, b) in enumerate(pairs):
                a = _bytes(a, what)
                if to_json:
                    b = json.dumps(b, ensure_ascii=False, separators=(",", ":"),
                                   allow_nan=False).encode("utf-8", "surrogatepass")
                else:
                    b = _bytes(b, what)
                ca, cb = ffi.new("char[]", a), ffi.new("char[]", b)
                self._keep += [ca, cb]
                setattr(arr[i], "from", (ca, len(a)))
                arr[i].to = (cb, len(b))
            self._keep.append(arr)
            return arr, len(pairs)

        def strs(items, what):
            items = [items] if isinstance(items, (str, bytes)) else list(items or ())
            arr = ffi.new("rsc_rewrite_str[]", max(len(items), 1))
            for i, s in enumerate(items):
                s = _bytes(s, what)
                c = ffi.new("char[]", s)
                self._keep.append(c)
                arr[i] = (c, len(s))
            self._keep.append(arr)
            return arr, len(items)

        o.prefix, o.prefix_count = rules(replace, "replace")
        o.exact, o.exact_count = rules(exact, "exact")
        o.keys, o.keys_count = strs(keys, "keys")
        o.drop_props, o.drop_props_count = strs(drop_props, "drop_props")
        o.set_props, o.set_props_count = rules(set_props, "set_props", to_json=True)
        if not hints:
            o.flags |= lib.RSC_REWRITE_NO_HINTS
        if not imports:
            o.flags |= lib.RSC_REWRITE_NO_IMPORTS
        self._error = None
        if fn is not None:
            out_keep = [None]

            def string_fn(ctx, place, s, n, out, out_len):
                try:
                    path = []
                    for k in range(place.depth):
                        st = place.path[k]
                        path.append(_text(ffi.buffer(st.key, st.key_len)[:])
                                    if st.key != ffi.NULL else st.index)
                    tag = chr(ord(place.tag)) if place.tag != b"\0" else ""
                    r = fn(_text(ffi.buffer(s, n)[:]), RewritePlace(place.row_id, tag, tuple(path)))
                    if r is None:
                        return 0
                    b = _bytes(r, "fn's result")
                    c = ffi.new("char[]", b)
                    out_keep[0] = c
                    out[0] = c
                    out_len[0] = len(b)
                    return 1
                except BaseException as e:  # re-raised by feed/finish
                    self._error = e
                    return -1

            self._fn = ffi.callback("int(*)(void *, const rsc_rewrite_place *, const char *, "
                                    "size_t, const char **, size_t *)", string_fn)
            o.fn = self._fn
        self._out = []

        def write(ctx, buf, n):
            self._out.append(ffi.buffer(buf, n)[:])
            return 0

        self._write = ffi.callback("int(*)(void *, const char *, size_t)", write)
        rw = lib.rsc_rewriter_new(o, self._write, ffi.NULL)
        if rw == ffi.NULL:
            if o.set_props_count:
                raise ValueError("rscflight.rewrite: a set_props value is not JSON")
            raise MemoryError("rscflight.rewrite: no memory for a rewriter")
        self._rw = ffi.gc(rw, lib.rsc_rewriter_free)

    def _check(self, st):
        if self._error is not None:
            e, self._error = self._error, None
            raise e
        if st != lib.RSC_OK:
            e = lib.rsc_rewriter_error(self._rw)
            if e.code == lib.RSC_ERR_NOMEM:
                raise MemoryError("rscflight.rewrite: out of memory")
            raise DecodeError(ffi.string(e.msg).decode() if e.msg != ffi.NULL else "error",
                              e.offset, None if e.row_id < 0 else e.row_id, e.code)
        out = b"".join(self._out)
        self._out.clear()
        return out

    def feed(self, data):
        data = _bytes(data, "data")
        return self._check(lib.rsc_rewriter_feed(self._rw, data, len(data)))

    def finish(self):
        return self._check(lib.rsc_rewriter_finish(self._rw))

    def _rewrite_page(self, page):
        """The page (bytes) with its inlined payload rewritten by this
        rewriter's options (rsc_rewrite_html)."""
        out = ffi.new("char **")
        out_len = ffi.new("size_t *")
        err = ffi.new("rsc_error *")
        st = lib.rsc_rewrite_html(page, len(page), lib.RSC_HTML_AUTO, self._opts, out, out_len,
                                  ffi.NULL, err)
        if self._error is not None:
            e, self._error = self._error, None
            raise e
        if st != lib.RSC_OK:
            if st == lib.RSC_ERR_NOMEM:
                raise MemoryError("rscflight.rewrite: out of memory")
            raise DecodeError(ffi.string(err.msg).decode() if err.msg != ffi.NULL else "error",
                              err.offset, None if err.row_id < 0 else err.row_id, err.code)
        try:
            return ffi.buffer(out[0], out_len[0])[:]
        finally:
            lib.rsc_free(out[0])

    @property
    def stats(self):
        """rows, rows_changed, strings_changed, props_dropped, props_set,
        bytes_in, bytes_out, as a dict."""
        s = lib.rsc_rewriter_stats(self._rw)
        return {k: getattr(s, k) for k in ("rows", "rows_changed", "strings_changed",
                                           "props_dropped", "props_set", "bytes_in", "bytes_out")}


def _looks_like_page(data):
    """Whether data is an HTML page: its first byte after whitespace and a
    UTF-8 byte-order mark is '<' (as the CLI tells; a Flight payload opens
    with a row id or ':', never with markup)."""
    i = 3 if data[:3] == b"\xef\xbb\xbf" else 0
    while i < len(data) and data[i] in b" \t\n\r\f":
        i += 1
    return data[i:i + 1] == b"<"


def rewrite(data, replace=None, *, exact=None, keys=None, drop_props=None, set_props=None,
            fn=None, hints=True, imports=True, html=None):
    """A Flight payload (bytes) rewritten by rules, as bytes; or an HTML page
    that inlines one, rewritten as a page.

    replace: {old_prefix: new_prefix} (the first that matches); exact:
    {old: new}, tried first; keys: only strings whose nearest object key is
    one of these (model rows; hint and I row URLs always); drop_props: keys
    whose object members are dropped; set_props: {key: value} members whose
    value becomes value (written as JSON); fn(value, place) -> str or None,
    for each string after the rules (place: RewritePlace); hints=False and
    imports=False leave the URLs of H rows and the chunk lists of I rows
    alone. Strings are decoded values: "$$x" in a row is "$x"; other "$"
    strings are references and never matched. Rows no rule changes come
    back byte for byte; T rows get their new length. Raises DecodeError
    (msg, offset, row) for bad input.

    html: True for an HTML page (Next.js self.__next_f pushes or
    rsc-html-stream __FLIGHT_DATA pushes), False for a payload, None (the
    default) to tell by the data: a page opens with '<' (after whitespace
    and a UTF-8 byte-order mark). A page comes back with its inlined payload
    rewritten (rsc_rewrite_html): the pushes whose bytes changed have their
    string literal written again, escaped as the framework escapes it, and
    every other byte is as it was. DecodeError offsets are then offsets in
    the page.
    """
    rw = Rewriter(replace, exact=exact, keys=keys, drop_props=drop_props, set_props=set_props,
                  fn=fn, hints=hints, imports=imports)
    data = _bytes(data, "data")
    if html is None:
        html = _looks_like_page(data)
    if not html:
        return rw.feed(data) + rw.finish()
    return rw._rewrite_page(data)


__all__ += ["rewrite", "Rewriter", "RewritePlace"]
