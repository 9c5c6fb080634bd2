/* optional.c — the optional inputs of the PyTorch report that no
 * reference CSV covers (spec pytorch-report.md §5.5, §9.11): the kernel
 * overlap sweep behind the _kl_overlap sheets, the per-op overlap fields
 * (overlapping kernel names, details, overlap percentage), and the call
 * stacks of --include_call_stack. The spec marks their details UNSURE;
 * docs/CONFORMANCE.md says what we chose. */
#include "query/pytorch/pytorch_internal.h"
#include "query/perfmodel/perfmodel.h"
#include "query/core/interval.h"

#include <stdlib.h>

/* Python's round(x, 2): correctly rounded decimal (glibc's printf rounds the
 * exact binary value, as Python's dtoa does). */
double pyt_round2(double x)
{
    if (!isfinite(x)) return x;
    char b[64];
    snprintf(b, sizeof b, "%.2f", x);
    return strtod(b, NULL);
}

/* ---- the sweep (§5.5) --------------------------------------------------------- */

typedef struct ovpt { double t; int start; int32_t row; } ovpt;

static int cmp_ovpt(const void *a, const void *b)
{
    const ovpt *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->start != y->start) return x->start - y->start; /* ends first */
    return x->row < y->row ? -1 : x->row > y->row;
}

static int32_t nearest_cpu(const pyt_ctx *c, int32_t g)
{
    for (int32_t a = c->parent[g]; a >= 0; a = c->parent[a])
        if (c->t->kind[a] == TL_K_CPU_OP) return a;
    return -1;
}

pyt_overlap *pyt_overlap_build(pyt_ctx *c)
{
    size_t n = c->n;
    pyt_overlap *ov = tl_xcalloc(1, sizeof *ov);
    ov->off = tl_xcalloc(n + 1, sizeof *ov->off);
    ovpt *pts = tl_xmalloc((2 * c->ngpu + 1) * sizeof *pts);
    size_t np = 0;
    int32_t *cpu = tl_xmalloc((n ? n : 1) * sizeof *cpu);
    for (size_t i = 0; i < n; i++) {
        if (!c->gclass[i]) continue;
        if (!c->o->include_unlinked_kernels && c->parent[i] < 0) continue;
        if (!(pyt_te(c, i) > pyt_ts(c, i))) continue; /* zero-length events are skipped */
        cpu[i] = nearest_cpu(c, (int32_t)i);
        pts[np++] = (ovpt){pyt_ts(c, i), 1, (int32_t)i};
        pts[np++] = (ovpt){pyt_te(c, i), 0, (int32_t)i};
    }
    qsort(pts, np, sizeof *pts, cmp_ovpt);
    TL_VEC(int32_t) active = {0};
    TL_VEC(pyt_ovpair) pairs = {0};
    for (size_t p = 0; p < np; p++) {
        int32_t e = pts[p].row;
        if (!pts[p].start) {
            for (size_t k = 0; k < active.n; k++)
                if (active.v[k] == e) { active.v[k] = active.v[--active.n]; break; }
            continue;
        }
        int64_t se;
        int hse = pyt_stream(c, e, &se);
        for (size_t k = 0; k < active.n; k++) {
            int32_t a = active.v[k];
            int64_t sa;
            if (hse && pyt_stream(c, a, &sa) && sa == se) continue;
            if (cpu[a] >= 0 && cpu[e] >= 0 && cpu[a] == cpu[e]) continue;
            double lo = pyt_ts(c, e) > pyt_ts(c, a) ? pyt_ts(c, e) : pyt_ts(c, a);
            double te_e = pyt_te(c, e), te_a = pyt_te(c, a);
            double hi = te_e < te_a ? te_e : te_a;
            if (hi - lo < 1.0) continue;
            pyt_ovpair x = {a, e, lo, hi};
            tl_vec_push(&pairs, x);
        }
        tl_vec_push(&active, e);
    }
    /* per event: its partners in recording order */
    for (size_t i = 0; i < pairs.n; i++) { ov->off[pairs.v[i].a + 1]++; ov->off[pairs.v[i].b + 1]++; }
    for (size_t i = 0; i < n; i++) ov->off[i + 1] += ov->off[i];
    ov->p = tl_xmalloc((ov->off[n] ? ov->off[n] : 1) * sizeof *ov->p);
    uint32_t *fill = tl_xmalloc((n ? n : 1) * sizeof *fill);
    memcpy(fill, ov->off, n * sizeof *fill);
    for (size_t i = 0; i < pairs.n; i++) {
        pyt_ovpair x = pairs.v[i];
        ov->p[fill[x.a]++] = (pyt_ovpair){x.a, x.b, x.lo, x.hi};
        ov->p[fill[x.b]++] = (pyt_ovpair){x.b, x.a, x.lo, x.hi};
    }
    free(fill);
    tl_vec_free(&pairs);
    tl_vec_free(&active);
    free(pts);
    free(cpu);
    return ov;
}

void pyt_overlap_free(pyt_overlap *ov)
{
    if (!ov) return;
    free(ov->off);
    free(ov->p);
    free(ov);
}

