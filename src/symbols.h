/* symbols.h - the display names of React's well-known symbols
 * (Symbol.for("react.fragment") is shown as Fragment), as React DevTools
 * names them. Header-only, so that the byte report and the CLI's tree and
 * stats name element types from one table. */
#ifndef RSC_SYMBOLS_H
#define RSC_SYMBOLS_H

#include <stddef.h>
#include <string.h>

/* The display name of the symbol whose key is key[0..n), or NULL for a
 * symbol React does not define. */
static inline const char *rsc__react_symbol_name(const char *key, size_t n) {
  static const char *const names[][2] = {
      {"react.fragment", "Fragment"},
      {"react.suspense", "Suspense"},
      {"react.suspense_list", "SuspenseList"},
      {"react.profiler", "Profiler"},
      {"react.strict_mode", "StrictMode"},
      {"react.activity", "Activity"},
      {"react.view_transition", "ViewTransition"},
      {"react.legacy_hidden", "LegacyHidden"},
      {"react.offscreen", "Offscreen"},
      {"react.portal", "Portal"},
      {"react.context", "Context"},
      {"react.consumer", "Consumer"},
      {"react.provider", "Provider"},
      {"react.memo", "Memo"},
      {"react.forward_ref", "ForwardRef"},
      {"react.lazy", "Lazy"},
      {"react.scope", "Scope"},
      {"react.tracing_marker", "TracingMarker"},
  };
  for (size_t i = 0; key && i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i][0]) == n && memcmp(key, names[i][0], n) == 0) return names[i][1];
  return NULL;
}

#endif
