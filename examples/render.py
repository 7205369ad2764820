#!/usr/bin/env python3
"""render.py - examples/stream_render.c in Python, with the rscflight binding.

    PYTHONPATH=build/python python3 examples/render.py examples/shop.rsc
    PYTHONPATH=build/python python3 examples/render.py --whole examples/shop.rsc

An SSR host in miniature. By default it reads the payload in pieces of 1 to
4 KB (the same seeded sizes as the C program), feeds each to an
rscflight.Decoder and streams HTML as soon as it can: hints as <link> tags
when their H rows arrive, the shell when the root chunk settles (with a
<template id="P:n"> placeholder for every part still pending), then each
part as <template data-fill="P:n"> once its row came in. --whole decodes in
one call, rscflight.loads(data), and prints the document once.

The output is byte for byte the C program's (the tests compare both with
the same golden files): the two hosts show that the C API and the binding
give the same values.

As in C, a lazy's row is parsed when something reads it (React's laziness),
so the host asks the decoder for each pending part after every piece:
Decoder.chunk(id) reads it. Exit status 77: the binding is not built (the
test running this file is then skipped).
"""
import array
import datetime
import math
import sys

try:
    import rscflight
    from rscflight import (BigInt, ClientReference, DateString, Element, FormData, Iterator,
                           Map, MapPairs, ServerError, SetItems, Symbol, Thenable, undefined)
except ImportError as exc:  # not built yet: let the test skip
    print(f"SKIP: cannot import rscflight ({exc}); build it and set PYTHONPATH=build/python",
          file=sys.stderr)
    sys.exit(77)

VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
             "meta", "source", "track", "wbr"}
LINK_RELS = {"L": "preload", "m": "modulepreload", "C": "preconnect", "D": "dns-prefetch",
             "S": "stylesheet"}


# MARK: text ------------------------------------------------------------------------

