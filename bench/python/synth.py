#!/usr/bin/env python3
"""Synthetic Flight payloads of a chosen size, for scaling benchmarks.

The payload looks like what a 19.x PROD server writes for a page that renders
a long list of cards: import rows (I, symbols), a hint, the root row 0 (a
fragment whose children are lazy references to one row per card) and then the
card rows. Cards mix host elements, client components ($L to an I row),
escaped strings, dates, bigints, $undefined, outlined Maps/Sets ($Q/$W),
promises ($@), deduped references with paths, T rows for long text and small
binary rows. Deterministic for a given seed; stdlib only.

    python3 bench/python/synth.py --size 10M --seed 1 OUT.rsc
"""

import argparse
import json
import random
import sys

WORDS = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod "
    "tempor incididunt ut labore et dolore magna aliqua ünïcødé 東京 café"
).split()


def _dumps(v):
    # what JSON.stringify writes: no spaces, non-ASCII kept as UTF-8
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class _Writer:
    def __init__(self):
        self.next_id = 1
        self.parts = []
        self.size = 0

    def alloc(self):
        i = self.next_id
        self.next_id += 1
        return i

    def raw(self, b):
        self.parts.append(b)
        self.size += len(b)

    def model(self, rid, value):
        self.raw(b"%x:%s\n" % (rid, _dumps(value).encode("utf-8")))

    def text(self, rid, s):
        b = s.encode("utf-8")
        self.raw(b"%x:T%x," % (rid, len(b)) + b)

    def binary(self, rid, tag, data):
        self.raw(b"%x:%s%x," % (rid, tag, len(data)) + data)


def _sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _card(rng, w, i, button_id, frag_id, card_rows):
    """Write the rows one card needs; return the card's own row id."""
    children = [
        ["$", "h2", None, {"className": "title", "children": "Item %d: %s" % (i, _sentence(rng, 4))}],
        ["$", "p", None, {"children": _sentence(rng, rng.randint(8, 30))}],
        [
            "$",
            "$L%x" % button_id,
            None,
            {"id": i, "price": round(rng.random() * 100, 2), "tags": [_sentence(rng, 1) for _ in range(3)],
             "onSale": rng.random() < 0.3, "note": "$$" + _sentence(rng, 2)},
        ],
    ]
    meta = {
        "created": "$D2024-%02d-%02dT12:00:00.000Z" % (rng.randint(1, 12), rng.randint(1, 28)),
        "views": "$n%d" % rng.randint(10**12, 10**15),
        "missing": "$undefined",
        "rating": rng.choice([1.5, 4, 3.25, None, True]),
    }
    r = rng.random()
    if r < 0.08:
        # long text goes to a T row (the server outlines strings >= 1024 units)
        tid = w.alloc()
        w.text(tid, _sentence(rng, 250) + "\n" + _sentence(rng, 10))
        children.append(["$", "article", None, {"children": "$%x" % tid}])
    elif r < 0.14:
        mid = w.alloc()
        w.model(mid, [["k%d" % k, {"v": k, "s": _sentence(rng, 2)}] for k in range(rng.randint(2, 6))])
        meta["map"] = "$Q%x" % mid
    elif r < 0.20:
        sid = w.alloc()
        w.model(sid, [_sentence(rng, 1) for _ in range(rng.randint(2, 6))])
        meta["set"] = "$W%x" % sid
    elif r < 0.24:
        bid = w.alloc()
        w.binary(bid, b"o", bytes(rng.randrange(256) for _ in range(rng.randint(8, 64))))
        meta["bytes"] = "$%x" % bid
    cid = w.alloc()
    after = []
    if rng.random() < 0.1:
        # a promise to a row that comes after this card's row
        pid = w.alloc()
        meta["later"] = "$@%x" % pid
        after.append((pid, {"resolved": _sentence(rng, 3), "n": i}))
    props = {"className": "card", "data-i": i, "meta": meta, "children": children}
    if card_rows and rng.random() < 0.15:
        # dedupe: point into an earlier card's props (a path reference)
        props["sameMeta"] = "$%x:props:meta" % rng.choice(card_rows[-8:])
    value = ["$", "$%x" % frag_id if rng.random() < 0.1 else "section", "k%d" % i, props]
    w.model(cid, value)
    card_rows.append(cid)
    for pid, v in after:
        w.model(pid, v)
    return cid


def make_payload(target_bytes, seed=1):
    """A PROD-shaped Flight payload of about target_bytes bytes (at least ~300)."""
    rng = random.Random(seed)
    head = _Writer()
    button_id = head.alloc()
    frag_id = head.alloc()
    head.raw(b'%x:I["app/Button.js",[],"Button"]\n' % button_id)
    head.model(frag_id, "$Sreact.fragment")
    head.raw(b':HL["/font.woff2","font",{"crossOrigin":""}]\n')

    body = _Writer()
    body.next_id = head.next_id
    card_rows = []
    cards = []
    i = 0
    # the root row costs ~10 bytes per card reference
    while not cards or head.size + body.size + 30 + 10 * len(cards) < target_bytes:
        cards.append(_card(rng, body, i, button_id, frag_id, card_rows))
        i += 1
    root = ["$", "$%x" % frag_id, None, {"children": ["$L%x" % c for c in cards]}]
    rootrow = b"0:%s\n" % _dumps(root).encode("utf-8")
    return b"".join(head.parts) + rootrow + b"".join(body.parts)


def parse_size(s):
    s = s.strip().upper()
    mult = 1
    for suf, m in (("K", 1000), ("M", 1000**2), ("G", 1000**3)):
        if s.endswith(suf) or s.endswith(suf + "B"):
            s = s[: s.index(suf)]
            mult = m
            break
    return int(float(s) * mult)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100K", help="target size: bytes, or with K/M/G (powers of 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    a = ap.parse_args(argv)
    data = make_payload(parse_size(a.size), a.seed)
    with open(a.out, "wb") as f:
        f.write(data)
    print("%s: %d bytes" % (a.out, len(data)), file=sys.stderr)


if __name__ == "__main__":
    main()
