#!/usr/bin/env python3
"""A straightforward pure-Python Flight (RSC payload) decoder: the baseline.

It is meant to be what a competent Python programmer writes in an afternoon
from docs/spec/FLIGHT-PROTOCOL.md, not a strawman and not a port of React's
scheduler:

1. frame the payload into rows (2.1: newline rows, and length-prefixed rows
   for T and the binary tags);
2. ``json.loads`` every model row (and I / H / E / J / C bodies);
3. resolve from the root row 0 with memoisation, reviving ``$`` strings
   (section 5) into Python values. Every chunk reachable from the root is
   resolved, lazies and promises included (so the result is as complete as a
   consumer walking React's result).

Values:
    elements               Element(type, key, props)
    $L<id> / $@<id>        Lazy / Promise (a Chunk subclass) with .value or .error
    $<id>[:path]           the referenced chunk's value (path keys follow
                           dicts, lists and element aliases type/key/props)
    $undefined             UNDEFINED: dropped from dicts, kept in lists
    $$x                    "$x"
    $n / $D / $NaN ...     int / datetime (InvalidDate if unparsable) / floats
    $Q / $W / $K / $i      FlightMap(entries) / FlightSet(items) / FormData / iter
    $S<name>               Symbol(name)
    $h / $T / $B / $Z      ServerReference / TemporaryReference / Blob / ErrorValue
    I rows                 ClientReference(metadata)
    E rows                 ErrorValue(info); references to it give the ErrorValue
    T rows                 str; binary rows: bytes (TypedArray(tag, bytes) for
                           tags other than A)
    R r X x rows           Stream(kind) collecting items; C closes it

Forward references are fine: all rows are framed first, then resolved.
Cycles resolve to the container being built (like React's in-place walk).

    python3 bench/python/baseline.py FILE      # prints a summary of the root
"""

import datetime
import json
import math
import sys

__all__ = [
    "decode", "frame", "Element", "Chunk", "Lazy", "Promise", "Symbol", "UNDEFINED",
    "ClientReference", "ServerReference", "InvalidDate", "TemporaryReference", "ErrorValue",
    "FlightMap", "FlightSet", "FormData", "Blob", "TypedArray", "Stream", "FlightError",
]

LENTAGS = frozenset(b"TAOoUSsLlGgMmVb")
NLTAGS = frozenset(set(range(0x41, 0x5B)) - set(LENTAGS) | set(b"#rx"))


class FlightError(ValueError):
    pass


class _Undefined:
    __slots__ = ()

    def __repr__(self):
        return "UNDEFINED"

    def __bool__(self):
        return False


UNDEFINED = _Undefined()


class Element:
    __slots__ = ("type", "key", "props")

    def __init__(self, type, key, props):
        self.type = type
        self.key = key
        self.props = props

    def __repr__(self):
        return "Element(%r, key=%r, props=%r)" % (self.type, self.key, self.props)


class Chunk:
    """A wrapper for a chunk referenced by $L (Lazy) or $@ (Promise)."""
    __slots__ = ("id", "status", "value", "error")

    def __init__(self, id):
        self.id = id
        self.status = "pending"
        self.value = None
        self.error = None

    def __repr__(self):
        return "%s(%x, %s)" % (type(self).__name__, self.id, self.status)


class Lazy(Chunk):
    __slots__ = ()


class Promise(Chunk):
    __slots__ = ()


class Symbol:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Symbol(%s)" % self.name


class ClientReference:
    __slots__ = ("metadata",)

    def __init__(self, metadata):
        self.metadata = metadata

    def __repr__(self):
        return "ClientReference(%r)" % (self.metadata,)


class ServerReference:
    __slots__ = ("id", "bound")

    def __init__(self, id, bound):
        self.id = id
        self.bound = bound


class TemporaryReference:
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path


class ErrorValue:
    __slots__ = ("info",)

    def __init__(self, info):
        self.info = info

    def __repr__(self):
        return "ErrorValue(%r)" % (self.info,)


class FlightMap:
    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = entries

    def __repr__(self):
        return "FlightMap(%r)" % (self.entries,)


class FlightSet:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items

    def __repr__(self):
        return "FlightSet(%r)" % (self.items,)


class FormData(FlightMap):
    __slots__ = ()


class Blob:
    __slots__ = ("type", "parts")

    def __init__(self, type, parts):
        self.type = type
        self.parts = parts


class TypedArray:
    __slots__ = ("tag", "data")

    def __init__(self, tag, data):
        self.tag = tag
        self.data = data

    def __repr__(self):
        return "TypedArray(%s, %d bytes)" % (self.tag, len(self.data))


