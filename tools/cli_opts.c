/* cli_opts.c — the option parser every command uses (see cli.h): argparse's
 * rules as the reference tools have them, so that a flag may be abbreviated
 * to a unique prefix of its name in every command. */
#include "tools/cli.h"

#include <ctype.h>
#include <string.h>

void tl_cli_args_init(tl_cli_args *p, int argc, char **argv, const tl_cli_opt *opts, size_t nopts)
{
    memset(p, 0, sizeof *p);
    p->argc = argc;
    p->argv = argv;
    p->opts = opts;
    p->nopts = nopts;
    p->i = 1;
}

/* A word that starts an option (argparse: a '-' not followed by a number). */
static int is_option_word(const char *a)
{
    return a[0] == '-' && a[1] && !isdigit((unsigned char)a[1]) && a[1] != '.';
}

/* Does the spelling list names hold a spelling s[0..n) exactly (exact) or
 * one that starts with it? */
static int spelled(const char *names, const char *s, size_t n, int exact)
{
    for (const char *q = names; *q;) {
        size_t len = strcspn(q, "|");
        if (q[0] == '-' && q[1] == '-' && (exact ? len == n : len >= n) && !strncmp(q, s, n)) return 1;
        if (exact && len == n && !strncmp(q, s, n)) return 1;
        q += len + (q[len] == '|');
    }
    return 0;
}

/* The first long spelling of an option (the name argparse reports). */
static void long_name(const char *names, char *out, size_t n)
{
    const char *q = strstr(names, "--");
    if (!q) q = names;
    size_t len = strcspn(q, "|");
    if (len >= n) len = n - 1;
    memcpy(out, q, len);
    out[len] = 0;
}

/* Option index for s[0..n): an exact spelling, else the one long option
 * it is a prefix of; -1 none, -2 several (p->msg lists them). */
static int match(tl_cli_args *p, const char *s, size_t n)
{
    for (size_t k = 0; k < p->nopts; k++)
        if (spelled(p->opts[k].names, s, n, 1)) return (int)k;
    if (n < 3 || s[1] != '-') return -1;
    int hit = -1, count = 0;
    for (size_t k = 0; k < p->nopts; k++)
        if (spelled(p->opts[k].names, s, n, 0)) { hit = (int)k; count++; }
    if (count < 2) return hit;
    size_t m = (size_t)snprintf(p->msg, sizeof p->msg, "ambiguous option: %.*s could match", (int)n, s);
    const char *sep = " ";
    for (size_t k = 0; k < p->nopts && m < sizeof p->msg; k++) {
        if (!spelled(p->opts[k].names, s, n, 0)) continue;
        char nm[64];
        long_name(p->opts[k].names, nm, sizeof nm);
        m += (size_t)snprintf(p->msg + m, sizeof p->msg - m, "%s%s", sep, nm);
        sep = ", ";
    }
    return -2;
}

static int bad(tl_cli_args *p, const char *what)
{
    snprintf(p->msg, sizeof p->msg, "argument %s: %s", p->name, what);
    return TL_CLI_BAD;
}

int tl_cli_next(tl_cli_args *p)
{
    p->val = NULL;
    p->first = p->nwords = 0;
    p->name[0] = p->msg[0] = 0;
    if (p->i >= p->argc) return TL_CLI_END;
    const char *a = p->arg = p->argv[p->i++];
    if (!is_option_word(a)) return TL_CLI_POSITIONAL;
    size_t n = strcspn(a, "=");
    const char *eq = a[n] == '=' ? a + n + 1 : NULL;
    int k = match(p, a, n);
    if (k == -1 && a[1] != '-' && a[2]) {
        /* -jN: a one-letter option with its value attached */
        k = match(p, a, 2);
        if (k >= 0 && p->opts[k].arg != TL_CLI_VALUE) k = -1;
        if (k >= 0) eq = a + 2;
    }
    if (k == -2) return TL_CLI_BAD;
    if (k < 0) return TL_CLI_UNKNOWN;
    long_name(p->opts[k].names, p->name, sizeof p->name);
    switch (p->opts[k].arg) {
    case TL_CLI_FLAG:
        if (eq) return bad(p, "ignored explicit argument");
        break;
    case TL_CLI_VALUE:
        if (eq) p->val = eq;
        else if (p->i < p->argc) p->val = p->argv[p->i++];
        else return bad(p, "expected one argument");
        break;
    case TL_CLI_OPTIONAL:
        if (eq) p->val = eq;
        else if (p->i < p->argc && !is_option_word(p->argv[p->i])) p->val = p->argv[p->i++];
        break;
    case TL_CLI_VALUES:
        p->val = eq;
        p->first = p->i;
        while (p->i < p->argc && !is_option_word(p->argv[p->i])) p->i++;
        p->nwords = p->i - p->first;
        break;
    }
    return k;
}

size_t tl_cli_nvalues(const tl_cli_args *p) { return (size_t)p->nwords + (p->val != NULL); }

const char *tl_cli_value(const tl_cli_args *p, size_t k)
{
    if (p->val) {
        if (k == 0) return p->val;
        k--;
    }
    return p->argv[p->first + (int)k];
}

int tl_cli_match(const tl_cli_opt *opts, size_t nopts, const char *word)
{
    if (strchr(word, '=') || !is_option_word(word)) return -1;
    tl_cli_args p;
    tl_cli_args_init(&p, 0, NULL, opts, nopts);
    int k = match(&p, word, strlen(word));
    return k >= 0 ? k : -1;
}

int tl_cli_takes_next(const tl_cli_opt *opts, size_t nopts, const char *word)
{
    int k = tl_cli_match(opts, nopts, word);
    return k >= 0 && opts[k].arg == TL_CLI_VALUE;
}
