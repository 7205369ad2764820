'use strict';
// Loads one of the React Flight clients under test, each with its own React.
//
//   "19.3.1" -> react-server-dom-webpack (+ react, react-dom) 19.3.1
//   "19.2.9" -> rsdw-19.2.9 (+ react-19.2.9, react-dom-19.2.9): npm aliases
//
// The aliased 19.2.9 packages still say require("react") / require("react-dom")
// inside; plain Node resolution would hand them the top-level 19.3.1 copies.
// A Module._resolveFilename hook rewrites those requests, but ONLY when the
// requiring file lives inside one of the aliased package directories, so
// nothing else in the process is affected. loadClient() then checks, from
// require.cache, which React files were really loaded and fails loudly if the
// other version's React leaked in.

const Module = require('module');
const path = require('path');

const NM = path.join(__dirname, 'node_modules');

const VERSIONS = {
  '19.3.1': {
    rsdw: 'react-server-dom-webpack',
    react: 'react',
    reactDom: 'react-dom',
  },
  '19.2.9': {
    rsdw: 'rsdw-19.2.9',
    react: 'react-19.2.9',
    reactDom: 'react-dom-19.2.9',
  },
};

// Bare specifiers the aliased packages use, and what they are rewritten to.
const ALIAS_REWRITES = {
  react: 'react-19.2.9',
  'react-dom': 'react-dom-19.2.9',
  'react-server-dom-webpack': 'rsdw-19.2.9',
};
const ALIASED_DIRS = Object.values(VERSIONS['19.2.9']).map(
  (p) => path.join(NM, p) + path.sep,
);

let hookInstalled = false;
function installAliasHook() {
  if (hookInstalled) return;
  hookInstalled = true;
  const orig = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, isMain, options) {
    const from = parent && parent.filename;
    if (from && ALIASED_DIRS.some((d) => from.startsWith(d))) {
      // "react", "react/jsx-runtime", "react-dom", "react-dom/server", ...
      const m = /^(react-server-dom-webpack|react-dom|react)(\/.*)?$/.exec(request);
      if (m) request = ALIAS_REWRITES[m[1]] + (m[2] || '');
    }
    return orig.call(this, request, parent, isMain, options);
  };
}

function pkgVersion(dir) {
  return require(path.join(NM, dir, 'package.json')).version;
}

// Which package directories under node_modules have files in require.cache.
function loadedPackages() {
  const seen = new Set();
  for (const f of Object.keys(require.cache)) {
    if (!f.startsWith(NM + path.sep)) continue;
    seen.add(f.slice(NM.length + 1).split(path.sep)[0]);
  }
  return seen;
}

function loadedReactFiles() {
  return Object.keys(require.cache)
    .filter((f) => f.startsWith(NM + path.sep))
    .map((f) => path.relative(__dirname, f))
    .filter((f) => /node_modules[\\/](react|react-dom|react-19\.2\.9|react-dom-19\.2\.9)[\\/]/.test(f));
}

function loadClient(version) {
  const v = VERSIONS[version];
  if (!v) throw new Error(`unknown client ${version}; expected one of ${Object.keys(VERSIONS)}`);
  if (version === '19.2.9') installAliasHook();
  const client = require(path.join(NM, v.rsdw, 'client.node.js'));

  // Verify the React the client was given.
  const loaded = loadedPackages();
  const other = version === '19.2.9' ? VERSIONS['19.3.1'] : VERSIONS['19.2.9'];
  for (const k of ['react', 'reactDom']) {
    if (!loaded.has(v[k])) throw new Error(`client ${version}: ${v[k]} was not loaded`);
    if (loaded.has(other[k])) throw new Error(`client ${version}: wrong React loaded (${other[k]})`);
  }
  const reactPath = require.resolve(path.join(NM, v.react));
  const React = require.cache[reactPath] && require.cache[reactPath].exports;
  if (!React || React.version !== version) {
    throw new Error(`client ${version}: React.version is ${React && React.version}`);
  }
  if (pkgVersion(v.rsdw) !== version || pkgVersion(v.reactDom) !== version) {
    throw new Error(`client ${version}: installed package versions do not match`);
  }
  return { client, React, reactFiles: loadedReactFiles() };
}

module.exports = { loadClient, VERSIONS, pkgVersion, loadedReactFiles };
