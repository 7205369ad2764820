"""Fuzz inputs through loads(): its Python values, walked back into a dump,
equal the C library's dump. This checks the converter where the vectors do
not go: identity and cycles (loads remembers only values rsc_decoder_shares
names), odd kinds, errors.

python/tests/corpus holds 1,048 inputs of fuzz_decode's corpus (which is
not in git): every 18th by name, and the 23 that once differed (a byte
stream item that was no bytes, a wrapper met again below a value with
identity, Sets that Python orders otherwise). RSC_FUZZ_CORPUS=DIR runs a
whole corpus instead (e.g. fuzz/corpus-decode after a fuzzing run)."""

import glob
import json
import os
import re

import pytest

import rscflight as R
import pydump

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get("RSC_FUZZ_CORPUS") or os.path.join(HERE, "corpus")
FILES = sorted(glob.glob(os.path.join(CORPUS, "*")))


def _opts(b0):
    """fuzz_common.h's option byte, as far as loads takes it (small limits,
    the failing allocator and the lazy root are the harness's own)."""
    return dict(dev=bool(b0 & 1), allow_partial=bool(b0 & 2), lenient_ids=bool(b0 & 4),
                temp_refs=bool(b0 & 16))


def _blur_unordered(doc, unordered):
    """Refs into a Set that Python holds as a set point at whichever place
    the walk met the value first, which the set's order decides: such
    places lose their index."""
    if isinstance(doc, dict):
        if doc.get("$") == "ref" and any(doc["to"].startswith(u) for u in unordered):
            return {"$": "ref", "to": re.sub(r"/values/\d+", "/values/*", doc["to"])}
        return {k: _blur_unordered(x, unordered) for k, x in doc.items()}
    if isinstance(doc, list):
        return [_blur_unordered(x, unordered) for x in doc]
    return doc


def _unordered_sets(doc, path="", out=None):
    out = [] if out is None else out
    if isinstance(doc, dict):
        if doc.get("$") == "Set" and doc.get("_unordered"):
            out.append(path + "/values/")
        for k, x in doc.items():
            _unordered_sets(x, path + "/" + str(k).replace("~", "~0").replace("/", "~1"), out)
    elif isinstance(doc, list):
        for i, x in enumerate(doc):
            _unordered_sets(x, path + "/" + str(i), out)
    return out


def test_there_is_a_corpus():
    assert len(FILES) >= 1000


@pytest.mark.parametrize("part", range(8))
def test_loads_walked_back_equals_the_dump(part):
    checked = 0
    for path in FILES[part::8]:
        with open(path, "rb") as f:
            raw = f.read()
        if len(raw) < 4:
            continue
        opts, data = _opts(raw[0]), raw[4:]
        try:
            c_dump = json.loads(R.canonical_dump(data, **opts))
        except R.DecodeError:
            with pytest.raises(R.DecodeError):
                R.loads(data, **opts)
            continue
        got = pydump.loads_document(data, **opts)
        unordered = _unordered_sets(got)
        if unordered:
            c_dump, got = _blur_unordered(c_dump, unordered), _blur_unordered(got, unordered)
        assert pydump.equal(c_dump, got), "%s: %s" % (os.path.basename(path),
                                                       pydump.explain(c_dump, got))
        checked += 1
    assert checked > 10
