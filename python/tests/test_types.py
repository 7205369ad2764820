"""The Python values: one test per kind, identity, cycles, deep graphs,
streaming liveness, threads."""

import array
import datetime
import gc
import math
import sys
import threading
import time

import pytest

import rscflight as R


def L(*rows, **kw):
    """loads() of rows given without their newline (T rows have none)."""
    text = "".join(r if r[r.index(":") + 1:][:1] == "T" else r + "\n" for r in rows)
    return R.loads(text.encode(), **kw)


def test_json_values():
    v = L('0:{"a":[1,2.5,-3,true,false,null,"s"],"n":1e300,"big":12345678901234567890,"z":-0.0}')
    assert v["a"] == [1, 2.5, -3, True, False, None, "s"]
    assert type(v["a"][0]) is int and type(v["a"][1]) is float and type(v["a"][3]) is bool
    assert v["n"] == 1e300 and type(v["n"]) is float
    assert v["big"] == 12345678901234567000.0 and type(v["big"]) is float  # a double, as JavaScript reads it
    assert type(v["z"]) is float and math.copysign(1, v["z"]) < 0
    assert L("0:9007199254740992") == 2 ** 53 and type(L("0:9007199254740992")) is int


def test_special_numbers():
    v = L('0:["$NaN","$Infinity","$-Infinity","$-0"]')
    assert math.isnan(v[0]) and v[1] == math.inf and v[2] == -math.inf
    assert math.copysign(1, v[3]) < 0


def test_bigint_is_an_int():
    v = L('0:["$n123456789012345678901234567890","$n-5"]')
    assert v[0] == 123456789012345678901234567890 and isinstance(v[0], int)
    assert type(v[0]) is R.BigInt and v[1] == -5


def test_undefined():
    v = L('0:["$undefined",{"a":"$undefined","b":1}]')
    assert v[0] is R.undefined and not R.undefined and repr(R.undefined) == "undefined"
    assert v[1] == {"b": 1}  # an undefined member is absent, as React deletes it
    assert L('0:"$undefined"') is R.undefined
    import copy
    import pickle
    assert copy.deepcopy(R.undefined) is R.undefined
    assert pickle.loads(pickle.dumps(R.undefined)) is R.undefined


def test_strings():
    assert L('0:"$$x"') == "$x"
    assert L('0:"\\ud800x"') == "\ud800x"  # a lone surrogate survives
    assert L('0:"ünïcødé 東京 \\u0000"') == "ünïcødé 東京 \x00"
    assert L('1:T3,abc', '0:"$1"') == "abc"


def _same_str(got, want):
    # == compares the storage width too; the size says the ASCII flag agrees
    assert got == want and type(got) is str
    assert sys.getsizeof(got) == sys.getsizeof(want) and hash(got) == hash(want)


_SCANS = [True, False] if hasattr(R._rscflight, "_text_avx2") else [None]


@pytest.fixture(params=_SCANS, ids=lambda a: {True: "avx2", False: "sse2", None: "default"}[a])
def scan(request):
    """The string scan with AVX2 (where the CPU has it) and without."""
    if request.param is None:
        yield None
        return
    old = R._rscflight._text_avx2(request.param)
    try:
        yield request.param
    finally:
        R._rscflight._text_avx2(old)


