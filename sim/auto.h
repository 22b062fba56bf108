/* The auto strategy: refit's own plan. It bounds candidate mixes of per-tensor strategies,
 * source choices and PXN, predicts the most promising ones in full, and keeps the fastest;
 * it never predicts slower than any named strategy, which it predicts whenever their bound
 * does not already rule them out. */
#ifndef RF_AUTO_H
#define RF_AUTO_H

#include "plan.h"
#include "simulate.h"

struct rf_auto_input {
    const struct rf_model *model;
    const struct rf_side *train, *infer;
    const struct rf_topology *topo;
    int64_t staging_bytes, chunk_bytes;
    /* The scenario's relay structure: hierarchical as `refit sim --strategy hierarchical`
     * plans it; auto tries others too. */
    struct rf_relay relay;
    /* How `refit sim --strategy S` chooses sources on this scenario: the named strategies
     * auto must not lose to are planned this way. */
    enum rf_sources sources;
    /* The scenario's hybrid split (its policy), tried as one candidate; may be NULL. */
    const enum rf_strategy *hybrid;
    /* The same cluster with NCCL's PXN flipped (NULL: not tried). */
    const struct rf_topology *alt_topo;
    /* Only broadcast candidates: the plans that reshard or relay (reshard, hierarchical,
     * the hybrid split) do not fit --max-memory, an estimated left_out_bytes with one
     * worker (sim/refit_run.c decides; 0 when they fit). */
    bool broadcast_only;
    int64_t left_out_bytes;
    /* The simulator's tolerance, and worker threads for independent candidates (0: the
     * online CPUs, at most 2, since each prediction holds its flows: about 1.4 GB for Kimi
     * K3 at 6144 GPUs). */
    struct rf_sim_options sim;
};

/* A candidate's name holds every word of its longest form whole: PXN off (30 bytes), the
 * sources and a relay of fanout and depth of ten digits each (62), every one of the eight
 * roles named hierarchical (175): 268 bytes with its NUL. */
#define RF_AUTO_NAME_SIZE 320

/* One candidate as the search saw it, for the run's record. */
struct rf_auto_candidate {
    char description[RF_AUTO_NAME_SIZE]; /* strategy per role, sources, PXN */
    double bound_s;                      /* rf_simulate_bound on its cluster */
    double estimate_s;                   /* its estimate, which ranks the candidates */
    double predicted_s;                  /* NAN when the bound ruled it out or ranked it too low */
    int same_as; /* index of an earlier candidate with the very same plan, or -1 */
};

#define RF_AUTO_MAX_CANDIDATES 48

struct rf_auto_choice {
    int evaluated;                  /* distinct plans predicted in full (per cluster) */
    int pruned;                     /* distinct plans only bounded */
    char description[512];          /* what won, per role */
    const struct rf_topology *topo; /* the winner's: in->topo or in->alt_topo */
    enum rf_sources sources;        /* the winner's (its relay is the plan's) */
    int64_t left_out_bytes;         /* rf_auto_input's: the direct plans were not tried */
    int n_candidates;
    struct rf_auto_candidate candidates[2 * RF_AUTO_MAX_CANDIDATES]; /* per cluster */
};

/* The worker threads auto runs candidates on, each holding a plan and its simulation. */
int rf_auto_threads(const struct rf_sim_options *sim);
/* Fills plan (scheduled, strategy RF_STRAT_AUTO) and its prediction with the best candidate
 * (see auto.c for the search). */
int rf_auto(const struct rf_auto_input *in, struct rf_plan *plan, struct rf_prediction *pred,
            struct rf_auto_choice *choice, struct rf_error *err);

/* auto's first step alone, for ranking many layouts without predicting any (refit search):
 * the uniform reshard and hierarchical plans with the scenario's sources and relay, each
 * bounded and estimated on the scenario's cluster and with PXN flipped (in->alt_topo), one
 * after the other (one plan held at a time: the caller runs layouts in parallel). The
 * lowest estimate wins; in->hybrid is not used. */
struct rf_auto_screen {
    double estimate_s;    /* the winner's estimate (rf_simulate_bound) */
    double bound_s;       /* and its plan's bound */
    double lower_bound_s; /* rf_lower_bound, strategy-independent, with the simulator's margin */
    char description[RF_AUTO_NAME_SIZE]; /* the winner: strategy, sources, PXN */
};
int rf_auto_screen(const struct rf_auto_input *in, struct rf_auto_screen *out,
                   struct rf_error *err);

#endif
