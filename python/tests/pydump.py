"""The canonical dump (docs/spec/CANONICAL-DUMP.md) computed in Python from the
values rscflight.loads() returns, so the tests check the conversion itself (types,
identity, cycles), not just the C dump. Also: the dump's notion of equality.
"""

import base64
import datetime
import json
import math
import sys
import threading

import rscflight as R


def _b64(b):
    return base64.b64encode(bytes(b)).decode("ascii")


def _ptr_seg(s):
    return str(s).replace("~", "~0").replace("/", "~1")


def _date_text(d):
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (d.year, d.month, d.day, d.hour, d.minute,
                                                     d.second, d.microsecond // 1000)


_IDENTITY = (dict, list, set, R.Element, R.Blob, bytearray, memoryview, R.Iterator, R.Stream,
             *R.TYPED_ARRAYS.values())


class _Walker:
    def __init__(self):
        self.seen = {}
        self.keep = []  # keep walked objects alive, so ids stay unique
        self.identities = 0  # values with identity written out so far
        self.wrappers = {}  # chunk -> (place, identities) of its open wrapper

    def value(self, v, path, fresh=False):
        if isinstance(v, _IDENTITY):
            if not fresh:
                first = self.seen.get(id(v))
                if first is not None:
                    return {"$": "ref", "to": first}
                self.seen[id(v)] = path
                self.keep.append(v)
            self.identities += 1
        t = type(v)
        if v is None or t is bool:
            return v
        if t is R.BigInt:
            return {"$": "bigint", "v": str(int(v))}
        if t is int:
            return v
        if t is float:
            if math.isnan(v):
                return {"$": "NaN"}
            if math.isinf(v):
                return {"$": "Infinity" if v > 0 else "-Infinity"}
            if v == 0 and math.copysign(1, v) < 0:
                return {"$": "-0"}
            return v
        if t is R.DateString:
            return {"$": "Date", "v": str(v)}
        if t is str:
            return v
        if t is datetime.datetime:
            return {"$": "Date", "v": _date_text(v)}
        if v is R.undefined:
            return {"$": "undefined"}
        if t is R.Symbol:
            return {"$": "symbol", "v": v.key}
        if t is R.TemporaryReference:
            return {"$": "temporary_ref", "v": v.path}
        if t is R.Function:
            return {"$": "function", "source": v.source}
        if isinstance(v, R.ServerError):
            out = {"$": "Error", "message": v.message}
            if v.digest is not R.undefined:
                out["digest"] = self.value(v.digest, path + "/digest", fresh)
            return out
        if t is R.ClientReference:
            out = {"$": "client_ref", "id": self.value(v.id, path + "/id", True),
                   "chunks": self.value(v.chunks, path + "/chunks", True),
                   "name": self.value(v.name, path + "/name", True)}
            if v.import_map is not None:
                out["importMap"] = self.value(v.import_map, path + "/importMap", True)
            elif v.is_async:
                out["async"] = True
            return out
        if t is R.ServerReference:
            return {"$": "server_ref", "id": self.value(v.id, path + "/id", fresh),
                    "bound": self.value(v.bound, path + "/bound", fresh)}
        if t is R.Lazy or t is R.Promise:
            # A wrapper inside its own value with nothing that has identity
            # in between (a cycle of lazies) is a ref to the enclosing one,
            # as the C dump writes it; any other wrapper is written anew.
            key = ("chunk", v.id) if v.id >= 0 else ("wrapper", id(v))
            outer = self.wrappers.get(key)
            if outer is not None and outer[1] == self.identities:
                return {"$": "ref", "to": outer[0]}
            self.wrappers[key] = (path, self.identities)
            out = {"$": "lazy" if t is R.Lazy else "promise", "status": v.status}
            if v.status == "fulfilled":
                out["value"] = self.value(v.value, path + "/value", fresh)
            elif v.status == "rejected":
                out["reason"] = self.value(v.reason, path + "/reason", fresh)
            if outer is None:
                del self.wrappers[key]
            else:
                self.wrappers[key] = outer
            return out
        if t is R.Element:
            out = {"$": "element"}
            out["type"] = self.value(v.type, path + "/type", fresh)
            out["key"] = self.value(v.key, path + "/key", fresh)
            out["props"] = self.value(v.props, path + "/props", fresh)
            return out
        if t is R.Map or t is R.MapPairs or t is R.FormData:
            pairs = list(v.items()) if t is R.Map else list(v)
            ents = []
            for i, (k, x) in enumerate(pairs):
                p = "%s/entries/%d" % (path, i)
                ents.append([self.value(k, p + "/0", fresh), self.value(x, p + "/1", fresh)])
            return {"$": "FormData" if t is R.FormData else "Map", "entries": ents}
        if t is set or t is R.SetItems:
            return {"$": "Set", "values": [self.value(x, "%s/values/%d" % (path, i), fresh)
                                           for i, x in enumerate(v)], "_unordered": t is set}
        if t is R.Blob:
            return {"$": "Blob", "type": v.type, "base64": _b64(v.data)}
        if t is bytearray:
            return {"$": "ArrayBuffer", "base64": _b64(v)}
        if t is memoryview:
            return {"$": "DataView", "base64": _b64(v)}
        if t.__name__ in R.TYPED_ARRAYS and t is R.TYPED_ARRAYS[t.__name__]:
            return {"$": t.__name__, "base64": _b64(v.tobytes())}
        if t is R.Iterator:
            return {"$": "Iterator", "items": [self.value(x, "%s/items/%d" % (path, i), fresh)
                                               for i, x in enumerate(v.items)]}
        if t is R.Stream:
            if v.kind in ("text", "bytes"):
                out = {"$": "ReadableStream", "type": v.kind}
                if v.kind == "text":
                    out["items"] = [self.value(x, "%s/items/%d" % (path, i), fresh)
                                    for i, x in enumerate(v.items)]
                else:
                    out["base64"] = _b64(v.data())
            else:
                out = {"$": "AsyncIterable" if v.kind == "iterable" else "AsyncIterator",
                       "items": [self.value(x, "%s/items/%d" % (path, i), fresh)
                                 for i, x in enumerate(v.items)]}
            if v.status == "done":
                out["end"] = {"done": self.value(v.value, path + "/end/done", fresh)}
            elif v.status == "errored":
                out["end"] = {"error": self.value(v.reason, path + "/end/error", fresh)}
            else:
                out["end"] = "open"
            return out
        if t is dict:
            if "$" in v:
                base = path + "/members"
                return {"$": "object", "members": {k: self.value(x, base + "/" + _ptr_seg(k), fresh)
                                                   for k, x in v.items()}}
            return {k: self.value(x, path + "/" + _ptr_seg(k), fresh) for k, x in v.items()}
        if t is list:
            return [self.value(x, "%s/%d" % (path, i), fresh) for i, x in enumerate(v)]
        raise TypeError("pydump: unexpected %s %r" % (t.__name__, v))


def _deep(fn, *args):
    """Run fn in a thread with a big stack (graphs can be deep)."""
    out = {}

    def run():
        try:
            out["v"] = fn(*args)
        except BaseException as e:  # noqa: BLE001
            out["e"] = e

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    sys.setrecursionlimit(max(old_limit, 400000))
    threading.stack_size(512 * 1024 * 1024)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "e" in out:
        raise out["e"]
    return out["v"]


def document(status, value):
    """The dump document for a root chunk's status and value (or reason)."""
    def build():
        w = _Walker()
        if status == "fulfilled":
            return {"ok": w.value(value, "/ok")}
        if status == "rejected":
            return {"rejected": w.value(value, "/rejected")}
        if status == "halted":
            return {"halted": True}
        return {"pending": True}
    return _deep(build)


def loads_document(data, **opts):
    """document() of what rscflight.loads returns (or raises) for data."""
    try:
        return document("fulfilled", R.loads(data, **opts))
    except R.IncompleteError as e:
        if e.status == "closed":  # the dump has React's rejection
            return document("rejected", e.reason)
        return document(e.status, None)
    except R.ServerError as e:
        return document("rejected", getattr(e, "value", e))


# ---- equality ------------------------------------------------------------------

def normalize(v):
    """A canonical form for comparison: numbers as floats, Set values of a
    Python set (unordered there) sorted, marker members dropped."""
    def norm(x):
        if isinstance(x, bool) or x is None or isinstance(x, str):
            return x
        if isinstance(x, (int, float)):
            return float(x)
        if isinstance(x, list):
            return [norm(y) for y in x]
        if isinstance(x, dict):
            out = {k: norm(y) for k, y in x.items() if k != "_unordered"}
            if x.get("$") == "Set" and x.get("_unordered"):
                out["values"] = sorted(out["values"], key=lambda y: json.dumps(y, sort_keys=True))
            return out
        raise TypeError(type(x))
    return _deep(norm, v)


def unordered_sets(expected, got):
    """Mark the Sets in `expected` that are Python sets in `got` (same places)."""
    def walk(e, g):
        if isinstance(e, dict) and isinstance(g, dict):
            if e.get("$") == "Set" and g.get("_unordered"):
                e["_unordered"] = True
            for k in e:
                if k in g:
                    walk(e[k], g[k])
        elif isinstance(e, list) and isinstance(g, list):
            for a, b in zip(e, g):
                walk(a, b)
    _deep(walk, expected, got)
    return expected


def equal(expected, got):
    """docs/spec/CANONICAL-DUMP.md equality (objects unordered, numbers as
    doubles)."""
    expected = unordered_sets(expected, got)
    return normalize(expected) == normalize(got)


def first_difference(a, b, path=""):
    """A short description of where two normalized dumps differ."""
    if type(a) is not type(b):
        return "%s: %r != %r" % (path or "/", a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s/%s: only in %s" % (path, k, "got" if k not in a else "expected")
            d = first_difference(a[k], b[k], "%s/%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: lengths %d != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s/%d" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r != %r" % (path or "/", a, b)


def explain(expected, got):
    expected = unordered_sets(expected, got)
    return _deep(first_difference, normalize(expected), normalize(got))
