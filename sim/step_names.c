/* The names of a step's phases and parts (sim/step.h), as the store's CHECK constraints,
 * refit show and the report spell them; kept apart from the phase model (sim/step.c). */
#include <string.h>

#include "step.h"

static const char *const phase_names[RF_STEP_PHASE_COUNT] = {"export",   "transfer", "load",
                                                             "finalize", "prepare",  "resume"};
static const char *const part_names[RF_STEP_PART_COUNT] = {"all", "bulk", "misc"};

/* A value outside the enum is named "?", which no CHECK constraint accepts: storing it fails
 * inside the run's transaction and nothing of the run is left. */
const char *rf_step_phase_name(enum rf_step_phase_kind phase)
{
    return (unsigned)phase < RF_STEP_PHASE_COUNT ? phase_names[phase] : "?";
}

const char *rf_step_part_name(enum rf_step_part part)
{
    return (unsigned)part < RF_STEP_PART_COUNT ? part_names[part] : "?";
}

int rf_step_phase_parse(const char *name)
{
    for (int i = 0; name && i < RF_STEP_PHASE_COUNT; i++)
        if (strcmp(name, phase_names[i]) == 0)
            return i;
    return -1;
}

int rf_step_part_parse(const char *name)
{
    for (int i = 0; name && i < RF_STEP_PART_COUNT; i++)
        if (strcmp(name, part_names[i]) == 0)
            return i;
    return -1;
}
