/* A plan's size before it is built (rf_plan_estimate): its boxes and deliveries counted from
 * the layouts' cells alone, so a plan too large for the machine is refused up front. */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/* Counts one tensor's boxes and deliveries into out. A broadcast tensor's plan gathers each
 * source cell onto the root and then runs one collective: a box and a transfer per cell. */
static int count_tensor(struct planner *p, const struct rf_tensor *t, const struct rf_side *train,
                        const struct rf_side *infer, bool broadcast, struct rf_plan_size *out)
{
    int rc;
    if ((rc = planner_collect_cells_as(p, train, t, &p->src, false)) < 0)
        return rc;
    if (broadcast) {
        out->boxes += (int64_t)p->src.n;
        out->deliveries += (int64_t)p->src.n;
        return 0;
    }
    if ((rc = planner_collect_cells_as(p, infer, t, &p->dst, false)) < 0)
        return rc;
    return planner_count_cells(p, t, &out->boxes, &out->deliveries);
}

int rf_plan_estimate(const struct rf_model *model, const struct rf_side *train,
                     const struct rf_side *infer, bool broadcast, struct rf_plan_size *out,
                     struct rf_error *err)
{
    struct rf_plan empty = {0};
    struct planner p = {.plan = &empty, .err = err};
    int rc = 0;
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < model->n_tensors && rc == 0; i++) {
        const struct rf_tensor *t = &model->tensors[i];
        struct rf_tensor scale;
        rc = count_tensor(&p, t, train, infer, broadcast, out);
        /* A quantising side's block scales are planned as tensors of their own, placed as
         * their weight (sim/plan_tensors.c). */
        if (rc == 0 && rf_tensor_scale(t, infer->dtype, &scale))
            rc = count_tensor(&p, &scale, train, infer, broadcast, out);
    }
    planner_release(&p);
    return rc;
}

int64_t rf_plan_size_bytes(const struct rf_plan_size *size)
{
    return size->boxes * (int64_t)sizeof(struct rf_plan_box) +
           size->deliveries * (int64_t)sizeof(struct rf_transfer);
}
