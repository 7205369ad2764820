"""Every way a decode fails: DecodeError with offset, row and code (the CLI's
message, the library's rsc_status), whole and streaming; and the Python-level
errors (roots that did not fulfil, bad arguments, a closed decoder)."""

import pickle
import re
import subprocess

import pytest

import rscflight as R
from conftest import ALL_VECTORS

lib = R.lib

# (name, payload, options, code, offset, row)
CASES = [
    ("bad id", b"G:1\n", {}, lib.RSC_ERR_BAD_ID, 0, None),
    ("bad id after a row", b"0:1\nzz:2\n", {}, lib.RSC_ERR_BAD_ID, 4, None),
    ("bad length (space)", b"0:T zz,", {}, lib.RSC_ERR_BAD_LENGTH, 3, 0),
    ("bad length (letters)", b"0:Tzz,abc", {}, lib.RSC_ERR_BAD_LENGTH, 3, 0),
    ("bad length (sign)", b"0:T-1,", {}, lib.RSC_ERR_BAD_LENGTH, 3, 0),
    ("duplicate row", b"0:1\n0:2\n", {}, lib.RSC_ERR_DUPLICATE_ROW, 4, 0),
    ("dev row in production", b"1:D{}\n0:1\n", {}, lib.RSC_ERR_DEV_ROW, None, None),
    ("I row not JSON", b"1:I{bad\n0:1\n", {}, lib.RSC_ERR_BAD_ROW, 3, 1),
    ("H row without a code", b":H\n0:1\n", {}, lib.RSC_ERR_BAD_ROW, 2, 0),
    ("H row not JSON", b":HX{bad\n0:1\n", {}, lib.RSC_ERR_BAD_ROW, 2, 0),
    ("E row not JSON", b"1:E{bad\n0:1\n", {}, lib.RSC_ERR_BAD_ROW, 3, 1),
    ("I row with a BOM", b'1:I\xef\xbb\xbf["a",[],"b"]\n0:"$1"\n', {}, lib.RSC_ERR_BAD_ROW, 3, 1),
    ("self reference", b'0:"$0"\n', {}, lib.RSC_ERR_BAD_VALUE, 0, 0),
    ("circle", b'0:"$1"\n1:"$0"\n', {}, lib.RSC_ERR_BAD_VALUE, 7, 1),
    ("partial typed array", b'1:g9,123456789\n0:"$1"\n', {}, lib.RSC_ERR_BAD_VALUE, 0, 1),
    ("I row of a string", b'1:I"abc"\n0:"$1"\n', {}, lib.RSC_ERR_BAD_VALUE, 0, 1),
    ("limit: row bytes", b'0:"' + b"a" * 100 + b'"\n', {"limits": {"max_row_bytes": 10}},
     lib.RSC_ERR_LIMIT, None, 0),
    ("limit: total bytes", b'0:"' + b"a" * 100 + b'"\n', {"limits": {"max_total_bytes": 50}},
     lib.RSC_ERR_LIMIT, 50, None),
    ("limit: depth", b"0:" + b"[" * 50 + b"]" * 50 + b"\n", {"limits": {"max_depth": 10}},
     lib.RSC_ERR_LIMIT, None, 0),
    ("limit: nodes", b"0:[" + b",".join([b"1"] * 1000) + b"]\n", {"limits": {"max_nodes": 100}},
     lib.RSC_ERR_LIMIT, None, None),
    ("limit: chunks", b"".join(b"%x:1\n" % i for i in range(1, 100)) + b"0:1\n",
     {"limits": {"max_chunks": 10}}, lib.RSC_ERR_LIMIT, None, None),
    ("limit: path hops", b'1:{"a":{"b":{"c":1}}}\n0:"$1:a:b:c"\n', {"limits": {"max_path_hops": 2}},
     lib.RSC_ERR_LIMIT, None, 0),
]


def _cli_error(cli, data, tmp_path, args=()):
    f = tmp_path / "p.rsc"
    f.write_bytes(data)
    p = subprocess.run([cli, "dump", *args, str(f)], capture_output=True)
    assert p.returncode == 1
    m = re.search(rb"offset (\d+)(?:, row ([0-9a-f]+))?: (.*)", p.stderr)
    assert m, p.stderr
    return int(m.group(1)), (int(m.group(2), 16) if m.group(2) else None), m.group(3).decode()


@pytest.mark.parametrize("name,data,opts,code,offset,row", CASES, ids=[c[0] for c in CASES])
def test_decode_error(name, data, opts, code, offset, row):
    for fn in (R.loads, R.canonical_dump):
        with pytest.raises(R.DecodeError) as ei:
            fn(data, **opts)
        e = ei.value
        assert isinstance(e, ValueError)
        assert e.code == code
        assert e.code_name == R.ffi.typeof("rsc_status").elements[code]
        assert e.msg and e.msg in str(e)
        if offset is not None:
            assert e.offset == offset
        if row is not None or name.startswith("bad id"):
            assert e.row == row
    # pickles (multiprocessing pools)
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.msg, e2.offset, e2.row, e2.code) == (e.msg, e.offset, e.row, e.code)


