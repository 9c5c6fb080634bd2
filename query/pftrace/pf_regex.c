/* pf_regex.c — the Python regexes of the pftrace reports' flags
 * (--exclude_kernel_regex) as POSIX extended regexes: \d \D \w \W \s \S,
 * escaped characters, character classes (with \d \w \s inside) and
 * (?:...) groups, which is what such patterns use. Anything else Python
 * has and ERE lacks (lookaround, lazy quantifiers, named groups, flags)
 * is refused by name rather than matched differently. */
#include "query/pftrace/pf_internal.h"

#include <stdio.h>
#include <string.h>

static int to_ere(const char *py, tl_buf *out, const char **bad)
{
    for (const char *p = py; *p;) {
        *bad = p;
        if (*p == '\\') {
            if (!p[1]) return -1;
            const char *cls = tl_pyre_class(p[1], 0);
            if (cls) tl_buf_puts(out, cls);
            else if (strchr(".^$*+?()[]{}|\\", p[1])) tl_buf_putc(out, '\\'), tl_buf_putc(out, p[1]);
            else if (strchr("AZbBnrtfv0123456789", p[1])) return -1; /* anchors, escapes ERE spells otherwise */
            else tl_buf_putc(out, p[1]);
            p += 2;
        } else if (*p == '[') {
            if (tl_pyre_set(p + 1, out, &p, 1)) return -1;
        } else if (*p == '(' && p[1] == '?') {
            if (p[2] != ':') return -1;
            tl_buf_putc(out, '(');
            p += 3;
        } else if ((*p == '*' || *p == '+' || *p == '?' || *p == '}') && (p[1] == '?' || p[1] == '+')) {
            return -1; /* lazy or possessive quantifier */
        } else {
            tl_buf_putc(out, *p++);
        }
    }
    tl_buf_putc(out, '\0');
    return 0;
}

int pf_regex_compile(const char *py, regex_t *re, tl_err *err)
{
    tl_buf ere = {0};
    const char *bad = py;
    if (to_ere(py, &ere, &bad)) {
        tl_buf_free(&ere);
        return tl_errf(err, TL_EUSAGE, "regex '%s': unsupported syntax at '%.8s' (Python features beyond "
                       "\\d \\w \\s classes, sets and (?:...) groups)", py, bad);
    }
    int rc = regcomp(re, ere.p, REG_EXTENDED | REG_NOSUB);
    tl_buf_free(&ere);
    if (rc) {
        char why[128];
        regerror(rc, re, why, sizeof why);
        return tl_errf(err, TL_EUSAGE, "regex '%s': %s", py, why);
    }
    return 0;
}
