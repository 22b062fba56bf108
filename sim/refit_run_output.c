/* What the plan and sim commands both print of a run: the memory lines, the memory and
 * placement JSON, and the process's peak memory. */
#include <sys/resource.h>

#include "describe.h"
#include "memory.h"
#include "refit_run.h"

void refit_print_memory(FILE *f, const struct rf_scenario *sc)
{
    char line[256];
    const struct rf_side_memory *m[2] = {&sc->mem_train, &sc->mem_infer};
    for (int i = 0; i < 2; i++) {
        rf_memory_describe(m[i], i == 0, line, sizeof(line));
        fprintf(f, "  memory %s: %s%s\n", i == 0 ? "train" : "infer", line,
                m[i]->fits ? "" : "  DOES NOT FIT (allow_overcommit)");
    }
}

char *refit_memory_lines(const struct rf_scenario *sc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    refit_print_memory(f, sc);
    fclose(f);
    return buf;
}

json_t *refit_memory_json(const struct rf_scenario *sc)
{
    return json_pack("{so so sb}", "train", rf_memory_json(&sc->mem_train), "infer",
                     rf_memory_json(&sc->mem_infer), "overcommitted", sc->overcommitted);
}

json_t *refit_placement_json(const struct rf_side *s)
{
    return json_pack("{ss sI sI sI sI sb}", "placement", s->domain_gpus > 0 ? "domain" : "packed",
                     "domain_gpus", (json_int_t)s->domain_gpus, "gpus", (json_int_t)s->gpus, "span",
                     (json_int_t)s->place.span, "engines_per_domain",
                     (json_int_t)s->place.per_domain, "gaps", s->place.gaps);
}

int64_t refit_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (int64_t)ru.ru_maxrss * 1024;
}

json_t *refit_estimate_json(const struct refit_run *r)
{
    return json_pack("{sI sI sI}", "boxes", (json_int_t)r->size.boxes, "deliveries",
                     (json_int_t)r->size.deliveries, "memory_bytes", (json_int_t)r->estimate_bytes);
}
