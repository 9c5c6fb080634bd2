/* split_annot.c — the step annotations as the reference's splitter reads
 * them (TraceLens/TraceUtils/annotation_utils.py, IterationAnnotation):
 * which names are iteration roots (its primary and backup pattern tiers)
 * and the per-step details its steady-state and phase logic works on. The
 * report's own step parser (phases.c) keeps its counts; the splitter's
 * names and windows depend on exactly these ones, so they are read here
 * the way the reference reads them, format by format. */
#include "query/inference/inference.h"
#include "query/inference/split_internal.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* The reference's patterns (Python re.match: anchored at the start only),
 * in POSIX ERE. `\b` after EXTEND|DECODE|MIXED becomes "the next character
 * is not a word character". */
enum { P_VLLM_DET, P_VLLM_NAT, P_SGL_DET, P_SGL_NAT, P_ATOM_DET, P_ATOM_NAT, P_DIFF, P_N };
static const char *const PATTERNS[P_N] = {
    [P_VLLM_DET] = ("^execute_[0-9]+_context_[0-9]+\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)"
                    "_generation_[0-9]+\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)"),
    [P_VLLM_NAT] = "^execute_context_[0-9]+\\([0-9]+\\)_generation_[0-9]+\\([0-9]+\\)",
    [P_SGL_DET] = "^step\\[(EXTEND|DECODE|MIXED)[^]A-Za-z0-9_][^]]*sqsq=[0-9]+[^]]*\\]",
    [P_SGL_NAT] = "^step\\[(EXTEND|DECODE|MIXED)(\\]|[^A-Za-z0-9_\n].*\\])",
    [P_ATOM_DET] = "^(prefill|decode)\\[.*sqsq=[0-9]+.*\\]",
    [P_ATOM_NAT] = "^(prefill|decode)\\[.*\\]",
    [P_DIFF] = "^execute_diffusion_[0-9]+_[0-9]+x[0-9]+",
};
/* ITERATION_PATTERNS and ITERATION_BACKUP_PATTERNS */
static const int PRIMARY[] = {P_VLLM_DET, P_ATOM_DET, P_SGL_DET};
static const int BACKUP[] = {P_VLLM_NAT, P_SGL_NAT, P_ATOM_NAT, P_DIFF};

static regex_t re_compiled[P_N];
static int re_ready;

static void compile_patterns(void)
{
    if (re_ready) return;
    for (int k = 0; k < P_N; k++)
        if (regcomp(&re_compiled[k], PATTERNS[k], REG_EXTENDED | REG_NOSUB | REG_NEWLINE)) abort();
    re_ready = 1;
}

static int matches(int k, const char *name)
{
    compile_patterns();
    return regexec(&re_compiled[k], name, 0, NULL, 0) == 0;
}

int sc_pattern_tier(const char *name)
{
    for (size_t k = 0; k < sizeof PRIMARY / sizeof *PRIMARY; k++)
        if (matches(PRIMARY[k], name)) return 1;
    for (size_t k = 0; k < sizeof BACKUP / sizeof *BACKUP; k++)
        if (matches(BACKUP[k], name)) return 2;
    return 0;
}

/* Python int() of a token: optional sign and digits (underscores between
 * digits allowed), surrounding whitespace; anything else (the empty token
 * included) is the reference's _safe_int failure, 0. */
static int64_t safe_int(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    int neg = 0;
    if (n && (*s == '+' || *s == '-')) neg = *s == '-', s++, n--;
    if (!n || !isdigit((unsigned char)*s) || !isdigit((unsigned char)s[n - 1])) return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '_' && isdigit((unsigned char)s[i + 1])) continue;
        if (!isdigit((unsigned char)s[i])) return 0;
        v = v * 10 + (s[i] - '0');
    }
    return neg ? -v : v;
}

/* _tokenize: parentheses become '_', every run of the letters s, q, k
 * becomes '_', then the text is split on '_'. Token k into tok (NULL/0
 * when there are fewer). */
