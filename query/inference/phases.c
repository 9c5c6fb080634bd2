/* phases.c — prefill/decode labelling of launcher and kernel rows: the
 * branch heuristics of spec/diff-compare-phases.md C3-C5 (ported with their
 * quirks, since users compare against that branch), the step annotations of
 * C8 (exact, preferred where present), and the per-phase sheets of C6. */
#include "query/inference/inference.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "query/inference/inference_internal.h"
#include "query/core/stats.h"

const char *tl_phase_name(int p)
{
    return p == TL_PHASE_PREFILL ? "Prefill" : p == TL_PHASE_DECODE ? "Decode" : "Mixed";
}

static const char *const method_names[] = {"union", "gemm_params", "kernel_names",
                                           "attention_patterns", "framework_apis",
                                           "operation_frequency", "hybrid"};

int tl_phase_method_parse(const char *s, int *known)
{
    for (int i = 0; i < (int)(sizeof method_names / sizeof *method_names); i++)
        if (s && !strcmp(s, method_names[i])) {
            if (known) *known = 1;
            return i;
        }
    if (known) *known = 0;
    return TL_PM_HYBRID;
}

const char *tl_phase_method_name(int m)
{
    return m >= 0 && m <= TL_PM_HYBRID ? method_names[m] : "hybrid";
}

/* ---- text helpers ------------------------------------------------------- */

static char *lower_dup(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    char *o = tl_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) o[i] = (char)tolower((unsigned char)s[i]);
    o[n] = 0;
    return o;
}

static int has(const char *s, const char *w) { return s && strstr(s, w) != NULL; }

static int has_any(const char *s, const char *const *ws)
{
    for (; *ws; ws++)
        if (has(s, *ws)) return 1;
    return 0;
}

/* regex "a.*b" (no newlines in our texts) */
static int has_seq(const char *s, const char *a, const char *b)
{
    const char *p = strstr(s, a);
    return p && strstr(p + strlen(a), b) != NULL;
}

/* Seq-len tokens: findall(r'sl(\d+)|seqlen[_\s]?(\d+)|seq(\d+)'), zeros ignored.
 * Returns the count of non-zero values and their mean in *avg. */
static size_t seq_tokens(const char *s, double *avg)
{
    double sum = 0;
    size_t cnt = 0;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t d = 0; /* start of digits */
        if (s[i] == 's' && s[i + 1] == 'l' && isdigit((unsigned char)s[i + 2])) d = i + 2;
        else if (!strncmp(s + i, "seqlen", 6)) {
            size_t j = i + 6;
            if (isdigit((unsigned char)s[j])) d = j;
            else if ((s[j] == '_' || isspace((unsigned char)s[j])) && isdigit((unsigned char)s[j + 1]))
                d = j + 1;
        }
        if (!d && !strncmp(s + i, "seq", 3) && isdigit((unsigned char)s[i + 3])) d = i + 3;
        if (!d) {
            i++;
            continue;
        }
        double v = 0;
        size_t j = d;
        while (isdigit((unsigned char)s[j])) v = v * 10 + (s[j++] - '0');
        if (v != 0) {
            sum += v;
            cnt++;
        }
        i = j;
    }
    *avg = cnt ? sum / (double)cnt : 0;
    return cnt;
}

/* M candidate from Input Dims (C2): first number of the first entry when the
 * dims are a list of >= 2 entries whose first is a non-empty list. */
static int m_candidate(const char *dims, double *m)
{
    if (!dims) return 0;
    const char *p = dims;
    while (isspace((unsigned char)*p)) p++;
    if (*p != '[' && *p != '(') return 0;
    p++;
    while (isspace((unsigned char)*p)) p++;
    if (*p != '[' && *p != '(') return 0;
    const char *first = p + 1;
    /* count top-level entries */
    int depth = 0, entries = 1;
    for (const char *q = p; *q; q++) {
        if (*q == '[' || *q == '(') depth++;
        else if (*q == ']' || *q == ')') {
            if (depth == 0) break;
            depth--;
        } else if (*q == ',' && depth == 0) entries++;
    }
    if (entries < 2) return 0;
    while (isspace((unsigned char)*first)) first++;
    if (*first == ']' || *first == ')') return 0;
    char *end;
    double v = strtod(first, &end);
    if (end == first || !(v > 0)) return 0;
    *m = v;
    return 1;
}

/* linear-interpolated percentile over the per-name counts (C3) */
static double pctile(const double *sorted, size_t k, double p)
{
    if (!k) return NAN;
    double h = (double)(k - 1) * p;
    size_t lo = (size_t)floor(h), hi = (size_t)ceil(h);
    return sorted[lo] + (h - floor(h)) * (sorted[hi] - sorted[lo]);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* per-row name counts and the percentile list of distinct-name counts */
typedef struct freq {
    double *cnt;    /* per row */
    double *sorted; /* per distinct name */
    size_t k;
} freq;

static void freq_init(freq *f, const tl_phase_row *rows, size_t n)
{
    tl_smap m;
    tl_smap_init(&m, n);
    size_t *gid = tl_xmalloc((n ? n : 1) * sizeof *gid);
    double *gc = tl_xmalloc((n ? n : 1) * sizeof *gc);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm = rows[i].name ? rows[i].name : "";
        int isnew;
        size_t *v = tl_smap_put(&m, nm, strlen(nm), &isnew);
        if (isnew) {
            *v = k;
            gc[k++] = 0;
        }
        gid[i] = *v;
        gc[*v] += 1;
    }
    f->cnt = tl_xmalloc((n ? n : 1) * sizeof *f->cnt);
    for (size_t i = 0; i < n; i++) f->cnt[i] = gc[gid[i]];
    qsort(gc, k, sizeof *gc, cmp_dbl);
    f->sorted = gc;
    f->k = k;
    free(gid);
    tl_smap_free(&m);
}

static void freq_free(freq *f)
{
    free(f->cnt);
    free(f->sorted);
}

typedef struct rowtext {
    char *op;  /* lowercased name */
    char *all; /* op + lowercased kernel names, space-joined */
} rowtext;

