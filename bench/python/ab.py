#!/usr/bin/env python3
"""Two builds of the Python binding side by side in one process.

    bench/run pyab --before OLD/build-release/python \\
        [--after build-release/python] [--seconds 8] FILE...

The `rscflight` package under --after is imported under another name
(rscflight_b, from a copy), so both extensions live in one interpreter. For
each FILE, `loads` calls alternate A B, B A, A B ... for --seconds; each pair
gives one ratio, time(before) / time(after), and the median of those ratios
is the speedup (> 1: the after build is faster), with the quartiles beside
it. Pairs of calls a few milliseconds apart see the same machine, where
rounds of separate processes saw this VM's vCPUs change speed between them
(docs/performance.md, eleventh round). Both builds must give the same
canonical dump of each FILE.

Which build is imported as which name matters by itself, as the library's
place in a process does for `bench/run pairs` (docs/performance.md,
twelfth round). So each FILE is measured by two processes, the second
with the builds' places swapped; `speedup` is the geometric mean of the
two ratios (`forward`, `swapped`), in which that bias cancels, and `slot`
is the bias (1.000: no place favoured). Build an old commit's binding with:

    git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build-release \\
        -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/old/build-release --target rscflight_python

What this cannot measure: changes whose effect is the allocator's state
(pooling decoders, freeing memory), which the two builds share here.
"""

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(prog="bench/run pyab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="a build's python folder (holds rscflight/)")
    ap.add_argument("--after", default=os.path.join(ROOT, "build-release", "python"))
    ap.add_argument("--seconds", type=float, default=8.0, help="time per file (default 8)")
    ap.add_argument("--one-way", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if not args.one_way:
        return both_ways(args)

    tmp = tempfile.mkdtemp(prefix="rscflight-ab-")
    try:
        shutil.copytree(os.path.join(args.after, "rscflight"), os.path.join(tmp, "rscflight_b"))
        sys.path.insert(0, args.before)
        sys.path.insert(0, tmp)
        import rscflight as before  # noqa: E402
        import rscflight_b as after  # noqa: E402
        if os.path.dirname(before.__file__) == os.path.dirname(after.__file__):
            sys.exit("--before and --after are the same build")
        clock = time.perf_counter
        for path in args.files:
            with open(path, "rb") as f:
                data = f.read()
            if before.canonical_dump(data) != after.canonical_dump(data):
                sys.exit("%s: the two builds disagree" % path)
            for _ in range(5):
                before.loads(data)
                after.loads(data)
            ratios, tb, ta = [], [], []
            end = clock() + args.seconds
            while clock() < end or len(ratios) < 20:
                first, second = (before, after) if len(ratios) % 2 == 0 else (after, before)
                t0 = clock()
                first.loads(data)
                t1 = clock()
                second.loads(data)
                t2 = clock()
                x, y = (t1 - t0, t2 - t1) if first is before else (t2 - t1, t1 - t0)
                ratios.append(x / y)
                tb.append(x)
                ta.append(y)
            ratios.sort()
            q = lambda p: ratios[int(p * (len(ratios) - 1))]  # noqa: E731
            print("%s\t%d\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f" % (
                os.path.basename(path), len(ratios), statistics.median(tb) * 1e3,
                statistics.median(ta) * 1e3, q(0.5), q(0.25), q(0.75)), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def both_ways(args):
    """Each file measured with the builds in their places, then swapped."""
    def one_way(before, after, path):
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--one-way", "--before", before,
             "--after", after, "--seconds", str(args.seconds), path],
            check=True, stdout=subprocess.PIPE, text=True).stdout
        return out.strip().split("\t")
    print("%-28s %7s %11s %11s %8s %8s %8s %8s" % (
        "file", "pairs", "before", "after", "speedup", "forward", "swapped", "slot"))
    for path in args.files:
        fw = one_way(args.before, args.after, path)
        sw = one_way(args.after, args.before, path)
        f, s = float(fw[4]), 1 / float(sw[4])
        print("%-28s %7d %8.3f ms %8.3f ms %7.3fx %7.3fx %7.3fx %7.3fx" % (
            os.path.basename(path)[:28], int(fw[1]) + int(sw[1]),
            (float(fw[2]) + float(sw[3])) / 2, (float(fw[3]) + float(sw[2])) / 2,
            math.sqrt(f * s), f, s, math.sqrt(f / s)), flush=True)


if __name__ == "__main__":
    main()
