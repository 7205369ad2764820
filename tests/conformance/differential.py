#!/usr/bin/env python3
"""Differential check: rscflight against React's own client, payload by payload.

    PYTHONPATH=build/python /usr/bin/python3 tests/conformance/differential.py \\
        [--corpus fuzz/replay.tar.xz] [--known tests/conformance/differential-known.txt] \\
        [--permute K] [--generate N] [--seed S] [--report OUT.json] [--write-known] [--show N] \\
        [--dev] [--bundler turbopack|parcel|rspack] [FILE...]

Each payload is decoded twice: by React 19.3.1's client in Node 20 (the
oracle of fixtures/gen, which writes the canonical dump of what the client
decoded) and by rscflight through its Python binding (`canonical_dump`,
byte for byte the CLI's dump). The two dumps are compared as
docs/spec/CANONICAL-DUMP.md section 0 says (parsed JSON, members unordered,
numbers as doubles).

Payloads: FILE arguments (raw payload bytes), with --permute K each fixture
of React 19.3.1's server with its rows shuffled K times (a server streaming
the same rows in another order), with --generate N random well-formed
payloads using every "$" form and row kind (tests/conformance/flightgen.py; a third of
them cut short at a row boundary and decoded as partial streams), and with
--corpus the inputs
of the fuzz harnesses kept in fuzz/replay.tar.xz (decode/ and walk/), whose
first 4 bytes are the harness's options (fuzz/fuzz_common.h): their DEV and
ALLOW_PARTIAL bits pick the oracle's build and React's partial-stream
option; the other bits (limits, failing allocator, lazy root, temporary
references) are the harness's and are ignored. rscflight decodes with
RSC_OPT_LENIENT_IDS, React's own row-id parsing (without it, garbage ids
are an error, by design), RSC_OPT_DROP_BOM (19.3.1's TextDecoder drops a
row's leading U+FEFF; rscflight keeps it by default, as React's fix does)
and RSC_OPT_LENIENT_VALUES (React's values for what no server writes: a
row that is a reference to itself, a circle of such rows, a typed array
of a partial element, an I row that is no array or object). Each payload
is also decoded without the last flag: where that refuses it
(RSC_ERR_BAD_VALUE) and the lenient tree is React's, the outcome is
rsc-refused.

Outcomes:
  same          both decoded the same tree
  differ        both decoded, the trees differ (the first difference is shown)
  react-chunking  they differ fed whole, and agree when React is fed one byte
                (or else one row) per network chunk (fed a row per chunk,
                what React throws from its own code on a row loses that row
                only, and is not counted): React's client reads the stream differently
                depending on where the network cuts it (a typed array row for
                a byte stream detaches the buffer it was read from, losing the
                rest of that network chunk); rscflight does not
  react-quirk   they differ where a text or binary row answers a reference
                made before it (React's client replaces the waiting chunk and
                whatever waited waits forever, rscflight resolves it:
                docs/spec/FLIGHT-PROTOCOL.md 3.5), or where React's
                development client throws from its own code on debug data of the wrong shape (a
                stack that is no array, a frame whose file is no string,
                which rscflight does not read) or on props it froze, or
                where a development payload's D rows (debug info, which
                rscflight does not read) change React's tree: they differ
                and agree once React is given the payload without them (a
                D row whose JSON does not parse rejects its chunk if still
                pending; React then throws when the chunk's row comes):
                deliberate differences
  rsc-refused   rscflight refuses by default a value no server writes
                (RSC_ERR_BAD_VALUE, docs/conformance.md "Values no server
                writes"), and with RSC_OPT_LENIENT_VALUES decodes React's
                tree: an intended difference, each listed with its error
                (up to --show of them printed, all in --report)
  rsc-error     rscflight stopped with an error where React decoded: its
                deliberate strictness (a second row for a non-stream chunk,
                a development row in a production decoder, limits)
  react-failed  not comparable: React threw outside the stream (its own
                crash: "This is a bug in React" and the like; also where it
                throws so only when fed a row per network chunk, whole it
                having lost the rest of a chunk before the row), never
                settled the root (a forward reference answered by a text or
                binary row, docs/spec/FLIGHT-PROTOCOL.md 3.5), hung, ran
                longer than --react-timeout seconds on the payload (default 20: its
                worker is killed and started again after it), or decoded a
                value the oracle's dumper cannot express or walk (too deep)

--known names the payloads whose difference is known and explained (one per
line: the payload's SHA-1, then its reason); the exit status is 1 when a
payload differs that is not in it, or when a known one no longer differs
(so the list stays exact). --write-known rewrites the list from this run,
keeping the reasons already given. --bundler B decodes with that bundler's
own client (react-server-dom-B, the oracle's RSC_ORACLE_BUNDLER) and
rscflight's bundler=B, and --permute then shuffles the fixtures of
fixtures/bundlers/B instead (--generate writes webpack's I rows: not with
--bundler). Needs Node 20 (React's client runs
there; other Node versions word JSON.parse's errors differently) and
fixtures/gen's node_modules (`npm ci` in fixtures/gen).
"""

