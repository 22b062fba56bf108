/* Runs that describe themselves: the fully resolved scenario of a run as one JSON document
 * (run.scenario_json), read back by refit-exec, calibrate and refit show/diff. */
#ifndef RF_DESCRIBE_H
#define RF_DESCRIBE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "auto.h"
#include "description.h"
#include "error.h"
#include "plan.h"
#include "scenario.h"
#include "topology.h"

/* What a run's description is made of. */
struct rf_describe_input {
    const struct rf_scenario *sc; /* as loaded and initialised (sides, memory) */
    const struct rf_plan *plan;   /* as planned: per-tensor strategies, chunk, relay */
    /* auto's record (plan->strategy == RF_STRAT_AUTO), else NULL: the PXN, sources and
     * relay structure it chose. */
    const struct rf_auto_choice *choice;
    /* The preset sc->cluster was built from (its cluster file with nothing overridden), or
     * NULL: the fields the scenario overrode are recorded against it. */
    const struct rf_cluster *preset;
};

/* The document (README, "Inspecting runs"): version, source, model (name, source, family,
 * sizes), strategy, train and infer (every resolved size, dtype, stage_layers, the memory
 * options), cluster (the normalised cluster, every override and calibration knob
 * applied), cluster_preset (the preset's value of every field the scenario changed),
 * staging_bytes, chunk_bytes (as planned), sources, relay, allow_overcommit,
 * tensor_strategies (per role, tensors per strategy, as planned), for auto, auto
 * (choice, pxn, sources, relay) and, with a framework profile, framework (name, source,
 * strategies, finalize_s, broadcast and reshard as the profile has them, bucket sizes in
 * bytes). NULL when out of memory. */
json_t *rf_describe(const struct rf_describe_input *in);
/* The same as canonical compact text (sorted keys, exact reals: sim/json.h), as stored. */
char *rf_describe_text(const struct rf_describe_input *in);

/* A cluster as the Lua contract normalises it, and back. rf_cluster_from_json fills c
 * (strings owned: rf_cluster_release) from such an object, naming a missing or mistyped
 * field ("cluster.fabric.pxn: expected a boolean"); rf_topology_init checks the figures. */
json_t *rf_cluster_json(const struct rf_cluster *c);
int rf_cluster_from_json(const json_t *o, struct rf_cluster *c, struct rf_error *err);
/* The profile a description holds (its "framework" object, as rf_describe writes it) into
 * fw, which it initialises (present); a missing or mistyped field is named
 * ("framework.broadcast.buffers: ..."). On failure fw holds nothing to release. */
struct rf_framework;
int rf_framework_from_json(const json_t *o, struct rf_framework *fw, struct rf_error *err);

/* The cluster a stored run was predicted on: the description's cluster with auto's PXN
 * choice applied. */
int rf_describe_cluster(const json_t *doc, struct rf_cluster *c, struct rf_error *err);
/* One leaf of a document: its dotted path ("cluster.fabric.pxn") and its value as
 * canonical text ("false"); arrays are leaves. */
struct rf_json_leaf {
    char *path;
    char *value;
};

/* Every leaf of v in path order (objects' keys sorted), skipping the top-level members
 * named in skip (NULL-terminated; may be NULL). */
int rf_json_leaves(const json_t *v, const char *const *skip, struct rf_json_leaf **out, size_t *n,
                   struct rf_error *err);
void rf_json_leaves_free(struct rf_json_leaf *leaves, size_t n);

/* What differs between two documents' leaves: path, and each side's value (NULL where the
 * path is absent), in path order. */
struct rf_json_change {
    const char *path;
    const char *a, *b;
};

/* The changes between leaf lists a and b (both in path order), pointing into them. */
int rf_json_diff(const struct rf_json_leaf *a, size_t na, const struct rf_json_leaf *b, size_t nb,
                 struct rf_json_change **out, size_t *n, struct rf_error *err);

/* A side's memory (sim/memory.h) as the commands print it in --json: the worst GPU by
 * part, hbm_bytes, budget_bytes, headroom_bytes, fits. */
json_t *rf_memory_json(const struct rf_side_memory *m);

#endif
