#!/usr/bin/env python3
"""The C benchmarks behind bench/run: rscflight (C) against React's Flight
client (JS), and rscflight's own studies. bench/run builds, installs the JS
clients, then runs this as

    bench/run [compare|sweep|memory|scaling|threads] [options]

Payloads come from bench/payloads.txt ("class-name<TAB>path" per line, '#'
comments; paths relative to the repository root; missing files are skipped
with a warning) or from --files. Paths in the reports are written relative
to the repository.

compare (the default): for every payload, ROUNDS rounds in which the
decoders take turns (rscflight, rscflight with a new decoder per decode,
rscflight with borrowed input, rscflight --parse-only, React 19.3.1, React
19.2.9, JSON.parse; then again ...). The C runs reuse one decoder per process
(--reuse: rsc_decoder_reset between decodes) except rscflight-new;
rscflight-borrow adds --borrow-input (RSC_OPT_BORROW_INPUT: text and binary
rows point into the input instead of being copied). Each invocation is a fresh process measuring with
a short --min-time and reporting its median. Reported times are medians over
rounds; every ratio is computed per round and the median of the per-round
ratios is reported (machine speed drifts). Writes bench/results/latest.md,
latest.json and throughput.svg.

The studies (each writes its own bench/results/<name>.md):
    sweep     rscflight fed in chunks of 1, 64, 4096, 65536 bytes vs whole
    memory    rscflight peak_bytes against input size
    scaling   synthetic payloads from 1 KB to 100 MB: ns per byte
    threads   two decoders on two threads (--nthreads 2) vs one

Nothing here asserts on absolute times.

What the C CLI must provide (build-release/rscflight):
    rscflight bench --json --min-time S [--parse-only] [--reuse] [--borrow-input]
                    [--chunk-size N[,N...]] [--threads T[,T...]] FILE...
  printing a JSON list with one object per FILE (and per chunk size and
  thread count when those are lists, timed in turns in one process):
    {"file", "bytes", "median_ns", "mb_per_s", "peak_bytes", "threads", "chunk_size"}
  --parse-only: bare simdjson DOM parse of the payload's JSON rows.
  --chunk-size N: the payload is fed to one decoder N bytes at a time.
  --reuse: one decoder, reset between decodes, instead of a new one each.
  --files-in-turns: every FILE timed in turns in one process (scaling).
  --threads T: T threads decode the payload concurrently, batch after batch
    (several decodes per thread per batch); median_ns is the wall time of T
    concurrent decodes (mb_per_s = T * bytes / median_ns); the object also
    carries "threads": T.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "python"))

DECODERS = ["rscflight", "rscflight-new", "rscflight-borrow", "parse-only", "parse-walk", "19.3.1", "19.2.9",
            "jsonparse", "encode", "react-server"]
LABEL = {
    "rscflight": "rscflight",
    "rscflight-new": "rscflight (new decoder each time)",
    "rscflight-borrow": "rscflight (borrowed input)",
    "parse-only": "simdjson floor",
    "parse-walk": "simdjson floor + walk",
    "19.3.1": "React 19.3.1",
    "19.2.9": "React 19.2.9",
    "jsonparse": "JSON.parse floor",
    "encode": "rscflight encode",
    "react-server": "React 19.3.1 server",
}
C_DECODERS = {"rscflight", "rscflight-new", "rscflight-borrow", "parse-only", "parse-walk"}
JS_DECODERS = {"19.3.1", "19.2.9", "jsonparse"}
# Writers (compare only): rscflight's encoder (`rscflight bench --encode`,
# which times a decode of the same bytes beside it, in turns) and React's
# Flight server serializing the payload's model (bench/js/serverbench.js).
WRITERS = {"encode", "react-server"}
SWEEP_CHUNKS = [1, 64, 4096, 65536]
SCALING_SIZES = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8]


def warn(msg):
    print("driver: warning: " + msg, file=sys.stderr, flush=True)


def info(msg):
    print("driver: " + msg, file=sys.stderr, flush=True)


def rel(path):
    """A path as the results write it: relative to the repository when it
    lies inside it (results are read on other machines and checkouts),
    unchanged otherwise."""
    if not isinstance(path, str) or not os.path.isabs(path):
        return path
    r = os.path.relpath(path, ROOT)
    return path if r == ".." or r.startswith(".." + os.sep) else r


def rel_arg(arg):
    """rel() for a command-line word, including the value of --opt=PATH."""
    if arg.startswith("--") and "=" in arg:
        opt, val = arg.split("=", 1)
        return opt + "=" + rel(val)
    return rel(arg)


# ---------------------------------------------------------------------------
# payloads


def read_payload_list(path):
    out = []
    if not os.path.exists(path):
        warn("payload list %s does not exist" % path)
        return out
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if "\t" in line:
                cls, p = line.split("\t", 1)
            else:
                parts = line.split(None, 1)
                if len(parts) != 2:
                    warn("%s:%d: expected 'class<TAB>path', skipped" % (path, lineno))
                    continue
                cls, p = parts
            cls, p = cls.strip(), p.strip()
            cands = [p] if os.path.isabs(p) else [os.path.join(ROOT, p), os.path.join(os.path.dirname(path), p)]
            hit = next((c for c in cands if os.path.isfile(c)), None)
            if hit is None:
                warn("%s:%d: payload %s (%s) not found, skipped" % (path, lineno, p, cls))
                continue
            out.append((cls, os.path.normpath(hit)))
    return out


def files_as_payloads(files):
    out = []
    for p in files:
        if not os.path.isfile(p):
            warn("payload %s not found, skipped" % p)
            continue
        cls = os.path.splitext(os.path.basename(p))[0]
        out.append((cls, os.path.abspath(p)))
    return out


def synth_dir():
    d = os.path.join(tempfile.gettempdir(), "rscflight-bench-synth")
    os.makedirs(d, exist_ok=True)
    return d


def synthetic_payload(size, seed=1):
    """Path of a synthetic payload of about `size` bytes (cached in /tmp)."""
    import synth
    path = os.path.join(synth_dir(), "synth-%d-s%d.rsc" % (size, seed))
    if not os.path.exists(path):
        info("generating %s" % path)
        data = synth.make_payload(size, seed)
        tmp = path + ".tmp%d" % os.getpid()
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


# ---------------------------------------------------------------------------
# running decoders


def c_decoder_flags(decoder):
    """`rscflight bench` flags for a C decoder. One decoder per process,
    reset between decodes (as a host decoding response after response does,
    and as V8's heap stays warm for the JS clients); rscflight-new builds a
    fresh one."""
    flags = []
    if decoder == "parse-only":
        flags.append("--parse-only")
    if decoder == "parse-walk":
        flags.append("--parse-walk")
    if decoder == "rscflight-borrow":
        flags.append("--borrow-input")
    if decoder != "rscflight-new":
        flags.append("--reuse")
    return flags


class Runner:
    def __init__(self, args):
        self.args = args
        self.cli = args.cli
        self.node = args.node
        self.bench_js = os.path.join(HERE, "js", "bench.js")
        self.server_js = os.path.join(HERE, "js", "serverbench.js")
        self.commands = []

    def have_cli(self):
        return os.path.isfile(self.cli) and os.access(self.cli, os.X_OK)

    def have_js(self):
        return os.path.isdir(os.path.join(HERE, "js", "node_modules")) and shutil.which(self.node) is not None

    def _run(self, cmd, env=None, timeout=None):
        if len(self.commands) < 50:
            self.commands.append(" ".join(shlex.quote(rel_arg(c)) for c in cmd))
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               timeout=timeout or self.args.timeout, text=True)
        except subprocess.TimeoutExpired:
            return None, "timed out after %ss" % (timeout or self.args.timeout)
        except OSError as e:
            return None, str(e)
        if p.returncode != 0 and not p.stdout.strip():
            return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[-500:])
        objs = parse_json_output(p.stdout)
        if objs is None:
            return None, "unparsable output (exit %d): %r %s" % (p.returncode, p.stdout[:300], p.stderr[-300:])
        return objs, None

    def run(self, decoder, path, min_time=None, chunk_size=None, threads=None):
        """One invocation on one file; returns (result dict or None, error)."""
        min_time = self.args.min_time if min_time is None else min_time
        if decoder == "encode":
            cmd = [self.cli, "bench", "--json", "--encode", "--min-time", "%g" % min_time, path]
            env = None
        elif decoder == "react-server":
            cmd = [self.node, "--conditions=react-server", self.server_js, "--rounds", "1",
                   "--min-time", "%g" % min_time, "--warmup", "%g" % self.args.js_warmup, path]
            env = dict(os.environ, NODE_ENV="production")
        elif decoder in C_DECODERS:
            cmd = [self.cli, "bench", "--json", "--min-time", "%g" % min_time] + c_decoder_flags(decoder)
            if chunk_size:
                cmd += ["--chunk-size", str(chunk_size)]
            if threads:
                cmd += ["--threads", str(threads)]
            cmd.append(path)
            env = None
        else:
            cmd = [self.node, self.bench_js, "--client", decoder, "--rounds", "1",
                   "--min-time", "%g" % min_time, "--warmup", "%g" % self.args.js_warmup,
                   "--timeout", "%g" % self.args.timeout]
            if chunk_size:
                cmd += ["--chunk-size", str(chunk_size)]
            cmd.append(path)
            env = dict(os.environ, NODE_ENV="production")
        objs, err = self._run(cmd, env=env)
        if err:
            return None, err
        for o in objs:
            # bench --encode: the encode's median, and the decode's of the same rounds
            if isinstance(o, dict) and "encode_median_ns" in o and "median_ns" not in o:
                o["median_ns"] = o["encode_median_ns"]
        for o in objs:
            if not isinstance(o, dict):
                continue
            if "error" in o:
                return None, str(o["error"])
            if "median_ns" in o and (o.get("file") in (path, os.path.abspath(path)) or len(objs) == 1):
                size = os.path.getsize(path)
                if o.get("bytes") not in (None, size):
                    warn("%s reported bytes=%s for %s (%d bytes)" % (decoder, o.get("bytes"), path, size))
                return o, None
        return None, "no result for %s in output" % path

    def run_in_turns(self, decoder, paths, min_time=None):
        """A C decoder on several files in one process, timed in turns
        (`rscflight bench --files-in-turns`), so that their ratios leave out
        the speed differences between processes. Returns ({path: result
        dict}, error)."""
        min_time = self.args.min_time if min_time is None else min_time
        cmd = [self.cli, "bench", "--json", "--files-in-turns", "--min-time", "%g" % min_time]
        cmd += c_decoder_flags(decoder)
        objs, err = self._run(cmd + list(paths))
        if err:
            return None, err
        out = {o["file"]: o for o in objs if isinstance(o, dict) and "median_ns" in o}
        missing = [p for p in paths if p not in out]
        if missing:
            return None, "no result for %s in output" % missing
        return out, None

    def run_configs(self, path, chunk_sizes=(0,), threads=(1,), min_time=None, parse_only=False):
        """rscflight on one file, every (chunk size, threads) pair timed in
        turns in one process (the CLI interleaves them about every 2 ms), so
        their ratios leave out the speed differences between processes. Returns
        ({(chunk_size, threads): result dict}, error)."""
        min_time = self.args.min_time if min_time is None else min_time
        cmd = [self.cli, "bench", "--json", "--reuse", "--min-time", "%g" % min_time] + \
            (["--parse-only"] if parse_only else []) + [
               "--chunk-size", ",".join(str(c) for c in chunk_sizes),
               "--threads", ",".join(str(t) for t in threads), path]
        objs, err = self._run(cmd)
        if err:
            return None, err
        out = {}
        for o in objs:
            if isinstance(o, dict) and "error" in o:
                return None, str(o["error"])
            if isinstance(o, dict) and "median_ns" in o:
                out[(int(o.get("chunk_size", 0)), int(o.get("threads", 1)))] = o
        want = [(c, t) for c in chunk_sizes for t in threads]
        missing = [k for k in want if k not in out]
        if missing:
            return None, "no result for %s %s in output" % (path, missing)
        return out, None


def parse_json_output(text):
    text = text.strip()
    if not text:
        return None
    try:
        v = json.loads(text)
        return v if isinstance(v, list) else [v]
    except ValueError:
        pass
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            v = json.loads(line)
        except ValueError:
            continue
        out.extend(v if isinstance(v, list) else [v])
    return out or None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio_median(nums, dens):
    """Median of per-round ratios nums[i] / dens[i] (rounds where both exist)."""
    rs = [n / d for n, d in zip(nums, dens) if n is not None and d]
    return statistics.median(rs) if rs else None


def per_byte_ratios(times, nbytes, ref_times, ref_bytes):
    """(times[i] / nbytes) / (ref_times[i] / ref_bytes) for each round i
    where both ran: ns per byte against a reference size's in that round."""
    return [(t / nbytes) / (r / ref_bytes) for t, r in zip(times, ref_times)
            if t is not None and r]


def per_byte_ratio(times, nbytes, ref_times, ref_bytes):
    """The median of per_byte_ratios (None when no round has both)."""
    rs = per_byte_ratios(times, nbytes, ref_times, ref_bytes)
    return statistics.median(rs) if rs else None


def mbps(nbytes, ns):
    return nbytes / 1e6 / (ns / 1e9) if ns else None


# ---------------------------------------------------------------------------
# formatting


def fmt_ns(ns):
    if ns is None:
        return "n/a"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return "%.3g %s" % (ns / div, unit)
    return "%.0f ns" % ns


def fmt_num(x, digits=3):
    if x is None:
        return "n/a"
    if x >= 10 ** digits:
        return "%.0f" % x
    return "%.*g" % (digits, x)


def fmt_ratio(x):
    return "n/a" if x is None else "%.2fx" % x


def fmt_pct(x):
    return "n/a" if x is None else "%.0f%%" % (100 * x)


def fmt_bytes(n):
    if n is None:
        return "n/a"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= div:
            return "%.3g %s" % (n / div, unit)
    return "%d B" % n


def text_table(head, rows):
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    for r in rows:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# environment facts for the report


def _cmd_out(cmd, cwd=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30, cwd=cwd)
        return p.stdout.strip() if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _cmake_cache(build_dir):
    vals = {}
    path = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^([A-Za-z_][A-Za-z0-9_\-]*):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    vals[m.group(1)] = m.group(2)
    return vals


def _simdjson_version(build_dir, cache):
    cands = []
    for root in (build_dir, os.path.join(ROOT, "third_party"), os.path.join(ROOT, "vendor")):
        if os.path.isdir(root):
            for dp, dn, fn in os.walk(root):
                for name in ("simdjson_version.h", "simdjson.h"):
                    if name in fn:
                        cands.append(os.path.join(dp, name))
    inc = cache.get("simdjson_DIR") or ""
    if inc:
        cands.append(os.path.join(inc, "..", "..", "..", "include", "simdjson.h"))
    cands.append("/usr/include/simdjson.h")
    cands.append("/usr/local/include/simdjson.h")
    for c in cands:
        try:
            with open(c, encoding="utf-8", errors="replace") as f:
                head = f.read(200000)
        except OSError:
            continue
        m = re.search(r'#define\s+SIMDJSON_VERSION\s+"?([0-9][0-9.]*)"?', head)
        if m:
            return "%s (%s)" % (m.group(1), rel(os.path.normpath(c)))
    return None


def environment(runner):
    facts = {}
    lscpu = _cmd_out(["lscpu"]) or ""
    m = re.search(r"^Model name:\s*(.+)$", lscpu, re.M)
    facts["cpu"] = m.group(1).strip() if m else platform.processor() or "unknown"
    facts["cores"] = str(os.cpu_count())
    m = re.search(r"^CPU\(s\):\s*(.+)$", lscpu, re.M)
    if m:
        facts["cores"] = m.group(1).strip()
    facts["kernel"] = platform.release()
    osr = "/etc/os-release"
    if os.path.exists(osr):
        with open(osr) as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)
            if m:
                facts["os"] = m.group(1)
    facts["node"] = _cmd_out([runner.node, "--version"])
    for key, pkg in (("react", "react"), ("react-server-dom-webpack", "react-server-dom-webpack"),
                     ("react (old)", "react-19.2.9"), ("react-server-dom-webpack (old)", "rsdw-19.2.9")):
        pj = os.path.join(HERE, "js", "node_modules", pkg, "package.json")
        if os.path.exists(pj):
            with open(pj) as f:
                facts[key] = json.load(f).get("version")
    build_dir = os.path.dirname(os.path.abspath(runner.cli))
    cache = _cmake_cache(build_dir)
    facts["build type"] = cache.get("CMAKE_BUILD_TYPE") or None
    for key, var in (("C compiler", "CMAKE_C_COMPILER"), ("C++ compiler", "CMAKE_CXX_COMPILER")):
        comp = cache.get(var)
        if comp:
            v = _cmd_out([comp, "--version"])
            facts[key] = "%s (%s)" % (v.splitlines()[0] if v else "?", rel(comp))
    facts["C flags"] = " ".join(x for x in (cache.get("CMAKE_C_FLAGS"), cache.get("CMAKE_C_FLAGS_RELEASE")) if x) or None
    facts["simdjson"] = _simdjson_version(build_dir, cache)
    if runner.have_cli():
        v = _cmd_out([runner.cli, "--version"])
        facts["rscflight"] = v.splitlines()[0] if v else None
    facts["python"] = platform.python_version()
    facts["git"] = _cmd_out(["git", "describe", "--always", "--dirty", "--tags"], cwd=ROOT)
    return {k: v for k, v in facts.items() if v}


