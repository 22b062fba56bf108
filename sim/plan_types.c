/* The plan as data (sim/plan.h): its strategies' and sources' names, the GPUs its runs name, and
 * its release, which the store's reader and the executor need without the planner (plan.c). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#define NAME_(id, name) name,
static const char *const strategy_names[RF_STRAT_COUNT] = {RF_STRATEGIES(NAME_)};
static const char *const sources_names[RF_SOURCES_COUNT] = {RF_SOURCES_LIST(NAME_)};
#undef NAME_

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

const char *rf_sources_name(enum rf_sources s)
{
    return sources_names[s];
}

int rf_sources_parse(const char *s, enum rf_sources *out)
{
    for (int i = 0; i < RF_SOURCES_COUNT; i++)
        if (strcmp(s, sources_names[i]) == 0) {
            *out = (enum rf_sources)i;
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

int64_t rf_gpu_run_last(int64_t first, int64_t count, int64_t stride)
{
    return first + (count - 1) * stride;
}

bool rf_gpu_run_has(int64_t first, int64_t count, int64_t stride, int64_t gpu)
{
    if (stride == 0)
        return gpu == first;
    int64_t k = gpu - first;
    return k % stride == 0 && k / stride >= 0 && k / stride < count;
}

int64_t rf_plan_gpu_extent(const struct rf_plan *plan)
{
    int64_t n = 0;
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        int64_t hi = rf_gpu_run_last(t->dst, t->dst_count, t->dst_stride);
        if (t->src + 1 > n)
            n = t->src + 1;
        if (hi + 1 > n)
            n = hi + 1;
    }
    for (size_t i = 0; i < plan->n_collectives; i++) {
        const struct rf_collective *c = &plan->collectives[i];
        int64_t hi = rf_gpu_run_last(c->first_gpu, c->gpu_count, c->gpu_stride);
        if (c->root + 1 > n)
            n = c->root + 1;
        if (hi + 1 > n)
            n = hi + 1;
    }
    return n;
}
