/* chunks.h - the chunk table: id -> pending / blocked / resolved / rejected /
 * halted, forward references, listeners, streams (docs/spec/FLIGHT-PROTOCOL.md
 * 6, 8). */
#ifndef RSC_CHUNKS_H
#define RSC_CHUNKS_H

#include "internal.h"

/* The chunk for id, created pending (rejected or halted once closed). NULL
 * when out of memory or over the chunk limit (the error is set). */
rsc_chunk *rsc__get_chunk(rsc_decoder *d, int64_t id);
rsc_chunk *rsc__find_chunk(const rsc_decoder *d, int64_t id);
/* A chunk outside the table (blocked elements, stream items). */
rsc_chunk *rsc__new_chunk(rsc_decoder *d, uint8_t state);
/* Adds a new chunk with this id (id must be absent). */
rsc_chunk *rsc__add_chunk(rsc_decoder *d, int64_t id, uint8_t state);

/* React's initializeModelChunk: revive the stored JSON now. */
void rsc__init_model_chunk(rsc_decoder *d, rsc_chunk *c);
/* If c is resolved_model, initialise it (a read). */
void rsc__read_chunk(rsc_decoder *d, rsc_chunk *c);

/* Row arrivals. json is the parsed row (or json_failed with its message). */
void rsc__resolve_model(rsc_decoder *d, int64_t id, rsc_node json, const char *json_error);
rsc_status rsc__resolve_value(rsc_decoder *d, int64_t id, rsc_node value); /* T, binary */
rsc_status rsc__resolve_error_row(rsc_decoder *d, int64_t id, rsc_node error);
void rsc__resolve_module(rsc_decoder *d, int64_t id, rsc_node client_ref);
void rsc__resolve_halt(rsc_decoder *d, int64_t id);
void rsc__start_stream(rsc_decoder *d, int64_t id, rsc_stream_kind kind);
void rsc__stop_stream(rsc_decoder *d, int64_t id, rsc_node json, bool has_json,
                      const char *json_error);
/* End of stream: reject (or halt) what never arrived. */
void rsc__close(rsc_decoder *d);

/* Listener plumbing used by revive.c. */
rsc_node rsc__wait_for_reference(rsc_decoder *d, rsc_chunk *c, rsc_ref *proto);
void rsc__fulfill_reference(rsc_decoder *d, rsc_ref *ref, rsc_node value, rsc_chunk *from);
void rsc__reject_reference(rsc_decoder *d, rsc_scope *h, rsc_node error);
void rsc__trigger_error(rsc_decoder *d, rsc_chunk *c, rsc_node error);
rsc_scope *rsc__current_scope_dep(rsc_decoder *d); /* deps++ or a new scope */
rsc_scope *rsc__resolve_blocked_cycle(rsc_chunk *resolved, rsc_ref *ref, int depth);
bool rsc__add_listener(rsc_decoder *d, rsc_chunk *c, uint8_t kind, rsc_ref *ref, rsc_stream *s,
                       rsc_chunk *target, rsc_node value);

/* Brent's cycle check along a chain of lazies being unwrapped: true when
 * c was met before. React unwraps fulfilled lazies in a loop that never
 * ends on a cycle of them (1:"$L1", then "$1"); here the caller stops.
 * Start with a zeroed struct for each chain. */
typedef struct lazy_hops {
  const rsc_chunk *mark;
  uint32_t power, lam;
} lazy_hops;

static inline bool rsc__lazy_cycle(lazy_hops *h, const rsc_chunk *c) {
  if (c == h->mark) return true;
  if (h->lam == h->power) {
    h->mark = c;
    h->power = h->power ? h->power * 2 : 1;
    h->lam = 0;
  }
  h->lam++;
  return false;
}

/* State changes go through here so the consumer hook sees settles. */
void rsc__settle(rsc_decoder *d, rsc_chunk *c, uint8_t state);

/* Iterator result slot i of an async iterable, created pending if needed. */
rsc_chunk *rsc__stream_slot(rsc_decoder *d, rsc_stream *s, uint32_t i);

/* The value of a settled iterator result slot ({done, value}): its "value"
 * member, or undefined when the walk deleted it (node.c). */
const rsc_node *rsc__slot_value(const rsc_chunk *c);

/* An async iterable's results as a reader sees them: the number of
 * fulfilled item slots in order, up to the first that is not an item
 * (*end_slot: that slot, or NULL). Reads the slots it passes. */
size_t rsc__stream_results(rsc_decoder *d, const rsc_stream *s, const rsc_chunk **end_slot);

#endif