@pytest.mark.parametrize("name,data,opts,code,offset,row", CASES[:11], ids=[c[0] for c in CASES[:11]])
def test_decode_error_is_the_clis(name, data, opts, code, offset, row, cli, tmp_path):
    with pytest.raises(R.DecodeError) as ei:
        R.loads(data, **opts)
    assert _cli_error(cli, data, tmp_path) == (ei.value.offset, ei.value.row, ei.value.msg)


@pytest.mark.parametrize("name,data,opts,code,offset,row", CASES, ids=[c[0] for c in CASES])
def test_decode_error_streaming(name, data, opts, code, offset, row):
    """Fed one byte at a time, the same error at the same offset; sticky."""
    d = R.Decoder(**opts)
    with pytest.raises(R.DecodeError) as ei:
        for i in range(len(data)):
            d.feed(data[i:i + 1])
        d.finish()
    assert ei.value.code == code
    with pytest.raises(R.DecodeError) as whole:
        R.loads(data, **opts)
    assert ei.value.offset == whole.value.offset
    assert ei.value.row == whole.value.row
    with pytest.raises(R.DecodeError) as again:  # sticky
        d.feed(b"0:1\n")
    assert again.value.code == code
    with pytest.raises(R.DecodeError):
        d.finish()
    with pytest.raises(R.DecodeError):
        d.dump()


REFUSED = [v for v in ALL_VECTORS if v.expected is None]


@pytest.mark.parametrize("v", REFUSED, ids=[v.name for v in REFUSED])
def test_refused_vectors(v, cli, tmp_path):
    """Vectors React's client throws on: the same verdict as the CLI."""
    data = v.data()
    p = subprocess.run([cli, "dump", *v.cli_args(), v.rsc], capture_output=True)
    if p.returncode == 0:
        # rscflight decodes it (docs/conformance.md): test_vectors holds
        # the Python values to the C dump
        R.canonical_dump(data, **v.opts())
        return
    with pytest.raises(R.DecodeError) as ei:
        R.loads(data, **v.opts())
    assert _cli_error(cli, data, tmp_path, v.cli_args()) == (ei.value.offset, ei.value.row, ei.value.msg)


LENIENT = [v for v in ALL_VECTORS if v.lenient]


@pytest.mark.parametrize("v", LENIENT, ids=[v.name for v in LENIENT])
def test_lenient_vectors_refused_by_default(v):
    with pytest.raises(R.DecodeError) as ei:
        R.loads(v.data(), **v.opts(lenient=False))
    assert ei.value.code == lib.RSC_ERR_BAD_ID
    R.canonical_dump(v.data(), **v.opts())  # and accepted with lenient_ids


VALUES = [v for v in ALL_VECTORS if v.values]


@pytest.mark.parametrize("v", VALUES, ids=[v.name for v in VALUES])
def test_impossible_value_vectors_refused_by_default(v):
    with pytest.raises(R.DecodeError) as ei:
        R.loads(v.data(), **v.opts(values=False))
    assert ei.value.code == lib.RSC_ERR_BAD_VALUE
    assert ei.value.code_name == "RSC_ERR_BAD_VALUE"
    R.canonical_dump(v.data(), **v.opts())  # and React's value with lenient


LENIENT_VALUES = [
    (b'0:"$0"\n', None),
    (b'0:"$1"\n1:"$0"\n', None),
    (b'1:"$0"\n0:"$1"\n', None),
    (b'1:S3,\x01\x00\x02' b'0:"$1"\n', [1]),
]


@pytest.mark.parametrize("data,want", LENIENT_VALUES)
def test_lenient_gives_reacts_values(data, want):
    with pytest.raises(R.DecodeError) as ei:
        R.loads(data)
    assert ei.value.code == lib.RSC_ERR_BAD_VALUE
    got = R.loads(data, lenient=True)
    assert (list(got) if want is not None else got) == want
    d = R.Decoder(lenient=True)
    for i in range(len(data)):
        d.feed(data[i:i + 1])
    got = d.finish()
    assert (list(got) if want is not None else got) == want
    R.canonical_dump(data, lenient=True)


def test_feed_after_finish():
    d = R.Decoder()
    d.feed(b"0:1\n")
    assert d.finish() == 1
    with pytest.raises(R.DecodeError) as ei:
        d.feed(b"1:2\n")
    assert ei.value.code == lib.RSC_ERR_STATE


