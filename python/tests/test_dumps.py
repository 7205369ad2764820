"""rscflight.dumps: values written through the builder decode to themselves,
payloads kept with loads(keep_rows=True) are written back byte for byte
where the C round trip is exact (tests/encode-known.txt lists where not),
and what cannot be written is refused with a TypeError that says where."""

import datetime
import glob
import math
import os

import pytest

import pydump
import rscflight as R
from conftest import FIXTURES, REACT_FIXTURES, ROOT


def _doc(value):
    """The dump document of a value: dumps writes a value met twice once and
    names it after, so shared values and cycles are refs on both sides."""
    return pydump._deep(lambda: {"ok": pydump._Walker().value(value, "/ok")})


def _lazy_element(d):
    while isinstance(d, dict) and d.get("$") == "lazy" and d.get("status") == "fulfilled":
        d = d.get("value")
    return isinstance(d, dict) and d.get("$") == "element"


def _unwrap_lazy_elements(doc):
    """A fulfilled lazy of an element (of a lazy of one...) as the element:
    React's server outlines an element past 3200 units of a row's text as
    "$L" of its own row, React's client makes an element that names values
    of its own row a lazy, and it renders such lazies as the element."""
    unwrapped = []  # where lazies were, deepest last

    def walk(d, path):
        if isinstance(d, list):
            return [walk(x, "%s/%d" % (path, i)) for i, x in enumerate(d)]
        if isinstance(d, dict):
            if d.get("$") == "lazy" and _lazy_element(d):
                unwrapped.append(path)
                return walk(d["value"], path + "/value")
            return {k: walk(x, path + "/" + k.replace("~", "~0").replace("/", "~1"))
                    for k, x in d.items()}
        return d

    def repoint(d):  # refs into an unwrapped lazy's value name the element
        if isinstance(d, list):
            return [repoint(x) for x in d]
        if isinstance(d, dict):
            if d.get("$") == "ref" and isinstance(d.get("to"), str):
                to = d["to"]
                for u in reversed(unwrapped):
                    if to == u + "/value" or to.startswith(u + "/value/"):
                        to = u + to[len(u) + 6:]
                return {"$": "ref", "to": to}
            return {k: repoint(x) for k, x in d.items()}
        return d
    return pydump._deep(lambda: repoint(walk(doc, "")))


def _same_value(a, b):
    ea, eb = _unwrap_lazy_elements(_doc(a)), _unwrap_lazy_elements(_doc(b))
    return pydump.equal(ea, eb), ea, eb


def _round_trip(x):
    got = R.loads(R.dumps(x))
    ok, ea, eb = _same_value(x, got)
    assert ok, pydump.explain(ea, eb)
    return got


# ---- fixtures: loads(dumps(x)) == x -------------------------------------------

# Why a fixture's value is not written, by the first TypeError it raises:
# the kinds a host does not build (the builder has no maker for them).
_UNSUPPORTED = ("ServerReference", "TemporaryReference", "FormData", "Blob", "Iterator",
                "Stream", "Function", "a cycle", "has no value to write", "import_map",
                "reference's chunks as str", "reference's id as str")


def _fixture_value(v):
    try:
        return R.loads(v.data(), **v.opts())
    except (R.DecodeError, R.IncompleteError, R.ServerError):
        return None


def _differs_for_known_reason(x):
    """Where a value cannot equal what the builder writes for it: errors
    (a production Error is written without message, as React's server
    writes it) and development-only element fields."""
    found = []

    def walk(v, seen):
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, R.ServerError):
            found.append("an Error (written without its message and digest)")
        elif isinstance(v, dict):
            for y in v.values():
                walk(y, seen)
        elif isinstance(v, (list, set, R.SetItems)):
            for y in v:
                walk(y, seen)
        elif isinstance(v, R.Element):
            walk(v.type, seen)
            walk(v.props, seen)
        elif isinstance(v, (R.Lazy, R.Promise)):
            walk(v.value, seen)
            walk(v.reason, seen)
        elif isinstance(v, R.Stream):
            if v.status == "errored":
                found.append("a stream's error (written with its digest only)")
            for y in v.items:
                walk(y, seen)
    pydump._deep(walk, x, set())
    return found


