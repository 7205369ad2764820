#!/usr/bin/env python3
"""Time Python-side Flight decoders on payload files.

    bench/run python [--rounds 7] [--min-time 0.2] [--json]
        [--synth 16K,256K,4M] [--react] [FILE...]

bench/run builds the binding into build-release/python and puts it first on
PYTHONPATH.

With no FILE, --synth 16K,256K,4M and --react are implied: synthetic
payloads (synth.py, seed 1) and fixtures/react's newest server's payloads of
16 KB or more. The issue's targets are checked at the end (rscflight.loads
at least 5x the baseline, at most 1.5x the time of the bare json floor).

Decoders, taking turns within each round (A B C A B C ...):
    baseline   bench/python/baseline.py decode(data)   (pure Python)
    json       frame the rows and json.loads each JSON body (the floor for any
               decoder built on the stdlib json module)
    rscflight  rscflight.loads(data), only if `import rscflight` works

Each measurement repeats the call until --min-time seconds have passed (at
least --min-n calls) and takes the median; the reported time is the median
over rounds, and each ratio is the median of the per-round ratios (machine
speed drifts). No absolute-time assertions.
"""

import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import baseline  # noqa: E402
import synth  # noqa: E402

TARGET_VS_BASELINE = 5.0   # loads at least 5x the pure-Python decoder
TARGET_VS_JSON = 1 / 1.5   # loads at most 1.5x the time of json.loads of the rows

try:
    import rscflight  # noqa: F401
    _RSC_ERR = None
except Exception as e:  # not built yet, or broken: degrade gracefully
    rscflight = None
    _RSC_ERR = "%s: %s" % (type(e).__name__, e)

_NO_JSON_TAGS = frozenset(b"RrXxDW")  # empty bodies / debug rows skipped


def json_floor(data):
    """Frame rows as baseline.frame does and json.loads each JSON body."""
    n = 0
    for rid, tag, body in baseline.frame(data):
        if tag in baseline.LENTAGS:
            if tag == 0x54:  # T: text is decoded by any decoder
                body.decode("utf-8", "replace")
            continue
        if not body or tag in _NO_JSON_TAGS:
            continue
        if tag == 0x48:  # H: one hint-code character before the JSON
            body = body[1:]
        try:
            json.loads(body.decode("utf-8", "replace"))
            n += 1
        except ValueError:
            pass
    return n


def measure(fn, data, min_time, min_n):
    times = []
    deadline = time.perf_counter() + min_time
    while len(times) < min_n or time.perf_counter() < deadline:
        t0 = time.perf_counter_ns()
        fn(data)
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times), len(times)


def fmt_ns(ns):
    if ns is None:
        return "n/a"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return "%.3g %s" % (ns / div, unit)
    return "%d ns" % ns


def fmt_mbs(nbytes, ns):
    return "n/a" if not ns else "%.3g" % (nbytes / 1e6 / (ns / 1e9))


