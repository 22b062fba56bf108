/* A delta update's fixed work around the wire: the senders' diff of the new weights against
 * the last sent ones, and the receivers' scatter of the changes into their weights. */
#ifndef RF_DELTA_PHASES_H
#define RF_DELTA_PHASES_H

#include <stdint.h>

#include "error.h"
#include "plan.h"
#include "simulate.h"
#include "topology.h"

/* The bytes of HBM a GPU reads and writes to scatter k changed elements of `elem` bytes
 * into n: a write lands in a 32-byte sector (the CUDA C++ Best Practices Guide, "Coalesced
 * Access to Global Memory": global memory is accessed in 32-byte segments), so the written
 * bytes are k sectors, or the whole box where changes are denser than one per sector. */
int64_t rf_delta_sector_bytes(int64_t n, int64_t k, size_t elem);

/* Adds the diff and scatter phases of plan's delta tensors to a simulated prediction (none
 * when it has none; tensor_mask as rf_sim_options'): the diff runs before the wire on each
 * sender, the scatter after it on each receiver, each at the GPU's HBM rate, twice its copy
 * link's (a copy reads and writes each byte). The wire's rounds and phases move back by
 * the diff, and predicted_s becomes diff + wire + scatter. */
int rf_delta_phases(const struct rf_plan *plan, const struct rf_topology *topo,
                    const uint8_t *tensor_mask, struct rf_prediction *out, struct rf_error *err);

#endif