import argparse
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(ROOT, "fixtures", "gen", "lib", "decode-worker.js")

import rscflight  # noqa: E402  (PYTHONPATH=build/python)

sys.path.insert(0, os.path.join(ROOT, "bench", "python"))
import baseline  # noqa: E402  (its row framer)

FLAG_DEV, FLAG_PARTIAL = 1, 2


def corpus_inputs(path):
    """(name, payload, dev, partial) for every decode/ and walk/ input."""
    out = []
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if not m.isfile() or len(parts) < 2 or parts[-2] not in ("decode", "walk"):
                continue
            data = tar.extractfile(m).read()
            if len(data) < 4:
                continue
            flags = data[0]
            out.append((parts[-1], data[4:], bool(flags & FLAG_DEV), bool(flags & FLAG_PARTIAL)))
    return out


def without_debug_rows(data):
    """The payload without its D rows, and its outlined errors without their
    cause (None if it has neither)."""
    rows = raw_rows(data)
    covered = sum(len(r) for r in rows)
    kept = [uncaused(r) for r in rows if not debug_row(r)]
    if kept == rows:
        return None
    return b"".join(kept) + data[covered:]


def uncaused(row):
    """A model row holding an error's info ({name, message, stack, ...}, what
    "$Z" outlines) without its cause and errors: React's development client
    revives them a second time (resolveErrorDev on the revived row), so a
    string that starts with "$" once revived (an escaped "$$x") reads as a
    reference there, an element in them is walked again (its props are
    frozen by then), and errors become an AggregateError's, which throws
    when they name a row not there yet; rscflight revives the cause once
    and keeps no errors."""
    rid, body = split_row(row)
    if body is None or not body.startswith(b"{") or not (b'"cause"' in body or b'"errors"' in body):
        return row
    try:
        v = json.loads(body.decode("utf-8"))
    except ValueError:
        return row
    if not (isinstance(v, dict) and ("cause" in v or "errors" in v) and "message" in v and "stack" in v):
        return row
    v.pop("cause", None)
    v.pop("errors", None)
    return rid + b":" + json.dumps(v).encode() + (b"\n" if row.endswith(b"\n") else b"")


def split_row(row):
    """A raw row's id bytes and what follows its colon (tag and body), or
    (None, None) when it has no colon."""
    colon = row.find(b":")
    return (None, None) if colon < 0 else (row[:colon], row[colon + 1:])


def debug_row(row):
    body = split_row(row)[1]
    return body is not None and body[:1] == b"D"


def raw_rows(data):
    """The payload's rows as the byte slices they are (framed as
    bench/python/baseline.py frames them)."""
    rows, i, n = [], 0, len(data)
    while i < n:
        colon = data.find(b":", i)
        if colon < 0:
            break
        t = data[colon + 1] if colon + 1 < n else 0
        if t in baseline.LENTAGS:
            comma = data.find(b",", colon + 2)
            if comma < 0:
                break
            end = comma + 1 + int(data[colon + 2:comma] or b"0", 16)
        else:
            end = data.find(b"\n", colon + 1) + 1 or n
        rows.append(data[i:end])
        i = end
    return rows


BUNDLER = "webpack"


def fixture_folder(kind):
    if BUNDLER == "webpack":
        return os.path.join(ROOT, "fixtures", "react", "19.3.1", kind)
    base = os.path.join(ROOT, "fixtures", "bundlers", BUNDLER)
    return os.path.join(base, sorted(os.listdir(base))[-1], kind)


