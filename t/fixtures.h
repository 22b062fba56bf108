/* Test fixtures shared by the C unit tests: sides and tensors built directly in C. */
#ifndef RF_T_FIXTURES_H
#define RF_T_FIXTURES_H

#include "layout.h"

/* A Megatron side with every derived size filled and its meshes built (stages even). */
struct rf_side train_side(int64_t tp, int64_t cp, int64_t pp, int64_t dp, int64_t ep,
                          int64_t etp, bool fsdp, int64_t first, int layers);
/* A vLLM side: `replicas` engines of tp x pp x dp GPUs. */
struct rf_side infer_side(int64_t tp, int64_t pp, int64_t dp, int64_t ep, int64_t replicas,
                          int64_t first, int layers, enum rf_dtype dt);
/* A BF16 tensor of 1 (b = c = 0), 2 (c = 0) or 3 dims; 3 dims are stacked experts. */
struct rf_tensor tensor(const char *name, enum rf_class cls, enum rf_role role, int layer,
                        int64_t a, int64_t b, int64_t c);

#endif