class Stream:
    __slots__ = ("kind", "items", "closed", "return_value", "error")

    def __init__(self, kind):
        self.kind = kind  # R r X x
        self.items = []
        self.closed = False
        self.return_value = UNDEFINED
        self.error = None

    def __repr__(self):
        return "Stream(%s, %d items%s)" % (self.kind, len(self.items), ", closed" if self.closed else "")


# ---------------------------------------------------------------------------
# framing

def _row_id(b):
    if not b:
        return 0
    try:
        return int(b, 16)
    except ValueError:
        # React's lenient digit formula (docs/spec/FLIGHT-PROTOCOL.md 2.8)
        v = 0
        for c in b:
            v = ((v << 4) | (c - 87 if c > 0x60 else c - 48)) & 0xFFFFFFFF
        return v - (1 << 32) if v >= (1 << 31) else v


def frame(data):
    """Split a payload into (id, tag, body) rows. tag is an int byte or 0.

    A partial row at the end (no LF, or too few bytes) is dropped, as React does.
    """
    data = bytes(data)
    n = len(data)
    i = 0
    rows = []
    append = rows.append
    find = data.find
    while i < n:
        colon = find(b":", i)
        if colon < 0 or colon + 1 >= n:
            break
        rid = _row_id(data[i:colon])
        t = data[colon + 1]
        if t in LENTAGS:
            comma = find(b",", colon + 2)
            if comma < 0:
                break
            length = int(data[colon + 2:comma] or b"0", 16)
            end = comma + 1 + length
            if end > n:
                break
            append((rid, t, data[comma + 1:end]))
            i = end
            continue
        start = colon + 1
        tag = 0
        if t in NLTAGS:
            tag = t
            start += 1
        nl = find(b"\n", start)
        if nl < 0:
            break
        append((rid, tag, data[start:nl]))
        i = nl + 1
    return rows


def _loads(body):
    return json.loads(body.decode("utf-8", "replace"))


# ---------------------------------------------------------------------------
# decoding

_TAG_T = ord("T")
_TAG_A = ord("A")
_TAG_b = ord("b")
_TAG_I = ord("I")
_TAG_H = ord("H")
_TAG_E = ord("E")
_TAG_J = ord("J")
_TAG_C = ord("C")
_TAG_D = ord("D")
_TAG_N = ord("N")
_TAG_W = ord("W")
_STREAM_TAGS = {ord(c): c for c in "RrXx"}
_BINARY_TAGS = LENTAGS - {_TAG_T, _TAG_b}

_MODEL, _TEXT, _BINARY, _CLIENT, _ERROR, _STREAM = range(6)


class _Response:
    __slots__ = ("rows", "memo", "in_progress", "wrappers", "queue", "hints")

    def __init__(self):
        self.rows = {}          # id -> (kind, payload)
        self.memo = {}          # id -> resolved value
        self.in_progress = {}   # id -> container being revived (cycles)
        self.wrappers = {}      # (cls, id) -> Lazy/Promise
        self.queue = []         # wrappers whose chunk still has to be resolved
        self.hints = []


# newline tags with a meaning of their own; every other one (J, '#', unknown
# letters) is handled like a model row
_SPECIAL_NLTAGS = frozenset([_TAG_I, _TAG_H, _TAG_E, _TAG_C, _TAG_D, _TAG_N, _TAG_W]) | set(_STREAM_TAGS)


def _add_rows(resp, rows):
    table = resp.rows
    for rid, tag, body in rows:
        if tag == 0 or (tag in NLTAGS and tag not in _SPECIAL_NLTAGS):
            # model row (J and unknown tags included)
            if not body:
                continue  # halt marker: the chunk never resolves
            try:
                value = _loads(body)
            except ValueError as e:  # only this chunk is rejected (3.1)
                table.setdefault(rid, (_ERROR, ErrorValue({"message": "SyntaxError: %s" % e})))
                continue
            cur = table.get(rid)
            if cur is not None and cur[0] == _STREAM:
                cur[1].items.append((_MODEL, value))
            elif cur is None:
                table[rid] = (_MODEL, value)
            continue
        if tag == _TAG_T:
            cur = table.get(rid)
            text = body.decode("utf-8", "replace")
            if cur is not None and cur[0] == _STREAM:
                cur[1].items.append((_TEXT, text))
            else:
                table[rid] = (_TEXT, text)
        elif tag in _BINARY_TAGS:
            value = body if tag == _TAG_A else TypedArray(chr(tag), body)
            cur = table.get(rid)
            if cur is not None and cur[0] == _STREAM:
                cur[1].items.append((_BINARY, value))
            else:
                table[rid] = (_BINARY, value)
        elif tag == _TAG_b:
            cur = table.get(rid)
            if cur is not None and cur[0] == _STREAM:
                cur[1].items.append((_BINARY, body))
        elif tag == _TAG_I:
            table[rid] = (_CLIENT, ClientReference(_loads(body)))
        elif tag == _TAG_H:
            if body:
                resp.hints.append((chr(body[0]), _loads(body[1:])))
        elif tag == _TAG_E:
            cur = table.get(rid)
            err = ErrorValue(_loads(body))
            if cur is not None and cur[0] == _STREAM:
                cur[1].error = err
            else:
                table[rid] = (_ERROR, err)
        elif tag in _STREAM_TAGS:
            table[rid] = (_STREAM, Stream(_STREAM_TAGS[tag]))
        elif tag == _TAG_C:
            cur = table.get(rid)
            if cur is not None and cur[0] == _STREAM:
                cur[1].closed = True
                if body:
                    cur[1].return_value = (_MODEL, _loads(body))
        # D, N, W: debug data (DEV only), skipped
        # (docs/spec/FLIGHT-PROTOCOL.md 11.5)