def test_events_before_an_error_are_kept():
    d = R.Decoder()
    with pytest.raises(R.DecodeError):
        d.feed(b':HX{"a":1}\n0:1\n0:2\n')
    events = list(d.read_events())
    assert [k for k, _ in events] == ["hint", "chunk"]
    assert events[1][1].id == 0 and events[1][1].value == 1
    assert d.hints[0].code == "X" and d.hints[0].value == {"a": 1}


# ---- roots that do not fulfil ------------------------------------------------------

def test_rejected_root_raises_its_reason():
    data = b'0:E{"digest":"abc"}\n'
    with pytest.raises(R.ServerError) as ei:
        R.loads(data)
    assert ei.value.digest == "abc"
    assert "omitted in production" in ei.value.message
    d = R.Decoder()
    d.feed(data)
    with pytest.raises(R.ServerError):
        d.finish()
    assert d.root.status == "rejected" and isinstance(d.root.reason, R.ServerError)


def test_missing_root_is_connection_closed():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'1:"x"\n')
    assert ei.value.status == "closed" and ei.value.missing == (0,) and ei.value.offset == 6
    assert ei.value.reason.message == "Connection closed."


def test_halted_root():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'1:"x"\n', allow_partial=True)
    assert ei.value.status == "halted"


def test_blocked_root():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'0:{"a":"$1"}\n', allow_partial=True)
    assert ei.value.status in ("blocked", "halted")


def test_empty_payload():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b"")
    assert ei.value.status == "closed" and ei.value.offset == 0 and ei.value.missing == (0,)


# ---- Python-level misuse ---------------------------------------------------------------

def test_bad_arguments():
    with pytest.raises(TypeError):
        R.loads(12)
    with pytest.raises(TypeError):
        R.loads(b"0:1\n", limits={"max_bogus": 1})
    with pytest.raises(TypeError):
        R.loads(b"0:1\n", True)  # options are keyword-only
    with pytest.raises(TypeError):
        R.Decoder().feed(None)


def test_str_and_buffers_are_accepted():
    assert R.loads("0:\"é\"\n") == "é"
    assert R.loads(bytearray(b"0:1\n")) == 1
    assert R.loads(memoryview(b"xx0:1\n")[2:]) == 1


def test_loads_copies_what_it_borrowed():
    """loads decodes text and binary rows in place (RSC_OPT_BORROW_INPUT,
    the input held meanwhile) and converts them: the result owns its data."""
    data = bytearray(b'2:T3,bad3:o3,\x01\x02\x034:T4,ends'
                     b'1:{"name":"E","message":"$4","stack":[],"env":"$2"}\n'
                     b'0:["$Z1","$2","$3","$4"]\n')
    err, text, raw, end = R.loads(data, dev=True)
    for i in range(len(data)):
        data[i] = 0x21  # the caller reuses its buffer
    assert (text, bytes(raw), end, str(err)) == ("bad", b"\x01\x02\x03", "ends", "ends")
    assert R.loads(memoryview(b"1:T2,hi0:\"$1\"\n")) == "hi"


def test_closed_decoder():
    d = R.Decoder()
    d.feed(b"0:1\n")
    d.close()
    for call in (lambda: d.feed(b""), d.finish, d.dump, lambda: d.chunk(0), d.chunk_ids):
        with pytest.raises(ValueError):
            call()
    d.close()  # twice is fine
    with R.Decoder() as d2:
        d2.feed(b"0:1\n")
    with pytest.raises(ValueError):
        d2.feed(b"")


def test_unknown_chunk():
    d = R.Decoder()
    d.feed(b"0:1\n")
    with pytest.raises(KeyError):
        d.chunk(5)


def test_reused_decoders_keep_no_state_between_calls():
    """loads and canonical_dump reuse a few decoders (rsc_decoder_reset):
    options, errors and values of one call never reach the next."""
    deep = b"0:" + b"[" * 50 + b"]" * 50 + b"\n"
    nested = R.loads(deep)
    for _ in range(3):
        with pytest.raises(R.DecodeError) as e:
            R.loads(deep, limits={"max_depth": 10})
        assert e.value.code == lib.RSC_ERR_LIMIT
        assert R.loads(deep) == nested  # the default limits again
        with pytest.raises(R.DecodeError) as e:
            R.loads(b"0:1\nzz:2\n")
        assert (e.value.code, e.value.offset) == (lib.RSC_ERR_BAD_ID, 4)
        assert R.loads(b'0:{"a":"$1"}\n1:[2]\n') == {"a": [2]}
        assert R.loads(b"0:5\n") == 5  # no chunk 1 from the call before
        assert R.canonical_dump(b'0:"$1"\n1:"x"\n', compact=True) == '{"ok":"x"}\n'
