// batch.cpp - simdjson alone: the JSON model rows of a payload parsed one
// parse() per row, against the same rows copied into one buffer (each
// followed by "\n#\n", as src/json_shim.cpp's batches do) with one stage-1
// pass and stage2_next per row. What the decoder's batches can gain at
// most (docs/performance.md, nineteenth round).
//
//   g++ -O2 -std=c++17 bench/simdjson/batch.cpp -lsimdjson -o /tmp/batch
//   /tmp/batch fixtures/react/19.3.1/prod/many-tiny-rows.rsc
//
// Rows are framed simply (hex id, ':', then a length tag's bytes skipped,
// a newline tag's row skipped, anything else a JSON row to its LF).
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace simdjson;

static bool length_tag(char c) { return std::strchr("TAOoUSsLlGgMmVb", c) && c; }

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: batch FILE [rounds]\n");
    return 2;
  }
  FILE *f = std::fopen(argv[1], "rb");
  if (!f) return 1;
  std::string s;
  char b[65536];
  size_t got;
  while ((got = std::fread(b, 1, sizeof b, f)) > 0) s.append(b, got);
  std::fclose(f);
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<std::pair<size_t, size_t>> rows; // JSON rows: start, length
  size_t i = 0;
  while (i < s.size()) {
    size_t colon = s.find(':', i);
    if (colon == std::string::npos) break;
    size_t p = colon + 1;
    char c = p < s.size() ? s[p] : 0;
    if (length_tag(c)) {
      size_t comma = s.find(',', p);
      i = comma + 1 + std::strtoul(s.substr(p + 1, comma - p - 1).c_str(), nullptr, 16);
      continue;
    }
    size_t nl = s.find('\n', p);
    if (nl == std::string::npos) nl = s.size();
    if (!((c >= 'A' && c <= 'Z') || c == '#' || c == 'r' || c == 'x')) rows.push_back({p, nl - p});
    i = nl + 1;
  }
  std::string batch;
  for (auto &r : rows) batch.append(s, r.first, r.second).append("\n#\n");
  padded_string pb(batch);
  dom::parser parser;
  if (parser.allocate(batch.size() > s.size() ? batch.size() : s.size())) return 1;
  padded_string ps(s); // the rows parsed in place, padded
  const uint8_t *in = reinterpret_cast<const uint8_t *>(ps.data());
  for (int round = 0; round < rounds; round++) {
    const int reps = 200;
    size_t ok = 0, docs = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; k++)
      for (auto &r : rows) {
        dom::element e;
        ok += !parser.parse(in + r.first, r.second, false).get(e);
      }
    auto t1 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; k++) {
      auto &impl = parser.implementation;
      if (impl->stage1(reinterpret_cast<const uint8_t *>(pb.data()), pb.size(),
                       stage1_mode::regular))
        return 1;
      for (size_t r = 0; r < rows.size(); r++) {
        if (impl->stage2_next(parser.doc)) break;
        impl->next_structural_index++; // past the '#'
        docs++;
      }
    }
    auto t2 = std::chrono::steady_clock::now();
    double alone = std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
    double batched = std::chrono::duration<double, std::micro>(t2 - t1).count() / reps;
    std::printf("%zu rows (%zu parsed, %zu batched): row by row %.1f us, batched %.1f us, %.2fx\n",
                rows.size(), ok / reps, docs / reps, alone, batched, alone / batched);
  }
  return 0;
}
