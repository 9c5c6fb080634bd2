/* kstack.c — unified_perf_summary's call_stack_full and entry_point as the
 * reference's current reports build them (TraceLens main 171dd747,
 * TreePerfAnalyzer.summarize_df_unified_perf_table and
 * generate_perf_report_pytorch._find_entry_point), used by the inference
 * report (tl_pyt_opts.per_kernel_call_stack).
 *
 * Each kernel of a group's first instance carries its own stack: the
 * frames from the root down to the kernel that are cpu ops or whose names
 * hold "nn.Module", "::" or "/", each without its "_<digits>" runs, then
 * the kernel's name as it is. The kernels come in the order of the
 * group's kernel summary (total duration per position, then name); one
 * kernel prints its stack, several the common prefix followed by each
 * distinct tail as a list. The entry point is then read from that text:
 * the first .py frame inside the op whose function names the op, else the
 * nearest non-wrapper .py frame outside it. */
#include "query/pytorch/pytorch_internal.h"

#include <ctype.h>
#include <stdlib.h>

static int worthy(const pyt_ctx *c, int32_t r)
{
    const char *nm = pyt_name(c, r);
    return c->t->kind[r] == TL_K_CPU_OP || strstr(nm, "nn.Module") || strstr(nm, "::") || strchr(nm, '/');
}

/* re.sub(r"_\d+", "", s) into the arena */
static const char *strip_runs(tl_arena *a, const char *s)
{
    size_t n = strlen(s), k = 0;
    char *o = tl_arena_alloc(a, n + 1);
    for (size_t i = 0; i < n;) {
        if (s[i] == '_' && isdigit((unsigned char)s[i + 1])) {
            i++;
            while (isdigit((unsigned char)s[i])) i++;
            continue;
        }
        o[k++] = s[i++];
    }
    o[k] = 0;
    return o;
}

typedef struct kchain {
    const char **f;
    size_t n;
} kchain;

/* root .. kernel frames of GPU event g. Below a pseudo op the reference's
 * stack is the pseudo op's own (root .. pseudo op) followed by the
 * kernel's whole chain without it, since it never re-parents the launch
 * call. */
static void chain_of(const pyt_ctx *c, int32_t g, tl_arena *a, kchain *ch)
{
    size_t depth = 0;
    for (int32_t p = c->parent[g]; p >= 0; p = c->parent[p]) depth++;
    int32_t *up = tl_xmalloc((depth + 1) * sizeof *up); /* root first */
    size_t n = depth, pseudo = depth;
    for (int32_t p = c->parent[g]; p >= 0; p = c->parent[p]) up[--n] = p;
    for (size_t i = 0; i < depth; i++)
        if (c->t->kind[up[i]] == TL_K_CPU_OP && pyt_is_pseudo_op(c, up[i])) pseudo = i;
    ch->f = tl_arena_alloc(a, (2 * depth + 1) * sizeof *ch->f);
    size_t k = 0;
    if (pseudo < depth)
        for (size_t i = 0; i <= pseudo; i++)
            if (worthy(c, up[i])) ch->f[k++] = strip_runs(a, pyt_name(c, up[i]));
    for (size_t i = 0; i < depth; i++)
        if (i != pseudo && worthy(c, up[i])) ch->f[k++] = strip_runs(a, pyt_name(c, up[i]));
    ch->f[k++] = pyt_name(c, g);
    ch->n = k;
    free(up);
}

static int chains_equal_from(const kchain *x, const kchain *y, size_t from)
{
    if (x->n != y->n) return 0;
    for (size_t i = from; i < x->n; i++)
        if (strcmp(x->f[i], y->f[i])) return 0;
    return 1;
}

static void put_list(tl_buf *b, const char *const *f, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (i > from) tl_buf_puts(b, ", ");
        tl_buf_pystr(b, f[i], strlen(f[i]));
    }
}

