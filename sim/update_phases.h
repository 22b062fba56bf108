/* An update's fixed work around the wire: a delta's senders diff the new weights against
 * the last sent ones before it and its receivers scatter the changes after it; a merged
 * LoRA update's engine folds B A into each weight after it. */
#ifndef RF_UPDATE_PHASES_H
#define RF_UPDATE_PHASES_H

#include <stdint.h>

#include "error.h"
#include "plan.h"
#include "simulate.h"
#include "topology.h"

/* The bytes of HBM a GPU writes to scatter k changed elements of `elem` bytes into n: a
 * write lands in a 32-byte sector (the CUDA C++ Best Practices Guide, "Coalesced Access to
 * Global Memory": global memory is accessed in 32-byte segments), so the written bytes are
 * k sectors, or the whole box where changes are denser than one per sector. */
int64_t rf_delta_sector_bytes(int64_t n, int64_t k, size_t elem);

/* Adds the phases of plan's update to a simulated prediction (none for a full update;
 * tensor_mask as rf_sim_options'): the diff on each sender before the wire, the scatter on
 * each receiver and the merge on each engine GPU after it, each at the GPU's HBM rate,
 * twice its copy link's (a copy reads and writes each byte). The wire's rounds and phases
 * move back by the diff, and predicted_s becomes diff + wire + scatter + merge. */
int rf_update_phases(const struct rf_plan *plan, const struct rf_side *train,
                     const struct rf_side *infer, const struct rf_topology *topo,
                     const uint8_t *tensor_mask, struct rf_prediction *out, struct rf_error *err);

#endif