static void rowtext_init(rowtext *r, const tl_phase_row *row)
{
    r->op = lower_dup(row->name);
    tl_buf b = {0};
    tl_buf_puts(&b, r->op);
    for (size_t k = 0; k < row->nk; k++) {
        tl_buf_putc(&b, ' ');
        tl_buf_puts(&b, row->knames[k] ? row->knames[k] : "");
    }
    tl_buf_putc(&b, 0);
    r->all = lower_dup(b.p);
    tl_buf_free(&b);
}

static void rowtext_free(rowtext *r)
{
    free(r->op);
    free(r->all);
}

/* ---- single methods (C3) ------------------------------------------------- */

static int m_kernel_names(const rowtext *r)
{
    static const char *const pw[] = {"prefill", "context", "prompt", "chunked_prefill",
                                     "batch_prefill", "context_attention", "prompt_attention",
                                     "context_phase", "initialization", "first_token", NULL};
    static const char *const dw[] = {"decode", "generation", "autoregressive", "batch_decode",
                                     "continuous_batch", "paged_attention", "kv_cache",
                                     "reshape_and_cache", "generation_phase", "incremental",
                                     "single_token", "_decode_", "decode_kernel", NULL};
    double avg;
    if (seq_tokens(r->all, &avg)) {
        if (avg == 1) return TL_PHASE_DECODE;
        if (avg > 10) return TL_PHASE_PREFILL;
    }
    if (has_any(r->all, pw)) return TL_PHASE_PREFILL;
    if (has_any(r->all, dw)) return TL_PHASE_DECODE;
    return TL_PHASE_MIXED;
}

static int m_framework_apis(const char *name, const rowtext *r)
{
    const char *o = r->op;
    if (has(name, "vllm::") || has(o, "paged_attention") || has(o, "reshape_and_cache") ||
        has(o, "batch_decode")) {
        if (has(o, "decode") || has(o, "cache")) return TL_PHASE_DECODE;
        if (has(o, "prefill")) return TL_PHASE_PREFILL;
        return TL_PHASE_MIXED;
    }
    if (has(name, "sglang::") || has(o, "radix_attention") || has(o, "prefix_cache") ||
        has(o, "tree_attention")) {
        if (has(o, "decode") || has(o, "cache")) return TL_PHASE_DECODE;
        if (has(o, "prefill")) return TL_PHASE_PREFILL;
        return TL_PHASE_MIXED;
    }
    if (has(name, "tgi::") || has(o, "continuous_batch") || has(o, "decode_kernel") ||
        has(o, "token_generation")) {
        if (has(o, "decode") || has(o, "generation")) return TL_PHASE_DECODE;
        if (has(o, "prefill") || has(o, "encode")) return TL_PHASE_PREFILL;
        return TL_PHASE_MIXED;
    }
    if (has(o, "context_phase") || has(o, "generation_phase") || has(o, "mha_") || has(o, "mlp_")) {
        if (has(o, "generation") || has(o, "decode")) return TL_PHASE_DECODE;
        if (has(o, "context") || has(o, "prefill")) return TL_PHASE_PREFILL;
    }
    return TL_PHASE_MIXED;
}

static int m_attention_patterns(const rowtext *r)
{
    const char *o = r->op;
    if (!(has(o, "attention") || has(o, "attn") || has(o, "sdpa"))) return TL_PHASE_MIXED;
    if (has(o, "paged_attention") || has(o, "kv_cache") || has(o, "reshape_and_cache") ||
        has(o, "batch_decode") || has(o, "decode_attention"))
        return TL_PHASE_DECODE;
    if (has(o, "prefill_attention") || has(o, "chunked_prefill") || has(o, "batch_prefill"))
        return TL_PHASE_PREFILL;
    /* QUIRK (C3): the shape rule compares per-input tuples with a number and
     * never fires on real rows */
    return TL_PHASE_MIXED;
}

static int m_operation_frequency(const freq *f, size_t i)
{
    double hi = pctile(f->sorted, f->k, 0.5), lo = pctile(f->sorted, f->k, 0.15);
    if (f->cnt[i] > hi) return TL_PHASE_DECODE;
    if (f->cnt[i] < lo) return TL_PHASE_PREFILL;
    return TL_PHASE_DECODE;
}

static int m_gemm_params(const tl_phase_row *row, const rowtext *r, double thr)
{
    static const char *const pw[] = {"prefill", "chunked_prefill", "batch_prefill",
                                     "prefill_attention", NULL};
    /* QUIRK (C3): "paged_attention.*decode" is tested as a literal substring */
    static const char *const dw[] = {"decode", "batch_decode", "continuous_batch",
                                     "decode_attention", "paged_attention.*decode",
                                     "decode_kernel", NULL};
    int p = has_any(r->all, pw), d = has_any(r->all, dw);
    if (p && d) return TL_PHASE_MIXED;
    if (p) return TL_PHASE_PREFILL;
    if (d) return TL_PHASE_DECODE;
    double m;
    if (m_candidate(row->in_dims, &m)) return m > thr ? TL_PHASE_PREFILL : TL_PHASE_DECODE;
    return TL_PHASE_MIXED;
}

/* ---- union (C4) ---------------------------------------------------------- */

