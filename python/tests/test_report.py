"""rscflight.report: the byte report page (rsc_report_html)."""
import json
import os
import re

import pytest

import rscflight

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")


def _data(page):
    m = re.search(r'<script id="report-data" type="application/json">\n(.*?)</script>', page, re.S)
    assert m, "the page holds its data inline"
    return json.loads(m.group(1))


def test_report_of_a_payload():
    payload = (b'1:I["app/Button.js",[],"Button"]\n'
               b'0:["$","div",null,{"children":[["$","$L1",null,{"label":"hello world"}],'
               b'["$","$L1",null,{"label":"hello world"}]]}]\n')
    page = rscflight.report(payload)
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "http://" not in page and "https://" not in page
    d = _data(page)
    assert d["total"] == len(payload) and d["page"] is None and d["error"] is None
    tree = d["tree"]
    assert tree[0][1] == len(payload)
    # the children of every node listed add up to it
    sums = {}
    for name, size, parent, *_ in tree:
        if parent >= 0:
            sums[parent] = sums.get(parent, 0) + size
    for i, total in sums.items():
        assert total == tree[i][1]
    comps = {c[0]: c for c in d["components"]}
    assert comps["Button"][2] == "app/Button.js#Button" and comps["Button"][3] == 2
    assert d["strings"][0][0] == "hello world" and d["strings"][0][1] == 2
    # str input is the same payload
    assert rscflight.report(payload.decode()) == page


def test_report_of_a_page():
    with open(os.path.join(FIXTURES, "html", "next-turbopack-catalog.html"), "rb") as f:
        html = f.read()
    d = _data(rscflight.report(html))
    assert d["page"] == {"html": len(html), "flavor": "next"}
    with open(os.path.join(FIXTURES, "html", "next-turbopack-catalog.rsc"), "rb") as f:
        assert d["total"] == len(f.read())


def test_report_of_bad_input():
    d = _data(rscflight.report(b"0:1\nzz:1\n"))
    assert d["error"]["offset"] == 4 and "row id" in d["error"]["msg"]
    assert d["tree"][0][1] == 9  # measured all the same
    with pytest.raises(rscflight.DecodeError):
        rscflight.report(b"<html><body>no payload</body></html>")
    with pytest.raises(rscflight.DecodeError):
        rscflight.report(b"0:1\n", html=True)