@pytest.mark.parametrize("seed", range(8))
def test_strings_of_every_width(seed, scan):
    """loads builds long strings itself (python/_text.c, text): widest
    byte and length first (32 bytes at a time with AVX2, else 16), then runs
    of ASCII, 2- and 4-byte characters 16 bytes at a time. Runs cut at every
    offset, every width's edges, lone surrogates, in JSON strings and T
    rows, against Python's own decoder."""
    import json
    import random
    rnd = random.Random(seed)
    refused = R._rscflight._text_refused()
    edges = [0x41, 0x7F, 0x80, 0xE9, 0xFF, 0x100, 0x3B1, 0x7FF, 0x800, 0x6771, 0xD7FF, 0xE000,
             0xFFFD, 0xFFFF, 0x10000, 0x1F642, 0x10FFFF]
    pools = [range(0x20, 0x7F), range(0xA0, 0x100), range(0x370, 0x800), range(0x4E00, 0xA000),
             range(0x1F600, 0x1F650), edges, [0xD800, 0xDC00, 0x61]]
    cases = ["", "a" * 15, "a" * 16, "é" * 8, "é" * 9 + "a", "🙂" * 4, "🙂" * 5 + "é"]
    # long runs of 2- and 4-byte characters in strs of every kind, broken
    # inside a 32-byte block (the AVX2 fill's) and not
    cases += ["é" * 300 + "🙂", "Ж" * 300 + "🙂", "é" * 300 + "Ж", "é" * 300,
              "🙂" * 100 + "abc" + "🙂" * 100, "é" * 37 + "x" + "é" * 70 + "🙂",
              "Ж" * 45 + "é" * 50 + "ÿ" * 33, "ÿ" * 64 + "Ā" + "ÿ" * 64]
    for e in edges:  # each width's first and last characters, alone and after others
        cases += [chr(e) * 20, "x" * 17 + chr(e), "é" * 9 + chr(e), chr(e) + "🙂" * 4]
    for _ in range(150):
        runs = []
        for _ in range(rnd.randrange(1, 6)):
            pool = rnd.choice(pools)
            runs.append("".join(chr(rnd.choice(pool)) for _ in range(rnd.randrange(0, 40))))
        cases.append("".join(runs).replace("$", "#"))  # "$..." would be a reference
    for want in cases:
        lone = any(0xD800 <= ord(c) <= 0xDFFF for c in want)
        if lone:
            # as escapes (the fallback parser's WTF-8); a high one before a
            # low one makes a pair, in JSON.parse as in json.loads
            text = json.dumps(want)
            _same_str(R.loads(b"0:" + text.encode() + b"\n"), json.loads(text))
            continue
        _same_str(R.loads(b"0:" + json.dumps(want, ensure_ascii=False).encode() + b"\n"), want)
        raw = want.encode()
        got = R.loads(b"1:T%x," % len(raw) + raw + b'0:"$1"\n')
        _same_str(got, want)
        # a map key and a long key take the same path
        _same_str(next(iter(R.loads(b"0:{" + json.dumps(want, ensure_ascii=False).encode() + b":1}\n"))), want)
    # a byte lane counts 254 blocks (of 16 bytes, or 32 with AVX2), then
    # starts again; around 32 and 64 bytes the AVX2 bulk starts
    for n in (31, 32, 33, 63, 64, 65, 95, 96, 97, 4063, 4064, 4065, 4068, 4079, 4080, 4081,
              4084, 4096, 8127, 8128, 8129, 8132, 8159, 8160, 8161, 8200, 16256, 16257,
              65536 + 3):
        for c in "aéЖ東🙂":
            want = c * (n // len(c.encode())) + "x" * (n % len(c.encode()))
            raw = want.encode()
            _same_str(R.loads(b"1:T%x," % len(raw) + raw + b'0:"$1"\n'), want)
    # valid text never falls back to CPython's decoder (a miscount would)
    assert R._rscflight._text_refused() == refused


def test_short_string_cache():
    """Keys of up to 32 bytes and values of up to 16 go through a cache of
    str objects shared by every loads (python/_text.c, cached_text), a
    slot per hash of the bytes: strings of every length that differ from
    another in one byte, at every place, ASCII or not, met in turns and met
    again, and enough short ones that some share a slot."""
    import json
    cases = []
    for n in range(1, 34):
        base = "".join(chr(0x61 + (i * 7) % 26) for i in range(n))
        cases.append(base)
        for at in range(n):
            for c in ("Z", "é"):
                cases.append(base[:at] + c + base[at + 1:])
    for _ in range(3):  # hits the second and third time
        for k in cases:
            obj = R.loads(b"0:" + json.dumps({k: k}, ensure_ascii=False).encode() + b"\n")
            assert list(obj.items()) == [(k, k)]
            (got,) = obj
            _same_str(got, k)
            _same_str(obj[k], k)
    # many at once, so that entries are replaced while a payload converts
    payload = json.dumps([{k: [k, k]} for k in cases], ensure_ascii=False).encode()
    got = R.loads(b"0:" + payload + b"\n")
    assert got == [{k: [k, k]} for k in cases]
    # enough strings of 2 and 3 bytes that differ in one byte for some to
    # share a slot (4096 of them) one after the other
    letters = "abcdefghijklmnopqrstuvwxyz"
    short = [a + m + b for a in letters[:10] for b in letters[:10] for m in letters]
    short += [a + b for a in letters for b in letters]
    payload = json.dumps([{k: k} for k in short]).encode()
    for _ in range(2):
        assert R.loads(b"0:" + payload + b"\n") == [{k: k} for k in short]


def test_ascii_first_strings(scan):
    """Strings of 64 bytes or more that start with 16 ASCII bytes are copied
    as they are checked (python/_text.c, ascii_copy); a non-ASCII
    character anywhere after drops that copy and the scan starts where the
    ASCII stopped. Every block edge (16 and 32 bytes) and the last bytes."""
    refused = R._rscflight._text_refused()
    for n in (63, 64, 65, 79, 80, 81, 95, 96, 97, 127, 128, 129, 200, 4097):
        _same_str(R.loads(b"1:T%x," % n + b"a" * n + b'0:"$1"\n'), "a" * n)
        _same_str(R.loads(b'0:"' + b"b" * n + b'"\n'), "b" * n)
        places = {15, 16, 17, 31, 32, 33, 47, 48, 63, 64, n // 2, n - 17, n - 16, n - 15, n - 2, n - 1}
        for at in sorted(p for p in places if 0 <= p < n):
            for c in "éÿЖ東🙂\x7f":
                want = "a" * at + c + "z" * (n - at - 1)
                raw = want.encode()
                _same_str(R.loads(b"1:T%x," % len(raw) + raw + b'0:"$1"\n'), want)
                _same_str(R.loads(b'0:"' + raw + b'"\n'), want)
    assert R._rscflight._text_refused() == refused


def test_random_text_rows(scan):
    """Many random T rows of mixed widths, runs of up to 3,000 characters
    (the SIMD scan and fill meet every run length and offset), against
    Python's own decoder. A 150-second soak of this (435K strings, both
    scans) found nothing; this keeps a slice of it in the suite."""
    import random
    rnd = random.Random(7)
    pools = [range(0x20, 0x7F), range(0xA0, 0x100), range(0x100, 0x800), range(0x800, 0xD800),
             range(0xE000, 0x10000), range(0x10000, 0x110000), range(0x1F600, 0x1F650)]
    refused = R._rscflight._text_refused()
    for _ in range(1500):
        runs = []
        for _ in range(rnd.randrange(1, 8)):
            pool = rnd.choice(pools)
            size = rnd.choice([rnd.randrange(0, 20), rnd.randrange(0, 200), rnd.randrange(0, 3000)])
            runs.append("".join(chr(rnd.choice(pool)) for _ in range(size)))
        text = "".join(runs)
        raw = text.encode()
        payload = b"1:T%x," % len(raw) + raw + b'0:"$1"\n'
        _same_str(R.loads(payload), text)  # a leading BOM is kept, as React's fixed client
        # drop_bom: React 19.3.1's TextDecoder drops it
        _same_str(R.loads(payload, drop_bom=True), text[1:] if text.startswith("\ufeff") else text)
    assert R._rscflight._text_refused() == refused


BOM = "\ufeff"


@pytest.mark.parametrize("marks", [1, 2])
def test_byte_order_marks(marks):
    """One and two leading U+FEFF in a text row and a model row, fed whole
    and split at every byte, kept (default) and dropped (drop_bom)."""
    lead = (BOM * marks).encode()
    text = lead + "a,b\n".encode()
    t_row = b"1:T%x," % len(text) + text + b'0:"$1"\n'
    model = b"0:" + lead + b'{"a":1}\n'
    cases = [
        (t_row, {}, BOM * marks + "a,b\n"),
        (t_row, {"drop_bom": True}, BOM * (marks - 1) + "a,b\n"),
        (model, {"drop_bom": True}, {"a": 1} if marks == 1 else SyntaxError),
        (model, {}, SyntaxError),
    ]
    for data, opts, want in cases:
        left = marks - 1 if opts else marks  # the marks JSON.parse sees
        for cut in range(len(data) + 1):
            d = R.Decoder(**opts)
            d.feed(data[:cut])
            d.feed(data[cut:])
            if want is SyntaxError:
                with pytest.raises(R.ServerError) as ei:
                    d.finish()
                msg = ei.value.message
                assert msg.startswith("Unexpected token '\ufeff', \"" + BOM * left + "{"), msg
                assert msg.endswith('" is not valid JSON'), msg
            else:
                assert d.finish() == want
        if want is not SyntaxError:
            assert R.loads(data, **opts) == want


def test_element():
    e = L('0:["$","div","k",{"className":"x","children":["a",["$","span",null,{}]]}]')
    assert type(e) is R.Element and e.type == "div" and e.key == "k"
    assert e.props["children"][1].type == "span" and e.props["children"][1].key is None
    short = L('0:["$","div"]')
    assert short.key is R.undefined and short.props is R.undefined


def test_symbols_are_interned():
    v = L('0:["$Sreact.fragment","$Sreact.fragment","$Sreact.suspense"]')
    assert v[0] is v[1] is R.Symbol("react.fragment") is R.symbol_for("react.fragment")
    assert v[2] is not v[0] and v[0].key == "react.fragment"
    frag = L('1:"$Sreact.fragment"', '0:["$","$1",null,{"children":"x"}]')
    assert frag.type is R.Symbol("react.fragment")


def test_dates():
    d = L('0:"$D2009-02-13T23:31:30.123Z"')
    assert d == datetime.datetime(2009, 2, 13, 23, 31, 30, 123000, tzinfo=datetime.timezone.utc)
    for text in ("+275760-09-13T00:00:00.000Z", "2024-02-30T00:00:00.000Z", "2024-01-01"):
        v = L('0:"$D%s"' % text)
        assert type(v) is R.DateString and v == text and isinstance(v, str)


def test_client_reference():
    e = L('1:I["app/Button.js",["main","main.js"],"Button"]', '2:I[42,[],"*",1]',
          '0:["$","$L1",null,{"other":"$2"}]')
    lazy = e.type
    assert type(lazy) is R.Lazy and lazy.status == "fulfilled" and lazy.id == 1
    cr = lazy.value
    assert (cr.id, cr.chunks, cr.name, cr.is_async) == ("app/Button.js", ["main", "main.js"], "Button", False)
    other = e.props["other"]
    assert (other.id, other.is_async) == (42, True)


def test_server_reference():
    v = L('1:{"id":"a#f","bound":null}', '2:{"id":"a#g","bound":"$@3"}', '3:["x",1]',
          '0:{"f":"$h1","g":"$h2"}')
    assert type(v["f"]) is R.ServerReference and v["f"].id == "a#f" and v["f"].bound is None
    assert v["g"].bound == ["x", 1]


def test_lazy_and_promise():
    v = L('0:{"p":"$@1","l":"$L2","bad":"$@3"}', '1:"done"', '2:{"x":1}', '3:E{"digest":"d"}')
    assert type(v["p"]) is R.Promise and v["p"].status == "fulfilled" and v["p"].value == "done"
    assert v["l"].value == {"x": 1} and v["l"].reason is None
    assert v["bad"].status == "rejected" and v["bad"].value is None
    assert isinstance(v["bad"].reason, R.ServerError) and v["bad"].reason.digest == "d"
    with pytest.raises(R.ServerError):
        v["bad"].result()
    assert v["p"].result() == "done"
    missing = L('0:{"p":"$@5"}')["p"]
    assert missing.status == "rejected" and missing.reason.message == "Connection closed."
    halted = L('0:{"p":"$@5"}', allow_partial=True)["p"]
    assert halted.status == "halted"
    with pytest.raises(R.IncompleteError):
        halted.result()


def test_map():
    m = L('1:[["a",1],[2,{"x":1}]]', '0:"$Q1"')
    assert type(m) is R.Map and isinstance(m, dict) and m == {"a": 1, 2: {"x": 1}}
    assert list(m) == ["a", 2]
    pairs = L('1:[[{"k":1},"v"],["a",2]]', '0:"$Q1"')
    assert type(pairs) is R.MapPairs and pairs == [({"k": 1}, "v"), ("a", 2)]
    # 1 and true are two keys in JavaScript, one in Python
    clash = L('1:[[1,"a"],[true,"b"]]', '0:"$Q1"')
    assert type(clash) is R.MapPairs and clash == [(1, "a"), (True, "b")]
    dup = L('1:[["a",1],["a",2]]', '0:"$Q1"')  # JavaScript's Map keeps the last value
    assert dup == {"a": 2}
    # keys that are objects holding shared values (a client reference's chunk list)
    m = L('1:I["app/B.js",["c1","c1.js"],"B"]', '2:[["$1","a"],["x","b"]]',
          '0:{"m":"$Q2","again":"$1","third":"$1"}')
    (cr, a), = [(k, x) for k, x in m["m"].items() if k != "x"]
    assert a == "a" and cr.chunks == ["c1", "c1.js"] and m["again"].chunks == ["c1", "c1.js"]
    assert m["third"] is m["again"] is cr  # one ClientReference per I row


def test_set():
    s = L('1:["a",1,"a"]', '0:"$W1"')
    assert s == {"a", 1} and type(s) is set
    items = L('1:["a",{"o":1}]', '0:"$W1"')
    assert type(items) is R.SetItems and items == ["a", {"o": 1}]
    assert type(L('1:["$n1",1]', '0:"$W1"')) is R.SetItems


def test_formdata_blob_iterator():
    fd = L('1:[["name","a"],["file","b"]]', '0:"$K1"')
    assert type(fd) is R.FormData and fd == [("name", "a"), ("file", "b")]
    blob = L('1:["text/plain","$2"]', '2:T5,hello', '0:"$B1"')
    assert type(blob) is R.Blob and blob.type == "text/plain"
    it = L('1:[1,2]', '0:"$i1"')
    assert type(it) is R.Iterator and list(it) == [1, 2]


def test_typed_arrays():
    f32 = array.array("f", [1.5, -2.0]).tobytes()
    data = (b"1:o3,\x01\x02\x03" + b"2:S4,\xfe\xff\x02\x00" + b"3:G8," + f32
            + b"4:A2,\x07\x08" + b"5:V2,\x09\x0a" + b"6:M8," + b"\xff" * 8
            + b"7:S3,\x01\x00\x09"  # a trailing byte that makes no element
            + b'0:["$1","$2","$3","$4","$5","$6","$7"]\n')
    with pytest.raises(R.DecodeError) as ei:  # no server writes a partial element
        R.loads(data)
    assert ei.value.code == R.lib.RSC_ERR_BAD_VALUE and ei.value.row == 7
    v = R.loads(data, lenient=True)  # React's view: the partial element dropped
    assert type(v[0]) is R.Uint8Array and list(v[0]) == [1, 2, 3]
    assert type(v[1]) is R.Int16Array and list(v[1]) == [-2, 2]
    assert type(v[2]) is R.Float32Array and list(v[2]) == [1.5, -2.0]
    assert type(v[3]) is bytearray and v[3] == b"\x07\x08"
    assert type(v[4]) is memoryview and bytes(v[4]) == b"\x09\x0a"
    assert type(v[5]) is R.BigInt64Array and list(v[5]) == [-1]
    assert list(v[6]) == [1]
    assert isinstance(v[0], array.array)


# Row tags of the typed arrays (docs/spec/FLIGHT-PROTOCOL.md 2.4) by class name.
TYPED_TAGS = {"Int8Array": "O", "Uint8Array": "o", "Uint8ClampedArray": "U",
              "Int16Array": "S", "Uint16Array": "s", "Int32Array": "L",
              "Uint32Array": "l", "Float32Array": "G", "Float64Array": "g",
              "BigInt64Array": "M", "BigUint64Array": "m"}


@pytest.mark.parametrize("name", sorted(TYPED_TAGS))
def test_typed_arrays_equal_their_class(name):
    # loads builds typed arrays without the classes' Python __new__ (on
    # little-endian hosts): the result must be what the class itself makes.
    cls = getattr(R, name)
    payload = bytes(range(1, 17)) + bytes([0xff, 0x80, 0x7f, 0x00] * 4)
    data = ("1:%s%x," % (TYPED_TAGS[name], len(payload))).encode() + payload + b'0:"$1"\n'
    v = R.loads(data)
    want = cls(payload)
    assert type(v) is cls and v.typecode == want.typecode
    assert v.tobytes() == want.tobytes() and list(v) == list(want)
    assert repr(v) == repr(want)


def test_streams():
    data = (b'1:R\n2:X\n3:r\n0:{"s":"$1","it":"$2","b":"$3"}\n1:"a"\n1:"b"\n1:C\n'
            b'2:1\n2:C"end"\n3:b2,hi3:b1,!3:C\n')
    v = R.loads(data)
    s, it, b = v["s"], v["it"], v["b"]
    assert (s.kind, s.items, s.status, s.value) == ("text", ["a", "b"], "done", R.undefined)
    assert (it.kind, it.items, it.status, it.value) == ("iterable", [1], "done", "end")
    assert b.kind == "bytes" and b.data() == b"hi!" and b.status == "done"


def test_error_values():
    e = L('0:"$Z"')
    assert isinstance(e, R.ServerError) and isinstance(e, Exception)
    assert e.digest is R.undefined


def test_temporary_reference():
    assert L('0:"$T1:a"', temp_refs=True).path == "1:a"


# ---- identity and cycles ---------------------------------------------------------------

def test_shared_values_are_the_same_object():
    v = L('1:{"x":[1,2]}', '0:{"a":"$1","b":"$1","c":"$1:x","d":["$1:x"]}')
    assert v["a"] is v["b"] and v["c"] is v["a"]["x"] and v["d"][0] is v["c"]


def test_cycles():
    v = L('0:{"name":"o","self":"$0"}')
    assert v["self"] is v
    arr = L('0:[1,"$0"]')
    assert arr[1] is arr
    el = L('1:["$","div",null,{"me":"$1"}]', '0:"$1"')
    assert el.props["me"] is el
    del v, arr, el
    gc.collect()


def test_values_a_collection_copies_keep_their_identity():
    """A Map, Set or iterator built from a row holds that row's values; so
    does a server reference's bound array; a chunk's value is the same
    object through its lazy, its promise and a reference."""
    v = L('1:[["k",{"v":1}]]', '0:{"m":"$Q1","a":"$1"}')
    assert v["m"]["k"] is v["a"][0][1]
    v = L('1:[{"x":1},[2]]', '0:{"s":"$W1","i":"$i1","a":"$1"}')
    assert v["i"].items[0] is v["a"][0] and v["i"].items[1] is v["a"][1]
    assert v["s"][0] is v["a"][0] and v["s"][1] is v["a"][1]
    v = L('1:{"id":"f","bound":[{"b":1}]}', '0:{"f":"$h1","b":"$1:bound"}')
    assert v["f"].bound is v["b"]
    v = L('1:{"x":[1]}', '0:{"l":"$L1","p":"$@1","r":"$1","x":"$1:x"}')
    assert v["l"].value is v["p"].value is v["r"] and v["x"] is v["r"]["x"]
    v = L('0:{"l":"$L0"}')
    assert v["l"].value is v


def test_conversion_overrun_falls_back_to_remembering_everything():
    """loads remembers only values a reference placed; if that list ever
    missed one, a cycle must not convert forever: past a bound the
    conversion starts again remembering every value. The test flag makes
    the list name nothing."""
    share_none = 1 << 31
    status, v, _ = R._n._decode(b'0:{"name":"o","self":"$0","l":[1,"$0:l"]}\n', share_none, None)
    assert status == "fulfilled" and v["self"] is v and v["l"][1] is v["l"]
    # without a cycle nothing overruns: the flag really hides the sharing
    status, v, _ = R._n._decode(b'1:{"x":[1]}\n0:{"a":"$1","c":"$1"}\n', share_none, None)
    assert v["a"] == v["c"] and v["a"] is not v["c"]
    del v
    gc.collect()


def _chain(n):
    rows = ['%x:["$","div",null,{"children":"$%x"}]' % (i, i + 1) for i in range(n)]
    rows.append('%x:"leaf"' % n)
    return ("\n".join(rows) + "\n").encode()


def test_deep_graphs():
    """10^5 levels: no recursion anywhere (conversion or freeing)."""
    n = 100000
    v = R.loads(_chain(n))
    depth = 0
    while type(v) in (R.Element, R.Lazy):
        if type(v) is R.Lazy:  # an element whose props waited on a row
            v = v.value
            continue
        v = v.props["children"]
        depth += 1
    assert depth == n and v == "leaf"
    nested = R.loads(b"0:" + b"[" * 90000 + b"]" * 90000 + b"\n", limits={"max_depth": 100000})
    depth = 0
    while nested:
        nested = nested[0]
        depth += 1
    assert depth == 89999
    del v, nested
    gc.collect()


# ---- the streaming decoder's values stay live ----------------------------------------------------

def test_wrappers_of_chunks_that_end_blocked():
    """A chunk that waits on a row that never comes ends blocked (with
    allow_partial the row halts), which is no settle: finish reads the
    wrappers still pending once more. Found by the fuzz corpus fed in
    pieces."""
    data = b'0:{"p":"$@1","l":"$L1"}\n1:["$2"]\n'
    for cut in range(1, len(data)):
        d = R.Decoder(allow_partial=True)
        d.feed(data[:cut])
        d.feed(data[cut:])
        v = d.finish()
        assert (v["p"].status, v["l"].status) == ("blocked", "blocked"), cut
        d.close()


def test_lazy_settles_in_place():
    d = R.Decoder()
    d.feed(b'0:{"l":"$L1","p":"$@2"}\n')
    root = d.root.value
    lazy, promise = root["l"], root["p"]
    assert lazy.status == "pending" and promise.status == "pending"
    d.feed(b'1:{"x":1}\n')
    assert d.chunk(1).status == "fulfilled"
    assert lazy.status == "fulfilled" and lazy.value == {"x": 1}
    d.feed(b'2:"two"\n')
    # rows are parsed when read, as React does: nothing read chunk 2 yet
    assert promise.status == "pending"
    assert d.finish() is root  # finish reads everything the root reaches
    assert promise.status == "fulfilled" and promise.value == "two"


def test_events_and_streams_grow():
    d = R.Decoder()
    d.feed(b'1:R\n0:{"s":"$1"}\n')
    events = {o.id: o for k, o in d.read_events()}
    assert events[0].status == "fulfilled" and events[1].status == "fulfilled"
    s = events[0].value["s"]
    assert events[1].value is s
    assert s.items == [] and s.status == "open"
    d.feed(b'1:"a"\n')
    assert s.items == ["a"]
    d.feed(b'1:"b"\n1:C\n')
    assert s.items == ["a", "b"] and s.status == "done"
    d.finish()
    assert sorted(d.chunk_ids()) == [0, 1]


def test_callback_and_hints():
    seen = []
    d = R.Decoder(on_event=lambda kind, obj: seen.append((kind, obj)))
    d.feed(b':HL["/font.woff2","font"]\n0:1\n')
    d.finish()
    assert [k for k, _ in seen] == ["hint", "chunk"]
    assert d.hints[0].code == "L" and d.hints[0].value == ["/font.woff2", "font"]
    assert list(d.read_events()) == []
    # A code byte that is no character on its own is U+FFFD (React's
    # TextDecoder), not a UnicodeDecodeError out of feed (found by fuzzing).
    d = R.Decoder()
    d.feed(b':H\xb88\n0:1\n')
    assert d.finish() == 1
    assert d.hints[0].code == "\ufffd" and d.hints[0].value == 8
    # A kept U+FEFF begins the row: it is the code (React's row[0]), and
    # the rest parses; drop_bom drops it first, as React 19.3.1 does.
    for data in (b':H\xef\xbb\xbf["x"]\n0:1\n', b':H\xc3\xa9["x"]\n0:1\n'):
        d = R.Decoder()
        d.feed(data)
        assert d.finish() == 1
        assert d.hints[0].code == data[2:-10].decode() and d.hints[0].value == ["x"]
    d = R.Decoder(drop_bom=True)
    d.feed(b':H\xef\xbb\xbfL["x"]\n0:1\n')
    assert d.finish() == 1
    assert d.hints[0].code == "L" and d.hints[0].value == ["x"]


def test_debug_rows_and_dev():
    d = R.Decoder(dev=True)
    d.feed(b'1:D{"name":"App"}\n0:1\n')
    d.finish()
    assert d.is_dev
    debug = [o for k, o in d.read_events() if k == "debug"]
    assert debug and debug[0].tag == "D" and debug[0].id == 1 and "App" in debug[0].text


def test_decoder_info():
    d = R.Decoder()
    d.feed(b"0:1\n")
    assert d.bytes_fed == 4 and d.peak_memory > 0 and not d.is_dev


# ---- threads ------------------------------------------------------------------------------

def _big(n_cards=20000):
    rows = ['1:I["app/Button.js",[],"Button"]']
    kids = []
    for i in range(n_cards):
        rows.append('%x:["$","section","k%d",{"className":"card","children":[["$","h2",null,'
                    '{"children":"Item %d"}],["$","$L1",null,{"id":%d,"tags":["a","b"]}]]}]'
                    % (i + 2, i, i, i))
        kids.append('"$%x"' % (i + 2))
    rows.append('0:["$","main",null,{"children":[%s]}]' % ",".join(kids))
    return ("\n".join(rows) + "\n").encode()


def test_threads_decode_independently():
    payloads = [_big(500 + 100 * i) for i in range(4)]
    want = [R.canonical_dump(p) for p in payloads]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                v = R.loads(payloads[i])
                assert len(v.props["children"]) == 500 + 100 * i
                assert R.canonical_dump(payloads[i]) == want[i]
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_gil_is_released_while_decoding():
    """While one thread feeds a large payload (no root: rows are framed and
    parsed, nothing is converted), another keeps running."""
    data = b"".join(r + b"\n" for r in _big(60000).split(b"\n") if r and not r.startswith(b"0:"))
    d = R.Decoder()
    t0 = time.perf_counter()
    R.Decoder().feed(data)
    alone = time.perf_counter() - t0
    if alone < 0.02:
        pytest.skip("the feed is too fast to observe (%.3f s)" % alone)
    state = {"running": True}
    gaps = []

    def spin():
        last = time.perf_counter()
        while state["running"]:
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.01)
        t1 = time.perf_counter()
        d.feed(data)
        during = time.perf_counter() - t1
        state["running"] = False
        t.join()
    finally:
        sys.setswitchinterval(old)
    # Against the feed's own time in this run, not the lone feed's: on a
    # loaded machine (other pytest workers, other builds) the same feed takes
    # longer while the spinner competes for a core, but a feed that held the
    # GIL would stall the spinner for all of it.
    assert max(gaps) < during / 2, "the other thread stalled %.3f s of a %.3f s feed" % (max(gaps), during)
