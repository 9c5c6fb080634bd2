/* split_steady.c — steady-state regions and windows as the reference's
 * splitter chooses them (TraceLens/TraceUtils/split_inference/
 * steady_state_window.py): regions are runs of steps whose request count
 * stays near the trace's peak; the mixed window is the sub-window of the
 * largest region whose prefill share is nearest the share over all regions
 * (or the ideal share from CONC, OSL and R), the decode-only and
 * prefill-decode windows the longest pure runs of their kind. The
 * reference's messages are printed as it prints them. */
#include "query/inference/inference.h"
#include "query/inference/split_internal.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* fprintf to the log, which may be NULL (tracelens split prints none of
 * the reference's messages). */
static void say(FILE *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(FILE *log, const char *fmt, ...)
{
    if (!log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log, fmt, ap);
    va_end(ap);
}

void sc_print_regions(FILE *log, const sc_range *r, size_t n)
{
    say(log, "[");
    for (size_t k = 0; k < n; k++) say(log, "%s(%ld, %ld)", k ? ", " : "", r[k].start, r[k].end);
    say(log, "%s", "]\n");
}

sc_range *sc_steady_regions(const tl_sc_detail *d, size_t n, long num_steps, FILE *log, size_t *nregions)
{
    double thresh = (long)n >= num_steps ? 0.1 : 0.2;
    int64_t gmax = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (d[i].num_requests > gmax) gmax = d[i].num_requests;
    sc_range *r = tl_xmalloc((n + 1) * sizeof *r);
    size_t nr = 0;
    int started = 0;
    long prev = 0, start_index = 0, i = 0;
    double tol = thresh * (double)gmax > 1 ? thresh * (double)gmax : 1;
    for (i = 0; i < (long)n; i++) {
        if (fabs((double)(d[i].num_requests - gmax)) <= tol) {
            if (!started) prev++;
        } else if (started) prev--;
        if (prev > 5 && !started) {
            say(log, "Steady state started at index %ld\n", i - 5);
            started = 1;
            start_index = i - prev + 1;
        }
        if (prev <= 0 && started) {
            say(log, "Steady state ended at index %ld\n", i);
            r[nr++] = (sc_range){start_index, i};
            started = 0;
            prev = 0;
        }
    }
    if (started) r[nr++] = (sc_range){start_index, i - 1}; /* the loop's last index, as the reference */
    say(log, "%s", "Steady state regions: ");
    sc_print_regions(log, r, nr);
    if (!nr) {
        long delta = num_steps - (long)n > 8 ? num_steps - (long)n : 8;
        if ((long)n < delta) delta = (long)n;
        long half = delta >= 0 ? delta / 2 : -((-delta + 1) / 2); /* Python floor division */
        long start = half > 0 ? half : 0;
        long end = (long)n - half < (long)n ? (long)n - half : (long)n;
        if (end < start + 1) end = start + 1;
        r[nr++] = (sc_range){start, end};
        say(log, "%s", "Warning: no steady state region found; discarding initial/final iterations and selecting middle "
              "region\n");
    }
    *nregions = nr;
    return r;
}

static size_t pd_count(const tl_sc_detail *d, long s, long e)
{
    size_t c = 0;
    for (long i = s; i < e; i++) c += sc_has_context(&d[i]);
    return c;
}

/* compute_reference_pd_ratio: the largest region (the first of the
 * largest size) and the prefill share over all regions. */
static sc_range reference_ratio(const tl_sc_detail *d, size_t n, const sc_range *rg, size_t nr, FILE *log,
                                double *average)
{
    long total_steps = 0, total_pd = 0, best_size = LONG_MIN;
    sc_range largest = {0, 0};
    double largest_ratio = 0;
    for (size_t k = 0; k < nr; k++) {
        long s = rg[k].start < 0 ? 0 : rg[k].start, e = rg[k].end > (long)n ? (long)n : rg[k].end;
        long total = e > s ? e - s : 0;
        long pd = total ? (long)pd_count(d, s, e) : 0;
        total_steps += total, total_pd += pd;
        double ratio = total > 0 ? (double)pd / (double)total : 0.0;
        say(log,
                "  Region [%ld, %ld): size=%ld, prefilldecodemix_steps=%ld, "
                "prefilldecodemix_to_totalsteps_ratio=%.3f\n",
                rg[k].start, rg[k].end, total, pd, ratio);
        if (total > best_size) best_size = total, largest = rg[k], largest_ratio = ratio;
    }
    *average = total_steps > 0 ? (double)total_pd / (double)total_steps : 0.0;
    say(log,
            "Reference prefilldecodemix_to_totalsteps_ratio=%.3f (largest region [%ld, %ld), Average across all "
            "regions=%.3f)\n",
            largest_ratio, largest.start, largest.end, *average);
    return largest;
}

/* The CONC / OSL / R checks: the ideal ratio replaces *ref and may raise
 * *num_steps. */
static void apply_target(const sc_target *tg, int64_t gmax, long *num_steps, double *ref, FILE *log)
{
    char a[40], b[40];
    if (tg->has_conc && gmax != tg->conc)
        say(log,
                "Warning: expected peak concurrency CONC=%ld but the trace peak is global_max=%lld. The trace may "
                "not contain requests at the intended concurrency level.\n",
                tg->conc, (long long)gmax);
    if (!(tg->has_conc && tg->has_osl && tg->has_r)) return;
    double r = tg->r;
    if (!(r >= 0.0 && r <= 1.0)) {
        tl_fmt_pyfloat(r, a);
        say(log, "Warning: R=%s is outside [0, 1]; clamping to valid range.\n", a);
        r = r < 0.0 ? 0.0 : r > 1.0 ? 1.0 : r;
    }
    double mean_osl = tg->osl * (1.0 + r) / 2.0;
    double ideal = ((double)tg->conc * 2.0) / (tg->osl * (1.0 + r));
    tl_fmt_pyfloat(tg->osl, a);
    tl_fmt_pyfloat(r, b);
    say(log,
            "Ideal prefilldecodemix_to_totalsteps_ratio = (CONC=%ld * 2) / (OSL=%s * (1 + R=%s)) = %.4f  [mean OSL "
            "= %.1f]\n",
            tg->conc, a, b, ideal, mean_osl);
    long min_steps = ideal > 0 && isfinite(1.0 / ideal) ? (long)ceil(1.0 / ideal) : *num_steps;
    if (*num_steps < min_steps) {
        say(log,
                "Warning: --num-steps=%ld is too small to capture the true decode_only/prefilldecodemix "
                "distribution. At prefilldecodemix_to_totalsteps_ratio=%.4f you need at least %ld steps to see a "
                "representative mix. Raising num_steps to %ld.\n",
                *num_steps, ideal, min_steps, min_steps);
        *num_steps = min_steps;
    } else {
        say(log, "num_steps=%ld >= min required %ld \xe2\x80\x94 OK.\n", *num_steps, min_steps);
    }
    *ref = ideal;
    say(log, "Using ideal prefilldecodemix_to_totalsteps_ratio=%.4f as reference (overrides empirical %.4f)\n",
            ideal, ideal);
}

typedef struct sc_cand {
    long start, end;
    size_t pd;
    double ratio, avg_requests;
    size_t mixed;
} sc_cand;

static sc_cand candidate(const tl_sc_detail *d, long s, long e)
{
    sc_cand c = {s, e, 0, 0, 0, 0};
    double req = 0;
    for (long i = s; i < e; i++) {
        c.pd += sc_has_context(&d[i]);
        c.mixed += sc_is_mixed(&d[i]);
        req += (double)d[i].num_requests;
    }
    c.ratio = e > s ? (double)c.pd / (double)(e - s) : 0.0;
    c.avg_requests = e > s ? req / (double)(e - s) : 0;
    return c;
}

/* The mixed window: candidates every `step` steps over the largest
 * region, those with a prefill step preferred, nearest ratio first, then
 * the most requests on average. */
static sc_range mixed_window(const tl_sc_detail *d, sc_range lg, long num_steps, double ref, FILE *log)
{
    long divider = num_steps / 2 < 10 ? num_steps / 2 : 10;
    if (divider < 1) divider = 1;
    long step = num_steps / divider > 1 ? num_steps / divider : 1;
    size_t nc = 0, cap = 1;
    if (lg.end - lg.start >= num_steps) cap = (size_t)((lg.end - num_steps + 1 - lg.start) / step + 1);
    sc_cand *c = tl_xmalloc(cap * sizeof *c);
    if (lg.end - lg.start >= num_steps) {
        for (long s1 = lg.start; s1 < lg.end - num_steps + 1; s1 += step) {
            c[nc] = candidate(d, s1, s1 + num_steps);
            c[nc].ratio = (double)c[nc].pd / (double)num_steps;
            nc++;
        }
    } else {
        c[nc++] = candidate(d, lg.start, lg.end);
    }
    size_t npd = 0;
    for (size_t k = 0; k < nc; k++) npd += c[k].pd > 0;
    if (npd)
        say(log,
                "[mixed] Filtering to %zu/%zu candidate windows that contain at least one prefill or "
                "prefill-decode step.\n",
                npd, nc);
    else
        say(log, "%s", "[mixed] No candidate window contains a prefill or prefill-decode step; falling back to the full "
              "candidate set.\n");
    long best = -1;
    double bd = 0, breq = 0;
    for (size_t k = 0; k < nc; k++) {
        if (npd && !c[k].pd) continue;
        double dist = fabs(c[k].ratio - ref);
        if (best < 0 || dist < bd || (dist == bd && -c[k].avg_requests < -breq))
            best = (long)k, bd = dist, breq = c[k].avg_requests;
    }
    sc_cand b = c[best];
    free(c);
    say(log,
            "[mixed] Selected window [%ld, %ld): prefilldecodemix_to_totalsteps_ratio=%.3f (target=%.3f), "
            "avg_requests=%.1f, pd_count=%zu, mixed_count=%zu\n",
            b.start, b.end, b.ratio, ref, b.avg_requests, b.pd, b.mixed);
    return (sc_range){b.start, b.end};
}

/* The longest run of steps of one kind (decode-only, or with a prefill) in
 * the largest region, capped at num_steps from its start. */
static sc_range pure_run(const tl_sc_detail *d, sc_range lg, long num_steps, int decode, FILE *log)
{
    const char *tag = decode ? "[decode_only]" : "[max_prefilldecode]";
    const char *what = decode ? "decode-only" : "prefilldecodemix";
    long best_s = -1, best_e = -1, run = -1;
    for (long i = lg.start; i <= lg.end; i++) {
        int in = i < lg.end && (decode ? sc_is_decode_only(&d[i]) : sc_has_context(&d[i]));
        if (in && run < 0) run = i;
        if (!in && run >= 0) {
            if (best_s < 0 || i - run > best_e - best_s) best_s = run, best_e = i;
            run = -1;
        }
    }
    if (best_s < 0) {
        if (decode) say(log, "%s", "[decode_only] No pure decode-only run found in steady-state region; \n");
        else say(log, "%s", "[max_prefilldecode] No pure prefilldecodemix run found in steady-state \n");
        return (sc_range){0, 0};
    }
    long we = best_e < best_s + num_steps ? best_e : best_s + num_steps;
    say(log,
            "%s Longest pure %s run: [%ld, %ld) (%ld steps). Selected [%ld, %ld) (%ld steps, capped at "
            "num_steps=%ld).\n",
            tag, what, best_s, best_e, best_e - best_s, best_s, we, we - best_s, num_steps);
    return (sc_range){best_s, we};
}

sc_range sc_steady_window(const tl_sc_detail *d, size_t n, long num_steps, const sc_range *regions, size_t nregions,
                          sc_mode mode, const sc_target *tg, FILE *log)
{
    int64_t gmax = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (d[i].num_requests > gmax) gmax = d[i].num_requests;
    double ref;
    sc_range lg = reference_ratio(d, n, regions, nregions, log, &ref);
    if (lg.start < 0) lg.start = 0;
    if (lg.end > (long)n) lg.end = (long)n;
    if (lg.end < lg.start) lg.end = lg.start;
    static const sc_target none = {0};
    apply_target(mode == SC_MIXED ? tg : &none, gmax, &num_steps, &ref, log);
    say(log, "%s", "\n --------------------------------\n");
    if (mode == SC_MIXED) return mixed_window(d, lg, num_steps, ref, log);
    return pure_run(d, lg, num_steps, mode == SC_DECODE_ONLY, log);
}

/* The union of the steps' host and GPU intervals, their kind when they
 * share one (else mixed), and their mean batch size and tokens. */
static tl_window window_of(const tl_steps *s, size_t a, size_t b, const char *label)
{
    tl_window x = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, s->v[a].kind, 0, 0, a, b - a, label};
    double bs = 0, tok = 0;
    for (size_t i = a; i < b; i++) {
        const tl_step *st = &s->v[i];
        if (st->cpu_ts < x.host_lo) x.host_lo = st->cpu_ts;
        if (st->cpu_end > x.host_hi) x.host_hi = st->cpu_end;
        if (st->gpu_lo <= st->gpu_hi) {
            if (st->gpu_lo < x.gpu_lo) x.gpu_lo = st->gpu_lo;
            if (st->gpu_hi > x.gpu_hi) x.gpu_hi = st->gpu_hi;
        }
        if (st->kind != x.kind) x.kind = TL_STEP_MIXED;
        bs += (double)st->bs, tok += (double)st->tokens;
    }
    x.bs = (int64_t)(bs / (double)(b - a) + 0.5);
    x.tokens = (int64_t)(tok / (double)(b - a) + 0.5);
    return x;
}

size_t sc_steps_steady(const tl_steps *s, tl_window *w)
{
    static const char *const LABEL[3] = {"mixed_steady_state", "decode_only_steady_state",
                                         "prefilldecode_steady_state"};
    static const sc_mode MODE[3] = {SC_MIXED, SC_DECODE_ONLY, SC_MAX_PREFILLDECODE};
    const long num_steps = 32;
    tl_sc_detail *d = tl_xmalloc((s->n + 1) * sizeof *d);
    for (size_t i = 0; i < s->n; i++) sc_annotation(s->v[i].name ? s->v[i].name : "", &d[i]);
    size_t nr, nw = 0;
    sc_range *rg = sc_steady_regions(d, s->n, num_steps, NULL, &nr);
    static const sc_target none = {0};
    for (int k = 0; k < 3; k++) {
        sc_range x = sc_steady_window(d, s->n, num_steps, rg, nr, MODE[k], &none, NULL);
        if (x.end > x.start) w[nw++] = window_of(s, (size_t)x.start, (size_t)x.end, LABEL[k]);
    }
    free(rg);
    free(d);
    return nw;
}
