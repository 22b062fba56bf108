/* `refit models`: the model descriptions refit knows, with their parameter counts. */
#include <jansson.h>
#include <stdio.h>

#include "cmd.h"
#include "json.h"
#include "model.h"
#include "scenario.h"

static int model_row(struct cmd_env *env, const char *path, FILE *tf, json_t **json,
                     struct rf_error *err)
{
    struct rf_model m;
    if (rf_lua_load_model(env->L, path, &m, err) < 0)
        return -1;
    int64_t params = rf_model_params(&m), active = rf_model_active_params(&m);
    int64_t bytes = rf_model_bytes(&m);
    if (json)
        *json = json_pack("{so sI sI sI sI so}", "name", rf_json_text(m.name), "params",
                          (json_int_t)params, "active_params", (json_int_t)active, "bf16_bytes",
                          (json_int_t)bytes, "tensors", (json_int_t)m.n_tensors, "family",
                          rf_json_text(m.family));
    else
        fprintf(tf, "%-22s %10.2f %10.2f %10.1f %8zu\n", m.name, (double)params / 1e9,
                (double)active / 1e9, (double)bytes / 1e9, m.n_tensors);
    rf_model_release(&m);
    return 0;
}

int cmd_models(int argc, char **argv)
{
    static const struct cmd_list list = {
        .command = "models",
        .usage = "usage: refit models [--json]\n"
                 "\n"
                 "Lists the model architectures of the models folder with their parameter "
                 "counts.\n",
        .what = "models",
        .header = "model                   params(B)  active(B)   bf16(GB)  tensors",
        .row = model_row};
    return cmd_list_run(&list, argc, argv);
}
