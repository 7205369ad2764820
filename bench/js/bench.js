#!/usr/bin/env node
'use strict';
// Time React's Flight client (and a JSON.parse floor) on Flight payload files.
//
//   NODE_ENV=production node bench/js/bench.js --client 19.3.1|19.2.9|jsonparse \
//       [--rounds N] [--min-time S] [--warmup S] [--min-n N] [--chunk-size N] FILE...
//   node bench/js/bench.js --client 19.2.9 --check      (which React got loaded)
//
// One decode (React clients) = createFromNodeStream over a Readable that pushes
// the whole buffer at once (or --chunk-size pieces) and ends, await the root,
// then force/await everything reachable from it (walk.js) and the stream's end.
// One decode (jsonparse) = frame the rows and JSON.parse every JSON body.
//
// Each file: one untimed verification decode, --warmup seconds of untimed
// decodes (JIT), then --rounds rounds; a round repeats decodes until
// --min-time seconds have elapsed and at least --min-n decodes ran, and takes
// the median. Output, one JSON line per file on stdout:
//   {"file","bytes","client","median_ns","mb_per_s","n", "round_medians_ns", ...}
// median_ns is the median of the round medians; MB = 1e6 bytes.
// A file whose verification fails prints {"file","bytes","client","error"} and
// the exit status is 1.

const fs = require('fs');
const path = require('path');
const { Readable } = require('stream');
const { deepResolve } = require('./walk');
const { parseRows } = require('./flightframe');

function usage(msg) {
  if (msg) process.stderr.write(`bench.js: ${msg}\n`);
  process.stderr.write(
    'usage: NODE_ENV=production node bench.js --client 19.3.1|19.2.9|jsonparse ' +
      '[--rounds N] [--min-time S] [--warmup S] [--min-n N] [--chunk-size N] ' +
      '[--timeout S] [--check] FILE...\n',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    client: null,
    rounds: 1,
    minTime: 1.0,
    warmup: null,
    minN: 5,
    chunkSize: 0,
    timeout: 10,
    check: false,
    files: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const num = (x) => {
      const n = Number(x);
      if (!Number.isFinite(n) || n < 0) usage(`bad number for ${a}: ${x}`);
      return n;
    };
    if (a === '--client') o.client = val();
    else if (a === '--rounds') o.rounds = Math.max(1, Math.floor(num(val())));
    else if (a === '--min-time') o.minTime = num(val());
    else if (a === '--warmup') o.warmup = num(val());
    else if (a === '--min-n') o.minN = Math.max(1, Math.floor(num(val())));
    else if (a === '--chunk-size') o.chunkSize = Math.floor(num(val()));
    else if (a === '--timeout') o.timeout = num(val());
    else if (a === '--check') o.check = true;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else o.files.push(a);
  }
  if (!o.client) usage('--client is required');
  if (!['19.3.1', '19.2.9', 'jsonparse'].includes(o.client)) usage(`unknown client ${o.client}`);
  if (o.warmup === null) o.warmup = Math.min(0.5, o.minTime / 2);
  if (!o.check && o.files.length === 0) usage('no files');
  return o;
}

// ---- module stubs: every client reference resolves synchronously ----------

function stubComponent() {
  return null;
}
const stubModules = new Map();
function stubModule(id) {
  let m = stubModules.get(id);
  if (!m) {
    m = new Proxy(
      {},
      {
        get(t, k) {
          if (typeof k !== 'string' || k === 'then' || k === '__esModule') return undefined;
          return stubComponent;
        },
        getOwnPropertyDescriptor(t, k) {
          if (typeof k !== 'string' || k === 'then' || k === '__esModule') return undefined;
          return { value: stubComponent, writable: true, enumerable: false, configurable: true };
        },
      },
    );
    stubModules.set(id, m);
  }
  return m;
}
globalThis.__webpack_require__ = stubModule;
globalThis.__webpack_chunk_load__ = () => Promise.resolve();

// moduleMap[id][name] -> {id, chunks: [], name}: maps every id to itself.
const moduleMap = new Proxy(
  {},
  {
    get(t, id) {
      if (typeof id !== 'string') return undefined;
      return new Proxy(
        {},
        {
          get(t2, name) {
            if (typeof name !== 'string') return undefined;
            return { id, chunks: [], name };
          },
        },
      );
    },
  },
);
const serverConsumerManifest = {
  moduleMap,
  serverModuleMap: null,
  moduleLoading: null,
};

// ---- decoders --------------------------------------------------------------

// An uncaught throw from the client's stream 'data' handler
// (docs/spec/FLIGHT-PROTOCOL.md 8.6, e.g. a DEV payload fed to a PROD client)
// fails the current decode.
let currentFail = null;
process.on('uncaughtException', (e) => {
  if (currentFail) currentFail(e);
  else {
    process.stderr.write(`bench.js: uncaught exception: ${e && e.stack}\n`);
    process.exit(1);
  }
});