static int m_union(const tl_phase_row *row, const rowtext *r, double thr)
{
    int vp = 0, vd = 0;
    double m;
    if (m_candidate(row->in_dims, &m)) {
        if (m > thr) vp += 3;
        else vd += 3;
    }
    double avg;
    int decided = 0;
    if (seq_tokens(r->all, &avg)) {
        if (avg == 1) vd += 4, decided = 1;
        else if (avg > 10) vp += 4, decided = 1;
    }
    if (!decided) {
        static const char *const pw[] = {"prefill", "chunked_prefill", "batch_prefill",
                                         "prefill_attention", "context_attention",
                                         "prompt_attention", "context_phase", "first_token",
                                         "initialization", "prompt_processing", NULL};
        static const char *const dw[] = {"decode", "generation", "batch_decode",
                                         "continuous_batch", "paged_attention",
                                         "decode_attention", "generation_phase",
                                         "autoregressive", "incremental", "single_token",
                                         "next_token", NULL};
        int p = has_any(r->all, pw), d = has_any(r->all, dw);
        if (p && !d) vp += 4;
        else if (d && !p) vd += 4;
    }
    const char *a = r->all;
    if (has_seq(a, "paged_attention", "decode") || has(a, "paged_attn_v2") || has(a, "kv_cache") ||
        has(a, "reshape_and_cache") || has(a, "block_sparse_attention") ||
        has(a, "page_attention") || has_seq(a, "flash_attn", "decode") || has(a, "flash_decode") ||
        has_seq(a, "varlen", "decode"))
        vd += 2;
    else if (has_seq(a, "paged_attention", "prefill") || has(a, "chunked_prefill") ||
             has(a, "block_prefill") || has_seq(a, "flash_attn", "prefill") ||
             has(a, "flash_prefill") || has_seq(a, "varlen", "prefill"))
        vp += 2;
    const char *o = r->op;
    if (has(o, "vllm::")) {
        if (has(o, "decode") || has(o, "cache") || has(o, "paged")) vd += 2;
        else if (has(o, "prefill")) vp += 2;
    } else if (has(o, "sglang::")) {
        if (has(o, "decode") || has(o, "cache") || has(o, "radix")) vd += 2;
        else if (has(o, "prefill")) vp += 2;
    } else if (has(o, "tgi::")) {
        if (has(o, "decode") || has(o, "generation") || has(o, "continuous")) vd += 2;
        else if (has(o, "prefill") || has(o, "encode")) vp += 2;
    }
    if (has(o, "continuous_batch") || has(o, "dynamic_batch") || has(o, "batch_decode") ||
        has(o, "multi_request") || has(o, "request_batch"))
        vd += 1;
    else if (has(o, "single_request") || has(o, "request_init") || has(o, "batch_prefill"))
        vp += 1;
    if (vp + vd >= 2 && vp != vd) return vp > vd ? TL_PHASE_PREFILL : TL_PHASE_DECODE;
    return TL_PHASE_MIXED;
}

void tl_phase_classify(const tl_phase_row *rows, size_t n, int method, double thr, uint8_t *out)
{
    freq f;
    freq_init(&f, rows, n);
    for (size_t i = 0; i < n; i++) {
        rowtext r;
        rowtext_init(&r, &rows[i]);
        int p = TL_PHASE_MIXED;
        switch (method) {
        case TL_PM_UNION: p = m_union(&rows[i], &r, thr); break;
        case TL_PM_GEMM_PARAMS: p = m_gemm_params(&rows[i], &r, thr); break;
        case TL_PM_KERNEL_NAMES: p = m_kernel_names(&r); break;
        case TL_PM_ATTENTION_PATTERNS: p = m_attention_patterns(&r); break;
        case TL_PM_FRAMEWORK_APIS: p = m_framework_apis(rows[i].name, &r); break;
        case TL_PM_OPERATION_FREQUENCY: p = m_operation_frequency(&f, i); break;
        default:
            p = m_kernel_names(&r);
            if (!p) p = m_framework_apis(rows[i].name, &r);
            if (!p) p = m_attention_patterns(&r);
            if (!p) p = m_operation_frequency(&f, i);
        }
        out[i] = (uint8_t)p;
        rowtext_free(&r);
    }
    if (method == TL_PM_UNION) {
        /* frequency refinement of the remaining Mixed rows (no temporal step:
         * launcher rows have no timestamp column, C4) */
        double hi = pctile(f.sorted, f.k, 0.7), lo = pctile(f.sorted, f.k, 0.3);
        for (size_t i = 0; i < n; i++)
            if (out[i] == TL_PHASE_MIXED) {
                if (f.cnt[i] > hi) out[i] = TL_PHASE_DECODE;
                else if (f.cnt[i] < lo) out[i] = TL_PHASE_PREFILL;
            }
    }
    freq_free(&f);
}

/* ---- step annotations (C8) ----------------------------------------------- */

const char *tl_step_kind_name(int k)
{
    return k == TL_STEP_PREFILL_ONLY  ? "prefill_only"
           : k == TL_STEP_DECODE_ONLY ? "decode_only"
           : k == TL_STEP_DIFFUSION   ? "diffusion"
           : k == TL_STEP_PROFILER    ? "profiler_step"
                                      : "prefilldecode";
}

static int64_t num_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p) return -1;
    p += strlen(key);
    if (!isdigit((unsigned char)*p)) return -1;
    return strtoll(p, NULL, 10);
}

int tl_step_parse(const char *name, tl_step *st)
{
    memset(st, 0, sizeof *st);
    st->bs = st->tokens = st->ctx = st->gen = -1;
    st->row = -1;
    if (!name) return 0;
    if (!strncmp(name, "execute_diffusion_", 18) && isdigit((unsigned char)name[18])) {
        /* xDiT: execute_diffusion_<bs>_<H>x<W>, no prefill or decode requests */
        char *e;
        st->bs = strtoll(name + 18, &e, 10);
        if (*e != '_' || !isdigit((unsigned char)e[1]) || !strchr(e, 'x')) return 0;
        st->kind = TL_STEP_DIFFUSION;
        st->ctx = st->gen = 0;
        return 1;
    }
    if (!strncmp(name, "execute_", 8) && strstr(name, "context_") && strstr(name, "generation_")) {
        /* vLLM/SGLang/ATOM patch: execute[_<tokens>]_context_<n>(..)_generation_<n>(..) */
        st->ctx = num_after(name, "context_");
        st->gen = num_after(name, "generation_");
        st->tokens = num_after(name, "execute_");
        if (st->ctx < 0 || st->gen < 0) return 0;
        st->bs = st->ctx + st->gen;
        st->kind = st->ctx > 0 && st->gen > 0 ? TL_STEP_MIXED
                   : st->ctx > 0            ? TL_STEP_PREFILL_ONLY
                                            : TL_STEP_DECODE_ONLY;
        return 1;
    }
    if (!strncmp(name, "step[", 5)) {
        const char *k = name + 5;
        if (!strncmp(k, "DECODE", 6)) st->kind = TL_STEP_DECODE_ONLY;
        else if (!strncmp(k, "EXTEND", 6) || !strncmp(k, "PREFILL", 7)) st->kind = TL_STEP_PREFILL_ONLY;
        else if (!strncmp(k, "MIXED", 5)) st->kind = TL_STEP_MIXED;
        else return 0;
        st->bs = num_after(name, "bs=");
        st->tokens = num_after(name, "toks=");
        if (st->tokens < 0) st->tokens = num_after(name, "tok=");
        if (st->kind == TL_STEP_DECODE_ONLY) st->gen = st->bs, st->ctx = 0;
        else if (st->kind == TL_STEP_PREFILL_ONLY) st->ctx = st->bs, st->gen = 0;
        return 1;
    }
    int pf = !strncmp(name, "prefill[", 8), dc = !strncmp(name, "decode[", 7);
    if (pf || dc) {
        st->kind = pf ? TL_STEP_PREFILL_ONLY : TL_STEP_DECODE_ONLY;
        st->bs = num_after(name, "bs=");
        st->tokens = num_after(name, "tok=");
        if (st->tokens < 0) st->tokens = num_after(name, "toks=");
        if (pf) st->ctx = st->bs, st->gen = 0;
        else st->gen = st->bs, st->ctx = 0;
        return 1;
    }
    return 0;
}

