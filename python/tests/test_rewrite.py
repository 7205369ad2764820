"""rscflight.rewrite / Rewriter: the rules through the binding, streaming,
errors and the callback."""

import os

import pytest

import rscflight
from conftest import FIXTURES

PAGE = os.path.join(FIXTURES, "html", "next-turbopack-catalog.rsc")


def test_prefix_and_byte_identical_rest():
    data = open(PAGE, "rb").read()
    out = rscflight.rewrite(data, {"/_next/": "https://cdn.example/_next/"})
    assert out != data
    assert out.count(b"https://cdn.example/_next/") == data.count(b'"/_next/')
    # rows without the prefix come back byte for byte
    same = [r for r in data.split(b"\n") if b"/_next/" not in r]
    assert all(r in out.split(b"\n") for r in same)
    # the decoded tree is the original's with those strings changed
    assert rscflight.canonical_dump(out) == rscflight.canonical_dump(data).replace(
        '"/_next/', '"https://cdn.example/_next/')
    assert rscflight.rewrite(data, {"/nowhere/": "x"}) == data


def test_str_and_bytes_rules_exact_keys_drop_set():
    data = b'1:["/a",{"href":"/a/b","title":"/a/t","d":1,"s":2}]\n'
    assert rscflight.rewrite(data, {b"/a": "/b"}, exact={"/a": "EX"}) == \
        b'1:["EX",{"href":"/b/b","title":"/b/t","d":1,"s":2}]\n'
    assert rscflight.rewrite(data, {"/a": "/b"}, keys=["href"], drop_props=["d"],
                             set_props={"s": {"x": [1, "é"]}}) == \
        b'1:["/a",{"href":"/b/b","title":"/a/t","s":{"x":[1,"\xc3\xa9"]}}]\n'


def test_dollar_and_text_rows():
    data = '1:["/a","$$/a","$L2"]\n2:T5,/a€'.encode()
    out = rscflight.rewrite(data, {"/a": "$/ä"})
    assert out == '1:["$$/ä","$$/a","$L2"]\n2:T7,$/ä€'.encode()
    assert rscflight.rewrite(data, {"$/a": "/b"}) == '1:["/a","/b","$L2"]\n2:T5,/a€'.encode()


def test_callback_place():
    seen = []

    def fn(value, place):
        seen.append((value, place.row, place.tag, place.path))
        return value.upper() if value.startswith("/") else None

    out = rscflight.rewrite(b'a:["$","a",null,{"href":"/x","k":["y"]}]\n:HL["/c.css","style"]\n',
                            fn=fn)
    assert out == b'a:["$","a",null,{"href":"/X","k":["y"]}]\n:HL["/C.CSS","style"]\n'
    assert seen == [("a", 10, "", (1,)), ("/x", 10, "", (3, "href")), ("y", 10, "", (3, "k", 0)),
                    ("/c.css", 0, "H", (0,))]


def test_callback_exception_propagates():
    def fn(value, place):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        rscflight.rewrite(b'1:"x"\n', fn=fn)


def test_streaming_and_stats():
    data = open(PAGE, "rb").read()
    whole = rscflight.rewrite(data, {"/_next/": "//cdn/_next/"})
    rw = rscflight.Rewriter({"/_next/": "//cdn/_next/"})
    parts = [rw.feed(data[i:i + 777]) for i in range(0, len(data), 777)]
    parts.append(rw.finish())
    assert b"".join(parts) == whole
    assert sum(1 for p in parts if p) > 10  # rows came out as they completed
    st = rw.stats
    assert st["bytes_in"] == len(data) and st["bytes_out"] == len(whole)
    assert st["strings_changed"] == data.count(b'"/_next/') and st["rows_changed"] > 0


def test_errors():
    with pytest.raises(rscflight.DecodeError) as e:
        rscflight.rewrite(b'1:[1]\n2:{"a" 1}\n', {"a": "b"})
    assert (e.value.offset, e.value.row) == (13, 2)
    assert "not valid JSON" in e.value.msg
    with pytest.raises(rscflight.DecodeError) as e:
        rscflight.rewrite(b'1:[1]\n2:"abc', {"a": "b"})
    assert (e.value.offset, e.value.row) == (6, 2)
    with pytest.raises(ValueError):
        rscflight.rewrite(b'1:1\n', set_props={"a": float("nan")})
    with pytest.raises(TypeError):
        rscflight.rewrite(b'1:1\n', {1: "b"})
