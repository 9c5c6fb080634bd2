/* cli_opts.c — the option parser every command uses (see cli.h): argparse's
 * rules as the reference tools have them, so that a flag may be abbreviated
 * to a unique prefix of its name in every command; it also takes the
 * options every command has (--csv-safe, --max-input-bytes) itself. */
#include "tools/cli.h"
#include "report/report.h"
#include "base/profile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

tl_cli_common tl_cli_flags;

/* The options every command takes besides its own, spelled out in full
 * only: a command's abbreviations stay what they are. */
enum { C_CSV_SAFE, C_MAX_INPUT, C_PROFILE };
static const tl_cli_opt COMMON[] = {
    [C_CSV_SAFE] = {"--csv-safe", TL_CLI_FLAG},
    [C_PROFILE] = {"--profile", TL_CLI_FLAG},
    [C_MAX_INPUT] = {"--max-input-bytes", TL_CLI_VALUE},
};
#define NCOMMON (sizeof COMMON / sizeof *COMMON)
const tl_cli_opt *const tl_cli_common_opts = COMMON;
const size_t tl_cli_ncommon = NCOMMON;

int tl_cli_parse_size(const char *s, uint64_t *out)
{
    if (!strcmp(s, "off") || !strcmp(s, "none")) { *out = UINT64_MAX; return 0; }
    if (!isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    static const char UNITS[] = "kmgt";
    const char *u = *end ? strchr(UNITS, tolower((unsigned char)*end)) : NULL;
    if (u) {
        for (const char *q = UNITS; q <= u; q++) {
            if (v > UINT64_MAX / 1024) return -1;
            v *= 1024;
        }
        end++;
        if (*end == 'i' || *end == 'I') end++;
        if (*end == 'b' || *end == 'B') end++;
    }
    if (*end || v == UINT64_MAX) return -1;
    *out = v;
    return 0;
}

void tl_cli_args_init(tl_cli_args *p, int argc, char **argv, const tl_cli_opt *opts, size_t nopts)
{
    memset(p, 0, sizeof *p);
    p->argc = argc;
    p->argv = argv;
    p->opts = opts;
    p->nopts = nopts;
    p->i = 1;
    tl_cli_flags.ndbs = 0;
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

static int take_value(tl_cli_args *p, const tl_cli_opt *opt, int k, const char *eq);

/* a[0..n) names none of the command's options: one of COMMON is applied
 * here and the parser moves on to the next word; else TL_CLI_UNKNOWN. */
static int common_option(tl_cli_args *p, const char *a, size_t n, const char *eq)
{
    int c = -1;
    for (size_t k = 0; k < NCOMMON; k++)
        if (spelled(COMMON[k].names, a, n, 1)) c = (int)k;
    if (c < 0) return TL_CLI_UNKNOWN;
    if (take_value(p, &COMMON[c], c, eq) == TL_CLI_BAD) return TL_CLI_BAD;
    if (c == C_CSV_SAFE) tl_report_csv_set_safe(1);
    else if (c == C_PROFILE) tl_prof_enable(1);
    else if (tl_cli_parse_size(p->val, &tl_cli_flags.max_input_bytes))
        return bad(p, "wants a size in bytes (1000000, 512M, 2G) or off");
    return tl_cli_next(p);
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
    if (k < 0) return common_option(p, a, n, eq);
    return take_value(p, &p->opts[k], k, eq);
}

/* The option just read (opts[k] of p, or COMMON's) with its value; k or TL_CLI_BAD. */
static int take_value(tl_cli_args *p, const tl_cli_opt *opt, int k, const char *eq)
{
    long_name(opt->names, p->name, sizeof p->name);
    switch (opt->arg) {
    case TL_CLI_FLAG:
        if (eq) return bad(p, "ignored explicit argument");
        break;
    case TL_CLI_VALUE:
        if (eq) p->val = eq;
        else if (p->i < p->argc) p->val = p->argv[p->i++];
        else return bad(p, "expected one argument");
        if (!strcmp(p->name, "--db")) {
            if (tl_cli_flags.ndbs == sizeof tl_cli_flags.dbs / sizeof *tl_cli_flags.dbs)
                return bad(p, "names more stores than 256 (list them in a file: --db @FILE)");
            tl_cli_flags.dbs[tl_cli_flags.ndbs++] = p->val;
        }
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
    if (k >= 0) return opts[k].arg == TL_CLI_VALUE;
    for (size_t c = 0; c < NCOMMON; c++)
        if (!strcmp(COMMON[c].names, word)) return COMMON[c].arg == TL_CLI_VALUE;
    return 0;
}

int tl_cli_apply_common(int argc, char **argv, const tl_cli_opt *opts, size_t nopts, const char *cmd)
{
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, opts, nopts);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;)
        if (k == TL_CLI_BAD && !strcmp(p.name, COMMON[C_MAX_INPUT].names)) {
            fprintf(stderr, "tracelens %s: %s\n", cmd, p.msg);
            return TL_EXIT_USAGE;
        }
    return TL_EXIT_OK;
}
