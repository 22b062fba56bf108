/* `refit models`: the model descriptions refit knows, with their parameter counts. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "model.h"
#include "scenario.h"

static const char usage_models[] =
    "usage: refit models [--json]\n"
    "\n"
    "Lists the model architectures of the models folder with their parameter counts.\n";

int cmd_models(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': fputs(usage_models, stdout); return 0;
        default: return 2;
        }
    }
    if (optind != argc)
        return cmd_usage_fail("models", "models takes no argument '%s'", argv[optind]);

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct cmd_env env = {0};
    char **names = NULL;
    size_t n = 0;
    json_t *list = json_array();
    /* The table is printed once every model loaded, so a bad model file prints no part. */
    char *table = NULL;
    size_t table_len = 0;
    FILE *tf = open_memstream(&table, &table_len);
    int rc = 1;

    if (!list || !tf) {
        fputs("refit: out of memory\n", stderr);
        goto out;
    }
    cmd_models_dir(dir, sizeof(dir));
    if (cmd_lua_names(dir, "models", &names, &n) != 0)
        goto out;
    /* Lua is opened once the folder is listed: a folder that cannot be read says so. */
    if (cmd_open(&env, NULL, 0) != 0)
        goto out;
    if (!json)
        fprintf(tf, "%-22s %10s %10s %10s %8s\n", "model", "params(B)", "active(B)", "bf16(GB)",
                "tensors");
    for (size_t i = 0; i < n; i++) {
        struct rf_model m;
        if (rf_lua_load_model(env.L, names[i], &m, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
        int64_t params = rf_model_params(&m), active = rf_model_active_params(&m);
        int64_t bytes = rf_model_bytes(&m);
        int bad = 0;
        if (json)
            bad = json_array_append_new(
                list, json_pack("{so sI sI sI sI so}", "name", rf_json_text(m.name), "params",
                                (json_int_t)params, "active_params", (json_int_t)active,
                                "bf16_bytes", (json_int_t)bytes, "tensors", (json_int_t)m.n_tensors,
                                "family", rf_json_text(m.family)));
        else
            fprintf(tf, "%-22s %10.2f %10.2f %10.1f %8zu\n", m.name, (double)params / 1e9,
                    (double)active / 1e9, (double)bytes / 1e9, m.n_tensors);
        rf_model_release(&m);
        if (bad < 0) {
            rf_error_set(&err, RF_EINVAL, "%s: cannot build the JSON output", names[i]);
            rc = cmd_fail(&err);
            goto out;
        }
    }
    if (json) {
        if (rf_json_print(json_incref(list), stdout, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        bool bad = fclose(tf) != 0;
        tf = NULL;
        if (bad) {
            fputs("refit: out of memory\n", stderr);
            goto out;
        }
        fwrite(table, 1, table_len, stdout);
    }
    rc = 0;
out:
    if (tf)
        fclose(tf);
    free(table);
    json_decref(list);
    cmd_names_free(names, n);
    cmd_close(&env);
    return rc;
}

/* The calibrated cluster's name: NAME-calibrated, once. */
