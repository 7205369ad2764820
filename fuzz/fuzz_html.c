/* fuzz_html.c - Flight inside HTML pages: rsc_html_extract and
 * rsc_rewrite_html. Input: one byte (bits 0-1 the flavor asked for, bit 2
 * the rewrite rule), then the page.
 *
 * Checks beyond "no crash, no sanitizer report, no leak":
 *   - a page rewritten with no rule is the page, byte for byte, whenever
 *     its payload can be extracted and the rewriter takes it;
 *   - with a rule, the rewritten page still extracts, in the flavor it was
 *     read as, and gives the payload rsc_rewrite writes for the extracted
 *     one (the rows the framework's reader would hand to React's client);
 *   - a page rsc_rewrite_html takes, rsc_html_extract takes, and a page
 *     whose extracted payload the rewriter takes, rsc_rewrite_html takes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const rsc_html_flavor flavors[] = {RSC_HTML_AUTO, RSC_HTML_NEXT, RSC_HTML_RSC_HTML_STREAM,
                                            RSC_HTML_AUTO};
  rsc_html_flavor flavor = flavors[data[0] & 3];
  int rule = (data[0] >> 2) & 1;
  const char *page = (const char *)data + 1;
  size_t n = size - 1;

  char *payload = NULL;
  size_t plen = 0;
  rsc_html_flavor found = RSC_HTML_AUTO;
  rsc_error xerr;
  rsc_status xst = rsc_html_extract(page, n, flavor, &payload, &plen, &xerr, &found);
  if (xst != RSC_OK) FUZZ_CHECK(xerr.offset <= n && xerr.msg != NULL);

  /* "</script>" and U+2028 in the new strings: both must be escaped */
  static const rsc_rewrite_rule prefix = {{"a", 1}, {"</script>\xe2\x80\xa8", 12}};
  rsc_rewrite_options o;
  rsc_rewrite_options_init(&o);
  if (rule) {
    o.prefix = &prefix;
    o.prefix_count = 1;
  }
  char *out = NULL;
  size_t olen = 0;
  rsc_html_rewrite_info info;
  rsc_error rerr;
  rsc_status rst = rsc_rewrite_html(page, n, flavor, &o, &out, &olen, &info, &rerr);
  fuzz_buf want = {0};
  rsc_error werr = {0};
  rsc_status wst =
      xst == RSC_OK ? rsc_rewrite(payload, plen, &o, fuzz_buf_write, &want, &werr, NULL) : xst;
  if (wst == RSC_OK && rst != RSC_OK) {
    fprintf(stderr, "the payload rewrites, the page does not: %s @%llu\n", rerr.msg ? rerr.msg : "",
            (unsigned long long)rerr.offset);
    abort();
  }
  if (rst == RSC_OK) {
    FUZZ_CHECK(xst == RSC_OK && wst == RSC_OK);
    FUZZ_CHECK(info.flavor == found);
    if (!rule) FUZZ_CHECK(olen == n && (n == 0 || memcmp(out, page, n) == 0));
    /* The new page reads back as the payload rewritten on its own. */
    char *got = NULL;
    size_t glen = 0;
    rsc_error gerr;
    rsc_status gst = rsc_html_extract(out, olen, found, &got, &glen, &gerr, NULL);
    if (gst != RSC_OK || glen != want.len || (glen && memcmp(got, want.p, glen) != 0)) {
      fprintf(stderr, "page rewritten:\n%.*s\nreads back (%s):\n%.*s\nwant:\n%.*s\n", (int)olen,
              out, gst == RSC_OK ? "ok" : gerr.msg, (int)glen, got ? got : "", (int)want.len,
              want.p ? want.p : "");
      abort();
    }
    rsc_free(got);
  } else {
    FUZZ_CHECK(out == NULL);
    if (rst == RSC_ERR_HTML && xst == RSC_OK) FUZZ_CHECK(rerr.msg != NULL);
  }
  free(want.p);
  rsc_free(out);
  rsc_free(payload);
  return 0;
}
