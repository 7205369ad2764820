#!/usr/bin/env python3
"""Two rscflight CLIs side by side: wall time, rounds in turns (A B A B ...).

    bench/run ab --before OLD/rscflight [--after build-release/rscflight]
        [--rounds 5] [--min-time 0.2] [--after-args="--reuse"] FILE...

Each build runs in processes of its own, so this sees what `bench/run pairs`
(both builds in one process, sharing one heap) cannot: how much memory a
decoder takes from libc, the page faults of fresh decoders.
For each FILE and round, `OLD bench --json` and `NEW bench --json [after-args]`
run one after the other; the speedup is time(before) / time(after), reported
as the median of the per-round ratios (this machine's speed drifts). Build an
old commit with:

    git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build \\
        -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/old/build --target rscflight_cli
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def median_ns(cli, path, min_time, extra):
    cmd = [cli, "bench", "--json", "--min-time", str(min_time)] + extra + [path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(json.loads(out)[0]["median_ns"])


def main():
    ap = argparse.ArgumentParser(prog="bench/run ab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the old rscflight CLI")
    ap.add_argument("--after", default=os.path.join(ROOT, "build-release", "rscflight"))
    ap.add_argument("--before-args", default="", help="extra bench options for the old CLI")
    ap.add_argument("--after-args", default="", help="extra bench options for the new CLI")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    bx, ax = shlex.split(a.before_args), shlex.split(a.after_args)
    print("%-24s %12s %12s %9s" % ("file", "before", "after", "speedup"))
    for f in a.files:
        before, after, ratio = [], [], []
        for _ in range(a.rounds):
            b = median_ns(a.before, f, a.min_time, bx)
            n = median_ns(a.after, f, a.min_time, ax)
            before.append(b)
            after.append(n)
            ratio.append(b / n)
        print("%-24s %10.1f us %10.1f us %8.2fx" % (os.path.basename(f), statistics.median(before) / 1e3,
                                                   statistics.median(after) / 1e3, statistics.median(ratio)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
