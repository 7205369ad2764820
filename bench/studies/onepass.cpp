// bench/studies/onepass.cpp - a study, not part of the build (twenty-
// second round, docs/performance.md): each JSON model row of a payload
// parsed by the DOM parser (stage 1, stage 2 writing the tape), against stage 1 and a
// minimal one-pass walk over its structural indexes that builds 16-byte
// nodes as it goes (values on a stack, moved into an array as each
// container closes; strings through simdjson's own parse_string; integers
// only). What a decoder that skips the tape could gain at most: the
// decoder's tape walk costs about three quarters of stage 2 again, and
// this walk, which does much less than the decoder's, costs 1.25-1.44x the
// whole DOM parse (docs/performance.md, twenty-second round).
//
//   g++ -O3 -std=c++17 bench/studies/onepass.cpp -lsimdjson -o /tmp/onepass
//   /tmp/onepass fixtures/react/19.3.1/prod/page-16k.rsc
//
// Rows are framed as bench/simdjson/batch.cpp frames them. The walk checks
// nothing a real one must (grammar, literals, numbers): it is a bound.
#include <simdjson.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>
using namespace simdjson;
static bool length_tag(char c) { return std::strchr("TAOoUSsLlGgMmVb", c) && c; }
struct node { uint8_t kind, sub; uint16_t flags; uint32_t len; union { double num; const void *p; } u; };
static node scratch[1<<20]; static node arena[1<<22]; static size_t apos;
static uint8_t sbuf[1<<24];
struct open { size_t start; bool obj; };
static size_t cnt;
// one pass: returns false on bail
static bool fused(dom::parser &ps, const uint8_t *buf, size_t len) {
  auto &impl = *ps.implementation;
  if (impl.stage1(buf, len, stage1_mode::regular)) return false;
  const uint32_t *idx = impl.structural_indexes.get();
  uint32_t n = impl.n_structural_indexes;
  uint8_t *sp = sbuf;
  open stack[1024]; int top = 0;
  size_t s = 0; // scratch top
  apos = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *c = buf + idx[i];
    switch (*c) {
    case '[': case '{': stack[top++] = open{s, *c == '{'}; break;
    case ']': case '}': {
      open o = stack[--top];
      size_t k = s - o.start;
      node *items = arena + apos; apos += k;
      memcpy(items, scratch + o.start, k * sizeof(node));
      s = o.start;
      scratch[s].kind = *c; scratch[s].len = (uint32_t)k; scratch[s].u.p = items; s++;
      break; }
    case ',': case ':': break;
    case '"': {
      uint8_t *dst = impl.parse_string(c + 1, sp + 4);
      if (!dst) return false;
      uint32_t l = uint32_t(dst - sp - 4); memcpy(sp, &l, 4); *dst = 0;
      scratch[s].kind = 's'; scratch[s].len = l; scratch[s].u.p = sp + 4; s++;
      sp = dst + 1;
      break; }
    case 't': case 'f': case 'n': scratch[s].kind = *c; s++; break;
    default: {
      int64_t v = 0; const uint8_t *q = c; bool neg = *q == '-'; q += neg;
      while (*q >= '0' && *q <= '9') v = v * 10 + (*q++ - '0');
      scratch[s].kind = 'd'; scratch[s].u.num = neg ? -double(v) : double(v); s++;
    }
    }
  }
  cnt += s;
  return true;
}
int main(int argc, char **argv) {
  FILE *f = std::fopen(argv[1], "rb"); std::string s; char b[65536]; size_t got;
  while ((got = std::fread(b, 1, sizeof b, f)) > 0) s.append(b, got);
  std::vector<std::pair<size_t, size_t>> rows; size_t i = 0;
  while (i < s.size()) {
    size_t colon = s.find(':', i); if (colon == std::string::npos) break;
    size_t p = colon + 1; char c = p < s.size() ? s[p] : 0;
    if (length_tag(c)) { size_t comma = s.find(',', p); i = comma + 1 + std::strtoul(s.substr(p + 1, comma - p - 1).c_str(), nullptr, 16); continue; }
    size_t nl = s.find('\n', p); if (nl == std::string::npos) nl = s.size();
    if (!((c >= 'A' && c <= 'Z') || c == '#' || c == 'r' || c == 'x')) rows.push_back({p, nl - p});
    i = nl + 1;
  }
  std::vector<padded_string> pr; for (auto &r : rows) pr.emplace_back(s.data()+r.first, r.second);
  dom::parser dp; if (dp.allocate(s.size())) return 1;
  std::vector<double> td, to, t1s;
  for (int round = 0; round < 300; round++) {
    auto t0 = std::chrono::steady_clock::now();
    for (auto &r : pr) { auto e = dp.parse(r); if (e.error()) return 1; }
    auto t1 = std::chrono::steady_clock::now();
    for (auto &r : pr) { if (!fused(dp, (const uint8_t*)r.data(), r.size())) return 3; }
    auto t2 = std::chrono::steady_clock::now();
    for (auto &r : pr) { if (dp.implementation->stage1((const uint8_t*)r.data(), r.size(), stage1_mode::regular)) return 4; }
    auto t3 = std::chrono::steady_clock::now();
    td.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    to.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    t1s.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
  }
  std::sort(td.begin(), td.end()); std::sort(to.begin(), to.end()); std::sort(t1s.begin(), t1s.end());
  printf("rows %zu dom %.1f us  fused %.1f us  stage1 %.1f ratio fused/dom %.2f\n", rows.size(), td[150], to[150], t1s[150], to[150]/td[150]);
}
