#define _POSIX_C_SOURCE 200809L
/* test_chunks.c - the chunk table (src/chunks.c, src/settle.c): chunk ids
 * near and far, each chunk's status and reason, streams and their items in
 * the order React's controller gives them, and what settles at finish. A
 * stream cut early is test_incomplete.c's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rscflight.h"
#include "support.h"

Test(chunks, chunk_table) {
  rsc_decoder *d = ts_decode_str("2:\"two\"\n0:{\"a\":\"$L5\"}\n", 0);
  cr_expect_eq(rsc_decoder_chunk_count(d), 3);
  cr_expect_eq(rsc_chunk_id(rsc_decoder_chunk_at(d, 0)), 0, "the root is created first");
  cr_expect_null(rsc_decoder_chunk(d, 7));
  const rsc_chunk *five = rsc_decoder_chunk(d, 5);
  cr_assert_not_null(five);
  cr_expect_eq(rsc_chunk_status(five), RSC_CHUNK_REJECTED, "never arrived");
  cr_expect_str_eq(rsc_error_message(rsc_chunk_reason(five)), "Connection closed.");
  /* Row 2 arrived but nothing read it: a read parses it. */
  const rsc_chunk *two = rsc_decoder_chunk(d, 2);
  cr_expect_eq(rsc_chunk_status(two), RSC_CHUNK_FULFILLED);
  cr_expect_str_eq(ts_str(rsc_chunk_value(two)), "two");
  rsc_decoder_free(d);
}

/* Ids near the count index an array, others a hash table; an id hashed
 * while far moves to the array when the array grows past it. */
