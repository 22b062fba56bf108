/* The planner's output: transfer runs appended to the plan, with the tallies and the GPU
 * and NIC loads each adds, every byte count checked against 64-bit overflow. */
#include "checked.h"
#include "plan_int.h"
#include "topology.h"

/* Refuses a byte count of tensor ti past int64: a figure that wrapped would be stored as
 * if it were true. */
static int overflow(struct planner *p, int32_t ti, const char *what)
{
    return rf_error_set(p->err, RF_EINVAL, "%s: %s overflow 64-bit byte counts",
                        p->plan->tensors[ti].name, what);
}

/* *acc += a * b for a byte or load count of tensor ti, checked. */
int planner_add_bytes(struct planner *p, int32_t ti, int64_t *acc, int64_t a, int64_t b,
                      const char *what)
{
    return rf_muladd_overflow(acc, a, b) ? overflow(p, ti, what) : 0;
}

int planner_tally_add(struct planner *p, int32_t ti, const struct rf_tally *d)
{
    struct rf_plan *plan = p->plan;
    struct rf_tally *ts[2] = {&plan->total, &plan->role[plan->tensors[ti].role]};
    for (int i = 0; i < 2; i++) {
        /* Into a copy, so a refused tally leaves the plan's as it was. */
        struct rf_tally t = *ts[i];
        if (rf_add_overflow(t.payload_bytes, d->payload_bytes, &t.payload_bytes) ||
            rf_add_overflow(t.moved_bytes, d->moved_bytes, &t.moved_bytes) ||
            rf_add_overflow(t.logical_bytes, d->logical_bytes, &t.logical_bytes) ||
            rf_add_overflow(t.local_bytes, d->local_bytes, &t.local_bytes) ||
            rf_add_overflow(t.transfers, d->transfers, &t.transfers) ||
            rf_add_overflow(t.collectives, d->collectives, &t.collectives))
            return overflow(p, ti, "the plan's totals");
        *ts[i] = t;
    }
    return 0;
}

int32_t planner_egress_nic(const struct planner *p, int32_t src, int32_t dst)
{
    const struct rf_place *s = &p->topo->place[src], *d = &p->topo->place[dst];
    if (s->domain == d->domain || s->nic < 0)
        return -1;
    /* PXN: the bytes cross to the GPU of src's node on dst's rail and leave by its NIC. */
    if (p->topo->cluster->fabric.pxn && s->rail != d->rail)
        return s->nic + d->rail - s->rail;
    return s->nic;
}

/* planner_emit; egress false: the caller has counted the run's NIC egress as it chose. */
static int emit_run(struct planner *p, int32_t box, int32_t src, int32_t dst, int32_t count,
                    int32_t stride, uint8_t phase, int64_t bytes, bool count_logical, bool egress)
{
    struct rf_plan *plan = p->plan;
    int32_t ti = plan->boxes[box].tensor;
    int64_t all;
    int rc;
    /* Transfer indices are int32 (`after`, the executor's items). */
    if (plan->n_transfers >= INT32_MAX)
        return rf_error_set(p->err, RF_EINVAL, "%s: the plan exceeds 2^31 transfer runs",
                            plan->tensors[ti].name);
    if (rf_mul_overflow(bytes, count, &all))
        return overflow(p, ti, "a transfer run's bytes");
    if ((rc = RF_GROW(plan->transfers, plan->cap_transfers, plan->n_transfers + 1, p->err)) < 0)
        return rc;
    plan->transfers[plan->n_transfers++] = (struct rf_transfer){.box = box,
                                                                .src = src,
                                                                .dst = dst,
                                                                .dst_count = count,
                                                                .dst_stride = stride,
                                                                .phase = phase,
                                                                .after = -1,
                                                                .bytes = bytes};
    if (p->track_in && src != dst) {
        /* Ingress of every destination of the run: its GPU's, and its NIC's when the bytes
         * come from another NVLink domain (a fabric delivery lands on the receiver's own
         * NIC, PXN or not: topology.c's routes). */
        const struct rf_place *pl = p->topo->place;
        for (int32_t i = 0; i < count; i++) {
            int32_t g = dst + i * stride;
            if ((rc = planner_add_bytes(p, ti, &p->in_load[g], bytes, 1, "a GPU's ingress")) < 0 ||
                (pl[g].domain != pl[src].domain && pl[g].nic >= 0 &&
                 (rc = planner_add_bytes(p, ti, &p->nic_in[pl[g].nic], bytes, 1,
                                         "a NIC's ingress")) < 0))
                return rc;
        }
    }
    if (egress && p->topo && src != dst && p->topo->place[src].nic >= 0) {
        /* planner_egress_nic for each destination, with src's place read once: this runs
         * for every transfer of the plan. */
        const struct rf_place *pl = p->topo->place, *s = &pl[src];
        bool pxn = p->topo->cluster->fabric.pxn;
        for (int32_t i = 0; i < count; i++) {
            const struct rf_place *q = &pl[dst + i * stride];
            if (q->domain == s->domain)
                continue;
            int64_t *l = &p->nic_load[pxn ? s->nic + q->rail - s->rail : s->nic];
            if (rf_add_overflow(*l, bytes, l))
                return overflow(p, ti, "a NIC's load");
        }
    }
    struct rf_tally d = {0};
    d.transfers = count;
    if (src == dst) {
        d.local_bytes = all;
    } else {
        d.moved_bytes = all;
        if (phase == RF_PHASE_DELIVER)
            d.payload_bytes = all;
        if (count_logical)
            d.logical_bytes = all;
    }
    return planner_tally_add(p, ti, &d);
}

int planner_emit(struct planner *p, int32_t box, int32_t src, int32_t dst, int32_t count,
                 int32_t stride, uint8_t phase, int64_t bytes, bool count_logical)
{
    return emit_run(p, box, src, dst, count, stride, phase, bytes, count_logical, true);
}

/* Emits dsts[0..n) from src as maximal arithmetic runs (egress as in emit_run). */
static int emit_runs(struct planner *p, int32_t box, int32_t src, const int32_t *dsts, size_t n,
                     uint8_t phase, int64_t bytes, bool count_logical, bool egress)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        int32_t stride = j < n ? dsts[j] - dsts[i] : 0;
        while (j < n && dsts[j] - dsts[j - 1] == stride)
            j++;
        int rc = emit_run(p, box, src, dsts[i], (int32_t)(j - i), j - i > 1 ? stride : 0, phase,
                          bytes, count_logical, egress);
        if (rc < 0)
            return rc;
        i = j;
    }
    return 0;
}

int planner_emit_runs(struct planner *p, int32_t box, int32_t src, const int32_t *dsts, size_t n,
                      uint8_t phase, int64_t bytes, bool count_logical)
{
    return emit_runs(p, box, src, dsts, n, phase, bytes, count_logical, true);
}

int planner_emit_runs_counted(struct planner *p, int32_t box, int32_t src, const int32_t *dsts,
                              size_t n, uint8_t phase, int64_t bytes, bool count_logical)
{
    return emit_runs(p, box, src, dsts, n, phase, bytes, count_logical, false);
}
