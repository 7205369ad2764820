#!/usr/bin/env node
'use strict';
// Time React's Flight server (react-server-dom-webpack 19.3.1) serializing
// the model of a Flight payload: what rscflight's encoder is set beside.
//
//   NODE_ENV=production node --conditions=react-server bench/js/serverbench.js \
//       [--rounds N] [--min-time S] [--warmup S] [--min-n N] FILE...
//
// The model: the payload's rows read back into host elements (React's
// createElement), client references (registerClientReference, one per
// I row, and a client manifest that names their modules and chunks), plain
// JSON values, long text and binary rows (typed arrays); a reference to another row is that row's
// value in place, so nothing renders a component. Values of kinds the model
// does not make (dates, big integers, symbols, Maps...) stay as strings.
// One serialization = renderToPipeableStream(model, manifest) piped into a
// Writable that keeps the chunks, until it finishes.
//
// Output, one JSON line per file on stdout:
//   {"file","bytes","client":"react-server","median_ns","mb_per_s","n",
//    "out_bytes","round_medians_ns"}
// A file whose model cannot be made, or whose serialization is less than
// half the payload (a model that lost what it did not understand), prints
// {"file","bytes","client","error"} and the exit status is 1.

const fs = require('fs');
const { Writable } = require('stream');
const React = require('react');
const server = require('react-server-dom-webpack/server');

function usage(msg) {
  if (msg) process.stderr.write(`serverbench.js: ${msg}\n`);
  process.stderr.write(
    'usage: NODE_ENV=production node --conditions=react-server serverbench.js ' +
      '[--rounds N] [--min-time S] [--warmup S] [--min-n N] FILE...\n',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { rounds: 1, minTime: 1.0, warmup: 0.2, minN: 5, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      const n = Number(argv[++i]);
      if (!Number.isFinite(n) || n < 0) usage(`bad number for ${a}`);
      return n;
    };
    if (a === '--rounds') o.rounds = Math.max(1, Math.floor(num()));
    else if (a === '--min-time') o.minTime = num();
    else if (a === '--warmup') o.warmup = num();
    else if (a === '--min-n') o.minN = Math.max(1, Math.floor(num()));
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else o.files.push(a);
  }
  if (!o.files.length) usage('no FILE');
  return o;
}

// Rows of a payload: {id, tag, body} (body: a string; T rows' text).
function frame(buf) {
  const rows = [];
  let i = 0;
  const n = buf.length;
  while (i < n) {
    let j = i;
    while (j < n && buf[j] !== 0x3a) j++;
    if (j >= n) break;
    const id = parseInt(buf.toString('latin1', i, j), 16);
    i = j + 1;
    let tag = '';
    const c = buf[i];
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x23) {
      tag = String.fromCharCode(c);
      i++;
    }
    if ('TAOoUSsLlGgMmVb'.includes(tag) && tag) {
      let k = i;
      while (buf[k] !== 0x2c) k++;
      const len = parseInt(buf.toString('latin1', i, k), 16);
      const body = tag === 'T' ? buf.toString('utf8', k + 1, k + 1 + len) : null;
      rows.push({ id, tag, body, bytes: tag === 'T' ? null : typed(tag, buf, k + 1, len) });
      i = k + 1 + len;
      continue;
    }
    let k = buf.indexOf(0x0a, i);
    if (k < 0) k = n;
    rows.push({ id, tag, body: buf.toString('utf8', i, k) });
    i = k + 1;
  }
  return rows;
}

// A binary row's bytes as the typed array its tag names.
function typed(tag, buf, at, len) {
  const copy = new ArrayBuffer(len);
  new Uint8Array(copy).set(buf.subarray(at, at + len));
  const T = {
    A: null, O: Int8Array, o: Uint8Array, U: Uint8ClampedArray, S: Int16Array, s: Uint16Array,
    L: Int32Array, l: Uint32Array, G: Float32Array, g: Float64Array, M: BigInt64Array,
    m: BigUint64Array, V: DataView, b: Uint8Array,
  }[tag];
  return T ? new T(copy) : copy;
}

