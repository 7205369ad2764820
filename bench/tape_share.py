#!/usr/bin/env python3
"""What a kept simdjson tape (issue #45) could change, counted on payloads.

    python3 bench/tape_share.py FILE...

For the JSON of every model and I row (Python's json module, not the
library): its values; how many sit in *plain* containers (the largest
containers with no "$" string, element tuple, index key or "__proto__"
key below them: what the revive walk never changes) and how big those
are; the "$" strings and element tuples; and the bytes of two layouts of
those values, as multiples of the input:

  nodes  16 bytes a value, 24 a member (rsc_node, rsc_member: today; an
         element tuple's "$" has no slot)
  tape   8 bytes a tape word: one a value and a key, two a number and a
         container (simdjson's tape, kept), with nothing more for revived
         values (elements read in place, "$" forms in their word)

Strings, chunks and the parser's buffers are the same in both and are not
counted. Rows are split by their headers (text and binary rows skipped).
"""

import json
import sys

BINARY_TAGS = set(b"TAOoUSsLlGgMmVb")


def rows(data):
    """(tag, JSON bytes) of each row that is not a text or binary row."""
    i, n = 0, len(data)
    while i < n:
        if data[i] == 0x0A:
            i += 1
            continue
        colon = data.index(b":", i)
        i = colon + 1
        tag = data[i] if i < n else 0
        comma = data.find(b",", i, i + 12)
        if tag in BINARY_TAGS and comma > i + 1:
            try:
                length = int(data[i + 1 : comma], 16)
            except ValueError:
                length = -1
            if length >= 0:
                i = comma + 1 + length
                continue
        if 0x41 <= tag <= 0x5A or 0x61 <= tag <= 0x7A:
            i += 1
        else:
            tag = 0
        end = data.find(b"\n", i)
        end = n if end < 0 else end
        yield tag, data[i:end]
        i = end + 1


class Count:
    def __init__(self):
        self.values = self.members = self.containers = self.numbers = 0
        self.dollar = self.elements = 0
        self.in_plain = self.plain = 0

    def walk(self, v, member=False):
        """Counts v's subtree; returns (values in it, whether it is plain)."""
        self.values += 1
        self.members += member
        if isinstance(v, list):
            self.containers += 1
            plain = not (len(v) >= 1 and v[0] == "$")
            self.elements += len(v) >= 4 and v[0] == "$"
            kids = [self.walk(x) for x in v]
        elif isinstance(v, dict):
            self.containers += 1
            plain = not any(k[:1].isdigit() or k == "__proto__" for k in v)
            kids = [self.walk(x, True) for x in v.values()]
        else:
            if isinstance(v, str) and v.startswith("$"):
                self.dollar += 1
                return 1, False
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                self.numbers += 1
            return 1, True
        total = 1 + sum(t for t, _ in kids)
        plain = plain and all(p for _, p in kids)
        if not plain:  # its plain children are the largest plain containers
            for (t, p), x in zip(kids, v if isinstance(v, list) else v.values()):
                if p and isinstance(x, (list, dict)):
                    self.in_plain += t
                    self.plain += 1
        return total, plain

    def row(self, v):
        total, plain = self.walk(v)
        if plain and isinstance(v, (list, dict)):
            self.in_plain += total
            self.plain += 1


def main(files):
    print(
        f"{'file':28} {'bytes':>9} {'values':>7} {'in plain':>9} {'per plain':>9}"
        f" {'$ str':>6} {'elements':>8} {'nodes/in':>8} {'tape/in':>7}"
    )
    for f in files:
        data = open(f, "rb").read()
        c = Count()
        for tag, text in rows(data):
            if tag not in (0, ord("I")):
                continue
            try:
                c.row(json.loads(text))
            except ValueError:
                continue
        items = c.values - c.members
        nodes = 16 * (items - c.elements) + 24 * c.members
        tape = 8 * (c.values + c.members + c.containers + c.numbers)
        print(
            f"{f.rsplit('/', 1)[-1]:28} {len(data):>9} {c.values:>7}"
            f" {100 * c.in_plain / max(c.values, 1):>8.0f}% {c.in_plain / max(c.plain, 1):>9.1f}"
            f" {c.dollar:>6} {c.elements:>8} {nodes / len(data):>8.2f} {tape / len(data):>7.2f}"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 else 2)
    main(sys.argv[1:])
