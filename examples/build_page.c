/* build_page.c - a host that produces a Flight payload with the builder
 * (rscflight.h, "Building Flight") and streams it to stdout as a server
 * would: the shell first, with a client component and a Suspense boundary
 * around a part still loading, then the part's row once its data is there,
 * and a part whose data failed as an error row with a digest.
 *
 *     build/examples/build_page | build/rscflight dump -
 */
#include <stdio.h>
#include <string.h>

#include "rscflight.h"

static int to_stdout(void *ctx, const char *buf, size_t len) {
  (void)ctx;
  return fwrite(buf, 1, len, stdout) == len ? 0 : 1;
}

#define STR(b, s) rsc_build_string(b, s, strlen(s))

/* <tag>{child}</tag> */
static rsc_bval *tag(rsc_builder *b, const char *name, rsc_bval *child) {
  rsc_bval *props = rsc_build_object(b);
  rsc_build_put(b, props, "children", 8, child);
  return rsc_build_element(b, STR(b, name), NULL, 0, props);
}

static rsc_bval *suspense(rsc_builder *b, const char *fallback, rsc_bval *children) {
  rsc_bval *props = rsc_build_object(b);
  rsc_build_put(b, props, "fallback", 8, STR(b, fallback));
  rsc_build_put(b, props, "children", 8, children);
  return rsc_build_element(b, rsc_build_symbol(b, "react.suspense", 14), NULL, 0, props);
}

int main(void) {
  rsc_builder *b = rsc_builder_new(NULL);
  if (!b) return 1;
  const char *chunks[] = {"cart", "cart.3d05.js"};
  rsc_bval *reviews = rsc_build_lazy(b), *stock = rsc_build_lazy(b);

  /* The shell: a client component (an I row) and two parts still loading. */
  rsc_bval *cart_props = rsc_build_object(b);
  rsc_build_put(b, cart_props, "sku", 3, STR(b, "A-100"));
  rsc_build_put(b, cart_props, "price", 5, rsc_build_number(b, 19.5));
  rsc_bval *body = rsc_build_array(b);
  rsc_build_push(b, body, tag(b, "h1", STR(b, "Lamp")));
  rsc_build_push(
      b, body,
      rsc_build_element(b, rsc_build_client_ref(b, "app/Cart.js", chunks, 2, "AddToCart", 0), NULL,
                        0, cart_props));
  rsc_build_push(b, body, suspense(b, "Loading reviews...", reviews));
  rsc_build_push(b, body, suspense(b, "Checking stock...", stock));
  rsc_status s = rsc_builder_root(b, tag(b, "main", body));
  if (!s) s = rsc_builder_flush(b, to_stdout, NULL);

  /* The reviews arrive: their row follows. */
  if (!s) {
    rsc_bval *list = rsc_build_array(b);
    rsc_build_push(b, list, tag(b, "li", STR(b, "Bright and warm.")));
    rsc_build_push(b, list, tag(b, "li", STR(b, "$5 well spent")));
    s = rsc_builder_resolve(b, reviews, tag(b, "ul", list));
  }
  if (!s) s = rsc_builder_flush(b, to_stdout, NULL);

  /* The stock service fails: an E row with the digest the host logs. */
  if (!s) s = rsc_builder_reject(b, stock, "stock-timeout");
  if (!s) s = rsc_builder_flush(b, to_stdout, NULL);

  if (!s && rsc_builder_pending(b)) s = RSC_ERR_STATE;
  if (s) fprintf(stderr, "build_page: %s\n", rsc_status_name(s));
  rsc_builder_free(b);
  return s ? 1 : 0;
}
