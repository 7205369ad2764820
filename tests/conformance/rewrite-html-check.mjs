// `rscflight rewrite --html` checked with the frameworks' own code
// (scripts/test.d/72-rewrite-html.sh).
//
// usage: NODE_ENV=production node tests/conformance/rewrite-html-check.mjs build/rscflight
//
// For every page in fixtures/html/index.json, the CLI rewrites string
// prefixes (Next.js pages: /_next/ -> https://cdn.example/_next/, then a
// second time /_next/ to a prefix full of what the page's escaping must handle
// and a text every page shows to one full of what the page's escaping must
// handle (webpack builds send no /_next/ string in their payloads: their
// pages come back unchanged from the first rule); rsc-html-stream pages:
// prefixes that occur in them). Then:
//
//  1. The rewritten page is read the way the browser reads it: its inline
//     scripts, found by parse5 (a spec-compliant HTML parser, scripting
//     enabled), run in node:vm, and the payload taken by the framework's own
//     reader: Next.js's nextServerDataCallback, taken from
//     next/dist/client/app-index.js of the pinned next package, with
//     TextEncoder for text and atob for base64 as app-index.js does; the
//     `rscStream` of the pinned rsc-html-stream/client
//     (fixtures/html/gen/lib.mjs, shared with the extraction fixtures).
//  2. That payload and the original page's are decoded with React 19.3.1's
//     client (fixtures/gen/lib/oracle.js, through the worker of
//     fixtures/html/gen/next-oracle.mjs, which fixes the oracle's reading of
//     I rows whose metadata holds "$" strings); the rewritten tree must be the
//     original tree with exactly the strings the rules match changed (every
//     string value of the canonical dump that starts with a rule's prefix,
//     the first matching rule winning; object keys and client reference ids
//     and names are never rewritten).
//  3. The page outside the rewritten scripts is unchanged: the same scripts,
//     each script that pushes the same value as before with the same text,
//     and every character outside the rewritten scripts' text the same.
//  4. Each rewritten script is exactly what the framework writes for the
//     value it now pushes: Next.js: `self.__next_f.push(` +
//     htmlEscapeJsonString(JSON.stringify([1|3, value])) + `)` with
//     htmlEscapeJsonString from next/dist/shared/lib/htmlescape.js and
//     base64 as Buffer.toString('base64'); rsc-html-stream:
//     escapeScript(`(self.__FLIGHT_DATA||=[]).push(...)`), with escapeScript
//     taken from rsc-html-stream/server.js.
//
// A page whose payload rscflight refuses to decode (rhs-split-then-binary:
// the client drops a byte and the payload that reaches React is malformed)
// must be refused by the rewriter too, with exit status 1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const htmlDir = path.join(root, 'fixtures/html');
const genDir = path.join(htmlDir, 'gen');
const nextAppDir = path.join(genDir, 'next-app');
const cli = path.resolve(process.argv[2] || path.join(root, 'build/rscflight'));

const lib = await import(path.join(genDir, 'lib.mjs'));
const { executableScripts, nextRuntimePayload, rscHtmlStreamRuntimePayload } = lib;
const nextRequire = createRequire(path.join(nextAppDir, 'package.json'));
const nextVersion = nextRequire('next/package.json').version;
const { htmlEscapeJsonString } = nextRequire('next/dist/shared/lib/htmlescape.js');
const genRequire = createRequire(path.join(root, 'fixtures/gen/lib/'));
const { dumpEqual, firstDiff } = genRequire('./compare.js');

// rsc-html-stream's escapeScript, from its own source (not exported).
const rhsServer = fs.readFileSync(
  createRequire(path.join(genDir, 'package.json')).resolve('rsc-html-stream/server'), 'utf8');
const escStart = rhsServer.indexOf('function escapeScript(');
if (escStart < 0) throw new Error('escapeScript not found in rsc-html-stream/server.js');
const escapeScript = new Function(
  rhsServer.slice(escStart, rhsServer.indexOf('\n}\n', escStart) + 2) + '; return escapeScript;')();

const NEXT_RULES = [
  [['/_next/', 'https://cdn.example/_next/']],
  [['/_next/', '</script><!--<script>&\u2028\u2029"\\/_next/'],
    ['rscflight', '<!--<script>x</script>&amp;\u2029 rscflight']],
];
const RHS_RULES = [[
  ['0: ', '</script><!--<script>&\u2028<b>0: '],
  ['loading', 'https://cdn.example/loading</SCRIPT>'],
  ['rsc-html-stream', '<!-- rsc-html-stream -->'],
  ['\u00dcn\u00ef', '&lt;\u2029\u00dcn\u00ef'],
  ['xxx', '<\/script>xxx'],
  ['a', '</script>a'],
]];
const REFUSED = new Set(['rhs-split-then-binary.html']);

