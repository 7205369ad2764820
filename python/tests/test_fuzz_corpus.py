"""Fuzz inputs through loads(): its Python values, walked back into a dump,
equal the C library's dump. This checks the converter where the vectors do
not go: identity and cycles (loads remembers only values rsc_decoder_shares
names), odd kinds, errors.

Also the streaming Decoder fed the same inputs in random pieces: its
Python values at the end equal its own C dump.

fuzz/python-sample holds 1,052 inputs of fuzz_decode's corpus (the
format in fuzz/README.md): every 18th by name, the 23 that once differed
through loads (a byte stream item that was no bytes, a wrapper met again
below a value with identity, Sets that Python orders otherwise) and 4 that
did through the Decoder (a hint code byte that is no character, a promise ending blocked, a
module reference's metadata waiting on a later row). RSC_FUZZ_CORPUS=DIR
runs a whole corpus instead (e.g. fuzz/corpus-decode after a fuzzing run)."""

import glob
import json
import os
import random
import re
import zlib

import pytest

import rscflight as R
import pydump

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get("RSC_FUZZ_CORPUS") or os.path.join(HERE, "..", "..", "fuzz", "python-sample")
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


def _inputs(part):
    """(name, options, payload) of every eighth input, from the part-th."""
    for path in FILES[part::8]:
        with open(path, "rb") as f:
            raw = f.read()
        if len(raw) >= 4:
            yield os.path.basename(path), _opts(raw[0]), raw[4:]


def _difference(c_dump, got):
    """None when the two dump documents are equal, else where they differ."""
    unordered = _unordered_sets(got)
    if unordered:
        c_dump, got = _blur_unordered(c_dump, unordered), _blur_unordered(got, unordered)
    return None if pydump.equal(c_dump, got) else pydump.explain(c_dump, got)


def test_there_is_a_corpus():
    assert len(FILES) >= 1000


@pytest.mark.parametrize("part", range(8))
def test_loads_walked_back_equals_the_dump(part):
    checked = 0
    for name, opts, data in _inputs(part):
        try:
            c_dump = json.loads(R.canonical_dump(data, **opts))
        except R.DecodeError:
            with pytest.raises(R.DecodeError):
                R.loads(data, **opts)
            continue
        why = _difference(c_dump, pydump.loads_document(data, **opts))
        assert why is None, "%s: %s" % (name, why)
        checked += 1
    assert checked > 10


def _known_stale(why):
    """The one difference the streaming Decoder keeps: a module reference
    (an I row) is converted once, so a reference inside its metadata to a
    row that comes later stays as it was then (python/README.md)."""
    return "/chunks/" in why.split(":")[0] and "/value/chunks/" in why


@pytest.mark.parametrize("part", range(8))
def test_decoder_in_random_pieces_equals_its_dump(part):
    """The streaming Decoder fed in random pieces: its Python values at the
    end equal its own C dump (its live wrappers, streams and references
    were kept up to date)."""
    checked = 0
    for name, opts, data in _inputs(part):
        rng = random.Random(zlib.crc32(name.encode()))
        n = len(data)
        cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(1, 16)))) if n > 1 else []
        d = R.Decoder(**opts)
        try:
            prev = 0
            for c in cuts + [n]:
                if c > prev:
                    d.feed(data[prev:c])
                    prev = c
            try:
                d.finish()
            except (R.ServerError, R.IncompleteError):
                pass
        except R.DecodeError:
            d.close()
            continue
        root = d.root
        got = pydump.document(root.status, root.value if root.status == "fulfilled" else root.reason)
        why = _difference(json.loads(d.dump()), got)
        assert why is None or _known_stale(why), "%s cut at %s: %s" % (name, cuts, why)
        d.close()
        checked += 1
    assert checked > 10
