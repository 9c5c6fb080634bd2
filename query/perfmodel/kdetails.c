/* kdetails.c — the kernel-list summary cells (pytorch-report.md §9.10):
 * kernel_details__summarize_kernel_stats / kernel_details_summary and
 * trunc_kernel_details. The reference computes these with NumPy, so the sum
 * is NumPy's pairwise summation, std is the population std of NumPy's
 * two-pass formula, and the trunc mean is NumPy's round-half-even to 2
 * decimals; reproducing them keeps the text identical, not just close. */
#include "query/perfmodel/pm_internal.h"
#include "query/core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct kd_entry {
    const char *name;
    int has_stream;
    int64_t stream;
    int has_pct;
    double pct; /* the template entry's overlap_pct (overlap details) */
    size_t count;
    double total, mean, median, std, min, max;
} kd_entry;

static void put_np(tl_buf *b, const char *key, double v)
{
    char num[48];
    tl_fmt_pyfloat(v, num);
    tl_buf_printf(b, ", '%s': np.float64(%s)", key, num);
}

/* {'name': ..., 'stream': ...[, 'overlap_pct': ...] (the summary's
 * template keys; the trunc cell has no overlap_pct) */
static void put_name_stream(tl_buf *b, const char *name, size_t nlen, const kd_entry *e, int with_pct)
{
    tl_buf_puts(b, "{'name': ");
    if (name) tl_buf_pystr(b, name, nlen);
    else tl_buf_puts(b, "None");
    if (e->has_stream) tl_buf_printf(b, ", 'stream': %lld", (long long)e->stream);
    else tl_buf_puts(b, ", 'stream': None");
    if (with_pct && e->has_pct) {
        char num[48];
        tl_fmt_pyfloat(e->pct, num);
        tl_buf_printf(b, ", 'overlap_pct': %s", num);
    }
}

static int cmp_entry(const void *x, const void *y)
{
    const kd_entry *a = x, *b = y;
    if (a->total < b->total) return -1;
    if (a->total > b->total) return 1;
    const char *p = a->name ? a->name : "", *q = b->name ? b->name : "";
    return strcmp(p, q); /* byte order of UTF-8 = code point order */
}

/* byte length of the first 64 code points, or the whole string */
static size_t first64(const char *s, int *cut)
{
    size_t i = 0, cps = 0, n = strlen(s);
    while (i < n && cps < 64) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
        i += len;
        cps++;
    }
    if (i > n) i = n;
    *cut = i < n;
    return i;
}

static int summarize(const tl_pm_kernel *const *lists, const double *const *pcts, const size_t *lens, size_t nlists,
                     tl_buf *summary, tl_buf *trunc)
{
    size_t tmpl = nlists;
    for (size_t i = 0; i < nlists; i++)
        if (lens[i] > 0) {
            tmpl = i;
            break;
        }
    if (tmpl == nlists) {
        if (summary) tl_buf_puts(summary, "[]");
        return 0;
    }
    size_t npos = lens[tmpl], nrows = 0;
    for (size_t i = 0; i < nlists; i++)
        if (lens[i] == npos) nrows++;
    double *d = tl_xmalloc(nrows * sizeof *d);
    kd_entry *e = tl_xcalloc(npos, sizeof *e);
    for (size_t p = 0; p < npos; p++) {
        const tl_pm_kernel *t = &lists[tmpl][p];
        size_t c = 0;
        for (size_t i = 0; i < nlists; i++)
            if (lens[i] == npos) d[c++] = lists[i][p].dur;
        kd_entry *x = &e[p];
        x->name = t->name;
        x->has_stream = t->has_stream;
        x->stream = t->stream;
        if (pcts && pcts[tmpl]) {
            x->has_pct = 1;
            x->pct = pcts[tmpl][p];
        }
        x->count = c;
        x->total = tl_sum_pairwise(d, c);
        x->mean = x->total / (double)c;
        double mn = d[0], mx = d[0];
        for (size_t k = 1; k < c; k++) {
            if (d[k] < mn) mn = d[k];
            if (d[k] > mx) mx = d[k];
        }
        x->min = mn;
        x->max = mx;
        x->std = tl_std_pairwise(d, c, 0);
        x->median = tl_median_f64(d, c); /* selection, not a sort: d is not used after */
    }
    /* stable ascending sort by (total, name): insertion sort keeps ties in order */
    for (size_t i = 1; i < npos; i++) {
        kd_entry k = e[i];
        size_t j = i;
        while (j > 0 && cmp_entry(&e[j - 1], &k) > 0) {
            e[j] = e[j - 1];
            j--;
        }
        e[j] = k;
    }
    if (summary) {
        tl_buf_putc(summary, '[');
        for (size_t p = 0; p < npos; p++) {
            const kd_entry *x = &e[p];
            if (p) tl_buf_puts(summary, ", ");
            put_name_stream(summary, x->name, x->name ? strlen(x->name) : 0, x, 1);
            tl_buf_printf(summary, ", 'count': %zu", x->count);
            put_np(summary, "total_duration_us", x->total);
            put_np(summary, "mean_duration_us", x->mean);
            put_np(summary, "median_duration_us", x->median);
            put_np(summary, "std_dev_duration_us", x->std);
            put_np(summary, "min_duration_us", x->min);
            put_np(summary, "max_duration_us", x->max);
            tl_buf_putc(summary, '}');
        }
        tl_buf_putc(summary, ']');
    }
    if (trunc) {
        tl_buf_putc(trunc, '[');
        for (size_t p = 0; p < npos; p++) {
            const kd_entry *x = &e[p];
            if (p) tl_buf_puts(trunc, ", ");
            if (x->name) {
                int cut;
                size_t n = first64(x->name, &cut);
                if (cut) {
                    tl_buf b = {0};
                    tl_buf_append(&b, x->name, n);
                    tl_buf_puts(&b, "...");
                    put_name_stream(trunc, b.p, b.n, x, 0);
                    tl_buf_free(&b);
                } else {
                    put_name_stream(trunc, x->name, n, x, 0);
                }
            } else {
                put_name_stream(trunc, NULL, 0, x, 0);
            }
            /* np.round(x, 2): multiply, round half to even, divide */
            put_np(trunc, "mean_duration_us", nearbyint(x->mean * 100.0) / 100.0);
            tl_buf_putc(trunc, '}');
        }
        tl_buf_putc(trunc, ']');
    }
    free(d);
    free(e);
    return 1;
}

int tl_pm_kdetails_summarize(const tl_pm_kernel *const *lists, const size_t *lens, size_t nlists,
                             tl_buf *summary, tl_buf *trunc)
{
    return summarize(lists, NULL, lens, nlists, summary, trunc);
}

int tl_pm_kdetails_summarize_overlap(const tl_pm_kernel *const *lists, const double *const *pcts,
                                     const size_t *lens, size_t nlists, tl_buf *summary, tl_buf *trunc)
{
    return summarize(lists, pcts, lens, nlists, summary, trunc);
}
