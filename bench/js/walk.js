'use strict';
// Force and await every value reachable from a decoded Flight root.
//
// React's client parses lazily: a model row is only JSON-parsed when someone
// reads its chunk. To make the JS side do all the work a full decoder does,
// the benchmark walks the whole value: lazies are initialised, thenables
// awaited, streams and async iterables drained, and containers walked. Already
// visited objects are skipped (cycles, dedupe). Rejections are data (an `E`
// row is a legitimate value), they are counted, not thrown.
//
// The walk is synchronous as far as it can go; everything that has to wait is
// collected and awaited together, then the walk continues with the results.

const LAZY = Symbol.for('react.lazy');
const ELEMENT = Symbol.for('react.transitional.element');
const LEGACY_ELEMENT = Symbol.for('react.element');

const hasReadableStream = typeof ReadableStream === 'function';

function isThenable(v) {
  return typeof v.then === 'function';
}

async function settleThenable(t, stats) {
  try {
    return [await t];
  } catch (e) {
    stats.rejected++;
    return [];
  }
}

// _init(_payload) throws the chunk (a thenable) while it is pending/blocked.
async function settleLazy(lazy, thrown, stats) {
  for (let tries = 0; tries < 1e6; tries++) {
    try {
      await thrown;
    } catch (e) {
      // rejected: _init will throw the reason below
    }
    try {
      return [lazy._init(lazy._payload)];
    } catch (e) {
      if (e !== null && typeof e === 'object' && typeof e.then === 'function') {
        thrown = e;
        continue;
      }
      stats.rejected++;
      return [];
    }
  }
  throw new Error('lazy never settled');
}

async function drainReadableStream(rs, stats) {
  const out = [];
  const reader = rs.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out.push(value);
      stats.streamItems++;
    }
  } catch (e) {
    stats.rejected++;
  }
  return out;
}

async function drainAsyncIterable(it, stats) {
  const out = [];
  try {
    const iter = it[Symbol.asyncIterator]();
    for (;;) {
      const r = await iter.next();
      if (r.done) {
        if (r.value !== undefined) out.push(r.value);
        break;
      }
      out.push(r.value);
      stats.streamItems++;
    }
  } catch (e) {
    stats.rejected++;
  }
  return out;
}

async function deepResolve(root) {
  const stats = { nodes: 0, lazies: 0, thenables: 0, streamItems: 0, rejected: 0 };
  const seen = new Set();
  let stack = [root];
  for (;;) {
    const pending = [];
    while (stack.length) {
      const v = stack.pop();
      if (v === null || typeof v !== 'object') continue; // primitives, functions
      if (seen.has(v)) continue;
      seen.add(v);
      stats.nodes++;

      if (isThenable(v)) {
        stats.thenables++;
        // React's thenable convention (also what React.use reads): a settled
        // chunk exposes status/value/reason.
        if (v.status === 'fulfilled') stack.push(v.value);
        else if (v.status === 'rejected') stats.rejected++;
        else pending.push(settleThenable(v, stats));
        continue;
      }
      const tag = v.$$typeof;
      if (tag === LAZY) {
        stats.lazies++;
        try {
          stack.push(v._init(v._payload));
        } catch (e) {
          if (e !== null && typeof e === 'object' && typeof e.then === 'function') {
            pending.push(settleLazy(v, e, stats));
          } else {
            stats.rejected++;
          }
        }
        continue;
      }
      if (tag === ELEMENT || tag === LEGACY_ELEMENT) {
        stack.push(v.type, v.key, v.props);
        continue;
      }
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
        continue;
      }
      if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) continue;
      if (v instanceof Map) {
        for (const [k, x] of v) stack.push(k, x);
        continue;
      }
      if (v instanceof Set) {
        for (const x of v) stack.push(x);
        continue;
      }
      if (v instanceof Date || v instanceof Error || v instanceof RegExp) continue;
      if (hasReadableStream && v instanceof ReadableStream) {
        pending.push(drainReadableStream(v, stats));
        continue;
      }
      if (typeof v[Symbol.asyncIterator] === 'function') {
        pending.push(drainAsyncIterable(v, stats));
        continue;
      }
      if (typeof v[Symbol.iterator] === 'function') {
        // sync iterators ($i), FormData, ...: single-shot, consume them
        try {
          for (const x of v) stack.push(x);
        } catch (e) {
          stats.rejected++;
        }
        continue;
      }
      // plain object (props, models, Blob internals are not enumerable)
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push(v[keys[i]]);
    }
    if (pending.length === 0) break;
    const results = await Promise.all(pending);
    stack = [];
    for (const r of results) for (const x of r) stack.push(x);
  }
  return stats;
}

module.exports = { deepResolve };
