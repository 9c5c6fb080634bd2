/* pyregex.c — the pieces of Python's regex syntax that POSIX ERE spells
 * otherwise: the \d \w \s classes and [...] sets, shared by the commands
 * that take the reference's Python patterns (collective's --rank_regex,
 * the pftrace reports' --exclude_kernel_regex). */
#include "base/base.h"

#include <string.h>

const char *tl_pyre_class(char c, int in_set)
{
    switch (c) {
    case 'd': return in_set ? "0-9" : "[0-9]";
    case 'D': return in_set ? NULL : "[^0-9]";
    case 'w': return in_set ? "[:alnum:]_" : "[[:alnum:]_]";
    case 'W': return in_set ? NULL : "[^[:alnum:]_]";
    case 's': return in_set ? "[:space:]" : "[[:space:]]";
    case 'S': return in_set ? NULL : "[^[:space:]]";
    default: return NULL;
    }
}

int tl_pyre_set(const char *p, tl_buf *out, const char **end, int refuse_negated)
{
    tl_buf items = {0};
    int neg = 0, rbr = 0, dash = 0;
    if (*p == '^') neg = 1, p++;
    if (*p == ']') rbr = 1, p++;
    while (*p && *p != ']') {
        char c = *p++;
        if (c == '\\' && *p) {
            const char *cls = tl_pyre_class(*p, 1);
            if (!cls && refuse_negated && strchr("DWS", *p)) break;
            if (cls) {
                tl_buf_puts(&items, cls);
                p++;
                continue;
            }
            c = *p++;
        } else if (c == '-' && *p && *p != ']' && items.n) { /* a range a-b */
            tl_buf_putc(&items, '-');
            continue;
        }
        if (c == ']') rbr = 1;
        else if (c == '-') dash = 1;
        else tl_buf_putc(&items, c);
    }
    if (*p != ']') {
        tl_buf_free(&items);
        return -1;
    }
    *end = p + 1;
    /* ERE wants ']' first and '-' last to read them as themselves */
    tl_buf_putc(out, '[');
    if (neg) tl_buf_putc(out, '^');
    if (rbr) tl_buf_putc(out, ']');
    if (items.n) tl_buf_append(out, items.p, items.n);
    if (dash) tl_buf_putc(out, '-');
    tl_buf_putc(out, ']');
    tl_buf_free(&items);
    return 0;
}