def permuted_fixtures(rounds, seed, max_bytes=60000):
    """Each fixture of React 19.3.1's server (fixtures/react/19.3.1, up to
    max_bytes) with its rows in `rounds` random orders: the same rows as a
    server that streams them in another order would send (a development
    stream's time-origin row stays first)."""
    import random
    rnd = random.Random(seed)
    out = []
    for kind in ("prod", "dev"):
        folder = fixture_folder(kind)
        for f in sorted(os.listdir(folder)):
            if not f.endswith(".rsc"):
                continue
            with open(os.path.join(folder, f), "rb") as fh:
                data = fh.read()
            rows = raw_rows(data)
            if len(data) > max_bytes or len(rows) < 3:
                continue
            head = 1 if kind == "dev" and rows[0].startswith(b":N") else 0
            for k in range(rounds):
                rest = rows[head:]
                rnd.shuffle(rest)
                out.append(("%s/%s#%d" % (kind, f, k), b"".join(rows[:head] + rest), kind == "dev", False))
    return out


def same_dump(a, b):
    """docs/spec/CANONICAL-DUMP.md section 0: JSON values, members unordered,
    numbers as doubles (and true is no number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) or (a != a and b != b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_dump(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_dump(a[k], b[k]) for k in a)
    return a == b


def first_difference(a, b, ptr=""):
    if same_dump(a, b):
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return ptr + "/" + k
            d = first_difference(a[k], b[k], ptr + "/" + k)
            if d is not None:
                return d
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s/%d" % (ptr, i))
            if d is not None:
                return d
    return ptr or "/"


def pointer_get(v, ptr):
    for k in ptr.split("/")[1:]:
        if isinstance(v, list):
            v = v[int(k)] if k.isdigit() and int(k) < len(v) else "<absent>"
        elif isinstance(v, dict):
            v = v.get(k, "<absent>")
        else:
            return "<absent>"
    return v


def mutated(rnd, data):
    """A well-formed payload with one small change, the kind a buggy server,
    a proxy or a cut stream makes: a row dropped, repeated or moved, a "$"
    form's letter or a reference's id changed, a byte of a row replaced, a
    row cut short. What is left is mostly well-formed, so the two decoders
    meet the same rows and differ only on how they take the change."""
    rows = raw_rows(data)
    if not rows:
        return data
    k = rnd.randrange(len(rows))
    op = rnd.randrange(7)
    if op == 0 and len(rows) > 1:
        del rows[k]
    elif op == 1:
        rows.insert(rnd.randrange(len(rows) + 1), rows[k])
    elif op == 2:
        r = rows.pop(k)
        rows.insert(rnd.randrange(len(rows) + 1), r)
    elif op in (3, 4):
        r = rows[k]
        at = [i for i in range(len(r) - 1) if r[i:i + 2] in (b'"$', b':$')]
        if at:
            i = rnd.choice(at) + 1
            if op == 3:  # another "$" form's letter
                letter = rnd.choice(b"@LQWKBnDNSIuhiZYPET$-0123456789abcdef")
                r = r[:i + 1] + bytes([letter]) + r[i + 2:]
            else:  # another id, near the old one
                r = r[:i + 1] + b"%x" % rnd.randrange(0, 24) + r[i + 2:]
            rows[k] = r
    elif op == 5:
        r = rows[k]
        i = rnd.randrange(len(r))
        rows[k] = r[:i] + bytes([rnd.choice(b'{}[]",:$01\\ax\n')]) + r[i + 1:]
    else:
        r = rows[k]
        rows[k] = r[:rnd.randrange(len(r))]
    return b"".join(rows)


def network_chunks(p, split):
    """The payload as React's client is fed it: whole, or (split "rows")
    one row per network chunk."""
    if split != "rows":
        return [p]
    rows = raw_rows(p)
    rest = p[sum(len(r) for r in rows):]
    return rows + ([rest] if rest else [])


# React's client can spin for minutes on some hostile payloads (its
# reference paths over huge or cyclic values); the worker is killed when one
# payload has run this long, and that payload counts as React's failure
REACT_TIMEOUT = 20.0
REACT_MS = {}  # the longest React's client took on each payload, any split


def run_oracle(items, dev, split=None):
    """React's client on each payload: {key: oracle result}. split "byte":
    fed one byte per network chunk; "rows": one row per network chunk. A
    payload React's client has not finished after REACT_TIMEOUT seconds gets
    {"oracleError": "timeout ..."}, and the worker starts again after it."""
    if not items:
        return {}
    results = {}
    jobs = [{"key": key, "chunksBase64": [base64.b64encode(c).decode() for c in network_chunks(p, split)],
             "allowPartial": partial, "split": split if split == "byte" else None}
            for key, p, partial in items]
    env = dict(os.environ, NODE_ENV="development" if dev else "production", RSC_ORACLE_BUNDLER=BUNDLER)
    with tempfile.TemporaryDirectory() as tmp:
        while jobs:
            jobs_file, progress_file = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "progress.ndjson")
            with open(jobs_file, "w") as f:
                json.dump(jobs, f)
            open(progress_file, "w").close()
            # React logs what it throws on hostile payloads (and the oracle's
            # own stack overflows); shown only if the worker fails
            with tempfile.TemporaryFile("w+") as log:
                proc = subprocess.Popen(["node", WORKER, "19.3.1", jobs_file, "--progress", progress_file],
                                        env=env, cwd=os.path.dirname(WORKER), stdout=log, stderr=log,
                                        text=True)
                current, since, seen = None, time.monotonic(), 0
                while True:
                    try:
                        rc = proc.wait(timeout=0.5)
                    except subprocess.TimeoutExpired:
                        rc = None
                    with open(progress_file, "rb") as f:
                        f.seek(seen)
                        text = f.read()
                    done_upto = text.rfind(b"\n") + 1  # whole lines only
                    seen += done_upto
                    # not splitlines: JSON text may hold U+2028 and the like
                    for line in text[:done_upto].split(b"\n")[:-1]:
                        rec = json.loads(line)
                        if "start" in rec:
                            current, since = rec["start"], time.monotonic()
                        else:
                            results[rec["key"]] = rec["result"]
                            REACT_MS[rec["key"]] = max(REACT_MS.get(rec["key"], 0), rec.get("ms", 0))
                            current = None
                    if rc is not None:
                        break
                    if current is not None and time.monotonic() - since > REACT_TIMEOUT:
                        proc.kill()
                        proc.wait()
                        results[current] = {"oracleError": "timeout: React's client ran more than %g s" % REACT_TIMEOUT}
                        REACT_MS[current] = REACT_TIMEOUT * 1000
                        break
                if rc not in (None, 0):
                    log.seek(0)
                    out = log.read()
                    sys.stderr.write(out[-8000:])
                    raise SystemExit("differential: the oracle failed (exit %d)" % rc)
            jobs = [j for j in jobs if j["key"] not in results]
    return results


def ours(payload, dev, partial):
    try:
        return json.loads(rscflight.canonical_dump(payload, dev=dev, allow_partial=partial,
                                                   lenient_ids=True, drop_bom=True,
                                                   lenient=True, bundler=BUNDLER)), None
    except rscflight.DecodeError as e:
        return None, str(e)


def refusal(payload, dev, partial):
    """rscflight's default refusal of a value no server writes (the
    RSC_ERR_BAD_VALUE message, with its offset and row), else None."""
    try:
        rscflight.canonical_dump(payload, dev=dev, allow_partial=partial, lenient_ids=True,
                                 drop_bom=True, compact=True)
    except rscflight.DecodeError as e:
        if e.code == rscflight.lib.RSC_ERR_BAD_VALUE:
            return str(e)
    return None


REF_ID = re.compile(rb'"\$[A-Za-z@]?([0-9a-f]+)')


def answers_forward_reference(payload):
    """Whether a text or binary row answers a reference that came before
    it. React then replaces the waiting chunk with a new one and whatever
    waited waits forever (docs/spec/FLIGHT-PROTOCOL.md 3.5); rscflight
    resolves the chunk that waits, by design."""
    # the root (chunk 0) is waited on from the start: the client asks for it
    # before the first byte
    referenced, defined = {0}, set()
    for rid, tag, body in baseline.frame(payload):
        if tag in baseline.LENTAGS and rid in referenced and rid not in defined:
            return True
        defined.add(rid)
        if tag not in baseline.LENTAGS:
            referenced.update(int(m, 16) for m in REF_ID.findall(body) if len(m) <= 12)
    return False


def same_rows_dump(theirs, mine, err):
    """React fed a row per network chunk decoded the same tree. What it
    threw from its own code while reading a row (a close row for a chunk
    that is no stream: "Cannot read properties of null (reading 'close')")
    lost only that row then, so it does not count here."""
    if err is not None or theirs.get("hang") or theirs.get("inexpressible") or theirs.get("oracleError"):
        return False
    dump = theirs.get("dump")
    return dump is not None and same_dump(mine, dump)


def classify(theirs, mine, err, partial=False):
    if (theirs.get("uncaught") or theirs.get("hang") or theirs.get("inexpressible")
            or theirs.get("oracleError")):
        return "react-failed"
    dump = theirs.get("dump")
    # a root still pending after the end: React hung (it rejects what it
    # waits for at the end), unless the stream is partial, where a root
    # waiting on rows that never came is what both must say
    if dump is None or (dump == {"pending": True} and not partial):
        return "react-failed"
    if err is not None:
        return "rsc-error"
    return "same" if same_dump(mine, dump) else "differ"


# What React's development client throws from its own code when a row's
# debug data (a stack, its frames) is not the shape it expects; rscflight
# does not read debug data (docs/conformance.md: "Where React crashes")
DEV_CRASHES = ("Cannot read properties of undefined (reading 'length')",
               # an error's env that is no string
               "Cannot read properties of undefined (reading 'toLowerCase')",
               # a stack frame of four slots (a 2024 server's), whose file is missing
               "Cannot read properties of undefined (reading 'startsWith')",
               "filename.startsWith is not a function", "frame.join is not a function",
               # a reference resolving into props the development client froze
               "Cannot assign to read only property 'children' of object '#<Object>'",
               "Cannot assign to read only property 'title' of object '#<Object>'")


def error_messages(v, out):
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("$") == "Error" and isinstance(x.get("message"), str):
                out.add(x["message"])
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


OWNER_DEBUG = ("debugStack", "debugLocation", "debugTask")
# what an entry carries for reason() but the report leaves out
HEAVY = ("payload_full", "payload_bytes", "ours_dump", "react_dump")


def without_owner_debug(v):
    """A dump without the debug members React's development client adds to
    a component's info object once it serves as an owner."""
    if isinstance(v, dict):
        return {k: without_owner_debug(x) for k, x in v.items() if k not in OWNER_DEBUG}
    if isinstance(v, list):
        return [without_owner_debug(x) for x in v]
    return v


