// bench/studies/ondemand.cpp - a study, not part of the build (eleventh
// round, docs/performance.md): simdjson's On-Demand front end against the
// DOM parse plus a plain recursive tape walk, both building 16-byte nodes
// and 32-byte members from every JSON row of a payload.
//
//   g++ -O3 -march=native -std=c++17 bench/studies/ondemand.cpp -lsimdjson \
//       -o /tmp/ondemand && taskset -c 1 /tmp/ondemand fixtures/react/19.3.1/prod/page-16k.rsc
//
// -march=native: On-Demand runs only in the kernel the build targets.
// Rows are framed roughly (enough for the fixtures: newline rows, and the
// length-prefixed text and binary rows skipped); medians of 15 timings.
#include <simdjson.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>
using namespace simdjson;
struct node { uint8_t kind; uint8_t sub; uint16_t flags; uint32_t len; union { double num; const char *str; node *items; void *members; } u; };
struct member { const char *key; uint32_t klen, pad; node val; };
static_assert(sizeof(node) == 16, "");
struct arena { std::vector<char> buf; size_t used = 0; void *alloc(size_t n) { n = (n + 15) & ~15ul; if (used + n > buf.size()) { fprintf(stderr, "arena full\n"); exit(1);} void *p = buf.data() + used; used += n; return p; } };
static arena A;
// ---- DOM tape walk (recursive, simplified from tape_converter)
static const uint64_t *tape; static const uint8_t *sbuf;
static uint8_t ty(uint64_t w) { return uint8_t(w >> 56); }
static const uint64_t *walk_tape(const uint64_t *p, node *out) {
  uint64_t w = *p; uint8_t t = ty(w);
  switch (t) {
  case '"': { const uint8_t *sp = sbuf + (w & 0xFFFFFFFFFFFFFFull); uint32_t n; memcpy(&n, sp, 4); out->kind = 1; out->flags = sp[4] == '$'; out->len = n; out->u.str = (const char *)sp + 4; return p + 1; }
  case '[': { uint32_t n = uint32_t((w >> 32) & 0xFFFFFF); node *items = (node *)A.alloc(16 * (n ? n : 1)); out->kind = 2; out->len = n; out->u.items = items; const uint64_t *q = p + 1; const uint64_t *end = tape + uint32_t(w) - 1; node *d = items; while (q < end) q = walk_tape(q, d++); return end + 1; }
  case '{': { uint32_t n = uint32_t((w >> 32) & 0xFFFFFF); member *m = (member *)A.alloc(32 * (n ? n : 1)); out->kind = 3; out->len = n; out->u.members = m; const uint64_t *q = p + 1; const uint64_t *end = tape + uint32_t(w) - 1; while (q < end) { const uint8_t *sp = sbuf + (*q & 0xFFFFFFFFFFFFFFull); uint32_t kl; memcpy(&kl, sp, 4); m->key = (const char *)sp + 4; m->klen = kl; q = walk_tape(q + 1, &m->val); m++; } return end + 1; }
  case 'l': { int64_t v; memcpy(&v, p + 1, 8); out->kind = 4; out->u.num = double(v); return p + 2; }
  case 'u': { uint64_t v; memcpy(&v, p + 1, 8); out->kind = 4; out->u.num = double(v); return p + 2; }
  case 'd': { double v; memcpy(&v, p + 1, 8); out->kind = 4; out->u.num = v; return p + 2; }
  case 't': case 'f': out->kind = 5; out->u.num = t == 't'; return p + 1;
  default: out->kind = 6; return p + 1;
  }
}
// ---- On-Demand walk: children gathered on a scratch stack, then copied.
static std::vector<node> nstack; static std::vector<member> mstack;
static char *copy_str(std::string_view s) { char *d = (char *)A.alloc(s.size() + 1); memcpy(d, s.data(), s.size()); d[s.size()] = 0; return d; }
template <class V> static error_code walk_od(V &&v, node *out) {
  ondemand::json_type t; auto e = v.type().get(t); if (e) return e;
  switch (t) {
  case ondemand::json_type::array: {
    ondemand::array arr; if ((e = v.get_array().get(arr))) return e;
    size_t base = nstack.size();
    for (auto el : arr) { ondemand::value x; if ((e = std::move(el).get(x))) return e; nstack.emplace_back(); node tmp; if ((e = walk_od(x, &tmp))) return e; nstack[nstack.size() - 1] = tmp; }
    size_t n = nstack.size() - base; node *items = (node *)A.alloc(16 * (n ? n : 1)); memcpy(items, nstack.data() + base, 16 * n); nstack.resize(base);
    out->kind = 2; out->len = n; out->u.items = items; return SUCCESS; }
  case ondemand::json_type::object: {
    ondemand::object obj; if ((e = v.get_object().get(obj))) return e;
    size_t base = mstack.size();
    for (auto f : obj) { ondemand::field fl; if ((e = std::move(f).get(fl))) return e; std::string_view k; if ((e = fl.unescaped_key().get(k))) return e; member m; m.key = copy_str(k); m.klen = k.size(); if ((e = walk_od(fl.value(), &m.val))) return e; mstack.push_back(m); }
    size_t n = mstack.size() - base; member *ms = (member *)A.alloc(32 * (n ? n : 1)); memcpy(ms, mstack.data() + base, 32 * n); mstack.resize(base);
    out->kind = 3; out->len = n; out->u.members = ms; return SUCCESS; }
  case ondemand::json_type::string: { std::string_view s; if ((e = v.get_string().get(s))) return e; out->kind = 1; out->len = s.size(); out->u.str = copy_str(s); out->flags = s.size() && s[0] == '$'; return SUCCESS; }
  case ondemand::json_type::number: { double d; if ((e = v.get_double().get(d))) return e; out->kind = 4; out->u.num = d; return SUCCESS; }
  case ondemand::json_type::boolean: { bool b; if ((e = v.get_bool().get(b))) return e; out->kind = 5; out->u.num = b; return SUCCESS; }
  default: { bool isnull; if ((e = v.is_null().get(isnull))) return e; out->kind = 6; return SUCCESS; }
  }
}
int main(int argc, char **argv) {
  A.buf.resize(512 << 20);
  for (int fi = 1; fi < argc; fi++) {
    FILE *f = fopen(argv[fi], "rb"); std::string data; char b[65536]; size_t r; while ((r = fread(b, 1, sizeof b, f))) data.append(b, r); fclose(f);
    // JSON rows (newline rows whose tag is not a letter); T rows skipped by length.
    std::vector<padded_string> rows; size_t i = 0, total = 0;
    while (i < data.size()) {
      size_t c = data.find(':', i); size_t j = c + 1; char tag = data[j];
      if (tag == 'T' || (tag >= 'A' && tag <= 'Z' && tag != 'I' && tag != 'H' && tag != 'D' && tag != 'E' && tag != 'W')) {
        if (tag == 'T' || tag == 'A' || tag=='O'||tag=='o'||tag=='U'||tag=='S'||tag=='s'||tag=='L'||tag=='l'||tag=='G'||tag=='g'||tag=='M'||tag=='m'||tag=='V'||tag=='b') { size_t comma = data.find(',', j); size_t n = strtoul(data.substr(j + 1, comma - j - 1).c_str(), 0, 16); i = comma + 1 + n; continue; }
      }
      size_t nl = data.find('\n', j); if (tag == 'I' || tag == 'H' || tag == 'D' || tag == 'E' || tag == 'W') j++;
      if (nl > j) { rows.emplace_back(data.data() + j, nl - j); total += nl - j; }
      i = nl + 1;
    }
    dom::parser dp; ondemand::parser op;
    auto timeit = [&](auto fn) { std::vector<double> ts; for (int k = 0; k < 15; k++) { auto t0 = std::chrono::steady_clock::now(); int reps = 0; do { A.used = 0; fn(); reps++; } while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(40)); ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps); } std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2]; };
    size_t bad = 0;
    double t_dom = timeit([&] { for (auto &r : rows) { dom::element el; if (dp.parse(r).get(el)) bad++; } });
    double t_walk = timeit([&] { for (auto &r : rows) { dom::element el; if (dp.parse(r).get(el)) { bad++; continue; } tape = dp.doc.tape.get(); sbuf = dp.doc.string_buf.get(); node root; walk_tape(tape + 1, &root); } });
    double t_od = timeit([&] { for (auto &r : rows) { ondemand::document doc; if (op.iterate(r).get(doc)) { bad++; continue; } node root; ondemand::value v; if (doc.get_value().get(v)) { /* scalar root */ std::string_view s; if (!doc.get_string().get(s)) { root.kind = 1; root.u.str = copy_str(s);} continue; } if (walk_od(v, &root)) bad++; } });
    printf("%-22s rows %5zu bytes %8zu  dom %8.1f us  dom+walk %8.1f us (%.2fx dom)  od %8.1f us (%.2fx dom, %.2fx dom+walk)  bad %zu\n", strrchr(argv[fi], '/') + 1, rows.size(), total, t_dom, t_walk, t_walk / t_dom, t_od, t_od / t_dom, t_od / t_walk, bad);
  }
}