def _resolve_chunk(resp, rid):
    """The value of chunk rid (memoised). Raises KeyError if there is no row."""
    memo = resp.memo
    if rid in memo:
        return memo[rid]
    if rid in resp.in_progress:
        return resp.in_progress[rid]
    kind, payload = resp.rows[rid]
    if kind == _MODEL:
        if type(payload) is dict or type(payload) is list:
            resp.in_progress[rid] = payload
        try:
            value = _revive(resp, payload)
        finally:
            resp.in_progress.pop(rid, None)
    elif kind == _STREAM:
        memo[rid] = payload  # items may refer back to the stream
        items = payload.items
        for k, (ikind, item) in enumerate(items):
            items[k] = _revive(resp, item) if ikind == _MODEL else item
        rv = payload.return_value
        if rv is not UNDEFINED:
            payload.return_value = _revive(resp, rv[1])
        value = payload
    else:
        value = payload  # text, binary, client reference, error
    memo[rid] = value
    return value


def _wrapper(resp, cls, rid):
    key = (cls, rid)
    w = resp.wrappers.get(key)
    if w is None:
        w = cls(rid)
        resp.wrappers[key] = w
        resp.queue.append(w)
    return w


_ALIASES = {"type": 1, "key": 2, "props": 3}


def _follow(resp, value, key):
    while isinstance(value, Chunk):
        if value.status == "pending":
            _settle(resp, value)  # a path through a lazy forces it
        if value.status != "fulfilled":
            raise FlightError("reference through a rejected chunk")
        value = value.value
    t = type(value)
    if t is dict:
        return value[key]
    if t is list:
        if value and (value[0] is _ELEMENT_MARKER or value[0] == "$") and key in _ALIASES:
            # an element still being revived (a path into the row being built)
            i = _ALIASES[key]
            return value[i] if i < len(value) else UNDEFINED
        return value[int(key)]
    if t is Element:
        if key == "type":
            return value.type
        if key == "key":
            return value.key
        if key == "props":
            return value.props
        if key == "_owner":
            return None
    raise KeyError(key)


def _reference(resp, ref):
    """$<hex>[:k1:k2...] -> value; an error chunk gives its ErrorValue."""
    parts = ref.split(":")
    try:
        rid = int(parts[0], 16)
        value = _resolve_chunk(resp, rid)
    except (KeyError, ValueError):
        return ErrorValue({"message": "missing chunk %s" % parts[0]})
    for key in parts[1:]:
        try:
            value = _follow(resp, value, key)
        except (KeyError, IndexError, ValueError, FlightError):
            return ErrorValue({"message": "Invalid reference."})
    while isinstance(value, Chunk) and value.status == "fulfilled":
        value = value.value
    return value


class InvalidDate:
    """What `new Date(text)` gives for text it cannot parse."""
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return "InvalidDate(%r)" % self.text


def _same_value_key(x):
    """A key with JS SameValueZero semantics for Map/Set (objects by identity)."""
    t = type(x)
    if t is str or t is bool or x is None or x is UNDEFINED:
        return (t, x)
    if t is int or t is float:
        return (float, "nan") if x != x else (float, float(x))
    return (object, id(x))


def _make_set(items):
    seen = set()
    out = []
    for x in items:
        k = _same_value_key(x)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


def _make_entries(pairs):
    index = {}
    out = []
    for e in pairs:
        k = _same_value_key(e[0])
        if k in index:  # a repeated key keeps its position, takes the last value
            out[index[k]] = (out[index[k]][0], e[1])
        else:
            index[k] = len(out)
            out.append((e[0], e[1]))
    return out


def _parse_date(s):
    try:
        return datetime.datetime.fromisoformat(s)
    except ValueError:
        return InvalidDate(s)


