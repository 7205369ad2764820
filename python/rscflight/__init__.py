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

from . import _types
from ._types import *  # noqa: F401,F403
from ._types import (DecodeError, IncompleteError, ServerError, TYPED_ARRAYS, undefined)
from . import _rscflight

ffi = _rscflight.ffi
lib = _rscflight.lib

if lib.rscpy_install(_rscflight.__name__.encode()) != 0:  # adds _decode, _dump, _dec_*
    raise ImportError("rscflight: the native converter could not be installed")
_n = _rscflight
_n._set_types(dict(vars(_types), **TYPED_ARRAYS))

__version__ = ffi.string(lib.rsc_version()).decode()
DecodeError.CODE_NAMES.update(ffi.typeof("rsc_status").elements)

__all__ = ["loads", "canonical_dump", "release_memory", "Decoder", "ffi", "lib", "__version__"] + list(_types.__all__)

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
          limits=None, drop_bom=False, lenient=False, bundler="webpack"):
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
    """
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
    the other options are loads()'s. A decoder belongs to one thread at a
    time; it releases the GIL while it decodes.
    """

    def __init__(self, *, dev=False, allow_partial=False, lenient_ids=False, temp_refs=False,
                 lazy_root=False, limits=None, on_event=None, drop_bom=False, lenient=False,
                 bundler="webpack"):
        self._state = _n._dec_new(_flags(dev, allow_partial, lenient_ids, temp_refs, lazy_root,
                                         drop_bom, lenient, bundler), _limits(limits))
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