// ---- the page as the browser runs it --------------------------------------
// What each executable script pushes, run on its own: Next.js [kind, value],
// rsc-html-stream a string or bytes. null for a script that pushes nothing.
function pushesOf(code, flavor) {
  const ctx = vm.createContext({ atob, TextEncoder });
  ctx.self = ctx;
  ctx.window = ctx;
  if (flavor === 'next') ctx.__next_f = [];
  try {
    vm.runInContext(code, ctx, { timeout: 1000 });
  } catch {
    return null; // a script that needs a DOM
  }
  const got = flavor === 'next' ? ctx.__next_f : ctx.__FLIGHT_DATA;
  if (!got || !got.length) return null;
  return Array.from(got, (v) => (ArrayBuffer.isView(v)
    ? { bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') } : v));
}

// What the framework writes for one push's value.
function frameworkScript(flavor, value) {
  if (flavor === 'next') return `self.__next_f.push(${htmlEscapeJsonString(JSON.stringify(value))})`;
  const chunk = typeof value === 'string' ? JSON.stringify(value)
    : `Uint8Array.from(atob(${JSON.stringify(value.bytes)}), m => m.codePointAt(0))`;
  return escapeScript(`(self.__FLIGHT_DATA||=[]).push(${chunk})`);
}

// Script text ranges (string offsets) of the executable scripts, as parse5
// locates them, in document order.
const { parse } = await import(pathToFileURL(
  createRequire(path.join(genDir, 'package.json')).resolve('parse5')).href);
function scriptRanges(html) {
  const doc = parse(html, { scriptingEnabled: true, sourceCodeLocationInfo: true });
  const texts = new Set(executableScripts(html));
  const out = [];
  const walk = (node) => {
    if (node.nodeName === 'script' && node.sourceCodeLocation && node.sourceCodeLocation.endTag) {
      const loc = node.sourceCodeLocation;
      const text = node.childNodes.map((c) => c.value ?? '').join('');
      if (texts.has(text)) out.push({ b: loc.startTag.endOffset, e: loc.endTag.startOffset, text });
    }
    for (const k of node.childNodes || []) walk(k);
    if (node.content) walk(node.content);
  };
  walk(doc);
  return out;
}

// ---- the expected tree ----------------------------------------------------
function rewriteString(s, rules) {
  for (const [from, to] of rules) if (s.startsWith(from)) return to + s.slice(from.length);
  return s;
}
function expectTree(v, rules) {
  if (typeof v === 'string') return rewriteString(v, rules);
  if (Array.isArray(v)) return v.map((x) => expectTree(x, rules));
  if (v && typeof v === 'object') {
    const o = {};
    const ref = v.$ === 'client_ref' || v.$ === 'server_ref';
    for (const [k, x] of Object.entries(v)) {
      o[k] = k === '$' || (ref && (k === 'id' || k === 'name')) ? x : expectTree(x, rules);
    }
    return o;
  }
  return v;
}

// ---- main -----------------------------------------------------------------
const t0 = Date.now();
const index = JSON.parse(fs.readFileSync(path.join(htmlDir, 'index.json'), 'utf8'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rscflight-rewrite-html-'));
const failures = [];
const fail = (m) => { failures.push(m); console.log('FAIL ' + m); };
const cases = [];
let refused = 0;

for (const e of index.fixtures) {
  const flavor = e.flavor;
  const file = path.join(htmlDir, e.html);
  const page = fs.readFileSync(file);
  const html = page.toString('utf8');
  const readPayload = async (h) => (flavor === 'next' ? nextRuntimePayload(h, nextAppDir)
    : await rscHtmlStreamRuntimePayload(h)).bytes;
  const before = await readPayload(html);
  const orig = path.join(tmp, `${e.html}.orig.rsc`);
  fs.writeFileSync(orig, before);
  const ruleSets = flavor === 'next' ? NEXT_RULES : RHS_RULES;
  for (let ri = 0; ri < ruleSets.length; ri++) {
    const rules = ruleSets[ri];
    const args = ['rewrite'];
    for (const [from, to] of rules) args.push('--replace-prefix', from, to);
    args.push(file);
    const r = spawnSync(cli, args, { maxBuffer: 256 << 20 });
    const label = `${e.html} [rules ${ri + 1}]`;
    if (REFUSED.has(e.html)) {
      const d = spawnSync(cli, ['dump', file]);
      if (r.status !== 1 || d.status !== 1) fail(`${label}: expected the rewriter and the decoder to refuse the page (rewrite ${r.status}, dump ${d.status})`);
      else refused++;
      continue;
    }
    if (r.status !== 0) { fail(`${label}: rscflight rewrite exit ${r.status}: ${r.stderr}`); continue; }
    const out = r.stdout.toString('utf8');
    const after = await readPayload(out);
    const outFile = path.join(tmp, `${e.html}.${ri}.rsc`);
    fs.writeFileSync(outFile, after);

    // 3 and 4: the scripts
    const a = scriptRanges(html), b = scriptRanges(out);
    if (a.length !== b.length) { fail(`${label}: ${a.length} scripts became ${b.length}`); continue; }
    let changed = 0, pos = 0, bpos = 0;
    for (let i = 0; i < a.length; i++) {
      const pa = pushesOf(a[i].text, flavor), pb = pushesOf(b[i].text, flavor);
      if (html.slice(pos, a[i].b) !== out.slice(bpos, b[i].b)) fail(`${label}: page text before script ${i} changed`);
      pos = a[i].e;
      bpos = b[i].e;
      if (JSON.stringify(pa) === JSON.stringify(pb)) {
        if (a[i].text !== b[i].text) fail(`${label}: script ${i} pushes the same value but its text changed`);
        continue;
      }
      changed++;
      if (!pb || pb.length !== 1) { fail(`${label}: rewritten script ${i} does not push one value`); continue; }
      let value = pb[0];
      if (flavor === 'next' && value[0] === 3) value = [3, Buffer.from(atob(value[1]), 'latin1').toString('base64')];
      const want = frameworkScript(flavor, value);
      if (b[i].text !== want) fail(`${label}: script ${i} is not what ${flavor} writes:\n  got  ${b[i].text.slice(0, 300)}\n  want ${want.slice(0, 300)}`);
    }
    if (html.slice(pos) !== out.slice(bpos)) fail(`${label}: page text after the last script changed`);
    cases.push({ label, orig, outFile, rules, changed, bytes: [page.length, r.stdout.length] });
  }
}

// 2: the trees, decoded by React 19.3.1's client in one worker process
const jobs = [];
for (const c of cases) {
  jobs.push({ key: c.orig, file: c.orig, split: 'whole' });
  jobs.push({ key: c.outFile, file: c.outFile, split: 'whole' });
}
const jf = path.join(tmp, 'jobs.json'), of = path.join(tmp, 'out.json');
fs.writeFileSync(jf, JSON.stringify(jobs.filter((j, i) => jobs.findIndex((k) => k.key === j.key) === i)));
execFileSync(process.execPath, [path.join(genDir, 'next-oracle.mjs'), '--worker', '19.3.1', 'fix', jf, of],
  { env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'inherit', 'inherit'] });
const res = JSON.parse(fs.readFileSync(of, 'utf8'));
let stringsChanged = 0;
const count = (a, b) => {
  if (typeof a === 'string') return a !== b ? 1 : 0;
  if (a && typeof a === 'object') return Object.keys(a).reduce((n, k) => n + count(a[k], b[k]), 0);
  return 0;
};
for (const c of cases) {
  const o = res.results[c.orig], n = res.results[c.outFile];
  if (!o.dump || o.uncaught.length || o.hang) { fail(`${c.label}: the original payload gave no clean tree`); continue; }
  if (!n.dump || n.uncaught.length || n.hang) { fail(`${c.label}: the rewritten payload gave no clean tree: ${JSON.stringify(n).slice(0, 300)}`); continue; }
  const want = expectTree(o.dump, c.rules);
  if (!dumpEqual(want, n.dump)) {
    const d = firstDiff(want, n.dump);
    fail(`${c.label}: the rewritten tree differs at ${d}`);
    continue;
  }
  const k = count(want, o.dump);
  stringsChanged += k;
  console.log(`ok ${c.label}: ${c.changed} script(s) rewritten, ${k} string(s) in the tree changed, page ${c.bytes[0]} -> ${c.bytes[1]} bytes`);
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`rewrite-html: ${cases.length} rewrites of ${index.fixtures.length} pages checked ` +
  `(next@${nextVersion} reader and htmlescape, rsc-html-stream reader and escapeScript, React ${res.reactVersion} client), ` +
  `${stringsChanged} strings changed in the trees, ${refused} refusal(s) as expected, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (failures.length) {
  console.log(`rewrite-html: ${failures.length} failure(s)`);
  process.exit(1);
}
