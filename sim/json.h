/* JSON and text at the program's edges: the `refit.json` Lua module (decoding with jansson),
 * UTF-8 checks, and JSON output that either prints a whole document or fails. */
#ifndef RF_JSON_H
#define RF_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Whether s[0..len) is well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF), as jansson and SQLite TEXT expect. */
bool rf_utf8_valid(const char *s, size_t len);
/* The length of the valid UTF-8 sequence at s[0..len), 0 when it is not one. */
size_t rf_utf8_seq(const unsigned char *s, size_t len);
/* A JSON string of s (NULL gives ""), every byte that is not valid UTF-8 replaced by U+FFFD,
 * so a file name in any encoding can be shown. NULL only when out of memory. */
json_t *rf_json_text(const char *s);
/* Prints v (indented) and a newline to f, or fails without printing anything: a NULL v (a
 * json_pack that failed) or a document jansson cannot dump is an error, never silence. Steals
 * the reference to v. */
int rf_json_print(json_t *v, FILE *f, struct rf_error *err);
/* Writes v as the shortest of 15, 16 and 17 significant digits that reads back as the same
 * double (17 always does: 0.82, not 0.81999999999999995), with ".0" after an integral text
 * when `real` (so it reads back as a real): the one number format of refit's JSON, its CSV
 * export and calibrate's Lua. */
void rf_put_real(FILE *f, double v, bool real);
/* v as canonical text: object keys sorted, every real the shortest of 15 to 17 significant
 * digits that reads back as the same double (0.82, not 0.81999999999999995) and always
 * with a '.' or an exponent (so it reads back as a real), compact, or with indent > 0
 * that many spaces a level and a line per member. The same value always gives the same
 * text, so two documents can be compared line by line. NULL when out of memory; the
 * caller frees it. */
char *rf_json_canonical(const json_t *v, int indent);

#endif