def esc_text(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def esc_attr(s):
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def number_text(n):
    """As the C program prints numbers: integers below 1e15 plainly, others
    (and NaN, infinities) as C's %.17g."""
    n = float(n)
    if math.isfinite(n) and abs(n) < 1e15 and n == int(n):
        return str(int(n))
    return "%.17g" % n


def kind_name(value):
    """The C API's kind name (rsc_kind_name) for a value this host does not
    render, as the binding maps kinds to Python types."""
    kinds = ((BigInt, "bigint"), ((DateString, datetime.datetime), "date"),
             (Symbol, "symbol"), ((Map, MapPairs), "map"), (FormData, "formdata"),
             ((set, frozenset, SetItems), "set"),
             (dict, "object"), (ClientReference, "client_ref"),
             (rscflight.ServerReference, "server_ref"),
             (rscflight.TemporaryReference, "temporary_ref"), (rscflight.Blob, "blob"),
             (rscflight.Stream, "stream"), (ServerError, "error"),
             (rscflight.Function, "function"),
             ((bytes, bytearray, memoryview, array.array), "binary"))
    for types, name in kinds:
        if isinstance(value, types):
            return name
    return type(value).__name__.lower()


def attrs(props):
    """String, number and true props as attributes (className -> class)."""
    out = []
    for key, value in props.items():
        if key in ("children", "dangerouslySetInnerHTML"):
            continue
        name = {"className": "class", "htmlFor": "for"}.get(key, key)
        if isinstance(value, bool):
            if value:
                out.append(f" {name}")
        elif isinstance(value, str):
            out.append(f' {name}="{esc_attr(value)}"')
        elif isinstance(value, (int, float)) and not isinstance(value, BigInt):
            out.append(f' {name}="{number_text(value)}"')
    return "".join(out)


def hint_line(code, value):
    """An H row as the <link> (or <script>) a host puts in <head>."""
    href = value[0] if isinstance(value, list) and value else value
    if not isinstance(href, str) or (code not in LINK_RELS and code not in "XM"):
        return f"<!-- hint {code} -->\n"
    if code in "XM":
        module = ' type="module"' if code == "M" else ""
        return f'<script{module} src="{href}" async></script>\n'
    as_attr = ""
    if code == "L" and isinstance(value, list) and len(value) > 1 and isinstance(value[1], str):
        as_attr = f' as="{value[1]}"'
    return f'<link rel="{LINK_RELS[code]}" href="{href}"{as_attr}>\n'


def error_text(reason):
    """A rejection's digest (what production servers send), else its message."""
    if isinstance(reason, ServerError):
        if isinstance(reason.digest, str):
            return reason.digest
        return reason.message
    return "error"


def renders_nothing(value):
    return value is None or value is undefined or isinstance(value, bool) or value == []


# MARK: rendering ----------------------------------------------------------------------

class Host:
    """The renderer and its placeholders. dec is the streaming decoder, or
    None when everything was decoded at once."""

    def __init__(self, out, dec=None):
        self.out = out
        self.dec = dec
        self.slots = []          # [lazy, id, filled]
        self.root_settled = False
        self.shell_done = False
        self.hints = []
        self.level = 0

    def on_event(self, kind, obj):
        """The decoder's hook: only records (rendering happens after feed)."""
        if kind == "chunk" and obj.id == 0:
            self.root_settled = True
        elif kind == "hint":
            self.hints.append(hint_line(obj.code, obj.value))

    def line(self, depth, text):
        self.out.write("  " * depth + text + "\n")

    def status_of(self, lazy):
        """The lazy's chunk read now (parsing its row if it arrived)."""
        if self.dec is not None and lazy.id >= 0:
            return self.dec.chunk(lazy.id)
        return lazy

    def placeholder(self, lazy, depth):
        slot_id = len(self.slots)
        self.slots.append([lazy, slot_id, False])
        self.line(depth, f'<template id="P:{slot_id}"></template>')

    def render(self, value, depth):
        """Renders value; nesting past 500 levels (hostile input, or an array
        that holds itself) renders nothing, as in the C program."""
        if self.level >= 500:
            return
        self.level += 1
        try:
            self.render_value(value, depth)
        finally:
            self.level -= 1

    def render_value(self, value, depth):
        if isinstance(value, (BigInt, DateString, MapPairs, FormData, SetItems)):
            self.line(depth, f"<!-- {kind_name(value)} -->")
        elif isinstance(value, str):
            self.line(depth, esc_text(value))
        elif isinstance(value, bool) or value is None or value is undefined:
            return
        elif isinstance(value, (int, float)):
            self.line(depth, number_text(value))
        elif isinstance(value, (list, Iterator)):
            for item in value:
                self.render(item, depth)
        elif isinstance(value, Element):
            self.element(value, depth)
        elif isinstance(value, Thenable):
            chunk = self.status_of(value)
            if chunk.status == "fulfilled":
                self.render(chunk.value, depth)
            elif chunk.status == "rejected":
                self.line(depth, f'<template data-error="{esc_attr(error_text(chunk.reason))}">'
                                 "</template>")
            elif chunk.status == "halted":
                self.line(depth, "<!-- halted: never sent -->")
            else:
                self.placeholder(value, depth)
        else:
            self.line(depth, f"<!-- {kind_name(value)} -->")

    def tag(self, open_tag, props, close_tag, depth):
        """Opens a tag, renders the children inside, closes it; a lone text
        child stays on the tag's line."""
        children = props.get("children")
        inner = props.get("dangerouslySetInnerHTML")
        raw = inner.get("__html") if isinstance(inner, dict) else None
        head = "  " * depth + open_tag + attrs(props) + ">"
        if isinstance(raw, str):
            self.out.write(head + raw + close_tag + "\n")
        elif isinstance(children, str):
            self.out.write(head + esc_text(children) + close_tag + "\n")
        elif renders_nothing(children):
            self.out.write(head + close_tag + "\n")
        else:
            self.out.write(head + "\n")
            self.render(children, depth + 1)
            self.line(depth, close_tag)

    def element(self, element, depth):
        etype = element.type
        while isinstance(etype, Thenable):  # a client component: a lazy of its module
            chunk = self.status_of(etype)
            if chunk.status != "fulfilled":
                self.placeholder(etype, depth)
                return
            etype = chunk.value
        props = element.props if isinstance(element.props, dict) else {}
        if isinstance(etype, str):
            if etype in VOID_TAGS:
                self.line(depth, f"<{etype[:200]}{attrs(props)}/>")
            else:
                self.tag(f"<{etype[:200]}", props, f"</{etype[:200]}>", depth)
        elif isinstance(etype, Symbol):
            if etype.key == "react.suspense":
                self.line(depth, "<!--$-->")
                self.render(props.get("children"), depth)
                self.line(depth, "<!--/$-->")
            else:  # Fragment and the other built-ins
                self.render(props.get("children"), depth)
        elif isinstance(etype, ClientReference):
            module = etype.id if isinstance(etype.id, str) else number_text(etype.id)
            name = etype.name if isinstance(etype.name, str) else ""
            self.tag(f'<rsc-client src="{module[:120]}#{name[:120]}"', props, "</rsc-client>",
                     depth)
        else:
            self.line(depth, f"<!-- element of type {kind_name(etype)} -->")

    # MARK: streaming

    def flush_fills(self):
        """Fills every placeholder whose chunk settled; fills may add more."""
        i = 0
        while i < len(self.slots):
            lazy, slot_id, filled = self.slots[i]
            i += 1
            if filled:
                continue
            chunk = self.status_of(lazy)
            if chunk.status in ("pending", "blocked"):
                continue
            self.slots[i - 1][2] = True
            if chunk.status == "fulfilled":
                self.out.write(f'<template data-fill="P:{slot_id}">\n')
                self.render(chunk.value, 1)
                self.out.write("</template>\n")
            elif chunk.status == "rejected":
                self.out.write(f'<template data-fill="P:{slot_id}" '
                               f'data-error="{esc_attr(error_text(chunk.reason))}"></template>\n')
            else:
                self.out.write(f"<!-- P:{slot_id} halted: never sent -->\n")

    def flush(self):
        """Hints, the shell once the root settled, then what arrived since."""
        self.out.write("".join(self.hints))
        self.hints = []
        if not self.shell_done and self.root_settled:
            self.shell_done = True
            root = self.dec.root
            if root.status == "fulfilled":
                self.render(root.value, 0)
            else:
                self.out.write(f'<template data-error="{esc_attr(error_text(root.reason))}">'
                               "</template>\n")
        if self.shell_done:
            self.flush_fills()


def piece_sizes(lo, hi, seed):
    """The C program's xorshift32 piece sizes."""
    x = seed
    while True:
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        yield lo + x % (hi - lo + 1)


def stream(f, out, lo, hi, seed):
    host = Host(out)
    host.dec = rscflight.Decoder(on_event=host.on_event)
    total = 0
    for size in piece_sizes(lo, hi, seed):
        piece = f.read(size)
        if not piece:
            break
        total += len(piece)
        host.dec.feed(piece)
        out.write(f"<!-- read {len(piece)} bytes ({total} in all) -->\n")
        host.flush()
    try:
        host.dec.finish()
    except (ServerError, rscflight.IncompleteError):
        pass  # the root failed: the shell shows its error
    out.write("<!-- end of stream -->\n")
    host.flush()


def whole(f, out):
    try:
        root = rscflight.loads(f.read())
    except (ServerError, rscflight.IncompleteError):
        return  # no document
    Host(out).render(root, 0)


def main(argv):
    lo, hi, seed, once, path = 1024, 4096, 1, False, "-"
    args = iter(argv)
    for a in args:
        if a == "--piece":
            lo = hi = int(next(args))
        elif a == "--pieces":
            lo, _, hi = next(args).partition("-")
            lo, hi = int(lo), int(hi)
        elif a == "--seed":
            seed = int(next(args))
        elif a == "--whole":
            once = True
        elif a.startswith("-") and a != "-":
            print("usage: render.py [--piece N | --pieces MIN-MAX] [--seed S] [--whole] [FILE|-]",
                  file=sys.stderr)
            return 2
        else:
            path = a
    sys.setrecursionlimit(10000)  # render nests up to 500 levels, a few frames each
    f = sys.stdin.buffer if path == "-" else open(path, "rb")
    with f:
        try:
            if once:
                whole(f, sys.stdout)
            else:
                stream(f, sys.stdout, lo, hi, seed)
        except rscflight.DecodeError as e:
            print(f"render.py: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
