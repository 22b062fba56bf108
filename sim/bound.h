/* Bounds on a refit that need no simulation: the bytes each GPU and NVLink domain must
 * receive or send, and the bytes a plan puts on each link, per role. */
#ifndef RF_BOUND_H
#define RF_BOUND_H

#include "plan.h"
#include "topology.h"

/* Lower bound of any refit of plan's tensors between these sides on this topology: the
 * largest of (bytes a GPU must receive / its NVLink + NIC ingress), (bytes an NVLink
 * domain must receive from outside / its NICs' ingress), and on the source side (bytes
 * only one GPU holds that others need / its NVLink + NIC egress) and, per set of domains
 * holding pieces, (bytes held only there and needed elsewhere / the NIC egress of the
 * set's nodes with GPUs of either side). The argument is in bound.c. */
int rf_lower_bound(const struct rf_plan *plan, const struct rf_side *train,
                   const struct rf_side *infer, const struct rf_topology *topo, double *bound,
                   struct rf_error *err);

/* Bytes each link carries for each role of the plan's tensors, routed as rf_simulate routes
 * them (transfers, and broadcasts ring by ring; copy engines left out): loads is
 * RF_ROLE_COUNT rows of topo->n_links, added to (RF_ENOMEM into err when a ring cannot be
 * built). Roles are what auto moves between
 * strategies; summing rows of different plans screens a mix without planning it. */
int rf_plan_role_loads(const struct rf_plan *plan, const struct rf_topology *topo, double *loads,
                       struct rf_error *err);
/* The busiest link's time at full rate under the sum of one row per role (a lower bound of
 * that mix's time when the rows are exact). */
double rf_role_loads_bound(const struct rf_topology *topo, const double *const *role_loads);

#endif
