/* Growable arrays (sim/array.h): the one place the tree grows an array. */
#include "array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int rf_array_grow(void *pp, size_t *cap, size_t need, size_t elem, struct rf_error *err)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap > 16 ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            goto nomem;
        nc *= 2;
    }
    if (elem > 0 && nc > SIZE_MAX / elem)
        goto nomem;
    void *old;
    memcpy(&old, pp, sizeof(old));
    void *p = realloc(old, nc * elem);
    if (!p)
        goto nomem;
    memcpy(pp, &p, sizeof(p));
    *cap = nc;
    return 0;
nomem:
    return err ? rf_error_set(err, RF_ENOMEM, "out of memory") : RF_ENOMEM;
}
