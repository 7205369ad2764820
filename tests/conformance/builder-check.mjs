// React 19.3.1's own client on what the builder wrote: every tree of
// tests/builder_trees.c (written to DIR by the builder_trees program as
// NAME.rsc, with its intended dump as NAME.dump) is decoded with
// react-server-dom-webpack's createFromNodeStream, every chunk awaited
// (fixtures/gen/lib/oracle.js, as fixtures/gen does for its expected dumps),
// and React's canonical dump must equal the intended one and
// `rscflight dump` of the same bytes.
// usage: NODE_ENV=production node tests/conformance/builder-check.mjs DIR RSCFLIGHT
// Runs without the react-server condition (the client must not see it).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const gen = path.join(path.dirname(new URL(import.meta.url).pathname), '../../fixtures/gen/lib/');
const { decode, React } = require(gen + 'oracle.js');
const { dumpEqual, firstDiff } = require(gen + 'compare.js');

const [dir, cli] = process.argv.slice(2);
if (!dir || !cli) {
  console.error('usage: builder-check.mjs DIR RSCFLIGHT');
  process.exit(2);
}
if (React.version !== '19.3.1') throw new Error('expected React 19.3.1, loaded ' + React.version);
const names = fs.readFileSync(path.join(dir, 'trees.txt'), 'utf8').split('\n').filter(Boolean);
let bad = 0;
for (const name of names) {
  const bytes = fs.readFileSync(path.join(dir, name + '.rsc'));
  const intended = JSON.parse(fs.readFileSync(path.join(dir, name + '.dump'), 'utf8'));
  const r = await decode([bytes]);
  const problems = [];
  if (r.uncaught && r.uncaught.length) problems.push('uncaught: ' + JSON.stringify(r.uncaught));
  if (!r.dump) problems.push('React gave no dump: ' + JSON.stringify(r));
  else if (!dumpEqual(r.dump, intended))
    problems.push('React differs from the intended value at ' + firstDiff(r.dump, intended) +
      '\n  react:    ' + JSON.stringify(r.dump).slice(0, 400) + '\n  intended: ' + JSON.stringify(intended).slice(0, 400));
  let ours;
  try {
    ours = JSON.parse(execFileSync(cli, ['dump', path.join(dir, name + '.rsc')], { maxBuffer: 1 << 26 }).toString('utf8'));
  } catch (e) {
    problems.push('rscflight dump failed: ' + (e.stderr ? e.stderr.toString() : e.message));
  }
  if (ours && r.dump && !dumpEqual(r.dump, ours)) problems.push('rscflight differs from React at ' + firstDiff(r.dump, ours));
  if (problems.length) {
    bad++;
    console.log('FAIL ' + name + ': ' + problems.join('; '));
  }
}
console.log(`builder: ${names.length - bad} of ${names.length} trees: React ${React.version}'s client, the intended value and rscflight agree`);
process.exit(bad ? 1 : 0);