/* the summary's kernel order: positions by (total duration, name), stable */
typedef struct kpos {
    double total;
    const char *name;
    size_t pos;
} kpos;
static int cmp_kpos(const void *a, const void *b)
{
    const kpos *x = a, *y = b;
    if (x->total != y->total) return x->total < y->total ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int wrapper_frame(const char *f)
{
    static const char *const files[] = {"torch/_ops.py", "torch/nn/modules/module.py", "torch/utils/_contextlib.py",
                                        "torch/utils/_device.py", "torch/_tensor.py", "torch/functional.py",
                                        "torch/overrides.py", "torch/_inductor/", "torch/_functorch/",
                                        "torch/distributed/c10d_logger.py", "triton/backends/"};
    static const char *const prefixes[] = {"<built-in", "pybind11_builtins", "nn.Module:"};
    static const char *const funcs[] = {"__torch_function__", "_call_impl", "_wrapped_call_impl", "decorate_context",
                                        "dispatch_wrapper", "handle_torch_function", "wrapper", "custom_wrapper",
                                        "wrapper_custom", "outer_wrapper"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(f, prefixes[i], strlen(prefixes[i]))) return 1;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (strstr(f, files[i])) return 1;
    const char *fn = NULL;
    for (const char *p = strstr(f, "): "); p; p = strstr(p + 1, "): ")) fn = p + 3;
    if (fn)
        for (size_t i = 0; i < sizeof funcs / sizeof *funcs; i++)
            if (!strcmp(fn, funcs[i])) return 1;
    return 0;
}

/* s contains needle, both compared lower-cased (ASCII) */
static int contains_lower(const char *s, const char *needle_lower)
{
    size_t n = strlen(needle_lower);
    if (!n) return 1;
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle_lower[i]) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* _find_entry_point over the flattened frames */
static const char *entry_point(const char *const *flat, size_t n, const char *op, tl_arena *a)
{
    const char *ln = strstr(op, "::") ? op + strlen(op) : op;
    if (strstr(op, "::"))
        for (const char *p = strstr(op, "::"); p; p = strstr(p + 2, "::")) ln = p + 2;
    char *lower = tl_arena_strdup(a, ln);
    for (char *p = lower; *p; p++) *p = (char)tolower((unsigned char)*p);
    long oi = -1;
    for (long i = (long)n - 1; i >= 0 && oi < 0; i--)
        if (!strcmp(flat[i], op)) oi = i;
    if (oi < 0) {
        /* trailing "_<digits>" removed; the lowest such index */
        size_t L = strlen(op), k = L;
        while (k > 0 && isdigit((unsigned char)op[k - 1])) k--;
        if (k < L && k > 0 && op[k - 1] == '_') {
            for (long i = (long)n - 1; i >= 0; i--)
                if (strlen(flat[i]) == k - 1 && !strncmp(flat[i], op, k - 1)) oi = i;
        }
    }
    if (oi < 0) return "Not found";
    for (size_t i = (size_t)oi + 1; i < n; i++) {
        if (!strstr(flat[i], ".py")) continue;
        const char *fn = flat[i];
        for (const char *p = strstr(flat[i], "): "); p; p = strstr(p + 1, "): ")) fn = p + 3;
        if (contains_lower(fn, lower)) return flat[i];
    }
    for (long i = oi - 1; i >= 0; i--)
        if (strstr(flat[i], ".py") && !wrapper_frame(flat[i])) return flat[i];
    return "Not found";
}

void pyt_kernel_call_stack(pyt_ctx *c, const int32_t *const *lists, const size_t *lens, size_t nlists,
                           const char *op, int with_stack, tl_arena *a, const char **stack, const char **entry)
{
    *stack = *entry = "Not found";
    size_t tl = 0, t0 = 0;
    for (size_t i = 0; i < nlists && !tl; i++)
        if (lens[i]) { tl = lens[i]; t0 = i; }
    if (!tl) return;
    kpos *kp = tl_xmalloc(tl * sizeof *kp);
    for (size_t p = 0; p < tl; p++) {
        kp[p].total = 0;
        kp[p].name = pyt_name(c, lists[t0][p]);
        kp[p].pos = p;
    }
    for (size_t i = 0; i < nlists; i++)
        if (lens[i] == tl)
            for (size_t p = 0; p < tl; p++) kp[p].total += pyt_dur(c, lists[i][p]);
    qsort(kp, tl, sizeof *kp, cmp_kpos);
    kchain *ch = tl_xmalloc(tl * sizeof *ch);
    for (size_t k = 0; k < tl; k++) {
        if (with_stack) {
            chain_of(c, lists[t0][kp[k].pos], a, &ch[k]);
        } else {
            ch[k].f = tl_arena_alloc(a, sizeof *ch[k].f);
            ch[k].f[0] = kp[k].name;
            ch[k].n = 1;
        }
    }
    size_t pre = ch[0].n;
    for (size_t k = 1; k < tl; k++) {
        size_t i = 0;
        while (i < pre && i < ch[k].n && !strcmp(ch[0].f[i], ch[k].f[i])) i++;
        pre = i;
    }
    tl_buf b = {0};
    TL_VEC(const char *) flat = {0};
    tl_buf_putc(&b, '[');
    if (tl == 1) {
        put_list(&b, ch[0].f, 0, ch[0].n);
        for (size_t i = 0; i < ch[0].n; i++) tl_vec_push(&flat, ch[0].f[i]);
    } else {
        put_list(&b, ch[0].f, 0, pre);
        for (size_t i = 0; i < pre; i++) tl_vec_push(&flat, ch[0].f[i]);
        for (size_t k = 0; k < tl; k++) {
            int dup = 0;
            for (size_t j = 0; j < k && !dup; j++) dup = chains_equal_from(&ch[j], &ch[k], pre);
            if (dup) continue;
            if (b.n > 1) tl_buf_puts(&b, ", ");
            tl_buf_putc(&b, '[');
            put_list(&b, ch[k].f, pre, ch[k].n);
            tl_buf_putc(&b, ']');
            for (size_t i = pre; i < ch[k].n; i++) tl_vec_push(&flat, ch[k].f[i]);
        }
    }
    tl_buf_putc(&b, ']');
    *stack = tl_arena_strndup(a, b.p, b.n);
    *entry = entry_point(flat.v, flat.n, op, a);
    tl_vec_free(&flat);
    tl_buf_free(&b);
    free(ch);
    free(kp);
}