# ---------------------------------------------------------------------------
# SVG (hand-written)

COLORS = {
    "rscflight": "#d62728",
    "rscflight-new": "#e377c2",
    "rscflight-borrow": "#8c564b",
    "parse-only": "#ff9896",
    "parse-walk": "#c49c94",
    "19.3.1": "#1f77b4",
    "19.2.9": "#9467bd",
    "jsonparse": "#2ca02c",
    "encode": "#ff7f0e",
    "react-server": "#17becf",
}


def _esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


DASHED = {"simdjson floor", "simdjson floor + walk", "JSON.parse floor"}


def svg_loglog(series, title, xlabel, ylabel, xfmt, yfmt, width=760, height=480):
    """series: list of (name, color, [(x, y), ...]) with x, y > 0. Floors are dashed."""
    pts = [(x, y) for _, _, ps in series for x, y in ps if x and y and x > 0 and y > 0]
    ml, mr, mt, mb = 70, 190, 40, 55
    pw, ph = width - ml - mr, height - mt - mb
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>' % (ml, _esc(title))]
    if not pts:
        out.append('<text x="%d" y="%d">no data</text>' % (ml + 20, mt + ph // 2))
        out.append("</svg>")
        return "\n".join(out)
    x0 = math.floor(math.log10(min(p[0] for p in pts)))
    x1 = math.ceil(math.log10(max(p[0] for p in pts)))
    y0 = math.floor(math.log10(min(p[1] for p in pts)))
    y1 = math.ceil(math.log10(max(p[1] for p in pts)))
    if x1 == x0:
        x1 += 1
    if y1 == y0:
        y1 += 1

    def sx(x):
        return ml + (math.log10(x) - x0) / (x1 - x0) * pw

    def sy(y):
        return mt + ph - (math.log10(y) - y0) / (y1 - y0) * ph

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (ml, mt, pw, ph))
    for d in range(x0, x1 + 1):
        x = sx(10 ** d)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, mt, x, mt + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, mt + ph + 18, _esc(xfmt(10 ** d))))
        if d < x1:
            for k in range(2, 10):
                xx = sx(k * 10 ** d)
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#444"/>' % (xx, mt + ph, xx, mt + ph - 4))
    for d in range(y0, y1 + 1):
        y = sy(10 ** d)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (ml, y, ml + pw, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (ml - 6, y + 4, _esc(yfmt(10 ** d))))
        if d < y1:
            for k in range(2, 10):
                yy = sy(k * 10 ** d)
                out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#444"/>' % (ml, yy, ml + 4, yy))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (ml + pw // 2, height - 12, _esc(xlabel)))
    out.append('<text x="16" y="%d" text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>'
               % (mt + ph // 2, mt + ph // 2, _esc(ylabel)))
    ly = mt + 10
    for name, color, ps in series:
        ps = sorted((x, y) for x, y in ps if x and y and x > 0 and y > 0)
        if not ps:
            continue
        dash = ' stroke-dasharray="6 4"' if name in DASHED else ""
        if len(ps) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-opacity="0.8"%s points="%s"/>'
                       % (color, dash, " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in ps)))
        for x, y in ps:
            out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %s, %s</title></circle>'
                       % (sx(x), sy(y), color, _esc(name), _esc(xfmt(x)), _esc(yfmt(y))))
        lx = ml + pw + 15
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (lx, ly, lx + 20, ly, color, dash))
        out.append('<circle cx="%d" cy="%d" r="3.5" fill="%s"/>' % (lx + 10, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 26, ly + 4, _esc(name)))
        ly += 20
    out.append("</svg>")
    return "\n".join(out)


def _fmt_size_tick(x):
    return fmt_bytes(x).replace(".0 ", " ")


def _fmt_mbs_tick(y):
    return ("%g" % y)


# ---------------------------------------------------------------------------
# studies


def compare(runner, payloads, decoders, rounds):
    """Main comparison: rounds x decoders taking turns per payload."""
    results = []
    for cls, path in payloads:
        nbytes = os.path.getsize(path)
        info("%s (%s, %s): %d rounds x %s" % (cls, rel(path), fmt_bytes(nbytes), rounds, ",".join(decoders)))
        times = {d: [] for d in decoders}
        peaks = []
        errors = {}
        enc_decode = [None] * rounds  # the decodes `bench --encode` timed beside its encodes
        for r in range(rounds):
            for d in decoders:
                if d in errors:
                    times[d].append(None)
                    continue
                res, err = runner.run(d, path)
                if err:
                    errors[d] = err
                    warn("%s: %s failed: %s" % (cls, d, err))
                    times[d].append(None)
                    continue
                times[d].append(float(res["median_ns"]))
                if d == "encode" and res.get("decode_median_ns"):
                    enc_decode[r] = float(res["decode_median_ns"])
                if d == "rscflight" and res.get("peak_bytes") is not None:
                    peaks.append(res["peak_bytes"])
        row = {"class": cls, "file": rel(path), "bytes": nbytes, "rounds": rounds, "times": times, "errors": errors}
        row["median_ns"] = {d: median(ts) for d, ts in times.items()}
        row["mb_per_s"] = {d: (mbps(nbytes, ns) if ns else None) for d, ns in row["median_ns"].items()}
        rsc = times.get("rscflight", [])
        row["ratios"] = {
            "vs_19.3.1": ratio_median(times.get("19.3.1", []), rsc),
            "new_vs_19.3.1": ratio_median(times.get("19.3.1", []), times.get("rscflight-new", [])),
            "borrow_vs_19.3.1": ratio_median(times.get("19.3.1", []), times.get("rscflight-borrow", [])),
            "borrow_vs_19.2.9": ratio_median(times.get("19.2.9", []), times.get("rscflight-borrow", [])),
            "borrow_of_floor": ratio_median(times.get("parse-only", []), times.get("rscflight-borrow", [])),
            "vs_19.2.9": ratio_median(times.get("19.2.9", []), rsc),
            "vs_jsonparse": ratio_median(times.get("jsonparse", []), rsc),
            # rscflight throughput / simdjson floor throughput
            "of_floor": ratio_median(times.get("parse-only", []), rsc),
            # ... and against the floor plus one pass reading every value
            # (what a decoder that built nothing for plain JSON would pay)
            "of_walk": ratio_median(times.get("parse-walk", []), rsc),
            "walk_of_parse": ratio_median(times.get("parse-only", []), times.get("parse-walk", [])),
            # React 19.3.1 (parse, then walk) against 19.2.9 (JSON.parse reviver)
            "19.3.1_vs_19.2.9": ratio_median(times.get("19.2.9", []), times.get("19.3.1", [])),
            # encode time / decode time of the same bytes, in the same process
            "encode_vs_decode": ratio_median(times.get("encode", []), enc_decode),
            # React's server time / encode time (speedup of the encoder)
            "encode_vs_react_server": ratio_median(times.get("react-server", []), times.get("encode", [])),
        }
        row["peak_bytes"] = median(peaks)
        row["peak_per_byte"] = row["peak_bytes"] / nbytes if row["peak_bytes"] and nbytes else None
        results.append(row)
    return results


def compare_tables(results):
    head = ["class", "bytes", "rscflight", "MB/s", "React 19.3.1", "MB/s", "React 19.2.9", "MB/s",
            "JSON.parse", "MB/s", "simdjson MB/s", "vs 19.3.1", "vs 19.2.9", "vs JSON.parse", "of floor",
            "19.3.1 vs 19.2.9", "new decoder", "new vs 19.3.1",
            "borrowed", "borrowed vs 19.3.1", "borrowed vs 19.2.9", "borrowed of floor",
            "of floor + walk", "walk of floor", "peak / input",
            "encode", "encode vs decode", "React server", "encode vs React server"]
    rows = []
    for r in results:
        t, m, q = r["median_ns"], r["mb_per_s"], r["ratios"]
        rows.append([
            r["class"], str(r["bytes"]),
            fmt_ns(t.get("rscflight")), fmt_num(m.get("rscflight")),
            fmt_ns(t.get("19.3.1")), fmt_num(m.get("19.3.1")),
            fmt_ns(t.get("19.2.9")), fmt_num(m.get("19.2.9")),
            fmt_ns(t.get("jsonparse")), fmt_num(m.get("jsonparse")),
            fmt_num(m.get("parse-only")),
            fmt_ratio(q["vs_19.3.1"]), fmt_ratio(q["vs_19.2.9"]), fmt_ratio(q["vs_jsonparse"]),
            fmt_pct(q["of_floor"]), fmt_ratio(q["19.3.1_vs_19.2.9"]),
            fmt_ns(t.get("rscflight-new")), fmt_ratio(q["new_vs_19.3.1"]),
            fmt_ns(t.get("rscflight-borrow")), fmt_ratio(q["borrow_vs_19.3.1"]),
            fmt_ratio(q["borrow_vs_19.2.9"]), fmt_pct(q["borrow_of_floor"]),
            fmt_pct(q["of_walk"]), fmt_pct(q["walk_of_parse"]),
            fmt_ratio(r["peak_per_byte"]),
            fmt_ns(t.get("encode")), fmt_ratio(q["encode_vs_decode"]),
            fmt_ns(t.get("react-server")), fmt_ratio(q["encode_vs_react_server"]),
        ])
    return head, rows


def throughput_svg(results, decoders):
    series = []
    for d in decoders:
        ps = [(r["bytes"], r["mb_per_s"].get(d)) for r in results if r["mb_per_s"].get(d)]
        series.append((LABEL[d], COLORS[d], ps))
    return svg_loglog(series, "Flight decode throughput vs payload size", "payload size (bytes, log)",
                      "throughput (MB/s, log)", _fmt_size_tick, _fmt_mbs_tick)


def sweep(runner, payloads, rounds, with_js):
    decs = ["rscflight"] + (["19.3.1"] if with_js else [])
    out = []
    for cls, path in payloads:
        nbytes = os.path.getsize(path)
        info("sweep %s (%s)" % (cls, fmt_bytes(nbytes)))
        for d in decs:
            series = {0: []}
            for c in SWEEP_CHUNKS:
                series[c] = []
            err = None
            for _ in range(rounds):
                if d == "rscflight":
                    # every piece size in one process, in turns
                    res, err = runner.run_configs(path, chunk_sizes=[0] + SWEEP_CHUNKS)
                    if err:
                        break
                    for c in [0] + SWEEP_CHUNKS:
                        series[c].append(float(res[(c, 1)]["median_ns"]))
                    continue
                for c in [0] + SWEEP_CHUNKS:
                    res, e = runner.run(d, path, chunk_size=c or None)
                    if e:
                        err = e
                        break
                    series[c].append(float(res["median_ns"]))
                if err:
                    break
            if err:
                warn("sweep %s %s: %s" % (cls, d, err))
                out.append({"class": cls, "bytes": nbytes, "decoder": d, "error": err})
                continue
            out.append({
                "class": cls, "bytes": nbytes, "decoder": d,
                "whole_ns": median(series[0]),
                "chunk_ns": {c: median(series[c]) for c in SWEEP_CHUNKS},
                "ratio_to_whole": {c: ratio_median(series[c], series[0]) for c in SWEEP_CHUNKS},
            })
    head = ["class", "bytes", "decoder", "whole"] + ["%d B" % c for c in SWEEP_CHUNKS] + \
        ["ratio %d" % c for c in SWEEP_CHUNKS]
    rows = []
    for r in out:
        if "error" in r:
            rows.append([r["class"], str(r["bytes"]), LABEL[r["decoder"]], "error"] + [""] * (2 * len(SWEEP_CHUNKS)))
            continue
        rows.append([r["class"], str(r["bytes"]), LABEL[r["decoder"]], fmt_ns(r["whole_ns"])]
                    + [fmt_ns(r["chunk_ns"][c]) for c in SWEEP_CHUNKS]
                    + [fmt_ratio(r["ratio_to_whole"][c]) for c in SWEEP_CHUNKS])
    note = ("Time to decode the payload fed in chunks of N bytes, against feeding it whole; "
            "'ratio N' = time(N) / time(whole), median of per-round ratios. rscflight times every "
            "piece size in one process per round, in turns of about 2 ms (`--chunk-size "
            "0,1,64,4096,65536`), so that a ratio is not the difference between two processes: on "
            "this kind of VM one process can run at half the speed of the next for seconds at a time.")
    return out, head, rows, note


TINY_PAYLOAD = os.path.join(ROOT, "fixtures", "react", "19.3.1", "prod", "tiny-37b.rsc")


def memory(runner, payloads, rounds):
    # rss_growth_bytes: what the CLI's first decode added to its resident
    # set (VmHWM after it, from VmRSS before; Linux), as the kernel counts
    # it. Less the same on a 37-byte payload (library code and data paged
    # in on first use), it includes what the allocator hooks cannot see:
    # simdjson's parser buffers (its tape and structural indexes, C++ new)
    # and libc's own overhead, but only pages touched.
    def measure(path):
        peaks, growths = [], []
        for _ in range(rounds):
            res, err = runner.run("rscflight", path, min_time=runner.args.memory_min_time)
            if err:
                return None, None, err
            if res.get("peak_bytes") is None:
                return None, None, "no peak_bytes in the CLI's output"
            peaks.append(float(res["peak_bytes"]))
            if res.get("rss_growth_bytes", -1) >= 0:
                growths.append(float(res["rss_growth_bytes"]))
        return median(peaks), (median(growths) if growths else None), None
    base = measure(TINY_PAYLOAD)[1] if os.path.isfile(TINY_PAYLOAD) else None
    out = []
    for cls, path in payloads:
        nbytes = os.path.getsize(path)
        pk, g, err = measure(path)
        if err:
            warn("memory %s: %s" % (cls, err))
            out.append({"class": cls, "bytes": nbytes, "error": err})
            continue
        growth = g - base if g is not None and base is not None else None
        out.append({"class": cls, "bytes": nbytes, "peak_bytes": pk, "peak_over_input": pk / nbytes if nbytes else None,
                    "rss_growth_bytes": growth,
                    "rss_growth_over_input": growth / nbytes if growth is not None and nbytes else None})
    head = ["class", "bytes", "peak", "peak / input", "RSS growth", "RSS growth / input"]
    rows = []
    for r in out:
        if "error" in r:
            rows.append([r["class"], str(r["bytes"]), "error: " + r["error"], "", "", ""])
            continue
        g = r["rss_growth_bytes"]
        rows.append([r["class"], str(r["bytes"]), fmt_bytes(r["peak_bytes"]), fmt_num(r["peak_over_input"]),
                     "n/a" if g is None else ("-" if g < 0 else "") + fmt_bytes(abs(g)),
                     "n/a" if g is None else fmt_num(r["rss_growth_over_input"])])
    note = ("peak_bytes as reported by `rscflight bench` (median over rounds), against the input size: "
            "every byte the decoder takes through its allocator hooks, counted at its most. "
            "'RSS growth' is the kernel's count: what the CLI's first decode adds to its resident set "
            "(VmHWM after it, less VmRSS before; `rss_growth_bytes`), less the same on the 37-byte payload "
            "(%s: library code and data paged in on first use). It includes what the hooks cannot see, "
            "simdjson's parser buffers (tape and structural indexes, C++ new) and libc's overhead, but "
            "only pages touched, and it is page-grained: read it for payloads of 100 KB up."
            % ("n/a" if base is None else fmt_bytes(base)))
    return out, head, rows, note


def scaling(runner, rounds, max_size, js_max, decoders):
    # Every size in every round (1 KB ... 100 MB, then again), the C
    # decoders' sizes in one process timed in turns: the per-byte ratio of
    # two sizes is then a median of ratios measured side by side, not of
    # processes run minutes apart, while this kind of VM changes speed by
    # up to 1.5x between processes (per-round ratios of 0.68-1.79x with a
    # process per size and round).
    sizes = [s for s in SCALING_SIZES if s <= max_size]
    entries = []
    for size in sizes:
        path = synthetic_payload(size)
        nbytes = os.path.getsize(path)
        decs = [d for d in decoders if d in C_DECODERS or nbytes <= js_max]
        entries.append({"size": size, "file": path, "bytes": nbytes, "decs": decs,
                        "times": {d: [None] * rounds for d in decs}, "errors": {}})
    for rnd in range(rounds):
        info("scaling round %d/%d" % (rnd + 1, rounds))
        # The C decoders: every size in one process, in turns.
        for d in decoders:
            if d not in C_DECODERS:
                continue
            res, err = runner.run_in_turns(d, [e["file"] for e in entries])
            for e in entries:
                if err:
                    e["errors"][d] = err
                elif d not in e["errors"]:
                    e["times"][d][rnd] = float(res[e["file"]]["median_ns"])
            if err:
                warn("scaling %s: %s" % (d, err))
        # The JS decoders: a process per size.
        for e in entries:
            for d in e["decs"]:
                if d in C_DECODERS or d in e["errors"]:
                    continue
                res, err = runner.run(d, e["file"])
                if err:
                    e["errors"][d] = err
                    warn("scaling %s %s: %s" % (fmt_bytes(e["bytes"]), d, err))
                    continue
                e["times"][d][rnd] = float(res["median_ns"])
    ref = next((e for e in entries if e["size"] == 10**6), None)
    out = []
    for e in entries:
        nbytes = e["bytes"]
        med = {d: median([t for t in ts if t is not None]) for d, ts in e["times"].items()}
        # ns per byte against 1 MB's, round by round (C decoders, which run
        # every size), and the median of those ratios
        rel, spread = {}, {}
        if ref is not None:
            for d in e["decs"]:
                if d in C_DECODERS and d in ref["times"]:
                    rs = per_byte_ratios(e["times"][d], nbytes, ref["times"][d], ref["bytes"])
                    if rs:
                        rel[d] = statistics.median(rs)
                        spread[d] = (min(rs), max(rs))
        out.append({"size": e["size"], "file": e["file"], "bytes": nbytes, "median_ns": med,
                    "ns_per_byte": {d: (t / nbytes if t else None) for d, t in med.items()},
                    "mb_per_s": {d: mbps(nbytes, t) for d, t in med.items()},
                    "vs_1mb": rel, "vs_1mb_range": spread, "errors": e["errors"]})
    cdecs = [d for d in decoders if d in C_DECODERS]
    head = (["size", "bytes"] + ["%s ns/B" % LABEL[d] for d in decoders]
            + ["%s ns/B vs 1 MB" % LABEL[d] for d in cdecs] + ["%s MB/s" % LABEL[d] for d in decoders])
    rows = []
    for r in out:
        rows.append([fmt_bytes(r["size"]), str(r["bytes"])]
                    + [fmt_num(r["ns_per_byte"].get(d)) for d in decoders]
                    + [("%.2fx (%.2f-%.2f)" % ((r["vs_1mb"][d],) + r["vs_1mb_range"][d]))
                       if r["vs_1mb"].get(d) else "n/a" for d in cdecs]
                    + [fmt_num(r["mb_per_s"].get(d)) for d in decoders])
    # flatness: spread of ns/byte over sizes >= 100 KB (smaller ones carry fixed costs)
    flat = {}
    for d in decoders:
        v = [r["ns_per_byte"].get(d) for r in out if r["size"] >= 10**5 and r["ns_per_byte"].get(d)]
        if len(v) >= 2:
            flat[d] = max(v) / min(v)
    note = ("Synthetic PROD-shaped payloads (bench/python/synth.py: a list of cards with elements, client "
            "references, T rows, Maps, Sets, dates, bigints, promises, path references). "
            "JS decoders run up to %s. Flatness = max/min ns per byte over sizes >= 100 KB: %s. "
            "Each round runs every size: the C decoders all sizes in one process, timed in turns "
            "(`rscflight bench --files-in-turns`), the JS ones a process per size; 'ns/B vs 1 MB' is the median over rounds "
            "of a size's ns per byte over 1 MB's in the same round, with the least and the most of those "
            "ratios in brackets (the target: 100 MB within 1.2x%s)."
            % (fmt_bytes(js_max), ", ".join("%s %.2f" % (LABEL[d], f) for d, f in flat.items()) or "n/a",
               "".join("; %s %.2fx" % (LABEL[d], r["vs_1mb"][d]) for r in out if r["size"] == 10**8
                       for d in cdecs if r["vs_1mb"].get(d))))
    svg = svg_loglog([(LABEL[d], COLORS[d], [(r["bytes"], r["mb_per_s"].get(d)) for r in out]) for d in decoders],
                     "Throughput vs size (synthetic payloads)", "payload size (bytes, log)",
                     "throughput (MB/s, log)", _fmt_size_tick, _fmt_mbs_tick)
    return out, head, rows, note, flat, svg


def threads(runner, payloads, rounds, nthreads):
    out = []
    for cls, path in payloads:
        nbytes = os.path.getsize(path)
        t1, tn, f1, fn, err = [], [], [], [], None
        for _ in range(rounds):
            # one thread and N threads in one process, in turns; then the
            # same for the bare simdjson parse, the machine's own scaling on
            # this payload (the control)
            res, err = runner.run_configs(path, threads=[1, nthreads])
            if err:
                break
            floor, err = runner.run_configs(path, threads=[1, nthreads], parse_only=True)
            if err:
                break
            t1.append(float(res[(0, 1)]["median_ns"]))
            tn.append(float(res[(0, nthreads)]["median_ns"]))
            f1.append(float(floor[(0, 1)]["median_ns"]))
            fn.append(float(floor[(0, nthreads)]["median_ns"]))
        if err:
            warn("threads %s: %s" % (cls, err))
            out.append({"class": cls, "bytes": nbytes, "error": err})
            continue
        # speedup = aggregate throughput with N threads / one thread = N * t1 / tN, per round
        sp = ratio_median([nthreads * x for x in t1], tn)
        fsp = ratio_median([nthreads * x for x in f1], fn)
        out.append({"class": cls, "bytes": nbytes, "one_ns": median(t1), "batch_ns": median(tn), "speedup": sp,
                    "floor_speedup": fsp})
    head = ["class", "bytes", "1 thread", "%d threads (batch)" % nthreads, "speedup", "efficiency",
            "simdjson floor's speedup"]
    rows = []
    for r in out:
        if "error" in r:
            rows.append([r["class"], str(r["bytes"]), "error: " + r["error"], "", "", "", ""])
            continue
        rows.append([r["class"], str(r["bytes"]), fmt_ns(r["one_ns"]), fmt_ns(r["batch_ns"]),
                     fmt_ratio(r["speedup"]), fmt_pct(r["speedup"] / nthreads if r["speedup"] else None),
                     fmt_ratio(r["floor_speedup"])])
    note = ("%d decoders on %d threads against one decoder, each thread reusing its decoder (--reuse). "
            "The threads start and end each batch together (barriers); a batch holds as many decodes per "
            "thread as take about 2 ms, and '%d threads' is the batch's wall time per decode round. "
            "One process per round times both, in turns (`--threads 1,%d`). "
            "speedup = %d x time(1) / time(batch), median of per-round values (ideal: %d.00x; the machine has "
            "%s cores). The last column is the same measurement of the bare simdjson parse of the rows "
            "(`--parse-only`), which shares nothing between threads: what the machine itself gives two "
            "threads on that payload."
            % (nthreads, nthreads, nthreads, nthreads, nthreads, nthreads, os.cpu_count()))
    return out, head, rows, note


# ---------------------------------------------------------------------------
# reports


def write_report(path, title, env, command, sections):
    lines = ["# %s" % title, "",
             "Generated %s by `%s`." % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), command), ""]
    lines += ["## Machine and versions", ""]
    for k, v in env.items():
        lines.append("- %s: %s" % (k, v))
    lines.append("")
    for heading, body in sections:
        lines += ["## %s" % heading, "", body, ""]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    info("wrote %s" % path)


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    info("wrote %s" % path)


