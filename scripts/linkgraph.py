#!/usr/bin/env python3
"""The library's link graph: file A -> file B when A's object uses a symbol
that B's object defines (nm over the objects of a build). Prints the knots
(files that reach each other) and the pairs of files that call each other.

    scripts/linkgraph.py [BUILD_DIR] [--edges] [--check]

--check exits 1 when a knot holds more than two files or more than two
pairs call each other: the stages link one way (docs/internals.md), with
two known exceptions (chunks.c <-> revive.c: initialising a chunk revives
its row; json_shim.cpp <-> json_fallback.c: one stage in two languages).
"""
import glob
import os
import subprocess
import sys

MAX_KNOT = 2
MAX_PAIRS = 2


def graph(objdir):
    defs, uses = {}, {}
    for o in sorted(glob.glob(os.path.join(objdir, '*.o'))):
        name = os.path.basename(o)[:-2]
        out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TDBRVWC':
                defs[parts[2]] = name
            elif len(parts) == 2 and parts[0] == 'U':
                uses.setdefault(name, set()).add(parts[1])
    names = sorted({os.path.basename(o)[:-2] for o in glob.glob(os.path.join(objdir, '*.o'))})
    edges = {n: {} for n in names}
    for a, syms in uses.items():
        for s in syms:
            b = defs.get(s)
            if b and b != a:
                edges[a].setdefault(b, []).append(s)
    return names, edges


def knots(names, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in names:
        if v not in index:
            visit(v)
    return out


def main(argv):
    build = next((a for a in argv if not a.startswith('--')), 'build')
    objdir = os.path.join(build, 'CMakeFiles', 'rscflight_objects.dir', 'src')
    names, edges = graph(objdir)
    if not names:
        sys.exit('linkgraph: no objects in %s (build the library first)' % objdir)
    ks = knots(names, edges)
    pairs = sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges[b]})
    if '--edges' in argv:
        for a in names:
            for b in sorted(edges[a]):
                print('%s -> %s: %s' % (a, b, ', '.join(sorted(edges[a][b]))))
    print('%d files; knots: %s; pairs calling each other: %s' % (
        len(names), ' '.join('{' + ' '.join(k) + '}' for k in ks) or 'none',
        ' '.join('%s<->%s' % p for p in pairs) or 'none'))
    if '--check' in argv:
        big = [k for k in ks if len(k) > MAX_KNOT]
        if big or len(pairs) > MAX_PAIRS:
            print('linkgraph: stages must link one way (at most %d files in a knot, %d pairs)'
                  % (MAX_KNOT, MAX_PAIRS), file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
