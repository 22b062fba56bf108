/* Reading a run's stored description (run.scenario_json, written by sim/describe.c): what
 * the executor and the commands need of it before any simulator type is involved. */
#ifndef RF_DESCRIPTION_H
#define RF_DESCRIPTION_H

#include <jansson.h>

#include "error.h"

/* The layout of the document; a reader refuses a newer one. */
#define RF_SCENARIO_JSON_VERSION 1

/* Parses a stored description, refusing text that is not one (or a newer version). */
int rf_describe_parse(const char *text, json_t **out, struct rf_error *err);
/* The PXN the prediction assumed: 1 on, 0 off (auto's choice first), -1 not recorded. */
int rf_describe_pxn(const json_t *doc);

#endif