PROD = [v for v in REACT_FIXTURES if "/prod/" in v.rsc]
DEV = [v for v in REACT_FIXTURES if "/dev/" in v.rsc]


def _check_fixtures(fixtures):
    written, skipped = 0, {}
    for v in fixtures:
        x = _fixture_value(v)
        if x is None:
            skipped[v.name] = "the root does not decode to a value"
            continue
        try:
            data = R.dumps(x)
        except TypeError as e:
            assert any(s in str(e) for s in _UNSUPPORTED), "%s: %s" % (v.name, e)
            skipped[v.name] = str(e)
            continue
        got = R.loads(data)
        ok, ea, eb = _same_value(x, got)
        if not ok:
            why = _differs_for_known_reason(x)
            assert why, "%s: %s" % (v.name, pydump.explain(ea, eb))
            skipped[v.name] = why[0]
            continue
        written += 1
    return written, skipped


def test_every_prod_fixture_value_round_trips():
    written, skipped = _check_fixtures(PROD)
    assert PROD, "no fixtures/react/*/prod"
    print("prod: %d of %d written and equal; skipped: %r" % (written, len(PROD), skipped))
    assert written >= len(PROD) // 2


def test_dev_fixture_values_round_trip_where_supported():
    written, skipped = _check_fixtures(DEV)
    print("dev: %d of %d written and equal; skipped: %r" % (written, len(DEV), skipped))
    assert written > 0


# ---- dumps(loads(b, keep_rows=True)) == b ------------------------------------------

def _known_inexact():
    with open(os.path.join(ROOT, "tests", "encode-known.txt"), encoding="utf-8") as f:
        return {line.split(" ", 1)[0] for line in f if line.strip() and not line.startswith("#")}


def _bundler_of(rel):
    if "bundlers/parcel/" in rel:
        return "parcel"
    if "bundlers/turbopack/" in rel or "next-turbopack" in rel:
        return "turbopack"
    if "bundlers/rspack/" in rel:
        return "rspack"
    return "webpack"


def _server_written():
    out = []
    for pat in ("react/*/prod/*.rsc", "react/*/dev/*.rsc", "bundlers/*/*/prod/*.rsc",
                "bundlers/*/*/dev/*.rsc", "html/next-*.rsc"):
        out += sorted(glob.glob(os.path.join(FIXTURES, pat)))
    return [os.path.relpath(p, FIXTURES) for p in out]


SERVER_WRITTEN = _server_written()


def test_kept_payloads_are_written_back_byte_for_byte():
    known = _known_inexact()
    exact, listed, undecodable = 0, 0, 0
    for rel in SERVER_WRITTEN:
        with open(os.path.join(FIXTURES, rel), "rb") as f:
            data = f.read()
        opts = dict(dev="/dev/" in rel, bundler=_bundler_of(rel))
        try:
            p = R.loads(data, keep_rows=True, **opts)
        except (R.IncompleteError, R.ServerError):
            # the root is an error or never came: rsc_encode writes it all
            # the same; loads raises as it does without keep_rows.
            undecodable += 1
            continue
        assert isinstance(p, R.Payload)
        out = R.dumps(p)
        if rel in known:
            assert out != data, "%s is exact now: drop it from tests/encode-known.txt" % rel
            listed += 1
            continue
        assert out == data, rel
        exact += 1
    print("exact %d, listed in encode-known.txt %d, root not a value %d, of %d"
          % (exact, listed, undecodable, len(SERVER_WRITTEN)))
    assert exact + listed + undecodable == len(SERVER_WRITTEN)
    assert exact >= 300