def explain(kind, payload, dev=False, mine=None, theirs=None):
    if kind != "differ":
        return kind
    if answers_forward_reference(payload):
        return "react-quirk"
    if dev:
        react_msgs = error_messages(theirs.get("dump"), set()) - error_messages(mine, set())
        if any(m in DEV_CRASHES for m in react_msgs):
            return "react-quirk"
        # React's development client gives a component's info object a
        # debugStack (and debugLocation, debugTask) once it serves as an
        # owner, visible where that object is also reached as a value
        if same_dump(mine, without_owner_debug(theirs.get("dump"))):
            return "react-quirk"
    return kind


def reason(e):
    """A reason for the known list, where the class of a difference is one
    the oracle itself causes; otherwise 'unexplained'."""
    ours_v, react_v, ptr = e["ours"], e["react"], e["pointer"]
    unnamed = unnamed_module_rows(e["payload_bytes"])
    if (ptr.endswith("/id") and isinstance(react_v, str) and not isinstance(ours_v, str)) or (
            ptr.endswith("/async") and react_v == "<absent>"):
        return ("oracle: its module map rebuilds the reference from property keys (strings, "
                "no fourth element) when it cannot match the I row; the dump keeps the row's")
    if (ptr.rsplit("/", 1)[-1] in ("id", "chunks", "name") and isinstance(ours_v, str)
            and re.search(rb'(^|\n)[^\n:]*:I\{', e["payload_bytes"])):
        return ("deliberate: an I row whose metadata is an object ({id, chunks, name, async}, "
                "React 18's webpack format) is read by its keys (src/decoder.c); React 19.3.1 "
                "reads [id, chunks, name] by index and finds nothing")
    if ("Cannot convert object to primitive value" in
            error_messages(e["react_dump"], set()) - error_messages(e["ours_dump"], set())
            and b":I" in e["payload_bytes"]):
        return ("oracle: its module export is an object without a prototype, whose String() "
                "throws (a Blob part, a FormData value); a real export is a function, whose text "
                "the host decides; rscflight prints [object Object] (src/jsstring.h)")
    if ptr.endswith("/$") and react_v == "<absent>" and "/chunks/" in ptr:
        return ("oracle: it dumps a client reference's metadata as plain data, so a value "
                "revived in an I row's chunk list (an element, a stream) shows as its fields")
    if ptr.endswith("/$") and ours_v == "client_ref" and react_v == "undefined":
        return ("oracle: an I row whose export name is no string resolves to undefined in its "
                "module model; rscflight dumps the reference as the row gave it")
    if unnamed and ((isinstance(ours_v, dict) and ours_v.get("$") == "client_ref" and
                     not isinstance(ours_v.get("name"), str) and react_v == "<absent>") or
                    any(int(m, 16) in unnamed for m in MODULE_READ_ID.findall(e["payload_full"]))):
        return ("oracle: an I row whose export name is no string resolves to undefined in its "
                "module model (a server reference or development error made of it reads "
                "undefined's id or name); rscflight keeps the reference as the row gave it")
    if ptr.endswith("/base64") and isinstance(ours_v, str) and isinstance(react_v, str):
        try:
            ours_t, react_t = base64.b64decode(ours_v), base64.b64decode(react_v)
        except ValueError:
            ours_t = react_t = b""
        if ours_t.count(b"Invalid Date") > react_t.count(b"Invalid Date") and b" GMT" in react_t:
            return ("V8's legacy Date.parse (date text that is not ISO: \"2\" is Feb 01 2001) is "
                    "not implemented: String() of such a Date in a Blob part reads \"Invalid Date\" "
                    "(src/jsstring.h)")
    if e["dev"] and (isinstance(ours_v, dict) and ours_v.get("$") == "function" or
                     ptr.endswith("/$") and ours_v == "function"):  # the tag itself differs
        return ("deliberate: a development \"$E\" keeps its source as text; React's development "
                "client evaluates it, and source that is no function (\"4\", \"\") gives its value")
    if '"$F' in e["payload_full"]:
        return ("deliberate: $F is read as a server reference, as clients up to 19.0 read it "
                "(docs/conformance.md); React 19.3.1 reads it as a reference to chunk 0xF.. ")
    return "unexplained"