static int cmp_step(const void *a, const void *b)
{
    const tl_step *x = a, *y = b;
    if (x->cpu_ts != y->cpu_ts) return x->cpu_ts < y->cpu_ts ? -1 : 1;
    /* the longer (enclosing) annotation first, so nested ones fold into it */
    if (x->cpu_end != y->cpu_end) return x->cpu_end > y->cpu_end ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int steps_from_extra(const tl_trace *t, tl_steps *out)
{
    size_t len;
    const char *x = tl_trace_extra(t, "inference_steps", &len);
    if (!x) return 0;
    char *txt = tl_arena_strndup(&out->arena, x, len);
    size_t cap = 8;
    out->v = tl_arena_alloc(&out->arena, cap * sizeof *out->v);
    char *save = NULL;
    for (char *line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[11];
        int nf = 0;
        char *s2 = NULL;
        for (char *c = strtok_r(line, "\t", &s2); c && nf < 11; c = strtok_r(NULL, "\t", &s2))
            f[nf++] = c;
        if (nf < 10) continue;
        if (out->n == cap) {
            tl_step *nv = tl_arena_alloc(&out->arena, cap * 2 * sizeof *nv);
            memcpy(nv, out->v, cap * sizeof *nv);
            out->v = nv;
            cap *= 2;
        }
        tl_step *st = &out->v[out->n++];
        memset(st, 0, sizeof *st);
        st->row = -1;
        st->kind = atoi(f[0]);
        st->bs = strtoll(f[1], NULL, 10);
        st->tokens = strtoll(f[2], NULL, 10);
        st->ctx = strtoll(f[3], NULL, 10);
        st->gen = strtoll(f[4], NULL, 10);
        st->cpu_ts = strtoll(f[5], NULL, 10);
        st->cpu_end = strtoll(f[6], NULL, 10);
        st->gpu_lo = strtoll(f[7], NULL, 10);
        st->gpu_hi = strtoll(f[8], NULL, 10);
        st->name = f[9];
    }
    return 1;
}

void tl_steps_serialise(const tl_steps *s, tl_buf *out)
{
    for (size_t i = 0; i < s->n; i++) {
        const tl_step *st = &s->v[i];
        tl_buf_printf(out, "%d\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t", st->kind,
                      (long long)st->bs, (long long)st->tokens, (long long)st->ctx,
                      (long long)st->gen, (long long)st->cpu_ts, (long long)st->cpu_end,
                      (long long)st->gpu_lo, (long long)st->gpu_hi);
        for (const char *c = st->name ? st->name : ""; *c; c++)
            tl_buf_putc(out, *c == '\t' || *c == '\n' ? ' ' : *c);
        tl_buf_putc(out, '\n');
    }
}

/* nearest runtime ancestor of a GPU event (its launch call) */
static int32_t launch_of(const tl_trace *t, int32_t g)
{
    int32_t p = t->parent ? t->parent[g] : -1;
    while (p >= 0 && !tl_kind_is_runtime(t->kind[p])) p = t->parent[p];
    return p;
}

/* ProfilerStep#<n>: a step of the fallback, kind TL_STEP_PROFILER. */
static int profiler_step_parse(const char *name, tl_step *st)
{
    memset(st, 0, sizeof *st);
    st->bs = st->tokens = st->ctx = st->gen = -1;
    st->row = -1;
    st->kind = TL_STEP_PROFILER;
    return name && !strncmp(name, "ProfilerStep#", 13) && isdigit((unsigned char)name[13]);
}

/* Steps from annotations (profiler: ProfilerStep#<n> instead of the
 * engines' step annotations). */
static int steps_collect(const tl_trace *t, int profiler, tl_steps *out)
{
    memset(out, 0, sizeof *out);
    tl_arena_init(&out->arena, 1 << 14);
    if (!profiler && steps_from_extra(t, out)) return 0;
    size_t cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] != TL_K_USER_ANNOTATION) continue;
        tl_step st;
        const char *nm = tl_trace_str(t, t->name[i]);
        if (!(profiler ? profiler_step_parse(nm, &st) : tl_step_parse(nm, &st))) continue;
        if (out->n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            tl_step *nv = tl_arena_alloc(&out->arena, nc * sizeof *nv);
            if (cap) memcpy(nv, out->v, cap * sizeof *nv);
            out->v = nv;
            cap = nc;
        }
        st.name = tl_trace_str(t, t->name[i]);
        st.row = (int32_t)i;
        st.cpu_ts = t->ts[i];
        st.cpu_end = t->ts[i] + tl_trace_dur(t, i);
        st.gpu_lo = INT64_MAX;
        st.gpu_hi = INT64_MIN;
        out->v[out->n++] = st;
    }
    if (!out->n) return 0;
    qsort(out->v, out->n, sizeof *out->v, cmp_step);
    /* fold annotations nested in an accepted step (same step written twice);
     * the outer one keeps its counts, missing ones are filled from the inner */
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (k && out->v[i].cpu_ts >= out->v[k - 1].cpu_ts && out->v[i].cpu_end <= out->v[k - 1].cpu_end) {
            tl_step *o = &out->v[k - 1];
            if (o->bs < 0) o->bs = out->v[i].bs;
            if (o->tokens < 0) o->tokens = out->v[i].tokens;
            continue;
        }
        out->v[k++] = out->v[i];
    }
    out->n = k;
    /* GPU span of each step: GPU events whose launch call lies inside it */
    for (size_t g = 0; g < t->n; g++) {
        if (!tl_kind_is_gpu(t->kind[g])) continue;
        int32_t r = launch_of(t, (int32_t)g);
        if (r < 0) continue;
        int64_t ts = t->ts[r];
        size_t lo = 0, hi = out->n;
        while (lo < hi) { /* last step with cpu_ts <= ts */
            size_t mid = (lo + hi) / 2;
            if (out->v[mid].cpu_ts <= ts) lo = mid + 1;
            else hi = mid;
        }
        if (!lo) continue;
        tl_step *st = &out->v[lo - 1];
        if (ts > st->cpu_end) continue;
        if (t->ts[g] < st->gpu_lo) st->gpu_lo = t->ts[g];
        if (t->ts[g] + tl_trace_dur(t, g) > st->gpu_hi) st->gpu_hi = t->ts[g] + tl_trace_dur(t, g);
    }
    return 0;
}