def test_payload_keeps_the_value_and_the_bytes():
    data = b'1:{"a":1}\n0:["$1","$1"]\n'
    p = R.loads(data, keep_rows=True)
    assert p.value == [{"a": 1}, {"a": 1}] and p.value[0] is p.value[1]
    assert p.data == data
    assert R.dumps(p) == data
    assert R.dumps(p.value) != data  # the builder writes the shared object twice
    assert R.loads(R.dumps(p.value)) == p.value


def test_keep_rows_raises_as_loads_does():
    with pytest.raises(R.DecodeError):
        R.loads(b"0:1\n0:2\n", keep_rows=True)
    with pytest.raises(R.IncompleteError):
        R.loads(b'0:"$1"\n', keep_rows=True)


# ---- changed values go through the builder -------------------------------------------

def test_a_changed_value_is_written_by_the_builder():
    path = os.path.join(FIXTURES, "react", "19.3.1", "prod")
    for name in sorted(os.listdir(path)):
        if name.endswith(".rsc"):
            with open(os.path.join(path, name), "rb") as f:
                data = f.read()
            try:
                p = R.loads(data, keep_rows=True)
            except (R.IncompleteError, R.ServerError):
                continue
            if isinstance(p.value, R.Element) and isinstance(p.value.props, dict):
                break
    else:
        pytest.skip("no 19.3.1 prod fixture whose root is an element")
    p.value.props["data-changed"] = "yes"
    p.value.props["children"] = ["new", R.BigInt(-12)]
    out = R.dumps(p.value)
    assert out != data
    got = R.loads(out)
    while isinstance(got, R.Lazy):  # an element that names values of its own row
        got = got.value
    assert got.props["data-changed"] == "yes"
    assert got.props["children"] == ["new", -12] and type(got.props["children"][1]) is R.BigInt
    _round_trip(p.value)


# ---- values --------------------------------------------------------------------

def test_primitives():
    for x in (None, True, False, 0, -1, 2 ** 53, 1.5, -0.0, math.inf, -math.inf, "", "$", "$$a",
              "x" * 5000, "\ud800", "é€😀", R.undefined, R.BigInt(10 ** 30),
              R.Symbol("react.fragment"), R.DateString("+275760-09-13T00:00:00.000Z")):
        _round_trip(x)
    assert math.isnan(R.loads(R.dumps(math.nan)))
    got = R.loads(R.dumps(x := {"n": -0.0}))
    assert math.copysign(1, got["n"]) < 0 and x


def test_dates():
    d = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=datetime.timezone.utc)
    assert R.dumps(d) == b'0:"$D2024-05-06T07:08:09.123Z"\n'
    assert R.loads(R.dumps(d)) == d
    other = d.astimezone(datetime.timezone(datetime.timedelta(hours=5)))
    assert R.dumps(other) == R.dumps(d)


def test_containers_and_binary():
    x = {
        "list": [1, [2, [3]]], "tuple": (1, 2), "map": R.Map({"a": 1, 2: "b"}),
        "pairs": R.MapPairs([([1], "list key"), ({"o": 1}, 2)]), "set": {1, "a"},
        "items": R.SetItems([[1], [2]]), "ab": bytearray(b"\x00\x01"),
        "dv": memoryview(bytearray(b"xyz")),
        "u8": R.Uint8Array(b"\x01\x02"), "f64": R.Float64Array(b"\x00" * 16),
        "i16": R.Int16Array(b"\x01\x00\xff\xff"),
        "big": R.BigUint64Array(b"\xff" * 8), "$key": {"": {}},
    }
    got = R.loads(R.dumps(x))
    assert got["tuple"] == [1, 2]
    del x["tuple"], got["tuple"]
    ok, ea, eb = _same_value(x, got)
    assert ok, pydump.explain(ea, eb)
    assert R.loads(R.dumps(b"ab")) == bytearray(b"ab")


