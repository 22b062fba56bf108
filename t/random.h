/* Random models, sides and clusters for the C property tests, from a printed seed. */
#ifndef RF_T_RANDOM_H
#define RF_T_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "model.h"
#include "topology.h"

/* nodes of `per_node` GPUs with a NIC each, NVLink domains of `domain` GPUs; no
 * efficiency losses, so every capacity is its nominal rate. */
struct rf_cluster test_cluster(int64_t nodes, int64_t per_node, int64_t domain, int64_t nics);

/* The generator's state (splitmix64); seed_rng sets it from $REFIT_SEED, else the clock,
 * and prints it as a TAP comment. */
extern uint64_t rng_state;
void seed_rng(void);
uint64_t rnd(void);
int64_t pick(const int64_t *v, size_t n);

/* A random dense (experts = 0) or MoE model with uneven sizes in ts (room for 2 + 5 *
 * layers tensors). */
void random_model(struct rf_model *m, struct rf_tensor *ts, int layers, bool moe);
/* Random sides within gpus GPUs: disjoint in either order (with a gap) or colocated; a third
 * of the inference sides are FP8. */
void random_sides(struct rf_side *tr, struct rf_side *in, int layers, bool moe, int64_t gpus);
/* A DGX-like cluster, an NVL72-like one, or one whose 2-GPU domains share a NIC. */
struct rf_cluster random_cluster(void);

#endif