MODES = {
    "compare": "rscflight against React's Flight clients and the JSON.parse and simdjson floors, "
               "decoders in turns on each payload (latest.md, latest.json, throughput.svg)",
    "sweep": "rscflight fed in chunks of 1, 64, 4096 and 65536 bytes against the whole payload (sweep.md)",
    "memory": "rscflight's peak_bytes and RSS growth against input size (memory.md)",
    "scaling": "synthetic payloads from 1 KB to 100 MB: ns per byte against 1 MB's (scaling.md, scaling.svg)",
    "threads": "N decoders on N threads against one (threads.md)",
}
# The driver's flags before it had subcommands; each names what replaces it.
OLD_FLAGS = {"--sweep": "bench/run sweep", "--memory": "bench/run memory", "--scaling": "bench/run scaling",
             "--threads": "bench/run threads", "--all": "one bench/run SUBCOMMAND per study",
             "--no-compare": "bench/run SUBCOMMAND"}
# Options some modes do not take, as the code that reads them expects them.
DEFAULTS = {"payloads": os.path.join(HERE, "payloads.txt"), "files": None, "js_warmup": 0.2,
            "memory_min_time": 0.05, "memory_synthetic": False, "sweep_js": False,
            "scaling_max": "100M", "scaling_js_max": "10M", "nthreads": 2, "decoders": None}


