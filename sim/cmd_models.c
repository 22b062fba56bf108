/* `refit models`: the model descriptions refit knows, with their parameter counts. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "model.h"
#include "scenario.h"

static const char usage_models[] =
    "usage: refit models [--json]\n"
    "\n"
    "Lists the model architectures of the models folder with their parameter counts.\n";

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_models(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': fputs(usage_models, stdout); return 0;
        default: fputs(usage_models, stderr); return 2;
        }
    }
    if (optind != argc) {
        fputs(usage_models, stderr);
        return 2;
    }

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    json_t *list = json_array();
    int rc = 1;

    cmd_models_dir(dir, sizeof(dir));
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "refit: %s: cannot open the models folder\n", dir);
        goto out;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".lua") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof(*names));
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = strndup(e->d_name, len - 4);
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof(*names), cmp_str);
    if (rf_lua_open(&L, dir, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (!json)
        printf("%-22s %10s %10s %10s %8s\n", "model", "params(B)", "active(B)", "bf16(GB)",
               "tensors");
    for (size_t i = 0; i < n; i++) {
        struct rf_model m;
        if (rf_lua_load_model(L, names[i], &m, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
        int64_t params = rf_model_params(&m), active = rf_model_active_params(&m);
        int64_t bytes = rf_model_bytes(&m);
        if (json)
            json_array_append_new(list,
                                  json_pack("{ss sI sI sI sI ss}", "name", m.name, "params",
                                            (json_int_t)params, "active_params", (json_int_t)active,
                                            "bf16_bytes", (json_int_t)bytes, "tensors",
                                            (json_int_t)m.n_tensors, "family", m.family));
        else
            printf("%-22s %10.2f %10.2f %10.1f %8zu\n", m.name, (double)params / 1e9,
                   (double)active / 1e9, (double)bytes / 1e9, m.n_tensors);
        rf_model_release(&m);
    }
    if (json) {
        json_dumpf(list, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    }
    rc = 0;
out:
    json_decref(list);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    rf_lua_close(L);
    return rc;
}

/* The calibrated cluster's name: NAME-calibrated, once. */