def test_elements_and_client_references():
    ref = R.ClientReference("./Button.js", ["chunk-1", "chunk-1.js"], "default")
    aref = R.ClientReference("./Async.js", [], "Thing", is_async=True)
    x = R.Element("main", "k", {"children": [
        R.Element(ref, None, {"label": "a"}), R.Element(ref, "2", {}),
        R.Element(aref, None, {"children": R.Element(R.Symbol("react.fragment"), None,
                                                     {"children": "t"})})]})
    data = R.dumps(x)
    assert data.count(b":I[") == 2  # one I row per reference
    got = R.loads(data)
    # React's client makes a client component's type a lazy of its module
    t = got.props["children"][0].type
    assert type(t) is R.Lazy and t.status == "fulfilled"
    assert (t.value.id, t.value.chunks, t.value.name) == (ref.id, ref.chunks, ref.name)
    assert got.props["children"][2].type.value.is_async
    _round_trip(got)


def test_lazies_and_promises_follow_their_rows():
    inner = R.Lazy(status="fulfilled", value=R.Element("p", None, {"children": "late"}))
    x = {"lazy": inner, "promise": R.Promise(status="fulfilled", value={"n": 1}),
         "nested": R.Promise(status="fulfilled", value=[R.Lazy(status="fulfilled", value=[1])])}
    data = R.dumps(x)
    assert data.startswith(b'0:{"lazy":"$L')
    got = _round_trip(x)
    assert type(got["lazy"]) is R.Lazy and got["lazy"].id > 0
    # a lazy that is a row's whole value is written in place
    whole = R.Promise(status="fulfilled", value=R.Lazy(status="fulfilled", value=[1]))
    assert R.loads(R.dumps([whole]))[0].value == [1]
    rejected = R.Promise(status="rejected", reason=R.ServerError("boom", digest="d1"))
    got = R.loads(R.dumps([rejected]))
    assert got[0].status == "rejected" and got[0].reason.digest == "d1"


def test_a_shared_value_is_written_once_then_named():
    shared = {"a": [1]}
    assert R.dumps([shared, shared, {"x": shared["a"]}]) == b'0:[{"a":[1]},"$0:0",{"x":"$0:0:a"}]\n'
    got = R.loads(R.dumps([shared, shared, {"x": shared["a"]}]))
    assert got[0] is got[1] and got[2]["x"] is got[0]["a"] and got[0] == shared
    # an element that names a value of its own row decodes to a lazy of it
    # (React's client); one in a row of its own is named "$<id>"
    el = R.Element("i", None, {"x": shared})
    got = R.loads(R.dumps([shared, el]))
    assert got[1].status == "fulfilled" and got[1].value.props["x"] is got[0]
    p = R.Promise(status="fulfilled", value=shared)
    data = R.dumps([p, {"again": shared}])
    # the promise's row comes after row 0, where the value is met first
    assert data == b'0:["$@1",{"again":{"a":[1]}}]\n1:"$0:1:again"\n', data
    got = R.loads(data)
    assert got[0].value is got[1]["again"]


