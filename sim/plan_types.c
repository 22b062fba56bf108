/* The plan as data (sim/plan.h): its strategies' names and its release, which the store's
 * reader and the executor need without the planner (sim/plan.c) that fills a plan. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

static const char *const strategy_names[RF_STRAT_COUNT] = {"broadcast", "reshard", "hierarchical",
                                                           "hybrid", "auto"};

const char *rf_strategy_name(enum rf_strategy s)
{
    return strategy_names[s];
}

int rf_strategy_parse(const char *s, enum rf_strategy *out)
{
    for (int i = 0; i < RF_STRAT_COUNT; i++)
        if (strcmp(s, strategy_names[i]) == 0) {
            *out = (enum rf_strategy)i;
            return 0;
        }
    return -1;
}

void rf_plan_release(struct rf_plan *plan)
{
    if (!plan)
        return;
    for (size_t i = 0; i < plan->n_tensors; i++)
        free(plan->tensors[i].name);
    free(plan->tensors);
    free(plan->wire_dtype);
    free(plan->tensor_strategy);
    free(plan->boxes);
    free(plan->transfers);
    free(plan->collectives);
    memset(plan, 0, sizeof(*plan));
}
