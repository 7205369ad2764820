"""No leak over 10,000 decodes: loads, canonical_dump, the streaming Decoder
and every error path, over payloads of every kind. Bounded by RSS (C and
Python memory), by tracemalloc (Python allocations) and by the number of
objects the garbage collector tracks."""

import ctypes
import gc
import os
import tracemalloc

import pytest

import rscflight as R
from conftest import ALL_VECTORS

N = 10000


def _payloads():
    picked = []
    for v in ALL_VECTORS:
        if v.inspect_at is None and len(picked) < 400:
            picked.append((v.data(), v.opts()))
    # values of every kind, a cycle, a deep chain, an error path
    picked.append((b'1:{"self":"$1","m":"$Q2","s":"$W3"}\n2:[[{"k":1},"v"],["a",2]]\n3:["a",{"o":1}]\n'
                   b'0:["$1","$n12345678901234567890","$D2020-01-01T00:00:00.000Z","$Sreact.fragment"]\n', {}))
    picked.append((b"".join(b'%x:["$","div",null,{"children":"$%x"}]\n' % (i, i + 1) for i in range(300))
                   + b'12c:"leaf"\n', {}))
    picked.append((b"0:1\n0:2\n", {}))          # DecodeError
    picked.append((b'0:E{"digest":"x"}\n', {}))  # rejected root
    return picked


def _under_asan():
    """ASan's quarantine keeps freed memory: RSS says nothing there."""
    try:
        with open("/proc/self/maps") as f:
            return "libasan" in f.read()
    except OSError:
        return False


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _one(i, payloads):
    data, opts = payloads[i % len(payloads)]
    try:
        R.loads(data, **opts)
    except (R.DecodeError, R.ServerError, R.IncompleteError):
        pass
    if i % 7 == 0:
        try:
            R.canonical_dump(data, **opts)
        except R.DecodeError:
            pass
    if i % 5 == 0:
        d = R.Decoder(**opts)
        try:
            half = len(data) // 2
            d.feed(data[:half])
            d.feed(data[half:])
            d.finish()
        except (R.DecodeError, R.ServerError, R.IncompleteError):
            pass
        list(d.read_events())
        if i % 10 == 0:
            d.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_no_leak_over_10000_decodes():
    payloads = _payloads()
    for i in range(1000):  # warm up: caches, allocator pools
        _one(i, payloads)
    gc.collect()
    rss0, objs0 = _rss(), len(gc.get_objects())
    for i in range(N):
        _one(i, payloads)
    gc.collect()
    rss1, objs1 = _rss(), len(gc.get_objects())
    assert objs1 - objs0 < 1000, "gc-tracked objects grew by %d" % (objs1 - objs0)
    if _under_asan():
        return
    assert rss1 - rss0 < 16 * 1024 * 1024, "RSS grew by %.1f MB over %d decodes" % (
        (rss1 - rss0) / 2 ** 20, N)


def test_no_python_allocation_leak():
    payloads = _payloads()
    for i in range(500):
        _one(i, payloads)
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(500):
            _one(i, payloads)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(2000):
            _one(i, payloads)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 256 * 1024, "Python memory grew by %d bytes over 2000 decodes" % (after - before)