def test_server_references_form_data_blobs_iterators_streams():
    save = R.ServerReference("app/actions.js#save", None)
    bound = R.ServerReference("app/actions.js#save", [1, "x"])
    assert R.dumps({"a": save, "b": save, "c": bound}) == (
        b'1:{"id":"app/actions.js#save","bound":null}\n'
        b'2:{"id":"app/actions.js#save","bound":"$@3"}\n'
        b'0:{"a":"$h1","b":"$h1","c":"$h2"}\n3:[1,"x"]\n')
    blob = R.Blob("text/plain", b"hello")
    fd = R.FormData([("a", "b"), ("file", blob), ("a", "c")])
    assert R.dumps(fd) == (b'1:[["a","b"],["file","$B2"],["a","c"]]\n0:"$K1"\n'
                           b'3:o5,hello2:["text/plain","$3"]\n')
    x = {
        "actions": [save, bound, save], "fd": fd, "blob": blob, "empty": R.Blob("", b""),
        "it": R.Iterator([1, {"a": 2}]),
        "text": R.Stream("text", ["a", {"x": 1}, "b" * 2000], status="done", value=R.undefined),
        "bytes": R.Stream("bytes", [R.Uint8Array(b"\x01\x02"), b"\x03"], status="done",
                          value=R.undefined),
        "iterable": R.Stream("iterable", ["x"], status="done", value=R.undefined),
        "iterator": R.Stream("iterator", [1, [2]], status="done", value={"r": 1}),
        "failed": R.Stream("iterator", [1], status="errored",
                           reason=R.ServerError("boom", digest="d1")),
    }
    data = R.dumps(x)
    got = R.loads(data)
    assert data.count(b'{"id":"app/actions.js#save","bound":null}') == 1  # one row, "$h" twice
    assert got["actions"][0].id == got["actions"][2].id and got["actions"][1].bound == [1, "x"]
    assert got["fd"] == [("a", "b"), ("file", got["blob"]), ("a", "c")]
    assert got["blob"].data == b"hello" and got["empty"].data == b""
    assert got["it"].items == [1, {"a": 2}]
    assert got["text"].items == ["a", {"x": 1}, "b" * 2000] and got["text"].status == "done"
    assert got["bytes"].data() == b"\x01\x02\x03"
    assert got["iterator"].value == {"r": 1} and got["iterable"].items == ["x"]
    assert got["failed"].status == "errored" and got["failed"].reason.digest == "d1"
    del x["failed"], got["failed"]
    ok, ea, eb = _same_value(x, got)
    assert ok, pydump.explain(ea, eb)


# ---- refused values ------------------------------------------------------------------

@pytest.mark.parametrize("value, where, what", [
    (object(), "value", "object"),
    ({"a": [1, R.ServerReference(5)]}, "value['a'][1].id", "int"),
    ([R.ServerReference("id", R.Promise(status="pending"))], "value[0].bound", "Promise"),
    ([R.FormData([("a", 1)])], "value[0].entries[0].value", "int"),
    ([R.FormData([(2, "b")])], "value[0].entries[0].name", "int"),
    ([R.Blob("text/plain", 5)], "value[0].data", "int"),
    ([R.Blob(None, b"")], "value[0].type", "NoneType"),
    ({"s": R.Stream("text")}, "value['s']", "Stream"),
    ([R.Stream("nope", status="done")], "value[0]", "Stream"),
    ([R.Stream("bytes", [1], status="done")], "value[0].items[0]", "int"),
    ([R.Stream("text", [object()], status="done")], "value[0].items[0]", "object"),
    ([R.TemporaryReference("x")], "value[0]", "TemporaryReference"),
    ([R.Function("() => 1")], "value[0]", "Function"),
    ({1: "a"}, "value key 1", "int"),
    ([2 ** 80 + 1], "value[0]", "int"),
    ([R.Lazy(status="pending")], "value[0]", "Lazy"),
    ([R.Promise(status="halted")], "value[0]", "Promise"),
    (R.Element(R.Element("a", None, {}), None, {}), "value.type", "Element"),
    (R.Element("a", None, [1]), "value.props", "list"),
    (R.Element("a", 5, {}), "value.key", "int"),
    (R.ClientReference(5.5, [], "x"), "value.id", "float"),
    (R.ClientReference("a", [], "x", import_map={}), "value", "ClientReference"),
    (R.ClientReference("a", ["b\0"], "x"), "value.chunks[0]", "str"),
    (R.Map({"k": {1, 2}.__class__}), "value.entries[0].value", "type"),
])
def test_unsupported_values_raise_type_error_with_their_place(value, where, what):
    with pytest.raises(TypeError) as e:
        R.dumps(value)
    assert ("cannot write %s at %s" % (what, where)) in str(e.value), str(e.value)


def test_deep_values():
    x = y = []
    for _ in range(4000):
        y.append([])
        y = y[0]
    assert pydump._deep(R.loads, R.dumps(x)) is not None
    for _ in range(6000):
        y.append([])
        y = y[0]
    with pytest.raises(ValueError, match="nested deeper"):
        R.dumps(x)


