'use strict';
// The JS floor: frame a Flight payload into rows exactly as the protocol does
// (docs/spec/FLIGHT-PROTOCOL.md 2.1-2.4) and JSON.parse every JSON row body. No
// revival.

// LENTAG: rows with "<hex len>," and exactly that many bytes, no terminator.
const LENTAG = new Uint8Array(256);
for (const c of 'TAOoUSsLlGgMmVb') LENTAG[c.charCodeAt(0)] = 1;

// Newline tags: A-Z not in LENTAG, '#', 'r', 'x'.
const NLTAG = new Uint8Array(256);
for (let c = 0x41; c <= 0x5a; c++) if (!LENTAG[c]) NLTAG[c] = 1;
for (const c of '#rx') NLTAG[c.charCodeAt(0)] = 1;

const TAG_H = 0x48;
const TAG_T = 0x54;
// Newline tags whose body is not JSON at all (empty body: stream starts).
const NO_JSON = new Uint8Array(256);
for (const c of 'RrXx') NO_JSON[c.charCodeAt(0)] = 1;

// Returns {rows, json, text, binary, bad, sink}; `sink` keeps results reachable.
function parseRows(buf) {
  const n = buf.length;
  let i = 0;
  let rows = 0, json = 0, text = 0, binary = 0, bad = 0;
  let sink = 0;
  while (i < n) {
    // id
    while (i < n && buf[i] !== 0x3a) i++;
    if (i >= n) break; // partial row at end: dropped
    i++;
    if (i >= n) break;
    const t = buf[i];
    if (LENTAG[t]) {
      i++;
      let len = 0;
      while (i < n && buf[i] !== 0x2c) {
        const c = buf[i++];
        len = (len << 4) | (c > 0x60 ? c - 87 : c - 48);
      }
      i++; // ','
      const end = i + len;
      if (end > n) break; // truncated
      if (t === TAG_T) {
        const s = buf.toString('utf8', i, end);
        sink += s.length;
        text++;
      } else {
        const v = buf.subarray(i, end);
        sink += v.length;
        binary++;
      }
      i = end;
      rows++;
      continue;
    }
    let tag = 0;
    if (NLTAG[t]) {
      tag = t;
      i++;
    }
    const nl = buf.indexOf(0x0a, i);
    if (nl < 0) break; // last row without LF: never processed
    rows++;
    if (nl > i && !NO_JSON[tag]) {
      // H rows: one hint-code character precedes the JSON.
      const start = tag === TAG_H ? i + 1 : i;
      // (N rows hold a bare number: JSON.parse takes it too.) React does not
      // fail the stream on a bad model row, so neither does the floor.
      try {
        const v = JSON.parse(buf.toString('utf8', start, nl));
        sink += v === null ? 0 : 1;
        json++;
      } catch (e) {
        bad++;
      }
    }
    i = nl + 1;
  }
  return { rows, json, text, binary, bad, sink };
}

module.exports = { parseRows };
