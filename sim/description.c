/* A stored run's description read back (sim/description.h): the parse that refuses what is
 * not one, and the PXN it was predicted with, which refit-exec needs without the simulator. */
#include "description.h"

int rf_describe_parse(const char *text, json_t **out, struct rf_error *err)
{
    json_error_t jerr;
    *out = NULL;
    json_t *doc = text ? json_loads(text, 0, &jerr) : NULL;
    if (!doc)
        return rf_error_set(err, RF_EINVAL, "scenario_json: not JSON (%s, column %d)",
                            text ? jerr.text : "empty", text ? jerr.column : 0);
    json_t *v = json_object_get(doc, "version");
    if (!json_is_object(doc) || !json_is_integer(v)) {
        json_decref(doc);
        return rf_error_set(err, RF_EINVAL, "scenario_json: not a refit scenario (no version)");
    }
    if (json_integer_value(v) > RF_SCENARIO_JSON_VERSION) {
        rf_error_set(err, RF_EINVAL,
                     "scenario_json: version %lld is newer than this refit (%d); upgrade refit",
                     (long long)json_integer_value(v), RF_SCENARIO_JSON_VERSION);
        json_decref(doc);
        return RF_EINVAL;
    }
    *out = doc;
    return 0;
}

int rf_describe_pxn(const json_t *doc)
{
    const json_t *a = json_object_get(json_object_get(doc, "auto"), "pxn");
    const json_t *s =
        json_object_get(json_object_get(json_object_get(doc, "cluster"), "fabric"), "pxn");
    const json_t *v = json_is_boolean(a) ? a : s;
    return json_is_boolean(v) ? json_is_true(v) : -1;
}