int tl_steps_find(const tl_trace *t, tl_steps *out) { return steps_collect(t, 0, out); }

int tl_steps_find_profiler(const tl_trace *t, tl_steps *out) { return steps_collect(t, 1, out); }

void tl_steps_free(tl_steps *s)
{
    tl_arena_free(&s->arena);
    memset(s, 0, sizeof *s);
}

long tl_steps_at_gpu(const tl_steps *s, int64_t ts)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].gpu_lo <= s->v[i].gpu_hi && ts >= s->v[i].gpu_lo && ts <= s->v[i].gpu_hi)
            return (long)i;
    return -1;
}

tl_table *tl_steps_table(const tl_steps *s)
{
    tl_table *t = tl_table_new("inference_steps");
    size_t c[11];
    c[0] = tl_table_add_col(t, "step", TL_I64);
    c[1] = tl_table_add_col(t, "annotation", TL_STR);
    c[2] = tl_table_add_col(t, "kind", TL_STR);
    c[3] = tl_table_add_col(t, "batch_size", TL_I64);
    c[4] = tl_table_add_col(t, "tokens", TL_I64);
    c[5] = tl_table_add_col(t, "context_requests", TL_I64);
    c[6] = tl_table_add_col(t, "generation_requests", TL_I64);
    c[7] = tl_table_add_col(t, "cpu_start_us", TL_F64);
    c[8] = tl_table_add_col(t, "cpu_dur_us", TL_F64);
    c[9] = tl_table_add_col(t, "gpu_start_us", TL_F64);
    c[10] = tl_table_add_col(t, "gpu_span_us", TL_F64);
    for (size_t i = 0; i < s->n; i++) {
        const tl_step *st = &s->v[i];
        size_t r = tl_table_add_row(t);
        tl_table_set_i64(t, c[0], r, (int64_t)i);
        tl_table_set_str(t, c[1], r, st->name);
        tl_table_set_str(t, c[2], r, tl_step_kind_name(st->kind));
        int64_t iv[4] = {st->bs, st->tokens, st->ctx, st->gen};
        for (int k = 0; k < 4; k++)
            if (iv[k] >= 0) tl_table_set_i64(t, c[3 + k], r, iv[k]);
        tl_table_set_f64(t, c[7], r, (double)st->cpu_ts / 1000.0);
        tl_table_set_f64(t, c[8], r, (double)(st->cpu_end - st->cpu_ts) / 1000.0);
        if (st->gpu_lo <= st->gpu_hi) {
            tl_table_set_f64(t, c[9], r, (double)st->gpu_lo / 1000.0);
            tl_table_set_f64(t, c[10], r, (double)(st->gpu_hi - st->gpu_lo) / 1000.0);
        }
    }
    return t;
}

/* ---- sheets (C6) --------------------------------------------------------- */

void tl_phase_opts_default(tl_phase_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = TL_PM_UNION;
    o->decode_threshold = 10;
}

static int step_phase(const tl_steps *s, int64_t gpu_ts)
{
    long k = tl_steps_at_gpu(s, gpu_ts);
    if (k < 0) return -1;
    int kind = s->v[k].kind;
    return kind == TL_STEP_PREFILL_ONLY ? TL_PHASE_PREFILL
           : kind == TL_STEP_DECODE_ONLY ? TL_PHASE_DECODE
                                         : -1;
}

