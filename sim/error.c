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
        /* One line, and no byte a terminal acts on: a message quotes the user's input
         * (a key, a value, a Lua error's text), which may hold an escape sequence. Line
         * breaks and tabs become spaces, other control bytes \xNN. */
        size_t o = 0;
        for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
            char esc[5] = {(char)*c, 0};
            if (*c == '\n' || *c == '\t' || *c == '\r')
                esc[0] = ' ';
            else if (*c < 0x20 || *c == 0x7f)
                snprintf(esc, sizeof(esc), "\\x%02X", *c);
            size_t n = strlen(esc);
            if (o + n >= sizeof(err->msg))
                break;
            memcpy(err->msg + o, esc, n);
            o += n;
        }
        err->msg[o] = 0;
        err->code = code;
    }
    return code;
}