/* Overlap fields of an op with direct kernels D (sorted by ts). */
void pyt_overlap_fields(pyt_ctx *c, const pyt_overlap *ov, const int32_t *D, size_t nd, tl_arena *a,
                        pyt_ovf *f)
{
    memset(f, 0, sizeof *f);
    f->pct = NAN;
    if (!ov || !nd) return;
    /* distinct partner names in first-seen order, with their partners */
    TL_VEC(const char *) names = {0};
    TL_VEC(int32_t) first_of = {0};
    tl_fival *dk = tl_xmalloc(nd * sizeof *dk);
    double direct = 0;
    for (size_t i = 0; i < nd; i++) { dk[i].s = pyt_ts(c, D[i]); dk[i].e = pyt_te(c, D[i]); }
    direct = tl_fival_union_len(dk, nd);
    size_t tot_pairs = 0;
    for (size_t i = 0; i < nd; i++) tot_pairs += ov->off[D[i] + 1] - ov->off[D[i]];
    if (!tot_pairs) { free(dk); return; }
    double clipped = 0;
    tl_fival *iv = tl_xmalloc(tot_pairs * sizeof *iv);
    for (size_t i = 0; i < nd; i++) {
        size_t k = 0;
        for (uint32_t q = ov->off[D[i]]; q < ov->off[D[i] + 1]; q++) {
            const pyt_ovpair *p = &ov->p[q];
            iv[k].s = p->lo;
            iv[k++].e = p->hi;
            const char *nm = pyt_name(c, p->b);
            size_t j;
            for (j = 0; j < names.n; j++) if (names.v[j] == nm) break;
            if (j == names.n) { tl_vec_push(&names, nm); tl_vec_push(&first_of, p->b); }
        }
        clipped += tl_fival_union_len(iv, k);
    }
    /* a fraction, as the reference's overlap_pct (1.0 = all of the direct time) */
    f->pct = direct > 0 ? pyt_round2(clipped / direct) : NAN;
    /* names list text and the details */
    tl_buf b = {0};
    tl_buf_putc(&b, '[');
    f->details = tl_arena_alloc(a, (names.n ? names.n : 1) * sizeof *f->details);
    f->detail_pct = tl_arena_alloc(a, (names.n ? names.n : 1) * sizeof *f->detail_pct);
    f->ndetails = names.n;
    for (size_t j = 0; j < names.n; j++) {
        if (j) tl_buf_puts(&b, ", ");
        tl_buf_pystr(&b, names.v[j], strlen(names.v[j]));
        /* one entry per (direct kernel, partner) of this name, as the
         * reference lists them: the mean of their durs and of their
         * overlap fractions (each rounded to 2), both rounded to 2 */
        double dsum = 0, psum = 0;
        size_t dn = 0;
        for (size_t i = 0; i < nd; i++)
            for (uint32_t q = ov->off[D[i]]; q < ov->off[D[i] + 1]; q++) {
                const pyt_ovpair *p = &ov->p[q];
                if (pyt_name(c, p->b) != names.v[j]) continue;
                dsum += pyt_dur(c, p->b);
                psum += direct > 0 ? pyt_round2((p->hi - p->lo) / direct) : 0.0;
                dn++;
            }
        tl_pm_kernel *k = &f->details[j];
        k->name = names.v[j];
        k->dur = pyt_round2(dn ? dsum / (double)dn : NAN);
        k->has_stream = pyt_stream(c, first_of.v[j], &k->stream);
        f->detail_pct[j] = pyt_round2(dn ? psum / (double)dn : NAN);
    }
    tl_buf_putc(&b, ']');
    f->names = pyt_intern(c, tl_arena_strndup(a, b.p, b.n));
    tl_buf_free(&b);
    tl_vec_free(&names);
    tl_vec_free(&first_of);
    free(iv);
    free(dk);
}

/* Summary + trunc texts of a group's overlap-detail lists (§9.10 layout). */
void pyt_overlap_summary(const pyt_ovf *const *rows, size_t n, tl_arena *a, const char **summary,
                         const char **trunc)
{
    const tl_pm_kernel **lp = tl_xmalloc((n ? n : 1) * sizeof *lp);
    size_t *lens = tl_xmalloc((n ? n : 1) * sizeof *lens);
    const double **pp = tl_xmalloc((n ? n : 1) * sizeof *pp);
    for (size_t i = 0; i < n; i++) { lp[i] = rows[i]->details; pp[i] = rows[i]->detail_pct; lens[i] = rows[i]->ndetails; }
    tl_buf s = {0}, t = {0};
    int has = tl_pm_kdetails_summarize_overlap(lp, pp, lens, n, &s, &t);
    free(pp);
    *summary = tl_arena_strndup(a, s.p ? s.p : "", s.n);
    *trunc = has ? tl_arena_strndup(a, t.p ? t.p : "", t.n) : NULL;
    tl_buf_free(&s);
    tl_buf_free(&t);
    free(lp);
    free(lens);
}

/* ---- call stacks (--include_call_stack, §9.11) ----------------------------------- */