def fmt_ratio(x):
    return "n/a" if x is None else "%.2fx" % x


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench/run python", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--synth", metavar="SIZES",
                    help="also time synthetic payloads of these sizes (synth.py), e.g. 16K,256K,4M")
    ap.add_argument("--react", action="store_true",
                    help="also time fixtures/react's newest payloads of 16 KB or more")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--min-n", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object per file instead of a table")
    ap.add_argument("--no-rscflight", action="store_true", help="do not time rscflight even if importable")
    a = ap.parse_args(argv)
    if not a.files and not a.synth and not a.react:
        a.synth, a.react = "16K,256K,4M", True
    files = list(a.files)
    if a.synth:
        tmp = tempfile.mkdtemp(prefix="rscflight-bench-")
        for size in a.synth.split(","):
            path = os.path.join(tmp, "synth-%s.rsc" % size.strip())
            with open(path, "wb") as f:
                f.write(synth.make_payload(synth.parse_size(size), seed=1))
            files.append(path)
    if a.react:
        versions = sorted(glob.glob(os.path.join(ROOT, "fixtures", "react", "[0-9]*")),
                          key=lambda p: [int(x) for x in os.path.basename(p).split(".") if x.isdigit()])
        if versions:
            for build in ("prod", "dev"):
                files += sorted(p for p in glob.glob(os.path.join(versions[-1], build, "*.rsc"))
                                if os.path.getsize(p) >= 16 * 1024)
    a.files = files

    decoders = [("baseline", baseline.decode), ("json", json_floor)]
    if rscflight is not None and not a.no_rscflight:
        if hasattr(rscflight, "loads"):
            decoders.append(("rscflight", rscflight.loads))
        else:
            print("bench.py: rscflight has no loads(); skipping it", file=sys.stderr)
    elif rscflight is None and not a.json:
        print("bench.py: rscflight not importable (%s); timing the Python decoders only" % _RSC_ERR,
              file=sys.stderr)

    results = []
    for path in a.files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            print("bench.py: skipping %s: %s" % (path, e), file=sys.stderr)
            continue
        res = {"file": path, "bytes": len(data)}
        live = []
        for name, fn in decoders:  # verify once before timing
            try:
                fn(data)
                live.append((name, fn))
            except Exception as e:
                res.setdefault("errors", {})[name] = "%s: %s" % (type(e).__name__, e)
        per_round = {name: [] for name, _ in live}
        for _ in range(a.rounds):
            for name, fn in live:
                med, _n = measure(fn, data, a.min_time, a.min_n)
                per_round[name].append(med)
        for name, ts in per_round.items():
            res[name + "_ns"] = statistics.median(ts)
            res[name + "_mb_per_s"] = len(data) / 1e6 / (res[name + "_ns"] / 1e9)

        def ratio(num, den):
            if num not in per_round or den not in per_round:
                return None
            return statistics.median(x / y for x, y in zip(per_round[num], per_round[den]))

        res["label"] = os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)
        res["baseline_over_json"] = ratio("baseline", "json")
        res["speedup_vs_baseline"] = ratio("baseline", "rscflight")
        res["speedup_vs_json"] = ratio("json", "rscflight")
        res["rounds"] = a.rounds
        results.append(res)
        if a.json:
            print(json.dumps(res), flush=True)

    if a.json:
        return 0
    head = ["file", "bytes", "baseline", "MB/s", "json floor", "MB/s", "rscflight", "MB/s",
            "baseline/json", "rsc vs baseline", "rsc vs json"]
    rows = []
    for r in results:
        rows.append([
            r["label"], str(r["bytes"]),
            fmt_ns(r.get("baseline_ns")), fmt_mbs(r["bytes"], r.get("baseline_ns")),
            fmt_ns(r.get("json_ns")), fmt_mbs(r["bytes"], r.get("json_ns")),
            fmt_ns(r.get("rscflight_ns")), fmt_mbs(r["bytes"], r.get("rscflight_ns")),
            fmt_ratio(r["baseline_over_json"]), fmt_ratio(r["speedup_vs_baseline"]),
            fmt_ratio(r["speedup_vs_json"]),
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
    for r in results:
        for name, err in r.get("errors", {}).items():
            print("%s: %s failed: %s" % (r["file"], name, err))
    if rscflight is None:
        print("(rscflight not importable: %s; build it: bench/run python builds build-release/python)" % _RSC_ERR)
    else:
        print("(rscflight column: rscflight.loads(data); 'rsc vs X' = X time / rscflight time, median of per-round ratios)")
        summarize(results)
    return 0


def summarize(results):
    """The issue's targets over payloads of 16 KB or more."""
    big = [r for r in results if r["bytes"] >= 16 * 1024 and r.get("speedup_vs_baseline")]
    if not big:
        return
    def gmean(xs):
        return statistics.geometric_mean(xs)
    vb = [r["speedup_vs_baseline"] for r in big]
    vj = [r["speedup_vs_json"] for r in big]
    print("\n%d payloads of 16 KB or more: rscflight.loads vs baseline: geometric mean %.2fx, min %.2fx; "
          "json time / loads time: geometric mean %.2f, min %.2f" % (len(big), gmean(vb), min(vb), gmean(vj), min(vj)))
    print("targets: loads >= %.0fx baseline (met on %d of %d); loads <= 1.5x json time (met on %d of %d)"
          % (TARGET_VS_BASELINE, sum(x >= TARGET_VS_BASELINE for x in vb), len(big),
             sum(x >= TARGET_VS_JSON for x in vj), len(big)))
    for r in big:
        miss = []
        if r["speedup_vs_baseline"] < TARGET_VS_BASELINE:
            miss.append("%.2fx baseline" % r["speedup_vs_baseline"])
        if r["speedup_vs_json"] < TARGET_VS_JSON:
            miss.append("%.2fx json time" % (1 / r["speedup_vs_json"]))
        if miss:
            print("  below target: %s (%s)" % (r["label"], ", ".join(miss)))


if __name__ == "__main__":
    sys.exit(main())
