#!/usr/bin/env python3
"""make-seeds.py OUTDIR - the seed corpora from fixtures/**/*.rsc and the
pages of fixtures/html.

Writes OUTDIR/frame (2 option bytes + payload), OUTDIR/decode (4 option
bytes + payload; fuzz_walk uses it too), OUTDIR/write (the decode format,
byte 3 choosing what fuzz_write runs) and OUTDIR/html (1 option byte +
page), the corpus formats of fuzz/README.md. Development fixtures get the DEV
flag; a second copy of small fixtures is fed in random pieces. Fixtures
over 256 KiB are left out: libFuzzer would truncate them to -max_len and
they only slow the start-up (the rest cover the same shapes)."""
import os
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
out = sys.argv[1]
for sub in ("frame", "decode", "write", "html"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)
n = 0
for dirpath, _, files in os.walk(os.path.join(root, "fixtures")):
    if "node_modules" in dirpath:
        continue
    for f in sorted(files):
        if not f.endswith(".rsc"):
            continue
        path = os.path.join(dirpath, f)
        data = open(path, "rb").read()
        if len(data) > 256 * 1024:
            continue
        rel = os.path.relpath(path, root).replace(os.sep, "_")
        dev = "/dev/" in path or ".dev." in f
        flags = 1 if dev else 0
        open(os.path.join(out, "frame", rel), "wb").write(bytes([0, 0]) + data)
        open(os.path.join(out, "decode", rel), "wb").write(bytes([flags, 0, 0, 0]) + data)
        # fuzz_write: encode while feeding, each rewrite rule, the report
        w = [4, 8, 16, 24, 32][n % 5]
        open(os.path.join(out, "write", rel), "wb").write(bytes([flags, 0, 0, w]) + data)
        if len(data) <= 4096:
            open(os.path.join(out, "decode", rel + ".split"), "wb").write(
                bytes([flags, 3 | (n % 64) << 2, 0, 0]) + data)
        n += 1
pages = 0
html = os.path.join(root, "fixtures", "html")
for f in sorted(os.listdir(html)):
    if f.endswith(".html"):
        data = open(os.path.join(html, f), "rb").read()
        for b in (0, 4):  # no rule, then a rule
            open(os.path.join(out, "html", f"{f}.{b}"), "wb").write(bytes([b]) + data)
        pages += 1
print(f"{n} fixtures -> {out}/frame, {out}/decode, {out}/write; {pages} pages -> {out}/html")
