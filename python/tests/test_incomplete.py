"""A stream that ends early raises IncompleteError ("closed", with the offset
where it ended and the missing row ids), not ServerError: every fixture cut
mid-row, between rows, inside an id and inside a T row, each answer checked
against what this file's own row scanner finds in the bytes."""

import glob
import os

import pytest

import rscflight as R

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
LENGTH_TAGS = b"TAOoUSsLlGgMmVb"


def scan_rows(data):
    """[(start, colon, data, end, id, tag)] of a strictly framed payload, or
    None (FLIGHT-PROTOCOL 2.3)."""
    rows, p, n = [], 0, len(data)
    while p < n:
        start = p
        colon = data.find(b":", p)
        if colon < 0:
            return None
        ident = data[p:colon]
        if ident and not all(c in b"0123456789abcdef" for c in ident):
            return None
        rid = int(ident, 16) if ident else 0
        p = colon + 1
        if p >= n:
            return None
        c = data[p:p + 1]
        if c and c in LENGTH_TAGS:
            comma = data.find(b",", p)
            if comma < 0:
                return None
            try:
                length = int(data[p + 1:comma], 16)
            except ValueError:
                return None
            begin, end = comma + 1, comma + 1 + length
            if end > n:
                return None
            tag = c
        else:
            tag = c if (b"A" <= c <= b"Z") or c in (b"#", b"r", b"x") else b""
            begin = p + len(tag)
            nl = data.find(b"\n", p)
            if nl < 0:
                return None
            end = nl + 1
        rows.append((start, colon, begin, end, rid, tag))
        p = end
    return rows


def expected(rows, k):
    """What a cut at k leaves: (cut, arrived ids, open stream ids)."""
    cut, arrived, streams = None, set(), set()
    for start, colon, begin, end, rid, tag in rows:
        if start >= k:
            break
        if end > k or (tag and tag in LENGTH_TAGS and begin == end == k):
            cut = (rid if k > colon else None, start)
            break
        if tag not in (b"H", b"D", b"N", b"W", b"C"):
            arrived.add(rid)
        if tag in (b"R", b"r", b"X", b"x"):
            streams.add(rid)
        elif tag in (b"C", b"E"):
            streams.discard(rid)
    return cut, arrived, streams


