"""Every fixture through Python: loads() (walked back into a dump in Python),
canonical_dump() (byte for byte the CLI's text) and the streaming Decoder,
fed whole, in random pieces and one byte at a time, all equal the expected
canonical dump."""

import json
import random
import subprocess
import zlib

import pytest

import rscflight as R
from conftest import ALL, ALL_VECTORS
import pydump

IDS = [v.name for v in ALL]


def _decode_error(v, **kw):
    """The DecodeError the payload raises with its options, or None."""
    try:
        R.canonical_dump(v.data(), **v.opts(**kw))
        return None
    except R.DecodeError as e:
        return e


def _check(expected, got, what):
    assert pydump.equal(expected, got), "%s: %s" % (what, pydump.explain(expected, got))


def _root_document(d):
    root = d.root
    return pydump.document(root.status, root.value if root.status == "fulfilled" else root.reason)


def _feed_cuts(d, data, cuts):
    prev = 0
    for c in list(cuts) + [len(data)]:
        if c > prev:
            d.feed(data[prev:c])
            prev = c


def _finish(d):
    try:
        d.finish()
    except (R.ServerError, R.IncompleteError):
        pass


@pytest.mark.parametrize("v", ALL, ids=IDS)
def test_canonical_dump_is_the_cli_output(v, cli):
    data = v.data()
    for compact in (False, True):
        args = [cli, "dump"] + v.cli_args() + (["--compact"] if compact else []) + [v.rsc]
        p = subprocess.run(args, capture_output=True)
        err = _decode_error(v)
        if err is not None:
            assert p.returncode == 1, "the CLI accepts what Python refuses"
            assert ("offset %d" % err.offset).encode() in p.stderr
            assert err.msg.encode() in p.stderr
            continue
        assert p.returncode == 0, p.stderr
        got = R.canonical_dump(data, compact=compact, **v.opts())
        assert got.encode("utf-8", "surrogateescape") == p.stdout


def _library_agrees(v):
    """Whether the C library's own dump equals the expected one. Where it does
    not, the difference is the library's (tests/ tracks it), not the
    binding's: the binding is then held to the library's dump only."""
    got = json.loads(R.canonical_dump(v.data(), **v.opts()))
    return pydump.equal(v.expected_json(), got), got


@pytest.mark.parametrize("v", [v for v in ALL if v.expected], ids=[v.name for v in ALL if v.expected])
def test_canonical_dump_matches_expected(v):
    if v.inspect_at is not None:
        pytest.skip("the root is read mid-stream: see test_root_read_mid_stream")
    agrees, got = _library_agrees(v)
    if not agrees:
        pytest.xfail("the C library's dump differs from the expected one: %s"
                     % pydump.explain(v.expected_json(), got))


@pytest.mark.parametrize("v", ALL, ids=IDS)
def test_loads_walked_back_equals_the_dump(v):
    """loads()'s Python values, dumped by a Python walk, give the expected
    dump (and the C dump, for payloads without an expected one)."""
    if _decode_error(v):
        with pytest.raises(R.DecodeError):
            R.loads(v.data(), **v.opts())
        return
    got = pydump.loads_document(v.data(), **v.opts())
    c_dump = json.loads(R.canonical_dump(v.data(), **v.opts()))
    _check(c_dump, got, "loads vs C dump")
    if v.expected and v.inspect_at is None:
        if not _library_agrees(v)[0]:
            pytest.xfail("the C library's dump differs from the expected one")
        _check(v.expected_json(), got, "loads vs expected")


