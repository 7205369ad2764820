"""The Python values a Flight payload decodes to.

Plain Python types where one fits: None, bool, int, float, str, list, dict,
set, datetime. The classes below stand for what Python has no type for.
Everything here is pure Python; the native converter receives these classes
once (rscflight/__init__.py) and fills the ``__slots__`` of new instances
directly, without calling ``__init__``.

Instances compare by identity, like the JavaScript objects they stand for
(two elements with equal props are two elements); shared values in a payload
are the same Python object, and cycles are real cycles.
"""

import array
import datetime
import reprlib
import sys

__all__ = [
    "undefined", "Symbol", "symbol_for", "Element", "Thenable", "Lazy", "Promise", "Chunk",
    "ClientReference", "ServerReference", "TemporaryReference", "BigInt", "DateString",
    "Map", "MapPairs", "SetItems", "FormData", "Blob", "Iterator", "Stream", "ServerError",
    "Function", "Hint", "DebugRow", "DecodeError", "IncompleteError", "TYPED_ARRAYS",
    "ArrayBuffer", "DataView",
]


class _Undefined:
    """JavaScript's undefined (``$undefined``): one falsy sentinel, distinct from None."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return "undefined"

    def __bool__(self):
        return False

    def __reduce__(self):
        return "undefined"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


undefined = _Undefined()


class Symbol:
    """A global symbol (``Symbol.for(key)``, sent as ``$S<key>``).

    Interned: the same key is always the same object, so ``is`` and ``==``
    work, e.g. ``element.type is Symbol.for_key("react.fragment")``.
    """

    __slots__ = ("key", "__weakref__")
    _registry = {}

    def __new__(cls, key):
        s = cls._registry.get(key)
        if s is None:
            s = object.__new__(cls)
            s.key = key
            cls._registry[key] = s
        return s

    @classmethod
    def for_key(cls, key):
        return cls(key)

    def __repr__(self):
        return "Symbol(%s)" % self.key

    def __reduce__(self):
        return (Symbol, (self.key,))


symbol_for = Symbol.for_key

#: React's element marker and the common built-in component types.
Symbol("react.transitional.element")


class Element:
    """A React element ``["$", type, key, props]``.

    type: a str (host component), a ClientReference, a Symbol
    (``react.fragment``, ``react.suspense``...), a Lazy, or undefined when
    the tuple was too short; key: str or None; props: a dict (or undefined).
    """

    __slots__ = ("type", "key", "props")

    def __init__(self, type, key=None, props=None):
        self.type = type
        self.key = key
        self.props = {} if props is None else props

    @reprlib.recursive_repr()
    def __repr__(self):
        return "Element(%r, key=%r, props=%r)" % (self.type, self.key, self.props)


class Thenable:
    """A chunk as a value: a status and its value or reason.

    status: "pending", "blocked", "fulfilled", "rejected" or "halted";
    value: the value when fulfilled (else None); reason: the error (usually a
    ServerError) when rejected (else None); id: the row id (-1 for chunks
    React makes internally, e.g. for an element waiting on a row).
    """

    __slots__ = ("id", "status", "value", "reason")

    def __init__(self, id=-1, status="pending", value=None, reason=None):
        self.id = id
        self.status = status
        self.value = value
        self.reason = reason

    def result(self):
        """The value if fulfilled; raise the reason if rejected; else IncompleteError."""
        if self.status == "fulfilled":
            return self.value
        if self.status == "rejected":
            r = self.reason
            raise r if isinstance(r, BaseException) else ServerError(repr(r))
        raise IncompleteError(self.status)

    @reprlib.recursive_repr()
    def __repr__(self):
        extra = ""
        if self.status == "fulfilled":
            extra = ", value=%r" % (self.value,)
        elif self.status == "rejected":
            extra = ", reason=%r" % (self.reason,)
        return "%s(id=%d, status=%r%s)" % (type(self).__name__, self.id, self.status, extra)


class Lazy(Thenable):
    """A lazy wrapper (``$L<id>``, or an element React turned into a lazy)."""

    __slots__ = ()


class Promise(Thenable):
    """A promise (``$@<id>``)."""

    __slots__ = ()


class Chunk(Thenable):
    """A chunk of the stream, as Decoder.chunk(id) and the chunk events give it."""

    __slots__ = ()


class ClientReference:
    """A client component or value (an ``I`` row): module id (str or int, as
    sent), the chunks to load (Parcel's bundle list), the export name,
    whether it is async (never for Parcel), and Parcel's import map (a dict,
    or None when the row has none)."""

    __slots__ = ("id", "chunks", "name", "is_async", "import_map")

    def __init__(self, id, chunks, name, is_async=False, import_map=None):
        self.id = id
        self.chunks = chunks
        self.name = name
        self.is_async = is_async
        self.import_map = import_map

    def __repr__(self):
        return "ClientReference(%r, %r, %r%s%s)" % (
            self.id, self.chunks, self.name, ", is_async=True" if self.is_async else "",
            ", import_map=%r" % (self.import_map,) if self.import_map is not None else "")


class ServerReference:
    """A server action (``$h``): its id and bound arguments (None, a list,
    or a Promise that did not fulfil)."""

    __slots__ = ("id", "bound")

    def __init__(self, id, bound=None):
        self.id = id
        self.bound = bound

    def __repr__(self):
        return "ServerReference(%r, %r)" % (self.id, self.bound)


class TemporaryReference:
    """A temporary reference (``$T``): the path after ``$T``."""

    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path

    def __repr__(self):
        return "TemporaryReference(%r)" % (self.path,)


class Function:
    """A development ``$E`` value that evaluates to a function: its source."""

    __slots__ = ("source",)

    def __init__(self, source):
        self.source = source

    def __repr__(self):
        return "Function(%r)" % (self.source,)


class BigInt(int):
    """A BigInt (``$n``): an int that remembers it was a BigInt."""

    __slots__ = ()

    def __repr__(self):
        return "BigInt(%s)" % int.__repr__(self)


class DateString(str):
    """A Date (``$D``) whose text is not what toISOString writes for years
    1..9999 (so no datetime holds it): the text as sent."""

    __slots__ = ()

    def __repr__(self):
        return "DateString(%s)" % str.__repr__(self)


class Map(dict):
    """A Map (``$Q``) whose keys are all hashable in Python: a dict, in
    insertion order (a subclass, so a Map is told apart from an object)."""

    __slots__ = ()

    @reprlib.recursive_repr()
    def __repr__(self):
        return "Map(%s)" % dict.__repr__(self)


class MapPairs(list):
    """A Map whose keys are not all hashable in Python (or collide there, as
    1 and true do): its (key, value) pairs, in insertion order."""

    __slots__ = ()

    def __repr__(self):
        return "MapPairs(%s)" % list.__repr__(self)


class SetItems(list):
    """A Set whose values are not all hashable in Python: its values, in order."""

    __slots__ = ()

    def __repr__(self):
        return "SetItems(%s)" % list.__repr__(self)


class FormData(list):
    """FormData (``$K``): (name, value) pairs, in order."""

    __slots__ = ()

    def __repr__(self):
        return "FormData(%s)" % list.__repr__(self)


class Blob:
    """A Blob (``$B``): MIME type and content bytes."""

    __slots__ = ("type", "data")

    def __init__(self, type, data=b""):
        self.type = type
        self.data = data

    def __repr__(self):
        return "Blob(%r, %d bytes)" % (self.type, len(self.data))


class Iterator:
    """An iterator (``$i``): single-shot like JavaScript's; .items keeps them all."""

    __slots__ = ("items",)

    def __init__(self, items=()):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    @reprlib.recursive_repr()
    def __repr__(self):
        return "Iterator(%r)" % (self.items,)