Test(chunks, chunk_ids_near_and_far) {
  char buf[8192];
  size_t n = (size_t)snprintf(buf, sizeof buf, "c8:\"x\"\n7fffffff:\"far\"\n");
  for (int i = 1; i <= 300; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%x:%d\n", i == 200 ? 301 : i, i);
  n += (size_t)snprintf(buf + n, sizeof buf - n,
                        "0:[\"$c8\",\"$7fffffff\",\"$96\",\"$12d\",\"$L1000\"]\n");
  cr_assert_lt(n, sizeof buf);
  rsc_decoder *d = ts_decode_str(buf, 0);
  cr_assert_eq(rsc_chunk_status(rsc_decoder_root(d)), RSC_CHUNK_FULFILLED);
  const rsc_node *root = ts_root_value(d);
  cr_expect_str_eq(ts_str(rsc_node_at(root, 0)), "x");
  cr_expect_str_eq(ts_str(rsc_node_at(root, 1)), "far");
  cr_expect_eq(rsc_node_number(rsc_node_at(root, 2)), 150);
  cr_expect_eq(rsc_node_number(rsc_node_at(root, 3)), 200);
  cr_expect_eq(rsc_decoder_chunk_count(d), 304);
  for (int64_t id = 1; id <= 301; id++) {
    const rsc_chunk *c = rsc_decoder_chunk(d, id);
    cr_assert_not_null(c, "chunk %lld", (long long)id);
    cr_expect_eq(rsc_chunk_id(c), id);
  }
  cr_expect_not_null(rsc_decoder_chunk(d, 0x1000));
  cr_expect_null(rsc_decoder_chunk(d, 302));
  cr_expect_null(rsc_decoder_chunk(d, 0x7ffffffe));
  cr_expect_null(rsc_decoder_chunk(d, -1));
  /* A reset empties both. */
  cr_assert_eq(rsc_decoder_reset(d), RSC_OK);
  cr_expect_null(rsc_decoder_chunk(d, 0xc8));
  cr_expect_null(rsc_decoder_chunk(d, 0x7fffffff));
  cr_expect_null(rsc_decoder_chunk(d, 5));
  rsc_decoder_free(d);
}

Test(chunks, partial_streams_halt) {
  rsc_decoder *d = ts_decode_str("0:{\"a\":\"$@1\"}\n", RSC_OPT_ALLOW_PARTIAL);
  cr_expect_eq(rsc_chunk_status(rsc_decoder_chunk(d, 1)), RSC_CHUNK_HALTED);
  rsc_decoder_free(d);
}

Test(chunks, streams) {
  rsc_decoder *d = ts_decode_str("1:x\n0:\"$1\"\n1:T1,a1:{\"b\":1}\n2:\"ret\"\n1:C\"$2\"\n", 0);
  const rsc_node *s = ts_root_value(d);
  cr_assert_eq(rsc_node_kind(s), RSC_STREAM);
  cr_expect_eq(rsc_stream_kind_of(s), RSC_STREAM_ITERATOR);
  cr_assert_eq(rsc_stream_len(s), 2);
  cr_expect_str_eq(ts_str(rsc_stream_at(s, 0)), "a");
  cr_expect_eq(rsc_stream_end_of(s), RSC_STREAM_DONE);
  cr_expect_str_eq(ts_str(rsc_stream_end_value(s)), "ret");
  rsc_decoder_free(d);
}

/* An async iterator item that revives to undefined is an item (found by
 * fuzz_walk: rsc_stream_at returned NULL for it). */
Test(chunks, undefined_iterator_items) {
  rsc_decoder *d = ts_decode_str("1:x\n0:\"$1\"\n1:\"$undefined\"\n1:C\n", 0);
  const rsc_node *s = ts_root_value(d);
  cr_assert_eq(rsc_stream_len(s), 1);
  cr_expect_eq(rsc_node_kind(rsc_stream_at(s, 0)), RSC_UNDEFINED);
  cr_expect_null(rsc_stream_at(s, 1));
  cr_expect_eq(rsc_stream_end_of(s), RSC_STREAM_DONE);
  cr_expect_eq(rsc_node_kind(rsc_stream_end_value(s)), RSC_UNDEFINED);
  rsc_decoder_free(d);
}

/* A ReadableStream's items and end behind an item that waits on a row
 * still to come, as React's controller orders them: the blocked item stays
 * its previousBlockedChunk after it resolves, so what comes later (a text
 * row's value, a model row, the close or the error, "Connection closed."
 * at the end) follows it at once then, and a text row enqueues its own
 * value. Found by tests/conformance/flightgen.py payloads; every expected dump is
 * React 19.3.1's client's. */
Test(chunks, readable_stream_items_after_a_blocked_one) {
  DUMP("0:\"$1\"\n1:R\n1:\"$2\"\n1:T1,x2:\"y\"\n1:C\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[\"y\",\"x\"],\"end\":{"
       "\"done\":{\"$\":\"undefined\"}}}}");
  DUMP("0:\"$1\"\n1:R\n1:\"$2\"\n2:\"y\"\n1:T1,x1:C\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[\"y\",\"x\"],\"end\":{"
       "\"done\":{\"$\":\"undefined\"}}}}");
  DUMP("0:\"$1\"\n1:R\n1:\"$2\"\n2:\"y\"\n1:\"z\"\n1:C\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[\"y\",\"z\"],\"end\":{"
       "\"done\":{\"$\":\"undefined\"}}}}");
  DUMP("3:\"$i2\"\n0:\"$1\"\n1:R\n1:\"$3\"\n2:[]\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[],\"end\":{\"error\":{\"$\":"
       "\"Error\",\"message\":\"Connection closed.\"}}}}");
  DUMP("0:\"$1\"\n1:R\n1:\"$2\"\n1:\"$3\"\n3:\"b\"\n1:C\n2:\"a\"\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[\"a\",\"b\"],\"end\":{"
       "\"done\":{\"$\":\"undefined\"}}}}");
  DUMP("0:\"$1\"\n1:R\n1:\"$2\"\n2:\"a\"\n1:E{\"digest\":\"q\"}\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[],\"end\":{\"error\":{\"$\":"
       "\"Error\",\"message\":\"An error occurred in the Server Components render. The specific "
       "message is omitted in production builds to avoid leaking sensitive details. A digest "
       "property is included on this error instance which may provide additional details about the "
       "nature of the error.\",\"digest\":\"q\"}}}}");
  DUMP("0:\"$1\"\n1:R\n1:\"$2\"\n2:E{\"digest\":\"q\"}\n1:\"z\"\n1:C\n",
       "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[],\"end\":{\"error\":{\"$\":"
       "\"Error\",\"message\":\"An error occurred in the Server Components render. The specific "
       "message is omitted in production builds to avoid leaking sensitive details. A digest "
       "property is included on this error instance which may provide additional details about the "
       "nature of the error.\",\"digest\":\"q\"}}}}");
}

/* React's controller stops waiting once the blocked item it chained the
 * next one to resolves (previousBlockedChunk is cleared then, though the
 * next item may itself wait), so a close can come while an item still
 * waits; when that item is rejected (here at the end: "Connection
 * closed."), controller.error() meets a stream whose queue no reader has
 * drained yet, and the queue goes. Found by mutated payloads; every
 * expected dump is React 19.3.1's client's. */
Test(chunks, readable_stream_error_after_a_close_with_items_queued) {
  static const char closed_error[] =
      "{\"ok\":{\"$\":\"ReadableStream\",\"type\":\"text\",\"items\":[],"
      "\"end\":{\"error\":{\"$\":\"Error\",\"message\":\"Connection closed.\"}}}}";
  DUMP("0:\"$4\"\n4:R\n4:\"$6\"\n6:\"x\"\n4:\"$7\"\n4:C\n", closed_error);
  DUMP("0:\"$4\"\n4:R\n4:\"$6\"\n4:\"$7\"\n4:C\n6:\"x\"\n", closed_error);
  DUMP("0:\"$4\"\n4:R\n4:\"$6\"\n6:\"x\"\n4:\"$7\"\n4:\"$8\"\n4:C\n8:\"w\"\n", closed_error);
}