def test_cycles_are_written_as_references():
    a = []
    a.append({"self": a})
    assert R.dumps(a) == b'0:[{"self":"$0"}]\n'
    got = R.loads(R.dumps(a))
    assert got[0]["self"] is got
    # an element is made after its props: one that holds itself cannot be
    el = R.Element("div", None, {})
    el.props["children"] = [el]
    with pytest.raises(TypeError, match=r"at value.props\['children'\]\[0\]: a cycle"):
        R.dumps(el)


def test_bundler_option():
    assert R.dumps(1, bundler="webpack") == b"0:1\n"
    with pytest.raises(ValueError, match="webpack"):
        R.dumps(1, bundler="turbopack")
    with pytest.raises(ValueError):
        R.dumps(1, bundler="nope")


def _stream(data, sizes, **opts):
    """Feeds data in pieces of the given sizes (cycled), calling encode_ready()
    after each and after finish(); returns the pieces it wrote and the bytes
    fed before the first one."""
    d = R.Decoder(keep_rows=True, **opts)
    out, at, first, i = [], 0, None, 0
    while at < len(data):
        n = sizes[i % len(sizes)]
        i += 1
        d.feed(data[at:at + n])
        at += n
        piece = d.encode_ready()
        if piece and first is None:
            first = min(at, len(data))
        out.append(piece)
    try:
        d.finish()
    except (R.IncompleteError, R.ServerError):
        pass
    out.append(d.encode_ready())
    assert d.encode_ready() == b""
    return b"".join(out), first


def test_decoder_encode_ready_streams_every_kept_payload():
    known = _known_inexact()
    early = multi = 0
    for rel in SERVER_WRITTEN:
        with open(os.path.join(FIXTURES, rel), "rb") as f:
            data = f.read()
        opts = dict(dev="/dev/" in rel, bundler=_bundler_of(rel))
        for sizes in ([len(data)], [1, 7, 64], [4096]):
            out, first = _stream(data, sizes, **opts)
            if rel not in known:
                assert out == data, (rel, sizes)
            if sizes == [1, 7, 64] and data.count(b"\n") > 1:
                multi += 1
                early += first is not None and first < len(data)
    assert early > multi * 9 // 10, (early, multi)


def test_decoder_encode_ready_waits_for_a_pending_row():
    d = R.Decoder(keep_rows=True)
    d.feed(b'0:{"a":"$1"}\n2:"later"\n')
    assert d.encode_ready() == b""
    d.feed(b'1:"x"\n')
    assert d.encode_ready() == b'0:{"a":"$1"}\n2:"later"\n1:"x"\n'
    assert d.finish() == {"a": "x"}
    assert d.encode_ready() == b""
    with pytest.raises(ValueError):
        R.Decoder().encode_ready()
    bad = R.Decoder(keep_rows=True)
    with pytest.raises(R.DecodeError):
        bad.feed(b"0:1\n0:2\n")
    with pytest.raises(R.DecodeError):
        bad.encode_ready()


def test_numeric_client_reference_ids():
    """webpack's numeric module and chunk ids: the I row as webpack's
    server writes it, and read back equal."""
    ref = R.ClientReference(1337, [7, "7.chunk.js", 12, "12.chunk.js"], "default")
    aref = R.ClientReference(42, [], "Thing", is_async=True)
    value = [R.Element(ref, None, {"n": 1}), {"of": ref, "a": aref}]
    data = R.dumps(value)
    assert data.startswith(b'1:I[1337,[7,"7.chunk.js",12,"12.chunk.js"],"default"]\n'
                           b'2:I[42,[],"Thing",1]\n')
    got = R.loads(data)
    assert got[1]["of"].id == 1337 and got[1]["of"].chunks == [7, "7.chunk.js", 12, "12.chunk.js"]
    assert got[1]["a"].is_async and got[1]["a"].id == 42
    assert got[0].type.value.id == 1337
    with pytest.raises(TypeError, match="str or int"):
        R.dumps(R.ClientReference(1.5, [1], "x"))
    with pytest.raises(TypeError, match="str or int"):
        R.dumps(R.ClientReference(1, [1.5], "x"))