class Stream:
    """A ReadableStream (R: kind "text", r: kind "bytes") or an async iterable
    (X: "iterable") / iterator (x: "iterator").

    items: what was enqueued (values; for byte streams Uint8Array pieces);
    status: "open", "done" or "errored"; value: the return value when done
    (undefined for ReadableStreams); reason: the error when errored. A
    Decoder updates a stream in place as rows arrive.
    """

    __slots__ = ("kind", "items", "status", "value", "reason")

    def __init__(self, kind, items=(), status="open", value=None, reason=None):
        self.kind = kind
        self.items = list(items)
        self.status = status
        self.value = value
        self.reason = reason

    def data(self):
        """A byte stream's bytes, joined."""
        return b"".join(bytes(x) for x in self.items)

    @reprlib.recursive_repr()
    def __repr__(self):
        return "Stream(%r, %d items, %s)" % (self.kind, len(self.items), self.status)


class ServerError(Exception):
    """An error sent as a value (``$Z``), or a chunk's rejection reason (an
    ``E`` row): message and digest (undefined when the error has none)."""

    def __init__(self, message, digest=undefined):
        super().__init__(message)
        self.message = message
        self.digest = digest

    def __repr__(self):
        if self.digest is undefined:
            return "ServerError(%r)" % (self.message,)
        return "ServerError(%r, digest=%r)" % (self.message, self.digest)


class Hint:
    """An ``H`` row: the hint code (one character) and its value."""

    __slots__ = ("code", "value")

    def __init__(self, code, value):
        self.code = code
        self.value = value

    def __repr__(self):
        return "Hint(%r, %r)" % (self.code, self.value)


