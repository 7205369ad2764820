#!/usr/bin/env python3
"""React 19.3.1's own client on rewritten payloads.

For every payload of fixtures/react, fixtures/bundlers and fixtures/html/*.rsc:
rewrite one string prefix with rscflight.rewrite (`/_next/` to
`https://cdn.example/_next/` where the payload has it; else the most common
4-byte start of its string literals, to a new start, every third payload one
that begins with "$" so that "$$" is written), then decode the original and
the rewritten payload with React's client (fixtures/gen/lib/decode-worker.js:
one Node process per client build, NODE_ENV and bundler) and check that the
rewritten payload's canonical dump is the original's with exactly the string
values that start with the prefix changed (the dump's strings that come
from the payload's strings: not tags, dates, bigints, symbols, ids, base64,
error messages).

usage: rewrite-check.py BUILD_DIR   (BUILD_DIR/python holds the binding)
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "fixtures")
WORKER = os.path.join(FIX, "gen", "lib", "decode-worker.js")


def payloads():
    """(path, dev, bundler, allow_partial) for every payload."""
    out = []
    for sub in ("react", "bundlers"):
        with open(os.path.join(FIX, sub, "index.json"), encoding="utf-8") as f:
            for e in json.load(f):
                out.append((os.path.join(FIX, sub, e["file"]), e.get("build") == "dev",
                            e.get("bundler", "webpack"),
                            bool(e.get("client_options", {}).get("allow_partial"))))
    html = os.path.join(FIX, "html")
    for name in sorted(os.listdir(html)):
        if name.endswith(".rsc"):
            out.append((os.path.join(html, name), False, "webpack", False))
    return out


# String literals of the payload that are not keys and not "$" forms.
LITERAL = re.compile(rb'"((?:[^"\\$\x00-\x1f])[^"\\\x00-\x1f]{3,})"(?!\s*:)')


HINT_ROW = re.compile(rb"(?m)^[0-9a-f]*:H.*$")


def pick_rule(data, n):
    """(old, new) prefix rule for a payload, n its number."""
    if b'"/_next/' in data:
        return "/_next/", "https://cdn.example/_next/"
    starts = collections.Counter(m.group(1)[:4] for m in LITERAL.finditer(data))
    for start, _ in starts.most_common():
        try:
            old = start.decode("utf-8")
        except UnicodeDecodeError:
            continue
        new = ("$~" if n % 3 == 0 else "\u00e9\u00e8/") + old[::-1]
        if any(start in row for row in HINT_ROW.findall(data)):
            # hint URLs go to the browser's resource APIs: keep them URLs
            new = "https://cdn.example/x/" + old
        return old, new
    return "/", "/\u00e9/"


def transform(v, old, new, count):
    """The dump v with the string values the rule reaches changed."""
    if isinstance(v, str):
        if v.startswith(old):
            count[0] += 1
            return new + v[len(old):]
        return v
    if isinstance(v, list):
        return [transform(x, old, new, count) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get("$")
    if tag is None:
        return {k: transform(x, old, new, count) for k, x in v.items()}
    walk = {
        "element": ("type", "key", "props"),
        "lazy": ("value", "reason"),
        "promise": ("value", "reason"),
        "client_ref": ("chunks",),
        "server_ref": ("id", "bound"),  # its id is a string of a model row
        "Map": ("entries",),
        "Set": ("values",),
        "FormData": ("entries",),
        "Iterator": ("items",),
        "ReadableStream": ("items", "end"),
        "AsyncIterable": ("items", "end"),
        "AsyncIterator": ("items", "end"),
        "object": ("members",),
    }.get(tag, ())
    out = dict(v)
    if tag == "Blob" and isinstance(v.get("type"), str):
        # the type is a model row's string; Blob's constructor makes a type
        # with a character outside U+0020..U+007E empty, and lowercases it
        t = transform(v["type"], old, new, count)
        out["type"] = "" if any(not (0x20 <= ord(c) <= 0x7E) for c in t) else t.lower()
    for k in walk:
        if k in out:
            x = out[k]
            if k == "end" and isinstance(x, dict):
                out[k] = {kk: transform(xx, old, new, count) for kk, xx in x.items()}
            elif k == "members":
                out[k] = {kk: transform(xx, old, new, count) for kk, xx in x.items()}
            else:
                out[k] = transform(x, old, new, count)
    return out


def run_worker(jobs, dev, bundler, tmp):
    jf = os.path.join(tmp, "jobs-%s-%s.json" % (dev, bundler))
    of = os.path.join(tmp, "out-%s-%s.json" % (dev, bundler))
    with open(jf, "w") as f:
        json.dump(jobs, f)
    env = dict(os.environ, NODE_ENV="development" if dev else "production",
               RSC_ORACLE_BUNDLER=bundler)
    subprocess.run(["node", WORKER, "19.3.1", jf, of], env=env, check=True,
                   stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd=os.path.join(FIX, "gen"))
    with open(of) as f:
        return json.load(f)["results"]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    sys.path.insert(0, os.path.join(os.path.abspath(build), "python"))
    import rscflight

    began = time.time()
    groups = collections.defaultdict(list)
    cases = {}
    refused = []
    unchanged = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (path, dev, bundler, partial) in enumerate(payloads()):
            data = open(path, "rb").read()
            old, new = pick_rule(data, n)
            try:
                out = rscflight.rewrite(data, {old: new})
            except rscflight.DecodeError as e:
                # refused as the decoder refuses it (strict framing)
                try:
                    rscflight.canonical_dump(data, dev=dev, allow_partial=partial)
                except rscflight.DecodeError:
                    refused.append("%s (%s)" % (os.path.relpath(path, ROOT), e))
                    continue
                raise

            # fed in pieces the same bytes come out
            rw = rscflight.Rewriter({old: new})
            pieces = b"".join(rw.feed(data[i:i + 61]) for i in range(0, len(data), 61)) + rw.finish()
            assert pieces == out, path
            key = "p%d" % n
            rf = os.path.join(tmp, key + ".rsc")
            with open(rf, "wb") as f:
                f.write(out)
            if out == data:
                # nothing to change: the same bytes (React's client is not needed)
                unchanged.append(os.path.relpath(path, ROOT))
                continue
            cases[key] = (os.path.relpath(path, ROOT), old, new, True)
            groups[(dev, bundler)].append({"key": key + "-a", "file": path, "allowPartial": partial})
            groups[(dev, bundler)].append({"key": key + "-b", "file": rf, "allowPartial": partial})
        results = {}
        for (dev, bundler), jobs in sorted(groups.items()):
            t0 = time.time()
            results.update(run_worker(jobs, dev, bundler, tmp))
            print("  React's client, %s %s: %d payloads in %.1f s" % (
                "dev" if dev else "prod", bundler, len(jobs) // 2, time.time() - t0))
    bad = strings = 0
    for key, (rel, old, new, _) in sorted(cases.items(), key=lambda kv: int(kv[0][1:])):
        a, b = results.get(key + "-a"), results.get(key + "-b")
        if a is None or b is None:
            bad += 1
            print("FAIL %s: no oracle result" % rel)
            continue
        count = [0]
        if "dump" in a:
            want = transform(a["dump"], old, new, count)
            ok = b.get("dump") == want
        else:  # no dump (a hang, an error): the same outcome
            ok = "dump" not in b and a.get("hang") == b.get("hang")
        if ok and a.get("uncaught") and len(a["uncaught"]) != len(b.get("uncaught") or []):
            ok = False
        strings += count[0]
        if not ok:
            bad += 1
            print("FAIL %s (%r -> %r):\n  want %s\n  got  %s" % (
                rel, old, new, json.dumps(want if "dump" in a else a)[:600],
                json.dumps(b.get("dump", b))[:600]))
    for r in refused:
        print("refused by the rewriter and the decoder alike: " + r)
    print("rewrite: %d of %d changed payloads decode with React %s's client to the original "
          "tree with exactly the rewritten strings changed (%d dump strings rewritten); %d "
          "payloads the rule does not reach came back byte for byte; %.1f s" % (
              len(cases) - bad, len(cases), "19.3.1", strings, len(unchanged),
              time.time() - began))
    return 1 if bad else 0


if __name__ == "__main__":
    # deep payloads: deep dumps (a thread with a big stack for the walk)
    import threading
    sys.setrecursionlimit(200000)
    threading.stack_size(1 << 29)
    rc = []
    t = threading.Thread(target=lambda: rc.append(main()))
    t.start()
    t.join()
    sys.exit(rc[0] if rc else 1)