def _model_string(resp, s):
    """A JSON string that starts with '$' (docs/spec/FLIGHT-PROTOCOL.md 5.2)."""
    if len(s) == 1:
        return _ELEMENT_MARKER
    c = s[1]
    rest = s[2:]
    if c == "$":
        return s[1:]
    if c == "L":
        return _wrapper(resp, Lazy, int(rest.split(":", 1)[0], 16))
    if c == "@":
        return _wrapper(resp, Promise, int(rest.split(":", 1)[0], 16))
    if c == "S":
        return Symbol(rest)
    if c == "u":
        return UNDEFINED
    if c == "D":
        return _parse_date(rest)
    if c == "n":
        return int(rest)
    if c == "Q":
        v = _reference(resp, rest)
        return FlightMap(_make_entries(v)) if type(v) is list else v
    if c == "W":
        v = _reference(resp, rest)
        return FlightSet(_make_set(v)) if type(v) is list else v
    if c == "K":
        v = _reference(resp, rest)
        return FormData([tuple(e) for e in v]) if type(v) is list else v
    if c == "i":
        v = _reference(resp, rest)
        return iter(v) if type(v) is list else v
    if c == "B":
        v = _reference(resp, rest)
        return Blob(v[0], v[1:]) if type(v) is list and v else v
    if c == "h":
        v = _reference(resp, rest)
        return ServerReference(v.get("id"), v.get("bound")) if type(v) is dict else v
    if c == "Z":
        return ErrorValue(_reference(resp, rest) if rest else {})
    if c == "T":
        return TemporaryReference(rest)
    if c == "I":
        return math.inf
    if c == "-":
        return -0.0 if rest == "0" else -math.inf
    if c == "N":
        return math.nan
    if c == "H" or c == "w":
        return UNDEFINED  # not in stable clients: the key is dropped
    if c == "E" or c == "Y" or c == "P":
        return s  # DEV-only debug forms: keep the text
    return _reference(resp, s[1:])


class _Marker:
    __slots__ = ()

    def __repr__(self):
        return "ELEMENT_MARKER"


_ELEMENT_MARKER = _Marker()


def _revive(resp, v):
    t = type(v)
    if t is str:
        return _model_string(resp, v) if v[:1] == "$" else v
    if t is list:
        for i, x in enumerate(v):
            tx = type(x)
            if tx is str:
                if x[:1] == "$":
                    v[i] = _model_string(resp, x)
            elif tx is list or tx is dict:
                v[i] = _revive(resp, x)
        if v and v[0] is _ELEMENT_MARKER:
            n = len(v)
            props = v[3] if n > 3 else UNDEFINED
            return Element(v[1] if n > 1 else UNDEFINED, v[2] if n > 2 else UNDEFINED, props)
        return v
    if t is dict:
        drop = None
        for k, x in v.items():
            tx = type(x)
            if tx is str:
                if x[:1] == "$":
                    x = _model_string(resp, x)
                    if x is UNDEFINED:
                        if drop is None:
                            drop = []
                        drop.append(k)
                    else:
                        v[k] = x
            elif tx is list or tx is dict:
                v[k] = _revive(resp, x)
        if drop is not None:
            for k in drop:
                del v[k]
        if "__proto__" in v:
            del v["__proto__"]
        return v
    return v


def _settle(resp, w):
    try:
        w.value = _resolve_chunk(resp, w.id)
    except KeyError:
        w.status = "rejected"
        w.error = ErrorValue({"message": "Connection closed."})
        return
    if type(w.value) is ErrorValue:
        w.status = "rejected"
        w.error = w.value
        w.value = None
    else:
        w.status = "fulfilled"


def decode(data):
    """Decode a complete payload; return the root value (chunk 0).

    Raises FlightError if there is no root row or the root is an error.
    """
    resp = _Response()
    _add_rows(resp, frame(data))
    limit = sys.getrecursionlimit()
    if limit < 20000:
        sys.setrecursionlimit(20000)
    try:
        try:
            root = _resolve_chunk(resp, 0)
        except KeyError:
            raise FlightError("Connection closed.") from None
        queue = resp.queue
        while queue:  # every lazy/promise reachable from the root
            _settle(resp, queue.pop())
    finally:
        sys.setrecursionlimit(limit)
    if type(root) is ErrorValue:
        raise FlightError("root chunk rejected: %r" % (root.info,))
    return root


def _main(argv):
    import pprint
    for path in argv:
        with open(path, "rb") as f:
            data = f.read()
        print("%s:" % path)
        pprint.pprint(decode(data), width=100, compact=True)


if __name__ == "__main__":
    _main(sys.argv[1:])