static int64_t token_int(const char *name, int want)
{
    size_t n = strlen(name);
    char *b = tl_xmalloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        char c = name[i];
        if (c == 's' || c == 'q' || c == 'k') {
            while (i < n && (name[i] == 's' || name[i] == 'q' || name[i] == 'k')) i++;
            b[m++] = '_';
            continue;
        }
        b[m++] = (c == '(' || c == ')') ? '_' : c;
        i++;
    }
    b[m] = 0;
    int k = 0;
    int64_t v = 0;
    for (size_t a = 0;; k++) {
        size_t e = a;
        while (e < m && b[e] != '_') e++;
        if (k == want) {
            v = safe_int(b + a, e - a);
            break;
        }
        if (e >= m) break;
        a = e + 1;
    }
    free(b);
    return v;
}

static int is_word(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* re.findall(r"(\w+)=(\d+)", body) into a dict (the last value of a key
 * wins): the value of key, or -1 when absent. */
static int64_t kv_digits(const char *s, size_t n, const char *key)
{
    int64_t v = -1;
    size_t kl = strlen(key);
    for (size_t i = 0; i < n;) {
        if (!is_word(s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && is_word(s[j])) j++;
        if (j + 1 < n && s[j] == '=' && isdigit((unsigned char)s[j + 1])) {
            size_t d = j + 1;
            while (d < n && isdigit((unsigned char)s[d])) d++;
            if (j - i == kl && !memcmp(s + i, key, kl)) v = safe_int(s + j + 1, d - j - 1);
            i = d;
        } else i = j;
    }
    return v;
}

/* re.findall(r"(\w+)=(\[[^\]]*\](?:\.\.\.\+\d+)?|\S+)", body) into a dict:
 * the value text of key (*vn its length), or NULL when absent. */
static const char *kv_atom(const char *s, size_t n, const char *key, size_t *vn)
{
    const char *v = NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < n;) {
        if (!is_word(s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && is_word(s[j])) j++;
        if (j < n && s[j] == '=' && j + 1 < n && !isspace((unsigned char)s[j + 1])) {
            size_t a = j + 1, e = a;
            const char *close = s[a] == '[' ? memchr(s + a, ']', n - a) : NULL;
            if (close) {
                e = (size_t)(close - s) + 1;
                if (e + 4 < n + 0 && !memcmp(s + e, "...+", 4) && isdigit((unsigned char)s[e + 4])) {
                    e += 4;
                    while (e < n && isdigit((unsigned char)s[e])) e++;
                }
            } else {
                while (e < n && !isspace((unsigned char)s[e])) e++;
            }
            if (j - i == kl && !memcmp(s + i, key, kl)) v = s + a, *vn = e - a;
            i = e;
        } else i = j;
    }
    return v;
}

static int64_t first_int(const char *v, size_t n)
{
    size_t i = 0;
    while (i < n && !isdigit((unsigned char)v[i])) i++;
    int64_t x = 0;
    for (; i < n && isdigit((unsigned char)v[i]); i++) x = x * 10 + (v[i] - '0');
    return x;
}

/* _fill_sglang_native: "step[WORD<ws>bs=N[<ws>toks=N]]" exactly; 0 when
 * the name is not of that shape (the reference tries the next format). */
static int fill_sglang_native(const char *name, tl_sc_detail *d)
{
    const char *p = name + 5, *w = p;
    while (is_word(*p)) p++;
    if (p == w || !isspace((unsigned char)*p)) return 0;
    size_t wl = (size_t)(p - w);
    while (isspace((unsigned char)*p)) p++;
    if (strncmp(p, "bs=", 3) || !isdigit((unsigned char)p[3])) return 0;
    p += 3;
    int64_t bs = 0, toks = 0;
    while (isdigit((unsigned char)*p)) bs = bs * 10 + (*p++ - '0');
    const char *q = p;
    while (isspace((unsigned char)*q)) q++;
    if (q > p && !strncmp(q, "toks=", 5) && isdigit((unsigned char)q[5])) {
        q += 5;
        while (isdigit((unsigned char)*q)) toks = toks * 10 + (*q++ - '0');
        p = q;
    }
    if (*p != ']') return 0;
    if (wl == 6 && !memcmp(w, "DECODE", 6)) d->generation_requests = d->generation_sum = d->g_sq = bs;
    else d->context_requests = bs, d->context_sum = d->c_sq = toks;
    d->batch_size = d->c_sq + d->g_sq ? d->c_sq + d->g_sq : bs;
    return 1;
}

static int64_t nz(int64_t v) { return v < 0 ? 0 : v; }

static void fill_sglang_detailed(const char *name, tl_sc_detail *d)
{
    const char *a = strchr(name, '[') + 1, *z = strrchr(name, ']');
    size_t n = (size_t)(z - a);
    d->c_sq = nz(kv_digits(a, n, "c_sq"));
    d->g_sq = nz(kv_digits(a, n, "g_sq"));
    int64_t bs = nz(kv_digits(a, n, "bs")), toks = nz(kv_digits(a, n, "toks"));
    if (!strncmp(a, "DECODE", 6)) d->generation_requests = bs, d->generation_sum = d->g_sq;
    else if (!strncmp(a, "EXTEND", 6)) d->context_requests = bs, d->context_sum = d->c_sq;
    else {
        d->context_requests = nz(kv_digits(a, n, "c"));
        d->generation_requests = nz(kv_digits(a, n, "g"));
        d->context_sum = d->c_sq, d->generation_sum = d->g_sq;
    }
    d->batch_size = d->c_sq + d->g_sq ? d->c_sq + d->g_sq : toks ? toks : bs;
}

static void fill_atom(const char *name, tl_sc_detail *d)
{
    const char *a = strchr(name, '[') + 1, *z = strrchr(name, ']');
    size_t n = (size_t)(z - a), vn = 0;
    const char *bsv = kv_atom(a, n, "bs", &vn);
    int64_t bs = bsv ? first_int(bsv, vn) : 0;
    const char *tv = kv_atom(a, n, "tok", &vn);
    int64_t tokens = tv ? safe_int(tv, vn) : 0;
    if (name[0] == 'p') d->context_requests = bs, d->context_sum = tokens, d->c_sq = tokens;
    else d->generation_requests = bs, d->generation_sum = tokens, d->g_sq = tokens;
    d->batch_size = tokens;
}

int sc_annotation(const char *name, tl_sc_detail *d)
{
    memset(d, 0, sizeof *d);
    d->batch_size = 1;
    int matched = 1;
    if (matches(P_VLLM_DET, name)) {
        d->context_requests = token_int(name, 3);
        d->c_sq = token_int(name, 5);
        d->generation_requests = token_int(name, 11);
        d->g_sq = token_int(name, 13);
        d->context_sum = d->c_sq, d->generation_sum = d->g_sq;
        d->batch_size = d->c_sq + d->g_sq;
    } else if (matches(P_VLLM_NAT, name)) {
        d->context_requests = token_int(name, 2), d->generation_requests = token_int(name, 6);
        d->context_sum = d->c_sq = token_int(name, 3);
        d->generation_sum = d->g_sq = token_int(name, 7);
        d->batch_size = d->c_sq + d->g_sq;
    } else if (matches(P_SGL_DET, name)) {
        fill_sglang_detailed(name, d);
    } else if (matches(P_SGL_NAT, name) && fill_sglang_native(name, d)) {
        /* filled */
    } else if (matches(P_ATOM_NAT, name)) { /* the detailed kind reads the same fields */
        fill_atom(name, d);
    } else if (matches(P_DIFF, name)) {
        d->batch_size = safe_int(name + 18, strcspn(name + 18, "_"));
    } else {
        matched = 0;
    }
    if (!matched) { /* a generic step: one decode-equivalent request */
        memset(d, 0, sizeof *d);
        d->batch_size = d->num_requests = d->generation_requests = d->generation_sum = 1;
        return 0;
    }
    d->num_requests = d->context_requests + d->generation_requests;
    return 1;
}

int sc_known_annotation(const char *name) { return sc_pattern_tier(name) != 0; }
