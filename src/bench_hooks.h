/* bench_hooks.h - hooks for the CLI's `bench` and the test suites, not for
 * hosts: include/rscflight.h does not declare them, and the shared library
 * does not export them (hidden visibility; the CLI and the tests link the
 * static library). */
#ifndef RSC_BENCH_HOOKS_H
#define RSC_BENCH_HOOKS_H

#include "rscflight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The decoder's internal flag bit for the parse-only floor. rsc_decoder_new
 * clears it from the options a host passes, so only the hook below sets it. */
#define RSC__OPT_PARSE_ONLY (1u << 4)

/* The benchmark floor: from now on d only frames rows and parses their JSON
 * with simdjson. It builds no values and stores no chunks (the root stays
 * pending), finish settles nothing and rsc_decoder_incomplete returns NULL.
 * Call it before the first feed; it holds across rsc_decoder_reset. NULL
 * is ignored. */
void rsc__decoder_set_parse_only(rsc_decoder *d);

/* The floor with a walk: as parse-only, and after each parse one pass over
 * simdjson's tape that reads every value once and looks at the first byte
 * of every string (what a decoder that built nothing for plain JSON would
 * still do). Its time against the parse-only floor is the room a design
 * that leaves plain values on the tape has (docs/performance.md). */
#define RSC__OPT_PARSE_WALK (1u << 30)
void rsc__decoder_set_parse_walk(rsc_decoder *d);

#ifdef __cplusplus
}
#endif

#endif
