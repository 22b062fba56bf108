/* Growable arrays: the one growth idiom of the tree. An array is a pointer and a capacity
 * (entries); RF_GROW makes room for `need` entries, doubling, with the byte count checked. */
#ifndef RF_ARRAY_H
#define RF_ARRAY_H

#include <stddef.h>

#include "error.h"

/* Grows the array *pp (a pointer to the array's pointer; entries of elem bytes, *cap of
 * them) to hold at least need entries: unchanged when it already does, else the capacity
 * doubles from max(*cap, 16) until it holds need. 0, or RF_ENOMEM (also when need x elem
 * passes SIZE_MAX) with the array as it was; err may be NULL. */
int rf_array_grow(void *pp, size_t *cap, size_t need, size_t elem, struct rf_error *err);

/* The typed form: RF_GROW(arr, cap, need, err) for `T *arr; size_t cap;`. */
#define RF_GROW(arr, cap, need, err)                                                               \
    ((need) <= (cap) ? 0 : rf_array_grow(&(arr), &(cap), (need), sizeof(*(arr)), (err)))

#endif