def _trim():
    """glibc's malloc_trim(0); False where there is none (RSS then says
    nothing about what was freed)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
        return True
    except (OSError, AttributeError):  # not glibc
        return False


def _rows(n):
    """n small model rows and a root row 0 listing them."""
    rows = b"".join(b'%x:{"a":"s%d","b":[1,2,3],"c":{"d":null}}\n' % (i, i) for i in range(1, n + 1))
    return rows + b"0:[" + b",".join(b'"$%x"' % i for i in range(1, n + 1)) + b"]\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_release_memory_gives_back_what_decoders_keep():
    # ~0.9 MB of small rows: within what loads keeps for the next call
    data = _rows(16000)
    assert len(data) < 1 << 20
    for _ in range(3):
        assert len(R.loads(data)) == 16000
        with R.Decoder() as d:  # a streaming decoder freed: kept by the C library
            d.feed(data)
            d.finish()
    gc.collect()
    # What free() gave back reaches the OS only when libc says so: glibc's
    # heap returns it at malloc_trim (or when its thresholds happen to
    # allow), so RSS is compared around a trim on both sides.
    _trim()
    kept = _rss()
    R.release_memory()
    R.release_memory()  # twice: nothing left, harmless
    if _trim() and not _under_asan():
        assert _rss() < kept - 2 * 2 ** 20, "release_memory gave back %.1f MB" % ((kept - _rss()) / 2 ** 20)
    assert R.loads(data)[15999] == {"a": "s16000", "b": [1, 2, 3], "c": {"d": None}}


def test_loads_keeps_one_decoder_of_a_few_megabytes():
    # Decoders that read up to 1 MB are kept for the next call, and one that
    # read up to 8 MB (its page faults were a fifth of a 4 MB page's loads;
    # docs/performance.md, twenty-third round); bigger ones are freed.
    R.release_memory()
    assert R._n._pool() == ()
    big = _rows(60000)  # ~2.6 MB
    assert 1 << 20 < len(big) < 8 << 20
    assert len(R.loads(big)) == 60000
    assert R._n._pool() == (len(big),)
    small = _rows(100)
    assert len(R.loads(small)) == 100  # borrowed input: options of its own
    assert sorted(R._n._pool()) == [len(small), len(big)]
    R.release_memory()
    # a second big decoder (other options) while one is kept: freed
    assert len(R.loads(big)) == 60000
    assert len(R.loads(big, dev=True)) == 60000
    assert R._n._pool() == (len(big),)
    assert R.canonical_dump(big).startswith("{")  # options of its own: freed too
    assert R._n._pool() == (len(big),)
    R.release_memory()
    huge = _rows(200000)  # ~9.3 MB
    assert len(huge) > 8 << 20
    assert len(R.loads(huge)) == 200000
    assert R._n._pool() == ()
    R.release_memory()
    assert R._n._pool() == ()


def test_a_big_decoder_is_not_left_in_the_c_librarys_slot():
    # loads (past what it keeps itself) and a streaming Decoder free a
    # decoder that read more than 1 MB outright: left where rsc_decoder_free
    # keeps one (trimmed, up to 16 MiB), it made the next loads of a big
    # text page fault its heap in again (glibc's trim threshold;
    # docs/performance.md, twenty-first round).
    data = _rows(40000)
    assert len(data) > 1 << 20

    def kept_by_the_library():
        d = R.lib.rsc_decoder_new(R.ffi.NULL)  # the kept one, if any
        try:
            return R.lib.rsc_decoder_peak_memory(d)
        finally:
            R.lib.rsc_decoder_free(d)
            R.lib.rsc_release_memory()

    R.release_memory()
    assert kept_by_the_library() < 1 << 20  # a new decoder: 16 KB
    assert len(R.loads(data)) == 40000
    assert kept_by_the_library() < 1 << 20
    with R.Decoder() as d:
        d.feed(data)
        d.finish()
    assert kept_by_the_library() < 1 << 20
    # while a streaming Decoder of a smaller payload is kept, as it was
    small = b"".join(b'%x:{"a":"s%d","b":[1,2,3]}\n' % (i, i) for i in range(1, 4001))
    with R.Decoder() as d:
        d.feed(small + b"0:[" + b",".join(b'"$%x"' % i for i in range(1, 4001)) + b"]\n")
        d.finish()
    assert kept_by_the_library() > 1 << 18


def _dumps_values():
    """Values of every kind dumps writes, and values it refuses (each error
    path of its C walk)."""
    ref = R.ClientReference("./Button.js", ["c1", "c1.js"], "default")
    ok = [
        {"s": "x", "u": "é\ud800", "n": [1, 2.5, -0.0, 2 ** 60, None, True, R.undefined],
         "big": R.BigInt(-10 ** 30), "d": R.DateString("+275760-09-13T00:00:00.000Z"),
         "m": R.Map({"a": [1]}), "mp": R.MapPairs([([1], 2)]), "set": {1, "a"},
         "si": R.SetItems([[1]]), "b": b"ab", "ba": bytearray(b"c"), "mv": memoryview(b"xy"),
         "f": R.Float64Array(b"\0" * 8), "sym": R.Symbol("react.fragment"), "t": (1, 2),
         "e": R.ServerError("m")},
        R.Element("div", "k", {"children": [R.Element(ref, None, {}), "t" * 2000]}),
        [R.Lazy(status="fulfilled", value={"a": R.Promise(status="fulfilled", value=[1])}),
         R.Promise(status="rejected", reason=R.ServerError("x", digest="d"))],
        [R.ServerReference("m#a", [1]), R.FormData([("a", "b"), ("f", R.Blob("t", b"x"))]),
         R.Iterator([1]), R.Stream("text", ["a", {"b": 1}], status="done", value=R.undefined),
         R.Stream("bytes", [b"\x01"], status="done", value=R.undefined),
         R.Stream("iterator", [1], status="done", value=[2]),
         R.Stream("iterable", [], status="errored", reason=R.ServerError("x", digest="d"))],
    ]
    cyc = []
    cyc.append({"self": cyc})
    shared = {"a": [1]}
    ok.append([shared, shared, cyc])
    el = R.Element("a", None, {})
    el.props["c"] = [el]
    bad = [object(), {"a": [1, R.TemporaryReference("x")]}, {1: "a"}, [2 ** 80 + 1],
           [R.Lazy(status="pending")], R.Element(R.Element("a", None, {}), None, {}),
           R.ClientReference("a", ["b\0"], "x"), R.ClientReference(5, [], "x"), el,
           R.MapPairs([(1, 2, 3)]), R.Element("a", 5, {}), R.Stream("text"),
           R.ServerReference("x", 5), R.FormData([("a", 1)]), R.Blob("t", 5),
           R.Stream("bytes", [1], status="done")]
    return ok, bad


def _dumps_one(i):
    ok, bad = _dumps_values()  # made anew: a reference kept would keep them alive
    R.dumps(ok[i % len(ok)])
    try:
        R.dumps(bad[i % len(bad)])
    except (TypeError, ValueError):
        pass


def test_dumps_does_not_leak():
    for i in range(300):
        _dumps_one(i)
    gc.collect()
    objs0 = len(gc.get_objects())
    tracemalloc.start()
    try:
        for i in range(300):
            _dumps_one(i)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(3000):
            _dumps_one(i)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(gc.get_objects()) - objs0 < 1000
    assert after - before < 256 * 1024, "Python memory grew by %d bytes" % (after - before)
