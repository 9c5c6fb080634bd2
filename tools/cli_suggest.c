/* cli_suggest.c — "did you mean": the known word nearest to a mistyped
 * command or option name. */
#include "tools/cli.h"

#include <stdio.h>
#include <string.h>

/* '-' and '_' spell the same word (--enable-kernel-summary is a common
 * slip for the reference's --enable_kernel_summary), letters match
 * case-blind. */
static int same_char(char a, char b)
{
    if (a == '-') a = '_';
    if (b == '-') b = '_';
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
    return a == b;
}

/* Edit distance with adjacent transpositions (optimal string alignment)
 * between a[0..na) and b[0..nb); words longer than 63 bytes count as far. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb)
{
    enum { MAXW = 64 };
    if (na >= MAXW || nb >= MAXW) return MAXW;
    size_t d[MAXW][MAXW];
    for (size_t i = 0; i <= na; i++) d[i][0] = i;
    for (size_t j = 0; j <= nb; j++) d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t best = d[i - 1][j - 1] + !same_char(a[i - 1], b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && same_char(a[i - 1], b[j - 2]) && same_char(a[i - 2], b[j - 1]) &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

const char *tl_cli_nearest(const char *word, size_t nw, const char *const *cands, const size_t *lens, size_t n)
{
    size_t best = (size_t)-1, limit = 1 + nw / 6;
    if (limit > 3) limit = 3;
    const char *hit = NULL;
    for (size_t k = 0; k < n; k++) {
        size_t d = distance(word, nw, cands[k], lens ? lens[k] : strlen(cands[k]));
        if (d <= limit && d < best) {
            best = d;
            hit = cands[k];
        }
    }
    return hit;
}

/* Every long spelling ("--name") in a '|'-separated list, appended. */
static void add_spellings(const char *names, const char **cands, size_t *lens, size_t *n, size_t cap)
{
    for (const char *q = names; *q && *n < cap;) {
        size_t len = strcspn(q, "|");
        if (len > 2 && q[0] == '-' && q[1] == '-') {
            cands[*n] = q;
            lens[(*n)++] = len;
        }
        q += len + (q[len] == '|');
    }
}

const char *tl_cli_hint(const tl_cli_args *p)
{
    static char hint[96];
    enum { CAP = 256 };
    const char *cands[CAP];
    size_t lens[CAP], n = 0;
    hint[0] = 0;
    if (!p->arg || p->arg[0] != '-' || p->arg[1] != '-') return hint;
    for (size_t k = 0; k < p->nopts; k++) add_spellings(p->opts[k].names, cands, lens, &n, CAP);
    for (size_t k = 0; k < tl_cli_ncommon; k++) add_spellings(tl_cli_common_opts[k].names, cands, lens, &n, CAP);
    size_t nw = strcspn(p->arg, "=");
    const char *hit = tl_cli_nearest(p->arg, nw, cands, lens, n);
    if (hit) snprintf(hint, sizeof hint, " (did you mean %.*s?)", (int)strcspn(hit, "|"), hit);
    return hint;
}