def build_parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--rounds", type=int, default=7, help="rounds per payload (default 7)")
    common.add_argument("--min-time", type=float, default=0.2,
                        help="--min-time of each invocation, seconds (default 0.2)")
    common.add_argument("--cli", default=os.path.join(ROOT, "build-release", "rscflight"),
                        help="rscflight CLI (default build-release/rscflight)")
    common.add_argument("--node", default="node")
    common.add_argument("--timeout", type=float, default=900, help="per invocation, seconds")
    common.add_argument("--out-dir", default=os.path.join(HERE, "results"),
                        help="where the report goes (default bench/results)")
    payl = argparse.ArgumentParser(add_help=False)
    payl.add_argument("--payloads", default=DEFAULTS["payloads"],
                      help="payload list, 'class<TAB>path' per line (default bench/payloads.txt)")
    payl.add_argument("--files", nargs="+", metavar="FILE", help="payload files (instead of --payloads)")
    decs = argparse.ArgumentParser(add_help=False)
    decs.add_argument("--decoders", default=",".join(DECODERS),
                      help="comma list from %s (default: all)" % ",".join(DECODERS))
    js = argparse.ArgumentParser(add_help=False)
    js.add_argument("--js-warmup", type=float, default=0.2, help="untimed JS warmup per invocation, seconds")

    ap = argparse.ArgumentParser(prog="bench/run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", metavar="SUBCOMMAND")

    def mode(name, parents):
        return sub.add_parser(name, parents=parents, help=MODES[name], description=MODES[name] + ".")

    mode("compare", [payl, common, decs, js])
    p = mode("sweep", [payl, common, js])
    p.add_argument("--sweep-js", action="store_true", help="include React 19.3.1 in the sweep")
    p = mode("memory", [payl, common])
    p.add_argument("--memory-min-time", type=float, default=DEFAULTS["memory_min_time"],
                   help="--min-time of each invocation here, seconds (default 0.05)")
    p.add_argument("--memory-synthetic", action="store_true",
                   help="also measure synthetic payloads of 1 KB .. --scaling-max")
    p.add_argument("--scaling-max", default="100M", help="largest synthetic size (default 100M)")
    p = mode("scaling", [common, decs, js])
    p.add_argument("--scaling-max", default="100M", help="largest synthetic size (default 100M)")
    p.add_argument("--scaling-js-max", default="10M",
                   help="largest synthetic size the JS decoders run (default 10M)")
    p = mode("threads", [payl, common])
    p.add_argument("--nthreads", type=int, default=2, help="threads (default 2)")
    return ap


