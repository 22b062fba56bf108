/* The NCCL environment of a replay (exec/nccl_env.h). NCCL reads NCCL_PXN_DISABLE when a
 * communicator is created (src/graph/paths.cc), so every rank sets it before its backend
 * starts; a plan predicted without PXN and replayed with it would measure another plan. */
#include "nccl_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "description.h"

static const char pxn_var[] = "NCCL_PXN_DISABLE";

int rf_nccl_env_plan(struct rf_nccl_env *e, const char *scenario_json, struct rf_error *err)
{
    json_t *doc = NULL;
    memset(e, 0, sizeof(*e));
    e->pxn = -1;
    if (!scenario_json)
        return 0;
    int rc = rf_describe_parse(scenario_json, &doc, err);
    if (rc == 0)
        e->pxn = rf_describe_pxn(doc);
    json_decref(doc);
    return rc;
}

/* What one rank reports to rank 0. */
struct rank_env {
    char value[16]; /* the variable's value, "" when unset */
    int8_t set, by_user;
};

int rf_nccl_env_apply(struct rf_nccl_env *e, struct rf_ctl *ctl, struct rf_error *err)
{
    MPI_Request r;
    int rc;
    if (MPI_Ibcast(&e->pxn, 1, MPI_INT64_T, 0, ctl->comm, &r) != MPI_SUCCESS)
        return rf_error_set(err, RF_ECOMM, "MPI_Ibcast failed");
    if ((rc = rf_ctl_waitall(ctl, 1, &r, "rank 0's NCCL environment", err)) < 0)
        return rc;
    struct rank_env mine = {0}, *all = NULL;
    const char *cur = getenv(pxn_var);
    mine.by_user = cur != NULL;
    if (!cur && e->pxn == 0) {
        if (setenv(pxn_var, "1", 1) != 0)
            return rf_error_set(err, RF_EINVAL, "rank %d: cannot set %s=1", ctl->rank, pxn_var);
        cur = getenv(pxn_var);
    }
    mine.set = cur != NULL;
    snprintf(mine.value, sizeof(mine.value), "%s", cur ? cur : "");
    if (ctl->rank == 0 && !(all = calloc((size_t)ctl->size, sizeof(*all))))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if (MPI_Igather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
                    ctl->comm, &r) != MPI_SUCCESS) {
        free(all);
        return rf_error_set(err, RF_ECOMM, "MPI_Igather failed");
    }
    if ((rc = rf_ctl_waitall(ctl, 1, &r, "every rank's NCCL environment", err)) < 0 ||
        ctl->rank != 0) {
        free(all);
        return rc;
    }
    int users = 0, ours = 0;
    size_t n = 0;
    e->value[0] = '\0';
    for (int i = 0; i < ctl->size; i++) {
        bool seen = false;
        all[i].value[sizeof(all[i].value) - 1] = '\0';
        if (!all[i].set)
            continue;
        users += all[i].by_user;
        ours += !all[i].by_user;
        for (int j = 0; j < i && !seen; j++)
            seen = all[j].set && strcmp(all[j].value, all[i].value) == 0;
        if (!seen && n + strlen(all[i].value) + 2 < sizeof(e->value))
            n += (size_t)snprintf(e->value + n, sizeof(e->value) - n, n ? ",%s" : "%s",
                                  all[i].value);
    }
    e->set_by = users && ours ? "user and refit-exec" : users ? "user" : ours ? "refit-exec" : NULL;
    free(all);
    return 0;
}

static const char *plan_says(int64_t pxn)
{
    return pxn == 0   ? "the plan's prediction assumed fabric.pxn = false"
           : pxn == 1 ? "the plan's prediction assumed fabric.pxn = true"
                      : "the run records no PXN choice";
}

void rf_nccl_env_describe(const struct rf_nccl_env *e, char *buf, size_t size)
{
    const char *who = !e->set_by                             ? NULL
                      : strcmp(e->set_by, "refit-exec") == 0 ? "set by refit-exec"
                      : strcmp(e->set_by, "user") == 0
                          ? "set by the user, kept"
                          : "set by the user on some ranks, kept, and by refit-exec on the others";
    if (who)
        snprintf(buf, size, "%s=%s (%s: %s)", pxn_var, e->value, who, plan_says(e->pxn));
    else
        snprintf(buf, size, "%s", "");
}

json_t *rf_nccl_env_json(const struct rf_nccl_env *e)
{
    json_t *o = json_object();
    if (!o || !e->set_by)
        return o;
    json_t *v = json_pack("{ss ss so}", "value", e->value, "set_by", e->set_by, "plan_pxn",
                          e->pxn < 0 ? json_null() : json_boolean(e->pxn == 1));
    if (!v || json_object_set_new(o, pxn_var, v) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}
