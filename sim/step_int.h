/* What the step model's files share (sim/step.c: the phases and their composition;
 * sim/step_export.c: the export's gathers; sim/step_colocated.c: the colocated path). */
#ifndef RF_STEP_INT_H
#define RF_STEP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ring.h"
#include "step.h"

/* Megatron's mesh axes (sim/layout.c): dense (pp, dp, cp, tp), expert (pp, edp, ep, etp). */
enum { MG_PP = 0, MG_DP = 1, MG_EDP = 1, MG_TP = 3, MG_EP = 2, MG_ETP = 3 };

struct step_export_rings {
    struct rf_ring pp, tp, ep, etp, dp, edp;
    bool has_pp, has_tp, has_ep, has_etp, has_dp, has_edp;
    /* Per ring: seconds a byte of one call (a broadcast's buffer, an all-gather's output)
     * keeps its busiest NIC port busy. */
    double nic_pp, nic_tp, nic_ep, nic_etp, nic_dp, nic_edp;
    double nic_s; /* the export's busy time on that port so far */
};

/* Whether t is a stacked expert tensor; the Hugging Face tensors it stands for (one per
 * expert); the weight an FP8 scale tensor belongs to (else the tensor itself). */
bool step_is_expert(const struct rf_tensor *t);
int64_t step_hf_tensors(const struct rf_tensor *t);
const struct rf_tensor *step_weight_of(const struct rf_plan *plan, size_t i);
/* Elements the first GPU of t's stage holds on side s (its stage into *stage, when given). */
int64_t step_first_numel(const struct rf_side *s, const struct rf_tensor *t, int64_t *stage);

/* The training side's groups through its first GPU, for the export's collectives. */
int step_export_rings_init(struct step_export_rings *x, const struct rf_topology *topo,
                           const struct rf_side *train, struct rf_error *err);
void step_export_rings_release(struct step_export_rings *x);
/* One weight's export gathers (within its stage only: no PP broadcast, experts by bucket):
 * their seconds, their count added to *calls, their busiest NIC
 * time added to x->nic_s. */
double step_export_gather(const struct rf_step_input *in, struct step_export_rings *x,
                          const struct rf_tensor *t, bool stage_only, int64_t *calls);

/* A phase appended to st (at most RF_STEP_PHASES_MAX), its mechanism formatted. */
__attribute__((format(printf, 7, 8))) void
step_add_phase(struct rf_step *st, enum rf_step_part part, enum rf_step_phase_kind kind,
               double seconds, int64_t bytes, int64_t calls, const char *fmt, ...);
/* Host calls and device work within a phase: the longer, plus the first launch. */
double step_issued(double host_s, double device_s, double first_s);
/* Export, wire and load over buckets: a 3-stage pipeline when they overlap, else a sum. */
double step_compose(double e, double w, double l, int64_t buckets, bool overlap);
/* Appends the citation of an overlap to st's composition line. */
void step_cite_overlap(struct rf_step *st, const char *why);
/* Entries an SGLang loader scans per tensor (3 x (experts + 1); 0 for a dense model). */
int64_t step_scan_entries(const struct rf_plan *plan);
/* What a point-to-point path registers with the NIC this refit (params: the weights a CPU
 * replica registers one region each): seconds, and the regions into *regions. */
double step_p2p_register(const struct rf_step_input *in, int64_t params, int64_t *regions);
/* A point-to-point path planned as reshard (sim/step_p2p.c): its phases into st; its time. */
double step_p2p_part(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err,
                     int *rcp);
/* The colocated path's phases into st; its time. */
double step_colocated_part(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err,
                           int *rcp);

#endif