def parse_args(argv):
    """(namespace, argv with its subcommand): no subcommand means compare."""
    argv = list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["compare"] + argv
    ap = build_parser()
    for x in argv:
        if x.split("=", 1)[0] in OLD_FLAGS:
            ap.error("%s is gone: use %s" % (x, OLD_FLAGS[x.split("=", 1)[0]]))
    a = ap.parse_args(argv)
    for k, v in DEFAULTS.items():
        if not hasattr(a, k):
            setattr(a, k, v)
    if a.decoders is None:
        a.decoders = "rscflight,19.3.1" if a.sweep_js else "rscflight"
    return a, argv


def main(argv=None):
    a, argv = parse_args(sys.argv[1:] if argv is None else argv)

    import synth
    scaling_max = synth.parse_size(a.scaling_max)
    js_max = synth.parse_size(a.scaling_js_max)
    launcher = os.environ.get("RSCFLIGHT_BENCH_LAUNCHER", "/usr/bin/python3 bench/driver.py")
    command = launcher + " " + " ".join(shlex.quote(rel_arg(x)) for x in argv)

    decoders = [d.strip() for d in a.decoders.split(",") if d.strip()]
    for d in decoders:
        if d not in DECODERS:
            build_parser().error("unknown decoder %s" % d)
    if a.mode != "compare":
        decoders = [d for d in decoders if d not in WRITERS]
    runner = Runner(a)
    if "encode" in decoders and not runner.have_cli():
        decoders = [d for d in decoders if d != "encode"]
    if "react-server" in decoders and not runner.have_js():
        decoders = [d for d in decoders if d != "react-server"]
    if any(d in C_DECODERS for d in decoders) and not runner.have_cli():
        warn("rscflight CLI %s not found: C decoders skipped" % a.cli)
        decoders = [d for d in decoders if d not in C_DECODERS]
    if any(d in JS_DECODERS for d in decoders) and not runner.have_js():
        warn("bench/js/node_modules or node missing (run `npm ci` in bench/js): JS decoders skipped")
        decoders = [d for d in decoders if d not in JS_DECODERS]
    if not decoders:
        warn("no decoder to run")
        return 1
    have_c = "rscflight" in decoders
    if a.mode in ("sweep", "memory", "threads") and not have_c:
        warn("%s needs the rscflight CLI" % a.mode)
        return 1

    payloads = []
    if a.mode != "scaling":
        payloads = files_as_payloads(a.files) if a.files else read_payload_list(a.payloads)
        if not payloads:
            warn("no payloads (fill bench/payloads.txt or pass --files)")
            if not (a.mode == "memory" and a.memory_synthetic):
                return 1

    env = environment(runner)
    os.makedirs(a.out_dir, exist_ok=True)

    if a.mode == "compare":
        results = compare(runner, payloads, decoders, a.rounds)
        head, rows = compare_tables(results)
        print(text_table(head, rows), flush=True)
        errs = ["- %s, %s: %s" % (r["class"], LABEL[d], e) for r in results for d, e in r["errors"].items()]
        notes = (
            "Times are medians over %d rounds; in each round every decoder runs once per payload, in turn "
            "(%s), as a fresh process measuring for --min-time %gs and reporting its median. "
            "MB/s = bytes / time, MB = 10^6 bytes. Ratios are medians of per-round ratios: "
            "'vs X' = time(X) / time(rscflight) (speedup of rscflight), "
            "'of floor' = rscflight throughput / simdjson DOM parse of the same JSON rows (rscflight --parse-only); "
            "'of floor + walk' = rscflight throughput / that parse followed by one pass over simdjson's tape "
            "reading every value and each string's first byte (rscflight --parse-walk: what a decoder that "
            "built nothing for plain JSON would still pay), 'walk of floor' = floor time / floor + walk time; "
            "'peak / input' = rscflight's peak bytes (allocator hooks) / payload bytes; "
            "'encode' = rsc_encode writing the payload back from a decoder that kept its rows "
            "(rscflight bench --encode), 'encode vs decode' = encode time / the time of a decode of the same "
            "bytes in the same process, in turns; 'React server' = React 19.3.1's renderToPipeableStream "
            "serializing the payload's model (host elements, client references, JSON values; "
            "bench/js/serverbench.js), 'encode vs React server' = its time / encode time; "
            "'19.3.1 vs 19.2.9' = time(19.2.9) / time(19.3.1). "
            "rscflight and the simdjson floor reuse one decoder per process (rsc_decoder_reset between "
            "decodes: its memory stays mapped, as V8's heap stays warm for the JS clients); "
            "'new decoder' times rsc_decoder_new and rsc_decoder_free around each decode, as a host making a "
            "decoder per response does (rsc_decoder_free keeps one decoder for the next rsc_decoder_new, with at "
            "most 16 MiB of its arena blocks; past that, fresh memory and its page faults); "
            "'borrowed' reuses one decoder with RSC_OPT_BORROW_INPUT (--borrow-input: text and binary rows "
            "point into the input instead of being copied; the caller keeps the input alive). "
            "React clients: production builds (NODE_ENV=production), createFromNodeStream over the whole buffer, "
            "then every chunk reachable from the root awaited (bench/js/walk.js). "
            "JSON.parse floor: rows framed and each JSON body JSON.parse'd (bench/js/flightframe.js)."
            % (a.rounds, ", ".join(LABEL[d] for d in decoders), a.min_time))
        sections = [("Results", md_table(head, rows)), ("How", notes)]
        if errs:
            sections.append(("Failures", "\n".join(errs)))
        sections.append(("Plot", "![throughput](throughput.svg)"))
        sections.append(("Invocations (first few)", "```\n" + "\n".join(runner.commands[:12]) + "\n```"))
        write_report(os.path.join(a.out_dir, "latest.md"), "rscflight benchmark", env, command, sections)
        write_file(os.path.join(a.out_dir, "throughput.svg"), throughput_svg(results, decoders))
        write_file(os.path.join(a.out_dir, "latest.json"),
                   json.dumps({"env": env, "command": command, "results": results}, indent=1) + "\n")

    if a.mode == "sweep":
        data, head, rows, note = sweep(runner, payloads, a.rounds, "19.3.1" in decoders)
        print("\nChunk-size sweep\n" + text_table(head, rows), flush=True)
        write_report(os.path.join(a.out_dir, "sweep.md"), "rscflight chunk-size sweep", env, command,
                     [("Results", md_table(head, rows)), ("How", note)])

    if a.mode == "memory":
        mp = list(payloads)
        if a.memory_synthetic:
            mp += [("synthetic " + fmt_bytes(s), synthetic_payload(s)) for s in SCALING_SIZES if s <= scaling_max]
        data, head, rows, note = memory(runner, mp, max(1, min(a.rounds, 3)))
        print("\nPeak memory\n" + text_table(head, rows), flush=True)
        write_report(os.path.join(a.out_dir, "memory.md"), "rscflight peak memory", env, command,
                     [("Results", md_table(head, rows)), ("How", note)])

    if a.mode == "scaling":
        data, head, rows, note, flat, svg = scaling(runner, a.rounds, scaling_max, js_max, decoders)
        print("\nScaling\n" + text_table(head, rows) + "\n" + note, flush=True)
        write_report(os.path.join(a.out_dir, "scaling.md"), "rscflight scaling with payload size", env, command,
                     [("Results", md_table(head, rows)), ("How", note), ("Plot", "![scaling](scaling.svg)")])
        write_file(os.path.join(a.out_dir, "scaling.svg"), svg)

    if a.mode == "threads":
        data, head, rows, note = threads(runner, payloads, a.rounds, a.nthreads)
        print("\nThreads\n" + text_table(head, rows) + "\n" + note, flush=True)
        write_report(os.path.join(a.out_dir, "threads.md"), "rscflight with %d threads" % a.nthreads, env,
                     command, [("Results", md_table(head, rows)), ("How", note)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
