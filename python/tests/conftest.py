"""Shared helpers: where the fixtures, the CLI and the build are.

Run from the repository root, with the extension built by CMake:

    PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests

RSCFLIGHT_BUILD_DIR names the CMake build directory (default: the one the
imported rscflight package sits in, else build/).
"""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "fixtures")
sys.path.insert(0, HERE)

import rscflight  # noqa: E402


def build_dir():
    env = os.environ.get("RSCFLIGHT_BUILD_DIR")
    if env:
        return os.path.abspath(env)
    # build/python/rscflight/__init__.py -> build/
    d = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(rscflight.__file__))))
    if os.path.exists(os.path.join(d, "CMakeCache.txt")):
        return d
    return os.path.join(ROOT, "build")


def cli_path():
    p = os.path.join(build_dir(), "rscflight")
    return p if os.access(p, os.X_OK) else None


class Vector:
    """One payload with its options and expected dump (None when unknown)."""

    def __init__(self, name, rsc, expected, dev=False, partial=False, lenient=False,
                 inspect_at=None, cuts=(), bundler="webpack", values=False):
        self.name = name
        self.bundler = bundler        # whose server wrote it (fixtures/bundlers)
        self.rsc = rsc
        self.expected = expected
        self.dev = dev
        self.partial = partial
        self.lenient = lenient
        self.values = values          # a value no server writes: lenient=True
        self.inspect_at = inspect_at  # bytes fed before the root is first read
        self.cuts = list(cuts)        # the vector's own input pieces (cut offsets)

    def __repr__(self):
        return self.name

    def data(self):
        with open(self.rsc, "rb") as f:
            return f.read()

    def expected_json(self):
        if not self.expected:
            return None
        with open(self.expected, encoding="utf-8") as f:
            return json.load(f)

    def early_json(self):
        p = self.expected[: -len(".json")] + ".early.json"
        if not os.path.exists(p):
            return None
        with open(p, encoding="utf-8") as f:
            return json.load(f)

    def opts(self, lenient=None, values=None):
        o = dict(dev=self.dev, allow_partial=self.partial,
                 lenient_ids=self.lenient if lenient is None else lenient,
                 lenient=self.values if values is None else values)
        if self.bundler != "webpack":
            o["bundler"] = self.bundler
        return o

    def cli_args(self):
        a = []
        if self.dev:
            a.append("--dev")
        if self.partial:
            a.append("--allow-partial")
        if self.lenient:
            a.append("--lenient-ids")
        if self.bundler != "webpack":
            a += ["--bundler", self.bundler]
        if self.values:
            a.append("--lenient")
        return a


def load_vectors():
    """fixtures/vectors/index.tsv (the protocol spec's vectors)."""
    out = []
    base = os.path.join(FIXTURES, "vectors")
    index = os.path.join(base, "index.tsv")
    if not os.path.exists(index):
        return out
    with open(index, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, rsc, expected, flags = line.split("\t")[:4]
            flags = set(flags.split(",")) if flags != "-" else set()
            kv = dict(x.split("=", 1) for x in flags if "=" in x)
            inspect_at, cuts = None, []
            if "inspect" in kv and "chunks" in kv:
                off = 0
                for n in kv["chunks"].split("/"):
                    off += int(n)
                    cuts.append(off)
                inspect_at = cuts[int(kv["inspect"])]
            out.append(Vector(
                "vectors/" + name, os.path.join(base, rsc),
                None if expected == "-" else os.path.join(base, expected),
                dev="dev" in flags, partial="partial" in flags, lenient="lenient" in flags,
                inspect_at=inspect_at, cuts=cuts, values="values" in flags))
    return out


def load_react_fixtures(folder="react"):
    """fixtures/react/index.json (payloads written by React's real server),
    when it exists: [{file, expected, build, client_options: {allow_partial}}];
    fixtures/bundlers/index.json has the same entries plus "bundler"."""
    base = os.path.join(FIXTURES, folder)
    index = os.path.join(base, "index.json")
    if not os.path.exists(index):
        return []
    with open(index, encoding="utf-8") as f:
        entries = json.load(f)
    out = []
    for e in entries:
        rsc = os.path.join(base, e["file"])
        exp = e.get("expected")
        if not os.path.exists(rsc):
            continue
        exp = os.path.join(base, exp) if exp and os.path.exists(os.path.join(base, exp)) else None
        name = folder + "/" + (e.get("expected") or e["file"]).rsplit(".", 1)[0]
        out.append(Vector(name, rsc, exp, dev=e.get("build") == "dev",
                          partial=bool((e.get("client_options") or {}).get("allow_partial")),
                          bundler=e.get("bundler", "webpack")))
    return out


ALL_VECTORS = load_vectors()
REACT_FIXTURES = load_react_fixtures()
BUNDLER_FIXTURES = load_react_fixtures("bundlers")
ALL = ALL_VECTORS + REACT_FIXTURES + BUNDLER_FIXTURES
# payloads that decode (no DecodeError) with their own options
SMALL_LIMIT = 64 * 1024


@pytest.fixture(scope="session")
def cli():
    p = cli_path()
    if not p:
        pytest.skip("the rscflight CLI is not built in %s" % build_dir())
    return p