# references whose map reads the module's export: a server reference
# (its id), a development error (its name)
MODULE_READ_ID = re.compile(r'"\$[hZ]([0-9a-f]{1,8})')


def unnamed_module_rows(payload):
    """Ids of the I rows whose export name (metadata[2]) is no string."""
    ids = set()
    for row in raw_rows(payload):
        rid_text, body = split_row(row)
        if body is None or body[:1] != b"I":
            continue
        try:
            rid = int(rid_text or b"0", 16)
            meta = json.loads(body[1:].decode("utf-8", "replace"))
        except ValueError:
            continue
        # React revives the row first: a name "$..." (but "$$...") is no string then
        name = meta[2] if isinstance(meta, list) and len(meta) > 2 else None
        if isinstance(meta, list) and not (isinstance(name, str) and
                                           (not name.startswith("$") or name.startswith("$$"))):
            ids.add(rid)
    return ids


def read_known(path):
    known = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                sha, _, reason = line.partition(" ")
                known[sha] = reason.strip()
    return known


def main(argv=None):
    global REACT_TIMEOUT, BUNDLER
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--corpus", help="a fuzz corpus tarball (fuzz/replay.tar.xz)")
    ap.add_argument("--known", help="known differences (SHA-1 and reason per line)")
    ap.add_argument("--write-known", action="store_true", help="rewrite --known from this run")
    ap.add_argument("--report", help="write every outcome as JSON here")
    ap.add_argument("--react-timeout", type=float, default=REACT_TIMEOUT, metavar="S",
                    help="seconds React's client may take on one payload before it counts as failed "
                         "(default %.0f)" % REACT_TIMEOUT)
    ap.add_argument("--show", type=int, default=10, help="differences to print (default 10)")
    ap.add_argument("--dev", action="store_true", help="decode the FILE arguments as development payloads")
    ap.add_argument("--bundler", default="webpack", choices=("webpack", "turbopack", "parcel", "rspack"),
                    help="whose client judges (its own react-server-dom package) and rscflight's bundler=")
    ap.add_argument("--permute", type=int, default=0, metavar="K",
                    help="also each 19.3.1 fixture with its rows in K random orders")
    ap.add_argument("--seed", type=int, default=1, help="for --permute and --generate (default 1)")
    ap.add_argument("--generate", type=int, default=0, metavar="N",
                    help="also N random well-formed payloads (tests/conformance/flightgen.py)")
    ap.add_argument("--generate-dev", action="store_true",
                    help="generate development payloads (owners, stacks, debug rows)")
    ap.add_argument("--mutate", type=int, default=0, metavar="N",
                    help="also N generated payloads with one small mutation each (mutated)")
    args = ap.parse_args(argv)
    REACT_TIMEOUT = args.react_timeout
    BUNDLER = args.bundler
    if args.generate and BUNDLER != "webpack":
        ap.error("--generate writes webpack's I rows: not with --bundler")

    inputs = []
    if args.corpus:
        inputs += corpus_inputs(args.corpus)
    if args.permute:
        inputs += permuted_fixtures(args.permute, args.seed)
    if args.generate:
        import random
        import flightgen
        rnd = random.Random(args.seed)
        for i in range(args.generate):
            dev = args.generate_dev
            data = flightgen.Payload(rnd, dev).build()
            # a third cut short at a row boundary, decoded with React's
            # unstable_allowPartialStream (RSC_OPT_ALLOW_PARTIAL)
            partial = rnd.random() < 1 / 3
            if partial:
                rows = raw_rows(data)
                data = b"".join(rows[: rnd.randint(1, len(rows))])
            inputs.append(("generated#%d" % i, data, dev, partial))
    if args.mutate:
        import random
        import flightgen
        rnd = random.Random(args.seed + 1000)
        for i in range(args.mutate):
            dev = args.generate_dev
            data = mutated(rnd, flightgen.Payload(rnd, dev).build())
            inputs.append(("mutated#%d" % i, data, dev, False))
    for path in args.files:
        with open(path, "rb") as f:
            inputs.append((path, f.read(), args.dev, False))
    # one entry per distinct (payload, mode): the corpus holds repeats
    seen, unique = set(), []
    for name, payload, dev, partial in inputs:
        sha = hashlib.sha1(payload + bytes([dev, partial])).hexdigest()
        if sha not in seen:
            seen.add(sha)
            unique.append((sha, name, payload, dev, partial))

    results = {}
    for dev in (False, True):
        batch = [(sha, p, partial) for sha, _, p, d, partial in unique if d == dev]
        results.update(run_oracle(batch, dev))

    # A payload that differs fed whole is fed to React again one byte per
    # network chunk: React's client reads some rows differently depending on
    # where the network cuts the stream (a typed array row for a byte
    # stream detaches the chunk it was read from, and the rest of that
    # chunk is lost), rscflight never does.
    mine_of = {sha: ours(payload, dev, partial) for sha, _, payload, dev, partial in unique}
    again = {}
    for dev in (False, True):
        batch = [(sha, p, partial) for sha, _, p, d, partial in unique
                 if d == dev and classify(results[sha], *mine_of[sha], partial) == "differ"]
        again.update(run_oracle(batch, dev, split="byte"))
    # and, where that too differs (React fed bytes trips over other rows),
    # one row per network chunk, which still keeps a row's bytes together
    again_rows = {}
    for dev in (False, True):
        batch = [(sha, p, partial) for sha, _, p, d, partial in unique
                 if d == dev and sha in again and classify(again[sha], *mine_of[sha], partial) != "same"]
        again_rows.update(run_oracle(batch, dev, split="rows"))
    # A development payload that still differs is given to React again
    # without its D rows, which rscflight does not read: React's client lets
    # them change the tree (a D row whose JSON does not parse rejects its
    # chunk while that is pending); and without the cause and errors of an
    # outlined error, which React's development client revives twice
    # (uncaused)
    stripped = {sha: without_debug_rows(p) for sha, _, p, d, partial in unique
                if d and classify(results[sha], *mine_of[sha], partial) == "differ"}
    no_debug = run_oracle([(sha, p, partial) for sha, _, _, d, partial in unique
                           if stripped.get(sha) is not None
                           for p in [stripped[sha]]], True)

    outcome, report = {}, []
    for sha, name, payload, dev, partial in unique:
        mine, err = mine_of[sha]
        theirs = results[sha]
        kind = explain(classify(theirs, mine, err, partial), payload, dev, mine, theirs)
        if kind == "differ" and (
                sha in again and classify(again[sha], mine, err, partial) == "same" or
                sha in again_rows and same_rows_dump(again_rows[sha], mine, err)):
            kind = "react-chunking"
        if kind == "differ" and sha in no_debug and classify(no_debug[sha], mine, err, partial) == "same":
            kind = "react-quirk"
        refused = refusal(payload, dev, partial)
        if refused is not None and kind == "same":
            kind = "rsc-refused"  # lenient, React's tree: the refusal is the only difference
        if kind == "differ" and sha in again_rows and again_rows[sha].get("uncaught"):
            # fed whole React lost the rest of a network chunk (a byte
            # stream's typed array row), and fed a row per chunk it throws
            # out of its stream handler on one of these rows: its own
            # crash, not comparable
            kind = "react-failed"
        outcome[sha] = kind
        entry = {"sha1": sha, "name": name, "dev": dev, "partial": partial, "outcome": kind}
        if kind == "differ":
            ptr = first_difference(mine, theirs["dump"])
            entry.update(pointer=ptr, ours=pointer_get(mine, ptr), react=pointer_get(theirs["dump"], ptr),
                         payload=payload[:300].decode("utf-8", "backslashreplace"),
                         payload_full=payload.decode("utf-8", "backslashreplace"), payload_bytes=payload,
                         ours_dump=mine, react_dump=theirs["dump"])
        elif kind == "rsc-error":
            entry["error"] = err
        elif kind == "rsc-refused":
            entry["error"] = refused
        elif kind == "react-failed":
            entry["react"] = {k: theirs[k] for k in ("uncaught", "hang", "inexpressible", "oracleError")
                              if theirs.get(k)}
        report.append(entry)

    slow = sorted(((REACT_MS.get(sha, 0), name) for sha, name, _, _, _ in unique), reverse=True)
    slow = [(ms, name) for ms, name in slow if ms >= 2000]
    if slow:
        print("React's client took %.0f s on %d payloads of 2 s or more: %s" % (
            sum(ms for ms, _ in slow) / 1000, len(slow),
            ", ".join("%s %.1f s" % (name[:12], ms / 1000) for ms, name in slow[:5])))
    counts = {}
    for e in report:
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    print("differential: %d payloads against React 19.3.1's client: %s" % (
        len(report), ", ".join("%s %d" % (k, counts.get(k, 0))
                               for k in ("same", "differ", "react-chunking", "react-quirk",
                                         "rsc-refused", "rsc-error", "react-failed"))))
    for e in [e for e in report if e["outcome"] == "rsc-refused"][: args.show]:
        print("  refused as intended %s (%s): %s" % (e["sha1"][:12], e["name"], e["error"]))

    known = read_known(args.known)
    differ = [e for e in report if e["outcome"] == "differ"]
    new = [e for e in differ if e["sha1"] not in known]
    # only payloads of this run count: the list may also hold other sets'
    gone = sorted(sha for sha in known if sha in outcome and outcome[sha] != "differ")
    for e in (new if args.known else differ)[: args.show]:
        print("  %s %s (%s): at %s ours %s, React %s\n    payload %r" % (
            "new difference" if args.known else "differs", e["sha1"][:12], e["name"], e["pointer"],
            json.dumps(e["ours"])[:160], json.dumps(e["react"])[:160], e["payload"][:160]))
    if args.report:
        with open(args.report, "w") as f:
            json.dump([{k: v for k, v in e.items() if k not in HEAVY}
                       for e in report], f, indent=1)
    if args.write_known and args.known:
        with open(args.known, "w") as f:
            f.write("# Payloads (SHA-1 of payload + dev and partial bytes) on which rscflight's dump\n"
                    "# differs from React 19.3.1's client, with why: tests/conformance/differential.py.\n")
            lines = {}
            for sha, why in known.items():  # payloads of other sets stay
                if sha not in outcome:
                    lines[sha] = why
            for e in differ:
                given = known.get(e["sha1"], "unexplained")
                lines[e["sha1"]] = given if given != "unexplained" else reason(e)
            for sha in sorted(lines):
                f.write("%s %s\n" % (sha, lines[sha]))
        print("wrote %s (%d entries)" % (args.known, len(lines)))
        return 0
    if args.known:
        print("known differences: %d listed (%d of them in this run), %d new, %d no longer differ" % (
            len(known), sum(1 for sha in known if sha in outcome), len(new), len(gone)))
        for sha in gone[: args.show]:
            print("  no longer differs (remove from the list): %s" % sha)
        return 1 if new or gone else 0
    return 0


def run_with_deep_stack(fn):
    """Dumps nest as deep as the payloads do (thousands of levels): json and
    the comparison recurse, so they run on a thread with a big stack."""
    import threading
    sys.setrecursionlimit(200000)
    threading.stack_size(1 << 30)
    box = []
    t = threading.Thread(target=lambda: box.append(fn()))
    t.start()
    t.join()
    return box[0] if box else 2


if __name__ == "__main__":
    sys.exit(run_with_deep_stack(main))