static const char *sid_text(const tl_trace *t, const uint32_t *col, int32_t row)
{
    if (!col || row < 0 || !col[row]) return NULL;
    return tl_trace_str(t, col[row]);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Kernel categories cell of one launcher (C6): sorted set, ", "-joined. */
static char *kcats_text(const char **cats, size_t n)
{
    if (!n) return NULL;
    const char **v = tl_xmalloc(n * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cats[i] && *cats[i] && strcmp(cats[i], "Unknown")) v[m++] = cats[i];
    qsort(v, m, sizeof *v, cmp_str);
    tl_buf b = {0};
    for (size_t i = 0; i < m; i++) {
        if (i && !strcmp(v[i], v[i - 1])) continue;
        if (b.n) tl_buf_puts(&b, ", ");
        tl_buf_puts(&b, v[i]);
    }
    free(v);
    if (!b.n) {
        tl_buf_free(&b);
        return NULL;
    }
    tl_buf_putc(&b, 0);
    return b.p;
}

static void add_pct(tl_table *t, size_t vcol)
{
    size_t pc = tl_table_add_col(t, "Percentage (%)", TL_F64);
    size_t cc = tl_table_add_col(t, "Cumulative Percentage (%)", TL_F64);
    double tot = 0, cum = 0;
    for (size_t r = 0; r < t->nrows; r++) tot += tl_table_num(t, vcol, r);
    for (size_t r = 0; r < t->nrows; r++) {
        double p = tot != 0 ? tl_table_num(t, vcol, r) / tot * 100.0 : 0.0;
        cum += p;
        tl_table_set_f64(t, pc, r, p);
        tl_table_set_f64(t, cc, r, cum);
    }
}

typedef struct grp {
    const char *key;
    tl_kahan sum; /* pandas' groupby sum */
    size_t cnt;
    const char *kcat;
} grp;

static int cmp_grp_name(const void *a, const void *b)
{
    return strcmp(((const grp *)a)->key, ((const grp *)b)->key);
}

/* The order of groups (given in groupby's key order) after the branch's
 * sort_values(ascending=False): pandas' unstable descending sort, so ties
 * come out as there (pyt_sort_desc; stable with --fix_quirks). */
static size_t *sum_order(pyt_ctx *c, const double *sums, size_t n)
{
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    pyt_sort_desc(c, idx, n, sums);
    return idx;
}

static tl_table *ops_phase_sheet(pyt_ctx *c, const uint8_t *lab, int phase, char **kcats)
{
    size_t n = 0;
    grp *g = tl_xmalloc((c->nl ? c->nl : 1) * sizeof *g);
    tl_smap m;
    tl_smap_init(&m, c->nl);
    for (size_t i = 0; i < c->nl; i++) {
        if (lab[i] != phase) continue;
        const char *nm = pyt_name(c, c->l_row[i]);
        int isnew;
        size_t *v = tl_smap_put(&m, nm, strlen(nm), &isnew);
        if (isnew) {
            *v = n;
            g[n] = (grp){nm, {0, 0}, 0, NULL};
            n++;
        }
        grp *e = &g[*v];
        tl_kahan_add(&e->sum, c->l_direct[i]);
        e->cnt++;
        if (!e->kcat && kcats[i]) e->kcat = kcats[i];
    }
    tl_smap_free(&m);
    if (!n) {
        free(g);
        return NULL;
    }
    qsort(g, n, sizeof *g, cmp_grp_name);
    double *sums = tl_xmalloc(n * sizeof *sums);
    for (size_t i = 0; i < n; i++) sums[i] = g[i].sum.sum;
    size_t *ord = sum_order(c, sums, n);
    free(sums);
    tl_table *t = tl_table_new(phase == TL_PHASE_PREFILL ? "ops_summary_prefill" : "ops_summary_decode");
    size_t ck = tl_table_add_col(t, "Kernel categories", TL_STR);
    size_t cn = tl_table_add_col(t, "name", TL_STR);
    size_t cs = tl_table_add_col(t, "total_direct_kernel_time_sum", TL_F64);
    size_t cc = tl_table_add_col(t, "Count", TL_I64);
    size_t cm = tl_table_add_col(t, "total_direct_kernel_time_ms", TL_F64);
    for (size_t i = 0; i < n; i++) {
        const grp *G = &g[ord[i]];
        size_t r = tl_table_add_row(t);
        if (G->kcat) tl_table_set_str(t, ck, r, G->kcat);
        tl_table_set_str(t, cn, r, G->key);
        tl_table_set_f64(t, cs, r, G->sum.sum);
        tl_table_set_i64(t, cc, r, (int64_t)G->cnt);
        tl_table_set_f64(t, cm, r, G->sum.sum / 1000.0);
    }
    add_pct(t, cm);
    free(ord);
    free(g);
    return t;
}

/* kernel view row (§4.5) with the §9.7 fill-ins */
typedef struct kv {
    int32_t row;
    const char *cat, *op, *kname;
    int64_t stream;
    int has_stream;
    double dur;
} kv;

static int cmp_opt_str(const char *a, const char *b)
{
    if (!a || !b) return a ? -1 : b ? 1 : 0; /* missing last */
    return strcmp(a, b);
}

static int cmp_kv_key(const void *pa, const void *pb)
{
    const kv *a = pa, *b = pb;
    int r = cmp_opt_str(a->cat, b->cat);
    if (!r) r = cmp_opt_str(a->op, b->op);
    if (!r) r = cmp_opt_str(a->kname, b->kname);
    if (!r && a->has_stream != b->has_stream) r = a->has_stream ? -1 : 1;
    if (!r && a->stream != b->stream) r = a->stream < b->stream ? -1 : 1;
    if (!r) r = a->row < b->row ? -1 : a->row > b->row;
    return r;
}

typedef struct kgrp {
    size_t lo, hi; /* range in the sorted kv array */
    tl_kahan sum;
    double mn, mx;
} kgrp;

static int same_key(const kv *a, const kv *b)
{
    return !cmp_opt_str(a->cat, b->cat) && !cmp_opt_str(a->op, b->op) &&
           !cmp_opt_str(a->kname, b->kname) && a->has_stream == b->has_stream &&
           a->stream == b->stream;
}

static tl_table *kernel_phase_sheet(pyt_ctx *c, kv *k, size_t n, int phase)
{
    if (!n) return NULL;
    qsort(k, n, sizeof *k, cmp_kv_key);
    kgrp *g = tl_xmalloc(n * sizeof *g);
    size_t ng = 0;
    double tot = 0;
    for (size_t i = 0; i < n; i++) {
        tot += k[i].dur;
        if (!ng || !same_key(&k[g[ng - 1].lo], &k[i])) {
            g[ng] = (kgrp){i, i, {0, 0}, INFINITY, -INFINITY};
            ng++;
        }
        kgrp *e = &g[ng - 1];
        e->hi = i + 1;
        tl_kahan_add(&e->sum, k[i].dur);
        if (k[i].dur < e->mn) e->mn = k[i].dur;
        if (k[i].dur > e->mx) e->mx = k[i].dur;
    }
    double *sums = tl_xmalloc(ng * sizeof *sums);
    for (size_t i = 0; i < ng; i++) sums[i] = g[i].sum.sum;
    size_t *ord = sum_order(c, sums, ng);
    free(sums);
    tl_table *t = tl_table_new(phase == TL_PHASE_PREFILL ? "kernel_summary_prefill" : "kernel_summary_decode");
    size_t c0 = tl_table_add_col(t, "Parent op category", TL_STR);
    size_t c1 = tl_table_add_col(t, "Parent cpu_op", TL_STR);
    size_t c2 = tl_table_add_col(t, "Kernel name", TL_STR);
    size_t c3 = tl_table_add_col(t, "Kernel stream", TL_I64);
    size_t c4 = tl_table_add_col(t, "Kernel duration (µs)_sum", TL_F64);
    size_t c5 = tl_table_add_col(t, "Kernel duration (µs)_count", TL_I64);
    size_t c6 = tl_table_add_col(t, "Kernel duration (µs)_mean", TL_F64);
    size_t c7 = tl_table_add_col(t, "Kernel duration (µs)_min", TL_F64);
    size_t c8 = tl_table_add_col(t, "Kernel duration (µs)_max", TL_F64);
    size_t c9 = tl_table_add_col(t, "Percent of kernels time (%)", TL_F64);
    for (size_t i = 0; i < ng; i++) {
        const kgrp *G = &g[ord[i]];
        const kv *f = &k[G->lo];
        size_t r = tl_table_add_row(t), cnt = G->hi - G->lo;
        if (f->cat) tl_table_set_str(t, c0, r, f->cat);
        if (f->op) tl_table_set_str(t, c1, r, f->op);
        tl_table_set_str(t, c2, r, f->kname);
        if (f->has_stream) tl_table_set_i64(t, c3, r, f->stream);
        tl_table_set_f64(t, c4, r, G->sum.sum);
        tl_table_set_i64(t, c5, r, (int64_t)cnt);
        tl_table_set_f64(t, c6, r, G->sum.sum / (double)cnt);
        tl_table_set_f64(t, c7, r, G->mn);
        tl_table_set_f64(t, c8, r, G->mx);
        tl_table_set_f64(t, c9, r, tot != 0 ? G->sum.sum / tot * 100.0 : NAN);
    }
    free(ord);
    free(g);
    return t;
}

static void info_row(tl_table *t, const char *k, const char *v)
{
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, 0, r, k);
    tl_table_set_str(t, 1, r, v);
}