// Settled-but-unobserved promises inside the client are not our failures.
process.on('unhandledRejection', () => {});

function makeReactDecoder(createFromNodeStream, chunkSize) {
  return async function decode(buf) {
    let failed;
    const failure = new Promise((_, reject) => {
      failed = reject;
    });
    currentFail = failed;
    let ended;
    const end = new Promise((resolve) => {
      ended = resolve;
    });
    let off = 0;
    const stream = new Readable({
      read() {
        if (chunkSize <= 0) {
          this.push(buf);
          this.push(null);
          return;
        }
        while (off < buf.length) {
          const piece = buf.subarray(off, Math.min(buf.length, off + chunkSize));
          off += piece.length;
          if (!this.push(piece)) return;
        }
        this.push(null);
      },
    });
    stream.on('end', ended);
    const root = createFromNodeStream(stream, serverConsumerManifest);
    try {
      const value = await Promise.race([root, failure]);
      const stats = await Promise.race([deepResolve(value), failure]);
      await Promise.race([end, failure]);
      return stats;
    } finally {
      currentFail = null;
    }
  };
}

function makeJsonDecoder() {
  return async function decode(buf) {
    return parseRows(buf);
  };
}

function syncJsonDecode(buf) {
  return parseRows(buf);
}

// ---- timing -----------------------------------------------------------------

function median(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const now = () => process.hrtime.bigint();

async function timeRound(decode, buf, minTimeNs, minN) {
  const times = [];
  const start = now();
  while (times.length < minN || now() - start < minTimeNs) {
    const t0 = now();
    await decode(buf);
    times.push(Number(now() - t0));
  }
  return times;
}

function timeRoundSync(buf, minTimeNs, minN) {
  const times = [];
  const start = now();
  while (times.length < minN || now() - start < minTimeNs) {
    const t0 = now();
    syncJsonDecode(buf);
    times.push(Number(now() - t0));
  }
  return times;
}

function withTimeout(p, seconds, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result after ${seconds}s (hang)`)), seconds * 1000);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (process.env.NODE_ENV !== 'production') {
    process.stderr.write('bench.js: warning: NODE_ENV is not "production"; the development client build is used\n');
  }
  let decode;
  let info = {};
  if (o.client === 'jsonparse') {
    decode = makeJsonDecoder();
  } else {
    const { loadClient } = require('./clients');
    const loaded = loadClient(o.client);
    info = { react: loaded.React.version, reactFiles: loaded.reactFiles };
    if (o.check) {
      process.stdout.write(JSON.stringify({ client: o.client, NODE_ENV: process.env.NODE_ENV || null, ...info }) + '\n');
      if (o.files.length === 0) return 0;
    }
    decode = makeReactDecoder(loaded.client.createFromNodeStream, o.chunkSize);
  }

  let status = 0;
  for (const file of o.files) {
    const buf = fs.readFileSync(file);
    const base = { file, bytes: buf.length, client: o.client };
    if (o.chunkSize > 0) base.chunk_size = o.chunkSize;
    // verification (untimed): the root resolves, everything reachable settles
    let check;
    try {
      check = await withTimeout(decode(buf), o.timeout, file);
    } catch (e) {
      process.stdout.write(JSON.stringify({ ...base, error: String((e && e.message) || e) }) + '\n');
      status = 1;
      continue;
    }
    // warmup (untimed)
    const wEnd = now() + BigInt(Math.round(o.warmup * 1e9));
    for (let k = 0; k < 3 || now() < wEnd; k++) await decode(buf);

    const minTimeNs = BigInt(Math.round(o.minTime * 1e9));
    const roundMedians = [];
    let n = 0;
    for (let r = 0; r < o.rounds; r++) {
      const times =
        o.client === 'jsonparse'
          ? timeRoundSync(buf, minTimeNs, o.minN)
          : await timeRound(decode, buf, minTimeNs, o.minN);
      roundMedians.push(median(times));
      n += times.length;
    }
    const med = median(roundMedians);
    const out = {
      ...base,
      median_ns: Math.round(med),
      mb_per_s: buf.length / 1e6 / (med / 1e9),
      n,
      round_medians_ns: roundMedians.map(Math.round),
    };
    if (o.client === 'jsonparse') {
      Object.assign(out, { rows: check.rows, json_rows: check.json, bad_json_rows: check.bad });
    } else {
      Object.assign(out, { nodes: check.nodes, lazies: check.lazies, thenables: check.thenables, stream_items: check.streamItems, rejected: check.rejected });
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  return status;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`bench.js: ${(e && e.stack) || e}\n`);
    process.exit(1);
  },
);
