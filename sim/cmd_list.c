/* The listing commands' one routine (`refit models`, `refit clusters`): every description of
 * a folder of the models tree loaded, one table row or JSON object each, printed only once
 * all loaded, so a bad file prints no part of the list. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "json.h"

int cmd_list_run(const struct cmd_list *l, int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': fputs(l->usage, stdout); return 0;
        default: return 2;
        }
    }
    if (optind != argc)
        return cmd_usage_fail(l->command, "%s takes no argument '%s'", l->command, argv[optind]);

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct cmd_env env = {0};
    char **names = NULL;
    size_t n = 0;
    json_t *list = json_array();
    char *table = NULL;
    size_t table_len = 0;
    FILE *tf = open_memstream(&table, &table_len);
    int rc = 1;

    if (!list || !tf) {
        fputs("refit: out of memory\n", stderr);
        goto out;
    }
    if (l->subdir) {
        /* Lua first: cmd_open finds the models folder, and the list is a folder of it. */
        if (cmd_open(&env, NULL, 0) != 0)
            goto out;
        if (snprintf(dir, sizeof(dir), "%s/%s", env.models, l->subdir) >= (int)sizeof(dir)) {
            fprintf(stderr, "refit: %s/%s: path too long\n", env.models, l->subdir);
            goto out;
        }
        if (cmd_lua_names(dir, l->what, &names, &n) != 0)
            goto out;
    } else {
        /* Lua is opened once the folder is listed: a folder that cannot be read says so. */
        cmd_models_dir(dir, sizeof(dir));
        if (cmd_lua_names(dir, l->what, &names, &n) != 0 || cmd_open(&env, NULL, 0) != 0)
            goto out;
    }
    if (!json)
        fprintf(tf, "%s\n", l->header);
    for (size_t i = 0; i < n; i++) {
        json_t *row = NULL;
        if (l->row(&env, names[i], json ? NULL : tf, json ? &row : NULL, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
        if (json && (!row || json_array_append_new(list, row) < 0)) {
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