/* Launcher label counts by source and phase, for phase_analysis. */
typedef struct phase_counts {
    size_t by_annotation, by_heuristic;
    size_t per_phase[3]; /* indexed by tl_phase */
} phase_counts;

/* The phase_analysis sheet: where the labels came from, the method and
 * threshold, and the launcher counts. */
static tl_table *phase_info_table(const tl_phase_opts *o, size_t nsteps, int use_ann, const phase_counts *pc)
{
    tl_table *info = tl_table_new("phase_analysis");
    tl_table_add_col(info, "key", TL_STR);
    tl_table_add_col(info, "value", TL_STR);
    char buf[256];
    const char *src = !use_ann              ? "heuristics"
                      : !pc->by_annotation ? "heuristics (no annotated step is prefill-only or decode-only)"
                      : pc->by_heuristic   ? "annotations+heuristics"
                                           : "annotations";
    info_row(info, "phase source", src);
    info_row(info, "heuristic method", tl_phase_method_name(o->method));
    snprintf(buf, sizeof buf, "%g", o->decode_threshold);
    info_row(info, "decode_threshold", buf);
    snprintf(buf, sizeof buf, "%zu", nsteps);
    info_row(info, "step annotations", buf);
    snprintf(buf, sizeof buf, "%zu", pc->by_annotation);
    info_row(info, "launchers labelled by annotations", buf);
    snprintf(buf, sizeof buf, "%zu", pc->by_heuristic);
    info_row(info, "launchers labelled by heuristics", buf);
    snprintf(buf, sizeof buf, "%zu", pc->per_phase[TL_PHASE_PREFILL]);
    info_row(info, "Prefill launchers", buf);
    snprintf(buf, sizeof buf, "%zu", pc->per_phase[TL_PHASE_DECODE]);
    info_row(info, "Decode launchers", buf);
    snprintf(buf, sizeof buf, "%zu", pc->per_phase[TL_PHASE_MIXED]);
    info_row(info, "Mixed launchers", buf);
    if (!use_ann)
        info_row(info, "note",
                 nsteps ? "annotations ignored (--no-annotations)"
                        : "no step annotations (execute_.._context_.._generation_.., step[..], "
                          "prefill[..]/decode[..]) in the trace; labels are heuristic guesses");
    return info;
}

/* kernel_summary_prefill / _decode: one labelling with the op-level
 * sheets. A kernel of a launcher (graph-replayed kernels of a merged trace
 * included: their launcher is the capturing op) takes the launcher's label
 * (lab: per launcher, from the step annotations or the chosen method and
 * threshold); a kernel without one takes its step's phase, else the chosen
 * method on the kernel alone. */
