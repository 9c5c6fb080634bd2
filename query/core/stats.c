/* stats.c — the report arithmetic of stats.h: NumPy's pairwise sums and
 * two-pass std, pandas' Kahan group sums and Welford group std, medians
 * and linear quantiles by selection. */
#include "query/core/stats.h"
#include "base/base.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/* ---- NumPy pairwise family ---------------------------------------------- */

/* DOUBLE_pairwise_sum of NumPy 1.24 (umath/loops_utils.h.src). */
static double pairwise(const double *a, size_t n)
{
    if (n < 8) {
        double res = 0.;
        for (size_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        size_t i;
        for (int k = 0; k < 8; k++) r[k] = a[k];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++) r[k] += a[i + (size_t)k];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

/* np.add.reduce runs through the iterator's 8192-element buffer: each
 * chunk is summed pairwise and added to the running result. */
double tl_sum_pairwise(const double *v, size_t n)
{
    enum { NPY_BUFSIZE = 8192 };
    double s = 0.0;
    for (size_t i = 0; i < n; i += NPY_BUFSIZE) s += pairwise(v + i, n - i < NPY_BUFSIZE ? n - i : NPY_BUFSIZE);
    return s;
}

double tl_sum_pairwise_skipna(const double *v, size_t n)
{
    double *z = tl_xmalloc((n ? n : 1) * sizeof *z);
    for (size_t i = 0; i < n; i++) z[i] = isnan(v[i]) ? 0.0 : v[i];
    double s = tl_sum_pairwise(z, n);
    free(z);
    return s;
}

double tl_mean_pairwise(const double *v, size_t n) { return n ? tl_sum_pairwise(v, n) / (double)n : NAN; }

double tl_std_pairwise(const double *v, size_t n, int ddof)
{
    if (n <= (size_t)ddof) return NAN;
    double mean = tl_sum_pairwise(v, n) / (double)n;
    double *sq = tl_xmalloc(n * sizeof *sq);
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - mean;
        sq[i] = d * d;
    }
    double r = sqrt(tl_sum_pairwise(sq, n) / (double)(n - (size_t)ddof));
    free(sq);
    return r;
}

/* ---- pandas Kahan family ------------------------------------------------ */

double tl_sum_kahan(const double *v, size_t n)
{
    tl_kahan k = {0, 0};
    for (size_t i = 0; i < n; i++) tl_kahan_add(&k, v[i]);
    return k.sum;
}

double tl_mean_kahan(const double *v, size_t n)
{
    tl_kahan k = {0, 0};
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i])) continue;
        tl_kahan_add(&k, v[i]);
        c++;
    }
    return c ? k.sum / (double)c : NAN;
}

/* ---- pandas Welford family ---------------------------------------------- */

void tl_welford_add(tl_welford *w, double x)
{
    if (isnan(x)) return;
    double old = w->mean;
    w->n++;
    w->mean += (x - old) / (double)w->n;
    /* a separate product: a fused multiply-add would change the last bit */
    volatile double p = (x - w->mean) * (x - old);
    w->m2 += p;
}

void tl_welford_merge(tl_welford *a, const tl_welford *b)
{
    if (!b->n) return;
    double delta = b->mean - a->mean, n = (double)(a->n + b->n);
    a->m2 += b->m2 + delta * delta * (double)a->n * (double)b->n / n;
    a->mean += delta * (double)b->n / n;
    a->n += b->n;
}

double tl_welford_std(const tl_welford *w, int ddof)
{
    return w->n > ddof ? sqrt(w->m2 / (double)(w->n - ddof)) : NAN;
}

double tl_std_welford(const double *v, size_t n, int ddof)
{
    tl_welford w = {0, 0, 0};
    for (size_t i = 0; i < n; i++) tl_welford_add(&w, v[i]);
    return tl_welford_std(&w, ddof);
}

/* ---- order statistics --------------------------------------------------- */

/* k-th smallest of v[0..n) (Hoare's selection, as the quickselect pandas
 * uses for medians; v is reordered so that v[0..k) <= v[k] <= v[k+1..n)),
 * and the median from it: the upper middle, averaged with the largest of
 * the lower half when n is even. One body for each element type. */
#define TL_SELECT(T, KTH, MEDIAN)                                              \
    static T KTH(T *v, size_t n, size_t k)                                     \
    {                                                                          \
        ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;            \
        while (lo < hi) {                                                      \
            T x = v[kk];                                                       \
            ptrdiff_t i = lo, j = hi;                                          \
            do {                                                               \
                while (v[i] < x) i++;                                          \
                while (x < v[j]) j--;                                          \
                if (i <= j) {                                                  \
                    T t = v[i];                                                \
                    v[i] = v[j];                                               \
                    v[j] = t;                                                  \
                    i++;                                                       \
                    j--;                                                       \
                }                                                              \
            } while (i <= j);                                                  \
            if (j < kk) lo = i;                                                \
            if (kk < i) hi = j;                                                \
        }                                                                      \
        return v[kk];                                                          \
    }                                                                          \
    double MEDIAN(T *v, size_t n)                                              \
    {                                                                          \
        if (!n) return NAN;                                                    \
        T hi = KTH(v, n, n / 2);                                               \
        if (n & 1) return (double)hi;                                          \
        T lo = v[0];                                                           \
        for (size_t i = 1; i < n / 2; i++)                                     \
            if (v[i] > lo) lo = v[i];                                          \
        return ((double)lo + (double)hi) / 2;                                  \
    }
TL_SELECT(double, kth_f64, tl_median_f64)
TL_SELECT(int64_t, kth_i64, tl_median_i64)
#undef TL_SELECT

double tl_quantile_linear(double *v, size_t n, double q)
{
    if (!n) return NAN;
    /* NumPy's _get_indexes / _get_gamma: above the last index both
     * neighbours are the last value and gamma is taken from index -1 */
    double virt = (double)(n - 1) * q, g;
    size_t prev, next;
    if (virt >= (double)(n - 1)) {
        prev = next = n - 1;
        g = virt + 1;
    } else if (virt < 0) {
        prev = next = 0;
        g = virt;
    } else {
        prev = (size_t)floor(virt);
        next = prev + 1;
        g = virt - (double)prev;
    }
    double b = kth_f64(v, n, next);
    /* v[0..next) <= b after the selection: the largest of them is prev's */
    double a = b;
    if (prev < next) {
        a = v[0];
        for (size_t i = 1; i < next; i++)
            if (v[i] > a) a = v[i];
    }
    double diff = b - a;
    return g >= 0.5 ? b - diff * (1 - g) : a + diff * g;
}