/* name with every "_<digits>" removed */
static void strip_ids(tl_buf *b, const char *s)
{
    for (const char *p = s; *p;) {
        if (*p == '_' && p[1] >= '0' && p[1] <= '9') {
            p++;
            while (*p >= '0' && *p <= '9') p++;
            continue;
        }
        tl_buf_putc(b, *p++);
    }
}

static int stack_worthy(const pyt_ctx *c, int32_t r)
{
    const char *nm = pyt_name(c, r);
    return c->t->kind[r] == TL_K_CPU_OP || strstr(nm, "nn.Module") || strstr(nm, "::") || strchr(nm, '/');
}

/* frames from the root down to (and including) `to`, filtered */
static size_t path_to(const pyt_ctx *c, int32_t to, int32_t *out, size_t max)
{
    size_t n = 0;
    for (int32_t a = to; a >= 0 && n < max; a = c->parent[a]) out[n++] = a;
    for (size_t i = 0; i < n / 2; i++) { int32_t t = out[i]; out[i] = out[n - 1 - i]; out[n - 1 - i] = t; }
    return n;
}

const char *pyt_call_stack(pyt_ctx *c, const int32_t *gpu, size_t ng, tl_arena *a)
{
    if (!ng) return "Not found";
    enum { MAXD = 512 };
    /* per kernel: the filtered frame names root -> kernel */
    const char ***st = tl_xmalloc(ng * sizeof *st);
    size_t *len = tl_xmalloc(ng * sizeof *len);
    int32_t path[MAXD];
    tl_buf b = {0};
    for (size_t k = 0; k < ng; k++) {
        size_t n = path_to(c, gpu[k], path, MAXD);
        st[k] = tl_arena_alloc(a, (n ? n : 1) * sizeof **st);
        len[k] = 0;
        for (size_t i = 0; i < n; i++) {
            int32_t r = path[i];
            if (i + 1 < n && !stack_worthy(c, r)) continue;
            b.n = 0;
            strip_ids(&b, pyt_name(c, r));
            st[k][len[k]++] = tl_arena_strndup(a, b.p ? b.p : "", b.n);
        }
    }
    /* distinct stacks, then the common prefix + distinct tails */
    size_t pre = len[0];
    for (size_t k = 1; k < ng; k++) {
        size_t i = 0;
        while (i < pre && i < len[k] && !strcmp(st[0][i], st[k][i])) i++;
        pre = i;
    }
    b.n = 0;
    tl_buf_putc(&b, '[');
    int first = 1;
    size_t upto = ng == 1 ? len[0] : pre;
    for (size_t i = 0; i < upto; i++) {
        if (!first) tl_buf_puts(&b, ", ");
        first = 0;
        tl_buf_pystr(&b, st[0][i], strlen(st[0][i]));
    }
    if (ng > 1) {
        for (size_t k = 0; k < ng; k++) {
            int dup = 0;
            for (size_t j = 0; j < k && !dup; j++) {
                if (len[j] != len[k]) continue;
                size_t i = pre;
                while (i < len[k] && !strcmp(st[j][i], st[k][i])) i++;
                dup = i == len[k];
            }
            if (dup) continue;
            if (!first) tl_buf_puts(&b, ", ");
            first = 0;
            tl_buf_putc(&b, '[');
            for (size_t i = pre; i < len[k]; i++) {
                if (i > pre) tl_buf_puts(&b, ", ");
                tl_buf_pystr(&b, st[k][i], strlen(st[k][i]));
            }
            tl_buf_putc(&b, ']');
        }
    }
    tl_buf_putc(&b, ']');
    const char *out = tl_arena_strndup(a, b.p, b.n);
    tl_buf_free(&b);
    free(st);
    free(len);
    return out;
}

/* the op's local name: "aten::linear" -> "linear" */
static const char *local_name(const char *op)
{
    const char *p = strrchr(op, ':');
    return p ? p + 1 : op;
}

static int wrapper_frame(const char *nm)
{
    return strstr(nm, "torch/nn/modules/module.py") || strstr(nm, "_call_impl") ||
           strstr(nm, "wrapper") || strstr(nm, "torch/_ops.py") || strstr(nm, "torch/utils/_contextlib.py");
}

const char *pyt_entry_point(pyt_ctx *c, int32_t op)
{
    if (!c->python) return "Not found";
    const char *ln = local_name(pyt_name(c, op));
    /* first .py frame below the op naming it */
    for (uint32_t q = c->pos[op] + 1; q < c->end[op]; q++) {
        int32_t r = c->order[q];
        if (c->t->kind[r] != TL_K_PYTHON) continue;
        const char *nm = pyt_name(c, r);
        if (strstr(nm, ".py") && *ln && strstr(nm, ln)) return nm;
    }
    /* else the nearest non-wrapper .py frame above it */
    for (int32_t a = c->parent[op]; a >= 0; a = c->parent[a]) {
        if (c->t->kind[a] != TL_K_PYTHON) continue;
        const char *nm = pyt_name(c, a);
        if (strstr(nm, ".py") && !wrapper_frame(nm)) return nm;
    }
    return "Not found";
}
