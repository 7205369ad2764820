/* hex.h - runs of lowercase hex digits, as React writes row ids, row
 * lengths and reference ids ("$1a"): the framer's and the revive stage's.
 * Uppercase is not hex here (JSON and HTML escapes have their own). */
#ifndef RSC_HEX_H
#define RSC_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Digit values plus one, so that the table's zeros mean "not a digit". */
static const int8_t rsc__hex_value[256] = {
    ['0'] = 1, ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* A lowercase hex digit's value; -1 for every other byte. */
static inline int rsc__hex_digit(uint8_t c) { return rsc__hex_value[c] - 1; }

/* The hex digits s[0..n) starts with: how many, and their value in *v.
 * Callers bound n (at most 15 digits always fit). */
static inline size_t rsc__hex_prefix(const uint8_t *s, size_t n, uint64_t *v) {
  size_t k = 0;
  uint64_t x = 0;
  int h;
  while (k < n && (h = rsc__hex_digit(s[k])) >= 0) {
    x = x * 16 + (uint64_t)h;
    k++;
  }
  *v = x;
  return k;
}

#endif
