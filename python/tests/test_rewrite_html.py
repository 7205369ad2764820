"""rscflight.rewrite on HTML pages (rsc_rewrite_html): detected by a
leading '<' or forced with html=, the page read back by rsc_html_extract."""

import os

import pytest

import rscflight
from conftest import FIXTURES

HTML = os.path.join(FIXTURES, "html")
RULE = {"/_next/": "https://cdn.example/_next/"}


def extract(page):
    out = rscflight.ffi.new("char **")
    n = rscflight.ffi.new("size_t *")
    lib = rscflight.lib
    assert lib.rsc_html_extract(page, len(page), lib.RSC_HTML_AUTO, out, n, rscflight.ffi.NULL,
                                rscflight.ffi.NULL) == lib.RSC_OK
    try:
        return rscflight.ffi.buffer(out[0], n[0])[:]
    finally:
        lib.rsc_free(out[0])


def test_next_page_detected_and_read_back():
    page = open(os.path.join(HTML, "next-turbopack-catalog.html"), "rb").read()
    out = rscflight.rewrite(page, RULE)
    assert out != page and out.startswith(b"<!DOCTYPE html>")
    # the page's payload is the payload rewritten on its own
    assert extract(out) == rscflight.rewrite(extract(page), RULE)
    # html=True gives the same; html=False takes the page for a payload
    assert rscflight.rewrite(page, RULE, html=True) == out
    with pytest.raises(rscflight.DecodeError):
        rscflight.rewrite(page, RULE, html=False)
    # no rule matches: the page byte for byte
    assert rscflight.rewrite(b" \n" + page, {"/nowhere/": "x"}) == b" \n" + page


def test_rsc_html_stream_page_and_escaping():
    page = open(os.path.join(HTML, "rhs-elements.html"), "rb").read()
    out = rscflight.rewrite(page, {"rsc-html-stream": "</script><!--x"})
    assert b"</\\script><\\!--x" in out
    assert extract(out) == rscflight.rewrite(extract(page), {"rsc-html-stream": "</script><!--x"})


def test_fn_and_errors_in_pages():
    page = (b'<script>(self.__next_f=self.__next_f||[]).push([0])</script>'
            b'<script>self.__next_f.push([1,"0:[\\"/a\\"]\\n"])</script>')
    out = rscflight.rewrite(page, fn=lambda v, place: "<&\u2028>" if v == "/a" else None)
    assert out == page.replace(b'/a', b'\\u003c\\u0026\\u2028\\u003e')

    def boom(v, place):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        rscflight.rewrite(page, fn=boom)
    bad = page.replace(b'[\\"/a\\"]', b'[\\"/a\\"')
    with pytest.raises(rscflight.DecodeError) as e:
        rscflight.rewrite(bad, {"/a": "/b"})
    assert e.value.offset == bad.index(b'"0:')  # the push holding the bad row
    with pytest.raises(rscflight.DecodeError) as e:
        rscflight.rewrite(b"<p>no payload</p>", RULE)
    assert e.value.msg == "no Flight payload found"