class DebugRow:
    """A development row (D, N, J, W): its tag, chunk id (None for N and W) and raw text."""

    __slots__ = ("tag", "id", "text")

    def __init__(self, tag, id, text):
        self.tag = tag
        self.id = id
        self.text = text

    def __repr__(self):
        return "DebugRow(%r, %r, %r)" % (self.tag, self.id, self.text[:60])


class DecodeError(ValueError):
    """The payload is refused (a framing error, a duplicate row, a development
    row in production mode, a limit, a value no server writes...).

    msg: what is wrong; offset: the byte offset in the whole stream; row: the
    id of the row being read (None outside a row); code: the library's
    rsc_status number; code_name: its name ("RSC_ERR_DUPLICATE_ROW"...).
    """

    #: rsc_status number -> enum name (filled from the header's enum at import)
    CODE_NAMES = {}

    def __init__(self, msg, offset, row, code):
        where = "offset %d" % offset if row is None else "offset %d, row %x" % (offset, row)
        super().__init__("%s (%s)" % (msg, where))
        self.msg = msg
        self.offset = offset
        self.row = row
        self.code = code

    @property
    def code_name(self):
        return self.CODE_NAMES.get(self.code, str(self.code))

    def __reduce__(self):
        return (type(self), (self.msg, self.offset, self.row, self.code))


class IncompleteError(Exception):
    """The root chunk did not settle with a value, and no error the server
    sent says why (that is ServerError). status is "closed" (the stream
    ended before the root, or a row it waits on, arrived: React's client
    rejects it with "Connection closed.", which is reason), "halted" (with
    allow_partial the end of the stream halts what never arrived; or the
    server halted it, as an aborted prerender does), "blocked" (it waits on
    a row that never came, with allow_partial) or "pending".

    Where the stream ended, when it ended early (else offset is None and
    the rest empty): offset, the bytes it had; missing, the ids of rows
    referenced but never seen and of the row the end cut mid-way,
    ascending; cut, (id, offset of its first byte) of that row (id None
    when the end fell inside the id) or None; open_streams, ids of streams
    whose end never arrived.
    """

    def __init__(self, status, incomplete=None, reason=None):
        offset, missing, cut, open_streams = incomplete or (None, (), None, ())
        msg = "the root chunk is %s" % status
        if offset is not None:
            msg += ": the stream ended at byte %d" % offset
            if missing:
                msg += ", rows %s missing" % ", ".join("%x" % i for i in missing)
        super().__init__(msg)
        self.status = status
        self.offset = offset
        self.missing = missing
        self.cut = cut
        self.open_streams = open_streams
        self.reason = reason


# ---- binary values -----------------------------------------------------------

#: ArrayBuffer decodes to a bytearray, DataView to a memoryview over one.
ArrayBuffer = bytearray
DataView = memoryview


_BIG_ENDIAN = sys.byteorder == "big"


def _typed(name, code):
    def __new__(cls, data=b""):
        a = array.array.__new__(cls, code, data)
        if _BIG_ENDIAN and a.itemsize > 1:
            a.byteswap()  # the payload's data is little-endian
        return a

    def __repr__(self):
        return "%s(%r)" % (name, self.tolist())

    return type(name, (array.array,), {
        "__new__": __new__, "__repr__": __repr__, "__slots__": (),
        "__doc__": "JavaScript's %s: an array.array of typecode %r (data as sent, "
                   "little-endian)." % (name, code),
    })


def _code(size, signed):
    for c in ("bhilq" if signed else "BHILQ"):
        if array.array(c).itemsize == size:
            return c
    raise RuntimeError("no array typecode of %d bytes" % size)


TYPED_ARRAYS = {
    "Int8Array": _typed("Int8Array", "b"),
    "Uint8Array": _typed("Uint8Array", "B"),
    "Uint8ClampedArray": _typed("Uint8ClampedArray", "B"),
    "Int16Array": _typed("Int16Array", _code(2, True)),
    "Uint16Array": _typed("Uint16Array", _code(2, False)),
    "Int32Array": _typed("Int32Array", _code(4, True)),
    "Uint32Array": _typed("Uint32Array", _code(4, False)),
    "Float32Array": _typed("Float32Array", "f"),
    "Float64Array": _typed("Float64Array", "d"),
    "BigInt64Array": _typed("BigInt64Array", _code(8, True)),
    "BigUint64Array": _typed("BigUint64Array", _code(8, False)),
}
globals().update(TYPED_ARRAYS)
__all__ += list(TYPED_ARRAYS)

assert datetime  # Date values are datetime.datetime (UTC) where they fit
