/* Error reporting: one fixed-size message per error, filled where the error is found. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int rf_error_set(struct rf_error *err, int code, const char *fmt, ...)
{
    if (err) {
        /* vsnprintf into the buffer it reads from is undefined (and garbles the text in
         * glibc), so format aside and copy. */
        char text[sizeof(err->msg)];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        memcpy(err->msg, text, sizeof(text));
        err->code = code;
    }
    return code;
}
