/* jsstring.h - what JavaScript's String(value) makes of a decoded value.
 *
 * React's client hands model values to constructors that convert them to
 * strings: new Blob(parts, {type}) (each part that is not a Blob or a
 * buffer), FormData.append(name, value) and a development error's message.
 * Their results (or the TypeError they throw) are part of the decoded
 * tree, so they are computed here as V8 and Node 20 compute them: arrays
 * joined with ",", cycles skipped, objects as "[object Map]" and the like,
 * a Symbol or an object whose "toString" is not a method throwing.
 * Dates print as Date.prototype.toString does in UTC for the ISO form a
 * server writes; V8's other, legacy date formats are not parsed here
 * ("Invalid Date"). Module exports (client references) and server
 * actions, functions whose text depends on the host, print as objects. */
#ifndef RSC_JSSTRING_H
#define RSC_JSSTRING_H

#include "internal.h"

typedef struct rsc_strbuf {
  char *p;
  size_t len, cap;
} rsc_strbuf;

/* Appends String(*v) to sb (WTF-8: lone surrogates stay). false: either
 * *thrown is the TypeError JavaScript throws, or the decoder failed
 * (memory, the value limit: the text counts 16 bytes a value). */
bool rsc__js_string(rsc_decoder *d, const rsc_node *v, rsc_strbuf *sb, rsc_node *thrown);

/* Appends n bytes as they are; false when the decoder failed. */
bool rsc__strbuf_put(rsc_decoder *d, rsc_strbuf *sb, const char *s, size_t n);

/* Frees sb's memory (it is the decoder allocator's, not the arena's). */
void rsc__strbuf_free(rsc_decoder *d, rsc_strbuf *sb);

/* A USVString, as Blob parts and FormData entries become: each lone
 * surrogate (three WTF-8 bytes) replaced by U+FFFD (three bytes too). */
void rsc__usv_in_place(char *s, size_t n);

/* String(*v) as an arena STRING node (NUL-terminated), USV when usv. On
 * false, as rsc__js_string. */
bool rsc__js_string_node(rsc_decoder *d, const rsc_node *v, bool usv, rsc_node *out,
                         rsc_node *thrown);

#endif