def cut_points(rows, n):
    pts = {0, n}
    step = max(1, len(rows) // 6)
    t_done = False
    for i, (start, colon, begin, end, rid, tag) in enumerate(rows):
        if tag == b"T" and not t_done and end - begin >= 2:
            pts.add(begin + (end - begin) // 2)
            t_done = True
        if i % step and i != len(rows) - 1:
            continue
        pts.update((start + 1, start + (end - start) // 2, begin + (end - begin) // 2, end - 1, end))
    return sorted(p for p in pts if 0 <= p <= n)


def _files():
    return sorted(glob.glob(os.path.join(FIXTURES, "**", "*.rsc"), recursive=True))


def _outcome(fn):
    try:
        return "fulfilled", fn()
    except R.IncompleteError as e:
        return "incomplete", e
    except R.ServerError as e:
        return "server", e


def test_every_fixture_cut():
    files = _files()
    assert len(files) > 500
    seen = {"closed": 0, "cut": 0, "server": 0, "partial": 0}
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        rows = scan_rows(data)
        if rows is None:
            continue
        for k in cut_points(rows, len(data)):
            piece = data[:k]
            for partial in (False, True):
                d = R.Decoder(allow_partial=partial)
                try:
                    d.feed(piece)
                    got = _outcome(d.finish)
                except R.DecodeError:
                    d.close()
                    continue
                cut, arrived, streams = expected(rows, k)
                # ids the decoder heard of (finish reads all the root reaches)
                missing = {i for i in d.chunk_ids() if i not in arrived}
                if cut and cut[0] is not None:
                    missing.add(cut[0])
                if got[0] == "incomplete":
                    # chunk_ids() leaves out negative ids: a "$" reference that
                    # is not hex names chunk NaN in React (here INT64_MIN),
                    # which never arrives (tests/test_incomplete.c checks those)
                    missing.update(i for i in got[1].missing if i < 0)
                root = d.root
                where = "%s cut at %d%s" % (path, k, " (allow_partial)" if partial else "")
                if got[0] == "incomplete":
                    e = got[1]
                    early = cut is not None or missing or streams
                    if early:
                        assert e.offset == k, where
                        assert e.missing == tuple(sorted(missing)), where
                        assert e.cut == cut, where
                        assert e.open_streams == tuple(sorted(streams)), where
                    else:
                        assert e.offset is None and e.missing == () and e.cut is None, where
                    if partial:
                        assert e.status in ("halted", "blocked"), where
                        seen["partial"] += 1
                    else:
                        assert e.status == "closed", where
                        assert root.status == "rejected", where
                        assert e.reason.message == "Connection closed.", where
                        seen["closed"] += 1
                    seen["cut"] += cut is not None
                    # loads says the same
                    lg = _outcome(lambda: R.loads(piece, allow_partial=partial))
                    assert lg[0] == "incomplete", where
                    assert (lg[1].status, lg[1].offset, lg[1].missing, lg[1].cut) == \
                        (e.status, e.offset, e.missing, e.cut), where
                elif got[0] == "server":
                    # only an error the server sent: the root's row arrived
                    assert 0 in arrived, where
                    assert not (got[1].message == "Connection closed." and got[1].digest is R.undefined), where
                    seen["server"] += 1
                    assert _outcome(lambda: R.loads(piece, allow_partial=partial))[0] == "server", where
                else:
                    assert root.status == "fulfilled", where
                if not partial and 0 not in arrived:
                    assert got[0] == "incomplete" and got[1].status == "closed", where
                d.close()
    assert seen["closed"] > 500 and seen["cut"] > 500 and seen["partial"] > 500, seen
    assert seen["server"] > 10, seen


def test_cut_mid_row_is_incomplete_not_server_error():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'0:{"a":')
    e = ei.value
    assert e.status == "closed" and e.offset == 7 and e.missing == (0,) and e.cut == (0, 0)
    assert isinstance(e.reason, R.ServerError) and e.reason.message == "Connection closed."
    assert not isinstance(e, R.ServerError)
    d = R.Decoder()
    d.feed(b'0:{"a":"$1"}\n1:{"b":')
    with pytest.raises(R.IncompleteError) as ei:
        d.finish()
    e = ei.value
    assert e.status == "closed" and e.offset == 20 and e.missing == (1,) and e.cut == (1, 13)
    assert "byte 20" in str(e) and "rows 1 missing" in str(e)


def test_cut_inside_an_id():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'0:"$1a"\n1')
    assert ei.value.missing == (0x1a,) and ei.value.cut == (None, 8)


def test_server_error_for_the_root_is_server_error():
    with pytest.raises(R.ServerError):
        R.loads(b'0:E{"digest":"abc"}\n')
    # the same message as the end's, sent by the server
    data = b'0:E{"message":"Connection closed.","stack":""}\n'
    with pytest.raises(R.ServerError):
        R.loads(data, dev=True)
    d = R.Decoder(dev=True)
    d.feed(data)
    with pytest.raises(R.ServerError):
        d.finish()


def test_allow_partial_keeps_its_statuses():
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'1:"x"\n', allow_partial=True)
    assert ei.value.status == "halted" and ei.value.missing == (0,) and ei.value.offset == 6
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'0:{"a":"$1"}\n', allow_partial=True)
    assert ei.value.status == "blocked" and ei.value.missing == (1,) and ei.value.cut is None


def test_open_stream_is_listed():
    # the root is fulfilled with the stream; the stream ended with the error
    v = R.loads(b'0:"$1"\n1:r\n1:b3,abc')
    assert v.status == "errored" and v.reason.message == "Connection closed."
    with pytest.raises(R.IncompleteError) as ei:
        R.loads(b'0:{"s":"$1","x":"$2"}\n1:r\n')
    assert ei.value.open_streams == (1,) and ei.value.missing == (2,)
