#!/usr/bin/env python3
"""Random well-formed Flight payloads, for the differential check.

    /usr/bin/python3 tests/conformance/flightgen.py --count 500 --seed 1 OUTDIR

Each payload is what a production server could write, in an order it may
not: a root row and rows it reaches, whose values use every "$" form the
protocol has (elements, lazies, promises, outlined and path references,
Maps, Sets, FormData, Blobs, iterators, Dates, BigInts, symbols, the
special numbers, escapes), text and typed-array rows, client modules (I
rows), error rows, and the four stream kinds with their items and ends.
References go forward and backward, and the rows come in a random order
(the root anywhere), so chunks wait on rows still to come. Unlike the fuzz
corpus these payloads are valid: where React's client and rscflight
disagree on one, the cause is most likely a real difference in decoding.
Stdlib only; deterministic for a seed.
"""

import argparse
import json
import os
import random

SYMBOLS = ["react.fragment", "react.suspense", "react.strict_mode", "react.profiler"]
WORDS = ["alpha", "beta", "gamma", "delta", "$$dollar", "ünï", "東京", "a\u0000b", "😀"]


def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class Payload:
    def __init__(self, rnd, dev=False):
        self.rnd = rnd
        self.dev = dev  # development rows: owners, stacks, debug info, error details
        self.rows = {}      # id -> bytes of the row(s)
        self.kinds = {}     # id -> what the row holds (for references that need a shape)
        self.paths = {}     # id -> paths into its value that exist ("a", "props:children")
        self.next_id = 1
        self.modules = []

    def new_id(self):
        i = self.next_id
        self.next_id += 1
        return i

    # -- rows of a shape, made on demand ------------------------------------
    def row(self, rid, text):
        self.rows[rid] = b"%x:" % rid + text

    def model_row(self, value, kind="model"):
        rid = self.new_id()
        self.kinds[rid] = kind
        self.paths[rid] = self.paths_of(value)
        self.row(rid, dumps(value).encode() + b"\n")
        return rid

    def paths_of(self, value, prefix="", depth=0):
        out = []
        if depth > 2:
            return out
        if isinstance(value, list) and len(value) in (4, 7) and value[0] == "$":
            out.append(prefix + "props")
            if isinstance(value[3], dict):
                for k, v in value[3].items():
                    out.append(prefix + "props:" + k)
                    out += self.paths_of(v, prefix + "props:" + k + ":", depth + 1)
            return out
        items = enumerate(value) if isinstance(value, list) else value.items() if isinstance(value, dict) else []
        for k, v in items:
            out.append(prefix + str(k))
            out += self.paths_of(v, prefix + str(k) + ":", depth + 1)
        return out

    def server_ref_row(self, depth):
        rid = self.new_id()
        bound = None if self.rnd.random() < 0.5 else "$@%x" % self.model_row([self.value(depth + 1)])
        self.kinds[rid] = "server"
        self.row(rid, dumps({"id": "app/actions.js#a%d" % rid, "bound": bound}).encode() + b"\n")
        return rid

    def text_row(self):
        rid = self.new_id()
        t = self.rnd.choice(WORDS) * self.rnd.randint(1, 3)
        b = t.encode()
        self.kinds[rid] = "text"
        self.row(rid, b"T%x," % len(b) + b)
        return rid

    def binary_row(self):
        rid = self.new_id()
        tag, size = self.rnd.choice([(b"o", 1), (b"A", 1), (b"S", 2), (b"l", 4), (b"g", 8), (b"M", 8)])
        n = size * self.rnd.randint(0, 4)
        data = bytes(self.rnd.randrange(256) for _ in range(n))
        self.kinds[rid] = "binary"
        self.row(rid, tag + b"%x," % n + data)
        return rid

    def module_row(self):
        rid = self.new_id()
        meta = ["app/M%d.js" % rid, ["chunk%d" % rid, "c%d.js" % rid], self.rnd.choice(["default", "X", ""])]
        if self.rnd.random() < 0.2:
            meta.append(1)
        self.kinds[rid] = "module"
        self.row(rid, b"I" + dumps(meta).encode() + b"\n")
        self.modules.append(rid)
        return rid

    def error_row(self):
        rid = self.new_id()
        self.kinds[rid] = "error"
        info = {"digest": "d%d" % rid}
        if self.dev:
            info = {"message": "m%d" % rid, "stack": self.stack(), "env": "Server", "digest": "d%d" % rid}
        self.row(rid, b"E" + dumps(info).encode() + b"\n")
        return rid

    # -- development data ------------------------------------------------------
    def stack(self):
        return [["fn%d" % self.rnd.randint(0, 9), "/app/f.js", self.rnd.randint(1, 99),
                 self.rnd.randint(1, 40), self.rnd.randint(1, 99), self.rnd.randint(1, 40), False]
                for _ in range(self.rnd.randint(0, 2))]

    def component_info(self):
        info = {"name": "C%d" % self.next_id, "env": "Server", "key": None,
                "owner": None, "stack": self.stack()}
        if self.rnd.random() < 0.3 and any(k == "component" for k in self.kinds.values()):
            info["owner"] = "$%x" % self.rnd.choice([i for i, k in self.kinds.items() if k == "component"])
        rid = self.new_id()
        self.kinds[rid] = "component"
        self.row(rid, dumps(info).encode() + b"\n")
        return rid

    def dev_error_model(self, depth):
        info = {"name": self.rnd.choice(["Error", "TypeError"]), "message": self.rnd.choice(WORDS),
                "stack": self.stack(), "env": "Server"}
        if self.rnd.random() < 0.2:
            info["cause"] = self.value(depth + 1)
        return "$Z%x" % self.model_row(info, "errorinfo")

    def stream_rows(self, depth):
        rid = self.new_id()
        kind = self.rnd.choice(["R", "r", "X", "x"])
        self.kinds[rid] = "stream"
        out = [b"%x:%s\n" % (rid, kind.encode())]
        for _ in range(self.rnd.randint(0, 3)):
            if kind == "r":
                data = bytes(self.rnd.randrange(256) for _ in range(self.rnd.randint(1, 4)))
                out.append(b"%x:o%x," % (rid, len(data)) + data)
            elif self.rnd.random() < 0.3 and kind != "r":
                t = self.rnd.choice(WORDS).encode()
                out.append(b"%x:T%x," % (rid, len(t)) + t)
            else:
                out.append(b"%x:" % rid + dumps(self.value(depth + 1)).encode() + b"\n")
        end = self.rnd.random()
        if end < 0.6:
            if kind in "Xx" and self.rnd.random() < 0.5:
                out.append(b"%x:C" % rid + dumps(self.value(depth + 1)).encode() + b"\n")
            else:
                out.append(b"%x:C\n" % rid)
        elif end < 0.75:
            err = self.error_row()  # a stream ended by an error row of its own id
            del self.rows[err]
            info = {"digest": "s%d" % rid}
            if self.dev:  # a development client needs the development shape
                info = {"message": "s%d" % rid, "stack": self.stack(), "env": "Server", "digest": "s%d" % rid}
            out.append(b"%x:E" % rid + dumps(info).encode() + b"\n")
        self.rows[rid] = b"".join(out)
        return rid

    # -- values ---------------------------------------------------------------
    def ref(self, depth):
        r = self.rnd.random()
        existing = [i for i, k in self.kinds.items() if k == "model"]
        if r < 0.25 and existing:
            rid = self.rnd.choice(existing)
            if self.rnd.random() < 0.4:
                known = self.paths.get(rid) or []
                path = self.rnd.choice(known) if known and self.rnd.random() < 0.8 else \
                    self.rnd.choice(["a", "0", "length", "props", "x:y"])
                return "$%x:%s" % (rid, path)
            return self.rnd.choice(["$%x", "$L%x", "$@%x"]) % rid
        if r < 0.45:
            return "$%x" % self.model_row(self.value(depth + 1))
        if r < 0.55:
            return "$%x" % self.text_row()
        if r < 0.62:
            return "$%x" % self.binary_row()
        if r < 0.7:
            return "$L%x" % self.model_row(self.value(depth + 1))
        if r < 0.76:
            return "$@%x" % self.model_row(self.value(depth + 1))
        if r < 0.8:
            return "$@%x" % self.error_row()
        if r < 0.86:
            return "$%x" % self.stream_rows(depth)
        if r < 0.9:
            return "$L%x" % (self.rnd.choice(self.modules) if self.modules and self.rnd.random() < 0.5
                             else self.module_row())
        if r < 0.94:
            return "$h%x" % self.server_ref_row(depth)
        if self.dev and r < 0.97:
            return self.dev_error_model(depth)
        return "$%x" % self.next_id  # a row that never comes

    def collection(self, depth):
        tag = self.rnd.choice("QWKBi")
        n = self.rnd.randint(0, 3)
        if tag == "Q":
            model = [[self.value(depth + 1), self.value(depth + 1)] for _ in range(n)]
        elif tag == "K":
            model = [[self.rnd.choice(["a", "b", "c"]), self.rnd.choice(["v", 1, "$%x" % self.blob_row()])]
                     for _ in range(n)]
        elif tag == "B":
            rid = self.blob_row()
            return "$B%x" % rid
        else:
            model = [self.value(depth + 1) for _ in range(n)]
        return "$%s%x" % (tag, self.model_row(model, "collection"))

    def blob_row(self):
        parts = ["text/plain"]
        for _ in range(self.rnd.randint(0, 2)):
            parts.append("$%x" % self.binary_row() if self.rnd.random() < 0.7 else self.rnd.choice(WORDS))
        return self.model_row(parts, "blob")

    def element(self, depth):
        t = self.rnd.random()
        if t < 0.5:
            etype = self.rnd.choice(["div", "span", "p"])
        elif t < 0.7:
            etype = "$" + "S" + self.rnd.choice(SYMBOLS)
        else:
            etype = "$L%x" % (self.rnd.choice(self.modules) if self.modules and self.rnd.random() < 0.5
                              else self.module_row())
        key = self.rnd.choice([None, "k%d" % self.rnd.randint(0, 9)])
        props = {"children": self.value(depth + 1)} if self.rnd.random() < 0.8 else {}
        if self.rnd.random() < 0.3:
            props["title"] = self.value(depth + 1)
        if self.dev:
            owner = "$%x" % self.component_info() if self.rnd.random() < 0.6 else None
            stack = "$%x" % self.model_row(self.stack(), "stack") if self.rnd.random() < 0.5 else None
            return ["$", etype, key, props, owner, stack, self.rnd.randint(0, 1)]
        return ["$", etype, key, props]

    def value(self, depth=0):
        r = self.rnd.random()
        if depth > 3:
            r = r * 0.4
        if r < 0.08:
            return self.rnd.choice([None, True, False, 0, 1, -2.5, 1e21, "", "x"])
        if r < 0.16:
            return self.rnd.choice(["$undefined", "$NaN", "$Infinity", "$-Infinity", "$-0", "$n123",
                                    "$n-99999999999999999999", "$D2020-01-02T03:04:05.678Z",
                                    "$Dnot-a-date", "$$escaped", "$Sreact.fragment"])
        if r < 0.22:
            return self.rnd.choice(WORDS)
        if r < 0.4:
            return [self.value(depth + 1) for _ in range(self.rnd.randint(0, 3))]
        if r < 0.55:
            return {self.rnd.choice(["a", "b", "c", "0", "props"]): self.value(depth + 1)
                    for _ in range(self.rnd.randint(0, 3))}
        if r < 0.7:
            return self.element(depth)
        if r < 0.8:
            return self.collection(depth)
        return self.ref(depth)

    def build(self):
        root = self.value(0)
        if self.dev:
            # debug info for some rows: a component that rendered them
            for rid in [i for i, k in self.kinds.items() if k == "model"]:
                if self.rnd.random() < 0.15:
                    self.rows[rid] = b"%x:D" % rid + dumps("$%x" % self.component_info()).encode() + \
                        b"\n" + self.rows[rid]
        rows = [(rid, data) for rid, data in self.rows.items()]
        rows.append((0, b"0:" + dumps(root).encode() + b"\n"))
        self.rnd.shuffle(rows)
        if self.rnd.random() < 0.8:
            # text and binary rows before the rows that reference them, as a
            # server writes them (React's client hangs on a forward reference
            # a text or binary row answers: docs/spec/FLIGHT-PROTOCOL.md 3.5)
            first = [r for r in rows if self.kinds.get(r[0]) in ("text", "binary")]
            rows = first + [r for r in rows if self.kinds.get(r[0]) not in ("text", "binary")]
        text = b"".join(data for _, data in rows)
        if self.dev:
            text = b":N1700000000000.5\n" + text  # the time origin comes first
        return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rnd = random.Random(args.seed)
    for i in range(args.count):
        with open(os.path.join(args.out, "gen-%05d.rsc" % i), "wb") as f:
            f.write(Payload(rnd).build())


if __name__ == "__main__":
    main()