def _splittings(n, rounds, seed):
    rng = random.Random(seed)
    for _ in range(rounds):
        k = rng.randint(1, max(1, min(64, n // 2 + 1)))
        yield sorted(rng.sample(range(1, n), min(k, n - 1))) if n > 1 else []


@pytest.mark.parametrize("v", ALL, ids=IDS)
def test_streaming_in_random_pieces(v):
    data = v.data()
    if _decode_error(v):
        d = R.Decoder(**v.opts())
        with pytest.raises(R.DecodeError) as ei:
            _feed_cuts(d, data, [len(data) // 2])
            d.finish()
        assert ei.value.code == _decode_error(v).code
        return
    whole = R.canonical_dump(data, **v.opts())
    want = json.loads(whole)
    rounds = 6 if len(data) < 256 * 1024 else 2
    for cuts in _splittings(len(data), rounds, zlib.crc32(v.name.encode())):
        settled = []
        d = R.Decoder(on_event=lambda kind, obj: settled.append(obj) if kind == "chunk" else None,
                      **v.opts())
        _feed_cuts(d, data, cuts)
        _finish(d)
        assert d.dump() == whole, "pieces at %s" % cuts[:20]
        _check(want, _root_document(d), "Decoder pieces %s" % cuts[:20])
        ids = [c.id for c in settled]
        assert len(ids) == len(set(ids)), "a chunk settled twice"
        assert all(c.status in ("fulfilled", "rejected", "halted") for c in settled)
        d.close()


SMALL = [v for v in ALL_VECTORS if v.inspect_at is None]


@pytest.mark.parametrize("v", SMALL, ids=[v.name for v in SMALL])
def test_streaming_one_byte_at_a_time(v):
    data = v.data()
    if len(data) > 8192 or _decode_error(v):
        pytest.skip("large or refused")
    d = R.Decoder(**v.opts())
    for i in range(len(data)):
        d.feed(data[i:i + 1])
    _finish(d)
    assert d.dump() == R.canonical_dump(data, **v.opts())
    if v.expected:
        _check(v.expected_json(), _root_document(d), "one byte at a time")


INSPECT = [v for v in ALL_VECTORS if v.inspect_at is not None]


@pytest.mark.parametrize("v", INSPECT, ids=[v.name for v in INSPECT])
def test_root_read_mid_stream(v):
    """Vectors where React read the root after some pieces only (lazy_root):
    the early read and the end result both match, and the Chunk handed out
    early updates in place."""
    data = v.data()
    d = R.Decoder(lazy_root=True, **v.opts())
    _feed_cuts(d, data[: v.inspect_at], [c for c in v.cuts if c < v.inspect_at])
    root = d.root
    early = v.early_json()
    if early is not None:
        _check(early, json.loads(d.dump()), "early C dump")
        _check(early, _root_document(d), "early Python values")
    rest = [c - v.inspect_at for c in v.cuts if c > v.inspect_at]
    _feed_cuts(d, data[v.inspect_at:], rest)
    _finish(d)
    assert d.root is root
    _check(v.expected_json(), json.loads(d.dump()), "final C dump")
    _check(v.expected_json(), _root_document(d), "final Python values")


def test_there_are_fixtures():
    assert len(ALL_VECTORS) > 250
    assert sum(1 for v in ALL if v.expected) > 250


def test_bundler_fixtures_are_there_and_parcel_refs_carry_their_import_map():
    from conftest import BUNDLER_FIXTURES
    per = {}
    for v in BUNDLER_FIXTURES:
        per[v.bundler] = per.get(v.bundler, 0) + 1
    assert all(per.get(b, 0) >= 24 for b in ("turbopack", "parcel", "rspack")), per
    v = next(v for v in BUNDLER_FIXTURES if v.name.endswith("parcel/19.3.0/prod/export-names"))
    root = R.loads(v.data(), bundler="parcel")
    refs = root.props["children"][6].props["refs"]
    ns = refs[1]
    assert isinstance(ns, R.ClientReference) and ns.name == "*" and not ns.is_async
    assert ns.chunks == ["static/7.chunk.js", "12.chunk.js"]
    assert ns.import_map == {"VnNLB": "/static/7.chunk.js", "GRTTa": "/12.chunk.js"}
    assert refs[0].import_map is None
    # Parcel's shape is recognised without the option
    assert R.loads(v.data()).props["children"][6].props["refs"][1].import_map == ns.import_map
    with pytest.raises(ValueError):
        R.loads(v.data(), bundler="vite")


def test_rspack_unescaped_dollar_export_names_are_undefined_as_its_client_reads_them():
    from conftest import BUNDLER_FIXTURES
    v = next(v for v in BUNDLER_FIXTURES if v.name.endswith("rspack/19.3.0/prod/export-names"))
    kids = R.loads(v.data(), bundler="rspack").props["children"]
    # "$" (export "$") and "$store" (export "$store"): no string name, so undefined
    assert kids[2].type.value is R.undefined and kids[4].type.value is R.undefined
    assert kids[3].type.value.name == "$"  # "$$" is read as "$" (export "$$")
    assert isinstance(R.loads(v.data()).props["children"][2].type.value, R.ClientReference)