// The model of the payload's row 0, and the client manifest of its I rows.
function makeModel(buf) {
  const rows = frame(buf);
  const json = new Map();
  const text = new Map();
  const refs = new Map();
  const manifest = {};
  for (const r of rows) {
    if (r.tag === '') json.set(r.id, r.body);
    else if (r.tag === 'T') text.set(r.id, r.body);
    else if ('AOoUSsLlGgMmVb'.includes(r.tag)) text.set(r.id, r.bytes);
    else if (r.tag === 'I') {
      const m = JSON.parse(r.body);
      const [id, chunks, name] = Array.isArray(m) ? m : [m.id, m.chunks, m.name];
      const key = `${id}#${name}`;
      manifest[key] = { id, chunks, name };
      refs.set(r.id, server.registerClientReference(function () {}, id, name));
    }
  }
  const done = new Map();
  const row = (id, depth) => {
    if (done.has(id)) return done.get(id);
    if (refs.has(id)) return refs.get(id);
    if (text.has(id)) return text.get(id);
    if (!json.has(id)) throw new Error(`row ${id.toString(16)} missing`);
    const v = revive(JSON.parse(json.get(id)), depth + 1);
    done.set(id, v);
    return v;
  };
  const revive = (v, depth) => {
    if (depth > 200) throw new Error('too deep');
    if (typeof v === 'string') {
      if (v[0] !== '$') return v;
      if (v[1] === '$') return v.slice(1);
      if (v === '$undefined') return undefined;
      const m = /^\$[L@]?([0-9a-f]+)$/.exec(v);
      if (m) return row(parseInt(m[1], 16), depth);
      return v;
    }
    if (Array.isArray(v)) {
      if (v[0] === '$' && v.length >= 4) {
        const type = revive(v[1], depth);
        const props = revive(v[3], depth) || {};
        const key = v[2];
        if (typeof type !== 'string' && typeof type !== 'function')
          return props.children === undefined ? null : props.children;
        return React.createElement(type, key == null ? props : { ...props, key });
      }
      return v.map((x) => revive(x, depth));
    }
    if (v && typeof v === 'object') {
      const o = {};
      for (const k of Object.keys(v)) o[k] = revive(v[k], depth);
      return o;
    }
    return v;
  };
  return { model: row(0, 0), manifest };
}

function serialize(model, manifest) {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const sink = new Writable({
      write(chunk, enc, cb) {
        bytes += chunk.length;
        cb();
      },
    });
    sink.on('finish', () => resolve(bytes));
    sink.on('error', reject);
    const { pipe } = server.renderToPipeableStream(model, manifest, {
      onError(e) {
        reject(e);
      },
    });
    pipe(sink);
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let rc = 0;
  for (const file of o.files) {
    const buf = fs.readFileSync(file);
    let m;
    let outBytes;
    try {
      m = makeModel(buf);
      outBytes = await serialize(m.model, m.manifest);
      // a model that lost most of the payload would time something else
      if (outBytes < buf.length / 2)
        throw new Error(`model incomplete: the server wrote ${outBytes} of ${buf.length} bytes`);
    } catch (e) {
      console.log(JSON.stringify({ file, bytes: buf.length, client: 'react-server', error: String(e) }));
      rc = 1;
      continue;
    }
    const end = process.hrtime.bigint() + BigInt(Math.round(o.warmup * 1e9));
    while (process.hrtime.bigint() < end) await serialize(m.model, m.manifest);
    const medians = [];
    let total = 0;
    for (let r = 0; r < o.rounds; r++) {
      const ts = [];
      const start = process.hrtime.bigint();
      while (ts.length < o.minN || Number(process.hrtime.bigint() - start) < o.minTime * 1e9) {
        const t0 = process.hrtime.bigint();
        await serialize(m.model, m.manifest);
        ts.push(Number(process.hrtime.bigint() - t0));
      }
      ts.sort((a, b) => a - b);
      medians.push(ts[ts.length >> 1]);
      total += ts.length;
    }
    const sorted = medians.slice().sort((a, b) => a - b);
    const med = sorted[sorted.length >> 1];
    console.log(
      JSON.stringify({
        file,
        bytes: buf.length,
        client: 'react-server',
        median_ns: med,
        mb_per_s: (buf.length / med) * 1e3,
        n: total,
        out_bytes: outBytes,
        round_medians_ns: medians,
      }),
    );
  }
  process.exitCode = rc;
}

main();