static void kernel_phase_sheets(pyt_ctx *c, const tl_steps *steps, int use_ann, const tl_phase_opts *o,
                                const uint8_t *lab, tl_pyt_sheets *out)
{
    const tl_trace *t = c->t;
    int32_t *lof = tl_xmalloc((t->n ? t->n : 1) * sizeof *lof);
    for (size_t g = 0; g < t->n; g++) lof[g] = -1;
    for (size_t j = 0; j < c->nl; j++)
        for (size_t k = c->l_koff[j]; k < c->l_koff[j + 1]; k++) lof[c->l_k[k]] = (int32_t)j;
    kv *pk = tl_xmalloc((t->n ? t->n : 1) * sizeof *pk), *dk = tl_xmalloc((t->n ? t->n : 1) * sizeof *dk);
    size_t np = 0, nd = 0;
    for (size_t g = 0; g < t->n; g++) {
        if (t->kind[g] != TL_K_KERNEL) continue;
        int32_t launcher = t->parent ? t->parent[g] : -1;
        int32_t op = launcher >= 0 ? t->parent[launcher] : -1;
        while (op >= 0 && t->kind[op] != TL_K_CPU_OP) op = t->parent[op];
        kv e = {(int32_t)g, NULL, NULL, pyt_name(c, (int32_t)g), 0, 0, pyt_dur(c, (int32_t)g)};
        e.has_stream = pyt_stream(c, (int32_t)g, &e.stream);
        if (!e.has_stream) e.stream = 0;
        if (op >= 0) {
            e.op = pyt_name(c, op);
            e.cat = pyt_category(c, op, (int32_t)g);
        } else if (launcher >= 0) {
            e.op = pyt_name(c, launcher);
            char *ll = lower_dup(e.op);
            e.cat = has(ll, "cudagraph") || has(ll, "graphlaunch") ? "graph" : "runtime";
            free(ll);
        }
        int p = lof[g] >= 0 ? lab[lof[g]] : use_ann ? step_phase(steps, t->ts[g]) : -1;
        if (p < 0) {
            const char *kn = e.kname;
            tl_phase_row pr = {op >= 0 ? e.op : "", op >= 0 ? sid_text(t, t->in_dims, op) : NULL, &kn, 1};
            uint8_t l;
            tl_phase_classify(&pr, 1, o->method, o->decode_threshold, &l);
            p = l;
        }
        if (p == TL_PHASE_PREFILL) pk[np++] = e;
        else if (p == TL_PHASE_DECODE) dk[nd++] = e;
    }
    tl_table *a = kernel_phase_sheet(c, pk, np, TL_PHASE_PREFILL);
    if (a) pyt_sheets_push(out, a);
    tl_table *b = kernel_phase_sheet(c, dk, nd, TL_PHASE_DECODE);
    if (b) pyt_sheets_push(out, b);
    free(lof);
    free(pk);
    free(dk);
}

int tl_phase_sheets(const tl_trace *t, const tl_pyt_opts *po, const tl_phase_opts *o,
                    tl_pyt_sheets *out, tl_err *err)
{
    tl_pyt_opts dflt;
    if (!po) {
        tl_pyt_opts_default(&dflt);
        po = &dflt;
    }
    tl_catreg *own = NULL;
    const tl_catreg *cat = po->categories;
    if (!cat) cat = own = tl_catreg_builtin(NULL, NULL, 0);
    pyt_ctx c;
    memset(&c, 0, sizeof c);
    int rc = pyt_ctx_init(&c, t, po, cat, err);
    if (rc) {
        if (own) tl_catreg_free(own);
        return rc;
    }
    tl_steps steps;
    tl_steps_find(t, &steps);
    int use_ann = !o->no_annotations && steps.n > 0;

    /* launcher rows */
    size_t nl = c.nl;
    tl_phase_row *rows = tl_xmalloc((nl ? nl : 1) * sizeof *rows);
    uint8_t *lab = tl_xmalloc(nl ? nl : 1);
    uint8_t *from_ann = tl_xmalloc(nl ? nl : 1);
    char **kcats = tl_xmalloc((nl ? nl : 1) * sizeof *kcats);
    size_t nk_all = c.l_koff ? c.l_koff[nl] : 0;
    const char **knames = tl_xmalloc((nk_all ? nk_all : 1) * sizeof *knames);
    const char **kcat_tmp = tl_xmalloc((nk_all ? nk_all : 1) * sizeof *kcat_tmp);
    for (size_t i = 0; i < nl; i++) {
        int32_t r = c.l_row[i];
        size_t a = c.l_koff[i], b = c.l_koff[i + 1];
        for (size_t k = a; k < b; k++) {
            knames[k] = pyt_name(&c, c.l_k[k]);
            kcat_tmp[k] = tl_kernel_category(knames[k]);
        }
        rows[i] = (tl_phase_row){pyt_name(&c, r), sid_text(t, t->in_dims, r), knames + a, b - a};
        kcats[i] = kcats_text(kcat_tmp + a, b - a);
    }
    tl_phase_classify(rows, nl, o->method, o->decode_threshold, lab);
    phase_counts pc = {0, 0, {0, 0, 0}};
    for (size_t i = 0; i < nl; i++) {
        from_ann[i] = 0;
        if (use_ann && c.l_koff[i + 1] > c.l_koff[i]) {
            /* first direct kernel by GPU time decides the step */
            int64_t ts0 = INT64_MAX;
            for (size_t k = c.l_koff[i]; k < c.l_koff[i + 1]; k++)
                if (t->ts[c.l_k[k]] < ts0) ts0 = t->ts[c.l_k[k]];
            int p = step_phase(&steps, ts0);
            if (p >= 0) {
                lab[i] = (uint8_t)p;
                from_ann[i] = 1;
            }
        }
        if (from_ann[i]) pc.by_annotation++;
        else pc.by_heuristic++;
        pc.per_phase[lab[i]]++;
    }

    tl_table *info = phase_info_table(o, steps.n, use_ann, &pc);
    pyt_sheets_push(out, info);
    if (steps.n) pyt_sheets_push(out, tl_steps_table(&steps));

    if (!c.gpu_only) {
        if (c.nl) pyt_sheets_push(out, inf_by_category_regrouped(&c));
        tl_table *p = ops_phase_sheet(&c, lab, TL_PHASE_PREFILL, kcats);
        if (p) pyt_sheets_push(out, p);
        tl_table *d = ops_phase_sheet(&c, lab, TL_PHASE_DECODE, kcats);
        if (d) pyt_sheets_push(out, d);
    }

    if (o->kernel_summary) kernel_phase_sheets(&c, &steps, use_ann, o, lab, out);

    for (size_t i = 0; i < nl; i++) free(kcats[i]);
    free(kcats);
    free(kcat_tmp);
    free(knames);
    free(rows);
    free(lab);
    free(from_ann);
    tl_steps_free(&steps);
    pyt_ctx_free(&c);
    if (own) tl_catreg_free(own);
    return 0;
}
