'use strict';
// React 19.3.1's server writing the models whose bytes tests/test_builder.c
// expects from the builder (the trees of tests/builder_trees.c with the same
// names), one file each, tests/golden/builder/NAME.rsc. Regenerates them:
//   cd fixtures/gen && NODE_ENV=production node --conditions react-server \
//     ../../tests/conformance/builder-react-server.cjs ../../tests/golden/builder
// Runs with the react-server condition (React's server build).
const { PassThrough } = require('stream');
const path = require('path');
const gen = path.join(__dirname, '../../fixtures/gen/node_modules/');
const React = require(gen + 'react');
const server = require(gen + 'react-server-dom-webpack/server.node');
const h = React.createElement;

const MANIFEST = {
  'app/Button.js#Button': { id: 'app/Button.js', chunks: ['main', 'main.3f2a.js'], name: 'Button' },
  'app/widgets/Counter.js#default': { id: 'app/widgets/Counter.js', chunks: ['widgets', 'widgets.0123456789.js'], name: 'default' },
  'app/Async.js#Thing': { id: 'app/Async.js', chunks: [], name: 'Thing', async: true },
};
const refs = {};
function client(key) {
  if (!refs[key]) {
    const i = key.lastIndexOf('#');
    refs[key] = server.registerClientReference(function () {}, key.slice(0, i), key.slice(i + 1));
  }
  return refs[key];
}
function action(id, name) { return server.registerServerReference(function () {}, id, name); }
const tick = () => new Promise((r) => setTimeout(r, 5));
function later(value, ms) { return new Promise((r) => setTimeout(() => r(value), ms)); }
function fails(ms) { return new Promise((_, rej) => setTimeout(() => rej(new Error('nope')), ms)); }

const MODELS = {
  primitives: () => [null, true, false, 0, -0, 1.5, 1e21, -2.5e-7, NaN, Infinity, -Infinity, undefined,
    'a', '$x', '', 'é\n"\u2028', 12345678901234567890n, -5n, new Date(0), Symbol.for('react.x')],
  long_strings: () => ({ a: 'x'.repeat(1024), b: 'y'.repeat(1023), c: '$' + 'z'.repeat(1100), d: 'é'.repeat(1024) }),
  key_order: () => ({ b: 1, 2: 2, a: 3, 1: 4, '01': 5, 4294967295: 6 }),
  elements: () => h('div', { className: 'a', children: ['x', h('span', { key: 'k' }, 'y'), h('i', { key: '$k' })] }),
  client_refs: () => {
    const B = client('app/Button.js#Button'), C = client('app/widgets/Counter.js#default');
    return h('main', null, h(B, { label: 'one' }), h(C, null), h(B, { label: 'two', of: B }), h(client('app/Async.js#Thing')),
      h(client('app/widgets/Counter.js#default')));
  },
  map_of_sets: () => ({ m: new Map([['a', new Set([1, 2])], [{ k: 1 }, new Set()]]), s: new Set(['x']) }),
  binary: () => [new ArrayBuffer(2), new Int8Array([-1]), new Uint8Array([1, 2, 10]), new Uint8ClampedArray([255]),
    new Int16Array([-2]), new Uint16Array([3]), new Int32Array([-4]), new Uint32Array([5]), new Float32Array([1.5]),
    new Float64Array([-0.25]), new BigInt64Array([-6n]), new BigUint64Array([7n]), new DataView(new ArrayBuffer(3))],
  error_value: () => ({ e: new Error('secret') }),
  suspense: () => {
    async function Late() { await later(null, 20); return h('b', null, 'late'); }
    return h(React.Suspense, { fallback: 'loading' }, h(Late));
  },
  rejected: () => {
    async function Bad() { await tick(); throw new Error('nope'); }
    return h('div', null, h(Bad));
  },
  promise: () => ({ p: later({ v: 1 }, 10), q: fails(30) }),
  nested_suspense: () => {
    async function Inner() { await later(null, 30); return h('em', null, 'inner'); }
    async function Outer() { await later(null, 10); return h('section', null, h(Inner)); }
    return h(React.Suspense, { fallback: null }, h(Outer));
  },
  deferred: () => ['a'.repeat(1000), 'b'.repeat(1000), 'c'.repeat(1000), 'd'.repeat(300), h('i', null), h('u', null)],
  server_refs: () => {
    const save = action('app/actions.js', 'save');
    return { a: save, again: save, b: save.bind(null, 1, 'x'), c: action('app/actions.js', 'other') };
  },
  form_data: () => { const f = new FormData(); f.append('a', 'b'); f.append('a', 'c'); f.append('n', '1'); return { f }; },
  form_data_file: () => { const f = new FormData(); f.append('a', 'b'); f.append('file', new Blob(['zz'], { type: 'text/x' })); return f; },
  blobs: () => ({ a: new Blob(['hello world'], { type: 'text/plain' }), b: new Blob([]), c: new Blob(['xy']) }),
  text_stream: () => ({ s: new ReadableStream({ async start(c) { c.enqueue('a'); c.enqueue({ x: 1 }); await tick(); c.enqueue('b'); c.close(); } }) }),
  byte_stream: () => ({ s: new ReadableStream({ type: 'bytes', async start(c) { c.enqueue(new Uint8Array([1, 2])); await tick(); c.enqueue(new Uint8Array([3])); c.close(); } }) }),
  stream_error: () => ({ s: new ReadableStream({ async start(c) { c.enqueue('a'); await tick(); c.error(new Error('x')); } }) }),
  async_iterator: () => { async function* g() { yield 1; await tick(); yield { a: 2 }; return 'done'; } return { it: g() }; },
  async_iterable: () => ({ it: { async *[Symbol.asyncIterator]() { yield 'x'; yield 'y'; } } }),
  iterators: () => { function* g() { yield 1; yield { a: 2 }; } return { it: g(), arr: new Set([1]).values() }; },
  shared: () => {
    const o = { a: 1 }, arr = [o, 2], e = h('i', null), m = new Map([[1, 2]]);
    const p = { b: 2 };
    return { x: o, y: arr, z: [o, arr, e, e, m, m], w: { deep: { o } }, 'k:1': p, t: p };
  },
  shared_in_element: () => { const o = { a: 1 }; return h('div', { a: o, b: o, children: [o] }); },
  shared_in_promise: () => { const o = { a: 1 }; return { x: o, p: Promise.resolve(o), q: Promise.resolve([o, { k: o }]) }; },
  shared_binary: () => { const u = new Uint8Array([1]); const s = new Set([u]); return [u, u, s, s, { m: new Map([['k', u]]) }]; },
  cycle: () => { const a = { n: 1 }; a.self = a; a.list = [a, [a]]; return a; },
};

function render(model) {
  return new Promise((resolve, reject) => {
    const out = new PassThrough();
    const parts = [];
    out.on('data', (c) => parts.push(Buffer.from(c)));
    out.on('end', () => resolve(Buffer.concat(parts)));
    out.on('error', reject);
    server.renderToPipeableStream(model, MANIFEST, { onError: () => 'dg' }).pipe(out);
  });
}

(async () => {
  const fs = require('fs');
  const dir = process.argv[2];
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, make] of Object.entries(MODELS)) fs.writeFileSync(path.join(dir, name + '.rsc'), await render(make()));
})().catch((e) => { console.error(e); process.exit(1); });
