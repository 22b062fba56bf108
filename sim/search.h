/* Layout search (`refit search`, a study's refit.search): the inference layouts of a scenario
 * that fit in memory, each estimated cheaply, the best simulated in full and stored. */
#ifndef RF_SEARCH_H
#define RF_SEARCH_H

#include "auto.h"
#include "scenario.h"
#include "simulate.h"

#define RF_SEARCH_MAX_GPU_COUNTS 64
#define RF_SEARCH_TOP_DEFAULT 5

/* What to search; sim/cmd_search.c fills it from flags, a study from refit.search's
 * options (models/lib/search.lua checks both to the same ranges). */
struct rf_search_request {
    int64_t gpus[RF_SEARCH_MAX_GPU_COUNTS]; /* inference GPU counts; none: the scenario's */
    int n_gpus;
    enum rf_dtype dtypes[2]; /* bf16, fp8; none: the scenario's infer.dtype */
    int n_dtypes;
    int64_t pp[RF_SEARCH_MAX_GPU_COUNTS]; /* pipeline sizes allowed; none: every one */
    int n_pp;
    int64_t top;          /* layouts simulated in full and stored (0: none) */
    const char *strategy; /* NULL: the scenario's */
    const char *label;    /* stored with the runs; NULL: "search" */
    bool spanning;        /* also engines that cross NVLink domains, marked */
};

/* One candidate layout: its sizes as models/lib/search.lua enumerated it, then what the
 * search found. */
struct rf_search_row {
    int ref;      /* its scenario spec in the Lua state's registry */
    size_t index; /* its place in the enumeration */
    int64_t gpus, tp, dp, pp, ep, replicas, nodes;
    enum rf_dtype dtype;
    bool spans;                /* packed engines cross NVLink domain boundaries */
    bool fits;                 /* the inference side fits (sim/memory.c) */
    struct rf_side_memory mem; /* the inference side's worst GPU */
    /* The cheap prediction (fitting rows): the strategy-independent lower bound of the
     * simulator, and the estimate that ranks the rows (rf_simulate_bound's, for auto its
     * screen's best: rf_auto_screen, whose winner `how` names). */
    double bound_s, estimate_s;
    /* Under a framework profile, the whole step around that wire (rf_step_estimate), which
     * then ranks the rows; NAN without one (or for auto, whose screen has no step). */
    double estimate_step_s;
    char how[RF_AUTO_NAME_SIZE];
    /* The plan's memory estimated before it is built (rf_plan_in_flight_bytes); a layout
     * whose plan needs more than sim->max_memory is left out, neither estimated nor
     * simulated (too_large), and listed last with that figure. */
    int64_t need_bytes;
    bool too_large;
    bool simulated;             /* one of the top: predicted in full and stored */
    struct rf_study_result run; /* then: the stored run and its prediction */
};

struct rf_search_result {
    /* The fitting rows, ranked: the simulated ones by prediction, then the others by
     * estimate, the step's under a profile (ties: enumeration order). */
    struct rf_search_row *rows;
    size_t n_rows;
    size_t enumerated; /* layouts models/lib/search.lua listed (fitting or not) */
    size_t simulated;
    char source[256], model[64], cluster[64], strategy[16], label[64];
    char framework[64];              /* the scenario's profile ("": none); its rows rank by step */
    int64_t cluster_nodes;           /* the scenario's (a search may grow it per row) */
    struct rf_side train;            /* the scenario's training side (sizes only) */
    struct rf_side_memory mem_train; /* and its memory */
    int64_t first_run, last_run;     /* stored run ids of the simulated rows (0: none) */
};

/* Reports progress: phase 0 estimates, phase 1 full simulations; done of total finished,
 * row the one just finished (each phase starts with done = 0 and row NULL). Estimates report
 * from worker threads, one at a time. */
typedef void (*rf_search_progress)(void *ctx, int phase, size_t done, size_t total,
                                   const struct rf_search_row *row);

struct rf_search_hooks {
    rf_study_fn run; /* plans, simulates and stores one scenario (the top rows) */
    void *run_ctx;
    rf_search_progress progress; /* may be NULL */
    void *progress_ctx;
};

/* Searches the layouts of the scenario at src for req: every candidate models/lib/search.lua
 * lists is loaded through the scenario path (all of its checks), its memory computed, those
 * that fit are estimated (on sim->threads worker threads, default 2), and the req->top best
 * estimates are simulated in full and stored by hooks->run with the request's label. The
 * scenario's training side must fit (or the scenario allow overcommit). Release out with
 * rf_search_result_release. */
int rf_search(struct rf_lua *L, const struct rf_scenario_src *src,
              const struct rf_search_request *req, const struct rf_sim_options *sim,
              const struct rf_search_hooks *hooks, struct rf_search_result *out,
              struct rf_error *err);
void rf_search_result_release(struct rf_lua *L, struct rf_search_result *r);

/* The cheap prediction of one loaded scenario (sides initialised): its strategy's plan
 * bounded and estimated on the scenario's cluster, or for auto rf_auto_screen; nothing is
 * stored. A study's refit.estimate. */
struct rf_estimate {
    double bound_s;              /* strategy-independent lower bound, as a prediction's */
    double estimate_s;           /* the estimate */
    char how[RF_AUTO_NAME_SIZE]; /* what was estimated: the strategy, or auto's screen winner */
    double step_s; /* under a profile that runs the strategy, the step estimate; else NAN */
};
int rf_estimate(struct rf_scenario *sc, const struct rf_sim_options *sim, struct rf_estimate *out,
                struct rf_error *err);

/* "tp8 dp8 pp1 ep64": a layout as the search's table shows it. */
void rf_search_layout_text(const struct rf_search_row *row, char *buf, size_t size);

#endif
