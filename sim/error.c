/* Error reporting: one fixed-size message per error, filled where the error is found. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int rf_error_set(struct rf_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}
