// Opens `rscflight report` pages in headless Chromium with no network and
// checks them: no console error or page error, no request but file: and
// data:, a tooltip on hover with the item's bytes and place, zoom in and out,
// and the treemap's largest items against the tables `rscflight stats`
// prints (chunks by id and bytes; components by name and own bytes).
// Usage: node report-test.mjs CLI OUTDIR FIXTURE... (scripts/test.d/75-report.sh)
// Prints one line per fixture: report bytes, and the times from navigation
// to the page drawn by its script, to the load event and to first paint.
import { execFileSync } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [cli, outdir, ...fixtures] = process.argv.slice(2);
if (!cli || !outdir || !fixtures.length) {
  console.error("usage: node report-test.mjs CLI OUTDIR FIXTURE...");
  process.exit(2);
}
mkdirSync(outdir, { recursive: true });
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const failures = [];
const fail = (what, msg) => failures.push(`${what}: ${msg}`);

// "Largest chunks" and "Bytes per component" from `rscflight stats`.
function statsTables(file) {
  const text = execFileSync(cli, ["stats", "--top", "10", file], { encoding: "utf8" });
  const lines = text.split("\n");
  const total = +(/: (\d+) bytes,/.exec(lines[0]) || [0, 0])[1];
  const section = (title) => {
    const at = lines.findIndex((l) => l.startsWith(title));
    const out = [];
    for (let i = at + 2; at >= 0 && i < lines.length && lines[i].startsWith("  "); i++) out.push(lines[i]);
    return out;
  };
  const chunks = [];
  for (const l of section("Largest chunks")) {
    const m = /^  (\S+)\s+.{20}\s+(\d+)\s+(\d+)\s+[\d.]+%/u.exec(l);
    if (m) chunks.push({ id: m[1], bytes: +m[3] });
  }
  const comps = [];
  for (const l of section("Bytes per component")) {
    const m = /^  (.{32}) (\S+)\s+(\d+)\s+(\d+)\s+[\d.]+%\s+(\d+)$/u.exec(l);
    if (m) comps.push({ name: m[1].trimEnd(), kind: m[2], self: +m[4] });
  }
  return { chunks, comps, total };
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
});
const results = [];
try {
  for (const fixture of fixtures) {
    const name = path.basename(fixture).replace(/\.[^.]+$/, "");
    const html = path.join(outdir, `${name}.html`);
    execFileSync(cli, ["report", fixture, "-o", html]);
    const stats = statsTables(fixture);
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 1000 });
    await page.setRequestInterception(true);
    page.on("request", (req) => {
      const url = req.url();
      if (url.startsWith("file:") || url.startsWith("data:")) req.continue();
      else {
        fail(name, `a request for ${url}`);
        req.abort();
      }
    });
    page.on("console", (msg) => {
      if (msg.type() === "error") fail(name, `console error: ${msg.text()}`);
    });
    page.on("pageerror", (err) => fail(name, `page error: ${err.message}`));
    await page.goto("file://" + path.resolve(html), { waitUntil: "load", timeout: 30000 });
    await page.waitForSelector("body[data-ready='1']", { timeout: 10000 });
    // Times from navigation: the page drawn by its script (treemap, tables,
    // timeline), the load event, the first contentful paint.
    const timing = await page.evaluate(() => new Promise((resolve) => {
      const nav = performance.getEntriesByType("navigation")[0];
      const done = (paint) => resolve({ ready: +document.body.dataset.readyMs, load: nav ? nav.loadEventEnd : -1, paint });
      const po = new PerformanceObserver((list) => {
        const p = list.getEntries().find((e) => e.name === "first-contentful-paint");
        if (p) done(p.startTime);
      });
      po.observe({ type: "paint", buffered: true });
      setTimeout(() => done(-1), 3000);
    }));
    await page.screenshot({ path: path.join(outdir, `${name}.png`) });

    // The treemap's chunks (rows of one id, at the top level or in a group
    // of small ones), against stats' largest chunks.
    const cells = await page.$$eval("#map .cell[data-kind='c']", (els) =>
      els.map((e) => ({ key: e.dataset.key ?? null, bytes: +e.dataset.bytes, name: e.dataset.name })));
    if (!cells.length) fail(name, "no treemap cells");
    // the page folds items under 0.1 % of their parent: the rest must show
    const top = stats.chunks.slice(0, 5).filter((c) => c.bytes * 1000 >= stats.total);
    for (const c of top) {
      if (!cells.some((x) => x.key === c.id && x.bytes === c.bytes))
        fail(name, `stats lists chunk ${c.id} (${c.bytes} bytes); the treemap has no such cell`);
    }
    const drawn = [...cells].filter((x) => x.key !== null).sort((a, b) => b.bytes - a.bytes).slice(0, top.length);
    const statBytes = top.map((c) => c.bytes).join(",");
    if (drawn.map((x) => x.bytes).join(",") !== statBytes)
      fail(name, `largest cells ${drawn.map((x) => x.key + ":" + x.bytes)} vs stats ${top.map((c) => c.id + ":" + c.bytes)}`);

    // Hover the largest cell: the tooltip names it, with its bytes and place.
    const big = await page.$("#map > .cell");
    const bigInfo = await big.evaluate((e) => ({ name: e.dataset.name, bytes: +e.dataset.bytes, key: e.dataset.key }));
    const box = await big.boundingBox();
    await page.mouse.move(box.x + 3, box.y + 3);
    const tipText = await page.$eval("#tip", (t) => (t.style.display === "block" ? t.textContent : ""));
    const bytesText = bigInfo.bytes.toLocaleString("en-US") + " bytes";
    if (!tipText.includes(bigInfo.name) || !tipText.includes(bytesText) ||
        (bigInfo.key && !tipText.includes("row " + bigInfo.key)))
      fail(name, `tooltip "${tipText}" lacks "${bigInfo.name}", "${bytesText}" or its row`);

    // Click zooms into it (the time to draw the zoomed map is kept); the
    // first breadcrumb zooms back out.
    let zoomMs = -1;
    const zoomable = await page.$$eval("#map > .cell", (els) => els.findIndex((e) => e.querySelector(".cell")));
    if (zoomable >= 0) {
      const cellsNow = await page.$$("#map > .cell");
      const b2 = await cellsNow[zoomable].boundingBox();
      await page.mouse.click(b2.x + 3, b2.y + 3);
      zoomMs = +(await page.$eval("#map", (m) => m.dataset.renderMs));
      const crumbs = await page.$$eval("#crumbs a", (a) => a.length);
      if (crumbs < 2) fail(name, "a click did not zoom in");
      await page.click("#crumbs a");
      const back = await page.$$eval("#crumbs a", (a) => a.length);
      if (back !== 1) fail(name, "the first breadcrumb did not zoom out");
    }

    // Components: names and own bytes as stats prints them.
    await page.click("#m-comps");
    const comps = await page.$$eval("#map > .cell", (els) =>
      els.map((e) => ({ name: e.dataset.name, bytes: +e.dataset.bytes })));
    for (const c of stats.comps.slice(0, 5)) {
      const prefix = c.name.endsWith("…") ? c.name.slice(0, -1) : c.name;
      const hit = comps.some((x) => x.bytes === c.self && (x.name === c.name || x.name.startsWith(prefix + " (") ||
        (c.name.endsWith("…") && x.name.startsWith(prefix))));
      if (!hit && c.self * 1000 >= stats.total)
        fail(name, `stats lists component ${c.name} (${c.self} bytes); the components treemap has no such cell`);
    }
    await page.click("#m-rows");

    // The stream: hovering the timeline explains a row.
    const cv = await page.$("#stream");
    const cb = await cv.boundingBox();
    await page.mouse.move(cb.x + cb.width / 2, cb.y + cb.height / 2);
    const streamTip = await page.$eval("#tip", (t) => (t.style.display === "block" ? t.textContent : ""));
    if (!/bytes at offset/.test(streamTip)) fail(name, `timeline tooltip "${streamTip}"`);
    await page.close();
    const size = statSync(html).size;
    results.push({ fixture, input: statSync(fixture).size, report: size, ready_ms: timing.ready,
      load_ms: timing.load, paint_ms: timing.paint, zoom_ms: zoomMs });
    console.log(`${fixture}: ${statSync(fixture).size} bytes -> report ${size} bytes; ` +
      `drawn ${timing.ready.toFixed(0)} ms, load ${timing.load.toFixed(0)} ms, ` +
      `first paint ${timing.paint.toFixed(0)} ms; a zoom redraws in ${zoomMs.toFixed(0)} ms`);
  }
} finally {
  await browser.close();
}
writeFileSync(path.join(outdir, "results.json"), JSON.stringify(results, null, 1));
if (failures.length) {
  for (const f of failures) console.error("FAIL " + f);
  process.exit(1);
}
console.log(`report pages: ${fixtures.length} opened in Chromium, all checks passed`);
